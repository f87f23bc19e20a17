/*
 * diffview.c - see diffview.h.
 */
#include "config.h"

#include "diffview.h"

#include "base/utf8.h"
#include "base/util.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A file's patch longer than this is folded until opened. */
#define FOLD_LINES 400
#define RISK_ROWS 3

enum { L_NOTE, L_FILE, L_META, L_HUNK, L_ADD, L_DEL, L_CTX, L_FOLD };

typedef struct dv_line {
    char *text;
    unsigned char kind;
    int file; /* index into files, -1: none */
} dv_line;

typedef enum { V_LIST, V_DIFF } dv_page;

typedef struct diff_view {
    ui_view view; /* first: the view's head */
    tui_t *t;
    dv_page page;
    bool from_list;
    int session;
    unsigned gen;      /* replies of an older request are dropped */
    bool loading;
    char error[400];
    /* the list */
    json_t *commands;
    int sel, list_top;
    /* the diff */
    int command;
    json_t *reply;
    dv_line *lines;
    int nlines;
    int top;
    bool *unfolded;
    int nfiles;
    bool shown_space;   /* the diff on the screen was made so */
    /* search */
    bool prompting;
    char typed[256];
    int match;
    /* a session the server no longer has (an ended one, from its log) */
    bool by_ids;       /* its diffs come from the snapshot ids its log recorded */
    json_t *record;    /* the command's record from the log */
    /* revert */
    bool confirming, reverting;
    json_t *plan;
    int revert_n;
} diff_view;

/* Kept from one diff view to the next: w's whitespace setting, and the
 * last query of / (Enter on an empty one finds it again). */
static struct {
    bool ignore_space;
    char search[256];
} kept;

/* Every request's number: a reply to one that is not its view's latest
 * (or whose view has closed) is dropped. */
static unsigned gens;

static const ui_view_ops diff_ops;

/* ---- requests ------------------------------------------------------------------ */

typedef struct dv_req {
    tui_t *t;
    unsigned gen;
} dv_req;

static dv_req *req_new(diff_view *d)
{
    dv_req *r = xcalloc(1, sizeof *r);
    r->t = d->t;
    r->gen = d->gen = ++gens;
    d->loading = true;
    d->error[0] = '\0';
    return r;
}

/* The diff view a request was made for, while it is open, or NULL. */
static diff_view *req_view(const dv_req *r)
{
    return (diff_view *)view_find(r->t, &diff_ops);
}

/* The reply is for what is on the screen now: its view (else dropped:
 * NULL). */
static diff_view *req_current(dv_req *r, json_t *reply)
{
    tui_t *t = r->t;
    diff_view *d = req_view(r);
    bool current = d && r->gen == d->gen;
    free(r);
    if (!current)
        return NULL;
    d->loading = false;
    const char *msg = json_string_value(json_object_get(json_object_get(reply, "error"), "message"));
    if (!reply || msg) {
        char *clean = sanitize_text(msg ? msg : "lost the server", strlen(msg ? msg : "lost the server"), 300);
        snprintf(d->error, sizeof d->error, "%s", clean);
        free(clean);
        if (d->by_ids && !d->reply) {
            /* An ended session's diff the server cannot make: said where
             * the key was pressed, rather than in an empty view. */
            tui_message(t, true, "no diff of command %d of session %s: %s", d->command, hosts_id(t, d->session),
                        d->error);
            view_close(t, &d->view);
            return NULL;
        }
        t->full_redraw = true;
        tui_redraw_soon(t);
        return NULL;
    }
    t->full_redraw = true;
    tui_redraw_soon(t);
    return d;
}

static void clear_lines(diff_view *d)
{
    for (int i = 0; i < d->nlines; i++)
        free(d->lines[i].text);
    free(d->lines);
    d->lines = NULL;
    d->nlines = 0;
}

static void push_line(diff_view *d, const char *text, size_t len, int kind, int file)
{
    /* Tabs to spaces, other control characters shown as '?' (paint does). */
    buf_t b;
    buf_init(&b);
    int col = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\t') {
            do
                buf_putc(&b, ' ');
            while (++col % 8);
        } else if (text[i] != '\r') {
            buf_putc(&b, text[i]);
            col++;
        }
    }
    d->lines = xrealloc(d->lines, (size_t)(d->nlines + 1) * sizeof *d->lines);
    d->lines[d->nlines++] = (dv_line){b.data ? buf_steal(&b) : xstrdup(""), (unsigned char)kind, file};
    buf_free(&b);
}

static void push_text(diff_view *d, const char *text, int kind, int file)
{
    push_line(d, text, strlen(text), kind, file);
}

static const char *status_word(const char *st)
{
    switch (st[0]) {
    case 'A': return "added";
    case 'D': return "deleted";
    case 'R': return "renamed";
    case 'T': return "type changed";
    default: return "modified";
    }
}

