/*
 * list.h - intrusive doubly linked lists: a link_t inside each element, a
 * link_t as the list's head.  Header-only so that any module can keep a
 * list without depending on the server.
 *
 * Included by src/base/, src/server/, src/snap/, src/gate/ and src/mcp/.
 */
#ifndef CORRAL_LIST_H
#define CORRAL_LIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct link {
    struct link *prev, *next;
} link_t;

#define link_entry(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

static inline void link_init(link_t *l)
{
    l->prev = l->next = l;
}

/* Append node at the end of the list headed by head. */
static inline void link_add(link_t *head, link_t *node)
{
    node->next = head;
    node->prev = head->prev;
    head->prev->next = node;
    head->prev = node;
}

/* Unlink node; it is left as an empty list, so a second del is harmless. */
static inline void link_del(link_t *node)
{
    node->prev->next = node->next;
    node->next->prev = node->prev;
    link_init(node);
}

static inline bool link_empty(const link_t *l)
{
    return l->next == l;
}

#endif
