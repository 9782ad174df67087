/* SPDX-License-Identifier: Apache-2.0 */
/* The options of a started adapter's device string, "sim,OPT,..." and "model,OPT,...":
 * the network port's segment, addresses, and the faults and capture of its port on the
 * segment (host/README.md, "Device strings"). Parsed here only, for both kinds. */
#ifndef NF_DEVOPTS_H
#define NF_DEVOPTS_H

#include <limits.h>
#include <stdint.h>

#include "base/nf_error.h"

#define NF_DEVOPTS_NAME_MAX 32 /* segment name: 1..32 of [A-Za-z0-9_.-], not starting with '.' */
#define NF_DEVOPTS_IFNAME_MAX 15

struct nf_devopts {
    int has_net;                       /* net= given: the port joins segment `net` */
    char net[NF_DEVOPTS_NAME_MAX + 1];
    uint8_t ip[4];                     /* ip=A.B.C.D[/N], in wire order */
    unsigned prefix;                   /* N (24 when not given) */
    int has_mac;
    uint8_t mac[6];                    /* mac=XX:XX:XX:XX:XX:XX, a unicast MAC */
    double loss, dup, reorder, corrupt; /* per-frame probabilities on the frames the port sends */
    int has_faults;                    /* any of the four above is given (even 0) */
    char pcap[PATH_MAX];               /* pcap=FILE as an absolute path, or "" */
    char tap[NF_DEVOPTS_IFNAME_MAX + 1]; /* tap=IFNAME, or "" */
};

/* The address syntax of ip= and mac= (also NdkFpgaParsePortAddress): A.B.C.D[/N] with N
 * 8..32 (24 when absent), into wire-order bytes; XX:XX:XX:XX:XX:XX, unicast and not all
 * zero. 0 on success, -1 otherwise. */
int nf_devopts_parse_ipv4(const char *s, uint8_t ip[4], unsigned *prefix);
int nf_devopts_parse_mac(const char *s, uint8_t mac[6]);

/* Parse the text after "sim," or "model," (comma-separated key=value). On error:
 * STATUS_INVALID_PARAMETER with a message naming the option; *o is then unspecified. */
NTSTATUS nf_devopts_parse(const char *text, struct nf_devopts *o);

/* The port's options for the segment's hello (sim/nf_wire_proto.h), "" when none; buf
 * of NF_DEVOPTS_HELLO_MAX holds them all (pcap= is at most 512 characters). */
#define NF_DEVOPTS_HELLO_MAX 800
void nf_devopts_port_hello(const struct nf_devopts *o, char *buf, size_t len);

/* The stable default-MAC seed of this adapter: a hash of the segment name and its IPv4
 * address, so two adapters on a segment differ and a restarted one keeps its MAC. */
uint32_t nf_devopts_mac_seed(const struct nf_devopts *o);

#endif
