/*
 * spawn_args.h - the fields a request that starts a session shares (new,
 * exec: directory, name, size, sandbox, approval policy), read and checked
 * into a launch_spec (config/sbconf.h).  Included by the commands that
 * start sessions (src/server/dispatch.c, the gate's exec port in
 * src/gate/).
 */
#ifndef CORRAL_SPAWN_ARGS_H
#define CORRAL_SPAWN_ARGS_H

#include "server/server_int.h"

typedef struct spawn_args {
    launch_spec r;
    int64_t rows, cols;
    policy_settings policy; /* r.policy points here when the request sets one */
} spawn_args;

/* Read the shared fields of req into a (cwd from field cwd_field, the home
 * directory when absent).  0, or -1 after replying to id with the error. */
int spawn_args_read(conn_t *c, json_t *id, json_t *req, const char *cwd_field, spawn_args *a);
void spawn_args_free(spawn_args *a);

#endif
