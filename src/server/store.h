/*
 * store.h - the process store: which sessions corral holds, which ids are
 * taken, and which session to prune when a new one would pass the cap.
 *
 * Semantics are the Codex CLI's unified-exec store:
 * at most 64 entries (a warning from 60), ids drawn at
 * random from 1000..99999 and reserved before spawn, and when an insert finds
 * the store full it prunes one entry: never one of the 8 most recently used,
 * the least-recently-used exited entry first, else the least-recently-used
 * live one.  corral adds pinned entries, which are never pruned.
 *
 * The store holds opaque pointers; the caller kills and frees what it prunes.
 *
 * Included only in src/server/.
 */
#ifndef CORRAL_STORE_H
#define CORRAL_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_MAX 64
#define STORE_WARN 60
#define STORE_PROTECTED_RECENT 8
#define STORE_ID_MIN 1000
#define STORE_ID_END 100000 /* exclusive */

/* What the prune decision looks at, one per entry. */
typedef struct store_meta {
    int id;
    uint64_t last_used; /* any monotonic clock; larger is more recent */
    bool exited;
    bool pinned;
} store_meta;

/* Index into meta of the entry to prune, or -1 if none may be pruned. */
int store_pick_prune(const store_meta *meta, size_t n);

typedef struct store_entry {
    int id;
    void *item;
} store_entry;

typedef struct store {
    store_entry *entries;
    size_t len, cap;
    uint8_t reserved[(STORE_ID_END + 7) / 8];
    size_t reserved_count;
    /* Deterministic ids (1000, 1001, ...) for tests that need them. */
    bool sequential_ids;
} store_t;

void store_init(store_t *s);
void store_free(store_t *s);

/* Draw and reserve a free id; -1 if every id is taken. */
int store_reserve_id(store_t *s);
/* Give an id back (spawn failed, or the entry was removed). */
void store_release_id(store_t *s, int id);
bool store_id_reserved(const store_t *s, int id);

void store_add(store_t *s, int id, void *item);
/* Remove the entry and release its id; returns its item or NULL. */
void *store_remove(store_t *s, int id);
void *store_get(const store_t *s, int id);
size_t store_len(const store_t *s);

#endif
