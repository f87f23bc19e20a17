/*
 * conf.h - corral's settings: built-in defaults overridden by the config file
 * ($XDG_CONFIG_HOME/corral/config, git-config style, see corral.conf(5)).
 * Unknown sections or keys and bad values are errors naming file:line.
 */
#ifndef CORRAL_CONF_H
#define CORRAL_CONF_H

#include <stddef.h>
#include <stdint.h>

typedef struct conf {
    /* [limits] */
    uint64_t session_lifetime_ms; /* user sessions; 0 = no limit */
    uint64_t exec_lifetime_ms;    /* agent exec processes; 0 = no limit */
    /* [exec] */
    uint32_t background_timeout_ms; /* longest empty poll; floored at 5 s */
    /* [session] */
    int scrollback; /* lines of history the server keeps per session */
} conf_t;

void conf_defaults(conf_t *c);
/* Load path over the defaults already in c; a missing file is fine.
 * 0, or -1 with "FILE:LINE: ..." in err. */
int conf_load(conf_t *c, const char *path, char *err, size_t errlen);
/* Parse a duration: "0", "90" (seconds), "500ms", "10s", "5m", "2h", "1d".
 * 0 or -1. */
int conf_parse_duration(const char *s, uint64_t *ms);

#endif
