/*
 * rules_parse.c - what the calls of a rules file mean (docs/corral.rules.5,
 * as the Codex CLI reads them).  rules_syntax.c reads the whole file into calls
 * first (so a syntax error anywhere wins, as in Starlark); here the calls
 * are evaluated in order into a staged policy, the match/not_match
 * examples are checked, and only then is the file added: all or nothing.
 *
 * Arguments are keywords or, as in Starlark, leading positionals in
 * Codex's order.  Every error is "FILE:LINE:COLUMN: what was wrong", at the
 * value that is wrong.
 */
#include "config.h"

#include "policy/rules_int.h"
#include "base/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- evaluation ----------------------------------------------------------------------- */

typedef struct example {
    rstr *w;
    size_t n;
    int line, col;
} example;

/* A prefix_rule's examples, checked once the whole file is read. */
typedef struct pending {
    size_t first, count; /* its rules in the staged policy */
    example *match, *not_match;
    size_t nmatch, nnot;
} pending;

typedef struct evalctx {
    perr *e;
    rules_t *base;   /* what is already loaded */
    rules_t *staged; /* this file */
    pending *pend;
    size_t npend, cap_pend;
    size_t tokens;        /* pattern strings staged so far (RULES_MAX_TOKENS) */
    size_t host_exes;     /* host_executable calls so far */
} evalctx;

static void examples_free(example *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < x[i].n; k++)
            rstr_free(&x[i].w[k]);
        free(x[i].w);
    }
    free(x);
}

typedef struct builtin {
    const char *name;
    const char *const *params; /* positional order */
    size_t nparams;
    const char *known; /* for messages */
} builtin;

static const char *const prefix_params[] = {"pattern", "decision", "match", "not_match", "justification"};
static const char *const host_params[] = {"name", "paths"};
static const char *const net_params[] = {"host", "protocol", "decision", "justification"};
static const builtin builtins[] = {
    {"prefix_rule", prefix_params, 5, "pattern, decision, justification, match, not_match"},
    {"host_executable", host_params, 2, "name, paths"},
    {"network_rule", net_params, 4, "host, protocol, decision, justification"},
};

/* Arguments by parameter; false (reported) for unknown or doubled ones. */
static bool bind(evalctx *x, const call *c, const builtin *b, const value **slot)
{
    for (size_t i = 0; i < b->nparams; i++)
        slot[i] = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const arg *a = &c->args[i];
        size_t k = i;
        if (a->kw) {
            for (k = 0; k < b->nparams && strcmp(b->params[k], a->kw) != 0; k++)
                ;
            if (k == b->nparams) {
                /* Starlark's words, as Codex prints them, and what is known. */
                rules_fail_at(x->e, a->line, a->col, "Found `%s` extra named parameter(s) for call to %s (known: %s)",
                              a->kw, b->name, b->known);
                return false;
            }
            if (slot[k]) {
                rules_fail_at(x->e, a->line, a->col, "%s got '%s' twice (positionally and by keyword)", b->name, a->kw);
                return false;
            }
        } else if (k >= b->nparams) {
            rules_fail_at(x->e, a->line, a->col, "%s takes at most %zu positional arguments (%s)", b->name, b->nparams,
                    b->known);
            return false;
        }
        slot[k] = &a->v;
    }
    return true;
}

static bool need(evalctx *x, const call *c, const value *v, const char *kw)
{
    if (!v)
        rules_fail_at(x->e, c->line, c->col, "missing keyword '%s' for %s", kw, c->name);
    return v != NULL;
}

/* A string value (NUL-free unless allow_nul) or an error naming what it should be. */
static bool want_string(evalctx *x, const value *v, const char *what)
{
    if (v->kind != V_STR) {
        rules_fail_at(x->e, v->line, v->col, "%s must be a string, not a list", what);
        return false;
    }
    return true;
}

