/*
 * theme_colour.c - the colour half of themes (theme.h): parsing a style
 * value ("FG [on BG] [ATTR...]": names, #rrggbb, palette indexes) with
 * messages that name the word and the setting, and reducing a colour to
 * the nearest of 256 or 16 for terminals that have no more.
 */
#include "config.h"

#include "theme.h"
#include "base/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- colours and styles ------------------------------------------------- */

static const char *const colour_names[16] = {
    "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
    "bright-black", "bright-red", "bright-green", "bright-yellow",
    "bright-blue", "bright-magenta", "bright-cyan", "bright-white",
};

enum { COL_OK = 0, COL_UNKNOWN = -1, COL_RANGE = -2, COL_HEX = -3 };

static int parse_hex(const char *s, vt_color *out)
{
    int v[6];
    if (strlen(s) != 7)
        return COL_HEX;
    for (int i = 0; i < 6; i++)
        if ((v[i] = hex_value(s[i + 1])) < 0)
            return COL_HEX;
    *out = VT_COLOR_RGB(v[0] << 4 | v[1], v[2] << 4 | v[3], v[4] << 4 | v[5]);
    return COL_OK;
}

/* "17", "color17" or "colour17".  Digits only, so "-1" or "1e3" are unknown
 * words rather than numbers; more than three digits is out of range. */
static int parse_index(const char *s, vt_color *out)
{
    if (strncasecmp(s, "colour", 6) == 0)
        s += 6;
    else if (strncasecmp(s, "color", 5) == 0)
        s += 5;
    size_t n = strspn(s, "0123456789");
    if (n == 0 || s[n] != '\0')
        return COL_UNKNOWN;
    if (n > 3 || atoi(s) > 255)
        return COL_RANGE;
    *out = VT_COLOR_INDEXED(atoi(s));
    return COL_OK;
}

static int parse_colour(const char *s, vt_color *out)
{
    if (strcasecmp(s, "default") == 0) {
        *out = VT_COLOR_DEFAULT;
        return COL_OK;
    }
    for (int i = 0; i < 16; i++)
        if (strcasecmp(s, colour_names[i]) == 0) {
            *out = VT_COLOR_INDEXED(i);
            return COL_OK;
        }
    if (strcasecmp(s, "grey") == 0 || strcasecmp(s, "gray") == 0) {
        *out = VT_COLOR_INDEXED(8); /* bright black */
        return COL_OK;
    }
    if (s[0] == '#')
        return parse_hex(s, out);
    return parse_index(s, out);
}

static const struct {
    const char *name;
    unsigned attr;
} attr_names[] = {
    {"bold", VT_ATTR_BOLD},           {"dim", VT_ATTR_DIM},     {"italic", VT_ATTR_ITALIC},
    {"underline", VT_ATTR_UNDERLINE}, {"blink", VT_ATTR_BLINK}, {"reverse", VT_ATTR_REVERSE},
};
#define ATTRS_ALLOWED "bold, dim, italic, underline, blink or reverse"
#define COLOURS_ALLOWED "default, a colour name (black, red, ..., bright-white), 0-255 or #rrggbb"

static unsigned parse_attr(const char *s)
{
    for (size_t i = 0; i < sizeof attr_names / sizeof attr_names[0]; i++)
        if (strcasecmp(s, attr_names[i].name) == 0)
            return attr_names[i].attr;
    return 0;
}

/* " for key 'status'", or nothing when the caller named no key. */
static const char *for_key(const char *key, char *buf, size_t len)
{
    if (!key)
        return "";
    snprintf(buf, len, " for key '%s'", key);
    return buf;
}

