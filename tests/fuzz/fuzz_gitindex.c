/*
 * fuzz_gitindex.c - libFuzzer target for the git index reader
 * (sandbox/gitindex.c), which reads an index file a sandboxed program may
 * have written to learn every gitlink the user's git will look into.  The
 * first byte chooses the object name length (even: 20, SHA-1; odd: 32,
 * SHA-256), the rest is the index.  Any bytes must parse or fail with one
 * line of error, never crash, leak, read out of bounds or take more than a
 * moment, and:
 *
 *   - every gitlink path handed on is a relative path git would accept: not
 *     empty, no leading, trailing or doubled '/', no ".", ".." or ".git"
 *     component (the reader refuses ".git" in any case, so this does too);
 *   - the shared index named is "" or 2 * hash_len lower-case hex digits;
 *   - a callback that returns non-zero on the second gitlink stops the walk
 *     there, and that value is returned.
 *
 * Built by tests/fuzz/build.sh for libFuzzer; make check builds it with
 * gcc and tests/fuzz/replay_main.c to replay tests/fuzz/corpus/gitindex.
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/gitindex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the non-zero return stops the walk with (not -1: that is an error). */
#define STOP 42

/* Stop with a message: the fuzzer (or make check) reports the input. */
static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_gitindex: %s: %s\n", what, detail);
    abort();
}

typedef struct walk {
    int calls;
    int stop_at;     /* return STOP on this call (1-based; 0: never) */
    char *first[2];  /* the first two paths (the first walk keeps them) */
    bool keep;
} walk;

static bool component_bad(const char *c, size_t n)
{
    if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
        return true;
    return n == 4 && c[0] == '.' && (c[1] | 32) == 'g' && (c[2] | 32) == 'i' && (c[3] | 32) == 't';
}

static void check_path(const char *path)
{
    size_t len = strlen(path);
    if (len == 0)
        broken("an empty gitlink path", path);
    if (path[0] == '/')
        broken("an absolute gitlink path", path);
    const char *c = path;
    for (;;) {
        const char *slash = strchr(c, '/');
        size_t n = slash ? (size_t)(slash - c) : strlen(c);
        if (component_bad(c, n))
            broken("a gitlink path with an empty, \".\", \"..\" or \".git\" component", path);
        if (!slash)
            break;
        c = slash + 1;
    }
}

static int on_link(void *user, const char *path)
{
    walk *w = user;
    check_path(path);
    if (w->keep && w->calls < 2)
        w->first[w->calls] = strdup(path);
    else if (!w->keep && w->calls < 2 && w->first[w->calls] && strcmp(w->first[w->calls], path) != 0)
        broken("the second walk hands on a different gitlink", path);
    w->calls++;
    return w->calls == w->stop_at ? STOP : 0;
}

static void check_error(const char *err)
{
    if (!err[0])
        broken("an error without a message", "(empty)");
    for (const char *c = err; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            broken("an error that is not one line of text", err);
}

static void check_shared(const char *hex, size_t hash_len)
{
    size_t n = strlen(hex);
    if (n != 0 && n != 2 * hash_len)
        broken("a shared index name of the wrong length", hex);
    for (size_t i = 0; i < n; i++)
        if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
            broken("a shared index name that is not lower-case hex", hex);
}

/* One parse; err and shared_hex are filled with junk first, so that one
 * left unset is seen. */
static int parse(const uint8_t *idx, size_t len, size_t hash_len, walk *w)
{
    char shared[2 * 32 + 1], err[256];
    memset(shared, 'X', sizeof shared - 1);
    shared[sizeof shared - 1] = '\0';
    err[0] = '\0';
    int rc = sb_gitindex_parse(idx, len, hash_len, on_link, w, shared, err, sizeof err);
    check_shared(shared, hash_len);
    if (rc == -1)
        check_error(err);
    else if (rc != 0 && rc != STOP)
        broken("an unexpected result", "neither 0, -1 nor the callback's");
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t hash_len = data[0] & 1 ? 32 : 20;
    /* The index ends where the input does: a read past it is caught. */
    const uint8_t *idx = data + 1;
    size_t len = size - 1;

    walk all = {.keep = true};
    int rc = parse(idx, len, hash_len, &all);
    if (rc == STOP)
        broken("a result the callback never gave", "STOP");
    if (all.calls >= 2) {
        /* Stopped on the second gitlink: the walk ends there, with it. */
        walk stop = {.stop_at = 2, .first = {all.first[0], all.first[1]}};
        int src = parse(idx, len, hash_len, &stop);
        if (src != STOP || stop.calls != 2) {
            char what[64];
            snprintf(what, sizeof what, "returned %d after %d calls", src, stop.calls);
            broken("a callback's non-zero result did not stop the walk", what);
        }
    }
    free(all.first[0]);
    free(all.first[1]);
    return 0;
}
