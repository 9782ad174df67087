/* SPDX-License-Identifier: Apache-2.0 */
/* What the three files of the link share: fw_link.c (life, init, the idle poll),
 * fw_link_rx.c (RX slots, frame sorting, holds, RESET) and fw_link_tx.c (the TX window,
 * the reply cursor, acks, retransmission). Calls go one way: fw_link -> rx -> tx. */
#ifndef FW_LINK_INT_H
#define FW_LINK_INT_H

#include <stdint.h>

#include "fw_frame.h"
#include "fw_state.h"
#include "hal.h"
#include "nf_layout.h"

/* Retransmission timeout: the time the unacknowledged frames plus a full RX window of
 * host frames (an ack may queue behind them) take on the UART, counting 10 bits per
 * byte (start, 8 data, stop) and doubling for worst-case byte stuffing. */
#define UART_BITS_PER_BYTE 10u
#define STUFFING_FACTOR 2u
#define NO_SEQ 0x100u /* a value no 8-bit sequence number has */

/* The transmit window's open frame, which the reply cursor fills: what the layers above
 * reserve goes there, and the link posts it once the received frame is done. */
struct link_tx_frame {
    uint32_t open;   /* a frame is being filled in the slot after the in-flight ones */
    uint32_t len;    /* payload bytes in it so far (0 with none open) */
    uint32_t addr;   /* payload address of that slot */
    uint32_t zeroed; /* bytes len .. zeroed at addr are known zero (the link's idle zeroing) */
};
extern struct link_tx_frame tx_frame;

/* The link's state: receive slots, the transmit window and its retransmission. */
struct link_state {
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
    uint32_t tx_drain_max;      /* cycles the whole TX queue takes to drain at most (tx_wait_idle) */
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
};
extern struct link_state link_state;

static inline uint32_t rx_addr(uint32_t slot) { return slot * NF_LINK_SLOT_BYTES; }
/* Bus address of an RX slot's RX_STAMP register (its frame's arrival). */
static inline uint32_t rx_stamp_at(uint32_t slot) { return NF_LINK_BASE + NF_LINK_RX_STAMP0 + 4u * slot; }
/* The next DATA seq we accept. */
static inline uint32_t rx_expect(void) { return (link_state.rx_hdr >> (8u * NF_LINK_HDR_SEQ_OFF)) & 0xFFu; }
static inline uint32_t tx_addr(uint32_t slot) { return (fw_cfg.rx_slots + slot) * NF_LINK_SLOT_BYTES; }
/* a + b within a ring of n slots (a, b < n): no division, which PicoRV32 does slowly */
static inline uint32_t ring_add(uint32_t a, uint32_t b, uint32_t n)
{
    uint32_t r = a + b;
    return r >= n ? r - n : r;
}
/* The oldest unacknowledged frame: its TX slot and its seq. */
static inline uint32_t tx_first(void)
{
    return ring_add(link_state.tx_open, fw_cfg.tx_slots - link_state.tx_inflight, fw_cfg.tx_slots);
}
static inline uint32_t tx_una(void) { return (uint8_t)(link_state.tx_seq - link_state.tx_inflight); }

static inline uint32_t hdr_word0(uint32_t type, uint32_t seq, uint32_t ack)
{
    return type << (8u * NF_LINK_HDR_TYPE_OFF) | seq << (8u * NF_LINK_HDR_SEQ_OFF) |
           ack << (8u * NF_LINK_HDR_ACK_OFF);
}
static inline uint32_t hdr_word1(uint32_t len, uint32_t rsvd)
{
    return len << (8u * (NF_LINK_HDR_LEN_OFF - 4u)) | rsvd << (8u * (NF_LINK_HDR_RSVD_OFF - 4u));
}

static inline void tx_post(uint32_t slot, uint32_t len)
{
    link_wr(NF_LINK_TX_POST, NF_TX_POST_SLOT_PUT(slot) | NF_TX_POST_LEN_PUT(len));
}

/* Zero bytes (a multiple of 4) of a TX slot at adapter address at. */
static inline void tx_zero(uint32_t at, uint32_t bytes)
{
    hal_win w = mem_win(at);
    for (uint32_t off = 0; off < bytes; off += 4u)
        win_wr(w, off, 0);
}

/* The oldest unacknowledged frame's timer runs from cycle at (a send, a retransmission,
 * or an ack's arrival); a restart rx_frame left pending is overtaken. */
static inline void rto_restart(uint32_t at)
{
    link_state.rto_start = at;
    link_state.rto_stamp_due = 0;
}

/* fw_link_tx.c, called by the receive side and the idle poll. */
void tx_cap_acked(uint32_t acked);
uint32_t rto_compute(void);
void tx_wait_idle(uint32_t mask);
void tx_flush(void);
int tx_retransmit(void);
void tx_ack_slow(uint32_t ack, uint32_t slot);
void dup_ack(uint32_t slot);
void link_state_reset(void);

/* An ack: the in-flight frames it acknowledges are done; nonzero when there were any
 * (the RTO then restarts from the ack's arrival, its frame's RX stamp). Inline: every
 * DATA frame carries one, and rx_frame tests it on the way to the frame's requests. */
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

/* fw_link_rx.c, called by the idle poll. */
int rx_frame(uint32_t ready);

/* Look at slot next: what rx_frame needs of it, worked out before the frame lands. */
static inline void rx_next_at(uint32_t slot)
{
    link_state.rx_next = slot;
    link_state.rx_bit = 1u << slot;
    link_state.rx_stamp = rx_stamp_at(slot);
    link_state.rx_win = mem_win(rx_addr(slot));
    link_state.frame.addr = rx_addr(slot) + NF_LINK_HDR_SIZE;
    sys_wr(NF_SYS_WAKE_RX, link_state.rx_bit); /* the idle loop's SLEEP ends when it fills */
}

#endif