static bool all_space(const rstr *s)
{
    for (size_t i = 0; i < s->n;) {
        size_t k = rules_unicode_space((const unsigned char *)s->s + i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

static bool want_justification(evalctx *x, const value *v)
{
    if (v && (v->kind != V_STR || all_space(&v->str))) {
        rules_fail_at(x->e, v->line, v->col, "justification must be a non-empty string");
        return false;
    }
    return true;
}

static bool no_nul(evalctx *x, const value *v, const char *what)
{
    if (strlen(v->str.s) != v->str.n) {
        rules_fail_at(x->e, v->line, v->col, "%s cannot contain a NUL character", what);
        return false;
    }
    return true;
}

static bool parse_examples(evalctx *x, const value *list, const char *kw, example **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (!list)
        return true;
    if (list->kind != V_LIST) {
        rules_fail_at(x->e, list->line, list->col, "%s must be a list of examples (strings or lists of strings)", kw);
        return false;
    }
    example *ex = xcalloc(list->n + 1, sizeof *ex);
    for (size_t i = 0; i < list->n; i++) {
        const value *v = &list->items[i];
        example *e = &ex[i];
        e->line = v->line, e->col = v->col;
        if (v->kind == V_STR) {
            if (rules_shlex_split(v->str.s, v->str.n, &e->w, &e->n) < 0) {
                rules_fail_at(x->e, v->line, v->col,
                        "invalid %s example: the string has invalid shell syntax (an unterminated quote or a "
                        "trailing backslash)",
                        kw);
                goto bad;
            }
            if (e->n == 0) {
                rules_fail_at(x->e, v->line, v->col, "invalid %s example: it cannot be an empty string", kw);
                goto bad;
            }
            continue;
        }
        if (v->n == 0) {
            rules_fail_at(x->e, v->line, v->col, "invalid %s example: it cannot be an empty list", kw);
            goto bad;
        }
        e->w = xcalloc(v->n, sizeof *e->w);
        for (size_t k = 0; k < v->n; k++) {
            if (v->items[k].kind != V_STR) {
                rules_fail_at(x->e, v->items[k].line, v->items[k].col, "invalid %s example: its tokens must be strings",
                        kw);
                goto bad;
            }
            e->w[e->n++] = rstr_dup(v->items[k].str.s, v->items[k].str.n);
        }
    }
    *out = ex;
    *nout = list->n;
    return true;
bad:
    examples_free(ex, list->n);
    return false;
}

static rule_decision parse_decision(const rstr *s, bool network)
{
    if (strlen(s->s) != s->n)
        return RULE_NONE;
    if (strcmp(s->s, "allow") == 0)
        return RULE_ALLOW;
    if (strcmp(s->s, "prompt") == 0)
        return RULE_PROMPT;
    if (strcmp(s->s, "forbidden") == 0 || (network && strcmp(s->s, "deny") == 0))
        return RULE_FORBIDDEN;
    return RULE_NONE;
}

static bool eval_prefix_rule(evalctx *x, const call *c, const value **a)
{
    const value *pattern = a[0], *decision = a[1], *match = a[2], *not_match = a[3], *just = a[4];
    if (!need(x, c, pattern, "pattern"))
        return false;
    if (pattern->kind != V_LIST) {
        rules_fail_at(x->e, pattern->line, pattern->col, "pattern must be a non-empty list");
        return false;
    }
    if (decision && !want_string(x, decision, "decision"))
        return false;
    if (match && match->kind != V_LIST) {
        rules_fail_at(x->e, match->line, match->col, "match must be a list of examples (strings or lists of strings)");
        return false;
    }
    if (not_match && not_match->kind != V_LIST) {
        rules_fail_at(x->e, not_match->line, not_match->col,
                "not_match must be a list of examples (strings or lists of strings)");
        return false;
    }
    if (just && just->kind != V_STR)
        return want_justification(x, just);
    rule_decision d = decision ? parse_decision(&decision->str, false) : RULE_ALLOW;
    if (d == RULE_NONE) {
        rules_fail_at(x->e, decision->line, decision->col, "invalid decision: %s (use allow, prompt or forbidden)",
                decision->str.s);
        return false;
    }
    if (!want_justification(x, just))
        return false;
    if (pattern->n == 0) {
        rules_fail_at(x->e, pattern->line, pattern->col, "pattern must be a non-empty list");
        return false;
    }
    /* One rule per alternative of the first element, each with its own
     * copy of the rest: bound what that expansion stores. */
    size_t rest_tokens = 0;
    for (size_t i = 0; i < pattern->n; i++) {
        const value *el = &pattern->items[i];
        if (el->kind == V_LIST && el->n == 0) {
            rules_fail_at(x->e, el->line, el->col, "pattern alternatives must be a non-empty list of strings");
            return false;
        }
        if (el->kind == V_LIST && el->n > RULES_MAX_ALTERNATIVES) {
            rules_fail_at(x->e, el->line, el->col, "too many alternatives: %zu (at most %d in one pattern element)",
                          el->n, RULES_MAX_ALTERNATIVES);
            return false;
        }
        if (i > 0)
            rest_tokens += el->kind == V_LIST ? el->n : 1;
        for (size_t k = 0; el->kind == V_LIST && k < el->n; k++) {
            if (el->items[k].kind != V_STR) {
                rules_fail_at(x->e, el->items[k].line, el->items[k].col,
                        "pattern alternatives must be strings, not a list");
                return false;
            }
        }
    }
    size_t nexamples = (match ? match->n : 0) + (not_match ? not_match->n : 0);
    if (nexamples > RULES_MAX_EXAMPLES) {
        const value *at = match ? match : not_match;
        rules_fail_at(x->e, at->line, at->col, "too many examples: %zu (at most %d match and not_match examples "
                      "in one rule)", nexamples, RULES_MAX_EXAMPLES);
        return false;
    }
    const value *head = &pattern->items[0];
    size_t nheads = head->kind == V_LIST ? head->n : 1;
    size_t cost = nheads * (1 + rest_tokens); /* at most 1024 * 1M: no overflow */
    if (cost > RULES_MAX_TOKENS - x->tokens) {
        rules_fail_at(x->e, pattern->line, pattern->col,
                      "this file's patterns are too large: with this one they hold more than %d strings (each "
                      "alternative of a pattern's first element is a rule with its own copy of the rest)",
                      RULES_MAX_TOKENS);
        return false;
    }
    x->tokens += cost;
    pending pd = {0};
    if (!parse_examples(x, match, "match", &pd.match, &pd.nmatch))
        return false;
    if (!parse_examples(x, not_match, "not_match", &pd.not_match, &pd.nnot)) {
        examples_free(pd.match, pd.nmatch);
        return false;
    }
    pd.first = x->staged->npr;
    pd.count = nheads;
    for (size_t h = 0; h < nheads; h++) {
        const value *hv = head->kind == V_LIST ? &head->items[h] : head;
        prule r = {0};
        r.first = rstr_dup(hv->str.s, hv->str.n);
        r.nrest = pattern->n - 1;
        r.rest = xcalloc(r.nrest + 1, sizeof *r.rest);
        for (size_t i = 0; i < r.nrest; i++) {
            const value *el = &pattern->items[i + 1];
            size_t n = el->kind == V_LIST ? el->n : 1;
            r.rest[i].alts = xcalloc(n, sizeof *r.rest[i].alts);
            r.rest[i].n = n;
            for (size_t k = 0; k < n; k++) {
                const value *t = el->kind == V_LIST ? &el->items[k] : el;
                r.rest[i].alts[k] = rstr_dup(t->str.s, t->str.n);
            }
        }
        r.decision = d;
        if (just) {
            r.has_justification = true;
            r.justification = rstr_dup(just->str.s, just->str.n);
        }
        rules_push_prefix(x->staged, &r);
    }
    if (pd.nmatch || pd.nnot) {
        if (x->npend == x->cap_pend) {
            x->cap_pend = x->cap_pend ? 2 * x->cap_pend : 8;
            x->pend = xrealloc(x->pend, x->cap_pend * sizeof *x->pend);
        }
        x->pend[x->npend++] = pd;
    } else { /* match=[] and not_match=[]: nothing to check, nothing to keep */
        examples_free(pd.match, 0);
        examples_free(pd.not_match, 0);
    }
    return true;
}

static bool eval_host_executable(evalctx *x, const call *c, const value **a)
{
    const value *name = a[0], *paths = a[1];
    if (!need(x, c, name, "name") || !need(x, c, paths, "paths") || !want_string(x, name, "host_executable name"))
        return false;
    if (paths->kind != V_LIST) {
        rules_fail_at(x->e, paths->line, paths->col, "host_executable paths must be a list of strings");
        return false;
    }
    /* Duplicates are found by comparing every pair, and each definition
     * replaces an earlier one by a search: keep both small. */
    if (paths->n > RULES_MAX_PATHS) {
        rules_fail_at(x->e, paths->line, paths->col, "too many host_executable paths: %zu (at most %d)", paths->n,
                      RULES_MAX_PATHS);
        return false;
    }
    if (++x->host_exes > RULES_MAX_HOST_EXECUTABLES) {
        rules_fail_at(x->e, c->line, c->col, "too many host_executable calls in one file (at most %d)",
                      RULES_MAX_HOST_EXECUTABLES);
        return false;
    }
    const char *nm = name->str.s;
    if (name->str.n == 0) {
        rules_fail_at(x->e, name->line, name->col, "host_executable name cannot be empty");
        return false;
    }
    if (strchr(nm, '/') || strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0 || strlen(nm) != name->str.n) {
        rules_fail_at(x->e, name->line, name->col, "host_executable name must be a bare executable name (got %s)", nm);
        return false;
    }
    host_exe h = {xstrdup(nm), NULL, 0};
    for (size_t i = 0; i < paths->n; i++) {
        const value *pv = &paths->items[i];
        if (pv->kind != V_STR) {
            rules_fail_at(x->e, pv->line, pv->col, "host_executable paths must be strings, not a list");
            goto bad;
        }
        if (!no_nul(x, pv, "a host_executable path"))
            goto bad;
        const char *raw = pv->str.s;
        char *abs;
        if (raw[0] == '/') {
            abs = xstrdup(raw);
        } else if (raw[0] == '~' && raw[1] == '/') {
            const char *home = getenv("HOME");
            if (!home || home[0] != '/') {
                rules_fail_at(x->e, pv->line, pv->col, "cannot expand %s: HOME is not set to an absolute path", raw);
                goto bad;
            }
            abs = xasprintf("%s/%s", home, raw + 2);
        } else {
            rules_fail_at(x->e, pv->line, pv->col, "host_executable paths must be absolute or start with ~/ (got %s)", raw);
            goto bad;
        }
        char *norm = rules_normalize_path(abs);
        free(abs);
        const char *base = rules_path_basename(norm);
        if (!base || strcmp(base, nm) != 0) {
            rules_fail_at(x->e, pv->line, pv->col, "host_executable path `%s` must have basename `%s`", raw, nm);
            free(norm);
            goto bad;
        }
        bool dup = false;
        for (size_t k = 0; k < h.n && !dup; k++)
            dup = strcmp(h.paths[k], norm) == 0;
        if (dup) {
            free(norm);
            continue;
        }
        h.paths = xrealloc(h.paths, (h.n + 1) * sizeof *h.paths);
        h.paths[h.n++] = norm;
    }
    rules_set_host_exe(x->staged, &h);
    return true;
bad:
    host_exe_free(&h);
    return false;
}

static bool eval_network_rule(evalctx *x, const call *c, const value **a)
{
    const value *host = a[0], *protocol = a[1], *decision = a[2], *just = a[3];
    if (!need(x, c, host, "host") || !need(x, c, protocol, "protocol") || !need(x, c, decision, "decision"))
        return false;
    if (!want_string(x, host, "network_rule host") || !want_string(x, protocol, "network_rule protocol") ||
        !want_string(x, decision, "decision"))
        return false;
    rule_net_proto proto;
    if (rule_net_proto_parse(protocol->str.s, &proto) < 0 || strlen(protocol->str.s) != protocol->str.n) {
        rules_fail_at(x->e, protocol->line, protocol->col,
                "network_rule protocol must be one of http, https, socks5_tcp, socks5_udp (got %s)",
                protocol->str.s);
        return false;
    }
    rule_decision d = parse_decision(&decision->str, true);
    if (d == RULE_NONE || strlen(decision->str.s) != decision->str.n) {
        rules_fail_at(x->e, decision->line, decision->col, "invalid decision: %s (use allow, prompt, forbidden or deny)",
                decision->str.s);
        return false;
    }
    if (!want_justification(x, just) || (just && !no_nul(x, just, "a network_rule justification")) ||
        !no_nul(x, host, "network_rule host"))
        return false;
    char msg[256];
    char *h = rules_normalize_host_pattern(host->str.s, msg, sizeof msg);
    if (!h) {
        rules_fail_at(x->e, host->line, host->col, "%s", msg);
        return false;
    }
    rule_network n = {h, proto, d, just ? xstrdup(just->str.s) : NULL};
    rules_push_network(x->staged, &n);
    return true;
}

static bool eval_call(evalctx *x, const call *c)
{
    for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++) {
        const builtin *b = &builtins[i];
        if (strcmp(c->name, b->name) != 0)
            continue;
        const value *slot[5];
        if (!bind(x, c, b, slot))
            return false;
        if (i == 0)
            return eval_prefix_rule(x, c, slot);
        if (i == 1)
            return eval_host_executable(x, c, slot);
        return eval_network_rule(x, c, slot);
    }
    rules_fail_at(x->e, c->line, c->col, "unknown function '%s' (known: prefix_rule, host_executable, network_rule)",
            c->name);
    return false;
}

/* ---- examples -------------------------------------------------------------------------- */

/* A string as Rust's Debug prints it: quoted, with \" \\ \n \r \t \0
 * escaped and other control characters as \u{hex}.  Codex's messages print
 * rules and examples this way, so ours read the same. */
static void rust_debug_str(buf_t *b, const char *s, size_t n)
{
    buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': buf_puts(b, "\\\""); break;
        case '\\': buf_puts(b, "\\\\"); break;
        case '\n': buf_puts(b, "\\n"); break;
        case '\r': buf_puts(b, "\\r"); break;
        case '\t': buf_puts(b, "\\t"); break;
        case 0: buf_puts(b, "\\0"); break;
        default:
            if (c < 0x20 || c == 0x7f)
                buf_printf(b, "\\u{%x}", c);
            else
                buf_putc(b, (char)c);
        }
    }
    buf_putc(b, '"');
}

