/*
 * client.c - blocking admin-socket client.
 */
#include "config.h"

#include "protocol/client.h"
#include "base/paths.h"
#include "base/quote.h"
#include "server/server.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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
    int rc = write_all(c->fd, line, len);
    free(line);
    if (rc < 0) {
        snprintf(err, errlen, "writing to the server: %s", strerror(-rc));
        return -1;
    }
    *id_out = id;
    return 0;
}

static int connect_common(client_t *c, const char *client_name, bool autostart, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->next_id = 1;
    proto_reader_init(&c->rd, 64u << 20); /* replies may be large */
    char *path = paths_socket(err, errlen);
    if (!path)
        return -1;
    int rc = try_connect(path, &c->fd);
    if (rc == -ENAMETOOLONG) {
        snprintf(err, errlen, "socket path %s is too long: set XDG_RUNTIME_DIR to a shorter directory", path);
        free(path);
        return -1;
    }
    if (rc < 0 && autostart && (rc == -ENOENT || rc == -ECONNREFUSED)) {
        if (server_spawn_daemon(err, errlen, NULL) < 0) {
            free(path);
            return -1;
        }
        rc = try_connect(path, &c->fd);
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
    json_t *hello = json_pack("{s:s, s:i, s:s}", "cmd", "hello", "protocol", PROTO_VERSION, "client",
                              client_name ? client_name : "user");
    return send_request(c, hello, &c->hello_id, err, errlen);
}

static json_t *read_message(client_t *c, char *err, size_t errlen);

/* Read the hello reply if it is still pending; 0 or -1 with err. */
static int finish_hello(client_t *c, char *err, size_t errlen)
{
    while (c->hello_id) {
        json_t *m = read_message(c, err, errlen);
        if (!m)
            return -1;
        json_t *mid = json_object_get(m, "id");
        if (json_object_get(m, "event") || !json_is_integer(mid) || json_integer_value(mid) != c->hello_id) {
            json_decref(m);
            continue;
        }
        c->hello_id = 0;
        char buf[512];
        const char *msg = client_error_message(m, buf, sizeof buf);
        if (msg) {
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
    return finish_hello(c, err, errlen);
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
    const char *msg = json_string_value(json_object_get(e, "message"));
    snprintf(buf, buflen, "%s", msg ? msg : "the server reported an error");
    return buf;
}

/* Read one message; NULL on end of file or error. */
static json_t *read_message(client_t *c, char *err, size_t errlen)
{
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
                snprintf(err, errlen, "the server sent invalid JSON: %s", je.text);
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
        json_t *m = read_message(c, err, errlen);
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
    json_decref(c->hello);
    c->hello = NULL;
    proto_reader_free(&c->rd);
}
