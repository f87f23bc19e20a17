/*
 * session.c - a session's process tree, PTY I/O, terminal model, recording
 * and event log.
 *
 * Output path, for every read: terminal model (vt), recording (cast), the
 * agent's pending buffer (head/tail), then the owner's output hook.  End of
 * a session: the init reports the command's status once the rest of the
 * tree is gone (or, failing that, the server reaps the init:
 * session_reaped) and the PTY reports end-of-file; whichever comes second
 * "finishes" the session, with a 100 ms grace for output still in flight
 * (Codex's TRAILING_OUTPUT_GRACE).  The sandbox's resources go at the
 * reap.
 */
#include "config.h"

#include "server/session.h"
#include "sandbox/sbutil.h"
#include "protocol/proto.h"
#include "base/quote.h"
#include "protocol/uexec.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define READ_CHUNK (64u * 1024u)
#define READ_BUDGET (4u * READ_CHUNK) /* per readable event, for fairness */
#define KILL_BACKSTOP_MS 3000
#define CAST_FLUSH_MS 200

static char read_buf[READ_CHUNK];

static double rec_time(const session_t *s)
{
    return now_sec() - s->started_mono;
}

static const char *signal_name(int sig, char *tmp, size_t tmplen)
{
    const char *abbrev = sigabbrev_np(sig);
    if (abbrev)
        snprintf(tmp, tmplen, "SIG%s", abbrev);
    else
        snprintf(tmp, tmplen, "signal %d", sig);
    return tmp;
}

void session_state_text(const session_t *s, char *out, size_t outlen)
{
    char tmp[32];
    if (s->state == SESSION_RUNNING)
        snprintf(out, outlen, s->killing ? "stopping" : "running");
    else if (s->exit_signal)
        snprintf(out, outlen, "killed %s", signal_name(s->exit_signal, tmp, sizeof tmp));
    else
        snprintf(out, outlen, "exited %d", s->exit_code);
}

/* Create the session's state directory; an older session that had the same
 * id keeps its files under <id>.<n>. */
static char *make_session_dir(const char *state_dir, int id, char *err, size_t errlen)
{
    char *parent = xasprintf("%s/sessions", state_dir);
    int rc = mkdir_p(parent, 0700);
    if (rc < 0) {
        snprintf(err, errlen, "cannot create %s: %s", parent, strerror(-rc));
        free(parent);
        return NULL;
    }
    char *dir = xasprintf("%s/%d", parent, id);
    if (mkdir(dir, 0700) < 0) {
        if (errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
            goto fail;
        }
        for (int n = 1;; n++) {
            char *old = xasprintf("%s/%d.%d", parent, id, n);
            struct stat st;
            if (lstat(old, &st) < 0 && errno == ENOENT) {
                int r = rename(dir, old);
                free(old);
                if (r < 0 || mkdir(dir, 0700) < 0) {
                    snprintf(err, errlen, "cannot set aside the old %s: %s", dir, strerror(errno));
                    goto fail;
                }
                break;
            }
            free(old);
            if (n > 100000) {
                snprintf(err, errlen, "too many old copies of %s", dir);
                goto fail;
            }
        }
    }
    free(parent);
    return dir;
fail:
    free(parent);
    free(dir);
    return NULL;
}

/* A PTY pair of the given size; the master is non-blocking. */
static int open_pty(int rows, int cols, int *master, int *slave, char *err, size_t errlen)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0) {
        snprintf(err, errlen, "cannot open a PTY: %s", strerror(errno));
        return -1;
    }
    char name[128];
    if (grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, name, sizeof name) != 0) {
        snprintf(err, errlen, "cannot set up the PTY: %s", strerror(errno));
        close(m);
        return -1;
    }
    int sl = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (sl < 0) {
        snprintf(err, errlen, "cannot open %s: %s", name, strerror(errno));
        close(m);
        return -1;
    }
    struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
    ioctl(m, TIOCSWINSZ, &ws);
    struct termios tio;
    if (tcgetattr(sl, &tio) == 0) {
        tio.c_iflag |= IUTF8; /* backspace removes a whole UTF-8 character */
        tcsetattr(sl, TCSANOW, &tio);
    }
    fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
    *master = m;
    *slave = sl;
    return 0;
}

