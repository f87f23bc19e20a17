/*
 * width.c - see width.h.  The table holds the ranges whose width is not 1;
 * a lookup is a binary search over it.  The Basic Multilingual Plane, where
 * most text is, is looked up once into a table of 64 KiB on first use.
 */
#include "config.h"

#include "base/width.h"

#include "base/utf8.h"

#include <pthread.h>

typedef struct uc_width_range {
    uint32_t first, last;
    int8_t width;
} uc_width_range;

#define UC_WIDTH_TABLE
#include "base/width_table.h"

static int search(uint32_t cp)
{
    size_t lo = 0, hi = sizeof uc_width_ranges / sizeof uc_width_ranges[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < uc_width_ranges[mid].first)
            hi = mid;
        else if (cp > uc_width_ranges[mid].last)
            lo = mid + 1;
        else
            return uc_width_ranges[mid].width;
    }
    return 1;
}

static int8_t bmp[0x10000];
static pthread_once_t bmp_once = PTHREAD_ONCE_INIT;

static void bmp_fill(void)
{
    for (uint32_t cp = 0; cp < 0x10000; cp++)
        bmp[cp] = (int8_t)search(cp);
}

int uc_width(uint32_t cp)
{
    if (cp >= 0x20 && cp < 0x7f)
        return 1;
    if (cp < 0x10000) {
        pthread_once(&bmp_once, bmp_fill);
        return bmp[cp];
    }
    return cp > 0x10FFFF ? -1 : search(cp);
}

/* Columns one decoded character is drawn in (see uc_text_width). */
static int drawn_width(int32_t cp)
{
    if (cp < 0)
        return 1;
    int w = uc_width((uint32_t)cp);
    return w < 0 ? 1 : w;
}

int uc_text_width(const char *s, size_t len)
{
    int w = 0;
    for (size_t i = 0; i < len;) {
        int32_t cp;
        i += utf8_decode(s + i, len - i, &cp);
        w += drawn_width(cp);
    }
    return w;
}

size_t uc_text_fit(const char *s, size_t len, int maxw, int *width)
{
    int used = 0;
    size_t i = 0;
    while (i < len) {
        int32_t cp;
        size_t n = utf8_decode(s + i, len - i, &cp);
        int w = drawn_width(cp);
        if (used + w > maxw)
            break;
        used += w;
        i += n;
    }
    if (width)
        *width = used;
    return i;
}
