/* SPDX-License-Identifier: Apache-2.0 */
/* Link protocol, board side: the transmit window (fw_link_int.h). DATA frames occupy TX
 * slots as a ring, replies are batched into one open frame through the reply cursor
 * (reply_ops), cumulative acks free slots, go-back-N retransmission on the RTO or on
 * repeated pure ACKs. Called by fw_link.c and fw_link_rx.c; calls fw_state and hal. */
#include "fw_frame.h"
#include "fw_link.h"
#include "fw_link_int.h"
#include "fw_state.h"
#include "fw_tables.h"
#include "hal.h"

#define RTO_MAX 0x7FFFFFFFu /* cycle differences are compared mod 2^32 */
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

struct link_tx_frame tx_frame;
struct link_state link_state;

/* A new slot opens, or bytes a caller may have written are given back: nothing past
 * the frame's end is known zero any more (until the next idle tx_zero_ahead). */
static void tx_zeroed_lost(void) { tx_frame.zeroed = 0; }

/* Wait until the TX slots in mask have finished sending. Bounded: a queue of TX_SLOTS
 * frames of SLOT_BYTES, 10 bits per byte, stuffing doubling it, takes at most
 * tx_drain_max cycles (fw_link_init); past that the link hardware is faulty: count
 * it and go on (a frame posted into a slot still sending is ignored by the hardware
 * and recovered by retransmission). */
FW_COLD void tx_wait_idle(uint32_t mask)
{
    uint32_t t0 = hal_cycles();
    while (link_rd(NF_LINK_TX_BUSY) & mask) {
        if (hal_cycles() - t0 > link_state.tx_drain_max) {
            fw_stats.wait_timeouts++;
            return;
        }
    }
}

FW_COLD uint32_t rto_compute(void)
{
    uint32_t bytes = fw_cfg.rx_slots * NF_LINK_SLOT_BYTES; /* slots x 4 KiB: a shift */
    for (uint32_t k = 0; k < link_state.tx_inflight; k++)
        bytes += link_state.tx_len[ring_add(tx_first(), k, fw_cfg.tx_slots)];
    uint64_t cycles = fw_mul64(bytes * UART_BITS_PER_BYTE * STUFFING_FACTOR, fw_cfg.uart_period) >>
                      NF_SOC_UART_PERIOD_FRAC;
    cycles += link_state.rto_floor;
    return cycles > RTO_MAX ? RTO_MAX : (uint32_t)cycles;
}

FW_HOT void tx_flush(void)
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

const struct fw_reply_ops *fw_link_events(void)
{
    return &reply_ops;
}

void fw_link_frame(struct fw_frame *f, uint32_t addr, uint32_t len, uint32_t slot)
{
    *f = (struct fw_frame){addr, len, rx_stamp_at(slot), fw_eng_wait_cycles(), 0, len, reply_ops};
}

/* An ack while the cap is adjusted (out of line: a clean line only tests cap_adjust).
 * A cap lifted for one host frame's replies (replies_fit_capped) comes back first. */
FW_COLD void tx_cap_acked(uint32_t acked)
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

/* tx_ack for the rare paths, the ack's arrival read at once: one copy out of line. */
FW_COLD void tx_ack_slow(uint32_t ack, uint32_t slot)
{
    if (tx_ack(ack))
        rto_restart(hal_read32(rx_stamp_at(slot)));
}

/* Rare (out of line, so the receive loop keeps its registers to itself). */
FW_COLD int tx_retransmit(void)
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
FW_COLD void dup_ack(uint32_t slot)
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

/* Both sequences restart at 0, nothing held, nothing in flight (boot, a host's RESET). */
FW_COLD void link_state_reset(void)
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
