/*
 * uiconn.h - the TUI's connection to the server, on the TUI's libuv loop:
 * requests with a callback for their reply, and every event to one
 * handler.  Connecting (and starting a server when none answers) reuses the
 * CLI's blocking client; the socket is then handed to libuv.
 *
 * Included through tui_int.h by the files of ui/; not for other modules.
 */
#ifndef CORRAL_UICONN_H
#define CORRAL_UICONN_H

#include <jansson.h>
#include <stdbool.h>
#include <uv.h>

#include "protocol/proto.h"

typedef struct uiconn uiconn_t;
/* reply is the whole reply object (ok or error); NULL when the connection
 * closed before it came. */
typedef void (*uiconn_reply_fn)(uiconn_t *c, json_t *reply, void *user);
typedef void (*uiconn_event_fn)(uiconn_t *c, json_t *event, void *user);
typedef void (*uiconn_closed_fn)(uiconn_t *c, const char *why, void *user);
/* A term event, decoded (the bulk of what a watch brings, so it skips the
 * JSON parser). */
typedef void (*uiconn_term_fn)(uiconn_t *c, int session, const char *data, size_t len, void *user);

typedef struct uiconn_pending {
    long id;
    uiconn_reply_fn fn;
    void *user;
    struct uiconn_pending *next;
} uiconn_pending;

struct uiconn {
    uv_pipe_t pipe;
    proto_reader rd;
    long next_id;
    uiconn_pending *pending;
    uiconn_event_fn on_event;
    uiconn_term_fn on_term;
    uiconn_closed_fn on_closed;
    void *user;
    bool closed;
    int server_pid;
};

/* Connect as client "user" (starting a server if needed) and say hello.
 * 0, or -1 with err. */
int uiconn_open(uiconn_t *c, uv_loop_t *loop, uiconn_event_fn on_event, uiconn_term_fn on_term,
                uiconn_closed_fn on_closed, void *user, char *err, size_t errlen);
/* Speak the protocol on fd (taken over), not yet said hello on: another
 * machine's server through ssh (hosts.c), which says hello itself, as a
 * request.  0, or -1 with err (fd closed). */
int uiconn_open_fd(uiconn_t *c, uv_loop_t *loop, int fd, uiconn_event_fn on_event, uiconn_term_fn on_term,
                   uiconn_closed_fn on_closed, void *user, char *err, size_t errlen);
/* Send req (stolen); fn gets the reply.  With fn NULL nothing waits for
 * one (a reply that comes is dropped). */
void uiconn_request(uiconn_t *c, json_t *req, uiconn_reply_fn fn, void *user);
void uiconn_close(uiconn_t *c);
/* Close c, allocated with malloc, and free it once libuv is done with it
 * (safe from inside one of c's own callbacks). */
void uiconn_destroy(uiconn_t *c);

#endif
