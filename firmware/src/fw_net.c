/* SPDX-License-Identifier: Apache-2.0 */
/* The network port's IPv4 layer (fw_net.h): ARP answers and resolution, ICMP echo, the
 * adapter's addresses. Frames are read and written through the adapter-memory window
 * in the NET slots; the port fills the IPv4 total length and header checksum on send.
 * Layer: called by fw_main and fw_msg; calls fw_tables (fw_dma) and fw_state. */
#include "fw_net.h"
#include "fw_state.h"
#include "fw_tables.h"
#include "hal.h"

#define SLOT_SHIFT 11u /* NET_SLOT_BYTES = 2048 */
_Static_assert(NF_NET_SLOT_BYTES == 1u << SLOT_SHIFT, "NET slot addresses are a shift");
_Static_assert(NF_NET_FRAME_OFF == 10u, "frame byte k lies at buffer index k + 2 (slot word 8 on)");

#define ETH_HDR 14u
#define ETHERTYPE_IPV4 0x0800u
#define ETHERTYPE_ARP 0x0806u
#define ARP_LEN 28u
#define ARP_FRAME (ETH_HDR + ARP_LEN)
#define ARP_REQUEST 1u
#define ARP_REPLY 2u
#define IP_HDR 20u
#define IP_PROTO_ICMP 1u
#define IP_TTL 64u
#define IP_MF_OFFSET_MASK 0x3FFFu /* more-fragments flag and fragment offset */
#define ICMP_ECHO_REQUEST 8u
#define ICMP_HDR 8u
#define ICMP_ECHO_WORD 0x0800u /* the request's type/code word the reply changes to 0 */

/* Frame bytes 0..45 as slot bytes 8..55: the headers ARP and ICMP read and write. */
#define HDR_WORDS 12u
#define HDR_BASE 8u
#define B(k) ((k) + NF_NET_FRAME_OFF - HDR_BASE)

/* The cache: a few peers (the connection code resolves at connect time). Ages and
 * retries count timer passes of TICK cycles, so no difference of cycle stamps is ever
 * taken over more than one pass and none can wrap. */
#define ARP_ENTRIES 8u
#define TICK_SHIFT 3u        /* a pass every CLK_HZ / 8 cycles: 125 ms */
#define RETRY_TICKS 2u       /* an unanswered request is sent again after 250 ms ... */
#define ARP_TRIES 4u         /* ... at most 4 requests, so HOST_UNREACHABLE within 1.25 s */
#define FAILED_TICKS 8u      /* a failed address answers HOST_UNREACHABLE for 1 s */
#define VALID_TICKS 480u     /* a learnt MAC is used for 60 s, then resolved again */

enum { ARP_FREE, ARP_PENDING, ARP_VALID, ARP_FAILED };
/* NET_NEIGH reports the states as they are: one reply holds the whole cache. */
_Static_assert(ARP_PENDING == NF_NEIGH_STATE_INCOMPLETE && ARP_VALID == NF_NEIGH_STATE_REACHABLE &&
                   ARP_FAILED == NF_NEIGH_STATE_FAILED && ARP_ENTRIES <= NF_NEIGH_MAX_ENTRIES,
               "NEIGH_STATE and NEIGH.MAX_ENTRIES follow the cache");

struct arp_entry {
    uint32_t ip, mac_lo, mac_hi;
    uint16_t ticks; /* passes since the entry was filled or its last request */
    uint8_t state, tries;
};

static struct {
    uint32_t present, slot_base, rx_slots, tx_slots, rx_next, tx_next;
    uint32_t ip, mask, mac_lo, mac_hi;
    uint32_t tick, tick_at; /* timer pass period and the cycle of the last one */
    uint32_t resolving;     /* entries in ARP_PENDING */
    struct arp_entry arp[ARP_ENTRIES];
} net;

