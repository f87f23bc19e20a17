/*
 * plan.c - compiling a profile into a launch plan.
 *
 * 1. Every entry's path is expanded ("~", :workspace, :tmp, ...) and
 *    resolved to its canonical host path (a symlinked root is bound at its
 *    target).  Missing deny paths need no mask; a missing write or read root
 *    given by the user is an error.
 *    A writable workspace or write root that is $HOME, "/" or an ancestor of
 *    $HOME is refused unless the request allows it explicitly.
 * 2. Protected carve-outs are added inside every writable root: the parts of
 *    .git that run code (hooks, config, also in the gitdir a .git file points
 *    to and its common dir), and the agent configuration (.corral, .codex,
 *    .agents, .claude, .gemini, .mcp.json, .vscode/tasks.json) at its top and
 *    below it; and in a git directory a writable root lies in.  A write root
 *    inside a protected carve-out stays read-only: extra write roots never
 *    open what corral protects.
 * 3. A user's deny path or a protected path whose logical path runs through
 *    a symlink that the sandbox could rewrite (one inside a writable root)
 *    cannot be enforced: compilation fails, naming both paths.  Built-in
 *    deny paths mean their canonical targets (/var/run is /run) and are
 *    masked there.
 * 4. Where the sandbox sees the home directory read-only, an overlay on it
 *    (the home layer) takes its writes into a directory of corral's; mounts
 *    inside the home are bound again over it, denied files in it are hidden
 *    in the layer rather than masked where no other mount lies between.
 * 5. Entries on the same path merge: deny first, then a protected carve-out,
 *    then write over read.  Mounts are ordered by depth, so a more specific
 *    path wins.
 */
#include "config.h"

#include "plan.h"
#include "dents.h"
#include "gitdir_enclosing.h"
#include "gitprotect.h"
#include "homelayer.h"
#include "mountpoints.h"
#include "placeholders.h"
#include "sbutil.h"
#include "statmemo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Directories a command needs to run at all (:minimal). */
static const char *const minimal_roots[] = {"/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64",
                                            "/libx32", "/etc", NULL};

/* Agent and tool configuration that a program loads when it starts in a
 * directory, and that names commands it then runs (hooks, MCP servers,
 * folder-open tasks) or, for .corral, rules that widen what corral lets
 * run (docs/sandbox.md, "Agent configuration").  The CLIs look for it in
 * the directory they start in, and Codex in every directory from the
 * repository's top down to there: so wherever it is found in a writable
 * root, down to AGENT_CFG_DEPTH levels, it is read-only.  A missing
 * directory of these names gets an empty read-only placeholder at the top
 * of each writable root, where a session starts its agents; a missing
 * file gets none (an empty file there would show in `git status`, and be
 * committed by `git add -A`).  Below the top, one a command creates is
 * marked in its record (src/snap/snap_diff.c) and read-only from the next
 * command on. */
typedef struct agent_cfg {
    const char *name; /* an entry of a directory, or "dir/entry" */
    bool dir;
    const char *why;  /* the plan's label */
} agent_cfg;

static const agent_cfg agent_cfgs[] = {
    {".corral", true, "protected: corral's rules for this directory (corral trust)"},
    {".codex", true, "protected: Codex loads it in every directory from the repository's top to where it starts"},
    {".agents", true, "protected: Codex loads skills from it in every directory from where it starts to the "
                      "repository's top"},
    {".claude", true, "protected: Claude Code loads its settings (hooks, MCP servers) where it starts"},
    {".gemini", true, "protected: Gemini CLI loads its settings (hooks, MCP servers) and .env where it starts"},
    {".mcp.json", false, "protected: Claude Code starts the MCP servers it names where it starts"},
    {".vscode/tasks.json", false, "protected: VS Code runs its folder-open tasks when it opens the folder"},
    {NULL, false, NULL},
};

/* Levels below a writable root searched for agent configuration: its
 * entries are level 1 (as for nested git repositories, gitprotect.c). */
#define AGENT_CFG_DEPTH 3

/* Build-tool homes bound read-write to corral's cache, so builds work and
 * the real home is never written. */
static const char *const cache_homes[] = {".cache", ".npm", ".cargo/registry", ".cargo/git", "go/pkg",
                                          ".m2", ".gradle", NULL};

/* Environment allowed into every sandbox; LC_* is a pattern. */
static const char *const env_allow[] = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG",
                                        "LC_*", "TZ", "TMPDIR", "COLORTERM", NULL};

typedef struct resolved {
    char *path;       /* canonical host path (or /tmp for :tmp) */
    sb_access access;
    bool builtin;
    bool protected;   /* a carve-out corral adds inside a writable root */
    bool demoted;     /* a write root inside a carve-out, kept read-only */
    bool special_tmp; /* the private /tmp */
    bool is_dir;
    bool link;        /* a symlink bound onto itself (read-only, pinned) */
    bool layer;       /* the home, under its layer */
    char *label;      /* what the user wrote, for messages */
} resolved;

/* What one compile learnt of the host's paths, so that the entries
 * sharing a parent (every ~/.x of the built-in deny list, the carve-outs of
 * one workspace) do not each walk it again, nor each step of the compile
 * look again at what another looked at: canonical forms of parent
 * directories, and lstat's answers (shared with the git protection
 * through its sink).  Kept for one compile only, which is one moment of
 * the host as before: the view is pinned later by file descriptors, never
 * by these names. */
/* Directories resolved (every prefix of the parents of the profile's
 * entries: the home's, the workspace's, corral's own directories'); a
 * compile past it resolves the rest with realpath() itself. */
#define PATH_MEMO_MAX 64
typedef struct path_memo {
    struct path_memo_parent {
        char *raw, *canon; /* canon NULL: realpath failed with err */
        int err;
    } parent[PATH_MEMO_MAX];
    size_t n_parent;
    sb_statmemo lstats;
} path_memo;

typedef struct compile_state {
    const sb_request *req;
    resolved *r;
    size_t n, cap;
    char *err;
    size_t errlen;
    path_memo *memo;
    char *registry_home; /* sb_placeholder_home(), looked up once per compile */
} compile_state;

static void path_memo_free(path_memo *m)
{
    for (size_t i = 0; i < m->n_parent; i++) {
        free(m->parent[i].raw);
        free(m->parent[i].canon);
    }
    sb_statmemo_free(&m->lstats);
    memset(m, 0, sizeof *m);
}

/* lstat(path) as it first answered in this compile (statmemo.h). */
static int cs_lstat(const compile_state *cs, const char *path, struct stat *st)
{
    return sb_statmemo_lstat(&cs->memo->lstats, path, st);
}

/* An absolute path of plain names: no empty, "." or ".." component, no
 * trailing slash ("/" itself is one). */
static bool plain_path(const char *p)
{
    if (p[0] != '/')
        return false;
    if (p[1] == '\0')
        return true;
    for (const char *c = p + 1;;) {
        size_t n = strcspn(c, "/");
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        if (c[n] == '\0')
            return true;
        c += n + 1;
    }
}

static const struct path_memo_parent *memo_find(const path_memo *m, const char *raw)
{
    for (size_t i = 0; i < m->n_parent; i++)
        if (strcmp(m->parent[i].raw, raw) == 0)
            return &m->parent[i];
    return NULL;
}

static const struct path_memo_parent *memo_keep(path_memo *m, const char *raw, const char *canon, int err)
{
    struct path_memo_parent *slot = &m->parent[m->n_parent++];
    slot->raw = sb_strdup(raw);
    slot->canon = canon ? sb_strdup(canon) : NULL;
    slot->err = canon ? 0 : err;
    return slot;
}

/* realpath() of a directory, remembered for the compile: the slot, whose
 * canon is NULL (errno in err) when realpath failed; NULL for a relative
 * path or when the memo is full (the caller resolves it itself).
 *
 * A plain path is resolved from "/" down, one remembered prefix after
 * another, as realpath() resolves it component by component: a component
 * that lstat() (through the memo) finds to be no symlink is its resolved
 * parent's plus its name; one that is missing fails with ENOENT, as
 * realpath()'s readlink() of it would; where the parent failed, it fails
 * the same way.  A symlink, another failure, a result too long, or a path
 * that is not plain asks realpath() itself.  So the answer is realpath()'s,
 * without a readlink() of every component of every path. */
