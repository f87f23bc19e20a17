/*
 * trust.c - see trust.h.
 */
#include "config.h"

#include "base/paths.h"
#include "policy/rules.h"
#include "policy/trust.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

char *trust_file(void)
{
    char *dir = paths_config_dir();
    char *p = xasprintf("%s/trusted", dir);
    free(dir);
    return p;
}

char *trust_canonical(const char *dir, char *err, size_t errlen)
{
    char buf[PATH_MAX];
    if (!realpath(dir, buf)) {
        snprintf(err, errlen, "cannot trust %s: %s", dir, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot trust %s: not a directory (trust the workspace directory itself)", dir);
        return NULL;
    }
    /* The list has one directory per line. */
    if (strpbrk(buf, "\n\r")) {
        snprintf(err, errlen, "cannot trust %s: its path holds a line break", dir);
        return NULL;
    }
    return xstrdup(buf);
}

/* ---- digests ------------------------------------------------------------------------ */

void trust_rules_digest(trust_rules *r)
{
    sha256_ctx c;
    sha256_init(&c);
    for (size_t i = 0; i < r->n; i++) {
        sha256_update(&c, r->files[i].name, strlen(r->files[i].name) + 1); /* with its NUL */
        sha256_update(&c, r->files[i].sha, SHA256_LEN);
    }
    sha256_final(&c, r->digest);
}

void trust_rules_free(trust_rules *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->files[i].name);
    free(r->files);
    memset(r, 0, sizeof *r);
}

void trust_snapshot_read(char *const *paths, trust_snapshot *s)
{
    memset(s, 0, sizeof *s);
    size_t n = 0;
    while (paths[n])
        n++;
    s->rules.files = xcalloc(n + 1, sizeof *s->rules.files);
    s->path = xcalloc(n + 1, sizeof *s->path);
    s->text = xcalloc(n + 1, sizeof *s->text);
    s->len = xcalloc(n + 1, sizeof *s->len);
    s->error = xcalloc(n + 1, sizeof *s->error);
    for (size_t i = 0; i < n; i++) {
        trust_rulefile *f = &s->rules.files[i];
        const char *slash = strrchr(paths[i], '/');
        f->name = xstrdup(slash ? slash + 1 : paths[i]);
        s->path[i] = xstrdup(paths[i]);
        char err[PATH_MAX + 256];
        /* No symlinks: the digest is of what the directory holds, and a
         * link could name a file the sandbox cannot see but we can read. */
        if (rules_read_file(paths[i], true, &s->text[i], &s->len[i], err, sizeof err) < 0) {
            s->error[i] = xstrdup(err);
            continue;
        }
        sha256(s->text[i], s->len[i], f->sha);
        f->readable = true;
    }
    s->rules.n = n;
    trust_rules_digest(&s->rules);
}

void trust_snapshot_free(trust_snapshot *s)
{
    for (size_t i = 0; i < s->rules.n; i++) {
        free(s->path[i]);
        free(s->text[i]);
        free(s->error[i]);
    }
    free(s->path);
    free(s->text);
    free(s->len);
    free(s->error);
    trust_rules_free(&s->rules);
}

/* ---- the list ------------------------------------------------------------------------- */

void trust_list_free(trust_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].dir);
        trust_rules_free(&l->v[i].rules);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

const trust_entry *trust_find(const trust_list *l, const char *dir)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].dir, dir) == 0)
            return &l->v[i];
    return NULL;
}

static void put_name(buf_t *b, const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if (*p == '\\')
            buf_puts(b, "\\\\");
        else if (*p < 0x20 || *p == 0x7f)
            buf_printf(b, "\\x%02x", *p);
        else
            buf_putc(b, (char)*p);
    }
}