static void vt_reply(void *user, const char *bytes, size_t len)
{
    session_write(user, bytes, len);
}

static void vt_title_changed(void *user, const char *title)
{
    session_t *s = user;
    (void)title;
    if (s->hooks && s->hooks->title)
        s->hooks->title(s, s->hooks_user);
}

static void vt_bell(void *user)
{
    session_t *s = user;
    if (s->hooks && s->hooks->bell)
        s->hooks->bell(s, s->hooks_user);
}

static const vt_callbacks session_vt_cb = {.reply = vt_reply, .title = vt_title_changed, .bell = vt_bell};

static void report_sandbox_error(session_t *s);

static void on_handle_closed(uv_handle_t *h)
{
    session_t *s = h->data;
    if (h == (uv_handle_t *)&s->poll && s->fd >= 0) {
        close(s->fd);
        s->fd = -1;
    }
    if (--s->open_handles == 0 && s->hooks->closed)
        s->hooks->closed(s, s->hooks_user);
}

static void close_handle(session_t *s, uv_handle_t *h)
{
    if (!uv_is_closing(h))
        uv_close(h, on_handle_closed);
}

static void flush_cast_cb(uv_timer_t *t)
{
    session_t *s = t->data;
    if (s->cast)
        cast_flush(s->cast);
}

static void finish(session_t *s)
{
    if (s->finished || s->state != SESSION_EXITED || !s->output_closed)
        return;
    s->finished = true;
    /* Only now close the PTY master: every process of the tree is gone, so
     * the hangup this causes can no longer reach one of them. */
    close_handle(s, (uv_handle_t *)&s->poll);
    uv_timer_stop(&s->grace_timer);
    uv_timer_stop(&s->kill_timer);
    uv_timer_stop(&s->lifetime_timer);
    uv_timer_stop(&s->flush_timer);
    /* The owner's last marks (the end of the command that was running)
     * go before the exit marker, which is always the last event. */
    if (s->hooks->ending)
        s->hooks->ending(s, s->hooks_user);
    if (s->cast) {
        char label[64], tmp[32];
        if (s->exit_signal)
            snprintf(label, sizeof label, "killed by %s", signal_name(s->exit_signal, tmp, sizeof tmp));
        else
            snprintf(label, sizeof label, "exited with code %d", s->exit_code);
        cast_marker(s->cast, rec_time(s), label);
        cast_close(s->cast);
        s->cast = NULL;
    }
    if (s->hooks->finished)
        s->hooks->finished(s, s->hooks_user);
}

/* End of output: every holder of the PTY slave (or the pipe's write end)
 * closed it.  The master stays open until the process tree is reaped: a
 * process that closed its terminal may still be running (cat closes stdout
 * in its exit handlers), and closing the master would hang up its session
 * and kill it with SIGHUP. */
static void output_closed(session_t *s)
{
    if (s->output_closed)
        return;
    s->output_closed = true;
    if (s->poll_active)
        uv_poll_stop(&s->poll);
    s->poll_active = false;
    buf_free(&s->wq);
    finish(s);
}

/* Feed one chunk of output everywhere it goes. */
static void handle_output(session_t *s, const char *data, size_t len)
{
    if (s->tty) {
        vt_write(s->vt, data, len);
        if (s->cast)
            cast_output(s->cast, rec_time(s), data, len);
        if (s->hooks->screen_output)
            s->hooks->screen_output(s, data, len, s->hooks_user);
    } else {
        /* Pipes have no ONLCR: show "\n" as a new line in the model. */
        buf_t crlf;
        buf_init(&crlf);
        buf_reserve(&crlf, len + len / 16);
        for (size_t i = 0; i < len; i++) {
            if (data[i] == '\n' && (i == 0 || data[i - 1] != '\r'))
                buf_putc(&crlf, '\r');
            buf_putc(&crlf, data[i]);
        }
        vt_write(s->vt, crlf.data, crlf.len);
        if (s->cast)
            cast_output(s->cast, rec_time(s), crlf.data, crlf.len);
        if (s->hooks->screen_output)
            s->hooks->screen_output(s, crlf.data, crlf.len, s->hooks_user);
        buf_free(&crlf);
    }
    if (s->cast && !uv_is_active((uv_handle_t *)&s->flush_timer))
        uv_timer_start(&s->flush_timer, flush_cast_cb, CAST_FLUSH_MS, 0);
    headtail_push(&s->pending, data, len);
    if (s->hooks->output)
        s->hooks->output(s, data, len, s->hooks_user);
}

