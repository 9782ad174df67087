/* SPDX-License-Identifier: Apache-2.0 */
/* C model of nf_net (hw_net_model.h). The receive side follows nf_net_rx beat by beat
 * where its result depends on it (which bytes reach the slot, the checks a short frame
 * has passed); the ICRC follows nf_roce_icrc's byte walk, so edge cases (ICRC past the
 * frame, odd UDP lengths) come out as the RTL's. The register docs are the contract. */
#include "hw_net_model.h"

#include <string.h>

#define ETH_MIN 60u      /* the MAC pads shorter frames to this (nf_eth_mac_tx MIN_LEN) */
#define ETH_MIN_FCS 64u  /* shorter received frames are runts (nf_eth_mac_rx MIN_LEN) */
#define FCS_BYTES 4u
#define MAC_BYTES 6u
#define ETH_HDR 14u
#define IP_HDR_END 34u   /* frame offset after an IPv4 header of IHL 5 */
#define CRC_POLY_REFL 0xEDB88320u
#define ICRC_LRH_SEED 0xDEBB20E3u /* the CRC register after eight 0xFF bytes (the LRH stand-in) */

/* Frame offsets nf_net_rx, nf_net_tx and nf_roce_icrc look at (Ethernet II, IPv4 IHL 5). */
enum {
    OFF_TYPE0 = 12, OFF_TYPE1 = 13, OFF_IP = 14, OFF_TOS = 15, OFF_TOTLEN = 16, OFF_FRAG0 = 20, OFF_FRAG1 = 21,
    OFF_TTL = 22, OFF_PROTO = 23, OFF_IPCSUM = 24, OFF_DPORT0 = 36, OFF_DPORT1 = 37, OFF_ULEN0 = 38,
    OFF_ULEN1 = 39, OFF_UCSUM0 = 40, OFF_UCSUM1 = 41, OFF_BTH4 = 46,
    ICRC_FROM_ULEN = 30, /* the ICRC starts at UDP length + 30 (UDP at 34, ICRC its last 4 bytes) */
    MIN_ULEN = 24,       /* UDP header + BTH + ICRC */
};
#define ETYPE_HI 0x08u
#define ETYPE_IPV4_LO 0x00u
#define ETYPE_ARP_LO 0x06u
#define IP_VIHL 0x45u
#define IP_PROTO_UDP 0x11u
#define POS_SATURATE 0xFFFFu

static uint32_t crc_byte(uint32_t c, uint8_t b)
{
    c ^= b;
    for (int k = 0; k < 8; k++)
        c = (c >> 1) ^ (CRC_POLY_REFL & (0u - (c & 1u)));
    return c;
}

uint32_t nf_net_crc32(const uint8_t *b, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++)
        c = crc_byte(c, b[i]);
    return ~c;
}

/* ---- nf_roce_icrc: one byte per beat, outputs from the state before the beat ---- */

struct icrc_walk {
    uint32_t pos, udp_len, crc, rx_icrc;
    int run, have;
};

static void icrc_start(struct icrc_walk *w)
{
    w->pos = 0;
    w->udp_len = 0;
    w->crc = ICRC_LRH_SEED;
    w->rx_icrc = 0;
    w->run = 1;
    w->have = 0;
}

static int beat_ok(uint32_t pos, uint8_t b)
{
    switch (pos) {
    case OFF_TYPE0: return b == ETYPE_HI;
    case OFF_TYPE1: return b == ETYPE_IPV4_LO;
    case OFF_IP: return b == IP_VIHL;
    case OFF_FRAG0: return (b & 0x3Fu) == 0u; /* MF clear, offset 0 */
    case OFF_FRAG1: return b == 0u;
    case OFF_PROTO: return b == IP_PROTO_UDP;
    case OFF_DPORT0: return b == (NF_NET_ROCE_PORT >> 8);
    case OFF_DPORT1: return b == (NF_NET_ROCE_PORT & 0xFFu);
    default: return 1;
    }
}

/* One beat. *field: the beat is an ICRC byte of a frame RoCE so far, *out its computed
 * byte. At the last beat, returns roce (a whole RoCEv2 packet) in *roce. */
