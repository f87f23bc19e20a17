/*
 * doctor.c - probing the kernel: each feature is tried in a throw-away child
 * (so nothing here changes the caller), then a real sandbox runs /bin/true.
 */
#include "config.h"

#include "doctor.h"
#include "homelayer.h"
#include "landlock.h"
#include "launch.h"
#include "rlimits.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run fn in a forked child; its exit code (0 = works) or errno-ish. */
static int in_child(int (*fn)(void))
{
    pid_t pid = fork();
    if (pid < 0)
        return errno;
    if (pid == 0)
        _exit(fn());
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

static int try_userns(void)
{
    return unshare(CLONE_NEWUSER) == 0 ? 0 : errno;
}

static int try_netns(void)
{
    return unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 ? 0 : errno;
}

static int try_seccomp(void)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return errno;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return ENOMEM;
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(acct), 0);
    if (rc == 0)
        rc = seccomp_load(ctx);
    seccomp_release(ctx);
    return rc < 0 ? -rc : 0;
}

static int read_int(const char *path, int dflt)
{
    FILE *fp = fopen(path, "re");
    int v = dflt;
    if (fp) {
        if (fscanf(fp, "%d", &v) != 1)
            v = dflt;
        fclose(fp);
    }
    return v;
}

static void line(FILE *f, bool ok, const char *what, const char *detail)
{
    fprintf(f, "  %-4s %-26s %s\n", ok ? "yes" : "NO", what, detail);
}

/* How many descriptors the one message waiting on chan carried (-1 when
 * none waits); they are closed. */
static int proxy_listeners_received(int chan)
{
    if (chan < 0)
        return -1;
    char data[256];
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(4 * sizeof(int))];
    } control;
    struct iovec iov = {.iov_base = data, .iov_len = sizeof data};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
    if (recvmsg(chan, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0)
        return -1;
    int n = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++, n++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            close(fd);
        }
    }
    return n;
}

