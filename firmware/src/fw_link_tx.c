/* SPDX-License-Identifier: Apache-2.0 */
/* Link protocol, board side (docs/architecture.md "The link"): go-back-N receive from
 * the RX slots, cumulative acks, a window of TX slots with retransmission, RESET.
 * Hardware does the framing, CRC and stuffing; this file only moves slot indices,
 * sequence numbers and headers.
 * Layer: called by fw_main; calls the message layer (fw_msg) with each frame's context,
 * fw_tables (RESET) and fw_state. The layers below reach the transmit window only
 * through the reply cursor this file puts in that context (reply_ops). */
#include "fw_link.h"
#include "fw_frame.h"
#include "fw_msg.h"
#include "fw_state.h"
#include "fw_tables.h"
#include "hal.h"

/* Retransmission timeout: the time the unacknowledged frames plus a full RX window of
 * host frames (an ack may queue behind them) take on the UART, counting 10 bits per
 * byte (start, 8 data, stop) and doubling for worst-case byte stuffing, plus a floor
 * for host-side latency (USB latency timer, scheduling). */
#define UART_BITS_PER_BYTE 10u
#define STUFFING_FACTOR 2u
#define RTO_MAX 0x7FFFFFFFu      /* cycle differences are compared mod 2^32 */
/* Reply batching on a lossy line: a frame survives a per-byte error rate p with
 * probability (1-p)^len, which falls fast with len, so every retransmission halves the
 * payload the board batches replies up to, and a run of clean acks doubles it again
 * (the host does the same for its frames). A single reply larger than the cap still
 * gets a frame of its own. */
#define TX_CAP_MIN 128u
#define TX_CAP_GROW_AFTER 16u
/* Pure ACKs naming the oldest unacknowledged frame that make the board go back at
 * once: the host sends one out of turn only on a sign of a lost board frame (a frame
 * that failed its CRC, a frame after a gap). */
#define DUP_ACKS_FOR_FAST_RETRANSMIT 2u
#define NO_SEQ 0x100u /* a value no 8-bit sequence number has */

/* The transmit window's open frame, which the reply cursor (reply_ops) fills: what the
 * layers above reserve goes there, and the link posts it once the received frame is done. */
static struct {
    uint32_t open;   /* a frame is being filled in the slot after the in-flight ones */
    uint32_t len;    /* payload bytes in it so far (0 with none open) */
    uint32_t addr;   /* payload address of that slot */
    uint32_t zeroed; /* bytes len .. zeroed at addr are known zero (the link's idle zeroing) */
} tx_frame;

