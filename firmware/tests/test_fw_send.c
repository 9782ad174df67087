/* SPDX-License-Identifier: Apache-2.0 */
/* Firmware unit tests (fw_test.h): Send, SendAndInvalidate and Receive, the receive
 * pool, QP_FLUSH's count of dropped receives, and their counters. */
#include "fw_test.h"

#define RQ_DEPTH 4u
#define PRIV NF_ADAPTER_PRIVILEGED_TOKEN

/* QP_CREATE with a receive queue: the qpn, or 0 with the status in *st. */
static uint32_t qp_create_rq(uint32_t pd, uint32_t depth, uint32_t max_sge, uint32_t *st)
{
    struct nf_qp_create_req q = {pd, 16, depth, max_sge};
    struct nf_qp_create_rep r = {0, 0};
    uint32_t s = tb_req(NF_OP_QP_CREATE, &q, sizeof(q), &r, sizeof(r));
    if (st)
        *st = s;
    return s == NF_STATUS_SUCCESS ? r.qpn : 0;
}

/* The CQEs the last exchange produced, in order (at most max). */
static int cqes(struct nf_cqe *out, int max)
{
    int n = 0;
    for (int i = 0; i < tb.nmsgs && n < max; i++)
        if (tb.msgs[i].hdr.op == NF_OP_CQE)
            memcpy(&out[n++], tb.msgs[i].body, sizeof(*out));
    return n;
}

/* A work request in its own frame with an SGE list after its body; the CQEs it made. */
static int post(uint16_t op, uint32_t qpn, uint32_t wr_id, uint32_t flags, const void *body, size_t blen,
                const struct nf_sge *sges, uint32_t nsge, struct nf_cqe out[2])
{
    uint8_t b[NF_LINK_MAX_PAYLOAD];
    struct nf_wr_hdr h = {qpn, wr_id, flags, 0};
    memcpy(b, &h, sizeof(h));
    memcpy(b + sizeof(h), body, blen);
    if (nsge)
        memcpy(b + sizeof(h) + blen, sges, sizeof(*sges) * nsge);
    tb_send_one(op, b, sizeof(h) + blen + sizeof(*sges) * nsge);
    return cqes(out, 2);
}

/* NdkReceive: NO_REPLY when accepted (no CQE), else the error CQE's status. */
static uint32_t receive(uint32_t qpn, uint32_t wr_id, const struct nf_sge *sges, uint32_t nsge)
{
    struct nf_wr_receive r = {nsge, 0};
    struct nf_cqe c[2];
    int n = post(NF_OP_WR_RECEIVE, qpn, wr_id, 0, &r, sizeof(r), sges, nsge, c);
    if (n == 0)
        return NO_REPLY;
    return n == 1 && c[0].wr_id == wr_id && c[0].qpn == qpn && c[0].op_type == NF_NDK_OP_RECEIVE ? c[0].status
                                                                                                 : NO_REPLY - 1u;
}

/* NdkSend / NdkSendAndInvalidate: the CQEs (receive's first, then the Send's). */
static int send(uint16_t op, uint32_t qpn, uint32_t wr_id, uint32_t flags, uint32_t inv_token,
                const struct nf_sge *sges, uint32_t nsge, struct nf_cqe out[2])
{
    struct nf_wr_send s = {inv_token, nsge};
    return post(op, qpn, wr_id, flags, &s, sizeof(s), sges, nsge, out);
}

static uint32_t flush(uint32_t qpn, uint32_t *cancelled)
{
    struct nf_qp_req q = {qpn, 0};
    struct nf_qp_flush_rep r = {0xFFFFFFFFu, 0};
    uint32_t st = tb_req(NF_OP_QP_FLUSH, &q, sizeof(q), &r, sizeof(r));
    *cancelled = r.cancelled;
    return st;
}

struct send_env {
    uint32_t a, b, ub;
};

static void send_env(struct send_env *e)
{
    tb_init("sim");
    e->a = qp_create_rq(PD_A, RQ_DEPTH, 2, NULL);
    e->b = qp_create_rq(PD_A, RQ_DEPTH, 2, NULL);
    qp_connect(e->a, e->b);
    qp_connect(e->b, e->a);
    e->ub = user_base();
}

