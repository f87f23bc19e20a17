/*
 * git_quarantine.c - see git_quarantine.h.
 */
#include "config.h"

#include "snap/git_quarantine.h"

#include "sandbox/gitconfig.h"
#include "base/quote.h"
#include "base/sha256.h"
#include "snap/snap_gitdir.h"
#include "snap/snap_walk.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define QUARANTINE_DIR "corral-quarantine"
#define HOOK_MAX (1u << 20)
/* What a reviewer is shown of one hook: its first line, this long at most. */
#define HOOK_LINE_SHOWN 200

static void add_error(gq_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_error(gq_result *r, const char *fmt, ...)
{
    char text[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    r->errors = xrealloc(r->errors, (r->n_errors + 1) * sizeof *r->errors);
    r->errors[r->n_errors++] = xstrdup(text);
}

static gq_item *add_item(gq_result *r)
{
    r->items = xrealloc(r->items, (r->n + 1) * sizeof *r->items);
    gq_item *it = &r->items[r->n++];
    memset(it, 0, sizeof *it);
    return it;
}

void gq_result_free(gq_result *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->items[i].path);
        free(r->items[i].moved_to);
        free(r->items[i].replaced);
        free(r->items[i].runs);
    }
    free(r->items);
    for (size_t i = 0; i < r->n_errors; i++)
        free(r->errors[i]);
    free(r->errors);
    memset(r, 0, sizeof *r);
}

static char *join(const char *a, const char *b)
{
    return *a ? xasprintf("%s/%s", a, b) : xstrdup(b);
}

static void hex_of(const void *data, size_t len, char out[65])
{
    unsigned char d[SHA256_LEN];
    sha256(data, len, d);
    sha256_hex(d, out);
}

/* A regular file below dirfd, not following a symlink, at most max bytes:
 * its bytes (NULL when it is not that). */
static char *read_at(int dirfd, const char *name, size_t max, size_t *len)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *text = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= max)
        text = snap_read_fd(fd, max, len);
    close(fd);
    return text;
}

/* A directory's fingerprint: each entry's name, type and (for a file)
 * content digest, sorted; subdirectories by name only. */
static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool dir_fingerprint(int dirfd, char out[65], char **runs)
{
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    rewinddir(d);
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        names = xrealloc(names, (n + 1) * sizeof *names);
        names[n++] = xstrdup(e->d_name);
    }
    if (n)
        qsort(names, n, sizeof *names, name_cmp);
    buf_t fp, shown;
    buf_init(&fp);
    buf_init(&shown);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        char sha[65] = "-";
        size_t len = 0;
        char *text = S_ISREG(st.st_mode) ? read_at(dirfd, names[i], HOOK_MAX, &len) : NULL;
        if (text)
            hex_of(text, len, sha);
        buf_printf(&fp, "%s%c%o%c%s\n", names[i], 0, (unsigned)st.st_mode, 0, sha);
        size_t nl = strlen(names[i]);
        if (runs && !(nl > 7 && strcmp(names[i] + nl - 7, ".sample") == 0)) {
            char *name = quote_text_visible(names[i], nl);
            if (text) {
                size_t first = strcspn(text, "\n");
                char *line = quote_text_visible(text, first < HOOK_LINE_SHOWN ? first : HOOK_LINE_SHOWN);
                buf_printf(&shown, "hook %s (%zu bytes%s): %s%s\n", name, len, (st.st_mode & 0111) ? ", executable" : "",
                           line, first > HOOK_LINE_SHOWN ? "..." : "");
                free(line);
            } else {
                buf_printf(&shown, "hook %s (%s)\n", name, S_ISLNK(st.st_mode) ? "a symlink" : S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
            }
            free(name);
        }
        free(text);
        free(names[i]);
    }
    free(names);
    closedir(d);
    hex_of(fp.data ? fp.data : "", fp.len, out);
    buf_free(&fp);
    if (runs)
        *runs = shown.len ? buf_steal(&shown) : NULL;
    buf_free(&shown);
    return true;
}

/* ---- the config ------------------------------------------------------------------- */

