/*
 * client.c - blocking admin-socket client.
 */
#include "config.h"

#include "protocol/client.h"
#include "protocol/remote.h"
#include "base/paths.h"
#include "base/quote.h"
#include "base/util.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- starting a server -------------------------------------------------- */

/* As client_spawn_server; *elsewhere set when another server held the
 * socket's lock (starting, running, or ending), so that this one gave up. */
static int spawn_server(char *err, size_t errlen, int *pid_out, bool *elsewhere)
{
    *elsewhere = false;
    char *state = paths_state_dir();
    int rc = mkdir_p(state, 0700);
    char *logpath = xasprintf("%s/server.log", state);
    free(state);
    if (rc < 0) {
        snprintf(err, errlen, "cannot create the state directory: %s", strerror(-rc));
        free(logpath);
        return -1;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
        free(logpath);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        free(logpath);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        setsid();
        /* A second fork: the server is no session leader and the client
         * does not have to reap it. */
        pid_t again = fork();
        if (again != 0)
            _exit(again < 0 ? 1 : 0);
        int devnull = open("/dev/null", O_RDWR);
        int logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(logfd >= 0 ? logfd : devnull, 1);
        dup2(logfd >= 0 ? logfd : devnull, 2);
        if (chdir("/") < 0)
            _exit(1);
        char fdarg[16];
        int wfd = fcntl(p[1], F_DUPFD, 3); /* without CLOEXEC, for the exec */
        snprintf(fdarg, sizeof fdarg, "%d", wfd);
        char *args[] = {"corral", "server", "--foreground", "--ready-fd", fdarg, NULL};
        execv("/proc/self/exe", args);
        dprintf(wfd, "error cannot exec /proc/self/exe: %s\n", strerror(errno));
        _exit(1);
    }
    close(p[1]);
    int st;
    waitpid(pid, &st, 0);
    char buf[1200];
    size_t got = 0;
    for (;;) {
        ssize_t n = read(p[0], buf + got, sizeof buf - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
        if (got >= sizeof buf - 1)
            break;
    }
    close(p[0]);
    buf[got] = '\0';
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = '\0';
    if (strncmp(buf, "ok ", 3) == 0) {
        if (pid_out)
            *pid_out = atoi(buf + 3);
        free(logpath);
        return 0;
    }
    if (strncmp(buf, "error ", 6) == 0) {
        /* Another server holds the lock: its pid, when it says. */
        if (strstr(buf, "already running")) {
            const char *said = strstr(buf, "(pid ");
            if (pid_out)
                *pid_out = said ? atoi(said + 5) : 0;
            *elsewhere = true;
            free(logpath);
            return 0;
        }
        snprintf(err, errlen, "%s", buf + 6);
    } else {
        snprintf(err, errlen, "the server exited during start-up; see %s", logpath);
    }
    free(logpath);
    return -1;
}

int client_spawn_server(char *err, size_t errlen, int *pid_out)
{
    bool elsewhere;
    return spawn_server(err, errlen, pid_out, &elsewhere);
}

/* 0 connected, -errno on failure. */
static int try_connect(const char *path, int *fd_out)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path)
        return -ENAMETOOLONG;
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    *fd_out = fd;
    return 0;
}

static int send_request(client_t *c, json_t *req, long *id_out, char *err, size_t errlen)
{
    long id = c->next_id++;
    json_object_set_new(req, "id", json_integer(id));
    size_t len;
    char *line = proto_dump(req, &len);
    int rc = send_all(c->fd, line, len);
    free(line);
    if (rc < 0) {
        if (c->ssh_pid && !c->hello && remote_get())
            remote_link_failed(remote_get(), NULL, err, errlen);
        else
            snprintf(err, errlen, "writing to the server: %s", strerror(-rc));
        return -1;
    }
    *id_out = id;
    return 0;
}

/* Clients that find no server start one, one client at a time: a lock
 * beside the socket (never removed, so that everyone locks the same file)
 * is held from the second look at the socket until the server started
 * listens.  Twenty verbs and five bridges started at once then make one
 * server, and the others find it on their second look. */
