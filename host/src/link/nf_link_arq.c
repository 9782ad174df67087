/* SPDX-License-Identifier: Apache-2.0 */
/* The link's protocol: go-back-N with cumulative acks over a point-to-point line of
 * known rate (nf_link.h, docs/architecture.md "The link"). On the link thread, under
 * the mutex: frames received move the state (acks, window, pace), and
 * nf_link_next_output picks what goes on the line next (DATA, again after a loss or a
 * timeout, ACK, RESET) and when to look again. No transport I/O here. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nf_link_priv.h"

#define IDLE_POLL_MS 1000 /* longest sleep of the link thread with no timer armed */
/* A run of this many clean acks doubles the batching cap (FRAME_CAP_MIN). */
#define FRAME_CAP_GROW_AFTER 16u
/* The byte stream keeps order, so a repeated pure ACK means a frame was lost before
 * later ones arrived: two make us go back at once. The board follows the same rule,
 * so each sign of a lost board frame (a bad frame, a gap) makes us send a pure ACK. */
#define DUP_ACKS_FOR_FAST_RETRANSMIT 2u
#define MAX_BACKOFF_SHIFT 3u /* consecutive timeouts double the timeout at most this often */
/* The line's pace: each acknowledged frame's round trip carried at least its own
 * bytes and an ACK's, so it bounds the byte time from above; the smallest of the last
 * PACE_SAMPLES bounds, never below INFO's UART rate, is the byte time. A real board
 * runs at that rate; a simulated one is far slower in wall time, learnt so. A frame
 * sent again, or acked after a sign of loss, gives no bound: its ack may have waited
 * for a recovery, not for the line. */
#define ACK_WIRE_BYTES (2u + NF_LINK_HDR_SIZE + 4u)
#define BOARD_FRAME_WIRE (2u + NF_FRAME_MAX_RAW) /* a board frame ahead of the ack */
#define UART_BITS_PER_BYTE 10u

/* Time of one byte on the line (ns): the link's observed pace, never faster than INFO's UART rate. */
uint32_t nf_link_byte_ns(const struct nf_link *l)
{
    uint32_t b = UINT32_MAX;
    for (unsigned i = 0; i < PACE_SAMPLES; i++)
        b = l->pace_ns[i] < b ? l->pace_ns[i] : b;
    return b == UINT32_MAX || b < l->line_byte_ns ? l->line_byte_ns : b;
}

/* Retransmission timeout of a frame of wire_len bytes that heads the queue: its own
 * bytes, a board frame in progress ahead of the ack, the ack, and the board's
 * turnaround; doubled per timeout without progress, and the initial timeout until
 * the first round trip measured the pace. */
uint64_t nf_link_frame_rto(const struct nf_link *l, size_t wire_len)
{
    uint64_t r = l->turnaround_us + ((uint64_t)(wire_len + BOARD_FRAME_WIRE + ACK_WIRE_BYTES) * nf_link_byte_ns(l) + 999u) / 1000u;
    if (l->pace_ns[0] == UINT32_MAX && r < l->rto_initial_us)
        r = l->rto_initial_us;
    r <<= l->backoff > MAX_BACKOFF_SHIFT ? MAX_BACKOFF_SHIFT : l->backoff;
    return r > l->rto_max_us ? l->rto_max_us : r;
}

/* Restart the timer for the oldest frame written and not acknowledged (under mu). */
static void restart_timer(struct nf_link *l, uint64_t now)
{
    l->rto_deadline_us = l->una != l->sent ? now + nf_link_frame_rto(l, l->q[l->una % NF_LINK_MAX_SLOTS].wire_len) : 0;
}

/* Mark the link dead (under mu) with a reason that is printed once and kept for
 * nf_link_dead_reason(). The thread calls on_dead after unlocking. */
