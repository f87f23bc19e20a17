/* Unit tests for reading and playing recordings (castread.h, castplay.h,
 * castskip.h): JSON strings decoded exactly, events and their errors, a
 * torn last line skipped with one warning, the idle limit, command
 * markers, the jumps between them and seeks; and, over many random
 * streams, that the fast way to the final screen (castplay_finish, which
 * may leave output out) ends with exactly the cells, cursor and cursor
 * visibility of a model that read everything. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/cast.h"
#include "record/castplay.h"
#include "record/castread.h"
#include "record/castskip.h"
#include "base/util.h"
#include "vt/vt.h"

static int warnings;
static char last_warning[1024];

static void count_warning(void *user, const char *msg)
{
    (void)user;
    warnings++;
    snprintf(last_warning, sizeof last_warning, "%s", msg);
}

static castread_t *open_text(const char *text, char *err, size_t errlen)
{
    warnings = 0;
    last_warning[0] = '\0';
    return castread_open_memory("test.cast", text, strlen(text), count_warning, NULL, err, errlen);
}

/* ---- a recording being written ---------------------------------------------------- */

typedef struct rec_builder {
    buf_t b;
    double t;
} rec_builder;

static void rb_start(rec_builder *rb, int cols, int rows)
{
    buf_init(&rb->b);
    buf_printf(&rb->b, "{\"version\": 2, \"width\": %d, \"height\": %d}\n", cols, rows);
    rb->t = 0;
}

static void rb_event(rec_builder *rb, double dt, const char *code, const char *data, size_t len)
{
    rb->t += dt;
    buf_printf(&rb->b, "[%.6f, \"%s\", \"", rb->t, code);
    json_escape_utf8(&rb->b, data, len);
    buf_puts(&rb->b, "\"]\n");
}

static void rb_out(rec_builder *rb, const char *s)
{
    rb_event(rb, 0.01, "o", s, strlen(s));
}

static castplay_t *play_of(const char *text, double idle)
{
    char err[512];
    castread_t *r = open_text(text, err, sizeof err);
    assert_non_null(r);
    castplay_opts o = {.idle_limit = idle, .scrollback = 1000};
    castplay_t *p = castplay_new(r, &o, err, sizeof err);
    assert_non_null(p);
    return p;
}

static char *screen_text(castplay_t *p)
{
    vt_t *vt = castplay_vt(p);
    return vt_text(vt, 0, vt_rows(vt) - 1, NULL);
}

/* ---- JSON strings ---------------------------------------------------------------- */

static void decode(const char *json, const char *want, size_t want_len)
{
    buf_t b;
    buf_init(&b);
    size_t used;
    assert_int_equal(castread_json_string(json, strlen(json), &b, &used), 0);
    assert_int_equal(used, strlen(json));
    assert_int_equal(b.len, want_len);
    assert_memory_equal(b.data, want, want_len);
    buf_free(&b);
}

