/*
 * sessdir.c - see sessdir.h.
 */
#include "config.h"

#include "record/sessdir.h"

#include "base/paths.h"
#include "base/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A session writes its created event as it starts: a directory without
 * one that is older than this never became a session. */
#define NEVER_STARTED_S 60.0
/* The init starts between the session's creation and its created event;
 * clocks of /proc are whole seconds (btime) plus ticks. */
#define START_SLACK_S 2.0
/* Directories nested deeper than this are not removed (corral makes none). */
#define MAX_DEPTH 16

bool sessdir_name_ok(const char *name)
{
    size_t i = 0, digits = 0;
    while (isdigit((unsigned char)name[i]))
        i++, digits++;
    if (digits == 0 || digits > 10)
        return false;
    if (name[i] == '\0')
        return true;
    if (name[i++] != '.')
        return false;
    digits = 0;
    while (isdigit((unsigned char)name[i]))
        i++, digits++;
    return digits > 0 && digits <= 10 && name[i] == '\0';
}

char *sessdir_root(void)
{
    char *state = paths_state_dir();
    char *root = xasprintf("%s/sessions", state);
    free(state);
    return root;
}

double sessdir_parse_time(const char *iso)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *rest = iso ? strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!rest)
        return -1;
    double frac = 0;
    if (*rest == '.') {
        double scale = 0.1;
        for (rest++; isdigit((unsigned char)*rest); rest++, scale /= 10)
            frac += (*rest - '0') * scale;
    }
    if (strcmp(rest, "Z") != 0)
        return -1;
    time_t t = timegm(&tm);
    return t == (time_t)-1 ? -1 : (double)t + frac;
}

/* ---- events.jsonl ---------------------------------------------------------------- */

/* Whether line has "event": "NAME" for a NAME in only (JSON's spaces
 * allowed around the colon; the line is parsed afterwards, which decides). */
static bool wanted(const char *line, const char *const *only)
{
    if (!only)
        return true;
    for (const char *p = strstr(line, "\"event\""); p; p = strstr(p + 1, "\"event\"")) {
        const char *q = p + 7;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q++ != ':')
            continue;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q++ != '"')
            continue;
        for (const char *const *o = only; *o; o++) {
            size_t n = strlen(*o);
            if (strncmp(q, *o, n) == 0 && q[n] == '"')
                return true;
        }
    }
    return false;
}

int sessdir_read_events(const char *path, uint64_t limit, const char *const *only, sessdir_event_fn fn, void *user,
                        sessdir_read_stats *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    uint64_t used = 0;
    ssize_t n;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
        if (limit && used + (uint64_t)n > limit)
            break; /* past what the caller took of a growing file */
        used += (uint64_t)n;
        if (line[n - 1] != '\n') {
            st->torn = true; /* a crash in the middle of a write: the rest of the line never came */
            break;
        }
        st->lines++;
        if (!wanted(line, only))
            continue;
        json_error_t jerr;
        json_t *ev = json_loadb(line, (size_t)n, 0, &jerr);
        if (!json_is_object(ev)) {
            json_decref(ev);
            if (!st->first_bad)
                st->first_bad = st->lines;
            st->bad++;
            continue;
        }
        const char *name = json_string_value(json_object_get(ev, "event"));
        rc = fn(ev, name ? name : "", user);
        json_decref(ev);
    }
    if (ferror(f)) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        rc = -1;
    }
    free(line);
    fclose(f);
    return rc;
}

/* ---- probing ----------------------------------------------------------------------- */

static int probe_event(json_t *ev, const char *event, void *user)
{
    sessdir_probe *p = user;
    if (strcmp(event, "created") == 0) {
        json_t *id = json_object_get(ev, "session"), *pid = json_object_get(ev, "pid");
        if (json_is_integer(id))
            p->id = (int)json_integer_value(id);
        if (json_is_integer(pid) && json_integer_value(pid) > 0)
            p->pid = (long)json_integer_value(pid);
        double t = sessdir_parse_time(json_string_value(json_object_get(ev, "time")));
        if (t > 0)
            p->created = t;
    } else if (strcmp(event, "exited") == 0) {
        p->exited = true;
    }
    return 0;
}