void nf_link_set_dead(struct nf_link *l, NTSTATUS status, const char *fmt, ...)
{
    if (l->state == ST_DEAD)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->dead_msg, sizeof(l->dead_msg), fmt, ap);
    va_end(ap);
    nf_set_error(status, "%s", l->dead_msg);
    l->state = ST_DEAD;
    l->dead_status = status;
    nf_cond_broadcast(&l->cv);
}

/* ---- frame handling (link thread) --------------------------------------- */

/* A frame was lost: go back N (under mu), everything unacknowledged goes again,
 * oldest first; and batch smaller (fewer bytes to lose per frame). */
static void go_back(struct nf_link *l)
{
    l->sent = l->una;
    l->rto_deadline_us = 0; /* restarts with the first frame sent again */
    l->dup_acks = l->clean_acks = 0;
    l->losses++;
    if (l->frame_cap / 2 >= FRAME_CAP_MIN)
        l->frame_cap /= 2;
    if (l->join_cap / 2 >= FRAME_CAP_MIN)
        l->join_cap /= 2;
}

/* Apply a cumulative ack (under mu); pure is 1 for an ACK frame. */
static void take_ack(struct nf_link *l, uint8_t ack, int pure, uint64_t now)
{
    uint8_t adv = (uint8_t)(ack - l->una);
    if (adv == 0) {
        if (pure && l->sent != l->una && ++l->dup_acks >= DUP_ACKS_FOR_FAST_RETRANSMIT && l->fast_armed) {
            l->st.fast_retransmits++;
            go_back(l);
            l->probing = 0;
        }
        return;
    }
    if (adv > (uint8_t)(l->max - l->una)) {
        l->st.ignored++; /* acknowledges something never sent: stale or corrupt-but-valid */
        return;
    }
    /* The newest frame acknowledged bounds the byte time, unless a loss either way
     * may have held its ack back (the bound would be loose, and the timeouts with it). */
    const struct tx_slot *newest = &l->q[(uint8_t)(ack - 1) % NF_LINK_MAX_SLOTS];
    if (!newest->resent && newest->losses == l->losses) {
        uint64_t ns = (now - newest->first_us) * 1000u / (newest->wire_len + ACK_WIRE_BYTES);
        l->pace_ns[l->pace_next++ % PACE_SAMPLES] = ns < UINT32_MAX ? (uint32_t)ns : UINT32_MAX - 1u;
    }
    if ((uint8_t)(l->sent - l->una) < adv)
        l->sent = ack; /* a go-back was pending over frames now acknowledged */
    l->una = ack;
    l->dup_acks = 0;
    l->backoff = 0;
    l->probing = 0;
    /* Our resent copies make the board repeat its ack when they arrive; they are all
     * ahead of any frame first sent after them, so once such a frame is acked (una
     * passes recover) repeated acks mean loss again. */
    if (l->una != l->recover && (uint8_t)(l->una - l->recover) <= (uint8_t)(l->max - l->recover))
        l->fast_armed = 1;
    l->clean_acks += adv;
    if (l->clean_acks >= FRAME_CAP_GROW_AFTER &&
        (l->frame_cap < NF_LINK_MAX_PAYLOAD || l->join_cap < NF_LINK_MAX_PAYLOAD)) {
        l->frame_cap = l->frame_cap * 2 > NF_LINK_MAX_PAYLOAD ? NF_LINK_MAX_PAYLOAD : l->frame_cap * 2;
        l->join_cap = l->join_cap * 2 > NF_LINK_MAX_PAYLOAD ? NF_LINK_MAX_PAYLOAD : l->join_cap * 2;
        l->clean_acks = 0;
    }
    restart_timer(l, now);
    nf_cond_broadcast(&l->cv);
}