static void json_strings(void **state)
{
    (void)state;
    decode("abc\"", "abc", 3);
    decode("\\u001b[31m\\r\\n\"", "\033[31m\r\n", 7);
    decode("\\\"\\\\\\/\\b\\f\\t\"", "\"\\/\b\f\t", 6);
    decode("caf\\u00e9 \xe6\xbc\xa2\"", "caf\xc3\xa9 \xe6\xbc\xa2", 9);
    decode("\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4);     /* a surrogate pair */
    decode("\\ud83dx\"", "\xef\xbf\xbdx", 4);              /* a lone high surrogate */
    decode("\\ude00\"", "\xef\xbf\xbd", 3);                /* a lone low one */
    decode("a\\u0000b\"", "a\0b", 3);                      /* NUL is data */
    buf_t b;
    buf_init(&b);
    size_t used;
    assert_int_equal(castread_json_string("abc", 3, &b, &used), -1);         /* unterminated */
    assert_int_equal(castread_json_string("a\nb\"", 4, &b, &used), -1);      /* a raw control */
    assert_int_equal(castread_json_string("\\x41\"", 5, &b, &used), -1);     /* a bad escape */
    assert_int_equal(castread_json_string("\\u12\"", 5, &b, &used), -1);     /* a short \u */
    buf_free(&b);
}

/* ---- events ----------------------------------------------------------------------- */

static void events_and_kinds(void **state)
{
    (void)state;
    char err[512];
    castread_t *r = open_text("{\"version\":2,\"width\":80,\"height\":24,\"title\":\"t\",\"idle_time_limit\":1.5}\n"
                              "[0.5, \"o\", \"hi\"]\n"
                              "\n"
                              "[1e0,\"r\",\"100x30\"]\n"
                              "[ 1.25 , \"m\" , \"cmd 1: ls\" ]\n"
                              "[1.5, \"i\", \"x\"]\n"
                              "[2, \"x\", {\"any\": [1, 2]}]\n"
                              "[3, \"r\", \"wide\"]\n"
                              "[4, \"o\", \"\\u001b]52;c;aGk=\\u0007\"]\n",
                              err, sizeof err);
    assert_non_null(r);
    const cast_header *h = castread_header(r);
    assert_int_equal(h->width, 80);
    assert_int_equal(h->height, 24);
    assert_string_equal(h->title, "t");
    assert_true(fabs(h->idle_time_limit - 1.5) < 1e-9);
    cast_event ev;
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), 1);
    assert_int_equal(ev.kind, CAST_OUTPUT);
    assert_true(fabs(ev.time - 0.5) < 1e-9);
    assert_int_equal(ev.len, 2);
    assert_memory_equal(ev.data, "hi", 2);
    assert_int_equal(ev.line, 2);
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), 1);
    assert_int_equal(ev.kind, CAST_RESIZE);
    assert_int_equal(ev.cols, 100);
    assert_int_equal(ev.rows, 30);
    assert_int_equal(ev.line, 4); /* the blank line counts */
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), 1);
    assert_int_equal(ev.kind, CAST_MARKER);
    assert_string_equal(ev.data, "cmd 1: ls");
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), 1);
    assert_int_equal(ev.kind, CAST_INPUT);
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), 1);
    assert_int_equal(ev.kind, CAST_OTHER); /* an unknown code, any data */
    assert_int_equal(warnings, 0);
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), 1);
    assert_int_equal(ev.kind, CAST_OTHER); /* a resize that is not COLSxROWS */
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(last_warning, "test.cast:8:"));
    assert_int_equal(castread_next(r, &ev, false, err, sizeof err), 1);
    assert_int_equal(ev.kind, CAST_OUTPUT);
    assert_null(ev.data); /* not decoded when not wanted */
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), 0);
    /* Read again: the same events, the warning not repeated. */
    castread_rewind(r);
    int n = 0;
    while (castread_next(r, &ev, true, err, sizeof err) > 0)
        n++;
    assert_int_equal(n, 7);
    assert_int_equal(warnings, 1);
    castread_close(r);
}

static void torn_last_line(void **state)
{
    (void)state;
    char err[512];
    castread_t *r = open_text("{\"version\":2,\"width\":80,\"height\":24}\n[0.1, \"o\", \"a\"]\n[0.2, \"o\", \"b",
                              err, sizeof err);
    assert_non_null(r);
    cast_event ev;
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), 1);
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), 0);
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(last_warning, "test.cast:3: the last line is incomplete"));
    castread_close(r);
    /* A complete last line without its newline is an event. */
    r = open_text("{\"version\":2,\"width\":80,\"height\":24}\n[0.1, \"o\", \"a\"]", err, sizeof err);
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), 1);
    assert_int_equal(warnings, 0);
    castread_close(r);
}

/* What a message quotes of a recording is made visible: the data of a
 * resize that is not one, a parser's "near '...'", a header's. */
static void messages_quote_the_recording_visibly(void **state)
{
    (void)state;
    char err[512];
    castread_t *r = open_text("{\"version\":2,\"width\":80,\"height\":24}\n"
                              "[0.1, \"r\", \"\\u001b]0;title\\u0007\\u009b31m\\u007f and more than forty bytes of it\"]\n"
                              "[0.2, \"o\", \"a\"] \x1b]0;near\x07\n[0.3, \"o\", \"b\"]\n",
                              err, sizeof err);
    assert_non_null(r);
    cast_event ev;
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), 1);
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(last_warning, "a resize to \"\\x1b]0;title\\x07\\u009b31m\\x7f and m"));
    assert_non_null(strstr(last_warning, "\xe2\x80\xa6[cut: "));
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), -1);
    assert_non_null(strstr(err, "test.cast:3: not JSON: end of file expected near '\\x1b'"));
    castread_close(r);
    assert_null(open_text("\xc2\x9b" "31m\n", err, sizeof err));
    assert_null(strchr(err, '\x1b'));
    assert_null(strstr(err, "\xc2\x9b"));
}

