/* Unit tests for colour themes: the shipped themes load and keep a visible
 * selection, errors name FILE:LINE and the bad word, inheriting and the
 * search order work, and RGB colours map to the right xterm colours. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ui/theme.h"

static char dir[] = "/tmp/corral-test-theme-XXXXXX";
static char xdg_themes[512]; /* $XDG_CONFIG_HOME/corral/themes for these tests */

static const char *const shipped[] = {"default", "light", "solarized-dark", "gruvbox", "high-contrast", "mono"};
#define N_SHIPPED (sizeof shipped / sizeof shipped[0])

/* The source tree's themes/, found from the tests dir the harness names. */
static const char *themes_dir(void)
{
    static char path[512];
    const char *src = getenv("CORRAL_TESTS_SRCDIR");
    if (!src)
        return CORRAL_SRC_THEMES;
    snprintf(path, sizeof path, "%s/../themes", src);
    return path;
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    char xdg[256];
    snprintf(xdg, sizeof xdg, "%s/xdg", dir);
    snprintf(xdg_themes, sizeof xdg_themes, "%s/corral/themes", xdg);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", xdg_themes);
    if (system(cmd) != 0)
        return -1;
    /* Never the user's own themes: the tests own the first search dir. */
    return setenv("XDG_CONFIG_HOME", xdg, 1);
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

/* Write text to DIR/name (name may start with "xdg/..."); returns the path. */
static const char *write_file(const char *name, const char *text)
{
    static char paths[8][512];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, 512, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static const char *write_user_theme(const char *name, const char *text)
{
    char rel[128];
    snprintf(rel, sizeof rel, "xdg/corral/themes/%s.theme", name);
    return write_file(rel, text);
}

static void remove_user_theme(const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s.theme", xdg_themes, name);
    unlink(path);
}

static bool same_style(theme_style a, theme_style b)
{
    return a.fg == b.fg && a.bg == b.bg && a.attrs == b.attrs;
}

static char *read_text(const char *path)
{
    static char text[8192];
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

/* "\nKEY " or "\nKEY=" at the start of a line: the file sets the key. */
static bool file_sets_key(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = text; (p = strstr(p, key)); p += n)
        if ((p == text || p[-1] == '\n') && (p[n] == ' ' || p[n] == '=' || p[n] == '\t'))
            return true;
    return false;
}

/* Text must not vanish into its background once colours are cut to 256. */
static void assert_legible_256(const theme_t *t, theme_elem e)
{
    const theme_style *s = &t->style[e];
    if (s->fg != VT_COLOR_DEFAULT && s->bg != VT_COLOR_DEFAULT && theme_nearest_256(s->fg) == theme_nearest_256(s->bg))
        fail_msg("%s: %s has the same fg and bg in 256 colours", t->name, theme_elem_key(e));
}

static void shipped_themes_load_and_show_selection(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_SHIPPED; i++) {
        char path[600], err[1024] = "";
        snprintf(path, sizeof path, "%s/%s.theme", themes_dir(), shipped[i]);
        theme_t t;
        if (theme_load_file(&t, path, err, sizeof err) != 0)
            fail_msg("%s", err);
        assert_string_equal(t.name, shipped[i]);
        assert_string_equal(t.path, path);
        assert_false(same_style(t.style[TH_SIDEBAR], t.style[TH_SIDEBAR_SELECTED]));
        /* The selection still shows on a 256-colour terminal. */
        theme_style a = t.style[TH_SIDEBAR], b = t.style[TH_SIDEBAR_SELECTED];
        assert_true(theme_nearest_256(a.bg) != theme_nearest_256(b.bg) || a.attrs != b.attrs);
        const char *text = read_text(path);
        for (int e = 0; e < TH_COUNT; e++) {
            if (!file_sets_key(text, theme_elem_key((theme_elem)e)))
                fail_msg("%s does not set %s", path, theme_elem_key((theme_elem)e));
            assert_legible_256(&t, (theme_elem)e);
        }
    }
}

static void mono_has_no_colours(void **state)
{
    (void)state;
    char path[600], err[1024];
    snprintf(path, sizeof path, "%s/mono.theme", themes_dir());
    theme_t t;
    assert_int_equal(theme_load_file(&t, path, err, sizeof err), 0);
    assert_true(t.mono);
    for (int e = 0; e < TH_COUNT; e++) {
        assert_int_equal(t.style[e].fg, VT_COLOR_DEFAULT);
        assert_int_equal(t.style[e].bg, VT_COLOR_DEFAULT);
    }
    assert_true(t.style[TH_SIDEBAR_SELECTED].attrs & VT_ATTR_REVERSE);
    assert_true(t.style[TH_STATUS].attrs & VT_ATTR_REVERSE);
}

static void builtin_matches_default_file(void **state)
{
    (void)state;
    char path[600], err[1024];
    snprintf(path, sizeof path, "%s/default.theme", themes_dir());
    theme_t file, builtin;
    assert_int_equal(theme_load_file(&file, path, err, sizeof err), 0);
    theme_builtin_default(&builtin);
    assert_string_equal(builtin.path, THEME_BUILTIN_PATH);
    assert_false(builtin.mono);
    for (int e = 0; e < TH_COUNT; e++)
        if (!same_style(file.style[e], builtin.style[e]))
            fail_msg("default.theme and the built-in default differ on %s", theme_elem_key((theme_elem)e));
}

static void elem_keys(void **state)
{
    (void)state;
    assert_string_equal(theme_elem_key(TH_NORMAL), "normal");
    assert_string_equal(theme_elem_key(TH_SIDEBAR_SELECTED), "sidebar-selected");
    assert_string_equal(theme_elem_key(TH_STATE_EXIT_FAIL), "state-exit-fail");
    assert_string_equal(theme_elem_key(TH_BELL), "bell");
    assert_null(theme_elem_key(TH_COUNT));
}

/* Loading text as a theme fails with exactly FILE:suffix. */
static void expect_error(const char *text, const char *suffix)
{
    const char *p = write_file("bad.theme", text);
    theme_t t;
    char err[1024], want[1024];
    assert_int_equal(theme_load_file(&t, p, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:%s", p, suffix);
    assert_string_equal(err, want);
}

static void unknown_keys_and_sections(void **state)
{
    (void)state;
    expect_error("# x\n[theme]\nname = x\n\n[colors]\nnormal = default\nfrobnicate = red\n",
                 "7: unknown key 'frobnicate' in [colors] (known: normal, sidebar, sidebar-selected, "
                 "sidebar-group, status, status-key, mode-supervisor, mode-pane, border, border-focus, "
                 "dialog, dialog-title, dialog-selected, state-running, state-waiting, state-idle, "
                 "state-exit-ok, state-exit-fail, profile-full, search-match, search-current, bell, "
                 "remote-host)");
    expect_error("[theme]\ncolour = red\n", "2: unknown key 'colour' in [theme] (known: name, inherit, mono)");
    expect_error("[colours]\nstatus = red\n", "2: unknown section [colours] (known: [theme], [colors])");
    expect_error("[colors \"x\"]\nstatus = red\n", "2: unknown section [colors \"x\"] (known: [theme], [colors])");
    expect_error("[theme]\nname = a/b\n",
                 "2: name: 'a/b' is not a theme name (letters, digits, '.', '-', '_'; at most 63)");
}

static void bad_colours(void **state)
{
    (void)state;
    expect_error("[theme]\nname = x\n\n[colors]\nnormal = default\n\nstatus = purpel on black\n",
                 "7: unknown colour 'purpel' for key 'status': use default, a colour name "
                 "(black, red, ..., bright-white), 0-255 or #rrggbb");
    expect_error("[colors]\nstatus = white on 256\n", "2: colour '256' for key 'status' is out of range: use 0-255");
    expect_error("[colors]\nstatus = color300\n", "2: colour 'color300' for key 'status' is out of range: use 0-255");
    expect_error("[colors]\nstatus = 0001\n", "2: colour '0001' for key 'status' is out of range: use 0-255");
    expect_error("[colors]\nbell = #12345\n", "2: bad colour '#12345' for key 'bell': write #rrggbb with six hex digits");
    expect_error("[colors]\nbell = #12345g\n", "2: bad colour '#12345g' for key 'bell': write #rrggbb with six hex "
                                               "digits (a comment needs a blank after '#')");
    expect_error("[colors]\nbell = red #comment\n", "2: bad colour '#comment' for key 'bell': write #rrggbb with "
                                                    "six hex digits (a comment needs a blank after '#')");
    expect_error("[colors]\nbell = -1\n", "2: unknown colour '-1' for key 'bell': use default, a colour name "
                                          "(black, red, ..., bright-white), 0-255 or #rrggbb");
}

static void bad_attributes_and_shapes(void **state)
{
    (void)state;
    expect_error("[colors]\nstatus = black on white blod\n",
                 "2: unknown attribute 'blod' for key 'status': use bold, dim, italic, underline, blink or reverse");
    expect_error("[colors]\nstatus = bold\n",
                 "2: 'bold' for key 'status' is an attribute, not a colour: a style starts with the foreground "
                 "colour (e.g. 'default bold')");
    expect_error("[colors]\nstatus = red on\n", "2: 'on' needs a background colour after it for key 'status'");
    expect_error("[colors]\nstatus = on red\n",
                 "2: incomplete style for key 'status': a style starts with the foreground colour, as in "
                 "FG [on BG] [ATTR...] (e.g. 'default on blue bold')");
    expect_error("[colors]\nstatus = \"\"\n",
                 "2: empty style for key 'status': a style starts with the foreground colour, as in "
                 "FG [on BG] [ATTR...] (e.g. 'default on blue bold')");
    expect_error("[colors]\nstatus = red on blue green\n",
                 "2: 'green' for key 'status': only attributes (bold, dim, italic, underline, blink or reverse) "
                 "may follow FG [on BG]");
    expect_error("[colors]\nstatus = red on blue on green\n",
                 "2: 'on' appears twice for key 'status': a style is FG [on BG] [ATTR...]");
}

static void order_and_mono_rules(void **state)
{
    (void)state;
    expect_error("[colors]\nstatus = red\n[theme]\ninherit = default\n",
                 "4: 'inherit' must come before the [colors] keys (it would undo them)");
    expect_error("[colors]\nstatus = red\n[theme]\nmono = true\n", "4: 'mono' must come before the [colors] keys");
    expect_error("[theme]\nmono = maybe\n", "2: mono: 'maybe' is not true or false");
    expect_error("[theme]\nmono = true\n[colors]\nstatus = default reverse\nbell = red bold\n",
                 "5: 'red bold' for key 'bell': this is a mono theme (mono = true), so every colour must be "
                 "'default'; tell elements apart by attributes");
}

static void style_syntax(void **state)
{
    (void)state;
    theme_style s;
    char err[512];
    assert_int_equal(theme_parse_style("grey", NULL, &s, err, sizeof err), 0);
    assert_int_equal(s.fg, VT_COLOR_INDEXED(8));
    assert_int_equal(s.bg, VT_COLOR_DEFAULT);
    assert_int_equal(s.attrs, 0);
    assert_int_equal(theme_parse_style("Gray on color0", NULL, &s, err, sizeof err), 0);
    assert_int_equal(s.fg, VT_COLOR_INDEXED(8));
    assert_int_equal(s.bg, VT_COLOR_INDEXED(0));
    assert_int_equal(theme_parse_style("colour255 on 17\tbold  underline reverse", "k", &s, err, sizeof err), 0);
    assert_int_equal(s.fg, VT_COLOR_INDEXED(255));
    assert_int_equal(s.bg, VT_COLOR_INDEXED(17));
    assert_int_equal(s.attrs, VT_ATTR_BOLD | VT_ATTR_UNDERLINE | VT_ATTR_REVERSE);
    assert_int_equal(theme_parse_style("#FABD2F on bright-white dim italic blink", NULL, &s, err, sizeof err), 0);
    assert_int_equal(s.fg, VT_COLOR_RGB(0xfa, 0xbd, 0x2f));
    assert_int_equal(s.bg, VT_COLOR_INDEXED(15));
    assert_int_equal(s.attrs, VT_ATTR_DIM | VT_ATTR_ITALIC | VT_ATTR_BLINK);
    assert_int_equal(theme_parse_style("default on default", NULL, &s, err, sizeof err), 0);
    assert_int_equal(s.fg, VT_COLOR_DEFAULT);
    assert_int_equal(s.bg, VT_COLOR_DEFAULT);
    /* Without a key the message has no "for key". */
    assert_int_equal(theme_parse_style("purple", NULL, &s, err, sizeof err), -1);
    assert_string_equal(err, "unknown colour 'purple': use default, a colour name (black, red, ..., bright-white), "
                             "0-255 or #rrggbb");
}

/* '#' followed by a hex digit is a colour; any other '#', and ';', start a
 * comment, and line numbers still count the user's lines. */
static void comments_and_hex_colours(void **state)
{
    (void)state;
    const char *p = write_file("hex.theme", "# a comment\n[theme] # here too\n  name = hex # the name\n"
                                            "[colors]\nstatus = #FABD2F on #282828 bold # the bar\n"
                                            "bell = red;comment\nborder = \"#00ff00\" ; quoted\n"
                                            "dialog = blue # comment\n");
    theme_t t;
    char err[1024], want[1024];
    if (theme_load_file(&t, p, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_string_equal(t.name, "hex");
    assert_int_equal(t.style[TH_STATUS].fg, VT_COLOR_RGB(0xfa, 0xbd, 0x2f));
    assert_int_equal(t.style[TH_STATUS].bg, VT_COLOR_RGB(0x28, 0x28, 0x28));
    assert_int_equal(t.style[TH_STATUS].attrs, VT_ATTR_BOLD);
    assert_int_equal(t.style[TH_BELL].fg, VT_COLOR_INDEXED(1));
    assert_int_equal(t.style[TH_BORDER].fg, VT_COLOR_RGB(0, 0xff, 0));
    assert_int_equal(t.style[TH_DIALOG].fg, VT_COLOR_INDEXED(4));
    assert_int_equal(t.style[TH_DIALOG].attrs, 0);

    p = write_file("hexbad.theme", "[colors]\nstatus = #fabd2f on #282828 # ok\n\"quoted\" = 1\n");
    assert_int_equal(theme_load_file(&t, p, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:3: bad key name (letters, digits, '-' and '_', starting with a letter)", p);
    assert_string_equal(err, want);
    expect_error("[colors]\nstatus = #fabd2f\nbell = #fabd2f on #12\n",
                 "3: bad colour '#12' for key 'bell': write #rrggbb with six hex digits");
    /* Quotes and backslashes in an unquoted value stay as written. */
    expect_error("[colors]\nbell = red \"x\\y\n",
                 "2: unknown attribute '\"x\\y' for key 'bell': use bold, dim, italic, underline, blink or reverse");
}

/* docs/themes.md: sidebar-selected must differ from sidebar.  A theme where
 * they look the same does not load; the error names the line that set
 * sidebar-selected, else sidebar, else the inherit that brought them. */
static void selection_must_show(void **state)
{
    (void)state;
    static const char fix[] = ": sidebar-selected looks the same as sidebar%s, so the selected session would not "
                              "show: give sidebar-selected another colour, or add bold, underline or reverse to it "
                              "(dim, italic and blink are not drawn everywhere)";
    char suffix[600];
    snprintf(suffix, sizeof suffix, fix, "");
    char want[700];
    snprintf(want, sizeof want, "4%s", suffix);
    expect_error("[colors]\nsidebar = white on blue bold\n# the same\nsidebar-selected = white on blue bold\n", want);
    snprintf(want, sizeof want, "2%s", suffix);
    expect_error("[colors]\nsidebar = bright-white on blue bold\n", want); /* the built-in selected style */
    /* Only dim or italic apart: not seen everywhere. */
    snprintf(want, sizeof want, "3%s", suffix);
    expect_error("[colors]\nsidebar = default\nsidebar-selected = default italic dim\n", want);
    /* Made the same by the theme it inherits. */
    write_file("same.theme", "[theme]\nmono = true\n[colors]\nsidebar = default bold\n"
                             "sidebar-selected = default reverse\n");
    write_file("flat.theme", "[theme]\ninherit = ./same.theme\n[colors]\nsidebar-selected = default bold\n");
    const char *kid = write_file("kid.theme", "# only inherits\n[theme]\ninherit = ./flat.theme\n");
    theme_t t;
    char err[1024];
    assert_int_equal(theme_load_file(&t, kid, err, sizeof err), -1);
    snprintf(suffix, sizeof suffix, fix, " in the theme this one inherits");
    snprintf(want, sizeof want, "%s:3%s", kid, suffix);
    assert_string_equal(err, want);
    /* Apart by underline only: that shows; a base may be alike if its child fixes it. */
    const char *ok = write_file("ok.theme", "[theme]\ninherit = ./flat.theme\n[colors]\n"
                                            "sidebar-selected = default bold underline\n");
    assert_int_equal(theme_load_file(&t, ok, err, sizeof err), 0);
    assert_true(theme_styles_differ(t.style[TH_SIDEBAR_SELECTED], t.style[TH_SIDEBAR]));
    theme_style a = {VT_COLOR_INDEXED(1), VT_COLOR_DEFAULT, 0}, b = a;
    assert_false(theme_styles_differ(a, b));
    b.attrs = VT_ATTR_BLINK;
    assert_false(theme_styles_differ(a, b));
    b.attrs = VT_ATTR_REVERSE;
    assert_true(theme_styles_differ(a, b));
    b = a;
    b.bg = VT_COLOR_RGB(0, 0, 1);
    assert_true(theme_styles_differ(a, b));
}

static void unset_keys_keep_the_base(void **state)
{
    (void)state;
    const char *p = write_file("partial.theme", "[colors]\nstatus = red on black underline\n");
    theme_t t, def;
    char err[1024];
    assert_int_equal(theme_load_file(&t, p, err, sizeof err), 0);
    theme_builtin_default(&def);
    assert_string_equal(t.name, "partial");
    assert_int_equal(t.style[TH_STATUS].fg, VT_COLOR_INDEXED(1));
    assert_int_equal(t.style[TH_STATUS].bg, VT_COLOR_INDEXED(0));
    assert_int_equal(t.style[TH_STATUS].attrs, VT_ATTR_UNDERLINE);
    assert_true(same_style(t.style[TH_SIDEBAR_SELECTED], def.style[TH_SIDEBAR_SELECTED]));
}

static void inherit_by_path_and_name(void **state)
{
    (void)state;
    theme_t t, gruv;
    char err[1024], path[600];
    write_file("base.theme", "[colors]\nstatus = red on blue\nbell = green\n");
    const char *p = write_file("child.theme", "[theme]\ninherit = ./base.theme\n[colors]\nbell = yellow bold\n");
    assert_int_equal(theme_load_file(&t, p, err, sizeof err), 0);
    assert_string_equal(t.name, "child");
    assert_string_equal(t.path, p);
    assert_int_equal(t.style[TH_STATUS].fg, VT_COLOR_INDEXED(1));
    assert_int_equal(t.style[TH_STATUS].bg, VT_COLOR_INDEXED(4));
    assert_int_equal(t.style[TH_BELL].fg, VT_COLOR_INDEXED(3));
    assert_int_equal(t.style[TH_BELL].attrs, VT_ATTR_BOLD);

    /* By name: a shipped theme as the base; unset keys are gruvbox's. */
    p = write_file("warm.theme", "[theme]\nname = warm\ninherit = gruvbox\n[colors]\nbell = red\n");
    assert_int_equal(theme_load_file(&t, p, err, sizeof err), 0);
    assert_int_equal(theme_load(&gruv, "gruvbox", err, sizeof err), 0);
    assert_string_equal(t.name, "warm");
    assert_true(same_style(t.style[TH_NORMAL], gruv.style[TH_NORMAL]));
    assert_true(same_style(t.style[TH_SIDEBAR_SELECTED], gruv.style[TH_SIDEBAR_SELECTED]));
    assert_int_equal(t.style[TH_BELL].fg, VT_COLOR_INDEXED(1));

    /* mono = true before the inherit still holds. */
    p = write_file("mono-first.theme", "[theme]\nmono = true\ninherit = gruvbox\n");
    assert_int_equal(theme_load_file(&t, p, err, sizeof err), 0);
    assert_true(t.mono);
    assert_int_equal(t.style[TH_SIDEBAR_SELECTED].bg, VT_COLOR_DEFAULT);
    assert_int_equal(t.style[TH_SIDEBAR_SELECTED].attrs, gruv.style[TH_SIDEBAR_SELECTED].attrs);

    /* A mono base makes a mono theme: its colours are refused. */
    snprintf(path, sizeof path, "[theme]\ninherit = %s/mono.theme\n[colors]\nbell = red\n", themes_dir());
    p = write_file("mono-child.theme", path);
    assert_int_equal(theme_load_file(&t, p, err, sizeof err), -1);
    snprintf(path, sizeof path, "%s:4: 'red' for key 'bell': this is a mono theme (mono = true here or in its "
                                "base), so every colour must be 'default'; tell elements apart by attributes", p);
    assert_string_equal(err, path);
}

static void inherit_errors(void **state)
{
    (void)state;
    theme_t t;
    char err[1024], want[1024];
    /* A cycle through two files. */
    write_file("b.theme", "# b\n[theme]\ninherit = ./a.theme\n");
    const char *a = write_file("a.theme", "[theme]\ninherit = ./b.theme\n");
    assert_int_equal(theme_load_file(&t, a, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s/b.theme:3: inherit cycle: a.theme -> b.theme -> a.theme", dir);
    assert_string_equal(err, want);

    /* A theme inheriting itself by name, with no other file of that name. */
    const char *self = write_user_theme("selfish", "[theme]\ninherit = selfish\n");
    assert_int_equal(theme_load(&t, "selfish", err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:2: inherit cycle: selfish.theme -> selfish.theme", self);
    assert_string_equal(err, want);
    remove_user_theme("selfish");

    /* An error in the base is reported at the base's own line. */
    write_file("broken.theme", "[colors]\n\nstatus = nope\n");
    a = write_file("uses-broken.theme", "[theme]\ninherit = ./broken.theme\n");
    assert_int_equal(theme_load_file(&t, a, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s/broken.theme:3: unknown colour 'nope' for key 'status': use default, a colour "
                                "name (black, red, ..., bright-white), 0-255 or #rrggbb", dir);
    assert_string_equal(err, want);

    /* At most THEME_MAX_INHERIT links: d5 -> d4 -> ... -> d0 is one too many. */
    write_file("d0.theme", "[colors]\nbell = red\n");
    for (int i = 1; i <= THEME_MAX_INHERIT + 1; i++) {
        char name[32], text[64];
        snprintf(name, sizeof name, "d%d.theme", i);
        snprintf(text, sizeof text, "[theme]\ninherit = ./d%d.theme\n", i - 1);
        write_file(name, text);
    }
    snprintf(want, sizeof want, "%s/d%d.theme", dir, THEME_MAX_INHERIT);
    assert_int_equal(theme_load_file(&t, want, err, sizeof err), 0);
    assert_int_equal(t.style[TH_BELL].fg, VT_COLOR_INDEXED(1));
    snprintf(want, sizeof want, "%s/d%d.theme", dir, THEME_MAX_INHERIT + 1);
    assert_int_equal(theme_load_file(&t, want, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s/d1.theme:2: inherit: too deep (at most %d themes above this one)", dir,
             THEME_MAX_INHERIT);
    assert_string_equal(err, want);

    a = write_file("orphan.theme", "[theme]\ninherit = no-such-theme\n");
    assert_int_equal(theme_load_file(&t, a, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:2: inherit: unknown theme 'no-such-theme' (available: ", a);
    assert_memory_equal(err, want, strlen(want));
    assert_non_null(strstr(err, "gruvbox"));

    a = write_file("twice.theme", "[theme]\ninherit = default\ninherit = default\n");
    assert_int_equal(theme_load_file(&t, a, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:3: 'inherit' is given twice (a theme has one base)", a);
    assert_string_equal(err, want);
}

static void unknown_name_lists_places_and_themes(void **state)
{
    (void)state;
    theme_t t;
    char err[4096], want[1024];
    write_user_theme("my-own", "[colors]\nbell = red\n");
    assert_int_equal(theme_load(&t, "nosuch", err, sizeof err), -1);
    snprintf(want, sizeof want, "unknown theme 'nosuch': looked in %s, ", xdg_themes);
    assert_memory_equal(err, want, strlen(want));
    assert_non_null(strstr(err, CORRAL_DATADIR "/themes"));
    assert_non_null(strstr(err, CORRAL_SRC_THEMES));
    const char *avail = strstr(err, "; available: ");
    assert_non_null(avail);
    for (size_t i = 0; i < N_SHIPPED; i++)
        if (!strstr(avail, shipped[i]))
            fail_msg("'%s' missing from: %s", shipped[i], err);
    assert_non_null(strstr(avail, "my-own"));
    /* Sorted and each once, though default.theme is in two places. */
    assert_non_null(strstr(avail, "default, gruvbox, high-contrast, light, mono, my-own, solarized-dark"));
    remove_user_theme("my-own");

    assert_int_equal(theme_load(&t, "gruvbox.theme", err, sizeof err), -1);
    assert_non_null(strstr(err, "(for a file in this directory write ./NAME.theme)"));
    assert_int_equal(theme_load(&t, "", err, sizeof err), -1);
    assert_memory_equal(err, "unknown theme '':", 17);
}

static void user_theme_overrides_shipped(void **state)
{
    (void)state;
    theme_t t;
    char err[1024], path[600];
    /* Without a user file, the source tree's (or installed) gruvbox. */
    assert_int_equal(theme_load(&t, "gruvbox", err, sizeof err), 0);
    assert_string_equal(t.name, "gruvbox");
    assert_null(strstr(t.path, xdg_themes));

    const char *p = write_user_theme("gruvbox", "[theme]\nname = gruvbox\n[colors]\nstatus = red on black\n");
    assert_int_equal(theme_load(&t, "gruvbox", err, sizeof err), 0);
    assert_string_equal(t.path, p);
    assert_int_equal(t.style[TH_STATUS].fg, VT_COLOR_INDEXED(1));

    /* A user default.theme may build on the shipped default of the same name. */
    p = write_user_theme("default", "[theme]\ninherit = default\n[colors]\nbell = red\n");
    assert_int_equal(theme_load(&t, "default", err, sizeof err), 0);
    assert_string_equal(t.path, p);
    theme_t def;
    theme_builtin_default(&def);
    assert_int_equal(t.style[TH_BELL].fg, VT_COLOR_INDEXED(1));
    assert_true(same_style(t.style[TH_STATUS], def.style[TH_STATUS]));
    remove_user_theme("default");
    remove_user_theme("gruvbox");

    /* A name with '/' is a path. */
    snprintf(path, sizeof path, "%s/light.theme", themes_dir());
    assert_int_equal(theme_load(&t, path, err, sizeof err), 0);
    assert_string_equal(t.name, "light");
}

static void no_color(void **state)
{
    (void)state;
    unsetenv("NO_COLOR");
    assert_false(theme_no_color());
    setenv("NO_COLOR", "", 1);
    assert_false(theme_no_color());
    setenv("NO_COLOR", "1", 1);
    assert_true(theme_no_color());
    unsetenv("NO_COLOR");
}

static void styles_over_rows(void **state)
{
    (void)state;
    theme_t t;
    char err[1024], path[600];
    theme_builtin_default(&t);
    /* A glyph with a default background takes the selected row's. */
    theme_style s = theme_style_over(&t, TH_STATE_RUNNING, TH_SIDEBAR_SELECTED);
    assert_int_equal(s.fg, VT_COLOR_INDEXED(10));
    assert_int_equal(s.bg, VT_COLOR_INDEXED(4));
    assert_int_equal(s.attrs, VT_ATTR_BOLD);
    /* mono: reverse on a glyph flips the reversed selection back. */
    snprintf(path, sizeof path, "%s/mono.theme", themes_dir());
    assert_int_equal(theme_load_file(&t, path, err, sizeof err), 0);
    s = theme_style_over(&t, TH_STATE_WAITING, TH_SIDEBAR_SELECTED);
    assert_int_equal(s.attrs, VT_ATTR_BOLD);
    s = theme_style_over(&t, TH_STATE_WAITING, TH_SIDEBAR);
    assert_int_equal(s.attrs, VT_ATTR_BOLD | VT_ATTR_REVERSE);
    s = theme_style_over(&t, TH_STATUS_KEY, TH_STATUS);
    assert_int_equal(s.attrs, VT_ATTR_BOLD | VT_ATTR_REVERSE);
}

/* The reference: every cube and grey entry, the first of equals winning. */
static int brute_nearest_256(int r, int g, int b)
{
    int best = -1, best_d = 0;
    for (int i = 16; i < 256; i++) {
        int p[3];
        if (i < 232) {
            int v[3] = {(i - 16) / 36, (i - 16) / 6 % 6, (i - 16) % 6};
            for (int k = 0; k < 3; k++)
                p[k] = v[k] ? 55 + 40 * v[k] : 0;
        } else {
            p[0] = p[1] = p[2] = 8 + 10 * (i - 232);
        }
        int d = (r - p[0]) * (r - p[0]) + (g - p[1]) * (g - p[1]) + (b - p[2]) * (b - p[2]);
        if (best < 0 || d < best_d)
            best = i, best_d = d;
    }
    return best;
}

static void nearest_colours(void **state)
{
    (void)state;
    /* Exact cube points and greys, worked out by hand:
     * #000000 is cube 16 at distance 0 (grey 232 is 8,8,8);
     * #ff0000 is cube 16+36*5 = 196; #808080 is grey 232+(128-8)/10 = 244;
     * #ffffff is cube 231; #5f87af is levels 1,2,3: 16+36+12+3 = 67. */
    assert_int_equal(theme_nearest_256(VT_COLOR_RGB(0, 0, 0)), 16);
    assert_int_equal(theme_nearest_256(VT_COLOR_RGB(0xff, 0, 0)), 196);
    assert_int_equal(theme_nearest_256(VT_COLOR_RGB(0x80, 0x80, 0x80)), 244);
    assert_int_equal(theme_nearest_256(VT_COLOR_RGB(0xff, 0xff, 0xff)), 231);
    assert_int_equal(theme_nearest_256(VT_COLOR_RGB(0x5f, 0x87, 0xaf)), 67);
    assert_int_equal(theme_nearest_256(VT_COLOR_RGB(8, 8, 8)), 232);
    /* Solarized base03 #002b36: grey 28 (distance 1685) beats cube 17
     * (0,0,95: distance 3530). */
    assert_int_equal(theme_nearest_256(VT_COLOR_RGB(0x00, 0x2b, 0x36)), 234);
    assert_int_equal(theme_nearest_256(VT_COLOR_INDEXED(42)), 42);
    assert_int_equal(theme_nearest_256(VT_COLOR_DEFAULT), -1);
    /* Agrees with a search of the whole palette. */
    for (int r = 0; r < 256; r += 15)
        for (int g = 0; g < 256; g += 15)
            for (int b = 0; b < 256; b += 15)
                if (theme_nearest_256(VT_COLOR_RGB(r, g, b)) != brute_nearest_256(r, g, b))
                    fail_msg("nearest_256(%d,%d,%d) = %d, want %d", r, g, b,
                             theme_nearest_256(VT_COLOR_RGB(r, g, b)), brute_nearest_256(r, g, b));

    assert_int_equal(theme_nearest_16(VT_COLOR_RGB(0xff, 0, 0)), 9);
    assert_int_equal(theme_nearest_16(VT_COLOR_RGB(0xcd, 0, 0)), 1);
    assert_int_equal(theme_nearest_16(VT_COLOR_INDEXED(236)), 0);
    assert_int_equal(theme_nearest_16(VT_COLOR_INDEXED(250)), 7);
    assert_int_equal(theme_nearest_16(VT_COLOR_INDEXED(5)), 5);
    assert_int_equal(theme_nearest_16(VT_COLOR_DEFAULT), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shipped_themes_load_and_show_selection),
        cmocka_unit_test(mono_has_no_colours),
        cmocka_unit_test(builtin_matches_default_file),
        cmocka_unit_test(elem_keys),
        cmocka_unit_test(unknown_keys_and_sections),
        cmocka_unit_test(bad_colours),
        cmocka_unit_test(bad_attributes_and_shapes),
        cmocka_unit_test(order_and_mono_rules),
        cmocka_unit_test(style_syntax),
        cmocka_unit_test(comments_and_hex_colours),
        cmocka_unit_test(selection_must_show),
        cmocka_unit_test(unset_keys_keep_the_base),
        cmocka_unit_test(inherit_by_path_and_name),
        cmocka_unit_test(inherit_errors),
        cmocka_unit_test(unknown_name_lists_places_and_themes),
        cmocka_unit_test(user_theme_overrides_shipped),
        cmocka_unit_test(no_color),
        cmocka_unit_test(styles_over_rows),
        cmocka_unit_test(nearest_colours),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