/* The patch pane's lines from the reply: notes (not captured), then each
 * file's header and patch (folded when long and not opened). */
static void build_lines(diff_view *d)
{
    clear_lines(d);
    json_t *changes = json_object_get(d->reply, "changes");
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(changes, "not_captured"), i, m) {
        char text[600];
        json_int_t size = json_integer_value(json_object_get(m, "size"));
        json_int_t files = json_integer_value(json_object_get(m, "files"));
        char h[32] = "";
        if (size)
            format_bytes((double)size, true, h, sizeof h);
        snprintf(text, sizeof text, "not captured: %s (%s%s%s)", json_string_value(json_object_get(m, "path")),
                 json_string_value(json_object_get(m, "reason")), size ? ", " : files ? ", new files: " : "",
                 size ? h : "");
        if (files)
            snprintf(text + strlen(text) - 1, sizeof text - strlen(text) + 1, "%lld)", (long long)files);
        push_text(d, text, L_NOTE, -1);
    }
    json_t *files = json_object_get(d->reply, "files");
    json_t *f;
    json_array_foreach(files, i, f) {
        const char *path = json_string_value(json_object_get(f, "path"));
        const char *st = json_string_value(json_object_get(f, "status"));
        char head[1200];
        snprintf(head, sizeof head, "%s %s", status_word(st), path);
        push_text(d, head, L_FILE, (int)i);
        const char *patch = json_string_value(json_object_get(f, "patch"));
        if (json_is_true(json_object_get(f, "large"))) {
            push_text(d, "  (too large to be captured: size and time only, no content)", L_NOTE, (int)i);
            continue;
        }
        if (!patch)
            continue;
        int count = 0;
        for (const char *p = patch; *p; p++)
            count += *p == '\n';
        if (count > FOLD_LINES && !d->unfolded[i]) {
            char text[160];
            snprintf(text, sizeof text, "  %d lines folded: Enter opens", count);
            push_text(d, text, L_FOLD, (int)i);
            continue;
        }
        bool header = true;
        for (const char *p = patch; *p;) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            int kind = L_CTX;
            if (n >= 2 && p[0] == '@' && p[1] == '@') {
                kind = L_HUNK;
                header = false;
            } else if (header) {
                kind = L_META;
            } else if (p[0] == '+') {
                kind = L_ADD;
            } else if (p[0] == '-') {
                kind = L_DEL;
            }
            if (!(kind == L_META && strncmp(p, "diff --git ", 11) == 0))
                push_line(d, p, n, kind, (int)i);
            p += n + (nl ? 1 : 0);
        }
    }
    if (d->nlines == 0)
        push_text(d, "(no changes)", L_NOTE, -1);
    if (d->top >= d->nlines)
        d->top = d->nlines > 0 ? d->nlines - 1 : 0;
}

static void on_diff(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    diff_view *d = req_current(user, reply);
    if (!d)
        return;
    if (d->by_ids) { /* what the server says of a command it has, from the log */
        json_object_set_new(reply, "command", json_integer(d->command));
        json_object_set(reply, "record", d->record);
    }
    /* The same command again (the whitespace toggle): stay where it was. */
    int n = (int)json_integer_value(json_object_get(reply, "command"));
    int keep_top = d->reply && n == d->command ? d->top : 0;
    json_decref(d->reply);
    d->reply = json_incref(reply);
    d->command = n;
    d->nfiles = (int)json_array_size(json_object_get(reply, "files"));
    free(d->unfolded);
    d->unfolded = xcalloc((size_t)d->nfiles + 1, sizeof *d->unfolded);
    d->top = keep_top;
    d->match = -1;
    d->page = V_DIFF;
    d->shown_space = kept.ignore_space; /* (a reply of an older request was dropped) */
    build_lines(d);
}

static void request_diff(diff_view *d, json_t *command)
{
    if (d->by_ids) {
        json_decref(command);
        json_t *req = json_pack("{s:s, s:O, s:O, s:O, s:s, s:b}", "cmd", "diff", "workspace",
                                json_object_get(d->record, "workspace"), "before", json_object_get(d->record, "before"),
                                "after", json_object_get(d->record, "after"), "format", "files", "ignore_space",
                                kept.ignore_space);
        hosts_request_on(d->t, hosts_index_of(d->session), req, on_diff, req_new(d)); /* by ids: its machine's store */
        return;
    }
    json_t *req = json_pack("{s:s, s:i, s:s, s:b}", "cmd", "diff", "session", d->session, "format", "files",
                            "ignore_space", kept.ignore_space);
    json_object_set_new(req, "command", command);
    hosts_request(d->t, req, on_diff, req_new(d));
}

