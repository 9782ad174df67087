/* Target entry point (start.S calls main after setting up the C environment). */
#include "fw.h"

int main(void)
{
    fw_init();
    for (;;)
        (void)fw_poll();
}
