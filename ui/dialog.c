/*
 * dialog.c - what opens over the panes: the new-session form, the
 * confirmations for kill and stop, the help overlay with the effective key
 * bindings, and the search prompt.  Each takes every key while open.
 */
#include "config.h"

#include "tui_int.h"
#include "timelineview.h"
#include "base/utf8.h"

#include <curses.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void close_dialog(tui_t *t)
{
    t->dlg.kind = DLG_NONE;
    t->full_redraw = true;
    tui_redraw_soon(t);
}

void dialog_open(tui_t *t, ui_dialog_kind kind)
{
    ui_dialog *d = &t->dlg;
    memset(d, 0, sizeof *d);
    d->kind = kind;
    if (kind == DLG_NEW) {
        d->nfields = 3;
        d->fields[0].label = "name";
        d->fields[1].label = "directory";
        d->fields[2].label = "profile";
        if (!getcwd(d->fields[1].text, sizeof d->fields[1].text))
            snprintf(d->fields[1].text, sizeof d->fields[1].text, "~");
        snprintf(d->fields[2].text, sizeof d->fields[2].text, "%s",
                 t->conf->sandbox_profile ? t->conf->sandbox_profile : "workspace-write");
    } else if (kind == DLG_SEARCH) {
        /* The last query, selected: Enter finds it again, typing replaces it. */
        d->nfields = 1;
        d->fields[0].label = "search";
        snprintf(d->fields[0].text, sizeof d->fields[0].text, "%s", t->search);
        d->replace = t->search[0] != 0;
    }
    if (kind == DLG_CONFIRM_KILL)
        d->target = t->selected;
    if (kind == DLG_CONFIRM_KILL || kind == DLG_CONFIRM_STOP || kind == DLG_CONFIRM_CLEAR)
        tui_hold_keys(t); /* "xy" typed ahead never kills */
    t->full_redraw = true;
    tui_redraw_soon(t);
}

/* ---- text fields ------------------------------------------------------------ */

void field_backspace(ui_field *f)
{
    f->text[utf8_prev(f->text, strlen(f->text))] = 0;
}

void field_insert(ui_field *f, uint32_t c)
{
    ui_key k = {.key = c};
    char buf[16];
    size_t n = input_encode(&k, false, buf, sizeof buf);
    size_t len = strlen(f->text);
    if (n && len + n < UI_FIELD_MAX) {
        memcpy(f->text + len, buf, n);
        f->text[len + n] = 0;
    }
}

/* ---- new session ------------------------------------------------------------- */

static void on_new_reply(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    tui_t *t = user;
    t->dlg.busy = false;
    if (t->dlg.kind != DLG_NEW)
        return;
    json_t *err = json_object_get(reply, "error");
    if (!reply || err) {
        snprintf(t->dlg.error, sizeof t->dlg.error, "%s",
                 reply ? json_string_value(json_object_get(err, "message")) : "the server went away");
        tui_redraw_soon(t);
        return;
    }
    json_t *s = json_object_get(reply, "session");
    ui_sessions_update(&t->list, s);
    close_dialog(t);
    int id = (int)json_integer_value(json_object_get(s, "id"));
    tui_select(t, id);
    t->focus = FOCUS_PANE; /* a new shell is for typing into */
}

static void submit_new(tui_t *t)
{
    ui_dialog *d = &t->dlg;
    if (d->busy)
        return;
    int rows, cols;
    tui_pane_size(t, &rows, &cols);
    json_t *req = json_pack("{s:s, s:s, s:i, s:i, s:b}", "cmd", "new", "cwd", d->fields[1].text, "rows", rows,
                            "cols", cols, "tty", 1);
    if (d->fields[0].text[0])
        json_object_set_new(req, "name", json_string(d->fields[0].text));
    if (d->fields[2].text[0])
        json_object_set_new(req, "profile", json_string(d->fields[2].text));
    d->busy = true;
    d->error[0] = 0;
    uiconn_request(&t->conn, req, on_new_reply, t);
}

/* ---- keys ------------------------------------------------------------------- */

static void on_kill_reply(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    tui_t *t = user;
    json_t *err = json_object_get(reply, "error");
    if (err)
        tui_message(t, true, "kill: %s", json_string_value(json_object_get(err, "message")));
}

static void on_shutdown_reply(uiconn_t *c, json_t *reply, void *user)
{
    (void)c;
    (void)reply;
    tui_quit(user, 0, "corral: the server stopped; every session was ended");
}

