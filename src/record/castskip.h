/*
 * castskip.h - where a terminal model may start reading a recording's
 * output when only the screen at the end is wanted (`corral replay
 * --speed 0`, or a recording shown as it ended), and still end with the
 * same screen as a model that read all of it.
 *
 * The argument: take a point Q right after CR LF, followed by 2*ROWS line
 * feeds with only text, CR, LF, TAB, BS, BEL, SGR and sequences that leave
 * the screen alone (OSC, cursor visibility, mouse and key modes) in
 * between.  Nothing in that window moves the cursor up, so by its end every
 * row that was on the screen at Q has scrolled away, in the full model and
 * in a fresh one alike, and every row on screen was written in the window
 * from column 0 with the same pen.  What else a fresh model could differ in
 * is ruled out: nothing before Q may change state the window would carry
 * on (scroll margins, the alternate screen, origin mode, autowrap, insert
 * mode, character sets, tab stops, a saved cursor, ...: each such sequence
 * ends the search, the list below says which are allowed), no resize may
 * come after Q (a taller screen brings history back), and the pen and the
 * cursor's visibility at Q are replayed into the fresh model.  Anything
 * unknown counts as such a sequence: when in doubt the whole recording is
 * read.  The unit tests compare both models on many streams.
 *
 * Included only in src/record/.
 */
#ifndef CORRAL_CASTSKIP_H
#define CORRAL_CASTSKIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The caller's note about the event a point is in (castplay's position in
 * the file and its clock), copied with each point. */
#define CASTSKIP_TAG_MAX 64
/* SGR bytes since the pen was last reset that a point may carry. */
#define CASTSKIP_PEN_MAX 96

typedef struct castskip_point {
    unsigned char tag[CASTSKIP_TAG_MAX]; /* the event's tag */
    size_t at;                           /* offset of Q in that event's data */
    char pen[CASTSKIP_PEN_MAX];          /* SGRs that recreate the pen at Q */
    size_t pen_len;
    bool cursor_hidden;                  /* ?25l in force at Q */
    uint64_t lf_at;                      /* line feeds counted up to Q */
} castskip_point;

typedef struct castskip castskip_t;

castskip_t *castskip_new(int rows);
void castskip_free(castskip_t *s);

/* The next piece of output, from an event with the given tag (at most
 * CASTSKIP_TAG_MAX bytes).  Returns false once the stream holds something
 * that rules out every later point: the caller may stop feeding. */
bool castskip_feed(castskip_t *s, const char *data, size_t len, const void *tag, size_t tag_len);

/* The screen was resized: no point found so far may be used. */
void castskip_resize(castskip_t *s, int rows);

/* The latest usable point, or NULL (start from the beginning). */
const castskip_point *castskip_best(const castskip_t *s);

#endif
