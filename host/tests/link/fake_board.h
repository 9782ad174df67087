/* SPDX-License-Identifier: Apache-2.0 */
/* An in-process fake board for the link tests: the board-side link rules of
 * docs/architecture.md in plain C on the far end of a socket, with deterministic
 * fault injection, and a PING echo service that checks what it receives. */
#ifndef FAKE_BOARD_H
#define FAKE_BOARD_H

#include <stdint.h>

#include "link_test.h"

struct fake_board_cfg {
    uint32_t rx_slots, tx_slots;  /* reported in INFO; 0: 4 */
    double drop, corrupt, dup;    /* per-byte fault probability, each direction */
    uint64_t seed;
    int wrong_nonce_answers;      /* answer this many RESETs with nonce + 1 first */
    int stale_data_before_ack;    /* send this many stale DATA frames before RESET_ACK */
    uint32_t rto_ms;              /* board retransmission timeout; 0: 30 */
    uint32_t reply_delay_ms;      /* see input this long after it arrives (RTT tests) */
    int max_msgs_per_frame;       /* batching of replies; 0: as many as fit */
    uint32_t max_frame_payload;   /* batch replies up to this many bytes; 0: MAX_PAYLOAD */
    uint32_t layout_version;      /* INFO.layout_version; 0: NF_LAYOUT_VERSION */
    int malformed_every;          /* every Nth reply frame gets a broken message list */
    uint32_t byte_us;             /* host-to-board line: each byte takes this long (a slow
                                     line, like a simulated board); 0: no pacing */
};

enum fake_board_mode {
    FB_NORMAL,   /* answer everything */
    FB_SILENT,   /* read and discard, send nothing */
    FB_STALL,    /* send nothing, do not ack (the window fills) */
    FB_HANGUP,   /* close the socket */
};

struct fake_board_stats {
    uint64_t frames_rx, bad_rx, dup_rx, data_rx, msgs_rx, resets, resets_repeated;
    uint64_t frames_tx, retransmits, pings;
    uint64_t order_errors, content_errors; /* PING tags not 1, 2, 3, ... or payload wrong */
    uint64_t window_violations;            /* DATA beyond the last ack sent + window */
    uint32_t max_inflight;                 /* largest seq - last ack sent + 1 seen */
    uint32_t max_msgs_in_frame;
    uint32_t next_tag;                     /* the PING tag expected next */
};

struct fake_board;

/* Serve the board side of fd (a connected stream socket) on a new thread. */
struct fake_board *fake_board_start(int fd, const struct fake_board_cfg *cfg);
void fake_board_set_mode(struct fake_board *b, enum fake_board_mode mode);
void fake_board_get_stats(struct fake_board *b, struct fake_board_stats *out);
/* Stop the thread, close fd, free. */
void fake_board_stop(struct fake_board *b);

#endif
