/* SPDX-License-Identifier: Apache-2.0 */
/* Firmware unit tests (fw_test.h): RDMA, error completions, QP_FLUSH (NdkFlush),
 * bounded waits, timing, ADAPTER_RESET and the counters. */
#include "fw_test.h"

/* NDK: any error completion breaks the connection, whatever the work request and the
 * status: every later work request on the QP completes CANCELLED and changes nothing. */
void test_error_breaks_qp(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[1] = {page_at(6)};
    struct snap s0, s1;
    /* INVALIDATE of an MR that is not registered, then a FAST_REGISTER. */
    OK(invalidate(e.qp, 0, e.fast) == NF_STATUS_INVALID_DEVICE_STATE,
       "INVALIDATE of an MR never fast-registered -> INVALID_DEVICE_STATE");
    snap_take(&s0);
    uint32_t st = fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, pages, 1, 0, PAGE, 0x40000, NULL);
    snap_take(&s1);
    OK(st == NF_STATUS_CANCELLED && snap_same(&s0, &s1) && mpt_state(e.fast) != NF_MPT_STATE_VALID,
       "... the next FAST_REGISTER on that QP completes CANCELLED and changes nothing (got 0x%08X)", st);
    snap_free(&s0);
    snap_free(&s1);
    OK(invalidate(e.qp, 0, e.fast) == NF_STATUS_CANCELLED, "... and so does every later one");
    /* A FAST_REGISTER refused by validation, then an INVALIDATE. */
    qp_reconnect(e.qp, e.peer);
    OK(fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, pages, 1, 0, PAGE, 0x40000, NULL) ==
           NF_STATUS_SUCCESS,
       "after QP_DISCONNECT and QP_CONNECT the QP works again");
    OK(fast_register(e.qp, 0, e.fast, pages, 1, 0, PAGE, 0x40000, NULL) == NF_STATUS_INVALID_DEVICE_STATE &&
           invalidate(e.qp, 0, e.fast) == NF_STATUS_CANCELLED && mpt_state(e.fast) == NF_MPT_STATE_VALID,
       "a FAST_REGISTER error (MR VALID) breaks the QP: the next INVALIDATE is CANCELLED, the MR stays VALID");
    /* An RDMA request refused by validation (not by the engine). */
    qp_reconnect(e.qp, e.peer);
    struct nf_sge many[5] = {{0}};
    struct nf_cqe c;
    OK(rdma(NF_OP_WR_WRITE, e.qp, 0, 0x40000, e.fast, many, 5, &c) == NF_STATUS_INVALID_PARAMETER &&
           invalidate(e.qp, 0, e.fast) == NF_STATUS_CANCELLED && mpt_state(e.fast) == NF_MPT_STATE_VALID,
       "an RDMA Write error (too many SGEs) breaks the QP: the next INVALIDATE is CANCELLED");
    qp_reconnect(e.qp, e.peer);
    OK(invalidate(e.qp, 0, e.fast) == NF_STATUS_SUCCESS, "INVALIDATE on the reconnected QP");
    /* The peer QP is not touched by its partner's error. */
    OK(qp_state(e.peer) == FW_QP_CONNECTED, "the peer QP stays connected");
    /* An unconnected QP has no connection to break: it can still be connected. */
    OK(invalidate(e.qp_unconnected, 0, e.fast) == NF_STATUS_CONNECTION_INVALID &&
           qp_state(e.qp_unconnected) == FW_QP_RESET && qp_connect(e.qp_unconnected, e.peer) == NF_STATUS_SUCCESS,
       "an error on an unconnected QP leaves it in RESET (it can be connected)");
}

