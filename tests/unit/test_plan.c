/* Unit tests for sandbox plan compilation: the policy decisions a user
 * relies on (deny beats write beats read, the more specific path wins,
 * symlinked roots resolve, protected .git parts and workspace names, a
 * protected path through a writable symlink fails closed), the environment
 * allowlist, the plan's round trip to the init, and a compile's lstat
 * memo, which never changes what it decides. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/filter.h"
#include "sandbox/homelayer.h"
#include "sandbox/placeholders.h"
#include "sandbox/gitconfig.h"
#include "sandbox/gitindex.h"
#include "sandbox/dents.h"
#include "sandbox/gitprotect.h"
#include "sandbox/gitscan.h"
#include "sandbox/plan.h"
#include "sandbox/profile.h"
#include "sandbox/sbutil.h"
#include "sandbox/statmemo.h"

static char root[] = "/tmp/corral-test-plan-XXXXXX";
static char *ws, *home, *other;

static void mk(const char *fmt, const char *arg)
{
    char p[1100];
    snprintf(p, sizeof p, fmt, arg);
    assert_int_equal(mkdir(p, 0755), 0);
}

static void touch(const char *fmt, const char *arg, const char *content)
{
    char p[1100];
    snprintf(p, sizeof p, fmt, arg);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(root))
        return -1;
    asprintf(&ws, "%s/ws", root);
    asprintf(&home, "%s/home", root);
    asprintf(&other, "%s/other", root);
    mk("%s", ws);
    mk("%s/.git", ws);
    mk("%s/.git/hooks", ws);
    touch("%s/.git/config", ws, "[core]\n");
    mk("%s/.codex", ws);
    mk("%s", home);
    mk("%s/.ssh", home);
    mk("%s", other);
    /* git's global config comes from the test's home, none from the
     * system; no scan limit from the caller's environment. */
    setenv("HOME", home, 1);
    setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("GIT_CONFIG_GLOBAL");
    unsetenv("CORRAL_GIT_SCAN_DIRS");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd);
}

static char *const argv_true[] = {"true", NULL};

static sb_request request(char *const *env)
{
    sb_request r = {.argv = argv_true, .cwd = ws, .workspace = ws, .environ = env, .home = home,
                    .corral_state = NULL, .corral_config = NULL};
    return r;
}

/* The mount at dst in the plan, or NULL. */
static const sb_mount *mount_at(const sb_plan *p, const char *dst)
{
    for (size_t i = 0; i < p->n_mounts; i++)
        if (strcmp(p->mounts[i].dst, dst) == 0)
            return &p->mounts[i];
    return NULL;
}

static size_t index_of(const sb_plan *p, const char *dst)
{
    for (size_t i = 0; i < p->n_mounts; i++)
        if (strcmp(p->mounts[i].dst, dst) == 0)
            return i;
    fail_msg("no mount at %s", dst);
    return 0;
}

static void workspace_write_view(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    const sb_mount *m = mount_at(&plan, "/");
    assert_non_null(m);
    assert_true(m->rdonly); /* the host is read-only */
    m = mount_at(&plan, ws);
    assert_non_null(m);
    assert_false(m->rdonly); /* the workspace is writable */
    char p[512];
    snprintf(p, sizeof p, "%s/.git/hooks", ws);
    assert_true(mount_at(&plan, p)->rdonly);
    assert_true(index_of(&plan, p) > index_of(&plan, ws)); /* after, so it wins */
    snprintf(p, sizeof p, "%s/.git/config", ws);
    assert_true(mount_at(&plan, p)->rdonly);
    snprintf(p, sizeof p, "%s/.codex", ws);
    assert_true(mount_at(&plan, p)->rdonly);
    /* .corral, .agents, .claude and .gemini do not exist: placeholders are
     * planned, a commondir saying "." (no redirection) that the sandbox
     * cannot write, and an empty modules/ (no planted submodule git
     * directory). */
    assert_int_equal(plan.n_placeholders, 6);
    bool commondir = false;
    for (size_t i = 0; i < plan.n_placeholders; i++)
        if (strstr(plan.placeholders[i].path, "/.git/commondir"))
            commondir = plan.placeholders[i].content && strcmp(plan.placeholders[i].content, ".\n") == 0;
    assert_true(commondir);
    /* .git itself is pinned: a mount point cannot be renamed away. */
    snprintf(p, sizeof p, "%s/.git", ws);
    assert_non_null(mount_at(&plan, p));
    assert_false(mount_at(&plan, p)->rdonly);
    size_t pin = index_of(&plan, p);
    snprintf(p, sizeof p, "%s/.git/hooks", ws);
    assert_true(pin < index_of(&plan, p)); /* before what it holds */
    snprintf(p, sizeof p, "%s/.ssh", home);
    m = mount_at(&plan, p);
    assert_non_null(m);
    assert_int_equal(m->kind, SB_M_TMPFS); /* masked */
    assert_int_equal(m->mode, 0);
    assert_non_null(mount_at(&plan, "/tmp"));
    assert_false(mount_at(&plan, "/tmp")->rdonly);
    assert_true(plan.ns_flags != 0);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void nested_repositories_are_pinned(void **state)
{
    (void)state;
    /* ws3/vendor/lib is a repository of its own, with a submodule gitdir:
     * the path down to it is pinned and their hooks are read-only. */
    char ws3[512], p[600];
    snprintf(ws3, sizeof ws3, "%s/ws3", root);
    mkdir(ws3, 0755);
    mk("%s/vendor", ws3);
    mk("%s/vendor/lib", ws3);
    mk("%s/vendor/lib/.git", ws3);
    mk("%s/vendor/lib/.git/hooks", ws3);
    touch("%s/vendor/lib/.git/HEAD", ws3, "ref: refs/heads/main\n");
    mk("%s/vendor/lib/.git/modules", ws3);
    mk("%s/vendor/lib/.git/modules/sub", ws3);
    touch("%s/vendor/lib/.git/modules/sub/HEAD", ws3, "ref: refs/heads/main\n");
    touch("%s/vendor/lib/.git/modules/sub/config", ws3, "[core]\n");
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_request req = request(NULL);
    req.cwd = req.workspace = ws3;
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/vendor", ws3);
    assert_false(mount_at(&plan, p)->rdonly); /* pinned, still writable */
    snprintf(p, sizeof p, "%s/vendor/lib", ws3);
    assert_non_null(mount_at(&plan, p));
    snprintf(p, sizeof p, "%s/vendor/lib/.git/hooks", ws3);
    assert_true(mount_at(&plan, p)->rdonly);
    snprintf(p, sizeof p, "%s/vendor/lib/.git/modules/sub/config", ws3);
    assert_true(mount_at(&plan, p)->rdonly);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

/* The workspace's .git as a symlink (which a sandboxed command could
 * plant, re-point or rename): the sandbox keeps running, with the symlink
 * bound onto itself read-only and a warning for the user. */
static void git_symlink_is_pinned(void **state)
{
    (void)state;
    char ws4[512], link[600];
    snprintf(ws4, sizeof ws4, "%s/ws4", root);
    mkdir(ws4, 0755);
    mk("%s/real", ws4);
    snprintf(link, sizeof link, "%s/.git", ws4);
    assert_int_equal(symlink("real", link), 0);
    sb_profile prof;
    char err[1024];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_request req = request(NULL);
    req.cwd = req.workspace = ws4;
    sb_plan plan;
    if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
        fail_msg("a .git symlink must not stop the sandbox: %s", err);
    const sb_mount *m = mount_at(&plan, link);
    assert_non_null(m);
    assert_true(m->link);
    assert_true(m->rdonly);
    assert_int_equal(plan.n_warnings, 1);
    assert_non_null(strstr(plan.warnings[0], link));
    /* The flag survives the trip to the init. */
    size_t len;
    char *text = sb_plan_serialize(&plan, &len);
    sb_plan back;
    assert_int_equal(sb_plan_parse(text, len, &back, err, sizeof err), 0);
    bool found = false;
    for (size_t i = 0; i < back.n_mounts; i++)
        found = found || (strcmp(back.mounts[i].dst, link) == 0 && back.mounts[i].link);
    assert_true(found);
    free(text);
    sb_plan_free(&back);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void read_only_profile(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "read-only", err, sizeof err), 0);
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_true(mount_at(&plan, ws)->rdonly);
    assert_int_equal(plan.n_placeholders, 0); /* nothing writable to protect */
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void deny_beats_write_beats_read(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "read-only", err, sizeof err), 0);
    sb_profile_add(&prof, other, SB_READ);
    sb_profile_add(&prof, other, SB_WRITE);
    sb_profile_add(&prof, ws, SB_WRITE); /* write beats the profile's read */
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_false(mount_at(&plan, other)->rdonly);
    assert_false(mount_at(&plan, ws)->rdonly);
    sb_plan_free(&plan);
    sb_profile_add(&prof, other, SB_DENY);
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_int_equal(mount_at(&plan, other)->kind, SB_M_TMPFS); /* deny beats write */
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void more_specific_path_wins(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512], sub[512];
    snprintf(sub, sizeof sub, "%s/inner", other);
    mkdir(sub, 0755);
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_add(&prof, other, SB_DENY);
    sb_profile_add(&prof, sub, SB_WRITE); /* deeper: wins inside the mask */
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_true(index_of(&plan, sub) > index_of(&plan, other));
    assert_false(mount_at(&plan, sub)->rdonly);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void symlinked_root_is_resolved(void **state)
{
    (void)state;
    char link[512];
    snprintf(link, sizeof link, "%s/link-to-other", root);
    assert_int_equal(symlink(other, link), 0);
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_add(&prof, link, SB_WRITE);
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_null(mount_at(&plan, link));
    assert_false(mount_at(&plan, other)->rdonly); /* bound at its target */
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void deny_through_writable_symlink_fails_closed(void **state)
{
    (void)state;
    /* ws/secrets -> other: a deny of ws/secrets/x could be dodged by
     * re-pointing the symlink, so it must not compile. */
    char link[512], denied[512];
    snprintf(link, sizeof link, "%s/secrets", ws);
    assert_int_equal(symlink(other, link), 0);
    snprintf(denied, sizeof denied, "%s/secrets/key", ws);
    touch("%s/key", other, "k");
    sb_profile prof;
    char err[1024];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_add(&prof, denied, SB_DENY);
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, denied));
    assert_non_null(strstr(err, link)); /* both paths named */
    unlink(link);
    sb_profile_free(&prof);
}

static void git_file_points_to_protected_gitdir(void **state)
{
    (void)state;
    /* A worktree: ws2/.git is a file naming a gitdir whose hooks and
     * config must be read-only too. */
    char ws2[512], gitdir[512];
    snprintf(ws2, sizeof ws2, "%s/ws2", root);
    snprintf(gitdir, sizeof gitdir, "%s/ws2/.realgit", root);
    mkdir(ws2, 0755);
    mkdir(gitdir, 0755);
    mk("%s/hooks", gitdir);
    touch("%s/config", gitdir, "[core]\n");
    touch("%s/.git", ws2, "gitdir: .realgit\n");
    sb_profile prof;
    char err[512], p[600];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_request req = request(NULL);
    req.cwd = req.workspace = ws2;
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/.git", ws2);
    assert_true(mount_at(&plan, p)->rdonly);
    snprintf(p, sizeof p, "%s/hooks", gitdir);
    assert_true(mount_at(&plan, p)->rdonly);
    snprintf(p, sizeof p, "%s/config", gitdir);
    assert_true(mount_at(&plan, p)->rdonly);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void missing_write_root_is_an_error(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512], p[512];
    snprintf(p, sizeof p, "%s/nope", root);
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_add(&prof, p, SB_WRITE);
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, p));
    assert_non_null(strstr(err, "create it first"));
    sb_profile_free(&prof);
}

static bool has_env(const sb_plan *p, const char *kv)
{
    for (char **e = p->envp; *e; e++)
        if (strcmp(*e, kv) == 0)
            return true;
    return false;
}

