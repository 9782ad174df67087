/* SPDX-License-Identifier: Apache-2.0 */
/* Reliable link to the board: go-back-N over an nf_transport (docs/architecture.md,
 * "The link").
 *
 * One link thread does all transport I/O: it decodes frames, delivers messages,
 * sends queued DATA frames within a fixed window, acknowledges (cumulatively, pure
 * ACKs delayed a little so several frames share one), and retransmits everything
 * unacknowledged (go-back-N) when the oldest frame's timeout expires, or at once when
 * the board repeats the same ack twice in pure ACKs (a frame was lost before later
 * ones arrived). The line is point to point with a known rate, so the timeout is
 * computed, not estimated: the oldest frame's bytes, a board frame ahead of its ack
 * and the ack itself at the line's byte time, plus the board's turnaround
 * (NF_LINK_TURNAROUND_MS), doubled per timeout without progress. The byte time is
 * INFO's UART rate, or slower when round trips show the line is (a simulated board).
 *
 * Messages are whole MSG_HDR + body units; MSG_HDR.len must equal the message length
 * and be a multiple of 8. Several messages share one DATA frame: a send with
 * defer = 1 appends to the open frame and leaves it open (NDK_OP_FLAG_DEFER), a
 * send with defer = 0 or nf_link_flush() closes it and queues it for sending, and a
 * message that does not fit closes the open frame first. While the line is busy
 * (a few frames unacknowledged) a send with defer = 0 leaves the frame open too,
 * for later messages to join, and the link thread closes it at the next ack: it
 * could not start on the line any sooner. On a lossy line the size messages are
 * batched up to shrinks (see stats.frame_cap); a single message always goes whole.
 *
 * Threads: nf_link_send/sendv/flush/stats may be called from any thread except the
 * link thread's callbacks (on_message must not block on the link: hand messages to
 * another thread; from a callback nf_link_send never blocks and fails with
 * STATUS_INSUFFICIENT_RESOURCES when the window is full). */
#ifndef NF_LINK_H
#define NF_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "nf_layout.h"
#include "transport/nf_transport.h"

struct nf_link;

/* A received message (MSG_HDR + body, len bytes, len == MSG_HDR.len), on the link
 * thread, exactly once and in the board's order. msg is valid during the call only. */
typedef void (*nf_link_on_message)(void *ctx, const uint8_t *msg, size_t len);
/* The link died (peer silent past the deadline: STATUS_IO_TIMEOUT; transport
 * closed by the peer: STATUS_CONNECTION_RESET; write failure). Called once, on the
 * link thread, after every blocked sender has been woken; never after nf_link_close
 * began. Later sends fail at once with the same status. */
typedef void (*nf_link_on_dead)(void *ctx, NTSTATUS status);

/* Tuning; zero fields take the default. nf_link_open() uses all defaults except
 * silence_ms, which $NDKFPGA_LINK_TIMEOUT_MS overrides. */
struct nf_link_config {
    uint32_t silence_ms;     /* peer-silence deadline while waiting (default 30000) */
    uint32_t rto_initial_ms; /* RESET interval, and least timeout before the first round trip (1000) */
    uint32_t rto_min_ms;     /* the board's turnaround: the timeout with no bytes in flight
                                (NF_LINK_TURNAROUND_MS) */
    uint32_t rto_max_ms;     /* upper bound of the timeout, also of the back-off (10000) */
    uint32_t ack_delay_us;   /* how long a pure ACK waits for company (1000) */
    uint32_t window_max;     /* cap on the window below INFO.rx_slots (NF_LINK_MAX_SLOTS) */
    uint32_t nonce;          /* RESET nonce + 1 for deterministic tests (0: random) */
    uint32_t defer_max_us;   /* longest a deferred message waits for company (2000) */
};

/* Counters (monotonic since open) for tests, benchmarks and NdkFpgaQueryCounters:
 * X(field, name, description), name as the adapter's counters show it. */
#define NF_LINK_COUNTER_LIST(X) \
    X(frames_tx, "frames_tx", "frames this host sent (DATA, again, ACK, RESET)") \
    X(data_tx, "data_tx", "DATA frames sent for the first time") \
    X(retransmits, "retransmits", "DATA frames sent again") \
    X(timeouts, "timeouts", "retransmission timer expiries") \
    X(fast_retransmits, "fast_retransmits", "go-backs on repeated acks, before the timer") \
    X(acks_tx, "acks_tx", "pure ACK frames sent") \
    X(resets_tx, "resets_tx", "RESET frames sent") \
    X(frames_rx, "frames_rx", "good frames received (CRC and length right)") \
    X(bad_frames, "crc_errors", "frames from the board dropped for a bad CRC, length or escape") \
    X(dups, "dups", "DATA frames from the board dropped as duplicate or out of order") \
    X(bad_msgs, "bad_msgs", "DATA frames with a malformed message list (rest skipped)") \
    X(ignored, "ignored", "good frames ignored (unknown type, stale RESET_ACK, bad ack)") \
    X(msgs_tx, "msgs_tx", "messages sent") \
    X(msgs_rx, "msgs_rx", "messages received") \
    X(payload_tx, "payload_tx", "message bytes queued") \
    X(payload_rx, "payload_rx", "message bytes delivered") \
    X(wire_tx, "bytes_tx", "bytes written to the transport") \
    X(wire_rx, "bytes_rx", "bytes read from the transport")

