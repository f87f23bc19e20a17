/*
 * confirm.c - a question answered by y, any other key being no: killing
 * the selected session (x), stopping the server (Q), and what another part
 * of the screen asks (tiles.c's clearing of the exited sessions).  Keys
 * typed in the TUI_GUARD_S after it opens are held and never answer it,
 * so "xy" typed ahead never kills.
 */
#include "config.h"

#include "dialog.h"
#include "base/util.h"

#include <stdio.h>

typedef struct confirm_view {
    ui_view view; /* first: the view's head */
    const char *head;
    void (*question)(tui_t *t, int target, char *out, size_t outlen);
    void (*yes)(tui_t *t, int target);
    int target; /* what it is about (a session) */
} confirm_view;

static void key(tui_t *t, ui_view *v, const ui_key *k)
{
    confirm_view *c = (confirm_view *)v;
    if (tui_keys_held(t)) {
        t->held_dropped++; /* typed before the question showed: not an answer */
        return;
    }
    if (k->key == 'y' || k->key == 'Y')
        c->yes(t, c->target);
    view_close(t, v);
}

static void draw(tui_t *t, ui_view *v)
{
    confirm_view *c = (confirm_view *)v;
    char text[512];
    c->question(t, c->target, text, sizeof text);
    int w = t->cols - 2 < 64 ? t->cols - 2 : 64;
    int inner = w - 2 * (w >= 24 ? 2 : 1);
    ui_rect r = dialog_box(t, 4 + dialog_wrap(text, 0, 0, inner, 8, false), 64);
    dialog_title(r, c->head);
    /* title, a blank, the question, the answers, a blank: as many of them
     * as the screen has rows for, the answers always. */
    int top = r.y + 1 + (r.h > 3), answers = r.y + r.h - 1 - (r.h > 4);
    dialog_wrap(text, top, r.x + dialog_inset(r), r.w - 2 * dialog_inset(r), answers - top, true);
    paint_set(TH_DIALOG_SELECTED, TH_DIALOG_SELECTED);
    paint_text(answers, r.x + dialog_inset(r), r.w - 2 * dialog_inset(r),
               tui_keys_held(t) ? " keys held a moment " : " y yes   any other key: no ");
}

static const ui_view_ops confirm_ops = {
    .draw = draw,
    .key = key,
    .cursor = dialog_no_cursor,
    .paste_dropped = PASTE_NOT_COMMANDS,
    .close = dialog_free,
};

void confirm_open(tui_t *t, const char *head, void (*question)(tui_t *t, int target, char *out, size_t outlen),
                  void (*yes)(tui_t *t, int target), int target)
{
    confirm_view *c = view_new(sizeof *c, &confirm_ops);
    c->head = head;
    c->question = question;
    c->yes = yes;
    c->target = target;
    view_push(t, &c->view);
    tui_hold_keys(t); /* "xy" typed ahead never kills */
}

/* ---- kill ------------------------------------------------------------------- */

static void kill_question(tui_t *t, int target, char *out, size_t outlen)
{
    ui_session *s = ui_sessions_find(&t->list, target);
    snprintf(out, outlen, "Kill %s (%s) and every process in it?", s ? s->name : "?", hosts_id(t, target));
}

static void on_kill_reply(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    tui_t *t = user;
    json_t *err = json_object_get(reply, "error");
    if (err)
        tui_message(t, true, "kill: %s", json_string_value(json_object_get(err, "message")));
}

static void kill_yes(tui_t *t, int target)
{
    hosts_request(t, json_pack("{s:s, s:i}", "cmd", "kill", "session", target), on_kill_reply, t);
}

void confirm_kill(tui_t *t)
{
    confirm_open(t, "Kill session", kill_question, kill_yes, t->selected);
}

/* ---- stop the server --------------------------------------------------------- */

static void stop_question(tui_t *t, int target, char *out, size_t outlen)
{
    (void)target;
    int here, elsewhere;
    hosts_live(t, &here, &elsewhere); /* the other machines' servers go on */
    snprintf(out, outlen, "Stop this machine's server and end all %d live sessions here?", here);
}

static void on_shutdown_reply(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    (void)reply;
    tui_quit(user, 0, "corral: the server stopped; every session was ended");
}

static void stop_yes(tui_t *t, int target)
{
    (void)target;
    hosts_request(t, json_pack("{s:s}", "cmd", "shutdown"), on_shutdown_reply, t);
}

void confirm_stop(tui_t *t)
{
    confirm_open(t, "Stop the server", stop_question, stop_yes, 0);
}
