/*
 * input.c - see input.h.
 *
 * Keys curses has a code for are mapped to keyspec.h's codes; the modified
 * ones (S-Left, C-F5, M-PgUp...) are not keys the supervisor binds, so they
 * travel as the bytes xterm sends for them.  Which curses code stands for
 * which of them is learnt at start: for every xterm sequence, the code the
 * terminfo entry gives it (key_defined), or a code of our own (define_key)
 * when the entry does not know it, so they all arrive whatever the entry
 * says.  Codes the entry names in other ways (kUP5 for another sequence,
 * KEY_SLEFT) are mapped by name as a fallback.
 */
#include "config.h"

#include "input.h"
#include "base/util.h"
#include "vt/vt.h"

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

/* The keys xterm reports with modifiers: CSI PARAM ; MOD FINAL. */
static const struct {
    uint32_t key;
    const char *param;
    char final;
    const char *name; /* ncurses' name of the modified key, without the modifier digit */
} modifiable[] = {
    {KS_UP, "1", 'A', "kUP"},     {KS_DOWN, "1", 'B', "kDN"},   {KS_RIGHT, "1", 'C', "kRIT"},
    {KS_LEFT, "1", 'D', "kLFT"},  {KS_HOME, "1", 'H', "kHOM"},  {KS_END, "1", 'F', "kEND"},
    {KS_INSERT, "2", '~', "kIC"}, {KS_DELETE, "3", '~', "kDC"}, {KS_PGUP, "5", '~', "kPRV"},
    {KS_PGDN, "6", '~', "kNXT"},  {KS_F1, "1", 'P', NULL},      {KS_F1 + 1, "1", 'Q', NULL},
    {KS_F1 + 2, "1", 'R', NULL},  {KS_F1 + 3, "1", 'S', NULL},  {KS_F1 + 4, "15", '~', NULL},
    {KS_F1 + 5, "17", '~', NULL}, {KS_F1 + 6, "18", '~', NULL}, {KS_F1 + 7, "19", '~', NULL},
    {KS_F1 + 8, "20", '~', NULL}, {KS_F1 + 9, "21", '~', NULL}, {KS_F1 + 10, "23", '~', NULL},
    {KS_F1 + 11, "24", '~', NULL},
};
#define N_MODIFIABLE (sizeof modifiable / sizeof modifiable[0])
#define FIRST_MOD 2 /* shift */
#define LAST_MOD 8  /* shift + alt + ctrl */
#define N_MODS (LAST_MOD - FIRST_MOD + 1)

/* The shifted keys with a standard terminfo name of their own. */
static const struct {
    int curses;
    uint32_t key;
} shifted[] = {
    {KEY_SR, KS_UP},     {KEY_SF, KS_DOWN},         {KEY_SLEFT, KS_LEFT},  {KEY_SRIGHT, KS_RIGHT},
    {KEY_SHOME, KS_HOME}, {KEY_SEND, KS_END},       {KEY_SIC, KS_INSERT},  {KEY_SDC, KS_DELETE},
    {KEY_SPREVIOUS, KS_PGUP}, {KEY_SNEXT, KS_PGDN},
};

/* Codes we give sequences curses does not know: far above the ones it
 * gives its own extended keys (from KEY_MAX up), below 65536 (it keeps
 * them in 16 bits). */
#define OWN_CODES 0x4000
#define CODE_PASTE_START (OWN_CODES + (int)(N_MODIFIABLE * N_MODS))
#define CODE_PASTE_END (CODE_PASTE_START + 1)

/* curses code of each modified key (0: none), and of the paste edges. */
static int mod_code[N_MODIFIABLE][N_MODS];
static int paste_code[2];

/* The bytes xterm sends for modifiable[i] with modifier mod (2-8). */
static size_t xterm_modified(size_t i, int mod, char *out, size_t outlen)
{
    int n = snprintf(out, outlen, "\033[%s;%d%c", modifiable[i].param, mod, modifiable[i].final);
    return n > 0 && (size_t)n < outlen ? (size_t)n : 0;
}

