/*
 * cli_log.c - corral log (docs/corral.1): a session's timeline from its
 * events.jsonl, as a table or JSON lines, filtered by kind, time and
 * text; without a session, the sessions recorded in the state directory,
 * live and ended, one line each.  Reads files only: works with no server
 * running (one that runs is asked which sessions are live).  The verb is
 * one entry (cli_verb.h) that cli.c lists.
 */
#include "config.h"

#include "cli/cli_records.h"
#include "cli/cli_verb.h"
#include "protocol/client.h"
#include "base/exitcode.h"
#include "base/paths.h"
#include "base/quote.h"
#include "record/sessfiles.h"
#include "record/timeline.h"
#include "base/util.h"
#include "base/width.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_LIMIT 20

typedef struct opts {
    bool json, color, all;
    long limit;
    tl_filter filter;
} opts;

/* ---- output -------------------------------------------------------------------------- */

#define C_OFF "\033[m"
#define C_BOLD "\033[1m"
#define C_DIM "\033[2m"
#define C_RED "\033[31m"
#define C_GREEN "\033[32m"
#define C_YELLOW "\033[33m"
#define C_BLUE "\033[34m"
#define C_MAGENTA "\033[35m"
#define C_CYAN "\033[36m"
#define C_ALERT "\033[1;31m"

/* Output gathered and written in large pieces: 100k lines must not cost
 * 100k writes. */
static buf_t out;

static void flush_out(bool force)
{
    if (out.len && (force || out.len >= 1 << 16)) {
        fwrite(out.data, 1, out.len, stdout);
        buf_reset(&out);
    }
}

/* JSON lines are written through quote_json_append: JSON escapes the C0
 * controls, but DEL, the C1 controls and the invisible characters a
 * session put in its log would reach a terminal raw. */
static buf_t json_scratch;

/* One JSON line of a tree into the output buffer. */
static void put_json(json_t *j)
{
    const size_t flags = JSON_COMPACT | JSON_PRESERVE_ORDER;
    buf_reset(&json_scratch);
    buf_reserve(&json_scratch, 4096);
    size_t room = json_scratch.cap - json_scratch.len - 1;
    size_t n = json_dumpb(j, json_scratch.data, room, flags);
    if (n > room) {
        buf_reserve(&json_scratch, n + 2);
        n = json_dumpb(j, json_scratch.data, json_scratch.cap - 1, flags);
    }
    quote_json_append(&out, json_scratch.data, n);
    buf_putc(&out, '\n');
}

/* A message on stderr that may quote a log (or a path in it). */
static void say(const char *what, const char *msg)
{
    char *v = quote_text_visible(msg, strlen(msg));
    fprintf(stderr, "corral: %s%s\n", what, v);
    free(v);
}

static void print_warnings(const timeline_t *tl, const char *path)
{
    for (size_t i = 0; i < tl->n_warnings; i++)
        say("warning: ", tl->warnings[i]);
    if (tl->skipped > tl->n_warnings) {
        char *msg = xasprintf("%zu more lines of %s could not be read and were skipped", tl->skipped - tl->n_warnings,
                              path);
        say("warning: ", msg);
        free(msg);
    }
}

/* The colour of an entry's kind: what needs a reviewer's eye is red. */
static const char *kind_colour(const tl_entry *e)
{
    switch (e->kind) {
    case TL_SESSION: return C_BOLD;
    case TL_COMMAND:
        if (e->action)
            return C_BLUE;
        if (e->risk)
            return C_ALERT;
        return e->has_exit && e->exit_code != 0 ? C_RED : C_GREEN;
    case TL_APPROVAL: return !e->decided ? C_YELLOW : e->approved ? C_GREEN : C_RED;
    case TL_NETWORK:
        /* Refused connections are those not allowed. */
        return e->approved ? C_CYAN : C_RED;
    case TL_ESCALATION: return C_MAGENTA;
    case TL_REFUSED:
    case TL_DENIAL: return C_RED;
    case TL_EXIT: return C_BOLD;
    case TL_WARNING: return C_YELLOW;
    default: return C_DIM;
    }
}

static void local_time(double t, char *date, size_t dlen, char *clock, size_t clen)
{
    time_t secs = (time_t)t;
    struct tm tm;
    localtime_r(&secs, &tm);
    strftime(date, dlen, "%Y-%m-%d", &tm);
    strftime(clock, clen, "%H:%M:%S", &tm);
}