/* The name written by put_name, or NULL when s is not one. */
static char *get_name(const char *s, size_t len)
{
    buf_t b;
    buf_init(&b);
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '\\') {
            buf_putc(&b, s[i]);
        } else if (i + 1 < len && s[i + 1] == '\\') {
            buf_putc(&b, '\\');
            i++;
        } else if (i + 3 < len && s[i + 1] == 'x' && isxdigit((unsigned char)s[i + 2]) &&
                   isxdigit((unsigned char)s[i + 3]) && (s[i + 2] != '0' || s[i + 3] != '0')) {
            char hex[3] = {s[i + 2], s[i + 3], 0};
            buf_putc(&b, (char)strtoul(hex, NULL, 16));
            i += 3;
        } else {
            buf_free(&b);
            return NULL;
        }
    }
    if (!b.len) {
        buf_free(&b);
        return NULL;
    }
    return buf_steal(&b);
}

void trust_format(buf_t *b, const trust_list *l)
{
    buf_puts(b, "# Trusted workspaces (corral trust DIR, corral.rules(5)): each one's .corral/rules/*.rules load\n"
                "# while they still hash to the digest recorded when it was trusted.\n");
    char hex[SHA256_HEX_LEN + 1];
    for (size_t i = 0; i < l->n; i++) {
        const trust_entry *e = &l->v[i];
        if (!e->pinned) {
            buf_printf(b, "%s\n", e->dir);
            continue;
        }
        sha256_hex(e->rules.digest, hex);
        buf_printf(b, "sha256:%s %s\n", hex, e->dir);
        for (size_t k = 0; k < e->rules.n; k++) {
            sha256_hex(e->rules.files[k].sha, hex);
            buf_printf(b, "  sha256:%s ", hex);
            put_name(b, e->rules.files[k].name);
            buf_putc(b, '\n');
        }
    }
}

/* "sha256:HEX " at s: the digest into d and the length of that prefix, or 0. */
static size_t digest_prefix(const char *s, size_t len, unsigned char d[SHA256_LEN])
{
    size_t want = 7 + SHA256_HEX_LEN + 1;
    if (len < want || memcmp(s, "sha256:", 7) != 0 || s[want - 1] != ' ' ||
        sha256_from_hex(s + 7, SHA256_HEX_LEN, d) < 0)
        return 0;
    return want;
}

/* The entry just read: does what its file lines say add up to its digest? */
static void seal(trust_entry *e)
{
    if (!e || !e->pinned)
        return;
    unsigned char recorded[SHA256_LEN];
    memcpy(recorded, e->rules.digest, SHA256_LEN);
    trust_rules_digest(&e->rules);
    e->damaged = memcmp(recorded, e->rules.digest, SHA256_LEN) != 0;
    memcpy(e->rules.digest, recorded, SHA256_LEN);
}

void trust_parse(const char *text, size_t len, trust_list *out)
{
    memset(out, 0, sizeof *out);
    trust_entry *cur = NULL; /* the pinned entry whose file lines follow */
    bool skipping = false;   /* the lines of a duplicate entry */
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len, n = end - i;
        const char *line = text + i;
        i = end + 1;
        while (n > 0 && line[n - 1] == '\r')
            n--;
        unsigned char d[SHA256_LEN];
        size_t k;
        if (n > 2 && line[0] == ' ' && line[1] == ' ' && (k = digest_prefix(line + 2, n - 2, d)) > 0) {
            if (!cur || skipping)
                continue;
            char *name = get_name(line + 2 + k, n - 2 - k);
            trust_rulefile f = {name, {0}, true};
            memcpy(f.sha, d, SHA256_LEN);
            if (!name) /* a line we cannot read: the digest will not add up */
                f.name = xstrdup("");
            cur->rules.files = xrealloc(cur->rules.files, (cur->rules.n + 1) * sizeof *cur->rules.files);
            cur->rules.files[cur->rules.n++] = f;
            continue;
        }
        /* Only absolute paths count: a stray relative line (a hand edit)
         * would otherwise trust whatever directory it happens to name. */
        bool pinned = (k = digest_prefix(line, n, d)) > 0 && k < n && line[k] == '/';
        if (!pinned && !(n > 0 && line[0] == '/'))
            continue;
        seal(cur);
        cur = NULL;
        char *dir = pinned ? xstrndup(line + k, n - k) : xstrndup(line, n);
        skipping = trust_find(out, dir) != NULL; /* the first record of a directory counts */
        if (skipping) {
            free(dir);
            continue;
        }
        out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
        cur = &out->v[out->n++];
        memset(cur, 0, sizeof *cur);
        cur->dir = dir;
        cur->pinned = pinned;
        if (pinned)
            memcpy(cur->rules.digest, d, SHA256_LEN);
    }
    seal(cur);
}

