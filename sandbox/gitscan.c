/*
 * gitscan.c - the walk behind the nested-repository protection.
 *
 * Depth first, with a stack of paths rather than of open directories (no
 * descriptor limit however deep it goes).  Every directory is opened with
 * openat2(RESOLVE_NO_SYMLINKS): a sandbox swapping a directory for a
 * symlink while we walk cannot lead the scan out of the tree.  One listing
 * per directory tells both what to descend into and whether the directory
 * is a repository (an entry ".git") or a git directory (HEAD, objects and
 * refs), so no directory costs more than open, getdents64 and close.
 */
#include "config.h"

#include "gitscan.h"
#include "dents.h"
#include "sbutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct pending {
    char *path;
    int depth;
} pending;

typedef struct stack {
    pending *v;
    size_t n, cap;
} stack;

static void push(stack *s, char *path, int depth)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->v = sb_realloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n].path = path;
    s->v[s->n].depth = depth;
    s->n++;
}

static int open_dir(const char *path)
{
    struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

/* The type of entry name in the directory fd (DT_*): from getdents when the
 * file system says, else from fstatat. */
static unsigned char entry_type(int fd, const sb_dent *d)
{
    if (d->type != DT_UNKNOWN)
        return d->type;
    struct stat st;
    if (fstatat(fd, d->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return DT_UNKNOWN;
    return S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
}

/* A directory that cannot be opened: fine to pass over when nothing below
 * it is reachable to us (nor to a sandbox running as us), an error when we
 * could enter it or make it readable again. */
static int unreadable(const char *path, int e, char *err, size_t errlen)
{
    if (e == ENOENT || e == ENOTDIR || e == ELOOP)
        return 0; /* gone, or swapped for a file or symlink meanwhile */
    if (e == EACCES) {
        struct stat st;
        bool ours = lstat(path, &st) == 0 && st.st_uid == geteuid();
        if (!ours && access(path, X_OK) != 0)
            return 0;
        snprintf(err, errlen, "cannot look for git repositories in %s: %s (a sandboxed command could hide one "
                 "there and reach it later); make it readable (chmod u+rx %s) or remove it", path, strerror(e),
                 path);
        return -1;
    }
    snprintf(err, errlen, "cannot look for git repositories in %s: %s", path, strerror(e));
    return -1;
}

/* A directory at the last level, seen from its parent's descriptor: two
 * lookups instead of opening and listing it.  1: a work tree (has .git),
 * 2: a git directory, 0: neither. */
static int probe_leaf(int fd, const char *name)
{
    char p[NAME_MAX + 16];
    struct stat st;
    snprintf(p, sizeof p, "%s/HEAD", name);
    if (fstatat(fd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
        snprintf(p, sizeof p, "%s/objects", name);
        bool objects = fstatat(fd, p, &st, 0) == 0 && S_ISDIR(st.st_mode);
        snprintf(p, sizeof p, "%s/refs", name);
        if (objects && fstatat(fd, p, &st, 0) == 0 && S_ISDIR(st.st_mode))
            return 2;
    }
    snprintf(p, sizeof p, "%s/.git", name);
    return fstatat(fd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 1 : 0;
}

static bool skipped(const char *name, const char *const *skip)
{
    for (; skip && *skip; skip++)
        if (strcmp(name, *skip) == 0)
            return true;
    return false;
}

int sb_gitscan(const char *root, int max_depth, size_t *budget, const char *const *skip_top,
               const sb_gitscan_cb *cb, char *err, size_t errlen)
{
    stack st = {0};
    int rc = 0;
    push(&st, sb_strdup(root), 0);
    while (st.n > 0 && rc == 0) {
        pending cur = st.v[--st.n];
        if (*budget == 0) {
            free(cur.path);
            rc = SB_GITSCAN_BUDGET;
            break;
        }
        --*budget;
        int fd = open_dir(cur.path);
        if (fd < 0) {
            rc = unreadable(cur.path, errno, err, errlen);
            free(cur.path);
            continue;
        }
        bool dotgit = false, head = false, objects = false, refs = false;
        size_t first_child = st.n;
        const char *sep = strcmp(cur.path, "/") == 0 ? "" : "/";
        sb_dents ents;
        if (sb_dents_read(fd, &ents) < 0) {
            rc = unreadable(cur.path, errno, err, errlen);
            ents.n = 0;
            ents.v = NULL;
        }
        for (size_t i = 0; i < ents.n && rc == 0; i++) {
            const sb_dent *d = &ents.v[i];
            const char *name = d->name;
            if (strcmp(name, ".git") == 0) {
                dotgit = true;
                continue;
            }
            bool maybe_marker = strcmp(name, "HEAD") == 0 || strcmp(name, "objects") == 0 ||
                                strcmp(name, "refs") == 0;
            if (d->type != DT_DIR && d->type != DT_UNKNOWN && !maybe_marker)
                continue;
            unsigned char t = entry_type(fd, d);
            if (maybe_marker) {
                /* git's is_git_directory(): HEAD a file (or a symlink),
                 * objects and refs directories (symlinks work too). */
                if (name[0] == 'H')
                    head = t == DT_REG || t == DT_LNK;
                else if (name[0] == 'o')
                    objects = t == DT_DIR || t == DT_LNK;
                else
                    refs = t == DT_DIR || t == DT_LNK;
            }
            if (t != DT_DIR || (max_depth >= 0 && cur.depth >= max_depth))
                continue;
            if (cur.depth == 0 && skipped(name, skip_top))
                continue;
            if (max_depth < 0 || cur.depth + 1 < max_depth) {
                push(&st, sb_printf("%s%s%s", cur.path, sep, name), cur.depth + 1);
                continue;
            }
            if (*budget == 0) {
                rc = SB_GITSCAN_BUDGET;
                break;
            }
            --*budget;
            int kind = probe_leaf(fd, name);
            if (kind == 0)
                continue;
            char *leaf = sb_printf("%s%s%s", cur.path, sep, name);
            if (kind == 2)
                rc = cb->gitdir ? cb->gitdir(cb->user, leaf) : 0;
            else if (cb->worktree)
                rc = cb->worktree(cb->user, leaf);
            free(leaf);
        }
        sb_dents_free(&ents);
        close(fd);
        if (rc == 0 && head && objects && refs) {
            /* A git directory: its hooks and config are what matters, and
             * the caller protects them; its objects are not walked. */
            for (size_t i = first_child; i < st.n; i++)
                free(st.v[i].path);
            st.n = first_child;
            rc = cb->gitdir ? cb->gitdir(cb->user, cur.path) : 0;
        } else if (rc == 0 && dotgit && cur.depth > 0 && cb->worktree) {
            rc = cb->worktree(cb->user, cur.path);
        }
        free(cur.path);
    }
    for (size_t i = 0; i < st.n; i++)
        free(st.v[i].path);
    free(st.v);
    return rc;
}
