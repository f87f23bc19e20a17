/*
 * timeline.h - one session's timeline, read from its events.jsonl
 * (docs/formats.md): typed entries in time order (the session's start,
 * its commands with their diff counts, approvals, network connections,
 * escalations, refusals, sandbox denials, resizes, its end), filters over
 * them, a one-line text for each, a summary, and the asciicast marker
 * labels of commands.  The reader behind corral log and the supervisor
 * screen's review: no event loop, no terminal, nothing printed.
 *
 * Reading never fails on bad content: a line that is not an event (a
 * last line cut short by a crash, say) is skipped and a warning naming
 * the file and line is kept in the timeline for the caller to show.
 *
 * Included by src/record/, src/server/, ui/ and src/cli/.
 */
#ifndef CORRAL_TIMELINE_H
#define CORRAL_TIMELINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum tl_kind {
    TL_SESSION,    /* created: the command, directory, client, sandbox */
    TL_COMMAND,    /* one numbered command (corral diff's numbers) */
    TL_APPROVAL,   /* a request a human answered (or not yet) */
    TL_NETWORK,    /* one proxied connection */
    TL_ESCALATION, /* an approved corral escalate that ran */
    TL_REFUSED,    /* a typed line or an escalation a rule forbade */
    TL_DENIAL,     /* the sandbox refused something; this session is a retry */
    TL_RESIZE,
    TL_EXIT,       /* killed, exited, pruned, the sandbox could not start */
    TL_WARNING,    /* a sandbox warning */
    TL_OTHER,      /* an event this corral does not know (a newer one's) */
    TL_KIND_COUNT
} tl_kind;

/* "session", "command", ... and back (-1: no such kind). */
const char *tl_kind_name(tl_kind k);
int tl_kind_parse(const char *name, size_t len);

typedef struct tl_entry {
    tl_kind kind;
    double time;     /* when it began, seconds since the epoch */
    double end;      /* when it ended; 0: not known (running, or never told) */
    long line;       /* the line of events.jsonl it begins at (1, 2, ...) */
    int number;      /* command: its number; approval, escalation: the request's id */
    /* command: exit status (when has_exit), diff counts (when has_counts) */
    bool has_exit;
    int exit_code;
    bool has_counts;
    long added, modified, deleted; /* modified counts type changes too, as corral diff shows them */
    bool risk;       /* its changes carry risk marks */
    bool action;     /* command: an action a client did on the session (a revert, "by" in its event), not
                      * something the session ran */
    long missed;     /* paths its snapshots left out (the record's not_captured) */
    /* approval: settled (answered, timed out or withdrawn), and approved;
     * network: approved is the connection was allowed */
    bool decided, approved;
    /* network: the host as written in the log (JSON-escaped), for counting */
    const char *host;
    size_t host_len;
    /* The lines it is made of (in the timeline's copy of the files):
     * command: started, ended, changes; approval: requested, decided,
     * approved; escalation: escalated, ended; others: the event. */
    const char *src[3];
    unsigned src_len[3];
} tl_entry;

/* At most this many warnings are kept; the rest are only counted. */
#define TL_MAX_WARNINGS 5

typedef struct timeline {
    tl_entry *entries; /* in time order (then file order) */
    size_t n;
    size_t cap;
    /* From the session's "created" event (NULL / 0 when it is missing). */
    int session;
    char *name, *client, *workspace;
    double created;
    /* Its end: "exited" seen (exit_code, signal name or NULL), or not. */
    bool exited;
    int exit_code;
    char *signal;
    char *killed_by; /* the "killed" event's reason (user, shutdown, ...), or NULL */
    double ended;
    /* The files' text, which entries point into. */
    char *data, *approvals_data;
    /* Lines skipped, and what was wrong with the first TL_MAX_WARNINGS. */
    size_t skipped;
    char *warnings[TL_MAX_WARNINGS];
    size_t n_warnings;
} timeline_t;