static uint32_t get16(const uint8_t *b, uint32_t i) { return (uint32_t)b[i] << 8 | b[i + 1u]; }
static void put16(uint8_t *b, uint32_t i, uint32_t v)
{
    b[i] = (uint8_t)(v >> 8);
    b[i + 1u] = (uint8_t)v;
}
/* A 4-byte field as its word: first byte in [7:0] (IPv4 addresses, MAC bytes 0..3). */
static uint32_t get32(const uint8_t *b, uint32_t i)
{
    return b[i] | (uint32_t)b[i + 1u] << 8 | (uint32_t)b[i + 2u] << 16 | (uint32_t)b[i + 3u] << 24;
}
static void put32(uint8_t *b, uint32_t i, uint32_t v)
{
    for (uint32_t k = 0; k < 4u; k++, v >>= 8)
        b[i + k] = (uint8_t)v;
}
static void put_mac(uint8_t *b, uint32_t i, uint32_t lo, uint32_t hi)
{
    put32(b, i, lo);
    put16(b, i + 4u, (hi & 0xFFu) << 8 | (hi >> 8 & 0xFFu));
}
static uint32_t bswap32(uint32_t v) { return v << 24 | (v & 0xFF00u) << 8 | (v >> 8 & 0xFF00u) | v >> 24; }

static void hdr_read(uint32_t slot, uint8_t *b)
{
    hal_win w = mem_win(slot + HDR_BASE);
    for (uint32_t i = 0; i < HDR_WORDS; i++)
        put32(b, 4u * i, win_rd(w, 4u * i));
}
static void hdr_write(uint32_t slot, const uint8_t *b, uint32_t words)
{
    hal_win w = mem_win(slot + HDR_BASE);
    for (uint32_t i = 0; i < words; i++)
        win_wr(w, 4u * i, get32(b, 4u * i));
}

/* A host address: not 0/8, 127/8, multicast or reserved (224/3) (hip: host byte
 * order); with inv (~mask in host order, 0 for none) not its subnet's broadcast. */
static int host_ip(uint32_t hip, uint32_t inv)
{
    uint32_t first = hip >> 24;
    return first != 0u && first != 127u && first < 224u && (inv == 0u || (hip & inv) != inv);
}

/* A free TX slot's adapter address (its index in *slot), or 0 when every slot is busy. */
static uint32_t tx_free(uint32_t *slot)
{
    uint32_t busy = net_rd(NF_NET_TX_BUSY);
    for (uint32_t i = 0, s = net.tx_next; i < net.tx_slots; i++) {
        if (!(busy & (1u << s))) {
            *slot = s;
            net.tx_next = s + 1u == net.tx_slots ? 0u : s + 1u;
            return net.slot_base + ((net.rx_slots + s) << SLOT_SHIFT);
        }
        s = s + 1u == net.tx_slots ? 0u : s + 1u;
    }
    return 0;
}

/* tx_free for an answer that is dropped when no slot is free (counted). */
static uint32_t tx_slot(uint32_t *slot)
{
    uint32_t at = tx_free(slot);
    if (!at)
        fw_stats.net_tx_dropped++;
    return at;
}

static void tx_post(uint32_t slot, uint32_t len)
{
    net_wr(NF_NET_TX_POST, NF_NET_TX_POST_SLOT_PUT(slot) | NF_NET_TX_POST_LEN_PUT(len));
}

/* An ARP frame of op from us to (tmac, tip); a request goes to broadcast. */
static void arp_send(uint32_t op, uint32_t tmac_lo, uint32_t tmac_hi, uint32_t tip)
{
    uint32_t slot, at = tx_slot(&slot);
    if (!at)
        return;
    uint8_t b[4u * HDR_WORDS] = {0};
    if (op == ARP_REQUEST)
        put_mac(b, B(0), 0xFFFFFFFFu, 0xFFFFu);
    else
        put_mac(b, B(0), tmac_lo, tmac_hi);
    put_mac(b, B(6), net.mac_lo, net.mac_hi);
    put16(b, B(12), ETHERTYPE_ARP);
    put16(b, B(14), 1u); /* Ethernet */
    put16(b, B(16), ETHERTYPE_IPV4);
    b[B(18)] = 6u;
    b[B(19)] = 4u;
    put16(b, B(20), op);
    put_mac(b, B(22), net.mac_lo, net.mac_hi);
    put32(b, B(28), net.ip);
    if (op == ARP_REPLY)
        put_mac(b, B(32), tmac_lo, tmac_hi);
    put32(b, B(38), tip);
    hdr_write(at, b, (B(ARP_FRAME) + 3u) / 4u);
    tx_post(slot, ARP_FRAME);
}