/* The "timestamp" of output.cast's header line. */
static long long cast_start(int at)
{
    int fd = openat(at, "output.cast", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    char head[4096];
    ssize_t n = read(fd, head, sizeof head - 1);
    close(fd);
    if (n <= 0)
        return -1;
    head[n] = '\0';
    char *nl = strchr(head, '\n');
    if (!nl)
        return -1;
    json_t *h = json_loadb(head, (size_t)(nl - head), 0, NULL);
    json_t *ts = json_object_get(h, "timestamp");
    long long v = json_is_integer(ts) ? (long long)json_integer_value(ts) : -1;
    json_decref(h);
    return v;
}

static double mtime_of(const struct stat *st)
{
    return (double)st->st_mtim.tv_sec + (double)st->st_mtim.tv_nsec / 1e9;
}

int sessdir_probe_dir(const char *root, const char *name, sessdir_probe *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->id = atoi(name);
    p->cast_start = -1;
    char *path = xasprintf("%s/%s", root, name);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(path);
        return -1;
    }
    p->dev = st.st_dev;
    p->ino = st.st_ino;
    p->last_change = mtime_of(&st);
    DIR *d = fdopendir(dup(fd));
    struct dirent *e;
    while (d && (e = readdir(d))) {
        struct stat fst;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            fstatat(fd, e->d_name, &fst, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (mtime_of(&fst) > p->last_change)
            p->last_change = mtime_of(&fst);
    }
    if (d)
        closedir(d);
    p->bytes = sessdir_du(fd, ".");
    p->cast_start = cast_start(fd);
    struct stat est;
    p->events_bytes = fstatat(fd, "events.jsonl", &est, AT_SYMLINK_NOFOLLOW) == 0 ? (long long)est.st_size : -1;
    close(fd);
    free(path);
    return 0;
}

void sessdir_probe_events(const char *root, sessdir_probe *p)
{
    if (p->events_read)
        return;
    p->events_read = true;
    char *events = xasprintf("%s/%s/events.jsonl", root, p->name);
    static const char *const only[] = {"created", "exited", NULL};
    sessdir_read_stats rs;
    char rerr[300];
    /* Unreadable or missing: nothing is proven by it (probe_event never ran). */
    sessdir_read_events(events, 0, only, probe_event, p, &rs, rerr, sizeof rerr);
    free(events);
}

/* When process pid started (seconds since the epoch), or -1. */
static double process_start(long pid, char *state)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *close_paren = strrchr(buf, ')');
    if (!close_paren)
        return -1;
    /* After the name: state (field 3), ..., starttime (field 22). */
    char *save = NULL, *tok = strtok_r(close_paren + 1, " ", &save);
    unsigned long long ticks = 0;
    for (int field = 3; tok; field++, tok = strtok_r(NULL, " ", &save)) {
        if (field == 3)
            *state = tok[0];
        if (field == 22) {
            ticks = strtoull(tok, NULL, 10);
            break;
        }
    }
    if (!tok)
        return -1;
    f = fopen("/proc/stat", "re");
    if (!f)
        return -1;
    long long btime = -1;
    char line[256];
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "btime %lld", &btime) == 1)
            break;
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    if (btime < 0 || hz <= 0)
        return -1;
    return (double)btime + (double)ticks / (double)hz;
}

bool sessdir_proven_ended(const sessdir_probe *p, double now, char *why, size_t whylen)
{
    if (p->exited) {
        snprintf(why, whylen, "its end is recorded");
        return true;
    }
    if (!p->created && p->events_bytes > 0) {
        snprintf(why, whylen, "its events.jsonl does not say when it started or ended");
        return false;
    }
    if (!p->created) {
        if (now - p->last_change > NEVER_STARTED_S) {
            snprintf(why, whylen, "it never started (no events)");
            return true;
        }
        snprintf(why, whylen, "it is being created");
        return false;
    }
    if (!p->pid) {
        snprintf(why, whylen, "its end is not recorded and its events name no process");
        return false;
    }
    if (kill((pid_t)p->pid, 0) < 0 && errno == ESRCH) {
        snprintf(why, whylen, "its end is not recorded, but its process (pid %ld) is gone", p->pid);
        return true;
    }
    char state = '?';
    double started = process_start(p->pid, &state);
    if (state == 'Z' || state == 'X') {
        snprintf(why, whylen, "its end is not recorded, but its process (pid %ld) is gone", p->pid);
        return true;
    }
    if (started > 0 && started > p->created + START_SLACK_S) {
        snprintf(why, whylen, "its end is not recorded, but its process (pid %ld) is gone (the pid is another "
                 "process's now)", p->pid);
        return true;
    }
    snprintf(why, whylen, "its end is not recorded and its process (pid %ld) still runs", p->pid);
    return false;
}

/* ---- size and removal ----------------------------------------------------------------- */

static uint64_t du_at(int at, const char *name, int depth)
{
    struct stat st;
    if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return 0;
    uint64_t total = (uint64_t)st.st_blocks * 512;
    if (!S_ISDIR(st.st_mode) || depth > MAX_DEPTH)
        return total;
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return total;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            total += du_at(dirfd(d), e->d_name, depth + 1);
    closedir(d);
    return total;
}

uint64_t sessdir_du(int at, const char *name)
{
    return du_at(at, name, 0);
}

static int remove_at(int at, const char *name, int depth, char *err, size_t errlen)
{
    if (unlinkat(at, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM) {
        snprintf(err, errlen, "cannot remove %s: %s", name, strerror(errno));
        return -1;
    }
    if (depth > MAX_DEPTH) {
        snprintf(err, errlen, "cannot remove %s: nested too deep", name);
        return -1;
    }
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        snprintf(err, errlen, "cannot open %s: %s", name, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            rc = remove_at(dirfd(d), e->d_name, depth + 1, err, errlen);
    closedir(d);
    if (rc == 0 && unlinkat(at, name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
        snprintf(err, errlen, "cannot remove %s: %s", name, strerror(errno));
        rc = -1;
    }
    return rc;
}

int sessdir_remove(const char *root, const char *name, char *err, size_t errlen)
{
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", root, strerror(errno));
        return -1;
    }
    struct stat st;
    int rc = 0;
    if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (errno != ENOENT) {
            snprintf(err, errlen, "cannot look at %s/%s: %s", root, name, strerror(errno));
            rc = -1;
        }
    } else if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s/%s is not a directory: left alone", root, name);
        rc = -1;
    } else {
        char inner[400];
        rc = remove_at(fd, name, 0, inner, sizeof inner);
        if (rc < 0)
            snprintf(err, errlen, "%s/%s: %s", root, name, inner);
    }
    close(fd);
    return rc;
}
