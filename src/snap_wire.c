/*
 * snap_wire.c - see snap_wire.h.
 */
#include "config.h"

#include "snap_wire.h"

#include <errno.h>
#include <poll.h>
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
    int rc = write_all(fd, o->b.data, o->b.len);
    buf_reset(&o->b);
    return rc;
}

void sw_out_free(snap_wire_out *o)
{
    buf_free(&o->b);
}

/* Read exactly len bytes before the deadline (monotonic ms; 0: none).
 * 1, 0 on a clean end before the first byte, or -errno. */
static int read_full(int fd, void *buf, size_t len, uint64_t deadline, bool first)
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
        ssize_t n = read(fd, (char *)buf + got, len - got);
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
    uint64_t deadline = timeout_ms >= 0 ? now_ms() + (uint64_t)timeout_ms + (timeout_ms == 0) : 0;
    unsigned char head[5];
    int r = read_full(fd, head, sizeof head, deadline, true);
    if (r <= 0)
        return r;
    uint32_t len;
    memcpy(&len, head, sizeof len);
    if (len < 1 || len > SNAP_WIRE_FRAME_MAX)
        return -EPROTO;
    in->type = head[4];
    in->len = len - 1;
    in->data = xmalloc(in->len ? in->len : 1);
    if (in->len && (r = read_full(fd, in->data, in->len, deadline, false)) <= 0) {
        sw_in_free(in);
        return r == 0 ? -EPROTO : r;
    }
    return 1;
}

void sw_in_free(snap_wire_in *in)
{
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
