/*
 * remote.h - another machine's corral server reached over OpenSSH (corral
 * -H ssh://[user@]host[:port], docs/corral.1): the host given, checked so
 * that nothing in it reaches ssh as an option; the ssh command line that
 * runs `corral serve-stdio` there; the ssh child started with one end of a
 * socketpair as its standard input and output (its stderr is ours, so that
 * ssh's own messages reach the user unchanged), and reaped.  The blocking
 * client (client.c) uses it in its one place that connects.
 *
 * Included by src/protocol/, src/cli/ and ui/.
 */
#ifndef CORRAL_REMOTE_H
#define CORRAL_REMOTE_H

#include <stddef.h>
#include <sys/types.h>

typedef struct remote_host {
    char *spec;           /* as given (ssh://...), for messages */
    char *user;           /* NULL: ssh's own choice */
    char *host;
    int port;             /* 0: ssh's own choice */
    char *ssh_command;    /* NULL: the program ssh; else a shell command line (as GIT_SSH_COMMAND) */
    char *remote_command; /* the remote corral program; NULL: "corral" */
} remote_host;

/* Parse ssh://[user@]host[:port] (host may be a [bracketed] IPv6
 * address) into h (its other fields NULL).  A user or host that is empty,
 * starts with '-' or holds anything but letters, digits, '.', '-' and '_'
 * is refused (it would reach ssh as an option, or a shell through a
 * ProxyCommand's %h); so is a port outside 1-65535.  0, or -1 with a
 * message naming the value. */
int remote_parse(const char *spec, remote_host *h, char *err, size_t errlen);
void remote_host_free(remote_host *h);

/* The argv run for h (NULL-terminated, malloc'd, strv_free): ssh [-p PORT]
 * [-l USER] -T -- HOST REMOTE serve-stdio, or with a ssh_command
 * sh -c 'CMD "$@"' CMD [-p PORT] ... */
char **remote_argv(const remote_host *h);

/* The host every connection of this process goes to (client.c); NULL (the
 * default) for the local server.  h is taken over. */
void remote_set(remote_host *h);
const remote_host *remote_get(void);

/* Start h's ssh with a socketpair: *fd our end (close-on-exec), *pid the
 * child.  0, or -1 with err. */
int remote_spawn(const remote_host *h, int *fd, pid_t *pid, char *err, size_t errlen);

/* The same with no terminal to ask on, for the supervisor screen's links:
 * ssh runs with BatchMode=yes (remote_argv_batch) in a session of its own
 * (no controlling terminal), and its stderr is a pipe, *errfd (ours,
 * close-on-exec), whose text says why a link failed. */
char **remote_argv_batch(const remote_host *h);
int remote_spawn_batch(const remote_host *h, int *fd, int *errfd, pid_t *pid, char *err, size_t errlen);

/* After our end is closed: wait for the ssh child, at most a few seconds
 * (then it is killed), so that none is left running or a zombie. */
void remote_reap(pid_t pid);

/* Into err: "cannot reach the corral server of HOST: the ssh link ended
 * before it answered (ssh's message, if any, is above); corral ran: ARGV",
 * or with why (what came was not the protocol: why says how) that instead
 * of the link's end. */
void remote_link_failed(const remote_host *h, const char *why, char *err, size_t errlen);

#endif
