/*
 * records.c - see records.h.  Only the files log, replay and export read,
 * by their names (a session's events.jsonl and output.cast, the state
 * directory's approvals.jsonl), of a session named as sessfiles_name_ok
 * says, opened without following a symlink: nothing else of the state
 * directory can be asked for.  A chunk is read on the loop: at most
 * RECORDS_CHUNK bytes of a file the server itself wrote.
 */
#include "config.h"

#include "server/records.h"

#include "base/util.h"
#include "protocol/proto.h"
#include "record/sessfiles.h"
#include "sandbox/sbutil.h"
#include "server/server.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GLANCE_MAX 100

/* What another machine's screen lists of an ended session (ui/ended.c
 * reads the same of this machine's from the files): from its log's first
 * line and its end. */
static json_t *glance(const char *name)
{
    sessfiles f;
    sessfiles_for(name, &f);
    timeline_t tl;
    char err[512];
    json_t *g = NULL;
    if (sessfiles_glance(f.events, &tl, err, sizeof err) == 0)
        g = json_pack("{s:i, s:s?, s:s?, s:b, s:i, s:b}", "id", tl.session, "name", tl.name, "client", tl.client,
                      "exited", tl.exited, "exit_code", tl.exit_code, "killed", tl.signal != NULL);
    tl_free(&tl);
    sessfiles_free(&f);
    return g;
}

/* The glances made last, by directory and log mtime: a screen showing
 * another machine's ended sessions asks every few seconds, and an ended
 * session's log seldom changes (each glance reads up to 64 KiB).  Only a
 * log whose mtime is settled is remembered (sb_time_settled): its end
 * written in the same clock tick as a glance keeps the mtime, and the
 * session would be listed as running for good. */
typedef struct glance_memo {
    char name[32];
    double mtime;
    json_t *g;
} glance_memo;
static glance_memo memo[GLANCE_MAX];
static size_t memo_next;

static json_t *glance_memoised(const char *name, double mtime)
{
    for (size_t i = 0; i < GLANCE_MAX; i++)
        if (memo[i].g && memo[i].mtime == mtime && strcmp(memo[i].name, name) == 0)
            return json_incref(memo[i].g);
    json_t *g = glance(name);
    struct timespec changed = {(time_t)mtime, (long)((mtime - (double)(time_t)mtime) * 1e9)};
    if (g && strlen(name) < sizeof memo->name && sb_time_settled(changed)) {
        glance_memo *m = &memo[memo_next++ % GLANCE_MAX];
        json_decref(m->g);
        snprintf(m->name, sizeof m->name, "%s", name);
        m->mtime = mtime;
        m->g = json_incref(g);
    }
    return g;
}

static void forget_glances(server_t *srv)
{
    (void)srv;
    for (size_t i = 0; i < GLANCE_MAX; i++) {
        json_decref(memo[i].g);
        memo[i].g = NULL;
    }
}

/* {"cmd":"records", "glance"?:N}: the sessions recorded, newest first;
 * the newest N with a glance at each. */
static void list(conn_t *c, json_t *id, int glances)
{
    sessfiles_rec *recs;
    size_t n;
    char err[1024];
    if (sessfiles_list(0, &recs, &n, NULL, err, sizeof err) < 0) {
        conn_reply_error(c, id, PERR_INTERNAL, err);
        return;
    }
    json_t *sessions = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_pack("{s:s, s:f}", "name", recs[i].name, "mtime", recs[i].mtime);
        json_t *g = (int)i < glances ? glance_memoised(recs[i].name, recs[i].mtime) : NULL;
        if (g)
            json_object_set_new(e, "glance", g);
        json_array_append_new(sessions, e);
    }
    free(recs);
    json_t *r = proto_ok(id);
    json_object_set_new(r, "sessions", sessions);
    conn_send(c, r);
}

/* The path of the file asked for in the state directory, or NULL with
 * why. */
static char *file_path(const char *state, const char *session, const char *file, char *why, size_t whylen)
{
    if (!session) {
        if (strcmp(file, "approvals.jsonl") != 0) {
            snprintf(why, whylen, "without 'session', field 'file' must be \"approvals.jsonl\"");
            return NULL;
        }
        return xasprintf("%s/approvals.jsonl", state);
    }
    if (!sessfiles_name_ok(session)) {
        snprintf(why, whylen, "field 'session' must name a recorded session (7, or 7.1)");
        return NULL;
    }
    if (strcmp(file, "events.jsonl") != 0 && strcmp(file, "output.cast") != 0) {
        snprintf(why, whylen, "field 'file' must be \"events.jsonl\" or \"output.cast\"");
        return NULL;
    }
    return xasprintf("%s/sessions/%s/%s", state, session, file);
}

/* {"cmd":"records", "file":F, "session"?:NAME, "offset"?:N}: up to
 * RECORDS_CHUNK bytes of F from offset, with the file's size now. */
static void chunk(conn_t *c, json_t *id, json_t *req, const char *file)
{
    const char *session = NULL;
    int64_t offset = 0;
    proto_err pe;
    if (proto_get_string(req, "session", false, &session, &pe) < 0 ||
        proto_get_int(req, "offset", false, 0, INT64_MAX, &offset, &pe) < 0) {
        conn_reply_error(c, id, pe.code, pe.message);
        return;
    }
    char why[256];
    char *path = file_path(server_state_dir(conn_server(c)), session, file, why, sizeof why);
    if (!path) {
        conn_reply_error(c, id, PERR_BAD_REQUEST, why);
        return;
    }
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int e = fd < 0 ? errno : EINVAL;
        char msg[PATH_MAX + 200];
        snprintf(msg, sizeof msg, "cannot read %s: %s", path, fd >= 0 ? "not a regular file" : strerror(e));
        if (fd >= 0)
            close(fd);
        free(path);
        conn_reply_error(c, id, e == ENOENT ? PERR_NOT_FOUND : PERR_INTERNAL, msg);
        return;
    }
    free(path);
    char *data = xmalloc(RECORDS_CHUNK);
    size_t got = 0;
    while (offset < st.st_size && got < RECORDS_CHUNK) {
        ssize_t r = pread(fd, data + got, RECORDS_CHUNK - got, (off_t)offset + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    size_t b64_len;
    char *b64 = base64_encode(data, got, &b64_len);
    free(data);
    json_t *r = proto_ok(id);
    json_object_set_new(r, "data_b64", json_stringn(b64, b64_len));
    json_object_set_new(r, "offset", json_integer(offset));
    json_object_set_new(r, "size", json_integer((json_int_t)st.st_size));
    free(b64);
    conn_send(c, r);
}

static void cmd_records(conn_t *c, json_t *id, json_t *req)
{
    const char *file = NULL;
    int64_t glances = 0;
    proto_err pe;
    if (proto_get_string(req, "file", false, &file, &pe) < 0 ||
        proto_get_int(req, "glance", false, 0, GLANCE_MAX, &glances, &pe) < 0) {
        conn_reply_error(c, id, pe.code, pe.message);
        return;
    }
    if (file)
        chunk(c, id, req, file);
    else
        list(c, id, (int)glances);
}

static const server_command commands[] = {{"records", cmd_records}, {NULL, NULL}};

const server_module records_module = {
    .name = "records",
    .commands = commands,
    .shutdown = forget_glances,
};
