/*
 * approval_draw.c - how a pending request looks: the modal dialog (a
 * summary with the numbered options, the details view, the note field),
 * its mark in the sidebar and its count in the status bar; and what the
 * keys (approval.c) and the drawing both read: the options a request
 * offers, and the type-ahead guard, which starts when the shown request
 * is first drawn.
 *
 * The dialog is a list of lines, each with a priority; on a screen too
 * small for all of them the least important go first (wrapped tails,
 * blanks, the footer...), so the command, "runs OUTSIDE the sandbox", the
 * risks and the highlighted option are the last to be lost.  The command
 * is the server's quoted line (quote_argv_display: every word whole and
 * unambiguous, invisible characters as escapes), wrapped over as many
 * lines as it needs; when the box cannot hold them all, its last line says
 * how many bytes are left and the details view (v) shows every word.
 * Every line is clipped to the box, and nothing the request carries
 * reaches the terminal except as text drawn by paint_text (control
 * characters become '?').
 */
#include "config.h"

#include "tui_int.h"
#include "protocol/client.h"
#include "base/quote.h"
#include "base/util.h"

#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APPROVAL_GUARD_S 0.3

/* ---- what a request offers, and when it was seen ------------------------------------- */

bool approval_is_network(const ui_approval *a)
{
    const char *kind = json_string_value(json_object_get(a->req, "kind"));
    return kind && strcmp(kind, "network") == 0;
}

bool approval_has_prefix(const ui_approval *a)
{
    json_t *p = json_object_get(a->req, "prefix_rule");
    return json_is_array(p) && json_array_size(p) > 0;
}

bool approval_can_persist(const ui_approval *a)
{
    return approval_is_network(a) || approval_has_prefix(a);
}

int approval_options(const ui_approval *a, ui_answer *out)
{
    int n = 0;
    for (int i = 0; i < ANS_COUNT; i++)
        if ((i != ANS_PERSIST || approval_can_persist(a)) && (i != ANS_NOTE || !approval_is_network(a)))
            out[n++] = (ui_answer)i;
    return n;
}

static void on_guard_end(uv_timer_t *timer)
{
    tui_redraw_soon(timer->data); /* the options are no longer dimmed */
}

/* The shown request reached the screen: the guard counts from there, not
 * from when the event came. */
static void drawn(tui_t *t)
{
    ui_approvals *q = &t->appr;
    if (q->drawn)
        return;
    q->drawn = true;
    q->guard_until = ui_now() + APPROVAL_GUARD_S;
    uv_timer_start(&q->guard_timer, on_guard_end, (uint64_t)(APPROVAL_GUARD_S * 1000) + 1, 0);
}

bool approval_held(const tui_t *t)
{
    return !t->appr.drawn || ui_now() < t->appr.guard_until;
}

double approval_remaining(const ui_approval *a, double now)
{
    if (a->expires0 < 0)
        return -1;
    double left = a->expires0 - (now - a->seen_at);
    return left < 0 ? 0 : left;
}

