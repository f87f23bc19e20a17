/*
 * rules.c - a loaded exec policy: matching argv against prefix rules (with
 * the host-executable fallback), the output of `corral policy check` (the
 * JSON of `codex execpolicy check`, byte for byte), network-rule lookups
 * and appending rules to a file.  The language itself is in rules_parse.c.
 */
#include "config.h"

#include "base/netaddr.h"
#include "policy/rules_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- pieces ------------------------------------------------------------------------ */

void rstr_free(rstr *s)
{
    free(s->s);
    s->s = NULL;
    s->n = 0;
}

rstr rstr_dup(const char *s, size_t n)
{
    rstr r = {xmalloc(n + 1), n};
    memcpy(r.s, s, n);
    r.s[n] = '\0';
    return r;
}

bool rstr_eq(const rstr *a, const rstr *b)
{
    return a->n == b->n && memcmp(a->s, b->s, a->n) == 0;
}

void prule_free(prule *p)
{
    rstr_free(&p->first);
    for (size_t i = 0; i < p->nrest; i++) {
        for (size_t j = 0; j < p->rest[i].n; j++)
            rstr_free(&p->rest[i].alts[j]);
        free(p->rest[i].alts);
    }
    free(p->rest);
    rstr_free(&p->justification);
    memset(p, 0, sizeof *p);
}

void host_exe_free(host_exe *h)
{
    free(h->name);
    for (size_t i = 0; i < h->n; i++)
        free(h->paths[i]);
    free(h->paths);
    memset(h, 0, sizeof *h);
}

void rule_network_free(rule_network *n)
{
    free(n->host);
    free(n->justification);
    memset(n, 0, sizeof *n);
}

rules_t *rules_new(void)
{
    return xcalloc(1, sizeof(rules_t));
}

void rules_free(rules_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->npr; i++)
        prule_free(&r->pr[i]);
    free(r->pr);
    for (size_t i = 0; i < r->nhx; i++)
        host_exe_free(&r->hx[i]);
    free(r->hx);
    for (size_t i = 0; i < r->nnet; i++)
        rule_network_free(&r->net[i]);
    free(r->net);
    free(r);
}

void rules_push_prefix(rules_t *r, prule *p)
{
    if (r->npr == r->cap_pr) {
        r->cap_pr = r->cap_pr ? 2 * r->cap_pr : 16;
        r->pr = xrealloc(r->pr, r->cap_pr * sizeof *r->pr);
    }
    r->pr[r->npr++] = *p;
    memset(p, 0, sizeof *p);
}

void rules_set_host_exe(rules_t *r, host_exe *h)
{
    for (size_t i = 0; i < r->nhx; i++) {
        if (strcmp(r->hx[i].name, h->name) == 0) {
            host_exe_free(&r->hx[i]);
            memmove(&r->hx[i], &r->hx[i + 1], (r->nhx - i - 1) * sizeof *r->hx);
            r->nhx--;
            break;
        }
    }
    r->hx = xrealloc(r->hx, (r->nhx + 1) * sizeof *r->hx);
    r->hx[r->nhx++] = *h;
    memset(h, 0, sizeof *h);
}

void rules_push_network(rules_t *r, rule_network *n)
{
    r->net = xrealloc(r->net, (r->nnet + 1) * sizeof *r->net);
    r->net[r->nnet++] = *n;
    memset(n, 0, sizeof *n);
}

void rules_absorb(rules_t *dst, rules_t *src)
{
    for (size_t i = 0; i < src->npr; i++)
        rules_push_prefix(dst, &src->pr[i]);
    for (size_t i = 0; i < src->nhx; i++)
        rules_set_host_exe(dst, &src->hx[i]);
    for (size_t i = 0; i < src->nnet; i++)
        rules_push_network(dst, &src->net[i]);
    src->npr = src->nhx = src->nnet = 0;
}

size_t rules_prefix_count(const rules_t *r)
{
    return r->npr;
}

size_t rules_host_executable_count(const rules_t *r)
{
    return r->nhx;
}

const char *rule_decision_name(rule_decision d)
{
    switch (d) {
    case RULE_ALLOW: return "allow";
    case RULE_PROMPT: return "prompt";
    case RULE_FORBIDDEN: return "forbidden";
    case RULE_NONE: break;
    }
    return "none";
}

