/*
 * proxy_pump.c - see proxy_pump.h.
 *
 * Direction d moves bytes from fd[d] into its pipe and from the pipe to
 * fd[1 - d].  A socket is polled readable while its direction's pipe has
 * room, and writable while the other direction's pipe holds bytes.  A
 * splice from a socket into a pipe that already holds bytes can fail with
 * EAGAIN because the pipe's slots are full (a slot per piece of the
 * socket's data, whatever its length), not because the socket is empty:
 * then the socket is left alone until the pipe drained some, or level-
 * triggered polling would spin.  When a direction's source said EOF and
 * its pipe is empty, the other socket gets shutdown(SHUT_WR).
 */
#include "config.h"

#include "net/proxy_pump.h"

#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

struct pump_pool {
    size_t pipe_bytes;
    size_t spare_max, nspare;
    int (*spare)[2];
};

typedef struct direction {
    int pipe[2]; /* [0] read end, [1] write end; -1 when none */
    size_t in_pipe;
    bool pipe_full; /* the last splice into the pipe found no room */
    bool eof;       /* the source said EOF */
    bool shut;      /* the destination got shutdown(SHUT_WR) */
} direction;

struct pump {
    pump_pool *pool;
    pump_hooks hooks;
    void *user;
    int fd[2];
    uv_poll_t poll[2];
    int events[2];
    direction dir[2];
    int first_eof;
    int open_polls;
    bool over; /* ended was called, or pump_stop */
};

pump_pool *pump_pool_new(size_t pipe_bytes, size_t spare_max)
{
    pump_pool *pool = xcalloc(1, sizeof *pool);
    pool->pipe_bytes = pipe_bytes;
    pool->spare_max = spare_max;
    pool->spare = xcalloc(spare_max ? spare_max : 1, sizeof *pool->spare);
    return pool;
}

void pump_pool_free(pump_pool *pool)
{
    if (!pool)
        return;
    for (size_t i = 0; i < pool->nspare; i++) {
        close(pool->spare[i][0]);
        close(pool->spare[i][1]);
    }
    free(pool->spare);
    free(pool);
}

static int pipe_get(pump_pool *pool, int out[2])
{
    if (pool->nspare) {
        pool->nspare--;
        out[0] = pool->spare[pool->nspare][0];
        out[1] = pool->spare[pool->nspare][1];
        return 0;
    }
    if (pipe2(out, O_NONBLOCK | O_CLOEXEC) < 0)
        return -errno;
    /* As large as asked if the kernel allows (pipe-max-size, the user's
     * pipe pages); the default otherwise, which works all the same. */
    (void)fcntl(out[0], F_SETPIPE_SZ, (int)pool->pipe_bytes);
    return 0;
}

/* Only an empty pipe goes back to the pool. */
static void pipe_put(pump_pool *pool, int p[2])
{
    if (p[0] < 0)
        return;
    if (pool->nspare < pool->spare_max) {
        pool->spare[pool->nspare][0] = p[0];
        pool->spare[pool->nspare][1] = p[1];
        pool->nspare++;
    } else {
        close(p[0]);
        close(p[1]);
    }
    p[0] = p[1] = -1;
}

static void pipe_close(int p[2])
{
    if (p[0] >= 0) {
        close(p[0]);
        close(p[1]);
    }
    p[0] = p[1] = -1;
}

static void on_poll(uv_poll_t *h, int status, int events);

static void end(pump_t *p, int error, int side)
{
    if (p->over)
        return;
    p->over = true;
    p->hooks.ended(p->user, error, side);
}

static void update_polls(pump_t *p)
{
    for (int s = 0; s < 2; s++) {
        direction *out = &p->dir[s], *in = &p->dir[1 - s];
        int ev = 0;
        if (!out->eof && !(out->pipe_full && out->in_pipe))
            ev |= UV_READABLE;
        if (in->in_pipe)
            ev |= UV_WRITABLE;
        if (p->over)
            return;
        if (ev == p->events[s])
            continue;
        p->events[s] = ev;
        int r = ev ? uv_poll_start(&p->poll[s], ev, on_poll) : uv_poll_stop(&p->poll[s]);
        if (r < 0) {
            end(p, r, s);
            return;
        }
    }
}

/* Move what can be moved in direction d without blocking.  0, or a
 * negative errno with *side the socket that failed. */