static void form_key(tui_t *t, const ui_key *k)
{
    ui_dialog *d = &t->dlg;
    ui_field *f = &d->fields[d->field];
    if (d->replace) { /* the selected last query: kept, or replaced by what is typed */
        d->replace = false;
        if (k->key == 0x7f || k->key == 0x08 || (k->key >= 0x20 && k->key < KEY_SPECIAL))
            f->text[0] = 0;
        if (k->key == 0x7f || k->key == 0x08) {
            tui_redraw_soon(t);
            return;
        }
    }
    switch (k->key) {
    case 0x1b:
        if (d->kind == DLG_SEARCH && !t->scroll_mode)
            t->nmarks = 0;
        close_dialog(t);
        return;
    case '\r':
        if (d->kind == DLG_SEARCH) {
            snprintf(t->search, sizeof t->search, "%s", f->text);
            close_dialog(t);
            if (timelineview_active(t))
                timelineview_search(t); /* the same prompt and query, over its entries */
            else
                tui_search_run(t, 0);
        } else {
            submit_new(t);
        }
        break;
    case '\t':
    case KS_DOWN:
        d->field = (d->field + 1) % d->nfields;
        break;
    case KS_BTAB:
    case KS_UP:
        d->field = (d->field + d->nfields - 1) % d->nfields;
        break;
    case 0x7f:
    case 0x08:
        field_backspace(f);
        break;
    case 0x15: /* C-u */
        f->text[0] = 0;
        break;
    default:
        if (k->key >= 0x20 && k->key < KEY_SPECIAL && k->key != 0x7f)
            field_insert(f, k->key);
        break;
    }
    tui_redraw_soon(t);
}

void dialog_key(tui_t *t, const ui_key *k)
{
    ui_dialog *d = &t->dlg;
    if (k->mouse)
        return;
    switch (d->kind) {
    case DLG_NEW:
    case DLG_SEARCH:
        form_key(t, k);
        return;
    case DLG_CONFIRM_KILL:
    case DLG_CONFIRM_STOP:
    case DLG_CONFIRM_CLEAR:
        if (tui_keys_held(t)) {
            t->held_dropped++; /* typed before the question showed: not an answer */
            return;
        }
        if (k->key == 'y' || k->key == 'Y') {
            if (d->kind == DLG_CONFIRM_CLEAR)
                tiles_clear_confirmed(t);
            else if (d->kind == DLG_CONFIRM_KILL)
                uiconn_request(&t->conn, json_pack("{s:s, s:i}", "cmd", "kill", "session", d->target),
                               on_kill_reply, t);
            else
                uiconn_request(&t->conn, json_pack("{s:s}", "cmd", "shutdown"), on_shutdown_reply, t);
        }
        close_dialog(t);
        return;
    case DLG_HELP:
        if (k->key == 'j' || k->key == KS_DOWN) {
            d->help_top++;
        } else if (k->key == 'k' || k->key == KS_UP) {
            if (d->help_top > 0)
                d->help_top--;
        } else {
            close_dialog(t);
            return;
        }
        t->full_redraw = true;
        tui_redraw_soon(t);
        return;
    default:
        return;
    }
}

/* ---- drawing ---------------------------------------------------------------- */

static ui_rect dialog_box(tui_t *t, int h, int w)
{
    if (w > t->cols - 2)
        w = t->cols - 2;
    if (h > t->rows - 2)
        h = t->rows - 2;
    ui_rect r = {(t->rows - 1 - h) / 2, (t->cols - w) / 2, h, w};
    if (r.y < 0)
        r.y = 0;
    paint_set(TH_DIALOG, TH_DIALOG);
    for (int k = 0; k < r.h; k++)
        paint_fill(r.y + k, r.x, r.w);
    return r;
}

/* Text wrapped at blanks (or cut where a word is longer than a line) into
 * at most maxlines lines of width columns from y, x, the last one cut
 * rather than wrapped; draw false only counts.  Returns the lines it takes
 * (up to maxlines). */
