/*
 * snap_pack.c - see snap_pack.h.
 */
#include "config.h"

#include "snap/snap_pack.h"

#include "base/util.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- SHA-1 (the pack's and its index's trailers) --------------------------------- */

typedef struct sha1_ctx {
    uint32_t h[5];
    uint64_t len;
    unsigned char block[64];
    size_t fill;
} sha1_ctx;

static uint32_t rol(uint32_t x, int n)
{
    return (x << n) | (x >> (32 - n));
}

static void sha1_block(sha1_ctx *c, const unsigned char *p)
{
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = c->h[0], b = c->h[1], d = c->h[3], e = c->h[4], cc = c->h[2];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) {
            f = (b & cc) | (~b & d);
            k = 0x5a827999;
        } else if (i < 40) {
            f = b ^ cc ^ d;
            k = 0x6ed9eba1;
        } else if (i < 60) {
            f = (b & cc) | (b & d) | (cc & d);
            k = 0x8f1bbcdc;
        } else {
            f = b ^ cc ^ d;
            k = 0xca62c1d6;
        }
        uint32_t t = rol(a, 5) + f + e + k + w[i];
        e = d;
        d = cc;
        cc = rol(b, 30);
        b = a;
        a = t;
    }
    c->h[0] += a;
    c->h[1] += b;
    c->h[2] += cc;
    c->h[3] += d;
    c->h[4] += e;
}

static void sha1_init(sha1_ctx *c)
{
    *c = (sha1_ctx){.h = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0}};
}

static void sha1_update(sha1_ctx *c, const void *data, size_t len)
{
    const unsigned char *p = data;
    c->len += len;
    while (len) {
        if (c->fill == 0 && len >= 64) {
            sha1_block(c, p);
            p += 64;
            len -= 64;
            continue;
        }
        size_t n = 64 - c->fill < len ? 64 - c->fill : len;
        memcpy(c->block + c->fill, p, n);
        c->fill += n;
        p += n;
        len -= n;
        if (c->fill == 64) {
            sha1_block(c, c->block);
            c->fill = 0;
        }
    }
}

static void sha1_final(sha1_ctx *c, unsigned char out[20])
{
    uint64_t bits = c->len * 8;
    unsigned char pad[72] = {0x80};
    size_t n = c->fill < 56 ? 56 - c->fill : 120 - c->fill;
    for (int i = 0; i < 8; i++)
        pad[n + i] = (unsigned char)(bits >> (56 - 8 * i));
    sha1_update(c, pad, n + 8);
    for (int i = 0; i < 20; i++)
        out[i] = (unsigned char)(c->h[i / 4] >> (24 - 8 * (i % 4)));
}

void snap_sha1(const void *data, size_t len, unsigned char out[20])
{
    sha1_ctx c;
    sha1_init(&c);
    sha1_update(&c, data, len);
    sha1_final(&c, out);
}

/* ---- zlib, from the process's libgit2 ------------------------------------------- */

static struct {
    pthread_once_t once;
    int (*deflate_init)(z_streamp, int, const char *, int);
    int (*deflate)(z_streamp, int);
    int (*deflate_end)(z_streamp);
    uLong (*bound)(z_streamp, uLong);
    uLong (*crc32)(uLong, const Bytef *, uInt);
} Z = {.once = PTHREAD_ONCE_INIT};

static void load_zlib(void)
{
    void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    Z.deflate_init = (int (*)(z_streamp, int, const char *, int))dlsym(h, "deflateInit_");
    Z.deflate = (int (*)(z_streamp, int))dlsym(h, "deflate");
    Z.deflate_end = (int (*)(z_streamp))dlsym(h, "deflateEnd");
    Z.bound = (uLong(*)(z_streamp, uLong))dlsym(h, "deflateBound");
    Z.crc32 = (uLong(*)(uLong, const Bytef *, uInt))dlsym(h, "crc32");
    if (!Z.deflate_init || !Z.deflate || !Z.deflate_end || !Z.bound || !Z.crc32)
        Z.deflate_init = NULL;
}

