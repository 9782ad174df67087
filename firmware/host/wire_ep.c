/* SPDX-License-Identifier: Apache-2.0 */
/* An nfwire endpoint in C (wire_ep.h): nfmodel's Ethernet port on the segment. */
#include "wire_ep.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SOCK_BUF_BYTES (1 << 20) /* rides out a segment slow to read; a full one drops */
#define CONNECT_RETRY_MS 10

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int nf_wire_ep_connect(struct nf_wire_ep *ep, const char *path, const char *opts, unsigned timeout_ms, char *err,
                       size_t err_cap)
{
    memset(ep, 0, sizeof(*ep));
    ep->fd = -1;
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof(addr));
    if (strlen(path) >= sizeof(addr.sun_path)) {
        snprintf(err, err_cap, "wire socket path too long: %s", path);
        return -1;
    }
    char hello[NF_WIRE_HELLO_MAX + 1];
    int hn = 0;
    if (opts) {
        hn = snprintf(hello, sizeof(hello), "%s%s", NF_WIRE_HELLO_PREFIX, opts);
        if (hn < 0 || (size_t)hn > NF_WIRE_HELLO_MAX) {
            snprintf(err, err_cap, "wire options longer than the hello's %u bytes", NF_WIRE_HELLO_MAX);
            return -1;
        }
    }
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, path, strlen(path) + 1);
    /* A segment with a full backlog refuses for now (EAGAIN): try again until the deadline. */
    uint64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
            snprintf(err, err_cap, "wire socket: %s", strerror(errno));
            return -1;
        }
        if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
            ep->fd = fd;
            break;
        }
        int e = errno;
        close(fd);
        if ((e != EAGAIN && e != ENOENT && e != ECONNREFUSED) || now_ms() >= deadline) {
            snprintf(err, err_cap, "cannot connect to the wire %s: %s", path, strerror(e));
            return -1;
        }
        poll(NULL, 0, CONNECT_RETRY_MS);
    }
    int sz = SOCK_BUF_BYTES;
    setsockopt(ep->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
    setsockopt(ep->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
    if (opts && send(ep->fd, hello, (size_t)hn, MSG_NOSIGNAL | MSG_DONTWAIT) != hn) {
        snprintf(err, err_cap, "cannot send the wire hello: %s", strerror(errno));
        nf_wire_ep_close(ep);
        return -1;
    }
    return 0;
}

void nf_wire_ep_send(struct nf_wire_ep *ep, const uint8_t *frame, size_t len)
{
    for (;;) {
        if (ep->fd >= 0 && send(ep->fd, frame, len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)len) {
            ep->tx_frames++;
            return;
        }
        if (ep->fd >= 0 && errno == EINTR)
            continue;
        ep->tx_dropped++;
        return;
    }
}

ssize_t nf_wire_ep_recv(struct nf_wire_ep *ep, uint8_t *buf, size_t cap)
{
    while (ep->fd >= 0) {
        ssize_t n = recv(ep->fd, buf, cap, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            nf_wire_ep_close(ep);
            return -1;
        }
        if (n == 0) { /* the segment went away */
            nf_wire_ep_close(ep);
            return -1;
        }
        ep->rx_frames++;
        if ((size_t)n > cap) {
            ep->rx_oversize++;
            continue;
        }
        return n;
    }
    return -1;
}

void nf_wire_ep_close(struct nf_wire_ep *ep)
{
    if (ep->fd >= 0)
        close(ep->fd);
    ep->fd = -1;
}
