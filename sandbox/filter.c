/*
 * filter.c - building the seccomp filter with libseccomp.  The rule tables
 * are the single source: installing, counting and describing all walk them,
 * so what --print-plan says is what is loaded.
 */
#include "config.h"

#include "filter.h"
#include "sbutil.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

/* Calls that always fail with EPERM: debugging and memory of other
 * processes, kernel attack surface that agents do not need, and everything
 * that changes mounts or namespaces (a nested user namespace can detach a
 * read-only bind: docs/sandbox.md, "The seccomp filter"). */
static const char *const deny_always[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "setns",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "syslog", "open_by_handle_at", "name_to_handle_at",
    "fanotify_init", "iopl", "ioperm", "vhangup", "uselib", "lookup_dcookie", "quotactl",
    NULL,
};

/* Namespace flags refused to unshare and clone. */
static const unsigned long ns_flags[] = {0x00020000 /* NEWNS */, 0x02000000 /* NEWCGROUP */,
                                         0x04000000 /* NEWUTS */, 0x08000000 /* NEWIPC */,
                                         0x10000000 /* NEWUSER */, 0x20000000 /* NEWPID */,
                                         0x40000000 /* NEWNET */, 0x00000080 /* NEWTIME */};
#define N_NS_FLAGS (sizeof ns_flags / sizeof ns_flags[0])

/* ---- sockets in a network namespace of the sandbox's own ------------------
 *
 * With the network off the sandbox has a network namespace of its own with
 * loopback only (proxy mode is the same namespace; what it adds are the
 * init's listeners on that loopback, IP sockets this table allows).
 * Nothing is routed out of it, so IP sockets are allowed, and every call on
 * them (connect, bind, listen, accept, sendto, sendmmsg): whatever they
 * reach is the sandbox itself.  What stays refused is what could reach
 * beyond the namespace, and kernel surface loopback does not need:
 *
 *  - AF_UNIX sockets from socket().  Unix sockets do not belong to a network
 *    namespace: a path names a host socket wherever the view shows one (one
 *    bound in the workspace, say), and a filter cannot read the address that
 *    connect() or sendmsg() is given.  socketpair() may make them, as
 *    streams or sequenced packets: connected from birth, they can address
 *    nobody (connect fails with EISCONN, a stream refuses sendmsg's name, a
 *    seqpacket ignores it), so the session channel and socket pairs work.
 *    No datagram pair: a datagram socket sends to any name it is given.
 *  - IP sockets other than TCP and UDP: raw and ping sockets (nothing to
 *    reach; they need privileges the sandbox lacks anyway), and other
 *    protocols, which can make the kernel load a module (SCTP, L2TP ...).
 *  - netlink other than NETLINK_ROUTE.  Route queries see this namespace,
 *    loopback only (getifaddrs, `ip addr`, glibc's address checks); changes
 *    need CAP_NET_ADMIN, which nothing in the sandbox has.
 *  - every other family: AF_PACKET, AF_VSOCK (which ignores network
 *    namespaces), AF_ALG, AF_BLUETOOTH ...
 *
 * The kernel takes a socket's type from its low four bits (the rest are
 * flags such as SOCK_CLOEXEC); families and protocols are compared whole,
 * so high bits do not slip past (values from 64 up are refused). */
#define TYPE_BIT(t) (1ull << (t))
#define PROTO_BIT(p) (1ull << (p))

typedef struct sock_allow {
    int family;
    uint64_t socket_types;     /* SOCK_* values socket() may make; 0: none */
    uint64_t socketpair_types; /* the same for socketpair() */
    uint64_t protocols;        /* protocol values allowed (all below 64) */
    const char *what;          /* for the plan */
} sock_allow;

