/*
 * session.h - one session: a process tree started through launch (its init
 * and the command) on a PTY or on pipes, with everything the server keeps
 * about it: the terminal model, the output not yet collected by an agent
 * (a 1 MiB head/tail buffer), the recording (output.cast) and event log
 * (events.jsonl), and its state.
 *
 * A session reads its output as fast as the terminal model takes it, except
 * while the server pauses it for a slow streaming client.
 *
 * Included only in src/server/.
 */
#ifndef CORRAL_SESSION_H
#define CORRAL_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "record/cast.h"
#include "sandbox/launch.h"
#include "record/eventlog.h"
#include "base/headtail.h"
#include "base/util.h"
#include "vt/vt.h"

typedef enum session_kind {
    SESSION_USER, /* an interactive session (corral new, the TUI) */
    SESSION_EXEC, /* an agent's exec_command process */
} session_kind;

typedef enum session_state {
    SESSION_RUNNING,
    SESSION_EXITED, /* the process tree is gone; output may still drain */
} session_state;

typedef struct session session_t;

/* What the owner wants to hear about. */
typedef struct session_hooks {
    void (*output)(session_t *s, const char *data, size_t len, void *user);
    /* The bytes the terminal model took (for a pipes session, output with
     * "\n" made "\r\n"): what a client's copy of the model must get. */
    void (*screen_output)(session_t *s, const char *data, size_t len, void *user);
    /* The program set its title, or rang the bell. */
    void (*title)(session_t *s, void *user);
    void (*bell)(session_t *s, void *user);
    /* The process tree exited and its output is fully read (or the grace
     * period ran out): the session's final state is known. */
    void (*finished)(session_t *s, void *user);
    /* Its init is reaped too (after finished when the init said how the
     * command ended before its own exit): nothing of the sandbox is left. */
    void (*reaped)(session_t *s, void *user);
    /* Just before: the recording is about to get its exit marker and
     * close (the last chance for a marker of the owner's). */
    void (*ending)(session_t *s, void *user);
    /* Every handle is closed: the owner may call session_free. */
    void (*closed)(session_t *s, void *user);
} session_hooks;

typedef struct session_spec {
    const sb_plan *plan; /* the compiled sandbox plan: command, cwd, env */
    const char *name;    /* NULL: derived from argv[0] */
    const char *client;  /* who created it: "user", an agent's name */
    session_kind kind;
    bool tty;
    bool pinned;
    int rows, cols;
    uint64_t lifetime_ms; /* 0: none */
    int scrollback;
    int chan_fd;          /* the session channel for the command, or -1 */
    /* A pre-built sandbox for the plan (launch.h, sb_base) to start the
     * command from, or NULL: its own sandbox from nothing. */
    sb_base *base;
    /* With base: the command's home layer made ahead (taken over), or
     * NULL. */
    sb_layer_hold *layer;
    /* Bytes to allocate for the session: its owner's struct that begins
     * with a session_t (0: just the session_t). */
    size_t size;
} session_spec;

struct session {
    int id;
    char *name;
    char **argv;
    /* The command running in it now, as its command mark shows it (a
     * typed line, an exec's argv quoted), and its number; NULL between
     * commands.  What a network dialog names as running. */
    char *running_line;
    int running_n;
    char *cwd;
    char *client;
    char *profile;
    char *dir; /* $XDG_STATE_HOME/corral/sessions/<id> */
    session_kind kind;
    bool tty;
    bool pinned;
    int rows, cols;

    double created;      /* wall clock */
    double started_mono; /* monotonic, for recording timestamps */
    uint64_t last_used;  /* use counter: larger is more recent */
    double last_used_wall;

    pid_t pid; /* the session's init */
    sb_child child; /* its sandbox: cgroups and placeholders to release */
    session_state state;
    bool output_closed;
    bool finished; /* exited and drained: final state known */
    bool reaped;   /* its init too (exited comes first when the init said so) */
    bool killing;
    char *kill_reason;
    int exit_code;   /* when exited: code, or 128+signal */
    int exit_signal; /* 0, or the signal that ended it */
    double ended;    /* wall clock */

