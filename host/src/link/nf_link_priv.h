/* SPDX-License-Identifier: Apache-2.0 */
/* The link's state, shared by its three parts: its life and I/O (nf_link.c: open,
 * the link thread, close), its protocol (nf_link_arq.c: acks, window, retransmission,
 * pace) and the way messages enter frames (nf_link_send.c). Not part of the library
 * API. */
#ifndef NF_LINK_PRIV_H
#define NF_LINK_PRIV_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "nf_frame.h"
#include "nf_link.h"
#include "nf_lock.h"

#define RX_CHUNK 16384
#define PACE_SAMPLES 8u /* see byte_ns() in nf_link.c */

enum link_state { ST_RESETTING, ST_UP, ST_DEAD };

struct tx_slot {
    uint8_t *buf;      /* NF_FRAME_MAX_RAW bytes: header is filled at each transmission */
    size_t payload;    /* payload bytes after the header */
    size_t wire_len;   /* bytes on the line at its last transmission (stuffed, flags) */
    uint64_t first_us; /* time of the first transmission: its round trip bounds the pace */
    uint64_t losses;   /* the link's losses then: a loss since spoils the sample */
    int resent;        /* sent more than once: no sample */
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

    pthread_t thread, self; /* self: the link thread as it sees itself (set under mu) */
    int self_set;
    struct nf_mutex mu;
    struct nf_cond cv; /* state changes, window space, senders leaving */
    enum link_state state;
    int closing, senders_inside;
    int expecting; /* replies the user waits for (nf_link_expect) */
    NTSTATUS dead_status;
    char dead_msg[256];
    uint16_t nonce;
    struct nf_info info;

    /* Send side. Frames with seq in [una, nxt) are queued; [una, sent) have been
     * written since the last go-back; [una, max) ever written. */
    struct tx_slot q[NF_LINK_MAX_SLOTS];
    uint8_t una, sent, max, nxt;
    uint32_t window;
    uint8_t *open_buf; /* the open (deferred) frame; payload at NF_LINK_HDR_SIZE */
    size_t open_len;
    int open_push;           /* holds a message sent without defer: close it when the window has room */
    uint64_t open_since_us;  /* first message of the open frame (deferred bound) */
    uint64_t asleep_until_us; /* the link thread sleeps until then (0: awake, looks again before it sleeps) */
    struct pend *pend_head, *pend_tail; /* closed frames waiting for the window, in order */
    uint64_t rto_deadline_us; /* 0: timer off */
    unsigned backoff;         /* timeouts since the last progress */
    int probing;              /* after a timeout only the oldest frame goes until an ack:
                                 if only acks were lost, nothing else is sent twice */
    uint32_t line_byte_ns;    /* the board's UART byte time from INFO (a floor) */
    uint32_t pace_ns[PACE_SAMPLES]; /* the last bounds of the byte time */
    uint64_t reset_next_us;
    unsigned pace_next;
    size_t frame_cap;     /* batch messages into frames up to this payload */
    size_t join_cap;      /* see join_limit: from the minimum, then as frame_cap */
    unsigned clean_acks;  /* frames acknowledged since the last loss */
    unsigned dup_acks;    /* pure ACKs in a row naming una while frames are out */
    uint64_t losses;      /* signs of loss either way: go-backs, bad or out-of-turn frames */
    int fast_armed;       /* one fast go-back per loss: re-armed when una passes recover */
    uint8_t recover;      /* max when a frame was last sent again */

    /* Receive side (link thread only). */
    uint8_t rx_expect;
    int ack_owed;
    unsigned loss_acks, frames_since_ack; /* loss_acks: pure ACKs to send now */
    uint64_t ack_deadline_us;
    uint64_t last_rx_us;   /* last good frame */
    uint64_t idle_mark_us; /* last moment nothing was awaited */
    struct nf_frame_decoder dec;
    struct nf_link_stats st;
    uint8_t wire[NF_FRAME_MAX_WIRE];
    uint8_t rxbuf[RX_CHUNK];
};

static inline uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8);
}

static inline uint32_t queued(const struct nf_link *l)
{
    return (uint8_t)(l->nxt - l->una);
}

static inline int awaiting(const struct nf_link *l)
{
    return l->state == ST_RESETTING || queued(l) > 0 || l->expecting > 0 || l->pend_head != NULL ||
           (l->open_len > 0 && l->open_push);
}

/* While this many frames are unacknowledged the line is busy: a message sent without
 * defer joins the open frame instead of closing it (it could not start on the line
 * before them anyway), and the frame goes when an ack brings the count below, or
 * when it is full (join_limit). Three keep the line busy while an ack returns. */
#define JOIN_AFTER_FRAMES 3u

static inline int line_busy(const struct nf_link *l)
{
    return queued(l) >= JOIN_AFTER_FRAMES;
}

/* The payload a frame holding joined messages grows to: the batching cap, and while
 * the line has not shown itself clean for long, less (join_cap). */
static inline size_t join_limit(const struct nf_link *l)
{
    return l->join_cap < l->frame_cap ? l->join_cap : l->frame_cap;
}

/* The silence clock starts when something is first awaited, not at the last frame. */
static inline void mark_busy(struct nf_link *l)
{
    if (!awaiting(l))
        l->idle_mark_us = now_us();
}

/* Whether the link takes messages (under mu). */
static inline NTSTATUS usable(const struct nf_link *l)
{
    if (l->closing)
        return STATUS_CANCELLED;
    if (l->state != ST_UP)
        return l->dead_status ? l->dead_status : STATUS_INVALID_DEVICE_STATE;
    return STATUS_SUCCESS;
}

/* A frame survives a per-byte error rate p with (1-p)^len: every loss halves the
 * size messages are batched up to, a run of clean acks doubles it (as the board does).
 * Frames that messages join while the line is busy (join_cap) start at the minimum: a
 * frame is never split again, so one built big before the first loss could stall the
 * link. */
#define FRAME_CAP_MIN 128u
/* Pure ACKs owed at most for signs of a lost board frame (a bad frame, a gap). */
#define LOSS_ACKS_MAX 2u

/* nf_link_arq.c, under mu unless said. */
/* Close the open frame into the window (the caller checked for room). */
void nf_link_close_open(struct nf_link *l);
/* Time of one byte on the line (ns); timeout of a frame of wire_len bytes that heads
 * the queue (us). */
uint32_t nf_link_byte_ns(const struct nf_link *l);
uint64_t nf_link_frame_rto(const struct nf_link *l, size_t wire_len);
/* Mark the link dead with a reason (printed once, kept for nf_link_dead_reason) and
 * wake every sender. */
void nf_link_set_dead(struct nf_link *l, NTSTATUS status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A good frame from the board (link thread, mu not held: it takes mu itself and
 * delivers messages without it). */
void nf_link_handle_frame(struct nf_link *l, const uint8_t *f, size_t n, uint64_t now);
/* Encode into l->wire what goes on the line next and return its length (0: nothing
 * now); *next_us is when to look again. */
size_t nf_link_next_output(struct nf_link *l, uint64_t now, uint64_t *next_us);

#endif
