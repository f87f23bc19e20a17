/*
 * vtdrive - a terminal in a program, for tests of full-screen programs.
 *
 *   vtdrive ROWS COLS -- PROGRAM [ARGS...]
 *
 * Runs PROGRAM on a new PTY of ROWS x COLS as a session leader with the PTY
 * as its controlling terminal, and feeds everything it writes into corral's
 * terminal model (src/vt/vt.h), answering terminal queries (DA, CPR) through the
 * model's reply callback as a real terminal would.  Every byte the program
 * wrote is also kept, in order (at most 64 MiB: the oldest are dropped).
 *
 * Commands come on stdin, one JSON object per line; each gets exactly one
 * reply line of JSON on stdout: {"ok":true,...} or {"ok":false,"error":...}.
 * The protocol is described in tests/tui/README.md.  The PTY is read at all
 * times, also while no command is running, so the program never blocks on
 * a full PTY.  On EOF of stdin (or SIGTERM, SIGINT, SIGHUP) the program's
 * process group gets SIGHUP, then every process of its session SIGKILL, and
 * vtdrive exits 0.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "protocol/proto.h"
#include "base/util.h"
#include "vt/vt.h"

#define OUT_MAX ((size_t)64 << 20)  /* program output kept for "bytes" */
#define OUT_DROP ((size_t)8 << 20)  /* dropped at once when over OUT_MAX */
#define READ_CHUNK 65536
#define DEFAULT_TIMEOUT_MS 30000
#define SCROLLBACK 10000
#define HANGUP_GRACE_MS 1000 /* between SIGHUP and SIGKILL at the end */

static struct {
    int master;
    bool master_eof; /* no slave end open any more: nothing more to read */
    int sigfd;
    pid_t pid;
    bool exited;     /* the program has exited (a zombie until the end) */
    int status;      /* exit code, or 128 + signal */
    int signal;      /* the signal that killed it, or 0 */
    vt_t *vt;
    unsigned long gen; /* changes whenever the screen may have changed */

    buf_t out;         /* program output from absolute offset out_base */
    uint64_t out_base;

    buf_t in;          /* bytes queued for the PTY (sends and vt replies) */
    size_t in_off;
    int write_errno;   /* a write to the PTY failed with this */

