/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: random requests and work requests (raw message bytes) into the
 * firmware's message handler, through the link model. After every message it checks
 * that no key-table (MPT) or translation-table (MTT) entry outside the request's own
 * MR changed, that the firmware's shadow agrees with the engine's tables, that MTT
 * ranges never overlap, that the receive queues hold what they count within the pool,
 * and that every request got exactly one answer (a Send also at most one receive
 * completion; a posted receive none when accepted).
 *
 * Input: a sequence of records [op selector][field selector][body length / 8][body].
 * The field selector may replace the request's token and qpn fields with ones that
 * name real objects (set up before the records run), so deep paths are reached. A
 * first byte with the low bit set sends the rest as one raw DATA payload instead. */
#include "tb.h"

#define NTOK 4
#define NQP 3
#define NMW 2 /* memory windows of PD 1 */

static const uint16_t ops[] = {
    NF_OP_PING, NF_OP_INFO, NF_OP_MEM_WRITE, NF_OP_MEM_READ, NF_OP_ADAPTER_RESET, NF_OP_MR_CREATE,
    NF_OP_MR_DESTROY, NF_OP_MR_REGISTER, NF_OP_MR_DEREGISTER, NF_OP_FRMR_INIT, NF_OP_QP_CREATE,
    NF_OP_QP_CONNECT, NF_OP_QP_DISCONNECT, NF_OP_QP_DESTROY, NF_OP_WR_FAST_REGISTER, NF_OP_WR_INVALIDATE,
    NF_OP_WR_READ, NF_OP_WR_WRITE, NF_OP_QP_FLUSH, 0x7777, NF_OP_WR_SEND, NF_OP_WR_SEND_INVALIDATE,
    NF_OP_WR_RECEIVE, NF_OP_MW_CREATE, NF_OP_WR_BIND,
};

static uint32_t tokens[NTOK], qpns[NQP], mws[NMW];
/* Successful answers per op (FUZZ_STATS=1 prints them): shows the run reaches deep. */
static unsigned long ok_per_op[sizeof(ops) / sizeof(ops[0])], all_per_op[sizeof(ops) / sizeof(ops[0])];

static void print_stats(void)
{
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        fprintf(stderr, "op 0x%04x: %lu messages, %lu succeeded\n", ops[i], all_per_op[i], ok_per_op[i]);
}
static uint32_t *mpt_before, *mpt_after, *mtt_before, *mtt_after;
static int32_t *owner_before; /* MTT index -> MR index owning it, -1 free */

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_fw: %s\n", what);
    abort();
}

