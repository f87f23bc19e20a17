/*
 * gitprotect.c - the git parts of the sandbox policy: which repositories
 * the user's git would use in and around a writable root, and what in each
 * must not change (see gitprotect.h).
 *
 * In a git directory (gitdir):
 *   hooks/          every hook; a missing one becomes an empty read-only
 *                   directory
 *   config          and every file git reads config from (gitrepo.c)
 *   config.worktree per-worktree config
 *   commondir       redirects config and hooks; a missing one becomes a
 *                   read-only file saying "." (no redirection)
 *   worktrees/      read-only (no new linked worktree); each existing one
 *                   writable again, its commondir, gitdir and
 *                   config.worktree read-only
 *   modules/        read-only (no planted submodule gitdir, which `git
 *                   submodule update` on the host would take up with its
 *                   hooks); each existing submodule gitdir writable again
 *                   and protected like this one.  A missing one becomes an
 *                   empty read-only directory.
 *
 * Repositories: the root's own (its .git a directory, a file naming the
 * gitdir, or a symlink), the one enclosing the root, those found below it
 * (gitscan.c: work trees within NESTED_DEPTH levels, bare repositories),
 * and every populated gitlink in their indexes however deep (gitindex.c;
 * an index that cannot be read has every repository below its work tree
 * protected instead).  Each is looked at once.
 *
 * A symlink inside a writable root on the way to any of this could be
 * re-pointed by the sandbox.  When the sink can pin symlinks, it is pinned.
 * Otherwise: for the root's own repository (and the config files every
 * repository shares) the plan fails with the fix; for a repository below
 * the root (which a sandboxed command could have made, symlink included)
 * what it points to now is protected and the user is warned: a planted
 * link must not stop later sandboxes from starting.
 */
#include "config.h"

#include "gitprotect.h"
#include "gitindex.h"
#include "gitpaths.h"
#include "gitrepo.h"
#include "gitscan.h"
#include "sbutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Levels below a root searched for nested work trees and bare repositories. */
#define NESTED_DEPTH 3
/* Levels of directories under modules/ (submodule names may hold '/'). */
#define MODULES_DEPTH 4

/* Names plan.c makes read-only at the top of every writable root: not
 * searched (what is inside is read-only already) and never pinned inside
 * (a writable pin would open it again). */
static const char *const top_readonly[] = {".corral", ".codex", ".agents", NULL};

typedef struct gitlink_job {
    char *worktree;
    char *index;
    size_t hash_len;
} gitlink_job;

typedef struct run {
    gp g;
    char **gitdirs; /* protected already */
    gp_repo **gitdir_repo;
    size_t n_gitdirs;
    char **worktrees; /* work trees looked at already */
    size_t n_worktrees;
    gitlink_job *jobs;
    size_t n_jobs, cap_jobs;
} run;

static gp_repo *protect_gitdir(run *R, const char *gd, bool worktree, gp_links policy);
static void protect_worktree_repo(run *R, const char *dir, gp_links policy);

static bool listed(char **list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0)
            return true;
    return false;
}

static bool exists(gp *g, const char *path, struct stat *st)
{
    struct stat tmp;
    return gp_lstat(g, path, st ? st : &tmp) == 0;
}

static bool is_gitdir(gp *g, const char *dir)
{
    char *head = gp_join(dir, "HEAD");
    bool ok = exists(g, head, NULL);
    free(head);
    return ok;
}

/* A small file's content without trailing CRs and LFs (as git trims a
 * .git file and commondir); NULL if unreadable or larger than PATH_MAX. */
static char *read_small(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return NULL;
    char buf[PATH_MAX + 16];
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, sizeof buf) : -1;
    close(fd);
    if (n < 0 || (size_t)n >= sizeof buf || memchr(buf, '\0', (size_t)n))
        return NULL;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    return sb_printf("%.*s", (int)n, buf);
}

/* The gitdir a .git file names ("gitdir: PATH", exactly as git requires),
 * relative to the file's directory; NULL if it is not such a file. */
static char *read_gitfile(const char *file, const char *dir)
{
    char *text = read_small(file);
    char *res = NULL;
    if (text && strncmp(text, "gitdir: ", 8) == 0 && text[8])
        res = gp_expand(text + 8, dir);
    free(text);
    return res;
}

