/*
 * vt_helpers.h - what the terminal model's unit tests share: a model whose
 * callbacks are recorded, writing strings to it, and asserting rows, the
 * cursor and cells.  Included by one test program each (static functions).
 */
#ifndef CORRAL_VT_HELPERS_H
#define CORRAL_VT_HELPERS_H

#include "base/util.h"
#include "vt/vt.h"

/* What the callbacks saw. */
typedef struct record {
    int osc_count;
    int osc_number[16];
    char osc_payload[16][256];
    int bells;
    int titles;
    char title[512];
    char reply[256];
    size_t reply_len;
} record;

static record rec;

static __attribute__((unused)) void on_osc(void *user, int number, const char *payload, size_t len)
{
    (void)user;
    if (rec.osc_count < 16) {
        rec.osc_number[rec.osc_count] = number;
        size_t n = len < 255 ? len : 255;
        memcpy(rec.osc_payload[rec.osc_count], payload, n);
        rec.osc_payload[rec.osc_count][n] = '\0';
    }
    rec.osc_count++;
}

static __attribute__((unused)) void on_bell(void *user)
{
    (void)user;
    rec.bells++;
}

static __attribute__((unused)) void on_title(void *user, const char *title)
{
    (void)user;
    rec.titles++;
    snprintf(rec.title, sizeof rec.title, "%s", title);
}

static __attribute__((unused)) void on_reply(void *user, const char *bytes, size_t len)
{
    (void)user;
    if (rec.reply_len + len < sizeof rec.reply) {
        memcpy(rec.reply + rec.reply_len, bytes, len);
        rec.reply_len += len;
        rec.reply[rec.reply_len] = '\0';
    }
}

static const vt_callbacks callbacks = { on_osc, on_bell, on_title, on_reply };

static __attribute__((unused)) vt_t *mk(int rows, int cols, int sb)
{
    memset(&rec, 0, sizeof rec);
    vt_t *vt = vt_new(rows, cols, sb, &callbacks, NULL);
    assert_non_null(vt);
    return vt;
}

static __attribute__((unused)) void w(vt_t *vt, const char *s)
{
    vt_write(vt, s, strlen(s));
}

/* Text of one row without its newline. */
static __attribute__((unused)) char *row_text(vt_t *vt, int row)
{
    size_t len;
    char *t = vt_text(vt, row, row, &len);
    assert_true(len >= 1);
    assert_int_equal(t[len - 1], '\n');
    t[len - 1] = '\0';
    return t;
}

#define assert_row(vt, row, want)                \
    do {                                         \
        char *got_ = row_text((vt), (row));      \
        assert_string_equal(got_, (want));       \
        free(got_);                              \
    } while (0)

static __attribute__((unused)) void assert_cursor(vt_t *vt, int row, int col)
{
    int r, c;
    vt_cursor(vt, &r, &c);
    assert_int_equal(r, row);
    assert_int_equal(c, col);
}

static __attribute__((unused)) const vt_cell *cell(vt_t *vt, int row, int col)
{
    int len;
    const vt_cell *l = vt_line(vt, row, &len);
    assert_non_null(l);
    assert_true(col < len);
    return &l[col];
}

#endif
