/*
 * snap_wire.h - the messages between the server and a workspace's
 * confined reader (snap_reader.h, snap_worker.c): frames on a stream
 * socket, each a 4-byte length, a 1-byte type and a payload of fixed-width
 * integers and length-prefixed byte strings, in the host's byte order (both
 * ends are the same corral binary on the same machine).
 *
 * The server reads what the reader sends as hostile: every length is
 * checked against the frame and against SNAP_WIRE_FRAME_MAX, and a reader
 * that sends anything malformed is killed.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_WIRE_H
#define CORRAL_SNAP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

/* The largest frame either side accepts: a file's bytes come in chunks of
 * at most SNAP_WIRE_CHUNK. */
#define SNAP_WIRE_CHUNK (1u << 20)
#define SNAP_WIRE_FRAME_MAX (SNAP_WIRE_CHUNK + 65536)

/* Server -> reader. */
enum {
    SW_CONFIG = 'C', /* caps, excludes, deny paths; then the stat cache in SW_CACHE frames */
    SW_CACHE = 'S',  /* entries of the stat cache (the server's index) */
    SW_TAKE = 'T',   /* look at the workspace: what changed since the cache */
    SW_QUIT = 'Q',
};

/* Reader -> server. */
enum {
    SW_HELLO = 'H',    /* set up and ready */
    SW_CLEAN = 'K',    /* TAKE: nothing changed (the dirty bit is clear) */
    SW_PROGRESS = 'P', /* u64 scanned, u64 total, u8 phase: also the heartbeat */
    SW_FILE = 'F',     /* a new or changed file: path, its stat, u64 length; the bytes follow in SW_BYTES */
    SW_BYTES = 'B',
    SW_DELETED = 'D',  /* path: in the cache, gone now */
    SW_GITLINK = 'G',  /* path, a nested repository's state (snap_gitdir) */
    SW_AROUND = 'A',   /* the repository around the workspace (snap_gitdir) */
    SW_LARGE = 'L',    /* path, u64 size, i64 mtime_ns, u32 mode: over the size cap */
    SW_IGNORED = 'I',  /* path (a directory ends in '/') */
    SW_INVALID = 'V',  /* path, reason: cannot be captured */
    SW_CAPPED = 'N',   /* directory, u64 new files left out */
    SW_DONE = 'Z',     /* u8 refused, i64 walk start (ns), u64 files, string message */
    SW_ERROR = 'E',    /* string: the reader cannot go on */
    SW_PACK = 'Y',     /* name ("pack-HEX"): the workspace repository's pack, its .idx and .pack as two descriptors */
};

/* A file's identity as a snapshot keeps it (git's index fields). */
typedef struct snap_wire_stat {
    uint32_t mode;     /* 0100644, 0100755, 0120000 */
    uint64_t size;
    int64_t mtime_ns, ctime_ns;
    uint64_t ino, dev;
    uint32_t uid, gid;
} snap_wire_stat;

/* Building a frame's payload. */
typedef struct snap_wire_out {
    buf_t b;
} snap_wire_out;

void sw_begin(snap_wire_out *o, int type);
void sw_u8(snap_wire_out *o, uint8_t v);
void sw_u32(snap_wire_out *o, uint32_t v);
void sw_u64(snap_wire_out *o, uint64_t v);
void sw_bytes(snap_wire_out *o, const void *data, size_t len); /* u32 length, then the bytes */
void sw_str(snap_wire_out *o, const char *s);
void sw_stat(snap_wire_out *o, const snap_wire_stat *st);
/* Send the frame (blocking); 0 or -errno.  The buffer is reset. */
int sw_send(int fd, snap_wire_out *o);
/* The same with descriptors passed along (SCM_RIGHTS). */
int sw_send_fds(int fd, snap_wire_out *o, const int *fds, int n);
/* Queue the frame in pending (many small frames go out in one write), and
 * send what is queued: 0 or -errno. */
void sw_queue(snap_wire_out *o, buf_t *pending);
int sw_flush(int fd, buf_t *pending);
void sw_out_free(snap_wire_out *o);

/* A received frame and a cursor over its payload.  Every getter returns
 * false once the payload is short or malformed (and keeps doing so). */
#define SNAP_WIRE_MAX_FDS 2

typedef struct snap_wire_in {
    int type;
    unsigned char *data; /* owned */
    size_t len, pos;
    bool bad;
    int fds[SNAP_WIRE_MAX_FDS]; /* descriptors that came with it (closed by sw_in_free unless taken) */
    int n_fds;
} snap_wire_in;

/* The receiving end of a connection: what was read but not taken yet,
 * descriptors that came along. */
typedef struct snap_wire_inbox {
    int fd;
    unsigned char *buf;
    size_t start, end, cap;
    int fds[8];
    int n_fds;
} snap_wire_inbox;

void sw_inbox_init(snap_wire_inbox *ib, int fd);
void sw_inbox_free(snap_wire_inbox *ib);

/* Receive one frame, waiting at most timeout_ms (-1: forever).
 * 1: a frame; 0: the peer closed; -ETIMEDOUT, -EPROTO (malformed) or
 * another -errno.  An SW_PACK frame gets the descriptors that came with
 * it. */
int sw_recv(snap_wire_inbox *ib, snap_wire_in *in, int timeout_ms);
/* The oldest descriptor that came along and no frame took (the caller's
 * now), or -1. */
int sw_take_fd(snap_wire_inbox *ib);
void sw_in_free(snap_wire_in *in);
bool sw_get_u8(snap_wire_in *in, uint8_t *v);
bool sw_get_u32(snap_wire_in *in, uint32_t *v);
bool sw_get_u64(snap_wire_in *in, uint64_t *v);
/* A byte string pointing into the frame (not NUL-terminated). */
bool sw_get_bytes(snap_wire_in *in, const unsigned char **data, size_t *len);
/* A string as a new NUL-terminated copy; false for one with a NUL inside
 * or longer than max. */
bool sw_get_str(snap_wire_in *in, char **out, size_t max);
bool sw_get_stat(snap_wire_in *in, snap_wire_stat *st);
/* The payload was read to its end exactly. */
bool sw_done(const snap_wire_in *in);

#endif
