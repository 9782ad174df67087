/* Host side of the reliable link: go-back-N with cumulative acks over a point-to-point
 * line of known rate (see nf_link.h and docs/architecture.md "The link"). All
 * transport I/O happens on the link thread; senders only fill frames under the mutex
 * and wake it. */
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
 * a per-byte error rate p with (1-p)^len), so every loss halves the size the link
 * batches messages up to, and a run of clean acks doubles it again (the board does
 * the same with its replies). */
#define FRAME_CAP_MIN 128u
#define FRAME_CAP_GROW_AFTER 16u
/* Pure ACKs repeating the oldest unacknowledged sequence that make the sender go
 * back at once instead of waiting for the timer: the byte stream keeps order, so
 * the board only repeats an ack when a later frame arrived after a lost one. The
 * board follows the same rule, so every sign of a lost board frame (a bad frame, a
 * DATA frame out of turn) makes us send a pure ACK at once, ahead of queued DATA;
 * two make the board go back. */
#define DUP_ACKS_FOR_FAST_RETRANSMIT 2u
#define LOSS_ACKS_MAX 2u
/* Consecutive timeouts double the timeout at most this many times. */
#define MAX_BACKOFF_SHIFT 3u
/* The line's pace: each acknowledged frame bounds the time of one byte from above
 * (its round trip carried at least its own bytes and an ACK's); the smallest of the
 * last PACE_SAMPLES bounds is the pace, never below the UART rate INFO names. A real
 * board runs at that rate; a simulated one is ~70x slower in wall time, and this is
 * how the link learns so without any tuning. */
#define PACE_SAMPLES 8u
#define ACK_WIRE_BYTES (2u + NF_LINK_HDR_SIZE + 4u)
/* The board frame that may be on the line when our frame arrives: the ack for it
 * rides on the next one. */
#define BOARD_FRAME_WIRE (2u + NF_FRAME_MAX_RAW)
#define UART_BITS_PER_BYTE 10u

enum link_state { ST_RESETTING, ST_UP, ST_DEAD };

struct tx_slot {
    uint8_t *buf;      /* NF_FRAME_MAX_RAW bytes: header is filled at each transmission */
    size_t payload;    /* payload bytes after the header */
    size_t wire_len;   /* bytes on the line at its last transmission (stuffed, flags) */
    uint64_t first_us; /* time of the first transmission: its round trip bounds the pace */
};

/* A closed frame waiting for the window (senders never wait for it to open). */
struct pend {
    struct pend *next;
    uint8_t *buf; /* NF_FRAME_MAX_RAW bytes; payload at NF_LINK_HDR_SIZE */
    size_t payload;
};

struct nf_link {
    struct nf_transport *t;
    nf_link_on_message on_message;
    nf_link_on_dead on_dead;
    void *ctx;
    uint32_t silence_us, rto_initial_us, turnaround_us, rto_max_us, ack_delay_us, window_max, defer_max_us;

    pthread_t thread;
    pthread_t self; /* the link thread as it sees itself (set under mu) */
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
    uint8_t *open_buf; /* the open (deferred) frame; payload at NF_LINK_HDR_SIZE */
    size_t open_len;
    int open_push;           /* holds a message sent without defer: close it when the window has room */
    uint64_t open_since_us;  /* first message of the open frame (deferred bound) */
    struct pend *pend_head, *pend_tail; /* closed frames waiting for the window, in order */
    struct pend *pend_free;             /* spare nodes, each with a buffer */
    uint64_t rto_deadline_us; /* 0: timer off */
    unsigned backoff;         /* timeouts since the last progress */
    uint32_t line_byte_ns;    /* the board's UART byte time from INFO (a floor) */
    uint32_t pace_ns[PACE_SAMPLES]; /* the last bounds of the byte time */
    unsigned pace_next;
    uint64_t reset_next_us;
    unsigned reset_backoff;
    size_t frame_cap;     /* batch messages into frames up to this payload */
    unsigned clean_acks;  /* frames acknowledged since the last loss */
    unsigned dup_acks;    /* pure ACKs in a row naming una while frames are out */
    int fast_armed;       /* one fast go-back per loss: re-armed when una passes recover */
    uint8_t recover;      /* max when a frame was last sent again */

