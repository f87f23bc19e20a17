/*
 * dialog.c - what the dialogs share (dialog.h): the centred box and its
 * title, wrapped text, one-line fields and a form of them.
 */
#include "config.h"

#include "dialog.h"
#include "base/utf8.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- forms ------------------------------------------------------------------ */

form_event form_key(ui_form *form, const ui_key *k)
{
    ui_field *f = &form->fields[form->field];
    if (f->replace) { /* the selected last query: kept, or replaced by what is typed */
        f->replace = false;
        if (k->key == 0x7f || k->key == 0x08 || (k->key >= 0x20 && k->key < KEY_SPECIAL))
            f->text[0] = 0;
        if (k->key == 0x7f || k->key == 0x08)
            return FORM_EDITED;
    }
    switch (k->key) {
    case 0x1b: return FORM_CANCEL;
    case '\r': return FORM_SUBMIT;
    case '\t':
    case KS_DOWN:
        form->field = (form->field + 1) % form->nfields;
        break;
    case KS_BTAB:
    case KS_UP:
        form->field = (form->field + form->nfields - 1) % form->nfields;
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
    return FORM_EDITED;
}

void form_draw(ui_form *form, ui_rect r)
{
    /* The fields from the third row (the second on a short screen), as
     * many as fit, the current one always. */
    int first_row = r.y + (r.h >= 5 ? 2 : 1), room = r.y + r.h - first_row;
    int shown = form->nfields < room ? form->nfields : room;
    int first = form->field >= shown ? form->field - shown + 1 : 0;
    int label_w = r.w >= 40 ? 10 : r.w / 3, fx = r.x + dialog_inset(r) + label_w + 1, fw = r.x + r.w - 2 - fx + 1;
    int cx = -1, cy = -1;
    for (int i = first; i < first + shown && fw > 0; i++) {
        int y = first_row + i - first;
        paint_set(TH_DIALOG, TH_DIALOG);
        paint_text(y, r.x + dialog_inset(r), label_w, form->fields[i].label);
        theme_elem e = i == form->field ? TH_DIALOG_SELECTED : TH_DIALOG;
        paint_set(e, e);
        paint_fill(y, fx, fw);
        /* The end of a long value stays in view. */
        const char *text = form->fields[i].text;
        while (paint_width(text) >= fw && *text)
            text++;
        if (i == form->field && form->fields[i].replace)
            paint_set(TH_SEARCH_CURRENT, TH_SEARCH_CURRENT); /* selected: typing replaces it */
        int used = paint_text(y, fx, fw, text);
        if (i == form->field) {
            cy = y;
            cx = fx + used;
        }
    }
    paint_set(TH_DIALOG, TH_DIALOG);
    form->cursor_y = cy >= 0 && cx < r.x + r.w ? cy : -1;
    form->cursor_x = cx;
}

bool form_dialog_cursor(tui_t *t, ui_view *v)
{
    (void)t;
    const ui_form *form = &((form_dialog *)v)->form;
    if (form->cursor_y >= 0) {
        move(form->cursor_y, form->cursor_x);
        curs_set(1);
    } else {
        curs_set(0);
    }
    return true;
}

/* ---- boxes ------------------------------------------------------------------ */

ui_rect dialog_box(tui_t *t, int h, int w)
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

int dialog_wrap(const char *text, int y, int x, int width, int maxlines, bool draw)
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

int dialog_inset(ui_rect r)
{
    return r.w >= 24 ? 2 : 1;
}

void dialog_title(ui_rect r, const char *text)
{
    paint_set(TH_DIALOG_TITLE, TH_DIALOG_TITLE);
    paint_fill(r.y, r.x, r.w);
    paint_text(r.y, r.x + 1, r.w - 2, text);
    paint_set(TH_DIALOG, TH_DIALOG);
}

ui_field *form_dialog_field(tui_t *t, ui_view *v)
{
    (void)t;
    ui_form *form = &((form_dialog *)v)->form;
    return &form->fields[form->field];
}

bool dialog_no_cursor(tui_t *t, ui_view *v)
{
    (void)t;
    (void)v;
    curs_set(0);
    return true;
}

void dialog_free(tui_t *t, ui_view *v)
{
    (void)t;
    free(v);
}
