/*
 * cli_export.c - corral export (docs/corral.1, docs/formats.md "corral
 * export"): a session's record as one .tar.gz to share a review.  The verb
 * is one entry (cli_verb.h) that cli.c lists.
 *
 * The files are gathered in a private directory made next to the archive
 * (the same file system, so a large recording is not copied to a small
 * /tmp): the session's events.jsonl and output.cast (a running session's
 * up to their last complete line), the records of approvals.jsonl about
 * it, one patch per command from the server (the same request corral diff
 * makes; for a command of a session the server no longer has, by the two
 * snapshot ids its record names) and SUMMARY.md.  tar, run with an argv
 * and never a shell, writes them to FILE.tmp, which is renamed to FILE
 * only when it is complete; FILE is never replaced without --force.
 */
#include "config.h"

#include "cli/cli_verb.h"
#include "protocol/client.h"
#include "base/exitcode.h"
#include "record/export_summary.h"
#include "base/paths.h"
#include "protocol/proto.h"
#include "base/quote.h"
#include "cli/cli_records.h"
#include "record/sessdir.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define COPY_CHUNK (1u << 20)
/* Progress is shown once a step has taken this long. */
#define PROGRESS_AFTER_S 1.0
#define CUT_MARK "\n... (cut at "

extern char **environ;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

/* A message on stderr.  It may quote the session's files (its log, the
 * server's answers about its commands) or paths: made visible here, the
 * one place export prints one. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char *v = quote_text_visible(msg, strlen(msg));
    fprintf(stderr, "corral: %s\n", v);
    free(v);
}


/* ---- progress on stderr, for the steps that take a while ------------------------------- */

typedef struct progress {
    double start, last;
    bool shown;
} progress;

static void progress_begin(progress *p)
{
    p->start = now_sec();
    p->last = 0;
    p->shown = false;
}

static void progress_note(progress *p, const char *what, uint64_t done, uint64_t total)
{
    double now = now_sec();
    bool tty = isatty(STDERR_FILENO);
    if (now - p->start < PROGRESS_AFTER_S || now - p->last < (tty ? 0.25 : 2.0))
        return;
    p->last = now;
    p->shown = true;
    char d[32], t[32];
    format_bytes((double)done, false, d, sizeof d);
    format_bytes((double)total, false, t, sizeof t);
    if (total)
        fprintf(stderr, "%scorral: %s: %s of %s%s", tty ? "\r" : "", what, d, t, tty ? "\033[K" : "\n");
    else
        fprintf(stderr, "%scorral: %s%s", tty ? "\r" : "", what, tty ? "\033[K" : "\n");
}

static void progress_end(progress *p)
{
    if (p->shown && isatty(STDERR_FILENO))
        fputc('\n', stderr);
    p->shown = false;
}

/* ---- copying the session's files ------------------------------------------------------------ */

/* Copy src to dst.  growing: the session runs, so the file may end in the
 * middle of a line being written: only complete lines are taken.  Returns
 * the bytes copied, or -1 with err. */
static long long copy_file(const char *src, const char *dst, bool growing, const char *what, char *err, size_t errlen)
{
    int in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in < 0) {
        snprintf(err, errlen, "cannot read %s: %s", src, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is not a regular file", src);
        close(in);
        return -1;
    }
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (out < 0) {
        snprintf(err, errlen, "cannot create %s: %s", dst, strerror(errno));
        close(in);
        return -1;
    }
    /* What is there now: a file that grows meanwhile is taken as it was. */
    uint64_t size = (uint64_t)st.st_size, done = 0, last_nl = 0;
    char *buf = xmalloc(COPY_CHUNK);
    progress p;
    progress_begin(&p);
    long long rc = 0;
    while (done < size && !interrupted) {
        size_t want = size - done < COPY_CHUNK ? (size_t)(size - done) : COPY_CHUNK;
        ssize_t n = read(in, buf, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n < 0) {
                snprintf(err, errlen, "cannot read %s: %s", src, strerror(errno));
                rc = -1;
            }
            break;
        }
        for (ssize_t i = n; i-- > 0;)
            if (buf[i] == '\n') {
                last_nl = done + (uint64_t)i + 1;
                break;
            }
        int w = write_all(out, buf, (size_t)n);
        if (w < 0) {
            snprintf(err, errlen, "cannot write %s: %s", dst, strerror(-w));
            rc = -1;
            break;
        }
        done += (uint64_t)n;
        progress_note(&p, what, done, size);
    }
    progress_end(&p);
    free(buf);
    close(in);
    if (rc == 0 && interrupted) {
        snprintf(err, errlen, "interrupted");
        rc = -1;
    }
    if (rc == 0 && growing && last_nl < done && ftruncate(out, (off_t)last_nl) == 0)
        done = last_nl;
    if (close(out) < 0 && rc == 0) {
        snprintf(err, errlen, "cannot write %s: %s", dst, strerror(errno));
        rc = -1;
    }
    if (rc < 0)
        unlink(dst); /* no half a file in the archive */
    return rc < 0 ? -1 : (long long)done;
}

