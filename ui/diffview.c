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

typedef enum { V_LIST, V_DIFF } dv_view;

static struct {
    bool active;
    dv_view view;
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
    bool ignore_space;  /* asked for */
    bool shown_space;   /* the diff on the screen was made so */
    /* search */
    bool prompting;
    char typed[256], search[256];
    int match;
    /* a session the server no longer has (an ended one, from its log) */
    bool by_ids;       /* its diffs come from the snapshot ids its log recorded */
    json_t *record;    /* the command's record from the log */
    /* revert */
    bool confirming, reverting;
    json_t *plan;
    int revert_n;
} D = {.match = -1};

bool diffview_active(void)
{
    return D.active;
}

/* ---- requests ------------------------------------------------------------------ */

static void close_view(tui_t *t);

typedef struct dv_req {
    tui_t *t;
    unsigned gen;
} dv_req;

static dv_req *req_new(tui_t *t)
{
    dv_req *r = xcalloc(1, sizeof *r);
    r->t = t;
    r->gen = ++D.gen;
    D.loading = true;
    D.error[0] = '\0';
    return r;
}

/* The reply is for what is on the screen now (else dropped: NULL). */
static tui_t *req_current(dv_req *r, json_t *reply)
{
    tui_t *t = r->t;
    bool current = D.active && r->gen == D.gen;
    free(r);
    if (!current)
        return NULL;
    D.loading = false;
    const char *msg = json_string_value(json_object_get(json_object_get(reply, "error"), "message"));
    if (!reply || msg) {
        char *clean = sanitize_text(msg ? msg : "lost the server", strlen(msg ? msg : "lost the server"), 300);
        snprintf(D.error, sizeof D.error, "%s", clean);
        free(clean);
        if (D.by_ids && !D.reply) {
            /* An ended session's diff the server cannot make: said where
             * the key was pressed, rather than in an empty view. */
            tui_message(t, true, "no diff of command %d of session %d: %s", D.command, D.session, D.error);
            close_view(t);
            return NULL;
        }
        t->full_redraw = true;
        tui_redraw_soon(t);
        return NULL;
    }
    t->full_redraw = true;
    tui_redraw_soon(t);
    return t;
}

static void clear_lines(void)
{
    for (int i = 0; i < D.nlines; i++)
        free(D.lines[i].text);
    free(D.lines);
    D.lines = NULL;
    D.nlines = 0;
}

static void push_line(const char *text, size_t len, int kind, int file)
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
    D.lines = xrealloc(D.lines, (size_t)(D.nlines + 1) * sizeof *D.lines);
    D.lines[D.nlines++] = (dv_line){b.data ? buf_steal(&b) : xstrdup(""), (unsigned char)kind, file};
    buf_free(&b);
}

static void push_text(const char *text, int kind, int file)
{
    push_line(text, strlen(text), kind, file);
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
static void build_lines(void)
{
    clear_lines();
    json_t *changes = json_object_get(D.reply, "changes");
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(changes, "not_captured"), i, m) {
        char text[600];
        json_int_t size = json_integer_value(json_object_get(m, "size"));
        json_int_t files = json_integer_value(json_object_get(m, "files"));
        char h[32] = "";
        if (size)
            ui_size_text((double)size, h, sizeof h);
        snprintf(text, sizeof text, "not captured: %s (%s%s%s)", json_string_value(json_object_get(m, "path")),
                 json_string_value(json_object_get(m, "reason")), size ? ", " : files ? ", new files: " : "",
                 size ? h : "");
        if (files)
            snprintf(text + strlen(text) - 1, sizeof text - strlen(text) + 1, "%lld)", (long long)files);
        push_text(text, L_NOTE, -1);
    }
    json_t *files = json_object_get(D.reply, "files");
    json_t *f;
    json_array_foreach(files, i, f) {
        const char *path = json_string_value(json_object_get(f, "path"));
        const char *st = json_string_value(json_object_get(f, "status"));
        char head[1200];
        snprintf(head, sizeof head, "%s %s", status_word(st), path);
        push_text(head, L_FILE, (int)i);
        const char *patch = json_string_value(json_object_get(f, "patch"));
        if (json_is_true(json_object_get(f, "large"))) {
            push_text("  (too large to be captured: size and time only, no content)", L_NOTE, (int)i);
            continue;
        }
        if (!patch)
            continue;
        int count = 0;
        for (const char *p = patch; *p; p++)
            count += *p == '\n';
        if (count > FOLD_LINES && !D.unfolded[i]) {
            char text[160];
            snprintf(text, sizeof text, "  %d lines folded: Enter opens", count);
            push_text(text, L_FOLD, (int)i);
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
                push_line(p, n, kind, (int)i);
            p += n + (nl ? 1 : 0);
        }
    }
    if (D.nlines == 0)
        push_text("(no changes)", L_NOTE, -1);
    if (D.top >= D.nlines)
        D.top = D.nlines > 0 ? D.nlines - 1 : 0;
}

