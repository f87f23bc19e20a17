/*
 * sesschan.c - see sesschan.h.
 *
 * Everything a message says is checked before use: sizes, types, that the
 * reply fd is a socket, absolute paths.  A malformed message is dropped
 * (with a "failed" reply when it brought a reply socket); it never ends
 * the channel or the server.  Escalated commands run outside the
 * session's sandbox, as children of the server, with the requester's
 * stdio; they end when the requester goes away or the session ends.
 */
#include "config.h"

#include "sesschan.h"

#include "approvals.h"
#include "launch.h"
#include "shsplit.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define MSG_MAX (64 * 1024)
#define FDS_MAX 4
#define ARGV_MAX 1024
/* Requests one session may have open at once: code in a sandbox must not
 * bury the user in dialogs (or the server in descriptors). */
#define OPEN_MAX_PER_SESSION 8

/* The server's end of one session's channel. */
typedef struct sesschan {
    server_t *srv;
    session_extra *x; /* the session's, cleared when the channel closes */
    int session;
    int fd;
    uv_poll_t poll;
} sesschan;

/* One request from inside a session, alive while its requester is. */
typedef struct chan_req {
    link_t node; /* in srv->chan_reqs */
    server_t *srv;
    int session;
    bool escalate;      /* else a shell line check */
    int reply;          /* the requester's reply socket */
    uv_poll_t poll;     /* on reply: the requester going away */
    bool polling;
    int stdio[3];       /* escalate: the requester's 0, 1, 2 */
    char **argv;
    char *cwd;
    char **write;
    bool network;
    sandbox_request sandbox;
    approval_t *approval; /* while a human decides */
    int approval_id;
    const char *answer;
    bool running;       /* escalate: the command has started */
    sb_child child;
    bool closing;
} chan_req;

static void reply(chan_req *r, json_t *msg)
{
    char *s = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (s && r->reply >= 0)
        (void)!send(r->reply, s, strlen(s), MSG_NOSIGNAL | MSG_DONTWAIT);
    free(s);
}

static void req_closed(uv_handle_t *h)
{
    chan_req *r = h->data;
    if (r->reply >= 0)
        close(r->reply);
    free(r);
}

/* Drop r: its fds, its request; the requester sees its reply socket end. */
static void req_free(chan_req *r)
{
    if (r->closing)
        return;
    r->closing = true;
    link_del(&r->node);
    for (int i = 0; i < 3; i++)
        if (r->stdio[i] >= 0)
            close(r->stdio[i]);
    proto_free_argv(r->argv);
    proto_free_argv(r->write);
    free(r->cwd);
    if (r->polling) {
        uv_close((uv_handle_t *)&r->poll, req_closed);
    } else {
        if (r->reply >= 0)
            close(r->reply);
        free(r);
    }
}

static void log_event(chan_req *r, const char *name, json_t *fields)
{
    session_t *s = server_find(r->srv, r->session);
    if (s && s->events)
        eventlog_write(s->events, name, fields, true);
    else
        json_decref(fields);
}

/* ---- running an approved escalation ------------------------------------------- */

static void start_escalated(chan_req *r)
{
    server_t *srv = r->srv;
    session_t *s = server_find(srv, r->session);
    if (!s || s->state != SESSION_RUNNING) {
        reply(r, json_pack("{s:s, s:s}", "state", "failed", "message", "the session has ended"));
        req_free(r);
        return;
    }
    spawn_request sr = {.argv = r->argv, .cwd = r->cwd, .profile = s->profile, .net = -1, .kind = SESSION_EXEC};
    static char *const everything[] = {"/", NULL};
    if (r->sandbox == SANDBOX_ESCALATED) {
        /* Deny entries keep a sandbox (with everything else writable). */
        if (srv->conf.sandbox.n_deny > 0) {
            sr.write = (char **)everything;
            sr.net = SB_NET_FULL;
        } else {
            sr.profile = "full";
        }
    } else {
        sr.write = r->write;
        if (r->network)
            sr.net = SB_NET_FULL;
    }
    char err[2048];
    sb_plan *plan = server_plan(srv, &sr, 0, false, err, sizeof err);
    if (!plan) {
        reply(r, json_pack("{s:s, s:s}", "state", "failed", "message", err));
        req_free(r);
        return;
    }
    sb_stdio io = {.in = r->stdio[0], .out = r->stdio[1], .err = r->stdio[2], .tty = false, .chan = -1};
    int rc = sb_launch(plan, &io, false, &r->child, err, sizeof err);
    json_t *fields = json_pack("{s:o, s:s, s:s, s:i}", "argv", proto_argv_json(r->argv), "cwd", r->cwd, "profile",
                               plan->profile, "approval", r->approval_id);
    sb_plan_free(plan);
    free(plan);
    for (int i = 0; i < 3; i++) {
        close(r->stdio[i]);
        r->stdio[i] = -1;
    }
    if (rc < 0) {
        json_decref(fields);
        reply(r, json_pack("{s:s, s:s}", "state", "failed", "message", err));
        req_free(r);
        return;
    }
    r->running = true;
    json_object_set_new(fields, "pid", json_integer(r->child.pid));
    log_event(r, "escalated", fields);
    reply(r, json_pack("{s:s}", "state", "running"));
}

