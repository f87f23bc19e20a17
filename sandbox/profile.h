/*
 * profile.h - what a sandbox allows (docs/sandbox.md): filesystem entries
 * (a path, or a special path :workspace :tmp :minimal, with read, write or
 * deny), a network mode, resource limits and the environment policy.
 *
 * Built-in profiles: read-only, workspace-write (the default) and full (no
 * sandbox at all; never the default).  The command line and the config file
 * add entries on top of a base profile.  Deny beats write beats read, and the
 * more specific path wins (plan.c resolves that).
 *
 * Included by sandbox/, src/config/, src/snap/ and src/gate/.
 */
#ifndef CORRAL_SB_PROFILE_H
#define CORRAL_SB_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum sb_access { SB_READ = 1, SB_WRITE = 2, SB_DENY = 3 } sb_access;
typedef enum sb_net { SB_NET_OFF = 0, SB_NET_PROXY = 1, SB_NET_FULL = 2 } sb_net;
/* Where a sandbox's writes to the home directory go (plan.h, "the home
 * layer"): a layer of its own, removed when it ends (the default); a layer
 * kept for the workspace; or nowhere: the home is read-only. */
typedef enum sb_home_layer { SB_HOME_DISCARD = 0, SB_HOME_KEEP = 1, SB_HOME_OFF = 2 } sb_home_layer;

#define SB_PROFILE_DEFAULT "workspace-write"

typedef struct sb_entry {
    char *path; /* absolute, "~/..." (home), or ":workspace", ":tmp", ":minimal" */
    sb_access access;
    bool builtin; /* from the profile or the default deny list, not the user */
} sb_entry;

/* Limits: 0 means "not set" except where noted. */
typedef struct sb_limits {
    uint64_t nofile;      /* RLIMIT_NOFILE */
    uint64_t fsize;       /* RLIMIT_FSIZE, bytes */
    uint64_t core;        /* RLIMIT_CORE, bytes (0 is a real value: no cores) */
    uint64_t nproc;       /* RLIMIT_NPROC when no cgroup can be made */
    uint64_t tmp_size;    /* private /tmp tmpfs size, bytes */
    uint64_t pids_max;    /* cgroup pids.max */
    uint64_t memory_max;  /* cgroup memory.max, bytes; 0 = none */
} sb_limits;

typedef struct sb_profile {
    char *name;
    bool unconfined; /* "full": no namespaces, no filter, no mount view */
    sb_entry *entries;
    size_t n_entries, cap_entries;
    sb_net net;
    sb_home_layer home_layer;
    bool home_layer_on_disk; /* [sandbox] home-layer-in = disk: a throw-away layer
                                on disk even where one in memory is possible */
    sb_limits limits;
    char **env_keep; /* names or globs (a secret-looking name only by exact name) */
    size_t n_keep;
    char **env_set;  /* NAME=VALUE */
    size_t n_set;
} sb_profile;

/* Fill p with a built-in profile; -1 with err for an unknown name. */
int sb_profile_builtin(sb_profile *p, const char *name, char *err, size_t errlen);
/* Names of the built-in profiles, NULL-terminated. */
extern const char *const sb_builtin_profiles[];

void sb_profile_add(sb_profile *p, const char *path, sb_access access);
void sb_profile_keep_env(sb_profile *p, const char *name);
void sb_profile_set_env(sb_profile *p, const char *name_value);
void sb_profile_free(sb_profile *p);

/* "off"/"proxy"/"full" <-> sb_net; -1 for anything else. */
int sb_net_parse(const char *s);
const char *sb_net_name(sb_net n);
const char *sb_access_name(sb_access a);
/* "discard"/"keep"/"off" <-> sb_home_layer; -1 for anything else. */
int sb_home_layer_parse(const char *s);
const char *sb_home_layer_name(sb_home_layer h);

/* Paths every confined profile denies: credential stores, host socket
 * directories, corral's own state.  "~" is the home directory. */
extern const char *const sb_default_deny[];

#endif
