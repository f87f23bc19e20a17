/*
 * cli_records.c - see cli_records.h.  The files come through the other
 * server's records command (src/server/records.c) in chunks, over one
 * connection (one ssh) for the whole run.
 *
 * What the other machine sends is hostile: a session name is checked as a
 * recorded session's name (sessfiles_name_ok) before it names a directory
 * here; each file is copied by record/reccopy.c (only up to the size the
 * server announced first, created new, no symlink followed, in the private
 * directory); and the verbs then read the copies as they read any record,
 * showing their text made visible.
 */
#include "config.h"

#include "cli/cli_records.h"

#include "base/util.h"
#include "protocol/client.h"
#include "protocol/proto.h"
#include "protocol/remote.h"
#include "record/reccopy.h"
#include "record/sessfiles.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Files this large show their progress on a terminal. */
#define PROGRESS_FROM (8u << 20)

static struct {
    char *root; /* the private directory (XDG_STATE_HOME), or NULL */
    char **pending; /* sessions listed whose events.jsonl is still an empty stand-in */
    size_t n_pending;
    client_t c;
    bool connected;
} M;

bool cli_records_remote(void)
{
    return M.root != NULL;
}

void cli_records_end(void)
{
    if (M.connected)
        client_close(&M.c);
    M.connected = false;
    for (size_t i = 0; i < M.n_pending; i++)
        free(M.pending[i]);
    free(M.pending);
    M.pending = NULL;
    M.n_pending = 0;
    reccopy_space_end(M.root);
    free(M.root);
    M.root = NULL;
}

/* mkdir path (0700), there already being fine. */
static int make_dir(const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0700) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int cli_records_begin(char *err, size_t errlen)
{
    M.root = reccopy_space_begin(err, errlen);
    if (!M.root)
        return -1;
    atexit(cli_records_end);
    setenv("XDG_STATE_HOME", M.root, 1);
    return 0;
}

/* The reply to req (stolen), which may be an error reply; NULL with err
 * when the link failed. */
static json_t *ask(json_t *req, char *err, size_t errlen)
{
    if (!M.connected) {
        if (client_connect(&M.c, "user", false, err, errlen) < 0) {
            json_decref(req);
            return NULL;
        }
        M.connected = true;
    }
    return client_call(&M.c, req, NULL, NULL, err, errlen);
}

/* The code of an error reply ("not_found" ...), or NULL. */
static const char *error_code(json_t *r)
{
    json_t *e = json_object_get(r, "error");
    const char *code = e ? json_string_value(json_object_get(e, "code")) : NULL;
    return e ? code ? code : "?" : NULL;
}

/* Copy file (of session, NULL: the state directory's) into path: 0, or 1
 * when optional and the other server has none (path is then empty), or -1
 * with err (path removed). */
static int copy(const char *session, const char *file, const char *path, bool optional, char *err, size_t errlen)
{
    reccopy c;
    if (reccopy_open(&c, session, file, path, err, errlen) < 0)
        return -1;
    const remote_host *h = remote_get();
    const char *from = h ? h->spec : "?";
    bool tty = isatty(2);
    int rc = 0;
    for (;;) {
        char why[1024];
        json_t *r = ask(reccopy_request(&c), why, sizeof why);
        const char *code = r ? error_code(r) : NULL;
        bool absent = code && strcmp(code, PERR_NOT_FOUND) == 0;
        if (r && code) {
            client_error_message(r, why, sizeof why);
            json_decref(r);
            r = NULL;
        }
        if (!r && absent && optional) {
            rc = 1;
            break;
        }
        if (!r && absent && session) {
            snprintf(err, errlen, "no session %s is recorded on %s (corral -H %s log lists them)", session,
                     h ? h->spec : "that machine", h ? h->spec : "HOST");
            rc = -1;
            break;
        }
        if (!r) {
            snprintf(err, errlen, "cannot copy %s%s%s from %s: %s", session ? "session " : "", session ? session : "",
                     session ? file[0] == 'e' ? "'s events" : "'s recording" : file, h ? h->spec : "the server",
                     why);
            rc = -1;
            break;
        }
        int more = reccopy_take(&c, r, from, err, errlen);
        json_decref(r);
        if (more < 0) {
            rc = -1;
            break;
        }
        if (tty && c.size >= PROGRESS_FROM)
            fprintf(stderr, "\rcorral: copying %s %s from %s: %lld of %lld MiB ", session ? session : "", file, from,
                    c.offset >> 20, c.size >> 20);
        if (!more)
            break;
    }
    if (tty && c.size >= PROGRESS_FROM)
        fputc('\n', stderr);
    reccopy_close(&c, rc >= 0); /* rc 1: kept, empty */
    return rc;
}

