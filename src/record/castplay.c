/*
 * castplay.c - a recording into the terminal model, one event after the
 * other, with the play clock, the command markers, seeks and the fast way
 * to the final screen (castskip.h).
 *
 * The player reads one event ahead (the next event's play time is what a
 * caller waits for); that event's data lives in the reader's buffer until
 * it is fed.
 */
#include "config.h"

#include "record/castplay.h"
#include "record/castskip.h"
#include "record/timeline.h"
#include "base/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct castplay {
    castread_t *r;
    castplay_opts o;
    vt_t *vt;
    bool resized;
    bool warned_size;

    /* the clock */
    double play;     /* play time of the last event fed */
    double rec;      /* its recorded time */
    bool fed_any;

    /* the event read ahead */
    cast_event next;
    size_t next_at;  /* output of it already fed (a large event goes in slices) */
    double next_play;
    bool have_next;
    bool at_end;
    char err[512];   /* a line that is not an event, met while reading ahead */
    bool failed;

    /* markers (castplay_index) */
    castplay_marker *markers;
    size_t n_markers, cap_markers;
    bool indexed;
    double duration;
    size_t passed;
    int current_command;
    size_t skipped;  /* castplay_skipped */
};

/* A command's marker (docs/formats.md, read as the timeline reads it):
 * its number, or 0 for any other label.  (label is NUL-terminated.) */
static int parse_marker(const char *label, size_t len, bool *end)
{
    (void)len;
    int n, status;
    if (!label || !tl_marker_parse(label, &n, end, &status) || n < 1)
        return 0;
    return n;
}

static double play_after(const castplay_t *p, double play, double rec, double t)
{
    double gap = t - rec;
    if (gap < 0)
        gap = 0;
    if (p->o.idle_limit > 0 && gap > p->o.idle_limit)
        gap = p->o.idle_limit;
    return play + gap;
}

static void clamp_size(castplay_t *p, long *cols, long *rows, size_t offset, unsigned long line)
{
    long c = *cols < 2 ? 2 : *cols > CASTPLAY_MAX_COLS ? CASTPLAY_MAX_COLS : *cols;
    long r = *rows < 1 ? 1 : *rows > CASTPLAY_MAX_ROWS ? CASTPLAY_MAX_ROWS : *rows;
    if ((c != *cols || r != *rows) && !p->warned_size) {
        p->warned_size = true;
        castread_warn(p->r, offset, line, "a terminal of %ldx%ld is shown as %ldx%ld (the largest corral models)",
                      *cols, *rows, c, r);
    }
    *cols = c;
    *rows = r;
}

static int new_model(castplay_t *p, long cols, long rows, char *err, size_t errlen)
{
    vt_t *vt = vt_new((int)rows, (int)cols, p->o.scrollback, NULL, NULL);
    if (!vt) {
        snprintf(err, errlen, "cannot make a terminal model of %ldx%ld for %s", cols, rows, castread_name(p->r));
        return -1;
    }
    vt_free(p->vt);
    p->vt = vt;
    p->resized = true;
    return 0;
}

/* Back to the start: a fresh model of the header's size, the clock at 0. */
static int restart(castplay_t *p, char *err, size_t errlen)
{
    const cast_header *h = castread_header(p->r);
    long cols = h->width, rows = h->height;
    clamp_size(p, &cols, &rows, 0, 1);
    if (new_model(p, cols, rows, err, errlen) < 0)
        return -1;
    castread_rewind(p->r);
    p->play = p->rec = 0;
    p->fed_any = false;
    p->have_next = p->at_end = p->failed = false;
    p->next_at = 0;
    p->passed = 0;
    p->current_command = 0;
    return 0;
}

castplay_t *castplay_new(castread_t *r, const castplay_opts *opts, char *err, size_t errlen)
{
    castplay_t *p = xcalloc(1, sizeof *p);
    p->r = r;
    p->o = *opts;
    if (p->o.scrollback < 0)
        p->o.scrollback = 0;
    if (restart(p, err, errlen) < 0) {
        castplay_free(p);
        return NULL;
    }
    return p;
}

