/* SPDX-License-Identifier: Apache-2.0 */
/* Firmware unit tests (fw_test.h): memory windows. MW_CREATE, the rules of WR_BIND and
 * the window entry it writes, invalidation of a window, and the cascade from an MR to
 * the windows bound to it. test_mw_grants checks the grants through a
 * window end to end: it needs an engine model that knows WINDOW entries. */
#include "fw_test.h"

#define RW NF_NDK_OP_FLAG_ALLOW_REMOTE_READ | NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE
#define MR_VA 0x100100u /* FBO 0x100, two pages long: three pages */
#define MR_FBO 0x100u
#define MR_LEN (2u * PAGE)
#define MR_PAGES 3u

static const uint32_t mr_page_numbers[MR_PAGES] = {20, 25, 22}; /* scattered on purpose */

/* An NdkRegisterMr region of pd over mr_page_numbers at MR_VA: its token. */
static uint32_t reg_mr(uint32_t pd, uint32_t flags)
{
    uint64_t pg[MR_PAGES];
    pages_at(pg, MR_PAGES, mr_page_numbers);
    uint32_t t = mr_create(pd, 0);
    return mr_register(t, flags, MR_VA, MR_LEN, MR_FBO, pg, MR_PAGES) == NF_STATUS_SUCCESS ? t : 0;
}

static uint32_t nwin(uint32_t token) { return fw_mrs[NF_TOKEN_INDEX_GET(token)].nwin; }

void test_mw_create(void)
{
    tb_init("sim");
    struct nf_stats s0, s1;
    stats_get(&s0);
    uint32_t st;
    uint32_t mw = mw_create(PD_A, &st);
    uint32_t w[NFM_MPT_WORDS];
    mpt_get(mw, w);
    OK(st == NF_STATUS_SUCCESS && mw != 0 && NF_MPT_W0_KIND_GET(w[0]) == NF_MPT_KIND_WINDOW &&
           NF_MPT_W0_STATE_GET(w[0]) == NF_MPT_STATE_INVALID && NF_MPT_W0_KEY_GET(w[0]) == NF_TOKEN_KEY_GET(mw) &&
           NF_MPT_W1_PD_GET(w[1]) == PD_A,
       "MW_CREATE: a WINDOW entry of the PD with the token's key, INVALID until bound");
    mw_create(0, &st);
    OK(st == NF_STATUS_INVALID_PARAMETER, "MW_CREATE with PD 0: INVALID_PARAMETER");
    struct nf_mr_create_req q = {PD_A, 1};
    struct nf_mr_create_rep r = {0, 0};
    OK(tb_req(NF_OP_MW_CREATE, &q, sizeof(q), &r, sizeof(r)) == NF_STATUS_INVALID_PARAMETER,
       "MW_CREATE with fast_register 1: INVALID_PARAMETER");
    stats_get(&s1);
    OK(s1.ops[NF_STAT_OP_MW_CREATE] - s0.ops[NF_STAT_OP_MW_CREATE] == 3u, "STATS counts every MW_CREATE");
    OK(token_op(NF_OP_MR_REGISTER, mw) == NF_STATUS_INVALID_PARAMETER &&
           token_op(NF_OP_MR_DEREGISTER, mw) == NF_STATUS_INVALID_PARAMETER &&
           frmr_init(mw, 1, 1) == NF_STATUS_INVALID_PARAMETER,
       "a window is neither registered, deregistered nor initialized as an MR");
    OK(token_op(NF_OP_MR_DESTROY, mw) == NF_STATUS_SUCCESS && mpt_state(mw) == NF_MPT_STATE_FREE &&
           token_op(NF_OP_MR_DESTROY, mw) == NF_STATUS_INVALID_PARAMETER,
       "MR_DESTROY frees a window's entry; its token is stale afterwards");
}

