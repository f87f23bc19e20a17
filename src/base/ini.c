/*
 * ini.c - git-config style INI reader.
 */
#include "config.h"

#include "base/ini.h"
#include "base/util.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *skip_space(char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static void rtrim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
}

/* Parse a quoted string at p (just after the opening quote) into out;
 * returns the position after the closing quote or NULL. */
static char *parse_quoted(char *p, buf_t *out, const char **why)
{
    for (;;) {
        char c = *p++;
        if (c == '\0') {
            *why = "missing closing '\"'";
            return NULL;
        }
        if (c == '"')
            return p;
        if (c == '\\') {
            char e = *p++;
            switch (e) {
            case '"': buf_putc(out, '"'); break;
            case '\\': buf_putc(out, '\\'); break;
            case 'n': buf_putc(out, '\n'); break;
            case 't': buf_putc(out, '\t'); break;
            default:
                *why = "unknown escape (use \\\" \\\\ \\n or \\t)";
                return NULL;
            }
            continue;
        }
        buf_putc(out, c);
    }
}

static int valid_name(const char *s, size_t n)
{
    if (n == 0 || !isalpha((unsigned char)s[0]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

/* The reader proper.  Without on_error it stops at the first problem (err
 * holds it); with it, every problem is handed over and the reader goes on
 * with the next line, so that one pass finds them all: a bad key line is
 * skipped, and after a bad section header so are its keys (they belong to
 * no section the caller could name). */
static int parse(const char *name, const char *text, ini_key_fn fn, ini_error_fn on_error, void *user,
                 char *err, size_t errlen)
{
    char *copy = xstrdup(text);
    char *section = NULL, *subsection = NULL;
    bool section_bad = false;
    int rc = 0, lineno = 0, errors = 0;
    char msg[512];
    buf_t value;
    buf_init(&value);
    for (char *line = copy, *next; line; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        rtrim(line);
        char *p = skip_space(line);
        if (*p == '\0' || *p == '#' || *p == ';')
            continue;
        msg[0] = '\0';
        if (*p == '[') {
            section_bad = true; /* until the header proves good */
            char *q = ++p;
            while (*q && *q != ']' && *q != ' ' && *q != '\t' && *q != '"')
                q++;
            if (!valid_name(p, (size_t)(q - p))) {
                snprintf(msg, sizeof msg, "bad section name (expected [name] or [name \"sub\"])");
                goto fail;
            }
            free(section);
            free(subsection);
            section = xstrndup(p, (size_t)(q - p));
            subsection = NULL;
            q = skip_space(q);
            if (*q == '"') {
                buf_t sub;
                buf_init(&sub);
                const char *why = NULL;
                q = parse_quoted(q + 1, &sub, &why);
                if (!q) {
                    buf_free(&sub);
                    snprintf(msg, sizeof msg, "bad subsection name: %s", why);
                    goto fail;
                }
                subsection = buf_steal(&sub);
                q = skip_space(q);
            }
            if (*q != ']') {
                snprintf(msg, sizeof msg, "expected ']' to close the section header");
                goto fail;
            }
            q = skip_space(q + 1);
            if (*q && *q != '#' && *q != ';') {
                snprintf(msg, sizeof msg, "unexpected text after the section header");
                goto fail;
            }
            section_bad = false;
            continue;
        }
        if (section_bad)
            continue; /* its header's error was reported */
        if (!section) {
            snprintf(msg, sizeof msg, "key outside of any [section]");
            goto fail;
        }
        char *k = p;
        while (*p && *p != '=' && *p != ' ' && *p != '\t')
            p++;
        size_t klen = (size_t)(p - k);
        if (!valid_name(k, klen)) {
            snprintf(msg, sizeof msg, "bad key name (letters, digits, '-' and '_', starting with a letter)");
            goto fail;
        }
        char *key = xstrndup(k, klen);
        p = skip_space(p);
        buf_reset(&value);
        if (*p == '\0') {
            buf_puts(&value, "true"); /* git: a bare key is boolean true */
        } else if (*p != '=') {
            free(key);
            snprintf(msg, sizeof msg, "expected '=' after the key");
            goto fail;
        } else {
            p = skip_space(p + 1);
            if (*p == '"') {
                const char *why = NULL;
                p = parse_quoted(p + 1, &value, &why);
                if (!p) {
                    free(key);
                    snprintf(msg, sizeof msg, "bad value: %s", why);
                    goto fail;
                }
                p = skip_space(p);
                if (*p && *p != '#' && *p != ';') {
                    free(key);
                    snprintf(msg, sizeof msg, "unexpected text after the quoted value");
                    goto fail;
                }
            } else {
                char *end = p;
                while (*end && *end != '#' && *end != ';')
                    end++;
                *end = '\0';
                rtrim(p);
                buf_puts(&value, p);
            }
        }
        char cberr[400] = "";
        int r = fn(user, section, subsection, key, value.data ? value.data : "", cberr, sizeof cberr);
        free(key);
        if (r < 0) {
            snprintf(msg, sizeof msg, "%s", cberr[0] ? cberr : "rejected");
            goto fail;
        }
        continue;
    fail:
        rc = -1;
        errors++;
        if (on_error) {
            char *where = xasprintf("%s:%d: %s", name, lineno, msg);
            on_error(user, section_bad ? NULL : section, where);
            free(where);
            continue;
        }
        snprintf(err, errlen, "%s:%d: %s", name, lineno, msg);
        break;
    }
    buf_free(&value);
    free(section);
    free(subsection);
    free(copy);
    return on_error ? errors : rc;
}

int ini_parse(const char *name, const char *text, ini_key_fn fn, void *user, char *err, size_t errlen)
{
    return parse(name, text, fn, NULL, user, err, errlen);
}

int ini_parse_all(const char *name, const char *text, ini_key_fn fn, ini_error_fn on_error, void *user)
{
    char unused[1];
    return parse(name, text, fn, on_error, user, unused, sizeof unused);
}

int ini_read_file(const char *path, buf_t *text, char *err, size_t errlen)
{
    buf_init(text);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            buf_puts(text, "");
            return 1;
        }
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    int rc = read_all(fd, 4u << 20, text);
    close(fd);
    if (rc < 0) {
        buf_free(text);
        if (rc == -EFBIG)
            snprintf(err, errlen, "%s: file is larger than 4 MiB", path);
        else
            snprintf(err, errlen, "%s: read error: %s", path, strerror(-rc));
        return -1;
    }
    if (text->len && memchr(text->data, '\0', text->len)) {
        buf_free(text);
        snprintf(err, errlen, "%s: file contains a NUL byte (not a text file?)", path);
        return -1;
    }
    if (!text->data)
        buf_puts(text, "");
    return 0;
}

int ini_parse_file(const char *path, int optional, ini_key_fn fn, void *user, char *err,
                   size_t errlen)
{
    buf_t b;
    int rc = ini_read_file(path, &b, err, errlen);
    if (rc == 1) {
        buf_free(&b); /* the "" of a missing file */
        if (optional)
            return 0;
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(ENOENT));
        return -1;
    }
    if (rc < 0)
        return -1;
    rc = ini_parse(path, b.data, fn, user, err, errlen);
    buf_free(&b);
    return rc;
}
