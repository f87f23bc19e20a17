/*
 * snap_git.c - see snap_git.h.
 */
#include "config.h"

#define SNAP_GIT_LOADER
#include "snap/snap_git.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define SNAP_GIT_DEFINE(name) __typeof__(name) *snap_git_##name;
SNAP_GIT_FUNCTIONS(SNAP_GIT_DEFINE)
#undef SNAP_GIT_DEFINE

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[768];

/* The library the headers describe (the same soname: the same ABI). */
#define LIBGIT2_SONAME "libgit2.so." LIBGIT2_SOVERSION

static void load(void)
{
    void *h = dlopen(LIBGIT2_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error,
                 "snapshots need libgit2 %s (%s), which cannot be loaded: %s; install the Debian package "
                 "libgit2-%s",
                 LIBGIT2_VERSION, LIBGIT2_SONAME, why ? why : "unknown error", LIBGIT2_SOVERSION);
        return;
    }
#define SNAP_GIT_RESOLVE(name)                                                                         \
    if (!load_error[0] && !(snap_git_##name = (__typeof__(name) *)dlsym(h, #name)))                   \
        snprintf(load_error, sizeof load_error, "%s has no %s: not the libgit2 corral was built for", \
                 LIBGIT2_SONAME, #name);
    SNAP_GIT_FUNCTIONS(SNAP_GIT_RESOLVE)
#undef SNAP_GIT_RESOLVE
    if (load_error[0])
        return;
    snap_git_git_libgit2_init();
    /* Objects read back must hash to their names (a store seeded from a
     * repository a sandbox could write must not lie about content). */
    snap_git_git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 1);
    /* Stores are corral's own: no check of their owner against the user's
     * safe.directory settings. */
    snap_git_git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
}

int snap_git_load(char *err, size_t errlen)
{
    pthread_once(&once, load);
    if (!load_error[0])
        return 0;
    snprintf(err, errlen, "%s", load_error);
    return -1;
}
