/*
 * prebuilt.h - the server's pre-built sandboxes (docs/sandbox.md,
 * "Pre-built sandboxes"): agents' one-shot commands of a workspace under
 * one plan start from one sb_base, built at the first and kept warm for
 * [sandbox] keep-warm after the last has ended.
 *
 * Included only in src/server/.
 */
#ifndef CORRAL_PREBUILT_H
#define CORRAL_PREBUILT_H

#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "base/list.h"
#include "sandbox/launch.h"

typedef struct prebuilt prebuilt;

typedef struct prebuilt_pool {
    uv_loop_t *loop;
    link_t warm;         /* prebuilt.node, most recently used last */
    size_t n;
    uint64_t keep_warm_ms;
    bool closing;        /* shutting down: a base goes with its last command */
} prebuilt_pool;

void prebuilt_pool_init(prebuilt_pool *pool, uv_loop_t *loop, uint64_t keep_warm_ms);

/* The base for plan, built now if none is warm (an older one of the same
 * workspace that no command uses goes: its plan is stale); taken until
 * prebuilt_put.  NULL when there is none (keep-warm off, a plan that
 * cannot be pre-built, a failed build, which is logged): the command gets
 * a sandbox of its own as before. */
prebuilt *prebuilt_take(prebuilt_pool *pool, const sb_plan *plan);
sb_base *prebuilt_base(prebuilt *p);

/* p's home layer made ahead for its next command, moved into out (empty
 * when there is none: the launch makes one); and, once that command is
 * launched, the next one made (on the loop, while the command's sandbox
 * sets itself up in its own processes). */
void prebuilt_take_layer(prebuilt *p, sb_layer_hold *out);
void prebuilt_make_layer(prebuilt *p, const sb_plan *plan);

/* A command started from p has ended (its init reaped) or never started. */
void prebuilt_put(prebuilt *p);

/* The server reaped pid: true when it was a base's holder (that base is
 * then closed at its next use). */
bool prebuilt_reaped(prebuilt_pool *pool, pid_t pid);

/* Shutting down: every base no command uses goes now, the others with
 * their last command. */
void prebuilt_pool_close(prebuilt_pool *pool);

#endif
