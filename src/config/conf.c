/*
 * conf.c - settings table and loader.  Each key is one row of the table, so
 * adding a setting is one line plus its field, and an unknown key can be
 * reported with the list of keys the section does have.
 */
#include "config.h"

#include "config/conf.h"
#include "base/ini.h"
#include "base/paths.h"
#include "sandbox/profile.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum conf_type { CT_DURATION, CT_DURATION_U32, CT_INT, CT_SIZE };

typedef struct conf_key {
    const char *section;
    const char *name;
    enum conf_type type;
    size_t offset;
    int64_t min, max; /* for CT_INT */
} conf_key;

static const conf_key conf_keys[] = {
    {"limits", "session-lifetime", CT_DURATION, offsetof(conf_t, session_lifetime_ms), 0, 0},
    {"limits", "exec-lifetime", CT_DURATION, offsetof(conf_t, exec_lifetime_ms), 0, 0},
    {"exec", "background-timeout", CT_DURATION_U32, offsetof(conf_t, background_timeout_ms), 0, 0},
    {"session", "scrollback", CT_INT, offsetof(conf_t, scrollback), 0, 1000000},
    {"session", "retention", CT_DURATION, offsetof(conf_t, session_retention_ms), 0, 0},
    {"session", "max-total-size", CT_SIZE, offsetof(conf_t, session_max_total_size), 0, 0},
    {"approvals", "timeout", CT_DURATION, offsetof(conf_t, approval_timeout_ms), 0, 0},
    {"network", "max-connections", CT_INT, offsetof(conf_t, network_max_connections), 1, 65536},
};

static void sandbox_init(conf_sandbox *sb)
{
    memset(sb, 0, sizeof *sb);
    sb->net = -1;
    sb->home_layer = -1;
    sb->home_layer_in = -1;
    sb->core = UINT64_MAX;
}

int conf_sidebar_columns(const conf_t *c, int terminal_cols)
{
    int w = c->ui_sidebar_width;
    if (w == CONF_SIDEBAR_AUTO) {
        w = terminal_cols * 7 / 30;
        w = w < 20 ? 20 : w > 44 ? 44 : w;
    } else if (w < 0) {
        w = terminal_cols * -w / 100;
        if (w < 12)
            w = 12;
    }
    return w > terminal_cols / 2 ? terminal_cols / 2 : w;
}

void conf_defaults(conf_t *c)
{
    memset(c, 0, sizeof *c);
    sandbox_init(&c->sandbox);
    c->session_lifetime_ms = 0;
    c->exec_lifetime_ms = 2ull * 3600 * 1000;
    c->sandbox_keep_warm_ms = 10ull * 60 * 1000;
    c->background_timeout_ms = 300000;
    c->scrollback = 10000;
    c->session_retention_ms = 30ull * 24 * 3600 * 1000;
    c->session_max_total_size = 1ull << 30;
    c->ui_mouse = true;
    c->granular_sandbox_approval = true;
    c->granular_rules = true;
    c->ui_sidebar_width = CONF_SIDEBAR_AUTO;
    c->network_max_connections = 256;
    c->ui_truecolor = -1;
    c->ui_notify = CONF_NOTIFY_AUTO;
    c->notify_interval_ms = 30000;
    key_bindings_default(&c->keys);
    snap_conf_defaults(&c->snap);
}

/* "true"/"false" and git's other spellings. */
static int parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(v, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return -1;
}

int conf_parse_duration(const char *s, uint64_t *ms)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    uint64_t mult;
    if (*end == '\0' || strcmp(end, "s") == 0)
        mult = 1000;
    else if (strcmp(end, "ms") == 0)
        mult = 1;
    else if (strcmp(end, "m") == 0)
        mult = 60000;
    else if (strcmp(end, "h") == 0)
        mult = 3600000;
    else if (strcmp(end, "d") == 0)
        mult = 86400000;
    else
        return -1;
    if (v > UINT64_MAX / mult)
        return -1;
    *ms = v * mult;
    return 0;
}

int conf_parse_size(const char *s, uint64_t *bytes)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    uint64_t mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1024 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1024ull * 1024 * 1024, end++;
    else if (*end == 'T' || *end == 't')
        mult = 1024ull * 1024 * 1024 * 1024, end++;
    if (*end == 'i' && mult > 1)
        end++;
    if (*end == 'B' && mult > 1)
        end++;
    if (*end || v > UINT64_MAX / mult)
        return -1;
    *bytes = v * mult;
    return 0;
}