/* Resolve a path to a directory git will use as a gitdir, handling the
 * writable symlinks on the way; the canonical directory, or NULL (then a
 * missing one is kept from being created). */
static char *resolve_gitdir(run *R, const char *path, const char *what, gp_links policy)
{
    gp *g = &R->g;
    gp_resolved r;
    gp_resolve(g, path, &r);
    char *res = NULL;
    struct stat st;
    if (gp_links_ok(g, &r, what, policy)) {
        if (r.exists && exists(&R->g, r.canon, &st) && S_ISDIR(st.st_mode))
            res = sb_strdup(r.canon);
        else if (!r.exists)
            gp_protect_path(g, path, true, "the sandbox could make a git directory there", policy);
    }
    gp_resolved_free(&r);
    return res;
}

static void queue_gitlinks(run *R, const char *worktree, const char *gitdir, size_t hash_len)
{
    if (R->n_jobs == R->cap_jobs) {
        R->cap_jobs = R->cap_jobs ? R->cap_jobs * 2 : 16;
        R->jobs = sb_realloc(R->jobs, R->cap_jobs * sizeof *R->jobs);
    }
    R->jobs[R->n_jobs].worktree = sb_strdup(worktree);
    R->jobs[R->n_jobs].index = gp_join(gitdir, "index");
    R->jobs[R->n_jobs].hash_len = hash_len;
    R->n_jobs++;
}

/* worktrees/ or modules/ of a gitdir: the directory read-only, each git
 * directory in it writable again and protected itself. */
static void protect_container(run *R, const char *dir, int depth, bool top, gp_links policy)
{
    gp *g = &R->g;
    struct stat st;
    if (!exists(&R->g, dir, &st) || !S_ISDIR(st.st_mode))
        return;
    if (top && !gp_protect_path(g, dir, true, "git takes up what is created in it", policy))
        return;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && g->rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *sub = gp_join(dir, e->d_name);
        bool is_dir = exists(&R->g, sub, &st) && S_ISDIR(st.st_mode);
        if (is_dir && g->budget == 0) {
            gp_fail(g, "cannot protect the git directories in %s: more than %zu directories to look at (raise "
                    "CORRAL_GIT_SCAN_DIRS in the environment of corral and of its server)", dir, g->budget_full);
        } else if (is_dir) {
            g->budget--;
            if (is_gitdir(&R->g, sub)) {
                if (top && gp_writable(g, sub))
                    gp_add(g, GP_REOPEN, sub, NULL, true, "writable: its own state (what runs code stays read-only)");
                protect_gitdir(R, sub, true, policy);
            } else if (depth > 1) {
                protect_container(R, sub, depth - 1, false, policy);
            }
        }
        free(sub);
    }
    if (d)
        closedir(d);
}

/* Protect one git directory (once) and the ones it leads to; its
 * repository's config, or NULL.  worktree: it has a work tree (a bare
 * repository has no submodules to take up). */
