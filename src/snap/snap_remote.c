/*
 * snap_remote.c - see snap_remote.h.
 */
#include "config.h"

#include "snap/snap_remote.h"

#include "sandbox/launch.h"
#include "snap/snap_storeproc.h"
#include "snap/snap_storewire.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

extern char **environ;

/* How long a store's process may take to close its store when told to
 * (a free of its index): past it, it is killed. */
#define QUIT_WAIT_MS 5000

struct snap_remote {
    pid_t pid;
    int fd;
    snap_wire_inbox ib;
    struct snap_progress *progress;
    bool dead;
    char why[300];
};

/* The store processes not reaped yet, for the server's SIGCHLD handler. */
#define MAX_PIDS 256
static pthread_mutex_t pids_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t pids[MAX_PIDS];
static size_t n_pids;

static char load_failure[700];
static atomic_bool load_failed;

const char *snap_remote_load_failure(void)
{
    return atomic_load(&load_failed) ? load_failure : NULL;
}

bool snap_remote_reaped(pid_t pid, int status)
{
    (void)status;
    bool ours = false;
    pthread_mutex_lock(&pids_lock);
    for (size_t i = 0; i < n_pids && !ours; i++)
        if (pids[i] == pid) {
            pids[i] = pids[--n_pids];
            ours = true;
        }
    pthread_mutex_unlock(&pids_lock);
    return ours;
}

/* The process is of no more use: killed, so that it cannot go on writing
 * the store behind the next one's back. */
static void gone(snap_remote *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gone(snap_remote *r, const char *fmt, ...)
{
    if (r->dead)
        return;
    r->dead = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
    kill(r->pid, SIGKILL);
}

bool snap_remote_dead(snap_remote *r)
{
    /* Between requests it says nothing: a socket with something to read,
     * or hung up, is a process that ended (killed from outside, say). */
    struct pollfd p = {.fd = r->fd, .events = POLLIN};
    if (!r->dead && poll(&p, 1, 0) > 0)
        gone(r, "the snapshot store's process (pid %d) ended between jobs", (int)r->pid);
    return r->dead;
}

/* Copied into the workspace's progress, which the loop reads. */
static void on_progress(void *user, uint64_t done, uint64_t total, int phase)
{
    snap_remote *r = user;
    atomic_store(&r->progress->done, (long)done);
    atomic_store(&r->progress->total, (long)total);
    atomic_store(&r->progress->phase, phase);
}

static int spawn(snap_remote *r, const char *ws, char *err, size_t errlen)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        snprintf(err, errlen, "cannot create a socket for the snapshot store's process: %s", strerror(errno));
        return -1;
    }
    /* dup2 onto itself would leave close-on-exec set. */
    if (sv[1] == SNAP_STORE_FD) {
        int moved = fcntl(sv[1], F_DUPFD_CLOEXEC, SNAP_STORE_FD + 1);
        close(sv[1]);
        sv[1] = moved;
    }
    const char *exe = sb_self_exe();
    /* The workspace is in its argv for ps (the request says it again). */
    char *argv[] = {"corral-store", "__snapstore", (char *)ws, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], SNAP_STORE_FD);
    /* Nothing else of the server's: its sessions' descriptors above all. */
    posix_spawn_file_actions_addclosefrom_np(&fa, SNAP_STORE_FD + 1);
    posix_spawnattr_init(&at);
    /* Not the worker thread's mask and handlers: a process of its own. */
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int rc = sv[1] >= 0 ? posix_spawn(&r->pid, exe, &fa, &at, argv, environ) : errno;
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (sv[1] >= 0)
        close(sv[1]);
    if (rc != 0) {
        close(sv[0]);
        snprintf(err, errlen, "cannot start the snapshot store's process (%s __snapstore): %s", exe, strerror(rc));
        return -1;
    }
    pthread_mutex_lock(&pids_lock);
    if (n_pids < MAX_PIDS)
        pids[n_pids++] = r->pid;
    pthread_mutex_unlock(&pids_lock);
    r->fd = sv[0];
    sw_inbox_init(&r->ib, r->fd);
    return 0;
}

/* One request and its answer; NULL with err when the store could not
 * answer it, or answered an error. */
static json_t *call(snap_remote *r, int type, json_t *req, int pass_fd, buf_t *text, char *err, size_t errlen)
{
    if (!r->dead) {
        int rc = ssw_send(r->fd, type, req, NULL, pass_fd);
        if (rc < 0)
            gone(r, "the snapshot store's process (pid %d) is gone: %s", (int)r->pid, strerror(-rc));
    }
    json_t *a = NULL;
    int t = 0;
    if (!r->dead) {
        int rc = ssw_recv(&r->ib, -1, &t, &a, text, on_progress, r);
        /* A process that dies with the request unread resets the socket. */
        if (rc == 0 || rc == -ECONNRESET)
            gone(r, "the snapshot store's process (pid %d) ended before it answered (the server's log may say why)",
                 (int)r->pid);
        else if (rc < 0 || t != SSW_ANSWER)
            gone(r, "the snapshot store's process (pid %d) sent a malformed answer", (int)r->pid);
    }
    if (r->dead) {
        json_decref(a);
        snprintf(err, errlen, "%s", r->why);
        return NULL;
    }
    if (json_object_get(a, "failure")) {
        ssw_str_copy(json_object_get(a, "failure"), err, errlen);
        json_decref(a);
        return NULL;
    }
    return a;
}

