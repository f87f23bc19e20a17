/*
 * conf.h - corral's settings: built-in defaults overridden by the config file
 * ($XDG_CONFIG_HOME/corral/config, git-config style, see corral.conf(5)).
 * Unknown sections or keys and bad values are errors naming file:line, the
 * value and the fix; a reader gets all of a file's errors at once and
 * decides which matter to it (conf_errors_read_by).
 *
 * Included by src/config/, src/server/, ui/ and src/cli/.
 */
#ifndef CORRAL_CONF_H
#define CORRAL_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/keyspec.h"
#include "config/snap_conf.h"

/* Sandbox settings of the [sandbox] section or a [profile "NAME"] one:
 * paths added to the profile and limits that replace its defaults. */
typedef struct conf_sandbox {
    char *name;      /* [profile "NAME"]; NULL for [sandbox] */
    char *base;      /* the profile it builds on (default workspace-write) */
    char **write, **read, **deny;
    size_t n_write, n_read, n_deny;
    int net;         /* -1: unset, else sb_net */
    int home_layer;  /* -1: unset, else sb_home_layer */
    int home_layer_in; /* -1: unset, 0: memory, 1: disk */
    /* limits; 0 = unset (core uses UINT64_MAX for unset) */
    uint64_t nofile, fsize, core, nproc, tmp_size, pids_max, memory_max;
} conf_sandbox;

/* [ui] notify: what the screen does when a request starts to wait. */
enum { CONF_NOTIFY_AUTO, CONF_NOTIFY_OSC9, CONF_NOTIFY_OSC777, CONF_NOTIFY_BELL, CONF_NOTIFY_OFF };

typedef struct conf {
    /* [limits] */
    uint64_t session_lifetime_ms; /* user sessions; 0 = no limit */
    uint64_t exec_lifetime_ms;    /* agent exec processes; 0 = no limit */
    /* [exec] */
    uint32_t background_timeout_ms; /* longest empty poll; floored at 5 s */
    /* [session] */
    int scrollback; /* lines of history the server keeps per session */
    uint64_t session_retention_ms;   /* ended sessions' directories are kept this long (0: forever) */
    uint64_t session_max_total_size; /* and all of them together at most this many bytes (0: no cap) */
    /* [sandbox] */
    char *sandbox_profile; /* profile of new sessions and execs */
    conf_sandbox sandbox;  /* extras applied to every confined profile */
    /* an agent's pre-built sandbox (docs/sandbox.md) stays this long after
     * its last command; 0: none, every command's sandbox made afresh */
    uint64_t sandbox_keep_warm_ms;
    /* [profile "NAME"] */
    conf_sandbox *profiles;
    size_t n_profiles;
    /* [env] */
    char **env_keep, **env_set;
    size_t n_env_keep, n_env_set;
    /* [ui] */
    char *ui_theme;        /* NULL: "default" (or "mono" under NO_COLOR) */
    bool ui_mouse;         /* mouse: select, focus, wheel scroll */
    int ui_sidebar_width;  /* columns; -N: N% of the terminal's width; CONF_SIDEBAR_AUTO (conf_sidebar_columns) */
    int ui_truecolor;      /* -1 auto (COLORTERM, terminfo RGB/Tc), 0 off, 1 on */
    int ui_notify;         /* a request waits: CONF_NOTIFY_* (the terminal's bell and notification) */
    char *ui_theme_file;   /* the config file that set ui_theme (conf_key_line finds the line) */
    bool ui_theme_set;     /* while loading: this file sets ui.theme */
    /* [keys] */
    key_bindings keys;
    /* [approvals] */
    char *approval_policy;      /* NULL: on-request */
    bool granular_sandbox_approval, granular_rules;
    uint64_t approval_timeout_ms; /* 0: wait for an answer */
    /* [network] */
    int network_max_connections; /* open proxied connections per session */
    /* [notify]: a program run on the host when a request starts to wait
     * (src/gate/notify.c), as words (never through a shell); NULL: none */
    char **notify_argv;
    char *notify_command;        /* as written, for messages */
    uint64_t notify_interval_ms; /* at most one run this often */
    /* [snapshots] (snap_conf.c) */
    snap_conf snap;
    /* [hosts]: other machines' servers, reached over ssh (corral -H NAME) */
    char **host_names, **host_urls; /* NAME = ssh://[user@]host[:port], n_hosts of each */
    size_t n_hosts;
    char *hosts_ssh_command;    /* ssh-command: NULL for ssh */
    char *hosts_remote_command; /* remote-command: NULL for corral */
} conf_t;

