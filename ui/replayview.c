/*
 * replayview.c - see replayview.h.
 */
#include "config.h"

#include "replayview.h"

#include "record/castplay.h"
#include "record/castread.h"
#include "record/sessfiles.h"
#include "base/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_IDLE_LIMIT 2.0
#define MIN_SPEED (1.0 / 64)
#define MAX_SPEED 64.0
/* Output fed in one turn of the loop, at most: keys are read between. */
#define FEED_SLICE ((size_t)256 << 10)
/* The status row's clock is kept this fresh while nothing plays. */
#define CLOCK_S 0.25
/* p this soon after a command's start goes to the one before it. */
#define PREV_GRACE_S 1.5

typedef struct replay_view {
    ui_view view; /* first: the view's head */
    tui_t *t;
    ui_review_target target;
    castplay_t *p;
    double speed;
    bool paused, ended;
    double anchor_play, anchor_wall; /* play time at anchor_wall (or while paused) */
    double stop_at;  /* opened at a command: pause where it ends (its end marker); < 0: never */
    int stop_command;
    uv_timer_t timer;
    bool timer_made;
    char note[200]; /* a warning of the reader, or what a key did */
    double note_until;
} replay_view;

static const ui_view_ops replay_ops;

static double play_now(const replay_view *rv)
{
    if (rv->paused)
        return rv->anchor_play;
    return rv->anchor_play + (now_sec() - rv->anchor_wall) * rv->speed;
}

static void reanchor(replay_view *rv, double play)
{
    rv->anchor_play = play;
    rv->anchor_wall = now_sec();
}

static void set_note(replay_view *rv, const char *msg)
{
    char *clean = sanitize_text(msg, strlen(msg), sizeof rv->note - 1);
    snprintf(rv->note, sizeof rv->note, "%s", clean);
    free(clean);
    rv->note_until = now_sec() + 3;
}

/* A recording cut short (a live session's, caught mid-write) is played up
 * to the cut: said, not fatal. */
static void on_warning(void *user, const char *msg)
{
    set_note(user, msg);
}

static void stop_timer(replay_view *rv)
{
    if (rv->timer_made)
        uv_timer_stop(&rv->timer);
}

/* Off the stack (q, Esc, another replay, the screen going): the player
 * freed, and the view with its timer once the loop has let go of it. */
static void close_view(tui_t *t, ui_view *v)
{
    replay_view *rv = (replay_view *)v;
    stop_timer(rv);
    castplay_free(rv->p);
    t->relayout = true;
    view_free_with_timer(v, &rv->timer, rv->timer_made);
}

/* ---- playing ---------------------------------------------------------------------- */

static void schedule(replay_view *rv, uint64_t ms);

static void on_tick(uv_timer_t *timer)
{
    replay_view *rv = timer->data;
    tui_t *t = rv->t;
    if (rv->paused)
        return;
    double play = play_now(rv);
    bool stop = rv->stop_at >= 0 && play >= rv->stop_at;
    if (stop)
        play = rv->stop_at;
    char err[512];
    int more = castplay_advance(rv->p, play, FEED_SLICE, err, sizeof err);
    tui_redraw_soon(t);
    if (more < 0) {
        tui_message(t, true, "replay of session %s stopped: %s", hosts_id(t, rv->target.id), err);
        rv->paused = true;
        reanchor(rv, castplay_time(rv->p));
        return;
    }
    if (more == 0) {
        rv->ended = rv->paused = true;
        reanchor(rv, castplay_duration(rv->p));
        return;
    }
    if (stop && castplay_time(rv->p) >= rv->stop_at) {
        /* The command asked for has played: paused at its end. */
        char note[96];
        snprintf(note, sizeof note, "paused where command %d ends: space plays on", rv->stop_command);
        set_note(rv, note);
        rv->stop_at = -1;
        rv->paused = true;
        reanchor(rv, castplay_time(rv->p));
        return;
    }
    double next;
    uint64_t ms = 0;
    if (castplay_next_time(rv->p, &next) && next > play) {
        if (rv->stop_at >= 0 && next > rv->stop_at)
            next = rv->stop_at;
        double wait = (next - play) / rv->speed;
        ms = (uint64_t)((wait < CLOCK_S ? wait : CLOCK_S) * 1000) + 1;
    }
    /* else a flood: on at once, after the loop has looked at the keys */
    schedule(rv, ms);
}

