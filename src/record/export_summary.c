/*
 * export_summary.c - see export_summary.h.
 */
#include "config.h"

#include "record/export_summary.h"

#include "base/quote.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An approval's decision is logged to approvals.jsonl and the session's
 * events at the same moment; an exec's approval is decided just before its
 * session is created. */
#define SAME_MOMENT_S 0.05
#define BEFORE_START_S 5.0

/* ---- reading the session ------------------------------------------------------------ */

export_cmd *export_cmd_get(export_session *es, int n)
{
    size_t i = 0;
    while (i < es->n_cmds && es->cmds[i].n < n)
        i++;
    if (i < es->n_cmds && es->cmds[i].n == n)
        return &es->cmds[i];
    es->cmds = xrealloc(es->cmds, (es->n_cmds + 1) * sizeof *es->cmds);
    memmove(&es->cmds[i + 1], &es->cmds[i], (es->n_cmds - i) * sizeof *es->cmds);
    es->n_cmds++;
    memset(&es->cmds[i], 0, sizeof es->cmds[i]);
    es->cmds[i].n = n;
    return &es->cmds[i];
}

static void keep(json_t **slot, json_t *ev)
{
    json_decref(*slot);
    *slot = json_incref(ev);
}

static int read_event(json_t *ev, const char *event, void *user)
{
    export_session *es = user;
    es->events++;
    double t = sessdir_parse_time(json_string_value(json_object_get(ev, "time")));
    if (t > 0) {
        if (!es->first_time)
            es->first_time = t;
        es->last_time = t;
    }
    if (strcmp(event, "created") == 0) {
        keep(&es->created, ev);
        if (json_is_integer(json_object_get(ev, "session")))
            es->id = (int)json_integer_value(json_object_get(ev, "session"));
    } else if (strcmp(event, "exited") == 0) {
        keep(&es->exited, ev);
    } else if (strcmp(event, "killed") == 0) {
        keep(&es->killed, ev);
    } else if (strcmp(event, "changes") == 0) {
        json_t *n = json_object_get(ev, "command");
        if (json_is_integer(n) && json_integer_value(n) > 0 && json_integer_value(n) <= INT32_MAX) {
            export_cmd *c = export_cmd_get(es, (int)json_integer_value(n));
            keep(&c->record, ev);
            free(c->line);
            const char *line = json_string_value(json_object_get(ev, "line"));
            c->line = xstrdup(line ? line : "");
        }
    } else if (strcmp(event, "approval_requested") == 0 || strcmp(event, "approval_decided") == 0 ||
               strcmp(event, "approved") == 0) {
        json_array_append(es->approvals, ev);
    } else if (strcmp(event, "network") == 0) {
        json_array_append(es->network, ev);
    } else if (strcmp(event, "escalated") == 0 || strcmp(event, "escalation_ended") == 0 ||
               strcmp(event, "escalation_refused") == 0 || strcmp(event, "command_refused") == 0) {
        json_array_append(es->escalations, ev);
    }
    return 0;
}

int export_read(export_session *es, const char *name, const char *events_path, uint64_t limit, char *err,
                size_t errlen)
{
    memset(es, 0, sizeof *es);
    es->name = xstrdup(name);
    es->id = atoi(name);
    es->approvals = json_array();
    es->network = json_array();
    es->escalations = json_array();
    return sessdir_read_events(events_path, limit, NULL, read_event, es, &es->stats, err, errlen) < 0 ? -1 : 0;
}

const char *export_workspace(const export_session *es)
{
    for (size_t i = 0; i < es->n_cmds; i++) {
        const char *ws = json_string_value(json_object_get(es->cmds[i].record, "workspace"));
        if (ws)
            return ws;
    }
    return json_string_value(json_object_get(es->created, "cwd"));
}

void export_session_free(export_session *es)
{
    free(es->name);
    json_decref(es->created);
    json_decref(es->exited);
    json_decref(es->killed);
    json_decref(es->approvals);
    json_decref(es->network);
    json_decref(es->escalations);
    for (size_t i = 0; i < es->n_cmds; i++) {
        free(es->cmds[i].line);
        free(es->cmds[i].missing);
        json_decref(es->cmds[i].record);
    }
    free(es->cmds);
    memset(es, 0, sizeof *es);
}

/* ---- approvals.jsonl ------------------------------------------------------------------ */

