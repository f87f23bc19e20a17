/*
 * approval.c - the approval queue as this TUI knows it (the subscribe
 * reply's pending list, then approval and approval_done events), the keys
 * of its dialog and the answers they send (docs/protocol.md;
 * docs/ARCHITECTURE.md, "The gate").  The dialog is a view (view.h) that
 * stays on top: it is pushed over whatever is open when the queue stops
 * being empty, and leaves the stack when it empties.  It is drawn by
 * approval_draw.c.
 *
 * Safety first: the dialog is modal and takes every key while a request
 * is pending, but keys typed within APPROVAL_GUARD_S (approval_draw.c) of
 * it (re)appearing are dropped, so a user typing into a pane cannot answer
 * a request they have not seen; the initial highlight (what Enter
 * confirms) is "deny".
 * Whatever is answered here, the server decides who was first: a refused
 * answer shows an error, and the dialog closes on the approval_done.
 */
#include "config.h"

#include "tui_int.h"
#include "dialog.h"
#include "notify.h"
#include "base/util.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BELL_INTERVAL_S 1.0

static const ui_view_ops approval_ops;

void approvals_init(tui_t *t)
{
    t->appr.view.ops = &approval_ops;
    uv_timer_init(t->loop, &t->appr.guard_timer);
    t->appr.guard_timer.data = t;
    t->appr.highlight = ANS_DENY;
}

static ui_approval *find(tui_t *t, int id)
{
    for (size_t i = 0; i < t->appr.n; i++)
        if (t->appr.v[i].id == id)
            return &t->appr.v[i];
    return NULL;
}

static ui_approval *shown(tui_t *t)
{
    return t->appr.shown ? find(t, t->appr.shown) : NULL;
}

/* Show another request (or none): it gets a fresh guard, the deny
 * highlight and the summary view. */
static void show(tui_t *t, int id)
{
    ui_approvals *q = &t->appr;
    if (q->shown && !id)
        tui_hold_keys(t); /* the dialog went: what was typed at it is not for what is under it */
    if (q->shown != id) {
        q->shown = id;
        q->drawn = false;
        /* Enter starts on a "no" that saves nothing (for a host, d saves a
         * rule). */
        ui_approval *a = id ? find(t, id) : NULL;
        q->highlight = a && approval_is_network(a) ? ANS_STOP : ANS_DENY;
        q->details = false;
        q->details_top = 0;
        q->note = false;
        q->note_field.text[0] = 0;
        q->error[0] = 0;
    }
    t->full_redraw = true; /* the panes under a box that went or changed */
    tui_redraw_soon(t);
    /* Up while a request is pending, over whatever else is open. */
    if (q->n)
        view_push(t, &q->view);
    else
        view_close(t, &q->view);
}

static void add(tui_t *t, json_t *req)
{
    ui_approvals *q = &t->appr;
    int id = (int)json_integer_value(json_object_get(req, "id"));
    if (id <= 0 || find(t, id))
        return;
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 8;
        q->v = xrealloc(q->v, q->cap * sizeof *q->v);
    }
    ui_approval *a = &q->v[q->n++];
    memset(a, 0, sizeof *a);
    a->id = id;
    a->session = (int)json_integer_value(json_object_get(req, "session"));
    a->req = json_incref(req);
    a->seen_at = ui_now();
    a->age0 = json_number_value(json_object_get(req, "age_seconds"));
    /* The server's own deadline ([approvals] timeout as it runs). */
    json_t *exp = json_object_get(req, "expires_in_seconds");
    a->expires0 = json_is_number(exp) ? json_number_value(exp) : -1;
}

static void remove_at(tui_t *t, size_t i)
{
    ui_approvals *q = &t->appr;
    int id = q->v[i].id;
    json_decref(q->v[i].req);
    memmove(q->v + i, q->v + i + 1, (q->n - i - 1) * sizeof *q->v);
    q->n--;
    if (q->shown == id)
        show(t, q->n ? q->v[0].id : 0); /* the oldest waits longest */
    else
        t->full_redraw = true; /* the sidebar and the "n of m" */
    tui_redraw_soon(t);
}

static void remove_id(tui_t *t, int id)
{
    for (size_t i = 0; i < t->appr.n; i++)
        if (t->appr.v[i].id == id) {
            remove_at(t, i);
            return;
        }
}

