/*
 * netaddr.h - what the network proxy may dial: host names as a sandbox
 * names them, made into one canonical form, and the addresses that are
 * not the public internet (loopback, private, link-local and cloud
 * metadata, CGNAT, multicast, documentation and reserved ranges, and the
 * IPv6 forms that embed or translate to such an IPv4 address).  Pure
 * functions: no I/O, no resolver.
 *
 * Included by src/base/, src/policy/, src/net/ and src/gate/ (what a network
 * question says of the host).
 */
#ifndef CORRAL_NETADDR_H
#define CORRAL_NETADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Longest normalised host: a DNS name (253) or an IPv6 literal. */
#define NETADDR_HOST_MAX 253

/*
 * Make the host a client named into the form decisions are keyed on:
 * ASCII lower case, IPv6 brackets removed, one trailing dot removed; an
 * IPv4 address in any form the C library would accept (127.1, 0x7f.0.0.1,
 * 2130706433) becomes its dotted quad and an IPv6 address its canonical
 * text, so one address has one key and nobody approves a name that the
 * resolver would read as an address.  Anything else must be a DNS name:
 * letters, digits, '-' and '_', labels of 1 to 63 characters, at most 253
 * in all, and a last label that is not all digits.  Brackets are accepted
 * only around an IPv6 address; zone ids ("%eth0") are refused.
 * Returns 0 with out (at least NETADDR_HOST_MAX + 1 bytes) filled, or -1
 * with *why saying what is wrong.
 */
int netaddr_normalize_host(const char *in, size_t len, char *out, size_t outlen, const char **why);

/* If host (normalised) is an IP address, fill *ss with it and port and
 * return true. */
bool netaddr_literal(const char *host, uint16_t port, struct sockaddr_storage *ss);

/*
 * Why the address may not be dialled unless a rule names its host: the
 * range it lies in, e.g. "loopback (127.0.0.0/8)", "cloud metadata and
 * link-local (169.254.0.0/16)", "IPv4-mapped IPv6 (::ffff:0:0/96)"; NULL
 * for an ordinary public address.  For 6to4 and NAT64's well-known prefix,
 * whose IPv6 address carries an IPv4 one, the embedded address decides (an
 * IPv6-only host behind NAT64 reaches all of the IPv4 internet that way).
 * Address families other than AF_INET and AF_INET6 are always special.
 */
const char *netaddr_special(const struct sockaddr *sa);
const char *netaddr_special_v4(const uint8_t a[4]);
const char *netaddr_special_v6(const uint8_t a[16]);

/* The same address (family and bytes; ports are not compared). */
bool netaddr_same_address(const struct sockaddr *a, const struct sockaddr *b);

/* "1.2.3.4" or "2001:db8::1", with ":port" ("[2001:db8::1]:443") when
 * with_port. */
void netaddr_format(const struct sockaddr *sa, bool with_port, char *out, size_t outlen);

#endif