/* The link's state: receive slots, the transmit window and its retransmission. */
static struct {
    uint32_t rx_next;           /* next RX slot to look at (the hardware fills them in ring order) */
    uint32_t rx_bit;            /* 1 << rx_next: the idle loop's whole test of RX_READY */
    uint32_t rx_stamp;          /* bus address of rx_next's RX_STAMP */
    hal_win rx_win;             /* window onto rx_next's slot (both: one load each per frame) */
    uint32_t rx_hdr;            /* the first half-word of the header of the DATA frame we accept
                                 * next: type DATA, seq rx_expect (one compare per frame) */
    uint8_t tx_seq;             /* seq of the next DATA frame we post */
    uint8_t ack_owed;           /* a DATA frame arrived since we last told the host rx_expect */
    /* The unacknowledged frames are the tx_inflight ones before tx_seq, in the slots before
     * tx_open (ring order): the oldest's seq and slot follow (tx_una, tx_first), so an ack
     * only lowers tx_inflight. */
    uint32_t tx_inflight;       /* unacknowledged frames */
    uint32_t tx_open;           /* TX slot after the in-flight ones: the open frame's, or the next */
    uint32_t maybe_busy;        /* TX slots that may still be sending (RESET_ACK, retransmitted copies) */
    uint32_t rto_start;         /* cycle the oldest unacknowledged frame was (re)sent */
    uint32_t rto_stamp_due;     /* rto_start is to become rx_next's RX_STAMP (rx_frame's ack) */
    /* The RTO takes 64-bit multiplies (shifts and adds on rv32i): it is computed only
     * when the oldest frame has waited rto_min, the RTO with nothing in flight (every
     * RTO is at least that), and then kept until an ack or a new frame changes it; so are
     * the bytes in flight it covers (summed from tx_len then, not kept per ack). */
    uint32_t rto;               /* retransmission timeout for the frames in flight now */
    uint32_t rto_valid;         /* rto matches the frames in flight */
    uint32_t rto_min;           /* RTO with no bytes in flight */
    uint32_t rto_floor;         /* host-side latency allowance, cycles */
    uint32_t tx_cap;            /* batch replies into frames up to this payload */
    uint32_t cap_saved;         /* nonzero: tx_cap to restore at the next ack */
    uint32_t cap_adjust;        /* tx_cap is below MAX_PAYLOAD or cap_saved is set: the
                                 * only thing an ack on a clean line tests */
    uint32_t clean_acks;        /* frames acknowledged since the last retransmission */
    uint32_t dup_acks;          /* pure ACKs in a row naming tx_una while frames are out */
    uint32_t rexmit_una;        /* tx_una at the last retransmission (NO_SEQ: none): while
                                 * it has not moved, repeated acks are the host seeing our
                                 * own resent copies, not a new loss */
    uint32_t peeked;            /* RX slots whose ack peek_acks already applied */
    uint32_t keep_free;         /* TX slots tx_room keeps free (an overflowing frame's rest) */
    uint32_t hold;              /* 0, or the head frame waits for TX room: 1 + offset of its
                                 * first message not run yet (1: none ran) */
    uint16_t tx_len[NF_LINK_MAX_SLOTS]; /* header + payload bytes of each TX slot's frame */
    /* The context of the frame being run (fw_frame.h): its reply cursor is set once at
     * init, so a new frame costs only its payload fields. */
    struct fw_frame frame;
} link_state;

static uint32_t rx_addr(uint32_t slot) { return slot * NF_LINK_SLOT_BYTES; }
/* Bus address of an RX slot's RX_STAMP register (its frame's arrival). */
static uint32_t rx_stamp_at(uint32_t slot) { return NF_LINK_BASE + NF_LINK_RX_STAMP0 + 4u * slot; }
/* The next DATA seq we accept, and its advance (mod 256). */
static uint32_t rx_expect(void) { return (link_state.rx_hdr >> (8u * NF_LINK_HDR_SEQ_OFF)) & 0xFFu; }
static void rx_expect_next(void)
{
    link_state.rx_hdr = (link_state.rx_hdr + (1u << (8u * NF_LINK_HDR_SEQ_OFF))) & 0xFFFFu;
}
static uint32_t tx_addr(uint32_t slot) { return (fw_cfg.rx_slots + slot) * NF_LINK_SLOT_BYTES; }
/* a + b within a ring of n slots (a, b < n): no division, which PicoRV32 does slowly */
static uint32_t ring_add(uint32_t a, uint32_t b, uint32_t n)
{
    uint32_t r = a + b;
    return r >= n ? r - n : r;
}
/* The oldest unacknowledged frame: its TX slot and its seq. */
static uint32_t tx_first(void) { return ring_add(link_state.tx_open, fw_cfg.tx_slots - link_state.tx_inflight, fw_cfg.tx_slots); }
static uint32_t tx_una(void) { return (uint8_t)(link_state.tx_seq - link_state.tx_inflight); }

static uint32_t hdr_word0(uint32_t type, uint32_t seq, uint32_t ack)
{
    return type << (8u * NF_LINK_HDR_TYPE_OFF) | seq << (8u * NF_LINK_HDR_SEQ_OFF) |
           ack << (8u * NF_LINK_HDR_ACK_OFF);
}

