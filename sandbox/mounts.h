/*
 * mounts.h - building the sandbox's filesystem view from a plan.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_MOUNTS_H
#define CORRAL_SB_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"

/* In a fresh mount namespace, with CAP_SYS_ADMIN there: make the plan's
 * mounts, pivot_root into the view, detach the host's root, chdir to the
 * plan's cwd.  Says in the plan whether the home layer could be mounted
 * (layer_mounted) and which masks it made unnecessary (skip).  0, or -1
 * with err naming the path. */
int sb_mounts_apply(sb_plan *plan, char *err, size_t errlen);

/* In a copy of a pre-built view's mount namespace (launch.h, sb_base), with
 * CAP_SYS_ADMIN there: give the command its own instances of what the plan
 * makes per sandbox and a command may write (each writable tmpfs, such as
 * /tmp, with the view's mounts below it carried over; a new devpts and
 * /dev/shm) or read of others (a new proc for its pid namespace, its knobs
 * read-only), then chdir to the plan's cwd.  0, or -1 with err. */
int sb_mounts_renew(const sb_plan *plan, char *err, size_t errlen);

/* Whether sb_mounts_renew can renew every writable tmpfs of the plan (not
 * when a pinned symlink lies below one). */
bool sb_mounts_renewable(const sb_plan *plan);

#endif
