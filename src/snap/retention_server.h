/*
 * retention_server.h - retention in the server (retention.h): the
 * protocol's gc command (ended sessions' directories by [session]
 * retention and max-total-size, then every snapshot store, with the
 * snapshots of the sessions removed), and the same on a timer.
 *
 * Included by src/snap/ and src/cli/.
 */
#ifndef CORRAL_RETENTION_SERVER_H
#define CORRAL_RETENTION_SERVER_H

#include "server/module.h"

/* As a module: the gc command ({"cmd":"gc", "dry_run"?: bool},
 * docs/protocol.md) and its timer, stopped at shutdown. */
extern const server_module retention_module;

#endif
