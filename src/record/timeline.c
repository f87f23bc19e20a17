/*
 * timeline.c - see timeline.h: reading events.jsonl into entries, the
 * joins that make one entry of several events (a command's start, end and
 * diff record; an approval's request and answer, also from approvals.jsonl;
 * an escalation's start and end), and an entry as JSON.  Texts, filters
 * and times are in timeline_text.c.
 *
 * Speed: a 100k-event log loads in a fraction of a second.  Each line is
 * checked and split into members by jsonscan.c (no tree is built); an
 * entry keeps the lines it is made of, and its JSON is written from their
 * text when it is asked for.
 */
#include "config.h"

#include "record/jsonscan.h"
#include "record/timeline.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Members kept of one line; an event has a dozen or two. */
#define MAX_MEMBERS 128

static const char *const kind_names[TL_KIND_COUNT] = {
    "session", "command", "approval", "network", "escalation", "refused",
    "denial", "resize", "exit", "warning", "other",
};

const char *tl_kind_name(tl_kind k)
{
    return (unsigned)k < TL_KIND_COUNT ? kind_names[k] : "other";
}

int tl_kind_parse(const char *name, size_t len)
{
    for (int i = 0; i < TL_KIND_COUNT; i++)
        if (strlen(kind_names[i]) == len && memcmp(kind_names[i], name, len) == 0)
            return i;
    return -1;
}

/* ---- an int -> entry index map (open addressing) -------------------------------------- */

typedef struct imap {
    long long *keys; /* key + 1; 0: empty */
    size_t *vals;
    size_t cap, n;
} imap;

static size_t *imap_slot(imap *m, long long key, bool add)
{
    if (add && (m->n + 1) * 2 > m->cap) {
        imap old = *m;
        m->cap = old.cap ? old.cap * 2 : 64;
        m->keys = xcalloc(m->cap, sizeof *m->keys);
        m->vals = xcalloc(m->cap, sizeof *m->vals);
        m->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.keys[i])
                *imap_slot(m, old.keys[i] - 1, true) = old.vals[i];
        free(old.keys);
        free(old.vals);
    }
    if (!m->cap)
        return NULL;
    size_t i = (size_t)(((unsigned long long)key * 0x9e3779b97f4a7c15ull) >> 17) & (m->cap - 1);
    while (m->keys[i]) {
        if (m->keys[i] == key + 1)
            return &m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    if (!add)
        return NULL;
    m->keys[i] = key + 1;
    m->n++;
    return &m->vals[i];
}

static void imap_free(imap *m)
{
    free(m->keys);
    free(m->vals);
}

/* ---- loading ------------------------------------------------------------------------- */

/* An exec's session that started once its request was approved: the
 * request and the answer are found in approvals.jsonl. */
typedef struct lookup {
    size_t entry;
    long long id;
    double before; /* the "approved" event's time */
    const char *requested, *decided;
    size_t requested_n, decided_n;
    double requested_t, decided_t;
} lookup;

typedef struct loader {
    timeline_t *tl;
    const char *name;
    imap commands, approvals, escalations;
    lookup *lookups;
    size_t n_lookups;
    const char *approvals_name;
    /* The line being read and its members. */
    const char *p;
    size_t n;
    js_member m[MAX_MEMBERS];
    int nm;
} loader;