/* Read until EAGAIN, end of file, or the budget is spent (or, unless
 * drain, a short read).  Returns false when the output has closed. */
static bool read_output(session_t *s, size_t budget, bool drain)
{
    size_t got = 0;
    while (got < budget && !s->read_paused) {
        ssize_t n = read(s->fd, read_buf, sizeof read_buf);
        if (n > 0) {
            handle_output(s, read_buf, (size_t)n);
            got += (size_t)n;
            /* A short read drained the kernel's buffer (a PTY hands over
             * at most 4 KiB at a time): wait for the next readable event
             * rather than pay for a read that says EAGAIN. */
            if ((size_t)n < sizeof read_buf && !drain)
                return true;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        /* 0 (pipe closed) or EIO (every PTY slave closed). */
        output_closed(s);
        return false;
    }
    return true;
}

static void update_poll(session_t *s);

static void flush_writes(session_t *s)
{
    while (s->wq.len > 0) {
        ssize_t n = write(s->fd, s->wq.data, s->wq.len);
        if (n > 0) {
            buf_consume(&s->wq, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        buf_reset(&s->wq); /* the terminal is gone */
        break;
    }
    update_poll(s);
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    session_t *s = h->data;
    if (status < 0) {
        output_closed(s);
        return;
    }
    if (events & UV_READABLE) {
        if (!read_output(s, READ_BUDGET, false))
            return;
    }
    if ((events & UV_WRITABLE) && !s->output_closed)
        flush_writes(s);
}

static void update_poll(session_t *s)
{
    if (s->output_closed || s->closing)
        return;
    int events = 0;
    if (!s->read_paused)
        events |= UV_READABLE;
    if (s->wq.len > 0)
        events |= UV_WRITABLE;
    if (events) {
        uv_poll_start(&s->poll, events, on_poll);
        s->poll_active = true;
    } else if (s->poll_active) {
        uv_poll_stop(&s->poll);
        s->poll_active = false;
    }
}

static void grace_cb(uv_timer_t *t)
{
    session_t *s = t->data;
    if (s->output_closed)
        return;
    /* Take what is still buffered in the kernel, then stop waiting for
     * an end of file that some escaped holder of the PTY may never give. */
    bool was_paused = s->read_paused;
    s->read_paused = false;
    if (read_output(s, SIZE_MAX, true))
        output_closed(s);
    s->read_paused = was_paused;
}

static void lifetime_cb(uv_timer_t *t)
{
    session_kill(t->data, "lifetime");
}

static void kill_backstop_cb(uv_timer_t *t)
{
    session_t *s = t->data;
    if (s->state == SESSION_RUNNING && s->pid > 0)
        kill(s->pid, SIGKILL);
}

/* A setup failure is shown where the user or agent looks: the session's
 * output (and its log). */
static void report_sandbox_error(session_t *s)
{
    if (!s->child.error || s->sandbox_error_reported)
        return;
    s->sandbox_error_reported = true;
    char *line = xasprintf("corral: sandbox setup failed: %s\r\n", s->child.error);
    handle_output(s, line, strlen(line));
    free(line);
    eventlog_write(s->events, "sandbox_failed", json_pack("{s:s}", "message", s->child.error), false);
}

static void session_ended(session_t *s, int status);

static void on_status(uv_poll_t *h, int status, int events)
{
    session_t *s = h->data;
    (void)events;
    sb_child_feed(&s->child);
    report_sandbox_error(s);
    /* The command's end, before its init's own exit (the teardown of its
     * namespaces) and the server's SIGCHLD: the records and the reply go
     * sooner. */
    if (s->child.have_status)
        session_ended(s, s->child.worker_status); /* its owner may close it: h with it */
    if ((status < 0 || s->child.status_eof) && !uv_is_closing((uv_handle_t *)h)) {
        uv_poll_stop(h);
        close_handle(s, (uv_handle_t *)h);
    }
}

static void init_timer(uv_loop_t *loop, session_t *s, uv_timer_t *t)
{
    uv_timer_init(loop, t);
    t->data = s;
    s->open_handles++;
}

static char *default_name(char *const *argv)
{
    const char *a0 = argv[0];
    const char *slash = strrchr(a0, '/');
    return sanitize_text(slash ? slash + 1 : a0, strlen(slash ? slash + 1 : a0), 64);
}

/* End the session's init and wait for it, on the loop: it is killed, or
 * past its last word (it reported how the command ended once it had
 * reaped everything else, so nothing of the sandbox is left to lose).
 * SIGKILL bounds the wait: an init stopped from outside, or slow to tear
 * down, would otherwise hold the whole server here.  Its pid, or -1 when
 * it is not this process's child to wait for. */
static pid_t wait_for_init(pid_t pid, int *status)
{
    kill(pid, SIGKILL); /* still our unreaped child: the pid is its own */
    pid_t p;
    while ((p = waitpid(pid, status, 0)) < 0 && errno == EINTR)
        ;
    return p;
}

/* The session's directory, event log and recording. */
static int open_session_files(session_t *s, const char *state_dir, char *err, size_t errlen)
{
    s->dir = make_session_dir(state_dir, s->id, err, errlen);
    if (!s->dir)
        return -1;
    char *path = xasprintf("%s/events.jsonl", s->dir);
    s->events = eventlog_open(path, err, errlen);
    free(path);
    if (!s->events)
        return -1;
    char *cmdline = quote_argv_display(s->argv);
    path = xasprintf("%s/output.cast", s->dir);
    s->cast = cast_open(path, s->cols, s->rows, s->created, cmdline, s->name, s->tty ? "xterm-256color" : "dumb",
                        err, errlen);
    free(path);
    free(cmdline);
    return s->cast ? 0 : -1;
}

/* A sandbox launched for a session that cannot be kept: killed (the
 * signal ends its whole pid namespace) and reaped here, before the
 * server's SIGCHLD handler could see a pid no session has. */
static void end_unrecorded(session_t *s)
{
    wait_for_init(s->pid, NULL);
    s->pid = -1;
}

session_t *session_start(uv_loop_t *loop, int id, const session_spec *spec, const char *state_dir,
                         const session_hooks *hooks, void *hooks_user, char *err, size_t errlen)
{
    const sb_plan *plan = spec->plan;
    int rows = spec->rows > 0 ? spec->rows : 24, cols = spec->cols > 0 ? spec->cols : 80;
    session_t *s = xcalloc(1, spec->size > sizeof *s ? spec->size : sizeof *s);
    s->id = id;
    s->fd = -1;
    s->kind = spec->kind;
    s->tty = spec->tty;
    s->pinned = spec->pinned;
    s->rows = rows;
    s->cols = cols;
    s->argv = strv_copy(plan->argv);
    s->cwd = xstrdup(plan->cwd);
    s->name = spec->name ? sanitize_text(spec->name, strlen(spec->name), 64) : default_name(plan->argv);
    s->client = xstrdup(spec->client ? spec->client : "user");
    s->profile = xstrdup(plan->profile);
    s->created = wall_sec();
    s->started_mono = now_sec();
    s->last_used_wall = s->created;
    s->hooks = hooks;
    s->hooks_user = hooks_user;
    buf_init(&s->wq);
    headtail_init(&s->pending, UEXEC_OUTPUT_MAX_BYTES);

    int child_fd = -1, master = -1;
    s->vt = vt_new(rows, cols, spec->scrollback, &session_vt_cb, s);
    if (!s->vt) {
        snprintf(err, errlen, "cannot create a %dx%d terminal model", cols, rows);
        goto fail;
    }

    sb_stdio io = {.tty = s->tty, .chan = spec->chan_fd};
    int devnull = -1;
    if (s->tty) {
        if (open_pty(rows, cols, &master, &child_fd, err, errlen) < 0)
            goto fail;
        io.in = io.out = io.err = child_fd;
    } else {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) {
            snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
            goto fail;
        }
        devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (devnull < 0) {
            snprintf(err, errlen, "cannot open /dev/null: %s", strerror(errno));
            close(p[0]);
            close(p[1]);
            goto fail;
        }
        master = p[0];
        child_fd = p[1];
        fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
        io.in = devnull;
        io.out = io.err = child_fd;
    }
    /* Not waiting for the sandbox to be ready keeps the loop free; the
     * status pipe says how the setup went. */
    /* A base whose holder has gone (killed from outside) cannot start
     * the command: it gets a sandbox made from nothing instead. */
    int launched =
        spec->base ? sb_launch_from_base(spec->base, plan, spec->layer, &io, false, &s->child, err, errlen) : -1;
    if (launched < 0)
        launched = sb_launch(plan, &io, false, &s->child, err, errlen);
    close(child_fd);
    child_fd = -1;
    if (devnull >= 0)
        close(devnull);
    if (launched < 0)
        goto fail;
    s->pid = s->child.pid;
    s->fd = master;
    master = -1;
    /* The session's files are made while the sandbox sets itself up (in
     * its own processes), not before: the loop's file work is off the
     * command's path.  Output waits in the terminal until the poll below
     * starts.  A session that cannot have its files does not run. */
    if (open_session_files(s, state_dir, err, errlen) < 0) {
        end_unrecorded(s);
        goto fail;
    }

    uv_poll_init(loop, &s->poll, s->fd);
    s->poll.data = s;
    s->open_handles++;
    if (s->child.status_fd >= 0) {
        uv_poll_init(loop, &s->status_poll, s->child.status_fd);
        s->status_poll.data = s;
        s->open_handles++;
        s->status_poll_open = true;
        uv_poll_start(&s->status_poll, UV_READABLE, on_status);
    }
    init_timer(loop, s, &s->grace_timer);
    init_timer(loop, s, &s->lifetime_timer);
    init_timer(loop, s, &s->kill_timer);
    init_timer(loop, s, &s->flush_timer);
    update_poll(s);
    if (spec->lifetime_ms)
        uv_timer_start(&s->lifetime_timer, lifetime_cb, spec->lifetime_ms, 0);

    json_t *created = json_pack("{s:i, s:s, s:o, s:s, s:s, s:s, s:s, s:b, s:i, s:i, s:i}", "session", id, "name",
                                s->name, "command", proto_argv_json(s->argv), "cwd", s->cwd, "client", s->client,
                                "profile", s->profile, "kind", s->kind == SESSION_EXEC ? "exec" : "user", "tty",
                                s->tty, "cols", cols, "rows", rows, "pid", (int)s->pid);
    if (created && plan->workspace)
        json_object_set_new(created, "workspace", json_string(plan->workspace));
    eventlog_write(s->events, "created", created, false);
    return s;

fail:
    if (child_fd >= 0)
        close(child_fd);
    if (master >= 0)
        close(master);
    s->hooks = NULL;
    session_free(s);
    return NULL;
}

int session_write(session_t *s, const char *data, size_t len)
{
    if (!s->tty || s->output_closed || s->fd < 0)
        return -EPIPE;
    if (len == 0)
        return 0;
    if (s->wq.len > (16u << 20))
        return -ENOBUFS; /* the program is not reading its input */
    buf_append(&s->wq, data, len);
    flush_writes(s);
    return 0;
}

void session_marker(session_t *s, const char *label)
{
    if (s->cast)
        cast_marker(s->cast, rec_time(s), label);
}

int session_resize(session_t *s, int rows, int cols)
{
    if (rows < 1 || cols < 1 || rows > 1000 || cols > 1000)
        return -EINVAL;
    if (rows == s->rows && cols == s->cols)
        return 0;
    s->rows = rows;
    s->cols = cols;
    vt_resize(s->vt, rows, cols);
    if (s->tty && s->fd >= 0) {
        struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
        ioctl(s->fd, TIOCSWINSZ, &ws);
    }
    if (s->cast)
        cast_resize(s->cast, rec_time(s), cols, rows);
    eventlog_write(s->events, "resized", json_pack("{s:i, s:i}", "cols", cols, "rows", rows), false);
    return 0;
}

void session_kill(session_t *s, const char *reason)
{
    if (s->state != SESSION_RUNNING || s->killing)
        return;
    s->killing = true;
    s->kill_reason = xstrdup(reason);
    if (strcmp(reason, "pruned") == 0)
        eventlog_write(s->events, "pruned", NULL, false);
    else
        eventlog_write(s->events, "killed", json_pack("{s:s}", "reason", reason), false);
    launch_kill_tree(s->pid);
    uv_timer_start(&s->kill_timer, kill_backstop_cb, KILL_BACKSTOP_MS, 0);
}

/* The command's tree is gone: its init said how the command ended on the
 * status pipe (it does once it has reaped every other process of the
 * sandbox, so nothing of the sandbox can write anywhere any more), or the
 * init itself was reaped without saying so.  The session ends now; the
 * sandbox's resources wait for the reap (session_reaped). */
static void session_ended(session_t *s, int status)
{
    if (s->state == SESSION_EXITED)
        return;
    report_sandbox_error(s);
    s->state = SESSION_EXITED;
    s->ended = wall_sec();
    char tmp[32];
    if (WIFSIGNALED(status)) {
        s->exit_signal = WTERMSIG(status);
        s->exit_code = 128 + s->exit_signal;
    } else {
        s->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    json_t *f = json_pack("{s:i, s:f}", "code", s->exit_code, "duration_seconds", s->ended - s->created);
    if (s->exit_signal)
        json_object_set_new(f, "signal", json_string(signal_name(s->exit_signal, tmp, sizeof tmp)));
    eventlog_write(s->events, "exited", f, false);
    uv_timer_stop(&s->kill_timer);
    uv_timer_stop(&s->lifetime_timer);
    if (!s->output_closed)
        uv_timer_start(&s->grace_timer, grace_cb, UEXEC_TRAILING_OUTPUT_GRACE_MS, 0);
    finish(s);
}

void session_reaped(session_t *s, int status)
{
    if (s->reaped)
        return;
    s->reaped = true;
    /* A pid 1 exits 128+N for signal N: the status pipe tells the truth. */
    session_ended(s, sb_child_status(&s->child, status));
    /* The sandbox is gone: its cgroups and placeholders go too.  The
     * status pipe is read to the end first (above) and no longer polled. */
    if (s->status_poll_open && !uv_is_closing((uv_handle_t *)&s->status_poll)) {
        uv_poll_stop(&s->status_poll);
        close_handle(s, (uv_handle_t *)&s->status_poll);
    }
    session_release_sandbox(s->grace_timer.loop, &s->child);
    if (s->hooks && s->hooks->reaped)
        s->hooks->reaped(s, s->hooks_user);
}

void session_reap_now(session_t *s)
{
    if (s->state != SESSION_EXITED || s->reaped || s->pid <= 0)
        return;
    int st = 0;
    session_reaped(s, wait_for_init(s->pid, &st) == s->pid ? st : 0);
}

typedef struct layer_work {
    uv_work_t req;
    sb_layer_hold hold;
} layer_work;

static void remove_layer(uv_work_t *req)
{
    sb_layer_release(&((layer_work *)req)->hold);
}

static void layer_removed(uv_work_t *req, int status)
{
    (void)status;
    free(req);
}

void session_release_layer(uv_loop_t *loop, sb_layer_hold *layer)
{
    /* A discarded home layer can hold thousands of files: removing it is
     * slow disk work, done on the thread pool so the loop never waits.
     * Its directory stays locked until then, so nothing else takes it. */
    if (layer->fd >= 0 || layer->path) {
        layer_work *w = xcalloc(1, sizeof *w);
        w->hold = *layer;
        layer->fd = -1;
        layer->path = NULL;
        if (uv_queue_work(loop, &w->req, remove_layer, layer_removed) < 0) {
            sb_layer_release(&w->hold);
            free(w);
        }
    }
}

void session_release_sandbox(uv_loop_t *loop, sb_child *child)
{
    session_release_layer(loop, &child->layer);
    sb_child_release(child);
}

void session_pause_reading(session_t *s, bool paused)
{
    if (s->read_paused == paused)
        return;
    s->read_paused = paused;
    update_poll(s);
}

/* Is pid the session's init or one of its descendants? */
static bool in_session(const session_t *s, pid_t pid)
{
    for (int depth = 0; depth < 64 && pid > 1; depth++) {
        if (pid == s->pid)
            return true;
        pid = sb_parent_pid(pid);
    }
    return false;
}

char *session_foreground_command(const session_t *s)
{
    if (!s->tty || s->fd < 0 || s->pid <= 0)
        return NULL;
    pid_t pg = tcgetpgrp(s->fd);
    if (pg <= 0)
        return NULL;
    /* The session's own program (its shell at the prompt, an agent) is not
     * a program it runs: the caller says that better. */
    pid_t up = sb_parent_pid(pg);
    if (up == s->pid || !in_session(s, up))
        return NULL;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pg);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    /* A program may make its argv as long as it likes: the first 4 KiB
     * say what it is. */
    char buf[4097];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf - 1)) < 0 && errno == EINTR)
        ;
    close(fd);
    /* Checked again after the read: a group that ended and whose number
     * went to a process outside the session is not shown. */
    if (n <= 0 || !in_session(s, pg))
        return NULL;
    buf[n] = '\0';
    char *words[64];
    size_t k = 0;
    for (char *p = buf; p < buf + n && k < sizeof words / sizeof words[0] - 1; p += strlen(p) + 1)
        words[k++] = p;
    words[k] = NULL;
    return k ? quote_argv_display(words) : NULL;
}

