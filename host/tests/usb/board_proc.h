/* SPDX-License-Identifier: Apache-2.0 */
/* Start a simulated board binary (nfmodel or nfsim: both serve the link on a Unix
 * socket, --socket PATH --exit-on-disconnect) on a private socket and connect to
 * it, for tests that relay a board transport's bytes to a real simulated board. */
#ifndef BOARD_PROC_H
#define BOARD_PROC_H

#include <sys/types.h>

struct board_proc {
    pid_t pid;
    int fd;         /* connected socket, -1 when none */
    char dir[32];   /* private directory holding the socket */
    char sock[64];
};

/* The binary: $env if set, else dflt; NULL when it is not an executable file. */
const char *board_proc_binary(const char *env, const char *dflt);
/* 0 when started and connected (b->fd), -1 otherwise (nothing left running). */
int board_proc_start(struct board_proc *b, const char *bin);
/* Close the connection (the board exits on disconnect), reap it (SIGTERM after
 * 2 s), remove the socket directory. */
void board_proc_stop(struct board_proc *b);

#endif
