/* SPDX-License-Identifier: Apache-2.0 */
/* Firmware unit tests (fw_test.h): MRs, QPs, and the rules of fast-register and
 * invalidate. */
#include "fw_test.h"

void test_mr_lifecycle(void)
{
    tb_init("sim");
    uint32_t t1 = mr_create(PD_A, 0);
    uint32_t w[NFM_MPT_WORDS];
    mpt_get(t1, w);
    OK(t1 != 0 && NF_TOKEN_KEY_GET(t1) != 0 && NF_MPT_W0_STATE_GET(w[0]) == NF_MPT_STATE_INVALID &&
           NF_MPT_W0_KIND_GET(w[0]) == NF_MPT_KIND_NORMAL && NF_MPT_W1_PD_GET(w[1]) == PD_A,
       "MR_CREATE: nonzero key, entry INVALID, kind and PD set");
    uint32_t t2 = mr_create(PD_A, 1);
    mpt_get(t2, w);
    OK(t2 && NF_MPT_W0_KIND_GET(w[0]) == NF_MPT_KIND_FAST, "MR_CREATE fast_register=1 makes a FAST entry");
    struct nf_mr_create_req bad = {0, 0};
    OK(tb_req(NF_OP_MR_CREATE, &bad, sizeof(bad), NULL, 0) == NF_STATUS_INVALID_PARAMETER, "MR_CREATE with PD 0 -> INVALID_PARAMETER");
    OK(token_op(NF_OP_MR_DESTROY, t1) == NF_STATUS_SUCCESS && mpt_state(t1) == NF_MPT_STATE_FREE, "MR_DESTROY frees the entry");
    OK(token_op(NF_OP_MR_DESTROY, t1) == NF_STATUS_INVALID_PARAMETER, "MR_DESTROY of a stale token -> INVALID_PARAMETER");
    /* Reuse: the FIFO hands out every other entry first; a reused index gets a new key. */
    tb_init("ulx3s_25k");
    uint32_t first = mr_create(PD_A, 0);
    token_op(NF_OP_MR_DESTROY, first);
    uint32_t tok = 0;
    for (uint32_t i = 0; i < NF_PROFILE_ULX3S_25K_MPT_ENTRIES; i++)
        tok = mr_create(PD_A, 0);
    OK(NF_TOKEN_INDEX_GET(tok) == NF_TOKEN_INDEX_GET(first) && tok != first && NF_TOKEN_KEY_GET(tok) != 0,
       "an entry freed and reused gets another key byte (old token never matches)");
    OK(mr_create(PD_A, 0) == 0, "key table full -> MR_CREATE fails");
    struct nf_mr_create_req q = {PD_A, 0};
    OK(tb_req(NF_OP_MR_CREATE, &q, sizeof(q), NULL, 0) == NF_STATUS_INSUFFICIENT_RESOURCES,
       "... with STATUS_INSUFFICIENT_RESOURCES");
}

