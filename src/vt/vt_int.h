/*
 * vt_int.h - the terminal model's insides, shared by vt.c (the model) and
 * vt_bytes.c (the byte streams that recreate it).  Nothing else includes
 * it.
 *
 * Included only in src/vt/.
 */
#ifndef CORRAL_VT_INT_H
#define CORRAL_VT_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <vterm.h>

#include "base/util.h"
#include "vt/vt.h"
#include "vt/vt_grid.h"
#include "vt/vt_scan.h"

/* A cursor saved by DECSC (or SCOSC, DECSET 1048, DECSET 1049): xterm
 * keeps one per screen, with the rendition, origin mode and character
 * sets. */
typedef struct vt_saved {
    bool valid; /* never saved: a restore goes home with the defaults */
    int row, col;
    vt_color fg, bg;
    uint16_t attrs;
    bool origin;
    vt_charsets cs;
} vt_saved;

struct vt {
    VTerm *vterm;
    VTermState *state;
    vt_callbacks cb;
    void *user;
    int rows, cols;
    vt_grid primary, alt; /* alt.rows is NULL unless it is shown */
    vt_grid *cur;         /* the grid on show */
    bool altscreen;
    uint8_t *dirty; /* per visible row */

    /* The pen as a cell (fg, bg and attrs: both sets below; no character,
     * width 1, no marks): a glyph's cell is a copy of it with the glyph's
     * character, so the pen is put together when it changes, not for
     * every glyph. */
    vt_cell pen;
    uint16_t pen_vterm; /* attributes libvterm reports */
    uint16_t pen_extra; /* dim, conceal from the scanner */

    vt_history hist;
    vt_comb_table comb;

    char *title;
    bool cursor_visible;
    uint32_t last_ch;  /* the last glyph written, for REP */
    uint8_t last_comb;
    bool pending_wrap; /* the last glyph ended in the last column ... */
    VTermPos wrap_pos; /* ... here, and the cursor has not left it
                        * (wrap_pos is where every glyph went) */
    int next_row, next_col; /* where the next glyph goes unless it wraps
                             * (next_col may be cols) */
    bool glyph_last;        /* nothing moved the cursor since the last
                             * glyph: a mark now goes on it */
    unsigned pushes;        /* lines pushed into history so far */
    unsigned next_pushes;   /* ... when next_row was set */
    int mouse; /* VTERM_PROP_MOUSE_* */

    vt_saved saved[2]; /* [0] the primary screen's, [1] the alternate's */

    /* A character libvterm gets wrong is written as a stand-in; this is
     * the character the stand-in's glyph stands for. */
    uint32_t standin_for;
    bool standin_pending;

    /* While set, what libvterm answers goes here, not to the owner: the
     * model asking libvterm for state it keeps to itself. */
    buf_t *capture;
    /* Where vt_resize puts the cursor after the size changed. */
    int resize_row, resize_col;
    bool resize_pending;
    vt_scan scan;
};

/* The stand-ins: code points libvterm 0.1.4 places at 2 columns and 1
 * column, each one that libvterm itself gets wrong, so that the scanner
 * never lets it through as itself (it is written as a stand-in too) and a
 * glyph made of one always stands for something.  (Marks need none: the
 * model puts every mark on its cell itself.)  The unit tests check them
 * against the linked libvterm. */
#define STANDIN_WIDE 0x3FFFDu   /* unassigned (no width: one column) */
#define STANDIN_NARROW 0x1E94Au /* ADLAM NUKTA, a mark since Unicode 9 */

static inline vt_row *vt_row_at(const struct vt *vt, int r)
{
    return vt_grid_row(vt->cur, r);
}

/* vt.c: bytes straight to libvterm, past the scanner. */
void vt_vterm_feed(struct vt *vt, const char *bytes, size_t len);
/* vt.c: show the alternate grid (fresh) or go back to the primary. */
void vt_set_altscreen(struct vt *vt, bool on);
/* vt.c: rows [first, end) changed. */
void vt_mark_dirty(struct vt *vt, int first, int end);
/* vt.c: libvterm's movecursor callback (a move it does not report). */
int vt_cb_movecursor(VTermPos pos, VTermPos oldpos, int visible, void *user);
/* vt_ops.c: the cursor waits to wrap after the glyph in the last column
 * col of row (a glyph is written there and the cells put back). */
void vt_wait_to_wrap(struct vt *vt, int row, int col);
/* vt_ops.c: what the model does for the scanner. */
extern const vt_scan_ops vt_model_ops;

/* vt.c: the margins libvterm keeps, 1-based: top and bottom row, left and
 * right column (they are not reported otherwise). */
void vt_margins(const struct vt *vt, int *top, int *bottom, int *left, int *right);

/* vt_bytes.c: the DECRQSS answer for the pen, as xterm words it. */
void vt_put_decrqss_sgr(buf_t *b, vt_color fg, vt_color bg, unsigned attrs);

#endif