static void on_commands(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    diff_view *d = req_current(user, reply);
    if (!d)
        return;
    json_decref(d->commands);
    d->commands = json_incref(json_object_get(reply, "commands"));
    int n = (int)json_array_size(d->commands);
    if (d->sel >= n || d->sel < 0)
        d->sel = n > 0 ? n - 1 : 0;
    if (n == 0) {
        const char *msg = json_string_value(json_object_get(json_object_get(reply, "snapshots"), "message"));
        snprintf(d->error, sizeof d->error, "%s", msg ? msg : "no commands recorded for this session yet");
    }
}

static void request_commands(diff_view *d)
{
    hosts_request(d->t, json_pack("{s:s, s:i}", "cmd", "commands", "session", d->session), on_commands,
                   req_new(d));
}

/* ---- opening and closing ---------------------------------------------------------- */

static void reset_diff(diff_view *d)
{
    json_decref(d->reply);
    d->reply = NULL;
    clear_lines(d);
    free(d->unfolded);
    d->unfolded = NULL;
    d->nfiles = 0;
    d->top = 0;
    d->match = -1;
    d->prompting = false;
    json_decref(d->plan);
    d->plan = NULL;
    d->confirming = d->reverting = false;
}

/* Off the stack (q, Esc, a revert done, the screen going); a reply still
 * on its way finds no view and is dropped. */
static void close_view(tui_t *t, ui_view *v)
{
    diff_view *d = (diff_view *)v;
    reset_diff(d);
    json_decref(d->record);
    json_decref(d->commands);
    free(d);
    t->relayout = true;
}

static diff_view *new_view(tui_t *t, int session)
{
    diff_view *d = view_new(sizeof *d, &diff_ops);
    d->t = t;
    d->session = session;
    d->match = -1;
    d->sel = -1;
    return d;
}

void diffview_open(tui_t *t, bool list)
{
    ui_session *s = tui_selected(t);
    if (!s) {
        tui_message(t, true, "no session selected");
        return;
    }
    diff_view *d = new_view(t, s->id);
    d->from_list = list;
    view_push(t, &d->view);
    if (list) {
        d->page = V_LIST;
        request_commands(d);
    } else {
        d->page = V_DIFF;
        request_diff(d, json_string("last"));
    }
}

void diffview_open_command(tui_t *t, int session, bool in_server, int n, json_t *record)
{
    const char *ws = json_string_value(json_object_get(record, "workspace"));
    const char *before = json_string_value(json_object_get(record, "before"));
    const char *after = json_string_value(json_object_get(record, "after"));
    if (!in_server && !(ws && before && after)) {
        const char *why = json_string_value(json_object_get(record, "error"));
        char *clean = why ? sanitize_text(why, strlen(why), 300) : NULL;
        tui_message(t, true, "no diff of command %d of session %s: %s", n, hosts_id(t, session),
                    clean ? clean : "its log has no snapshots of it (it had not ended, or snapshots were off)");
        free(clean);
        return;
    }
    diff_view *d = new_view(t, session);
    d->record = json_incref(record);
    d->by_ids = !in_server;
    d->page = V_DIFF;
    d->command = n;
    view_push(t, &d->view);
    request_diff(d, json_integer(n));
}

/* ---- revert -------------------------------------------------------------------------- */

static void on_revert_plan(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    diff_view *d = req_current(user, reply);
    if (!d)
        return;
    json_decref(d->plan);
    d->plan = json_incref(reply);
    d->confirming = true;
}

/* The revert request for command n: by session, or, for a session the
 * server no longer has, by the workspace and the snapshot ids its log
 * recorded (the same plan, conflict check and writes; nothing records it
 * as a command). */
static json_t *revert_request(const diff_view *d, int n, bool dry_run)
{
    json_t *req;
    if (d->by_ids)
        req = json_pack("{s:s, s:O, s:O, s:O}", "cmd", "revert", "workspace", json_object_get(d->record, "workspace"),
                        "before", json_object_get(d->record, "before"), "after",
                        json_object_get(d->record, "after"));
    else
        req = json_pack("{s:s, s:i, s:i}", "cmd", "revert", "session", d->session, "command", n);
    if (dry_run)
        json_object_set_new(req, "dry_run", json_true());
    return req;
}

static void start_revert(diff_view *d, int n)
{
    d->revert_n = n;
    d->confirming = false;
    hosts_request_on(d->t, hosts_index_of(d->session), revert_request(d, n, true), on_revert_plan, req_new(d));
}

