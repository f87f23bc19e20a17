/*
 * cli_replay.c - `corral replay`: a session's recording (or a .cast file,
 * or an export) played through corral's terminal model and drawn with
 * corral's own sequences (replaydraw.h), so that nothing a recorded
 * program printed reaches the user's terminal.  In real time with pauses
 * cut to the idle limit, faster or slower, from a command's marker, with
 * keys to pause, change speed and jump between commands; to a pipe, or with
 * --speed 0, only the screen as the recording ends.
 *
 * A session's recording is found in the state directory, where it stays
 * after the session and the server are gone: no server is needed.  The
 * verb is one entry (cli_verb.h) that cli.c lists.
 */
#include "config.h"

#include "record/castplay.h"
#include "record/castread.h"
#include "cli/cli_records.h"
#include "cli/cli_verb.h"
#include "config/conf.h"
#include "base/exitcode.h"
#include "base/quote.h"
#include "vt/replaydraw.h"
#include "record/sessfiles.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#define DEFAULT_IDLE_LIMIT 2.0
#define MIN_SPEED (1.0 / 64)
#define MAX_SPEED 64.0
#define FRAME_SEC (1.0 / 60)
/* Output fed between two looks at the keyboard during a flood. */
#define FEED_SLICE ((size_t)1 << 20)
/* 'p' within this many seconds after a command's start goes to the one before. */
#define PREV_GRACE_SEC 1.5

/* A message on stderr.  It may quote the recording (a line it could not
 * read, an event's data) or an export's names: the one place replay prints
 * one, so the one place it is made visible (quote.h). */
static void say(const char *what, const char *msg)
{
    char *v = quote_text_visible(msg, strlen(msg));
    fprintf(stderr, "corral: %s%s\n", what, v);
    free(v);
}

static void warn_to_stderr(void *user, const char *msg)
{
    (void)user;
    say("warning: ", msg);
}

/* A number of seconds or a speed: a plain decimal from 0 (the locale is
 * never set in the CLI, so strtod reads a '.'). */
static int parse_number(const char *s, double max, double *out)
{
    if (!*s || strspn(s, "0123456789.") != strlen(s))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

/* SESSION (an id from corral ls, or ID.N for an older session's that the
 * id was drawn again for) or a file. */
static char *recording_path(const char *arg, char *err, size_t errlen)
{
    if (cli_records_remote() && cli_records_fetch(arg, true, err, errlen) < 0)
        return NULL;
    if (!sessfiles_name_ok(arg))
        return xstrdup(arg);
    sessfiles f;
    sessfiles_for(arg, &f);
    char *path = xstrdup(f.cast);
    struct stat st;
    if (stat(path, &st) < 0) {
        if (cli_records_remote()) {
            char *place = cli_records_place("");
            snprintf(err, errlen, "session %s has no recording in %s", arg, place);
            free(place);
        } else {
            snprintf(err, errlen,
                     "no recording of session %s: %s: %s (corral ls lists the sessions; an ended session's "
                     "recording stays in %s/sessions; a file named %s is replayed as ./%s)",
                     arg, path, strerror(errno), f.state, arg, arg);
        }
        free(path);
        path = NULL;
    }
    sessfiles_free(&f);
    return path;
}

/* ---- the terminal ---------------------------------------------------------------- */

static int sig_pipe[2] = {-1, -1};
static struct termios saved_termios;
static bool termios_saved;

static void on_signal(int sig)
{
    int e = errno;
    unsigned char b = (unsigned char)sig;
    if (write(sig_pipe[1], &b, 1) < 0) {
        /* full: a signal is already waiting to be seen */
    }
    errno = e;
}

static void term_size(int *rows, int *cols)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
        *rows = ws.ws_row;
        *cols = ws.ws_col;
    } else {
        *rows = 24;
        *cols = 80;
    }
}

/* Keys one at a time, no echo, ^C as a key (q does the same). */
static void keys_raw(void)
{
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_termios) < 0)
        return;
    termios_saved = true;
    struct termios t = saved_termios;
    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG | IEXTEN);
    t.c_iflag &= ~(tcflag_t)(IXON | ICRNL);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    tcsetattr(STDIN_FILENO, TCSANOW, &t);
}

