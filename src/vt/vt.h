/*
 * vt.h - the terminal model: PTY bytes in, a grid of cells out.
 *
 * Built on libvterm's VTermState layer (parser + state machine) with our own
 * grid: visible rows live in a ring of row pointers so a full-screen scroll is
 * O(cols), departing rows go to a bounded scrollback ring stored trimmed to
 * their used width, and the alternate screen is a second grid without
 * scrollback.  A byte-level pre-scanner in front of libvterm keeps escape
 * strings (OSC, DCS, APC, PM, SOS) whole across writes, hands the OSC numbers
 * corral owns (133 prompt marks, 7 cwd, 9 and 777 notifications) to the owner,
 * and keeps everything else inside the model: nothing a session prints ever
 * reaches a real terminal except through cells.
 *
 * The server keeps one vt per session (screen text, redraw bytes on attach);
 * the TUI keeps one per visible pane (drawing).
 *
 * Included by src/vt/, src/record/, src/server/ and ui/.
 */
#ifndef CORRAL_VT_H
#define CORRAL_VT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Colours packed in 32 bits: the top byte says which kind. */
typedef uint32_t vt_color;
#define VT_COLOR_DEFAULT 0u
#define VT_COLOR_INDEXED(i) (0x01000000u | ((uint32_t)(i) & 0xffu))
#define VT_COLOR_RGB(r, g, b) \
    (0x02000000u | ((uint32_t)(r) & 0xffu) << 16 | ((uint32_t)(g) & 0xffu) << 8 | ((uint32_t)(b) & 0xffu))
#define VT_COLOR_KIND(c) ((c) >> 24)
#define VT_COLOR_KIND_DEFAULT 0u
#define VT_COLOR_KIND_INDEXED 1u
#define VT_COLOR_KIND_RGB 2u

/* Cell attributes. */
#define VT_ATTR_BOLD (1u << 0)
#define VT_ATTR_DIM (1u << 1)
#define VT_ATTR_ITALIC (1u << 2)
#define VT_ATTR_UNDERLINE (1u << 3)
#define VT_ATTR_BLINK (1u << 4)
#define VT_ATTR_REVERSE (1u << 5)
#define VT_ATTR_CONCEAL (1u << 6)
#define VT_ATTR_STRIKE (1u << 7)

/* ch of the second column of a double-width character. */
#define VT_CH_WIDE_CONT 0xFFFFFFFFu

typedef struct vt_cell {
    uint32_t ch;    /* Unicode scalar; 0 = blank; VT_CH_WIDE_CONT = right half */
    vt_color fg;
    vt_color bg;
    uint16_t attrs; /* VT_ATTR_* */
    uint8_t width;  /* 1, or 2 for the left half of a wide character */
    uint8_t comb;   /* 0, or 1 + index of this cell's combining marks (vt_cell_text) */
} vt_cell;

/* Terminal modes a client needs to encode keys and mouse for the session. */
#define VT_MODE_APP_CURSOR (1u << 0)   /* DECCKM */
#define VT_MODE_APP_KEYPAD (1u << 1)
#define VT_MODE_BRACKETED_PASTE (1u << 2)
#define VT_MODE_MOUSE_CLICK (1u << 3) /* ?1000; also set with DRAG and MOVE */
#define VT_MODE_MOUSE_DRAG (1u << 4)  /* ?1002; also set with MOVE */
#define VT_MODE_MOUSE_MOVE (1u << 5)  /* ?1003 */
#define VT_MODE_MOUSE_SGR (1u << 6)
#define VT_MODE_CURSOR_VISIBLE (1u << 7)
#define VT_MODE_ALTSCREEN (1u << 8)

typedef struct vt_callbacks {
    /* An OSC that corral owns: number is 133, 7, 9 or 777; payload is what
     * follows "NUM;" (not NUL-terminated, may be empty). */
    void (*osc)(void *user, int number, const char *payload, size_t len);
    /* BEL outside of an escape string. */
    void (*bell)(void *user);
    /* The window title changed (OSC 0/2); title is UTF-8, sanitised of
     * control characters, NUL-terminated. */
    void (*title)(void *user, const char *title);
    /* Bytes the terminal answers with (device attributes, cursor position
     * report): the owner writes them back to the PTY. */
    void (*reply)(void *user, const char *bytes, size_t len);
} vt_callbacks;

typedef struct vt vt_t;

/* A model of rows x cols keeping at most scrollback_max lines of history.
 * cb may be NULL.  Returns NULL only on bad sizes (rows 1..1000, cols
 * 2..2000, scrollback_max >= 0; above 1000000 it is cut to that) or
 * allocation failure. */
vt_t *vt_new(int rows, int cols, int scrollback_max, const vt_callbacks *cb, void *user);
void vt_free(vt_t *vt);

/* Feed bytes as read from the PTY; any split of the stream is fine. */
void vt_write(vt_t *vt, const char *bytes, size_t len);