void test_register(void)
{
    tb_init("sim");
    uint32_t tok = mr_create(PD_A, 0);
    uint32_t fast = mr_create(PD_A, 1);
    uint64_t pages[4];
    static const uint32_t pn[4] = {9, 2, 5, 30};
    pages_at(pages, 4, pn);
    uint64_t va = 0x7f0000001100ull; /* fbo 0x100 */
    struct snap s0, s1;
    snap_take(&s0);
    struct {
        const char *what;
        uint32_t token, flags;
        uint64_t va, len;
        uint32_t fbo, npages, status;
    } bad[] = {
        {"on a fast-register MR", fast, 1, va, 3 * PAGE, 0x100, 4, NF_STATUS_INVALID_PARAMETER},
        {"with an unknown token", tok ^ 0x55, 1, va, 3 * PAGE, 0x100, 4, NF_STATUS_INVALID_PARAMETER},
        {"with zero-based VA (va 0)", tok, 1, 0, 3 * PAGE, 0, 3, NF_STATUS_INVALID_PARAMETER},
        {"with length 0", tok, 1, va, 0, 0x100, 4, NF_STATUS_INVALID_PARAMETER},
        {"with FBO not the VA's page offset", tok, 1, va, 3 * PAGE, 0x200, 4, NF_STATUS_INVALID_PARAMETER},
        {"with a page list not covering the range", tok, 1, va, 3 * PAGE, 0x100, 3, NF_STATUS_INVALID_PARAMETER},
        {"with unknown flag bits", tok, 0x100, va, 3 * PAGE, 0x100, 4, NF_STATUS_INVALID_PARAMETER},
    };
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        OK(mr_register(bad[i].token, bad[i].flags, bad[i].va, bad[i].len, bad[i].fbo, pages, bad[i].npages) == bad[i].status,
           "MR_REGISTER %s -> 0x%08X", bad[i].what, bad[i].status);
    uint64_t unaligned[4] = {pages[0], pages[1] + 8, pages[2], pages[3]};
    OK(mr_register(tok, 1, va, 3 * PAGE, 0x100, unaligned, 4) == NF_STATUS_INVALID_PARAMETER,
       "MR_REGISTER with an unaligned page (loader refuses) -> INVALID_PARAMETER");
    uint64_t outside[4] = {pages[0], pages[1], 0, pages[3]};
    OK(mr_register(tok, 1, va, 3 * PAGE, 0x100, outside, 4) == NF_STATUS_INVALID_PARAMETER,
       "MR_REGISTER with a page outside the user region -> INVALID_PARAMETER");
    snap_take(&s1);
    /* a refused load may have written the free MTT range it had reserved; that range
     * belonged to no MR. The key table must be untouched. */
    OK(!memcmp(s0.mpt, s1.mpt, (size_t)s0.nmpt * NFM_MPT_WORDS * 4), "refused MR_REGISTERs left the key table unchanged");
    snap_free(&s0);
    snap_free(&s1);

    OK(mr_register(tok, NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE, va, 3 * PAGE, 0x100, pages, 4) == NF_STATUS_SUCCESS,
       "MR_REGISTER of 4 non-contiguous pages with FBO 0x100");
    uint32_t w[NFM_MPT_WORDS];
    mpt_get(tok, w);
    uint32_t mtt0 = NF_MPT_W5_MTT_BASE_GET(w[5]), page2 = 0;
    nfm_mtt_get(nf_hw_engine(), mtt0 + 2, &page2);
    OK(NF_MPT_W0_STATE_GET(w[0]) == NF_MPT_STATE_VALID && (w[0] & NF_MPT_W0_REMOTE_WRITE_MASK) &&
           (w[0] & NF_MPT_W0_LOCAL_WRITE_MASK) && !(w[0] & NF_MPT_W0_REMOTE_READ_MASK) && w[2] == (uint32_t)va &&
           w[3] == (uint32_t)(va >> 32) && w[4] == 3 * PAGE && NF_MPT_W1_FBO_GET(w[1]) == 0x100 &&
           NF_MPT_W6_PAGES_GET(w[6]) == 4 && page2 == (uint32_t)(pages[2] >> NF_ADAPTER_PAGE_SHIFT),
       "registered entry: VALID, remote write implies local write, VA/length/FBO, MTT loaded by the engine");
    OK(mr_register(tok, 1, va, 3 * PAGE, 0x100, pages, 4) == NF_STATUS_INVALID_DEVICE_STATE,
       "MR_REGISTER on a registered MR -> INVALID_DEVICE_STATE");
    uint32_t rc;
    OK((rc = nfm_check(nf_hw_engine(), tok, va + 10, 100, NF_ACCESS_REMOTE_WRITE, PD_A, NULL)) == NF_REFUSE_OK,
       "the engine grants a remote write through the registered token");
    OK(token_op(NF_OP_MR_DEREGISTER, fast) == NF_STATUS_INVALID_PARAMETER, "MR_DEREGISTER of a fast MR -> INVALID_PARAMETER");
    OK(token_op(NF_OP_MR_DEREGISTER, tok) == NF_STATUS_SUCCESS && mpt_state(tok) == NF_MPT_STATE_INVALID &&
           nfm_check(nf_hw_engine(), tok, va + 10, 100, NF_ACCESS_LOCAL_READ, PD_A, NULL) == NF_REFUSE_NOT_VALID,
       "MR_DEREGISTER: entry INVALID, every access refused");
    OK(token_op(NF_OP_MR_DEREGISTER, tok) == NF_STATUS_INVALID_DEVICE_STATE, "MR_DEREGISTER twice -> INVALID_DEVICE_STATE");

    /* MTT exhaustion: 25K has 256 MTT entries. */
    tb_init("ulx3s_25k");
    uint32_t big = mr_create(PD_A, 1), t2 = mr_create(PD_A, 0);
    uint32_t n = 0;
    for (uint32_t i = 0; i < 16; i++) {
        uint32_t t = mr_create(PD_A, 1);
        n += frmr_init(t, NF_PROFILE_ULX3S_25K_MAX_FRMR_PAGES, 0) == NF_STATUS_SUCCESS;
    }
    (void)big;
    static const uint32_t pn1[1] = {1};
    pages_at(pages, 1, pn1);
    snap_take(&s0);
    OK(n == 16 && mr_register(t2, 0, 0x10000, 100, 0, pages, 1) == NF_STATUS_INSUFFICIENT_RESOURCES,
       "MTT full -> MR_REGISTER STATUS_INSUFFICIENT_RESOURCES");
    snap_take(&s1);
    OK(snap_same(&s0, &s1), "... and nothing changed");
    snap_free(&s0);
    snap_free(&s1);
}

