/*
 * sesschan.c - see sesschan.h.  Transport only: messages and their fds
 * are taken off the channel and checked (sizes, that the reply fd is a
 * socket, at most a few open requests per session), the message decoded
 * by chanmsg.c; what they ask is escalation.c's.  A malformed message is
 * dropped (with a "failed" reply when it brought a reply socket); it never
 * ends the channel or the server.
 */
#include "config.h"

#include "server/sesschan.h"

#include "protocol/chanmsg.h"
#include "sandbox/netns.h"
#include "net/proxy.h"
#include "base/util.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define FDS_MAX 4
/* Requests one session may have open at once: code in a sandbox must not
 * bury the user in dialogs (or the server in descriptors). */
#define OPEN_MAX_PER_SESSION 8
/* The marks' door: connections open at once per session (more are closed
 * as they come), and the time one has to send its message. */
#define DOOR_CONNS_MAX 64
#define DOOR_READ_MS 10000

typedef struct door door;

/* The server's end of one channel: a session's own, or an escalated run's
 * (which may only hand over its proxy listeners). */
struct sesschan {
    server_t *srv;
    server_session *x; /* the session's own channel: cleared when it closes */
    int session;
    int fd;
    uv_poll_t poll;
    unsigned owner;      /* 0 for the session's own; its run's for an escalated run */
    bool listeners_only; /* an escalated run's: nothing but its listeners */
    bool proxy_mode;     /* its sandbox is in network mode proxy */
    bool got_listeners;  /* its init handed them over (once) */
};

/* The marks' door of a session: its listener, and the connections being
 * read.  It lasts as long as the session, whatever becomes of the channel
 * (a program may close fd 3 and still have children that mark). */
struct door {
    link_t node; /* in doors */
    server_t *srv;
    int session;
    int fd;
    uv_poll_t poll;
    link_t conns; /* door_conn.node */
    int n_conns;
};

static link_t doors = {&doors, &doors};

typedef struct door_conn {
    link_t node;
    door *d;
    int fd;
    uv_poll_t poll;
    uv_timer_t timer;
    char *buf;
    size_t len;
    int closing; /* handles still to close */
} door_conn;

static void send_failed(int fd, const char *message)
{
    json_t *m = json_pack("{s:s, s:s}", "state", "failed", "message", message);
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    if (text)
        (void)!send(fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT);
    free(text);
}

static void close_fds(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

/* fd is a TCP socket listening on 127.0.0.1:port (what a sandbox's init
 * makes for the proxy, and nothing else). */
static bool loopback_listener(int fd, uint16_t port)
{
    int v = 0;
    socklen_t len = sizeof v;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0 || !v)
        return false;
    len = sizeof v;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) < 0 || v != SOCK_STREAM)
        return false;
    struct sockaddr_in a;
    len = sizeof a;
    return getsockname(fd, (struct sockaddr *)&a, &len) == 0 && len == sizeof a && a.sin_family == AF_INET &&
           ntohs(a.sin_port) == port && ntohl(a.sin_addr.s_addr) == INADDR_LOOPBACK;
}

static void door_open(sesschan *ch, int fd);

/* Proxy mode: a sandbox's init hands over its three listeners once, before
 * its command starts; the server's proxy accepts the sandbox's connections
 * on the first two, the marks' door on the third (the session's own
 * sandbox only: an escalated run cannot mark).  Anything else (a second
 * time, a sandbox not in proxy mode, sockets that are not those listeners)
 * is dropped. */
static void take_listeners(sesschan *ch, session_t *s, int *fds, int nfds)
{
    server_t *srv = ch->srv;
    char err[256];
    if (!server_proxy(srv) || !ch->proxy_mode || ch->got_listeners || nfds != 3 ||
        !loopback_listener(fds[0], SB_PROXY_HTTP_PORT) || !loopback_listener(fds[1], SB_PROXY_SOCKS_PORT) ||
        !loopback_listener(fds[2], SB_MARK_PORT)) {
        close_fds(fds, nfds);
        return;
    }
    ch->got_listeners = true;
    if (ch->listeners_only || !ch->x)
        close(fds[2]);
    else
        door_open(ch, fds[2]);
    if (proxy_add_listener(server_proxy(srv), s->id, ch->owner, fds[0], PROXY_LISTEN_HTTP, err, sizeof err) < 0)
        server_log("session %d: the proxy cannot listen for it: %s", s->id, err);
    if (proxy_add_listener(server_proxy(srv), s->id, ch->owner, fds[1], PROXY_LISTEN_SOCKS5, err, sizeof err) < 0)
        server_log("session %d: the proxy cannot listen for it: %s", s->id, err);
}

/* Who judges what sessions ask (escalation.c), set when it starts. */
static const sesschan_handler *handler;

void sesschan_handle_with(const sesschan_handler *h)
{
    handler = h;
}

