/*
 * snap_meta.c - see snap_meta.h.
 */
#include "config.h"

#include "snap/snap_meta.h"

#include "base/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TITLE "corral snapshot"
#define VERSION_LINE "corral-snapshot-meta 1"

char *snap_escape(const char *s)
{
    buf_t b;
    buf_init(&b);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p <= ' ' || *p == 0x7f || *p == '%')
            buf_printf(&b, "%%%02X", *p);
        else
            buf_putc(&b, (char)*p);
    }
    if (!b.len)
        buf_puts(&b, "%"); /* the empty path: "%" alone, which no escape makes */
    return buf_steal(&b);
}

char *snap_unescape(const char *s)
{
    if (strcmp(s, "%") == 0)
        return xstrdup("");
    buf_t b;
    buf_init(&b);
    for (const char *p = s; *p; p++) {
        int hi, lo;
        if (*p == '%' && (hi = hex_value((unsigned char)p[1])) >= 0 && (lo = hex_value((unsigned char)p[2])) >= 0) {
            char c = (char)(hi * 16 + lo);
            if (c == '\0')
                break;
            buf_putc(&b, c);
            p += 2;
        } else {
            buf_putc(&b, *p);
        }
    }
    if (!b.data)
        return xstrdup("");
    return buf_steal(&b);
}

void snap_meta_free(snap_meta *m)
{
    for (size_t i = 0; i < m->n_repos; i++)
        free(m->repos[i].path);
    free(m->repos);
    for (size_t i = 0; i < m->n_large; i++)
        free(m->large[i].path);
    free(m->large);
    for (size_t i = 0; i < m->n_capped; i++)
        free(m->capped[i].path);
    free(m->capped);
    for (size_t i = 0; i < m->n_ignored; i++)
        free(m->ignored[i]);
    free(m->ignored);
    for (size_t i = 0; i < m->n_invalid; i++)
        free(m->invalid[i]);
    free(m->invalid);
    memset(m, 0, sizeof *m);
}

snap_meta_repo *snap_meta_add_repo(snap_meta *m, const char *path)
{
    if (m->n_repos >= SNAP_META_MAX_REPOS)
        return NULL;
    m->repos = xrealloc(m->repos, (m->n_repos + 1) * sizeof *m->repos);
    snap_meta_repo *r = &m->repos[m->n_repos++];
    memset(r, 0, sizeof *r);
    r->path = xstrdup(path);
    return r;
}

void snap_meta_add_large(snap_meta *m, const char *path, uint64_t size, int64_t mtime_ns, unsigned mode)
{
    if (m->n_large >= SNAP_META_MAX_LIST)
        return;
    m->large = xrealloc(m->large, (m->n_large + 1) * sizeof *m->large);
    m->large[m->n_large++] = (snap_meta_large){xstrdup(path), size, mtime_ns, mode};
}

void snap_meta_add_capped(snap_meta *m, const char *dir, long count)
{
    if (m->n_capped >= SNAP_META_MAX_LIST)
        return;
    m->capped = xrealloc(m->capped, (m->n_capped + 1) * sizeof *m->capped);
    m->capped[m->n_capped++] = (snap_meta_count){xstrdup(dir), count};
}

static void push(char ***v, size_t *n, const char *s)
{
    if (*n >= SNAP_META_MAX_LIST)
        return;
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = xstrdup(s);
}

void snap_meta_add_ignored(snap_meta *m, const char *path)
{
    m->ignored_total++;
    push(&m->ignored, &m->n_ignored, path);
}

void snap_meta_add_invalid(snap_meta *m, const char *path)
{
    push(&m->invalid, &m->n_invalid, path);
}

const snap_meta_repo *snap_meta_find_repo(const snap_meta *m, const char *path)
{
    for (size_t i = 0; i < m->n_repos; i++)
        if (strcmp(m->repos[i].path, path) == 0)
            return &m->repos[i];
    return NULL;
}

const snap_meta_large *snap_meta_find_large(const snap_meta *m, const char *path)
{
    for (size_t i = 0; i < m->n_large; i++)
        if (strcmp(m->large[i].path, path) == 0)
            return &m->large[i];
    return NULL;
}

int snap_meta_has_ignored(const snap_meta *m, const char *path)
{
    for (size_t i = 0; i < m->n_ignored; i++)
        if (strcmp(m->ignored[i], path) == 0)
            return 1;
    return 0;
}

static const char *dash(const char *s)
{
    return s && *s ? s : "-";
}

