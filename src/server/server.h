/*
 * server.h - the corral server: one libuv loop that owns every session, the
 * process store and the admin socket (docs/ARCHITECTURE.md), and what it
 * offers the modules it runs (module.h): its loop, configuration and state
 * directory, the sessions in its store with the facts each was launched
 * with, a place to keep their own state on the server and on each session,
 * and the one way to start a session.  The server's own structures stay
 * private to src/server/ (server_int.h): a module sees the server and a
 * session only through these calls.
 *
 * Included by src/server/, src/gate/, src/snap/ and src/cli/.
 */
#ifndef CORRAL_SERVER_H
#define CORRAL_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "config/conf.h"
#include "config/sbconf.h"
#include "policy/policy.h"
#include "server/module.h"
#include "server/session.h"

typedef struct server server_t;
struct proxy;

/* Run the server in this process until SIGTERM/SIGINT or a shutdown
 * request.  ready_fd >= 0 receives "ok PID\n" once the socket listens, or
 * "error MESSAGE\n" if start-up fails; it is then closed.  The server runs
 * modules (a table ended by NULL; their order is the order of their hooks,
 * module.h).  Returns the exit status. */
int server_run(int ready_fd, const server_module *const *modules);

/* ---- for the modules ---------------------------------------------------- */

uv_loop_t *server_loop(server_t *srv);
const conf_t *server_conf(const server_t *srv);
/* The state directory (sessions' records, snapshots, the approvals log). */
const char *server_state_dir(const server_t *srv);
/* Shutting down: every session is being ended; start nothing new. */
bool server_shutting_down(const server_t *srv);
/* The approval policy a request gets unless it names one ([approvals]
 * policy and the granular settings of the configuration). */
const policy_settings *server_policy(const server_t *srv);
/* The network proxy the sessions' proxied traffic goes through (made by
 * the network gate at start; NULL: none).  The server frees it at exit. */
struct proxy *server_proxy(const server_t *srv);
void server_set_proxy(server_t *srv, struct proxy *p);

/* What a module keeps on the server, under a key of its own (attach.h):
 * freed with free_fn after the loop has ended. */
void server_attach(server_t *srv, const void *key, void *data, void (*free_fn)(void *data));
void *server_attached(const server_t *srv, const void *key);

/* The session with this id in the store, or NULL. */
session_t *server_find(server_t *srv, int id);
/* Every session not yet freed (in the store or still ending): the one
 * after prev, or the first when prev is NULL; NULL after the last. */
session_t *server_next_session(server_t *srv, session_t *prev);

/* Compile r's sandbox plan (with the session's tools, its channel and, for
 * an interactive bash or zsh, the shell hook), spawn and store a session
 * (pruning first if the store is full).  NULL with err filled on failure;
 * *warning receives what the requester should be told (the sandbox's
 * warnings, the 60-process warning; one a line), or NULL. */
session_t *server_start_session(server_t *srv, const launch_spec *r, const char *client, char *err,
                                size_t errlen, char **warning);
/* What the server sets in the environment of everything it starts (a
 * session, an escalated command) on top of the sandbox's allowlist: the
 * terminal type, and for an agent's process the Codex CLI's
 * non-interactive settings (NO_COLOR, C.UTF-8, PAGER=cat, TERM=dumb).
 * NULL-terminated, static. */
const char *const *server_session_env(bool agent, bool tty);

/* ---- a session's launch facts, and what modules keep on it -------------- */

/* Its workspace (canonical). */
const char *server_session_workspace(session_t *s);
/* The sandbox it was launched in (a widening for a request from inside it
 * adds to this, never drops its deny entries). */
const launch_sandbox *server_session_sandbox(session_t *s);
/* Its approval policy. */
const policy_settings *server_session_policy(session_t *s);
/* An interactive bash or zsh with the shell hook: its lines are its
 * commands. */
bool server_session_shell_hook(session_t *s);
/* What a module keeps on a session, under a key of its own: freed with
 * free_fn when the session is freed. */
void server_session_attach(session_t *s, const void *key, void *data, void (*free_fn)(void *data));
void *server_session_attached(session_t *s, const void *key);
/* The data under key, made on first use: size zeroed bytes, attached with
 * free_fn (which frees the block too). */
void *server_session_data(session_t *s, const void *key, size_t size, void (*free_fn)(void *data));

#endif
