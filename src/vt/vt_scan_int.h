/*
 * vt_scan_int.h - the scanner's insides, shared by vt_scan.c (where
 * sequences end), vt_scan_text.c (text) and vt_scan_seq.c (sequences the
 * scanner carries out itself).  Nothing else includes it.
 *
 * Included only in src/vt/.
 */
#ifndef CORRAL_VT_SCAN_INT_H
#define CORRAL_VT_SCAN_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "vt/vt_scan.h"

enum { ST_GROUND, ST_ESC, ST_CSI, ST_CSI_IGNORE, ST_STR, ST_STR_ESC };
enum { STR_OSC, STR_DCS, STR_IGNORE };

#define C_BEL 0x07
#define C_CAN 0x18
#define C_SUB 0x1a
#define C_ESC 0x1b
#define C_SO 0x0e
#define C_SI 0x0f

/* libvterm 0.1.4 stores a CSI's parameters in 16 slots and does not bound
 * the index: a 17th parameter is written past them while parsing.  A CSI
 * with more separators than this is rewritten (csi_long_feed). */
#define CSI_SEPARATORS_MAX 15

/* Most bytes of an ESC sequence held across writes; more intermediates or
 * controls than this are let go (libvterm keeps fewer). */
#define ESC_HOLD_MAX 64u

/* Largest single write of text handed to libvterm (see feed_text). */
#define FEED_MAX 8192u

/* Hold buffers above this size are given back once their sequence is done,
 * so an idle scanner costs nothing. */
#define HOLD_KEEP 1024u

/* Where the current write is: i is the byte being looked at, run the first
 * byte not yet fed, start the ESC of an unheld sequence in progress. */
typedef struct scan_pos {
    const char *p;
    size_t len, i, run, start;
} scan_pos;

/* Hand bytes to libvterm (the owner's feed) as they are. */
void vt_scan_feed(vt_scan *s, const char *p, size_t n);
/* Feed the run up to (not including) end. */
void vt_scan_feed_run(vt_scan *s, scan_pos *x, size_t end);
/* Tell the owner that dim/conceal changed, after everything before it. */
void vt_scan_set_sgr_extra(vt_scan *s, scan_pos *x, unsigned attrs);
/* Read one decimal parameter; stops at the first non-digit. */
unsigned vt_scan_read_num(const char *p, size_t len, size_t *k);
/* DEC private modes set or reset by CSI ? Pm h / l: note those followed. */
void vt_scan_private_modes(vt_scan *s, const char *body, size_t len, bool set);
/* Whether p[0, n) holds only digits and bytes of also. */
bool vt_scan_digits_and(const char *p, size_t n, const char *also);
/* Drop the sequence in progress, feeding what came before it. */
void vt_scan_seq_abandon(vt_scan *s, scan_pos *x);
/* Hand an action to the owner (vt_scan_ops.action). */
void vt_scan_action(vt_scan *s, int what, unsigned arg);
/* vt_scan_seq.c: carry the sequence out instead of feeding it, if it is
 * one of those vt_scan.h lists; true when it did. */
bool vt_scan_intercept(vt_scan *s, scan_pos *x, const char *seq, size_t len);
/* vt_scan_text.c: text up to the next ESC (or a character cut off by the
 * end of the write). */
void vt_scan_text_bytes(vt_scan *s, scan_pos *x);
/* vt_scan_text.c: complete a character the last write cut off and feed
 * it; false when it is still incomplete. */
bool vt_scan_utf8_resume(vt_scan *s, scan_pos *x);

#endif
