/*
 * paint.c - see paint.h.
 */
#include "config.h"

#include "paint.h"
#include "base/utf8.h"
#include "base/util.h"
#include "base/width.h"

#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

static const theme_t *theme;
static bool direct; /* the terminal takes 24-bit colour numbers */
static bool rgb_above_256; /* our terminal description (paint_newterm): 0-255 the palette, 256 + 0xRRGGBB exact */

void paint_init(const theme_t *t)
{
    theme = t;
    direct = COLORS >= 0x1000000;
}

/* A vt colour as a curses colour number for this terminal; -1: default. */
static int curses_color(vt_color c)
{
    if (c == VT_COLOR_DEFAULT || COLORS <= 0)
        return -1;
    if (rgb_above_256)
        return VT_COLOR_KIND(c) == VT_COLOR_KIND_RGB ? 256 + (int)(c & 0xffffff) : (int)(c & 0xff);
    if (VT_COLOR_KIND(c) == VT_COLOR_KIND_RGB && direct)
        return (int)(c & 0xffffff);
    if (COLORS >= 256)
        return theme_nearest_256(c);
    int n = theme_nearest_16(c);
    return COLORS >= 16 ? n : n & 7;
}

static int pair_for(vt_color fg, vt_color bg)
{
    if (!has_colors())
        return 0;
    int p = alloc_pair(curses_color(fg), curses_color(bg));
    return p < 0 ? 0 : p;
}

/* Every cell of the terminals drawn now is dimmed (paint_dim). */
static bool dim_all;

void paint_dim(bool on)
{
    dim_all = on;
}

static attr_t curses_attrs(unsigned a)
{
    attr_t r = dim_all ? A_DIM : A_NORMAL;
    if (a & VT_ATTR_BOLD)
        r |= A_BOLD;
    if (a & VT_ATTR_DIM)
        r |= A_DIM;
    if (a & VT_ATTR_ITALIC)
        r |= A_ITALIC;
    if (a & VT_ATTR_UNDERLINE)
        r |= A_UNDERLINE;
    if (a & VT_ATTR_BLINK)
        r |= A_BLINK;
    if (a & VT_ATTR_REVERSE)
        r |= A_REVERSE;
    if (a & VT_ATTR_CONCEAL)
        r |= A_INVIS;
    return r;
}

void paint_set(theme_elem e, theme_elem under)
{
    theme_style st = e == under ? theme->style[e] : theme_style_over(theme, e, under);
    int pair = theme->mono ? 0 : pair_for(st.fg, st.bg);
    attr_set(curses_attrs(st.attrs), 0, &pair);
}

/* Decode one UTF-8 scalar at s (n bytes left); returns its length.  An
 * invalid subpart becomes one U+FFFD.  The decoder is corral's own, not
 * the C library's: the same in every locale. */
static int utf8_next(const char *s, size_t n, wchar_t *out)
{
    int32_t cp;
    size_t len = utf8_decode(s, n, &cp);
    *out = cp < 0 ? 0xFFFD : (wchar_t)cp;
    return (int)len;
}

/* Never a control character on the real terminal. */
static wchar_t safe(wchar_t c)
{
    return c < 0x20 || (c >= 0x7f && c < 0xa0) ? L'?' : c;
}

/* Widths are corral's one width function's (width.h), the model's, not the
 * C library's in whatever locale the screen runs: what the model put in
 * two columns is drawn in two. */
int paint_width(const char *utf8)
{
    return uc_text_width(utf8, strlen(utf8));
}

size_t paint_fit(const char *utf8, int maxw)
{
    return uc_text_fit(utf8, strlen(utf8), maxw, NULL);
}

int paint_text(int y, int x, int maxw, const char *utf8)
{
    int used = 0;
    size_t n = strlen(utf8);
    for (size_t i = 0; i < n && used < maxw;) {
        wchar_t c;
        i += (size_t)utf8_next(utf8 + i, n - i, &c);
        c = safe(c);
        int cw = uc_width((uint32_t)c);
        if (cw < 0) {
            c = L'?';
            cw = 1;
        }
        if (cw == 0)
            continue; /* combining marks are not worth the trouble in labels */
        if (used + cw > maxw)
            break;
        wchar_t s[2] = {c, 0};
        mvaddnwstr(y, x + used, s, 1);
        used += cw;
    }
    return used;
}

void paint_fill(int y, int x, int w)
{
    if (w > 0)
        mvhline(y, x, ' ', w);
}

static const paint_mark *mark_at(const paint_mark *m, int n, int line, int col)
{
    for (int i = 0; i < n; i++)
        if (m[i].line == line && col >= m[i].col && col < m[i].col + m[i].len)
            return &m[i];
    return NULL;
}

