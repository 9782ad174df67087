/* Unit tests of the firmware's host build, driven through the link model: frames in,
 * frames out, tables and memory checked in the engine model. */
#include "tap.h"
#include "tb.h"

static const char *prefix = "";
#define OK(cond, ...) tap_named((cond), __VA_ARGS__)

static int tap_named(int cond, const char *fmt, ...)
{
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof(name), fmt, ap);
    va_end(ap);
    return tap_ok(cond, "%s%s", prefix, name);
}

#define NO_REPLY 0xFFFFFFFFu
#define PAGE NF_ADAPTER_PAGE_SIZE
#define PD_A 7u
#define PD_B 9u

/* ---- snapshots: everything a refused request must leave alone ---- */
struct snap {
    uint32_t *mpt, *mtt;
    uint8_t *mem;
    uint32_t nmpt, nmtt, mem_bytes;
};

static void snap_take(struct snap *s)
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

static void snap_free(struct snap *s)
{
    free(s->mpt);
    free(s->mtt);
    free(s->mem);
}

/* Tables equal, and the user region equal (link slots change with every frame). */
static int snap_same(const struct snap *a, const struct snap *b)
{
    uint32_t ub = (nf_hw_cfg()->rx_slots + nf_hw_cfg()->tx_slots) * NF_LINK_SLOT_BYTES;
    return !memcmp(a->mpt, b->mpt, (size_t)a->nmpt * NFM_MPT_WORDS * 4) &&
           !memcmp(a->mtt, b->mtt, (size_t)a->nmtt * 4) && !memcmp(a->mem + ub, b->mem + ub, a->mem_bytes - ub);
}

static uint32_t user_base(void) { return (nf_hw_cfg()->rx_slots + nf_hw_cfg()->tx_slots) * NF_LINK_SLOT_BYTES; }

/* ---- request helpers ---- */
static uint32_t mr_create(uint32_t pd, uint32_t fast)
{
    struct nf_mr_create_req q = {pd, fast};
    struct nf_mr_create_rep r = {0, 0};
    return tb_req(NF_OP_MR_CREATE, &q, sizeof(q), &r, sizeof(r)) == NF_STATUS_SUCCESS ? r.token : 0;
}

static uint32_t token_op(uint16_t op, uint32_t token)
{
    struct nf_token_req q = {token, 0};
    return tb_req(op, &q, sizeof(q), NULL, 0);
}

static uint32_t frmr_init(uint32_t token, uint32_t npages, uint32_t remote)
{
    struct nf_frmr_init_req q = {token, npages, remote, 0};
    return tb_req(NF_OP_FRMR_INIT, &q, sizeof(q), NULL, 0);
}

static uint32_t qp_create(uint32_t pd)
{
    struct nf_qp_create_req q = {pd, 16};
    struct nf_qp_create_rep r = {0, 0};
    return tb_req(NF_OP_QP_CREATE, &q, sizeof(q), &r, sizeof(r)) == NF_STATUS_SUCCESS ? r.qpn : 0;
}

static uint32_t qp_connect(uint32_t qpn, uint32_t peer)
{
    struct nf_qp_connect_req q = {qpn, peer};
    return tb_req(NF_OP_QP_CONNECT, &q, sizeof(q), NULL, 0);
}

static uint32_t mem_write(uint32_t addr, const void *data, uint32_t len)
{
    uint8_t body[NF_LINK_MAX_PAYLOAD];
    struct nf_mem_write_req q = {addr, len};
    memcpy(body, &q, sizeof(q));
    memcpy(body + sizeof(q), data, len);
    return tb_req(NF_OP_MEM_WRITE, body, sizeof(q) + len, NULL, 0);
}

static uint32_t mem_read(uint32_t addr, void *data, uint32_t len)
{
    struct nf_mem_read_req q = {addr, len};
    return tb_req(NF_OP_MEM_READ, &q, sizeof(q), data, len);
}

static uint32_t mr_register(uint32_t token, uint32_t flags, uint64_t va, uint64_t length, uint32_t fbo,
                            const uint64_t *pages, uint32_t npages)
{
    uint8_t body[NF_LINK_MAX_PAYLOAD];
    struct nf_mr_register_req q = {token, flags, va, length, fbo, npages};
    memcpy(body, &q, sizeof(q));
    memcpy(body + sizeof(q), pages, 8u * npages);
    return tb_req(NF_OP_MR_REGISTER, body, sizeof(q) + 8u * npages, NULL, 0);
}

static uint32_t next_wr_id = 100;

/* Returns the CQE status, NO_REPLY when no CQE came (silent success). */
static uint32_t fast_register(uint32_t qpn, uint32_t flags, uint32_t token, const uint64_t *pages, uint32_t npages,
                              uint32_t fbo, uint64_t length, uint64_t va, struct nf_cqe *out)
{
    uint8_t body[NF_LINK_MAX_PAYLOAD];
    struct nf_wr_hdr h = {qpn, next_wr_id++, flags, 0};
    struct nf_wr_fast_register f = {token, npages, fbo, 0, length, va};
    memcpy(body, &h, sizeof(h));
    memcpy(body + sizeof(h), &f, sizeof(f));
    memcpy(body + sizeof(h) + sizeof(f), pages, 8u * npages);
    struct nf_cqe c;
    if (!tb_wr(NF_OP_WR_FAST_REGISTER, body, sizeof(h) + sizeof(f) + 8u * npages, &c))
        return NO_REPLY;
    if (out)
        *out = c;
    return c.wr_id == h.wr_id && c.op_type == NF_NDK_OP_FAST_REGISTER ? c.status : NO_REPLY - 1u;
}

static uint32_t invalidate(uint32_t qpn, uint32_t flags, uint32_t token)
{
    uint8_t body[64];
    struct nf_wr_hdr h = {qpn, next_wr_id++, flags, 0};
    struct nf_wr_invalidate v = {token, 0};
    memcpy(body, &h, sizeof(h));
    memcpy(body + sizeof(h), &v, sizeof(v));
    struct nf_cqe c;
    if (!tb_wr(NF_OP_WR_INVALIDATE, body, sizeof(h) + sizeof(v), &c))
        return NO_REPLY;
    return c.wr_id == h.wr_id && c.op_type == NF_NDK_OP_INVALIDATE ? c.status : NO_REPLY - 1u;
}

