/*
 * snap_reader.c - see snap_reader.h.
 */
#include "config.h"

#include "snap/snap_reader.h"

#include "sandbox/launch.h"
#include "sandbox/plan.h"
#include "sandbox/profile.h"
#include "config/sbconf.h"
#include "sandbox/sbutil.h"
#include "snap/snap_wire.h"
#include "snap/snap_worker.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_STALL_MS 10000

struct snap_reader {
    snap_reader *next;   /* every reader not yet freed */
    sb_child child;      /* loop only */
    pid_t pid;           /* the init; 0 once reaped */
    int fd;              /* the server's end of the socket */
    snap_wire_inbox inbox; /* what it sent, read ahead */
    char **deny;         /* workspace-relative */
    size_t n_deny;
    bool stopped;        /* its owner let go: free once reaped */
    bool configured;
    bool failed;
    char why[400];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static snap_reader *all;
static bool external_reaper;
static int stall_ms = DEFAULT_STALL_MS;

void snap_reader_set_stall_ms(int ms)
{
    stall_ms = ms > 0 ? ms : DEFAULT_STALL_MS;
}

int snap_reader_stall_ms(void)
{
    return stall_ms;
}

int snap_reader_fd(const snap_reader *r)
{
    return r->fd;
}

snap_wire_inbox *snap_reader_inbox(snap_reader *r)
{
    return &r->inbox;
}

char *const *snap_reader_deny(const snap_reader *r, size_t *n)
{
    *n = r->n_deny;
    return r->deny;
}

bool snap_reader_configured(const snap_reader *r)
{
    return r->configured;
}

void snap_reader_set_configured(snap_reader *r)
{
    r->configured = true;
}

void snap_reader_fail(snap_reader *r, const char *why)
{
    pthread_mutex_lock(&lock);
    if (!r->failed) {
        r->failed = true;
        snprintf(r->why, sizeof r->why, "%s", why);
    }
    pthread_mutex_unlock(&lock);
    /* Whatever the reader does next, this conversation is over. */
    shutdown(r->fd, SHUT_RDWR);
}

bool snap_reader_failed(const snap_reader *r)
{
    pthread_mutex_lock(&lock);
    bool f = r->failed;
    pthread_mutex_unlock(&lock);
    return f;
}

const char *snap_reader_why(const snap_reader *r)
{
    return r->why;
}

const char *snap_reader_setup_error(snap_reader *r)
{
    sb_child_feed(&r->child);
    return r->child.error;
}

/* Is dir the home directory or above it? */
static bool holds_home(const char *dir, const char *home)
{
    size_t n = strlen(dir);
    return strcmp(dir, "/") == 0 || (strncmp(home, dir, n) == 0 && (home[n] == '\0' || home[n] == '/'));
}

snap_reader *snap_reader_launch(const snap_reader_spec *spec, char *err, size_t errlen)
{
    sb_profile prof;
    if (sb_profile_builtin(&prof, "read-only", err, errlen) < 0)
        return NULL;
    prof.net = SB_NET_OFF;
    prof.home_layer = SB_HOME_OFF;
    for (size_t i = 0; i < spec->n_deny; i++)
        sb_profile_add(&prof, spec->deny[i], SB_DENY);
    char *argv[] = {SB_TOOLS_DIR "/bin/corral", "__snapworker", (char *)spec->ws, NULL};
    char *empty_env[] = {NULL};
    sb_request req = {.argv = argv, .cwd = spec->ws, .workspace = spec->ws, .environ = empty_env,
                      .corral_exe = NULL};
    sbconf_request_dirs(&req, spec->ws);
    /* The home is hidden (the workspace, if it is in there, is bound over
     * the mask), unless the workspace holds the home itself. */
    if (!holds_home(spec->ws, req.home))
        sb_profile_add(&prof, "~", SB_DENY);
    /* corral's own executable, at the tools' place in every sandbox. */
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    const char *env_exe = getenv("CORRAL_EXE");
    if (env_exe && env_exe[0] == '/')
        snprintf(exe, sizeof exe, "%s", env_exe);
    else if (n > 0)
        exe[n] = '\0';
    else
        snprintf(exe, sizeof exe, "/proc/self/exe");
    req.corral_exe = exe;
    req.cache_dir = NULL;
    req.home_layers_dir = NULL;
    sb_plan plan;
    if (sb_plan_compile(&prof, &req, &plan, err, errlen) < 0) {
        sb_profile_free(&prof);
        return NULL;
    }
    sb_profile_free(&prof);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        snprintf(err, errlen, "cannot create a socket for the workspace's reader: %s", strerror(errno));
        sb_plan_free(&plan);
        return NULL;
    }
    snap_reader *r = xcalloc(1, sizeof *r);
    r->fd = sv[0];
    sw_inbox_init(&r->inbox, r->fd);
    r->deny = sb_plan_denied_below(&plan, spec->ws, &r->n_deny);
    /* A reader that stops reading must not wedge the server's writes. */
    struct timeval tv = {.tv_sec = stall_ms / 1000, .tv_usec = (stall_ms % 1000) * 1000};
    setsockopt(r->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    sb_stdio io = {.in = devnull, .out = devnull, .err = STDERR_FILENO, .tty = false, .chan = sv[1]};
    int rc = sb_launch(&plan, &io, false, &r->child, err, errlen);
    close(sv[1]);
    if (devnull >= 0)
        close(devnull);
    sb_plan_free(&plan);
    if (rc < 0) {
        sw_inbox_free(&r->inbox);
        close(r->fd);
        sb_list_free(r->deny, r->n_deny);
        free(r);
        return NULL;
    }
    r->pid = r->child.pid;
    pthread_mutex_lock(&lock);
    r->next = all;
    all = r;
    pthread_mutex_unlock(&lock);
    return r;
}

snap_reader *snap_reader_adopt(int fd, char **deny, size_t n_deny, bool configured)
{
    snap_reader *r = xcalloc(1, sizeof *r);
    r->fd = fd;
    sw_inbox_init(&r->inbox, fd);
    r->deny = deny;
    r->n_deny = n_deny;
    r->configured = configured;
    return r;
}

void snap_reader_disown(snap_reader *r)
{
    if (!r)
        return;
    sw_inbox_free(&r->inbox);
    close(r->fd);
    sb_list_free(r->deny, r->n_deny);
    free(r);
}

/* Unlink r from the list and free it (the lock held). */
static void destroy_locked(snap_reader *r)
{
    for (snap_reader **p = &all; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    sb_child_release(&r->child);
    sw_inbox_free(&r->inbox);
    close(r->fd);
    sb_list_free(r->deny, r->n_deny);
    free(r);
}

void snap_reader_external_reaper(bool yes)
{
    pthread_mutex_lock(&lock);
    external_reaper = yes;
    /* No handler reaps for this process any more (the server stopping):
     * readers let go of and killed, but not reaped yet, are reaped here,
     * or their sandboxes' cgroups would outlive the server. */
    for (snap_reader *r = all, *next; !yes && r; r = next) {
        next = r->next;
        if (r->stopped && r->pid > 0) {
            int st;
            while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR)
                ;
            r->pid = 0;
            destroy_locked(r);
        }
    }
    pthread_mutex_unlock(&lock);
}

void snap_reader_stop(snap_reader *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&lock);
    r->stopped = true;
    /* Not reaped yet, so the pid is still this process's: the whole
     * sandbox goes with its init (pid 1 of its namespace). */
    if (r->pid > 0)
        kill(r->pid, SIGKILL);
    if (!external_reaper && r->pid > 0) {
        int st;
        while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR)
            ;
        r->pid = 0;
    }
    if (r->pid == 0)
        destroy_locked(r);
    pthread_mutex_unlock(&lock);
}

bool snap_reader_reaped(pid_t pid, int status)
{
    (void)status;
    pthread_mutex_lock(&lock);
    snap_reader *r = all;
    while (r && r->pid != pid)
        r = r->next;
    if (r) {
        r->pid = 0;
        if (!r->failed) {
            r->failed = true;
            snprintf(r->why, sizeof r->why, "the workspace's reader ended");
        }
        shutdown(r->fd, SHUT_RDWR);
        if (r->stopped)
            destroy_locked(r);
    }
    pthread_mutex_unlock(&lock);
    return r != NULL;
}

void snap_reader_kill_all(void)
{
    pthread_mutex_lock(&lock);
    for (snap_reader *r = all; r; r = r->next) {
        if (r->pid > 0)
            kill(r->pid, SIGKILL);
        if (!r->failed) {
            r->failed = true;
            snprintf(r->why, sizeof r->why, "the server is stopping");
        }
        shutdown(r->fd, SHUT_RDWR);
    }
    pthread_mutex_unlock(&lock);
}
