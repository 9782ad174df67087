/* SPDX-License-Identifier: Apache-2.0 */
/* Link protocol, board side: the receive side (fw_link_int.h). Go-back-N receive from
 * the RX slots in ring order, each frame sorted by its header; an in-order DATA frame's
 * messages run (fw_msg) once their replies fit the TX window, else it is held in its
 * slot; a RESET restarts the session. Called by fw_link.c; calls fw_msg, fw_tables (RESET),
 * fw_state and the transmit side (fw_link_tx.c). */
#include "fw_cm.h"
#include "fw_frame.h"
#include "fw_link_int.h"
#include "fw_msg.h"
#include "fw_state.h"
#include "fw_tables.h"
#include "hal.h"

/* The next DATA seq we accept advances (mod 256). */
static void rx_expect_next(void)
{
    link_state.rx_hdr = (link_state.rx_hdr + (1u << (8u * NF_LINK_HDR_SEQ_OFF))) & 0xFFFFu;
}

/* RESET from the host: wipe the adapter, restart both sequences, answer RESET_ACK with
 * the host's nonce and INFO. Frames still queued from the old session go out first,
 * so the host (which ignores everything until its RESET_ACK) never takes them as new. */
static FW_COLD void link_reset(uint32_t nonce)
{
    fw_rng_seed(nonce << 16 ^ hal_cycles()); /* keys differ per adapter session */
    fw_tables_reset();
    fw_cm_reset();
    link_state_reset();
    tx_wait_idle((1u << fw_cfg.tx_slots) - 1u);
    uint32_t a = tx_addr(0);
    fw_state_put_info(a + NF_LINK_HDR_SIZE);
    mem_wr(a, hdr_word0(NF_LINK_TYPE_RESET_ACK, 0, 0));
    mem_wr(a + 4u, hdr_word1(NF_INFO_SIZE, nonce));
    tx_post(0, NF_LINK_HDR_SIZE + NF_INFO_SIZE);
    link_state.maybe_busy = 1u; /* the first DATA frame reuses slot 0 */
}

/* Room for replies with the batching cut down (rare: only after a loss). Each reply
 * either fits the open frame or opens one more, so a free slot per message is always
 * enough. When that is not there, this one frame's replies are batched full-size
 * (what fw_msg_fits plans for): a small cap must never keep a frame unanswered. */
static FW_COLD int replies_fit_capped(const struct fw_frame *f, uint32_t free_open,
                                                        uint32_t free_slots)
{
    if (!fw_msg_fits(f, free_open, free_slots))
        return 0;
    if (!link_state.cap_saved)
        link_state.cap_saved = link_state.tx_cap;
    link_state.tx_cap = NF_LINK_MAX_PAYLOAD;
    link_state.cap_adjust = 1;
    return 1;
}

/* Room for replies: bytes left in the open frame and whole free slots after it. */
static FW_COLD int replies_fit_slow(const struct fw_frame *f, uint32_t free_slots)
{
    /* A free slot per message. */
    if (free_slots >= fw_msg_count(f))
        return 1;
    uint32_t free_open = tx_frame.open ? NF_LINK_MAX_PAYLOAD - tx_frame.len : 0;
    if (link_state.tx_cap < NF_LINK_MAX_PAYLOAD)
        return replies_fit_capped(f, free_open, free_slots);
    return fw_msg_fits(f, free_open, free_slots);
}

static inline int replies_fit(const struct fw_frame *f)
{
    /* Fast path: every reply fits one frame, so a free slot per possible message (each
     * is at least a header) is enough without reading the messages. */
    uint32_t free_slots = fw_cfg.tx_slots - link_state.tx_inflight - tx_frame.open;
    if (free_slots >= f->len / NF_MSG_HDR_SIZE)
        return 1;
    /* A frame holding one message (the usual work request with its page list) needs one
     * free slot. */
    if (free_slots && fw_msg_single(f))
        return 1;
    return replies_fit_slow(f, free_slots);
}

