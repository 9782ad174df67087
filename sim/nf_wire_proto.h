/* SPDX-License-Identifier: Apache-2.0 */
/* The segment's port protocol (nfwire and its endpoints: nf_wire in nfsim, nfmodel's).
 * One SOCK_SEQPACKET message per frame, destination MAC to FCS. The first message an
 * endpoint sends MAY instead be a hello: NF_WIRE_HELLO_PREFIX, then comma-separated
 * key=value options (the NF_WIRE_OPT_* keys), ASCII, at most NF_WIRE_HELLO_MAX bytes in
 * all, no NUL needed. A first message starting with the prefix is a hello, never a
 * frame (its destination would be 6e:66:70:6f:72:74, which no endpoint sends to first).
 * Plain C, for C and C++. */
#ifndef NF_WIRE_PROTO_H
#define NF_WIRE_PROTO_H

#define NF_WIRE_HELLO_PREFIX "nfport "
#define NF_WIRE_HELLO_PREFIX_LEN 7
#define NF_WIRE_HELLO_MAX 1024

/* Faults on the frames the port sends, each a probability in [0,1], drawn per frame. */
#define NF_WIRE_OPT_LOSS "loss"       /* the frame is lost */
#define NF_WIRE_OPT_DUP "dup"         /* the frame is delivered twice */
#define NF_WIRE_OPT_REORDER "reorder" /* the frame is held and delivered after the port's next one */
#define NF_WIRE_OPT_CORRUPT "corrupt" /* one bit of the frame is flipped (its FCS no longer matches) */
/* A pcap file (LINKTYPE_ETHERNET, no FCS) of every frame the port sends and receives. */
#define NF_WIRE_OPT_PCAP "pcap"
/* The seed of the port's fault draws (an unsigned integer): a seed repeats a run. */
#define NF_WIRE_OPT_SEED "seed"

#endif
