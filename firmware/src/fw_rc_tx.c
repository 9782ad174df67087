/* SPDX-License-Identifier: Apache-2.0 */
/* The RC transport's sending side (fw_rc_int.h): a packet's headers written into a TX
 * slot, its payload gathered by the engine through the key check, ACKs and NAKs, READ
 * responses, and the pump that sends what each QP may send as TX slots free up.
 * Layer: called by fw_rc.c; calls fw_net, fw_wr_common, fw_tables and fw_state. */
#include "fw_rc_int.h"
#include "fw_wr_int.h"
#include "hal.h"

/* Outside the data cache's stretch (link.ld): the transport's state is large and cold
 * next to the work-request path's. */
struct rc_qp rc_qps[FW_QP_CAP] __attribute__((section(".noinit.rc")));

/* Header bytes of a frame as slot words from slot byte NF_NET_FRAME_OFF - 2 on. */
#define HB(k) ((k) + 2u)
#define HDR_MAX (F_EXT + NF_RETH_SIZE)
static void put8(uint8_t *b, uint32_t k, uint32_t v) { b[HB(k)] = (uint8_t)v; }
static void put16(uint8_t *b, uint32_t k, uint32_t v) { put8(b, k, v >> 8), put8(b, k + 1u, v); }
static void put32(uint8_t *b, uint32_t k, uint32_t v) { put16(b, k, v >> 16), put16(b, k + 2u, v); }
static void put_word(uint8_t *b, uint32_t k, uint32_t w) /* a word kept as wire bytes, first in [7:0] */
{
    for (uint32_t i = 0; i < 4u; i++)
        put8(b, k + i, w >> (8u * i));
}

/* One SGE list's bytes [off, off + n) to (to_list 0) or from (1) adapter address sys,
 * one engine DMA per SGE piece, each checked by the key check. REFUSE code. */
uint32_t sgl_dma(const struct rc_sgl *l, uint32_t off, uint32_t sys, uint32_t n, int to_list)
{
    for (uint32_t k = 0; k < l->n && n; k++) {
        if (off >= l->len[k]) {
            off -= l->len[k];
            continue;
        }
        uint32_t piece = min32(l->len[k] - off, n);
        struct fw_dma_side s, m = {NF_DMA_MODE_SYSTEM, 0, 0, 0, sys};
        wr_local_side(&s, l->addr[k] + off, l->token[k], l->pd, l->access);
        if (s.addr < l->addr[k])
            return NF_REFUSE_OUT_OF_BOUNDS; /* the SGE's range wraps */
        uint32_t code = NF_STATUS_WORD_CODE_GET(to_list ? fw_dma(&m, &s, piece, 0) : fw_dma(&s, &m, piece, 0));
        if (code != NF_REFUSE_OK)
            return code;
        sys += piece;
        n -= piece;
        off = 0;
    }
    return n ? NF_REFUSE_OUT_OF_BOUNDS : NF_REFUSE_OK;
}

/* A remote range (R_Key token, va) to or from adapter address sys, checked for access
 * with the QP's PD. REFUSE code. */
uint32_t remote_dma(uint32_t pd, uint32_t token, uint64_t va, uint32_t access, uint32_t sys, uint32_t n,
                           int to_remote)
{
    if (n == 0)
        return NF_REFUSE_OK;
    struct fw_dma_side r = {NF_DMA_MODE_TOKEN, access, token, pd, va};
    struct fw_dma_side m = {NF_DMA_MODE_SYSTEM, 0, 0, 0, sys};
    if (va + n < va)
        return NF_REFUSE_OUT_OF_BOUNDS;
    return NF_STATUS_WORD_CODE_GET(to_remote ? fw_dma(&m, &r, n, 0) : fw_dma(&r, &m, n, 0));
}

/* Write the headers of a packet to QP d->qpn at d's address (UDP source port sport)
 * into the TX slot at, for ext extension bytes (already in b from F_EXT) and len
 * payload bytes; the frame's length. */