static void print_header(const timeline_t *tl, const opts *o)
{
    buf_t b;
    buf_init(&b);
    char date[32] = "", clock[32] = "";
    if (tl->created > 0)
        local_time(tl->created, date, sizeof date, clock, sizeof clock);
    buf_printf(&b, "%ssession %d", o->color ? C_BOLD : "", tl->session);
    if (tl->name) {
        char *v = quote_text_visible(tl->name, strlen(tl->name));
        buf_printf(&b, " (%s)", v);
        free(v);
    }
    buf_printf(&b, "%s", o->color ? C_OFF : "");
    if (tl->client) {
        char *v = quote_text_visible(tl->client, strlen(tl->client));
        buf_printf(&b, " by %s", v);
        free(v);
    }
    if (tl->workspace) {
        char *v = quote_text_visible(tl->workspace, strlen(tl->workspace));
        buf_printf(&b, " in %s", v);
        free(v);
    }
    if (tl->created > 0)
        buf_printf(&b, ", started %s %s", date, clock);
    if (tl->exited && tl->signal) {
        char *v = quote_text_visible(tl->signal, strlen(tl->signal));
        buf_printf(&b, ", killed by %s", v);
        free(v);
    } else if (tl->exited) {
        buf_printf(&b, ", exited with code %d", tl->exit_code);
    }
    buf_puts(&out, b.data);
    buf_putc(&out, '\n');
    buf_free(&b);
}

static void print_entries(const timeline_t *tl, const opts *o)
{
    char last_date[32] = "", scratch[64];
    if (!o->json)
        print_header(tl, o);
    if (tl->created > 0)
        local_time(tl->created, last_date, sizeof last_date, scratch, sizeof scratch);
    for (size_t i = 0; i < tl->n; i++) {
        const tl_entry *e = &tl->entries[i];
        if (!tl_match(e, &o->filter))
            continue;
        if (o->json) {
            buf_reset(&json_scratch);
            tl_entry_write_json(e, &json_scratch);
            quote_json_append(&out, json_scratch.data, json_scratch.len);
            buf_putc(&out, '\n');
            flush_out(false);
            continue;
        }
        char date[32], clock[32];
        local_time(e->time, date, sizeof date, clock, sizeof clock);
        if (strcmp(date, last_date) != 0) {
            buf_printf(&out, "-- %s --\n", date);
            snprintf(last_date, sizeof last_date, "%s", date);
        }
        char *text = tl_entry_text(tl, e);
        buf_printf(&out, "%s  %s%-10s%s %s\n", clock, o->color ? kind_colour(e) : "", tl_kind_name(e->kind),
                   o->color ? C_OFF : "", text);
        free(text);
        flush_out(false);
    }
    flush_out(true);
}

/* ---- one session ------------------------------------------------------------------------ */

static int one_session(const char *arg, const opts *o)
{
    char ferr[1024];
    if (cli_records_remote() && cli_records_fetch(arg, false, ferr, sizeof ferr) < 0) {
        say("", ferr);
        return EXIT_ERR;
    }
    sessfiles f;
    sessfiles_for(arg, &f);
    timeline_t tl;
    char err[PATH_MAX + 200];
    int rc = 0;
    struct stat st;
    bool missing = f.by_name && stat(f.events, &st) < 0 && errno == ENOENT;
    if (missing || tl_load(&tl, f.events, f.approvals, err, sizeof err) < 0) {
        if (missing) {
            fprintf(stderr, "corral: no session %s is recorded in %s/sessions (corral log lists the sessions)\n",
                    arg, f.state);
            memset(&tl, 0, sizeof tl);
        } else {
            say("", err);
        }
        rc = EXIT_ERR;
    } else {
        print_warnings(&tl, f.events);
        print_entries(&tl, o);
    }
    tl_free(&tl);
    sessfiles_free(&f);
    return rc;
}

/* ---- the sessions ------------------------------------------------------------------------- */

/* The ids of the sessions a running server has running now (none when
 * no server runs: it is not started for this). */
