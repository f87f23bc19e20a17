/*
 * landlock.h - Landlock rules mirroring the mount view, where the kernel
 * has Landlock: writing only under the plan's writable roots, and (ABI 4+)
 * no TCP bind/connect with network off, (ABI 6+) no abstract Unix sockets or
 * signals to processes outside the sandbox.  A second lock behind the
 * mounts and the filter, not instead of them.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_LANDLOCK_H
#define CORRAL_SB_LANDLOCK_H

#include <stddef.h>

#include "plan.h"

/* The kernel's Landlock ABI version, or 0 when it has none (or disabled). */
int sb_landlock_abi(void);

/* Restrict the calling thread (needs no_new_privs).  Returns the ABI used,
 * 0 when Landlock is unavailable (nothing done), -1 with err on failure. */
int sb_landlock_apply(const sb_plan *plan, char *err, size_t errlen);

/* For --print-plan. */
void sb_landlock_describe(const sb_plan *plan, char *buf, size_t len);

#endif
