/*
 * cli_sandbox.c - `corral sandbox`: one command in the sandbox, no server.
 * stdio passes straight through; the exit status is the command's (128+N
 * for signal N); corral's own failures exit 125, usage errors 2.  And
 * `corral doctor`: what this kernel supports for the sandbox, then the
 * rules files and the snapshot stores a command run here would meet.  Each
 * verb is one entry (cli_verb.h) that cli.c lists.
 */
#include "config.h"

#include "cli/cli_snap.h"
#include "cli/cli_verb.h"
#include "config/conf.h"
#include "sandbox/doctor.h"
#include "base/exitcode.h"
#include "snap/git_quarantine.h"
#include "base/quote.h"
#include "sandbox/sbutil.h"
#include "sandbox/launch.h"
#include "base/paths.h"
#include "sandbox/plan.h"
#include "policy/rules_ws.h"
#include "config/sbconf.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
    if (child_pid > 0)
        kill(child_pid, sig);
}

/* A repository the command made or changed in the writable workspace is
 * made inert once the sandbox is gone (docs/sandbox.md, "Repositories a
 * command makes"): its git state is taken before and compared after. */
typedef struct git_guard {
    int wsfd;
    char **deny;
    size_t n_deny;
    gq_state before;
} git_guard;

static void guard_start(git_guard *g, const sb_plan *plan)
{
    memset(g, 0, sizeof *g);
    g->wsfd = -1;
    if (plan->unconfined || !sb_plan_writable(plan, plan->workspace))
        return;
    g->wsfd = open(plan->workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (g->wsfd < 0)
        return;
    g->deny = sb_plan_denied_below(plan, plan->workspace, &g->n_deny);
    gq_scan(g->wsfd, g->deny, g->n_deny, &g->before);
}

static void guard_end(git_guard *g)
{
    if (g->wsfd < 0)
        return;
    gq_state after;
    gq_scan(g->wsfd, g->deny, g->n_deny, &after);
    gq_result q;
    memset(&q, 0, sizeof q);
    char stamp[64];
    snprintf(stamp, sizeof stamp, "sandbox-%ld", (long)getpid());
    gq_quarantine_changed(g->wsfd, &g->before, &after, stamp, &q);
    for (size_t i = 0; i < q.n; i++) {
        const gq_item *it = &q.items[i];
        char *p = quote_text_visible(it->path, strlen(it->path));
        char *m = quote_text_visible(it->moved_to, strlen(it->moved_to));
        fprintf(stderr, "corral: made inert what the command left in %s (moved to %s); it would have run:\n", p, m);
        for (const char *l = it->runs ? it->runs : ""; *l;) {
            size_t n = strcspn(l, "\n");
            char *shown = quote_text_visible(l, n);
            fprintf(stderr, "corral:     %s\n", shown);
            free(shown);
            l += n + (l[n] == '\n');
        }
        free(p);
        free(m);
    }
    for (size_t i = 0; i < q.n_errors; i++) {
        char *e = quote_text_visible(q.errors[i], strlen(q.errors[i]));
        fprintf(stderr, "corral: warning: a repository the command made may not be inert: %s\n", e);
        free(e);
    }
    gq_result_free(&q);
    gq_state_free(&after);
}

static void guard_free(git_guard *g)
{
    gq_state_free(&g->before);
    sb_list_free(g->deny, g->n_deny);
    if (g->wsfd >= 0)
        close(g->wsfd);
}

/* The exit status corral sandbox gives for a command's wait status. */
static int exit_for(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : EXIT_OWN_ERR;
}

/* --reuse N: the command N times, each in its own sandbox started from one
 * pre-built for the plan (docs/sandbox.md, "Pre-built sandboxes"), one
 * after the other or (--parallel) all at once.  The first failing run's
 * status, else 0. */
static int run_reused(const sb_plan *plan, int n, bool parallel)
{
    char err[2048];
    sb_base base;
    if (sb_base_build(plan, &base, err, sizeof err) < 0) {
        fprintf(stderr, "corral: %s\n", err);
        return EXIT_OWN_ERR;
    }
    sb_stdio io = {.in = 0, .out = 1, .err = 2, .tty = false, .chan = -1};
    sb_child *kids = xcalloc((size_t)n, sizeof *kids);
    int *status = xcalloc((size_t)n, sizeof *status);
    int rc = 0, started = 0;
    for (int i = 0; i < n; i++) {
        if (sb_launch_from_base(&base, plan, NULL, &io, true, &kids[i], err, sizeof err) < 0) {
            fprintf(stderr, "corral: %s\n", err);
            rc = EXIT_OWN_ERR;
            break;
        }
        started++;
        if (!parallel) {
            while (waitpid(kids[i].pid, &status[i], 0) < 0 && errno == EINTR)
                ;
        }
    }
    for (int i = 0; i < started; i++) {
        if (parallel)
            while (waitpid(kids[i].pid, &status[i], 0) < 0 && errno == EINTR)
                ;
        int st = exit_for(sb_child_status(&kids[i], status[i]));
        if (st != 0 && rc == 0)
            rc = st;
        sb_child_release(&kids[i]);
    }
    sb_base_release(&base);
    free(kids);
    free(status);
    return rc;
}

/* The config sections each verb reads: an error elsewhere does not stop it. */
static const char *const sandbox_sections[] = {"sandbox", "profile", "env", NULL};
static const char *const doctor_sections[] = {"sandbox", "profile", "env", "snapshots", NULL};

static int verb_sandbox(const cli_verb *v, int argc, char **argv)
{
    const char *profile_name = NULL, *dir = NULL;
    int net = -1;
    bool print_plan = false, allow_home = false, parallel = false;
    int reuse = 0;
    char **paths = NULL;
    sb_access *kinds = NULL;
    size_t n_paths = 0;
    static const struct option opts[] = {
        {"profile", required_argument, NULL, 'p'}, {"write", required_argument, NULL, 'w'},
        {"read", required_argument, NULL, 'r'},    {"deny", required_argument, NULL, 'd'},
        {"net", required_argument, NULL, 'n'},     {"print-plan", no_argument, NULL, 'P'},
        {"directory", required_argument, NULL, 'C'}, {"help", no_argument, NULL, 'h'},
        {"allow-home-workspace", no_argument, NULL, 'H'},
        {"reuse", required_argument, NULL, 'R'}, {"parallel", no_argument, NULL, 'Q'},
        {0}};
    int o;
    while ((o = getopt_long(argc, argv, "+p:w:r:d:n:PC:h", opts, NULL)) != -1) {
        switch (o) {
        case 'p': profile_name = optarg; break;
        case 'w':
        case 'r':
        case 'd':
            paths = xrealloc(paths, (n_paths + 1) * sizeof *paths);
            kinds = xrealloc(kinds, (n_paths + 1) * sizeof *kinds);
            paths[n_paths] = optarg;
            kinds[n_paths++] = o == 'w' ? SB_WRITE : o == 'r' ? SB_READ : SB_DENY;
            break;
        case 'n':
            net = sb_net_parse(optarg);
            if (net < 0) {
                fprintf(stderr, "corral sandbox: --net wants off, proxy or full, not '%s'\n", optarg);
                return cli_usage_line(v);
            }
            break;
        case 'P': print_plan = true; break;
        case 'C': dir = optarg; break;
        case 'H': allow_home = true; break;
        case 'R':
            reuse = atoi(optarg);
            if (reuse < 1 || reuse > 1000) {
                fprintf(stderr, "corral sandbox: --reuse wants a count from 1 to 1000, not '%s'\n", optarg);
                return cli_usage_line(v);
            }
            break;
        case 'Q': parallel = true; break;
        case 'h':
            return cli_print_help(v);
        default:
            return cli_option_usage(v);
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "corral sandbox: no command given (corral sandbox [OPTIONS] -- CMD [ARG...])\n");
        return EXIT_USAGE;
    }
    int rc = EXIT_OWN_ERR;
    conf_t conf;
    sb_profile prof = {0};
    sb_plan plan = {0};
    bool have_plan = false;
    char err[2048];
    char *cwd = NULL;
    if (cli_load_conf(&conf, "sandbox", sandbox_sections) < 0)
        goto out;
    if (sbconf_profile(&conf, profile_name, &prof, err, sizeof err) < 0) {
        fprintf(stderr, "corral: %s\n", err);
        goto out;
    }
    for (size_t i = 0; i < n_paths; i++)
        sb_profile_add(&prof, paths[i], kinds[i]);
    if (net == SB_NET_PROXY) {
        fprintf(stderr, "corral sandbox: --net proxy needs the corral server, whose proxy asks about each host: "
                        "run the command with corral exec (or a session), or use --net off or --net full here\n");
        goto out;
    }
    if (net >= 0)
        prof.net = (sb_net)net;
    else if (prof.net == SB_NET_PROXY)
        prof.net = SB_NET_OFF; /* no server, no proxy: the profile's network is off here */
    cwd = dir ? realpath(dir, NULL) : getcwd(NULL, 0);
    if (!cwd) {
        fprintf(stderr, "corral: cannot use directory '%s': %s\n", dir ? dir : ".", strerror(errno));
        goto out;
    }
    sb_request req = {.argv = argv + optind, .cwd = cwd, .workspace = cwd, .environ = environ,
                      .allow_home_workspace = allow_home};
    sbconf_request_dirs(&req, cwd);
    if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0) {
        fprintf(stderr, "corral: %s\n", err);
        goto out;
    }
    have_plan = true;
    if (print_plan) {
        sb_plan_print(&plan, stdout);
        sb_print_enforcement(&plan, stdout);
        rc = 0;
        goto out;
    }
    for (size_t i = 0; i < plan.n_warnings; i++)
        fprintf(stderr, "corral: warning: %s\n", plan.warnings[i]);
    sb_stdio io = {.in = 0, .out = 1, .err = 2, .tty = false, .chan = -1};
    sb_child child;
    git_guard guard;
    guard_start(&guard, &plan);
    /* Until the child is reaped, a signal to us goes to its init (which
     * forwards it, or ends the tree for SIGTERM). */
    struct sigaction sa = {.sa_handler = forward};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGQUIT, &sa, NULL);
    if (reuse > 0) {
        rc = run_reused(&plan, reuse, parallel);
        guard_end(&guard);
        guard_free(&guard);
        goto out;
    }
    if (sb_launch(&plan, &io, true, &child, err, sizeof err) < 0) {
        fprintf(stderr, "corral: %s\n", err);
        guard_free(&guard);
        goto out;
    }
    child_pid = child.pid;
    /* The command's status comes before the init is reaped: what the
     * sandbox held on the host is let go of while the kernel tears its
     * namespaces down (and the git guard, which needs no sandbox process
     * alive, looks meanwhile). */
    bool early = sb_child_release_at_status(&child);
    if (early)
        guard_end(&guard);
    int status;
    while (waitpid(child.pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "corral: waiting for the sandbox: %s\n", strerror(errno));
            status = W_EXITCODE(EXIT_OWN_ERR, 0);
            break;
        }
    }
    child_pid = 0;
    status = sb_child_status(&child, status);
    sb_child_release(&child);
    /* The sandbox and every process of it are gone: nothing races this. */
    if (!early)
        guard_end(&guard);
    guard_free(&guard);
    rc = exit_for(status);