static uint32_t put_frame(uint32_t at, uint8_t *b, const struct fw_rc_dest *c, uint32_t sport, uint32_t opcode,
                          uint32_t psn, uint32_t ackreq, uint32_t se, uint32_t ext, uint32_t len)
{
    uint32_t self[3], pad = (0u - len) & 3u;
    uint32_t ib = NF_BTH_SIZE + ext + len + pad + NF_ROCE_ICRC_BYTES;
    fw_net_self(self);
    put_word(b, NF_ETH_DST_OFF, c->mac_lo);
    put16(b, NF_ETH_DST_OFF + 4u, (c->mac_hi & 0xFFu) << 8 | (c->mac_hi >> 8 & 0xFFu));
    put_word(b, NF_ETH_SRC_OFF, self[1]);
    put16(b, NF_ETH_SRC_OFF + 4u, (self[2] & 0xFFu) << 8 | (self[2] >> 8 & 0xFFu));
    put16(b, NF_ETH_TYPE_OFF, NF_IPV4_ETHERTYPE);
    put8(b, F_IP + NF_IPV4_VER_IHL_OFF, NF_IPV4_VER_IHL);
    /* the port writes the total length too, with the checksum */
    put16(b, F_IP + NF_IPV4_TOTAL_LEN_OFF, NF_IPV4_SIZE + NF_UDP_SIZE + ib);
    put16(b, F_IP + NF_IPV4_DF_OFF, NF_IPV4_DF_MASK);
    put8(b, F_IP + NF_IPV4_TTL_OFF, IP_TTL);
    put8(b, F_IP + NF_IPV4_PROTO_OFF, NF_IPV4_PROTO_UDP);
    put_word(b, F_IP + NF_IPV4_SRC_OFF, self[0]);
    put_word(b, F_IP + NF_IPV4_DST_OFF, c->ip);
    put16(b, F_UDP + NF_UDP_SPORT_OFF, sport);
    put16(b, F_UDP + NF_UDP_DPORT_OFF, NF_NET_ROCE_PORT);
    put16(b, F_UDP + NF_UDP_LEN_OFF, NF_UDP_SIZE + ib); /* no UDP checksum, as RoCEv2 allows */
    put32(b, F_BTH + NF_BTH_OPCODE_OFF, NF_BTH_OPCODE_PUT(opcode) | NF_BTH_SE_PUT(se) | NF_BTH_PAD_PUT(pad) |
                                            NF_BTH_PKEY_PUT(NF_ROCE_PKEY_DEFAULT));
    put32(b, F_BTH + NF_BTH_DEST_QP_OFF, NF_BTH_DEST_QP_PUT(c->qpn)); /* FECN, BECN 0 */
    put32(b, F_BTH + NF_BTH_PSN_OFF, NF_BTH_ACKREQ_PUT(ackreq) | NF_BTH_PSN_PUT(psn));
    hal_win w = mem_win(at + NF_NET_FRAME_OFF - 2u);
    uint32_t words = (HB(F_EXT + ext) + 3u) / 4u;
    for (uint32_t i = 0; i < words; i++)
        win_wr(w, 4u * i, b[4u * i] | (uint32_t)b[4u * i + 1u] << 8 | (uint32_t)b[4u * i + 2u] << 16 |
                              (uint32_t)b[4u * i + 3u] << 24);
    if (pad) /* the pad bytes are zero (the ICRC covers them); the payload lands over the rest */
        mem_wr(at + NF_NET_FRAME_OFF + F_EXT + ext + (len & ~3u), 0);
    return F_EXT + ext + len + pad + NF_ROCE_ICRC_BYTES;
}