static void on_diff(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    tui_t *t = req_current(user, reply);
    if (!t)
        return;
    if (D.by_ids) { /* what the server says of a command it has, from the log */
        json_object_set_new(reply, "command", json_integer(D.command));
        json_object_set(reply, "record", D.record);
    }
    /* The same command again (the whitespace toggle): stay where it was. */
    int n = (int)json_integer_value(json_object_get(reply, "command"));
    int keep_top = D.reply && n == D.command ? D.top : 0;
    json_decref(D.reply);
    D.reply = json_incref(reply);
    D.command = n;
    D.nfiles = (int)json_array_size(json_object_get(reply, "files"));
    free(D.unfolded);
    D.unfolded = xcalloc((size_t)D.nfiles + 1, sizeof *D.unfolded);
    D.top = keep_top;
    D.match = -1;
    D.view = V_DIFF;
    D.shown_space = D.ignore_space; /* (a reply of an older request was dropped) */
    build_lines();
}

static void request_diff(tui_t *t, json_t *command)
{
    if (D.by_ids) {
        json_decref(command);
        json_t *req = json_pack("{s:s, s:O, s:O, s:O, s:s, s:b}", "cmd", "diff", "workspace",
                                json_object_get(D.record, "workspace"), "before", json_object_get(D.record, "before"),
                                "after", json_object_get(D.record, "after"), "format", "files", "ignore_space",
                                D.ignore_space);
        uiconn_request(&t->conn, req, on_diff, req_new(t));
        return;
    }
    json_t *req = json_pack("{s:s, s:i, s:s, s:b}", "cmd", "diff", "session", D.session, "format", "files",
                            "ignore_space", D.ignore_space);
    json_object_set_new(req, "command", command);
    uiconn_request(&t->conn, req, on_diff, req_new(t));
}

static void on_commands(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    tui_t *t = req_current(user, reply);
    if (!t)
        return;
    json_decref(D.commands);
    D.commands = json_incref(json_object_get(reply, "commands"));
    int n = (int)json_array_size(D.commands);
    if (D.sel >= n || D.sel < 0)
        D.sel = n > 0 ? n - 1 : 0;
    if (n == 0) {
        const char *msg = json_string_value(json_object_get(json_object_get(reply, "snapshots"), "message"));
        snprintf(D.error, sizeof D.error, "%s", msg ? msg : "no commands recorded for this session yet");
    }
}

static void request_commands(tui_t *t)
{
    uiconn_request(&t->conn, json_pack("{s:s, s:i}", "cmd", "commands", "session", D.session), on_commands,
                   req_new(t));
}

/* ---- opening and closing ---------------------------------------------------------- */

static void reset_diff(void)
{
    json_decref(D.reply);
    D.reply = NULL;
    clear_lines();
    free(D.unfolded);
    D.unfolded = NULL;
    D.nfiles = 0;
    D.top = 0;
    D.match = -1;
    D.prompting = false;
    json_decref(D.plan);
    D.plan = NULL;
    D.confirming = D.reverting = false;
}

static void close_view(tui_t *t)
{
    D.active = false;
    D.gen++;
    reset_diff();
    D.by_ids = false;
    json_decref(D.record);
    D.record = NULL;
    json_decref(D.commands);
    D.commands = NULL;
    t->full_redraw = true;
    t->relayout = true;
    tui_redraw_soon(t);
}