static void keys_restore(void)
{
    if (termios_saved)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved_termios);
    termios_saved = false;
}

static void out_write(buf_t *b)
{
    if (b->len)
        write_all(STDOUT_FILENO, b->data, b->len);
    buf_reset(b);
}

/* Leave the terminal as it was, with the cursor on the line below what was
 * drawn. */
static void leave_screen(buf_t *b, const replaydraw_view *v, int term_rows)
{
    buf_puts(b, "\033[0m");
    if (v->rows < term_rows)
        buf_printf(b, "\033[%d;1H\033[J", v->rows + 1);
    else
        buf_printf(b, "\033[%d;1H\r\n", term_rows);
    buf_puts(b, "\033[?25h");
    out_write(b);
}

/* ---- playing ---------------------------------------------------------------------- */

typedef struct player {
    castplay_t *p;
    replaydraw_view view;
    int term_rows, term_cols;
    bool keys;          /* stdin is a terminal */
    double speed;
    bool paused;
    double anchor_play; /* play time at anchor_wall (or while paused) */
    double anchor_wall;
    double last_draw;
    char status[512];   /* the status line on the terminal */
    char note[128];     /* a passing message on the status line */
    double note_until;
    bool quit;
    int signal;         /* SIGINT, SIGTERM, SIGHUP that ended it */
} player;

static double play_now(const player *pl)
{
    if (pl->paused)
        return pl->anchor_play;
    return pl->anchor_play + (now_sec() - pl->anchor_wall) * pl->speed;
}

static void reanchor(player *pl, double play)
{
    pl->anchor_play = play;
    pl->anchor_wall = now_sec();
}

