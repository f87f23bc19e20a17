/*
 * remoterec.h - a session of another machine reviewed here (its timeline,
 * replay, last diff): its records copied from that machine first
 * (remoterec.c).
 *
 * Included by the files of ui/; not for other modules.
 */
#ifndef CORRAL_UI_REMOTEREC_H
#define CORRAL_UI_REMOTEREC_H

#include "ended.h"

struct tui;
typedef struct remoterec remoterec;

/* What opens once the copy is here: target's dir is then the copy's path. */
typedef void (*remoterec_open_fn)(struct tui *t, const ui_review_target *target, int action);

/* Copy target's records (a live session of another machine) and then call
 * open(t, target, action); a copy in flight is dropped.  Failures are said
 * in the status bar. */
void remoterec_open(struct tui *t, const ui_review_target *target, int action, remoterec_open_fn open);
/* The copy in flight, if any, dropped, and the private directory removed. */
void remoterec_free(struct tui *t);

#endif
