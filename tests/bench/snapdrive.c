/*
 * snapdrive.c - the snapshot engine alone, for tests/bench/bench_snap.py:
 * opens a workspace's store the way the server does and times snapshots
 * in-process (what the server's worker thread spends), printing one JSON
 * object a line.
 *
 *   snapdrive SNAPDIR WS first [serial]
 *       the first snapshot: {"op":"first","seconds":S,"seeded":B,"files":N};
 *       serial: each file stored as a loose object as it comes, as before
 *       the pack (snap_pack.h), whatever the number of files
 *   snapdrive SNAPDIR WS pack
 *       maintenance as after a big snapshot (repack):
 *       {"op":"pack","seconds":S,"bytes_before":B,"bytes_after":A}
 *   snapdrive SNAPDIR WS loop N [CHANGE...]
 *       N rounds; in each, every CHANGE file (workspace-relative) gets a line
 *       appended, then a snapshot as a boundary takes it (the dirty bit
 *       first: reused when nothing changed), then one that walks the
 *       unchanged tree anyway (the stat-cache walk):
 *       {"op":"boundary","seconds":S,"reused":B} and {"op":"walk","seconds":S}
 *
 * Not a test: a helper the benchmark runs.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/snap_conf.h"
#include "snap/snap_gc.h"
#include "snap/snap_store.h"
#include "snap/snap_take.h"
#include "base/util.h"

static void append_line(const char *ws, const char *rel, int round)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", ws, rel);
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "snapdrive: cannot change %s\n", path);
        exit(1);
    }
    fprintf(f, "changed in round %d\n", round);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: snapdrive SNAPDIR WS first | loop N [CHANGE...]\n");
        return 2;
    }
    snap_conf conf;
    snap_conf_defaults(&conf);
    char err[1024];
    snap_store *st = snap_store_open(argv[1], argv[2], &conf, err, sizeof err);
    if (!st) {
        fprintf(stderr, "snapdrive: %s\n", err);
        return 1;
    }
    /* The workspace is read by corral's confined reader, a sandbox
     * running the corral binary (not this program). */
    if (getenv("CORRAL_BIN"))
        setenv("CORRAL_EXE", getenv("CORRAL_BIN"), 1);
    if (snap_store_start_reader(st, err, sizeof err) < 0) {
        fprintf(stderr, "snapdrive: %s\n", err);
        snap_store_close(st);
        return 1;
    }
    snap_taken t;
    int rc = 0;
    if (strcmp(argv[3], "first") == 0) {
        if (argc > 4 && strcmp(argv[4], "serial") == 0)
            st->pack_min = LONG_MAX;
        if (snap_take(st, true, true, &t) < 0) {
            fprintf(stderr, "snapdrive: %s\n", t.error);
            rc = 1;
        } else {
            printf("{\"op\":\"first\",\"seconds\":%.6f,\"seeded\":%s,\"files\":%ld}\n", t.seconds,
                   t.seeded ? "true" : "false", t.files);
        }
    } else if (strcmp(argv[3], "pack") == 0) {
        snap_gc_result r;
        double t0 = now_sec();
        rc = snap_gc_run(st, true, NULL, 0, &r) < 0 ? 1 : 0;
        if (rc)
            fprintf(stderr, "snapdrive: %s\n", r.error);
        printf("{\"op\":\"pack\",\"seconds\":%.6f,\"bytes_before\":%llu,\"bytes_after\":%llu}\n",
               now_sec() - t0, (unsigned long long)r.bytes_before, (unsigned long long)r.bytes_after);
    } else if (strcmp(argv[3], "loop") == 0 && argc >= 5) {
        int n = atoi(argv[4]);
        /* The first, untimed: it sets up the index and the watches. */
        if (snap_take(st, true, true, &t) < 0) {
            fprintf(stderr, "snapdrive: %s\n", t.error);
            rc = 1;
        }
        for (int i = 0; i < n && rc == 0; i++) {
            for (int k = 5; k < argc; k++)
                append_line(argv[2], argv[k], i);
            /* What a boundary does: the dirty bit first, then the walk if
             * anything changed. */
            double t0 = now_sec();
            if (snap_take(st, false, true, &t) < 0) {
                fprintf(stderr, "snapdrive: %s\n", t.error);
                rc = 1;
                break;
            }
            printf("{\"op\":\"boundary\",\"seconds\":%.6f,\"reused\":%s}\n", now_sec() - t0,
                   t.reused ? "true" : "false");
            /* The stat-cache walk of the tree as it is now (no change). */
            t0 = now_sec();
            snap_take(st, true, true, &t);
            printf("{\"op\":\"walk\",\"seconds\":%.6f}\n", now_sec() - t0);
            fflush(stdout);
        }
    } else {
        fprintf(stderr, "snapdrive: unknown operation '%s'\n", argv[3]);
        rc = 2;
    }
    snap_store_close(st);
    snap_conf_free(&conf);
    return rc;
}