static int take_start_lock(const char *sock, char *err, size_t errlen)
{
    char *path = xasprintf("%.*s.start.lock", (int)(strlen(sock) - 5), sock); /* sock ends in ".sock" */
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        free(path);
        return -1;
    }
    free(path);
    while (flock(fd, LOCK_EX) < 0) {
        if (errno != EINTR) {
            snprintf(err, errlen, "cannot lock the server's start-up: %s", strerror(errno));
            close(fd);
            return -1;
        }
    }
    return fd;
}

/* Wait at most ms for an entry to appear in the socket's directory (the
 * socket of a server that is starting), or for ms to pass: a server binds
 * its socket a moment before it listens, and a server that is ending
 * creates nothing, so the caller looks again either way. */
static void wait_for_socket(int ino, int ms)
{
    struct pollfd pfd = {.fd = ino, .events = POLLIN};
    if (ino < 0 || poll(&pfd, 1, ms) <= 0)
        return;
    char buf[4096];
    while (read(ino, buf, sizeof buf) > 0) {
    }
}

/* Each look at a server that holds the lock but does not answer yet waits
 * this long at most, and all of them together START_WAIT_MS. */
#define START_LOOK_MS 50
#define START_WAIT_MS 30000
/* Started again this often while another server holds the lock: one that
 * was ending has gone, and this start takes its place. */
#define START_RETRY_MS 1000

/* start_and_connect could not start one: err says why (not an errno, so
 * that a connect's own error is never taken for it). */
#define START_FAILED (-100000)

/* No server answered on path: start one, or wait for the one being
 * started, and connect.  0, -errno of the last connect, or START_FAILED
 * with err set. */
static int start_and_connect(const char *path, int *fd, char *err, size_t errlen)
{
    int lock = take_start_lock(path, err, errlen);
    if (lock < 0)
        return START_FAILED;
    /* Whoever held the lock before may have started it. */
    int rc = try_connect(path, fd);
    if (rc == 0 || (rc != -ENOENT && rc != -ECONNREFUSED)) {
        close(lock);
        return rc;
    }
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    int ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (ino >= 0 && inotify_add_watch(ino, dir, IN_CREATE | IN_MOVED_TO) < 0) {
        close(ino);
        ino = -1;
    }
    free(dir);
    uint64_t start = now_ms(), last_spawn = 0;
    int holder = 0;
    for (;;) {
        uint64_t now = now_ms();
        if (!last_spawn || now - last_spawn >= START_RETRY_MS) {
            bool elsewhere;
            last_spawn = now;
            if (spawn_server(err, errlen, &holder, &elsewhere) < 0) {
                rc = START_FAILED;
                break;
            }
            /* Ours listens now; another (started by hand, with corral
             * server, or ending) may not yet. */
        }
        rc = try_connect(path, fd);
        if (rc == 0 || (rc != -ENOENT && rc != -ECONNREFUSED))
            break;
        if (now_ms() - start >= START_WAIT_MS) {
            if (holder > 0)
                snprintf(err, errlen, "a server (pid %d) holds %s but has not answered in %d s", holder, path,
                         START_WAIT_MS / 1000);
            else
                snprintf(err, errlen, "no server answered on %s within %d s of starting one", path,
                         START_WAIT_MS / 1000);
            rc = START_FAILED;
            break;
        }
        wait_for_socket(ino, START_LOOK_MS);
    }
    if (ino >= 0)
        close(ino);
    close(lock);
    return rc;
}

