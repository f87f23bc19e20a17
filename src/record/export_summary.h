/*
 * export_summary.h - what corral export reads of a session and writes
 * beside its files (docs/formats.md, "corral export"): the session's
 * events.jsonl gathered by kind (its commands' records, approvals, network
 * connections, escalations, its start and end), the records of the shared
 * approvals.jsonl that are about it, and SUMMARY.md.
 *
 * Included by src/record/ and src/cli/.
 */
#ifndef CORRAL_EXPORT_SUMMARY_H
#define CORRAL_EXPORT_SUMMARY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "record/sessdir.h"

typedef struct export_cmd {
    int n;           /* its number in the session */
    char *line;      /* as recorded */
    json_t *record;  /* its changes record (owned), or NULL while it runs */
    /* The patch, once cli_export has asked for it. */
    bool patched;    /* cmd-N.patch was written */
    uint64_t patch_bytes;
    bool cut;        /* the patch was too large and cut */
    char *missing;   /* no patch: why */
} export_cmd;

typedef struct export_session {
    char *name;         /* its directory's name: ID or ID.N */
    int id;
    json_t *created;    /* the events (owned), NULL when absent */
    json_t *exited, *killed;
    json_t *approvals;  /* approval_requested, approval_decided, approved */
    json_t *network;    /* network */
    json_t *escalations; /* escalated, escalation_ended, escalation_refused, command_refused */
    export_cmd *cmds;   /* in number order */
    size_t n_cmds;
    long events;        /* events read */
    sessdir_read_stats stats;
    double first_time, last_time; /* of its events */
    bool in_server;     /* the server has it (running, or in its list) */
    bool running;       /* the server says it runs now */
} export_session;

/* Read events_path, its first limit bytes (0: all).  0, or -1 with err. */
int export_read(export_session *es, const char *name, const char *events_path, uint64_t limit, char *err,
                size_t errlen);
/* Command n of es (made, in order, when it is not there yet). */
export_cmd *export_cmd_get(export_session *es, int n);
/* The session's workspace: its commands' records say it, else its cwd. */
const char *export_workspace(const export_session *es);

/* Copy to out the lines of approvals_path (the shared approvals.jsonl)
 * about es's approvals, byte for byte: for each approval its events name,
 * the decision recorded before the session's last mention of it (ids start
 * again at 1 when the server restarts; time tells them apart) and the
 * request before that decision.  Returns the number of lines (0 when the
 * file does not exist), or -1 with err. */
long export_approvals(const export_session *es, const char *approvals_path, FILE *out, char *err, size_t errlen);

/* SUMMARY.md: the session, its commands with their counts, risk marks and
 * patches, approvals, network hosts, escalations, and the files beside it.
 * exported_at: wall time. */
void export_summary_write(const export_session *es, FILE *out, double exported_at, long approval_records);

void export_session_free(export_session *es);

#endif