static void on_reverted(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    dv_req *r = user;
    tui_t *t = r->t;
    diff_view *open = req_view(r);
    if (open)
        open->reverting = false; /* also when a later request made this reply a stale one */
    diff_view *d = req_current(r, reply);
    if (!d)
        return;
    json_decref(d->plan);
    d->plan = NULL;
    d->confirming = false;
    if (json_is_true(json_object_get(reply, "reverted"))) {
        if (json_object_get(reply, "revert_command"))
            tui_message(t, false, "reverted command %d (recorded as command %lld)", d->revert_n,
                        (long long)json_integer_value(json_object_get(reply, "revert_command")));
        else
            tui_message(t, false, "reverted command %d of ended session %d (not recorded: the session has ended)",
                        d->revert_n, d->session);
        view_close(t, &d->view);
    } else {
        const char *msg = json_string_value(json_object_get(reply, "message"));
        snprintf(d->error, sizeof d->error, "%s", msg ? msg : "nothing was reverted");
    }
}

static void confirm_revert(diff_view *d)
{
    if (json_array_size(json_object_get(d->plan, "conflicts")) || d->reverting)
        return;
    d->reverting = true;
    hosts_request_on(d->t, hosts_index_of(d->session), revert_request(d, d->revert_n, false), on_reverted,
                     req_new(d));
}

/* ---- keys ------------------------------------------------------------------------------ */

static int patch_rows(tui_t *t, const diff_view *d);

static void scroll_to(diff_view *d, int line)
{
    if (line > d->nlines - 1)
        line = d->nlines - 1;
    d->top = line < 0 ? 0 : line;
}

static int file_at_top(const diff_view *d)
{
    for (int i = d->top; i >= 0 && i < d->nlines; i--)
        if (d->lines[i].file >= 0)
            return d->lines[i].file;
    return 0;
}

static void jump(diff_view *d, int dir, int kind)
{
    int cur = kind == L_FILE ? file_at_top(d) : -2;
    for (int i = d->top + dir; i >= 0 && i < d->nlines; i += dir) {
        if (d->lines[i].kind != kind)
            continue;
        if (kind == L_FILE && dir < 0 && d->lines[i].file == cur && i != d->top)
            continue; /* back: the file before the one on top */
        scroll_to(d, i);
        return;
    }
}

static bool matches(const char *line, const char *needle)
{
    bool fold = true;
    for (const char *p = needle; *p; p++)
        fold &= !(*p >= 'A' && *p <= 'Z'); /* smart case */
    return fold ? strcasestr(line, needle) != NULL : strstr(line, needle) != NULL;
}

static void search_next(tui_t *t, diff_view *d)
{
    if (!kept.search[0])
        return;
    for (int k = 1; k <= d->nlines; k++) {
        int i = (d->top + k) % d->nlines;
        if (matches(d->lines[i].text, kept.search)) {
            d->match = i;
            scroll_to(d, i);
            return;
        }
    }
    tui_message(t, true, "not found: %s", kept.search);
}

static void prompt_key(tui_t *t, diff_view *d, const ui_key *k)
{
    size_t n = strlen(d->typed);
    if (k->key == 0x1b) {
        d->prompting = false;
    } else if (k->key == '\r') {
        d->prompting = false;
        if (d->typed[0])
            snprintf(kept.search, sizeof kept.search, "%s", d->typed);
        search_next(t, d);
    } else if (k->key == 0x7f || k->key == 0x08) {
        d->typed[utf8_prev(d->typed, n)] = '\0';
    } else if (k->key >= 0x20 && k->key < KEY_SPECIAL && n + 5 < sizeof d->typed) {
        d->typed[n + utf8_put_scalar(k->key, d->typed + n)] = '\0';
    }
}

static int list_count(const diff_view *d)
{
    return (int)json_array_size(d->commands);
}

static int selected_command(const diff_view *d)
{
    json_t *c = json_array_get(d->commands, (size_t)d->sel);
    return c ? (int)json_integer_value(json_object_get(c, "command")) : 0;
}

static void list_key(tui_t *t, diff_view *d, const ui_key *k)
{
    int n = list_count(d);
    switch (k->key) {
    case 'q':
    case 0x1b: view_close(t, &d->view); return;
    case 'j':
    case KS_DOWN: d->sel = d->sel + 1 < n ? d->sel + 1 : d->sel; break;
    case 'k':
    case KS_UP: d->sel = d->sel > 0 ? d->sel - 1 : 0; break;
    case 'g':
    case KS_HOME: d->sel = 0; break;
    case 'G':
    case KS_END: d->sel = n > 0 ? n - 1 : 0; break;
    case '\r':
    case 'd':
        if (n > 0) {
            reset_diff(d);
            d->page = V_DIFF;
            request_diff(d, json_integer(selected_command(d)));
        }
        break;
    case 'u':
        if (n > 0)
            start_revert(d, selected_command(d));
        break;
    default: break;
    }
    tui_redraw_soon(t);
}

