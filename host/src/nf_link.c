/* Host side of the reliable link: go-back-N with cumulative acks (see nf_link.h and
 * docs/architecture.md "The link"). All transport I/O happens on the link thread;
 * senders only fill frames under the mutex and wake it. */
#include "nf_link.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "nf_frame.h"
#include "nf_transport_priv.h"

#define DEFAULT_SILENCE_MS 30000u
#define DEFAULT_RTO_INITIAL_MS 1000u
#define DEFAULT_RTO_MIN_MS 20u
#define DEFAULT_RTO_MAX_MS 10000u
#define DEFAULT_ACK_DELAY_US 1000u
/* A deferred message (NDK_OP_FLAG_DEFER) with nothing posted after it goes out after
 * at most this long (nf_link_config.defer_max_us). */
#define DEFAULT_DEFER_MAX_US 2000u
/* Longest sleep of the link thread with nothing to wait for: bounds how stale its
 * view of the clock can get (the timers all wake it earlier when armed). */
#define IDLE_POLL_MS 1000
#define RX_CHUNK 16384
/* Batching target: a lossy line loses long frames far more often (a frame survives
 * a per-byte error rate p with (1-p)^len), so timeouts halve the size the link
 * batches messages up to, and a run of clean acks doubles it again. */
#define FRAME_CAP_MIN 128u
#define FRAME_CAP_GROW_AFTER 16u
/* Pure ACKs repeating the oldest unacknowledged sequence that make the sender go
 * back at once instead of waiting for the timer: the byte stream keeps order, so
 * the board only repeats an ack when a later frame arrived after a lost one. */
#define DUP_ACKS_FOR_FAST_RETRANSMIT 2u
/* The board follows the same rule, so every sign of a lost board frame (a frame that
 * failed its CRC, a DATA frame out of turn) makes us send a pure ACK at once, ahead of
 * queued DATA (an ack inside DATA frames does not count as repeated: we may simply be
 * sending a burst). Two are enough to make the board go back. */
#define LOSS_ACKS_MAX 2u
/* Back-off doubles the timeout at most this many times (and never past rto_max). */
#define MAX_BACKOFF_SHIFT 2u
/* Per-byte line time (see frame_line_us): the estimate is the smallest upper bound
 * seen over the last two windows of this many RTT samples, so it follows a board (a
 * simulation) that gets slower. The smallest reply that can acknowledge a frame is a
 * pure ACK: two flags, the header, the CRC. */
#define BYTE_TIME_WINDOW 64u
#define ACK_WIRE_BYTES (2u + NF_LINK_HDR_SIZE + 4u)
#define UART_BITS_PER_BYTE 10u

enum link_state { ST_RESETTING, ST_UP, ST_DEAD };

struct tx_slot {
    uint8_t *buf;      /* NF_FRAME_MAX_RAW bytes: header is filled at each transmission */
    size_t payload;    /* payload bytes after the header */
    uint64_t first_us; /* time of the first transmission, for the RTT sample */
    size_t wire_len;   /* bytes on the line at its last transmission (stuffed, flags) */
    int resent;        /* sent more than once: no RTT sample from it (Karn) */
    uint64_t rx_losses; /* rx_losses of the link at its first transmission */
};

/* A closed frame waiting for the window (nf_link_post: senders never wait). */
struct pend {
    struct pend *next;
    uint8_t *buf;      /* NF_FRAME_MAX_RAW bytes; payload at NF_LINK_HDR_SIZE */
    size_t payload;
};

struct nf_link {
    struct nf_transport *t;
    nf_link_on_message on_message;
    nf_link_on_dead on_dead;
    void *ctx;
    int trace;
    uint32_t silence_us, rto_initial_us, rto_min_us, rto_max_us, ack_delay_us, window_max, defer_max_us;

    pthread_t thread;
    pthread_t self;    /* the link thread as it sees itself (set under mu) */
    int self_set;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* state changes, window space, senders leaving */

    enum link_state state;
    int closing;
    uint32_t dead_status;
    char dead_msg[256];
    uint16_t nonce;
    struct nf_info info;
    int senders_inside;
    int expecting; /* replies the user waits for (nf_link_expect) */

    /* Send side. Frames with seq in [una, nxt) are queued; [una, sent) have been
     * written since the last go-back; [una, max) ever written. */
    struct tx_slot q[NF_LINK_MAX_SLOTS];
    uint8_t una, sent, max, nxt;
    uint32_t window;
    uint8_t *open_buf;   /* the open (deferred) frame; payload at NF_LINK_HDR_SIZE */
    size_t open_len;
    uint64_t open_gen;   /* counts frame closes: a sender knows its frame left */
    int open_push;       /* the open frame holds a message sent without defer: close it when
                            the window has room */
    uint64_t open_since_us; /* first message of the open frame (deferred bound) */
    struct pend *pend_head, *pend_tail; /* closed frames waiting for the window, in order */
    struct pend *pend_free;             /* spare nodes, each with a buffer */
    uint32_t npend;
    uint64_t rto_deadline_us; /* 0: timer off */
    unsigned backoff;
    uint32_t srtt_us, rttvar_us, rto_us; /* round trip of a smallest frame (frame_line_us) */
    uint32_t line_byte_ns;   /* the board's UART byte time from INFO (a floor) */
    uint32_t byte_ns_win, byte_ns_prev; /* smallest per-byte bound this window / the last */
    unsigned byte_samples;   /* RTT samples in this window */
    size_t min_wire;         /* smallest frame (bytes on the line) with an RTT sample */
    uint64_t reset_next_us;
    unsigned reset_backoff;
    size_t frame_cap;        /* batch messages into frames up to this payload */
    uint32_t cwnd;           /* frames allowed on the wire now (<= window), see on_loss */
    uint32_t ssthresh;       /* below it cwnd grows by one per acknowledged frame */
    unsigned cwnd_acks;      /* frames acknowledged towards the next cwnd step */
    unsigned dup_acks;       /* pure ACKs in a row naming una while frames are out */
    int fast_armed;          /* one fast go-back per loss: re-armed when una passes recover */
    uint8_t recover;         /* max when a frame was last sent again */
    unsigned clean_acks;     /* frames acknowledged since the last timeout */

