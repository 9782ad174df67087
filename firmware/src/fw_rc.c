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
 * Layer: called by fw_main, fw_msg and fw_wr; calls fw_rc_tx (sending), fw_net,
 * fw_wr_common, fw_tables and fw_state. */
#include "fw_rc_int.h"
#include "fw_wr_int.h"
#include "hal.h"

static const struct fw_reply_ops *events;
static int waiting;       /* a QP waits for a TX slot */
static uint32_t wire_qps; /* QPs on the wire, counted again by each turn that looks */
static void (*gsi_rx)(const struct fw_rc_dest *from, uint32_t data, uint32_t len);

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
    struct rc_qp *c = &rc_qps[q];
    struct rc_wqe *w = &c->wq[c->head];
    struct wr_result r = {status, status == NF_STATUS_SUCCESS ? w->total : 0u, refuse, 0};
    if (status != NF_STATUS_SUCCESS) {
        wr_failed(&fw_qps[q], status, refuse);
    } else { /* INFO's cost figures: from the request's arrival to its completion */
        fw_stats.last_wr_op = w->op;
        fw_stats.last_wr_cycles = hal_cycles() - w->stamp;
        fw_stats.last_wr_fw_cycles = fw_stats.last_wr_cycles - (fw_eng_wait_cycles() - w->eng_start);
    }
    if (status != NF_STATUS_SUCCESS || !(w->flags & NF_NDK_OP_FLAG_SILENT_SUCCESS))
        put_cqe(q, w->wr_id, &r, cqe_op[w->op - NF_OP_WR_READ], 0, 0);
    c->head = (c->head + 1u) % SQ_DEPTH;
    c->count--;
    if (c->sent)
        c->sent--;
    else
        c->send_pkt = 0;
    c->retries = c->rnr_retries = c->waits = c->ticks = 0;
}

/* Send again from the oldest unacknowledged request (go-back-N). */
static void go_back(uint32_t q)
{
    struct rc_qp *c = &rc_qps[q];
    fw_stats.rc_retransmits++;
    c->sent = c->send_pkt = 0;
    for (uint32_t i = 1; i < c->count; i++)
        c->wq[(c->head + i) % SQ_DEPTH].done = 0;
    if (!c->count)
        return;
    /* the oldest resumes where the peer's answers stopped: a READ at its first missing
     * response, a Send or Write at its first unacknowledged packet */
    const struct rc_wqe *w = &c->wq[c->head];
    int32_t acked = psn_diff(c->ack_psn, w->psn);
    c->send_pkt = w->op == NF_OP_WR_READ ? w->done : acked > 0 ? min32((uint32_t)acked, w->npkts - 1u) : 0u;
}

/* Requests that end before PSN psn (not READs: they end with their last response);
 * the window opens up to psn. */
