/* SPDX-License-Identifier: Apache-2.0 */
/* Link protocol, board side (fw_link.c, fw_link_rx.c, fw_link_tx.c). Called by fw_main; calls the message layer
 * (fw_msg.h) with each received frame's context, whose reply cursor it implements. */
#ifndef FW_LINK_H
#define FW_LINK_H

#include <stdint.h>

#include "fw_frame.h"

void fw_link_init(void);
int fw_link_poll(void);      /* one step: frames in, replies out, timers; nonzero when it did something */
void fw_link_idle_max(uint32_t cycles); /* the longest idle sleep (0: the link's own) */
uint32_t fw_link_rto(void);  /* retransmission timeout now in force, cycles (tests) */
/* The context of a payload of len bytes at adapter address addr that arrived in RX slot
 * slot (its RX_STAMP), its replies going into the link's transmit window (tests run the
 * message layer on a payload of their own with it). */
void fw_link_frame(struct fw_frame *f, uint32_t addr, uint32_t len, uint32_t slot);
/* The reply cursor for messages no received frame asks for (completions from the
 * network port): they go into the open frame, which the next poll sends. */
const struct fw_reply_ops *fw_link_events(void);

#endif