static void diff_key(tui_t *t, diff_view *d, const ui_key *k)
{
    int page = patch_rows(t, d) > 2 ? patch_rows(t, d) - 1 : 1;
    switch (k->key) {
    case 'q':
    case 0x1b:
        if (d->from_list) {
            reset_diff(d);
            d->page = V_LIST;
            request_commands(d);
        } else {
            view_close(t, &d->view);
        }
        return;
    case 'D':
        if (d->by_ids) {
            tui_message(t, true, "session %s has ended: its commands are in its timeline", hosts_id(t, d->session));
            break;
        }
        reset_diff(d);
        d->page = V_LIST;
        d->from_list = true;
        request_commands(d);
        return;
    case 'j':
    case KS_DOWN: scroll_to(d, d->top + 1); break;
    case 'k':
    case KS_UP: scroll_to(d, d->top - 1); break;
    case ' ':
    case KS_PGDN: scroll_to(d, d->top + page); break;
    case 'b':
    case KS_PGUP: scroll_to(d, d->top - page); break;
    case 'g':
    case KS_HOME: scroll_to(d, 0); break;
    case 'G':
    case KS_END: scroll_to(d, d->nlines - 1); break;
    case 'n': jump(d, 1, L_FILE); break;
    case 'N': jump(d, -1, L_FILE); break;
    case ']': jump(d, 1, L_HUNK); break;
    case '[': jump(d, -1, L_HUNK); break;
    case '/':
        d->prompting = true;
        d->typed[0] = '\0';
        break;
    case 'w':
        kept.ignore_space = !kept.ignore_space;
        request_diff(d, json_integer(d->command));
        tui_message(t, false, "whitespace %s", kept.ignore_space ? "ignored" : "shown");
        break;
    case '\r':
    case 'o': {
        int f = file_at_top(d);
        if (d->unfolded && f >= 0 && f < d->nfiles) {
            d->unfolded[f] = !d->unfolded[f];
            int top_file = f;
            build_lines(d);
            for (int i = 0; i < d->nlines; i++)
                if (d->lines[i].kind == L_FILE && d->lines[i].file == top_file) {
                    scroll_to(d, i);
                    break;
                }
        }
        break;
    }
    case 'u':
        if (d->command > 0)
            start_revert(d, d->command);
        break;
    default: break;
    }
    t->full_redraw = true;
    tui_redraw_soon(t);
}

static void key(tui_t *t, ui_view *v, const ui_key *k)
{
    diff_view *d = (diff_view *)v;
    if (d->confirming) {
        if (k->key == 'y' && !json_array_size(json_object_get(d->plan, "conflicts")))
            confirm_revert(d);
        else if (k->key == 'n' || k->key == 'q' || k->key == 0x1b) {
            d->confirming = false;
            json_decref(d->plan);
            d->plan = NULL;
        }
        t->full_redraw = true;
        tui_redraw_soon(t);
        return;
    }
    if (d->prompting) {
        prompt_key(t, d, k);
        t->full_redraw = true;
        tui_redraw_soon(t);
        return;
    }
    if (d->page == V_LIST)
        list_key(t, d, k);
    else
        diff_key(t, d, k);
}

/* ---- drawing ----------------------------------------------------------------------------- */

static int risk_rows(const diff_view *d)
{
    int n = (int)json_array_size(json_object_get(json_object_get(d->reply, "changes"), "risk"));
    return n > RISK_ROWS ? RISK_ROWS + 1 : n;
}

static int list_rows(tui_t *t, const diff_view *d)
{
    int h = t->main.h - 3 - risk_rows(d);
    int want = d->nfiles > 0 ? d->nfiles : 1;
    int max = h / 3 > 3 ? h / 3 : 3;
    return want < max ? want : max;
}

static int patch_rows(tui_t *t, const diff_view *d)
{
    int h = t->main.h - 3 - risk_rows(d) - list_rows(t, d) - 1;
    return h > 1 ? h : 1;
}

static void line_at(int y, int x, int w, theme_elem e, const char *text)
{
    paint_set(e, e);
    paint_fill(y, x, w);
    paint_text(y, x, w, text);
}

static void counts_text(json_t *rec, char *out, size_t len)
{
    json_t *c = json_object_get(rec, "counts"), *l = json_object_get(rec, "lines");
    if (!c) {
        snprintf(out, len, "%s", json_object_get(rec, "error") ? "no diff" : "");
        return;
    }
    snprintf(out, len, "+%lld ~%lld -%lld \xe2\x86\x92%lld  +%lld -%lld",
             (long long)json_integer_value(json_object_get(c, "added")),
             (long long)(json_integer_value(json_object_get(c, "modified")) +
                         json_integer_value(json_object_get(c, "typechanged"))),
             (long long)json_integer_value(json_object_get(c, "deleted")),
             (long long)json_integer_value(json_object_get(c, "renamed")),
             (long long)json_integer_value(json_object_get(l, "added")),
             (long long)json_integer_value(json_object_get(l, "removed")));
    size_t missed = json_array_size(json_object_get(rec, "not_captured"));
    size_t used = strlen(out);
    if (missed && used < len)
        snprintf(out + used, len - used, "  (%zu not captured)", missed);
}