/* A prefix rule as Codex's Debug shows it in example errors:
 * PrefixRule { pattern: PrefixPattern { first: "git", rest: [Single("status"),
 * Alts(["a", "b"])] }, decision: Allow, justification: None }. */
static void render_rule_debug(buf_t *b, const prule *r)
{
    static const char *const names[] = {"Allow", "Allow", "Prompt", "Forbidden"};
    buf_puts(b, "PrefixRule { pattern: PrefixPattern { first: ");
    rust_debug_str(b, r->first.s, r->first.n);
    buf_puts(b, ", rest: [");
    for (size_t i = 0; i < r->nrest; i++) {
        buf_puts(b, i ? ", " : "");
        buf_puts(b, r->rest[i].n == 1 ? "Single(" : "Alts([");
        for (size_t k = 0; k < r->rest[i].n; k++) {
            buf_puts(b, k ? ", " : "");
            rust_debug_str(b, r->rest[i].alts[k].s, r->rest[i].alts[k].n);
        }
        buf_puts(b, r->rest[i].n == 1 ? ")" : "])");
    }
    buf_printf(b, "] }, decision: %s, justification: ", names[r->decision]);
    if (r->has_justification) {
        buf_puts(b, "Some(");
        rust_debug_str(b, r->justification.s, r->justification.n);
        buf_putc(b, ')');
    } else {
        buf_puts(b, "None");
    }
    buf_puts(b, " }");
}