/* ---- patches from the server ------------------------------------------------------------------ */

typedef struct server_link {
    client_t c;
    bool up;
    bool started;  /* a server was started (or tried) for the patches */
    char err[1024];
} server_link;

static bool link_up(server_link *s, bool autostart)
{
    const char *client = getenv("CORRAL_CLIENT");
    s->up = client_connect_lazy(&s->c, client && *client ? client : "user", autostart, s->err, sizeof s->err) == 0;
    return s->up;
}

/* A call; NULL with why in err (a connection failure or an error reply).
 * Without a server, one is started for the first call that needs it (the
 * patches are rendered by the server). */
static json_t *ask(server_link *s, json_t *req, char *err, size_t errlen)
{
    if (!s->up && !s->started) {
        s->started = true;
        if (!link_up(s, true))
            say("warning: no patches: %s", s->err);
    }
    if (!s->up) {
        json_decref(req);
        snprintf(err, errlen, "%s", s->err);
        return NULL;
    }
    json_t *r = client_call(&s->c, req, NULL, NULL, err, errlen);
    if (!r) {
        s->up = false;
        snprintf(s->err, sizeof s->err, "%s", err);
        return NULL;
    }
    char buf[1024];
    const char *msg = client_error_message(r, buf, sizeof buf);
    json_t *m = json_object_get(json_object_get(r, "error"), "message");
    if (msg) {
        snprintf(err, errlen, "%s", json_is_string(m) ? json_string_value(m) : msg);
        json_decref(r);
        return NULL;
    }
    return r;
}

/* What the server says of the session now: whether it has it, and
 * whether it runs (and so is exported as far as it got). */
static void server_state(server_link *s, export_session *es)
{
    char err[1100];
    json_t *ls = ask(s, json_pack("{s:s}", "cmd", "ls"), err, sizeof err);
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(ls, "sessions"), i, x) {
        if (json_integer_value(json_object_get(x, "id")) == es->id) {
            const char *state = json_string_value(json_object_get(x, "state"));
            es->in_server = true;
            es->running = state && strcmp(state, "running") == 0;
        }
    }
    json_decref(ls);
}

/* The commands the server knows that the copied events do not have yet. */
static void merge_commands(server_link *s, export_session *es)
{
    char err[1100];
    json_t *r = ask(s, json_pack("{s:s, s:i}", "cmd", "commands", "session", es->id), err, sizeof err);
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(r, "commands"), i, x) {
        json_t *n = json_object_get(x, "command");
        if (!json_is_integer(n) || json_integer_value(n) < 1 || json_integer_value(n) > INT32_MAX)
            continue;
        export_cmd *c = export_cmd_get(es, (int)json_integer_value(n));
        if (c->record)
            continue;
        const char *line = json_string_value(json_object_get(x, "line"));
        free(c->line);
        c->line = xstrdup(line ? line : "");
        /* Ended after the events were copied: its record is the server's. */
        if (json_object_get(x, "after") && json_object_get(x, "counts"))
            c->record = json_incref(x);
    }
    json_decref(r);
}