void diffview_open(tui_t *t, bool list)
{
    ui_session *s = tui_selected(t);
    if (!s) {
        tui_message(t, true, "no session selected");
        return;
    }
    reset_diff();
    D.by_ids = false;
    json_decref(D.record);
    D.record = NULL;
    D.active = true;
    D.session = s->id;
    D.error[0] = '\0';
    D.from_list = list;
    D.sel = -1;
    if (list) {
        D.view = V_LIST;
        request_commands(t);
    } else {
        D.view = V_DIFF;
        request_diff(t, json_string("last"));
    }
    t->full_redraw = true;
    tui_redraw_soon(t);
}

void diffview_open_command(tui_t *t, int session, bool in_server, int n, json_t *record)
{
    const char *ws = json_string_value(json_object_get(record, "workspace"));
    const char *before = json_string_value(json_object_get(record, "before"));
    const char *after = json_string_value(json_object_get(record, "after"));
    if (!in_server && !(ws && before && after)) {
        const char *why = json_string_value(json_object_get(record, "error"));
        char *clean = why ? sanitize_text(why, strlen(why), 300) : NULL;
        tui_message(t, true, "no diff of command %d of session %d: %s", n, session,
                    clean ? clean : "its log has no snapshots of it (it had not ended, or snapshots were off)");
        free(clean);
        return;
    }
    reset_diff();
    json_decref(D.record);
    D.record = json_incref(record);
    D.by_ids = !in_server;
    D.active = true;
    D.session = session;
    D.error[0] = '\0';
    D.from_list = false;
    D.sel = -1;
    D.view = V_DIFF;
    D.command = n;
    request_diff(t, json_integer(n));
    t->full_redraw = true;
    tui_redraw_soon(t);
}

/* ---- revert -------------------------------------------------------------------------- */

static void on_revert_plan(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    tui_t *t = req_current(user, reply);
    if (!t)
        return;
    json_decref(D.plan);
    D.plan = json_incref(reply);
    D.confirming = true;
}

static void start_revert(tui_t *t, int n)
{
    D.revert_n = n;
    D.confirming = false;
    uiconn_request(&t->conn,
                   json_pack("{s:s, s:i, s:i, s:b}", "cmd", "revert", "session", D.session, "command", n, "dry_run", 1),
                   on_revert_plan, req_new(t));
}

static void on_reverted(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    tui_t *t = req_current(user, reply);
    D.reverting = false;
    if (!t)
        return;
    json_decref(D.plan);
    D.plan = NULL;
    D.confirming = false;
    if (json_is_true(json_object_get(reply, "reverted"))) {
        tui_message(t, false, "reverted command %d (recorded as command %lld)", D.revert_n,
                    (long long)json_integer_value(json_object_get(reply, "revert_command")));
        close_view(t);
    } else {
        const char *msg = json_string_value(json_object_get(reply, "message"));
        snprintf(D.error, sizeof D.error, "%s", msg ? msg : "nothing was reverted");
    }
}

static void confirm_revert(tui_t *t)
{
    if (json_array_size(json_object_get(D.plan, "conflicts")) || D.reverting)
        return;
    D.reverting = true;
    uiconn_request(&t->conn,
                   json_pack("{s:s, s:i, s:i}", "cmd", "revert", "session", D.session, "command", D.revert_n),
                   on_reverted, req_new(t));
}

/* ---- keys ------------------------------------------------------------------------------ */

static int patch_rows(tui_t *t);

static void scroll_to(int line)
{
    if (line > D.nlines - 1)
        line = D.nlines - 1;
    D.top = line < 0 ? 0 : line;
}

static int file_at_top(void)
{
    for (int i = D.top; i >= 0 && i < D.nlines; i--)
        if (D.lines[i].file >= 0)
            return D.lines[i].file;
    return 0;
}