static struct arp_entry *arp_find(uint32_t ip)
{
    for (uint32_t i = 0; i < ARP_ENTRIES; i++)
        if (net.arp[i].state != ARP_FREE && net.arp[i].ip == ip)
            return &net.arp[i];
    return 0;
}

static void arp_fill(struct arp_entry *e, uint32_t lo, uint32_t hi)
{
    if (e->state == ARP_PENDING)
        net.resolving--;
    e->mac_lo = lo;
    e->mac_hi = hi;
    e->state = ARP_VALID;
    e->ticks = 0;
}

/* An entry for a new address: a free one, else the oldest learnt one; 0 if every
 * entry is being resolved or held failed. */
static struct arp_entry *arp_new(void)
{
    struct arp_entry *old = 0;
    for (uint32_t i = 0; i < ARP_ENTRIES; i++) {
        struct arp_entry *e = &net.arp[i];
        if (e->state == ARP_FREE)
            return e;
        if (e->state == ARP_VALID && (!old || e->ticks > old->ticks))
            old = e;
    }
    return old;
}

static void arp_forget_all(void)
{
    for (uint32_t i = 0; i < ARP_ENTRIES; i++)
        net.arp[i].state = ARP_FREE;
    net.resolving = 0;
}

/* A received ARP frame (b: its headers, len: frame bytes): 1 when it was answered or a
 * reply filled the cache, else 0 (counted unhandled by the caller). */
static int rx_arp(const uint8_t *b, uint32_t len)
{
    uint32_t op = get16(b, B(20));
    if (len < ARP_FRAME || get16(b, B(14)) != 1u || get16(b, B(16)) != ETHERTYPE_IPV4 || b[B(18)] != 6u ||
        b[B(19)] != 4u || (op != ARP_REQUEST && op != ARP_REPLY))
        return 0;
    uint32_t slo = get32(b, B(22)), shi = get16(b, B(26)), sip = get32(b, B(28)), tip = get32(b, B(38));
    shi = (shi >> 8) | (shi & 0xFFu) << 8; /* bytes 4..5 as MAC_HI holds them */
    if (!net.ip || (slo & 1u) || (!slo && !shi) || !host_ip(bswap32(sip), 0u) || sip == net.ip)
        return 0; /* no address yet, a group or zero sender MAC, a probe, or our own */
    /* RFC 826: a sender already in the cache is refreshed whoever the frame is for. */
    struct arp_entry *e = arp_find(sip);
    if (e)
        arp_fill(e, slo, shi);
    if (op == ARP_REPLY) {
        fw_stats.net_arp_learned += e != 0;
        return e != 0; /* an answer nobody asked for fills nothing */
    }
    if (tip != net.ip)
        return 0;
    if (!e && (e = arp_new()) != 0) {
        e->ip = sip; /* the asker is about to talk to us */
        arp_fill(e, slo, shi);
    }
    fw_stats.net_arp_answered++;
    arp_send(ARP_REPLY, slo, shi, sip);
    return 1;
}

/* ICMP echo request to us: the reply is the request copied by the engine, its headers
 * rewritten and its ICMP checksum updated for the type change (RFC 1624), so a request
 * with a bad checksum gets a reply with a bad one. 1 when answered. */
