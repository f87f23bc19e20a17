/*
 * netns.h - the sandbox's own network namespace (every confined profile
 * but --net full): what the init sets up in it while it still holds
 * CAP_NET_ADMIN there.  A new namespace has one interface, loopback, and
 * it is down: binding 127.0.0.1 works but nothing reaches it.  The init
 * brings it up, so local servers and their clients inside one sandbox talk
 * over 127.0.0.1 and ::1; nothing is routed out of the namespace.
 *
 * Proxy mode adds to this namespace: the init's listeners on
 * 127.0.0.1:3128 (HTTP) and :1080 (SOCKS5), which hand each connection to
 * the server over the session channel.
 *
 * Included by sandbox/, src/server/ and src/cli/.
 */
#ifndef CORRAL_SB_NETNS_H
#define CORRAL_SB_NETNS_H

#include <stddef.h>

/* Bring the loopback interface up.  0, or -1 with err. */
int sb_netns_loopback_up(char *err, size_t errlen);

/* Where a sandbox in proxy mode finds the proxy (and what its environment's
 * HTTP_PROXY and ALL_PROXY name). */
#define SB_PROXY_HTTP_PORT 3128
#define SB_PROXY_SOCKS_PORT 1080
/* Where a program whose parent closed the session channel (fd 3), as
 * agents do for the shell commands they run, still marks its commands
 * (corral __hook-mark): the server reads one mark per connection here. */
#define SB_MARK_PORT 3129

/* Proxy mode: listen on 127.0.0.1:3128, :1080 and :3129 in this namespace
 * and hand the three listening sockets to the server over the session
 * channel chan (one message, {"verb":"listeners"}, HTTP, SOCKS5, marks),
 * keeping no copy: the server accepts the sandbox's connections on them.
 * 0, or -1 with err (no channel: not started by the server). */
int sb_netns_proxy_listeners(int chan, char *err, size_t errlen);

#endif