/* ---- the jobs --------------------------------------------------------------------- */

/* In flight at once: enough to keep the workers busy while the adding
 * thread receives, little enough to bound memory (a file is at most the
 * store's read cap). */
#define QUEUE_MAX 256
#define INFLIGHT_BYTES ((size_t)64 << 20)

enum { JOB_QUEUED, JOB_TAKEN, JOB_DONE };

typedef struct job {
    char *data;
    size_t len;
    void *item;
    int state;
    bool failed;
    git_oid id;
    unsigned char *z; /* the pack entry: its header and the compressed bytes */
    size_t zlen;
    uint32_t crc;
} job;

typedef struct entry {
    git_oid id;
    uint32_t crc;
    uint64_t offset;
} entry;

struct snap_pack {
    char *dir, *tmp_pack;
    int fd;
    uint64_t offset;
    unsigned char *wbuf;
    size_t wlen;
    snap_pack_done_fn done;
    void *ctx;
    entry *v;
    size_t n, cap;
    size_t *seen; /* open addressing over v: index + 1, 0 empty */
    size_t seen_cap;
    pthread_mutex_t lock;
    pthread_cond_t work, finished;
    job ring[QUEUE_MAX];
    size_t head, take, tail; /* next to write, next for a worker, next free */
    size_t bytes;            /* of data in flight */
    bool stop;
    pthread_t *threads;
    int n_threads;
};

#define WBUF ((size_t)1 << 20)

/* A pack entry's header: type and size, seven bits a byte after the first four. */
static size_t entry_header(unsigned char *out, size_t len)
{
    size_t n = 0;
    unsigned char c = (unsigned char)((GIT_OBJECT_BLOB << 4) | (len & 15));
    len >>= 4;
    while (len) {
        out[n++] = c | 0x80;
        c = len & 0x7f;
        len >>= 7;
    }
    out[n++] = c;
    return n;
}

/* One object's id and pack entry, off the adding thread. */
static void make_entry(job *j)
{
    if (git_odb_hash(&j->id, j->data, j->len, GIT_OBJECT_BLOB) < 0) {
        j->failed = true;
        return;
    }
    z_stream s;
    memset(&s, 0, sizeof s);
    /* Fastest, as libgit2 writes loose objects: the store's maintenance
     * packs them again tighter. */
    if (Z.deflate_init(&s, Z_BEST_SPEED, ZLIB_VERSION, (int)sizeof s) != Z_OK) {
        j->failed = true;
        return;
    }
    size_t cap = 16 + Z.bound(&s, (uLong)j->len);
    j->z = xmalloc(cap);
    size_t h = entry_header(j->z, j->len);
    s.next_in = (Bytef *)j->data;
    s.avail_in = (uInt)j->len;
    s.next_out = j->z + h;
    s.avail_out = (uInt)(cap - h);
    int rc = Z.deflate(&s, Z_FINISH);
    Z.deflate_end(&s);
    if (rc != Z_STREAM_END) {
        j->failed = true;
        return;
    }
    j->zlen = cap - s.avail_out;
    j->crc = (uint32_t)Z.crc32(Z.crc32(0, NULL, 0), j->z, (uInt)j->zlen);
}

static void *worker(void *arg)
{
    snap_pack *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && p->take == p->tail)
            pthread_cond_wait(&p->work, &p->lock);
        if (p->stop)
            break;
        job *j = &p->ring[p->take++ % QUEUE_MAX];
        j->state = JOB_TAKEN;
        pthread_mutex_unlock(&p->lock);
        make_entry(j);
        free(j->data);
        j->data = NULL;
        pthread_mutex_lock(&p->lock);
        j->state = JOB_DONE;
        pthread_cond_broadcast(&p->finished);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* ---- the pack file ---------------------------------------------------------------- */

