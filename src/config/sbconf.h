/*
 * sbconf.h - sandbox profiles as the user configured them: a built-in or
 * [profile "NAME"] profile (with its base chain), the [sandbox] extras that
 * apply to every confined profile, and [env]; plus the request corral
 * derives from its own directories; and the one shape of a request to run
 * a command (launch_spec) with the one place it is compiled into a plan.
 * Shared by `corral sandbox` and the server, so both confine a command the
 * same way.  Included by src/config/, the server (src/server/, src/snap/),
 * the gate (src/gate/) and the CLI (src/cli/).
 */
#ifndef CORRAL_SBCONF_H
#define CORRAL_SBCONF_H

#include <stdbool.h>
#include <stddef.h>

#include "config/conf.h"
#include "sandbox/plan.h"
#include "sandbox/profile.h"

/* Build profile name (NULL: the configured default, else workspace-write).
 * 0, or -1 with err naming the profile and what is wrong. */
int sbconf_profile(const conf_t *c, const char *name, sb_profile *out, char *err, size_t errlen);

/* Fill the directory fields of req from corral's paths and the
 * environment: home, runtime dir, corral's state/config dirs, the cache
 * root for the workspace (created), where home layers live and the
 * workspace's name there.  The state directory is created: it is denied,
 * and a home layer made in it later must stay hidden.  Strings live in
 * static storage. */
void sbconf_request_dirs(sb_request *req, const char *workspace);

/* Does profile name (NULL: the default) run commands without a sandbox?
 * (false when it cannot be built: compiling will say why.) */
bool sbconf_unconfined(const conf_t *c, const char *name);

struct policy_settings;

/* A request to run a command, in one shape from the port that reads it
 * (an exec, a new session, an escalation, the retry after a denial) to the
 * server that starts it: the gate widens a copy of it (gate_widen), the
 * server compiles it (sbconf_compile) and starts the session.  Strings and
 * lists are borrowed from whoever built it. */
typedef struct launch_spec {
    char **argv;
    const char *cwd;
    const char *workspace; /* the writable workspace; NULL: cwd */
    const char *name;      /* NULL: derived from argv[0] */
    const char *profile;   /* NULL: the configured default; "full": no sandbox */
    char **write, **read, **deny; /* entries on top of the profile, absolute */
    /* Write roots the server resolved at request time: each must still be
     * bound from exactly that path when the plan is compiled. */
    char *const *resolved_write;
    int net;               /* sb_net, or -1: the profile's */
    bool agent;            /* an agent's unified-exec process, not an interactive session */
    bool tty, pinned;
    int rows, cols;        /* 0: the default */
    const struct policy_settings *policy; /* NULL: the server's */
    /* A writable workspace or write root at $HOME, / or above $HOME is
     * allowed (sb_request.allow_home_workspace). */
    bool allow_home_workspace;
} launch_spec;

/* The sandbox part of a launch spec, kept (a copy) by whoever outlives the
 * request: the session it started (a request from inside it gets this
 * sandbox before any widening), a request in the gate. */
typedef struct launch_sandbox {
    char *profile;                /* NULL: the configured default */
    char **write, **read, **deny; /* entries on top of the profile, absolute */
    int net;                      /* sb_net, or -1: the profile's */
    bool allow_home;              /* the user allowed a writable $HOME (or above) */
} launch_sandbox;

/* The sandbox spec asks for, copied into out; a deep copy of src into dst;
 * freeing one (it is left empty, net -1). */
void launch_sandbox_of(const launch_spec *spec, launch_sandbox *out);
void launch_sandbox_copy(launch_sandbox *dst, const launch_sandbox *src);
void launch_sandbox_free(launch_sandbox *s);

/* What a session gets beyond its sandbox, from the server: corral's
 * executable and shell hooks as its tools (NULL: none), the command as it
 * will run (the shell hook's argv; NULL: spec's) and the variables set on
 * top of the environment's allowlist (NULL-terminated; NULL: none). */
typedef struct sbconf_tools {
    const char *corral_exe, *shell_dir;
    char *const *argv;
    char *const *set_env;
} sbconf_tools;

/* The plan that runs spec as session id (0: none) under the profiles of c:
 * the profile with the request's entries, the directories corral derives,
 * and (tools NULL: none) the session's tools.  Every resolved write root
 * must be bound from exactly its path.  NULL with err on failure; free
 * with sb_plan_free and free. */
sb_plan *sbconf_compile(const conf_t *c, const launch_spec *spec, const sbconf_tools *tools, int id, char *err,
                        size_t errlen);

#endif
