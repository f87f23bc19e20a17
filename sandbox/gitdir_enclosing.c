/*
 * gitdir_enclosing.c - the git directories a writable root lies in (see
 * gitdir_enclosing.h).
 *
 * The protection of one git directory here is the same list as
 * gitprotect.c's (hooks, config, config.worktree, commondir, modules/);
 * gitprotect.c keeps its own walk private, so this file states the list
 * again for directories that walk never reaches.
 */
#include "config.h"

#include "gitdir_enclosing.h"
#include "sbutil.h"
#include "statmemo.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GITDIR_DEPTH 4 /* submodule gitdirs and commondir hops followed */

/* The sink's lstat memo (statmemo.h) answers for a path the compile has
 * looked at already. */
static bool is_dir(sb_statmemo *m, const char *path)
{
    struct stat st;
    return sb_statmemo_lstat(m, path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* HEAD as git accepts it: "ref: refs/..." or a full object name. */
static bool valid_head(const char *dir)
{
    char *p = sb_printf("%s/HEAD", dir);
    FILE *f = fopen(p, "re");
    free(p);
    if (!f)
        return false;
    char line[256];
    bool ok = false;
    if (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "ref: refs/", 10) == 0) {
            ok = true;
        } else {
            size_t n = strlen(line);
            ok = n == 40 || n == 64;
            for (size_t i = 0; ok && i < n; i++)
                ok = isxdigit((unsigned char)line[i]) != 0;
        }
    }
    fclose(f);
    return ok;
}

static bool looks_like_gitdir(sb_statmemo *m, const char *dir)
{
    char *objects = sb_printf("%s/objects", strcmp(dir, "/") == 0 ? "" : dir);
    char *refs = sb_printf("%s/refs", strcmp(dir, "/") == 0 ? "" : dir);
    bool ok = is_dir(m, objects) && is_dir(m, refs) && valid_head(dir);
    free(objects);
    free(refs);
    return ok;
}

bool sb_looks_like_gitdir(const char *dir)
{
    return looks_like_gitdir(NULL, dir);
}

/* The directory commondir names, resolved against gd; or NULL. */
static char *read_commondir(const char *file, const char *gd)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return NULL;
    char line[PATH_MAX];
    char *res = NULL;
    if (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *joined = sb_path_join(gd, line);
        char canon[PATH_MAX];
        if (realpath(joined, canon))
            res = sb_strdup(canon);
        free(joined);
    }
    fclose(f);
    return res;
}

static void protect_gitdir(const char *gd, const sb_protect_sink *s, int depth);

/* Submodule gitdirs below dir (modules/NAME, modules/a/b for names with
 * slashes). */
static void protect_modules(const char *dir, const sb_protect_sink *s, int depth)
{
    DIR *d = depth > 0 ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *sub = sb_printf("%s/%s", dir, e->d_name);
        if (is_dir(s->stats, sub)) {
            char *head = sb_printf("%s/HEAD", sub);
            struct stat st;
            if (sb_statmemo_lstat(s->stats, head, &st) == 0)
                protect_gitdir(sub, s, depth - 1);
            else
                protect_modules(sub, s, depth - 1);
            free(head);
        }
        free(sub);
    }
    if (d)
        closedir(d);
}

static void protect_gitdir(const char *gd, const sb_protect_sink *s, int depth)
{
    struct stat st;
    bool writable = s->writable(s->user, gd);
    if (writable)
        s->pin(s->user, gd, "pinned: a git directory");
    char *p = sb_printf("%s/hooks", gd);
    if (sb_statmemo_lstat(s->stats, p, &st) == 0)
        s->readonly(s->user, p, S_ISDIR(st.st_mode), "protected: git hooks run code");
    else if (errno == ENOENT && writable)
        s->placeholder(s->user, p, NULL, "protected (empty): git hooks run code");
    free(p);
    static const char *const files[] = {"config", "config.worktree", NULL};
    for (const char *const *f = files; *f; f++) {
        p = sb_printf("%s/%s", gd, *f);
        if (sb_statmemo_lstat(s->stats, p, &st) == 0)
            s->readonly(s->user, p, false, "protected: git config can run code");
        free(p);
    }
    p = sb_printf("%s/commondir", gd);
    char *common = NULL;
    if (sb_statmemo_lstat(s->stats, p, &st) == 0) {
        s->readonly(s->user, p, false, "protected: commondir says where config and hooks are");
        common = read_commondir(p, gd);
    } else if (errno == ENOENT && writable) {
        s->placeholder(s->user, p, ".\n", "protected (\".\": no redirection): commondir would redirect config "
                                          "and hooks");
    }
    free(p);
    if (common && strcmp(common, gd) != 0 && depth > 0)
        protect_gitdir(common, s, depth - 1);
    free(common);
    char *modules = sb_printf("%s/modules", gd);
    protect_modules(modules, s, depth);
    free(modules);
}

void sb_protect_enclosing_gitdirs(const char *path, const sb_protect_sink *sink)
{
    /* From path up to "/": each ancestor that is a git directory. */
    char *cur = sb_strdup(path);
    for (;;) {
        const char *base = strrchr(cur, '/');
        base = base ? base + 1 : cur;
        if ((strcmp(base, ".git") == 0 && is_dir(sink->stats, cur)) || looks_like_gitdir(sink->stats, cur))
            protect_gitdir(cur, sink, GITDIR_DEPTH);
        char *slash = strrchr(cur, '/');
        if (!slash || slash == cur)
            break;
        *slash = '\0';
    }
    free(cur);
}
