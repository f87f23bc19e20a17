#!/bin/sh
# id: F02
# tries: create files in system directories: /etc, /usr/local/bin, /usr/bin, /opt, /var/lib, /srv, /root, /sys
# expect: "Read-only file system" (EROFS), or "Permission denied" (EACCES) where a user cannot even look
# neighbour: /tmp (private) and the workspace are writable
# needs: -
# sandbox-args: -
#
# Runs inside `corral sandbox` (tests/sandbox/battery.py); by hand:
#   corral sandbox -- /bin/sh F02_system_dirs.sh
LC_ALL=C
export LC_ALL
escaped=""
blocked=""
for p in /etc/pwn /usr/local/bin/pwn /usr/bin/pwn /opt/pwn /var/lib/pwn /srv/pwn /root/pwn /sys/pwn; do
    if msg=$(touch "$p" 2>&1); then
        escaped="$escaped $p:created;"
    else
        case $msg in
        *"Read-only file system"*) blocked="$blocked $p:EROFS" ;;
        *"Permission denied"*) blocked="$blocked $p:EACCES" ;;
        *) escaped="$escaped $p:unexpected($msg);" ;;
        esac
    fi
done
if [ -n "$escaped" ]; then echo "ESCAPED$escaped"; else echo "BLOCKED$blocked"; fi

if touch /tmp/ok ./ok && [ -f /tmp/ok ] && [ -f ./ok ]; then
    echo "NEIGHBOUR OK"
else
    echo "NEIGHBOUR BROKEN cannot write /tmp or the workspace"
fi