/* Two frames: the objects, then their configuration (batched: this runs per input). */
static void setup(void)
{
    if (tb_init("ulx3s_25k"))
        fail("tb_init");
    uint8_t buf[NF_LINK_MAX_PAYLOAD];
    size_t len = 0;
    uint32_t qtag[NQP], mtag[NTOK], wtag[NMW];
    for (int i = 0; i < NQP; i++) {
        struct nf_qp_create_req q = {i == 2 ? 2u : 1u, 8, 4, NF_ADAPTER_MAX_RECV_SGE};
        qtag[i] = tb_put_msg(buf, &len, NF_OP_QP_CREATE, &q, sizeof(q));
    }
    for (int i = 0; i < NTOK; i++) {
        struct nf_mr_create_req q = {1, (uint32_t)(i & 1)};
        mtag[i] = tb_put_msg(buf, &len, NF_OP_MR_CREATE, &q, sizeof(q));
    }
    for (int i = 0; i < NMW; i++) {
        struct nf_mr_create_req q = {1, 0};
        wtag[i] = tb_put_msg(buf, &len, NF_OP_MW_CREATE, &q, sizeof(q));
    }
    tb_exchange(buf, len);
    for (int i = 0; i < NQP; i++) {
        const struct tb_msg *m = tb_find_reply(qtag[i]);
        if (!m || m->hdr.status)
            fail("setup: QP_CREATE");
        memcpy(&qpns[i], m->body + NF_QP_CREATE_REP_QPN_OFF, 4);
    }
    for (int i = 0; i < NTOK; i++) {
        const struct tb_msg *m = tb_find_reply(mtag[i]);
        if (!m || m->hdr.status)
            fail("setup: MR_CREATE");
        memcpy(&tokens[i], m->body + NF_MR_CREATE_REP_TOKEN_OFF, 4);
    }
    for (int i = 0; i < NMW; i++) {
        const struct tb_msg *m = tb_find_reply(wtag[i]);
        if (!m || m->hdr.status)
            fail("setup: MW_CREATE");
        memcpy(&mws[i], m->body + NF_MR_CREATE_REP_TOKEN_OFF, 4);
    }
    len = 0;
    struct nf_qp_connect_req c0 = {qpns[0], qpns[1]}, c1 = {qpns[1], qpns[0]};
    tb_put_msg(buf, &len, NF_OP_QP_CONNECT, &c0, sizeof(c0));
    tb_put_msg(buf, &len, NF_OP_QP_CONNECT, &c1, sizeof(c1));
    for (int i = 1; i < NTOK; i += 2) {
        struct nf_frmr_init_req f = {tokens[i], 4, (uint32_t)(i == 1), 0};
        tb_put_msg(buf, &len, NF_OP_FRMR_INIT, &f, sizeof(f));
    }
    /* one registered normal MR over two user pages */
    uint32_t ub = nf_hw_user_base();
    uint8_t body[64];
    struct nf_mr_register_req r = {tokens[0], NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NF_NDK_MR_FLAG_ALLOW_REMOTE_READ,
                                   0x10000, 2 * NF_ADAPTER_PAGE_SIZE, 0, 2};
    uint64_t pages[2] = {ub + NF_ADAPTER_PAGE_SIZE, ub + 3 * NF_ADAPTER_PAGE_SIZE};
    memcpy(body, &r, sizeof(r));
    memcpy(body + sizeof(r), pages, sizeof(pages));
    tb_put_msg(buf, &len, NF_OP_MR_REGISTER, body, sizeof(r) + sizeof(pages));
    /* a receive pending on each connected QP, so a Send can complete from the start */
    for (int i = 0; i < 2; i++) {
        struct {
            struct nf_wr_hdr h;
            struct nf_wr_receive r;
            struct nf_sge sge;
        } rcv = {{qpns[i], 1, 0, 0}, {1, 0}, {ub + 5 * NF_ADAPTER_PAGE_SIZE, 2 * NF_ADAPTER_PAGE_SIZE,
                                              NF_ADAPTER_PRIVILEGED_TOKEN}};
        tb_put_msg(buf, &len, NF_OP_WR_RECEIVE, &rcv, sizeof(rcv));
    }
    tb_exchange(buf, len);
    for (int i = 0; i < tb.nmsgs; i++)
        if (tb.msgs[i].hdr.status)
            fail("setup: a configuration request failed");
}

static void tables(uint32_t *mpt, uint32_t *mtt)
{
    struct nfm_engine *e = nf_hw_engine();
    for (uint32_t i = 0; i < fw_cfg.mpt_entries; i++)
        nfm_mpt_get(e, i, &mpt[i * NFM_MPT_WORDS]);
    for (uint32_t i = 0; i < fw_cfg.mtt_entries; i++)
        nfm_mtt_get(e, i, &mtt[i]);
}

/* A VALID window translates inside its VALID parent MR's pages, and every MR counts
 * the VALID windows bound to it. */