void castplay_free(castplay_t *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_markers; i++)
        free((char *)p->markers[i].label);
    free(p->markers);
    vt_free(p->vt);
    castread_close(p->r);
    free(p);
}

castread_t *castplay_reader(const castplay_t *p)
{
    return p->r;
}

vt_t *castplay_vt(const castplay_t *p)
{
    return p->vt;
}

bool castplay_take_resized(castplay_t *p)
{
    bool r = p->resized;
    p->resized = false;
    return r;
}

/* Read the next event ahead, if not yet. */
static void fill_next(castplay_t *p)
{
    if (p->have_next || p->at_end || p->failed)
        return;
    int rc = castread_next(p->r, &p->next, true, p->err, sizeof p->err);
    if (rc < 0) {
        p->failed = true;
        return;
    }
    if (rc == 0) {
        p->at_end = true;
        return;
    }
    p->have_next = true;
    p->next_play = play_after(p, p->play, p->rec, p->next.time);
}

static void note_marker(castplay_t *p, const cast_event *ev)
{
    bool end;
    int n = parse_marker(ev->data, ev->len, &end);
    if (n > 0 && !end)
        p->current_command = n;
    while (p->passed < p->n_markers && p->markers[p->passed].offset <= ev->offset)
        p->passed++;
}

/* Feed one event (its data from `at` on, for output) to the model. */
static int feed(castplay_t *p, const cast_event *ev, double play, size_t at, char *err, size_t errlen)
{
    switch (ev->kind) {
    case CAST_OUTPUT:
        if (ev->len > at)
            vt_write(p->vt, ev->data + at, ev->len - at);
        break;
    case CAST_RESIZE: {
        long cols = ev->cols, rows = ev->rows;
        clamp_size(p, &cols, &rows, ev->offset, ev->line);
        if (cols != vt_cols(p->vt) || rows != vt_rows(p->vt)) {
            if (vt_resize(p->vt, (int)rows, (int)cols) < 0) {
                snprintf(err, errlen, "%s:%lu: cannot resize the model to %ldx%ld", castread_name(p->r), ev->line,
                         cols, rows);
                return -1;
            }
            p->resized = true;
        }
        break;
    }
    case CAST_MARKER: note_marker(p, ev); break;
    case CAST_INPUT:
    case CAST_OTHER: break;
    }
    p->play = play;
    p->rec = ev->time;
    p->fed_any = true;
    return 0;
}

static int take_next(castplay_t *p, size_t *bytes, size_t max_bytes, char *err, size_t errlen)
{
    if (p->next.kind == CAST_OUTPUT && max_bytes) {
        /* A huge output event goes in slices, so that a caller looks at
         * its keys in between. */
        size_t left = p->next.len - p->next_at, budget = max_bytes > *bytes ? max_bytes - *bytes : 1;
        if (left > budget) {
            vt_write(p->vt, p->next.data + p->next_at, budget);
            p->next_at += budget;
            *bytes += budget;
            return 0;
        }
    }
    p->have_next = false;
    if (bytes && p->next.kind == CAST_OUTPUT)
        *bytes += p->next.len - p->next_at;
    size_t at = p->next_at;
    p->next_at = 0;
    return feed(p, &p->next, p->next_play, at, err, errlen);
}

static int read_failed(castplay_t *p, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", p->err);
    return -1;
}

int castplay_advance(castplay_t *p, double t, size_t max_bytes, char *err, size_t errlen)
{
    size_t bytes = 0;
    for (;;) {
        fill_next(p);
        if (p->failed)
            return read_failed(p, err, errlen);
        if (p->at_end)
            return 0;
        if (p->next_play > t || (max_bytes && bytes >= max_bytes))
            return 1;
        if (take_next(p, &bytes, max_bytes, err, errlen) < 0)
            return -1;
    }
}

double castplay_time(const castplay_t *p)
{
    return p->play;
}

bool castplay_next_time(castplay_t *p, double *t)
{
    fill_next(p);
    if (!p->have_next)
        return false;
    *t = p->next_play;
    return true;
}

/* ---- markers ------------------------------------------------------------------ */

