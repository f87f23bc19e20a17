/*
 * keyspec.c - key names, the action table with its default bindings, and
 * the [keys] settings.
 */
#include "config.h"

#include "config/keyspec.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Defaults (docs/corral.1, THE SUPERVISOR SCREEN), as tmux and less users expect: single
 * keys in supervisor focus, one reserved key (C-]) in pane focus, less-like
 * keys in scroll mode.  C-b, C-a, C-g and C-q are never defaults. */
static const key_action_info actions[KA_COUNT] = {
    [KA_UP] = {"up", KM_SUPERVISOR, "k Up", "select the session above (stops at the first)"},
    [KA_DOWN] = {"down", KM_SUPERVISOR, "j Down", "select the session below (stops at the last)"},
    [KA_FOCUS] = {"focus", KM_SUPERVISOR, "Enter", "focus the pane: keys go to the session"},
    [KA_ZOOM] = {"zoom", KM_SUPERVISOR, "z", "zoom the selected pane to the whole screen, or back"},
    [KA_LAYOUT] = {"layout", KM_SUPERVISOR, "t", "next layout: single, vertical split, horizontal split, grid"},
    [KA_NEW] = {"new", KM_SUPERVISOR, "n", "new session (asks name, directory, profile)"},
    [KA_KILL] = {"kill", KM_SUPERVISOR, "x", "kill the selected session (asks first)"},
    [KA_PIN] = {"pin", KM_SUPERVISOR, "p", "pin or unpin the selected session (never pruned)"},
    [KA_SEARCH] = {"search", KM_SUPERVISOR, "/", "search the selected pane's scrollback (the last query selected)"},
    [KA_SCROLL_UP] = {"scroll-up", KM_SUPERVISOR, "PgUp WheelUp", "scroll the selected pane back"},
    [KA_SCROLL_DOWN] = {"scroll-down", KM_SUPERVISOR, "PgDn WheelDown", "scroll the selected pane forward"},
    [KA_DETACH] = {"detach", KM_SUPERVISOR, "q", "detach: leave every session running"},
    [KA_STOP_SERVER] = {"stop-server", KM_SUPERVISOR, "Q", "stop the server and every session (asks first)"},
    [KA_HELP] = {"help", KM_SUPERVISOR, "?", "this help"},
    [KA_SUPERVISOR] = {"supervisor", KM_PANE, "C-]", "back to supervisor focus (twice: send the key itself)"},
    [KA_LINE_UP] = {"line-up", KM_SCROLL, "k Up WheelUp", "one line back"},
    [KA_LINE_DOWN] = {"line-down", KM_SCROLL, "j Down WheelDown", "one line forward"},
    [KA_PAGE_UP] = {"page-up", KM_SCROLL, "PgUp b", "one page back"},
    [KA_PAGE_DOWN] = {"page-down", KM_SCROLL, "PgDn Space", "one page forward"},
    [KA_TOP] = {"top", KM_SCROLL, "g Home", "oldest line"},
    [KA_BOTTOM] = {"bottom", KM_SCROLL, "G End", "newest line (scroll mode stays)"},
    [KA_SEARCH_NEXT] = {"search-next", KM_SCROLL, "n", "next match (older; past the oldest, from the newest)"},
    [KA_SEARCH_PREV] = {"search-prev", KM_SCROLL, "N", "previous match (newer; past the newest, from the oldest)"},
    [KA_SCROLL_SEARCH] = {"scroll-search", KM_SCROLL, "/", "search again"},
    [KA_SCROLL_EXIT] = {"scroll-exit", KM_SCROLL, "Esc q", "leave scroll mode"},
    /* K and X are bound in no mode but this one, so they act the same in
     * scroll mode (which passes on keys it does not bind); in scroll mode
     * Space stays page-down. */
    [KA_KEEP] = {"keep", KM_SUPERVISOR, "K", "keep the selected session in its tile (split, grid), or free the tile"},
    [KA_FOLD] = {"fold", KM_SUPERVISOR, "Space", "fold or unfold an agent's finished commands"},
    [KA_DIFF] = {"diff", KM_SUPERVISOR, "d", "the selected session's last command: what it changed (its diff)"},
    [KA_COMMANDS] = {"commands", KM_SUPERVISOR, "D", "the selected session's commands, with counts and risk marks"},
    [KA_TIMELINE] = {"timeline", KM_SUPERVISOR, "l", "the selected session's timeline: commands, approvals, hosts"},
    [KA_REPLAY] = {"replay", KM_SUPERVISOR, "r", "replay the selected session's recording in the pane area"},
    [KA_ENDED] = {"ended", KM_SUPERVISOR, "E", "show or hide ended sessions, also from before a restart"},
    [KA_CLEAR_EXITED] = {"clear-exited", KM_SUPERVISOR, "X",
                         "remove exited sessions but pinned ones (asks when more than one)"},
    [KA_RELOAD] = {"reload", KM_SUPERVISOR, "R", "read the config file again: the screen's keys and the server's settings"},
    [KA_SIDEBAR] = {"sidebar", KM_SUPERVISOR, "s", "hide or show the session list: the panes take the whole width"},
};

