/*
 * gitpaths.h - the decisions gitprotect.c takes, and the path resolution
 * they rest on (internal to the git protection: gitprotect.c, gitrepo.c).
 *
 * Decisions are collected first and handed to the sink at the end, after
 * one check over all of them: a pin (a writable bind) must never land on
 * or inside a path that is made read-only, or it would make it writable
 * again.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_GITPATHS_H
#define CORRAL_SB_GITPATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "gitprotect.h"
#include "statmemo.h"

typedef enum gp_kind {
    GP_PIN,         /* a directory made a mount point (stays writable) */
    GP_REOPEN,      /* the same inside a read-only directory: writable again on purpose */
    GP_PIN_LINK,    /* a symlink made a mount point (sink->pin_link) */
    GP_READONLY,
    GP_PLACEHOLDER,
} gp_kind;

typedef struct gp_decision {
    gp_kind kind;
    char *path;
    char *content; /* placeholder: NULL for a directory */
    bool is_dir;   /* readonly */
    char *why;
} gp_decision;

/* What to do about a symlink inside a writable root on the way to a path
 * that must hold (the sandbox could re-point it), when the sink cannot pin
 * symlinks. */
typedef enum gp_links {
    GP_LINKS_FAIL, /* refuse: the user's own layout, which they can change */
    GP_LINKS_WARN, /* protect what it points to now and tell the user */
} gp_links;

/* What config files say that names code to run: hooks directories
 * (core.hooksPath), template directories (init.templateDir, copied into
 * every new repository), and command lines (core.fsmonitor, filters,
 * aliases ...), as written. */
typedef struct gp_values {
    char **hooks, **dirs, **cmds;
    size_t n_hooks, n_dirs, n_cmds;
} gp_values;

struct gp_repo;

/* One sb_protect_repos() run. */
typedef struct gp {
    const sb_protect_sink *s;
    const char *root;
    gp_decision *d;
    size_t nd, capd;
    char **warned; /* symlinks already warned about */
    size_t n_warned;
    size_t budget;      /* directories left to look at */
    size_t budget_full; /* what it started with, for messages */
    gp_values globals;  /* from the system and global config files */
    struct gp_repo **repos; /* repositories read so far (gitrepo.c) */
    size_t n_repos;
    sb_statmemo *stats;     /* lstat's answers (gp_lstat): the sink's, else own_stats */
    sb_statmemo own_stats;
    char *err;
    size_t errlen;
    int rc; /* -1 once something failed: later steps do nothing */
} gp;

/* A path resolved the way the kernel would when the user's git opens it. */
typedef struct gp_resolved {
    char *canon;    /* the path it reaches (when it exists), canonical */
    bool exists;
    char *missing;  /* else: the first component that does not exist (its
                     * parent is canonical), or NULL if unresolvable */
    bool missing_last; /* missing is the final component */
    char **links;   /* symlinks on the way that lie in writable directories */
    size_t n_links;
} gp_resolved;

/* lstat(path) as it answered the first time in this run, or in the
 * compile the sink's memo belongs to (statmemo.h): one run is one moment
 * of the host (what it decides is pinned later by file descriptors, as
 * every plan is), and the same directories are asked about for every path
 * under them.  0, or -1 with errno. */
int gp_lstat(gp *g, const char *path, struct stat *st);

void gp_resolve(gp *g, const char *path, gp_resolved *out);
void gp_resolved_free(gp_resolved *r);

bool gp_writable(gp *g, const char *path);
/* Make every directory from dir up to the writable root holding it a
 * mount point (none for a path outside writable roots). */
void gp_pin_chain(gp *g, const char *dir);
void gp_add(gp *g, gp_kind kind, const char *path, const char *content, bool is_dir, const char *why);

/* Deal with the writable symlinks met on the way to what (named in
 * messages): pinned when the sink can; else per policy, a warning (true)
 * or a failure in g (false). */
bool gp_links_ok(gp *g, const gp_resolved *r, const char *what, gp_links policy);

/* Keep the path (as the user's git would open it) from changing: read-only
 * when it exists inside a writable root, an empty read-only placeholder at
 * its first missing component when the sandbox could create it there, the
 * directories above pinned.  want_dir: a missing final component becomes a
 * directory (else an empty file).  false once g has failed. */
bool gp_protect_path(gp *g, const char *path, bool want_dir, const char *why, gp_links policy);

/* The same for a program a config value names (a script, say): read-only
 * when it is a file inside a writable root (a directory named among a
 * command's words is left alone), an empty read-only file when only its
 * last component is missing, a warning when more is missing (a placeholder
 * directory there could stop a build that makes it). */
bool gp_protect_program(gp *g, const char *path, const char *why, gp_links policy);

/* Tell the user (once per key). */
void gp_warn(gp *g, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int gp_fail(gp *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Hand the decisions to the sink, minus pins that would re-open a
 * read-only path.  top_readonly: names the caller makes read-only at the
 * root's top itself (pins inside them are dropped too). */
void gp_emit(gp *g, const char *const *top_readonly);
void gp_free(gp *g);

/* "dir/name" ("/name" for dir "/"). */
char *gp_join(const char *dir, const char *name);
/* The parent of a canonical path ("/" for "/x"). */
char *gp_parent(const char *path);
/* "~/x" and "~user/x" expanded, a relative path joined to base (NULL:
 * left relative, returns NULL); NULL when a home is unknown. */
char *gp_expand(const char *path, const char *base);

#endif