static json_t *live_sessions(void)
{
    json_t *ids = json_object();
    client_t c;
    char err[1024];
    if (client_connect(&c, "log", false, err, sizeof err) < 0)
        return ids;
    json_t *r = client_call(&c, json_pack("{s:s}", "cmd", "ls"), NULL, NULL, err, sizeof err);
    client_close(&c);
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(r, "sessions"), i, s) {
        const char *state = json_string_value(json_object_get(s, "state"));
        if (state && strcmp(state, "running") == 0) {
            char id[32];
            snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(s, "id")));
            json_object_set_new(ids, id, json_true());
        }
    }
    json_decref(r);
    return ids;
}

static json_t *summary_json(const char *name, const char *dir, const timeline_t *tl, bool live)
{
    tl_summary s;
    tl_summarize(tl, &s);
    json_t *o = json_pack("{s:s, s:i}", "session", name, "id", tl->session);
    json_t *created = NULL;
    for (size_t i = 0; i < tl->n && !created; i++)
        if (tl->entries[i].kind == TL_SESSION)
            created = tl_entry_json(&tl->entries[i]);
    static const char *const copied[] = {"name", "client", "workspace", "cwd", "command", "profile", NULL};
    for (const char *const *k = copied; *k && created; k++) {
        json_t *v = json_object_get(created, *k);
        if (v)
            json_object_set(o, *k, v);
    }
    if (created && !json_object_get(o, "workspace") && json_object_get(o, "cwd"))
        json_object_set(o, "workspace", json_object_get(o, "cwd"));
    json_decref(created);
    char when[32];
    if (tl->created > 0) {
        iso_time(when, tl->created);
        json_object_set_new(o, "created", json_string(when));
    }
    if (live) {
        json_object_set_new(o, "state", json_string("running"));
    } else if (tl->exited) {
        json_object_set_new(o, "state", json_string("exited"));
        json_object_set_new(o, "exit_code", json_integer(tl->exit_code));
        if (tl->signal)
            json_object_set_new(o, "signal", json_string(tl->signal));
        if (tl->killed_by)
            json_object_set_new(o, "killed_by", json_string(tl->killed_by));
        iso_time(when, tl->ended);
        json_object_set_new(o, "ended", json_string(when));
    } else {
        /* No end in the log and not running: the server stopped first. */
        json_object_set_new(o, "state", json_string("ended"));
    }
    json_object_set_new(o, "commands", json_integer(s.commands));
    json_object_set_new(o, "approvals", json_integer(s.approvals));
    json_object_set_new(o, "connections", json_integer(s.connections));
    json_object_set_new(o, "hosts", json_integer(s.hosts));
    json_object_set_new(o, "changes", json_pack("{s:i, s:i, s:i, s:i}", "added", (int)s.added, "modified",
                                                 (int)s.modified, "deleted", (int)s.deleted, "not_captured",
                                                 (int)s.missed));
    json_object_set_new(o, "risky_commands", json_integer(s.risky));
    json_object_set_new(o, "skipped_lines", json_integer((json_int_t)tl->skipped));
    json_object_set_new(o, "dir", json_string(dir));
    return o;
}

/* text in a column of w terminal columns, its invisible characters shown. */
static char *column(const char *text, int w)
{
    char *clean = quote_text_visible(text ? text : "", text ? strlen(text) : 0);
    int used;
    size_t n = uc_text_fit(clean, strlen(clean), w, &used);
    char *o = xasprintf("%.*s%*s", (int)n, clean, w - used, "");
    free(clean);
    return o;
}

/* How a session ended, in words: a session corral ended on purpose (you
 * killed it, the server stopped) is no failure and does not read as one. */
static void state_text(json_t *s, char *st, size_t len)
{
    const char *state = json_string_value(json_object_get(s, "state"));
    const char *by = json_string_value(json_object_get(s, "killed_by"));
    if (strcmp(state, "exited") == 0 && by && strcmp(by, "user") == 0)
        snprintf(st, len, "killed by you");
    else if (strcmp(state, "exited") == 0 && by && strcmp(by, "shutdown") == 0)
        snprintf(st, len, "server stopped");
    else if (strcmp(state, "exited") == 0 && json_object_get(s, "signal")) {
        char *sig = column(json_string_value(json_object_get(s, "signal")), 12);
        snprintf(st, len, "killed %s", sig);
        free(sig);
        size_t n = strlen(st);
        while (n > 0 && st[n - 1] == ' ')
            st[--n] = '\0';
    } else if (strcmp(state, "exited") == 0)
        snprintf(st, len, "exited %lld", (long long)json_integer_value(json_object_get(s, "exit_code")));
    else if (strcmp(state, "ended") == 0)
        snprintf(st, len, "ended ?");
    else
        snprintf(st, len, "%s", state);
}