bool sesschan_reaped(server_t *srv, pid_t pid, int status)
{
    for (link_t *l = srv->chan_reqs.next; l != &srv->chan_reqs; l = l->next) {
        chan_req *r = link_entry(l, chan_req, node);
        if (!r->running || r->child.pid != pid)
            continue;
        sb_child_feed(&r->child);
        int st = sb_child_status(&r->child, status);
        if (r->child.error && !r->child.ready)
            reply(r, json_pack("{s:s, s:s}", "state", "failed", "message", r->child.error));
        else
            reply(r, json_pack("{s:s, s:i}", "state", "exited", "status", st));
        log_event(r, "escalation_ended", json_pack("{s:i, s:i}", "approval", r->approval_id, "status", st));
        sb_child_release(&r->child);
        r->running = false;
        req_free(r);
        return true;
    }
    return false;
}

/* ---- answers ---------------------------------------------------------------- */

static void deny(chan_req *r, const char *what, approval_answer answer, const char *note)
{
    char msg[1400];
    snprintf(msg, sizeof msg, "%s%s%s%s", what,
             answer == ANSWER_TIMEOUT ? ": nobody approved it in time"
             : answer == ANSWER_STOP  ? ": the user denied it and asks you to stop and wait"
                                      : ": the user denied it",
             note && *note ? ". Note from the user: " : "", note && *note ? note : "");
    reply(r, json_pack("{s:s, s:s}", "state", "denied", "message", msg));
}

static void on_answer(server_t *srv, approval_t *a, approval_answer answer, const char *note, void *user)
{
    (void)srv;
    chan_req *r = user;
    r->approval = NULL;
    if (answer == ANSWER_GONE) {
        req_free(r);
        return;
    }
    if (answer == ANSWER_ONCE || answer == ANSWER_SESSION || answer == ANSWER_PERSIST) {
        r->approval_id = a->id;
        r->answer = approval_answer_name(answer);
        if (r->escalate) {
            start_escalated(r);
            return;
        }
        reply(r, json_pack("{s:s}", "state", "run"));
    } else {
        deny(r, r->escalate ? "corral escalate: not run" : "corral: this command line was not run", answer, note);
    }
    req_free(r);
}

/* ---- requests --------------------------------------------------------------- */

static const char *sandbox_key_env(int session)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "session:%d", session);
    return buf;
}

/* Queue r for a human, or answer it from the session cache. */
static void ask(chan_req *r, session_t *s, const policy_result *pr, const char *kind, const char *justification,
                char **prefix_rule)
{
    session_extra *x = sx(s);
    char *key = approval_key(r->argv, r->cwd, s->tty, r->sandbox, r->write, r->network, sandbox_key_env(s->id));
    if (approval_cached(&x->approved, key)) {
        free(key);
        proto_free_argv(prefix_rule);
        if (r->escalate) {
            start_escalated(r);
            return;
        }
        reply(r, json_pack("{s:s}", "state", "run"));
        req_free(r);
        return;
    }
    approval_t *a = approval_new(r->srv, r->argv, r->cwd, s->client);
    free(a->kind);
    a->kind = xstrdup(kind);
    a->session = s->id;
    a->session_name = xstrdup(s->name);
    a->tty = s->tty;
    a->sandbox = r->sandbox;
    a->write = NULL;
    if (r->write) {
        size_t n = 0;
        while (r->write[n])
            n++;
        a->write = xcalloc(n + 1, sizeof *a->write);
        for (size_t i = 0; i < n; i++)
            a->write[i] = xstrdup(r->write[i]);
    }
    a->network = r->network;
    a->justification = justification && *justification ? sanitize_text(justification, strlen(justification), 1000)
                                                        : NULL;
    a->reason = xstrdup(pr->reason[0] ? pr->reason : "asked from inside the session");
    a->rule = pr->rule[0] ? xstrdup(pr->rule) : NULL;
    a->prefix_rule = prefix_rule;
    a->cache_key = key;
    a->cache = &x->approved;
    a->fn = on_answer;
    a->user = r;
    r->approval = a;
    approval_submit(r->srv, a);
    reply(r, json_pack("{s:s, s:i}", "state", "pending", "approval", a->id));
}