static uint32_t rdma(uint16_t op, uint32_t qpn, uint32_t flags, uint64_t remote_va, uint32_t remote_token,
                     const struct nf_sge *sges, uint32_t nsge, struct nf_cqe *out)
{
    uint8_t body[256];
    struct nf_wr_hdr h = {qpn, next_wr_id++, flags, 0};
    struct nf_wr_rdma r = {remote_va, remote_token, nsge};
    memcpy(body, &h, sizeof(h));
    memcpy(body + sizeof(h), &r, sizeof(r));
    memcpy(body + sizeof(h) + sizeof(r), sges, sizeof(*sges) * nsge);
    struct nf_cqe c = {0};
    if (!tb_wr(op, body, sizeof(h) + sizeof(r) + sizeof(*sges) * nsge, &c))
        return NO_REPLY;
    if (out)
        *out = c;
    return c.status;
}

static void mpt_get(uint32_t token, uint32_t w[NFM_MPT_WORDS])
{
    nfm_mpt_get(nf_hw_engine(), NF_TOKEN_INDEX_GET(token), w);
}

static uint32_t mpt_state(uint32_t token)
{
    uint32_t w[NFM_MPT_WORDS];
    mpt_get(token, w);
    return NF_MPT_W0_STATE_GET(w[0]);
}

static int info_get(struct nf_info *info)
{
    return tb_req(NF_OP_INFO, NULL, 0, info, sizeof(*info)) == NF_STATUS_SUCCESS;
}

/* ================= link ================= */

static void test_reset_handshake(void)
{
    tb_init("sim");
    tb_clear();
    tb_send_frame(NF_LINK_TYPE_RESET, 0, 0, 0xBEEF, NULL, 0);
    tb_run();
    int found = 0;
    for (int i = 0; i < tb.nframes; i++) {
        const struct tb_frame *f = &tb.frames[i];
        if (f->hdr.type == NF_LINK_TYPE_RESET_ACK && f->hdr.rsvd == 0xBEEF && f->hdr.len == NF_INFO_SIZE) {
            struct nf_info info;
            memcpy(&info, f->payload, sizeof(info));
            found = info.mpt_entries == NF_PROFILE_SIM_MPT_ENTRIES && info.mtt_entries == NF_PROFILE_SIM_MTT_ENTRIES &&
                    info.rx_slots == NF_PROFILE_SIM_RX_SLOTS && info.tx_slots == NF_PROFILE_SIM_TX_SLOTS &&
                    info.max_frmr_pages == NF_PROFILE_SIM_MAX_FRMR_PAGES && info.user_base == user_base() &&
                    info.page_size == PAGE && info.layout_version == NF_LAYOUT_VERSION &&
                    info.fw_version == NF_ADAPTER_FW_VERSION && info.rx_ok == 1;
        }
    }
    OK(found, "RESET is answered by RESET_ACK echoing the nonce, with true INFO as payload");

    /* A RESET mid-session wipes the adapter and restarts the sequence numbers. */
    uint32_t tok = mr_create(PD_A, 0);
    uint32_t seq_before = tb.tx_seq;
    tb_clear();
    tb_send_frame(NF_LINK_TYPE_RESET, 0, 0, 0x1234, NULL, 0);
    tb.tx_seq = 0;
    tb.rx_expect = 0;
    tb.last_acked = 0;
    tb_run();
    uint32_t w[NFM_MPT_WORDS];
    mpt_get(tok, w);
    OK(seq_before > 0 && NF_MPT_W0_STATE_GET(w[0]) == NF_MPT_STATE_FREE && fw_mr_lookup(tok) == FW_NO_INDEX,
       "RESET frees every MR (its key-table entry is FREE, the token is unknown)");
    struct nf_info info;
    OK(info_get(&info) && tb.frames[0].hdr.seq == 0, "after RESET both sides restart at sequence 0");
}

static void test_ping_info(void)
{
    tb_init("sim");
    uint8_t payload[40], echo[40];
    for (unsigned i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)(i * 7 + 3);
    OK(tb_req(NF_OP_PING, payload, sizeof(payload), echo, sizeof(echo)) == NF_STATUS_SUCCESS &&
           !memcmp(payload, echo, sizeof(echo)),
       "PING echoes its payload");
    OK(tb_req(NF_OP_PING, NULL, 0, NULL, 0) == NF_STATUS_SUCCESS, "PING without payload");
    struct nf_info info;
    OK(info_get(&info) && info.mem_bytes == NF_PROFILE_SIM_MEM_BYTES && info.max_sge == NF_ADAPTER_MAX_SGE &&
           info.max_qps == NF_ADAPTER_MAX_QPS && info.max_payload == NF_LINK_MAX_PAYLOAD &&
           info.clk_hz == NF_SOC_CPU_CLK_SIM_HZ && info.rx_ok >= 3 && info.tx_frames >= 2,
       "INFO reports the configuration and link counters");
    OK(tb_req(0x7777, NULL, 0, NULL, 0) == NF_STATUS_NOT_SUPPORTED, "unknown op -> STATUS_NOT_SUPPORTED");

    tb_init("ulx3s_25k");
    OK(info_get(&info) && info.mpt_entries == NF_PROFILE_ULX3S_25K_MPT_ENTRIES &&
           info.max_frmr_pages == NF_PROFILE_ULX3S_25K_MAX_FRMR_PAGES && info.rx_slots == NF_PROFILE_ULX3S_25K_RX_SLOTS,
       "the same image reads the 25K profile's sizes at boot");
    tb_init("ulx3s_85k");
    OK(info_get(&info) && info.max_frmr_pages == NF_PROFILE_ULX3S_85K_MAX_FRMR_PAGES &&
           info.mtt_entries == NF_PROFILE_ULX3S_85K_MTT_ENTRIES,
       "and the 85K profile's");
}