static uint32_t hdr_word1(uint32_t len, uint32_t rsvd)
{
    return len << (8u * (NF_LINK_HDR_LEN_OFF - 4u)) | rsvd << (8u * (NF_LINK_HDR_RSVD_OFF - 4u));
}

/* A new slot opens, or bytes a caller may have written are given back: nothing past
 * the frame's end is known zero any more (until the next idle tx_zero_ahead). */
static void tx_zeroed_lost(void) { tx_frame.zeroed = 0; }

/* The oldest unacknowledged frame's timer runs from cycle at (a send, a retransmission,
 * or an ack's arrival); a restart rx_frame left pending is overtaken. */
static void rto_restart(uint32_t at)
{
    link_state.rto_start = at;
    link_state.rto_stamp_due = 0;
}

/* Wait until the TX slots in mask have finished sending. Bounded: a queue of TX_SLOTS
 * frames of SLOT_BYTES, 10 bits per byte, stuffing doubling it, takes at most
 * tx_drain_max cycles (fw_link_init); past that the link hardware is faulty: count
 * it and go on (a frame posted into a slot still sending is ignored by the hardware
 * and recovered by retransmission). */
static uint32_t tx_drain_max;
static FW_COLD void tx_wait_idle(uint32_t mask)
{
    uint32_t t0 = hal_cycles();
    while (link_rd(NF_LINK_TX_BUSY) & mask) {
        if (hal_cycles() - t0 > tx_drain_max) {
            fw_stats.wait_timeouts++;
            return;
        }
    }
}

static void tx_post(uint32_t slot, uint32_t len)
{
    link_wr(NF_LINK_TX_POST, NF_TX_POST_SLOT_PUT(slot) | NF_TX_POST_LEN_PUT(len));
}

static FW_COLD uint32_t rto_compute(void)
{
    uint32_t bytes = fw_cfg.rx_slots * NF_LINK_SLOT_BYTES; /* slots x 4 KiB: a shift */
    for (uint32_t k = 0; k < link_state.tx_inflight; k++)
        bytes += link_state.tx_len[ring_add(tx_first(), k, fw_cfg.tx_slots)];
    uint64_t cycles = fw_mul64(bytes * UART_BITS_PER_BYTE * STUFFING_FACTOR, fw_cfg.uart_period) >>
                      NF_SOC_UART_PERIOD_FRAC;
    cycles += link_state.rto_floor;
    return cycles > RTO_MAX ? RTO_MAX : (uint32_t)cycles;
}

/* Has the oldest unacknowledged frame waited its RTO? */
static int rto_expired(void)
{
    uint32_t waited = hal_cycles() - link_state.rto_start;
    if (waited < link_state.rto_min)
        return 0;
    if (!link_state.rto_valid) {
        link_state.rto = rto_compute();
        link_state.rto_valid = 1;
    }
    return waited >= link_state.rto;
}

static FW_HOT void tx_flush(void)
{
    if (!tx_frame.open)
        return;
    uint32_t slot = link_state.tx_open;
    uint32_t a = tx_addr(slot);
    mem_wr(a, hdr_word0(NF_LINK_TYPE_DATA, link_state.tx_seq, rx_expect()));
    mem_wr(a + 4u, hdr_word1(tx_frame.len, 0));
    tx_post(slot, NF_LINK_HDR_SIZE + tx_frame.len);
    link_state.tx_len[slot] = (uint16_t)(NF_LINK_HDR_SIZE + tx_frame.len);
    if (link_state.tx_inflight == 0)
        rto_restart(hal_cycles());
    link_state.tx_inflight++;
    slot = ring_add(slot, 1u, fw_cfg.tx_slots);
    link_state.tx_open = slot;
    tx_frame.addr = tx_addr(slot) + NF_LINK_HDR_SIZE;
    link_state.rto_valid = 0;
    link_state.tx_seq++;
    tx_frame.open = 0;
    tx_frame.len = 0;
    link_state.ack_owed = 0;
    tx_zeroed_lost();
}

