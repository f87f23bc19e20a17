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

static struct {
    bool active;
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
} R;

bool replayview_active(void)
{
    return R.active;
}

static double play_now(void)
{
    if (R.paused)
        return R.anchor_play;
    return R.anchor_play + (now_sec() - R.anchor_wall) * R.speed;
}

static void reanchor(double play)
{
    R.anchor_play = play;
    R.anchor_wall = now_sec();
}

static void set_note(const char *msg)
{
    char *clean = sanitize_text(msg, strlen(msg), sizeof R.note - 1);
    snprintf(R.note, sizeof R.note, "%s", clean);
    free(clean);
    R.note_until = now_sec() + 3;
}

/* A recording cut short (a live session's, caught mid-write) is played up
 * to the cut: said, not fatal. */
static void on_warning(void *user, const char *msg)
{
    (void)user;
    set_note(msg);
}

static void stop_timer(void)
{
    if (R.timer_made)
        uv_timer_stop(&R.timer);
}

static void close_view(tui_t *t)
{
    stop_timer();
    castplay_free(R.p);
    R.p = NULL;
    R.active = false;
    t->full_redraw = true;
    t->relayout = true;
    tui_redraw_soon(t);
}

void replayview_free(void)
{
    stop_timer();
    castplay_free(R.p);
    R.p = NULL;
    R.active = false;
}

/* ---- playing ---------------------------------------------------------------------- */

static void schedule(tui_t *t, uint64_t ms);

static void on_tick(uv_timer_t *timer)
{
    tui_t *t = timer->data;
    if (!R.active || R.paused)
        return;
    double play = play_now();
    bool stop = R.stop_at >= 0 && play >= R.stop_at;
    if (stop)
        play = R.stop_at;
    char err[512];
    int more = castplay_advance(R.p, play, FEED_SLICE, err, sizeof err);
    tui_redraw_soon(t);
    if (more < 0) {
        tui_message(t, true, "replay of session %d stopped: %s", R.target.id, err);
        R.paused = true;
        reanchor(castplay_time(R.p));
        return;
    }
    if (more == 0) {
        R.ended = R.paused = true;
        reanchor(castplay_duration(R.p));
        return;
    }
    if (stop && castplay_time(R.p) >= R.stop_at) {
        /* The command asked for has played: paused at its end. */
        char note[96];
        snprintf(note, sizeof note, "paused where command %d ends: space plays on", R.stop_command);
        set_note(note);
        R.stop_at = -1;
        R.paused = true;
        reanchor(castplay_time(R.p));
        return;
    }
    double next;
    uint64_t ms = 0;
    if (castplay_next_time(R.p, &next) && next > play) {
        if (R.stop_at >= 0 && next > R.stop_at)
            next = R.stop_at;
        double wait = (next - play) / R.speed;
        ms = (uint64_t)((wait < CLOCK_S ? wait : CLOCK_S) * 1000) + 1;
    }
    /* else a flood: on at once, after the loop has looked at the keys */
    schedule(t, ms);
}

static void schedule(tui_t *t, uint64_t ms)
{
    if (!R.timer_made) {
        uv_timer_init(t->loop, &R.timer);
        R.timer_made = true;
    }
    R.timer.data = t;
    uv_timer_start(&R.timer, on_tick, ms, 0);
}

static void play(tui_t *t)
{
    R.paused = false;
    R.anchor_wall = now_sec();
    schedule(t, 0);
}

static void pause_here(void)
{
    R.anchor_play = play_now();
    if (R.anchor_play > castplay_duration(R.p))
        R.anchor_play = castplay_duration(R.p);
    R.paused = true;
    stop_timer();
}

/* Go to marker i ((size_t)-1: the start). */
static bool seek(tui_t *t, size_t i)
{
    char err[512];
    if (castplay_seek(R.p, i, err, sizeof err) < 0) {
        tui_message(t, true, "replay of session %d: %s", R.target.id, err);
        return false;
    }
    R.ended = false;
    R.stop_at = -1; /* where to stop was for the command it opened at */
    reanchor(castplay_time(R.p));
    t->full_redraw = true;
    return true;
}

/* n: the next command's start; p: the start of the one playing (or of the
 * one before, right after a start). */
static void jump(tui_t *t, bool forward)
{
    size_t target;
    if (!castplay_jump_target(R.p, forward, play_now(), PREV_GRACE_S, &target)) {
        set_note("no command after this one");
        return;
    }
    if (seek(t, target) && !R.paused)
        play(t);
}