    /* Receive side (link thread only). */
    uint8_t rx_expect;
    int ack_owed;
    unsigned loss_acks;    /* pure ACKs to send now: signs of a lost board frame */
    uint64_t ack_deadline_us;
    unsigned frames_since_ack;
    uint64_t last_rx_us;   /* last good frame */
    uint64_t idle_mark_us; /* last moment nothing was awaited */
    struct nf_frame_decoder dec;

    struct nf_link_stats st;
    uint8_t wire[NF_FRAME_MAX_WIRE];
    uint8_t rxbuf[RX_CHUNK];
};

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

/* The silence clock starts when something is first awaited, not at the last frame. */
static void mark_busy(struct nf_link *l)
{
    if (!awaiting(l))
        l->idle_mark_us = now_us();
}

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
    pthread_cond_broadcast(&l->cv);
}

/* ---- frame handling (link thread) --------------------------------------- */

/* A frame was lost: batch smaller (fewer bytes to lose per frame). */
static void on_loss(struct nf_link *l)
{
    l->clean_acks = 0;
    if (l->frame_cap / 2 >= FRAME_CAP_MIN)
        l->frame_cap /= 2;
}

/* Go back N (under mu): everything unacknowledged goes again, oldest first. */
static void go_back(struct nf_link *l)
{
    l->sent = l->una;
    l->rto_deadline_us = 0; /* restarts with the first frame sent again */
    l->dup_acks = 0;
    on_loss(l);
}

/* Apply a cumulative ack (under mu); pure is 1 for an ACK frame. */
static void take_ack(struct nf_link *l, uint8_t ack, int pure, uint64_t now)
{
    uint8_t adv = (uint8_t)(ack - l->una);
    if (adv == 0) {
        if (pure && l->sent != l->una && ++l->dup_acks >= DUP_ACKS_FOR_FAST_RETRANSMIT && l->fast_armed) {
            l->st.fast_retransmits++;
            go_back(l);
        }
        return;
    }
    if (adv > (uint8_t)(l->max - l->una)) {
        l->st.ignored++; /* acknowledges something never sent: stale or corrupt-but-valid */
        return;
    }
    /* The newest frame acknowledged bounds the byte time: measured from its first
     * transmission, so a frame sent again only makes the bound looser, never wrong. */
    const struct tx_slot *newest = &l->q[(uint8_t)(ack - 1) % NF_LINK_MAX_SLOTS];
    uint64_t ns = (now - newest->first_us) * 1000u / (newest->wire_len + ACK_WIRE_BYTES);
    l->pace_ns[l->pace_next++ % PACE_SAMPLES] = ns < UINT32_MAX ? (uint32_t)ns : UINT32_MAX - 1u;
    if ((uint8_t)(l->sent - l->una) < adv)
        l->sent = ack; /* a go-back was pending over frames now acknowledged */
    l->una = ack;
    l->dup_acks = 0;
    l->backoff = 0;
    /* Our resent copies make the board repeat its ack when they arrive; they are all
     * ahead of any frame first sent after them, so once such a frame is acked (una
     * passes recover) repeated acks mean loss again. */
    if (l->una != l->recover && (uint8_t)(l->una - l->recover) <= (uint8_t)(l->max - l->recover))
        l->fast_armed = 1;
    l->clean_acks += adv;
    if (l->clean_acks >= FRAME_CAP_GROW_AFTER && l->frame_cap < NF_LINK_MAX_PAYLOAD) {
        l->frame_cap = l->frame_cap * 2 > NF_LINK_MAX_PAYLOAD ? NF_LINK_MAX_PAYLOAD : l->frame_cap * 2;
        l->clean_acks = 0;
    }
    restart_timer(l, now);
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
    const uint8_t *payload = f + NF_LINK_HDR_SIZE;
    size_t plen = n - NF_LINK_HDR_SIZE;

    pthread_mutex_lock(&l->mu);
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
        l->ack_deadline_us = now; /* the board is retransmitting: tell it where we are now */
        if ((uint8_t)(seq - l->rx_expect) < 128u && l->loss_acks < LOSS_ACKS_MAX)
            l->loss_acks++; /* ahead of rx_expect: a gap */
    }
    l->ack_owed |= type == NF_LINK_TYPE_DATA;
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
static void close_open_frame(struct nf_link *l)
{
    sequence(l, &l->open_buf, l->open_len);
    l->open_len = 0;
    l->open_push = 0;
    nf_transport_wake(l->t);
}

