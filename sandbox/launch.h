/*
 * launch.h - the one way corral starts a process tree: carry out a launch
 * plan (plan.h) with the given stdio.
 *
 * Confined plans: the launcher clones a child into new user, mount, pid,
 * ipc, uts, cgroup (and net) namespaces; the child maps only the caller's
 * uid and gid, keeps its capabilities across exec as ambient ones, and
 * execs corral's init with the serialized plan.  The init (pid 1 there)
 * builds the mount view, gives up every privilege, installs Landlock and
 * the seccomp filter on itself, reports ready, and starts the command.
 * Unconfined plans ("full"): the init runs without namespaces.
 *
 * Nothing falls back: a launch that cannot be confined fails with a message
 * that names the missing kernel feature and the fix.
 *
 * Included by sandbox/, src/server/, src/snap/, src/gate/ and src/cli/.
 */
#ifndef CORRAL_LAUNCH_H
#define CORRAL_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "homelayer.h"
#include "placeholders.h"
#include "plan.h"
#include "rlimits.h"

typedef struct sb_stdio {
    int in, out, err; /* become the command's 0, 1, 2 */
    bool tty;         /* in is a terminal the command should take as its ctty */
    /* The session channel (src/server/sesschan.c), or -1: it becomes the
     * command's fd 3 (SB_CHANNEL_FD), the only other fd it inherits. */
    int chan;
} sb_stdio;

/* Where the command finds the session channel (CORRAL_SESSION_FD). */
#define SB_CHANNEL_FD 3

/* A started sandbox: release it once its init has been reaped. */
typedef struct sb_child {
    pid_t pid; /* the init, as the launcher sees it */
    /* The init's status pipe (confined only, else -1), non-blocking: it
     * says "R" when set up, "E message" when setup failed, and "S status"
     * with the command's wait status at the end (a pid 1 cannot re-raise
     * the signal that ended the command, so its own status would say
     * 128+N).  Feed what it says to sb_child_feed. */
    int status_fd;
    char status_buf[1100];
    size_t status_len;
    bool ready, have_status;
    bool status_eof; /* the init closed it (the fd stays open until release) */
    int worker_status;
    char *error;
    sb_cgroup cgroup;
    sb_placeholder_hold *placeholders; /* the mount points it holds on the host */
    sb_layer_hold layer;               /* its home layer's directory */
} sb_child;

/* corral's own binary, to start again as another of its parts: CORRAL_EXE
 * when it is an absolute path, else /proc/self/exe. */
const char *sb_self_exe(void);

/* Start the plan.  With wait, returns once the sandbox is set up (or has
 * failed); without, as soon as it is started (the status pipe then tells).
 * 0 with child filled, or -1 with err. */
int sb_launch(const sb_plan *plan, const sb_stdio *io, bool wait, sb_child *child, char *err, size_t errlen);

/* Read what the status pipe has (non-blocking).  Returns true when
 * something new was learnt (ready, an error, the final status). */
bool sb_child_feed(sb_child *child);

/* The command's wait status, given the init's (reaped) wait status: the
 * reported one when the init sent it. */
int sb_child_status(sb_child *child, int init_status);

/* Remove the sandbox's cgroups and placeholders, and its home layer unless
 * kept; call after reaping. */
void sb_child_release(sb_child *child);

/* Wait (blocking) until the init reports the command's status ("S"),
 * which it does only once it has killed and reaped every other process of
 * the sandbox, then let go of the placeholders and the home layer at once:
 * nothing of the sandbox but its init, which is ending, still stands on
 * them, and the kernel's teardown of the namespaces (a millisecond or
 * more) goes on meanwhile.  true then; false (nothing released) when the
 * pipe ended without a status (an init killed from outside: its processes
 * may still live until it is reaped).  sb_child_release does the rest. */
bool sb_child_release_at_status(sb_child *child);

/* A pre-built sandbox (docs/sandbox.md, "Pre-built sandboxes"): a plan's
 * view (without its home layer, with a door to the home layers), built
 * once by a holder init in new user and mount namespaces that then stays,
 * single-threaded, serving the launcher's requests on a socket: for each,
 * it forks the command's init (as the launcher's child, CLONE_PARENT)
 * into new pid, mount (a copy of the view), ipc, uts and net namespaces;
 * that init renews its /tmp, /dev, proc and home layer (mounts.h,
 * sb_mounts_renew) and goes on as any init.  The base holds the view's
 * placeholders through its holder (sb_child). */
typedef struct sb_base {
    int sock;             /* to the holder */
    sb_child holder;      /* its init: placeholders, cgroup */
    sb_layer_hold anchor; /* keeps the home layers' directory (launch.c) */
    char *key;            /* sb_base_key of the plan it was built for */
    size_t key_len;
} sb_base;

/* What must be equal for two plans to share a base: the plan without what
 * differs per command (argv, environment, working directory, why each
 * path is mounted), and the device and inode of what each mount is made
 * from and over, as they are now.  NULL when out of memory. */
char *sb_base_key(const sb_plan *plan, size_t *len);

/* Build a base for the plan.  0, or -1 with err (a plan that cannot be
 * pre-built says why; the caller launches it as usual instead). */
int sb_base_build(const sb_plan *plan, sb_base *base, char *err, size_t errlen);

/* Start the plan, whose key must be the base's, from the base: as
 * sb_launch, and the init is the caller's child in the same way.  layer:
 * the command's home layer made ahead for this plan (sb_layer_acquire, a
 * throw-away one), taken over whatever happens; NULL or empty: one is
 * made now. */
int sb_launch_from_base(sb_base *base, const sb_plan *plan, sb_layer_hold *layer, const sb_stdio *io, bool wait,
                        sb_child *child, char *err, size_t errlen);

/* Close the base once no command started from it runs: its holder ends
 * (and is reaped here, unless the caller reaped it already and set
 * holder.pid to -1), its placeholders go. */
void sb_base_release(sb_base *base);

/* The holder's side (init.c): serve requests on sock; returns only in a
 * command's init just forked, its fds in place (sb_base_forked_tty: with
 * a terminal). */
void sb_base_serve(int sock);
bool sb_base_forked_tty(void);

/* Ask a tree's init to end it (SIGKILL to every descendant, then it exits).
 * 0 or -errno. */
int launch_kill_tree(pid_t init_pid);

/* The parts of --print-plan that depend on this kernel and machine:
 * the home layer, Landlock, the seccomp filter, limits (and which could
 * not be applied). */
void sb_print_enforcement(const sb_plan *plan, FILE *f);

/* An explanation of why user namespaces could not be made, naming the
 * setting and the fix, for errno e from clone/unshare. */
void sb_userns_hint(int e, char *buf, size_t len);

#endif