static bool deny_entries(server_t *srv)
{
    return srv->conf.sandbox.n_deny > 0;
}

static void handle_escalate(chan_req *r, session_t *s, json_t *msg)
{
    proto_err e;
    const char *reason = NULL;
    if (proto_get_argv(msg, "write", false, &r->write, &e) < 0 ||
        proto_get_bool(msg, "network", false, &r->network, &e) < 0 ||
        proto_get_string(msg, "reason", false, &reason, &e) < 0) {
        reply(r, json_pack("{s:s, s:s}", "state", "failed", "message", e.message));
        req_free(r);
        return;
    }
    for (char **w = r->write; w && *w; w++) {
        if ((*w)[0] != '/') {
            reply(r, json_pack("{s:s, s:s}", "state", "failed", "message", "write paths must be absolute"));
            req_free(r);
            return;
        }
    }
    r->sandbox = r->network || (r->write && r->write[0]) ? SANDBOX_MORE_PERMISSIONS : SANDBOX_ESCALATED;
    /* The rules are those of the session's workspace (where it started),
     * not of the cwd the request claims: that comes from inside. */
    policy_result pr;
    policy_evaluate(approvals_rules_for(r->srv, s->cwd), r->srv->builtin_rules, &sx(s)->policy, r->argv, r->sandbox,
                    deny_entries(r->srv), &pr);
    if (pr.verdict == VERDICT_FORBIDDEN) {
        char text[700];
        snprintf(text, sizeof text, "corral escalate: not run: the exec policy forbids it: %s", pr.reason);
        reply(r, json_pack("{s:s, s:s}", "state", "denied", "message", text));
        log_event(r, "escalation_refused", json_pack("{s:o, s:s}", "argv", proto_argv_json(r->argv), "reason", pr.reason));
        req_free(r);
        return;
    }
    /* Requests from inside a sandbox always go to a human (DESIGN section
     * 2), even when a rule would allow the command: the rule speaks for
     * the agent's own requests, not for code running in the sandbox. */
    if (pr.verdict == VERDICT_RUN)
        snprintf(pr.reason, sizeof pr.reason, "asks to leave the sandbox from inside session %d", s->id);
    ask(r, s, &pr, "escalate", reason, NULL);
}

/* A single plain command, as a rule prefix for "p"; NULL otherwise. */
static char **line_prefix(const char *line)
{
    sh_commands cmds = {0};
    char **out = NULL;
    if (shsplit_plain(line, &cmds) == 0 && cmds.n == 1) {
        out = cmds.cmds[0];
        cmds.cmds[0] = NULL;
        cmds.n = 0;
    }
    sh_commands_free(&cmds);
    return out;
}

