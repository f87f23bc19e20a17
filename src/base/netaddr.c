/*
 * netaddr.c - see netaddr.h.  The ranges are those of the IANA special-
 * purpose address registries that are not the public internet; written as
 * tables so that each one is read, and tested, on its own line.
 */
#include "config.h"

#include "base/netaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

typedef struct range_v4 {
    uint8_t prefix[4];
    unsigned bits;
    const char *what;
} range_v4;

/* First match wins: the narrow ranges come before those that hold them. */
static const range_v4 SPECIAL_V4[] = {
    {{0, 0, 0, 0}, 32, "unspecified (0.0.0.0)"},
    {{0, 0, 0, 0}, 8, "\"this network\" (0.0.0.0/8)"},
    {{10, 0, 0, 0}, 8, "private (10.0.0.0/8)"},
    {{100, 64, 0, 0}, 10, "carrier-grade NAT (100.64.0.0/10)"},
    {{127, 0, 0, 0}, 8, "loopback (127.0.0.0/8)"},
    {{169, 254, 169, 254}, 32, "cloud metadata (169.254.169.254)"},
    {{169, 254, 0, 0}, 16, "link-local (169.254.0.0/16)"},
    {{172, 16, 0, 0}, 12, "private (172.16.0.0/12)"},
    {{192, 0, 0, 0}, 24, "IETF protocol assignments (192.0.0.0/24)"},
    {{192, 0, 2, 0}, 24, "documentation TEST-NET-1 (192.0.2.0/24)"},
    {{192, 88, 99, 0}, 24, "6to4 relay anycast (192.88.99.0/24)"},
    {{192, 168, 0, 0}, 16, "private (192.168.0.0/16)"},
    {{198, 18, 0, 0}, 15, "benchmarking (198.18.0.0/15)"},
    {{198, 51, 100, 0}, 24, "documentation TEST-NET-2 (198.51.100.0/24)"},
    {{203, 0, 113, 0}, 24, "documentation TEST-NET-3 (203.0.113.0/24)"},
    {{224, 0, 0, 0}, 4, "multicast (224.0.0.0/4)"},
    {{255, 255, 255, 255}, 32, "broadcast (255.255.255.255)"},
    {{240, 0, 0, 0}, 4, "reserved (240.0.0.0/4)"},
};

typedef struct range_v6 {
    uint8_t prefix[16];
    unsigned bits;
    const char *what;
} range_v6;

/* The forms that carry an IPv4 address are handled before this table
 * (netaddr_special_v6); everything outside 2000::/3, the only block
 * allocated for global unicast, is special after it. */
static const range_v6 SPECIAL_V6[] = {
    {{0}, 128, "unspecified (::)"},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, "loopback (::1)"},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96, "IPv4-mapped IPv6 (::ffff:0:0/96)"},
    {{0}, 96, "IPv4-compatible IPv6 (::/96)"},
    {{0, 0x64, 0xff, 0x9b, 0, 1}, 48, "local-use NAT64 (64:ff9b:1::/48)"},
    {{0x01, 0x00, 0, 0, 0, 0, 0, 0}, 64, "discard-only (100::/64)"},
    {{0x20, 0x01, 0, 0x02, 0, 0}, 48, "benchmarking (2001:2::/48)"},
    {{0x20, 0x01, 0, 0}, 32, "Teredo (2001::/32)"},
    {{0x20, 0x01, 0, 0x10}, 28, "ORCHID (2001:10::/28)"},
    {{0x20, 0x01, 0, 0x20}, 28, "ORCHIDv2 (2001:20::/28)"},
    {{0x20, 0x01, 0x0d, 0xb8}, 32, "documentation (2001:db8::/32)"},
    {{0x3f, 0xff, 0x00}, 20, "documentation (3fff::/20)"},
    {{0xfc}, 7, "unique local (fc00::/7)"},
    {{0xfe, 0x80}, 10, "link-local (fe80::/10)"},
    {{0xfe, 0xc0}, 10, "site-local (fec0::/10)"},
    {{0xff}, 8, "multicast (ff00::/8)"},
};

static const uint8_t NAT64_WKP[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};