/* Zero bytes (a multiple of 4) of a TX slot at adapter address at. */
static inline void tx_zero(uint32_t at, uint32_t bytes)
{
    hal_win w = mem_win(at);
    for (uint32_t off = 0; off < bytes; off += 4u)
        win_wr(w, off, 0);
}

/* Zero the next frame's first bytes while idle (fw_link_poll), for reserve_zeroed: only
 * in a slot that holds no unacknowledged frame and is not still sending. */
static FW_HOT void tx_zero_ahead(void)
{
    if (tx_frame.open || link_state.tx_inflight >= fw_cfg.tx_slots || (link_state.maybe_busy & (1u << link_state.tx_open)))
        return;
    tx_zero(tx_frame.addr, FW_REPLY_ZERO_AHEAD);
    tx_frame.zeroed = FW_REPLY_ZERO_AHEAD;
}

/* fw_tx_reserve when the open frame is full or a slot may be busy: flush, then open. */
static FW_COLD uint32_t tx_reserve_slow(uint32_t bytes)
{
    if (bytes > NF_LINK_MAX_PAYLOAD)
        return 0;
    tx_flush();
    if (link_state.tx_inflight >= fw_cfg.tx_slots) {
        fw_stats.tx_overflow++;
        return 0;
    }
    uint32_t slot = link_state.tx_open;
    /* An acknowledged frame has left the UART (the host saw its closing flag), so only
     * a slot that was posted again after its ack, or that held RESET_ACK, can be busy. */
    if (link_state.maybe_busy & (1u << slot)) {
        tx_wait_idle(1u << slot);
        link_state.maybe_busy &= ~(1u << slot);
    }
    tx_frame.open = 1;
    tx_frame.len = bytes;
    tx_zeroed_lost();
    return tx_frame.addr;
}

/* The reply cursor's reserve (fw_frame.h). Named for the profiler (bench/fwprof.cpp).
 * Every test here implies bytes <= MAX_PAYLOAD (tx_cap is at most that); the slow path
 * checks it. */
static FW_HOT uint32_t fw_tx_reserve(uint32_t bytes)
{
    if (__builtin_expect(!tx_frame.open, 1)) {
        /* The usual case for a reply: no open frame, a free slot, no slot still sending.
         * One test of the three (&, not &&): their loads issue together, one branch. */
        if (FW_LIKELY((link_state.maybe_busy == 0) & (link_state.tx_inflight < fw_cfg.tx_slots) & (bytes <= NF_LINK_MAX_PAYLOAD))) {
            tx_frame.open = 1;
            tx_frame.len = bytes;
            return tx_frame.addr;
        }
    } else {
        uint32_t at = tx_frame.len;
        if (at + bytes <= link_state.tx_cap) {
            tx_frame.len = at + bytes;
            return tx_frame.addr + at;
        }
    }
    return tx_reserve_slow(bytes);
}

/* The reply cursor's reserve_zeroed: within the bytes tx_zero_ahead cleared, the open
 * frame grows in slot tx_open with no test of the cap or the slot (the zeroed bytes fit
 * under any cap, and tx_zero_ahead zeroes only a free slot, which nothing fills or sends
 * before it is flushed); past them, a reserve, zeroed here. */
static FW_HOT uint32_t tx_reserve_zeroed(uint32_t bytes)
{
    uint32_t at = tx_frame.len, end = at + bytes;
    if (FW_LIKELY(end <= tx_frame.zeroed)) {
        tx_frame.open = 1;
        tx_frame.len = end;
        return tx_frame.addr + at;
    }
    at = fw_tx_reserve(bytes);
    if (at)
        tx_zero(at, bytes);
    return at;
}
_Static_assert(FW_REPLY_ZERO_AHEAD <= TX_CAP_MIN, "the zeroed bytes fit a frame under any cap");