out:
    if (have_plan)
        sb_plan_free(&plan);
    sb_profile_free(&prof);
    conf_free(&conf);
    free(cwd);
    free(paths);
    free(kinds);
    return rc;
}

const cli_verb cli_verb_sandbox = {
    .name = "sandbox",
    .usage = "sandbox [--profile P] [-w PATH]... [-r PATH]... [--deny PATH]... [--net off|proxy|full] [--print-plan] "
             "[--allow-home-workspace] [-C DIR] [--reuse N [--parallel]] -- CMD [ARG...]",
    .help = "Run one command in corral's sandbox, without a server: standard input and\n"
            "output pass straight through; the exit status is the command's (128+N for\n"
            "signal N; 125 when corral itself fails).\n\n"
            "  -p, --profile P     read-only, workspace-write (default), full (no sandbox),\n"
            "                      or a [profile \"P\"] section of the config file\n"
            "  -w, --write PATH    also writable\n"
            "  -r, --read PATH     also readable (with an empty root, :minimal)\n"
            "  -d, --deny PATH     hidden: an empty, unreadable directory or file\n"
            "      --net MODE      off (default): a network namespace with loopback only;\n"
            "                      full: the host's network (proxy needs the server)\n"
            "  -C, --directory DIR the workspace and working directory (default: here)\n"
            "      --allow-home-workspace  allow a writable workspace or write root that is\n"
            "                      your home directory, / or above it\n"
            "      --print-plan    print what would be done (mounts in order, namespaces,\n"
            "                      filter, limits, environment) and exit\n"
            "      --reuse N       run the command N times, each in its own sandbox started\n"
            "                      from one pre-built for the plan (--parallel: at once);\n"
            "                      for testing and measuring pre-built sandboxes\n\n"
            "Deny beats write beats read; the more specific path wins.  See docs/sandbox.md.\n",
    .run = verb_sandbox,
};