static void attribution_text(json_t *rec, char *out, size_t len)
{
    json_t *with = json_object_get(rec, "shared_with");
    if (!json_array_size(with)) {
        snprintf(out, len, "exclusive");
        return;
    }
    size_t used = (size_t)snprintf(out, len, "shared with");
    size_t i;
    json_t *w;
    json_array_foreach(with, i, w) {
        json_t *n = json_object_get(w, "command");
        if (used < len)
            used += (size_t)snprintf(out + used, len - used, json_is_integer(n) ? " %lld:%lld" : " %lld",
                                     (long long)json_integer_value(json_object_get(w, "session")),
                                     (long long)json_integer_value(n));
    }
}

static void mode_text(json_t *f, char *out, size_t len)
{
    long om = (long)json_integer_value(json_object_get(f, "old_mode"));
    long nm = (long)json_integer_value(json_object_get(f, "new_mode"));
    const char *ot = json_string_value(json_object_get(f, "old_target"));
    const char *nt = json_string_value(json_object_get(f, "new_target"));
    json_t *gl = json_object_get(f, "gitlink");
    if (gl)
        snprintf(out, len, "repo %.7s\xe2\x86\x92%.7s", json_string_value(json_object_get(gl, "old")),
                 json_string_value(json_object_get(gl, "new")));
    else if (ot || nt)
        snprintf(out, len, "link %s \xe2\x87\x92 %s", ot ? ot : "", nt ? nt : "");
    else if (om && nm && om != nm && (om & 0111) != (nm & 0111))
        snprintf(out, len, "%s", (nm & 0111) ? "+x" : "-x");
    else
        out[0] = '\0';
}

static void draw_file_row(tui_t *t, int y, json_t *f, bool selected)
{
    ui_rect r = t->main;
    theme_elem e = selected ? TH_SIDEBAR_SELECTED : TH_SIDEBAR;
    char sizes[64] = "", mode[300], lines[48] = "", a[24], b[24];
    mode_text(f, mode, sizeof mode);
    format_bytes((double)json_integer_value(json_object_get(f, "old_size")), true, a, sizeof a);
    format_bytes((double)json_integer_value(json_object_get(f, "new_size")), true, b, sizeof b);
    const char *st = json_string_value(json_object_get(f, "status"));
    if (st[0] == 'A')
        snprintf(sizes, sizeof sizes, "%s", b);
    else if (st[0] == 'D')
        snprintf(sizes, sizeof sizes, "%s", a);
    else
        snprintf(sizes, sizeof sizes, "%s\xe2\x86\x92%s", a, b);
    if (json_is_true(json_object_get(f, "large")))
        snprintf(lines, sizeof lines, "large");
    else if (json_is_true(json_object_get(f, "binary")))
        snprintf(lines, sizeof lines, "binary");
    else
        snprintf(lines, sizeof lines, "+%lld -%lld", (long long)json_integer_value(json_object_get(f, "added")),
                 (long long)json_integer_value(json_object_get(f, "removed")));
    buf_t risk;
    buf_init(&risk);
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(f, "risk"), i, m)
        buf_printf(&risk, "%s%s", i ? "," : "[", json_string_value(m));
    if (risk.len)
        buf_putc(&risk, ']');
    char row[1600];
    snprintf(row, sizeof row, " %-4s %-8s %s", st, lines, json_string_value(json_object_get(f, "path")));
    line_at(y, r.x, r.w, e, row);
    char right[400];
    snprintf(right, sizeof right, " %s %s ", mode, sizes);
    int rw = paint_width(right);
    int x = r.x + r.w - rw;
    if (risk.len) {
        int kw = paint_width(risk.data);
        paint_set(TH_PROFILE_FULL, e);
        paint_text(y, x - kw, kw, risk.data);
    }
    paint_set(e, e);
    if (x > r.x + 20)
        paint_text(y, x, rw, right);
    buf_free(&risk);
}

static theme_elem line_style(int kind)
{
    switch (kind) {
    case L_FILE: return TH_BORDER_FOCUS;
    case L_META: return TH_DIALOG_TITLE;
    case L_HUNK: return TH_STATE_WAITING;
    case L_ADD: return TH_STATE_EXIT_OK;
    case L_DEL: return TH_STATE_EXIT_FAIL;
    case L_NOTE:
    case L_FOLD: return TH_STATE_IDLE;
    default: return TH_NORMAL;
    }
}