/* ---- paths --------------------------------------------------------------------------- */

char *rules_normalize_path(const char *path)
{
    size_t len = strlen(path);
    char *out = xmalloc(len + 2);
    size_t o = 0;
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        const char *s = p;
        while (*p && *p != '/')
            p++;
        size_t n = (size_t)(p - s);
        if (n == 0 || (n == 1 && s[0] == '.'))
            continue;
        if (n == 2 && s[0] == '.' && s[1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--; /* the '/' before the dropped component */
            continue;
        }
        out[o++] = '/';
        memcpy(out + o, s, n);
        o += n;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    return out;
}

const char *rules_path_basename(const char *norm)
{
    const char *slash = strrchr(norm, '/');
    const char *base = slash ? slash + 1 : norm;
    return *base ? base : NULL;
}

/* ---- matching ------------------------------------------------------------------------ */

static bool pat_matches(const rpat *p, const rstr *tok)
{
    for (size_t i = 0; i < p->n; i++)
        if (rstr_eq(&p->alts[i], tok))
            return true;
    return false;
}

static bool prule_matches(const prule *p, const rstr *argv, size_t argc)
{
    if (argc < p->nrest + 1 || !rstr_eq(&p->first, &argv[0]))
        return false;
    for (size_t i = 0; i < p->nrest; i++)
        if (!pat_matches(&p->rest[i], &argv[i + 1]))
            return false;
    return true;
}

/* Matches of pr[] for argv (the first limit of them), each with a copy of
 * resolved (or NULL). */
static size_t match_exact(const prule *pr, size_t npr, const rstr *argv, size_t argc, const char *resolved,
                          size_t limit, rule_match **out)
{
    size_t n = 0;
    rule_match *m = NULL;
    for (size_t i = 0; i < npr && n < limit; i++) {
        const prule *p = &pr[i];
        if (!prule_matches(p, argv, argc))
            continue;
        m = xrealloc(m, (n + 1) * sizeof *m);
        rule_match *x = &m[n++];
        x->n = p->nrest + 1;
        x->prefix = xcalloc(x->n + 1, sizeof *x->prefix);
        for (size_t k = 0; k < x->n; k++)
            x->prefix[k] = rstr_dup(argv[k].s, argv[k].n).s;
        x->decision = p->decision;
        x->justification = p->has_justification ? p->justification.s : NULL;
        x->justification_len = p->has_justification ? p->justification.n : 0;
        x->resolved_program = resolved ? xstrdup(resolved) : NULL;
    }
    *out = m;
    return n;
}

static size_t match_core(const prule *pr, size_t npr, const host_exe *hx, size_t nhx, const rstr *argv, size_t argc,
                         bool resolve, size_t limit, rule_match **out)
{
    *out = NULL;
    if (argc == 0)
        return 0;
    size_t n = match_exact(pr, npr, argv, argc, NULL, limit, out);
    if (n > 0 || !resolve || argv[0].s[0] != '/' || strlen(argv[0].s) != argv[0].n)
        return n;
    free(*out);
    *out = NULL;
    char *prog = rules_normalize_path(argv[0].s);
    const char *base = rules_path_basename(prog);
    if (base) {
        const host_exe *h = NULL;
        for (size_t i = nhx; i-- > 0;) {
            if (strcmp(hx[i].name, base) == 0) {
                h = &hx[i];
                break;
            }
        }
        bool listed = !h;
        for (size_t i = 0; h && i < h->n && !listed; i++)
            listed = strcmp(h->paths[i], prog) == 0;
        if (listed) {
            rstr *bargv = xmalloc(argc * sizeof *bargv);
            bargv[0] = (rstr){(char *)base, strlen(base)};
            memcpy(bargv + 1, argv + 1, (argc - 1) * sizeof *bargv);
            n = match_exact(pr, npr, bargv, argc, prog, limit, out);
            free(bargv);
        }
    }
    free(prog);
    return n;
}

size_t rules_match_core(const prule *pr, size_t npr, const host_exe *hx, size_t nhx, const rstr *argv, size_t argc,
                        bool resolve, rule_match **out)
{
    return match_core(pr, npr, hx, nhx, argv, argc, resolve, SIZE_MAX, out);
}

bool rules_match_any(const prule *pr, size_t npr, const host_exe *hx, size_t nhx, const rstr *argv, size_t argc,
                     bool resolve)
{
    rule_match *m;
    size_t n = match_core(pr, npr, hx, nhx, argv, argc, resolve, 1, &m);
    rules_matches_free(m, n);
    return n > 0;
}

size_t rules_match(const rules_t *r, char *const *argv, bool resolve_host_executables, rule_match **out)
{
    size_t argc = 0;
    while (argv[argc])
        argc++;
    rstr *a = xmalloc((argc + 1) * sizeof *a);
    for (size_t i = 0; i < argc; i++)
        a[i] = (rstr){argv[i], strlen(argv[i])};
    size_t n = rules_match_core(r->pr, r->npr, r->hx, r->nhx, a, argc, resolve_host_executables, out);
    free(a);
    return n;
}

void rules_matches_free(rule_match *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < m[i].n; k++)
            free(m[i].prefix[k]);
        free(m[i].prefix);
        free((char *)m[i].resolved_program);
    }
    free(m);
}