/* Read path (a session's events.jsonl).  approvals: the state directory's
 * approvals.jsonl, where the request and answer of an exec that needed
 * approval are (the session did not exist yet when they were written),
 * or NULL.  0; -1 when path cannot be read at all (err says why).  tl is
 * cleared first; free it with tl_free in either case. */
int tl_load(timeline_t *tl, const char *path, const char *approvals, char *err, size_t errlen);
/* The same from memory (name is the file named in warnings); the
 * timeline takes data and approvals_data (malloc'd, or NULL). */
void tl_load_mem(timeline_t *tl, char *data, size_t len, const char *name, char *approvals_data,
                 size_t approvals_len, const char *approvals_name);
void tl_free(timeline_t *tl);

typedef struct tl_filter {
    unsigned kinds;    /* bit 1 << tl_kind; 0: every kind */
    double since;      /* entries that began at or after it; 0: all */
    const char *grep;  /* text found in the entry's line or any of its strings; NULL: all */
    bool ignore_case;
} tl_filter;

bool tl_match(const tl_entry *e, const tl_filter *f);
/* Is text in one of j's strings (at any depth)? */
bool tl_json_has_text(json_t *j, const char *text, bool ignore_case);

/* The entry as one JSON object (corral log --json's line, without the
 * newline), appended to out: "kind", "time" (ISO 8601) and the kind's
 * fields (docs/formats.md).  Values are copied from the log as written. */
struct buf;
void tl_entry_write_json(const tl_entry *e, struct buf *out);
/* The same as a tree (a new reference; NULL only on memory exhaustion). */
json_t *tl_entry_json(const tl_entry *e);

/* "command,approval" (commas; names as tl_kind_name) into *mask (added to
 * what it has).  -1 with err naming the bad name and the kinds. */
int tl_parse_kinds(const char *list, unsigned *mask, char *err, size_t errlen);
/* A time as a person gives it: ISO 8601 (2026-11-29, 2026-11-29T07:41,
 * 2026-11-29 07:41:25.5, with Z or +02:00, else local time) or an age
 * before now (45s, 10m, 2h, 3d, 1w).  -1 with err naming s and the
 * accepted forms. */
int tl_parse_time(const char *s, double now, double *out, char *err, size_t errlen);
/* An ISO 8601 UTC time as corral writes it (2026-11-29T07:41:25.035Z;
 * also with an offset, or without fractions), or -1. */
double tl_iso_time(const char *s);

/* What the entry is, in one line for a person (without its time and
 * kind): "#3  exit 0  1.20s  +1 ~2 -0  make test", "example.com:443
 * https allow ...".  Invisible and control characters of what the
 * session wrote are escaped (\n, \x1b, \u202e).  tl (or NULL): a
 * command's directory is named when it is not the session's workspace.
 * Caller frees. */
char *tl_entry_text(const timeline_t *tl, const tl_entry *e);

typedef struct tl_summary {
    long commands, approvals, connections, hosts; /* hosts: distinct host names */
    long added, modified, deleted;                /* summed over the commands and actions */
    long risky;                                   /* commands with risk marks */
    long missed;                                  /* paths not captured, summed over the commands */
} tl_summary;
void tl_summarize(const timeline_t *tl, tl_summary *out);

/* The asciicast markers of command n (docs/formats.md): "cmd N: LINE"
 * (LINE with its invisible characters escaped, cut past 1000 bytes with
 * the cut marked) and "cmd N end: exit S" (S the status, or ? when it is
 * not known).  Caller frees. */
char *tl_marker_start(int n, const char *line);
char *tl_marker_end(int n, bool has_exit, int exit_code);
/* A marker label read back: true for a command's, with its number and
 * whether it is the end (then *status is the status, or -1 for ?). */
bool tl_marker_parse(const char *label, int *n, bool *is_end, int *status);

#endif