void test_frmr_init(void)
{
    tb_init("sim");
    uint32_t normal = mr_create(PD_A, 0), fast = mr_create(PD_A, 1);
    struct snap s0, s1;
    snap_take(&s0);
    OK(frmr_init(normal, 4, 1) == NF_STATUS_INVALID_PARAMETER, "FRMR_INIT on a normal MR -> INVALID_PARAMETER");
    OK(frmr_init(fast, NF_PROFILE_SIM_MAX_FRMR_PAGES + 1, 1) == NF_STATUS_IMPLEMENTATION_LIMIT,
       "FRMR_INIT above max_frmr_pages -> STATUS_IMPLEMENTATION_LIMIT");
    OK(frmr_init(fast, 0, 1) == NF_STATUS_INVALID_PARAMETER, "FRMR_INIT with 0 pages -> INVALID_PARAMETER");
    snap_take(&s1);
    OK(snap_same(&s0, &s1), "refused FRMR_INITs changed nothing");
    snap_free(&s0);
    snap_free(&s1);
    OK(frmr_init(fast, NF_PROFILE_SIM_MAX_FRMR_PAGES, 1) == NF_STATUS_SUCCESS, "FRMR_INIT with max_frmr_pages");
    uint32_t w[NFM_MPT_WORDS];
    mpt_get(fast, w);
    OK(NF_MPT_W5_PAGE_CAP_GET(w[5]) == NF_PROFILE_SIM_MAX_FRMR_PAGES && (w[0] & NF_MPT_W0_REMOTE_EN_MASK) &&
           NF_MPT_W0_STATE_GET(w[0]) == NF_MPT_STATE_INVALID,
       "FRMR_INIT reserves the MTT range (capacity) and records RemoteAccess; entry stays INVALID");
    OK(frmr_init(fast, 8, 0) == NF_STATUS_SUCCESS, "FRMR_INIT may be called again");
    mpt_get(fast, w);
    OK(NF_MPT_W5_PAGE_CAP_GET(w[5]) == 8 && !(w[0] & NF_MPT_W0_REMOTE_EN_MASK), "... the latest call's capacity and access count");
    OK(fw_mr_lookup(fast) != FW_NO_INDEX && fast == fw_token(NF_TOKEN_INDEX_GET(fast)), "the token stays the same");
}