/* Deliver the messages of an in-order DATA frame (no lock held). */
static void deliver(struct nf_link *l, const uint8_t *p, size_t len)
{
    for (size_t off = 0, m; off < len; off += m) {
        m = len - off < NF_MSG_HDR_SIZE ? 0 : get16(p + off + NF_MSG_HDR_LEN_OFF);
        int bad = m < NF_MSG_HDR_SIZE || (m & 7u) != 0 || m > len - off;
        nf_mutex_lock(&l->mu);
        l->st.bad_msgs += bad;
        l->st.msgs_rx += !bad;
        l->st.payload_rx += bad ? 0 : m;
        nf_mutex_unlock(&l->mu);
        if (bad)
            return; /* the sender is broken: skip the rest, keep the link */
        if (l->on_message)
            l->on_message(l->ctx, p + off, m);
    }
}

/* Check INFO from RESET_ACK (under mu); a bad one kills the link. */
static int valid_info(struct nf_link *l)
{
    const struct nf_info *i = &l->info;
    if (i->layout_version != NF_LAYOUT_VERSION)
        nf_link_set_dead(l, STATUS_INVALID_DEVICE_STATE, "board speaks layout version %u, this library %u",
                 (unsigned)i->layout_version, (unsigned)NF_LAYOUT_VERSION);
    else if (i->rx_slots < 1 || i->rx_slots > NF_LINK_MAX_SLOTS || i->tx_slots < 1 || i->tx_slots > NF_LINK_MAX_SLOTS)
        nf_link_set_dead(l, STATUS_INVALID_DEVICE_STATE, "board reports %u RX / %u TX slots (1..%u allowed)",
                 (unsigned)i->rx_slots, (unsigned)i->tx_slots, (unsigned)NF_LINK_MAX_SLOTS);
    return l->state != ST_DEAD;
}

void nf_link_handle_frame(struct nf_link *l, const uint8_t *f, size_t n, uint64_t now)
{
    uint8_t type = f[NF_LINK_HDR_TYPE_OFF];
    uint8_t seq = f[NF_LINK_HDR_SEQ_OFF];
    const uint8_t *payload = f + NF_LINK_HDR_SIZE;
    size_t plen = n - NF_LINK_HDR_SIZE;

    nf_mutex_lock(&l->mu);
    l->st.frames_rx++;
    if (l->state == ST_RESETTING) {
        if (type == NF_LINK_TYPE_RESET_ACK && get16(f + NF_LINK_HDR_RSVD_OFF) == l->nonce && plen >= NF_INFO_SIZE) {
            memcpy(&l->info, payload, NF_INFO_SIZE);
            l->last_rx_us = now;
            if (valid_info(l)) {
                uint32_t w = l->info.rx_slots > 1 ? l->info.rx_slots - 1 : 1;
                l->window = w < l->window_max ? w : l->window_max;
                /* UART_PERIOD: clocks per bit, 12.4 fixed point */
                if (l->info.clk_hz)
                    l->line_byte_ns = (uint32_t)((uint64_t)UART_BITS_PER_BYTE * 1000000000u * l->info.uart_period /
                                                 ((uint64_t)l->info.clk_hz << NF_SOC_UART_PERIOD_FRAC));
                l->state = ST_UP;
                nf_cond_broadcast(&l->cv);
            }
        } else {
            l->st.ignored++; /* leftovers of an earlier session, or a stale answer */
        }
        nf_mutex_unlock(&l->mu);
        return;
    }
    if (l->state != ST_UP || (type != NF_LINK_TYPE_DATA && type != NF_LINK_TYPE_ACK) ||
        (type == NF_LINK_TYPE_ACK && plen != 0)) {
        l->st.ignored++;
        nf_mutex_unlock(&l->mu);
        return;
    }
    l->last_rx_us = now;
    take_ack(l, f[NF_LINK_HDR_ACK_OFF], type == NF_LINK_TYPE_ACK, now);
    int in_order = type == NF_LINK_TYPE_DATA && seq == l->rx_expect;
    if (in_order) {
        l->rx_expect++;
        l->frames_since_ack++;
        if (!l->ack_owed)
            l->ack_deadline_us = now + l->ack_delay_us;
        /* Ack at once when half the board's window waits on us. */
        if (l->frames_since_ack * 2 >= l->info.tx_slots)
            l->ack_deadline_us = now;
    } else if (type == NF_LINK_TYPE_DATA) {
        l->st.dups++;
        l->losses++;
        l->ack_deadline_us = now; /* the board is retransmitting: tell it where we are now */
        if ((uint8_t)(seq - l->rx_expect) < 128u && l->loss_acks < LOSS_ACKS_MAX)
            l->loss_acks++; /* ahead of rx_expect: a gap */
    }
    l->ack_owed |= type == NF_LINK_TYPE_DATA;
    nf_mutex_unlock(&l->mu);
    if (in_order)
        deliver(l, payload, plen);
}


