/*
 * snap_wire.c - see snap_wire.h.
 */
#include "config.h"

#include "snap_wire.h"

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

/* send() without SIGPIPE: the peer going away is an error to report,
 * not a signal that ends the process. */
static int send_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        p += n;
        len -= (size_t)n;
    }
    return 0;
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

void sw_out_free(snap_wire_out *o)
{
    buf_free(&o->b);
}

/* Descriptors that came with a read go to in (beyond its room: closed). */
static void take_fds(snap_wire_in *in, struct msghdr *m)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (in->n_fds < SNAP_WIRE_MAX_FDS)
                in->fds[in->n_fds++] = fd;
            else
                close(fd);
        }
    }
}

/* Read exactly len bytes before the deadline (monotonic ms; 0: none),
 * keeping descriptors passed along.  1, 0 on a clean end before the first
 * byte, or -errno. */
static int read_full(int fd, void *buf, size_t len, uint64_t deadline, bool first, snap_wire_in *in)
{
    size_t got = 0;
    while (got < len) {
        if (deadline) {
            uint64_t now = now_ms();
            if (now >= deadline)
                return -ETIMEDOUT;
            struct pollfd p = {.fd = fd, .events = POLLIN};
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
        struct iovec iov = {.iov_base = (char *)buf + got, .iov_len = len - got};
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
        ssize_t n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
        if (n >= 0 && m.msg_controllen > 0)
            take_fds(in, &m);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return first && got == 0 ? 0 : -EPROTO;
        got += (size_t)n;
    }
    return 1;
}

int sw_recv(int fd, snap_wire_in *in, int timeout_ms)
{
    memset(in, 0, sizeof *in);
    in->n_fds = 0;
    uint64_t deadline = timeout_ms >= 0 ? now_ms() + (uint64_t)timeout_ms + (timeout_ms == 0) : 0;
    unsigned char head[5];
    int r = read_full(fd, head, sizeof head, deadline, true, in);
    if (r <= 0) {
        sw_in_free(in);
        return r;
    }
    uint32_t len;
    memcpy(&len, head, sizeof len);
    if (len < 1 || len > SNAP_WIRE_FRAME_MAX) {
        sw_in_free(in);
        return -EPROTO;
    }
    in->type = head[4];
    in->len = len - 1;
    in->data = xmalloc(in->len ? in->len : 1);
    if (in->len && (r = read_full(fd, in->data, in->len, deadline, false, in)) <= 0) {
        sw_in_free(in);
        return r == 0 ? -EPROTO : r;
    }
    return 1;
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