void test_qp(void)
{
    tb_init("sim");
    uint32_t a = qp_create(PD_A), b = qp_create(PD_B);
    OK(a && b && a != b, "QP_CREATE returns distinct nonzero qpns");
    OK(qp_connect(a, 0x999) == NF_STATUS_INVALID_PARAMETER, "QP_CONNECT to an unknown peer -> INVALID_PARAMETER");
    OK(qp_connect(a, b) == NF_STATUS_SUCCESS && qp_connect(a, b) == NF_STATUS_INVALID_DEVICE_STATE,
       "QP_CONNECT; connecting again -> INVALID_DEVICE_STATE");
    struct nf_qp_req q = {a, 0};
    OK(tb_req(NF_OP_QP_DESTROY, &q, sizeof(q), NULL, 0) == NF_STATUS_SUCCESS &&
           tb_req(NF_OP_QP_DESTROY, &q, sizeof(q), NULL, 0) == NF_STATUS_INVALID_PARAMETER,
       "QP_DESTROY; a stale qpn -> INVALID_PARAMETER");
    uint32_t c = qp_create(PD_A);
    OK(c != a && fw_qp_lookup(a) == FW_NO_INDEX, "a reused QP slot gets a new qpn");
    struct nf_qp_create_req bad = {0, 1, 0, 0};
    OK(tb_req(NF_OP_QP_CREATE, &bad, sizeof(bad), NULL, 0) == NF_STATUS_INVALID_PARAMETER, "QP_CREATE with PD 0 -> INVALID_PARAMETER");
}