static void handle_check(chan_req *r, session_t *s, json_t *msg)
{
    proto_err e;
    const char *shell = NULL, *line = NULL;
    if (proto_get_string(msg, "shell", true, &shell, &e) < 0 || proto_get_string(msg, "line", true, &line, &e) < 0) {
        reply(r, json_pack("{s:s, s:s}", "state", "failed", "message", e.message));
        req_free(r);
        return;
    }
    if (strcmp(shell, "bash") != 0 && strcmp(shell, "zsh") != 0)
        shell = "sh";
    r->argv = xcalloc(4, sizeof *r->argv);
    r->argv[0] = xstrdup(shell);
    r->argv[1] = xstrdup("-c");
    r->argv[2] = xstrdup(line);
    r->sandbox = SANDBOX_DEFAULT;
    policy_result pr;
    policy_evaluate(approvals_rules_for(r->srv, s->cwd), r->srv->builtin_rules, &sx(s)->policy, r->argv, SANDBOX_DEFAULT,
                    deny_entries(r->srv), &pr);
    if (pr.verdict == VERDICT_RUN) {
        reply(r, json_pack("{s:s}", "state", "run"));
        req_free(r);
        return;
    }
    if (pr.verdict == VERDICT_FORBIDDEN) {
        char text[700];
        snprintf(text, sizeof text, "corral: this command line was not run: the exec policy forbids it: %s", pr.reason);
        reply(r, json_pack("{s:s, s:s}", "state", "denied", "message", text));
        log_event(r, "command_refused", json_pack("{s:s, s:s}", "line", line, "reason", pr.reason));
        req_free(r);
        return;
    }
    ask(r, s, &pr, "command", NULL, line_prefix(line));
}

static void on_reply_event(uv_poll_t *h, int status, int events)
{
    (void)status;
    (void)events;
    chan_req *r = h->data;
    char buf[256];
    ssize_t n = recv(r->reply, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
        return; /* nothing more is expected from the requester: ignored */
    /* Gone: nothing of its request may go on. */
    uv_poll_stop(&r->poll);
    if (r->approval) {
        approval_withdraw(r->srv, r->approval); /* on_answer frees r */
        return;
    }
    if (r->running) {
        launch_kill_tree(r->child.pid); /* reaped later: sesschan_reaped frees r */
        return;
    }
    req_free(r);
}

/* A request arrived: fds[0] is the reply socket, then stdio for escalate. */
static void handle_message(sesschan *ch, const char *data, size_t len, int *fds, int nfds)
{
    server_t *srv = ch->srv;
    session_t *s = server_find(srv, ch->session);
    struct stat st;
    if (nfds < 1 || fstat(fds[0], &st) < 0 || !S_ISSOCK(st.st_mode) || !s) {
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        return;
    }
    size_t open = 0;
    for (link_t *l = srv->chan_reqs.next; l != &srv->chan_reqs; l = l->next)
        open += link_entry(l, chan_req, node)->session == s->id;
    if (open >= OPEN_MAX_PER_SESSION) {
        static const char busy[] = "{\"state\":\"failed\",\"message\":\"too many requests from this session "
                                   "are open; wait for them to be answered\"}";
        (void)!send(fds[0], busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        return;
    }
    chan_req *r = xcalloc(1, sizeof *r);
    r->srv = srv;
    r->session = s->id;
    r->reply = fds[0];
    r->stdio[0] = r->stdio[1] = r->stdio[2] = -1;
    link_add(&srv->chan_reqs, &r->node);
    fcntl(r->reply, F_SETFL, fcntl(r->reply, F_GETFL) | O_NONBLOCK);
    for (int i = 1; i < nfds; i++) {
        if (i <= 3)
            r->stdio[i - 1] = fds[i];
        else
            close(fds[i]);
    }
    json_error_t jerr;
    json_t *msg = json_loadb(data, len, 0, &jerr);
    const char *verb = NULL, *cwd = NULL;
    proto_err e;
    if (!msg || !json_is_object(msg) || proto_get_string(msg, "verb", true, &verb, &e) < 0 ||
        proto_get_string(msg, "cwd", true, &cwd, &e) < 0) {
        reply(r, json_pack("{s:s, s:s}", "state", "failed", "message",
                           msg ? "malformed request: it needs 'verb' and 'cwd'" : "malformed request: not JSON"));
        json_decref(msg);
        req_free(r);
        return;
    }
    if (cwd[0] != '/') {
        reply(r, json_pack("{s:s, s:s}", "state", "failed", "message", "'cwd' must be absolute"));
        json_decref(msg);
        req_free(r);
        return;
    }
    r->cwd = xstrdup(cwd);
    uv_poll_init(srv->loop, &r->poll, r->reply);
    r->poll.data = r;
    r->polling = true;
    uv_poll_start(&r->poll, UV_READABLE | UV_DISCONNECT, on_reply_event);
    if (strcmp(verb, "escalate") == 0) {
        r->escalate = true;
        size_t n = 0;
        if (nfds != 4 || proto_get_argv(msg, "argv", true, &r->argv, &e) < 0 || !r->argv[0]) {
            reply(r, json_pack("{s:s, s:s}", "state", "failed", "message",
                               nfds != 4 ? "escalate needs the requester's stdin, stdout and stderr"
                                         : "escalate needs a non-empty 'argv'"));
            req_free(r);
        } else {
            while (r->argv[n])
                n++;
            if (n > ARGV_MAX) {
                reply(r, json_pack("{s:s, s:s}", "state", "failed", "message", "too many arguments"));
                req_free(r);
            } else {
                handle_escalate(r, s, msg);
            }
        }
    } else if (strcmp(verb, "check") == 0) {
        handle_check(r, s, msg);
    } else {
        reply(r, json_pack("{s:s, s:s}", "state", "failed", "message", "unknown verb (escalate, check)"));
        req_free(r);
    }
    json_decref(msg);
}

/* ---- the channel ------------------------------------------------------------ */

static void chan_closed(uv_handle_t *h)
{
    sesschan *ch = h->data;
    close(ch->fd);
    free(ch);
}

static void chan_close(sesschan *ch)
{
    if (ch->x && ch->x->chan == ch)
        ch->x->chan = NULL;
    ch->x = NULL;
    uv_close((uv_handle_t *)&ch->poll, chan_closed);
}

static void on_chan_readable(uv_poll_t *h, int status, int events)
{
    (void)events;
    sesschan *ch = h->data;
    if (status < 0) {
        chan_close(ch);
        return;
    }
    static char data[MSG_MAX];
    for (int round = 0; round < 16; round++) {
        union {
            struct cmsghdr align;
            char buf[CMSG_SPACE(FDS_MAX * sizeof(int))];
        } control;
        struct iovec iov = {.iov_base = data, .iov_len = sizeof data};
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                           .msg_controllen = sizeof control.buf};
        ssize_t n = recvmsg(ch->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n <= 0) { /* every copy of the sandbox's end is closed */
            chan_close(ch);
            return;
        }
        int fds[FDS_MAX * 2], nfds = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                continue;
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k && nfds < (int)(sizeof fds / sizeof fds[0]); i++)
                memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        }
        if ((m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || nfds > FDS_MAX) {
            for (int i = 0; i < nfds; i++)
                close(fds[i]);
            continue; /* too big: dropped */
        }
        handle_message(ch, data, (size_t)n, fds, nfds);
    }
}