/* cmd-N.patch for command c; c->patched, or c->missing says why not. */
static void fetch_patch(server_link *s, export_session *es, export_cmd *c, const char *top, bool live)
{
    json_t *r = c->record;
    const char *ws = json_string_value(json_object_get(r, "workspace")),
               *before = json_string_value(json_object_get(r, "before")),
               *after = json_string_value(json_object_get(r, "after"));
    json_t *req;
    if (ws && before && after)
        req = json_pack("{s:s, s:s, s:s, s:s, s:s}", "cmd", "diff", "workspace", ws, "before", before, "after", after,
                        "format", "patch");
    else if (live && !r)
        req = json_pack("{s:s, s:i, s:i, s:s}", "cmd", "diff", "session", es->id, "command", c->n, "format", "patch");
    else {
        const char *why = json_string_value(json_object_get(r, "error"));
        c->missing = xasprintf("%s%s", why ? "no diff: " : "its snapshots are not recorded",
                               why ? why : (r ? "" : " (it never ended)"));
        return;
    }
    char err[1100];
    json_t *reply = ask(s, req, err, sizeof err);
    if (!reply) {
        c->missing = xstrdup(err);
        return;
    }
    const char *text = json_string_value(json_object_get(reply, "text"));
    const char *b64 = json_string_value(json_object_get(reply, "text_b64"));
    size_t len = text ? strlen(text) : 0;
    char *raw = b64 ? base64_decode(b64, strlen(b64), &len) : NULL;
    const char *bytes = raw ? raw : text ? text : "";
    char *path = xasprintf("%s/cmd-%d.patch", top, c->n);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    int w = fd < 0 ? -errno : write_all(fd, bytes, len);
    if (fd >= 0 && close(fd) < 0 && w == 0)
        w = -errno;
    if (w < 0) {
        c->missing = xasprintf("cannot write %s: %s", path, strerror(-w));
    } else {
        c->patched = true;
        c->patch_bytes = len;
        /* The server cuts a patch that is too large (a marked cut at its end). */
        for (size_t i = len; i-- > 0 && len - i < 64;)
            if (strncmp(bytes + i, CUT_MARK, strlen(CUT_MARK)) == 0 && i + strlen(CUT_MARK) <= len)
                c->cut = true;
    }
    free(path);
    free(raw);
    json_decref(reply);
}

/* ---- the archive ---------------------------------------------------------------------------- */

/* tar, with an argv: the staging directory's one directory, gzip'd, to fd.
 * 0, or -1 with err. */
static int run_tar(const char *staging, const char *dir_name, int fd, char *err, size_t errlen)
{
    char *const argv[] = {"tar", "--create", "--gzip", "--file=-", "--directory", (char *)staging,
                          "--owner=0", "--group=0", "--numeric-owner", "--sort=name", "--", (char *)dir_name, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, "tar", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        snprintf(err, errlen, "cannot run tar: %s (corral export writes the archive with tar: install it)",
                 strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "cannot wait for tar: %s", strerror(errno));
            return -1;
        }
    if (interrupted) {
        snprintf(err, errlen, "interrupted");
        return -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(err, errlen, "tar failed (%s %d; its message is above)",
                 WIFEXITED(status) ? "status" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return -1;
    }
    return 0;
}

/* tmp -> out; without force, never over a file that appeared meanwhile. */
static int publish(const char *tmp, const char *out, bool force, char *err, size_t errlen)
{
    if (force) {
        if (rename(tmp, out) == 0)
            return 0;
    } else {
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_NOREPLACE) == 0)
            return 0;
        if (errno == EINVAL || errno == ENOSYS) { /* a file system without it */
            if (link(tmp, out) == 0) {
                unlink(tmp);
                return 0;
            }
        }
        if (errno == EEXIST) {
            snprintf(err, errlen, "%s appeared while the archive was written: give --force to replace it", out);
            return -1;
        }
    }
    snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, out, strerror(errno));
    return -1;
}

/* ---- the verb ------------------------------------------------------------------------------- */

typedef struct export_job {
    const char *name;    /* the session directory's name */
    char *src;           /* its path */
    const char *out;
    bool force;
    char *staging;       /* the private directory */
    char *top;           /* staging/corral-NAME */
    char *dir_name;      /* corral-NAME */
    char *tmp;           /* out.tmp */
    bool tmp_made;
    long long events_bytes, cast_bytes;
    long approval_records;
    export_session es;
} export_job;