static void bad_lines_and_headers(void **state)
{
    (void)state;
    char err[512];
    castread_t *r = open_text("{\"version\":2,\"width\":80,\"height\":24}\n[0.1, \"o\", \"a\"]\nnot json\n[1,\"o\",\"b\"]\n",
                              err, sizeof err);
    cast_event ev;
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), 1);
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), -1);
    assert_non_null(strstr(err, "test.cast:3: not JSON"));
    castread_close(r);
    r = open_text("{\"version\":2,\"width\":80,\"height\":24}\n[0.1, \"o\", 5]\n", err, sizeof err);
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), -1);
    assert_non_null(strstr(err, "test.cast:2: the data of a \"o\" event must be a string"));
    castread_close(r);
    r = open_text("{\"version\":2,\"width\":80,\"height\":24}\n{\"a\": 1}\n", err, sizeof err);
    assert_int_equal(castread_next(r, &ev, true, err, sizeof err), -1);
    assert_non_null(strstr(err, "test.cast:2: not an asciicast v2 event"));
    castread_close(r);

    assert_null(open_text("", err, sizeof err));
    assert_non_null(strstr(err, "test.cast is empty"));
    assert_null(open_text("hello\n", err, sizeof err));
    assert_non_null(strstr(err, "test.cast is not an asciicast recording"));
    assert_null(open_text("{\"version\":1,\"width\":80,\"height\":24,\"stdout\":[]}\n", err, sizeof err));
    assert_non_null(strstr(err, "test.cast is asciicast version 1"));
    assert_null(open_text("{\"version\":2,\"width\":0,\"height\":24}\n", err, sizeof err));
    assert_non_null(strstr(err, "width and height"));
}

/* ---- playing ----------------------------------------------------------------------- */

static void idle_limit_and_advance(void **state)
{
    (void)state;
    const char *text = "{\"version\":2,\"width\":20,\"height\":3}\n"
                       "[1, \"o\", \"a\"]\n"
                       "[100, \"o\", \"b\"]\n"
                       "[100.5, \"o\", \"c\"]\n";
    castplay_t *p = play_of(text, 2);
    double t;
    assert_true(castplay_next_time(p, &t));
    assert_true(fabs(t - 1) < 1e-9);
    assert_int_equal(castplay_advance(p, 1, 0, NULL, 0), 1);
    assert_true(castplay_next_time(p, &t));
    assert_true(fabs(t - 3) < 1e-9); /* 99 s cut to 2 */
    char *s = screen_text(p);
    assert_string_equal(s, "a\n\n\n");
    free(s);
    char err[256];
    assert_int_equal(castplay_advance(p, 3.4, 0, err, sizeof err), 1);
    assert_int_equal(castplay_advance(p, 3.5, 0, err, sizeof err), 0);
    s = screen_text(p);
    assert_string_equal(s, "abc\n\n\n");
    free(s);
    castplay_free(p);
    /* 0 keeps every pause. */
    p = play_of(text, 0);
    assert_int_equal(castplay_advance(p, 1, 0, NULL, 0), 1);
    assert_true(castplay_next_time(p, &t));
    assert_true(fabs(t - 100) < 1e-9);
    castplay_free(p);
}

static void huge_sizes_are_cut(void **state)
{
    (void)state;
    castplay_t *p = play_of("{\"version\":2,\"width\":99999999,\"height\":99999999}\n[1,\"r\",\"5000x3\"]\n", 2);
    assert_int_equal(vt_cols(castplay_vt(p)), CASTPLAY_MAX_COLS);
    assert_int_equal(vt_rows(castplay_vt(p)), CASTPLAY_MAX_ROWS);
    assert_int_equal(warnings, 1);
    assert_int_equal(castplay_advance(p, 10, 0, NULL, 0), 0);
    assert_int_equal(vt_cols(castplay_vt(p)), CASTPLAY_MAX_COLS);
    assert_int_equal(vt_rows(castplay_vt(p)), 3);
    castplay_free(p);
}