typedef struct appr_line {
    char *text; /* the line as it is, with its newline */
    size_t len;
    int id;
    bool decided; /* approval_decided (else approval_requested) */
    double time;
    bool take;
} appr_line;

/* The session's mentions of approval id: the latest time. */
static double last_mention(const export_session *es, int id)
{
    double last = -1;
    size_t i;
    json_t *ev;
    json_array_foreach(es->approvals, i, ev) {
        if (json_integer_value(json_object_get(ev, "approval")) != id)
            continue;
        double t = sessdir_parse_time(json_string_value(json_object_get(ev, "time")));
        if (t > last)
            last = t;
    }
    return last;
}

long export_approvals(const export_session *es, const char *approvals_path, FILE *out, char *err, size_t errlen)
{
    if (json_array_size(es->approvals) == 0)
        return 0;
    int fd = open(approvals_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot read %s: %s", approvals_path, strerror(errno));
        return -1;
    }
    appr_line *v = NULL;
    size_t n = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] != '\n')
            break; /* torn */
        json_t *o = json_loadb(line, (size_t)len, 0, NULL);
        const char *ev = json_string_value(json_object_get(o, "event"));
        json_t *id = json_object_get(o, "approval");
        if (ev && json_is_integer(id) &&
            (strcmp(ev, "approval_requested") == 0 || strcmp(ev, "approval_decided") == 0)) {
            v = xrealloc(v, (n + 1) * sizeof *v);
            v[n] = (appr_line){xstrndup(line, (size_t)len), (size_t)len, (int)json_integer_value(id),
                               strcmp(ev, "approval_decided") == 0,
                               sessdir_parse_time(json_string_value(json_object_get(o, "time"))), false};
            n++;
        }
        json_decref(o);
    }
    free(line);
    fclose(f);
    double start = es->created ? sessdir_parse_time(json_string_value(json_object_get(es->created, "time")))
                               : es->first_time;
    /* Each approval the session names, once. */
    size_t i;
    json_t *ev;
    json_array_foreach(es->approvals, i, ev) {
        int id = (int)json_integer_value(json_object_get(ev, "approval"));
        double last = last_mention(es, id);
        size_t k = n;
        /* Its decision: the last one logged before the session's last mention. */
        while (k-- > 0)
            if (v[k].id == id && v[k].decided && v[k].time <= last + SAME_MOMENT_S &&
                v[k].time >= start - BEFORE_START_S)
                break;
        size_t from = k < n ? k : n;
        if (k < n)
            v[k].take = true;
        /* Its request: the last one before that decision (or, undecided,
         * before the session's last mention). */
        for (size_t r = from; r-- > 0;) {
            if (v[r].id != id)
                continue;
            if (!v[r].decided && (k < n || (v[r].time <= last + SAME_MOMENT_S && v[r].time >= start - BEFORE_START_S))) {
                v[r].take = true;
                break;
            }
            if (v[r].decided && k < n)
                break; /* an earlier decision of the same id: another server's */
        }
    }
    long taken = 0;
    for (size_t r = 0; r < n; r++) {
        if (v[r].take) {
            fwrite(v[r].text, 1, v[r].len, out);
            taken++;
        }
        free(v[r].text);
    }
    free(v);
    return taken;
}

/* ---- SUMMARY.md ---------------------------------------------------------------------- */

/* Text from outside as a Markdown code span that is safe in a table cell:
 * what a reader could not see made visible, | escaped, a fence longer
 * than any run of backticks in it. */
static void md_code(FILE *out, const char *s)
{
    if (!s || !*s)
        return;
    char *v = quote_text_visible(s, strlen(s));
    size_t run = 0, longest = 0;
    for (const char *p = v; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest)
            longest = run;
    }
    char fence[16];
    size_t nf = longest + 1 < sizeof fence ? longest + 1 : sizeof fence - 1;
    memset(fence, '`', nf);
    fence[nf] = '\0';
    bool pad = v[0] == '`' || v[strlen(v) - 1] == '`';
    fputs(fence, out);
    if (pad)
        fputc(' ', out);
    for (const char *p = v; *p; p++) {
        if (*p == '|')
            fputc('\\', out);
        fputc(*p, out);
    }
    if (pad)
        fputc(' ', out);
    fputs(fence, out);
    free(v);
}

/* Text from outside in running text or a table cell: what a reader could
 * not see made visible, | escaped; fallback when it is absent. */