int trust_read(const char *file, trust_list *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot read the trusted workspaces %s: %s", file, strerror(errno));
        return -1;
    }
    buf_t b;
    buf_init(&b);
    int rc = read_all(fd, SIZE_MAX, &b);
    close(fd);
    if (rc < 0) {
        snprintf(err, errlen, "cannot read the trusted workspaces %s: %s", file, strerror(-rc));
        buf_free(&b);
        return -1;
    }
    trust_parse(b.data ? b.data : "", b.len, out);
    buf_free(&b);
    return 0;
}

/* ---- is it current ---------------------------------------------------------------------- */

static void rules_dir_of(buf_t *b, const char *ws)
{
    buf_printf(b, "%s/.corral/rules", strcmp(ws, "/") == 0 ? "" : ws);
}

bool trust_current(const trust_entry *e, const trust_rules *now, buf_t *why)
{
    bool readable = true;
    for (size_t i = 0; i < now->n; i++)
        readable = readable && now->files[i].readable;
    if (!e->pinned) {
        if (now->n == 0)
            return true; /* nothing to load either way */
        if (why) {
            rules_dir_of(why, e->dir);
            buf_printf(why, ": %s was trusted before corral pinned trust to the rules it loads: review them and "
                            "run `corral trust %s` again", e->dir, e->dir);
        }
        return false;
    }
    if (!e->damaged && readable && memcmp(e->rules.digest, now->digest, SHA256_LEN) == 0)
        return true;
    if (!why)
        return false;
    if (e->damaged) {
        rules_dir_of(why, e->dir);
        buf_printf(why, ": the record of what you trusted there does not add up (edited by hand?): review them and "
                        "run `corral trust %s` again", e->dir);
        return false;
    }
    /* Both lists are in name order: walk them together. */
    rules_dir_of(why, e->dir);
    buf_puts(why, " changed since you trusted it (");
    const trust_rules *was = &e->rules;
    size_t i = 0, k = 0;
    bool first = true;
    while (i < was->n || k < now->n) {
        int cmp = i == was->n ? 1 : k == now->n ? -1 : strcmp(was->files[i].name, now->files[k].name);
        const char *what = NULL, *name;
        if (cmp < 0) {
            name = was->files[i++].name, what = "removed";
        } else if (cmp > 0) {
            name = now->files[k].name, what = now->files[k].readable ? "added" : "added, unreadable";
            k++;
        } else {
            name = now->files[k].name;
            if (!now->files[k].readable)
                what = "unreadable";
            else if (memcmp(was->files[i].sha, now->files[k].sha, SHA256_LEN) != 0)
                what = "changed";
            i++, k++;
        }
        if (!what)
            continue;
        buf_printf(why, "%s", first ? "" : ", ");
        put_name(why, name);
        buf_printf(why, " %s", what);
        first = false;
    }
    buf_printf(why, "): review them and run `corral trust %s` again", e->dir);
    return false;
}

/* ---- changing the list ---------------------------------------------------------------------- */

/* Rewrite file with list, atomically: a reader sees the old list or the
 * new one, never half of one. */
