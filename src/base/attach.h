/*
 * attach.h - what a module keeps on an object it does not own (a
 * connection, a session, the server), under a key of its own: the address
 * of something of the module's, so no two modules can collide and no table
 * of names is needed.  The owner frees each attachment with its free
 * function when the object itself is freed.
 *
 * Included by src/server/.
 */
#ifndef CORRAL_ATTACH_H
#define CORRAL_ATTACH_H

/* Enough for every module of the server; more is a programming error that
 * any test finds (attach_put aborts). */
#define ATTACH_MAX 6

typedef struct attach_slots {
    struct {
        const void *key;
        void *data;
        void (*free_fn)(void *data);
    } slot[ATTACH_MAX];
} attach_slots;

/* Keep data under key (what is the object: for the message when full). */
void attach_put(attach_slots *a, const char *what, const void *key, void *data, void (*free_fn)(void *data));
/* The data under key, or NULL. */
void *attach_get(const attach_slots *a, const void *key);
/* Free every attachment (the owner is being freed). */
void attach_free_all(attach_slots *a);

#endif
