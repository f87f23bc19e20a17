/*
 * util.c - allocation, byte buffers, clocks, random numbers, small file and
 * text helpers.  Allocation failure aborts with a message: a supervisor that
 * carries on after losing memory could drop a log line or a decision.
 */
#include "config.h"

#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void out_of_memory(size_t n)
{
    fprintf(stderr, "corral: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        out_of_memory(count * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n);
    return q;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char **strv_copy(char *const *v)
{
    if (!v)
        return NULL;
    size_t n = 0;
    while (v[n])
        n++;
    char **out = xcalloc(n + 1, sizeof *out);
    for (size_t i = 0; i < n; i++)
        out[i] = xstrdup(v[i]);
    return out;
}

void strv_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

char *xasprintf(const char *fmt, ...)
{
    buf_t b;
    buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        n = 0;
    buf_reserve(&b, (size_t)n + 1);
    vsnprintf(b.data, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b.len = (size_t)n;
    return buf_steal(&b);
}

void buf_init(buf_t *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void buf_free(buf_t *b)
{
    free(b->data);
    buf_init(b);
}

void buf_reserve(buf_t *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
    b->data[b->len] = '\0'; /* an empty buffer is an empty string too */
}

void buf_append(buf_t *b, const void *data, size_t len)
{
    buf_reserve(b, len);
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void buf_puts(buf_t *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

void buf_putc(buf_t *b, char c)
{
    buf_append(b, &c, 1);
}

void buf_printf(buf_t *b, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n > 0) {
        buf_reserve(b, (size_t)n);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        b->len += (size_t)n;
    }
    va_end(ap);
}

void buf_consume(buf_t *b, size_t n)
{
    if (n >= b->len) {
        buf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

void buf_reset(buf_t *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

char *buf_steal(buf_t *b)
{
    char *p = b->data ? b->data : xstrdup("");
    buf_init(b);
    return p;
}

uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double wall_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void iso_time(char out[32], double wall)
{
    time_t secs = (time_t)wall;
    int ms = (int)((wall - (double)secs) * 1000.0);
    if (ms < 0)
        ms = 0;
    if (ms > 999)
        ms = 999;
    struct tm tm;
    gmtime_r(&secs, &tm);
    snprintf(out, 32, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (tm.tm_year + 1900) % 10000,
             (tm.tm_mon + 1) % 100, tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100,
             tm.tm_sec % 100, ms % 1000);
}

void random_bytes(void *out, size_t n)
{
    unsigned char *p = out;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            /* getrandom cannot fail on Linux >= 3.17 once the pool is
             * initialised; if it does, fall back to the clock so ids still
             * differ (they are not secrets). */
            uint64_t t = (uint64_t)(now_sec() * 1e9);
            for (size_t i = 0; i < n; i++)
                p[i] = (unsigned char)(t >> ((i % 8) * 8)) ^ (unsigned char)i;
            return;
        }
        p += got;
        n -= (size_t)got;
    }
}

uint32_t random_range(uint32_t lo, uint32_t hi)
{
    uint32_t span = hi - lo;
    if (span == 0)
        return lo;
    /* Reject the top slice so every value is equally likely. */
    uint32_t limit = UINT32_MAX - UINT32_MAX % span;
    uint32_t r;
    do
        random_bytes(&r, sizeof r);
    while (r >= limit);
    return lo + r % span;
}

int mkdir_p(const char *path, unsigned mode)
{
    /* Usually it is all there already: one call, not one per component.
     * There must be a directory (or a link to one) then: a file of that
     * name is an error here, where it would be a puzzling one later. */
    struct stat sb;
    if (mkdir(path, mode) == 0)
        return 0;
    if (errno == EEXIST)
        return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) ? 0 : -ENOTDIR;
    if (errno != ENOENT)
        return -errno;
    char *p = xstrdup(path);
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char saved = *s;
            *s = '\0';
            if (mkdir(p, mode) < 0 && errno != EEXIST) {
                rc = -errno;
                break;
            }
            *s = saved;
            if (saved == '\0')
                break;
        }
    }
    free(p);
    return rc;
}

/* write(2), or send(2) without SIGPIPE, until all of buf is out. */
static int put_all(int fd, const void *buf, size_t len, bool socket)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = socket ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int send_all(int fd, const void *buf, size_t len)
{
    return put_all(fd, buf, len, true);
}

int write_all(int fd, const void *buf, size_t len)
{
    return put_all(fd, buf, len, false);
}

int read_all(int fd, size_t max, buf_t *out)
{
    size_t start = out->len;
    for (;;) {
        size_t room = max - (out->len - start); /* one byte more, to see a file past max */
        size_t want = room < 65536 ? room + 1 : 65536;
        buf_reserve(out, want + 1);
        ssize_t n = read(fd, out->data + out->len, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            out->data[out->len] = '\0';
            return -errno;
        }
        if (n == 0) {
            out->data[out->len] = '\0';
            return 0;
        }
        out->len += (size_t)n;
        if (out->len - start > max) {
            out->len = start + max;
            out->data[out->len] = '\0';
            return -EFBIG;
        }
    }
}

void format_bytes(double n, bool compact, char *out, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (n >= 1024 && u < 4) {
        n /= 1024;
        u++;
    }
    if (compact)
        snprintf(out, len, u ? "%.1f%c" : "%.0f%c", n, units[u][0]);
    else
        snprintf(out, len, u ? "%.1f %s" : "%.0f %s", n, units[u]);
}

char *sanitize_text(const char *s, size_t len, size_t max)
{
    buf_t b;
    buf_init(&b);
    buf_reserve(&b, len < max ? len : max);
    size_t i = 0;
    while (i < len) {
        int32_t cp;
        size_t n = utf8_decode(s + i, len - i, &cp);
        /* One '?' for each invalid subpart, each C0, DEL and C1 control. */
        bool bad = cp < 0 || cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
        if (b.len + (bad ? 1 : n) > max)
            break;
        if (bad)
            buf_putc(&b, '?');
        else
            buf_append(&b, s + i, n);
        i += n;
    }
    return buf_steal(&b);
}

int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