static bool has_name(const sb_plan *p, const char *name)
{
    size_t n = strlen(name);
    for (char **e = p->envp; *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return true;
    return false;
}

static void environment_allowlist(void **state)
{
    (void)state;
    char *env[] = {"PATH=/usr/bin", "HOME=/h", "LC_ALL=C.UTF-8", "SSH_AUTH_SOCK=/run/ssh", "GITHUB_TOKEN=t",
                   "AWS_SECRET_ACCESS_KEY=k", "OPENAI_API_KEY=k", "LD_PRELOAD=/x.so", "MY_SECRET_THING=s",
                   "EDITOR=vi", "NPM_TOKEN=n", NULL};
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_keep_env(&prof, "EDITOR");
    sb_profile_keep_env(&prof, "*TOKEN"); /* a glob never lets a secret in */
    sb_profile_keep_env(&prof, "NPM_TOKEN"); /* the exact name does */
    sb_profile_set_env(&prof, "FOO=bar");
    char *set[] = {"TERM=xterm-256color", NULL};
    sb_request req = request(env);
    req.set_env = set;
    req.session_id = 4242;
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_true(has_env(&plan, "PATH=/usr/bin"));
    assert_true(has_env(&plan, "LC_ALL=C.UTF-8"));
    assert_true(has_env(&plan, "EDITOR=vi"));
    assert_true(has_env(&plan, "NPM_TOKEN=n"));
    assert_true(has_env(&plan, "FOO=bar"));
    assert_true(has_env(&plan, "TERM=xterm-256color"));
    assert_true(has_env(&plan, "CORRAL_SESSION=4242"));
    assert_true(has_env(&plan, "CORRAL_SANDBOX=workspace-write"));
    assert_false(has_name(&plan, "SSH_AUTH_SOCK"));
    assert_false(has_name(&plan, "GITHUB_TOKEN"));
    assert_false(has_name(&plan, "AWS_SECRET_ACCESS_KEY"));
    assert_false(has_name(&plan, "OPENAI_API_KEY"));
    assert_false(has_name(&plan, "LD_PRELOAD"));
    assert_false(has_name(&plan, "MY_SECRET_THING"));
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void full_profile_is_no_sandbox(void **state)
{
    (void)state;
    char *env[] = {"PATH=/usr/bin", "GITHUB_TOKEN=t", "CORRAL_SESSION=1", NULL};
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "full", err, sizeof err), 0);
    sb_request req = request(env);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_true(plan.unconfined);
    assert_int_equal(plan.n_mounts, 0);
    assert_int_equal(plan.ns_flags, 0);
    assert_true(has_env(&plan, "GITHUB_TOKEN=t")); /* passed on as it is */
    assert_true(has_env(&plan, "CORRAL_SANDBOX=full"));
    assert_false(has_env(&plan, "CORRAL_SESSION=1")); /* corral's own are set, not inherited */
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void plan_round_trip(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    char *env[] = {"PATH=/a\tb\nc%d", NULL}; /* escapes survive */
    sb_request req = request(env);
    sb_plan plan, back;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    size_t len;
    char *text = sb_plan_serialize(&plan, &len);
    assert_non_null(text);
    assert_int_equal(sb_plan_parse(text, len, &back, err, sizeof err), 0);
    assert_int_equal(back.n_mounts, plan.n_mounts);
    for (size_t i = 0; i < plan.n_mounts; i++) {
        assert_string_equal(back.mounts[i].dst, plan.mounts[i].dst);
        assert_int_equal(back.mounts[i].rdonly, plan.mounts[i].rdonly);
    }
    assert_true(has_env(&back, "PATH=/a\tb\nc%d"));
    assert_string_equal(back.cwd, plan.cwd);
    assert_int_equal(back.ns_flags, plan.ns_flags);
    sb_plan_free(&back);
    /* Garbage never parses into a plan. */
    assert_int_equal(sb_plan_parse("V\t1\nM\t9\t\t/x\n", 13, &back, err, sizeof err), -1);
    assert_int_equal(sb_plan_parse("nonsense", 8, &back, err, sizeof err), -1);
    free(text);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

/* What the filter lets a sandbox with the network off make: IP sockets for
 * its own loopback, route queries, connected Unix socket pairs; never an
 * unconnected Unix socket (it could name a host socket), a datagram pair,
 * raw or ping sockets, other protocols and families, whatever the high bits
 * say.  Checked in a child that loads the real filter. */
typedef struct sock_case {
    bool pair;
    unsigned long family, type, protocol;
    bool allowed;
    const char *what;
} sock_case;

static const sock_case net_off_sockets[] = {
    {false, AF_INET, SOCK_STREAM, 0, true, "TCP"},
    {false, AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_TCP, true, "TCP with flags"},
    {false, AF_INET, SOCK_DGRAM, IPPROTO_UDP, true, "UDP"},
    {false, AF_INET6, SOCK_STREAM, 0, true, "TCP over IPv6"},
    {false, AF_INET6, SOCK_DGRAM, 0, true, "UDP over IPv6"},
    {false, AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */, true, "route netlink"},
    {true, AF_UNIX, SOCK_STREAM, 0, true, "a stream socketpair"},
    {true, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, true, "a seqpacket socketpair"},
    {false, AF_UNIX, SOCK_STREAM, 0, false, "an unconnected Unix stream"},
    {false, AF_UNIX, SOCK_DGRAM, 0, false, "a Unix datagram socket"},
    {true, AF_UNIX, SOCK_DGRAM, 0, false, "a datagram socketpair"},
    {true, AF_UNIX, SOCK_RAW, 0, false, "a raw (datagram) socketpair"},
    {true, AF_UNIX, SOCK_STREAM | (1ul << 40), 0, true, "high bits of the type are flags"},
    {true, AF_UNIX | (1ul << 32), SOCK_STREAM, 0, false, "AF_UNIX with high bits"},
    {false, AF_INET | (1ul << 32), SOCK_STREAM, 0, false, "AF_INET with high bits"},
    {false, AF_INET, SOCK_RAW, 1, false, "raw ICMP"},
    {false, AF_INET, SOCK_DGRAM, 1 /* ICMP: a ping socket */, false, "ping"},
    {false, AF_INET6, SOCK_DGRAM, 58 /* ICMPv6 */, false, "ping over IPv6"},
    {false, AF_INET, SOCK_SEQPACKET, 132 /* SCTP */, false, "SCTP"},
    {false, AF_INET, SOCK_DGRAM, 115 /* L2TP */, false, "L2TP (a module to load)"},
    {false, AF_INET, SOCK_STREAM, IPPROTO_TCP | (1ul << 33), false, "a protocol with high bits"},
    {false, AF_NETLINK, SOCK_RAW, 15 /* KOBJECT_UEVENT */, false, "uevent netlink"},
    {false, AF_NETLINK, SOCK_RAW, 12 /* NETFILTER */, false, "netfilter netlink"},
    {false, AF_PACKET, SOCK_RAW, 0, false, "AF_PACKET"},
    {false, 40 /* AF_VSOCK */, SOCK_STREAM, 0, false, "AF_VSOCK"},
    {false, 38 /* AF_ALG */, SOCK_SEQPACKET, 0, false, "AF_ALG"},
    {false, 200, SOCK_STREAM, 0, false, "a family past the kernel's"},
};

/* A child that reports on a pipe: its pid; *report is the pipe's write
 * end in the child, its read end here.  For what must run in a process of
 * its own (a filter, once loaded, stays). */
static pid_t fork_reporting(int *report)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    close(pid == 0 ? p[0] : p[1]);
    *report = pid == 0 ? p[1] : p[0];
    return pid;
}

/* Up to cap bytes of the child's report (until it closes it), then the
 * child reaped, failing unless it exited 0; the bytes read. */
static size_t child_report(pid_t pid, int report, char *got, size_t cap, const char *who)
{
    size_t have = 0;
    for (ssize_t r; have < cap && (r = read(report, got + have, cap - have)) != 0;)
        if (r > 0)
            have += (size_t)r;
        else if (errno != EINTR)
            break;
    close(report);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("%s ended with wait status %d", who, st);
    return have;
}

static void filter_lets_loopback_in_and_nothing_out(void **state)
{
    (void)state;
    size_t n = sizeof net_off_sockets / sizeof net_off_sockets[0];
    int report;
    pid_t pid = fork_reporting(&report);
    if (pid == 0) {
        char err[256];
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || sb_seccomp_install(SB_NET_OFF, err, sizeof err) < 0)
            _exit(100);
        for (size_t i = 0; i < n; i++) {
            const sock_case *c = &net_off_sockets[i];
            int fds[2] = {-1, -1};
            long rc = c->pair ? syscall(SYS_socketpair, c->family, c->type, c->protocol, fds)
                              : syscall(SYS_socket, c->family, c->type, c->protocol);
            /* Refused is EPERM from the filter; the kernel's own refusals
             * (EAFNOSUPPORT, EPROTONOSUPPORT) of an allowed call mean the
             * filter let it through. */
            char r = rc >= 0 ? 'y' : errno == EPERM ? 'n' : 'k';
            if (write(report, &r, 1) != 1)
                _exit(101);
            if (rc >= 0)
                close(c->pair ? fds[0] : (int)rc);
            if (c->pair && rc >= 0)
                close(fds[1]);
        }
        _exit(0);
    }
    char got[64] = {0};
    size_t have = child_report(pid, report, got, sizeof got, "the child that loads the filter");
    assert_int_equal(have, n);
    for (size_t i = 0; i < n; i++) {
        const sock_case *c = &net_off_sockets[i];
        if (c->allowed && got[i] != 'y')
            fail_msg("%s: refused (%c), but the sandbox's loopback needs it", c->what, got[i]);
        if (!c->allowed && got[i] != 'n')
            fail_msg("%s: %s, but the filter must refuse it with EPERM", c->what,
                     got[i] == 'y' ? "made" : "reached the kernel");
    }
    /* The plan says the same. */
    char text[2048];
    sb_seccomp_describe(SB_NET_OFF, text, sizeof text);
    assert_non_null(strstr(text, "loopback only"));
    assert_non_null(strstr(text, "AF_UNIX only from socketpair"));
    sb_seccomp_describe(SB_NET_FULL, text, sizeof text);
    assert_null(strstr(text, "loopback"));
    assert_true(sb_seccomp_rule_count(SB_NET_OFF) > sb_seccomp_rule_count(SB_NET_FULL));
}

/* The launcher compiles the filter while its init starts and hands it over
 * on the go pipe (sb_seccomp_send); the init loads what it received.  What
 * it loads must refuse what the filter refuses, and anything else on the
 * pipe (an end, a count past the kernel's limit) leaves the init to
 * compile its own. */
static void filter_handed_over_is_the_filter(void **state)
{
    (void)state;
    int report;
    pid_t pid = fork_reporting(&report);
    if (pid == 0) {
        char verdict[8] = "-------";
        int p[2];
        /* An end before any count: nothing adopted. */
        if (pipe(p) < 0)
            _exit(100);
        close(p[1]);
        sb_seccomp_receive(p[0], SB_NET_OFF);
        close(p[0]);
        verdict[0] = sb_seccomp_have_precompiled(SB_NET_OFF) ? 'n' : 'y';
        /* A count past BPF_MAXINSNS: nothing adopted. */
        uint32_t huge = 5000;
        if (pipe(p) < 0 || write(p[1], &huge, sizeof huge) != sizeof huge)
            _exit(100);
        close(p[1]);
        sb_seccomp_receive(p[0], SB_NET_OFF);
        close(p[0]);
        verdict[1] = sb_seccomp_have_precompiled(SB_NET_OFF) ? 'n' : 'y';
        /* The launcher's program: adopted, for its network mode only. */
        if (pipe(p) < 0)
            _exit(100);
        sb_seccomp_send(p[1], SB_NET_OFF);
        close(p[1]);
        sb_seccomp_receive(p[0], SB_NET_OFF);
        close(p[0]);
        verdict[2] = sb_seccomp_have_precompiled(SB_NET_OFF) ? 'y' : 'n';
        verdict[3] = sb_seccomp_have_precompiled(SB_NET_FULL) ? 'n' : 'y';
        char err[256];
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || sb_seccomp_install(SB_NET_OFF, err, sizeof err) < 0)
            _exit(101);
        /* Loaded: ptrace, a namespace and AF_VSOCK refused; TCP allowed. */
        verdict[4] = syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0) < 0 && errno == EPERM ? 'y' : 'n';
        verdict[5] = unshare(CLONE_NEWUSER) < 0 && errno == EPERM ? 'y' : 'n';
        long fd = syscall(SYS_socket, 40 /* AF_VSOCK */, SOCK_STREAM, 0);
        long tcp = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
        verdict[6] = fd < 0 && errno == EPERM && tcp >= 0 ? 'y' : 'n';
        if (write(report, verdict, 7) != 7)
            _exit(102);
        _exit(0);
    }
    char got[8] = {0};
    assert_int_equal(child_report(pid, report, got, 7, "the child that loads the handed-over filter"), 7);
    static const char *const what[] = {"an empty pipe adopts nothing", "a count past the limit adopts nothing",
                                       "the launcher's program is adopted", "for its own network mode only",
                                       "loaded, it refuses ptrace", "and new namespaces",
                                       "and AF_VSOCK, and allows TCP"};
    for (int i = 0; i < 7; i++)
        if (got[i] != 'y')
            fail_msg("handed-over filter: not so: %s", what[i]);
}

/* A launcher writing to an init that has already failed and ended gets
 * EPIPE, and lives to report the init's error (SIGPIPE would end it). */
static void write_to_a_gone_reader_is_epipe(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    close(p[0]);
    sb_sigpipe_guard guard;
    sb_sigpipe_hold(&guard);
    errno = 0;
    int rc = sb_write_all(p[1], "G", 1);
    int e = errno;
    sb_sigpipe_release(&guard); /* SIGPIPE's default would end this test here */
    assert_int_equal(rc, -1);
    assert_int_equal(e, EPIPE);
    close(p[1]);
    sigset_t pending;
    assert_int_equal(sigpending(&pending), 0);
    assert_false(sigismember(&pending, SIGPIPE)); /* taken back, not left for later */
}

/* ---- the home layer ------------------------------------------------------ */

/* A home outside /tmp (the sandbox's /tmp is its own, so a home there is
 * not in the view at all): vhome, with a workspace in it. */
static char vroot[] = "/var/tmp/corral-test-layer-XXXXXX";
static char *vhome, *vws, *vlayers;

static void make_vhome(void)
{
    if (vhome)
        return;
    assert_non_null(mkdtemp(vroot));
    assert_int_equal(asprintf(&vhome, "%s/home", vroot) > 0, 1);
    assert_int_equal(asprintf(&vws, "%s/home/proj", vroot) > 0, 1);
    assert_int_equal(asprintf(&vlayers, "%s/layers", vroot) > 0, 1);
    mk("%s", vhome);
    mk("%s/.ssh", vhome);
    touch("%s/.ssh/id", vhome, "secret\n");
    touch("%s/.netrc", vhome, "machine x password secret\n");
    mk("%s", vws);
    touch("%s/.env", vws, "TOKEN=secret\n");
}

static sb_request layer_request(void)
{
    make_vhome();
    sb_request r = {.argv = argv_true, .cwd = vws, .workspace = vws, .home = vhome,
                    .home_layers_dir = vlayers, .workspace_key = "proj-1"};
    return r;
}

static bool write_root(const sb_plan *p, const char *path)
{
    for (size_t i = 0; i < p->n_write_roots; i++)
        if (strcmp(p->write_roots[i], path) == 0)
            return true;
    return false;
}

/* Where the sandbox sees the home read-only, an overlay takes its writes:
 * before everything deeper (masks, the workspace), with the home among
 * Landlock's write roots; a denied file in it is hidden in the layer when
 * nothing lies between, a denied directory still masked, a denied file
 * under the workspace's bind always masked (the bind would show it). */