/* A colour word that failed: say which word and what is allowed. */
static void colour_error(int why, const char *word, const char *key, char *err, size_t errlen)
{
    char fk[96];
    const char *k = for_key(key, fk, sizeof fk);
    if (why == COL_RANGE)
        snprintf(err, errlen, "colour '%s'%s is out of range: use 0-255", word, k);
    else if (why == COL_HEX)
        snprintf(err, errlen, "bad colour '%s'%s: write #rrggbb with six hex digits%s", word, k,
                 strspn(word + 1, "0123456789abcdefABCDEF") < strlen(word + 1)
                     ? " (a comment needs a blank after '#')" : "");
    else if (parse_attr(word))
        snprintf(err, errlen, "'%s'%s is an attribute, not a colour: a style starts with the "
                 "foreground colour (e.g. 'default %s')", word, k, word);
    else
        snprintf(err, errlen, "unknown colour '%s'%s: use " COLOURS_ALLOWED, word, k);
}

/* Attributes after the colours; a colour word here gets its own message. */
static int parse_attrs(char **tok, int n, const char *key, unsigned *attrs, char *err, size_t errlen)
{
    char fk[96];
    vt_color ignored;
    for (int i = 0; i < n; i++) {
        unsigned a = parse_attr(tok[i]);
        if (a) {
            *attrs |= a;
            continue;
        }
        if (tok[i][0] == '#' && parse_colour(tok[i], &ignored) != COL_OK)
            colour_error(COL_HEX, tok[i], key, err, errlen);
        else if (strcasecmp(tok[i], "on") == 0)
            snprintf(err, errlen, "'on' appears twice%s: a style is FG [on BG] [ATTR...]",
                     for_key(key, fk, sizeof fk));
        else if (parse_colour(tok[i], &ignored) == COL_OK)
            snprintf(err, errlen, "'%s'%s: only attributes (" ATTRS_ALLOWED ") may follow "
                     "FG [on BG]", tok[i], for_key(key, fk, sizeof fk));
        else
            snprintf(err, errlen, "unknown attribute '%s'%s: use " ATTRS_ALLOWED, tok[i],
                     for_key(key, fk, sizeof fk));
        return -1;
    }
    return 0;
}

#define STYLE_MAX_WORDS 16

int theme_parse_style(const char *value, const char *key, theme_style *out, char *err, size_t errlen)
{
    char buf[256], fk[96];
    char *tok[STYLE_MAX_WORDS];
    int n = 0;
    if (strlen(value) >= sizeof buf) {
        snprintf(err, errlen, "style%s is too long (at most %zu characters)", for_key(key, fk, sizeof fk),
                 sizeof buf - 1);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", value);
    for (char *save, *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == STYLE_MAX_WORDS) {
            snprintf(err, errlen, "style%s has too many words: use FG [on BG] [ATTR...]",
                     for_key(key, fk, sizeof fk));
            return -1;
        }
        tok[n++] = w;
    }
    if (n == 0 || strcasecmp(tok[0], "on") == 0) {
        snprintf(err, errlen, "%s style%s: a style starts with the foreground colour, as in "
                 "FG [on BG] [ATTR...] (e.g. 'default on blue bold')", n ? "incomplete" : "empty",
                 for_key(key, fk, sizeof fk));
        return -1;
    }
    theme_style s = {VT_COLOR_DEFAULT, VT_COLOR_DEFAULT, 0};
    int why = parse_colour(tok[0], &s.fg), i = 1;
    if (why != COL_OK) {
        colour_error(why, tok[0], key, err, errlen);
        return -1;
    }
    if (i < n && strcasecmp(tok[i], "on") == 0) {
        if (++i == n) {
            snprintf(err, errlen, "'on' needs a background colour after it%s", for_key(key, fk, sizeof fk));
            return -1;
        }
        if ((why = parse_colour(tok[i], &s.bg)) != COL_OK) {
            colour_error(why, tok[i], key, err, errlen);
            return -1;
        }
        i++;
    }
    if (parse_attrs(tok + i, n - i, key, &s.attrs, err, errlen) < 0)
        return -1;
    *out = s;
    return 0;
}

/* The RGB value of an xterm palette index: the 16 basic colours as xterm
 * draws them by default, the 6x6x6 cube, the 24 greys. */