int castplay_index(castplay_t *p, char *err, size_t errlen)
{
    for (size_t i = 0; i < p->n_markers; i++)
        free((char *)p->markers[i].label);
    p->n_markers = 0;
    /* Where reading goes on afterwards. */
    size_t resume = castread_tell(p->r);
    unsigned long resume_line = castread_line(p->r) + 1;
    bool had_next = p->have_next;
    if (had_next) {
        resume = p->next.offset;
        resume_line = p->next.line;
    }
    castread_rewind(p->r);
    double play = 0, rec = 0;
    cast_event ev;
    int rc;
    while ((rc = castread_next(p->r, &ev, false, err, errlen)) > 0) {
        play = play_after(p, play, rec, ev.time);
        rec = ev.time;
        if (ev.kind != CAST_MARKER)
            continue;
        if (p->n_markers == p->cap_markers) {
            p->cap_markers = p->cap_markers ? p->cap_markers * 2 : 16;
            p->markers = xrealloc(p->markers, p->cap_markers * sizeof *p->markers);
        }
        castplay_marker *m = &p->markers[p->n_markers++];
        m->time = play;
        m->offset = ev.offset;
        m->line = ev.line;
        m->command = parse_marker(ev.data, ev.len, &m->end);
        m->label = xstrndup(ev.data, ev.len);
    }
    p->duration = play;
    p->indexed = rc == 0;
    castread_seek(p->r, resume, resume_line);
    if (had_next) {
        /* The event read ahead again (its data was in the reader's buffer),
         * still fed up to where it was. */
        char why[512];
        if (castread_next(p->r, &p->next, true, why, sizeof why) <= 0) {
            p->have_next = false;
            p->next_at = 0;
        }
    }
    p->passed = 0;
    while (p->passed < p->n_markers && p->markers[p->passed].offset < resume)
        p->passed++;
    return rc < 0 ? -1 : 0;
}

const castplay_marker *castplay_markers(const castplay_t *p, size_t *n)
{
    *n = p->n_markers;
    return p->markers;
}

double castplay_duration(const castplay_t *p)
{
    return p->duration;
}

int castplay_find_command(const castplay_t *p, int n)
{
    for (size_t i = 0; i < p->n_markers; i++)
        if (p->markers[i].command == n && !p->markers[i].end)
            return (int)i;
    return -1;
}

size_t castplay_command_count(const castplay_t *p)
{
    size_t k = 0;
    for (size_t i = 0; i < p->n_markers; i++)
        if (p->markers[i].command > 0 && !p->markers[i].end)
            k++;
    return k;
}

size_t castplay_markers_passed(const castplay_t *p)
{
    return p->passed;
}

int castplay_current_command(const castplay_t *p)
{
    return p->current_command;
}

bool castplay_jump_target(const castplay_t *p, bool forward, double now, double grace, size_t *target)
{
    const castplay_marker *m = p->markers;
    size_t n = p->n_markers, passed = p->passed;
    *target = (size_t)-1;
    if (forward) {
        for (size_t i = passed; i < n; i++)
            if (m[i].command > 0 && !m[i].end) {
                *target = i;
                return true;
            }
        return false;
    }
    size_t last = (size_t)-1, before = (size_t)-1;
    for (size_t i = 0; i < passed && i < n; i++)
        if (m[i].command > 0 && !m[i].end) {
            before = last;
            last = i;
        }
    *target = last;
    if (last != (size_t)-1 && now - m[last].time < grace)
        *target = before;
    return true;
}

int castplay_seek(castplay_t *p, size_t i, char *err, size_t errlen)
{
    if (i == (size_t)-1)
        return restart(p, err, errlen);
    if (i >= p->n_markers) {
        snprintf(err, errlen, "%s has no marker %zu", castread_name(p->r), i);
        return -1;
    }
    size_t target = p->markers[i].offset;
    if (i < p->passed && restart(p, err, errlen) < 0)
        return -1;
    for (;;) {
        fill_next(p);
        if (p->failed)
            return read_failed(p, err, errlen);
        if (p->at_end || p->next.offset > target)
            return 0;
        if (take_next(p, NULL, 0, err, errlen) < 0)
            return -1;
    }
}

/* ---- to the end, fast ------------------------------------------------------------ */

