/*
 * help.c - the help overlay (?): the key bindings in effect (the config's
 * [keys] over the defaults) for each focus, then the approval dialog's
 * keys and the mouse's, which are not [keys] actions.  j/k and the arrows
 * scroll; any other key closes it.
 */
#include "config.h"

#include "dialog.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

typedef struct help_view {
    ui_view view; /* first: the view's head */
    int top;      /* first line shown */
} help_view;

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

static void key(tui_t *t, ui_view *v, const ui_key *k)
{
    help_view *h = (help_view *)v;
    if (k->key == 'j' || k->key == KS_DOWN) {
        h->top++;
    } else if (k->key == 'k' || k->key == KS_UP) {
        if (h->top > 0)
            h->top--;
    } else {
        view_close(t, v);
        return;
    }
    t->full_redraw = true;
    tui_redraw_soon(t);
}

/* Lines of the config's part, drawn as they come, wrapped at the box. */
typedef struct help_lines {
    help_view *h;
    ui_rect r;
    int line, y;
} help_lines;

static void put_line(help_lines *l, const char *text, theme_elem e)
{
    if (l->line++ < l->h->top || l->y >= l->r.y + l->r.h)
        return;
    paint_set(e, TH_DIALOG);
    paint_text(l->y++, l->r.x + 1, l->r.w - 2, text);
}

static void config_line(void *user, const char *text, bool heading)
{
    help_lines *l = user;
    /* An error names the file, the line, the value and the fix: all of it
     * is shown, wrapped at blanks (continuation lines indented). */
    int w = l->r.w - 2 > 20 ? l->r.w - 2 : 20;
    const char *p = text;
    bool first = true;
    while (*p) {
        int room = first ? w : w - 4;
        size_t n = strlen(p);
        if ((int)n > room) {
            n = (size_t)room;
            for (size_t k = n; k > (size_t)room / 2; k--)
                if (p[k] == ' ') {
                    n = k;
                    break;
                }
        }
        char piece[512];
        snprintf(piece, sizeof piece, "%s%.*s", first ? "" : "    ", (int)n, p);
        put_line(l, piece, heading ? TH_DIALOG_TITLE : TH_DIALOG);
        p += n;
        while (*p == ' ')
            p++;
        first = false;
    }
}

static void draw(tui_t *t, ui_view *v)
{
    help_view *h = (help_view *)v;
    ui_rect r = dialog_box(t, t->rows - 2, 100);
    dialog_title(r, "Keys (j/k scroll, any other key closes; set them in [keys] of the config)");
    static const char *const heads[KM_COUNT] = {"Supervisor focus", "Pane focus", "Scroll mode"};
    /* The config file's errors first: they are why a key may not be the
     * one the file meant. */
    help_lines cl = {h, r, 0, r.y + 1};
    confstate_help(t, config_line, &cl);
    /* Then the other machines ([hosts]) and why one is not up, in full. */
    for (size_t i = 1; i < t->hosts.n; i++) {
        const ui_host *hh = t->hosts.v[i];
        char text[800];
        if (i == 1)
            config_line(&cl, "Machines ([hosts])", true);
        if (hh->state == HOST_UP)
            snprintf(text, sizeof text, "%s: up (%s)", hh->name, hh->remote->spec);
        else
            hosts_down_text(hh, text, sizeof text);
        config_line(&cl, text, false);
        /* Its rules files that did not load, each (the status bar shows the first). */
        for (const char *p = hh->state == HOST_UP ? hh->rules_error : NULL; p && *p;) {
            size_t n = strcspn(p, "\n");
            snprintf(text, sizeof text, "  rules: %.*s", (int)(n < 700 ? n : 700), p);
            config_line(&cl, text, false);
            p += n + (p[n] == '\n');
        }
    }
    int line = cl.line, y = cl.y;
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
                /* blanks between keys, as in [keys] and below: "/" is a key */
                key_bindings_join(&t->conf->keys, (key_action)a, " ", keys, sizeof keys);
                snprintf(text, sizeof text, "  %-16s %-14s %s", keys, info->name, info->description);
            }
            if (line++ < h->top || y >= r.y + r.h)
                continue;
            paint_set(e, TH_DIALOG);
            paint_text(y++, r.x + 1, r.w - 2, text);
        }
    }
    if (h->top > line - 1)
        h->top = line - 1;
}

static const ui_view_ops help_ops = {
    .draw = draw,
    .key = key,
    .cursor = dialog_no_cursor,
    .paste_dropped = PASTE_NOT_COMMANDS,
    .close = dialog_free,
};

void help_open(tui_t *t)
{
    help_view *h = view_new(sizeof *h, &help_ops);
    view_push(t, &h->view);
}