static int run_direction(pump_t *p, int d, int *side)
{
    direction *x = &p->dir[d];
    int src = p->fd[d], dst = p->fd[1 - d];
    size_t cap = p->pool->pipe_bytes;
    /* A bounded number of rounds: a fast sender must not keep the loop
     * from its other connections (the poll fires again next turn). */
    for (int round = 0; round < 16; round++) {
        bool progress = false;
        if (!x->eof && !(x->pipe_full && x->in_pipe)) {
            if (x->pipe[0] < 0) {
                int r = pipe_get(p->pool, x->pipe);
                if (r < 0) {
                    *side = PUMP_SELF; /* out of descriptors, most likely */
                    return r;
                }
            }
            ssize_t n = splice(src, NULL, x->pipe[1], NULL, cap, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
            if (n > 0) {
                x->in_pipe += (size_t)n;
                progress = true;
            } else if (n == 0) {
                x->eof = true;
                if (p->first_eof < 0)
                    p->first_eof = d;
                progress = true;
            } else if (errno == EAGAIN) {
                x->pipe_full = x->in_pipe > 0;
            } else if (errno != EINTR) {
                *side = d;
                return -errno;
            }
        }
        if (x->in_pipe) {
            ssize_t n = splice(x->pipe[0], NULL, dst, NULL, x->in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
            if (n > 0) {
                x->in_pipe -= (size_t)n;
                x->pipe_full = false;
                progress = true;
                p->hooks.moved(p->user, d, (size_t)n);
            } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                *side = 1 - d;
                return -errno;
            }
        }
        if (!x->in_pipe && x->pipe[0] >= 0 && (x->eof || !progress))
            pipe_put(p->pool, x->pipe); /* quiet: an idle tunnel holds no pipe */
        if (x->eof && !x->in_pipe && !x->shut) {
            x->shut = true;
            if (shutdown(dst, SHUT_WR) < 0 && errno != ENOTCONN) {
                *side = 1 - d;
                return -errno;
            }
        }
        if (!progress || p->over)
            return 0;
    }
    return 0;
}

static void pump_run(pump_t *p)
{
    for (int d = 0; d < 2 && !p->over; d++) {
        int side = 0;
        int r = run_direction(p, d, &side);
        if (r < 0) {
            end(p, r, side);
            return;
        }
    }
    if (p->over)
        return;
    if (p->dir[0].shut && p->dir[1].shut) {
        end(p, 0, p->first_eof);
        return;
    }
    update_polls(p);
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    (void)events;
    pump_t *p = h->data;
    if (p->over)
        return;
    if (status < 0) {
        end(p, status, h == &p->poll[0] ? 0 : 1);
        return;
    }
    pump_run(p);
}

static void on_poll_closed(uv_handle_t *h)
{
    pump_t *p = h->data;
    if (--p->open_polls > 0)
        return;
    p->hooks.closed(p->user);
    free(p);
}

int pump_start(uv_loop_t *loop, pump_pool *pool, int a, int b, const char *first, size_t first_len,
               const pump_hooks *hooks, void *user, pump_t **out)
{
    if (first_len > 64 * 1024)
        return -EMSGSIZE;
    pump_t *p = xcalloc(1, sizeof *p);
    p->pool = pool;
    p->hooks = *hooks;
    p->user = user;
    p->first_eof = -1;
    for (int d = 0; d < 2; d++)
        p->dir[d].pipe[0] = p->dir[d].pipe[1] = -1;
    p->fd[0] = fcntl(a, F_DUPFD_CLOEXEC, 0);
    p->fd[1] = p->fd[0] < 0 ? -1 : fcntl(b, F_DUPFD_CLOEXEC, 0);
    int r = p->fd[1] < 0 ? -errno : 0;
    if (r == 0 && first_len) {
        /* Into a fresh pipe: they go to b before anything read from a. */
        r = pipe_get(pool, p->dir[0].pipe);
        if (r == 0) {
            ssize_t n = write(p->dir[0].pipe[1], first, first_len);
            if (n != (ssize_t)first_len)
                r = n < 0 ? -errno : -EAGAIN;
            else
                p->dir[0].in_pipe = first_len;
        }
    }
    for (int s = 0; s < 2 && r == 0; s++) {
        r = uv_poll_init_socket(loop, &p->poll[s], p->fd[s]);
        if (r == 0) {
            p->poll[s].data = p;
            p->open_polls++;
        }
    }
    if (r < 0) {
        for (int d = 0; d < 2; d++)
            pipe_close(p->dir[d].pipe);
        if (p->open_polls == 0) {
            if (p->fd[0] >= 0)
                close(p->fd[0]);
            if (p->fd[1] >= 0)
                close(p->fd[1]);
            free(p);
            return r;
        }
        /* The first poll handle was made: it closes on its own time. */
        p->hooks.closed = NULL;
        pump_stop(p);
        return r;
    }
    *out = p;
    update_polls(p); /* no hook is called before the caller has *out */
    return 0;
}

static void on_poll_closed_quietly(uv_handle_t *h)
{
    pump_t *p = h->data;
    if (--p->open_polls == 0)
        free(p);
}

void pump_stop(pump_t *p)
{
    p->over = true;
    for (int s = 0; s < 2; s++)
        if (s < p->open_polls || p->open_polls == 2)
            uv_close((uv_handle_t *)&p->poll[s], p->hooks.closed ? on_poll_closed : on_poll_closed_quietly);
    /* Not polled any more (uv_close stopped them): the duplicates can go,
     * and the pipes (whatever they held is dropped with the tunnel). */
    for (int s = 0; s < 2; s++)
        if (p->fd[s] >= 0)
            close(p->fd[s]);
    for (int d = 0; d < 2; d++) {
        if (!p->dir[d].in_pipe)
            pipe_put(p->pool, p->dir[d].pipe);
        else
            pipe_close(p->dir[d].pipe);
    }
}
