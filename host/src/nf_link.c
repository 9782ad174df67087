/* SPDX-License-Identifier: Apache-2.0 */
/* Host side of the reliable link: go-back-N with cumulative acks over a point-to-point
 * line of known rate (see nf_link.h and docs/architecture.md "The link"). All
 * transport I/O happens on the link thread; senders only fill frames under the mutex
 * and wake it. */
#include "nf_link.h"

#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "nf_link_priv.h"
#include "nf_transport_priv.h"

#define DEFAULT_SILENCE_MS 30000u
#define DEFAULT_RTO_INITIAL_MS 1000u
#define DEFAULT_RTO_MAX_MS 10000u
#define DEFAULT_ACK_DELAY_US 1000u
#define DEFAULT_DEFER_MAX_US 2000u /* longest a deferred message waits for company */
#define IDLE_POLL_MS 1000          /* longest sleep of the link thread with no timer armed */
/* A frame survives a per-byte error rate p with (1-p)^len: every loss halves the
 * size messages are batched up to, a run of clean acks doubles it (as the board does).
 * Frames that messages join while the line is busy (join_cap) start at the minimum: a
 * frame is never split again, so one built big before the first loss could stall the
 * link. */
#define FRAME_CAP_MIN 128u
#define FRAME_CAP_GROW_AFTER 16u
/* The byte stream keeps order, so a repeated pure ACK means a frame was lost before
 * later ones arrived: two make us go back at once. The board follows the same rule,
 * so each sign of a lost board frame (a bad frame, a gap) makes us send a pure ACK. */
#define DUP_ACKS_FOR_FAST_RETRANSMIT 2u
#define LOSS_ACKS_MAX 2u
#define MAX_BACKOFF_SHIFT 3u /* consecutive timeouts double the timeout at most this often */
/* The line's pace: each acknowledged frame's round trip carried at least its own
 * bytes and an ACK's, so it bounds the byte time from above; the smallest of the last
 * PACE_SAMPLES bounds, never below INFO's UART rate, is the byte time. A real board
 * runs at that rate; a simulated one is ~70x slower in wall time, learnt so. A frame
 * sent again, or acked after a sign of loss, gives no bound: its ack may have waited
 * for a recovery, not for the line. */
#define ACK_WIRE_BYTES (2u + NF_LINK_HDR_SIZE + 4u)
#define BOARD_FRAME_WIRE (2u + NF_FRAME_MAX_RAW) /* a board frame ahead of the ack */
#define UART_BITS_PER_BYTE 10u

/* Time of one byte on the line (ns): the pace measured, at least INFO's UART rate. */
static uint32_t byte_ns(const struct nf_link *l)
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
static uint64_t frame_rto(const struct nf_link *l, size_t wire_len)
{
    uint64_t r = l->turnaround_us + ((uint64_t)(wire_len + BOARD_FRAME_WIRE + ACK_WIRE_BYTES) * byte_ns(l) + 999u) / 1000u;
    if (l->pace_ns[0] == UINT32_MAX && r < l->rto_initial_us)
        r = l->rto_initial_us;
    r <<= l->backoff > MAX_BACKOFF_SHIFT ? MAX_BACKOFF_SHIFT : l->backoff;
    return r > l->rto_max_us ? l->rto_max_us : r;
}

/* Restart the timer for the oldest frame written and not acknowledged (under mu). */
static void restart_timer(struct nf_link *l, uint64_t now)
{
    l->rto_deadline_us = l->una != l->sent ? now + frame_rto(l, l->q[l->una % NF_LINK_MAX_SLOTS].wire_len) : 0;
}

/* Mark the link dead (under mu) with a reason that is printed once and kept for
 * nf_link_dead_reason(). The thread calls on_dead after unlocking. */
