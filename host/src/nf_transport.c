/* Transport dispatch by device string, the error-message API, and the generic
 * stream-socket transport that the sim/model transports and the tests build on. */
#include "nf_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nf_transport_priv.h"
#include "transport_board.h"

/* The board transports (transport_usb.c, transport_tty.c) are built into the
 * library (which defines NF_WITH_BOARD_TRANSPORTS: strong references, so a program
 * linked against the static library pulls them in) but not into every test of this
 * layer: there, weak references let the dispatch answer NOT_SUPPORTED. */
#ifdef NF_WITH_BOARD_TRANSPORTS
#define HAVE_BOARD(fn) 1
#else
#pragma weak nf_transport_open_usb
#pragma weak nf_transport_open_tty
#pragma weak nf_board_present
#define HAVE_BOARD(fn) ((fn) != NULL)
#endif

/* ---- errors ------------------------------------------------------------- */

static _Thread_local char last_error[256];

const char *nf_error_message(void)
{
    return last_error;
}

void nf_error_set_text(const char *text)
{
    snprintf(last_error, sizeof(last_error), "%s", text);
}

uint32_t nf_set_error(uint32_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    if (!getenv("NDKFPGA_QUIET"))
        fprintf(stderr, "ndkfpga: %s (%s)\n", last_error, nf_status_name(status));
    return status;
}

/* ---- fd transport --------------------------------------------------------- */

struct fd_transport {
    struct nf_transport base;
    int fd;
    int wake_fd;      /* eventfd: a write makes poll() in read return */
    pid_t child;      /* simulator started for this transport, or 0 */
    char *sock_dir;   /* private directory to remove at close, or NULL */
    char *sock_path;  /* socket inside it to unlink, or NULL */
    char name[160];
};

static uint32_t fd_write(struct nf_transport *t, const void *buf, size_t len, int timeout_ms)
{
    struct fd_transport *f = (struct fd_transport *)t;
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = send(f->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* The peer is slow (a simulated UART): wait for room, but not forever. */
            struct pollfd pfd = {.fd = f->fd, .events = POLLOUT};
            int r = poll(&pfd, 1, timeout_ms);
            if (r == 0)
                return NF_STATUS_IO_TIMEOUT;
            if (r < 0 && errno != EINTR)
                return NF_STATUS_CONNECTION_RESET;
            continue;
        }
        return NF_STATUS_CONNECTION_RESET;
    }
    return NF_STATUS_SUCCESS;
}

int nf_fd_wait(int fd, int wake_fd, int timeout_ms)
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

static ssize_t fd_read(struct nf_transport *t, void *buf, size_t cap, int timeout_ms)
{
    struct fd_transport *f = (struct fd_transport *)t;
    for (;;) {
        ssize_t n = recv(f->fd, buf, cap, MSG_DONTWAIT);
        if (n > 0)
            return n;
        if (n == 0)
            return -1; /* orderly shutdown: the peer is gone */
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        if (timeout_ms == 0)
            return 0;
        int r = nf_fd_wait(f->fd, f->wake_fd, timeout_ms);
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
    if (f->sock_path)
        unlink(f->sock_path);
    if (f->sock_dir)
        rmdir(f->sock_dir);
    free(f->sock_path);
    free(f->sock_dir);
    free(f);
}

static const struct nf_transport_ops fd_ops = {
    .write = fd_write,
    .read = fd_read,
    .wake = fd_wake,
    .close = fd_close,
};

uint32_t nf_transport_from_fd(int fd, const char *name, struct nf_transport **out)
{
    *out = NULL;
    struct fd_transport *f = calloc(1, sizeof(*f));
    if (!f) {
        close(fd);
        return nf_set_error(NF_STATUS_INSUFFICIENT_RESOURCES, "out of memory for a transport");
    }
    f->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (f->wake_fd < 0) {
        close(fd);
        free(f);
        return nf_set_error(NF_STATUS_INSUFFICIENT_RESOURCES, "eventfd: %s", strerror(errno));
    }
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0)
        fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
    f->fd = fd;
    snprintf(f->name, sizeof(f->name), "%s", name ? name : "fd");
    f->base.ops = &fd_ops;
    f->base.name = f->name;
    *out = &f->base;
    return NF_STATUS_SUCCESS;
}

void nf_transport_fd_set_child(struct nf_transport *t, pid_t pid, const char *dir, const char *sock)
{
    struct fd_transport *f = (struct fd_transport *)t;
    f->child = pid;
    f->sock_dir = dir ? strdup(dir) : NULL;
    f->sock_path = sock ? strdup(sock) : NULL;
}

/* ---- dispatch ----------------------------------------------------------- */

uint32_t nf_transport_open(const char *device, struct nf_transport **out)
{
    if (!out)
        return nf_set_error(NF_STATUS_INVALID_PARAMETER, "nf_transport_open: out is NULL");
    *out = NULL;
    if (!device || strcmp(device, "auto") == 0 || strcmp(device, "") == 0) {
        if (HAVE_BOARD(nf_board_present) && HAVE_BOARD(nf_transport_open_usb) && nf_board_present())
            return nf_transport_open_usb(NULL, out);
        return nf_transport_open_sim("sim", NULL, out);
    }
    static const char *const kinds[] = {"sim", "model"};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        size_t n = strlen(kinds[i]);
        if (strncmp(device, kinds[i], n) != 0)
            continue;
        if (device[n] == '\0')
            return nf_transport_open_sim(kinds[i], NULL, out);
        if (device[n] == ':' && device[n + 1] != '\0')
            return nf_transport_open_sim(kinds[i], device + n + 1, out);
    }
    if (strncmp(device, "usb", 3) == 0 && (device[3] == '\0' || device[3] == ':')) {
        if (HAVE_BOARD(nf_transport_open_usb))
            return nf_transport_open_usb(device[3] == ':' ? device + 4 : NULL, out);
        return nf_set_error(NF_STATUS_NOT_SUPPORTED, "device \"%s\": the USB transport is not in this build", device);
    }
    if (strncmp(device, "tty:", 4) == 0 && device[4] != '\0') {
        if (HAVE_BOARD(nf_transport_open_tty))
            return nf_transport_open_tty(device + 4, out);
        return nf_set_error(NF_STATUS_NOT_SUPPORTED, "device \"%s\": the tty transport is not in this build", device);
    }
    return nf_set_error(NF_STATUS_INVALID_PARAMETER,
                        "unknown device \"%s\" (use sim, sim:SOCKET, model, model:SOCKET, usb, tty:PATH or auto)",
                        device);
}