static int rx_icmp(uint32_t slot, const uint8_t *b, uint32_t len)
{
    uint32_t total = get16(b, B(16));
    if (len < ETH_HDR + IP_HDR + ICMP_HDR || b[B(23)] != IP_PROTO_ICMP || get32(b, B(30)) != net.ip || !net.ip ||
        (get16(b, B(20)) & IP_MF_OFFSET_MASK) || total < IP_HDR + ICMP_HDR || ETH_HDR + total > len ||
        b[B(34)] != ICMP_ECHO_REQUEST || b[B(35)] != 0u)
        return 0;
    uint32_t sip = get32(b, B(26)), slo = get32(b, B(6));
    if (!host_ip(bswap32(sip), 0u) || (slo & 1u))
        return 0;
    uint32_t tslot, at = tx_slot(&tslot);
    if (!at)
        return 1; /* counted in net_tx_dropped, not as unhandled */
    uint32_t n = NF_NET_FRAME_OFF - HDR_BASE + ETH_HDR + total;
    struct fw_dma_side src = {NF_DMA_MODE_SYSTEM, 0, 0, 0, slot + HDR_BASE};
    struct fw_dma_side dst = {NF_DMA_MODE_SYSTEM, 0, 0, 0, at + HDR_BASE};
    if (NF_STATUS_WORD_CODE_GET(fw_dma(&src, &dst, n, 0)) != NF_REFUSE_OK)
        return 0;
    uint8_t r[4u * HDR_WORDS] = {0};
    for (uint32_t i = 0; i < 6u; i++)
        r[B(i)] = b[B(6u + i)];
    put_mac(r, B(6), net.mac_lo, net.mac_hi);
    put16(r, B(12), ETHERTYPE_IPV4);
    r[B(14)] = 0x45u;
    r[B(15)] = b[B(15)];         /* TOS */
    put16(r, B(16), total);      /* the port writes it too */
    put16(r, B(18), get16(b, B(18))); /* identification */
    r[B(22)] = IP_TTL;
    r[B(23)] = IP_PROTO_ICMP;    /* header checksum 0: the port fills it */
    put32(r, B(26), net.ip);
    put32(r, B(30), sip);
    /* The echo reply changes only the type word (8 to 0): the checksum is updated for that
     * word alone (RFC 1624, eqn. 3), not summed again over the message. */
    uint32_t sum = (~get16(b, B(36)) & 0xFFFFu) + (~ICMP_ECHO_WORD & 0xFFFFu);
    sum = (sum & 0xFFFFu) + (sum >> 16);
    put16(r, B(36), ~sum & 0xFFFFu);
    hdr_write(at, r, (B(ETH_HDR + IP_HDR + 4u) + 3u) / 4u);
    tx_post(tslot, ETH_HDR + total);
    fw_stats.net_icmp_answered++;
    return 1;
}

/* A frame that is not RoCE (hw0: the first word of its NET_RX_HDR): answered, learnt
 * or counted unhandled. */
static void rx_frame(uint32_t slot, uint32_t hw0)
{
    uint8_t b[4u * HDR_WORDS];
    hdr_read(slot, b);
    uint32_t len = hw0 & 0xFFFFu;
    uint32_t kind = hw0 >> (8u * NF_NET_RX_HDR_KIND_OFF) & 0xFFu;
    uint32_t type = get16(b, B(12));
    int done = 0;
    if (kind == NF_NET_KIND_ARP && type == ETHERTYPE_ARP)
        done = rx_arp(b, len);
    else if (kind == NF_NET_KIND_IPV4 && type == ETHERTYPE_IPV4)
        done = rx_icmp(slot, b, len);
    if (!done)
        fw_stats.net_unhandled++;
}

