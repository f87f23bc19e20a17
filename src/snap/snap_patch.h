/*
 * snap_patch.h - a diff between two snapshots as text a person or a tool
 * reads: git-compatible output (diff --git headers, mode lines, rename
 * lines, binary patches) that `git apply -R`, delta or less take as they
 * take git's own; --name-status and --stat as git prints them; and, for
 * the supervisor screen, the file list of snap_diff.h with each file's
 * patch beside it.  Runs on a snapshot worker.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_PATCH_H
#define CORRAL_SNAP_PATCH_H

#include <jansson.h>
#include <stdbool.h>

#include "snap/snap_store.h"
#include "base/util.h"

typedef enum snap_format {
    SNAP_FMT_PATCH,
    SNAP_FMT_NAME_STATUS,
    SNAP_FMT_STAT,
    SNAP_FMT_FILES, /* JSON: snap_changes_json with "patch" on each file */
} snap_format;

typedef struct snap_patch_opts {
    bool ignore_space; /* git diff -w */
} snap_patch_opts;

/* The text of format fmt into text (SNAP_FMT_FILES: *files instead). 0, or
 * -1 with err.  Output is capped at max bytes ("... (cut)" at the end). */
int snap_render(snap_store *st, const char *before, const char *after, snap_format fmt, const snap_patch_opts *o,
                size_t max, buf_t *text, json_t **files, char *err, size_t errlen);

/* A path quoted as git quotes it in headers and name lists ("a\tb" in
 * double quotes with C escapes when it has special bytes). */
void snap_quote_path(buf_t *b, const char *path);

#endif
