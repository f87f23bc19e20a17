/*
 * timelineview.c - see timelineview.h.
 */
#include "config.h"

#include "timelineview.h"

#include "dialog.h"
#include "diffview.h"
#include "base/quote.h"
#include "replayview.h"
#include "record/sessfiles.h"
#include "record/timeline.h"
#include "base/utf8.h"
#include "base/util.h"

#include <curses.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* A session the server has is looked at this often for a grown log. */
#define POLL_MS 1000
/* Read again at most every this many times as long as the last read took
 * (and never more than once a second): a large log costs what it costs,
 * but not most of the time. */
#define RELOAD_FACTOR 10
#define KIND_W 10

typedef struct timeline_view {
    ui_view view; /* first: the view's head */
    tui_t *t;
    ui_review_target target;
    sessfiles files;
    timeline_t tl;
    bool loaded;
    char error[PATH_MAX + 200]; /* why it could not be read */
    char warning[64];           /* lines of it skipped (the first one's why: in the status bar) */
    tl_summary sum;
    size_t counts[TL_KIND_COUNT];
    /* the rows shown: indexes into tl.entries of the kind shown */
    size_t *rows;
    size_t nrows;
    int kind;   /* the kind shown, -1: every kind */
    size_t sel, top;
    /* one entry's record, in a box: its lines, and the rows they wrap to */
    bool detail;
    char **dlines;
    int ndlines, dtop;
    char **drows;
    int ndrows, drows_w; /* the width they were wrapped at */
    char dtitle[160];
    /* reading it again */
    uv_timer_t timer;
    bool timer_made;
    off_t size;
    struct timespec mtime;
    double load_s, loaded_at;
} timeline_view;

static const ui_view_ops timeline_ops;

/* ---- reading ------------------------------------------------------------------------ */

static void build_rows(timeline_view *tv)
{
    free(tv->rows);
    tv->rows = xcalloc(tv->tl.n ? tv->tl.n : 1, sizeof *tv->rows);
    tv->nrows = 0;
    for (size_t i = 0; i < tv->tl.n; i++)
        if (tv->kind < 0 || tv->tl.entries[i].kind == (tl_kind)tv->kind)
            tv->rows[tv->nrows++] = i;
}