static void push(char ***list, size_t *n, const char *value)
{
    *list = xrealloc(*list, (*n + 2) * sizeof **list);
    (*list)[(*n)++] = xstrdup(value);
    (*list)[*n] = NULL;
}

/* Space- or comma-separated words of value, each pushed. */
static void push_words(char ***list, size_t *n, const char *value)
{
    char *copy = xstrdup(value);
    for (char *tok = strtok(copy, " ,\t"); tok; tok = strtok(NULL, " ,\t"))
        push(list, n, tok);
    free(copy);
}

/* A key of [sandbox] or [profile "NAME"]; 1 if known, 0 if not, -1 on a
 * bad value. */
static int sandbox_key(conf_sandbox *sb, const char *section, const char *key, const char *value, char *err,
                       size_t errlen)
{
    static const struct {
        const char *name;
        size_t offset;
    } sizes[] = {
        {"nofile", offsetof(conf_sandbox, nofile)}, {"fsize", offsetof(conf_sandbox, fsize)},
        {"core", offsetof(conf_sandbox, core)},     {"nproc", offsetof(conf_sandbox, nproc)},
        {"tmp-size", offsetof(conf_sandbox, tmp_size)}, {"pids-max", offsetof(conf_sandbox, pids_max)},
        {"memory-max", offsetof(conf_sandbox, memory_max)},
    };
    if (strcmp(key, "write") == 0 || strcmp(key, "read") == 0 || strcmp(key, "deny") == 0) {
        if (value[0] != '/' && value[0] != '~' && value[0] != ':') {
            snprintf(err, errlen, "%s.%s: '%s' is not an absolute path (or ~/..., :workspace, :tmp)", section,
                     key, value);
            return -1;
        }
        if (key[0] == 'w')
            push(&sb->write, &sb->n_write, value);
        else if (key[0] == 'r')
            push(&sb->read, &sb->n_read, value);
        else
            push(&sb->deny, &sb->n_deny, value);
        return 1;
    }
    if (strcmp(key, "net") == 0) {
        int n = sb_net_parse(value);
        if (n < 0) {
            snprintf(err, errlen, "%s.net: '%s' is not off, proxy or full", section, value);
            return -1;
        }
        sb->net = n;
        return 1;
    }
    if (strcmp(key, "home-layer") == 0) {
        int h = sb_home_layer_parse(value);
        if (h < 0) {
            snprintf(err, errlen, "%s.home-layer: '%s' is not discard, keep or off", section, value);
            return -1;
        }
        sb->home_layer = h;
        return 1;
    }
    if (strcmp(key, "home-layer-in") == 0) {
        if (strcmp(value, "memory") != 0 && strcmp(value, "disk") != 0) {
            snprintf(err, errlen, "%s.home-layer-in: '%s' is not memory or disk", section, value);
            return -1;
        }
        sb->home_layer_in = strcmp(value, "disk") == 0;
        return 1;
    }
    if (strcmp(key, "base") == 0 && sb->name) {
        free(sb->base);
        sb->base = xstrdup(value);
        return 1;
    }
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (strcmp(key, sizes[i].name) != 0)
            continue;
        uint64_t v;
        if (conf_parse_size(value, &v) < 0) {
            snprintf(err, errlen, "%s.%s: '%s' is not a number or size (e.g. 4096, 64K, 4G)", section, key,
                     value);
            return -1;
        }
        *(uint64_t *)((char *)sb + sizes[i].offset) = v;
        return 1;
    }
    return 0;
}

/* command's words: blanks apart, '...' literal, "..." with \" and \\,
 * a backslash outside quotes taking the next character.  No expansion and
 * no shell: a character the shell would act on, unquoted, is refused, so
 * that what is written is what runs.  NULL with err on a problem. */