/* Retries, failures and ageing, one pass per tick. */
static void timer_pass(void)
{
    for (uint32_t i = 0; i < ARP_ENTRIES; i++) {
        struct arp_entry *e = &net.arp[i];
        if (e->state == ARP_FREE)
            continue;
        e->ticks++;
        if (e->state == ARP_PENDING && e->ticks >= RETRY_TICKS) {
            if (e->tries >= ARP_TRIES) {
                e->state = ARP_FAILED;
                net.resolving--;
                fw_stats.net_resolve_timeouts++;
            } else {
                e->tries++;
                arp_send(ARP_REQUEST, 0, 0, e->ip);
            }
            e->ticks = 0;
        } else if ((e->state == ARP_FAILED && e->ticks >= FAILED_TICKS) ||
                   (e->state == ARP_VALID && e->ticks >= VALID_TICKS)) {
            e->state = ARP_FREE;
        }
    }
}

int fw_net_due(uint32_t now)
{
    return net.present && now - net.tick_at >= net.tick;
}

uint32_t fw_net_next_due(void)
{
    return net.tick_at + net.tick;
}

int fw_net_next(uint32_t *at, uint32_t *len)
{
    if (!net.present)
        return 0;
    /* The port fills the slots in ring order: take them in the same order. */
    while (net_rd(NF_NET_RX_READY) & (1u << net.rx_next)) {
        uint32_t slot = net.slot_base + (net.rx_next << SLOT_SHIFT);
        uint32_t hw0 = mem_rd(slot + NF_NET_RX_HDR_LEN_OFF); /* len and kind of NET_RX_HDR */
        fw_stats.net_rx++;
        if ((hw0 >> (8u * NF_NET_RX_HDR_KIND_OFF) & 0xFFu) == NF_NET_KIND_ROCE) {
            *at = slot;
            *len = hw0 & 0xFFFFu;
            return 1;
        }
        rx_frame(slot, hw0);
        fw_net_release();
    }
    return 0;
}

void fw_net_release(void)
{
    uint32_t s = net.rx_next;
    net_wr(NF_NET_RX_RELEASE, 1u << s);
    net.rx_next = s + 1u == net.rx_slots ? 0u : s + 1u;
}

int fw_net_timer(void)
{
    uint32_t now = hal_cycles();
    if (!net.present || now - net.tick_at < net.tick)
        return 0;
    /* One pass however late: entries age by passes, and a late pass only stretches them. */
    net.tick_at = now;
    timer_pass();
    return 1;
}

int fw_net_poll(void)
{
    uint32_t at, len;
    int did = 0;
    while (fw_net_next(&at, &len)) {
        fw_stats.net_unhandled++; /* RoCE, with no transport to take it */
        fw_net_release();
        did = 1;
    }
    return fw_net_timer() | did;
}

uint32_t fw_net_tx_free(uint32_t *slot)
{
    return net.present ? tx_free(slot) : 0u;
}

void fw_net_tx_post(uint32_t slot, uint32_t len)
{
    tx_post(slot, len);
}

void fw_net_self(uint32_t self[3])
{
    self[0] = net.ip;
    self[1] = net.mac_lo;
    self[2] = net.mac_hi;
}

static uint32_t clamp_slots(uint32_t n)
{
    return n < 1u ? 1u : n > NF_NET_MAX_SLOTS ? NF_NET_MAX_SLOTS : n;
}

