/*
 * filter.c - building the seccomp filter with libseccomp.  The rule table is the
 * single source: install and describe both walk it, so what --print-plan
 * says is what is loaded.
 */
#include "config.h"

#include "filter.h"

#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

/* Calls that always fail with EPERM: debugging and memory of other
 * processes, kernel attack surface that agents do not need, and everything
 * that changes mounts or namespaces (a nested user namespace can detach a
 * read-only bind: ../shared/reference/sandbox.md section 6.3). */
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

/* With network off: calls that open or use connections.  sendto is only
 * refused with an address (send() on a connected socket pair is sendto
 * with none).  sendmsg carries its address in memory the filter cannot
 * read; what keeps it from reaching a host socket is the socket types
 * below. */
static const char *const deny_net_off[] = {"connect", "bind", "listen", "accept", "accept4", "sendmmsg", NULL};

/* Namespace flags refused to unshare and clone. */
static const unsigned long ns_flags[] = {0x00020000 /* NEWNS */, 0x02000000 /* NEWCGROUP */,
                                         0x04000000 /* NEWUTS */, 0x08000000 /* NEWIPC */,
                                         0x10000000 /* NEWUSER */, 0x20000000 /* NEWPID */,
                                         0x40000000 /* NEWNET */, 0x00000080 /* NEWTIME */};
#define N_NS_FLAGS (sizeof ns_flags / sizeof ns_flags[0])

/* With network off, AF_UNIX sockets may be streams or sequenced packets
 * only.  A datagram socket (SOCK_DGRAM, and SOCK_RAW, which AF_UNIX turns
 * into SOCK_DGRAM) can send to any socket it can name with sendmsg's
 * msg_name, even one made by socketpair: a host socket bound in a directory
 * the sandbox sees would receive it.  Unconnected streams and sequenced
 * packets cannot address anyone (sendmsg with a name fails, connect is
 * refused); connected ones ignore or refuse msg_name.  So the session
 * channel (fd 3, SOCK_SEQPACKET) and socket pairs keep passing data and
 * SCM_RIGHTS with sendmsg.  The kernel takes the type from the low four
 * bits (SOCK_TYPE_MASK); every other value there is refused. */
#define SOCK_TYPE_BITS 0xfu
#define N_UNIX_TYPES_REFUSED 14 /* 16 values, minus SOCK_STREAM and SOCK_SEQPACKET */

static int count_list(const char *const *l)
{
    int n = 0;
    while (l[n])
        n++;
    return n;
}

int sb_seccomp_rule_count(sb_net net)
{
    int n = count_list(deny_always) + 2 * (int)N_NS_FLAGS + 1 /* clone3 */ + 2 /* TIOCSTI, TIOCLINUX */ +
            2 /* vsock socket, socketpair */;
    if (net == SB_NET_OFF)
        n += count_list(deny_net_off) + 3 /* socket, socketpair families; sendto with an address */ +
             2 * N_UNIX_TYPES_REFUSED /* socket, socketpair types */;
    return n;
}

void sb_seccomp_describe(sb_net net, char *buf, size_t len)
{
    snprintf(buf, len,
             "libseccomp, default allow, %d rules; EPERM: ptrace process_vm_* pidfd_getfd io_uring_* bpf "
             "perf_event_open userfaultfd keyctl add_key request_key, mount and namespace calls (mount umount2 "
             "pivot_root chroot move_mount open_tree fs* mount_setattr setns; unshare/clone with a namespace "
             "flag), modules kexec reboot swap acct syslog open_by_handle_at fanotify iopl ioperm; ioctl "
             "TIOCSTI and TIOCLINUX (low 32 bits compared); socket AF_VSOCK; clone3 ENOSYS%s; other "
             "architectures killed",
             sb_seccomp_rule_count(net),
             net == SB_NET_OFF ? "; network off: sockets other than AF_UNIX, AF_UNIX sockets other than "
                                 "stream and seqpacket (a datagram socket could address a host socket with "
                                 "sendmsg), connect bind listen accept accept4 sendmmsg, sendto with an address"
                               : "");
}

static int add(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n_args,
               const struct scmp_arg_cmp *args, char *err, size_t errlen)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR)
        return 0; /* not on this architecture */
    int rc = seccomp_rule_add_array(ctx, action, nr, n_args, args);
    if (rc < 0) {
        snprintf(err, errlen, "seccomp rule for %s: %s", name, strerror(-rc));
        return -1;
    }
    return 0;
}

int sb_seccomp_install(sb_net net, char *err, size_t errlen)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        snprintf(err, errlen, "cannot create a seccomp filter (libseccomp)");
        return -1;
    }
    int rc = -1;
    uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
    /* Calls of another architecture (i386, x32) on x86_64 are killed. */
    seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    for (const char *const *c = deny_always; *c; c++)
        if (add(ctx, eperm, *c, 0, NULL, err, errlen) < 0)
            goto out;
    for (size_t i = 0; i < N_NS_FLAGS; i++) {
        struct scmp_arg_cmp a = SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
        if (add(ctx, eperm, "unshare", 1, &a, err, errlen) < 0 || add(ctx, eperm, "clone", 1, &a, err, errlen) < 0)
            goto out;
    }
    /* clone3 passes its flags in memory the filter cannot read: make libc
     * fall back to clone, which the filter can check. */
    if (add(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, err, errlen) < 0)
        goto out;
    /* The kernel compares only the low 32 bits of an ioctl request. */
    struct scmp_arg_cmp sti = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
    struct scmp_arg_cmp linux_ = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX);
    if (add(ctx, eperm, "ioctl", 1, &sti, err, errlen) < 0 || add(ctx, eperm, "ioctl", 1, &linux_, err, errlen) < 0)
        goto out;
    struct scmp_arg_cmp vsock = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_VSOCK);
    if (add(ctx, eperm, "socket", 1, &vsock, err, errlen) < 0 ||
        add(ctx, eperm, "socketpair", 1, &vsock, err, errlen) < 0)
        goto out;
    if (net == SB_NET_OFF) {
        /* Anything but exactly AF_UNIX (high bits included) is refused. */
        struct scmp_arg_cmp not_unix = SCMP_A0(SCMP_CMP_NE, AF_UNIX);
        if (add(ctx, eperm, "socket", 1, &not_unix, err, errlen) < 0 ||
            add(ctx, eperm, "socketpair", 1, &not_unix, err, errlen) < 0)
            goto out;
        for (const char *const *c = deny_net_off; *c; c++)
            if (add(ctx, eperm, *c, 0, NULL, err, errlen) < 0)
                goto out;
        struct scmp_arg_cmp addressed = SCMP_A4(SCMP_CMP_NE, 0);
        if (add(ctx, eperm, "sendto", 1, &addressed, err, errlen) < 0)
            goto out;
        int refused = 0;
        for (unsigned type = 0; type <= SOCK_TYPE_BITS; type++) {
            if (type == SOCK_STREAM || type == SOCK_SEQPACKET)
                continue;
            struct scmp_arg_cmp t = SCMP_A1(SCMP_CMP_MASKED_EQ, SOCK_TYPE_BITS, type);
            if (add(ctx, eperm, "socket", 1, &t, err, errlen) < 0 ||
                add(ctx, eperm, "socketpair", 1, &t, err, errlen) < 0)
                goto out;
            refused++;
        }
        if (refused != N_UNIX_TYPES_REFUSED) {
            snprintf(err, errlen, "internal: %d socket types refused, %d counted", refused, N_UNIX_TYPES_REFUSED);
            goto out;
        }
    }
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