static int fetch_approvals(char *err, size_t errlen)
{
    char *path = xasprintf("%s/corral/approvals.jsonl", M.root);
    struct stat st;
    /* None there is an empty log here: no approvals. */
    int rc = lstat(path, &st) == 0 ? 0 : copy(NULL, "approvals.jsonl", path, true, err, errlen);
    free(path);
    return rc < 0 ? -1 : 0;
}

/* Whether name's events.jsonl is still the empty stand-in the list made
 * (cli_records_list), and then no longer. */
static bool take_pending(const char *name)
{
    for (size_t i = 0; i < M.n_pending; i++) {
        if (strcmp(M.pending[i], name) == 0) {
            free(M.pending[i]);
            M.pending[i] = M.pending[--M.n_pending];
            return true;
        }
    }
    return false;
}

static int fetch_session(const char *name, bool cast, char *err, size_t errlen)
{
    char *dir = xasprintf("%s/corral/sessions/%s", M.root, name);
    int rc = make_dir(dir, err, errlen);
    struct stat st;
    char *events = xasprintf("%s/events.jsonl", dir), *rec = xasprintf("%s/output.cast", dir);
    if (rc == 0 && take_pending(name))
        unlink(events); /* the list's empty stand-in: copied below */
    if (rc == 0 && lstat(events, &st) < 0)
        rc = copy(name, "events.jsonl", events, false, err, errlen);
    if (rc == 0 && cast && lstat(rec, &st) < 0 && (rc = copy(name, "output.cast", rec, true, err, errlen)) == 1) {
        unlink(rec); /* no recording there: none here (replay says so) */
        rc = 0;
    }
    free(events);
    free(rec);
    free(dir);
    return rc;
}

int cli_records_fetch(const char *name, bool cast, char *err, size_t errlen)
{
    if (!sessfiles_name_ok(name)) {
        snprintf(err, errlen, "under -H give a session's number (corral -H HOST log lists them), not a path: "
                 "a path names this machine's files");
        return -1;
    }
    if (fetch_approvals(err, errlen) < 0)
        return -1;
    return fetch_session(name, cast, err, errlen);
}

int cli_records_list(char *err, size_t errlen)
{
    json_t *r = ask(json_pack("{s:s}", "cmd", "records"), err, errlen);
    if (r && error_code(r)) {
        char why[1024];
        const remote_host *h = remote_get();
        snprintf(err, errlen, "cannot list the sessions recorded on %s: %s", h ? h->spec : "that machine",
                 client_error_message(r, why, sizeof why));
        json_decref(r);
        return -1;
    }
    if (!r)
        return -1;
    json_t *list = json_object_get(r, "sessions"), *s;
    size_t i;
    int rc = 0;
    json_array_foreach(list, i, s)
    {
        const char *name = json_string_value(json_object_get(s, "name"));
        if (!name || !sessfiles_name_ok(name))
            continue; /* a name that is not one is skipped: it never names a directory here */
        char *dir = xasprintf("%s/corral/sessions/%s", M.root, name);
        char *events = xasprintf("%s/events.jsonl", dir);
        rc = make_dir(dir, err, errlen);
        int fd = rc == 0 ? open(events, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
        if (fd >= 0) {
            close(fd);
            M.pending = xrealloc(M.pending, (M.n_pending + 1) * sizeof *M.pending);
            M.pending[M.n_pending++] = xstrdup(name);
            /* The stand-in has the original's time: the list sorts by it. */
            double mtime = json_number_value(json_object_get(s, "mtime"));
            if (mtime > 0 && mtime < 1e11) {
                struct timespec ts[2] = {{(time_t)mtime, (long)((mtime - (double)(time_t)mtime) * 1e9)}};
                ts[1] = ts[0];
                utimensat(AT_FDCWD, events, ts, 0);
            }
        }
        free(events);
        free(dir);
        if (rc < 0)
            break;
    }
    json_decref(r);
    return rc < 0 ? -1 : fetch_approvals(err, errlen);
}

char *cli_records_place(const char *local)
{
    const remote_host *h = remote_get();
    return M.root && h ? xasprintf("the records of %s", h->spec) : xstrdup(local);
}