/* Both QPs connected again after an error broke them. */
static void reconnect_both(const struct send_env *e)
{
    qp_reconnect(e->a, e->b);
    qp_reconnect(e->b, e->a);
}

static int cqe_is(const struct nf_cqe *c, uint32_t qpn, uint32_t wr_id, uint32_t status, uint32_t op_type)
{
    return c->qpn == qpn && c->wr_id == wr_id && c->status == status && c->op_type == op_type;
}

static void fill(uint32_t addr, uint32_t n, uint32_t seed)
{
    uint8_t d[NF_LINK_MAX_PAYLOAD / 2];
    for (uint32_t i = 0; i < n; i++)
        d[i] = (uint8_t)(i * 13 + seed);
    mem_write(addr, d, n);
}

void test_send_receive(void)
{
    struct send_env e;
    send_env(&e);
    const uint32_t src = e.ub + 0x10000, dst = e.ub + 0x20000;
    fill(src, 300, 1);
    fill(src + 0x1000, 200, 2);
    fill(src + 0x2000, 77, 3);
    fill(dst, 700, 9);
    uint8_t *mem = nfm_mem(nf_hw_engine());
    uint8_t before_tail[64];
    memcpy(before_tail, mem + dst + 577, sizeof(before_tail));
    /* 1 scatter SGE, 3 gather SGEs (privileged token: logical addresses). */
    struct nf_sge rs[1] = {{dst, 700, PRIV}};
    OK(receive(e.b, 500, rs, 1) == NO_REPLY, "a posted receive makes no CQE");
    struct nf_sge gs[3] = {{src, 300, PRIV}, {src + 0x1000, 200, PRIV}, {src + 0x2000, 77, PRIV}};
    struct nf_cqe c[2];
    int n = send(NF_OP_WR_SEND, e.a, 501, 0, 0, gs, 3, c);
    OK(n == 2 && cqe_is(&c[0], e.b, 500, NF_STATUS_SUCCESS, NF_NDK_OP_RECEIVE) && c[0].bytes == 577 &&
           c[0].token == 0 && c[0].cflags == 0 && cqe_is(&c[1], e.a, 501, NF_STATUS_SUCCESS, NF_NDK_OP_SEND) &&
           c[1].bytes == 577,
       "a Send of 3 SGEs fills a 1-SGE receive: the receive's CQE (577 bytes), then the Send's");
    OK(!memcmp(mem + dst, mem + src, 300) && !memcmp(mem + dst + 300, mem + src + 0x1000, 200) &&
           !memcmp(mem + dst + 500, mem + src + 0x2000, 77) && !memcmp(mem + dst + 577, before_tail, 64),
       "the bytes are in the receive buffer, in order; the rest of the buffer untouched");

    /* 2 scatter SGEs through MRs of the receiver's PD (a registered MR, a fast MR);
     * the gather boundaries fall elsewhere than the scatter boundaries. */
    uint64_t p1[1] = {page_at(50)}, p2[1] = {page_at(51)};
    uint32_t reg = mr_create(PD_A, 0), fast = mr_create(PD_A, 1);
    OK(mr_register(reg, NF_NDK_MR_FLAG_ALLOW_LOCAL_WRITE, 0x700000, PAGE, 0, p1, 1) == NF_STATUS_SUCCESS &&
           frmr_init(fast, 1, 0) == NF_STATUS_SUCCESS &&
           fast_register(e.b, NF_NDK_OP_FLAG_ALLOW_LOCAL_WRITE, fast, p2, 1, 0, PAGE, 0x800000, NULL) ==
               NF_STATUS_SUCCESS,
       "receive MRs registered");
    struct nf_sge rs2[2] = {{0x700000 + 10, 250, reg}, {0x800000 + 20, 400, fast}};
    OK(receive(e.b, 502, rs2, 2) == NO_REPLY && receive(e.b, 503, rs, 1) == NO_REPLY, "two receives posted");
    struct nf_sge gs2[2] = {{src, 100, PRIV}, {src + 0x1000, 200, PRIV}};
    n = send(NF_OP_WR_SEND, e.a, 504, NF_NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT, 0, gs2, 2, c);
    uint32_t r1 = (uint32_t)p1[0] + 10, r2 = (uint32_t)p2[0] + 20;
    OK(n == 2 && cqe_is(&c[0], e.b, 502, NF_STATUS_SUCCESS, NF_NDK_OP_RECEIVE) && c[0].bytes == 300 &&
           c[0].cflags == NF_CQE_FLAG_SOLICITED && c[1].cflags == 0,
       "the oldest receive (2 SGEs) completes first, SOLICITED set by SEND_AND_SOLICIT_EVENT");
    OK(!memcmp(mem + r1, mem + src, 100) && !memcmp(mem + r1 + 100, mem + src + 0x1000, 150) &&
           !memcmp(mem + r2, mem + src + 0x1000 + 150, 50),
       "the bytes are split across the 2 scatter SGEs (250 in the first, 50 in the second)");
    n = send(NF_OP_WR_SEND, e.a, 505, NF_NDK_OP_FLAG_SILENT_SUCCESS, 0, gs2, 1, c);
    OK(n == 1 && cqe_is(&c[0], e.b, 503, NF_STATUS_SUCCESS, NF_NDK_OP_RECEIVE) && c[0].bytes == 100 &&
           c[0].cflags == 0,
       "the next Send fills the next receive (FIFO); SILENT_SUCCESS: no Send CQE, the receive's still");
    /* A zero-length Send fills a receive with 0 bytes. */
    OK(receive(e.b, 506, rs, 1) == NO_REPLY, "receive posted");
    n = send(NF_OP_WR_SEND, e.a, 507, 0, 0, NULL, 0, c);
    OK(n == 2 && cqe_is(&c[0], e.b, 506, NF_STATUS_SUCCESS, NF_NDK_OP_RECEIVE) && c[0].bytes == 0,
       "a Send with no SGE completes a receive with 0 bytes");
    struct nf_stats st;
    int got = stats_get(&st);
    OK(got && st.ops[NF_STAT_OP_WR_SEND] == 4 && st.ops[NF_STAT_OP_WR_RECEIVE] == 4,
       "STATS counts WR_SEND and WR_RECEIVE (%u, %u)", st.ops[NF_STAT_OP_WR_SEND], st.ops[NF_STAT_OP_WR_RECEIVE]);
}

