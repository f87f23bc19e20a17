/*
 * server_sessions.c - the server's side of sessions: the hooks a session
 * calls (output, title, bell, end), starting one (its sandbox plan, with
 * the session's tools and shell hook, its channel), the process store
 * (pruning), a session's JSON, and kill-and-wait.  What a session's start,
 * end and JSON mean to the server's modules, they hear through their hooks
 * (module.h), in the order of the server's table.
 */
#include "config.h"

#include "server/server_int.h"
#include "server/layouts.h"
#include "config/sbconf.h"
#include "server/sesschan.h"
#include "server/shellhook.h"
#include "protocol/uexec.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- sessions ----------------------------------------------------------- */


void server_touch_quiet(server_t *srv, session_t *s)
{
    s->last_used = ++srv->use_clock;
    s->last_used_wall = wall_sec();
}

void server_touch(server_t *srv, session_t *s)
{
    server_touch_quiet(srv, s);
    watch_session_changed(s);
}

static void on_session_output(session_t *s, const char *data, size_t len, void *user)
{
    (void)user;
    waiter_session_output(s, data, len);
}

/* Quiet this long, a running session shows as idle in lists. */
#define IDLE_AFTER_MS 10000

static void on_session_screen_output(session_t *s, const char *data, size_t len, void *user)
{
    server_t *srv = user;
    server_session *x = srv_session(s);
    uint64_t now = uv_now(srv->loop);
    /* Idle to busy is an event; busy to idle is a matter of time, which
     * clients compute from output_age_seconds. */
    if (x->last_output_ms && now - x->last_output_ms >= IDLE_AFTER_MS)
        watch_session_changed(s);
    x->last_output_ms = now;
    watch_session_output(s, data, len);
}

static void on_session_title(session_t *s, void *user)
{
    (void)user;
    watch_session_changed(s);
}

static void on_session_bell(session_t *s, void *user)
{
    (void)user;
    watch_session_bell(s);
}

typedef struct kill_wait {
    link_t node;
    conn_t *conn;
    json_t *id;
} kill_wait;


/* The session has ended and its init is reaped too: nothing of the
 * sandbox is left, so its pre-built base may go, and a kill answers. */
static void on_nothing_left(session_t *s)
{
    server_session *x = srv_session(s);
    if (x->prebuilt) {
        prebuilt_put(x->prebuilt);
        x->prebuilt = NULL;
    }
    while (!link_empty(&x->kill_waits)) {
        kill_wait *k = link_entry(x->kill_waits.next, kill_wait, node);
        link_del(&k->node);
        char state[64];
        session_state_text(s, state, sizeof state);
        json_t *r = proto_ok(k->id);
        json_object_set_new(r, "session", json_integer(s->id));
        json_object_set_new(r, "state", json_string(state));
        conn_send(k->conn, r);
        json_decref(k->id);
        conn_release(k->conn);
        free(k);
    }
}

static void on_session_finished(session_t *s, void *user)
{
    server_t *srv = user;
    server_session *x = srv_session(s);
    /* Its channel closes, its escalations end, its proxied connections
     * close, its "after" snapshot is queued, and only then does its waiter
     * reply and the screens hear of the end (src/cli/server_modules.c). */
    TELL_MODULES(srv, session_finished, s);
    /* Its init, which said how the command ended once it had reaped the
     * rest, may still be on its way out: then this waits for its reap. */
    if (s->reaped)
        on_nothing_left(s);
    /* A pruned session is out of the store: once no request waits on it
     * (a waiter in its post-write settle closes it itself), it goes. */
    if (!x->in_store && !x->waiter)
        session_close(s);
    if (srv->shutting_down)
        server_maybe_finish_shutdown(srv);
}

static void on_session_reaped(session_t *s, void *user)
{
    (void)user;
    if (s->finished)
        on_nothing_left(s);
}