static bool prefix_match(const uint8_t *addr, const uint8_t *prefix, unsigned bits)
{
    unsigned whole = bits / 8, rest = bits % 8;
    if (memcmp(addr, prefix, whole) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (addr[whole] & mask) == (prefix[whole] & mask);
}

const char *netaddr_special_v4(const uint8_t a[4])
{
    for (size_t i = 0; i < sizeof SPECIAL_V4 / sizeof SPECIAL_V4[0]; i++)
        if (prefix_match(a, SPECIAL_V4[i].prefix, SPECIAL_V4[i].bits))
            return SPECIAL_V4[i].what;
    return NULL;
}

const char *netaddr_special_v6(const uint8_t a[16])
{
    /* NAT64's well-known prefix (RFC 6052): the IPv4 address is the last
     * 32 bits; 6to4 (RFC 3056): bits 16 to 47. */
    if (memcmp(a, NAT64_WKP, sizeof NAT64_WKP) == 0)
        return netaddr_special_v4(a + 12) ? "NAT64 of a special IPv4 address (64:ff9b::/96)" : NULL;
    if (a[0] == 0x20 && a[1] == 0x02)
        return netaddr_special_v4(a + 2) ? "6to4 of a special IPv4 address (2002::/16)" : NULL;
    for (size_t i = 0; i < sizeof SPECIAL_V6 / sizeof SPECIAL_V6[0]; i++)
        if (prefix_match(a, SPECIAL_V6[i].prefix, SPECIAL_V6[i].bits))
            return SPECIAL_V6[i].what;
    if ((a[0] & 0xe0) != 0x20)
        return "not global unicast (outside 2000::/3)";
    return NULL;
}

const char *netaddr_special(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return netaddr_special_v4((const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr);
    if (sa->sa_family == AF_INET6)
        return netaddr_special_v6(((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr);
    return "not an IP address";
}

bool netaddr_same_address(const struct sockaddr *a, const struct sockaddr *b)
{
    if (a->sa_family != b->sa_family)
        return false;
    if (a->sa_family == AF_INET)
        return memcmp(&((const struct sockaddr_in *)a)->sin_addr, &((const struct sockaddr_in *)b)->sin_addr, 4) == 0;
    if (a->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
                      16) == 0;
    return false;
}

void netaddr_format(const struct sockaddr *sa, bool with_port, char *out, size_t outlen)
{
    char text[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    bool v6 = sa->sa_family == AF_INET6;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
        port = ntohs(in->sin_port);
    } else if (v6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
        port = ntohs(in6->sin6_port);
    }
    if (!with_port)
        snprintf(out, outlen, "%s", text);
    else if (v6)
        snprintf(out, outlen, "[%s]:%u", text, port);
    else
        snprintf(out, outlen, "%s:%u", text, port);
}

bool netaddr_literal(const char *host, uint16_t port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        return true;
    }
    if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        return true;
    }
    return false;
}

static bool is_name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

static int ipv6_canonical(const char *text, char *out, size_t outlen, const char **why)
{
    struct in6_addr a;
    if (strchr(text, '%')) {
        *why = "an IPv6 zone id (\"%...\") is not accepted";
        return -1;
    }
    if (inet_pton(AF_INET6, text, &a) != 1) {
        *why = "not a valid IPv6 address";
        return -1;
    }
    if (!inet_ntop(AF_INET6, &a, out, (socklen_t)outlen)) {
        *why = "no room for the address";
        return -1;
    }
    return 0;
}

int netaddr_normalize_host(const char *in, size_t len, char *out, size_t outlen, const char **why)
{
    char tmp[NETADDR_HOST_MAX + 2];
    if (outlen < NETADDR_HOST_MAX + 1) {
        *why = "no room for the host";
        return -1;
    }
    if (len == 0) {
        *why = "the host is empty";
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c <= 0x20 || c >= 0x7f) {
            *why = "the host holds a space, a control character or a byte outside ASCII";
            return -1;
        }
    }
    if (in[0] == '[') {
        if (len < 3 || in[len - 1] != ']' || len - 2 > INET6_ADDRSTRLEN - 1) {
            *why = "brackets hold only an IPv6 address";
            return -1;
        }
        memcpy(tmp, in + 1, len - 2);
        tmp[len - 2] = '\0';
        return ipv6_canonical(tmp, out, outlen, why);
    }
    if (memchr(in, ':', len)) {
        if (len > INET6_ADDRSTRLEN - 1) {
            *why = "not a valid IPv6 address";
            return -1;
        }
        memcpy(tmp, in, len);
        tmp[len] = '\0';
        return ipv6_canonical(tmp, out, outlen, why);
    }
    if (in[len - 1] == '.')
        len--; /* the root's dot: example.com. is example.com */
    if (len == 0 || len > NETADDR_HOST_MAX) {
        *why = len ? "the host name is longer than 253 characters" : "the host is empty";
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        char c = in[i];
        tmp[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
        if (!is_name_char((unsigned char)tmp[i])) {
            *why = "a host name holds only letters, digits, '-', '_' and dots";
            return -1;
        }
    }
    tmp[len] = '\0';
    /* What the C library's resolver would take for an IPv4 address is one
     * (inet_aton: 127.1, 0x7f000001, 017700000001). */
    struct in_addr a4;
    if (inet_aton(tmp, &a4)) {
        inet_ntop(AF_INET, &a4, out, (socklen_t)outlen);
        return 0;
    }
    size_t label = 0;
    bool all_digits = true;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || tmp[i] == '.') {
            if (label == 0) {
                *why = "a host name has an empty label (two dots in a row, or a leading dot)";
                return -1;
            }
            if (label > 63) {
                *why = "a label of the host name is longer than 63 characters";
                return -1;
            }
            if (i == len && all_digits) {
                *why = "neither an IPv4 address nor a host name (the last label is all digits)";
                return -1;
            }
            label = 0;
            all_digits = true;
        } else {
            label++;
            if (tmp[i] < '0' || tmp[i] > '9')
                all_digits = false;
        }
    }
    memcpy(out, tmp, len + 1);
    return 0;
}
