/*
 * conn.h - a client's connection to the admin socket, as the server's
 * modules see it: an opaque handle to send on, hold and release.  The
 * server (server.c) accepts it and hands each message to its dispatcher;
 * modules that keep something per connection (a wait, a watch, a request
 * in the gate) hear when it closes and when its queue drains through the
 * observers they register.  No call goes from here to any other module.
 *
 * Included by the server core and its ports (src/server/, src/gate/,
 * src/snap/).
 */
#ifndef CORRAL_CONN_H
#define CORRAL_CONN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <uv.h>

struct server;
typedef struct conn conn_t;

/* One complete message (a line without its '\n') read from c. */
typedef void (*conn_message_fn)(conn_t *c, const char *line, size_t len);

/* A new connection on loop, owned by srv, with one reference (the open
 * connection's, dropped when it is closed).  Accept into conn_stream(c),
 * then conn_start(c) starts reading; on_message gets each message. */
conn_t *conn_new(struct server *srv, uv_loop_t *loop, conn_message_fn on_message);
uv_stream_t *conn_stream(conn_t *c);
void conn_start(conn_t *c);

/* Send msg (stolen), or a line already encoded and ending in '\n' (stolen).
 * Nothing is sent on a closing connection. */
void conn_send(conn_t *c, json_t *msg);
void conn_send_line(conn_t *c, char *line, size_t len);
void conn_reply_error(conn_t *c, json_t *id, const char *code, const char *message);
/* Bytes queued for c and not yet written (flow control). */
size_t conn_queued(const conn_t *c);

/* Hold c beyond its close (a reply still to come); release when done. */
conn_t *conn_ref(conn_t *c);
void conn_release(conn_t *c);
/* Close c: observers hear it once; the memory goes with the last reference. */
void conn_close(conn_t *c);
/* Close every open connection (shutdown). */
void conn_close_all(void);
bool conn_closing(const conn_t *c);

struct server *conn_server(const conn_t *c);
/* The name the client gave in hello, made safe to show ("user" if none);
 * NULL before hello. */
const char *conn_client(const conn_t *c);
void conn_set_client(conn_t *c, const char *name);
pid_t conn_peer_pid(const conn_t *c);
void conn_set_peer_pid(conn_t *c, pid_t pid);

/* What a module keeps per connection, under a key of its own (the address
 * of something of its own): freed with free_fn when the connection is
 * freed (after its last reference), not when it closes. */
void conn_attach(conn_t *c, const void *key, void *data, void (*free_fn)(void *data));
void *conn_attached(const conn_t *c, const void *key);

/* Subscribed connections hear session events (watch.c). */
void conn_set_subscribed(conn_t *c, bool on);
bool conn_subscribed(const conn_t *c);
/* Send ev (stolen) to every subscribed open connection. */
void conn_broadcast(json_t *ev);
/* Is a subscribed connection (a screen) open now? */
bool conn_any_subscribed(void);

/* What a module hears of every connection, in the order registered. */
typedef struct conn_observer {
    void (*closed)(conn_t *c);  /* once, when it starts closing */
    void (*drained)(conn_t *c); /* its write queue fell below 1 MiB */
} conn_observer;
void conn_observe(const conn_observer *o);
/* Forget every observer (the server stops). */
void conn_observers_clear(void);

#endif