static const sock_allow private_net_sockets[] = {
    {AF_INET, TYPE_BIT(SOCK_STREAM) | TYPE_BIT(SOCK_DGRAM), 0,
     PROTO_BIT(0) | PROTO_BIT(IPPROTO_TCP) | PROTO_BIT(IPPROTO_UDP), "AF_INET (TCP, UDP)"},
    {AF_INET6, TYPE_BIT(SOCK_STREAM) | TYPE_BIT(SOCK_DGRAM), 0,
     PROTO_BIT(0) | PROTO_BIT(IPPROTO_TCP) | PROTO_BIT(IPPROTO_UDP), "AF_INET6 (TCP, UDP)"},
    {AF_NETLINK, TYPE_BIT(SOCK_RAW) | TYPE_BIT(SOCK_DGRAM), 0, PROTO_BIT(NETLINK_ROUTE),
     "AF_NETLINK (NETLINK_ROUTE: queries of this namespace)"},
    {AF_UNIX, 0, TYPE_BIT(SOCK_STREAM) | TYPE_BIT(SOCK_SEQPACKET), PROTO_BIT(0) | PROTO_BIT(PF_UNIX),
     "AF_UNIX only from socketpair (stream, seqpacket: connected, they address nobody)"},
};
#define N_PRIVATE_NET_SOCKETS (sizeof private_net_sockets / sizeof private_net_sockets[0])

/* Families, protocols: values 0-63 are judged one by one, the rest refused. */
#define VALUE_LIMIT 64
/* Types: the low four bits. */
#define TYPE_LIMIT 16
#define TYPE_MASK 0xfull

/* Rules are added to ctx, or only counted when ctx is NULL. */
typedef struct builder {
    scmp_filter_ctx ctx;
    int count;
    char *err;
    size_t errlen;
} builder;

static int add(builder *b, uint32_t action, const char *name, unsigned n_args, const struct scmp_arg_cmp *args)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR)
        return 0; /* not on this architecture */
    b->count++;
    if (!b->ctx)
        return 0;
    int rc = seccomp_rule_add_array(b->ctx, action, nr, n_args, args);
    if (rc < 0) {
        snprintf(b->err, b->errlen, "seccomp rule for %s: %s", name, strerror(-rc));
        return -1;
    }
    return 0;
}

/* Refuse call when its argument arg is none of the allowed values (bit v:
 * value v allowed, v < limit, limit a power of two).  The argument is
 * compared under field_mask; refused values are grouped into aligned
 * power-of-two blocks, one masked comparison each.  With a full-width
 * field, values from limit up are refused by one more rule.  with: a
 * comparison on another argument that must hold too (the family), or NULL. */
static int refuse_unless(builder *b, const char *call, const struct scmp_arg_cmp *with, unsigned arg,
                         uint64_t allowed, unsigned limit, uint64_t field_mask)
{
    struct scmp_arg_cmp cmp[2];
    unsigned n = 0;
    if (with)
        cmp[n++] = *with;
    for (unsigned v = 0; v < limit;) {
        if (allowed & (1ull << v)) {
            v++;
            continue;
        }
        unsigned size = 1;
        for (;;) {
            unsigned bigger = size * 2;
            uint64_t span = bigger >= 64 ? ~0ull : ((1ull << bigger) - 1) << v;
            if (v % bigger != 0 || v + bigger > limit || (allowed & span))
                break;
            size = bigger;
        }
        cmp[n] = (struct scmp_arg_cmp){.arg = arg, .op = SCMP_CMP_MASKED_EQ,
                                       .datum_a = field_mask & ~(uint64_t)(size - 1), .datum_b = v};
        if (add(b, SCMP_ACT_ERRNO(EPERM), call, n + 1, cmp) < 0)
            return -1;
        v += size;
    }
    if (field_mask == ~0ull) {
        cmp[n] = (struct scmp_arg_cmp){.arg = arg, .op = SCMP_CMP_GT, .datum_a = limit - 1};
        if (add(b, SCMP_ACT_ERRNO(EPERM), call, n + 1, cmp) < 0)
            return -1;
    }
    return 0;
}

/* socket() or socketpair() (pair) as private_net_sockets says. */
static int private_net_rules(builder *b, bool pair)
{
    const char *call = pair ? "socketpair" : "socket";
    uint64_t families = 0;
    for (size_t i = 0; i < N_PRIVATE_NET_SOCKETS; i++) {
        const sock_allow *s = &private_net_sockets[i];
        uint64_t types = pair ? s->socketpair_types : s->socket_types;
        if (!types)
            continue;
        families |= 1ull << s->family;
        struct scmp_arg_cmp family = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)s->family);
        if (refuse_unless(b, call, &family, 1, types, TYPE_LIMIT, TYPE_MASK) < 0 ||
            refuse_unless(b, call, &family, 2, s->protocols, VALUE_LIMIT, ~0ull) < 0)
            return -1;
    }
    return refuse_unless(b, call, NULL, 0, families, VALUE_LIMIT, ~0ull);
}