static void ack_before(uint32_t q, uint32_t psn)
{
    struct rc_qp *c = &rc_qps[q];
    if (psn_diff(psn, c->ack_psn) > 0 && psn_diff(psn, c->sq_psn) <= 0) {
        c->ack_psn = psn;
        c->retries = c->ticks = 0; /* progress: the retry count starts over */
    }
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
    struct rc_qp *c = &rc_qps[q];
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
    struct rc_qp *c = &rc_qps[q];
    if (p->opcode == NF_BTH_OP_ACK) {
        uint32_t type = p->syn & NF_ROCE_AETH_TYPE_MASK;
        if (type == 0) {
            ack_before(q, psn_add(p->psn, 1));
            return;
        }
        ack_before(q, p->psn); /* a NAK acknowledges every earlier PSN */
        if (!c->count)
            return;
        if (type == NF_ROCE_AETH_TYPE_RNR) {
            if (++c->rnr_retries > RNR_RETRY_MAX)
                complete_head(q, NF_STATUS_IO_TIMEOUT, 0);
            else
                c->waits |= RNR_WAIT;
            return;
        }
        if (c->waits & RNR_WAIT)
            return; /* a NAK of what followed the packet the receiver was not ready for */
        if (p->syn == NF_AETH_SYN_NAK_PSN) {
            if (++c->retries > RETRY_MAX)
                complete_head(q, NF_STATUS_IO_TIMEOUT, 0);
            else
                go_back(q);
            return;
        }
        complete_head(q, p->syn == NF_AETH_SYN_NAK_ACCESS ? NF_STATUS_ACCESS_VIOLATION : NF_STATUS_CONNECTION_ABORTED,
                      0);
        return;
    }
    /* a READ response: every request before the READ it answers is acknowledged */
    ack_before(q, p->psn);
    if (!c->count || (c->sent == 0 && c->send_pkt == 0))
        return; /* no request of ours is out: a stray */
    struct rc_wqe *w = &c->wq[c->head];
    if (w->op != NF_OP_WR_READ || p->psn != psn_add(w->psn, w->done)) {
        /* a gap (a response lost or late): ask again from the first missing one now, not
         * on the timer; a duplicate is dropped */
        if (w->op == NF_OP_WR_READ && psn_diff(p->psn, psn_add(w->psn, w->done)) > 0 && !(c->waits & READ_ASKED)) {
            c->waits |= READ_ASKED;
            go_back(q);
        }
        return;
    }
    uint32_t off = w->done << c->mtu_shift;
    uint32_t want = min32(w->total - min32(off, w->total), 1u << c->mtu_shift);
    if (p->len != want) {
        complete_head(q, NF_STATUS_CONNECTION_ABORTED, 0);
        return;
    }
    uint32_t code = sgl_dma(&w->sgl, off, p->data, p->len, 1);
    if (code != NF_REFUSE_OK) {
        complete_head(q, fw_eng_failed(code, NF_STATUS_ACCESS_VIOLATION), code);
        return;
    }
    c->ticks = c->retries = 0;
    c->waits &= (uint16_t)~READ_ASKED;
    if (++w->done >= w->npkts) {
        ack_before(q, psn_add(w->psn, w->npkts)); /* the window opens past the READ */
        complete_head(q, NF_STATUS_SUCCESS, 0);
    }
}

/* A SEND packet's payload into the oldest receive; 0 when the packet is refused (the
 * NAK is sent and the QP broken here). */
static int rx_send(uint32_t q, const struct pkt *p, int first, int last)
{
    struct rc_qp *c = &rc_qps[q];
    struct fw_qp *qp = &fw_qps[q];
    if (first && qp->rq_count == 0) {
        reply_ctl(q, NF_AETH_SYN_RNR, p->psn); /* no receive yet: the requester tries again */
        return 0;
    }
    if ((uint32_t)first == c->recv_in) { /* a FIRST inside a message, or a MIDDLE/LAST outside one */
        refuse(q, NF_AETH_SYN_NAK_INVALID, p->psn);
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
        syn = NF_AETH_SYN_NAK_INVALID;
    } else if ((st = sgl_dma(&l, c->recv_off, p->data, p->len, 1)) != NF_REFUSE_OK) {
        rr.refuse = st;
        rr.status = fw_eng_failed(st, NF_STATUS_ACCESS_VIOLATION);
        syn = NF_AETH_SYN_NAK_OPERATIONAL;
    } else if (last && p->ieth && (inv = wr_inv_target(qp->pd, p->ieth, &st)) == FW_NO_INDEX) {
        rr.status = NF_STATUS_CONNECTION_ABORTED; /* a token this QP may not invalidate */
        syn = NF_AETH_SYN_NAK_INVALID;
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
        refuse(q, syn, p->psn);
        return 0;
    }
    return 1;
}