static void job_cleanup(export_job *j)
{
    if (j->staging) {
        char *slash = strrchr(j->staging, '/');
        char err[400];
        *slash = '\0';
        if (sessdir_remove(j->staging, slash + 1, err, sizeof err) < 0)
            say("%s", err);
        *slash = '/';
    }
    if (j->tmp_made && j->tmp)
        unlink(j->tmp);
    free(j->src);
    free(j->staging);
    free(j->top);
    free(j->dir_name);
    free(j->tmp);
    export_session_free(&j->es);
}

static int fail(export_job *j, const char *fmt, const char *a, const char *b)
{
    char msg[2048];
    snprintf(msg, sizeof msg, fmt, a, b);
    say("%s", msg);
    job_cleanup(j);
    return 1;
}

static int gather(export_job *j, server_link *s)
{
    char err[1200];
    /* Only the session named by its plain id can be one the server has. */
    bool in_server = false, running = false;
    if (s->up && strchr(j->name, '.') == NULL) {
        export_session probe;
        memset(&probe, 0, sizeof probe);
        probe.id = atoi(j->name);
        server_state(s, &probe);
        in_server = probe.in_server;
        running = probe.running;
    }
    /* A running session's files grow: only their complete lines are taken.
     * An ended one's are taken as they are, a torn last line included. */
    char *from = xasprintf("%s/events.jsonl", j->src), *to = xasprintf("%s/events.jsonl", j->top);
    j->events_bytes = copy_file(from, to, running, "copying events.jsonl", err, sizeof err);
    bool ok = j->events_bytes >= 0 && export_read(&j->es, j->name, to, 0, err, sizeof err) == 0;
    free(from);
    free(to);
    if (!ok) {
        say("session %s: %s", j->name, err);
        return -1;
    }
    j->es.in_server = in_server;
    j->es.running = running;
    if (j->es.stats.torn)
        say("warning: %s/events.jsonl ends in a torn line (a crash in the middle of a write): left out of SUMMARY.md",
            j->src);
    if (j->es.stats.bad)
        say("warning: %s/events.jsonl has %ld line%s that %s not JSON (the first: line %ld): left out of SUMMARY.md",
            j->src, j->es.stats.bad, j->es.stats.bad == 1 ? "" : "s", j->es.stats.bad == 1 ? "is" : "are",
            j->es.stats.first_bad);
    if (in_server)
        merge_commands(s, &j->es);
    from = xasprintf("%s/output.cast", j->src);
    to = xasprintf("%s/output.cast", j->top);
    j->cast_bytes = copy_file(from, to, running, "copying output.cast", err, sizeof err);
    free(from);
    free(to);
    if (j->cast_bytes < 0) {
        if (interrupted)
            return -1;
        say("warning: session %s: %s: the archive has no output.cast", j->name, err);
    }
    /* The records of the shared approvals.jsonl about this session. */
    char *state = paths_state_dir();
    from = xasprintf("%s/approvals.jsonl", state);
    to = xasprintf("%s/approvals.jsonl", j->top);
    free(state);
    FILE *f = fopen(to, "wxe");
    j->approval_records = f ? export_approvals(&j->es, from, f, err, sizeof err) : -1;
    if (!f)
        snprintf(err, sizeof err, "cannot create %s: %s", to, strerror(errno));
    if (f && fclose(f) != 0 && j->approval_records >= 0) {
        snprintf(err, sizeof err, "cannot write %s: %s", to, strerror(errno));
        j->approval_records = -1;
    }
    free(from);
    free(to);
    if (j->approval_records < 0) {
        say("%s", err);
        return -1;
    }
    /* One patch per command. */
    progress p;
    progress_begin(&p);
    bool live = j->es.in_server;
    for (size_t i = 0; i < j->es.n_cmds && !interrupted; i++) {
        char what[64];
        snprintf(what, sizeof what, "patch %zu of %zu", i + 1, j->es.n_cmds);
        progress_note(&p, what, 0, 0);
        fetch_patch(s, &j->es, &j->es.cmds[i], j->top, live);
    }
    progress_end(&p);
    if (interrupted)
        return -1;
    for (size_t i = 0; i < j->es.n_cmds; i++)
        if (j->es.cmds[i].missing)
            say("session %s, command %d: no patch: %s", j->name, j->es.cmds[i].n, j->es.cmds[i].missing);
    to = xasprintf("%s/SUMMARY.md", j->top);
    f = fopen(to, "wxe");
    if (f)
        export_summary_write(&j->es, f, wall_sec(), j->approval_records);
    if (!f || fclose(f) != 0) {
        say("cannot write %s: %s", to, strerror(errno));
        free(to);
        return -1;
    }
    free(to);
    return 0;
}

