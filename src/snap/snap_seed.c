/*
 * snap_seed.c - see snap_seed.h.
 */
#include "config.h"

#include "snap/snap_seed.h"

#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOSEED_FILE "corral-noseed"

bool snap_seed_wanted(const snap_store *st)
{
    if (st->latest[0] || git_index_entrycount(st->index) > 0)
        return false;
    char *marker = xasprintf("%s/" NOSEED_FILE, st->dir);
    struct stat sb;
    bool given_up = lstat(marker, &sb) == 0;
    free(marker);
    return !given_up;
}

/* "pack-" and 40 or 64 lowercase hex digits: nothing else becomes a name
 * in the store. */
static bool pack_name_ok(const char *name)
{
    if (strncmp(name, "pack-", 5) != 0)
        return false;
    size_t n = strlen(name + 5);
    if (n != 40 && n != 64)
        return false;
    for (const char *p = name + 5; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

/* Copy what fd holds (a regular file of size bytes) to path, made anew. */
static int copy_to(int fd, uint64_t size, const char *path)
{
    int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
    if (out < 0)
        return -1;
    uint64_t done = 0;
    off_t in_off = 0;
    while (done < size) {
        ssize_t n = copy_file_range(fd, &in_off, out, NULL, (size_t)(size - done), 0);
        if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
            /* A plain copy. */
            char buf[1 << 16];
            ssize_t r = pread(fd, buf, sizeof buf, in_off);
            if (r <= 0 || write_all(out, buf, (size_t)r) < 0) {
                n = -1;
            } else {
                n = r;
                in_off += r;
            }
        }
        if (n <= 0) {
            int e = n == 0 ? EIO : errno;
            close(out);
            unlink(path);
            errno = e;
            return -1;
        }
        done += (uint64_t)n;
    }
    if (close(out) < 0) {
        unlink(path);
        return -1;
    }
    return 0;
}

int snap_seed_pack(snap_store *st, const char *name, int idx_fd, int pack_fd, char *err, size_t errlen)
{
    struct stat is, ps;
    if (!pack_name_ok(name) || fstat(idx_fd, &is) < 0 || fstat(pack_fd, &ps) < 0 || !S_ISREG(is.st_mode) ||
        !S_ISREG(ps.st_mode)) {
        snprintf(err, errlen, "a pack that is no pack");
        return -1;
    }
    if (st->seeded_bytes + (uint64_t)is.st_size + (uint64_t)ps.st_size > SNAP_SEED_MAX) {
        snprintf(err, errlen, "the workspace repository's packs are over %llu GiB: not copied",
                 (unsigned long long)(SNAP_SEED_MAX >> 30));
        return -1;
    }
    char *pack = xasprintf("%s/objects/pack/%s.pack", st->dir, name);
    char *idx = xasprintf("%s/objects/pack/%s.idx", st->dir, name);
    struct stat have;
    int rc = 0;
    /* The pack before its index: libgit2 finds a pack by its index. */
    if (lstat(idx, &have) < 0) {
        rc = copy_to(pack_fd, (uint64_t)ps.st_size, pack);
        if (rc == 0 && (rc = copy_to(idx_fd, (uint64_t)is.st_size, idx)) < 0)
            unlink(pack);
        if (rc < 0)
            snprintf(err, errlen, "cannot copy %s into the snapshot store: %s", name, strerror(errno));
    }
    if (rc == 0) {
        st->seeded = xrealloc(st->seeded, (st->n_seeded + 1) * sizeof *st->seeded);
        st->seeded[st->n_seeded++] = xstrdup(name);
        st->seeded_bytes += (uint64_t)is.st_size + (uint64_t)ps.st_size;
    }
    free(pack);
    free(idx);
    return rc;
}

bool snap_seed_has(snap_store *st, git_odb *odb, const git_oid *id, bool *bad)
{
    if (!git_odb_exists(odb, id))
        return false;
    if (!st->n_seeded)
        return true;
    /* Read back whole, the hash checked: a hostile index cannot claim
     * content its pack does not hold. */
    git_odb_object *o = NULL;
    if (git_odb_read(&o, odb, id) < 0) {
        git_error_clear();
        *bad = true;
        return false;
    }
    git_odb_object_free(o);
    return true;
}

static void free_seeded(snap_store *st)
{
    for (size_t i = 0; i < st->n_seeded; i++)
        free(st->seeded[i]);
    free(st->seeded);
    st->seeded = NULL;
    st->n_seeded = 0;
    st->seeded_bytes = 0;
}

void snap_seed_done(snap_store *st)
{
    free_seeded(st);
}

/* Remove the copied packs (the index first: libgit2 finds a pack by it). */
static void remove_seeded(snap_store *st)
{
    for (size_t i = 0; i < st->n_seeded; i++) {
        static const char *const exts[] = {".idx", ".pack", ".rev", NULL};
        for (const char *const *e = exts; *e; e++) {
            char *p = xasprintf("%s/objects/pack/%s%s", st->dir, st->seeded[i], *e);
            unlink(p);
            free(p);
        }
    }
    free_seeded(st);
}

void snap_seed_unfinished(snap_store *st)
{
    remove_seeded(st);
}

void snap_seed_abandon(snap_store *st)
{
    remove_seeded(st);
    char *marker = xasprintf("%s/" NOSEED_FILE, st->dir);
    int fd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0)
        close(fd);
    free(marker);
    /* libgit2 keeps packs it has opened: a fresh handle forgets them. */
    git_repository *repo = NULL;
    if (git_repository_open_bare(&repo, st->dir) == 0) {
        git_repository_free(st->repo);
        st->repo = repo;
        git_repository_set_index(st->repo, st->index);
    }
    git_error_clear();
}
