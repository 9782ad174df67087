/* SPDX-License-Identifier: Apache-2.0 */
/* The RoCEv2 RC transport (fw_rc.h), both ends of a connection.
 * Requester: a work request is queued on its QP with its SGEs and PSN range; the pump
 * sends its packets (the engine gathers each payload into a TX slot through the key
 * check) as TX slots free up; an ACK completes the requests it covers, in order; a NAK
 * or the ACK timeout goes back to the oldest unacknowledged request and sends it again,
 * gathered again from the source (no copy is kept), up to RETRY_MAX times.
 * Responder: packets are taken in PSN order; a SEND's payload is scattered into the
 * oldest receive, a WRITE's into the R_Key's range, a READ is answered from it, each by
 * the engine from or into the RX or TX slot; duplicates are acknowledged again (a READ
 * runs again), a gap is NAKed once.
 * Wire facts: the project's RoCE facts sheet (headers, opcodes, AETH, PSN rules).
 * Layer: called by fw_main, fw_msg and fw_wr; calls fw_net, fw_wr_common, fw_tables,
 * fw_state. */
#include "fw_rc.h"
#include "fw_net.h"
#include "fw_state.h"
#include "fw_tables.h"
#include "fw_wr_int.h"
#include "hal.h"

/* Frame byte offsets: Ethernet, IPv4 (20, no options), UDP, BTH, then the extension
 * headers; slot byte = frame byte + NF_NET_FRAME_OFF, so the BTH and payloads are word
 * aligned in the slot. */
#define F_IP 14u
#define F_UDP 34u
#define F_BTH 42u
#define F_EXT 54u
#define BTH_BYTES 12u
#define RETH_BYTES 16u
#define AETH_BYTES 4u
#define IETH_BYTES 4u
#define ICRC_BYTES 4u
#define IP_TTL 64u
#define IP_PROTO_UDP 17u
#define IP_DF 0x4000u
#define UDP_SPORT_BASE 0xC000u /* the source port is flow entropy: constant per QP */
#define PKEY_DEFAULT 0xFFFFu
#define PSN_MASK 0xFFFFFFu
/* The path MTU: payload bytes per packet (the 1500-byte Ethernet MTU carries 1024). */
#define MTU_SHIFT 10u
#define MTU (1u << MTU_SHIFT)
_Static_assert(F_EXT + RETH_BYTES + MTU + ICRC_BYTES <= NF_NET_MAX_FRAME, "a full packet fits a frame");
_Static_assert(((NF_NET_FRAME_OFF + F_BTH) & 3u) == 0u, "the BTH is word aligned in its slot");

/* RC opcodes (BTH byte 0). */
enum {
    OP_SEND_FIRST = 0x00, OP_SEND_MIDDLE = 0x01, OP_SEND_LAST = 0x02, OP_SEND_ONLY = 0x04,
    OP_WRITE_FIRST = 0x06, OP_WRITE_MIDDLE = 0x07, OP_WRITE_LAST = 0x08, OP_WRITE_ONLY = 0x0A,
    OP_READ_REQUEST = 0x0C, OP_READ_FIRST = 0x0D, OP_READ_MIDDLE = 0x0E, OP_READ_LAST = 0x0F,
    OP_READ_ONLY = 0x10, OP_ACK = 0x11, OP_SEND_LAST_INV = 0x16, OP_SEND_ONLY_INV = 0x17,
};
/* AETH syndromes: an ACK (no credit count), an RNR NAK (timer code 0x0E: 1.28 ms), NAKs. */
#define SYN_ACK 0x1Fu
#define SYN_RNR 0x2Eu
#define SYN_TYPE_MASK 0x60u
#define SYN_TYPE_RNR 0x20u
#define SYN_TYPE_NAK 0x60u
#define SYN_NAK_PSN 0x60u
#define SYN_NAK_INVALID 0x61u
#define SYN_NAK_ACCESS 0x62u
#define SYN_NAK_OPERATIONAL 0x63u

/* Queue sizes: requests a QP may have outstanding, READs a responder answers at once. */
#define SQ_DEPTH 16u
#define RD_DEPTH 4u
#define RETRY_MAX 7u      /* timeouts and sequence NAKs in a row, then IO_TIMEOUT */
#define RNR_RETRY_MAX 7u  /* RNR NAKs in a row, then IO_TIMEOUT */
#define ACK_TIMEOUT_TICKS 2u /* timer passes (fw_net_tick) without progress */
#define ACKREQ_EVERY 32u  /* AckReq also on every 32nd packet of a long message */
#define SPIN_CYCLES 512u  /* the idle sleep while a QP waits for a TX slot */

struct rc_sgl {
    uint64_t addr[NF_ADAPTER_MAX_SGE];
    uint32_t len[NF_ADAPTER_MAX_SGE], token[NF_ADAPTER_MAX_SGE];
    uint32_t n, pd, access;
};
_Static_assert(NF_ADAPTER_MAX_RECV_SGE <= NF_ADAPTER_MAX_SGE, "a receive's SGEs fit an SGE list");

