/*
 * conf.c - settings table and loader.  Each key is one row of the table, so
 * adding a setting is one line plus its field, and an unknown key can be
 * reported with the list of keys the section does have.
 */
#include "config.h"

#include "conf.h"
#include "ini.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum conf_type { CT_DURATION, CT_DURATION_U32, CT_INT };

typedef struct conf_key {
    const char *section;
    const char *name;
    enum conf_type type;
    size_t offset;
    int64_t min, max; /* for CT_INT */
} conf_key;

static const conf_key conf_keys[] = {
    {"limits", "session-lifetime", CT_DURATION, offsetof(conf_t, session_lifetime_ms), 0, 0},
    {"limits", "exec-lifetime", CT_DURATION, offsetof(conf_t, exec_lifetime_ms), 0, 0},
    {"exec", "background-timeout", CT_DURATION_U32, offsetof(conf_t, background_timeout_ms), 0, 0},
    {"session", "scrollback", CT_INT, offsetof(conf_t, scrollback), 0, 1000000},
};

void conf_defaults(conf_t *c)
{
    memset(c, 0, sizeof *c);
    c->session_lifetime_ms = 0;
    c->exec_lifetime_ms = 2ull * 3600 * 1000;
    c->background_timeout_ms = 300000;
    c->scrollback = 10000;
}

int conf_parse_duration(const char *s, uint64_t *ms)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    uint64_t mult;
    if (*end == '\0' || strcmp(end, "s") == 0)
        mult = 1000;
    else if (strcmp(end, "ms") == 0)
        mult = 1;
    else if (strcmp(end, "m") == 0)
        mult = 60000;
    else if (strcmp(end, "h") == 0)
        mult = 3600000;
    else if (strcmp(end, "d") == 0)
        mult = 86400000;
    else
        return -1;
    if (v > UINT64_MAX / mult)
        return -1;
    *ms = v * mult;
    return 0;
}

static int conf_set(void *user, const char *section, const char *subsection, const char *key,
                    const char *value, char *err, size_t errlen)
{
    conf_t *c = user;
    int section_known = 0;
    for (size_t i = 0; i < sizeof conf_keys / sizeof conf_keys[0]; i++) {
        const conf_key *k = &conf_keys[i];
        if (strcmp(k->section, section) != 0)
            continue;
        section_known = 1;
        if (strcmp(k->name, key) != 0)
            continue;
        if (subsection) {
            snprintf(err, errlen, "section [%s] takes no subsection (\"%s\")", section, subsection);
            return -1;
        }
        char *field = (char *)c + k->offset;
        uint64_t ms;
        switch (k->type) {
        case CT_DURATION:
        case CT_DURATION_U32:
            if (conf_parse_duration(value, &ms) < 0) {
                snprintf(err, errlen, "%s.%s: '%s' is not a duration (e.g. 0, 30s, 5m, 2h)", section, key, value);
                return -1;
            }
            if (k->type == CT_DURATION_U32) {
                if (ms > UINT32_MAX) {
                    snprintf(err, errlen, "%s.%s: '%s' is too long", section, key, value);
                    return -1;
                }
                *(uint32_t *)field = (uint32_t)ms;
            } else {
                *(uint64_t *)field = ms;
            }
            return 0;
        case CT_INT: {
            errno = 0;
            char *end;
            long long v = strtoll(value, &end, 10);
            if (errno || end == value || *end || v < k->min || v > k->max) {
                snprintf(err, errlen, "%s.%s: '%s' is not a whole number from %lld to %lld", section,
                         key, value, (long long)k->min, (long long)k->max);
                return -1;
            }
            *(int *)field = (int)v;
            return 0;
        }
        }
    }
    if (!section_known) {
        snprintf(err, errlen, "unknown section [%s]", section);
        return -1;
    }
    buf_t known;
    buf_init(&known);
    for (size_t i = 0; i < sizeof conf_keys / sizeof conf_keys[0]; i++)
        if (strcmp(conf_keys[i].section, section) == 0)
            buf_printf(&known, "%s%s", known.len ? ", " : "", conf_keys[i].name);
    snprintf(err, errlen, "unknown key '%s' in [%s] (known: %s)", key, section, known.data);
    buf_free(&known);
    return -1;
}

int conf_load(conf_t *c, const char *path, char *err, size_t errlen)
{
    return ini_parse_file(path, 1, conf_set, c, err, errlen);
}