void replayview_open(tui_t *t, const ui_review_target *target, int from_command)
{
    sessfiles f;
    sessfiles_for(target->dir, &f);
    char err[PATH_MAX + 300];
    R.note[0] = '\0';
    castread_t *r = castread_open(f.cast, on_warning, NULL, err, sizeof err);
    sessfiles_free(&f);
    if (!r) {
        tui_message(t, true, "no replay of session %d: %s", target->id, err);
        return;
    }
    const cast_header *h = castread_header(r);
    castplay_opts o = {.idle_limit = h->idle_time_limit > 0 ? h->idle_time_limit : DEFAULT_IDLE_LIMIT,
                       .scrollback = t->conf->scrollback};
    castplay_t *p = castplay_new(r, &o, err, sizeof err);
    if (!p || castplay_index(p, err, sizeof err) < 0) {
        tui_message(t, true, "no replay of session %d: %s", target->id, err);
        castplay_free(p);
        return;
    }
    if (R.active)
        close_view(t);
    R.p = p;
    R.active = true;
    R.target = *target;
    R.speed = 1;
    R.ended = false;
    reanchor(0);
    R.stop_at = -1;
    if (from_command > 0) {
        int i = castplay_find_command(p, from_command);
        if (i < 0) {
            tui_message(t, true, "the recording has no marker of command %d: playing it from the start",
                        from_command);
        } else if (seek(t, (size_t)i)) {
            /* That command, then a pause where it ends (when its end is marked). */
            size_t n;
            const castplay_marker *m = castplay_markers(p, &n);
            for (size_t k = (size_t)i; k < n && R.stop_at < 0; k++)
                if (m[k].end && m[k].command == from_command)
                    R.stop_at = m[k].time;
            R.stop_command = from_command;
        }
    }
    play(t);
    t->full_redraw = true;
    tui_redraw_soon(t);
}

void replayview_key(tui_t *t, const ui_key *k)
{
    if (k->mouse)
        return;
    switch (k->key) {
    case 'q':
    case 0x1b: close_view(t); return;
    case ' ':
        if (R.ended) {
            if (seek(t, (size_t)-1))
                play(t); /* from the start again */
        } else if (R.paused) {
            play(t);
        } else {
            pause_here();
        }
        break;
    case '+':
    case '=':
    case '-':
    case '_': {
        double now = play_now();
        bool up = k->key == '+' || k->key == '=';
        R.speed = up ? R.speed * 2 : R.speed / 2;
        R.speed = R.speed > MAX_SPEED ? MAX_SPEED : R.speed < MIN_SPEED ? MIN_SPEED : R.speed;
        reanchor(now);
        if (!R.paused)
            schedule(t, 0); /* the next event's wait changed */
        break;
    }
    case 'n':
    case 'p': jump(t, k->key == 'n'); break;
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

static void status_row(tui_t *t, int y)
{
    ui_rect r = t->main;
    char now[32], total[32], speed[32], where[64] = "", text[600];
    double play = play_now(), dur = castplay_duration(R.p);
    fmt_time(now, sizeof now, play < dur ? play : dur);
    fmt_time(total, sizeof total, dur);
    if (R.speed >= 1)
        snprintf(speed, sizeof speed, "%gx", R.speed);
    else
        snprintf(speed, sizeof speed, "1/%gx", 1 / R.speed);
    int cmd = castplay_current_command(R.p);
    size_t cmds = castplay_command_count(R.p);
    if (cmd > 0)
        snprintf(where, sizeof where, " \xc2\xb7 command %d of %zu", cmd, cmds);
    else if (cmds > 0)
        snprintf(where, sizeof where, " \xc2\xb7 %zu commands", cmds);
    const char *state = R.ended ? "the end" : R.paused ? "paused" : "playing";
    const char *hint = R.note_until > now_sec() ? R.note
                       : R.ended ? "space again  p command  q close"
                                 : "space pause  +/- speed  n/p command  q close";
    snprintf(text, sizeof text, " replay \xc2\xb7 session %d (%s) \xc2\xb7 %s %s / %s \xc2\xb7 %s%s \xc2\xb7 %s",
             R.target.id, R.target.name, state, now, total, speed, where, hint);
    paint_set(TH_BORDER_FOCUS, TH_BORDER_FOCUS);
    paint_fill(y, r.x, r.w);
    paint_text(y, r.x, r.w, text);
}

void replayview_draw(tui_t *t)
{
    if (!R.active)
        return;
    ui_rect r = t->main;
    if (r.h < 2)
        return;
    status_row(t, r.y);
    vt_t *vt = castplay_vt(R.p);
    castplay_take_resized(R.p); /* drawn whole every frame: what the panes drew under it goes */
    ui_rect body = {r.y + 1, r.x, r.h - 1, r.w};
    paint_vt(vt, body, pane_first_row(vt, body.h), true, NULL, 0);
    vt_clear_damage(vt);
}