void test_rdma(void)
{
    struct wr_env e;
    wr_env(&e);
    /* Source: a normal MR over pages 20, 22 (non-contiguous) with FBO 0x234.
     * Sink: a fast MR over pages 40, 31, 35 with FBO 0x10, remote write + read. */
    uint64_t src_pages[2], dst_pages[3];
    static const uint32_t spn[2] = {22, 20}, dpn[3] = {40, 31, 35};
    pages_at(src_pages, 2, spn);
    pages_at(dst_pages, 3, dpn);
    const uint64_t src_va = 0x100000 + 0x234, dst_va = 0x900000 + 0x10;
    const uint32_t n = 5000;
    uint8_t data[5000], back[5000];
    for (uint32_t i = 0; i < n; i++)
        data[i] = (uint8_t)(i * 31 + 1);
    uint8_t *mem = nfm_mem(nf_hw_engine());
    /* put the source bytes where the pages say: first PAGE - FBO bytes in page 22, rest in 20 */
    uint32_t first = PAGE - 0x234;
    mem_write((uint32_t)src_pages[0] + 0x234, data, first);
    mem_write((uint32_t)src_pages[1], data + first, n - first);
    uint32_t local = mr_create(PD_A, 0);
    OK(mr_register(local, NF_NDK_MR_FLAG_ALLOW_LOCAL_WRITE, src_va, n, 0x234, src_pages, 2) == NF_STATUS_SUCCESS,
       "register the local source MR");
    OK(fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NF_NDK_OP_FLAG_ALLOW_REMOTE_READ, e.fast, dst_pages, 3,
                     0x10, 3 * PAGE - 0x10, dst_va, NULL) == NF_STATUS_SUCCESS,
       "fast-register the remote sink MR");
    /* Write in two SGEs: [0, 3000) and [3000, 5000) of the source, to dst_va + 100. */
    struct nf_sge sges[2] = {{src_va, 3000, local}, {src_va + 3000, n - 3000, local}};
    struct nf_cqe c;
    OK(rdma(NF_OP_WR_WRITE, e.qp, 0, dst_va + 100, e.fast, sges, 2, &c) == NF_STATUS_SUCCESS && c.bytes == n &&
           c.op_type == NF_NDK_OP_WRITE,
       "RDMA Write of 5000 bytes in 2 SGEs completes with BytesTransferred 5000");
    /* Check where the bytes landed: dst offset (0x10 + 100) in the MR's page list. */
    int same = 1;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t off = 0x10 + 100 + i;
        uint32_t a = (uint32_t)dst_pages[off / PAGE] + off % PAGE;
        same &= mem[a] == data[i];
    }
    OK(same, "the bytes land page by page in the sink's non-contiguous pages");
    /* Read them back into a LOGICAL (privileged token) buffer. */
    uint32_t logical = user_base() + 50 * PAGE + 3;
    struct nf_sge rs[1] = {{logical, n, NF_ADAPTER_PRIVILEGED_TOKEN}};
    OK(rdma(NF_OP_WR_READ, e.qp, 0, dst_va + 100, e.fast, rs, 1, &c) == NF_STATUS_SUCCESS && c.bytes == n &&
           c.op_type == NF_NDK_OP_READ,
       "RDMA Read back into a logical-address buffer (privileged token)");
    OK(mem_read(logical, back, 4000) == NF_STATUS_SUCCESS && !memcmp(back, data, 4000) &&
           !memcmp(mem + logical + 4000, data + 4000, n - 4000),
       "the read returns the written bytes");

    /* Access failures: ACCESS_VIOLATION, refuse code, QP broken, later WRs CANCELLED. */
    struct snap s0, s1;
    snap_take(&s0);
    OK(rdma(NF_OP_WR_WRITE, e.qp, 0, dst_va + 3 * PAGE - 0x10 - 8, e.fast, sges, 1, &c) == NF_STATUS_ACCESS_VIOLATION &&
           c.refuse == NF_REFUSE_OUT_OF_BOUNDS && c.bytes == 0,
       "RDMA Write past the end of the remote MR -> ACCESS_VIOLATION, refuse OUT_OF_BOUNDS, 0 bytes");
    snap_take(&s1);
    OK(snap_same(&s0, &s1), "... and not a byte was written");
    snap_free(&s0);
    snap_free(&s1);
    OK(rdma(NF_OP_WR_WRITE, e.qp, 0, dst_va, e.fast, sges, 1, &c) == NF_STATUS_CANCELLED,
       "after an access failure every later WR on the QP completes CANCELLED");
    /* fresh QPs for the other refusals */
    uint32_t qp2 = qp_create(PD_A);
    qp_connect(qp2, e.peer);
    uint32_t readonly = mr_create(PD_A, 0);
    mr_register(readonly, NF_NDK_MR_FLAG_ALLOW_LOCAL_READ, src_va, n, 0x234, src_pages, 2);
    struct nf_sge ro[1] = {{src_va, 100, readonly}};
    OK(rdma(NF_OP_WR_READ, qp2, 0, dst_va, e.fast, ro, 1, &c) == NF_STATUS_ACCESS_VIOLATION && c.refuse == NF_REFUSE_NO_RIGHT,
       "RDMA Read into a local MR without local write -> ACCESS_VIOLATION (NO_RIGHT)");
    uint32_t qp3 = qp_create(PD_A);
    qp_connect(qp3, e.peer);
    invalidate(qp3, 0, e.fast);
    snap_take(&s0);
    OK(rdma(NF_OP_WR_WRITE, qp3, 0, dst_va, e.fast, sges, 1, &c) == NF_STATUS_ACCESS_VIOLATION &&
           c.refuse == NF_REFUSE_NOT_VALID,
       "RDMA Write through an invalidated token -> ACCESS_VIOLATION (NOT_VALID)");
    snap_take(&s1);
    OK(snap_same(&s0, &s1), "... nothing written");
    snap_free(&s0);
    snap_free(&s1);
    uint32_t qp4 = qp_create(PD_B), peer_b = qp_create(PD_B);
    qp_connect(qp4, peer_b);
    fast_register(e.qp == 0 ? 0 : qp2, 0, e.fast, dst_pages, 1, 0, 10, 0x1000, NULL); /* qp2 is broken: CANCELLED */
    uint32_t qp5 = qp_create(PD_A);
    qp_connect(qp5, e.peer);
    fast_register(qp5, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, dst_pages, 1, 0, 100, 0x1000, NULL);
    struct nf_sge lsge[1] = {{user_base() + 60 * PAGE, 8, NF_ADAPTER_PRIVILEGED_TOKEN}};
    OK(rdma(NF_OP_WR_WRITE, qp4, 0, 0x1000, e.fast, lsge, 1, &c) == NF_STATUS_ACCESS_VIOLATION && c.refuse == NF_REFUSE_WRONG_PD,
       "RDMA Write to a token of another PD -> ACCESS_VIOLATION (WRONG_PD)");
    uint32_t qp6 = qp_create(PD_A);
    qp_connect(qp6, e.peer);
    OK(rdma(NF_OP_WR_READ, qp6, 0, 0x1000, e.fast, lsge, 1, &c) == NF_STATUS_ACCESS_VIOLATION && c.refuse == NF_REFUSE_NO_RIGHT,
       "RDMA Read of an MR registered without remote read -> ACCESS_VIOLATION (NO_RIGHT)");
    uint32_t qp7 = qp_create(PD_A);
    qp_connect(qp7, e.peer);
    struct nf_sge many[5] = {{0}};
    OK(rdma(NF_OP_WR_WRITE, qp7, 0, 0x1000, e.fast, many, 5, &c) == NF_STATUS_INVALID_PARAMETER,
       "more SGEs than max_sge -> INVALID_PARAMETER");
    qp_reconnect(qp7, e.peer);
    OK(rdma(NF_OP_WR_WRITE, qp7, NF_NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE, 0x1000, e.fast, lsge, 1, &c) ==
           NF_STATUS_NOT_SUPPORTED,
       "RDMA_READ_LOCAL_INVALIDATE -> NOT_SUPPORTED");
    qp_reconnect(qp7, e.peer);
    static const struct {
        const char *what;
        uint32_t flags;
    } bad_flags[] = {
        {"SEND_AND_SOLICIT_EVENT (not an RDMA flag)", NF_NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT},
        {"a fast-register rights flag", NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE},
        {"an undefined bit", 0x4000u},
    };
    for (unsigned i = 0; i < sizeof(bad_flags) / sizeof(bad_flags[0]); i++) {
        for (uint16_t op = NF_OP_WR_READ; op <= NF_OP_WR_WRITE; op++) {
            OK(rdma(op, qp7, bad_flags[i].flags, 0x1000, e.fast, lsge, 1, &c) == NF_STATUS_INVALID_PARAMETER,
               "RDMA %s with %s -> INVALID_PARAMETER", op == NF_OP_WR_READ ? "Read" : "Write", bad_flags[i].what);
            qp_reconnect(qp7, e.peer);
        }
    }
    OK(rdma(NF_OP_WR_WRITE, qp7, NF_NDK_OP_FLAG_READ_FENCE | NF_NDK_OP_FLAG_DEFER, 0x1000, e.fast, lsge, 1, &c) ==
           NF_STATUS_SUCCESS,
       "RDMA Write with READ_FENCE | DEFER (the known RDMA flags) accepted");
    OK(rdma(NF_OP_WR_WRITE, e.qp_unconnected, 0, 0x1000, e.fast, lsge, 1, &c) == NF_STATUS_CONNECTION_INVALID,
       "RDMA Write on an unconnected QP -> CONNECTION_INVALID");
    uint32_t st = rdma(NF_OP_WR_WRITE, qp7, NF_NDK_OP_FLAG_SILENT_SUCCESS, 0x1000, e.fast, lsge, 1, &c);
    OK(st == NO_REPLY, "a successful silent RDMA Write produces no CQE (got 0x%08X refuse %u)", st, c.refuse);
}

