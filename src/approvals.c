/*
 * approvals.c - see approvals.h.
 */
#include "config.h"

#include "approvals.h"
#include "paths.h"
#include "rules_ws.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const answer_names[] = {"once", "session", "persist", "deny", "stop", "timeout", "gone"};

const char *approval_answer_name(approval_answer a)
{
    return (unsigned)a < sizeof answer_names / sizeof answer_names[0] ? answer_names[a] : "?";
}

int approval_answer_parse(const char *s, approval_answer *out)
{
    for (int i = ANSWER_ONCE; i <= ANSWER_STOP; i++) {
        if (strcmp(s, answer_names[i]) == 0) {
            *out = (approval_answer)i;
            return 0;
        }
    }
    return -1;
}

approval_t *approval_new(server_t *srv, char *const *argv, const char *cwd, const char *client)
{
    approval_t *a = xcalloc(1, sizeof *a);
    link_init(&a->node);
    a->srv = srv;
    a->argv = proto_copy_argv(argv);
    a->cwd = xstrdup(cwd ? cwd : "/");
    a->client = xstrdup(client ? client : "user");
    a->kind = xstrdup("exec");
    a->created = wall_sec();
    return a;
}

static void on_timer_closed(uv_handle_t *h)
{
    approval_t *a = h->data;
    proto_free_argv(a->argv);
    proto_free_argv(a->write);
    proto_free_argv(a->prefix_rule);
    free(a->cwd);
    free(a->client);
    free(a->kind);
    free(a->session_name);
    free(a->justification);
    free(a->reason);
    free(a->rule);
    free(a->cache_key);
    free(a);
}

/* path is dir or below it (a '/' boundary: /ws2 is not in /ws). */
static bool path_under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/' || (n == 1 && dir[0] == '/'));
}

/* s names a .git directory or something in one: a path component ".git"
 * (not "y.git" in a URL, not ".github"). */
static bool names_git_dir(const char *s)
{
    for (const char *p = strstr(s, ".git"); p; p = strstr(p + 1, ".git")) {
        bool starts = p == s || p[-1] == '/' || p[-1] == ' ' || p[-1] == '=' || p[-1] == '\'' || p[-1] == '"';
        bool ends = p[4] == '\0' || p[4] == '/' || p[4] == ' ' || p[4] == '\'' || p[4] == '"';
        if (starts && ends)
            return true;
    }
    return false;
}

/* s has "| SHELL" (also "| sudo SHELL", "|SHELL -"): what it writes is run. */
static bool pipes_into_shell(const char *s)
{
    static const char *const shells[] = {"sh", "bash", "zsh", "dash", "ksh", "fish", NULL};
    for (const char *p = strchr(s, '|'); p; p = strchr(p + 1, '|')) {
        const char *q = p + 1;
        if (*q == '|') { /* || is not a pipe */
            p++;
            continue;
        }
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, "sudo ", 5) == 0) {
            q += 5;
            for (;;) { /* sudo's options, up to the command */
                while (*q == ' ')
                    q++;
                if (*q != '-')
                    break;
                while (*q && *q != ' ')
                    q++;
            }
        }
        const char *base = q;
        for (const char *r = q; *r && *r != ' '; r++)
            if (*r == '/')
                base = r + 1; /* /bin/sh */
        for (const char *const *sh = shells; *sh; sh++) {
            size_t n = strlen(*sh);
            if (strncmp(base, *sh, n) == 0 && (base[n] == '\0' || base[n] == ' ' || base[n] == ';'))
                return true;
        }
    }
    return false;
}

