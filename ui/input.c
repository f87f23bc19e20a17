/*
 * input.c - see input.h.
 */
#include "config.h"

#include "input.h"
#include "util.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

static const struct {
    int curses;
    uint32_t key;
} specials[] = {
    {KEY_UP, KS_UP}, {KEY_DOWN, KS_DOWN}, {KEY_LEFT, KS_LEFT}, {KEY_RIGHT, KS_RIGHT},
    {KEY_HOME, KS_HOME}, {KEY_END, KS_END}, {KEY_PPAGE, KS_PGUP}, {KEY_NPAGE, KS_PGDN},
    {KEY_IC, KS_INSERT}, {KEY_DC, KS_DELETE}, {KEY_BTAB, KS_BTAB}, {KEY_ENTER, '\r'},
    {KEY_BACKSPACE, 0x7f},
};

/* xterm's modified keys, as ncurses names them ("kUP5" is C-Up): the
 * letter or number that ends their CSI sequence. */
static const struct {
    const char *name;
    const char *final;
} modified[] = {
    {"kUP", "A"}, {"kDN", "B"}, {"kRIT", "C"}, {"kLFT", "D"}, {"kHOM", "H"}, {"kEND", "F"},
    {"kPRV", "5~"}, {"kNXT", "6~"}, {"kIC", "2~"}, {"kDC", "3~"},
};

static bool decode_modified(int code, ui_key *k)
{
    const char *name = keyname(code);
    if (!name)
        return false;
    for (size_t i = 0; i < sizeof modified / sizeof modified[0]; i++) {
        size_t n = strlen(modified[i].name);
        if (strncmp(name, modified[i].name, n) != 0 || name[n] < '2' || name[n] > '8' || name[n + 1])
            continue;
        const char *f = modified[i].final;
        int mod = name[n] - '0';
        if (f[1] == '~') /* CSI 5 ; mod ~ */
            k->rawlen = (size_t)snprintf(k->raw, sizeof k->raw, "\033[%c;%d~", f[0], mod);
        else
            k->rawlen = (size_t)snprintf(k->raw, sizeof k->raw, "\033[1;%d%s", mod, f);
        return true;
    }
    return false;
}

static void decode_mouse(ui_key *k)
{
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return;
    k->mouse = true;
    k->mouse_y = ev.y;
    k->mouse_x = ev.x;
    if (ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON1_RELEASED))
        k->mouse_click = true;
    if (ev.bstate & BUTTON4_PRESSED)
        k->mouse_wheel_up = true;
#ifdef BUTTON5_PRESSED
    if (ev.bstate & BUTTON5_PRESSED)
        k->mouse_wheel_down = true;
#endif
}

int input_read(ui_key *k)
{
    memset(k, 0, sizeof *k);
    for (;;) {
        wint_t wch;
        int r = get_wch(&wch);
        if (r == ERR)
            return 0;
        if (r == OK) {
            k->key = (uint32_t)wch;
            return 1;
        }
        /* KEY_CODE_YES */
        if (wch == KEY_RESIZE)
            continue; /* the SIGWINCH handler re-lays out */
        if (wch == KEY_MOUSE) {
            decode_mouse(k);
            if (k->mouse)
                return 1;
            continue;
        }
        if (wch >= KEY_F(1) && wch <= KEY_F(12)) {
            k->key = KS_F1 + (uint32_t)(wch - KEY_F(1));
            return 1;
        }
        for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) {
            if ((int)wch == specials[i].curses) {
                k->key = specials[i].key;
                return 1;
            }
        }
        if (decode_modified((int)wch, k))
            return 1;
        /* Anything else curses knows and we do not: dropped. */
    }
}

size_t input_encode(const ui_key *k, bool app_cursor, char *out, size_t outlen)
{
    if (outlen < 16 || k->mouse)
        return 0;
    if (!k->key) {
        memcpy(out, k->raw, k->rawlen);
        return k->rawlen;
    }
    size_t n = 0;
    if (k->key & KEY_META)
        out[n++] = '\033';
    uint32_t key = k->key & ~KEY_META;
    if (key < KEY_SPECIAL)
        return n + utf8_put_scalar(key, out + n);
    static const char *const fkeys[12] = {"OP", "OQ", "OR", "OS", "[15~", "[17~", "[18~", "[19~", "[20~",
                                          "[21~", "[23~", "[24~"};
    const char *seq = NULL;
    char cursor[4] = {app_cursor ? 'O' : '[', 0, 0, 0};
    switch (key) {
    case KS_UP: cursor[1] = 'A'; seq = cursor; break;
    case KS_DOWN: cursor[1] = 'B'; seq = cursor; break;
    case KS_RIGHT: cursor[1] = 'C'; seq = cursor; break;
    case KS_LEFT: cursor[1] = 'D'; seq = cursor; break;
    case KS_HOME: cursor[1] = 'H'; seq = cursor; break;
    case KS_END: cursor[1] = 'F'; seq = cursor; break;
    case KS_PGUP: seq = "[5~"; break;
    case KS_PGDN: seq = "[6~"; break;
    case KS_INSERT: seq = "[2~"; break;
    case KS_DELETE: seq = "[3~"; break;
    case KS_BTAB: seq = "[Z"; break;
    default:
        if (key >= KS_F1 && key <= KS_F12)
            seq = fkeys[key - KS_F1];
        break;
    }
    if (!seq)
        return 0;
    out[n++] = '\033';
    size_t l = strlen(seq);
    memcpy(out + n, seq, l);
    return n + l;
}
