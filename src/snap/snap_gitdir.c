/*
 * snap_gitdir.c - see snap_gitdir.h.
 */
#include "config.h"

#include "snap/snap_gitdir.h"

#include "base/sha256.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define SMALL_MAX 4096
#define PACKED_REFS_MAX (8u << 20)
#define CONFIG_MAX (1u << 20)
#define HOOK_MAX (1u << 20)

char *snap_read_small(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    char *text = snap_read_fd(fd, max, len);
    close(fd);
    return text;
}

char *snap_read_fd(int fd, size_t max, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return NULL;
    /* Up to max, whatever st_size says (files of /proc say 0); what a
     * failed read left is what there is. */
    buf_t b;
    buf_init(&b);
    read_all(fd, max, &b);
    if (len)
        *len = b.len;
    return b.data ? buf_steal(&b) : xstrdup("");
}

/* Open path with no symlink followed in any of its components (what a
 * repository holds was written by a sandbox; the reader that runs this is
 * confined too: docs/snapshots.md, "The reader"). */
static int open_nofollow(const char *path, int flags)
{
#ifdef SYS_openat2
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC);
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
        return (int)fd;
#endif
    return open(path, flags | O_NOFOLLOW | O_CLOEXEC);
}

/* snap_read_small, but through open_nofollow. */
static char *read_repo_file(const char *path, size_t max, size_t *len)
{
    int fd = open_nofollow(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    char *text = snap_read_fd(fd, max, len);
    close(fd);
    return text;
}

static bool is_hex_oid(const char *s)
{
    for (int i = 0; i < SNAP_HEX_OID; i++)
        if (hex_value((unsigned char)s[i]) < 0)
            return false;
    return true;
}

/* A ref name as git allows it, enough to build a path from: no "..",
 * no leading slash, only printable characters. */
static bool ref_name_ok(const char *r)
{
    if (strncmp(r, "refs/", 5) != 0 || strstr(r, "..") || strlen(r) > 255)
        return false;
    for (const char *p = r; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '\\')
            return false;
    return true;
}

static bool packed_lookup(const char *commondir, const char *ref, char out[SNAP_HEX_OID + 1])
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/packed-refs", commondir);
    size_t len;
    char *text = read_repo_file(path, PACKED_REFS_MAX, &len);
    if (!text)
        return false;
    bool found = false;
    size_t rl = strlen(ref);
    for (char *line = text; line && *line && !found;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (strlen(line) == SNAP_HEX_OID + 1 + rl && line[SNAP_HEX_OID] == ' ' && is_hex_oid(line) &&
            strcmp(line + SNAP_HEX_OID + 1, ref) == 0) {
            memcpy(out, line, SNAP_HEX_OID);
            out[SNAP_HEX_OID] = '\0';
            found = true;
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return found;
}

bool snap_gitdir_resolve(const char *gitdir, const char *commondir, const char *ref, char out[SNAP_HEX_OID + 1])
{
    char name[300];
    snprintf(name, sizeof name, "%s", ref);
    for (int depth = 0; depth < 5; depth++) {
        if (!ref_name_ok(name))
            return false;
        char *text = NULL;
        const char *dirs[2] = {gitdir, commondir};
        for (int i = 0; i < 2 && !text; i++) {
            char path[PATH_MAX + 64];
            snprintf(path, sizeof path, "%s/%s", dirs[i], name);
            text = read_repo_file(path, SMALL_MAX, NULL);
        }
        if (!text)
            return packed_lookup(commondir, name, out);
        if (strncmp(text, "ref: ", 5) == 0) {
            char *end = text + 5 + strcspn(text + 5, "\r\n");
            *end = '\0';
            snprintf(name, sizeof name, "%s", text + 5);
            free(text);
            continue;
        }
        bool ok = strlen(text) >= SNAP_HEX_OID && is_hex_oid(text);
        if (ok) {
            memcpy(out, text, SNAP_HEX_OID);
            out[SNAP_HEX_OID] = '\0';
        }
        free(text);
        return ok;
    }
    return false;
}

static void read_head(const char *gitdir, const char *commondir, snap_gitdir *out)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/HEAD", gitdir);
    char *text = read_repo_file(path, SMALL_MAX, NULL);
    if (!text)
        return;
    out->valid = true;
    if (strncmp(text, "ref: ", 5) == 0) {
        char *end = text + 5 + strcspn(text + 5, "\r\n");
        *end = '\0';
        if (!snap_gitdir_resolve(gitdir, commondir, text + 5, out->head))
            out->head[0] = '\0';
    } else if (strlen(text) >= SNAP_HEX_OID && is_hex_oid(text)) {
        memcpy(out->head, text, SNAP_HEX_OID);
        out->head[SNAP_HEX_OID] = '\0';
    } else {
        out->valid = false;
    }
    free(text);
}

static void sha_of(const char *text, size_t len, char out[65])
{
    unsigned char d[SHA256_LEN];
    sha256(text, len, d);
    sha256_hex(d, out);
}

/* core.hooksPath from a config text: the [core] section's hookspath key
 * (names are case-insensitive in git), the last one winning.  Only what a
 * reviewer needs to see; git's full syntax is not needed for that. */
static void hooks_path_of(char *text, char *out, size_t outlen)
{
    bool in_core = false;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *p = line + strspn(line, " \t");
        if (*p == '[') {
            char *q = p + 1 + strspn(p + 1, " \t");
            in_core = strncasecmp(q, "core", 4) == 0 && (q[4] == ']' || q[4] == ' ' || q[4] == '\t');
        } else if (in_core && strncasecmp(p, "hookspath", 9) == 0) {
            char *v = p + 9 + strspn(p + 9, " \t");
            if (*v == '=') {
                v++;
                v += strspn(v, " \t");
                size_t n = strcspn(v, "#;\r");
                while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
                    n--;
                if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
                    v++;
                    n -= 2;
                }
                snprintf(out, outlen, "%.*s", (int)n, v);
            }
        }
        if (nl)
            *nl = '\n';
        line = nl ? nl + 1 : NULL;
    }
}