rule_decision rules_decide(const rule_match *m, size_t n)
{
    rule_decision d = RULE_NONE;
    for (size_t i = 0; i < n; i++)
        if (m[i].decision > d)
            d = m[i].decision;
    return d;
}

/* ---- JSON output ------------------------------------------------------------------ */

void rules_json_string(buf_t *b, const char *s, size_t n)
{
    buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': buf_puts(b, "\\\""); break;
        case '\\': buf_puts(b, "\\\\"); break;
        case '\n': buf_puts(b, "\\n"); break;
        case '\t': buf_puts(b, "\\t"); break;
        case '\r': buf_puts(b, "\\r"); break;
        case '\b': buf_puts(b, "\\b"); break;
        case '\f': buf_puts(b, "\\f"); break;
        default:
            if (c < 0x20)
                buf_printf(b, "\\u%04x", c);
            else
                buf_putc(b, (char)c);
        }
    }
    buf_putc(b, '"');
}

/* A writer for serde_json's two formats: compact, and pretty (two-space
 * indent, "key": value, each array element and member on its own line,
 * empty arrays as []). */
typedef struct jw {
    buf_t *b;
    bool pretty;
    int depth;
    bool first; /* nothing written yet in the current container */
} jw;

static void jw_newline(jw *w)
{
    buf_putc(w->b, '\n');
    for (int i = 0; i < w->depth; i++)
        buf_puts(w->b, "  ");
}

/* Before a value or key inside a container. */
static void jw_item(jw *w)
{
    if (!w->first)
        buf_putc(w->b, ',');
    if (w->pretty)
        jw_newline(w);
    w->first = false;
}

static void jw_open(jw *w, char c)
{
    buf_putc(w->b, c);
    w->depth++;
    w->first = true;
}

static void jw_close(jw *w, char c)
{
    w->depth--;
    if (w->pretty && !w->first)
        jw_newline(w);
    buf_putc(w->b, c);
    w->first = false;
}

static void jw_key(jw *w, const char *k)
{
    jw_item(w);
    rules_json_string(w->b, k, strlen(k));
    buf_puts(w->b, w->pretty ? ": " : ":");
}

static void jw_key_string(jw *w, const char *k, const char *v, size_t n)
{
    jw_key(w, k);
    rules_json_string(w->b, v, n);
}