static int flush_wbuf(snap_pack *p)
{
    int rc = write_all(p->fd, p->wbuf, p->wlen);
    p->wlen = 0;
    return rc;
}

static int append(snap_pack *p, const void *data, size_t len)
{
    if (p->wlen + len > WBUF && flush_wbuf(p) < 0)
        return -1;
    if (len > WBUF)
        return write_all(p->fd, data, len);
    memcpy(p->wbuf + p->wlen, data, len);
    p->wlen += len;
    return 0;
}

static size_t oid_slot(const git_oid *id, size_t cap)
{
    uint64_t h;
    memcpy(&h, id->id, sizeof h);
    return (size_t)(h & (cap - 1));
}

/* Is id in the pack already?  (The same content twice is one object.) */
static bool seen_or_note(snap_pack *p, const git_oid *id)
{
    if ((p->n + 1) * 2 > p->seen_cap) {
        size_t cap = p->seen_cap ? p->seen_cap * 2 : 4096;
        size_t *t = xcalloc(cap, sizeof *t);
        for (size_t i = 0; i < p->n; i++) {
            size_t s = oid_slot(&p->v[i].id, cap);
            while (t[s])
                s = (s + 1) & (cap - 1);
            t[s] = i + 1;
        }
        free(p->seen);
        p->seen = t;
        p->seen_cap = cap;
    }
    size_t s = oid_slot(id, p->seen_cap);
    for (; p->seen[s]; s = (s + 1) & (p->seen_cap - 1))
        if (memcmp(p->v[p->seen[s] - 1].id.id, id->id, GIT_OID_RAWSZ) == 0)
            return true;
    p->seen[s] = p->n + 1;
    return false;
}

/* The finished job at the head: into the pack (once per id), then to done. */
static int write_head(snap_pack *p, job *j, char *err, size_t errlen)
{
    if (j->failed) {
        free(j->z);
        j->z = NULL;
        snprintf(err, errlen, "cannot hash or compress a file for the pack");
        return -1;
    }
    if (!seen_or_note(p, &j->id)) {
        if (p->n == p->cap) {
            p->cap = p->cap ? p->cap * 2 : 1024;
            p->v = xrealloc(p->v, p->cap * sizeof *p->v);
        }
        p->v[p->n++] = (entry){j->id, j->crc, p->offset};
        if (append(p, j->z, j->zlen) < 0) {
            snprintf(err, errlen, "cannot write the pack %s: %s", p->tmp_pack, strerror(errno));
            return -1;
        }
        p->offset += j->zlen;
    }
    free(j->z);
    j->z = NULL;
    git_oid id = j->id;
    void *item = j->item;
    j->item = NULL;
    if (p->done(p->ctx, item, &id) < 0) {
        snprintf(err, errlen, "the snapshot stopped");
        return -1;
    }
    return 0;
}

/* Write what is finished at the head, in order; then wait for more until
 * all is written (all) or there is room for one more.  0, or -1 with err. */