static void test_malformed(void)
{
    tb_init("sim");
    uint8_t buf[64] = {0};
    struct nf_msg_hdr h = {NF_OP_PING, 12, 55, 0, 0}; /* not a multiple of 8 */
    memcpy(buf, &h, sizeof(h));
    tb_clear();
    tb_send_data(buf, 32);
    tb_run();
    const struct tb_msg *m = tb_find_reply(55);
    OK(m && m->hdr.status == NF_STATUS_INVALID_PARAMETER, "message length not a multiple of 8 -> INVALID_PARAMETER");
    h.len = 64; /* longer than the frame */
    memcpy(buf, &h, sizeof(h));
    tb_clear();
    tb_send_data(buf, 32);
    tb_run();
    m = tb_find_reply(55);
    OK(m && m->hdr.status == NF_STATUS_INVALID_PARAMETER, "message longer than its frame -> INVALID_PARAMETER");
    OK(tb_req(NF_OP_MR_CREATE, NULL, 0, NULL, 0) == NF_STATUS_INVALID_PARAMETER, "request without its body -> INVALID_PARAMETER");
}

static void test_sequence(void)
{
    tb_init("sim");
    uint8_t buf[64];
    size_t len = 0;
    uint32_t tag = tb_put_msg(buf, &len, NF_OP_PING, "abcdefgh", 8);
    tb_clear();
    tb_send_frame(NF_LINK_TYPE_DATA, 0, 0, 0, buf, len);
    tb_run();
    int first = tb_find_reply(tag) != NULL;
    /* the same frame again: a duplicate */
    tb_clear();
    tb_send_frame(NF_LINK_TYPE_DATA, 0, tb.rx_expect, 0, buf, len);
    tb_run();
    int dup_ack = 0;
    for (int i = 0; i < tb.nframes; i++)
        if (tb.frames[i].hdr.type == NF_LINK_TYPE_ACK && tb.frames[i].hdr.ack == 1)
            dup_ack = 1;
    OK(first && tb.nmsgs == 0 && dup_ack, "a duplicate DATA frame is dropped and acknowledged again (ack = rx_expect)");
    /* a gap */
    tb_clear();
    tb_send_frame(NF_LINK_TYPE_DATA, 5, tb.rx_expect, 0, buf, len);
    tb_run();
    int gap_ack = 0;
    for (int i = 0; i < tb.nframes; i++)
        if (tb.frames[i].hdr.type == NF_LINK_TYPE_ACK && tb.frames[i].hdr.ack == 1)
            gap_ack = 1;
    OK(tb.nmsgs == 0 && gap_ack, "an out-of-order DATA frame is dropped, the ack still names the expected one");
    tb.tx_seq = 1;
    struct nf_info info;
    OK(info_get(&info) && info.rx_dup == 2, "INFO counts both dropped frames (rx_dup = 2)");
    /* the reply DATA frame carries the cumulative ack */
    OK(tb.nframes >= 1 && tb.frames[0].hdr.type == NF_LINK_TYPE_DATA && tb.frames[0].hdr.ack == 2,
       "replies ride in DATA frames carrying ack = next expected seq");
}

static void test_batching(void)
{
    tb_init("sim");
    uint8_t buf[NF_LINK_MAX_PAYLOAD];
    size_t len = 0;
    uint32_t tags[20];
    for (int i = 0; i < 20; i++)
        tags[i] = tb_put_msg(buf, &len, NF_OP_PING, "12345678", 8);
    tb_clear();
    tb_send_data(buf, len);
    tb_run();
    int all = 1;
    for (int i = 0; i < 20; i++)
        all &= tb_find_reply(tags[i]) != NULL;
    OK(all && tb.data_frames == 1, "20 requests in one frame: 20 replies in one DATA frame");

    /* Three frames queued before the firmware runs: one reply frame for all. */
    tb_clear();
    for (int f = 0; f < 3; f++) {
        len = 0;
        tb_put_msg(buf, &len, NF_OP_PING, "12345678", 8);
        tb_send_data(buf, len);
    }
    tb_run();
    OK(tb.nmsgs == 3 && tb.data_frames == 1, "replies to frames waiting together share one TX frame");

    /* Many MEM_READs overflow one frame: the replies spread over several, in order. */
    tb_clear();
    len = 0;
    struct nf_mem_read_req rq = {user_base(), 2000};
    for (int i = 0; i < 6; i++)
        tags[i] = tb_put_msg(buf, &len, NF_OP_MEM_READ, &rq, sizeof(rq));
    tb_send_data(buf, len);
    tb_run();
    all = 1;
    for (int i = 0; i < 6; i++)
        all &= tb.msgs[i].hdr.tag == tags[i] && tb.msgs[i].hdr.status == NF_STATUS_SUCCESS;
    OK(all && tb.nmsgs == 6 && tb.data_frames == 3, "6 x 2000-byte MEM_READ replies: 3 frames, in order");
}