snap_remote *snap_remote_open(const char *snapdir, const char *ws, const snap_conf *conf,
                              struct snap_progress *progress, char *err, size_t errlen)
{
    snap_remote *r = xcalloc(1, sizeof *r);
    r->fd = -1;
    r->progress = progress;
    if (spawn(r, ws, err, errlen) < 0) {
        free(r);
        return NULL;
    }
    json_t *req = json_pack("{s:o, s:o, s:o}", "dir", ssw_str(snapdir), "ws", ssw_str(ws), "conf",
                            ssw_conf_json(conf));
    json_t *a = NULL;
    if (!r->dead) {
        int rc = ssw_send(r->fd, SSW_OPEN, req, NULL, -1);
        int t = 0;
        if (rc < 0)
            gone(r, "the snapshot store's process (pid %d) is gone: %s", (int)r->pid, strerror(-rc));
        else if ((rc = ssw_recv(&r->ib, -1, &t, &a, NULL, on_progress, r)) <= 0 || t != SSW_ANSWER)
            gone(r, "the snapshot store's process (pid %d) ended before it opened the store (the server's log "
                    "may say why)", (int)r->pid);
    }
    json_decref(req);
    json_t *e = a ? json_object_get(a, "failure") : NULL;
    if (r->dead || e) {
        if (r->dead)
            snprintf(err, errlen, "%s", r->why);
        else
            ssw_str_copy(e, err, errlen);
        json_t *off = a ? json_object_get(a, "off") : NULL;
        if (off && !atomic_load(&load_failed)) {
            ssw_str_copy(off, load_failure, sizeof load_failure);
            atomic_store(&load_failed, true);
        }
        json_decref(a);
        snap_remote_close(r);
        return NULL;
    }
    json_decref(a);
    return r;
}

int snap_remote_take(snap_remote *r, snap_reader *reader, bool force, bool allowed, bool uncapped, json_t *ops,
                     snap_taken *out, json_t **answers, buf_t *text)
{
    memset(out, 0, sizeof *out);
    *answers = NULL;
    size_t n_deny;
    char *const *deny = snap_reader_deny(reader, &n_deny);
    json_t *deny_a = json_array();
    for (size_t i = 0; i < n_deny; i++)
        json_array_append_new(deny_a, ssw_str(deny[i]));
    json_t *req = json_pack("{s:b, s:b, s:b, s:b, s:o, s:O}", "force", force, "allowed", allowed, "uncapped",
                            uncapped, "configured", snap_reader_configured(reader), "deny", deny_a, "ops", ops);
    json_t *a = call(r, SSW_TAKE, req, snap_reader_fd(reader), text, out->error, sizeof out->error);
    json_decref(req);
    if (!a) {
        /* Where the conversation stopped is unknown: a new reader. */
        snap_reader_fail(reader, out->error);
        return -1;
    }
    json_t *t = json_object_get(a, "taken");
    ssw_str_copy(json_object_get(t, "commit"), out->commit, sizeof out->commit);
    ssw_str_copy(json_object_get(t, "tree"), out->tree, sizeof out->tree);
    ssw_str_copy(json_object_get(t, "error"), out->error, sizeof out->error);
    out->reused = json_is_true(json_object_get(t, "reused"));
    out->seeded = json_is_true(json_object_get(t, "seeded"));
    out->refused = json_is_true(json_object_get(t, "refused"));
    out->files = (long)json_integer_value(json_object_get(t, "files"));
    out->stored = (long)json_integer_value(json_object_get(t, "stored"));
    out->seconds = json_number_value(json_object_get(t, "seconds"));
    int rc = (int)json_integer_value(json_object_get(t, "rc"));
    if (json_is_true(json_object_get(a, "configured")))
        snap_reader_set_configured(reader);
    if (json_object_get(a, "reader_failed")) {
        char why[400];
        ssw_str_copy(json_object_get(a, "reader_failed"), why, sizeof why);
        snap_reader_fail(reader, why);
    }
    if (rc == 0)
        *answers = json_incref(json_object_get(a, "answers"));
    json_decref(a);
    if (rc < 0 && !out->error[0])
        snprintf(out->error, sizeof out->error, "the snapshot failed");
    return rc < 0 ? -1 : 0;
}

json_t *snap_remote_run(snap_remote *r, json_t *ops, buf_t *text, char *err, size_t errlen)
{
    json_t *req = json_pack("{s:O}", "ops", ops);
    json_t *a = call(r, SSW_RUN, req, -1, text, err, errlen);
    json_decref(req);
    json_t *answers = a ? json_incref(json_object_get(a, "answers")) : NULL;
    json_decref(a);
    return answers;
}

void snap_remote_close(snap_remote *r)
{
    if (!r)
        return;
    if (!r->dead) {
        /* Its answer comes once the store is closed and unlocked, so that
         * a process started for it next can open it. */
        json_t *q = json_object(), *a = NULL;
        int t = 0;
        if (ssw_send(r->fd, SSW_QUIT, q, NULL, -1) < 0 ||
            ssw_recv(&r->ib, QUIT_WAIT_MS, &t, &a, NULL, NULL, NULL) <= 0)
            kill(r->pid, SIGKILL);
        json_decref(q);
        json_decref(a);
    }
    sw_inbox_free(&r->ib);
    if (r->fd >= 0)
        close(r->fd);
    free(r);
}
