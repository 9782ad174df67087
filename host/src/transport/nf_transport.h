/* SPDX-License-Identifier: Apache-2.0 */
/* Byte transports between the host library and a board or its simulation.
 *
 * A transport moves raw link bytes (HDLC-framed by nf_frame); it knows nothing of
 * frames. One thread (the link thread) reads; writes may come from that thread only
 * too (the link layer does all I/O there). nf_transport_wake() is the one call that
 * is safe from any thread: it makes the reader's current or next read return 0 early,
 * so the link thread notices new work without polling.
 *
 * Device strings (nf_transport_open):
 *   "sim"         attach to $NDKFPGA_SIM_SOCKET if set and accepting; otherwise start
 *                 the Verilator board model ($NDKFPGA_SIM, else NF_SIM_DEFAULT_PATH)
 *                 on a private socket with --exit-on-disconnect plus the words of
 *                 $NDKFPGA_SIM_ARGS (e.g. "--drop 1e-3 --seed 7"), wait for its socket,
 *                 and stop it at close (SIGTERM, then waitpid).
 *   "sim:PATH"    attach to the Unix socket PATH only (never starts anything).
 *   "model"       the same for the software adapter nfmodel ($NDKFPGA_MODEL_SOCKET,
 *   "model:PATH"  $NDKFPGA_MODEL, NF_MODEL_DEFAULT_PATH, $NDKFPGA_MODEL_ARGS).
 *   "sim,OPTS"    always start one, its network port on segment net=NAME (nf_devopts.h,
 *   "model,OPTS"  nf_segment.h; host/README.md "Device strings"): the segment's switch
 *                 is found or started, the adapter gets --wire, --mac-seed and
 *                 --wire-opts, and the transport's `net` holds the addresses to set.
 *   "usb", "usb:BUS-ADDR", "tty:PATH"   the board transports (transport_board.h)
 *                 when linked in, else STATUS_NOT_SUPPORTED.
 *   "udp:HOST[:PORT]"  a board's Ethernet host-link port, or nfsim --link-udp: the
 *                 link's bytes in UDP datagrams to HOST (an IPv4 address or a name),
 *                 PORT default NF_LINK_UDP_PORT (transport_udp.c).
 *   "auto" / NULL a board when one is present on USB, else "sim".
 *
 * Statuses and failure messages as base/nf_error.h says. */
#ifndef NF_TRANSPORT_H
#define NF_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/nf_error.h"

struct nf_transport;

struct nf_transport_ops {
    /* Write all len bytes, waiting at most timeout_ms for the peer to take them.
     * Returns STATUS_SUCCESS, STATUS_IO_TIMEOUT, or STATUS_CONNECTION_RESET
     * (peer gone). */
    NTSTATUS (*write)(struct nf_transport *t, const void *buf, size_t len, int timeout_ms);
    /* Read what is available, waiting up to timeout_ms (0: do not wait; <0: forever).
     * Returns > 0 bytes read, 0 on timeout or wake, < 0 when the peer is gone. */
    ssize_t (*read)(struct nf_transport *t, void *buf, size_t cap, int timeout_ms);
    /* Make the current or next read return 0 promptly. Any thread, async-safe. */
    void (*wake)(struct nf_transport *t);
    /* Release everything (stops a simulator this transport started). */
    void (*close)(struct nf_transport *t);
};

/* The network port's addresses a device string asks for ("sim,net=...,ip=..."): the
 * adapter sets them with NET_CONFIG once its link is up. */
struct nf_transport_net {
    int set;          /* 0: the device string gave none */
    uint8_t ipv4[4];  /* wire order */
    unsigned prefix;  /* 8..32 */
    int has_mac;
    uint8_t mac[6];
};

struct nf_transport {
    const struct nf_transport_ops *ops;
    const char *name; /* e.g. "sim", "model:/tmp/x.sock", "socketpair" */
    struct nf_transport_net net;
};

/* Open a transport from a device string (see above). On success *out is set and
 * STATUS_SUCCESS returned. Failures (each with a message):
 *   STATUS_NO_SUCH_FILE          simulator/model binary missing or not executable
 *   STATUS_CONNECTION_REFUSED    "sim:PATH"/"model:PATH" socket absent or refusing
 *   STATUS_DEVICE_NOT_CONNECTED  started simulator died or never opened its socket
 *   STATUS_NOT_SUPPORTED         usb / tty transports not in this build
 *   (and the board transports' own statuses, see transport_board.h)
 *   STATUS_INVALID_PARAMETER     unknown device string, or a bad option (nothing started)
 *   STATUS_INVALID_ADDRESS       "udp:HOST": HOST does not resolve to an IPv4 address
 *   STATUS_NETWORK_UNREACHABLE   "udp:HOST": no route to HOST
 *   STATUS_ACCESS_DENIED         no private directory for a segment's socket, or pcap=
 *                                not writable
 *   STATUS_INSUFFICIENT_RESOURCES out of memory / file descriptors */
NTSTATUS nf_transport_open(const char *device, struct nf_transport **out);

/* The simulator ("sim") or software adapter ("model") binary nf_transport_open would
 * start, into buf. STATUS_SUCCESS: it exists and is executable; STATUS_NO_SUCH_FILE:
 * buf names where it was looked for (or is empty when no place could be found);
 * STATUS_INVALID_PARAMETER: another kind, or no room. */
NTSTATUS nf_transport_binary_path(const char *kind, char *buf, size_t len);

/* Wrap a connected stream socket or pipe-like fd (full duplex) as a transport; the
 * transport owns fd and closes it. Used by the socket transports and by tests. */
NTSTATUS nf_transport_from_fd(int fd, const char *name, struct nf_transport **out);

static inline NTSTATUS nf_transport_write(struct nf_transport *t, const void *buf, size_t len, int timeout_ms)
{
    return t->ops->write(t, buf, len, timeout_ms);
}
static inline ssize_t nf_transport_read(struct nf_transport *t, void *buf, size_t cap, int timeout_ms)
{
    return t->ops->read(t, buf, cap, timeout_ms);
}
static inline void nf_transport_wake(struct nf_transport *t)
{
    t->ops->wake(t);
}
static inline void nf_transport_close(struct nf_transport *t)
{
    if (t)
        t->ops->close(t);
}

#endif