char *rules_check_json(const rules_t *r, char *const *argv, bool resolve, bool pretty)
{
    rule_match *m;
    size_t n = rules_match(r, argv, resolve, &m);
    buf_t b;
    buf_init(&b);
    jw w = {&b, pretty, 0, true};
    jw_open(&w, '{');
    jw_key(&w, "matchedRules");
    jw_open(&w, '[');
    for (size_t i = 0; i < n; i++) {
        jw_item(&w);
        jw_open(&w, '{');
        jw_key(&w, "prefixRuleMatch");
        jw_open(&w, '{');
        jw_key(&w, "matchedPrefix");
        jw_open(&w, '[');
        for (size_t k = 0; k < m[i].n; k++) {
            jw_item(&w);
            rules_json_string(&b, m[i].prefix[k], strlen(m[i].prefix[k]));
        }
        jw_close(&w, ']');
        const char *d = rule_decision_name(m[i].decision);
        jw_key_string(&w, "decision", d, strlen(d));
        if (m[i].resolved_program)
            jw_key_string(&w, "resolvedProgram", m[i].resolved_program, strlen(m[i].resolved_program));
        if (m[i].justification)
            jw_key_string(&w, "justification", m[i].justification, m[i].justification_len);
        jw_close(&w, '}');
        jw_close(&w, '}');
    }
    jw_close(&w, ']');
    if (n > 0) {
        const char *d = rule_decision_name(rules_decide(m, n));
        jw_key_string(&w, "decision", d, strlen(d));
    }
    jw_close(&w, '}');
    buf_putc(&b, '\n');
    rules_matches_free(m, n);
    return buf_steal(&b);
}

/* ---- shell words --------------------------------------------------------------------- */

/* The shlex crate's reading: blanks are space, tab and newline; '#' at the
 * start of a word comments to the end of the line; '...' is literal; in
 * "..." a backslash escapes only $ ` " \ and newline; outside quotes a
 * backslash escapes anything (backslash-newline vanishes). */
int rules_shlex_split(const char *s, size_t len, rstr **out, size_t *count)
{
    rstr *w = NULL;
    size_t n = 0, i = 0;
    buf_t cur;
    buf_init(&cur);
    for (;;) {
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '#')) {
            if (s[i] == '#')
                while (i < len && s[i] != '\n')
                    i++;
            else
                i++;
        }
        if (i >= len)
            break;
        buf_reset(&cur);
        while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\n') {
            char c = s[i++];
            if (c == '\'') {
                while (i < len && s[i] != '\'')
                    buf_putc(&cur, s[i++]);
                if (i >= len)
                    goto bad;
                i++;
            } else if (c == '"') {
                for (;;) {
                    if (i >= len)
                        goto bad;
                    char d = s[i++];
                    if (d == '"')
                        break;
                    if (d != '\\') {
                        buf_putc(&cur, d);
                        continue;
                    }
                    if (i >= len)
                        goto bad;
                    char e = s[i++];
                    if (e == '$' || e == '`' || e == '"' || e == '\\') {
                        buf_putc(&cur, e);
                    } else if (e != '\n') {
                        buf_putc(&cur, '\\');
                        buf_putc(&cur, e);
                    }
                }
            } else if (c == '\\') {
                if (i >= len)
                    goto bad;
                char e = s[i++];
                if (e != '\n')
                    buf_putc(&cur, e);
            } else {
                buf_putc(&cur, c);
            }
        }
        w = xrealloc(w, (n + 1) * sizeof *w);
        w[n++] = rstr_dup(cur.data ? cur.data : "", cur.len);
    }
    buf_free(&cur);
    *out = w;
    *count = n;
    return 0;
bad:
    buf_free(&cur);
    for (size_t k = 0; k < n; k++)
        rstr_free(&w[k]);
    free(w);
    *out = NULL;
    *count = 0;
    return -1;
}

void rules_shlex_join(buf_t *b, const rstr *w, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (k)
            buf_putc(b, ' ');
        const char *s = w[k].s;
        size_t len = w[k].n;
        bool safe = len > 0, squote = false;
        for (size_t i = 0; i < len; i++) {
            char c = s[i];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  (c && strchr(",._+:@%/-=", c))))
                safe = false;
            if (c == '\'')
                squote = true;
        }
        if (safe) {
            buf_append(b, s, len);
        } else if (!squote) {
            buf_putc(b, '\'');
            buf_append(b, s, len);
            buf_putc(b, '\'');
        } else {
            buf_putc(b, '"');
            for (size_t i = 0; i < len; i++) {
                if (strchr("\"\\$`", s[i]) && s[i])
                    buf_putc(b, '\\');
                buf_putc(b, s[i]);
            }
            buf_putc(b, '"');
        }
    }
}

/* ---- network rules -------------------------------------------------------------------- */

