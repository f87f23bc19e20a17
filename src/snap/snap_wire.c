/*
 * snap_wire.c - see snap_wire.h.
 */
#include "config.h"

#include "snap/snap_wire.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void sw_begin(snap_wire_out *o, int type)
{
    buf_reset(&o->b);
    unsigned char head[5] = {0, 0, 0, 0, (unsigned char)type};
    buf_append(&o->b, head, sizeof head);
}

void sw_u8(snap_wire_out *o, uint8_t v)
{
    buf_append(&o->b, &v, 1);
}

void sw_u32(snap_wire_out *o, uint32_t v)
{
    buf_append(&o->b, &v, sizeof v);
}

void sw_u64(snap_wire_out *o, uint64_t v)
{
    buf_append(&o->b, &v, sizeof v);
}

void sw_bytes(snap_wire_out *o, const void *data, size_t len)
{
    sw_u32(o, (uint32_t)len);
    if (len)
        buf_append(&o->b, data, len);
}

void sw_str(snap_wire_out *o, const char *s)
{
    sw_bytes(o, s, strlen(s));
}

void sw_stat(snap_wire_out *o, const snap_wire_stat *st)
{
    sw_u32(o, st->mode);
    sw_u64(o, st->size);
    sw_u64(o, (uint64_t)st->mtime_ns);
    sw_u64(o, (uint64_t)st->ctime_ns);
    sw_u64(o, st->ino);
    sw_u64(o, st->dev);
    sw_u32(o, st->uid);
    sw_u32(o, st->gid);
}

int sw_send(int fd, snap_wire_out *o)
{
    uint32_t len = (uint32_t)(o->b.len - 4);
    memcpy(o->b.data, &len, sizeof len);
    int rc = send_all(fd, o->b.data, o->b.len);
    buf_reset(&o->b);
    return rc;
}

