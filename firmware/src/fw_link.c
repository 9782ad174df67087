/* Link protocol, board side (docs/architecture.md "The link"): go-back-N receive from
 * the RX slots, cumulative acks, a window of TX slots with retransmission, RESET.
 * Hardware does the framing, CRC and stuffing; this file only moves slot indices,
 * sequence numbers and headers. */
#include "fw.h"
#include "hal.h"

/* Retransmission timeout: the time the unacknowledged frames plus a full RX window of
 * host frames (an ack may queue behind them) take on the UART, counting 10 bits per
 * byte (start, 8 data, stop) and doubling for worst-case byte stuffing, plus a floor
 * for host-side latency (USB latency timer, scheduling). */
#define UART_BITS_PER_BYTE 10u
#define STUFFING_FACTOR 2u
#define RTO_FLOOR_PER_SECOND 50u /* floor = 1/50 s = 20 ms of clock cycles */
#define RTO_MAX 0x7FFFFFFFu      /* cycle differences are compared mod 2^32 */

static struct {
    uint32_t rx_next;           /* next RX slot to look at (the hardware fills them in ring order) */
    uint8_t rx_expect;          /* next DATA seq we accept */
    uint8_t tx_seq;             /* seq of the next DATA frame we post */
    uint8_t tx_una;             /* seq of the oldest unacknowledged frame */
    uint8_t ack_owed;           /* a DATA frame arrived since we last told the host rx_expect */
    uint32_t tx_first;          /* TX slot of the oldest unacknowledged frame */
    uint32_t tx_inflight;       /* unacknowledged frames, in slots tx_first, tx_first + 1, ... */
    uint32_t inflight_bytes;
    uint32_t open;              /* a frame is being filled in the slot after the in-flight ones */
    uint32_t open_len;          /* payload bytes in it so far */
    uint32_t rto_start;         /* cycle the oldest unacknowledged frame was (re)sent */
    uint32_t rto;               /* retransmission timeout for the frames in flight now */
    uint32_t rto_floor;         /* host-side latency allowance, cycles */
    uint16_t tx_len[NF_LINK_MAX_SLOTS]; /* header + payload bytes of each TX slot's frame */
} L;

static uint32_t rx_addr(uint32_t slot) { return slot * NF_LINK_SLOT_BYTES; }
static uint32_t tx_addr(uint32_t slot) { return (fw_cfg.rx_slots + slot) * NF_LINK_SLOT_BYTES; }
/* a + b within a ring of n slots (a, b < n): no division, which PicoRV32 does slowly */
static uint32_t ring_add(uint32_t a, uint32_t b, uint32_t n)
{
    uint32_t r = a + b;
    return r >= n ? r - n : r;
}
static uint32_t open_slot(void) { return ring_add(L.tx_first, L.tx_inflight, fw_cfg.tx_slots); }

static uint32_t hdr_word0(uint32_t type, uint32_t seq, uint32_t ack)
{
    return type << (8u * NF_LINK_HDR_TYPE_OFF) | seq << (8u * NF_LINK_HDR_SEQ_OFF) |
           ack << (8u * NF_LINK_HDR_ACK_OFF);
}

static uint32_t hdr_word1(uint32_t len, uint32_t rsvd)
{
    return len << (8u * (NF_LINK_HDR_LEN_OFF - 4u)) | rsvd << (8u * (NF_LINK_HDR_RSVD_OFF - 4u));
}

static void tx_wait_idle(uint32_t mask)
{
    while (link_rd(NF_LINK_TX_BUSY) & mask)
        ;
}

static void tx_post(uint32_t slot, uint32_t len)
{
    link_wr(NF_LINK_TX_POST, NF_TX_POST_SLOT_PUT(slot) | NF_TX_POST_LEN_PUT(len));
}

static uint32_t rto_compute(void)
{
    uint64_t bytes = (uint64_t)L.inflight_bytes + (uint64_t)fw_cfg.rx_slots * NF_LINK_SLOT_BYTES;
    uint64_t cycles = (bytes * UART_BITS_PER_BYTE * STUFFING_FACTOR * fw_cfg.uart_period) >>
                      NF_SOC_UART_PERIOD_FRAC;
    cycles += L.rto_floor;
    return cycles > RTO_MAX ? RTO_MAX : (uint32_t)cycles;
}