static FW_HOT int tx_room(uint32_t bytes)
{
    /* What fw_tx_reserve does: append to the open frame under the cap, else a new frame
     * in a free slot after the in-flight ones and the open one. */
    if (tx_frame.open && tx_frame.len + bytes <= link_state.tx_cap)
        return 1;
    return link_state.tx_inflight + tx_frame.open + link_state.keep_free < fw_cfg.tx_slots;
}

static void tx_spare(void)
{
    link_state.keep_free = 0;
}

static void tx_trim(uint32_t bytes)
{
    if (tx_frame.open && bytes <= tx_frame.len) {
        tx_frame.len -= bytes;
        tx_zeroed_lost();
    }
}

static const struct fw_reply_ops reply_ops = {fw_tx_reserve, tx_reserve_zeroed, tx_room, tx_trim, tx_spare};

void fw_link_frame(struct fw_frame *f, uint32_t addr, uint32_t len, uint32_t slot)
{
    *f = (struct fw_frame){addr, len, rx_stamp_at(slot), fw_eng_wait_cycles(), 0, len, reply_ops};
}

/* An ack while the cap is adjusted (out of line: a clean line only tests cap_adjust).
 * A cap lifted for one host frame's replies (replies_fit_capped) comes back first. */
static FW_COLD void tx_cap_acked(uint32_t acked)
{
    if (link_state.cap_saved) {
        link_state.tx_cap = link_state.cap_saved;
        link_state.cap_saved = 0;
    }
    link_state.clean_acks += acked;
    if (link_state.clean_acks >= TX_CAP_GROW_AFTER) {
        link_state.clean_acks = 0;
        link_state.tx_cap = link_state.tx_cap * 2u >= NF_LINK_MAX_PAYLOAD ? NF_LINK_MAX_PAYLOAD : link_state.tx_cap * 2u;
    }
    link_state.cap_adjust = link_state.tx_cap < NF_LINK_MAX_PAYLOAD;
}

/* An ack: the in-flight frames it acknowledges are done; nonzero when there were any
 * (the RTO then restarts from the ack's arrival, its frame's RX stamp). Inline: every
 * DATA frame carries one. */
static inline uint32_t tx_ack(uint32_t ack)
{
    uint32_t inflight = link_state.tx_inflight;
    uint32_t n = (uint8_t)(ack - link_state.tx_seq + inflight); /* frames it acknowledges */
    if (n - 1u >= inflight)
        return 0; /* none, old or impossible: cumulative acks make it harmless to ignore */
    link_state.tx_inflight = inflight - n;
    link_state.rto_valid = 0;
    if (link_state.cap_adjust) /* a constant 0 in rx_frame, which sends such frames to rx_frame_slow */
        tx_cap_acked(n);
    return n;
}

/* tx_ack for the rare paths, the ack's arrival read at once: one copy out of line. */
static FW_COLD void tx_ack_slow(uint32_t ack, uint32_t slot)
{
    if (tx_ack(ack))
        rto_restart(hal_read32(rx_stamp_at(slot)));
}

/* Rare (out of line, so the receive loop keeps its registers to itself). */
static FW_COLD int tx_retransmit(void)
{
    /* Go-back-N: every unacknowledged frame again, oldest first, each with a fresh ack.
     * A frame still queued from the last round goes out anyway; it is not posted twice. */
    uint32_t busy = link_rd(NF_LINK_TX_BUSY);
    for (uint32_t k = 0; k < link_state.tx_inflight; k++) {
        uint32_t slot = ring_add(tx_first(), k, fw_cfg.tx_slots);
        if (busy & (1u << slot))
            continue;
        mem_wr(tx_addr(slot), hdr_word0(NF_LINK_TYPE_DATA, (uint8_t)(tx_una() + k), rx_expect()));
        tx_post(slot, link_state.tx_len[slot]);
        link_state.maybe_busy |= 1u << slot;
        fw_stats.retransmits++;
    }
    rto_restart(hal_cycles());
    link_state.ack_owed = 0;
    link_state.dup_acks = 0;
    link_state.rexmit_una = tx_una();
    link_state.clean_acks = 0;
    if (link_state.cap_saved) {
        link_state.tx_cap = link_state.cap_saved;
        link_state.cap_saved = 0;
    }
    if (link_state.tx_cap / 2u >= TX_CAP_MIN)
        link_state.tx_cap /= 2u;
    link_state.cap_adjust = link_state.tx_cap < NF_LINK_MAX_PAYLOAD;
    return 1;
}

