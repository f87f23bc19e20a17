/*
 * remoterec.c - the timeline, the replay and the last diff of a session
 * of another machine (hosts.h): its records are on that machine, so they
 * are copied here first, through its server's records command, one chunk
 * per reply on the screen's loop (record/reccopy.c: what that server
 * sends is hostile), into a private directory of this screen's (removed
 * when it ends); then the view opens on the copy as on any session's
 * directory.  One copy at a time: asking for another drops the one in
 * flight.  The status bar says what is being copied, and how far.
 */
#include "config.h"

#include "remoterec.h"
#include "tui_int.h"
#include "base/util.h"
#include "protocol/client.h"
#include "protocol/proto.h"
#include "record/reccopy.h"
#include "record/sessdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Files this large show their progress. */
#define PROGRESS_FROM (4 << 20)

struct remoterec {
    char *root;          /* the private directory, made when first needed */
    unsigned gen;        /* the copy in flight; replies of an older one are dropped */
    bool busy;
    ui_review_target target;
    int action;
    remoterec_open_fn open;
    reccopy c;
    bool cast;           /* copying output.cast (after events.jsonl) */
    char dir[sizeof(((ui_review_target *)0)->dir)];
};

typedef struct chunk_ctx {
    tui_t *t;
    unsigned gen;
} chunk_ctx;

static void ask_next(tui_t *t);

/* The session's directory name on its machine: a live one's id there, an
 * ended one's as its server listed it (7.1: ended.c checked it). */
static void record_name(const ui_review_target *target, char *out, size_t n)
{
    if (target->in_server)
        snprintf(out, n, "%d", hosts_server_id(target->id));
    else
        snprintf(out, n, "%.31s", target->dir);
}

static void stop(tui_t *t, const char *why)
{
    remoterec *rr = t->remoterec;
    if (rr->busy)
        reccopy_close(&rr->c, false);
    rr->busy = false;
    rr->gen++;
    if (why)
        tui_message(t, true, "%s", why);
}

static void finished(tui_t *t)
{
    remoterec *rr = t->remoterec;
    rr->busy = false;
    rr->gen++;
    ui_review_target target = rr->target;
    snprintf(target.dir, sizeof target.dir, "%s", rr->dir);
    tui_message(t, false, "%s", "");
    rr->open(t, &target, rr->action);
}

static void on_chunk(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    chunk_ctx *ctx = user;
    tui_t *t = ctx->t;
    remoterec *rr = t->remoterec;
    bool current = rr && rr->busy && ctx->gen == rr->gen;
    free(ctx);
    if (!current)
        return;
    const ui_host *h = hosts_of(t, rr->target.id);
    const char *from = h && h->remote ? h->remote->spec : "?";
    char err[1024];
    if (!reply) {
        snprintf(err, sizeof err, "cannot copy the records of session %s: the link to %s went",
                 hosts_id(t, rr->target.id),
                 h ? h->name : "?");
        stop(t, err);
        return;
    }
    json_t *e = json_object_get(reply, "error");
    if (e) {
        const char *code = json_string_value(json_object_get(e, "code"));
        if (rr->cast && code && strcmp(code, PERR_NOT_FOUND) == 0) {
            reccopy_close(&rr->c, false); /* no recording there: none here, and replay says so */
            finished(t);
            return;
        }
        char *msg = client_field(e, "message", "?");
        snprintf(err, sizeof err, "cannot copy the records of session %s from %s: %s", hosts_id(t, rr->target.id),
                 from, msg);
        free(msg);
        stop(t, err);
        return;
    }
    int more = reccopy_take(&rr->c, reply, from, err, sizeof err);
    if (more < 0) {
        stop(t, err);
        return;
    }
    if (rr->c.size >= PROGRESS_FROM)
        tui_message(t, false, "copying the %s of session %s from %s: %lld of %lld MiB",
                    rr->cast ? "recording" : "log", hosts_id(t, rr->target.id), h ? h->name : "?",
                    rr->c.offset >> 20, rr->c.size >> 20);
    if (more) {
        ask_next(t);
        return;
    }
    reccopy_close(&rr->c, true);
    if (rr->cast) {
        finished(t);
        return;
    }
    /* The log is here; now the recording. */
    char *path = xasprintf("%s/output.cast", rr->dir), name[32];
    record_name(&rr->target, name, sizeof name);
    rr->cast = true;
    int rc = reccopy_open(&rr->c, name, "output.cast", path, err, sizeof err);
    free(path);
    if (rc < 0) {
        rr->busy = false;
        stop(t, err);
        return;
    }
    ask_next(t);
}

static void ask_next(tui_t *t)
{
    remoterec *rr = t->remoterec;
    chunk_ctx *ctx = xcalloc(1, sizeof *ctx);
    ctx->t = t;
    ctx->gen = rr->gen;
    hosts_request_on(t, hosts_index_of(rr->target.id), reccopy_request(&rr->c), on_chunk, ctx);
}

void remoterec_open(tui_t *t, const ui_review_target *target, int action, remoterec_open_fn open)
{
    if (!t->remoterec)
        t->remoterec = xcalloc(1, sizeof *t->remoterec);
    remoterec *rr = t->remoterec;
    stop(t, NULL); /* a copy in flight is not wanted any more */
    char err[1024];
    if (hosts_unreachable(t, target->id)) {
        char why[700];
        hosts_down_text(hosts_of(t, target->id), why, sizeof why);
        tui_message(t, true, "the records of session %s are on its machine: %s", hosts_id(t, target->id), why);
        return;
    }
    if (!rr->root && !(rr->root = reccopy_space_begin(err, sizeof err))) {
        tui_message(t, true, "%s", err);
        return;
    }
    /* A fresh copy each time: a live session's records grow. */
    char name[32], *sessions = xasprintf("%s/corral/sessions", rr->root);
    record_name(target, name, sizeof name);
    sessdir_remove(sessions, name, err, sizeof err);
    snprintf(rr->dir, sizeof rr->dir, "%s/%s", sessions, name);
    free(sessions);
    if (mkdir(rr->dir, 0700) < 0) {
        tui_message(t, true, "cannot create %s: %s", rr->dir, strerror(errno));
        return;
    }
    char *path = xasprintf("%s/events.jsonl", rr->dir);
    int rc = reccopy_open(&rr->c, name, "events.jsonl", path, err, sizeof err);
    free(path);
    if (rc < 0) {
        tui_message(t, true, "%s", err);
        return;
    }
    rr->busy = true;
    rr->cast = false;
    rr->target = *target;
    rr->action = action;
    rr->open = open;
    const ui_host *h = hosts_of(t, target->id);
    tui_message(t, false, "copying the records of session %s from %s...", hosts_id(t, target->id),
                h ? h->name : "?");
    ask_next(t);
}

void remoterec_free(tui_t *t)
{
    remoterec *rr = t->remoterec;
    if (!rr)
        return;
    if (rr->busy)
        reccopy_close(&rr->c, false);
    reccopy_space_end(rr->root);
    free(rr->root);
    free(rr);
    t->remoterec = NULL;
}