static void report(const export_job *j, const char *out)
{
    char h[32];
    printf("%s/\n", j->dir_name);
    format_bytes((double)(uint64_t)j->events_bytes, false, h, sizeof h);
    printf("  %-16s %ld events, %s\n", "events.jsonl", j->es.events, h);
    if (j->cast_bytes >= 0) {
        format_bytes((double)(uint64_t)j->cast_bytes, false, h, sizeof h);
        printf("  %-16s %s\n", "output.cast", h);
    }
    printf("  %-16s %ld record%s\n", "approvals.jsonl", j->approval_records, j->approval_records == 1 ? "" : "s");
    size_t patches = 0;
    for (size_t i = 0; i < j->es.n_cmds; i++) {
        const export_cmd *c = &j->es.cmds[i];
        char name[32];
        snprintf(name, sizeof name, "cmd-%d.patch", c->n);
        if (!c->patched) {
            printf("  %-16s none (see above)\n", name);
            continue;
        }
        patches++;
        json_t *n = json_object_get(c->record, "counts");
        format_bytes((double)c->patch_bytes, false, h, sizeof h);
        if (n)
            printf("  %-16s +%lld ~%lld -%lld, %s%s\n", name, (long long)json_integer_value(json_object_get(n, "added")),
                   (long long)(json_integer_value(json_object_get(n, "modified")) +
                               json_integer_value(json_object_get(n, "typechanged"))),
                   (long long)json_integer_value(json_object_get(n, "deleted")), h, c->cut ? " (cut: too large)" : "");
        else
            printf("  %-16s %s (so far: the command runs)\n", name, h);
    }
    printf("  SUMMARY.md\n");
    struct stat st;
    format_bytes((double)(stat(out, &st) == 0 ? (uint64_t)st.st_size : 0), false, h, sizeof h);
    char *shown = quote_text_visible(out, strlen(out));
    printf("wrote %s (%s): session %s%s, %zu command%s, %zu patch%s, %ld approval record%s\n", shown, h, j->name,
           j->es.running ? " (running)" : "", j->es.n_cmds, j->es.n_cmds == 1 ? "" : "s", patches,
           patches == 1 ? "" : "es", j->approval_records, j->approval_records == 1 ? "" : "s");
    free(shown);
}