static void palette_rgb(int i, int rgb[3])
{
    static const unsigned char basic[16][3] = {
        {0, 0, 0},       {205, 0, 0},   {0, 205, 0},   {205, 205, 0}, {0, 0, 238},     {205, 0, 205},
        {0, 205, 205},   {229, 229, 229}, {127, 127, 127}, {255, 0, 0}, {0, 255, 0},   {255, 255, 0},
        {92, 92, 255},   {255, 0, 255}, {0, 255, 255}, {255, 255, 255},
    };
    if (i < 16) {
        for (int k = 0; k < 3; k++)
            rgb[k] = basic[i][k];
    } else if (i < 232) {
        int v[3] = {(i - 16) / 36, (i - 16) / 6 % 6, (i - 16) % 6};
        for (int k = 0; k < 3; k++)
            rgb[k] = v[k] ? 55 + 40 * v[k] : 0;
    } else {
        rgb[0] = rgb[1] = rgb[2] = 8 + 10 * (i - 232);
    }
}

static int dist2(const int a[3], const int b[3])
{
    int d = 0;
    for (int k = 0; k < 3; k++)
        d += (a[k] - b[k]) * (a[k] - b[k]);
    return d;
}

/* The colour as RGB; false for the terminal default. */
static bool colour_rgb(vt_color c, int rgb[3])
{
    if (VT_COLOR_KIND(c) == VT_COLOR_KIND_INDEXED) {
        palette_rgb((int)(c & 0xff), rgb);
        return true;
    }
    if (VT_COLOR_KIND(c) != VT_COLOR_KIND_RGB)
        return false;
    rgb[0] = (int)(c >> 16 & 0xff);
    rgb[1] = (int)(c >> 8 & 0xff);
    rgb[2] = (int)(c & 0xff);
    return true;
}

/* Best index in [from, to) of the palette for rgb; the first wins a tie. */
static int nearest_in(const int rgb[3], int from, int to)
{
    int best = from, best_d = -1, p[3];
    for (int i = from; i < to; i++) {
        palette_rgb(i, p);
        int d = dist2(rgb, p);
        if (best_d < 0 || d < best_d)
            best = i, best_d = d;
    }
    return best;
}

/* The cube point nearest rgb: squared distance is a sum over channels, so
 * each channel takes its nearest of the six levels on its own. */
static int nearest_cube(const int rgb[3])
{
    static const int level[6] = {0, 95, 135, 175, 215, 255};
    int idx[3];
    for (int k = 0; k < 3; k++) {
        idx[k] = 0;
        for (int l = 1; l < 6; l++)
            if (abs(rgb[k] - level[l]) < abs(rgb[k] - level[idx[k]]))
                idx[k] = l;
    }
    return 16 + 36 * idx[0] + 6 * idx[1] + idx[2];
}

/* The grey nearest rgb: the distance to (v,v,v) is least at v = the mean,
 * so only the ramp steps either side of the mean need comparing. */
static int nearest_grey(const int rgb[3])
{
    int mean = (rgb[0] + rgb[1] + rgb[2]) / 3, i0 = (mean - 8) / 10;
    i0 = i0 < 0 ? 0 : i0 > 23 ? 23 : i0;
    return nearest_in(rgb, 232 + i0, 232 + (i0 + 2 < 24 ? i0 + 2 : 24));
}

int theme_nearest_256(vt_color c)
{
    int rgb[3], p[3];
    if (VT_COLOR_KIND(c) == VT_COLOR_KIND_INDEXED)
        return (int)(c & 0xff);
    if (!colour_rgb(c, rgb))
        return -1;
    /* Not 0-15: terminals redefine those, while the cube and greys are
     * the same everywhere.  O(1), as the renderer calls it per cell. */
    int cube = nearest_cube(rgb), grey = nearest_grey(rgb);
    palette_rgb(cube, p);
    int dc = dist2(rgb, p);
    palette_rgb(grey, p);
    return dist2(rgb, p) < dc ? grey : cube;
}

int theme_nearest_16(vt_color c)
{
    int rgb[3];
    if (VT_COLOR_KIND(c) == VT_COLOR_KIND_INDEXED && (c & 0xff) < 16)
        return (int)(c & 0xff);
    if (!colour_rgb(c, rgb))
        return -1;
    return nearest_in(rgb, 0, 16);
}