static void warn(timeline_t *tl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(timeline_t *tl, const char *fmt, ...)
{
    tl->skipped++;
    if (tl->n_warnings >= TL_MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (s)
        tl->warnings[tl->n_warnings++] = s;
}

static const js_member *get(loader *L, const char *key)
{
    return js_find(L->m, L->nm, key);
}

static int int_of(const js_member *m, int fallback)
{
    long long v;
    return js_int(m, &v) && v >= -2147483647 && v <= 2147483647 ? (int)v : fallback;
}

static double time_of(const js_member *m)
{
    if (!m || m->type != 's')
        return -1;
    if (memchr(m->val.p, '\\', m->val.n)) {
        char *s = js_string(m, NULL);
        double t = tl_iso_time(s);
        free(s);
        return t;
    }
    char buf[64];
    if (m->val.n - 2 >= sizeof buf)
        return -1;
    memcpy(buf, m->val.p + 1, m->val.n - 2);
    buf[m->val.n - 2] = '\0';
    return tl_iso_time(buf);
}

static tl_entry *add(loader *L, tl_kind kind, double time, long line)
{
    timeline_t *tl = L->tl;
    if (tl->n == tl->cap) {
        tl->cap = tl->cap ? tl->cap * 2 : 256;
        tl->entries = xrealloc(tl->entries, tl->cap * sizeof *tl->entries);
    }
    tl_entry *e = &tl->entries[tl->n++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->time = time;
    e->line = line;
    return e;
}

/* The current line as source i of e. */
static void source(loader *L, tl_entry *e, int i)
{
    e->src[i] = L->p;
    e->src_len[i] = (unsigned)L->n;
}

static tl_entry *at(loader *L, size_t *slot)
{
    return slot ? &L->tl->entries[*slot] : NULL;
}

/* ---- commands ---- */

static tl_entry *new_command(loader *L, int n, double time, long line)
{
    tl_entry *e = add(L, TL_COMMAND, time, line);
    e->number = n;
    *imap_slot(&L->commands, n, true) = L->tl->n - 1;
    return e;
}

static void set_exit(tl_entry *e, const js_member *code)
{
    long long v;
    if (js_int(code, &v)) {
        e->has_exit = true;
        e->exit_code = v >= -2147483647 && v <= 2147483647 ? (int)v : -1;
    }
}

static void command_ended(loader *L, double t, long line)
{
    int n = int_of(get(L, "command"), 0);
    tl_entry *e = at(L, imap_slot(&L->commands, n, false));
    if (!e || e->end > 0 || e->src[1] || e->src[2]) {
        /* Its start is not in the log: it began duration_seconds ago. */
        double d;
        if (!js_number(get(L, "duration_seconds"), &d) || d < 0 || d > t)
            d = 0;
        e = new_command(L, n, t - d, line);
    }
    source(L, e, 1);
    e->end = t;
    set_exit(e, get(L, "exit_code"));
}

static void command_changes(loader *L, double t, long line)
{
    int n = int_of(get(L, "command"), 0);
    tl_entry *e = at(L, imap_slot(&L->commands, n, false));
    if (!e || e->src[2]) {
        /* Only its record is in the log (written by a corral that wrote
         * no command events, or for a command whose start was not marked). */
        double started = time_of(get(L, "started"));
        e = new_command(L, n, started > 0 ? started : t, line);
    }
    source(L, e, 2);
    if (!e->has_exit)
        set_exit(e, get(L, "exit_code"));
    if (e->end == 0) {
        double ended = time_of(get(L, "ended"));
        e->end = ended > 0 ? ended : t;
    }
    const js_member *c = get(L, "counts");
    if (c && c->type == 'o') {
        js_member cm[16];
        char err[8];
        int k = js_scan_object(c->val.p, c->val.n, cm, 16, err, sizeof err);
        if (k > 16)
            k = 16;
        long long a = 0, m = 0, ty = 0, d = 0;
        js_int(js_find(cm, k, "added"), &a);
        js_int(js_find(cm, k, "modified"), &m);
        js_int(js_find(cm, k, "typechanged"), &ty);
        js_int(js_find(cm, k, "deleted"), &d);
        e->has_counts = true;
        e->added = (long)a;
        e->modified = (long)(m + ty);
        e->deleted = (long)d;
    }
    const js_member *risk = get(L, "risk");
    e->risk = risk && risk->type == 'a' && risk->val.n > 2 && memchr(risk->val.p + 1, '{', risk->val.n - 2);
    long missed = js_array_length(get(L, "not_captured"));
    e->missed = missed > 0 ? missed : 0;
}

/* ---- approvals ---- */

static tl_entry *new_approval(loader *L, long long id, double time, long line)
{
    tl_entry *e = add(L, TL_APPROVAL, time, line);
    e->number = id >= 0 && id <= 2147483647 ? (int)id : 0;
    *imap_slot(&L->approvals, id, true) = L->tl->n - 1;
    return e;
}

static bool approved_answer(const js_member *answer)
{
    return js_is(answer, "once") || js_is(answer, "session") || js_is(answer, "persist");
}

static void approval_decided(loader *L, double t, long line)
{
    long long id = 0;
    js_int(get(L, "approval"), &id);
    tl_entry *e = at(L, imap_slot(&L->approvals, id, false));
    if (!e || e->decided)
        e = new_approval(L, id, t, line);
    source(L, e, 1);
    e->decided = true;
    e->approved = approved_answer(get(L, "answer"));
    e->end = t;
}

static void approved(loader *L, double t, long line)
{
    long long id = 0;
    js_int(get(L, "approval"), &id);
    tl_entry *e = at(L, imap_slot(&L->approvals, id, false));
    if (!e)
        e = new_approval(L, id, t, line);
    source(L, e, 2);
    if (!e->decided) {
        L->lookups = xrealloc(L->lookups, (L->n_lookups + 1) * sizeof *L->lookups);
        lookup *k = &L->lookups[L->n_lookups++];
        memset(k, 0, sizeof *k);
        k->entry = (size_t)(e - L->tl->entries);
        k->id = id;
        k->before = t;
    }
}

/* ---- escalations ---- */

static void escalation_ended(loader *L, double t, long line)
{
    long long id = 0;
    js_int(get(L, "approval"), &id);
    tl_entry *e = at(L, imap_slot(&L->escalations, id, false));
    if (!e || e->end > 0) {
        e = add(L, TL_ESCALATION, t, line);
        e->number = (int)id;
    }
    source(L, e, 1);
    e->end = t;
    /* A wait status: its exit code, or 128+N for signal N. */
    long long st;
    if (js_int(get(L, "status"), &st) && st >= 0 && st <= 0xffff) {
        e->has_exit = true;
        e->exit_code = (st & 0x7f) == 0 ? (int)((st >> 8) & 0xff) : 128 + (int)(st & 0x7f);
    }
}

/* ---- one event ---- */

typedef enum ev_id {
    EV_CREATED, EV_CMD_STARTED, EV_CMD_ENDED, EV_CHANGES, EV_APPR_REQUESTED, EV_APPR_DECIDED, EV_APPROVED,
    EV_NETWORK, EV_ESCALATED, EV_ESC_ENDED, EV_EXITED, EV_KILLED, EV_OTHER
} ev_id;

static const struct {
    const char *name;
    ev_id id;
    tl_kind kind;
} events[] = {
    {"created", EV_CREATED, TL_SESSION},
    {"command_started", EV_CMD_STARTED, TL_COMMAND},
    {"command_ended", EV_CMD_ENDED, TL_COMMAND},
    {"changes", EV_CHANGES, TL_COMMAND},
    {"approval_requested", EV_APPR_REQUESTED, TL_APPROVAL},
    {"approval_decided", EV_APPR_DECIDED, TL_APPROVAL},
    {"approved", EV_APPROVED, TL_APPROVAL},
    {"network", EV_NETWORK, TL_NETWORK},
    {"escalated", EV_ESCALATED, TL_ESCALATION},
    {"escalation_ended", EV_ESC_ENDED, TL_ESCALATION},
    {"escalation_refused", EV_OTHER, TL_REFUSED},
    {"command_refused", EV_OTHER, TL_REFUSED},
    {"sandbox_denied", EV_OTHER, TL_DENIAL},
    {"retry_of", EV_OTHER, TL_DENIAL},
    {"resized", EV_OTHER, TL_RESIZE},
    {"killed", EV_KILLED, TL_EXIT},
    {"exited", EV_EXITED, TL_EXIT},
    {"pruned", EV_OTHER, TL_EXIT},
    {"sandbox_failed", EV_OTHER, TL_EXIT},
    {"sandbox_warning", EV_OTHER, TL_WARNING},
};

static tl_entry *as_is(loader *L, tl_kind kind, double t, long line)
{
    tl_entry *e = add(L, kind, t, line);
    source(L, e, 0);
    return e;
}

static void take(loader *L, const js_member *event, double t, long line)
{
    ev_id id = EV_OTHER;
    tl_kind kind = TL_OTHER;
    for (size_t i = 0; i < sizeof events / sizeof *events; i++) {
        if (js_is(event, events[i].name)) {
            id = events[i].id;
            kind = events[i].kind;
            break;
        }
    }
    timeline_t *tl = L->tl;
    tl_entry *e;
    long long v;
    switch (id) {
    case EV_CREATED:
        as_is(L, TL_SESSION, t, line);
        if (!tl->created) {
            tl->session = int_of(get(L, "session"), 0);
            tl->name = js_string(get(L, "name"), NULL);
            tl->client = js_string(get(L, "client"), NULL);
            tl->workspace = js_string(get(L, "workspace"), NULL);
            if (!tl->workspace)
                tl->workspace = js_string(get(L, "cwd"), NULL);
            tl->created = t;
        }
        break;
    case EV_CMD_STARTED:
        e = new_command(L, int_of(get(L, "command"), 0), t, line);
        e->action = get(L, "by") != NULL;
        source(L, e, 0);
        break;
    case EV_CMD_ENDED: command_ended(L, t, line); break;
    case EV_CHANGES: command_changes(L, t, line); break;
    case EV_APPR_REQUESTED:
        v = 0;
        js_int(get(L, "approval"), &v);
        e = new_approval(L, v, t, line);
        source(L, e, 0);
        break;
    case EV_APPR_DECIDED: approval_decided(L, t, line); break;
    case EV_APPROVED: approved(L, t, line); break;
    case EV_NETWORK: {
        /* Written when the connection ends: it began duration_ms before. */
        double ms;
        if (!js_number(get(L, "duration_ms"), &ms) || ms < 0 || ms / 1000 > t)
            ms = 0;
        e = as_is(L, TL_NETWORK, t - ms / 1000, line);
        e->end = t;
        e->approved = !js_is(get(L, "decision"), "deny");
        const js_member *h = get(L, "host");
        if (h && h->type == 's') {
            e->host = h->val.p + 1;
            e->host_len = h->val.n - 2;
        }
        break;
    }
    case EV_ESCALATED:
        e = as_is(L, TL_ESCALATION, t, line);
        v = 0;
        js_int(get(L, "approval"), &v);
        e->number = (int)v;
        *imap_slot(&L->escalations, v, true) = tl->n - 1;
        break;
    case EV_ESC_ENDED: escalation_ended(L, t, line); break;
    case EV_KILLED:
        as_is(L, TL_EXIT, t, line);
        free(tl->killed_by);
        tl->killed_by = js_string(get(L, "reason"), NULL);
        break;
    case EV_EXITED:
        e = as_is(L, TL_EXIT, t, line);
        tl->exited = true;
        tl->exit_code = int_of(get(L, "code"), -1);
        free(tl->signal);
        tl->signal = js_string(get(L, "signal"), NULL);
        tl->ended = t;
        e->has_exit = true;
        e->exit_code = tl->exit_code;
        break;
    default: as_is(L, kind, t, line); break;
    }
}

/* ---- lines ---- */

static void parse_line(loader *L, const char *p, size_t n, long line, bool last_unterminated)
{
    char why[96];
    L->p = p;
    L->n = n;
    L->nm = js_scan_object(p, n, L->m, MAX_MEMBERS, why, sizeof why);
    if (L->nm > MAX_MEMBERS || n > 0xffffffffu) {
        warn(L->tl, "%s:%ld: an event of more than %d fields or 4 GiB: skipped", L->name, line, MAX_MEMBERS);
        return;
    }
    const js_member *event = L->nm >= 0 ? get(L, "event") : NULL;
    double t = L->nm >= 0 ? time_of(get(L, "time")) : -1;
    if (L->nm < 0 || !event || event->type != 's' || t < 0) {
        if (last_unterminated)
            warn(L->tl, "%s:%ld: the last line is cut short (written when corral stopped?): skipped", L->name, line);
        else if (L->nm < 0)
            warn(L->tl, "%s:%ld: not JSON (%s): skipped", L->name, line, why);
        else
            warn(L->tl, "%s:%ld: not an event (a JSON object with \"event\" and \"time\"): skipped", L->name, line);
        return;
    }
    take(L, event, t, line);
}

static bool blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return false;
    return true;
}

/* Each line of data: fn(L, p, len, line number, last line without newline). */
static void lines(loader *L, const char *data, size_t len,
                  void (*fn)(loader *L, const char *p, size_t n, long line, bool last_unterminated))
{
    const char *p = data, *end = data + len;
    long line = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        line++;
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (!blank(p, n))
            fn(L, p, n, line, !nl);
        p += n + 1;
    }
}

/* ---- approvals.jsonl ---- */

/* Does the line name approval id ("approval":ID followed by , or })? */
static bool names_approval(const char *p, size_t n, long long id)
{
    char needle[48];
    int k = snprintf(needle, sizeof needle, "\"approval\":%lld", id);
    const char *end = p + n;
    while (p < end) {
        const char *q = memmem(p, (size_t)(end - p), needle, (size_t)k);
        if (!q)
            return false;
        q += k;
        if (q < end && (*q == ',' || *q == '}'))
            return true;
        p = q;
    }
    return false;
}

static void approvals_line(loader *L, const char *p, size_t n, long line, bool last_unterminated)
{
    for (size_t i = 0; i < L->n_lookups; i++) {
        lookup *k = &L->lookups[i];
        if (!names_approval(p, n, k->id))
            continue;
        char why[96];
        L->nm = js_scan_object(p, n, L->m, MAX_MEMBERS, why, sizeof why);
        if (L->nm > MAX_MEMBERS || n > 0xffffffffu)
            L->nm = -1;
        double t = L->nm >= 0 ? time_of(get(L, "time")) : -1;
        long long id = -1;
        if (t < 0 || !js_int(get(L, "approval"), &id)) {
            warn(L->tl, "%s:%ld: %s: skipped", L->approvals_name, line,
                 last_unterminated ? "the last line is cut short" : "not an approval record");
            return;
        }
        if (id != k->id || t > k->before + 0.5)
            continue;
        /* Ids start again at 1 when the server restarts: the request and
         * answer are the last ones with this id before the session began. */
        const js_member *ev = get(L, "event");
        if (js_is(ev, "approval_requested")) {
            k->requested = p;
            k->requested_n = n;
            k->requested_t = t;
        } else if (js_is(ev, "approval_decided")) {
            k->decided = p;
            k->decided_n = n;
            k->decided_t = t;
        }
    }
}

static void join_approvals(loader *L, const char *data, size_t len, const char *name)
{
    if (!L->n_lookups)
        return;
    if (data) {
        L->approvals_name = name ? name : "approvals.jsonl";
        lines(L, data, len, approvals_line);
    }
    for (size_t i = 0; i < L->n_lookups; i++) {
        lookup *k = &L->lookups[i];
        tl_entry *e = &L->tl->entries[k->entry];
        if (k->requested && (!k->decided || k->requested_t <= k->decided_t)) {
            e->src[0] = k->requested;
            e->src_len[0] = (unsigned)k->requested_n;
            e->time = k->requested_t;
        }
        if (k->decided) {
            e->src[1] = k->decided;
            e->src_len[1] = (unsigned)k->decided_n;
            e->decided = true;
            e->end = k->decided_t;
            char why[8];
            L->nm = js_scan_object(k->decided, k->decided_n, L->m, MAX_MEMBERS, why, sizeof why); /* checked */
            e->approved = approved_answer(get(L, "answer"));
        }
    }
}

static int by_time(const void *a, const void *b)
{
    const tl_entry *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

void tl_load_mem(timeline_t *tl, char *data, size_t len, const char *name, char *approvals_data,
                 size_t approvals_len, const char *approvals_file)
{
    memset(tl, 0, sizeof *tl);
    tl->data = data;
    tl->approvals_data = approvals_data;
    loader *L = xcalloc(1, sizeof *L);
    L->tl = tl;
    L->name = name ? name : "events.jsonl";
    if (data)
        lines(L, data, len, parse_line);
    join_approvals(L, approvals_data, approvals_len, approvals_file);
    /* Mostly in order already: each entry is placed by its start. */
    bool sorted = true;
    for (size_t i = 1; i < tl->n && sorted; i++)
        sorted = by_time(&tl->entries[i - 1], &tl->entries[i]) <= 0;
    if (!sorted)
        qsort(tl->entries, tl->n, sizeof *tl->entries, by_time);
    imap_free(&L->commands);
    imap_free(&L->approvals);
    imap_free(&L->escalations);
    free(L->lookups);
    free(L);
}

/* The whole file; NULL with errno set. */
static char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int e = S_ISDIR(st.st_mode) ? EISDIR : errno ? errno : EINVAL;
        close(fd);
        errno = e;
        return NULL;
    }
    size_t cap = (size_t)st.st_size + 4096, n = 0;
    char *buf = xmalloc(cap);
    bool retried = false;
    for (;;) {
        if (n + 1 >= cap) {
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            errno = e;
            return NULL;
        }
        if (r == 0) {
            /* A live session's log may be read while the server appends
             * a line (a write reaches the file a page at a time): one more
             * look for the rest before a last line counts as cut short. */
            if (n && buf[n - 1] != '\n' && !retried) {
                retried = true;
                sched_yield();
                continue;
            }
            break;
        }
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *len = n;
    return buf;
}

int tl_load(timeline_t *tl, const char *path, const char *approvals, char *err, size_t errlen)
{
    memset(tl, 0, sizeof *tl);
    size_t len = 0, alen = 0;
    char *data = slurp(path, &len);
    if (!data) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    /* approvals.jsonl is read only when an entry needs it; a missing one
     * leaves those approvals with what the session's own log says. */
    char *adata = NULL;
    if (approvals && memmem(data, len, "\"event\":\"approved\"", 18))
        adata = slurp(approvals, &alen);
    tl_load_mem(tl, data, len, path, adata, alen, approvals);
    return 0;
}

void tl_free(timeline_t *tl)
{
    free(tl->entries);
    for (size_t i = 0; i < tl->n_warnings; i++)
        free(tl->warnings[i]);
    free(tl->name);
    free(tl->client);
    free(tl->workspace);
    free(tl->signal);
    free(tl->killed_by);
    free(tl->data);
    free(tl->approvals_data);
    memset(tl, 0, sizeof *tl);
}

/* ---- an entry as JSON ------------------------------------------------------------------ */

/* t as corral writes times (2026-11-29T07:41:25.035Z), without gmtime
 * and printf: a timeline writes hundreds of thousands. */
static void format_iso(char out[32], double t)
{
    if (!(t >= 0 && t < 253402300800.0)) { /* years 1970..9999 */
        iso_time(out, t < 0 ? 0 : t);
        return;
    }
    long long ms = (long long)(t * 1000 + 0.5);
    long long secs = ms / 1000, days = secs / 86400;
    int sod = (int)(secs % 86400);
    /* civil_from_days (Howard Hinnant's algorithm) */
    long long z = days + 719468, era = z / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long y = (long long)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    unsigned d = doy - (153 * mp + 2) / 5 + 1;
    unsigned m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    int v[7] = {(int)y, (int)m, (int)d, sod / 3600, sod / 60 % 60, sod % 60, (int)(ms % 1000)};
    static const int width[7] = {4, 2, 2, 2, 2, 2, 3};
    char *p = out;
    for (int i = 0; i < 7; i++) {
        for (int k = width[i] - 1, x = v[i]; k >= 0; k--, x /= 10)
            p[k] = (char)('0' + x % 10);
        p += width[i];
        *p++ = "--T::.Z"[i];
    }
    *p = '\0';
}

/* The writer of one entry's JSON: members separated by commas. */
typedef struct jw {
    buf_t *out;
} jw;

static void key(jw *w, const char *k)
{
    buf_printf(w->out, ",\"%s\":", k);
}

static void raw(jw *w, const char *k, js_span v)
{
    key(w, k);
    buf_append(w->out, v.p, v.n);
}

static void member(jw *w, const js_member *m)
{
    buf_puts(w->out, ",\"");
    buf_append(w->out, m->key.p, m->key.n);
    buf_puts(w->out, "\":");
    buf_append(w->out, m->val.p, m->val.n);
}

static void time_at(jw *w, const char *k, double t)
{
    char iso[32];
    format_iso(iso, t);
    buf_printf(w->out, ",\"%s\":\"%s\"", k, iso);
}

static void seconds(jw *w, const char *k, double d)
{
    buf_printf(w->out, ",\"%s\":%.3f", k, d);
}

static bool is(const js_member *m, const char *k)
{
    size_t n = strlen(k);
    return m->key.n == n && memcmp(m->key.p, k, n) == 0;
}

static bool any_of(const js_member *m, const char *const *keys)
{
    for (; *keys; keys++)
        if (is(m, *keys))
            return true;
    return false;
}

typedef struct scanned {
    js_member m[MAX_MEMBERS];
    int n;
} scanned;

static void scan_src(const tl_entry *e, int i, scanned *s)
{
    char why[8];
    /* Lines read in were checked: at most MAX_MEMBERS members. */
    s->n = e->src[i] ? js_scan_object(e->src[i], e->src_len[i], s->m, MAX_MEMBERS, why, sizeof why) : 0;
    if (s->n < 0 || s->n > MAX_MEMBERS)
        s->n = 0;
}

/* "time" of the event at src i as written, else t. */
static void entry_time(jw *w, const scanned *s, double t)
{
    const js_member *m = js_find(s->m, s->n, "time");
    if (m)
        raw(w, "time", m->val);
    else
        time_at(w, "time", t);
}

static void write_as_is(jw *w, const tl_entry *e)
{
    scanned s;
    scan_src(e, 0, &s);
    const js_member *ev = js_find(s.m, s.n, "event");
    bool network = e->kind == TL_NETWORK;
    for (int i = 0; i < s.n; i++) {
        const js_member *m = &s.m[i];
        if (is(m, "time") && network) {
            time_at(w, "time", e->time); /* its start; the event was written at its end */
            raw(w, "ended", m->val);
        } else if (is(m, "kind")) {
            /* The entry's own "kind" comes first: the event's is renamed
             * (created's kind, user or exec, is "session_kind"). */
            raw(w, js_is(ev, "created") ? "session_kind" : "event_kind", m->val);
        } else {
            member(w, m);
        }
    }
}

static void write_command(jw *w, const tl_entry *e)
{
    scanned st, ch;
    scan_src(e, 0, &st);
    scan_src(e, 2, &ch);
    entry_time(w, &st, e->time);
    buf_printf(w->out, ",\"command\":%d", e->number);
    const js_member *line = js_find(st.m, st.n, "line"), *cwd = js_find(st.m, st.n, "cwd"),
                    *by = js_find(st.m, st.n, "by");
    if (!line)
        line = js_find(ch.m, ch.n, "line");
    if (line)
        raw(w, "line", line->val);
    if (cwd)
        raw(w, "cwd", cwd->val);
    if (by)
        raw(w, "by", by->val);
    buf_printf(w->out, ",\"state\":\"%s\"", e->end > 0 ? "ended" : "running");
    if (e->has_exit)
        buf_printf(w->out, ",\"exit_code\":%d", e->exit_code);
    if (e->end > 0) {
        scanned en;
        scan_src(e, 1, &en);
        const js_member *t = js_find(en.m, en.n, "time");
        if (t)
            raw(w, "ended", t->val);
        else
            time_at(w, "ended", e->end);
        if (e->end >= e->time)
            seconds(w, "duration_seconds", e->end - e->time);
    }
    static const char *const skip[] = {"time", "event", "command", "line", "started", "ended", "exit_code",
                                       "state", "kind", "cwd", "duration_seconds", "by", NULL};
    for (int i = 0; i < ch.n; i++)
        if (!any_of(&ch.m[i], skip))
            member(w, &ch.m[i]);
}

static void write_approval(jw *w, const tl_entry *e)
{
    scanned rq, dc;
    scan_src(e, 0, &rq);
    scan_src(e, 1, &dc);
    entry_time(w, &rq, e->time);
    buf_printf(w->out, ",\"approval\":%d", e->number);
    if (e->src[0]) {
        /* The request as clients showed it, without the queue's fields. */
        static const char *const skip[] = {"time", "event", "approval", "id", "created", "age_seconds",
                                           "expires_in_seconds", NULL};
        key(w, "request");
        buf_putc(w->out, '{');
        size_t start = w->out->len;
        for (int i = 0; i < rq.n; i++)
            if (!any_of(&rq.m[i], skip))
                member(w, &rq.m[i]);
        if (w->out->len > start) { /* no comma before the first member */
            memmove(w->out->data + start, w->out->data + start + 1, w->out->len - start - 1);
            w->out->data[--w->out->len] = '\0';
        }
        buf_putc(w->out, '}');
    }
    if (e->src[2])
        buf_puts(w->out, ",\"starts_session\":true");
    /* The answer: from the decision, else from the session's start. */
    scanned ap;
    scan_src(e, 2, &ap);
    const js_member *answer = js_find(dc.m, dc.n, "answer");
    if (!answer)
        answer = js_find(ap.m, ap.n, "answer");
    if (answer)
        raw(w, "answer", answer->val);
    if (!e->src[1] && !answer)
        return;
    /* What the answer means: approved or denied (or neither), for how long. */
    static const struct {
        const char *answer, *decision, *scope;
    } meaning[] = {
        {"once", "approved", "once"},   {"session", "approved", "session"}, {"persist", "approved", "persist"},
        {"deny", "denied", "once"},     {"stop", "denied", "once"},         {"forbid", "denied", "persist"},
        {"timeout", "timed out", NULL}, {"gone", "withdrawn", NULL},
    };
    const char *decision = "unknown", *scope = NULL;
    for (size_t i = 0; answer && i < sizeof meaning / sizeof *meaning; i++) {
        if (js_is(answer, meaning[i].answer)) {
            decision = meaning[i].decision;
            scope = meaning[i].scope;
        }
    }
    buf_printf(w->out, ",\"decision\":\"%s\"", decision);
    if (scope)
        buf_printf(w->out, ",\"scope\":\"%s\"", scope);
    static const char *const copied[] = {"by", "key", "note", NULL};
    for (const char *const *k = copied; *k; k++) {
        const js_member *m = js_find(dc.m, dc.n, *k);
        if (m)
            raw(w, *k, m->val);
    }
    const js_member *t = js_find(dc.m, dc.n, "time");
    if (t)
        raw(w, "decided", t->val);
    if (e->src[0] && e->end >= e->time)
        seconds(w, "waited_seconds", e->end - e->time);
}

static void write_escalation(jw *w, const tl_entry *e)
{
    scanned st, en;
    scan_src(e, 0, &st);
    scan_src(e, 1, &en);
    if (e->src[0]) {
        write_as_is(w, e);
    } else {
        time_at(w, "time", e->time);
        buf_printf(w->out, ",\"approval\":%d", e->number);
    }
    if (!e->src[1])
        return;
    const js_member *status = js_find(en.m, en.n, "status"), *t = js_find(en.m, en.n, "time");
    if (status)
        raw(w, "status", status->val);
    if (e->has_exit)
        buf_printf(w->out, ",\"exit_code\":%d", e->exit_code);
    if (t)
        raw(w, "ended", t->val);
    if (e->end >= e->time)
        seconds(w, "duration_seconds", e->end - e->time);
}

void tl_entry_write_json(const tl_entry *e, buf_t *out)
{
    jw w = {.out = out};
    buf_printf(out, "{\"kind\":\"%s\"", tl_kind_name(e->kind));
    switch (e->kind) {
    case TL_COMMAND: write_command(&w, e); break;
    case TL_APPROVAL: write_approval(&w, e); break;
    case TL_ESCALATION: write_escalation(&w, e); break;
    default: write_as_is(&w, e); break;
    }
    buf_putc(out, '}');
}

json_t *tl_entry_json(const tl_entry *e)
{
    buf_t b;
    buf_init(&b);
    tl_entry_write_json(e, &b);
    json_error_t err;
    json_t *j = json_loadb(b.data, b.len, 0, &err);
    buf_free(&b);
    return j;
}
