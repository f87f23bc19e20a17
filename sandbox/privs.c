/*
 * privs.c - capabilities through raw capget/capset (no libcap needed).
 */
#include "config.h"

#include "privs.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int sb_cap_last(void)
{
    FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
    int last = CAP_LAST_CAP;
    if (f) {
        if (fscanf(f, "%d", &last) != 1)
            last = CAP_LAST_CAP;
        fclose(f);
    }
    return last;
}

int sb_drop_privileges(char *err, size_t errlen)
{
    int last = sb_cap_last();
    /* Bounding set first (needs CAP_SETPCAP, still held), so no exec can
     * ever gain a capability back. */
    for (int c = 0; c <= last; c++) {
        if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL) {
            snprintf(err, errlen, "cannot drop capability %d from the bounding set: %s", c, strerror(errno));
            return -1;
        }
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) {
        snprintf(err, errlen, "cannot clear ambient capabilities: %s", strerror(errno));
        return -1;
    }
    /* uid 0 inside (a root caller) must not be special either. */
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
              0, 0, 0) < 0) {
        snprintf(err, errlen, "cannot set securebits: %s", strerror(errno));
        return -1;
    }
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &hdr, data) < 0) {
        snprintf(err, errlen, "cannot drop capabilities: %s", strerror(errno));
        return -1;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
        snprintf(err, errlen, "cannot set no_new_privs: %s", strerror(errno));
        return -1;
    }
    return 0;
}