/* A pure ACK that acknowledges nothing new (rare: only after a loss). */
static FW_COLD void dup_ack(uint32_t slot)
{
    if (link_state.peeked & (1u << slot)) {
        link_state.peeked &= ~(1u << slot); /* its ack was applied early, it repeats nothing */
        return;
    }
    if (link_state.tx_inflight == 0 || tx_una() == link_state.rexmit_una)
        return;
    if (++link_state.dup_acks >= DUP_ACKS_FOR_FAST_RETRANSMIT) {
        tx_retransmit();
    }
}

static int tx_retransmit_due(void)
{
    if (link_state.tx_inflight == 0 || !rto_expired())
        return 0;
    return tx_retransmit();
}

static FW_COLD void link_state_reset(void)
{
    link_state.rx_hdr = NF_LINK_TYPE_DATA << (8u * NF_LINK_HDR_TYPE_OFF); /* seq 0 */
    link_state.tx_seq = 0;
    link_state.ack_owed = 0;
    link_state.tx_open = 0;
    link_state.tx_inflight = 0;
    link_state.rto_stamp_due = 0;
    tx_frame.addr = tx_addr(0) + NF_LINK_HDR_SIZE;
    tx_zeroed_lost();
    link_state.rto_valid = 0;
    tx_frame.open = 0;
    tx_frame.len = 0;
    link_state.tx_cap = NF_LINK_MAX_PAYLOAD;
    link_state.cap_saved = 0;
    link_state.cap_adjust = 0;
    link_state.clean_acks = 0;
    link_state.dup_acks = 0;
    link_state.rexmit_una = NO_SEQ;
    link_state.peeked = 0;
    link_state.hold = 0;
    link_state.keep_free = 0;
}

/* RESET from the host: wipe the adapter, restart both sequences, answer RESET_ACK with
 * the host's nonce and INFO. Frames still queued from the old session go out first,
 * so the host (which ignores everything until its RESET_ACK) never takes them as new. */
