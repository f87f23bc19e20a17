/*
 * jsonscan.h - one line of JSON Lines read fast: the members of a JSON
 * object as spans of the text (key and value text, not decoded), after
 * checking that the whole line is valid JSON (RFC 8259: strings with
 * valid escapes and UTF-8 and no raw control characters, numbers, nesting
 * at most JS_MAX_DEPTH deep).  A value's text can then be copied into
 * other JSON as it is, or decoded when it is needed.  For reading large
 * logs (events.jsonl) where building a tree of every line would cost more
 * than the rest of the work together; jansson builds the tree of what is
 * shown in detail.
 *
 * Included only in src/record/.
 */
#ifndef CORRAL_JSONSCAN_H
#define CORRAL_JSONSCAN_H

#include <stdbool.h>
#include <stddef.h>

#define JS_MAX_DEPTH 64

typedef struct js_span {
    const char *p;
    size_t n;
} js_span;

typedef struct js_member {
    js_span key; /* between its quotes, escapes as written */
    js_span val; /* the value's whole text ("..." with its quotes, {...}, 12, true) */
    char type;   /* 's' string, 'n' number, 'o' object, 'a' array, 't' true, 'f' false, 'z' null */
} js_member;

/* Scan text[0..len) as one JSON object, with white space around it.  The
 * first max members go to m (more are checked but not kept); returns how
 * many there are (which may be more than max), or -1 with err saying what
 * is wrong and where. */
int js_scan_object(const char *text, size_t len, js_member *m, int max, char *err, size_t errlen);

/* The last member named key (a key written with escapes is not found), or
 * NULL. */
const js_member *js_find(const js_member *m, int n, const char *key);

/* A member's value as a number; false if it is not one, or (js_int) not a
 * whole number a long long holds, or (js_number) beyond a double's range. */
bool js_int(const js_member *m, long long *out);
bool js_number(const js_member *m, double *out);
/* A string value: is it exactly s (as written, no escapes)? */
bool js_is(const js_member *m, const char *s);
/* A string value decoded (escapes resolved) into a new NUL-terminated
 * string; NULL if it is not a string.  *len (if not NULL) gets its length
 * (it may contain NUL only if the text had \u0000, which the scanner
 * refuses). */
char *js_string(const js_member *m, size_t *len);
/* How many elements an array value holds; -1 if it is not an array. */
long js_array_length(const js_member *m);

#endif