/* A queued work request: PSNs psn .. psn + npkts - 1 (a READ's responses use them). */
struct rc_wqe {
    uint32_t op, wr_id, flags, psn, npkts, total;
    uint32_t remote_token, inv_token, done; /* done: READ response packets placed */
    uint32_t fail, refuse;                  /* a local failure found while sending */
    uint64_t remote_va;
    struct rc_sgl sgl;
};

/* A READ the responder answers: response packets sent so far of npkts. */
struct rc_read {
    uint32_t psn, npkts, sent, len, token;
    uint64_t va;
};

struct rc_qp {
    uint32_t peer_ip, mac_lo, mac_hi, peer_qpn;
    /* requester: next new PSN; queued requests from head, the first `sent` of them sent
     * whole and the next one up to send_pkt packets */
    uint32_t sq_psn, head, count, sent, send_pkt;
    uint32_t retries, rnr_retries, ticks;
    /* responder: expected PSN, message count, the message being received */
    uint32_t rq_psn, msn, nak_sent;
    uint32_t recv_off, recv_in, recv_bad;
    uint64_t w_va;
    uint32_t w_token, w_left, w_in;
    uint32_t ctl_syn, ctl_psn, ctl_owed; /* an ACK or NAK to send */
    uint32_t rd_head, rd_count;
    struct rc_read rd[RD_DEPTH];
    struct rc_wqe wq[SQ_DEPTH];
};

/* Outside the data cache's stretch (link.ld): the transport's state is large and cold
 * next to the work-request path's. */
static struct rc_qp rc[FW_QP_CAP] __attribute__((section(".noinit.rc")));
static const struct fw_reply_ops *events;
static uint32_t tick_at;
static int waiting; /* a QP waits for a TX slot */

#define CQE_MSG (NF_MSG_HDR_SIZE + NF_CQE_SIZE)

