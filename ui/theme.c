/*
 * theme.c - theme files: the search path, inheriting, loading, and how an
 * element's style sits over its row (parsing styles and reducing colours
 * are in theme_colour.c).
 *
 * A theme file is read in one pass with the INI reader.  [theme] keys
 * (inherit, mono) must come before the colours, so inheriting loads the base
 * into the theme right away and every later key simply overrides it; errors
 * keep the reader's exact FILE:LINE.  The reader takes any '#' for a comment,
 * so values are quoted first where a '#' starts a colour (quote_values).
 */
#include "config.h"

#include "theme.h"
#include "config/conf.h"
#include "base/ini.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CORRAL_DATADIR
#define CORRAL_DATADIR "/usr/local/share/corral"
#endif

/* ---- element keys and the built-in default ------------------------------ */

static const char *const elem_keys[TH_COUNT] = {
    [TH_NORMAL] = "normal",
    [TH_SIDEBAR] = "sidebar",
    [TH_SIDEBAR_SELECTED] = "sidebar-selected",
    [TH_SIDEBAR_GROUP] = "sidebar-group",
    [TH_STATUS] = "status",
    [TH_STATUS_KEY] = "status-key",
    [TH_MODE_SUPERVISOR] = "mode-supervisor",
    [TH_MODE_PANE] = "mode-pane",
    [TH_BORDER] = "border",
    [TH_BORDER_FOCUS] = "border-focus",
    [TH_DIALOG] = "dialog",
    [TH_DIALOG_TITLE] = "dialog-title",
    [TH_DIALOG_SELECTED] = "dialog-selected",
    [TH_STATE_RUNNING] = "state-running",
    [TH_STATE_WAITING] = "state-waiting",
    [TH_STATE_IDLE] = "state-idle",
    [TH_STATE_EXIT_OK] = "state-exit-ok",
    [TH_STATE_EXIT_FAIL] = "state-exit-fail",
    [TH_PROFILE_FULL] = "profile-full",
    [TH_SEARCH_MATCH] = "search-match",
    [TH_SEARCH_CURRENT] = "search-current",
    [TH_BELL] = "bell",
    [TH_REMOTE_HOST] = "remote-host",
};

const char *theme_elem_key(theme_elem e)
{
    return (unsigned)e < TH_COUNT ? elem_keys[e] : NULL;
}

static int elem_from_key(const char *key)
{
    for (int i = 0; i < TH_COUNT; i++)
        if (strcmp(elem_keys[i], key) == 0)
            return i;
    return -1;
}

/* Shorthands for the table below: the 16 basic colours by index. */
enum { BLACK, RED, GREEN, YELLOW, BLUE, MAGENTA, CYAN, WHITE, BR_BLACK, BR_RED, BR_GREEN,
       BR_YELLOW, BR_BLUE, BR_MAGENTA, BR_CYAN, BR_WHITE };
#define C(i) VT_COLOR_INDEXED(i)
#define DEF VT_COLOR_DEFAULT
#define BOLD VT_ATTR_BOLD

/* Must match themes/default.theme (a unit test compares them).  Only the 16
 * basic colours, so it looks the same on an 8-colour terminal. */
static const theme_style builtin_default[TH_COUNT] = {
    [TH_NORMAL] = {DEF, DEF, 0},
    [TH_SIDEBAR] = {DEF, DEF, 0},
    [TH_SIDEBAR_SELECTED] = {C(BR_WHITE), C(BLUE), BOLD},
    [TH_SIDEBAR_GROUP] = {C(CYAN), DEF, BOLD},
    [TH_STATUS] = {C(BLACK), C(WHITE), 0},
    [TH_STATUS_KEY] = {C(BLUE), C(WHITE), BOLD},
    [TH_MODE_SUPERVISOR] = {C(BLACK), C(YELLOW), BOLD},
    [TH_MODE_PANE] = {C(BLACK), C(GREEN), BOLD},
    [TH_BORDER] = {C(WHITE), DEF, 0},
    [TH_BORDER_FOCUS] = {C(BR_CYAN), DEF, BOLD},
    [TH_DIALOG] = {C(BLACK), C(WHITE), 0},
    [TH_DIALOG_TITLE] = {C(BLUE), C(WHITE), BOLD},
    [TH_DIALOG_SELECTED] = {C(BR_WHITE), C(BLUE), BOLD},
    [TH_STATE_RUNNING] = {C(BR_GREEN), DEF, BOLD},
    [TH_STATE_WAITING] = {C(BR_YELLOW), DEF, BOLD},
    [TH_STATE_IDLE] = {C(WHITE), DEF, 0},
    [TH_STATE_EXIT_OK] = {C(GREEN), DEF, 0},
    [TH_STATE_EXIT_FAIL] = {C(BR_RED), DEF, BOLD},
    [TH_PROFILE_FULL] = {C(BR_WHITE), C(RED), BOLD},
    [TH_SEARCH_MATCH] = {C(BLACK), C(YELLOW), 0},
    [TH_SEARCH_CURRENT] = {C(BLACK), C(BR_CYAN), BOLD},
    [TH_BELL] = {C(BR_YELLOW), DEF, BOLD},
    [TH_REMOTE_HOST] = {C(RED), C(WHITE), BOLD},
};