static void test_retransmit(void)
{
    tb_init("sim");
    tb.auto_ack = 0;
    uint8_t buf[64];
    size_t len = 0;
    tb_put_msg(buf, &len, NF_OP_PING, "retransm", 8);
    tb_clear();
    tb_send_data(buf, len);
    tb_run();
    int sent = tb.nframes == 1 && tb.frames[0].hdr.type == NF_LINK_TYPE_DATA && tb.frames[0].hdr.seq == 0;
    /* The documented RTO for exactly this frame in flight: (bytes in flight + RX_SLOTS x
     * SLOT_BYTES) x 10 bits x 2 x UART_PERIOD / 16 + CLK_HZ / 50. */
    uint64_t rto_bytes = (uint64_t)NF_LINK_HDR_SIZE + tb.frames[0].hdr.len + (uint64_t)fw_cfg.rx_slots * NF_LINK_SLOT_BYTES;
    uint64_t rto_want = ((rto_bytes * 10u * 2u * fw_cfg.uart_period) >> NF_SOC_UART_PERIOD_FRAC) + fw_cfg.clk_hz / 50u;
    OK(sent && fw_link_rto() == rto_want, "RTO for one frame in flight is the documented formula");
    uint64_t sent_at = nf_hw_cycles();
    /* just before the timeout nothing happens */
    tb_clear();
    nf_hw_advance(NF_SOC_CPU_CLK_SIM_HZ / 1000); /* 1 ms: far below the timeout */
    tb_run();
    int quiet = tb.nframes == 0;
    /* 0.1 ms short of the RTO (far more than the model spends per poll round): still quiet */
    nf_hw_advance(sent_at + rto_want - nf_hw_cycles() - NF_SOC_CPU_CLK_SIM_HZ / 10000u);
    tb_run();
    quiet &= tb.nframes == 0;
    nf_hw_advance(NF_SOC_CPU_CLK_SIM_HZ); /* 1 s: beyond any timeout at 3 MBd */
    tb_run();
    int again = tb.nframes == 1 && tb.frames[0].hdr.type == NF_LINK_TYPE_DATA && tb.frames[0].hdr.seq == 0;
    OK(sent && quiet && again, "an unacknowledged frame is sent again after the timeout, same seq");
    /* two more frames unacked: a timeout resends all three, oldest first */
    for (int f = 0; f < 2; f++) {
        tb_send_data(buf, len);
        tb_run();
    }
    tb_clear();
    nf_hw_advance(NF_SOC_CPU_CLK_SIM_HZ);
    tb_run();
    OK(tb.nframes == 3 && tb.frames[0].hdr.seq == 0 && tb.frames[1].hdr.seq == 1 && tb.frames[2].hdr.seq == 2 &&
           tb.frames[2].hdr.ack == 3,
       "go-back-N: every unacknowledged frame again, oldest first, with a fresh ack");
    tb_send_ack_upto(3);
    tb_run();
    tb_clear();
    nf_hw_advance(NF_SOC_CPU_CLK_SIM_HZ);
    tb_run();
    OK(tb.nframes == 0, "after the cumulative ack nothing is sent again");
    struct nf_info info;
    tb.auto_ack = 1;
    tb.rx_expect = 3;
    OK(info_get(&info) && info.retransmits == 4, "INFO counts the retransmitted frames (4)");
}

static void test_window(void)
{
    /* 25K profile: 2 TX slots. Without acks the board stops at 2 frames in flight. */
    tb_init("ulx3s_25k");
    tb.auto_ack = 0;
    uint8_t buf[NF_LINK_MAX_PAYLOAD];
    size_t len = 0;
    struct nf_mem_read_req rq = {user_base(), 3000};
    tb_clear();
    tb_put_msg(buf, &len, NF_OP_MEM_READ, &rq, sizeof(rq));
    tb_send_data(buf, len);
    tb_run();
    tb_send_data(buf, len);
    tb_run();
    tb_send_data(buf, len);
    tb_run();
    int held = tb.data_frames == 2;
    tb_send_ack_upto(2);
    tb_run();
    OK(held && tb.data_frames == 3, "TX window: at most TX_SLOTS frames unacknowledged; an ack releases the next");

    /* Both RX slots full of work that cannot be answered: the head frame is given up
     * so an ack can get in, and the host's retransmission delivers it later. */
    tb_init("ulx3s_25k");
    tb.auto_ack = 0;
    tb_clear();
    for (int i = 0; i < 2; i++) {
        tb_send_data(buf, len);
        tb_run();
    }
    tb_send_data(buf, len); /* seq 2: waits */
    tb_send_data(buf, len); /* seq 3: fills the second slot */
    tb_run();
    int stuck = tb.data_frames == 2;
    tb_send_ack_upto(2);
    tb_run();
    tb.tx_seq = 2; /* host go-back-N */
    tb_send_data(buf, len);
    tb_run();
    tb_send_ack_upto(tb.rx_expect);
    tb_run();
    tb_send_data(buf, len);
    tb_run();
    OK(stuck && tb.data_frames == 4, "RX slots all blocked: frames are dropped for the host to resend, nothing is lost");
}

/* Never drop a CQE: many work requests whose CQEs the host does not acknowledge fill
 * every TX slot; the board then holds the next frame (takes no more messages from the
 * link, counted in tx_stalls) until acks free TX room, and every request gets exactly
 * one CQE, in order. */
#define INV_PER_FRAME 102 /* 102 x 40-byte INVALIDATEs fill a frame, and so do their CQEs */
static void send_invalidates(uint32_t first_wr_id)
{
    uint8_t buf[NF_LINK_MAX_PAYLOAD];
    size_t len = 0;
    for (uint32_t i = 0; i < INV_PER_FRAME; i++) {
        uint8_t body[NF_WR_HDR_SIZE + NF_WR_INVALIDATE_SIZE];
        struct nf_wr_hdr h = {0x4242, first_wr_id + i, 0, 0}; /* unknown QP: INVALID_PARAMETER */
        struct nf_wr_invalidate v = {0x100, 0};
        memcpy(body, &h, sizeof(h));
        memcpy(body + sizeof(h), &v, sizeof(v));
        tb_put_msg(buf, &len, NF_OP_WR_INVALIDATE, body, sizeof(body));
    }
    tb_send_data(buf, len);
}

/* CQEs received, checked in order as they come (wr_id 1, 2, ...), and the host frames
 * the board acknowledged; tb_clear'ed after each look. */
static struct {
    uint32_t next_wr; /* wr_id the next CQE must carry */
    int bad;          /* a CQE out of order, duplicated or missing */
    uint8_t board_ack;
} cq;

static void cq_take(void)
{
    for (int i = 0; i < tb.nframes; i++)
        cq.board_ack = tb.frames[i].hdr.ack;
    for (int i = 0; i < tb.nmsgs; i++) {
        if (tb.msgs[i].hdr.op != NF_OP_CQE)
            continue;
        struct nf_cqe c;
        memcpy(&c, tb.msgs[i].body, sizeof(c));
        cq.bad |= c.wr_id != cq.next_wr;
        cq.next_wr++;
    }
    tb_clear();
}

static int cqes_in_order(void)
{
    cq_take();
    return cq.bad ? -1 : (int)cq.next_wr - 1;
}

