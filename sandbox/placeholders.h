/*
 * placeholders.h - the empty read-only mount points corral makes on the
 * host for protected paths that do not exist (.git, .git/hooks, .corral,
 * a commondir saying "." ...), shared by every sandbox that uses them and
 * removed when the last of those ends.
 *
 * Sharing: a registry directory inside corral's runtime directory (which no
 * sandbox can see) holds one entry per placeholder corral made, recording
 * the inode it made; each launcher using the placeholder holds a shared
 * flock on that entry.  Making, adopting and removing placeholders happen
 * under one exclusive lock in the registry, so a sandbox being set up never
 * meets a placeholder half removed by one that ends, and a placeholder is
 * removed only by the last launcher holding it, only if it is still the
 * inode corral made (and still empty, or still the content corral wrote).
 *
 * Every placeholder is made and removed relative to a descriptor of its
 * parent directory, opened with openat2(RESOLVE_NO_SYMLINKS): a path
 * component swapped for a symlink by a sandbox fails the launch instead of
 * creating anything elsewhere, and removal happens in the directory the
 * placeholder was made in, wherever that directory has since been moved.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_PLACEHOLDERS_H
#define CORRAL_SB_PLACEHOLDERS_H

#include <stddef.h>

#include "plan.h"

/* What a launcher holds for its sandbox's lifetime. */
typedef struct sb_placeholder_hold sb_placeholder_hold;

/* The registry directory for a caller whose $XDG_RUNTIME_DIR is runtime_dir
 * (NULL when unset): <corral's runtime directory>/placeholders, where the
 * runtime directory is $XDG_RUNTIME_DIR/corral, or /tmp/corral-UID without
 * one (the server's socket lives there too).  Caller frees. */
char *sb_placeholder_registry(const char *runtime_dir);

/* Make the missing ones of ph (n entries) and hold every one that is a
 * placeholder corral made (made now, or by another sandbox), under the
 * registry's lock.  0 with *out set (release it after the sandbox has
 * ended), or -1 with err (nothing is left held or made). */
int sb_placeholders_acquire(const char *registry, const sb_placeholder *ph, size_t n, sb_placeholder_hold **out,
                            char *err, size_t errlen);

/* Let go of them; the last holder of a placeholder removes it.  NULL is
 * fine. */
void sb_placeholders_release(sb_placeholder_hold *hold);

#endif
