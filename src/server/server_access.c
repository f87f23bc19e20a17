/*
 * server_access.c - what the modules see of the server and of a session
 * (server.h): reads of the core's state and the places modules keep their
 * own.  Kept apart from server.c and server_sessions.c so that a module,
 * or a part of the core, reading a fact never calls back into the files
 * that drive the loop and the sessions.
 */
#include "config.h"

#include "server/server.h"
#include "server/server_int.h"
#include "base/util.h"

/* ---- the server ------------------------------------------------------------- */

uv_loop_t *server_loop(server_t *srv)
{
    return srv->loop;
}

const conf_t *server_conf(const server_t *srv)
{
    return &srv->conf;
}

const char *server_state_dir(const server_t *srv)
{
    return srv->state_dir;
}

bool server_shutting_down(const server_t *srv)
{
    return srv->shutting_down;
}

const policy_settings *server_policy(const server_t *srv)
{
    return &srv->policy;
}

struct proxy *server_proxy(const server_t *srv)
{
    return srv->proxy;
}

void server_set_proxy(server_t *srv, struct proxy *p)
{
    srv->proxy = p;
}

void server_attach(server_t *srv, const void *key, void *data, void (*free_fn)(void *data))
{
    attach_put(&srv->attached, "the server", key, data, free_fn);
}

void *server_attached(const server_t *srv, const void *key)
{
    return attach_get(&srv->attached, key);
}

/* ---- a session -------------------------------------------------------------- */

session_t *server_find(server_t *srv, int id)
{
    return store_get(&srv->store, id);
}

session_t *server_next_session(server_t *srv, session_t *prev)
{
    link_t *l = prev ? srv_session(prev)->node.next : srv->sessions.next;
    return l == &srv->sessions ? NULL : &link_entry(l, server_session, node)->base;
}

const char *server_session_workspace(session_t *s)
{
    return srv_session(s)->workspace;
}

const launch_sandbox *server_session_sandbox(session_t *s)
{
    return &srv_session(s)->sandbox;
}

const policy_settings *server_session_policy(session_t *s)
{
    return &srv_session(s)->policy;
}

bool server_session_shell_hook(session_t *s)
{
    return srv_session(s)->shell_hook;
}

void server_session_attach(session_t *s, const void *key, void *data, void (*free_fn)(void *data))
{
    attach_put(&srv_session(s)->attached, "a session", key, data, free_fn);
}

void *server_session_attached(session_t *s, const void *key)
{
    return attach_get(&srv_session(s)->attached, key);
}

void *server_session_data(session_t *s, const void *key, size_t size, void (*free_fn)(void *data))
{
    void *data = server_session_attached(s, key);
    if (!data) {
        data = xcalloc(1, size);
        server_session_attach(s, key, data, free_fn);
    }
    return data;
}
