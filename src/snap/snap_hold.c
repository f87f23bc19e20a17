/*
 * snap_hold.c - see snap_hold.h.
 */
#include "config.h"

#include "snap/snap_hold.h"

#include "base/list.h"
#include "server/server.h"
#include "snap/snap_server_int.h"
#include "base/util.h"

#include <stdlib.h>

typedef struct hold {
    link_t node;
    snap_cmd *cmd; /* held */
    snap_hold_fn done;
    void *user;
    uv_timer_t timer;
} hold;

static link_t holds = {&holds, &holds};

static void hold_closed(uv_handle_t *h)
{
    free(h->data);
}

static void fire(hold *h)
{
    link_del(&h->node);
    uv_timer_stop(&h->timer);
    snap_cmd_unref(h->cmd);
    h->cmd = NULL;
    snap_hold_fn done = h->done;
    void *user = h->user;
    uv_close((uv_handle_t *)&h->timer, hold_closed);
    done(user);
}

static void on_timeout(uv_timer_t *t)
{
    fire(t->data);
}

bool snap_hold_reply(session_t *s, snap_hold_fn done, void *user)
{
    snap_sess *x = snap_sess_find(s->id);
    if (!x || !x->exec || !x->n_cmds)
        return false;
    snap_cmd *c = x->cmds[x->n_cmds - 1];
    if (c->state == CMD_DONE || c->state == CMD_DROPPED || snap_queue_stopping())
        return false;
    hold *h = xcalloc(1, sizeof *h);
    h->cmd = c;
    c->refs++;
    h->done = done;
    h->user = user;
    uv_timer_init(server_loop(snap_server()), &h->timer);
    h->timer.data = h;
    uv_timer_start(&h->timer, on_timeout, SNAP_HOLD_MS, 0);
    link_add(&holds, &h->node);
    return true;
}

void snap_hold_record_written(snap_cmd *c)
{
    for (link_t *l = holds.next; l != &holds;) {
        hold *h = link_entry(l, hold, node);
        l = l->next;
        if (h->cmd == c)
            fire(h);
    }
}

void snap_hold_release_all(void)
{
    while (!link_empty(&holds))
        fire(link_entry(holds.next, hold, node));
}
