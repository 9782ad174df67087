/* SPDX-License-Identifier: Apache-2.0 */
/* The generic fd transport: a connected stream socket (the sim/model transports,
 * tests), a tty (transport_tty.c) or a connected datagram socket (transport_udp.c),
 * read and written without blocking, with an eventfd that wake() signals so a waiting
 * read returns. */
#include "nf_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>

#include "nf_transport_priv.h"
#include "transport_board.h"

/* ---- fd transport --------------------------------------------------------- */

struct fd_transport {
    struct nf_transport base;
    int fd;
    int is_socket;    /* send() with MSG_NOSIGNAL: a closed peer must not raise SIGPIPE */
    int wake_fd;      /* eventfd: a write makes poll() in read return */
    pid_t child;      /* simulator started for this transport, or 0 */
    char *sock_dir;   /* private directory to remove at close, or NULL */
    char *sock_path;  /* socket inside it to unlink, or NULL */
    int keeper_fd;    /* the segment's keeper port (nf_segment.h), or -1 */
    size_t dgram_max; /* datagram socket: largest payload sent; 0: a byte stream */
    uint8_t *stash;   /* datagram socket: the datagram read last, handed out in pieces */
    size_t stash_len, stash_pos;
    char name[160];
};

/* A datagram socket's errors that say only that a datagram was lost (an ICMP answer
 * to an earlier one: nobody listens yet, or no route for now): the link repairs it. */
static int dgram_lost(const struct fd_transport *f, int e)
{
    return f->dgram_max && (e == ECONNREFUSED || e == EHOSTUNREACH || e == ENETUNREACH || e == ENOBUFS);
}

static NTSTATUS fd_write(struct nf_transport *t, const void *buf, size_t len, int timeout_ms)
{
    struct fd_transport *f = (struct fd_transport *)t;
    const uint8_t *p = buf;
    while (len > 0) {
        /* A datagram carries at most dgram_max bytes and goes whole or not at all. */
        size_t chunk = f->dgram_max && len > f->dgram_max ? f->dgram_max : len;
        ssize_t n = f->is_socket ? send(f->fd, p, chunk, MSG_NOSIGNAL) : write(f->fd, p, chunk);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && dgram_lost(f, errno)) {
            p += chunk;
            len -= chunk;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* The peer is slow (a UART): wait for room, but not forever. */
            struct pollfd pfd = {.fd = f->fd, .events = POLLOUT};
            int r = poll(&pfd, 1, timeout_ms);
            if (r == 0)
                return STATUS_IO_TIMEOUT;
            if ((r < 0 && errno != EINTR) || (r > 0 && (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))))
                return STATUS_CONNECTION_RESET;
            continue;
        }
        return STATUS_CONNECTION_RESET; /* EPIPE, or EIO: a tty unplugged */
    }
    return STATUS_SUCCESS;
}

/* Wait up to timeout_ms for fd to be readable (data or hang-up) or for wake_fd to be
 * signalled (its count is then consumed). 1: fd has something; 0: timeout, wake or
 * EINTR; -1: error. */
