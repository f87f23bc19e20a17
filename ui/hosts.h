/*
 * hosts.h - the machines the screen shows: this machine's server and the
 * servers of the hosts named in [hosts] (and by corral -H HOST attach),
 * each reached through its own `ssh HOST corral serve-stdio` (README
 * "Several machines", corral(1) OTHER MACHINES), one connection each.
 *
 * Ids.  Every server draws its session ids from 1000..99999 and numbers
 * its requests from 1 (docs/protocol.md), so two machines may both have a
 * session 48213.  The screen numbers them apart: host k's id N is
 * k * UI_HOST_STRIDE + N, where this machine is host 0 and keeps its ids.
 * Everything else in ui/ keys its state by these screen ids; this file
 * alone translates, at the connection, both ways: every event and reply
 * that names a session or a request is rewritten as it arrives, every
 * request as it leaves, and a request goes to the host its ids name.
 *
 * What another machine sends is as hostile as what a session writes: it
 * reaches the screen only through the same decoding and sanitising as this
 * machine's server's messages, an id outside the range it may use is
 * dropped (a request numbered 1000000 or more too), terminal sizes outside
 * 1..1000 are dropped, at most 256 of its sessions and 256 of its requests
 * are taken, and a remote host's config and rules events are not taken for
 * this machine's.
 *
 * A link that does not bring the session list within 20 s is taken for
 * down (a hung ssh, or a list too large for the protocol).
 *
 * Links fail, sessions do not: a host whose link drops is shown as lost
 * (its sessions greyed, with the time), its requests leave the queue (they
 * wait there, unanswerable from here), and it is tried again with backoff
 * (1 s doubling to 30 s); when it answers, its sessions, their watches and
 * its pending requests come back as they are then.  Nothing is answered
 * twice: an answer whose link dropped is the server's to have taken or not,
 * and the request comes back if it still waits.
 *
 * Included through tui_int.h by the files of ui/; not for other modules.
 */
#ifndef CORRAL_UI_HOSTS_H
#define CORRAL_UI_HOSTS_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>
#include <uv.h>

#include "sessions.h"
#include "uiconn.h"
#include "base/util.h"
#include "protocol/remote.h"

struct tui;

/* Host k's ids are k * UI_HOST_STRIDE + N (see above). */
#define UI_HOST_STRIDE UI_SESSIONS_HOST_STRIDE
/* At most this many machines on one screen (ids stay within an int). */
#define UI_HOSTS_MAX 64

typedef enum ui_host_state {
    HOST_CONNECTING, /* ssh started, no hello yet */
    HOST_UP,         /* subscribed: its list is on the screen */
    HOST_DOWN,       /* the link is gone; retry is set */
} ui_host_state;

typedef struct ui_host {
    struct tui *t;
    int index;           /* 0: this machine */
    char *name;          /* NULL for this machine; the [hosts] name, or what -H named */
    remote_host *remote; /* NULL for this machine */
    uiconn_t *conn;      /* NULL while there is no link */
    ui_host_state state;
    bool ever_up;        /* answered once in this run */
    time_t lost_at;      /* wall clock: when the link was lost (HOST_DOWN after being up) */
    char why[512];       /* why it is not up: ssh's last words, or the server's */
    char why_said[512];  /* the why the status bar's message said last */
    uv_timer_t retry;
    unsigned retry_ms;   /* the wait before the next attempt */
    double retry_at;     /* ui_now() of the next attempt */
    pid_t ssh_pid;       /* reaped without blocking (hosts_tick) */
    uv_pipe_t err_pipe;  /* ssh's stderr */
    bool err_open;
    buf_t err_text;      /* the last of it */
    char *rules_error;   /* another machine's rules files that did not load (its words, made safe), or NULL */
} ui_host;

typedef struct ui_hosts {
    ui_host *v[UI_HOSTS_MAX];
    size_t n;
    pid_t reap[UI_HOSTS_MAX * 2]; /* ssh children gone from their host, not yet reaped */
    double reap_since[UI_HOSTS_MAX * 2];
    size_t n_reap;
} ui_hosts;

/* What the screen (tui.c) does with what the hosts send, already in
 * screen ids. */
typedef struct ui_hosts_handlers {
    void (*event)(struct tui *t, ui_host *h, json_t *ev);
    void (*term)(struct tui *t, int session, const char *data, size_t len);
    /* A host's subscribe reply: its sessions and requests as they are now. */
    void (*subscribed)(struct tui *t, ui_host *h, json_t *reply);
    /* A host came up, went down or is tried again (redraw; h->state). */
    void (*changed)(struct tui *t, ui_host *h);
    /* This machine's server went away (the screen ends with it). */
    void (*local_lost)(struct tui *t, const char *why);
} ui_hosts_handlers;

/* This machine's server, connecting (and starting one) as the CLI does;
 * blocking.  0, or -1 with err. */
int hosts_open_local(struct tui *t, const ui_hosts_handlers *hd, char *err, size_t errlen);
/* Another machine (taken over): connects in the background, subscribes
 * once it answers, reconnects when its link drops.  NULL when the screen
 * already has UI_HOSTS_MAX hosts or this one (err says which). */
ui_host *hosts_add_remote(struct tui *t, const char *name, remote_host *r, char *err, size_t errlen);
/* Subscribe to this machine's server (the others subscribe when up). */
void hosts_start(struct tui *t);
/* Reap ssh children that went; once a second. */
void hosts_tick(struct tui *t);
/* Close every link (the screen is ending), then free them. */
void hosts_close_all(struct tui *t);
void hosts_free(struct tui *t);

/* Send req (stolen) to the host its "session", "approval" or "sessions"
 * ids name (this machine when it names none); fn gets the reply with its
 * ids as the screen's, or NULL when that host's link is not up. */
void hosts_request(struct tui *t, json_t *req, uiconn_reply_fn fn, void *user);
/* The same to host index, whatever req names. */
void hosts_request_on(struct tui *t, int index, json_t *req, uiconn_reply_fn fn, void *user);

/* The host of a screen id (NULL: none such). */
ui_host *hosts_of(const struct tui *t, int id);
static inline int hosts_index_of(int id)
{
    return id / UI_HOST_STRIDE;
}
/* Another machine's session or request (not this machine's). */
static inline bool hosts_remote_id(int id)
{
    return id >= UI_HOST_STRIDE;
}
/* The id as its host's server knows it. */
static inline int hosts_server_id(int id)
{
    return id % UI_HOST_STRIDE;
}
/* The first rules-file error to show in the status bar: this machine's,
 * else the first other machine's (*machine set to its name; else NULL). */
const char *hosts_rules_error(const struct tui *t, const char **machine);
/* Live sessions on this machine, and on the others together (a server
 * keeps its own max: "3/64 live" is this machine's). */
void hosts_live(const struct tui *t, int *here, int *elsewhere);
/* Its host's link is down (or not up yet): keys and requests cannot reach it. */
bool hosts_unreachable(const struct tui *t, int id);
/* An id as people read it: "48213" here, "box:48213" on host box. */
void hosts_id_text(const struct tui *t, int id, char *out, size_t n);
/* The same in one of 8 buffers used in turn, for a message's arguments. */
const char *hosts_id(const struct tui *t, int id);
/* Why a session of a host whose link is down cannot be reached, for the
 * status bar and its pane: "link to box lost at 14:02:11 (ssh: ...);
 * trying again in 8 s". */
void hosts_down_text(const ui_host *h, char *out, size_t n);

#endif