static void on_session_ending(session_t *s, void *user)
{
    server_t *srv = user;
    TELL_MODULES(srv, session_ending, s);
}

static void on_session_closed(session_t *s, void *user)
{
    (void)user;
    server_session *x = srv_session(s);
    /* Let go of right after its end: its init is a moment from its exit. */
    session_reap_now(s);
    while (!link_empty(&x->kill_waits)) {
        kill_wait *k = link_entry(x->kill_waits.next, kill_wait, node);
        link_del(&k->node);
        json_decref(k->id);
        conn_release(k->conn);
        free(k);
    }
    TELL_MODULES(x->srv, session_freed, s);
    attach_free_all(&x->attached);
    free(x->workspace);
    launch_sandbox_free(&x->sandbox);
    link_del(&x->node);
    session_free(s); /* x with it: one allocation */
}

static const session_hooks server_session_hooks = {
    .output = on_session_output,
    .screen_output = on_session_screen_output,
    .title = on_session_title,
    .bell = on_session_bell,
    .finished = on_session_finished,
    .reaped = on_session_reaped,
    .ending = on_session_ending,
    .closed = on_session_closed,
};

/* Drop s from the store; a running one is killed, a finished one closed. */
static void unstore(server_t *srv, session_t *s, const char *reason)
{
    server_session *x = srv_session(s);
    if (!x->in_store)
        return;
    store_remove(&srv->store, s->id);
    x->in_store = false;
    layouts_forget_session(s->id);
    watch_session_removed(s);
    if (s->finished) {
        if (strcmp(reason, "pruned") == 0)
            eventlog_write(s->events, "pruned", NULL, false);
        if (!x->waiter)
            session_close(s);
    } else {
        session_kill(s, reason);
    }
}

void server_remove_session(server_t *srv, session_t *s)
{
    unstore(srv, s, "removed");
}

/* Codex's prune: only when the store is full, at most one per insert. */
static void prune_if_needed(server_t *srv)
{
    size_t n = store_len(&srv->store);
    if (n < STORE_MAX)
        return;
    store_meta *meta = xcalloc(n, sizeof *meta);
    for (size_t i = 0; i < n; i++) {
        session_t *s = srv->store.entries[i].item;
        meta[i].id = s->id;
        meta[i].last_used = s->last_used;
        meta[i].exited = s->state == SESSION_EXITED;
        meta[i].pinned = s->pinned;
    }
    int pick = store_pick_prune(meta, n);
    if (pick >= 0) {
        session_t *victim = srv->store.entries[pick].item;
        server_log("store full (%zu): pruning session %d (%s)", n, victim->id,
             victim->state == SESSION_EXITED ? "exited" : "running");
        unstore(srv, victim, "pruned");
    }
    free(meta);
}

const char *const *server_session_env(bool agent, bool tty)
{
    static const char *const exec_env[] = {"NO_COLOR=1", "LANG=C.UTF-8", "LC_CTYPE=C.UTF-8", "LC_ALL=C.UTF-8",
                                           "COLORTERM=", "PAGER=cat", "GIT_PAGER=cat", "GH_PAGER=cat",
                                           "TERM=dumb", NULL};
    static const char *const tty_env[] = {"TERM=xterm-256color", NULL};
    static const char *const pipe_env[] = {"TERM=dumb", NULL};
    return agent ? exec_env : tty ? tty_env : pipe_env;
}

/* Does r start an interactive bash or zsh that gets the shell hook
 * (escalation path 3), where each typed line is a command? */
static bool gets_shell_hook(server_t *srv, const launch_spec *r, bool tools)
{
    if (!tools || !srv->hook_dir || !r->tty || r->agent)
        return false;
    char **argv = NULL, **env = NULL;
    bool yes = shellhook_apply(r->argv, "/", &argv, &env);
    if (yes)
        shellhook_free(argv, env);
    return yes;
}

/* r's plan as session id, with the session's tools (corral and the shell
 * hooks, where the command will see them) when it gets a channel. */