bool gq_key_allowed(const char *section, const char *key)
{
    /* What a repository needs to work and to know its remotes and
     * branches; nothing here names a program, a path git runs or reads
     * more config from. */
    static const char *const allowed[] = {
        "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
        "core.ignorecase", "core.precomposeunicode", "core.symlinks",
        "remote.url", "remote.pushurl", "remote.fetch", "remote.push", "remote.tagopt", "remote.prune",
        "remote.mirror",
        "branch.remote", "branch.merge", "branch.rebase", "branch.pushremote", "branch.description",
        "user.name", "user.email", "init.defaultbranch",
        "submodule.url", "submodule.active", "submodule.branch",
        NULL};
    if (strcmp(section, "extensions") == 0)
        return true; /* the repository's format: without them it cannot be read */
    for (const char *const *a = allowed; *a; a++) {
        const char *dot = strchr(*a, '.');
        if (strlen(section) == (size_t)(dot - *a) && strncmp(*a, section, (size_t)(dot - *a)) == 0 &&
            strcmp(dot + 1, key) == 0)
            return true;
    }
    return false;
}

typedef struct cfg_split {
    buf_t kept;      /* the reduced config */
    buf_t runs;      /* what was taken out, as text */
    char last_section[256];
    char last_sub[512];
    bool have_section;
    size_t dropped;
} cfg_split;

static void put_quoted(buf_t *b, const char *s)
{
    buf_putc(b, '"');
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '"': buf_puts(b, "\\\""); break;
        case '\\': buf_puts(b, "\\\\"); break;
        case '\n': buf_puts(b, "\\n"); break;
        case '\t': buf_puts(b, "\\t"); break;
        case '\b': buf_puts(b, "\\b"); break;
        default: buf_putc(b, *p); break;
        }
    }
    buf_putc(b, '"');
}

static int split_var(void *user, const char *section, const char *sub, const char *key, const char *value)
{
    cfg_split *c = user;
    if (gq_key_allowed(section, key)) {
        if (!c->have_section || strcmp(c->last_section, section) != 0 || strcmp(c->last_sub, sub ? sub : "") != 0) {
            buf_printf(&c->kept, "[%s", section);
            if (sub) {
                buf_putc(&c->kept, ' ');
                put_quoted(&c->kept, sub);
            }
            buf_puts(&c->kept, "]\n");
            snprintf(c->last_section, sizeof c->last_section, "%s", section);
            snprintf(c->last_sub, sizeof c->last_sub, "%s", sub ? sub : "");
            c->have_section = true;
        }
        buf_printf(&c->kept, "\t%s", key);
        if (value) {
            buf_puts(&c->kept, " = ");
            put_quoted(&c->kept, value);
        }
        buf_putc(&c->kept, '\n');
        return 0;
    }
    c->dropped++;
    char *name = sub ? xasprintf("%s.%s.%s", section, sub, key) : xasprintf("%s.%s", section, key);
    char *shown_name = quote_text_visible(name, strlen(name));
    char *shown_value = value ? quote_text_visible(value, strlen(value)) : NULL;
    buf_printf(&c->runs, "%s = %s\n", shown_name, shown_value ? shown_value : "true");
    free(shown_name);
    free(shown_value);
    free(name);
    return 0;
}

/* The quarantine of one repository: its git directory's corral-quarantine/STAMP,
 * made on first use.  -1 when it cannot be made. */
typedef struct quar {
    int gfd;            /* the git directory */
    const char *gitdir; /* workspace-relative */
    const char *stamp;
    char *rel;          /* corral-quarantine/STAMP (relative to gfd), once made */
    int fd;
} quar;