/* A player, indexed, of three commands, the second after a marker of
 * another kind, the third never ended: markers 0 and 1 (command 1), 2
 * (other), 3 and 4 (command 2), 5 (command 3), a second apart. */
static castplay_t *three_commands(rec_builder *rb)
{
    rb_start(rb, 20, 3);
    rb_out(rb, "before\r\n");
    rb_event(rb, 1, "m", "cmd 1: echo one", 15);
    rb_out(rb, "\033[2J\033[Hone\r\n");
    rb_event(rb, 1, "m", "cmd 1 end: exit 0", 17);
    rb_event(rb, 1, "m", "a marker of another kind", 24);
    rb_event(rb, 1, "m", "cmd 2: echo two", 15);
    rb_out(rb, "two\r\n");
    rb_event(rb, 1, "m", "cmd 2 end: exit ?", 17);
    rb_event(rb, 1, "m", "cmd 3: echo three", 17);
    rb_out(rb, "\033[2J\033[Hthree");
    castplay_t *p = play_of(rb->b.data, 2);
    char err[256];
    assert_int_equal(castplay_index(p, err, sizeof err), 0);
    return p;
}

static void markers_and_seeks(void **state)
{
    (void)state;
    rec_builder rb;
    castplay_t *p = three_commands(&rb);
    char err[256];
    size_t n;
    const castplay_marker *m = castplay_markers(p, &n);
    assert_int_equal(n, 6);
    assert_int_equal(castplay_command_count(p), 3);
    assert_int_equal(m[0].command, 1);
    assert_false(m[0].end);
    assert_int_equal(m[1].command, 1);
    assert_true(m[1].end);
    assert_int_equal(m[2].command, 0);
    assert_int_equal(castplay_find_command(p, 2), 3);
    assert_int_equal(castplay_find_command(p, 9), -1);
    /* To command 2: the screen as it was there, nothing after. */
    assert_int_equal(castplay_seek(p, 3, err, sizeof err), 0);
    char *s = screen_text(p);
    assert_string_equal(s, "one\n\n\n");
    free(s);
    assert_int_equal(castplay_current_command(p), 2);
    assert_int_equal(castplay_markers_passed(p), 4);
    assert_true(fabs(castplay_time(p) - m[3].time) < 1e-9);
    /* On, then back to command 1 (a fresh model). */
    assert_int_equal(castplay_advance(p, 1e9, 0, err, sizeof err), 0);
    s = screen_text(p);
    assert_string_equal(s, "three\n\n\n");
    free(s);
    assert_int_equal(castplay_seek(p, 0, err, sizeof err), 0);
    s = screen_text(p);
    assert_string_equal(s, "before\n\n\n");
    free(s);
    assert_int_equal(castplay_current_command(p), 1);
    /* Back to the start. */
    assert_int_equal(castplay_seek(p, (size_t)-1, err, sizeof err), 0);
    s = screen_text(p);
    assert_string_equal(s, "\n\n\n");
    free(s);
    castplay_free(p);
    buf_free(&rb.b);
}

/* n and p of both replays: forward to the next command's start; back to
 * the start of the command playing, or within the grace after that start
 * to the one before it (the recording's start before the first); ends and
 * markers of another kind are never targets. */