static void check_windows(void)
{
    static uint32_t bound[65536];
    for (uint32_t i = 0; i < fw_cfg.mpt_entries; i++)
        bound[i] = 0;
    for (uint32_t i = 0; i < fw_cfg.mpt_entries; i++) {
        const struct fw_mr *mw = &fw_mrs[i];
        if (mw->kind != NF_MPT_KIND_WINDOW || mw->state != NF_MPT_STATE_VALID)
            continue;
        const uint32_t *w = &mpt_after[i * NFM_MPT_WORDS];
        uint32_t p = NF_MPT_W6_PARENT_GET(w[6]);
        if (p != mw->parent || p >= fw_cfg.mpt_entries)
            fail("a window's PARENT differs from the shadow");
        const struct fw_mr *mr = &fw_mrs[p];
        const uint32_t *pw = &mpt_after[p * NFM_MPT_WORDS];
        uint32_t first = NF_MPT_W5_MTT_BASE_GET(w[5]), pages = NF_MPT_W6_PAGES_GET(w[6]);
        if (mr->kind == NF_MPT_KIND_WINDOW || mr->state != NF_MPT_STATE_VALID || mr->pd != mw->pd ||
            NF_MPT_W1_PD_GET(w[1]) != mr->pd || pages == 0 || first < mr->mtt_base ||
            first + pages > (uint32_t)mr->mtt_base + NF_MPT_W6_PAGES_GET(pw[6]))
            fail("a VALID window outside a VALID MR of its PD");
        bound[p]++;
    }
    for (uint32_t i = 0; i < fw_cfg.mpt_entries; i++)
        if (fw_mrs[i].nwin != bound[i])
            fail("an MR's window count differs from its VALID windows");
}

/* The shadow agrees with the engine; MTT ranges are disjoint and inside the table. */
static void check_consistent(void)
{
    static int32_t used[65536];
    for (uint32_t i = 0; i < fw_cfg.mtt_entries; i++)
        used[i] = -1;
    for (uint32_t i = 0; i < fw_cfg.mpt_entries; i++) {
        const struct fw_mr *mr = &fw_mrs[i];
        const uint32_t *w = &mpt_after[i * NFM_MPT_WORDS];
        if (NF_MPT_W0_STATE_GET(w[0]) != mr->state || NF_MPT_W0_KEY_GET(w[0]) != mr->key)
            fail("shadow state/key differs from the MPT");
        if (!(mr->flags & FW_MR_ALLOCATED)) {
            if (mr->state != NF_MPT_STATE_FREE || mr->mtt_cap)
                fail("a free entry is not FREE or holds an MTT range");
            continue;
        }
        if (mr->key == 0)
            fail("key 0 issued");
        if (NF_MPT_W0_KIND_GET(w[0]) != mr->kind || NF_MPT_W1_PD_GET(w[1]) != mr->pd)
            fail("shadow kind/PD differs from the MPT");
        if (mr->state == NF_MPT_STATE_VALID && mr->kind != NF_MPT_KIND_WINDOW &&
            (NF_MPT_W5_MTT_BASE_GET(w[5]) != mr->mtt_base || NF_MPT_W6_PAGES_GET(w[6]) > mr->mtt_cap ||
             NF_MPT_W6_PAGES_GET(w[6]) == 0))
            fail("a VALID entry points outside its own MTT range");
        if ((uint32_t)mr->mtt_base + mr->mtt_cap > fw_cfg.mtt_entries)
            fail("MTT range beyond the table");
        for (uint32_t k = mr->mtt_base; k < (uint32_t)mr->mtt_base + mr->mtt_cap; k++) {
            if (used[k] >= 0)
                fail("two MRs share an MTT entry");
            used[k] = (int32_t)i;
        }
    }
    check_windows();
}

/* Every QP's receive FIFO holds rq_count entries, at most rq_depth; the reservations
 * fit the pool. */
static void check_receive_queues(void)
{
    uint32_t reserved = 0;
    for (uint32_t q = 0; q < FW_QP_CAP; q++) {
        const struct fw_qp *qp = &fw_qps[q];
        if (qp->state == FW_QP_FREE) {
            if (qp->rq_depth || qp->rq_count)
                fail("a free QP holds receive entries");
            continue;
        }
        reserved += qp->rq_depth;
        if (qp->rq_count > qp->rq_depth || qp->max_recv_sge > NF_ADAPTER_MAX_RECV_SGE)
            fail("a receive queue beyond its depth");
        uint32_t n = 0;
        for (uint32_t i = qp->rq_head; n < qp->rq_count; i = fw_recvs[i].link, n++)
            if (i >= fw_cfg.recv_entries || fw_recvs[i].nsge > qp->max_recv_sge)
                fail("a receive queue links outside the pool or holds too many SGEs");
    }
    if (reserved > fw_cfg.recv_entries)
        fail("the receive reservations exceed the pool");
}

