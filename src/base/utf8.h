/*
 * utf8.h - the one UTF-8 decoder.  Everything in corral that reads UTF-8
 * byte by byte goes through utf8_decode, so every part agrees on what is a
 * character and what is not: strict (no overlong forms, no surrogates,
 * nothing above U+10FFFF, as RFC 3629 and Unicode require), and a byte
 * that is not part of a valid character is reported as such, never guessed
 * at.
 *
 * Included by src/base/, src/protocol/, src/policy/, src/record/, src/snap/,
 * ui/ and src/cli/.
 */
#ifndef CORRAL_UTF8_H
#define CORRAL_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What utf8_decode stores in *cp when it finds no character. */
#define UTF8_INVALID (-1)   /* not a valid character here */
#define UTF8_TRUNCATED (-2) /* a valid start, cut off by the end of the input */

/* Decode the character at s[0..len), len >= 1.  Returns how many bytes it
 * takes, and sets *cp to its code point; or, when s does not start with a
 * valid character, sets *cp to UTF8_INVALID and returns the length of the
 * maximal invalid subpart (at least 1: the bytes one U+FFFD stands for,
 * Unicode's "substitution of maximal subparts", as Python and Rust do);
 * or, when all of s[0..len) is the valid start of a longer character,
 * sets *cp to UTF8_TRUNCATED and returns len (a stream waits for the rest;
 * at the end of the text it is one invalid subpart). */
size_t utf8_decode(const char *s, size_t len, int32_t *cp);

/* Offset of the first byte of s[0..len) that is not part of a valid
 * character (a truncated one at the end included), or len. */
size_t utf8_valid_prefix(const char *s, size_t len);

/* Length of the longest prefix of s[0..len) that does not end in the middle
 * of a UTF-8 sequence (an incomplete final sequence is held back). */
size_t utf8_complete_prefix(const char *s, size_t len);

/* How many bytes a character with this first byte has (2..4), or 1 if the
 * byte starts no valid multi-byte character. */
size_t utf8_lead_length(unsigned char lead);

/* Where the character that ends just before s[i] starts: i minus one, and
 * further back over continuation bytes (at most three).  0 when i is 0. */
size_t utf8_prev(const char *s, size_t i);

/* Encode one scalar into out (4 bytes room); anything that is not one
 * becomes U+FFFD.  Returns the length. */
size_t utf8_put_scalar(uint32_t c, char *out);

#endif
