/*
 * snap_meta.h - what a snapshot records beside its tree, kept in the
 * snapshot commit's message: the git repositories in and around the
 * workspace (HEAD, config and hook fingerprints: what risk marks compare),
 * the files it could not capture (over the size cap, excluded, over the
 * new-file cap, invalid names) so a command's record can say so.
 *
 * Paths are stored percent-escaped (bytes up to space, DEL and '%'), so
 * any file name survives the one-line-per-item format.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_META_H
#define CORRAL_SNAP_META_H

#include <stddef.h>
#include <stdint.h>

#include "snap/snap_gitdir.h"

#define SNAP_META_MAX_REPOS 256
#define SNAP_META_MAX_LIST 1000

typedef struct snap_meta_repo {
    char *path;       /* workspace-relative; "" for the repository around the workspace */
    snap_gitdir git;
} snap_meta_repo;

typedef struct snap_meta_large {
    char *path;
    uint64_t size;
    int64_t mtime_ns;
    unsigned mode;
} snap_meta_large;

typedef struct snap_meta_count {
    char *path;
    long count;
} snap_meta_count;

typedef struct snap_meta {
    snap_meta_repo *repos;
    size_t n_repos;
    snap_meta_large *large;   /* over the size cap: size and time only */
    size_t n_large;
    snap_meta_count *capped;  /* top-level dirs whose new files passed the cap */
    size_t n_capped;
    char **ignored;           /* excluded entries (a directory ends in '/') */
    size_t n_ignored;
    long ignored_total;       /* may exceed n_ignored (the list is capped) */
    char **invalid;           /* names git cannot store */
    size_t n_invalid;
} snap_meta;

void snap_meta_free(snap_meta *m);
/* The commit message for m (a title line, then the items). */
char *snap_meta_format(const snap_meta *m);
/* Parse a message made by snap_meta_format (anything else: an empty meta). */
void snap_meta_parse(const char *msg, snap_meta *out);

/* Adders (they copy their strings and respect the caps). */
snap_meta_repo *snap_meta_add_repo(snap_meta *m, const char *path);
void snap_meta_add_large(snap_meta *m, const char *path, uint64_t size, int64_t mtime_ns, unsigned mode);
void snap_meta_add_capped(snap_meta *m, const char *dir, long count);
void snap_meta_add_ignored(snap_meta *m, const char *path);
void snap_meta_add_invalid(snap_meta *m, const char *path);

const snap_meta_repo *snap_meta_find_repo(const snap_meta *m, const char *path);
const snap_meta_large *snap_meta_find_large(const snap_meta *m, const char *path);
int snap_meta_has_ignored(const snap_meta *m, const char *path);

/* Percent-escaping of a path for one-line formats; returns a new string. */
char *snap_escape(const char *s);
char *snap_unescape(const char *s);

#endif