    buf_t cmd;         /* stdin not yet consumed */
    bool cmd_eof;
    bool quit;
} D;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("vtdrive: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- the PTY ------------------------------------------------------------ */

static void record_output(const char *p, size_t n)
{
    if (D.out.len + n > OUT_MAX) {
        size_t drop = D.out.len + n - OUT_MAX;
        if (drop < OUT_DROP)
            drop = OUT_DROP;
        if (drop >= D.out.len) {
            /* n alone is more than fits: keep its tail */
            D.out_base += D.out.len;
            buf_reset(&D.out);
            if (n > OUT_MAX) {
                D.out_base += n - OUT_MAX;
                p += n - OUT_MAX;
                n = OUT_MAX;
            }
        } else {
            buf_consume(&D.out, drop);
            D.out_base += drop;
        }
    }
    buf_append(&D.out, p, n);
}

static void flush_input(void)
{
    while (D.in_off < D.in.len && !D.master_eof) {
        ssize_t n = write(D.master, D.in.data + D.in_off, D.in.len - D.in_off);
        if (n > 0) {
            D.in_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            return;
        } else {
            D.write_errno = n < 0 ? errno : EIO;
            break;
        }
    }
    buf_reset(&D.in);
    D.in_off = 0;
}

static void queue_input(const char *p, size_t n)
{
    if (D.in_off == D.in.len) {
        buf_reset(&D.in);
        D.in_off = 0;
    }
    buf_append(&D.in, p, n);
    flush_input();
}

/* The model answers a query (DA, CPR, ...): the program reads the answer. */
static void on_reply(void *user, const char *bytes, size_t len)
{
    (void)user;
    queue_input(bytes, len);
}

/* One read from the PTY.  >0: bytes read and fed to the model; 0: nothing
 * to read now; -1: end of output (no slave end open any more). */
static ssize_t read_master(void)
{
    static char buf[READ_CHUNK];
    if (D.master_eof)
        return -1;
    ssize_t n = read(D.master, buf, sizeof buf);
    if (n > 0) {
        record_output(buf, (size_t)n);
        vt_write(D.vt, buf, (size_t)n);
        D.gen++;
        return n;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    /* EIO (Linux) or 0: every slave descriptor is closed */
    D.master_eof = true;
    buf_reset(&D.in);
    D.in_off = 0;
    return -1;
}

/* Read what is there now, at most max bytes (a program that never stops
 * writing must not keep us here). */
static void drain(size_t max)
{
    size_t got = 0;
    while (got < max) {
        ssize_t n = read_master();
        if (n <= 0)
            break;
        got += (size_t)n;
    }
}

static void check_child(void)
{
    if (D.exited)
        return;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    /* WNOWAIT: the zombie keeps the pid, so the process group and session
     * ids cannot be reused before we kill what is left of them at the end. */
    if (waitid(P_PID, (id_t)D.pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == D.pid) {
        D.exited = true;
        if (si.si_code == CLD_EXITED) {
            D.status = si.si_status;
            D.signal = 0;
        } else {
            D.signal = si.si_status;
            D.status = 128 + si.si_status;
        }
    }
}

static void handle_signals(void)
{
    struct signalfd_siginfo si;
    while (read(D.sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGCHLD)
            check_child();
        else
            D.quit = true;
    }
}

static void read_commands(void)
{
    char tmp[65536];
    ssize_t n = read(0, tmp, sizeof tmp);
    if (n > 0)
        buf_append(&D.cmd, tmp, (size_t)n);
    else if (n == 0 || (errno != EINTR && errno != EAGAIN))
        D.cmd_eof = true;
}

/* Wait up to timeout_ms (-1: no limit) for an event and handle it: at most
 * one read from the PTY (so a caller can look at the screen after every
 * chunk), queued input written, the child's exit noticed, and with
 * want_cmds, stdin read.  Returns true if program output was read. */
static bool pump(int64_t timeout_ms, bool want_cmds)
{
    struct pollfd p[3];
    p[0].fd = D.master_eof ? -1 : D.master;
    p[0].events = (short)(POLLIN | (D.in_off < D.in.len ? POLLOUT : 0));
    p[1].fd = D.sigfd;
    p[1].events = POLLIN;
    p[2].fd = want_cmds && !D.cmd_eof ? 0 : -1;
    p[2].events = POLLIN;
    for (int i = 0; i < 3; i++)
        p[i].revents = 0;
    if (timeout_ms > 24 * 3600 * 1000)
        timeout_ms = 24 * 3600 * 1000;
    int r = poll(p, 3, (int)timeout_ms);
    if (r < 0) {
        if (errno == EINTR)
            return false;
        say("poll failed: %s", strerror(errno));
        D.quit = true;
        return false;
    }
    bool got = false;
    if (p[1].revents)
        handle_signals();
    if (p[0].revents & POLLOUT)
        flush_input();
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
        got = read_master() > 0;
    if (p[2].revents)
        read_commands();
    return got;
}

/* ---- screen helpers ------------------------------------------------------ */

/* The visible screen: rows joined with '\n', trailing blanks of each row
 * trimmed. */
static char *screen_text(size_t *len)
{
    size_t n = 0;
    char *t = vt_text(D.vt, 0, vt_rows(D.vt) - 1, &n);
    if (n > 0 && t[n - 1] == '\n')
        t[--n] = '\0';
    if (len)
        *len = n;
    return t;
}

/* One row as UTF-8 with blanks as spaces, trailing ones trimmed as in the
 * screen text; colmap[i] is the screen column of byte i. */
static char *row_text(int row, int **colmap, size_t *len)
{
    int n = 0;
    const vt_cell *cells = vt_line(D.vt, row, &n);
    buf_t b;
    buf_init(&b);
    buf_reserve(&b, 0);
    int *map = xmalloc(((size_t)n * VT_CELL_TEXT_MAX + 1) * sizeof *map);
    for (int k = 0; cells && k < n; k++) {
        char tmp[VT_CELL_TEXT_MAX];
        if (cells[k].ch == VT_CH_WIDE_CONT)
            continue;
        size_t t = vt_cell_text(D.vt, &cells[k], tmp);
        if (t == 0) {
            tmp[0] = ' ';
            t = 1;
        }
        for (size_t i = 0; i < t; i++)
            map[b.len + i] = k;
        buf_append(&b, tmp, t);
    }
    while (b.len > 0 && b.data[b.len - 1] == ' ')
        b.len--;
    b.data[b.len] = '\0';
    map[b.len] = n;
    *colmap = map;
    *len = b.len;
    return buf_steal(&b);
}

/* A JSON string from bytes that should be UTF-8 (anything else becomes '?'). */
static json_t *jstr(const char *s, size_t len)
{
    json_t *j = json_stringn(s, len);
    if (j)
        return j;
    char *clean = sanitize_text(s, len, len);
    j = json_string(clean);
    free(clean);
    return j ? j : json_string("");
}

static json_t *jscreen(void)
{
    size_t n;
    char *t = screen_text(&n);
    json_t *j = jstr(t, n);
    free(t);
    return j;
}

static json_t *jcolor(vt_color c)
{
    char s[16];
    switch (VT_COLOR_KIND(c)) {
    case VT_COLOR_KIND_INDEXED:
        snprintf(s, sizeof s, "idx:%u", (unsigned)(c & 0xffu));
        break;
    case VT_COLOR_KIND_RGB:
        snprintf(s, sizeof s, "#%06x", (unsigned)(c & 0xffffffu));
        break;
    default:
        snprintf(s, sizeof s, "default");
    }
    return json_string(s);
}

static json_t *jattrs(unsigned a)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {VT_ATTR_BOLD, "bold"},       {VT_ATTR_DIM, "dim"},         {VT_ATTR_ITALIC, "italic"},
        {VT_ATTR_UNDERLINE, "underline"}, {VT_ATTR_BLINK, "blink"}, {VT_ATTR_REVERSE, "reverse"},
        {VT_ATTR_CONCEAL, "conceal"}, {VT_ATTR_STRIKE, "strike"},
    };
    json_t *l = json_array();
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (a & names[i].bit)
            json_array_append_new(l, json_string(names[i].name));
    return l;
}

static json_t *jmodes(unsigned m)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {VT_MODE_APP_CURSOR, "app_cursor"},   {VT_MODE_APP_KEYPAD, "app_keypad"},
        {VT_MODE_BRACKETED_PASTE, "bracketed_paste"}, {VT_MODE_MOUSE_CLICK, "mouse_click"},
        {VT_MODE_MOUSE_DRAG, "mouse_drag"},   {VT_MODE_MOUSE_MOVE, "mouse_move"},
        {VT_MODE_MOUSE_SGR, "mouse_sgr"},     {VT_MODE_CURSOR_VISIBLE, "cursor_visible"},
        {VT_MODE_ALTSCREEN, "alt_screen"},
    };
    json_t *l = json_array();
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (m & names[i].bit)
            json_array_append_new(l, json_string(names[i].name));
    return l;
}