static int build(builder *b, sb_net net)
{
    uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
    for (const char *const *c = deny_always; *c; c++)
        if (add(b, eperm, *c, 0, NULL) < 0)
            return -1;
    for (size_t i = 0; i < N_NS_FLAGS; i++) {
        struct scmp_arg_cmp a = SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
        if (add(b, eperm, "unshare", 1, &a) < 0 || add(b, eperm, "clone", 1, &a) < 0)
            return -1;
    }
    /* clone3 passes its flags in memory the filter cannot read: make libc
     * fall back to clone, which the filter can check. */
    if (add(b, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL) < 0)
        return -1;
    /* The kernel compares only the low 32 bits of an ioctl request. */
    struct scmp_arg_cmp sti = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
    struct scmp_arg_cmp linux_ = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX);
    if (add(b, eperm, "ioctl", 1, &sti) < 0 || add(b, eperm, "ioctl", 1, &linux_) < 0)
        return -1;
    /* AF_VSOCK reaches the hypervisor whatever the network namespace: never. */
    struct scmp_arg_cmp vsock = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_VSOCK);
    if (add(b, eperm, "socket", 1, &vsock) < 0 || add(b, eperm, "socketpair", 1, &vsock) < 0)
        return -1;
    if (net != SB_NET_FULL && (private_net_rules(b, false) < 0 || private_net_rules(b, true) < 0))
        return -1;
    return 0;
}

int sb_seccomp_rule_count(sb_net net)
{
    char err[256];
    builder b = {.ctx = NULL, .err = err, .errlen = sizeof err};
    return build(&b, net) < 0 ? -1 : b.count;
}

void sb_seccomp_describe(sb_net net, char *buf, size_t len)
{
    char sockets[512] = "";
    if (net != SB_NET_FULL) {
        size_t used = (size_t)snprintf(sockets, sizeof sockets, "; a network namespace of its own (loopback "
                                       "only), so sockets may be");
        for (size_t i = 0; i < N_PRIVATE_NET_SOCKETS && used < sizeof sockets; i++)
            used += (size_t)snprintf(sockets + used, sizeof sockets - used, "%s %s", i ? "," : "",
                                     private_net_sockets[i].what);
        if (used < sizeof sockets)
            snprintf(sockets + used, sizeof sockets - used, "; every other family, type and protocol refused");
    }
    snprintf(buf, len,
             "libseccomp, default allow, %d rules; EPERM: ptrace process_vm_* pidfd_getfd io_uring_* bpf "
             "perf_event_open userfaultfd keyctl add_key request_key, mount and namespace calls (mount umount2 "
             "pivot_root chroot move_mount open_tree fs* mount_setattr setns; unshare/clone with a namespace "
             "flag), modules kexec reboot swap acct syslog open_by_handle_at fanotify iopl ioperm; ioctl "
             "TIOCSTI and TIOCLINUX (low 32 bits compared); socket AF_VSOCK; clone3 ENOSYS%s; other "
             "architectures killed",
             sb_seccomp_rule_count(net), sockets);
}

/* The filter for net as a BPF program, as libseccomp would load it; its
 * instructions in *prog (malloc'd) and their count in *n.  0, or -1 with
 * err. */
static int compile_program(sb_net net, struct sock_filter **prog, unsigned short *n, char *err, size_t errlen)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        snprintf(err, errlen, "cannot create a seccomp filter (libseccomp)");
        return -1;
    }
    seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    builder b = {.ctx = ctx, .err = err, .errlen = errlen};
    int rc = -1, fd = memfd_create("corral-filter", MFD_CLOEXEC);
    struct stat st;
    if (build(&b, net) == 0 && fd >= 0 && seccomp_export_bpf(ctx, fd) == 0 && fstat(fd, &st) == 0 &&
        st.st_size > 0 && st.st_size % (off_t)sizeof(struct sock_filter) == 0 &&
        st.st_size / (off_t)sizeof(struct sock_filter) <= BPF_MAXINSNS) {
        struct sock_filter *p = malloc((size_t)st.st_size);
        if (p && pread(fd, p, (size_t)st.st_size, 0) == st.st_size) {
            *prog = p;
            *n = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
            rc = 0;
        } else
            free(p);
    }
    if (rc < 0 && !err[0])
        snprintf(err, errlen, "cannot compile the seccomp filter ahead");
    if (fd >= 0)
        close(fd);
    seccomp_release(ctx);
    return rc;
}