static void icrc_beat(struct icrc_walk *w, uint8_t b, int last, int *field, uint8_t *out, int *roce)
{
    uint32_t pos = w->pos, start = w->udp_len + ICRC_FROM_ULEN, end = start + 3u;
    int len_known = pos >= OFF_UCSUM0;
    int in_icrc = len_known && pos >= start && pos <= end;
    int covered = pos >= OFF_IP && (!len_known || pos < start);
    int masked = pos == OFF_TOS || pos == OFF_TTL || pos == OFF_IPCSUM || pos == OFF_IPCSUM + 1u ||
                 pos == OFF_UCSUM0 || pos == OFF_UCSUM1 || pos == OFF_BTH4;
    int ok = beat_ok(pos, b);
    uint32_t icrc = ~w->crc;
    *field = w->run && in_icrc;
    *out = (uint8_t)(icrc >> (8u * ((pos - start) & 3u)));
    if (last)
        *roce = w->run && ok && w->udp_len >= MIN_ULEN && (w->have || (len_known && pos == end));
    if (pos == OFF_ULEN0)
        w->udp_len = (w->udp_len & 0xFFu) | (uint32_t)b << 8;
    if (pos == OFF_ULEN1)
        w->udp_len = (w->udp_len & 0xFF00u) | b;
    if (in_icrc)
        w->rx_icrc = (uint32_t)b << 24 | w->rx_icrc >> 8;
    if (covered)
        w->crc = crc_byte(w->crc, masked ? 0xFFu : b);
    if (!last) {
        if (pos != POS_SATURATE)
            w->pos = pos + 1u;
        if (!ok)
            w->run = 0;
        if (len_known && pos == end)
            w->have = 1;
    }
}

int nf_net_icrc(const uint8_t *frame, size_t len, uint32_t *icrc)
{
    struct icrc_walk w;
    int field, roce = 0;
    uint8_t out;
    icrc_start(&w);
    for (size_t i = 0; i < len; i++)
        icrc_beat(&w, frame[i], i + 1 == len, &field, &out, &roce);
    *icrc = ~w.crc;
    return roce;
}

/* ---- registers ---- */

static uint32_t slot_mask(uint32_t n) { return n >= 32u ? 0xFFFFFFFFu : (1u << n) - 1u; }

int nf_net_port_init(struct nf_net_port *p, uint32_t rx_slots, uint32_t tx_slots, uint32_t slot_base,
                     uint32_t mac_seed, uint8_t *mem, size_t mem_bytes, nf_net_port_tx_fn tx, void *tx_ctx)
{
    memset(p, 0, sizeof(*p));
    if (rx_slots < 1u || rx_slots > NF_NET_MAX_SLOTS || tx_slots < 1u || tx_slots > NF_NET_MAX_SLOTS ||
        (slot_base & 3u) || slot_base > mem_bytes ||
        (uint64_t)(rx_slots + tx_slots) * NF_NET_SLOT_BYTES > mem_bytes - slot_base)
        return -1;
    p->rx_slots = rx_slots;
    p->tx_slots = tx_slots;
    p->slot_base = slot_base;
    p->mac_seed = mac_seed;
    p->mem = mem;
    p->mem_bytes = mem_bytes;
    p->tx = tx;
    p->tx_ctx = tx_ctx;
    p->mdio_data = 0xFFFFu;
    return 0;
}

void nf_net_port_force_tx_busy(struct nf_net_port *p, uint32_t mask) { p->tx_forced_busy = mask & slot_mask(p->tx_slots); }

