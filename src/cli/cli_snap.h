/*
 * cli_snap.h - the snapshot stores' lines of corral doctor, written by the
 * snapshot verbs' file (cli_snap.c) for cli_sandbox.c's doctor.  Included
 * by src/cli/ only.
 */
#ifndef CORRAL_CLI_SNAP_H
#define CORRAL_CLI_SNAP_H

#include <stdio.h>

struct conf;

/* corral doctor's lines about snapshot stores. */
void snap_doctor_report(FILE *out, const struct conf *conf);

#endif