static void tx_flush(void)
{
    if (!L.open)
        return;
    uint32_t slot = open_slot();
    uint32_t a = tx_addr(slot);
    mem_wr(a, hdr_word0(NF_LINK_TYPE_DATA, L.tx_seq, L.rx_expect));
    mem_wr(a + 4u, hdr_word1(L.open_len, 0));
    tx_post(slot, NF_LINK_HDR_SIZE + L.open_len);
    L.tx_len[slot] = (uint16_t)(NF_LINK_HDR_SIZE + L.open_len);
    if (L.tx_inflight == 0)
        L.rto_start = hal_cycles();
    L.tx_inflight++;
    L.inflight_bytes += NF_LINK_HDR_SIZE + L.open_len;
    L.rto = rto_compute();
    L.tx_seq++;
    L.open = 0;
    L.open_len = 0;
    L.ack_owed = 0;
}

uint32_t fw_tx_reserve(uint32_t bytes)
{
    if (bytes > NF_LINK_MAX_PAYLOAD)
        return 0;
    if (L.open && L.open_len + bytes <= NF_LINK_MAX_PAYLOAD) {
        uint32_t at = tx_addr(open_slot()) + NF_LINK_HDR_SIZE + L.open_len;
        L.open_len += bytes;
        return at;
    }
    tx_flush();
    if (L.tx_inflight >= fw_cfg.tx_slots) {
        fw_stats.tx_overflow++;
        return 0;
    }
    uint32_t slot = open_slot();
    /* A slot acknowledged while a retransmitted copy is still queued may be busy. */
    tx_wait_idle(1u << slot);
    L.open = 1;
    L.open_len = bytes;
    return tx_addr(slot) + NF_LINK_HDR_SIZE;
}

void fw_tx_trim(uint32_t bytes)
{
    if (L.open && bytes <= L.open_len)
        L.open_len -= bytes;
}

static void tx_ack(uint32_t ack)
{
    uint32_t n = (uint8_t)(ack - L.tx_una);
    if (n == 0 || n > L.tx_inflight)
        return; /* old or impossible ack: cumulative acks make it harmless to ignore */
    for (uint32_t k = 0; k < n; k++)
        L.inflight_bytes -= L.tx_len[ring_add(L.tx_first, k, fw_cfg.tx_slots)];
    L.tx_first = ring_add(L.tx_first, n, fw_cfg.tx_slots);
    L.tx_inflight -= n;
    L.tx_una = (uint8_t)ack;
    L.rto = rto_compute();
    L.rto_start = hal_cycles();
}

static int tx_retransmit_due(void)
{
    if (L.tx_inflight == 0 || hal_cycles() - L.rto_start < L.rto)
        return 0;
    /* Go-back-N: every unacknowledged frame again, oldest first, each with a fresh ack.
     * A frame still queued from the last round goes out anyway; it is not posted twice. */
    uint32_t busy = link_rd(NF_LINK_TX_BUSY);
    for (uint32_t k = 0; k < L.tx_inflight; k++) {
        uint32_t slot = ring_add(L.tx_first, k, fw_cfg.tx_slots);
        if (busy & (1u << slot))
            continue;
        mem_wr(tx_addr(slot), hdr_word0(NF_LINK_TYPE_DATA, (uint8_t)(L.tx_una + k), L.rx_expect));
        tx_post(slot, L.tx_len[slot]);
        fw_stats.retransmits++;
    }
    L.rto_start = hal_cycles();
    L.ack_owed = 0;
    return 1;
}

static void link_state_reset(void)
{
    L.rx_expect = 0;
    L.tx_seq = 0;
    L.tx_una = 0;
    L.ack_owed = 0;
    L.tx_first = 0;
    L.tx_inflight = 0;
    L.inflight_bytes = 0;
    L.open = 0;
    L.open_len = 0;
}

/* RESET from the host: wipe the adapter, restart both sequences, answer RESET_ACK with
 * the host's nonce and INFO. Frames still queued from the old session go out first,
 * so the host (which ignores everything until its RESET_ACK) never takes them as new. */
static void link_reset(uint32_t nonce)
{
    fw_tables_reset();
    link_state_reset();
    tx_wait_idle((1u << fw_cfg.tx_slots) - 1u);
    uint32_t a = tx_addr(0);
    fw_msg_put_info(a + NF_LINK_HDR_SIZE);
    mem_wr(a, hdr_word0(NF_LINK_TYPE_RESET_ACK, 0, 0));
    mem_wr(a + 4u, hdr_word1(NF_INFO_SIZE, nonce));
    tx_post(0, NF_LINK_HDR_SIZE + NF_INFO_SIZE);
}

