#!/usr/bin/env python3
# id: P04
# tries: inspect the command's credentials: NoNewPrivs, the five capability sets, seccomp mode, the bounding set through prctl
# expect: NoNewPrivs 1, CapInh/CapPrm/CapEff/CapBnd/CapAmb all 0, Seccomp 2 (filter) with at least one filter
# neighbour: prctl(PR_SET_NAME) works and shows in /proc/self/comm
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /usr/bin/python3 P04_privileges.py [INFO.json]

from attacklib import blocked, escaped, libc, main

PR_SET_NAME, PR_CAPBSET_READ = 15, 23


def attack():
    st = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        st[k] = v.strip()
    checks = [("NoNewPrivs", "1"), ("Seccomp", "2")] + [(c, "0000000000000000") for c in
                                                        ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")]
    for key, want in checks:
        (blocked if st.get(key) == want else escaped).append("%s %s" % (key, st.get(key)))
    if int(st.get("Seccomp_filters", "0")) < 1:
        escaped.append("Seccomp_filters %s" % st.get("Seccomp_filters"))
    held = [c for c in range(64) if libc.prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1]
    if held:
        escaped.append("bounding set still holds %s" % held)


def neighbour():
    libc.prctl(PR_SET_NAME, b"battery-name", 0, 0, 0)
    return None if open("/proc/self/comm").read().strip() == "battery-name" else "comm not renamed"


if __name__ == "__main__":
    main(attack, neighbour)
