/*
 * quote.h - showing text from outside to a person, unambiguously and
 * completely: an argv as one shell-quoted line (the one argv display-quoter
 * of corral: the approval dialog, corral approvals, corral ls, recordings),
 * free text with its invisible characters made visible, a marked cut for a
 * caller that must shorten, JSON text with them escaped, and `cat -v` for
 * output bound for a terminal.
 *
 * Included by src/base/, src/protocol/, src/policy/, src/record/,
 * src/server/, src/snap/, src/gate/, src/mcp/, ui/ and src/cli/.
 */
#ifndef CORRAL_QUOTE_H
#define CORRAL_QUOTE_H

#include "base/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* argv (NULL-terminated; NULL is an empty argv) as one line for a person
 * to read, never to run.  Words are separated by one space, none is ever
 * cut, and each is written so that the line reads back as exactly argv:
 *  - plain words (ASCII letters, digits and @%+=:,./_- only; an '=' not in
 *    the first word, where the shell would take it for an assignment) as
 *    they are;
 *  - other words in single quotes, a ' inside as '\'' (POSIX shell
 *    quoting: Python's shlex.split() of the line gives back exactly argv);
 *  - a word with a character a reader could not see or would misread
 *    (C0 and C1 controls, DEL, invalid UTF-8, Unicode format characters
 *    such as the bidi overrides and isolates U+202A-202E, U+2066-2069,
 *    the marks U+200E, U+200F, U+061C and the zero-width U+200B-200D,
 *    U+2060, U+FEFF, other default-ignorable characters, and spaces and
 *    line separators other than the ASCII space) in bash's $'...' form,
 *    those characters as \n \t \r \xNN (a control, or a byte that is not
 *    UTF-8) or \uNNNN / \UNNNNNNNN: bash reads it back as exactly the
 *    word; shlex.split does not know $'...' and cannot, which is the
 *    point: such a word is shown, not made copy-and-paste safe for shlex.
 * Returns malloc'd text; the caller frees it. */
char *quote_argv_display(char *const *argv);

/* Append one word to b as quote_argv_display writes it; first: the word is
 * in command position. */
void quote_word_append(buf_t *b, const char *word, bool first);

/* One word (a path, say) as quote_argv_display writes a word that is not
 * the first.  Caller frees. */
char *quote_word_display(const char *word);

/* Free text (a reason, a note) with what a reader could not see made
 * visible as in a $'...' word (\n, \xNN, \uNNNN), everything else as it is
 * (no quotes added, a backslash stays one).  Caller frees. */
char *quote_text_visible(const char *s, size_t len);

/* text cut to at most max bytes (on a character boundary) when it is
 * longer, the cut marked at the end with how much is missing:
 * "...[cut: N more bytes]" ("..." being U+2026).  For callers that must
 * shorten for a screen: a cut is never silent.  Caller frees. */
char *quote_shorten(const char *text, size_t max);

/* Is cp one of the characters quote_argv_display writes as an escape? */
bool quote_cp_hidden(int32_t cp);

/* Append JSON text (a document as jansson or the timeline writes it,
 * compact or indented) to out with every character quote_cp_hidden names
 * written as a \u escape (a surrogate pair above U+FFFF), so that the same
 * JSON value reaches a terminal with nothing it would act on or hide: JSON
 * writers escape the C0 controls but leave DEL, the C1 controls and the
 * invisible characters raw.  Such characters can only stand inside a
 * string in valid JSON, where the escape means the same character; a byte
 * that is not UTF-8 (never in a valid document) becomes \ufffd. */
void quote_json_append(buf_t *out, const char *json, size_t len);

/* Control characters made visible as `cat -v` does, for output bound for a
 * terminal: ESC as ^[, other C0 controls as ^X, DEL as ^?, C1 controls
 * (U+0080-U+009F) as M-^X, and a byte that is not part of valid UTF-8 as
 * cat -v writes a byte >= 0x80 (M-^X, M-x or M-^?).  Newline and tab, and
 * valid UTF-8 text, pass unchanged; so does carriage return unless show_cr
 * is set (then ^M, as cat -v has it): a program's output on a terminal
 * ends its lines with it, while in a file's text it would let a line
 * overwrite what it showed first.  A stream's chunks may split a character
 * anywhere: the incomplete end of one chunk waits in st for the next;
 * final flushes it (as invalid bytes, when it never completed). */
typedef struct quote_catv {
    char carry[4];
    size_t carry_len;
    bool show_cr;
} quote_catv;
void quote_catv_write(quote_catv *st, buf_t *out, const char *s, size_t len, bool final);

#endif