static void owners(int32_t *own)
{
    for (uint32_t i = 0; i < fw_cfg.mtt_entries; i++)
        own[i] = -1;
    for (uint32_t i = 0; i < fw_cfg.mpt_entries; i++)
        for (uint32_t k = fw_mrs[i].mtt_base; k < (uint32_t)fw_mrs[i].mtt_base + fw_mrs[i].mtt_cap; k++)
            own[k] = (int32_t)i;
}

/* Offsets (in the message body) of the token and qpn fields of each op; -1: none. */
static int token_off(uint16_t op)
{
    switch (op) {
    case NF_OP_MR_DESTROY: case NF_OP_MR_DEREGISTER: case NF_OP_MR_REGISTER: case NF_OP_FRMR_INIT: return 0;
    case NF_OP_WR_FAST_REGISTER: return NF_WR_HDR_SIZE + NF_WR_FAST_REGISTER_TOKEN_OFF;
    case NF_OP_WR_INVALIDATE: return NF_WR_HDR_SIZE + NF_WR_INVALIDATE_TOKEN_OFF;
    case NF_OP_WR_READ: case NF_OP_WR_WRITE: return NF_WR_HDR_SIZE + NF_WR_RDMA_REMOTE_TOKEN_OFF;
    case NF_OP_WR_SEND_INVALIDATE: return NF_WR_HDR_SIZE + NF_WR_SEND_INV_TOKEN_OFF;
    case NF_OP_WR_BIND: return NF_WR_HDR_SIZE + NF_WR_BIND_MW_TOKEN_OFF; /* the entry it writes */
    default: return -1;
    }
}

static int qpn_off(uint16_t op)
{
    switch (op) {
    case NF_OP_QP_CONNECT: case NF_OP_QP_DISCONNECT: case NF_OP_QP_DESTROY: case NF_OP_QP_FLUSH: return 0;
    case NF_OP_WR_FAST_REGISTER: case NF_OP_WR_INVALIDATE: case NF_OP_WR_READ: case NF_OP_WR_WRITE:
    case NF_OP_WR_SEND: case NF_OP_WR_SEND_INVALIDATE: case NF_OP_WR_RECEIVE: case NF_OP_WR_BIND:
        return NF_WR_HDR_QPN_OFF;
    default: return -1;
    }
}

static void put32(uint8_t *b, size_t len, int off, uint32_t v)
{
    if (off >= 0 && (size_t)off + 4 <= len)
        memcpy(b + off, &v, 4);
}

static uint32_t get32(const uint8_t *b, size_t len, int off)
{
    uint32_t v = 0;
    if (off >= 0 && (size_t)off + 4 <= len)
        memcpy(&v, b + off, 4);
    return v;
}

static uint64_t get64(const uint8_t *b, size_t len, int off)
{
    return get32(b, len, off) | (uint64_t)get32(b, len, off + 4) << 32;
}

static void put64(uint8_t *b, size_t len, int off, uint64_t v)
{
    put32(b, len, off, (uint32_t)v);
    put32(b, len, off + 4, (uint32_t)(v >> 32));
}

#define PG NF_ADAPTER_PAGE_SIZE
#define FUZZ_USER_PAGES 12u /* user pages of the 25K profile */

/* nsge (fuzz-chosen, at most max) SGEs at body offset at, each a logical buffer in the
 * user region or an MR's range through one of the tokens; the flags masked to mask.
 * Returns the body length needed. */
