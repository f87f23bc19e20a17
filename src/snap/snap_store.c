/*
 * snap_store.c - see snap_store.h.
 */
#include "config.h"

#include "snap/snap_seed.h"
#include "snap/snap_store.h"

#include "sandbox/gitconfig.h"
#include "base/paths.h"
#include "base/sha256.h"
#include "snap/snap_gitdir.h"
#include "snap/snap_reader.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Directories and files that are build output, dependencies or caches
 * almost everywhere (what other tools exclude too).  dist/, build/ and
 * vendor/ are left to .gitignore: they are source in some projects. */
const char snap_builtin_excludes[] =
    "node_modules/\n.venv/\nvenv/\n__pycache__/\n.mypy_cache/\n.pytest_cache/\n.tox/\n.cache/\ntarget/\n"
    ".next/\n.nuxt/\n.gradle/\n.parcel-cache/\n.terraform/\n.direnv/\n"
    "*.o\n*.obj\n*.pyc\n*.class\n*.so\n*.dylib\n*.a\n*.swp\n*~\n.DS_Store\n";

/* Exact bytes: no filter, no line-ending conversion, no $Id$ expansion,
 * whatever the workspace's .gitattributes say (info/attributes wins). */
static const char store_attributes[] = "* -text -filter -ident -eol -crlf\n";

static int excludes_key(void *user, const char *section, const char *sub, const char *key, const char *value)
{
    char **path = user;
    if (!sub && value && strcmp(section, "core") == 0 && strcmp(key, "excludesfile") == 0) {
        free(*path);
        *path = value[0] == '~' && value[1] == '/' ? xasprintf("%s%s", paths_home(), value + 1) : xstrdup(value);
    }
    return 0;
}

char *snap_global_excludes(void)
{
    /* Your own files (the home is never written by a sandbox: its writes
     * go to a layer of its own), read as git reads them: the global config
     * files' core.excludesFile, else $XDG_CONFIG_HOME/git/ignore. */
    const char *xdg = getenv("XDG_CONFIG_HOME");
    char *xdg_git = xdg && xdg[0] == '/' ? xasprintf("%s/git", xdg) : xasprintf("%s/.config/git", paths_home());
    char *files[2] = {xasprintf("%s/config", xdg_git), xasprintf("%s/.gitconfig", paths_home())};
    char *path = NULL;
    for (int i = 0; i < 2; i++) {
        bool absent;
        char err[300];
        sb_gitconfig_parse_file(files[i], excludes_key, &path, &absent, err, sizeof err);
        free(files[i]);
    }
    if (!path)
        path = xasprintf("%s/ignore", xdg_git);
    free(xdg_git);
    char *text = snap_read_small(path, 1u << 20, NULL);
    free(path);
    return text;
}

int snap_git_init(char *err, size_t errlen)
{
    return snap_git_load(err, errlen);
}

const char *snap_git_error(void)
{
    const git_error *e = git_error_last();
    return e && e->message ? e->message : "unknown libgit2 error";
}

char *snap_store_dir_for(const char *snapdir, const char *ws)
{
    unsigned char d[SHA256_LEN];
    char hex[SHA256_HEX_LEN + 1];
    sha256(ws, strlen(ws), d);
    sha256_hex(d, hex);
    hex[32] = '\0';
    return xasprintf("%s/%s", snapdir, hex);
}

static int write_file(const char *path, const char *text, char *err, size_t errlen)
{
    char *tmp = xasprintf("%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    int rc = fd < 0 ? -errno : write_all(fd, text, strlen(text));
    if (fd >= 0 && close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
        unlink(tmp);
    }
    free(tmp);
    return rc < 0 ? -1 : 0;
}

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *p = xasprintf("%s/%s", path, e->d_name);
            if (e->d_type == DT_DIR)
                remove_tree(p);
            else
                unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(path);
}

static int configure(snap_store *st, char *err, size_t errlen)
{
    git_config *cfg = NULL;
    git_config *local = NULL;
    int rc = git_repository_config(&cfg, st->repo);
    if (rc == 0)
        rc = git_config_open_level(&local, cfg, GIT_CONFIG_LEVEL_LOCAL);
    static const char *const off[] = {"core.autocrlf", "core.safecrlf", "core.ignorecase", "core.precomposeunicode",
                                      "core.logallrefupdates", "core.protectHFS", NULL};
    static const char *const on[] = {"core.symlinks", "core.filemode", "core.protectNTFS", NULL};
    for (const char *const *k = off; rc == 0 && *k; k++)
        rc = git_config_set_bool(local, *k, 0);
    for (const char *const *k = on; rc == 0 && *k; k++)
        rc = git_config_set_bool(local, *k, 1);
    if (rc == 0)
        rc = git_config_set_int32(local, "gc.auto", 0);
    git_config_free(local);
    git_config_free(cfg);
    if (rc < 0) {
        snprintf(err, errlen, "cannot configure the snapshot store %s: %s", st->dir, snap_git_error());
        return -1;
    }
    return 0;
}