static void set_dead(struct nf_link *l, uint32_t status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_dead(struct nf_link *l, uint32_t status, const char *fmt, ...)
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
        set_dead(l, NF_STATUS_INVALID_DEVICE_STATE, "board speaks layout version %u, this library %u",
                 (unsigned)i->layout_version, (unsigned)NF_LAYOUT_VERSION);
    else if (i->rx_slots < 1 || i->rx_slots > NF_LINK_MAX_SLOTS || i->tx_slots < 1 || i->tx_slots > NF_LINK_MAX_SLOTS)
        set_dead(l, NF_STATUS_INVALID_DEVICE_STATE, "board reports %u RX / %u TX slots (1..%u allowed)",
                 (unsigned)i->rx_slots, (unsigned)i->tx_slots, (unsigned)NF_LINK_MAX_SLOTS);
    return l->state != ST_DEAD;
}

static void handle_frame(struct nf_link *l, const uint8_t *f, size_t n, uint64_t now)
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

/* ---- sending (link thread) --------------------------------------------- */

/* Write one encoded frame outside the lock; on failure the link dies. A peer that
 * takes no bytes (a frozen board) is waited for in slices, so nf_link_close is never
 * held up by more than one slice; a slice that ran out may have left part of the
 * frame on the line, so the whole frame goes again (the receiver drops the part:
 * every frame starts with a FLAG). The silence deadline bounds the whole wait. */
#define WRITE_SLICE_MS 100u
static int write_frame(struct nf_link *l, size_t wire_len)
{
    uint32_t st = NF_STATUS_IO_TIMEOUT;
    for (uint32_t waited = 0; st == NF_STATUS_IO_TIMEOUT && waited < l->silence_us / 1000u; waited += WRITE_SLICE_MS) {
        nf_mutex_lock(&l->mu);
        int closing = l->closing;
        nf_mutex_unlock(&l->mu);
        if (closing)
            break;
        st = nf_transport_write(l->t, l->wire, wire_len, WRITE_SLICE_MS);
    }
    nf_mutex_lock(&l->mu);
    if (st == NF_STATUS_SUCCESS) {
        l->st.frames_tx++;
        l->st.wire_tx += wire_len;
    } else if (!l->closing) {
        set_dead(l, st, "link: writing to %s failed", l->t->name);
    }
    nf_mutex_unlock(&l->mu);
    return st == NF_STATUS_SUCCESS;
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
static size_t next_output(struct nf_link *l, uint64_t now, uint64_t *next_us)
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
        if (!l->loss_acks && l->sent != l->nxt && !(l->probing && l->sent != l->una)) {
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
            set_dead(l, NF_STATUS_IO_TIMEOUT, "link: no valid frame from %s for %u ms", l->t->name,
                     (unsigned)(l->silence_us / 1000u));
            return 0;
        }
        SOONER(quiet_since + l->silence_us);
    }
#undef SOONER
    *next_us = next;
    return len;
}

