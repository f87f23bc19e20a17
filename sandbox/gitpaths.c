/*
 * gitpaths.c - path resolution and the decision list of the git
 * protection (see gitpaths.h).
 */
#include "config.h"

#include "gitpaths.h"
#include "gitrepo.h"
#include "sbutil.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Symlinks followed on one path before giving up (the kernel's limit). */
#define MAX_HOPS 40

char *gp_join(const char *dir, const char *name)
{
    return sb_printf("%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name);
}

char *gp_parent(const char *path)
{
    char *p = sb_strdup(path);
    char *slash = strrchr(p, '/');
    if (!slash || slash == p)
        strcpy(p, "/");
    else
        *slash = '\0';
    return p;
}

/* A user's home directory: $HOME for ourselves (what the user's git uses),
 * the password database for "~name". */
static char *home_of(const char *user, size_t len)
{
    if (len == 0) {
        const char *h = getenv("HOME");
        if (h && h[0] == '/')
            return sb_strdup(h);
    }
    char name[256];
    if (len >= sizeof name)
        return NULL;
    memcpy(name, user, len);
    name[len] = '\0';
    struct passwd pw, *res = NULL;
    char buf[4096];
    int e = len ? getpwnam_r(name, &pw, buf, sizeof buf, &res) : getpwuid_r(geteuid(), &pw, buf, sizeof buf, &res);
    return e == 0 && res && res->pw_dir && res->pw_dir[0] == '/' ? sb_strdup(res->pw_dir) : NULL;
}

char *gp_expand(const char *path, const char *base)
{
    if (path[0] == '~') {
        size_t ulen = strcspn(path + 1, "/");
        char *home = home_of(path + 1, ulen);
        if (!home)
            return NULL;
        char *r = sb_printf("%s%s", home, path + 1 + ulen);
        free(home);
        return r;
    }
    if (path[0] == '/')
        return sb_strdup(path);
    /* "%(prefix)/..." is git's own installation: not inside a workspace. */
    if (strncmp(path, "%(prefix)/", 10) == 0 || !base || !path[0])
        return NULL;
    return gp_join(base, path);
}

bool gp_writable(gp *g, const char *path)
{
    return g->s->writable(g->s->user, path);
}

int gp_lstat(gp *g, const char *path, struct stat *st)
{
    return sb_statmemo_lstat(g->stats, path, st);
}

void gp_resolve(gp *g, const char *path, gp_resolved *out)
{
    memset(out, 0, sizeof *out);
    if (path[0] != '/')
        return;
    char *rest = sb_strdup(path);
    char *cur = sb_strdup("/");
    size_t pos = 0;
    int hops = 0;
    for (;;) {
        pos += strspn(rest + pos, "/");
        if (rest[pos] == '\0') {
            out->canon = cur;
            out->exists = true;
            cur = NULL;
            break;
        }
        size_t len = strcspn(rest + pos, "/");
        char *comp = sb_printf("%.*s", (int)len, rest + pos);
        pos += len;
        bool last = rest[pos + strspn(rest + pos, "/")] == '\0';
        bool trailing_slash = rest[pos] == '/';
        if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0) {
            if (comp[1] == '.') {
                char *up = gp_parent(cur);
                free(cur);
                cur = up;
            }
            free(comp);
            continue;
        }
        char *next = gp_join(cur, comp);
        free(comp);
        struct stat st;
        if (gp_lstat(g, next, &st) < 0) {
            if (errno == ENOENT) {
                out->missing = next;
                out->missing_last = last;
            } else {
                free(next);
            }
            break;
        }
        if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t n = ++hops > MAX_HOPS ? -1 : readlink(next, target, sizeof target - 1);
            if (n <= 0) {
                free(next);
                break;
            }
            target[n] = '\0';
            if (gp_writable(g, cur))
                sb_list_push(&out->links, &out->n_links, next);
            /* The target, then what followed the link (from its '/' on,
             * so a trailing slash keeps its meaning). */
            char *nrest = sb_printf("%s%s", target, rest + pos);
            free(rest);
            rest = nrest;
            pos = 0;
            if (target[0] == '/') {
                free(cur);
                cur = sb_strdup("/");
            }
            free(next);
            continue;
        }
        if (!S_ISDIR(st.st_mode) && (!last || trailing_slash)) {
            free(next); /* ENOTDIR: git cannot open it either */
            break;
        }
        free(cur);
        cur = next;
    }
    free(cur);
    free(rest);
}

void gp_resolved_free(gp_resolved *r)
{
    free(r->canon);
    free(r->missing);
    sb_list_free(r->links, r->n_links);
    memset(r, 0, sizeof *r);
}