static int settle(snap_pack *p, bool all, char *err, size_t errlen)
{
    pthread_mutex_lock(&p->lock);
    for (;;) {
        job *j = &p->ring[p->head % QUEUE_MAX];
        if (p->head < p->tail && j->state == JOB_DONE) {
            p->bytes -= j->len;
            pthread_mutex_unlock(&p->lock);
            /* The slot stays ours: only this thread adds. */
            int rc = write_head(p, j, err, errlen);
            pthread_mutex_lock(&p->lock);
            p->head++;
            if (rc < 0)
                break;
            continue;
        }
        bool room = p->tail - p->head < QUEUE_MAX && p->bytes < INFLIGHT_BYTES;
        if (p->head == p->tail || (!all && room)) {
            pthread_mutex_unlock(&p->lock);
            return 0;
        }
        pthread_cond_wait(&p->finished, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return -1;
}

snap_pack *snap_pack_begin(const char *objects_dir, int threads, snap_pack_done_fn done, void *ctx, char *err,
                           size_t errlen)
{
    pthread_once(&Z.once, load_zlib);
    if (!Z.deflate_init) {
        snprintf(err, errlen, "zlib (libz.so.1) cannot be loaded");
        return NULL;
    }
    snap_pack *p = xcalloc(1, sizeof *p);
    p->dir = xasprintf("%s/pack", objects_dir);
    p->tmp_pack = xasprintf("%s/tmp_snap_XXXXXX", p->dir);
    p->fd = mkostemp(p->tmp_pack, O_CLOEXEC);
    if (p->fd < 0) {
        snprintf(err, errlen, "cannot make a pack in %s: %s", p->dir, strerror(errno));
        free(p->dir);
        free(p->tmp_pack);
        free(p);
        return NULL;
    }
    fchmod(p->fd, 0444);
    p->done = done;
    p->ctx = ctx;
    p->wbuf = xmalloc(WBUF);
    /* The header; its count is written when the pack is finished. */
    static const unsigned char hdr[12] = {'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0};
    append(p, hdr, sizeof hdr);
    p->offset = sizeof hdr;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->finished, NULL);
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n < 1 ? 1 : n > 4 ? 4 : (int)n;
    }
    p->threads = xcalloc((size_t)threads, sizeof *p->threads);
    for (int i = 0; i < threads; i++)
        if (pthread_create(&p->threads[p->n_threads], NULL, worker, p) == 0)
            p->n_threads++;
    if (!p->n_threads) {
        snprintf(err, errlen, "cannot start a thread to hash the snapshot's files");
        snap_pack_abort(p, NULL);
        return NULL;
    }
    return p;
}

int snap_pack_add(snap_pack *p, char *data, size_t len, void *item, char *err, size_t errlen)
{
    /* Room first: what is finished goes into the pack while we wait. */
    if (settle(p, false, err, errlen) < 0) {
        free(data);
        return -1;
    }
    pthread_mutex_lock(&p->lock);
    job *j = &p->ring[p->tail % QUEUE_MAX];
    *j = (job){.data = data, .len = len, .item = item, .state = JOB_QUEUED};
    p->tail++;
    p->bytes += len;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    return 0;
}

int snap_pack_drain(snap_pack *p, char *err, size_t errlen)
{
    return settle(p, true, err, errlen);
}

static void stop_workers(snap_pack *p)
{
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    p->n_threads = 0;
}

static void pack_free(snap_pack *p, void (*free_item)(void *item))
{
    stop_workers(p);
    for (size_t i = p->head; i < p->tail; i++) {
        job *j = &p->ring[i % QUEUE_MAX];
        free(j->data);
        free(j->z);
        if (free_item && j->item)
            free_item(j->item);
    }
    if (p->fd >= 0)
        close(p->fd);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->finished);
    free(p->threads);
    free(p->wbuf);
    free(p->v);
    free(p->seen);
    free(p->dir);
    free(p->tmp_pack);
    free(p);
}

void snap_pack_abort(snap_pack *p, void (*free_item)(void *item))
{
    if (!p)
        return;
    unlink(p->tmp_pack);
    pack_free(p, free_item);
}

static void put32(buf_t *b, uint32_t v)
{
    unsigned char c[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                          (unsigned char)v};
    buf_append(b, c, 4);
}

static int entry_cmp(const void *a, const void *b)
{
    return memcmp(((const entry *)a)->id.id, ((const entry *)b)->id.id, GIT_OID_RAWSZ);
}

/* The pack's count in its header, then its trailer: the SHA-1 of all of it
 * (read back: the count is known only now). */