/* A SendAndInvalidate whose token the receiver may not invalidate aborts the connection:
 * the receive CONNECTION_ABORTED (0 bytes), the Send too, both QPs broken, nothing
 * invalidated or written. */
static void inv_abort(const struct send_env *e, uint32_t token, const char *what)
{
    struct nf_sge rs[1] = {{e->ub + 0x20000, 100, PRIV}}, gs[1] = {{e->ub + 0x10000, 64, PRIV}};
    fill(e->ub + 0x10000, 64, 5);
    receive(e->b, 600, rs, 1);
    struct snap s0, s1;
    snap_take(&s0);
    struct nf_cqe c[2];
    int n = send(NF_OP_WR_SEND_INVALIDATE, e->a, 601, 0, token, gs, 1, c);
    snap_take(&s1);
    OK(n == 2 && cqe_is(&c[0], e->b, 600, NF_STATUS_CONNECTION_ABORTED, NF_NDK_OP_RECEIVE) && c[0].bytes == 0 &&
           c[0].token == 0 && cqe_is(&c[1], e->a, 601, NF_STATUS_CONNECTION_ABORTED, NF_NDK_OP_SEND) &&
           snap_same(&s0, &s1) && qp_state(e->a) == FW_QP_ERROR && qp_state(e->b) == FW_QP_ERROR,
       "SendAndInvalidate of %s: connection aborted, nothing invalidated or written, both QPs broken", what);
    snap_free(&s0);
    snap_free(&s1);
    reconnect_both(e);
}