    vt_t *vt;
    headtail_t pending; /* output not yet returned to an exec/poll */
    cast_t *cast;
    eventlog_t *events;

    /* I/O */
    int fd;           /* PTY master, or read end of the output pipe */
    uv_poll_t poll;
    bool poll_active;
    uv_poll_t status_poll; /* the sandbox init's status pipe */
    bool status_poll_open;
    bool sandbox_error_reported;
    bool read_paused;
    buf_t wq; /* bytes waiting to be written to the PTY */
    uv_timer_t grace_timer;
    uv_timer_t lifetime_timer;
    uv_timer_t kill_timer;
    uv_timer_t flush_timer;
    int open_handles;
    bool closing;

    const session_hooks *hooks;
    void *hooks_user;
};

/* Start a session with a reserved id.  Creates its directory, recording
 * and event log, the PTY or pipes, and launches the process tree.  NULL on
 * failure, with a message in err (nothing is left behind but the id, which
 * the caller releases). */
session_t *session_start(uv_loop_t *loop, int id, const session_spec *spec, const char *state_dir,
                         const session_hooks *hooks, void *hooks_user, char *err, size_t errlen);

/* Write to the session's terminal.  0, or -EPIPE for a pipes session (stdin
 * closed) or one whose terminal is gone. */
int session_write(session_t *s, const char *data, size_t len);
int session_resize(session_t *s, int rows, int cols);
/* A marker in the recording now (asciicast "m": a command's start or end,
 * docs/formats.md); nothing once the recording is closed. */
void session_marker(session_t *s, const char *label);
/* End the whole process tree; reason goes to the event log ("user",
 * "pruned", "lifetime", "shutdown").  No-op once exited. */
void session_kill(session_t *s, const char *reason);
/* The server reaped the session's init with this wait status: the
 * session has ended (if its init had not said so already on the status
 * pipe), and its sandbox's resources go. */
void session_reaped(session_t *s, int status);
/* An ended session whose init is not reaped yet (it said how the command
 * ended and is exiting): wait for it now, for an owner letting the session
 * go.  Nothing for a running or reaped one. */
void session_reap_now(session_t *s);
/* A reaped sandbox's resources go (cgroups, placeholders, and its home
 * layer, which is removed on loop's thread pool). */
void session_release_sandbox(uv_loop_t *loop, sb_child *child);
/* A home layer goes: its lock released, the directory (unless kept)
 * removed on loop's thread pool. */
void session_release_layer(uv_loop_t *loop, sb_layer_hold *layer);
/* Stop or resume reading output (flow control for slow clients). */
void session_pause_reading(session_t *s, bool paused);
/* Take what was output since the last take. Caller frees. */
char *session_take_pending(session_t *s, size_t *len);

/* The command line of the process group in the foreground of s's terminal
 * (a program its shell runs), shell-quoted as quote_argv_display writes
 * it; NULL when there is none to tell (no terminal, the group has gone,
 * it is the session's own program, or it is not one of the session's
 * processes).  What a process says of
 * itself (its argv): the session's own words, for showing, never for a
 * decision. */
char *session_foreground_command(const session_t *s);

/* Drop what was typed into s's terminal and not yet read: called as a
 * person comes to be asked about a line typed there (or a corral escalate
 * run there), before any screen shows the question, so that a key typed as
 * the dialog opens, before it could take keys, is not left for the shell's
 * next line or the command; what is typed from then on is kept. */
void session_drop_typeahead(session_t *s);
/* Begin closing every handle; hooks->closed fires when done. */
void session_close(session_t *s);
void session_free(session_t *s);

/* "running", "exited 0", "killed (SIGKILL)"... into out. */
void session_state_text(const session_t *s, char *out, size_t outlen);

#endif