static int write_list(const char *file, const trust_list *list, char *err, size_t errlen)
{
    char *tmp = xasprintf("%s.tmp.%d", file, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = -1;
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    buf_t b;
    buf_init(&b);
    trust_format(&b, list);
    int e = write_all(fd, b.data, b.len);
    if (e == 0 && fsync(fd) < 0)
        e = -errno;
    if (close(fd) < 0 && e == 0)
        e = -errno;
    if (e == 0 && rename(tmp, file) < 0)
        e = -errno;
    if (e < 0) {
        snprintf(err, errlen, "cannot write %s: %s", file, strerror(-e));
        unlink(tmp);
    } else {
        rc = 0;
    }
    buf_free(&b);
    free(tmp);
    return rc;
}

static void copy_rules(trust_rules *dst, const trust_rules *src)
{
    dst->n = src->n;
    dst->files = xcalloc(src->n + 1, sizeof *dst->files);
    for (size_t i = 0; i < src->n; i++) {
        dst->files[i] = src->files[i];
        dst->files[i].name = xstrdup(src->files[i].name);
    }
    memcpy(dst->digest, src->digest, SHA256_LEN);
}

/* Read, change and rewrite the list under an flock on a lock file beside
 * it (the list itself is replaced by rename, so it cannot hold the lock).
 * rules NULL: remove dir. */
static int update(const char *file, const char *dir, const trust_rules *rules, trust_change *was, bool *removed,
                  char *err, size_t errlen)
{
    char *parent = xstrdup(file);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent)
        *slash = '\0';
    int e = mkdir_p(parent, 0700);
    free(parent);
    if (e < 0) {
        snprintf(err, errlen, "cannot create the directory of %s: %s", file, strerror(-e));
        return -1;
    }
    char *lock = xasprintf("%s.lock", file);
    int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lfd < 0 || flock(lfd, LOCK_EX) < 0) {
        snprintf(err, errlen, "cannot lock %s: %s", lock, strerror(errno));
        if (lfd >= 0)
            close(lfd);
        free(lock);
        return -1;
    }
    free(lock);
    trust_list list;
    if (trust_read(file, &list, err, errlen) < 0) {
        close(lfd);
        return -1;
    }
    bool write = false;
    trust_entry *there = (trust_entry *)trust_find(&list, dir);
    if (!rules) {
        *removed = there != NULL;
        if (there) {
            size_t i = (size_t)(there - list.v);
            free(there->dir);
            trust_rules_free(&there->rules);
            memmove(&list.v[i], &list.v[i + 1], (list.n - i - 1) * sizeof *list.v);
            list.n--;
            write = true;
        }
    } else if (there && there->pinned && !there->damaged && trust_current(there, rules, NULL)) {
        if (was)
            *was = TRUST_SAME;
    } else {
        if (!there) {
            list.v = xrealloc(list.v, (list.n + 1) * sizeof *list.v);
            there = &list.v[list.n++];
            memset(there, 0, sizeof *there);
            there->dir = xstrdup(dir);
            if (was)
                *was = TRUST_NEW;
        } else {
            trust_rules_free(&there->rules);
            if (was)
                *was = TRUST_REPINNED;
        }
        there->pinned = true;
        there->damaged = false;
        copy_rules(&there->rules, rules);
        write = true;
    }
    int rc = write ? write_list(file, &list, err, errlen) : 0;
    trust_list_free(&list);
    close(lfd);
    return rc;
}

int trust_add(const char *file, const char *dir, const trust_rules *rules, trust_change *was, char *err,
              size_t errlen)
{
    for (size_t i = 0; i < rules->n; i++) {
        if (!rules->files[i].readable) {
            snprintf(err, errlen, "cannot trust %s: %s in its .corral/rules cannot be read", dir, rules->files[i].name);
            return -1;
        }
    }
    return update(file, dir, rules, was, NULL, err, errlen);
}

int trust_remove(const char *file, const char *dir, bool *changed, char *err, size_t errlen)
{
    *changed = false;
    return update(file, dir, NULL, NULL, changed, err, errlen);
}
