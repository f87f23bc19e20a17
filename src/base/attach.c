/* attach.c - see attach.h. */
#include "config.h"

#include "base/attach.h"

#include <stdio.h>
#include <stdlib.h>

void attach_put(attach_slots *a, const char *what, const void *key, void *data, void (*free_fn)(void *data))
{
    for (size_t i = 0; i < ATTACH_MAX; i++) {
        if (!a->slot[i].key) {
            a->slot[i].key = key;
            a->slot[i].data = data;
            a->slot[i].free_fn = free_fn;
            return;
        }
    }
    fprintf(stderr, "corral: more than %d modules keep data on %s\n", ATTACH_MAX, what);
    abort(); /* a programming error, found by any test */
}

void *attach_get(const attach_slots *a, const void *key)
{
    for (size_t i = 0; i < ATTACH_MAX; i++)
        if (a->slot[i].key == key)
            return a->slot[i].data;
    return NULL;
}

void attach_free_all(attach_slots *a)
{
    for (size_t i = 0; i < ATTACH_MAX; i++) {
        if (a->slot[i].key && a->slot[i].free_fn)
            a->slot[i].free_fn(a->slot[i].data);
        a->slot[i].key = NULL;
    }
}
