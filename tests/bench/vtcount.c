/*
 * vtcount.c - a byte stream through the terminal model, in-process, for
 * tests/bench/bench_vtinstr.py, which runs it under callgrind and counts
 * the instructions of feed_all alone (--collect-atstart=no
 * --toggle-collect=feed_all): reading the file and making the model do
 * not count.
 *
 *   vtcount corral FILE   corral's model (vt_new, vt_write), 200x50
 *   vtcount state FILE    libvterm's state layer alone, no callbacks: what
 *                         libvterm itself does for the bytes in the model
 *   vtcount screen FILE   libvterm with its own screen layer: libvterm as a
 *                         whole terminal model
 *
 * Every mode writes FILE's bytes in 4 KiB chunks, as the server reads a
 * PTY, and prints the byte count and a checksum of what it made (so that
 * the work cannot be optimised away, and two builds can be compared).
 *
 * Not a test: a helper the benchmark runs.
 */
#include "config.h"

#include "vt/vt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vterm.h>

#define ROWS 50
#define COLS 200
#define CHUNK 4096
#define SCROLLBACK 10000 /* the server's default ([session] scrollback) */

typedef void (*write_fn)(void *model, const char *bytes, size_t len);

static void write_corral(void *model, const char *bytes, size_t len)
{
    vt_write(model, bytes, len);
}

static void write_vterm(void *model, const char *bytes, size_t len)
{
    vterm_input_write(model, bytes, len);
}

/* The one function callgrind counts: every byte, in chunks.  noinline so
 * that it stays a function of its own for --toggle-collect. */
__attribute__((noinline)) void feed_all(write_fn w, void *model, const char *data, size_t len);
__attribute__((noinline)) void feed_all(write_fn w, void *model, const char *data, size_t len)
{
    for (size_t off = 0; off < len; off += CHUNK)
        w(model, data + off, len - off < CHUNK ? len - off : CHUNK);
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size + 1)) != NULL &&
        fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = size > 0 ? (size_t)size : 0;
    return buf;
}

/* A checksum of the model's screen text, so that its work is used. */
static unsigned long sum_corral(vt_t *vt)
{
    size_t n = 0;
    char *text = vt_text(vt, -vt_scrollback_len(vt), ROWS - 1, &n);
    unsigned long h = 5381;
    for (size_t k = 0; k < n; k++)
        h = h * 33 + (unsigned char)text[k];
    free(text);
    return h;
}

static unsigned long sum_vterm_screen(VTermScreen *screen)
{
    unsigned long h = 5381;
    for (int row = 0; row < ROWS; row++)
        for (int col = 0; col < COLS; col++) {
            VTermScreenCell cell;
            VTermPos pos = { row, col };
            if (vterm_screen_get_cell(screen, pos, &cell))
                h = h * 33 + cell.chars[0];
        }
    return h;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: vtcount corral|state|screen FILE\n");
        return 2;
    }
    size_t len = 0;
    char *data = read_all(argv[2], &len);
    if (!data) {
        fprintf(stderr, "vtcount: cannot read %s\n", argv[2]);
        return 1;
    }
    unsigned long sum = 0;
    if (strcmp(argv[1], "corral") == 0) {
        vt_t *vt = vt_new(ROWS, COLS, SCROLLBACK, NULL, NULL);
        feed_all(write_corral, vt, data, len);
        sum = sum_corral(vt);
        vt_free(vt);
    } else if (strcmp(argv[1], "state") == 0 || strcmp(argv[1], "screen") == 0) {
        VTerm *term = vterm_new(ROWS, COLS);
        vterm_set_utf8(term, 1);
        VTermScreen *screen = NULL;
        if (strcmp(argv[1], "screen") == 0) {
            screen = vterm_obtain_screen(term);
            vterm_screen_reset(screen, 1);
        } else {
            vterm_state_reset(vterm_obtain_state(term), 1);
        }
        feed_all(write_vterm, term, data, len);
        sum = screen ? sum_vterm_screen(screen) : 0;
        vterm_free(term);
    } else {
        fprintf(stderr, "vtcount: unknown mode %s\n", argv[1]);
        return 2;
    }
    printf("%zu bytes, checksum %lu\n", len, sum);
    free(data);
    return 0;
}