static size_t well_formed_sges(uint8_t *b, size_t blen, int nsge_off, int at, uint32_t max, uint32_t mask)
{
    uint32_t ub = nf_hw_user_base();
    uint32_t nsge = get32(b, blen, nsge_off) % (max + 1);
    size_t need = (size_t)at + nsge * NF_SGE_SIZE;
    if (need > blen)
        blen = need;
    put32(b, blen, nsge_off, nsge);
    put32(b, blen, NF_WR_HDR_FLAGS_OFF, get32(b, blen, NF_WR_HDR_FLAGS_OFF) & mask);
    for (uint32_t k = 0; k < nsge; k++) {
        int s = at + (int)(k * NF_SGE_SIZE);
        uint32_t r = get32(b, blen, s + NF_SGE_ADDR_OFF);
        put32(b, blen, s + NF_SGE_LEN_OFF, get32(b, blen, s + NF_SGE_LEN_OFF) % (2 * PG));
        if (r & 1) { /* a logical buffer in the user region */
            put64(b, blen, s + NF_SGE_ADDR_OFF, ub + r % (FUZZ_USER_PAGES * PG));
            put32(b, blen, s + NF_SGE_TOKEN_OFF, NF_ADAPTER_PRIVILEGED_TOKEN);
        } else {
            put64(b, blen, s + NF_SGE_ADDR_OFF, 0x10000 + r % (3 * PG));
            put32(b, blen, s + NF_SGE_TOKEN_OFF, tokens[(r >> 1) % NTOK]);
        }
    }
    return blen;
}

/* Make the random fields of a request consistent (page counts, FBO, VA, length and
 * page addresses that fit together) so the fuzzer also reaches the success paths;
 * the fuzz bytes still choose every value. Returns the body length needed. */
