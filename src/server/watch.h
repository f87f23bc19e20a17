/*
 * watch.h - clients that follow the server live (watch.c): the session list
 * (subscribe) and sessions' terminals (watch).
 * Included by the server core and its modules (src/server/, src/gate/,
 * src/snap/) and by the program's table of modules (src/cli/).
 */
#ifndef CORRAL_WATCH_H
#define CORRAL_WATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/module.h"
#include "server/session.h"

typedef struct server server_t;

/* The ls reply (sessions most recently used first), also subscribe's. */
json_t *watch_list_reply(server_t *srv, json_t *id);
void watch_subscribe(conn_t *c, json_t *id);
/* Follow s: a sync of its model, then its output as it comes (with
 * frame_ms > 0, in frames at most that often while output is heavy). */
void watch_start(conn_t *c, json_t *id, session_t *s, int history, int frame_ms);
void watch_stop(conn_t *c, json_t *id, int session);
void watch_session_output(session_t *s, const char *data, size_t len);
void watch_session_resized(session_t *s);
/* c asked for s's size (the resize command): remembered with c's watch of
 * s, so that the size comes back when a later asker stops watching. */
void watch_size_asked(conn_t *c, session_t *s, int rows, int cols);
/* s changed in a way the list shows (state, title, use): a coalesced
 * session event to subscribers. */
void watch_session_changed(session_t *s);
void watch_session_bell(session_t *s);
/* s left the store: a session_removed event; watches of it end. */
void watch_session_removed(session_t *s);
/* The watches as a module: connections closed and drained, sessions
 * finished and freed. */
extern const server_module watch_module;


#endif
