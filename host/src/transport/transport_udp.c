/* SPDX-License-Identifier: Apache-2.0 */
/* The host link in UDP datagrams ("udp:HOST[:PORT]"): a board's Ethernet host-link
 * port (rtl/link/nf_link_udp.v) or nfsim --link-udp. The datagrams carry the link's
 * bytes as the UART does; the link's own framing, CRC and retransmission deal with a
 * lost, doubled or reordered datagram. Once connected, the socket is moved by the
 * generic fd transport (transport_fd.c) in its datagram mode. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nf_layout.h"
#include "nf_transport.h"
#include "nf_transport_priv.h"

/* Split "HOST[:PORT]" into host (into buf) and port. STATUS_SUCCESS or
 * STATUS_INVALID_PARAMETER with a message. */
static NTSTATUS udp_parse(const char *arg, char *host, size_t cap, unsigned *port)
{
    const char *colon = strrchr(arg, ':');
    size_t hlen = colon ? (size_t)(colon - arg) : strlen(arg);
    if (hlen == 0 || hlen >= cap)
        return nf_set_error(STATUS_INVALID_PARAMETER, "device \"udp:%s\": a host is needed, e.g. udp:192.168.1.50[:%u]",
                            arg, (unsigned)NF_LINK_UDP_PORT);
    memcpy(host, arg, hlen);
    host[hlen] = '\0';
    *port = NF_LINK_UDP_PORT;
    if (colon) {
        char *end = NULL;
        errno = 0;
        unsigned long v = strtoul(colon + 1, &end, 10);
        if (errno || colon[1] < '0' || colon[1] > '9' || *end != '\0' || v == 0 || v > 65535)
            return nf_set_error(STATUS_INVALID_PARAMETER, "device \"udp:%s\": the port must be 1..65535", arg);
        *port = (unsigned)v;
    }
    return STATUS_SUCCESS;
}

NTSTATUS nf_transport_open_udp(const char *arg, struct nf_transport **out)
{
    *out = NULL;
    if (!arg)
        return nf_set_error(STATUS_INVALID_PARAMETER, "device \"udp\": a host is needed, e.g. udp:192.168.1.50[:%u]",
                            (unsigned)NF_LINK_UDP_PORT);
    char host[256];
    unsigned port;
    NTSTATUS st = udp_parse(arg, host, sizeof(host), &port);
    if (st != STATUS_SUCCESS)
        return st;
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    char service[8];
    snprintf(service, sizeof(service), "%u", port);
    int r = getaddrinfo(host, service, &hints, &ai);
    if (r != 0 || !ai)
        return nf_set_error(STATUS_INVALID_ADDRESS, "udp:%s: cannot resolve \"%s\" to an IPv4 address: %s", arg,
                            host, r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        int e = errno;
        freeaddrinfo(ai);
        return nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "udp:%s: socket: %s", arg, strerror(e));
    }
    /* Connected: only the adapter's datagrams are read, and an ICMP answer (nobody
     * listens) comes back as an error the fd transport treats as a lost datagram. */
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        int e = errno;
        freeaddrinfo(ai);
        close(fd);
        NTSTATUS why = (e == ENETUNREACH || e == EHOSTUNREACH) ? STATUS_NETWORK_UNREACHABLE
                       : (e == EACCES || e == EPERM)          ? STATUS_ACCESS_DENIED
                                                              : STATUS_INSUFFICIENT_RESOURCES;
        return nf_set_error(why, "udp:%s: connect: %s", arg, strerror(e));
    }
    freeaddrinfo(ai);
    char name[sizeof(host) + 16];
    snprintf(name, sizeof(name), "udp:%s:%u", host, port); /* the fd transport keeps its first 159 */
    st = nf_transport_from_fd(fd, name, out); /* owns fd from here on */
    if (st != STATUS_SUCCESS)
        return st;
    st = nf_transport_fd_set_dgram(*out, NF_LINK_UDP_MAX_PAYLOAD);
    if (st != STATUS_SUCCESS) {
        nf_transport_close(*out);
        *out = NULL;
    }
    return st;
}