static int hook_cmp(const void *a, const void *b)
{
    return strcmp(((const snap_hook *)a)->name, ((const snap_hook *)b)->name);
}

/* The hooks in dir (every entry but *.sample and dot files), prefixed. */
static void read_hooks(const char *dir, const char *prefix, snap_gitdir *out)
{
    int dfd = open_nofollow(dir, O_RDONLY | O_DIRECTORY);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    int start = out->n_hooks;
    struct dirent *e;
    while ((e = readdir(d)) && out->n_hooks < SNAP_MAX_HOOKS) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' || (n > 7 && strcmp(e->d_name + n - 7, ".sample") == 0))
            continue;
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) < 0 || S_ISDIR(st.st_mode))
            continue;
        snap_hook *h = &out->hooks[out->n_hooks++];
        snprintf(h->name, sizeof h->name, "%s%s", prefix, e->d_name);
        h->mode = (st.st_mode & 0111) ? 0755 : 0644;
        size_t len;
        char *text = S_ISREG(st.st_mode) ? read_repo_file(path, HOOK_MAX, &len) : NULL;
        if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t t = readlink(path, target, sizeof target - 1);
            text = xstrndup(target, t > 0 ? (size_t)t : 0);
            len = strlen(text);
            h->mode = 0120000;
        }
        if (text)
            sha_of(text, len, h->sha);
        else
            snprintf(h->sha, sizeof h->sha, "-");
        free(text);
    }
    closedir(d);
    qsort(out->hooks + start, (size_t)(out->n_hooks - start), sizeof out->hooks[0], hook_cmp);
}

/* The git directory of DIR/.git: the directory itself, or where a gitdir
 * file points (relative to DIR).  false: no .git, or not a directory. */