static int quar_dir(quar *q, gq_result *out)
{
    if (q->fd >= 0)
        return q->fd;
    if (mkdirat(q->gfd, QUARANTINE_DIR, 0700) < 0 && errno != EEXIST) {
        add_error(out, "%s: cannot make %s: %s", q->gitdir, QUARANTINE_DIR, strerror(errno));
        return -1;
    }
    int top = openat(q->gfd, QUARANTINE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (top < 0) {
        add_error(out, "%s: %s is not a directory of its own: %s", q->gitdir, QUARANTINE_DIR, strerror(errno));
        return -1;
    }
    for (int i = 0; i < 100; i++) {
        char name[128];
        if (i == 0)
            snprintf(name, sizeof name, "%s", q->stamp);
        else
            snprintf(name, sizeof name, "%s-%d", q->stamp, i + 1);
        if (mkdirat(top, name, 0700) == 0) {
            q->fd = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            q->rel = xasprintf(QUARANTINE_DIR "/%s", name);
            break;
        }
        if (errno != EEXIST)
            break;
    }
    close(top);
    if (q->fd < 0)
        add_error(out, "%s: cannot make a quarantine directory in %s", q->gitdir, QUARANTINE_DIR);
    return q->fd;
}

/* Write text as name in dirfd, made anew (the old one moved away first). */
static int write_new(int dirfd, const char *name, const char *text, size_t len)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    int rc = write_all(fd, text, len);
    if (close(fd) < 0 && rc == 0)
        rc = -1;
    return rc < 0 ? -1 : 0;
}