static void home_layer_over_a_read_only_home(void **state)
{
    (void)state;
    sb_profile prof;
    char err[1024], path[1100];
    sb_request req = layer_request();
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/.env", vws);
    sb_profile_add(&prof, path, SB_DENY);
    sb_plan plan;
    if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
        fail_msg("%s", err);
    const sb_mount *m = mount_at(&plan, vhome);
    assert_non_null(m);
    assert_int_equal(m->kind, SB_M_OVERLAY);
    assert_string_equal(m->src, vhome);
    assert_true(write_root(&plan, vhome));
    assert_string_equal(plan.layer_home, vhome);
    assert_string_equal(plan.layer_dir, vlayers);
    assert_string_equal(plan.layer_key, "proj-1");
    /* A throw-away layer is in memory where the kernel's tmpfs can hold one. */
    assert_int_equal(plan.layer_in_memory, sb_layer_in_memory());
    snprintf(path, sizeof path, "%s/.netrc", vhome);
    assert_true(index_of(&plan, vhome) < index_of(&plan, path));
    assert_true(index_of(&plan, vhome) < index_of(&plan, vws));
    assert_int_equal(mount_at(&plan, path)->kind, SB_M_MASK_FILE);
    assert_true(mount_at(&plan, path)->hide_in_layer);
    snprintf(path, sizeof path, "%s/.ssh", vhome);
    assert_int_equal(mount_at(&plan, path)->kind, SB_M_TMPFS);
    snprintf(path, sizeof path, "%s/.env", vws);
    assert_false(mount_at(&plan, path)->hide_in_layer);
    /* The init gets the layer and the flags. */
    plan.layer_path = strdup("/var/tmp/some-layer");
    size_t len;
    char *text = sb_plan_serialize(&plan, &len);
    sb_plan back;
    assert_int_equal(sb_plan_parse(text, len, &back, err, sizeof err), 0);
    assert_string_equal(back.layer_home, vhome);
    assert_string_equal(back.layer_path, "/var/tmp/some-layer");
    assert_int_equal(back.layer_mode, SB_HOME_DISCARD);
    assert_int_equal(back.layer_in_memory, plan.layer_in_memory);
    snprintf(path, sizeof path, "%s/.netrc", vhome);
    assert_true(mount_at(&back, path)->hide_in_layer);
    assert_int_equal(mount_at(&back, vhome)->kind, SB_M_OVERLAY);
    sb_plan_free(&back);
    free(text);
    const char *bad_layer = "V\t1\nH\t0\trelative\t\t\t0\n";
    assert_int_equal(sb_plan_parse(bad_layer, strlen(bad_layer), &back, err, sizeof err), -1);
    sb_plan_free(&plan);

    /* [sandbox] home-layer-in = disk, and a kept layer: on disk. */
    prof.home_layer_on_disk = true;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_string_equal(plan.layer_home, vhome);
    assert_false(plan.layer_in_memory);
    sb_plan_free(&plan);
    prof.home_layer_on_disk = false;
    prof.home_layer = SB_HOME_KEEP;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_false(plan.layer_in_memory);
    sb_plan_free(&plan);
    prof.home_layer = SB_HOME_DISCARD;

    /* home-layer = off: the home read-only as before, the plan says why. */
    prof.home_layer = SB_HOME_OFF;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_int_equal(mount_at(&plan, vhome), NULL);
    assert_false(write_root(&plan, vhome));
    assert_non_null(strstr(plan.layer_why_not, "home-layer = off"));
    snprintf(path, sizeof path, "%s/.netrc", vhome);
    assert_false(mount_at(&plan, path)->hide_in_layer);
    sb_plan_free(&plan);
    prof.home_layer = SB_HOME_KEEP;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_non_null(strstr(mount_at(&plan, vhome)->why, "kept"));
    sb_plan_free(&plan);

    /* No layer where the home is not read-only: denied, writable. */
    sb_profile_add(&prof, "~", SB_DENY);
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_int_equal(plan.layer_home, NULL);
    assert_non_null(strstr(plan.layer_why_not, "hidden"));
    sb_plan_free(&plan);
    sb_profile_free(&prof);
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    req.cwd = req.workspace = vhome;
    req.allow_home_workspace = true;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_int_equal(plan.layer_home, NULL);
    assert_non_null(strstr(plan.layer_why_not, "writable"));
    sb_plan_free(&plan);
    /* Nowhere to keep layers: none. */
    req = layer_request();
    req.home_layers_dir = NULL;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_int_equal(plan.layer_home, NULL);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

/* An overlay shows only the home's own filesystem: a mount inside the
 * home is bound again, read-only, above the layer (unless something
 * deeper covers it).  In a mount namespace of a child's own, which
 * compiles a plan before it unshares and before it mounts: the mounts are
 * kept between plans, and neither a new namespace nor a new mount in it
 * may be missed. */
static void home_layer_rebinds_mounts_inside_the_home(void **state)
{
    (void)state;
    make_vhome();
    char mnt[1100];
    snprintf(mnt, sizeof mnt, "%s/data", vhome);
    mk("%s", mnt);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sb_profile prof;
        char err[1024];
        sb_profile_builtin(&prof, "workspace-write", err, sizeof err);
        sb_request req = layer_request();
        sb_plan plan;
        if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
            _exit(1);
        bool before = mount_at(&plan, mnt) != NULL;
        sb_plan_free(&plan);
        if (before)
            _exit(3); /* not a mount yet */
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
            _exit(77);
        if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
            _exit(1);
        before = mount_at(&plan, mnt) != NULL;
        sb_plan_free(&plan);
        if (before)
            _exit(4);
        if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k") < 0)
            _exit(77);
        if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
            _exit(1);
        const sb_mount *m = mount_at(&plan, mnt);
        bool ok = m && m->kind == SB_M_BIND && m->rdonly && index_of(&plan, vhome) < index_of(&plan, mnt);
        _exit(ok ? 0 : 2);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
        rmdir(mnt);
        skip();
    }
    rmdir(mnt);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) != 0)
        fail_msg("a mount inside the home is not bound again over the layer (child status %d)", WEXITSTATUS(st));
}

static bool exists_at(const char *dir, const char *rel)
{
    char *p = sb_printf("%s/%s", dir, rel);
    struct stat st;
    bool there = lstat(p, &st) == 0;
    free(p);
    return there;
}

static void touch_at(const char *dir, const char *rel, const char *content)
{
    char *p = sb_printf("%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
    free(p);
}

/* The layers' directories: a discarded layer goes with its sandbox, all
 * of it however it nests and whatever its modes, without following a
 * symlink out; one whose launcher died goes with the next launch; a kept
 * layer stays but loses the shells' startup files and git's config before
 * each use, and
 * serves one sandbox at a time. */
static void home_layer_directories_are_made_and_removed(void **state)
{
    (void)state;
    make_vhome();
    char outside[300], upper[300], p[600], deep[4096];
    snprintf(outside, sizeof outside, "%s/outside", vroot);
    mk("%s", outside);
    touch("%s/canary", outside, "keep me\n");
    mk("%s/fish", outside);
    touch("%s/fish/config.fish", outside, "keep me too\n");
    sb_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.layer_home = vhome;
    plan.layer_dir = vlayers;
    plan.layer_key = "proj/../1";
    plan.layer_mode = SB_HOME_DISCARD;
    sb_layer_hold hold;
    char err[512];
    assert_int_equal(sb_layer_acquire(&plan, &hold, err, sizeof err), 0);
    assert_true(hold.fd >= 0 && hold.discard);
    assert_true(exists_at(hold.path, "upper") && exists_at(hold.path, "work"));
    /* What a sandbox might leave: deep nesting, mode 000 directories, a
     * symlink out, a fifo. */
    snprintf(upper, sizeof upper, "%s/upper", hold.path);
    snprintf(deep, sizeof deep, "%s", upper);
    for (size_t n = strlen(deep); n + 3 < sizeof deep - 8; n += 2) {
        memcpy(deep + n, "/d", 3);
        assert_int_equal(mkdir(deep, 0755), 0);
    }
    touch_at(deep, "leaf", "x");
    snprintf(p, sizeof p, "%s/locked", upper);
    assert_int_equal(mkdir(p, 0755), 0);
    touch_at(p, "inside", "x");
    assert_int_equal(chmod(p, 0), 0);
    snprintf(p, sizeof p, "%s/out", upper);
    assert_int_equal(symlink(outside, p), 0);
    snprintf(p, sizeof p, "%s/fifo", upper);
    assert_int_equal(mkfifo(p, 0600), 0);
    char *path = strdup(hold.path);
    sb_layer_release(&hold);
    assert_false(exists_at(path, ""));
    assert_false(exists_at(vlayers, "")); /* the last layer takes the directory with it */
    assert_true(exists_at(outside, "canary"));
    free(path);

    /* A launcher that died left a layer: the next launch removes it. */
    mk("%s", vlayers);
    mk("%s/s-1-dead/", vlayers);
    snprintf(p, sizeof p, "%s/s-1-dead", vlayers);
    mk("%s/upper", p);
    assert_int_equal(sb_layer_acquire(&plan, &hold, err, sizeof err), 0);
    assert_false(exists_at(vlayers, "s-1-dead"));
    /* A live one (locked) stays. */
    sb_layer_hold second;
    assert_int_equal(sb_layer_acquire(&plan, &second, err, sizeof err), 0);
    assert_true(exists_at(hold.path, "upper"));
    sb_layer_release(&second);
    sb_layer_release(&hold);

    /* Kept: the workspace's layer, its name sanitized. */
    plan.layer_mode = SB_HOME_KEEP;
    assert_int_equal(sb_layer_acquire(&plan, &hold, err, sizeof err), 0);
    assert_false(hold.discard);
    assert_non_null(strstr(hold.path, "/w-proj_.._1"));
    snprintf(upper, sizeof upper, "%s/upper", hold.path);
    touch_at(upper, ".bashrc", "echo planted\n");
    touch_at(upper, ".gitconfig", "[core]\n\tfsmonitor = planted\n");
    touch_at(upper, "kept.txt", "kept\n");
    snprintf(p, sizeof p, "%s/.config", upper);
    mk("%s", p);
    mk("%s/fish", p);
    touch("%s/fish/config.fish", p, "echo planted\n");
    /* Held: another sandbox of the workspace gets a layer of its own. */
    assert_int_equal(sb_layer_acquire(&plan, &second, err, sizeof err), 0);
    assert_true(second.discard);
    assert_string_not_equal(second.path, hold.path);
    sb_layer_release(&second);
    sb_layer_release(&hold);
    assert_int_equal(sb_layer_acquire(&plan, &hold, err, sizeof err), 0);
    assert_false(exists_at(upper, ".bashrc"));
    assert_false(exists_at(upper, ".gitconfig"));
    assert_false(exists_at(upper, ".config/fish"));
    assert_true(exists_at(upper, "kept.txt"));
    assert_true(exists_at(upper, ".config"));
    /* A symlink planted on the way to a startup file leads nowhere. */
    snprintf(p, sizeof p, "%s/.config", upper);
    assert_int_equal(rmdir(p), 0);
    assert_int_equal(symlink(outside, p), 0);
    sb_layer_release(&hold);
    assert_int_equal(sb_layer_acquire(&plan, &hold, err, sizeof err), 0);
    assert_true(exists_at(outside, "fish/config.fish"));
    sb_layer_release(&hold);
    assert_true(exists_at(vlayers, "w-proj_.._1"));

    char cmd[1200];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx %s && rm -rf %s", vroot, vroot);
    assert_int_equal(system(cmd), 0);
    free(vhome);
    free(vws);
    free(vlayers);
    vhome = NULL;
}

static void unknown_profile_is_named(void **state)
{
    (void)state;
    sb_profile prof;
    char err[512];
    assert_int_equal(sb_profile_builtin(&prof, "paranoid", err, sizeof err), -1);
    assert_non_null(strstr(err, "'paranoid'"));
    sb_profile_free(&prof);
}

static bool exists(const char *fmt, const char *arg)
{
    char p[1100];
    snprintf(p, sizeof p, fmt, arg);
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Placeholders are made and removed relative to their parent directory,
 * opened without following symlinks: a sandbox that swaps a directory on
 * the way for a symlink between the plan and the launch (or during the
 * sandbox's life) makes corral create or remove nothing outside. */
static void placeholders_never_follow_a_swapped_symlink(void **state)
{
    (void)state;
    char base[512], run[600], reg[700], p[700];
    snprintf(base, sizeof base, "%s/swap", root);
    mk("%s", base);
    mk("%s/ws", base);
    mk("%s/ws/sub", base);
    mk("%s/outside", base);
    mk("%s/outside2", base);
    mk("%s/outside2/.agents", base); /* an empty directory of the user's, outside */
    snprintf(run, sizeof run, "%s/run", base);
    mkdir(run, 0700);
    snprintf(reg, sizeof reg, "%s/placeholders", run); /* a registry of the test's own */

    /* Creation: ws/sub is planned, then becomes a symlink to outside. */
    char path[700];
    snprintf(path, sizeof path, "%s/ws/sub/.corral", base);
    sb_placeholder ph = {.path = path, .content = NULL};
    snprintf(p, sizeof p, "%s/ws/sub", base);
    char moved[700];
    snprintf(moved, sizeof moved, "%s/ws/sub.real", base);
    assert_int_equal(rename(p, moved), 0);
    char target[700];
    snprintf(target, sizeof target, "%s/outside", base);
    assert_int_equal(symlink(target, p), 0);
    sb_placeholder_hold *hold = NULL;
    char err[1024];
    assert_int_equal(sb_placeholders_acquire(reg, &ph, 1, &hold, err, sizeof err), -1);
    assert_non_null(strstr(err, "symlink"));
    assert_false(exists("%s/outside/.corral", base)); /* nothing made outside */
    assert_false(exists("%s/ws/sub.real/.corral", base));

    /* Removal: made in ws/sub2, which then moves away and is replaced by
     * a symlink to a directory holding an empty .agents of the user's. */
    mk("%s/ws/sub2", base);
    snprintf(path, sizeof path, "%s/ws/sub2/.agents", base);
    ph.path = path;
    assert_int_equal(sb_placeholders_acquire(reg, &ph, 1, &hold, err, sizeof err), 0);
    assert_true(exists("%s/ws/sub2/.agents", base));
    snprintf(p, sizeof p, "%s/ws/sub2", base);
    snprintf(moved, sizeof moved, "%s/ws/sub2.moved", base);
    assert_int_equal(rename(p, moved), 0);
    snprintf(target, sizeof target, "%s/outside2", base);
    assert_int_equal(symlink(target, p), 0);
    sb_placeholders_release(hold);
    assert_true(exists("%s/outside2/.agents", base));       /* the user's, outside: untouched */
    assert_false(exists("%s/ws/sub2.moved/.agents", base)); /* ours, where it went: removed */
}

/* Several sandboxes share a placeholder: it stays while any of them holds
 * it, only the last removes it, and a path the user made is never
 * removed. */
static void placeholders_are_shared_and_counted(void **state)
{
    (void)state;
    char base[512], run[600], path[700], mine[700];
    snprintf(base, sizeof base, "%s/shared", root);
    mk("%s", base);
    snprintf(run, sizeof run, "%s/run", base);
    mkdir(run, 0700);
    char *reg = sb_printf("%s/placeholders", run); /* a registry of the test's own */
    snprintf(path, sizeof path, "%s/.codex", base);
    snprintf(mine, sizeof mine, "%s/.agents", base);
    mk("%s/.agents", base); /* the user's own empty directory */
    sb_placeholder ph[] = {{.path = path, .content = NULL}, {.path = mine, .content = NULL}};
    sb_placeholder_hold *a = NULL, *b = NULL;
    char err[1024];
    assert_int_equal(sb_placeholders_acquire(reg, ph, 2, &a, err, sizeof err), 0);
    assert_int_equal(sb_placeholders_acquire(reg, ph, 2, &b, err, sizeof err), 0);
    sb_placeholders_release(a);
    assert_true(exists("%s/.codex", base)); /* b still uses it */
    sb_placeholders_release(b);
    assert_false(exists("%s/.codex", base)); /* the last one removed it */
    assert_true(exists("%s/.agents", base)); /* not corral's: kept */
    free(reg);
}

/* The workspace (or a write root) must not be $HOME, "/" or above $HOME:
 * ~/.bashrc and ~/.config/autostart would be writable. */
static void home_workspace_is_refused(void **state)
{
    (void)state;
    sb_profile prof;
    char err[1024];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_request req = request(NULL);
    req.cwd = req.workspace = home;
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, home));
    assert_non_null(strstr(err, ".bashrc"));
    assert_non_null(strstr(err, "-C DIR"));
    assert_non_null(strstr(err, "--allow-home-workspace"));
    req.allow_home_workspace = true; /* asked for explicitly */
    if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
        fail_msg("with allow_home_workspace: %s", err);
    sb_plan_free(&plan);
    req.allow_home_workspace = false;
    req.cwd = req.workspace = root; /* an ancestor of the home */
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, root));
    req = request(NULL);
    sb_profile_add(&prof, "/", SB_WRITE); /* a write root above the home */
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, "write root /"));
    sb_profile_free(&prof);
    /* Read-only, the home is harmless as a workspace. */
    assert_int_equal(sb_profile_builtin(&prof, "read-only", err, sizeof err), 0);
    req = request(NULL);
    req.cwd = req.workspace = home;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