static void test_tx_full_holds(void)
{
    tb_init("ulx3s_25k"); /* 2 RX slots (host window 1), 2 TX slots */
    tb.auto_ack = 0;
    tb_clear();
    cq.next_wr = 1;
    cq.bad = 0;
    cq.board_ack = 0;
    const int frames = 6;
    uint32_t stalls0 = fw_stats.tx_stalls;
    int sent = 0, rounds = 0;
    /* The host sends when its window (RX slots - 1 = 1 frame) is open; it acknowledges the
     * board's frames only every third round, so the board's TX fills again and again. */
    while (cqes_in_order() >= 0 && cqes_in_order() < frames * INV_PER_FRAME && rounds < 200) {
        rounds++;
        cq_take();
        if (sent < frames && tb.tx_seq == cq.board_ack) {
            send_invalidates(1u + (uint32_t)sent * INV_PER_FRAME);
            sent++;
        }
        tb_run();
        if (rounds % 3 == 0)
            tb_send_ack_upto(tb.rx_expect);
        tb_run();
    }
    int got = cqes_in_order();
    OK(got == frames * INV_PER_FRAME && fw_stats.tx_overflow == 0,
       "%d work requests whose CQEs wait for acks: every one completes exactly once, in order (%d CQEs)",
       frames * INV_PER_FRAME, got);
    OK(fw_stats.tx_stalls > stalls0, "the board held frames for TX room (tx_stalls %u), dropped nothing",
       fw_stats.tx_stalls - stalls0);
    struct nf_stats st = {0};
    tb.auto_ack = 1;
    tb_send_ack_upto(tb.rx_expect);
    tb_run();
    uint32_t rs = tb_req(NF_OP_STATS, NULL, 0, &st, sizeof(st));
    OK(rs == NF_STATUS_SUCCESS && st.tx_stalls == fw_stats.tx_stalls && st.tx_stalls > 0 && st.tx_overflow == 0,
       "STATS reports the TX-full stalls (%u)", st.tx_stalls);

    /* The reply path itself: with every TX slot in flight, the message walk starts no
     * message whose reply cannot be queued, and resumes where it stopped. */
    tb_init("ulx3s_25k");
    tb.auto_ack = 0;
    tb_clear();
    cq.next_wr = 1;
    cq.bad = 0;
    send_invalidates(1);
    tb_run();
    send_invalidates(1u + INV_PER_FRAME);
    tb_run();
    int full = cqes_in_order() == 2 * INV_PER_FRAME;
    uint8_t buf[NF_LINK_MAX_PAYLOAD];
    size_t len = 0;
    uint32_t at = user_base() + 8 * PAGE;
    for (uint32_t i = 0; i < 3; i++) {
        uint8_t body[NF_WR_HDR_SIZE + NF_WR_INVALIDATE_SIZE];
        struct nf_wr_hdr h = {0x4242, 2u * INV_PER_FRAME + 1u + i, 0, 0};
        struct nf_wr_invalidate v = {0x100, 0};
        memcpy(body, &h, sizeof(h));
        memcpy(body + sizeof(h), &v, sizeof(v));
        tb_put_msg(buf, &len, NF_OP_WR_INVALIDATE, body, sizeof(body));
    }
    memcpy(nfm_mem(nf_hw_engine()) + at, buf, len);
    uint32_t wrs = fw_stats.wr_count;
    struct fw_frame f;
    fw_link_frame(&f, at, (uint32_t)len, 0);
    fw_msg_process(&f);
    uint32_t done = f.done;
    int held = done == 0 && fw_stats.wr_count == wrs && fw_stats.tx_overflow == 0;
    tb_send_ack_upto(tb.rx_expect);
    tb_run();
    fw_msg_resume(&f, done);
    done = f.done;
    tb_run();
    OK(full && held && done == len && cqes_in_order() == 2 * INV_PER_FRAME + 3 && fw_stats.tx_overflow == 0,
       "TX full: a message whose CQE cannot be queued is not started (nothing dropped); it runs once room frees");
}

/* A frame whose replies cannot fit even the empty TX window (here 2 slots, and 5 x
 * 3000-byte MEM_READs): it used to wait forever. Once the TX window is empty it runs
 * whole: replies while they fit, then every request whose reply would be larger than
 * itself is answered INSUFFICIENT_RESOURCES (not run), everything else runs. */
static void test_overflowing_frame(void)
{
    tb_init("ulx3s_25k");
    uint8_t buf[NF_LINK_MAX_PAYLOAD];
    size_t len = 0;
    uint32_t tags[8];
    struct nf_mem_read_req rq = {user_base(), 3000};
    for (int i = 0; i < 5; i++)
        tags[i] = tb_put_msg(buf, &len, NF_OP_MEM_READ, &rq, sizeof(rq));
    tags[5] = tb_put_msg(buf, &len, NF_OP_PING, "12345678", 8);
    tags[6] = tb_put_msg(buf, &len, NF_OP_INFO, NULL, 0);
    uint8_t wbody[sizeof(struct nf_mem_write_req) + 8] = {0};
    struct nf_mem_write_req wq = {user_base() + 16, 8};
    memcpy(wbody, &wq, sizeof(wq));
    memcpy(wbody + sizeof(wq), "written!", 8);
    tags[7] = tb_put_msg(buf, &len, NF_OP_MEM_WRITE, wbody, sizeof(wbody));
    tb_clear();
    tb_send_data(buf, len);
    tb_run();
    int once = 1;
    uint32_t st[8] = {0};
    for (int i = 0; i < 8; i++) {
        int n = 0;
        for (int k = 0; k < tb.nmsgs; k++)
            if ((tb.msgs[k].hdr.op & NF_OP_REPLY) && tb.msgs[k].hdr.tag == tags[i]) {
                n++;
                st[i] = tb.msgs[k].hdr.status;
            }
        once &= n == 1;
    }
    OK(once, "a frame whose replies exceed the whole TX window: every request answered exactly once (%d messages)",
       tb.nmsgs);
    OK(st[0] == NF_STATUS_SUCCESS && st[1] == NF_STATUS_INSUFFICIENT_RESOURCES &&
           st[4] == NF_STATUS_INSUFFICIENT_RESOURCES && st[5] == NF_STATUS_SUCCESS &&
           st[6] == NF_STATUS_INSUFFICIENT_RESOURCES && st[7] == NF_STATUS_SUCCESS &&
           !memcmp(nfm_mem(nf_hw_engine()) + user_base() + 16, "written!", 8) && fw_stats.tx_overflow == 0,
       "... the first MEM_READ in full, the rest that cannot fit INSUFFICIENT_RESOURCES; PING and MEM_WRITE run");
    OK(mem_read(user_base() + 16, buf, 8) == NF_STATUS_SUCCESS && !memcmp(buf, "written!", 8),
       "the link goes on normally after it");
}

