/* SPDX-License-Identifier: Apache-2.0 */
/* C model of the board around the firmware's host build: the SYS registers, the link
 * hardware (RX slots filled from decoded frames, TX_POST and TX_ACK encoded to wire
 * bytes, counters, RX stamps) and the engine C model (rtl/engine/model). The
 * firmware's hal_read32/hal_write32 land here. Time is a modelled cycle counter: every
 * bus access costs NF_HW_CYCLES_PER_ACCESS cycles, and the caller may advance it. */
#ifndef NF_HW_MODEL_H
#define NF_HW_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "nf_engine_model.h"

/* PicoRV32 (CPI about 4) spends a few instructions around each bus access. */
#define NF_HW_CYCLES_PER_ACCESS 12u

struct nf_hw_cfg {
    uint32_t mem_bytes, mpt_entries, mtt_entries, rx_slots, tx_slots;
    uint32_t clk_hz, uart_period, fw_ram_bytes;
    uint32_t net_rx_slots, net_tx_slots; /* the network port's (0: no port, NET reads 0) */
};

/* Sizes of a named profile ("sim", "ulx3s_85k", "ulx3s_25k") at a given baud rate;
 * returns -1 for an unknown name. */
int nf_hw_profile(const char *name, uint32_t baud, struct nf_hw_cfg *cfg);

int nf_hw_init(const struct nf_hw_cfg *cfg); /* 0, or -1 when the engine model refuses the sizes */
void nf_hw_free(void);
struct nfm_engine *nf_hw_engine(void);
const struct nf_hw_cfg *nf_hw_cfg(void);

/* Wire bytes from the host into the board's UART receiver. */
void nf_hw_rx_bytes(const uint8_t *buf, size_t n);
/* Wire bytes the board has sent: copies up to cap, returns the count, removes them. */
size_t nf_hw_tx_take(uint8_t *buf, size_t cap);
size_t nf_hw_tx_pending(void);

void nf_hw_advance(uint64_t cycles);
/* Tests: from now on the engine's status registers read BUSY (nonzero) or not (0). */
void nf_hw_engine_hang(int hung);
/* Tests: from now on LINK.TX_BUSY reads every slot busy (nonzero) or not (0). */
void nf_hw_tx_hang(int hung);
uint64_t nf_hw_cycles(void);
uint64_t nf_hw_accesses(void); /* bus accesses the firmware made */

/* The network port (nf_net, hw_net_model.h): the profile's NET slots after the link's,
 * before the user region (NF_PROFILE_NET_BASE); MAC_SEED 0 unless set (before fw_init).
 * Frames it sends wait until taken, as wire messages (padded, FCS on). */
#define NF_HW_ETH_HDR 14u
#define NF_HW_ETH_MIN 60u
#define NF_HW_NET_WIRE_CAP 16384u /* longest wire message nf_hw_net_rx takes */
enum { NF_HW_NET_RX_PLACED, NF_HW_NET_RX_DROPPED, NF_HW_NET_RX_IGNORED };
struct nf_net_port;
struct nf_net_port *nf_hw_net(void); /* NULL when the profile has no port */
void nf_hw_net_seed(uint32_t seed);
/* The PHY on the port's MDIO bus (sim/nf_mii_phy.h; NULL without a port): its cable, its
 * address (32: no PHY answers) and its loopback (nf_mii_phy_loopback), in which the
 * board (nfmodel) feeds every frame the port sent back to it instead of to the wire. */
struct nf_mii_phy;
struct nf_mii_phy *nf_hw_net_phy(void);
/* A wire message (destination MAC through FCS): its nf_hw_net_rx outcome. */
int nf_hw_net_wire_rx(const uint8_t *wire, size_t len);
/* A frame without FCS, padded to 60 and given a good FCS as a sender's MAC would. */
int nf_hw_net_rx(const uint8_t *frame, size_t len);
/* The oldest frame the port sent as its wire message: its length (0: none), copied up to cap. */
size_t nf_hw_net_wire_take(uint8_t *buf, size_t cap);
/* The same without its FCS (tests). */
size_t nf_hw_net_tx_take(uint8_t *buf, size_t cap);
/* Tests: TX slots in mask read busy (posts to them are refused). */
void nf_hw_net_tx_busy(uint32_t mask);
uint32_t nf_hw_net_slot_base(void);
uint32_t nf_hw_net_rx_ready(void);
/* A SLEEP read would answer now: a frame in a WAKE_RX slot, a NET frame with WAKE_NET
 * set, or CYCLE_LO at WAKE_AT. */
int nf_hw_wake_due(void);
/* First byte of the user region (ENGINE.CFG_USER): after the link's and the port's slots. */
uint32_t nf_hw_user_base(void);

struct nf_hw_link_counters {
    uint32_t rx_ok, rx_bad, rx_drop, tx;
};
struct nf_hw_link_counters nf_hw_link_counters(void);

#endif
