/*
 * snap_storeproc.c - see snap_storeproc.h.
 */
#include "config.h"

#include "snap/snap_storeproc.h"

#include "snap/snap_gc.h"
#include "snap/snap_ops.h"
#include "snap/snap_reader.h"
#include "snap/snap_storewire.h"
#include "snap/snap_take.h"
#include "sandbox/sbutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* Progress is sent this often while it moves, and at least every
 * HEARTBEAT_MS while a request runs. */
#define PROGRESS_MS 200
#define HEARTBEAT_MS 2000

static struct {
    pthread_mutex_t send_lock; /* the answer and the progress thread write the same socket */
    _Atomic(struct snap_progress *) running; /* the store's progress while a request runs */
    atomic_bool quit;
} P = {.send_lock = PTHREAD_MUTEX_INITIALIZER};

static int send_locked(int type, json_t *j, const buf_t *text)
{
    pthread_mutex_lock(&P.send_lock);
    int rc = ssw_send(SNAP_STORE_FD, type, j, text, -1);
    pthread_mutex_unlock(&P.send_lock);
    json_decref(j);
    return rc;
}

static void *progress_main(void *arg)
{
    (void)arg;
    long last_done = -1, last_total = -1;
    int last_phase = -1;
    uint64_t last_sent = 0;
    while (!atomic_load(&P.quit)) {
        struct timespec ts = {0, PROGRESS_MS * 1000000L};
        nanosleep(&ts, NULL);
        struct snap_progress *p = atomic_load(&P.running);
        if (!p) {
            last_done = last_total = -1;
            continue;
        }
        long done = atomic_load(&p->done), total = atomic_load(&p->total);
        int phase = atomic_load(&p->phase);
        uint64_t now = now_ms();
        if (done == last_done && total == last_total && phase == last_phase && now - last_sent < HEARTBEAT_MS)
            continue;
        snap_wire_out o;
        buf_init(&o.b);
        sw_begin(&o, SSW_PROGRESS);
        sw_u64(&o, (uint64_t)(done > 0 ? done : 0));
        sw_u64(&o, (uint64_t)(total > 0 ? total : 0));
        sw_u8(&o, (uint8_t)phase);
        pthread_mutex_lock(&P.send_lock);
        int rc = sw_send(SNAP_STORE_FD, &o);
        pthread_mutex_unlock(&P.send_lock);
        sw_out_free(&o);
        if (rc < 0)
            break; /* the server is gone: the main thread sees it too */
        last_done = done;
        last_total = total;
        last_phase = phase;
        last_sent = now;
    }
    return NULL;
}

/* A request the store could not carry out ("failure" is no op's key). */
static json_t *error_answer(const char *why)
{
    return json_pack("{s:o}", "failure", ssw_str(why));
}

static json_t *do_open(snap_store **st, json_t *req)
{
    if (*st)
        return error_answer("the store is open already");
    char *dir = ssw_str_dup(json_object_get(req, "dir")), *ws = ssw_str_dup(json_object_get(req, "ws"));
    snap_conf conf;
    if (!dir || !ws || ssw_conf_from_json(json_object_get(req, "conf"), &conf) < 0) {
        free(dir);
        free(ws);
        return error_answer("a malformed request to open the store");
    }
    snap_reader_set_stall_ms((int)conf.stall_ms);
    char err[700];
    *st = snap_store_open(dir, ws, &conf, err, sizeof err);
    snap_conf_free(&conf);
    free(dir);
    free(ws);
    if (!*st) {
        json_t *a = error_answer(err);
        /* libgit2 that cannot be loaded: snapshots are off, and why. */
        if (snap_git_load_failure())
            json_object_set_new(a, "off", ssw_str(snap_git_load_failure()));
        return a;
    }
    /* Leftovers of an interrupted repack or snapshot. */
    snap_gc_sweep(*st);
    return json_pack("{s:b}", "ok", 1);
}

static json_t *taken_json(const snap_taken *t, int rc)
{
    return json_pack("{s:i, s:s, s:s, s:b, s:b, s:I, s:I, s:f, s:b, s:o}", "rc", rc, "commit", t->commit, "tree",
                     t->tree, "reused", t->reused, "seeded", t->seeded, "files", (json_int_t)t->files, "stored",
                     (json_int_t)t->stored, "seconds", t->seconds, "refused", t->refused, "error", ssw_str(t->error));
}

/* Run every op of ops, each with taken (the snapshot this request took,
 * or NULL) added to its parameters; their texts go into text one after
 * the other, each answer saying how much is its. */
