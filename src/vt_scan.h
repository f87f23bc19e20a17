/*
 * vt_scan.h - the byte-level pre-scanner in front of libvterm.
 *
 * libvterm 0.1.4 loses an OSC string that is split across two
 * vterm_input_write() calls and shows APC/PM/SOS strings as text.  The
 * scanner sits between the PTY and libvterm: plain runs pass straight
 * through (one memchr for ESC per run), an escape sequence that is cut off at
 * the end of a write is held until it is whole and then handed on in one
 * piece, and escape strings never reach libvterm except OSC 0/1/2 (titles)
 * and DCS, which go over whole.  OSC 133, 7, 9 and 777 are consumed and
 * reported; any other string is dropped.
 *
 * It also tracks what libvterm 0.1.4 keeps to itself or ignores: the DEC
 * modes a client needs for key encoding (DECCKM, keypad, bracketed paste,
 * SGR mouse) and the SGR attributes dim and conceal.
 *
 * 8-bit C1 forms (0x9b, 0x9d, 0x90 ...) are not controls here: in UTF-8 mode
 * libvterm 0.1.4 decodes them as text (U+FFFD), and so does the scanner.
 *
 * Two libvterm 0.1.4 defects are kept away here: a UTF-8 character split
 * between writes after other text in the same write decodes as U+FFFD (the
 * incomplete tail is held and fed with its completion), and a CSI with more
 * than 16 parameters writes past libvterm's argument array (it is rewritten:
 * an SGR split in several, any other CSI cut to 16 parameters).  REP, which
 * can make libvterm loop for ever, goes to the owner instead.  Text goes
 * to libvterm in pieces of at most 8 KiB: one write of a megabyte overflows
 * its stack.
 */
#ifndef CORRAL_VT_SCAN_H
#define CORRAL_VT_SCAN_H

#include <stdbool.h>
#include <stddef.h>

/* Longest escape string kept; a longer one is discarded up to its end. */
#define VT_SCAN_STRING_MAX (64u * 1024u)
/* Longest CSI kept; a longer one is dropped. */
#define VT_SCAN_SEQ_MAX 1024u

typedef struct vt_scan_ops {
    /* Bytes for libvterm, in stream order.  An escape string arrives whole
     * in one call. */
    void (*feed)(void *user, const char *bytes, size_t len);
    /* OSC 133, 7, 9 or 777; payload is what follows "NUM;". */
    void (*osc)(void *user, int number, const char *payload, size_t len);
    /* The SGR attributes libvterm does not report changed: attrs holds
     * VT_ATTR_DIM and VT_ATTR_CONCEAL as now in force.  Every byte before
     * and including the SGR has been fed when this is called. */
    void (*sgr_extra)(void *user, unsigned attrs);
    /* REP (CSI n b): repeat the last graphic character count times.  It
     * never reaches libvterm, whose REP loops for ever after a zero-width
     * glyph or before any text.  Everything before it has been fed. */
    void (*rep)(void *user, unsigned count);
} vt_scan_ops;

typedef struct vt_scan {
    const vt_scan_ops *ops;
    void *user;
    int state;          /* internal: ground, escape, CSI, string ... */
    int str_kind;       /* internal: OSC, DCS or ignored */
    bool held;          /* the sequence in progress lives in hold */
    bool esc_inter;     /* ESC sequence has intermediates */
    bool overflow;      /* string longer than VT_SCAN_STRING_MAX */
    unsigned csi_seps;  /* parameter separators of the CSI in progress */
    bool csi_long;      /* ... more than libvterm can take: held and rewritten */
    char utf8[4];       /* a character cut off at the end of the last write */
    size_t utf8_len;
    char *hold;         /* held sequence or string ("ESC ]" + payload) */
    size_t hold_len;
    size_t hold_cap;
    unsigned modes;     /* VT_MODE_APP_CURSOR, _APP_KEYPAD, _BRACKETED_PASTE, _MOUSE_SGR */
    unsigned sgr_extra; /* VT_ATTR_DIM | VT_ATTR_CONCEAL in force */
} vt_scan;

void vt_scan_init(vt_scan *s, const vt_scan_ops *ops, void *user);
void vt_scan_free(vt_scan *s);

/* Scan one read from the PTY; any split of the stream is fine. */
void vt_scan_write(vt_scan *s, const char *bytes, size_t len);

/* VT_MODE_* bits the scanner tracks. */
unsigned vt_scan_modes(const vt_scan *s);

#endif