/* The code curses returns for seq: the terminfo entry's, or own. */
static int learn(const char *seq, int own)
{
    int code = key_defined(seq);
    if (code > 0)
        return code;
    if (code == 0 && define_key(seq, own) == OK)
        return own;
    return 0; /* a prefix of another key: curses would split it anyway */
}

void input_start(bool mouse)
{
    for (size_t i = 0; i < N_MODIFIABLE; i++) {
        for (int m = FIRST_MOD; m <= LAST_MOD; m++) {
            char seq[16];
            mod_code[i][m - FIRST_MOD] =
                xterm_modified(i, m, seq, sizeof seq) ? learn(seq, OWN_CODES + (int)i * N_MODS + m - FIRST_MOD) : 0;
        }
    }
    paste_code[0] = learn("\033[200~", CODE_PASTE_START);
    paste_code[1] = learn("\033[201~", CODE_PASTE_END);
    /* Bracketed paste, so a paste is never taken for typed keys. */
    putp("\033[?2004h");
    if (mouse) {
        /* Press and release of every button and the wheel, unresolved
         * (mouseinterval 0), and motion: curses asks the terminal for
         * clicks (mode 1000, in SGR form where terminfo says so); drags
         * (1002) are asked for here, for programs that want them. */
        mousemask(ALL_MOUSE_EVENTS | REPORT_MOUSE_POSITION, NULL);
        mouseinterval(0);
        putp("\033[?1002h");
    }
    /* putp writes to stdio's stdout, which curses never flushes (it writes
     * its own buffer to the descriptor): unflushed, the modes reached the
     * terminal only as corral exited, and a paste in the meantime came as
     * keys (x, y: a session killed). */
    fflush(stdout);
}

void input_stop(void)
{
    putp("\033[?2004l");
    putp("\033[?1002l");
    fflush(stdout); /* before endwin's output, in the order written */
}

static bool set_raw(ui_key *k, const char *bytes, size_t n)
{
    if (n == 0 || n > sizeof k->raw)
        return false;
    memcpy(k->raw, bytes, n);
    k->rawlen = n;
    return true;
}

static bool set_modified(ui_key *k, size_t i, int mod)
{
    char seq[16];
    return set_raw(k, seq, xterm_modified(i, mod, seq, sizeof seq));
}

static size_t modifiable_index(uint32_t key)
{
    for (size_t i = 0; i < N_MODIFIABLE; i++)
        if (modifiable[i].key == key)
            return i;
    return N_MODIFIABLE;
}

/* A modified key by its curses code: learnt at start, a standard shifted
 * key, or an extended name ("kUP5" is C-Up). */
static bool decode_modified(int code, ui_key *k)
{
    for (size_t i = 0; i < N_MODIFIABLE; i++)
        for (int m = 0; m < N_MODS; m++)
            if (mod_code[i][m] == code)
                return set_modified(k, i, m + FIRST_MOD);
    for (size_t i = 0; i < sizeof shifted / sizeof shifted[0]; i++)
        if (shifted[i].curses == code)
            return set_modified(k, modifiable_index(shifted[i].key), 2);
    const char *name = keyname(code);
    if (!name)
        return false;
    for (size_t i = 0; i < N_MODIFIABLE; i++) {
        size_t n = modifiable[i].name ? strlen(modifiable[i].name) : 0;
        if (!n || strncmp(name, modifiable[i].name, n) != 0)
            continue;
        if (name[n] == 0) /* kUP: shift */
            return set_modified(k, i, 2);
        if (name[n] >= '2' && name[n] <= '8' && !name[n + 1])
            return set_modified(k, i, name[n] - '0');
    }
    return false;
}

