/*
 * timeline_text.c - see timeline.h: an entry in one line of text, the
 * filters, times as people write them, the summary, command markers.
 */
#include "config.h"

#include "base/quote.h"
#include "record/timeline.h"
#include "base/util.h"

#include <ctype.h>
#include <math.h> /* isfinite: a macro, no libm */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- times ------------------------------------------------------------------------------ */

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long long)doe - 719468;
}

static bool digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return false;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return true;
}

typedef struct when {
    int y, mo, d, h, mi;
    double s;
    bool has_zone;
    int offset; /* seconds east of UTC */
} when;

/* YYYY-MM-DD[(T| )HH:MM[:SS[.fff]]][Z|(+|-)HH[:]MM]; *end is what follows. */
static bool parse_iso(const char *p, when *w, const char **end)
{
    memset(w, 0, sizeof *w);
    if (!digits(&p, 4, &w->y) || *p++ != '-' || !digits(&p, 2, &w->mo) || *p++ != '-' || !digits(&p, 2, &w->d))
        return false;
    if (w->mo < 1 || w->mo > 12 || w->d < 1 || w->d > 31)
        return false;
    if (*p == 'T' || *p == 't' || (*p == ' ' && isdigit((unsigned char)p[1]))) {
        p++;
        if (!digits(&p, 2, &w->h) || *p++ != ':' || !digits(&p, 2, &w->mi))
            return false;
        if (*p == ':') {
            p++;
            int s;
            if (!digits(&p, 2, &s))
                return false;
            w->s = s;
            if (*p == '.' || *p == ',') {
                p++;
                double scale = 0.1;
                if (!isdigit((unsigned char)*p))
                    return false;
                while (isdigit((unsigned char)*p)) {
                    w->s += (*p++ - '0') * scale;
                    scale /= 10;
                }
            }
        }
        if (w->h > 23 || w->mi > 59 || w->s >= 61)
            return false;
        if (*p == 'Z' || *p == 'z') {
            p++;
            w->has_zone = true;
        } else if (*p == '+' || *p == '-') {
            int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
            if (!digits(&p, 2, &oh))
                return false;
            if (*p == ':')
                p++;
            if (isdigit((unsigned char)*p) && !digits(&p, 2, &om))
                return false;
            if (oh > 23 || om > 59)
                return false;
            w->has_zone = true;
            w->offset = sign * (oh * 3600 + om * 60);
        }
    }
    *end = p;
    return true;
}

static double utc_of(const when *w)
{
    return (double)(days_from_civil(w->y, (unsigned)w->mo, (unsigned)w->d) * 86400 + w->h * 3600 + w->mi * 60) + w->s -
           w->offset;
}

double tl_iso_time(const char *s)
{
    when w;
    const char *end;
    if (!s || !parse_iso(s, &w, &end) || *end)
        return -1;
    return utc_of(&w);
}

int tl_parse_time(const char *s, double now, double *out, char *err, size_t errlen)
{
    const char *p = s;
    while (*p == ' ')
        p++;
    /* An age: a number and a unit. */
    char *unit;
    double v = strtod(p, &unit);
    if (unit != p && isdigit((unsigned char)*p) && unit[0] && (!unit[1] || unit[1] == ' ')) {
        double mult = 0;
        switch (unit[0]) {
        case 's': mult = 1; break;
        case 'm': mult = 60; break;
        case 'h': mult = 3600; break;
        case 'd': mult = 86400; break;
        case 'w': mult = 7 * 86400; break;
        }
        if (mult > 0 && isfinite(v) && v >= 0) {
            *out = now - v * mult;
            return 0;
        }
    }
    when w;
    const char *end;
    if (parse_iso(p, &w, &end)) {
        while (*end == ' ')
            end++;
        if (!*end) {
            if (w.has_zone) {
                *out = utc_of(&w);
            } else {
                struct tm tm = {.tm_year = w.y - 1900, .tm_mon = w.mo - 1, .tm_mday = w.d, .tm_hour = w.h,
                                .tm_min = w.mi, .tm_sec = 0, .tm_isdst = -1};
                time_t t = mktime(&tm);
                *out = (double)t + w.s;
            }
            return 0;
        }
    }
    snprintf(err, errlen,
             "'%s' is not a time: give an ISO 8601 date or time (2026-11-29, 2026-11-29T07:41, "
             "2026-11-29T07:41:25Z, 2026-11-29 07:41+02:00; local time without a zone) or an age "
             "(45s, 10m, 2h, 3d, 1w)",
             s);
    return -1;
}