static gp_repo *protect_gitdir(run *R, const char *gd, bool worktree, gp_links policy)
{
    gp *g = &R->g;
    for (size_t i = 0; i < R->n_gitdirs; i++)
        if (strcmp(R->gitdirs[i], gd) == 0)
            return R->gitdir_repo[i];
    R->gitdirs = sb_realloc(R->gitdirs, (R->n_gitdirs + 1) * sizeof *R->gitdirs);
    R->gitdir_repo = sb_realloc(R->gitdir_repo, (R->n_gitdirs + 1) * sizeof *R->gitdir_repo);
    size_t me = R->n_gitdirs++;
    R->gitdirs[me] = sb_strdup(gd);
    R->gitdir_repo[me] = NULL;

    bool writable = gp_writable(g, gd);
    if (writable)
        gp_pin_chain(g, gd);
    char *p = gp_join(gd, "commondir");
    char *common = NULL;
    if (exists(&R->g, p, NULL)) {
        gp_protect_path(g, p, false, "commondir says where git's config and hooks are", policy);
        char *to = read_small(p);
        char *path = to ? gp_expand(to[0] ? to : ".", gd) : NULL;
        if (path)
            common = resolve_gitdir(R, path, p, policy);
        free(path);
        free(to);
    } else if (writable) {
        gp_add(g, GP_PLACEHOLDER, p, ".\n",
               false, "protected (\".\": no redirection): commondir would redirect config and hooks");
    }
    free(p);
    bool linked = common && strcmp(common, gd) != 0;
    if (!linked) {
        free(common);
        common = sb_strdup(gd);
        p = gp_join(gd, "hooks");
        gp_protect_path(g, p, true, "git hooks run code", policy);
        free(p);
    }
    gp_repo *repo = g->rc == 0 ? gp_repo_config(g, gd, common, policy) : NULL;
    R->gitdir_repo[me] = repo;
    static const char *const pointers[] = {"config.worktree", "gitdir", NULL};
    for (const char *const *n = pointers; *n && g->rc == 0; n++) {
        p = gp_join(gd, *n);
        if (exists(&R->g, p, NULL))
            gp_protect_path(g, p, false, "per-worktree git config and pointers", policy);
        free(p);
    }
    if (linked && g->rc == 0) {
        protect_gitdir(R, common, true, policy);
    } else if (g->rc == 0) {
        p = gp_join(gd, "worktrees");
        protect_container(R, p, 1, true, policy);
        free(p);
    }
    p = gp_join(gd, "modules");
    if (!exists(&R->g, p, NULL) && writable && !linked && worktree)
        gp_protect_path(g, p, true, "git submodule update would take up a submodule git directory planted here",
                        policy);
    else if (g->rc == 0)
        protect_container(R, p, MODULES_DEPTH, true, policy);
    free(p);
    free(common);
    return g->rc == 0 ? repo : NULL;
}

/* The .git of dir as a symlink: pinned if the sink can; else refused for
 * the root's own repository (the user can replace it with a .git file,
 * which is protected), tolerated with a warning below the root. */
static bool git_symlink_ok(run *R, const char *dotgit, gp_links policy)
{
    gp *g = &R->g;
    char *parent = gp_parent(dotgit);
    bool writable = gp_writable(g, parent);
    free(parent);
    if (!writable || g->s->pin_link || policy != GP_LINKS_FAIL)
        return true;
    char canon[PATH_MAX];
    const char *to = realpath(dotgit, canon) ? canon : "<where it points>";
    gp_fail(g, "%s is a symlink (to %s): a sandboxed command could re-point it to git hooks of its own, and "
            "a symlink cannot be kept from changing. Replace it with a .git file, which is kept read-only: "
            "rm %s && echo 'gitdir: %s' > %s", dotgit, to, dotgit, to, dotgit);
    return false;
}

/* The repository whose work tree is dir, if dir has a .git. */
static void protect_worktree_repo(run *R, const char *dir, gp_links policy)
{
    gp *g = &R->g;
    if (g->rc < 0 || listed(R->worktrees, R->n_worktrees, dir))
        return;
    sb_list_push(&R->worktrees, &R->n_worktrees, dir);
    char *dotgit = gp_join(dir, ".git");
    struct stat st;
    char *gd = NULL;
    if (!exists(&R->g, dotgit, &st)) {
        free(dotgit);
        return;
    }
    if (S_ISLNK(st.st_mode) && !git_symlink_ok(R, dotgit, policy)) {
        free(dotgit);
        return;
    }
    gp_resolved r;
    gp_resolve(g, dotgit, &r);
    if (gp_links_ok(g, &r, dotgit, policy)) {
        if (!r.exists) {
            gp_protect_path(g, dotgit, true, "the sandbox could make a git directory there", policy);
        } else if (exists(&R->g, r.canon, &st) && S_ISDIR(st.st_mode)) {
            gd = sb_strdup(r.canon);
        } else if (S_ISREG(st.st_mode)) {
            gp_protect_path(g, dotgit, false, "the .git file says where the git directory is", policy);
            char *pointer = read_gitfile(r.canon, dir);
            if (pointer)
                gd = resolve_gitdir(R, pointer, dotgit, policy);
            free(pointer);
        }
    }
    gp_resolved_free(&r);
    gp_repo *repo = gd && g->rc == 0 ? protect_gitdir(R, gd, true, policy) : NULL;
    if (repo) {
        gp_protect_named(g, repo, dir, policy);
        queue_gitlinks(R, dir, gd, repo->hash_len);
    }
    free(gd);
    free(dotgit);
}