static void jump(int dir, int kind)
{
    int cur = kind == L_FILE ? file_at_top() : -2;
    for (int i = D.top + dir; i >= 0 && i < D.nlines; i += dir) {
        if (D.lines[i].kind != kind)
            continue;
        if (kind == L_FILE && dir < 0 && D.lines[i].file == cur && i != D.top)
            continue; /* back: the file before the one on top */
        scroll_to(i);
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

static void search_next(tui_t *t)
{
    if (!D.search[0])
        return;
    for (int k = 1; k <= D.nlines; k++) {
        int i = (D.top + k) % D.nlines;
        if (matches(D.lines[i].text, D.search)) {
            D.match = i;
            scroll_to(i);
            return;
        }
    }
    tui_message(t, true, "not found: %s", D.search);
}

static void prompt_key(tui_t *t, const ui_key *k)
{
    size_t n = strlen(D.typed);
    if (k->key == 0x1b) {
        D.prompting = false;
    } else if (k->key == '\r') {
        D.prompting = false;
        if (D.typed[0])
            snprintf(D.search, sizeof D.search, "%s", D.typed);
        search_next(t);
    } else if (k->key == 0x7f || k->key == 0x08) {
        D.typed[utf8_prev(D.typed, n)] = '\0';
    } else if (k->key >= 0x20 && k->key < KEY_SPECIAL && n + 5 < sizeof D.typed) {
        D.typed[n + utf8_put_scalar(k->key, D.typed + n)] = '\0';
    }
}

static int list_count(void)
{
    return (int)json_array_size(D.commands);
}

static int selected_command(void)
{
    json_t *c = json_array_get(D.commands, (size_t)D.sel);
    return c ? (int)json_integer_value(json_object_get(c, "command")) : 0;
}

static void list_key(tui_t *t, const ui_key *k)
{
    int n = list_count();
    switch (k->key) {
    case 'q':
    case 0x1b: close_view(t); return;
    case 'j':
    case KS_DOWN: D.sel = D.sel + 1 < n ? D.sel + 1 : D.sel; break;
    case 'k':
    case KS_UP: D.sel = D.sel > 0 ? D.sel - 1 : 0; break;
    case 'g':
    case KS_HOME: D.sel = 0; break;
    case 'G':
    case KS_END: D.sel = n > 0 ? n - 1 : 0; break;
    case '\r':
    case 'd':
        if (n > 0) {
            reset_diff();
            D.view = V_DIFF;
            request_diff(t, json_integer(selected_command()));
        }
        break;
    case 'u':
        if (n > 0)
            start_revert(t, selected_command());
        break;
    default: break;
    }
    tui_redraw_soon(t);
}

static void diff_key(tui_t *t, const ui_key *k)
{
    int page = patch_rows(t) > 2 ? patch_rows(t) - 1 : 1;
    switch (k->key) {
    case 'q':
    case 0x1b:
        if (D.from_list) {
            reset_diff();
            D.view = V_LIST;
            request_commands(t);
        } else {
            close_view(t);
        }
        return;
    case 'D':
        if (D.by_ids) {
            tui_message(t, true, "session %d has ended: its commands are in its timeline", D.session);
            break;
        }
        reset_diff();
        D.view = V_LIST;
        D.from_list = true;
        request_commands(t);
        return;
    case 'j':
    case KS_DOWN: scroll_to(D.top + 1); break;
    case 'k':
    case KS_UP: scroll_to(D.top - 1); break;
    case ' ':
    case KS_PGDN: scroll_to(D.top + page); break;
    case 'b':
    case KS_PGUP: scroll_to(D.top - page); break;
    case 'g':
    case KS_HOME: scroll_to(0); break;
    case 'G':
    case KS_END: scroll_to(D.nlines - 1); break;
    case 'n': jump(1, L_FILE); break;
    case 'N': jump(-1, L_FILE); break;
    case ']': jump(1, L_HUNK); break;
    case '[': jump(-1, L_HUNK); break;
    case '/':
        D.prompting = true;
        D.typed[0] = '\0';
        break;
    case 'w':
        D.ignore_space = !D.ignore_space;
        request_diff(t, json_integer(D.command));
        tui_message(t, false, "whitespace %s", D.ignore_space ? "ignored" : "shown");
        break;
    case '\r':
    case 'o': {
        int f = file_at_top();
        if (D.unfolded && f >= 0 && f < D.nfiles) {
            D.unfolded[f] = !D.unfolded[f];
            int top_file = f;
            build_lines();
            for (int i = 0; i < D.nlines; i++)
                if (D.lines[i].kind == L_FILE && D.lines[i].file == top_file) {
                    scroll_to(i);
                    break;
                }
        }
        break;
    }
    case 'u':
        if (D.by_ids)
            tui_message(t, true, "session %d has ended: the server no longer has it to revert its commands",
                        D.session);
        else if (D.command > 0)
            start_revert(t, D.command);
        break;
    default: break;
    }
    t->full_redraw = true;
    tui_redraw_soon(t);
}

void diffview_key(tui_t *t, const ui_key *k)
{
    if (k->mouse)
        return;
    if (D.confirming) {
        if (k->key == 'y' && !json_array_size(json_object_get(D.plan, "conflicts")))
            confirm_revert(t);
        else if (k->key == 'n' || k->key == 'q' || k->key == 0x1b) {
            D.confirming = false;
            json_decref(D.plan);
            D.plan = NULL;
        }
        t->full_redraw = true;
        tui_redraw_soon(t);
        return;
    }
    if (D.prompting) {
        prompt_key(t, k);
        t->full_redraw = true;
        tui_redraw_soon(t);
        return;
    }
    if (D.view == V_LIST)
        list_key(t, k);
    else
        diff_key(t, k);
}

/* ---- drawing ----------------------------------------------------------------------------- */

static int risk_rows(void)
{
    int n = (int)json_array_size(json_object_get(json_object_get(D.reply, "changes"), "risk"));
    return n > RISK_ROWS ? RISK_ROWS + 1 : n;
}

static int list_rows(tui_t *t)
{
    int h = t->main.h - 3 - risk_rows();
    int want = D.nfiles > 0 ? D.nfiles : 1;
    int max = h / 3 > 3 ? h / 3 : 3;
    return want < max ? want : max;
}

static int patch_rows(tui_t *t)
{
    int h = t->main.h - 3 - risk_rows() - list_rows(t) - 1;
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
    ui_size_text((double)json_integer_value(json_object_get(f, "old_size")), a, sizeof a);
    ui_size_text((double)json_integer_value(json_object_get(f, "new_size")), b, sizeof b);
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

static void draw_diff(tui_t *t)
{
    ui_rect r = t->main;
    int y = r.y;
    json_t *rec = json_object_get(D.reply, "record");
    char head[1400], counts[160], attr[600];
    const char *line = json_string_value(json_object_get(rec, "line"));
    snprintf(head, sizeof head, " diff \xc2\xb7 session %d \xc2\xb7 command %d \xc2\xb7 %s", D.session, D.command,
             line ? line : "");
    line_at(y++, r.x, r.w, TH_BORDER_FOCUS, head);
    counts_text(json_object_get(D.reply, "changes"), counts, sizeof counts);
    attribution_text(rec, attr, sizeof attr);
    snprintf(head, sizeof head, " %s  \xc2\xb7  %s%s%s%s", counts, attr, D.shown_space ? "  \xc2\xb7  whitespace ignored" : "",
             json_is_true(json_object_get(rec, "late")) ? "  \xc2\xb7  started before its snapshot" : "",
             json_object_get(rec, "error") ? "  \xc2\xb7  " : "");
    if (json_object_get(rec, "error"))
        snprintf(head + strlen(head), sizeof head - strlen(head), "%s",
                 json_string_value(json_object_get(rec, "error")));
    line_at(y++, r.x, r.w, TH_BORDER, head);
    json_t *risk = json_object_get(json_object_get(D.reply, "changes"), "risk");
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
    int rows = list_rows(t), cur = file_at_top();
    int first = cur - rows / 2;
    if (first > D.nfiles - rows)
        first = D.nfiles - rows;
    if (first < 0)
        first = 0;
    json_t *files = json_object_get(D.reply, "files");
    for (int k = 0; k < rows; k++, y++) {
        json_t *f = json_array_get(files, (size_t)(first + k));
        if (f)
            draw_file_row(t, y, f, first + k == cur);
        else
            line_at(y, r.x, r.w, TH_SIDEBAR, k == 0 ? " (no files changed)" : "");
    }
    line_at(y++, r.x, r.w, TH_BORDER, " n/N file  ]/[ hunk  / search  w whitespace  Enter open  u revert  D commands  q close");
    int prow = patch_rows(t);
    for (int k = 0; k < prow; k++, y++) {
        int li = D.top + k;
        if (li >= D.nlines) {
            line_at(y, r.x, r.w, TH_NORMAL, "");
            continue;
        }
        theme_elem e = li == D.match ? TH_SEARCH_CURRENT : line_style(D.lines[li].kind);
        paint_set(TH_NORMAL, TH_NORMAL);
        paint_fill(y, r.x, r.w);
        paint_set(e, TH_NORMAL);
        paint_text(y, r.x, r.w, D.lines[li].text);
    }
}

static void draw_list(tui_t *t)
{
    ui_rect r = t->main;
    int y = r.y;
    char head[300];
    snprintf(head, sizeof head, " commands \xc2\xb7 session %d \xc2\xb7 Enter diff  u revert  q close", D.session);
    line_at(y++, r.x, r.w, TH_BORDER_FOCUS, head);
    int n = list_count(), rows = r.h - 1;
    if (D.sel < D.list_top)
        D.list_top = D.sel;
    if (D.sel >= D.list_top + rows)
        D.list_top = D.sel - rows + 1;
    for (int k = 0; k < rows; k++, y++) {
        int i = D.list_top + k;
        json_t *c = json_array_get(D.commands, (size_t)i);
        if (!c || i >= n) {
            line_at(y, r.x, r.w, TH_SIDEBAR, "");
            continue;
        }
        char counts[160], row[1400];
        counts_text(c, counts, sizeof counts);
        const char *state = json_string_value(json_object_get(c, "state"));
        bool risky = json_array_size(json_object_get(c, "risk")) > 0;
        bool shared = json_array_size(json_object_get(c, "shared_with")) > 0;
        snprintf(row, sizeof row, " %3lld  %-28s %-6s %s%s", (long long)json_integer_value(json_object_get(c, "command")),
                 strcmp(state, "done") == 0 ? counts : state, shared ? "shared" : "", risky ? "RISK " : "",
                 json_string_value(json_object_get(c, "line")));
        theme_elem e = i == D.sel ? TH_SIDEBAR_SELECTED : TH_SIDEBAR;
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

static void draw_confirm(tui_t *t)
{
    json_t *actions = json_object_get(D.plan, "actions"), *conflicts = json_object_get(D.plan, "conflicts");
    json_t *skipped = json_object_get(D.plan, "skipped");
    int n = (int)(json_array_size(actions) + json_array_size(conflicts) + json_array_size(skipped));
    ui_rect r = t->main;
    int h = n + 4 < r.h - 2 ? n + 4 : r.h - 2, w = r.w - 4 > 20 ? r.w - 4 : r.w;
    int y0 = r.y + (r.h - h) / 2, x0 = r.x + (r.w - w) / 2;
    char title[200];
    if (json_array_size(conflicts))
        snprintf(title, sizeof title, " Command %d cannot be reverted: files changed again after it ", D.revert_n);
    else
        snprintf(title, sizeof title, " Revert command %d of session %d? ", D.revert_n, D.session);
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
            json_array_size(conflicts) ? "  Esc close" : D.reverting ? "  reverting..." : "  y revert   n/Esc cancel");
}

void diffview_draw(tui_t *t)
{
    if (!D.active)
        return;
    ui_rect r = t->main;
    if (D.loading && ((D.view == V_DIFF && !D.reply) || (D.view == V_LIST && !D.commands))) {
        for (int k = 0; k < r.h; k++)
            line_at(r.y + k, r.x, r.w, TH_NORMAL, k == 0 ? " loading..." : "");
    } else if (D.view == V_LIST) {
        draw_list(t);
    } else if (D.reply) {
        draw_diff(t);
    } else {
        for (int k = 0; k < r.h; k++)
            line_at(r.y + k, r.x, r.w, TH_NORMAL, "");
    }
    if (D.error[0])
        line_at(r.y + r.h - 1, r.x, r.w, TH_STATE_EXIT_FAIL, D.error);
    if (D.prompting) {
        char p[300];
        snprintf(p, sizeof p, "/%s", D.typed);
        line_at(r.y + r.h - 1, r.x, r.w, TH_DIALOG_SELECTED, p);
    }
    if (D.confirming && D.plan)
        draw_confirm(t);
}

void diffview_free(void)
{
    reset_diff();
    json_decref(D.record);
    D.record = NULL;
    json_decref(D.commands);
    D.commands = NULL;
    D.active = false;
}