/* A request arrived: fds[0] is the reply socket, then stdio for escalate.
 * Its shape is checked by chanmsg.c; escalation.c judges what it asks. */
static void handle_message(sesschan *ch, const char *data, size_t len, int *fds, int nfds)
{
    server_t *srv = ch->srv;
    session_t *s = server_find(srv, ch->session);
    struct stat st;
    if (nfds < 1 || fstat(fds[0], &st) < 0 || !S_ISSOCK(st.st_mode) || !s || !handler) {
        close_fds(fds, nfds); /* nowhere to reply: dropped */
        return;
    }
    if (handler->open_count(srv, s->id) >= OPEN_MAX_PER_SESSION) {
        send_failed(fds[0], "too many requests from this session are open; wait for them to be answered");
        close_fds(fds, nfds);
        return;
    }
    chan_msg m;
    char err[512];
    if (chan_msg_parse(data, len, &m, err, sizeof err) < 0) {
        send_failed(fds[0], err);
        close_fds(fds, nfds);
        return;
    }
    if (m.verb == CHAN_LISTENERS) {
        take_listeners(ch, s, fds, nfds);
        chan_msg_free(&m);
        return;
    }
    if (ch->listeners_only) {
        send_failed(fds[0], "a command corral escalate started cannot ask for more: run it from the session itself");
        chan_msg_free(&m);
        close_fds(fds, nfds);
        return;
    }
    int stdio[3] = {-1, -1, -1};
    for (int i = 1; i < nfds; i++)
        stdio[i - 1] = fds[i];
    handler->request(srv, s, &m, fds[0], stdio);
    chan_msg_free(&m);
}

/* ---- the channel ------------------------------------------------------------ */

static void chan_closed(uv_handle_t *h)
{
    sesschan *ch = h->data;
    close(ch->fd);
    free(ch);
}

/* ---- the marks' door ------------------------------------------------------ */

static void door_conn_handle_closed(uv_handle_t *h)
{
    door_conn *k = h->data;
    if (--k->closing > 0)
        return;
    if (k->fd >= 0)
        close(k->fd);
    free(k->buf);
    free(k);
}

/* Done with k: its handles closed, its fd too unless handed on (-1). */
static void door_conn_close(door_conn *k)
{
    link_del(&k->node);
    k->d->n_conns--;
    k->closing = 2;
    uv_poll_stop(&k->poll);
    uv_timer_stop(&k->timer);
    uv_close((uv_handle_t *)&k->poll, door_conn_handle_closed);
    uv_close((uv_handle_t *)&k->timer, door_conn_handle_closed);
}

static void door_conn_timeout(uv_timer_t *t)
{
    door_conn_close(t->data);
}

/* One message through d, its reply on fd (taken): a mark, or a refusal. */
static void door_message(door *d, const char *data, size_t len, int fd)
{
    server_t *srv = d->srv;
    session_t *s = server_find(srv, d->session);
    if (!s || !handler) {
        close(fd);
        return;
    }
    chan_msg m;
    char err[512];
    if (chan_msg_parse(data, len, &m, err, sizeof err) < 0) {
        send_failed(fd, err);
        close(fd);
        return;
    }
    if (m.verb != CHAN_MARK) {
        send_failed(fd, "only marks come through this door; the rest needs the session channel (fd 3)");
        chan_msg_free(&m);
        close(fd);
        return;
    }
    int stdio[3] = {-1, -1, -1};
    handler->request(srv, s, &m, fd, stdio);
    chan_msg_free(&m);
}

/* Read k until its client shuts its side: the message, then the reply on
 * the same connection (the handler takes the fd). */
static void door_conn_readable(uv_poll_t *h, int status, int events)
{
    (void)events;
    door_conn *k = h->data;
    if (status < 0) {
        door_conn_close(k);
        return;
    }
    for (;;) {
        if (k->len == CHAN_MSG_MAX) {
            send_failed(k->fd, "malformed request: more than the channel's size");
            door_conn_close(k);
            return;
        }
        ssize_t n = recv(k->fd, k->buf + k->len, CHAN_MSG_MAX - k->len, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0) {
            door_conn_close(k);
            return;
        }
        if (n > 0) {
            k->len += (size_t)n;
            continue;
        }
        break; /* the message is whole */
    }
    door *d = k->d;
    int fd = k->fd;
    k->fd = -1;
    char *data = k->buf;
    size_t len = k->len;
    k->buf = NULL;
    door_conn_close(k);
    door_message(d, data, len, fd);
    free(data);
}

