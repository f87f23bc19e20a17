/*
 * mountpoints.c - the namespace's mount points, read again only on change
 * (see mountpoints.h).
 */
#include "config.h"

#include "mountpoints.h"
#include "sbutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
    pthread_mutex_t lock;
    int fd;       /* /proc/self/mountinfo, kept open to be polled */
    pid_t pid;    /* the process and mount namespace it was opened in: */
    ino_t ns;     /* a fork or an unshare(CLONE_NEWNS) needs another */
    char *points; /* the last list read, as sb_mountpoints returns it */
    size_t len;
} memo = {PTHREAD_MUTEX_INITIALIZER, -1, 0, 0, NULL, 0};

/* "\040" and the like in a mountinfo field, decoded in place. */
static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r;) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 4;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

/* The fifth field of every line (the mount point), unescaped, packed. */
static char *parse(char *text, size_t *len)
{
    char *out = malloc(strlen(text) + 1);
    if (!out)
        return NULL;
    size_t n = 0;
    char *save_line = NULL;
    for (char *line = strtok_r(text, "\n", &save_line); line; line = strtok_r(NULL, "\n", &save_line)) {
        char *save = NULL;
        char *field = strtok_r(line, " ", &save);
        for (int i = 1; field && i < 5; i++)
            field = strtok_r(NULL, " ", &save);
        if (!field)
            continue;
        unescape(field);
        size_t l = strlen(field);
        memcpy(out + n, field, l + 1);
        n += l + 1;
    }
    *len = n;
    return out;
}

/* Whether the kept list may be used: the file is open and polls with no
 * change since the list was read. */
static bool unchanged(void)
{
    if (memo.fd < 0 || !memo.points)
        return false;
    struct pollfd p = {.fd = memo.fd, .events = POLLPRI};
    int r;
    while ((r = poll(&p, 1, 0)) < 0 && errno == EINTR)
        ;
    return r == 0 || (r == 1 && !(p.revents & (POLLPRI | POLLERR | POLLNVAL)));
}

/* The mount namespace this process is in now (its inode), 0 if unknown. */
static ino_t current_ns(void)
{
    struct stat st;
    return stat("/proc/self/ns/mnt", &st) == 0 ? st.st_ino : 0;
}

char *sb_mountpoints(size_t *len)
{
    pthread_mutex_lock(&memo.lock);
    ino_t ns = current_ns();
    if (memo.fd >= 0 && (memo.pid != getpid() || memo.ns != ns || ns == 0)) {
        /* Opened by the parent of this fork, or before an unshare: the
         * file lists another process's namespace. */
        close(memo.fd);
        memo.fd = -1;
    }
    if (!unchanged()) {
        free(memo.points);
        memo.points = NULL;
        if (memo.fd < 0) {
            memo.fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
            memo.pid = getpid();
            memo.ns = ns;
        }
        size_t n = 0;
        char *text = memo.fd >= 0 && lseek(memo.fd, 0, SEEK_SET) == 0 ? sb_read_fd(memo.fd, &n) : NULL;
        if (text)
            memo.points = parse(text, &memo.len);
        free(text);
        if (!memo.points && memo.fd >= 0) {
            close(memo.fd);
            memo.fd = -1;
        }
    }
    char *copy = NULL;
    if (memo.points && (copy = malloc(memo.len ? memo.len : 1)))
        memcpy(copy, memo.points, memo.len);
    *len = memo.points ? memo.len : 0;
    pthread_mutex_unlock(&memo.lock);
    return copy;
}