/* A cell's character and its marks as they are drawn: a character
 * without width shows as U+FFFD, and only marks may follow it.  Returns
 * how many (at most max). */
static int cell_chars(const vt_t *vt, const vt_cell *c, wchar_t *wc, int max)
{
    int n = 0;
    if (c->ch == 0) {
        wc[n++] = L' ';
        return n;
    }
    char text[VT_CELL_TEXT_MAX];
    size_t len = vt_cell_text(vt, c, text);
    for (size_t i = 0; i < len && n < max;) {
        wchar_t ch;
        i += (size_t)utf8_next(text + i, len - i, &ch);
        if (n == 0) {
            ch = safe(ch);
            wc[n++] = uc_width((uint32_t)ch) < 0 ? 0xFFFD : ch;
        } else if (uc_width((uint32_t)ch) == 0) {
            wc[n++] = ch;
        }
    }
    if (n == 0)
        wc[n++] = L' ';
    return n;
}

/* One cell as a cchar_t in its colours, or in a mark's: curses keeps the
 * character and CCHARW_MAX - 1 marks. */
static void cell_cchar(const vt_t *vt, const vt_cell *c, const paint_mark *mark, cchar_t *out)
{
    wchar_t wc[CCHARW_MAX + 1];
    int n = cell_chars(vt, c, wc, CCHARW_MAX);
    wc[n] = 0;
    theme_style normal = theme->style[TH_NORMAL];
    vt_color fg = c->fg == VT_COLOR_DEFAULT ? normal.fg : c->fg;
    vt_color bg = c->bg == VT_COLOR_DEFAULT ? normal.bg : c->bg;
    unsigned attrs = c->attrs;
    if (mark) {
        theme_style m = theme->style[mark->current ? TH_SEARCH_CURRENT : TH_SEARCH_MATCH];
        fg = m.fg;
        bg = m.bg;
        attrs = m.attrs;
    }
    int pair = pair_for(fg, bg);
    setcchar(out, wc, curses_attrs(attrs), 0, &pair);
}

/* Cells with more marks than curses keeps, drawn in this frame: written
 * again whole after curses has drawn the frame (paint_marks_flush). */
#define EXTRA_MAX 256
#define EXTRA_CHARS (VT_CELL_TEXT_MAX / 2) /* a mark takes two bytes at least */
static struct extra_cell {
    int y, x;
    cchar_t cc; /* as curses has it: still there when the frame is out */
    wchar_t wc[EXTRA_CHARS + 1];
} extra[EXTRA_MAX];
static int nextra;

static void note_extra_marks(const vt_t *vt, const vt_cell *c, int y, int x, const cchar_t *cc)
{
    if (c->comb == 0 || nextra == EXTRA_MAX)
        return;
    struct extra_cell *e = &extra[nextra];
    int n = cell_chars(vt, c, e->wc, EXTRA_CHARS);
    if (n <= CCHARW_MAX)
        return;
    e->wc[n] = 0;
    e->y = y;
    e->x = x;
    e->cc = *cc;
    nextra++;
}

/* Bytes for the terminal, from vid_puts and ours, written at once. */
static buf_t extra_out;

static int extra_putc(int ch)
{
    buf_putc(&extra_out, (char)ch);
    return ch;
}

void paint_marks_flush(void)
{
    buf_init(&extra_out);
    int cy, cx;
    getyx(curscr, cy, cx); /* where curses left the terminal's cursor */
    for (int i = 0; i < nextra; i++) {
        struct extra_cell *e = &extra[i];
        cchar_t now;
        if (mvwin_wch(curscr, e->y, e->x, &now) == ERR || memcmp(&now, &e->cc, sizeof now) != 0)
            continue; /* drawn over since (a dialog): what is there stays */
        wchar_t wc[CCHARW_MAX + 1];
        attr_t attrs;
        short pair_short;
        int pair = 0;
        if (getcchar(&e->cc, wc, &attrs, &pair_short, &pair) == ERR)
            continue;
        /* curses follows the terminal's rendition: it goes through
         * vid_puts, there and back to normal */
        buf_printf(&extra_out, "\033[%d;%dH", e->y + 1, e->x + 1);
        vid_puts(attrs, 0, &pair, extra_putc);
        for (int k = 0; e->wc[k]; k++) {
            char u[4];
            buf_append(&extra_out, u, utf8_put_scalar((uint32_t)e->wc[k], u));
        }
        vid_puts(A_NORMAL, 0, &(int){ 0 }, extra_putc);
    }
    if (extra_out.len) {
        buf_printf(&extra_out, "\033[%d;%dH", cy + 1, cx + 1);
        fflush(stdout);
        for (size_t off = 0; off < extra_out.len;) {
            ssize_t k = write(STDOUT_FILENO, extra_out.data + off, extra_out.len - off);
            if (k <= 0 && errno != EINTR)
                break;
            off += k > 0 ? (size_t)k : 0;
        }
    }
    buf_free(&extra_out);
    nextra = 0;
}