static FW_COLD void link_reset(uint32_t nonce)
{
    fw_rng_seed(nonce << 16 ^ hal_cycles()); /* keys differ per adapter session */
    fw_tables_reset();
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

/* Look at slot next: what rx_frame needs of it, worked out before the frame lands. */
static void rx_next_at(uint32_t slot)
{
    link_state.rx_next = slot;
    link_state.rx_bit = 1u << slot;
    link_state.rx_stamp = rx_stamp_at(slot);
    link_state.rx_win = mem_win(rx_addr(slot));
    link_state.frame.addr = rx_addr(slot) + NF_LINK_HDR_SIZE;
    sys_wr(NF_SYS_WAKE_RX, link_state.rx_bit); /* the idle loop's SLEEP ends when it fills */
}

FW_COLD void fw_link_init(void)
{
    fw_link_frame(&link_state.frame, 0, 0, 0);
    link_state_reset();
    link_state.maybe_busy = 0;
    /* the host's turnaround too: clk_hz / 1000 (times 2^41 / 1000 rounded up, then
     * shifted: exact for every 32-bit clk_hz) milliseconds' worth */
    link_state.rto_floor = (uint32_t)(fw_mul64(fw_cfg.clk_hz, 2199023256u) >> 41) * NF_LINK_TURNAROUND_MS;
    link_state.rto_min = rto_compute(); /* no bytes in flight yet */
    /* every TX slot full of stuffed bytes on the UART, twice over, plus the RTO floor */
    tx_drain_max = (uint32_t)(fw_mul64(fw_cfg.tx_slots * NF_LINK_SLOT_BYTES * UART_BITS_PER_BYTE * STUFFING_FACTOR * 2u,
                                       fw_cfg.uart_period) >> NF_SOC_UART_PERIOD_FRAC) + link_state.rto_floor;
    link_state.rx_next = 0;
    link_state.rx_bit = 1u;
    rx_next_at(0);
}

uint32_t fw_link_rto(void)
{
    return rto_compute();
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
static FW_HOT int rx_frame(uint32_t ready)
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

/* All the work of one poll after its first frame (ready: RX_READY as read after it;
 * 0 when that frame must wait), or the timer, or a pending send. */
static FW_HOT int link_work(uint32_t ready)
{
    while (ready & link_state.rx_bit) {
        if (!rx_frame(ready))
            break;
        ready = link_rd(NF_LINK_RX_READY);
    }
    /* The timer after the RX slots: a frame that arrived is noticed a few instructions
     * sooner, and the acks it carried may already have made a retransmission moot. */
    int did = tx_retransmit_due();
    /* No more work in the RX slots: send what was batched, or at least the ack. */
    if (FW_LIKELY(tx_frame.open)) {
        tx_flush();
        did = 1;
    } else if (link_state.ack_owed) {
        link_wr(NF_LINK_TX_ACK, rx_expect());
        link_state.ack_owed = 0;
        did = 1;
    }
    return did;
}

/* The longest sleep with no frame in flight, in cycles: every wait has a deadline, and
 * the loop looks round between two. */
#define IDLE_SLEEP_MAX (1u << 30)

FW_HOT int fw_link_poll(void)
{
    /* Idle: nothing in the next RX slot, nothing to send, no timer due. The CPU sleeps on
     * SYS.SLEEP until a frame lands in the next RX slot (WAKE_RX, set by rx_next_at) or
     * the oldest unacknowledged frame's RTO may have expired (WAKE_AT); the read answers
     * in the clock after the frame lands, so nothing waits on the loop. link_work always
     * leaves nothing open and no ack owed, so the sleep is the usual case. The host build
     * returns after one look (its test bench feeds the next frame between polls; its
     * model's SLEEP does not wait). */
    uint32_t bit = link_state.rx_bit;
    if (!tx_frame.open && !link_state.ack_owed) {
        if (!tx_frame.zeroed)
            tx_zero_ahead();
        for (;;) {
            /* the RTO once rto_expired has worked it out, else its floor rto_min */
            uint32_t rto_wait = link_state.rto_valid ? link_state.rto : link_state.rto_min;
            sys_wr(NF_SYS_WAKE_AT, link_state.tx_inflight != 0 ? link_state.rto_start + rto_wait : hal_cycles() + IDLE_SLEEP_MAX);
            uint32_t ready = sys_rd(NF_SYS_SLEEP);
            /* Likely: a frame ends the sleep, and its path then falls through instead of
             * taking the loop's backward branch, which VexRiscv predicts taken. */
            if (FW_LIKELY(ready & bit)) {
                /* the frame first, then the rest (0: it waits, no more frames now) */
                if (FW_UNLIKELY(!rx_frame(ready)))
                    return link_work(0);
                (void)link_work(link_rd(NF_LINK_RX_READY));
                return 1;
            }
            if (link_state.tx_inflight != 0 && hal_cycles() - link_state.rto_start >= rto_wait)
                break;
#ifdef NF_HOST_BUILD
            return 0;
#endif
        }
    }
    return link_work(link_rd(NF_LINK_RX_READY));
}