/* Fill the window from what senders left waiting (under mu, link thread): closed
 * frames first, in order, then the open frame when a message without defer is in
 * it or its first message has waited defer_max. */
static void pump(struct nf_link *l, uint64_t now)
{
    while (queued(l) < l->window) {
        struct pend *p = l->pend_head;
        if (p) {
            l->pend_head = p->next;
            if (!l->pend_head)
                l->pend_tail = NULL;
            sequence(l, &p->buf, p->payload);
            p->next = l->pend_free;
            l->pend_free = p;
        } else if (l->open_len > 0 &&
                   (l->open_push || (now > l->open_since_us && now - l->open_since_us >= l->defer_max_us))) {
            close_open_frame(l);
        } else {
            break;
        }
    }
}

/* Encode DATA frame seq sent into l->wire (under mu); returns its length. */
static size_t encode_data(struct nf_link *l, uint64_t now)
{
    struct tx_slot *s = &l->q[l->sent % NF_LINK_MAX_SLOTS];
    uint8_t *h = s->buf;
    memset(h, 0, NF_LINK_HDR_SIZE);
    h[NF_LINK_HDR_TYPE_OFF] = NF_LINK_TYPE_DATA;
    h[NF_LINK_HDR_SEQ_OFF] = l->sent;
    h[NF_LINK_HDR_ACK_OFF] = l->rx_expect;
    put16(h + NF_LINK_HDR_LEN_OFF, (uint16_t)s->payload);
    s->wire_len = nf_frame_encode(h, NF_LINK_HDR_SIZE + s->payload, l->wire, sizeof(l->wire));
    if (l->sent != l->max) {
        l->st.retransmits++;
        l->fast_armed = 0;
        l->recover = l->max;
    } else {
        s->first_us = now;
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
            uint64_t r = (uint64_t)l->rto_initial_us << (l->reset_backoff > 16 ? 16 : l->reset_backoff++);
            l->reset_next_us = now + (r > l->rto_max_us ? l->rto_max_us : r);
        }
        SOONER(l->reset_next_us);
    } else if (l->state == ST_UP) {
        pump(l, now);
        if (l->open_len > 0 && !l->pend_head && queued(l) < l->window)
            SOONER(l->open_since_us + l->defer_max_us);
        if (l->rto_deadline_us && now >= l->rto_deadline_us) {
            l->st.timeouts++;
            l->backoff++;
            go_back(l);
        }
        if (!l->loss_acks && l->sent != l->nxt) {
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
    pthread_mutex_lock(&l->mu);
    l->self = pthread_self();
    l->self_set = 1;
    pthread_mutex_unlock(&l->mu);
    for (;;) {
        pthread_mutex_lock(&l->mu);
        was_up = l->state == ST_UP;
        uint64_t now = now_us(), next = now;
        size_t len = l->closing || l->state == ST_DEAD ? 0 : next_output(l, now, &next);
        int stop = l->closing || l->state == ST_DEAD;
        pthread_mutex_unlock(&l->mu);
        if (stop || (len > 0 && !write_frame(l, len)))
            break;
        if (len > 0)
            next = now; /* keep writing while there is more; read what is there without waiting */
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
        uint64_t t_rx = now_us();
        unsigned bad = 0;
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
        if (bad && l->state == ST_UP && l->loss_acks < LOSS_ACKS_MAX)
            l->loss_acks = bad >= LOSS_ACKS_MAX ? LOSS_ACKS_MAX : bad > l->loss_acks ? bad : l->loss_acks;
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
    l->silence_us = (c.silence_ms ? c.silence_ms : DEFAULT_SILENCE_MS) * 1000u;
    l->rto_initial_us = (c.rto_initial_ms ? c.rto_initial_ms : DEFAULT_RTO_INITIAL_MS) * 1000u;
    l->turnaround_us = (c.rto_min_ms ? c.rto_min_ms : NF_LINK_TURNAROUND_MS) * 1000u;
    l->rto_max_us = (c.rto_max_ms ? c.rto_max_ms : DEFAULT_RTO_MAX_MS) * 1000u;
    if (l->rto_max_us < l->turnaround_us)
        l->rto_max_us = l->turnaround_us;
    l->ack_delay_us = c.ack_delay_us ? c.ack_delay_us : DEFAULT_ACK_DELAY_US;
    l->defer_max_us = c.defer_max_us ? c.defer_max_us : DEFAULT_DEFER_MAX_US;
    l->window_max = (c.window_max && c.window_max < NF_LINK_MAX_SLOTS) ? c.window_max : NF_LINK_MAX_SLOTS;
    l->frame_cap = NF_LINK_MAX_PAYLOAD;
    for (unsigned i = 0; i < PACE_SAMPLES; i++)
        l->pace_ns[i] = UINT32_MAX;
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
    l->last_rx_us = l->idle_mark_us = now_us();
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

/* Whether the link takes messages (under mu). */
static uint32_t usable(const struct nf_link *l)
{
    if (l->closing)
        return NF_STATUS_CANCELLED;
    if (l->state != ST_UP)
        return l->dead_status ? l->dead_status : NF_STATUS_INVALID_DEVICE_STATE;
    return NF_STATUS_SUCCESS;
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
    if (l->pend_tail)
        l->pend_tail->next = p;
    else
        l->pend_head = p;
    l->pend_tail = p;
    return 1;
}

/* Every way in: append a message of len bytes (len 0: none) to the open frame and,
 * without defer, close it. wait: first wait for room in the window (a blocking
 * sender; on the link thread itself a full window fails instead). */
static uint32_t enqueue(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, size_t len, int defer,
                        int wait)
{
    pthread_mutex_lock(&l->mu);
    l->senders_inside++;
    uint32_t st = usable(l);
    while (wait && st == NF_STATUS_SUCCESS && (queued(l) >= l->window || l->pend_head)) {
        if (l->self_set && pthread_equal(pthread_self(), l->self)) {
            st = NF_STATUS_INSUFFICIENT_RESOURCES;
            break;
        }
        pthread_cond_wait(&l->cv, &l->mu);
        st = usable(l);
    }
    if (st != NF_STATUS_SUCCESS)
        goto out;
    if (len) {
        /* A message that does not fit closes the open frame first (a message longer
         * than the batching cap still travels, alone). */
        if (l->open_len > 0 && l->open_len + len > l->frame_cap && !seal_open(l)) {
            st = NF_STATUS_INSUFFICIENT_RESOURCES;
            goto out;
        }
        if (l->open_len == 0) {
            l->open_since_us = now_us();
            if (defer && !wait)
                nf_transport_wake(l->t); /* nf_link_post: the deferred bound's timer */
        }
        uint8_t *dst = l->open_buf + NF_LINK_HDR_SIZE + l->open_len;
        for (size_t i = 0; i < nparts; i++) {
            if (parts[i].len)
                memcpy(dst, parts[i].data, parts[i].len);
            dst += parts[i].len;
        }
        l->open_len += len;
        l->st.msgs_tx++;
        l->st.payload_tx += len;
        if (defer)
            goto out;
    }
    if (l->open_len == 0)
        goto out;
    if (queued(l) < l->window && !l->pend_head) {
        close_open_frame(l);
    } else {
        mark_busy(l);
        l->open_push = 1; /* the link thread closes it when the window opens */
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
    return enqueue(l, parts, nparts, len, defer, 1);
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
    return enqueue(l, NULL, 0, 0, 0, 1);
}

uint32_t nf_link_post(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, size_t len, int defer)
{
    return enqueue(l, parts, nparts, len, defer, 0);
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
    out->rto_us = (uint32_t)frame_rto(l, l->una != l->sent ? l->q[l->una % NF_LINK_MAX_SLOTS].wire_len : 0);
    out->frame_cap = (uint32_t)l->frame_cap;
    out->byte_ns = byte_ns(l);
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
