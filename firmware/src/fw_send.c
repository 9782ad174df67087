/* SPDX-License-Identifier: Apache-2.0 */
/* Send, SendAndInvalidate and Receive (the adapter is loopback: a Send fills the oldest
 * pending receive of the QP its QP is connected to). A receive is stored in the QP's
 * receive queue when posted (its SGEs unchecked) and completes when a Send fills it;
 * the engine moves the bytes, one DMA per segment pair, checking each gather SGE
 * (LOCAL_READ, the sender's PD) and each scatter SGE (LOCAL_WRITE, the receiver's PD)
 * as its bytes move. Messages run in arrival order, so a Send sees the receive queue as
 * it is now: with no receive pending the receiver is not ready and can never become
 * ready while the Send waits (retry limit 0): the Send fails IO_TIMEOUT.
 * Layer: part of the work-request layer (dispatched by fw_wr.c); calls fw_tables and
 * fw_state; the receive's CQE goes through the frame's reply cursor. */
#include "fw_state.h"
#include "fw_tables.h"
#include "fw_wr_int.h"
#include "hal.h"

#define WR_MIN(size) (NF_MSG_HDR_SIZE + NF_WR_HDR_SIZE + (size))

void wr_receive(struct fw_qp *qp, uint32_t wr_id, uint32_t flags, uint32_t m, uint32_t mlen, struct wr_result *r)
{
    r->status = NF_STATUS_INVALID_PARAMETER;
    if (mlen < WR_MIN(NF_WR_RECEIVE_SIZE))
        return;
    uint32_t nsge = mem_rd(WR_BODY(m, NF_WR_RECEIVE_NSGE_OFF));
    if (flags & ~(uint32_t)NF_KNOWN_FLAGS_RECEIVE || nsge > qp->max_recv_sge ||
        nsge * NF_SGE_SIZE > mlen - WR_MIN(NF_WR_RECEIVE_SIZE))
        return;
    if (qp->rq_count >= qp->rq_depth) {
        r->status = NF_STATUS_INSUFFICIENT_RESOURCES; /* rq_depth receives pending already */
        return;
    }
    struct fw_recv *rv = fw_rq_push(qp);
    rv->wr_id = wr_id;
    rv->nsge = (uint16_t)nsge;
    for (uint32_t k = 0; k < nsge; k++) {
        hal_win s = mem_win(WR_BODY(m, NF_WR_RECEIVE_SIZE + k * NF_SGE_SIZE));
        rv->sge[k].addr_lo = win_rd(s, NF_SGE_ADDR_OFF);
        rv->sge[k].addr_hi = win_rd(s, NF_SGE_ADDR_OFF + 4u);
        rv->sge[k].len = win_rd(s, NF_SGE_LEN_OFF);
        rv->sge[k].token = win_rd(s, NF_SGE_TOKEN_OFF);
    }
    r->status = NF_STATUS_SUCCESS;
}

/* The gather list of a Send, read from its message. */
struct gather {
    uint64_t addr[NF_ADAPTER_MAX_SGE];
    uint32_t len[NF_ADAPTER_MAX_SGE], token[NF_ADAPTER_MAX_SGE];
    uint32_t nsge, pd;
};

/* Copy total bytes from the gather list into the receive's SGEs, one engine DMA per
 * segment pair (the largest piece both the current gather and scatter SGE hold). The
 * receive holds at least total bytes (checked), so the loop ends within nsge + the
 * receive's nsge steps, each finishing one SGE. Returns the STATUS_WORD of the first
 * refusal (SIDE 0: the sender's gather SGE, 1: the receiver's scatter SGE), or 0;
 * *moved = bytes copied. */
static uint32_t copy_segments(const struct gather *g, const struct fw_recv *rv, uint32_t rpd, uint32_t total,
                              uint32_t *moved)
{
    uint32_t gi = 0, ri = 0, goff = 0, roff = 0;
    *moved = 0;
    while (total) {
        while (goff == g->len[gi]) { /* skip finished (and empty) SGEs: no byte of theirs moves */
            gi++;
            goff = 0;
        }
        while (roff == rv->sge[ri].len) {
            ri++;
            roff = 0;
        }
        const struct fw_recv_sge *rs = &rv->sge[ri];
        uint32_t n = g->len[gi] - goff;
        if (n > rs->len - roff)
            n = rs->len - roff;
        uint64_t rbase = (uint64_t)rs->addr_hi << 32 | rs->addr_lo;
        struct fw_dma_side src, dst;
        wr_local_side(&src, g->addr[gi] + goff, g->token[gi], g->pd, NF_ACCESS_LOCAL_READ);
        wr_local_side(&dst, rbase + roff, rs->token, rpd, NF_ACCESS_LOCAL_WRITE);
        uint32_t st, done = 0;
        if (src.addr < g->addr[gi]) {
            st = NF_STATUS_WORD_CODE_PUT(NF_REFUSE_OUT_OF_BOUNDS); /* the gather range wraps */
        } else if (dst.addr < rbase) {
            st = NF_STATUS_WORD_CODE_PUT(NF_REFUSE_OUT_OF_BOUNDS) | NF_STATUS_WORD_SIDE_MASK; /* scatter wraps */
        } else {
            st = fw_dma(&src, &dst, n, &done);
        }
        *moved += done;
        if (NF_STATUS_WORD_CODE_GET(st) != NF_REFUSE_OK)
            return st;
        goff += n;
        roff += n;
        total -= n;
    }
    return 0;
}

