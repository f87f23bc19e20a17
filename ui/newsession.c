/*
 * newsession.c - the new-session form (n): name, directory (the screen's
 * own, to start with) and profile, and first, when the screen shows other
 * machines ([hosts]), the machine: "here", or a name of [hosts] (to start
 * with, the selected session's).  Enter asks that machine's server for a
 * session the size of a pane, and when it comes the form closes and the
 * session is selected with the focus in its pane, to type into.  A
 * refusal shows in the form, which stays.  This machine's directory means
 * nothing on another: for another machine the form wants one typed.
 */
#include "config.h"

#include "dialog.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct newsession_view {
    form_dialog fd; /* first: the view's head and the fields */
    char error[512]; /* a refused new session */
    bool busy;       /* the request is on its way */
    int first;       /* index of the name field: 1 with a machine field first */
    char cwd[sizeof(((ui_field *)0)->text)]; /* the directory as filled in */
} newsession_view;

/* The host the machine field names ("here" or empty: this machine), or -1. */
static int chosen_host(tui_t *t, const char *text)
{
    if (!text[0] || strcmp(text, "here") == 0)
        return 0;
    for (size_t i = 1; i < t->hosts.n; i++)
        if (strcmp(t->hosts.v[i]->name, text) == 0)
            return (int)i;
    return -1;
}

static const ui_view_ops newsession_ops;

static void on_new_reply(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    tui_t *t = user;
    newsession_view *d = (newsession_view *)view_find(t, &newsession_ops);
    if (!d) /* closed meanwhile: the session starts, and shows in the list */
        return;
    d->busy = false;
    json_t *err = json_object_get(reply, "error");
    if (!reply || err) {
        snprintf(d->error, sizeof d->error, "%s",
                 reply ? json_string_value(json_object_get(err, "message")) : "the server went away");
        tui_redraw_soon(t);
        return;
    }
    json_t *s = json_object_get(reply, "session");
    ui_sessions_update(&t->list, s);
    view_close(t, &d->fd.view);
    int id = (int)json_integer_value(json_object_get(s, "id"));
    tui_select(t, id);
    t->focus = FOCUS_PANE; /* a new shell is for typing into */
}

static void submit(tui_t *t, newsession_view *d)
{
    if (d->busy)
        return;
    ui_field *f = d->fd.form.fields + d->first;
    int host = d->first ? chosen_host(t, d->fd.form.fields[0].text) : 0;
    if (host < 0) {
        char *shown = sanitize_text(d->fd.form.fields[0].text, strlen(d->fd.form.fields[0].text), 64);
        snprintf(d->error, sizeof d->error, "no machine '%s': here, or a name of [hosts]", shown);
        free(shown);
        return;
    }
    if (host > 0 && t->hosts.v[host]->state != HOST_UP) {
        hosts_down_text(t->hosts.v[host], d->error, sizeof d->error);
        return;
    }
    if (host > 0 && (!f[1].text[0] || strcmp(f[1].text, d->cwd) == 0)) {
        snprintf(d->error, sizeof d->error, "directory: which one on %s? (the one filled in is this machine's)",
                 t->hosts.v[host]->name);
        return;
    }
    int rows, cols;
    tui_pane_size(t, &rows, &cols);
    json_t *req = json_pack("{s:s, s:s, s:i, s:i, s:b}", "cmd", "new", "cwd", f[1].text, "rows", rows, "cols", cols,
                            "tty", 1);
    if (f[0].text[0])
        json_object_set_new(req, "name", json_string(f[0].text));
    if (f[2].text[0])
        json_object_set_new(req, "profile", json_string(f[2].text));
    d->busy = true;
    d->error[0] = 0;
    hosts_request_on(t, host, req, on_new_reply, t);
}

static void key(tui_t *t, ui_view *v, const ui_key *k)
{
    newsession_view *d = (newsession_view *)v;
    switch (form_key(&d->fd.form, k)) {
    case FORM_CANCEL: view_close(t, v); return;
    case FORM_SUBMIT: submit(t, d); break;
    case FORM_EDITED: break;
    }
    tui_redraw_soon(t);
}

static void draw(tui_t *t, ui_view *v)
{
    newsession_view *d = (newsession_view *)v;
    ui_rect r = dialog_box(t, 9 + d->first + (d->error[0] ? 2 : 0), 72);
    dialog_title(r, "New session");
    form_draw(&d->fd.form, r);
    /* Help and state below the fields, where the box has the rows. */
    int y = r.y + 6 + d->first, x = r.x + dialog_inset(r), w = r.w - 2 * dialog_inset(r);
    char machines[256] = "machine: here";
    for (size_t i = 1; i < t->hosts.n && strlen(machines) + 70 < sizeof machines; i++)
        snprintf(machines + strlen(machines), sizeof machines - strlen(machines), ", %s", t->hosts.v[i]->name);
    const char *lines[] = {"Tab next field, Enter start, Esc cancel, C-u clear",
                           "profiles: workspace-write, read-only, full, or [profile] ones",
                           d->first ? machines : "", d->busy ? "starting..." : ""};
    for (int i = 0, k = 0; i < 4 && y + k < r.y + r.h; i++)
        if (lines[i][0] || i == 3)
            paint_text(y + k++, x, w, lines[i]);
    if (d->error[0] && y + 3 < r.y + r.h) {
        paint_set(TH_STATE_EXIT_FAIL, TH_DIALOG);
        dialog_wrap(d->error, y + 3, x, w, r.y + r.h - (y + 3), true);
    }
}

static const ui_view_ops newsession_ops = {
    .draw = draw,
    .key = key,
    .cursor = form_dialog_cursor,
    .field = form_dialog_field,
    .paste_dropped = PASTE_NOT_COMMANDS,
    .close = dialog_free,
};

void newsession_open(tui_t *t)
{
    newsession_view *d = view_new(sizeof *d, &newsession_ops);
    ui_form *f = &d->fd.form;
    d->first = t->hosts.n > 1;
    f->nfields = 3 + d->first;
    if (d->first) { /* where: the selected session's machine, to start with */
        const ui_host *h = hosts_of(t, t->selected);
        f->fields[0].label = "machine";
        snprintf(f->fields[0].text, sizeof f->fields[0].text, "%s", h && h->index > 0 ? h->name : "here");
    }
    ui_field *fl = f->fields + d->first;
    fl[0].label = "name";
    fl[1].label = "directory";
    fl[2].label = "profile";
    if (!getcwd(fl[1].text, sizeof fl[1].text))
        snprintf(fl[1].text, sizeof fl[1].text, "~");
    snprintf(d->cwd, sizeof d->cwd, "%s", fl[1].text);
    snprintf(fl[2].text, sizeof fl[2].text, "%s",
             t->conf->sandbox_profile ? t->conf->sandbox_profile : "workspace-write");
    f->field = d->first; /* the name, as before; Shift-Tab goes to the machine */
    view_push(t, &d->fd.view);
}