static size_t make_well_formed(uint16_t op, uint8_t *b, size_t blen)
{
    uint32_t ub = nf_hw_user_base();
    size_t cap = NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE;
    if (op == NF_OP_WR_FAST_REGISTER || op == NF_OP_MR_REGISTER) {
        int wr = op == NF_OP_WR_FAST_REGISTER;
        int base = wr ? NF_WR_HDR_SIZE : 0;
        int o_np = base + (wr ? NF_WR_FAST_REGISTER_NPAGES_OFF : NF_MR_REGISTER_REQ_NPAGES_OFF);
        int o_fbo = base + (wr ? NF_WR_FAST_REGISTER_FBO_OFF : NF_MR_REGISTER_REQ_FBO_OFF);
        int o_len = base + (wr ? NF_WR_FAST_REGISTER_LENGTH_OFF : NF_MR_REGISTER_REQ_LENGTH_OFF);
        int o_va = base + (wr ? NF_WR_FAST_REGISTER_VA_OFF : NF_MR_REGISTER_REQ_VA_OFF);
        size_t list = (size_t)base + (wr ? NF_WR_FAST_REGISTER_SIZE : NF_MR_REGISTER_REQ_SIZE);
        if (list > blen)
            blen = list;
        uint32_t np = 1 + get32(b, blen, o_np) % 5;
        uint32_t fbo = get32(b, blen, o_fbo) % PG;
        uint64_t va = (get64(b, blen, o_va) & 0x0000FFFFFFFFF000ull) | fbo;
        if (!wr && va == 0)
            va = PG;
        uint64_t x = get64(b, blen, o_len);
        uint64_t lo = (uint64_t)(np - 1) * PG + 1 > fbo ? (uint64_t)(np - 1) * PG + 1 - fbo : 1;
        uint64_t hi = (uint64_t)np * PG - fbo;
        uint64_t len = wr ? 1 + x % hi : lo + x % (hi - lo + 1);
        put32(b, blen, o_np, np);
        put32(b, blen, o_fbo, fbo);
        put64(b, blen, o_len, len);
        put64(b, blen, o_va, va);
        if (wr)
            put32(b, blen, NF_WR_HDR_FLAGS_OFF, get32(b, blen, NF_WR_HDR_FLAGS_OFF) & 0xBBu);
        else
            put32(b, blen, NF_MR_REGISTER_REQ_FLAGS_OFF, get32(b, blen, NF_MR_REGISTER_REQ_FLAGS_OFF) & 0xFu);
        if (list + 8u * np > blen)
            blen = list + 8u * np;
        for (uint32_t k = 0; k < np; k++)
            put64(b, blen, (int)(list + 8u * k), ub + (uint64_t)(get32(b, blen, (int)(list + 8u * k)) % FUZZ_USER_PAGES) * PG);
    } else if (op == NF_OP_FRMR_INIT) {
        if (blen < NF_FRMR_INIT_REQ_SIZE)
            blen = NF_FRMR_INIT_REQ_SIZE;
        put32(b, blen, NF_FRMR_INIT_REQ_NPAGES_OFF, 1 + get32(b, blen, NF_FRMR_INIT_REQ_NPAGES_OFF) % 20);
        put32(b, blen, NF_FRMR_INIT_REQ_REMOTE_ACCESS_OFF, get32(b, blen, NF_FRMR_INIT_REQ_REMOTE_ACCESS_OFF) & 1);
    } else if (op == NF_OP_WR_INVALIDATE) {
        if (blen < NF_WR_HDR_SIZE + NF_WR_INVALIDATE_SIZE)
            blen = NF_WR_HDR_SIZE + NF_WR_INVALIDATE_SIZE;
        put32(b, blen, NF_WR_HDR_FLAGS_OFF, get32(b, blen, NF_WR_HDR_FLAGS_OFF) & 0x3u);
    } else if (op == NF_OP_WR_READ || op == NF_OP_WR_WRITE) {
        blen = well_formed_sges(b, blen, NF_WR_HDR_SIZE + NF_WR_RDMA_NSGE_OFF, NF_WR_HDR_SIZE + NF_WR_RDMA_SIZE,
                                NF_ADAPTER_MAX_SGE, 0x3u);
        uint32_t v = get32(b, blen, NF_WR_HDR_SIZE + NF_WR_RDMA_REMOTE_VA_OFF);
        put64(b, blen, NF_WR_HDR_SIZE + NF_WR_RDMA_REMOTE_VA_OFF, 0x10000 + v % (3 * PG));
        if (v & 0x80000000u) /* through a window (bound or not) */
            put32(b, blen, NF_WR_HDR_SIZE + NF_WR_RDMA_REMOTE_TOKEN_OFF, mws[(v >> 30) & 1u]);
    } else if (op == NF_OP_WR_SEND || op == NF_OP_WR_SEND_INVALIDATE) {
        /* SILENT_SUCCESS, READ_FENCE, SEND_AND_SOLICIT_EVENT */
        blen = well_formed_sges(b, blen, NF_WR_HDR_SIZE + NF_WR_SEND_NSGE_OFF, NF_WR_HDR_SIZE + NF_WR_SEND_SIZE,
                                NF_ADAPTER_MAX_SGE, 0x7u);
    } else if (op == NF_OP_WR_BIND) {
        /* one of the MRs, one of the windows (or the fuzz bytes' own token), a range over
         * the registered MR's VAs, the known flags */
        const int o = NF_WR_HDR_SIZE;
        if (blen < (size_t)o + NF_WR_BIND_SIZE)
            blen = (size_t)o + NF_WR_BIND_SIZE;
        uint32_t r = get32(b, blen, o + NF_WR_BIND_MR_TOKEN_OFF), x = get32(b, blen, o + NF_WR_BIND_MW_TOKEN_OFF);
        put32(b, blen, o + NF_WR_BIND_MR_TOKEN_OFF, tokens[r % NTOK]);
        if (!(x & 0x100))
            put32(b, blen, o + NF_WR_BIND_MW_TOKEN_OFF, mws[x % NMW]);
        put64(b, blen, o + NF_WR_BIND_VA_OFF, 0x10000 + get32(b, blen, o + NF_WR_BIND_VA_OFF) % (3 * PG));
        put64(b, blen, o + NF_WR_BIND_LENGTH_OFF, get32(b, blen, o + NF_WR_BIND_LENGTH_OFF) % (2 * PG + 1));
        put32(b, blen, NF_WR_HDR_FLAGS_OFF, get32(b, blen, NF_WR_HDR_FLAGS_OFF) & NF_KNOWN_FLAGS_BIND);
    } else if (op == NF_OP_MW_CREATE) {
        if (blen < NF_MR_CREATE_REQ_SIZE)
            blen = NF_MR_CREATE_REQ_SIZE;
        put32(b, blen, NF_MR_CREATE_REQ_PD_OFF, 1 + (get32(b, blen, NF_MR_CREATE_REQ_PD_OFF) & 1));
        put32(b, blen, NF_MR_CREATE_REQ_FAST_REGISTER_OFF, 0);
    } else if (op == NF_OP_WR_RECEIVE) {
        blen = well_formed_sges(b, blen, NF_WR_HDR_SIZE + NF_WR_RECEIVE_NSGE_OFF,
                                NF_WR_HDR_SIZE + NF_WR_RECEIVE_SIZE, NF_ADAPTER_MAX_RECV_SGE, 0u);
    }
    return blen > cap ? cap : blen;
}