/* The list of sessions as a table whose columns are as wide as what they
 * hold (NAME and CLIENT cut at 24 and 12 columns), most recent first. */
enum { COL_SESSION, COL_STATE, COL_STARTED, COL_CLIENT, COL_CMDS, COL_APPR, COL_HOSTS, COL_CHANGES, COL_NAME,
       COL_WS, NCOLS };

typedef struct table_row {
    char *col[NCOLS];
    bool running, risky;
} table_row;

static void add_summary_row(table_row **rows, size_t *n, json_t *s)
{
    table_row r = {0};
    char st[48];
    state_text(s, st, sizeof st);
    r.col[COL_SESSION] = xstrdup(json_string_value(json_object_get(s, "session")));
    r.col[COL_STATE] = xstrdup(st);
    char started[32] = "";
    double created = tl_iso_time(json_string_value(json_object_get(s, "created")));
    if (created > 0) {
        time_t secs = (time_t)created;
        struct tm tm;
        localtime_r(&secs, &tm);
        strftime(started, sizeof started, "%Y-%m-%d %H:%M", &tm);
    }
    r.col[COL_STARTED] = xstrdup(started);
    json_t *ch = json_object_get(s, "changes");
    json_int_t missed = json_integer_value(json_object_get(ch, "not_captured"));
    char mark[48] = "";
    if (missed)
        snprintf(mark, sizeof mark, " (%lld not captured)", (long long)missed);
    r.risky = json_integer_value(json_object_get(s, "risky_commands")) != 0;
    r.col[COL_CHANGES] = xasprintf("+%lld ~%lld -%lld%s%s", (long long)json_integer_value(json_object_get(ch, "added")),
                                   (long long)json_integer_value(json_object_get(ch, "modified")),
                                   (long long)json_integer_value(json_object_get(ch, "deleted")), mark,
                                   r.risky ? " RISK" : "");
    r.col[COL_CMDS] = xasprintf("%lld", (long long)json_integer_value(json_object_get(s, "commands")));
    r.col[COL_APPR] = xasprintf("%lld", (long long)json_integer_value(json_object_get(s, "approvals")));
    r.col[COL_HOSTS] = xasprintf("%lld", (long long)json_integer_value(json_object_get(s, "hosts")));
    const char *client = json_string_value(json_object_get(s, "client"));
    const char *name = json_string_value(json_object_get(s, "name"));
    int cw = client ? uc_text_width(client, strlen(client)) : 0, nw = name ? uc_text_width(name, strlen(name)) : 0;
    r.col[COL_CLIENT] = column(client, cw < 12 ? cw : 12);
    r.col[COL_NAME] = column(name, nw < 24 ? nw : 24);
    const char *ws = json_string_value(json_object_get(s, "workspace"));
    r.col[COL_WS] = quote_text_visible(ws ? ws : "", ws ? strlen(ws) : 0);
    r.running = strcmp(json_string_value(json_object_get(s, "state")), "running") == 0;
    *rows = xrealloc(*rows, (*n + 1) * sizeof **rows);
    (*rows)[(*n)++] = r;
}

static void print_table(table_row *rows, size_t n, const opts *o)
{
    static const char *const head[NCOLS] = {"SESSION", "STATE",  "STARTED", "CLIENT", "CMDS",
                                            "APPR",    "HOSTS", "CHANGES", "NAME",   "WORKSPACE"};
    static const bool right[NCOLS] = {[COL_CMDS] = true, [COL_APPR] = true, [COL_HOSTS] = true};
    int w[NCOLS];
    for (int c = 0; c < NCOLS; c++) {
        w[c] = uc_text_width(head[c], strlen(head[c]));
        for (size_t i = 0; i < n; i++) {
            int cw = uc_text_width(rows[i].col[c], strlen(rows[i].col[c]));
            if (cw > w[c])
                w[c] = cw;
        }
    }
    for (size_t i = 0; i <= n; i++) {
        for (int c = 0; c < NCOLS; c++) {
            const char *text = i == 0 ? head[c] : rows[i - 1].col[c];
            int pad = w[c] - uc_text_width(text, strlen(text));
            const char *on = "", *off = "";
            if (i > 0 && o->color && ((c == COL_STATE && rows[i - 1].running) ||
                                      (c == COL_CHANGES && rows[i - 1].risky))) {
                on = c == COL_STATE ? C_GREEN : C_ALERT;
                off = C_OFF;
            }
            if (c == NCOLS - 1)
                buf_printf(&out, "%s%s%s\n", on, text, off);
            else if (right[c])
                buf_printf(&out, "%*s%s%s%s  ", pad, "", on, text, off);
            else
                buf_printf(&out, "%s%s%s%*s  ", on, text, off, pad, "");
        }
    }
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < NCOLS; c++)
            free(rows[i].col[c]);
    free(rows);
}

