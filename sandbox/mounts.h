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
int sb_mounts_apply(sb_plan *plan, bool base, char *err, size_t errlen);

/* With base (the view of a pre-built sandbox, launch.h), the plan's
 * layers directory is also bound here, the door through which each
 * command's init mounts its own home layer before it unmounts the door. */
#define SB_LAYER_DOOR "/dev/.corral-layers"

/* In a copy of a pre-built view's mount namespace (launch.h, sb_base), with
 * CAP_SYS_ADMIN there: give the command its own instances of what the plan
 * makes per sandbox and a command may write (each writable tmpfs, such as
 * /tmp, and the home layer (plan->layer_path, through the door), with the
 * view's mounts below each carried over; /dev with a new devpts and
 * /dev/shm) or read of others (a new proc for its pid namespace, its knobs
 * read-only); close the door; chdir to the plan's cwd.  layer_mounted says
 * whether the layer could be mounted.  0, or -1 with err. */
int sb_mounts_renew(sb_plan *plan, char *err, size_t errlen);

/* Whether sb_mounts_renew can renew every writable tmpfs and the home
 * layer of the plan (not when a pinned symlink lies below one). */
bool sb_mounts_renewable(const sb_plan *plan);

#endif