/* A bell (and the terminal's notification) for each new request, but
 * not a ringing storm when many come. */
static void bell(tui_t *t, const json_t *req)
{
    double now = ui_now();
    if (now - t->appr.last_bell < BELL_INTERVAL_S)
        return;
    t->appr.last_bell = now;
    term_notify(t, req);
}

static void clear_queue(tui_t *t)
{
    for (size_t i = 0; i < t->appr.n; i++)
        json_decref(t->appr.v[i].req);
    t->appr.n = 0;
}

/* host's requests leave the list (not the dialog's stack: show() sees to
 * that). */
static void remove_host(tui_t *t, int host)
{
    ui_approvals *q = &t->appr;
    size_t k = 0;
    for (size_t i = 0; i < q->n; i++) {
        if (hosts_index_of(q->v[i].id) == host)
            json_decref(q->v[i].req);
        else
            q->v[k++] = q->v[i];
    }
    q->n = k;
}

void approvals_load_host(tui_t *t, int host, json_t *reply)
{
    ui_approvals *q = &t->appr;
    size_t before = q->n;
    remove_host(t, host);
    size_t kept = q->n;
    size_t i;
    json_t *req;
    json_array_foreach(json_object_get(reply, "approvals"), i, req)
        add(t, req);
    if (host == 0) { /* the rules files are this machine's */
        free(q->rules_error);
        const char *re = json_string_value(json_object_get(reply, "rules_error"));
        q->rules_error = re && *re ? xstrdup(re) : NULL;
    }
    if (q->n > kept && q->n > before)
        bell(t, q->v[q->n - 1].req);
    show(t, find(t, q->shown) ? q->shown : q->n ? q->v[0].id : 0);
}

void approvals_drop_host(tui_t *t, int host)
{
    ui_approvals *q = &t->appr;
    size_t before = q->n;
    remove_host(t, host);
    if (q->n != before)
        show(t, find(t, q->shown) ? q->shown : q->n ? q->v[0].id : 0);
}

/* After an "always" answer the server reloaded the rules: a fixed or a
 * new rules error shows. */
static void on_rules_reply(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    tui_t *t = user;
    if (!reply || json_object_get(reply, "error"))
        return;
    free(t->appr.rules_error);
    const char *re = json_string_value(json_object_get(reply, "rules_error"));
    t->appr.rules_error = re && *re ? xstrdup(re) : NULL;
    tui_redraw_soon(t);
}

void approvals_event(tui_t *t, const char *name, json_t *ev)
{
    if (strcmp(name, "approval") == 0) {
        json_t *req = json_object_get(ev, "approval");
        size_t before = t->appr.n;
        add(t, req);
        if (t->appr.n == before)
            return;
        bell(t, req);
        if (!shown(t))
            show(t, t->appr.v[t->appr.n - 1].id);
        t->full_redraw = true; /* a sidebar row or mark */
        tui_redraw_now(t);
    } else if (strcmp(name, "rules") == 0) {
        /* The server's list of rules files it could not load changed. */
        free(t->appr.rules_error);
        const char *re = json_string_value(json_object_get(ev, "rules_error"));
        t->appr.rules_error = re && *re ? xstrdup(re) : NULL;
        t->full_redraw = true;
    } else if (strcmp(name, "approval_done") == 0) {
        int id = (int)json_integer_value(json_object_get(ev, "approval"));
        ui_approval *a = find(t, id);
        if (!a)
            return;
        const char *answer = json_string_value(json_object_get(ev, "answer"));
        const char *by = json_string_value(json_object_get(ev, "by"));
        if (answer && strcmp(answer, "persist") == 0)
            hosts_request(t, json_pack("{s:s}", "cmd", "approvals"), on_rules_reply, t);
        bool ours = a->answering;
        remove_id(t, id);
        const char *note = json_string_value(json_object_get(ev, "note"));
        if (ours)
            tui_message(t, false, "request %s: %s", hosts_id(t, id), answer ? answer : "?");
        else if (answer && strcmp(answer, "gone") == 0 && note && *note) {
            /* Withdrawn: why (the agent's call was cancelled, the session
             * ended...), its text made safe for the screen. */
            char *why = sanitize_text(note, strlen(note), 300);
            tui_message(t, false, "request %s withdrawn: %s", hosts_id(t, id), why);
            free(why);
        } else
            tui_message(t, false, "request %s answered elsewhere: %s (by %s)", hosts_id(t, id), answer ? answer : "?",
                        by ? by : "?");
    }
}