uint32_t nf_net_port_read(const struct nf_net_port *p, uint32_t off)
{
    switch (off & ~3u) {
    case NF_NET_ID: return NF_NET_HW_ID_VALUE;
    case NF_NET_CFG: return NF_NET_CFG_RX_SLOTS_PUT(p->rx_slots) | NF_NET_CFG_TX_SLOTS_PUT(p->tx_slots);
    case NF_NET_SLOT_BASE: return p->slot_base;
    case NF_NET_CTRL: return p->ctrl;
    case NF_NET_MAC_LO: return p->mac_lo;
    case NF_NET_MAC_HI: return p->mac_hi;
    case NF_NET_RX_READY: return p->rx_ready;
    case NF_NET_TX_BUSY: return p->tx_forced_busy;
    case NF_NET_MAC_SEED: return p->mac_seed;
    case NF_NET_MDIO_STAT: return NF_NET_MDIO_STAT_DATA_PUT(p->mdio_data);
    case NF_NET_CNT_RX_OK: return p->cnt_rx_ok;
    case NF_NET_CNT_DROP_FCS: return p->cnt_drop_fcs;
    case NF_NET_CNT_DROP_ADDR: return p->cnt_drop_addr;
    case NF_NET_CNT_DROP_LONG: return p->cnt_drop_long;
    case NF_NET_CNT_DROP_IP: return p->cnt_drop_ip;
    case NF_NET_CNT_DROP_ICRC: return p->cnt_drop_icrc;
    case NF_NET_CNT_DROP_SLOT: return p->cnt_drop_slot;
    case NF_NET_CNT_DROP_FIFO: return p->cnt_drop_fifo;
    case NF_NET_CNT_TX: return p->cnt_tx;
    case NF_NET_CNT_TX_REJECT: return p->cnt_tx_reject;
    default: return 0;
    }
}

static uint32_t merge(uint32_t old, uint32_t v, uint32_t strb)
{
    for (unsigned b = 0; b < 4u; b++)
        if (strb >> b & 1u)
            old = (old & ~(0xFFu << (8u * b))) | (v & 0xFFu << (8u * b));
    return old;
}

static void tx_post(struct nf_net_port *p, uint32_t v);

void nf_net_port_write(struct nf_net_port *p, uint32_t off, uint32_t v, uint32_t strb)
{
    int word = (strb & 0xFu) == 0xFu; /* RX_RELEASE and TX_POST take whole words */
    switch (off & ~3u) {
    case NF_NET_CTRL:
        if (strb & 1u)
            p->ctrl = v & (NF_NET_CTRL_RX_EN_MASK | NF_NET_CTRL_PROMISC_MASK);
        break;
    case NF_NET_MAC_LO: p->mac_lo = merge(p->mac_lo, v, strb); break;
    case NF_NET_MAC_HI: p->mac_hi = merge(p->mac_hi, v, strb & 3u); break;
    case NF_NET_RX_RELEASE:
        if (word)
            p->rx_ready &= ~(v & slot_mask(p->rx_slots));
        break;
    case NF_NET_TX_POST:
        if (word)
            tx_post(p, v);
        break;
    case NF_NET_MDIO_CMD:
        if (word) {
            uint32_t got = p->mdio ? p->mdio(p->mdio_ctx, v) : 0xFFFFu;
            if (!NF_NET_MDIO_CMD_WRITE_GET(v))
                p->mdio_data = got & 0xFFFFu;
        }
        break;
    default: break;
    }
}

/* ---- receive: nf_eth_mac_rx, then nf_net_rx ---- */

static uint8_t mac_byte(const struct nf_net_port *p, unsigned i)
{
    return (uint8_t)(i < 4u ? p->mac_lo >> (8u * i) : p->mac_hi >> (8u * (i - 4u)));
}

enum nf_net_port_rx_result nf_net_port_rx(struct nf_net_port *p, const uint8_t *wire, size_t wlen, uint32_t cycle)
{
    /* The MAC: 1..4 bytes after the SFD emit nothing; the FCS is withheld; a bad FCS or a
     * frame shorter than 64 bytes with its FCS is flagged on the last beat. */
    if (wlen <= FCS_BYTES)
        return NF_NET_PORT_IGNORED;
    if (!(p->ctrl & NF_NET_CTRL_RX_EN_MASK))
        return NF_NET_PORT_IGNORED; /* RX_EN sampled at the first byte: ignored whole */
    size_t n = wlen - FCS_BYTES;
    const uint8_t *s = wire;
    uint32_t fcs = wire[n] | (uint32_t)wire[n + 1] << 8 | (uint32_t)wire[n + 2] << 16 | (uint32_t)wire[n + 3] << 24;
    int bad_mac = nf_net_crc32(s, n) != fcs || wlen < ETH_MIN_FCS;
    int promisc = (p->ctrl & NF_NET_CTRL_PROMISC_MASK) != 0;
    uint32_t slot = p->rx_next;
    int reserved = !(p->rx_ready >> slot & 1u);