/* Fill the header at h (payload bytes follow it) and encode the frame into l->wire. */
static size_t encode(struct nf_link *l, uint8_t *h, uint8_t type, uint8_t seq, uint16_t rsvd, size_t payload)
{
    memset(h, 0, NF_LINK_HDR_SIZE);
    h[NF_LINK_HDR_TYPE_OFF] = type;
    h[NF_LINK_HDR_SEQ_OFF] = seq;
    h[NF_LINK_HDR_ACK_OFF] = l->rx_expect;
    put16(h + NF_LINK_HDR_LEN_OFF, (uint16_t)payload);
    put16(h + NF_LINK_HDR_RSVD_OFF, rsvd);
    return nf_frame_encode(h, NF_LINK_HDR_SIZE + payload, l->wire, sizeof(l->wire));
}

static size_t encode_ctrl(struct nf_link *l, uint8_t type, uint16_t rsvd)
{
    uint8_t h[NF_LINK_HDR_SIZE];
    return encode(l, h, type, 0, rsvd, 0);
}

/* Sequence a closed frame (under mu): its buffer *buf goes into slot nxt, whose old
 * buffer takes its place. The caller checked for room. */
static void sequence(struct nf_link *l, uint8_t **buf, size_t payload)
{
    struct tx_slot *s = &l->q[l->nxt % NF_LINK_MAX_SLOTS];
    uint8_t *b = s->buf;
    s->buf = *buf;
    s->payload = payload;
    *buf = b;
    mark_busy(l);
    l->nxt++;
}

/* Close the open frame into the window (under mu; the caller checked for room). */
void nf_link_close_open(struct nf_link *l)
{
    sequence(l, &l->open_buf, l->open_len);
    l->open_len = l->open_push = 0;
    if (l->asleep_until_us)
        nf_transport_wake(l->t); /* awake, it sends the frame before it sleeps */
}

/* Fill the window from what senders left waiting (under mu, link thread): closed
 * frames first, in order, then the open frame when a message without defer is in
 * it and the line is no longer busy, or its first message has waited defer_max. */
static void pump(struct nf_link *l, uint64_t now)
{
    while (queued(l) < l->window) {
        struct pend *p = l->pend_head;
        if (p) {
            l->pend_head = p->next;
            if (!l->pend_head)
                l->pend_tail = NULL;
            sequence(l, &p->buf, p->payload);
            free(p->buf);
            free(p);
        } else if (l->open_len > 0 && (l->open_push ? !line_busy(l)
                                                    : now > l->open_since_us &&
                                                          now - l->open_since_us >= l->defer_max_us)) {
            nf_link_close_open(l);
        } else {
            break;
        }
    }
}

/* Whether DATA frame `sent` may go now (under mu): with a transport that bounds the
 * bytes in flight, the unacknowledged frames' and this one's stay within the bound; a
 * frame alone always goes. Leaves it encoded in l->wire. */
