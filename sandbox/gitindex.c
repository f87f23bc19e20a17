/*
 * gitindex.c - the gitlinks of a git index file (gitformat-index(5)).
 *
 * Layout: "DIRC", a version (2, 3 or 4), an entry count; the entries; the
 * extensions; a checksum of hash_len bytes.  An entry: ctime, mtime (8
 * bytes each), dev, ino, mode, uid, gid, size (4 each), the object name
 * (hash_len), 16 bits of flags (the low 12 the name's length, 0xfff meaning
 * "longer: up to the NUL"), 16 more flag bits when flags has 0x4000, then
 * the name: NUL-terminated and padded with NULs to a multiple of 8 bytes
 * (versions 2 and 3), or in version 4 a varint saying how many bytes of the
 * previous name to drop, then the rest of the name and a NUL, unpadded.
 *
 * Sizes follow read-cache.c of git (create_from_disk), so an index git
 * reads is read the same; anything else is refused (-1), and the caller
 * then protects every repository it can find instead.  The file is read
 * with read(2), not mapped: a sandbox truncating it meanwhile must not
 * crash us.
 */
#include "config.h"

#include "gitindex.h"
#include "sbutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME_MASK 0x0fffu
#define FLAG_EXTENDED 0x4000u
#define MODE_TYPE 0170000u
#define MODE_GITLINK 0160000u
/* Entry bytes before the object name: ctime, mtime, dev, ino, mode, uid,
 * gid, size. */
#define STAT_BYTES 40u

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16(const unsigned char *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

/* git's decode_varint (varint.c): 7 bits a byte, high bit "more", each
 * continuation adding one.  false when it runs past end or overflows. */
static bool varint(const unsigned char **p, const unsigned char *end, size_t *out)
{
    const unsigned char *q = *p;
    if (q >= end)
        return false;
    unsigned c = *q++;
    uint64_t v = c & 127;
    while (c & 128) {
        if (q >= end || v + 1 > (UINT64_MAX >> 7))
            return false;
        c = *q++;
        v = ((v + 1) << 7) + (c & 127);
    }
    if (v > SIZE_MAX)
        return false;
    *p = q;
    *out = (size_t)v;
    return true;
}

/* A path git would accept for an entry (verify_path, roughly): no empty,
 * ".", ".." or ".git" component (in any case), not absolute. */
static bool path_ok(const char *p, size_t len)
{
    if (len == 0 || p[0] == '/' || p[len - 1] == '/')
        return false;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && p[i] != '/')
            continue;
        size_t n = i - start;
        const char *c = p + start;
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        if (n == 4 && c[0] == '.' && (c[1] | 32) == 'g' && (c[2] | 32) == 'i' && (c[3] | 32) == 't')
            return false;
        start = i + 1;
    }
    return true;
}