static int create_store(snap_store *st, char *err, size_t errlen)
{
    git_repository *repo = NULL;
    git_repository_init_options o;
    git_repository_init_options_init(&o, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
    o.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_NO_REINIT;
    o.mode = GIT_REPOSITORY_INIT_SHARED_UMASK;
    if (git_repository_init_ext(&repo, st->dir, &o) < 0) {
        snprintf(err, errlen, "cannot create the snapshot store %s: %s", st->dir, snap_git_error());
        return -1;
    }
    git_repository_free(repo);
    /* The template's sample hooks and description: a store runs nothing. */
    char *hooks = xasprintf("%s/hooks", st->dir);
    remove_tree(hooks);
    free(hooks);
    char *desc = xasprintf("%s/description", st->dir);
    unlink(desc);
    free(desc);
    char *ws = xasprintf("%s/workspace", st->dir), *text = xasprintf("%s\n", st->ws);
    int rc = write_file(ws, text, err, errlen);
    free(ws);
    free(text);
    return rc;
}

/* The store's workspace file names ws (a store is one workspace's). */
static int check_owner(snap_store *st, char *err, size_t errlen)
{
    char *path = xasprintf("%s/workspace", st->dir);
    char *text = snap_read_small(path, PATH_MAX + 2, NULL);
    free(path);
    if (!text) {
        snprintf(err, errlen, "the snapshot store %s has no workspace file: remove the directory (corral gc "
                 "does) and it is made again", st->dir);
        return -1;
    }
    size_t n = strlen(text);
    if (n && text[n - 1] == '\n')
        text[--n] = '\0';
    int rc = strcmp(text, st->ws) == 0 ? 0 : -1;
    if (rc < 0)
        snprintf(err, errlen, "the snapshot store %s belongs to %s, not %s", st->dir, text, st->ws);
    free(text);
    return rc;
}

void snap_store_close(snap_store *st)
{
    if (!st)
        return;
    if (st->owns_reader)
        snap_reader_stop(st->reader);
    snap_seed_unfinished(st);
    for (size_t i = 0; i < st->n_forget; i++)
        free(st->forget[i]);
    free(st->forget);
    git_index_free(st->index);
    git_repository_free(st->repo);
    if (st->lock_fd >= 0)
        close(st->lock_fd);
    snap_conf_free(&st->conf);
    free(st->ws);
    free(st->dir);
    free(st);
}

int snap_store_start_reader(snap_store *st, char *err, size_t errlen)
{
    snap_reader_spec spec = {.ws = st->ws};
    st->reader = snap_reader_launch(&spec, err, errlen);
    st->owns_reader = st->reader != NULL;
    return st->reader ? 0 : -1;
}

snap_store *snap_store_open(const char *snapdir, const char *ws, const snap_conf *conf, char *err, size_t errlen)
{
    if (snap_git_init(err, errlen) < 0)
        return NULL;
    snap_store *st = xcalloc(1, sizeof *st);
    st->lock_fd = -1;
    st->progress = &st->own_progress;
    st->pack_min = SNAP_PACK_MIN;
    st->ws = xstrdup(ws);
    st->dir = snap_store_dir_for(snapdir, ws);
    snap_conf_copy(&st->conf, conf);
    int rc = mkdir_p(snapdir, 0700);
    if (rc < 0) {
        snprintf(err, errlen, "cannot make %s, where snapshot stores go: %s%s", snapdir, strerror(-rc),
                 rc == -ENOTDIR ? " (a file is in the way: move it)" : "");
        goto fail;
    }
    struct stat sb;
    bool fresh = lstat(st->dir, &sb) < 0;
    if (fresh && create_store(st, err, errlen) < 0)
        goto fail;
    if (!fresh && (!S_ISDIR(sb.st_mode) || check_owner(st, err, errlen) < 0)) {
        if (!S_ISDIR(sb.st_mode))
            snprintf(err, errlen, "%s is not a directory", st->dir);
        goto fail;
    }
    char *lock = xasprintf("%s/corral.lock", st->dir);
    st->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    free(lock);
    if (st->lock_fd < 0 || flock(st->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        snprintf(err, errlen, "the snapshot store %s is in use by another corral server (%s)", st->dir,
                 strerror(errno));
        goto fail;
    }
    if (git_repository_open_bare(&st->repo, st->dir) < 0) {
        snprintf(err, errlen, "cannot open the snapshot store %s: %s", st->dir, snap_git_error());
        goto fail;
    }
    if (configure(st, err, errlen) < 0)
        goto fail;
    char *attrs = xasprintf("%s/info/attributes", st->dir);
    char *info = xasprintf("%s/info", st->dir);
    mkdir(info, 0700);
    free(info);
    rc = write_file(attrs, store_attributes, err, errlen);
    free(attrs);
    if (rc < 0)
        goto fail;
    char *ipath = xasprintf("%s/snap.index", st->dir);
    rc = git_index_open(&st->index, ipath);
    free(ipath);
    if (rc < 0) {
        snprintf(err, errlen, "cannot read the snapshot index of %s: %s", st->dir, snap_git_error());
        goto fail;
    }
    git_repository_set_index(st->repo, st->index);
    git_reference *ref = NULL;
    git_commit *latest = NULL;
    if (git_reference_lookup(&ref, st->repo, "refs/snap/latest") == 0 && git_reference_target(ref) &&
        git_commit_lookup(&latest, st->repo, git_reference_target(ref)) == 0) {
        git_oid_tostr(st->latest, sizeof st->latest, git_reference_target(ref));
        git_oid_tostr(st->latest_tree, sizeof st->latest_tree, git_commit_tree_id(latest));
    }
    git_commit_free(latest);
    git_error_clear();
    git_reference_free(ref);
    if (!st->latest[0] && git_index_entrycount(st->index) > 0)
        git_index_clear(st->index); /* an index without a snapshot: start again */
    return st;
fail:
    snap_store_close(st);
    return NULL;
}

static uint64_t usage_of(int dirfd, int depth)
{
    DIR *d = fdopendir(dirfd);
    if (!d) {
        close(dirfd);
        return 0;
    }
    uint64_t total = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        total += (uint64_t)st.st_blocks * 512;
        if (S_ISDIR(st.st_mode) && depth < 16) {
            int fd = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0)
                total += usage_of(fd, depth + 1);
        }
    }
    closedir(d);
    return total;
}

uint64_t snap_disk_usage(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? 0 : usage_of(fd, 0);
}
