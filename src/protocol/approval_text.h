/*
 * approval_text.h - one line that says what a waiting request (an
 * APPROVAL, docs/protocol.md) asks, for a notification: the terminal's
 * (ui/notify.c) and the [notify] command's (src/gate/notify.c).  The text a
 * sandbox chose (a command, a host, a session's name) is made visible and
 * the line is cut with a mark, so it is safe inside an escape sequence or
 * an environment variable.
 *
 * Included by src/protocol/, src/gate/ and ui/.
 */
#ifndef CORRAL_APPROVAL_TEXT_H
#define CORRAL_APPROVAL_TEXT_H

#include <jansson.h>
#include <stddef.h>

/* "session 3 (agent) asks to run outside the sandbox: git push", or "...
 * asks to reach pypi.org (https)": no control character, at most max bytes
 * (cut with a mark).  Caller frees. */
char *approval_summary(const json_t *approval, size_t max);
/* A string field of approval made visible and cut to max bytes; "" when
 * absent.  Caller frees. */
char *approval_field_visible(const json_t *approval, const char *key, size_t max);

#endif
