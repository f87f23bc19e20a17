/*
 * records.h - the records command (docs/protocol.md): the record files of
 * the sessions this server recorded, listed and handed out in chunks, for
 * corral log, replay and export run on another machine (corral -H): the CLI
 * there copies them into a private directory and reads them as it reads
 * its own (src/cli/cli_records.c).
 *
 * Included by src/server/ and src/cli/.
 */
#ifndef CORRAL_RECORDS_H
#define CORRAL_RECORDS_H

#include "server/module.h"

/* The largest chunk of a file one reply carries (before base64). */
#define RECORDS_CHUNK (256u * 1024u)

/* As a module: the records command only. */
extern const server_module records_module;

#endif
