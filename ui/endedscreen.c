/*
 * endedscreen.c - an ended session's last screen (endedscreen.h): its
 * recording played into a model of its own, to the end, as `corral replay
 * --speed 0` would leave it.  A recording is hostile data like any output:
 * it only ever reaches the screen through the model, as a live session's
 * output does.
 */
#include "config.h"

#include "tui_int.h"
#include "paint.h"
#include "record/castplay.h"
#include "record/castread.h"
#include "record/sessfiles.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

void endedscreen_free(ui_ended_screen *s)
{
    castplay_free(s->play);
    s->play = NULL;
    s->dir[0] = '\0';
    s->error[0] = '\0';
}

static void load(tui_t *t, ui_ended_screen *s, const ui_ended_session *e)
{
    endedscreen_free(s);
    snprintf(s->dir, sizeof s->dir, "%s", e->key);
    if (e->host) { /* its recording is on its machine: r copies it first */
        const ui_host *h = t->hosts.v[e->host];
        snprintf(s->error, sizeof s->error, "its recording is on %s: r copies it here and replays it, l its timeline",
                 h->name);
        return;
    }
    sessfiles f;
    sessfiles_for(e->dir, &f);
    char err[PATH_MAX + 300];
    castread_t *r = castread_open(f.cast, NULL, NULL, err, sizeof err);
    sessfiles_free(&f);
    castplay_opts o = {.idle_limit = 0, .scrollback = t->conf->scrollback};
    castplay_t *p = r ? castplay_new(r, &o, err, sizeof err) : NULL;
    if (!p || castplay_finish(p, err, sizeof err) < 0) {
        snprintf(s->error, sizeof s->error, "no last screen: %.280s", err);
        castplay_free(p);
        return;
    }
    s->play = p;
}

void endedscreen_draw(tui_t *t, ui_rect r)
{
    const ui_ended_session *e = ended_selected(t);
    ui_ended_screen *s = &t->ended_screen;
    if (!e || r.h < 2 || r.w < 2)
        return;
    if (strcmp(s->dir, e->key) != 0)
        load(t, s, e);
    paint_set(TH_BORDER_FOCUS, TH_BORDER_FOCUS);
    paint_fill(r.y, r.x, r.w);
    char title[300];
    snprintf(title, sizeof title, " %s %s \xc2\xb7 ended \xc2\xb7 its last screen (r replays it, l its timeline, d its "
             "last diff) ", e->name, hosts_id(t, e->host * UI_HOST_STRIDE + e->id));
    paint_text(r.y, r.x, r.w, title);
    ui_rect body = {r.y + 1, r.x, r.h - 1, r.w};
    if (!s->play) {
        paint_set(TH_NORMAL, TH_NORMAL);
        for (int k = 0; k < body.h; k++)
            paint_fill(body.y + k, body.x, body.w);
        char *clean = sanitize_text(s->error, strlen(s->error), sizeof s->error);
        paint_text(body.y, body.x, body.w, clean);
        free(clean);
        return;
    }
    vt_t *vt = castplay_vt(s->play);
    paint_vt(vt, body, pane_first_row(vt, body.h), true, NULL, 0, false);
}