static char **split_words(const char *cmd, char *err, size_t errlen)
{
    char **argv = NULL;
    size_t n = 0;
    buf_t w;
    buf_init(&w);
    const char *p = cmd;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        buf_reset(&w);
        buf_puts(&w, "");
        while (*p && *p != ' ' && *p != '\t') {
            if (*p == '\'') {
                const char *end = strchr(p + 1, '\'');
                if (!end) {
                    snprintf(err, errlen, "notify.command: a ' is not closed");
                    goto fail;
                }
                buf_append(&w, p + 1, (size_t)(end - p - 1));
                p = end + 1;
            } else if (*p == '"') {
                for (p++; *p && *p != '"'; p++) {
                    if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
                        p++;
                    buf_putc(&w, *p);
                }
                if (*p != '"') {
                    snprintf(err, errlen, "notify.command: a \" is not closed");
                    goto fail;
                }
                p++;
            } else if (*p == '\\' && p[1]) {
                buf_putc(&w, p[1]);
                p += 2;
            } else if (strchr("|&;<>()$`*?[]{}~", *p)) {
                snprintf(err, errlen, "notify.command: '%c' would need a shell, and none runs it; quote it, or "
                         "write command = sh -c '...' with the request in \"$CORRAL_NOTIFY_SUMMARY\"", *p);
                goto fail;
            } else {
                buf_putc(&w, *p++);
            }
        }
        push(&argv, &n, w.data);
    }
    buf_free(&w);
    if (!n) {
        snprintf(err, errlen, "notify.command: empty; give a program and its arguments (e.g. notify-send corral)");
        return NULL;
    }
    return argv;
fail:
    buf_free(&w);
    strv_free(argv);
    return NULL;
}

/* A key of [notify]: 0, or -1 with err. */
static int notify_key(conf_t *c, const char *key, const char *value, char *err, size_t errlen)
{
    if (strcmp(key, "command") == 0) {
        char **argv = split_words(value, err, errlen);
        if (!argv)
            return -1;
        strv_free(c->notify_argv);
        free(c->notify_command);
        c->notify_argv = argv;
        c->notify_command = xstrdup(value);
        return 0;
    }
    if (strcmp(key, "interval") == 0) {
        uint64_t ms;
        if (conf_parse_duration(value, &ms) < 0 || ms < 1000) {
            snprintf(err, errlen, "notify.interval: '%s' is not a duration of at least 1s (e.g. 30s, 5m)", value);
            return -1;
        }
        c->notify_interval_ms = ms;
        return 0;
    }
    snprintf(err, errlen, "unknown key '%s' in [notify] (known: command, interval)", key);
    return -1;
}

/* A key of [hosts]: ssh-command, remote-command, or NAME = ssh://...
 * (checked whole when corral -H uses it: protocol/remote.c).  0, or -1
 * with err. */
static int hosts_key(conf_t *c, const char *key, const char *value, char *err, size_t errlen)
{
    if (strcmp(key, "ssh-command") == 0 || strcmp(key, "remote-command") == 0) {
        if (!*value) {
            snprintf(err, errlen, "hosts.%s: empty; give a command (e.g. %s)", key,
                     key[0] == 's' ? "ssh -F ~/.ssh/corral_config" : "/usr/local/bin/corral");
            return -1;
        }
        char **slot = key[0] == 's' ? &c->hosts_ssh_command : &c->hosts_remote_command;
        free(*slot);
        *slot = xstrdup(value);
        return 0;
    }
    if (strncmp(value, "ssh://", 6) != 0 || !value[6]) {
        /* Neither a setting nor a host (NAME = its URL). */
        snprintf(err, errlen, "unknown key '%s' in [hosts] (known: ssh-command, remote-command), and '%s' is no "
                 "host's ssh://[user@]host[:port]", key, value);
        return -1;
    }
    for (size_t i = 0; i < c->n_hosts; i++) {
        if (strcmp(c->host_names[i], key) == 0) {
            free(c->host_urls[i]);
            c->host_urls[i] = xstrdup(value);
            return 0;
        }
    }
    c->host_names = xrealloc(c->host_names, (c->n_hosts + 1) * sizeof *c->host_names);
    c->host_urls = xrealloc(c->host_urls, (c->n_hosts + 1) * sizeof *c->host_urls);
    c->host_names[c->n_hosts] = xstrdup(key);
    c->host_urls[c->n_hosts++] = xstrdup(value);
    return 0;
}

const char *conf_host_url(const conf_t *c, const char *name)
{
    for (size_t i = 0; i < c->n_hosts; i++)
        if (strcmp(c->host_names[i], name) == 0)
            return c->host_urls[i];
    return NULL;
}

static conf_sandbox *find_profile(conf_t *c, const char *name)
{
    for (size_t i = 0; i < c->n_profiles; i++)
        if (strcmp(c->profiles[i].name, name) == 0)
            return &c->profiles[i];
    c->profiles = xrealloc(c->profiles, (c->n_profiles + 1) * sizeof *c->profiles);
    conf_sandbox *sb = &c->profiles[c->n_profiles++];
    sandbox_init(sb);
    sb->name = xstrdup(name);
    return sb;
}

