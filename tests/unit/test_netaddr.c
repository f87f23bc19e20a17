/* Unit tests for the proxy's address checks and host names (src/base/netaddr.c):
 * every special range of both families at its first and last address and
 * just outside it, the IPv6 forms that carry an IPv4 address (mapped,
 * compatible, NAT64, 6to4, Teredo), and the one form each host name takes
 * before it is decided on (so that no name the resolver would read as an
 * address gets approved as a name). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include "base/netaddr.h"

/* The range netaddr names for text (an IPv4 or IPv6 address), or NULL. */
static const char *special(const char *text)
{
    uint8_t a[16];
    if (inet_pton(AF_INET, text, a) == 1)
        return netaddr_special_v4(a);
    if (inet_pton(AF_INET6, text, a) == 1)
        return netaddr_special_v6(a);
    fail_msg("not an address: %s", text);
    return NULL;
}

/* want: a part of the range's description, or NULL for a public address. */
static void check(const char *addr, const char *want)
{
    const char *got = special(addr);
    if (!want) {
        if (got)
            fail_msg("%s: want public, got \"%s\"", addr, got);
        return;
    }
    if (!got)
        fail_msg("%s: want \"%s\", got public", addr, want);
    if (!strstr(got, want))
        fail_msg("%s: want \"%s\", got \"%s\"", addr, want, got);
}

static void ipv4_special_ranges_at_both_ends(void **state)
{
    (void)state;
    static const struct {
        const char *first, *last, *what;
    } ranges[] = {
        {"0.0.0.1", "0.255.255.255", "0.0.0.0/8"},
        {"10.0.0.0", "10.255.255.255", "private (10.0.0.0/8)"},
        {"100.64.0.0", "100.127.255.255", "carrier-grade NAT"},
        {"127.0.0.0", "127.255.255.255", "loopback"},
        {"169.254.0.0", "169.254.255.255", "link-local"},
        {"172.16.0.0", "172.31.255.255", "private (172.16.0.0/12)"},
        {"192.0.0.0", "192.0.0.255", "192.0.0.0/24"},
        {"192.0.2.0", "192.0.2.255", "TEST-NET-1"},
        {"192.88.99.0", "192.88.99.255", "6to4 relay"},
        {"192.168.0.0", "192.168.255.255", "private (192.168.0.0/16)"},
        {"198.18.0.0", "198.19.255.255", "benchmarking"},
        {"198.51.100.0", "198.51.100.255", "TEST-NET-2"},
        {"203.0.113.0", "203.0.113.255", "TEST-NET-3"},
        {"224.0.0.0", "239.255.255.255", "multicast"},
        {"240.0.0.0", "255.255.255.254", "reserved"},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        check(ranges[i].first, ranges[i].what);
        check(ranges[i].last, ranges[i].what);
    }
    check("0.0.0.0", "unspecified");
    check("255.255.255.255", "broadcast");
    check("169.254.169.254", "cloud metadata");
    check("127.0.0.1", "loopback");
}

static void ipv4_neighbours_of_the_ranges_are_public(void **state)
{
    (void)state;
    static const char *const public[] = {
        "1.0.0.0",        "9.255.255.255", "11.0.0.0",       "100.63.255.255", "100.128.0.0",  "126.255.255.255",
        "128.0.0.0",      "169.253.255.255", "169.255.0.0",  "172.15.255.255", "172.32.0.0",   "191.255.255.255",
        "192.0.1.0",      "192.0.3.0",     "192.88.98.255",  "192.88.100.0",   "192.167.255.255", "192.169.0.0",
        "198.17.255.255", "198.20.0.0",    "198.51.99.255",  "198.51.101.0",   "203.0.112.255", "203.0.114.0",
        "223.255.255.255", "8.8.8.8",      "1.1.1.1",        "93.184.216.34",
    };
    for (size_t i = 0; i < sizeof public / sizeof public[0]; i++)
        check(public[i], NULL);
}