void test_fast_register_rules(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[8];
    static const uint32_t pn[8] = {3, 1, 7, 4, 10, 11, 12, 13};
    pages_at(pages, 8, pn);
    const uint32_t rw = NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NF_NDK_OP_FLAG_ALLOW_REMOTE_READ;
    const uint64_t va = 0x5000 + 0x80;
    struct {
        const char *what;
        uint32_t qp, flags, token, npages, fbo;
        uint64_t len, va;
        uint32_t status;
    } rules[] = {
        {"QP not connected", e.qp_unconnected, 0, e.fast, 2, 0x80, 100, va, NF_STATUS_CONNECTION_INVALID},
        {"unknown QP", 0x4242, 0, e.fast, 2, 0x80, 100, va, NF_STATUS_INVALID_PARAMETER},
        {"remote rights without RemoteAccess", e.qp, rw, e.fast_local, 2, 0x80, 100, va, NF_STATUS_ACCESS_VIOLATION},
        {"remote read only, without RemoteAccess", e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_READ, e.fast_local, 2, 0x80, 100, va,
         NF_STATUS_ACCESS_VIOLATION},
        {"MR of another PD", e.qp, 0, e.fast_other_pd, 2, 0x80, 100, va, NF_STATUS_ACCESS_VIOLATION},
        {"a normal (NdkRegisterMr) MR", e.qp, 0, e.normal, 2, 0x80, 100, va, NF_STATUS_INVALID_DEVICE_STATE},
        {"an unknown token", e.qp, 0, e.fast ^ 0x33, 2, 0x80, 100, va, NF_STATUS_INVALID_PARAMETER},
        {"more pages than initialized", e.qp, rw, e.fast, 5, 0x80, 100, va, NF_STATUS_INVALID_PARAMETER},
        {"0 pages", e.qp, rw, e.fast, 0, 0x80, 100, va, NF_STATUS_INVALID_PARAMETER},
        {"Length > pages * PAGE_SIZE - FBO", e.qp, rw, e.fast, 2, 0x80, 2 * PAGE - 0x80 + 1, va,
         NF_STATUS_INVALID_PARAMETER},
        {"Length 0", e.qp, rw, e.fast, 2, 0x80, 0, va, NF_STATUS_INVALID_PARAMETER},
        {"FBO >= PAGE_SIZE", e.qp, rw, e.fast, 2, PAGE, 100, va, NF_STATUS_INVALID_PARAMETER},
        {"VA not FBO + n * PAGE_SIZE", e.qp, rw, e.fast, 2, 0x80, 100, va + 8, NF_STATUS_INVALID_PARAMETER},
        {"VA 0 with FBO != 0", e.qp, rw, e.fast, 2, 0x80, 100, 0, NF_STATUS_INVALID_PARAMETER},
        {"VA + Length wrapping", e.qp, rw, e.fast, 2, 0x80, 4000, 0xFFFFFFFFFFFFF080ull, NF_STATUS_INVALID_PARAMETER},
        {"VA + Length wrapping by one byte", e.qp, rw, e.fast, 2, 0, PAGE + 1, 0xFFFFFFFFFFFFF000ull,
         NF_STATUS_INVALID_PARAMETER},
        {"unknown flag bits", e.qp, 0x4000, e.fast, 2, 0x80, 100, va, NF_STATUS_INVALID_PARAMETER},
        {"SEND_AND_SOLICIT_EVENT (not a fast-register flag)", e.qp, NF_NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT, e.fast, 2,
         0x80, 100, va, NF_STATUS_INVALID_PARAMETER},
        {"every flag the layout does not list for it", e.qp, ~(uint32_t)NF_KNOWN_FLAGS_FAST_REGISTER, e.fast, 2, 0x80,
         100, va, NF_STATUS_INVALID_PARAMETER},
    };
    for (unsigned i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        struct snap s0;
        snap_take(&s0);
        uint32_t st = fast_register(rules[i].qp, rules[i].flags, rules[i].token, pages, rules[i].npages, rules[i].fbo,
                                    rules[i].len, rules[i].va, NULL);
        OK(refused_cleanly(&e, rules[i].qp, st, rules[i].status, &s0),
           "FAST_REGISTER with %s -> 0x%08X, nothing changed, the QP broken", rules[i].what, rules[i].status);
    }
    /* A page the loader refuses: the MR's own (INVALID) range may hold a partial list,
     * the key table does not change. */
    uint64_t bad_pages[2] = {pages[0], pages[1] + 0x10};
    struct snap s0, s1;
    snap_take(&s0);
    struct nf_cqe c;
    uint32_t st = fast_register(e.qp, rw, e.fast, bad_pages, 2, 0x80, 100, va, &c);
    snap_take(&s1);
    OK(st == NF_STATUS_INVALID_PARAMETER && c.refuse == NF_REFUSE_BAD_ADDRESS && mpt_state(e.fast) == NF_MPT_STATE_INVALID &&
           !memcmp(s0.mpt, s1.mpt, (size_t)s0.nmpt * NFM_MPT_WORDS * 4),
       "FAST_REGISTER with an unaligned page -> INVALID_PARAMETER (refuse BAD_ADDRESS), key table unchanged (got 0x%08X/%u)",
       st, c.refuse);
    snap_free(&s0);
    snap_free(&s1);
    qp_reconnect(e.qp, e.peer);

    OK(fast_register(e.qp, rw | NF_NDK_OP_FLAG_RDMA_READ_SINK | NF_NDK_OP_FLAG_READ_FENCE | NF_NDK_OP_FLAG_DEFER, e.fast,
                     pages, 2, 0x80, 2 * PAGE - 0x80, va, NULL) == NF_STATUS_SUCCESS,
       "FAST_REGISTER 2 pages, FBO 0x80, Length = 2 pages - FBO, RDMA_READ_SINK|READ_FENCE accepted");
    uint32_t w[NFM_MPT_WORDS];
    mpt_get(e.fast, w);
    OK(NF_MPT_W0_STATE_GET(w[0]) == NF_MPT_STATE_VALID && (w[0] & NF_MPT_W0_REMOTE_READ_MASK) &&
           (w[0] & NF_MPT_W0_REMOTE_WRITE_MASK) && (w[0] & NF_MPT_W0_READ_SINK_MASK) && NF_MPT_W6_PAGES_GET(w[6]) == 2,
       "the entry is VALID with the requested rights");
    snap_take(&s0);
    OK(fast_register(e.qp, rw, e.fast, pages, 2, 0x80, 100, va, NULL) == NF_STATUS_INVALID_DEVICE_STATE,
       "FAST_REGISTER of a VALID MR (not invalidated) -> INVALID_DEVICE_STATE");
    snap_take(&s1);
    OK(snap_same(&s0, &s1), "... and nothing changed");
    snap_free(&s0);
    snap_free(&s1);
    qp_reconnect(e.qp, e.peer);
    OK(invalidate(e.qp, 0, e.fast) == NF_STATUS_SUCCESS, "INVALIDATE the fast MR");
    /* Every combination of the four rights flags: the MPT rights follow the documented
     * rules (remote write implies local write; a read sink gets local write too). */
    int rights_ok = 1;
    for (uint32_t k = 0; k < 16; k++) {
        uint32_t f = (k & 1u ? NF_NDK_OP_FLAG_ALLOW_REMOTE_READ : 0u) | (k & 2u ? NF_NDK_OP_FLAG_ALLOW_LOCAL_WRITE : 0u) |
                     (k & 4u ? NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE : 0u) | (k & 8u ? NF_NDK_OP_FLAG_RDMA_READ_SINK : 0u);
        uint32_t want = (k & 14u ? NF_MPT_W0_LOCAL_WRITE_MASK : 0u) | (k & 1u ? NF_MPT_W0_REMOTE_READ_MASK : 0u) |
                        (k & 4u ? NF_MPT_W0_REMOTE_WRITE_MASK : 0u) | (k & 8u ? NF_MPT_W0_READ_SINK_MASK : 0u);
        uint32_t mask = NF_MPT_W0_LOCAL_WRITE_MASK | NF_MPT_W0_REMOTE_READ_MASK | NF_MPT_W0_REMOTE_WRITE_MASK |
                        NF_MPT_W0_READ_SINK_MASK;
        uint32_t wk[NFM_MPT_WORDS];
        rights_ok &= fast_register(e.qp, f, e.fast, pages, 1, 0, PAGE, va - 0x80, NULL) == NF_STATUS_SUCCESS;
        mpt_get(e.fast, wk);
        rights_ok &= (wk[0] & mask) == want && (wk[0] & NF_MPT_W0_REMOTE_EN_MASK);
        rights_ok &= invalidate(e.qp, 0, e.fast) == NF_STATUS_SUCCESS;
    }
    OK(rights_ok, "FAST_REGISTER: all 16 combinations of the rights flags give the documented MPT rights");
    OK(fast_register(e.qp, 0, e.fast, pages, 1, 0, PAGE, 0, NULL) == NF_STATUS_SUCCESS,
       "VA 0 is accepted when FBO is 0 (an absolute address, not zero-based addressing)");
    invalidate(e.qp, 0, e.fast);
    /* The last page of the 64-bit space: the range ends at its last byte, it does not
     * wrap, and the engine grants the last 8 bytes through the token. */
    const uint64_t top = 0xFFFFFFFFFFFFF000ull;
    OK(fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, pages, 1, 0, PAGE, top, NULL) ==
               NF_STATUS_SUCCESS &&
           nfm_check(nf_hw_engine(), e.fast, top + PAGE - 8u, 8, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) == NF_REFUSE_OK,
       "FAST_REGISTER of the last page of the 64-bit space (VA 0xFFFFFFFFFFFFF000, Length 4096) accepted, its last "
       "8 bytes granted");
    struct nf_sge top_sge[1] = {{user_base() + 60 * PAGE, 8, NF_ADAPTER_PRIVILEGED_TOKEN}};
    struct nf_cqe tc;
    OK(rdma(NF_OP_WR_WRITE, e.qp, 0, top + PAGE - 8u, e.fast, top_sge, 1, &tc) == NF_STATUS_SUCCESS && tc.bytes == 8,
       "an RDMA Write of the last 8 bytes of the 64-bit space through that token succeeds");
    invalidate(e.qp, 0, e.fast);
    OK(fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, pages, 1, 0x80, PAGE - 0x80, 0x123456789000ull + 0x80,
                     NULL) == NF_STATUS_SUCCESS,
       "VA = FBO + n * PAGE_SIZE for a large n accepted");
    invalidate(e.qp, 0, e.fast);
    OK(fast_register(e.qp, NF_NDK_OP_FLAG_SILENT_SUCCESS, e.fast, pages, 1, 0, 100, 0x10000, NULL) == NO_REPLY &&
           mpt_state(e.fast) == NF_MPT_STATE_VALID,
       "SILENT_SUCCESS: no CQE on success");
    OK(fast_register(e.qp, NF_NDK_OP_FLAG_SILENT_SUCCESS, e.fast, pages, 1, 0, 100, 0x10000, NULL) ==
           NF_STATUS_INVALID_DEVICE_STATE,
       "SILENT_SUCCESS: a failure still completes");
    qp_reconnect(e.qp, e.peer);
    OK(fw_token(NF_TOKEN_INDEX_GET(e.fast)) == e.fast, "the token stays stable across fast-register/invalidate cycles");
}

