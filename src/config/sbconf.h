/*
 * sbconf.h - sandbox profiles as the user configured them: a built-in or
 * [profile "NAME"] profile (with its base chain), the [sandbox] extras that
 * apply to every confined profile, and [env]; plus the request corral
 * derives from its own directories.  Shared by `corral sandbox` and the
 * server, so both confine a command the same way.
 */
#ifndef CORRAL_SBCONF_H
#define CORRAL_SBCONF_H

#include <stddef.h>

#include "config/conf.h"
#include "sandbox/plan.h"
#include "sandbox/profile.h"

/* Build profile name (NULL: the configured default, else workspace-write).
 * 0, or -1 with err naming the profile and what is wrong. */
int sbconf_profile(const conf_t *c, const char *name, sb_profile *out, char *err, size_t errlen);

/* Fill the directory fields of req from corral's paths and the
 * environment: home, runtime dir, corral's state/config dirs, the cache
 * root for the workspace (created), where home layers live and the
 * workspace's name there.  The state directory is created: it is denied,
 * and a home layer made in it later must stay hidden.  Strings live in
 * static storage. */
void sbconf_request_dirs(sb_request *req, const char *workspace);

#endif