/* While the head frame waits for TX room, the acks that would make room may already
 * sit in later RX slots: apply them (acks are cumulative, so order does not matter). */
static FW_COLD int peek_acks(uint32_t ready)
{
    int reset = 0;
    link_state.peeked = 0;
    for (uint32_t k = 1; k < fw_cfg.rx_slots; k++) {
        uint32_t slot = ring_add(link_state.rx_next, k, fw_cfg.rx_slots);
        if (!(ready & (1u << slot)))
            break;
        uint32_t w0 = mem_rd(rx_addr(slot));
        uint32_t type = (w0 >> (8u * NF_LINK_HDR_TYPE_OFF)) & 0xFFu;
        if (type == NF_LINK_TYPE_DATA || type == NF_LINK_TYPE_ACK)
            tx_ack_slow((w0 >> (8u * NF_LINK_HDR_ACK_OFF)) & 0xFFu, slot);
        if (type == NF_LINK_TYPE_ACK)
            link_state.peeked |= 1u << slot;
        reset |= type == NF_LINK_TYPE_RESET;
    }
    return reset;
}

/* The head RX frame stops at payload offset off for TX room: hold it (no more messages
 * are taken from the link) and resume there when room frees; counted in tx_stalls. */
static void link_hold(uint32_t off)
{
    if (!link_state.hold)
        fw_stats.tx_stalls++; /* once per held frame */
    link_state.hold = off + 1u;
}

/* The head frame is held part-way (its messages before the hold ran, the next one's
 * reply found no TX room: never, while fw_msg_fits holds, since a frame starts only when
 * all of it fits). It stays; it resumes where it stopped. Returns 1 only when it must be
 * given up: every RX slot is full and one holds a RESET (the session ends, and nothing
 * else could get in). */
static FW_COLD int rx_give_up_for_reset(uint32_t ready)
{
    uint32_t all_rx = (1u << fw_cfg.rx_slots) - 1u;
    if (!peek_acks(ready) || (ready & all_rx) != all_rx)
        return 0;
    link_state.hold = 0;
    return 1;
}

/* Run frame f, held or overflowing (fw_msg_resume) from message offset from, its stamp's
 * register and the engine's wait so far taken now (slot: its RX slot); hold it where a reply found
 * no TX room. Returns nonzero when it ran to its end. (A new frame runs in rx_frame_run.) */
static FW_COLD int rx_run(struct fw_frame *f, uint32_t slot, uint32_t from)
{
    f->stamp_at = rx_stamp_at(slot);
    f->eng_start = fw_eng_wait_cycles();
    fw_msg_resume(f, from);
    if (f->done < f->len)
        link_hold(f->done);
    return f->done >= f->len;
}

/* The head frame's replies do not fit even the empty TX window: run it now, answering
 * what does not fit short (fw_msg_resume with f->overflow), with full-size batching and
 * the last TX slot kept for the short answers. */
static FW_COLD int rx_overflow_frame(uint32_t ready, uint32_t slot, struct fw_frame *f)
{
    /* One TX slot: every answer no larger than its message from the start (they fit it). */
    uint32_t short_only = fw_cfg.tx_slots < 2u;
    link_state.keep_free = !short_only;
    if (!link_state.cap_saved)
        link_state.cap_saved = link_state.tx_cap;
    link_state.tx_cap = NF_LINK_MAX_PAYLOAD;
    link_state.cap_adjust = 1;
    f->overflow = short_only ? 2u : 1u;
    int whole = rx_run(f, slot, 0);
    f->overflow = 0;
    link_state.keep_free = 0;
    if (!whole)
        return rx_give_up_for_reset(ready); /* held part-way (not expected: see fw_msg.h) */
    link_state.hold = 0;
    rx_expect_next();
    return 1;
}