static void draw_diff(tui_t *t, diff_view *d)
{
    ui_rect r = t->main;
    int y = r.y;
    json_t *rec = json_object_get(d->reply, "record");
    char head[1400], counts[160], attr[600];
    const char *line = json_string_value(json_object_get(rec, "line"));
    snprintf(head, sizeof head, " diff \xc2\xb7 session %s \xc2\xb7 command %d \xc2\xb7 %s", hosts_id(d->t, d->session),
             d->command, line ? line : "");
    line_at(y++, r.x, r.w, TH_BORDER_FOCUS, head);
    counts_text(json_object_get(d->reply, "changes"), counts, sizeof counts);
    attribution_text(rec, attr, sizeof attr);
    snprintf(head, sizeof head, " %s  \xc2\xb7  %s%s%s%s", counts, attr, d->shown_space ? "  \xc2\xb7  whitespace ignored" : "",
             json_is_true(json_object_get(rec, "late")) ? "  \xc2\xb7  started before its snapshot" : "",
             json_object_get(rec, "error") ? "  \xc2\xb7  " : "");
    if (json_object_get(rec, "error"))
        snprintf(head + strlen(head), sizeof head - strlen(head), "%s",
                 json_string_value(json_object_get(rec, "error")));
    line_at(y++, r.x, r.w, TH_BORDER, head);
    json_t *risk = json_object_get(json_object_get(d->reply, "changes"), "risk");
    size_t i;
    json_t *x;
    json_array_foreach(risk, i, x) {
        if (i == RISK_ROWS) {
            snprintf(head, sizeof head, " RISK \xe2\x80\xa6 %zu more in the file list", json_array_size(risk) - i);
            line_at(y++, r.x, r.w, TH_PROFILE_FULL, head);
            break;
        }
        buf_t marks;
        buf_init(&marks);
        size_t k;
        json_t *mk;
        json_array_foreach(json_object_get(x, "marks"), k, mk)
            buf_printf(&marks, "%s%s", k ? "," : "", json_string_value(mk));
        const char *detail = json_string_value(json_object_get(x, "detail"));
        snprintf(head, sizeof head, " RISK %s: %s%s%s", marks.data ? marks.data : "",
                 json_string_value(json_object_get(x, "path")), detail ? " \xe2\x80\x94 " : "", detail ? detail : "");
        buf_free(&marks);
        line_at(y++, r.x, r.w, TH_PROFILE_FULL, head);
    }
    /* The file list, scrolled to keep the file on top of the patch in view. */
    int rows = list_rows(t, d), cur = file_at_top(d);
    int first = cur - rows / 2;
    if (first > d->nfiles - rows)
        first = d->nfiles - rows;
    if (first < 0)
        first = 0;
    json_t *files = json_object_get(d->reply, "files");
    for (int k = 0; k < rows; k++, y++) {
        json_t *f = json_array_get(files, (size_t)(first + k));
        if (f)
            draw_file_row(t, y, f, first + k == cur);
        else
            line_at(y, r.x, r.w, TH_SIDEBAR,
                    k != 0 ? ""
                    : json_array_size(json_object_get(json_object_get(d->reply, "changes"), "not_captured"))
                        ? " (no captured file changed: what was not captured is listed below)"
                        : " (no files changed)");
    }
    line_at(y++, r.x, r.w, TH_BORDER, " n/N file  ]/[ hunk  / search  w whitespace  Enter open  u revert  D commands  q close");
    int prow = patch_rows(t, d);
    for (int k = 0; k < prow; k++, y++) {
        int li = d->top + k;
        if (li >= d->nlines) {
            line_at(y, r.x, r.w, TH_NORMAL, "");
            continue;
        }
        theme_elem e = li == d->match ? TH_SEARCH_CURRENT : line_style(d->lines[li].kind);
        paint_set(TH_NORMAL, TH_NORMAL);
        paint_fill(y, r.x, r.w);
        paint_set(e, TH_NORMAL);
        paint_text(y, r.x, r.w, d->lines[li].text);
    }
}