json_t *approval_json(const approval_t *a)
{
    static const char *const sandbox_names[] = {"default", "escalated", "more"};
    json_t *o = json_pack("{s:i, s:s, s:s, s:o, s:s, s:b, s:f, s:f}", "id", a->id, "kind", a->kind, "client",
                          a->client, "argv", proto_argv_json(a->argv), "cwd", a->cwd, "tty", a->tty, "created", a->created,
                          "age_seconds", wall_sec() - a->created);
    if (a->session)
        json_object_set_new(o, "session", json_integer(a->session));
    /* With [approvals] timeout, when nobody's answer will deny it: clients
     * show the countdown. */
    if (a->srv && a->srv->conf.approval_timeout_ms)
        json_object_set_new(o, "expires_in_seconds",
                            json_real(a->created + (double)a->srv->conf.approval_timeout_ms / 1000.0 - wall_sec()));
    if (a->session_name)
        json_object_set_new(o, "session_name", json_string(a->session_name));
    json_object_set_new(o, "permissions",
                        json_pack("{s:s, s:o, s:b}", "sandbox", sandbox_names[a->sandbox], "write",
                                  proto_argv_json(a->write), "network", a->network));
    if (a->justification)
        json_object_set_new(o, "justification", json_string(a->justification));
    if (a->reason)
        json_object_set_new(o, "reason", json_string(a->reason));
    if (a->rule)
        json_object_set_new(o, "rule", json_string(a->rule));
    if (a->prefix_rule)
        json_object_set_new(o, "prefix_rule", proto_argv_json(a->prefix_rule));
    /* Risk hints for the dialog, worked out here so every client agrees. */
    json_t *risks = json_array();
    bool outside = false, git = false, sudo = false, pipe_sh = false;
    for (char **w = a->write; w && *w; w++) {
        outside = outside || !path_under(*w, a->cwd);
        git = git || names_git_dir(*w);
    }
    for (char **p = a->argv; p && *p; p++) {
        git = git || names_git_dir(*p);
        sudo = sudo || strcmp(*p, "sudo") == 0 || strstr(*p, "sudo ") != NULL;
        pipe_sh = pipe_sh || pipes_into_shell(*p);
    }
    if (a->sandbox == SANDBOX_ESCALATED)
        json_array_append_new(risks, json_string("runs without the sandbox"));
    if (outside)
        json_array_append_new(risks, json_string("writes outside the workspace"));
    if (git)
        json_array_append_new(risks, json_string("touches .git"));
    if (sudo)
        json_array_append_new(risks, json_string("sudo"));
    if (pipe_sh)
        json_array_append_new(risks, json_string("pipes into a shell"));
    if (a->network)
        json_array_append_new(risks, json_string("network access"));
    json_object_set_new(o, "risks", risks);
    return o;
}

json_t *approvals_json(server_t *srv)
{
    json_t *list = json_array();
    for (link_t *l = srv->approvals.next; l != &srv->approvals; l = l->next)
        json_array_append_new(list, approval_json(link_entry(l, approval_t, node)));
    return list;
}

static void broadcast(server_t *srv, json_t *ev)
{
    for (link_t *l = srv->conns.next; l != &srv->conns; l = l->next) {
        conn_t *c = link_entry(l, conn_t, node);
        if (c->subscribed && !c->closing)
            conn_send(c, json_incref(ev));
    }
    json_decref(ev);
}

/* Durable record of a request or decision: approvals.jsonl, and the
 * session's own log when the session exists. */
static void record(server_t *srv, approval_t *a, const char *event, json_t *fields)
{
    json_object_set_new(fields, "approval", json_integer(a->id));
    if (a->session) {
        session_t *s = server_find(srv, a->session);
        if (s && s->events)
            eventlog_write(s->events, event, json_deep_copy(fields), true);
    }
    if (srv->approval_log)
        eventlog_write(srv->approval_log, event, fields, true);
    else
        json_decref(fields);
}

static void on_timeout(uv_timer_t *t)
{
    approval_t *a = t->data;
    char err[64];
    approval_answer_id(a->srv, a->id, ANSWER_TIMEOUT, "nobody answered in time", "timeout", err, sizeof err);
}

