/* Target entry point: start.c sets up the C environment, then calls main. */
#include "fw.h"

int main(void)
{
    fw_init();
    for (;;)
        (void)fw_poll();
}
