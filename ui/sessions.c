/*
 * sessions.c - see sessions.h.
 */
#include "config.h"

#include "sessions.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define IDLE_AFTER 10.0

double ui_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void ui_sessions_init(ui_sessions *l)
{
    memset(l, 0, sizeof *l);
    l->max = 64;
}

static void session_free(ui_session *s)
{
    free(s->name);
    free(s->client);
    free(s->profile);
    free(s->status);
    free(s->title);
    free(s->cwd);
    free(s->command);
    if (s->vt)
        vt_free(s->vt);
    free(s);
}

void ui_sessions_free(ui_sessions *l)
{
    for (size_t i = 0; i < l->n; i++)
        session_free(l->v[i]);
    free(l->v);
    ui_sessions_init(l);
}

ui_session *ui_sessions_find(const ui_sessions *l, int id)
{
    int i = ui_sessions_index(l, id);
    return i < 0 ? NULL : l->v[i];
}

int ui_sessions_index(const ui_sessions *l, int id)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i]->id == id)
            return (int)i;
    return -1;
}

int ui_sessions_live(const ui_sessions *l)
{
    int n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->v[i]->running;
    return n;
}

bool ui_session_foldable(const ui_session *s)
{
    /* Your own corral exec runs too: a one-shot is a one-shot. */
    return !s->running && s->exec;
}

bool ui_session_idle(const ui_session *s, double now)
{
    return s->running && now - s->output_at >= IDLE_AFTER;
}

/* Text of a string field, sanitised for the screen (the server already
 * bounds and cleans names and titles; this is the second lock). */
static char *field(json_t *o, const char *key, const char *dflt)
{
    const char *v = json_string_value(json_object_get(o, key));
    if (!v)
        v = dflt;
    return sanitize_text(v, strlen(v), 256);
}

static char *command_line(json_t *argv)
{
    buf_t b;
    buf_init(&b);
    size_t i;
    json_t *a;
    json_array_foreach(argv, i, a) {
        const char *s = json_string_value(a);
        if (!s)
            continue;
        if (b.len)
            buf_putc(&b, ' ');
        buf_puts(&b, s);
    }
    char *clean = sanitize_text(b.data ? b.data : "", b.len, 512);
    buf_free(&b);
    return clean;
}

static void fill(ui_session *s, json_t *o)
{
    double now = ui_now();
    free(s->name);
    free(s->client);
    free(s->profile);
    free(s->status);
    free(s->title);
    free(s->cwd);
    free(s->command);
    s->id = (int)json_integer_value(json_object_get(o, "id"));
    s->name = field(o, "name", "?");
    s->client = field(o, "client", "user");
    s->profile = field(o, "profile", "");
    s->status = field(o, "status", "");
    s->title = field(o, "title", "");
    s->cwd = field(o, "cwd", "");
    s->command = command_line(json_object_get(o, "command"));
    const char *state = json_string_value(json_object_get(o, "state"));
    s->running = !state || strcmp(state, "running") == 0;
    s->pinned = json_is_true(json_object_get(o, "pinned"));
    s->tty = json_is_true(json_object_get(o, "tty"));
    const char *kind = json_string_value(json_object_get(o, "kind"));
    s->exec = kind && strcmp(kind, "exec") == 0;
    s->exit_code = (int)json_integer_value(json_object_get(o, "exit_code"));
    const char *by = json_string_value(json_object_get(o, "killed_by"));
    s->ended_on_purpose = by && (strcmp(by, "user") == 0 || strcmp(by, "shutdown") == 0);
    s->rows = (int)json_integer_value(json_object_get(o, "rows"));
    s->cols = (int)json_integer_value(json_object_get(o, "cols"));
    s->use = (long long)json_integer_value(json_object_get(o, "use"));
    s->created_at = now - json_number_value(json_object_get(o, "age_seconds"));
    s->output_at = now - json_number_value(json_object_get(o, "output_age_seconds"));
    s->connections = (int)json_integer_value(json_object_get(o, "connections"));
    s->seen = true;
}

/* Sidebar order: this machine's sessions, then each other machine's in
 * the order of [hosts]; within one, groups by client, the group with the
 * most recent session first; most recently used first within a group. */
static long long group_use(const ui_sessions *l, const char *client)
{
    long long best = -1;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i]->client, client) == 0 && l->v[i]->use > best)
            best = l->v[i]->use;
    return best;
}

static void sort(ui_sessions *l)
{
    long long *gu = xcalloc(l->n ? l->n : 1, sizeof *gu);
    for (size_t i = 0; i < l->n; i++)
        gu[i] = group_use(l, l->v[i]->client);
    for (size_t i = 1; i < l->n; i++) {
        for (size_t j = i; j > 0; j--) {
            ui_session *a = l->v[j - 1], *b = l->v[j];
            int ha = a->id / UI_SESSIONS_HOST_STRIDE, hb = b->id / UI_SESSIONS_HOST_STRIDE;
            int c = ha != hb ? (ha > hb ? 1 : -1)
                    : gu[j - 1] != gu[j] ? (gu[j - 1] < gu[j] ? 1 : -1) : strcmp(a->client, b->client);
            if (c == 0)
                c = a->use < b->use ? 1 : a->use > b->use ? -1 : 0;
            if (c <= 0)
                break;
            l->v[j - 1] = b;
            l->v[j] = a;
            long long t = gu[j - 1];
            gu[j - 1] = gu[j];
            gu[j] = t;
        }
    }
    free(gu);
}

ui_session *ui_sessions_update(ui_sessions *l, json_t *o)
{
    int id = (int)json_integer_value(json_object_get(o, "id"));
    ui_session *s = ui_sessions_find(l, id);
    if (!s) {
        s = xcalloc(1, sizeof *s);
        l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
        l->v[l->n++] = s;
    }
    fill(s, o);
    sort(l);
    return s;
}

void ui_sessions_remove(ui_sessions *l, int id)
{
    int i = ui_sessions_index(l, id);
    if (i < 0)
        return;
    session_free(l->v[i]);
    memmove(&l->v[i], &l->v[i + 1], (l->n - (size_t)i - 1) * sizeof *l->v);
    l->n--;
}

void ui_sessions_load_host(ui_sessions *l, json_t *reply, int host)
{
    for (size_t i = 0; i < l->n; i++)
        l->v[i]->seen = l->v[i]->id / UI_SESSIONS_HOST_STRIDE != host;
    size_t k;
    json_t *o;
    json_array_foreach(json_object_get(reply, "sessions"), k, o)
        ui_sessions_update(l, o);
    for (size_t i = l->n; i-- > 0;)
        if (!l->v[i]->seen)
            ui_sessions_remove(l, l->v[i]->id);
    json_t *max = json_object_get(reply, "max");
    if (json_is_integer(max) && host == 0)
        l->max = (int)json_integer_value(max);
}
