/*
 * sha256.h - SHA-256 (FIPS 180-4), for pinning trust to the exact content of
 * a workspace's rules files (trust.h).  No library corral links has one.
 *
 * Included by src/base/, src/policy/, src/snap/, src/server/ and ui/ (whether
 * the config file changed since it was read).
 */
#ifndef CORRAL_SHA256_H
#define CORRAL_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32
#define SHA256_HEX_LEN 64

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t bytes; /* hashed so far */
    unsigned char block[64];
    size_t used; /* bytes waiting in block */
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
void sha256_final(sha256_ctx *c, unsigned char out[SHA256_LEN]);
/* The digest of len bytes at data in one call. */
void sha256(const void *data, size_t len, unsigned char out[SHA256_LEN]);
/* Lower-case hex, NUL-terminated. */
void sha256_hex(const unsigned char d[SHA256_LEN], char out[SHA256_HEX_LEN + 1]);
/* 64 hex digits (either case) into d: 0, or -1 when s is anything else. */
int sha256_from_hex(const char *s, size_t len, unsigned char d[SHA256_LEN]);

#endif
