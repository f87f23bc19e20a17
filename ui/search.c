/*
 * search.c - searching the selected pane's scrollback: every match in view
 * is marked, the view scrolls to the current one, and n/N walk older and
 * newer matches one by one, also within a line, wrapping around at the
 * ends with a notice (as vim does).
 * Case is ignored unless the query has a capital letter.
 */
#include "config.h"

#include "tui_int.h"
#include "base/utf8.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/* Lower-case ASCII when the query has no capitals (smart case). */
static uint32_t fold(uint32_t c, bool ignore_case)
{
    return ignore_case && c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* Matches of the query on one vt line; returns how many were added. */
static int line_matches(const vt_t *vt, int line, const uint32_t *q, int qn, bool ic, paint_mark *out, int room)
{
    int len = 0, found = 0;
    const vt_cell *cells = vt_line(vt, line, &len);
    if (!cells)
        return 0;
    for (int col = 0; col + qn <= len && found < room; col++) {
        int k = 0, c = col;
        while (k < qn && c < len) {
            if (cells[c].ch == VT_CH_WIDE_CONT) {
                c++;
                continue;
            }
            uint32_t ch = cells[c].ch ? cells[c].ch : ' ';
            if (fold(ch, ic) != fold(q[k], ic))
                break;
            k++;
            c++;
        }
        if (k == qn) {
            out[found++] = (paint_mark){line, col, c - col, false};
            col = c - 1;
        }
    }
    return found;
}

/* Decode the search text to code points; returns the count.  An invalid
 * subpart is one U+FFFD, as the terminal model shows invalid output. */
static int query_points(const char *s, uint32_t *out, int max, bool *ignore_case)
{
    int n = 0;
    *ignore_case = true;
    size_t len = strlen(s);
    for (size_t i = 0; i < len && n < max;) {
        int32_t cp;
        i += utf8_decode(s + i, len - i, &cp);
        uint32_t c = cp < 0 ? 0xfffd : (uint32_t)cp;
        if (c >= 'A' && c <= 'Z')
            *ignore_case = false;
        out[n++] = c;
    }
    return n;
}

/* The first line from `from` to `to` (inclusive, stepping by direction)
 * with a match: its number, and in *col the match nearest where the walk
 * came from; INT_MIN when none. */
static int scan(const vt_t *vt, int from, int to, int direction, const uint32_t *q, int qn, bool ic, int *col)
{
    for (int line = from; direction < 0 ? line >= to : line <= to; line += direction) {
        paint_mark m[64];
        int n = line_matches(vt, line, q, qn, ic, m, 64);
        if (n > 0) {
            *col = direction < 0 ? m[n - 1].col : m[0].col;
            return line;
        }
    }
    return INT_MIN;
}

/* The column of the match on line next to the one at col: the nearest
 * before it (direction -1, older) or after it (+1); -1 when there is
 * none. */
static int next_in_line(const vt_t *vt, int line, int col, int direction, const uint32_t *q, int qn, bool ic)
{
    paint_mark m[64];
    int n = line_matches(vt, line, q, qn, ic, m, 64), found = -1;
    for (int k = 0; k < n; k++) {
        if (direction < 0 && m[k].col < col)
            found = m[k].col; /* the last one before col */
        else if (direction > 0 && m[k].col > col && found < 0)
            found = m[k].col;
    }
    return found;
}

/* Mark every match in view; direction -1 looks for the next older match
 * before the current one (on its line, then above), +1 for a newer one, 0 for the newest at or above
 * the bottom of the view.  Past an end the walk goes on from the other
 * one.  The view scrolls to show the current match. */
void tui_search_run(tui_t *t, int direction)
{
    ui_session *s = tui_selected(t);
    t->nmarks = 0;
    if (!s || !s->vt || !t->search[0]) {
        tui_redraw_soon(t);
        return;
    }
    uint32_t q[256];
    bool ic;
    int qn = query_points(t->search, q, 256, &ic);
    const vt_t *vt = s->vt;
    int oldest = -vt_scrollback_len(vt), newest = vt_rows(vt) - 1;
    int rows = tui_selected_rows(t);
    int top = pane_first_row(vt, rows) - s->scroll; /* the view's first line */
    int start;
    bool step = direction != 0 && t->match_line != INT_MIN; /* n or N from a current match */
    if (direction == 0) {
        start = top + rows - 1;
        direction = -1;
    } else {
        start = t->match_line + direction;
    }
    int hit_col = 0, hit = INT_MIN;
    if (step && (hit_col = next_in_line(vt, t->match_line, t->match_col, direction, q, qn, ic)) >= 0)
        hit = t->match_line; /* the next match is on the current match's line */
    else
        hit = scan(vt, start, direction < 0 ? oldest : newest, direction, q, qn, ic, &hit_col);
    if (hit == INT_MIN) { /* wrap: from the other end up to where this walk began */
        hit = scan(vt, direction < 0 ? newest : oldest, start - direction, direction, q, qn, ic, &hit_col);
        if (hit != INT_MIN)
            tui_message(t, false, "'%s': %s", t->search, direction < 0 ? "passed the oldest line, went on from the newest"
                                                                      : "passed the newest line, went on from the oldest");
    }
    if (hit == INT_MIN) {
        tui_message(t, true, "'%s' not found", t->search);
        if (t->match_line == INT_MIN) {
            tui_redraw_soon(t);
            return;
        }
        hit = t->match_line;
        hit_col = t->match_col;
    }
    t->match_line = hit;
    t->match_col = hit_col;
    /* Scroll so the match is in view, a third of the way down. */
    if (hit < top || hit > top + rows - 1) {
        int scroll = pane_first_row(vt, rows) - (hit - rows / 3);
        int max = vt_scrollback_len(vt) + pane_first_row(vt, rows);
        s->scroll = scroll < 0 ? 0 : scroll > max ? max : scroll;
        top = pane_first_row(vt, rows) - s->scroll;
    }
    t->scroll_mode = true;
    for (int line = top; line < top + rows; line++) {
        int n = line_matches(vt, line, q, qn, ic, t->marks + t->nmarks, SEARCH_MAX_MARKS - t->nmarks);
        for (int k = 0; k < n; k++) {
            paint_mark *m = &t->marks[t->nmarks + k];
            m->current = m->line == hit && m->col == hit_col;
        }
        t->nmarks += n;
    }
    tui_redraw_soon(t);
}
