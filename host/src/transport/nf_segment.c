/* SPDX-License-Identifier: Apache-2.0 */
/* Segments of started adapters (nf_segment.h): find or start a segment's switch. The
 * lock file serializes joiners of one segment with each other and with the switch's
 * decision to exit, so two adapters starting together share one switch. */
#include "nf_segment.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/nf_time.h"
#include "base/nf_unix.h"

extern char **environ;

#define LOCK_TIMEOUT_MS 30000u

static int usable_dir(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 0077) == 0;
}

int nf_segment_dir(char *buf, size_t len, int create)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (xdg && xdg[0] == '/' && access(xdg, W_OK) == 0) {
        if (snprintf(buf, len, "%s/ndkfpga-net", xdg) >= (int)len)
            return -1;
        if (create)
            mkdir(buf, 0700);
        return usable_dir(buf) ? 0 : -1;
    }
    char top[64];
    snprintf(top, sizeof(top), "/tmp/ndkfpga-%u", (unsigned)getuid());
    if (create)
        mkdir(top, 0700);
    /* Someone else's or a symlink in /tmp would redirect our sockets: refuse it. */
    if (!usable_dir(top) || snprintf(buf, len, "%s/net", top) >= (int)len)
        return -1;
    if (create)
        mkdir(buf, 0700);
    return usable_dir(buf) ? 0 : -1;
}

/* Start argv[0] detached (its own session, reaped by init, not by this process, so it
 * may outlive us); returns its pid, or -1. Between fork and exec only async-signal-safe
 * calls: the library may have threads. Its output goes to our stderr only when debug
 * messages do: otherwise it would hold our stderr (a pipe, say) open after we exit. */
static pid_t spawn_detached(char *const argv[])
{
    const int keep_stderr = nf_log_stderr(NF_LOG_DEBUG);
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0)
        return -1;
    pid_t mid = fork();
    if (mid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (mid == 0) {
        setsid();
        pid_t g = fork();
        if (g == 0) {
            int nul = open("/dev/null", O_RDWR);
            if (nul >= 0) {
                dup2(nul, 0);
                dup2(keep_stderr ? 2 : nul, 1);
                if (!keep_stderr)
                    dup2(nul, 2);
            }
            execve(argv[0], argv, environ);
            _exit(127);
        }
        ssize_t w = write(pfd[1], &g, sizeof(g));
        (void)w;
        _exit(0);
    }
    close(pfd[1]);
    pid_t g = -1;
    if (read(pfd[0], &g, sizeof(g)) != (ssize_t)sizeof(g))
        g = -1;
    close(pfd[0]);
    while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
        ;
    return g;
}

static int lock_segment(const char *lock_path, int *fd_out)
{
    int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    uint64_t until = nf_now_ms() + LOCK_TIMEOUT_MS;
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            close(fd);
            return -1;
        }
        if (nf_now_ms() >= until) {
            close(fd);
            errno = ETIMEDOUT;
            return -1;
        }
        nf_sleep_ms(5);
    }
    *fd_out = fd;
    return 0;
}

NTSTATUS nf_segment_join(const char *nfwire, const struct nf_devopts *o, unsigned start_ms, char *sock,
                         size_t sock_len, int *keeper_fd)
{
    *keeper_fd = -1;
    char dir[PATH_MAX - 64];
    if (nf_segment_dir(dir, sizeof(dir), 1) != 0)
        return nf_set_error(STATUS_ACCESS_DENIED,
                            "net=%s: no private directory for the segment's socket ($XDG_RUNTIME_DIR/ndkfpga-net "
                            "or /tmp/ndkfpga-%u/net, mode 0700, owned by this user)",
                            o->net, (unsigned)getuid());
    char lock_path[PATH_MAX];
    snprintf(lock_path, sizeof(lock_path), "%s/%s.lock", dir, o->net);
    if (snprintf(sock, sock_len, "%s/%s.sock", dir, o->net) >= (int)sock_len ||
        strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return nf_set_error(STATUS_INVALID_PARAMETER, "net=%s: the socket path %s is too long", o->net, sock);
    int lfd;
    if (lock_segment(lock_path, &lfd) != 0)
        return nf_set_error(errno == ETIMEDOUT ? STATUS_IO_TIMEOUT : STATUS_ACCESS_DENIED,
                            "net=%s: cannot lock %s: %s", o->net, lock_path, strerror(errno));
    int fd = nf_unix_connect(sock, SOCK_SEQPACKET);
    if (fd >= 0) {
        close(lfd);
        *keeper_fd = fd;
        return STATUS_SUCCESS;
    }
    /* No switch: a socket left by one that died is stale (we hold the lock). */
    unlink(sock);
    if (access(nfwire, X_OK) != 0) {
        close(lfd);
        return nf_set_error(STATUS_NO_SUCH_FILE, "segment switch %s: %s (build it with `make nfwire`, or set "
                            "$NDKFPGA_WIRE)", nfwire, strerror(errno));
    }
    char bin[PATH_MAX], tap[NF_DEVOPTS_IFNAME_MAX + 1];
    snprintf(bin, sizeof(bin), "%s", nfwire);
    snprintf(tap, sizeof(tap), "%s", o->tap);
    char *argv[] = {bin, "--socket", sock, "--idle-exit", "0", "--lock", lock_path,
                    tap[0] ? "--tap" : NULL, tap, NULL};
    pid_t pid = spawn_detached(argv);
    if (pid <= 0) {
        close(lfd);
        return nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "cannot start %s: %s", nfwire, strerror(errno));
    }
    uint64_t until = nf_now_ms() + start_ms;
    for (;;) {
        fd = nf_unix_connect(sock, SOCK_SEQPACKET);
        if (fd >= 0)
            break;
        /* It exits at once on a bad start (a TAP device without root, say). */
        if (kill(pid, 0) != 0 && errno == ESRCH) {
            close(lfd);
            return nf_set_error(STATUS_DEVICE_NOT_CONNECTED, "segment switch %s exited at start%s", nfwire,
                                tap[0] ? " (tap= needs root and /dev/net/tun)" : "");
        }
        if (nf_now_ms() >= until) {
            kill(pid, SIGKILL);
            close(lfd);
            return nf_set_error(STATUS_DEVICE_NOT_CONNECTED, "segment switch %s did not open %s within %u ms",
                                nfwire, sock, start_ms);
        }
        nf_sleep_ms(5);
    }
    close(lfd);
    *keeper_fd = fd;
    return STATUS_SUCCESS;
}