/* ---- replies --------------------------------------------------------------- */

static json_t *ok(void)
{
    return json_pack("{s:b}", "ok", 1);
}

static json_t *fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *o = json_pack("{s:b}", "ok", 0);
    json_object_set_new(o, "error", jstr(msg, strlen(msg)));
    return o;
}

static void reply(json_t *o)
{
    if (json_dumpf(o, stdout, JSON_COMPACT) < 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
        say("cannot write a reply: %s", strerror(errno));
        D.quit = true;
    }
    json_decref(o);
}

/* "timeout" in seconds (number), default 30 s.  -1 on a bad value. */
static int64_t get_timeout(json_t *c)
{
    json_t *t = json_object_get(c, "timeout");
    if (!t)
        return DEFAULT_TIMEOUT_MS;
    if (!json_is_number(t) || json_number_value(t) < 0 || json_number_value(t) > 1e7)
        return -1;
    return (int64_t)(json_number_value(t) * 1000.0 + 0.5);
}

static int64_t left_ms(uint64_t deadline)
{
    uint64_t now = now_ms();
    return now >= deadline ? 0 : (int64_t)(deadline - now);
}

static void exit_desc(char *out, size_t len)
{
    if (D.signal)
        snprintf(out, len, "program exited with status %d (killed by signal %d)", D.status, D.signal);
    else
        snprintf(out, len, "program exited with status %d", D.status);
}

/* ---- commands -------------------------------------------------------------- */

