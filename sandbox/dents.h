/*
 * dents.h - a directory's entries (names and types) for the plan's
 * searches of a writable root (nested repositories, agent configuration),
 * remembered while the directory is unchanged.
 *
 * The server compiles a plan for every command, and each plan lists every
 * directory of the workspace within the searches' depth.  The searches open
 * each directory themselves (no symlink followed, as before) and hand the
 * descriptor here; a listing is reused only while that very directory (its
 * device and inode) has the same modification and change times as when it
 * was read (an entry made, removed or renamed in it changes both, and the
 * change time cannot be set back), only on local file systems that keep
 * those times exactly (ext4, XFS, btrfs, f2fs, tmpfs), and only when it was
 * read at least two seconds after its last change (a change in the same
 * clock tick as the read would leave the times as they were).
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_DENTS_H
#define CORRAL_SB_DENTS_H

#include <stddef.h>

typedef struct sb_dent {
    char *name;
    unsigned char type; /* DT_*, DT_UNKNOWN when the file system does not say */
} sb_dent;

typedef struct sb_dents {
    sb_dent *v;
    size_t n;
} sb_dents;

/* The entries of the directory open at fd, "." and ".." left out, into
 * out (free with sb_dents_free).  0, or -1 with errno (from getdents64). */
int sb_dents_read(int fd, sb_dents *out);
void sb_dents_free(sb_dents *d);

#endif