void theme_builtin_default(theme_t *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "default");
    snprintf(t->path, sizeof t->path, "%s", THEME_BUILTIN_PATH);
    memcpy(t->style, builtin_default, sizeof t->style);
    t->mono = false;
}

bool theme_no_color(void)
{
    const char *v = getenv("NO_COLOR");
    return v && v[0] != '\0';
}

/* ---- where themes live -------------------------------------------------- */

#define N_DIRS 3

/* The user's theme dir, as paths_config_dir() finds the config dir: an
 * absolute XDG_CONFIG_HOME, else ~/.config.  Empty when there is no home. */
static void user_theme_dir(char *out, size_t len)
{
    const char *xdg = getenv("XDG_CONFIG_HOME");
    if (xdg && xdg[0] == '/') {
        snprintf(out, len, "%s/corral/themes", xdg);
        return;
    }
    const char *home = getenv("HOME");
    if (!home || home[0] != '/') {
        struct passwd *pw = getpwuid(getuid());
        home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
    }
    if (home)
        snprintf(out, len, "%s/.config/corral/themes", home);
    else
        out[0] = '\0';
}

/* The directories searched for a theme name, in order; an entry may be empty. */
static void search_dirs(char dirs[N_DIRS][PATH_MAX])
{
    user_theme_dir(dirs[0], PATH_MAX);
    snprintf(dirs[1], PATH_MAX, "%s/themes", CORRAL_DATADIR);
#ifdef CORRAL_SRC_THEMES
    snprintf(dirs[2], PATH_MAX, "%s", CORRAL_SRC_THEMES);
#else
    dirs[2][0] = '\0';
#endif
}

/* Theme names are file names without ".theme": letters, digits, '.', '-',
 * '_', starting with a letter or digit, so a name can never leave its dir. */
static bool valid_theme_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof ((theme_t *)0)->name)
        return false;
    if (!(s[0] >= 'a' && s[0] <= 'z') && !(s[0] >= 'A' && s[0] <= 'Z') && !(s[0] >= '0' && s[0] <= '9'))
        return false;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static bool is_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* DIR/NAME.theme into out if it fits and is a file: a cut path must never
 * name some other file. */
static bool theme_file_in(const char *dir, const char *name, char *out, size_t len)
{
    int n = snprintf(out, len, "%s/%s.theme", dir, name);
    return dir[0] && n > 0 && (size_t)n < len && is_regular_file(out);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

#define MAX_LISTED 64

/* "a, b, c": the theme names found in dirs, sorted, each once. */
static void list_available(char dirs[N_DIRS][PATH_MAX], char *out, size_t len)
{
    char *names[MAX_LISTED];
    int n = 0;
    for (int d = 0; d < N_DIRS; d++) {
        DIR *dir = dirs[d][0] ? opendir(dirs[d]) : NULL;
        for (struct dirent *e; dir && n < MAX_LISTED && (e = readdir(dir));) {
            size_t l = strlen(e->d_name);
            if (l <= 6 || strcmp(e->d_name + l - 6, ".theme") != 0)
                continue;
            char *name = strndup(e->d_name, l - 6);
            if (name && valid_theme_name(name))
                names[n++] = name;
            else
                free(name);
        }
        if (dir)
            closedir(dir);
    }
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        if ((i == 0 || strcmp(names[i], names[i - 1]) != 0) && used < len)
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "", names[i]);
    for (int i = 0; i < n; i++)
        free(names[i]);
    if (n == 0)
        snprintf(out, len, "none (only the built-in default)");
}

