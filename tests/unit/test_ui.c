/* Unit tests for the TUI's pure parts: pane layouts (every pane inside the
 * main area, none overlapping, sizes that add up), the bytes a key sends
 * to a session in each cursor-key mode, mouse reports in each mode a
 * program can ask for, and pasted text that can never close its bracket. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ui/input.h"
#include "ui/layout.h"
#include "vt/vt.h"

static void assert_tiles(ui_layout l, ui_rect area, int k, int want_placed)
{
    ui_rect r[LAYOUT_MAX_PANES];
    int n = layout_panes(l, area, k, r);
    assert_int_equal(n, want_placed);
    long cells = 0;
    for (int i = 0; i < n; i++) {
        assert_true(r[i].h >= 2 && r[i].w >= 8);
        assert_true(r[i].y >= area.y && r[i].y + r[i].h <= area.y + area.h);
        assert_true(r[i].x >= area.x && r[i].x + r[i].w <= area.x + area.w);
        for (int j = 0; j < i; j++) {
            bool apart = r[i].x >= r[j].x + r[j].w || r[j].x >= r[i].x + r[i].w || r[i].y >= r[j].y + r[j].h ||
                         r[j].y >= r[i].y + r[i].h;
            assert_true(apart);
        }
        cells += (long)r[i].h * r[i].w;
    }
    (void)cells;
}

static void layouts(void **state)
{
    (void)state;
    ui_rect area = {0, 29, 49, 171};
    assert_int_equal(layout_capacity(LAYOUT_SINGLE, 5), 1);
    assert_int_equal(layout_capacity(LAYOUT_VSPLIT, 5), 2);
    assert_int_equal(layout_capacity(LAYOUT_HSPLIT, 1), 1);
    assert_int_equal(layout_capacity(LAYOUT_GRID, 20), 9);
    assert_tiles(LAYOUT_SINGLE, area, 1, 1);
    assert_tiles(LAYOUT_VSPLIT, area, 2, 2);
    assert_tiles(LAYOUT_HSPLIT, area, 2, 2);
    for (int k = 1; k <= 9; k++)
        assert_tiles(LAYOUT_GRID, area, k, k);
    /* Side by side: the two widths and the separator fill the width. */
    ui_rect r[LAYOUT_MAX_PANES];
    layout_panes(LAYOUT_VSPLIT, area, 2, r);
    assert_int_equal(r[0].w + 1 + r[1].w, area.w);
    assert_int_equal(r[0].h, area.h);
    layout_panes(LAYOUT_HSPLIT, area, 2, r);
    assert_int_equal(r[0].h + r[1].h, area.h);
    /* Too small for more: fewer panes, never broken ones. */
    ui_rect tiny = {0, 0, 3, 12};
    assert_tiles(LAYOUT_GRID, tiny, 9, 1);
    assert_int_equal(layout_panes(LAYOUT_SINGLE, (ui_rect){0, 0, 1, 80}, 1, r), 0);
}

static void expect_bytes(uint32_t key, bool app, const char *want)
{
    ui_key k = {.key = key};
    char out[32];
    size_t n = input_encode(&k, app, out, sizeof out);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(out, want, n);
}

static void key_encoding(void **state)
{
    (void)state;
    expect_bytes('a', false, "a");
    expect_bytes(0x1d, false, "\x1d");
    expect_bytes('\r', false, "\r");
    expect_bytes(0xe9, false, "\xc3\xa9");
    expect_bytes(KEY_META | 'x', false, "\033x");
    expect_bytes(KS_UP, false, "\033[A");
    expect_bytes(KS_UP, true, "\033OA");
    expect_bytes(KS_LEFT, true, "\033OD");
    expect_bytes(KS_HOME, false, "\033[H");
    expect_bytes(KS_PGDN, true, "\033[6~");
    expect_bytes(KS_DELETE, false, "\033[3~");
    expect_bytes(KS_F1, false, "\033OP");
    expect_bytes(KS_F1 + 4, false, "\033[15~");
    expect_bytes(KS_F12, false, "\033[24~");
    expect_bytes(KS_BTAB, false, "\033[Z");
    expect_bytes(KS_WHEEL_UP, false, ""); /* a wheel is not a key for the session */
    ui_key raw = {.key = 0, .raw = "\033[1;5A", .rawlen = 6};
    char out[32];
    assert_int_equal(input_encode(&raw, false, out, sizeof out), 6);
    assert_memory_equal(out, "\033[1;5A", 6);
    ui_key nul = {.key = 0, .raw = "", .rawlen = 1}; /* C-Space */
    assert_int_equal(input_encode(&nul, false, out, sizeof out), 1);
    assert_int_equal(out[0], 0);
}

