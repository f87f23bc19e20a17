/*
 * profile.c - built-in profiles and profile building.
 */
#include "config.h"

#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const sb_builtin_profiles[] = {"read-only", "workspace-write", "full", NULL};

const char *const sb_default_deny[] = {
    /* credential stores */
    "~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.config/gh", "~/.netrc",
    "~/.git-credentials", "~/.npmrc", "~/.pypirc", "~/.docker", "~/.kube", "~/.local/share/keyrings",
    "~/.password-store",
    /* shell and REPL histories: commands typed with secrets in them */
    "~/.bash_history", "~/.zsh_history", "~/.python_history", "~/.node_repl_history", "~/.psql_history",
    "~/.mysql_history", "~/.sqlite_history", "~/.lesshst", "~/.viminfo", "~/.local/share/fish/fish_history",
    /* host socket directories (agents, D-Bus, docker, systemd...) */
    "/run", "/var/run", ":runtime",
    /* corral's own state, config and runtime directories, and its
     * placeholders' registry (placeholders.h: /dev/shm/corral-UID) */
    ":corral-state", ":corral-config", ":corral-registry",
    NULL,
};

static char *dupstr(const char *s)
{
    char *d = strdup(s);
    if (!d) {
        fputs("corral: out of memory\n", stderr);
        abort();
    }
    return d;
}

void sb_profile_add(sb_profile *p, const char *path, sb_access access)
{
    if (p->n_entries == p->cap_entries) {
        size_t cap = p->cap_entries ? p->cap_entries * 2 : 16;
        sb_entry *e = realloc(p->entries, cap * sizeof *e);
        if (!e) {
            fputs("corral: out of memory\n", stderr);
            abort();
        }
        p->entries = e;
        p->cap_entries = cap;
    }
    p->entries[p->n_entries].path = dupstr(path);
    p->entries[p->n_entries].access = access;
    p->entries[p->n_entries].builtin = false;
    p->n_entries++;
}

static void add_builtin(sb_profile *p, const char *path, sb_access access)
{
    sb_profile_add(p, path, access);
    p->entries[p->n_entries - 1].builtin = true;
}

static void push(char ***list, size_t *n, const char *s)
{
    char **l = realloc(*list, (*n + 2) * sizeof *l);
    if (!l) {
        fputs("corral: out of memory\n", stderr);
        abort();
    }
    l[(*n)++] = dupstr(s);
    l[*n] = NULL;
    *list = l;
}

void sb_profile_keep_env(sb_profile *p, const char *name)
{
    push(&p->env_keep, &p->n_keep, name);
}

void sb_profile_set_env(sb_profile *p, const char *name_value)
{
    push(&p->env_set, &p->n_set, name_value);
}

int sb_profile_builtin(sb_profile *p, const char *name, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->limits.nofile = 4096;
    p->limits.fsize = 4ull << 30;
    p->limits.core = 0;
    p->limits.nproc = 1024;
    p->limits.tmp_size = 1ull << 30;
    p->limits.pids_max = 1024;
    p->limits.memory_max = 0;
    p->net = SB_NET_OFF;
    p->home_layer = SB_HOME_DISCARD;
    if (strcmp(name, "full") == 0) {
        p->name = dupstr(name);
        p->unconfined = true;
        p->net = SB_NET_FULL;
        return 0;
    }
    bool writable;
    if (strcmp(name, "read-only") == 0)
        writable = false;
    else if (strcmp(name, "workspace-write") == 0)
        writable = true;
    else {
        snprintf(err, errlen, "unknown sandbox profile '%s' (built in: read-only, workspace-write, full; "
                 "or a [profile \"%s\"] section in the config file)", name, name);
        return -1;
    }
    p->name = dupstr(name);
    /* A command that may write its workspace reaches the network through
     * the asking proxy (hosts a human or a rule allowed); a read-only one
     * has none. */
    p->net = writable ? SB_NET_PROXY : SB_NET_OFF;
    add_builtin(p, "/", SB_READ);
    add_builtin(p, ":tmp", SB_WRITE);
    add_builtin(p, ":workspace", writable ? SB_WRITE : SB_READ);
    for (const char *const *d = sb_default_deny; *d; d++)
        add_builtin(p, *d, SB_DENY);
    return 0;
}

void sb_profile_free(sb_profile *p)
{
    for (size_t i = 0; i < p->n_entries; i++)
        free(p->entries[i].path);
    free(p->entries);
    for (size_t i = 0; i < p->n_keep; i++)
        free(p->env_keep[i]);
    free(p->env_keep);
    for (size_t i = 0; i < p->n_set; i++)
        free(p->env_set[i]);
    free(p->env_set);
    free(p->name);
    memset(p, 0, sizeof *p);
}

int sb_net_parse(const char *s)
{
    if (strcmp(s, "off") == 0)
        return SB_NET_OFF;
    if (strcmp(s, "proxy") == 0)
        return SB_NET_PROXY;
    if (strcmp(s, "full") == 0)
        return SB_NET_FULL;
    return -1;
}

const char *sb_net_name(sb_net n)
{
    return n == SB_NET_OFF ? "off" : n == SB_NET_PROXY ? "proxy" : "full";
}

const char *sb_access_name(sb_access a)
{
    return a == SB_READ ? "read" : a == SB_WRITE ? "write" : "deny";
}

int sb_home_layer_parse(const char *s)
{
    if (strcmp(s, "discard") == 0)
        return SB_HOME_DISCARD;
    if (strcmp(s, "keep") == 0)
        return SB_HOME_KEEP;
    if (strcmp(s, "off") == 0)
        return SB_HOME_OFF;
    return -1;
}

const char *sb_home_layer_name(sb_home_layer h)
{
    return h == SB_HOME_DISCARD ? "discard" : h == SB_HOME_KEEP ? "keep" : "off";
}
