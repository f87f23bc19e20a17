/*
 * plan.h - a profile compiled into a launch plan: every path resolved, the
 * mounts in the order they will be made, the namespaces, the environment,
 * the limits.  A plan can be printed (corral sandbox --print-plan), passed
 * to the session's init as text (it carries it out), and compared in tests.
 *
 * Compilation is where the policy is decided: deny beats write beats read,
 * the more specific path wins, symlinked roots are resolved, and a
 * protected or denied path that crosses a writable symlink fails closed.
 *
 * Included by sandbox/, src/config/, src/snap/, src/gate/, src/cli/ and
 * src/server/ (which keeps the searches' listings watched).
 */
#ifndef CORRAL_SB_PLAN_H
#define CORRAL_SB_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "profile.h"

/* What the caller knows about the command and the user. */
typedef struct sb_request {
    char *const *argv;
    const char *cwd;          /* absolute; where the command starts */
    const char *workspace;    /* :workspace; NULL = cwd */
    char *const *environ;     /* the caller's environment (filtered here) */
    char *const *set_env;     /* NAME=VALUE always set (the caller's own, e.g. TERM) */
    const char *home;
    const char *runtime_dir;  /* $XDG_RUNTIME_DIR or NULL (denied) */
    const char *corral_state; /* corral's state and config dirs (denied) */
    const char *corral_config;
    const char *cache_dir;    /* corral's cache root for build-tool caches, or NULL */
    /* Where home layers live (corral's state: home-layers/), or NULL for
     * none; and the workspace's name there, for a layer kept per
     * workspace.  The profile says whether there is a layer. */
    const char *home_layers_dir;
    const char *workspace_key;
    int session_id;           /* CORRAL_SESSION; 0 for none */
    /* A session's tools: corral's executable and the directory of its
     * shell hooks, made visible at SB_TOOLS_DIR/bin/corral and
     * SB_TOOLS_DIR/shell (read-only), with bin first on PATH and
     * CORRAL_SESSION_FD naming the channel.  NULL: none. */
    const char *corral_exe;
    const char *shell_dir;
    /* A writable workspace or write root that is $HOME, "/" or an ancestor
     * of $HOME is refused (the shell's startup files, autostart entries and
     * credentials would be writable) unless this says the user asked for
     * it (corral sandbox --allow-home-workspace). */
    bool allow_home_workspace;
} sb_request;

/* Where a sandboxed session finds corral's tools. */
#define SB_TOOLS_DIR "/run/corral"

typedef enum sb_mount_kind {
    SB_M_BIND,      /* src (host) -> dst */
    SB_M_TMPFS,     /* a tmpfs at dst */
    SB_M_DEV,       /* minimal /dev at dst */
    SB_M_PROC,      /* a fresh proc at dst */
    SB_M_MASK_FILE, /* an empty read-only file over dst */
    SB_M_OVERLAY,   /* the home layer: src (the real home) read-only below,
                       the layer the launcher chose above, at dst (= src) */
} sb_mount_kind;

typedef struct sb_mount {
    sb_mount_kind kind;
    char *src;
    char *dst;
    bool rdonly;
    bool link;      /* bind: src and dst are a symlink itself, bound onto
                       itself so it cannot be re-pointed or renamed */
    bool hide_in_layer; /* a mask over a file in the home layer, with no
                           other mount between: the init hides the file in
                           the layer instead (a whiteout, so a tool may
                           write a new one there) and skips the mask */
    bool skip;      /* the init's own: not made (hidden in the layer) */
    uint64_t size;  /* tmpfs */
    unsigned mode;  /* tmpfs root mode */
    char *why;
} sb_mount;

/* A path made on the host for a read-only mount, and removed when the last
 * sandbox using it ends: an empty directory, or a file with content
 * (placeholders.h). */
typedef struct sb_placeholder {
    char *path;
    char *content; /* NULL: a directory */
} sb_placeholder;

typedef struct sb_plan {
    char *profile;
    bool unconfined;
    sb_net net;
    char **argv;
    char *cwd;
    char *workspace;
    char **envp;
    int ns_flags;   /* CLONE_NEW* */
    uid_t uid;
    gid_t gid;
    sb_mount *mounts;
    size_t n_mounts, cap_mounts;
    char **write_roots; /* for Landlock: where writing is allowed */
    size_t n_write_roots;
    /* Protected paths missing now: made at launch. */
    sb_placeholder *placeholders;
    size_t n_placeholders;
    /* Protected paths of the kinds corral makes placeholders for (.git,
     * hooks, commondir, .corral ...) that exist now: possibly another
     * sandbox's placeholder, which this one must then hold too (or its end
     * would remove the mount point from under this sandbox), and made
     * again if it has gone by the launch. */
    sb_placeholder *shared_placeholders;
    size_t n_shared_placeholders;
    char *placeholder_registry; /* placeholders.h; not part of the init's text */
    sb_limits limits;
    /* The home layer (docs/sandbox.md, "The home layer"): an overlay on the
     * home directory, the real home read-only below, its writes in a
     * directory of corral's.  layer_home NULL: none (layer_why_not says
     * why, for the plan). */
    sb_home_layer layer_mode;
    char *layer_home;    /* the home, canonical: the overlay's place */
    char *layer_dir;     /* where layers live: the launcher makes one there */
    char *layer_key;     /* keep: the workspace's layer, by name */
    char *layer_why_not;
    /* A throw-away layer kept in memory: a tmpfs of the sandbox's own,
     * mounted by its init, with nothing on the host to make or remove
     * (sb_layer_in_memory says where it can be).  layer_path stays NULL. */
    bool layer_in_memory;
    /* Set by the launcher for the init: the layer directory in use (its
     * upper/ and work/), or NULL when none could be made (the home then
     * stays read-only). */
    char *layer_path;
    bool layer_mounted;  /* the init's own: the overlay is mounted */
    /* What is protected as well as it can be but not fully (a .git symlink
     * a sandbox may have planted, say): for the user to see.  Not sent to
     * the init. */
    char **warnings;
    size_t n_warnings;
} sb_plan;

/* Compile.  0, or -1 with a message in err naming the path and the fix
 * (out is then empty: sb_plan_free on it does nothing). */
int sb_plan_compile(const sb_profile *p, const sb_request *req, sb_plan *out, char *err, size_t errlen);

/* For a process that compiles a plan per command (the server): the
 * searches of the writable roots (nested repositories, agent
 * configuration) keep each directory's listing while inotify says the
 * directory is unchanged, so that a compile in an unchanged tree lists
 * nothing again (docs/sandbox.md, "the server also keeps the directory
 * listings"). */
void sb_plan_keep_listings(void);

void sb_plan_free(sb_plan *plan);

/* Human-readable plan, as corral sandbox --print-plan shows it. */
void sb_plan_print(const sb_plan *plan, FILE *f);

/* The plan as text for the init, and back.  Parsing returns -1 with err on
 * anything malformed. */
char *sb_plan_serialize(const sb_plan *plan, size_t *len);
int sb_plan_parse(const char *text, size_t len, sb_plan *out, char *err, size_t errlen);

void sb_placeholders_free(sb_placeholder *ph, size_t n);

/* The paths below dir that the plan hides (its deny masks), relative to
 * dir, *n of them.  Free with sb_list_free(list, n). */
char **sb_plan_denied_below(const sb_plan *plan, const char *dir, size_t *n);
/* Whether dir is one of the plan's writable roots. */
bool sb_plan_writable(const sb_plan *plan, const char *dir);

#endif