/* ---- searching ------------------------------------------------------------- */

static int found_worktree(void *u, const char *dir)
{
    run *R = u;
    gp_pin_chain(&R->g, dir);
    protect_worktree_repo(R, dir, GP_LINKS_WARN);
    return R->g.rc;
}

static int found_gitdir(void *u, const char *dir)
{
    run *R = u;
    gp_links policy = strcmp(dir, R->g.root) == 0 ? GP_LINKS_FAIL : GP_LINKS_WARN;
    gp_repo *repo = protect_gitdir(R, dir, false, policy);
    if (repo)
        gp_protect_named(&R->g, repo, dir, policy);
    return R->g.rc;
}

/* Search top for repositories, depth levels down (-1: all, when an index
 * could not be read: index names it, why_deep says why). */
static void scan(run *R, const char *top, int depth, const char *index, const char *why_deep)
{
    gp *g = &R->g;
    sb_gitscan_cb cb = {.user = R, .worktree = found_worktree, .gitdir = found_gitdir};
    char e[1024] = "";
    int rc = sb_gitscan(top, depth, &g->budget, strcmp(top, g->root) == 0 ? top_readonly : NULL, &cb, e, sizeof e);
    if (rc == SB_GITSCAN_BUDGET && why_deep)
        gp_fail(g, "cannot protect the git repositories below %s: its git index could not be read (%s), so every "
                "repository below it must be found, and there are more than %zu directories. Repair the index "
                "(rm %s && git -C %s reset) or raise the limit (CORRAL_GIT_SCAN_DIRS=%zu in the environment of "
                "corral and of its server)", top, why_deep, g->budget_full, index, top, g->budget_full * 4);
    else if (rc == SB_GITSCAN_BUDGET)
        gp_fail(g, "cannot protect the git repositories in %s: it has more than %zu directories within %d levels, "
                "and a repository past them could be given hooks or config your own git then runs. Raise the "
                "limit (CORRAL_GIT_SCAN_DIRS=%zu in the environment of corral and of its server), or move big "
                "trees (build output, vendored dependencies) out of %s", top, g->budget_full, NESTED_DEPTH,
                g->budget_full * 4, top);
    else if (rc < 0)
        gp_fail(g, "%s", e);
}

typedef struct gitlink_ctx {
    run *R;
    const char *worktree;
} gitlink_ctx;

/* A gitlink's work tree, if the user's git would look into it: every
 * component a real directory (git does not follow a symlink there), and a
 * .git inside. */
static int found_gitlink(void *u, const char *rel)
{
    gitlink_ctx *c = u;
    gp *g = &c->R->g;
    if (g->budget == 0) {
        gp_fail(g, "cannot protect the repositories the gitlinks of %s name: more than %zu to look at (raise "
                "CORRAL_GIT_SCAN_DIRS)", c->worktree, g->budget_full);
        return -1;
    }
    g->budget--;
    char *path = sb_strdup(c->worktree);
    const char *p = rel;
    bool ok = true;
    while (ok && *p) {
        size_t n = strcspn(p, "/");
        char *next = sb_printf("%s%s%.*s", path, strcmp(path, "/") == 0 ? "" : "/", (int)n, p);
        struct stat st;
        ok = gp_lstat(g, next, &st) == 0 && S_ISDIR(st.st_mode);
        free(path);
        path = next;
        p += n + (p[n] == '/');
    }
    if (ok && sb_path_under(path, g->root)) {
        char *dotgit = gp_join(path, ".git");
        if (exists(g, dotgit, NULL)) {
            gp_pin_chain(g, path);
            protect_worktree_repo(c->R, path, GP_LINKS_WARN);
        }
        free(dotgit);
    }
    free(path);
    return g->rc;
}

