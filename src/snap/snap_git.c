/*
 * snap_git.c - see snap_git.h.
 */
#include "config.h"

#define SNAP_GIT_LOADER
#include "snap/snap_git.h"
#include "snap/snap_store.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#define SNAP_GIT_DEFINE(name) __typeof__(name) *snap_git_##name;
SNAP_GIT_FUNCTIONS(SNAP_GIT_DEFINE)
#undef SNAP_GIT_DEFINE

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[768];
/* Set (release) once load() has run: load_error is final from then on and
 * may be read by a thread that did not run it. */
static atomic_bool load_done;

/*
 * libgit2's global init also readies the network transports it was built
 * with: on Debian, libssh2's init (which initialises OpenSSL 3: its
 * configuration, its providers, 1.5 MiB of libcrypto paged in) and
 * mbedTLS's (which parses every certificate of the system's trust store,
 * 270 KiB of heap).  It took 8 ms of the server's start and 2 MiB of its
 * memory for two protocols a snapshot store never speaks: corral calls no
 * libgit2 function that fetches or pushes (SNAP_GIT_FUNCTIONS has none).
 *
 * So the corral binary defines the two calls of that init which do the
 * work, and exports them (Makefile.am: --export-dynamic-symbol): the
 * dynamic linker binds libgit2's references to the executable's
 * definitions before those of libssh2 and libmbedx509.  Neither is called
 * by anything else in corral.  A store that one day fetched or pushed
 * would need both back (and the trust store is then missing, so a TLS
 * connection would fail its certificate check rather than go unchecked).
 */
int libssh2_init(int flags);
int mbedtls_x509_crt_parse_file(void *chain, const char *path);

int libssh2_init(int flags)
{
    (void)flags;
    return 0;
}

/* MBEDTLS_ERR_X509_FEATURE_UNAVAILABLE: libgit2 then goes on without a CA
 * chain (the header is not needed for one constant). */
#define NO_CA_CHAIN (-0x2080)

int mbedtls_x509_crt_parse_file(void *chain, const char *path)
{
    (void)chain;
    (void)path;
    return NO_CA_CHAIN;
}

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
    /* The init's refused trust store (above) left an error behind. */
    snap_git_git_error_clear();
}

static void load_once(void)
{
    load();
    atomic_store_explicit(&load_done, true, memory_order_release);
}

int snap_git_load(char *err, size_t errlen)
{
    pthread_once(&once, load_once);
    if (!load_error[0])
        return 0;
    snprintf(err, errlen, "%s", load_error);
    return -1;
}

const char *snap_git_load_failure(void)
{
    if (!atomic_load_explicit(&load_done, memory_order_acquire))
        return NULL;
    return load_error[0] ? load_error : NULL;
}
