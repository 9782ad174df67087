/* SPDX-License-Identifier: Apache-2.0 */
/* See board_proc.h. */
#include "board_proc.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CONNECT_TRIES 1000 /* x 10 ms: a Verilator model may take a while to start */
#define EXIT_WAIT_TRIES 200

static void nap_10ms(void)
{
    struct timespec ts = {0, 10 * 1000000L};
    nanosleep(&ts, NULL);
}

const char *board_proc_binary(const char *env, const char *dflt)
{
    const char *bin = getenv(env);
    if (!bin || !*bin)
        bin = dflt;
    return access(bin, X_OK) == 0 ? bin : NULL;
}

int board_proc_start(struct board_proc *b, const char *bin)
{
    memset(b, 0, sizeof(*b));
    b->fd = -1;
    snprintf(b->dir, sizeof(b->dir), "/tmp/nf-board.XXXXXX");
    if (!mkdtemp(b->dir))
        return -1;
    snprintf(b->sock, sizeof(b->sock), "%s/s", b->dir);
    b->pid = fork();
    if (b->pid < 0) {
        rmdir(b->dir);
        return -1;
    }
    if (b->pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 1);
        execl(bin, bin, "--socket", b->sock, "--exit-on-disconnect", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < CONNECT_TRIES && b->fd < 0; i++) {
        if (waitpid(b->pid, NULL, WNOHANG) == b->pid) {
            b->pid = 0; /* died before accepting */
            break;
        }
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof(a.sun_path), "%s", b->sock);
        if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) == 0) {
            b->fd = s;
        } else {
            if (s >= 0)
                close(s);
            nap_10ms();
        }
    }
    if (b->fd < 0) {
        board_proc_stop(b);
        return -1;
    }
    return 0;
}

void board_proc_stop(struct board_proc *b)
{
    if (b->fd >= 0)
        close(b->fd);
    b->fd = -1;
    if (b->pid > 0) {
        int i = 0;
        while (i++ < EXIT_WAIT_TRIES && waitpid(b->pid, NULL, WNOHANG) == 0)
            nap_10ms();
        if (i > EXIT_WAIT_TRIES) {
            kill(b->pid, SIGTERM);
            waitpid(b->pid, NULL, 0);
        }
        b->pid = 0;
    }
    unlink(b->sock);
    rmdir(b->dir);
}