FW_COLD void fw_net_init(void)
{
    net.present = 0;
    arp_forget_all();
    if (net_rd(NF_NET_ID) != NF_NET_HW_ID_VALUE)
        return; /* no port in this build */
    net_wr(NF_NET_CTRL, 0);
    uint32_t cfg = net_rd(NF_NET_CFG);
    net.rx_slots = clamp_slots(NF_NET_CFG_RX_SLOTS_GET(cfg));
    net.tx_slots = clamp_slots(NF_NET_CFG_TX_SLOTS_GET(cfg));
    net.slot_base = net_rd(NF_NET_SLOT_BASE);
    net.rx_next = net.tx_next = 0;
    net.ip = net.mask = 0;
    /* 02: locally administered unicast; 6e: this design's byte; then the adapter's own. */
    uint32_t seed = net_rd(NF_NET_MAC_SEED);
    net.mac_lo = 0x02u | 0x6Eu << 8 | (seed >> 24) << 16 | (seed >> 16 & 0xFFu) << 24;
    net.mac_hi = (seed >> 8 & 0xFFu) | (seed & 0xFFu) << 8;
    net_wr(NF_NET_MAC_LO, net.mac_lo);
    net_wr(NF_NET_MAC_HI, net.mac_hi);
    net.tick = fw_cfg.clk_hz >> TICK_SHIFT;
    if (net.tick == 0)
        net.tick = 1;
    net.tick_at = hal_cycles();
    net_wr(NF_NET_CTRL, NF_NET_CTRL_RX_EN_MASK);
    net.present = 1;
    sys_wr(NF_SYS_WAKE_NET, 1); /* a frame in a NET RX slot ends the idle loop's sleep */
}

uint32_t fw_net_tick(void)
{
    return net.present ? net.tick : 0u;
}

FW_COLD uint32_t fw_net_resolve(uint32_t ip, uint32_t mac[2])
{
    if (!net.present || !net.ip)
        return NF_STATUS_INVALID_DEVICE_STATE;
    uint32_t hip = bswap32(ip), inv = ~bswap32(net.mask);
    if (!host_ip(hip, 0u))
        return NF_STATUS_INVALID_PARAMETER;
    if ((ip ^ net.ip) & net.mask)
        return NF_STATUS_NETWORK_UNREACHABLE; /* no router */
    if (inv > 1u && (!host_ip(hip, inv) || !(hip & inv)))
        return NF_STATUS_INVALID_PARAMETER; /* the subnet's broadcast or network address */
    if (ip == net.ip) {
        mac[0] = net.mac_lo;
        mac[1] = net.mac_hi;
        return NF_STATUS_SUCCESS;
    }
    struct arp_entry *e = arp_find(ip);
    if (e) {
        if (e->state == ARP_VALID) {
            mac[0] = e->mac_lo;
            mac[1] = e->mac_hi;
            return NF_STATUS_SUCCESS;
        }
        return e->state == ARP_PENDING ? NF_STATUS_PENDING : NF_STATUS_HOST_UNREACHABLE;
    }
    e = arp_new();
    if (!e)
        return NF_STATUS_INSUFFICIENT_RESOURCES;
    *e = (struct arp_entry){ip, 0, 0, 0, ARP_PENDING, 1};
    net.resolving++;
    arp_send(ARP_REQUEST, 0, 0, ip);
    return NF_STATUS_PENDING;
}

/* Contiguous ones from the first byte, prefix 8..32 (hmask: host byte order). */
static int good_mask(uint32_t hmask)
{
    uint32_t inv = ~hmask;
    return (inv & (inv + 1u)) == 0u && (hmask >> 24) == 0xFFu;
}

