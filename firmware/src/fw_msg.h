/* SPDX-License-Identifier: Apache-2.0 */
/* The messages of one DATA payload (fw_msg.c). Called by the link (fw_link_rx.c) with the
 * frame's context; calls fw_wr, fw_tables and fw_state, and replies through the
 * frame's reply cursor (fw_frame.h), never to the link directly. */
#ifndef FW_MSG_H
#define FW_MSG_H

#include <stdint.h>

#include "fw_frame.h"
#include "hal.h"
#include "nf_layout.h"

/* Handle the messages of a new frame f in order (w0: the first word of its payload, as
 * the link read it with the frame's header). A message whose reply cannot be queued now
 * is not started: f->done is its offset (the link holds the frame and resumes it there
 * when room frees), else f->len. */
void fw_msg_process(struct fw_frame *f, uint32_t w0);
/* The same from payload offset from: a held frame, or (from 0) a frame with
 * f->overflow set, whose replies exceed the whole TX window and which runs with every TX
 * slot free and the cursor keeping the last one back: messages get their replies while
 * they fit the others; from the first that does not, a request whose reply would be
 * larger than the request is answered INSUFFICIENT_RESOURCES without running, every
 * other message runs (its answer is no larger than it), and those answers fit the last
 * slot (after f->tx.spare()). So every frame is answered whole: nothing waits forever. */
void fw_msg_resume(struct fw_frame *f, uint32_t from);
/* Messages in f, counted the way fw_msg_process walks them (a malformed length ends the
 * walk with one error reply). */
uint32_t fw_msg_count(const struct fw_frame *f);
/* Does f hold one message (or a first message whose length is malformed: one error
 * reply, the rest dropped)? Inline: the link asks it of every frame that is not small. */
static inline int fw_msg_single(const struct fw_frame *f)
{
    uint32_t mlen = (mem_rd(f->addr) >> (8u * NF_MSG_HDR_LEN_OFF)) & 0xFFFFu;
    return mlen >= f->len || mlen < NF_MSG_HDR_SIZE || mlen % 8u;
}
/* Can the replies to every message of f be queued with free_open bytes left in the open
 * TX frame and free_slots empty frames after it? */
int fw_msg_fits(const struct fw_frame *f, uint32_t free_open, uint32_t free_slots);

#endif