static void command_jumps(void **state)
{
    (void)state;
    rec_builder rb;
    castplay_t *p = three_commands(&rb);
    char err[256];
    size_t n, target = 99;
    const castplay_marker *m = castplay_markers(p, &n);
    assert_int_equal(n, 6);
    /* At the start: forward to command 1; back has nothing behind it. */
    assert_true(castplay_jump_target(p, true, 0, 1.5, &target));
    assert_int_equal(target, 0);
    assert_true(castplay_jump_target(p, false, 0, 1.5, &target));
    assert_int_equal(target, (size_t)-1);
    /* In command 2, well after its start: back to its start; forward over
     * its end marker to command 3. */
    assert_int_equal(castplay_seek(p, 3, err, sizeof err), 0);
    assert_true(castplay_jump_target(p, false, m[3].time + 5, 1.5, &target));
    assert_int_equal(target, 3);
    assert_true(castplay_jump_target(p, true, m[3].time + 5, 1.5, &target));
    assert_int_equal(target, 5);
    /* Right after its start: back to command 1, past the other marker. */
    assert_true(castplay_jump_target(p, false, m[3].time + 0.5, 1.5, &target));
    assert_int_equal(target, 0);
    /* Right after command 1's start: back to the recording's start. */
    assert_int_equal(castplay_seek(p, 0, err, sizeof err), 0);
    assert_true(castplay_jump_target(p, false, m[0].time + 0.5, 1.5, &target));
    assert_int_equal(target, (size_t)-1);
    /* In the last command: nothing forward; back as before. */
    assert_int_equal(castplay_seek(p, 5, err, sizeof err), 0);
    target = 99;
    assert_false(castplay_jump_target(p, true, m[5].time + 5, 1.5, &target));
    assert_true(castplay_jump_target(p, false, m[5].time + 5, 1.5, &target));
    assert_int_equal(target, 5);
    assert_true(castplay_jump_target(p, false, m[5].time, 1.5, &target));
    assert_int_equal(target, 3);
    /* The jump's target is where a seek goes: the screen of command 2. */
    assert_int_equal(castplay_seek(p, target, err, sizeof err), 0);
    assert_int_equal(castplay_current_command(p), 2);
    castplay_free(p);
    buf_free(&rb.b);
}

/* A huge output event goes in slices (a caller stays responsive), ends the
 * same as fed whole, and an index taken halfway through it changes nothing. */
static void large_event_in_slices(void **state)
{
    (void)state;
    rec_builder rb;
    rb_start(&rb, 30, 4);
    buf_t big;
    buf_init(&big);
    for (int i = 0; i < 5000; i++)
        buf_printf(&big, "line %d of a big event\r\n", i);
    rb_event(&rb, 0.5, "o", big.data, big.len);
    rb_event(&rb, 0.1, "m", "cmd 1: next", 11);
    rb_out(&rb, "after\r\n");
    castplay_t *p = play_of(rb.b.data, 2);
    char err[256];
    assert_int_equal(castplay_advance(p, 10, 4096, err, sizeof err), 1); /* a slice, more to come */
    char *s = screen_text(p);
    assert_null(strstr(s, "line 4999"));
    free(s);
    assert_int_equal(castplay_index(p, err, sizeof err), 0);
    int guard = 0;
    while (castplay_advance(p, 10, 4096, err, sizeof err) == 1 && guard++ < 100000)
        ;
    s = screen_text(p);
    assert_string_equal(s, "line 4998 of a big event\nline 4999 of a big event\nafter\n\n");
    free(s);
    assert_int_equal(castplay_current_command(p), 1);
    castplay_free(p);
    buf_free(&big);
    buf_free(&rb.b);
}

/* Each line is warned about once, in whatever order passes meet them. */
static void warnings_once_per_line(void **state)
{
    (void)state;
    const char *text = "{\"version\":2,\"width\":20,\"height\":3}\n"
                       "[1, \"r\", \"bad\"]\n"
                       "[2, \"o\", \"a\"]\n"
                       "[3, \"r\", \"worse\"]\n"
                       "[4, \"o\", \"b";
    castplay_t *p = play_of(text, 2);
    char err[256];
    castread_t *r = castplay_reader(p);
    castread_warn(r, 1000, 9, "a later line first");
    assert_int_equal(warnings, 1);
    assert_int_equal(castplay_index(p, err, sizeof err), 0);
    assert_int_equal(warnings, 4); /* both bad resizes and the torn line, though a later line came first */
    assert_int_equal(castplay_finish(p, err, sizeof err), 0);
    assert_int_equal(warnings, 4);
    castplay_free(p);
}

/* ---- the fast way to the end is exact ----------------------------------------------- */

