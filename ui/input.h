/*
 * input.h - keys in and out: what curses reads from the real terminal as a
 * key code of keyspec.h (or, for keys it has no code for, the bytes that
 * stand for them), and a key as the bytes a session's terminal expects,
 * in the session's cursor-key mode.
 */
#ifndef CORRAL_UI_INPUT_H
#define CORRAL_UI_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keyspec.h"

typedef struct ui_key {
    uint32_t key;  /* 0 when only raw is set */
    char raw[16];  /* for keys without a code (C-Up...): the bytes to send */
    size_t rawlen;
    bool mouse;    /* a mouse event: see mouse_* */
    int mouse_y, mouse_x;
    bool mouse_click, mouse_wheel_up, mouse_wheel_down;
} ui_key;

/* Read the next key without waiting: 1 with *k filled, 0 when none. */
int input_read(ui_key *k);
/* The bytes a key sends to a session (app_cursor: DECCKM is set).
 * Returns the length (0: nothing to send). */
size_t input_encode(const ui_key *k, bool app_cursor, char *out, size_t outlen);

#endif
