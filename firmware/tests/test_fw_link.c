/* SPDX-License-Identifier: Apache-2.0 */
/* Link recovery tests of the firmware's host build: fast retransmission on repeated
 * pure ACKs, the reply batching cap that shrinks on loss and grows back, and the RTO and
 * retransmission after a partial ack. */
#include "tb.h"

#define OK(cond, ...) tb_ok((cond), __VA_ARGS__)
#define BODY 400u /* a PING body: its reply is 416 bytes with the header */
#define TIMEOUT_CYCLES NF_SOC_CPU_CLK_SIM_HZ /* 1 s: beyond any RTO at 3 MBd */

/* n PINGs of blen bytes in one host frame; returns the first tag. */
static uint32_t send_pings_of(int n, size_t blen)
{
    static uint8_t buf[NF_LINK_MAX_PAYLOAD];
    uint8_t body[BODY];
    memset(body, 0x5A, sizeof(body));
    size_t len = 0;
    uint32_t first = tb.next_tag;
    for (int i = 0; i < n; i++)
        tb_put_msg(buf, &len, NF_OP_PING, body, blen);
    tb_send_data(buf, len);
    return first;
}

static uint32_t send_pings(int n) { return send_pings_of(n, BODY); }

/* Every reply of n PINGs from tag first arrived, in order; the largest frame payload. */
static int replies_ok(uint32_t first, int n, uint32_t *max_payload)
{
    int k = 0;
    *max_payload = 0;
    for (int i = 0; i < tb.nframes; i++)
        if (tb.frames[i].hdr.type == NF_LINK_TYPE_DATA && tb.frames[i].hdr.len > *max_payload)
            *max_payload = tb.frames[i].hdr.len;
    for (int i = 0; i < tb.nmsgs; i++)
        if (tb.msgs[i].hdr.op == (NF_OP_PING | NF_OP_REPLY) && tb.msgs[i].hdr.tag == first + (uint32_t)k)
            k++;
    return k == n;
}

/* An unacknowledged frame, then the board's timeout: one retransmission round. */
static void force_timeout(void)
{
    tb.auto_ack = 0;
    tb_clear();
    send_pings(1);
    tb_run();
    nf_hw_advance(TIMEOUT_CYCLES);
    tb_run();
    tb_send_ack_upto(tb.rx_expect);
    tb.auto_ack = 1;
    tb_run();
}

static int sent_seqs(int want_n, uint8_t first_seq)
{
    if (tb.nframes != want_n)
        return 0;
    for (int i = 0; i < want_n; i++)
        if (tb.frames[i].hdr.type != NF_LINK_TYPE_DATA || tb.frames[i].hdr.seq != (uint8_t)(first_seq + i))
            return 0;
    return 1;
}

/* n pure ACKs naming ack, each followed by a poll round (after tb_clear: tb.nframes is
 * what they made the board send). */
static void acks(uint8_t ack, int n)
{
    tb_clear();
    for (int i = 0; i < n; i++) {
        tb_send_ack_upto(ack);
        tb_run();
    }
}

/* n DATA frames of len bytes (their ack is the last one sent), each followed by a poll. */
static void datas(const uint8_t *buf, size_t len, int n)
{
    for (int f = 0; f < n; f++) {
        tb_send_data(buf, len);
        tb_run();
    }
}