int sb_gitindex_parse(const unsigned char *data, size_t len, size_t hash_len, sb_gitlink_fn fn, void *user,
                      char *shared_hex, char *err, size_t errlen)
{
    shared_hex[0] = '\0';
    if (hash_len != 20 && hash_len != 32) {
        snprintf(err, errlen, "unknown object name length %zu", hash_len);
        return -1;
    }
    if (len < 12 + hash_len || memcmp(data, "DIRC", 4) != 0) {
        snprintf(err, errlen, "not a git index (no DIRC header)");
        return -1;
    }
    uint32_t version = be32(data + 4), count = be32(data + 8);
    if (version < 2 || version > 4) {
        snprintf(err, errlen, "index version %u is not one this reader knows (2, 3, 4)", version);
        return -1;
    }
    const unsigned char *p = data + 12, *end = data + len - hash_len;
    /* The smallest entry is STAT_BYTES + hash_len + 2 + 1 bytes: a count
     * the file cannot hold is refused before anything is allocated. */
    if ((uint64_t)count * (STAT_BYTES + hash_len + 3) > (uint64_t)(end - p)) {
        snprintf(err, errlen, "index claims %u entries, more than it can hold", count);
        return -1;
    }
    char *name = NULL; /* the current entry's full name (version 4 builds on it) */
    size_t name_len = 0, name_cap = 0;
    bool stripped_gitlink = false, stripped = false;
    int rc = 0;
    for (uint32_t i = 0; i < count && rc == 0; i++) {
        size_t fixed = STAT_BYTES + hash_len + 2;
        if ((size_t)(end - p) < fixed)
            goto truncated;
        uint32_t mode = be32(p + 24);
        unsigned flags = be16(p + STAT_BYTES + hash_len);
        if (flags & FLAG_EXTENDED) {
            fixed += 2;
            if ((size_t)(end - p) < fixed)
                goto truncated;
        }
        const unsigned char *n = p + fixed;
        size_t keep = 0; /* bytes of the previous name kept (version 4) */
        if (version == 4) {
            size_t strip;
            if (!varint(&n, end, &strip) || strip > name_len)
                goto malformed;
            keep = name_len - strip;
        }
        size_t tail;
        if ((flags & NAME_MASK) != NAME_MASK) {
            size_t full = flags & NAME_MASK;
            if (full < keep)
                goto malformed;
            tail = full - keep;
            if (tail > (size_t)(end - n) || memchr(n, '\0', tail))
                goto malformed;
        } else {
            const unsigned char *nul = memchr(n, '\0', (size_t)(end - n));
            if (!nul)
                goto truncated;
            tail = (size_t)(nul - n);
        }
        if (keep + tail + 1 > name_cap) {
            name_cap = keep + tail + 1;
            name = sb_realloc(name, name_cap);
        }
        memcpy(name + keep, n, tail);
        name_len = keep + tail;
        name[name_len] = '\0';
        /* The next entry: version 4 is unpadded; 2 and 3 pad the entry to
         * a multiple of 8 with 1 to 8 NULs. */
        size_t size = version == 4 ? (size_t)(n - p) + tail + 1 : (fixed + tail + 8) & ~(size_t)7;
        if (size > (size_t)(end - p))
            goto truncated;
        p += size;
        bool gitlink = (mode & MODE_TYPE) == MODE_GITLINK;
        if (name_len == 0) {
            /* A split index writes the entries it replaces without a name
             * (the shared index has it): which path such a gitlink has is
             * not known here. */
            stripped = true;
            stripped_gitlink |= gitlink;
            continue;
        }
        if (gitlink) {
            if (!path_ok(name, name_len))
                goto malformed;
            rc = fn(user, name);
        }
    }
    if (rc != 0)
        goto out;
    /* Extensions: a 4-byte signature, a 32-bit size, the data. */
    bool linked = false;
    while ((size_t)(end - p) >= 8) {
        uint32_t size = be32(p + 4);
        if (size > (size_t)(end - p) - 8)
            goto truncated;
        if (memcmp(p, "link", 4) == 0) {
            if (size < hash_len)
                goto malformed;
            bool null = true;
            for (size_t k = 0; k < hash_len; k++) {
                sprintf(shared_hex + 2 * k, "%02x", p[8 + k]);
                null &= p[8 + k] == 0;
            }
            if (null)
                shared_hex[0] = '\0';
            linked = true;
        } else if (p[0] < 'A' || p[0] > 'Z') {
            /* git refuses an index with a required extension it does not
             * know; so do we.  Its signature is any four bytes: the ones
             * that are not printable are shown in hex, so the message stays
             * one line of text. */
            char sig[4 * 4 + 1];
            size_t k = 0;
            for (size_t j = 0; j < 4; j++) {
                if (p[j] > ' ' && p[j] < 0x7f && p[j] != '\\')
                    sig[k++] = (char)p[j];
                else
                    k += (size_t)snprintf(sig + k, sizeof sig - k, "\\x%02x", p[j]);
            }
            sig[k] = '\0';
            snprintf(err, errlen, "index has an extension this reader does not know (%s)", sig);
            rc = -1;
            goto out;
        }
        p += 8 + size;
    }
    /* Fewer than 8 bytes left over: git ignores them too. */
    if (stripped && !linked)
        goto malformed;
    if (stripped_gitlink) {
        snprintf(err, errlen, "a split index replaces a gitlink whose path only its bitmaps name");
        rc = -1;
    }
    goto out;
truncated:
    snprintf(err, errlen, "index is truncated or its sizes do not add up");
    rc = -1;
    goto out;
malformed:
    snprintf(err, errlen, "index has a malformed entry name");
    rc = -1;
out:
    free(name);
    return rc;
}