static int seal_pack(snap_pack *p, unsigned char sum[20])
{
    unsigned char count[4] = {(unsigned char)(p->n >> 24), (unsigned char)(p->n >> 16),
                              (unsigned char)(p->n >> 8), (unsigned char)p->n};
    if (flush_wbuf(p) < 0 || pwrite(p->fd, count, 4, 8) != 4)
        return -1;
    sha1_ctx c;
    sha1_init(&c);
    for (uint64_t off = 0; off < p->offset;) {
        size_t want = p->offset - off < WBUF ? (size_t)(p->offset - off) : WBUF;
        ssize_t n = pread(p->fd, p->wbuf, want, (off_t)off);
        if (n <= 0)
            return -1;
        sha1_update(&c, p->wbuf, (size_t)n);
        off += (uint64_t)n;
    }
    sha1_final(&c, sum);
    return write_all(p->fd, sum, 20);
}

/* The pack's index, version 2: fan-out, ids, CRCs, offsets (those past
 * 2 GiB in a table of their own), the pack's checksum and its own. */
static void build_index(snap_pack *p, const unsigned char pack_sum[20], buf_t *b)
{
    qsort(p->v, p->n, sizeof *p->v, entry_cmp);
    static const unsigned char magic[8] = {0xff, 't', 'O', 'c', 0, 0, 0, 2};
    buf_append(b, magic, sizeof magic);
    size_t k = 0;
    for (int byte = 0; byte < 256; byte++) {
        while (k < p->n && p->v[k].id.id[0] == byte)
            k++;
        put32(b, (uint32_t)k);
    }
    for (size_t i = 0; i < p->n; i++)
        buf_append(b, p->v[i].id.id, GIT_OID_RAWSZ);
    for (size_t i = 0; i < p->n; i++)
        put32(b, p->v[i].crc);
    uint32_t large = 0;
    for (size_t i = 0; i < p->n; i++)
        put32(b, p->v[i].offset < 0x80000000u ? (uint32_t)p->v[i].offset : 0x80000000u | large++);
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i].offset >= 0x80000000u) {
            put32(b, (uint32_t)(p->v[i].offset >> 32));
            put32(b, (uint32_t)p->v[i].offset);
        }
    buf_append(b, pack_sum, 20);
    unsigned char sum[20];
    snap_sha1(b->data, b->len, sum);
    buf_append(b, sum, 20);
}

int snap_pack_finish(snap_pack *p, char *err, size_t errlen)
{
    if (snap_pack_drain(p, err, errlen) < 0) {
        snap_pack_abort(p, NULL);
        return -1;
    }
    stop_workers(p);
    if (!p->n) {
        snap_pack_abort(p, NULL);
        return 0;
    }
    unsigned char sum[20];
    if (seal_pack(p, sum) < 0) {
        snprintf(err, errlen, "cannot write the pack %s: %s", p->tmp_pack, strerror(errno));
        snap_pack_abort(p, NULL);
        return -1;
    }
    char hex[41];
    for (int i = 0; i < 20; i++)
        snprintf(hex + 2 * i, 3, "%02x", sum[i]);
    buf_t idx;
    buf_init(&idx);
    build_index(p, sum, &idx);
    char *tmp_idx = xasprintf("%s.idx", p->tmp_pack);
    char *pack = xasprintf("%s/pack-%s.pack", p->dir, hex);
    char *idxp = xasprintf("%s/pack-%s.idx", p->dir, hex);
    int fd = open(tmp_idx, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
    int rc = fd >= 0 && write_all(fd, idx.data, idx.len) == 0 ? 0 : -1;
    if (fd >= 0 && close(fd) < 0)
        rc = -1;
    /* The pack before its index: a pack is seen through its index. */
    if (rc == 0 && rename(p->tmp_pack, pack) < 0)
        rc = -1;
    if (rc == 0 && rename(tmp_idx, idxp) < 0) {
        rc = -1;
        unlink(pack);
    }
    if (rc < 0) {
        snprintf(err, errlen, "cannot write the pack %s: %s", pack, strerror(errno));
        unlink(tmp_idx);
        unlink(p->tmp_pack);
    }
    buf_free(&idx);
    free(tmp_idx);
    free(pack);
    free(idxp);
    pack_free(p, NULL);
    return rc;
}