static void expect_mouse(ui_mouse_event ev, int button, unsigned mods, unsigned modes, int row, int col,
                         const char *want)
{
    size_t wantlen = strlen(want); /* no report holds a NUL: every byte of the normal form is 32 or more */
    ui_key k = {.mouse = true, .mouse_event = ev, .mouse_button = button, .mouse_mods = mods};
    char out[64];
    size_t n = input_encode_mouse(&k, modes, row, col, out, sizeof out);
    assert_int_equal(n, wantlen);
    assert_memory_equal(out, want, n);
}

static void mouse_reports(void **state)
{
    (void)state;
    const unsigned click = VT_MODE_MOUSE_CLICK, sgr = click | VT_MODE_MOUSE_SGR;
    const unsigned drag = click | VT_MODE_MOUSE_DRAG, any = drag | VT_MODE_MOUSE_MOVE;
    /* SGR (1006): 1-based, M for press, m for release with its button. */
    expect_mouse(UM_PRESS, 1, 0, sgr, 4, 11, "\033[<0;12;5M");
    expect_mouse(UM_RELEASE, 3, 0, sgr, 0, 0, "\033[<2;1;1m");
    expect_mouse(UM_WHEEL_UP, 0, 0, sgr, 9, 299, "\033[<64;300;10M");
    expect_mouse(UM_WHEEL_DOWN, 0, UI_MOUSE_CTRL, sgr, 0, 0, "\033[<81;1;1M");
    expect_mouse(UM_PRESS, 1, UI_MOUSE_SHIFT | UI_MOUSE_ALT, sgr, 0, 0, "\033[<12;1;1M");
    /* The normal form: 32 + button, column, row; a release is button 3. */
    expect_mouse(UM_PRESS, 2, 0, click, 4, 11, "\033[M!,%");
    expect_mouse(UM_RELEASE, 2, 0, click, 4, 11, "\033[M#,%");
    expect_mouse(UM_PRESS, 1, 0, click, 0, 222, "\033[M \xff!"); /* column 223: 32 + 223, the last a byte holds */
    expect_mouse(UM_PRESS, 1, 0, click, 0, 223, "");          /* beyond: nothing, never a wrong column */
    expect_mouse(UM_PRESS, 1, 0, sgr, 0, 223, "\033[<0;224;1M");
    /* Motion only where asked: drags with 1002, any motion with 1003. */
    expect_mouse(UM_DRAG, 1, 0, click, 1, 1, "");
    expect_mouse(UM_DRAG, 1, 0, drag, 1, 1, "\033[M@\"\"");
    expect_mouse(UM_MOVE, 0, 0, drag, 1, 1, "");
    expect_mouse(UM_MOVE, 0, 0, any | VT_MODE_MOUSE_SGR, 1, 1, "\033[<35;2;2M");
    /* A program that did not ask gets nothing. */
    expect_mouse(UM_PRESS, 1, 0, 0, 1, 1, "");
    expect_mouse(UM_WHEEL_UP, 0, 0, VT_MODE_BRACKETED_PASTE, 1, 1, "");
}

static void expect_clean(const char *in, const char *want)
{
    char buf[128];
    size_t len = strlen(in);
    memcpy(buf, in, len);
    len = input_paste_clean(buf, len);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(buf, want, len);
}

static void paste_brackets_removed(void **state)
{
    (void)state;
    expect_clean("plain\rtext", "plain\rtext");
    expect_clean("a\033[201~b", "ab");
    expect_clean("\033[200~x\033[201~", "x");
    /* Removing one must not leave another formed from its neighbours. */
    expect_clean("\033[20\033[201~1~rm -rf /\r", "rm -rf /\r");
    expect_clean("\033[2\033[201~\033[200~01~", "");
    expect_clean("\033[201", "\033[201"); /* not a whole bracket: left as it is */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layouts),
        cmocka_unit_test(key_encoding),
        cmocka_unit_test(mouse_reports),
        cmocka_unit_test(paste_brackets_removed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
