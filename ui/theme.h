/*
 * theme.h - colour themes for the supervisor screen: one INI file per theme
 * (docs/themes.md), a style (foreground, background, attributes) for each
 * element the TUI draws, and the colour reductions the renderer needs on
 * terminals with fewer colours than a theme asks for.
 *
 * Pure C with no curses, so it is unit-tested on its own; the renderer turns
 * a theme_style into curses pairs.
 *
 * Included by the files of ui/ and by the unit tests
 * (tests/unit/test_theme.c); not for other modules.
 */
#ifndef CORRAL_THEME_H
#define CORRAL_THEME_H

#include <stdbool.h>
#include <stddef.h>

#include "vt/vt.h" /* vt_color, VT_COLOR_*, VT_ATTR_* */

typedef enum theme_elem {
    TH_NORMAL,          /* pane background/foreground where the session uses default colours */
    TH_SIDEBAR,         /* sidebar rows */
    TH_SIDEBAR_SELECTED,/* the selected sidebar row */
    TH_SIDEBAR_GROUP,   /* group headings (the client name: "user", "codex", ...) */
    TH_STATUS,          /* status bar */
    TH_STATUS_KEY,      /* key names in the status bar hints */
    TH_MODE_SUPERVISOR, /* the mode badge in supervisor focus */
    TH_MODE_PANE,       /* the mode badge in pane focus */
    TH_BORDER,          /* pane borders/titles of unfocused panes */
    TH_BORDER_FOCUS,    /* the focused/selected pane's border/title */
    TH_DIALOG,          /* dialog body */
    TH_DIALOG_TITLE,
    TH_DIALOG_SELECTED, /* highlighted option / input field */
    TH_STATE_RUNNING,   /* state glyphs in the sidebar */
    TH_STATE_WAITING,   /* waiting for approval */
    TH_STATE_IDLE,
    TH_STATE_EXIT_OK,
    TH_STATE_EXIT_FAIL,
    TH_PROFILE_FULL,    /* the "full" (unsandboxed) profile label: must stand out (red-ish) */
    TH_SEARCH_MATCH,    /* scrollback search highlight */
    TH_SEARCH_CURRENT,  /* the current match */
    TH_BELL,            /* bell mark in the sidebar */
    TH_REMOTE_HOST,     /* another machine's name where it asks (the approval dialog): red, bold */
    TH_COUNT
} theme_elem;

/* fg/bg VT_COLOR_DEFAULT means the terminal's own colour (curses -1). */
typedef struct theme_style {
    vt_color fg, bg;
    unsigned attrs; /* VT_ATTR_BOLD | DIM | ITALIC | UNDERLINE | BLINK | REVERSE */
} theme_style;

typedef struct theme {
    char name[64];
    char path[4096];        /* the file it came from; THEME_BUILTIN_PATH when compiled in */
    theme_style style[TH_COUNT];
    bool mono;              /* no colours at all: only attributes (NO_COLOR, the mono theme) */
} theme_t;

#define THEME_BUILTIN_PATH "(built in)"
#define THEME_MAX_INHERIT 4 /* inherit links from one theme down to its last base */

/* The INI key name of an element, e.g. "sidebar-selected"; NULL when out of range. */
const char *theme_elem_key(theme_elem e);

/* The compiled-in default (same as themes/default.theme), used when no
 * file can be read. */
void theme_builtin_default(theme_t *t);

/* Load one theme file: t starts from the built-in default (or the theme the
 * file inherits) and takes every key the file sets.  0, or -1 with
 * "FILE:LINE: what was wrong" in err (t is then unspecified).  A theme whose
 * sidebar-selected looks like its sidebar is an error too. */
int theme_load_file(theme_t *t, const char *path, char *err, size_t errlen);
/* Two styles look different on every terminal: colours, or bold,
 * underline, reverse or strike (not only dim, italic or blink). */
bool theme_styles_differ(theme_style a, theme_style b);

/* name is a theme name ("gruvbox") or a path (contains '/').  A name is looked
 * up as NAME.theme in, first found wins:
 *   $XDG_CONFIG_HOME/corral/themes (default ~/.config/corral/themes),
 *   CORRAL_DATADIR/themes (the installed data dir),
 *   CORRAL_SRC_THEMES (the source tree, so an uninstalled build works).
 * "default" found nowhere is the built-in default.  An unknown name is an
 * error listing where it looked and the theme names found there.
 * 0, or -1 with a message in err. */
int theme_load(theme_t *t, const char *name, char *err, size_t errlen);

/* Whether NO_COLOR is set and non-empty (no-color.org): callers then load "mono". */
bool theme_no_color(void);

/* Parse a style value "FG [on BG] [ATTR...]" (docs/themes.md).  key only
 * names the setting in messages (may be NULL).  0, or -1 with a message
 * naming the bad word and what is allowed. */
int theme_parse_style(const char *value, const char *key, theme_style *out, char *err, size_t errlen);

/* The style to draw element e with when it sits inside a row drawn as
 * `under`: the state glyphs, profile-full and bell over TH_SIDEBAR or
 * TH_SIDEBAR_SELECTED, status-key over TH_STATUS.  A `default` fg or bg of e
 * takes the row's colour, attributes add to the row's, and REVERSE flips
 * the row's reverse (so a reversed glyph still stands out on a reversed
 * selection in the mono theme). */
theme_style theme_style_over(const theme_t *t, theme_elem e, theme_elem under);

/* Nearest xterm-256 palette index for a colour, by squared RGB distance
 * over the 6x6x6 cube (16-231) and the grey ramp (232-255); a tie goes to
 * the cube, so #000000 is 16 and #ffffff is 231.  An indexed colour is
 * returned as is; VT_COLOR_DEFAULT gives -1. */
int theme_nearest_256(vt_color c);

/* Nearest of the 16 basic colours (xterm's default values) for a colour:
 * for terminals with 8 or 16 colours.  Indexes 0-15 are returned as is;
 * 16-255 and RGB are matched by squared RGB distance; -1 for default. */
int theme_nearest_16(vt_color c);

#endif
