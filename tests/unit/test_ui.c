/* Unit tests for the TUI's pure parts: pane layouts (every pane inside the
 * main area, none overlapping, sizes that add up) and the bytes a key sends
 * to a session in each cursor-key mode. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "input.h"
#include "layout.h"

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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layouts),
        cmocka_unit_test(key_encoding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
