/* SPDX-License-Identifier: Apache-2.0 */
/* One Ethernet port's end of an nfwire segment (sim/nf_wire.h gives the format): a
 * SOCK_SEQPACKET socket, one message per frame, destination MAC through FCS inclusive.
 * Sends and receives never block: a full socket drops the frame and counts it. */
#ifndef NF_WIRE_EP_H
#define NF_WIRE_EP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nf_wire_proto.h" /* the hello an endpoint may send first: prefix, options, limit */

#ifdef __cplusplus
extern "C" {
#endif

/* Largest message taken from the socket; a longer one is dropped and counted. */
#define NF_WIRE_EP_MSG_MAX 16384u

struct nf_wire_ep {
    int fd;
    uint64_t tx_frames, tx_dropped, rx_frames, rx_oversize;
};

/* Connects to the segment's socket within timeout_ms (monotonic), then sends the hello
 * "nfport OPTS" first when opts is not NULL. 0, or -1 with a message in err. */
int nf_wire_ep_connect(struct nf_wire_ep *ep, const char *path, const char *opts, unsigned timeout_ms, char *err,
                       size_t err_cap);
/* One frame out; a full socket or a closed port drops it (counted). */
void nf_wire_ep_send(struct nf_wire_ep *ep, const uint8_t *frame, size_t len);
/* The next waiting frame into buf (cap >= NF_WIRE_EP_MSG_MAX): its length, 0 when none
 * waits, -1 once the segment has gone (the port is then down). */
ssize_t nf_wire_ep_recv(struct nf_wire_ep *ep, uint8_t *buf, size_t cap);
void nf_wire_ep_close(struct nf_wire_ep *ep);

#ifdef __cplusplus
}
#endif

#endif
