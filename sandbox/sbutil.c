/*
 * sbutil.c - helpers for the sandbox modules.
 */
#include "config.h"

#include "sbutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void oom(void)
{
    fputs("corral: out of memory\n", stderr);
    abort();
}

void *sb_alloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *sb_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom();
    return q;
}

char *sb_strdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        oom();
    return d;
}

char *sb_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        oom();
    return s;
}

void sb_list_push(char ***list, size_t *n, const char *s)
{
    *list = sb_realloc(*list, (*n + 2) * sizeof **list);
    (*list)[(*n)++] = sb_strdup(s);
    (*list)[*n] = NULL;
}

void sb_list_free(char **list, size_t n)
{
    for (size_t i = 0; list && i < n; i++)
        free(list[i]);
    free(list);
}

bool sb_path_under(const char *path, const char *root)
{
    size_t n = strlen(root);
    if (strcmp(root, "/") == 0)
        return path[0] == '/';
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int sb_path_depth(const char *path)
{
    int d = 0;
    for (const char *p = path; *p; p++)
        if (*p == '/' && p[1] != '\0')
            d++;
    return d;
}

char *sb_path_join(const char *dir, const char *rel)
{
    if (rel[0] == '/')
        return sb_strdup(rel);
    size_t n = strlen(dir);
    return sb_printf("%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", rel);
}

void sb_format_size(unsigned long long bytes, char *out, size_t outlen)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    unsigned long long v = bytes;
    while (u < 4 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    snprintf(out, outlen, "%llu %s", v, units[u]);
}

static long long settle_ns = 2ll * 1000000000;

void sb_settle_ns(long long ns)
{
    settle_ns = ns;
}

bool sb_time_settled(struct timespec changed)
{
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) < 0)
        return false;
    long long age = (long long)(now.tv_sec - changed.tv_sec) * 1000000000 + (now.tv_nsec - changed.tv_nsec);
    return age >= settle_ns;
}

bool sb_times_settled(const struct stat *st)
{
    return sb_time_settled(st->st_ctim);
}

int sb_parent_pid(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* The command name may hold ')' and spaces: the fields after it are
     * read from the last ')'. */
    char *p = strrchr(buf, ')');
    char state;
    int ppid;
    if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2)
        return -1;
    return ppid;
}

int sb_read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = EIO;
            return -1;
        }
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

int sb_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

void sb_sigpipe_hold(sb_sigpipe_guard *g)
{
    sigset_t pipe_only, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &g->old);
    g->was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
}

void sb_sigpipe_release(const sb_sigpipe_guard *g)
{
    /* A SIGPIPE raised while held is taken back; one that was pending
     * before stays the caller's, as it was. */
    sigset_t pipe_only, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    int e = errno;
    if (!g->was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
    errno = e;
}

char *sb_read_fd(int fd, size_t *len)
{
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf)
            return NULL;
        if (cap - n < 2) {
            char *b = realloc(buf, cap *= 2);
            if (!b) {
                free(buf);
                return NULL;
            }
            buf = b;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}