/* An example as a shell would read it (shlex join). */
static void render_example(buf_t *b, const example *ex)
{
    rules_shlex_join(b, ex->w, ex->n);
}

/* Every not_match example must match none of the call's rules and every
 * match example at least one; host executables as at the end of the file. */
static bool check_examples(evalctx *x)
{
    size_t nhx = x->base->nhx + x->staged->nhx;
    host_exe *hx = xcalloc(nhx + 1, sizeof *hx);
    if (x->base->nhx) /* memcpy from NULL is undefined, even for 0 bytes */
        memcpy(hx, x->base->hx, x->base->nhx * sizeof *hx);
    if (x->staged->nhx)
        memcpy(hx + x->base->nhx, x->staged->hx, x->staged->nhx * sizeof *hx);
    bool ok = true;
    for (size_t p = 0; p < x->npend && ok; p++) {
        const pending *pd = &x->pend[p];
        const prule *pr = x->staged->pr + pd->first;
        for (int pass = 0; pass < 2 && ok; pass++) {
            bool want = pass == 1;
            const example *ex = want ? pd->match : pd->not_match;
            size_t n = want ? pd->nmatch : pd->nnot, nbad = 0;
            size_t *bad = xcalloc(n + 1, sizeof *bad);
            for (size_t i = 0; i < n; i++)
                if (rules_match_any(pr, pd->count, hx, nhx, ex[i].w, ex[i].n, true) != want)
                    bad[nbad++] = i;
            if (nbad && want) {
                /* Codex's wording: the call's rules and the examples, each
                 * as Rust's Debug of a list of strings. */
                buf_t rules, exs, one;
                buf_init(&rules), buf_init(&exs);
                buf_putc(&rules, '[');
                for (size_t k = 0; k < pd->count; k++) {
                    buf_init(&one);
                    render_rule_debug(&one, &pr[k]);
                    buf_puts(&rules, k ? ", " : "");
                    rust_debug_str(&rules, one.data, one.len);
                    buf_free(&one);
                }
                buf_putc(&rules, ']');
                buf_putc(&exs, '[');
                for (size_t k = 0; k < nbad; k++) {
                    buf_init(&one);
                    render_example(&one, &ex[bad[k]]);
                    buf_puts(&exs, k ? ", " : "");
                    rust_debug_str(&exs, one.data ? one.data : "", one.len);
                    buf_free(&one);
                }
                buf_putc(&exs, ']');
                rules_fail_at(x->e, ex[bad[0]].line, ex[bad[0]].col,
                              "expected every example to match at least one rule. rules: %s; unmatched examples: %s",
                              rules.data, exs.data);
                buf_free(&rules), buf_free(&exs);
                ok = false;
            } else if (nbad) {
                /* The first rule the first such example matches. */
                const example *e = &ex[bad[0]];
                size_t which = 0;
                for (size_t k = 0; k < pd->count; k++) {
                    rule_match *m;
                    size_t hit = rules_match_core(&pr[k], 1, hx, nhx, e->w, e->n, true, &m);
                    rules_matches_free(m, hit);
                    if (hit) {
                        which = k;
                        break;
                    }
                }
                buf_t rule, exs;
                buf_init(&rule), buf_init(&exs);
                render_rule_debug(&rule, &pr[which]);
                render_example(&exs, e);
                rules_fail_at(x->e, e->line, e->col, "expected example to not match rule `%s`: %s", rule.data,
                              exs.data ? exs.data : "");
                buf_free(&rule), buf_free(&exs);
                ok = false;
            }
            free(bad);
        }
    }
    free(hx);
    return ok;
}