void test_send_invalidate(void)
{
    struct send_env e;
    send_env(&e);
    uint64_t pg[1] = {page_at(60)};
    uint32_t fast = mr_create(PD_A, 1), other = mr_create(PD_B, 1), reg = mr_create(PD_A, 0);
    uint32_t qb = qp_create_rq(PD_B, 1, 1, NULL);
    qp_connect(qb, e.a);
    frmr_init(fast, 1, 1);
    frmr_init(other, 1, 1);
    OK(fast_register(e.b, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, fast, pg, 1, 0, PAGE, 0x40000, NULL) ==
               NF_STATUS_SUCCESS &&
           fast_register(qb, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, other, pg, 1, 0, PAGE, 0x50000, NULL) ==
               NF_STATUS_SUCCESS &&
           mr_register(reg, NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE, 0x60000, PAGE, 0, pg, 1) == NF_STATUS_SUCCESS,
       "the receiver's MRs: a fast MR of its PD, one of another PD, a registered MR (all VALID)");
    inv_abort(&e, 0x12345600u | 0x77u, "an unknown token");
    inv_abort(&e, fast ^ 0x1u, "a stale key");
    inv_abort(&e, other, "another PD's fast MR");
    inv_abort(&e, reg, "an NdkRegisterMr region");
    OK(mpt_state(fast) == NF_MPT_STATE_VALID && mpt_state(other) == NF_MPT_STATE_VALID &&
           mpt_state(reg) == NF_MPT_STATE_VALID,
       "every token is still VALID after the aborts");
    /* Too large, and a refused gather, with a valid token: the token stays VALID. */
    struct nf_sge rs_ok[1] = {{e.ub + 0x20000, 100, PRIV}}, gs[1] = {{e.ub + 0x10000, 64, PRIV}};
    const struct {
        struct nf_sge r, g;
        uint32_t recv_status, send_status;
        const char *what;
    } refused[] = {
        {{e.ub + 0x20000, 10, PRIV}, gs[0], NF_STATUS_BUFFER_TOO_SMALL, NF_STATUS_CONNECTION_ABORTED,
         "larger than the receive: BUFFER_TOO_SMALL"},
        {rs_ok[0], {0x1000, 64, 0x00000101u}, NF_STATUS_CONNECTION_ABORTED, NF_STATUS_ACCESS_VIOLATION,
         "with a refused gather SGE: ACCESS_VIOLATION"},
    };
    struct nf_cqe c[2];
    int n;
    for (uint32_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        receive(e.b, 610 + 2 * i, &refused[i].r, 1);
        struct snap s0, s1;
        snap_take(&s0);
        n = send(NF_OP_WR_SEND_INVALIDATE, e.a, 611 + 2 * i, 0, fast, &refused[i].g, 1, c);
        snap_take(&s1);
        OK(n == 2 && c[0].status == refused[i].recv_status && c[1].status == refused[i].send_status &&
               mpt_state(fast) == NF_MPT_STATE_VALID && snap_same(&s0, &s1),
           "SendAndInvalidate %s, the token stays VALID, nothing written", refused[i].what);
        snap_free(&s0);
        snap_free(&s1);
        reconnect_both(&e);
    }
    /* Success: the token invalidated before the receive completes. */
    fill(e.ub + 0x10000, 64, 7);
    receive(e.b, 620, rs_ok, 1);
    n = send(NF_OP_WR_SEND_INVALIDATE, e.a, 621, 0, fast, gs, 1, c);
    OK(n == 2 && cqe_is(&c[0], e.b, 620, NF_STATUS_SUCCESS, NF_NDK_OP_RECEIVE_AND_INVALIDATE) && c[0].bytes == 64 &&
           c[0].token == fast && cqe_is(&c[1], e.a, 621, NF_STATUS_SUCCESS, NF_NDK_OP_SEND) &&
           mpt_state(fast) == NF_MPT_STATE_INVALID,
       "SendAndInvalidate: RECEIVE_AND_INVALIDATE with the token; the MR is INVALID");
    struct nf_sge w[1] = {{e.ub + 0x10000, 8, PRIV}};
    OK(rdma(NF_OP_WR_WRITE, e.a, 0, 0x40000, fast, w, 1, &c[0]) == NF_STATUS_ACCESS_VIOLATION &&
           c[0].refuse == NF_REFUSE_NOT_VALID,
       "an RDMA Write through the invalidated token is refused");
    reconnect_both(&e);
    inv_abort(&e, fast, "a token already invalid");
    struct nf_stats st;
    OK(stats_get(&st) && st.ops[NF_STAT_OP_WR_SEND_INVALIDATE] == 8 &&
           st.refused[NF_STAT_STATUS_CONNECTION_ABORTED] == 12 && st.refused[NF_STAT_STATUS_BUFFER_TOO_SMALL] == 1,
       "STATS counts WR_SEND_INVALIDATE and the aborts by status");
}