static int wrap_text(const char *text, int y, int x, int width, int maxlines, bool draw)
{
    int lines = 0;
    if (width <= 0)
        return 0;
    const char *p = text;
    while (*p && lines < maxlines) {
        size_t n = paint_fit(p, width);
        if (n == 0) /* a character wider than the line: skip it rather than loop */
            n = (size_t)utf8_decode(p, strlen(p), &(int32_t){0});
        if (p[n] && lines + 1 < maxlines) { /* more follows: break at the last blank that fits (the last line is cut) */
            size_t b = n;
            while (b > 0 && p[b] != ' ')
                b--;
            if (b > 0)
                n = b;
        }
        if (draw) {
            char line[512];
            snprintf(line, sizeof line, "%.*s", (int)n, p);
            paint_text(y + lines, x, width, line);
        }
        lines++;
        p += n;
        while (*p == ' ')
            p++;
    }
    return lines;
}

/* A one-line text's place in a box: two columns in from each side, one
 * on a narrow screen. */
static int inset(ui_rect r)
{
    return r.w >= 24 ? 2 : 1;
}

static void title(ui_rect r, const char *text)
{
    paint_set(TH_DIALOG_TITLE, TH_DIALOG_TITLE);
    paint_fill(r.y, r.x, r.w);
    paint_text(r.y, r.x + 1, r.w - 2, text);
    paint_set(TH_DIALOG, TH_DIALOG);
}

static void draw_form(tui_t *t)
{
    ui_dialog *d = &t->dlg;
    bool search = d->kind == DLG_SEARCH;
    ui_rect r = dialog_box(t, search ? 4 : 9 + (d->error[0] ? 2 : 0), 72);
    title(r, !search                ? "New session"
             : timelineview_active(t) ? "Search the timeline (Enter: find, Esc: cancel)"
                                     : "Search the scrollback (Enter: find, Esc: cancel)");
    /* The fields from the third row (the second on a short screen), as
     * many as fit, the current one always. */
    int first_row = r.y + (r.h >= 5 ? 2 : 1), room = r.y + r.h - first_row;
    int shown = d->nfields < room ? d->nfields : room;
    int first = d->field >= shown ? d->field - shown + 1 : 0;
    int label_w = r.w >= 40 ? 10 : r.w / 3, fx = r.x + inset(r) + label_w + 1, fw = r.x + r.w - 2 - fx + 1;
    int cx = -1, cy = -1;
    for (int i = first; i < first + shown && fw > 0; i++) {
        int y = first_row + i - first;
        paint_set(TH_DIALOG, TH_DIALOG);
        paint_text(y, r.x + inset(r), label_w, d->fields[i].label);
        theme_elem e = i == d->field ? TH_DIALOG_SELECTED : TH_DIALOG;
        paint_set(e, e);
        paint_fill(y, fx, fw);
        /* The end of a long value stays in view. */
        const char *text = d->fields[i].text;
        while (paint_width(text) >= fw && *text)
            text++;
        if (i == d->field && d->replace)
            paint_set(TH_SEARCH_CURRENT, TH_SEARCH_CURRENT); /* selected: typing replaces it */
        int used = paint_text(y, fx, fw, text);
        if (i == d->field) {
            cy = y;
            cx = fx + used;
        }
    }
    paint_set(TH_DIALOG, TH_DIALOG);
    if (!search) {
        /* Help and state below the fields, where the box has the rows. */
        int y = r.y + 6, x = r.x + inset(r), w = r.w - 2 * inset(r);
        const char *lines[] = {"Tab next field, Enter start, Esc cancel, C-u clear",
                               "profiles: workspace-write, read-only, full, or [profile] ones",
                               d->busy ? "starting..." : ""};
        for (int i = 0; i < 3 && y + i < r.y + r.h; i++)
            paint_text(y + i, x, w, lines[i]);
        if (d->error[0] && y + 3 < r.y + r.h) {
            paint_set(TH_STATE_EXIT_FAIL, TH_DIALOG);
            wrap_text(d->error, y + 3, x, w, r.y + r.h - (y + 3), true);
        }
    }
    if (cy >= 0 && cx < r.x + r.w) {
        move(cy, cx);
        curs_set(1);
    }
}