static const struct path_memo_parent *memo_parent(const compile_state *cs, const char *raw)
{
    path_memo *m = cs->memo;
    if (raw[0] != '/')
        return NULL; /* relative: only absolute paths are remembered */
    const struct path_memo_parent *pm = memo_find(m, raw);
    if (pm)
        return pm;
    char canon[PATH_MAX];
    if (!plain_path(raw) || strlen(raw) >= PATH_MAX) {
        if (m->n_parent == PATH_MEMO_MAX)
            return NULL;
        return realpath(raw, canon) ? memo_keep(m, raw, canon, 0) : memo_keep(m, raw, NULL, errno);
    }
    char prefix[PATH_MAX];
    const struct path_memo_parent *up = NULL; /* the resolved prefix; NULL: "/" */
    for (const char *end = raw + 1;; end++) {
        if (*end != '/' && *end != '\0')
            continue;
        size_t len = (size_t)(end - raw);
        memcpy(prefix, raw, len);
        prefix[len] = '\0';
        pm = len > 1 ? memo_find(m, prefix) : NULL;
        if (!pm && len > 1) {
            if (m->n_parent == PATH_MEMO_MAX)
                return NULL;
            const char *upc = up ? up->canon : "/";
            struct stat st;
            int n = -1, rc = upc ? cs_lstat(cs, prefix, &st) : -1;
            if (!upc)
                pm = memo_keep(m, prefix, NULL, up->err);
            else if (rc < 0 && errno == ENOENT)
                pm = memo_keep(m, prefix, NULL, ENOENT); /* what realpath()'s readlink() of it meets */
            else if (rc == 0 && !S_ISLNK(st.st_mode) &&
                     (n = snprintf(canon, sizeof canon, "%s/%s", strcmp(upc, "/") == 0 ? "" : upc,
                                   strrchr(prefix, '/') + 1)) > 0 && n < (int)sizeof canon)
                pm = memo_keep(m, prefix, canon, 0);
            else
                pm = realpath(prefix, canon) ? memo_keep(m, prefix, canon, 0) : memo_keep(m, prefix, NULL, errno);
        }
        up = pm;
        if (*end == '\0')
            break;
    }
    if (up)
        return up;
    /* raw is "/" */
    if (m->n_parent == PATH_MEMO_MAX)
        return NULL;
    return memo_keep(m, raw, "/", 0);
}

/* realpath(raw, out), remembered for the compile (memo_parent). */
static char *memo_realpath(const compile_state *cs, const char *raw, char out[PATH_MAX])
{
    const struct path_memo_parent *pm = memo_parent(cs, raw);
    if (!pm)
        return realpath(raw, out);
    if (!pm->canon) {
        errno = pm->err;
        return NULL;
    }
    snprintf(out, PATH_MAX, "%s", pm->canon);
    return out;
}

/* The same answer as realpath(path) followed by stat() of the result, in
 * one lstat() when the parent was resolved (memo_parent) and the last
 * component is not a symlink (then its canonical path is the parent's plus
 * its name, and lstat() saw what stat() would).  Anything else (a symlink
 * at the end, "." or ".." or "//" in the path) goes to realpath()
 * itself. */
static char *canon_stat(compile_state *cs, const char *path, char out[PATH_MAX], struct stat *st)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : "";
    size_t plen = slash == path ? 1 : slash ? (size_t)(slash - path) : 0; /* "/x": its parent is "/" */
    if (slash && slash[1] && plain_path(path) && plen < PATH_MAX) {
        char parent[PATH_MAX];
        memcpy(parent, path, plen);
        parent[plen] = '\0';
        const struct path_memo_parent *pm = memo_parent(cs, parent);
        if (pm && !pm->canon) {
            errno = pm->err;
            return NULL;
        }
        if (pm && cs_lstat(cs, path, st) < 0)
            return NULL;
        if (pm && !S_ISLNK(st->st_mode)) {
            const char *pc = pm->canon;
            int n = snprintf(out, PATH_MAX, "%s/%s", strcmp(pc, "/") == 0 ? "" : pc, base);
            if (n > 0 && n < PATH_MAX)
                return out;
        }
    }
    if (!realpath(path, out) || stat(out, st) < 0)
        return NULL;
    return out;
}

/* Is prefix a symlink (lstat)?  The same workspace and home prefixes come
 * up for every checked path: the memo answers for them. */
static bool memo_is_symlink(const compile_state *cs, const char *prefix)
{
    struct stat st;
    return cs_lstat(cs, prefix, &st) == 0 && S_ISLNK(st.st_mode);
}

static void add_resolved(compile_state *cs, const char *path, sb_access access, bool builtin, bool protected,
                         bool is_dir, const char *label)
{
    if (cs->n == cs->cap) {
        cs->cap = cs->cap ? cs->cap * 2 : 32;
        cs->r = sb_realloc(cs->r, cs->cap * sizeof *cs->r);
    }
    resolved *x = &cs->r[cs->n++];
    memset(x, 0, sizeof *x);
    x->path = sb_strdup(path);
    x->access = access;
    x->builtin = builtin;
    x->protected = protected;
    x->is_dir = is_dir;
    x->label = sb_strdup(label);
}

/* Expand "~", ":workspace" and the other special names; NULL if the
 * special path does not apply (no runtime dir, say). */
static char *expand(const compile_state *cs, const char *path, const sb_request *req)
{
    if (strcmp(path, ":workspace") == 0)
        return sb_strdup(req->workspace ? req->workspace : req->cwd);
    if (strcmp(path, ":runtime") == 0)
        return req->runtime_dir ? sb_strdup(req->runtime_dir) : NULL;
    if (strcmp(path, ":corral-state") == 0)
        return req->corral_state ? sb_strdup(req->corral_state) : NULL;
    if (strcmp(path, ":corral-config") == 0)
        return req->corral_config ? sb_strdup(req->corral_config) : NULL;
    if (strcmp(path, ":corral-registry") == 0)
        return sb_strdup(cs->registry_home);
    if (path[0] == '~' && (path[1] == '/' || path[1] == '\0'))
        return sb_printf("%s%s", req->home, path + 1);
    return sb_strdup(path);
}

/* Is the logical path p running through a symlink inside a writable root?
 * Returns the symlink's path (caller frees) or NULL. */
static char *writable_symlink_on(const compile_state *cs, const char *p)
{
    char *copy = sb_strdup(p);
    char *found = NULL;
    for (char *s = copy + 1; !found; s++) {
        char saved = *s;
        if (saved != '/' && saved != '\0')
            continue;
        *s = '\0';
        if (memo_is_symlink(cs, copy)) {
            char *parent = sb_strdup(copy);
            char *slash = strrchr(parent, '/');
            if (slash == parent)
                slash[1] = '\0';
            else
                *slash = '\0';
            char canon[PATH_MAX];
            if (realpath(parent, canon)) {
                for (size_t i = 0; i < cs->n && !found; i++)
                    if (cs->r[i].access == SB_WRITE && sb_path_under(canon, cs->r[i].path))
                        found = sb_strdup(copy);
            }
            free(parent);
        }
        *s = saved;
        if (saved == '\0')
            break;
    }
    free(copy);
    return found;
}

/* Resolve one profile entry; 0, or -1 with cs->err set. */
static int resolve_entry(compile_state *cs, const sb_entry *e)
{
    if (strcmp(e->path, ":tmp") == 0) {
        add_resolved(cs, "/tmp", e->access, e->builtin, false, true, ":tmp");
        cs->r[cs->n - 1].special_tmp = e->access != SB_DENY;
        return 0;
    }
    if (strcmp(e->path, ":minimal") == 0) {
        for (const char *const *m = minimal_roots; *m; m++) {
            char canon[PATH_MAX];
            struct stat st;
            if (canon_stat(cs, *m, canon, &st))
                add_resolved(cs, canon, e->access, e->builtin, false, S_ISDIR(st.st_mode), ":minimal");
        }
        return 0;
    }
    char *path = expand(cs, e->path, cs->req);
    if (!path)
        return 0;
    if (path[0] != '/') {
        snprintf(cs->err, cs->errlen, "sandbox path '%s' is not absolute (use an absolute path, ~/..., or "
                 ":workspace)", e->path);
        free(path);
        return -1;
    }
    char canon[PATH_MAX];
    struct stat st;
    if (!canon_stat(cs, path, canon, &st)) {
        int er = errno;
        /* A missing deny path has nothing to hide; a missing built-in path
         * does not apply on this machine. */
        if (e->access == SB_DENY || e->builtin) {
            free(path);
            return 0;
        }
        snprintf(cs->err, cs->errlen, "%s path '%s' cannot be used: %s%s", sb_access_name(e->access), path,
                 strerror(er), er == ENOENT ? " (create it first, or drop the option)" : "");
        free(path);
        return -1;
    }
    add_resolved(cs, canon, e->access, e->builtin, false, S_ISDIR(st.st_mode), path);
    free(path);
    return 0;
}

