/*
 * proxy_pump.h - a tunnel's bytes, both ways, between two connected
 * sockets, moved by the kernel: splice(2) from one socket into a pipe and
 * from the pipe into the other, so no byte is copied through the server's
 * memory (a tunnel is TLS the proxy never reads).  libuv polls duplicates
 * of the two sockets; the caller's own handles for them stay idle while
 * the pump runs.
 *
 * What is in flight is bounded by the pipe (and the sockets' own kernel
 * buffers): a side is not read while its pipe is full, which is the
 * tunnel's backpressure.  Pipes are taken from a pool when bytes come and
 * given back when a direction goes quiet, so an idle tunnel holds no pipe.
 *
 * Included only in src/net/.
 */
#ifndef CORRAL_PROXY_PUMP_H
#define CORRAL_PROXY_PUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct pump pump_t;
typedef struct pump_pool pump_pool;

/* The two directions: from socket a to b, and from b to a. */
enum { PUMP_A_TO_B = 0, PUMP_B_TO_A = 1 };
/* The side of a failure that is neither socket's (no pipe could be had). */
enum { PUMP_SELF = 2 };

typedef struct pump_hooks {
    /* n bytes went in direction dir. */
    void (*moved)(void *user, int dir, size_t n);
    /* The tunnel is over: both directions ended (error 0; first_eof says
     * which socket closed first, 0 for a, 1 for b), or a socket failed
     * (error a negative errno, side 0 for a, 1 for b, PUMP_SELF for the
     * pump's own).  Called once; then pump_stop. */
    void (*ended)(void *user, int error, int side);
    /* After pump_stop: libuv is done with the pump. */
    void (*closed)(void *user);
} pump_hooks;

/* Spare pipes; pipe_bytes is the size asked for each (the kernel may give
 * less).  Freed with pump_pool_free once no pump uses it. */
pump_pool *pump_pool_new(size_t pipe_bytes, size_t spare_max);
void pump_pool_free(pump_pool *pool);

/*
 * Start moving bytes between the connected sockets a and b (duplicated
 * here; the caller keeps its own).  first: bytes to send to b before any
 * (what the client sent while its request was decided), at most 64 KiB.
 * 0 with *out, or a negative errno (then nothing was started, and the
 * caller moves the bytes itself).
 */
int pump_start(uv_loop_t *loop, pump_pool *pool, int a, int b, const char *first, size_t first_len,
               const pump_hooks *hooks, void *user, pump_t **out);
/* Stop: no hook but closed is called after this; the duplicates and pipes
 * are closed now. */
void pump_stop(pump_t *p);

#endif
