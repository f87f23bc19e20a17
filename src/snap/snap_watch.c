/*
 * snap_watch.c - see snap_watch.h.
 */
#include "config.h"

#include "snap/snap_watch.h"

#include "snap/snap_gitdir.h"
#include "snap/snap_walk.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

enum { W_NONE, W_TREE, W_GITDIR, W_GITSUB };

#define TREE_MASK                                                                                            \
    (IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | \
     IN_DONT_FOLLOW | IN_ONLYDIR | IN_EXCL_UNLINK)

void snap_watch_init(snap_watch *w, size_t budget)
{
    memset(w, 0, sizeof *w);
    w->budget = budget;
    w->dirty = true;
    w->rescan_all = true;
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->fd < 0)
        snprintf(w->why, sizeof w->why, "inotify is not available: %s", strerror(errno));
}

static bool name_changed(const snap_watch_name *n)
{
    return !(n->born && !n->present);
}

/* A new dirty period: no names, nothing changed. */
static void clear_names(snap_watch *w)
{
    for (size_t i = 0; i < w->n_names; i++)
        free(w->names[i].name);
    w->n_names = 0;
    w->changed = 0;
    w->hard = false;
}

#define NAMES_MAX 4096

/* Account an event about name in directory wd. */
static void note_name(snap_watch *w, int wd, const char *name, uint32_t mask)
{
    snap_watch_name *n = NULL;
    for (size_t i = w->n_names; i-- > 0 && !n;)
        if (w->names[i].wd == wd && strcmp(w->names[i].name, name) == 0)
            n = &w->names[i];
    if (!n) {
        if (w->n_names >= NAMES_MAX) {
            w->hard = true; /* too many to follow one by one */
            return;
        }
        if (w->n_names == w->cap_names) {
            w->cap_names = w->cap_names ? w->cap_names * 2 : 32;
            w->names = xrealloc(w->names, w->cap_names * sizeof *w->names);
        }
        n = &w->names[w->n_names++];
        bool made = (mask & (IN_CREATE | IN_MOVED_TO)) != 0;
        *n = (snap_watch_name){wd, xstrdup(name), made, !(mask & (IN_DELETE | IN_MOVED_FROM)), false};
        w->changed++; /* new, and changed until it is gone again */
    } else {
        bool before = name_changed(n);
        if (mask & (IN_CREATE | IN_MOVED_TO))
            n->present = true;
        if (mask & (IN_DELETE | IN_MOVED_FROM))
            n->present = false;
        bool after = name_changed(n);
        if (before && !after)
            w->changed--;
        else if (!before && after)
            w->changed++;
    }
    if (mask & (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE))
        n->touched = true; /* (one made and gone again was touched in vain) */
}

static void reset_table(snap_watch *w)
{
    for (size_t i = 0; i < w->cap; i++)
        free(w->paths[i]);
    if (w->cap) { /* no table yet: NULL, which memset may not be given */
        memset(w->paths, 0, w->cap * sizeof *w->paths);
        memset(w->kinds, 0, w->cap);
    }
    for (size_t i = 0; i < w->n_fresh; i++)
        free(w->fresh[i]);
    w->n_fresh = 0;
    w->n_watches = 0;
}

void snap_watch_free(snap_watch *w)
{
    reset_table(w);
    clear_names(w);
    free(w->names);
    free(w->paths);
    free(w->kinds);
    free(w->fresh);
    if (w->fd >= 0)
        close(w->fd);
    memset(w, 0, sizeof *w);
    w->fd = -1;
}

/* Stop watching for good: every boundary then takes a real snapshot. */
static void give_up(snap_watch *w, const char *why)
{
    snprintf(w->why, sizeof w->why, "%s", why);
    reset_table(w);
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    w->dirty = true;
}

static void remember(snap_watch *w, int wd, const char *rel, int kind)
{
    if (wd < 0)
        return;
    if ((size_t)wd >= w->cap) {
        size_t cap = w->cap ? w->cap : 64;
        while (cap <= (size_t)wd)
            cap *= 2;
        w->paths = xrealloc(w->paths, cap * sizeof *w->paths);
        w->kinds = xrealloc(w->kinds, cap);
        memset(w->paths + w->cap, 0, (cap - w->cap) * sizeof *w->paths);
        memset(w->kinds + w->cap, 0, cap - w->cap);
        w->cap = cap;
    }
    if (!w->paths[wd])
        w->n_watches++;
    free(w->paths[wd]);
    w->paths[wd] = xstrdup(rel);
    w->kinds[wd] = (unsigned char)kind;
}