static void door_accept(uv_poll_t *h, int status, int events)
{
    (void)events;
    door *d = h->data;
    if (status < 0)
        return;
    for (int round = 0; round < 16; round++) {
        int fd = accept4(d->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        if (d->n_conns >= DOOR_CONNS_MAX) {
            close(fd);
            continue;
        }
        door_conn *k = xcalloc(1, sizeof *k);
        k->d = d;
        k->fd = fd;
        k->buf = xmalloc(CHAN_MSG_MAX);
        link_add(&d->conns, &k->node);
        d->n_conns++;
        uv_poll_init(d->srv->loop, &k->poll, fd);
        k->poll.data = k;
        uv_poll_start(&k->poll, UV_READABLE | UV_DISCONNECT, door_conn_readable);
        uv_timer_init(d->srv->loop, &k->timer);
        k->timer.data = k;
        uv_timer_start(&k->timer, door_conn_timeout, DOOR_READ_MS, 0);
    }
}

static void door_open(sesschan *ch, int fd)
{
    door *d = xcalloc(1, sizeof *d);
    d->srv = ch->srv;
    d->session = ch->session;
    d->fd = fd;
    link_init(&d->conns);
    link_add(&doors, &d->node);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    uv_poll_init(d->srv->loop, &d->poll, fd);
    d->poll.data = d;
    uv_poll_start(&d->poll, UV_READABLE, door_accept);
}

static void door_closed(uv_handle_t *h)
{
    door *d = h->data;
    close(d->fd);
    free(d);
}

static void door_close(door *d)
{
    link_del(&d->node);
    while (d->conns.next != &d->conns)
        door_conn_close(link_entry(d->conns.next, door_conn, node));
    uv_poll_stop(&d->poll);
    uv_close((uv_handle_t *)&d->poll, door_closed);
}

/* The doors of session id (-1: every one). */
static void doors_close(int id)
{
    for (link_t *l = doors.next; l != &doors;) {
        door *d = link_entry(l, door, node);
        l = l->next;
        if (id < 0 || d->session == id)
            door_close(d);
    }
}

static void chan_close(sesschan *ch)
{
    if (ch->x && ch->x->chan == ch)
        ch->x->chan = NULL;
    ch->x = NULL;
    if (ch->listeners_only && ch->got_listeners && server_proxy(ch->srv))
        proxy_close_listeners(server_proxy(ch->srv), ch->session, ch->owner);
    uv_close((uv_handle_t *)&ch->poll, chan_closed);
}

/* The other end hung up or failed.  A run's channel is its ticket's to
 * close (sesschan_run_ended): it only stops listening. */
static void chan_hung_up(sesschan *ch)
{
    if (ch->listeners_only)
        uv_poll_stop(&ch->poll);
    else
        chan_close(ch);
}

static void on_chan_readable(uv_poll_t *h, int status, int events)
{
    (void)events;
    sesschan *ch = h->data;
    if (status < 0) {
        chan_hung_up(ch);
        return;
    }
    static char data[CHAN_MSG_MAX];
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
        if (n == 0) {
            /* On a SEQPACKET socket a zero-length message reads the same
             * as the end: only a hang-up ends the channel, or any
             * process in the sandbox could close it with an empty send. */
            struct pollfd p = {.fd = ch->fd, .events = POLLIN | POLLRDHUP};
            if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLRDHUP))) {
                chan_hung_up(ch);
                return;
            }
            continue;
        }
        if (n < 0) {
            chan_hung_up(ch);
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

static sesschan *chan_start(server_t *srv, session_t *s, int server_end, bool proxy_mode)
{
    sesschan *ch = xcalloc(1, sizeof *ch);
    ch->srv = srv;
    ch->session = s->id;
    ch->fd = server_end;
    ch->proxy_mode = proxy_mode;
    uv_poll_init(srv->loop, &ch->poll, server_end);
    ch->poll.data = ch;
    uv_poll_start(&ch->poll, UV_READABLE, on_chan_readable);
    return ch;
}

void sesschan_attach(server_t *srv, session_t *s, int server_end, bool proxy_mode)
{
    sesschan *ch = chan_start(srv, s, server_end, proxy_mode);
    ch->x = srv_session(s);
    srv_session(s)->chan = ch;
}

sesschan *sesschan_attach_run(server_t *srv, session_t *s, int server_end, bool proxy_mode, unsigned owner)
{
    sesschan *ch = chan_start(srv, s, server_end, proxy_mode);
    ch->listeners_only = true;
    ch->owner = owner;
    return ch;
}

void sesschan_run_ended(sesschan *ch)
{
    if (ch)
        chan_close(ch);
}

static void session_ended(server_t *srv, session_t *s)
{
    (void)srv;
    if (srv_session(s)->chan)
        chan_close(srv_session(s)->chan);
    doors_close(s->id);
}

static void shutdown_channels(server_t *srv)
{
    for (link_t *l = srv->sessions.next; l != &srv->sessions; l = l->next) {
        server_session *x = link_entry(l, server_session, node);
        if (x->chan)
            chan_close(x->chan);
    }
    doors_close(-1);
}

const server_module sesschan_module = {
    .name = "sesschan",
    .shutdown = shutdown_channels,
    .session_finished = session_ended,
    .session_freed = session_ended,
};
