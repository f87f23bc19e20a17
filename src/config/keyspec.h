/*
 * keyspec.h - key names and the TUI's bindable actions, without curses:
 * the config file's [keys] section is checked when it is read (with
 * file:line, like every other setting), and the TUI maps what the terminal
 * sends onto the same key codes.
 *
 * A key is a 32-bit code: a Unicode character (control keys are their
 * ASCII codes: C-] is 0x1d, Enter 0x0d, Tab 0x09, Esc 0x1b, BS 0x7f), or a
 * KEY_SPECIAL + n for keys without a character (arrows, PgUp, F1...), with
 * KEY_META added for Alt.
 *
 * Included by src/config/ and ui/.
 */
#ifndef CORRAL_KEYSPEC_H
#define CORRAL_KEYSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEY_SPECIAL 0x110000u
#define KEY_META 0x40000000u

enum key_special {
    KS_UP = KEY_SPECIAL, KS_DOWN, KS_LEFT, KS_RIGHT, KS_HOME, KS_END, KS_PGUP, KS_PGDN, KS_INSERT,
    KS_DELETE, KS_BTAB, KS_F1, KS_F12 = KS_F1 + 11, KS_WHEEL_UP, KS_WHEEL_DOWN, KS_END_OF_SPECIALS
};

/* The modes a binding belongs to: supervisor focus, pane focus (only the
 * way back out), and scroll mode (scrollback and search of one pane). */
typedef enum key_mode { KM_SUPERVISOR, KM_PANE, KM_SCROLL, KM_COUNT } key_mode;

typedef enum key_action {
    KA_UP, KA_DOWN, KA_FOCUS, KA_ZOOM, KA_LAYOUT, KA_NEW, KA_KILL, KA_PIN, KA_SEARCH, KA_SCROLL_UP,
    KA_SCROLL_DOWN, KA_DETACH, KA_STOP_SERVER, KA_HELP,
    KA_SUPERVISOR, /* pane focus: back to supervisor focus (twice: send the key) */
    KA_LINE_UP, KA_LINE_DOWN, KA_PAGE_UP, KA_PAGE_DOWN, KA_TOP, KA_BOTTOM, KA_SEARCH_NEXT,
    KA_SEARCH_PREV, KA_SCROLL_SEARCH, KA_SCROLL_EXIT,
    KA_KEEP, KA_FOLD, KA_CLEAR_EXITED, /* supervisor focus: tiles and the list of finished commands */
    KA_DIFF, KA_COMMANDS, /* supervisor focus: snapshots (ui/diffview.c) */
    KA_TIMELINE, KA_REPLAY, KA_ENDED, /* supervisor focus: review (ui/timelineview.c, replayview.c, ended.c) */
    KA_RELOAD, /* supervisor focus: the config file read again (ui/confstate.c) */
    KA_SIDEBAR, /* supervisor focus: hide or show the session list */
    KA_COUNT
} key_action;

#define KEYS_PER_ACTION 4

typedef struct key_bindings {
    uint32_t keys[KA_COUNT][KEYS_PER_ACTION]; /* 0-terminated when fewer */
    bool set_by_user[KA_COUNT];
} key_bindings;

typedef struct key_action_info {
    const char *name;        /* in [keys]: "new", "scroll-up" */
    key_mode mode;
    const char *defaults;    /* key names, space-separated */
    const char *description; /* for the help overlay */
} key_action_info;

const key_action_info *key_action_get(key_action a);
void key_bindings_default(key_bindings *kb);
/* Set action name to the keys in value ("k Up"), from the config file.
 * The user's bindings win over defaults (a default binding of the same key
 * in the same mode is dropped); two user bindings of one key in one mode
 * are an error.  0, or -1 with a message in err. */
int key_bindings_set(key_bindings *kb, const char *name, const char *value, char *err, size_t errlen);
/* The action a key does in a mode, or -1. */
int key_bindings_lookup(const key_bindings *kb, key_mode mode, uint32_t key);

/* Parse one key name: "j", "C-]", "M-x", "Enter", "PgUp", "F5", "Space".
 * 0, or -1 with a message in err. */
int keyspec_parse(const char *name, uint32_t *key, char *err, size_t errlen);
/* The canonical name of a key (what key_parse reads back). */
void keyspec_name(uint32_t key, char *out, size_t outlen);
/* The names of an action's keys joined by "/" ("j/Down"), for hints. */
void key_bindings_names(const key_bindings *kb, key_action a, char *out, size_t outlen);
/* ... joined by sep: a list where "/" may itself be a key ("/ C-s"). */
void key_bindings_join(const key_bindings *kb, key_action a, const char *sep, char *out, size_t outlen);

#endif