static bool add(snap_watch *w, const char *ws, const char *rel, int kind)
{
    if (w->fd < 0)
        return false;
    if (w->n_watches >= w->budget) {
        give_up(w, "too many directories to watch (snapshots walk the tree at every boundary)");
        return false;
    }
    char path[PATH_MAX];
    if (rel[0] == '/')
        snprintf(path, sizeof path, "%s", rel); /* a git directory outside the tree */
    else
        snprintf(path, sizeof path, "%s%s%s", ws, *rel ? "/" : "", rel);
    int wd = inotify_add_watch(w->fd, path, TREE_MASK);
    if (wd < 0) {
        if (errno == ENOSPC || errno == ENOMEM) {
            give_up(w, "the inotify watch limit is reached (fs.inotify.max_user_watches)");
            return false;
        }
        return true; /* gone already, or not a directory: nothing to watch */
    }
    remember(w, wd, rel, kind);
    return true;
}

/* A directory to read: one of the workspace (rel relative) is reached
 * with no symlink followed on the way; a git directory a .git file names
 * (absolute) as that file says. */
static int open_dir(const char *ws, const char *rel)
{
    if (rel[0] == '/')
        return open(rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int root = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (root < 0 || !*rel)
        return root;
    int fd = snap_open_beneath(root, rel, O_RDONLY | O_DIRECTORY);
    close(root);
    return fd;
}

static char *join(const char *a, const char *b)
{
    return *a ? xasprintf("%s/%s", a, b) : xstrdup(b);
}

/* dir and the directories below it, all of one kind (hooks, refs). */
static void add_tree(snap_watch *w, const char *ws, const char *rel, int kind, int depth)
{
    if (depth > 8 || !add(w, ws, rel, kind))
        return;
    int fd = open_dir(ws, rel);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) && w->fd >= 0) {
        if (e->d_name[0] == '.' || e->d_type != DT_DIR)
            continue;
        char *child = join(rel, e->d_name);
        add_tree(w, ws, child, kind, depth + 1);
        free(child);
    }
    closedir(d);
}

/* A git directory: its HEAD, config and refs, and its hooks.  gitdir is
 * workspace-relative, or absolute when a .git file points elsewhere. */
static void watch_gitdir(snap_watch *w, const char *ws, const char *gitdir)
{
    if (!add(w, ws, gitdir, W_GITDIR))
        return;
    static const char *const subs[] = {"hooks", "refs", NULL};
    for (const char *const *s = subs; *s; s++) {
        char *p = join(gitdir, *s);
        add_tree(w, ws, p, W_GITSUB, 0);
        free(p);
    }
}

/* The git directory of the repository at rel (ws-relative, or absolute
 * for one a .git file points to), or NULL when rel has no .git. */
static char *gitdir_of(const char *ws, const char *rel)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s%s%s/.git", ws, *rel ? "/" : "", rel);
    struct stat st;
    if (lstat(path, &st) < 0)
        return NULL;
    if (S_ISDIR(st.st_mode))
        return join(rel, ".git");
    char dir[PATH_MAX], gitdir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s%s%s", ws, *rel ? "/" : "", rel);
    if (snap_gitdir_locate(dir, gitdir, sizeof gitdir))
        return xstrdup(gitdir);
    return xstrdup(""); /* a .git that is no repository: nothing to watch in it */
}

static void walk(snap_watch *w, const char *ws, const char *rel, snap_watch_skip_fn skip, void *user, int depth)
{
    if (w->fd < 0 || depth > 200)
        return;
    char *g = *rel ? gitdir_of(ws, rel) : NULL;
    if (g) {
        /* A nested repository: a gitlink in snapshots; only its git
         * directory matters. */
        if (*g)
            watch_gitdir(w, ws, g);
        free(g);
        return;
    }
    if (!add(w, ws, rel, W_TREE))
        return;
    int fd = open_dir(ws, rel);
    if (fd < 0)
        return;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) && w->fd >= 0) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        bool dir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) {
            struct stat st;
            dir = fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        }
        if (!dir)
            continue;
        char *child = join(rel, e->d_name);
        if (strcmp(e->d_name, ".git") == 0) {
            char *top = !*rel ? gitdir_of(ws, "") : NULL;
            if (top && *top)
                watch_gitdir(w, ws, top); /* the workspace's own repository */
            free(top);
        } else if (!skip || !skip(child, user)) {
            walk(w, ws, child, skip, user, depth + 1);
        }
        free(child);
    }
    closedir(d);
}