static json_t *cmd_send(json_t *c)
{
    json_t *d = json_object_get(c, "data"), *b = json_object_get(c, "data_b64");
    int64_t timeout = get_timeout(c);
    if (timeout < 0)
        return fail("'timeout' must be a number of seconds");
    char *bytes = NULL;
    size_t len = 0;
    if (json_is_string(d) && !b) {
        len = json_string_length(d);
        bytes = xmalloc(len + 1);
        memcpy(bytes, json_string_value(d), len);
    } else if (json_is_string(b) && !d) {
        bytes = base64_decode(json_string_value(b), json_string_length(b), &len);
        if (!bytes)
            return fail("'data_b64' is not valid base64");
    } else {
        return fail("send needs a string 'data' or 'data_b64'");
    }
    if (D.master_eof) {
        free(bytes);
        return fail("cannot write to the program: its terminal is closed");
    }
    D.write_errno = 0;
    queue_input(bytes, len);
    free(bytes);
    uint64_t deadline = now_ms() + (uint64_t)timeout;
    /* Keep reading while the program takes its input: it may be blocked
     * writing its echo. */
    while (D.in_off < D.in.len && !D.quit) {
        int64_t left = left_ms(deadline);
        if (left == 0) {
            size_t rest = D.in.len - D.in_off;
            buf_reset(&D.in); /* a later command must not send the rest */
            D.in_off = 0;
            return fail("timeout writing to the program: the last %zu of %zu bytes were not taken", rest, len);
        }
        pump(left, false);
    }
    if (D.write_errno)
        return fail("cannot write to the program: %s", strerror(D.write_errno));
    json_t *o = ok();
    json_object_set_new(o, "written", json_integer((json_int_t)len));
    return o;
}

/* regcomp with REG_EXTENDED and flags, where a backslash before 'n' (which
 * POSIX leaves undefined and glibc reads as "n") is a newline, as in other
 * regex dialects.  NULL, or the fail() reply saying why not. */
static json_t *compile(regex_t *re, const char *rx, int flags)
{
    size_t n = strlen(rx);
    char *p = xmalloc(n + 1), *o = p;
    for (size_t i = 0; i < n; i++) {
        if (rx[i] == '\\' && rx[i + 1] == 'n') {
            *o++ = '\n';
            i++;
        } else if (rx[i] == '\\' && rx[i + 1]) {
            *o++ = rx[i++];
            *o++ = rx[i];
        } else {
            *o++ = rx[i];
        }
    }
    *o = '\0';
    int e = regcomp(re, p, REG_EXTENDED | flags);
    free(p);
    if (e == 0)
        return NULL;
    char msg[256];
    regerror(e, re, msg, sizeof msg);
    return fail("bad regex '%s': %s", rx, msg);
}

enum { COND_TEXT, COND_REGEX, COND_ABSENT };

static json_t *cmd_wait(json_t *c)
{
    const char *text = json_string_value(json_object_get(c, "text"));
    const char *rx = json_string_value(json_object_get(c, "regex"));
    const char *absent = json_string_value(json_object_get(c, "absent"));
    int64_t timeout = get_timeout(c);
    if (timeout < 0)
        return fail("'timeout' must be a number of seconds");
    if ((text != NULL) + (rx != NULL) + (absent != NULL) != 1)
        return fail("wait needs exactly one of 'text', 'regex', 'absent' (a string)");
    int kind = text ? COND_TEXT : rx ? COND_REGEX : COND_ABSENT;
    regex_t re;
    if (kind == COND_REGEX) {
        json_t *bad = compile(&re, rx, REG_NEWLINE);
        if (bad)
            return bad;
    }
    char what[600];
    if (kind == COND_TEXT)
        snprintf(what, sizeof what, "text '%.500s'", text);
    else if (kind == COND_REGEX)
        snprintf(what, sizeof what, "regex '%.500s'", rx);
    else
        snprintf(what, sizeof what, "'%.500s' to disappear", absent);

    uint64_t deadline = now_ms() + (uint64_t)timeout;
    unsigned long seen = D.gen - 1;
    bool drained = false;
    char *scr = NULL;
    json_t *o = NULL;
    regmatch_t m[10];
    for (;;) {
        if (seen != D.gen) {
            seen = D.gen;
            free(scr);
            scr = screen_text(NULL);
            bool holds;
            if (kind == COND_TEXT)
                holds = strstr(scr, text) != NULL;
            else if (kind == COND_ABSENT)
                holds = strstr(scr, absent) == NULL;
            else
                holds = regexec(&re, scr, 10, m, 0) == 0;
            if (holds) {
                o = ok();
                json_object_set_new(o, "screen", jstr(scr, strlen(scr)));
                if (kind == COND_REGEX) {
                    json_t *g = json_array();
                    for (int i = 0; i < 10 && i <= (int)re.re_nsub; i++) {
                        if (m[i].rm_so < 0)
                            json_array_append_new(g, json_null());
                        else
                            json_array_append_new(g, jstr(scr + m[i].rm_so, (size_t)(m[i].rm_eo - m[i].rm_so)));
                    }
                    json_object_set(o, "match", json_array_get(g, 0));
                    json_object_set_new(o, "groups", g);
                }
                break;
            }
        }
        if (D.quit)
            break;
        if (drained) {
            char msg[128];
            exit_desc(msg, sizeof msg);
            o = fail("%s while waiting for %s", msg, what);
            json_object_set_new(o, "screen", jstr(scr, strlen(scr)));
            break;
        }
        int64_t left = left_ms(deadline);
        if (left == 0) {
            o = fail("timeout waiting for %s (%.1f s)", what, (double)timeout / 1000.0);
            json_object_set_new(o, "screen", jstr(scr, strlen(scr)));
            break;
        }
        if (D.exited) {
            /* Nothing new can appear once its last output is read; a
             * child that inherited the terminal may keep the slave open,
             * so "read until nothing is there" is the end. */
            if (read_master() <= 0)
                drained = true;
            continue;
        }
        pump(left, false);
    }
    if (kind == COND_REGEX)
        regfree(&re);
    free(scr);
    return o;
}

