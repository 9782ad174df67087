/* SPDX-License-Identifier: Apache-2.0 */
/* Target entry point: start.c sets up the C environment, then calls main. */
#include "fw_main.h"
#include "fw_state.h"

/* The idle poll runs between every two requests: it lies with the work-request path. */
FW_HOT int main(void)
{
    fw_init();
    for (;;)
        (void)fw_poll();
}
