/*
 * vt_sgr.h - SGR (CSI ... m) as xterm reads it, rewritten for libvterm.
 *
 * libvterm 0.1.4 reads some SGRs differently from xterm, and the scanner
 * (vt_scan.c) hands it a rewritten sequence instead:
 *   - 58 (underline colour) and 59 are unknown to it, so the arguments of
 *     58 are read as attributes (58;2;255;0;0 ends in a reset, 58;5;1
 *     sets bold and blink): 58 and 59 go, with their arguments;
 *   - 38:2:CS:R:G:B (with the colour-space field, as ITU T.416 and xterm
 *     write it) is read as R=CS: colon forms become 38;2;R;G;B and 38;5;N;
 *   - an index past 255 (38;5;300) wraps around, an RGB value past 255 is
 *     cut: xterm ignores such a colour, and so does the rewrite;
 *   - more than 16 parameters write past its argument array: the rewrite
 *     is several SGRs of at most 16 (a colour stays in one piece).
 * Everything else passes as it is.
 *
 * Included only in src/vt/.
 */
#ifndef CORRAL_VT_SGR_H
#define CORRAL_VT_SGR_H

#include <stdbool.h>
#include <stddef.h>

/* Room out needs for parameters of len bytes. */
#define VT_SGR_OUT_MAX(len) (4 * (len) + 16)

/* params[0, len) is an SGR's parameter string: digits, ';' and ':' only.
 * *same says the parameters need no rewrite (then nothing is written and 0
 * returned); otherwise writes to out (VT_SGR_OUT_MAX(len) bytes) the SGR
 * sequences ("ESC [ ... m", one or more) libvterm should get instead, and
 * returns their length: 0 when nothing is left to do (every parameter
 * went). */
size_t vt_sgr_rewrite(const char *params, size_t len, char *out, bool *same);

/* The dim and conceal bits (VT_ATTR_DIM, VT_ATTR_CONCEAL) in force after
 * an SGR of these parameters, from cur: libvterm 0.1.4 reports neither.
 * Colour arguments are not attributes. */
unsigned vt_sgr_extra(unsigned cur, const char *params, size_t len);

#endif
