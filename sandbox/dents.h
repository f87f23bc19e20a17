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

#include <stdbool.h>
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

/* Does the directory at path hold nothing but "." and ".."?  Opened
 * without following a symlink (false when it cannot be opened) and read
 * with getdents64 until an entry says no: opendir() would fstat it too.  A
 * failed read ends the look, as the end of readdir() would.  For the
 * plan's check of each protected directory (is it an empty placeholder?). */
bool sb_dir_empty(const char *path);

/* What the searches use: the entries of the directory at path that a
 * search can act on (directories, symlinks, names that start with a dot,
 * and HEAD, objects and refs, which make a git directory), with every
 * type known (DT_UNKNOWN only when even fstatat cannot tell).  The
 * directory is opened with RESOLVE_NO_SYMLINKS: one swapped for a symlink
 * is not followed.  0, or -1 with errno (from opening or listing it).
 *
 * In a process that called sb_dents_watch(), a listing is kept, by path,
 * while an inotify watch on the very directory that was listed (added
 * through its descriptor, before the listing is read) reports nothing: no
 * entry made, removed, renamed or changed in its attributes, the directory
 * itself not removed, moved or unmounted.  An event on a directory forgets
 * its listing and those of everything below the entry it names (below the
 * directory itself for an event about the directory), so that a path
 * never answers for a tree renamed away; a lost event (the queue
 * overflowed) forgets everything.  root: the path is a search's root,
 * whose way down from / is not watched: the directory it names now is
 * checked to be the one listed (one open and fstat), and pending events
 * are read first.  So a search of an unchanged tree costs no system call
 * per directory.  Only on the file systems whose changes all go through
 * this kernel's VFS with exact times (ext4, XFS, btrfs, tmpfs, f2fs). */
int sb_dents_at(const char *path, bool root, sb_dents *out);

/* Keep listings watched from now on (the server: a plan is compiled for
 * every command).  Without it, sb_dents_at lists every time, through
 * sb_dents_read's memo. */
void sb_dents_watch(void);

#endif