/* The adapter's first MR after a RESET with this nonce. */
static uint32_t first_token_of_session(uint16_t nonce)
{
    tb_send_frame(NF_LINK_TYPE_RESET, 0, 0, nonce, NULL, 0);
    tb.tx_seq = tb.rx_expect = tb.last_acked = 0;
    tb_run();
    return mr_create(PD_A, 0);
}

/* Tokens carry a random key byte (like Linux rxe's key variant): not guessable from the
 * order of registrations, different per adapter session; a guessed key is refused by
 * the engine's key check. A fast-register MR keeps its token. */
void test_token_keys(void)
{
    tb_init("sim");
    uint32_t first = mr_create(PD_A, 0);
    uint32_t keys[16], same_as_seq = 0, distinct = 0;
    for (int i = 0; i < 16; i++)
        keys[i] = NF_TOKEN_KEY_GET(mr_create(PD_A, 0));
    for (int i = 0; i < 16; i++) {
        same_as_seq += keys[i] == 1u;
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= keys[j] == keys[i];
        distinct += !dup;
    }
    OK(first != 0 && first != 0x00000001u && same_as_seq < 4 && distinct >= 8,
       "MR tokens are not predictable: the first is not 0x00000001 (0x%08X), %u distinct key bytes in 16", first,
       distinct);
    uint32_t a = first_token_of_session(0x1234), b = first_token_of_session(0xBEEF);
    OK(a && b && NF_TOKEN_INDEX_GET(a) == NF_TOKEN_INDEX_GET(b) && a != b,
       "the same entry gets another key in another adapter session (0x%08X, 0x%08X)", a, b);
    /* A fast-registered MR: the right token grants, a guessed key byte is refused. */
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[1] = {page_at(5)};
    OK(fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, pages, 1, 0, PAGE, 0x50000, NULL) ==
           NF_STATUS_SUCCESS,
       "fast-register an MR with a random key");
    int refused = 1;
    for (uint32_t k = 1; k < 256; k++) {
        uint32_t guess = (e.fast & ~(uint32_t)NF_TOKEN_KEY_MASK) | NF_TOKEN_KEY_PUT((NF_TOKEN_KEY_GET(e.fast) + k) & 0xFFu);
        refused &= nfm_check(nf_hw_engine(), guess, 0x50000, 8, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) ==
                   NF_REFUSE_BAD_KEY;
    }
    OK(nfm_check(nf_hw_engine(), e.fast, 0x50000, 8, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) == NF_REFUSE_OK && refused,
       "the engine grants the token and refuses every one of the 255 other key bytes (BAD_KEY)");
    struct nf_sge lsge[1] = {{user_base() + 60 * PAGE, 8, NF_ADAPTER_PRIVILEGED_TOKEN}};
    struct nf_cqe c;
    uint32_t guess = e.fast ^ NF_TOKEN_KEY_PUT(0x01u);
    OK(rdma(NF_OP_WR_WRITE, e.qp, 0, 0x50000, guess, lsge, 1, &c) == NF_STATUS_ACCESS_VIOLATION &&
           c.refuse == NF_REFUSE_BAD_KEY,
       "an RDMA Write through a guessed token (wrong key byte) -> ACCESS_VIOLATION (BAD_KEY)");
    qp_reconnect(e.qp, e.peer);
    uint32_t tok0 = e.fast;
    int stable = 1;
    for (int i = 0; i < 4; i++) {
        stable &= invalidate(e.qp, 0, e.fast) == NF_STATUS_SUCCESS;
        stable &= frmr_init(e.fast, 2, 1) == NF_STATUS_SUCCESS;
        stable &= fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, pages, 1, 0, PAGE, 0x50000, NULL) ==
                  NF_STATUS_SUCCESS;
        stable &= fw_token(NF_TOKEN_INDEX_GET(e.fast)) == tok0 &&
                  nfm_check(nf_hw_engine(), tok0, 0x50000, 8, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) == NF_REFUSE_OK;
    }
    OK(stable, "a fast-register MR keeps its token across invalidate, FRMR_INIT and fast-register cycles");
}