/* ---- loading ------------------------------------------------------------ */

/* The files being loaded, from the theme asked for down to the current
 * base, by real path: inheriting a file already on it is a cycle. */
typedef struct chain {
    char path[THEME_MAX_INHERIT + 1][PATH_MAX];
    int n;
} chain;

typedef struct load_ctx {
    theme_t *t;
    const char *path;
    chain *ch;
    bool inherited;    /* an inherit key was read */
    bool colours_seen; /* a [colors] key was read: [theme] keys may not follow */
    int mono;          /* -1, or this file's own mono = 0/1, which beats the base's */
    char nested[1024]; /* the error of an inherited file, reported as it is */
} load_ctx;

static bool on_chain(const chain *ch, const char *path)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        snprintf(real, sizeof real, "%s", path);
    for (int i = 0; i < ch->n; i++)
        if (strcmp(ch->path[i], real) == 0)
            return true;
    return false;
}

/* "a.theme -> b.theme -> a.theme": the chain by file name, then target. */
static void describe_cycle(const chain *ch, const char *target, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < ch->n && used < len; i++) {
        const char *slash = strrchr(ch->path[i], '/');
        used += (size_t)snprintf(out + used, len - used, "%s -> ", slash ? slash + 1 : ch->path[i]);
    }
    const char *slash = strrchr(target, '/');
    if (used < len)
        snprintf(out + used, len - used, "%s", slash ? slash + 1 : target);
}

/* Where `inherit = value` in from_path points.  A path is taken relative to
 * the inheriting file's directory.  A name is searched like theme_load(),
 * skipping files already being loaded, so ~/.config/corral/themes/default.theme
 * can say "inherit = default" and build on the shipped default.  *out = ""
 * means the built-in default.  0, or -1 with err set. */
static int resolve_inherit(const char *value, const char *from_path, const chain *ch, char *out,
                           size_t len, char *err, size_t errlen)
{
    char cyc[512];
    if (strchr(value, '/')) {
        const char *slash = strrchr(from_path, '/');
        while (value[0] == '.' && value[1] == '/') /* "./base.theme": the same file, a tidier name */
            value += 2;
        int n = value[0] == '/' || !slash
                    ? snprintf(out, len, "%s", value)
                    : snprintf(out, len, "%.*s/%s", (int)(slash - from_path), from_path, value);
        if (n < 0 || (size_t)n >= len) {
            snprintf(err, errlen, "inherit: the path is too long");
            return -1;
        }
        if (!on_chain(ch, out))
            return 0;
        describe_cycle(ch, out, cyc, sizeof cyc);
        snprintf(err, errlen, "inherit cycle: %s", cyc);
        return -1;
    }
    if (!valid_theme_name(value)) {
        snprintf(err, errlen, "inherit: '%s' is not a theme name (letters, digits, '.', '-', '_') or a path",
                 value);
        return -1;
    }
    char dirs[N_DIRS][PATH_MAX];
    search_dirs(dirs);
    bool looped = false; /* a candidate exists but is already being loaded */
    for (int d = 0; d < N_DIRS; d++) {
        if (!theme_file_in(dirs[d], value, out, len))
            continue;
        if (!on_chain(ch, out))
            return 0;
        looped = true;
    }
    if (looped) {
        snprintf(out, len, "%s.theme", value);
        describe_cycle(ch, out, cyc, sizeof cyc);
        snprintf(err, errlen, "inherit cycle: %s", cyc);
        return -1;
    }
    if (strcmp(value, "default") == 0) {
        out[0] = '\0';
        return 0;
    }
    char avail[300];
    list_available(dirs, avail, sizeof avail);
    snprintf(err, errlen, "inherit: unknown theme '%s' (available: %s)", value, avail);
    return -1;
}

/* mono = true drops every colour now, so keys the file leaves unset keep
 * only the base's attributes rather than its colours. */
static void set_mono(theme_t *t, bool mono)
{
    t->mono = mono;
    for (int i = 0; mono && i < TH_COUNT; i++)
        t->style[i].fg = t->style[i].bg = VT_COLOR_DEFAULT;
}