int rule_net_proto_parse(const char *s, rule_net_proto *out)
{
    if (strcmp(s, "http") == 0)
        *out = RULE_NET_HTTP;
    else if (strcmp(s, "https") == 0 || strcmp(s, "https_connect") == 0 || strcmp(s, "http-connect") == 0)
        *out = RULE_NET_HTTPS;
    else if (strcmp(s, "socks5_tcp") == 0)
        *out = RULE_NET_SOCKS5_TCP;
    else if (strcmp(s, "socks5_udp") == 0)
        *out = RULE_NET_SOCKS5_UDP;
    else
        return -1;
    return 0;
}

const char *rule_net_proto_name(rule_net_proto p)
{
    switch (p) {
    case RULE_NET_HTTP: return "http";
    case RULE_NET_HTTPS: return "https";
    case RULE_NET_SOCKS5_TCP: return "socks5_tcp";
    case RULE_NET_SOCKS5_UDP: return "socks5_udp";
    }
    return "?";
}

size_t rules_unicode_space(const unsigned char *s)
{
    if (strchr(" \t\n\v\f\r", s[0]) && s[0])
        return 1;
    if (s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0))
        return 2;
    if (s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80)
        return 3; /* U+1680 */
    if (s[0] == 0xe2 && s[1] == 0x80 && ((s[2] >= 0x80 && s[2] <= 0x8a) || s[2] == 0xa8 || s[2] == 0xa9 || s[2] == 0xaf))
        return 3; /* U+2000..200A, 2028, 2029, 202F */
    if (s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f)
        return 3; /* U+205F */
    if (s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80)
        return 3; /* U+3000 */
    return 0;
}

/* Trim Unicode white space at both ends of [*s, *e). */
static void trim_space(const char **s, const char **e)
{
    size_t k;
    while (*s < *e && (k = rules_unicode_space((const unsigned char *)*s)) > 0)
        *s += k;
    for (;;) {
        const char *p = *e;
        /* Step back over one character and see if it is a space. */
        if (p == *s)
            break;
        const char *q = p - 1;
        while (q > *s && ((unsigned char)*q & 0xc0) == 0x80)
            q--;
        char tmp[8] = {0};
        memcpy(tmp, q, (size_t)(p - q) < 7 ? (size_t)(p - q) : 7);
        if (rules_unicode_space((const unsigned char *)tmp) != (size_t)(p - q))
            break;
        *e = q;
    }
}

/* Trim white space at both ends and dots at the end until neither is left:
 * "a.\r." is "a", so that normalising a normalised host changes nothing
 * (a rule must apply to the very host it stores). */
static void trim_space_and_dots(const char **s, const char **e)
{
    const char *was;
    do {
        was = *e;
        trim_space(s, e);
        while (*e > *s && (*e)[-1] == '.')
            (*e)--;
    } while (*e != was);
}

static char *host_fail(char *err, size_t errlen, const char *msg, const char *raw)
{
    snprintf(err, errlen, msg, raw);
    return NULL;
}