bool sb_doctor(FILE *f, const sb_plan *plan)
{
    struct utsname u;
    uname(&u);
    fprintf(f, "kernel %s %s; running as uid %d\n\n", u.release, u.machine, (int)getuid());
    fprintf(f, "what this kernel supports:\n");
    char hint[512];
    int e = in_child(try_userns);
    bool userns = e == 0;
    if (!userns)
        sb_userns_hint(e, hint, sizeof hint);
    line(f, userns, "user namespaces", userns ? "unprivileged user namespaces can be created" : hint);
    e = in_child(try_netns);
    line(f, e == 0, "network namespaces", e == 0 ? "a network of its own per sandbox: loopback only" : strerror(e));
    e = in_child(try_seccomp);
    bool seccomp = e == 0;
    line(f, seccomp, "seccomp filters", seccomp ? "libseccomp filters load" :
         "cannot load a filter: the kernel needs CONFIG_SECCOMP_FILTER");
    int abi = sb_landlock_abi();
    char buf[256];
    snprintf(buf, sizeof buf, abi > 0 ? "ABI %d%s" : "not available (CONFIG_SECURITY_LANDLOCK, lsm=landlock)", abi,
             abi >= 6 ? " (filesystem, TCP and scope rules)" : abi >= 4 ? " (filesystem and TCP rules)" : "");
    line(f, abi > 0, "Landlock", buf);
    sb_cgroup cg;
    char where[512];
    sb_cgroup_probe(&plan->limits, &cg, where, sizeof where);
    line(f, cg.pids_applied, "cgroup for pids.max", cg.pids_applied ? where : cg.why_not);
    char why[512];
    bool layer = plan->layer_home && sb_layer_probe(plan, why, sizeof why);
    line(f, layer, "home layer (overlayfs)",
         layer ? (plan->layer_in_memory
                      ? "an overlay on the home in a user namespace: writes to the home land in a layer in memory "
                        "(a tmpfs of the sandbox's own)"
                      : "an overlay on the home in a user namespace: writes to the home land in a layer")
         : plan->layer_home ? why : plan->layer_why_not ? plan->layer_why_not : "no home layer");
    int tiocsti = read_int("/proc/sys/dev/tty/legacy_tiocsti", -1);
    line(f, tiocsti != 1, "TIOCSTI disabled",
         tiocsti == 1 ? "dev.tty.legacy_tiocsti = 1: programs can push input into a terminal (corral's filter "
                        "refuses it in every sandbox)"
         : tiocsti == 0 ? "dev.tty.legacy_tiocsti = 0" : "kernel older than the switch: treat it as live");
    int aa = read_int("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 0);
    line(f, aa != 1, "no AppArmor userns limit",
         aa == 1 ? "kernel.apparmor_restrict_unprivileged_userns = 1" : "no restriction");

    fprintf(f, "\ntrying a real sandbox (profile %s, running /bin/true):\n", plan->profile);
    /* In network mode proxy the sandbox's init hands its listeners to the
     * server over the session channel: a socket pair stands in for it. */
    int chan[2] = {-1, -1};
    if (plan->net == SB_NET_PROXY && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) < 0)
        chan[0] = chan[1] = -1;
    sb_stdio io = {.in = 0, .out = 1, .err = 2, .chan = chan[1]};
    sb_child child;
    char err[1024];
    bool works = false;
    if (sb_launch(plan, &io, true, &child, err, sizeof err) < 0) {
        fprintf(f, "  NO   %s\n", err);
    } else {
        int st;
        while (waitpid(child.pid, &st, 0) < 0 && errno == EINTR)
            ;
        st = sb_child_status(&child, st);
        sb_child_release(&child);
        works = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        fprintf(f, "  %-4s %s\n", works ? "yes" : "NO", works ? "namespaces, mount view, filter and limits applied"
                                                            : "the sandbox started but /bin/true failed");
        if (plan->net == SB_NET_PROXY) {
            int got = proxy_listeners_received(chan[0]);
            fprintf(f, "  %-4s %s\n", got == 3 ? "yes" : "NO",
                    got == 3 ? "the network proxy's listeners (127.0.0.1:3128 HTTP, 127.0.0.1:1080 SOCKS5) "
                               "and the marks' (127.0.0.1:3129) were made and handed over"
                             : "the sandbox did not hand over the network proxy's listeners");
            works = works && got == 3;
        }
    }
    if (chan[0] >= 0) {
        close(chan[0]);
        close(chan[1]);
    }

    fprintf(f, "\nwhat corral will therefore enforce:\n");
    if (!works) {
        fprintf(f, "  nothing: sandboxed sessions and commands FAIL to start (corral never runs them "
                   "unsandboxed).\n  Fix the first NO above, or run with --profile full to go without a "
                   "sandbox on purpose.\n");
        return false;
    }
    fprintf(f, "  - a private view of the filesystem: read-only host, writable workspace, private /tmp, masked "
               "credential stores and host sockets\n"
               "    (a program that expects what another one left in /tmp, a socket, a lock, a file, finds /tmp "
               "empty: share such files through the workspace, or give their directory with -w DIR)\n");
    fprintf(f, "  - private pid, ipc, uts, cgroup and mount namespaces\n");
    if (plan->net == SB_NET_PROXY)
        fprintf(f, "  - network through corral's proxy: a network namespace of its own with loopback only, where "
                   "127.0.0.1:3128 (HTTP) and :1080 (SOCKS5) lead to the server's proxy, which asks you about "
                   "each new host; nothing else reaches the host or beyond; Unix sockets only as connected pairs\n");
    else
        fprintf(f, "  - network off: a network namespace of its own with loopback only, so servers and "
                   "clients inside one sandbox talk over 127.0.0.1 and ::1 and nothing reaches the host or beyond; "
                   "Unix sockets only as connected pairs\n");
    if (layer)
        fprintf(f, "  - a writable home: its writes land in a layer over it, %s; your real home is never written, "
                   "and what the deny list hides stays hidden\n",
                plan->layer_mode == SB_HOME_KEEP ? "kept for the workspace (less the shells' startup files and git's config)"
                                                 : "gone when the sandbox ends");
    else if (plan->layer_home)
        fprintf(f, "  - a read-only home (overlayfs cannot be used here): tools that write to it, such as vim's "
                   "viminfo or pyenv's shims, fail\n");
    else
        fprintf(f, "  - the home: %s\n", plan->layer_why_not ? plan->layer_why_not : "no layer");
    fprintf(f, "  - no capabilities, no_new_privs, a non-dumpable pid 1\n");
    fprintf(f, "  - the seccomp deny list (ptrace, mount, new namespaces, TIOCSTI, io_uring, bpf, ...)\n");
    if (abi > 0)
        fprintf(f, "  - Landlock ABI %d as a second lock on writes%s\n", abi,
                abi >= 6 ? ", abstract sockets and signals" : "");
    else
        fprintf(f, "  - no Landlock (mounts and the filter still hold)\n");
    if (cg.pids_applied)
        fprintf(f, "  - pids.max %llu per sandbox\n", (unsigned long long)plan->limits.pids_max);
    else if (sb_nproc_applies())
        fprintf(f, "  - RLIMIT_NPROC %llu per sandbox instead of a cgroup\n", (unsigned long long)plan->limits.nproc);
    else
        fprintf(f, "  - NO process limit: no writable pids cgroup, and RLIMIT_NPROC does not bind root (a fork "
                   "bomb in a sandbox can exhaust the host's pids)\n");
    return true;
}
