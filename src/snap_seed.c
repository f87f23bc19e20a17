/*
 * snap_seed.c - see snap_seed.h.
 */
#include "config.h"

#include "snap_seed.h"

#include "snap_gitdir.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Hard-link each pack (with its index) of the user's repository into the
 * store.  Only regular files are linked; the count is returned. */
static int link_packs(snap_store *st, const char *commondir)
{
    char src[PATH_MAX + 64], dst[PATH_MAX * 2];
    snprintf(src, sizeof src, "%s/objects/pack", commondir);
    DIR *d = opendir(src);
    if (!d)
        return 0;
    int linked = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 10 || strncmp(e->d_name, "pack-", 5) != 0 || strcmp(e->d_name + n - 5, ".pack") != 0)
            continue;
        char base[NAME_MAX + 1];
        snprintf(base, sizeof base, "%.*s", (int)(n - 5), e->d_name);
        bool ok = true;
        static const char *const exts[] = {".idx", ".pack"}; /* the index first: a pack without one is unused */
        for (int k = 0; k < 2 && ok; k++) {
            char from[PATH_MAX * 2];
            snprintf(from, sizeof from, "%s/%s%s", src, base, exts[k]);
            snprintf(dst, sizeof dst, "%s/objects/pack/%s%s", st->dir, base, exts[k]);
            struct stat sb;
            if (lstat(from, &sb) < 0 || !S_ISREG(sb.st_mode)) {
                ok = false;
                break;
            }
            if (link(from, dst) < 0 && errno != EEXIST)
                ok = false;
        }
        if (!ok) {
            /* Another filesystem (EXDEV), or not allowed: none of this pack. */
            snprintf(dst, sizeof dst, "%s/objects/pack/%s.idx", st->dir, base);
            unlink(dst);
            snprintf(dst, sizeof dst, "%s/objects/pack/%s.pack", st->dir, base);
            unlink(dst);
            continue;
        }
        linked++;
    }
    closedir(d);
    return linked;
}

/* The user's index (stat data and ids of the files git tracks there),
 * the part under the workspace, into ours: a file whose stat data still
 * match is then known without reading it.  An entry git itself would
 * re-check (modified in the second its index was written: "racily
 * clean") keeps only its id and is hashed.  -1: no usable index. */
static int seed_from_index(snap_store *st, const snap_enclosing *enc)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/index", enc->gitdir);
    struct stat sb;
    if (lstat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
        return -1;
    git_index *user = NULL;
    if (git_index_open(&user, path) < 0) {
        git_error_clear(); /* a format libgit2 does not read (split index...) */
        return -1;
    }
    size_t plen = strlen(enc->prefix);
    size_t n = git_index_entrycount(user), added = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const git_index_entry *e = git_index_get_byindex(user, i);
        if (!e || GIT_INDEX_ENTRY_STAGE(e) != 0 ||
            (e->flags_extended & (GIT_INDEX_ENTRY_INTENT_TO_ADD | GIT_INDEX_ENTRY_SKIP_WORKTREE)))
            continue;
        const char *rel = e->path;
        if (plen) {
            if (strncmp(rel, enc->prefix, plen) != 0 || rel[plen] != '/')
                continue;
            rel += plen + 1;
        }
        git_index_entry copy = *e;
        copy.path = rel;
        copy.flags = 0;
        copy.flags_extended = 0;
        bool racy = e->mtime.seconds > (int32_t)sb.st_mtim.tv_sec ||
                    (e->mtime.seconds == (int32_t)sb.st_mtim.tv_sec && e->mtime.nanoseconds >= (uint32_t)sb.st_mtim.tv_nsec);
        if (racy || e->mode == GIT_FILEMODE_COMMIT) {
            /* Hashed again (or, a gitlink, read again) by the refresh. */
            memset(&copy.ctime, 0, sizeof copy.ctime);
            memset(&copy.mtime, 0, sizeof copy.mtime);
            copy.dev = copy.ino = copy.uid = copy.gid = 0;
            copy.file_size = 0;
        }
        if (git_index_add(st->index, &copy) < 0) {
            git_error_clear(); /* a name our index refuses: the walk finds it */
            continue;
        }
        added++;
    }
    git_index_free(user);
    return added ? 0 : -1;
}

int snap_seed(snap_store *st)
{
    snap_enclosing enc;
    if (!snap_gitdir_enclosing(st->ws, &enc))
        return -1;
    char head[SNAP_HEX_OID + 1] = "";
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/HEAD", enc.gitdir);
    char *text = snap_read_small(path, 4096, NULL);
    if (!text)
        return -1;
    if (strncmp(text, "ref: ", 5) == 0) {
        text[5 + strcspn(text + 5, "\r\n")] = '\0';
        if (!snap_gitdir_resolve(enc.gitdir, enc.commondir, text + 5, head))
            head[0] = '\0';
    } else if (strlen(text) >= SNAP_HEX_OID) {
        snprintf(head, sizeof head, "%.40s", text);
    }
    free(text);
    if (!head[0] || link_packs(st, enc.commondir) == 0)
        return -1;
    git_odb *odb = NULL;
    if (git_repository_odb(&odb, st->repo) == 0)
        git_odb_refresh(odb);
    git_odb_free(odb);
    odb = NULL;
    if (seed_from_index(st, &enc) == 0)
        return 0;
    git_index_clear(st->index);
    git_oid id;
    git_commit *commit = NULL;
    git_tree *root = NULL, *sub = NULL;
    git_tree_entry *te = NULL;
    int rc = -1;
    if (git_repository_odb(&odb, st->repo) < 0 || git_odb_refresh(odb) < 0 || git_oid_fromstr(&id, head) < 0 ||
        git_commit_lookup(&commit, st->repo, &id) < 0 || git_commit_tree(&root, commit) < 0)
        goto out;
    const git_tree *tree = root;
    if (enc.prefix[0]) {
        if (git_tree_entry_bypath(&te, root, enc.prefix) < 0 || git_tree_entry_type(te) != GIT_OBJECT_TREE ||
            git_tree_lookup(&sub, st->repo, git_tree_entry_id(te)) < 0)
            goto out;
        tree = sub;
    }
    rc = git_index_read_tree(st->index, tree) < 0 ? -1 : 0;
out:
    if (rc < 0) {
        git_error_clear();
        git_index_clear(st->index);
    }
    git_tree_entry_free(te);
    git_tree_free(sub);
    git_tree_free(root);
    git_commit_free(commit);
    git_odb_free(odb);
    return rc;
}
