/*
 * pathres.c - see pathres.h.
 */
#include "config.h"

#include "gate/pathres.h"
#include "base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINKS 40

bool pathres_under(const char *path, const char *root)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    if (n == 1 && root[0] == '/')
        return path[0] == '/';
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static const char *writable_root_of(const char *path, char *const *writable)
{
    for (char *const *w = writable; w && *w; w++)
        if (pathres_under(path, *w))
            return *w;
    return NULL;
}

char *pathres_resolve(const char *path, char *const *writable, char *err, size_t errlen)
{
    if (!path || path[0] != '/') {
        snprintf(err, errlen, "'%s' is not an absolute path", path ? path : "");
        return NULL;
    }
    if (strlen(path) >= PATH_MAX) {
        snprintf(err, errlen, "a path of %zu bytes is too long", strlen(path));
        return NULL;
    }
    /* done: the resolved part ("" is "/"); rest: what is left to walk. */
    char done[PATH_MAX] = "";
    char *rest = xstrdup(path);
    size_t pos = 0;
    int links = 0;
    char *result = NULL;
    for (;;) {
        while (rest[pos] == '/')
            pos++;
        if (!rest[pos])
            break;
        size_t len = strcspn(rest + pos, "/");
        char comp[NAME_MAX + 1];
        if (len > NAME_MAX) {
            snprintf(err, errlen, "'%s' has a component longer than %d bytes", path, NAME_MAX);
            goto out;
        }
        memcpy(comp, rest + pos, len);
        comp[len] = '\0';
        pos += len;
        if (strcmp(comp, ".") == 0)
            continue;
        if (strcmp(comp, "..") == 0) {
            char *slash = strrchr(done, '/');
            if (slash)
                *slash = '\0';
            continue;
        }
        char candidate[PATH_MAX];
        if ((size_t)snprintf(candidate, sizeof candidate, "%s/%s", done, comp) >= sizeof candidate) {
            snprintf(err, errlen, "'%s' is too long once resolved", path);
            goto out;
        }
        struct stat st;
        if (lstat(candidate, &st) < 0) {
            int e = errno;
            snprintf(err, errlen, "'%s' cannot be used: %s: %s", path, candidate, strerror(e));
            goto out;
        }
        if (!S_ISLNK(st.st_mode)) {
            memcpy(done, candidate, strlen(candidate) + 1);
            continue;
        }
        const char *root = writable_root_of(*done ? done : "/", writable);
        if (root) {
            snprintf(err, errlen, "'%s' goes through the symlink %s, which lies inside the writable root %s: a "
                     "sandboxed command could re-point it. Name the directory it points to instead",
                     path, candidate, root);
            goto out;
        }
        if (++links > MAX_LINKS) {
            snprintf(err, errlen, "'%s' cannot be used: too many levels of symbolic links", path);
            goto out;
        }
        char target[PATH_MAX];
        ssize_t n = readlink(candidate, target, sizeof target - 1);
        if (n < 0) {
            snprintf(err, errlen, "'%s' cannot be used: %s: %s", path, candidate, strerror(errno));
            goto out;
        }
        target[n] = '\0';
        /* Walk the target, then what was left after the link. */
        char *next = xasprintf("%s/%s", target, rest + pos);
        free(rest);
        rest = next;
        pos = 0;
        if (target[0] == '/')
            done[0] = '\0';
        if (strlen(rest) >= 2 * PATH_MAX) {
            snprintf(err, errlen, "'%s' is too long once resolved", path);
            goto out;
        }
    }
    result = xstrdup(*done ? done : "/");
out:
    free(rest);
    return result;
}
