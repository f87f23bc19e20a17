/*
 * notify.c - [notify] command, run on the host when a request starts to
 * wait for a person.
 *
 * What a sandbox chose (a command, a justification, a host, a session's
 * name) reaches the program only in its environment (CORRAL_NOTIFY_*),
 * each value with its control and invisible characters made visible and
 * cut with a mark: never in its command line, and never through a shell
 * (the command's words are the config's, split when it was read, and
 * exec'd as they are).  Runs are rate-limited: at most one per interval;
 * what comes meanwhile is told in one run at the interval's end, if a
 * request still waits then.  One run at a time: a program that hangs is
 * not started again on top of itself.
 */
#include "config.h"

#include "gate/notify.h"
#include "gate/gate_server.h"
#include "protocol/approval_text.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* A value from a session is cut to this (the summary's line too). */
#define VALUE_MAX 2048

typedef struct notify_state {
    server_t *srv;
    uv_timer_t timer;  /* the end of the quiet interval, when something is held */
    uint64_t last_ms;  /* loop time of the last run; 0: none yet */
    json_t *held;      /* the latest request that came within the interval */
    size_t held_count; /* how many came */
    pid_t child;       /* the run still going; 0: none */
} notify_state;

static const char notify_key_tag;

static notify_state *N(server_t *srv)
{
    return server_attached(srv, &notify_key_tag);
}

static void push_env(char ***env, size_t *n, const char *name, const char *value)
{
    *env = xrealloc(*env, (*n + 2) * sizeof **env);
    (*env)[(*n)++] = xasprintf("%s=%s", name, value);
    (*env)[*n] = NULL;
}

/* The server's environment (a desktop notifier needs its session bus)
 * without CORRAL_NOTIFY_* of its own, then the request's. */
static char **child_env(const json_t *a, size_t waiting, size_t held)
{
    char **env = NULL;
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "CORRAL_NOTIFY_", 14) != 0) {
            env = xrealloc(env, (n + 2) * sizeof *env);
            env[n++] = xstrdup(*e);
            env[n] = NULL;
        }
    char *summary = approval_summary(a, VALUE_MAX);
    if (held > 1) {
        char *more = xasprintf("%zu requests came; the latest: %s", held, summary);
        free(summary);
        summary = more;
    }
    push_env(&env, &n, "CORRAL_NOTIFY_SUMMARY", summary);
    free(summary);
    static const struct {
        const char *var, *field;
    } fields[] = {
        {"CORRAL_NOTIFY_KIND", "kind"},         {"CORRAL_NOTIFY_SESSION_NAME", "session_name"},
        {"CORRAL_NOTIFY_CLIENT", "client"},     {"CORRAL_NOTIFY_COMMAND", "command"},
        {"CORRAL_NOTIFY_LINE", "line"},         {"CORRAL_NOTIFY_JUSTIFICATION", "justification"},
        {"CORRAL_NOTIFY_HOST", "host"},         {"CORRAL_NOTIFY_WORKSPACE", "workspace"},
        {"CORRAL_NOTIFY_CWD", "cwd"},
    };
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        if (!json_object_get(a, fields[i].field))
            continue;
        char *v = approval_field_visible(a, fields[i].field, VALUE_MAX);
        push_env(&env, &n, fields[i].var, v);
        free(v);
    }
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)json_integer_value(json_object_get(a, "id")));
    push_env(&env, &n, "CORRAL_NOTIFY_ID", num);
    snprintf(num, sizeof num, "%lld", (long long)json_integer_value(json_object_get(a, "session")));
    push_env(&env, &n, "CORRAL_NOTIFY_SESSION", num);
    snprintf(num, sizeof num, "%zu", waiting);
    push_env(&env, &n, "CORRAL_NOTIFY_WAITING", num);
    return env;
}

static void run(notify_state *st, const json_t *a, size_t waiting, size_t held)
{
    char *const *argv = server_conf(st->srv)->notify_argv;
    char **env = child_env(a, waiting, held);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    for (int fd = 0; fd < 3; fd++)
        posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
    /* Nothing of the server's (a session's terminal, the socket) stays
     * open in it, close-on-exec or not. */
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    /* Its own session (a signal to the server's group is not for it), no
     * signal blocked, and every disposition the default (the server
     * ignores SIGPIPE). */
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    strv_free(env);
    st->last_ms = uv_now(server_loop(st->srv));
    if (rc != 0) {
        server_log("notify: cannot run [notify] command = %s: %s", server_conf(st->srv)->notify_command,
                   strerror(rc));
        return;
    }
    st->child = pid;
    server_log("notify: request %lld: ran %s (pid %d)", (long long)json_integer_value(json_object_get(a, "id")),
               argv[0], (int)pid);
}

static void on_interval_over(uv_timer_t *timer)
{
    notify_state *st = timer->data;
    if (!st->held)
        return;
    uint64_t interval = server_conf(st->srv)->notify_interval_ms;
    if (st->child) { /* the last run has not ended: not one on top of it */
        uv_timer_start(&st->timer, on_interval_over, interval, 0);
        return;
    }
    size_t waiting = gate_server_waiting(st->srv);
    if (waiting) /* answered meanwhile: nobody needs telling */
        run(st, st->held, waiting, st->held_count);
    else
        server_log("notify: the %zu request%s held back were answered before the interval ended", st->held_count,
                   st->held_count == 1 ? "" : "s");
    json_decref(st->held);
    st->held = NULL;
    st->held_count = 0;
}

void notify_request(server_t *srv, const json_t *approval, size_t waiting)
{
    notify_state *st = N(srv);
    if (!st || !server_conf(srv)->notify_argv)
        return;
    uint64_t now = uv_now(server_loop(srv)), interval = server_conf(srv)->notify_interval_ms;
    if (!st->child && (!st->last_ms || now - st->last_ms >= interval)) {
        run(st, approval, waiting, 1);
        return;
    }
    json_decref(st->held);
    st->held = json_deep_copy(approval);
    st->held_count++;
    if (!uv_is_active((uv_handle_t *)&st->timer)) {
        uint64_t left = st->last_ms + interval > now ? st->last_ms + interval - now : interval;
        uv_timer_start(&st->timer, on_interval_over, left, 0);
    }
    server_log("notify: request %lld held back (one run per %llu s; it is told at the interval's end)",
               (long long)json_integer_value(json_object_get(approval, "id")),
               (unsigned long long)(interval / 1000));
}

static void free_state(void *p)
{
    notify_state *st = p;
    json_decref(st->held);
    free(st);
}

static void notify_start(server_t *srv)
{
    notify_state *st = xcalloc(1, sizeof *st);
    st->srv = srv;
    uv_timer_init(server_loop(srv), &st->timer);
    st->timer.data = st;
    server_attach(srv, &notify_key_tag, st, free_state);
}

static void notify_shutdown(server_t *srv)
{
    notify_state *st = N(srv);
    if (st)
        uv_close((uv_handle_t *)&st->timer, NULL);
}

static bool notify_reaped(server_t *srv, pid_t pid, int status)
{
    notify_state *st = N(srv);
    if (!st || pid != st->child)
        return false;
    st->child = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        server_log("notify: the [notify] command (pid %d) ended with %s %d", (int)pid,
                   WIFEXITED(status) ? "status" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return true;
}

const server_module notify_module = {
    .name = "notify",
    .start = notify_start,
    .shutdown = notify_shutdown,
    .reaped = notify_reaped,
};