static int verb_export(const cli_verb *v, int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"force", no_argument, NULL, 'f'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    export_job j;
    memset(&j, 0, sizeof j);
    int ch;
    while ((ch = getopt_long(argc, argv, "o:fh", opts, NULL)) != -1) {
        if (ch == 'o')
            j.out = optarg;
        else if (ch == 'f')
            j.force = true;
        else if (ch == 'h')
            return cli_print_help(v);
        else
            return cli_option_usage(v);
    }
    if (optind >= argc)
        return cli_usage_error(v, "which session? (corral ls lists them)");
    if (argc - optind > 1)
        return cli_usage_error(v, "unexpected argument '%s'", argv[optind + 1]);
    j.name = argv[optind];
    if (!sessdir_name_ok(j.name))
        return cli_usage_error(v, "'%s' is not a session id (a number, as corral ls shows it; ID.N for an older "
                                  "session that had the same id)", j.name);
    if (j.out && (!*j.out || strcmp(j.out, "-") == 0))
        return cli_usage_error(v, "give a file name to -o (the archive is not written to standard output)");
    char default_out[64];
    snprintf(default_out, sizeof default_out, "corral-%s.tar.gz", j.name);
    if (!j.out)
        j.out = default_out;

    if (cli_records_remote()) {
        char err[1024];
        if (cli_records_fetch(j.name, true, err, sizeof err) < 0)
            return fail(&j, "%s%s", err, "");
    }
    char *root = sessdir_root();
    j.src = xasprintf("%s/%s", root, j.name);
    free(root);
    struct stat st;
    if (lstat(j.src, &st) < 0 || !S_ISDIR(st.st_mode))
        return fail(&j, "no recorded session %s (there is no %s: corral ls lists the server's sessions; an ended "
                        "session's record stays until retention removes it)", j.name, j.src);
    if (lstat(j.out, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return fail(&j, "%s is a directory: give a file name to -o%s", j.out, "");
        if (!j.force)
            return fail(&j, "%s exists: give --force to replace it, or another -o FILE%s", j.out, "");
    }
    /* The private directory, beside the archive. */
    char *slash = strrchr(j.out, '/');
    char *outdir = slash ? xstrndup(j.out, slash == j.out ? 1 : (size_t)(slash - j.out)) : xstrdup(".");
    j.staging = xasprintf("%s/.corral-export-XXXXXX", outdir);
    if (!mkdtemp(j.staging)) {
        int e = errno;
        free(j.staging);
        j.staging = NULL;
        char why[300];
        snprintf(why, sizeof why, "%s", strerror(e));
        int rc = fail(&j, "cannot write in %s: %s (give -o a path in a directory you can write)", outdir, why);
        free(outdir);
        return rc;
    }
    free(outdir);
    j.dir_name = xasprintf("corral-%s", j.name);
    j.top = xasprintf("%s/%s", j.staging, j.dir_name);
    if (mkdir(j.top, 0700) < 0)
        return fail(&j, "cannot create %s: %s", j.top, strerror(errno));

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    /* A server that runs now knows whether the session does; without one,
     * it does not run (sessions end with their server). */
    server_link s;
    memset(&s, 0, sizeof s);
    link_up(&s, false);
    int rc = gather(&j, &s);
    if (s.up)
        client_close(&s.c);
    if (rc < 0) {
        if (interrupted)
            fprintf(stderr, "corral: interrupted: nothing was written\n");
        job_cleanup(&j);
        return 1;
    }

    j.tmp = xasprintf("%s.tmp", j.out);
    int fd = open(j.tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return fail(&j, "cannot create %s: %s", j.tmp, strerror(errno));
    j.tmp_made = true;
    char err[1200];
    if ((uint64_t)(j.cast_bytes > 0 ? j.cast_bytes : 0) + (uint64_t)j.events_bytes > (64u << 20))
        say("compressing %s ...", j.dir_name);
    rc = run_tar(j.staging, j.dir_name, fd, err, sizeof err);
    if (rc == 0 && fsync(fd) < 0) {
        snprintf(err, sizeof err, "cannot write %s: %s", j.tmp, strerror(errno));
        rc = -1;
    }
    if (close(fd) < 0 && rc == 0) {
        snprintf(err, sizeof err, "cannot write %s: %s", j.tmp, strerror(errno));
        rc = -1;
    }
    if (rc == 0)
        rc = publish(j.tmp, j.out, j.force, err, sizeof err);
    if (rc < 0)
        return fail(&j, "session %s: %s", j.name, err);
    j.tmp_made = false;
    report(&j, j.out);
    job_cleanup(&j);
    return 0;
}

const cli_verb cli_verb_export = {
    .name = "export",
    .usage = "export [-o FILE] [--force] SESSION",
    .help = "Write a session's record to one gzip'd tar archive, to share a review: one\n"
            "directory corral-SESSION/ with its events.jsonl and output.cast as they were\n"
            "recorded, the records of approvals.jsonl about it, one cmd-N.patch per command\n"
            "(what corral diff SESSION N --patch prints: git apply -R undoes it) and a\n"
            "SUMMARY.md (the session, its commands with their counts and risk marks,\n"
            "approvals, network hosts).  SESSION is the id corral ls shows, also after the\n"
            "session ended or the server restarted (ID.N: an older session that had the\n"
            "same id).  A running session is exported as far as it got.  corral replay\n"
            "plays the archive.\n\n"
            "  -o, --output FILE  the archive (default: corral-SESSION.tar.gz)\n"
            "  -f, --force        replace FILE if it exists\n",
    .run = verb_export,
    .where = CLI_FILES,
};