void gp_add(gp *g, gp_kind kind, const char *path, const char *content, bool is_dir, const char *why)
{
    if (g->nd == g->capd) {
        g->capd = g->capd ? g->capd * 2 : 64;
        g->d = sb_realloc(g->d, g->capd * sizeof *g->d);
    }
    gp_decision *d = &g->d[g->nd++];
    d->kind = kind;
    d->path = sb_strdup(path);
    d->content = content ? sb_strdup(content) : NULL;
    d->is_dir = is_dir;
    d->why = sb_strdup(why);
}

void gp_pin_chain(gp *g, const char *dir)
{
    char *d = sb_strdup(dir);
    while (strcmp(d, "/") != 0 && strcmp(d, g->root) != 0 && gp_writable(g, d)) {
        gp_add(g, GP_PIN, d, NULL, true, "pinned: holds what git runs code from");
        char *up = gp_parent(d);
        free(d);
        d = up;
    }
    free(d);
}

int gp_fail(gp *g, const char *fmt, ...)
{
    if (g->rc == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g->err, g->errlen, fmt, ap);
        va_end(ap);
        g->rc = -1;
    }
    return -1;
}

void gp_warn(gp *g, const char *key, const char *fmt, ...)
{
    for (size_t i = 0; i < g->n_warned; i++)
        if (strcmp(g->warned[i], key) == 0)
            return;
    sb_list_push(&g->warned, &g->n_warned, key);
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    if (!msg)
        return;
    if (g->s->warn)
        g->s->warn(g->s->user, msg);
    else
        fprintf(stderr, "corral: warning: %s\n", msg);
    free(msg);
}

bool gp_links_ok(gp *g, const gp_resolved *r, const char *what, gp_links policy)
{
    for (size_t i = 0; i < r->n_links; i++) {
        const char *link = r->links[i];
        if (g->s->pin_link) {
            char *parent = gp_parent(link);
            gp_pin_chain(g, parent);
            free(parent);
            gp_add(g, GP_PIN_LINK, link, NULL, false, "pinned: a symlink on the way to what git runs");
            /* Pinned, it holds while a sandbox runs; your git follows it
             * afterwards.  If it leads into a writable directory, a
             * sandboxed command may have made both. */
            char canon[PATH_MAX];
            if (realpath(link, canon) && gp_writable(g, canon))
                gp_warn(g, link, "%s is a symlink to %s, inside a directory the sandbox can write: a sandboxed "
                        "command may have planted it. It is pinned and what it reaches is protected while "
                        "sandboxes run, but your own git follows it: look at it (and at any hooks and config "
                        "there) before you next run git where %s is", link, canon, what);
            continue;
        }
        if (policy == GP_LINKS_FAIL) {
            gp_fail(g, "cannot keep %s from being changed by the sandbox: the way to it runs through the "
                    "symlink %s inside a writable directory, which a sandboxed command could re-point; "
                    "replace the symlink with what it points to", what, link);
            return false;
        }
        gp_warn(g, link, "%s is a symlink inside a writable directory, so a sandboxed command can re-point it; "
                "what %s reaches through it now is protected, but look at %s before you next run git there",
                link, what, link);
    }
    return true;
}

bool gp_protect_path(gp *g, const char *path, bool want_dir, const char *why, gp_links policy)
{
    if (g->rc < 0)
        return false;
    gp_resolved r;
    gp_resolve(g, path, &r);
    if (!gp_links_ok(g, &r, path, policy)) {
        gp_resolved_free(&r);
        return false;
    }
    if (r.exists && gp_writable(g, r.canon)) {
        char *parent = gp_parent(r.canon);
        if (strcmp(r.canon, g->root) == 0 || !gp_writable(g, parent)) {
            /* A bind of the writable root itself cannot be read-only and
             * writable at once: say so rather than drop the protection. */
            gp_fail(g, "cannot protect %s (%s): it is a writable root of the sandbox itself; point it at a "
                    "file or directory inside %s", path, why, r.canon);
        } else {
            struct stat st;
            bool is_dir = gp_lstat(g, r.canon, &st) == 0 && S_ISDIR(st.st_mode);
            gp_pin_chain(g, parent);
            char *w = sb_printf("protected: %s", why);
            gp_add(g, GP_READONLY, r.canon, NULL, is_dir, w);
            free(w);
        }
        free(parent);
    } else if (!r.exists && r.missing) {
        char *parent = gp_parent(r.missing);
        if (gp_writable(g, parent)) {
            gp_pin_chain(g, parent);
            char *w = sb_printf("protected (empty): %s", why);
            gp_add(g, GP_PLACEHOLDER, r.missing, r.missing_last && !want_dir ? "" : NULL, false, w);
            free(w);
        }
        free(parent);
    }
    gp_resolved_free(&r);
    return g->rc == 0;
}