static void *link_thread(void *arg)
{
    struct nf_link *l = arg;
    int was_up = 0;
    nf_mutex_lock(&l->mu);
    l->self = pthread_self();
    l->self_set = 1;
    nf_mutex_unlock(&l->mu);
    for (;;) {
        nf_mutex_lock(&l->mu);
        was_up = l->state == ST_UP;
        uint64_t now = now_us(), next = now;
        size_t len = l->closing || l->state == ST_DEAD ? 0 : next_output(l, now, &next);
        int stop = l->closing || l->state == ST_DEAD;
        l->asleep_until_us = stop || len > 0 ? 0 : next;
        nf_mutex_unlock(&l->mu);
        if (stop || (len > 0 && !write_frame(l, len)))
            break;
        if (len > 0)
            next = now; /* keep writing while there is more; read what is there without waiting */
        uint64_t after = now_us();
        int timeout_ms = next > after ? (int)((next - after + 999u) / 1000u) : 0;
        ssize_t n = nf_transport_read(l->t, l->rxbuf, sizeof(l->rxbuf), timeout_ms);
        if (n < 0) {
            nf_mutex_lock(&l->mu);
            if (!l->closing)
                set_dead(l, NF_STATUS_CONNECTION_RESET, "link: %s closed the connection", l->t->name);
            nf_mutex_unlock(&l->mu);
            break;
        }
        uint64_t t_rx = now_us();
        unsigned bad = 0;
        for (ssize_t i = 0; i < n; i++) {
            enum nf_frame_result r = nf_frame_decode_byte(&l->dec, l->rxbuf[i]);
            if (r == NF_FRAME_OK)
                handle_frame(l, l->dec.buf, l->dec.len, t_rx);
            else if (r == NF_FRAME_BAD)
                bad++;
        }
        nf_mutex_lock(&l->mu);
        l->asleep_until_us = 0;
        l->st.wire_rx += (uint64_t)n;
        l->st.bad_frames += bad;
        l->losses += bad;
        if (bad && l->state == ST_UP && l->loss_acks < LOSS_ACKS_MAX)
            l->loss_acks = bad >= LOSS_ACKS_MAX ? LOSS_ACKS_MAX : bad > l->loss_acks ? bad : l->loss_acks;
        nf_mutex_unlock(&l->mu);
    }
    /* Death is announced after every sender has been woken (set_dead broadcast). */
    nf_mutex_lock(&l->mu);
    int call = l->state == ST_DEAD && !l->closing && was_up && l->on_dead;
    uint32_t status = l->dead_status;
    nf_mutex_unlock(&l->mu);
    if (call)
        l->on_dead(l->ctx, status);
    return NULL;
}

/* ---- API ------------------------------------------------------------------- */

static void free_link(struct nf_link *l)
{
    for (unsigned i = 0; i < NF_LINK_MAX_SLOTS; i++)
        free(l->q[i].buf);
    free(l->open_buf);
    for (struct pend *p = l->pend_head, *n; p; p = n) {
        n = p->next;
        free(p->buf);
        free(p);
    }
    free(l);
}

uint32_t nf_link_open(struct nf_transport *t, nf_link_on_message on_message, nf_link_on_dead on_dead, void *ctx,
                      struct nf_link **out, struct nf_info *info)
{
    const char *v = getenv("NDKFPGA_LINK_TIMEOUT_MS");
    char *end = NULL;
    unsigned long ms = v ? strtoul(v, &end, 10) : 0;
    struct nf_link_config cfg = {.silence_ms = end && *end == '\0' && ms <= 0xFFFFFFFFul / 1000u ? (uint32_t)ms : 0};
    return nf_link_open_ex(t, &cfg, on_message, on_dead, ctx, out, info);
}