static uint32_t race_index, race_done;

static void invalidate_mid_transfer(struct nfm_engine *e, uint32_t src_addr, uint32_t dst_addr, uint32_t len,
                                    uint32_t bytes_done, void *ctx)
{
    (void)ctx;
    (void)src_addr;
    (void)dst_addr;
    (void)len;
    if (race_done)
        return;
    race_done = bytes_done;
    nfm_csr_write(e, NF_ENGINE_TBL_INDEX, race_index);
    nfm_csr_write(e, NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_INVALIDATE);
}

void test_rdma_stopped(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t dst_pages[3];
    static const uint32_t dpn[3] = {12, 14, 16};
    pages_at(dst_pages, 3, dpn);
    fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, dst_pages, 3, 0, 3 * PAGE, 0x200000, NULL);
    race_index = NF_TOKEN_INDEX_GET(e.fast);
    race_done = 0;
    nfm_set_chunk_hook(nf_hw_engine(), invalidate_mid_transfer, NULL);
    struct nf_sge s[1] = {{user_base() + 40 * PAGE, 3 * PAGE, NF_ADAPTER_PRIVILEGED_TOKEN}};
    struct nf_cqe c;
    uint32_t st = rdma(NF_OP_WR_WRITE, e.qp, 0, 0x200000, e.fast, s, 1, &c);
    nfm_set_chunk_hook(nf_hw_engine(), NULL, NULL);
    OK(st == NF_STATUS_ACCESS_VIOLATION && c.refuse == NF_REFUSE_STOPPED && race_done > 0 && c.bytes == race_done &&
           c.bytes < 3 * PAGE,
       "an entry invalidated during an RDMA Write stops it: ACCESS_VIOLATION, refuse STOPPED, bytes = bytes written (%u)",
       c.bytes);
}

