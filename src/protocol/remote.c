/*
 * remote.c - another machine's corral server reached over OpenSSH.
 */
#include "config.h"

#include "protocol/remote.h"
#include "base/quote.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* A user or host ssh can only take as one, as what it is: not empty, no
 * leading '-' (ssh would read an option: -oProxyCommand=...), and only
 * letters, digits, '.', '-' and '_' (and ':' in a bracketed address):
 * ssh puts the host into a ProxyCommand or Match exec of the user's config
 * through a shell (%h, %r), where anything else could be read as syntax. */
static bool word_ok(const char *s, size_t len, bool address)
{
    if (len == 0 || s[0] == '-')
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                  ch == '-' || ch == '_' || (address && ch == ':');
        if (!ok)
            return false;
    }
    return true;
}

#define REFUSED "is refused: it must not be empty or start with '-', and may hold only letters, digits, '.', '-' and '_'"

static void refuse(char *err, size_t errlen, const char *what, const char *s, size_t len, const char *why)
{
    char *shown = quote_text_visible(s, len);
    snprintf(err, errlen, "%s '%s' %s", what, shown, why);
    free(shown);
}

int remote_parse(const char *spec, remote_host *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    static const char scheme[] = "ssh://";
    if (strncmp(spec, scheme, sizeof scheme - 1) != 0) {
        refuse(err, errlen, "host", spec, strlen(spec), "is not ssh://[user@]host[:port]");
        return -1;
    }
    const char *p = spec + sizeof scheme - 1;
    size_t len = strlen(p);
    if (len && p[len - 1] == '/') /* ssh://box/ */
        len--;
    const char *at = memchr(p, '@', len);
    const char *hs = p;
    if (at) {
        if (!word_ok(p, (size_t)(at - p), false)) {
            refuse(err, errlen, "user", p, (size_t)(at - p), REFUSED);
            return -1;
        }
        hs = at + 1;
    }
    size_t hlen = len - (size_t)(hs - p);
    const char *colon = NULL;
    const char *name = hs;
    size_t nlen = hlen;
    bool bracketed = hlen && hs[0] == '[';
    if (bracketed) { /* [::1]:22 */
        const char *close = memchr(hs, ']', hlen);
        if (!close) {
            refuse(err, errlen, "host", hs, hlen, "has no closing ']'");
            return -1;
        }
        name = hs + 1;
        nlen = (size_t)(close - name);
        if (close + 1 < hs + hlen) {
            if (close[1] != ':') {
                refuse(err, errlen, "host", hs, hlen, "is not [address] or [address]:port");
                return -1;
            }
            colon = close + 1;
        }
    } else {
        colon = memchr(hs, ':', hlen);
        if (colon)
            nlen = (size_t)(colon - hs);
    }
    if (!word_ok(name, nlen, bracketed)) {
        refuse(err, errlen, "host", name, nlen, REFUSED);
        return -1;
    }
    int port = 0;
    if (colon) {
        const char *ps = colon + 1;
        size_t plen = (size_t)(hs + hlen - ps);
        port = plen && plen <= 5 ? 0 : -1;
        for (size_t i = 0; port >= 0 && i < plen; i++)
            port = ps[i] >= '0' && ps[i] <= '9' ? port * 10 + (ps[i] - '0') : -1;
        if (port < 1 || port > 65535) {
            refuse(err, errlen, "port", ps, plen, "is not a port number (1-65535)");
            return -1;
        }
    }
    h->spec = xstrdup(spec);
    h->user = at ? xstrndup(p, (size_t)(at - p)) : NULL;
    h->host = xstrndup(name, nlen);
    h->port = port;
    return 0;
}

void remote_host_free(remote_host *h)
{
    free(h->spec);
    free(h->user);
    free(h->host);
    free(h->ssh_command);
    free(h->remote_command);
    memset(h, 0, sizeof *h);
}

static char **argv_for(const remote_host *h, bool batch)
{
    char **v = xcalloc(20, sizeof *v);
    size_t n = 0;
    if (h->ssh_command) {
        v[n++] = xstrdup("sh");
        v[n++] = xstrdup("-c");
        v[n++] = xasprintf("%s \"$@\"", h->ssh_command);
        v[n++] = xstrdup(h->ssh_command); /* $0 */
    } else {
        v[n++] = xstrdup("ssh");
    }
    if (h->port) {
        v[n++] = xstrdup("-p");
        v[n++] = xasprintf("%d", h->port);
    }
    if (h->user) {
        v[n++] = xstrdup("-l");
        v[n++] = xstrdup(h->user);
    }
    if (batch) {
        /* Nobody to answer a password or host-key question: ssh fails at
         * once and says why, instead of waiting for a terminal. */
        v[n++] = xstrdup("-o");
        v[n++] = xstrdup("BatchMode=yes");
    }
    v[n++] = xstrdup("-T");
    v[n++] = xstrdup("--");
    v[n++] = xstrdup(h->host);
    v[n++] = xstrdup(h->remote_command && *h->remote_command ? h->remote_command : "corral");
    v[n++] = xstrdup("serve-stdio");
    v[n] = NULL;
    return v;
}