void approvals_free(tui_t *t)
{
    clear_queue(t);
    free(t->appr.v);
    t->appr.v = NULL;
    t->appr.cap = 0;
    free(t->appr.rules_error);
    t->appr.rules_error = NULL;
}

const ui_approval *approval_for_session(const tui_t *t, int session)
{
    for (size_t i = 0; i < t->appr.n; i++)
        if (session && t->appr.v[i].session == session)
            return &t->appr.v[i];
    return NULL;
}

/* ---- answers ------------------------------------------------------------------ */

typedef struct answer_ctx {
    tui_t *t;
    int id;
} answer_ctx;

static void on_answer_reply(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    answer_ctx *ctx = user;
    tui_t *t = ctx->t;
    int id = ctx->id;
    free(ctx);
    json_t *err = json_object_get(reply, "error");
    const char *why = !reply ? "the server went away" : err ? json_string_value(json_object_get(err, "message"))
                                                            : NULL;
    ui_approval *a = find(t, id);
    if (!why) {
        if (a)
            remove_id(t, id); /* normally the approval_done came first */
        return;
    }
    if (a && a->id == t->appr.shown) {
        /* Shown until the approval_done that the refusal implies. */
        a->answering = false;
        snprintf(t->appr.error, sizeof t->appr.error, "not answered: %s", why ? why : "refused");
        tui_redraw_soon(t);
    } else {
        tui_message(t, true, "request %s: %s", hosts_id(t, id), why ? why : "refused");
    }
}

static void send_answer(tui_t *t, ui_approval *a, ui_answer ans, const char *note)
{
    static const char *const scopes[] = {[ANS_ONCE] = "once", [ANS_SESSION] = "session", [ANS_PERSIST] = "persist"};
    json_t *req;
    if (ans == ANS_ONCE || ans == ANS_SESSION || ans == ANS_PERSIST)
        req = json_pack("{s:s, s:i, s:s}", "cmd", "approve", "approval", a->id, "scope", scopes[ans]);
    else if (approval_is_network(a)) /* d saves a deny rule; n denies this time */
        req = json_pack("{s:s, s:i, s:b}", "cmd", "deny", "approval", a->id, "persist", ans == ANS_DENY);
    else
        req = json_pack("{s:s, s:i, s:b}", "cmd", "deny", "approval", a->id, "stop", ans == ANS_STOP);
    if (note && *note)
        json_object_set_new(req, "note", json_string(note));
    if (t->appr.answer_key[0])
        json_object_set_new(req, "key", json_string(t->appr.answer_key));
    answer_ctx *ctx = xcalloc(1, sizeof *ctx);
    ctx->t = t;
    ctx->id = a->id;
    a->answering = true;
    t->appr.error[0] = 0;
    hosts_request(t, req, on_answer_reply, ctx);
    tui_redraw_soon(t);
}

static void choose(tui_t *t, ui_approval *a, ui_answer ans)
{
    if ((ans == ANS_PERSIST && !approval_can_persist(a)) || (ans == ANS_NOTE && approval_is_network(a)))
        return;
    if (ans == ANS_NOTE) {
        t->appr.note = true;
        t->appr.error[0] = 0;
        t->appr.details = false;
        t->appr.note_field.text[0] = 0;
        t->full_redraw = true;
        tui_redraw_soon(t);
        return;
    }
    send_answer(t, a, ans, NULL);
}

static void move_highlight(tui_t *t, ui_approval *a, int delta)
{
    ui_answer opts[ANS_COUNT];
    int n = approval_options(a, opts), at = 0;
    for (int i = 0; i < n; i++)
        if (opts[i] == t->appr.highlight)
            at = i;
    at = (at + delta + n) % n;
    t->appr.highlight = opts[at];
    tui_redraw_soon(t);
}

/* Tab: the next pending request (Shift-Tab the one before). */
static void cycle(tui_t *t, int delta)
{
    ui_approvals *q = &t->appr;
    if (q->n < 2)
        return;
    size_t i = 0;
    while (i < q->n && q->v[i].id != q->shown)
        i++;
    i = (size_t)((int)i + (int)q->n + delta) % q->n;
    show(t, q->v[i].id);
}