/* Every engine wait is bounded: an engine that never finishes (a hardware fault) fails
 * the request with INTERNAL_ERROR (CQE refuse TIMEOUT) after the documented bound, and
 * STATS counts it; the firmware goes on answering. */
void test_engine_timeout(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[1] = {page_at(7)};
    struct nf_stats a = {0}, b = {0};
    uint32_t sa = tb_req(NF_OP_STATS, NULL, 0, &a, sizeof(a));
    uint64_t bound = (uint64_t)fw_cfg.mtt_entries * PAGE > fw_cfg.mem_bytes ? (uint64_t)fw_cfg.mtt_entries * PAGE
                                                                            : fw_cfg.mem_bytes;
    OK(fw_cfg.eng_wait_max == bound + 0x10000u,
       "the engine wait bound is max(MEM_BYTES, MTT entries x PAGE_SIZE) + 64 Ki cycles (%u)", fw_cfg.eng_wait_max);
    nf_hw_engine_hang(1);
    uint64_t t0 = nf_hw_cycles();
    struct nf_cqe c = {0};
    uint32_t st = fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, pages, 1, 0, PAGE, 0x60000, &c);
    uint64_t took = nf_hw_cycles() - t0;
    nf_hw_engine_hang(0);
    OK(st == NF_STATUS_INTERNAL_ERROR && c.refuse == NF_REFUSE_TIMEOUT && fw_stats.wait_timeouts == 1 &&
           took > fw_cfg.eng_wait_max && took < 2u * (uint64_t)fw_cfg.eng_wait_max + 1000000u &&
           mpt_state(e.fast) != NF_MPT_STATE_VALID,
       "a hung engine: FAST_REGISTER fails INTERNAL_ERROR (refuse TIMEOUT) after the bound (%llu cycles), MR not valid",
       (unsigned long long)took);
    nf_hw_engine_hang(1);
    struct nf_mem_write_req mw = {user_base(), 8};
    uint8_t body[sizeof(mw) + 8] = {0};
    memcpy(body, &mw, sizeof(mw));
    uint32_t sm = tb_req(NF_OP_MEM_WRITE, body, sizeof(body), NULL, 0);
    nf_hw_engine_hang(0);
    OK(sm == NF_STATUS_INTERNAL_ERROR && fw_stats.wait_timeouts == 2,
       "a hung engine: MEM_WRITE fails INTERNAL_ERROR, not INVALID_PARAMETER");
    uint32_t sb = tb_req(NF_OP_STATS, NULL, 0, &b, sizeof(b));
    OK(sa == NF_STATUS_SUCCESS && sb == NF_STATUS_SUCCESS && b.wait_timeouts - a.wait_timeouts == 2 &&
           b.refuse_codes[NF_REFUSE_TIMEOUT] - a.refuse_codes[NF_REFUSE_TIMEOUT] == 1 &&
           b.refused[NF_STAT_STATUS_INTERNAL_ERROR] - a.refused[NF_STAT_STATUS_INTERNAL_ERROR] == 2,
       "STATS counts the wait timeouts (2), the CQE's TIMEOUT refusal and the INTERNAL_ERROR statuses");
    qp_reconnect(e.qp, e.peer);
    OK(fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, pages, 1, 0, PAGE, 0x60000, NULL) ==
           NF_STATUS_SUCCESS,
       "the engine back: the next FAST_REGISTER succeeds");
}

/* The TX-drain wait is bounded too: link hardware whose slots never stop sending does
 * not hang the firmware; RESET is answered after the bound, and STATS counts it. */
void test_tx_drain_timeout(void)
{
    tb_init("sim");
    uint32_t t0 = fw_stats.wait_timeouts;
    uint64_t bound = (((uint64_t)fw_cfg.tx_slots * NF_LINK_SLOT_BYTES * 10u * 2u * 2u * fw_cfg.uart_period) >>
                      NF_SOC_UART_PERIOD_FRAC) + fw_cfg.clk_hz / 50u;
    nf_hw_tx_hang(1);
    uint64_t c0 = nf_hw_cycles();
    tb_clear();
    tb_send_frame(NF_LINK_TYPE_RESET, 0, 0, 0x7777, NULL, 0);
    tb_run();
    uint64_t took = nf_hw_cycles() - c0;
    nf_hw_tx_hang(0);
    int acked = 0;
    for (int i = 0; i < tb.nframes; i++)
        acked |= tb.frames[i].hdr.type == NF_LINK_TYPE_RESET_ACK && tb.frames[i].hdr.rsvd == 0x7777;
    tb.tx_seq = tb.rx_expect = tb.last_acked = 0;
    OK(acked && fw_stats.wait_timeouts - t0 == 1 && took > bound && took < 2u * bound,
       "TX slots stuck busy: RESET is answered after the documented drain bound (%llu of %llu cycles), counted",
       (unsigned long long)took, (unsigned long long)bound);
    struct nf_stats st = {0};
    uint32_t rs = tb_req(NF_OP_STATS, NULL, 0, &st, sizeof(st));
    OK(rs == NF_STATUS_SUCCESS && st.wait_timeouts == fw_stats.wait_timeouts, "STATS reports it (wait_timeouts %u)",
       st.wait_timeouts);
}