void approval_submit(server_t *srv, approval_t *a)
{
    a->id = ++srv->next_approval;
    link_add(&srv->approvals, &a->node);
    uv_timer_init(srv->loop, &a->timer);
    a->timer.data = a;
    if (srv->conf.approval_timeout_ms)
        uv_timer_start(&a->timer, on_timeout, srv->conf.approval_timeout_ms, 0);
    record(srv, a, "approval_requested", approval_json(a));
    broadcast(srv, json_pack("{s:s, s:o}", "event", "approval", "approval", approval_json(a)));
}

/* Remember a session answer in the requester's cache. */
static void cache_add(link_t *cache, const char *key)
{
    typedef struct entry {
        link_t node;
        char key[];
    } entry;
    size_t n = strlen(key) + 1;
    entry *e = xmalloc(sizeof *e + n);
    memcpy(e->key, key, n);
    link_add(cache, &e->node);
}

bool approval_cached(link_t *cache, const char *key)
{
    typedef struct entry {
        link_t node;
        char key[];
    } entry;
    for (link_t *l = cache->next; l != cache; l = l->next)
        if (strcmp(link_entry(l, entry, node)->key, key) == 0)
            return true;
    return false;
}

void approval_cache_free(link_t *cache)
{
    while (!link_empty(cache)) {
        link_t *l = cache->next;
        link_del(l);
        free(l);
    }
}

char *approval_key(char *const *argv, const char *cwd, bool tty, sandbox_request sb, char *const *write,
                   bool network, const char *env)
{
    /* JSON makes the parts unambiguous (no separator can be forged). */
    json_t *k = json_pack("{s:o, s:s, s:b, s:i, s:o, s:b, s:s}", "argv", proto_argv_json(argv), "cwd", cwd, "tty", tty,
                          "sandbox", (int)sb, "write", proto_argv_json(write), "network", network, "env", env ? env : "");
    char *s = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(k);
    return s;
}

static char *rules_file(void)
{
    char *dir = paths_config_dir();
    char *p = xasprintf("%s/rules/default.rules", dir);
    free(dir);
    return p;
}

int approval_answer_id(server_t *srv, int id, approval_answer answer, const char *note, const char *by, char *err,
                       size_t errlen)
{
    return approval_answer_key(srv, id, answer, note, by, NULL, err, errlen);
}

int approval_answer_key(server_t *srv, int id, approval_answer answer, const char *note, const char *by,
                        const char *key, char *err, size_t errlen)
{
    approval_t *a = NULL;
    for (link_t *l = srv->approvals.next; l != &srv->approvals; l = l->next)
        if (link_entry(l, approval_t, node)->id == id)
            a = link_entry(l, approval_t, node);
    if (!a) {
        snprintf(err, errlen, "no pending request %d (answered already, or withdrawn)", id);
        return -1;
    }
    if (answer == ANSWER_PERSIST) {
        char **tokens = a->prefix_rule ? a->prefix_rule : a->argv;
        size_t n = 0;
        while (tokens[n])
            n++;
        char *path = rules_file(), perr[512];
        if (rules_append_prefix_rule(path, tokens, n, perr, sizeof perr) < 0) {
            snprintf(err, errlen, "cannot save the rule: %s", perr);
            free(path);
            return -1;
        }
        free(path);
        approvals_load_rules(srv);
    }
    if (answer == ANSWER_SESSION && a->cache && a->cache_key)
        cache_add(a->cache, a->cache_key);
    json_t *fields = json_pack("{s:s, s:s}", "answer", approval_answer_name(answer), "by", by ? by : "?");
    if (note && *note)
        json_object_set_new(fields, "note", json_string(note));
    if (key && *key)
        json_object_set_new(fields, "key", json_string(key));
    /* Logged (and synced) before the decision takes effect. */
    record(srv, a, "approval_decided", json_deep_copy(fields));
    json_object_set_new(fields, "event", json_string("approval_done"));
    json_object_set_new(fields, "approval", json_integer(a->id));
    broadcast(srv, fields);
    link_del(&a->node);
    uv_timer_stop(&a->timer);
    if (a->session) {
        /* The requester's yield does not run out while a human decides. */
        session_t *s = server_find(srv, a->session);
        double waited = wall_sec() - a->created;
        if (s)
            waiter_extend(s, waited > 0 ? (uint64_t)(waited * 1000.0) : 0);
    }
    a->fn(srv, a, answer, note, a->user);
    uv_close((uv_handle_t *)&a->timer, on_timer_closed);
    return 0;
}