static const struct {
    const char *name;
    uint32_t key;
} named[] = {
    {"Enter", '\r'}, {"Tab", '\t'}, {"Esc", 0x1b}, {"Space", ' '}, {"BS", 0x7f}, {"Up", KS_UP},
    {"Down", KS_DOWN}, {"Left", KS_LEFT}, {"Right", KS_RIGHT}, {"Home", KS_HOME}, {"End", KS_END},
    {"PgUp", KS_PGUP}, {"PgDn", KS_PGDN}, {"Insert", KS_INSERT}, {"Delete", KS_DELETE},
    {"BTab", KS_BTAB}, {"WheelUp", KS_WHEEL_UP}, {"WheelDown", KS_WHEEL_DOWN},
};

const key_action_info *key_action_get(key_action a)
{
    return a < KA_COUNT ? &actions[a] : NULL;
}

/* One UTF-8 character making up the whole of s, or -1 (for "" too: its
 * terminator is its only byte, nothing after it may be read). */
static int32_t single_char(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    uint32_t c;
    int n;
    if (p[0] == 0)
        return -1;
    if (p[0] < 0x80) {
        c = p[0];
        n = 1;
    } else if ((p[0] & 0xe0) == 0xc0) {
        c = p[0] & 0x1f;
        n = 2;
    } else if ((p[0] & 0xf0) == 0xe0) {
        c = p[0] & 0x0f;
        n = 3;
    } else if ((p[0] & 0xf8) == 0xf0) {
        c = p[0] & 0x07;
        n = 4;
    } else {
        return -1;
    }
    for (int k = 1; k < n; k++) {
        if ((p[k] & 0xc0) != 0x80) /* a NUL stops here too */
            return -1;
        c = c << 6 | (p[k] & 0x3f);
    }
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000}; /* overlong forms are not characters */
    if (c < least[n] || (c >= 0xd800 && c <= 0xdfff))
        return -1;
    return p[n] == 0 && c > 0x20 && c != 0x7f && c < 0x110000 ? (int32_t)c : -1;
}

int keyspec_parse(const char *name, uint32_t *key, char *err, size_t errlen)
{
    uint32_t meta = 0;
    const char *s = name;
    if (strncmp(s, "M-", 2) == 0 && s[2]) {
        meta = KEY_META;
        s += 2;
    }
    if (strncmp(s, "C-", 2) == 0 && s[2] && !s[3]) {
        char c = s[2];
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        if (c == '@') { /* NUL: no key code (0 ends a binding list); the TUI sends it to the session */
            snprintf(err, errlen, "'%s' cannot be bound: C-@ (C-Space) is always sent to the session", name);
            return -1;
        }
        if (c > '@' && c <= '_') { /* C-A..C-Z C-[ C-\ C-] C-^ C-_ */
            *key = meta | (uint32_t)(c - '@');
            return 0;
        }
        if (c == '?') {
            *key = meta | 0x7f;
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (strcmp(named[i].name, s) == 0) {
            *key = meta | named[i].key;
            return 0;
        }
    }
    if (s[0] == 'F' && s[1] >= '1' && s[1] <= '9') {
        char *end;
        long n = strtol(s + 1, &end, 10);
        if (!*end && n >= 1 && n <= 12) {
            *key = meta | (KS_F1 + (uint32_t)(n - 1));
            return 0;
        }
    }
    int32_t c = single_char(s);
    if (c > 0) {
        *key = meta | (uint32_t)c;
        return 0;
    }
    snprintf(err, errlen, "'%s' is not a key: use one character (j, /, Q), C-x for control keys (C-]), M-x for "
             "Alt, or Enter, Tab, Esc, Space, BS, Up, Down, Left, Right, Home, End, PgUp, PgDn, Insert, Delete, "
             "BTab, F1-F12, WheelUp, WheelDown", name);
    return -1;
}

void keyspec_name(uint32_t key, char *out, size_t outlen)
{
    const char *meta = key & KEY_META ? "M-" : "";
    uint32_t k = key & ~KEY_META;
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (named[i].key == k) {
            snprintf(out, outlen, "%s%s", meta, named[i].name);
            return;
        }
    }
    if (k >= KS_F1 && k <= KS_F12)
        snprintf(out, outlen, "%sF%u", meta, k - KS_F1 + 1);
    else if (k < 0x20)
        snprintf(out, outlen, "%sC-%c", meta, (char)(k + '@' + (k >= 1 && k <= 26 ? 'a' - 'A' : 0)));
    else if (k == 0x7f)
        snprintf(out, outlen, "%sC-?", meta);
    else if (k < 0x80)
        snprintf(out, outlen, "%s%c", meta, (char)k);
    else {
        char u[8] = {0};
        utf8_put_scalar(k, u);
        snprintf(out, outlen, "%s%s", meta, u);
    }
}