void test_qp_flush(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[1] = {page_at(9)};
    const uint32_t rw = NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE;
    const uint64_t va = 0x70000;
    struct nf_wr_fast_register fr = {e.fast, 1, 0, 0, PAGE, va};
    struct nf_wr_invalidate inv = {e.fast, 0};

    /* One frame: FR, INV, FR (silent), QP_FLUSH, INV, FR (silent). The board runs them
     * in order: the three before the flush execute, the two after are cancelled. */
    uint8_t buf[NF_LINK_MAX_PAYLOAD];
    size_t len = 0;
    put_wr(buf, &len, NF_OP_WR_FAST_REGISTER, e.qp, 1, rw, &fr, sizeof(fr), pages, 1);
    put_wr(buf, &len, NF_OP_WR_INVALIDATE, e.qp, 2, 0, &inv, sizeof(inv), NULL, 0);
    put_wr(buf, &len, NF_OP_WR_FAST_REGISTER, e.qp, 3, rw | NF_NDK_OP_FLAG_SILENT_SUCCESS, &fr, sizeof(fr), pages, 1);
    struct nf_qp_req fq = {e.qp, 0};
    uint32_t ftag = tb_put_msg(buf, &len, NF_OP_QP_FLUSH, &fq, sizeof(fq));
    put_wr(buf, &len, NF_OP_WR_INVALIDATE, e.qp, 4, 0, &inv, sizeof(inv), NULL, 0);
    put_wr(buf, &len, NF_OP_WR_FAST_REGISTER, e.qp, 5, rw | NF_NDK_OP_FLAG_SILENT_SUCCESS, &fr, sizeof(fr), pages, 1);
    tb_exchange(buf, len);
    /* Expected output, in order: CQE 1, CQE 2 (3 is a silent success), the flush's
     * reply, CQE 4 and CQE 5 (a cancelled silent request still completes). */
    static const uint32_t want_id[5] = {1, 2, 0, 4, 5};
    static const uint32_t want_st[5] = {NF_STATUS_SUCCESS, NF_STATUS_SUCCESS, NF_STATUS_SUCCESS, NF_STATUS_CANCELLED,
                                        NF_STATUS_CANCELLED};
    int order = tb.nmsgs == 5;
    for (int i = 0; order && i < 5; i++) {
        const struct tb_msg *m = &tb.msgs[i];
        if (i == 2) {
            order &= m->hdr.op == (NF_OP_QP_FLUSH | NF_OP_REPLY) && m->hdr.tag == ftag &&
                     m->hdr.status == want_st[i];
            continue;
        }
        struct nf_cqe c;
        memcpy(&c, m->body, sizeof(c));
        order &= m->hdr.op == NF_OP_CQE && c.qpn == e.qp && c.wr_id == want_id[i] && c.status == want_st[i];
    }
    OK(order, "FR, INV, silent FR, QP_FLUSH, INV, silent FR in one frame: SUCCESS, SUCCESS, (silent), flush reply, "
              "CANCELLED, CANCELLED, in that order (%d messages)", tb.nmsgs);
    OK(mpt_state(e.fast) == NF_MPT_STATE_VALID &&
           nfm_check(nf_hw_engine(), e.fast, va, 8, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) == NF_REFUSE_OK,
       "the requests before the flush took effect, the invalidate after it did not: the token still grants");

    struct snap s0, s1;
    snap_take(&s0);
    uint32_t st_inv = invalidate(e.qp, 0, e.fast);
    uint64_t other[1] = {page_at(11)};
    uint32_t st_fr = fast_register(e.qp, 0, e.fast_local, other, 1, 0, PAGE, 0x80000, NULL);
    snap_take(&s1);
    OK(st_inv == NF_STATUS_CANCELLED && st_fr == NF_STATUS_CANCELLED && snap_same(&s0, &s1),
       "after QP_FLUSH every WR on the QP completes CANCELLED and changes nothing");
    snap_free(&s0);
    snap_free(&s1);
    OK(qp_op(NF_OP_QP_FLUSH, e.qp) == NF_STATUS_SUCCESS && fw_qps[fw_qp_lookup(e.qp)].state == FW_QP_ERROR,
       "QP_FLUSH of a flushed QP: SUCCESS, still ERROR");
    OK(qp_connect(e.qp, e.peer) == NF_STATUS_INVALID_DEVICE_STATE, "a flushed QP cannot be connected again as it is");
    OK(invalidate(e.peer, 0, e.fast) == NF_STATUS_SUCCESS, "the peer QP is not affected by the flush");

    /* Bad input: a clear error, nothing changes. */
    snap_take(&s0);
    OK(qp_op(NF_OP_QP_FLUSH, 0x4242) == NF_STATUS_INVALID_PARAMETER &&
           tb_req(NF_OP_QP_FLUSH, NULL, 0, NULL, 0) == NF_STATUS_INVALID_PARAMETER,
       "QP_FLUSH of an unknown qpn or with a short body -> INVALID_PARAMETER");
    snap_take(&s1);
    OK(snap_same(&s0, &s1), "... nothing changed");
    snap_free(&s0);
    snap_free(&s1);

    /* Not connected: nothing to flush, the QP stays RESET and connects normally. */
    OK(qp_op(NF_OP_QP_FLUSH, e.qp_unconnected) == NF_STATUS_SUCCESS &&
           fw_qps[fw_qp_lookup(e.qp_unconnected)].state == FW_QP_RESET,
       "QP_FLUSH of a QP that is not connected: SUCCESS, it stays RESET");
    OK(qp_connect(e.qp_unconnected, e.peer) == NF_STATUS_SUCCESS &&
           invalidate(e.qp_unconnected, 0, e.fast) == NF_STATUS_INVALID_DEVICE_STATE,
       "... and connects and executes work requests afterwards");

    /* Disconnect ends the flushed state (as it ends ERROR). */
    OK(qp_op(NF_OP_QP_DISCONNECT, e.qp) == NF_STATUS_SUCCESS && qp_connect(e.qp, e.peer) == NF_STATUS_SUCCESS &&
           fast_register(e.qp, rw, e.fast, pages, 1, 0, PAGE, va, NULL) == NF_STATUS_SUCCESS,
       "QP_DISCONNECT then QP_CONNECT: the QP executes work requests again");
}