static sb_plan *session_plan(server_t *srv, const launch_spec *r, int id, bool tools, char *err, size_t errlen)
{
    /* An interactive bash or zsh gets the shell hook (escalation path 3),
     * from where the command will see it. */
    char **hook_argv = NULL, **hook_env = NULL;
    bool hooked = gets_shell_hook(srv, r, tools);
    if (hooked) {
        const char *dir = sbconf_unconfined(&srv->conf, r->profile) ? srv->hook_dir : SB_TOOLS_DIR "/shell";
        shellhook_apply(r->argv, dir, &hook_argv, &hook_env);
    }
    const char *const *base_env = server_session_env(r->agent, r->tty);
    size_t nb = 0, nh = 0;
    while (base_env[nb])
        nb++;
    while (hook_env && hook_env[nh])
        nh++;
    char **set_env = xcalloc(nb + nh + 4, sizeof *set_env);
    char *claude_env = NULL;
    for (size_t i = 0; i < nb; i++)
        set_env[i] = (char *)base_env[i];
    for (size_t i = 0; i < nh; i++)
        set_env[nb + i] = hook_env[i];
    /* A program that is neither an exec (one command already) nor a hooked
     * shell (its typed lines are the commands), an agent say: each of its
     * outermost bash -c is a command (path.bash; the snapshot module takes
     * a mark only from such a session). */
    if (tools && !hooked && !r->agent) {
        set_env[nb + nh] = "CORRAL_MARK_COMMANDS=1";
        set_env[nb + nh + 1] = "CORRAL_COMMAND="; /* none of a session it was started from */
        /* Claude Code's Bash tool does not read BASH_ENV; it sources this
         * file (one line: path.bash) in each command's bash. */
        if (srv->hook_dir) {
            const char *dir = sbconf_unconfined(&srv->conf, r->profile) ? srv->hook_dir : SB_TOOLS_DIR "/shell";
            claude_env = xasprintf("CLAUDE_ENV_FILE=%s/agent-env.sh", dir);
            set_env[nb + nh + 2] = claude_env;
        }
    }
    sbconf_tools t = {.argv = hook_argv, .set_env = set_env};
    if (tools) {
        t.corral_exe = srv->exe;
        t.shell_dir = srv->hook_dir;
    }
    sb_plan *plan = sbconf_compile(&srv->conf, r, &t, id, err, errlen);
    free(set_env);
    free(claude_env);
    shellhook_free(hook_argv, hook_env);
    return plan;
}

