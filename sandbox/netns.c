/*
 * netns.c - setting up the sandbox's own network namespace (netns.h).
 */
#include "config.h"

#include "netns.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int sb_netns_loopback_up(char *err, size_t errlen)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "cannot bring up loopback in the sandbox's network namespace: socket: %s",
                 strerror(errno));
        return -1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    int rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
    if (rc == 0 && !(ifr.ifr_flags & IFF_UP)) {
        ifr.ifr_flags |= IFF_UP;
        rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
    }
    int e = errno;
    close(fd);
    if (rc < 0) {
        snprintf(err, errlen, "cannot bring up loopback (lo) in the sandbox's network namespace: %s", strerror(e));
        return -1;
    }
    return 0;
}