/* Problems found in a config file, each with the section it is in. */
typedef struct conf_errors {
    char **text;    /* "FILE:LINE: what is wrong with the value, and the fix" */
    char **section; /* its section, NULL outside any (or under a bad header) */
    size_t n;
} conf_errors;

/* The sections the server reads, those only the screen reads ([ui],
 * [keys]), and those only clients read ([hosts], by corral -H and the
 * screen); each NULL-terminated. */
extern const char *const conf_server_sections[];
extern const char *const conf_screen_sections[];
extern const char *const conf_client_sections[];

/* The URL of host name in [hosts], or NULL. */
const char *conf_host_url(const conf_t *c, const char *name);

void conf_free(conf_t *c);
/* A size: "4096", "64K", "1G" (powers of 1024).  0 or -1. */
int conf_parse_size(const char *s, uint64_t *bytes);

/* [ui] sidebar-width: auto, the default, follows the terminal (7/30 of its
 * width, from 20 to 44 columns: 28 on 120 columns, 44 on 190); N columns;
 * or N% of its width.  The sidebar never takes more than half the
 * terminal. */
#define CONF_SIDEBAR_AUTO 0
int conf_sidebar_columns(const conf_t *c, int terminal_cols);

void conf_defaults(conf_t *c);
/* Load path over the defaults already in c; a missing file is fine.
 * 0, or -1 with "FILE:LINE: ..." in err. */
int conf_load(conf_t *c, const char *path, char *err, size_t errlen);

/* Load all of path over c: a line with a problem is left out (its setting
 * keeps the value it had) and every problem is added to errs, so that one
 * read names them all.  text, when not NULL, gets the bytes read ("" for a
 * missing file), to tell later whether the file changed. */
void conf_load_all(conf_t *c, const char *path, conf_errors *errs, char **text);
/* conf_defaults, then conf_load_all of the user's config file. */
void conf_load_user_all(conf_t *c, conf_errors *errs, char **text);
/* The user's config file: $XDG_CONFIG_HOME/corral/config (malloc'd). */
char *conf_user_path(void);
/* How many of errs matter to a program that reads sections (NULL-ended):
 * those in one of them, outside any section, or in a section corral does
 * not know (a misspelt [sandbx] loses settings someone meant). */
size_t conf_errors_read_by(const conf_errors *e, const char *const *sections);
/* What the server's settings come from in a config file's text: its lines
 * that set something (trimmed, no blank or comment line) outside the
 * sections only the screen or the clients read, one a line (malloc'd).  Two texts with
 * the same view give the server the same settings.  lines, when not NULL,
 * gets the file's line number of each (malloc'd, *n_lines of them). */
char *conf_server_view(const char *text, int **lines, size_t *n_lines);
/* One more error, found after reading (a theme that does not load). */
void conf_errors_add(conf_errors *e, const char *section, const char *text);
/* All of them, one a line (malloc'd; "" for none). */
char *conf_errors_join(const conf_errors *e);
void conf_errors_free(conf_errors *e);

/* The defaults, then the user's config file ($XDG_CONFIG_HOME/corral/config)
 * when there is one: conf_load's result and message. */
int conf_load_user(conf_t *c, char *err, size_t errlen);
/* Parse a duration: "0", "90" (seconds), "500ms", "10s", "5m", "2h", "1d".
 * 0 or -1. */
int conf_parse_duration(const char *s, uint64_t *ms);
/* The line of the last "key" in [section] (no subsection) of an INI file,
 * or of text read from name when text is not NULL; 0 when it has none.
 * For errors found after reading, such as a theme that does not load. */
int conf_key_line(const char *name, const char *text, const char *section, const char *key);

#endif
