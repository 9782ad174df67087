/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the firmware's host build, driven through the link model: frames in,
 * frames out, tables and memory checked in the engine model. The requests every test
 * file uses (fw_test.h), and main. The cases: test_fw.c (link, messages, memory),
 * test_fw_mr.c (MRs, QPs, fast-register and invalidate rules), test_fw_wr.c (RDMA,
 * error completions, flush, timeouts, counters), test_fw_send.c (Send, Receive),
 * test_fw_mw.c (memory windows), test_fw_net.c (the network port's IPv4 layer). */
#include "fw_test.h"

/* ---- snapshots: everything a refused request must leave alone ---- */

void snap_take(struct snap *s)
{
    const struct nf_hw_cfg *c = nf_hw_cfg();
    struct nfm_engine *e = nf_hw_engine();
    s->nmpt = c->mpt_entries;
    s->nmtt = c->mtt_entries;
    s->mem_bytes = c->mem_bytes;
    s->mpt = calloc((size_t)s->nmpt * NFM_MPT_WORDS, 4);
    s->mtt = calloc(s->nmtt, 4);
    s->mem = malloc(s->mem_bytes);
    for (uint32_t i = 0; i < s->nmpt; i++)
        nfm_mpt_get(e, i, &s->mpt[i * NFM_MPT_WORDS]);
    for (uint32_t i = 0; i < s->nmtt; i++)
        nfm_mtt_get(e, i, &s->mtt[i]);
    memcpy(s->mem, nfm_mem(e), s->mem_bytes);
}

void snap_free(struct snap *s)
{
    free(s->mpt);
    free(s->mtt);
    free(s->mem);
}

/* Tables equal, and the user region equal (link slots change with every frame). */
int snap_same(const struct snap *a, const struct snap *b)
{
    uint32_t ub = nf_hw_user_base();
    return !memcmp(a->mpt, b->mpt, (size_t)a->nmpt * NFM_MPT_WORDS * 4) &&
           !memcmp(a->mtt, b->mtt, (size_t)a->nmtt * 4) && !memcmp(a->mem + ub, b->mem + ub, a->mem_bytes - ub);
}

uint32_t user_base(void) { return nf_hw_user_base(); }

/* ---- request helpers ---- */
uint32_t mr_create(uint32_t pd, uint32_t fast)
{
    struct nf_mr_create_req q = {pd, fast};
    struct nf_mr_create_rep r = {0, 0};
    return tb_req(NF_OP_MR_CREATE, &q, sizeof(q), &r, sizeof(r)) == NF_STATUS_SUCCESS ? r.token : 0;
}

uint32_t mw_create(uint32_t pd, uint32_t *st)
{
    struct nf_mr_create_req q = {pd, 0};
    struct nf_mr_create_rep r = {0, 0};
    uint32_t s = tb_req(NF_OP_MW_CREATE, &q, sizeof(q), &r, sizeof(r));
    if (st)
        *st = s;
    return s == NF_STATUS_SUCCESS ? r.token : 0;
}

uint32_t token_op(uint16_t op, uint32_t token)
{
    struct nf_token_req q = {token, 0};
    return tb_req(op, &q, sizeof(q), NULL, 0);
}

uint32_t frmr_init(uint32_t token, uint32_t npages, uint32_t remote)
{
    struct nf_frmr_init_req q = {token, npages, remote, 0};
    return tb_req(NF_OP_FRMR_INIT, &q, sizeof(q), NULL, 0);
}

uint32_t qp_create(uint32_t pd)
{
    struct nf_qp_create_req q = {pd, 16, 0, 0};
    struct nf_qp_create_rep r = {0, 0};
    return tb_req(NF_OP_QP_CREATE, &q, sizeof(q), &r, sizeof(r)) == NF_STATUS_SUCCESS ? r.qpn : 0;
}

uint32_t qp_connect(uint32_t qpn, uint32_t peer)
{
    struct nf_qp_connect_req q = {qpn, peer};
    return tb_req(NF_OP_QP_CONNECT, &q, sizeof(q), NULL, 0);
}

uint32_t mem_write(uint32_t addr, const void *data, uint32_t len)
{
    uint8_t body[NF_LINK_MAX_PAYLOAD];
    struct nf_mem_write_req q = {addr, len};
    memcpy(body, &q, sizeof(q));
    memcpy(body + sizeof(q), data, len);
    return tb_req(NF_OP_MEM_WRITE, body, sizeof(q) + len, NULL, 0);
}

uint32_t mem_read(uint32_t addr, void *data, uint32_t len)
{
    struct nf_mem_read_req q = {addr, len};
    return tb_req(NF_OP_MEM_READ, &q, sizeof(q), data, len);
}

uint32_t mr_register(uint32_t token, uint32_t flags, uint64_t va, uint64_t length, uint32_t fbo,
                            const uint64_t *pages, uint32_t npages)
{
    uint8_t body[NF_LINK_MAX_PAYLOAD];
    struct nf_mr_register_req q = {token, flags, va, length, fbo, npages};
    memcpy(body, &q, sizeof(q));
    memcpy(body + sizeof(q), pages, 8u * npages);
    return tb_req(NF_OP_MR_REGISTER, body, sizeof(q) + 8u * npages, NULL, 0);
}

static uint32_t next_wr_id = 100;

/* A work request's message body in b: the header, then body, then tail (page list or
 * SGEs). Returns its size. */
static size_t wr_body(uint8_t *b, uint32_t qpn, uint32_t wr_id, uint32_t flags, const void *body, size_t blen,
                      const void *tail, size_t tail_len)
{
    struct nf_wr_hdr h = {qpn, wr_id, flags, 0};
    memcpy(b, &h, sizeof(h));
    memcpy(b + sizeof(h), body, blen);
    if (tail_len)
        memcpy(b + sizeof(h) + blen, tail, tail_len);
    return sizeof(h) + blen + tail_len;
}

/* Post one work request in its own frame with a fresh wr_id. Returns the CQE status,
 * NO_REPLY when no CQE came (silent success), NO_REPLY - 1 for a CQE naming another
 * request or type. */
static uint32_t wr_post(uint16_t op, uint32_t qpn, uint32_t flags, const void *body, size_t blen, const void *tail,
                        size_t tail_len, struct nf_cqe *out)
{
    static const uint32_t op_type[8] = {NF_NDK_OP_FAST_REGISTER, NF_NDK_OP_INVALIDATE, NF_NDK_OP_READ,
                                        NF_NDK_OP_WRITE,         NF_NDK_OP_SEND,       NF_NDK_OP_SEND,
                                        NF_NDK_OP_RECEIVE,       NF_NDK_OP_BIND};
    uint8_t b[NF_LINK_MAX_PAYLOAD];
    uint32_t wr_id = next_wr_id++;
    struct nf_cqe c = {0};
    if (!tb_wr(op, b, wr_body(b, qpn, wr_id, flags, body, blen, tail, tail_len), &c))
        return NO_REPLY;
    if (out)
        *out = c;
    return c.wr_id == wr_id && c.op_type == op_type[(op - NF_OP_WR_FAST_REGISTER) & 7u] ? c.status : NO_REPLY - 1u;
}

uint32_t fast_register(uint32_t qpn, uint32_t flags, uint32_t token, const uint64_t *pages, uint32_t npages,
                       uint32_t fbo, uint64_t length, uint64_t va, struct nf_cqe *out)
{
    struct nf_wr_fast_register f = {token, npages, fbo, 0, length, va};
    return wr_post(NF_OP_WR_FAST_REGISTER, qpn, flags, &f, sizeof(f), pages, 8u * npages, out);
}

uint32_t invalidate(uint32_t qpn, uint32_t flags, uint32_t token)
{
    struct nf_wr_invalidate v = {token, 0};
    return wr_post(NF_OP_WR_INVALIDATE, qpn, flags, &v, sizeof(v), NULL, 0, NULL);
}

uint32_t bind(uint32_t qpn, uint32_t flags, uint32_t mr, uint32_t mw, uint64_t va, uint64_t length)
{
    struct nf_wr_bind b = {mr, mw, va, length};
    return wr_post(NF_OP_WR_BIND, qpn, flags, &b, sizeof(b), NULL, 0, NULL);
}

uint32_t rdma(uint16_t op, uint32_t qpn, uint32_t flags, uint64_t remote_va, uint32_t remote_token,
              const struct nf_sge *sges, uint32_t nsge, struct nf_cqe *out)
{
    struct nf_wr_rdma r = {remote_va, remote_token, nsge};
    return wr_post(op, qpn, flags, &r, sizeof(r), sges, sizeof(*sges) * nsge, out);
}

void mpt_get(uint32_t token, uint32_t w[NFM_MPT_WORDS])
{
    nfm_mpt_get(nf_hw_engine(), NF_TOKEN_INDEX_GET(token), w);
}

uint32_t mpt_state(uint32_t token)
{
    uint32_t w[NFM_MPT_WORDS];
    mpt_get(token, w);
    return NF_MPT_W0_STATE_GET(w[0]);
}

int info_get(struct nf_info *info)
{
    return tb_req(NF_OP_INFO, NULL, 0, info, sizeof(*info)) == NF_STATUS_SUCCESS;
}

uint64_t page_at(uint32_t page_number)
{
    return user_base() + (uint64_t)page_number * PAGE;
}

void pages_at(uint64_t *pages, uint32_t n, const uint32_t *page_numbers)
{
    for (uint32_t i = 0; i < n; i++)
        pages[i] = page_at(page_numbers[i]);
}
void wr_env(struct wr_env *e)
{
    tb_init("sim");
    e->qp = qp_create(PD_A);
    e->peer = qp_create(PD_A);
    e->qp_unconnected = qp_create(PD_A);
    qp_connect(e->qp, e->peer);
    qp_connect(e->peer, e->qp);
    e->fast = mr_create(PD_A, 1);
    frmr_init(e->fast, 4, 1);
    e->fast_local = mr_create(PD_A, 1);
    frmr_init(e->fast_local, 4, 0);
    e->normal = mr_create(PD_A, 0);
    e->fast_other_pd = mr_create(PD_B, 1);
    frmr_init(e->fast_other_pd, 4, 1);
}

uint32_t qp_state(uint32_t qpn) { return fw_qps[qpn & FW_QPN_INDEX_MASK].state; }

/* An error completion breaks the QP (NDK); tests that go on with it after an expected
 * error disconnect and connect it again. */
void qp_reconnect(uint32_t qpn, uint32_t peer)
{
    qp_op(NF_OP_QP_DISCONNECT, qpn);
    qp_connect(qpn, peer);
}

int refused_cleanly(const struct wr_env *e, uint32_t qp, uint32_t st, uint32_t want, struct snap *s0)
{
    struct snap s1;
    snap_take(&s1);
    int ok = st == want && snap_same(s0, &s1) && (qp != e->qp || qp_state(e->qp) == FW_QP_ERROR);
    snap_free(s0);
    snap_free(&s1);
    if (qp == e->qp)
        qp_reconnect(e->qp, e->peer);
    return ok;
}

uint32_t qp_op(uint16_t op, uint32_t qpn)
{
    struct nf_qp_req q = {qpn, 0};
    return tb_req(op, &q, sizeof(q), NULL, 0);
}

/* Append a work request (header + body + optional page list) to buf. */
void put_wr(uint8_t *buf, size_t *len, uint16_t op, uint32_t qpn, uint32_t wr_id, uint32_t flags,
            const void *body, size_t blen, const uint64_t *pages, uint32_t npages)
{
    uint8_t b[NF_LINK_MAX_PAYLOAD];
    tb_put_msg(buf, len, op, b, wr_body(b, qpn, wr_id, flags, body, blen, pages, 8u * npages));
}

int stats_get(struct nf_stats *st)
{
    return tb_req(NF_OP_STATS, NULL, 0, st, sizeof(*st)) == NF_STATUS_SUCCESS;
}

int main(int argc, char **argv)
{
    tb_args(argc, argv);
    test_reset_handshake();
    test_ping_info();
    test_malformed();
    test_sequence();
    test_batching();
    test_retransmit();
    test_window();
    test_tx_full_holds();
    test_overflowing_frame();
    test_random_traffic();
    test_mul64();
    test_mem();
    test_mr_lifecycle();
    test_token_keys();
    test_register();
    test_frmr_init();
    test_qp();
    test_fast_register_rules();
    test_invalidate_rules();
    test_error_breaks_qp();
    test_rdma();
    test_rdma_stopped();
    test_engine_timeout();
    test_tx_drain_timeout();
    test_qp_flush();
    test_cqe_exact();
    test_timing();
    test_adapter_reset();
    test_stats();
    test_send_receive();
    test_send_invalidate();
    test_send_errors();
    test_receive_rules();
    test_recv_pool();
    test_mw_create();
    test_bind_rules();
    test_bind_entry();
    test_mw_invalidate();
    test_mw_cascade();
    test_net_config();
    test_net_arp();
    test_net_icmp();
    test_net_resolve();
    test_net_absent();
    test_net_neigh();
    test_mw_grants();
    test_fault();
    return tb_done();
}
