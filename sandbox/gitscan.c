/*
 * gitscan.c - the walk behind the nested-repository protection.
 *
 * Depth first, with a stack of paths rather than of open directories (no
 * descriptor limit however deep it goes).  Every directory is opened with
 * openat2(RESOLVE_NO_SYMLINKS): a sandbox swapping a directory for a
 * symlink while we walk cannot lead the scan out of the tree.  One listing
 * per directory tells both what to descend into and whether the directory
 * is a repository (an entry ".git") or a git directory (HEAD, objects and
 * refs), so no directory costs more than open, getdents64 and close, and
 * in the server, where listings are kept while inotify says their
 * directories are unchanged (dents.h), an unchanged one costs nothing.
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

/* What a listing says of its directory: 1 a work tree (an entry .git), 2
 * a git directory (git's is_git_directory(): HEAD a file or a symlink,
 * objects and refs directories or symlinks; a symlink counts whatever it
 * points to, so that the answer depends only on the directory's own
 * entries, which its watch sees change), 0 neither. */
static int kind_of(const sb_dents *ents)
{
    bool dotgit = false, head = false, objects = false, refs = false;
    for (size_t i = 0; i < ents->n; i++) {
        const sb_dent *d = &ents->v[i];
        if (strcmp(d->name, ".git") == 0)
            dotgit = true;
        else if (strcmp(d->name, "HEAD") == 0)
            head = d->type == DT_REG || d->type == DT_LNK;
        else if (strcmp(d->name, "objects") == 0)
            objects = d->type == DT_DIR || d->type == DT_LNK;
        else if (strcmp(d->name, "refs") == 0)
            refs = d->type == DT_DIR || d->type == DT_LNK;
    }
    return head && objects && refs ? 2 : dotgit ? 1 : 0;
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
        sb_dents ents;
        if (sb_dents_at(cur.path, cur.depth == 0, &ents) < 0) {
            rc = unreadable(cur.path, errno, err, errlen);
            free(cur.path);
            continue;
        }
        int kind = kind_of(&ents);
        size_t first_child = st.n;
        const char *sep = strcmp(cur.path, "/") == 0 ? "" : "/";
        for (size_t i = 0; i < ents.n && rc == 0; i++) {
            const sb_dent *d = &ents.v[i];
            const char *name = d->name;
            if (d->type != DT_DIR || strcmp(name, ".git") == 0 || kind == 2)
                continue;
            if (max_depth >= 0 && cur.depth >= max_depth)
                continue;
            if (cur.depth == 0 && skipped(name, skip_top))
                continue;
            char *child = sb_printf("%s%s%s", cur.path, sep, name);
            if (max_depth < 0 || cur.depth + 1 < max_depth) {
                push(&st, child, cur.depth + 1);
                continue;
            }
            /* A directory at the last level: only whether it is a
             * repository, from its own listing. */
            if (*budget == 0) {
                free(child);
                rc = SB_GITSCAN_BUDGET;
                break;
            }
            --*budget;
            sb_dents leaf;
            if (sb_dents_at(child, false, &leaf) < 0) {
                rc = unreadable(child, errno, err, errlen);
                free(child);
                continue;
            }
            int leaf_kind = kind_of(&leaf);
            sb_dents_free(&leaf);
            if (leaf_kind == 2)
                rc = cb->gitdir ? cb->gitdir(cb->user, child) : 0;
            else if (leaf_kind == 1 && cb->worktree)
                rc = cb->worktree(cb->user, child);
            free(child);
        }
        sb_dents_free(&ents);
        if (rc == 0 && kind == 2) {
            /* A git directory: its hooks and config are what matters, and
             * the caller protects them; its objects are not walked. */
            for (size_t i = first_child; i < st.n; i++)
                free(st.v[i].path);
            st.n = first_child;
            rc = cb->gitdir ? cb->gitdir(cb->user, cur.path) : 0;
        } else if (rc == 0 && kind == 1 && cur.depth > 0 && cb->worktree) {
            rc = cb->worktree(cb->user, cur.path);
        }
        free(cur.path);
    }
    for (size_t i = 0; i < st.n; i++)
        free(st.v[i].path);
    free(st.v);
    return rc;
}
