/*
 * store.c - process store bookkeeping and the prune decision.
 */
#include "config.h"

#include "server/store.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

int store_pick_prune(const store_meta *meta, size_t n)
{
    if (n == 0)
        return -1;
    /* Mark the STORE_PROTECTED_RECENT most recently used entries (pinned
     * ones count among them, as in "the 8 most recently used"). */
    bool *protected = xcalloc(n, sizeof *protected);
    for (int k = 0; k < STORE_PROTECTED_RECENT && (size_t)k < n; k++) {
        int best = -1;
        for (size_t i = 0; i < n; i++) {
            if (protected[i])
                continue;
            if (best < 0 || meta[i].last_used > meta[best].last_used)
                best = (int)i;
        }
        protected[best] = true;
    }
    int pick = -1;
    for (int want_exited = 1; want_exited >= 0 && pick < 0; want_exited--) {
        for (size_t i = 0; i < n; i++) {
            if (protected[i] || meta[i].pinned || meta[i].exited != (bool)want_exited)
                continue;
            if (pick < 0 || meta[i].last_used < meta[pick].last_used)
                pick = (int)i;
        }
    }
    free(protected);
    return pick;
}

void store_init(store_t *s)
{
    memset(s, 0, sizeof *s);
}

void store_free(store_t *s)
{
    free(s->entries);
    memset(s, 0, sizeof *s);
}

bool store_id_reserved(const store_t *s, int id)
{
    if (id < 0 || id >= STORE_ID_END)
        return false;
    return s->reserved[id / 8] & (1u << (id % 8));
}

static void mark(store_t *s, int id, bool on)
{
    if (on)
        s->reserved[id / 8] |= (uint8_t)(1u << (id % 8));
    else
        s->reserved[id / 8] &= (uint8_t)~(1u << (id % 8));
}

int store_reserve_id(store_t *s)
{
    if (s->reserved_count >= STORE_ID_END - STORE_ID_MIN)
        return -1;
    int id;
    if (s->sequential_ids) {
        id = STORE_ID_MIN;
        while (store_id_reserved(s, id))
            id++;
    } else {
        do
            id = (int)random_range(STORE_ID_MIN, STORE_ID_END);
        while (store_id_reserved(s, id));
    }
    mark(s, id, true);
    s->reserved_count++;
    return id;
}

void store_release_id(store_t *s, int id)
{
    if (!store_id_reserved(s, id))
        return;
    mark(s, id, false);
    s->reserved_count--;
}

void store_add(store_t *s, int id, void *item)
{
    if (s->len == s->cap) {
        s->cap = s->cap ? s->cap * 2 : STORE_MAX;
        s->entries = xrealloc(s->entries, s->cap * sizeof *s->entries);
    }
    s->entries[s->len].id = id;
    s->entries[s->len].item = item;
    s->len++;
}

void *store_remove(store_t *s, int id)
{
    for (size_t i = 0; i < s->len; i++) {
        if (s->entries[i].id != id)
            continue;
        void *item = s->entries[i].item;
        memmove(&s->entries[i], &s->entries[i + 1], (s->len - i - 1) * sizeof *s->entries);
        s->len--;
        store_release_id(s, id);
        return item;
    }
    return NULL;
}

void *store_get(const store_t *s, int id)
{
    for (size_t i = 0; i < s->len; i++)
        if (s->entries[i].id == id)
            return s->entries[i].item;
    return NULL;
}

size_t store_len(const store_t *s)
{
    return s->len;
}
