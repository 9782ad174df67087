/* SPDX-License-Identifier: Apache-2.0 */
/* The network port's IPv4 layer (fw_net.c): the adapter's addresses, ARP (answers, a
 * cache, resolution with bounded retries) and ICMP echo, over the NET block's slots.
 * Layer: called by fw_main (init, the idle loop) and fw_msg (NET_CONFIG, NET_NEIGH); calls
 * fw_tables (a DMA between slots) and fw_state. Never on the work-request path. */
#ifndef FW_NET_H
#define FW_NET_H

#include <stdint.h>

#include "hal.h"

static inline uint32_t net_rd(uint32_t off) { return hal_read32(NF_NET_BASE + off); }
static inline void net_wr(uint32_t off, uint32_t v) { hal_write32(NF_NET_BASE + off, v); }

/* FW_NET 1 (the default): the image carries the port's IPv4 layer (fw_net.c); 0: the
 * host-link image for boards without a PHY, where every call below is a stub. */
#ifndef FW_NET
#define FW_NET 1
#endif
#if FW_NET
/* Boot: NET.CTRL off, the default MAC (02:6e:<NET.MAC_SEED>) set, RX_EN on, no IPv4
 * address, an empty cache. A build without the NET block (NET.ID not 'NET1') leaves
 * the port absent: every call below then does nothing or refuses. */
void fw_net_init(void);
/* A frame waits in a NET RX slot (one register read; 0 without a port). */
static inline int fw_net_pending(void)
{
    return net_rd(NF_NET_RX_READY) != 0u;
}
/* The cache's timer pass (retries, ageing) is due at cycle now (no bus access). */
int fw_net_due(uint32_t now);
/* The cycle at which the timer pass is next due (for a sleep's WAKE_AT). */
uint32_t fw_net_next_due(void);
/* The cycles between two timer passes: the longest the idle loop may sleep (0: no port). */
uint32_t fw_net_tick(void);
/* The next ready RoCE frame in slot order: 1 with its slot's adapter address and its
 * frame bytes, left in its slot until fw_net_release. Every other frame before it is
 * answered, learnt or counted, and released. 0: none ready. */
int fw_net_next(uint32_t *at, uint32_t *len);
/* Done with the frame fw_net_next returned: its slot is free for the port again. */
void fw_net_release(void);
/* The cache's timer pass (retries, ageing) when due; nonzero when it ran. */
int fw_net_timer(void);
/* The port alone, with no transport above it: every ready frame (RoCE counted
 * unhandled) and the timer pass. Nonzero when it did any of that. */
int fw_net_poll(void);
/* A free TX slot's adapter address (its index in *slot), or 0 while every one is busy. */
uint32_t fw_net_tx_free(uint32_t *slot);
/* Send TX slot slot's frame of len bytes at NET_FRAME_OFF (the port fills the IPv4
 * total length and checksum and, for UDP 4791, the ICRC in its last four bytes). */
void fw_net_tx_post(uint32_t slot, uint32_t len);
/* The adapter's IPv4 address (0: none yet) and MAC, as NET_CONFIG_REP holds them. */
void fw_net_self(uint32_t self[3]);

/* The MAC of ip (IPv4 word, first byte in [7:0]): SUCCESS with mac[0] = bytes 0..3 and
 * mac[1] = bytes 4..5 (as NET.MAC_LO/MAC_HI); PENDING while an ARP request is out (ask
 * again: the timer pass retries it); HOST_UNREACHABLE once the retries ran out (kept
 * for a hold time, then a new call starts over); NETWORK_UNREACHABLE off the subnet;
 * INVALID_PARAMETER for an address no host has; INVALID_DEVICE_STATE with no port or
 * no address; INSUFFICIENT_RESOURCES when every cache entry is being resolved. */
uint32_t fw_net_resolve(uint32_t ip, uint32_t mac[2]);

/* NET_CONFIG: the request body at adapter address body (blen bytes); rep gets
 * NET_CONFIG_REP's words when it returns SUCCESS. One ordered validation, nothing
 * changed on a refusal. */
uint32_t fw_net_config(uint32_t body, uint32_t blen, uint32_t rep[NF_NET_CONFIG_REP_SIZE / 4u]);

/* NET_NEIGH: the cache's entries in use as NET_NEIGH_ENTRYs from adapter address at
 * (room for NEIGH.MAX_ENTRIES), their count in *n. NOT_SUPPORTED without a port. */
uint32_t fw_net_neigh(uint32_t at, uint32_t *n);

/* NET_PHY: the request body at adapter address body (blen bytes); rep (zeroed by the
 * caller) gets NET_PHY_REP's words when it returns SUCCESS. NOT_SUPPORTED without a port, INVALID_PARAMETER for an
 * unknown action or reserved bits, INVALID_DEVICE_STATE when no PHY answers on MDIO,
 * INTERNAL_ERROR when the MDIO master never finishes; nothing changed on a refusal. */
uint32_t fw_net_phy(uint32_t body, uint32_t blen, uint32_t rep[NF_NET_PHY_REP_SIZE / 4u]);

#else
/* The host-link image (FW_NET 0, firmware.mk: the boards without a PHY): no port. */
static inline void fw_net_init(void) {}
static inline int fw_net_pending(void) { return 0; }
static inline int fw_net_due(uint32_t now) { return (void)now, 0; }
static inline uint32_t fw_net_next_due(void) { return 0u; }
static inline uint32_t fw_net_tick(void) { return 0u; }
static inline int fw_net_poll(void) { return 0; }
static inline uint32_t fw_net_resolve(uint32_t ip, uint32_t mac[2])
{
    return (void)ip, (void)mac, NF_STATUS_INVALID_DEVICE_STATE;
}
static inline uint32_t fw_net_config(uint32_t body, uint32_t blen, uint32_t rep[NF_NET_CONFIG_REP_SIZE / 4u])
{
    return (void)body, (void)blen, (void)rep, NF_STATUS_NOT_SUPPORTED;
}
static inline uint32_t fw_net_phy(uint32_t body, uint32_t blen, uint32_t rep[NF_NET_PHY_REP_SIZE / 4u])
{
    return (void)body, (void)blen, (void)rep, NF_STATUS_NOT_SUPPORTED;
}
#endif
#endif