/* The head frame was held for TX room (link_state.hold): check again, run it from where it
 * stopped. Returns 0 while it must still wait, 1 when it is done (ran to its end, or
 * given up undelivered when nothing of it ran and every RX slot is full). */
static FW_COLD int rx_held(uint32_t ready, uint32_t slot, struct fw_frame *f)
{
    if (!link_state.hold)
        link_hold(0); /* a new frame that does not fit: counted once */
    uint32_t from = link_state.hold - 1u;
    if (from == 0 && !replies_fit(f) && (peek_acks(ready), !replies_fit(f))) {
        uint32_t all_rx = (1u << fw_cfg.rx_slots) - 1u;
        if (link_state.tx_inflight == 0 && !tx_frame.open)
            return rx_overflow_frame(ready, slot, f);
        if ((ready & all_rx) != all_rx)
            return 0; /* wait for acks; there is a free RX slot for them */
        /* Every RX slot is full, so no ack can reach us: give up this frame
         * undelivered (nothing of it ran; the host sends it again) to make room. */
        fw_stats.rx_dup++;
        link_state.hold = 0;
        return 1;
    }
    if (!rx_run(f, slot, from))
        return rx_give_up_for_reset(ready);
    link_state.hold = 0;
    rx_expect_next();
    return 1;
}

/* The RX slot at rx_next is done with: hand it back to the hardware, look at the next. */
static FW_HOT void rx_release(uint32_t slot)
{
    link_wr(NF_LINK_RX_RELEASE, 1u << slot);
    rx_next_at(ring_add(slot, 1u, fw_cfg.rx_slots));
}

/* The usual frame, held part-way (not expected: see fw_msg.h). Returns as rx_frame does. */
static FW_COLD int rx_frame_held(const struct fw_frame *f)
{
    link_hold(f->done);
    return rx_give_up_for_reset(link_rd(NF_LINK_RX_READY));
}

/* The usual frame (rx_frame) from its messages on: len its payload bytes, m0 its first
 * word (in the register fw_msg_process takes it in; its payload address and its
 * arrival's register are kept with rx_next). Returns as rx_frame does. Nothing
 * is kept across fw_msg_process (link_state has it all), so only the return address is saved. */
static FW_HOT int rx_frame_run(uint32_t len, uint32_t m0)
{
    struct fw_frame *f = &link_state.frame;
    f->len = len;
    f->done = len; /* the message layer lowers it only when a message must wait */
    f->stamp_at = link_state.rx_stamp;
    f->eng_start = fw_eng_wait_cycles();
    fw_msg_process(f, m0);
    /* The arrival of the ack rx_frame applied, read now that the requests have run. */
    if (link_state.rto_stamp_due)
        rto_restart(hal_read32(link_state.rx_stamp));
    if (f->done < f->len && !rx_frame_held(f))
        return 0; /* held part-way: rx_held continues it */
    rx_expect_next();
    link_state.ack_owed = 1;
    rx_release(link_state.rx_next);
    return 1;
}

/* Every frame but the usual one (rx_frame): w0, w1 its header words. Returns as
 * rx_frame does. */
