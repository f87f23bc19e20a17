/*
 * cli_records.h - corral log, replay and export under corral -H (or
 * CORRAL_HOST): the other machine's records copied into a private
 * directory of this process, which XDG_STATE_HOME then names, so that the
 * verbs read them exactly as they read this machine's.
 *
 * Included by the files of src/cli/ only.
 */
#ifndef CORRAL_CLI_RECORDS_H
#define CORRAL_CLI_RECORDS_H

#include <stdbool.h>
#include <stddef.h>

/* Whether this run reads another machine's records (cli_host.c set it
 * up with cli_records_begin). */
bool cli_records_remote(void);

/* Make the private directory and point XDG_STATE_HOME at it; removed at
 * exit (cli_records_end), or, when a signal ended the run first, by the
 * next run's cli_records_begin.  0, or -1 with err. */
int cli_records_begin(char *err, size_t errlen);
/* Remove the private directory now (a verb about to end by a signal it
 * raises again); nothing when there is none. */
void cli_records_end(void);

/* Copy session name's events.jsonl (and with cast its output.cast), and
 * approvals.jsonl.  name must be a recorded session's name (7, 7.1): a path
 * means this machine's files, which -H does not read.  0, or -1 with err. */
int cli_records_fetch(const char *name, bool cast, char *err, size_t errlen);

/* The sessions recorded there, each with an empty events.jsonl that has
 * the original's time (so that the list sorts as there), and
 * approvals.jsonl: corral log's list, which then copies with
 * cli_records_fetch only the sessions it shows.  0, or -1 with err. */
int cli_records_list(char *err, size_t errlen);

/* Where the records are, for a message: local (this machine's directory)
 * as it is, or under -H "the records of ssh://HOST" (never the private
 * copy's path).  Caller frees. */
char *cli_records_place(const char *local);

#endif