    /* Receive side (link thread only, except rx_expect read under mu). */
    uint8_t rx_expect;
    int ack_owed;
    unsigned loss_acks;    /* pure ACKs to send now: signs of a lost board frame */
    uint64_t rx_losses;    /* signs of lost board frames so far (bad or out-of-turn frames) */
    uint64_t ack_deadline_us;
    unsigned frames_since_ack;
    uint64_t last_rx_us;   /* last good frame */
    uint64_t idle_mark_us; /* last moment nothing was awaited */
    struct nf_frame_decoder dec;

    struct nf_link_stats st;
    uint8_t wire[NF_FRAME_MAX_WIRE];
    uint8_t rxbuf[RX_CHUNK];
};

/* $NDKFPGA_LINK_TRACE set at open: one stderr line per timeout, fast go-back, ack. */
#define TRACE(l, ...)                                                                   \
    do {                                                                                \
        if ((l)->trace) {                                                               \
            fprintf(stderr, "link %p: ", (void *)(l));                                  \
            fprintf(stderr, __VA_ARGS__);                                               \
        }                                                                               \
    } while (0)

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static uint32_t queued(const struct nf_link *l)
{
    return (uint8_t)(l->nxt - l->una);
}

static int awaiting(const struct nf_link *l)
{
    return l->state == ST_RESETTING || queued(l) > 0 || l->expecting > 0 || l->pend_head != NULL ||
           (l->open_len > 0 && l->open_push);
}

static uint32_t current_rto(const struct nf_link *l)
{
    uint64_t r = (uint64_t)l->rto_us << (l->backoff > MAX_BACKOFF_SHIFT ? MAX_BACKOFF_SHIFT : l->backoff);
    return r > l->rto_max_us ? l->rto_max_us : (uint32_t)r;
}

/* A large frame's own time on the line can exceed a timeout learnt from small ones
 * (a 4 KiB frame at 3 MBd is 14 ms, and a simulated board runs ~100x slower than real
 * time), and a spurious go-back then resends it and makes everything behind it wait.
 * So a frame's timeout is the round-trip estimate plus the line time of the bytes it
 * has beyond the smallest frame measured (the round trips the estimate is made of),
 * and each RTT sample has that same excess taken off before it enters the estimate.
 * The time of one byte is measured, not assumed: a round trip carries at least the
 * frame's bytes one way and a pure ACK's back, so every RTT sample divided by those
 * bytes bounds the byte time from above at the board's real pace, whatever the
 * simulation's speed; the smallest recent bound is the estimate (it can only err
 * long, costing a later go-back, never a spurious one; frames of mixed sizes tighten
 * it). INFO's UART rate is the floor: no board moves bytes faster than its line. */
static uint32_t byte_ns(const struct nf_link *l)
{
    uint32_t b = l->byte_ns_win < l->byte_ns_prev ? l->byte_ns_win : l->byte_ns_prev;
    if (b == UINT32_MAX)
        b = 0; /* no sample yet: the initial RTO is long anyway */
    return b > l->line_byte_ns ? b : l->line_byte_ns;
}

static uint64_t frame_line_us(const struct nf_link *l, size_t wire_len)
{
    if (wire_len <= l->min_wire)
        return 0;
    return ((uint64_t)(wire_len - l->min_wire) * byte_ns(l) + 999u) / 1000u;
}

static void byte_time_sample(struct nf_link *l, uint64_t rtt_us, size_t wire_len)
{
    uint64_t ns = rtt_us * 1000u / (wire_len + ACK_WIRE_BYTES);
    uint32_t b = ns > UINT32_MAX - 1u ? UINT32_MAX - 1u : (uint32_t)ns;
    if (b < l->byte_ns_win)
        l->byte_ns_win = b;
    if (wire_len < l->min_wire)
        l->min_wire = wire_len;
    if (++l->byte_samples >= BYTE_TIME_WINDOW) {
        l->byte_ns_prev = l->byte_ns_win;
        l->byte_ns_win = UINT32_MAX;
        l->byte_samples = 0;
    }
}

/* Deadline for the oldest unacknowledged frame s, sent (or acked up to) at now. Its
 * excess line time counts twice: the ack may ride back in a reply frame as long as
 * the request (a PING echo, a batch of replies), and the byte-time estimate, tight
 * when the line dominates, leaves no other margin for jitter. */
static uint64_t frame_deadline(const struct nf_link *l, const struct tx_slot *s, uint64_t now)
{
    return now + current_rto(l) + 2u * frame_line_us(l, s->wire_len);
}

