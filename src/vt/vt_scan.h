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
 * SGR mouse), the SGR attributes dim and conceal, origin and autowrap
 * mode, left/right margin mode, and the character sets (G0..G3 and which
 * one is in GL).
 *
 * 8-bit C1 forms (0x9b, 0x9d, 0x90 ...) are not controls here: in UTF-8 mode
 * libvterm 0.1.4 decodes them as text (U+FFFD), and so does the scanner.
 * C1 controls encoded in UTF-8 (U+0080..U+009F) are dropped: libvterm
 * gives them a width of -1 and moves the cursor back over the character
 * before.
 *
 * Where libvterm 0.1.4 disagrees with xterm, the scanner stands in front
 * of it (libvterm itself is never patched):
 *   - text: a character whose width (width.h) libvterm gets wrong (every
 *     emoji from Unicode 10 on, newer combining marks ...) goes to the
 *     owner alone (glyph), which hands libvterm a stand-in of the right
 *     width; with autowrap off, so does every wide character, which xterm
 *     does not write at all when it does not fit.  A run in a character
 *     set other than ASCII is cut after each character from outside ASCII
 *     (libvterm decodes the rest of a run as UTF-8 once it saw one); y and
 *     z in DEC line drawing go to the owner as U+2264 and U+2265, xterm's
 *     (libvterm has U+2A7D and U+2A7E);
 *   - saving and restoring the cursor, the alternate screen, RIS, DECSTR,
 *     DECALN and DECSTBM go to the owner (action), which keeps a saved cursor per
 *     screen, with the character sets, as xterm does; CSI s and CSI u are
 *     SCOSC and SCORC unless left/right margin mode is on;
 *   - SGRs are rewritten as vt_sgr.h says;
 *   - DECRQM for the alternate screen modes and DECRQSS for SGR are
 *     answered by the owner.
 *
 * Two libvterm 0.1.4 defects are kept away here: a UTF-8 character split
 * between writes after other text in the same write decodes as U+FFFD (the
 * incomplete tail is held and fed with its completion), and a CSI with more
 * than 16 parameters writes past libvterm's argument array (it is rewritten:
 * an SGR split in several, any other CSI cut to 16 parameters).  REP, which
 * can make libvterm loop for ever, goes to the owner instead.  Text goes
 * to libvterm in pieces of at most 8 KiB: one write of a megabyte overflows
 * its stack.
 *
 * Included only in src/vt/.
 */
#ifndef CORRAL_VT_SCAN_H
#define CORRAL_VT_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
    /* A character libvterm would place at the wrong width (substitute:
     * hand it a stand-in of width columns), any mark (width 0: the owner
     * puts it on the glyph before; libvterm would write that glyph again
     * as it remembers it, in the current pen), or,
     * with autowrap off, a wide one (which is not written when it does not
     * fit).  bytes[0, len) is its UTF-8.  Everything before it has been
     * fed. */
    void (*glyph)(void *user, uint32_t cp, int width, bool substitute, const char *bytes, size_t len);
    /* One of the sequences the owner carries out (vt_scan_action), in
     * place of libvterm; arg is the DEC mode for VT_SCAN_ALT_* and
     * VT_SCAN_QUERY_MODE.  Everything before it has been fed. */
    void (*action)(void *user, int action, unsigned arg);
} vt_scan_ops;

/* What vt_scan_ops.action asks for. */
enum vt_scan_action {
    VT_SCAN_SAVE_CURSOR,    /* DECSC, SCOSC, DECSET 1048 */
    VT_SCAN_RESTORE_CURSOR, /* DECRC, SCORC, DECRST 1048 */
    VT_SCAN_ALT_ENTER,      /* DECSET 47, 1047, 1049 (arg) */
    VT_SCAN_ALT_LEAVE,      /* DECRST 47, 1047, 1049 (arg) */
    VT_SCAN_RESET,          /* RIS: not fed to libvterm */
    VT_SCAN_SOFT_RESET,     /* DECSTR: after libvterm has it */
    VT_SCAN_ALIGN,          /* DECALN */
    VT_SCAN_QUERY_MODE,     /* DECRQM for DEC mode arg (47, 1047, 1049) */
    VT_SCAN_QUERY_SGR,      /* DECRQSS for SGR */
    VT_SCAN_CURSOR_MOVED,   /* CUP, CUF and the like went to libvterm: they
                             * end a wait to wrap even when the cursor stays
                             * where it is (libvterm reports no move then) */
    VT_SCAN_SET_REGION,     /* DECSTBM: arg is top << 16 | bottom, each 0
                             * when not given (libvterm takes a region of
                             * one line, which xterm ignores) */
    VT_SCAN_WRAP_ENDED,     /* ED (but 3), EL, ECH, ICH or DCH went to
                             * libvterm: they end a wait to wrap in xterm,
                             * not in libvterm */
};

/* dec bits: DEC modes the scanner follows for the owner. */
#define VT_SCAN_ORIGIN (1u << 0)  /* DECOM */
#define VT_SCAN_NOWRAP (1u << 1)  /* DECAWM reset */
#define VT_SCAN_LRMM (1u << 2)    /* DECLRMM */

/* The character sets: the final byte each of G0..G3 was designated with
 * among those libvterm knows ('B' ASCII, '0' DEC line drawing, 'A' UK),
 * and which of them is in GL. */
typedef struct vt_charsets {
    char g[4];
    unsigned char gl;
} vt_charsets;

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
    unsigned dec;       /* VT_SCAN_ORIGIN, _NOWRAP, _LRMM */
    vt_charsets cs;
} vt_scan;

void vt_scan_init(vt_scan *s, const vt_scan_ops *ops, void *user);
void vt_scan_free(vt_scan *s);

/* Scan one read from the PTY; any split of the stream is fine. */
void vt_scan_write(vt_scan *s, const char *bytes, size_t len);

/* Feed text that holds no escape sequence (the text of cells, for REP)
 * the way text in the stream goes: characters libvterm gets wrong go to
 * the owner.  Safe to call from the scanner's callbacks. */
void vt_scan_text(vt_scan *s, const char *bytes, size_t len);

/* Append to b the input the scanner holds unfinished (a character or a
 * sequence the last write ended inside), which a scanner fed the same
 * holds the same way after them: the end of a stream that recreates the
 * model goes on where its input stopped.  (A string over
 * VT_SCAN_STRING_MAX, being dropped, is not made again.) */
struct buf;
void vt_scan_unfinished(const vt_scan *s, struct buf *b);

/* VT_MODE_* bits the scanner tracks. */
unsigned vt_scan_modes(const vt_scan *s);

/* The character sets in their state after a reset. */
void vt_charsets_reset(vt_charsets *cs);

/* Whether the character set in GL is not ASCII. */
bool vt_charsets_special(const vt_charsets *cs);

#endif
