/* Unit tests for the INI reader and the settings table: values, durations,
 * and errors that name file:line and what was wrong. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config/conf.h"
#include "base/ini.h"
#include "base/util.h"

#include <errno.h>
#include <sys/stat.h>

static char dir[] = "/tmp/corral-test-conf-XXXXXX";

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static const char *write_file(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* The config file is read whole, up to 4 MiB: a file of exactly 4 MiB
 * loads, one byte more is refused by name, and a directory given as the
 * config is a read error that says so. */
static void file_size_limit(void **state)
{
    (void)state;
    size_t max = 4u << 20;
    char *text = malloc(max + 2);
    memset(text, '#', max + 1);
    text[max - 1] = '\n';
    text[max] = '\0';
    conf_t c;
    char err[512];
    conf_defaults(&c);
    const char *path = write_file("exact", text);
    assert_int_equal(conf_load(&c, path, err, sizeof err), 0);
    conf_free(&c);
    text[max - 1] = '#';
    text[max] = '\n';
    text[max + 1] = '\0';
    conf_defaults(&c);
    path = write_file("over", text);
    assert_int_equal(conf_load(&c, path, err, sizeof err), -1);
    assert_non_null(strstr(err, "/over: file is larger than 4 MiB"));
    conf_free(&c);
    free(text);
    conf_defaults(&c);
    assert_int_equal(conf_load(&c, dir, err, sizeof err), -1);
    assert_non_null(strstr(err, "read error: Is a directory"));
    conf_free(&c);
}

/* mkdir -p (the directories corral and its sandboxes keep): every missing
 * level made with the mode, an existing path fine, a file in the way an
 * error (ENOTDIR) and not a directory made beside it. */