void test_invalidate_rules(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[1] = {page_at(6)};
    uint64_t mpages[1] = {page_at(8)};
    mr_register(e.normal, 1, 0x20000, 100, 0, mpages, 1);
    fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, pages, 1, 0, PAGE, 0x40000, NULL);
    /* An MR of PD_B fast-registered through a QP of PD_B. */
    uint32_t qp_b = qp_create(PD_B), peer_b = qp_create(PD_B);
    qp_connect(qp_b, peer_b);
    uint32_t other_pd_valid = mr_create(PD_B, 1);
    frmr_init(other_pd_valid, 1, 1);
    OK(fast_register(qp_b, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, other_pd_valid, pages, 1, 0, PAGE, 0x60000, NULL) ==
           NF_STATUS_SUCCESS,
       "FAST_REGISTER of a PD_B MR through a PD_B QP");
    struct {
        const char *what;
        uint32_t qp, flags, token, status;
    } rules[] = {
        {"QP not connected", e.qp_unconnected, 0, e.fast, NF_STATUS_CONNECTION_INVALID},
        {"a normal (NdkRegisterMr) MR", e.qp, 0, e.normal, NF_STATUS_INVALID_DEVICE_STATE},
        {"an unknown token", e.qp, 0, e.fast + 1, NF_STATUS_INVALID_PARAMETER},
        {"an MR never fast-registered", e.qp, 0, e.fast_local, NF_STATUS_INVALID_DEVICE_STATE},
        {"unknown flag bits", e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_READ, e.fast, NF_STATUS_INVALID_PARAMETER},
        {"SEND_AND_SOLICIT_EVENT (not an invalidate flag)", e.qp, NF_NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT, e.fast,
         NF_STATUS_INVALID_PARAMETER},
        {"an MR of another PD, never registered", e.qp, 0, e.fast_other_pd, NF_STATUS_ACCESS_VIOLATION},
        {"an MR of another PD, registered", e.qp, 0, other_pd_valid, NF_STATUS_ACCESS_VIOLATION},
    };
    for (unsigned i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        struct snap s0;
        snap_take(&s0);
        uint32_t st = invalidate(rules[i].qp, rules[i].flags, rules[i].token);
        OK(refused_cleanly(&e, rules[i].qp, st, rules[i].status, &s0),
           "INVALIDATE of %s -> 0x%08X, nothing changed, the QP broken", rules[i].what, rules[i].status);
    }
    OK(nfm_check(nf_hw_engine(), e.fast, 0x40000, 8, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) == NF_REFUSE_OK,
       "before INVALIDATE the token grants");
    OK(invalidate(e.qp, 0, e.fast) == NF_STATUS_SUCCESS, "INVALIDATE succeeds");
    OK(nfm_check(nf_hw_engine(), e.fast, 0x40000, 8, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) == NF_REFUSE_NOT_VALID &&
           nfm_check(nf_hw_engine(), e.fast, 0x40000, 8, NF_ACCESS_LOCAL_READ, PD_A, NULL) == NF_REFUSE_NOT_VALID,
       "after INVALIDATE every access through the token is refused");
    OK(invalidate(e.qp, 0, e.fast) == NF_STATUS_INVALID_DEVICE_STATE, "INVALIDATE of an invalidated token fails (INVALID_DEVICE_STATE)");
    OK(mpt_state(other_pd_valid) == NF_MPT_STATE_VALID && invalidate(qp_b, 0, other_pd_valid) == NF_STATUS_SUCCESS,
       "the other PD's MR stayed VALID; its own PD's QP invalidates it");
}