/* A WRITE packet's payload into the R_Key's range; 0 when refused (NAK sent, QP broken). */
static int rx_write(uint32_t q, const struct pkt *p, int first, int last)
{
    struct rc_qp *c = &rc_qps[q];
    uint32_t syn = 0;
    if ((uint32_t)first != !c->w_in) {
        syn = NF_AETH_SYN_NAK_INVALID;
    } else {
        if (first) {
            c->w_va = p->va;
            c->w_token = p->rkey;
            c->w_left = p->dmalen;
        }
        if (p->len > c->w_left || (last && p->len != c->w_left))
            syn = NF_AETH_SYN_NAK_INVALID;
        else if (remote_dma(fw_qps[q].pd, c->w_token, c->w_va, NF_ACCESS_REMOTE_WRITE, p->data, p->len, 1) !=
                 NF_REFUSE_OK)
            syn = NF_AETH_SYN_NAK_ACCESS;
    }
    if (syn) {
        refuse(q, syn, p->psn);
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
    struct rc_qp *c = &rc_qps[q];
    if (c->rd_count >= RD_DEPTH) {
        refuse(q, NF_AETH_SYN_NAK_INVALID, p->psn); /* more READs than the responder's resources */
        return 0;
    }
    struct rc_read *r = &c->rd[(c->rd_head + c->rd_count) % RD_DEPTH];
    uint32_t mtu = 1u << c->mtu_shift;
    uint32_t npkts = p->dmalen ? (p->dmalen + mtu - 1u) >> c->mtu_shift : 1u;
    *r = (struct rc_read){p->psn, npkts, 0, p->dmalen, p->rkey, p->va};
    c->rd_count++;
    return 1;
}

/* A READ request sent again (the requester went back to psn): what it asks comes again,
 * and so will every request after it, so the answers queued from psn on are dropped
 * before it is queued; the responder's READs stay within what the requester has out. */
static void read_again(uint32_t q, const struct pkt *p)
{
    struct rc_qp *c = &rc_qps[q];
    while (c->rd_count) {
        struct rc_read *r = &c->rd[(c->rd_head + c->rd_count - 1u) % RD_DEPTH];
        int32_t k = psn_diff(p->psn, r->psn);
        if (k > 0 && (uint32_t)k >= r->npkts)
            break; /* wholly before the request: it stays */
        if (k > 0 && r->sent < (uint32_t)k) {
            r->npkts = (uint32_t)k; /* answered up to where the request starts */
            break;
        }
        c->rd_count--;
    }
    if (c->rd_count < RD_DEPTH)
        (void)rx_read(q, p);
}

/* The responder's side: a request packet for QP q, in PSN order. */
static void rx_responder(uint32_t q, const struct pkt *p)
{
    struct rc_qp *c = &rc_qps[q];
    int32_t d = psn_diff(p->psn, c->rq_psn);
    if (d > 0) { /* a gap: NAK once, then drop until the expected PSN comes */
        if (!c->nak_sent)
            reply_ctl(q, NF_AETH_SYN_NAK_PSN, c->rq_psn);
        c->nak_sent = 1;
        return;
    }
    if (d < 0) { /* a duplicate: acknowledged again, a READ answered again */
        if (p->opcode == NF_BTH_OP_READ_REQUEST) {
            read_again(q, p);
        } else if (p->ackreq) {
            reply_ctl(q, NF_AETH_SYN_ACK, psn_add(c->rq_psn, NF_BTH_PSN_MASK));
        }
        return;
    }
    c->nak_sent = 0;
    uint32_t op = p->opcode;
    int ok;
    if (op <= NF_BTH_OP_SEND_ONLY || op == NF_BTH_OP_SEND_LAST_INV || op == NF_BTH_OP_SEND_ONLY_INV) {
        int first = op == NF_BTH_OP_SEND_FIRST || op == NF_BTH_OP_SEND_ONLY || op == NF_BTH_OP_SEND_ONLY_INV;
        int last = op != NF_BTH_OP_SEND_FIRST && op != NF_BTH_OP_SEND_MIDDLE;
        ok = rx_send(q, p, first, last);
        c->msn += ok && last;
    } else if (op >= NF_BTH_OP_WRITE_FIRST && op <= NF_BTH_OP_WRITE_ONLY && op != NF_BTH_OP_WRITE_LAST_IMM) {
        int first = op == NF_BTH_OP_WRITE_FIRST || op == NF_BTH_OP_WRITE_ONLY;
        int last = op == NF_BTH_OP_WRITE_LAST || op == NF_BTH_OP_WRITE_ONLY;
        ok = rx_write(q, p, first, last);
        c->msn += ok && last;
    } else if (op == NF_BTH_OP_READ_REQUEST) {
        if (rx_read(q, p)) {
            c->msn++;
            c->rq_psn = psn_add(c->rq_psn, c->rd[(c->rd_head + c->rd_count - 1u) % RD_DEPTH].npkts);
        }
        return;
    } else {
        refuse(q, NF_AETH_SYN_NAK_INVALID, p->psn); /* an opcode this responder does not take */
        return;
    }
    if (!ok)
        return;
    c->rq_psn = psn_add(c->rq_psn, 1);
    if (p->ackreq)
        reply_ctl(q, NF_AETH_SYN_ACK, p->psn);
}

/* One RoCE frame (the port checked its FCS, IPv4 header and ICRC). */
static void rx_roce(uint32_t at, uint32_t flen)
{
    struct pkt p = {0};
    uint32_t w0 = slot_be32(at, F_BTH + NF_BTH_OPCODE_OFF), w1 = slot_be32(at, F_BTH + NF_BTH_DEST_QP_OFF);
    uint32_t w2 = slot_be32(at, F_BTH + NF_BTH_PSN_OFF);
    uint32_t udp_len = slot_be32(at, F_UDP + NF_UDP_LEN_OFF) >> 16;
    uint32_t src_ip = mem_rd(at + NF_NET_FRAME_OFF + F_IP + NF_IPV4_SRC_OFF);
    _Static_assert(NF_UDP_LEN_BYTES == 2u && ((NF_NET_FRAME_OFF + F_UDP + NF_UDP_LEN_OFF) & 3u) == 0u &&
                       ((NF_NET_FRAME_OFF + F_IP + NF_IPV4_SRC_OFF) & 3u) == 0u,
                   "the UDP length is the high half of a slot word, the source address a whole one");
    p.opcode = NF_BTH_OPCODE_GET(w0);
    p.se = NF_BTH_SE_GET(w0);
    uint32_t pad = NF_BTH_PAD_GET(w0);
    p.ackreq = NF_BTH_ACKREQ_GET(w2);
    p.psn = NF_BTH_PSN_GET(w2);
    if (NF_BTH_DEST_QP_GET(w1) == NF_ROCE_GSI_QPN) { /* never a QP's number: generation 0 names none */
        uint32_t hdrs = NF_UDP_SIZE + NF_BTH_SIZE + NF_DETH_SIZE + pad + NF_ROCE_ICRC_BYTES;
        if (gsi_rx && p.opcode == NF_BTH_OP_UD_SEND_ONLY && udp_len >= hdrs && F_UDP + udp_len <= flen &&
            slot_be32(at, F_EXT + NF_DETH_QKEY_OFF) == NF_ROCE_GSI_QKEY) {
            const uint32_t eth = at + NF_NET_FRAME_OFF + 6u; /* the source MAC */
            const struct fw_rc_dest from = {src_ip, mem_rd(eth), mem_rd(eth + 4u) & 0xFFFFu,
                                            NF_DETH_SRC_QP_GET(slot_be32(at, F_EXT + NF_DETH_SRC_QP_OFF))};
            gsi_rx(&from, at + NF_NET_FRAME_OFF + F_EXT + NF_DETH_SIZE, udp_len - hdrs);
        } else {
            fw_stats.net_unhandled++;
        }
        return;
    }
    uint32_t q = fw_qp_lookup(NF_BTH_DEST_QP_GET(w1));
    if (q == FW_NO_INDEX || !fw_qps[q].wire || rc_qps[q].peer_ip != src_ip || NF_BTH_TVER_GET(w0) != 0u) {
        fw_stats.net_unhandled++; /* not a QP of ours on the wire, or not from its peer */
        return;
    }
    uint32_t ext = 0, op = p.opcode;
    if (op == NF_BTH_OP_WRITE_FIRST || op == NF_BTH_OP_WRITE_ONLY || op == NF_BTH_OP_READ_REQUEST) {
        p.va = (uint64_t)slot_be32(at, F_EXT + NF_RETH_VA_OFF) << 32 | slot_be32(at, F_EXT + NF_RETH_VA_OFF + 4u);
        p.rkey = slot_be32(at, F_EXT + NF_RETH_RKEY_OFF);
        p.dmalen = slot_be32(at, F_EXT + NF_RETH_DMA_LEN_OFF);
        ext = NF_RETH_SIZE;
    } else if (op == NF_BTH_OP_ACK || op == NF_BTH_OP_READ_FIRST || op == NF_BTH_OP_READ_LAST ||
               op == NF_BTH_OP_READ_ONLY) {
        p.syn = NF_AETH_SYNDROME_GET(slot_be32(at, F_EXT + NF_AETH_SYNDROME_OFF));
        ext = NF_AETH_SIZE;
    } else if (op == NF_BTH_OP_SEND_LAST_INV || op == NF_BTH_OP_SEND_ONLY_INV) {
        p.ieth = slot_be32(at, F_EXT + NF_IETH_RKEY_OFF);
        ext = NF_IETH_SIZE;
    }
    uint32_t hdrs = NF_UDP_SIZE + NF_BTH_SIZE + ext + pad + NF_ROCE_ICRC_BYTES;
    if (udp_len < hdrs || F_UDP + udp_len > flen || (op == NF_BTH_OP_READ_REQUEST && udp_len != hdrs)) {
        fw_stats.net_unhandled++; /* lengths that do not add up */
        return;
    }
    p.data = at + NF_NET_FRAME_OFF + F_EXT + ext;
    p.len = udp_len - hdrs;
    if (fw_qps[q].state != FW_QP_CONNECTED) {
        /* A broken QP answers nothing (the peer times out), but the request it refused
         * is refused again: a lost NAK must not turn the peer's status into a timeout. */
        struct rc_qp *c = &rc_qps[q];
        if (c->fatal_syn && (op < NF_BTH_OP_READ_FIRST || op > NF_BTH_OP_ACK) && p.psn == c->fatal_psn)
            reply_ctl(q, c->fatal_syn, c->fatal_psn);
        return;
    }
    if (op >= NF_BTH_OP_READ_FIRST && op <= NF_BTH_OP_ACK)
        rx_requester(q, &p);
    else
        rx_responder(q, &p);
}

/* ---- the idle loop's turn ---- */

/* A timer pass: a QP with requests out and no progress for ACK_TIMEOUT_TICKS sends
 * them again, up to RETRY_MAX times; then the oldest fails IO_TIMEOUT. A QP waiting
 * after an RNR NAK sends again now. */
static void timer_pass(void)
{
    for (uint32_t q = 0; q < FW_QP_CAP; q++) {
        struct rc_qp *c = &rc_qps[q];
        if (!fw_qps[q].wire || fw_qps[q].state != FW_QP_CONNECTED)
            continue;
        c->waits &= (uint16_t)~READ_ASKED; /* a lost request asked again may leave a gap again */
        if (c->waits & RNR_WAIT) {
            c->waits &= (uint16_t)~RNR_WAIT;
            c->ticks = 0;
            go_back(q);
            continue;
        }
        if (c->sent == 0 && c->send_pkt == 0)
            continue; /* nothing on the wire waits for an answer */
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
    uint32_t at, len, n = 0;
    int did = 0, waits = 0;
    /* No port, or the usual idle turn: no frame, no timer due, no QP on the wire. It
     * stays a few instructions, so it evicts none of the work-request path's cache lines. */
    if (fw_net_tick() == 0 || (!wire_qps && !fw_net_pending() && !fw_net_due(hal_cycles())))
        return 0;
    /* a frame may complete two requests (a receive and a send's ACK): room for both */
    while (events->room(2u * CQE_MSG) && fw_net_next(&at, &len)) {
        rx_roce(at, len);
        fw_net_release();
        did = 1;
    }
    /* The port's tick is the one clock of the timer passes: a second one out of phase with
     * it would make two passes a few clocks apart, the ACK timeout's two ticks. */
    if (fw_net_timer()) {
        timer_pass();
        did = 1;
    }
    for (uint32_t q = 0; q < FW_QP_CAP; q++) {
        if (!fw_qps[q].wire)
            continue;
        n++;
        if (fw_qps[q].state == FW_QP_ERROR)
            did |= flush_errors(q);
        waits |= pump(q);
    }
    wire_qps = n;
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
        rc_qps[q] = (struct rc_qp){0};
}

uint32_t fw_rc_connect(uint32_t body, uint32_t blen)
{
    if (blen < NF_QP_CONNECT_WIRE_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    hal_win w = mem_win(body);
    uint32_t q = fw_qp_lookup(win_rd(w, NF_QP_CONNECT_WIRE_REQ_QPN_OFF));
    uint32_t peer_qpn = win_rd(w, NF_QP_CONNECT_WIRE_REQ_PEER_QPN_OFF);
    uint32_t ip = win_rd(w, NF_QP_CONNECT_WIRE_REQ_PEER_IP_OFF);
    uint32_t sq_psn = win_rd(w, NF_QP_CONNECT_WIRE_REQ_SQ_PSN_OFF);
    uint32_t rq_psn = win_rd(w, NF_QP_CONNECT_WIRE_REQ_RQ_PSN_OFF);
    uint32_t mtu = win_rd(w, NF_QP_CONNECT_WIRE_REQ_MTU_OFF);
    mtu = mtu ? mtu : NF_NET_MAX_PATH_MTU; /* 0: the largest this adapter takes */
    if (q == FW_NO_INDEX || peer_qpn == 0 || peer_qpn > NF_BTH_DEST_QP_MASK || sq_psn > NF_BTH_PSN_MASK ||
        rq_psn > NF_BTH_PSN_MASK || mtu > NF_NET_MAX_PATH_MTU)
        return NF_STATUS_INVALID_PARAMETER;
    if (fw_qps[q].state != FW_QP_RESET)
        return NF_STATUS_INVALID_DEVICE_STATE; /* connected already, or broken */
    uint32_t mac[2];
    uint32_t st = fw_net_resolve(ip, mac);
    if (st != NF_STATUS_SUCCESS)
        return st;
    const struct fw_rc_dest d = {ip, mac[0], mac[1], peer_qpn};
    fw_rc_wire(q, &d, sq_psn, rq_psn, mtu, RD_DEPTH); /* no CM: the responder's whole depth */
    return NF_STATUS_SUCCESS;
}

void fw_rc_wire(uint32_t q, const struct fw_rc_dest *d, uint32_t sq_psn, uint32_t rq_psn, uint32_t mtu, uint32_t ord)
{
    rc_qps[q] = (struct rc_qp){.peer_ip = d->ip, .mac_lo = d->mac_lo, .mac_hi = d->mac_hi, .peer_qpn = d->qpn,
                               .mtu_shift = (uint16_t)MTU_SHIFT(mtu), .rd_max = (uint16_t)min32(ord, RD_DEPTH),
                               .sq_psn = sq_psn, .ack_psn = sq_psn, .rq_psn = rq_psn};
    fw_qps[q].peer_qpn = 0;
    fw_qps[q].wire = 1;
    fw_qps[q].state = FW_QP_CONNECTED;
    wire_qps++;
}

uint32_t fw_rc_leave(uint32_t q)
{
    struct rc_qp *c = &rc_qps[q];
    c->peer_ip = 0; /* rx_roce takes a packet only from the QP's peer */
    c->ctl_owed = c->rd_count = c->fatal_syn = 0;
    if (fw_qps[q].state == FW_QP_CONNECTED)
        fw_qps[q].state = FW_QP_ERROR;
    return fw_rq_flush(&fw_qps[q]);
}

void fw_rc_set_gsi(void (*rx)(const struct fw_rc_dest *from, uint32_t data, uint32_t len))
{
    gsi_rx = rx;
}

void fw_rc_post(const struct fw_frame *f, struct fw_qp *qp, uint32_t op, uint32_t wr_id, uint32_t flags, uint32_t m,
                uint32_t mlen, struct wr_result *r)
{
    uint32_t q = (uint32_t)(qp - fw_qps);
    struct rc_qp *c = &rc_qps[q];
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
    *w = (struct rc_wqe){.op = op, .wr_id = wr_id, .flags = flags, .stamp = hal_read32(f->stamp_at),
                         .eng_start = f->eng_start};
    w->sgl.n = mem_rd(WR_BODY(m, rdma ? NF_WR_RDMA_NSGE_OFF : NF_WR_SEND_NSGE_OFF));
    if (rdma) {
        rd64_lo_hi(WR_BODY(m, NF_WR_RDMA_REMOTE_VA_OFF), &w->remote_va);
        w->remote_token = mem_rd(WR_BODY(m, NF_WR_RDMA_REMOTE_TOKEN_OFF));
        if (flags & NF_NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE) {
            r->status = NF_STATUS_NOT_SUPPORTED;
            return;
        }
        if (op == NF_OP_WR_READ && c->rd_max == 0) {
            r->status = NF_STATUS_INVALID_DEVICE_STATE; /* the connection agreed no outbound READs */
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
    w->npkts = w->total ? (w->total + (1u << c->mtu_shift) - 1u) >> c->mtu_shift : 1u;
    w->psn = c->sq_psn;
    c->sq_psn = psn_add(c->sq_psn, w->npkts);
    c->count++;
    (void)pump(q);
    r->status = NF_STATUS_SUCCESS;
    r->cqe_at = FW_RC_CQE_LATER;
}

uint32_t fw_rc_queued(uint32_t q)
{
    return q < FW_QP_CAP && fw_qps[q].wire ? rc_qps[q].count : 0u;
}

void fw_rc_close(uint32_t q)
{
    if (fw_qps[q].wire)
        (void)flush_errors(q);
    fw_rc_drop(q);
}

void fw_rc_drop(uint32_t q)
{
    rc_qps[q] = (struct rc_qp){0};
    fw_qps[q].wire = 0;
}
