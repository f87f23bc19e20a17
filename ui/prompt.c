/*
 * prompt.c - the search prompt (/ in supervisor focus or scroll mode, and
 * in the timeline): one field holding the last query (t->search),
 * selected, so Enter finds it again and typing replaces it.  Enter takes
 * the query into t->search and runs what the opener gave (the
 * scrollback's search, the timeline's); Esc closes it, and out of scroll
 * mode the scrollback's marks go with it.
 */
#include "config.h"

#include "dialog.h"
#include "base/util.h"

#include <stdio.h>

typedef struct prompt_view {
    form_dialog fd; /* first: the view's head and the field */
    const char *title;
    void (*run)(tui_t *t, void *ctx);
    void *ctx;
} prompt_view;

static void key(tui_t *t, ui_view *v, const ui_key *k)
{
    prompt_view *p = (prompt_view *)v;
    switch (form_key(&p->fd.form, k)) {
    case FORM_CANCEL:
        if (!t->scroll_mode)
            t->nmarks = 0;
        view_close(t, v);
        return;
    case FORM_SUBMIT: {
        void (*run)(tui_t *, void *) = p->run;
        void *ctx = p->ctx;
        ui_field *f = form_dialog_field(t, v);
        snprintf(t->search, sizeof t->search, "%.*s", (int)sizeof t->search - 1, f->text); /* a longer one is cut */
        view_close(t, v); /* the search runs over what is under the prompt */
        run(t, ctx);
        break;
    }
    case FORM_EDITED: break;
    }
    tui_redraw_soon(t);
}

static void draw(tui_t *t, ui_view *v)
{
    prompt_view *p = (prompt_view *)v;
    ui_rect r = dialog_box(t, 4, 72);
    dialog_title(r, p->title);
    form_draw(&p->fd.form, r);
}

static const ui_view_ops prompt_ops = {
    .draw = draw,
    .key = key,
    .cursor = form_dialog_cursor,
    .field = form_dialog_field,
    .paste_dropped = PASTE_NOT_COMMANDS,
    .close = dialog_free,
};

void prompt_open(tui_t *t, const char *title, void (*run)(tui_t *t, void *ctx), void *ctx)
{
    prompt_view *p = view_new(sizeof *p, &prompt_ops);
    p->title = title;
    p->run = run;
    p->ctx = ctx;
    ui_form *f = &p->fd.form;
    f->nfields = 1;
    f->fields[0].label = "search";
    snprintf(f->fields[0].text, sizeof f->fields[0].text, "%s", t->search);
    f->fields[0].replace = t->search[0] != 0;
    view_push(t, &p->fd.view);
}
