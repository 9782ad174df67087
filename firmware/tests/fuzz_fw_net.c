/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the network port's frames into the firmware (RoCEv2 RC, ARP, ICMP,
 * garbage) interleaved with host work requests on QPs connected over the wire and with
 * timer passes, through the link and port models (tb.c, hw_net_model.h).
 *
 * The harness plays the peer adapter at PEER_IP: it answers the firmware's ARP
 * requests, and builds mostly valid RoCE frames (IPv4 checksum and ICRC right) whose
 * PSNs sit near the ones the firmware expects, so the transport's deep paths run.
 * After every record it checks: no trap, every engine DMA chunk inside adapter memory,
 * never into a received frame nor past the buffers the harness names (the keys
 * themselves are the engine model's check), no TX overflow on the link, each work
 * request completes at most once, the RC queues inside their arrays, every RoCE packet
 * sent well formed. At the end a PING is still answered (tb_run aborts when the
 * firmware never goes idle), and after a flush every tracked request has completed.
 *
 * Input: [setup byte][sq_psn 3][rq_psn 3], then records [kind][fields...]: kind % 10
 * picks roce (0-3), host_wr (4-5), timer (6), arp_frame (7), other_frame (8) or
 * control (9); each reads its own fields (fuzz_net_seeds.py writes them). */
#include "tb.h"

#include "fw_rc_int.h"
#include "hw_net_model.h"
#include "nf_engine_model.h"

#define NQP 3 /* QPs 0 and 1 connected over the wire, 2 left in RESET */
#define NWIRE 2
#define PG NF_ADAPTER_PAGE_SIZE
#define MR_VA 0x10000u
#define MAX_WR 4096u
/* Every buffer the harness names (MR pages, SGEs: SGE_BASE + 8 * 15 bits + 15 bits of
 * length) lies in the user region's first USER_SPAN bytes: a DMA beyond wrote memory
 * no key or SGE granted. */
#define SGE_BASE 0x4000u
#define USER_SPAN 0x50000u
_Static_assert(SGE_BASE + 8u * 0x7FFFu + 0x7FFFu <= USER_SPAN && 8u * PG + 4u * 1024u <= USER_SPAN,
               "the harness's buffers inside USER_SPAN");

static const uint8_t our_ip[4] = {10, 0, 0, 2}, peer_ip[4] = {10, 0, 0, 7};
static const uint8_t peer_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint32_t peer_qpn[NWIRE] = {0x000111u, 0xABC222u};
static uint8_t our_mac[6];
static uint32_t qpns[NQP], tokens[2], next_wr;
static uint8_t completed[MAX_WR + 1];
/* Per work request: its QP index; receives and silent successes are not tracked
 * (wr_recv). A disconnect completes a QP's queued requests, so every other one ends. */
static uint8_t wr_qp[MAX_WR + 1], wr_recv[MAX_WR + 1];
static unsigned long roce_in, roce_out, cqes;
static int trace; /* FUZZ_TRACE=1: print every CQE and sent packet */

static _Noreturn void fail(const char *what)
{
    fprintf(stderr, "fuzz_fw_net: %s\n", what);
    abort();
}

static uint32_t ip_word(const uint8_t *ip) { return ip[0] | ip[1] << 8 | ip[2] << 16 | (uint32_t)ip[3] << 24; }
static void put16(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}
static uint32_t getbe16(const uint8_t *b) { return (uint32_t)b[0] << 8 | b[1]; }
static uint32_t getbe32(const uint8_t *b) { return getbe16(b) << 16 | getbe16(b + 2); }
static void putbe32(uint8_t *b, uint32_t v)
{
    put16(b, v >> 16);
    put16(b + 2, v);
}


static const uint8_t bcast[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

/* An ARP frame (60 bytes, as a MAC pads it) from the peer's MAC: op 1 request, 2 reply;
 * tha NULL: zero. */
static void arp_build(uint8_t *a, const uint8_t *edst, uint32_t op, const uint8_t *spa, const uint8_t *tha,
                      const uint8_t *tpa)
{
    memset(a, 0, 60);
    memcpy(a, edst, 6);
    memcpy(a + 6, peer_mac, 6);
    put16(a + 12, 0x0806);
    put16(a + 14, 1);
    put16(a + 16, 0x0800);
    a[18] = 6;
    a[19] = 4;
    put16(a + 20, op);
    memcpy(a + 22, peer_mac, 6);
    memcpy(a + 28, spa, 4);
    if (tha)
        memcpy(a + 32, tha, 6);
    memcpy(a + 38, tpa, 4);
}

/* The input, read in order; past its end every field reads 0. */
struct rd {
    const uint8_t *p;
    size_t n, at;
};
static uint32_t u8(struct rd *r) { return r->at < r->n ? r->p[r->at++] : 0u; }
static uint32_t u16(struct rd *r) { return u8(r) | u8(r) << 8; }
static uint32_t u32(struct rd *r) { return u16(r) | u16(r) << 16; }

/* Every DMA chunk stays inside adapter memory and never overwrites a received frame
 * (the RX slots are the port's until the firmware releases them). */
static void chunk_hook(struct nfm_engine *e, uint32_t src, uint32_t dst, uint32_t len, uint32_t done, void *ctx)
{
    (void)e;
    (void)done;
    (void)ctx;
    uint32_t mem = nf_hw_cfg()->mem_bytes, rx0 = nf_hw_net_slot_base();
    uint32_t rx1 = rx0 + nf_hw_cfg()->net_rx_slots * NF_NET_SLOT_BYTES;
    if (len > mem || src > mem - len || dst > mem - len)
        fail("an engine DMA outside adapter memory");
    if (dst < rx1 && dst + len > rx0)
        fail("an engine DMA into a network RX slot");
    if (dst + len > nf_hw_user_base() + USER_SPAN)
        fail("an engine DMA into user memory no buffer names");
}

/* Each wire QP's transport state stays inside its arrays, and the requester never
 * counts a PSN acknowledged that it has not sent. */
static void check_rc(void)
{
    for (uint32_t q = 0; q < FW_QP_CAP; q++) {
        const struct rc_qp *c = &rc_qps[q];
        const struct fw_qp *qp = &fw_qps[q];
        if (qp->rq_count > qp->rq_depth)
            fail("a receive queue beyond its depth");
        if (!qp->wire)
            continue;
        if (c->head >= SQ_DEPTH || c->count > SQ_DEPTH || c->sent > c->count || c->rd_head >= RD_DEPTH ||
            c->rd_count > RD_DEPTH)
            fail("an RC queue index beyond its array");
        if (psn_diff(c->sq_psn, c->ack_psn) < 0)
            fail("the oldest unacknowledged PSN is past the next one to send");
        if (c->mtu_shift < MTU_SHIFT(NF_PATH_MTU_256) || c->mtu_shift > MTU_SHIFT(NF_NET_MAX_PATH_MTU))
            fail("a wire QP's path MTU outside the ones the adapter takes");
    }
}

static void check_msgs(void)
{
    check_rc();
    for (int i = 0; i < tb.nmsgs && i < TB_MAX_MSGS; i++) {
        const struct tb_msg *m = &tb.msgs[i];
        if (m->hdr.op != NF_OP_CQE)
            continue;
        struct nf_cqe c;
        memcpy(&c, m->body, sizeof(c));
        cqes++;
        if (trace)
            fprintf(stderr, "CQE qpn %x wr_id %u status %x bytes %u op %u refuse %u\n", c.qpn, c.wr_id, c.status,
                    c.bytes, c.op_type, c.refuse);
        if (c.wr_id == 0 || c.wr_id > next_wr)
            fail("a CQE for a work request never posted");
        if (completed[c.wr_id]++)
            fail("a work request completed twice");
    }
    tb_clear();
    if (fw_stats.faults)
        fail("the firmware trapped");
    if (fw_stats.tx_overflow)
        fail("a link message found no TX room");
}

/* A RoCE packet the firmware sent: an RC opcode it may send, to a neighbour (a QP may
 * be connected to any, and ARP frames may teach any) on port 4791, its extension
 * headers, payload (at most the largest path MTU) and pad adding up to the UDP length, the pad
 * count in the BTH matching. */
static void check_sent(const uint8_t *f, size_t n)
{
    uint32_t op = f[F_BTH], udp = (uint32_t)f[F_UDP + NF_UDP_LEN_OFF] << 8 | f[F_UDP + NF_UDP_LEN_OFF + 1];
    size_t ext;
    switch (op) {
    case NF_BTH_OP_SEND_FIRST: case NF_BTH_OP_SEND_MIDDLE: case NF_BTH_OP_SEND_LAST: case NF_BTH_OP_SEND_ONLY:
    case NF_BTH_OP_WRITE_MIDDLE: case NF_BTH_OP_WRITE_LAST: case NF_BTH_OP_READ_MIDDLE: ext = 0; break;
    case NF_BTH_OP_WRITE_FIRST: case NF_BTH_OP_WRITE_ONLY: case NF_BTH_OP_READ_REQUEST: ext = NF_RETH_SIZE; break;
    case NF_BTH_OP_READ_FIRST: case NF_BTH_OP_READ_LAST: case NF_BTH_OP_READ_ONLY: case NF_BTH_OP_ACK:
        ext = NF_AETH_SIZE; break;
    case NF_BTH_OP_SEND_LAST_INV: case NF_BTH_OP_SEND_ONLY_INV: ext = NF_IETH_SIZE; break;
    default: fail("the firmware sent an RC opcode it has no use for");
    }
    if (trace)
        fprintf(stderr, "sent op %02x to %u.%u.%u.%u qp %06x psn %06x udp %u\n", op, f[F_IP + NF_IPV4_DST_OFF],
                f[F_IP + NF_IPV4_DST_OFF + 1], f[F_IP + NF_IPV4_DST_OFF + 2], f[F_IP + NF_IPV4_DST_OFF + 3],
                (unsigned)NF_BTH_DEST_QP_GET(getbe32(f + F_BTH + NF_BTH_DEST_QP_OFF)),
                (unsigned)NF_BTH_PSN_GET(getbe32(f + F_BTH + NF_BTH_PSN_OFF)), udp);
    /* our own address is a neighbour too: resolving it answers our MAC */
    if (memcmp(f + F_IP + NF_IPV4_DST_OFF, our_ip, 3))
        fail("a RoCE packet to an address off the subnet");
    if (((uint32_t)f[F_UDP + NF_UDP_DPORT_OFF] << 8 | f[F_UDP + NF_UDP_DPORT_OFF + 1]) != NF_NET_ROCE_PORT)
        fail("a RoCE packet not to UDP port 4791");
    size_t hdr = NF_UDP_SIZE + NF_BTH_SIZE + ext + NF_ROCE_ICRC_BYTES;
    if (udp < hdr || F_UDP + (size_t)udp > n)
        fail("a RoCE packet's UDP length shorter than its headers or longer than the frame");
    uint32_t body = udp - (uint32_t)hdr, pad = NF_BTH_PAD_GET(getbe32(f + F_BTH + NF_BTH_PAD_OFF));
    if ((body & 3u) || body < pad || body - pad > MTU_MAX ||
        (op == NF_BTH_OP_READ_REQUEST || op == NF_BTH_OP_ACK ? body : 0))
        fail("a RoCE packet's payload and pad disagree, exceed the MTU or ride on a READ request/ACK");
}

/* Take what the port sent: answer ARP requests for the peer, count RoCE packets.
 * Returns the frames it injected. */
static int drain(void)
{
    static uint8_t out[NF_NET_MAX_FRAME];
    size_t n;
    int answered = 0;
    while ((n = nf_hw_net_tx_take(out, sizeof(out))) > 0) {
        if (n >= 42 && out[12] == 0x08 && out[13] == 0x06 && out[21] == 1 && !memcmp(out + 38, peer_ip, 4)) {
            uint8_t a[60];
            arp_build(a, out + 6, 2, peer_ip, out + 22, out + 28);
            if (answered++ < 4)
                nf_hw_net_rx(a, 60);
        } else if (n >= F_EXT && getbe16(out + NF_ETH_TYPE_OFF) == NF_IPV4_ETHERTYPE &&
                   out[F_IP + NF_IPV4_PROTO_OFF] == NF_IPV4_PROTO_UDP) {
            roce_out++;
            check_sent(out, n);
        }
    }
    return answered < 4 ? answered : 4;
}

/* Run the firmware until idle, then take what it sent (answering ARP once more). */
static void run(void)
{
    for (int i = 0; i < 3; i++) {
        tb_run();
        check_msgs();
        if (!drain())
            break;
    }
}

static void inject(const uint8_t *f, size_t n)
{
    nf_hw_net_rx(f, n);
    run();
}

static uint32_t msg(uint16_t op, const void *body, size_t blen)
{
    uint8_t buf[NF_LINK_MAX_PAYLOAD];
    size_t len = 0;
    uint32_t tag = tb_put_msg(buf, &len, op, body, blen);
    tb_clear();
    tb_send_data(buf, len);
    tb_run();
    const struct tb_msg *m = tb_find_reply(tag);
    uint32_t st = m ? m->hdr.status : 0xFFFFFFFFu;
    check_msgs();
    drain();
    return st;
}

static size_t eth_ip(uint8_t *f, uint32_t proto, size_t ip_payload)
{
    memcpy(f, our_mac, 6);
    memcpy(f + 6, peer_mac, 6);
    put16(f + NF_ETH_TYPE_OFF, NF_IPV4_ETHERTYPE);
    uint8_t *ip = f + F_IP;
    memset(ip, 0, NF_IPV4_SIZE);
    ip[NF_IPV4_VER_IHL_OFF] = NF_IPV4_VER_IHL;
    put16(ip + NF_IPV4_TOTAL_LEN_OFF, (uint32_t)(NF_IPV4_SIZE + ip_payload));
    put16(ip + NF_IPV4_DF_OFF, NF_IPV4_DF_MASK);
    ip[NF_IPV4_TTL_OFF] = IP_TTL;
    ip[NF_IPV4_PROTO_OFF] = (uint8_t)proto;
    memcpy(ip + NF_IPV4_SRC_OFF, peer_ip, 4);
    memcpy(ip + NF_IPV4_DST_OFF, our_ip, 4);
    put16(ip + NF_IPV4_CSUM_OFF, tb_ip_csum(ip, NF_IPV4_SIZE));
    return F_IP + NF_IPV4_SIZE + ip_payload;
}

/* The seeds (fuzz_net_seeds.py) pick opcodes by their index here: the order stays. */
static const uint8_t rc_ops[] = {
    NF_BTH_OP_SEND_FIRST, NF_BTH_OP_SEND_MIDDLE, NF_BTH_OP_SEND_LAST, NF_BTH_OP_SEND_LAST_IMM, NF_BTH_OP_SEND_ONLY,
    NF_BTH_OP_SEND_ONLY_IMM, NF_BTH_OP_WRITE_FIRST, NF_BTH_OP_WRITE_MIDDLE, NF_BTH_OP_WRITE_LAST,
    NF_BTH_OP_WRITE_LAST_IMM, NF_BTH_OP_WRITE_ONLY, NF_BTH_OP_WRITE_ONLY_IMM, NF_BTH_OP_READ_REQUEST,
    NF_BTH_OP_READ_FIRST, NF_BTH_OP_READ_MIDDLE, NF_BTH_OP_READ_LAST, NF_BTH_OP_READ_ONLY, NF_BTH_OP_ACK,
    NF_BTH_OP_ACK, NF_BTH_OP_ACK, NF_BTH_OP_ATOMIC_ACK, NF_BTH_OP_CMP_SWAP, NF_BTH_OP_FETCH_ADD,
    NF_BTH_OP_SEND_LAST_INV, NF_BTH_OP_SEND_ONLY_INV,
};
static const uint8_t syndromes[] = {NF_AETH_SYN_ACK, 0x00, 0x05, NF_AETH_SYN_RNR, 0x20, NF_AETH_SYN_NAK_PSN,
                                    NF_AETH_SYN_NAK_INVALID, NF_AETH_SYN_NAK_ACCESS, NF_AETH_SYN_NAK_OPERATIONAL,
                                    0x64, 0x40};
static const uint16_t lens[] = {0, 1, 3, 4, 5, MTU_MAX - 1, MTU_MAX, MTU_MAX + 1, 2 * MTU_MAX, 256, 60, 1440};

/* A RoCEv2 packet from the peer: opcode, QP, PSN near the expected one, extension
 * headers with fields aimed at the MR, payload length across the MTU; the mutation
 * bits break one thing each (P_Key, TVer, ICRC, pad count, UDP length). */
static void roce(struct rd *r)
{
    static uint8_t f[NF_NET_MAX_FRAME + 64];
    uint32_t qsel = u8(r), osel = u8(r), dpsn = u8(r), mut = u8(r), lsel = u16(r);
    uint32_t x0 = u32(r), x1 = u32(r), x2 = u32(r), fill = u8(r);
    uint32_t op = osel < 0xF0 ? rc_ops[osel % sizeof(rc_ops)] : (osel & 0x0F) << 4 | (x2 & 0x0F);
    uint32_t qi = qsel % 4, dqp = qi < NQP ? qpns[qi] : x2 >> 8;
    uint32_t q = dqp & ((1u << FW_QPN_GEN_SHIFT) - 1u);
    int resp = op >= NF_BTH_OP_READ_FIRST && op <= NF_BTH_OP_ATOMIC_ACK;
    if (qsel & 4)
        resp = !resp;
    uint32_t base = q < FW_QP_CAP ? (resp ? rc_qps[q].ack_psn : rc_qps[q].rq_psn) : x1;
    if (resp && (qsel & 8) && q < FW_QP_CAP)
        base = psn_add(rc_qps[q].sq_psn, NF_BTH_PSN_MASK); /* the newest PSN sent */
    uint32_t psn = psn_add(base, (uint32_t)(int32_t)(int8_t)dpsn);
    if (qsel & 0x10)
        psn = psn_add(base, (uint32_t)(int8_t)dpsn << 12 & NF_BTH_PSN_MASK);
    uint32_t plen = lsel & 0x8000 ? lens[lsel % (sizeof(lens) / sizeof(lens[0]))] : lsel & 0x7FF;

    size_t ext = 0;
    uint8_t *e = f + F_EXT;
    int reth = op == NF_BTH_OP_WRITE_FIRST || op == NF_BTH_OP_WRITE_ONLY || op == NF_BTH_OP_WRITE_ONLY_IMM ||
               op == NF_BTH_OP_READ_REQUEST;
    int aeth = op == NF_BTH_OP_READ_FIRST || op == NF_BTH_OP_READ_LAST || op == NF_BTH_OP_READ_ONLY ||
               op == NF_BTH_OP_ACK || op == NF_BTH_OP_ATOMIC_ACK;
    if (reth) {
        uint64_t va = qsel & 0x20 ? MR_VA + x0 % (3 * PG) : (uint64_t)x0 << 32 | x1;
        putbe32(e + NF_RETH_VA_OFF, (uint32_t)(va >> 32));
        putbe32(e + NF_RETH_VA_OFF + 4, (uint32_t)va);
        putbe32(e + NF_RETH_RKEY_OFF, qsel & 0x40 ? x1 : tokens[x1 & 1]);
        uint32_t dlen = x2 & 0x80000000u ? x2 : (x2 & 0x1000u ? plen : x2 % (WINDOW * 2 * MTU_MAX + 2));
        putbe32(e + NF_RETH_DMA_LEN_OFF, dlen);
        ext = NF_RETH_SIZE;
    } else if (aeth) {
        uint32_t syn = x0 & 0x100 ? x0 & 0xFF : syndromes[x0 % sizeof(syndromes)];
        putbe32(e + NF_AETH_SYNDROME_OFF, NF_AETH_SYNDROME_PUT(syn) | NF_AETH_MSN_PUT(x1));
        ext = NF_AETH_SIZE;
    }
    if (op == NF_BTH_OP_SEND_LAST_IMM || op == NF_BTH_OP_SEND_ONLY_IMM || op == NF_BTH_OP_WRITE_LAST_IMM ||
        op == NF_BTH_OP_WRITE_ONLY_IMM || op == NF_BTH_OP_SEND_LAST_INV || op == NF_BTH_OP_SEND_ONLY_INV) {
        /* ImmDt or IETH: one word each */
        putbe32(e + ext, op >= NF_BTH_OP_SEND_LAST_INV && !(qsel & 0x80) ? tokens[x2 & 1] : x2);
        ext += NF_IETH_SIZE;
    }
    int atomic = op == NF_BTH_OP_ATOMIC_ACK || op == NF_BTH_OP_CMP_SWAP || op == NF_BTH_OP_FETCH_ADD;
    if (atomic) { /* AtomicAckETH (8) or AtomicETH (28) */
        memset(e + ext, (int)fill, op == NF_BTH_OP_ATOMIC_ACK ? 8 : 28);
        ext += op == NF_BTH_OP_ATOMIC_ACK ? 8 : 28;
    }
    if (op == NF_BTH_OP_READ_REQUEST || op == NF_BTH_OP_ACK || atomic)
        plen = mut & 0x80 ? plen % 8 : 0;
    uint32_t pad = (0u - plen) & 3u;
    size_t room = NF_NET_MAX_FRAME - F_EXT - ext - NF_ROCE_ICRC_BYTES;
    if (plen + pad > room)
        plen = (uint32_t)(room & ~(size_t)3);
    pad = (0u - plen) & 3u;
    memset(e + ext, (int)fill, plen);
    memset(e + ext + plen, 0, pad);
    size_t ib = NF_BTH_SIZE + ext + plen + pad + NF_ROCE_ICRC_BYTES;
    uint8_t *b = f + F_BTH;
    putbe32(b + NF_BTH_OPCODE_OFF, NF_BTH_OPCODE_PUT(op) | NF_BTH_SE_PUT(mut & 1) | NF_BTH_MIG_PUT(mut >> 6 & 1) |
                                       NF_BTH_PAD_PUT(mut & 0x20 ? x2 >> 4 : pad) | NF_BTH_TVER_PUT(mut >> 3 & 1) |
                                       NF_BTH_PKEY_PUT(mut & 4 ? x1 >> 16 : NF_ROCE_PKEY_DEFAULT));
    putbe32(b + NF_BTH_DEST_QP_OFF, NF_BTH_DEST_QP_PUT(dqp));
    putbe32(b + NF_BTH_PSN_OFF, NF_BTH_ACKREQ_PUT(mut >> 1 & 1) | NF_BTH_PSN_PUT(psn));
    size_t n = eth_ip(f, NF_IPV4_PROTO_UDP, NF_UDP_SIZE + ib);
    uint8_t *u = f + F_UDP;
    put16(u + NF_UDP_SPORT_OFF, UDP_SPORT_BASE | (x0 & 0x3FFF));
    put16(u + NF_UDP_DPORT_OFF, NF_NET_ROCE_PORT);
    put16(u + NF_UDP_LEN_OFF, (uint32_t)(NF_UDP_SIZE + ib - (mut & 0x10 && (fill & 1) ? 4 : 0)));
    put16(u + NF_UDP_CSUM_OFF, 0);
    uint32_t icrc = 0;
    nf_net_icrc(f, n, &icrc);
    if (mut & 0x10 && !(fill & 1))
        icrc ^= 1u << (fill & 31);
    for (unsigned i = 0; i < 4; i++)
        f[n - 4 + i] = (uint8_t)(icrc >> (8 * i));
    roce_in++;
    inject(f, n);
}

/* A work request on a QP (mostly a wire one), its SGEs in the user region. */
static void host_wr(struct rd *r)
{
    static const uint16_t wops[] = {NF_OP_WR_SEND, NF_OP_WR_WRITE, NF_OP_WR_READ, NF_OP_WR_RECEIVE,
                                    NF_OP_WR_SEND_INVALIDATE, NF_OP_WR_SEND, NF_OP_WR_RECEIVE};
    uint32_t sel = u8(r), nsel = u8(r), flags = u8(r), va = u32(r), tok = u32(r);
    uint16_t op = wops[sel % (sizeof(wops) / sizeof(wops[0]))];
    uint8_t body[NF_WR_HDR_SIZE + NF_WR_RDMA_SIZE + NF_ADAPTER_MAX_SGE * NF_SGE_SIZE] = {0};
    if (next_wr >= MAX_WR)
        return;
    uint32_t qi = (sel >> 4) % 4 == 3 ? 2 : (sel >> 4) & 1;
    struct nf_wr_hdr h = {qpns[qi], ++next_wr, flags & 0x7u, 0};
    wr_qp[next_wr] = (uint8_t)qi;
    /* a silent success completes without a CQE: untracked like a receive */
    wr_recv[next_wr] = op == NF_OP_WR_RECEIVE || (h.flags & NF_NDK_OP_FLAG_SILENT_SUCCESS);
    memcpy(body, &h, sizeof(h));
    uint32_t max = op == NF_OP_WR_RECEIVE ? NF_ADAPTER_MAX_RECV_SGE : NF_ADAPTER_MAX_SGE;
    uint32_t nsge = nsel % (max + 1);
    size_t at = NF_WR_HDR_SIZE;
    if (op == NF_OP_WR_WRITE || op == NF_OP_WR_READ) {
        struct nf_wr_rdma d = {(uint64_t)va << (sel & 8 ? 12 : 0), tok, nsge};
        memcpy(body + at, &d, sizeof(d));
        at += sizeof(d);
    } else if (op == NF_OP_WR_RECEIVE) {
        struct nf_wr_receive d = {nsge, 0};
        memcpy(body + at, &d, sizeof(d));
        at += sizeof(d);
    } else {
        struct nf_wr_send d = {op == NF_OP_WR_SEND ? 0 : tok, nsge};
        memcpy(body + at, &d, sizeof(d));
        at += sizeof(d);
    }
    uint32_t ub = nf_hw_user_base();
    for (uint32_t k = 0; k < nsge; k++) {
        uint32_t a = u16(r), l = u16(r);
        struct nf_sge s = {ub + SGE_BASE + (a & 0x7FFF) * 8u, l & 0x8000 ? l & 0x7FFF : l % (3 * MTU_MAX + 2),
                           a & 0x8000 ? tokens[l & 1] : NF_ADAPTER_PRIVILEGED_TOKEN};
        if (a & 0x8000)
            s.addr = MR_VA + a % (2 * PG);
        memcpy(body + at, &s, sizeof(s));
        at += sizeof(s);
    }
    msg(op, body, at);
}

/* A timer pass or a few: ACK timeouts, retries, RNR waits and ARP retries fire. */
static void timer(struct rd *r)
{
    uint32_t k = u8(r), tick = nf_hw_cfg()->clk_hz >> 3;
    for (uint32_t i = 0; i <= (k & 7); i++) {
        nf_hw_advance(k & 0x80 ? tick * 4u : tick);
        run();
    }
}

static void arp_frame(struct rd *r)
{
    uint8_t a[60];
    uint32_t sel = u8(r), x = u32(r);
    arp_build(a, sel & 1 ? our_mac : bcast, 1 + (sel >> 1 & 1), peer_ip, NULL, our_ip);
    if (sel & 0x80)
        put16(a + 14, x >> 16); /* another hardware type */
    if (sel & 0x40)
        a[19] = (uint8_t)x; /* another protocol address length */
    if (sel & 0x20)
        a[27] = (uint8_t)x; /* another sender MAC: the cache may change */
    if (sel & 0x10)
        a[31] = (uint8_t)(x >> 8);
    if (sel & 8)
        a[41] = (uint8_t)(x >> 24);
    inject(a, 60);
}

/* ICMP to us or raw bytes: as frames for our MAC with a valid IPv4 header or as they are. */
static void other_frame(struct rd *r)
{
    static uint8_t f[NF_NET_MAX_FRAME];
    uint32_t sel = u8(r), len = u16(r) % (NF_NET_MAX_FRAME + 1);
    memset(f, 0, sizeof(f));
    for (uint32_t i = 0; i < len && r->at < r->n; i++)
        f[i] = (uint8_t)u8(r);
    if (sel & 1) {
        size_t pl = len > 42 ? len - 34 : 8;
        uint32_t proto = sel & 2 ? 1 : sel & 4 ? NF_IPV4_PROTO_UDP : f[23];
        uint8_t keep[NF_NET_MAX_FRAME];
        memcpy(keep, f + 34, pl);
        size_t n = eth_ip(f, proto, pl);
        memcpy(f + 34, keep, pl);
        if (proto == 1 && (sel & 8)) {
            f[34] = 8;
            f[35] = 0;
            put16(f + 36, 0);
            put16(f + 36, tb_ip_csum(f + 34, pl));
        }
        if (sel & 0x10) {
            f[F_IP + 6] = (uint8_t)(sel & 0xE0); /* fragments and reserved flags */
            put16(f + F_IP + 10, 0);
            put16(f + F_IP + 10, tb_ip_csum(f + F_IP, 20));
        }
        len = (uint32_t)n;
    } else if (len >= 14 && (sel & 2)) {
        memcpy(f, our_mac, 6);
    }
    inject(f, len < 14 ? 14 : len);
}

/* Connection and port control: flush, disconnect, reconnect over the wire (to the
 * peer, or to a neighbour nobody answers for), a new MAC, TX slots held busy, a PING. */
static void control(struct rd *r)
{
    uint32_t sel = u8(r), x = u32(r);
    uint32_t qpn = qpns[(sel >> 4) % NQP];
    switch (sel % 8) {
    case 0: {
        struct nf_qp_req q = {qpn, 0};
        msg(NF_OP_QP_FLUSH, &q, sizeof(q));
        break;
    }
    case 1: {
        struct nf_qp_req q = {qpn, 0};
        msg(NF_OP_QP_DISCONNECT, &q, sizeof(q));
        break;
    }
    case 2: {
        /* path MTU: 0 (the largest), each one taken, and values past the largest (refused) */
        struct nf_qp_connect_wire_req c = {qpn, peer_qpn[x & 1], ip_word(peer_ip), x >> 8 & NF_BTH_PSN_MASK,
                                           x & NF_BTH_PSN_MASK, x >> 29};
        msg(NF_OP_QP_CONNECT_WIRE, &c, sizeof(c));
        break;
    }
    case 3: {
        uint8_t ip[4] = {our_ip[0], our_ip[1], our_ip[2], (uint8_t)(x >> 24)};
        struct nf_qp_connect_wire_req c = {qpn, x & NF_BTH_DEST_QP_MASK, ip_word(ip), x >> 4 & NF_BTH_PSN_MASK,
                                           x & NF_BTH_PSN_MASK, 0};
        msg(NF_OP_QP_CONNECT_WIRE, &c, sizeof(c));
        break;
    }
    case 4: {
        /* a unicast MAC of the fuzzer's (or a refused one): frames follow what is set */
        struct nf_net_config_req nc = {NF_NET_CONFIG_FLAG_MAC, 0, 0, 0, x & 0xFFFFFFFEu, sel >> 3};
        struct nf_net_config_rep rep = {0, 0, 0, 0, 0, 0};
        if (tb_req(NF_OP_NET_CONFIG, &nc, sizeof(nc), &rep, sizeof(rep)) == NF_STATUS_SUCCESS) {
            for (int i = 0; i < 4; i++)
                our_mac[i] = (uint8_t)(rep.mac_lo >> (8 * i));
            our_mac[4] = (uint8_t)rep.mac_hi;
            our_mac[5] = (uint8_t)(rep.mac_hi >> 8);
        }
        check_msgs();
        drain();
        break;
    }
    case 5:
        nf_hw_net_tx_busy(x & 0xFu); /* until the next such record */
        run();
        break;
    default:
        if (msg(NF_OP_PING, NULL, 0) != NF_STATUS_SUCCESS)
            fail("a PING went unanswered");
        break;
    }
}

static void setup(struct rd *r)
{
    if (tb_init("sim"))
        fail("tb_init");
    nfm_set_chunk_hook(nf_hw_engine(), chunk_hook, NULL);
    nf_hw_net_seed(0xA1B2C3D4u);
    fw_net_init();
    next_wr = 0;
    memset(completed, 0, sizeof(completed));
    memset(wr_recv, 1, sizeof(wr_recv));
    struct nf_net_config_req nc = {NF_NET_CONFIG_FLAG_ADDR, ip_word(our_ip), 0x00FFFFFFu, 0, 0, 0};
    struct nf_net_config_rep rep = {0, 0, 0, 0, 0, 0};
    if (tb_req(NF_OP_NET_CONFIG, &nc, sizeof(nc), &rep, sizeof(rep)) != NF_STATUS_SUCCESS)
        fail("setup: NET_CONFIG");
    for (int i = 0; i < 4; i++)
        our_mac[i] = (uint8_t)(rep.mac_lo >> (8 * i));
    our_mac[4] = (uint8_t)rep.mac_hi;
    our_mac[5] = (uint8_t)(rep.mac_hi >> 8);
    uint8_t rbuf[16];
    for (int i = 0; i < NQP; i++) {
        struct nf_qp_create_req q = {1, 16, 8, NF_ADAPTER_MAX_RECV_SGE};
        if (tb_req(NF_OP_QP_CREATE, &q, sizeof(q), rbuf, sizeof(rbuf)) != NF_STATUS_SUCCESS)
            fail("setup: QP_CREATE");
        memcpy(&qpns[i], rbuf + NF_QP_CREATE_REP_QPN_OFF, 4);
    }
    for (int i = 0; i < 2; i++) {
        struct nf_mr_create_req q = {1, 0};
        if (tb_req(NF_OP_MR_CREATE, &q, sizeof(q), rbuf, sizeof(rbuf)) != NF_STATUS_SUCCESS)
            fail("setup: MR_CREATE");
        memcpy(&tokens[i], rbuf + NF_MR_CREATE_REP_TOKEN_OFF, 4);
    }
    /* token 0: remote write and read over two user pages at MR_VA; token 1 unregistered */
    uint32_t ub = nf_hw_user_base();
    uint8_t body[64];
    struct nf_mr_register_req mr = {tokens[0], NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NF_NDK_MR_FLAG_ALLOW_REMOTE_READ,
                                    MR_VA, 2 * PG, 0, 2};
    uint64_t pages[2] = {ub + PG, ub + 3 * PG};
    memcpy(body, &mr, sizeof(mr));
    memcpy(body + sizeof(mr), pages, sizeof(pages));
    if (tb_req(NF_OP_MR_REGISTER, body, sizeof(mr) + sizeof(pages), NULL, 0) != NF_STATUS_SUCCESS)
        fail("setup: MR_REGISTER");
    /* The setup byte: learn the peer from its ARP request first, or let the connect
     * resolve it (the harness answers the firmware's request). */
    uint32_t s = u8(r), sq = u16(r) | u8(r) << 16, rq = u16(r) | u8(r) << 16;
    if (s & 1) {
        uint8_t a[60];
        arp_build(a, bcast, 1, peer_ip, NULL, our_ip);
        inject(a, 60);
    }
    for (int i = 0; i < NWIRE; i++) {
        struct nf_qp_connect_wire_req c = {qpns[i], peer_qpn[i], ip_word(peer_ip), psn_add(sq, (uint32_t)i),
                                           psn_add(rq, (uint32_t)i << 4), 0};
        uint32_t st = NF_STATUS_PENDING;
        for (int k = 0; k < 3 && st == NF_STATUS_PENDING; k++)
            st = msg(NF_OP_QP_CONNECT_WIRE, &c, sizeof(c));
        if (st != NF_STATUS_SUCCESS)
            fail("setup: QP_CONNECT_WIRE");
    }
    /* a receive on each wire QP so the first Send lands */
    for (int i = 0; i < NWIRE; i++) {
        struct {
            struct nf_wr_hdr h;
            struct nf_wr_receive r;
            struct nf_sge sge;
        } rcv = {{qpns[i], ++next_wr, 0, 0}, {1, 0}, {ub + 8 * PG, 4 * MTU_MAX, NF_ADAPTER_PRIVILEGED_TOKEN}};
        msg(NF_OP_WR_RECEIVE, &rcv, sizeof(rcv));
    }
}

static void print_stats(void)
{
    fprintf(stderr, "fuzz_fw_net: %lu RoCE frames in, %lu out, %lu CQEs\n", roce_in, roce_out, cqes);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    trace = getenv("FUZZ_TRACE") != NULL;
    if (getenv("FUZZ_STATS"))
        atexit(print_stats);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rd r = {data, size, 0};
    setup(&r);
    while (r.at < r.n) {
        switch (u8(&r) % 10) {
        case 0: case 1: case 2: case 3: roce(&r); break;
        case 4: case 5: host_wr(&r); break;
        case 6: timer(&r); break;
        case 7: arp_frame(&r); break;
        case 8: other_frame(&r); break;
        default: control(&r); break;
        }
    }
    if (msg(NF_OP_PING, NULL, 0) != NF_STATUS_SUCCESS)
        fail("a PING went unanswered after the input");
    /* A flush ends every QP's requests: each send-side work request has completed (a
     * disconnect completed those queued then) once the flush and a timer pass have run. */
    nf_hw_net_tx_busy(0);
    for (int i = 0; i < NQP; i++) {
        struct nf_qp_req q = {qpns[i], 0};
        msg(NF_OP_QP_FLUSH, &q, sizeof(q));
    }
    timer(&(struct rd){NULL, 0, 0});
    for (uint32_t w = 1; w <= next_wr; w++)
        if (!wr_recv[w] && !completed[w]) {
            fprintf(stderr, "fuzz_fw_net: wr_id %u on QP %u never completed\n", w, wr_qp[w]);
            fail("a work request never completed after a flush");
        }
    return 0;
}