static void note_fresh(snap_watch *w, const char *rel)
{
    if (w->n_fresh >= 4096) {
        w->rescan_all = true; /* many: one walk is cheaper than remembering */
        return;
    }
    w->fresh = xrealloc(w->fresh, (w->n_fresh + 1) * sizeof *w->fresh);
    w->fresh[w->n_fresh++] = xstrdup(rel);
}

/* Does an event in a git directory matter?  HEAD and refs (a nested
 * repository's commit), config (core.hooksPath), hooks. */
static bool gitdir_name_matters(const char *name)
{
    static const char *const names[] = {"HEAD", "config", "packed-refs", "commondir", "hooks", "refs", NULL};
    for (const char *const *n = names; *n; n++)
        if (strcmp(name, *n) == 0)
            return true;
    return false;
}

bool snap_watch_poll(snap_watch *w)
{
    if (w->fd < 0)
        return true;
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t n = read(w->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (ev->mask & IN_Q_OVERFLOW) {
                w->dirty = true;
                w->rescan_all = true;
                continue;
            }
            if (ev->wd < 0 || (size_t)ev->wd >= w->cap || !w->paths[ev->wd])
                continue;
            int kind = w->kinds[ev->wd];
            if (ev->mask & IN_IGNORED) {
                free(w->paths[ev->wd]);
                w->paths[ev->wd] = NULL;
                w->n_watches--;
                continue;
            }
            const char *name = ev->len ? ev->name : "";
            if (kind == W_GITDIR && *name && !gitdir_name_matters(name))
                continue; /* index, logs, objects: git's own bookkeeping */
            /* A name made and removed again leaves nothing behind, in the
             * tree or in a git directory: a sandbox's empty read-only
             * mount points come and go with it (.corral, .codex in the
             * tree; commondir, modules in .git), and must not cost the
             * next boundary a walk of the whole tree. */
            if ((kind == W_TREE || kind == W_GITDIR) && *name)
                note_name(w, ev->wd, name, ev->mask);
            else
                w->hard = true;
            if (kind == W_TREE && (ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO)) && *name) {
                char *rel = join(w->paths[ev->wd], name);
                note_fresh(w, rel);
                free(rel);
            }
            if (kind != W_TREE && (ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO)))
                w->rescan_all = true; /* hooks/ or a refs/ directory made anew */
        }
    }
    return w->dirty || w->hard || w->changed;
}

/* Walk the directories made since the last scan (the list is taken
 * first: a walk that gives up clears the table under it). */
static void walk_fresh(snap_watch *w, const char *ws, snap_watch_skip_fn skip, void *user)
{
    size_t n = w->n_fresh;
    char **fresh = w->fresh;
    w->fresh = NULL;
    w->n_fresh = 0;
    for (size_t i = 0; i < n; i++) {
        if (w->fd >= 0 && (!skip || !skip(fresh[i], user)))
            walk(w, ws, fresh[i], skip, user, 0);
        free(fresh[i]);
    }
    free(fresh);
}

static void walk_all(snap_watch *w, const char *ws, snap_watch_skip_fn skip, void *user)
{
    /* Old watches stay valid (inotify_add_watch on a watched directory
     * returns the same descriptor); the table is rebuilt. */
    reset_table(w);
    w->rescan_all = false;
    walk(w, ws, "", skip, user, 0);
}

void snap_watch_prepare(snap_watch *w, const char *ws, snap_watch_skip_fn skip, void *user)
{
    if (w->fd < 0)
        return;
    if (w->rescan_all)
        walk_all(w, ws, skip, user);
    else
        walk_fresh(w, ws, skip, user);
    /* Directories made while it walked are watched too (a few rounds;
     * then a full walk next time, and this period counts as dirty). */
    for (int round = 0; w->fd >= 0; round++) {
        snap_watch_poll(w);
        if (w->n_fresh == 0 && !w->rescan_all)
            break;
        if (round == 3) {
            w->rescan_all = true;
            return;
        }
        if (w->rescan_all)
            walk_all(w, ws, skip, user);
        else
            walk_fresh(w, ws, skip, user);
    }
    /* Everything before this point is in the snapshot about to be taken:
     * a new dirty period starts now. */
    clear_names(w);
    w->dirty = w->fd < 0;
}
