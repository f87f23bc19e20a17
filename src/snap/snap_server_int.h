/*
 * snap_server_int.h - what snap_server.c (boundaries and records) and
 * snap_proto.c (the protocol commands) share.  Loop only.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_SERVER_INT_H
#define CORRAL_SNAP_SERVER_INT_H

#include "snap/snap_queue.h"
#include "snap/snap_server.h"

typedef enum snap_cmd_state {
    CMD_WAITING, /* its "before" is being taken */
    CMD_RUNNING,
    CMD_ENDING,  /* its "after" is being taken */
    CMD_DONE,
    CMD_DROPPED, /* not a command after all (a hooked shell's session) */
} snap_cmd_state;

typedef struct snap_cmd {
    long serial;        /* unique in the server */
    int refs;
    int session;        /* 0 until an exec's session starts */
    int n;              /* its number in the session (1, 2, ...); 0: not numbered yet (an exec not started, an
                         * agent command before it runs, an agent session's program between its commands) */
    char *line;         /* as shown: the typed line, the argv shell-quoted */
    char *cwd;          /* where it runs (NULL: its session's directory) */
    char *by;           /* an action a client did on the session (a revert): that client's name; NULL for
                         * what the session ran */
    bool marked, mark_ended; /* its start and end are in its session's log and recording (cmdmark.h) */
    double mark_started;     /* wall clock of its start mark */
    double started, ended; /* wall */
    char before[SNAP_OID_HEX], after[SNAP_OID_HEX];
    bool late;          /* started before its "before" was taken */
    bool agent;         /* a shell command an agent's bash marked (path.bash) */
    bool whole;         /* the session's own program: all of it, or between its agent commands */
    bool has_exit;
    int exit_code;
    snap_cmd_state state;
    char *error;        /* no diff: why */
    char *events_path;  /* its session's events.jsonl (the record outlives the session) */
    snap_ws *ws;
    link_t active_node; /* in ws->active while it runs */
    long *shared;       /* serials of the commands that ran at the same time, with changes */
    size_t n_shared;
    json_t *changes;    /* once done: counts, lines, risk, not_captured */
    /* Its start: who waits for the "before". */
    snap_go_fn go;
    void *go_user;
    uv_timer_t *late_timer;
} snap_cmd;

typedef struct snap_sess {
    link_t node;
    int id;
    session_t *s;       /* the session, until it is freed */
    char key[64];       /* id and start time: unique across restarts */
    char *events_path;  /* its events.jsonl */
    snap_ws *ws;
    bool exec, hooked, ended;
    bool agent;         /* its program's bash commands are its commands (path.bash's marks) */
    int seq;            /* snapshots anchored for it */
    snap_cmd **cmds;    /* recorded and running commands, in order */
    size_t n_cmds;
    int numbered;       /* the last number given */
    snap_cmd *open;     /* running now: the exec, the typed line, or the session itself (an agent
                         * session's own program between its agent commands); an agent session's
                         * commands are in cmds, marked agent, until they end */
    char start_commit[SNAP_OID_HEX], end_commit[SNAP_OID_HEX];
    double created;
    char applied[SNAP_OID_HEX];
} snap_sess;

snap_sess *snap_sess_find(int id);
void snap_cmd_unref(snap_cmd *c);
json_t *snap_cmd_json(const snap_cmd *c);
/* A snapshot job for session x's workspace that observes (no boundary):
 * after(job) runs with the commit in job->taken. */
snap_job *snap_observe(snap_sess *x, const snap_op *op, snap_job_fn after, void *data);
/* The revert of command cmd as a command of its own (snap_proto.c). */
snap_cmd *snap_revert_cmd_begin(snap_sess *x, const char *line, const char *by, snap_go_fn go, void *user);
void snap_revert_cmd_end(snap_sess *x, snap_cmd *c);
server_t *snap_server(void);
/* Why snapshots are off although the config has them on (libgit2 could
 * not be loaded when the first store was opened), or NULL. */
const char *snap_off_reason(void);
/* The keys of the sessions still running in ws (maintenance keeps them). */
char **snap_live_keys(snap_ws *ws, size_t *n);

#endif
