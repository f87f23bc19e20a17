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

#include <stdbool.h>
#include <stddef.h>

#include "profile.h"

/* Install on the calling thread (needs no_new_privs or CAP_SYS_ADMIN).
 * 0, or -1 with err. */
int sb_seccomp_install(sb_net net, char *err, size_t errlen);
/* Compile the filter for net now: a later sb_seccomp_install for the same
 * net, in this process or one forked from it (a pre-built sandbox's
 * commands), loads it as it is.  0, or -1 with err. */
int sb_seccomp_precompile(sb_net net, char *err, size_t errlen);
/* Whether a program for net is here, compiled ahead or received. */
bool sb_seccomp_have_precompiled(sb_net net);
/* The launcher's side: the filter for net, compiled (once per process and
 * mode), written to fd for the init it launched: a count of instructions
 * (uint32_t, 0 when it could not be compiled) and the instructions.  It
 * compiles while the init execs and builds its view, so the init loads
 * it instead of compiling it itself (about 0.7 ms of libseccomp's work). */
void sb_seccomp_send(int fd, sb_net net);
/* The init's side: read what sb_seccomp_send wrote; a later
 * sb_seccomp_install(net) loads it.  Nothing readable (the launcher had
 * none, ended or wrote something else): the install compiles its own. */
void sb_seccomp_receive(int fd, sb_net net);
/* How many rules the filter has for this network mode (for the plan). */
int sb_seccomp_rule_count(sb_net net);
/* One line per denied call group, for --print-plan. */
void sb_seccomp_describe(sb_net net, char *buf, size_t len);

#endif