FW_COLD uint32_t fw_net_config(uint32_t body, uint32_t blen, uint32_t rep[NF_NET_CONFIG_REP_SIZE / 4u])
{
    if (blen < NF_NET_CONFIG_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    if (!net.present)
        return NF_STATUS_NOT_SUPPORTED;
    hal_win w = mem_win(body);
    uint32_t flags = win_rd(w, NF_NET_CONFIG_REQ_FLAGS_OFF);
    uint32_t ip = win_rd(w, NF_NET_CONFIG_REQ_IPV4_OFF), mask = win_rd(w, NF_NET_CONFIG_REQ_NETMASK_OFF);
    uint32_t lo = win_rd(w, NF_NET_CONFIG_REQ_MAC_LO_OFF), hi = win_rd(w, NF_NET_CONFIG_REQ_MAC_HI_OFF);
    if ((flags & ~(uint32_t)(NF_NET_CONFIG_FLAG_ADDR | NF_NET_CONFIG_FLAG_MAC)) ||
        win_rd(w, NF_NET_CONFIG_REQ_RSVD_OFF))
        return NF_STATUS_INVALID_PARAMETER;
    if (flags & NF_NET_CONFIG_FLAG_ADDR) {
        uint32_t hip = bswap32(ip), inv = ~bswap32(mask);
        /* a /31 or /32 has no network or broadcast address to avoid */
        if (!good_mask(bswap32(mask)) || !host_ip(hip, inv > 1u ? inv : 0u) || (inv > 1u && !(hip & inv)))
            return NF_STATUS_INVALID_PARAMETER;
    }
    if ((flags & NF_NET_CONFIG_FLAG_MAC) && ((hi >> 16) || (lo & 1u) || (!lo && !hi)))
        return NF_STATUS_INVALID_PARAMETER; /* a group MAC, or none */
    if ((flags & NF_NET_CONFIG_FLAG_ADDR) && (ip != net.ip || mask != net.mask)) {
        net.ip = ip;
        net.mask = mask;
        arp_forget_all(); /* what was learnt, and asked, under the old address */
    }
    if (flags & NF_NET_CONFIG_FLAG_MAC) {
        /* A frame arriving between the two writes meets a half-changed filter and is
         * dropped (CNT_DROP_ADDR), as one for another MAC would be. */
        net.mac_lo = lo;
        net.mac_hi = hi;
        net_wr(NF_NET_MAC_LO, lo);
        net_wr(NF_NET_MAC_HI, hi);
    }
    rep[NF_NET_CONFIG_REP_IPV4_OFF / 4u] = net.ip;
    rep[NF_NET_CONFIG_REP_NETMASK_OFF / 4u] = net.mask;
    rep[NF_NET_CONFIG_REP_MAC_LO_OFF / 4u] = net.mac_lo;
    rep[NF_NET_CONFIG_REP_MAC_HI_OFF / 4u] = net.mac_hi;
    rep[NF_NET_CONFIG_REP_MAX_MTU_OFF / 4u] = NF_NET_MAX_PATH_MTU;
    return NF_STATUS_SUCCESS;
}

/* ---- the PHY, over the NET block's MDIO master (clause 22) ---- */

/* Busy polls far beyond a frame's 64 MDC periods: a master still busy after them is
 * wedged, and the request fails INTERNAL_ERROR (mdio_wedged). */
#define MDIO_POLLS 0x10000u

/* One MDIO frame (an MDIO_CMD word); MDIO_STAT.DATA after it, a read's value. */
static uint32_t mdio_go(uint32_t cmd)
{
    net_wr(NF_NET_MDIO_CMD, cmd);
    for (uint32_t n = 0; n < MDIO_POLLS && (net_rd(NF_NET_MDIO_STAT) & NF_NET_MDIO_STAT_BUSY_MASK); n++) {
    }
    return NF_NET_MDIO_STAT_DATA_GET(net_rd(NF_NET_MDIO_STAT));
}
static int mdio_wedged(void) { return (net_rd(NF_NET_MDIO_STAT) & NF_NET_MDIO_STAT_BUSY_MASK) != 0u; }
static uint32_t mdio_rd(uint32_t a, uint32_t reg)
{
    return mdio_go(NF_NET_MDIO_CMD_PHY_PUT(a) | NF_NET_MDIO_CMD_REG_PUT(reg));
}

/* The registers of NET_PHY_REP after addr, in its field order. */
static const uint8_t phy_regs[] = {NF_MII_BMCR, NF_MII_BMSR, NF_MII_PHYID1, NF_MII_PHYID2, NF_MII_ANAR,
                                   NF_MII_ANLPAR, NF_MII_GCTRL, NF_MII_GSTAT, NF_MII_ESTATUS};
_Static_assert(NF_NET_PHY_REP_BMCR_OFF == 4u && NF_NET_PHY_REP_ESTATUS_OFF == 4u + 2u * (sizeof(phy_regs) - 1u) &&
                   NF_NET_PHY_REP_SIZE == 4u + 2u * sizeof(phy_regs) + 2u,
               "NET_PHY_REP holds phy_regs' values as halfwords after addr");

FW_COLD uint32_t fw_net_phy(uint32_t body, uint32_t blen, uint32_t rep[NF_NET_PHY_REP_SIZE / 4u])
{
    if (blen < NF_NET_PHY_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    if (!net.present)
        return NF_STATUS_NOT_SUPPORTED;
    hal_win w = mem_win(body);
    uint32_t action = win_rd(w, NF_NET_PHY_REQ_ACTION_OFF), a = 0;
    if (action > NF_NET_PHY_ACTION_LOOPBACK_OFF || win_rd(w, NF_NET_PHY_REQ_RSVD_OFF))
        return NF_STATUS_INVALID_PARAMETER;
    /* The PHY: the first address whose PHYID1 reads other than the pulled-up bus's ones.
     * A wedged master ignores every command after it and fails the request at its end. */
    while (a < NF_MII_ADDRS && mdio_rd(a, NF_MII_PHYID1) == NF_MII_NO_ANSWER)
        a++;
    if (a == NF_MII_ADDRS)
        return NF_STATUS_INVALID_DEVICE_STATE;
    /* Loopback: forced full duplex at BMCR's speed; off: auto-negotiation again. */
    if (action != NF_NET_PHY_ACTION_QUERY) {
        uint32_t v = NF_MII_BMCR_FULLDPLX | (mdio_rd(a, NF_MII_BMCR) & (NF_MII_BMCR_SPEED1000 | NF_MII_BMCR_SPEED100));
        v |= action == NF_NET_PHY_ACTION_LOOPBACK_ON ? NF_MII_BMCR_LOOPBACK : NF_MII_BMCR_ANENABLE | NF_MII_BMCR_ANRESTART;
        _Static_assert(NF_NET_MDIO_CMD_DATA_LSB == 0u && NF_NET_MDIO_CMD_DATA_WIDTH == 16u, "v is DATA as it is");
        mdio_go(NF_NET_MDIO_CMD_PHY_PUT(a) | NF_NET_MDIO_CMD_REG_PUT(NF_MII_BMCR) | NF_NET_MDIO_CMD_WRITE_MASK | v);
    }
    (void)mdio_rd(a, NF_MII_BMSR); /* the link bit latches low: the next read is the link now */
    rep[0] = a;
    for (uint32_t i = 0; i < sizeof(phy_regs); i++) /* rep arrives zeroed */
        rep[1u + i / 2u] |= mdio_rd(a, phy_regs[i]) << (16u * (i & 1u));
    return mdio_wedged() ? NF_STATUS_INTERNAL_ERROR : NF_STATUS_SUCCESS;
}

FW_COLD uint32_t fw_net_neigh(uint32_t at, uint32_t *n)
{
    if (!net.present)
        return NF_STATUS_NOT_SUPPORTED;
    *n = 0;
    for (uint32_t i = 0; i < ARP_ENTRIES; i++) {
        const struct arp_entry *e = &net.arp[i];
        if (e->state == ARP_FREE)
            continue;
        uint32_t p = at + *n * NF_NET_NEIGH_ENTRY_SIZE;
        mem_wr(p + NF_NET_NEIGH_ENTRY_IPV4_OFF, e->ip);
        mem_wr(p + NF_NET_NEIGH_ENTRY_MAC_LO_OFF, e->mac_lo);
        /* mac_hi, state and tries share one word, in field order from [15:0] */
        mem_wr(p + NF_NET_NEIGH_ENTRY_MAC_HI_OFF,
               (e->mac_hi & 0xFFFFu) | (uint32_t)e->state << 16 | (uint32_t)e->tries << 24);
        mem_wr(p + NF_NET_NEIGH_ENTRY_AGE_MS_OFF, (uint32_t)e->ticks * (1000u >> TICK_SHIFT));
        (*n)++;
    }
    return NF_STATUS_SUCCESS;
}