void session_drop_typeahead(session_t *s)
{
    if (!s->tty || s->fd < 0)
        return;
    /* The terminal's side the session reads, opened through the master
     * the server holds: its input queue is what was typed and not read.
     * Bytes the server could not yet write (s->wq, only while that queue
     * is full) stay: they go in after the question is out. */
    int peer = ioctl(s->fd, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (peer >= 0) {
        tcflush(peer, TCIFLUSH);
        close(peer);
    }
}

char *session_take_pending(session_t *s, size_t *len)
{
    return headtail_drain(&s->pending, len);
}

void session_close(session_t *s)
{
    if (s->closing)
        return;
    s->closing = true;
    close_handle(s, (uv_handle_t *)&s->poll);
    if (s->status_poll_open)
        close_handle(s, (uv_handle_t *)&s->status_poll);
    close_handle(s, (uv_handle_t *)&s->grace_timer);
    close_handle(s, (uv_handle_t *)&s->lifetime_timer);
    close_handle(s, (uv_handle_t *)&s->kill_timer);
    close_handle(s, (uv_handle_t *)&s->flush_timer);
}

void session_free(session_t *s)
{
    if (!s)
        return;
    /* Removed between its init's last word and its exit (a client's rm
     * right after the reply): that exit is a moment away, and the
     * sandbox's cgroup can only go after it. */
    if (s->state == SESSION_EXITED && !s->reaped && s->pid > 0) {
        wait_for_init(s->pid, NULL);
        s->reaped = true;
    }
    if (s->fd >= 0)
        close(s->fd);
    if (s->cast)
        cast_close(s->cast);
    sb_child_release(&s->child);
    eventlog_close(s->events);
    vt_free(s->vt);
    headtail_free(&s->pending);
    buf_free(&s->wq);
    for (char **p = s->argv; p && *p; p++)
        free(*p);
    free(s->argv);
    free(s->name);
    free(s->running_line);
    free(s->cwd);
    free(s->client);
    free(s->profile);
    free(s->dir);
    free(s->kill_reason);
    free(s);
}
