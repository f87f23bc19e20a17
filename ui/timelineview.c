/*
 * timelineview.c - see timelineview.h.
 */
#include "config.h"

#include "timelineview.h"

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

static struct {
    bool active;
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
} V = {.kind = -1};

bool timelineview_active(void)
{
    return V.active;
}

/* ---- reading ------------------------------------------------------------------------ */

static void build_rows(void)
{
    free(V.rows);
    V.rows = xcalloc(V.tl.n ? V.tl.n : 1, sizeof *V.rows);
    V.nrows = 0;
    for (size_t i = 0; i < V.tl.n; i++)
        if (V.kind < 0 || V.tl.entries[i].kind == (tl_kind)V.kind)
            V.rows[V.nrows++] = i;
}

/* The row showing entry i, or the first one after it (nrows: none). */
static size_t row_of_entry(size_t i)
{
    size_t lo = 0, hi = V.nrows;
    while (lo < hi) { /* rows are in entry order */
        size_t mid = (lo + hi) / 2;
        if (V.rows[mid] < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool stat_log(off_t *size, struct timespec *mtime)
{
    struct stat st;
    if (stat(V.files.events, &st) < 0)
        return false;
    *size = st.st_size;
    *mtime = st.st_mtim;
    return true;
}

/* Read the log (again); the selection stays on its entry, or on the last
 * row when it was there (a live log is followed as it grows). */
static void load(tui_t *t)
{
    long sel_line = -1;
    bool at_end = V.loaded && V.nrows > 0 && V.sel + 1 >= V.nrows;
    if (V.loaded && V.sel < V.nrows)
        sel_line = V.tl.entries[V.rows[V.sel]].line;
    double t0 = now_sec();
    tl_free(&V.tl);
    memset(V.counts, 0, sizeof V.counts);
    stat_log(&V.size, &V.mtime);
    char err[PATH_MAX + 200];
    V.warning[0] = '\0';
    if (tl_load(&V.tl, V.files.events, V.files.approvals, err, sizeof err) < 0) {
        snprintf(V.error, sizeof V.error, "%s", err);
        V.loaded = false;
    } else {
        V.error[0] = '\0';
        V.loaded = true;
        if (V.tl.skipped) /* a line cut short by a crash, say: read past, and said */
            snprintf(V.warning, sizeof V.warning, "%zu line%s skipped", V.tl.skipped, V.tl.skipped == 1 ? "" : "s");
    }
    for (size_t i = 0; i < V.tl.n; i++)
        V.counts[V.tl.entries[i].kind]++;
    tl_summarize(&V.tl, &V.sum);
    build_rows();
    V.sel = 0;
    if (at_end) {
        V.sel = V.nrows ? V.nrows - 1 : 0;
    } else if (sel_line >= 0) {
        for (size_t r = 0; r < V.nrows; r++)
            if (V.tl.entries[V.rows[r]].line == sel_line)
                V.sel = r;
    }
    V.loaded_at = now_sec();
    V.load_s = V.loaded_at - t0;
    t->full_redraw = true;
    tui_redraw_soon(t);
}

/* Read again if the log changed and the last read is long enough ago. */
static void maybe_reload(tui_t *t)
{
    if (!V.active || V.detail)
        return;
    double wait = V.load_s * RELOAD_FACTOR > 1.0 ? V.load_s * RELOAD_FACTOR : 1.0;
    if (now_sec() - V.loaded_at < wait)
        return;
    off_t size;
    struct timespec mtime;
    if (!stat_log(&size, &mtime))
        return;
    if (size != V.size || mtime.tv_sec != V.mtime.tv_sec || mtime.tv_nsec != V.mtime.tv_nsec)
        load(t);
}

static void on_poll(uv_timer_t *timer)
{
    maybe_reload(timer->data);
}

void timelineview_session_event(tui_t *t, int session)
{
    if (V.active && V.target.in_server && V.target.id == session)
        maybe_reload(t);
}

/* ---- opening and closing ------------------------------------------------------------- */

static void free_drows(void)
{
    for (int i = 0; i < V.ndrows; i++)
        free(V.drows[i]);
    free(V.drows);
    V.drows = NULL;
    V.ndrows = V.drows_w = 0;
}

/* The record's lines cut into rows of w columns (a long command line, a
 * long note), each continuation indented like its line. */
static void wrap_detail(int w)
{
    if (w == V.drows_w && V.drows)
        return;
    free_drows();
    V.drows_w = w;
    for (int i = 0; i < V.ndlines; i++) {
        const char *p = V.dlines[i];
        size_t indent = strspn(p, " ");
        int iw = (int)indent + 2 < w / 2 ? (int)indent + 2 : 0;
        bool first = true;
        do {
            int room = first ? w : w - iw;
            size_t n = paint_fit(p, room > 1 ? room : 1);
            if (n == 0 && *p) /* a character wider than the row: on its own */
                n = (size_t)utf8_decode(p, strlen(p), &(int32_t){0});
            V.drows = xrealloc(V.drows, (size_t)(V.ndrows + 1) * sizeof *V.drows);
            V.drows[V.ndrows++] = xasprintf("%*s%.*s", first ? 0 : iw, "", (int)n, p);
            p += n;
            first = false;
        } while (*p);
    }
}

static void close_detail(void)
{
    free_drows();
    for (int i = 0; i < V.ndlines; i++)
        free(V.dlines[i]);
    free(V.dlines);
    V.dlines = NULL;
    V.ndlines = 0;
    V.dtop = 0;
    V.detail = false;
}

static void reset(void)
{
    close_detail();
    tl_free(&V.tl);
    sessfiles_free(&V.files);
    free(V.rows);
    V.rows = NULL;
    V.nrows = 0;
    V.loaded = false;
    V.error[0] = V.warning[0] = '\0';
    if (V.timer_made)
        uv_timer_stop(&V.timer);
}

static void close_view(tui_t *t)
{
    reset();
    V.active = false;
    t->full_redraw = true;
    t->relayout = true;
    tui_redraw_soon(t);
}

void timelineview_open(tui_t *t, const ui_review_target *target)
{
    reset();
    V.active = true;
    V.target = *target;
    V.kind = -1;
    V.sel = V.top = 0;
    sessfiles_for(target->dir, &V.files);
    load(t);
    if (!V.loaded) {
        /* Nothing to show: said where the key was pressed. */
        tui_message(t, true, "no timeline of session %d: %s", target->id, V.error);
        close_view(t);
        return;
    }
    if (V.tl.n_warnings)
        tui_message(t, true, "%s", V.tl.warnings[0]); /* which line, and what is wrong with it */
    if (target->in_server) {
        if (!V.timer_made) {
            uv_timer_init(t->loop, &V.timer);
            V.timer_made = true;
        }
        V.timer.data = t;
        uv_timer_start(&V.timer, on_poll, POLL_MS, POLL_MS);
    }
    V.sel = V.nrows ? V.nrows - 1 : 0; /* the latest, as a log is read */
}

void timelineview_free(void)
{
    reset();
    V.active = false;
}

/* ---- what Enter opens ------------------------------------------------------------------ */

static const tl_entry *selected_entry(void)
{
    return V.loaded && V.sel < V.nrows ? &V.tl.entries[V.rows[V.sel]] : NULL;
}

static void open_detail(tui_t *t, const tl_entry *e)
{
    close_detail();
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
        V.dlines = xrealloc(V.dlines, (size_t)(V.ndlines + 1) * sizeof *V.dlines);
        V.dlines[V.ndlines++] = quote_text_visible(p, n);
        p += n + (nl ? 1 : 0);
    }
    free(text);
    char what[32] = "";
    if (e->kind == TL_COMMAND || e->kind == TL_APPROVAL || e->kind == TL_ESCALATION)
        snprintf(what, sizeof what, " %d", e->number);
    snprintf(V.dtitle, sizeof V.dtitle, " %s%s \xc2\xb7 line %ld of the log \xc2\xb7 j/k scroll, q close ",
             tl_kind_name(e->kind), what, e->line);
    V.detail = true;
    t->full_redraw = true;
}

static void open_diff(tui_t *t, const tl_entry *e)
{
    json_t *rec = tl_entry_json(e);
    diffview_open_command(t, V.target.id, V.target.in_server, e->number, rec);
    json_decref(rec);
}

/* The command at or above the selection (its start is where a replay of
 * it begins), or 0. */
static int command_at_or_above(void)
{
    const tl_entry *e = selected_entry();
    if (!e)
        return 0;
    for (size_t i = V.rows[V.sel] + 1; i-- > 0;)
        if (V.tl.entries[i].kind == TL_COMMAND)
            return V.tl.entries[i].number;
    return 0;
}

void timelineview_last_diff(tui_t *t, const ui_review_target *target)
{
    sessfiles f;
    sessfiles_for(target->dir, &f);
    timeline_t tl;
    char err[PATH_MAX + 200];
    if (tl_load(&tl, f.events, NULL, err, sizeof err) < 0) {
        tui_message(t, true, "no diff of session %d: %s", target->id, err);
    } else {
        const tl_entry *last = NULL;
        for (size_t i = tl.n; i-- > 0 && !last;)
            if (tl.entries[i].kind == TL_COMMAND)
                last = &tl.entries[i];
        if (!last) {
            tui_message(t, true, "session %d ran no command that was recorded", target->id);
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
static void search_step(tui_t *t, int direction)
{
    if (!t->search[0] || !V.nrows)
        return;
    tl_filter f = {.grep = t->search, .ignore_case = ignore_case(t->search)};
    for (size_t k = 1; k <= V.nrows; k++) {
        size_t r = direction > 0 ? (V.sel + k) % V.nrows : (V.sel + V.nrows - k % V.nrows) % V.nrows;
        if (tl_match(&V.tl.entries[V.rows[r]], &f)) {
            bool wrapped = direction > 0 ? r <= V.sel : r >= V.sel;
            if (wrapped && r != V.sel)
                tui_message(t, false, "'%s': %s", t->search,
                            direction > 0 ? "passed the last entry, went on from the first"
                                          : "passed the first entry, went on from the last");
            else if (r == V.sel)
                tui_message(t, false, "'%s': this is the only match", t->search);
            V.sel = r;
            t->full_redraw = true;
            tui_redraw_soon(t);
            return;
        }
    }
    tui_message(t, true, "'%s' not found%s", t->search, V.kind >= 0 ? " among the entries shown (f: kinds)" : "");
}

void timelineview_search(tui_t *t)
{
    search_step(t, 1);
}

/* ---- keys ----------------------------------------------------------------------------------- */

static int list_rows(tui_t *t)
{
    int h = t->main.h - 3; /* heading, summary, keys */
    return h > 1 ? h : 1;
}

static void move_to(long r)
{
    if (r >= (long)V.nrows)
        r = (long)V.nrows - 1;
    V.sel = r < 0 ? 0 : (size_t)r;
}

/* The order f goes through the kinds: what a reviewer looks at first. */
static const tl_kind kind_order[TL_KIND_COUNT] = {
    TL_COMMAND, TL_APPROVAL, TL_NETWORK, TL_ESCALATION, TL_REFUSED, TL_DENIAL,
    TL_EXIT, TL_WARNING, TL_RESIZE, TL_SESSION, TL_OTHER,
};

/* The next (dir 1) or previous kind that has entries, after every kind
 * (which comes round between the last and the first). */
static void cycle_kind(tui_t *t, int dir)
{
    const tl_entry *e = selected_entry();
    size_t entry = e ? V.rows[V.sel] : 0;
    int at = -1; /* the place in kind_order; -1: every kind */
    for (int i = 0; i < TL_KIND_COUNT; i++)
        if ((int)kind_order[i] == V.kind)
            at = i;
    for (int step = 0; step <= TL_KIND_COUNT; step++) {
        at += dir;
        if (at >= TL_KIND_COUNT)
            at = -1;
        if (at < -1)
            at = TL_KIND_COUNT - 1;
        if (at == -1 || V.counts[kind_order[at]])
            break;
    }
    V.kind = at < 0 ? -1 : (int)kind_order[at];
    build_rows();
    /* The selection stays where it was in time: on its entry, or the
     * nearest of the kind after it (else before). */
    size_t r = row_of_entry(entry);
    V.sel = r < V.nrows ? r : V.nrows ? V.nrows - 1 : 0;
    tui_message(t, false, "showing %s", V.kind < 0 ? "every kind of entry" : tl_kind_name((tl_kind)V.kind));
}

static void detail_key(tui_t *t, const ui_key *k)
{
    int page = t->main.h - 2 > 1 ? t->main.h - 2 : 1;
    switch (k->key) {
    case 'q':
    case 'v':
    case '\r':
    case 0x1b: close_detail(); break;
    case 'j':
    case KS_DOWN: V.dtop++; break;
    case 'k':
    case KS_UP: V.dtop--; break;
    case ' ':
    case KS_PGDN: V.dtop += page; break;
    case 'b':
    case KS_PGUP: V.dtop -= page; break;
    case 'g':
    case KS_HOME: V.dtop = 0; break;
    case 'G':
    case KS_END: V.dtop = V.ndrows; break;
    default: break;
    }
    if (V.dtop > V.ndrows - page)
        V.dtop = V.ndrows - page;
    if (V.dtop < 0)
        V.dtop = 0;
}

void timelineview_key(tui_t *t, const ui_key *k)
{
    if (k->mouse) {
        if (k->mouse_event == UM_WHEEL_UP || k->mouse_event == UM_WHEEL_DOWN)
            move_to((long)V.sel + (k->mouse_event == UM_WHEEL_UP ? -3 : 3));
        t->full_redraw = true;
        tui_redraw_soon(t);
        return;
    }
    if (V.detail) {
        detail_key(t, k);
        t->full_redraw = true;
        tui_redraw_soon(t);
        return;
    }
    int page = list_rows(t) > 2 ? list_rows(t) - 1 : 1;
    const tl_entry *e = selected_entry();
    switch (k->key) {
    case 'q':
    case 0x1b: close_view(t); return;
    case 'j':
    case KS_DOWN: move_to((long)V.sel + 1); break;
    case 'k':
    case KS_UP: move_to((long)V.sel - 1); break;
    case ' ':
    case KS_PGDN: move_to((long)V.sel + page); break;
    case 'b':
    case KS_PGUP: move_to((long)V.sel - page); break;
    case 'g':
    case KS_HOME: move_to(0); break;
    case 'G':
    case KS_END: move_to((long)V.nrows - 1); break;
    case 'f': cycle_kind(t, 1); break;
    case 'F': cycle_kind(t, -1); break;
    case '/': dialog_open(t, DLG_SEARCH); return;
    case 'n': search_step(t, 1); break;
    case 'N': search_step(t, -1); break;
    case '\r':
        if (e && e->kind == TL_COMMAND)
            open_diff(t, e);
        else if (e)
            open_detail(t, e);
        break;
    case 'v':
        if (e)
            open_detail(t, e);
        break;
    case 'r': replayview_open(t, &V.target, command_at_or_above()); break;
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

static void draw_row(tui_t *t, int y, size_t row)
{
    ui_rect r = t->main;
    const tl_entry *e = &V.tl.entries[V.rows[row]];
    theme_elem base = row == V.sel ? TH_SIDEBAR_SELECTED : TH_NORMAL;
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
    char *text = tl_entry_text(&V.tl, e); /* only for the rows on the screen */
    paint_set(base, base);
    paint_text(y, x, end - x, text);
    free(text);
}

static void heading(tui_t *t, int y)
{
    ui_rect r = t->main;
    char text[1200], when[64] = "";
    if (V.tl.created > 0) {
        time_t secs = (time_t)V.tl.created;
        struct tm tm;
        if (localtime_r(&secs, &tm))
            strftime(when, sizeof when, ", started %Y-%m-%d %H:%M:%S", &tm);
    }
    ui_session *live = V.target.in_server ? ui_sessions_find(&t->list, V.target.id) : NULL;
    char state[96];
    if (live && live->running)
        snprintf(state, sizeof state, "running");
    else if (V.tl.exited && V.tl.signal) {
        char *sig = quote_text_visible(V.tl.signal, strlen(V.tl.signal)), *cut = quote_shorten(sig, 40);
        snprintf(state, sizeof state, "killed by %s", cut);
        free(cut);
        free(sig);
    }
    else if (V.tl.exited)
        snprintf(state, sizeof state, "exited with code %d", V.tl.exit_code);
    else
        snprintf(state, sizeof state, "ended (no end in its log)");
    /* The log's own words, as corral log shows them (quote.h). */
    char *client = V.tl.client ? quote_text_visible(V.tl.client, strlen(V.tl.client)) : NULL;
    char *ws = V.tl.workspace ? quote_text_visible(V.tl.workspace, strlen(V.tl.workspace)) : NULL;
    snprintf(text, sizeof text, " timeline \xc2\xb7 session %d (%s) \xc2\xb7 %s \xc2\xb7%s%s%s%s%s", V.target.id,
             V.target.name, state, client ? " by " : "", client ? client : "", ws ? " in " : "", ws ? ws : "", when);
    free(client);
    free(ws);
    char *clean = sanitize_text(text, strlen(text), sizeof text);
    line_at(y, r.x, r.w, TH_BORDER_FOCUS, clean);
    free(clean);
}

static void summary(tui_t *t, int y)
{
    if (!V.loaded) { /* read again, and it failed: why, in place of its numbers */
        char *clean = sanitize_text(V.error, strlen(V.error), sizeof V.error);
        line_at(y, t->main.x, t->main.w, TH_STATE_EXIT_FAIL, clean);
        free(clean);
        return;
    }
    char text[400];
    const tl_summary *s = &V.sum;
    char shown[64];
    if (V.kind < 0)
        snprintf(shown, sizeof shown, "every kind: %zu", V.nrows);
    else
        snprintf(shown, sizeof shown, "%s: %zu of %zu", tl_kind_name((tl_kind)V.kind), V.nrows, V.tl.n);
    snprintf(text, sizeof text,
             " %s \xc2\xb7 %ld command%s +%ld ~%ld -%ld%s \xc2\xb7 %ld approval%s \xc2\xb7 %ld connection%s to %ld "
             "host%s%s",
             shown, s->commands, s->commands == 1 ? "" : "s", s->added, s->modified, s->deleted,
             s->risky ? "  RISK" : "", s->approvals, s->approvals == 1 ? "" : "s", s->connections,
             s->connections == 1 ? "" : "s", s->hosts, s->hosts == 1 ? "" : "s",
             t->search[0] ? " \xc2\xb7 n/N: next match" : "");
    ui_rect r = t->main;
    line_at(y, r.x, r.w, TH_BORDER, "");
    int x = r.x;
    if (V.warning[0]) { /* first, where it is seen */
        char *clean = sanitize_text(V.warning, strlen(V.warning), sizeof V.warning);
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
static void draw_detail(tui_t *t)
{
    ui_rect r = t->main;
    wrap_detail(r.w - 2);
    line_at(r.y, r.x, r.w, TH_DIALOG_TITLE, V.dtitle);
    for (int k = 1; k < r.h - 1; k++) {
        int i = V.dtop + k - 1;
        line_at(r.y + k, r.x, r.w, TH_DIALOG, "");
        if (i < V.ndrows)
            paint_text(r.y + k, r.x + 1, r.w - 2, V.drows[i]);
    }
}

void timelineview_draw(tui_t *t)
{
    if (!V.active)
        return;
    if (V.target.in_server && !ui_sessions_find(&t->list, V.target.id)) {
        /* The server forgot it meanwhile: its diffs come by the log's ids now. */
        V.target.in_server = false;
        if (V.timer_made)
            uv_timer_stop(&V.timer);
    }
    ui_rect r = t->main;
    if (r.h < 4 || r.w < 10)
        return;
    heading(t, r.y);
    summary(t, r.y + 1);
    int rows = list_rows(t);
    if (V.sel < V.top)
        V.top = V.sel;
    if (V.sel >= V.top + (size_t)rows)
        V.top = V.sel - (size_t)rows + 1;
    if (V.top + (size_t)rows > V.nrows) /* no empty rows under the last while earlier ones fit */
        V.top = V.nrows > (size_t)rows ? V.nrows - (size_t)rows : 0;
    for (int k = 0; k < rows; k++) {
        size_t row = V.top + (size_t)k;
        if (row < V.nrows)
            draw_row(t, r.y + 2 + k, row);
        else
            line_at(r.y + 2 + k, r.x, r.w, TH_NORMAL, k == 0 && !V.nrows ? " (no entries of this kind)" : "");
    }
    line_at(r.y + r.h - 1, r.x, r.w, TH_BORDER,
            " j/k move  f/F kind  / search  n/N next  Enter diff or record  v record  r replay  q close");
    if (V.detail)
        draw_detail(t);
}
