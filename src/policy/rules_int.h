/*
 * rules_int.h - what rules.c (policy, matching, output, amendment) and
 * rules_parse.c (the language) share.  Not for other modules: use rules.h.
 *
 * Included only in src/policy/.
 */
#ifndef CORRAL_RULES_INT_H
#define CORRAL_RULES_INT_H

#include "policy/rules.h"
#include "base/util.h"

#include <stdbool.h>
#include <stddef.h>

/* A string that may hold NUL bytes (Starlark's "\0"); s[n] is always NUL. */
typedef struct rstr {
    char *s;
    size_t n;
} rstr;

/* One pattern element after the first: a token or alternatives. */
typedef struct rpat {
    rstr *alts;
    size_t n;
} rpat;

typedef struct prule {
    rstr first; /* the program (one rule per first-token alternative) */
    rpat *rest;
    size_t nrest;
    rule_decision decision;
    bool has_justification;
    rstr justification;
} prule;

typedef struct host_exe {
    char *name;
    char **paths; /* normalised absolute paths, no duplicates */
    size_t n;
} host_exe;

struct rules {
    prule *pr;
    size_t npr, cap_pr;
    host_exe *hx; /* a later definition of a name replaces the earlier one */
    size_t nhx;
    rule_network *net;
    size_t nnet;
};

void rstr_free(rstr *s);
rstr rstr_dup(const char *s, size_t n);
bool rstr_eq(const rstr *a, const rstr *b);

void prule_free(prule *p);
void host_exe_free(host_exe *h);
void rule_network_free(rule_network *n);

/* Take ownership of the pieces (each of p, h, n is moved). */
void rules_push_prefix(rules_t *r, prule *p);
void rules_set_host_exe(rules_t *r, host_exe *h);
void rules_push_network(rules_t *r, rule_network *n);
/* Move everything of src into dst (src is left empty). */
void rules_absorb(rules_t *dst, rules_t *src);

/* The matcher behind rules_match: rules pr[0..npr) in order, host
 * executables looked up in hx[] from the end (the latest definition wins). */
size_t rules_match_core(const prule *pr, size_t npr, const host_exe *hx, size_t nhx, const rstr *argv, size_t argc,
                        bool resolve, rule_match **out);
/* Whether any of them matches (what rules_match_core would find), without
 * collecting every match. */
bool rules_match_any(const prule *pr, size_t npr, const host_exe *hx, size_t nhx, const rstr *argv, size_t argc,
                     bool resolve);

/* "/a/./b/../c//" -> "/a/c" (lexical, never above "/"); path must be absolute. */
char *rules_normalize_path(const char *path);
/* The last component of a normalised absolute path, or NULL for "/". */
const char *rules_path_basename(const char *norm);

/* Split like the shlex crate (POSIX words, quotes, backslashes, # comments).
 * 0 with *out (count *n), or -1 on an unterminated quote or a trailing
 * backslash. */
int rules_shlex_split(const char *s, size_t len, rstr **out, size_t *n);
/* Append words joined and quoted for a shell (for messages). */
void rules_shlex_join(buf_t *b, const rstr *w, size_t n);

/* Length of the Unicode White_Space character at s (as Rust's
 * char::is_whitespace), else 0.  s is NUL-terminated. */
size_t rules_unicode_space(const unsigned char *s);

/* serde_json's string: quotes, \" \\ \n \t \r \b \f, \u00xx for other
 * control characters, everything else as is. */
void rules_json_string(buf_t *b, const char *s, size_t n);

/* ---- the language (rules_syntax.c, rules_parse.c) ------------------------------------ */

/* Where the first error of a load goes: "NAME:LINE:COLUMN: message". */
typedef struct perr {
    const char *name;
    char *buf;
    size_t len;
    bool set;
} perr;

void rules_fail_at(perr *e, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

typedef enum vkind { V_STR, V_LIST } vkind;

typedef struct value {
    vkind kind;
    int line, col;
    rstr str;
    struct value *items;
    size_t n;
} value;

typedef struct arg {
    char *kw; /* NULL: positional */
    int line, col;
    value v;
} arg;

typedef struct call {
    char *name;
    int line, col;
    arg *args;
    size_t n;
} call;

void rules_value_free(value *v);
void rules_call_free(call *c);

/* Parse text (LF line ends, valid UTF-8, no NUL) into calls; false with the
 * error in e.  *calls is allocated either way (free each with call_free). */
bool rules_parse_calls(perr *e, const char *text, size_t len, call **calls, size_t *ncalls);

#endif