static void fmt_time(char *out, size_t n, double s)
{
    if (s < 0)
        s = 0;
    long t = (long)s;
    if (t >= 3600)
        snprintf(out, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(out, n, "%ld:%02ld", t / 60, t % 60);
}

static void fmt_speed(char *out, size_t n, double speed)
{
    if (speed >= 1)
        snprintf(out, n, "%gx", speed);
    else
        snprintf(out, n, "1/%gx", 1 / speed);
}

/* The status line, for the terminal's last row (ASCII only: its width is
 * its length). */
static void status_text(player *pl, char *line, size_t n)
{
    char now[32], total[32], speed[32];
    double t = play_now(pl);
    if (t > castplay_duration(pl->p))
        t = castplay_duration(pl->p);
    fmt_time(now, sizeof now, t);
    fmt_time(total, sizeof total, castplay_duration(pl->p));
    fmt_speed(speed, sizeof speed, pl->speed);
    int cmd = castplay_current_command(pl->p);
    size_t cmds = castplay_command_count(pl->p);
    char where[64] = "";
    if (cmds > 0 && cmd > 0)
        snprintf(where, sizeof where, "  cmd %d of %zu", cmd, cmds);
    else if (cmds > 0)
        snprintf(where, sizeof where, "  %zu commands", cmds);
    const char *note = pl->note_until > now_sec() ? pl->note : "";
    snprintf(line, n, " %s %s / %s  %s%s  %s", pl->paused ? "paused " : "playing", now, total, speed, where,
             *note ? note : "space pause  +/- speed  n/p command  q quit");
    if (strlen(line) > (size_t)pl->term_cols)
        line[pl->term_cols] = '\0';
}

static void set_note(player *pl, const char *msg)
{
    snprintf(pl->note, sizeof pl->note, "%s", msg);
    pl->note_until = now_sec() + 2;
}

/* Draw what changed (all of it when all), and the status line when it
 * changed. */
static void draw(player *pl, buf_t *b, bool all)
{
    vt_t *vt = castplay_vt(pl->p);
    if (castplay_take_resized(pl->p))
        all = true;
    if (replaydraw_fit(&pl->view, vt, pl->term_rows - 1, pl->term_cols))
        all = true;
    char status[sizeof pl->status];
    status_text(pl, status, sizeof status);
    bool new_status = all || strcmp(status, pl->status) != 0;
    if (!all && !new_status && !replaydraw_damaged(vt))
        return;
    buf_puts(b, "\033[?2026h");
    if (all)
        buf_puts(b, "\033[0m\033[H\033[2J");
    if (new_status) {
        int len = (int)strlen(status);
        buf_printf(b, "\033[%d;1H\033[0;7m%s%*s\033[0m", pl->term_rows, status,
                   len < pl->term_cols ? pl->term_cols - len : 0, "");
        memcpy(pl->status, status, sizeof status);
    }
    replaydraw_frame(b, vt, &pl->view, all);
    buf_puts(b, "\033[?2026l");
    out_write(b);
    pl->last_draw = now_sec();
}

static int jump(player *pl, bool forward, char *err, size_t errlen)
{
    size_t target;
    if (!castplay_jump_target(pl->p, forward, play_now(pl), PREV_GRACE_SEC, &target)) {
        set_note(pl, "no command after this one");
        return 0;
    }
    if (castplay_seek(pl->p, target, err, errlen) < 0)
        return -1;
    reanchor(pl, castplay_time(pl->p));
    return 0;
}

/* One key.  -1 on an error (err). */
static int key(player *pl, unsigned char c, char *err, size_t errlen)
{
    switch (c) {
    case 'q': case 'Q': case 3: /* ^C */
        pl->quit = true;
        break;
    case ' ':
        if (pl->paused) {
            pl->paused = false;
            pl->anchor_wall = now_sec();
        } else {
            pl->anchor_play = play_now(pl);
            pl->paused = true;
        }
        break;
    case '+': case '=':
    case '-': case '_': {
        double t = play_now(pl);
        bool up = c == '+' || c == '=';
        pl->speed = up ? pl->speed * 2 : pl->speed / 2;
        if (pl->speed > MAX_SPEED)
            pl->speed = MAX_SPEED;
        if (pl->speed < MIN_SPEED)
            pl->speed = MIN_SPEED;
        reanchor(pl, t);
        break;
    }
    case 'n':
    case 'p':
        return jump(pl, c == 'n', err, errlen);
    default: break;
    }
    return 0;
}

static int play_interactive(player *pl, char *err, size_t errlen)
{
    buf_t b;
    buf_init(&b);
    int rc = 0;
    draw(pl, &b, true);
    for (;;) {
        double t = play_now(pl);
        int more = castplay_advance(pl->p, t, FEED_SLICE, err, errlen);
        if (more < 0) {
            rc = -1;
            break;
        }
        double now = now_sec();
        bool dirty = replaydraw_damaged(castplay_vt(pl->p));
        if (more == 0) {
            draw(pl, &b, false);
            break;
        }
        if (!dirty || now - pl->last_draw >= FRAME_SEC)
            draw(pl, &b, false); /* the status line's clock, or what changed */
        /* How long nothing is due. */
        double next;
        int timeout;
        if (!castplay_next_time(pl->p, &next)) {
            timeout = 0;
        } else if (next <= t) {
            timeout = 0; /* a flood: look at the keys and go on */
        } else if (pl->paused) {
            timeout = 250;
        } else {
            double wait = (next - t) / pl->speed;
            if (dirty && wait > FRAME_SEC)
                wait = FRAME_SEC;
            if (wait > 0.25)
                wait = 0.25; /* the clock on the status line */
            timeout = (int)(wait * 1000) + 1;
        }
        struct pollfd fds[2] = {{.fd = sig_pipe[0], .events = POLLIN}, {.fd = STDIN_FILENO, .events = POLLIN}};
        int nfds = pl->keys ? 2 : 1;
        if (poll(fds, (nfds_t)nfds, timeout) < 0 && errno != EINTR) {
            snprintf(err, errlen, "poll: %s", strerror(errno));
            rc = -1;
            break;
        }
        if (fds[0].revents & POLLIN) {
            unsigned char sigs[16];
            ssize_t n = read(sig_pipe[0], sigs, sizeof sigs);
            for (ssize_t i = 0; i < n; i++) {
                if (sigs[i] == SIGWINCH) {
                    term_size(&pl->term_rows, &pl->term_cols);
                    draw(pl, &b, true);
                } else {
                    pl->signal = sigs[i];
                    pl->quit = true;
                }
            }
        }
        if (pl->keys && (fds[1].revents & (POLLIN | POLLHUP))) {
            unsigned char keys[64];
            ssize_t n = read(STDIN_FILENO, keys, sizeof keys);
            if (n <= 0)
                pl->keys = false; /* the terminal went away: play on without keys */
            bool moved = false;
            for (ssize_t i = 0; i < n && !pl->quit; i++) {
                if (key(pl, keys[i], err, errlen) < 0) {
                    rc = -1;
                    break;
                }
                moved |= keys[i] == 'n' || keys[i] == 'p';
            }
            if (rc < 0)
                break;
            draw(pl, &b, moved);
        }
        if (pl->quit)
            break;
    }
    leave_screen(&b, &pl->view, pl->term_rows);
    buf_free(&b);
    return rc;
}

static int install_signals(void)
{
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    return 0;
}

/* ---- the verb --------------------------------------------------------------------- */

static int no_marker(castplay_t *p, int from)
{
    size_t n;
    const castplay_marker *m = castplay_markers(p, &n);
    size_t cmds = castplay_command_count(p);
    int lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++)
        if (m[i].command > 0 && !m[i].end) {
            if (!lo || m[i].command < lo)
                lo = m[i].command;
            if (m[i].command > hi)
                hi = m[i].command;
        }
    const char *name = castread_name(castplay_reader(p));
    char msg[1200];
    if (cmds == 0)
        snprintf(msg, sizeof msg,
                 "%s has no marker for command %d: it marks no commands (no \"cmd N: ...\" marker; recorded "
                 "before corral marked commands, or by another program)",
                 name, from);
    else
        snprintf(msg, sizeof msg, "%s has no marker for command %d: it marks %zu command%s (%d to %d)", name, from,
                 cmds, cmds == 1 ? "" : "s", lo, hi);
    say("", msg);
    return EXIT_ERR;
}