static json_t *run_ops(snap_store *st, json_t *ops, json_t *taken, buf_t *text)
{
    json_t *answers = json_array();
    atomic_store(&P.running, st->progress);
    for (size_t i = 0; i < json_array_size(ops); i++) {
        json_t *op = json_array_get(ops, i), *params = json_object_get(op, "params");
        const char *kind = json_string_value(json_object_get(op, "kind"));
        if (taken && json_is_object(params))
            json_object_set(params, "taken", taken);
        size_t before = text->len;
        char err[300];
        json_t *a = kind ? snap_op_run(st, kind, params, text, err, sizeof err) : NULL;
        if (!a)
            a = error_answer(kind ? err : "a job without a kind");
        if (text->len > before)
            json_object_set_new(a, "text_len", json_integer((json_int_t)(text->len - before)));
        json_array_append_new(answers, a);
    }
    atomic_store(&P.running, NULL);
    return answers;
}

static json_t *do_take(snap_store *st, json_t *req, int reader_fd, buf_t *text)
{
    if (!st || reader_fd < 0) {
        if (reader_fd >= 0)
            close(reader_fd);
        return error_answer(st ? "a snapshot without the workspace's reader" : "the store is not open");
    }
    json_t *deny_a = json_object_get(req, "deny");
    size_t n_deny = json_array_size(deny_a);
    char **deny = xcalloc(n_deny + 1, sizeof *deny);
    for (size_t i = 0; i < n_deny; i++) {
        deny[i] = ssw_str_dup(json_array_get(deny_a, i));
        if (!deny[i]) {
            sb_list_free(deny, i);
            close(reader_fd);
            return error_answer("a malformed deny path");
        }
    }
    snap_reader *r = snap_reader_adopt(reader_fd, deny, n_deny, json_is_true(json_object_get(req, "configured")));
    st->reader = r;
    st->owns_reader = false;
    st->uncapped_next = json_is_true(json_object_get(req, "uncapped"));
    snap_taken t;
    memset(&t, 0, sizeof t);
    atomic_store(&P.running, st->progress);
    int rc = snap_take(st, json_is_true(json_object_get(req, "force")), json_is_true(json_object_get(req, "allowed")),
                       &t);
    atomic_store(&P.running, NULL);
    st->reader = NULL;
    json_t *a = json_pack("{s:o, s:b}", "taken", taken_json(&t, rc), "configured", snap_reader_configured(r));
    if (snap_reader_failed(r))
        json_object_set_new(a, "reader_failed", ssw_str(snap_reader_why(r)));
    snap_reader_disown(r);
    if (rc == 0) {
        /* The jobs' work on this snapshot, in the same answer. */
        json_t *taken = json_pack("{s:s, s:I}", "commit", t.commit, "stored", (json_int_t)t.stored);
        json_object_set_new(a, "answers", run_ops(st, json_object_get(req, "ops"), taken, text));
        json_decref(taken);
    }
    return a;
}

static json_t *do_run(snap_store *st, json_t *req, buf_t *text)
{
    if (!st)
        return error_answer("the store is not open");
    return json_pack("{s:o}", "answers", run_ops(st, json_object_get(req, "ops"), NULL, text));
}

int snap_storeproc_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    /* Nothing to do without the server that started it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGPIPE, SIG_IGN);
    if (fcntl(SNAP_STORE_FD, F_SETFD, FD_CLOEXEC) < 0) {
        fprintf(stderr, "corral __snapstore: internal: the server starts it with its socket on fd %d\n",
                SNAP_STORE_FD);
        return 2;
    }
    pthread_t progress;
    if (pthread_create(&progress, NULL, progress_main, NULL) != 0) {
        fprintf(stderr, "corral __snapstore: cannot start a thread: %s\n", strerror(errno));
        return 1;
    }
    snap_wire_inbox ib;
    sw_inbox_init(&ib, SNAP_STORE_FD);
    snap_store *st = NULL;
    for (;;) {
        int type;
        json_t *req = NULL;
        if (ssw_recv(&ib, -1, &type, &req, NULL, NULL, NULL) <= 0) {
            json_decref(req);
            break;
        }
        if (type == SSW_QUIT) {
            /* The store unlocked before the answer: the server may start
             * the next process for it at once. */
            json_decref(req);
            snap_store_close(st);
            st = NULL;
            send_locked(SSW_ANSWER, json_object(), NULL);
            break;
        }
        buf_t text;
        buf_init(&text);
        json_t *a;
        if (type == SSW_OPEN)
            a = do_open(&st, req);
        else if (type == SSW_TAKE)
            a = do_take(st, req, sw_take_fd(&ib), &text);
        else if (type == SSW_RUN)
            a = do_run(st, req, &text);
        else
            a = error_answer("an unknown request");
        json_decref(req);
        /* A descriptor no request took is not kept open. */
        for (int fd; (fd = sw_take_fd(&ib)) >= 0;)
            close(fd);
        int rc = send_locked(SSW_ANSWER, a, &text);
        buf_free(&text);
        if (rc < 0)
            break;
    }
    atomic_store(&P.quit, true);
    pthread_join(progress, NULL);
    sw_inbox_free(&ib);
    snap_store_close(st);
    return 0;
}