/* r: a round trip less the line time of the frame's bytes beyond the smallest one's. */
static void rtt_sample(struct nf_link *l, uint64_t r)
{
    if (r > 0xFFFFFFFFu)
        r = 0xFFFFFFFFu;
    uint32_t s = (uint32_t)r;
    if (l->srtt_us == 0) {
        l->srtt_us = s ? s : 1;
        l->rttvar_us = s / 2;
    } else {
        uint32_t diff = s > l->srtt_us ? s - l->srtt_us : l->srtt_us - s;
        l->rttvar_us = (uint32_t)(((uint64_t)l->rttvar_us * 3 + diff) / 4);
        l->srtt_us = (uint32_t)(((uint64_t)l->srtt_us * 7 + s) / 8);
    }
    uint64_t rto = (uint64_t)l->srtt_us + 4u * (uint64_t)l->rttvar_us;
    if (rto < l->rto_min_us)
        rto = l->rto_min_us;
    if (rto > l->rto_max_us)
        rto = l->rto_max_us;
    l->rto_us = (uint32_t)rto;
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
    pthread_cond_broadcast(&l->cv);
}

/* ---- frame handling (link thread) --------------------------------------- */

/* A frame was lost: halve what goes out at once, in frames and in batch size. The
 * board batches its replies to everything it received in one go, so fewer and
 * smaller frames from us also mean shorter frames back, which a lossy line lets
 * through far more often; without loss both grow back to the full window. */
static void on_loss(struct nf_link *l, int timeout)
{
    l->clean_acks = 0;
    l->cwnd_acks = 0;
    if (l->frame_cap / 2 >= FRAME_CAP_MIN)
        l->frame_cap /= 2;
    l->ssthresh = l->cwnd > 2 ? l->cwnd / 2 : 1;
    /* After a timeout only the oldest frame goes again: if the timer was early (a
     * simulation slower than estimated), the acks of the first copies arrive and
     * nothing else is sent twice. */
    l->cwnd = timeout ? 1 : l->ssthresh;
}

/* Apply a cumulative ack (under mu); pure is 1 for an ACK frame. */
static void take_ack(struct nf_link *l, uint8_t ack, int pure, uint64_t now)
{
    uint8_t adv = (uint8_t)(ack - l->una);
    TRACE(l, "%s ack %u: una %u sent %u max %u\n", pure ? "ACK" : "DATA", ack, l->una, l->sent, l->max);
    if (adv == 0) {
        if (pure && l->sent != l->una && ++l->dup_acks >= DUP_ACKS_FOR_FAST_RETRANSMIT && l->fast_armed) {
            l->sent = l->una; /* go back now; the timer restarts with the first resend */
            l->rto_deadline_us = 0;
            l->dup_acks = 0;
            l->st.fast_retransmits++;
            TRACE(l, "fast go-back: una %u sent %u max %u nxt %u cwnd %u\n", l->una, l->sent, l->max, l->nxt, l->cwnd);
            on_loss(l, 0);
        }
        return;
    }
    if (adv > (uint8_t)(l->max - l->una)) {
        l->st.ignored++; /* acknowledges something never sent: stale or corrupt-but-valid */
        return;
    }
    const struct tx_slot *newest = &l->q[(uint8_t)(ack - 1) % NF_LINK_MAX_SLOTS];
    if (!newest->resent && newest->rx_losses != l->rx_losses) {
        /* A board frame was lost while this one was out: its ack may have waited for
         * the board's retransmission (its timer, not the line), which would inflate
         * the estimate and with it every later timeout. No sample; but the frame went
         * once and got through, so the timer was long enough: the back-off ends. */
        l->backoff = 0;
    } else if (!newest->resent) {
        /* Karn: only a frame sent once gives a sample, and only a sample ends the
         * back-off (a simulation slower than estimated then gets a timeout long enough
         * for its acks to come back before we send everything again). */
        uint64_t rtt = now - newest->first_us;
        byte_time_sample(l, rtt, newest->wire_len);
        uint64_t line = frame_line_us(l, newest->wire_len);
        rtt_sample(l, rtt > line ? rtt - line : 0);
        l->backoff = 0;
    }
    if ((uint8_t)(l->sent - l->una) < adv)
        l->sent = ack; /* a go-back was pending over frames now acknowledged */
    l->una = ack;
    l->dup_acks = 0;
    /* Our resent copies make the board repeat its ack when they arrive; they are
     * all ahead of any frame first sent after them, so once such a frame is acked
     * (una passes recover) repeated acks mean loss again. */
    if (l->una != l->recover && (uint8_t)(l->una - l->recover) <= (uint8_t)(l->max - l->recover))
        l->fast_armed = 1;
    l->clean_acks += adv;
    if (l->clean_acks >= FRAME_CAP_GROW_AFTER && l->frame_cap < NF_LINK_MAX_PAYLOAD) {
        l->frame_cap = l->frame_cap * 2 > NF_LINK_MAX_PAYLOAD ? NF_LINK_MAX_PAYLOAD : l->frame_cap * 2;
        l->clean_acks = 0;
    }
    /* Slow start up to ssthresh, then one more frame per window acknowledged. */
    if (l->cwnd < l->ssthresh) {
        l->cwnd += adv;
    } else {
        l->cwnd_acks += adv;
        if (l->cwnd_acks >= l->cwnd) {
            l->cwnd++;
            l->cwnd_acks = 0;
        }
    }
    if (l->cwnd > l->window)
        l->cwnd = l->window;
    l->rto_deadline_us = (l->una != l->sent) ? frame_deadline(l, &l->q[l->una % NF_LINK_MAX_SLOTS], now) : 0;
    pthread_cond_broadcast(&l->cv);
}

