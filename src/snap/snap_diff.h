/*
 * snap_diff.h - what changed between two snapshots, as a reviewer reads it
 * (docs/snapshots.md, "A command's record"): one row per file (status,
 * modes, sizes, symlink targets, gitlink ids, lines added and removed),
 * the counts (+A ~M -D ->R), the files that were not captured and why, and
 * the risk marks a reviewer must see first.  Computed on a snapshot worker
 * from the two commits: trees diffed with rename detection, metas compared
 * for large files, nested repositories and hooks.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_DIFF_H
#define CORRAL_SNAP_DIFF_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "snap/snap_store.h"

/* Risk marks, most serious first (the order the file list sorts by). */
typedef enum snap_risk {
    RISK_HOOK = 1u << 0,        /* a git hook file added or changed */
    RISK_HOOKS_PATH = 1u << 1,  /* core.hooksPath set or changed */
    RISK_GIT_DIR = 1u << 2,     /* a new or changed .git directory (its config) */
    RISK_GITLINK = 1u << 3,     /* a nested repository appeared, moved or went */
    RISK_CORRAL = 1u << 4,      /* .corral/ (rules a trusted workspace loads) */
    RISK_AGENT = 1u << 5,       /* agent configuration (.codex/, .claude/, .mcp.json, ...) */
    RISK_ENVRC = 1u << 6,       /* .envrc (direnv runs it) */
    RISK_CI = 1u << 7,          /* CI definitions (.github/workflows, ...) */
    RISK_EDITOR = 1u << 8,      /* editor tasks and settings (.vscode/tasks.json, ...) */
    RISK_GIT_FILE = 1u << 9,    /* .gitattributes, .gitmodules */
    RISK_EXEC = 1u << 10,       /* the executable bit added */
    RISK_SYMLINK_OUT = 1u << 11,/* a symlink pointing out of the workspace */
} snap_risk;
#define SNAP_RISK_KINDS 12
/* The name of a mark ("hook", "exec-bit", ...) for JSON and the CLI. */
const char *snap_risk_name(unsigned bit);

typedef struct snap_file {
    char status;            /* A M D R T */
    int similarity;         /* R: percent */
    char *old_path, *path;  /* old_path: R only, else NULL */
    unsigned old_mode, new_mode;
    uint64_t old_size, new_size;
    bool binary;
    bool large;             /* over the size cap: size only, no content */
    long added, removed;    /* lines */
    char *old_target, *new_target; /* symlinks */
    char old_id[SNAP_OID_HEX], new_id[SNAP_OID_HEX];
    unsigned risks;         /* snap_risk bits */
    char *risk_detail;      /* e.g. "hook pre-commit added" (NULL: none) */
} snap_file;

typedef struct snap_missed {
    char *path;
    char *reason;           /* "too large", "excluded", "new-file cap", "invalid name" */
    uint64_t size;          /* too large: bytes */
    long count;             /* new-file cap: files left out */
} snap_missed;

typedef struct snap_changes {
    snap_file *files;       /* risk marks first, then by path */
    size_t n_files;
    int added, modified, deleted, renamed, typechanged;
    long lines_added, lines_removed;
    snap_missed *missed;    /* files not captured */
    size_t n_missed;
    unsigned risks;         /* every mark on any file */
} snap_changes;

/* The changes from snapshot before to after (commit ids).  0, or -1 with err. */
int snap_changes_compute(snap_store *st, const char *before, const char *after, snap_changes *out, char *err,
                         size_t errlen);
void snap_changes_free(snap_changes *c);
/* {"counts":{...},"lines":{...},"risk":[...],"not_captured":[...]} and,
 * with files, "files":[...] (each with its marks and sizes). */
json_t *snap_changes_json(const snap_changes *c, bool files);

/* The risk marks of one path by its name and modes alone. */
unsigned snap_path_risks(const char *path, unsigned old_mode, unsigned new_mode);
/* Why the path's name makes it risky, for the mark's detail: what runs it
 * and when ("Claude Code loads .claude/ where it starts ..."); NULL when
 * its name does not. */
const char *snap_path_risk_why(const char *path);

#endif
