/*
 * sessfiles.c - see sessfiles.h.
 */
#include "config.h"

#include "record/sessfiles.h"

#include "base/paths.h"
#include "record/sessdir.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What sessfiles_glance reads of a file's end: a session's end is its last
 * few events, which are short. */
#define GLANCE_TAIL (64 * 1024)
/* And of its start: the created event (a long command line at most). */
#define GLANCE_HEAD (64 * 1024)

bool sessfiles_name_ok(const char *s)
{
    return sessdir_name_ok(s);
}

void sessfiles_for(const char *arg, sessfiles *out)
{
    memset(out, 0, sizeof *out);
    out->state = paths_state_dir();
    struct stat st;
    if (!strchr(arg, '/')) {
        out->by_name = true;
        out->dir = xasprintf("%s/sessions/%s", out->state, arg);
        out->events = xasprintf("%s/events.jsonl", out->dir);
        out->approvals = xasprintf("%s/approvals.jsonl", out->state);
    } else if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        /* A session's directory, wherever it is (an export unpacked, say). */
        out->dir = xstrdup(arg);
        out->events = xasprintf("%s/events.jsonl", arg);
        out->approvals = xasprintf("%s/approvals.jsonl", arg);
    } else {
        /* Its events.jsonl: the rest is beside it. */
        const char *slash = strrchr(arg, '/');
        out->dir = xasprintf("%.*s", (int)(slash - arg), arg);
        out->events = xstrdup(arg);
        out->approvals = xasprintf("%s/approvals.jsonl", out->dir);
    }
    out->cast = xasprintf("%s/output.cast", out->dir);
}

void sessfiles_free(sessfiles *f)
{
    free(f->state);
    free(f->dir);
    free(f->events);
    free(f->approvals);
    free(f->cast);
    memset(f, 0, sizeof *f);
}

static int newest_first(const void *a, const void *b)
{
    const sessfiles_rec *x = a, *y = b;
    if (x->mtime != y->mtime)
        return x->mtime > y->mtime ? -1 : 1;
    return strcmp(x->name, y->name);
}

int sessfiles_list(double since, sessfiles_rec **out, size_t *n, char **root_out, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    char *root = sessdir_root();
    if (root_out)
        *root_out = root;
    DIR *d = opendir(root);
    if (!d) {
        int e = errno;
        if (!root_out)
            free(root);
        if (e == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot read %s: %s", root_out ? *root_out : "the sessions' directory", strerror(e));
        return -1;
    }
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!sessfiles_name_ok(de->d_name) || strlen(de->d_name) >= sizeof (*out)->name)
            continue;
        char *events = xasprintf("%s/%s/events.jsonl", root, de->d_name);
        struct stat st;
        if (stat(events, &st) == 0 && S_ISREG(st.st_mode)) {
            double mtime = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
            if (since <= 0 || mtime >= since) {
                if (*n == cap) {
                    cap = cap ? cap * 2 : 16;
                    *out = xrealloc(*out, cap * sizeof **out);
                }
                snprintf((*out)[*n].name, sizeof (*out)[*n].name, "%s", de->d_name);
                (*out)[(*n)++].mtime = mtime;
            }
        }
        free(events);
    }
    closedir(d);
    if (*n > 1)
        qsort(*out, *n, sizeof **out, newest_first);
    if (!root_out)
        free(root);
    return 0;
}

/* Up to len bytes at offset off of fd into b; false on a read error. */
static bool read_at(int fd, off_t off, size_t len, buf_t *b)
{
    buf_reserve(b, len + 1);
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, b->data + b->len + got, len - got, off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return false;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    b->len += got;
    b->data[b->len] = '\0';
    return true;
}

int sessfiles_glance(const char *events, timeline_t *tl, char *err, size_t errlen)
{
    memset(tl, 0, sizeof *tl);
    int fd = open(events, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int e = fd < 0 ? errno : S_ISREG(st.st_mode) ? errno : EINVAL;
        snprintf(err, errlen, "cannot read %s: %s", events, strerror(e));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    buf_t b;
    buf_init(&b);
    bool ok;
    if (size <= GLANCE_HEAD + GLANCE_TAIL) {
        ok = read_at(fd, 0, size, &b);
    } else {
        /* The first line, then the whole lines of the last GLANCE_TAIL bytes. */
        ok = read_at(fd, 0, GLANCE_HEAD, &b);
        char *nl = ok ? memchr(b.data, '\n', b.len) : NULL;
        b.len = nl ? (size_t)(nl - b.data) + 1 : 0;
        size_t head = b.len;
        ok = ok && read_at(fd, (off_t)(size - GLANCE_TAIL), GLANCE_TAIL, &b);
        char *tail = b.data + head;
        char *first = ok ? memchr(tail, '\n', b.len - head) : NULL;
        if (first) { /* the line cut by where the tail begins goes */
            size_t cut = (size_t)(first + 1 - tail);
            memmove(tail, first + 1, b.len - head - cut);
            b.len -= cut;
        }
    }
    int e = errno;
    close(fd);
    if (!ok) {
        snprintf(err, errlen, "cannot read %s: %s", events, strerror(e));
        buf_free(&b);
        return -1;
    }
    size_t len = b.len;
    char *data = b.data ? buf_steal(&b) : NULL;
    buf_free(&b);
    tl_load_mem(tl, data, len, events, NULL, 0, NULL);
    return 0;
}