/* ---- loading ----------------------------------------------------------------------------- */

/* Line and column (in characters) of offset off. */
static void position_of(const char *s, size_t off, int *line, int *col)
{
    *line = 1, *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (s[i] == '\n')
            (*line)++, *col = 1;
        else if (((unsigned char)s[i] & 0xc0) != 0x80)
            (*col)++;
    }
}

static void too_large(const char *name, unsigned long long size, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: too large: %llu bytes (a rules file holds at most %d bytes)", name, size,
             RULES_MAX_FILE_BYTES);
}

static int load(rules_t *r, const char *name, const char *text, size_t len, char *err, size_t errlen)
{
    perr e = {name, err, errlen, false};
    if (errlen)
        err[0] = '\0';
    if (len > RULES_MAX_FILE_BYTES) {
        too_large(name, len, err, errlen);
        return -1;
    }
    size_t bad = utf8_valid_prefix(text, len);
    if (bad < len || memchr(text, '\0', len)) {
        const char *nul = memchr(text, '\0', len);
        size_t at = nul && (size_t)(nul - text) < bad ? (size_t)(nul - text) : bad;
        int line, col;
        position_of(text, at, &line, &col);
        rules_fail_at(&e, line, col, "%s", at == bad ? "invalid UTF-8" : "NUL byte in the file");
        return -1;
    }
    /* CRLF line ends read as LF (inside strings too, as in Starlark). */
    char *lf = xmalloc(len + 1);
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (!(text[i] == '\r' && i + 1 < len && text[i + 1] == '\n'))
            lf[n++] = text[i];
    lf[n] = '\0';
    call *calls;
    size_t ncalls;
    bool ok = rules_parse_calls(&e, lf, n, &calls, &ncalls);
    evalctx x = {.e = &e, .base = r, .staged = rules_new()};
    for (size_t i = 0; ok && i < ncalls; i++)
        ok = eval_call(&x, &calls[i]);
    if (ok)
        ok = check_examples(&x);
    if (ok)
        rules_absorb(r, x.staged);
    for (size_t i = 0; i < ncalls; i++)
        rules_call_free(&calls[i]);
    free(calls);
    for (size_t i = 0; i < x.npend; i++) {
        examples_free(x.pend[i].match, x.pend[i].nmatch);
        examples_free(x.pend[i].not_match, x.pend[i].nnot);
    }
    free(x.pend);
    rules_free(x.staged);
    free(lf);
    if (!ok && !e.set)
        rules_fail_at(&e, 1, 1, "cannot load rules");
    return ok ? 0 : -1;
}

