/*
 * layouts.c - see layouts.h.  One server runs per process, so the layouts
 * it keeps are this module's own table.
 */
#include "config.h"

#include "server/layouts.h"
#include "server/store.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define CLIENT_NAME_MAX 64

static const char *const modes[] = {"single", "vsplit", "hsplit", "grid"};

typedef struct kept {
    char *client;
    json_t *layout;
    unsigned long long set_at; /* larger: set more recently */
} kept;

static kept table[LAYOUTS_MAX_CLIENTS];
static size_t ntable;
static unsigned long long clock_;

/* Whether v is an array of at most max elements; if not, the error says
 * what field should be. */
static bool array_within(json_t *v, size_t max, const char *field, const char *of, proto_err *e)
{
    if (json_is_array(v) && json_array_size(v) <= max)
        return true;
    proto_fail(e, PERR_BAD_REQUEST, "the layout's field '%s' must be an array of at most %zu %s", field, max, of);
    return false;
}

/* A name of 1 to CLIENT_NAME_MAX bytes (no NUL inside), cleaned as hello
 * cleans client names, so that they compare; NULL when n is none.  Caller
 * frees. */
static char *clean_name(json_t *n)
{
    const char *s = json_string_value(n);
    if (!s || !*s || json_string_length(n) > CLIENT_NAME_MAX || strlen(s) != json_string_length(n))
        return NULL;
    return sanitize_text(s, strlen(s), CLIENT_NAME_MAX);
}

static int clean_tiles(json_t *v, json_t *out, bool (*exists)(int, void *), void *user, proto_err *e)
{
    if (!array_within(v, LAYOUTS_MAX_TILES, "tiles", "session ids (0: a free tile)", e))
        return -1;
    json_t *tiles = json_array();
    size_t i;
    json_t *t;
    json_array_foreach(v, i, t) {
        json_int_t id = json_integer_value(t);
        if (!json_is_integer(t) || (id != 0 && (id < STORE_ID_MIN || id >= STORE_ID_END))) {
            json_decref(tiles);
            proto_fail(e, PERR_BAD_REQUEST, "the layout's field 'tiles' element %zu must be 0 or a session id "
                       "(%d..%d)", i, STORE_ID_MIN, STORE_ID_END - 1);
            return -1;
        }
        /* A session gone since the client looked: the tile is free. */
        json_array_append_new(tiles, json_integer(id && exists((int)id, user) ? id : 0));
    }
    json_object_set_new(out, "tiles", tiles);
    return 0;
}

static int clean_expanded(json_t *v, json_t *out, proto_err *e)
{
    if (!array_within(v, LAYOUTS_MAX_EXPANDED, "expanded", "client names", e))
        return -1;
    json_t *names = json_array();
    size_t i;
    json_t *n;
    json_array_foreach(v, i, n) {
        char *clean = clean_name(n);
        if (!clean) {
            json_decref(names);
            proto_fail(e, PERR_BAD_REQUEST, "the layout's field 'expanded' element %zu must be a client name "
                       "(1 to %d bytes)", i, CLIENT_NAME_MAX);
            return -1;
        }
        json_array_append_new(names, json_string(clean));
        free(clean);
    }
    json_object_set_new(out, "expanded", names);
    return 0;
}

/* Another machine's sessions kept in tiles: this server cannot tell
 * whether they exist, so it keeps them as the screen named them (the
 * screen finds them again when that machine is up). */
