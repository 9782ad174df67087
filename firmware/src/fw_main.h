/* SPDX-License-Identifier: Apache-2.0 */
/* Boot and the main loop step (fw_main.c): what the target's main and the host build call. */
#ifndef FW_MAIN_H
#define FW_MAIN_H

#include "fw_link.h"
#include "fw_net.h"

void fw_init(void); /* read the configuration, reset every table and the link */
#if FW_NET
/* The network port's turn (fw_rc_poll), then the longest idle sleep it allows. */
int fw_port_turn(void);
#else
static inline int fw_port_turn(void) { return 0; }
#endif
/* One step of the main loop; nonzero when it did something. The link's frames first; a
 * sleep the link ends with no frame of its own (a frame on the network port, the port's
 * timer) gives the network port its turn. Inline: the idle loop's length is how late a
 * frame that lands is noticed. */
static inline int fw_poll(void)
{
    return fw_link_poll() || fw_port_turn();
}

#endif