/* put_frame to QP q's peer. */
static uint32_t put_headers(uint32_t at, uint8_t *b, uint32_t q, uint32_t opcode, uint32_t psn, uint32_t ackreq,
                            uint32_t se, uint32_t ext, uint32_t len)
{
    const struct rc_qp *c = &rc_qps[q];
    const struct fw_rc_dest d = {c->peer_ip, c->mac_lo, c->mac_hi, c->peer_qpn};
    return put_frame(at, b, &d, UDP_SPORT_BASE | (qpn_of(q) & 0x3FFFu), opcode, psn, ackreq, se, ext, len);
}

int fw_rc_send_ud(const struct fw_rc_dest *d, const uint8_t *data, uint32_t len)
{
    uint32_t slot, at = fw_net_tx_free(&slot);
    if (!at)
        return 0;
    uint8_t b[HB(F_EXT + NF_DETH_SIZE) + 4u] = {0};
    put32(b, F_EXT + NF_DETH_QKEY_OFF, NF_ROCE_GSI_QKEY);
    put32(b, F_EXT + NF_DETH_SRC_QP_OFF, NF_DETH_SRC_QP_PUT(NF_ROCE_GSI_QPN));
    uint32_t flen =
        put_frame(at, b, d, UDP_SPORT_BASE | NF_ROCE_GSI_QPN, NF_BTH_OP_UD_SEND_ONLY, 0, 0, 0, NF_DETH_SIZE, len);
    uint32_t p = at + NF_NET_FRAME_OFF + F_EXT + NF_DETH_SIZE;
    for (uint32_t i = 0; i < len; i += 4u)
        mem_wr(p + i, data[i] | (uint32_t)data[i + 1u] << 8 | (uint32_t)data[i + 2u] << 16 |
                          (uint32_t)data[i + 3u] << 24);
    fw_net_tx_post(slot, flen);
    return 1;
}

/* An ACK or NAK (syndrome syn, PSN psn) on QP q; 0 when no TX slot is free. */
static __attribute__((noinline)) int send_ctl(uint32_t q, uint32_t syn, uint32_t psn)
{
    uint32_t slot, at = fw_net_tx_free(&slot);
    if (!at)
        return 0;
    uint8_t b[HB(HDR_MAX) + 4u] = {0};
    put32(b, F_EXT + NF_AETH_SYNDROME_OFF, NF_AETH_SYNDROME_PUT(syn) | NF_AETH_MSN_PUT(rc_qps[q].msn));
    fw_net_tx_post(slot, put_headers(at, b, q, NF_BTH_OP_ACK, psn, 0, 0, NF_AETH_SIZE, 0));
    return 1;
}

/* The responses READ w's request from response k asks for: up to the next multiple of
 * WINDOW (fixed boundaries, so a request sent again repeats a subset). */
static uint32_t read_window(const struct rc_wqe *w, uint32_t k)
{
    return min32(w->npkts - k, WINDOW - k % WINDOW);
}

/* Packet k of a queued request (for a READ: the request for responses k on); the
 * packets (PSNs) it covers, 0 when no TX slot is free. A local refusal of its gather is
 * kept in the request (w->fail) and sends nothing more of it. */
