/*
 * gitconfig.c - git's config syntax, read as git reads it (config.c of git:
 * git_parse_source, get_value, parse_value, get_base_var): the same
 * comments, quoting, escapes and line continuations, the same errors.
 * Reading it differently from git would let a file hide an include or a
 * hooks path from the sandbox that the user's git then follows.
 */
#include "config.h"

#include "gitconfig.h"
#include "sbutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* A growable string. */
typedef struct buf {
    char *s;
    size_t len, cap;
} buf;

static void buf_add(buf *b, char c)
{
    if (b->len + 1 >= b->cap) {
        b->cap = b->cap ? b->cap * 2 : 64;
        b->s = sb_realloc(b->s, b->cap);
    }
    b->s[b->len++] = c;
    b->s[b->len] = '\0';
}

/* Empty, and allocated (s is a string even before the first character). */
static void buf_reset(buf *b)
{
    if (!b->s) {
        b->cap = 64;
        b->s = sb_alloc(b->cap);
    }
    b->len = 0;
    b->s[0] = '\0';
}

/* The reader: git's get_next_char() over a buffer.  "\r\n" reads as "\n";
 * the end reads as "\n" with eof set. */
typedef struct reader {
    const unsigned char *p, *end;
    bool eof;
    int line;
} reader;

static int next_char(reader *r)
{
    if (r->p >= r->end) {
        r->eof = true;
        return '\n';
    }
    int c = *r->p++;
    if (c == '\r' && r->p < r->end && *r->p == '\n')
        c = *r->p++;
    if (c == '\n')
        r->line++;
    return c;
}