static void assert_readonly_mount(const sb_plan *plan, const char *fmt, const char *arg)
{
    char p[1100];
    snprintf(p, sizeof p, fmt, arg);
    const sb_mount *m = mount_at(plan, p);
    if (!m)
        fail_msg("no mount at %s: it would be writable", p);
    if (!m->rdonly)
        fail_msg("%s is mounted writable", p);
}

/* An extra write root never overrides what corral protects: on the same
 * path, or inside it. */
static void write_roots_never_open_protected_paths(void **state)
{
    (void)state;
    char p[600];
    snprintf(p, sizeof p, "%s/.corral", ws);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/.corral/rules", ws);
    mkdir(p, 0755);
    static const char *const writes[] = {"%s/.git/hooks", "%s/.git", "%s/.corral", "%s/.corral/rules", NULL};
    for (const char *const *wfmt = writes; *wfmt; wfmt++) {
        sb_profile prof;
        char err[1024];
        assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
        snprintf(p, sizeof p, *wfmt, ws);
        sb_profile_add(&prof, p, SB_WRITE);
        sb_request req = request(NULL);
        sb_plan plan;
        if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
            fail_msg("-w %s: %s", p, err);
        assert_readonly_mount(&plan, "%s/.git/hooks", ws);
        assert_readonly_mount(&plan, "%s/.git/config", ws);
        assert_readonly_mount(&plan, "%s/.corral", ws);
        const sb_mount *m = mount_at(&plan, p);
        assert_true(m == NULL || m->rdonly || strcmp(*wfmt, "%s/.git") == 0); /* .git: pinned, writable */
        sb_plan_free(&plan);
        sb_profile_free(&prof);
    }
    snprintf(p, sizeof p, "%s/.corral/rules", ws);
    rmdir(p);
    snprintf(p, sizeof p, "%s/.corral", ws);
    rmdir(p);
}

/* A write root inside a git directory gets that directory's protection
 * even when nothing around it is writable: `-w ws/.git` with the
 * read-only profile, and a subdirectory of a bare repository. */
static void write_root_inside_a_gitdir_keeps_hooks_readonly(void **state)
{
    (void)state;
    char p[700], bare[600];
    sb_profile prof;
    char err[1024];
    assert_int_equal(sb_profile_builtin(&prof, "read-only", err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/.git", ws);
    sb_profile_add(&prof, p, SB_WRITE);
    sb_request req = request(NULL);
    sb_plan plan;
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_false(mount_at(&plan, p)->rdonly); /* objects, refs, the index: writable */
    assert_readonly_mount(&plan, "%s/.git/hooks", ws);
    assert_readonly_mount(&plan, "%s/.git/config", ws);
    sb_plan_free(&plan);
    sb_profile_free(&prof);

    snprintf(bare, sizeof bare, "%s/bare.git", root);
    mk("%s", bare);
    mk("%s/objects", bare);
    mk("%s/objects/pack", bare);
    mk("%s/refs", bare);
    touch("%s/HEAD", bare, "ref: refs/heads/main\n");
    touch("%s/config", bare, "[core]\n\tbare = true\n");
    assert_int_equal(sb_profile_builtin(&prof, "read-only", err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/objects/pack", bare);
    sb_profile_add(&prof, p, SB_WRITE);
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_false(mount_at(&plan, p)->rdonly);
    assert_readonly_mount(&plan, "%s/config", bare);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
    /* The bare repository itself writable: its missing hooks directory is
     * made a read-only placeholder. */
    assert_int_equal(sb_profile_builtin(&prof, "read-only", err, sizeof err), 0);
    sb_profile_add(&prof, bare, SB_WRITE);
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), 0);
    assert_readonly_mount(&plan, "%s/hooks", bare);
    assert_readonly_mount(&plan, "%s/config", bare);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
}

/* An escalation that keeps the sandbox writes "/" and keeps the default
 * deny list: /var/run (a symlink to /run on Debian) is masked at /run,
 * where it points, instead of failing the plan. */
static void writable_root_keeps_default_deny_list(void **state)
{
    (void)state;
    sb_profile prof;
    char err[1024];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_add(&prof, "/", SB_WRITE);
    sb_request req = request(NULL);
    req.allow_home_workspace = true;
    sb_plan plan;
    if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
        fail_msg("workspace-write + write / does not compile: %s", err);
    assert_false(mount_at(&plan, "/")->rdonly);
    char run[PATH_MAX];
    assert_non_null(realpath("/var/run", run));
    const sb_mount *m = mount_at(&plan, run);
    assert_non_null(m);
    assert_int_equal(m->kind, SB_M_TMPFS); /* still masked */
    char p[600];
    snprintf(p, sizeof p, "%s/.ssh", home);
    assert_int_equal(mount_at(&plan, p)->kind, SB_M_TMPFS);
    sb_plan_free(&plan);
    /* A deny path the user gives still fails closed through a symlink the
     * sandbox could re-point (everything is writable now). */
    char link[600], denied[700];
    snprintf(link, sizeof link, "%s/to-other", root);
    assert_int_equal(symlink(other, link), 0);
    snprintf(denied, sizeof denied, "%s/secret", link);
    sb_profile_add(&prof, denied, SB_DENY);
    assert_int_equal(sb_plan_compile(&prof, &req, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, "crosses writable symlink"));
    assert_non_null(strstr(err, link));
    unlink(link);
    sb_profile_free(&prof);
}

/* Every launcher of the user finds the same placeholder registry, whatever
 * its environment says: one that kept its entries elsewhere would take
 * another's placeholder for the user's own and hold nothing, and the
 * other's end would remove it under its sandbox.  No sandbox sees the
 * registry: it is out of sight in the sandbox's own /dev, and masked when
 * a root brings the host's /dev/shm in. */
static void placeholder_registry_is_one_per_user(void **state)
{
    (void)state;
    const char *saved = getenv("XDG_RUNTIME_DIR");
    char *keep = saved ? strdup(saved) : NULL;
    setenv("XDG_RUNTIME_DIR", root, 1);
    char *home_a = sb_placeholder_home();
    unsetenv("XDG_RUNTIME_DIR");
    char *home_dir = sb_placeholder_home();
    if (keep)
        setenv("XDG_RUNTIME_DIR", keep, 1);
    free(keep);
    assert_string_equal(home_a, home_dir);
    char *a = sb_placeholder_registry(home_dir);
    struct stat st;
    char want[64];
    bool shm = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 01777) == 01777;
    snprintf(want, sizeof want, "%s/corral-%u/placeholders", shm ? "/dev/shm" : "/tmp", (unsigned)geteuid());
    assert_string_equal(a, want);
    assert_int_equal(stat(home_dir, &st), 0); /* made at once: the deny list finds it */
    assert_true(S_ISDIR(st.st_mode));
    free(a);
    free(home_a);

    sb_profile prof;
    char err[1024];
    sb_plan plan;
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_request req = request(NULL);
    if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
        fail_msg("workspace-write does not compile: %s", err);
    assert_string_equal(plan.placeholder_registry, want);
    if (shm)
        assert_null(mount_at(&plan, home_dir)); /* the sandbox's /dev is its own: nothing to mask */
    sb_plan_free(&plan);
    if (shm) {
        sb_profile_add(&prof, "/dev/shm", SB_WRITE);
        if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
            fail_msg("workspace-write + write /dev/shm does not compile: %s", err);
        const sb_mount *m = mount_at(&plan, home_dir);
        assert_non_null(m);
        assert_int_equal(m->kind, SB_M_TMPFS); /* masked: an empty directory nobody can read */
        assert_true(m->rdonly);
        sb_plan_free(&plan);
    }
    sb_profile_free(&prof);
    free(home_dir);
}

/* ---- git: what the user's git would run later -------------------------- */

/* mkdir -p of a formatted path. */
static void mkdirs(const char *path)
{
    char p[1100];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    }
    mkdir(p, 0755);
}

/* Write dir/rel (parents made). */
static void put(const char *dir, const char *rel, const char *content)
{
    char p[1100];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    mkdirs(p);
    *slash = '/';
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

/* A fresh workspace directory below the test root. */
static char *fresh_ws(const char *name)
{
    char *p = sb_printf("%s/%s", root, name);
    mkdirs(p);
    return p;
}

/* A git directory at dir/rel with HEAD, objects/, refs/, hooks/ and the
 * given config. */
static void make_gitdir(const char *dir, const char *rel, const char *config)
{
    char p[1100];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    put(p, "HEAD", "ref: refs/heads/main\n");
    put(p, "config", config);
    put(p, "hooks/pre-commit.sample", "#!/bin/sh\n");
    put(p, "objects/info/packs", "");
    put(p, "refs/heads/.keep", "");
}

static int compile_ws(const char *w, sb_plan *plan, char *err, size_t errlen)
{
    sb_profile prof;
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, errlen), 0);
    sb_request req = request(NULL);
    req.cwd = req.workspace = w;
    int rc = sb_plan_compile(&prof, &req, plan, err, errlen);
    sb_profile_free(&prof);
    return rc;
}

/* Is dir/rel mounted read-only (rdonly true) or writable in the plan? */
static bool mounted(const sb_plan *plan, const char *dir, const char *rel, bool rdonly)
{
    char p[1100];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    const sb_mount *m = mount_at(plan, p);
    return m && m->kind == SB_M_BIND && m->rdonly == rdonly;
}

/* The placeholder planned at dir/rel: "dir" for a directory, its content
 * for a file, NULL when there is none. */
static const char *placeholder(const sb_plan *plan, const char *dir, const char *rel)
{
    char p[1100];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    for (size_t i = 0; i < plan->n_placeholders; i++)
        if (strcmp(plan->placeholders[i].path, p) == 0)
            return plan->placeholders[i].content ? plan->placeholders[i].content : "dir";
    return NULL;
}

static void hooks_path_targets_are_protected(void **state)
{
    (void)state;
    /* core.hooksPath in the repository's config (.githooks, relative to
     * the top of the work tree), in the global config (.husky/_, missing:
     * the sandbox must not create it), absolute (tools/hooks). */
    char *w = fresh_ws("hp");
    char cfg[1200];
    snprintf(cfg, sizeof cfg, "[core]\n\thooksPath = .githooks\n[core]\n\thooksPath = %s/tools/hooks\n", w);
    make_gitdir(w, ".git", cfg);
    put(w, ".githooks/pre-commit", "#!/bin/sh\n");
    put(w, "tools/hooks/post-checkout", "#!/bin/sh\n");
    put(w, ".husky/pre-commit", "npm test\n");
    put(home, ".gitconfig", "[core]\n\thooksPath = .husky/_\n");
    sb_plan plan;
    char err[1024];
    assert_int_equal(compile_ws(w, &plan, err, sizeof err), 0);
    assert_true(mounted(&plan, w, ".githooks", true));
    assert_true(mounted(&plan, w, "tools/hooks", true));
    assert_true(mounted(&plan, w, "tools", false)); /* pinned: cannot be moved aside */
    const char *ph = placeholder(&plan, w, ".husky/_");
    assert_non_null(ph);
    assert_string_equal(ph, "dir");
    assert_true(mounted(&plan, w, ".husky/_", true));
    sb_plan_free(&plan);
    char gc[600];
    snprintf(gc, sizeof gc, "%s/.gitconfig", home);
    unlink(gc);
    free(w);
}