/* Resize.  A new width reflows the primary screen and its history as tmux
 * does: lines that autowrap wrapped are joined and wrapped at the new
 * width, hard newlines stay, and the cursor (and a saved cursor) stays on
 * its character; the alternate screen is only cut or padded (vt_reflow.h
 * says which lines stay on screen).  A new height alone keeps the cursor's
 * line on screen: when the screen gets shorter the rows above it go to
 * history, and history lines come back when it gets taller.  As in xterm
 * and tmux the scroll region is reset.  Nothing is reflowed when the width
 * stays.  0, or -1 for bad sizes. */
int vt_resize(vt_t *vt, int rows, int cols);

int vt_rows(const vt_t *vt);
int vt_cols(const vt_t *vt);

/* Number of history lines currently held (0 while on the alternate screen's
 * own grid is fine: history belongs to the primary screen). */
int vt_scrollback_len(const vt_t *vt);

/* Cells of one line.  row 0..rows-1 is the visible screen; -1 is the newest
 * history line, -vt_scrollback_len() the oldest.  *len receives the number of
 * cells stored (a history line may be shorter than cols: the rest is blank).
 * Returns NULL for a row out of range. */
const vt_cell *vt_line(const vt_t *vt, int row, int *len);

/* Whether the text of a line (numbered as vt_line) goes on in the next
 * one because autowrap put it there: what a width change joins. */
bool vt_line_wrapped(const vt_t *vt, int row);

/* UTF-8 text of one cell including its combining marks, NUL-terminated;
 * returns bytes written (0 for a blank or a wide-character continuation).
 * out must hold VT_CELL_TEXT_MAX bytes. */
#define VT_CELL_TEXT_MAX 72
size_t vt_cell_text(const vt_t *vt, const vt_cell *cell, char *out);

void vt_cursor(const vt_t *vt, int *row, int *col);
unsigned vt_modes(const vt_t *vt); /* VT_MODE_* */
const char *vt_title(const vt_t *vt);

/* Plain UTF-8 text of rows first..last inclusive (same numbering as
 * vt_line), one '\n'-terminated line each, trailing blanks trimmed.
 * Caller frees.  *len may be NULL. */
char *vt_text(const vt_t *vt, int first, int last, size_t *len);

/* A byte sequence that, written to a blank terminal of the same size, draws
 * the current visible screen: SGR colours and attributes, the cursor
 * position and visibility, the pen, and a cursor waiting to wrap after the
 * last column.  Fed to a fresh vt of the same size it gives the same cells.
 * Not included (so safe for a real terminal): scroll region, modes (send
 * vt_modes() along), character sets, and the primary screen behind the
 * alternate one.  Used to show a session as it is on attach.  Caller frees. */
char *vt_redraw_bytes(const vt_t *vt, size_t *len);

/* A byte sequence that, written to a fresh vt of the same size (and
 * enough scrollback), recreates this one: the newest max_history lines of
 * history, the primary screen, the alternate screen when it is on show,
 * which lines wrapped (so both reflow alike on a width change), the saved
 * cursors, the cursor, pen, character sets, margins, modes and title,
 * and last the input the model holds unfinished (the part of a character
 * or sequence that a write ended inside), so that the rest of it, coming
 * after, lands in the copy as in this one.  For a vt only (it sets modes
 * and the title): a client's copy of a session's model on attach, or
 * again when it fell behind.  Not made again: a bottom row that wrapped into nothing
 * (never the case after a scroll or erase), and a cursor waiting to wrap
 * whose cell changed under it since (a scroll or a screen switch in the
 * meantime: the copy's cursor waits only over a glyph in the last column
 * of the cell as it is now).  Caller frees. */
char *vt_sync_bytes(const vt_t *vt, int max_history, size_t *len);

/* Lines the primary screen has pushed into history so far (a count that
 * only grows, wrapping at UINT_MAX): how many scrolled off between two
 * moments, for a watch that sends frames instead of every byte. */
unsigned vt_history_pushes(const vt_t *vt);
/* Move src's history into dst, a model without history (oldest first,
 * with each line's marks and wrapped flag; src is left without any): a
 * client that replaces its model by a frame's keeps the history it had,
 * at no cost per line.  Nothing moves, and false is returned, when the
 * widths differ or dst already has history. */
bool vt_take_history(vt_t *dst, vt_t *src);
/* Damage: one flag per visible row, set by any change to it. */
bool vt_row_dirty(const vt_t *vt, int row);
void vt_clear_damage(vt_t *vt);

/* Append to b the SGR sequence that sets exactly this pen from a reset
 * (attributes, then the colours: indexed, 256 or RGB as the cell has them),
 * for whoever draws the model onto a terminal. */
struct buf;
void vt_put_sgr(struct buf *b, vt_color fg, vt_color bg, unsigned attrs);

#endif
