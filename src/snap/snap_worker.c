/*
 * snap_worker.c - `corral __snapworker WORKSPACE`: a workspace's confined
 * reader (docs/snapshots.md, "The reader").  The server starts one per
 * workspace in a sandbox that sees what the workspace's sessions see (the
 * workspace read-only, their deny paths masked, no home, no network) and
 * talks to it over the session channel's descriptor (snap_wire.h).
 *
 * It keeps the workspace's dirty bit (inotify) and a copy of the stat
 * cache (the server's snapshot index), and at each TAKE walks the tree
 * and sends what changed: the bytes of new and changed files, deleted
 * paths, nested repositories, what was left out and why.  It writes
 * nothing anywhere: the server hashes the bytes it is sent and writes the
 * objects into the store.
 */
#include "config.h"

#include "snap/snap_gitdir.h"
#include "snap/snap_ignore.h"
#include "snap/snap_walk.h"
#include "snap/snap_watch.h"
#include "snap/snap_wire.h"
#include "snap/snap_worker.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A change made this close to the start of the walk that read it may not
 * have moved the file's times: such an entry is read again next time. */
#define RACY_NS 1000000000LL

typedef struct cent {
    char *path;
    snap_wire_stat st; /* as the index keeps it (snap_worker_norm) */
    bool seen;
} cent;

static struct {
    int chan;
    const char *ws;
    int rootfd;
    uint64_t max_size;
    long max_new_files, max_files;
    bool allowed;
    int64_t last_walk_ns;   /* the start of the walk the cache is from */
    char *excludes;
    char **deny;
    size_t n_deny;
    cent *cache;            /* sorted by path */
    size_t n_cache;
    cent *added;            /* new entries of the snapshot being taken */
    size_t n_added, cap_added;
    bool have_snapshot;     /* the server has one: the dirty bit may answer */
    char **ignored_dirs;    /* excluded directories of the last walk (sorted): the watch skips them */
    size_t n_ignored_dirs;
    snap_watch watch;
    snap_wire_out out;
    buf_t pending;          /* frames queued for the server */
    snap_wire_inbox inbox;
    uint64_t last_beat;
} W;

void snap_worker_norm(snap_wire_stat *s)
{
    /* git's index keeps 32 bits of these. */
    s->size = (uint32_t)s->size;
    s->ino = (uint32_t)s->ino;
    s->dev = (uint32_t)s->dev;
    s->mtime_ns = (int64_t)(int32_t)(s->mtime_ns / 1000000000) * 1000000000 + s->mtime_ns % 1000000000;
    s->ctime_ns = (int64_t)(int32_t)(s->ctime_ns / 1000000000) * 1000000000 + s->ctime_ns % 1000000000;
}

void snap_worker_stat(const struct stat *sb, snap_wire_stat *out)
{
    out->mode = S_ISLNK(sb->st_mode) ? 0120000 : (sb->st_mode & 0100) ? 0100755 : 0100644;
    out->size = (uint64_t)sb->st_size;
    out->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
    out->ctime_ns = (int64_t)sb->st_ctim.tv_sec * 1000000000 + sb->st_ctim.tv_nsec;
    out->ino = (uint64_t)sb->st_ino;
    out->dev = (uint64_t)sb->st_dev;
    out->uid = sb->st_uid;
    out->gid = sb->st_gid;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sw_begin(&W.out, SW_ERROR);
    sw_str(&W.out, msg);
    sw_queue(&W.out, &W.pending);
    sw_flush(W.chan, &W.pending);
    _exit(1);
}

static void flush_or_die(void)
{
    int rc = sw_flush(W.chan, &W.pending);
    if (rc < 0)
        _exit(rc == -EPIPE ? 0 : 1); /* the server went away: nothing to tell */
}

/* The frame built in W.out, queued: small ones go out together (a
 * snapshot of many small files costs few system calls). */
#define QUEUE_FLUSH (128u << 10)

static void send_or_die(void)
{
    sw_queue(&W.out, &W.pending);
    if (W.pending.len >= QUEUE_FLUSH)
        flush_or_die();
}

