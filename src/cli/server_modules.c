/*
 * server_modules.c - the one place that names every module the server runs
 * (server/module.h), in the order the core calls their hooks: at start, at
 * shutdown, at every session's start, end and freeing, and for every
 * connection that closes or drains.  The order matters where one module
 * must act before another hears of the same event:
 *
 *   - a session's channel closes (sesschan) before its escalations end
 *     (escalation): nothing new arrives from it while they end;
 *   - the gate's modules stop before the snapshots' at shutdown, so a
 *     request withdrawn then finds the snapshot queue still there;
 *   - a finished command's "after" snapshot is queued (snap) before its
 *     waiter replies (waiter) and before the screens hear of the end
 *     (watch): whoever reacts to the end finds the snapshot under way.
 */
#include "config.h"

#include "cli/server_modules.h"
#include "gate/escalation.h"
#include "gate/gate_network.h"
#include "gate/gate_server.h"
#include "gate/notify.h"
#include "server/records.h"
#include "server/sesschan.h"
#include "server/waiter.h"
#include "server/watch.h"
#include "snap/retention_server.h"
#include "snap/snap_server.h"

#include <stddef.h>

const server_module *const corral_server_modules[] = {
    &sesschan_module,     /* a session's channel */
    &escalation_module,   /* requests from inside sessions */
    &gate_network_module, /* the network proxy's questions */
    &gate_server_module,  /* the gate: rules, the approval queue */
    &gate_exec_module,    /* exec requests */
    &notify_module,       /* [notify] command when a request waits */
    &snap_module,         /* snapshots at command boundaries */
    &snap_commands_module,
    &retention_module,    /* gc of ended sessions and the stores */
    &records_module,      /* record files for log, replay, export on another machine */
    &waiter_module,       /* unified-exec waits and their replies */
    &watch_module,        /* screens that follow sessions */
    NULL,
};
