/*
 * pathres.h - resolving a path that comes from a request (a working
 * directory, an extra write root) on the server, at request time, before a
 * human sees it (docs/ARCHITECTURE.md, "The gate").
 *
 * Such a path is hostile: code in a sandbox can create symlinks inside the
 * roots it may write, and re-point them between the moment a human approves
 * "write to WS/out" and the moment a later identical request runs.  So a
 * path is walked component by component (lstat, never following blindly):
 * a symlink inside a writable root is refused (the sandbox could re-point
 * it), a symlink elsewhere (/var/run -> /run, a merged /usr) is followed,
 * "." and ".." are applied to the resolved path, and the result must
 * exist.  What the dialog shows, what the session cache keys on and what
 * runs are this resolved path.
 *
 * Included only in src/gate/.
 */
#ifndef CORRAL_PATHRES_H
#define CORRAL_PATHRES_H

#include <stdbool.h>
#include <stddef.h>

/* Resolve absolute path.  writable: the roots a sandbox could write,
 * canonical, NULL-terminated (may be NULL).  Returns the canonical path
 * (caller frees), or NULL with err naming the path, the offending part and
 * what to do. */
char *pathres_resolve(const char *path, char *const *writable, char *err, size_t errlen);

/* path (canonical) is root or below it. */
bool pathres_under(const char *path, const char *root);

#endif