static void mkdir_p_makes_what_is_missing(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/a/b/c", dir);
    assert_int_equal(mkdir_p(path, 0700), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(mkdir_p(path, 0700), 0); /* all there: fine */
    write_file("a/f", "x");
    snprintf(path, sizeof path, "%s/a/f/d/e", dir);
    assert_int_equal(mkdir_p(path, 0700), -ENOTDIR);
    assert_int_equal(stat(path, &st), -1);
}

static void durations(void **state)
{
    (void)state;
    uint64_t ms;
    assert_int_equal(conf_parse_duration("0", &ms), 0);
    assert_int_equal(ms, 0);
    assert_int_equal(conf_parse_duration("90", &ms), 0);
    assert_int_equal(ms, 90000);
    assert_int_equal(conf_parse_duration("500ms", &ms), 0);
    assert_int_equal(ms, 500);
    assert_int_equal(conf_parse_duration("2h", &ms), 0);
    assert_int_equal(ms, 7200000);
    assert_int_equal(conf_parse_duration("1d", &ms), 0);
    assert_int_equal(ms, 86400000);
    assert_int_equal(conf_parse_duration("-1", &ms), -1);
    assert_int_equal(conf_parse_duration("5 m", &ms), -1);
    assert_int_equal(conf_parse_duration("lots", &ms), -1);
}

static void defaults_and_overrides(void **state)
{
    (void)state;
    conf_t c;
    conf_defaults(&c);
    assert_int_equal(c.session_lifetime_ms, 0);
    assert_int_equal(c.exec_lifetime_ms, 2u * 3600 * 1000);
    char err[512];
    const char *p = write_file("ok", "# corral config\n[limits]\n  exec-lifetime = 30m ; half an hour\n"
                                     "session-lifetime = \"1h\"\n[session]\nscrollback=500\n");
    assert_int_equal(conf_load(&c, p, err, sizeof err), 0);
    assert_int_equal(c.exec_lifetime_ms, 30u * 60 * 1000);
    assert_int_equal(c.session_lifetime_ms, 3600u * 1000);
    assert_int_equal(c.scrollback, 500);
}

static void missing_file_is_fine(void **state)
{
    (void)state;
    conf_t c;
    conf_defaults(&c);
    char err[512];
    assert_int_equal(conf_load(&c, "/nonexistent/corral/config", err, sizeof err), 0);
}

static void expect_conf_error(const char *text, const char *expected_suffix)
{
    conf_t c;
    conf_defaults(&c);
    char err[1024];
    const char *p = write_file("bad", text);
    assert_int_equal(conf_load(&c, p, err, sizeof err), -1);
    char want[1100];
    snprintf(want, sizeof want, "%s:%s", p, expected_suffix);
    assert_string_equal(err, want);
    conf_free(&c); /* what was read before the error (a profile's section, say) */
}

/* [ui] sidebar-width: auto follows the terminal, N% is a share of it, N is
 * N columns; none takes more than half the terminal. */
static void sidebar_width_follows_the_terminal(void **state)
{
    (void)state;
    conf_t c;
    conf_defaults(&c);
    assert_int_equal(conf_sidebar_columns(&c, 120), 28);
    assert_int_equal(conf_sidebar_columns(&c, 80), 20);
    assert_int_equal(conf_sidebar_columns(&c, 190), 44);
    assert_int_equal(conf_sidebar_columns(&c, 400), 44);
    assert_int_equal(conf_sidebar_columns(&c, 30), 15);
    char err[1024];
    assert_int_equal(conf_load(&c, write_file("pct", "[ui]\nsidebar-width = 30%\n"), err, sizeof err), 0);
    assert_int_equal(conf_sidebar_columns(&c, 100), 30);
    assert_int_equal(conf_sidebar_columns(&c, 20), 10);
    assert_int_equal(conf_load(&c, write_file("cols", "[ui]\nsidebar-width = 33\n"), err, sizeof err), 0);
    assert_int_equal(conf_sidebar_columns(&c, 150), 33);
    assert_int_equal(conf_sidebar_columns(&c, 50), 25);
    assert_int_equal(conf_load(&c, write_file("auto", "[ui]\nsidebar-width = AUTO\n"), err, sizeof err), 0);
    assert_int_equal(conf_sidebar_columns(&c, 120), 28);
    conf_free(&c);
}

/* One read finds every error, each with its section; a bad line changes
 * nothing, the good ones around it apply. */
static void all_errors_in_one_read(void **state)
{
    (void)state;
    conf_t c;
    conf_defaults(&c);
    conf_errors e = {0};
    char *text = NULL;
    const char *p = write_file("many", "[sandbox]\nkeep-warm = 2d\n[ui]\nsidebar-width = 40\nmouse = maybe\n"
                                       "[sandbx]\na = 1\nb = 2\n[approvals]\ntimeout = 5m\n");
    conf_load_all(&c, p, &e, &text);
    assert_int_equal(e.n, 3);
    assert_string_equal(e.section[0], "sandbox");
    assert_string_equal(e.section[1], "ui");
    assert_string_equal(e.section[2], "sandbx");
    assert_non_null(strstr(e.text[2], ":7: unknown section [sandbx]"));
    assert_int_equal(c.sandbox_keep_warm_ms, 10ull * 60 * 1000); /* not half applied */
    assert_int_equal(c.ui_sidebar_width, 40);
    assert_int_equal(c.approval_timeout_ms, 5ull * 60 * 1000);
    static const char *const screen[] = {"ui", "keys", NULL};
    static const char *const sandbox[] = {"sandbox", NULL};
    assert_int_equal(conf_errors_read_by(&e, screen), 2); /* [ui], and the unknown section */
    assert_int_equal(conf_errors_read_by(&e, sandbox), 2);
    assert_int_equal(conf_errors_read_by(&e, conf_server_sections), 2);
    assert_non_null(strstr(text, "timeout = 5m"));
    free(text);
    conf_errors_free(&e);
    conf_free(&c);
}

/* [notify] command: words as written, quotes grouping, never a shell's
 * syntax unquoted. */
static void notify_command_words(void **state)
{
    (void)state;
    conf_t c;
    conf_defaults(&c);
    char err[1024];
    const char *p = write_file("notify", "[notify]\ncommand = sh -c 'notify-send corral \"$CORRAL_NOTIFY_SUMMARY\"'\n"
                                         "interval = 1m\n");
    assert_int_equal(conf_load(&c, p, err, sizeof err), 0);
    assert_string_equal(c.notify_argv[0], "sh");
    assert_string_equal(c.notify_argv[1], "-c");
    assert_string_equal(c.notify_argv[2], "notify-send corral \"$CORRAL_NOTIFY_SUMMARY\"");
    assert_null(c.notify_argv[3]);
    assert_int_equal(c.notify_interval_ms, 60000);
    conf_free(&c);
    conf_defaults(&c);
    p = write_file("notify", "[notify]\ncommand = notify-send $CORRAL_NOTIFY_SUMMARY\n");
    assert_int_equal(conf_load(&c, p, err, sizeof err), -1);
    assert_non_null(strstr(err, ":2: notify.command: '$' would need a shell, and none runs it"));
    conf_free(&c);
}

/* What the server reads of a file: a comment, a blank line or an edit of
 * [ui] or [keys] changes nothing of it. */
static void server_view(void **state)
{
    (void)state;
    int *lines;
    size_t n;
    char *v = conf_server_view("# hi\n[ui]\n  mouse = false\n[limits]\n  exec-lifetime = 5m  \n\n[keys]\nnew = N\n",
                               &lines, &n);
    assert_string_equal(v, "[limits]\nexec-lifetime = 5m\n");
    assert_int_equal(n, 2);
    assert_int_equal(lines[0], 4);
    assert_int_equal(lines[1], 5);
    free(v);
    free(lines);
}

/* [hosts]: names of other machines' servers and the two settings; a
 * value that is no ssh:// URL is refused naming the known keys; the
 * server's view leaves the section out (only clients read it). */
static void hosts_section(void **state)
{
    (void)state;
    conf_t c;
    conf_defaults(&c);
    char err[512];
    const char *p = write_file("hosts", "[hosts]\nbox = ssh://me@box\ngpu-1 = ssh://gpu:2222\nbox = ssh://other@box\n"
                                        "ssh-command = ssh -F /etc/corral_ssh\nremote-command = /opt/corral\n");
    assert_int_equal(conf_load(&c, p, err, sizeof err), 0);
    assert_int_equal(c.n_hosts, 2);
    assert_string_equal(conf_host_url(&c, "box"), "ssh://other@box"); /* the last one given */
    assert_string_equal(conf_host_url(&c, "gpu-1"), "ssh://gpu:2222");
    assert_null(conf_host_url(&c, "ssh-command"));
    assert_null(conf_host_url(&c, "nosuch"));
    assert_string_equal(c.hosts_ssh_command, "ssh -F /etc/corral_ssh");
    assert_string_equal(c.hosts_remote_command, "/opt/corral");
    conf_free(&c);
    assert_int_equal(c.n_hosts, 0);
    expect_conf_error("[hosts]\nbox = me@box\n", "2: unknown key 'box' in [hosts] (known: ssh-command, "
                      "remote-command), and 'me@box' is no host's ssh://[user@]host[:port]");
    expect_conf_error("[hosts]\nssh-command =\n",
                      "2: hosts.ssh-command: empty; give a command (e.g. ssh -F ~/.ssh/corral_config)");
    char *v = conf_server_view("[hosts]\nbox = ssh://box\n[limits]\nexec-lifetime = 5m\n", NULL, NULL);
    assert_string_equal(v, "[limits]\nexec-lifetime = 5m\n");
    free(v);
}

static void errors_name_file_and_line(void **state)
{
    (void)state;
    expect_conf_error("[limits]\nexec-lifetime = soon\n",
                      "2: limits.exec-lifetime: 'soon' is not a duration (e.g. 0, 30s, 5m, 2h)");
    expect_conf_error("[limits]\n\nfrobnicate = 1\n",
                      "3: unknown key 'frobnicate' in [limits] (known: session-lifetime, exec-lifetime)");
    expect_conf_error("[nosuch]\nx = 1\n", "2: unknown section [nosuch] (known: limits, exec, session, sandbox, "
                      "profile, env, ui, keys, approvals, network, snapshots, notify, hosts)");
    expect_conf_error("exec-lifetime = 1\n", "1: key outside of any [section]");
    expect_conf_error("[limits\n", "1: expected ']' to close the section header");
    expect_conf_error("[session]\nscrollback = many\n",
                      "2: session.scrollback: 'many' is not a whole number from 0 to 1000000");
    expect_conf_error("[limits]\nexec-lifetime = \"2h\n", "2: bad value: missing closing '\"'");
}

static int collect(void *user, const char *section, const char *sub, const char *key, const char *value,
                   char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    char *out = user;
    char line[200];
    snprintf(line, sizeof line, "%s|%s|%s=%s;", section, sub ? sub : "-", key, value);
    strcat(out, line);
    return 0;
}

static void subsections_quotes_and_bare_keys(void **state)
{
    (void)state;
    char out[1000] = "", err[256];
    int rc = ini_parse("t", "[profile \"my \\\"fast\\\" one\"]\nnet = \"a # b\"\nverbose\nx = 1 # c\n", collect,
                       out, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "profile|my \"fast\" one|net=a # b;profile|my \"fast\" one|verbose=true;"
                             "profile|my \"fast\" one|x=1;");
}

static void sandbox_sections(void **state)
{
    (void)state;
    conf_t c;
    conf_defaults(&c);
    char err[512];
    const char *p = write_file("sb", "[sandbox]\n  profile = review\n  write = ~/cache\n  write = /data\n"
                                     "  memory-max = 4G\n[profile \"review\"]\n  base = read-only\n"
                                     "  deny = ~/secrets\n  net = full\n  home-layer-in = disk\n[env]\n  keep = EDITOR GOPATH\n"
                                     "  set = A=b\n");
    assert_int_equal(conf_load(&c, p, err, sizeof err), 0);
    assert_string_equal(c.sandbox_profile, "review");
    assert_int_equal(c.sandbox_keep_warm_ms, 10u * 60 * 1000); /* the default: an agent's commands find it warm */
    assert_int_equal(c.sandbox.n_write, 2);
    assert_string_equal(c.sandbox.write[1], "/data");
    assert_int_equal(c.sandbox.memory_max, 4ull << 30);
    assert_int_equal(c.n_profiles, 1);
    assert_string_equal(c.profiles[0].name, "review");
    assert_string_equal(c.profiles[0].base, "read-only");
    assert_int_equal(c.profiles[0].net, 2);
    assert_int_equal(c.profiles[0].home_layer_in, 1); /* disk, for this profile only */
    assert_int_equal(c.sandbox.home_layer_in, -1);
    assert_int_equal(c.n_env_keep, 2);
    assert_string_equal(c.env_set[0], "A=b");
    conf_free(&c);
}

static void sandbox_errors(void **state)
{
    (void)state;
    expect_conf_error("[sandbox]\nwrte = /x\n",
                      "2: unknown key 'wrte' in [sandbox] (known: profile, keep-warm, write, read, deny, net, home-layer, "
                      "home-layer-in, nofile, fsize, core, nproc, tmp-size, pids-max, memory-max)");
    expect_conf_error("[sandbox]\nwrite = relative/path\n",
                      "2: sandbox.write: 'relative/path' is not an absolute path (or ~/..., :workspace, :tmp)");
    expect_conf_error("[sandbox]\nnet = sometimes\n", "2: sandbox.net: 'sometimes' is not off, proxy or full");
    expect_conf_error("[sandbox]\nhome-layer = always\n",
                      "2: sandbox.home-layer: 'always' is not discard, keep or off");
    expect_conf_error("[sandbox]\nhome-layer-in = ram\n", "2: sandbox.home-layer-in: 'ram' is not memory or disk");
    expect_conf_error("[profile \"big\"]\nhome-layer-in = tmpfs\n",
                      "2: profile \"big\".home-layer-in: 'tmpfs' is not memory or disk");
    expect_conf_error("[profile \"big\"]\nwrte = /x\n",
                      "2: unknown key 'wrte' in [profile \"big\"] (known: base, write, read, deny, net, home-layer, "
                      "home-layer-in, nofile, fsize, core, nproc, tmp-size, pids-max, memory-max)");
    expect_conf_error("[sandbox]\nkeep-warm = 2d\n",
                      "2: sandbox.keep-warm: '2d' is not a duration up to 1d (e.g. 10m, 30s; 0 makes every "
                      "command's sandbox afresh)");
    expect_conf_error("[sandbox]\nfsize = huge\n",
                      "2: sandbox.fsize: 'huge' is not a number or size (e.g. 4096, 64K, 4G)");
    expect_conf_error("[profile \"full\"]\nnet = off\n",
                      "2: [profile \"full\"] would shadow the built-in profile; pick another name and set base "
                      "= full");
    expect_conf_error("[profile]\nnet = off\n", "2: write the section as [profile \"NAME\"]");
    expect_conf_error("[env]\nset = NOVALUE\n", "2: env.set: 'NOVALUE' is not NAME=VALUE");
}

/* A profile name that leads nowhere is an error when the file is read, not
 * when a session first asks for the profile. */
static void profile_names_checked_on_load(void **state)
{
    (void)state;
    conf_t c;
    conf_defaults(&c);
    char err[512];
    char want[600];
    const char *p = write_file("base", "[profile \"x\"]\nbase = nosuch\n");
    assert_int_equal(conf_load(&c, p, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:2: [profile \"x\"] base = nosuch: no such profile (built in: read-only, "
             "workspace-write, full; or a [profile] section of this file)", p);
    assert_string_equal(err, want);
    conf_free(&c);

    p = write_file("chosen", "[sandbox]\nprofile = reveiw\n[profile \"review\"]\nbase = read-only\n");
    assert_int_equal(conf_load(&c, p, err, sizeof err), -1);
    assert_non_null(strstr(err, "[sandbox] profile = reveiw: no such profile"));
    conf_free(&c);

    p = write_file("loop", "[profile \"a\"]\nbase = b\n[profile \"b\"]\nbase = a\n");
    assert_int_equal(conf_load(&c, p, err, sizeof err), -1);
    assert_non_null(strstr(err, "base chain is longer than 8 or loops"));
    conf_free(&c);

    /* A base defined further down the file, and chains ending in a
     * built-in profile, are fine. */
    p = write_file("good", "[sandbox]\nprofile = b\n[profile \"b\"]\nbase = a\n[profile \"a\"]\nbase = full\n"
                           "[profile \"c\"]\nnet = full\n");
    assert_int_equal(conf_load(&c, p, err, sizeof err), 0);
    conf_free(&c);
}

static void sizes(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(conf_parse_size("4096", &v), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(conf_parse_size("64K", &v), 0);
    assert_int_equal(v, 65536);
    assert_int_equal(conf_parse_size("1GiB", &v), 0);
    assert_int_equal(v, 1ull << 30);
    assert_int_equal(conf_parse_size("1.5G", &v), -1);
    assert_int_equal(conf_parse_size("-1", &v), -1);
}

static void ui_and_keys(void **state)
{
    (void)state;
    conf_t c;
    conf_defaults(&c);
    char err[512];
    /* Defaults: docs/corral.1, THE SUPERVISOR SCREEN. */
    assert_int_equal(key_bindings_lookup(&c.keys, KM_SUPERVISOR, 'n'), KA_NEW);
    assert_int_equal(key_bindings_lookup(&c.keys, KM_PANE, 0x1d), KA_SUPERVISOR);
    assert_int_equal(key_bindings_lookup(&c.keys, KM_SUPERVISOR, KS_DOWN), KA_DOWN);
    assert_int_equal(key_bindings_lookup(&c.keys, KM_SCROLL, 'n'), KA_SEARCH_NEXT);
    for (uint32_t k = 1; k < 0x20; k++) /* no control key but C-] in any mode */
        for (int m = 0; m < KM_COUNT; m++)
            assert_true(key_bindings_lookup(&c.keys, (key_mode)m, k) < 0 || (k == 0x1d || k == '\r' || k == 0x1b));
    assert_true(c.ui_mouse);
    assert_null(c.ui_theme);
    assert_int_equal(c.ui_truecolor, -1); /* auto */
    const char *p = write_file("ui", "[ui]\n  theme = gruvbox\n  mouse = off\n  sidebar-width = 40\n"
                                     "[keys]\n  new = N M-n\n  supervisor = C-\\\n  down = J\n");
    assert_int_equal(conf_load(&c, p, err, sizeof err), 0);
    assert_string_equal(c.ui_theme, "gruvbox");
    /* Where it was set, for an error found when the theme is loaded. */
    assert_string_equal(c.ui_theme_file, p);
    assert_int_equal(conf_key_line(c.ui_theme_file, NULL, "ui", "theme"), 2);
    assert_false(c.ui_mouse);
    assert_int_equal(c.ui_sidebar_width, 40);
    assert_int_equal(key_bindings_lookup(&c.keys, KM_SUPERVISOR, 'N'), KA_NEW);
    assert_int_equal(key_bindings_lookup(&c.keys, KM_SUPERVISOR, KEY_META | 'n'), KA_NEW);
    assert_int_equal(key_bindings_lookup(&c.keys, KM_SUPERVISOR, 'n'), -1); /* replaced */
    assert_int_equal(key_bindings_lookup(&c.keys, KM_PANE, 0x1c), KA_SUPERVISOR);
    assert_int_equal(key_bindings_lookup(&c.keys, KM_PANE, 0x1d), -1);
    /* J was nobody's; 'Down' stays with down only if the user kept it. */
    assert_int_equal(key_bindings_lookup(&c.keys, KM_SUPERVISOR, 'J'), KA_DOWN);
    char names[64];
    key_bindings_names(&c.keys, KA_NEW, names, sizeof names);
    assert_string_equal(names, "N/M-n");
    conf_free(&c);
    /* A user key taken from a default binding: the default loses it. */
    conf_defaults(&c);
    p = write_file("steal", "[keys]\nnew = j\n");
    assert_int_equal(conf_load(&c, p, err, sizeof err), 0);
    assert_int_equal(key_bindings_lookup(&c.keys, KM_SUPERVISOR, 'j'), KA_NEW);
    assert_int_equal(key_bindings_lookup(&c.keys, KM_SUPERVISOR, KS_DOWN), KA_DOWN);
    conf_free(&c);
}

static void ui_and_keys_errors(void **state)
{
    (void)state;
    expect_conf_error("[keys]\nfrobnicate = x\n",
                      "2: unknown action 'frobnicate' in [keys] (known: up, down, focus, zoom, layout, new, kill, "
                      "pin, search, scroll-up, scroll-down, detach, stop-server, help, supervisor, line-up, "
                      "line-down, page-up, page-down, top, bottom, search-next, search-prev, scroll-search, "
                      "scroll-exit, keep, fold, clear-exited, diff, commands, timeline, replay, ended, reload, sidebar)");
    expect_conf_error("[keys]\n\nnew = Ctrl-n\n",
                      "3: keys.new: 'Ctrl-n' is not a key: use one character (j, /, Q), C-x for control keys (C-]), "
                      "M-x for Alt, or Enter, Tab, Esc, Space, BS, Up, Down, Left, Right, Home, End, PgUp, PgDn, "
                      "Insert, Delete, BTab, F1-F12, WheelUp, WheelDown");
    expect_conf_error("[keys]\nnew = a\nkill = a\n", "3: keys.kill: a is already bound to 'new'; bind one of them "
                                                     "to another key");
    expect_conf_error("[keys]\nnew =\n", "2: keys.new: no key given (to leave an action unbound, bind it to a key "
                                         "you never press)");
    expect_conf_error("[ui]\nmouse = sometimes\n", "2: ui.mouse: 'sometimes' is not true or false");
    expect_conf_error("[ui]\nsidebar-width = 5\n", "2: ui.sidebar-width: '5' is not auto, a number of columns from "
                      "12 to 80, or a share of the terminal's width from 5% to 50% (sidebar-width = 25%)");
    expect_conf_error("[ui]\nsidebar-width = 60%\n", "2: ui.sidebar-width: '60%' is not auto, a number of columns "
                      "from 12 to 80, or a share of the terminal's width from 5% to 50% (sidebar-width = 25%)");
    expect_conf_error("[ui]\nsidebar-width = 20 %\n", "2: ui.sidebar-width: '20 %' is not auto, a number of columns "
                      "from 12 to 80, or a share of the terminal's width from 5% to 50% (sidebar-width = 25%)");
    expect_conf_error("[ui]\ncolour = red\n",
                      "2: unknown key 'colour' in [ui] (known: theme, mouse, truecolor, notify, sidebar-width)");
    expect_conf_error("[ui]\n\ntruecolor = 24bit\n", "3: ui.truecolor: '24bit' is not auto, on or off");
}

static void truecolor_setting(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        int want;
    } cases[] = {{"auto", -1}, {"AUTO", -1}, {"on", 1}, {"true", 1}, {"yes", 1}, {"off", 0}, {"false", 0}, {"0", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        conf_t c;
        conf_defaults(&c);
        char text[64], err[512];
        snprintf(text, sizeof text, "[ui]\ntruecolor = %s\n", cases[i].value);
        assert_int_equal(conf_load(&c, write_file("tc", text), err, sizeof err), 0);
        assert_int_equal(c.ui_truecolor, cases[i].want);
        conf_free(&c);
    }
}

static void key_lines(void **state)
{
    (void)state;
    /* The last setting wins, so its line is the one named; subsections
     * and other sections do not count. */
    const char *text = "[ui]\ntheme = a\n[ui \"x\"]\ntheme = b\n[keys]\ntheme = c\n\n[ui]\n  theme = d # last\n"
                       "mouse = on\n";
    assert_int_equal(conf_key_line("t", text, "ui", "theme"), 9);
    assert_int_equal(conf_key_line("t", text, "ui", "mouse"), 10);
    assert_int_equal(conf_key_line("t", text, "ui", "sidebar-width"), 0);
    assert_int_equal(conf_key_line("t", text, "keys", "theme"), 6);
    const char *p = write_file("lines", text);
    assert_int_equal(conf_key_line(p, NULL, "ui", "theme"), 9);
    char missing[600];
    snprintf(missing, sizeof missing, "%s.none", p);
    assert_int_equal(conf_key_line(missing, NULL, "ui", "theme"), 0);
}

static void key_names_round_trip(void **state)
{
    (void)state;
    const char *names[] = {"j", "C-]", "C-a", "M-x", "Enter", "Esc", "Space", "PgUp", "F5", "F12", "BTab",
                           "\xc3\xa9", "M-Up", "WheelDown", "/"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        uint32_t k;
        char err[256], back[32];
        assert_int_equal(keyspec_parse(names[i], &k, err, sizeof err), 0);
        keyspec_name(k, back, sizeof back);
        assert_string_equal(back, names[i]);
    }
    uint32_t k;
    char err[512];
    assert_int_equal(keyspec_parse("F13", &k, err, sizeof err), -1);
    assert_int_equal(keyspec_parse("jk", &k, err, sizeof err), -1);
    assert_int_equal(keyspec_parse("", &k, err, sizeof err), -1);
    assert_int_equal(keyspec_parse("\xc0\xaf", &k, err, sizeof err), -1);     /* an overlong '/' */
    assert_int_equal(keyspec_parse("\xed\xa0\x80", &k, err, sizeof err), -1); /* a surrogate */
    assert_int_equal(keyspec_parse("M-\xc3", &k, err, sizeof err), -1);        /* cut short */
    /* NUL is no key code (0 ends a binding list): an error, not a binding of nothing. */
    assert_int_equal(keyspec_parse("C-@", &k, err, sizeof err), -1);
    assert_string_equal(err, "'C-@' cannot be bound: C-@ (C-Space) is always sent to the session");
    assert_int_equal(keyspec_parse("M-C-@", &k, err, sizeof err), -1);
}

/* "" as the last byte before an unmapped page: the parser must read
 * nothing past its terminator (it read one byte more, and crashed here). */
static void empty_key_name_reads_nothing_past_it(void **state)
{
    (void)state;
    long page = sysconf(_SC_PAGESIZE);
    char *two = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(two != MAP_FAILED);
    assert_int_equal(mprotect(two + page, (size_t)page, PROT_NONE), 0);
    const char *names[] = {"", "M-", "C-", "M-\xc3", "\xc3"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t len = strlen(names[i]);
        char *at = two + page - len - 1;
        memcpy(at, names[i], len + 1);
        uint32_t k;
        char err[512];
        assert_int_equal(keyspec_parse(at, &k, err, sizeof err), -1);
    }
    munmap(two, 2 * (size_t)page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(durations),
        cmocka_unit_test(defaults_and_overrides),
        cmocka_unit_test(missing_file_is_fine),
        cmocka_unit_test(errors_name_file_and_line),
        cmocka_unit_test(subsections_quotes_and_bare_keys),
        cmocka_unit_test(sandbox_sections),
        cmocka_unit_test(sandbox_errors),
        cmocka_unit_test(profile_names_checked_on_load),
        cmocka_unit_test(sizes),
        cmocka_unit_test(ui_and_keys),
        cmocka_unit_test(ui_and_keys_errors),
        cmocka_unit_test(all_errors_in_one_read),
        cmocka_unit_test(sidebar_width_follows_the_terminal),
        cmocka_unit_test(server_view),
        cmocka_unit_test(hosts_section),
        cmocka_unit_test(notify_command_words),
        cmocka_unit_test(truecolor_setting),
        cmocka_unit_test(key_lines),
        cmocka_unit_test(key_names_round_trip),
        cmocka_unit_test(empty_key_name_reads_nothing_past_it),
        cmocka_unit_test(file_size_limit),
        cmocka_unit_test(mkdir_p_makes_what_is_missing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
