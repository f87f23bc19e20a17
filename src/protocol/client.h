/*
 * client.h - a blocking client of the admin socket, used by the CLI (and by
 * tests): connect (starting a server when none answers), say hello, send
 * requests and wait for their replies, passing events to a callback.
 *
 * Included by src/protocol/, src/mcp/, ui/ and src/cli/.
 */
#ifndef CORRAL_CLIENT_H
#define CORRAL_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "protocol/proto.h"

typedef struct client {
    int fd;
    proto_reader rd;
    long next_id;
    json_t *hello;     /* the server's hello reply, once read */
    long hello_id;     /* id of a hello whose reply is still to be read */
    int ssh_pid;       /* under corral -H (remote.h): the ssh child, reaped by client_close; else 0 */
} client_t;

/* Start a server in the background (a new session, stdio to the server log)
 * and wait until it listens.  Returns 0 when a server is ready (including
 * one that another process started at the same moment), or -1 with a
 * message in err. */
int client_spawn_server(char *err, size_t errlen, int *pid_out);

/* Connect to this machine's server's socket (starting one when none
 * answers, with autostart), without a hello: what corral serve-stdio
 * relays.  Never another machine's (remote.h).  0, or -1 with err. */
int client_connect_socket(int *fd, bool autostart, char *err, size_t errlen);

/* Connect and say hello as client_name: to this machine's server, or,
 * when remote_set (remote.h) named another machine, through ssh to its
 * corral serve-stdio.  With autostart, a server is
 * started when none answers.  0, or -1 with a message in err.  With
 * wait_hello false the hello reply is read together with the first call's
 * (one round trip less for a one-shot CLI call); a refused hello then fails
 * that call. */
int client_connect(client_t *c, const char *client_name, bool autostart, char *err, size_t errlen);
int client_connect_lazy(client_t *c, const char *client_name, bool autostart, char *err, size_t errlen);

/* Events that arrive while waiting for a reply. */
typedef void (*client_event_fn)(json_t *event, void *user);

/* Send req (an "id" is added; req is stolen) and return the reply with that
 * id, which may be an error reply.  NULL on a connection failure, with err
 * set. */
json_t *client_call(client_t *c, json_t *req, client_event_fn on_event, void *user, char *err, size_t errlen);

void client_close(client_t *c);

/* A string a server sent, for a person to read: its control characters
 * (C0, DEL, C1, so every escape sequence), its invisible and
 * direction-changing characters and any byte that is not UTF-8 written as
 * escapes (quote_text_visible), since another machine's server (-H) may
 * send anything; missing copied (NULL: NULL) when v is absent or not a
 * string.  Caller frees. */
char *client_visible(json_t *v, const char *missing);
/* obj's member key as client_visible shows it. */
char *client_field(json_t *obj, const char *key, const char *missing);

/* A JSON array of strings (an argv) as quote_argv_display shows it.
 * Caller frees. */
char *client_quote_argv(json_t *argv);
/* An approval request's command line for a person to read: the server's
 * "command" (the argv it will run, through quote_argv_display), or, from a
 * server that does not send one, its "argv" quoted here the same way.
 * Caller frees. */
char *client_approval_command(json_t *approval);

/* "code: message" of an error reply, or NULL if it is not one. */
const char *client_error_message(json_t *reply, char *buf, size_t buflen);

#endif