static int load_chain(theme_t *t, const char *path, chain *ch, char *err, size_t errlen);

/* inherit = NAME|PATH: load the base now; the keys that follow override it. */
static int key_inherit(load_ctx *c, const char *value, char *err, size_t errlen)
{
    if (c->colours_seen) {
        snprintf(err, errlen, "'inherit' must come before the [colors] keys (it would undo them)");
        return -1;
    }
    if (c->inherited) {
        snprintf(err, errlen, "'inherit' is given twice (a theme has one base)");
        return -1;
    }
    if (c->ch->n > THEME_MAX_INHERIT) {
        snprintf(err, errlen, "inherit: too deep (at most %d themes above this one)", THEME_MAX_INHERIT);
        return -1;
    }
    char target[PATH_MAX];
    if (resolve_inherit(value, c->path, c->ch, target, sizeof target, err, errlen) < 0)
        return -1;
    theme_t base;
    if (!target[0]) {
        theme_builtin_default(&base);
    } else if (load_chain(&base, target, c->ch, c->nested, sizeof c->nested) < 0) {
        snprintf(err, errlen, "cannot load inherited theme '%s'", value);
        return -1;
    }
    memcpy(c->t->style, base.style, sizeof base.style);
    set_mono(c->t, c->mono >= 0 ? c->mono : base.mono);
    c->inherited = true;
    return 0;
}

static int parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0)
            return *out = true, 0;
        if (strcasecmp(v, no[i]) == 0)
            return *out = false, 0;
    }
    return -1;
}

static int key_mono(load_ctx *c, const char *value, char *err, size_t errlen)
{
    bool mono;
    if (c->colours_seen) {
        snprintf(err, errlen, "'mono' must come before the [colors] keys");
        return -1;
    }
    if (parse_bool(value, &mono) < 0) {
        snprintf(err, errlen, "mono: '%s' is not true or false", value);
        return -1;
    }
    c->mono = mono;
    set_mono(c->t, mono);
    return 0;
}

static int theme_key(load_ctx *c, const char *key, const char *value, char *err, size_t errlen)
{
    if (strcmp(key, "name") == 0) {
        if (!valid_theme_name(value)) {
            snprintf(err, errlen, "name: '%s' is not a theme name (letters, digits, '.', '-', '_'; "
                     "at most %zu)", value, sizeof c->t->name - 1);
            return -1;
        }
        snprintf(c->t->name, sizeof c->t->name, "%s", value);
        return 0;
    }
    if (strcmp(key, "inherit") == 0)
        return key_inherit(c, value, err, errlen);
    if (strcmp(key, "mono") == 0)
        return key_mono(c, value, err, errlen);
    snprintf(err, errlen, "unknown key '%s' in [theme] (known: name, inherit, mono)", key);
    return -1;
}

static int colour_key(load_ctx *c, const char *key, const char *value, char *err, size_t errlen)
{
    int e = elem_from_key(key);
    if (e < 0) {
        char known[400];
        size_t used = 0;
        for (int i = 0; i < TH_COUNT && used < sizeof known; i++)
            used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", elem_keys[i]);
        snprintf(err, errlen, "unknown key '%s' in [colors] (known: %s)", key, known);
        return -1;
    }
    theme_style s;
    if (theme_parse_style(value, key, &s, err, errlen) < 0)
        return -1;
    if (c->t->mono && (s.fg != VT_COLOR_DEFAULT || s.bg != VT_COLOR_DEFAULT)) {
        snprintf(err, errlen, "'%s' for key '%s': this is a mono theme (mono = true%s), so every "
                 "colour must be 'default'; tell elements apart by attributes", value, key,
                 c->inherited ? " here or in its base" : "");
        return -1;
    }
    c->t->style[e] = s;
    c->colours_seen = true;
    return 0;
}

static int on_key(void *user, const char *section, const char *sub, const char *key, const char *value,
                  char *err, size_t errlen)
{
    load_ctx *c = user;
    if (sub) {
        snprintf(err, errlen, "unknown section [%s \"%s\"] (known: [theme], [colors])", section, sub);
        return -1;
    }
    if (strcmp(section, "theme") == 0)
        return theme_key(c, key, value, err, errlen);
    if (strcmp(section, "colors") == 0)
        return colour_key(c, key, value, err, errlen);
    snprintf(err, errlen, "unknown section [%s] (known: [theme], [colors])", section);
    return -1;
}

