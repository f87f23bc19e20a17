/*
 * statmemo.c - lstat()'s answers kept for one plan compile (see
 * statmemo.h).
 */
#include "config.h"

#include "statmemo.h"
#include "sbutil.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct sb_statmemo_entry {
    char *path;
    bool known; /* false: forgotten, ask again */
    int err;    /* 0: st holds the answer */
    struct stat st;
};

static bool bypass;

void sb_statmemo_bypass(bool on)
{
    bypass = on;
}

/* FNV-1a: the paths of one workspace share long prefixes. */
static size_t path_hash(const char *p)
{
    uint64_t h = 14695981039346656037ull;
    for (; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return (size_t)h;
}

/* The slot of path in m's hash: its entry's, or the empty one it would take. */
static size_t *slot_of(sb_statmemo *m, const char *path)
{
    size_t mask = 2 * m->cap - 1;
    for (size_t i = path_hash(path) & mask;; i = (i + 1) & mask)
        if (!m->slots[i] || strcmp(m->v[m->slots[i] - 1].path, path) == 0)
            return &m->slots[i];
}

int sb_statmemo_lstat(sb_statmemo *m, const char *path, struct stat *st)
{
    if (!m || bypass || path[0] != '/')
        return lstat(path, st);
    /* The table is half full at most, so a probe ends soon. */
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->v = sb_realloc(m->v, m->cap * sizeof *m->v);
        free(m->slots);
        m->slots = sb_alloc(2 * m->cap * sizeof *m->slots); /* zeroed: empty */
        for (size_t i = 0; i < m->n; i++)
            *slot_of(m, m->v[i].path) = i + 1;
    }
    size_t *slot = slot_of(m, path);
    if (!*slot) {
        m->v[m->n] = (struct sb_statmemo_entry){.path = sb_strdup(path)};
        *slot = ++m->n;
    }
    struct sb_statmemo_entry *e = &m->v[*slot - 1];
    if (!e->known) {
        e->err = lstat(path, &e->st) == 0 ? 0 : errno;
        e->known = true;
    }
    if (e->err) {
        errno = e->err;
        return -1;
    }
    *st = e->st;
    return 0;
}

void sb_statmemo_forget(sb_statmemo *m, const char *path)
{
    if (!m || !m->cap || path[0] != '/')
        return;
    size_t *slot = slot_of(m, path);
    if (*slot)
        m->v[*slot - 1].known = false;
}

void sb_statmemo_free(sb_statmemo *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].path);
    free(m->v);
    free(m->slots);
    memset(m, 0, sizeof *m);
}