/* A CQE's bytes are exact whoever zeroed its space: the link while idle (the first two
 * completions of a frame: only their nonzero words are written) or reserve_zeroed itself
 * (the third), in TX slots whose earlier frames left other bytes there. */
void test_cqe_exact(void)
{
    struct wr_env e;
    wr_env(&e);
    uint8_t body[400];
    memset(body, 0x5A, sizeof(body));
    int pings = 1;
    for (uint32_t i = 0; i < 2u * nf_hw_cfg()->tx_slots; i++)
        pings &= tb_req(NF_OP_PING, body, sizeof(body), NULL, 0) == NF_STATUS_SUCCESS;
    uint64_t pages[1] = {page_at(9)};
    struct nf_wr_fast_register fr = {e.fast, 1, 0, 0, PAGE, 0x70000};
    struct nf_wr_invalidate inv = {e.fast, 0};
    struct nf_wr_fast_register bad = {e.normal, 1, 0, 0, PAGE, 0x70000}; /* not a fast-register MR */
    uint8_t buf[NF_LINK_MAX_PAYLOAD];
    size_t len = 0;
    put_wr(buf, &len, NF_OP_WR_FAST_REGISTER, e.qp, 11, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, &fr, sizeof(fr), pages, 1);
    put_wr(buf, &len, NF_OP_WR_INVALIDATE, e.qp, 12, 0, &inv, sizeof(inv), NULL, 0);
    put_wr(buf, &len, NF_OP_WR_FAST_REGISTER, e.qp, 13, 0, &bad, sizeof(bad), pages, 1);
    tb_exchange(buf, len);
    static const uint32_t want_op[3] = {NF_NDK_OP_FAST_REGISTER, NF_NDK_OP_INVALIDATE, NF_NDK_OP_FAST_REGISTER};
    int exact = tb.nmsgs == 3;
    for (int i = 0; exact && i < 3; i++) {
        const struct tb_msg *m = &tb.msgs[i];
        struct nf_cqe c;
        memcpy(&c, m->body, sizeof(c));
        exact &= m->hdr.op == NF_OP_CQE && m->hdr.len == NF_MSG_HDR_SIZE + NF_CQE_SIZE && m->hdr.tag == 0 &&
                 m->hdr.status == 0 && m->hdr.rsvd == 0 && c.qpn == e.qp && c.wr_id == 11u + (uint32_t)i &&
                 (i < 2 ? c.status == NF_STATUS_SUCCESS : c.status != NF_STATUS_SUCCESS) && c.bytes == 0 &&
                 c.op_type == want_op[i] && c.refuse == NF_REFUSE_OK && c.token == 0 && c.cflags == 0;
    }
    OK(pings && exact,
       "three CQEs in one frame, in TX slots that held other bytes: every header and CQE field exact (%d messages)",
       tb.nmsgs);
    qp_reconnect(e.qp, e.peer);
}

void test_timing(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[1] = {page_at(5)};
    uint64_t a0 = nf_hw_accesses();
    (void)a0;
    uint8_t buf[256];
    size_t len = 0;
    struct nf_wr_hdr h = {e.qp, 1, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, 0};
    struct nf_wr_fast_register f = {e.fast, 1, 0, 0, PAGE, 0x10000};
    uint8_t body[sizeof(h) + sizeof(f) + 8];
    memcpy(body, &h, sizeof(h));
    memcpy(body + sizeof(h), &f, sizeof(f));
    memcpy(body + sizeof(h) + sizeof(f), pages, 8);
    tb_put_msg(buf, &len, NF_OP_WR_FAST_REGISTER, body, sizeof(body));
    tb_clear();
    tb_send_data(buf, len);
    uint64_t acc0 = nf_hw_accesses();
    tb_run();
    uint64_t acc = nf_hw_accesses() - acc0;
    struct nf_info info;
    OK(info_get(&info) && info.last_wr_op == NF_OP_WR_FAST_REGISTER && info.wr_count >= 1 && info.last_wr_cycles > 0 &&
           info.last_wr_fw_cycles <= info.last_wr_cycles,
       "INFO reports the last WR's cycles from RX_STAMP to CQE");
    printf("# fast-register of 1 page (host build): %u cycles stamp->CQE, %u firmware cycles (model: %u cycles per bus "
           "access); %llu bus accesses for the whole poll round incl. frame flush\n",
           info.last_wr_cycles, info.last_wr_fw_cycles, NF_HW_CYCLES_PER_ACCESS, (unsigned long long)acc);
}