static void draw_list(tui_t *t, diff_view *d)
{
    ui_rect r = t->main;
    int y = r.y;
    char head[300];
    snprintf(head, sizeof head, " commands \xc2\xb7 session %s \xc2\xb7 Enter diff  u revert  q close",
             hosts_id(d->t, d->session));
    line_at(y++, r.x, r.w, TH_BORDER_FOCUS, head);
    int n = list_count(d), rows = r.h - 1;
    if (d->sel < d->list_top)
        d->list_top = d->sel;
    if (d->sel >= d->list_top + rows)
        d->list_top = d->sel - rows + 1;
    for (int k = 0; k < rows; k++, y++) {
        int i = d->list_top + k;
        json_t *c = json_array_get(d->commands, (size_t)i);
        if (!c || i >= n) {
            line_at(y, r.x, r.w, TH_SIDEBAR, "");
            continue;
        }
        char counts[160], row[1400];
        counts_text(c, counts, sizeof counts);
        const char *state = json_string_value(json_object_get(c, "state"));
        bool risky = json_array_size(json_object_get(c, "risk")) > 0;
        bool shared = json_array_size(json_object_get(c, "shared_with")) > 0;
        /* An action on the session (a revert) says who did it. */
        const char *by = json_string_value(json_object_get(c, "by"));
        char who[80] = "";
        if (by)
            snprintf(who, sizeof who, "by %.60s: ", by);
        snprintf(row, sizeof row, " %3lld  %-28s %-6s %s%s%s", (long long)json_integer_value(json_object_get(c, "command")),
                 strcmp(state, "done") == 0 ? counts : state, shared ? "shared" : "", risky ? "RISK " : "", who,
                 json_string_value(json_object_get(c, "line")));
        theme_elem e = i == d->sel ? TH_SIDEBAR_SELECTED : TH_SIDEBAR;
        line_at(y, r.x, r.w, e, row);
        char *at = risky ? strstr(row, "RISK ") : NULL;
        if (at) {
            /* Over the word, in the risk style: its column is the width
             * of what precedes it (the counts have multi-byte arrows). */
            *at = '\0';
            int col = paint_width(row);
            paint_set(TH_PROFILE_FULL, e);
            if (col + 4 < r.w)
                paint_text(y, r.x + col, 4, "RISK");
        }
    }
}

static void draw_confirm(tui_t *t, const diff_view *d)
{
    json_t *actions = json_object_get(d->plan, "actions"), *conflicts = json_object_get(d->plan, "conflicts");
    json_t *skipped = json_object_get(d->plan, "skipped");
    int n = (int)(json_array_size(actions) + json_array_size(conflicts) + json_array_size(skipped));
    ui_rect r = t->main;
    int h = n + 4 < r.h - 2 ? n + 4 : r.h - 2, w = r.w - 4 > 20 ? r.w - 4 : r.w;
    int y0 = r.y + (r.h - h) / 2, x0 = r.x + (r.w - w) / 2;
    char title[200];
    if (json_array_size(conflicts))
        snprintf(title, sizeof title, " Command %d cannot be reverted: files changed again after it ", d->revert_n);
    else
        snprintf(title, sizeof title, " Revert command %d of session %s? ", d->revert_n, hosts_id(d->t, d->session));
    line_at(y0, x0, w, TH_DIALOG_TITLE, title);
    int y = y0 + 1;
    json_t *lists[3] = {conflicts, actions, skipped};
    const char *labels[3] = {"conflict", NULL, "left as it is"};
    for (int l = 0; l < 3; l++) {
        size_t i;
        json_t *a;
        json_array_foreach(lists[l], i, a) {
            if (y >= y0 + h - 2)
                break;
            char row[1200];
            const char *reason = json_string_value(json_object_get(a, "reason"));
            snprintf(row, sizeof row, "  %s %s%s%s", labels[l] ? labels[l] : json_string_value(json_object_get(a, "action")),
                     json_string_value(json_object_get(a, "path")), reason ? ": " : "", reason ? reason : "");
            line_at(y++, x0, w, l == 0 ? TH_STATE_EXIT_FAIL : TH_DIALOG, row);
        }
    }
    while (y < y0 + h - 1)
        line_at(y++, x0, w, TH_DIALOG, "");
    line_at(y, x0, w, TH_DIALOG_SELECTED,
            json_array_size(conflicts) ? "  Esc close" : d->reverting ? "  reverting..." : "  y revert   n/Esc cancel");
}

static void draw(tui_t *t, ui_view *v)
{
    diff_view *d = (diff_view *)v;
    ui_rect r = t->main;
    if (d->loading && ((d->page == V_DIFF && !d->reply) || (d->page == V_LIST && !d->commands))) {
        for (int k = 0; k < r.h; k++)
            line_at(r.y + k, r.x, r.w, TH_NORMAL, k == 0 ? " loading..." : "");
    } else if (d->page == V_LIST) {
        draw_list(t, d);
    } else if (d->reply) {
        draw_diff(t, d);
    } else {
        for (int k = 0; k < r.h; k++)
            line_at(r.y + k, r.x, r.w, TH_NORMAL, "");
    }
    if (d->error[0])
        line_at(r.y + r.h - 1, r.x, r.w, TH_STATE_EXIT_FAIL, d->error);
    if (d->prompting) {
        char p[300];
        snprintf(p, sizeof p, "/%s", d->typed);
        line_at(r.y + r.h - 1, r.x, r.w, TH_DIALOG_SELECTED, p);
    }
    if (d->confirming && d->plan)
        draw_confirm(t, d);
}

/* The mouse is not its own: clicks and the wheel reach the sidebar and
 * the panes around and under it, as with nothing open. */
static const ui_view_ops diff_ops = {
    .flags = VIEW_MOUSE_THROUGH,
    .draw = draw,
    .key = key,
    .close = close_view,
};