static void test_fast_retransmit(void)
{
    tb_init("sim");
    tb.auto_ack = 0;
    uint8_t buf[64];
    size_t len = 0;
    tb_put_msg(buf, &len, NF_OP_PING, "fastrexm", 8);
    /* three reply frames in flight: seq 0, 1, 2 */
    datas(buf, len, 3);
    uint32_t rexmit0 = fw_stats.retransmits;
    /* the host got 0, lost 1, saw 2 after the gap: ack 1, then ack 1 again at once */
    acks(1, 2);
    OK(tb.nframes == 0, "fast retransmit: one repeated ACK alone sends nothing");
    tb_send_ack_upto(1);
    tb_run();
    OK(sent_seqs(2, 1) && fw_stats.retransmits - rexmit0 == 2,
       "fast retransmit: a second repeated ACK sends 1 and 2 again at once, long before the RTO");
    /* the host now sees our copies of what it had: its repeated acks are no new loss */
    acks(1, 3);
    OK(tb.nframes == 0, "fast retransmit: repeated ACKs after a go-back do not send everything again");
    /* once the ack moves, a new loss is recognised again */
    acks(2, 1);
    acks(2, 2);
    OK(sent_seqs(1, 2), "fast retransmit: re-armed once the ack advances");
    /* DATA frames repeating the ack are not duplicate acks (a host sends its queue) */
    acks(3, 1);
    tb_clear();
    datas(buf, len, 3);
    OK(sent_seqs(3, 3), "fast retransmit: DATA frames with an old ack send only new replies");
    /* nothing in flight: repeated acks are harmless */
    acks(6, 1);
    acks(6, 3);
    OK(tb.nframes == 0, "fast retransmit: repeated ACKs with nothing in flight send nothing");
}

static void test_reply_cap(void)
{
    uint32_t maxp;
    tb_init("sim");
    /* 6 x 416-byte replies fit one 4080-byte frame */
    tb_clear();
    uint32_t t = send_pings(6);
    tb_run();
    OK(replies_ok(t, 6, &maxp) && tb.data_frames == 1, "reply cap: 6 replies batched into 1 frame on a clean line");
    force_timeout();
    tb_clear();
    t = send_pings(6);
    tb_run();
    int got = replies_ok(t, 6, &maxp);
    OK(got && tb.data_frames == 2 && maxp <= NF_LINK_MAX_PAYLOAD / 2,
       "reply cap: after a timeout, frames of at most half the payload (2 frames, largest %u)", maxp);
    force_timeout();
    force_timeout();
    tb_clear();
    t = send_pings(6);
    tb_run();
    got = replies_ok(t, 6, &maxp);
    OK(got && tb.data_frames == 6 && maxp <= NF_LINK_MAX_PAYLOAD / 8,
       "reply cap: after three timeouts, one reply per frame (6 frames, largest %u)", maxp);
    for (int i = 0; i < 8; i++)
        force_timeout();
    tb_clear();
    t = send_pings(6);
    tb_run();
    OK(replies_ok(t, 6, &maxp) && tb.data_frames == 6 && maxp == NF_MSG_HDR_SIZE + BODY && fw_stats.tx_overflow == 0,
       "reply cap: at the floor a reply larger than the cap still goes whole, in a frame of its own");
    /* more messages than TX slots: answered anyway (batched full-size for that frame) */
    tb_clear();
    int many = (int)fw_cfg.tx_slots + 2;
    t = send_pings_of(many, BODY / 2); /* each reply still over the cap */
    tb_run();
    OK(replies_ok(t, many, &maxp) && fw_stats.tx_overflow == 0,
       "reply cap: a frame with more messages than TX slots is still answered in full");
    tb_clear();
    t = send_pings(6);
    tb_run();
    OK(replies_ok(t, 6, &maxp) && tb.data_frames == 6, "reply cap: ... and the cap stays small after it");
    /* clean acks grow it back: 16 frames per doubling, 128 -> 4080 in 5 steps */
    uint8_t buf[64];
    size_t len = 0;
    tb_put_msg(buf, &len, NF_OP_PING, "growback", 8);
    for (int i = 0; i < 100; i++) {
        tb_exchange(buf, len);
    }
    tb_clear();
    t = send_pings(6);
    tb_run();
    OK(replies_ok(t, 6, &maxp) && tb.data_frames == 1, "reply cap: a run of clean acks grows it back to full frames");
    /* RESET restores full batching */
    force_timeout();
    tb_send_frame(NF_LINK_TYPE_RESET, 0, 0, 0x4242, NULL, 0);
    tb_run();
    tb.tx_seq = tb.rx_expect = tb.last_acked = 0;
    tb_clear();
    t = send_pings(6);
    tb_run();
    OK(replies_ok(t, 6, &maxp) && tb.data_frames == 1, "reply cap: RESET restores full batching");
}

