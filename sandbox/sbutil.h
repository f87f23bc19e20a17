/*
 * sbutil.h - small helpers of the sandbox modules (which may not use src/):
 * allocation that aborts on failure, path strings, growable string lists.
 *
 * Included by sandbox/, src/policy/, src/snap/, src/server/ and src/cli/.
 */
#ifndef CORRAL_SBUTIL_H
#define CORRAL_SBUTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

void *sb_alloc(size_t n);
void *sb_realloc(void *p, size_t n);
char *sb_strdup(const char *s);
char *sb_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Append s to a NULL-terminated list of n strings (takes a copy). */
void sb_list_push(char ***list, size_t *n, const char *s);
void sb_list_free(char **list, size_t n);

/* The parent of process pid, from /proc/PID/stat; -1 when it has gone. */
int sb_parent_pid(int pid);

/* Is path equal to root or below it?  Both absolute and canonical. */
bool sb_path_under(const char *path, const char *root);
/* Number of components ("/" is 0, "/a/b" is 2). */
int sb_path_depth(const char *path);
/* "a/b" relative to dir, or an absolute rel as is; no resolution. */
char *sb_path_join(const char *dir, const char *rel);
/* Everything fd has from where it is to its end, NUL-terminated (the NUL
 * not counted in *len); NULL on a read error (errno) or no memory. */
char *sb_read_fd(int fd, size_t *len);

/* Exactly len bytes read from fd, across short reads and EINTR: 0, or -1
 * (errno; EIO for an end of file before them). */
int sb_read_all(int fd, void *buf, size_t len);
/* All of buf written to fd, across short writes and EINTR: 0, or -1
 * (errno).  To a pipe whose reader is gone, under sb_sigpipe_hold, EPIPE. */
int sb_write_all(int fd, const void *buf, size_t len);

/* SIGPIPE held off on this thread between hold and release, so that a
 * write to a reader that is gone fails with EPIPE instead: a launcher
 * writing to the init it started (which may have failed and ended) must
 * live to report why.  One hold around all of a launch's writes. */
typedef struct sb_sigpipe_guard {
    sigset_t old;
    bool was_pending;
} sb_sigpipe_guard;
void sb_sigpipe_hold(sb_sigpipe_guard *g);
void sb_sigpipe_release(const sb_sigpipe_guard *g);

/* May what was just read of a file be remembered by its times (and reused
 * while they stay the same)?  Only when its last change (ctime) is at least
 * two seconds old: a change in the same tick of the kernel's clock, or an
 * inode freed and given out again within it, keeps the times as they were.
 * The memos of the plan's reads (dents.c, gitindex.c) ask this. */
struct stat;
bool sb_times_settled(const struct stat *st);
/* The same for a file's time of last change as read otherwise (the
 * server's memo of ended sessions' glances, by their log's mtime). */
bool sb_time_settled(struct timespec changed);
/* For tests only: how old the last change must be (0 keeps everything,
 * which a change in the same tick could make stale). */
void sb_settle_ns(long long ns);

/* Human size: 1073741824 -> "1 GiB". */
void sb_format_size(unsigned long long bytes, char *out, size_t outlen);

#endif
