/*
 * server_conf.h - the configuration the server runs with (server_conf.c):
 * read at start, read again on reload and SIGHUP, and its status for the
 * screens (the protocol's reload command, the subscribe reply and the
 * config event, docs/protocol.md).
 *
 * Included only in src/server/.
 */
#ifndef CORRAL_SERVER_CONF_H
#define CORRAL_SERVER_CONF_H

#include <jansson.h>
#include <stddef.h>

struct server;

/* Read the user's config file into the server's settings: 0, or -1 with
 * every error in a section the server reads in err (one line). */
int server_conf_load(struct server *srv, char *err, size_t errlen);
/* Read the file again: applied when it has no error in a section the
 * server reads, else the running settings stay.  Every screen hears the
 * new status (a config event); returns the reply's fields: applied,
 * errors (all of the file's), restart_needed, path. */
json_t *server_conf_reload(struct server *srv);
/* What the server runs with: {path, sha256, text, refused, restart_needed}. */
json_t *server_conf_status(const struct server *srv);
void server_conf_free(struct server *srv);

#endif