/* ---- kinds and filters ------------------------------------------------------------------------ */

int tl_parse_kinds(const char *list, unsigned *mask, char *err, size_t errlen)
{
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        int k = tl_kind_parse(p, n);
        /* A plural reads naturally too: --kind commands. */
        if (k < 0 && n > 1 && p[n - 1] == 's')
            k = tl_kind_parse(p, n - 1);
        if (k < 0) {
            buf_t names;
            buf_init(&names);
            for (int i = 0; i < TL_KIND_COUNT; i++)
                buf_printf(&names, "%s%s", i ? ", " : "", tl_kind_name((tl_kind)i));
            char *shown = quote_text_visible(p, n);
            snprintf(err, errlen, "'%s' is not a kind of entry: give one or more of %s (commas between)", shown,
                     names.data);
            free(shown);
            buf_free(&names);
            return -1;
        }
        *mask |= 1u << k;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

static bool has_text(const char *hay, const char *needle, bool icase)
{
    return icase ? strcasestr(hay, needle) != NULL : strstr(hay, needle) != NULL;
}

bool tl_json_has_text(json_t *v, const char *needle, bool icase)
{
    const char *key;
    json_t *x;
    size_t i;
    switch (json_typeof(v)) {
    case JSON_STRING: return has_text(json_string_value(v), needle, icase);
    case JSON_OBJECT:
        json_object_foreach(v, key, x) if (tl_json_has_text(x, needle, icase)) return true;
        return false;
    case JSON_ARRAY:
        json_array_foreach(v, i, x) if (tl_json_has_text(x, needle, icase)) return true;
        return false;
    default: return false;
    }
}

static char *entry_text(const timeline_t *tl, const tl_entry *e, json_t *j);

bool tl_match(const tl_entry *e, const tl_filter *f)
{
    if (f->kinds && !(f->kinds & (1u << e->kind)))
        return false;
    if (f->since > 0 && e->time < f->since)
        return false;
    if (f->grep && *f->grep) {
        json_t *j = tl_entry_json(e);
        bool found = j && tl_json_has_text(j, f->grep, f->ignore_case);
        if (!found && j) {
            char *text = entry_text(NULL, e, j);
            found = has_text(text, f->grep, f->ignore_case);
            free(text);
        }
        json_decref(j);
        return found;
    }
    return true;
}

/* ---- one line of text ------------------------------------------------------------------------ */

static const char *str(json_t *j, const char *key)
{
    return json_string_value(json_object_get(j, key));
}

static void put_visible(buf_t *b, const char *s)
{
    if (!s)
        return;
    char *v = quote_text_visible(s, strlen(s));
    buf_puts(b, v);
    free(v);
}

static void put_argv(buf_t *b, json_t *argv)
{
    size_t n = json_array_size(argv);
    char **v = xcalloc(n + 1, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(argv, i));
        v[i] = (char *)(s ? s : "");
    }
    char *q = quote_argv_display(v);
    buf_puts(b, q);
    free(q);
    free(v);
}

static void put_duration(buf_t *b, double d)
{
    if (d < 1)
        buf_printf(b, "%dms", (int)(d * 1000 + 0.5));
    else if (d < 10)
        buf_printf(b, "%.2fs", d);
    else if (d < 60)
        buf_printf(b, "%.1fs", d);
    else if (d < 3600)
        buf_printf(b, "%dm%02ds", (int)(d / 60), (int)d % 60);
    else if (d < 1e9)
        buf_printf(b, "%dh%02dm", (int)(d / 3600), (int)(d / 60) % 60);
    else
        buf_puts(b, "?");
}

static void put_bytes(buf_t *b, double n)
{
    char text[32];
    format_bytes(n, false, text, sizeof text);
    buf_puts(b, text);
}

static void text_session(buf_t *b, const tl_entry *e, json_t *j)
{
    put_visible(b, str(j, "name"));
    buf_puts(b, ": ");
    put_argv(b, json_object_get(j, "command"));
    buf_puts(b, " (");
    put_visible(b, str(j, "profile"));
    buf_puts(b, ", by ");
    put_visible(b, str(j, "client"));
    buf_puts(b, ") in ");
    put_visible(b, str(j, "cwd"));
}

