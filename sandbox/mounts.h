/*
 * mounts.h - building the sandbox's filesystem view from a plan.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_MOUNTS_H
#define CORRAL_SB_MOUNTS_H

#include <stddef.h>

#include "plan.h"

/* In a fresh mount namespace, with CAP_SYS_ADMIN there: make the plan's
 * mounts, pivot_root into the view, detach the host's root, chdir to the
 * plan's cwd.  Says in the plan whether the home layer could be mounted
 * (layer_mounted) and which masks it made unnecessary (skip).  0, or -1
 * with err naming the path. */
int sb_mounts_apply(sb_plan *plan, char *err, size_t errlen);

#endif
