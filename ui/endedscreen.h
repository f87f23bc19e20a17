/*
 * endedscreen.h - what the panes show while an ended session is selected
 * (ended.h): its last screen, rebuilt from its recording, under a title
 * that says it ended and what reviews it.  Read once per selected session.
 *
 * Included through tui_int.h by the files of ui/; not for other modules.
 */
#ifndef CORRAL_UI_ENDEDSCREEN_H
#define CORRAL_UI_ENDEDSCREEN_H

#include "layout.h"

struct tui;
struct castplay;

typedef struct ui_ended_screen {
    char dir[48];          /* the row (ui_ended_session.key) whose screen is loaded; "": none */
    struct castplay *play; /* its recording played to the end, or NULL */
    char error[300];       /* why there is none */
} ui_ended_screen;

/* Draw the selected ended session's last screen in r (the panes' area). */
void endedscreen_draw(struct tui *t, ui_rect r);
void endedscreen_free(ui_ended_screen *s);

#endif