static void global_config_kept_in_the_workspace_is_protected(void **state)
{
    (void)state;
    /* A dotfiles repository as the workspace: ~/.gitconfig is a symlink
     * into it (outside the sandbox's reach, so not a hole by itself), and
     * the file it reaches, and what that includes, are read-only. */
    char *w = fresh_ws("dotfiles");
    make_gitdir(w, ".git", "[core]\n");
    char inc[1200];
    snprintf(inc, sizeof inc, "[include]\n\tpath = %s/git/local.gitconfig\n", w);
    put(w, "git/gitconfig", inc);
    put(w, "git/local.gitconfig", "[user]\n\tname = me\n");
    char target[1100], link[600];
    snprintf(target, sizeof target, "%s/git/gitconfig", w);
    snprintf(link, sizeof link, "%s/.gitconfig", home);
    assert_int_equal(symlink(target, link), 0);
    sb_plan plan;
    char err[1024];
    int rc = compile_ws(w, &plan, err, sizeof err);
    unlink(link);
    assert_int_equal(rc, 0);
    assert_true(mounted(&plan, w, "git/gitconfig", true));
    assert_true(mounted(&plan, w, "git/local.gitconfig", true));
    sb_plan_free(&plan);
    free(w);
}

static void hooks_path_of_the_workspace_itself_fails_closed(void **state)
{
    (void)state;
    /* core.hooksPath = . makes every file at the top a hook: it cannot be
     * read-only while the workspace is writable, so the plan says so. */
    char *w = fresh_ws("hpdot");
    make_gitdir(w, ".git", "[core]\n\thooksPath = .\n");
    sb_plan plan;
    char err[1024];
    assert_int_equal(compile_ws(w, &plan, err, sizeof err), -1);
    sb_plan_free(&plan);
    assert_non_null(strstr(err, "writable root"));
    assert_non_null(strstr(err, w));
    free(w);
}

static void config_includes_and_programs_are_protected(void **state)
{
    (void)state;
    char *w = fresh_ws("inc");
    make_gitdir(w, ".git",
                "[include]\n\tpath = ../shared.gitconfig\n"
                "[includeIf \"onbranch:main\"]\n\tpath = ../branch.gitconfig\n"
                "[core]\n\tfsmonitor = tools/fsmonitor.sh\n"
                "[alias]\n\tfmt = !sh -c 'x' && ./scripts/fmt.sh --all\n"
                "\tdoc = !make -C docs/ && tools/not-yet-there\n"
                "[diff \"x\"]\n\ttextconv = gen/bin/conv\n");
    put(w, "shared.gitconfig", "[include]\n\tpath = deeper/more.gitconfig\n");
    put(w, "deeper/more.gitconfig", "[diff]\n\texternal = tools/difftool\n");
    put(w, "tools/fsmonitor.sh", "#!/bin/sh\n");
    put(w, "tools/difftool", "#!/bin/sh\n");
    put(w, "scripts/fmt.sh", "#!/bin/sh\n");
    put(w, "docs/index.md", "docs\n");
    sb_plan plan;
    char err[1024];
    assert_int_equal(compile_ws(w, &plan, err, sizeof err), 0);
    assert_true(mounted(&plan, w, ".git/config", true));
    assert_true(mounted(&plan, w, "shared.gitconfig", true));
    assert_true(mounted(&plan, w, "deeper/more.gitconfig", true)); /* included by an included file */
    assert_true(mounted(&plan, w, "tools/fsmonitor.sh", true));
    assert_true(mounted(&plan, w, "tools/difftool", true));
    assert_true(mounted(&plan, w, "scripts/fmt.sh", true));
    /* The includeIf target does not exist: whatever its condition, the
     * sandbox must not be able to create it. */
    const char *ph = placeholder(&plan, w, "branch.gitconfig");
    assert_non_null(ph);
    assert_string_equal(ph, "");
    /* A program that is not there yet cannot be planted (an empty
     * read-only file in its place); a directory among a command's words is
     * an argument, not made read-only; a program whose directory is missing
     * too gets no placeholder directory (a build may make it): a warning. */
    ph = placeholder(&plan, w, "tools/not-yet-there");
    assert_non_null(ph);
    assert_string_equal(ph, "");
    assert_false(mounted(&plan, w, "docs", true));
    assert_null(placeholder(&plan, w, "gen"));
    sb_plan_free(&plan);
    free(w);
}

static void bad_config_fails_closed(void **state)
{
    (void)state;
    /* A config git would refuse: the plan names it (no guessing at what
     * it might include). */
    char *w = fresh_ws("badcfg");
    make_gitdir(w, ".git", "[core]\n\thooksPath = \"unterminated\n");
    sb_plan plan;
    char err[1024];
    assert_int_equal(compile_ws(w, &plan, err, sizeof err), -1);
    sb_plan_free(&plan);
    assert_non_null(strstr(err, ".git/config"));
    assert_non_null(strstr(err, "line 2"));
    free(w);
}

typedef struct cfgrec {
    char out[2048];
} cfgrec;

static int cfg_collect(void *u, const char *section, const char *sub, const char *key, const char *value)
{
    cfgrec *r = u;
    size_t n = strlen(r->out);
    snprintf(r->out + n, sizeof r->out - n, "%s|%s|%s=%s\n", section, sub ? sub : "-", key, value ? value : "(none)");
    return 0;
}

static void gitconfig_reads_like_git(void **state)
{
    (void)state;
    /* The same variables `git config -f F --list` shows (checked by hand
     * against git 2.39). */
    const char *text = "\xef\xbb\xbf# comment\n"
                       "top = before any section\n"
                       "[Core]\n"
                       "\thooksPath = \" .hooks \" ; trailing comment\n"
                       "\tBare\n"
                       "[includeIf \"gitdir:~/a b/\\\"q\\\"\"] path = x\\\n"
                       "y\n"
                       "[alias.Sub]\n"
                       "\tk = a\\tb \\\"c\\\" # c\n"
                       "[filter \"z\"]\r\n"
                       "\tclean = \"sh -c 'echo; x'\" #\n"
                       "[includeIf.X \"y\"] path = z\n[a.B.c]\nk=1\n"
                       "[.include]\n\tpath = nowhere\n"; /* git reads ".include.path": nothing */
    cfgrec r = {""};
    char err[256];
    assert_int_equal(sb_gitconfig_parse_text(text, strlen(text), "t", cfg_collect, &r, err, sizeof err), 0);
    assert_string_equal(r.out, "core|-|hookspath= .hooks \n"
                               "core|-|bare=(none)\n"
                               "includeif|gitdir:~/a b/\"q\"|path=xy\n"
                               "alias|sub|k=a\tb \"c\"\n"
                               "filter|z|clean=sh -c 'echo; x'\n"
                               "includeif|x.y|path=z\n"
                               "a|b.c|k=1\n");
    static const char *const bad[] = {
        "[core]\n\tx = \"open\n",   /* quote open at the end of the line */
        "[core]\n\tx = a\\q\n",     /* unknown escape */
        "[core\n",                  /* header not closed */
        "[core \"x]\n",             /* subsection not closed */
        "[core]\n\t1x = y\n",       /* a key starts with a letter */
        "[]\n",
        "[core]\n\tx\x0b= 1\n",     /* \v is not a blank to git */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r.out[0] = '\0';
        assert_int_equal(sb_gitconfig_parse_text(bad[i], strlen(bad[i]), "bad", cfg_collect, &r, err, sizeof err), -1);
        assert_non_null(strstr(err, "bad git config line"));
    }
    /* Booleans as `git config --bool` reads them (git 2.39). */
    static const char *const yes[] = {"true", "YES", "On", "1", "-1", "0x10", " 1", "1k", "2M", "1g"};
    static const char *const no[] = {"", "false", "no", "off", "0", "0k", "0x0"};
    assert_true(sb_gitconfig_bool(NULL));
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(sb_gitconfig_bool(yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(sb_gitconfig_bool(no[i]));
}

/* ---- index files ---- */

typedef struct ientry {
    unsigned mode;
    const char *path;
} ientry;

static size_t put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
    return 4;
}

/* An index of version 2, 3 or 4 holding entries (names sorted by the
 * caller), with object names of hash_len bytes. */
static unsigned char *make_index(int version, size_t hash_len, const ientry *e, size_t n, size_t *len)
{
    size_t cap = 64 + n * (80 + hash_len + 4096), off = 0;
    unsigned char *b = calloc(1, cap);
    memcpy(b, "DIRC", 4);
    off = 4;
    off += put_be32(b + off, (uint32_t)version);
    off += put_be32(b + off, (uint32_t)n);
    const char *prev = "";
    for (size_t i = 0; i < n; i++) {
        size_t start = off, plen = strlen(e[i].path);
        put_be32(b + off + 24, e[i].mode);
        off += 40 + hash_len;
        unsigned flags = plen < 0xfff ? (unsigned)plen : 0xfff;
        b[off++] = (unsigned char)(flags >> 8);
        b[off++] = (unsigned char)flags;
        if (version == 4) {
            size_t common = 0;
            while (prev[common] && prev[common] == e[i].path[common])
                common++;
            size_t strip = strlen(prev) - common;
            unsigned char v[16];
            int pos = 15;
            v[pos] = strip & 127;
            while (strip >>= 7)
                v[--pos] = (unsigned char)(128 | (--strip & 127));
            memcpy(b + off, v + pos, (size_t)(16 - pos));
            off += (size_t)(16 - pos);
            memcpy(b + off, e[i].path + common, plen - common + 1);
            off += plen - common + 1;
        } else {
            memcpy(b + off, e[i].path, plen);
            off = start + ((40 + hash_len + 2 + plen + 8) & ~(size_t)7);
        }
        prev = e[i].path;
    }
    off += hash_len; /* the checksum (not checked) */
    *len = off;
    return b;
}

typedef struct links {
    char out[1024];
    int n;
} links;

static int link_collect(void *u, const char *path)
{
    links *l = u;
    size_t n = strlen(l->out);
    snprintf(l->out + n, sizeof l->out - n, "%s;", path);
    l->n++;
    return 0;
}

static void gitindex_finds_gitlinks(void **state)
{
    (void)state;
    static const ientry es[] = {{0100644, "README"},
                                {0160000, "lib/sub"},
                                {0100644, "lib/subfile"},
                                {0160000, "lib/submodule-with-a-long-name"},
                                {0120000, "link"}};
    char shared[65], err[256];
    for (int version = 2; version <= 4; version++) {
        for (size_t h = 20; h <= 32; h += 12) {
            size_t len;
            unsigned char *idx = make_index(version, h, es, 5, &len);
            links l = {"", 0};
            assert_int_equal(sb_gitindex_parse(idx, len, h, link_collect, &l, shared, err, sizeof err), 0);
            assert_string_equal(l.out, "lib/sub;lib/submodule-with-a-long-name;");
            assert_string_equal(shared, "");
            /* Every truncation is refused or parsed, never read past. */
            for (size_t cut = 0; cut < len; cut++) {
                unsigned char *t = malloc(cut ? cut : 1);
                memcpy(t, idx, cut);
                l.out[0] = '\0';
                int rc = sb_gitindex_parse(t, cut, h, link_collect, &l, shared, err, sizeof err);
                assert_true(rc == 0 || rc == -1);
                free(t);
            }
            /* Random damage: no crash, no read outside (run under ASan). */
            srand(version * 100 + (int)h);
            for (int round = 0; round < 3000; round++) {
                unsigned char *t = malloc(len);
                memcpy(t, idx, len);
                for (int k = 0; k < 1 + rand() % 4; k++)
                    t[rand() % len] = (unsigned char)rand();
                l.out[0] = '\0';
                int rc = sb_gitindex_parse(t, len, h, link_collect, &l, shared, err, sizeof err);
                assert_true(rc == 0 || rc == -1);
                free(t);
            }
            free(idx);
        }
    }
    /* A gitlink path git itself would refuse makes the index unusable. */
    static const ientry evil[] = {{0160000, "a/../../outside"}};
    static const ientry dotgit[] = {{0160000, "sub/.GIT"}};
    size_t len;
    unsigned char *idx = make_index(2, 20, evil, 1, &len);
    links l = {"", 0};
    assert_int_equal(sb_gitindex_parse(idx, len, 20, link_collect, &l, shared, err, sizeof err), -1);
    free(idx);
    idx = make_index(2, 20, dotgit, 1, &len);
    assert_int_equal(sb_gitindex_parse(idx, len, 20, link_collect, &l, shared, err, sizeof err), -1);
    /* A count the file cannot hold is refused before any work. */
    put_be32(idx + 8, 0xffffffffu);
    assert_int_equal(sb_gitindex_parse(idx, len, 20, link_collect, &l, shared, err, sizeof err), -1);
    free(idx);
    /* An unknown required extension is refused, its signature (any four
     * bytes) shown so that the message stays one line. */
    idx = make_index(2, 20, es, 1, &len);
    memcpy(idx + len - 20, "\na\x01\\\0\0\0\0", 8);
    len += 8;
    assert_int_equal(sb_gitindex_parse(idx, len, 20, link_collect, &l, shared, err, sizeof err), -1);
    assert_non_null(strstr(err, "(\\x0aa\\x01\\x5c)"));
    assert_null(strchr(err, '\n'));
    free(idx);
}

static void write_file(const char *path, const unsigned char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static bool listed(const sb_dents *d, const char *name, unsigned char type)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->v[i].name, name) == 0)
            return d->v[i].type == type || d->v[i].type == DT_UNKNOWN;
    return false;
}

/* A directory's listing, remembered (kept at once here: settle 0), is the
 * directory's own: read twice unchanged it is the same, and an entry made
 * or removed once the clock has moved on is seen, whichever way the
 * directory is opened again. */