static void draw_confirm(tui_t *t)
{
    ui_dialog *d = &t->dlg;
    char text[512];
    const char *head;
    if (d->kind == DLG_CONFIRM_KILL) {
        ui_session *s = ui_sessions_find(&t->list, d->target);
        head = "Kill session";
        snprintf(text, sizeof text, "Kill %s (%d) and every process in it?", s ? s->name : "?", d->target);
    } else if (d->kind == DLG_CONFIRM_CLEAR) {
        head = "Clear exited sessions";
        tiles_clear_question(t, text, sizeof text);
    } else {
        head = "Stop the server";
        snprintf(text, sizeof text, "Stop the server and end all %d live sessions?", ui_sessions_live(&t->list));
    }
    int w = t->cols - 2 < 64 ? t->cols - 2 : 64;
    int inner = w - 2 * (w >= 24 ? 2 : 1);
    ui_rect r = dialog_box(t, 4 + wrap_text(text, 0, 0, inner, 8, false), 64);
    title(r, head);
    /* title, a blank, the question, the answers, a blank: as many of them
     * as the screen has rows for, the answers always. */
    int top = r.y + 1 + (r.h > 3), answers = r.y + r.h - 1 - (r.h > 4);
    wrap_text(text, top, r.x + inset(r), r.w - 2 * inset(r), answers - top, true);
    paint_set(TH_DIALOG_SELECTED, TH_DIALOG_SELECTED);
    paint_text(answers, r.x + inset(r), r.w - 2 * inset(r),
               tui_keys_held(t) ? " keys held a moment " : " y yes   any other key: no ");
}

/* The help's fixed parts: keys that are not [keys] actions. */
static const char *const help_approval[] = {
    "  y                yes, run it this once",
    "  a                yes, and the same request again in this session without asking",
    "  p                yes, and keep the rule it suggests (when it suggests one)",
    "  d                no",
    "  e                no, with a note for the agent (type it, Enter sends, Esc back)",
    "  n Esc            no, and the agent is told to stop",
    "  1-9              the option of that number",
    "  Tab j k Up Down  move the highlight; Enter takes it (deny at first)",
    "  v                the whole request (j/k scroll, v or Esc back)",
    "  Keys typed in its first 0.3 s are ignored: they were meant for something else.",
};
static const char *const help_mouse[] = {
    "  click a session  select it",
    "  click a pane     focus it; a program that asked for the mouse gets the click",
    "  wheel            scroll the pane back and forth; a program that asked for the",
    "                   mouse gets the wheel instead",
    "  paste            goes to the focused pane's program (bracketed if it asked) or",
    "                   into a dialog's field; never read as keys",
};

static void draw_help(tui_t *t)
{
    ui_rect r = dialog_box(t, t->rows - 2, 100);
    title(r, "Keys (j/k scroll, any other key closes; set them in [keys] of the config)");
    static const char *const heads[KM_COUNT] = {"Supervisor focus", "Pane focus", "Scroll mode"};
    int line = 0, y = r.y + 1;
    for (int m = 0; m < KM_COUNT + 2; m++) {
        int count = m < KM_COUNT ? KA_COUNT : m == KM_COUNT ? (int)(sizeof help_approval / sizeof help_approval[0])
                                                            : (int)(sizeof help_mouse / sizeof help_mouse[0]);
        for (int a = -1; a < count; a++) {
            char text[256];
            theme_elem e = TH_DIALOG;
            if (a < 0) {
                snprintf(text, sizeof text, "%s", m < KM_COUNT ? heads[m] : m == KM_COUNT ? "Approval dialog"
                                                                                      : "Mouse and paste");
                e = TH_DIALOG_TITLE;
            } else if (m == KM_COUNT) {
                snprintf(text, sizeof text, "%s", help_approval[a]);
            } else if (m > KM_COUNT) {
                snprintf(text, sizeof text, "%s", help_mouse[a]);
            } else {
                const key_action_info *info = key_action_get((key_action)a);
                if (info->mode != (key_mode)m)
                    continue;
                char keys[96];
                key_bindings_names(&t->conf->keys, (key_action)a, keys, sizeof keys);
                snprintf(text, sizeof text, "  %-16s %-14s %s", keys, info->name, info->description);
            }
            if (line++ < t->dlg.help_top || y >= r.y + r.h)
                continue;
            paint_set(e, TH_DIALOG);
            paint_text(y++, r.x + 1, r.w - 2, text);
        }
    }
    if (t->dlg.help_top > line - 1)
        t->dlg.help_top = line - 1;
}

void dialog_draw(tui_t *t)
{
    curs_set(0);
    switch (t->dlg.kind) {
    case DLG_NEW:
    case DLG_SEARCH: draw_form(t); break;
    case DLG_CONFIRM_KILL:
    case DLG_CONFIRM_STOP:
    case DLG_CONFIRM_CLEAR: draw_confirm(t); break;
    case DLG_HELP: draw_help(t); break;
    default: break;
    }
}