int rules_load_text(rules_t *r, const char *name, const char *text, char *err, size_t errlen)
{
    return load(r, name, text, strlen(text), err, errlen);
}

int rules_load_buffer(rules_t *r, const char *name, const char *text, size_t len, char *err, size_t errlen)
{
    return load(r, name, text, len, err, errlen);
}

int rules_read_file(const char *path, bool nofollow, char **text, size_t *len, char *err, size_t errlen)
{
    *text = NULL;
    *len = 0;
    /* Look before opening: opening a device can do things, and opening a
     * FIFO without O_NONBLOCK waits for a writer (the server would hang). */
    struct stat st;
    if ((nofollow ? lstat(path, &st) : stat(path, &st)) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (nofollow && S_ISLNK(st.st_mode)) {
        snprintf(err, errlen, "%s: is a symbolic link (a workspace's rules files must be regular files)", path);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    /* It may have been swapped since the look: check what was opened. */
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_size > RULES_MAX_FILE_BYTES) {
        too_large(path, (unsigned long long)st.st_size, err, errlen);
        close(fd);
        return -1;
    }
    buf_t b;
    buf_init(&b);
    int rc = read_all(fd, RULES_MAX_FILE_BYTES, &b);
    close(fd);
    if (rc == 0) {
        *len = b.len;
        *text = buf_steal(&b);
        return 0;
    }
    if (rc == -EFBIG) /* it grew while we read */
        too_large(path, (unsigned long long)b.len + 1, err, errlen);
    else
        snprintf(err, errlen, "%s: %s", path, strerror(-rc));
    buf_free(&b);
    return -1;
}

int rules_load_file(rules_t *r, const char *path, char *err, size_t errlen)
{
    char *text;
    size_t len;
    if (rules_read_file(path, false, &text, &len, err, errlen) < 0)
        return -1;
    int rc = load(r, path, text, len, err, errlen);
    free(text);
    return rc;
}