static void paint_line(const vt_t *vt, int y, int x, int w, int line, const paint_mark *marks, int nmarks)
{
    int len = 0;
    const vt_cell *cells = vt_line(vt, line, &len);
    static const vt_cell blank = {0, VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0, 1, 0};
    for (int col = 0; col < w; col++) {
        const vt_cell *c = cells && col < len ? &cells[col] : &blank;
        if (c->ch == VT_CH_WIDE_CONT)
            continue; /* drawn with its left half */
        if (c->width == 2 && col + 1 >= w)
            c = &blank; /* half a wide character does not fit */
        cchar_t cc;
        cell_cchar(vt, c, mark_at(marks, nmarks, line, col), &cc);
        mvadd_wch(y, x + col, &cc);
        note_extra_marks(vt, c, y, x + col, &cc);
    }
}

/* The part of a pane the session's terminal does not reach: blank, or
 * dotted (as tmux does) when another client holds the terminal smaller
 * than the pane. */
static void fill_unused(int y, int x, int w, bool dotted)
{
    if (w <= 0)
        return;
    if (!dotted) {
        paint_set(TH_NORMAL, TH_NORMAL);
        paint_fill(y, x, w);
    } else {
        paint_set(TH_BORDER, TH_NORMAL);
        for (int i = 0; i < w; i++)
            mvaddnwstr(y, x + i, L"\u00b7", 1);
    }
    attr_set(A_NORMAL, 0, NULL);
}

void paint_vt(const vt_t *vt, ui_rect r, int first_line, bool all, const paint_mark *marks, int nmarks,
              bool held)
{
    /* curses combines a cell's rendition with the window's current one:
     * start from nothing, or the last element drawn would tint the pane. */
    attr_set(A_NORMAL, 0, NULL);
    int cols = vt_cols(vt), w = r.w < cols ? r.w : cols;
    for (int k = 0; k < r.h; k++) {
        int line = first_line + k;
        if (!all && !(line >= 0 && vt_row_dirty(vt, line)))
            continue;
        if (line >= vt_rows(vt)) {
            fill_unused(r.y + k, r.x, r.w, held);
            continue;
        }
        paint_line(vt, r.y + k, r.x, w, line, marks, nmarks);
        if (w < r.w) /* a session narrower than its pane */
            fill_unused(r.y + k, r.x + w, r.w - w, held);
    }
}

/* ---- 24-bit colour -------------------------------------------------------------
 *
 * curses draws exact RGB only through a terminal description with 2^24
 * colours, which a terminal that takes 24-bit colour seldom has: it says
 * so in COLORTERM or a terminfo flag (RGB, Tc) under TERM=xterm-256color,
 * as tmux reads it.  Then a description of our own is compiled with tic for
 * this run: the terminal's entry with 256 + 2^24 colours, 0-255 set as its
 * palette indexes, 256 + 0xRRGGBB as CSI 38;2;R;G;B m (RGB says the numbers
 * are direct, so curses keeps no table of them).  It is read once by
 * newterm and removed at once.
 */
/* Here, not at the top: its macros name every capability (lines, columns,
 * bell...), which must not reach the drawing code above. */
#include <term.h>

extern char **environ;

#define RGB_TERM_NAME "corral-rgb"
/* xterm's setaf for 0-255, and 38;2 for 256 + 0xRRGGBB (48 for setab). */
#define RGB_SET(ansi, bright, ext)                                                                                  \
    "\\E[%?%p1%{8}%<%t" ansi "%p1%d%e%p1%{16}%<%t" bright "%p1%{8}%-%d%e%p1%{256}%<%t" ext ";5;%p1%d%e" ext    \
    ";2;%p1%{256}%-%{65536}%/%d;%p1%{256}%-%{256}%/%{255}%&%d;%p1%{256}%-%{255}%&%d%;m"

/* The terminal says it takes 24-bit colour, as tmux reads it. */
static bool says_truecolor(const char **why)
{
    const char *ct = getenv("COLORTERM");
    if (ct && (strcasecmp(ct, "truecolor") == 0 || strcasecmp(ct, "24bit") == 0)) {
        *why = "COLORTERM";
        return true;
    }
    int err = 0;
    if (setupterm(NULL, STDOUT_FILENO, &err) != OK)
        return false;
    char rgb_name[] = "RGB", tc_name[] = "Tc", colors_name[] = "colors";
    char *rgb_str = tigetstr(rgb_name);
    bool yes = tigetflag(rgb_name) > 0 || tigetnum(rgb_name) > 0 || (rgb_str && rgb_str != (char *)-1) ||
               tigetflag(tc_name) > 0 || tigetnum(colors_name) >= 0x1000000;
    del_curterm(cur_term);
    *why = "the terminfo entry";
    return yes;
}

