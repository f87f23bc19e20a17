/*
 * notify.h - telling the person at this screen's terminal that a request
 * waits (notify.c): the bell, and a desktop notification through the
 * terminal (OSC 9 or OSC 777) where the terminal shows one.
 *
 * Included only in ui/.
 */
#ifndef CORRAL_UI_NOTIFY_H
#define CORRAL_UI_NOTIFY_H

#include <jansson.h>

struct tui;

/* A request (an APPROVAL) started to wait: as [ui] notify says. */
void term_notify(struct tui *t, const json_t *approval);

#endif