static void quarantine_config(quar *q, const char *name, gq_result *out)
{
    size_t len = 0;
    char *text = read_at(q->gfd, name, SB_GITCONFIG_MAX_BYTES, &len);
    struct stat st;
    bool present = fstatat(q->gfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (!present)
        return;
    cfg_split c;
    memset(&c, 0, sizeof c);
    buf_init(&c.kept);
    buf_init(&c.runs);
    char err[300];
    char *path = join(q->gitdir, name);
    bool whole = !text || sb_gitconfig_parse_text(text, len, path, split_var, &c, err, sizeof err) != 0;
    if (whole) {
        /* Not a config git would read as such (a symlink, a FIFO, too
         * large, malformed): all of it goes. */
        buf_reset(&c.kept);
        buf_reset(&c.runs);
        buf_printf(&c.runs, "%s: %s\n", name, !text ? "not a regular file of at most 4 MiB" : err);
        if (strcmp(name, "config") == 0)
            buf_puts(&c.kept, "[core]\n\trepositoryformatversion = 0\n");
    }
    if (whole || c.dropped) {
        int qfd = quar_dir(q, out);
        char *moved = xasprintf("%s.quarantined", name);
        if (qfd >= 0 && renameat(q->gfd, name, qfd, moved) == 0) {
            gq_item *it = add_item(out);
            it->path = path;
            path = NULL;
            it->moved_to = xasprintf("%s/%s/%s", q->gitdir, q->rel, moved);
            if (text)
                hex_of(text, len, it->sha);
            else
                snprintf(it->sha, sizeof it->sha, "-");
            it->runs = buf_steal(&c.runs);
            if (c.kept.len && write_new(q->gfd, name, c.kept.data, c.kept.len) == 0) {
                char sha[65];
                hex_of(c.kept.data, c.kept.len, sha);
                it->replaced = xstrdup(sha);
            } else if (c.kept.len) {
                add_error(out, "%s: cannot write the reduced config: %s", it->path, strerror(errno));
            }
        } else if (qfd >= 0) {
            add_error(out, "%s: cannot move it aside: %s", path, strerror(errno));
        }
        free(moved);
    }
    free(path);
    free(text);
    buf_free(&c.kept);
    buf_free(&c.runs);
}

static void quarantine_hooks(quar *q, gq_result *out)
{
    struct stat st;
    if (fstatat(q->gfd, "hooks", &st, AT_SYMLINK_NOFOLLOW) < 0)
        return;
    char sha[65] = "-";
    char *runs = NULL;
    if (S_ISDIR(st.st_mode)) {
        int hfd = openat(q->gfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        bool ok = hfd >= 0 && dir_fingerprint(hfd, sha, &runs);
        if (hfd >= 0)
            close(hfd);
        if (ok && !runs)
            return; /* nothing but samples: nothing runs */
        if (!ok)
            runs = xstrdup("hooks/ (cannot be listed)\n");
    } else {
        runs = xstrdup(S_ISLNK(st.st_mode) ? "hooks is a symlink\n" : "hooks is not a directory\n");
    }
    int qfd = quar_dir(q, out);
    if (qfd >= 0 && renameat(q->gfd, "hooks", qfd, "hooks.quarantined") == 0) {
        gq_item *it = add_item(out);
        it->path = join(q->gitdir, "hooks");
        it->moved_to = xasprintf("%s/%s/hooks.quarantined", q->gitdir, q->rel);
        snprintf(it->sha, sizeof it->sha, "%s", sha);
        it->runs = runs;
        runs = NULL;
        if (mkdirat(q->gfd, "hooks", 0755) == 0)
            it->replaced = xstrdup("empty directory");
    } else if (qfd >= 0) {
        add_error(out, "%s/hooks: cannot move it aside: %s", q->gitdir, strerror(errno));
    }
    free(runs);
}

static void quarantine_file(int dirfd, const char *dir_rel, const char *name, const char *moved, const char *why,
                            gq_result *out)
{
    size_t len = 0;
    char *text = read_at(dirfd, name, 4096, &len);
    if (renameat(dirfd, name, dirfd, moved) < 0) {
        add_error(out, "%s/%s: cannot move it aside: %s", dir_rel, name, strerror(errno));
        free(text);
        return;
    }
    gq_item *it = add_item(out);
    it->path = join(dir_rel, name);
    it->moved_to = join(dir_rel, moved);
    if (text) {
        hex_of(text, len, it->sha);
        char *shown = quote_text_visible(text, len);
        it->runs = xasprintf("%s: %s\n", why, shown);
        free(shown);
    } else {
        snprintf(it->sha, sizeof it->sha, "-");
        char target[PATH_MAX];
        ssize_t n = readlinkat(dirfd, moved, target, sizeof target - 1);
        char *shown = quote_text_visible(target, n > 0 ? (size_t)n : 0);
        it->runs = xasprintf("%s: a symlink to %s\n", why, shown);
        free(shown);
    }
    free(text);
}

/* rel/target ("a/b" joined with "../c") as a workspace-relative path
 * without "." or ".." components; NULL when it leaves the workspace. */
static char *inside(const char *base, const char *target)
{
    char *all = *base ? xasprintf("%s/%s", base, target) : xstrdup(target);
    char **parts = NULL;
    size_t n = 0;
    bool ok = true;
    for (char *save = NULL, *c = strtok_r(all, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (strcmp(c, ".") == 0)
            continue;
        if (strcmp(c, "..") == 0) {
            if (n == 0) {
                ok = false;
                break;
            }
            n--;
            continue;
        }
        parts = xrealloc(parts, (n + 1) * sizeof *parts);
        parts[n++] = c;
    }
    char *out = NULL;
    if (ok && n) {
        buf_t b;
        buf_init(&b);
        for (size_t i = 0; i < n; i++)
            buf_printf(&b, "%s%s", i ? "/" : "", parts[i]);
        out = buf_steal(&b);
    }
    free(parts);
    free(all);
    return out;
}

/* Where a .git symlink or "gitdir:" file at repo points, as a
 * workspace-relative path, when that is a directory inside the workspace
 * reached without another symlink; NULL otherwise. */
static char *pointed_gitdir(int wsfd, int dfd, const char *repo, const char *ws_path)
{
    char target[PATH_MAX];
    struct stat st;
    if (fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
        return NULL;
    if (S_ISLNK(st.st_mode)) {
        ssize_t n = readlinkat(dfd, ".git", target, sizeof target - 1);
        if (n <= 0)
            return NULL;
        target[n] = '\0';
    } else {
        size_t len = 0;
        char *text = read_at(dfd, ".git", 4096, &len);
        if (!text || strncmp(text, "gitdir: ", 8) != 0) {
            free(text);
            return NULL;
        }
        text[8 + strcspn(text + 8, "\r\n")] = '\0';
        snprintf(target, sizeof target, "%s", text + 8);
        free(text);
    }
    char *rel;
    if (target[0] == '/') {
        size_t wl = ws_path ? strlen(ws_path) : 0;
        if (!wl || strncmp(target, ws_path, wl) != 0 || target[wl] != '/')
            return NULL;
        rel = inside("", target + wl + 1);
    } else {
        rel = inside(repo, target);
    }
    int gfd = rel ? snap_open_beneath(wsfd, rel, O_RDONLY | O_DIRECTORY) : -1;
    if (gfd < 0) {
        free(rel);
        return NULL;
    }
    close(gfd);
    return rel;
}

/* The git directory at gitdir (workspace-relative) made inert. */
static void quarantine_gitdir(int wsfd, const char *gitdir, const char *stamp, gq_result *out)
{
    int gfd = snap_open_beneath(wsfd, gitdir, O_RDONLY | O_DIRECTORY);
    if (gfd < 0) {
        add_error(out, "%s: cannot open it without following a symlink: %s", gitdir, strerror(errno));
        return;
    }
    quar q = {.gfd = gfd, .gitdir = gitdir, .stamp = stamp, .fd = -1};
    quarantine_config(&q, "config", out);
    quarantine_config(&q, "config.worktree", out);
    quarantine_hooks(&q, out);
    struct stat st;
    if (fstatat(gfd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0 && quar_dir(&q, out) >= 0) {
        if (renameat(gfd, "commondir", q.fd, "commondir.quarantined") == 0) {
            gq_item *it = add_item(out);
            it->path = join(gitdir, "commondir");
            it->moved_to = xasprintf("%s/%s/commondir.quarantined", gitdir, q.rel);
            size_t len = 0;
            char *text = read_at(q.fd, "commondir.quarantined", 4096, &len);
            hex_of(text ? text : "", len, it->sha);
            char *shown = quote_text_visible(text ? text : "", len);
            it->runs = xasprintf("commondir (git would take config and hooks from there): %s\n", shown);
            free(shown);
            free(text);
        }
    }
    /* An empty quarantine (nothing was moved after all) is not left. */
    if (q.fd >= 0) {
        close(q.fd);
        unlinkat(gfd, q.rel, AT_REMOVEDIR);
        unlinkat(gfd, QUARANTINE_DIR, AT_REMOVEDIR);
    }
    free(q.rel);
    close(gfd);
}

void gq_repo(int wsfd, const char *repo, const char *stamp, gq_result *out)
{
    if (!*repo)
        return;
    int dfd = snap_open_beneath(wsfd, repo, O_RDONLY | O_DIRECTORY);
    if (dfd < 0) {
        if (errno != ENOENT)
            add_error(out, "%s: cannot open it without following a symlink: %s", repo, strerror(errno));
        return;
    }
    struct stat st;
    if (fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0) {
        close(dfd);
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        /* A .git symlink or file: when it leads to a git directory inside
         * the workspace, that one is made inert (and the next sandbox
         * protects it through the pointer, pinned); anywhere else, the
         * pointer itself goes. */
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", wsfd);
        char ws_path[PATH_MAX];
        ssize_t n = readlink(proc, ws_path, sizeof ws_path - 1);
        if (n > 0)
            ws_path[n] = '\0';
        char *target = pointed_gitdir(wsfd, dfd, repo, n > 0 ? ws_path : NULL);
        if (target) {
            quarantine_gitdir(wsfd, target, stamp, out);
            free(target);
        } else {
            char moved[160];
            snprintf(moved, sizeof moved, ".git.corral-quarantined-%s", stamp);
            quarantine_file(dfd, repo, ".git", moved, "its .git points outside the workspace", out);
        }
        close(dfd);
        return;
    }
    close(dfd);
    char *gitdir = join(repo, ".git");
    quarantine_gitdir(wsfd, gitdir, stamp, out);
    free(gitdir);
}

/* ---- putting it back ----------------------------------------------------------------- */

/* The parent of rel opened without following symlinks, *leaf into rel. */
static int parent_of(int wsfd, const char *rel, const char **leaf)
{
    const char *slash = strrchr(rel, '/');
    *leaf = slash ? slash + 1 : rel;
    if (!slash)
        return dup(wsfd);
    char *dir = xstrndup(rel, (size_t)(slash - rel));
    int fd = snap_open_beneath(wsfd, dir, O_RDONLY | O_DIRECTORY);
    free(dir);
    return fd;
}

/* The digest of what is at (dirfd, leaf) now, as gq_repo computed it. */
static bool digest_at(int dirfd, const char *leaf, char out[65])
{
    struct stat st;
    if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return false;
    if (S_ISDIR(st.st_mode)) {
        int fd = openat(dirfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        bool ok = fd >= 0 && dir_fingerprint(fd, out, NULL);
        if (fd >= 0)
            close(fd);
        return ok;
    }
    size_t len = 0;
    char *text = read_at(dirfd, leaf, SB_GITCONFIG_MAX_BYTES, &len);
    if (!text) {
        snprintf(out, 65, "-");
        return S_ISLNK(st.st_mode);
    }
    hex_of(text, len, out);
    free(text);
    return true;
}

size_t gq_restore(int wsfd, const gq_item *items, size_t n, gq_result *errors)
{
    size_t restored = 0;
    for (size_t k = n; k-- > 0;) {
        const gq_item *it = &items[k];
        const char *from_leaf, *to_leaf;
        int from = parent_of(wsfd, it->moved_to, &from_leaf);
        int to = parent_of(wsfd, it->path, &to_leaf);
        char now[65];
        if (from < 0 || to < 0) {
            add_error(errors, "%s: cannot reach it without following a symlink", it->path);
        } else if (!digest_at(from, from_leaf, now) || strcmp(now, it->sha) != 0) {
            add_error(errors, "%s: what was moved aside changed since (or is gone): not put back", it->path);
        } else {
            bool clear = true;
            struct stat st;
            if (fstatat(to, to_leaf, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                char cur[65];
                if (!it->replaced) {
                    clear = false;
                } else if (strcmp(it->replaced, "empty directory") == 0) {
                    clear = S_ISDIR(st.st_mode) && unlinkat(to, to_leaf, AT_REMOVEDIR) == 0;
                } else {
                    clear = S_ISREG(st.st_mode) && digest_at(to, to_leaf, cur) && strcmp(cur, it->replaced) == 0 &&
                            unlinkat(to, to_leaf, 0) == 0;
                }
            }
            if (!clear)
                add_error(errors, "%s: something else is there now: not put back", it->path);
            else if (renameat(from, from_leaf, to, to_leaf) < 0)
                add_error(errors, "%s: cannot put it back: %s", it->path, strerror(errno));
            else
                restored++;
        }
        if (from >= 0)
            close(from);
        if (to >= 0)
            close(to);
    }
    return restored;
}

/* ---- records ----------------------------------------------------------------------- */

json_t *gq_items_json(const gq_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->n; i++) {
        const gq_item *it = &r->items[i];
        char *path = sanitize_text(it->path, strlen(it->path), 4096);
        char *moved = sanitize_text(it->moved_to, strlen(it->moved_to), 4096);
        json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "path", path, "moved_to", moved, "sha256", it->sha, "runs",
                              it->runs ? it->runs : "");
        if (it->replaced)
            json_object_set_new(o, "replaced_by", json_string(it->replaced));
        json_array_append_new(a, o);
        free(path);
        free(moved);
    }
    return a;
}

int gq_items_from_json(json_t *a, gq_result *out)
{
    if (!json_is_array(a))
        return -1;
    size_t i;
    json_t *o;
    json_array_foreach(a, i, o) {
        const char *path = json_string_value(json_object_get(o, "path"));
        const char *moved = json_string_value(json_object_get(o, "moved_to"));
        const char *sha = json_string_value(json_object_get(o, "sha256"));
        const char *runs = json_string_value(json_object_get(o, "runs"));
        const char *replaced = json_string_value(json_object_get(o, "replaced_by"));
        if (!path || !moved || !sha || strlen(sha) > 64)
            return -1;
        gq_item *it = add_item(out);
        it->path = xstrdup(path);
        it->moved_to = xstrdup(moved);
        snprintf(it->sha, sizeof it->sha, "%s", sha);
        it->runs = runs ? xstrdup(runs) : NULL;
        it->replaced = replaced ? xstrdup(replaced) : NULL;
    }
    return 0;
}

/* ---- a tree's git state, without snapshots --------------------------------------------- */

/* Directories a scan looks at before it gives up (and says so). */
#define SCAN_DIRS_MAX 200000

static void repo_digest(int dirfd, char out[65])
{
    buf_t b;
    buf_init(&b);
    struct stat st;
    if (fstatat(dirfd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0) {
        buf_printf(&b, "type %o\n", (unsigned)(st.st_mode & S_IFMT));
        if (S_ISDIR(st.st_mode)) {
            int gfd = openat(dirfd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (gfd >= 0) {
                static const char *const files[] = {"config", "config.worktree", "commondir", NULL};
                for (const char *const *f = files; *f; f++) {
                    char d[65] = "-";
                    digest_at(gfd, *f, d);
                    buf_printf(&b, "%s %s\n", *f, d);
                }
                char d[65] = "-";
                digest_at(gfd, "hooks", d);
                buf_printf(&b, "hooks %s\n", d);
                close(gfd);
            }
        } else {
            char d[65] = "-";
            digest_at(dirfd, ".git", d);
            buf_printf(&b, "file %s\n", d);
        }
    }
    hex_of(b.data ? b.data : "", b.len, out);
    buf_free(&b);
}

typedef struct scan {
    char *const *deny;
    size_t n_deny;
    gq_state *out;
    size_t cap;
    size_t dirs;
} scan;

static void scan_dir(scan *sc, int dfd, const char *rel, int depth)
{
    if (++sc->dirs > SCAN_DIRS_MAX || depth > 256) {
        sc->out->incomplete = true;
        return;
    }
    struct stat st;
    if (*rel && fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0) {
        gq_state *o = sc->out;
        if (o->n == sc->cap) {
            sc->cap = sc->cap ? sc->cap * 2 : 16;
            o->paths = xrealloc(o->paths, sc->cap * sizeof *o->paths);
            o->digests = xrealloc(o->digests, sc->cap * sizeof *o->digests);
        }
        o->paths[o->n] = xstrdup(rel);
        repo_digest(dfd, o->digests[o->n]);
        o->n++;
    }
    int fd = dup(dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    rewinddir(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
            continue;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, ".git") == 0)
            continue;
        char *child = join(rel, e->d_name);
        if (!snap_walk_denied(child, sc->deny, sc->n_deny)) {
            int cfd = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd >= 0) {
                scan_dir(sc, cfd, child, depth + 1);
                close(cfd);
            }
        }
        free(child);
    }
    closedir(d);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void gq_scan(int rootfd, char *const *deny, size_t n_deny, gq_state *out)
{
    memset(out, 0, sizeof *out);
    scan sc = {.deny = deny, .n_deny = n_deny, .out = out};
    scan_dir(&sc, rootfd, "", 0);
    /* Sorted by path, the digests with them. */
    size_t n = out->n;
    char **order = xcalloc(n + 1, sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = xasprintf("%s%c%s", out->paths[i], 0, out->digests[i]);
    if (n)
        qsort(order, n, sizeof *order, str_cmp);
    for (size_t i = 0; i < n; i++) {
        free(out->paths[i]);
        out->paths[i] = xstrdup(order[i]);
        snprintf(out->digests[i], 65, "%s", order[i] + strlen(order[i]) + 1);
        free(order[i]);
    }
    free(order);
}

void gq_state_free(gq_state *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->paths[i]);
    free(s->paths);
    free(s->digests);
    memset(s, 0, sizeof *s);
}

void gq_quarantine_changed(int rootfd, const gq_state *before, const gq_state *after, const char *stamp,
                           gq_result *out)
{
    for (size_t i = 0; i < after->n; i++) {
        char **hit = before->n ? bsearch(&after->paths[i], before->paths, before->n, sizeof *before->paths, str_cmp)
                               : NULL;
        if (hit && strcmp(before->digests[hit - before->paths], after->digests[i]) == 0)
            continue;
        gq_repo(rootfd, after->paths[i], stamp, out);
    }
    if (after->incomplete)
        add_error(out, "more than %d directories: repositories past them were not looked at", SCAN_DIRS_MAX);
}