static void remove_tree(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (depth > 0 && lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(path, depth - 1);
        else
            unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Compile our description into dir; 0, or -1 with why in err. */
static int compile_rgb_entry(const char *dir, const char *term, char *err, size_t errlen)
{
    char src[PATH_MAX], log[PATH_MAX];
    if (snprintf(src, sizeof src, "%s/entry.src", dir) >= (int)sizeof src ||
        snprintf(log, sizeof log, "%s/tic.log", dir) >= (int)sizeof log) {
        snprintf(err, errlen, "the temporary directory's path is too long");
        return -1;
    }
    FILE *f = fopen(src, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %.200s: %s", src, strerror(errno));
        return -1;
    }
    fprintf(f, RGB_TERM_NAME "|%s with 24-bit colour for corral,\n\tcolors#0x1000100, RGB,\n\tsetaf=%s,\n\tsetab=%s,\n"
               "\tuse=%s,\n", term, RGB_SET("3", "9", "38"), RGB_SET("4", "10", "48"), term);
    if (fclose(f) != 0) {
        snprintf(err, errlen, "cannot write %.200s: %s", src, strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    char *argv[] = {"tic", "-x", "-o", (char *)dir, src, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "tic", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        snprintf(err, errlen, "cannot run tic (ncurses' terminfo compiler): %s", strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    char msg[200] = "";
    FILE *l = fopen(log, "r");
    if (l) {
        size_t n = fread(msg, 1, sizeof msg - 1, l);
        msg[n] = 0;
        fclose(l);
    }
    char *clean = sanitize_text(msg, strlen(msg), 160);
    snprintf(err, errlen, "tic could not build a description on TERM=%.60s: %s", term, clean);
    free(clean);
    return -1;
}

/* newterm on our description in a private directory; NULL with err. */
static SCREEN *newterm_rgb(char *err, size_t errlen)
{
    const char *term = getenv("TERM");
    if (!term || !*term || strspn(term, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") !=
                               strlen(term)) {
        snprintf(err, errlen, "TERM=%.60s is not a terminfo name", term ? term : "(unset)");
        return NULL;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s/corral-terminfo-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp") >=
        (int)sizeof dir - 32) {
        snprintf(err, errlen, "TMPDIR is too long a path");
        return NULL;
    }
    if (!mkdtemp(dir)) {
        snprintf(err, errlen, "cannot make a directory in %.200s: %s", tmp && tmp[0] == '/' ? tmp : "/tmp",
                 strerror(errno));
        return NULL;
    }
    SCREEN *scr = NULL;
    if (compile_rgb_entry(dir, term, err, errlen) == 0) {
        const char *old = getenv("TERMINFO");
        char *saved = old ? xstrdup(old) : NULL;
        setenv("TERMINFO", dir, 1); /* read once, here; the sessions never see it */
        scr = newterm(RGB_TERM_NAME, stdout, stdin);
        if (saved)
            setenv("TERMINFO", saved, 1);
        else
            unsetenv("TERMINFO");
        free(saved);
        if (!scr)
            snprintf(err, errlen, "curses did not take the description tic built");
    }
    remove_tree(dir, 2);
    return scr;
}

SCREEN *paint_newterm(int truecolor, char *note, size_t notelen)
{
    note[0] = 0;
    rgb_above_256 = false;
    const char *why = "[ui] truecolor = on";
    if (truecolor == PAINT_TRUECOLOR_ON || (truecolor == PAINT_TRUECOLOR_AUTO && says_truecolor(&why))) {
        char err[400];
        SCREEN *scr = newterm_rgb(err, sizeof err);
        if (scr) {
            rgb_above_256 = true;
            return scr;
        }
        snprintf(note, notelen, "24-bit colour (%s says the terminal has it) is off: %s", why, err);
    }
    return newterm(NULL, stdout, stdin);
}

/* The first screen row a pane of h rows shows: a session taller than its
 * pane (another client sized it, or it has no terminal to resize) shows
 * the rows up to its cursor, where output appears. */
int pane_first_row(const vt_t *vt, int h)
{
    int row;
    vt_cursor(vt, &row, NULL);
    int first = row - h + 1;
    if (first > vt_rows(vt) - h)
        first = vt_rows(vt) - h;
    return first < 0 ? 0 : first;
}

bool paint_unicode(void)
{
    static int u = -1;
    if (u < 0)
        u = MB_CUR_MAX > 1;
    return u;
}

void paint_separator(int y, int x, int h)
{
    paint_set(TH_BORDER, TH_BORDER);
    for (int k = 0; k < h; k++)
        paint_text(y + k, x, 1, paint_unicode() ? "\xe2\x94\x82" : "|");
}
