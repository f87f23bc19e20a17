/*
 * sesschan.h - a session's channel (docs/ARCHITECTURE.md): the one way out of
 * a sandbox.  Every session's command gets, as fd 3 (CORRAL_SESSION_FD),
 * one end of a SOCK_SEQPACKET socket pair whose other end the server
 * holds.  Code inside the sandbox is untrusted: it can only send requests
 * that go to a human (escalate) or to the policy (check), never answer
 * one, and nothing it sends reaches the admin socket.
 *
 * Wire format (docs/protocol.md, "Session channel"): one message per
 * request, a JSON object, with SCM_RIGHTS carrying first a reply socket
 * (one end of a pair the requester made) and for escalate its stdin,
 * stdout and stderr.  Replies are JSON messages on the reply socket; the
 * requester closing it withdraws the request (or ends what it started).
 * A message is decoded and checked for shape by chanmsg.h.
 *
 *  {"verb":"escalate","argv":[...],"cwd":DIR,"write":[PATH...],
 *   "network":BOOL,"reason":TEXT}
 *     -> {"state":"pending","approval":ID} (when it waits for a human)
 *     -> {"state":"denied","message":TEXT} | {"state":"running"}
 *     -> {"state":"exited","status":N} | {"state":"failed","message":TEXT}
 *  {"verb":"check","shell":"bash"|"zsh","line":TEXT,"cwd":DIR}
 *     -> {"state":"pending","approval":ID} (maybe)
 *     -> {"state":"run"} | {"state":"denied","message":TEXT}
 *  {"verb":"mark","what":"start","line":TEXT,"cwd":DIR}
 *     -> {"state":"run","command":N} (0: not a command)
 *  {"verb":"mark","what":"end","status":N,"command":N,"cwd":DIR}
 *     -> {"state":"ok"}
 *  {"verb":"listeners","cwd":"/"} with three fds, no reply: a proxy-mode
 *     sandbox's init hands over its listeners on 127.0.0.1:3128 (HTTP),
 *     :1080 (SOCKS5) and :3129 (marks), once, before its command starts.
 *
 * The marks' door (127.0.0.1:3129 in the sandbox): for programs whose
 * parent closed fd 3 (agents close every descriptor but 0-2 for the
 * commands they run).  One TCP connection carries one message, the same
 * JSON, ended by the client's shutdown of its side (at most the channel's
 * size, within 10 s); the reply comes back on the connection.  Only marks
 * come through it, and only from the session whose sandbox it is.  It
 * lasts as long as the session, whether or not the channel is still open.
 *
 * Server-internal.
 *
 * Included by src/server/, src/gate/ and src/cli/.
 */
#ifndef CORRAL_SESSCHAN_H
#define CORRAL_SESSCHAN_H

#include "protocol/chanmsg.h"
#include "server/server_int.h"

typedef struct sesschan sesschan;

/* A new channel for session id: returns the end for the command (-1 with
 * err on failure); the server's end is kept for sesschan_attach. */
int sesschan_create(server_t *srv, int *server_end, char *err, size_t errlen);
/* Start serving server_end for s (it takes ownership); proxy_mode: its
 * sandbox is in network mode proxy (its init hands over listeners). */
void sesschan_attach(server_t *srv, session_t *s, int server_end, bool proxy_mode);
/* The channel of a command corral escalate started for s: it may only hand
 * over its sandbox's proxy listeners (owner tells them apart from the
 * session's own; not 0).  sesschan_run_ended when the command has ended
 * closes it and those listeners. */
sesschan *sesschan_attach_run(server_t *srv, session_t *s, int server_end, bool proxy_mode, unsigned owner);
void sesschan_run_ended(sesschan *ch);
/* The channels as a module: a session's closes when its tree is gone, and
 * every one when the server shuts down.  (What its requests started ends
 * with them: the handler's module hears of the same events.) */
extern const server_module sesschan_module;

/* Who judges what a session asks for (escalation.h) */
typedef struct sesschan_handler {
    /* Requests of session id still open (waiting or running). */
    size_t (*open_count)(server_t *srv, int id);
    /* A request from s: its message, decoded, its reply socket and (for
     * escalate) stdio (-1 when absent); takes the fds, m stays the
     * caller's. */
    void (*request)(server_t *srv, session_t *s, const chan_msg *m, int reply, int stdio[3]);
} sesschan_handler;
/* Requests go to h from now on (none are taken before). */
void sesschan_handle_with(const sesschan_handler *h);

#endif