    /* The destination as far as the frame goes (a runt's checks stop where it ends). */
    int mac_eq = 1, bcast = 1;
    for (unsigned i = 0; i < MAC_BYTES && i < n; i++) {
        mac_eq = mac_eq && s[i] == mac_byte(p, i);
        bcast = bcast && s[i] == 0xFFu;
    }
    int is_ip = n > OFF_TYPE1 && s[OFF_TYPE0] == ETYPE_HI && s[OFF_TYPE1] == ETYPE_IPV4_LO;
    int is_arp = n > OFF_TYPE1 && s[OFF_TYPE0] == ETYPE_HI && s[OFF_TYPE1] == ETYPE_ARP_LO;
    int vihl_ok = n > OFF_IP && s[OFF_IP] == IP_VIHL;
    /* The header's ones'-complement sum, a 16-bit word at a time with the carry folded in. */
    uint32_t csum = 0;
    for (size_t i = OFF_IP + 1u; i < IP_HDR_END && i < n; i += 2) {
        uint32_t sum = csum + ((uint32_t)s[i - 1] << 8 | s[i]);
        csum = (sum & 0xFFFFu) + (sum >> 16);
    }
    int is_udp = n > OFF_PROTO && s[OFF_PROTO] == IP_PROTO_UDP;
    int to_roce = is_udp && n > OFF_DPORT1 && s[OFF_DPORT0] == (NF_NET_ROCE_PORT >> 8) &&
                  s[OFF_DPORT1] == (NF_NET_ROCE_PORT & 0xFFu);
    int too_long = n > NF_NET_MAX_FRAME;
    uint32_t icrc;
    int roce = nf_net_icrc(s, n, &icrc);
    uint32_t rx_icrc = 0;
    if (roce) {
        size_t at = ((size_t)s[OFF_ULEN0] << 8 | s[OFF_ULEN1]) + ICRC_FROM_ULEN;
        rx_icrc = s[at] | (uint32_t)s[at + 1] << 8 | (uint32_t)s[at + 2] << 16 | (uint32_t)s[at + 3] << 24;
    }
    int icrc_ok = roce && rx_icrc == icrc;

    /* The bytes written while the frame arrives, whatever its verdict: none without a
     * free slot, the destination only once it is known to be another's, and nothing
     * from the first byte past NET_MAX_FRAME on. */
    size_t wrote = reserved ? n : 0u;
    if (!promisc && !mac_eq && !bcast && wrote > MAC_BYTES)
        wrote = MAC_BYTES;
    if (wrote > NF_NET_MAX_FRAME)
        wrote = NF_NET_MAX_FRAME;
    uint8_t *at = p->mem + p->slot_base + (size_t)slot * NF_NET_SLOT_BYTES;
    memcpy(at + NF_NET_FRAME_OFF, s, wrote);