bool gp_protect_program(gp *g, const char *path, const char *why, gp_links policy)
{
    if (g->rc < 0)
        return false;
    gp_resolved r;
    gp_resolve(g, path, &r);
    struct stat st;
    bool ok = true;
    if (r.exists && (stat(r.canon, &st) < 0 || S_ISDIR(st.st_mode))) {
        /* a directory: an argument, not a program */
    } else if (r.exists || (r.missing && r.missing_last)) {
        ok = gp_protect_path(g, path, false, why, policy);
    } else if (r.missing) {
        char *parent = gp_parent(r.missing);
        if (gp_writable(g, parent))
            gp_warn(g, path, "%s does not exist, but %s: a sandboxed command could create it, and your git "
                    "would then run it", path, why);
        free(parent);
    }
    gp_resolved_free(&r);
    return ok && g->rc == 0;
}

/* ---- emitting ------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_decision(const void *a, const void *b)
{
    const gp_decision *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : (int)x->kind - (int)y->kind;
}

/* The deepest path in sorted covered that is path or one of its ancestors
 * (strict: not path itself), or NULL. */
static const char *covering(char **covered, size_t n, const char *path, bool strict)
{
    char *p = sb_strdup(path);
    const char *found = NULL;
    for (bool first = true;; first = false) {
        if (!(strict && first)) {
            char *key = p;
            char **hit = n ? bsearch(&key, covered, n, sizeof *covered, cmp_str) : NULL;
            if (hit) {
                found = *hit;
                break;
            }
        }
        if (strcmp(p, "/") == 0)
            break;
        char *up = gp_parent(p);
        free(p);
        p = up;
    }
    free(p);
    return found;
}

void gp_emit(gp *g, const char *const *top_readonly)
{
    if (g->rc < 0)
        return;
    /* What ends up read-only: nothing may be pinned writable inside. */
    char **covered = NULL;
    size_t nc = 0;
    for (size_t i = 0; i < g->nd; i++)
        if (g->d[i].kind == GP_READONLY || g->d[i].kind == GP_PLACEHOLDER)
            sb_list_push(&covered, &nc, g->d[i].path);
    for (const char *const *t = top_readonly; t && *t; t++) {
        char *p = gp_join(g->root, *t);
        sb_list_push(&covered, &nc, p);
        free(p);
    }
    if (nc)
        qsort(covered, nc, sizeof *covered, cmp_str);
    qsort(g->d, g->nd, sizeof *g->d, cmp_decision);
    const sb_protect_sink *s = g->s;
    for (size_t i = 0; i < g->nd; i++) {
        const gp_decision *d = &g->d[i];
        if (i > 0 && d->kind == g->d[i - 1].kind && strcmp(d->path, g->d[i - 1].path) == 0)
            continue;
        switch (d->kind) {
        case GP_PIN:
        case GP_PIN_LINK:
            /* Read-only already (a mount point too), or inside something
             * read-only: a writable pin there would undo it. */
            if (covering(covered, nc, d->path, false))
                continue;
            if (d->kind == GP_PIN)
                s->pin(s->user, d->path, d->why);
            else
                s->pin_link(s->user, d->path, d->why);
            break;
        case GP_REOPEN: {
            /* Only its own parent may be the read-only one above it. */
            char *parent = gp_parent(d->path);
            const char *c = covering(covered, nc, d->path, false);
            bool ok = c && strcmp(c, parent) == 0 && !covering(covered, nc, parent, true);
            free(parent);
            if (ok)
                s->pin(s->user, d->path, d->why);
            break;
        }
        case GP_READONLY:
            s->readonly(s->user, d->path, d->is_dir, d->why);
            break;
        case GP_PLACEHOLDER:
            s->placeholder(s->user, d->path, d->content, d->why);
            break;
        }
    }
    sb_list_free(covered, nc);
}

void gp_free(gp *g)
{
    for (size_t i = 0; i < g->nd; i++) {
        free(g->d[i].path);
        free(g->d[i].content);
        free(g->d[i].why);
    }
    free(g->d);
    sb_list_free(g->warned, g->n_warned);
    sb_list_free(g->globals.hooks, g->globals.n_hooks);
    sb_list_free(g->globals.dirs, g->globals.n_dirs);
    sb_list_free(g->globals.cmds, g->globals.n_cmds);
    gp_repos_free(g);
    sb_statmemo_free(&g->own_stats);
    memset(g, 0, sizeof *g);
}