static uint64_t rng;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* Bits of output: common ones often, state changes now and then. */
static const char *const lines[] = {
    "make: compiling", "ok", "\033[32mPASS\033[0m test_one", "\033[1;31mFAIL\033[m", "caf\xc3\xa9",
    "\xe6\xbc\xa2\xe5\xad\x97 wide", "\xf0\x9f\x98\x80 emoji", "e\xcc\x81 combining", "tab\there\tend",
    "back\bspace", "\033[38;5;200mindexed\033[39m", "\033[38;2;1;2;3;48;2;4;5;6mrgb\033[0m",
    "\033[38:2::10:20:30mcolon\033[0m", "\033[7mreverse", "\033[44mblue background", "\033[0;4munder",
    "bell\a", "\033]0;a title\a", "\033]133;A\033\\prompt$ ", "\033[?25l", "\033[?25h", "\033[?2004h",
    "\033[?1000h\033[?1006h", "\033=keypad\033>",
    "a very long line that is longer than the terminal is wide, so that autowrap carries it on to the "
    "next row and then some more",
};
static const char *const cells[] = {
    "\033[K", "\033[2J", "\033[H", "\033[3;4H", "\033[2A", "\033[5C", "\033[1J", "\033[2@", "\033[3P",
    "\033[2L", "\033[M", "\033[S", "\033[2T", "\033[4X", "\033[3b", "\033[10G", "\033M", "\033D", "\033[99;99H",
};
static const char *const barriers[] = {
    "\033[2;4r", "\033[?1049h", "\033[?1049l", "\0337", "\0338", "\033(0", "\033(B", "\033[4h", "\033[?7l",
    "\033[?6h", "\033c", "\033H", "\033[3g", "\033[s", "\033[u", "\033[20h", "\033[?47h",
};

static void gen_stream(buf_t *out, int rows)
{
    int nlines = 10 + (int)rnd(rows * 8);
    bool barrier_stream = rnd(3) == 0;
    for (int i = 0; i < nlines; i++) {
        unsigned k = rnd(100);
        if (k < 60)
            buf_puts(out, lines[rnd(sizeof lines / sizeof *lines)]);
        else if (k < 70)
            buf_puts(out, cells[rnd(sizeof cells / sizeof *cells)]);
        else if (k < 72 && barrier_stream)
            buf_puts(out, barriers[rnd(sizeof barriers / sizeof *barriers)]);
        unsigned e = rnd(10);
        buf_puts(out, e < 7 ? "\r\n" : e < 8 ? "\n" : e < 9 ? "\r" : "");
    }
}

static void assert_same_screen(vt_t *a, vt_t *b, unsigned long seed)
{
    if (vt_rows(a) != vt_rows(b) || vt_cols(a) != vt_cols(b))
        fail_msg("seed %lu: sizes differ", seed);
    for (int r = 0; r < vt_rows(a); r++) {
        int la, lb;
        const vt_cell *ca = vt_line(a, r, &la), *cb = vt_line(b, r, &lb);
        for (int c = 0; c < vt_cols(a); c++) {
            static const vt_cell blank = {0, 0, 0, 0, 1, 0};
            const vt_cell *x = c < la ? &ca[c] : &blank, *y = c < lb ? &cb[c] : &blank;
            char tx[VT_CELL_TEXT_MAX], ty[VT_CELL_TEXT_MAX];
            size_t nx = vt_cell_text(a, x, tx), ny = vt_cell_text(b, y, ty);
            if (x->ch != y->ch || x->fg != y->fg || x->bg != y->bg || x->attrs != y->attrs ||
                x->width != y->width || nx != ny || memcmp(tx, ty, nx) != 0) {
                char *ta = vt_text(a, 0, vt_rows(a) - 1, NULL), *tb = vt_text(b, 0, vt_rows(b) - 1, NULL);
                fail_msg("seed %lu: row %d col %d differs: U+%04X fg %08x bg %08x attrs %x / U+%04X fg %08x "
                         "bg %08x attrs %x\nall:\n%s\nfast:\n%s",
                         seed, r, c, x->ch, x->fg, x->bg, x->attrs, y->ch, y->fg, y->bg, y->attrs, ta, tb);
            }
        }
    }
    int ra, ca_, rb, cb_;
    vt_cursor(a, &ra, &ca_);
    vt_cursor(b, &rb, &cb_);
    if (ra != rb || ca_ != cb_)
        fail_msg("seed %lu: cursor %d,%d / %d,%d", seed, ra, ca_, rb, cb_);
    if ((vt_modes(a) ^ vt_modes(b)) & VT_MODE_CURSOR_VISIBLE)
        fail_msg("seed %lu: cursor visibility differs", seed);
}