static __attribute__((noinline)) uint32_t send_packet(uint32_t q, struct rc_wqe *w, uint32_t k)
{
    uint32_t slot, at = fw_net_tx_free(&slot);
    if (!at)
        return 0;
    uint8_t b[HB(HDR_MAX) + 4u] = {0};
    uint32_t shift = rc_qps[q].mtu_shift;
    uint32_t off = k << shift, len = w->op == NF_OP_WR_READ ? 0u : min32(w->total - off, 1u << shift);
    uint32_t first = k == 0, last = k + 1u >= w->npkts, ext = 0, opcode, se = 0;
    uint64_t va = w->remote_va;
    uint32_t rlen = w->total, psn = psn_add(w->psn, k);
    if (w->op == NF_OP_WR_READ) {
        /* a request for responses k up to the next multiple of WINDOW: one sent again
         * after a loss stays within the PSNs of the one it repeats (the responder
         * answers it as a duplicate, and the next request follows at its ePSN) */
        opcode = NF_BTH_OP_READ_REQUEST;
        first = last = 1;
        va += off;
        rlen = min32(w->total - min32(off, w->total), (WINDOW - k % WINDOW) << shift);
    } else if (w->op == NF_OP_WR_WRITE) {
        opcode = first && last ? NF_BTH_OP_WRITE_ONLY
                 : first       ? NF_BTH_OP_WRITE_FIRST
                 : last        ? NF_BTH_OP_WRITE_LAST
                               : NF_BTH_OP_WRITE_MIDDLE;
    } else {
        int inv = w->op == NF_OP_WR_SEND_INVALIDATE;
        opcode = first && last ? (inv ? NF_BTH_OP_SEND_ONLY_INV : NF_BTH_OP_SEND_ONLY)
                 : first       ? NF_BTH_OP_SEND_FIRST
                 : last        ? (inv ? NF_BTH_OP_SEND_LAST_INV : NF_BTH_OP_SEND_LAST)
                               : NF_BTH_OP_SEND_MIDDLE;
        if (last && inv) {
            put32(b, F_EXT + NF_IETH_RKEY_OFF, w->inv_token);
            ext = NF_IETH_SIZE;
        }
        se = last && (w->flags & NF_NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT) != 0;
    }
    if (first && w->op != NF_OP_WR_SEND && w->op != NF_OP_WR_SEND_INVALIDATE) {
        put32(b, F_EXT + NF_RETH_VA_OFF, (uint32_t)(va >> 32));
        put32(b, F_EXT + NF_RETH_VA_OFF + 4u, (uint32_t)va);
        put32(b, F_EXT + NF_RETH_RKEY_OFF, w->remote_token);
        put32(b, F_EXT + NF_RETH_DMA_LEN_OFF, rlen);
        ext = NF_RETH_SIZE;
    }
    uint32_t ackreq = last || (psn & (ACKREQ_EVERY - 1u)) == ACKREQ_EVERY - 1u;
    uint32_t flen = put_headers(at, b, q, opcode, psn, ackreq, se, ext, len);
    uint32_t code = len ? sgl_dma(&w->sgl, off, at + NF_NET_FRAME_OFF + F_EXT + ext, len, 0) : NF_REFUSE_OK;
    if (code != NF_REFUSE_OK) {
        w->fail = fw_eng_failed(code, NF_STATUS_ACCESS_VIOLATION);
        w->refuse = code;
        fw_qps[q].state = FW_QP_ERROR; /* its queued requests complete in order: flush_errors */
        return 1;
    }
    fw_net_tx_post(slot, flen);
    return w->op == NF_OP_WR_READ ? read_window(w, k) : 1u;
}

/* The next response packet of READ r on QP q; 0 when no TX slot is free. A refusal by
 * the key check NAKs the READ (remote access error) and breaks the QP. */
static __attribute__((noinline)) int send_response(uint32_t q, struct rc_read *r)
{
    uint32_t slot, at = fw_net_tx_free(&slot);
    if (!at)
        return 0;
    uint8_t b[HB(HDR_MAX) + 4u] = {0};
    uint32_t shift = rc_qps[q].mtu_shift;
    uint32_t k = r->sent, off = k << shift, len = min32(r->len - off, 1u << shift);
    uint32_t first = k == 0, last = k + 1u >= r->npkts, ext = 0;
    uint32_t opcode = first && last ? NF_BTH_OP_READ_ONLY
                      : first       ? NF_BTH_OP_READ_FIRST
                      : last        ? NF_BTH_OP_READ_LAST
                                    : NF_BTH_OP_READ_MIDDLE;
    if (first || last) {
        put32(b, F_EXT + NF_AETH_SYNDROME_OFF, NF_AETH_SYNDROME_PUT(NF_AETH_SYN_ACK) | NF_AETH_MSN_PUT(rc_qps[q].msn));
        ext = NF_AETH_SIZE;
    }
    uint32_t flen = put_headers(at, b, q, opcode, psn_add(r->psn, k), 0, 0, ext, len);
    uint32_t code = remote_dma(fw_qps[q].pd, r->token, r->va + off, NF_ACCESS_REMOTE_READ,
                               at + NF_NET_FRAME_OFF + F_EXT + ext, len, 0);
    if (code != NF_REFUSE_OK) {
        refuse(q, NF_AETH_SYN_NAK_ACCESS, r->psn);
        rc_qps[q].rd_count = 0;
        return 1;
    }
    fw_net_tx_post(slot, flen);
    r->sent++;
    return 1;
}