static void push_placeholder(sb_placeholder **list, size_t *n, const char *path, const char *content)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i].path, path) == 0)
            return;
    *list = sb_realloc(*list, (*n + 1) * sizeof **list);
    (*list)[*n].path = sb_strdup(path);
    (*list)[*n].content = content ? sb_strdup(content) : NULL;
    (*n)++;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Could an existing protected path be a placeholder another sandbox made
 * (so this one must hold it, or make it again, at launch)?  Placeholders
 * are an empty directory, an empty file, or a commondir saying "."; so is
 * anything that looks like one, whatever its name (gitprotect.c makes
 * them for hooks, modules, hooksPath targets, included config files ...).
 * A path the user made that looks the same is left alone at launch: the
 * registry knows which ones corral made.  *content: what such a
 * placeholder holds (NULL: a directory). */
static bool placeholder_kind(const compile_state *cs, const char *path, bool is_dir, const char **content)
{
    *content = NULL;
    struct stat st;
    /* A directory gone since it was seen (another sandbox's placeholder,
     * removed by its last user while this plan was made) is one too: the
     * plan still binds it, so the launch must make it again (or adopt it,
     * if a third sandbox made it first).  Left out, the bind found nothing
     * and the launch failed ("cannot open .../.git"), or, made by another
     * sandbox in between and held by nobody here, it could be removed
     * under this sandbox's mount. */
    if (cs_lstat(cs, path, &st) < 0)
        return is_dir && errno == ENOENT;
    if (is_dir) {
        if (!S_ISDIR(st.st_mode))
            return false;
        return sb_dir_empty(path) || errno == ENOENT;
    }
    if (!S_ISREG(st.st_mode))
        return false;
    if (st.st_size == 0) {
        *content = "";
        return true;
    }
    if (st.st_size == 2 && strcmp(base_name(path), "commondir") == 0) {
        char buf[3] = {0};
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        bool dot = fd >= 0 && read(fd, buf, 2) == 2 && strcmp(buf, ".\n") == 0;
        if (fd >= 0)
            close(fd);
        *content = ".\n";
        return dot;
    }
    return false;
}

/* The sink through which gitprotect.c states its decisions. */
typedef struct protect_ctx {
    compile_state *cs;
    sb_plan *plan;
    /* .git directories protected whole (no HEAD, no config: no repository); what
     * gitprotect.c says about paths inside them is moot. */
    char **whole;
    size_t n_whole;
    /* The last directory sandbox_could_create asked about, and its answer:
     * a repository's placeholders are siblings, so one access() serves. */
    char *could_dir;
    bool could;
} protect_ctx;

static bool inside_whole(const protect_ctx *c, const char *path)
{
    for (size_t i = 0; i < c->n_whole; i++)
        if (sb_path_under(path, c->whole[i]))
            return true;
    return false;
}

/* An existing protected path, read-only; held at launch if it turns out to
 * be a placeholder another sandbox made. */
static void protect_existing(protect_ctx *c, const char *path, bool is_dir, const char *why)
{
    add_resolved(c->cs, path, SB_READ, true, true, is_dir, why);
    const char *content;
    if (placeholder_kind(c->cs, path, is_dir, &content))
        push_placeholder(&c->plan->shared_placeholders, &c->plan->n_shared_placeholders, path, content);
}

static void sink_pin(void *u, const char *dir, const char *why)
{
    protect_ctx *c = u;
    if (inside_whole(c, dir))
        return;
    /* A .git directory with neither HEAD nor config is no repository:
     * git's discovery skips it.  It is another sandbox's placeholder (the
     * missing .git of a workspace), or an empty directory; pinned and
     * writable, a sandbox could fill it with a config of its own and a
     * HEAD, and the host's git would then run what that config says.
     * Read-only as a whole. */
    char *head = sb_printf("%s/HEAD", dir), *config = sb_printf("%s/config", dir);
    struct stat st;
    bool repo = cs_lstat(c->cs, head, &st) == 0 || cs_lstat(c->cs, config, &st) == 0;
    free(head);
    free(config);
    if (strcmp(base_name(dir), ".git") == 0 && !repo) {
        protect_existing(c, dir, true, "protected: a .git that is no repository (yet)");
        sb_list_push(&c->whole, &c->n_whole, dir);
        return;
    }
    add_resolved(c->cs, dir, SB_WRITE, true, true, true, why);
}

static void sink_readonly(void *u, const char *path, bool is_dir, const char *why)
{
    protect_ctx *c = u;
    if (!inside_whole(c, path))
        protect_existing(c, path, is_dir, why);
}

/* A symlink the sandbox could re-point (a .git symlink it may have
 * planted): bound onto itself, read-only, so that it can be neither
 * re-pointed, renamed nor removed while the sandbox runs. */
static void sink_pin_link(void *u, const char *link, const char *why)
{
    protect_ctx *c = u;
    if (inside_whole(c, link))
        return;
    add_resolved(c->cs, link, SB_READ, true, true, false, why);
    c->cs->r[c->cs->n - 1].link = true;
}

static void sink_warn(void *u, const char *message)
{
    protect_ctx *c = u;
    for (size_t i = 0; i < c->plan->n_warnings; i++)
        if (strcmp(c->plan->warnings[i], message) == 0)
            return;
    sb_list_push(&c->plan->warnings, &c->plan->n_warnings, message);
}

/* Could the sandbox create path?  Not when its directory is neither
 * writable by the user nor owned by them (an owner could chmod it): the
 * sandbox runs as that user without capabilities, so a placeholder would
 * protect nothing, and making it would fail. */