static json_t *cmd_settle(json_t *c)
{
    json_t *q = json_object_get(c, "quiet_ms");
    int64_t timeout = get_timeout(c);
    if (timeout < 0)
        return fail("'timeout' must be a number of seconds");
    int64_t quiet = 200;
    if (q) {
        if (!json_is_number(q) || json_number_value(q) < 0 || json_number_value(q) > 1e9)
            return fail("'quiet_ms' must be a number of milliseconds");
        quiet = (int64_t)json_number_value(q);
    }
    uint64_t start = now_ms(), deadline = start + (uint64_t)timeout, quiet_since = start;
    while (!D.quit && !D.master_eof) {
        uint64_t now = now_ms();
        if (now >= quiet_since + (uint64_t)quiet)
            break;
        if (now >= deadline) {
            json_t *o = fail("the program kept writing for %.1f s (no pause of %lld ms)",
                             (double)timeout / 1000.0, (long long)quiet);
            json_object_set_new(o, "screen", jscreen());
            return o;
        }
        uint64_t until = quiet_since + (uint64_t)quiet;
        if (until > deadline)
            until = deadline;
        if (pump((int64_t)(until - now), false))
            quiet_since = now_ms();
    }
    json_t *o = ok();
    json_object_set_new(o, "screen", jscreen());
    return o;
}

static json_t *cmd_screen(void)
{
    int row, col;
    vt_cursor(D.vt, &row, &col);
    unsigned modes = vt_modes(D.vt);
    const char *title = vt_title(D.vt);
    json_t *o = ok();
    json_object_set_new(o, "text", jscreen());
    json_object_set_new(o, "rows", json_integer(vt_rows(D.vt)));
    json_object_set_new(o, "cols", json_integer(vt_cols(D.vt)));
    json_object_set_new(o, "cursor", json_pack("[i,i]", row, col));
    json_object_set_new(o, "cursor_visible", json_boolean(modes & VT_MODE_CURSOR_VISIBLE));
    json_object_set_new(o, "title", jstr(title ? title : "", title ? strlen(title) : 0));
    json_object_set_new(o, "modes", jmodes(modes));
    json_object_set_new(o, "alt_screen", json_boolean(modes & VT_MODE_ALTSCREEN));
    json_object_set_new(o, "scrollback", json_integer(vt_scrollback_len(D.vt)));
    json_object_set_new(o, "pid", json_integer(D.pid));
    json_object_set_new(o, "exited", json_boolean(D.exited));
    json_object_set_new(o, "total", json_integer((json_int_t)(D.out_base + D.out.len)));
    return o;
}

static json_t *cmd_cells(json_t *c)
{
    json_t *r = json_object_get(c, "row");
    if (!json_is_integer(r))
        return fail("cells needs an integer 'row'");
    json_int_t row = json_integer_value(r);
    int n = 0;
    const vt_cell *cells = row >= -1000000 && row < vt_rows(D.vt) ? vt_line(D.vt, (int)row, &n) : NULL;
    if (!cells)
        return fail("row %lld is outside the screen (0..%d) and history (-%d..-1)", (long long)row,
                    vt_rows(D.vt) - 1, vt_scrollback_len(D.vt));
    json_t *l = json_array();
    for (int k = 0; k < n; k++) {
        char tmp[VT_CELL_TEXT_MAX];
        size_t t = 0;
        int width = 0;
        if (cells[k].ch != VT_CH_WIDE_CONT) {
            t = vt_cell_text(D.vt, &cells[k], tmp);
            width = cells[k].width ? cells[k].width : 1;
        }
        json_array_append_new(l, json_pack("{s:o,s:o,s:o,s:o,s:i}", "ch", jstr(tmp, t), "fg", jcolor(cells[k].fg),
                                           "bg", jcolor(cells[k].bg), "attrs", jattrs(cells[k].attrs), "width",
                                           width));
    }
    json_t *o = ok();
    json_object_set_new(o, "cells", l);
    return o;
}

