/*
 * proxy_socks.h - the SOCKS5 messages the network proxy reads and writes
 * (RFC 1928): the method negotiation (no authentication only), the
 * request, and the replies.  Pure functions over bytes.
 *
 * Included only in src/net/.
 */
#ifndef CORRAL_PROXY_SOCKS_H
#define CORRAL_PROXY_SOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/netaddr.h"

/* Reply codes (RFC 1928 section 6). */
enum {
    SOCKS5_SUCCEEDED = 0x00,
    SOCKS5_GENERAL_FAILURE = 0x01,
    SOCKS5_NOT_ALLOWED = 0x02,
    SOCKS5_NETWORK_UNREACHABLE = 0x03,
    SOCKS5_HOST_UNREACHABLE = 0x04,
    SOCKS5_CONNECTION_REFUSED = 0x05,
    SOCKS5_TTL_EXPIRED = 0x06,
    SOCKS5_COMMAND_NOT_SUPPORTED = 0x07,
    SOCKS5_ADDRESS_NOT_SUPPORTED = 0x08,
};

enum { SOCKS5_CMD_CONNECT = 1, SOCKS5_CMD_BIND = 2, SOCKS5_CMD_UDP_ASSOCIATE = 3 };

/* The method negotiation: how many bytes it took (> 0), 0 when more are
 * needed, -1 when it is not SOCKS5 (with *why).  *no_auth: the client
 * offers "no authentication", the one method corral speaks. */
int socks5_parse_greeting(const uint8_t *d, size_t len, bool *no_auth, const char **why);

typedef struct socks5_request {
    uint8_t command;
    char host[NETADDR_HOST_MAX + 1]; /* normalised; an address as text */
    uint16_t port;
} socks5_request;

/* The request: its length (> 0), 0 when more bytes are needed, or -1 with
 * *why and *reply the code to answer with (the connection then closes).
 * A request naming BIND or UDP ASSOCIATE parses: the caller refuses it. */
int socks5_parse_request(const uint8_t *d, size_t len, socks5_request *r, uint8_t *reply, const char **why);

/* A reply with code and an unspecified bound address (0.0.0.0:0): the
 * proxy's own addresses are none of the sandbox's business. */
#define SOCKS5_REPLY_LEN 10
void socks5_reply(uint8_t code, uint8_t out[SOCKS5_REPLY_LEN]);

#endif
