/* SPDX-License-Identifier: Apache-2.0 */
/* The context of one received frame, made by the link (fw_link_rx.c) and handed down to
 * the message layer (fw_msg.c) and the work requests (fw_wr.c): where its payload is,
 * when it arrived, and the reply cursor through which the layers below get room for
 * their replies in the transmit window. The link implements the cursor; the layers
 * below write through it and never call the link themselves. */
#ifndef FW_FRAME_H
#define FW_FRAME_H

#include <stdint.h>

#include "hal.h"
#include "nf_layout.h"

struct fw_reply_ops {
    /* Reserve bytes (a multiple of 8) for one outgoing message, opening or flushing
     * frames as needed: the adapter address of the space, or 0 when the transmit window
     * is full (callers ask room first: no reply is ever dropped). */
    uint32_t (*reserve)(uint32_t bytes);
    /* reserve(bytes), the space reading as zeros: the caller writes only the fields
     * that are not zero (the link zeroes the next frame's first FW_REPLY_ZERO_AHEAD
     * bytes while it is idle, so a completion usually costs no zeroing). */
    uint32_t (*reserve_zeroed)(uint32_t bytes);
    /* Would reserve(bytes) find room now? */
    int (*room)(uint32_t bytes);
    /* Give back the last bytes of the most recent reservation (a shorter reply). */
    void (*trim)(uint32_t bytes);
    /* An overflowing frame's rest: the TX slot kept free for it becomes usable. */
    void (*spare)(void);
};

/* The bytes the link zeroes ahead in the next frame: two work completions (MSG_HDR +
 * CQE), a frame's usual replies (a work request's; a Send's and its receive's). */
#define FW_REPLY_ZERO_AHEAD (2u * (NF_MSG_HDR_SIZE + NF_CQE_SIZE))

struct fw_frame {
    uint32_t addr, len; /* payload: adapter address in the RX slot, bytes */
    uint32_t stamp_at;  /* bus address of its RX_STAMP register, the cycle of arrival: read
                         * only when needed (INFO timing), before the link releases the slot */
    uint32_t eng_start; /* fw_eng_wait_cycles() when its processing began (INFO timing; the link) */
    /* 0 normal; for a frame whose replies exceed the whole TX window: 1 full replies
     * while they fit, 2 answers no larger than their message (fw_msg_process) */
    uint32_t overflow;
    uint32_t done; /* len when every message ran (the link's start value), else the
                    * offset of the first one not started (no TX room: the frame waits) */
    struct fw_reply_ops tx; /* the link's reply cursor */
};

/* A field of space that reads as zeros (reserve_zeroed): written unless the compiler
 * knows the value is zero, so a constant zero costs no store. */
#define FW_WIN_WR_NONZERO(w, off, v)                                                                          \
    do {                                                                                                      \
        uint32_t v_ = (v);                                                                                    \
        if (!(__builtin_constant_p(v_) && v_ == 0u))                                                          \
            win_wr(w, off, v_);                                                                               \
    } while (0)

/* The MSG_HDR's op and len word. */
static inline uint32_t fw_hdr_op_len(uint32_t op, uint32_t len)
{
    return op << (8u * NF_MSG_HDR_OP_OFF) | len << (8u * NF_MSG_HDR_LEN_OFF);
}

/* Write a MSG_HDR at adapter address at. */
static inline void fw_reply_hdr(uint32_t at, uint32_t op, uint32_t len, uint32_t tag, uint32_t status)
{
    hal_win w = mem_win(at);
    win_wr(w, NF_MSG_HDR_OP_OFF, fw_hdr_op_len(op, len));
    win_wr(w, NF_MSG_HDR_TAG_OFF, tag);
    win_wr(w, NF_MSG_HDR_STATUS_OFF, status);
    win_wr(w, NF_MSG_HDR_RSVD_OFF, 0);
}

#endif