void test_send_errors(void)
{
    struct send_env e;
    send_env(&e);
    struct nf_sge gs[1] = {{e.ub + 0x10000, 64, PRIV}}, rs[1] = {{e.ub + 0x20000, 32, PRIV}};
    struct nf_cqe c[2];
    int n = send(NF_OP_WR_SEND, e.a, 700, 0, 0, gs, 1, c);
    OK(n == 1 && cqe_is(&c[0], e.a, 700, NF_STATUS_IO_TIMEOUT, NF_NDK_OP_SEND) && qp_state(e.a) == FW_QP_ERROR &&
           qp_state(e.b) == FW_QP_CONNECTED,
       "no receive posted: the Send completes IO_TIMEOUT, its QP breaks, the receiver does not");
    qp_reconnect(e.a, e.b);
    OK(receive(e.b, 701, rs, 1) == NO_REPLY, "receive of 32 bytes");
    struct snap s0, s1;
    snap_take(&s0);
    n = send(NF_OP_WR_SEND, e.a, 702, 0, 0, gs, 1, c);
    snap_take(&s1);
    OK(n == 2 && cqe_is(&c[0], e.b, 701, NF_STATUS_BUFFER_TOO_SMALL, NF_NDK_OP_RECEIVE) &&
           cqe_is(&c[1], e.a, 702, NF_STATUS_CONNECTION_ABORTED, NF_NDK_OP_SEND) && snap_same(&s0, &s1) &&
           qp_state(e.a) == FW_QP_ERROR && qp_state(e.b) == FW_QP_ERROR,
       "a Send larger than the receive: BUFFER_TOO_SMALL / CONNECTION_ABORTED, nothing written, both broken");
    snap_free(&s0);
    snap_free(&s1);
    reconnect_both(&e);
    /* A refused scatter SGE (an MR of another PD). */
    uint64_t pg[1] = {page_at(70)};
    uint32_t other = mr_create(PD_B, 0);
    mr_register(other, NF_NDK_MR_FLAG_ALLOW_LOCAL_WRITE, 0x90000, PAGE, 0, pg, 1);
    struct nf_sge rs_bad[2] = {{e.ub + 0x20000, 16, PRIV}, {0x90000, 100, other}};
    fill(e.ub + 0x10000, 64, 4);
    OK(receive(e.b, 703, rs_bad, 2) == NO_REPLY, "a receive naming another PD's MR is accepted (checked later)");
    n = send(NF_OP_WR_SEND, e.a, 704, 0, 0, gs, 1, c);
    uint8_t *mem = nfm_mem(nf_hw_engine());
    OK(n == 2 && cqe_is(&c[0], e.b, 703, NF_STATUS_ACCESS_VIOLATION, NF_NDK_OP_RECEIVE) &&
           c[0].refuse == NF_REFUSE_WRONG_PD && cqe_is(&c[1], e.a, 704, NF_STATUS_CONNECTION_ABORTED, NF_NDK_OP_SEND) &&
           qp_state(e.a) == FW_QP_ERROR && qp_state(e.b) == FW_QP_ERROR &&
           !memcmp(mem + e.ub + 0x20000, mem + e.ub + 0x10000, 16),
       "a refused scatter SGE: the receive ACCESS_VIOLATION, the Send CONNECTION_ABORTED (copied bytes stay)");
    reconnect_both(&e);
    /* A refused gather SGE. */
    struct nf_sge gs_bad[2] = {{e.ub + 0x10000, 8, PRIV}, {0x90000, 8, other}};
    receive(e.b, 705, rs, 1);
    n = send(NF_OP_WR_SEND, e.a, 706, 0, 0, gs_bad, 2, c);
    OK(n == 2 && cqe_is(&c[0], e.b, 705, NF_STATUS_CONNECTION_ABORTED, NF_NDK_OP_RECEIVE) &&
           cqe_is(&c[1], e.a, 706, NF_STATUS_ACCESS_VIOLATION, NF_NDK_OP_SEND) && c[1].refuse == NF_REFUSE_WRONG_PD &&
           qp_state(e.a) == FW_QP_ERROR && qp_state(e.b) == FW_QP_ERROR,
       "a refused gather SGE: the Send ACCESS_VIOLATION, the receive CONNECTION_ABORTED, both broken");
    OK(send(NF_OP_WR_SEND, e.a, 707, 0, 0, gs, 1, c) == 1 && c[0].status == NF_STATUS_CANCELLED,
       "a Send on a broken QP completes CANCELLED");
    reconnect_both(&e);
    receive(e.b, 708, rs, 1);
    OK(send(NF_OP_WR_SEND, e.a, 709, NF_NDK_OP_FLAG_INLINE, 0, gs, 1, c) == 1 &&
           c[0].status == NF_STATUS_INVALID_PARAMETER && fw_qps[e.b & 0xFFu].rq_count == 1,
       "INLINE is not supported: INVALID_PARAMETER, the receive stays pending");
    uint32_t lone = qp_create_rq(PD_A, 1, 1, NULL);
    OK(send(NF_OP_WR_SEND, lone, 710, 0, 0, gs, 1, c) == 1 && c[0].status == NF_STATUS_CONNECTION_INVALID,
       "a Send on an unconnected QP: CONNECTION_INVALID");
    struct nf_stats st;
    OK(stats_get(&st) && st.refused[NF_STAT_STATUS_IO_TIMEOUT] == 1, "STATS counts IO_TIMEOUT");
}

