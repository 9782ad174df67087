/* Boot and the main loop step (fw_main.c): what the target's main and the host build call. */
#ifndef FW_MAIN_H
#define FW_MAIN_H

void fw_init(void); /* read the configuration, reset every table and the link */
int fw_poll(void);  /* one step of the main loop; nonzero when it did something */

#endif
