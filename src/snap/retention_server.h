/*
 * retention_server.h - retention in the server (retention.h): the
 * protocol's gc command (ended sessions' directories by [session]
 * retention and max-total-size, then every snapshot store, with the
 * snapshots of the sessions removed), and the same on a timer.
 */
#ifndef CORRAL_RETENTION_SERVER_H
#define CORRAL_RETENTION_SERVER_H

#include "server/server_int.h"

void retention_server_start(server_t *srv);
void retention_server_shutdown(server_t *srv);

/* {"cmd":"gc", "dry_run"?: bool} (docs/protocol.md). */
void cmd_gc(conn_t *c, json_t *id, json_t *req);

#endif
