/* SPDX-License-Identifier: Apache-2.0 */
/* Firmware unit tests (fw_test.h): the link, messages and memory requests. */
#include "fw_test.h"

/* ================= link ================= */

void test_reset_handshake(void)
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

void test_ping_info(void)
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

void test_malformed(void)
{
    tb_init("sim");
    uint8_t buf[64] = {0};
    struct nf_msg_hdr h = {NF_OP_PING, 12, 55, 0, 0}; /* not a multiple of 8 */
    memcpy(buf, &h, sizeof(h));
    tb_exchange(buf, 32);
    const struct tb_msg *m = tb_find_reply(55);
    OK(m && m->hdr.status == NF_STATUS_INVALID_PARAMETER, "message length not a multiple of 8 -> INVALID_PARAMETER");
    h.len = 64; /* longer than the frame */
    memcpy(buf, &h, sizeof(h));
    tb_exchange(buf, 32);
    m = tb_find_reply(55);
    OK(m && m->hdr.status == NF_STATUS_INVALID_PARAMETER, "message longer than its frame -> INVALID_PARAMETER");
    OK(tb_req(NF_OP_MR_CREATE, NULL, 0, NULL, 0) == NF_STATUS_INVALID_PARAMETER, "request without its body -> INVALID_PARAMETER");
}

/* A DATA frame with sequence number seq: did the board answer with a pure ACK naming 1
 * (the frame it expects)? */
static int data_acked(uint8_t seq, const uint8_t *buf, size_t len)
{
    tb_clear();
    tb_send_frame(NF_LINK_TYPE_DATA, seq, tb.rx_expect, 0, buf, len);
    tb_run();
    int acked = 0;
    for (int i = 0; i < tb.nframes; i++)
        acked |= tb.frames[i].hdr.type == NF_LINK_TYPE_ACK && tb.frames[i].hdr.ack == 1;
    return acked;
}

void test_sequence(void)
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
    int dup_ack = data_acked(0, buf, len);
    OK(first && tb.nmsgs == 0 && dup_ack, "a duplicate DATA frame is dropped and acknowledged again (ack = rx_expect)");
    /* a gap */
    int gap_ack = data_acked(5, buf, len);
    OK(tb.nmsgs == 0 && gap_ack, "an out-of-order DATA frame is dropped, the ack still names the expected one");
    tb.tx_seq = 1;
    struct nf_info info;
    OK(info_get(&info) && info.rx_dup == 2, "INFO counts both dropped frames (rx_dup = 2)");
    /* the reply DATA frame carries the cumulative ack */
    OK(tb.nframes >= 1 && tb.frames[0].hdr.type == NF_LINK_TYPE_DATA && tb.frames[0].hdr.ack == 2,
       "replies ride in DATA frames carrying ack = next expected seq");
}