int client_connect_socket(int *fd, bool autostart, char *err, size_t errlen)
{
    *fd = -1;
    char *path = paths_socket(err, errlen);
    if (!path)
        return -1;
    int rc = try_connect(path, fd);
    if (rc == -ENAMETOOLONG) {
        snprintf(err, errlen, "socket path %s is too long: set XDG_RUNTIME_DIR to a shorter directory", path);
        free(path);
        return -1;
    }
    if (rc < 0 && autostart && (rc == -ENOENT || rc == -ECONNREFUSED)) {
        rc = start_and_connect(path, fd, err, errlen);
        if (rc == START_FAILED) {
            free(path);
            return -1; /* err says why */
        }
    }
    if (rc < 0) {
        if (rc == -ENOENT || rc == -ECONNREFUSED)
            snprintf(err, errlen, "no server is running on %s (start one with: corral server)", path);
        else
            snprintf(err, errlen, "cannot connect to %s: %s", path, strerror(-rc));
        free(path);
        return -1;
    }
    free(path);
    return 0;
}

static int connect_common(client_t *c, const char *client_name, bool autostart, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->next_id = 1;
    proto_reader_init(&c->rd, 64u << 20); /* replies may be large */
    const remote_host *remote = remote_get();
    if (remote) {
        /* Another machine's server: its corral serve-stdio through ssh,
         * which starts that server when none answers there. */
        pid_t pid;
        if (remote_spawn(remote, &c->fd, &pid, err, errlen) < 0)
            return -1;
        c->ssh_pid = (int)pid;
    } else if (client_connect_socket(&c->fd, autostart, err, errlen) < 0) {
        return -1;
    }
    json_t *hello = json_pack("{s:s, s:i, s:s}", "cmd", "hello", "protocol", PROTO_VERSION, "client",
                              client_name ? client_name : "user");
    long id;
    if (send_request(c, hello, &id, err, errlen) < 0) {
        client_close(c);
        return -1;
    }
    c->hello_id = id;
    return 0;
}

static json_t *read_message(client_t *c, bool *ended, char *err, size_t errlen);

/* Read the hello reply if it is still pending; 0 or -1 with err. */
static int finish_hello(client_t *c, char *err, size_t errlen)
{
    while (c->hello_id) {
        bool ended;
        json_t *m = read_message(c, &ended, err, errlen);
        if (!m) {
            /* Over ssh, an end before the hello's reply is the link's
             * (ssh said why on stderr), not a server's; anything else
             * there is not corral's protocol. */
            if (c->ssh_pid && remote_get()) {
                char why[512];
                snprintf(why, sizeof why, "%s", err);
                remote_link_failed(remote_get(), ended ? NULL : why, err, errlen);
            }
            return -1;
        }
        json_t *mid = json_object_get(m, "id");
        if (json_object_get(m, "event") || !json_is_integer(mid) || json_integer_value(mid) != c->hello_id) {
            json_decref(m);
            continue;
        }
        c->hello_id = 0;
        char buf[512];
        const char *msg = client_error_message(m, buf, sizeof buf);
        if (msg) {
            /* Already made visible by client_error_message: the caller
             * prints err as it is. */
            snprintf(err, errlen, "%s", msg);
            json_decref(m);
            return -1;
        }
        c->hello = m;
    }
    return 0;
}

int client_connect_lazy(client_t *c, const char *client_name, bool autostart, char *err, size_t errlen)
{
    return connect_common(c, client_name, autostart, err, errlen);
}

int client_connect(client_t *c, const char *client_name, bool autostart, char *err, size_t errlen)
{
    if (connect_common(c, client_name, autostart, err, errlen) < 0)
        return -1;
    if (finish_hello(c, err, errlen) < 0) {
        client_close(c); /* the caller has nothing to close */
        return -1;
    }
    return 0;
}

char *client_visible(json_t *v, const char *missing)
{
    if (json_is_string(v))
        return quote_text_visible(json_string_value(v), json_string_length(v));
    return missing ? xstrdup(missing) : NULL;
}

char *client_field(json_t *obj, const char *key, const char *missing)
{
    return client_visible(json_object_get(obj, key), missing);
}

char *client_quote_argv(json_t *argv)
{
    size_t n = json_array_size(argv);
    char **words = xcalloc(n + 1, sizeof *words);
    for (size_t i = 0; i < n; i++) {
        const char *w = json_string_value(json_array_get(argv, i));
        words[i] = (char *)(w ? w : "");
    }
    char *line = quote_argv_display(words);
    free(words);
    return line;
}

