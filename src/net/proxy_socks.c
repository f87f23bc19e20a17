/*
 * proxy_socks.c - see proxy_socks.h.
 */
#include "config.h"

#include "net/proxy_socks.h"

#include <arpa/inet.h>
#include <string.h>

int socks5_parse_greeting(const uint8_t *d, size_t len, bool *no_auth, const char **why)
{
    if (len < 1)
        return 0;
    if (d[0] != 5) {
        *why = d[0] == 4 ? "SOCKS4 is not spoken here (use socks5:// or socks5h://)" : "not a SOCKS5 greeting";
        return -1;
    }
    if (len < 2)
        return 0;
    if (d[1] == 0) {
        *why = "the SOCKS5 greeting offers no method";
        return -1;
    }
    size_t n = 2 + (size_t)d[1];
    if (len < n)
        return 0;
    *no_auth = memchr(d + 2, 0x00, d[1]) != NULL;
    return (int)n;
}

int socks5_parse_request(const uint8_t *d, size_t len, socks5_request *r, uint8_t *reply, const char **why)
{
    memset(r, 0, sizeof *r);
    if (len < 4)
        return 0;
    if (d[0] != 5 || d[2] != 0) {
        *why = "not a SOCKS5 request (version or reserved byte)";
        *reply = SOCKS5_GENERAL_FAILURE;
        return -1;
    }
    r->command = d[1];
    size_t n;
    char text[NETADDR_HOST_MAX + 1];
    const char *host;
    size_t hostlen;
    switch (d[3]) {
    case 1: /* IPv4 */
        n = 4 + 4 + 2;
        if (len < n)
            return 0;
        inet_ntop(AF_INET, d + 4, text, sizeof text);
        host = text;
        hostlen = strlen(text);
        break;
    case 4: /* IPv6 */
        n = 4 + 16 + 2;
        if (len < n)
            return 0;
        inet_ntop(AF_INET6, d + 4, text, sizeof text);
        host = text;
        hostlen = strlen(text);
        break;
    case 3: /* a domain name, resolved here after the decision */
        if (len < 5)
            return 0;
        n = 4 + 1 + (size_t)d[4] + 2;
        if (len < n)
            return 0;
        host = (const char *)d + 5;
        hostlen = d[4];
        break;
    default:
        *why = "an address type other than IPv4, IPv6 or a domain name";
        *reply = SOCKS5_ADDRESS_NOT_SUPPORTED;
        return -1;
    }
    r->port = (uint16_t)(d[n - 2] << 8 | d[n - 1]);
    if (r->command != SOCKS5_CMD_CONNECT && r->command != SOCKS5_CMD_BIND &&
        r->command != SOCKS5_CMD_UDP_ASSOCIATE) {
        *why = "an unknown SOCKS5 command";
        *reply = SOCKS5_COMMAND_NOT_SUPPORTED;
        return -1;
    }
    if (netaddr_normalize_host(host, hostlen, r->host, sizeof r->host, why) < 0) {
        *reply = SOCKS5_HOST_UNREACHABLE;
        return -1;
    }
    if (r->port == 0 && r->command == SOCKS5_CMD_CONNECT) {
        *why = "port 0";
        *reply = SOCKS5_HOST_UNREACHABLE;
        return -1;
    }
    return (int)n;
}

void socks5_reply(uint8_t code, uint8_t out[SOCKS5_REPLY_LEN])
{
    memset(out, 0, SOCKS5_REPLY_LEN);
    out[0] = 5;
    out[1] = code;
    out[3] = 1; /* IPv4: 0.0.0.0, port 0 */
}