void test_receive_rules(void)
{
    struct send_env e;
    send_env(&e);
    struct nf_sge rs[3] = {{e.ub + 0x20000, 32, PRIV}, {e.ub + 0x20100, 32, PRIV}, {e.ub + 0x20200, 32, PRIV}};
    uint32_t lone = qp_create_rq(PD_A, 2, 1, NULL);
    OK(receive(lone, 800, rs, 1) == NO_REPLY, "a receive on a QP not connected yet is accepted");
    qp_connect(lone, e.a);
    qp_op(NF_OP_QP_DISCONNECT, e.a);
    qp_connect(e.a, lone);
    struct nf_sge gs[1] = {{e.ub + 0x10000, 16, PRIV}};
    struct nf_cqe c[2];
    OK(send(NF_OP_WR_SEND, e.a, 801, 0, 0, gs, 1, c) == 2 && cqe_is(&c[0], lone, 800, NF_STATUS_SUCCESS,
                                                                   NF_NDK_OP_RECEIVE),
       "... and a Send after connecting fills it");
    OK(receive(lone, 802, rs, 2) == NF_STATUS_INVALID_PARAMETER && qp_state(lone) == FW_QP_ERROR,
       "more SGEs than the QP's max_recv_sge: INVALID_PARAMETER CQE (RECEIVE), the QP breaks");
    OK(receive(lone, 803, rs, 1) == NF_STATUS_CANCELLED, "a receive on a broken QP: CANCELLED");
    struct nf_wr_receive rb = {1, 0};
    OK(post(NF_OP_WR_RECEIVE, e.b, 804, NF_NDK_OP_FLAG_SILENT_SUCCESS, &rb, sizeof(rb), rs, 1, c) == 1 &&
           c[0].status == NF_STATUS_INVALID_PARAMETER && c[0].op_type == NF_NDK_OP_RECEIVE,
       "a receive with flags: INVALID_PARAMETER");
    qp_reconnect(e.b, e.a);
    for (uint32_t i = 0; i < RQ_DEPTH; i++)
        receive(e.b, 810 + i, rs, 1);
    OK(receive(e.b, 820, rs, 1) == NF_STATUS_INSUFFICIENT_RESOURCES && qp_state(e.b) == FW_QP_ERROR,
       "a receive beyond rq_depth pending: INSUFFICIENT_RESOURCES, the QP breaks");
    uint32_t n = 0;
    uint32_t fst = flush(e.b, &n);
    OK(fst == NF_STATUS_SUCCESS && n == RQ_DEPTH, "QP_FLUSH drops the %u pending receives (%u)", RQ_DEPTH, n);
    OK(flush(e.b, &n) == NF_STATUS_SUCCESS && n == 0, "a second flush drops none");
    qp_op(NF_OP_QP_DISCONNECT, e.b);
    receive(e.b, 830, rs, 1);
    receive(e.b, 831, rs, 1);
    OK(flush(e.b, &n) == NF_STATUS_SUCCESS && n == 2 && qp_state(e.b) == FW_QP_RESET,
       "QP_FLUSH on a QP in RESET drops its receives too (it stays in RESET)");
    struct nf_stats st;
    OK(stats_get(&st) && st.refused[NF_STAT_STATUS_INSUFFICIENT_RESOURCES] >= 1, "STATS counts the refusals");
}

