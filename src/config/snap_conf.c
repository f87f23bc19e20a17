/*
 * snap_conf.c - see snap_conf.h.
 */
#include "config.h"

#include "config/snap_conf.h"

#include "config/conf.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SNAP_KEYS "enabled, max-file-size, max-new-files, max-files, retention, max-store-size, stall-timeout, keep-open, store-idle, allow, exclude"

void snap_conf_defaults(snap_conf *c)
{
    memset(c, 0, sizeof *c);
    c->enabled = true;
    c->max_file_size = 8ull << 20;
    c->max_new_files = 5000;
    c->max_files = 200000;
    c->retention_ms = 14ull * 24 * 3600 * 1000;
    c->max_store_size = 2ull << 30;
    c->stall_ms = 10000;
    /* An agent's one-shot commands come seconds apart: each would start a
     * reader and walk the whole tree again without it. */
    c->keep_open_ms = 10ull * 60 * 1000;
    /* Long enough for an agent's next command after it thought about the
     * last one's output; short enough that an idle server does not keep
     * libgit2's memory in the store's process. */
    c->store_idle_ms = 30ull * 1000;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void snap_conf_free(snap_conf *c)
{
    free_list(c->allow, c->n_allow);
    free_list(c->exclude, c->n_exclude);
    snap_conf_defaults(c);
}

static void push(char ***v, size_t *n, const char *s)
{
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = xstrdup(s);
}

static int parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0)
            return *out = true, 0;
        if (strcasecmp(v, no[i]) == 0)
            return *out = false, 0;
    }
    return -1;
}

static int parse_count(const char *key, const char *value, long long min, long long max, int *out, char *err,
                       size_t errlen)
{
    errno = 0;
    char *end;
    long long v = strtoll(value, &end, 10);
    if (errno || end == value || *end || v < min || v > max) {
        snprintf(err, errlen, "snapshots.%s: '%s' is not a whole number from %lld to %lld", key, value, min, max);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int snap_conf_set(snap_conf *c, const char *key, const char *value, char *err, size_t errlen)
{
    if (strcmp(key, "enabled") == 0) {
        if (parse_bool(value, &c->enabled) < 0) {
            snprintf(err, errlen, "snapshots.enabled: '%s' is not true or false", value);
            return -1;
        }
        return 0;
    }
    if (strcmp(key, "max-file-size") == 0 || strcmp(key, "max-store-size") == 0) {
        uint64_t *field = key[4] == 'f' ? &c->max_file_size : &c->max_store_size;
        if (conf_parse_size(value, field) < 0) {
            snprintf(err, errlen, "snapshots.%s: '%s' is not a size (e.g. 8M, 2G; 0 for no cap)", key, value);
            return -1;
        }
        return 0;
    }
    if (strcmp(key, "max-new-files") == 0)
        return parse_count(key, value, 1, 100000000, &c->max_new_files, err, errlen);
    if (strcmp(key, "max-files") == 0)
        return parse_count(key, value, 1, 100000000, &c->max_files, err, errlen);
    if (strcmp(key, "retention") == 0) {
        if (conf_parse_duration(value, &c->retention_ms) < 0) {
            snprintf(err, errlen, "snapshots.retention: '%s' is not a duration (e.g. 14d, 12h)", value);
            return -1;
        }
        return 0;
    }
    if (strcmp(key, "stall-timeout") == 0) {
        uint64_t ms; /* a bad value leaves the setting as it was */
        if (conf_parse_duration(value, &ms) < 0 || ms < 1000 || ms > 3600000) {
            snprintf(err, errlen, "snapshots.stall-timeout: '%s' is not a duration from 1s to 1h (e.g. 10s, 2m)",
                     value);
            return -1;
        }
        c->stall_ms = ms;
        return 0;
    }
    if (strcmp(key, "keep-open") == 0) {
        uint64_t ms;
        if (conf_parse_duration(value, &ms) < 0 || ms > 24ull * 3600 * 1000) {
            snprintf(err, errlen, "snapshots.keep-open: '%s' is not a duration up to 1d (e.g. 10m, 30s; 0 closes "
                                  "at once)", value);
            return -1;
        }
        c->keep_open_ms = ms;
        return 0;
    }
    if (strcmp(key, "store-idle") == 0) {
        uint64_t ms;
        if (conf_parse_duration(value, &ms) < 0 || ms > 24ull * 3600 * 1000) {
            snprintf(err, errlen, "snapshots.store-idle: '%s' is not a duration up to 1d (e.g. 30s, 5m; 0 ends "
                                  "the store's process after every job)", value);
            return -1;
        }
        c->store_idle_ms = ms;
        return 0;
    }
    if (strcmp(key, "allow") == 0) {
        if (value[0] != '/') {
            snprintf(err, errlen, "snapshots.allow: '%s' is not an absolute path", value);
            return -1;
        }
        push(&c->allow, &c->n_allow, value);
        return 0;
    }
    if (strcmp(key, "exclude") == 0) {
        if (!*value || strchr(value, '\n')) {
            snprintf(err, errlen, "snapshots.exclude: give one pattern in .gitignore syntax");
            return -1;
        }
        push(&c->exclude, &c->n_exclude, value);
        return 0;
    }
    snprintf(err, errlen, "unknown key '%s' in [snapshots] (known: " SNAP_KEYS ")", key);
    return -1;
}

void snap_conf_copy(snap_conf *dst, const snap_conf *src)
{
    *dst = *src;
    dst->allow = NULL;
    dst->exclude = NULL;
    dst->n_allow = dst->n_exclude = 0;
    for (size_t i = 0; i < src->n_allow; i++)
        push(&dst->allow, &dst->n_allow, src->allow[i]);
    for (size_t i = 0; i < src->n_exclude; i++)
        push(&dst->exclude, &dst->n_exclude, src->exclude[i]);
}

bool snap_conf_allows(const snap_conf *c, const char *ws)
{
    for (size_t i = 0; i < c->n_allow; i++) {
        size_t n = strlen(c->allow[i]);
        while (n > 1 && c->allow[i][n - 1] == '/')
            n--;
        if (strlen(ws) == n && strncmp(ws, c->allow[i], n) == 0)
            return true;
    }
    return false;
}

static bool same_list(char **a, size_t na, char **b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0)
            return false;
    return true;
}

bool snap_conf_equal(const snap_conf *a, const snap_conf *b)
{
    return a->enabled == b->enabled && a->max_file_size == b->max_file_size &&
           a->max_new_files == b->max_new_files && a->max_files == b->max_files &&
           a->retention_ms == b->retention_ms && a->max_store_size == b->max_store_size &&
           a->stall_ms == b->stall_ms && a->keep_open_ms == b->keep_open_ms &&
           a->store_idle_ms == b->store_idle_ms &&
           same_list(a->allow, a->n_allow, b->allow, b->n_allow) &&
           same_list(a->exclude, a->n_exclude, b->exclude, b->n_exclude);
}