static json_t *cmd_find(json_t *c)
{
    const char *text = json_string_value(json_object_get(c, "text"));
    const char *rx = json_string_value(json_object_get(c, "regex"));
    if ((text != NULL) == (rx != NULL))
        return fail("find needs exactly one of 'text', 'regex' (a string)");
    regex_t re;
    if (rx) {
        json_t *bad = compile(&re, rx, 0);
        if (bad)
            return bad;
    }
    json_t *o = ok();
    json_object_set_new(o, "found", json_false());
    for (int row = 0; row < vt_rows(D.vt); row++) {
        int *map;
        size_t len;
        char *t = row_text(row, &map, &len);
        size_t so = 0, eo = 0;
        bool hit = false;
        if (text) {
            char *p = strstr(t, text);
            if (p && *text) {
                hit = true;
                so = (size_t)(p - t);
                eo = so + strlen(text);
            }
        } else {
            regmatch_t m;
            if (regexec(&re, t, 1, &m, 0) == 0) {
                hit = true;
                so = (size_t)m.rm_so;
                eo = (size_t)m.rm_eo;
            }
        }
        if (hit) {
            json_object_set_new(o, "found", json_true());
            json_object_set_new(o, "row", json_integer(row));
            json_object_set_new(o, "col", json_integer(map[so]));
            json_object_set_new(o, "match", jstr(t + so, eo - so));
        }
        free(t);
        free(map);
        if (hit)
            break;
    }
    if (rx)
        regfree(&re);
    return o;
}

static json_t *cmd_resize(json_t *c)
{
    json_t *r = json_object_get(c, "rows"), *k = json_object_get(c, "cols");
    if (!json_is_integer(r) || !json_is_integer(k))
        return fail("resize needs integer 'rows' and 'cols'");
    json_int_t rows = json_integer_value(r), cols = json_integer_value(k);
    if (rows < 1 || rows > 1000 || cols < 2 || cols > 2000)
        return fail("bad size %lldx%lld (rows 1..1000, cols 2..2000)", (long long)rows, (long long)cols);
    /* What the program wrote for the old size goes to the old model. */
    drain(OUT_MAX);
    if (vt_resize(D.vt, (int)rows, (int)cols) < 0)
        return fail("the terminal model refused %lldx%lld", (long long)rows, (long long)cols);
    D.gen++;
    struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
    if (ioctl(D.master, TIOCSWINSZ, &ws) < 0)
        return fail("TIOCSWINSZ failed: %s", strerror(errno));
    return ok();
}

static json_t *cmd_bytes(json_t *c)
{
    json_t *s = json_object_get(c, "since"), *l = json_object_get(c, "limit");
    json_int_t since = 0;
    if (s) {
        if (!json_is_integer(s) || json_integer_value(s) < 0)
            return fail("'since' must be a byte offset (an integer >= 0)");
        since = json_integer_value(s);
    }
    uint64_t total = D.out_base + D.out.len;
    if ((uint64_t)since > total)
        return fail("'since' %lld is beyond the %llu bytes written so far", (long long)since,
                    (unsigned long long)total);
    if (l && (!json_is_integer(l) || json_integer_value(l) < 0))
        return fail("'limit' must be a number of bytes (an integer >= 0)");
    uint64_t from = (uint64_t)since < D.out_base ? D.out_base : (uint64_t)since;
    size_t n = (size_t)(total - from), blen = 0;
    if (l && (uint64_t)json_integer_value(l) < n)
        n = (size_t)json_integer_value(l);
    char *b64 = base64_encode(D.out.data + (from - D.out_base), n, &blen);
    json_t *o = ok();
    json_object_set_new(o, "data_b64", json_stringn(b64, blen));
    free(b64);
    json_object_set_new(o, "total", json_integer((json_int_t)total));
    json_object_set_new(o, "from", json_integer((json_int_t)from));
    json_object_set_new(o, "dropped", json_integer((json_int_t)(from - (uint64_t)since)));
    return o;
}

