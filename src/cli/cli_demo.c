/*
 * cli_demo.c - `corral demo`: a few scripted sessions that show what corral
 * does (live output, a long-running process, a command that fails, a shell
 * to type into, an agent's processes grouped apart from the user's), then
 * the supervisor screen on them.  Every demo session runs sandboxed in a
 * scratch workspace, $TMPDIR/corral-demo-UID.  Without a terminal it only
 * starts the sessions.  The verb is one entry (cli_verb.h) that cli.c
 * lists.
 */
#include "config.h"

#include "cli/cli_verb.h"
#include "protocol/client.h"
#include "base/exitcode.h"
#include "base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct demo_session {
    const char *client; /* who "created" it: the sidebar groups by this */
    const char *name;
    const char *script; /* run with sh -c */
} demo_session;

/* Later issues add an escalation, a network prompt and a diff here. */
static const demo_session demo[] = {
    {"demo-agent", "demo-build",
     "i=0; for m in parser lexer eval codegen runtime cli; do i=$((i+1)); "
     "printf '\\033[1;34m[build]\\033[0m compiling %s.c (%d/6)\\n' $m $i; sleep 1; done; "
     "printf '\\033[1;32mbuild finished\\033[0m\\n'; "
     "while :; do printf '\\033[2m%s watching for changes...\\033[0m\\n' \"$(date +%T)\"; sleep 3; done"},
    {"demo-agent", "demo-tests",
     "echo 'running 4 tests'; sleep 1; echo 'test_tokens ... ok'; sleep 1; echo 'test_parse ... ok'; sleep 1; "
     "printf 'test_eval ... \\033[31mFAILED\\033[0m\\n'; echo '  expected 3, got 4 (eval.c:88)' >&2; sleep 1; "
     "echo 'test_cli ... ok'; echo '1 failed, 3 passed'; exit 1"},
    {"demo-agent", "demo-download",
     "i=0; while [ $i -le 100 ]; do n=$((i/4)); bar=$(printf '%*s' $n '' | tr ' ' '#'); "
     "printf '\\rfetching dataset [%-25s] %3d%%' \"$bar\" $i; i=$((i+1)); sleep 0.3; done; echo; echo done"},
    /* The denial it suggests is the sandbox's own, for root as for anyone:
     * the workspace's .corral (made by start_demo) is writable on the host
     * but read-only in every sandbox, so an agent cannot widen its rules.
     * (A path only root may write, such as /root, is no denial for root.) */
    {"user", "demo-shell",
     "echo 'A shell in the sandbox: press Enter (in supervisor focus) to type here, C-] to come back.'; "
     "echo 'Try: touch .corral/x   (denied: read-only in the sandbox)'; "
     "echo '     touch here.txt     (the workspace is writable)'; exec bash -i"},
};

static int start_demo(const char *ws)
{
    char err[1024];
    /* The directory the shell's suggested denial writes into. */
    char *dot_corral = xasprintf("%s/.corral", ws);
    int made = mkdir(dot_corral, 0700);
    if (made < 0 && errno != EEXIST) {
        fprintf(stderr, "corral: cannot create %s: %s\n", dot_corral, strerror(errno));
        free(dot_corral);
        return -1;
    }
    free(dot_corral);
    client_t agent, user;
    if (client_connect(&user, "user", true, err, sizeof err) < 0) {
        fprintf(stderr, "corral: %s\n", err);
        return -1;
    }
    if (client_connect(&agent, "demo-agent", true, err, sizeof err) < 0) {
        fprintf(stderr, "corral: %s\n", err);
        client_close(&user);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < sizeof demo / sizeof demo[0] && rc == 0; i++) {
        const demo_session *d = &demo[i];
        bool is_agent = strcmp(d->client, "user") != 0;
        /* The agent's processes come as an agent's do: exec, without a
         * terminal; the user's shell is a terminal session. */
        json_t *req = is_agent ? json_pack("{s:s, s:[s,s,s], s:s, s:s, s:i, s:b}", "cmd", "exec", "argv", "sh",
                                           "-c", d->script, "workdir", ws, "name", d->name, "yield_time_ms", 250,
                                           "tty", 0)
                               : json_pack("{s:s, s:[s,s,s], s:s, s:s, s:b}", "cmd", "new", "argv", "sh", "-c",
                                           d->script, "cwd", ws, "name", d->name, "tty", 1);
        json_t *r = client_call(is_agent ? &agent : &user, req, NULL, NULL, err, sizeof err);
        char buf[1024];
        const char *msg = r ? client_error_message(r, buf, sizeof buf) : err;
        if (msg) {
            fprintf(stderr, "corral: demo session %s: %s\n", d->name, msg);
            rc = -1;
        }
        json_decref(r);
    }
    client_close(&agent);
    client_close(&user);
    return rc;
}

static int verb_demo(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {{"theme", required_argument, NULL, 'T'},
                                         {"help", no_argument, NULL, 'h'}, {0}};
    tui_options o = {0};
    int ch;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 'T': o.theme = optarg; break;
        case 'h': return cli_print_help(v);
        default: return cli_usage_line(v);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "corral demo: no arguments expected\n");
        return cli_usage_line(v);
    }
    /* Not under corral's own state directory: sandboxes may never write
     * there, so it cannot be a workspace. */
    const char *tmp = getenv("TMPDIR");
    char *ws = xasprintf("%s/corral-demo-%u", tmp && *tmp == '/' ? tmp : "/tmp", (unsigned)getuid());
    struct stat st;
    if (mkdir(ws, 0700) < 0 && errno != EEXIST) {
        fprintf(stderr, "corral: cannot create the demo workspace %s: %s\n", ws, strerror(errno));
        free(ws);
        return 1;
    }
    if (lstat(ws, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
        fprintf(stderr, "corral: the demo workspace %s is not a directory of yours; remove it or set TMPDIR\n", ws);
        free(ws);
        return 1;
    }
    int rc = start_demo(ws);
    free(ws);
    if (rc < 0)
        return 1;
    /* Without a terminal (a script, a test): the sessions run; say how to
     * see them instead of failing to open the screen. */
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        printf("corral: demo sessions started; corral attach (on a terminal) shows them, corral ls lists them\n");
        return 0;
    }
    return cli_run_tui(&o);
}

const cli_verb cli_verb_demo = {
    .name = "demo",
    .usage = "demo [--theme NAME]",
    .help = "Start a few scripted sessions that show what corral does (live output, a\n"
            "long-running process, a failing command, a shell to type into, an agent's\n"
            "processes grouped apart from yours) in a scratch workspace, then open the\n"
            "supervisor screen on them.  q detaches; corral kill or x ends them.  Without\n"
            "a terminal it only starts them (corral attach shows them later).\n",
    .run = verb_demo,
};