static bool locate(const char *dir, char *gitdir, size_t len, bool *found)
{
    char dotgit[PATH_MAX];
    snprintf(dotgit, sizeof dotgit, "%s/.git", dir);
    struct stat st;
    *found = lstat(dotgit, &st) == 0;
    if (!*found)
        return false;
    if (S_ISDIR(st.st_mode)) {
        snprintf(gitdir, len, "%s", dotgit);
        return true;
    }
    if (!S_ISREG(st.st_mode))
        return false;
    char *text = read_repo_file(dotgit, SMALL_MAX, NULL);
    if (!text || strncmp(text, "gitdir: ", 8) != 0) {
        free(text);
        return false;
    }
    char *p = text + 8;
    p[strcspn(p, "\r\n")] = '\0';
    if (p[0] == '/')
        snprintf(gitdir, len, "%s", p);
    else
        snprintf(gitdir, len, "%s/%s", dir, p);
    free(text);
    return stat(gitdir, &st) == 0 && S_ISDIR(st.st_mode);
}

bool snap_gitdir_locate(const char *dir, char *gitdir, size_t len)
{
    bool found;
    return locate(dir, gitdir, len, &found);
}

static void common_of(const char *gitdir, char *out, size_t len)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/commondir", gitdir);
    char *text = read_repo_file(path, SMALL_MAX, NULL);
    if (!text) {
        snprintf(out, len, "%s", gitdir);
        return;
    }
    text[strcspn(text, "\r\n")] = '\0';
    if (text[0] == '/')
        snprintf(out, len, "%s", text);
    else
        snprintf(out, len, "%s/%s", gitdir, text);
    free(text);
}

void snap_gitdir_read(const char *dir, snap_gitdir *out)
{
    memset(out, 0, sizeof *out);
    char gitdir[PATH_MAX], common[PATH_MAX];
    if (!locate(dir, gitdir, sizeof gitdir, &out->found))
        return;
    common_of(gitdir, common, sizeof common);
    read_head(gitdir, common, out);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/config", common);
    size_t len;
    char *config = read_repo_file(path, CONFIG_MAX, &len);
    if (config) {
        sha_of(config, len, out->config_sha);
        hooks_path_of(config, out->hooks_path, sizeof out->hooks_path);
        free(config);
    }
    snprintf(path, sizeof path, "%s/hooks", common);
    read_hooks(path, "", out);
    if (out->hooks_path[0]) {
        /* Relative to the work tree, as git takes it; ~ is the user's. */
        char target[PATH_MAX];
        if (out->hooks_path[0] == '/')
            snprintf(target, sizeof target, "%s", out->hooks_path);
        else if (out->hooks_path[0] == '~' && out->hooks_path[1] == '/')
            snprintf(target, sizeof target, "%s%s", getenv("HOME") ? getenv("HOME") : "", out->hooks_path + 1);
        else
            snprintf(target, sizeof target, "%s/%s", dir, out->hooks_path);
        read_hooks(target, "hooksPath/", out);
    }
}

bool snap_gitdir_enclosing(const char *ws, snap_enclosing *out)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", ws);
    for (;;) {
        bool found;
        char head[PATH_MAX + 64];
        struct stat hs;
        /* As git finds it: a .git without a HEAD (an empty directory a
         * sandbox keeps in place) is not a repository; look further up. */
        if (locate(dir, out->gitdir, sizeof out->gitdir, &found) &&
            snprintf(head, sizeof head, "%s/HEAD", out->gitdir) > 0 && stat(head, &hs) == 0) {
            snprintf(out->top, sizeof out->top, "%s", dir);
            common_of(out->gitdir, out->commondir, sizeof out->commondir);
            size_t n = strlen(dir);
            const char *rest = ws + n;
            if (n == 1)
                rest = ws + 1; /* the work tree is / */
            while (*rest == '/')
                rest++;
            snprintf(out->prefix, sizeof out->prefix, "%s", rest);
            return true;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return false;
        *slash = '\0';
    }
}
