/*
 * prebuilt.c - the server's pre-built sandboxes: a pool of sb_base, one
 * per plan (sb_base_key), each with the count of commands started from it
 * that still run and a timer that closes it once it has been idle for
 * keep-warm.  A base is never closed while a command of it runs: its
 * placeholders are mount points in that command's view.
 */
#include "config.h"

#include "server/prebuilt.h"
#include "server/log.h"
#include "server/session.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* Bases kept at once; the least recently used idle one goes first. */
#define PREBUILT_MAX 8

struct prebuilt {
    link_t node;
    prebuilt_pool *pool;
    sb_base base;
    char *workspace;
    int users;
    uv_timer_t linger;
    sb_layer_hold layer; /* made ahead for the next command (fd -1: none) */
};

void prebuilt_pool_init(prebuilt_pool *pool, uv_loop_t *loop, uint64_t keep_warm_ms)
{
    memset(pool, 0, sizeof *pool);
    pool->loop = loop;
    link_init(&pool->warm);
    pool->keep_warm_ms = keep_warm_ms;
}

static void freed(uv_handle_t *h)
{
    free(h->data);
}

static void close_base(prebuilt *p)
{
    link_del(&p->node);
    p->pool->n--;
    sb_base_release(&p->base);
    session_release_layer(p->pool->loop, &p->layer);
    free(p->workspace);
    p->linger.data = p;
    uv_close((uv_handle_t *)&p->linger, freed);
}

static void linger_over(uv_timer_t *t)
{
    prebuilt *p = t->data;
    if (p->users == 0)
        close_base(p);
}

sb_base *prebuilt_base(prebuilt *p)
{
    return &p->base;
}

prebuilt *prebuilt_take(prebuilt_pool *pool, const sb_plan *plan)
{
    if (pool->closing || pool->keep_warm_ms == 0 || plan->unconfined)
        return NULL;
    size_t len;
    char *key = sb_base_key(plan, &len);
    if (!key)
        return NULL;
    prebuilt *found = NULL;
    for (link_t *l = pool->warm.next, *next; l != &pool->warm; l = next) {
        next = l->next;
        prebuilt *p = link_entry(l, prebuilt, node);
        bool same = p->base.key_len == len && memcmp(p->base.key, key, len) == 0;
        if (same && p->base.sock >= 0 && p->base.holder.pid > 0)
            found = p;
        else if (p->users == 0 && strcmp(p->workspace, plan->workspace) == 0)
            close_base(p); /* the workspace's plan changed (rules, git state, config ...), or its holder failed */
    }
    if (!found) {
        for (link_t *l = pool->warm.next, *next; pool->n >= PREBUILT_MAX && l != &pool->warm; l = next) {
            next = l->next;
            prebuilt *p = link_entry(l, prebuilt, node);
            if (p->users == 0)
                close_base(p);
        }
        char err[1024];
        found = xcalloc(1, sizeof *found);
        if (pool->n >= PREBUILT_MAX || sb_base_build(plan, &found->base, err, sizeof err) < 0) {
            if (pool->n < PREBUILT_MAX)
                server_log("no pre-built sandbox for %s: %s", plan->workspace, err);
            free(found);
            free(key);
            return NULL;
        }
        found->pool = pool;
        found->workspace = xstrdup(plan->workspace);
        found->layer.fd = -1;
        uv_timer_init(pool->loop, &found->linger);
        found->linger.data = found;
        pool->n++;
    } else {
        link_del(&found->node);
        uv_timer_stop(&found->linger);
    }
    free(key);
    link_add(&pool->warm, &found->node);
    found->users++;
    return found;
}

void prebuilt_take_layer(prebuilt *p, sb_layer_hold *out)
{
    *out = p->layer;
    p->layer.fd = -1;
    p->layer.path = NULL;
}

void prebuilt_make_layer(prebuilt *p, const sb_plan *plan)
{
    if (p->layer.fd >= 0 || p->pool->closing || !sb_layer_made_ahead(plan))
        return;
    char err[512];
    if (sb_layer_acquire(plan, &p->layer, err, sizeof err) < 0)
        p->layer.fd = -1; /* the next launch makes its own, and says why if it cannot */
}

void prebuilt_put(prebuilt *p)
{
    if (--p->users > 0)
        return;
    if (p->pool->closing)
        close_base(p);
    else
        uv_timer_start(&p->linger, linger_over, p->pool->keep_warm_ms, 0);
}

void prebuilt_pool_close(prebuilt_pool *pool)
{
    pool->closing = true;
    for (link_t *l = pool->warm.next, *next; l != &pool->warm; l = next) {
        next = l->next;
        prebuilt *p = link_entry(l, prebuilt, node);
        if (p->users == 0)
            close_base(p);
    }
}

bool prebuilt_reaped(prebuilt_pool *pool, pid_t pid)
{
    for (link_t *l = pool->warm.next; l != &pool->warm; l = l->next) {
        prebuilt *p = link_entry(l, prebuilt, node);
        if (p->base.holder.pid == pid) {
            /* Gone (killed from outside): its commands from now on get
             * sandboxes made from nothing until it is rebuilt. */
            p->base.holder.pid = -1;
            return true;
        }
    }
    return false;
}