static json_t *exit_reply(void)
{
    json_t *o = ok();
    json_object_set_new(o, "exited", json_boolean(D.exited));
    if (D.exited) {
        json_object_set_new(o, "status", json_integer(D.status));
        if (D.signal)
            json_object_set_new(o, "signal", json_integer(D.signal));
    }
    return o;
}

static json_t *cmd_status(json_t *c)
{
    int64_t timeout = get_timeout(c);
    if (timeout < 0)
        return fail("'timeout' must be a number of seconds");
    uint64_t deadline = now_ms() + (uint64_t)timeout;
    while (!D.exited && !D.quit) {
        int64_t left = left_ms(deadline);
        if (left == 0)
            break;
        pump(left, false);
    }
    if (D.exited)
        drain(OUT_MAX);
    return exit_reply();
}

static json_t *cmd_kill(json_t *c)
{
    json_t *s = json_object_get(c, "signal"), *g = json_object_get(c, "group");
    int sig = SIGTERM;
    if (s) {
        if (!json_is_integer(s) || json_integer_value(s) < 0 || json_integer_value(s) > 64)
            return fail("'signal' must be a signal number");
        sig = (int)json_integer_value(s);
    }
    if (g && !json_is_boolean(g))
        return fail("'group' must be true or false");
    pid_t target = g && json_is_true(g) ? -D.pid : D.pid;
    if (kill(target, sig) < 0 && errno != ESRCH)
        return fail("kill(%d, %d) failed: %s", (int)target, sig, strerror(errno));
    return ok();
}

static json_t *run_command(const char *line, size_t len)
{
    json_error_t err;
    json_t *c = json_loadb(line, len, JSON_ALLOW_NUL, &err);
    if (!c)
        return fail("bad command (not JSON: %s)", err.text);
    json_t *o;
    const char *name = json_string_value(json_object_get(c, "cmd"));
    if (!json_is_object(c) || !name)
        o = fail("bad command: an object with a string 'cmd' expected");
    else if (!strcmp(name, "send"))
        o = cmd_send(c);
    else if (!strcmp(name, "wait"))
        o = cmd_wait(c);
    else if (!strcmp(name, "settle"))
        o = cmd_settle(c);
    else if (!strcmp(name, "screen"))
        o = cmd_screen();
    else if (!strcmp(name, "cells"))
        o = cmd_cells(c);
    else if (!strcmp(name, "find"))
        o = cmd_find(c);
    else if (!strcmp(name, "resize"))
        o = cmd_resize(c);
    else if (!strcmp(name, "bytes"))
        o = cmd_bytes(c);
    else if (!strcmp(name, "status"))
        o = cmd_status(c);
    else if (!strcmp(name, "kill"))
        o = cmd_kill(c);
    else
        o = fail("unknown command '%s'", name);
    json_decref(c);
    return o;
}

/* ---- start and end ---------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: vtdrive ROWS COLS -- PROGRAM [ARGS...]\n"
                    "Runs PROGRAM on a ROWS x COLS PTY; JSON commands on stdin, one reply line each\n"
                    "(see tests/tui/README.md).\n");
    exit(2);
}

static int parse_int(const char *s, int lo, int hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    return (int)v;
}

static int open_pty(int rows, int cols, int *slave)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0) {
        say("cannot open a PTY: %s", strerror(errno));
        return -1;
    }
    char name[128];
    if (grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, name, sizeof name) != 0) {
        say("cannot set up the PTY: %s", strerror(errno));
        close(m);
        return -1;
    }
    int s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (s < 0) {
        say("cannot open %s: %s", name, strerror(errno));
        close(m);
        return -1;
    }
    struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
    if (ioctl(m, TIOCSWINSZ, &ws) < 0) {
        say("TIOCSWINSZ failed: %s", strerror(errno));
        close(s);
        close(m);
        return -1;
    }
    struct termios tio;
    if (tcgetattr(s, &tio) == 0) {
        tio.c_iflag |= IUTF8;
        tcsetattr(s, TCSANOW, &tio);
    }
    fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
    *slave = s;
    return m;
}

/* In the child: a new session on the slave, then exec.  errno goes back
 * through errfd if exec fails. */
static void child(int slave, int errfd, char **argv)
{
    /* What a terminal's child starts with: no signal blocked or ignored
     * (ours, and whatever vtdrive's own parent ignored, like SIGINT for a
     * background job). */
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int e = 0;
    if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0)
        e = errno;
    else if (dup2(slave, 0) < 0 || dup2(slave, 1) < 0 || dup2(slave, 2) < 0)
        e = errno;
    else {
        if (slave > 2)
            close(slave);
        execvp(argv[0], argv);
        e = errno;
    }
    ssize_t w = write(errfd, &e, sizeof e);
    (void)w;
    _exit(127);
}

