/*
 * mcp_bridge.c - the pool of admin-socket connections behind `corral mcp`.
 */
#include "config.h"

#include "mcp/mcp_bridge.h"
#include "protocol/proto.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void mcp_bridge_init(mcp_bridge *b, const mcp_bridge_ops *ops, void *user)
{
    memset(b, 0, sizeof *b);
    b->ops = ops;
    b->user = user;
    b->client_name = xstrdup("mcp");
    for (int i = 0; i < MCP_MAX_LINKS; i++)
        b->links[i].cl.fd = -1;
}

void mcp_bridge_set_name(mcp_bridge *b, const char *name)
{
    free(b->client_name);
    b->client_name = xstrdup(name);
}

static void link_down(mcp_link *l)
{
    if (l->up)
        client_close(&l->cl);
    l->up = false;
    l->call = NULL;
    l->call_id = 0;
    l->ask_id = 0;
}

static int link_up(mcp_bridge *b, mcp_link *l, char *err, size_t errlen)
{
    if (l->up)
        return 0;
    if (client_connect(&l->cl, b->client_name, true, err, errlen) < 0)
        return -1;
    l->up = true;
    b->server_pid = (int)json_integer_value(json_object_get(l->cl.hello, "pid"));
    return 0;
}

int mcp_bridge_connect(mcp_bridge *b, char *err, size_t errlen)
{
    return link_up(b, &b->links[0], err, errlen);
}

static long send_on(mcp_link *l, json_t *req, char *err, size_t errlen)
{
    long id = l->cl.next_id++;
    json_object_set_new(req, "id", json_integer(id));
    size_t len;
    char *line = proto_dump(json_incref(req), &len); /* the caller keeps req */
    int rc = write_all(l->cl.fd, line, len);
    free(line);
    if (rc < 0) {
        snprintf(err, errlen, "writing to the corral server: %s", strerror(-rc));
        return -1;
    }
    return id;
}

int mcp_bridge_call(mcp_bridge *b, json_t *req, void *call, char *err, size_t errlen)
{
    /* The first idle link: sequential calls stay on the first one. */
    int idx = -1;
    for (int i = 0; i < MCP_MAX_LINKS && idx < 0; i++)
        if (!b->links[i].call)
            idx = i;
    if (idx < 0) {
        json_decref(req);
        snprintf(err, errlen, "%d calls are waiting already; wait for one to return", MCP_MAX_LINKS);
        return -1;
    }
    mcp_link *l = &b->links[idx];
    if (link_up(b, l, err, errlen) < 0) {
        json_decref(req);
        return -1;
    }
    long id = send_on(l, req, err, errlen);
    if (id < 0) {
        /* The server went away since the last call: one fresh connection. */
        link_down(l);
        if (link_up(b, l, err, errlen) < 0) {
            json_decref(req);
            return -1;
        }
        json_object_del(req, "id");
        id = send_on(l, req, err, errlen);
    }
    json_decref(req);
    if (id < 0) {
        link_down(l);
        return -1;
    }
    l->call = call;
    l->call_id = id;
    return idx;
}

int mcp_bridge_ask(mcp_bridge *b, int link, json_t *req)
{
    mcp_link *l = &b->links[link];
    char err[256];
    if (!l->up || !l->call || l->ask_id) {
        json_decref(req);
        return -1;
    }
    long id = send_on(l, req, err, sizeof err);
    json_decref(req);
    if (id < 0)
        return -1;
    l->ask_id = id;
    return 0;
}

void mcp_bridge_cancel(mcp_bridge *b, int link)
{
    if (link >= 0 && link < MCP_MAX_LINKS)
        link_down(&b->links[link]);
}

size_t mcp_bridge_pollfds(mcp_bridge *b, struct pollfd *fds, int *link_of, size_t max)
{
    size_t n = 0;
    for (int i = 0; i < MCP_MAX_LINKS && n < max; i++) {
        if (!b->links[i].up)
            continue;
        fds[n] = (struct pollfd){.fd = b->links[i].cl.fd, .events = POLLIN};
        link_of[n++] = i;
    }
    return n;
}

/* The link failed: its call hears why. */
static void link_failed(mcp_bridge *b, mcp_link *l, const char *why)
{
    void *call = l->call;
    link_down(l);
    if (call)
        b->ops->reply(b->user, call, NULL, why);
}

/* One message from the server on l. */
static void deliver(mcp_bridge *b, mcp_link *l, json_t *m)
{
    void *call = l->call;
    if (json_object_get(m, "event")) {
        if (call)
            b->ops->event(b->user, call, m);
        json_decref(m);
        return;
    }
    json_t *mid = json_object_get(m, "id");
    long id = json_is_integer(mid) ? (long)json_integer_value(mid) : 0;
    if (call && l->ask_id && id == l->ask_id) {
        l->ask_id = 0;
        b->ops->answer(b->user, call, m);
        return;
    }
    /* The call's reply; an error without an id is the server saying it
     * could not read the request at all. */
    if (call && (id == l->call_id || (!json_is_integer(mid) && json_object_get(m, "error")))) {
        l->call = NULL;
        l->call_id = 0;
        l->ask_id = 0; /* a late answer to it is dropped */
        b->ops->reply(b->user, call, m, NULL);
        return;
    }
    json_decref(m);
}

void mcp_bridge_readable(mcp_bridge *b, int link)
{
    mcp_link *l = &b->links[link];
    if (!l->up)
        return;
    char buf[65536];
    ssize_t n = read(l->cl.fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        char why[200];
        snprintf(why, sizeof why, "the corral server closed the connection%s%s", n < 0 ? ": " : "",
                 n < 0 ? strerror(errno) : " (it stopped or restarted)");
        link_failed(b, l, why);
        return;
    }
    proto_reader_feed(&l->cl.rd, buf, (size_t)n);
    for (;;) {
        const char *line;
        size_t len;
        int r = proto_reader_next(&l->cl.rd, &line, &len);
        if (r == 0)
            return;
        if (r < 0) {
            link_failed(b, l, "the corral server sent a message larger than corral mcp accepts");
            return;
        }
        if (len == 0)
            continue;
        json_error_t je;
        json_t *m = json_loadb(line, len, 0, &je);
        if (!m) {
            char why[300];
            snprintf(why, sizeof why, "the corral server sent invalid JSON: %s", je.text);
            link_failed(b, l, why);
            return;
        }
        deliver(b, l, m);
        if (!l->up) /* a callback ended this link */
            return;
    }
}

void mcp_bridge_close(mcp_bridge *b)
{
    for (int i = 0; i < MCP_MAX_LINKS; i++)
        link_down(&b->links[i]);
    free(b->client_name);
    b->client_name = NULL;
}