static FW_COLD int rx_frame_slow(uint32_t ready, uint32_t w0, uint32_t w1)
{
    uint32_t slot = link_state.rx_next;
    uint32_t type = (w0 >> (8u * NF_LINK_HDR_TYPE_OFF)) & 0xFFu;
    uint32_t ack = (w0 >> (8u * NF_LINK_HDR_ACK_OFF)) & 0xFFu;
    if (type == NF_LINK_TYPE_DATA) {
        uint32_t seq = (w0 >> (8u * NF_LINK_HDR_SEQ_OFF)) & 0xFFu;
        uint32_t len = (w1 >> (8u * (NF_LINK_HDR_LEN_OFF - 4u))) & 0xFFFFu;
        tx_ack_slow(ack, slot);
        if (seq != rx_expect() || len > NF_LINK_MAX_PAYLOAD) {
            /* Duplicate or gap: go-back-N drops it, and the ack repeats at once as a pure
             * ACK, ahead of any batched replies: repeated pure ACKs are how the host
             * learns of a loss before its timer (an ack in DATA frames is no sign). */
            fw_stats.rx_dup++;
            link_wr(NF_LINK_TX_ACK, rx_expect());
            rx_release(slot);
            return 1;
        }
        struct fw_frame *f = &link_state.frame;
        f->addr = rx_addr(slot) + NF_LINK_HDR_SIZE;
        f->len = len;
        f->done = len; /* the message layer lowers it only when a message must wait */
        if (!link_state.hold && (replies_fit(f) || (peek_acks(ready), replies_fit(f))))
            return rx_frame_run(len, mem_rd(f->addr));
        if (!rx_held(ready, slot, f)) {
            /* Held: no more messages are taken from the link until TX room frees (the
             * host's window fills; its retransmissions wait for our acks). */
            return 0;
        }
        link_state.ack_owed = 1;
    } else if (type == NF_LINK_TYPE_ACK) {
        if (ack == tx_una())
            dup_ack(slot);
        else
            tx_ack_slow(ack, slot);
    } else if (type == NF_LINK_TYPE_RESET) {
        link_reset((w1 >> (8u * (NF_LINK_HDR_RSVD_OFF - 4u))) & 0xFFFFu);
    }
    /* Anything else (RESET_ACK is board to host) is ignored. */
    rx_release(slot);
    return 1;
}

/* One frame in the RX slot at rx_next (ready: RX_READY as read). Returns 0 when the
 * frame must wait in its slot for TX room, else releases the slot and returns 1. Its
 * own function, header reads first: how soon they come is how soon a frame is noticed.
 * It only sorts: the usual frame (the next DATA frame in sequence, nothing held, its
 * replies fit the TX window at a glance) goes on to rx_frame_run, everything else (and
 * the usual frame, from its start, when its replies need a closer look) to
 * rx_frame_slow. Both are tail calls, so nothing here is saved on the stack. */
FW_HOT int rx_frame(uint32_t ready)
{
    hal_win hw = link_state.rx_win;
    uint32_t unusual = link_state.hold | link_state.cap_adjust; /* loaded while the header's reads wait */
    uint32_t w0 = win_rd(hw, 0), w1 = win_rd(hw, 4u);
    uint32_t len = (w1 >> (8u * (NF_LINK_HDR_LEN_OFF - 4u))) & 0xFFFFu;
    if ((w0 & 0xFFFFu) != link_state.rx_hdr || len > NF_LINK_MAX_PAYLOAD || unusual)
        return rx_frame_slow(ready, w0, w1);
    /* replies_fit's two quick tests (a free TX slot per possible message, or one for a
     * single message); the ack this frame carries is applied first, as it may free slots.
     * The RTO's restart from the ack's arrival waits until the requests have run
     * (rx_frame_run): nothing before needs it, and the stamp's read would delay them. */
    uint32_t m0 = win_rd(hw, NF_LINK_HDR_SIZE); /* the first message's header word */
    if (tx_ack((w0 >> (8u * NF_LINK_HDR_ACK_OFF)) & 0xFFu))
        link_state.rto_stamp_due = 1;
    uint32_t free_slots = fw_cfg.tx_slots - link_state.tx_inflight - tx_frame.open;
    if (FW_UNLIKELY(free_slots < len / NF_MSG_HDR_SIZE)) {
        uint32_t mlen = (m0 >> (8u * NF_MSG_HDR_LEN_OFF)) & 0xFFFFu;
        /* fw_msg_single, read from the window already at hand */
        if (!free_slots || !(mlen >= len || mlen < NF_MSG_HDR_SIZE || mlen % 8u))
            return rx_frame_slow(ready, w0, w1);
    }
    return rx_frame_run(len, m0);
}