static int list_sessions(const opts *o)
{
    if (o->filter.kinds) {
        fprintf(stderr, "corral log: --kind goes with a session: corral log --kind KIND SESSION\n");
        return EXIT_USAGE;
    }
    char err0[PATH_MAX + 200];
    if (cli_records_remote() && cli_records_list(err0, sizeof err0) < 0) {
        say("", err0);
        return EXIT_ERR;
    }
    char *state = paths_state_dir(), *root = NULL;
    sessfiles_rec *recs;
    size_t n;
    if (sessfiles_list(o->filter.since, &recs, &n, &root, err0, sizeof err0) < 0) {
        say("", err0);
        free(root);
        free(state);
        return EXIT_ERR;
    }
    json_t *live = live_sessions();
    char *approvals = xasprintf("%s/approvals.jsonl", state);
    table_row *rows = NULL;
    size_t nrows = 0;
    long shown = 0;
    for (size_t i = 0; i < n && (o->all || shown < o->limit); i++) {
        char *dir = xasprintf("%s/%s", root, recs[i].name);
        char *events = xasprintf("%s/events.jsonl", dir);
        timeline_t tl;
        memset(&tl, 0, sizeof tl);
        char err[PATH_MAX + 200];
        int copied = cli_records_remote() ? cli_records_fetch(recs[i].name, false, err, sizeof err) : 0;
        if (copied == 0 && tl_load(&tl, events, approvals, err, sizeof err) == 0) {
            print_warnings(&tl, events);
            bool is_live = !tl.exited && strchr(recs[i].name, '.') == NULL && json_object_get(live, recs[i].name);
            json_t *s = summary_json(recs[i].name, dir, &tl, is_live);
            bool match = !o->filter.grep || !*o->filter.grep;
            if (!match) {
                const tl_filter f = o->filter;
                match = tl_json_has_text(s, f.grep, f.ignore_case);
            }
            if (match) {
                shown++;
                if (o->json) {
                    put_json(s);
                } else {
                    add_summary_row(&rows, &nrows, s);
                }
            }
            json_decref(s);
        } else {
            say("", err);
        }
        tl_free(&tl);
        free(events);
        free(dir);
        flush_out(false);
    }
    char *place = cli_records_place(root);
    if (!o->json && nrows) {
        buf_printf(&out, "Sessions recorded in %s, most recent first:\n", place);
        print_table(rows, nrows, o);
    } else {
        free(rows);
    }
    if (!o->json && !n)
        buf_printf(&out, "no sessions are recorded in %s%s\n", place, o->filter.since > 0 ? " since then" : "");
    else if (!o->json && !o->all && shown == o->limit && n > (size_t)shown)
        buf_printf(&out, "(%zu more: corral log --all)\n", n - (size_t)shown);
    flush_out(true);
    json_decref(live);
    free(recs);
    free(approvals);
    free(place);
    free(root);
    free(state);
    return 0;
}

/* ---- corral log ---------------------------------------------------------------------------- */

