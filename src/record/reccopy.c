/*
 * reccopy.c - see reccopy.h.
 */
#include "config.h"

#include "record/reccopy.h"
#include "record/sessdir.h"

#include "base/util.h"
#include "protocol/proto.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The private directory's name: the pid of the run it is for, so that one
 * left by a run that was killed is known for what it is and removed by a
 * later run. */
#define PREFIX "corral-records-"

static char *parent_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    return xstrdup(tmp && tmp[0] == '/' ? tmp : "/tmp");
}

/* Remove the private directories of runs that are gone: ours by owner,
 * mode and name, whose pid no longer runs. */
static void sweep_stale(const char *parent)
{
    DIR *d = opendir(parent);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, PREFIX, strlen(PREFIX)) != 0)
            continue;
        char *end;
        long pid = strtol(de->d_name + strlen(PREFIX), &end, 10);
        struct stat st;
        if (pid <= 0 || *end != '-' || kill((pid_t)pid, 0) == 0 || errno != ESRCH ||
            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != geteuid() || (st.st_mode & 077))
            continue;
        char err[512];
        sessdir_remove(parent, de->d_name, err, sizeof err);
    }
    closedir(d);
}

static int make_dir(const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0700) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

char *reccopy_space_begin(char *err, size_t errlen)
{
    char *parent = parent_dir();
    sweep_stale(parent);
    char *root = xasprintf("%s/" PREFIX "%d-XXXXXX", parent, (int)getpid());
    free(parent);
    if (!mkdtemp(root)) {
        snprintf(err, errlen, "cannot create a private directory for the other machine's records (%s): %s", root,
                 strerror(errno));
        free(root);
        return NULL;
    }
    char *corral = xasprintf("%s/corral", root), *sessions = xasprintf("%s/corral/sessions", root);
    int rc = make_dir(corral, err, errlen) < 0 || make_dir(sessions, err, errlen) < 0 ? -1 : 0;
    free(corral);
    free(sessions);
    if (rc < 0) {
        reccopy_space_end(root);
        free(root);
        return NULL;
    }
    return root;
}

void reccopy_space_end(const char *root)
{
    if (!root)
        return;
    char *copy = xstrdup(root);
    char *slash = strrchr(copy, '/');
    if (slash) {
        *slash = '\0';
        char err[512];
        sessdir_remove(slash == copy ? "/" : copy, slash + 1, err, sizeof err);
    }
    free(copy);
}

int reccopy_open(reccopy *c, const char *session, const char *file, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (c->fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    c->path = xstrdup(path);
    c->session = session ? xstrdup(session) : NULL;
    c->file = xstrdup(file);
    c->size = -1;
    return 0;
}

json_t *reccopy_request(const reccopy *c)
{
    json_t *req = json_pack("{s:s, s:s, s:I}", "cmd", "records", "file", c->file, "offset", (json_int_t)c->offset);
    if (c->session)
        json_object_set_new(req, "session", json_string(c->session));
    return req;
}

int reccopy_take(reccopy *c, json_t *reply, const char *from, char *err, size_t errlen)
{
    json_t *b64 = json_object_get(reply, "data_b64"), *sz = json_object_get(reply, "size");
    size_t len = 0;
    char *data = json_is_string(b64) ? base64_decode(json_string_value(b64), json_string_length(b64), &len) : NULL;
    if (c->size < 0)
        c->size = json_is_integer(sz) ? (long long)json_integer_value(sz) : -1;
    bool bad = !data || c->size < 0 || c->size > RECCOPY_MAX_FILE ||
               json_integer_value(json_object_get(reply, "offset")) != c->offset;
    /* A live session's file grows while it is copied: the copy is the
     * file as it was announced first, and what came after is left. */
    if (!bad && c->offset + (long long)len > c->size)
        len = (size_t)(c->size - c->offset);
    if (bad) {
        free(data);
        snprintf(err, errlen, "the server of %s sent a chunk of %s that does not fit (offset %lld, %zu bytes of "
                 "%lld): not copied", from, c->file, c->offset, len, c->size);
        return -1;
    }
    int w = len ? write_all(c->fd, data, len) : 0;
    free(data);
    if (w < 0) {
        snprintf(err, errlen, "cannot write %s: %s", c->path, strerror(-w));
        return -1;
    }
    c->offset += (long long)len;
    return len == 0 || c->offset >= c->size ? 0 : 1;
}

void reccopy_close(reccopy *c, bool keep)
{
    if (c->fd >= 0)
        close(c->fd);
    if (!keep && c->path)
        unlink(c->path); /* nothing half copied is left to be read as the whole file */
    free(c->path);
    free(c->session);
    free(c->file);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}