char **remote_argv(const remote_host *h)
{
    return argv_for(h, false);
}

char **remote_argv_batch(const remote_host *h)
{
    return argv_for(h, true);
}

static remote_host *current;

void remote_set(remote_host *h)
{
    if (current) {
        remote_host_free(current);
        free(current);
    }
    current = h;
}

const remote_host *remote_get(void)
{
    return current;
}

/* ssh for h with a socketpair as its stdin and stdout.  errfd NULL: its
 * stderr is ours, so that its questions and errors reach the user (the
 * CLI).  Else (the screen): batch mode, a session of its own with no
 * controlling terminal (neither ssh nor a ProxyCommand can read the
 * screen's keys or draw on it), and its stderr a pipe, *errfd. */
static int spawn(const remote_host *h, int *fd, int *errfd, pid_t *pid, char *err, size_t errlen)
{
    int sv[2], ep[2] = {-1, -1};
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        snprintf(err, errlen, "cannot create a socket pair: %s", strerror(errno));
        return -1;
    }
    if (errfd && pipe2(ep, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    char **argv = errfd ? remote_argv_batch(h) : remote_argv(h);
    pid_t child = fork();
    if (child < 0) {
        snprintf(err, errlen, "cannot fork: %s", strerror(errno));
        strv_free(argv);
        close(sv[0]);
        close(sv[1]);
        if (errfd) {
            close(ep[0]);
            close(ep[1]);
        }
        return -1;
    }
    if (child == 0) {
        if (errfd)
            setsid();
        if (dup2(sv[1], 0) < 0 || dup2(sv[1], 1) < 0 || (errfd && dup2(ep[1], 2) < 0))
            _exit(127);
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvp(argv[0], argv);
        dprintf(2, "corral: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    strv_free(argv);
    close(sv[1]);
    *fd = sv[0];
    if (errfd) {
        close(ep[1]);
        *errfd = ep[0];
    }
    *pid = child;
    return 0;
}

int remote_spawn(const remote_host *h, int *fd, pid_t *pid, char *err, size_t errlen)
{
    return spawn(h, fd, NULL, pid, err, errlen);
}

int remote_spawn_batch(const remote_host *h, int *fd, int *errfd, pid_t *pid, char *err, size_t errlen)
{
    return spawn(h, fd, errfd, pid, err, errlen);
}

/* How long the ssh child may take to go once our end is closed. */
#define REAP_WAIT_MS 3000

void remote_reap(pid_t pid)
{
    if (pid <= 0)
        return;
    int st;
    if (waitpid(pid, &st, WNOHANG) != 0)
        return; /* gone, or not ours */
    bool gone = false;
#ifdef SYS_pidfd_open
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd >= 0) {
        struct pollfd p = {.fd = pfd, .events = POLLIN};
        uint64_t end = now_ms() + REAP_WAIT_MS;
        for (;;) {
            uint64_t now = now_ms();
            int r = now < end ? poll(&p, 1, (int)(end - now)) : 0;
            if (r < 0 && errno == EINTR)
                continue;
            gone = r > 0;
            break;
        }
        close(pfd);
    }
#endif
    if (!gone)
        kill(pid, SIGTERM);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
}

void remote_link_failed(const remote_host *h, const char *why, char *err, size_t errlen)
{
    char **argv = remote_argv(h);
    char *line = quote_argv_display(argv);
    strv_free(argv);
    char *spec = quote_text_visible(h->spec, strlen(h->spec));
    if (why)
        snprintf(err, errlen,
                 "cannot reach the corral server of %s: what came through ssh is not corral's protocol (%s; a "
                 "line printed by a login script there?); corral ran: %s",
                 spec, why, line);
    else
        snprintf(err, errlen,
                 "cannot reach the corral server of %s: the ssh link ended before it answered (ssh's message, if "
                 "any, is above); corral ran: %s",
                 spec, line);
    free(spec);
    free(line);
}
