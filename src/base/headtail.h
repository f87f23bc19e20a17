/*
 * headtail.h - a capped byte buffer that keeps the first half of its budget
 * (the head) and the newest bytes up to the other half (the tail), dropping
 * and counting what falls in between.  Same semantics as the Codex CLI's
 * HeadTailBuffer: an agent's view of a process that printed 50 MB is its
 * first and last 512 KiB.  Memory grows with use; nothing is preallocated.
 *
 * Included by src/base/ and src/server/.
 */
#ifndef CORRAL_HEADTAIL_H
#define CORRAL_HEADTAIL_H

#include <stddef.h>

#define HEADTAIL_DEFAULT_MAX (1024u * 1024u)

typedef struct headtail {
    size_t max_bytes;
    size_t head_budget;
    size_t tail_budget;
    char *head;
    size_t head_len;
    char *tail;        /* ring of tail_cap bytes */
    size_t tail_cap;   /* grows up to tail_budget */
    size_t tail_start; /* index of the oldest tail byte */
    size_t tail_len;
    size_t omitted;    /* bytes dropped from the middle */
} headtail_t;

void headtail_init(headtail_t *h, size_t max_bytes);
void headtail_free(headtail_t *h);
void headtail_push(headtail_t *h, const char *data, size_t len);
size_t headtail_retained(const headtail_t *h);
size_t headtail_omitted(const headtail_t *h);
/* Head then tail, without a marker.  Caller frees; *len receives the size. */
char *headtail_bytes(const headtail_t *h, size_t *len);
/* Head, then "\n... N bytes omitted ...\n" if anything was dropped, then tail. */
char *headtail_bytes_with_marker(const headtail_t *h, size_t *len);
/* headtail_bytes, then empty the buffer (the omitted count is discarded). */
char *headtail_drain(headtail_t *h, size_t *len);

#endif
