/*
 * layouts.h - what each client's supervisor screen looked like (layout
 * mode, zoom, the sessions kept in tiles, the agents whose finished
 * commands are unfolded), held by the server per client name so that a
 * screen attaching again finds it as it was left (docs/protocol.md,
 * "layout").
 *
 * It lives in the server rather than in a file because it names sessions
 * by id, and ids mean something only to the server that gave them out:
 * held here, a layout ends with the sessions it names, and a session that
 * leaves the store leaves every layout (layouts_forget_session), so an id
 * given out again later is never shown in a tile the user kept for another
 * session.
 *
 * Included only in src/server/.
 */
#ifndef CORRAL_LAYOUTS_H
#define CORRAL_LAYOUTS_H

#include <jansson.h>
#include <stdbool.h>

#include "protocol/proto.h"

#define LAYOUTS_MAX_TILES 9      /* the grid's nine panes */
#define LAYOUTS_MAX_EXPANDED 64  /* clients listed as unfolded */
#define LAYOUTS_MAX_CLIENTS 64   /* client names with a layout kept */

/* A clean copy of a client's LAYOUT object: known fields only, each
 * checked; a tile naming a session that is not stored (exists says) is
 * kept free.  NULL with e filled when a field is wrong. */
json_t *layouts_clean(json_t *in, bool (*exists)(int id, void *user), void *user, proto_err *e);
/* Keep layout (stolen, already clean) for client, replacing its last. */
void layouts_set(const char *client, json_t *layout);
/* The layout kept for client (borrowed), or NULL. */
json_t *layouts_get(const char *client);
/* Session id left the store: no layout keeps it in a tile any more. */
void layouts_forget_session(int id);
/* Drop every layout (tests; the server's end). */
void layouts_clear(void);

#endif