static int clean_remote_tiles(json_t *v, json_t *out, proto_err *e)
{
    if (!array_within(v, LAYOUTS_MAX_TILES, "remote_tiles", "objects {\"tile\", \"host\", \"session\"}", e))
        return -1;
    json_t *named = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(v, i, r) {
        json_t *tile = json_object_get(r, "tile"), *sid = json_object_get(r, "session");
        json_int_t n = json_integer_value(tile), id = json_integer_value(sid);
        char *clean = clean_name(json_object_get(r, "host"));
        if (!json_is_object(r) || !json_is_integer(tile) || n < 0 || n >= LAYOUTS_MAX_TILES || !clean ||
            !json_is_integer(sid) || id < STORE_ID_MIN || id >= STORE_ID_END) {
            free(clean);
            json_decref(named);
            proto_fail(e, PERR_BAD_REQUEST, "the layout's field 'remote_tiles' element %zu must be {\"tile\": 0..%d, "
                       "\"host\": a name of 1 to %d bytes, \"session\": %d..%d}", i, LAYOUTS_MAX_TILES - 1,
                       CLIENT_NAME_MAX, STORE_ID_MIN, STORE_ID_END - 1);
            return -1;
        }
        json_array_append_new(named, json_pack("{s:I, s:s, s:I}", "tile", n, "host", clean, "session", id));
        free(clean);
    }
    json_object_set_new(out, "remote_tiles", named);
    return 0;
}

json_t *layouts_clean(json_t *in, bool (*exists)(int id, void *user), void *user, proto_err *e)
{
    if (!json_is_object(in)) {
        proto_fail(e, PERR_BAD_REQUEST, "field 'layout' must be an object");
        return NULL;
    }
    json_t *out = json_object();
    json_t *v = json_object_get(in, "mode");
    if (v) {
        const char *m = json_string_value(v);
        size_t k = 0;
        while (m && k < sizeof modes / sizeof *modes && strcmp(modes[k], m) != 0)
            k++;
        if (!m || k == sizeof modes / sizeof *modes) {
            proto_fail(e, PERR_BAD_REQUEST, "the layout's field 'mode' must be \"single\", \"vsplit\", \"hsplit\" or "
                       "\"grid\"");
            goto fail;
        }
        json_object_set_new(out, "mode", json_string(modes[k]));
    }
    v = json_object_get(in, "zoom");
    if (v) {
        if (!json_is_boolean(v)) {
            proto_fail(e, PERR_BAD_REQUEST, "the layout's field 'zoom' must be true or false");
            goto fail;
        }
        json_object_set(out, "zoom", v);
    }
    v = json_object_get(in, "tiles");
    if (v && clean_tiles(v, out, exists, user, e) < 0)
        goto fail;
    v = json_object_get(in, "expanded");
    if (v && clean_expanded(v, out, e) < 0)
        goto fail;
    v = json_object_get(in, "remote_tiles");
    if (v && clean_remote_tiles(v, out, e) < 0)
        goto fail;
    return out;
fail:
    json_decref(out);
    return NULL;
}

static kept *find(const char *client)
{
    for (size_t i = 0; i < ntable; i++)
        if (strcmp(table[i].client, client) == 0)
            return &table[i];
    return NULL;
}

void layouts_set(const char *client, json_t *layout)
{
    kept *k = find(client);
    if (!k && ntable < LAYOUTS_MAX_CLIENTS) {
        k = &table[ntable++];
        k->client = xstrdup(client);
    } else if (!k) {
        /* Full: the layout set longest ago makes room. */
        k = &table[0];
        for (size_t i = 1; i < ntable; i++)
            if (table[i].set_at < k->set_at)
                k = &table[i];
        free(k->client);
        k->client = xstrdup(client);
    }
    if (k->layout)
        json_decref(k->layout);
    k->layout = layout;
    k->set_at = ++clock_;
}

json_t *layouts_get(const char *client)
{
    kept *k = find(client);
    return k ? k->layout : NULL;
}

void layouts_forget_session(int id)
{
    for (size_t i = 0; i < ntable; i++) {
        json_t *tiles = json_object_get(table[i].layout, "tiles");
        size_t k;
        json_t *t;
        json_array_foreach(tiles, k, t)
            if (json_integer_value(t) == id)
                json_array_set_new(tiles, k, json_integer(0));
    }
}

void layouts_clear(void)
{
    for (size_t i = 0; i < ntable; i++) {
        free(table[i].client);
        json_decref(table[i].layout);
    }
    memset(table, 0, sizeof table);
    ntable = 0;
}