/* Random host traffic on every profile: frames of many requests (large replies among
 * them), acks withheld, time passing, go-back-N resends. Once the host acknowledges
 * everything, every request has been answered exactly once. */
static void test_random_traffic(void)
{
    static const char *const profiles[3] = {"ulx3s_25k", "ulx3s_85k", "sim"};
    static uint8_t answered[16384], saved[256][NF_LINK_MAX_PAYLOAD];
    static size_t saved_len[256];
    int bad = 0, runs = 12;
    uint32_t stalls = 0;
    for (int run = 1; run <= runs; run++) {
        uint32_t rnd = (uint32_t)run * 2654435761u;
#define RND() (rnd = rnd * 1103515245u + 12345u, rnd >> 8)
        memset(answered, 0, sizeof(answered));
        tb_init(profiles[run % 3]);
        tb.auto_ack = 0;
        uint32_t first_tag = tb.next_tag, window = nf_hw_cfg()->rx_slots - 1u;
        uint8_t board_ack = 0;
        for (int step = 0; step < 600; step++) {
            uint32_t r = RND() % 10;
            if (step < 400 && r < 5 && (uint8_t)(tb.tx_seq - board_ack) < window) {
                uint8_t buf[NF_LINK_MAX_PAYLOAD];
                size_t len = 0;
                int n = 1 + (int)(RND() % 60);
                for (int i = 0; i < n; i++) {
                    uint32_t k = RND() % 4;
                    uint8_t body[512] = {0};
                    size_t bl = k == 0 ? 8u * (RND() % 50) : k == 1 ? 0 : sizeof(struct nf_mem_read_req);
                    uint16_t op = k == 0 ? NF_OP_PING : k == 1 ? NF_OP_INFO : NF_OP_MEM_READ;
                    if (k >= 2) {
                        struct nf_mem_read_req q = {user_base(), RND() % 3000};
                        memcpy(body, &q, sizeof(q));
                    }
                    if (len + ((NF_MSG_HDR_SIZE + bl + 7u) & ~(size_t)7u) > NF_LINK_MAX_PAYLOAD)
                        break;
                    tb_put_msg(buf, &len, op, body, bl);
                }
                memcpy(saved[tb.tx_seq], buf, len);
                saved_len[tb.tx_seq] = len;
                tb_send_frame(NF_LINK_TYPE_DATA, tb.tx_seq, tb.last_acked, 0, buf, len);
                tb.tx_seq++;
            } else if (r < 7 || step >= 400) {
                tb_send_ack_upto(tb.rx_expect);
            } else if (r < 8) {
                nf_hw_advance(NF_SOC_CPU_CLK_SIM_HZ / 10);
            }
            if ((r == 8 || (step >= 400 && step % 5 == 0)) && board_ack != tb.tx_seq) {
                nf_hw_advance(NF_SOC_CPU_CLK_SIM_HZ / 10);
                for (uint8_t q = board_ack; q != tb.tx_seq; q++) /* go-back-N */
                    tb_send_frame(NF_LINK_TYPE_DATA, q, tb.last_acked, 0, saved[q], saved_len[q]);
            }
            for (int i = 0; i < 5; i++) {
                fw_poll();
                tb_collect();
            }
            for (int i = 0; i < tb.nframes; i++)
                board_ack = tb.frames[i].hdr.ack;
            for (int i = 0; i < tb.nmsgs; i++) {
                uint32_t t = tb.msgs[i].hdr.tag - first_tag;
                if (t < sizeof(answered))
                    answered[t]++;
            }
            tb.nframes = tb.nmsgs = 0;
        }
        uint32_t ntags = tb.next_tag - first_tag;
        int b0 = bad;
        for (uint32_t t = 0; t < ntags && t < sizeof(answered); t++)
            bad += answered[t] != 1;
        if (bad != b0 || fw_stats.tx_overflow || ntags >= sizeof(answered))
            printf("# random traffic run %d (%s): %u requests, %d not answered exactly once, overflow %u\n", run,
                   profiles[run % 3], ntags, bad - b0, fw_stats.tx_overflow);
        bad += fw_stats.tx_overflow != 0 || ntags >= sizeof(answered);
        stalls += fw_stats.tx_stalls;
#undef RND
    }
    tb_clear();
    OK(bad == 0 && stalls > 0,
       "random traffic, acks withheld, go-back-N, %d runs over 3 profiles: every request answered exactly once "
       "(%u TX-full stalls)", runs, stalls);
}

/* ================= memory ================= */