static void clock_text(double s, char *out, size_t n)
{
    long v = s < 0 ? 0 : (long)(s + 0.999); /* a countdown shows 0:00 only at the end */
    if (v >= 3600)
        snprintf(out, n, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
    else
        snprintf(out, n, "%ld:%02ld", v / 60, v % 60);
}

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* A string of the request with what a reader could not see (bidi
 * overrides, zero-width and control characters) written as escapes, as
 * corral approvals shows it.  Caller frees. */
static char *visible(json_t *o, const char *key)
{
    const char *s = str(o, key);
    return quote_text_visible(s, strlen(s));
}

/* ---- lines ------------------------------------------------------------------------ */

typedef struct dline {
    char *text;
    theme_elem e;
    int prio;    /* dropped lowest first when the screen is short */
    bool fill;   /* the whole width in e (the highlight, the field) */
    bool dim;    /* an option while keys are held */
    bool cursor; /* the text field: the cursor goes at its end */
    bool cmd;    /* a line of the command */
} dline;

typedef struct dlines {
    dline *v;
    int n, cap;
} dlines;

static dline *add_line(dlines *L, int prio, theme_elem e, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static dline *add_line(dlines *L, int prio, theme_elem e, const char *fmt, ...)
{
    if (L->n == L->cap) {
        L->cap = L->cap ? L->cap * 2 : 32;
        L->v = xrealloc(L->v, (size_t)L->cap * sizeof *L->v);
    }
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = xmalloc(len > 0 ? (size_t)len + 1 : 1);
    text[0] = 0;
    va_start(ap, fmt);
    if (len > 0)
        vsnprintf(text, (size_t)len + 1, fmt, ap);
    va_end(ap);
    dline *d = &L->v[L->n++];
    *d = (dline){.text = text, .e = e, .prio = prio};
    return d;
}

static void free_lines(dlines *L)
{
    for (int i = 0; i < L->n; i++)
        free(L->v[i].text);
    free(L->v);
}

static int count_cmd(const dlines *L)
{
    int n = 0;
    for (int i = 0; i < L->n; i++)
        n += L->v[i].cmd;
    return n;
}

static void drop_line(dlines *L, int i)
{
    free(L->v[i].text);
    memmove(L->v + i, L->v + i + 1, (size_t)(L->n - i - 1) * sizeof *L->v);
    L->n--;
}

/* The length of the character at p (an invalid byte: 1). */
static size_t one_char(const char *p)
{
    int32_t cp;
    return utf8_decode(p, strlen(p), &cp);
}

/* lead + text in lines of at most w columns, broken at a space where one
 * is near; continuation lines are indented under the text.  At most
 * maxlines (0: any number), the last cut short with an ellipsis. */
static int add_wrapped(dlines *L, int prio, int prio_rest, theme_elem e, int w, int maxlines, const char *lead,
                       const char *text)
{
    int first = L->n;
    char *joined = NULL;
    int leadw = paint_width(lead);
    if (w < leadw + 8) { /* too narrow to indent: one flowing text */
        joined = xasprintf("%s%s", lead, text);
        text = joined;
        lead = "";
        leadw = 0;
    }
    int avail = w - leadw > 1 ? w - leadw : 1;
    const char *p = text;
    for (int line = 0; line == 0 || *p; line++) {
        size_t fit = paint_fit(p, avail);
        bool last = maxlines && line + 1 == maxlines && p[fit];
        if (last)
            fit = paint_fit(p, avail - 1);
        else if (p[fit] && fit > 0) {
            size_t sp = fit;
            while (sp > 0 && p[sp] != ' ')
                sp--;
            if (sp > fit / 2)
                fit = sp;
        }
        if (fit == 0 && *p) /* not even one character fits: show it anyway */
            fit = one_char(p);
        add_line(L, line ? prio_rest : prio, e, "%*s%.*s%s", line ? leadw : 0, line ? "" : lead, (int)fit, p,
                 last ? "\xe2\x80\xa6" : "");
        p += fit;
        if (last)
            break;
        if (*p == ' ')
            p++;
    }
    free(joined);
    return L->n - first;
}

/* The command line after lead, in lines of at most w columns, losing
 * nothing at a break: a line breaks after a space where one is near, and
 * the space stays on it.  At most maxlines lines (0: all); when the rest
 * does not fit, the last line ends with a mark saying how many bytes are
 * left and that the details view (v) shows them: never a silent cut. */
static int add_command(dlines *L, int prio, int prio_rest, int w, int maxlines, const char *lead, const char *cmd)
{
    int first = L->n, leadw = paint_width(lead);
    if (w < leadw + 8) {
        lead = "";
        leadw = 0;
    }
    int avail = w - leadw > 1 ? w - leadw : 1;
    size_t len = strlen(cmd);
    const char *p = cmd;
    for (int line = 0; line == 0 || *p; line++) {
        size_t fit = paint_fit(p, avail);
        char mark[64] = "";
        if (maxlines && line + 1 == maxlines && p[fit]) {
            /* Room for the mark at its longest, then the mark itself. */
            snprintf(mark, sizeof mark, "\xe2\x80\xa6[+%zu bytes: v shows all]", len);
            int mw = paint_width(mark);
            fit = avail > mw ? paint_fit(p, avail - mw) : 0;
            snprintf(mark, sizeof mark, "\xe2\x80\xa6[+%zu bytes: v shows all]", len - (size_t)(p + fit - cmd));
        } else if (p[fit] && fit > 0) {
            size_t sp = fit;
            while (sp > 0 && p[sp - 1] != ' ')
                sp--;
            if (sp > fit / 2)
                fit = sp;
        }
        if (fit == 0 && *p && !mark[0])
            fit = one_char(p);
        dline *d = add_line(L, line ? prio_rest : prio, TH_DIALOG, "%*s%.*s%s", line ? leadw : 0, line ? "" : lead,
                            (int)fit, p, mark);
        d->cmd = true;
        p += fit;
        if (mark[0])
            break;
    }
    return L->n - first;
}

/* ---- the summary ------------------------------------------------------------------ */

static const char option_keys[ANS_COUNT] = {[ANS_ONCE] = 'y', [ANS_SESSION] = 'a', [ANS_PERSIST] = 'p',
                                            [ANS_DENY] = 'd', [ANS_NOTE] = 'e', [ANS_STOP] = 'n'};

/* A network host's options: what each makes, with the rule p or d saves. */
static const char *network_label(const ui_approval *a, ui_answer ans, char *buf, size_t n)
{
    json_t *r = a->req;
    char *host = visible(r, "host");
    switch (ans) {
    case ANS_ONCE: snprintf(buf, n, "Yes, this connection"); break;
    case ANS_SESSION:
        snprintf(buf, n, "Yes, and allow %s (%s, port %lld) for the rest of this session", host, str(r, "protocol"),
                 (long long)json_integer_value(json_object_get(r, "port")));
        break;
    case ANS_PERSIST: snprintf(buf, n, "Yes, always: save %s", str(r, "network_rule_allow")); break;
    case ANS_DENY: snprintf(buf, n, "No, never: save %s", str(r, "network_rule_deny")); break;
    case ANS_STOP: snprintf(buf, n, "No, not this time (n or Esc)"); break;
    default: snprintf(buf, n, "?"); break;
    }
    free(host);
    return buf;
}

static bool escalated(const ui_approval *a)
{
    return strcmp(str(json_object_get(a->req, "permissions"), "sandbox"), "escalated") == 0;
}

static const char *option_label(const ui_approval *a, ui_answer ans, char *buf, size_t n)
{
    if (approval_is_network(a))
        return network_label(a, ans, buf, n);
    switch (ans) {
    case ANS_ONCE: return "Yes, proceed (once)";
    case ANS_SESSION: return "Yes, and don't ask again for this exact command this session";
    case ANS_PERSIST: {
        /* The saved rule lets every later matching command through with
         * no dialog: for an escalation, that is outside the sandbox. */
        char *prefix = client_quote_argv(json_object_get(a->req, "prefix_rule"));
        if (escalated(a))
            snprintf(buf, n, "Yes, always run commands starting with `%s` OUTSIDE the sandbox, without asking",
                     prefix);
        else
            snprintf(buf, n, "Yes, and always allow commands starting with `%s` without asking", prefix);
        free(prefix);
        return buf;
    }
    case ANS_DENY: return "No, deny";
    case ANS_NOTE: return "No, and tell the agent what to do differently";
    case ANS_STOP: return "No, stop (n or Esc): the agent is told to stop and wait";
    default: return "?";
    }
}

static void permissions_text(json_t *perm, buf_t *b)
{
    const char *sb = str(perm, "sandbox");
    if (strcmp(sb, "escalated") == 0)
        buf_puts(b, "runs OUTSIDE the sandbox");
    else
        buf_printf(b, "sandboxed (%s)", sb[0] ? sb : "?");
    json_t *write = json_object_get(perm, "write");
    if (json_array_size(write)) {
        char *roots = client_quote_argv(write);
        buf_printf(b, ", plus write to %s", roots);
        free(roots);
    }
    if (json_is_true(json_object_get(perm, "network")))
        buf_puts(b, ", plus network access");
}

static void risks_text(json_t *risks, buf_t *b)
{
    size_t i;
    json_t *r;
    json_array_foreach(risks, i, r)
    {
        if (i)
            buf_puts(b, " \xc2\xb7 ");
        buf_puts(b, json_string_value(r) ? json_string_value(r) : "?");
    }
}

static void who_text(tui_t *t, const ui_approval *a, buf_t *b)
{
    json_t *r = a->req;
    char age[32];
    ui_age_text(a->age0 + ui_now() - a->seen_at, age, sizeof age);
    char *cwd = quote_word_display(str(r, "cwd"));
    buf_printf(b, "%s request, in %s \xc2\xb7 from %s", str(r, "kind")[0] ? str(r, "kind") : "?", cwd,
               str(r, "client"));
    free(cwd);
    const ui_session *s = a->session ? ui_sessions_find(&t->list, a->session) : NULL;
    if (a->session)
        buf_printf(b, ", session %s (%s)", s ? s->name : str(r, "session_name"), hosts_id(t, a->session));
    else
        buf_puts(b, ", no session yet");
    buf_printf(b, "%s \xc2\xb7 asked %s ago", json_is_true(json_object_get(r, "tty")) ? ", on a terminal" : "", age);
}


/* Another machine's request: its name first, in its own style, so that
 * an answer is never given thinking it is for this machine. */
static void remote_line(tui_t *t, const ui_approval *a, dlines *L)
{
    const ui_host *h = hosts_of(t, a->id);
    if (h && h->index > 0)
        add_line(L, 99, TH_REMOTE_HOST, "On %s, another machine (%s)", h->name, h->remote->spec);
}

/* The summary; the command takes at most cmd_lines lines (0: all). */
static void summary(tui_t *t, const ui_approval *a, dlines *L, int w, bool held, int cmd_lines)
{
    ui_approvals *q = &t->appr;
    json_t *r = a->req;
    remote_line(t, a, L);
    if (approval_is_network(a)) {
        /* The host, port and protocol instead of a command; the command
         * running in the session is what connects. */
        char *host = visible(r, "host"), *running = visible(r, "running");
        add_line(L, 90, TH_DIALOG, "Port %lld \xc2\xb7 protocol %s",
                 (long long)json_integer_value(json_object_get(r, "port")), str(r, "protocol"));
        add_command(L, 92, 30, w, 1, "Host: ", host);
        /* Where an allow leads when the host is (or may resolve to) a
         * loopback or private address: said before the answer, not
         * learnt from a 403 after it. */
        char *where = visible(r, "address");
        if (where[0])
            add_wrapped(L, 91, 50, TH_DIALOG, w, 3, "", where);
        free(where);
        if (running[0])
            add_command(L, 60, 20, w, cmd_lines ? cmd_lines : 0, "Running: ", running);
        free(host);
        free(running);
    } else {
        char *cmd = client_approval_command(r);
        add_command(L, 90, 30, w, cmd_lines, "$ ", cmd);
        free(cmd);
    }
    if (escalated(a))
        add_wrapped(L, 98, 97, TH_PROFILE_FULL, w, 0, "",
                    "\xe2\x9a\xa0 Runs OUTSIDE the sandbox: nothing confines it");
    buf_t b;
    buf_init(&b);
    who_text(t, a, &b);
    add_wrapped(L, 50, 15, TH_DIALOG, w, 2, "", b.len ? b.data : "");
    buf_free(&b);
    /* Who waits for the answer, and whether its wait (an agent's call) is
     * kept open. */
    char *waiter = visible(r, "waiter");
    if (waiter[0])
        add_wrapped(L, 45, 12, TH_DIALOG, w, 2, "Waiting: ", waiter);
    free(waiter);
    if (json_integer_value(json_object_get(r, "failed_session")) > 0) {
        /* A retry: which run failed (its name is the agent's, made
         * visible). */
        char *name = visible(r, "failed_session_name"), line[600];
        snprintf(line, sizeof line, "session %s (%lld), which failed in the sandbox", name[0] ? name : "?",
                 (long long)json_integer_value(json_object_get(r, "failed_session")));
        add_wrapped(L, 75, 20, TH_DIALOG, w, 2, "Retrying: ", line);
        free(name);
    }
    add_line(L, 10, TH_DIALOG, "%s", "");
    if (str(r, "justification")[0]) {
        char *just = visible(r, "justification");
        add_wrapped(L, 60, 20, TH_DIALOG, w, 3, "Justification: ", just);
        free(just);
    }
    char why[1024];
    snprintf(why, sizeof why, "%s%s%s%s", str(r, "reason"), str(r, "rule")[0] ? " (rule `" : "", str(r, "rule"),
             str(r, "rule")[0] ? "`)" : "");
    add_wrapped(L, 70, 20, TH_DIALOG, w, 2, "Why it asks: ", why);
    if (!approval_is_network(a)) {
        buf_init(&b);
        permissions_text(json_object_get(r, "permissions"), &b);
        add_wrapped(L, escalated(a) ? 98 : 65, 20, escalated(a) ? TH_PROFILE_FULL : TH_DIALOG, w, 2,
                    "Permissions: ", b.len ? b.data : "");
        buf_free(&b);
    }
    if (json_array_size(json_object_get(r, "risks"))) {
        buf_init(&b);
        risks_text(json_object_get(r, "risks"), &b);
        add_wrapped(L, 75, 20, TH_PROFILE_FULL, w, 2, "Risks: ", b.len ? b.data : "");
        buf_free(&b);
    }
    add_line(L, 10, TH_DIALOG, "%s", "");
    if (q->note) {
        add_wrapped(L, 95, 20, TH_DIALOG, w, 2, "", "Tell the agent what to do differently:");
        /* The end of a long note stays in view. */
        const char *text = q->note_field.text;
        while (*text && paint_width(text) >= w)
            text++;
        dline *f = add_line(L, 100, TH_DIALOG_SELECTED, "%s", text);
        f->fill = f->cursor = true;
    } else {
        ui_answer opts[ANS_COUNT];
        int n = approval_options(a, opts);
        for (int i = 0; i < n; i++) {
            char buf[512], lead[32];
            bool hl = opts[i] == q->highlight;
            snprintf(lead, sizeof lead, "%s %d %c  ", hl ? "\xe2\x80\xba" : " ", i + 1, option_keys[opts[i]]);
            int k = add_wrapped(L, hl ? 100 : 95, hl ? 96 : 55, hl ? TH_DIALOG_SELECTED : TH_DIALOG, w, 3, lead,
                                option_label(a, opts[i], buf, sizeof buf));
            for (int j = L->n - k; j < L->n; j++) {
                L->v[j].fill = hl;
                L->v[j].dim = held;
            }
        }
    }
    add_line(L, 10, TH_DIALOG, "%s", "");
    if (q->error[0])
        add_wrapped(L, 85, 20, TH_STATE_EXIT_FAIL, w, 2, "", q->error);
    const char *footer;
    if (a->answering)
        footer = "sending the answer...";
    else if (held)
        footer = "keys held for a moment: keys typed ahead do not answer";
    else if (q->note)
        footer = "Enter deny with this note \xc2\xb7 Esc back \xc2\xb7 C-u clear";
    else
        footer = q->n > 1 ? "Enter confirm \xc2\xb7 \xe2\x86\x91/\xe2\x86\x93 choose \xc2\xb7 v details \xc2\xb7 Tab next request"
                          : "Enter confirm \xc2\xb7 \xe2\x86\x91/\xe2\x86\x93 choose \xc2\xb7 v details";
    /* The id, for corral approve/deny and the logs. */
    char more[256];
    snprintf(more, sizeof more, "%s \xc2\xb7 request %s", footer, hosts_id(t, a->id));
    add_wrapped(L, 40, 5, TH_DIALOG, w, 2, "", more);
}

/* ---- the details view ------------------------------------------------------------ */

static void details(tui_t *t, const ui_approval *a, dlines *L, int w)
{
    json_t *r = a->req, *perm = json_object_get(r, "permissions");
    char buf[256];
    remote_line(t, a, L);
    add_line(L, 0, TH_DIALOG, "Request %s \xc2\xb7 %s \xc2\xb7 from %s", hosts_id(t, a->id), str(r, "kind"),
             str(r, "client"));
    if (a->session) {
        const ui_session *s = ui_sessions_find(&t->list, a->session);
        add_line(L, 0, TH_DIALOG, "Session: %s (%s)", s ? s->name : str(r, "session_name"), hosts_id(t, a->session));
    } else {
        add_line(L, 0, TH_DIALOG, "Session: none yet (the command starts one when approved)");
    }
    if (approval_is_network(a)) {
        char *host = visible(r, "host"), *running = visible(r, "running");
        add_command(L, 0, 0, w, 0, "Host: ", host);
        add_line(L, 0, TH_DIALOG, "Port: %lld", (long long)json_integer_value(json_object_get(r, "port")));
        add_line(L, 0, TH_DIALOG, "Protocol: %s", str(r, "protocol"));
        add_command(L, 0, 0, w, 0, "Running: ", running[0] ? running : "(unknown)");
        char *where = visible(r, "address");
        if (where[0])
            add_wrapped(L, 0, 0, TH_DIALOG, w, 0, "Address: ", where);
        free(where);
        add_wrapped(L, 0, 0, TH_DIALOG, w, 0, "p saves: ", str(r, "network_rule_allow"));
        add_wrapped(L, 0, 0, TH_DIALOG, w, 0, "d saves: ", str(r, "network_rule_deny"));
        free(host);
        free(running);
    }
    char *cwd = quote_word_display(str(r, "cwd"));
    add_command(L, 0, 0, w, 0, "Directory: ", cwd);
    free(cwd);
    add_line(L, 0, TH_DIALOG, "Terminal: %s", json_is_true(json_object_get(r, "tty")) ? "yes" : "no");
    char *waiter = visible(r, "waiter");
    if (waiter[0])
        add_wrapped(L, 0, 0, TH_DIALOG, w, 0, "Who waits: ", waiter);
    free(waiter);
    char *cmd = client_approval_command(r);
    add_command(L, 0, 0, w, 0, "Command: ", cmd);
    free(cmd);
    json_t *argv = json_object_get(r, "argv");
    add_line(L, 0, TH_DIALOG, "Its %zu word%s, one a line:", json_array_size(argv), json_array_size(argv) == 1 ? "" : "s");
    size_t i;
    json_t *word;
    json_array_foreach(argv, i, word)
    {
        buf_t one;
        buf_init(&one);
        quote_word_append(&one, json_string_value(word) ? json_string_value(word) : "", i == 0);
        snprintf(buf, sizeof buf, "  %3zu  ", i);
        add_command(L, 0, 0, w, 0, buf, one.data);
        buf_free(&one);
    }
    if (escalated(a))
        add_line(L, 0, TH_PROFILE_FULL, "Sandbox: escalated \xe2\x80\x94 runs OUTSIDE the sandbox");
    else
        add_line(L, 0, TH_DIALOG, "Sandbox: %s", str(perm, "sandbox"));
    json_t *write = json_object_get(perm, "write");
    if (!json_array_size(write))
        add_line(L, 0, TH_DIALOG, "Extra write roots: none");
    json_array_foreach(write, i, word)
    {
        char *root = quote_word_display(json_string_value(word) ? json_string_value(word) : "?");
        add_command(L, 0, 0, w, 0, i ? "                   " : "Extra write roots: ", root);
        free(root);
    }
    add_line(L, 0, TH_DIALOG, "Network: %s", json_is_true(json_object_get(perm, "network")) ? "yes" : "no");
    char *just = visible(r, "justification");
    add_wrapped(L, 0, 0, TH_DIALOG, w, 0, "Justification: ", just[0] ? just : "(none given)");
    free(just);
    add_wrapped(L, 0, 0, TH_DIALOG, w, 0, "Why it asks: ", str(r, "reason"));
    add_wrapped(L, 0, 0, TH_DIALOG, w, 0, "Matched rule: ", str(r, "rule")[0] ? str(r, "rule") : "(none)");
    if (approval_has_prefix(a)) {
        char *p = client_quote_argv(json_object_get(r, "prefix_rule"));
        add_wrapped(L, 0, 0, TH_DIALOG, w, 0, "p would allow: ", p);
        free(p);
    }
    buf_t b;
    buf_init(&b);
    risks_text(json_object_get(r, "risks"), &b);
    add_wrapped(L, 0, 0, b.len ? TH_PROFILE_FULL : TH_DIALOG, w, 0, "Risks: ", b.len ? b.data : "none seen");
    buf_free(&b);
    ui_age_text(a->age0 + ui_now() - a->seen_at, buf, sizeof buf);
    add_line(L, 0, TH_DIALOG, "Asked: %s ago", buf);
    double left = approval_remaining(a, ui_now());
    if (left >= 0) {
        clock_text(left, buf, sizeof buf);
        add_line(L, 0, TH_DIALOG, "Timeout: denied in %s unless answered", buf);
    } else {
        add_line(L, 0, TH_DIALOG, "Timeout: none, it waits for an answer");
    }
}

/* ---- the box ------------------------------------------------------------------------ */

static void title_text(const ui_approval *a, char *out, size_t n)
{
    if (approval_is_network(a)) {
        char *host = visible(a->req, "host");
        snprintf(out, n, "Allow network access to \"%s\"?", host);
        free(host);
        return;
    }
    const char *sb = str(json_object_get(a->req, "permissions"), "sandbox");
    snprintf(out, n, "Would you like to run the following command%s?",
             strcmp(sb, "escalated") == 0 ? " outside the sandbox"
             : strcmp(sb, "more") == 0    ? " with more permissions"
                                          : "");
}

void approval_draw(tui_t *t, ui_view *v)
{
    (void)v;
    ui_approvals *q = &t->appr;
    ui_approval *a = NULL;
    q->cursor_y = -2; /* not drawn: the cursor is left to what is under it */
    for (size_t i = 0; i < q->n; i++)
        if (q->v[i].id == q->shown)
            a = &q->v[i];
    if (!a || t->rows < 2 || t->cols < 4)
        return;
    drawn(t);
    bool held = approval_held(t);
    int bw = t->cols - 2 < 100 ? t->cols - 2 : 100, margin = 2;
    if (bw < 30) { /* a narrow screen: every column for the text */
        bw = t->cols;
        margin = 0;
    }
    int w = bw - 2 * margin;
    int maxh = t->rows - 1; /* the status bar stays */
    dlines L = {0};
    if (q->details) {
        details(t, a, &L, w);
        int room = maxh - 2 > 1 ? maxh - 2 : 1; /* title, footer */
        if (q->details_top > L.n - room)
            q->details_top = L.n - room > 0 ? L.n - room : 0;
        for (int i = 0; i < q->details_top; i++)
            drop_line(&L, 0);
        while (L.n > room)
            drop_line(&L, L.n - 1);
        /* Only the answers this request offers (no p without a rule to
         * save, no e for a connection). */
        ui_answer opts[ANS_COUNT];
        int nopts = approval_options(a, opts);
        char keys[2 * ANS_COUNT + 1] = "", footer[160];
        for (int i = 0; i < nopts; i++) {
            size_t len = strlen(keys);
            snprintf(keys + len, sizeof keys - len, "%s%c", i ? " " : "", option_keys[opts[i]]);
        }
        snprintf(footer, sizeof footer,
                 "\xe2\x86\x91/\xe2\x86\x93 PgUp/PgDn scroll \xc2\xb7 v or Esc: back \xc2\xb7 %s answer", keys);
        add_wrapped(&L, 0, 0, TH_DIALOG, w, 1, "", footer);
    } else {
        /* Least important first; of equals, the lowest on the box.  If
         * that drops lines of the command, it is drawn again in the lines
         * that stayed, its last one saying what is left (the lines it
         * gives up are the lowest-priority ones left, so the rest stays
         * the same). */
        int room = maxh - 2 >= 1 ? maxh - 2 : maxh - 1; /* title, a blank at the bottom */
        for (int cmd_lines = maxh, pass = 0; pass < 2; pass++) {
            summary(t, a, &L, w, held, cmd_lines);
            int before = count_cmd(&L);
            while (L.n > room && L.n > 0) {
                int worst = -1;
                for (int i = 0; i < L.n; i++)
                    if (worst < 0 || L.v[i].prio <= L.v[worst].prio)
                        worst = i;
                drop_line(&L, worst);
            }
            int kept = count_cmd(&L);
            if (kept == before)
                break;
            free_lines(&L);
            L = (dlines){0};
            cmd_lines = kept > 0 ? kept : 1;
        }
    }
    int h = L.n + 1 + (L.n + 2 <= maxh ? 1 : 0);
    if (h > maxh)
        h = maxh;
    int y0 = (maxh - h) / 2, x0 = (t->cols - bw) / 2;
    ui_rect box = {y0, x0, h, bw};
    if (memcmp(&box, &q->box, sizeof box) != 0) {
        /* A smaller box would leave the old one's edges over the panes,
         * which only repaint what changed: the next frame repaints all. */
        q->box = box;
        t->full_redraw = true;
        tui_redraw_soon(t);
    }
    paint_set(TH_DIALOG, TH_DIALOG);
    for (int k = 0; k < h; k++)
        paint_fill(y0 + k, x0, bw);
    /* Title, with which request of how many and the countdown on the right. */
    char title[160], right[96] = "", clock[32];
    title_text(a, title, sizeof title);
    int pos = 1;
    for (size_t i = 0; i < q->n; i++)
        if (q->v[i].id == a->id)
            pos = (int)i + 1;
    double left = approval_remaining(a, ui_now());
    if (q->n > 1)
        snprintf(right, sizeof right, " %d of %zu", pos, q->n);
    if (left >= 0) {
        clock_text(left, clock, sizeof clock);
        snprintf(right + strlen(right), sizeof right - strlen(right), " %sdenied in %s", q->n > 1 ? "\xc2\xb7 " : "",
                 clock);
    }
    if (right[0])
        strcat(right, " ");
    paint_set(TH_DIALOG_TITLE, TH_DIALOG_TITLE);
    paint_fill(y0, x0, bw);
    int rw = paint_width(right) < bw ? paint_width(right) : 0;
    paint_text(y0, x0 + (margin ? 1 : 0), bw - rw - (margin ? 2 : 0), title);
    if (rw) {
        paint_set(left >= 0 && left < 10 ? TH_STATE_EXIT_FAIL : TH_DIALOG_TITLE, TH_DIALOG_TITLE);
        paint_text(y0, x0 + bw - rw, rw, right);
    }
    int cy = -1, cx = -1;
    for (int i = 0; i < L.n && 1 + i < h; i++) {
        dline *d = &L.v[i];
        int y = y0 + 1 + i;
        paint_set(d->e, TH_DIALOG);
        if (d->dim)
            attron(A_DIM);
        if (d->fill)
            paint_fill(y, x0 + margin, w);
        int used = paint_text(y, x0 + margin, w, d->text);
        if (d->cursor) {
            cy = y;
            cx = x0 + margin + (used < w ? used : w - 1);
        }
    }
    free_lines(&L);
    q->cursor_y = cy >= 0 ? cy : -1;
    q->cursor_x = cx;
}

bool approval_cursor(tui_t *t, ui_view *v)
{
    (void)v;
    ui_approvals *q = &t->appr;
    if (q->cursor_y == -2)
        return false;
    if (q->cursor_y >= 0) { /* at the end of the note being typed */
        move(q->cursor_y, q->cursor_x);
        curs_set(1);
    } else {
        curs_set(0);
    }
    return true;
}

/* ---- sidebar and status bar ---------------------------------------------------------- */

void approval_sidebar_row(tui_t *t, const ui_approval *a, ui_rect r, int y)
{
    (void)t;
    paint_set(TH_SIDEBAR, TH_SIDEBAR);
    paint_fill(y, r.x, r.w);
    paint_set(TH_STATE_WAITING, TH_SIDEBAR);
    paint_text(y, r.x + 1, 1, "?");
    char age[32];
    ui_age_text(a->age0 + ui_now() - a->seen_at, age, sizeof age);
    int aw = paint_width(age);
    char *cmd = client_approval_command(a->req);
    paint_set(TH_SIDEBAR, TH_SIDEBAR);
    int name_w = r.w - 4 - aw - 1;
    if (name_w > 1 && paint_width(cmd) > name_w) { /* cut, and it shows: the dialog has it all */
        cmd[paint_fit(cmd, name_w - 1)] = 0;
        int used = paint_text(y, r.x + 3, name_w - 1, cmd);
        paint_text(y, r.x + 3 + used, 1, "\xe2\x80\xa6");
    } else if (name_w > 0) {
        paint_text(y, r.x + 3, name_w, cmd);
    }
    if (r.w - aw - 1 > 3)
        paint_text(y, r.x + r.w - aw - 1, aw, age);
    free(cmd);
}

int approval_status_count(tui_t *t, int y, int x, int maxw)
{
    char text[48];
    snprintf(text, sizeof text, " approvals %zu", t->appr.n);
    paint_set(t->appr.n ? TH_STATE_WAITING : TH_STATUS, TH_STATUS);
    int used = paint_text(y, x, maxw, text);
    paint_set(TH_STATUS, TH_STATUS);
    return used;
}

int approval_status_rules(tui_t *t, int y, int x, int maxw)
{
    const char *machine;
    const char *e = hosts_rules_error(t, &machine);
    if (!e || maxw <= 0)
        return 0;
    /* The first error, its file without the directory (the status bar is
     * short; corral approvals prints them all in full). */
    size_t len = strcspn(e, "\n");
    int more = 0;
    for (const char *p = e + len; *p; p++)
        more += *p == '\n' && p[1];
    char first[1024];
    snprintf(first, sizeof first, "%.*s", (int)len, e);
    const char *colon = strchr(first, ':'), *shown = first;
    for (const char *p = first; colon && p < colon; p++)
        if (*p == '/')
            shown = p + 1;
    char text[1200];
    char count[48] = "";
    if (more)
        snprintf(count, sizeof count, " (%d errors)", more + 1);
    snprintf(text, sizeof text, "%s%srules%s: %s", machine ? machine : "", machine ? ": " : "", count, shown);
    paint_set(TH_STATE_EXIT_FAIL, TH_STATUS);
    int used = paint_text(y, x, maxw, text);
    paint_set(TH_STATUS, TH_STATUS);
    return used;
}

void approval_wait_text(const ui_approval *a, bool brief, char *out, size_t n)
{
    if (approval_is_network(a)) {
        char *host = visible(a->req, "host");
        if (brief)
            snprintf(out, n, "? %s", host);
        else
            snprintf(out, n, "waits for your answer: network access to %s:%lld (request %d)", host,
                     (long long)json_integer_value(json_object_get(a->req, "port")), a->id);
        free(host);
        return;
    }
    if (brief) {
        snprintf(out, n, "? asks");
        return;
    }
    char *cmd = visible(a->req, json_object_get(a->req, "line") ? "line" : "command");
    const char *sb = str(json_object_get(a->req, "permissions"), "sandbox");
    snprintf(out, n, "waits for your answer: to run %s%s (request %d)", cmd,
             strcmp(sb, "escalated") == 0 ? " outside the sandbox" : strcmp(sb, "more") == 0 ? " with more permissions"
                                                                                          : "",
             a->id);
    free(cmd);
}