/* Send what QP q may send now: an owed ACK or NAK, READ responses, then requests.
 * Nonzero when something waits for a TX slot. */
/* Whether READ w may ask for responses from k now: with those the READs sent whole still
 * wait for, at most WINDOW (several READs never outrun the RX slots), and at most rd_max
 * READs out (the initiator depth agreed). */
static int read_may_go(const struct rc_qp *c, const struct rc_wqe *w, uint32_t k)
{
    uint32_t responses = read_window(w, k), reads = 1;
    for (uint32_t i = 0; i < c->sent; i++) {
        const struct rc_wqe *e = &c->wq[(c->head + i) % SQ_DEPTH];
        if (e->op == NF_OP_WR_READ && e->done < e->npkts) {
            responses += e->npkts - e->done;
            reads++;
        }
    }
    return responses <= WINDOW && reads <= c->rd_max;
}

int pump(uint32_t q)
{
    struct rc_qp *c = &rc_qps[q];
    if (c->ctl_owed) {
        if (!send_ctl(q, c->ctl_syn, c->ctl_psn))
            return 1;
        c->ctl_owed = 0;
    }
    while (c->rd_count) {
        struct rc_read *r = &c->rd[c->rd_head];
        if (r->sent >= r->npkts) {
            c->rd_head = (c->rd_head + 1u) % RD_DEPTH;
            c->rd_count--;
            continue;
        }
        if (!send_response(q, r))
            return 1;
    }
    if (fw_qps[q].state != FW_QP_CONNECTED || (c->waits & RNR_WAIT))
        return 0;
    while (c->sent < c->count) {
        struct rc_wqe *w = &c->wq[(c->head + c->sent) % SQ_DEPTH];
        if (w->fail)
            return 0; /* nothing after a request that failed here is sent */
        if (w->op == NF_OP_WR_READ ? w->done < c->send_pkt || !read_may_go(c, w, c->send_pkt)
                                   : psn_diff(psn_add(w->psn, c->send_pkt), c->ack_psn) >= (int32_t)WINDOW)
            return 0; /* the window is full: an ACK or the responses asked for open it */
        uint32_t n = send_packet(q, w, c->send_pkt);
        if (!n)
            return 1;
        c->send_pkt += n;
        if (!w->fail && c->send_pkt >= w->npkts) {
            c->sent++;
            c->send_pkt = 0;
        }
    }
    return 0;
}

void refuse(uint32_t q, uint32_t syn, uint32_t psn)
{
    struct rc_qp *c = &rc_qps[q];
    c->fatal_syn = syn;
    c->fatal_psn = psn;
    c->ctl_syn = syn;
    c->ctl_psn = psn;
    c->ctl_owed = 1;
    fw_qps[q].state = FW_QP_ERROR;
}

/* Owe an ACK or NAK; sent now if a TX slot is free. */
void reply_ctl(uint32_t q, uint32_t syn, uint32_t psn)
{
    struct rc_qp *c = &rc_qps[q];
    c->ctl_syn = syn;
    c->ctl_psn = psn;
    c->ctl_owed = 1;
    (void)pump(q);
}