    /* The verdict: one cause per dropped frame, the first that applies. */
    int addr_ok = mac_eq || (bcast && is_arp) || promisc;
    int ip_ok = !is_ip || (vihl_ok && csum == 0xFFFFu);
    int icrc_chk = !(is_ip && to_roce) || icrc_ok;
    if (bad_mac)
        p->cnt_drop_fcs++;
    else if (!addr_ok)
        p->cnt_drop_addr++;
    else if (too_long)
        p->cnt_drop_long++;
    else if (!ip_ok)
        p->cnt_drop_ip++;
    else if (!icrc_chk)
        p->cnt_drop_icrc++;
    else if (!reserved)
        p->cnt_drop_slot++;
    else {
        uint32_t kind = is_arp ? NF_NET_KIND_ARP : !is_ip ? NF_NET_KIND_OTHER : to_roce ? NF_NET_KIND_ROCE
                                                                                           : NF_NET_KIND_IPV4;
        uint32_t flags = (bcast ? NF_NET_RX_FLAG_BCAST : 0u) | (!mac_eq && !bcast ? NF_NET_RX_FLAG_PROMISC : 0u);
        at[NF_NET_RX_HDR_LEN_OFF] = (uint8_t)n;
        at[NF_NET_RX_HDR_LEN_OFF + 1u] = (uint8_t)(n >> 8);
        at[NF_NET_RX_HDR_KIND_OFF] = (uint8_t)kind;
        at[NF_NET_RX_HDR_FLAGS_OFF] = (uint8_t)flags;
        for (unsigned i = 0; i < 4u; i++)
            at[NF_NET_RX_HDR_CYCLE_OFF + i] = (uint8_t)(cycle >> (8u * i));
        p->rx_ready |= 1u << slot;
        p->rx_next = slot + 1u == p->rx_slots ? 0u : slot + 1u;
        p->cnt_rx_ok++;
        return NF_NET_PORT_PLACED;
    }
    return NF_NET_PORT_DROPPED;
}

/* ---- transmit: nf_net_tx, then nf_eth_mac_tx ---- */

static void tx_post(struct nf_net_port *p, uint32_t v)
{
    uint32_t slot = NF_NET_TX_POST_SLOT_GET(v), len = NF_NET_TX_POST_LEN_GET(v);
    if (slot >= p->tx_slots || (p->tx_forced_busy >> slot & 1u) || len < NF_NET_MIN_FRAME || len > NF_NET_MAX_FRAME) {
        p->cnt_tx_reject++;
        return;
    }
    const uint8_t *f = p->mem + p->slot_base + (size_t)(p->rx_slots + slot) * NF_NET_SLOT_BYTES + NF_NET_FRAME_OFF;
    uint8_t w[NF_NET_PORT_WIRE_MAX];
    memcpy(w, f, len);
    /* IPv4 of IHL 5 in a frame holding its header: total length LEN - 14 and the header
     * checksum over the header with those two fields in place. */
    if (len >= IP_HDR_END && f[OFF_TYPE0] == ETYPE_HI && f[OFF_TYPE1] == ETYPE_IPV4_LO && f[OFF_IP] == IP_VIHL) {
        uint32_t total = len - ETH_HDR;
        w[OFF_TOTLEN] = (uint8_t)(total >> 8);
        w[OFF_TOTLEN + 1] = (uint8_t)total;
        w[OFF_IPCSUM] = w[OFF_IPCSUM + 1] = 0;
        uint32_t sum = 0;
        for (unsigned i = OFF_IP; i < IP_HDR_END; i += 2)
            sum += (uint32_t)w[i] << 8 | w[i + 1];
        while (sum >> 16)
            sum = (sum & 0xFFFFu) + (sum >> 16);
        w[OFF_IPCSUM] = (uint8_t)(~sum >> 8);
        w[OFF_IPCSUM + 1] = (uint8_t)~sum;
    }
    /* The ICRC unit sees the bytes with the IPv4 fields in place; its bytes replace the
     * slot's on the ICRC beats of a frame that is RoCE so far. */
    struct icrc_walk iw;
    int field, roce;
    uint8_t out;
    icrc_start(&iw);
    for (uint32_t i = 0; i < len; i++) {
        icrc_beat(&iw, w[i], i + 1u == len, &field, &out, &roce);
        if (field)
            w[i] = out;
    }
    size_t n = len;
    if (n < ETH_MIN) {
        memset(w + n, 0, ETH_MIN - n);
        n = ETH_MIN;
    }
    uint32_t fcs = nf_net_crc32(w, n);
    for (unsigned i = 0; i < FCS_BYTES; i++)
        w[n + i] = (uint8_t)(fcs >> (8u * i));
    p->cnt_tx++;
    if (p->tx)
        p->tx(p->tx_ctx, w, n + FCS_BYTES);
}