/* Room for replies: bytes left in the open frame and whole free slots after it. */
static int replies_fit(uint32_t payload, uint32_t len)
{
    uint32_t free_open = L.open ? NF_LINK_MAX_PAYLOAD - L.open_len : 0;
    uint32_t free_slots = fw_cfg.tx_slots - L.tx_inflight - (L.open ? 1u : 0u);
    /* Fast path: every reply fits one frame, so a free slot per possible message is
     * enough without reading the messages. */
    if (free_slots >= len / NF_MSG_HDR_SIZE)
        return 1;
    return fw_msg_fits(payload, len, free_open, free_slots);
}

/* While the head frame waits for TX room, the acks that would make room may already
 * sit in later RX slots: apply them (acks are cumulative, so order does not matter). */
static void peek_acks(uint32_t ready)
{
    for (uint32_t k = 1; k < fw_cfg.rx_slots; k++) {
        uint32_t slot = ring_add(L.rx_next, k, fw_cfg.rx_slots);
        if (!(ready & (1u << slot)))
            break;
        uint32_t w0 = mem_rd(rx_addr(slot));
        uint32_t type = (w0 >> (8u * NF_LINK_HDR_TYPE_OFF)) & 0xFFu;
        if (type == NF_LINK_TYPE_DATA || type == NF_LINK_TYPE_ACK)
            tx_ack((w0 >> (8u * NF_LINK_HDR_ACK_OFF)) & 0xFFu);
    }
}

void fw_link_init(void)
{
    link_state_reset();
    L.rto_floor = fw_cfg.clk_hz / RTO_FLOOR_PER_SECOND;
    L.rx_next = 0;
}

int fw_link_poll(void)
{
    int did = tx_retransmit_due();
    uint32_t all_rx = (1u << fw_cfg.rx_slots) - 1u;
    uint32_t ready;
    while ((ready = link_rd(NF_LINK_RX_READY)) & (1u << L.rx_next)) {
        uint32_t slot = L.rx_next;
        uint32_t a = rx_addr(slot);
        uint32_t w0 = mem_rd(a), w1 = mem_rd(a + 4u);
        uint32_t type = (w0 >> (8u * NF_LINK_HDR_TYPE_OFF)) & 0xFFu;
        uint32_t seq = (w0 >> (8u * NF_LINK_HDR_SEQ_OFF)) & 0xFFu;
        uint32_t ack = (w0 >> (8u * NF_LINK_HDR_ACK_OFF)) & 0xFFu;
        uint32_t len = (w1 >> (8u * (NF_LINK_HDR_LEN_OFF - 4u))) & 0xFFFFu;
        uint32_t rsvd = (w1 >> (8u * (NF_LINK_HDR_RSVD_OFF - 4u))) & 0xFFFFu;
        if (type == NF_LINK_TYPE_DATA) {
            tx_ack(ack);
            if (seq != L.rx_expect || len > NF_LINK_MAX_PAYLOAD) {
                fw_stats.rx_dup++; /* duplicate or gap: go-back-N drops it, the ack repeats */
                L.ack_owed = 1;
            } else {
                if (!replies_fit(a + NF_LINK_HDR_SIZE, len)) {
                    peek_acks(ready);
                    if (!replies_fit(a + NF_LINK_HDR_SIZE, len)) {
                        if ((ready & all_rx) != all_rx)
                            break; /* wait for acks; there is a free RX slot for them */
                        /* Every RX slot is full, so no ack can reach us: give up this frame
                         * undelivered (the host sends it again) to make room. */
                        fw_stats.rx_dup++;
                        L.ack_owed = 1;
                        link_wr(NF_LINK_RX_RELEASE, 1u << slot);
                        L.rx_next = ring_add(slot, 1u, fw_cfg.rx_slots);
                        did = 1;
                        continue;
                    }
                }
                fw_msg_process(a + NF_LINK_HDR_SIZE, len, link_rd(NF_LINK_RX_STAMP0 + 4u * slot));
                L.rx_expect++;
                L.ack_owed = 1;
            }
        } else if (type == NF_LINK_TYPE_ACK) {
            tx_ack(ack);
        } else if (type == NF_LINK_TYPE_RESET) {
            link_reset(rsvd);
        }
        /* Anything else (RESET_ACK is board to host) is ignored. */
        link_wr(NF_LINK_RX_RELEASE, 1u << slot);
        L.rx_next = ring_add(slot, 1u, fw_cfg.rx_slots);
        did = 1;
    }
    /* No more work in the RX slots: send what was batched, or at least the ack. */
    if (L.open) {
        tx_flush();
        did = 1;
    } else if (L.ack_owed) {
        link_wr(NF_LINK_TX_ACK, L.rx_expect);
        L.ack_owed = 0;
        did = 1;
    }
    return did;
}
