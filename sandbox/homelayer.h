/*
 * homelayer.h - the directories behind a sandbox's home layer (plan.h,
 * docs/sandbox.md "The home layer"): made by the launcher before the
 * sandbox starts, held while it runs, and when it ends removed (discard)
 * or kept for the workspace (keep).
 *
 * In corral's state directory, which no sandbox can see (it is denied):
 *
 *     home-layers/s-PID-RANDOM/{upper,work}   one sandbox's layer, removed at its end
 *                                             (only where it cannot be kept in memory,
 *                                             plan->layer_in_memory, or is not to be)
 *     home-layers/w-WORKSPACE/{upper,work}    the layer kept for a workspace
 *
 * Each layer directory is locked (flock) by its launcher for as long as
 * its sandbox runs.  A discarded layer whose lock is free was left by a
 * launcher that died: the next launch removes it.  A kept layer serves one
 * sandbox at a time; a sandbox started while another uses it gets a
 * discarded layer of its own.  Before a kept layer is used again, the
 * shells' startup files and git's configuration are taken out of it
 * (sb_layer_startup_files), so every sandbox's shells and git start from
 * the real ones.  Making a layer and
 * finding stale ones happen under a lock on home-layers/ itself; removing
 * one, which may take a while, only under its own lock.  home-layers/ goes
 * when it is empty.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_HOMELAYER_H
#define CORRAL_SB_HOMELAYER_H

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"

typedef struct sb_layer_hold {
    int fd;       /* the layer directory, locked; -1: none */
    char *path;   /* its path (upper/ and work/ inside) */
    bool discard; /* removed at release */
} sb_layer_hold;

/* Whether this kernel can keep a throw-away layer in memory: overlayfs in
 * a user namespace stores what it needs in user extended attributes, which
 * tmpfs takes from Linux 6.6.  Older kernels get the layer on disk. */
bool sb_layer_in_memory(void);

/* Make or take the layer for plan (nothing when the plan has none, or
 * keeps it in memory: the init mounts that itself).  0, or -1 with err:
 * the sandbox then keeps a read-only home. */
int sb_layer_acquire(const sb_plan *plan, sb_layer_hold *out, char *err, size_t errlen);

/* Whether plan's layers are throw-away ones, the same for every command
 * of the plan: one can then be made before its command comes (a pre-built
 * sandbox keeps one ready, src/server/prebuilt.c). */
bool sb_layer_made_ahead(const sb_plan *plan);

/* Let go of the layer once its sandbox has ended (removing a discarded
 * one); harmless on an empty hold. */
void sb_layer_release(sb_layer_hold *hold);

/* Whether the plan's home layer can be mounted here: a throw-away layer is
 * mounted over the home in new user and mount namespaces and written once.
 * false with why (the sandbox then keeps a read-only home). */
bool sb_layer_probe(const sb_plan *plan, char *why, size_t len);

/* What is taken out of a kept layer before each use: the files shells
 * run when they start and git's configuration (relative to the home). */
extern const char *const sb_layer_startup_files[];

#endif
