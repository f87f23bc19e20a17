/*
 * filter.h - the sandbox's system-call filter (docs/sandbox.md): default
 * allow, a deny list that returns EPERM (clone3 ENOSYS), calls of other
 * architectures killed.  With network off, every socket family but AF_UNIX
 * and the calls that open connections are refused too.
 *
 * Included only in sandbox/.
 */
#ifndef CORRAL_SB_FILTER_H
#define CORRAL_SB_FILTER_H

#include <stddef.h>

#include "profile.h"

/* Install on the calling thread (needs no_new_privs or CAP_SYS_ADMIN).
 * 0, or -1 with err. */
int sb_seccomp_install(sb_net net, char *err, size_t errlen);
/* Compile the filter for net now: a later sb_seccomp_install for the same
 * net, in this process or one forked from it (a pre-built sandbox's
 * commands), loads it as it is.  0, or -1 with err. */
int sb_seccomp_precompile(sb_net net, char *err, size_t errlen);
/* How many rules the filter has for this network mode (for the plan). */
int sb_seccomp_rule_count(sb_net net);
/* One line per denied call group, for --print-plan. */
void sb_seccomp_describe(sb_net net, char *buf, size_t len);

#endif