/* Every repository a gitlink of a queued index names, and theirs in turn. */
static void gitlinks(run *R)
{
    gp *g = &R->g;
    for (size_t i = 0; i < R->n_jobs && g->rc == 0; i++) {
        gitlink_ctx c = {R, R->jobs[i].worktree};
        char e[512] = "";
        int rc = sb_gitindex_gitlinks(R->jobs[i].index, R->jobs[i].hash_len, found_gitlink, &c, e, sizeof e);
        if (rc < 0 && g->rc == 0 && sb_path_under(R->jobs[i].worktree, g->root))
            scan(R, R->jobs[i].worktree, -1, R->jobs[i].index, e);
    }
}

/* The repository git finds from root when root has none of its own: the
 * first ancestor with a .git, or that is a git directory. */
static void enclosing(run *R)
{
    gp *g = &R->g;
    char *dir = gp_parent(g->root);
    while (g->rc == 0 && strcmp(dir, g->root) != 0) {
        char *dotgit = gp_join(dir, ".git");
        bool here = exists(&R->g, dotgit, NULL);
        free(dotgit);
        if (here) {
            protect_worktree_repo(R, dir, GP_LINKS_FAIL);
            break;
        }
        char *objects = gp_join(dir, "objects"), *refs = gp_join(dir, "refs");
        bool bare = is_gitdir(&R->g, dir) && exists(&R->g, objects, NULL) && exists(&R->g, refs, NULL);
        free(objects);
        free(refs);
        if (bare) {
            found_gitdir(R, dir);
            break;
        }
        if (strcmp(dir, "/") == 0)
            break;
        char *up = gp_parent(dir);
        free(dir);
        dir = up;
    }
    free(dir);
}

static size_t scan_budget(run *R)
{
    const char *env = getenv("CORRAL_GIT_SCAN_DIRS");
    if (env && *env) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(env, &end, 10);
        if (errno == 0 && *end == '\0' && v > 0 && v <= SIZE_MAX)
            return (size_t)v;
        gp_warn(&R->g, "CORRAL_GIT_SCAN_DIRS", "CORRAL_GIT_SCAN_DIRS='%s' is not a positive number: using %zu",
                env, R->g.s->scan_dirs ? R->g.s->scan_dirs : (size_t)SB_GIT_SCAN_DIRS_DEFAULT);
    }
    return R->g.s->scan_dirs ? R->g.s->scan_dirs : SB_GIT_SCAN_DIRS_DEFAULT;
}

int sb_protect_repos(const char *root, const sb_protect_sink *s, char *err, size_t errlen)
{
    run R;
    memset(&R, 0, sizeof R);
    gp *g = &R.g;
    g->s = s;
    g->stats = s->stats ? s->stats : &g->own_stats;
    g->root = root;
    g->err = err;
    g->errlen = errlen;
    g->budget = g->budget_full = scan_budget(&R);

    gp_read_global_config(g);
    char *dotgit = gp_join(root, ".git");
    if (g->rc == 0 && !exists(g, dotgit, NULL) && errno == ENOENT) {
        /* No repository here: a `git init` inside the sandbox would create
         * hooks that the user's own git later runs.  An empty read-only
         * .git stops it, and git's discovery skips an empty .git, so a
         * repository further up still works. */
        gp_add(g, GP_PLACEHOLDER, dotgit, NULL, false, "protected (empty): no git init in the sandbox");
    } else if (g->rc == 0) {
        protect_worktree_repo(&R, root, GP_LINKS_FAIL);
    }
    free(dotgit);
    /* The repository around root: git uses it in root when root has none,
     * and it may name hooks, programs or gitlinks inside root anyway. */
    if (g->rc == 0)
        enclosing(&R);
    if (g->rc == 0)
        scan(&R, root, NESTED_DEPTH, NULL, NULL);
    gitlinks(&R);
    gp_emit(g, top_readonly);

    int rc = g->rc;
    for (size_t i = 0; i < R.n_jobs; i++) {
        free(R.jobs[i].worktree);
        free(R.jobs[i].index);
    }
    free(R.jobs);
    sb_list_free(R.gitdirs, R.n_gitdirs);
    free(R.gitdir_repo);
    sb_list_free(R.worktrees, R.n_worktrees);
    gp_free(g);
    return rc;
}
