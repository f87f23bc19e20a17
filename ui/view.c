/*
 * view.c - the stack of open views (view.h): pushing, closing, and what
 * the screen routes to them.  The screen (tui.c, render.c) names no view:
 * a key goes to the top one, a frame draws them all bottom to top, each
 * over what is under it.
 */
#include "config.h"

#include "tui_int.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static size_t index_of(const tui_t *t, const ui_view *v)
{
    for (size_t i = 0; i < t->views.n; i++)
        if (t->views.v[i] == v)
            return i;
    return (size_t)-1;
}

void *view_new(size_t size, const ui_view_ops *ops)
{
    ui_view *v = xcalloc(1, size);
    v->ops = ops;
    return v;
}

void view_push(tui_t *t, ui_view *v)
{
    ui_views *s = &t->views;
    if (index_of(t, v) != (size_t)-1)
        return;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->v = xrealloc(s->v, s->cap * sizeof *s->v);
    }
    size_t at = s->n;
    if (!(v->ops->flags & VIEW_ON_TOP))
        while (at > 0 && (s->v[at - 1]->ops->flags & VIEW_ON_TOP))
            at--;
    memmove(s->v + at + 1, s->v + at, (s->n - at) * sizeof *s->v);
    s->v[at] = v;
    s->n++;
    t->full_redraw = true;
    tui_redraw_soon(t);
}

void view_close(tui_t *t, ui_view *v)
{
    ui_views *s = &t->views;
    size_t i = index_of(t, v);
    if (i == (size_t)-1)
        return;
    memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof *s->v);
    s->n--;
    t->full_redraw = true; /* what it covered */
    tui_redraw_soon(t);
    if (v->ops->close)
        v->ops->close(t, v);
}

ui_view *view_top(const tui_t *t)
{
    return t->views.n ? t->views.v[t->views.n - 1] : NULL;
}

ui_view *view_find(const tui_t *t, const ui_view_ops *ops)
{
    for (size_t i = t->views.n; i-- > 0;)
        if (t->views.v[i]->ops == ops)
            return t->views.v[i];
    return NULL;
}

bool views_key(tui_t *t, const ui_key *k)
{
    ui_view *v = view_top(t);
    if (!v)
        return false;
    if (k->mouse) {
        if (v->ops->flags & VIEW_MOUSE_THROUGH)
            return false;
        if (v->ops->mouse)
            v->ops->mouse(t, v, k);
        return true;
    }
    v->ops->key(t, v, k);
    return true;
}

void views_draw(tui_t *t)
{
    /* By index: a view's drawing never opens or closes one. */
    for (size_t i = 0; i < t->views.n; i++)
        t->views.v[i]->ops->draw(t, t->views.v[i]);
}

bool views_cursor(tui_t *t)
{
    for (size_t i = t->views.n; i-- > 0;) {
        ui_view *v = t->views.v[i];
        if (v->ops->cursor && v->ops->cursor(t, v))
            return true;
    }
    return false;
}

ui_field *views_field(tui_t *t)
{
    ui_view *v = view_top(t);
    return v && v->ops->field ? v->ops->field(t, v) : NULL;
}

const char *views_paste_dropped(const tui_t *t)
{
    ui_view *v = view_top(t);
    return v ? v->ops->paste_dropped : NULL;
}

static void free_data(uv_handle_t *h)
{
    free(h->data);
}

void view_free_with_timer(ui_view *v, uv_timer_t *timer, bool made)
{
    if (!made) {
        free(v);
        return;
    }
    timer->data = v;
    uv_close((uv_handle_t *)timer, free_data);
}

void views_close_all(tui_t *t)
{
    while (t->views.n)
        view_close(t, t->views.v[t->views.n - 1]);
    free(t->views.v);
    t->views = (ui_views){0};
}