static bool sandbox_could_create(protect_ctx *c, const char *path)
{
    char *dir = sb_strdup(path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    if (c->could_dir && strcmp(c->could_dir, dir) == 0) {
        free(dir);
        return c->could;
    }
    struct stat st;
    bool could = access(dir, W_OK) == 0 || (errno != EROFS && stat(dir, &st) == 0 && st.st_uid == geteuid());
    free(c->could_dir);
    c->could_dir = dir;
    c->could = could;
    return could;
}

static void sink_placeholder(void *u, const char *path, const char *content, const char *why)
{
    protect_ctx *c = u;
    if (inside_whole(c, path) || !sandbox_could_create(c, path))
        return;
    push_placeholder(&c->plan->placeholders, &c->plan->n_placeholders, path, content);
    add_resolved(c->cs, path, SB_READ, true, true, content == NULL, why);
}

/* Could the sandbox write path?  The most specific entry the user's
 * profile has for it decides (deny, then write, then read, on the same
 * path), as the mounts will: a directory given --read or --deny inside the
 * workspace is not writable, and a repository there needs no pin (pinning
 * would bind it writable again). */
static bool sink_writable(void *u, const char *path)
{
    protect_ctx *c = u;
    const resolved *best = NULL;
    for (size_t i = 0; i < c->cs->n; i++) {
        const resolved *r = &c->cs->r[i];
        if (r->protected || !sb_path_under(path, r->path))
            continue;
        int depth = sb_path_depth(r->path), best_depth = best ? sb_path_depth(best->path) : -1;
        if (!best || depth > best_depth || (depth == best_depth && r->access > best->access))
            best = r; /* SB_DENY > SB_WRITE > SB_READ */
    }
    return best && best->access == SB_WRITE && !best->special_tmp;
}

/* Pin the directories from dir up to root (not root itself, nor what the
 * sandbox cannot write): a directory holding a read-only mount can still
 * be renamed, and a new one with a configuration of the sandbox's made in
 * its place. */
static void pin_chain(protect_ctx *c, const char *dir, const char *root)
{
    char *d = sb_strdup(dir);
    while (strcmp(d, "/") != 0 && strcmp(d, root) != 0 && sink_writable(c, d)) {
        sink_pin(c, d, "pinned: holds agent configuration");
        char *slash = strrchr(d, '/');
        if (slash == d)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    free(d);
}

static char *parent_of(const char *path)
{
    char *p = sb_strdup(path);
    char *slash = strrchr(p, '/');
    if (slash == p)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    return p;
}

/* What a configuration symlink points to now, made read-only where the
 * sandbox could write it (an agent reads through the link); one that
 * points to nothing gets a placeholder there when the sandbox could
 * create it.  The link itself is bound onto itself: it can be neither
 * re-pointed nor removed while the sandbox runs. */
static void protect_agent_link(protect_ctx *c, const char *link, const char *root, const agent_cfg *a)
{
    char *up = parent_of(link);
    pin_chain(c, up, root);
    sink_pin_link(c, link, a->why);
    /* Through a .vscode link only tasks.json matters. */
    const char *slash = strchr(a->name, '/');
    char *follow = slash ? sb_printf("%s%s", link, slash) : sb_strdup(link);
    char target[PATH_MAX];
    struct stat st;
    if (realpath(follow, target)) {
        if (sink_writable(c, target) && !inside_whole(c, target) && stat(target, &st) == 0) {
            char *tup = parent_of(target);
            pin_chain(c, tup, root);
            free(tup);
            protect_existing(c, target, S_ISDIR(st.st_mode), a->why);
            if (S_ISDIR(st.st_mode))
                sb_list_push(&c->whole, &c->n_whole, target);
            char *msg = sb_printf("%s is a symlink to %s, inside a directory the sandbox can write: a sandboxed "
                                  "command may have made both. Both are read-only while sandboxes run, but an "
                                  "agent started there follows it: look at what it points to first", link, target);
            sink_warn(c, msg);
            free(msg);
        }
    } else if (errno == ENOENT && !slash) {
        /* Nothing there yet: where it would be, if its directory exists. */
        char to[PATH_MAX];
        ssize_t n = readlink(link, to, sizeof to - 1);
        if (n > 0) {
            to[n] = '\0';
            char *lexical = to[0] == '/' ? sb_strdup(to) : sb_printf("%s/%s", up, to);
            char *tdir = parent_of(lexical), canon[PATH_MAX];
            const char *base = strrchr(lexical, '/') + 1;
            if (*base && strcmp(base, ".") != 0 && strcmp(base, "..") != 0 && realpath(tdir, canon) &&
                sink_writable(c, canon)) {
                char *where = sb_printf("%s/%s", strcmp(canon, "/") == 0 ? "" : canon, base);
                if (cs_lstat(c->cs, where, &st) < 0 && errno == ENOENT) {
                    sink_placeholder(c, where, a->dir ? NULL : "", a->why);
                    char *msg = sb_printf("%s is a symlink to %s, which does not exist: a sandboxed command may "
                                          "have made it, to fill in later. An empty read-only placeholder holds "
                                          "its place while sandboxes run: look at it before an agent runs there",
                                          link, where);
                    sink_warn(c, msg);
                    free(msg);
                }
                free(where);
            }
            free(tdir);
            free(lexical);
        }
    }
    free(follow);
    free(up);
}

/* Agent configuration found at path (not followed): read-only (a
 * directory as a whole: nothing is pinned writable inside it), and the
 * directories holding it pinned. */
static void protect_agent_cfg(protect_ctx *c, const char *path, const char *root, const agent_cfg *a)
{
    struct stat st;
    if (cs_lstat(c->cs, path, &st) < 0 || inside_whole(c, path) || !sink_writable(c, path))
        return;
    if (S_ISLNK(st.st_mode)) {
        protect_agent_link(c, path, root, a);
        return;
    }
    char *up = parent_of(path);
    pin_chain(c, up, root);
    free(up);
    protect_existing(c, path, S_ISDIR(st.st_mode), a->why);
    if (S_ISDIR(st.st_mode))
        sb_list_push(&c->whole, &c->n_whole, path);
}

static const agent_cfg *agent_cfg_named(const char *name)
{
    for (const agent_cfg *a = agent_cfgs; a->name; a++)
        if (strcmp(a->name, name) == 0)
            return a;
    return NULL;
}

/* The directories the search may list below one root: as many as the
 * nested-repository search may look at (gitprotect.c), which lists the
 * same levels and probes one more. */
static size_t agent_cfg_budget(void)
{
    const char *env = getenv("CORRAL_GIT_SCAN_DIRS");
    if (env && *env) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(env, &end, 10);
        if (errno == 0 && *end == '\0' && v > 0 && v <= SIZE_MAX)
            return (size_t)v;
    }
    return SB_GIT_SCAN_DIRS_DEFAULT;
}

/* A directory the search cannot list: passed over when nothing in it is
 * reachable to us (nor to a sandbox running as us), an error when we
 * could enter it or make it readable again: a sandboxed command could
 * have hidden a configuration there with chmod. */
static int agent_cfg_unreadable(compile_state *cs, const char *path, int e)
{
    if (e == ENOENT || e == ENOTDIR || e == ELOOP)
        return 0; /* gone, or swapped for a file or symlink meanwhile */
    struct stat st;
    if (e == EACCES && !(cs_lstat(cs, path, &st) == 0 && st.st_uid == geteuid()) && access(path, X_OK) != 0)
        return 0;
    snprintf(cs->err, cs->errlen, "cannot look for agent configuration in %s: %s (a sandboxed command could hide "
             "one there that an agent later loads); make it readable (chmod u+rx %s) or remove it", path,
             strerror(e), path);
    return -1;
}

typedef struct dir_todo {
    char *path;
    int depth;
} dir_todo;

typedef struct cfg_search {
    protect_ctx *c;
    const char *root;
    dir_todo *todo;
    size_t n, cap;
} cfg_search;

/* One entry of the directory cur: protected if it is agent configuration,
 * queued if it is a directory to search. */
static void cfg_entry(cfg_search *S, const dir_todo *cur, const char *name, unsigned char t)
{
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, ".git") == 0)
        return;
    /* Every name searched for starts with a dot: the others matter only as
     * directories to go into. */
    const agent_cfg *a = name[0] == '.' ? agent_cfg_named(name) : NULL;
    bool vscode = strcmp(name, ".vscode") == 0;
    if (!a && t != DT_DIR && !(vscode && t == DT_LNK))
        return;
    char *p = sb_printf("%s%s%s", cur->path, strcmp(cur->path, "/") == 0 ? "" : "/", name);
    if (a) {
        protect_agent_cfg(S->c, p, S->root, a); /* and not searched: read-only as a whole */
        free(p);
        return;
    }
    if (vscode) {
        const agent_cfg *tasks = agent_cfg_named(".vscode/tasks.json");
        char *f = sb_printf("%s/tasks.json", p);
        if (t == DT_LNK)
            protect_agent_link(S->c, p, S->root, tasks);
        else
            protect_agent_cfg(S->c, f, S->root, tasks);
        free(f);
    }
    if (t != DT_DIR || cur->depth + 1 >= AGENT_CFG_DEPTH) {
        free(p);
        return;
    }
    if (S->n == S->cap) {
        S->cap = S->cap ? S->cap * 2 : 64;
        S->todo = sb_realloc(S->todo, S->cap * sizeof *S->todo);
    }
    S->todo[S->n++] = (dir_todo){p, cur->depth + 1};
}

/* Agent configuration in root and the directories below it, down to
 * AGENT_CFG_DEPTH levels.  Every directory is opened with
 * RESOLVE_NO_SYMLINKS (one swapped for a symlink meanwhile leads nowhere)
 * and read with getdents64, through sb_dents_at (in the server an
 * unchanged directory is not read again); the search never goes into
 * .git, nor into what it found. */
static int protect_agent_cfgs(protect_ctx *c, const char *root)
{
    compile_state *cs = c->cs;
    size_t budget = agent_cfg_budget(), full = budget;
    cfg_search S = {.c = c, .root = root};
    S.todo = sb_alloc(sizeof *S.todo);
    S.cap = 1;
    S.todo[S.n++] = (dir_todo){sb_strdup(root), 0};
    int rc = 0;
    while (S.n > 0 && rc == 0) {
        dir_todo cur = S.todo[--S.n];
        if (budget-- == 0) {
            snprintf(cs->err, cs->errlen, "cannot protect the agent configuration in %s: it has more than %zu "
                     "directories within %d levels. Raise the limit (CORRAL_GIT_SCAN_DIRS=%zu in the environment "
                     "of corral and of its server), or move big trees out of %s", root, full, AGENT_CFG_DEPTH,
                     full * 4, root);
            free(cur.path);
            rc = -1;
            break;
        }
        sb_dents ents;
        if (sb_dents_at(cur.path, cur.depth == 0, &ents) < 0) {
            rc = agent_cfg_unreadable(cs, cur.path, errno);
        } else {
            for (size_t i = 0; i < ents.n; i++)
                cfg_entry(&S, &cur, ents.v[i].name, ents.v[i].type);
            sb_dents_free(&ents);
        }
        free(cur.path);
    }
    for (size_t i = 0; i < S.n; i++)
        free(S.todo[i].path);
    free(S.todo);
    return rc;
}

