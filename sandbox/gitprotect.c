/*
 * gitprotect.c - the git parts of the sandbox policy.
 *
 * What runs code when the user later types git in the workspace:
 *   hooks/              every hook
 *   config              core.fsmonitor, core.hooksPath, aliases, filters...
 *   commondir           redirects config and hooks to another directory
 *   config.worktree     per-worktree config (read when config enables it)
 * in the repository's gitdir, in the gitdir a .git file points to, in its
 * common dir, and in every submodule gitdir under modules/.  Existing ones
 * are bound read-only; a missing hooks/ becomes an empty read-only
 * directory and a missing commondir a read-only file saying "." (the gitdir
 * itself, which git reads as no redirection at all).
 */
#include "config.h"

#include "gitprotect.h"
#include "sbutil.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NESTED_DEPTH 3
#define SCAN_BUDGET 20000 /* directories looked at below one root */

static bool is_gitdir(const char *dir)
{
    char *head = sb_printf("%s/HEAD", dir);
    struct stat st;
    bool ok = stat(head, &st) == 0;
    free(head);
    return ok;
}

/* "gitdir: X" of a .git file, resolved against its directory; or NULL. */
static char *read_pointer(const char *file, const char *prefix)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return NULL;
    char line[PATH_MAX + 16];
    char *res = NULL;
    if (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        const char *p = line;
        if (prefix) {
            if (strncmp(line, prefix, strlen(prefix)) != 0)
                goto out;
            p += strlen(prefix);
            while (*p == ' ' || *p == '\t')
                p++;
        }
        char *dir = sb_strdup(file);
        *strrchr(dir, '/') = '\0';
        char *joined = sb_path_join(dir, p);
        char canon[PATH_MAX];
        if (realpath(joined, canon))
            res = sb_strdup(canon);
        free(joined);
        free(dir);
    }
out:
    fclose(f);
    return res;
}

static void protect_gitdir_tree(const char *dir, const sb_protect_sink *s, int depth);

/* Protect one gitdir; pin it when the sandbox could rename it.  depth
 * bounds the walk into submodule gitdirs. */
static void protect_gitdir(const char *gd, const sb_protect_sink *s, int depth)
{
    struct stat st;
    if (s->writable(s->user, gd))
        s->pin(s->user, gd, "pinned: a git directory");
    char *p = sb_printf("%s/hooks", gd);
    if (lstat(p, &st) == 0)
        s->readonly(s->user, p, S_ISDIR(st.st_mode), "protected: git hooks run code");
    else if (errno == ENOENT && s->writable(s->user, gd))
        s->placeholder(s->user, p, NULL, "protected (empty): git hooks run code");
    free(p);
    p = sb_printf("%s/config", gd);
    if (lstat(p, &st) == 0)
        s->readonly(s->user, p, false, "protected: git config can run code");
    free(p);
    p = sb_printf("%s/commondir", gd);
    char *common = NULL;
    if (lstat(p, &st) == 0) {
        s->readonly(s->user, p, false, "protected: commondir says where config and hooks are");
        common = read_pointer(p, NULL);
    } else if (errno == ENOENT && s->writable(s->user, gd)) {
        s->placeholder(s->user, p, ".\n", "protected (\".\": no redirection): commondir would redirect config "
                                          "and hooks");
    }
    free(p);
    p = sb_printf("%s/config.worktree", gd);
    if (lstat(p, &st) == 0)
        s->readonly(s->user, p, false, "protected: per-worktree git config");
    free(p);
    if (common && strcmp(common, gd) != 0 && depth > 0)
        protect_gitdir(common, s, depth - 1);
    free(common);
    /* Submodules keep their gitdirs under modules/ (nested as deep as the
     * submodules are). */
    char *modules = sb_printf("%s/modules", gd);
    protect_gitdir_tree(modules, s, depth);
    free(modules);
}

/* The gitdirs below dir (modules/NAME, and modules/a/b/... for submodule
 * names with slashes). */
static void protect_gitdir_tree(const char *dir, const sb_protect_sink *s, int depth)
{
    DIR *d = depth > 0 ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *sub = sb_printf("%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (is_gitdir(sub))
                protect_gitdir(sub, s, depth - 1);
            else
                protect_gitdir_tree(sub, s, depth - 1);
        }
        free(sub);
    }
    if (d)
        closedir(d);
}

/* The repository whose work tree is dir (its .git exists). */
static int protect_repo(const char *dir, const sb_protect_sink *s, char *err, size_t errlen)
{
    char *dotgit = sb_printf("%s/.git", strcmp(dir, "/") == 0 ? "" : dir);
    struct stat st;
    int rc = 0;
    if (lstat(dotgit, &st) < 0) {
        free(dotgit);
        return 0;
    }
    if (S_ISLNK(st.st_mode)) {
        snprintf(err, errlen, "cannot keep git's hooks and config read-only through the symlink %s (the sandbox "
                 "could re-point it); replace it with a .git file saying \"gitdir: <path>\", or use --profile "
                 "full", dotgit);
        rc = -1;
    } else if (S_ISDIR(st.st_mode)) {
        protect_gitdir(dotgit, s, 4);
    } else if (S_ISREG(st.st_mode)) {
        s->readonly(s->user, dotgit, false, "protected: the .git file says where the gitdir is");
        char *gd = read_pointer(dotgit, "gitdir:");
        if (gd)
            protect_gitdir(gd, s, 4);
        free(gd);
    }
    free(dotgit);
    return rc;
}

/* Find repositories nested below root (not root itself) up to depth; pin
 * every directory from root down to each, so none can be moved aside. */
static int scan_nested(const char *root, const char *dir, int depth, int *budget, const sb_protect_sink *s,
                       char *err, size_t errlen)
{
    if (depth == 0 || *budget <= 0)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, ".git") == 0)
            continue;
        if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
            continue;
        char *sub = sb_printf("%s/%s", strcmp(dir, "/") == 0 ? "" : dir, e->d_name);
        struct stat st;
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode) && --*budget > 0) {
            char *dotgit = sb_printf("%s/.git", sub);
            if (lstat(dotgit, &st) == 0) {
                /* Pin the path down to the repository. */
                char *copy = sb_strdup(sub);
                for (char *q = copy + strlen(root) + 1; ; q++) {
                    if (*q == '/' || *q == '\0') {
                        char saved = *q;
                        *q = '\0';
                        s->pin(s->user, copy, "pinned: holds a nested git repository");
                        *q = saved;
                        if (saved == '\0')
                            break;
                    }
                }
                free(copy);
                rc = protect_repo(sub, s, err, errlen);
            }
            free(dotgit);
            if (rc == 0)
                rc = scan_nested(root, sub, depth - 1, budget, s, err, errlen);
        }
        free(sub);
    }
    closedir(d);
    return rc;
}

int sb_protect_repos(const char *root, const sb_protect_sink *s, char *err, size_t errlen)
{
    char *dotgit = sb_printf("%s/.git", strcmp(root, "/") == 0 ? "" : root);
    struct stat st;
    int missing = lstat(dotgit, &st) < 0 && errno == ENOENT;
    if (missing)
        /* No repository here: a `git init` inside the sandbox would create
         * hooks that the user's own git later runs.  An empty read-only .git
         * stops it, and git's discovery skips an empty .git, so a
         * repository further up still works. */
        s->placeholder(s->user, dotgit, NULL, "protected (empty): no git init in the sandbox");
    free(dotgit);
    if (!missing && protect_repo(root, s, err, errlen) < 0)
        return -1;
    int budget = SCAN_BUDGET;
    return scan_nested(root, root, NESTED_DEPTH, &budget, s, err, errlen);
}