/* self, not v: the final screen below has a view named v. */
static int verb_replay(const cli_verb *self, int argc, char **argv)
{
    double speed = 1, idle = -1;
    long from = 0;
    static const struct option opts[] = {{"speed", required_argument, NULL, 's'},
                                         {"idle-limit", required_argument, NULL, 'i'},
                                         {"from", required_argument, NULL, 'f'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    int o;
    while ((o = getopt_long(argc, argv, "s:i:f:h", opts, NULL)) != -1) {
        switch (o) {
        case 's':
            if (parse_number(optarg, 1000, &speed) < 0)
                return cli_usage_error(self, "--speed wants a number from 0 (as fast as possible) to 1000, not '%s'",
                                       optarg);
            break;
        case 'i':
            if (parse_number(optarg, 1e9, &idle) < 0)
                return cli_usage_error(self, "--idle-limit wants seconds (0 keeps every pause), not '%s'", optarg);
            break;
        case 'f': {
            char *end;
            errno = 0;
            from = strtol(optarg, &end, 10);
            if (errno || *end || end == optarg || from < 1 || from > 2147483647L)
                return cli_usage_error(self, "--from wants a command number from 1, not '%s'", optarg);
            break;
        }
        case 'h': return cli_print_help(self);
        default: return cli_option_usage(self);
        }
    }
    if (argc - optind == 0)
        return cli_usage_error(self, "wants a session id or a file");
    if (argc - optind > 1)
        return cli_usage_error(self, "wants one session id or file, not %d", argc - optind);
    char err[1024];
    char *path = recording_path(argv[optind], err, sizeof err);
    if (!path) {
        say("", err);
        return EXIT_ERR;
    }
    castread_t *r = castread_open(path, warn_to_stderr, NULL, err, sizeof err);
    free(path);
    if (!r) {
        say("", err);
        return EXIT_ERR;
    }
    /* The history the server's models keep, so that a resize brings back
     * the same lines here.  A line with an error is reported by
     * cli_load_conf and left out; the replay goes on all the same. */
    static const char *const sections[] = {"session", NULL};
    conf_t conf;
    cli_load_conf(&conf, "replay", sections);
    int scrollback = conf.scrollback;
    conf_free(&conf);
    const cast_header *h = castread_header(r);
    castplay_opts po = {
        .idle_limit = idle >= 0 ? idle : h->idle_time_limit > 0 ? h->idle_time_limit : DEFAULT_IDLE_LIMIT,
        .scrollback = scrollback,
    };
    castplay_t *p = castplay_new(r, &po, err, sizeof err);
    if (!p) {
        say("", err);
        return EXIT_ERR;
    }
    int rc = EXIT_ERR;
    bool tty = isatty(STDOUT_FILENO);
    bool interactive = tty && speed > 0;
    if (from || interactive) {
        if (castplay_index(p, err, sizeof err) < 0) {
            say("", err);
            goto out;
        }
    }
    int mark = -1;
    if (from) {
        mark = castplay_find_command(p, (int)from);
        if (mark < 0) {
            rc = no_marker(p, (int)from);
            goto out;
        }
    }
    if (!interactive) {
        /* The screen as the recording ends. */
        if (castplay_finish(p, err, sizeof err) < 0) {
            say("", err);
            goto out;
        }
        vt_t *vt = castplay_vt(p);
        buf_t b;
        buf_init(&b);
        if (!tty) {
            size_t len;
            char *text = vt_text(vt, 0, vt_rows(vt) - 1, &len);
            buf_append(&b, text, len);
            free(text);
            out_write(&b);
        } else {
            int rows, cols;
            term_size(&rows, &cols);
            /* The last row stays free for the shell's prompt after it, as
             * it does for the status line while playing. */
            replaydraw_view v = {0};
            replaydraw_fit(&v, vt, rows > 1 ? rows - 1 : 1, cols);
            buf_puts(&b, "\033[?2026h\033[0m\033[H\033[2J");
            replaydraw_frame(&b, vt, &v, true);
            buf_puts(&b, "\033[?2026l");
            leave_screen(&b, &v, rows);
        }
        buf_free(&b);
        rc = 0;
        goto out;
    }
    if (install_signals() < 0) {
        fprintf(stderr, "corral: cannot set up signals: %s\n", strerror(errno));
        goto out;
    }
    player pl = {.p = p, .speed = speed, .keys = isatty(STDIN_FILENO)};
    term_size(&pl.term_rows, &pl.term_cols);
    if (mark >= 0 && castplay_seek(p, (size_t)mark, err, sizeof err) < 0) {
        say("", err);
        goto out;
    }
    reanchor(&pl, castplay_time(p));
    if (pl.keys)
        keys_raw();
    int prc = play_interactive(&pl, err, sizeof err);
    keys_restore();
    if (prc < 0) {
        say("", err);
        goto out;
    }
    rc = 0;
    if (pl.signal) {
        /* Ended by a signal: end the way it would have ended us. */
        castplay_free(p);
        cli_records_end(); /* no exit handlers run after the signal */
        signal(pl.signal, SIG_DFL);
        raise(pl.signal);
        return 128 + pl.signal;
    }
out:
    castplay_free(p);
    return rc;
}

const cli_verb cli_verb_replay = {
    .name = "replay",
    .usage = "replay [--speed X] [--idle-limit S] [--from N] SESSION|FILE.cast|FILE.tar.gz",
    .help = "Play a session's recording (its output.cast, which stays after the session\n"
            "and the server are gone), a .cast file, or a corral export in the terminal,\n"
            "through corral's own terminal model: the recorded program's escape sequences\n"
            "never reach your terminal (no title, clipboard, mode or query), only its\n"
            "screen, drawn by corral.  Pauses longer than the idle limit are cut.  While\n"
            "it plays: space pauses, + and - change the speed, n and p jump to the next\n"
            "and previous command, q quits.  To a pipe, or with --speed 0, it prints only\n"
            "the screen as the recording ends (as text to a pipe, like corral screen).\n\n"
            "  -s, --speed X       play X times as fast (default 1); 0: the end at once\n"
            "  -i, --idle-limit S  cut pauses to S seconds (default: the recording's\n"
            "                      idle_time_limit, else 2); 0 keeps every pause\n"
            "  -f, --from N        start where command N starts (its \"cmd N:\" marker),\n"
            "                      with the screen as it was there\n"
            "SESSION is an id from corral ls (ID.N for an older session's recording kept\n"
            "under that id); a file named like an id is given as ./NAME.\n",
    .run = verb_replay,
    .where = CLI_FILES,
};