/* Carve-outs inside the writable root w: agent configuration (first, so
 * that nothing the git protection pins inside it opens it again), git's
 * code-running parts, and placeholders for the missing agent directories
 * at its top.  When both searches fail (too many directories, one that
 * cannot be read), git's message is the one shown: it names more. */
static int protect_writable_root(protect_ctx *ctx, const sb_protect_sink *sink, const char *w)
{
    compile_state *cs = ctx->cs;
    char *agent_err = NULL;
    if (protect_agent_cfgs(ctx, w) < 0)
        agent_err = sb_strdup(cs->err);
    if (sb_protect_repos(w, sink, cs->err, cs->errlen) < 0) {
        free(agent_err);
        return -1;
    }
    if (agent_err) {
        snprintf(cs->err, cs->errlen, "%s", agent_err);
        free(agent_err);
        return -1;
    }
    struct stat st;
    for (const agent_cfg *a = agent_cfgs; a->name; a++) {
        char *p = sb_printf("%s/%s", strcmp(w, "/") == 0 ? "" : w, a->name);
        /* A read-only mount needs a mount point: an empty directory made
         * now and removed when the last sandbox using it ends. */
        if (a->dir && cs_lstat(cs, p, &st) < 0 && errno == ENOENT)
            sink_placeholder(ctx, p, NULL, "protected (empty; created for the mount)");
        free(p);
    }
    return 0;
}

/* The protected read-only carve-out path lies in (or is), or NULL. */
static const char *protected_over(const compile_state *cs, const char *path)
{
    for (size_t i = 0; i < cs->n; i++)
        if (cs->r[i].protected && cs->r[i].access == SB_READ && sb_path_under(path, cs->r[i].path))
            return cs->r[i].path;
    return NULL;
}

/* A write root inside a protected carve-out stays read-only. */
static bool demote_if_protected(compile_state *cs, size_t i)
{
    const char *over = protected_over(cs, cs->r[i].path);
    if (!over)
        return false;
    char *label = sb_printf("read-only: inside %s, which corral protects (a write root never opens it)", over);
    free(cs->r[i].label);
    cs->r[i].label = label;
    cs->r[i].access = SB_READ;
    cs->r[i].protected = true;
    cs->r[i].demoted = true;
    return true;
}

static int cmp_index_depth(const void *a, const void *b, void *arg)
{
    const compile_state *cs = arg;
    const resolved *x = &cs->r[*(const size_t *)a], *y = &cs->r[*(const size_t *)b];
    return sb_path_depth(x->path) - sb_path_depth(y->path);
}

/* Protect every writable root given so far (the user's and the profile's),
 * the shallowest first, so that a deeper root inside a carve-out of a
 * shallower one is seen to be inside it. */
static int protect_writable_roots(compile_state *cs, sb_plan *plan)
{
    protect_ctx ctx = {.cs = cs, .plan = plan};
    sb_protect_sink sink = {.user = &ctx, .pin = sink_pin, .readonly = sink_readonly,
                            .placeholder = sink_placeholder, .writable = sink_writable,
                            .pin_link = sink_pin_link, .warn = sink_warn, .stats = &cs->memo->lstats};
    size_t n = 0, *order = sb_alloc((cs->n + 1) * sizeof *order);
    for (size_t i = 0; i < cs->n; i++)
        if (cs->r[i].access == SB_WRITE && !cs->r[i].special_tmp)
            order[n++] = i;
    qsort_r(order, n, sizeof *order, cmp_index_depth, cs);
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        if (demote_if_protected(cs, order[k]))
            continue;
        char *w = sb_strdup(cs->r[order[k]].path);
        sb_protect_enclosing_gitdirs(w, &sink);
        /* A writable "/" (an approved escalation that keeps only the deny
         * list) leaves nothing of the host to protect: its repositories
         * and the shell's startup files are all writable.  Carve-outs at
         * the host's root and a scan of its first levels would protect
         * nothing, and would make placeholders in "/". */
        if (!demote_if_protected(cs, order[k]) && strcmp(w, "/") != 0)
            rc = protect_writable_root(&ctx, &sink, w);
        free(w);
    }
    free(order);
    free(ctx.could_dir);
    sb_list_free(ctx.whole, ctx.n_whole);
    return rc;
}

/* A writable workspace or write root that is $HOME, "/" or above $HOME
 * would let the sandbox rewrite what the user's own shell and desktop run
 * next; refused unless asked for. */
static int refuse_home_roots(const compile_state *cs, const char *workspace)
{
    const sb_request *req = cs->req;
    if (req->allow_home_workspace || !req->home || req->home[0] != '/')
        return 0;
    char home[PATH_MAX];
    if (!memo_realpath(cs, req->home, home))
        snprintf(home, sizeof home, "%s", req->home);
    for (size_t i = 0; i < cs->n; i++) {
        const resolved *r = &cs->r[i];
        if (r->access != SB_WRITE || r->special_tmp || !sb_path_under(home, r->path))
            continue;
        char what[PATH_MAX + 64];
        if (strcmp(r->path, home) == 0)
            snprintf(what, sizeof what, "is your home directory");
        else if (strcmp(r->path, "/") == 0)
            snprintf(what, sizeof what, "is the root directory, which holds your home directory %s", home);
        else
            snprintf(what, sizeof what, "holds your home directory %s", home);
        snprintf(cs->err, cs->errlen, "refusing to make %s %s writable: it %s, so your shell's startup files "
                 "(~/.bashrc, ~/.profile), autostart entries (~/.config/autostart) and credentials would be "
                 "writable by the agent; run in a project directory instead (-C DIR), or pass "
                 "--allow-home-workspace if that is really what you want",
                 strcmp(r->path, workspace) == 0 ? "the workspace" : "the write root", r->path, what);
        return -1;
    }
    return 0;
}

/* Which of two entries on one path wins: deny, then a protected
 * read-only carve-out, then a write root kept read-only inside one (the
 * carve-out's reason is the one to show), then write (a user's write root
 * over a pin, both writable mount points), then read.  A write root never overrides what
 * corral protects. */
static int merge_rank(const resolved *r)
{
    if (r->access == SB_DENY)
        return 6;
    if (r->demoted)
        return 4;
    /* A pin is writable too: on the path of a write root the user gave,
     * the user's entry stands (its name in the plan, nothing else differs:
     * both are mount points). */
    if (r->protected)
        return r->access == SB_READ ? 5 : 2;
    return r->access == SB_WRITE ? 3 : 1;
}

/* The most specific entry for path (a tie goes to the stronger entry, as
 * the merge decides), or NULL. */
static const resolved *entry_for(const compile_state *cs, const char *path)
{
    const resolved *best = NULL;
    for (size_t i = 0; i < cs->n; i++) {
        const resolved *r = &cs->r[i];
        if (!sb_path_under(path, r->path))
            continue;
        int depth = sb_path_depth(r->path), best_depth = best ? sb_path_depth(best->path) : -1;
        if (!best || depth > best_depth || (depth == best_depth && merge_rank(r) > merge_rank(best)))
            best = r;
    }
    return best;
}

/* Is path inside a denied directory that is its nearest entry?  A mask
 * there is redundant, and has no mount point in the empty directory that
 * hides everything below it (--deny ~ with the default deny list's
 * ~/.lesshst). */
static bool under_denied_dir(const compile_state *cs, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return false;
    char *parent = sb_printf("%.*s", (int)(slash - path), path);
    const resolved *up = entry_for(cs, parent);
    free(parent);
    return up && up->access == SB_DENY;
}

/* Is path in the sandbox's own /dev, with nothing of the host's there
 * (its nearest entry above is not a root bound at or below /dev)?  Every
 * sandbox has a /dev of its own (a fresh tmpfs: the plan's "dev" mount),
 * so a denied path there needs no mask: the host's is out of sight
 * (corral's placeholder registry in /dev/shm, say, unless /dev/shm is
 * made a root). */