char *client_approval_command(json_t *approval)
{
    /* A line typed in a session's shell is shown as it was typed (what
     * runs is that shell running it), not as the shell's -c argv. */
    json_t *line = json_object_get(approval, "line");
    if (json_is_string(line) && json_string_length(line) > 0)
        return quote_text_visible(json_string_value(line), json_string_length(line));
    json_t *cmd = json_object_get(approval, "command");
    if (json_is_string(cmd)) /* already quoted: this only guards the terminal */
        return quote_text_visible(json_string_value(cmd), json_string_length(cmd));
    return client_quote_argv(json_object_get(approval, "argv"));
}

const char *client_error_message(json_t *reply, char *buf, size_t buflen)
{
    json_t *e = json_object_get(reply, "error");
    if (!e)
        return NULL;
    /* Printed as it is by every verb: a server on another machine (-H) may
     * send anything, so its control characters are made visible here, line
     * by line (a message of several lines keeps them). */
    json_t *m = json_object_get(e, "message");
    if (!json_is_string(m)) {
        snprintf(buf, buflen, "the server reported an error");
        return buf;
    }
    const char *p = json_string_value(m), *end = p + json_string_length(m);
    size_t used = 0;
    buf[0] = '\0';
    while (p <= end && used + 1 < buflen) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl : end;
        char *line = quote_text_visible(p, (size_t)(stop - p));
        int n = snprintf(buf + used, buflen - used, "%s%s", used || p != json_string_value(m) ? "\n" : "", line);
        free(line);
        if (n < 0)
            break;
        used += (size_t)n < buflen - used ? (size_t)n : buflen - used - 1;
        if (!nl)
            break;
        p = nl + 1;
    }
    return buf;
}

/* Read one message; NULL on end of file or error (*ended: the connection
 * ended, rather than what came was not the protocol). */
static json_t *read_message(client_t *c, bool *ended, char *err, size_t errlen)
{
    *ended = false;
    for (;;) {
        const char *line;
        size_t len;
        int r = proto_reader_next(&c->rd, &line, &len);
        if (r < 0) {
            snprintf(err, errlen, "the server sent a message larger than this client accepts");
            return NULL;
        }
        if (r > 0) {
            if (len == 0)
                continue;
            json_error_t je;
            json_t *m = json_loadb(line, len, 0, &je);
            if (!m) {
                /* jansson's text quotes what came: made visible */
                char *shown = quote_text_visible(je.text, strlen(je.text));
                snprintf(err, errlen, "the server sent invalid JSON: %s", shown);
                free(shown);
                return NULL;
            }
            return m;
        }
        char buf[65536];
        ssize_t n = read(c->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(err, errlen, n == 0 ? "the server closed the connection" : "reading from the server: %s",
                     strerror(errno));
            *ended = true;
            return NULL;
        }
        proto_reader_feed(&c->rd, buf, (size_t)n);
    }
}

json_t *client_call(client_t *c, json_t *req, client_event_fn on_event, void *user, char *err, size_t errlen)
{
    long id;
    if (send_request(c, req, &id, err, errlen) < 0)
        return NULL;
    if (finish_hello(c, err, errlen) < 0)
        return NULL;
    for (;;) {
        bool ended;
        json_t *m = read_message(c, &ended, err, errlen);
        if (!m)
            return NULL;
        json_t *mid = json_object_get(m, "id");
        if (json_is_integer(mid) && json_integer_value(mid) == id)
            return m;
        if (json_object_get(m, "event")) {
            if (on_event)
                on_event(m, user);
            json_decref(m);
            continue;
        }
        /* A reply without our id: the server could not read the request. */
        if (json_object_get(m, "error"))
            return m;
        json_decref(m);
    }
}

void client_close(client_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    /* Our end closed, ssh hears the end of its input and goes. */
    remote_reap((pid_t)c->ssh_pid);
    c->ssh_pid = 0;
    json_decref(c->hello);
    c->hello = NULL;
    proto_reader_free(&c->rd);
}