static void schedule(replay_view *rv, uint64_t ms)
{
    if (!rv->timer_made) {
        uv_timer_init(rv->t->loop, &rv->timer);
        rv->timer_made = true;
    }
    rv->timer.data = rv;
    uv_timer_start(&rv->timer, on_tick, ms, 0);
}

static void play(replay_view *rv)
{
    rv->paused = false;
    rv->anchor_wall = now_sec();
    schedule(rv, 0);
}

static void pause_here(replay_view *rv)
{
    rv->anchor_play = play_now(rv);
    if (rv->anchor_play > castplay_duration(rv->p))
        rv->anchor_play = castplay_duration(rv->p);
    rv->paused = true;
    stop_timer(rv);
}

/* Go to marker i ((size_t)-1: the start). */
static bool seek(tui_t *t, replay_view *rv, size_t i)
{
    char err[512];
    if (castplay_seek(rv->p, i, err, sizeof err) < 0) {
        tui_message(t, true, "replay of session %s: %s", hosts_id(t, rv->target.id), err);
        return false;
    }
    rv->ended = false;
    rv->stop_at = -1; /* where to stop was for the command it opened at */
    reanchor(rv, castplay_time(rv->p));
    t->full_redraw = true;
    return true;
}

/* n: the next command's start; p: the start of the one playing (or of the
 * one before, right after a start). */
static void jump(tui_t *t, replay_view *rv, bool forward)
{
    size_t target;
    if (!castplay_jump_target(rv->p, forward, play_now(rv), PREV_GRACE_S, &target)) {
        set_note(rv, "no command after this one");
        return;
    }
    if (seek(t, rv, target) && !rv->paused)
        play(rv);
}

void replayview_open(tui_t *t, const ui_review_target *target, int from_command)
{
    sessfiles f;
    sessfiles_for(target->dir, &f);
    char err[PATH_MAX + 300];
    replay_view *rv = view_new(sizeof *rv, &replay_ops);
    rv->t = t;
    castread_t *r = castread_open(f.cast, on_warning, rv, err, sizeof err);
    sessfiles_free(&f);
    if (!r) {
        tui_message(t, true, "no replay of session %s: %s", hosts_id(t, target->id), err);
        free(rv);
        return;
    }
    const cast_header *h = castread_header(r);
    castplay_opts o = {.idle_limit = h->idle_time_limit > 0 ? h->idle_time_limit : DEFAULT_IDLE_LIMIT,
                       .scrollback = t->conf->scrollback};
    castplay_t *p = castplay_new(r, &o, err, sizeof err);
    if (!p || castplay_index(p, err, sizeof err) < 0) {
        tui_message(t, true, "no replay of session %s: %s", hosts_id(t, target->id), err);
        castplay_free(p);
        free(rv);
        return;
    }
    ui_view *old = view_find(t, &replay_ops);
    if (old)
        view_close(t, old);
    rv->p = p;
    view_push(t, &rv->view);
    rv->target = *target;
    rv->speed = 1;
    rv->ended = false;
    reanchor(rv, 0);
    rv->stop_at = -1;
    if (from_command > 0) {
        int i = castplay_find_command(p, from_command);
        if (i < 0) {
            tui_message(t, true, "the recording has no marker of command %d: playing it from the start",
                        from_command);
        } else if (seek(t, rv, (size_t)i)) {
            /* That command, then a pause where it ends (when its end is marked). */
            size_t n;
            const castplay_marker *m = castplay_markers(p, &n);
            for (size_t k = (size_t)i; k < n && rv->stop_at < 0; k++)
                if (m[k].end && m[k].command == from_command)
                    rv->stop_at = m[k].time;
            rv->stop_command = from_command;
        }
    }
    play(rv);
    t->full_redraw = true;
    tui_redraw_soon(t);
}