static bool out_of_sight_in_dev(const compile_state *cs, const char *path)
{
    if (!sb_path_under(path, "/dev") || strcmp(path, "/dev") == 0)
        return false;
    const char *slash = strrchr(path, '/');
    char *parent = sb_printf("%.*s", (int)(slash - path), path);
    const resolved *up = entry_for(cs, parent);
    free(parent);
    return !up || !sb_path_under(up->path, "/dev");
}

/* Where the home layer goes: the canonical home directory when the
 * sandbox would see it read-only, else NULL with *why_not. */
static char *home_layer_place(const compile_state *cs, const sb_profile *p, const char **why_not)
{
    const sb_request *req = cs->req;
    char canon[PATH_MAX]; /* canonical: no symlink at its end, so lstat() sees what stat() would */
    struct stat st;
    if (p->home_layer == SB_HOME_OFF)
        *why_not = "read-only ([sandbox] home-layer = off)";
    else if (!req->home_layers_dir)
        *why_not = "read-only (corral has no state directory to keep a layer in)";
    else if (!req->home || req->home[0] != '/' || !memo_realpath(cs, req->home, canon) ||
             cs_lstat(cs, canon, &st) < 0 || !S_ISDIR(st.st_mode))
        *why_not = "read-only where it is visible ($HOME names no directory)";
    else if (strcmp(canon, "/") == 0)
        *why_not = "read-only (the home directory is /)";
    else {
        const resolved *r = entry_for(cs, canon);
        if (r && r->access == SB_READ && !r->protected)
            return sb_strdup(canon);
        *why_not = !r || r->special_tmp ? "not in the sandbox's view"
                   : r->access == SB_DENY ? "hidden (denied)"
                   : r->access == SB_WRITE ? "writable (a write root holds it)"
                   : "read-only (protected)";
    }
    return NULL;
}

/* The host's mounts inside the home: an overlay shows only the home's own
 * filesystem, so each is bound again, read-only, over the layer, unless
 * an entry deeper than the home covers it already (a deny mask hides it,
 * a bind carries it along). */
static void home_submounts(compile_state *cs, const char *home)
{
    size_t len = 0;
    char *points = sb_mountpoints(&len);
    if (!points)
        return;
    int home_depth = sb_path_depth(home);
    for (const char *point = points; point < points + len; point += strlen(point) + 1) {
        if (strcmp(point, home) == 0 || !sb_path_under(point, home))
            continue;
        bool covered = false;
        for (size_t i = 0; i < cs->n && !covered; i++)
            covered = sb_path_depth(cs->r[i].path) > home_depth && sb_path_under(point, cs->r[i].path);
        char canon[PATH_MAX];
        struct stat st;
        if (covered || !realpath(point, canon) || strcmp(canon, point) != 0 || stat(canon, &st) < 0)
            continue;
        add_resolved(cs, canon, SB_READ, true, false, S_ISDIR(st.st_mode),
                     "a mount inside the home (the home layer shows only the home's own filesystem)");
    }
    free(points);
}

/* May the denied file r->path be hidden in the home layer instead of
 * masked?  Only when it is inside the layer with no other entry between:
 * a bind on the way (the workspace, a mount inside the home) would show
 * the real file above the layer. */
static bool hide_in_layer(const compile_state *cs, const resolved *x, const char *home)
{
    if (!home || x->is_dir || strcmp(x->path, home) == 0 || !sb_path_under(x->path, home))
        return false;
    int home_depth = sb_path_depth(home);
    for (size_t i = 0; i < cs->n; i++) {
        const resolved *r = &cs->r[i];
        if (r != x && strcmp(r->path, x->path) != 0 && sb_path_under(x->path, r->path) &&
            sb_path_depth(r->path) > home_depth)
            return false;
    }
    return true;
}

static int cmp_depth(const void *a, const void *b)
{
    const resolved *x = a, *y = b;
    int dx = sb_path_depth(x->path), dy = sb_path_depth(y->path);
    if (dx != dy)
        return dx - dy;
    return strcmp(x->path, y->path);
}

static void add_mount(sb_plan *plan, sb_mount_kind kind, const char *src, const char *dst, bool rdonly,
                      uint64_t size, unsigned mode, const char *why)
{
    if (plan->n_mounts == plan->cap_mounts) {
        plan->cap_mounts = plan->cap_mounts ? plan->cap_mounts * 2 : 32;
        plan->mounts = sb_realloc(plan->mounts, plan->cap_mounts * sizeof *plan->mounts);
    }
    sb_mount *m = &plan->mounts[plan->n_mounts++];
    m->kind = kind;
    m->src = src ? sb_strdup(src) : NULL;
    m->dst = sb_strdup(dst);
    m->rdonly = rdonly;
    m->size = size;
    m->mode = mode;
    m->why = sb_strdup(why);
    m->link = false;
    m->hide_in_layer = false;
    m->skip = false;
}

static bool env_matches(const char *name, size_t namelen, const char *pattern)
{
    char buf[256];
    if (namelen >= sizeof buf)
        return false;
    memcpy(buf, name, namelen);
    buf[namelen] = '\0';
    return fnmatch(pattern, buf, 0) == 0;
}

