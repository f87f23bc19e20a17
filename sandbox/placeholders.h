/*
 * placeholders.h - the empty read-only mount points corral makes on the
 * host for protected paths that do not exist (.git, .git/hooks, .corral,
 * a commondir saying "." ...), shared by every sandbox that uses them and
 * removed when the last of those ends.
 *
 * Sharing: a registry directory (one per user and machine, which no sandbox
 * can see: it is on the default deny list) holds one entry per placeholder
 * corral made, recording
 * the inode it made; each launcher using the placeholder holds a shared
 * flock on that entry.  Making, adopting and removing placeholders happen
 * under one exclusive lock in the registry, so a sandbox being set up never
 * meets a placeholder half removed by one that ends, and a placeholder is
 * removed only by the last launcher holding it, only if it is still the
 * inode corral made (and still empty, or still the content corral wrote).
 *
 * Every launcher of the user must use the same registry, whatever its
 * environment: one that finds a placeholder with no entry takes it for the
 * user's own and holds nothing, so the launcher that made it removes it at
 * its end while the other's sandbox still stands on it, and the kernel
 * then detaches that sandbox's read-only mount over it (a directory
 * removed on the host takes the mounts on it in other namespaces with it):
 * the sandbox could make the name after all.  So the registry's place
 * depends on no environment variable (it once was $XDG_RUNTIME_DIR).
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

/* The directory the registry is in, one per user and machine whatever the
 * caller's environment: /dev/shm/corral-UID (UID as the user namespace
 * above sees the caller's, so corral in `unshare -r` is still the user it
 * is outside; a tmpfs: entries cost no disk
 * work), or /tmp/corral-UID where /dev/shm is not a world-writable sticky
 * directory.  Made (mode 0700) if missing, so that the deny list, which
 * masks it in every sandbox, finds it.  Caller frees. */
char *sb_placeholder_home(void);

/* The registry in home (what sb_placeholder_home returned):
 * home/placeholders.  Caller frees. */
char *sb_placeholder_registry(const char *home);

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