static void text_command(buf_t *b, const timeline_t *tl, const tl_entry *e, json_t *j)
{
    char status[32];
    if (e->action)
        snprintf(status, sizeof status, "action");
    else if (e->has_exit)
        snprintf(status, sizeof status, "exit %d", e->exit_code);
    else if (e->end > 0)
        snprintf(status, sizeof status, "exit ?");
    else
        snprintf(status, sizeof status, "running");
    buf_printf(b, "#%-3d %-8s ", e->number, status);
    buf_t d;
    buf_init(&d);
    if (e->end > 0 && e->time > 0)
        put_duration(&d, e->end - e->time);
    buf_printf(b, "%7s  ", d.data ? d.data : "");
    buf_free(&d);
    if (e->has_counts) {
        buf_printf(b, "+%ld ~%ld -%ld", e->added, e->modified, e->deleted);
        if (e->missed)
            buf_printf(b, " (%ld not captured)", e->missed);
    } else if (json_object_get(j, "error"))
        buf_puts(b, "(no diff)");
    else
        buf_puts(b, "-");
    if (e->risk)
        buf_puts(b, "  RISK");
    buf_puts(b, "  ");
    if (e->action) {
        /* Not the session's own: who did it comes first. */
        buf_puts(b, "by ");
        put_visible(b, str(j, "by") ? str(j, "by") : "?");
        buf_puts(b, ": ");
    }
    put_visible(b, str(j, "line"));
    const char *cwd = str(j, "cwd");
    if (cwd && tl && tl->workspace && strcmp(cwd, tl->workspace) != 0) {
        buf_puts(b, "  (in ");
        put_visible(b, cwd);
        buf_puts(b, ")");
    }
}

static void text_request(buf_t *b, json_t *req)
{
    const char *kind = json_string_value(json_object_get(req, "kind"));
    if (kind && strcmp(kind, "network") == 0) {
        buf_puts(b, "network ");
        put_visible(b, json_string_value(json_object_get(req, "host")));
        buf_printf(b, ":%lld ", (long long)json_integer_value(json_object_get(req, "port")));
        put_visible(b, json_string_value(json_object_get(req, "protocol")));
        return;
    }
    if (kind) {
        put_visible(b, kind);
        buf_putc(b, ' ');
    }
    /* A typed line as it was typed; else the argv as the dialog showed it. */
    const char *line = json_string_value(json_object_get(req, "line"));
    const char *cmd = json_string_value(json_object_get(req, "command"));
    if (line)
        put_visible(b, line);
    else if (cmd)
        put_visible(b, cmd);
    else
        put_argv(b, json_object_get(req, "argv"));
}

static void text_approval(buf_t *b, const tl_entry *e, json_t *j)
{
    buf_printf(b, "#%d ", e->number);
    if (e->decided) {
        put_visible(b, str(j, "decision"));
        const char *scope = str(j, "scope"), *by = str(j, "by"), *key = str(j, "key");
        if (scope) {
            buf_puts(b, " (");
            put_visible(b, scope);
            buf_puts(b, ")");
        }
        if (by) {
            buf_puts(b, " by ");
            put_visible(b, by);
        }
        if (key) {
            buf_puts(b, " [");
            put_visible(b, key);
            buf_puts(b, "]");
        }
    } else {
        buf_puts(b, "waiting");
    }
    buf_puts(b, ": ");
    if (json_is_true(json_object_get(j, "starts_session")))
        buf_puts(b, "this session's own command: ");
    json_t *req = json_object_get(j, "request");
    if (req)
        text_request(b, req);
    else
        buf_puts(b, "(the request is not in the logs)");
    const char *note = str(j, "note");
    if (note) {
        buf_puts(b, "  note: ");
        put_visible(b, note);
    }
}

