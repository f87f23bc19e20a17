/*
 * fuzz_vt_scan.c - libFuzzer target for the terminal model: the pre-scanner
 * and libvterm behind it must take any byte stream, cut anywhere, at any
 * size, without a crash, a leak or a read outside the grid.
 *
 * The first bytes of the input choose the size, where writes are cut and
 * when the terminal is resized; the rest is the stream.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Isrc -I<dir with an
 *     empty config.h> tests/fuzz/fuzz_vt_scan.c src/vt/vt.c src/vt/vt_ops.c \
 *     src/vt/vt_bytes.c src/vt/vt_grid.c src/vt/vt_reflow.c src/vt/vt_scan.c \
 *     src/vt/vt_scan_text.c src/vt/vt_scan_seq.c src/vt/vt_sgr.c src/base/width.c \
 *     src/base/utf8.c src/base/util.c $(pkg-config --cflags --libs vterm) -o fuzz_vt_scan
 *   ./fuzz_vt_scan -max_len=65536
 *
 * Every input also goes through a copy made from the sync bytes, resized
 * (a reflow) on both sides.
 *
 * Built with -DVT_FUZZ_MAIN it is a plain program that runs each file named
 * on the command line once (for valgrind or a regression corpus).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "vt/vt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_osc(void *user, int number, const char *payload, size_t len)
{
    size_t *sum = user;
    for (size_t k = 0; k < len; k++)
        *sum += (unsigned char)payload[k]; /* touch every byte */
    *sum += (size_t)number;
}

static void on_title(void *user, const char *title)
{
    size_t *sum = user;
    for (const char *p = title; *p; p++)
        *sum += (unsigned char)*p;
}

static void on_reply(void *user, const char *bytes, size_t len)
{
    size_t *sum = user;
    *sum += len ? (unsigned char)bytes[len - 1] : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    size_t sum = 0;
    vt_callbacks cb = { on_osc, NULL, on_title, on_reply };
    vt_t *vt = vt_new(1 + data[0] % 40, 2 + data[1] % 120, data[2] % 50, &cb, &sum);
    if (!vt)
        return 0;
    size_t cut = 1 + data[3] % 64;
    data += 4;
    size = size - 4;
    for (size_t off = 0; off < size; off += cut) {
        size_t n = size - off < cut ? size - off : cut;
        vt_write(vt, (const char *)data + off, n);
        if (data[off] == 0xff) /* now and then a resize */
            vt_resize(vt, 1 + data[off + n - 1] % 40, 2 + data[off] % 120);
    }
    for (int r = -vt_scrollback_len(vt); r < vt_rows(vt); r++) {
        int len;
        const vt_cell *l = vt_line(vt, r, &len);
        char buf[VT_CELL_TEXT_MAX];
        for (int c = 0; l && c < len; c++)
            sum += vt_cell_text(vt, &l[c], buf);
    }
    size_t n;
    char *t = vt_text(vt, -vt_scrollback_len(vt), vt_rows(vt) - 1, &n);
    free(t);
    char *rb = vt_redraw_bytes(vt, &n);
    vt_t *copy = vt_new(vt_rows(vt), vt_cols(vt), 0, NULL, NULL);
    vt_write(copy, rb, n);
    vt_free(copy);
    free(rb);
    char *sb = vt_sync_bytes(vt, 50, &n);
    copy = vt_new(vt_rows(vt), vt_cols(vt), 50, NULL, NULL);
    vt_write(copy, sb, n);
    free(sb);
    int rows = 1 + (int)(size % 30), cols = 2 + (int)(size % 97);
    vt_resize(vt, rows, cols);
    vt_resize(copy, rows, cols);
    for (int r = -vt_scrollback_len(copy); r < vt_rows(copy); r++)
        sum += vt_line_wrapped(copy, r);
    vt_free(copy);
    vt_free(vt);
    return sum == (size_t)-1; /* keeps sum alive */
}

#ifdef VT_FUZZ_MAIN
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 1;
        }
        static uint8_t buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
    }
    return 0;
}
#endif