/* git's own character classes: ASCII only, whatever the locale. */
static bool is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_key_char(int c)
{
    return is_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static bool is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static char lower(int c)
{
    return (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

/* A value after "=", into v; false when malformed (an open quote at the
 * end of the line, an unknown escape). */
static bool parse_value(reader *r, buf *v)
{
    bool quote = false, comment = false;
    size_t space = 0;
    buf_reset(v);
    for (;;) {
        int c = next_char(r);
        if (c == '\n')
            return !quote;
        if (comment)
            continue;
        if (is_space(c) && !quote) {
            if (v->len)
                space++;
            continue;
        }
        if (!quote && (c == ';' || c == '#')) {
            comment = true;
            continue;
        }
        for (; space; space--)
            buf_add(v, ' ');
        if (c == '\\') {
            c = next_char(r);
            switch (c) {
            case '\n': /* a continued line (at the end: the value ends) */
                continue;
            case 't':
                c = '\t';
                break;
            case 'b':
                c = '\b';
                break;
            case 'n':
                c = '\n';
                break;
            case '\\':
            case '"':
                break;
            default:
                return false;
            }
            buf_add(v, (char)c);
            continue;
        }
        if (c == '"') {
            quote = !quote;
            continue;
        }
        buf_add(v, (char)c);
    }
}

/* The rest of a '[section "sub"]' header after the section name, into
 * sub; false when malformed. */
static bool parse_subsection(reader *r, int c, buf *sub)
{
    do {
        if (c == '\n')
            return false;
        c = next_char(r);
    } while (is_space(c));
    if (c != '"')
        return false;
    buf_reset(sub);
    for (;;) {
        c = next_char(r);
        if (c == '\n')
            return false;
        if (c == '"')
            break;
        if (c == '\\') {
            c = next_char(r);
            if (c == '\n')
                return false;
        }
        buf_add(sub, (char)c);
    }
    return next_char(r) == ']';
}

/* A section header after '[': section (lower case) and subsection. */
static bool parse_header(reader *r, buf *section, buf *sub, bool *has_sub)
{
    buf_reset(section);
    buf_reset(sub);
    *has_sub = false;
    for (;;) {
        int c = next_char(r);
        if (r->eof)
            return false;
        if (c == ']')
            break;
        if (is_space(c)) {
            if (!parse_subsection(r, c, sub))
                return false;
            *has_sub = true;
            break;
        }
        if (!is_key_char(c) && c != '.')
            return false;
        buf_add(section, lower(c));
    }
    if (section->len == 0)
        return false;
    /* git names the variable "name.sub.key" and takes the section up to
     * the first dot: a dot in the name ("[section.sub]", git's old form,
     * lower-cased with the rest) starts the subsection, ahead of a quoted
     * one if there is one too. */
    char *dot = strchr(section->s, '.');
    if (dot) {
        buf full = {0};
        buf_reset(&full);
        for (const char *q = dot + 1; *q; q++)
            buf_add(&full, *q);
        if (*has_sub) {
            buf_add(&full, '.');
            for (size_t i = 0; i < sub->len; i++)
                buf_add(&full, sub->s[i]);
        }
        free(sub->s);
        *sub = full;
        *dot = '\0';
        section->len = (size_t)(dot - section->s);
        *has_sub = true;
    }
    return true;
}

int sb_gitconfig_parse_text(const char *text, size_t len, const char *name, sb_gitconfig_fn fn, void *user,
                            char *err, size_t errlen)
{
    reader r = {(const unsigned char *)text, (const unsigned char *)text + len, false, 1};
    buf section = {0}, sub = {0}, key = {0}, value = {0};
    bool has_sub = false, comment = false, in_section = false;
    int rc = 0;
    /* A UTF-8 byte order mark at the start is skipped, as git does. */
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        r.p += 3;
    for (;;) {
        int c = next_char(&r);
        if (c == '\n') {
            if (r.eof)
                break;
            comment = false;
            continue;
        }
        if (comment || is_space(c))
            continue;
        if (c == '#' || c == ';') {
            comment = true;
            continue;
        }
        if (c == '[') {
            if (!parse_header(&r, &section, &sub, &has_sub))
                goto bad;
            /* "[.sub]" names no section (git takes it, as ".sub.key"):
             * its variables mean nothing to git either. */
            in_section = section.len > 0;
            continue;
        }
        if (!is_alpha(c))
            goto bad;
        /* A variable: its name, then nothing or "= value". */
        buf_reset(&key);
        buf_add(&key, lower(c));
        for (;;) {
            c = next_char(&r);
            if (r.eof || !is_key_char(c))
                break;
            buf_add(&key, lower(c));
        }
        while (c == ' ' || c == '\t')
            c = next_char(&r);
        const char *v = NULL;
        if (c != '\n') {
            if (c != '=' || !parse_value(&r, &value))
                goto bad;
            v = value.s;
        }
        /* git takes a variable before any section, or under an empty
         * one, too; it can mean nothing to git, so it is not passed on. */
        rc = in_section ? fn(user, section.s, has_sub ? sub.s : NULL, key.s, v) : 0;
        if (rc != 0)
            goto out;
        if (r.eof)
            break;
    }
    rc = 0;
    goto out;
bad:
    {
        /* The newline that ended the bad line was counted already. */
        int line = r.line;
        if (!r.eof && r.p > (const unsigned char *)text && r.p[-1] == '\n')
            line--;
        snprintf(err, errlen, "bad git config line %d in %s (git refuses this file too: fix it)", line, name);
    }
    rc = -1;
out:
    free(section.s);
    free(sub.s);
    free(key.s);
    free(value.s);
    return rc;
}

int sb_gitconfig_parse_file(const char *path, sb_gitconfig_fn fn, void *user, bool *absent, char *err,
                            size_t errlen)
{
    *absent = false;
    /* O_NONBLOCK: a FIFO planted where a config is expected must not hang
     * us; only a regular file is read. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            *absent = true;
            return 0;
        }
        snprintf(err, errlen, "cannot read git config %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        *absent = true;
        return 0;
    }
    if ((unsigned long long)st.st_size > SB_GITCONFIG_MAX_BYTES) {
        close(fd);
        snprintf(err, errlen, "git config %s is larger than %u MiB: corral cannot check what it makes git run; "
                 "make it smaller", path, SB_GITCONFIG_MAX_BYTES >> 20);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    char *text = sb_alloc(size + 1);
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, text + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    int e = errno;
    close(fd);
    if (got < size) {
        snprintf(err, errlen, "cannot read git config %s: %s", path, got < size && e ? strerror(e) : "short read");
        free(text);
        return -1;
    }
    int rc = sb_gitconfig_parse_text(text, size, path, fn, user, err, errlen);
    free(text);
    return rc;
}

bool sb_gitconfig_bool(const char *value)
{
    if (!value)
        return true;
    if (strcasecmp(value, "true") == 0 || strcasecmp(value, "yes") == 0 || strcasecmp(value, "on") == 0)
        return true;
    /* Otherwise a number, which may carry a unit as git's numbers do
     * ("1k" is 1024: true).  What git cannot read it refuses to run with. */
    char *end;
    long n = strtol(value, &end, 0);
    if (end != value && *end && strchr("kKmMgG", *end))
        end++;
    return end != value && *end == '\0' && n != 0;
}