char *rules_normalize_host(const char *raw, char *err, size_t errlen)
{
    const char *s = raw, *e = raw + strlen(raw);
    trim_space(&s, &e);
    if (s == e)
        return host_fail(err, errlen, "network_rule host cannot be empty%s", "");
    for (const char *p = s; p < e; p++)
        if (*p == '/' || *p == '?' || *p == '#')
            return host_fail(err, errlen,
                             "network_rule host must be a hostname or IP literal (without scheme or path)%s", "");
    if (*s == '[') {
        const char *close = memchr(s, ']', (size_t)(e - s));
        if (!close)
            return host_fail(err, errlen, "network_rule host has an invalid bracketed IPv6 literal%s", "");
        const char *rest = close + 1;
        bool port_ok = rest < e && *rest == ':' && rest + 1 < e;
        for (const char *p = rest + 1; port_ok && p < e; p++)
            port_ok = *p >= '0' && *p <= '9';
        if (rest < e && !port_ok)
            return host_fail(err, errlen, "network_rule host contains an unsupported suffix: %s", raw);
        s++;
        e = close;
        /* Only an IPv6 address goes in brackets: hex digits, colons (two at
         * least) and an IPv4 tail's dots.  Anything else, unbracketed,
         * would read differently ("[a:1]" would be host a, port 1), and a
         * rule would not apply to the host it names. */
        size_t colons = 0;
        bool ipv6 = true;
        for (const char *p = s; p < e; p++) {
            colons += *p == ':';
            ipv6 = ipv6 && (*p == ':' || *p == '.' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
                            (*p >= 'A' && *p <= 'F'));
        }
        if (!ipv6 || colons < 2)
            return host_fail(err, errlen, "network_rule host has an invalid bracketed IPv6 literal%s", "");
    } else {
        /* Trailing dots go before the port is looked for too: "a:1." is
         * host a, as "a.:1" is (and as a second reading would make it). */
        trim_space_and_dots(&s, &e);
        const char *colon = memchr(s, ':', (size_t)(e - s));
        if (colon && !memchr(colon + 1, ':', (size_t)(e - colon - 1)) && colon > s && colon + 1 < e) {
            bool digits = true;
            for (const char *p = colon + 1; p < e; p++)
                digits = digits && *p >= '0' && *p <= '9';
            if (digits)
                e = colon;
        }
    }
    trim_space_and_dots(&s, &e);
    if (s == e)
        return host_fail(err, errlen, "network_rule host cannot be empty%s", "");
    if (memchr(s, '*', (size_t)(e - s)))
        return host_fail(err, errlen, "network_rule host must be a specific host; wildcards are not allowed%s", "");
    char *h = xstrndup(s, (size_t)(e - s));
    for (char *p = h; *p; p++) {
        if (rules_unicode_space((const unsigned char *)p)) {
            free(h);
            return host_fail(err, errlen, "network_rule host cannot contain whitespace%s", "");
        }
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    }
    return h;
}

char *rules_normalize_host_pattern(const char *raw, char *err, size_t errlen)
{
    /* corral's extension: a leading "*." (subdomains) or "**." (the apex
     * and its subdomains) before an ordinary host.  Codex accepts exact
     * hosts only, so a file that uses one is corral's alone. */
    const char *s = raw;
    while (*s == ' ' || *s == '\t')
        s++;
    const char *glob = strncmp(s, "**.", 3) == 0 ? "**." : strncmp(s, "*.", 2) == 0 ? "*." : NULL;
    if (!glob)
        return rules_normalize_host(raw, err, errlen);
    char *rest = rules_normalize_host(s + strlen(glob), err, errlen);
    if (!rest)
        return NULL;
    if (rest[0] == '.' || !strchr(rest, '.')) {
        /* "*.com" would cover a whole top-level domain. */
        snprintf(err, errlen, "network_rule host pattern %s must name a domain with at least two labels after "
                 "the wildcard (like *.example.com)", raw);
        free(rest);
        return NULL;
    }
    char *h = xasprintf("%s%s", glob, rest);
    free(rest);
    return h;
}

bool rules_host_matches(const char *pattern, const char *host)
{
    bool sub = strncmp(pattern, "*.", 2) == 0, apex = strncmp(pattern, "**.", 3) == 0;
    if (!sub && !apex) {
        if (strcmp(pattern, host) == 0)
            return true;
        /* An address written another way (127.1, 0:0::1) is the same
         * address: compare the proxy's canonical forms. */
        char a[NETADDR_HOST_MAX + 1], b[NETADDR_HOST_MAX + 1];
        const char *why;
        return netaddr_normalize_host(pattern, strlen(pattern), a, sizeof a, &why) == 0 &&
               netaddr_normalize_host(host, strlen(host), b, sizeof b, &why) == 0 && strcmp(a, b) == 0;
    }
    const char *domain = pattern + (apex ? 3 : 2);
    size_t dl = strlen(domain), hl = strlen(host);
    if (apex && strcmp(host, domain) == 0)
        return true;
    return hl > dl + 1 && host[hl - dl - 1] == '.' && strcmp(host + hl - dl, domain) == 0;
}

size_t rules_network_count(const rules_t *r)
{
    return r->nnet;
}

const rule_network *rules_network_get(const rules_t *r, size_t i)
{
    return i < r->nnet ? &r->net[i] : NULL;
}