static const char SANDBOX_KEYS[] = "write, read, deny, net, home-layer, home-layer-in, nofile, fsize, core, nproc, tmp-size, "
                                   "pids-max, memory-max";

static int conf_set(void *user, const char *section, const char *subsection, const char *key,
                    const char *value, char *err, size_t errlen)
{
    conf_t *c = user;
    if (strcmp(section, "sandbox") == 0 || strcmp(section, "profile") == 0 || strcmp(section, "env") == 0) {
        if ((strcmp(section, "profile") == 0) != (subsection != NULL)) {
            snprintf(err, errlen, subsection ? "section [%s] takes no subsection" :
                                               "write the section as [profile \"NAME\"]", section);
            return -1;
        }
        if (strcmp(section, "env") == 0) {
            if (strcmp(key, "keep") == 0)
                push_words(&c->env_keep, &c->n_env_keep, value);
            else if (strcmp(key, "set") == 0) {
                if (!strchr(value, '=') || value[0] == '=') {
                    snprintf(err, errlen, "env.set: '%s' is not NAME=VALUE", value);
                    return -1;
                }
                push(&c->env_set, &c->n_env_set, value);
            } else {
                snprintf(err, errlen, "unknown key '%s' in [env] (known: keep, set)", key);
                return -1;
            }
            return 0;
        }
        if (strcmp(section, "sandbox") == 0 && strcmp(key, "keep-warm") == 0) {
            uint64_t ms; /* a bad value leaves the setting as it was */
            if (conf_parse_duration(value, &ms) < 0 || ms > 24ull * 3600 * 1000) {
                snprintf(err, errlen, "sandbox.keep-warm: '%s' is not a duration up to 1d (e.g. 10m, 30s; 0 makes "
                         "every command's sandbox afresh)", value);
                return -1;
            }
            c->sandbox_keep_warm_ms = ms;
            return 0;
        }
        if (strcmp(section, "sandbox") == 0 && strcmp(key, "profile") == 0) {
            free(c->sandbox_profile);
            c->sandbox_profile = xstrdup(value);
            return 0;
        }
        if (subsection) {
            for (const char *const *b = sb_builtin_profiles; *b; b++) {
                if (strcmp(*b, subsection) == 0) {
                    snprintf(err, errlen, "[profile \"%s\"] would shadow the built-in profile; pick another "
                             "name and set base = %s", subsection, subsection);
                    return -1;
                }
            }
        }
        conf_sandbox *sb = subsection ? find_profile(c, subsection) : &c->sandbox;
        /* Errors name the section as written: [profile "review"], not
         * just a profile (a file may hold several). */
        char *label = subsection ? xasprintf("profile \"%s\"", subsection) : xstrdup("sandbox");
        int r = sandbox_key(sb, label, key, value, err, errlen);
        if (r == 0)
            snprintf(err, errlen, "unknown key '%s' in [%s] (known: %s%s)", key, label,
                     subsection ? "base, " : "profile, keep-warm, ", SANDBOX_KEYS);
        free(label);
        if (r <= 0)
            return -1;
        return 0;
    }
    if (strcmp(section, "notify") == 0) {
        if (subsection) {
            snprintf(err, errlen, "section [%s] takes no subsection (\"%s\")", section, subsection);
            return -1;
        }
        return notify_key(c, key, value, err, errlen);
    }
    if (strcmp(section, "hosts") == 0) {
        if (subsection) {
            snprintf(err, errlen, "section [%s] takes no subsection (\"%s\")", section, subsection);
            return -1;
        }
        return hosts_key(c, key, value, err, errlen);
    }
    if (strcmp(section, "snapshots") == 0) {
        if (subsection) {
            snprintf(err, errlen, "section [%s] takes no subsection (\"%s\")", section, subsection);
            return -1;
        }
        return snap_conf_set(&c->snap, key, value, err, errlen);
    }
    if (strcmp(section, "keys") == 0 || strcmp(section, "ui") == 0) {
        if (subsection) {
            snprintf(err, errlen, "section [%s] takes no subsection (\"%s\")", section, subsection);
            return -1;
        }
        if (strcmp(section, "keys") == 0)
            return key_bindings_set(&c->keys, key, value, err, errlen);
        if (strcmp(key, "theme") == 0) {
            if (!*value) {
                snprintf(err, errlen, "ui.theme: empty; give a theme name (default, light, gruvbox, ...)");
                return -1;
            }
            free(c->ui_theme);
            c->ui_theme = xstrdup(value);
            c->ui_theme_set = true;
            return 0;
        }
        if (strcmp(key, "mouse") == 0) {
            if (parse_bool(value, &c->ui_mouse) < 0) {
                snprintf(err, errlen, "ui.mouse: '%s' is not true or false", value);
                return -1;
            }
            return 0;
        }
        if (strcmp(key, "truecolor") == 0) {
            bool on;
            if (strcasecmp(value, "auto") == 0) {
                c->ui_truecolor = -1;
            } else if (parse_bool(value, &on) == 0) {
                c->ui_truecolor = on;
            } else {
                snprintf(err, errlen, "ui.truecolor: '%s' is not auto, on or off", value);
                return -1;
            }
            return 0;
        }
        if (strcmp(key, "notify") == 0) {
            static const char *const names[] = {"auto", "osc9", "osc777", "bell", "off"};
            for (int i = 0; i < 5; i++)
                if (strcasecmp(value, names[i]) == 0) {
                    c->ui_notify = i;
                    return 0;
                }
            snprintf(err, errlen, "ui.notify: '%s' is not auto, osc9, osc777, bell or off", value);
            return -1;
        }
        if (strcmp(key, "sidebar-width") == 0) {
            /* auto (follows the terminal), columns, or a share of the
             * terminal's width: stored as 0, N, or -PERCENT. */
            char *end;
            errno = 0;
            long v = strtol(value, &end, 10);
            if (strcasecmp(value, "auto") == 0) {
                c->ui_sidebar_width = CONF_SIDEBAR_AUTO;
            } else if (end != value && !errno && *end == '\0' && v >= 12 && v <= 80) {
                c->ui_sidebar_width = (int)v;
            } else if (end != value && !errno && strcmp(end, "%") == 0 && v >= 5 && v <= 50) {
                c->ui_sidebar_width = -(int)v;
            } else {
                snprintf(err, errlen, "ui.sidebar-width: '%s' is not auto, a number of columns from 12 to 80, "
                         "or a share of the terminal's width from 5%% to 50%% (sidebar-width = 25%%)", value);
                return -1;
            }
            return 0;
        }
        snprintf(err, errlen, "unknown key '%s' in [ui] (known: theme, mouse, truecolor, notify, sidebar-width)",
                 key);
        return -1;
    }
    if (strcmp(section, "approvals") == 0 && strcmp(key, "timeout") != 0) {
        if (strcmp(key, "policy") == 0) {
            static const char *const known[] = {"on-request", "unless-trusted", "never", "granular", NULL};
            bool ok = false;
            for (const char *const *k = known; *k; k++)
                ok = ok || strcmp(*k, value) == 0;
            if (!ok) {
                snprintf(err, errlen, "approvals.policy: '%s' is not on-request, unless-trusted, never or granular",
                         value);
                return -1;
            }
            free(c->approval_policy);
            c->approval_policy = xstrdup(value);
            return 0;
        }
        bool *flag = strcmp(key, "sandbox-approval") == 0 ? &c->granular_sandbox_approval
                     : strcmp(key, "rules") == 0          ? &c->granular_rules
                                                           : NULL;
        if (!flag) {
            snprintf(err, errlen, "unknown key '%s' in [approvals] (known: policy, sandbox-approval, rules, timeout)",
                     key);
            return -1;
        }
        if (parse_bool(value, flag) < 0) {
            snprintf(err, errlen, "approvals.%s: '%s' is not true or false", key, value);
            return -1;
        }
        return 0;
    }
    int section_known = 0;
    for (size_t i = 0; i < sizeof conf_keys / sizeof conf_keys[0]; i++) {
        const conf_key *k = &conf_keys[i];
        if (strcmp(k->section, section) != 0)
            continue;
        section_known = 1;
        if (strcmp(k->name, key) != 0)
            continue;
        if (subsection) {
            snprintf(err, errlen, "section [%s] takes no subsection (\"%s\")", section, subsection);
            return -1;
        }
        char *field = (char *)c + k->offset;
        uint64_t ms;
        switch (k->type) {
        case CT_DURATION:
        case CT_DURATION_U32:
            if (conf_parse_duration(value, &ms) < 0) {
                snprintf(err, errlen, "%s.%s: '%s' is not a duration (e.g. %s)", section, key, value,
                         k->offset == offsetof(conf_t, session_retention_ms) ? "30d, 12h; 0 keeps them forever"
                                                                              : "0, 30s, 5m, 2h");
                return -1;
            }
            if (k->type == CT_DURATION_U32) {
                if (ms > UINT32_MAX) {
                    snprintf(err, errlen, "%s.%s: '%s' is too long", section, key, value);
                    return -1;
                }
                *(uint32_t *)field = (uint32_t)ms;
            } else {
                *(uint64_t *)field = ms;
            }
            return 0;
        case CT_INT: {
            errno = 0;
            char *end;
            long long v = strtoll(value, &end, 10);
            if (errno || end == value || *end || v < k->min || v > k->max) {
                snprintf(err, errlen, "%s.%s: '%s' is not a whole number from %lld to %lld", section,
                         key, value, (long long)k->min, (long long)k->max);
                return -1;
            }
            *(int *)field = (int)v;
            return 0;
        }
        case CT_SIZE:
            if (conf_parse_size(value, (uint64_t *)field) < 0) {
                snprintf(err, errlen, "%s.%s: '%s' is not a size (e.g. 500M, 1G; 0 for no cap)", section, key,
                         value);
                return -1;
            }
            return 0;
        }
    }
    if (!section_known) {
        snprintf(err, errlen, "unknown section [%s]", section);
        return -1;
    }
    buf_t known;
    buf_init(&known);
    for (size_t i = 0; i < sizeof conf_keys / sizeof conf_keys[0]; i++)
        if (strcmp(conf_keys[i].section, section) == 0)
            buf_printf(&known, "%s%s", known.len ? ", " : "", conf_keys[i].name);
    snprintf(err, errlen, "unknown key '%s' in [%s] (known: %s)", key, section, known.data);
    buf_free(&known);
    return -1;
}

