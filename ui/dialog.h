/*
 * dialog.h - the boxes that open over the supervisor screen, each a view
 * (view.h) in its own file: the new-session form (newsession.c), the
 * confirmations (confirm.c), the help overlay (help.c) and the search
 * prompt (prompt.c); and what they share (dialog.c): the centred box, its
 * title row, wrapped text, and a form of one-line fields, whose editing
 * the approval dialog's note uses too.
 *
 * A dialog takes every key while it is on top; the mouse does nothing
 * over it, and a paste goes into its field or nowhere.
 *
 * Included by the files of ui/; not for other modules.
 */
#ifndef CORRAL_UI_DIALOG_H
#define CORRAL_UI_DIALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tui_int.h"

/* ---- the kit (dialog.c) ---------------------------------------------------- */

/* A box of h rows and w columns (less on a small screen) in the middle of
 * the screen above the status bar, filled in the dialog style. */
ui_rect dialog_box(tui_t *t, int h, int w);
/* The box's title row. */
void dialog_title(ui_rect r, const char *text);
/* Text wrapped at blanks (or cut where a word is longer than a line) into
 * at most maxlines lines of width columns from y, x, the last one cut
 * rather than wrapped; draw false only counts.  Returns the lines it takes
 * (up to maxlines). */
int dialog_wrap(const char *text, int y, int x, int width, int maxlines, bool draw);
/* A one-line text's place in a box: two columns in from each side, one
 * on a narrow screen. */
int dialog_inset(ui_rect r);
/* A dialog without a text cursor: it hides the focused pane's. */
bool dialog_no_cursor(tui_t *t, ui_view *v);
/* The close of a dialog whose state holds nothing to let go of: freed. */
void dialog_free(tui_t *t, ui_view *v);

/* Editing a one-line text field. */
void field_insert(ui_field *f, uint32_t c);
void field_backspace(ui_field *f);

#define FORM_FIELDS 4

/* One-line fields, one of them current. */
typedef struct ui_form {
    ui_field fields[FORM_FIELDS];
    int nfields, field;
    int cursor_y, cursor_x; /* where the current field's end was drawn; cursor_y < 0: not on the screen */
} ui_form;

typedef enum form_event { FORM_EDITED, FORM_SUBMIT, FORM_CANCEL } form_event;

/* A key to a form: Esc cancels, Enter submits; Tab, Shift-Tab and the
 * arrows move between fields, Backspace and C-u delete, a printable
 * character is typed (over a selected text, replacing it). */
form_event form_key(ui_form *f, const ui_key *k);
/* The fields in box r from its third row (the second on a short screen),
 * as many as fit, the current one always, its end kept in view. */
void form_draw(ui_form *f, ui_rect r);

/* The head of a dialog with a form (the new-session form, the search
 * prompt): the view, then the form, whose current field takes a paste and
 * has the text cursor at its end. */
typedef struct form_dialog {
    ui_view view;
    ui_form form;
} form_dialog;
bool form_dialog_cursor(tui_t *t, ui_view *v);
ui_field *form_dialog_field(tui_t *t, ui_view *v);

/* ---- the dialogs ----------------------------------------------------------- */

/* newsession.c: name, directory and profile (and, with [hosts], the
 * machine); Enter asks that machine's server for the session and focuses
 * it, a refusal shows in the form. */
void newsession_open(tui_t *t);

/* confirm.c: a question answered by y (any other key: no); keys typed in
 * the first TUI_GUARD_S are held, never an answer.  question writes the
 * question as it is when drawn; yes does what was asked. */
void confirm_open(tui_t *t, const char *head, void (*question)(tui_t *t, int target, char *out, size_t outlen),
                  void (*yes)(tui_t *t, int target), int target);
/* Kill the selected session, stop the server. */
void confirm_kill(tui_t *t);
void confirm_stop(tui_t *t);

/* help.c: the effective key bindings, the approval dialog's keys, the
 * mouse; j/k scroll, any other key closes. */
void help_open(tui_t *t);

/* prompt.c: the search prompt, the last query (t->search) selected: Enter
 * takes the query into t->search, closes and runs run(t, ctx); Esc closes
 * (and out of scroll mode the scrollback's marks go). */
void prompt_open(tui_t *t, const char *title, void (*run)(tui_t *t, void *ctx), void *ctx);

#endif