/* The whole regular file at path (at most SB_GITINDEX_MAX_BYTES); NULL with
 * *absent when it does not exist, NULL with err otherwise. */
static unsigned char *slurp(const char *path, size_t *len, bool *absent, struct stat *id, char *err, size_t errlen)
{
    *absent = false;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT) {
            *absent = true;
            return NULL;
        }
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (unsigned long long)st.st_size > SB_GITINDEX_MAX_BYTES) {
        snprintf(err, errlen, "%s is not a regular file of at most %llu bytes", path, SB_GITINDEX_MAX_BYTES);
        close(fd);
        return NULL;
    }
    size_t size = (size_t)st.st_size, got = 0;
    /* Not zeroed: every byte is read into (an index can be many MiB). */
    unsigned char *data = malloc(size + 1);
    if (!data) {
        snprintf(err, errlen, "%s: no memory for %zu bytes", path, size + 1);
        close(fd);
        return NULL;
    }
    while (got < size) {
        ssize_t n = read(fd, data + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    /* What it was while read: the same file, unchanged (a writer in place
     * changes its ctime) and settled (sbutil.h: an inode given out again in
     * the same clock tick would keep the times), or no identity to
     * remember it by. */
    struct stat after;
    if (fstat(fd, &after) == 0 && after.st_ino == st.st_ino && after.st_dev == st.st_dev &&
        after.st_size == st.st_size && after.st_mtim.tv_sec == st.st_mtim.tv_sec &&
        after.st_mtim.tv_nsec == st.st_mtim.tv_nsec && after.st_ctim.tv_sec == st.st_ctim.tv_sec &&
        after.st_ctim.tv_nsec == st.st_ctim.tv_nsec && sb_times_settled(&after))
        *id = st;
    else
        memset(id, 0, sizeof *id);
    close(fd);
    if (got != size) {
        snprintf(err, errlen, "%s changed while it was read", path);
        free(data);
        return NULL;
    }
    *len = size;
    return data;
}

/* ---- remembered parses ------------------------------------------------- */

/* The server compiles a plan for every command, and a large repository's
 * index is many MiB: a parse is remembered by the file's identity (device,
 * inode, size, mtime and ctime: a write in place changes the ctime, which
 * nobody can set back), and replayed while the file is the same.  Only a
 * file that did not change while it was read, and whose last change had
 * settled (sb_times_settled), is remembered. */
#define MEMO_SLOTS 8

typedef struct memo {
    char *path;
    struct stat id;
    size_t hash_len;
    char **links;
    size_t n;
    char shared[2 * 32 + 1];
    unsigned long used;
} memo;

static memo memos[MEMO_SLOTS];
static unsigned long memo_clock;
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

typedef struct collected {
    char **links;
    size_t n, cap;
} collected;

static int collect(void *user, const char *path)
{
    collected *c = user;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->links = sb_realloc(c->links, c->cap * sizeof *c->links);
    }
    c->links[c->n++] = sb_strdup(path);
    return 0;
}

static void collected_free(collected *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->links[i]);
    free(c->links);
}

/* A remembered parse of path as it is now (a copy, in c and shared), or
 * false. */