static void directory_listings_follow_their_directory(void **state)
{
    (void)state;
    sb_settle_ns(0);
    char *w = fresh_ws("dents");
    char p[1100], probe[1100];
    snprintf(p, sizeof p, "%s/d", w);
    snprintf(probe, sizeof probe, "%s/clock", w);
    assert_int_equal(mkdir(p, 0755), 0);
    put(w, "d/file", "x");
    snprintf(probe, sizeof probe, "%s/d/sub", w);
    assert_int_equal(mkdir(probe, 0755), 0);
    for (int round = 0; round < 2; round++) {
        int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        sb_dents d;
        assert_int_equal(sb_dents_read(fd, &d), 0);
        close(fd);
        assert_int_equal(d.n, 2);
        assert_true(listed(&d, "file", DT_REG) && listed(&d, "sub", DT_DIR));
        sb_dents_free(&d);
    }
    /* Wait for the file system's clock to move past the listing's times
     * (a change in the same tick keeps them; that is why a listing is
     * kept only once its directory has settled). */
    struct stat before, now;
    assert_int_equal(stat(p, &before), 0);
    snprintf(probe, sizeof probe, "%s/clock", w);
    do {
        put(w, "clock", "t");
        assert_int_equal(stat(probe, &now), 0);
    } while (now.st_ctim.tv_sec == before.st_ctim.tv_sec && now.st_ctim.tv_nsec == before.st_ctim.tv_nsec);
    put(w, "d/new", "y");
    snprintf(probe, sizeof probe, "%s/d/sub", w);
    assert_int_equal(rmdir(probe), 0);
    int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    sb_dents d;
    assert_int_equal(sb_dents_read(fd, &d), 0);
    close(fd);
    assert_int_equal(d.n, 2);
    assert_true(listed(&d, "file", DT_REG) && listed(&d, "new", DT_REG) && !listed(&d, "sub", DT_DIR));
    sb_dents_free(&d);
    sb_settle_ns(2ll * 1000000000);
    free(w);
}

static int stop_at_first(void *u, const char *path)
{
    (void)u;
    (void)path;
    return 7;
}

/* An index file's parse is remembered while the file stays the same
 * (device, inode, size, mtime, ctime): rewritten in place with a gitlink of
 * the same length (the same size), within the same second, it is read
 * again; replaced by another file, too.  (Remembered at once here: a real
 * server keeps only files settled two seconds.)  A callback's stop is kept on a
 * remembered parse. */
static void gitindex_file_is_read_again_when_it_changes(void **state)
{
    (void)state;
    char *w = fresh_ws("memo");
    char p[1100], np[1100], err[256];
    snprintf(p, sizeof p, "%s/index", w);
    snprintf(np, sizeof np, "%s/index.new", w);
    static const ientry one[] = {{0160000, "lib/aaa"}}, two[] = {{0160000, "lib/bbb"}}, three[] = {{0160000, "c"}};
    sb_settle_ns(0); /* remembered at once, so that the memo is what is tested */
    size_t len;
    unsigned char *idx = make_index(2, 20, one, 1, &len);
    write_file(p, idx, len);
    free(idx);
    links l = {"", 0};
    assert_int_equal(sb_gitindex_gitlinks(p, 20, link_collect, &l, err, sizeof err), 0);
    assert_string_equal(l.out, "lib/aaa;");
    l.out[0] = '\0';
    assert_int_equal(sb_gitindex_gitlinks(p, 20, link_collect, &l, err, sizeof err), 0);
    assert_string_equal(l.out, "lib/aaa;"); /* remembered, the same */
    assert_int_equal(sb_gitindex_gitlinks(p, 20, stop_at_first, NULL, err, sizeof err), 7);
    /* The file system's clock moves on first (a write in the same tick
     * would keep the times: why only settled files are remembered). */
    struct stat was, now;
    char probe[1100];
    snprintf(probe, sizeof probe, "%s/clock", w);
    assert_int_equal(stat(p, &was), 0);
    do {
        write_file(probe, (const unsigned char *)"t", 1);
        assert_int_equal(stat(probe, &now), 0);
    } while (now.st_ctim.tv_sec == was.st_ctim.tv_sec && now.st_ctim.tv_nsec == was.st_ctim.tv_nsec);
    idx = make_index(2, 20, two, 1, &len);
    write_file(p, idx, len); /* in place: the same inode and size */
    free(idx);
    l.out[0] = '\0';
    assert_int_equal(sb_gitindex_gitlinks(p, 20, link_collect, &l, err, sizeof err), 0);
    assert_string_equal(l.out, "lib/bbb;");
    idx = make_index(2, 20, three, 1, &len);
    write_file(np, idx, len);
    free(idx);
    assert_int_equal(rename(np, p), 0); /* as git writes it: a new file */
    l.out[0] = '\0';
    assert_int_equal(sb_gitindex_gitlinks(p, 20, link_collect, &l, err, sizeof err), 0);
    assert_string_equal(l.out, "c;");
    assert_int_equal(unlink(p), 0);
    l.out[0] = '\0';
    assert_int_equal(sb_gitindex_gitlinks(p, 20, link_collect, &l, err, sizeof err), 0); /* none: none */
    assert_string_equal(l.out, "");
    /* As the server runs: a fresh file is not remembered, so a rewrite in
     * the same clock tick (the same times) is still read. */
    sb_settle_ns(2ll * 1000000000);
    idx = make_index(2, 20, one, 1, &len);
    write_file(p, idx, len);
    free(idx);
    l.out[0] = '\0';
    assert_int_equal(sb_gitindex_gitlinks(p, 20, link_collect, &l, err, sizeof err), 0);
    assert_string_equal(l.out, "lib/aaa;");
    idx = make_index(2, 20, two, 1, &len);
    write_file(p, idx, len);
    free(idx);
    l.out[0] = '\0';
    assert_int_equal(sb_gitindex_gitlinks(p, 20, link_collect, &l, err, sizeof err), 0);
    assert_string_equal(l.out, "lib/bbb;");
    free(w);
}

/* What sb_gitscan reported, as "w:path;" and "g:path;" relative to base. */
typedef struct found {
    const char *base;
    char out[4096];
} found;

static int found_worktree(void *u, const char *path)
{
    found *f = u;
    size_t n = strlen(f->out);
    snprintf(f->out + n, sizeof f->out - n, "w:%s;", path + strlen(f->base));
    return 0;
}

static int found_gitdir(void *u, const char *path)
{
    found *f = u;
    size_t n = strlen(f->out);
    snprintf(f->out + n, sizeof f->out - n, "g:%s;", path + strlen(f->base));
    return 0;
}

/* The scan of dir, depth 3, as the nested-repository search makes it. */
static const char *scan_of(const char *dir, found *f)
{
    char err[512] = "";
    size_t budget = 1000;
    sb_gitscan_cb cb = {.user = f, .worktree = found_worktree, .gitdir = found_gitdir};
    f->base = dir;
    f->out[0] = '\0';
    int rc = sb_gitscan(dir, 3, &budget, NULL, &cb, err, sizeof err);
    if (rc != 0)
        fail_msg("scan of %s: %d %s", dir, rc, err);
    return f->out;
}

/* got holds exactly the items of want ("w:/x;g:/y;"), in any order (the
 * scan's order is the file system's). */
static void same_items(const char *got, const char *want)
{
    size_t n_got = 0, n_want = 0;
    for (const char *p = got; *p; p++)
        n_got += *p == ';';
    char *copy = sb_strdup(want), *save = NULL;
    for (char *it = strtok_r(copy, ";", &save); it; it = strtok_r(NULL, ";", &save)) {
        n_want++;
        char item[600];
        snprintf(item, sizeof item, "%s;", it);
        if (!strstr(got, item))
            fail_msg("%s missing from the scan's %s", item, got);
    }
    free(copy);
    if (n_got != n_want)
        fail_msg("the scan found %s, not %s", got, want);
}

static void shell(const char *fmt, const char *dir)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, fmt, dir, dir, dir, dir);
    assert_int_equal(system(cmd), 0);
}

/* Hostile: with listings kept while their directories are watched (the
 * server), every change a sandboxed command can make between two compiles
 * is seen by the next scan: a .git made in a listed directory and in a
 * last-level one, a git directory made entry by entry, a tree renamed away
 * and another put at its path, the search root itself swapped for another
 * directory, a directory swapped for a symlink; and the listings still
 * answer as a fresh scan does afterwards.  Runs last: it turns the watch
 * on for the process. */
static void watched_listings_see_every_change(void **state)
{
    (void)state;
    sb_plan_keep_listings();
    char *dir = fresh_ws("watched");
    found f;
    shell("mkdir -p %s/a/b/c %s/d/e", dir);
    assert_string_equal(scan_of(dir, &f), "");
    assert_string_equal(scan_of(dir, &f), ""); /* kept, the same */
    shell("mkdir %s/d/e/.git", dir); /* in a listed directory (depth 2) */
    assert_string_equal(scan_of(dir, &f), "w:/d/e;");
    shell("touch %s/a/b/c/.git", dir); /* in a last-level one (depth 3) */
    same_items(scan_of(dir, &f), "w:/a/b/c;w:/d/e;");
    shell("rm %s/a/b/c/.git && mkdir %s/a/b/c/refs && touch %s/a/b/c/HEAD", dir);
    assert_string_equal(scan_of(dir, &f), "w:/d/e;");
    /* objects as a symlink to nothing yet: a git directory already (what
     * it points to could appear where no watch looks). */
    shell("ln -s /nonexistent-corral-objects %s/a/b/c/objects", dir);
    same_items(scan_of(dir, &f), "g:/a/b/c;w:/d/e;");
    /* A tree renamed away, and another made at its path: the old listings
     * do not answer for the new directories. */
    shell("mv %s/a %s/z && mkdir -p %s/a/b/n && mkdir %s/a/b/n/.git", dir);
    same_items(scan_of(dir, &f), "w:/a/b/n;g:/z/b/c;w:/d/e;");
    /* A directory swapped for a symlink to a repository elsewhere: not
     * followed, so not there. */
    shell("rm -rf %s/d && mkdir -p %s.elsewhere/e/.git && ln -s %s.elsewhere %s/d", dir);
    same_items(scan_of(dir, &f), "w:/a/b/n;g:/z/b/c;");
    /* The root itself swapped: its path now names a directory never
     * listed, whose repository is found. */
    shell("mv %s %s.old && mkdir -p %s/q/.git", dir);
    assert_string_equal(scan_of(dir, &f), "w:/q;");
    char *old = sb_printf("%s.old", dir);
    same_items(scan_of(old, &f), "w:/a/b/n;g:/z/b/c;");
    /* Removed and made again in one go: still seen. */
    shell("rm -rf %s/q && mkdir -p %s/q/r && touch %s/q/r/.git", dir);
    assert_string_equal(scan_of(dir, &f), "w:/q/r;");
    free(old);
    free(dir);
    /* The way to the root changed above it (a parent renamed, another
     * made at its path), where no watch looks: the root is checked. */
    char *parent = fresh_ws("watched-parent");
    dir = sb_printf("%s/inner", parent);
    mkdirs(dir);
    assert_string_equal(scan_of(dir, &f), "");
    shell("mv %s %s.old && mkdir -p %s/inner/q/.git", parent);
    assert_string_equal(scan_of(dir, &f), "w:/q;");
    free(dir);
    free(parent);
}

static void gitlinks_beyond_the_scan_are_protected(void **state)
{
    (void)state;
    /* A repository five levels down is past the nested-repository search,
     * but a gitlink in the index makes the user's `git status` run git
     * (and its core.fsmonitor) there. */
    char *w = fresh_ws("gl");
    make_gitdir(w, ".git", "[core]\n\tbare = false\n");
    make_gitdir(w, "a/b/c/d/deep/.git", "[core]\n");
    static const ientry es[] = {{0160000, "a/b/c/d/deep"}};
    size_t len;
    unsigned char *idx = make_index(4, 20, es, 1, &len);
    char p[1100];
    snprintf(p, sizeof p, "%s/.git/index", w);
    write_file(p, idx, len);
    free(idx);
    sb_plan plan;
    char err[1024];
    assert_int_equal(compile_ws(w, &plan, err, sizeof err), 0);
    assert_true(mounted(&plan, w, "a/b/c/d/deep/.git/config", true));
    assert_true(mounted(&plan, w, "a/b/c/d/deep/.git/hooks", true));
    assert_true(mounted(&plan, w, "a/b/c/d/deep", false)); /* pinned down to it */
    assert_true(mounted(&plan, w, "a/b", false));
    sb_plan_free(&plan);
    /* An index that cannot be read: every repository below is found. */
    write_file(p, (const unsigned char *)"DIRC\0\0\0\x02garbage-garbage-garbage", 31);
    assert_int_equal(compile_ws(w, &plan, err, sizeof err), 0);
    assert_true(mounted(&plan, w, "a/b/c/d/deep/.git/config", true));
    sb_plan_free(&plan);
    free(w);
}

static void worktrees_and_modules_are_read_only(void **state)
{
    (void)state;
    char *w = fresh_ws("wtm");
    make_gitdir(w, ".git", "[core]\n");
    put(w, ".git/worktrees/feature/HEAD", "ref: refs/heads/feature\n");
    put(w, ".git/worktrees/feature/commondir", "../..\n");
    put(w, ".git/worktrees/feature/gitdir", "/elsewhere/feature/.git\n");
    make_gitdir(w, ".git/modules/lib", "[core]\n\tworktree = ../../../lib\n");
    sb_plan plan;
    char err[1024];
    assert_int_equal(compile_ws(w, &plan, err, sizeof err), 0);
    /* No new linked worktree or submodule git directory can be planted;
     * the existing ones keep working, their pointers read-only. */
    assert_true(mounted(&plan, w, ".git/worktrees", true));
    assert_true(mounted(&plan, w, ".git/worktrees/feature", false));
    assert_true(mounted(&plan, w, ".git/worktrees/feature/commondir", true));
    assert_true(mounted(&plan, w, ".git/worktrees/feature/gitdir", true));
    assert_true(mounted(&plan, w, ".git/modules", true));
    assert_true(mounted(&plan, w, ".git/modules/lib", false));
    assert_true(mounted(&plan, w, ".git/modules/lib/hooks", true));
    assert_true(mounted(&plan, w, ".git/modules/lib/config", true));
    assert_null(placeholder(&plan, w, ".git/worktrees/feature/hooks")); /* unused by git: no clutter */
    sb_plan_free(&plan);
    free(w);
}