#define THEME_FILE_MAX (256 * 1024)

/* A whole theme file as text (caller frees), or NULL with err set. */
static char *read_theme_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char *text = malloc(THEME_FILE_MAX + 1);
    size_t n = text ? fread(text, 1, THEME_FILE_MAX + 1, f) : 0;
    const char *why = !text ? "out of memory" : ferror(f) ? "read error" : NULL;
    fclose(f);
    if (!why && n > THEME_FILE_MAX)
        why = "file is larger than 256 KiB (not a theme?)";
    if (!why && memchr(text, '\0', n))
        why = "file contains a NUL byte (not a text file?)";
    if (why) {
        snprintf(err, errlen, "%s: %s", path, why);
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

/* Where an unquoted value starting at v ends: at ';', or at a '#' followed
 * by a blank or the end of the line ("# comment"), less trailing blanks.  A
 * '#' followed by anything else is a colour word, so a typo such as
 * "#comment" is reported as a bad colour rather than silently dropped. */
static const char *value_end(const char *v, const char *eol)
{
    const char *e = v;
    while (e < eol && *e != ';' && !(*e == '#' && (e + 1 == eol || isspace((unsigned char)e[1]))))
        e++;
    while (e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
    return e;
}

/* Copy one line to out, as key = "value" when it is an unquoted key line
 * (the INI reader would cut "#rrggbb" as a comment); anything else is copied
 * as it is, for the reader to judge.  Returns the new end of out. */
static char *quote_line(const char *line, const char *eol, char *out)
{
    const char *p = line, *v, *e;
    while (p < eol && (*p == ' ' || *p == '\t'))
        p++;
    if (p < eol && isalpha((unsigned char)*p)) {
        while (p < eol && (isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.'))
            p++;
        while (p < eol && (*p == ' ' || *p == '\t'))
            p++;
    }
    if (p == line || p == eol || *p != '=')
        goto verbatim;
    for (v = p + 1; v < eol && (*v == ' ' || *v == '\t');)
        v++;
    if (v == eol || *v == '"' || (e = value_end(v, eol)) == v)
        goto verbatim;
    memcpy(out, line, (size_t)(v - line));
    out += v - line;
    *out++ = '"';
    for (const char *c = v; c < e; c++) {
        if (*c == '"' || *c == '\\')
            *out++ = '\\';
        *out++ = *c;
    }
    *out++ = '"';
    line = e;
verbatim:
    memcpy(out, line, (size_t)(eol - line));
    return out + (eol - line);
}

/* The text with every unquoted value quoted, line for line, so the reader's
 * FILE:LINE still points into the user's file.  Caller frees; NULL when out
 * of memory. */
static char *quote_values(const char *text)
{
    size_t len = strlen(text);
    char *out = malloc(3 * len + 3); /* each byte escaped at worst, plus quotes */
    if (!out)
        return NULL;
    char *o = out;
    for (const char *line = text, *eol; *line; line = *eol ? eol + 1 : eol) {
        eol = strchr(line, '\n');
        eol = eol ? eol : line + strlen(line);
        o = quote_line(line, eol, o);
        if (*eol)
            *o++ = '\n';
    }
    *o = '\0';
    return out;
}

static int parse_theme_file(const char *path, load_ctx *c, char *err, size_t errlen)
{
    char *text = read_theme_file(path, err, errlen);
    if (!text)
        return -1;
    char *quoted = quote_values(text);
    free(text);
    if (!quoted) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int rc = ini_parse(path, quoted, on_key, c, err, errlen);
    free(quoted);
    return rc;
}

/* The file's name without directory and ".theme": its name until [theme]
 * name says otherwise. */
static void name_from_path(const char *path, char *out, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 6 && strcmp(base + n - 6, ".theme") == 0)
        n -= 6;
    snprintf(out, len, "%.*s", (int)(n < len - 1 ? n : len - 1), base);
}

/* Load path with ch holding the themes that inherit from it. */
static int load_chain(theme_t *t, const char *path, chain *ch, char *err, size_t errlen)
{
    theme_builtin_default(t);
    snprintf(t->path, sizeof t->path, "%s", path);
    name_from_path(path, t->name, sizeof t->name);
    if (!realpath(path, ch->path[ch->n]))
        snprintf(ch->path[ch->n], sizeof ch->path[0], "%s", path);
    ch->n++;
    load_ctx c = {.t = t, .path = path, .ch = ch, .mono = -1};
    int rc = parse_theme_file(path, &c, err, errlen);
    if (rc < 0 && c.nested[0]) /* the base's own FILE:LINE is the place to fix */
        snprintf(err, errlen, "%s", c.nested);
    ch->n--;
    return rc;
}

bool theme_styles_differ(theme_style a, theme_style b)
{
    /* dim, italic and blink are not drawn everywhere (docs/themes.md). */
    const unsigned shown = VT_ATTR_BOLD | VT_ATTR_UNDERLINE | VT_ATTR_REVERSE | VT_ATTR_STRIKE;
    return a.fg != b.fg || a.bg != b.bg || (a.attrs & shown) != (b.attrs & shown);
}

/* The selected sidebar row must stand out from the others, or nobody can
 * tell which session keys act on.  The error points at the line that set
 * sidebar-selected in this file, else sidebar, else its inherit. */
static int check_selection_shows(const theme_t *t, const char *path, char *err, size_t errlen)
{
    if (theme_styles_differ(t->style[TH_SIDEBAR_SELECTED], t->style[TH_SIDEBAR]))
        return 0;
    char *text = read_theme_file(path, err, errlen), *quoted = text ? quote_values(text) : NULL;
    free(text);
    int line = 0;
    const char *what = "sidebar-selected";
    if (quoted) {
        static const char *const keys[3][2] = {{"colors", "sidebar-selected"}, {"colors", "sidebar"},
                                                {"theme", "inherit"}};
        for (int i = 0; i < 3 && !line; i++)
            if ((line = conf_key_line(path, quoted, keys[i][0], keys[i][1])) > 0)
                what = keys[i][1];
    }
    free(quoted);
    char where[32] = "";
    if (line > 0)
        snprintf(where, sizeof where, ":%d", line);
    snprintf(err, errlen, "%s%s: sidebar-selected looks the same as sidebar%s, so the selected session would not "
             "show: give sidebar-selected another colour, or add bold, underline or reverse to it (dim, italic and "
             "blink are not drawn everywhere)", path, where,
             strcmp(what, "inherit") == 0 ? " in the theme this one inherits" : "");
    return -1;
}

int theme_load_file(theme_t *t, const char *path, char *err, size_t errlen)
{
    chain *ch = calloc(1, sizeof *ch);
    if (!ch) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int rc = load_chain(t, path, ch, err, errlen);
    free(ch);
    if (rc == 0)
        rc = check_selection_shows(t, path, err, errlen);
    return rc;
}

int theme_load(theme_t *t, const char *name, char *err, size_t errlen)
{
    if (strchr(name, '/'))
        return theme_load_file(t, name, err, errlen);
    char dirs[N_DIRS][PATH_MAX], path[PATH_MAX];
    search_dirs(dirs);
    if (valid_theme_name(name)) {
        for (int d = 0; d < N_DIRS; d++)
            if (theme_file_in(dirs[d], name, path, sizeof path))
                return theme_load_file(t, path, err, errlen);
        if (strcmp(name, "default") == 0) {
            theme_builtin_default(t);
            return 0;
        }
    }
    char avail[1024];
    list_available(dirs, avail, sizeof avail);
    snprintf(err, errlen, "unknown theme '%s': looked in %s, %s, %s; available: %s%s", name,
             dirs[0][0] ? dirs[0] : "(no home directory)", dirs[1], dirs[2][0] ? dirs[2] : "(no source tree)",
             avail, strstr(name, ".theme") ? " (for a file in this directory write ./NAME.theme)" : "");
    return -1;
}

/* ---- drawing helpers ---------------------------------------------------- */

theme_style theme_style_over(const theme_t *t, theme_elem e, theme_elem under)
{
    theme_style own = t->style[e], row = t->style[under], s = own;
    if (s.fg == VT_COLOR_DEFAULT)
        s.fg = row.fg;
    if (s.bg == VT_COLOR_DEFAULT)
        s.bg = row.bg;
    s.attrs = ((row.attrs | own.attrs) & ~VT_ATTR_REVERSE) | ((row.attrs ^ own.attrs) & VT_ATTR_REVERSE);
    return s;
}