void test_batching(void)
{
    tb_init("sim");
    uint8_t buf[NF_LINK_MAX_PAYLOAD];
    size_t len = 0;
    uint32_t tags[20];
    for (int i = 0; i < 20; i++)
        tags[i] = tb_put_msg(buf, &len, NF_OP_PING, "12345678", 8);
    tb_exchange(buf, len);
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

void test_retransmit(void)
{
    tb_init("sim");
    tb.auto_ack = 0;
    uint8_t buf[64];
    size_t len = 0;
    tb_put_msg(buf, &len, NF_OP_PING, "retransm", 8);
    tb_exchange(buf, len);
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

void test_window(void)
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
/* As many INVALIDATEs as their CQEs fill one frame (the requests, shorter, fit one too). */
#define INV_PER_FRAME ((int)(NF_LINK_MAX_PAYLOAD / (NF_MSG_HDR_SIZE + NF_CQE_SIZE)))
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

/* A fresh 25K-profile adapter whose 2 TX slots are both in flight (the host acknowledges
 * nothing): true when their invalidates' CQEs all came out in order. */
static int fill_tx_window(void)
{
    tb_init("ulx3s_25k");
    tb.auto_ack = 0;
    tb_clear();
    cq.next_wr = 1;
    cq.bad = 0;
    send_invalidates(1);
    tb_run();
    send_invalidates(1u + INV_PER_FRAME);
    tb_run();
    return cqes_in_order() == 2 * INV_PER_FRAME;
}

void test_tx_full_holds(void)
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
    int full = fill_tx_window();
    uint8_t buf[NF_LINK_MAX_PAYLOAD];
    size_t len = 0;
    uint32_t at = user_base() + 4 * PAGE; /* inside the smallest profile's user region */
    for (uint32_t i = 0; i < 3; i++) {
        uint8_t body[NF_WR_HDR_SIZE + NF_WR_INVALIDATE_SIZE];
        struct nf_wr_hdr h = {0x4242, 2u * INV_PER_FRAME + 1u + i, 0, 0};
        struct nf_wr_invalidate v = {0x100, 0};
        memcpy(body, &h, sizeof(h));
        memcpy(body + sizeof(h), &v, sizeof(v));
        tb_put_msg(buf, &len, NF_OP_WR_INVALIDATE, body, sizeof(body));
    }
    memcpy(nfm_mem(nf_hw_engine()) + at, buf, len);
    uint32_t wrs = fw_stats_wr_count();
    struct fw_frame f;
    fw_link_frame(&f, at, (uint32_t)len, 0);
    fw_msg_process(&f, hal_read32(NF_MAP_ADAPTER_MEM + at));
    uint32_t done = f.done;
    int held = done == 0 && fw_stats_wr_count() == wrs && fw_stats.tx_overflow == 0;
    tb_send_ack_upto(tb.rx_expect);
    tb_run();
    fw_msg_resume(&f, done);
    done = f.done;
    tb_run();
    OK(full && held && done == len && cqes_in_order() == 2 * INV_PER_FRAME + 3 && fw_stats.tx_overflow == 0,
       "TX full: a message whose CQE cannot be queued is not started (nothing dropped); it runs once room frees");

    /* A frame of one status query takes fw_msg_process's query path: the same rule. */
    full = fill_tx_window();
    len = 0;
    uint32_t qtag = tb_put_msg(buf, &len, NF_OP_INFO, NULL, 0);
    memcpy(nfm_mem(nf_hw_engine()) + at, buf, len);
    fw_link_frame(&f, at, (uint32_t)len, 0);
    fw_msg_process(&f, hal_read32(NF_MAP_ADAPTER_MEM + at));
    held = f.done == 0 && fw_stats.tx_overflow == 0;
    tb_send_ack_upto(tb.rx_expect);
    tb_run();
    fw_msg_resume(&f, f.done);
    done = f.done;
    tb_run();
    int answers = 0;
    for (int k = 0; k < tb.nmsgs; k++)
        answers += tb.msgs[k].hdr.op == (NF_OP_INFO | NF_OP_REPLY) && tb.msgs[k].hdr.tag == qtag &&
                   tb.msgs[k].hdr.status == NF_STATUS_SUCCESS;
    OK(full && held && done == len && answers == 1 && fw_stats.tx_overflow == 0,
       "TX full: a frame of one INFO query is not started either; it is answered once room frees");
}

/* A frame whose replies cannot fit even the empty TX window (here 2 slots, and 5 x
 * 3000-byte MEM_READs): it used to wait forever. Once the TX window is empty it runs
 * whole: replies while they fit, then every request whose reply would be larger than
 * itself is answered INSUFFICIENT_RESOURCES (not run), everything else runs. */
void test_overflowing_frame(void)
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
    tb_exchange(buf, len);
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
void test_random_traffic(void)
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

/* fw_mul64: the firmware's only multiply (the core has none), by shifts and adds. */
void test_mul64(void)
{
    static const uint32_t edge[] = {0u, 1u, 2u, 3u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu, 1000u, 2199023256u};
    int bad = 0;
    for (unsigned i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
        for (unsigned j = 0; j < sizeof(edge) / sizeof(edge[0]); j++)
            bad += fw_mul64(edge[i], edge[j]) != (uint64_t)edge[i] * edge[j];
    uint32_t x = 0x9E3779B9u;
    for (int n = 0; n < 100000; n++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        uint32_t a = x;
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        uint32_t b = x >> (n & 31); /* short and long multipliers alike */
        bad += fw_mul64(a, b) != (uint64_t)a * b;
    }
    OK(bad == 0, "fw_mul64 is the exact 64-bit product (edge values, 100000 pseudo-random pairs)");
}

void test_mem(void)
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
