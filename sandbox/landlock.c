/*
 * landlock.c - Landlock through raw system calls (glibc has no wrappers, and
 * Debian 12's headers predate network and scope rules, so the stable ABI
 * values are defined here).
 */
#include "config.h"

#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LL_CREATE_RULESET_VERSION (1u << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_FS_EXECUTE (1ull << 0)
#define LL_FS_WRITE_FILE (1ull << 1)
#define LL_FS_READ_FILE (1ull << 2)
#define LL_FS_READ_DIR (1ull << 3)
#define LL_FS_REMOVE_DIR (1ull << 4)
#define LL_FS_REMOVE_FILE (1ull << 5)
#define LL_FS_MAKE_CHAR (1ull << 6)
#define LL_FS_MAKE_DIR (1ull << 7)
#define LL_FS_MAKE_REG (1ull << 8)
#define LL_FS_MAKE_SOCK (1ull << 9)
#define LL_FS_MAKE_FIFO (1ull << 10)
#define LL_FS_MAKE_BLOCK (1ull << 11)
#define LL_FS_MAKE_SYM (1ull << 12)
#define LL_FS_REFER (1ull << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ull << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ull << 15) /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX (1ull << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ull << 1)

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

int sb_landlock_abi(void)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

static uint64_t fs_rights(int abi)
{
    uint64_t r = LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_REMOVE_DIR |
                 LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK |
                 LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM;
    if (abi >= 2)
        r |= LL_FS_REFER;
    if (abi >= 3)
        r |= LL_FS_TRUNCATE;
    if (abi >= 5)
        r |= LL_FS_IOCTL_DEV;
    return r;
}

static const uint64_t READ_RIGHTS = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR;

static int add_path(int ruleset, const char *path, uint64_t rights, char *err, size_t errlen)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "landlock: cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct ll_path_beneath_attr pb = {.allowed_access = rights, .parent_fd = fd};
    long rc = syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0);
    int e = errno;
    close(fd);
    if (rc < 0) {
        snprintf(err, errlen, "landlock: rule for %s: %s", path, strerror(e));
        return -1;
    }
    return 0;
}

int sb_landlock_apply(const sb_plan *plan, char *err, size_t errlen)
{
    int abi = sb_landlock_abi();
    if (abi <= 0)
        return 0;
    uint64_t all = fs_rights(abi);
    /* No network rules: Landlock's TCP rules name ports, not addresses, and
     * with the network off the sandbox's own namespace has only loopback,
     * where binding and connecting are what local servers and their tests
     * need (the filter keeps other families out: filter.c). */
    struct ll_ruleset_attr attr = {.handled_access_fs = all};
    if (abi >= 6)
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
    size_t attr_size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
    if (rs < 0) {
        snprintf(err, errlen, "landlock: cannot create a ruleset: %s", strerror(errno));
        return -1;
    }
    int rc = add_path(rs, "/", READ_RIGHTS, err, errlen);
    for (size_t i = 0; i < plan->n_write_roots && rc == 0; i++) {
        uint64_t rights = all;
        if (strcmp(plan->write_roots[i], "/dev") == 0)
            rights = READ_RIGHTS | LL_FS_WRITE_FILE | (abi >= 3 ? LL_FS_TRUNCATE : 0) |
                     (abi >= 5 ? LL_FS_IOCTL_DEV : 0) | LL_FS_MAKE_REG | LL_FS_REMOVE_FILE;
        rc = add_path(rs, plan->write_roots[i], rights, err, errlen);
    }
    if (rc == 0 && syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
        snprintf(err, errlen, "landlock: cannot restrict: %s", strerror(errno));
        rc = -1;
    }
    close(rs);
    return rc < 0 ? -1 : abi;
}

void sb_landlock_describe(const sb_plan *plan, char *buf, size_t len)
{
    int abi = sb_landlock_abi();
    if (abi <= 0) {
        snprintf(buf, len, "not available on this kernel (mounts and the filter still apply)");
        return;
    }
    snprintf(buf, len, "ABI %d: read and execute everywhere, write only under the %zu writable roots%s", abi,
             plan->n_write_roots, abi >= 6 ? "; no abstract Unix sockets or signals beyond the sandbox" : "");
}
