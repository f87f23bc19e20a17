#!/bin/sh
# id: N01
# tries: bash's /dev/tcp redirection to the host's TCP listener on 127.0.0.1 (port from the runner)
# expect: the redirection is refused on the sandbox's own loopback (ECONNREFUSED: nothing listens there); the host listener sees nothing
# neighbour: pipes between processes work
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /bin/sh N01_dev_tcp.sh [INFO.sh]
[ -n "$1" ] && . "$1"
port=${TCP_PORT:-22}
LC_ALL=C
export LC_ALL
if ! command -v bash >/dev/null; then
    echo "BLOCKED bash not installed: nothing to try"
elif msg=$(bash -c "echo hello >/dev/tcp/127.0.0.1/$port" 2>&1); then
    echo "ESCAPED /dev/tcp/127.0.0.1/$port connected"
else
    case $msg in
    *"Connection refused"*) echo "BLOCKED /dev/tcp: ECONNREFUSED (the sandbox's own loopback)" ;;
    *) echo "ESCAPED /dev/tcp failed unexpectedly: $msg" ;;
    esac
fi
if [ "$(printf 'pipe' | cat)" = pipe ]; then echo "NEIGHBOUR OK"; else echo "NEIGHBOUR BROKEN pipe"; fi