/* Deliver the messages of an in-order DATA frame (no lock held). */
static void deliver(struct nf_link *l, const uint8_t *p, size_t len)
{
    size_t off = 0;
    while (off < len) {
        size_t m = len - off < NF_MSG_HDR_SIZE ? 0 : get16(p + off + NF_MSG_HDR_LEN_OFF);
        if (m < NF_MSG_HDR_SIZE || (m & 7u) != 0 || m > len - off) {
            pthread_mutex_lock(&l->mu);
            l->st.bad_msgs++; /* the sender is broken: skip the rest, keep the link */
            pthread_mutex_unlock(&l->mu);
            return;
        }
        pthread_mutex_lock(&l->mu);
        l->st.msgs_rx++;
        l->st.payload_rx += m;
        pthread_mutex_unlock(&l->mu);
        if (l->on_message)
            l->on_message(l->ctx, p + off, m);
        off += m;
    }
}

/* Check INFO from RESET_ACK (under mu); a bad one kills the link. */
static int valid_info(struct nf_link *l)
{
    const struct nf_info *i = &l->info;
    if (i->layout_version != NF_LAYOUT_VERSION) {
        set_dead(l, NF_STATUS_INVALID_DEVICE_STATE, "board speaks layout version %u, this library %u",
                 (unsigned)i->layout_version, (unsigned)NF_LAYOUT_VERSION);
        return 0;
    }
    if (i->rx_slots < 1 || i->rx_slots > NF_LINK_MAX_SLOTS || i->tx_slots < 1 || i->tx_slots > NF_LINK_MAX_SLOTS) {
        set_dead(l, NF_STATUS_INVALID_DEVICE_STATE, "board reports %u RX / %u TX slots (1..%u allowed)",
                 (unsigned)i->rx_slots, (unsigned)i->tx_slots, (unsigned)NF_LINK_MAX_SLOTS);
        return 0;
    }
    return 1;
}

static void handle_frame(struct nf_link *l, const uint8_t *f, size_t n, uint64_t now)
{
    uint8_t type = f[NF_LINK_HDR_TYPE_OFF];
    uint8_t seq = f[NF_LINK_HDR_SEQ_OFF];
    uint8_t ack = f[NF_LINK_HDR_ACK_OFF];
    uint16_t nonce = get16(f + NF_LINK_HDR_RSVD_OFF);
    const uint8_t *payload = f + NF_LINK_HDR_SIZE;
    size_t plen = n - NF_LINK_HDR_SIZE;

    pthread_mutex_lock(&l->mu);
    l->st.frames_rx++;
    if (l->state == ST_RESETTING) {
        if (type == NF_LINK_TYPE_RESET_ACK && nonce == l->nonce && plen >= NF_INFO_SIZE) {
            memcpy(&l->info, payload, NF_INFO_SIZE);
            l->last_rx_us = now;
            if (valid_info(l)) {
                uint32_t w = l->info.rx_slots > 1 ? l->info.rx_slots - 1 : 1;
                l->window = w < l->window_max ? w : l->window_max;
                l->cwnd = l->window;
                l->ssthresh = l->window;
                /* UART_PERIOD: clocks per bit, 12.4 fixed point */
                if (l->info.clk_hz)
                    l->line_byte_ns = (uint32_t)((uint64_t)UART_BITS_PER_BYTE * 1000000000u * l->info.uart_period /
                                                 ((uint64_t)l->info.clk_hz << NF_SOC_UART_PERIOD_FRAC));
                l->state = ST_UP;
                pthread_cond_broadcast(&l->cv);
            }
        } else {
            l->st.ignored++; /* leftovers of an earlier session, or a stale answer */
        }
        pthread_mutex_unlock(&l->mu);
        return;
    }
    if (l->state != ST_UP || (type != NF_LINK_TYPE_DATA && type != NF_LINK_TYPE_ACK) ||
        (type == NF_LINK_TYPE_ACK && plen != 0)) {
        l->st.ignored++;
        pthread_mutex_unlock(&l->mu);
        return;
    }
    l->last_rx_us = now;
    take_ack(l, ack, type == NF_LINK_TYPE_ACK, now);
    if (type == NF_LINK_TYPE_ACK) {
        pthread_mutex_unlock(&l->mu);
        return;
    }
    int in_order = seq == l->rx_expect;
    if (in_order) {
        l->rx_expect++;
        l->frames_since_ack++;
        if (!l->ack_owed)
            l->ack_deadline_us = now + l->ack_delay_us;
        /* Ack at once when half the board's window waits on us. */
        if (l->frames_since_ack * 2 >= l->info.tx_slots)
            l->ack_deadline_us = now;
    } else {
        l->st.dups++;
        l->rx_losses++;
        l->ack_deadline_us = now; /* the board is retransmitting: tell it where we are now */
        if ((uint8_t)(seq - l->rx_expect) < 128u &&
            l->loss_acks < LOSS_ACKS_MAX)
            l->loss_acks++; /* ahead of rx_expect: a gap */
    }
    l->ack_owed = 1;
    pthread_mutex_unlock(&l->mu);
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
    uint32_t limit = l->silence_us / 1000u ? l->silence_us / 1000u : 1u, waited = 0;
    uint32_t st;
    for (;;) {
        uint32_t slice = limit - waited < WRITE_SLICE_MS ? limit - waited : WRITE_SLICE_MS;
        st = nf_transport_write(l->t, l->wire, wire_len, (int)slice); /* limit >= 1 ms */
        waited += slice;
        if (st != NF_STATUS_IO_TIMEOUT || waited >= limit)
            break;
        pthread_mutex_lock(&l->mu);
        int closing = l->closing;
        pthread_mutex_unlock(&l->mu);
        if (closing)
            break;
    }
    pthread_mutex_lock(&l->mu);
    if (st == NF_STATUS_SUCCESS) {
        l->st.frames_tx++;
        l->st.wire_tx += wire_len;
    } else if (!l->closing) {
        set_dead(l, st, "link: writing to %s failed", l->t->name);
    }
    pthread_mutex_unlock(&l->mu);
    return st == NF_STATUS_SUCCESS;
}