static void free_list(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

static void sandbox_free(conf_sandbox *sb)
{
    free(sb->name);
    free(sb->base);
    free_list(sb->write, sb->n_write);
    free_list(sb->read, sb->n_read);
    free_list(sb->deny, sb->n_deny);
}

void conf_free(conf_t *c)
{
    sandbox_free(&c->sandbox);
    for (size_t i = 0; i < c->n_profiles; i++)
        sandbox_free(&c->profiles[i]);
    free(c->profiles);
    free(c->sandbox_profile);
    free_list(c->env_keep, c->n_env_keep);
    free_list(c->env_set, c->n_env_set);
    free(c->ui_theme);
    free(c->ui_theme_file);
    free(c->approval_policy);
    strv_free(c->notify_argv);
    free(c->notify_command);
    snap_conf_free(&c->snap);
    free_list(c->host_names, c->n_hosts);
    free_list(c->host_urls, c->n_hosts);
    free(c->hosts_ssh_command);
    free(c->hosts_remote_command);
    conf_defaults(c);
}

static bool is_builtin_profile(const char *name)
{
    for (const char *const *b = sb_builtin_profiles; *b; b++)
        if (strcmp(*b, name) == 0)
            return true;
    return false;
}

static const conf_sandbox *profile_named(const conf_t *c, const char *name)
{
    for (size_t i = 0; i < c->n_profiles; i++)
        if (strcmp(c->profiles[i].name, name) == 0)
            return &c->profiles[i];
    return NULL;
}

typedef struct key_finder {
    const char *section, *subsection, *key; /* subsection NULL: a section without one */
    int seen, stop_at;
} key_finder;

static int find_key(void *user, const char *section, const char *subsection, const char *key, const char *value,
                    char *err, size_t errlen)
{
    (void)value;
    key_finder *f = user;
    if ((subsection == NULL) != (f->subsection == NULL) || (subsection && strcmp(subsection, f->subsection) != 0) ||
        strcmp(section, f->section) != 0 || strcmp(key, f->key) != 0)
        return 0;
    if (++f->seen != f->stop_at)
        return 0;
    snprintf(err, errlen, "found");
    return -1;
}

static int key_line(const char *name, const char *text, const char *section, const char *subsection,
                    const char *key)
{
    /* The reader reports "NAME:LINE: ..." where a callback stops it: count
     * the key's settings, then stop at the last one. */
    key_finder f = {section, subsection, key, 0, -1};
    size_t errlen = strlen(name) + 64;
    char *err = xmalloc(errlen);
    int line = 0;
    if ((text ? ini_parse(name, text, find_key, &f, err, errlen) : ini_parse_file(name, 1, find_key, &f, err,
                                                                                    errlen)) == 0 && f.seen > 0) {
        f.stop_at = f.seen;
        f.seen = 0;
        size_t n = strlen(name);
        if ((text ? ini_parse(name, text, find_key, &f, err, errlen)
                  : ini_parse_file(name, 1, find_key, &f, err, errlen)) < 0 &&
            strncmp(err, name, n) == 0 && err[n] == ':')
            line = atoi(err + n + 1);
    }
    free(err);
    return line;
}

int conf_key_line(const char *name, const char *text, const char *section, const char *key)
{
    return key_line(name, text, section, NULL, key);
}

/* ---- reading a whole file, every problem reported ----------------------- */

static const char *const known_sections[] = {"limits", "exec", "session", "sandbox", "profile", "env", "ui",
                                             "keys", "approvals", "network", "snapshots", "notify", "hosts",
                                             NULL};
const char *const conf_server_sections[] = {"limits", "exec", "session", "sandbox", "profile", "env",
                                            "approvals", "network", "snapshots", "notify", NULL};
const char *const conf_screen_sections[] = {"ui", "keys", NULL};
const char *const conf_client_sections[] = {"hosts", NULL};

static bool listed(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(*list, name) == 0)
            return true;
    return false;
}