void test_adapter_reset(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[1] = {page_at(5)};
    fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, pages, 1, 0, PAGE, 0x10000, NULL);
    OK(tb_req(NF_OP_ADAPTER_RESET, NULL, 0, NULL, 0) == NF_STATUS_SUCCESS, "ADAPTER_RESET");
    OK(nfm_check(nf_hw_engine(), e.fast, 0x10000, 8, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) != NF_REFUSE_OK &&
           fw_qp_lookup(e.qp) == FW_NO_INDEX && fw_mr_lookup(e.fast) == FW_NO_INDEX,
       "after ADAPTER_RESET no token grants and no QP or MR is known");
    uint32_t t = mr_create(PD_A, 1);
    OK(t && t != e.fast, "tokens handed out after the reset differ from the old ones");
}

/* STATS: every counter moves where its work is done, by exactly what was done. */
void test_stats(void)
{
    struct nf_stats a, b;
    struct wr_env e;
    wr_env(&e);
    OK(stats_get(&a) && a.profile == NF_PROFILE_SIM_INDEX && a.rx_ok > 0 && a.tx_frames > 0 &&
           a.ops[NF_STAT_OP_QP_CREATE] == 3 && a.ops[NF_STAT_OP_QP_CONNECT] == 2 && a.ops[NF_STAT_OP_MR_CREATE] == 4 &&
           a.ops[NF_STAT_OP_FRMR_INIT] == 3 && a.ops[NF_STAT_OP_STATS] == 1,
       "STATS reports the profile, the link counters and every request by op");

    uint64_t pages[2];
    static const uint32_t pn[2] = {4, 9};
    pages_at(pages, 2, pn);
    uint32_t st1 = fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, pages, 2, 0, 2 * PAGE, 0x30000, NULL);
    uint32_t st2 = invalidate(e.qp, 0, e.fast);
    uint32_t st3 = fast_register(e.qp, 0, e.fast, pages, 1, 0, PAGE, 0x30000, NULL);
    uint32_t st4 = invalidate(e.qp, 0, e.fast);
    uint32_t st5 = invalidate(e.qp, 0, e.fast);            /* already invalid */
    qp_reconnect(e.qp, e.peer);                             /* the error completion broke it */
    uint32_t st6 = invalidate(e.qp, 0, e.normal);          /* not a fast-register MR */
    qp_reconnect(e.qp, e.peer);
    uint32_t st7 = frmr_init(e.fast, NF_PROFILE_SIM_MAX_FRMR_PAGES + 1u, 0);
    struct nf_sge sge = {0x30000, 8, e.fast};
    struct nf_cqe c;
    uint32_t st8 = rdma(NF_OP_WR_WRITE, e.qp, 0, 0x30000, e.fast, &sge, 1, &c); /* through an invalid token */
    uint32_t st9 = rdma(NF_OP_WR_READ, e.qp, 0, 0x30000, e.fast, &sge, 1, NULL); /* QP in ERROR now */
    OK(st1 == NF_STATUS_SUCCESS && st2 == NF_STATUS_SUCCESS && st3 == NF_STATUS_SUCCESS && st4 == NF_STATUS_SUCCESS &&
           st5 == NF_STATUS_INVALID_DEVICE_STATE && st6 == NF_STATUS_INVALID_DEVICE_STATE &&
           st7 == NF_STATUS_IMPLEMENTATION_LIMIT && st8 == NF_STATUS_ACCESS_VIOLATION && st9 == NF_STATUS_CANCELLED,
       "a known sequence of work: 2 fast-registers, 4 invalidates, 1 write, 1 read, 5 of them refused");
    uint32_t unknown = tb_req(0x0777, NULL, 0, NULL, 0);
    OK(stats_get(&b), "STATS again");
    uint32_t refused_sum = 0, ops_sum = 0;
    for (unsigned i = 0; i < NF_STATS_REFUSED_COUNT; i++)
        refused_sum += b.refused[i] - a.refused[i];
    for (unsigned i = 0; i < NF_STATS_OPS_COUNT; i++)
        ops_sum += b.ops[i] - a.ops[i];
    /* counter index -> how much it must have grown */
    static const uint32_t ops_want[][2] = {
        {NF_STAT_OP_WR_FAST_REGISTER, 2}, {NF_STAT_OP_WR_INVALIDATE, 4}, {NF_STAT_OP_WR_WRITE, 1},
        {NF_STAT_OP_WR_READ, 1},          {NF_STAT_OP_FRMR_INIT, 1},     {NF_STAT_OP_STATS, 1},
        {NF_STAT_OP_QP_DISCONNECT, 2},    {NF_STAT_OP_QP_CONNECT, 2},
    };
    static const uint32_t refused_want[][2] = {
        {NF_STAT_STATUS_INVALID_DEVICE_STATE, 2}, {NF_STAT_STATUS_INVALID_PARAMETER, 0},
        {NF_STAT_STATUS_IMPLEMENTATION_LIMIT, 1}, {NF_STAT_STATUS_ACCESS_VIOLATION, 1},
        {NF_STAT_STATUS_CANCELLED, 1},            {NF_STAT_STATUS_NOT_SUPPORTED, 1},
    };
    int ops_ok = ops_sum == 14, refused_ok = refused_sum == 6 && b.refused_other == a.refused_other;
    for (unsigned i = 0; i < sizeof(ops_want) / sizeof(ops_want[0]); i++)
        ops_ok &= b.ops[ops_want[i][0]] - a.ops[ops_want[i][0]] == ops_want[i][1];
    for (unsigned i = 0; i < sizeof(refused_want) / sizeof(refused_want[0]); i++)
        refused_ok &= b.refused[refused_want[i][0]] - a.refused[refused_want[i][0]] == refused_want[i][1];
    OK(ops_ok, "work requests and requests are counted by op, each once (fast path and walk alike)");
    OK(unknown == NF_STATUS_NOT_SUPPORTED && b.ops_unknown - a.ops_unknown == 1,
       "an unknown op counts as unknown (and is refused NOT_SUPPORTED)");
    OK(refused_ok,
       "refusals are counted by status, replies and CQEs alike, nothing else");
    uint32_t codes = 0;
    for (unsigned i = 0; i < NF_STATS_REFUSE_CODES_COUNT; i++)
        codes += b.refuse_codes[i] - a.refuse_codes[i];
    OK(c.refuse == NF_REFUSE_NOT_VALID && b.refuse_codes[NF_REFUSE_NOT_VALID] - a.refuse_codes[NF_REFUSE_NOT_VALID] == 1 &&
           codes == 1,
       "the engine's refusal is counted under its REFUSE code (NOT_VALID)");
    uint64_t ca = (uint64_t)a.cycle_hi << 32 | a.cycle_lo, cb = (uint64_t)b.cycle_hi << 32 | b.cycle_lo;
    OK(cb > ca && b.rx_ok > a.rx_ok && b.tx_frames > a.tx_frames && b.tx_overflow == 0,
       "the cycle stamp and the link counters move forward; nothing overflowed");

    /* A link RESET keeps the counters (they count since boot). */
    tb_send_frame(NF_LINK_TYPE_RESET, 0, 0, 0x5151, NULL, 0);
    tb.tx_seq = tb.rx_expect = tb.last_acked = 0;
    tb_run();
    struct nf_stats r;
    OK(stats_get(&r) && r.ops[NF_STAT_OP_WR_FAST_REGISTER] == b.ops[NF_STAT_OP_WR_FAST_REGISTER] &&
           r.refused[NF_STAT_STATUS_ACCESS_VIOLATION] == b.refused[NF_STAT_STATUS_ACCESS_VIOLATION],
       "a link RESET keeps the counters");

    tb_init("ulx3s_25k");
    OK(stats_get(&r) && r.profile == NF_PROFILE_ULX3S_25K_INDEX && r.ops[NF_STAT_OP_STATS] == 1,
       "the 25K adapter reports its profile; a boot clears the counters");
}

