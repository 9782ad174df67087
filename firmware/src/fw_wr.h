/* SPDX-License-Identifier: Apache-2.0 */
/* Work requests on a QP (fw_wr.c). Called by the message layer (fw_msg.c); calls
 * fw_tables and fw_state, and writes its CQE through the
 * reply cursor of the frame it is given. */
#ifndef FW_WR_H
#define FW_WR_H

#include <stdint.h>

#include "fw_frame.h"

/* Run the work request (op NF_OP_WR_*) of the message at adapter address m, mlen bytes,
 * of frame f, and queue its CQE through f->tx (unless a silent success). The caller
 * checked the room. */
void fw_wr_process(const struct fw_frame *f, uint32_t m, uint32_t mlen, uint32_t op);

#endif