void conf_errors_add(conf_errors *e, const char *section, const char *text)
{
    e->text = xrealloc(e->text, (e->n + 1) * sizeof *e->text);
    e->section = xrealloc(e->section, (e->n + 1) * sizeof *e->section);
    e->text[e->n] = xstrdup(text);
    e->section[e->n] = section ? xstrdup(section) : NULL;
    e->n++;
}

static void add_errorf(conf_errors *e, const char *section, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_errorf(conf_errors *e, const char *section, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char one[2048];
    vsnprintf(one, sizeof one, fmt, ap);
    va_end(ap);
    conf_errors_add(e, section, one);
}

void conf_errors_free(conf_errors *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->text[i]);
        free(e->section[i]);
    }
    free(e->text);
    free(e->section);
    memset(e, 0, sizeof *e);
}

size_t conf_errors_read_by(const conf_errors *e, const char *const *sections)
{
    size_t n = 0;
    for (size_t i = 0; i < e->n; i++) {
        /* Outside any section, or in one nobody reads (a misspelt
         * [sandbx]): its settings are lost to whoever meant to read them. */
        const char *s = e->section[i];
        n += !s || !listed(s, known_sections) || listed(s, sections);
    }
    return n;
}

char *conf_errors_join(const conf_errors *e)
{
    buf_t b;
    buf_init(&b);
    for (size_t i = 0; i < e->n; i++)
        buf_printf(&b, "%s%s", i ? "\n" : "", e->text[i]);
    if (!b.data)
        buf_puts(&b, "");
    return buf_steal(&b);
}

