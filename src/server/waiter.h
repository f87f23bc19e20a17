/*
 * waiter.h - unified-exec waits (waiter.c): an exec_command or write_stdin request
 * that collects a session's output until its yield deadline or the end of
 * its process, then answers with the envelope.
 * Included by the server core and its modules (src/server/, src/gate/,
 * src/snap/) and by the program's table of modules (src/cli/).
 */
#ifndef CORRAL_WAITER_H
#define CORRAL_WAITER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/module.h"
#include "server/session.h"

typedef struct server server_t;

/* Called exactly once when a wait ends: with the reply before it is sent
 * (true takes it over; text is the output, len bytes), or with reply NULL
 * when the wait ended without one (the requester went away). */
typedef bool (*waiter_exit_hook)(session_t *s, json_t *reply, const char *text, size_t len, void *user);
/* Wait on s for conn, answering request id with the unified-exec reply. */
void waiter_start(conn_t *c, json_t *id, session_t *s, uint32_t yield_ms, uint32_t settle_ms,
                  int64_t max_tokens, bool stream, bool raw);
/* Send ev (stolen) to whoever waits on s now, if anyone. */
void waiter_tell(session_t *s, json_t *ev);
/* A request about s waited ms for a human: its wait's deadline moves on. */
void waiter_extend(session_t *s, uint64_t ms);
/* The wait on s (just started) calls hook if it ends with the exit. */
void waiter_set_exit_hook(session_t *s, waiter_exit_hook hook, void *user);
void waiter_session_output(session_t *s, const char *data, size_t len);
/* The waits as a module: connections closed and drained (flow control),
 * sessions finished. */
extern const server_module waiter_module;
/* An exec's reply, once its session has exited, may be held until done(user)
 * (snap_hold.h): the hold says whether it holds it. */
typedef bool (*waiter_hold_fn)(session_t *s, void (*done)(void *user), void *user);
void waiter_hold_replies(waiter_hold_fn hold);


#endif