static int line_room(struct nf_link *l)
{
    struct tx_slot *s = &l->q[l->sent % NF_LINK_MAX_SLOTS];
    size_t len = encode(l, s->buf, NF_LINK_TYPE_DATA, l->sent, 0, s->payload);
    size_t cap = l->t->in_flight_max, n = 0;
    if (!cap || l->sent == l->una)
        return 1;
    for (uint8_t i = l->una; i != l->sent; i++)
        n += l->q[i % NF_LINK_MAX_SLOTS].wire_len;
    return n + len <= cap;
}

/* Encode DATA frame `sent` into l->wire (under mu); returns its length. */
static size_t encode_data(struct nf_link *l, uint64_t now)
{
    struct tx_slot *s = &l->q[l->sent % NF_LINK_MAX_SLOTS];
    s->wire_len = encode(l, s->buf, NF_LINK_TYPE_DATA, l->sent, 0, s->payload);
    s->resent = l->sent != l->max;
    if (s->resent) {
        l->st.retransmits++;
        l->fast_armed = 0;
        l->recover = l->max;
    } else {
        s->first_us = now;
        s->losses = l->losses;
        l->max = (uint8_t)(l->sent + 1);
        l->st.data_tx++;
    }
    l->sent++;
    if (!l->rto_deadline_us)
        restart_timer(l, now); /* s is the oldest out */
    l->ack_owed = 0; /* this frame carries it */
    l->frames_since_ack = 0;
    return s->wire_len;
}

/* Pick the next thing to write (under mu) and encode it into l->wire; returns its
 * length, 0 when nothing is due. *next_us gets the earliest future deadline. */
size_t nf_link_next_output(struct nf_link *l, uint64_t now, uint64_t *next_us)
{
    uint64_t next = now + (uint64_t)IDLE_POLL_MS * 1000u;
#define SOONER(t) next = (t) < next ? (t) : next
    size_t len = 0;
    if (l->state == ST_RESETTING) {
        if (now >= l->reset_next_us) {
            len = encode_ctrl(l, NF_LINK_TYPE_RESET, l->nonce);
            l->st.resets_tx++;
            l->reset_next_us = now + l->rto_initial_us;
        }
        SOONER(l->reset_next_us);
    } else if (l->state == ST_UP) {
        pump(l, now);
        if (l->open_len > 0 && !l->open_push && !l->pend_head && queued(l) < l->window)
            SOONER(l->open_since_us + l->defer_max_us); /* (a held frame goes with an ack) */
        if (l->rto_deadline_us && now >= l->rto_deadline_us) {
            l->st.timeouts++;
            l->backoff++;
            go_back(l);
            l->probing = 1;
        }
        if (!l->loss_acks && l->sent != l->nxt && !(l->probing && l->sent != l->una) && line_room(l)) {
            len = encode_data(l, now);
        } else if ((l->ack_owed && now >= l->ack_deadline_us) || l->loss_acks) {
            len = encode_ctrl(l, NF_LINK_TYPE_ACK, 0);
            if (l->loss_acks)
                l->loss_acks--;
            l->st.acks_tx++;
            l->ack_owed = 0;
            l->frames_since_ack = 0;
        }
        if (l->rto_deadline_us)
            SOONER(l->rto_deadline_us);
        if (l->ack_owed)
            SOONER(l->ack_deadline_us);
    }
    if (!awaiting(l))
        l->idle_mark_us = now;
    if (l->state != ST_DEAD && awaiting(l)) {
        uint64_t quiet_since = l->last_rx_us > l->idle_mark_us ? l->last_rx_us : l->idle_mark_us;
        if (now > quiet_since && now - quiet_since >= l->silence_us) { /* quiet_since may be later than now */
            nf_link_set_dead(l, STATUS_IO_TIMEOUT, "link: no valid frame from %s for %u ms", l->t->name,
                     (unsigned)(l->silence_us / 1000u));
            return 0;
        }
        SOONER(quiet_since + l->silence_us);
    }
#undef SOONER
    *next_us = next;
    return len;
}