static size_t encode_ctrl(struct nf_link *l, uint8_t type, uint16_t rsvd)
{
    uint8_t h[NF_LINK_HDR_SIZE] = {0};
    h[NF_LINK_HDR_TYPE_OFF] = type;
    h[NF_LINK_HDR_ACK_OFF] = l->rx_expect;
    put16(h + NF_LINK_HDR_RSVD_OFF, rsvd);
    return nf_frame_encode(h, sizeof(h), l->wire, sizeof(l->wire));
}

static void close_open_frame(struct nf_link *l);

/* Move a closed frame waiting for the window into sequence slot nxt (under mu). */
static void sequence_pending(struct nf_link *l)
{
    struct pend *p = l->pend_head;
    l->pend_head = p->next;
    if (!l->pend_head)
        l->pend_tail = NULL;
    l->npend--;
    struct tx_slot *s = &l->q[l->nxt % NF_LINK_MAX_SLOTS];
    uint8_t *b = s->buf;
    s->buf = p->buf;
    s->payload = p->payload;
    p->buf = b;
    p->next = l->pend_free;
    l->pend_free = p;
    if (queued(l) == 0 && l->expecting == 0)
        l->idle_mark_us = now_us();
    l->nxt++;
}

/* Fill the window from what senders left waiting (under mu, link thread): closed
 * frames first, in order, then the open frame when a message without defer is in
 * it or its first message has waited defer_max. */
static void pump(struct nf_link *l, uint64_t now)
{
    while (queued(l) < l->window) {
        if (l->pend_head)
            sequence_pending(l);
        else if (l->open_len > 0 &&
                 (l->open_push || (now > l->open_since_us && now - l->open_since_us >= l->defer_max_us)))
            close_open_frame(l);
        else
            break;
    }
}

/* Pick the next thing to write (under mu) and encode it into l->wire; returns its
 * length, 0 when nothing is due. *next_us gets the earliest future deadline. */