static void key(tui_t *t, ui_view *v, const ui_key *k)
{
    replay_view *rv = (replay_view *)v;
    switch (k->key) {
    case 'q':
    case 0x1b: view_close(t, v); return;
    case ' ':
        if (rv->ended) {
            if (seek(t, rv, (size_t)-1))
                play(rv); /* from the start again */
        } else if (rv->paused) {
            play(rv);
        } else {
            pause_here(rv);
        }
        break;
    case '+':
    case '=':
    case '-':
    case '_': {
        double now = play_now(rv);
        bool up = k->key == '+' || k->key == '=';
        rv->speed = up ? rv->speed * 2 : rv->speed / 2;
        rv->speed = rv->speed > MAX_SPEED ? MAX_SPEED : rv->speed < MIN_SPEED ? MIN_SPEED : rv->speed;
        reanchor(rv, now);
        if (!rv->paused)
            schedule(rv, 0); /* the next event's wait changed */
        break;
    }
    case 'n':
    case 'p': jump(t, rv, k->key == 'n'); break;
    default: break;
    }
    tui_redraw_soon(t);
}

/* ---- drawing ---------------------------------------------------------------------------- */

static void fmt_time(char *out, size_t n, double s)
{
    long v = s < 0 ? 0 : (long)s;
    if (v >= 3600)
        snprintf(out, n, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
    else
        snprintf(out, n, "%ld:%02ld", v / 60, v % 60);
}

static void status_row(tui_t *t, replay_view *rv, int y)
{
    ui_rect r = t->main;
    char now[32], total[32], speed[32], where[64] = "", text[600];
    double play = play_now(rv), dur = castplay_duration(rv->p);
    fmt_time(now, sizeof now, play < dur ? play : dur);
    fmt_time(total, sizeof total, dur);
    if (rv->speed >= 1)
        snprintf(speed, sizeof speed, "%gx", rv->speed);
    else
        snprintf(speed, sizeof speed, "1/%gx", 1 / rv->speed);
    int cmd = castplay_current_command(rv->p);
    size_t cmds = castplay_command_count(rv->p);
    if (cmd > 0)
        snprintf(where, sizeof where, " \xc2\xb7 command %d of %zu", cmd, cmds);
    else if (cmds > 0)
        snprintf(where, sizeof where, " \xc2\xb7 %zu commands", cmds);
    const char *state = rv->ended ? "the end" : rv->paused ? "paused" : "playing";
    const char *hint = rv->note_until > now_sec() ? rv->note
                       : rv->ended ? "space again  p command  q close"
                                 : "space pause  +/- speed  n/p command  q close";
    snprintf(text, sizeof text, " replay \xc2\xb7 session %s (%s) \xc2\xb7 %s %s / %s \xc2\xb7 %s%s \xc2\xb7 %s",
             hosts_id(t, rv->target.id), rv->target.name, state, now, total, speed, where, hint);
    paint_set(TH_BORDER_FOCUS, TH_BORDER_FOCUS);
    paint_fill(y, r.x, r.w);
    paint_text(y, r.x, r.w, text);
}

static void draw(tui_t *t, ui_view *v)
{
    replay_view *rv = (replay_view *)v;
    ui_rect r = t->main;
    if (r.h < 2)
        return;
    status_row(t, rv, r.y);
    vt_t *vt = castplay_vt(rv->p);
    castplay_take_resized(rv->p); /* drawn whole every frame: what the panes drew under it goes */
    ui_rect body = {r.y + 1, r.x, r.h - 1, r.w};
    paint_vt(vt, body, pane_first_row(vt, body.h), true, NULL, 0, false);
    vt_clear_damage(vt);
}

/* The mouse does nothing over it. */
static const ui_view_ops replay_ops = {
    .draw = draw,
    .key = key,
    .close = close_view,
};
