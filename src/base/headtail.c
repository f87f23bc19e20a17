/*
 * headtail.c - head/tail capped buffer.  The tail is a ring so that pushing
 * a byte stream of any length costs O(length), whatever the budget.
 */
#include "config.h"

#include "base/headtail.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void headtail_init(headtail_t *h, size_t max_bytes)
{
    memset(h, 0, sizeof *h);
    h->max_bytes = max_bytes;
    h->head_budget = max_bytes / 2;
    h->tail_budget = max_bytes - h->head_budget;
}

void headtail_free(headtail_t *h)
{
    free(h->head);
    free(h->tail);
    size_t max = h->max_bytes;
    headtail_init(h, max);
}

/* Copy the ring into a straight array of new capacity cap. */
static void tail_regrow(headtail_t *h, size_t cap)
{
    char *t = xmalloc(cap);
    size_t first = h->tail_cap - h->tail_start;
    if (first > h->tail_len)
        first = h->tail_len;
    if (h->tail_len) {
        memcpy(t, h->tail + h->tail_start, first);
        memcpy(t + first, h->tail, h->tail_len - first);
    }
    free(h->tail);
    h->tail = t;
    h->tail_cap = cap;
    h->tail_start = 0;
}

static void tail_push(headtail_t *h, const char *data, size_t len)
{
    if (len == 0)
        return;
    if (h->tail_budget == 0) {
        h->omitted += len;
        return;
    }
    if (len >= h->tail_budget) {
        /* The chunk alone fills the tail: keep only its end. */
        h->omitted += h->tail_len + (len - h->tail_budget);
        if (h->tail_cap < h->tail_budget) {
            free(h->tail);
            h->tail = xmalloc(h->tail_budget);
            h->tail_cap = h->tail_budget;
        }
        memcpy(h->tail, data + (len - h->tail_budget), h->tail_budget);
        h->tail_start = 0;
        h->tail_len = h->tail_budget;
        return;
    }
    size_t want = h->tail_len + len;
    if (want > h->tail_cap && h->tail_cap < h->tail_budget) {
        size_t cap = h->tail_cap ? h->tail_cap : 4096;
        while (cap < want && cap < h->tail_budget)
            cap *= 2;
        if (cap > h->tail_budget)
            cap = h->tail_budget;
        tail_regrow(h, cap);
    }
    /* Drop the oldest bytes that no longer fit. */
    if (want > h->tail_cap) {
        size_t excess = want - h->tail_cap;
        h->tail_start = (h->tail_start + excess) % h->tail_cap;
        h->tail_len -= excess;
        h->omitted += excess;
    }
    size_t pos = (h->tail_start + h->tail_len) % h->tail_cap;
    size_t first = h->tail_cap - pos;
    if (first > len)
        first = len;
    memcpy(h->tail + pos, data, first);
    memcpy(h->tail, data + first, len - first);
    h->tail_len += len;
}

void headtail_push(headtail_t *h, const char *data, size_t len)
{
    if (len == 0)
        return;
    if (h->max_bytes == 0) {
        h->omitted += len;
        return;
    }
    size_t room = h->head_budget - h->head_len;
    size_t take = room < len ? room : len;
    if (take) {
        h->head = xrealloc(h->head, h->head_len + take);
        memcpy(h->head + h->head_len, data, take);
        h->head_len += take;
    }
    tail_push(h, data + take, len - take);
}

size_t headtail_retained(const headtail_t *h)
{
    return h->head_len + h->tail_len;
}

size_t headtail_omitted(const headtail_t *h)
{
    return h->omitted;
}

static char *assemble(const headtail_t *h, const char *marker, size_t *len)
{
    size_t mlen = marker ? strlen(marker) : 0;
    size_t n = h->head_len + mlen + h->tail_len;
    char *out = xmalloc(n + 1);
    if (h->head_len)
        memcpy(out, h->head, h->head_len);
    if (mlen)
        memcpy(out + h->head_len, marker, mlen);
    char *t = out + h->head_len + mlen;
    if (h->tail_len) {
        size_t first = h->tail_cap - h->tail_start;
        if (first > h->tail_len)
            first = h->tail_len;
        memcpy(t, h->tail + h->tail_start, first);
        memcpy(t + first, h->tail, h->tail_len - first);
    }
    out[n] = '\0';
    if (len)
        *len = n;
    return out;
}

char *headtail_bytes(const headtail_t *h, size_t *len)
{
    return assemble(h, NULL, len);
}

char *headtail_bytes_with_marker(const headtail_t *h, size_t *len)
{
    if (h->omitted == 0)
        return assemble(h, NULL, len);
    char marker[64];
    snprintf(marker, sizeof marker, "\n... %zu bytes omitted ...\n", h->omitted);
    return assemble(h, marker, len);
}

char *headtail_drain(headtail_t *h, size_t *len)
{
    char *out = assemble(h, NULL, len);
    headtail_free(h);
    return out;
}