/* Every process whose session is the program's (jobs of a shell run in
 * their own process groups).  The session leader is a zombie until we reap
 * it, so its id cannot have been reused. */
static void kill_session(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int pid = parse_int(e->d_name, 1, 1 << 30);
        if (pid <= 0)
            continue;
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        int ppid, pgrp, sid;
        char state;
        if (p && sscanf(p + 1, " %c %d %d %d", &state, &ppid, &pgrp, &sid) == 4 && sid == D.pid)
            kill(pid, SIGKILL);
    }
    closedir(d);
}

static void finish(void)
{
    if (!D.exited) {
        kill(-D.pid, SIGHUP);
        kill(-D.pid, SIGCONT);
        uint64_t deadline = now_ms() + HANGUP_GRACE_MS;
        while (!D.exited) {
            int64_t left = left_ms(deadline);
            if (left == 0)
                break;
            pump(left, false); /* keep reading: it may be writing as it goes */
        }
    }
    kill(-D.pid, SIGKILL);
    kill_session();
    kill(D.pid, SIGKILL);
    int st;
    while (waitpid(D.pid, &st, 0) < 0 && errno == EINTR)
        ;
}

int main(int argc, char **argv)
{
    if (argc < 5 || strcmp(argv[3], "--") != 0)
        usage();
    int rows = parse_int(argv[1], 1, 1000), cols = parse_int(argv[2], 2, 2000);
    if (rows < 0 || cols < 0) {
        say("bad size '%s' x '%s' (rows 1..1000, cols 2..2000)", argv[1], argv[2]);
        usage();
    }
    /* Regexes match UTF-8 screen text: a UTF-8 locale for regcomp. */
    setlocale(LC_CTYPE, "");
    if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0)
        setlocale(LC_CTYPE, "C.UTF-8");
    signal(SIGPIPE, SIG_IGN);

    static const vt_callbacks cb = {.reply = on_reply};
    D.vt = vt_new(rows, cols, SCROLLBACK, &cb, NULL);
    if (!D.vt) {
        say("cannot create a terminal model of %dx%d", rows, cols);
        return 1;
    }
    buf_init(&D.out);
    buf_init(&D.in);
    buf_init(&D.cmd);
    buf_reserve(&D.out, 0); /* data is never NULL */
    buf_reserve(&D.in, 0);
    buf_reserve(&D.cmd, 0);

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 || (D.sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        say("cannot set up signals: %s", strerror(errno));
        return 1;
    }

    int slave;
    D.master = open_pty(rows, cols, &slave);
    if (D.master < 0)
        return 1;
    int ep[2];
    if (pipe2(ep, O_CLOEXEC) < 0) {
        say("pipe: %s", strerror(errno));
        return 1;
    }
    fflush(NULL);
    D.pid = fork();
    if (D.pid < 0) {
        say("fork: %s", strerror(errno));
        return 1;
    }
    if (D.pid == 0)
        child(slave, ep[1], argv + 4);
    close(slave);
    close(ep[1]);
    int e = 0;
    ssize_t n;
    while ((n = read(ep[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(ep[0]);
    if (n == (ssize_t)sizeof e) {
        say("cannot run '%s': %s", argv[4], strerror(e));
        waitpid(D.pid, NULL, 0);
        return 127;
    }
    check_child();

    while (!D.quit) {
        char *nl;
        while (!D.quit && (nl = memchr(D.cmd.data, '\n', D.cmd.len)) != NULL) {
            size_t len = (size_t)(nl - D.cmd.data);
            const char *line = D.cmd.data;
            size_t k = 0;
            while (k < len && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
                k++;
            if (k < len) {
                /* Output already there counts as seen before the command. */
                drain(1 << 20);
                json_t *o = run_command(line, len); /* reads no stdin */
                if (o && !D.quit)
                    reply(o);
                else
                    json_decref(o);
            }
            buf_consume(&D.cmd, len + 1);
        }
        if (D.cmd_eof) {
            if (D.cmd.len > 0 && !D.quit) { /* a last line without '\n' */
                json_t *o = run_command(D.cmd.data, D.cmd.len);
                reply(o);
                buf_reset(&D.cmd);
            }
            break;
        }
        if (!D.quit)
            pump(-1, true);
    }
    finish();
    return 0;
}