static void bare_repositories_are_protected(void **state)
{
    (void)state;
    char *w = fresh_ws("bare");
    make_gitdir(w, "remotes/proj.git", "[core]\n\tbare = true\n");
    sb_plan plan;
    char err[1024];
    assert_int_equal(compile_ws(w, &plan, err, sizeof err), 0);
    assert_true(mounted(&plan, w, "remotes/proj.git/hooks", true)); /* a push into it runs them */
    assert_true(mounted(&plan, w, "remotes/proj.git/config", true));
    assert_true(mounted(&plan, w, "remotes/proj.git", false));
    sb_plan_free(&plan);
    free(w);
}

static void scan_budget_fails_closed(void **state)
{
    (void)state;
    /* More directories than the search may look at: the plan fails,
     * naming the workspace, the limit and how to raise it, instead of
     * leaving a repository past them unprotected. */
    char *w = fresh_ws("wide");
    for (int i = 0; i < 40; i++) {
        char rel[32];
        snprintf(rel, sizeof rel, "d%02d/x", i);
        put(w, rel, "");
    }
    make_gitdir(w, "zz/.git", "[core]\n");
    setenv("CORRAL_GIT_SCAN_DIRS", "30", 1);
    sb_plan plan;
    char err[1024];
    int rc = compile_ws(w, &plan, err, sizeof err);
    unsetenv("CORRAL_GIT_SCAN_DIRS");
    assert_int_equal(rc, -1);
    sb_plan_free(&plan);
    assert_non_null(strstr(err, w));
    assert_non_null(strstr(err, "more than 30 directories"));
    assert_non_null(strstr(err, "CORRAL_GIT_SCAN_DIRS="));
    /* With room enough it compiles and protects the repository. */
    assert_int_equal(compile_ws(w, &plan, err, sizeof err), 0);
    assert_true(mounted(&plan, w, "zz/.git/config", true));
    sb_plan_free(&plan);
    free(w);
}

/* Compile w where permission checks bind (root without the capabilities
 * that bypass them, in a child); 0 when the plan failed naming p and the
 * fix, else why not. */
static int compile_unreadable(const char *w, const char *p)
{
    if (geteuid() == 0) {
        struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct data[2];
        if (syscall(SYS_capget, &hdr, data) < 0)
            return 10;
        for (int i = 0; i < 2; i++)
            data[i].effective &= ~(1u << CAP_DAC_OVERRIDE | 1u << CAP_DAC_READ_SEARCH);
        if (syscall(SYS_capset, &hdr, data) < 0)
            return 11;
    }
    sb_profile prof;
    char err[1024];
    if (sb_profile_builtin(&prof, "workspace-write", err, sizeof err) < 0)
        return 12;
    sb_request req = request(NULL);
    req.cwd = req.workspace = w;
    sb_plan plan;
    int rc = sb_plan_compile(&prof, &req, &plan, err, sizeof err);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
    if (rc != -1)
        return 1;
    return strstr(err, p) && strstr(err, "chmod u+rx") ? 0 : 2;
}

static void unreadable_directory_fails_closed(void **state)
{
    (void)state;
    /* A directory the search cannot list but the sandbox can enter (and
     * could make readable again): a repository could hide there. */
    char *w = fresh_ws("hidden");
    make_gitdir(w, "vendor/lib/.git", "[core]\n");
    char p[1100];
    snprintf(p, sizeof p, "%s/vendor", w);
    chmod(p, 0111); /* enterable, not listable */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(compile_unreadable(w, p));
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    chmod(p, 0755);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    free(w);
}

/* ---- symlinks ---- */

typedef struct recsink {
    char log[8192];
    const char *wroot;
} recsink;

static void rec(recsink *r, const char *kind, const char *path)
{
    size_t n = strlen(r->log);
    snprintf(r->log + n, sizeof r->log - n, "%s %s\n", kind, path);
}

static void rec_pin(void *u, const char *dir, const char *why)
{
    (void)why;
    rec(u, "pin", dir);
}

static void rec_ro(void *u, const char *path, bool is_dir, const char *why)
{
    (void)why;
    (void)is_dir;
    rec(u, "ro", path);
}

static void rec_ph(void *u, const char *path, const char *content, const char *why)
{
    (void)why;
    (void)content;
    rec(u, "placeholder", path);
}

static bool rec_writable(void *u, const char *path)
{
    recsink *r = u;
    return sb_path_under(path, r->wroot);
}

static void rec_link(void *u, const char *link, const char *why)
{
    (void)why;
    rec(u, "link", link);
}

static void rec_warn(void *u, const char *msg)
{
    rec(u, "warn", msg);
}

static bool logged(const recsink *r, const char *kind, const char *dir, const char *rel)
{
    char line[1200];
    snprintf(line, sizeof line, "%s %s/%s\n", kind, dir, rel);
    return strstr(r->log, line) != NULL;
}

static void planted_nested_git_symlink_keeps_sandboxing(void **state)
{
    (void)state;
    /* A sandboxed command can make sub/.git a symlink to a git directory
     * it made: the next sandbox still starts (a planted link must not
     * stop them), protects what the link points to now, and says so. */
    char *w = fresh_ws("plant");
    make_gitdir(w, "evil", "[core]\n");
    put(w, "sub/README", "sub\n");
    char link[1100];
    snprintf(link, sizeof link, "%s/sub/.git", w);
    assert_int_equal(symlink("../evil", link), 0);
    sb_plan plan;
    char err[1024];
    assert_int_equal(compile_ws(w, &plan, err, sizeof err), 0);
    assert_true(mounted(&plan, w, "evil/hooks", true));
    assert_true(mounted(&plan, w, "evil/config", true));
    sb_plan_free(&plan);

    recsink r = {"", w};
    sb_protect_sink sink = {.user = &r, .pin = rec_pin, .readonly = rec_ro, .placeholder = rec_ph,
                            .writable = rec_writable, .warn = rec_warn};
    assert_int_equal(sb_protect_repos(w, &sink, err, sizeof err), 0);
    assert_true(logged(&r, "ro", w, "evil/hooks"));
    char warn[1200];
    snprintf(warn, sizeof warn, "warn %s is a symlink", link);
    assert_non_null(strstr(r.log, warn));
    /* A sink that can pin symlinks: pinned, and since it leads into the
     * writable root (a sandbox could have made both), still a warning. */
    r.log[0] = '\0';
    sink.pin_link = rec_link;
    assert_int_equal(sb_protect_repos(w, &sink, err, sizeof err), 0);
    assert_true(logged(&r, "link", w, "sub/.git"));
    assert_non_null(strstr(r.log, warn));
    free(w);
}

static void top_git_symlink_names_a_fix_that_keeps_the_sandbox(void **state)
{
    (void)state;
    /* The workspace's own .git as a symlink: a sink that cannot pin
     * symlinks refuses, with the fix (a .git file, which is protected),
     * never "turn the sandbox off"; the plan's sink pins it and the
     * sandbox starts. */
    char *w = fresh_ws("toplink");
    make_gitdir(w, "real", "[core]\n");
    char link[1100];
    snprintf(link, sizeof link, "%s/.git", w);
    assert_int_equal(symlink("real", link), 0);
    char err[1024];
    recsink r0 = {"", w};
    sb_protect_sink plain = {.user = &r0, .pin = rec_pin, .readonly = rec_ro, .placeholder = rec_ph,
                             .writable = rec_writable, .warn = rec_warn};
    assert_int_equal(sb_protect_repos(w, &plain, err, sizeof err), -1);
    assert_non_null(strstr(err, link));
    assert_non_null(strstr(err, "gitdir: "));
    assert_null(strstr(err, "--profile full"));
    sb_plan plan;
    assert_int_equal(compile_ws(w, &plan, err, sizeof err), 0);
    assert_true(mounted(&plan, w, "real/hooks", true));
    sb_plan_free(&plan);
    recsink r = {"", w};
    sb_protect_sink sink = {.user = &r, .pin = rec_pin, .readonly = rec_ro, .placeholder = rec_ph,
                            .writable = rec_writable, .pin_link = rec_link, .warn = rec_warn};
    assert_int_equal(sb_protect_repos(w, &sink, err, sizeof err), 0);
    assert_true(logged(&r, "link", w, ".git"));
    assert_true(logged(&r, "ro", w, "real/hooks"));
    assert_true(logged(&r, "ro", w, "real/config"));
    free(w);
}

static void pins_never_reopen_protected_names(void **state)
{
    (void)state;
    /* A repository inside .codex: pinning the way down to it must not make
     * .codex (read-only: agents read it) writable again. */
    char *w = fresh_ws("codexrepo");
    make_gitdir(w, ".codex/skills/.git", "[core]\n");
    put(w, ".codex/config.toml", "model = \"x\"\n");
    sb_plan plan;
    char err[1024];
    assert_int_equal(compile_ws(w, &plan, err, sizeof err), 0);
    assert_true(mounted(&plan, w, ".codex", true));
    char p[1100];
    snprintf(p, sizeof p, "%s/.codex/skills", w);
    assert_null(mount_at(&plan, p));
    sb_plan_free(&plan);
    free(w);
}

static void enclosing_repository_is_read_too(void **state)
{
    (void)state;
    /* The workspace is a directory of a bigger repository whose
     * core.hooksPath lies inside the workspace: git run in the workspace
     * (or above it) runs those hooks. */
    char *outer = fresh_ws("outer");
    make_gitdir(outer, ".git", "[core]\n\thooksPath = ws/hooks\n");
    put(outer, "ws/hooks/pre-commit", "#!/bin/sh\n");
    char *w = sb_printf("%s/ws", outer);
    free(outer);
    sb_plan plan;
    char err[1024];
    assert_int_equal(compile_ws(w, &plan, err, sizeof err), 0);
    assert_true(mounted(&plan, w, "hooks", true));
    sb_plan_free(&plan);
    free(w);
}

/* A repository inside a directory the user made read-only (--read) or
 * hid (--deny) inside the workspace: nothing is pinned writable there, and
 * the sandbox still starts. */
static void read_and_deny_entries_are_not_writable_for_git(void **state)
{
    (void)state;
    char *w = fresh_ws("rodocs");
    make_gitdir(w, "docs/.git", "[core]\n");
    make_gitdir(w, "secrets/.git", "[core]\n");
    char docs[1100], secrets[1100], err[1024];
    snprintf(docs, sizeof docs, "%s/docs", w);
    snprintf(secrets, sizeof secrets, "%s/secrets", w);
    sb_profile prof;
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_add(&prof, docs, SB_READ);
    sb_profile_add(&prof, secrets, SB_DENY);
    sb_request req = request(NULL);
    req.cwd = req.workspace = w;
    sb_plan plan;
    if (sb_plan_compile(&prof, &req, &plan, err, sizeof err) < 0)
        fail_msg("a repository under --deny must not stop the sandbox: %s", err);
    assert_true(mounted(&plan, w, "docs", true));
    for (size_t i = 0; i < plan.n_mounts; i++)
        if (sb_path_under(plan.mounts[i].dst, docs) && !plan.mounts[i].rdonly)
            fail_msg("%s is writable under a read-only --read entry", plan.mounts[i].dst);
    sb_plan_free(&plan);
    sb_profile_free(&prof);
    free(w);
}

/* Is dir/rel pinned: bound onto itself, writable (a mount point cannot be
 * renamed away)? */
static bool pinned(const sb_plan *plan, const char *dir, const char *rel)
{
    return mounted(plan, dir, rel, false);
}

static bool warned(const sb_plan *plan, const char *what)
{
    for (size_t i = 0; i < plan->n_warnings; i++)
        if (strstr(plan->warnings[i], what))
            return true;
    return false;
}

static void agent_configuration_is_read_only_at_any_depth(void **state)
{
    (void)state;
    /* Claude Code and Gemini CLI load their settings where they start,
     * Codex every .codex from the repository's top down to there: a
     * configuration below the top is as good as one at it. */
    char *w = fresh_ws("agentcfg");
    put(w, "sub/.codex/config.toml", "notify = [\"sh\", \"-c\", \"x\"]\n");
    put(w, "a/b/.claude/settings.json", "{}\n");
    put(w, "pkg/.mcp.json", "{}\n");
    put(w, "pkg/.gemini/settings.json", "{}\n");
    put(w, "pkg/.agents/skills/s/SKILL.md", "x\n");
    put(w, "app/.vscode/tasks.json", "{}\n");
    put(w, "app/.vscode/settings.json", "{}\n");
    put(w, ".mcp.json", "{}\n");
    put(w, "deep/a/b/c/.claude/settings.json", "{}\n");
    sb_plan plan;
    char err[1024];
    if (compile_ws(w, &plan, err, sizeof err) < 0)
        fail_msg("%s", err);
    static const char *const ro[] = {"sub/.codex", "a/b/.claude", "pkg/.mcp.json", "pkg/.gemini", "pkg/.agents",
                                     "app/.vscode/tasks.json", ".mcp.json", NULL};
    for (const char *const *r = ro; *r; r++)
        if (!mounted(&plan, w, *r, true))
            fail_msg("%s/%s is not read-only", w, *r);
    /* The directories holding them are pinned: renaming sub away and
     * making a new sub/.codex must fail. */
    static const char *const pins[] = {"sub", "a", "a/b", "pkg", "app", "app/.vscode", NULL};
    for (const char *const *r = pins; *r; r++)
        if (!pinned(&plan, w, *r))
            fail_msg("%s/%s is not pinned", w, *r);
    /* The rest of .vscode stays the session's to edit; so does what is
     * deeper than the search goes (marked in the command's record). */
    char p[1100];
    snprintf(p, sizeof p, "%s/app/.vscode/settings.json", w);
    assert_null(mount_at(&plan, p));
    snprintf(p, sizeof p, "%s/deep/a/b/c/.claude", w);
    assert_null(mount_at(&plan, p));
    /* Missing directories at the top are held by empty placeholders; a
     * missing file is not (git would see it). */
    assert_string_equal(placeholder(&plan, w, ".claude"), "dir");
    assert_string_equal(placeholder(&plan, w, ".gemini"), "dir");
    assert_null(placeholder(&plan, w, "sub/.claude"));
    assert_null(placeholder(&plan, w, ".vscode/tasks.json"));
    sb_plan_free(&plan);
    free(w);
}

