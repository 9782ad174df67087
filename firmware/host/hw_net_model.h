/* SPDX-License-Identifier: Apache-2.0 */
/* C model of the network port nf_net (rtl/net): the NET registers, RX and TX slots in
 * adapter memory, the receive checks in nf_net_rx's order with its counters and slot
 * header, and the transmit fills (IPv4 total length and header checksum, the RoCEv2
 * ICRC), padding and FCS. Frames cross as whole wire messages: destination MAC through
 * FCS inclusive (sim/nf_wire.h). Time is the caller's: a frame lands at once, a post is
 * sent at once, so RX_READY rises and TX_BUSY falls within the access that caused them. */
#ifndef NF_HW_NET_MODEL_H
#define NF_HW_NET_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "nf_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest wire message the port sends: a longest frame and its FCS. */
#define NF_NET_PORT_WIRE_MAX (NF_NET_MAX_FRAME + 4u)

/* Receives the frame the MAC sends (padded to 60, FCS on), len bytes. */
typedef void (*nf_net_port_tx_fn)(void *ctx, const uint8_t *wire, size_t len);
/* The PHYs on the MDIO bus: one clause-22 frame, an MDIO_CMD word (phy, reg, write, data);
 * returns what a read gets (0xFFFF where no PHY answers). */
typedef uint32_t (*nf_net_port_mdio_fn)(void *ctx, uint32_t cmd);

struct nf_net_port {
    uint32_t rx_slots, tx_slots, slot_base, mac_seed;
    uint8_t *mem; /* adapter memory: the slots lie at slot_base */
    size_t mem_bytes;
    nf_net_port_tx_fn tx;
    void *tx_ctx;
    nf_net_port_mdio_fn mdio; /* NULL: nothing on the bus (reads 0xFFFF); set after init */
    void *mdio_ctx;
    /* registers */
    uint32_t ctrl, mac_lo, mac_hi, rx_ready, tx_forced_busy;
    uint32_t mdio_data; /* MDIO_STAT.DATA: a frame is done within its MDIO_CMD write (BUSY reads 0) */
    uint32_t rx_next; /* the RX slot the next frame goes to (ring order) */
    uint32_t cnt_rx_ok, cnt_drop_fcs, cnt_drop_addr, cnt_drop_long, cnt_drop_ip, cnt_drop_icrc, cnt_drop_slot,
        cnt_drop_fifo, cnt_tx, cnt_tx_reject;
};

/* What became of a wire message. */
enum nf_net_port_rx_result { NF_NET_PORT_PLACED, NF_NET_PORT_DROPPED, NF_NET_PORT_IGNORED };

/* A port at reset; 0, or -1 when the sizes do not fit (slot counts 1..NET_MAX_SLOTS,
 * the slots inside mem, slot_base a multiple of 4). */
int nf_net_port_init(struct nf_net_port *p, uint32_t rx_slots, uint32_t tx_slots, uint32_t slot_base,
                     uint32_t mac_seed, uint8_t *mem, size_t mem_bytes, nf_net_port_tx_fn tx, void *tx_ctx);
/* A register access at its byte offset in the NET block; strb: the write's byte lanes. */
uint32_t nf_net_port_read(const struct nf_net_port *p, uint32_t off);
void nf_net_port_write(struct nf_net_port *p, uint32_t off, uint32_t value, uint32_t strb);
/* A wire message (destination MAC through FCS) arriving; cycle: its RX stamp. */
enum nf_net_port_rx_result nf_net_port_rx(struct nf_net_port *p, const uint8_t *wire, size_t len, uint32_t cycle);
/* Tests: TX slots in mask read busy and refuse posts, as slots still being read would. */
void nf_net_port_force_tx_busy(struct nf_net_port *p, uint32_t mask);

/* Ethernet CRC-32 (zlib's): the FCS is this value, least-significant byte first. */
uint32_t nf_net_crc32(const uint8_t *b, size_t n);
/* The RoCEv2 ICRC of a frame (no FCS) as nf_roce_icrc computes it: 1 with *icrc when the
 * frame is a whole RoCEv2 IPv4 packet, else 0. The ICRC goes on the wire LSB first. */
int nf_net_icrc(const uint8_t *frame, size_t len, uint32_t *icrc);

#ifdef __cplusplus
}
#endif

#endif