int sw_send_fds(int fd, snap_wire_out *o, const int *fds, int n)
{
    uint32_t len = (uint32_t)(o->b.len - 4);
    memcpy(o->b.data, &len, sizeof len);
    union {
        char buf[CMSG_SPACE(sizeof(int) * SNAP_WIRE_MAX_FDS)];
        struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec iov = {.iov_base = o->b.data, .iov_len = o->b.len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                       .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
    ssize_t sent;
    while ((sent = sendmsg(fd, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    int rc = sent < 0 ? -errno : 0;
    /* The descriptors went with the first byte; the rest is plain. */
    if (rc == 0 && (size_t)sent < o->b.len)
        rc = send_all(fd, o->b.data + sent, o->b.len - (size_t)sent);
    buf_reset(&o->b);
    return rc;
}

void sw_queue(snap_wire_out *o, buf_t *pending)
{
    uint32_t len = (uint32_t)(o->b.len - 4);
    memcpy(o->b.data, &len, sizeof len);
    buf_append(pending, o->b.data, o->b.len);
    buf_reset(&o->b);
}

int sw_flush(int fd, buf_t *pending)
{
    int rc = pending->len ? send_all(fd, pending->data, pending->len) : 0;
    buf_reset(pending);
    return rc;
}

void sw_out_free(snap_wire_out *o)
{
    buf_free(&o->b);
}

/* Receiving: bytes are read in large pieces into the inbox, and frames are
 * cut from it (one system call serves many small frames).  Descriptors
 * that come along wait in a queue in the order they came, and a frame of
 * type SW_PACK takes the two oldest. */
#define INBOX_READ (256u << 10)

void sw_inbox_init(snap_wire_inbox *ib, int fd)
{
    memset(ib, 0, sizeof *ib);
    ib->fd = fd;
}

void sw_inbox_free(snap_wire_inbox *ib)
{
    for (int i = 0; i < ib->n_fds; i++)
        close(ib->fds[i]);
    free(ib->buf);
    memset(ib, 0, sizeof *ib);
    ib->fd = -1;
}

static void queue_fds(snap_wire_inbox *ib, struct msghdr *m)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (ib->n_fds < (int)(sizeof ib->fds / sizeof ib->fds[0]))
                ib->fds[ib->n_fds++] = fd;
            else
                close(fd); /* more than any frame takes: a peer up to no good */
        }
    }
}

/* Make at least want bytes wait in the inbox before the deadline
 * (monotonic ms; 0: none).  1, 0 when the peer closed before any byte of
 * this frame, or -errno. */
static int fill(snap_wire_inbox *ib, size_t want, uint64_t deadline)
{
    while (ib->end - ib->start < want) {
        if (ib->start > 0 && ib->start == ib->end)
            ib->start = ib->end = 0;
        if (ib->cap - ib->end < INBOX_READ && ib->start > 0) {
            memmove(ib->buf, ib->buf + ib->start, ib->end - ib->start);
            ib->end -= ib->start;
            ib->start = 0;
        }
        size_t need = want > INBOX_READ ? want : INBOX_READ;
        if (ib->cap - ib->end < need) {
            ib->cap = ib->end + need;
            ib->buf = xrealloc(ib->buf, ib->cap);
        }
        if (deadline) {
            uint64_t now = now_ms();
            if (now >= deadline)
                return -ETIMEDOUT;
            struct pollfd p = {.fd = ib->fd, .events = POLLIN};
            int r = poll(&p, 1, (int)(deadline - now));
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                return -errno;
            if (r == 0)
                return -ETIMEDOUT;
        }
        union {
            char buf[CMSG_SPACE(sizeof(int) * 4)];
            struct cmsghdr align;
        } ctl;
        struct iovec iov = {.iov_base = ib->buf + ib->end, .iov_len = ib->cap - ib->end};
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
        ssize_t n = recvmsg(ib->fd, &m, MSG_CMSG_CLOEXEC);
        if (n >= 0 && m.msg_controllen > 0)
            queue_fds(ib, &m);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return ib->end == ib->start ? 0 : -EPROTO;
        ib->end += (size_t)n;
    }
    return 1;
}

int sw_recv(snap_wire_inbox *ib, snap_wire_in *in, int timeout_ms)
{
    memset(in, 0, sizeof *in);
    uint64_t deadline = timeout_ms >= 0 ? now_ms() + (uint64_t)timeout_ms + (timeout_ms == 0) : 0;
    int r = fill(ib, 5, deadline);
    if (r <= 0)
        return r;
    uint32_t len;
    memcpy(&len, ib->buf + ib->start, sizeof len);
    if (len < 1 || len > SNAP_WIRE_FRAME_MAX)
        return -EPROTO;
    if ((r = fill(ib, 4 + (size_t)len, deadline)) <= 0)
        return r == 0 ? -EPROTO : r;
    in->type = ib->buf[ib->start + 4];
    in->len = len - 1;
    in->data = xmalloc(in->len ? in->len : 1);
    if (in->len)
        memcpy(in->data, ib->buf + ib->start + 5, in->len);
    ib->start += 4 + (size_t)len;
    if (in->type == SW_PACK) {
        for (int i = 0; i < SNAP_WIRE_MAX_FDS && ib->n_fds > 0; i++) {
            in->fds[in->n_fds++] = ib->fds[0];
            memmove(ib->fds, ib->fds + 1, (size_t)(ib->n_fds - 1) * sizeof ib->fds[0]);
            ib->n_fds--;
        }
    }
    return 1;
}

int sw_take_fd(snap_wire_inbox *ib)
{
    if (ib->n_fds == 0)
        return -1;
    int fd = ib->fds[0];
    memmove(ib->fds, ib->fds + 1, (size_t)(ib->n_fds - 1) * sizeof ib->fds[0]);
    ib->n_fds--;
    return fd;
}

void sw_in_free(snap_wire_in *in)
{
    for (int i = 0; i < in->n_fds; i++)
        if (in->fds[i] >= 0)
            close(in->fds[i]);
    free(in->data);
    memset(in, 0, sizeof *in);
}

static bool take(snap_wire_in *in, void *out, size_t n)
{
    if (in->bad || in->len - in->pos < n) {
        in->bad = true;
        return false;
    }
    memcpy(out, in->data + in->pos, n);
    in->pos += n;
    return true;
}

bool sw_get_u8(snap_wire_in *in, uint8_t *v)
{
    return take(in, v, sizeof *v);
}

bool sw_get_u32(snap_wire_in *in, uint32_t *v)
{
    return take(in, v, sizeof *v);
}

bool sw_get_u64(snap_wire_in *in, uint64_t *v)
{
    return take(in, v, sizeof *v);
}

bool sw_get_bytes(snap_wire_in *in, const unsigned char **data, size_t *len)
{
    uint32_t n;
    if (!sw_get_u32(in, &n))
        return false;
    if (in->len - in->pos < n) {
        in->bad = true;
        return false;
    }
    *data = in->data + in->pos;
    *len = n;
    in->pos += n;
    return true;
}

bool sw_get_str(snap_wire_in *in, char **out, size_t max)
{
    const unsigned char *d;
    size_t n;
    if (!sw_get_bytes(in, &d, &n))
        return false;
    if (n > max || memchr(d, '\0', n)) {
        in->bad = true;
        return false;
    }
    *out = xstrndup((const char *)d, n);
    return true;
}

bool sw_get_stat(snap_wire_in *in, snap_wire_stat *st)
{
    uint64_t m = 0, c = 0;
    bool ok = sw_get_u32(in, &st->mode) && sw_get_u64(in, &st->size) && sw_get_u64(in, &m) && sw_get_u64(in, &c) &&
              sw_get_u64(in, &st->ino) && sw_get_u64(in, &st->dev) && sw_get_u32(in, &st->uid) &&
              sw_get_u32(in, &st->gid);
    st->mtime_ns = (int64_t)m;
    st->ctime_ns = (int64_t)c;
    return ok;
}

bool sw_done(const snap_wire_in *in)
{
    return !in->bad && in->pos == in->len;
}
