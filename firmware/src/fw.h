/* SPDX-License-Identifier: Apache-2.0 */
/* Every firmware header, for the host-build tests and nfmodel (firmware/tests,
 * firmware/host). The firmware's own files include only the module headers they use:
 *   fw_main -> fw_link -> fw_msg -> fw_wr / fw_net -> fw_tables -> fw_state -> hal
 * (each calls only those to its right; fw_frame.h is the per-frame context the link
 * hands down, with the reply cursor it implements). */
#ifndef FW_H
#define FW_H

#include "fw_frame.h"
#include "fw_link.h"
#include "fw_main.h"
#include "fw_msg.h"
#include "fw_net.h"
#include "fw_state.h"
#include "fw_tables.h"
#include "fw_wr.h"
#include "hal.h"

#endif