static void test_mem(void)
{
    tb_init("sim");
    uint8_t data[1000], back[1000];
    for (unsigned i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i ^ 0x5A);
    uint32_t a = user_base() + 3 * PAGE + 13;
    OK(mem_write(a, data, sizeof(data)) == NF_STATUS_SUCCESS && !memcmp(nfm_mem(nf_hw_engine()) + a, data, sizeof(data)),
       "MEM_WRITE puts the bytes at the address (unaligned)");
    OK(mem_read(a, back, 999) == NF_STATUS_SUCCESS && !memcmp(back, data, 999), "MEM_READ returns them (odd length)");
    struct snap s0, s1;
    snap_take(&s0);
    OK(mem_write(user_base() - 8, data, 16) == NF_STATUS_INVALID_PARAMETER, "MEM_WRITE below the user region -> INVALID_PARAMETER");
    OK(mem_write(NF_PROFILE_SIM_MEM_BYTES - 8, data, 16) == NF_STATUS_INVALID_PARAMETER,
       "MEM_WRITE past the end of memory -> INVALID_PARAMETER");
    OK(mem_read(0, back, 16) == NF_STATUS_INVALID_PARAMETER, "MEM_READ of a link slot -> INVALID_PARAMETER");
    struct nf_mem_write_req q = {a, 100}; /* claims more data than follows */
    OK(tb_req(NF_OP_MEM_WRITE, &q, sizeof(q), NULL, 0) == NF_STATUS_INVALID_PARAMETER,
       "MEM_WRITE with fewer data bytes than its length -> INVALID_PARAMETER");
    snap_take(&s1);
    OK(snap_same(&s0, &s1), "refused MEM_WRITE/MEM_READ changed nothing");
    snap_free(&s0);
    snap_free(&s1);
}

/* ================= MRs and QPs ================= */

static void test_mr_lifecycle(void)
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

static void pages_at(uint64_t *pages, uint32_t n, const uint32_t *page_numbers)
{
    for (uint32_t i = 0; i < n; i++)
        pages[i] = user_base() + (uint64_t)page_numbers[i] * PAGE;
}

static void test_register(void)
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

static void test_frmr_init(void)
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

static void test_qp(void)
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
    struct nf_qp_create_req bad = {0, 1};
    OK(tb_req(NF_OP_QP_CREATE, &bad, sizeof(bad), NULL, 0) == NF_STATUS_INVALID_PARAMETER, "QP_CREATE with PD 0 -> INVALID_PARAMETER");
}

/* ================= work requests ================= */

struct wr_env {
    uint32_t qp, peer, qp_unconnected, fast, fast_local, normal, fast_other_pd;
};

static void wr_env(struct wr_env *e)
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

static uint32_t qp_op(uint16_t op, uint32_t qpn);

static uint32_t qp_state(uint32_t qpn) { return fw_qps[qpn & FW_QPN_INDEX_MASK].state; }

/* An error completion breaks the QP (NDK); tests that go on with it after an expected
 * error disconnect and connect it again. */
static void qp_reconnect(uint32_t qpn, uint32_t peer)
{
    qp_op(NF_OP_QP_DISCONNECT, qpn);
    qp_connect(qpn, peer);
}

static void test_fast_register_rules(void)
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
        {"a normal (NdkRegisterMr) MR", e.qp, 0, e.normal, 2, 0x80, 100, va, NF_STATUS_INVALID_PARAMETER},
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
        struct snap s0, s1;
        snap_take(&s0);
        uint32_t st = fast_register(rules[i].qp, rules[i].flags, rules[i].token, pages, rules[i].npages, rules[i].fbo,
                                    rules[i].len, rules[i].va, NULL);
        snap_take(&s1);
        int broke = rules[i].qp != e.qp || qp_state(e.qp) == FW_QP_ERROR;
        OK(st == rules[i].status && snap_same(&s0, &s1) && broke,
           "FAST_REGISTER with %s -> 0x%08X, nothing changed, the QP broken", rules[i].what, rules[i].status);
        snap_free(&s0);
        snap_free(&s1);
        if (rules[i].qp == e.qp)
            qp_reconnect(e.qp, e.peer);
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
static void test_token_keys(void)
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
    uint64_t pages[1];
    static const uint32_t pn[1] = {5};
    pages_at(pages, 1, pn);
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