static void one_message(uint16_t op, uint8_t sel, uint8_t *body, size_t blen)
{
    if (sel & 0x08) {
        size_t n = make_well_formed(op, body, blen);
        if (n > blen)
            memset(body + blen, 0, 0); /* grown part was zeroed by the caller */
        blen = n;
    }
    /* Aim at real objects most of the time. */
    if (sel & 0x80)
        put32(body, blen, token_off(op), tokens[sel & (NTOK - 1)]);
    if (sel & 0x40)
        put32(body, blen, qpn_off(op), qpns[(sel >> 2) % NQP]);
    if ((sel & 0x20) && (op == NF_OP_WR_READ || op == NF_OP_WR_WRITE) &&
        blen >= NF_WR_HDR_SIZE + NF_WR_RDMA_SIZE + NF_SGE_SIZE)
        put32(body, blen, NF_WR_HDR_SIZE + NF_WR_RDMA_SIZE + NF_SGE_TOKEN_OFF, tokens[(sel >> 3) & (NTOK - 1)]);
    if ((sel & 0x10) && op == NF_OP_QP_CONNECT)
        put32(body, blen, NF_QP_CONNECT_REQ_PEER_QPN_OFF, qpns[(sel >> 1) % NQP]);

    tables(mpt_before, mtt_before);
    owners(owner_before);
    uint32_t token = get32(body, blen, token_off(op));
    uint32_t own = fw_mr_lookup(token);
    uint32_t wrs = fw_stats_wr_count();

    tb_send_one(op, body, blen);

    tables(mpt_after, mtt_after);
    check_consistent();
    check_receive_queues();
    if (fw_stats.tx_overflow)
        fail("a reply found no TX room");
    /* exactly one answer per message (none only for a silent success or an accepted
     * receive); a Send also completes at most one receive (the peer's) */
    int answers = 0, receives = 0, is_send = op == NF_OP_WR_SEND || op == NF_OP_WR_SEND_INVALIDATE;
    for (int i = 0; i < tb.nmsgs; i++) {
        const struct tb_msg *m = &tb.msgs[i];
        uint32_t type = get32(m->body, NF_CQE_SIZE, NF_CQE_OP_TYPE_OFF);
        if (m->hdr.op == NF_OP_CQE && is_send && (type == NF_NDK_OP_RECEIVE || type == NF_NDK_OP_RECEIVE_AND_INVALIDATE))
            receives++;
        else
            answers += m->hdr.op == (op | NF_OP_REPLY) || m->hdr.op == NF_OP_CQE;
    }
    int silent = ((op & 0xFFC0) == NF_OP_WR_FAST_REGISTER && (get32(body, blen, NF_WR_HDR_FLAGS_OFF) & NF_NDK_OP_FLAG_SILENT_SUCCESS)) ||
                 op == NF_OP_WR_RECEIVE;
    if (answers > 1 || (answers == 0 && !silent) || receives > 1)
        fail("a message was not answered exactly once");
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (ops[i] != op)
            continue;
        all_per_op[i]++;
        for (int k = 0; k < tb.nmsgs; k++) {
            const struct tb_msg *m = &tb.msgs[k];
            uint32_t st = m->hdr.op == NF_OP_CQE ? get32(m->body, NF_CQE_SIZE, NF_CQE_STATUS_OFF) : m->hdr.status;
            ok_per_op[i] += st == NF_STATUS_SUCCESS;
        }
        ok_per_op[i] += answers == 0;
    }
    if ((op & 0xFFC0) == NF_OP_WR_FAST_REGISTER && fw_stats_wr_count() != wrs + 1)
        fail("a work request was not counted");
    if (op == NF_OP_ADAPTER_RESET)
        return;
    for (uint32_t i = 0; i < fw_cfg.mpt_entries; i++) {
        if (!memcmp(&mpt_before[i * NFM_MPT_WORDS], &mpt_after[i * NFM_MPT_WORDS], NFM_MPT_WORDS * 4))
            continue;
        const uint32_t *wb = &mpt_before[i * NFM_MPT_WORDS];
        int created = (op == NF_OP_MR_CREATE || op == NF_OP_MW_CREATE) && NF_MPT_W0_STATE_GET(wb[0]) == NF_MPT_STATE_FREE;
        /* the cascade: a window bound to the request's own MR went INVALID */
        int cascade = NF_MPT_W0_KIND_GET(wb[0]) == NF_MPT_KIND_WINDOW && NF_MPT_W0_STATE_GET(wb[0]) == NF_MPT_STATE_VALID &&
                      NF_MPT_W6_PARENT_GET(wb[6]) == own && own != FW_NO_INDEX &&
                      NF_MPT_W0_STATE_GET(mpt_after[i * NFM_MPT_WORDS]) == NF_MPT_STATE_INVALID;
        if (i != own && !created && !cascade)
            fail("an MPT entry outside the request's own MR changed");
        if (op == NF_OP_WR_READ || op == NF_OP_WR_WRITE || op == NF_OP_PING || op == NF_OP_MEM_WRITE ||
            (op & 0xFFF0) == NF_OP_QP_CREATE || op == NF_OP_WR_SEND || op == NF_OP_WR_RECEIVE)
            fail("a request that owns no MR changed the key table");
    }
    for (uint32_t k = 0; k < fw_cfg.mtt_entries; k++) {
        if (mtt_before[k] == mtt_after[k])
            continue;
        if (owner_before[k] >= 0 && (uint32_t)owner_before[k] != own)
            fail("an MTT entry of another MR changed");
        if (own == FW_NO_INDEX)
            fail("an MTT entry changed for a request naming no MR");
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    mpt_before = calloc(NF_PROFILE_SIM_MPT_ENTRIES * NFM_MPT_WORDS, 4);
    mpt_after = calloc(NF_PROFILE_SIM_MPT_ENTRIES * NFM_MPT_WORDS, 4);
    mtt_before = calloc(65536, 4);
    mtt_after = calloc(65536, 4);
    owner_before = calloc(65536, sizeof(int32_t));
    if (getenv("FUZZ_STATS"))
        atexit(print_stats);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size && (data[0] & 1)) {
        /* raw payload: arbitrary message bytes in one frame */
        size_t n = size - 1 > NF_LINK_MAX_PAYLOAD ? NF_LINK_MAX_PAYLOAD : size - 1;
        tb_clear();
        tb_send_data(data + 1, n);
        tb_run();
        tables(mpt_before, mtt_before);
        memcpy(mpt_after, mpt_before, (size_t)fw_cfg.mpt_entries * NFM_MPT_WORDS * 4);
        check_consistent();
        check_receive_queues();
        if (fw_stats.tx_overflow)
            fail("a reply found no TX room");
        return 0;
    }
    size_t pos = size ? 1 : 0;
    while (pos + 3 <= size) {
        uint16_t op = ops[data[pos] % (sizeof(ops) / sizeof(ops[0]))];
        uint8_t sel = data[pos + 1];
        size_t blen = (size_t)data[pos + 2] * 8u;
        pos += 3;
        if (blen > NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE)
            blen = NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE;
        uint8_t body[NF_LINK_MAX_PAYLOAD];
        memset(body, 0, sizeof(body)); /* make_well_formed may lengthen the body */
        size_t take = size - pos < blen ? size - pos : blen;
        memcpy(body, data + pos, take);
        pos += take;
        one_message(op, sel, body, blen);
    }
    return 0;
}
