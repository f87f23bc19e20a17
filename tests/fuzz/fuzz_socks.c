/*
 * fuzz_socks.c - libFuzzer target for the SOCKS5 messages the network
 * proxy reads from a sandboxed program (src/net/proxy_socks.c): the method
 * negotiation, then the request, read as src/net/proxy.c reads them, from
 * bytes that arrive in pieces.
 *
 * What a user would notice, checked beyond "no crash, no leak":
 *  - a message is recognised at the same length however its bytes
 *    arrive (the first input byte chooses the pieces), and never longer
 *    than what arrived;
 *  - a refusal says why and answers with one of RFC 1928's codes;
 *  - a request that parses names a command the proxy knows (BIND and UDP
 *    ASSOCIATE parse, for the proxy to refuse), a CONNECT a port other
 *    than 0, and a host the person asked about can read: non-empty,
 *    printable, without spaces, '/', '@', or ':' outside an IPv6 address,
 *    and the same host when the proxy's own normaliser reads it again.
 *
 * make check runs it over tests/fuzz/corpus/socks with replay_main.c;
 * tests/fuzz/build.sh builds it for libFuzzer (tests/fuzz/README.md).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/netaddr.h"
#include "net/proxy_socks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_socks: %s: %s\n", what, detail);
    abort();
}

/* The length a parser gives as the bytes arrive step at a time: the first
 * non-zero answer, or 0 if it still wants more at the end. */
#define AS_THEY_ARRIVE(call, d, len, step, out)                                                                \
    do {                                                                                                       \
        size_t got_ = 0;                                                                                       \
        (out) = 0;                                                                                             \
        while (got_ < (len)) {                                                                                 \
            got_ = got_ + (step) < (len) ? got_ + (step) : (len);                                              \
            size_t len_ = got_;                                                                                \
            (void)len_;                                                                                        \
            (out) = (call);                                                                                    \
            if ((out) != 0)                                                                                    \
                break;                                                                                         \
        }                                                                                                      \
    } while (0)

static void check_host(const socks5_request *r)
{
    size_t n = strlen(r->host);
    if (n == 0)
        broken("an empty host", "");
    bool v6 = strchr(r->host, ':') != NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)r->host[i];
        if (c <= ' ' || c >= 0x7f || c == '/' || c == '@' || (c == ':' && !v6))
            broken("a host the person could misread", r->host);
    }
    char again[NETADDR_HOST_MAX + 1];
    const char *why = NULL;
    if (netaddr_normalize_host(r->host, n, again, sizeof again, &why) < 0 || strcmp(again, r->host) != 0)
        broken("a host that does not read back as itself", r->host);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t step = (size_t)data[0] + 1;
    const uint8_t *d = data + 1;
    size_t len = size - 1;

    bool no_auth = false;
    const char *why = NULL;
    int whole = socks5_parse_greeting(d, len, &no_auth, &why);
    int cut;
    AS_THEY_ARRIVE(socks5_parse_greeting(d, len_, &no_auth, &why), d, len, step, cut);
    if (whole != cut)
        broken("a greeting read at another length when it arrives in pieces", "");
    if (whole < 0 && (!why || !*why))
        broken("a greeting refused without a reason", "");
    if (whole <= 0)
        return 0;
    if ((size_t)whole > len)
        broken("a greeting longer than what arrived", "");

    d += whole;
    len -= (size_t)whole;
    socks5_request r;
    uint8_t code = 0xff;
    why = NULL;
    int req = socks5_parse_request(d, len, &r, &code, &why);
    socks5_request r2;
    uint8_t code2 = 0xff;
    int req_cut;
    AS_THEY_ARRIVE(socks5_parse_request(d, len_, &r2, &code2, &why), d, len, step, req_cut);
    if (req != req_cut)
        broken("a request read at another length when it arrives in pieces", "");
    if (req < 0) {
        if (!why || !*why)
            broken("a request refused without a reason", "");
        if (code < SOCKS5_GENERAL_FAILURE || code > SOCKS5_ADDRESS_NOT_SUPPORTED)
            broken("a refusal with a code RFC 1928 does not have", why);
        uint8_t reply[SOCKS5_REPLY_LEN];
        socks5_reply(code, reply);
        if (reply[0] != 5 || reply[1] != code)
            broken("a reply that does not carry its code", "");
        return 0;
    }
    if (req == 0)
        return 0;
    if ((size_t)req > len)
        broken("a request longer than what arrived", "");
    if (r.command != SOCKS5_CMD_CONNECT && r.command != SOCKS5_CMD_BIND && r.command != SOCKS5_CMD_UDP_ASSOCIATE)
        broken("a request with an unknown command", "");
    if (r.port == 0 && r.command == SOCKS5_CMD_CONNECT)
        broken("a CONNECT to port 0", r.host);
    check_host(&r);
    return 0;
}