static int verb_doctor(const cli_verb *v, int argc, char **argv)
{
    if (argc > 1) {
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
            return cli_print_help(v);
        fprintf(stderr, "corral doctor: unexpected argument '%s'\n", argv[1]);
        return cli_usage_line(v);
    }
    conf_t conf;
    if (cli_load_conf(&conf, "doctor", doctor_sections) < 0) {
        conf_free(&conf);
        return 1;
    }
    sb_profile prof;
    char err[2048];
    /* The default profile, confined even if the config chose "full". */
    if (sbconf_profile(&conf, NULL, &prof, err, sizeof err) < 0 || prof.unconfined) {
        if (!prof.unconfined)
            fprintf(stderr, "corral: %s\n", err);
        sb_profile_free(&prof);
        sb_profile_builtin(&prof, SB_PROFILE_DEFAULT, err, sizeof err);
    }
    char *dir = xasprintf("/tmp/corral-doctor-XXXXXX");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "corral: cannot make a scratch workspace: %s\n", strerror(errno));
        return 1;
    }
    char *argv_true[] = {"/bin/true", NULL};
    sb_request req = {.argv = argv_true, .cwd = dir, .workspace = dir, .environ = environ};
    sbconf_request_dirs(&req, dir);
    sb_plan plan;
    int rc = 1;
    if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0) {
        fprintf(stderr, "corral: %s\n", err);
    } else {
        rc = sb_doctor(stdout, &plan) ? 0 : 1;
        sb_plan_free(&plan);
    }
    /* The rules that would judge a command run here. */
    char cwd[PATH_MAX];
    if (!rules_report(stdout, getcwd(cwd, sizeof cwd)))
        rc = 1;
    snap_doctor_report(stdout, &conf);
    rmdir(dir);
    free(dir);
    sb_profile_free(&prof);
    conf_free(&conf);
    return rc;
}

const cli_verb cli_verb_doctor = {
    .name = "doctor",
    .usage = "doctor",
    .help = "Print what this kernel supports for the sandbox (user and network namespaces,\n"
            "seccomp, the Landlock ABI, cgroup delegation, TIOCSTI), try a real sandbox,\n"
            "and say what corral will therefore enforce.  Then list the exec-policy rules\n"
            "files a command run here would be judged by (built-in, yours, this\n"
            "workspace's when trusted), each with its FILE:LINE:COLUMN error if it has\n"
            "one.  Exits 1 when sandboxes cannot run here (corral then refuses to start\n"
            "sandboxed commands) or a rules file cannot be loaded.\n",
    .run = verb_doctor,
};
