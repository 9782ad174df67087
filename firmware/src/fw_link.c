/* SPDX-License-Identifier: Apache-2.0 */
/* Link protocol, board side (docs/architecture.md "The link"): its life and the idle
 * poll. Hardware does the framing, CRC and stuffing; the link only moves slot indices,
 * sequence numbers and headers, in three files (fw_link_int.h): this one, which calls the
 * receive side (fw_link_rx.c), which calls the transmit side (fw_link_tx.c). Called by
 * fw_main. The layers below reach the transmit window only through the reply cursor
 * (fw_frame.h) the link puts in each frame's context. */
#include "fw_link.h"
#include "fw_link_int.h"
#include "fw_state.h"
#include "hal.h"

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
    link_state.tx_drain_max = (uint32_t)(fw_mul64(fw_cfg.tx_slots * NF_LINK_SLOT_BYTES * UART_BITS_PER_BYTE * STUFFING_FACTOR * 2u,
                                                  fw_cfg.uart_period) >> NF_SOC_UART_PERIOD_FRAC) +
                              link_state.rto_floor;
    link_state.rx_next = 0;
    link_state.rx_bit = 1u;
    rx_next_at(0);
}

uint32_t fw_link_rto(void)
{
    return rto_compute();
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

/* Zero the next frame's first bytes while idle (fw_link_poll), for reserve_zeroed: only
 * in a slot that holds no unacknowledged frame and is not still sending. */
static FW_HOT void tx_zero_ahead(void)
{
    if (tx_frame.open || link_state.tx_inflight >= fw_cfg.tx_slots || (link_state.maybe_busy & (1u << link_state.tx_open)))
        return;
    tx_zero(tx_frame.addr, FW_REPLY_ZERO_AHEAD);
    tx_frame.zeroed = FW_REPLY_ZERO_AHEAD;
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
    int did = link_state.tx_inflight != 0 && rto_expired() ? tx_retransmit() : 0;
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

/* The longest sleep with no frame in flight, in cycles, unless the caller asks for a
 * shorter one (fw_link_idle_max): every wait has a deadline. */
#define IDLE_SLEEP_MAX (1u << 30)
static uint32_t idle_max = IDLE_SLEEP_MAX;

void fw_link_idle_max(uint32_t cycles)
{
    idle_max = cycles && cycles < IDLE_SLEEP_MAX ? cycles : IDLE_SLEEP_MAX;
}

FW_HOT int fw_link_poll(void)
{
    /* Idle: nothing in the next RX slot, nothing to send, no timer due. The CPU sleeps on
     * SYS.SLEEP until a frame lands in the next RX slot (WAKE_RX, set by rx_next_at), the
     * oldest unacknowledged frame's RTO may have expired or the idle sleep ends
     * (WAKE_AT), or another part of the adapter wakes it (SYS.WAKE_NET); the read answers
     * in the clock after the frame lands. link_work always leaves nothing open and no ack
     * owed, so the sleep is the usual case. A sleep that ends with no frame and no RTO due
     * returns 0: the caller gives the rest of the adapter its turn, then polls again. */
    uint32_t bit = link_state.rx_bit;
    if (!tx_frame.open && !link_state.ack_owed) {
        if (!tx_frame.zeroed)
            tx_zero_ahead();
        /* the RTO once rto_expired has worked it out, else its floor rto_min */
        uint32_t rto_wait = link_state.rto_valid ? link_state.rto : link_state.rto_min;
        sys_wr(NF_SYS_WAKE_AT, link_state.tx_inflight != 0 ? link_state.rto_start + rto_wait : hal_cycles() + idle_max);
        uint32_t ready = sys_rd(NF_SYS_SLEEP);
        if (FW_LIKELY(ready & bit)) {
            /* the frame first, then the rest (0: it waits, no more frames now) */
            if (FW_UNLIKELY(!rx_frame(ready)))
                return link_work(0);
            (void)link_work(link_rd(NF_LINK_RX_READY));
            return 1;
        }
        if (link_state.tx_inflight == 0 || hal_cycles() - link_state.rto_start < rto_wait)
            return 0;
    }
    return link_work(link_rd(NF_LINK_RX_READY));
}