static void ipv6_special_ranges(void **state)
{
    (void)state;
    check("::", "unspecified");
    check("::1", "loopback");
    check("::2", "IPv4-compatible");
    check("::ffff:ffff", "IPv4-compatible");
    check("fc00::", "unique local");
    check("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique local");
    check("fe80::", "link-local");
    check("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local");
    check("fec0::1", "site-local");
    check("ff00::", "multicast");
    check("ff02::1", "multicast");
    check("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast");
    check("100::", "discard-only");
    check("100::ffff:ffff:ffff:ffff", "discard-only");
    check("2001::", "Teredo");
    check("2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "Teredo");
    check("2001:2::1", "benchmarking");
    check("2001:10::1", "ORCHID");
    check("2001:20::1", "ORCHIDv2");
    check("2001:db8::", "documentation");
    check("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation");
    check("3fff::1", "documentation");
    check("3fff:fff::1", "documentation");
    check("64:ff9b:1::", "local-use NAT64");
    check("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "local-use NAT64");
    /* Not global unicast: nothing outside 2000::/3 is the public internet. */
    check("4000::1", "outside 2000::/3");
    check("1::1", "outside 2000::/3");
    check("e000::1", "outside 2000::/3");
}

static void ipv6_public_addresses(void **state)
{
    (void)state;
    check("2606:4700:4700::1111", NULL);
    check("2a00:1450:4001:80b::200e", NULL);
    check("2001:1::1", NULL);   /* beside Teredo's /32 */
    check("2001:db7:ffff::1", NULL); /* beside documentation */
    check("2001:db9::1", NULL);
    check("3ffe:ffff::1", NULL);     /* beside 3fff::/20 */
    check("3fff:1000::1", NULL);
    check("2000::1", NULL);
    check("3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL);
}

static void ipv6_forms_carrying_ipv4(void **state)
{
    (void)state;
    /* IPv4-mapped: all of it, whatever it maps. */
    check("::ffff:127.0.0.1", "IPv4-mapped");
    check("::ffff:10.0.0.1", "IPv4-mapped");
    check("::ffff:169.254.169.254", "IPv4-mapped");
    check("::ffff:8.8.8.8", "IPv4-mapped");
    check("::ffff:0:0", "IPv4-mapped");
    /* IPv4-compatible (deprecated) */
    check("::127.0.0.1", "IPv4-compatible");
    check("::8.8.8.8", "IPv4-compatible");
    /* NAT64's well-known prefix: the embedded address decides. */
    check("64:ff9b::7f00:1", "NAT64");
    check("64:ff9b::a00:1", "NAT64");
    check("64:ff9b::a9fe:a9fe", "NAT64");
    check("64:ff9b::", "NAT64");
    check("64:ff9b::808:808", NULL);
    check("64:ff9b::101:101", NULL);
    /* Beside the well-known prefix: not global unicast. */
    check("64:ff9a::808:808", "outside 2000::/3");
    check("64:ff9b:0:0:1::808:808", "outside 2000::/3");
    /* 6to4: bits 16 to 47 hold the IPv4 address. */
    check("2002:7f00:1::", "6to4");
    check("2002:a00:1::1", "6to4");
    check("2002:c0a8:101::", "6to4");
    check("2002:a9fe:a9fe::", "6to4");
    check("2002:808:808::1", NULL);
}

static void sockaddr_families(void **state)
{
    (void)state;
    struct sockaddr_in in4 = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &in4.sin_addr);
    assert_non_null(netaddr_special((struct sockaddr *)&in4));
    inet_pton(AF_INET, "8.8.4.4", &in4.sin_addr);
    assert_null(netaddr_special((struct sockaddr *)&in4));
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, "::ffff:127.0.0.1", &in6.sin6_addr);
    assert_non_null(netaddr_special((struct sockaddr *)&in6));
    inet_pton(AF_INET6, "2606:4700::1", &in6.sin6_addr);
    assert_null(netaddr_special((struct sockaddr *)&in6));
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    assert_string_equal(netaddr_special((struct sockaddr *)&un), "not an IP address");
}

static void norm_ok(const char *in, const char *want)
{
    char out[NETADDR_HOST_MAX + 1];
    const char *why = NULL;
    if (netaddr_normalize_host(in, strlen(in), out, sizeof out, &why) < 0)
        fail_msg("\"%s\": refused: %s", in, why);
    if (strcmp(out, want) != 0)
        fail_msg("\"%s\": want \"%s\", got \"%s\"", in, want, out);
}

static void norm_bad(const char *in, size_t len, const char *why_part)
{
    char out[NETADDR_HOST_MAX + 1];
    const char *why = NULL;
    if (netaddr_normalize_host(in, len, out, sizeof out, &why) == 0)
        fail_msg("\"%.*s\": accepted as \"%s\"", (int)len, in, out);
    if (!why || !strstr(why, why_part))
        fail_msg("\"%.*s\": want a reason with \"%s\", got \"%s\"", (int)len, in, why_part, why ? why : "(none)");
}

static void host_names_take_one_form(void **state)
{
    (void)state;
    norm_ok("Example.COM", "example.com");
    norm_ok("example.com.", "example.com");
    norm_ok("api.EXAMPLE.com.", "api.example.com");
    norm_ok("localhost", "localhost");
    norm_ok("_srv.ex-ample.com", "_srv.ex-ample.com");
    norm_ok("xn--bcher-kva.de", "xn--bcher-kva.de");
    norm_ok("1e2", "1e2");
    norm_ok("a", "a");
}

static void addresses_take_their_canonical_form(void **state)
{
    (void)state;
    norm_ok("127.0.0.1", "127.0.0.1");
    norm_ok("127.0.0.1.", "127.0.0.1");
    /* What the C library would read as an IPv4 address is that address. */
    norm_ok("127.1", "127.0.0.1");
    norm_ok("0x7f.0.0.1", "127.0.0.1");
    norm_ok("0X7F000001", "127.0.0.1");
    norm_ok("2130706433", "127.0.0.1");
    norm_ok("017700000001", "127.0.0.1");
    norm_ok("0", "0.0.0.0");
    norm_ok("169.254.43518", "169.254.169.254");
    norm_ok("[::1]", "::1");
    norm_ok("::1", "::1");
    norm_ok("[0:0:0:0:0:0:0:1]", "::1");
    norm_ok("[::FFFF:127.0.0.1]", "::ffff:127.0.0.1");
    norm_ok("[64:FF9B::A00:1]", "64:ff9b::a00:1");
    norm_ok("[2001:DB8:0::1]", "2001:db8::1");
}

static void malformed_hosts_are_refused(void **state)
{
    (void)state;
    norm_bad("", 0, "empty");
    norm_bad(".", 1, "empty");
    norm_bad("a..b", 4, "empty label");
    norm_bad(".a", 2, "empty label");
    norm_bad("a b", 3, "space");
    norm_bad("a\0b", 3, "control");
    norm_bad("a\nb", 3, "control");
    norm_bad("b\xc3\xbc" "cher.de", 9, "outside ASCII");
    norm_bad("a/b", 3, "letters, digits");
    norm_bad("a*b.com", 7, "letters, digits");
    norm_bad("a@b", 3, "letters, digits");
    norm_bad("1.2.3.999", 9, "all digits");
    norm_bad("1.2.3.4.5", 9, "all digits");
    norm_bad("example.123", 11, "all digits");
    norm_bad("[fe80::1%eth0]", 14, "zone id");
    norm_bad("fe80::1%25eth0", 14, "zone id");
    norm_bad("[1.2.3.4]", 9, "IPv6");
    norm_bad("[::1", 4, "brackets");
    norm_bad("[]", 2, "brackets");
    norm_bad("::1::2", 6, "IPv6");
    norm_bad("example.com:443", 15, "IPv6"); /* a port is not part of a host */

    char label[80];
    memset(label, 'a', 63);
    strcpy(label + 63, ".com");
    norm_ok(label, label);
    memset(label, 'a', 64);
    strcpy(label + 64, ".com");
    norm_bad(label, strlen(label), "63");

    char name[300];
    size_t n = 0;
    while (n + 4 <= 253) { /* "aaa." repeated: 252 characters, then one more */
        memcpy(name + n, "aaa.", 4);
        n += 4;
    }
    name[n++] = 'b';
    name[n] = '\0';
    assert_int_equal(n, 253);
    norm_ok(name, name);
    name[n++] = 'c';
    name[n] = '\0';
    norm_bad(name, n, "253");
    name[n++] = '.'; /* 254 with the root's dot: still one too many */
    norm_bad(name, n, "253");
}

static void literals_and_formatting(void **state)
{
    (void)state;
    struct sockaddr_storage ss;
    char text[64];
    assert_true(netaddr_literal("192.0.2.7", 8080, &ss));
    assert_int_equal(ss.ss_family, AF_INET);
    netaddr_format((struct sockaddr *)&ss, true, text, sizeof text);
    assert_string_equal(text, "192.0.2.7:8080");
    netaddr_format((struct sockaddr *)&ss, false, text, sizeof text);
    assert_string_equal(text, "192.0.2.7");
    assert_true(netaddr_literal("2001:db8::5", 443, &ss));
    assert_int_equal(ss.ss_family, AF_INET6);
    netaddr_format((struct sockaddr *)&ss, true, text, sizeof text);
    assert_string_equal(text, "[2001:db8::5]:443");
    assert_false(netaddr_literal("example.com", 80, &ss));

    struct sockaddr_storage a, b;
    netaddr_literal("10.1.2.3", 1, &a);
    netaddr_literal("10.1.2.3", 2, &b);
    assert_true(netaddr_same_address((struct sockaddr *)&a, (struct sockaddr *)&b)); /* ports aside */
    netaddr_literal("10.1.2.4", 1, &b);
    assert_false(netaddr_same_address((struct sockaddr *)&a, (struct sockaddr *)&b));
    netaddr_literal("::ffff:10.1.2.3", 1, &b);
    assert_false(netaddr_same_address((struct sockaddr *)&a, (struct sockaddr *)&b));
    netaddr_literal("fe80::1", 1, &a);
    netaddr_literal("fe80::1", 9, &b);
    assert_true(netaddr_same_address((struct sockaddr *)&a, (struct sockaddr *)&b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ipv4_special_ranges_at_both_ends),
        cmocka_unit_test(ipv4_neighbours_of_the_ranges_are_public),
        cmocka_unit_test(ipv6_special_ranges),
        cmocka_unit_test(ipv6_public_addresses),
        cmocka_unit_test(ipv6_forms_carrying_ipv4),
        cmocka_unit_test(sockaddr_families),
        cmocka_unit_test(host_names_take_one_form),
        cmocka_unit_test(addresses_take_their_canonical_form),
        cmocka_unit_test(malformed_hosts_are_refused),
        cmocka_unit_test(literals_and_formatting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