void test_bind_rules(void)
{
    struct wr_env e;
    wr_env(&e);
    uint32_t mr = reg_mr(PD_A, NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    uint32_t mr_ro = reg_mr(PD_A, NF_NDK_MR_FLAG_ALLOW_REMOTE_READ);
    uint32_t mr_b = reg_mr(PD_B, NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    uint32_t mw = mw_create(PD_A, NULL), mw_b = mw_create(PD_B, NULL);
    OK(mr && mr_ro && mr_b && mw && mw_b, "bind rules: MRs registered, windows created");
    struct {
        uint32_t qp, flags, mr, mw;
        uint64_t va, len;
        uint32_t want;
        const char *what;
    } cases[] = {
        {e.qp_unconnected, 0, mr, mw, MR_VA, 64, NF_STATUS_CONNECTION_INVALID, "QP not connected"},
        {e.qp, NF_NDK_OP_FLAG_INLINE, mr, mw, MR_VA, 64, NF_STATUS_INVALID_PARAMETER, "unknown flag (INLINE)"},
        {e.qp, NF_NDK_OP_FLAG_RDMA_READ_SINK, mr, mw, MR_VA, 64, NF_STATUS_INVALID_PARAMETER, "unknown flag (READ_SINK)"},
        {e.qp, 0, mr, mr_ro, MR_VA, 64, NF_STATUS_INVALID_PARAMETER, "mw_token names an MR"},
        {e.qp, 0, mr, mw ^ 1u, MR_VA, 64, NF_STATUS_INVALID_PARAMETER, "mw_token with a stale key"},
        {e.qp, 0, mw_b, mw, MR_VA, 64, NF_STATUS_INVALID_PARAMETER, "mr_token names a window"},
        {e.qp, 0, mr ^ 1u, mw, MR_VA, 64, NF_STATUS_INVALID_PARAMETER, "mr_token with a stale key"},
        {e.qp, 0, mr_b, mw, MR_VA, 64, NF_STATUS_ACCESS_VIOLATION, "an MR of another PD"},
        {e.qp, 0, mr, mw_b, MR_VA, 64, NF_STATUS_ACCESS_VIOLATION, "a window of another PD"},
        {e.qp, 0, e.fast, mw, 0, 64, NF_STATUS_INVALID_DEVICE_STATE, "a fast-register MR not registered"},
        {e.qp, 0, mr, mw, MR_VA, 0, NF_STATUS_INVALID_PARAMETER, "length 0"},
        {e.qp, 0, mr, mw, MR_VA - 1u, 64, NF_STATUS_INVALID_PARAMETER, "va below the MR"},
        {e.qp, 0, mr, mw, MR_VA + MR_LEN - 63u, 64, NF_STATUS_INVALID_PARAMETER, "the end past the MR"},
        {e.qp, 0, mr, mw, MR_VA, MR_LEN + 1u, NF_STATUS_INVALID_PARAMETER, "longer than the MR"},
        {e.qp, 0, mr, mw, UINT64_MAX - 8u, 64, NF_STATUS_INVALID_PARAMETER, "a range that wraps"},
        {e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, mr_ro, mw, MR_VA, 64, NF_STATUS_ACCESS_VIOLATION,
         "remote write on an MR without local write"},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct snap s0;
        snap_take(&s0);
        uint32_t st = bind(cases[k].qp, cases[k].flags, cases[k].mr, cases[k].mw, cases[k].va, cases[k].len);
        OK(refused_cleanly(&e, cases[k].qp, st, cases[k].want, &s0), "WR_BIND refused (%s): status %u",
           cases[k].what, st);
    }
    qp_op(NF_OP_QP_FLUSH, e.qp);
    OK(bind(e.qp, 0, mr, mw, MR_VA, 64) == NF_STATUS_CANCELLED && mpt_state(mw) == NF_MPT_STATE_INVALID,
       "WR_BIND on a QP in ERROR: CANCELLED, nothing bound");
    qp_reconnect(e.qp, e.peer);
    OK(bind(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_READ, mr_ro, mw, MR_VA, 64) == NF_STATUS_SUCCESS &&
           mpt_state(mw) == NF_MPT_STATE_VALID,
       "remote read only needs no local write on the MR");
    OK(bind(e.qp, RW | NF_NDK_OP_FLAG_SILENT_SUCCESS | NF_NDK_OP_FLAG_READ_FENCE | NF_NDK_OP_FLAG_DEFER, mr, mw,
            MR_VA, MR_LEN) == NO_REPLY &&
           mpt_state(mw) == NF_MPT_STATE_VALID,
       "every known flag, SILENT_SUCCESS: bound over the whole MR, no CQE");
}

void test_bind_entry(void)
{
    struct wr_env e;
    wr_env(&e);
    uint32_t mr = reg_mr(PD_A, NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE), mr2 = reg_mr(PD_A, NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    uint32_t mw = mw_create(PD_A, NULL);
    struct nf_stats s0, s1;
    stats_get(&s0);
    uint32_t mrw[NFM_MPT_WORDS], w[NFM_MPT_WORDS];
    mpt_get(mr, mrw);
    uint32_t mtt_base = NF_MPT_W5_MTT_BASE_GET(mrw[5]);
    /* off = (va - base) + FBO = 0xE00 + 0x100: the window starts at 0xF00 of the MR's
     * first page and spans two pages. */
    uint64_t va = MR_VA + 0xE00u;
    OK(bind(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_READ, mr, mw, va, 0x300) == NF_STATUS_SUCCESS,
       "WR_BIND: SUCCESS with a CQE of op_type BIND");
    mpt_get(mw, w);
    OK(NF_MPT_W0_STATE_GET(w[0]) == NF_MPT_STATE_VALID && NF_MPT_W0_KIND_GET(w[0]) == NF_MPT_KIND_WINDOW &&
           NF_MPT_W0_KEY_GET(w[0]) == NF_TOKEN_KEY_GET(mw) && (w[0] & NF_MPT_W0_REMOTE_READ_MASK) &&
           !(w[0] & (NF_MPT_W0_REMOTE_WRITE_MASK | NF_MPT_W0_LOCAL_WRITE_MASK)),
       "window W0: VALID, WINDOW, its key, remote read only");
    OK(NF_MPT_W1_PD_GET(w[1]) == PD_A && NF_MPT_W1_FBO_GET(w[1]) == 0xF00u && w[2] == (uint32_t)va && w[3] == 0 &&
           w[4] == 0x300u,
       "window W1-W4: the MR's PD, FBO 0xF00, base = the window's va, length");
    OK(NF_MPT_W5_MTT_BASE_GET(w[5]) == mtt_base && NF_MPT_W5_PAGE_CAP_GET(w[5]) == 0 &&
           NF_MPT_W6_PAGES_GET(w[6]) == 2u && NF_MPT_W6_PARENT_GET(w[6]) == NF_TOKEN_INDEX_GET(mr),
       "window W5/W6: the MR's MTT base, two pages, PARENT = the MR's index");
    OK(nwin(mr) == 1u, "the MR counts one bound window");
    /* Re-bound to the second page of another MR: the new binding replaces the old. */
    uint64_t va2 = MR_VA + 0x1000u - MR_FBO + 0x80u;
    OK(bind(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, mr2, mw, va2, 0x100) == NF_STATUS_SUCCESS,
       "WR_BIND of a bound window: SUCCESS");
    mpt_get(mr2, mrw);
    mpt_get(mw, w);
    OK(NF_MPT_W1_FBO_GET(w[1]) == 0x80u && w[2] == (uint32_t)va2 && w[4] == 0x100u &&
           NF_MPT_W5_MTT_BASE_GET(w[5]) == NF_MPT_W5_MTT_BASE_GET(mrw[5]) + 1u && NF_MPT_W6_PAGES_GET(w[6]) == 1u &&
           NF_MPT_W6_PARENT_GET(w[6]) == NF_TOKEN_INDEX_GET(mr2) && (w[0] & NF_MPT_W0_REMOTE_WRITE_MASK) &&
           !(w[0] & NF_MPT_W0_REMOTE_READ_MASK),
       "re-bound: the entry describes the new range in the second MR's second page, remote write only");
    OK(nwin(mr) == 0 && nwin(mr2) == 1u, "re-bound: the old MR counts no window, the new one counts it");
    stats_get(&s1);
    OK(s1.ops[NF_STAT_OP_WR_BIND] - s0.ops[NF_STAT_OP_WR_BIND] == 2u, "STATS counts every WR_BIND");
}

void test_mw_invalidate(void)
{
    struct wr_env e;
    wr_env(&e);
    uint32_t mr = reg_mr(PD_A, NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    uint32_t mw = mw_create(PD_A, NULL);
    bind(e.qp, RW, mr, mw, MR_VA, 64);
    OK(invalidate(e.qp, 0, mw) == NF_STATUS_SUCCESS && mpt_state(mw) == NF_MPT_STATE_INVALID &&
           mpt_state(mr) == NF_MPT_STATE_VALID && nwin(mr) == 0,
       "WR_INVALIDATE of a bound window: the window INVALID, its MR untouched");
    OK(invalidate(e.qp, 0, mw) == NF_STATUS_INVALID_DEVICE_STATE, "WR_INVALIDATE of an INVALID window");
    qp_reconnect(e.qp, e.peer);
    OK(bind(e.qp, RW, mr, mw, MR_VA, 64) == NF_STATUS_SUCCESS && mpt_state(mw) == NF_MPT_STATE_VALID,
       "an invalidated window binds again");
    /* SendAndInvalidate naming the window: the receiver's QP needs a receive queue. */
    struct nf_qp_create_req q = {PD_A, 16, 2, 1};
    struct nf_qp_create_rep r = {0, 0};
    tb_req(NF_OP_QP_CREATE, &q, sizeof(q), &r, sizeof(r));
    uint32_t rx = r.qpn, tx = qp_create(PD_A);
    qp_connect(rx, tx);
    qp_connect(tx, rx);
    uint8_t b[NF_LINK_MAX_PAYLOAD];
    struct nf_wr_hdr h = {rx, 900, 0, 0};
    struct nf_wr_receive rv = {0, 0};
    memcpy(b, &h, sizeof(h));
    memcpy(b + sizeof(h), &rv, sizeof(rv));
    tb_send_one(NF_OP_WR_RECEIVE, b, sizeof(h) + sizeof(rv));
    struct nf_wr_hdr hs = {tx, 901, 0, 0};
    struct nf_wr_send sv = {mw, 0};
    memcpy(b, &hs, sizeof(hs));
    memcpy(b + sizeof(hs), &sv, sizeof(sv));
    tb_send_one(NF_OP_WR_SEND_INVALIDATE, b, sizeof(hs) + sizeof(sv));
    int got = 0;
    for (int i = 0; i < tb.nmsgs; i++) {
        const struct nf_cqe *c = (const struct nf_cqe *)tb.msgs[i].body;
        got += tb.msgs[i].hdr.op == NF_OP_CQE && c->qpn == rx && c->status == NF_STATUS_SUCCESS &&
               c->op_type == NF_NDK_OP_RECEIVE_AND_INVALIDATE && c->token == mw;
    }
    OK(got == 1 && mpt_state(mw) == NF_MPT_STATE_INVALID && mpt_state(mr) == NF_MPT_STATE_VALID && nwin(mr) == 0,
       "SendAndInvalidate naming a bound window: RECEIVE_AND_INVALIDATE, the window INVALID, its MR untouched");
}

void test_mw_cascade(void)
{
    struct wr_env e;
    wr_env(&e);
    uint32_t mr = reg_mr(PD_A, NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE), other = reg_mr(PD_A, 0);
    uint32_t w1 = mw_create(PD_A, NULL), w2 = mw_create(PD_A, NULL), w3 = mw_create(PD_A, NULL);
    OK(bind(e.qp, RW, mr, w1, MR_VA, 64) == NF_STATUS_SUCCESS &&
           bind(e.qp, RW, mr, w2, MR_VA + PAGE, 64) == NF_STATUS_SUCCESS &&
           bind(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_READ, other, w3, MR_VA, 64) == NF_STATUS_SUCCESS && nwin(mr) == 2u,
       "cascade: two windows on one MR, one on another");
    OK(token_op(NF_OP_MR_DEREGISTER, mr) == NF_STATUS_SUCCESS && mpt_state(w1) == NF_MPT_STATE_INVALID &&
           mpt_state(w2) == NF_MPT_STATE_INVALID && mpt_state(w3) == NF_MPT_STATE_VALID && nwin(mr) == 0,
       "MR_DEREGISTER invalidates the MR's windows, and only those");
    uint64_t pg[MR_PAGES];
    pages_at(pg, MR_PAGES, mr_page_numbers);
    OK(mr_register(mr, NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE, MR_VA, MR_LEN, MR_FBO, pg, MR_PAGES) == NF_STATUS_SUCCESS &&
           mpt_state(w1) == NF_MPT_STATE_INVALID && mpt_state(w2) == NF_MPT_STATE_INVALID,
       "registering the MR again does not revive its old windows");
    /* A fast-register MR: invalidated by WR_INVALIDATE. */
    uint64_t fp[1] = {page_at(30)};
    OK(fast_register(e.qp, RW, e.fast, fp, 1, 0, PAGE, 0x200000, NULL) == NF_STATUS_SUCCESS &&
           bind(e.qp, RW, e.fast, w1, 0x200000, PAGE) == NF_STATUS_SUCCESS,
       "a window on a fast-registered MR");
    OK(invalidate(e.qp, 0, e.fast) == NF_STATUS_SUCCESS && mpt_state(w1) == NF_MPT_STATE_INVALID &&
           nwin(e.fast) == 0,
       "WR_INVALIDATE of the MR invalidates its window");
    OK(fast_register(e.qp, RW, e.fast, fp, 1, 0, PAGE, 0x200000, NULL) == NF_STATUS_SUCCESS &&
           mpt_state(w1) == NF_MPT_STATE_INVALID,
       "fast-registering the MR again does not revive the window");
    /* MR_DESTROY of an MR with a bound window, and of a bound window. */
    OK(bind(e.qp, RW, mr, w2, MR_VA, 64) == NF_STATUS_SUCCESS && token_op(NF_OP_MR_DESTROY, mr) == NF_STATUS_SUCCESS &&
           mpt_state(w2) == NF_MPT_STATE_INVALID && bind(e.qp, RW, mr, w2, MR_VA, 64) == NF_STATUS_INVALID_PARAMETER,
       "MR_DESTROY of an MR invalidates its window; binding to the destroyed MR fails");
    qp_reconnect(e.qp, e.peer);
    OK(token_op(NF_OP_MR_DESTROY, w3) == NF_STATUS_SUCCESS && mpt_state(w3) == NF_MPT_STATE_FREE && nwin(other) == 0 &&
           mpt_state(other) == NF_MPT_STATE_VALID,
       "MR_DESTROY of a bound window frees it; its MR stays VALID and counts no window");
    OK(bind(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_READ, other, w2, MR_VA, 64) == NF_STATUS_SUCCESS && nwin(other) == 1u &&
           tb_req(NF_OP_ADAPTER_RESET, NULL, 0, NULL, 0) == NF_STATUS_SUCCESS && nwin(other) == 0 && fw_mrs[NF_TOKEN_INDEX_GET(w2)].state == NF_MPT_STATE_FREE,
       "ADAPTER_RESET frees windows and clears the MRs' window counts");
}

void test_mw_grants(void)
{
    struct wr_env e;
    wr_env(&e);
    uint32_t mr = reg_mr(PD_A, NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NF_NDK_MR_FLAG_ALLOW_REMOTE_READ);
    uint32_t mw = mw_create(PD_A, NULL);
    /* The window covers MR offsets [0x1F00, 0x2100) of the region: the end of its second
     * page (page number 25) and the start of its third (22). */
    uint64_t va = MR_VA + 0x1E00u;
    OK(bind(e.qp, RW, mr, mw, va, 0x200) == NF_STATUS_SUCCESS, "grants: window bound");
    uint8_t data[0x200], back[0x200];
    for (uint32_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 7u + 3u);
    uint32_t src = (uint32_t)page_at(40);
    mem_write(src, data, sizeof(data));
    struct nf_sge s[1] = {{src, sizeof(data), NF_ADAPTER_PRIVILEGED_TOKEN}};
    OK(rdma(NF_OP_WR_WRITE, e.qp, 0, va, mw, s, 1, NULL) == NF_STATUS_SUCCESS,
       "grants: RDMA Write of the whole window granted");
    mem_read((uint32_t)page_at(25) + 0xF00u, back, 0x100);
    mem_read((uint32_t)page_at(22), back + 0x100, 0x100);
    OK(!memcmp(back, data, sizeof(data)), "grants: the bytes landed in the MR's pages behind the window");
    /* (each status is taken before OK: its arguments are evaluated in no set order) */
    struct nf_cqe c = {0};
    uint32_t st = rdma(NF_OP_WR_WRITE, e.qp, 0, va + 1u, mw, s, 1, &c);
    OK(st == NF_STATUS_ACCESS_VIOLATION && c.refuse == NF_REFUSE_OUT_OF_BOUNDS,
       "grants: one byte past the window's end refused OUT_OF_BOUNDS (status 0x%x refuse %u)", st, c.refuse);
    qp_reconnect(e.qp, e.peer);
    s[0].len = 8;
    c = (struct nf_cqe){0};
    st = rdma(NF_OP_WR_WRITE, e.qp, 0, va - 8u, mw, s, 1, &c);
    OK(st == NF_STATUS_ACCESS_VIOLATION && c.refuse == NF_REFUSE_OUT_OF_BOUNDS,
       "grants: below the window refused OUT_OF_BOUNDS (status 0x%x refuse %u)", st, c.refuse);
    qp_reconnect(e.qp, e.peer);
    struct nf_sge lsge[1] = {{va, 8, mw}};
    c = (struct nf_cqe){0};
    st = rdma(NF_OP_WR_WRITE, e.qp, 0, MR_VA, mr, lsge, 1, &c);
    OK(st == NF_STATUS_ACCESS_VIOLATION && c.refuse == NF_REFUSE_NO_RIGHT,
       "grants: the window as a local SGE (written into the MR) refused NO_RIGHT (status 0x%x refuse %u)", st,
       c.refuse);
    qp_reconnect(e.qp, e.peer);
    /* The parent invalidated in the engine alone (the firmware's cascade bypassed): the
     * hardware itself must stop granting through the window. */
    fw_mpt_invalidate(NF_TOKEN_INDEX_GET(mr));
    c = (struct nf_cqe){0};
    st = rdma(NF_OP_WR_WRITE, e.qp, 0, va, mw, s, 1, &c);
    OK(mpt_state(mw) == NF_MPT_STATE_VALID && st == NF_STATUS_ACCESS_VIOLATION,
       "grants: the parent MR not VALID: refused through the still-VALID window (status 0x%x refuse %u)", st,
       c.refuse);
}