static uint32_t psn_add(uint32_t a, uint32_t n) { return (a + n) & PSN_MASK; }
/* a - b as a signed 24-bit distance. */
static int32_t psn_diff(uint32_t a, uint32_t b) { return (int32_t)((a - b) << 8) >> 8; }
static uint32_t qpn_of(uint32_t q) { return (uint32_t)fw_qps[q].gen << FW_QPN_GEN_SHIFT | q; }
static uint32_t be32(uint32_t v) { return v << 24 | (v & 0xFF00u) << 8 | (v >> 8 & 0xFF00u) | v >> 24; }
static uint32_t min32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* Header bytes of a frame as slot words from slot byte NF_NET_FRAME_OFF - 2 on. */
#define HB(k) ((k) + 2u)
#define HDR_MAX (F_EXT + RETH_BYTES)
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
static uint32_t sgl_dma(const struct rc_sgl *l, uint32_t off, uint32_t sys, uint32_t n, int to_list)
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
static uint32_t remote_dma(uint32_t pd, uint32_t token, uint64_t va, uint32_t access, uint32_t sys, uint32_t n,
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

/* ---- sending ---- */

/* Write the headers of a packet to QP q's peer into the TX slot at, for ext extension
 * bytes (already in b from F_EXT) and len payload bytes; the frame's length. */
static uint32_t put_headers(uint32_t at, uint8_t *b, uint32_t q, uint32_t opcode, uint32_t psn, uint32_t ackreq,
                            uint32_t se, uint32_t ext, uint32_t len)
{
    const struct rc_qp *c = &rc[q];
    uint32_t self[3], pad = (0u - len) & 3u;
    uint32_t ib = BTH_BYTES + ext + len + pad + ICRC_BYTES;
    fw_net_self(self);
    put_word(b, 0, c->mac_lo);
    put16(b, 4, (c->mac_hi & 0xFFu) << 8 | (c->mac_hi >> 8 & 0xFFu));
    put_word(b, 6, self[1]);
    put16(b, 10, (self[2] & 0xFFu) << 8 | (self[2] >> 8 & 0xFFu));
    put16(b, 12, 0x0800u);
    put8(b, F_IP, 0x45u);
    put8(b, F_IP + 1u, 0);
    put16(b, F_IP + 2u, 20u + 8u + ib); /* the port writes it too, with the checksum */
    put16(b, F_IP + 4u, 0);
    put16(b, F_IP + 6u, IP_DF);
    put8(b, F_IP + 8u, IP_TTL);
    put8(b, F_IP + 9u, IP_PROTO_UDP);
    put16(b, F_IP + 10u, 0);
    put_word(b, F_IP + 12u, self[0]);
    put_word(b, F_IP + 16u, c->peer_ip);
    put16(b, F_UDP, UDP_SPORT_BASE | (qpn_of(q) & 0x3FFFu));
    put16(b, F_UDP + 2u, NF_NET_ROCE_PORT);
    put16(b, F_UDP + 4u, 8u + ib);
    put16(b, F_UDP + 6u, 0); /* no UDP checksum, as RoCEv2 allows */
    put8(b, F_BTH, opcode);
    put8(b, F_BTH + 1u, se << 7 | pad << 4);
    put16(b, F_BTH + 2u, PKEY_DEFAULT);
    put32(b, F_BTH + 4u, c->peer_qpn & PSN_MASK); /* byte 4 (FECN/BECN) 0 */
    put32(b, F_BTH + 8u, ackreq << 31 | (psn & PSN_MASK));
    hal_win w = mem_win(at + NF_NET_FRAME_OFF - 2u);
    uint32_t words = (HB(F_EXT + ext) + 3u) / 4u;
    for (uint32_t i = 0; i < words; i++)
        win_wr(w, 4u * i, b[4u * i] | (uint32_t)b[4u * i + 1u] << 8 | (uint32_t)b[4u * i + 2u] << 16 |
                              (uint32_t)b[4u * i + 3u] << 24);
    if (pad) /* the pad bytes are zero (the ICRC covers them); the payload lands over the rest */
        mem_wr(at + NF_NET_FRAME_OFF + F_EXT + ext + (len & ~3u), 0);
    return F_EXT + ext + len + pad + ICRC_BYTES;
}

/* An ACK or NAK (syndrome syn, PSN psn) on QP q; 0 when no TX slot is free. */
static __attribute__((noinline)) int send_ctl(uint32_t q, uint32_t syn, uint32_t psn)
{
    uint32_t slot, at = fw_net_tx_free(&slot);
    if (!at)
        return 0;
    uint8_t b[HB(HDR_MAX) + 4u] = {0};
    put32(b, F_EXT, syn << 24 | (rc[q].msn & PSN_MASK));
    fw_net_tx_post(slot, put_headers(at, b, q, OP_ACK, psn, 0, 0, AETH_BYTES, 0));
    return 1;
}

/* Packet k of a queued request; 0 when no TX slot is free. A local refusal of its
 * gather is kept in the request (w->fail) and sends nothing more of it. */
static __attribute__((noinline)) int send_packet(uint32_t q, struct rc_wqe *w, uint32_t k)
{
    uint32_t slot, at = fw_net_tx_free(&slot);
    if (!at)
        return 0;
    uint8_t b[HB(HDR_MAX) + 4u] = {0};
    uint32_t off = k << MTU_SHIFT, len = w->op == NF_OP_WR_READ ? 0u : min32(w->total - off, MTU);
    uint32_t first = k == 0, last = k + 1u >= w->npkts, ext = 0, opcode, se = 0;
    if (w->op == NF_OP_WR_READ) {
        opcode = OP_READ_REQUEST;
    } else if (w->op == NF_OP_WR_WRITE) {
        opcode = first && last ? OP_WRITE_ONLY : first ? OP_WRITE_FIRST : last ? OP_WRITE_LAST : OP_WRITE_MIDDLE;
    } else {
        int inv = w->op == NF_OP_WR_SEND_INVALIDATE;
        opcode = first && last ? (inv ? OP_SEND_ONLY_INV : OP_SEND_ONLY)
                 : first       ? OP_SEND_FIRST
                 : last        ? (inv ? OP_SEND_LAST_INV : OP_SEND_LAST)
                               : OP_SEND_MIDDLE;
        if (last && inv) {
            put32(b, F_EXT, w->inv_token);
            ext = IETH_BYTES;
        }
        se = last && (w->flags & NF_NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT) != 0;
    }
    if (first && w->op != NF_OP_WR_SEND && w->op != NF_OP_WR_SEND_INVALIDATE) {
        put32(b, F_EXT, (uint32_t)(w->remote_va >> 32));
        put32(b, F_EXT + 4u, (uint32_t)w->remote_va);
        put32(b, F_EXT + 8u, w->remote_token);
        put32(b, F_EXT + 12u, w->total);
        ext = RETH_BYTES;
    }
    uint32_t psn = psn_add(w->psn, w->op == NF_OP_WR_READ ? 0u : k);
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
    return 1;
}

/* The next response packet of READ r on QP q; 0 when no TX slot is free. A refusal by
 * the key check NAKs the READ (remote access error) and breaks the QP. */
static __attribute__((noinline)) int send_response(uint32_t q, struct rc_read *r)
{
    uint32_t slot, at = fw_net_tx_free(&slot);
    if (!at)
        return 0;
    uint8_t b[HB(HDR_MAX) + 4u] = {0};
    uint32_t k = r->sent, off = k << MTU_SHIFT, len = min32(r->len - off, MTU);
    uint32_t first = k == 0, last = k + 1u >= r->npkts, ext = 0;
    uint32_t opcode = first && last ? OP_READ_ONLY : first ? OP_READ_FIRST : last ? OP_READ_LAST : OP_READ_MIDDLE;
    if (first || last) {
        put32(b, F_EXT, SYN_ACK << 24 | (rc[q].msn & PSN_MASK));
        ext = AETH_BYTES;
    }
    uint32_t flen = put_headers(at, b, q, opcode, psn_add(r->psn, k), 0, 0, ext, len);
    uint32_t code = remote_dma(fw_qps[q].pd, r->token, r->va + off, NF_ACCESS_REMOTE_READ,
                               at + NF_NET_FRAME_OFF + F_EXT + ext, len, 0);
    if (code != NF_REFUSE_OK) {
        fw_qps[q].state = FW_QP_ERROR;
        rc[q].rd_count = 0;
        return send_ctl(q, SYN_NAK_ACCESS, r->psn) | 1;
    }
    fw_net_tx_post(slot, flen);
    r->sent++;
    return 1;
}

/* Send what QP q may send now: an owed ACK or NAK, READ responses, then requests.
 * Nonzero when something waits for a TX slot. */
static int pump(uint32_t q)
{
    struct rc_qp *c = &rc[q];
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
    if (fw_qps[q].state != FW_QP_CONNECTED)
        return 0;
    while (c->sent < c->count) {
        struct rc_wqe *w = &c->wq[(c->head + c->sent) % SQ_DEPTH];
        uint32_t pkts = w->op == NF_OP_WR_READ ? 1u : w->npkts;
        if (w->fail)
            return 0; /* nothing after a request that failed here is sent */
        if (!send_packet(q, w, c->send_pkt))
            return 1;
        if (!w->fail && ++c->send_pkt >= pkts) {
            c->sent++;
            c->send_pkt = 0;
        }
    }
    return 0;
}

/* Owe an ACK or NAK; sent now if a TX slot is free. */
static void reply_ctl(uint32_t q, uint32_t syn, uint32_t psn)
{
    struct rc_qp *c = &rc[q];
    c->ctl_syn = syn;
    c->ctl_psn = psn;
    c->ctl_owed = 1;
    (void)pump(q);
}

/* ---- completions ---- */

static const uint8_t cqe_op[] = {[NF_OP_WR_READ - NF_OP_WR_READ] = NF_NDK_OP_READ,
                                 [NF_OP_WR_WRITE - NF_OP_WR_READ] = NF_NDK_OP_WRITE,
                                 [NF_OP_WR_SEND - NF_OP_WR_READ] = NF_NDK_OP_SEND,
                                 [NF_OP_WR_SEND_INVALIDATE - NF_OP_WR_READ] = NF_NDK_OP_SEND};

static void put_cqe(uint32_t q, uint32_t wr_id, const struct wr_result *r, uint32_t op_type, uint32_t token,
                    uint32_t cflags)
{
    uint32_t at = events->reserve_zeroed(CQE_MSG);
    if (at)
        wr_cqe_at(at, qpn_of(q), wr_id, r, op_type, token, cflags);
    else
        fw_stats.tx_overflow++;
}

/* The oldest request of QP q completes with status (a failure breaks the QP). */
static void complete_head(uint32_t q, uint32_t status, uint32_t refuse)
{
    struct rc_qp *c = &rc[q];
    struct rc_wqe *w = &c->wq[c->head];
    struct wr_result r = {status, status == NF_STATUS_SUCCESS ? w->total : 0u, refuse, 0};
    if (status != NF_STATUS_SUCCESS)
        wr_failed(&fw_qps[q], status, refuse);
    if (status != NF_STATUS_SUCCESS || !(w->flags & NF_NDK_OP_FLAG_SILENT_SUCCESS))
        put_cqe(q, w->wr_id, &r, cqe_op[w->op - NF_OP_WR_READ], 0, 0);
    c->head = (c->head + 1u) % SQ_DEPTH;
    c->count--;
    if (c->sent)
        c->sent--;
    else
        c->send_pkt = 0;
    c->retries = c->rnr_retries = c->ticks = 0;
}

/* Send again from the oldest unacknowledged request (go-back-N). */
static void go_back(uint32_t q)
{
    struct rc_qp *c = &rc[q];
    fw_stats.rc_retransmits++;
    c->sent = c->send_pkt = 0;
    for (uint32_t i = 0; i < c->count; i++)
        c->wq[(c->head + i) % SQ_DEPTH].done = 0;
}

/* Requests that end before PSN psn (not READs: they end with their last response). */
static void ack_before(uint32_t q, uint32_t psn)
{
    struct rc_qp *c = &rc[q];
    while (c->count && events->room(CQE_MSG)) {
        struct rc_wqe *w = &c->wq[c->head];
        if (w->op == NF_OP_WR_READ || psn_diff(psn_add(w->psn, w->npkts), psn) > 0 || c->sent == 0)
            return;
        complete_head(q, NF_STATUS_SUCCESS, 0);
    }
}

/* The QP broke (or the host flushed it): its queued requests complete, each with its
 * own failure or CANCELLED, as the link has room. */
static int flush_errors(uint32_t q)
{
    struct rc_qp *c = &rc[q];
    int did = 0;
    while (c->count && events->room(CQE_MSG)) {
        struct rc_wqe *w = &c->wq[c->head];
        complete_head(q, w->fail ? w->fail : NF_STATUS_CANCELLED, w->refuse);
        did = 1;
    }
    return did;
}

/* ---- receiving ---- */

struct pkt {
    uint32_t opcode, psn, ackreq, se, syn;
    uint32_t data, len;           /* payload: adapter address, bytes */
    uint64_t va;                  /* RETH */
    uint32_t rkey, dmalen, ieth;  /* RETH, IETH */
};

static uint32_t slot_be32(uint32_t at, uint32_t k) { return be32(mem_rd(at + NF_NET_FRAME_OFF + k)); }

/* The requester's side: an ACK, a NAK or a READ response for QP q. */
static void rx_requester(uint32_t q, const struct pkt *p)
{
    struct rc_qp *c = &rc[q];
    if (p->opcode == OP_ACK) {
        uint32_t type = p->syn & SYN_TYPE_MASK;
        if (type == 0) {
            ack_before(q, psn_add(p->psn, 1));
            return;
        }
        ack_before(q, p->psn); /* a NAK acknowledges every earlier PSN */
        if (!c->count)
            return;
        if (type == SYN_TYPE_RNR) {
            if (++c->rnr_retries > RNR_RETRY_MAX) {
                complete_head(q, NF_STATUS_IO_TIMEOUT, 0);
                return;
            }
            go_back(q);
            return;
        }
        if (p->syn == SYN_NAK_PSN) {
            if (++c->retries > RETRY_MAX)
                complete_head(q, NF_STATUS_IO_TIMEOUT, 0);
            else
                go_back(q);
            return;
        }
        complete_head(q, p->syn == SYN_NAK_ACCESS ? NF_STATUS_ACCESS_VIOLATION : NF_STATUS_CONNECTION_ABORTED, 0);
        return;
    }
    /* a READ response: every request before the READ it answers is acknowledged */
    ack_before(q, p->psn);
    if (!c->count || c->sent == 0)
        return;
    struct rc_wqe *w = &c->wq[c->head];
    if (w->op != NF_OP_WR_READ || p->psn != psn_add(w->psn, w->done))
        return; /* a duplicate or a gap: the timer sends the READ again */
    uint32_t off = w->done << MTU_SHIFT;
    uint32_t want = min32(w->total - min32(off, w->total), MTU);
    if (p->len != want) {
        complete_head(q, NF_STATUS_CONNECTION_ABORTED, 0);
        return;
    }
    uint32_t code = sgl_dma(&w->sgl, off, p->data, p->len, 1);
    if (code != NF_REFUSE_OK) {
        complete_head(q, fw_eng_failed(code, NF_STATUS_ACCESS_VIOLATION), code);
        return;
    }
    c->ticks = 0;
    if (++w->done >= w->npkts)
        complete_head(q, NF_STATUS_SUCCESS, 0);
}

/* A SEND packet's payload into the oldest receive; 0 when the packet is refused (the
 * NAK is sent and the QP broken here). */
static int rx_send(uint32_t q, const struct pkt *p, int first, int last)
{
    struct rc_qp *c = &rc[q];
    struct fw_qp *qp = &fw_qps[q];
    if (first && qp->rq_count == 0) {
        reply_ctl(q, SYN_RNR, p->psn); /* no receive yet: the requester tries again */
        return 0;
    }
    if ((uint32_t)first == c->recv_in) { /* a FIRST inside a message, or a MIDDLE/LAST outside one */
        reply_ctl(q, SYN_NAK_INVALID, p->psn);
        qp->state = FW_QP_ERROR;
        return 0;
    }
    const struct fw_recv *rv = fw_rq_head(qp);
    struct rc_sgl l = {.n = rv->nsge, .pd = qp->pd, .access = NF_ACCESS_LOCAL_WRITE};
    uint64_t room = 0;
    for (uint32_t k = 0; k < rv->nsge; k++) {
        l.addr[k] = (uint64_t)rv->sge[k].addr_hi << 32 | rv->sge[k].addr_lo;
        l.len[k] = rv->sge[k].len;
        l.token[k] = rv->sge[k].token;
        room += l.len[k];
    }
    if (first)
        c->recv_off = 0;
    struct wr_result rr = {NF_STATUS_SUCCESS, 0, 0, 0};
    uint32_t syn = 0, inv = FW_NO_INDEX, st;
    if (c->recv_off + (uint64_t)p->len > room) {
        rr.status = NF_STATUS_BUFFER_TOO_SMALL;
        syn = SYN_NAK_INVALID;
    } else if ((st = sgl_dma(&l, c->recv_off, p->data, p->len, 1)) != NF_REFUSE_OK) {
        rr.refuse = st;
        rr.status = fw_eng_failed(st, NF_STATUS_ACCESS_VIOLATION);
        syn = SYN_NAK_OPERATIONAL;
    } else if (last && p->ieth && (inv = wr_inv_target(qp->pd, p->ieth, &st)) == FW_NO_INDEX) {
        rr.status = NF_STATUS_CONNECTION_ABORTED; /* a token this QP may not invalidate */
        syn = SYN_NAK_INVALID;
    }
    c->recv_off += p->len;
    c->recv_in = !last;
    if (syn == 0 && !last)
        return 1;
    rr.bytes = c->recv_off;
    if (syn == 0 && inv != FW_NO_INDEX)
        wr_invalidate(inv, &rr); /* before the receive completes */
    uint32_t wr_id = rv->wr_id;
    fw_rq_pop(qp);
    int invalidated = inv != FW_NO_INDEX && rr.status == NF_STATUS_SUCCESS;
    if (rr.status != NF_STATUS_SUCCESS)
        wr_failed(qp, rr.status, rr.refuse);
    put_cqe(q, wr_id, &rr, invalidated ? NF_NDK_OP_RECEIVE_AND_INVALIDATE : NF_NDK_OP_RECEIVE,
            invalidated ? p->ieth : 0u, rr.status == NF_STATUS_SUCCESS && p->se ? NF_CQE_FLAG_SOLICITED : 0u);
    c->recv_in = 0;
    if (syn) {
        reply_ctl(q, syn, p->psn);
        qp->state = FW_QP_ERROR;
        return 0;
    }
    return 1;
}

/* A WRITE packet's payload into the R_Key's range; 0 when refused (NAK sent, QP broken). */
static int rx_write(uint32_t q, const struct pkt *p, int first, int last)
{
    struct rc_qp *c = &rc[q];
    uint32_t syn = 0;
    if ((uint32_t)first != !c->w_in) {
        syn = SYN_NAK_INVALID;
    } else {
        if (first) {
            c->w_va = p->va;
            c->w_token = p->rkey;
            c->w_left = p->dmalen;
        }
        if (p->len > c->w_left || (last && p->len != c->w_left))
            syn = SYN_NAK_INVALID;
        else if (remote_dma(fw_qps[q].pd, c->w_token, c->w_va, NF_ACCESS_REMOTE_WRITE, p->data, p->len, 1) !=
                 NF_REFUSE_OK)
            syn = SYN_NAK_ACCESS;
    }
    if (syn) {
        reply_ctl(q, syn, p->psn);
        fw_qps[q].state = FW_QP_ERROR;
        c->w_in = 0;
        return 0;
    }
    c->w_va += p->len;
    c->w_left -= p->len;
    c->w_in = !last;
    return 1;
}

/* A READ request: queued for the pump to answer. */
static int rx_read(uint32_t q, const struct pkt *p)
{
    struct rc_qp *c = &rc[q];
    if (c->rd_count >= RD_DEPTH) {
        reply_ctl(q, SYN_NAK_INVALID, p->psn); /* more READs than the responder's resources */
        fw_qps[q].state = FW_QP_ERROR;
        return 0;
    }
    struct rc_read *r = &c->rd[(c->rd_head + c->rd_count) % RD_DEPTH];
    *r = (struct rc_read){p->psn, p->dmalen ? (p->dmalen + MTU - 1u) >> MTU_SHIFT : 1u, 0, p->dmalen, p->rkey, p->va};
    c->rd_count++;
    return 1;
}

/* The responder's side: a request packet for QP q, in PSN order. */
static void rx_responder(uint32_t q, const struct pkt *p)
{
    struct rc_qp *c = &rc[q];
    int32_t d = psn_diff(p->psn, c->rq_psn);
    if (d > 0) { /* a gap: NAK once, then drop until the expected PSN comes */
        if (!c->nak_sent)
            reply_ctl(q, SYN_NAK_PSN, c->rq_psn);
        c->nak_sent = 1;
        return;
    }
    if (d < 0) { /* a duplicate: acknowledged again, a READ answered again */
        if (p->opcode == OP_READ_REQUEST) {
            if (c->rd_count < RD_DEPTH)
                (void)rx_read(q, p);
        } else if (p->ackreq) {
            reply_ctl(q, SYN_ACK, psn_add(c->rq_psn, PSN_MASK));
        }
        return;
    }
    c->nak_sent = 0;
    uint32_t op = p->opcode;
    int ok;
    if (op <= OP_SEND_ONLY || op == OP_SEND_LAST_INV || op == OP_SEND_ONLY_INV) {
        int first = op == OP_SEND_FIRST || op == OP_SEND_ONLY || op == OP_SEND_ONLY_INV;
        int last = op != OP_SEND_FIRST && op != OP_SEND_MIDDLE;
        ok = rx_send(q, p, first, last);
        c->msn += ok && last;
    } else if (op >= OP_WRITE_FIRST && op <= OP_WRITE_ONLY && op != 0x09u) {
        int first = op == OP_WRITE_FIRST || op == OP_WRITE_ONLY;
        int last = op == OP_WRITE_LAST || op == OP_WRITE_ONLY;
        ok = rx_write(q, p, first, last);
        c->msn += ok && last;
    } else if (op == OP_READ_REQUEST) {
        if (rx_read(q, p)) {
            c->msn++;
            c->rq_psn = psn_add(c->rq_psn, c->rd[(c->rd_head + c->rd_count - 1u) % RD_DEPTH].npkts);
        }
        return;
    } else {
        reply_ctl(q, SYN_NAK_INVALID, p->psn); /* an opcode this responder does not take */
        fw_qps[q].state = FW_QP_ERROR;
        return;
    }
    if (!ok)
        return;
    c->rq_psn = psn_add(c->rq_psn, 1);
    if (p->ackreq)
        reply_ctl(q, SYN_ACK, p->psn);
}

/* One RoCE frame (the port checked its FCS, IPv4 header and ICRC). */
static void rx_roce(uint32_t at, uint32_t flen)
{
    struct pkt p = {0};
    uint32_t w0 = slot_be32(at, F_BTH), w1 = slot_be32(at, F_BTH + 4u), w2 = slot_be32(at, F_BTH + 8u);
    uint32_t udp_len = slot_be32(at, F_UDP + 4u) >> 16;
    uint32_t src_ip = mem_rd(at + NF_NET_FRAME_OFF + F_IP + 12u);
    p.opcode = w0 >> 24;
    p.se = w0 >> 23 & 1u;
    uint32_t pad = w0 >> 20 & 3u;
    p.ackreq = w2 >> 31;
    p.psn = w2 & PSN_MASK;
    uint32_t q = fw_qp_lookup(w1 & PSN_MASK);
    if (q == FW_NO_INDEX || !fw_qps[q].wire || rc[q].peer_ip != src_ip || (w0 >> 16 & 0xFu) != 0u) {
        fw_stats.net_unhandled++; /* not a QP of ours on the wire, or not from its peer */
        return;
    }
    uint32_t ext = 0, op = p.opcode;
    if (op == OP_WRITE_FIRST || op == OP_WRITE_ONLY || op == OP_READ_REQUEST) {
        p.va = (uint64_t)slot_be32(at, F_EXT) << 32 | slot_be32(at, F_EXT + 4u);
        p.rkey = slot_be32(at, F_EXT + 8u);
        p.dmalen = slot_be32(at, F_EXT + 12u);
        ext = RETH_BYTES;
    } else if (op == OP_ACK || op == OP_READ_FIRST || op == OP_READ_LAST || op == OP_READ_ONLY) {
        p.syn = slot_be32(at, F_EXT) >> 24;
        ext = AETH_BYTES;
    } else if (op == OP_SEND_LAST_INV || op == OP_SEND_ONLY_INV) {
        p.ieth = slot_be32(at, F_EXT);
        ext = IETH_BYTES;
    }
    uint32_t hdrs = 8u + BTH_BYTES + ext + pad + ICRC_BYTES;
    if (udp_len < hdrs || F_UDP + udp_len > flen || (op == OP_READ_REQUEST && udp_len != hdrs)) {
        fw_stats.net_unhandled++; /* lengths that do not add up */
        return;
    }
    p.data = at + NF_NET_FRAME_OFF + F_EXT + ext;
    p.len = udp_len - hdrs;
    if (fw_qps[q].state != FW_QP_CONNECTED)
        return; /* a broken QP answers nothing: the peer times out */
    if (op >= OP_READ_FIRST && op <= OP_ACK)
        rx_requester(q, &p);
    else
        rx_responder(q, &p);
}

/* ---- the idle loop's turn ---- */

/* A timer pass: a QP with requests out and no progress for ACK_TIMEOUT_TICKS sends
 * them again, up to RETRY_MAX times; then the oldest fails IO_TIMEOUT. */
static void timer_pass(void)
{
    for (uint32_t q = 0; q < FW_QP_CAP; q++) {
        struct rc_qp *c = &rc[q];
        if (!fw_qps[q].wire || fw_qps[q].state != FW_QP_CONNECTED || c->sent == 0)
            continue;
        if (++c->ticks < ACK_TIMEOUT_TICKS)
            continue;
        c->ticks = 0;
        if (++c->retries > RETRY_MAX && events->room(CQE_MSG))
            complete_head(q, NF_STATUS_IO_TIMEOUT, 0);
        else
            go_back(q);
    }
}

int fw_rc_poll(void)
{
    uint32_t at, len;
    int did = 0, waits = 0;
    /* a frame may complete two requests (a receive and a send's ACK): room for both */
    while (events->room(2u * CQE_MSG) && fw_net_next(&at, &len)) {
        rx_roce(at, len);
        fw_net_release();
        did = 1;
    }
    uint32_t now = hal_cycles();
    if (fw_net_timer() || now - tick_at >= fw_net_tick()) {
        tick_at = now;
        timer_pass();
        did = 1;
    }
    for (uint32_t q = 0; q < FW_QP_CAP; q++) {
        if (!fw_qps[q].wire)
            continue;
        if (fw_qps[q].state == FW_QP_ERROR)
            did |= flush_errors(q);
        waits |= pump(q);
    }
    waiting = waits;
    return did;
}

uint32_t fw_rc_idle_max(void)
{
    return waiting ? SPIN_CYCLES : fw_net_tick();
}

void fw_rc_init(const struct fw_reply_ops *ev)
{
    events = ev;
    for (uint32_t q = 0; q < FW_QP_CAP; q++)
        rc[q] = (struct rc_qp){0};
    tick_at = hal_cycles();
}

uint32_t fw_rc_connect(uint32_t body, uint32_t blen)
{
    if (blen < NF_QP_CONNECT_WIRE_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    hal_win w = mem_win(body);
    uint32_t q = fw_qp_lookup(win_rd(w, NF_QP_CONNECT_WIRE_REQ_QPN_OFF));
    uint32_t peer_qpn = win_rd(w, NF_QP_CONNECT_WIRE_REQ_PEER_QPN_OFF);
    uint32_t ip = win_rd(w, NF_QP_CONNECT_WIRE_REQ_PEER_IP_OFF);
    uint32_t sq_psn = win_rd(w, NF_QP_CONNECT_WIRE_REQ_SQ_PSN_OFF), rq_psn = win_rd(w, NF_QP_CONNECT_WIRE_REQ_RQ_PSN_OFF);
    if (q == FW_NO_INDEX || peer_qpn == 0 || peer_qpn > PSN_MASK || sq_psn > PSN_MASK || rq_psn > PSN_MASK ||
        win_rd(w, NF_QP_CONNECT_WIRE_REQ_RSVD_OFF))
        return NF_STATUS_INVALID_PARAMETER;
    if (fw_qps[q].state != FW_QP_RESET)
        return NF_STATUS_INVALID_DEVICE_STATE; /* connected already, or broken */
    uint32_t mac[2];
    uint32_t st = fw_net_resolve(ip, mac);
    if (st != NF_STATUS_SUCCESS)
        return st;
    rc[q] = (struct rc_qp){.peer_ip = ip, .mac_lo = mac[0], .mac_hi = mac[1], .peer_qpn = peer_qpn,
                           .sq_psn = sq_psn, .rq_psn = rq_psn};
    fw_qps[q].peer_qpn = 0;
    fw_qps[q].wire = 1;
    fw_qps[q].state = FW_QP_CONNECTED;
    return NF_STATUS_SUCCESS;
}

void fw_rc_post(struct fw_qp *qp, uint32_t op, uint32_t wr_id, uint32_t flags, uint32_t m, uint32_t mlen,
                struct wr_result *r)
{
    uint32_t q = (uint32_t)(qp - fw_qps);
    struct rc_qp *c = &rc[q];
    int rdma = op == NF_OP_WR_READ || op == NF_OP_WR_WRITE;
    uint32_t fixed = rdma ? NF_WR_RDMA_SIZE : NF_WR_SEND_SIZE;
    r->status = NF_STATUS_INVALID_PARAMETER;
    if (mlen < NF_MSG_HDR_SIZE + NF_WR_HDR_SIZE + fixed)
        return;
    if (c->count >= SQ_DEPTH) {
        r->status = NF_STATUS_INSUFFICIENT_RESOURCES; /* SQ_DEPTH requests out already */
        return;
    }
    /* built in its queue slot, which counts only once the request is whole */
    struct rc_wqe *w = &c->wq[(c->head + c->count) % SQ_DEPTH];
    *w = (struct rc_wqe){.op = op, .wr_id = wr_id, .flags = flags};
    w->sgl.n = mem_rd(WR_BODY(m, rdma ? NF_WR_RDMA_NSGE_OFF : NF_WR_SEND_NSGE_OFF));
    if (rdma) {
        rd64_lo_hi(WR_BODY(m, NF_WR_RDMA_REMOTE_VA_OFF), &w->remote_va);
        w->remote_token = mem_rd(WR_BODY(m, NF_WR_RDMA_REMOTE_TOKEN_OFF));
        if (flags & NF_NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE) {
            r->status = NF_STATUS_NOT_SUPPORTED;
            return;
        }
    } else {
        w->inv_token = mem_rd(WR_BODY(m, NF_WR_SEND_INV_TOKEN_OFF));
    }
    if (flags & ~(uint32_t)(rdma ? NF_KNOWN_FLAGS_RDMA : NF_KNOWN_FLAGS_SEND) || w->sgl.n > NF_ADAPTER_MAX_SGE ||
        w->sgl.n * NF_SGE_SIZE > mlen - (NF_MSG_HDR_SIZE + NF_WR_HDR_SIZE + fixed))
        return;
    uint64_t total = wr_read_sges(WR_BODY(m, fixed), w->sgl.n, w->sgl.addr, w->sgl.len, w->sgl.token);
    if (total > 0x7FFFFFFFu)
        return;
    w->total = (uint32_t)total;
    w->sgl.pd = qp->pd;
    w->sgl.access = op == NF_OP_WR_READ ? NF_ACCESS_LOCAL_WRITE : NF_ACCESS_LOCAL_READ;
    w->npkts = w->total ? (w->total + MTU - 1u) >> MTU_SHIFT : 1u;
    w->psn = c->sq_psn;
    c->sq_psn = psn_add(c->sq_psn, w->npkts);
    c->count++;
    (void)pump(q);
    r->status = NF_STATUS_SUCCESS;
    r->cqe_at = FW_RC_CQE_LATER;
}

void fw_rc_drop(uint32_t q)
{
    rc[q] = (struct rc_qp){0};
    fw_qps[q].wire = 0;
}