static int verb_log(const cli_verb *v, int argc, char **argv)
{
    enum { O_COLOR = 0x100 };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},         {"since", required_argument, NULL, 's'},
        {"grep", required_argument, NULL, 'g'},   {"ignore-case", no_argument, NULL, 'i'},
        {"kind", required_argument, NULL, 'k'},   {"color", required_argument, NULL, O_COLOR},
        {"limit", required_argument, NULL, 'n'},  {"all", no_argument, NULL, 'a'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    opts o = {.limit = DEFAULT_LIMIT};
    const char *when = "auto";
    char err[1024];
    int ch;
    while ((ch = getopt_long(argc, argv, "js:g:ik:n:ah", longopts, NULL)) != -1) {
        switch (ch) {
        case 'j': o.json = true; break;
        case 's':
            if (tl_parse_time(optarg, wall_sec(), &o.filter.since, err, sizeof err) < 0)
                return cli_usage_error(v, "--since: %s", err);
            break;
        case 'g': o.filter.grep = optarg; break;
        case 'i': o.filter.ignore_case = true; break;
        case 'k':
            if (tl_parse_kinds(optarg, &o.filter.kinds, err, sizeof err) < 0)
                return cli_usage_error(v, "--kind: %s", err);
            break;
        case O_COLOR: when = optarg; break;
        case 'n': {
            char *end;
            errno = 0;
            o.limit = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || o.limit < 1)
                return cli_usage_error(v, "--limit takes a number of sessions (1 or more), not '%s'", optarg);
            break;
        }
        case 'a': o.all = true; break;
        case 'h': return cli_print_help(v);
        default: return cli_option_usage(v);
        }
    }
    if (strcmp(when, "always") == 0) {
        o.color = true;
    } else if (strcmp(when, "auto") == 0) {
        const char *nc = getenv("NO_COLOR");
        o.color = isatty(STDOUT_FILENO) && !(nc && *nc);
    } else if (strcmp(when, "never") != 0) {
        return cli_usage_error(v, "--color takes always, never or auto, not '%s'", when);
    }
    if (o.json)
        o.color = false;
    if (argc - optind > 1)
        return cli_usage_error(v, "unexpected argument '%s'", argv[optind + 1]);
    buf_init(&out);
    buf_init(&json_scratch);
    int rc;
    if (optind == argc) {
        rc = list_sessions(&o);
    } else {
        const char *arg = argv[optind];
        if (!strchr(arg, '/') && !sessfiles_name_ok(arg))
            rc = cli_usage_error(v, "'%s' is not a session: give its id (7), an older session with that id (7.1) "
                                    "or its directory; corral log lists them",
                                 arg);
        else
            rc = one_session(arg, &o);
    }
    buf_free(&out);
    buf_free(&json_scratch);
    return rc;
}

const cli_verb cli_verb_log = {
    .name = "log",
    .usage = "log [--json] [--since TIME] [--grep TEXT [-i]] [--kind KIND[,KIND...]] [--color WHEN] [-n N | --all] "
             "[SESSION]",
    .help = "Show what happened in a session, in time order: its start, every command (its\n"
            "number as corral diff numbers it, exit status, duration, files added, modified\n"
            "and deleted, RISK when its changes carry risk marks), approvals (the request,\n"
            "the answer, who gave it, the key, the note), network connections (host, port,\n"
            "decision, bytes), escalations, refusals, sandbox denials, resizes and its end.\n"
            "SESSION is a session id (7; an older session that had the same id: 7.1, 7.2),\n"
            "or a session's directory.  Without SESSION: the sessions recorded, live and\n"
            "ended, most recent first, each with its client, commands, approvals, hosts and\n"
            "summed changes (+A ~M -D).  Only files are read: no server needs to run.\n\n"
            "  -j, --json         one JSON object per line (docs/formats.md)\n"
            "  -s, --since TIME   only what began at or after TIME: ISO 8601 (2026-11-29,\n"
            "                     2026-11-29T07:41:25Z; local time without a zone) or an\n"
            "                     age (45s, 10m, 2h, 3d, 1w); sessions active since TIME\n"
            "  -g, --grep TEXT    only entries (or sessions) whose text contains TEXT\n"
            "  -i, --ignore-case  --grep ignores case\n"
            "  -k, --kind KINDS   only these kinds (repeatable, or commas): session, command,\n"
            "                     approval, network, escalation, refused, denial, resize,\n"
            "                     exit, warning, other\n"
            "      --color WHEN   always, never or auto (default: on a terminal, unless\n"
            "                     NO_COLOR is set)\n"
            "  -n, --limit N      list at most N sessions (default 20)\n"
            "  -a, --all          list every session recorded\n"
            "A line of the log that cannot be read (one cut short by a crash) is skipped\n"
            "with a warning naming the file and line.\n",
    .run = verb_log,
    .where = CLI_FILES,
};
