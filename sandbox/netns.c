/*
 * netns.c - setting up the sandbox's own network namespace (netns.h).
 */
#include "config.h"

#include "netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
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

/* A TCP socket listening on 127.0.0.1:port, or -1 with err. */
static int listen_loopback(uint16_t port, char *err, size_t errlen)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "cannot make the proxy's listener: socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 128) < 0) {
        snprintf(err, errlen, "cannot listen on 127.0.0.1:%u for the proxy: %s", (unsigned)port, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int sb_netns_proxy_listeners(int chan, char *err, size_t errlen)
{
    if (chan < 0) {
        snprintf(err, errlen, "network mode proxy needs the corral server (corral new, corral exec): without it "
                 "use --net off or --net full");
        return -1;
    }
    static const int ports[3] = {SB_PROXY_HTTP_PORT, SB_PROXY_SOCKS_PORT, SB_MARK_PORT};
    int fds[3];
    for (int i = 0; i < 3; i++) {
        fds[i] = listen_loopback((uint16_t)ports[i], err, errlen);
        if (fds[i] < 0) {
            while (i-- > 0)
                close(fds[i]);
            return -1;
        }
    }
    static const char msg[] = "{\"verb\":\"listeners\",\"cwd\":\"/\"}";
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof fds)];
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {.iov_base = (void *)msg, .iov_len = sizeof msg - 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                       .msg_controllen = sizeof control.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(c), fds, sizeof fds);
    ssize_t n;
    do
        n = sendmsg(chan, &m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    int e = errno;
    /* The server holds them now; nothing in the sandbox keeps a copy. */
    for (int i = 0; i < 3; i++)
        close(fds[i]);
    if (n < 0) {
        snprintf(err, errlen, "cannot hand the proxy's listeners to the server: %s", strerror(e));
        return -1;
    }
    return 0;
}