/* Parse space-separated key names into keys (0-terminated). */
static int parse_list(const char *value, uint32_t keys[KEYS_PER_ACTION], char *err, size_t errlen)
{
    char *copy = xstrdup(value), *save = NULL;
    int n = 0, rc = 0;
    memset(keys, 0, KEYS_PER_ACTION * sizeof keys[0]);
    for (char *tok = strtok_r(copy, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
        if (n == KEYS_PER_ACTION) {
            snprintf(err, errlen, "at most %d keys per action", KEYS_PER_ACTION);
            rc = -1;
            break;
        }
        if (keyspec_parse(tok, &keys[n], err, errlen) < 0) {
            rc = -1;
            break;
        }
        n++;
    }
    free(copy);
    if (rc == 0 && n == 0) {
        snprintf(err, errlen, "no key given (to leave an action unbound, bind it to a key you never press)");
        rc = -1;
    }
    return rc;
}

void key_bindings_default(key_bindings *kb)
{
    memset(kb, 0, sizeof *kb);
    char err[256];
    for (int a = 0; a < KA_COUNT; a++)
        if (parse_list(actions[a].defaults, kb->keys[a], err, sizeof err) < 0)
            abort(); /* the table above is wrong: a bug, caught by the unit test */
}

static void drop_key(uint32_t keys[KEYS_PER_ACTION], uint32_t key)
{
    int w = 0;
    for (int r = 0; r < KEYS_PER_ACTION; r++)
        if (keys[r] && keys[r] != key)
            keys[w++] = keys[r];
    while (w < KEYS_PER_ACTION)
        keys[w++] = 0;
}

int key_bindings_set(key_bindings *kb, const char *name, const char *value, char *err, size_t errlen)
{
    int a = -1;
    for (int k = 0; k < KA_COUNT; k++)
        if (strcmp(actions[k].name, name) == 0)
            a = k;
    if (a < 0) {
        buf_t known;
        buf_init(&known);
        for (int k = 0; k < KA_COUNT; k++)
            buf_printf(&known, "%s%s", k ? ", " : "", actions[k].name);
        snprintf(err, errlen, "unknown action '%s' in [keys] (known: %s)", name, known.data);
        buf_free(&known);
        return -1;
    }
    uint32_t keys[KEYS_PER_ACTION];
    char why[512];
    if (parse_list(value, keys, why, sizeof why) < 0) {
        snprintf(err, errlen, "keys.%s: %s", name, why);
        return -1;
    }
    /* Every conflict is checked before any default is dropped: a refused
     * line changes nothing (the rest of the file is still read). */
    for (int i = 0; i < KEYS_PER_ACTION && keys[i]; i++) {
        for (int other = 0; other < KA_COUNT; other++) {
            if (other == a || actions[other].mode != actions[a].mode || !kb->set_by_user[other])
                continue;
            for (int j = 0; j < KEYS_PER_ACTION; j++) {
                if (kb->keys[other][j] != keys[i])
                    continue;
                char kn[32];
                keyspec_name(keys[i], kn, sizeof kn);
                snprintf(err, errlen, "keys.%s: %s is already bound to '%s'; bind one of them to "
                         "another key", name, kn, actions[other].name);
                return -1;
            }
        }
    }
    for (int i = 0; i < KEYS_PER_ACTION && keys[i]; i++)
        for (int other = 0; other < KA_COUNT; other++)
            if (other != a && actions[other].mode == actions[a].mode)
                drop_key(kb->keys[other], keys[i]);
    memcpy(kb->keys[a], keys, sizeof keys);
    kb->set_by_user[a] = true;
    return 0;
}

int key_bindings_lookup(const key_bindings *kb, key_mode mode, uint32_t key)
{
    for (int a = 0; a < KA_COUNT; a++) {
        if (actions[a].mode != mode)
            continue;
        for (int j = 0; j < KEYS_PER_ACTION && kb->keys[a][j]; j++)
            if (kb->keys[a][j] == key)
                return a;
    }
    return -1;
}

void key_bindings_join(const key_bindings *kb, key_action a, const char *sep, char *out, size_t outlen)
{
    size_t len = 0;
    out[0] = 0;
    for (int j = 0; j < KEYS_PER_ACTION && kb->keys[a][j] && len + 1 < outlen; j++) {
        char kn[32];
        keyspec_name(kb->keys[a][j], kn, sizeof kn);
        int n = snprintf(out + len, outlen - len, "%s%s", j ? sep : "", kn);
        if (n < 0)
            break;
        len += (size_t)n;
    }
}

void key_bindings_names(const key_bindings *kb, key_action a, char *out, size_t outlen)
{
    key_bindings_join(kb, a, "/", out, outlen);
}