static int fd_wait(int fd, int wake_fd, int timeout_ms)
{
    struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN}, {.fd = wake_fd, .events = POLLIN}};
    int r = poll(pfd, 2, timeout_ms);
    if (r < 0 && errno == EINTR)
        return 0;
    if (r < 0)
        return -1;
    if (pfd[1].revents & POLLIN) {
        uint64_t v;
        if (read(wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
            return -1;
    }
    return (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) ? 1 : 0;
}

/* A datagram socket's next bytes: what is left of the stashed datagram, else the next
 * datagram (whole into the stash, so a short cap truncates nothing). Like read(). */
static ssize_t dgram_read(struct fd_transport *f, void *buf, size_t cap)
{
    if (f->stash_pos == f->stash_len) {
        ssize_t n = recv(f->fd, f->stash, NF_TRANSPORT_DGRAM_ROOM, 0);
        if (n <= 0)
            return n < 0 ? -1 : 0;
        f->stash_len = (size_t)n;
        f->stash_pos = 0;
    }
    size_t n = f->stash_len - f->stash_pos;
    n = n < cap ? n : cap;
    memcpy(buf, f->stash + f->stash_pos, n);
    f->stash_pos += n;
    return (ssize_t)n;
}

static ssize_t fd_read(struct nf_transport *t, void *buf, size_t cap, int timeout_ms)
{
    struct fd_transport *f = (struct fd_transport *)t;
    for (;;) {
        ssize_t n = f->dgram_max ? dgram_read(f, buf, cap) : read(f->fd, buf, cap);
        if (n > 0)
            return n;
        if (n == 0 && f->dgram_max)
            continue; /* an empty datagram */
        if (n == 0)
            return -1; /* orderly shutdown, or a tty hang-up (VMIN=1: no data is EAGAIN) */
        if (errno == EINTR || dgram_lost(f, errno))
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -1; /* EIO: a tty went away */
        if (timeout_ms == 0)
            return 0;
        int r = fd_wait(f->fd, f->wake_fd, timeout_ms);
        if (r <= 0)
            return r; /* timeout, wake or error */
        timeout_ms = 0; /* data (or hang-up) is there: one more non-blocking recv */
    }
}

static void fd_wake(struct nf_transport *t)
{
    struct fd_transport *f = (struct fd_transport *)t;
    uint64_t one = 1;
    /* Cannot fail in a way that matters: a full counter still wakes the reader. */
    if (write(f->wake_fd, &one, sizeof(one)) < 0)
        return;
}

static int wait_child(pid_t pid, int timeout_ms)
{
    for (int waited = 0;; waited += 10) {
        pid_t r = waitpid(pid, NULL, WNOHANG);
        if (r == pid || (r < 0 && errno == ECHILD))
            return 1;
        if (waited >= timeout_ms)
            return 0;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void fd_close(struct nf_transport *t)
{
    struct fd_transport *f = (struct fd_transport *)t;
    close(f->fd);
    close(f->wake_fd);
    if (f->child > 0) {
        /* It runs with --exit-on-disconnect: give it a moment to go by itself (and
         * print its cycle report), then ask, then insist. A stopped child (SIGSTOP) only
         * sees the SIGTERM once continued. */
        if (!wait_child(f->child, 200)) {
            kill(f->child, SIGTERM);
            kill(f->child, SIGCONT);
            if (!wait_child(f->child, 1000)) {
                kill(f->child, SIGKILL);
                waitpid(f->child, NULL, 0);
            }
        }
    }
    if (f->keeper_fd >= 0)
        close(f->keeper_fd);
    if (f->sock_path)
        unlink(f->sock_path);
    if (f->sock_dir)
        rmdir(f->sock_dir);
    free(f->sock_path);
    free(f->sock_dir);
    free(f->stash);
    free(f);
}

static const struct nf_transport_ops fd_ops = {
    .write = fd_write,
    .read = fd_read,
    .wake = fd_wake,
    .close = fd_close,
};

NTSTATUS nf_transport_from_fd(int fd, const char *name, struct nf_transport **out)
{
    *out = NULL;
    struct fd_transport *f = calloc(1, sizeof(*f));
    if (!f) {
        close(fd);
        return nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "out of memory for a transport");
    }
    f->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (f->wake_fd < 0) {
        close(fd);
        free(f);
        return nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "eventfd: %s", strerror(errno));
    }
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0)
        fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
    fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    struct stat sb;
    f->is_socket = fstat(fd, &sb) == 0 && S_ISSOCK(sb.st_mode);
    f->fd = fd;
    snprintf(f->name, sizeof(f->name), "%s", name ? name : "fd");
    f->keeper_fd = -1;
    f->base.ops = &fd_ops;
    f->base.name = f->name;
    *out = &f->base;
    return STATUS_SUCCESS;
}

void nf_transport_fd_set_child(struct nf_transport *t, pid_t pid, const char *dir, const char *sock)
{
    struct fd_transport *f = (struct fd_transport *)t;
    f->child = pid;
    f->sock_dir = dir ? strdup(dir) : NULL;
    f->sock_path = sock ? strdup(sock) : NULL;
}

void nf_transport_fd_set_keeper(struct nf_transport *t, int fd)
{
    ((struct fd_transport *)t)->keeper_fd = fd;
}

NTSTATUS nf_transport_fd_set_dgram(struct nf_transport *t, size_t max)
{
    struct fd_transport *f = (struct fd_transport *)t;
    f->stash = malloc(NF_TRANSPORT_DGRAM_ROOM);
    if (!f->stash)
        return nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "out of memory for a datagram transport");
    f->dgram_max = max;
    return STATUS_SUCCESS;
}

/* Shared by the board transports (transport_board.h). */
uint32_t nf_board_baud(uint32_t dflt)
{
    const char *s = getenv("NDKFPGA_BAUD");
    if (!s || !*s)
        return dflt;
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end != '\0' || v == 0 || v > 100000000ul || s[0] == '-' || s[0] == '+' || s[0] == ' ')
        return 0;
    return (uint32_t)v;
}