static void text_network(buf_t *b, const tl_entry *e, json_t *j)
{
    put_visible(b, str(j, "host"));
    buf_printf(b, ":%lld ", (long long)json_integer_value(json_object_get(j, "port")));
    put_visible(b, str(j, "protocol"));
    buf_putc(b, ' ');
    put_visible(b, str(j, "decision"));
    const char *method = str(j, "method");
    json_t *status = json_object_get(j, "status");
    if (method) {
        buf_putc(b, ' ');
        put_visible(b, method);
    }
    if (json_is_integer(status))
        buf_printf(b, " %lld", (long long)json_integer_value(status));
    buf_puts(b, "  sent ");
    put_bytes(b, json_number_value(json_object_get(j, "bytes_to_server")));
    buf_puts(b, ", received ");
    put_bytes(b, json_number_value(json_object_get(j, "bytes_to_client")));
    buf_puts(b, ", ");
    put_duration(b, json_number_value(json_object_get(j, "duration_ms")) / 1000);
    const char *decision = str(j, "decision"), *reason = str(j, "reason"), *error = str(j, "error");
    if (decision && strcmp(decision, "deny") == 0 && reason) {
        buf_puts(b, "  (");
        put_visible(b, reason);
        buf_puts(b, ")");
    }
    if (error) {
        buf_puts(b, "  error: ");
        put_visible(b, error);
    }
}

static void text_escalation(buf_t *b, const tl_entry *e, json_t *j)
{
    buf_printf(b, "#%d ", e->number);
    json_t *argv = json_object_get(j, "argv");
    if (argv)
        put_argv(b, argv);
    else
        buf_puts(b, "(its start is not in the log)");
    const char *profile = str(j, "profile");
    if (profile) {
        buf_puts(b, " (");
        put_visible(b, profile);
        buf_puts(b, ")");
    }
    if (e->has_exit)
        buf_printf(b, "  exit %d", e->exit_code);
    else if (!e->end)
        buf_puts(b, "  running");
    if (e->end > 0 && e->time > 0) {
        buf_puts(b, " after ");
        put_duration(b, e->end - e->time);
    }
}