session_t *server_start_session(server_t *srv, const launch_spec *r, const char *client, char *err,
                                size_t errlen, char **warning)
{
    *warning = NULL;
    struct stat st;
    if (stat(r->cwd, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "working directory '%s' does not exist or is not a directory", r->cwd);
        return NULL;
    }
    int id = store_reserve_id(&srv->store);
    if (id < 0) {
        snprintf(err, errlen, "no free session id");
        return NULL;
    }
    sb_plan *plan = session_plan(srv, r, id, srv->exe != NULL, err, errlen);
    if (!plan) {
        store_release_id(&srv->store, id);
        return NULL;
    }
    int chan_server = -1, chan_child = -1;
    if (srv->exe) {
        chan_child = sesschan_create(srv, &chan_server, err, errlen);
        if (chan_child < 0) {
            sb_plan_free(plan);
            free(plan);
            store_release_id(&srv->store, id);
            return NULL;
        }
    }
    /* An agent's one-shot command starts from the workspace's pre-built
     * sandbox for this plan; a person's session, long-lived, from nothing. */
    prebuilt *warm = r->agent ? prebuilt_take(&srv->prebuilts, plan) : NULL;
    sb_layer_hold layer = {.fd = -1};
    if (warm)
        prebuilt_take_layer(warm, &layer);
    session_spec spec = {
        .base = warm ? prebuilt_base(warm) : NULL, .layer = &layer,
        .plan = plan, .name = r->name, .client = client, .kind = r->agent ? SESSION_EXEC : SESSION_USER,
        .tty = r->tty, .pinned = r->pinned, .rows = r->rows, .cols = r->cols,
        .lifetime_ms = r->agent ? srv->conf.exec_lifetime_ms : srv->conf.session_lifetime_ms,
        .scrollback = srv->conf.scrollback, .chan_fd = chan_child, .size = sizeof(server_session),
    };
    session_t *s = session_start(srv->loop, id, &spec, srv->state_dir, &server_session_hooks, srv, err, errlen);
    /* The layer was taken over (a launch without the base released it). */
    session_release_layer(srv->loop, &layer);
    if (s && warm)
        prebuilt_make_layer(warm, plan);
    char *workspace = xstrdup(plan->workspace);
    bool proxy_mode = !plan->unconfined && plan->net == SB_NET_PROXY;
    const char *net_mode = sb_net_name(plan->unconfined ? SB_NET_FULL : plan->net);
    /* What the sandbox protects only as well as it can (a .git symlink a
     * sandbox may have planted): the session's log keeps it, and the
     * requester is told with the other warnings. */
    buf_t warnings;
    buf_init(&warnings);
    for (size_t i = 0; s && i < plan->n_warnings; i++) {
        eventlog_write(s->events, "sandbox_warning", json_pack("{s:s}", "message", plan->warnings[i]), false);
        buf_printf(&warnings, "%s%s", warnings.len ? "\n" : "", plan->warnings[i]);
    }
    sb_plan_free(plan);
    free(plan);
    if (chan_child >= 0)
        close(chan_child);
    if (!s) {
        if (warm)
            prebuilt_put(warm);
        if (chan_server >= 0)
            close(chan_server);
        store_release_id(&srv->store, id);
        free(workspace);
        buf_free(&warnings);
        return NULL;
    }
    server_session *x = srv_session(s);
    link_init(&x->node);
    link_init(&x->kill_waits);
    link_init(&x->watchers);
    x->srv = srv;
    x->prebuilt = warm;
    x->policy = r->policy ? *r->policy : srv->policy;
    /* What a request from inside it keeps: its workspace and sandbox. */
    x->workspace = workspace;
    x->net_mode = net_mode;
    x->shell_hook = gets_shell_hook(srv, r, srv->exe != NULL);
    launch_sandbox_of(r, &x->sandbox);
    if (chan_server >= 0)
        sesschan_attach(srv, s, chan_server, proxy_mode);
    link_add(&srv->sessions, &x->node);
    TELL_MODULES(srv, session_started, s);
    server_touch(srv, s);
    prune_if_needed(srv);
    store_add(&srv->store, id, s);
    x->in_store = true;
    /* Codex counts the processes it stores, which are the running ones:
     * it drops a process once its exit is reported.  corral keeps exited
     * entries for review, so it counts the running ones. */
    size_t live = 0;
    for (size_t i = 0; i < store_len(&srv->store); i++)
        live += ((session_t *)srv->store.entries[i].item)->state == SESSION_RUNNING;
    if (live >= STORE_WARN)
        buf_printf(&warnings, "%sThe maximum number of unified exec processes you can keep open is %d and you "
                   "currently have %zu processes open. Reuse older processes or close them to prevent automatic "
                   "pruning of old processes",
                   warnings.len ? "\n" : "", STORE_WARN, live);
    *warning = warnings.len ? buf_steal(&warnings) : NULL;
    buf_free(&warnings);
    return s;
}

void server_kill_and_wait(server_t *srv, conn_t *c, json_t *id, session_t *s)
{
    (void)srv;
    kill_wait *k = xcalloc(1, sizeof *k);
    k->conn = conn_ref(c);
    k->id = id ? json_incref(id) : NULL;
    link_add(&srv_session(s)->kill_waits, &k->node);
    session_kill(s, "user");
}