static void decode_mouse(ui_key *k)
{
    /* The button held, for motion reports (curses does not say it). */
    static int held;
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return;
    mmask_t b = ev.bstate;
    k->mouse = true;
    k->mouse_y = ev.y;
    k->mouse_x = ev.x;
    k->mouse_mods = (b & BUTTON_SHIFT ? UI_MOUSE_SHIFT : 0) | (b & BUTTON_ALT ? UI_MOUSE_ALT : 0) |
                    (b & BUTTON_CTRL ? UI_MOUSE_CTRL : 0);
    static const mmask_t press[3] = {BUTTON1_PRESSED | BUTTON1_CLICKED, BUTTON2_PRESSED | BUTTON2_CLICKED,
                                     BUTTON3_PRESSED | BUTTON3_CLICKED};
    static const mmask_t release[3] = {BUTTON1_RELEASED, BUTTON2_RELEASED, BUTTON3_RELEASED};
    if (b & BUTTON4_PRESSED) {
        k->mouse_event = UM_WHEEL_UP;
        return;
    }
#ifdef BUTTON5_PRESSED
    if (b & BUTTON5_PRESSED) {
        k->mouse_event = UM_WHEEL_DOWN;
        return;
    }
#endif
    for (int i = 0; i < 3; i++) {
        if (b & press[i]) {
            k->mouse_event = UM_PRESS;
            k->mouse_button = held = i + 1;
            return;
        }
        if (b & release[i]) {
            k->mouse_event = UM_RELEASE;
            k->mouse_button = i + 1;
            held = 0;
            return;
        }
    }
    if (b & REPORT_MOUSE_POSITION) {
        k->mouse_event = held ? UM_DRAG : UM_MOVE;
        k->mouse_button = held;
        return;
    }
    k->mouse = false; /* nothing we know */
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
            if (wch == 0) /* C-Space, C-@: NUL, which is no key code */
                return set_raw(k, "", 1);
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
        if (paste_code[0] && (int)wch == paste_code[0]) {
            k->paste_start = true;
            return 1;
        }
        if (paste_code[1] && (int)wch == paste_code[1]) {
            k->paste_end = true;
            return 1;
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

size_t input_encode_mouse(const ui_key *k, unsigned modes, int row, int col, char *out, size_t outlen)
{
    if (!k->mouse || !(modes & VT_MODE_MOUSE_CLICK) || outlen < 32 || row < 0 || col < 0)
        return 0;
    bool sgr = modes & VT_MODE_MOUSE_SGR;
    int button = k->mouse_button >= 1 && k->mouse_button <= 3 ? k->mouse_button - 1 : 0;
    int cb;
    switch (k->mouse_event) {
    case UM_PRESS: cb = button; break;
    case UM_RELEASE: cb = sgr ? button : 3; break; /* the normal form does not say which */
    case UM_WHEEL_UP: cb = 64; break;
    case UM_WHEEL_DOWN: cb = 65; break;
    case UM_DRAG:
        if (!(modes & (VT_MODE_MOUSE_DRAG | VT_MODE_MOUSE_MOVE)))
            return 0;
        cb = 32 + button;
        break;
    case UM_MOVE:
        if (!(modes & VT_MODE_MOUSE_MOVE))
            return 0;
        cb = 32 + 3;
        break;
    default: return 0;
    }
    cb |= (int)(k->mouse_mods & (UI_MOUSE_SHIFT | UI_MOUSE_ALT | UI_MOUSE_CTRL));
    if (sgr) {
        int n = snprintf(out, outlen, "\033[<%d;%d;%d%c", cb, col + 1, row + 1,
                         k->mouse_event == UM_RELEASE ? 'm' : 'M');
        return n > 0 && (size_t)n < outlen ? (size_t)n : 0;
    }
    if (col + 1 > 223 || row + 1 > 223) /* a byte holds 32 + 223 at most */
        return 0;
    out[0] = '\033';
    out[1] = '[';
    out[2] = 'M';
    out[3] = (char)(32 + cb);
    out[4] = (char)(32 + col + 1);
    out[5] = (char)(32 + row + 1);
    return 6;
}

size_t input_paste_clean(char *buf, size_t len)
{
    static const char *const brackets[2] = {"\033[200~", "\033[201~"};
    bool removed = true;
    while (removed) {
        removed = false;
        for (int b = 0; b < 2; b++) {
            char *p;
            while ((p = memmem(buf, len, brackets[b], 6))) {
                memmove(p, p + 6, len - (size_t)(p - buf) - 6);
                len -= 6;
                removed = true;
            }
        }
    }
    return len;
}