static void planted_agent_symlinks_are_pinned_and_followed(void **state)
{
    (void)state;
    /* A command made sub/.claude a symlink to a directory it can write,
     * and .mcp.json at the top one to a file: the next sandbox still
     * starts, with the links pinned and what they reach read-only, and
     * says so.  A .vscode symlink is followed to its tasks.json. */
    char *w = fresh_ws("agentlink");
    put(w, "cfg/settings.json", "{}\n");
    put(w, "mcp/servers.json", "{}\n");
    put(w, "tasks/tasks.json", "{}\n");
    char p[1100];
    snprintf(p, sizeof p, "%s/sub", w);
    mkdirs(p);
    snprintf(p, sizeof p, "%s/sub/.claude", w);
    assert_int_equal(symlink("../cfg", p), 0);
    snprintf(p, sizeof p, "%s/.mcp.json", w);
    assert_int_equal(symlink("mcp/servers.json", p), 0);
    snprintf(p, sizeof p, "%s/.vscode", w);
    assert_int_equal(symlink("tasks", p), 0);
    /* One pointing to nothing yet: a placeholder where it points. */
    snprintf(p, sizeof p, "%s/sub/.gemini", w);
    assert_int_equal(symlink("../later", p), 0);
    sb_plan plan;
    char err[1024];
    if (compile_ws(w, &plan, err, sizeof err) < 0)
        fail_msg("a planted symlink must not stop the sandbox: %s", err);
    snprintf(p, sizeof p, "%s/sub/.claude", w);
    assert_non_null(mount_at(&plan, p));
    assert_true(mount_at(&plan, p)->link);
    assert_true(mounted(&plan, w, "cfg", true));
    assert_true(mounted(&plan, w, "mcp/servers.json", true));
    assert_true(mounted(&plan, w, "tasks/tasks.json", true));
    assert_true(pinned(&plan, w, "sub"));
    assert_string_equal(placeholder(&plan, w, "later"), "dir");
    assert_true(warned(&plan, "sub/.claude is a symlink to"));
    assert_true(warned(&plan, "sub/.gemini is a symlink to"));
    sb_plan_free(&plan);
    free(w);
}

static void nothing_pinned_writable_inside_agent_configuration(void **state)
{
    (void)state;
    /* A repository inside a nested .claude: the git protection pins its
     * way, which must not reopen the read-only .claude around it. */
    char *w = fresh_ws("claudegit");
    make_gitdir(w, "sub/.claude/skills/x/.git", "[core]\n");
    put(w, "sub/.claude/settings.json", "{}\n");
    sb_plan plan;
    char err[1024];
    if (compile_ws(w, &plan, err, sizeof err) < 0)
        fail_msg("%s", err);
    assert_true(mounted(&plan, w, "sub/.claude", true));
    char inside[1100];
    snprintf(inside, sizeof inside, "%s/sub/.claude", w);
    for (size_t i = 0; i < plan.n_mounts; i++)
        if (sb_path_under(plan.mounts[i].dst, inside) && !plan.mounts[i].rdonly)
            fail_msg("%s is writable inside the read-only .claude", plan.mounts[i].dst);
    sb_plan_free(&plan);
    free(w);
}

static void agent_search_fails_closed(void **state)
{
    (void)state;
    /* A bare repository's insides are no place git searches, but agent
     * configuration could sit there too: when the agent search runs out
     * of directories, the plan fails like the git one, naming the limit. */
    char *w = fresh_ws("barewide");
    make_gitdir(w, "proj.git", "[core]\n\tbare = true\n");
    for (int i = 0; i < 8; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "proj.git/d%d/x", i);
        put(w, rel, "");
    }
    setenv("CORRAL_GIT_SCAN_DIRS", "6", 1);
    sb_plan plan;
    char err[1024];
    int rc = compile_ws(w, &plan, err, sizeof err);
    unsetenv("CORRAL_GIT_SCAN_DIRS");
    assert_int_equal(rc, -1);
    sb_plan_free(&plan);
    assert_non_null(strstr(err, "agent configuration"));
    assert_non_null(strstr(err, "more than 6 directories"));
    assert_non_null(strstr(err, "CORRAL_GIT_SCAN_DIRS="));
    free(w);
}

/* ---- the compile's lstat memo ---- */

/* lstat() as the code under test calls it (this definition, in the test
 * program, is the one the sandbox library's calls reach), counted for one
 * path: what a compile asked of the host. */
static const char *lstat_watched;
static int lstat_calls;

int lstat(const char *restrict path, struct stat *restrict st)
{
    if (lstat_watched && strcmp(path, lstat_watched) == 0)
        lstat_calls++;
    return fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

static void statmemo_keeps_each_answer_until_forgotten(void **state)
{
    (void)state;
    char *dir = sb_printf("%s/memo-dir", root);
    sb_statmemo m = {0};
    struct stat st;
    errno = 0;
    assert_int_equal(sb_statmemo_lstat(&m, dir, &st), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(mkdir(dir, 0755), 0);
    /* The first answer stands, a failure's errno with it: one memo is one
     * moment of the host. */
    errno = 0;
    assert_int_equal(sb_statmemo_lstat(&m, dir, &st), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(sb_statmemo_lstat(NULL, dir, &st), 0); /* no memo: the host */
    /* What a step changes itself it forgets, and the host answers again. */
    sb_statmemo_forget(&m, dir);
    assert_int_equal(sb_statmemo_lstat(&m, dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    /* Thousands of paths (a workspace of nested repositories): the table
     * grows and every answer is still its own path's. */
    for (int i = 0; i < 3000; i++) {
        char p[64];
        snprintf(p, sizeof p, "/nonexistent-corral-memo/%d", i);
        assert_int_equal(sb_statmemo_lstat(&m, p, &st), -1);
    }
    assert_int_equal(sb_statmemo_lstat(&m, dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(sb_statmemo_lstat(&m, "/", &st), 0);
    /* A relative path depends on the working directory: never kept. */
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(root), 0);
    assert_int_equal(sb_statmemo_lstat(&m, "memo-rel", &st), -1);
    assert_int_equal(mkdir("memo-rel", 0755), 0);
    assert_int_equal(sb_statmemo_lstat(&m, "memo-rel", &st), 0);
    assert_int_equal(chdir(cwd), 0);
    sb_statmemo_free(&m);
    free(dir);
}

/* The whole plan as text: what --print-plan shows, what the init reads,
 * and the placeholders shared with other sandboxes. */
static char *plan_text(const sb_plan *plan)
{
    char *buf = NULL;
    size_t size = 0, len = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    sb_plan_print(plan, f);
    char *ser = sb_plan_serialize(plan, &len);
    assert_non_null(ser);
    fwrite(ser, 1, len, f);
    free(ser);
    for (size_t i = 0; i < plan->n_shared_placeholders; i++)
        fprintf(f, "shared %s %s\n", plan->shared_placeholders[i].path,
                plan->shared_placeholders[i].content ? plan->shared_placeholders[i].content : "(dir)");
    fclose(f);
    return buf;
}

static void compile_two_roots(const char *w, const char *sub, sb_plan *plan)
{
    sb_profile prof;
    char err[1024];
    assert_int_equal(sb_profile_builtin(&prof, "workspace-write", err, sizeof err), 0);
    sb_profile_add(&prof, sub, SB_WRITE);
    sb_request req = request(NULL);
    req.cwd = req.workspace = w;
    int rc = sb_plan_compile(&prof, &req, plan, err, sizeof err);
    sb_profile_free(&prof);
    if (rc < 0)
        fail_msg("%s", err);
}

/* A compile plans placeholders (an empty .git where the root has none, its
 * agent directories, a commondir, a modules/, the missing target of an
 * agent configuration symlink) and looks at those paths again before it
 * ends: the second writable root's search for the repository around it
 * meets the first root's missing .git, and the symlink check reads every
 * protected path.  The compile makes none of them (the launcher does,
 * after it), so what its memo answered first is what the host says
 * throughout: the plan is the same, byte for byte, when every lstat is
 * asked of the host.  And a memo is one compile's: once the placeholder
 * exists, the next compile sees it. */
static void a_compile_decides_the_same_without_its_memo(void **state)
{
    (void)state;
    char *w = fresh_ws("memo");
    make_gitdir(w, "sub/.git", "[core]\n");
    put(w, "sub/src/main.c", "");
    put(w, "sub/.codex/config.toml", "");
    put(w, "deep/x/README", "");
    mk("%s/.gemini", w); /* empty: looks like another sandbox's placeholder */
    char *link = sb_printf("%s/deep/.claude", w);
    assert_int_equal(symlink("claude-later", link), 0); /* points to nothing yet */
    char *sub = sb_printf("%s/sub", w), *dotgit = sb_printf("%s/.git", w);

    sb_plan with, without;
    lstat_watched = dotgit;
    lstat_calls = 0;
    compile_two_roots(w, sub, &with);
    int calls_with = lstat_calls;
    lstat_calls = 0;
    sb_statmemo_bypass(true);
    compile_two_roots(w, sub, &without);
    sb_statmemo_bypass(false);
    int calls_without = lstat_calls;
    lstat_watched = NULL;

    assert_string_equal(placeholder(&with, w, ".git"), "dir");
    assert_string_equal(placeholder(&with, w, ".claude"), "dir");
    assert_string_equal(placeholder(&with, w, "deep/claude-later"), "dir");
    assert_non_null(placeholder(&with, w, "sub/.git/commondir"));
    assert_true(calls_without > 1); /* looked at again in the same compile */
    assert_int_equal(calls_with, 1); /* and the memo answered */
    char *a = plan_text(&with), *b = plan_text(&without);
    assert_string_equal(a, b);
    assert_non_null(strstr(a, "shared ")); /* .gemini, held as a placeholder */
    free(a);
    free(b);
    sb_plan_free(&with);
    sb_plan_free(&without);

    /* The launcher makes the placeholder; the next compile, with a memo of
     * its own, finds an empty .git there (no repository) and holds it. */
    assert_int_equal(mkdir(dotgit, 0555), 0);
    sb_plan next;
    compile_two_roots(w, sub, &next);
    assert_null(placeholder(&next, w, ".git"));
    assert_true(mounted(&next, w, ".git", true));
    bool held = false;
    for (size_t i = 0; i < next.n_shared_placeholders; i++)
        held = held || strcmp(next.shared_placeholders[i].path, dotgit) == 0;
    assert_true(held);
    sb_plan_free(&next);
    free(link);
    free(sub);
    free(dotgit);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(workspace_write_view),
        cmocka_unit_test(nested_repositories_are_pinned),
        cmocka_unit_test(git_symlink_is_pinned),
        cmocka_unit_test(read_only_profile),
        cmocka_unit_test(deny_beats_write_beats_read),
        cmocka_unit_test(more_specific_path_wins),
        cmocka_unit_test(symlinked_root_is_resolved),
        cmocka_unit_test(deny_through_writable_symlink_fails_closed),
        cmocka_unit_test(git_file_points_to_protected_gitdir),
        cmocka_unit_test(missing_write_root_is_an_error),
        cmocka_unit_test(environment_allowlist),
        cmocka_unit_test(full_profile_is_no_sandbox),
        cmocka_unit_test(plan_round_trip),
        cmocka_unit_test(unknown_profile_is_named),
        cmocka_unit_test(filter_lets_loopback_in_and_nothing_out),
        cmocka_unit_test(home_layer_over_a_read_only_home),
        cmocka_unit_test(home_layer_rebinds_mounts_inside_the_home),
        cmocka_unit_test(home_layer_directories_are_made_and_removed),
        cmocka_unit_test(placeholders_never_follow_a_swapped_symlink),
        cmocka_unit_test(placeholders_are_shared_and_counted),
        cmocka_unit_test(home_workspace_is_refused),
        cmocka_unit_test(write_roots_never_open_protected_paths),
        cmocka_unit_test(write_root_inside_a_gitdir_keeps_hooks_readonly),
        cmocka_unit_test(writable_root_keeps_default_deny_list),
        cmocka_unit_test(placeholder_registry_is_one_per_user),
        cmocka_unit_test(hooks_path_targets_are_protected),
        cmocka_unit_test(global_config_kept_in_the_workspace_is_protected),
        cmocka_unit_test(hooks_path_of_the_workspace_itself_fails_closed),
        cmocka_unit_test(config_includes_and_programs_are_protected),
        cmocka_unit_test(bad_config_fails_closed),
        cmocka_unit_test(gitconfig_reads_like_git),
        cmocka_unit_test(gitindex_finds_gitlinks),
        cmocka_unit_test(gitindex_file_is_read_again_when_it_changes),
        cmocka_unit_test(directory_listings_follow_their_directory),
        cmocka_unit_test(gitlinks_beyond_the_scan_are_protected),
        cmocka_unit_test(worktrees_and_modules_are_read_only),
        cmocka_unit_test(bare_repositories_are_protected),
        cmocka_unit_test(scan_budget_fails_closed),
        cmocka_unit_test(unreadable_directory_fails_closed),
        cmocka_unit_test(planted_nested_git_symlink_keeps_sandboxing),
        cmocka_unit_test(top_git_symlink_names_a_fix_that_keeps_the_sandbox),
        cmocka_unit_test(pins_never_reopen_protected_names),
        cmocka_unit_test(enclosing_repository_is_read_too),
        cmocka_unit_test(read_and_deny_entries_are_not_writable_for_git),
        cmocka_unit_test(agent_configuration_is_read_only_at_any_depth),
        cmocka_unit_test(planted_agent_symlinks_are_pinned_and_followed),
        cmocka_unit_test(nothing_pinned_writable_inside_agent_configuration),
        cmocka_unit_test(agent_search_fails_closed),
        cmocka_unit_test(statmemo_keeps_each_answer_until_forgotten),
        cmocka_unit_test(filter_handed_over_is_the_filter),
        cmocka_unit_test(write_to_a_gone_reader_is_epipe),
        cmocka_unit_test(a_compile_decides_the_same_without_its_memo),
        cmocka_unit_test(watched_listings_see_every_change), /* last: turns the watch on */
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