/* The RTO covers exactly the frames still in flight, after the TX ring has wrapped and
 * an ack took only the oldest of them: (their bytes + RX_SLOTS x SLOT_BYTES) x 10 bits x
 * 2 x UART_PERIOD / 16 + CLK_HZ / 50. */
static void test_rto_after_partial_ack(void)
{
    tb_init("sim");
    tb.auto_ack = 0;
    for (uint32_t i = 0; i < fw_cfg.tx_slots + 3u; i++) {
        send_pings_of(1, 8);
        tb_run();
        tb_send_ack_upto(tb.rx_expect);
        tb_run();
    }
    tb_clear();
    static const size_t blen[3] = {8, 200, BODY};
    for (int i = 0; i < 3; i++) {
        send_pings_of(1, blen[i]);
        tb_run();
    }
    int three = sent_seqs(3, (uint8_t)(tb.rx_expect - 3u));
    uint64_t rto_bytes = (uint64_t)fw_cfg.rx_slots * NF_LINK_SLOT_BYTES;
    for (int i = 1; three && i < 3; i++)
        rto_bytes += NF_LINK_HDR_SIZE + tb.frames[i].hdr.len;
    uint64_t rto_want = ((rto_bytes * 10u * 2u * fw_cfg.uart_period) >> NF_SOC_UART_PERIOD_FRAC) + fw_cfg.clk_hz / 50u;
    tb_send_ack_upto((uint8_t)(tb.rx_expect - 2u));
    tb_run();
    OK(three && fw_link_rto() == rto_want,
       "RTO after the TX ring wrapped and a partial ack: the formula over the 2 frames still in flight");
    /* and the timeout resends exactly those two, oldest first */
    tb_clear();
    nf_hw_advance(TIMEOUT_CYCLES);
    tb_run();
    OK(sent_seqs(2, (uint8_t)(tb.rx_expect - 2u)), "the timeout after a partial ack resends the 2 frames still in flight");
}

/* An ack in a host DATA frame (the usual frame's path) restarts the retransmission timer
 * from that frame's arrival: frames sent before it are resent only an RTO after it. */
static void test_rto_restarts_at_data_ack(void)
{
    tb_init("sim");
    tb.auto_ack = 0;
    tb_clear();
    for (int i = 0; i < 3; i++) {
        send_pings_of(1, 8);
        tb_run();
    }
    int three = sent_seqs(3, (uint8_t)(tb.rx_expect - 3u));
    uint32_t rto = fw_link_rto();
    nf_hw_advance(rto / 2u);
    tb.last_acked = (uint8_t)(tb.rx_expect - 2u); /* the oldest of the three */
    send_pings_of(1, 8);
    tb_run();
    uint32_t rto2 = fw_link_rto();
    tb_clear();
    nf_hw_advance(rto2 - rto2 / 4u); /* past the first send's RTO, not the ack's */
    tb_run();
    int quiet = tb.nframes == 0;
    tb_clear();
    nf_hw_advance(rto2 / 2u);
    tb_run();
    int resent = tb.nframes > 0 && tb.frames[0].hdr.type == NF_LINK_TYPE_DATA &&
                 tb.frames[0].hdr.seq == (uint8_t)(tb.last_acked);
    OK(three && quiet && resent,
       "an ack in a DATA frame restarts the timer at its arrival: nothing resent before an RTO from it, then "
       "the oldest frame still in flight first");
    tb_send_ack_upto(tb.rx_expect);
    tb.auto_ack = 1;
    tb_run();
}

int main(int argc, char **argv)
{
    tb_args(argc, argv);
    test_fast_retransmit();
    test_reply_cap();
    test_rto_after_partial_ack();
    test_rto_restarts_at_data_ack();
    return tb_done();
}
