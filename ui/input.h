/*
 * input.h - keys in and out: what curses reads from the real terminal as a
 * key code of keyspec.h (or, for keys it has no code for, the bytes that
 * stand for them), a mouse event or the edge of a paste; and a key, a mouse
 * event or a paste as the bytes a session's terminal expects, in the modes
 * the session's program set (cursor keys, mouse reporting, bracketed paste).
 *
 * A session's terminal is an xterm (TERM=xterm-256color), so everything is
 * encoded as xterm does: modified keys as CSI 1;mA or CSI n;m~ (m = 1 +
 * shift 1 + alt 2 + ctrl 4), C-Space as NUL, the mouse in the program's
 * encoding (SGR 1006, else the normal CSI M form).
 *
 * Included by the files of ui/ (through tui_int.h) and by the unit tests
 * (tests/unit/test_ui.c); not for other modules.
 */
#ifndef CORRAL_UI_INPUT_H
#define CORRAL_UI_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/keyspec.h"

typedef enum ui_mouse_event {
    UM_PRESS,      /* mouse_button 1-3 went down */
    UM_RELEASE,    /* and up */
    UM_DRAG,       /* moved with mouse_button held */
    UM_MOVE,       /* moved with no button held */
    UM_WHEEL_UP,
    UM_WHEEL_DOWN,
} ui_mouse_event;

/* Modifier bits of a mouse event, as xterm puts them in the button code. */
#define UI_MOUSE_SHIFT 4u
#define UI_MOUSE_ALT 8u
#define UI_MOUSE_CTRL 16u

typedef struct ui_key {
    uint32_t key;  /* 0 when only raw is set */
    char raw[16];  /* for keys without a code (C-Up, S-F5, C-Space...): the bytes to send */
    size_t rawlen;
    bool paste_start, paste_end; /* the terminal's bracketed-paste edges (no key) */
    bool mouse;    /* a mouse event: see mouse_* */
    int mouse_y, mouse_x;
    ui_mouse_event mouse_event;
    int mouse_button;    /* 1-3 for press, release and drag */
    unsigned mouse_mods; /* UI_MOUSE_* */
} ui_key;

/* After curses started (keypad on): teach curses the xterm sequences it
 * may not know (every modified cursor, editing and function key, the paste
 * brackets), and switch on bracketed paste and, with mouse, the mouse
 * reports (clicks, wheel, and drags).  input_stop() switches them off. */
void input_start(bool mouse);
void input_stop(void);
/* Read the next key without waiting: 1 with *k filled, 0 when none. */
int input_read(ui_key *k);
/* The bytes a key sends to a session (app_cursor: DECCKM is set).
 * Returns the length (0: nothing to send). */
size_t input_encode(const ui_key *k, bool app_cursor, char *out, size_t outlen);
/* The report of a mouse event at row, col of a session's screen (0-based)
 * for a program that set the mouse modes in modes (vt_modes()), or 0 when
 * the program did not ask for this kind of event or the position cannot be
 * encoded (beyond column or row 223 without SGR). */
size_t input_encode_mouse(const ui_key *k, unsigned modes, int row, int col, char *out, size_t outlen);
/* Remove every paste bracket (ESC[200~, ESC[201~) from pasted text, also
 * ones that removing another one forms, so a paste can never end the
 * bracket it is sent in.  Returns the new length. */
size_t input_paste_clean(char *buf, size_t len);

#endif