#define NF_LINK_COUNTER_FIELD(field, name, description) uint64_t field;
struct nf_link_stats {
    NF_LINK_COUNTER_LIST(NF_LINK_COUNTER_FIELD)
    uint32_t window;         /* send window (frames): min(INFO.rx_slots - 1, window_max) */
    uint32_t rto_us;         /* timeout of the oldest frame in flight (of an empty frame when none) */
    uint32_t frame_cap;      /* payload bytes messages are batched up to now (halved on
                                each loss, doubled after a run of clean acks) */
    uint32_t byte_ns;        /* time of one byte on the line (ns) in the timeout */
};

/* Take ownership of t (closed by nf_link_close, or here on failure), start the link
 * thread and do the RESET handshake: RESET with a random 16-bit nonce in
 * LINK_HDR.rsvd, repeated until a RESET_ACK with the same nonce arrives; its payload
 * (at least NF_INFO_SIZE bytes, INFO.layout_version == NF_LAYOUT_VERSION,
 * rx_slots >= 1) is copied to *info if info is not NULL. The window is
 * min(INFO.rx_slots - 1 (at least 1), window_max): one board RX slot stays free
 * for a pure ACK, so the board never waits on an ack it has no slot to receive. Fails with the transport's or the deadline's
 * status (STATUS_IO_TIMEOUT when the peer never answers within silence_ms),
 * STATUS_INVALID_DEVICE_STATE on a bad INFO, INSUFFICIENT_RESOURCES. */
NTSTATUS nf_link_open(struct nf_transport *t, nf_link_on_message on_message, nf_link_on_dead on_dead, void *ctx,
                      struct nf_link **out, struct nf_info *info);
NTSTATUS nf_link_open_ex(struct nf_transport *t, const struct nf_link_config *cfg, nf_link_on_message on_message,
                         nf_link_on_dead on_dead, void *ctx, struct nf_link **out, struct nf_info *info);

/* Queue one message (see above). Blocks while the window is full and the message
 * does not fit the open frame (which then goes as soon as the window opens). Returns
 * STATUS_SUCCESS; STATUS_INVALID_PARAMETER (len < NF_MSG_HDR_SIZE, not a
 * multiple of 8, > NF_LINK_MAX_PAYLOAD, or MSG_HDR.len != len; nothing queued);
 * the death status once the link is dead; STATUS_CANCELLED when nf_link_close
 * runs meanwhile. */
NTSTATUS nf_link_send(struct nf_link *l, const void *msg, size_t len, int defer);

/* The same with the message gathered from parts (e.g. header, body, page list). */
struct nf_link_part {
    const void *data;
    size_t len;
};
NTSTATUS nf_link_sendv(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, int defer);

/* Queue one message and never wait (the NDK posting path: it runs at DISPATCH_LEVEL
 * in Windows terms). The caller gives a well-formed message (MSG_HDR.len == len, a
 * multiple of 8, at most NF_LINK_MAX_PAYLOAD; not checked here). Frames that do
 * not fit the window wait in the link, unbounded but for memory (what posts them
 * is bounded: QP depths, requests in flight), and the link thread sends them in
 * order as the window opens. defer = 1 leaves the message in the open frame for at
 * most defer_max_us (2 ms by default) unless a later message closes it. len = 0
 * closes the open frame (a non-waiting nf_link_flush). Returns SUCCESS (the
 * message is accepted: it is sent unless the link dies or closes), the death
 * status once the link is dead, CANCELLED while closing, INSUFFICIENT_RESOURCES
 * (no memory for another frame). It may be called from the link's callbacks too. */
NTSTATUS nf_link_post(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, size_t len, int defer);

/* nf_link_post with the message written in place by fill, for callers that must do
 * something atomically with queueing it (NdkFlush reads the rings' tails): under the
 * link's lock, fill(arg, dst) writes the len bytes at dst (8-byte aligned in the open
 * frame) and returns nonzero, or returns 0 to refuse (nothing queued:
 * STATUS_INSUFFICIENT_RESOURCES). fill must not call the link. Otherwise the same
 * rules and statuses as nf_link_post, defer too. */
typedef int (*nf_link_fill_fn)(void *arg, uint8_t *dst);
NTSTATUS nf_link_post_fill(struct nf_link *l, size_t len, int defer, nf_link_fill_fn fill, void *arg);

/* nf_link_post of one whole message of len bytes at msg, with a counter published in
 * the same step: under the link's lock the message is queued, then *publish = value
 * (release), so a reader under that lock sees the value exactly when the message is
 * queued (a QP's ring tail). Same rules and statuses as nf_link_post. */
NTSTATUS nf_link_post_msg(struct nf_link *l, const void *msg, size_t len, int defer, uint32_t *publish,
                          uint32_t value);

/* Close the open (deferred) frame and queue it. Same returns as nf_link_send. */
NTSTATUS nf_link_flush(struct nf_link *l);

/* Tell the link that the caller now waits for `delta` more (or, negative, fewer)
 * replies/completions. While the count is above zero, or DATA frames are
 * unacknowledged, peer silence counts towards the deadline. */
void nf_link_expect(struct nf_link *l, int delta);

/* STATUS_SUCCESS while alive, else the death status. */
NTSTATUS nf_link_status(struct nf_link *l);

/* One line saying why the link died ("" while alive). */
const char *nf_link_dead_reason(struct nf_link *l);

void nf_link_get_stats(struct nf_link *l, struct nf_link_stats *out);

/* Stop the link thread, wake blocked senders (STATUS_CANCELLED), wait until no
 * thread is inside a send, close the transport (stopping a simulator it started)
 * and free everything. Queued but unacknowledged frames are dropped; call after
 * the replies you need have arrived. NULL is ignored. */
void nf_link_close(struct nf_link *l);

#endif
