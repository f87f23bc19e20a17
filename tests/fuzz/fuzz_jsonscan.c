/*
 * fuzz_jsonscan.c - libFuzzer target for the JSON Lines scanner
 * (src/record/jsonscan.c) that reads a session's events.jsonl for the timeline,
 * `corral log` and export.  The log's values come from what a session did
 * (argv, paths, output): hostile text.
 *
 * jansson is the oracle: the scanner must refuse what jansson refuses
 * (one exception: a number jansson cannot hold, which is valid JSON) and
 * read what it reads (exceptions: nesting deeper than JS_MAX_DEPTH, a raw
 * NUL byte, which jansson takes for the end of the text), and
 * for an object jansson reads, the scanner must find the same members:
 * the same type under each key, the same string after decoding, the same
 * integer where it reads one.  Beyond that: every span lies in the line,
 * a refusal says what is wrong, and a number read is finite.
 *
 * make check runs it over tests/fuzz/corpus/jsonscan with replay_main.c;
 * tests/fuzz/build.sh builds it for libFuzzer (tests/fuzz/README.md).
 */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/jsonscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_MEMBERS 32

static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_jsonscan: %s: %s\n", what, detail);
    abort();
}

static bool inside(js_span s, const char *base, size_t len)
{
    return s.p >= base && s.p + s.n <= base + len;
}

static char jansson_type(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return 'o';
    case JSON_ARRAY: return 'a';
    case JSON_STRING: return 's';
    case JSON_INTEGER:
    case JSON_REAL: return 'n';
    case JSON_TRUE: return 't';
    case JSON_FALSE: return 'f';
    case JSON_NULL: return 'z';
    }
    return '?';
}

/* Does the text hold a number jansson cannot represent (it refuses those;
 * they are valid JSON)?  A crude look: a run of more than 15 digits, or
 * an exponent. */
static bool has_big_number(const char *p, size_t len)
{
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        if (p[i] >= '0' && p[i] <= '9') {
            if (++run > 15)
                return true;
        } else {
            if ((p[i] == 'e' || p[i] == 'E') && run)
                return true;
            run = 0;
        }
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    js_member m[MAX_MEMBERS];
    char err[256] = "";
    int n = js_scan_object(text, size, m, MAX_MEMBERS, err, sizeof err);
    json_error_t jerr;
    json_t *root = json_loadb(text, size, 0, &jerr);
    bool jansson_object = root && json_is_object(root);

    if (n < 0) {
        if (!err[0] || strchr(err, '\n'))
            broken("a refusal that does not say what is wrong in one line", err);
        /* jansson nests deeper than JS_MAX_DEPTH (a deeper line is refused
         * here on purpose) and takes a raw NUL byte for the end of the
         * text (not valid JSON, refused here). */
        if (jansson_object && !strstr(err, "deep") && !memchr(text, '\0', size))
            broken("a line jansson reads that the scanner refuses", err);
        json_decref(root);
        return 0;
    }
    if (!jansson_object && !has_big_number(text, size))
        broken("a line the scanner takes that jansson refuses", jerr.text);

    int kept = n < MAX_MEMBERS ? n : MAX_MEMBERS;
    for (int i = 0; i < kept; i++) {
        const js_member *x = &m[i];
        if (!inside(x->key, text, size) || !inside(x->val, text, size))
            broken("a member span outside the line", "");
        if (!strchr("snoatfz", x->type))
            broken("a member of no type", "");
        long long iv;
        double dv;
        if (js_number(x, &dv) && !isfinite(dv))
            broken("a number read as infinite", "");
        if (!jansson_object || n > MAX_MEMBERS)
            continue; /* a key may appear again past the members kept */
        /* Keys written without escapes can be compared with jansson's
         * (which keeps the last of duplicate keys, as js_find does). */
        if (memchr(x->key.p, '\\', x->key.n) || x->key.n > 200)
            continue;
        char key[201];
        memcpy(key, x->key.p, x->key.n);
        key[x->key.n] = '\0';
        if (strlen(key) != x->key.n)
            continue;
        const js_member *last = js_find(m, kept, key);
        json_t *v = json_object_get(root, key);
        if (!last || !v)
            broken("a member jansson or js_find does not find", key);
        if (last->type != jansson_type(v))
            broken("a member of another type than jansson's", key);
        if (last->type == 's') {
            size_t len = 0;
            char *s = js_string(last, &len);
            if (!s || len != json_string_length(v) || memcmp(s, json_string_value(v), len) != 0)
                broken("a string decoded differently from jansson", key);
            free(s);
        }
        if (js_int(last, &iv) && json_is_integer(v) && iv != json_integer_value(v))
            broken("an integer read differently from jansson", key);
    }
    if (jansson_object && n <= MAX_MEMBERS && json_object_size(root) > (size_t)n)
        broken("jansson finds more members than the scanner", "");
    json_decref(root);
    return 0;
}
