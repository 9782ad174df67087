/* SPDX-License-Identifier: Apache-2.0 */
/* Target entry point: start.c sets up the C environment, then calls main. */
#include "fw_main.h"

int main(void)
{
    fw_init();
    for (;;)
        (void)fw_poll();
}