void test_recv_pool(void)
{
    tb_init("ulx3s_25k"); /* a pool of NF_PROFILE_ULX3S_25K_RECV_ENTRIES */
    uint32_t st;
    OK(qp_create_rq(PD_A, NF_ADAPTER_MAX_RQ_DEPTH + 1u, 1, &st) == 0 && st == NF_STATUS_INVALID_PARAMETER,
       "rq_depth > MAX_RQ_DEPTH: INVALID_PARAMETER");
    OK(qp_create_rq(PD_A, 1, NF_ADAPTER_MAX_RECV_SGE + 1u, &st) == 0 && st == NF_STATUS_INVALID_PARAMETER,
       "max_recv_sge > MAX_RECV_SGE: INVALID_PARAMETER");
    uint32_t q[NF_PROFILE_ULX3S_25K_RECV_ENTRIES / NF_ADAPTER_MAX_RQ_DEPTH];
    int all = 1;
    for (uint32_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
        all &= (q[i] = qp_create_rq(PD_A, NF_ADAPTER_MAX_RQ_DEPTH, 1, NULL)) != 0;
    OK(all, "QPs reserving the whole pool");
    OK(qp_create_rq(PD_A, 1, 1, &st) == 0 && st == NF_STATUS_INSUFFICIENT_RESOURCES,
       "the pool cannot reserve one more: INSUFFICIENT_RESOURCES");
    uint32_t q0 = qp_create_rq(PD_A, 0, 0, NULL);
    OK(q0 != 0, "a QP without a receive queue still fits");
    struct nf_sge rs[1] = {{user_base(), 8, PRIV}};
    OK(receive(q0, 1, rs, 0) == NF_STATUS_INSUFFICIENT_RESOURCES, "... and takes no receive");
    receive(q[0], 2, rs, 1);
    receive(q[0], 3, rs, 1);
    OK(qp_op(NF_OP_QP_DESTROY, q[0]) == NF_STATUS_SUCCESS && (q[0] = qp_create_rq(PD_A, NF_ADAPTER_MAX_RQ_DEPTH, 1,
                                                                                  NULL)) != 0,
       "QP_DESTROY (with receives pending) gives its reservation back");
    int full = 1;
    for (uint32_t i = 0; i < NF_ADAPTER_MAX_RQ_DEPTH; i++)
        full &= receive(q[0], 10 + i, rs, 1) == NO_REPLY;
    OK(full, "the new QP holds MAX_RQ_DEPTH receives (entries of the destroyed QP came back)");
    OK(tb_req(NF_OP_ADAPTER_RESET, NULL, 0, NULL, 0) == NF_STATUS_SUCCESS, "ADAPTER_RESET");
    all = 1;
    for (uint32_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
        all &= qp_create_rq(PD_A, NF_ADAPTER_MAX_RQ_DEPTH, 1, NULL) != 0;
    OK(all && qp_create_rq(PD_A, 1, 1, NULL) == 0, "ADAPTER_RESET frees the pool: it reserves whole again");
}