static size_t next_output(struct nf_link *l, uint64_t now, uint64_t *next_us)
{
    uint64_t next = now + (uint64_t)IDLE_POLL_MS * 1000u;
#define SOONER(t)          \
    do {                   \
        if ((t) < next)    \
            next = (t);    \
    } while (0)
    size_t len = 0;
    if (l->state == ST_RESETTING) {
        if (now >= l->reset_next_us) {
            len = encode_ctrl(l, NF_LINK_TYPE_RESET, l->nonce);
            l->st.resets_tx++;
            uint64_t r = (uint64_t)l->rto_initial_us << (l->reset_backoff > 16 ? 16 : l->reset_backoff);
            l->reset_next_us = now + (r > l->rto_max_us ? l->rto_max_us : r);
            l->reset_backoff++;
        }
        SOONER(l->reset_next_us);
    } else if (l->state == ST_UP) {
        pump(l, now);
        if (l->open_len > 0 && !l->pend_head && queued(l) < l->window)
            SOONER(l->open_since_us + l->defer_max_us);
        if (l->rto_deadline_us && now >= l->rto_deadline_us) {
            /* Go back N: everything unacknowledged goes again, oldest first. */
            l->st.timeouts++;
            l->backoff++;
            TRACE(l, "timeout: una %u sent %u max %u nxt %u cwnd %u rto %u us\n", l->una, l->sent, l->max, l->nxt,
                  l->cwnd, current_rto(l));
            on_loss(l, 1);
            l->sent = l->una;
            l->rto_deadline_us = 0;
            l->dup_acks = 0;
        }
        if (!l->loss_acks && l->sent != l->nxt && (uint8_t)(l->sent - l->una) < l->cwnd) {
            struct tx_slot *s = &l->q[l->sent % NF_LINK_MAX_SLOTS];
            uint8_t *h = s->buf;
            h[NF_LINK_HDR_TYPE_OFF] = NF_LINK_TYPE_DATA;
            h[NF_LINK_HDR_SEQ_OFF] = l->sent;
            h[NF_LINK_HDR_ACK_OFF] = l->rx_expect;
            h[NF_LINK_HDR_FLAGS_OFF] = 0;
            put16(h + NF_LINK_HDR_LEN_OFF, (uint16_t)s->payload);
            put16(h + NF_LINK_HDR_RSVD_OFF, 0);
            len = nf_frame_encode(h, NF_LINK_HDR_SIZE + s->payload, l->wire, sizeof(l->wire));
            s->wire_len = len;
            if ((uint8_t)(l->sent - l->una) < (uint8_t)(l->max - l->una)) {
                s->resent = 1;
                l->st.retransmits++;
                l->fast_armed = 0;
                l->recover = l->max;
            } else {
                s->first_us = now;
                s->resent = 0;
                s->rx_losses = l->rx_losses;
                l->max = (uint8_t)(l->sent + 1);
                l->st.data_tx++;
            }
            l->sent++;
            if (!l->rto_deadline_us)
                l->rto_deadline_us = frame_deadline(l, s, now); /* s is the oldest out */
            l->ack_owed = 0; /* this frame carries it */
            l->frames_since_ack = 0;
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
    pthread_mutex_lock(&l->mu);
    l->self = pthread_self();
    l->self_set = 1;
    pthread_mutex_unlock(&l->mu);
    for (;;) {
        pthread_mutex_lock(&l->mu);
        if (l->closing || l->state == ST_DEAD) {
            pthread_mutex_unlock(&l->mu);
            break;
        }
        was_up = l->state == ST_UP;
        uint64_t now = now_us(), next = now;
        size_t len = next_output(l, now, &next);
        int dead = l->state == ST_DEAD;
        pthread_mutex_unlock(&l->mu);
        if (dead)
            break;
        if (len > 0) {
            if (!write_frame(l, len))
                break;
            /* Keep writing while there is more; read what is there without waiting. */
            next = now;
        }
        uint64_t after = now_us();
        int timeout_ms = next > after ? (int)((next - after + 999u) / 1000u) : 0;
        ssize_t n = nf_transport_read(l->t, l->rxbuf, sizeof(l->rxbuf), timeout_ms);
        if (n < 0) {
            pthread_mutex_lock(&l->mu);
            if (!l->closing)
                set_dead(l, NF_STATUS_CONNECTION_RESET, "link: %s closed the connection", l->t->name);
            pthread_mutex_unlock(&l->mu);
            break;
        }
        if (n == 0)
            continue;
        uint64_t t_rx = now_us();
        uint64_t bad = 0;
        for (ssize_t i = 0; i < n; i++) {
            enum nf_frame_result r = nf_frame_decode_byte(&l->dec, l->rxbuf[i]);
            if (r == NF_FRAME_OK)
                handle_frame(l, l->dec.buf, l->dec.len, t_rx);
            else if (r == NF_FRAME_BAD)
                bad++;
        }
        pthread_mutex_lock(&l->mu);
        l->st.wire_rx += (uint64_t)n;
        l->st.bad_frames += bad;
        l->rx_losses += bad;
        if (bad && l->state == ST_UP)
            l->loss_acks = bad >= LOSS_ACKS_MAX ? LOSS_ACKS_MAX : (unsigned)bad > l->loss_acks ? (unsigned)bad : l->loss_acks;
        pthread_mutex_unlock(&l->mu);
    }
    /* Death is announced after every sender has been woken (set_dead broadcast). */
    pthread_mutex_lock(&l->mu);
    int call = l->state == ST_DEAD && !l->closing && was_up && l->on_dead;
    uint32_t status = l->dead_status;
    pthread_mutex_unlock(&l->mu);
    if (call)
        l->on_dead(l->ctx, status);
    return NULL;
}

/* ---- API ------------------------------------------------------------------- */

static uint32_t env_u32(const char *name, uint32_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    return (*end == '\0' && n > 0 && n <= 0xFFFFFFFFul / 1000u) ? (uint32_t)n : dflt;
}

static void free_link(struct nf_link *l)
{
    for (unsigned i = 0; i < NF_LINK_MAX_SLOTS; i++)
        free(l->q[i].buf);
    free(l->open_buf);
    for (int k = 0; k < 2; k++) {
        struct pend *p = k ? l->pend_free : l->pend_head;
        while (p) {
            struct pend *n = p->next;
            free(p->buf);
            free(p);
            p = n;
        }
    }
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    free(l);
}

uint32_t nf_link_open(struct nf_transport *t, nf_link_on_message on_message, nf_link_on_dead on_dead, void *ctx,
                      struct nf_link **out, struct nf_info *info)
{
    struct nf_link_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.silence_ms = env_u32("NDKFPGA_LINK_TIMEOUT_MS", 0);
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
    struct nf_link_config c;
    memset(&c, 0, sizeof(c));
    if (cfg)
        c = *cfg;
    struct nf_link *l = calloc(1, sizeof(*l));
    if (!l) {
        nf_transport_close(t);
        return nf_set_error(NF_STATUS_INSUFFICIENT_RESOURCES, "out of memory for the link");
    }
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    l->t = t;
    l->on_message = on_message;
    l->on_dead = on_dead;
    l->ctx = ctx;
    l->trace = getenv("NDKFPGA_LINK_TRACE") != NULL;
    l->silence_us = (c.silence_ms ? c.silence_ms : DEFAULT_SILENCE_MS) * 1000u;
    l->rto_initial_us = (c.rto_initial_ms ? c.rto_initial_ms : DEFAULT_RTO_INITIAL_MS) * 1000u;
    l->rto_min_us = (c.rto_min_ms ? c.rto_min_ms : DEFAULT_RTO_MIN_MS) * 1000u;
    l->rto_max_us = (c.rto_max_ms ? c.rto_max_ms : DEFAULT_RTO_MAX_MS) * 1000u;
    if (l->rto_max_us < l->rto_min_us)
        l->rto_max_us = l->rto_min_us;
    l->ack_delay_us = c.ack_delay_us ? c.ack_delay_us : DEFAULT_ACK_DELAY_US;
    l->defer_max_us = c.defer_max_us ? c.defer_max_us : DEFAULT_DEFER_MAX_US;
    l->window_max = (c.window_max && c.window_max < NF_LINK_MAX_SLOTS) ? c.window_max : NF_LINK_MAX_SLOTS;
    l->rto_us = l->rto_initial_us;
    l->frame_cap = NF_LINK_MAX_PAYLOAD;
    l->byte_ns_win = l->byte_ns_prev = UINT32_MAX;
    l->min_wire = SIZE_MAX;
    l->fast_armed = 1;
    if (c.nonce) {
        l->nonce = (uint16_t)(c.nonce - 1);
    } else if (getrandom(&l->nonce, sizeof(l->nonce), 0) != (ssize_t)sizeof(l->nonce)) {
        l->nonce = (uint16_t)(now_us() ^ (uint64_t)getpid());
    }
    nf_frame_decoder_init(&l->dec);
    int oom = 0;
    for (unsigned i = 0; i < NF_LINK_MAX_SLOTS; i++)
        oom |= !(l->q[i].buf = malloc(NF_FRAME_MAX_RAW));
    oom |= !(l->open_buf = malloc(NF_FRAME_MAX_RAW));
    if (oom) {
        nf_transport_close(t);
        free_link(l);
        return nf_set_error(NF_STATUS_INSUFFICIENT_RESOURCES, "out of memory for link buffers");
    }
    uint64_t now = now_us();
    l->last_rx_us = now;
    l->idle_mark_us = now;
    l->state = ST_RESETTING;
    if (pthread_create(&l->thread, NULL, link_thread, l) != 0) {
        nf_transport_close(t);
        free_link(l);
        return nf_set_error(NF_STATUS_INSUFFICIENT_RESOURCES, "cannot start the link thread");
    }
    pthread_mutex_lock(&l->mu);
    while (l->state == ST_RESETTING)
        pthread_cond_wait(&l->cv, &l->mu);
    uint32_t st = l->state == ST_UP ? NF_STATUS_SUCCESS : l->dead_status;
    pthread_mutex_unlock(&l->mu);
    if (st != NF_STATUS_SUCCESS) {
        pthread_join(l->thread, NULL);
        nf_transport_close(t);
        nf_error_set_text(l->dead_msg); /* the reason was recorded on the link thread */
        free_link(l);
        return st;
    }
    if (info)
        *info = l->info;
    *out = l;
    return NF_STATUS_SUCCESS;
}

/* Close the open frame into the queue (under mu; the caller checked for room). */
static void close_open_frame(struct nf_link *l)
{
    struct tx_slot *s = &l->q[l->nxt % NF_LINK_MAX_SLOTS];
    uint8_t *b = s->buf;
    s->buf = l->open_buf;
    s->payload = l->open_len;
    l->open_buf = b;
    l->open_len = 0;
    l->open_push = 0;
    l->open_gen++;
    if (queued(l) == 0 && l->expecting == 0)
        l->idle_mark_us = now_us(); /* the silence clock starts now, not at the last frame */
    l->nxt++;
    nf_transport_wake(l->t);
}

/* Whether the link takes messages (under mu). */
static uint32_t usable(const struct nf_link *l)
{
    if (l->closing)
        return NF_STATUS_CANCELLED;
    if (l->state != ST_UP)
        return l->dead_status ? l->dead_status : NF_STATUS_INVALID_DEVICE_STATE;
    return NF_STATUS_SUCCESS;
}

/* Wait for the window (under mu). Returns SUCCESS, or why not. */
static uint32_t wait_room(struct nf_link *l, int on_link_thread)
{
    while (l->state == ST_UP && !l->closing && (queued(l) >= l->window || l->pend_head)) {
        if (on_link_thread)
            return NF_STATUS_INSUFFICIENT_RESOURCES;
        pthread_cond_wait(&l->cv, &l->mu);
    }
    return usable(l);
}

/* Under l->mu: copies a message of len bytes (the parts) to the end of the open
 * frame, which has room for it, and counts it. */
static void append_open(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, size_t len)
{
    uint8_t *dst = l->open_buf + NF_LINK_HDR_SIZE + l->open_len;
    for (size_t i = 0; i < nparts; i++) {
        if (parts[i].len)
            memcpy(dst, parts[i].data, parts[i].len);
        dst += parts[i].len;
    }
    l->open_len += len;
    l->st.msgs_tx++;
    l->st.payload_tx += len;
}

static uint32_t send_common(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, size_t len, int defer,
                            int flush_only)
{
    pthread_mutex_lock(&l->mu);
    int on_link_thread = l->self_set && pthread_equal(pthread_self(), l->self);
    l->senders_inside++;
    uint32_t st = NF_STATUS_SUCCESS;
    if (!flush_only) {
        /* A message that does not fit closes the open frame first (a message
         * longer than the batching cap still travels, alone). */
        while (l->open_len > 0 && l->open_len + len > l->frame_cap) {
            st = wait_room(l, on_link_thread);
            if (st != NF_STATUS_SUCCESS)
                goto out;
            if (l->open_len > 0 && l->open_len + len > l->frame_cap)
                close_open_frame(l);
        }
        st = usable(l); /* appending needs no room in the window */
        if (st != NF_STATUS_SUCCESS)
            goto out;
        if (l->open_len == 0)
            l->open_since_us = now_us();
        append_open(l, parts, nparts, len);
        if (defer)
            goto out;
    }
    /* Close the frame holding our message unless another sender already did. */
    uint64_t gen = l->open_gen;
    while (l->open_gen == gen && l->open_len > 0) {
        st = wait_room(l, on_link_thread);
        if (st != NF_STATUS_SUCCESS)
            goto out;
        if (l->open_gen == gen && l->open_len > 0)
            close_open_frame(l);
    }
out:
    l->senders_inside--;
    if (l->closing)
        pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return st;
}

uint32_t nf_link_sendv(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, int defer)
{
    if (!l || (!parts && nparts))
        return nf_set_error(NF_STATUS_INVALID_PARAMETER, "nf_link_send: NULL link or parts");
    size_t len = 0;
    uint8_t hdr[NF_MSG_HDR_LEN_OFF + 2];
    size_t got = 0;
    for (size_t i = 0; i < nparts; i++) {
        if (!parts[i].data && parts[i].len)
            return nf_set_error(NF_STATUS_INVALID_PARAMETER, "nf_link_send: part %zu is NULL", i);
        if (parts[i].len > NF_LINK_MAX_PAYLOAD || len + parts[i].len > NF_LINK_MAX_PAYLOAD) {
            len = NF_LINK_MAX_PAYLOAD + 1;
            break;
        }
        for (size_t j = 0; j < parts[i].len && got < sizeof(hdr); j++)
            hdr[got++] = ((const uint8_t *)parts[i].data)[j];
        len += parts[i].len;
    }
    if (len < NF_MSG_HDR_SIZE || len > NF_LINK_MAX_PAYLOAD || (len & 7u) != 0)
        return nf_set_error(NF_STATUS_INVALID_PARAMETER,
                            "nf_link_send: message of %zu bytes (must be %u..%u and a multiple of 8)", len,
                            (unsigned)NF_MSG_HDR_SIZE, (unsigned)NF_LINK_MAX_PAYLOAD);
    if (get16(hdr + NF_MSG_HDR_LEN_OFF) != len)
        return nf_set_error(NF_STATUS_INVALID_PARAMETER, "nf_link_send: MSG_HDR.len %u but %zu bytes given",
                            (unsigned)get16(hdr + NF_MSG_HDR_LEN_OFF), len);
    return send_common(l, parts, nparts, len, defer, 0);
}

uint32_t nf_link_send(struct nf_link *l, const void *msg, size_t len, int defer)
{
    struct nf_link_part p = {msg, len};
    return nf_link_sendv(l, &p, 1, defer);
}

uint32_t nf_link_flush(struct nf_link *l)
{
    if (!l)
        return nf_set_error(NF_STATUS_INVALID_PARAMETER, "nf_link_flush: NULL link");
    return send_common(l, NULL, 0, 0, 0, 1);
}

/* Close the open frame without waiting (under mu): into the window when it has room
 * and nothing waits before it, else onto the pending list. 0: out of memory. */
static int seal_open(struct nf_link *l)
{
    if (queued(l) < l->window && !l->pend_head) {
        close_open_frame(l);
        return 1;
    }
    struct pend *p = l->pend_free;
    if (p) {
        l->pend_free = p->next;
    } else {
        p = malloc(sizeof(*p));
        uint8_t *b = p ? malloc(NF_FRAME_MAX_RAW) : NULL;
        if (!b) {
            free(p);
            return 0;
        }
        p->buf = b;
    }
    uint8_t *b = p->buf;
    p->buf = l->open_buf;
    p->payload = l->open_len;
    p->next = NULL;
    l->open_buf = b;
    l->open_len = 0;
    l->open_push = 0;
    l->open_gen++;
    if (l->pend_tail)
        l->pend_tail->next = p;
    else
        l->pend_head = p;
    l->pend_tail = p;
    l->npend++;
    return 1;
}

uint32_t nf_link_post(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, size_t len, int defer)
{
    pthread_mutex_lock(&l->mu);
    uint32_t st = usable(l);
    if (st != NF_STATUS_SUCCESS)
        goto out;
    if (len) {
        if (l->open_len > 0 && l->open_len + len > l->frame_cap && !seal_open(l)) {
            st = NF_STATUS_INSUFFICIENT_RESOURCES;
            goto out;
        }
        int first = l->open_len == 0;
        append_open(l, parts, nparts, len);
        if (defer) {
            if (first) {
                l->open_since_us = now_us();
                nf_transport_wake(l->t); /* the deferred bound's timer */
            }
            goto out;
        }
    }
    if (l->open_len == 0)
        goto out;
    if (queued(l) < l->window && !l->pend_head) {
        close_open_frame(l);
    } else {
        l->open_push = 1; /* the link thread closes it when the window opens */
        if (queued(l) == 0 && l->expecting == 0 && !l->pend_head)
            l->idle_mark_us = now_us();
    }
out:
    pthread_mutex_unlock(&l->mu);
    return st;
}

void nf_link_expect(struct nf_link *l, int delta)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    int was = l->expecting > 0 || queued(l) > 0;
    l->expecting += delta;
    if (l->expecting < 0)
        l->expecting = 0;
    if (!was && l->expecting > 0)
        l->idle_mark_us = now_us();
    pthread_mutex_unlock(&l->mu);
    nf_transport_wake(l->t); /* the deadline may have changed */
}

uint32_t nf_link_status(struct nf_link *l)
{
    if (!l)
        return NF_STATUS_INVALID_PARAMETER;
    pthread_mutex_lock(&l->mu);
    uint32_t st = l->state == ST_DEAD ? l->dead_status : NF_STATUS_SUCCESS;
    pthread_mutex_unlock(&l->mu);
    return st;
}

const char *nf_link_dead_reason(struct nf_link *l)
{
    if (!l)
        return "";
    pthread_mutex_lock(&l->mu);
    const char *r = l->state == ST_DEAD ? l->dead_msg : "";
    pthread_mutex_unlock(&l->mu);
    return r; /* stable once dead: written once, before the state changed */
}

void nf_link_get_stats(struct nf_link *l, struct nf_link_stats *out)
{
    if (!l || !out)
        return;
    pthread_mutex_lock(&l->mu);
    *out = l->st;
    out->window = l->window;
    out->srtt_us = l->srtt_us;
    out->rttvar_us = l->rttvar_us;
    out->rto_us = current_rto(l);
    out->frame_cap = (uint32_t)l->frame_cap;
    out->byte_ns = byte_ns(l);
    out->cwnd = l->cwnd;
    pthread_mutex_unlock(&l->mu);
}

void nf_link_close(struct nf_link *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->closing = 1;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    nf_transport_wake(l->t);
    pthread_join(l->thread, NULL);
    pthread_mutex_lock(&l->mu);
    while (l->senders_inside > 0)
        pthread_cond_wait(&l->cv, &l->mu);
    pthread_mutex_unlock(&l->mu);
    nf_transport_close(l->t);
    free_link(l);
}