uint32_t nf_link_open_ex(struct nf_transport *t, const struct nf_link_config *cfg, nf_link_on_message on_message,
                         nf_link_on_dead on_dead, void *ctx, struct nf_link **out, struct nf_info *info)
{
    if (!out || !t) {
        nf_transport_close(t);
        return nf_set_error(NF_STATUS_INVALID_PARAMETER, "nf_link_open: transport or out is NULL");
    }
    *out = NULL;
    struct nf_link_config c = {0};
    if (cfg)
        c = *cfg;
    struct nf_link *l = calloc(1, sizeof(*l));
    if (!l) {
        nf_transport_close(t);
        return nf_set_error(NF_STATUS_INSUFFICIENT_RESOURCES, "out of memory for the link");
    }
    uint32_t st = NF_STATUS_INSUFFICIENT_RESOURCES;
    l->t = t;
    l->on_message = on_message;
    l->on_dead = on_dead;
    l->ctx = ctx;
#define OR(v, dflt) ((v) ? (v) : (dflt))
    l->silence_us = OR(c.silence_ms, DEFAULT_SILENCE_MS) * 1000u;
    l->rto_initial_us = OR(c.rto_initial_ms, DEFAULT_RTO_INITIAL_MS) * 1000u;
    l->turnaround_us = OR(c.rto_min_ms, NF_LINK_TURNAROUND_MS) * 1000u;
    l->rto_max_us = OR(c.rto_max_ms, DEFAULT_RTO_MAX_MS) * 1000u;
    l->rto_max_us = l->rto_max_us < l->turnaround_us ? l->turnaround_us : l->rto_max_us;
    l->ack_delay_us = OR(c.ack_delay_us, DEFAULT_ACK_DELAY_US);
    l->defer_max_us = OR(c.defer_max_us, DEFAULT_DEFER_MAX_US);
#undef OR
    l->window_max = (c.window_max && c.window_max < NF_LINK_MAX_SLOTS) ? c.window_max : NF_LINK_MAX_SLOTS;
    l->frame_cap = NF_LINK_MAX_PAYLOAD;
    l->join_cap = FRAME_CAP_MIN;
    for (unsigned i = 0; i < PACE_SAMPLES; i++)
        l->pace_ns[i] = UINT32_MAX;
    l->fast_armed = 1;
    if (c.nonce)
        l->nonce = (uint16_t)(c.nonce - 1);
    else if (getrandom(&l->nonce, sizeof(l->nonce), 0) != (ssize_t)sizeof(l->nonce))
        l->nonce = (uint16_t)(now_us() ^ (uint64_t)getpid());
    nf_frame_decoder_init(&l->dec);
    int oom = 0;
    for (unsigned i = 0; i < NF_LINK_MAX_SLOTS; i++)
        oom |= !(l->q[i].buf = malloc(NF_FRAME_MAX_RAW));
    oom |= !(l->open_buf = malloc(NF_FRAME_MAX_RAW));
    l->last_rx_us = l->idle_mark_us = now_us();
    l->state = ST_RESETTING;
    if (oom || pthread_create(&l->thread, NULL, link_thread, l) != 0) {
        nf_set_error(st, "out of memory or threads for the link");
        goto fail;
    }
    nf_mutex_lock(&l->mu);
    while (l->state == ST_RESETTING)
        nf_cond_wait(&l->cv, &l->mu);
    st = l->state == ST_UP ? NF_STATUS_SUCCESS : l->dead_status;
    nf_mutex_unlock(&l->mu);
    if (st != NF_STATUS_SUCCESS) {
        pthread_join(l->thread, NULL);
        nf_error_set_text(l->dead_msg); /* the reason was recorded on the link thread */
        goto fail;
    }
    if (info)
        *info = l->info;
    *out = l;
    return NF_STATUS_SUCCESS;
fail:
    nf_transport_close(t);
    free_link(l);
    return st;
}

static int is_dead(struct nf_link *l)
{
    nf_mutex_lock(&l->mu);
    int dead = l->state == ST_DEAD;
    nf_mutex_unlock(&l->mu);
    return dead;
}

uint32_t nf_link_status(struct nf_link *l)
{
    return !l ? NF_STATUS_INVALID_PARAMETER : is_dead(l) ? l->dead_status : NF_STATUS_SUCCESS;
}

const char *nf_link_dead_reason(struct nf_link *l)
{
    /* Both stable once dead: written once, before the state changed. */
    return l && is_dead(l) ? l->dead_msg : "";
}

void nf_link_get_stats(struct nf_link *l, struct nf_link_stats *out)
{
    if (!l || !out)
        return;
    nf_mutex_lock(&l->mu);
    *out = l->st;
    out->window = l->window;
    out->rto_us = (uint32_t)frame_rto(l, l->una != l->sent ? l->q[l->una % NF_LINK_MAX_SLOTS].wire_len : 0);
    out->frame_cap = (uint32_t)l->frame_cap;
    out->byte_ns = byte_ns(l);
    nf_mutex_unlock(&l->mu);
}

void nf_link_close(struct nf_link *l)
{
    if (!l)
        return;
    nf_mutex_lock(&l->mu);
    l->closing = 1;
    nf_cond_broadcast(&l->cv);
    nf_mutex_unlock(&l->mu);
    nf_transport_wake(l->t);
    pthread_join(l->thread, NULL);
    nf_mutex_lock(&l->mu);
    while (l->senders_inside > 0)
        nf_cond_wait(&l->cv, &l->mu);
    nf_mutex_unlock(&l->mu);
    nf_transport_close(l->t);
    free_link(l);
}