/* Names that carry credentials: never passed unless listed by exact name. */
static bool env_secret(const char *name, size_t namelen)
{
    static const char *const secret[] = {"SSH_AUTH_SOCK", "*_TOKEN", "*_KEY", "*SECRET*", "AWS_*",
                                         "*PASSWORD*", "*_CREDENTIALS", NULL};
    char buf[256];
    if (namelen >= sizeof buf)
        return true;
    for (size_t i = 0; i < namelen; i++)
        buf[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    buf[namelen] = '\0';
    for (const char *const *s = secret; *s; s++)
        if (fnmatch(*s, buf, 0) == 0)
            return true;
    return false;
}

static void env_put(char ***env, size_t *n, const char *kv)
{
    size_t klen = strcspn(kv, "=");
    for (size_t i = 0; i < *n; i++) {
        if (strncmp((*env)[i], kv, klen) == 0 && (*env)[i][klen] == '=') {
            free((*env)[i]);
            (*env)[i] = sb_strdup(kv);
            return;
        }
    }
    sb_list_push(env, n, kv);
}

/* A session's command finds corral (for corral escalate and the shell
 * hooks) first on PATH, and the channel on fd 3.  Unconfined, the host's
 * paths are used as they are. */
static void session_tools_env(const sb_profile *p, const sb_request *req, char ***env, size_t *n)
{
    char *bin = p->unconfined ? sb_strdup(req->corral_exe) : sb_strdup(SB_TOOLS_DIR "/bin/corral");
    char *kv = sb_printf("CORRAL_BIN=%s", bin);
    env_put(env, n, kv);
    free(kv);
    if (req->shell_dir) {
        const char *dir = p->unconfined ? req->shell_dir : SB_TOOLS_DIR "/shell";
        kv = sb_printf("CORRAL_SHELL_DIR=%s", dir);
        env_put(env, n, kv);
        free(kv);
        /* A login shell's profile sets PATH anew: every bash then reads
         * path.bash (BASH_ENV), which puts corral back; a BASH_ENV of the
         * session's own is read from there. */
        for (size_t i = 0; i < *n; i++)
            if (strncmp((*env)[i], "BASH_ENV=", 9) == 0 && (*env)[i][9]) {
                kv = sb_printf("CORRAL_USER_BASH_ENV=%s", (*env)[i] + 9);
                env_put(env, n, kv);
                free(kv);
                break;
            }
        kv = sb_printf("BASH_ENV=%s/path.bash", dir);
        env_put(env, n, kv);
        free(kv);
    }
    env_put(env, n, "CORRAL_SESSION_FD=3");
    if (!p->unconfined) {
        const char *path = NULL;
        for (size_t i = 0; i < *n; i++)
            if (strncmp((*env)[i], "PATH=", 5) == 0)
                path = (*env)[i] + 5;
        kv = sb_printf("PATH=%s/bin%s%s", SB_TOOLS_DIR, path && *path ? ":" : "", path ? path : "");
        env_put(env, n, kv);
        free(kv);
    }
    free(bin);
}

/* Network mode proxy: every way tools find a proxy points at the
 * listeners the sandbox's init hands to the server (netns.h), so curl,
 * wget, git over http(s), pip, npm, yarn, bundler and cargo work unchanged.
 * SOCKS is socks5h: the proxy resolves names (there is no DNS inside), and
 * only after a host is allowed.  NO_PROXY keeps the sandbox's own loopback
 * direct. */
#define PROXY_HTTP "http://127.0.0.1:3128"
#define PROXY_SOCKS "socks5h://127.0.0.1:1080"
static const char *const proxy_env[] = {
    "HTTP_PROXY=" PROXY_HTTP, "HTTPS_PROXY=" PROXY_HTTP, "http_proxy=" PROXY_HTTP, "https_proxy=" PROXY_HTTP,
    "ALL_PROXY=" PROXY_SOCKS, "all_proxy=" PROXY_SOCKS, "NO_PROXY=localhost,127.0.0.1,::1",
    "no_proxy=localhost,127.0.0.1,::1", "npm_config_proxy=" PROXY_HTTP, "npm_config_https_proxy=" PROXY_HTTP,
    "YARN_HTTP_PROXY=" PROXY_HTTP, "YARN_HTTPS_PROXY=" PROXY_HTTP, "PIP_PROXY=" PROXY_HTTP,
    "BUNDLE_HTTP_PROXY=" PROXY_HTTP, "BUNDLE_HTTPS_PROXY=" PROXY_HTTP, "CARGO_HTTP_PROXY=" PROXY_HTTP,
    "NODE_USE_ENV_PROXY=1", "ELECTRON_GET_USE_PROXY=1", "CORRAL_NETWORK=proxy", NULL};

static void build_env(const sb_profile *p, const sb_request *req, sb_plan *plan)
{
    char **env = NULL;
    size_t n = 0;
    for (char *const *e = req->environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        size_t klen = (size_t)(eq - *e);
        /* No sandbox, no filtering: "full" passes the environment on. */
        bool keep = p->unconfined && strncmp(*e, "CORRAL_", 7) != 0;
        for (const char *const *a = env_allow; *a && !keep; a++)
            keep = env_matches(*e, klen, *a);
        bool secret = env_secret(*e, klen);
        if (keep && secret && !p->unconfined)
            keep = false;
        for (size_t i = 0; i < p->n_keep && !keep; i++) {
            const char *k = p->env_keep[i];
            bool exact = strlen(k) == klen && strncmp(k, *e, klen) == 0;
            keep = exact || (!secret && env_matches(*e, klen, k));
        }
        if (keep)
            env_put(&env, &n, *e);
    }
    for (size_t i = 0; i < p->n_set; i++)
        env_put(&env, &n, p->env_set[i]);
    for (char *const *e = req->set_env; e && *e; e++)
        env_put(&env, &n, *e);
    if (p->net == SB_NET_PROXY && !p->unconfined)
        for (const char *const *e = proxy_env; *e; e++)
            env_put(&env, &n, *e);
    if (req->session_id > 0) {
        char *kv = sb_printf("CORRAL_SESSION=%d", req->session_id);
        env_put(&env, &n, kv);
        free(kv);
    }
    char *kv = sb_printf("CORRAL_SANDBOX=%s", p->name);
    env_put(&env, &n, kv);
    free(kv);
    if (req->corral_exe)
        session_tools_env(p, req, &env, &n);
    plan->envp = env ? env : sb_alloc(sizeof(char *));
}

static void copy_argv(sb_plan *plan, char *const *argv)
{
    size_t n = 0;
    while (argv[n])
        n++;
    plan->argv = sb_alloc((n + 1) * sizeof *plan->argv);
    for (size_t i = 0; i < n; i++)
        plan->argv[i] = sb_strdup(argv[i]);
}

static int compile(const sb_profile *p, const sb_request *req, sb_plan *out, char *err, size_t errlen);

void sb_plan_keep_listings(void)
{
    sb_dents_watch();
}

int sb_plan_compile(const sb_profile *p, const sb_request *req, sb_plan *out, char *err, size_t errlen)
{
    int rc = compile(p, req, out, err, errlen);
    if (rc < 0)
        sb_plan_free(out); /* nothing half-made is left to the caller (freeing it again is harmless) */
    return rc;
}

/* The compile, with what it learns of the host kept in memo (path_memo):
 * one memo per compile, freed by the caller. */
static int compile_in(const sb_profile *p, const sb_request *req, sb_plan *out, char *err, size_t errlen,
                      path_memo *memo)
{
    compile_state cs = {.req = req, .err = err, .errlen = errlen, .memo = memo};
    memset(out, 0, sizeof *out);
    out->profile = sb_strdup(p->name);
    out->unconfined = p->unconfined;
    out->net = p->net;
    out->limits = p->limits;
    out->uid = getuid();
    out->gid = getgid();
    copy_argv(out, req->argv);
    out->cwd = sb_strdup(req->cwd);
    if (!req->argv[0]) {
        snprintf(err, errlen, "no command to run");
        return -1;
    }
    char canon[PATH_MAX];
    const char *ws = req->workspace ? req->workspace : req->cwd;
    if (!memo_realpath(&cs, ws, canon)) {
        snprintf(err, errlen, "workspace '%s' cannot be used: %s", ws, strerror(errno));
        return -1;
    }
    out->workspace = sb_strdup(canon);
    build_env(p, req, out);
    if (p->unconfined)
        return 0;

    out->ns_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
    if (p->net != SB_NET_FULL)
        out->ns_flags |= CLONE_NEWNET;

    cs.registry_home = sb_placeholder_home();
    out->placeholder_registry = sb_placeholder_registry(cs.registry_home);
    sb_request wsreq = *req;
    wsreq.workspace = out->workspace;
    cs.req = &wsreq;
    int rc = -1;
    for (size_t i = 0; i < p->n_entries; i++)
        if (resolve_entry(&cs, &p->entries[i]) < 0)
            goto done;

    if (refuse_home_roots(&cs, out->workspace) < 0)
        goto done;
    /* Carve-outs inside every writable root, then the symlink check of
     * everything that must hold (deny and protected). */
    size_t n_user = cs.n;
    if (protect_writable_roots(&cs, out) < 0)
        goto done;
    for (size_t i = 0; i < p->n_entries; i++) {
        const sb_entry *e = &p->entries[i];
        /* A built-in deny path names what it denies by its usual name
         * (/var/run, ~/.ssh): it is masked at its canonical target, which
         * resolve_entry found, whatever its name points to later.  A path
         * the user gave means that path: through a symlink the sandbox
         * could re-point it would mask the wrong thing. */
        if (e->access != SB_DENY || e->path[0] == ':' || e->builtin)
            continue;
        char *logical = expand(&cs, e->path, &wsreq);
        char *link = logical ? writable_symlink_on(&cs, logical) : NULL;
        if (link) {
            snprintf(err, errlen, "cannot enforce deny path %s because it crosses writable symlink %s "
                     "(the sandbox could re-point it); remove the symlink or the deny entry", logical, link);
            free(link);
            free(logical);
            goto done;
        }
        free(logical);
    }
    for (size_t i = n_user; i < cs.n; i++) {
        /* A pinned symlink is itself what is protected: only the way to
         * it must hold. */
        char *way = cs.r[i].link ? sb_strdup(cs.r[i].path) : NULL;
        if (way)
            *strrchr(way, '/') = '\0';
        char *link = writable_symlink_on(&cs, way ? way : cs.r[i].path);
        free(way);
        struct stat st;
        if (!link && !cs.r[i].link && cs_lstat(&cs, cs.r[i].path, &st) == 0 && S_ISLNK(st.st_mode))
            link = sb_strdup(cs.r[i].path);
        if (link) {
            snprintf(err, errlen, "cannot enforce sandbox read-only path %s because it crosses writable "
                     "symlink %s; replace the symlink with the real directory or run with another profile",
                     cs.r[i].path, link);
            free(link);
            goto done;
        }
    }

    /* The home layer, and the host's mounts inside the home over it. */
    const char *why_not = NULL;
    char *layer_home = home_layer_place(&cs, p, &why_not);
    out->layer_mode = p->home_layer;
    if (layer_home) {
        home_submounts(&cs, layer_home);
        add_resolved(&cs, layer_home, SB_READ, true, false, true, "home layer");
        cs.r[cs.n - 1].layer = true;
        out->layer_home = layer_home;
        out->layer_dir = sb_strdup(req->home_layers_dir);
        out->layer_key = req->workspace_key ? sb_strdup(req->workspace_key) : NULL;
        out->layer_in_memory = p->home_layer == SB_HOME_DISCARD && !p->home_layer_on_disk && sb_layer_in_memory();
    } else {
        out->layer_why_not = sb_strdup(why_not);
    }

    /* Merge entries on the same path: the strongest wins. */
    qsort(cs.r, cs.n, sizeof *cs.r, cmp_depth);
    size_t w = 0;
    for (size_t i = 0; i < cs.n; i++) {
        if (w > 0 && strcmp(cs.r[w - 1].path, cs.r[i].path) == 0) {
            resolved *keep = &cs.r[w - 1], *drop = &cs.r[i];
            if (merge_rank(drop) > merge_rank(keep)) {
                resolved t = *keep;
                *keep = *drop;
                *drop = t;
            }
            keep->special_tmp = keep->special_tmp || drop->special_tmp;
            /* The layer stays only over a plain read entry (a -r ~). */
            keep->layer = (keep->layer || drop->layer) && keep->access == SB_READ && !keep->protected;
            free(drop->path);
            free(drop->label);
            continue;
        }
        cs.r[w++] = cs.r[i];
    }
    cs.n = w;

    /* The root: the host's / (read-only unless written), else an empty
     * tmpfs that only the listed paths appear in. */
    bool root_bound = false;
    for (size_t i = 0; i < cs.n; i++) {
        if (strcmp(cs.r[i].path, "/") == 0 && cs.r[i].access != SB_DENY) {
            add_mount(out, SB_M_BIND, "/", "/", cs.r[i].access != SB_WRITE, 0, 0,
                      cs.r[i].access == SB_WRITE ? "root, writable" : "read root");
            if (cs.r[i].access == SB_WRITE)
                sb_list_push(&out->write_roots, &out->n_write_roots, "/");
            root_bound = true;
        }
    }
    if (!root_bound)
        add_mount(out, SB_M_TMPFS, NULL, "/", true, 1 << 20, 0755, "empty root (only listed paths)");
    bool layered = false;
    add_mount(out, SB_M_DEV, NULL, "/dev", false, p->limits.tmp_size, 0755,
              "minimal: null zero full random urandom tty, new devpts, shm (as big as /tmp)");
    add_mount(out, SB_M_PROC, NULL, "/proc", false, 0, 0,
              "fresh, for the new pid namespace; /proc/sys and other kernel knobs read-only");
    for (size_t i = 0; i < cs.n; i++) {
        resolved *x = &cs.r[i];
        if (strcmp(x->path, "/") == 0)
            continue;
        if (x->special_tmp && x->access == SB_WRITE) {
            char size[32];
            sb_format_size(p->limits.tmp_size, size, sizeof size);
            char *why = sb_printf("private tmpfs, %s", size);
            add_mount(out, SB_M_TMPFS, NULL, "/tmp", false, p->limits.tmp_size, 01777, why);
            free(why);
            sb_list_push(&out->write_roots, &out->n_write_roots, "/tmp");
            continue;
        }
        if (x->layer) {
            layered = true;
            add_mount(out, SB_M_OVERLAY, x->path, x->path, false, 0, 0,
                      p->home_layer == SB_HOME_KEEP
                          ? "home layer: the real home read-only below, writes kept for this workspace"
                          : "home layer: the real home read-only below, writes gone when the sandbox ends");
            sb_list_push(&out->write_roots, &out->n_write_roots, x->path);
            continue;
        }
        if (x->access == SB_DENY) {
            if (under_denied_dir(&cs, x->path) || out_of_sight_in_dev(&cs, x->path))
                continue;
            char *why = sb_printf("deny%s", x->builtin ? " (default)" : "");
            /* Masks are mode 000, except one the session's tools sit in
             * (/run): the command must pass through it to reach them. */
            unsigned mode = req->corral_exe && sb_path_under(SB_TOOLS_DIR, x->path) ? 0755 : 0;
            if (x->is_dir) {
                add_mount(out, SB_M_TMPFS, NULL, x->path, true, 4096, mode, why);
            } else {
                add_mount(out, SB_M_MASK_FILE, NULL, x->path, true, 0, 0, why);
                out->mounts[out->n_mounts - 1].hide_in_layer = hide_in_layer(&cs, x, out->layer_home);
            }
            free(why);
            continue;
        }
        const char *why = x->protected ? x->label
                          : x->access == SB_WRITE
                              ? (strcmp(x->path, out->workspace) == 0 ? "workspace" : "writable root")
                              : "read root";
        add_mount(out, SB_M_BIND, x->path, x->path, x->access != SB_WRITE, 0, 0, why);
        out->mounts[out->n_mounts - 1].link = x->link;
        if (x->access == SB_WRITE)
            sb_list_push(&out->write_roots, &out->n_write_roots, x->path);
    }

    if (out->layer_home && !layered) {
        /* The merge gave the home's place to a stronger entry. */
        free(out->layer_home);
        out->layer_home = NULL;
        out->layer_why_not = sb_strdup("read-only (another entry for the home wins)");
    }

    /* Build tools' caches: corral's cache, bound over the homes that exist,
     * when the workspace is writable at all. */
    bool ws_writable = false;
    for (size_t i = 0; i < out->n_write_roots; i++)
        ws_writable |= sb_path_under(out->workspace, out->write_roots[i]);
    if (req->cache_dir && ws_writable) {
        for (const char *const *c = cache_homes; *c; c++) {
            char *home_path = sb_printf("%s/%s", req->home, *c);
            struct stat st;
            bool denied = false;
            for (size_t i = 0; i < cs.n; i++)
                if (cs.r[i].access == SB_DENY && sb_path_under(home_path, cs.r[i].path))
                    denied = true;
            if (!denied && cs_lstat(&cs, home_path, &st) == 0 && S_ISDIR(st.st_mode)) {
                char *src = sb_printf("%s/%s", req->cache_dir, *c);
                add_mount(out, SB_M_BIND, src, home_path, false, 0, 0, "build-tool cache (corral's copy)");
                sb_list_push(&out->write_roots, &out->n_write_roots, home_path);
                free(src);
            }
            free(home_path);
        }
    }
    sb_list_push(&out->write_roots, &out->n_write_roots, "/dev");
    /* A session's tools, over whatever is at SB_TOOLS_DIR (a mask of /run
     * normally): a read-only tmpfs holding read-only binds. */
    if (req->corral_exe) {
        add_mount(out, SB_M_TMPFS, NULL, SB_TOOLS_DIR, true, 4096, 0755, "corral's session tools");
        add_mount(out, SB_M_BIND, req->corral_exe, SB_TOOLS_DIR "/bin/corral", true, 0, 0,
                  "corral, for corral escalate and the shell hooks");
        if (req->shell_dir)
            add_mount(out, SB_M_BIND, req->shell_dir, SB_TOOLS_DIR "/shell", true, 0, 0, "corral's shell hooks");
    }
    rc = 0;
done:
    for (size_t i = 0; i < cs.n; i++) {
        free(cs.r[i].path);
        free(cs.r[i].label);
    }
    free(cs.r);
    free(cs.registry_home);
    return rc;
}

static int compile(const sb_profile *p, const sb_request *req, sb_plan *out, char *err, size_t errlen)
{
    path_memo memo = {0};
    int rc = compile_in(p, req, out, err, errlen, &memo);
    path_memo_free(&memo);
    return rc;
}

void sb_plan_free(sb_plan *plan)
{
    free(plan->profile);
    for (char **a = plan->argv; a && *a; a++)
        free(*a);
    free(plan->argv);
    for (char **e = plan->envp; e && *e; e++)
        free(*e);
    free(plan->envp);
    free(plan->cwd);
    free(plan->workspace);
    for (size_t i = 0; i < plan->n_mounts; i++) {
        free(plan->mounts[i].src);
        free(plan->mounts[i].dst);
        free(plan->mounts[i].why);
    }
    free(plan->mounts);
    sb_list_free(plan->write_roots, plan->n_write_roots);
    sb_placeholders_free(plan->placeholders, plan->n_placeholders);
    sb_placeholders_free(plan->shared_placeholders, plan->n_shared_placeholders);
    sb_list_free(plan->warnings, plan->n_warnings);
    free(plan->placeholder_registry);
    free(plan->layer_home);
    free(plan->layer_dir);
    free(plan->layer_key);
    free(plan->layer_why_not);
    free(plan->layer_path);
    memset(plan, 0, sizeof *plan);
}