/* The row showing entry i, or the first one after it (nrows: none). */
static size_t row_of_entry(const timeline_view *tv, size_t i)
{
    size_t lo = 0, hi = tv->nrows;
    while (lo < hi) { /* rows are in entry order */
        size_t mid = (lo + hi) / 2;
        if (tv->rows[mid] < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool stat_log(const timeline_view *tv, off_t *size, struct timespec *mtime)
{
    struct stat st;
    if (stat(tv->files.events, &st) < 0)
        return false;
    *size = st.st_size;
    *mtime = st.st_mtim;
    return true;
}

/* Read the log (again); the selection stays on its entry, or on the last
 * row when it was there (a live log is followed as it grows). */
static void load(tui_t *t, timeline_view *tv)
{
    long sel_line = -1;
    bool at_end = tv->loaded && tv->nrows > 0 && tv->sel + 1 >= tv->nrows;
    if (tv->loaded && tv->sel < tv->nrows)
        sel_line = tv->tl.entries[tv->rows[tv->sel]].line;
    double t0 = now_sec();
    tl_free(&tv->tl);
    memset(tv->counts, 0, sizeof tv->counts);
    stat_log(tv, &tv->size, &tv->mtime);
    char err[PATH_MAX + 200];
    tv->warning[0] = '\0';
    if (tl_load(&tv->tl, tv->files.events, tv->files.approvals, err, sizeof err) < 0) {
        snprintf(tv->error, sizeof tv->error, "%s", err);
        tv->loaded = false;
    } else {
        tv->error[0] = '\0';
        tv->loaded = true;
        if (tv->tl.skipped) /* a line cut short by a crash, say: read past, and said */
            snprintf(tv->warning, sizeof tv->warning, "%zu line%s skipped", tv->tl.skipped, tv->tl.skipped == 1 ? "" : "s");
    }
    for (size_t i = 0; i < tv->tl.n; i++)
        tv->counts[tv->tl.entries[i].kind]++;
    tl_summarize(&tv->tl, &tv->sum);
    build_rows(tv);
    tv->sel = 0;
    if (at_end) {
        tv->sel = tv->nrows ? tv->nrows - 1 : 0;
    } else if (sel_line >= 0) {
        for (size_t r = 0; r < tv->nrows; r++)
            if (tv->tl.entries[tv->rows[r]].line == sel_line)
                tv->sel = r;
    }
    tv->loaded_at = now_sec();
    tv->load_s = tv->loaded_at - t0;
    t->full_redraw = true;
    tui_redraw_soon(t);
}

/* Read again if the log changed and the last read is long enough ago. */
static void maybe_reload(tui_t *t, timeline_view *tv)
{
    if (tv->detail)
        return;
    double wait = tv->load_s * RELOAD_FACTOR > 1.0 ? tv->load_s * RELOAD_FACTOR : 1.0;
    if (now_sec() - tv->loaded_at < wait)
        return;
    off_t size;
    struct timespec mtime;
    if (!stat_log(tv, &size, &mtime))
        return;
    if (size != tv->size || mtime.tv_sec != tv->mtime.tv_sec || mtime.tv_nsec != tv->mtime.tv_nsec)
        load(t, tv);
}

static void on_poll(uv_timer_t *timer)
{
    timeline_view *tv = timer->data;
    maybe_reload(tv->t, tv);
}

void timelineview_session_event(tui_t *t, int session)
{
    timeline_view *tv = (timeline_view *)view_find(t, &timeline_ops);
    if (tv && tv->target.in_server && tv->target.id == session)
        maybe_reload(t, tv);
}

/* ---- opening and closing ------------------------------------------------------------- */

static void free_drows(timeline_view *tv)
{
    for (int i = 0; i < tv->ndrows; i++)
        free(tv->drows[i]);
    free(tv->drows);
    tv->drows = NULL;
    tv->ndrows = tv->drows_w = 0;
}

/* The record's lines cut into rows of w columns (a long command line, a
 * long note), each continuation indented like its line. */
static void wrap_detail(timeline_view *tv, int w)
{
    if (w == tv->drows_w && tv->drows)
        return;
    free_drows(tv);
    tv->drows_w = w;
    for (int i = 0; i < tv->ndlines; i++) {
        const char *p = tv->dlines[i];
        size_t indent = strspn(p, " ");
        int iw = (int)indent + 2 < w / 2 ? (int)indent + 2 : 0;
        bool first = true;
        do {
            int room = first ? w : w - iw;
            size_t n = paint_fit(p, room > 1 ? room : 1);
            if (n == 0 && *p) /* a character wider than the row: on its own */
                n = (size_t)utf8_decode(p, strlen(p), &(int32_t){0});
            tv->drows = xrealloc(tv->drows, (size_t)(tv->ndrows + 1) * sizeof *tv->drows);
            tv->drows[tv->ndrows++] = xasprintf("%*s%.*s", first ? 0 : iw, "", (int)n, p);
            p += n;
            first = false;
        } while (*p);
    }
}

static void close_detail(timeline_view *tv)
{
    free_drows(tv);
    for (int i = 0; i < tv->ndlines; i++)
        free(tv->dlines[i]);
    free(tv->dlines);
    tv->dlines = NULL;
    tv->ndlines = 0;
    tv->dtop = 0;
    tv->detail = false;
}

/* Off the stack (q, Esc, the screen going): the log's data freed, and the
 * view with its timer once the loop has let go of it. */
static void close_view(tui_t *t, ui_view *v)
{
    timeline_view *tv = (timeline_view *)v;
    close_detail(tv);
    tl_free(&tv->tl);
    sessfiles_free(&tv->files);
    free(tv->rows);
    t->relayout = true;
    view_free_with_timer(v, &tv->timer, tv->timer_made);
}

void timelineview_open(tui_t *t, const ui_review_target *target)
{
    timeline_view *tv = view_new(sizeof *tv, &timeline_ops);
    tv->t = t;
    tv->target = *target;
    tv->kind = -1;
    sessfiles_for(target->dir, &tv->files);
    load(t, tv);
    if (!tv->loaded) {
        /* Nothing to show: said where the key was pressed. */
        tui_message(t, true, "no timeline of session %s: %s", hosts_id(t, target->id), tv->error);
        close_view(t, &tv->view);
        return;
    }
    view_push(t, &tv->view);
    if (tv->tl.n_warnings)
        tui_message(t, true, "%s", tv->tl.warnings[0]); /* which line, and what is wrong with it */
    if (target->in_server) {
        uv_timer_init(t->loop, &tv->timer);
        tv->timer_made = true;
        tv->timer.data = tv;
        uv_timer_start(&tv->timer, on_poll, POLL_MS, POLL_MS);
    }
    tv->sel = tv->nrows ? tv->nrows - 1 : 0; /* the latest, as a log is read */
}

/* ---- what Enter opens ------------------------------------------------------------------ */

static const tl_entry *selected_entry(const timeline_view *tv)
{
    return tv->loaded && tv->sel < tv->nrows ? &tv->tl.entries[tv->rows[tv->sel]] : NULL;
}

static void open_detail(tui_t *t, timeline_view *tv, const tl_entry *e)
{
    close_detail(tv);
    json_t *j = tl_entry_json(e);
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!text) {
        tui_message(t, true, "this entry cannot be shown (out of memory)");
        return;
    }
    /* One row per line, what a person could not see made visible (JSON
     * already escaped the control characters; this catches the rest). */
    for (char *p = text; *p;) {
        char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        tv->dlines = xrealloc(tv->dlines, (size_t)(tv->ndlines + 1) * sizeof *tv->dlines);
        tv->dlines[tv->ndlines++] = quote_text_visible(p, n);
        p += n + (nl ? 1 : 0);
    }
    free(text);
    char what[32] = "";
    if (e->kind == TL_COMMAND || e->kind == TL_APPROVAL || e->kind == TL_ESCALATION)
        snprintf(what, sizeof what, " %d", e->number);
    snprintf(tv->dtitle, sizeof tv->dtitle, " %s%s \xc2\xb7 line %ld of the log \xc2\xb7 j/k scroll, q close ",
             tl_kind_name(e->kind), what, e->line);
    tv->detail = true;
    t->full_redraw = true;
}

static void open_diff(tui_t *t, timeline_view *tv, const tl_entry *e)
{
    json_t *rec = tl_entry_json(e);
    diffview_open_command(t, tv->target.id, tv->target.in_server, e->number, rec);
    json_decref(rec);
}

/* The command at or above the selection (its start is where a replay of
 * it begins), or 0. */
static int command_at_or_above(const timeline_view *tv)
{
    const tl_entry *e = selected_entry(tv);
    if (!e)
        return 0;
    for (size_t i = tv->rows[tv->sel] + 1; i-- > 0;)
        if (tv->tl.entries[i].kind == TL_COMMAND)
            return tv->tl.entries[i].number;
    return 0;
}

void timelineview_last_diff(tui_t *t, const ui_review_target *target)
{
    sessfiles f;
    sessfiles_for(target->dir, &f);
    timeline_t tl;
    char err[PATH_MAX + 200];
    if (tl_load(&tl, f.events, NULL, err, sizeof err) < 0) {
        tui_message(t, true, "no diff of session %s: %s", hosts_id(t, target->id), err);
    } else {
        const tl_entry *last = NULL;
        for (size_t i = tl.n; i-- > 0 && !last;)
            if (tl.entries[i].kind == TL_COMMAND)
                last = &tl.entries[i];
        if (!last) {
            tui_message(t, true, "session %s ran no command that was recorded", hosts_id(t, target->id));
        } else {
            json_t *rec = tl_entry_json(last);
            diffview_open_command(t, target->id, target->in_server, last->number, rec);
            json_decref(rec);
        }
    }
    tl_free(&tl);
    sessfiles_free(&f);
}

/* ---- search ------------------------------------------------------------------------------ */

/* Smart case, as the scrollback's search: a capital letter makes it exact. */
static bool ignore_case(const char *q)
{
    for (; *q; q++)
        if (*q >= 'A' && *q <= 'Z')
            return false;
    return true;
}

/* From the row after (direction 1) or before (-1) the selection, wrapping
 * round at the ends with a notice, as the scrollback's n/N do. */
static void search_step(tui_t *t, timeline_view *tv, int direction)
{
    if (!t->search[0] || !tv->nrows)
        return;
    tl_filter f = {.grep = t->search, .ignore_case = ignore_case(t->search)};
    for (size_t k = 1; k <= tv->nrows; k++) {
        size_t r = direction > 0 ? (tv->sel + k) % tv->nrows : (tv->sel + tv->nrows - k % tv->nrows) % tv->nrows;
        if (tl_match(&tv->tl.entries[tv->rows[r]], &f)) {
            bool wrapped = direction > 0 ? r <= tv->sel : r >= tv->sel;
            if (wrapped && r != tv->sel)
                tui_message(t, false, "'%s': %s", t->search,
                            direction > 0 ? "passed the last entry, went on from the first"
                                          : "passed the first entry, went on from the last");
            else if (r == tv->sel)
                tui_message(t, false, "'%s': this is the only match", t->search);
            tv->sel = r;
            t->full_redraw = true;
            tui_redraw_soon(t);
            return;
        }
    }
    tui_message(t, true, "'%s' not found%s", t->search, tv->kind >= 0 ? " among the entries shown (f: kinds)" : "");
}

/* The search prompt's Enter: t->search from the selection on (the
 * prompt was over this view, which stays open under it). */
static void search_run(tui_t *t, void *ctx)
{
    search_step(t, ctx, 1);
}

/* ---- keys ----------------------------------------------------------------------------------- */

static int list_rows(tui_t *t)
{
    int h = t->main.h - 3; /* heading, summary, keys */
    return h > 1 ? h : 1;
}

static void move_to(timeline_view *tv, long r)
{
    if (r >= (long)tv->nrows)
        r = (long)tv->nrows - 1;
    tv->sel = r < 0 ? 0 : (size_t)r;
}

/* The order f goes through the kinds: what a reviewer looks at first. */
static const tl_kind kind_order[TL_KIND_COUNT] = {
    TL_COMMAND, TL_APPROVAL, TL_NETWORK, TL_ESCALATION, TL_REFUSED, TL_DENIAL,
    TL_EXIT, TL_WARNING, TL_RESIZE, TL_SESSION, TL_OTHER,
};

/* The next (dir 1) or previous kind that has entries, after every kind
 * (which comes round between the last and the first). */
static void cycle_kind(tui_t *t, timeline_view *tv, int dir)
{
    const tl_entry *e = selected_entry(tv);
    size_t entry = e ? tv->rows[tv->sel] : 0;
    int at = -1; /* the place in kind_order; -1: every kind */
    for (int i = 0; i < TL_KIND_COUNT; i++)
        if ((int)kind_order[i] == tv->kind)
            at = i;
    for (int step = 0; step <= TL_KIND_COUNT; step++) {
        at += dir;
        if (at >= TL_KIND_COUNT)
            at = -1;
        if (at < -1)
            at = TL_KIND_COUNT - 1;
        if (at == -1 || tv->counts[kind_order[at]])
            break;
    }
    tv->kind = at < 0 ? -1 : (int)kind_order[at];
    build_rows(tv);
    /* The selection stays where it was in time: on its entry, or the
     * nearest of the kind after it (else before). */
    size_t r = row_of_entry(tv, entry);
    tv->sel = r < tv->nrows ? r : tv->nrows ? tv->nrows - 1 : 0;
    tui_message(t, false, "showing %s", tv->kind < 0 ? "every kind of entry" : tl_kind_name((tl_kind)tv->kind));
}

static void detail_key(tui_t *t, timeline_view *tv, const ui_key *k)
{
    int page = t->main.h - 2 > 1 ? t->main.h - 2 : 1;
    switch (k->key) {
    case 'q':
    case 'v':
    case '\r':
    case 0x1b: close_detail(tv); break;
    case 'j':
    case KS_DOWN: tv->dtop++; break;
    case 'k':
    case KS_UP: tv->dtop--; break;
    case ' ':
    case KS_PGDN: tv->dtop += page; break;
    case 'b':
    case KS_PGUP: tv->dtop -= page; break;
    case 'g':
    case KS_HOME: tv->dtop = 0; break;
    case 'G':
    case KS_END: tv->dtop = tv->ndrows; break;
    default: break;
    }
    if (tv->dtop > tv->ndrows - page)
        tv->dtop = tv->ndrows - page;
    if (tv->dtop < 0)
        tv->dtop = 0;
}

/* The wheel moves the selection. */
static void mouse(tui_t *t, ui_view *v, const ui_key *k)
{
    timeline_view *tv = (timeline_view *)v;
    if (k->mouse_event == UM_WHEEL_UP || k->mouse_event == UM_WHEEL_DOWN)
        move_to(tv, (long)tv->sel + (k->mouse_event == UM_WHEEL_UP ? -3 : 3));
    t->full_redraw = true;
    tui_redraw_soon(t);
}

static void key(tui_t *t, ui_view *v, const ui_key *k)
{
    timeline_view *tv = (timeline_view *)v;
    if (tv->detail) {
        detail_key(t, tv, k);
        t->full_redraw = true;
        tui_redraw_soon(t);
        return;
    }
    int page = list_rows(t) > 2 ? list_rows(t) - 1 : 1;
    const tl_entry *e = selected_entry(tv);
    switch (k->key) {
    case 'q':
    case 0x1b: view_close(t, v); return;
    case 'j':
    case KS_DOWN: move_to(tv, (long)tv->sel + 1); break;
    case 'k':
    case KS_UP: move_to(tv, (long)tv->sel - 1); break;
    case ' ':
    case KS_PGDN: move_to(tv, (long)tv->sel + page); break;
    case 'b':
    case KS_PGUP: move_to(tv, (long)tv->sel - page); break;
    case 'g':
    case KS_HOME: move_to(tv, 0); break;
    case 'G':
    case KS_END: move_to(tv, (long)tv->nrows - 1); break;
    case 'f': cycle_kind(t, tv, 1); break;
    case 'F': cycle_kind(t, tv, -1); break;
    case '/': prompt_open(t, "Search the timeline (Enter: find, Esc: cancel)", search_run, tv); return;
    case 'n': search_step(t, tv, 1); break;
    case 'N': search_step(t, tv, -1); break;
    case '\r':
        if (e && e->kind == TL_COMMAND)
            open_diff(t, tv, e);
        else if (e)
            open_detail(t, tv, e);
        break;
    case 'v':
        if (e)
            open_detail(t, tv, e);
        break;
    case 'r': replayview_open(t, &tv->target, command_at_or_above(tv)); break;
    default: break;
    }
    t->full_redraw = true;
    tui_redraw_soon(t);
}

/* ---- drawing ------------------------------------------------------------------------------- */

static void line_at(int y, int x, int w, theme_elem e, const char *text)
{
    paint_set(e, e);
    paint_fill(y, x, w);
    paint_text(y, x, w, text);
}

/* What needs a reviewer's eye stands out, as corral log colours it. */
static theme_elem kind_style(const tl_entry *e)
{
    switch (e->kind) {
    case TL_COMMAND:
        if (e->risk)
            return TH_PROFILE_FULL;
        return e->has_exit && e->exit_code != 0 ? TH_STATE_EXIT_FAIL : TH_STATE_EXIT_OK;
    case TL_APPROVAL: return !e->decided ? TH_STATE_WAITING : e->approved ? TH_STATE_EXIT_OK : TH_STATE_EXIT_FAIL;
    case TL_NETWORK: return e->approved ? TH_STATE_RUNNING : TH_STATE_EXIT_FAIL;
    case TL_ESCALATION: return TH_PROFILE_FULL;
    case TL_REFUSED:
    case TL_DENIAL: return TH_STATE_EXIT_FAIL;
    case TL_WARNING: return TH_STATE_WAITING;
    default: return TH_STATE_IDLE;
    }
}

static void draw_row(tui_t *t, const timeline_view *tv, int y, size_t row)
{
    ui_rect r = t->main;
    const tl_entry *e = &tv->tl.entries[tv->rows[row]];
    theme_elem base = row == tv->sel ? TH_SIDEBAR_SELECTED : TH_NORMAL;
    paint_set(base, base);
    paint_fill(y, r.x, r.w);
    char clock[32] = "";
    time_t secs = (time_t)e->time;
    struct tm tm;
    if (e->time > 0 && localtime_r(&secs, &tm))
        strftime(clock, sizeof clock, "%H:%M:%S", &tm);
    int x = r.x + 1, end = r.x + r.w;
    x += paint_text(y, x, end - x, clock) + 2;
    if (x >= end)
        return;
    paint_set(kind_style(e), base);
    paint_text(y, x, end - x < KIND_W ? end - x : KIND_W, tl_kind_name(e->kind));
    x += KIND_W + 1;
    if (x >= end)
        return;
    char *text = tl_entry_text(&tv->tl, e); /* only for the rows on the screen */
    paint_set(base, base);
    paint_text(y, x, end - x, text);
    free(text);
}

static void heading(tui_t *t, const timeline_view *tv, int y)
{
    ui_rect r = t->main;
    char text[1200], when[64] = "";
    if (tv->tl.created > 0) {
        time_t secs = (time_t)tv->tl.created;
        struct tm tm;
        if (localtime_r(&secs, &tm))
            strftime(when, sizeof when, ", started %Y-%m-%d %H:%M:%S", &tm);
    }
    ui_session *live = tv->target.in_server ? ui_sessions_find(&t->list, tv->target.id) : NULL;
    char state[96];
    if (live && live->running)
        snprintf(state, sizeof state, "running");
    else if (tv->tl.exited && tv->tl.signal) {
        char *sig = quote_text_visible(tv->tl.signal, strlen(tv->tl.signal)), *cut = quote_shorten(sig, 40);
        snprintf(state, sizeof state, "killed by %s", cut);
        free(cut);
        free(sig);
    }
    else if (tv->tl.exited)
        snprintf(state, sizeof state, "exited with code %d", tv->tl.exit_code);
    else
        snprintf(state, sizeof state, "ended (no end in its log)");
    /* The log's own words, as corral log shows them (quote.h). */
    char *client = tv->tl.client ? quote_text_visible(tv->tl.client, strlen(tv->tl.client)) : NULL;
    char *ws = tv->tl.workspace ? quote_text_visible(tv->tl.workspace, strlen(tv->tl.workspace)) : NULL;
    snprintf(text, sizeof text, " timeline \xc2\xb7 session %s (%s) \xc2\xb7 %s \xc2\xb7%s%s%s%s%s",
             hosts_id(t, tv->target.id),
             tv->target.name, state, client ? " by " : "", client ? client : "", ws ? " in " : "", ws ? ws : "", when);
    free(client);
    free(ws);
    char *clean = sanitize_text(text, strlen(text), sizeof text);
    line_at(y, r.x, r.w, TH_BORDER_FOCUS, clean);
    free(clean);
}

static void summary(tui_t *t, const timeline_view *tv, int y)
{
    if (!tv->loaded) { /* read again, and it failed: why, in place of its numbers */
        char *clean = sanitize_text(tv->error, strlen(tv->error), sizeof tv->error);
        line_at(y, t->main.x, t->main.w, TH_STATE_EXIT_FAIL, clean);
        free(clean);
        return;
    }
    char text[400];
    const tl_summary *s = &tv->sum;
    char shown[64];
    if (tv->kind < 0)
        snprintf(shown, sizeof shown, "every kind: %zu", tv->nrows);
    else
        snprintf(shown, sizeof shown, "%s: %zu of %zu", tl_kind_name((tl_kind)tv->kind), tv->nrows, tv->tl.n);
    char missed[48] = "";
    if (s->missed)
        snprintf(missed, sizeof missed, " (%ld not captured)", s->missed);
    snprintf(text, sizeof text,
             " %s \xc2\xb7 %ld command%s +%ld ~%ld -%ld%s%s \xc2\xb7 %ld approval%s \xc2\xb7 %ld connection%s to %ld "
             "host%s%s",
             shown, s->commands, s->commands == 1 ? "" : "s", s->added, s->modified, s->deleted, missed,
             s->risky ? "  RISK" : "", s->approvals, s->approvals == 1 ? "" : "s", s->connections,
             s->connections == 1 ? "" : "s", s->hosts, s->hosts == 1 ? "" : "s",
             t->search[0] ? " \xc2\xb7 n/N: next match" : "");
    ui_rect r = t->main;
    line_at(y, r.x, r.w, TH_BORDER, "");
    int x = r.x;
    if (tv->warning[0]) { /* first, where it is seen */
        char *clean = sanitize_text(tv->warning, strlen(tv->warning), sizeof tv->warning);
        paint_set(TH_STATE_EXIT_FAIL, TH_BORDER);
        x += paint_text(y, x + 1, r.w - 1, clean) + 1;
        free(clean);
        paint_set(TH_BORDER, TH_BORDER);
        if (x < r.x + r.w)
            x += paint_text(y, x, r.x + r.w - x, " \xc2\xb7");
    }
    if (x < r.x + r.w)
        paint_text(y, x, r.x + r.w - x, text);
}

/* Over the list, its heading and summary (the keys' row stays). */
static void draw_detail(tui_t *t, timeline_view *tv)
{
    ui_rect r = t->main;
    wrap_detail(tv, r.w - 2);
    line_at(r.y, r.x, r.w, TH_DIALOG_TITLE, tv->dtitle);
    for (int k = 1; k < r.h - 1; k++) {
        int i = tv->dtop + k - 1;
        line_at(r.y + k, r.x, r.w, TH_DIALOG, "");
        if (i < tv->ndrows)
            paint_text(r.y + k, r.x + 1, r.w - 2, tv->drows[i]);
    }
}

static void draw(tui_t *t, ui_view *v)
{
    timeline_view *tv = (timeline_view *)v;
    if (tv->target.in_server && !ui_sessions_find(&t->list, tv->target.id)) {
        /* The server forgot it meanwhile: its diffs come by the log's ids now. */
        tv->target.in_server = false;
        if (tv->timer_made)
            uv_timer_stop(&tv->timer);
    }
    ui_rect r = t->main;
    if (r.h < 4 || r.w < 10)
        return;
    heading(t, tv, r.y);
    summary(t, tv, r.y + 1);
    int rows = list_rows(t);
    if (tv->sel < tv->top)
        tv->top = tv->sel;
    if (tv->sel >= tv->top + (size_t)rows)
        tv->top = tv->sel - (size_t)rows + 1;
    if (tv->top + (size_t)rows > tv->nrows) /* no empty rows under the last while earlier ones fit */
        tv->top = tv->nrows > (size_t)rows ? tv->nrows - (size_t)rows : 0;
    for (int k = 0; k < rows; k++) {
        size_t row = tv->top + (size_t)k;
        if (row < tv->nrows)
            draw_row(t, tv, r.y + 2 + k, row);
        else
            line_at(r.y + 2 + k, r.x, r.w, TH_NORMAL, k == 0 && !tv->nrows ? " (no entries of this kind)" : "");
    }
    line_at(r.y + r.h - 1, r.x, r.w, TH_BORDER,
            " j/k move  f/F kind  / search  n/N next  Enter diff or record  v record  r replay  q close");
    if (tv->detail)
        draw_detail(t, tv);
}

static const ui_view_ops timeline_ops = {
    .draw = draw,
    .key = key,
    .mouse = mouse,
    .close = close_view,
};