typedef struct loader {
    conf_t *c;
    conf_errors *errs;
    char *unknown; /* the last unknown section reported: once per section, not per key */
} loader;

static int load_key(void *user, const char *section, const char *subsection, const char *key, const char *value,
                    char *err, size_t errlen)
{
    loader *l = user;
    if (!listed(section, known_sections)) {
        if (l->unknown && strcmp(l->unknown, section) == 0)
            return 0;
        free(l->unknown);
        l->unknown = xstrdup(section);
        buf_t known;
        buf_init(&known);
        for (const char *const *k = known_sections; *k; k++)
            buf_printf(&known, "%s%s", known.len ? ", " : "", *k);
        snprintf(err, errlen, "unknown section [%s] (known: %s)", section, known.data);
        buf_free(&known);
        return -1;
    }
    return conf_set(l->c, section, subsection, key, value, err, errlen);
}

static void load_error(void *user, const char *section, const char *message)
{
    loader *l = user;
    conf_errors_add(l->errs, section, message);
}

/* Every profile name the file uses must exist, and every base chain must
 * end in a built-in profile: a typo in "base =" or "[sandbox] profile =" is
 * reported when the config is read (the server refuses to start), not when a
 * session first asks for that profile.  The chain limit is sbconf.c's. */
static void check_profiles(conf_t *c, const char *path, const char *text, conf_errors *e)
{
    static const char builtins[] = "read-only, workspace-write, full";
    const char *chosen = c->sandbox_profile;
    if (chosen && !is_builtin_profile(chosen) && !profile_named(c, chosen)) {
        add_errorf(e, "sandbox", "%s:%d: [sandbox] profile = %s: no such profile (built in: %s; or define "
                   "[profile \"%s\"])", path, key_line(path, text, "sandbox", NULL, "profile"), chosen, builtins,
                   chosen);
        free(c->sandbox_profile); /* as if the line were not there: the default */
        c->sandbox_profile = NULL;
    }
    for (size_t i = 0; i < c->n_profiles; i++) {
        const conf_sandbox *sb = &c->profiles[i];
        int depth = 0;
        for (const conf_sandbox *cur = sb; cur && cur->base; cur = profile_named(c, cur->base)) {
            if (!is_builtin_profile(cur->base) && !profile_named(c, cur->base)) {
                if (cur == sb) /* once, at the profile that names it */
                    add_errorf(e, "profile", "%s:%d: [profile \"%s\"] base = %s: no such profile (built in: %s; "
                               "or a [profile] section of this file)", path,
                               key_line(path, text, "profile", cur->name, "base"), cur->name, cur->base, builtins);
                break;
            }
            if (++depth > 8) {
                add_errorf(e, "profile", "%s:%d: [profile \"%s\"]: its base chain is longer than 8 or loops (%s -> "
                           "%s); end it in a built-in profile (%s)", path,
                           key_line(path, text, "profile", sb->name, "base"), sb->name, cur->name, cur->base,
                           builtins);
                break;
            }
        }
    }
}

