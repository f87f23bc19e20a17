/*
 * doctor.h - what this kernel supports for corral's sandbox, and what corral
 * will therefore enforce (corral doctor).
 *
 * Included by sandbox/ and src/cli/.
 */
#ifndef CORRAL_SB_DOCTOR_H
#define CORRAL_SB_DOCTOR_H

#include <stdbool.h>
#include <stdio.h>

#include "plan.h"

/* Print the report; plan is a compiled default plan to try for real.
 * Returns true when confined sandboxes work here. */
bool sb_doctor(FILE *f, const sb_plan *plan);

#endif