static void note_key(tui_t *t, ui_approval *a, const ui_key *k)
{
    ui_field *f = &t->appr.note_field;
    switch (k->key) {
    case 0x1b: /* back to the options: nothing was answered */
        t->appr.note = false;
        t->full_redraw = true;
        break;
    case '\r':
        send_answer(t, a, ANS_NOTE, f->text);
        break;
    case 0x7f:
    case 0x08: field_backspace(f); break;
    case 0x15: f->text[0] = 0; break; /* C-u */
    default:
        if (k->key >= 0x20 && k->key < KEY_SPECIAL && k->key != 0x7f)
            field_insert(f, k->key);
        break;
    }
    tui_redraw_soon(t);
}

/* Keys of the details view: scrolling and back; answers as in the summary. */
static bool details_key(tui_t *t, const ui_key *k)
{
    ui_approvals *q = &t->appr;
    int step = k->key == KS_PGDN ? 10 : k->key == KS_PGUP ? -10 : 0;
    if (k->key == KS_DOWN || k->key == 'j')
        step = 1;
    else if (k->key == KS_UP || k->key == 'k')
        step = -1;
    if (step) {
        q->details_top = q->details_top + step < 0 ? 0 : q->details_top + step; /* clamped when drawn */
    } else if (k->key == 'v' || k->key == 0x1b || k->key == 'q') {
        q->details = false; /* Esc here goes back: it never answers from this view */
    } else {
        return false;
    }
    t->full_redraw = true;
    tui_redraw_soon(t);
    return true;
}

static void key(tui_t *t, ui_view *v, const ui_key *k)
{
    (void)v;
    ui_approvals *q = &t->appr;
    ui_approval *a = shown(t);
    if (!a && q->n)
        show(t, q->v[0].id);
    if (!a || a->answering)
        return;
    if (approval_held(t))
        return; /* typed ahead: never an answer to something unseen */
    if (q->note) {
        note_key(t, a, k); /* the answer's key stays the "e" that opened it */
        return;
    }
    /* Which key answers, for the log: the letter or digit, Enter, Esc. */
    if (k->key == '\r')
        snprintf(q->answer_key, sizeof q->answer_key, "Enter");
    else if (k->key == 0x1b)
        snprintf(q->answer_key, sizeof q->answer_key, "Esc");
    else if (k->key > 0x20 && k->key < 0x7f)
        snprintf(q->answer_key, sizeof q->answer_key, "%c", (char)k->key);
    else
        q->answer_key[0] = 0;
    if (q->details && details_key(t, k))
        return;
    ui_answer opts[ANS_COUNT];
    int nopts = approval_options(a, opts);
    switch (k->key) {
    case '\t': cycle(t, 1); return;
    case KS_BTAB: cycle(t, -1); return;
    case KS_UP:
    case 'k': move_highlight(t, a, -1); return;
    case KS_DOWN:
    case 'j': move_highlight(t, a, 1); return;
    case '\r':
        if (!q->details)
            choose(t, a, q->highlight);
        return;
    case 'v':
        q->details = true;
        q->details_top = 0;
        t->full_redraw = true;
        tui_redraw_soon(t);
        return;
    case 'y': choose(t, a, ANS_ONCE); return;
    case 'a': choose(t, a, ANS_SESSION); return;
    case 'p': choose(t, a, ANS_PERSIST); return;
    case 'd': choose(t, a, ANS_DENY); return;
    case 'e': choose(t, a, ANS_NOTE); return;
    case 'n':
    case 0x1b: choose(t, a, ANS_STOP); return;
    default:
        if (k->key >= '1' && k->key <= '9' && (int)(k->key - '1') < nopts)
            choose(t, a, opts[k->key - '1']);
        return;
    }
}

/* The note being typed takes a paste, once the guard is over. */
static ui_field *field(tui_t *t, ui_view *v)
{
    (void)v;
    return t->appr.note && !approval_held(t) ? &t->appr.note_field : NULL;
}

/* Modal and on top: every key is its own, the mouse does nothing, and a
 * paste goes into the note or nowhere. */
static const ui_view_ops approval_ops = {
    .flags = VIEW_ON_TOP,
    .draw = approval_draw,
    .key = key,
    .cursor = approval_cursor,
    .field = field,
    .paste_dropped = "a paste is never an answer: it was dropped",
};