int sesschan_create(server_t *srv, int *server_end, char *err, size_t errlen)
{
    (void)srv;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        snprintf(err, errlen, "cannot create the session channel: %s", strerror(errno));
        return -1;
    }
    /* The server only reads; the sandbox's end cannot send what it has
     * not got: shut the other direction. */
    shutdown(sv[0], SHUT_WR);
    fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
    *server_end = sv[0];
    return sv[1];
}

void sesschan_attach(server_t *srv, session_t *s, int server_end)
{
    sesschan *ch = xcalloc(1, sizeof *ch);
    ch->srv = srv;
    ch->x = sx(s);
    ch->session = s->id;
    ch->fd = server_end;
    uv_poll_init(srv->loop, &ch->poll, server_end);
    ch->poll.data = ch;
    uv_poll_start(&ch->poll, UV_READABLE, on_chan_readable);
    sx(s)->chan = ch;
}

/* End every request of session id (0: all). */
static void end_requests(server_t *srv, int id)
{
    link_t *l = srv->chan_reqs.next;
    while (l != &srv->chan_reqs) {
        chan_req *r = link_entry(l, chan_req, node);
        l = l->next;
        if (id && r->session != id)
            continue;
        if (r->approval)
            approval_withdraw(srv, r->approval); /* may free r */
        else if (r->running)
            launch_kill_tree(r->child.pid);
        else if (!r->closing)
            req_free(r);
    }
}

void sesschan_session_ended(server_t *srv, session_t *s)
{
    if (sx(s)->chan)
        chan_close(sx(s)->chan);
    end_requests(srv, s->id);
}

void sesschan_shutdown(server_t *srv)
{
    for (link_t *l = srv->sessions.next; l != &srv->sessions; l = l->next) {
        session_extra *x = link_entry(l, session_extra, node);
        if (x->chan)
            chan_close(x->chan);
    }
    end_requests(srv, 0);
}