/* A trap (FAULT_TEST: an illegal instruction; the host build's CPU model records it as
 * the target's handler does): the adapter still answers, STATS tells the trap, and every
 * later request but PING, INFO and STATS fails DEVICE_HARDWARE_ERROR. */
void test_fault(void)
{
    struct wr_env e;
    wr_env(&e);
    struct nf_stats s0, s1;
    int before = stats_get(&s0) && s0.faults == 0;
    uint32_t ft = tb_req(NF_OP_FAULT_TEST, NULL, 0, NULL, 0);
    OK(before && ft == NF_STATUS_DEVICE_HARDWARE_ERROR && stats_get(&s1) && s1.faults == 1 && s1.fault_cause == 2,
       "FAULT_TEST: answered DEVICE_HARDWARE_ERROR, STATS reports one trap, cause 2 (illegal instruction)");
    uint64_t pages[1] = {page_at(3)};
    uint8_t ping[8] = "faulted", echo[8] = {0};
    struct nf_info info;
    OK(fast_register(e.qp, 0, e.fast, pages, 1, 0, PAGE, 0x30000, NULL) == NF_STATUS_DEVICE_HARDWARE_ERROR &&
           qp_op(NF_OP_QP_DISCONNECT, e.qp) == NF_STATUS_DEVICE_HARDWARE_ERROR &&
           tb_req(NF_OP_PING, ping, sizeof(ping), echo, sizeof(echo)) == NF_STATUS_SUCCESS &&
           memcmp(ping, echo, sizeof(ping)) == 0 && info_get(&info),
       "faulted: a work request and a request fail DEVICE_HARDWARE_ERROR; PING and INFO still answer");
}
