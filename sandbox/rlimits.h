/*
 * rlimits.h - resource limits: rlimits (core, open files, file size, and
 * processes when no cgroup can be made) and a cgroup per sandbox where one
 * can be made (a delegated cgroup v2 subtree, or a writable v1 pids/memory
 * hierarchy) for pids.max and memory.max.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_RLIMITS_H
#define CORRAL_SB_RLIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "profile.h"

#define SB_CGROUP_MAX_DIRS 2

/* A sandbox's cgroups, made by the launcher for the sandbox's init. */
typedef struct sb_cgroup {
    char *dirs[SB_CGROUP_MAX_DIRS]; /* to remove when the sandbox ends */
    bool pids_applied;
    bool memory_applied;
    char why_not[512]; /* why pids.max (or memory.max) could not be applied */
} sb_cgroup;

/* Probe (without changing anything) where a cgroup could be made; fills
 * what would apply and why not.  For --print-plan and corral doctor. */
void sb_cgroup_probe(const sb_limits *l, sb_cgroup *out, char *where, size_t wherelen);

/* Make cgroups for pid with the limits and move pid into them; never
 * fails the launch: what could not be done is recorded in out. */
void sb_cgroup_create(pid_t pid, const sb_limits *l, sb_cgroup *out);
/* Remove them (the sandbox's processes are gone) and free. */
void sb_cgroup_remove(sb_cgroup *cg);

/* Whether RLIMIT_NPROC limits the sandbox at all: the kernel exempts
 * processes whose real uid is the host's root (INIT_USER), and the
 * sandbox's processes keep the launcher's host uid. */
bool sb_nproc_applies(void);

/* Set the rlimits; nproc only when the cgroup did not take pids.max.
 * 0, or -1 with err. */
int sb_rlimits_apply(const sb_limits *l, bool cgroup_pids, char *err, size_t errlen);

#endif