char *snap_meta_format(const snap_meta *m)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, TITLE "\n\n" VERSION_LINE "\n");
    for (size_t i = 0; i < m->n_repos; i++) {
        const snap_meta_repo *r = &m->repos[i];
        char *p = snap_escape(r->path), *hp = snap_escape(r->git.hooks_path);
        buf_printf(&b, "repo %s %s %s %s %s\n", p, r->git.valid ? "valid" : "invalid", dash(r->git.head),
                   dash(r->git.config_sha), r->git.hooks_path[0] ? hp : "-");
        for (int k = 0; k < r->git.n_hooks; k++) {
            char *n = snap_escape(r->git.hooks[k].name);
            buf_printf(&b, "hook %s %s %o %s\n", p, n, r->git.hooks[k].mode, r->git.hooks[k].sha);
            free(n);
        }
        free(p);
        free(hp);
    }
    for (size_t i = 0; i < m->n_large; i++) {
        char *p = snap_escape(m->large[i].path);
        buf_printf(&b, "large %s %" PRIu64 " %" PRId64 " %o\n", p, m->large[i].size, m->large[i].mtime_ns,
                   m->large[i].mode);
        free(p);
    }
    for (size_t i = 0; i < m->n_capped; i++) {
        char *p = snap_escape(m->capped[i].path);
        buf_printf(&b, "capped %s %ld\n", p, m->capped[i].count);
        free(p);
    }
    for (size_t i = 0; i < m->n_ignored; i++) {
        char *p = snap_escape(m->ignored[i]);
        buf_printf(&b, "ignored %s\n", p);
        free(p);
    }
    if (m->ignored_total)
        buf_printf(&b, "ignored-total %ld\n", m->ignored_total);
    for (size_t i = 0; i < m->n_invalid; i++) {
        char *p = snap_escape(m->invalid[i]);
        buf_printf(&b, "invalid %s\n", p);
        free(p);
    }
    return buf_steal(&b);
}

/* Split line into at most max space-separated words (in place). */
static int words(char *line, char **w, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *p = strtok_r(line, " ", &save); p && n < max; p = strtok_r(NULL, " ", &save))
        w[n++] = p;
    return n;
}

static void copy_field(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", strcmp(src, "-") == 0 ? "" : src);
}

void snap_meta_parse(const char *msg, snap_meta *out)
{
    memset(out, 0, sizeof *out);
    const char *body = msg ? strstr(msg, "\n" VERSION_LINE "\n") : NULL;
    if (!body)
        return;
    char *text = xstrdup(body + strlen(VERSION_LINE) + 2);
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *w[6];
        int n = words(line, w, 6);
        if (n == 6 && strcmp(w[0], "repo") == 0) {
            char *p = snap_unescape(w[1]);
            snap_meta_repo *r = snap_meta_add_repo(out, p);
            free(p);
            if (r) {
                r->git.found = true;
                r->git.valid = strcmp(w[2], "valid") == 0;
                copy_field(r->git.head, sizeof r->git.head, w[3]);
                copy_field(r->git.config_sha, sizeof r->git.config_sha, w[4]);
                char *hp = strcmp(w[5], "-") == 0 ? xstrdup("") : snap_unescape(w[5]);
                snprintf(r->git.hooks_path, sizeof r->git.hooks_path, "%s", hp);
                free(hp);
            }
        } else if (n == 5 && strcmp(w[0], "hook") == 0 && out->n_repos) {
            snap_meta_repo *r = &out->repos[out->n_repos - 1];
            char *p = snap_unescape(w[1]);
            if (strcmp(p, r->path) == 0 && r->git.n_hooks < SNAP_MAX_HOOKS) {
                snap_hook *h = &r->git.hooks[r->git.n_hooks++];
                char *name = snap_unescape(w[2]);
                snprintf(h->name, sizeof h->name, "%s", name);
                free(name);
                h->mode = (unsigned)strtoul(w[3], NULL, 8);
                snprintf(h->sha, sizeof h->sha, "%s", w[4]);
            }
            free(p);
        } else if (n == 5 && strcmp(w[0], "large") == 0) {
            char *p = snap_unescape(w[1]);
            snap_meta_add_large(out, p, strtoull(w[2], NULL, 10), strtoll(w[3], NULL, 10),
                                (unsigned)strtoul(w[4], NULL, 8));
            free(p);
        } else if (n == 3 && strcmp(w[0], "capped") == 0) {
            char *p = snap_unescape(w[1]);
            snap_meta_add_capped(out, p, strtol(w[2], NULL, 10));
            free(p);
        } else if (n == 2 && strcmp(w[0], "ignored") == 0) {
            char *p = snap_unescape(w[1]);
            push(&out->ignored, &out->n_ignored, p);
            free(p);
        } else if (n == 2 && strcmp(w[0], "ignored-total") == 0) {
            out->ignored_total = strtol(w[1], NULL, 10);
        } else if (n == 2 && strcmp(w[0], "invalid") == 0) {
            char *p = snap_unescape(w[1]);
            snap_meta_add_invalid(out, p);
            free(p);
        }
        line = nl ? nl + 1 : NULL;
    }
    if (out->ignored_total < (long)out->n_ignored)
        out->ignored_total = (long)out->n_ignored;
    free(text);
}