rule_decision rules_network_decide(const rules_t *r, const char *host, rule_net_proto proto,
                                   const char **justification)
{
    char err[256];
    char *h = rules_normalize_host(host, err, sizeof err);
    rule_decision d = RULE_NONE;
    const char *j = NULL;
    for (size_t i = 0; h && i < r->nnet; i++) {
        const rule_network *n = &r->net[i];
        if (n->protocol != proto || !rules_host_matches(n->host, h))
            continue;
        if (n->decision > d) {
            d = n->decision;
            j = n->justification;
        } else if (n->decision == d && !j) {
            j = n->justification;
        }
    }
    free(h);
    if (justification)
        *justification = j;
    return d;
}

/* ---- appending rules ------------------------------------------------------------------ */

/* Append line (no newline) to path unless an identical line is there,
 * holding an exclusive flock; the parent directory is created. */
static int append_locked_line(const char *path, const char *line, char *err, size_t errlen)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        int rc = mkdir_p(dir, 0755);
        if (rc < 0) {
            snprintf(err, errlen, "cannot create %s: %s", dir, strerror(-rc));
            free(dir);
            return -1;
        }
    }
    free(dir);
    int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = -1;
    buf_t b;
    buf_init(&b);
    while (flock(fd, LOCK_EX) < 0) {
        if (errno != EINTR) {
            snprintf(err, errlen, "cannot lock %s: %s", path, strerror(errno));
            goto out;
        }
    }
    char chunk[8192];
    ssize_t got;
    off_t off = 0;
    while ((got = pread(fd, chunk, sizeof chunk, off)) != 0) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
            goto out;
        }
        buf_append(&b, chunk, (size_t)got);
        off += got;
    }
    size_t ll = strlen(line);
    for (size_t i = 0; i < b.len;) {
        const char *nl = memchr(b.data + i, '\n', b.len - i);
        size_t end = nl ? (size_t)(nl - b.data) : b.len;
        size_t n = end - i;
        if (n > 0 && b.data[end - 1] == '\r') /* Rust's lines() drops a CR before LF */
            n--;
        if (n == ll && memcmp(b.data + i, line, ll) == 0) {
            rc = 0;
            goto out;
        }
        i = end + 1;
    }
    char *text = xasprintf("%s%s\n", b.len > 0 && b.data[b.len - 1] != '\n' ? "\n" : "", line);
    int w = write_all(fd, text, strlen(text));
    free(text);
    if (w < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(-w));
        goto out;
    }
    rc = 0;
out:
    buf_free(&b);
    close(fd); /* releases the lock */
    return rc;
}

int rules_append_prefix_rule(const char *path, char *const *tokens, size_t n, char *err, size_t errlen)
{
    if (n == 0) {
        snprintf(err, errlen, "prefix rule requires at least one token");
        return -1;
    }
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "prefix_rule(pattern=[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            buf_puts(&b, ", ");
        rules_json_string(&b, tokens[i], strlen(tokens[i]));
    }
    buf_puts(&b, "], decision=\"allow\")");
    int rc = append_locked_line(path, b.data, err, errlen);
    buf_free(&b);
    return rc;
}

int rules_append_network_rule(const char *path, const char *host, rule_net_proto proto, rule_decision decision,
                              const char *justification, char *err, size_t errlen)
{
    char *h = rules_normalize_host(host, err, errlen);
    if (!h)
        return -1;
    if (decision == RULE_NONE) {
        snprintf(err, errlen, "network rule decision must be allow, prompt or deny");
        free(h);
        return -1;
    }
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "network_rule(host=");
    rules_json_string(&b, h, strlen(h));
    buf_printf(&b, ", protocol=\"%s\", decision=\"%s\"", rule_net_proto_name(proto),
               decision == RULE_FORBIDDEN ? "deny" : rule_decision_name(decision));
    if (justification && *justification) {
        buf_puts(&b, ", justification=");
        rules_json_string(&b, justification, strlen(justification));
    }
    buf_putc(&b, ')');
    int rc = append_locked_line(path, b.data, err, errlen);
    buf_free(&b);
    free(h);
    return rc;
}