/* A filter compiled ahead (sb_seccomp_precompile, or received from the
 * launcher): its program, and the network mode it is for. */
static struct sock_fprog precompiled;
static sb_net precompiled_net;

static void adopt(sb_net net, struct sock_filter *prog, unsigned short n)
{
    free(precompiled.filter);
    precompiled.filter = prog;
    precompiled.len = n;
    precompiled_net = net;
}

int sb_seccomp_precompile(sb_net net, char *err, size_t errlen)
{
    struct sock_filter *prog;
    unsigned short n;
    if (compile_program(net, &prog, &n, err, errlen) < 0)
        return -1;
    adopt(net, prog, n);
    return 0;
}

bool sb_seccomp_have_precompiled(sb_net net)
{
    return precompiled.filter && precompiled_net == net;
}

/* The launcher's programs, one per network mode, compiled at the first
 * launch that needs each (a server launches many sandboxes, and a store
 * process's readers start on worker threads); never freed. */
static struct sock_fprog sent[SB_NET_FULL + 1];
static pthread_mutex_t sent_lock = PTHREAD_MUTEX_INITIALIZER;

void sb_seccomp_send(int fd, sb_net net)
{
    uint32_t n = 0;
    const struct sock_filter *prog = NULL;
    if ((unsigned)net <= SB_NET_FULL) {
        pthread_mutex_lock(&sent_lock);
        char err[256] = "";
        if (!sent[net].filter && compile_program(net, &sent[net].filter, &sent[net].len, err, sizeof err) < 0)
            sent[net].filter = NULL;
        prog = sent[net].filter;
        n = prog ? sent[net].len : 0;
        pthread_mutex_unlock(&sent_lock);
    }
    /* One write: the count (0 says "none": the init compiles its own),
     * then the instructions. */
    size_t bytes = n * sizeof *prog;
    char *frame = sb_alloc(sizeof n + bytes);
    memcpy(frame, &n, sizeof n);
    if (n)
        memcpy(frame + sizeof n, prog, bytes);
    sb_write_all(fd, frame, sizeof n + bytes);
    free(frame);
}

void sb_seccomp_receive(int fd, sb_net net)
{
    uint32_t n;
    if (sb_read_all(fd, &n, sizeof n) < 0 || n == 0 || n > BPF_MAXINSNS)
        return;
    struct sock_filter *prog = malloc(n * sizeof *prog);
    if (!prog)
        return;
    if (sb_read_all(fd, prog, n * sizeof *prog) < 0) {
        free(prog);
        return;
    }
    adopt(net, prog, (unsigned short)n);
}

int sb_seccomp_install(sb_net net, char *err, size_t errlen)
{
    /* Compiled ahead: by the launcher while this init started, or by a
     * pre-built sandbox's holder once for all its commands (the same
     * program libseccomp would load: no_new_privs is already set by then). */
    if (sb_seccomp_have_precompiled(net)) {
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &precompiled) == 0)
            return 0;
        snprintf(err, errlen, "cannot load the seccomp filter: %s (the kernel needs CONFIG_SECCOMP_FILTER)",
                 strerror(errno));
        return -1;
    }
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        snprintf(err, errlen, "cannot create a seccomp filter (libseccomp)");
        return -1;
    }
    int rc = -1;
    /* Calls of another architecture (i386, x32) on x86_64 are killed. */
    seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    builder b = {.ctx = ctx, .err = err, .errlen = errlen};
    if (build(&b, net) < 0)
        goto out;
    int lr = seccomp_load(ctx);
    if (lr < 0) {
        snprintf(err, errlen, "cannot load the seccomp filter: %s (the kernel needs CONFIG_SECCOMP_FILTER)",
                 strerror(-lr));
        goto out;
    }
    rc = 0;
out:
    seccomp_release(ctx);
    return rc;
}