bool approvals_pending_for_session(server_t *srv, int id)
{
    for (link_t *l = srv->approvals.next; l != &srv->approvals; l = l->next)
        if (link_entry(l, approval_t, node)->session == id)
            return true;
    return false;
}

void approval_withdraw(server_t *srv, approval_t *a)
{
    char err[64];
    approval_answer_id(srv, a->id, ANSWER_GONE, NULL, "requester", err, sizeof err);
}

/* ---- rules ------------------------------------------------------------------- */

/* A line in the server log's format (server.c), for notes about rules. */
static void rules_log(const char *what, const char *msg)
{
    char when[32];
    iso_time(when, wall_sec());
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n')
        n--;
    fprintf(stderr, "%s corral[%d]: %s%.*s\n", when, (int)getpid(), what, (int)n, msg);
    fflush(stderr);
}

/* srv->rules_error: every file left out, the user's and the trusted
 * workspaces' (clients print it; the subscribe and approvals replies carry it). */
static void update_rules_error(server_t *srv)
{
    buf_t b;
    buf_init(&b);
    if (srv->builtin_error)
        buf_puts(&b, srv->builtin_error);
    char *ws = rules_ws_errors(srv->rules_ws);
    if (ws)
        buf_puts(&b, ws);
    free(ws);
    char *now = b.len ? buf_steal(&b) : NULL;
    buf_free(&b);
    bool same = (!now && !srv->rules_error) || (now && srv->rules_error && strcmp(now, srv->rules_error) == 0);
    free(srv->rules_error);
    srv->rules_error = now;
    /* Screens already attached learn of it now, not at their next start. */
    if (!same)
        broadcast(srv, json_pack("{s:s, s:s?}", "event", "rules", "rules_error", now));
}

void approvals_load_rules(server_t *srv)
{
    char err[1024];
    if (!srv->builtin_rules) {
        srv->builtin_rules = rules_new();
        if (rules_load_text(srv->builtin_rules, RULES_BUILTIN_NAME, rules_builtin_text, err, sizeof err) < 0)
            srv->builtin_error = xasprintf("%s\n", err); /* a bug: the tests load them */
    }
    if (!srv->rules_ws)
        srv->rules_ws = rules_ws_new();
    rules_ws_reload_user(srv->rules_ws);
    srv->rules = rules_ws_user(srv->rules_ws);
    update_rules_error(srv);
}

const rules_t *approvals_rules_for(server_t *srv, const char *cwd)
{
    if (!srv->rules_ws)
        approvals_load_rules(srv);
    char *note = NULL;
    bool changed = false;
    const rules_t *r = rules_ws_for(srv->rules_ws, cwd, &note, &changed);
    srv->rules = rules_ws_user(srv->rules_ws); /* it may have been reloaded */
    if (note)
        rules_log("", note);
    free(note);
    if (changed) {
        update_rules_error(srv);
        if (srv->rules_error)
            rules_log("rules not loaded: ", srv->rules_error);
    }
    return r;
}

void approvals_shutdown(server_t *srv)
{
    while (!link_empty(&srv->approvals))
        approval_withdraw(srv, link_entry(srv->approvals.next, approval_t, node));
    rules_ws_free(srv->rules_ws); /* it owns srv->rules */
    srv->rules_ws = NULL;
    srv->rules = NULL;
    free(srv->builtin_error);
    srv->builtin_error = NULL;
    rules_free(srv->builtin_rules);
    srv->builtin_rules = NULL;
    free(srv->rules_error);
    srv->rules_error = NULL;
    if (srv->approval_log)
        eventlog_close(srv->approval_log);
    srv->approval_log = NULL;
}
