/*
 * notify.h - [notify] command: a program of the user's run on the host
 * when a request starts to wait for a person (notify-send, a phone push,
 * a chat webhook), at most once per [notify] interval.
 *
 * Included by src/gate/ and src/cli/.
 */
#ifndef CORRAL_NOTIFY_H
#define CORRAL_NOTIFY_H

#include <jansson.h>
#include <stddef.h>

#include "server/server.h"

extern const server_module notify_module;

/* Request approval (an APPROVAL, docs/protocol.md) started to wait;
 * waiting: how many wait now, this one included. */
void notify_request(server_t *srv, const json_t *approval, size_t waiting);

#endif