static void text_plain(buf_t *b, const tl_entry *e, json_t *j)
{
    const char *ev = str(j, "event");
    json_t *o = j;
    if (!ev)
        ev = "";
    if (strcmp(ev, "command_refused") == 0 || strcmp(ev, "escalation_refused") == 0) {
        buf_puts(b, strcmp(ev, "command_refused") == 0 ? "typed line " : "escalation ");
        if (str(j, "line"))
            put_visible(b, str(j, "line"));
        else
            put_argv(b, json_object_get(o, "argv"));
        buf_puts(b, ": ");
        put_visible(b, str(j, "reason"));
    } else if (strcmp(ev, "sandbox_denied") == 0) {
        buf_puts(b, "the sandbox refused: ");
        put_visible(b, str(j, "line"));
        if (str(j, "path")) {
            buf_puts(b, " (");
            put_visible(b, str(j, "path"));
            buf_puts(b, ")");
        }
    } else if (strcmp(ev, "retry_of") == 0) {
        buf_printf(b, "the one retry, without the sandbox, of session %lld",
                   (long long)json_integer_value(json_object_get(o, "session")));
    } else if (strcmp(ev, "resized") == 0) {
        buf_printf(b, "%lldx%lld", (long long)json_integer_value(json_object_get(o, "cols")),
                   (long long)json_integer_value(json_object_get(o, "rows")));
    } else if (strcmp(ev, "exited") == 0) {
        if (str(j, "signal")) {
            buf_puts(b, "killed by ");
            put_visible(b, str(j, "signal"));
        } else {
            buf_printf(b, "exited with code %lld", (long long)json_integer_value(json_object_get(o, "code")));
        }
        json_t *d = json_object_get(o, "duration_seconds");
        if (json_is_number(d)) {
            buf_puts(b, " after ");
            put_duration(b, json_number_value(d));
        }
    } else if (strcmp(ev, "killed") == 0) {
        buf_puts(b, "killed: ");
        put_visible(b, str(j, "reason"));
    } else if (strcmp(ev, "pruned") == 0) {
        buf_puts(b, "pruned from the process store");
    } else if (strcmp(ev, "sandbox_failed") == 0) {
        buf_puts(b, "the sandbox could not be set up: ");
        put_visible(b, str(j, "message"));
    } else if (str(j, "message")) {
        put_visible(b, str(j, "message"));
    } else {
        /* An event this corral does not know: its name and fields. */
        put_visible(b, ev);
        json_t *rest = json_deep_copy(o);
        json_object_del(rest, "time");
        json_object_del(rest, "event");
        json_object_del(rest, "kind");
        char *s = json_dumps(rest, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(rest);
        if (s && strcmp(s, "{}") != 0) {
            buf_putc(b, ' ');
            put_visible(b, s);
        }
        free(s);
    }
}

static char *entry_text(const timeline_t *tl, const tl_entry *e, json_t *j)
{
    buf_t b;
    buf_init(&b);
    switch (e->kind) {
    case TL_SESSION: text_session(&b, e, j); break;
    case TL_COMMAND: text_command(&b, tl, e, j); break;
    case TL_APPROVAL: text_approval(&b, e, j); break;
    case TL_NETWORK: text_network(&b, e, j); break;
    case TL_ESCALATION: text_escalation(&b, e, j); break;
    default: text_plain(&b, e, j); break;
    }
    if (!b.data)
        buf_puts(&b, "");
    return buf_steal(&b);
}

char *tl_entry_text(const timeline_t *tl, const tl_entry *e)
{
    json_t *j = tl_entry_json(e);
    char *text = entry_text(tl, e, j ? j : json_object());
    json_decref(j);
    return text;
}

/* ---- summary ------------------------------------------------------------------------------------ */

static int by_host(const void *a, const void *b)
{
    const tl_entry *x = *(const tl_entry *const *)a, *y = *(const tl_entry *const *)b;
    size_t n = x->host_len < y->host_len ? x->host_len : y->host_len;
    int c = memcmp(x->host, y->host, n);
    return c ? c : (x->host_len > y->host_len) - (x->host_len < y->host_len);
}

void tl_summarize(const timeline_t *tl, tl_summary *out)
{
    memset(out, 0, sizeof *out);
    const tl_entry **hosts = NULL;
    size_t n_hosts = 0;
    for (size_t i = 0; i < tl->n; i++) {
        const tl_entry *e = &tl->entries[i];
        switch (e->kind) {
        case TL_COMMAND:
            /* An action on the session (a revert) is not one of its
             * commands; what it changed still counts. */
            out->commands += !e->action;
            out->added += e->added;
            out->modified += e->modified;
            out->deleted += e->deleted;
            out->risky += e->risk;
            out->missed += e->missed;
            break;
        case TL_APPROVAL: out->approvals++; break;
        case TL_NETWORK: {
            out->connections++;
            if (e->host) {
                hosts = xrealloc(hosts, (n_hosts + 1) * sizeof *hosts);
                hosts[n_hosts++] = e;
            }
            break;
        }
        default: break;
        }
    }
    if (n_hosts) {
        qsort(hosts, n_hosts, sizeof *hosts, by_host);
        out->hosts = 1;
        for (size_t i = 1; i < n_hosts; i++)
            out->hosts += by_host(&hosts[i - 1], &hosts[i]) != 0;
    }
    free(hosts);
}

/* ---- markers ------------------------------------------------------------------------------------ */

#define MARKER_LINE_MAX 1000

char *tl_marker_start(int n, const char *line)
{
    char *v = quote_text_visible(line ? line : "", line ? strlen(line) : 0);
    char *cut = quote_shorten(v, MARKER_LINE_MAX);
    char *label = xasprintf("cmd %d: %s", n, cut);
    free(v);
    free(cut);
    return label;
}

char *tl_marker_end(int n, bool has_exit, int exit_code)
{
    return has_exit ? xasprintf("cmd %d end: exit %d", n, exit_code) : xasprintf("cmd %d end: exit ?", n);
}

static bool number_at(const char **p, int *out)
{
    const char *s = *p;
    long v = 0;
    if (!isdigit((unsigned char)*s))
        return false;
    while (isdigit((unsigned char)*s)) {
        v = v * 10 + (*s++ - '0');
        if (v > 2147483647)
            return false;
    }
    *p = s;
    *out = (int)v;
    return true;
}

bool tl_marker_parse(const char *label, int *n, bool *is_end, int *status)
{
    const char *p = label;
    if (!p || strncmp(p, "cmd ", 4) != 0)
        return false;
    p += 4;
    if (!number_at(&p, n))
        return false;
    if (p[0] == ':' && p[1] == ' ') {
        *is_end = false;
        *status = -1;
        return true;
    }
    if (strncmp(p, " end: exit ", 11) != 0)
        return false;
    p += 11;
    *is_end = true;
    if (p[0] == '?' && !p[1]) {
        *status = -1;
        return true;
    }
    return number_at(&p, status) && !*p;
}
