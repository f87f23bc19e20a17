/*
 * privs.h - giving up privilege inside the sandbox: every capability in
 * every set (bounding, ambient, inheritable, permitted, effective), the
 * securebits that keep uid 0 (when the caller is root) from regaining any,
 * and no_new_privs.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_PRIVS_H
#define CORRAL_SB_PRIVS_H

#include <stddef.h>

/* 0, or -1 with err. */
int sb_drop_privileges(char *err, size_t errlen);

/* The highest capability this kernel knows (/proc/sys/kernel/cap_last_cap). */
int sb_cap_last(void);

#endif