void conf_load_all(conf_t *c, const char *path, conf_errors *errs, char **text)
{
    c->ui_theme_set = false;
    buf_t b;
    char err[1024];
    if (ini_read_file(path, &b, err, sizeof err) < 0) {
        conf_errors_add(errs, NULL, err);
        if (text)
            *text = xstrdup("");
        return;
    }
    loader l = {c, errs, NULL};
    ini_parse_all(path, b.data, load_key, load_error, &l);
    free(l.unknown);
    if (c->ui_theme_set) {
        free(c->ui_theme_file);
        c->ui_theme_file = xstrdup(path);
    }
    check_profiles(c, path, b.data, errs);
    if (text)
        *text = buf_steal(&b);
    else
        buf_free(&b);
}

int conf_load(conf_t *c, const char *path, char *err, size_t errlen)
{
    conf_errors e = {0};
    conf_load_all(c, path, &e, NULL);
    int rc = e.n ? -1 : 0;
    if (e.n)
        snprintf(err, errlen, "%s", e.text[0]);
    conf_errors_free(&e);
    return rc;
}

char *conf_user_path(void)
{
    char *dir = paths_config_dir();
    char *path = xasprintf("%s/config", dir);
    free(dir);
    return path;
}

void conf_load_user_all(conf_t *c, conf_errors *errs, char **text)
{
    conf_defaults(c);
    char *path = conf_user_path();
    conf_load_all(c, path, errs, text);
    free(path);
}

int conf_load_user(conf_t *c, char *err, size_t errlen)
{
    conf_defaults(c);
    char *path = conf_user_path();
    int rc = conf_load(c, path, err, errlen);
    free(path);
    return rc;
}

char *conf_server_view(const char *text, int **lines, size_t *n_lines)
{
    buf_t out;
    buf_init(&out);
    buf_puts(&out, "");
    size_t n = 0, cap = 0;
    int *at = NULL;
    bool screen = false; /* in a section only the screen or the clients read */
    int lineno = 0;
    for (const char *line = text; *line; ) {
        lineno++;
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        while (len && (line[0] == ' ' || line[0] == '\t'))
            line++, len--;
        while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
            len--;
        if (len && line[0] == '[') {
            /* the header's name as the reader takes it: up to ], a blank or a quote */
            size_t k = strcspn(line + 1, "] \t\"\n");
            screen = false;
            for (const char *const *s = conf_screen_sections; *s; s++)
                screen = screen || (strlen(*s) == k && strncmp(line + 1, *s, k) == 0);
            for (const char *const *s = conf_client_sections; *s; s++)
                screen = screen || (strlen(*s) == k && strncmp(line + 1, *s, k) == 0);
        }
        if (len && line[0] != '#' && line[0] != ';' && !screen) {
            buf_printf(&out, "%.*s\n", (int)len, line);
            if (lines) {
                if (n == cap)
                    at = xrealloc(at, (cap = cap ? 2 * cap : 16) * sizeof *at);
                at[n++] = lineno;
            }
        }
        if (!end)
            break;
        line = end + 1;
    }
    if (lines) {
        *lines = at;
        *n_lines = n;
    }
    return buf_steal(&out);
}