static void test_invalidate_rules(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[1];
    static const uint32_t pn[1] = {6};
    pages_at(pages, 1, pn);
    uint64_t mpages[1];
    static const uint32_t mpn[1] = {8};
    pages_at(mpages, 1, mpn);
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
        {"a normal (NdkRegisterMr) MR", e.qp, 0, e.normal, NF_STATUS_INVALID_PARAMETER},
        {"an unknown token", e.qp, 0, e.fast + 1, NF_STATUS_INVALID_PARAMETER},
        {"an MR never fast-registered", e.qp, 0, e.fast_local, NF_STATUS_INVALID_DEVICE_STATE},
        {"unknown flag bits", e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_READ, e.fast, NF_STATUS_INVALID_PARAMETER},
        {"SEND_AND_SOLICIT_EVENT (not an invalidate flag)", e.qp, NF_NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT, e.fast,
         NF_STATUS_INVALID_PARAMETER},
        {"an MR of another PD, never registered", e.qp, 0, e.fast_other_pd, NF_STATUS_ACCESS_VIOLATION},
        {"an MR of another PD, registered", e.qp, 0, other_pd_valid, NF_STATUS_ACCESS_VIOLATION},
    };
    for (unsigned i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        struct snap s0, s1;
        snap_take(&s0);
        uint32_t st = invalidate(rules[i].qp, rules[i].flags, rules[i].token);
        snap_take(&s1);
        int broke = rules[i].qp != e.qp || qp_state(e.qp) == FW_QP_ERROR;
        OK(st == rules[i].status && snap_same(&s0, &s1) && broke,
           "INVALIDATE of %s -> 0x%08X, nothing changed, the QP broken", rules[i].what, rules[i].status);
        snap_free(&s0);
        snap_free(&s1);
        if (rules[i].qp == e.qp)
            qp_reconnect(e.qp, e.peer);
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

/* NDK: any error completion breaks the connection, whatever the work request and the
 * status: every later work request on the QP completes CANCELLED and changes nothing. */
static void test_error_breaks_qp(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[1];
    static const uint32_t pn[1] = {6};
    pages_at(pages, 1, pn);
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

static void test_rdma(void)
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

static void test_rdma_stopped(void)
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
static void test_engine_timeout(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[1];
    static const uint32_t pn[1] = {7};
    pages_at(pages, 1, pn);
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
static void test_tx_drain_timeout(void)
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

/* ================= QP_FLUSH (NdkFlush) ================= */

static uint32_t qp_op(uint16_t op, uint32_t qpn)
{
    struct nf_qp_req q = {qpn, 0};
    return tb_req(op, &q, sizeof(q), NULL, 0);
}

/* Append a work request (header + body + optional page list) to buf. */
static void put_wr(uint8_t *buf, size_t *len, uint16_t op, uint32_t qpn, uint32_t wr_id, uint32_t flags,
                   const void *body, size_t blen, const uint64_t *pages, uint32_t npages)
{
    uint8_t b[NF_LINK_MAX_PAYLOAD];
    struct nf_wr_hdr h = {qpn, wr_id, flags, 0};
    memcpy(b, &h, sizeof(h));
    memcpy(b + sizeof(h), body, blen);
    if (npages)
        memcpy(b + sizeof(h) + blen, pages, 8u * npages);
    tb_put_msg(buf, len, op, b, sizeof(h) + blen + 8u * npages);
}

static void test_qp_flush(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[1];
    static const uint32_t pn[1] = {9};
    pages_at(pages, 1, pn);
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
    tb_clear();
    tb_send_data(buf, len);
    tb_run();
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
    uint64_t other[1];
    static const uint32_t opn[1] = {11};
    pages_at(other, 1, opn);
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

static void test_timing(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[1];
    static const uint32_t pn[1] = {5};
    pages_at(pages, 1, pn);
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

static void test_adapter_reset(void)
{
    struct wr_env e;
    wr_env(&e);
    uint64_t pages[1];
    static const uint32_t pn[1] = {5};
    pages_at(pages, 1, pn);
    fast_register(e.qp, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, e.fast, pages, 1, 0, PAGE, 0x10000, NULL);
    OK(tb_req(NF_OP_ADAPTER_RESET, NULL, 0, NULL, 0) == NF_STATUS_SUCCESS, "ADAPTER_RESET");
    OK(nfm_check(nf_hw_engine(), e.fast, 0x10000, 8, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) != NF_REFUSE_OK &&
           fw_qp_lookup(e.qp) == FW_NO_INDEX && fw_mr_lookup(e.fast) == FW_NO_INDEX,
       "after ADAPTER_RESET no token grants and no QP or MR is known");
    uint32_t t = mr_create(PD_A, 1);
    OK(t && t != e.fast, "tokens handed out after the reset differ from the old ones");
}

static int stats_get(struct nf_stats *st)
{
    return tb_req(NF_OP_STATS, NULL, 0, st, sizeof(*st)) == NF_STATUS_SUCCESS;
}

/* STATS: every counter moves where its work is done, by exactly what was done. */
static void test_stats(void)
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
           st5 == NF_STATUS_INVALID_DEVICE_STATE && st6 == NF_STATUS_INVALID_PARAMETER &&
           st7 == NF_STATUS_IMPLEMENTATION_LIMIT && st8 == NF_STATUS_ACCESS_VIOLATION && st9 == NF_STATUS_CANCELLED,
       "a known sequence of work: 2 fast-registers, 4 invalidates, 1 write, 1 read, 5 of them refused");
    uint32_t unknown = tb_req(0x0777, NULL, 0, NULL, 0);
    OK(stats_get(&b), "STATS again");
    uint32_t refused_sum = 0, ops_sum = 0;
    for (unsigned i = 0; i < NF_STATS_REFUSED_COUNT; i++)
        refused_sum += b.refused[i] - a.refused[i];
    for (unsigned i = 0; i < NF_STATS_OPS_COUNT; i++)
        ops_sum += b.ops[i] - a.ops[i];
    OK(b.ops[NF_STAT_OP_WR_FAST_REGISTER] - a.ops[NF_STAT_OP_WR_FAST_REGISTER] == 2 &&
           b.ops[NF_STAT_OP_WR_INVALIDATE] - a.ops[NF_STAT_OP_WR_INVALIDATE] == 4 &&
           b.ops[NF_STAT_OP_WR_WRITE] - a.ops[NF_STAT_OP_WR_WRITE] == 1 &&
           b.ops[NF_STAT_OP_WR_READ] - a.ops[NF_STAT_OP_WR_READ] == 1 &&
           b.ops[NF_STAT_OP_FRMR_INIT] - a.ops[NF_STAT_OP_FRMR_INIT] == 1 &&
           b.ops[NF_STAT_OP_STATS] - a.ops[NF_STAT_OP_STATS] == 1 &&
           b.ops[NF_STAT_OP_QP_DISCONNECT] - a.ops[NF_STAT_OP_QP_DISCONNECT] == 2 &&
           b.ops[NF_STAT_OP_QP_CONNECT] - a.ops[NF_STAT_OP_QP_CONNECT] == 2 && ops_sum == 14,
       "work requests and requests are counted by op, each once (fast path and walk alike)");
    OK(unknown == NF_STATUS_NOT_SUPPORTED && b.ops_unknown - a.ops_unknown == 1,
       "an unknown op counts as unknown (and is refused NOT_SUPPORTED)");
    OK(b.refused[NF_STAT_STATUS_INVALID_DEVICE_STATE] - a.refused[NF_STAT_STATUS_INVALID_DEVICE_STATE] == 1 &&
           b.refused[NF_STAT_STATUS_INVALID_PARAMETER] - a.refused[NF_STAT_STATUS_INVALID_PARAMETER] == 1 &&
           b.refused[NF_STAT_STATUS_IMPLEMENTATION_LIMIT] - a.refused[NF_STAT_STATUS_IMPLEMENTATION_LIMIT] == 1 &&
           b.refused[NF_STAT_STATUS_ACCESS_VIOLATION] - a.refused[NF_STAT_STATUS_ACCESS_VIOLATION] == 1 &&
           b.refused[NF_STAT_STATUS_CANCELLED] - a.refused[NF_STAT_STATUS_CANCELLED] == 1 &&
           b.refused[NF_STAT_STATUS_NOT_SUPPORTED] - a.refused[NF_STAT_STATUS_NOT_SUPPORTED] == 1 &&
           refused_sum == 6 && b.refused_other == a.refused_other,
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

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--prefix") && i + 1 < argc)
            prefix = argv[++i];
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
    test_timing();
    test_adapter_reset();
    test_stats();
    nf_hw_free();
    return tap_done();
}