/* Split a stream into events at character boundaries (escape sequences may
 * be cut), now and then with a resize between them. */
static void gen_recording(rec_builder *rb, const buf_t *stream, int cols, int rows, bool resizes)
{
    rb_start(rb, cols, rows);
    size_t i = 0;
    while (i < stream->len) {
        size_t n = 1 + rnd(120);
        if (i + n > stream->len)
            n = stream->len - i;
        while (i + n < stream->len && ((unsigned char)stream->data[i + n] & 0xc0) == 0x80)
            n++;
        rb_event(rb, 0.001 * rnd(5000), "o", stream->data + i, n);
        i += n;
        if (resizes && rnd(40) == 0) {
            char size[32];
            snprintf(size, sizeof size, "%dx%d", 10 + (int)rnd(60), 3 + (int)rnd(20));
            rb_event(rb, 0.1, "r", size, strlen(size));
        }
    }
}

static void finish_equals_full_feed(void **state)
{
    (void)state;
    int skipped = 0, runs = 400;
    for (int k = 0; k < runs; k++) {
        unsigned long seed = 1000 + (unsigned long)k;
        rng = seed * 2654435761u + 1;
        int rows = 2 + (int)rnd(12), cols = 8 + (int)rnd(60);
        buf_t stream;
        buf_init(&stream);
        gen_stream(&stream, rows);
        rec_builder rb;
        gen_recording(&rb, &stream, cols, rows, rnd(4) == 0);
        char err[512];
        castplay_t *all = play_of(rb.b.data, 2);
        assert_int_equal(castplay_advance(all, 1e300, 0, err, sizeof err), 0);
        castplay_t *fast = play_of(rb.b.data, 2);
        assert_int_equal(castplay_finish(fast, err, sizeof err), 0);
        if (castplay_skipped(fast) > 0)
            skipped++;
        assert_same_screen(castplay_vt(all), castplay_vt(fast), seed);
        assert_true(fabs(castplay_time(all) - castplay_time(fast)) < 1e-9);
        castplay_free(all);
        castplay_free(fast);
        buf_free(&rb.b);
        buf_free(&stream);
    }
    /* Not a vacuous comparison: many of them did leave output out. */
    print_message("%d of %d recordings were skipped into\n", skipped, runs);
    if (skipped < runs / 4)
        fail_msg("only %d of %d recordings were skipped into", skipped, runs);
}

/* A stream where the skip must not happen: a scroll region set at the start
 * keeps the rows above it. */
static void finish_respects_state(void **state)
{
    (void)state;
    rec_builder rb;
    rb_start(&rb, 20, 4);
    rb_out(&rb, "\033[1;1Htop stays\033[2;4r\033[4;1H");
    for (int i = 0; i < 40; i++) {
        char line[32];
        snprintf(line, sizeof line, "line %d\r\n", i);
        rb_out(&rb, line);
    }
    castplay_t *fast = play_of(rb.b.data, 2);
    char err[256];
    assert_int_equal(castplay_finish(fast, err, sizeof err), 0);
    assert_int_equal(castplay_skipped(fast), 0);
    char *s = screen_text(fast);
    assert_string_equal(s, "top stays\nline 38\nline 39\n\n");
    free(s);
    castplay_free(fast);
    buf_free(&rb.b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_strings),
        cmocka_unit_test(events_and_kinds),
        cmocka_unit_test(torn_last_line),
        cmocka_unit_test(bad_lines_and_headers),
        cmocka_unit_test(messages_quote_the_recording_visibly),
        cmocka_unit_test(idle_limit_and_advance),
        cmocka_unit_test(huge_sizes_are_cut),
        cmocka_unit_test(markers_and_seeks),
        cmocka_unit_test(command_jumps),
        cmocka_unit_test(large_event_in_slices),
        cmocka_unit_test(warnings_once_per_line),
        cmocka_unit_test(finish_equals_full_feed),
        cmocka_unit_test(finish_respects_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