/* Complete the receiving QP's oldest receive with status (a failure breaks that QP). */
static void receive_done(const struct fw_frame *f, struct fw_qp *p, uint32_t pqpn, const struct wr_result *rr,
                         uint32_t op_type, uint32_t token, uint32_t cflags)
{
    uint32_t wr_id = fw_rq_head(p)->wr_id;
    fw_rq_pop(p);
    if (rr->status != NF_STATUS_SUCCESS)
        wr_failed(p, rr->status, rr->refuse);
    wr_put_cqe(f, pqpn, wr_id, rr, op_type, token, cflags);
}

void wr_send(const struct fw_frame *f, struct fw_qp *qp, uint32_t op, uint32_t flags, uint32_t m, uint32_t mlen,
             struct wr_result *r)
{
    r->status = NF_STATUS_INVALID_PARAMETER;
    if (mlen < WR_MIN(NF_WR_SEND_SIZE))
        return;
    uint32_t inv_token = mem_rd(WR_BODY(m, NF_WR_SEND_INV_TOKEN_OFF));
    struct gather g;
    g.nsge = mem_rd(WR_BODY(m, NF_WR_SEND_NSGE_OFF));
    g.pd = qp->pd;
    /* INLINE is an unknown flag here: MaxInlineDataSize is 0. */
    if (flags & ~(uint32_t)NF_KNOWN_FLAGS_SEND || g.nsge > NF_ADAPTER_MAX_SGE ||
        g.nsge * NF_SGE_SIZE > mlen - WR_MIN(NF_WR_SEND_SIZE))
        return;
    uint64_t total = wr_read_sges(WR_BODY(m, NF_WR_SEND_SIZE), g.nsge, g.addr, g.len, g.token);
    if (total > 0xFFFFFFFFu)
        return;
    uint32_t pq = fw_qp_lookup(qp->peer_qpn);
    if (pq == FW_NO_INDEX) {
        r->status = NF_STATUS_CONNECTION_INVALID; /* the other end is gone */
        return;
    }
    struct fw_qp *p = &fw_qps[pq];
    if (p->state == FW_QP_ERROR || p->rq_count == 0) {
        /* Receiver not ready: in order, no receive can arrive while the Send waits.
         * The receiver is unaffected (a broken one takes no receive). */
        r->status = NF_STATUS_IO_TIMEOUT;
        return;
    }
    const struct fw_recv *rv = fw_rq_head(p);
    struct wr_result rr = {NF_STATUS_CONNECTION_ABORTED, 0, 0, 0};
    uint32_t inv = FW_NO_INDEX, st;
    uint64_t room = 0;
    for (uint32_t k = 0; k < rv->nsge; k++)
        room += rv->sge[k].len;
    if (op == NF_OP_WR_SEND_INVALIDATE && (inv = wr_inv_target(p->pd, inv_token, &st)) == FW_NO_INDEX) {
        /* The sender named a token the receiver may not invalidate: the connection is
         * aborted; nothing is invalidated, no byte written. */
        r->status = NF_STATUS_CONNECTION_ABORTED;
    } else if (total > room) {
        rr.status = NF_STATUS_BUFFER_TOO_SMALL; /* nothing written */
        r->status = NF_STATUS_CONNECTION_ABORTED;
    } else if (NF_STATUS_WORD_CODE_GET(st = copy_segments(&g, rv, p->pd, (uint32_t)total, &r->bytes)) !=
               NF_REFUSE_OK) {
        /* Refused by the side whose SGE it was; the other side's request aborts. */
        struct wr_result *own = NF_STATUS_WORD_SIDE_GET(st) ? &rr : r;
        rr.bytes = r->bytes;
        r->status = NF_STATUS_CONNECTION_ABORTED;
        own->refuse = NF_STATUS_WORD_CODE_GET(st);
        own->status = fw_eng_failed(own->refuse, NF_STATUS_ACCESS_VIOLATION);
    } else {
        rr.bytes = r->bytes;
        rr.status = NF_STATUS_SUCCESS;
        if (inv != FW_NO_INDEX)
            wr_invalidate(inv, &rr); /* before the receive completes */
        r->status = rr.status == NF_STATUS_SUCCESS ? NF_STATUS_SUCCESS : NF_STATUS_CONNECTION_ABORTED;
    }
    int invalidated = inv != FW_NO_INDEX && rr.status == NF_STATUS_SUCCESS;
    receive_done(f, p, qp->peer_qpn, &rr, invalidated ? NF_NDK_OP_RECEIVE_AND_INVALIDATE : NF_NDK_OP_RECEIVE,
                 invalidated ? inv_token : 0u,
                 rr.status == NF_STATUS_SUCCESS && flags & NF_NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT
                     ? NF_CQE_FLAG_SOLICITED
                     : 0u);
}
