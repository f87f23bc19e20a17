#!/usr/bin/env python3
# id: N07
# tries: netlink: with NETLINK_ROUTE, take loopback down and add an address (RTM_NEWLINK, RTM_NEWADDR); open the other netlink families (uevents, audit, netfilter, sock_diag, xfrm, generic); look at the interfaces the sandbox has
# expect: the changes fail with EPERM (no CAP_NET_ADMIN); the other families fail with EPERM at socket(); the sandbox's namespace has lo only (/proc/net/dev)
# neighbour: if_nameindex() (glibc over NETLINK_ROUTE) lists the sandbox's interfaces: lo
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 N07_netlink.py [INFO.json]
import errno
import socket
import struct

from attacklib import attempt, blocked, escaped, main

RTM_NEWLINK, RTM_NEWADDR, NLMSG_ERROR = 16, 20, 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 1, 4, 0x200, 0x400
OTHER_FAMILIES = {"KOBJECT_UEVENT": 15, "AUDIT": 9, "NETFILTER": 12, "SOCK_DIAG": 4, "XFRM": 6, "GENERIC": 16}


def rtnl(kind, payload):
    """One route-netlink request with an acknowledgement: raise its error."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    try:
        s.settimeout(10)
        flags = NLM_F_REQUEST | NLM_F_ACK | (NLM_F_CREATE | NLM_F_EXCL if kind == RTM_NEWADDR else 0)
        s.send(struct.pack("=LHHLL", 16 + len(payload), kind, flags, 1, 0) + payload)
        reply = s.recv(65536)
    finally:
        s.close()
    _, rtype, _, _, _ = struct.unpack("=LHHLL", reply[:16])
    code = struct.unpack("=i", reply[16:20])[0] if rtype == NLMSG_ERROR else 0
    if code:
        raise OSError(-code, errno.errorcode.get(-code, str(-code)))


def attack():
    lo = socket.if_nametoindex("lo")
    # ifinfomsg: family, type, index, flags, change: IFF_UP cleared.
    attempt("take lo down", lambda: rtnl(RTM_NEWLINK, struct.pack("=BxHiII", 0, 0, lo, 0, 1)), errno.EPERM)
    # ifaddrmsg with IFA_LOCAL and IFA_ADDRESS 10.9.9.9/8.
    addr = socket.inet_aton("10.9.9.9")
    attrs = struct.pack("=HH", 8, 2) + addr + struct.pack("=HH", 8, 1) + addr
    attempt("add 10.9.9.9 to lo", lambda: rtnl(RTM_NEWADDR, struct.pack("=BBBBI", socket.AF_INET, 8, 0, 0, lo) + attrs),
            errno.EPERM)
    for name, proto in OTHER_FAMILIES.items():
        s = attempt("socket(NETLINK, %s)" % name, lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, proto),
                    errno.EPERM)
        if s:
            s.close()
    ifaces = [l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]]
    (blocked if ifaces == ["lo"] else escaped).append("interfaces: %s" % ifaces)


def neighbour():
    names = [n for _, n in socket.if_nameindex()]
    return None if names == ["lo"] else "if_nameindex() gave %s" % names


if __name__ == "__main__":
    main(attack, neighbour)
