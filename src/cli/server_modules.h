/*
 * server_modules.h - the modules `corral server` runs (server_modules.c).
 *
 * Included only in src/cli/.
 */
#ifndef CORRAL_SERVER_MODULES_H
#define CORRAL_SERVER_MODULES_H

#include "server/module.h"

/* Ended by NULL; the order is the order of every hook (module.h). */
extern const server_module *const corral_server_modules[];

#endif