/* Where an event is and the state just before it: castskip's tag. */
typedef struct skip_tag {
    size_t offset;
    unsigned long line;
    double play, rec; /* the clock before the event */
    long cols, rows;  /* the model's size then */
    int command;      /* the command marked last before it */
} skip_tag;

_Static_assert(sizeof(skip_tag) <= CASTSKIP_TAG_MAX, "castskip's tag holds a skip_tag");

static int feed_rest(castplay_t *p, bool stop_at_resize, bool *stopped, char *err, size_t errlen)
{
    for (;;) {
        fill_next(p);
        if (p->failed)
            return read_failed(p, err, errlen);
        if (p->at_end)
            return 0;
        if (stop_at_resize && p->next.kind == CAST_RESIZE) {
            *stopped = true;
            return 0;
        }
        if (take_next(p, NULL, 0, err, errlen) < 0)
            return -1;
    }
}

/* Look for the latest point castskip allows; true and *tag, *pt when there
 * is one. */
static int find_skip(castplay_t *p, castskip_point *pt, char *err, size_t errlen)
{
    const cast_header *h = castread_header(p->r);
    skip_tag tag = {0};
    tag.cols = h->width;
    tag.rows = h->height;
    clamp_size(p, &tag.cols, &tag.rows, 0, 1);
    castskip_t *s = castskip_new((int)tag.rows);
    castread_rewind(p->r);
    cast_event ev;
    int rc;
    while ((rc = castread_next(p->r, &ev, true, err, errlen)) > 0) {
        tag.offset = ev.offset;
        tag.line = ev.line;
        if (ev.kind == CAST_OUTPUT) {
            if (!castskip_feed(s, ev.data, ev.len, &tag, sizeof tag))
                break;
        } else if (ev.kind == CAST_RESIZE) {
            long cols = ev.cols, rows = ev.rows;
            clamp_size(p, &cols, &rows, ev.offset, ev.line);
            tag.cols = cols;
            tag.rows = rows;
            castskip_resize(s, (int)rows);
        } else if (ev.kind == CAST_MARKER) {
            bool end;
            int n = parse_marker(ev.data, ev.len, &end);
            if (n > 0 && !end)
                tag.command = n;
        }
        tag.play = play_after(p, tag.play, tag.rec, ev.time);
        tag.rec = ev.time;
    }
    const castskip_point *best = castskip_best(s);
    int found = rc >= 0 && best ? 1 : 0;
    if (found)
        *pt = *best;
    castskip_free(s);
    return rc < 0 ? -1 : found;
}

size_t castplay_skipped(const castplay_t *p)
{
    return p->skipped;
}

int castplay_finish(castplay_t *p, char *err, size_t errlen)
{
    p->skipped = 0;
    if (p->fed_any || p->have_next || p->failed)
        return feed_rest(p, false, NULL, err, errlen);
    castskip_point pt;
    int found = find_skip(p, &pt, err, errlen);
    if (found < 0)
        return -1;
    if (found) {
        skip_tag tag;
        memcpy(&tag, pt.tag, sizeof tag);
        if (new_model(p, tag.cols, tag.rows, err, errlen) < 0)
            return -1;
        vt_write(p->vt, pt.pen, pt.pen_len);
        if (pt.cursor_hidden)
            vt_write(p->vt, "\033[?25l", 6);
        castread_seek(p->r, tag.offset, tag.line);
        cast_event ev;
        int rc = castread_next(p->r, &ev, true, err, errlen);
        if (rc <= 0)
            return rc < 0 ? -1 : 0;
        p->play = tag.play;
        p->rec = tag.rec;
        p->current_command = tag.command;
        if (feed(p, &ev, play_after(p, tag.play, tag.rec, ev.time), pt.at, err, errlen) < 0)
            return -1;
        bool resized = false;
        if (feed_rest(p, true, &resized, err, errlen) < 0)
            return -1;
        if (!resized) {
            p->passed = p->n_markers;
            p->skipped = tag.offset;
            return 0;
        }
        /* A resize after the point brings back history the fresh model
         * does not have: read it all after all. */
    }
    if (restart(p, err, errlen) < 0)
        return -1;
    return feed_rest(p, false, NULL, err, errlen);
}