static bool memo_find(const char *path, size_t hash_len, collected *c, char *shared)
{
    struct stat now;
    if (stat(path, &now) < 0 || !S_ISREG(now.st_mode))
        return false;
    bool found = false;
    pthread_mutex_lock(&memo_lock);
    for (size_t i = 0; i < MEMO_SLOTS && !found; i++) {
        memo *m = &memos[i];
        if (!m->path || strcmp(m->path, path) != 0 || m->hash_len != hash_len || !same_file(&m->id, &now))
            continue;
        for (size_t k = 0; k < m->n; k++)
            collect(c, m->links[k]);
        memcpy(shared, m->shared, sizeof m->shared);
        m->used = ++memo_clock;
        found = true;
    }
    pthread_mutex_unlock(&memo_lock);
    return found;
}

static void memo_keep(const char *path, const struct stat *id, size_t hash_len, const collected *c, const char *shared)
{
    if (id->st_ino == 0 && id->st_dev == 0)
        return; /* it changed while it was read */
    pthread_mutex_lock(&memo_lock);
    memo *slot = &memos[0];
    for (size_t i = 0; i < MEMO_SLOTS; i++) {
        if (memos[i].path && strcmp(memos[i].path, path) == 0) {
            slot = &memos[i];
            break;
        }
        if (memos[i].used < slot->used)
            slot = &memos[i];
    }
    free(slot->path);
    for (size_t k = 0; k < slot->n; k++)
        free(slot->links[k]);
    free(slot->links);
    slot->path = sb_strdup(path);
    slot->id = *id;
    slot->hash_len = hash_len;
    slot->links = c->n ? sb_alloc(c->n * sizeof *slot->links) : NULL;
    for (size_t k = 0; k < c->n; k++)
        slot->links[k] = sb_strdup(c->links[k]);
    slot->n = c->n;
    memcpy(slot->shared, shared, sizeof slot->shared);
    slot->used = ++memo_clock;
    pthread_mutex_unlock(&memo_lock);
}

/* The gitlinks of one index file (fn for each) and the shared index it
 * names; absent when there is no such file.  0, fn's result, or -1. */
static int one_index(const char *file, size_t hash_len, sb_gitlink_fn fn, void *user, char *shared, bool *absent,
                     char *err, size_t errlen)
{
    *absent = false;
    collected c = {0};
    int rc = 0;
    if (!memo_find(file, hash_len, &c, shared)) {
        size_t len = 0;
        struct stat id;
        unsigned char *data = slurp(file, &len, absent, &id, err, errlen);
        if (!data)
            return -1;
        char e[256];
        rc = sb_gitindex_parse(data, len, hash_len, collect, &c, shared, e, sizeof e);
        free(data);
        if (rc < 0) {
            snprintf(err, errlen, "%s: %s", file, e);
            collected_free(&c);
            return -1;
        }
        memo_keep(file, &id, hash_len, &c, shared);
    }
    for (size_t i = 0; i < c.n && rc == 0; i++)
        rc = fn(user, c.links[i]);
    collected_free(&c);
    return rc;
}

int sb_gitindex_gitlinks(const char *path, size_t hash_len, sb_gitlink_fn fn, void *user, char *err,
                         size_t errlen)
{
    char shared[2 * 32 + 1];
    char *file = sb_strdup(path);
    int rc = 0;
    /* The index, then the shared index it may link to (which links to
     * nothing further). */
    for (int round = 0; round < 2 && rc == 0; round++) {
        bool absent;
        rc = one_index(file, hash_len, fn, user, shared, &absent, err, errlen);
        if (rc < 0 && absent) {
            rc = round == 0 ? 0 : -1;
            if (round == 1)
                snprintf(err, errlen, "the split index's shared index %s is missing", file);
            break;
        }
        if (rc != 0 || !shared[0])
            break;
        if (round == 1) {
            snprintf(err, errlen, "%s: a shared index links to another one", file);
            rc = -1;
            break;
        }
        char *dir = sb_strdup(path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        free(file);
        file = sb_printf("%s/sharedindex.%s", slash ? dir : ".", shared);
        free(dir);
    }
    free(file);
    return rc;
}