static void md_plain(FILE *out, const char *s, const char *fallback)
{
    if (!s) {
        fputs(fallback, out);
        return;
    }
    char *v = quote_text_visible(s, strlen(s));
    for (const char *p = v; *p; p++) {
        if (*p == '|')
            fputc('\\', out);
        fputc(*p, out);
    }
    free(v);
}

static const char *str(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static long long num(json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

static void md_argv(FILE *out, json_t *argv)
{
    if (!json_is_array(argv) || json_array_size(argv) == 0)
        return;
    char **v = xcalloc(json_array_size(argv) + 1, sizeof *v);
    size_t i;
    json_t *a;
    json_array_foreach(argv, i, a)
        v[i] = (char *)(json_string_value(a) ? json_string_value(a) : "");
    char *line = quote_argv_display(v);
    md_code(out, line);
    free(line);
    free(v);
}

static void duration(FILE *out, double s)
{
    long long t = (long long)(s + 0.5);
    if (t >= 3600)
        fprintf(out, "%lldh%02lldm%02llds", t / 3600, t / 60 % 60, t % 60);
    else if (t >= 60)
        fprintf(out, "%lldm%02llds", t / 60, t % 60);
    else
        fprintf(out, "%.1fs", s);
}

static void write_head(const export_session *es, FILE *out, double exported_at)
{
    json_t *c = es->created;
    fprintf(out, "# corral session %s\n\n", es->name);
    fprintf(out, "| | |\n|---|---|\n");
    fprintf(out, "| session | %d", es->id);
    if (str(c, "name")) {
        fputs(" ", out);
        md_code(out, str(c, "name"));
    }
    fputs(" |\n| agent | ", out);
    md_code(out, str(c, "client"));
    fprintf(out, "%s |\n| command | ", str(c, "kind") && strcmp(str(c, "kind"), "exec") == 0 ? " (an agent's command)" : "");
    md_argv(out, json_object_get(c, "command"));
    fputs(" |\n| workspace | ", out);
    md_code(out, export_workspace(es));
    fputs(" |\n| sandbox profile | ", out);
    md_code(out, str(c, "profile"));
    fputs(" |\n| started | ", out);
    md_plain(out, str(c, "time"), "(not recorded)");
    fputs(" |\n| ended | ", out);
    json_t *x = es->exited;
    if (x) {
        md_plain(out, str(x, "time"), "?");
        fputs(": ", out);
        if (str(x, "signal")) {
            fputs("killed by ", out);
            md_plain(out, str(x, "signal"), "");
        } else {
            fprintf(out, "exited with code %lld", num(x, "code"));
        }
        if (es->killed && str(es->killed, "reason")) {
            fputs(" (corral killed it: ", out);
            md_plain(out, str(es->killed, "reason"), "");
            fputs(")", out);
        }
        if (json_is_number(json_object_get(x, "duration_seconds"))) {
            fputs(", after ", out);
            duration(out, json_number_value(json_object_get(x, "duration_seconds")));
        }
    } else if (es->running) {
        fputs("still running when this was exported", out);
    } else {
        fputs("not recorded (its server stopped without recording its end)", out);
    }
    char when[32];
    iso_time(when, exported_at);
    fprintf(out, " |\n| exported | %s by %s |\n\n", when, PACKAGE_STRING);
}

static void write_commands(const export_session *es, FILE *out)
{
    fprintf(out, "## Commands\n\n");
    if (!es->n_cmds) {
        fprintf(out, "No command was recorded (snapshots were off, or the workspace is not snapshotted).\n\n");
        return;
    }
    fprintf(out, "| # | command | exit | files +added ~modified -deleted | lines | risk | patch |\n"
                 "|---|---|---|---|---|---|---|\n");
    bool any_risk = false, any_missed = false;
    for (size_t i = 0; i < es->n_cmds; i++) {
        const export_cmd *c = &es->cmds[i];
        json_t *r = c->record;
        fprintf(out, "| %d | ", c->n);
        if (str(r, "by")) { /* an action a client did on the session (a revert) */
            fputs("action by ", out);
            md_plain(out, str(r, "by"), "?");
            fputs(": ", out);
        }
        md_code(out, c->line);
        fputs(" | ", out);
        if (json_is_integer(json_object_get(r, "exit_code")))
            fprintf(out, "%lld", num(r, "exit_code"));
        json_t *n = json_object_get(r, "counts"), *l = json_object_get(r, "lines");
        if (n) {
            fprintf(out, " | +%lld ~%lld -%lld", num(n, "added"), num(n, "modified") + num(n, "typechanged"),
                    num(n, "deleted"));
            if (num(n, "renamed"))
                fprintf(out, " (%lld renamed)", num(n, "renamed"));
            fprintf(out, " | +%lld -%lld | ", num(l, "added"), num(l, "removed"));
        } else {
            fprintf(out, " | %s | | ", r ? "no diff" : "still running");
        }
        json_t *risk = json_object_get(r, "risk");
        any_risk |= json_array_size(risk) > 0;
        any_missed |= json_array_size(json_object_get(r, "not_captured")) > 0;
        if (json_array_size(risk))
            fprintf(out, "**RISK** (%zu)", json_array_size(risk));
        fputs(" | ", out);
        if (c->patched)
            fprintf(out, "[cmd-%d.patch](cmd-%d.patch)%s", c->n, c->n, c->cut ? " (cut: too large)" : "");
        else if (c->missing) {
            fputs("none: ", out);
            md_code(out, c->missing);
        }
        fputs(" |\n", out);
    }
    fputc('\n', out);
    if (any_risk) {
        fprintf(out, "Risk marks (read these changes first):\n\n");
        for (size_t i = 0; i < es->n_cmds; i++) {
            size_t k;
            json_t *m;
            json_array_foreach(json_object_get(es->cmds[i].record, "risk"), k, m) {
                fprintf(out, "- command %d: ", es->cmds[i].n);
                md_code(out, str(m, "path"));
                size_t j;
                json_t *mark;
                fputs(" [", out);
                json_array_foreach(json_object_get(m, "marks"), j, mark) {
                    fputs(j ? ", " : "", out);
                    md_plain(out, json_string_value(mark), "?");
                }
                fputs("]", out);
                if (str(m, "detail")) {
                    fputs(": ", out);
                    md_code(out, str(m, "detail"));
                }
                fputc('\n', out);
            }
        }
        fputc('\n', out);
    }
    if (any_missed) {
        fprintf(out, "Not captured (not in the patches):\n\n");
        for (size_t i = 0; i < es->n_cmds; i++) {
            size_t k;
            json_t *m;
            json_array_foreach(json_object_get(es->cmds[i].record, "not_captured"), k, m) {
                fprintf(out, "- command %d: ", es->cmds[i].n);
                md_code(out, str(m, "path"));
                fputs(" (", out);
                md_plain(out, str(m, "reason"), "?");
                fputs(")\n", out);
            }
        }
        fputc('\n', out);
    }
}

static json_t *approval_event(const export_session *es, int id, const char *kind)
{
    size_t i;
    json_t *ev;
    json_t *found = NULL;
    json_array_foreach(es->approvals, i, ev)
        if (json_integer_value(json_object_get(ev, "approval")) == id && strcmp(str(ev, "event"), kind) == 0)
            found = ev;
    return found;
}

static void write_approvals(const export_session *es, FILE *out)
{
    if (!json_array_size(es->approvals))
        return;
    fprintf(out, "## Approvals\n\n| # | asked | request | answer | by | key | note |\n"
                 "|---|---|---|---|---|---|---|\n");
    size_t i;
    json_t *ev;
    int *seen = xcalloc(json_array_size(es->approvals), sizeof *seen);
    size_t n_seen = 0;
    json_array_foreach(es->approvals, i, ev) {
        int id = (int)json_integer_value(json_object_get(ev, "approval"));
        bool dup = false;
        for (size_t k = 0; k < n_seen; k++)
            dup |= seen[k] == id;
        if (dup)
            continue;
        seen[n_seen++] = id;
        json_t *rq = approval_event(es, id, "approval_requested"), *dc = approval_event(es, id, "approval_decided"),
               *ap = approval_event(es, id, "approved");
        fprintf(out, "| %d | ", id);
        md_plain(out, str(rq, "time"), "");
        fputs(" | ", out);
        if (rq) {
            md_code(out, str(rq, "kind"));
            fputs(": ", out);
            if (str(rq, "line"))
                md_code(out, str(rq, "line"));
            else
                md_argv(out, json_object_get(rq, "argv"));
            if (str(rq, "reason")) {
                fputs(" (", out);
                md_code(out, str(rq, "reason"));
                fputs(")", out);
            }
        } else {
            fputs("the request that started this session", out);
        }
        fputs(" | ", out);
        json_t *answer = dc ? dc : ap;
        md_code(out, str(answer, "answer"));
        if (!answer)
            fputs("(no answer recorded)", out);
        fputs(" | ", out);
        md_code(out, str(dc, "by"));
        fputs(" | ", out);
        md_code(out, str(dc, "key"));
        fputs(" | ", out);
        md_code(out, str(dc, "note"));
        fputs(" |\n", out);
    }
    free(seen);
    fputc('\n', out);
}

typedef struct host_row {
    const char *host, *decision;
    long long port, count, sent, received;
} host_row;

static void write_network(const export_session *es, FILE *out)
{
    if (!json_array_size(es->network))
        return;
    host_row *rows = xcalloc(json_array_size(es->network), sizeof *rows);
    size_t n = 0, i;
    json_t *ev;
    json_array_foreach(es->network, i, ev) {
        const char *host = str(ev, "host") ? str(ev, "host") : "?", *dec = str(ev, "decision") ? str(ev, "decision") : "?";
        size_t k = 0;
        while (k < n && !(strcmp(rows[k].host, host) == 0 && rows[k].port == num(ev, "port") &&
                          strcmp(rows[k].decision, dec) == 0))
            k++;
        if (k == n)
            rows[n++] = (host_row){host, dec, num(ev, "port"), 0, 0, 0};
        rows[k].count++;
        rows[k].sent += num(ev, "bytes_to_server");
        rows[k].received += num(ev, "bytes_to_client");
    }
    fprintf(out, "## Network\n\n| host | port | decision | connections | bytes sent | bytes received |\n"
                 "|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < n; k++) {
        fputs("| ", out);
        md_code(out, rows[k].host);
        fprintf(out, " | %lld | ", rows[k].port);
        md_code(out, rows[k].decision);
        fprintf(out, " | %lld | %lld | %lld |\n", rows[k].count, rows[k].sent, rows[k].received);
    }
    fputc('\n', out);
    free(rows);
}

static void write_escalations(const export_session *es, FILE *out)
{
    if (!json_array_size(es->escalations))
        return;
    fprintf(out, "## Escalations and refusals\n\n");
    size_t i;
    json_t *ev;
    json_array_foreach(es->escalations, i, ev) {
        fputs("- ", out);
        md_plain(out, str(ev, "time"), "?");
        fputc(' ', out);
        md_plain(out, str(ev, "event"), "?");
        fputs(": ", out);
        if (str(ev, "line"))
            md_code(out, str(ev, "line"));
        else
            md_argv(out, json_object_get(ev, "argv"));
        if (str(ev, "reason")) {
            fputs(" (", out);
            md_code(out, str(ev, "reason"));
            fputs(")", out);
        }
        if (json_is_integer(json_object_get(ev, "approval")))
            fprintf(out, " approval %lld", num(ev, "approval"));
        if (json_is_integer(json_object_get(ev, "status")))
            fprintf(out, " status %lld", num(ev, "status"));
        fputc('\n', out);
    }
    fputc('\n', out);
}

void export_summary_write(const export_session *es, FILE *out, double exported_at, long approval_records)
{
    write_head(es, out, exported_at);
    write_commands(es, out);
    write_approvals(es, out);
    write_network(es, out);
    write_escalations(es, out);
    fprintf(out, "## Files\n\n"
                 "- `events.jsonl`: the session's log as it was recorded, %ld events (docs/formats.md)\n"
                 "- `output.cast`: its terminal output (asciicast v2): `asciinema play output.cast`, or "
                 "`corral replay` on this archive\n"
                 "- `approvals.jsonl`: the %ld records of corral's approvals.jsonl about this session\n",
            es->events, approval_records);
    bool any = false;
    for (size_t i = 0; i < es->n_cmds; i++)
        any |= es->cmds[i].patched;
    if (any)
        fprintf(out, "- `cmd-N.patch`: what command N changed, as `corral diff %d N --patch` prints it; "
                     "`git apply -R cmd-N.patch` in the workspace undoes it\n",
                es->id);
    if (es->stats.torn || es->stats.bad)
        fprintf(out, "\nevents.jsonl has %ld line%s that could not be read%s; they are left out of this summary.\n",
                es->stats.bad + es->stats.torn, es->stats.bad + es->stats.torn == 1 ? "" : "s",
                es->stats.torn ? " (the last one is torn: a crash in the middle of a write)" : "");
}
