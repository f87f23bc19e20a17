/*
 * trust.c - see trust.h.
 */
#include "config.h"

#include "paths.h"
#include "trust.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

char *trust_file(void)
{
    char *dir = paths_config_dir();
    char *p = xasprintf("%s/trusted", dir);
    free(dir);
    return p;
}

char *trust_canonical(const char *dir, char *err, size_t errlen)
{
    char buf[PATH_MAX];
    if (!realpath(dir, buf)) {
        snprintf(err, errlen, "cannot trust %s: %s", dir, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot trust %s: not a directory (trust the workspace directory itself)", dir);
        return NULL;
    }
    return xstrdup(buf);
}

void trust_list_free(char **list)
{
    for (char **p = list; p && *p; p++)
        free(*p);
    free(list);
}

char **trust_read(const char *file, char *err, size_t errlen)
{
    size_t n = 0;
    char **list = xcalloc(1, sizeof *list);
    FILE *f = fopen(file, "re");
    if (!f) {
        if (errno == ENOENT)
            return list;
        snprintf(err, errlen, "cannot read the trusted workspaces %s: %s", file, strerror(errno));
        free(list);
        return NULL;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        /* Only absolute paths count: a stray relative line (a hand edit)
         * would otherwise trust whatever directory it happens to name. */
        if (line[0] != '/' || trust_listed(list, line))
            continue;
        list = xrealloc(list, (n + 2) * sizeof *list);
        list[n++] = xstrdup(line);
        list[n] = NULL;
    }
    free(line);
    fclose(f);
    return list;
}

bool trust_listed(char *const *list, const char *dir)
{
    for (char *const *p = list; p && *p; p++)
        if (strcmp(*p, dir) == 0)
            return true;
    return false;
}

/* Rewrite file with list, atomically: a reader sees the old list or the
 * new one, never half of one. */
static int write_list(const char *file, char *const *list, char *err, size_t errlen)
{
    char *tmp = xasprintf("%s.tmp.%d", file, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = -1;
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    buf_t b;
    buf_init(&b);
    for (char *const *p = list; *p; p++)
        buf_printf(&b, "%s\n", *p);
    int e = write_all(fd, b.data ? b.data : "", b.len);
    if (e == 0 && fsync(fd) < 0)
        e = -errno;
    if (close(fd) < 0 && e == 0)
        e = -errno;
    if (e == 0 && rename(tmp, file) < 0)
        e = -errno;
    if (e < 0) {
        snprintf(err, errlen, "cannot write %s: %s", file, strerror(-e));
        unlink(tmp);
    } else {
        rc = 0;
    }
    buf_free(&b);
    free(tmp);
    return rc;
}

/* Read, change and rewrite the list under an flock on a lock file beside
 * it (the list itself is replaced by rename, so it cannot hold the lock). */
static int update(const char *file, const char *dir, bool add, bool *changed, char *err, size_t errlen)
{
    *changed = false;
    char *parent = xstrdup(file);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent)
        *slash = '\0';
    int e = mkdir_p(parent, 0700);
    free(parent);
    if (e < 0) {
        snprintf(err, errlen, "cannot create the directory of %s: %s", file, strerror(-e));
        return -1;
    }
    char *lock = xasprintf("%s.lock", file);
    int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lfd < 0 || flock(lfd, LOCK_EX) < 0) {
        snprintf(err, errlen, "cannot lock %s: %s", lock, strerror(errno));
        if (lfd >= 0)
            close(lfd);
        free(lock);
        return -1;
    }
    free(lock);
    int rc = -1;
    char **list = trust_read(file, err, errlen);
    if (list) {
        size_t n = 0;
        while (list[n])
            n++;
        bool there = trust_listed(list, dir);
        if (add && !there) {
            list = xrealloc(list, (n + 2) * sizeof *list);
            list[n++] = xstrdup(dir);
            list[n] = NULL;
            *changed = true;
        } else if (!add && there) {
            for (size_t i = 0; i < n; i++) {
                if (strcmp(list[i], dir) == 0) {
                    free(list[i]);
                    memmove(&list[i], &list[i + 1], (n - i) * sizeof *list);
                    break;
                }
            }
            *changed = true;
        }
        rc = *changed ? write_list(file, list, err, errlen) : 0;
        trust_list_free(list);
    }
    close(lfd);
    return rc;
}

int trust_add(const char *file, const char *dir, bool *changed, char *err, size_t errlen)
{
    return update(file, dir, true, changed, err, errlen);
}

int trust_remove(const char *file, const char *dir, bool *changed, char *err, size_t errlen)
{
    return update(file, dir, false, changed, err, errlen);
}

bool trust_is_trusted(const char *dir)
{
    char err[512];
    char *canon = trust_canonical(dir, err, sizeof err);
    if (!canon)
        return false;
    char *file = trust_file();
    char **list = trust_read(file, err, sizeof err);
    bool yes = trust_listed(list, canon);
    trust_list_free(list);
    free(file);
    free(canon);
    return yes;
}