/* The frame built in W.out, and everything before it, now. */
static void send_now_or_die(void)
{
    sw_queue(&W.out, &W.pending);
    flush_or_die();
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the stat cache --------------------------------------------------------------- */

static int cent_cmp(const void *a, const void *b)
{
    return strcmp(((const cent *)a)->path, ((const cent *)b)->path);
}

static cent *cache_find(const char *path)
{
    if (!W.n_cache)
        return NULL;
    cent key = {.path = (char *)path};
    return bsearch(&key, W.cache, W.n_cache, sizeof *W.cache, cent_cmp);
}

/* Is path in the cache (dir: is anything below it)? */
static bool cache_tracked(const char *path, bool dir, void *user)
{
    (void)user;
    if (!dir)
        return cache_find(path) != NULL;
    size_t n = strlen(path), lo = 0, hi = W.n_cache;
    /* The first entry not below "path/" in sort order... */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strncmp(W.cache[mid].path, path, n);
        if (c < 0 || (c == 0 && W.cache[mid].path[n] < '/'))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < W.n_cache && strncmp(W.cache[lo].path, path, n) == 0 && W.cache[lo].path[n] == '/';
}

static void push_added(const char *path, const snap_wire_stat *st)
{
    if (W.n_added == W.cap_added) {
        W.cap_added = W.cap_added ? W.cap_added * 2 : 256;
        W.added = xrealloc(W.added, W.cap_added * sizeof *W.added);
    }
    W.added[W.n_added++] = (cent){xstrdup(path), *st, true};
}

/* ---- set-up ----------------------------------------------------------------------- */

static void recv_or_die(snap_wire_in *in)
{
    int rc = sw_recv(&W.inbox, in, -1);
    if (rc == 0)
        _exit(0);
    if (rc < 0)
        _exit(1);
}

static void read_config(void)
{
    snap_wire_in in;
    recv_or_die(&in);
    uint64_t max_size, last;
    uint32_t new_files, files, n_deny;
    uint8_t allowed, have;
    if (in.type != SW_CONFIG || !sw_get_u64(&in, &max_size) || !sw_get_u32(&in, &new_files) ||
        !sw_get_u32(&in, &files) || !sw_get_u8(&in, &allowed) || !sw_get_u8(&in, &have) ||
        !sw_get_u64(&in, &last) || !sw_get_str(&in, &W.excludes, 1u << 20) || !sw_get_u32(&in, &n_deny) ||
        n_deny > 4096)
        die("a malformed configuration from the server");
    W.max_size = max_size;
    W.max_new_files = new_files;
    W.max_files = files;
    W.allowed = allowed;
    W.have_snapshot = have;
    W.last_walk_ns = (int64_t)last;
    W.deny = xcalloc(n_deny + 1, sizeof *W.deny);
    for (uint32_t i = 0; i < n_deny; i++)
        if (!sw_get_str(&in, &W.deny[W.n_deny++], PATH_MAX))
            die("a malformed deny path from the server");
    sw_in_free(&in);
    /* The stat cache, in frames of entries; an empty one ends it. */
    size_t cap = 0;
    for (;;) {
        recv_or_die(&in);
        uint32_t n;
        if (in.type != SW_CACHE || !sw_get_u32(&in, &n))
            die("a malformed stat cache from the server");
        if (n == 0) {
            sw_in_free(&in);
            break;
        }
        for (uint32_t i = 0; i < n; i++) {
            cent e = {0};
            if (!sw_get_str(&in, &e.path, PATH_MAX) || !sw_get_stat(&in, &e.st))
                die("a malformed stat cache entry from the server");
            if (W.n_cache == cap) {
                cap = cap ? cap * 2 : 1024;
                W.cache = xrealloc(W.cache, cap * sizeof *W.cache);
            }
            W.cache[W.n_cache++] = e;
        }
        sw_in_free(&in);
    }
    if (W.n_cache) /* (qsort may not be given NULL) */
        qsort(W.cache, W.n_cache, sizeof *W.cache, cent_cmp);
}

/* ---- one snapshot ------------------------------------------------------------------ */

/* A progress report: while walking, the entries seen; while reading
 * (storing), files read of total.  Also the heartbeat: what was queued
 * goes with it. */
static void report(long n, long total, bool storing)
{
    W.last_beat = now_ms();
    sw_begin(&W.out, SW_PROGRESS);
    sw_u64(&W.out, (uint64_t)n);
    sw_u64(&W.out, (uint64_t)total);
    sw_u8(&W.out, storing);
    send_now_or_die();
}

static void progress(long seen, void *user)
{
    (void)user;
    if (now_ms() - W.last_beat >= 200)
        report(seen, 0, false);
}

static bool builtin_dir(const char *name)
{
    static const char *const dirs[] = {"node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
                                       ".pytest_cache", ".tox", ".cache", "target", ".next", ".nuxt",
                                       ".gradle", ".parcel-cache", ".terraform", ".direnv", NULL};
    for (const char *const *d = dirs; *d; d++)
        if (strcmp(name, *d) == 0)
            return true;
    return false;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The watch skips what the last walk found excluded. */
static bool watch_skip(const char *rel, void *user)
{
    (void)user;
    const char *base = strrchr(rel, '/');
    if (builtin_dir(base ? base + 1 : rel))
        return true;
    return W.n_ignored_dirs &&
           bsearch(&rel, W.ignored_dirs, W.n_ignored_dirs, sizeof *W.ignored_dirs, str_cmp) != NULL;
}

static void send_path(int type, const char *path)
{
    sw_begin(&W.out, type);
    sw_str(&W.out, path);
    send_or_die();
}

static void send_gitdir(int type, const char *path, const snap_gitdir *g)
{
    sw_begin(&W.out, type);
    sw_str(&W.out, path);
    sw_bytes(&W.out, g, sizeof *g);
    send_or_die();
}

static void send_file(const char *path, const snap_wire_stat *st, const buf_t *data)
{
    sw_begin(&W.out, SW_FILE);
    sw_str(&W.out, path);
    sw_stat(&W.out, st);
    sw_u64(&W.out, data->len);
    send_or_die();
    for (size_t off = 0; off < data->len;) {
        size_t n = data->len - off < SNAP_WIRE_CHUNK ? data->len - off : SNAP_WIRE_CHUNK;
        sw_begin(&W.out, SW_BYTES);
        sw_bytes(&W.out, data->data + off, n);
        send_or_die();
        off += n;
    }
}

static size_t top_len(const char *path)
{
    const char *slash = strchr(path, '/');
    return slash ? (size_t)(slash - path) : 0;
}

typedef struct top_count {
    char *dir;
    size_t len;
    long n;
} top_count;

/* New files per top-level directory, in the order first seen (the order
 * they are reported in), with a hash index: a workspace may have
 * thousands of top-level directories and every new file is counted. */
typedef struct top_counts {
    top_count *v;
    size_t n;
    size_t *slot; /* index into v + 1; 0: empty */
    size_t cap;   /* a power of two */
} top_counts;

static size_t top_hash(const char *s, size_t len)
{
    size_t h = 1469598103934665603u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

static void tops_grow(top_counts *t)
{
    t->cap = t->cap ? t->cap * 2 : 64;
    free(t->slot);
    t->slot = xcalloc(t->cap, sizeof *t->slot);
    for (size_t i = 0; i < t->n; i++) {
        size_t s = top_hash(t->v[i].dir, t->v[i].len) & (t->cap - 1);
        while (t->slot[s])
            s = (s + 1) & (t->cap - 1);
        t->slot[s] = i + 1;
    }
}

static long *count_for(top_counts *t, const char *path)
{
    size_t len = top_len(path);
    if ((t->n + 1) * 2 > t->cap)
        tops_grow(t);
    size_t s = top_hash(path, len) & (t->cap - 1);
    for (; t->slot[s]; s = (s + 1) & (t->cap - 1)) {
        top_count *c = &t->v[t->slot[s] - 1];
        if (c->len == len && memcmp(c->dir, path, len) == 0)
            return &c->n;
    }
    t->v = xrealloc(t->v, (t->n + 1) * sizeof *t->v);
    t->v[t->n] = (top_count){xstrndup(path, len), len, 0};
    t->slot[s] = ++t->n;
    return &t->v[t->n - 1].n;
}

/* The excludes: the server's list (built-in and configured), then the
 * workspace repository's own info/exclude, as git reads them. */
static snap_ignore *load_excludes(void)
{
    snap_ignore *ig = snap_ignore_new();
    snap_ignore_add(ig, "", W.excludes, strlen(W.excludes));
    snap_enclosing enc;
    if (snap_gitdir_enclosing(W.ws, &enc) && !enc.prefix[0]) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/info/exclude", enc.commondir);
        size_t len;
        char *text = snap_read_small(path, 1u << 20, &len);
        if (text) {
            snap_ignore_add(ig, "", text, len);
            free(text);
        }
    }
    return ig;
}

static void remember_ignored(const snap_walk_result *r)
{
    for (size_t i = 0; i < W.n_ignored_dirs; i++)
        free(W.ignored_dirs[i]);
    W.n_ignored_dirs = 0;
    for (size_t i = 0; i < r->n; i++) {
        size_t len = strlen(r->v[i].path);
        if (r->v[i].kind == SWK_IGNORED && len > 1 && r->v[i].path[len - 1] == '/') {
            W.ignored_dirs = xrealloc(W.ignored_dirs, (W.n_ignored_dirs + 1) * sizeof *W.ignored_dirs);
            W.ignored_dirs[W.n_ignored_dirs++] = xstrndup(r->v[i].path, len - 1);
        }
    }
    if (W.n_ignored_dirs)
        qsort(W.ignored_dirs, W.n_ignored_dirs, sizeof *W.ignored_dirs, str_cmp);
}

static bool trusted(const cent *c, const snap_wire_stat *now)
{
    return c->st.mode == now->mode && c->st.size == now->size && c->st.mtime_ns == now->mtime_ns &&
           c->st.ctime_ns == now->ctime_ns && c->st.ino == now->ino && c->st.dev == now->dev &&
           c->st.uid == now->uid && c->st.gid == now->gid && now->mtime_ns < W.last_walk_ns - RACY_NS &&
           now->ctime_ns < W.last_walk_ns - RACY_NS;
}

/* The packs of the repository the workspace is in, for the server to
 * seed the first snapshot from (snap_seed.h): each as two descriptors,
 * opened here as the sandbox could open them. */
static void send_packs(void)
{
    snap_enclosing enc;
    if (!snap_gitdir_enclosing(W.ws, &enc))
        return;
    char dir[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/objects/pack", enc.commondir);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 10 || strncmp(e->d_name, "pack-", 5) != 0 || strcmp(e->d_name + n - 5, ".pack") != 0 || n > 100)
            continue;
        char base[128], idx[160];
        snprintf(base, sizeof base, "%.*s", (int)(n - 5), e->d_name);
        snprintf(idx, sizeof idx, "%s.idx", base);
        int fds[2] = {openat(dfd, idx, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC),
                      openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
        struct stat a, b;
        if (fds[0] >= 0 && fds[1] >= 0 && fstat(fds[0], &a) == 0 && fstat(fds[1], &b) == 0 && S_ISREG(a.st_mode) &&
            S_ISREG(b.st_mode)) {
            flush_or_die(); /* the descriptors go with their own frame's first byte */
            sw_begin(&W.out, SW_PACK);
            sw_str(&W.out, base);
            if (sw_send_fds(W.chan, &W.out, fds, 2) < 0)
                _exit(0);
        }
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                close(fds[i]);
    }
    closedir(d);
}

/* cap: apply the new-file cap.  The server asks for it only where a
 * command may have made the new files (snap_queue.c says when): what was
 * there before a command is never capped. */
static void take(bool force, bool first, bool seed, bool cap)
{
    long max_new = cap ? W.max_new_files : LONG_MAX;
    bool dirty = snap_watch_poll(&W.watch);
    if (!force && !dirty && W.have_snapshot) {
        sw_begin(&W.out, SW_CLEAN);
        send_now_or_die();
        return;
    }
    int64_t walk_start = wall_ns();
    snap_watch_prepare(&W.watch, W.ws, watch_skip, NULL);
    snap_ignore *ig = load_excludes();
    snap_walk_opts o = {.ignore = ig, .deny = W.deny, .n_deny = W.n_deny,
                        .max_files = first && !W.allowed ? W.max_files : 0, .progress = progress,
                        .tracked = cache_tracked};
    snap_walk_result r;
    if (snap_walk(W.rootfd, &o, &r) < 0)
        die("cannot read the workspace %s: %s", W.ws, strerror(errno));
    snap_ignore_free(ig);
    if (r.too_many) {
        sw_begin(&W.out, SW_DONE);
        sw_u8(&W.out, 1);
        sw_u64(&W.out, (uint64_t)walk_start);
        sw_u64(&W.out, (uint64_t)r.files);
        char msg[600];
        snprintf(msg, sizeof msg, "%s has more than %ld files after excludes: snapshots of it need an opt-in "
                 "([snapshots] allow = %s in the config) or more excludes", W.ws, W.max_files, W.ws);
        sw_str(&W.out, msg);
        send_now_or_die();
        snap_walk_result_free(&r);
        W.watch.dirty = true;
        return;
    }
    remember_ignored(&r);
    if (seed)
        send_packs();
    for (size_t i = 0; i < W.n_cache; i++)
        W.cache[i].seen = false;
    /* What to read: files new or changed since the cache; new ones count
     * against their top-level directory's cap. */
    size_t *todo = xcalloc(r.n ? r.n : 1, sizeof *todo);
    size_t n_todo = 0;
    top_counts tops = {0};
    for (size_t i = 0; i < r.n; i++) {
        snap_walk_entry *e = &r.v[i];
        cent *c = cache_find(e->path);
        if (c)
            c->seen = true;
        switch (e->kind) {
        case SWK_FILE: {
            snap_wire_stat now;
            snap_worker_stat(&e->st, &now);
            snap_worker_norm(&now);
            if (c && trusted(c, &now))
                break;
            if (!c)
                (*count_for(&tops, e->path))++;
            todo[n_todo++] = i;
            break;
        }
        case SWK_IGNORED:
            send_path(SW_IGNORED, e->path);
            break;
        case SWK_INVALID:
            sw_begin(&W.out, SW_INVALID);
            sw_str(&W.out, e->path);
            sw_str(&W.out, e->why);
            send_or_die();
            if (c)
                c->seen = false; /* out of the index too */
            break;
        case SWK_GITLINK:
            /* Known as a repository from now on: should a file come back
             * at this path, no stat of the old one can match it. */
            if (c)
                c->st.mode = 0160000;
            else
                push_added(e->path, &(snap_wire_stat){.mode = 0160000});
            break;
        }
    }
    /* Deleted first: a file that became a directory leaves the index
     * before what is below it comes in. */
    for (size_t i = 0; i < W.n_cache; i++)
        if (!W.cache[i].seen)
            send_path(SW_DELETED, W.cache[i].path);
    for (size_t i = 0; i < tops.n; i++)
        if (tops.v[i].n > max_new) {
            sw_begin(&W.out, SW_CAPPED);
            sw_str(&W.out, tops.v[i].dir);
            sw_u64(&W.out, (uint64_t)tops.v[i].n);
            send_or_die();
        }
    /* How many files will be read, said before the first: the server
     * shows it ("storing N/M") and chooses how to store them. */
    long to_read = 0;
    for (size_t k = 0; k < n_todo; k++)
        if (cache_find(r.v[todo[k]].path) || *count_for(&tops, r.v[todo[k]].path) <= max_new)
            to_read++;
    if (to_read)
        report(0, to_read, true);
    buf_t data;
    buf_init(&data);
    long sent = 0;
    for (size_t k = 0; k < n_todo; k++) {
        snap_walk_entry *e = &r.v[todo[k]];
        cent *c = cache_find(e->path);
        if (!c && *count_for(&tops, e->path) > max_new)
            continue;
        struct stat sb;
        const char *why;
        snap_read_result res = snap_read_entry(W.rootfd, e->path, W.max_size, &data, &sb, &why);
        snap_wire_stat st;
        snap_worker_stat(res == SNAP_READ_OK || res == SNAP_READ_LARGE ? &sb : &e->st, &st);
        switch (res) {
        case SNAP_READ_OK:
            send_file(e->path, &st, &data);
            snap_worker_norm(&st);
            if (c)
                c->st = st;
            else
                push_added(e->path, &st); /* merged below: the cache stays sorted for this loop's lookups */
            break;
        case SNAP_READ_LARGE:
            sw_begin(&W.out, SW_LARGE);
            sw_str(&W.out, e->path);
            sw_u64(&W.out, st.size);
            sw_u64(&W.out, (uint64_t)st.mtime_ns);
            sw_u32(&W.out, st.mode);
            send_or_die();
            if (c)
                c->seen = false;
            break;
        case SNAP_READ_GONE:
            if (c) {
                send_path(SW_DELETED, e->path);
                c->seen = false;
            }
            break;
        case SNAP_READ_INVALID:
            sw_begin(&W.out, SW_INVALID);
            sw_str(&W.out, e->path);
            sw_str(&W.out, why);
            send_or_die();
            if (c)
                c->seen = false;
            break;
        }
        if (++sent % 64 == 0 && now_ms() - W.last_beat >= 200)
            report(sent, to_read, true);
    }
    buf_free(&data);
    /* Entries that left the index while reading go from the cache; the
     * new ones come in. */
    size_t keep = 0;
    for (size_t i = 0; i < W.n_cache; i++) {
        if (W.cache[i].seen)
            W.cache[keep++] = W.cache[i];
        else
            free(W.cache[i].path);
    }
    W.cache = xrealloc(W.cache, (keep + W.n_added + 1) * sizeof *W.cache);
    if (W.n_added)
        memcpy(W.cache + keep, W.added, W.n_added * sizeof *W.added);
    W.n_cache = keep + W.n_added;
    free(W.added);
    W.added = NULL;
    W.n_added = W.cap_added = 0;
    if (W.n_cache)
        qsort(W.cache, W.n_cache, sizeof *W.cache, cent_cmp);
    /* Nested repositories, every time (their HEAD moves without any file
     * of the workspace changing), then the one around the workspace. */
    for (size_t i = 0; i < r.n; i++) {
        if (r.v[i].kind != SWK_GITLINK)
            continue;
        snap_gitdir g;
        char *abs = xasprintf("%s/%s", W.ws, r.v[i].path);
        snap_gitdir_read(abs, &g);
        free(abs);
        send_gitdir(SW_GITLINK, r.v[i].path, &g);
    }
    snap_enclosing enc;
    if (snap_gitdir_enclosing(W.ws, &enc)) {
        snap_gitdir g;
        snap_gitdir_read(enc.top, &g);
        send_gitdir(SW_AROUND, "", &g);
    }
    sw_begin(&W.out, SW_DONE);
    sw_u8(&W.out, 0);
    sw_u64(&W.out, (uint64_t)walk_start);
    sw_u64(&W.out, (uint64_t)r.files);
    sw_str(&W.out, "");
    send_now_or_die();
    for (size_t i = 0; i < tops.n; i++)
        free(tops.v[i].dir);
    free(tops.v);
    free(tops.slot);
    free(todo);
    snap_walk_result_free(&r);
    W.last_walk_ns = walk_start;
    W.have_snapshot = true;
}

static size_t watch_budget(void)
{
    size_t limit = 8192;
    char *text = snap_read_small("/proc/sys/fs/inotify/max_user_watches", 64, NULL);
    if (text) {
        long v = strtol(text, NULL, 10);
        if (v > 0)
            limit = (size_t)v;
        free(text);
    }
    /* A quarter of the user's limit: editors and other tools watch too. */
    size_t b = limit / 4;
    return b > 100000 ? 100000 : b;
}

int snap_worker_main(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] != '/') {
        fprintf(stderr, "corral __snapworker: started by the corral server only\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    W.chan = SNAP_WORKER_FD;
    sw_inbox_init(&W.inbox, W.chan);
    W.ws = argv[1];
    W.rootfd = open(W.ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (W.rootfd < 0)
        die("cannot open the workspace %s: %s", W.ws, strerror(errno));
    read_config();
    snap_watch_init(&W.watch, watch_budget());
    sw_begin(&W.out, SW_HELLO);
    send_now_or_die();
    for (;;) {
        snap_wire_in in;
        recv_or_die(&in);
        uint8_t force, first, seed, cap;
        uint32_t n_forget;
        if (in.type == SW_QUIT) {
            sw_in_free(&in);
            return 0;
        }
        if (in.type != SW_TAKE || !sw_get_u8(&in, &force) || !sw_get_u8(&in, &first) || !sw_get_u8(&in, &seed) ||
            !sw_get_u8(&in, &cap) || !sw_get_u32(&in, &n_forget))
            die("a malformed request from the server");
        for (uint32_t i = 0; i < n_forget; i++) {
            char *path;
            if (!sw_get_str(&in, &path, PATH_MAX))
                die("a malformed request from the server");
            cent *c = cache_find(path);
            if (c)
                c->st.mode = 0; /* matches no stat: read again */
            free(path);
        }
        if (!sw_done(&in))
            die("a malformed request from the server");
        sw_in_free(&in);
        take(force || n_forget > 0, first, seed, cap);
    }
}
