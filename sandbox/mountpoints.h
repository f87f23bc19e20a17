/*
 * mountpoints.h - the mount points of this process's mount namespace, as
 * /proc/self/mountinfo lists them, read again only when they changed.
 *
 * The server plans a sandbox for every command and the plan looks for
 * mounts inside the home; the namespace's mounts almost never change while
 * it runs.  The kernel says when they do: poll() on an open mountinfo file
 * reports POLLPRI once after any mount or unmount in the namespace since the
 * last poll.  The file is polled before every use and read again when it
 * reports a change (or cannot be polled), so a list is never older than the
 * poll that preceded it.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_MOUNTPOINTS_H
#define CORRAL_SB_MOUNTPOINTS_H

#include <stddef.h>

/* The mount points, unescaped ("\040" is a space), each NUL-terminated,
 * one after another in a buffer of *len bytes that the caller frees; NULL
 * when mountinfo cannot be read. */
char *sb_mountpoints(size_t *len);

#endif
