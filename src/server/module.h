/*
 * module.h - what a part of corral that lives in the server (the gate and
 * its ports, the snapshots, retention, the session channel, waits and
 * watches) gives the server core: what to do when the server starts and
 * stops, what it wants to hear of every session and connection, the
 * children it started, and the protocol commands it answers.
 *
 * The core calls no module by name.  The program hands server_run one
 * ordered table of modules (src/cli/server_modules.c, the one place that
 * names them all), and the core calls each module's hooks in that order:
 * the order is the contract (a command's "after" snapshot is queued before
 * its waiter replies, say), written down once, beside the table.
 *
 * Included by the server core (src/server/), by every module it runs
 * (src/gate/, src/snap/) and by the program's table of them (src/cli/).
 */
#ifndef CORRAL_SERVER_MODULE_H
#define CORRAL_SERVER_MODULE_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "server/conn.h"

struct server;
struct session;

/* A protocol command (docs/protocol.md): answer request id on c. */
typedef void (*server_command_fn)(conn_t *c, json_t *id, json_t *req);
typedef struct server_command {
    const char *name;
    server_command_fn fn;
} server_command;

typedef struct server_module {
    const char *name;
    /* The server listens (start), or is shutting down once every session
     * has ended (shutdown). */
    void (*start)(struct server *srv);
    void (*shutdown)(struct server *srv);
    /* A session started; its recording is about to close (ending); its
     * process tree is gone (finished); it is being freed (freed). */
    void (*session_started)(struct server *srv, struct session *s);
    void (*session_ending)(struct server *srv, struct session *s);
    void (*session_finished)(struct server *srv, struct session *s);
    void (*session_freed)(struct server *srv, struct session *s);
    /* Add this module's fields to s's JSON (ls, subscribe, session events). */
    void (*session_json)(struct server *srv, struct session *s, json_t *o);
    /* A screen subscribed: add what it must see at once to the reply
     * (later changes come as events). */
    void (*subscribed)(struct server *srv, json_t *reply);
    /* The config file was read again and applied (server_conf(srv) is the
     * new one): take again what the module copied from it at start. */
    void (*config_changed)(struct server *srv);
    /* s's exec_command or write_stdin wait reached its deadline: true
     * holds it open (a request of s waits for a human; the answer extends
     * the wait, waiter_extend). */
    bool (*holds_wait)(struct server *srv, struct session *s);
    /* The server reaped pid, which is no session's init: true if it was
     * this module's child (and status is handled). */
    bool (*reaped)(struct server *srv, pid_t pid, int status);
    /* Connections (conn.h); registered as one observer per module. */
    conn_observer conns;
    /* Protocol commands, ended by {NULL, NULL}; NULL for none. */
    const server_command *commands;
} server_module;

#endif
