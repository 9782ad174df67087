/* The board through the kernel's tty driver (ftdi_sio: /dev/ttyUSB*): raw 8N1, no
 * flow control, any baud through termios2/BOTHER (3000000 and 12000000 are not in
 * the classic Bxxx table). Same read/write/wake/close semantics as the socket
 * transport: poll() on the tty and an eventfd that wake() writes. */
#include <asm/ioctls.h>   /* TCGETS2, TCSETS2, TCFLSH, TIOCEXCL */
#include <asm/termbits.h> /* struct termios2, BOTHER; not mixable with <termios.h> */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "nf_transport.h"
#include "nf_transport_priv.h"
#include "transport_board.h"

/* <sys/ioctl.h> drags in glibc's termios definitions, which clash with termbits. */
extern int ioctl(int fd, unsigned long request, ...);

#define TTY_DEFAULT_BAUD 3000000u /* the ULX3S gateware's rate */

struct tty_transport {
    struct nf_transport base;
    int fd;
    int wake_fd;
    char name[160];
};

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

static uint32_t tty_write(struct nf_transport *t, const void *buf, size_t len, int timeout_ms)
{
    struct tty_transport *f = (struct tty_transport *)t;
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = write(f->fd, p, len);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            struct pollfd pfd = {.fd = f->fd, .events = POLLOUT};
            int r = poll(&pfd, 1, timeout_ms);
            if (r == 0)
                return NF_STATUS_IO_TIMEOUT;
            if (r < 0 && errno != EINTR)
                return NF_STATUS_CONNECTION_RESET;
            if (r > 0 && (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)))
                return NF_STATUS_CONNECTION_RESET;
            continue;
        }
        return NF_STATUS_CONNECTION_RESET; /* EIO: unplugged */
    }
    return NF_STATUS_SUCCESS;
}

static ssize_t tty_read(struct nf_transport *t, void *buf, size_t cap, int timeout_ms)
{
    struct tty_transport *f = (struct tty_transport *)t;
    for (;;) {
        ssize_t n = read(f->fd, buf, cap);
        if (n > 0)
            return n;
        if (n == 0)
            return -1; /* hang-up: VMIN=1 makes an empty non-blocking read EAGAIN */
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN)
            return -1; /* EIO: the device went away */
        if (timeout_ms == 0)
            return 0;
        int r = nf_fd_wait(f->fd, f->wake_fd, timeout_ms);
        if (r <= 0)
            return r; /* timeout, wake or error */
        timeout_ms = 0;
    }
}

static void tty_wake(struct nf_transport *t)
{
    struct tty_transport *f = (struct tty_transport *)t;
    uint64_t one = 1;
    if (write(f->wake_fd, &one, sizeof(one)) < 0)
        return;
}

static void tty_close(struct nf_transport *t)
{
    struct tty_transport *f = (struct tty_transport *)t;
    close(f->fd);
    close(f->wake_fd);
    free(f);
}

static const struct nf_transport_ops tty_ops = {
    .write = tty_write,
    .read = tty_read,
    .wake = tty_wake,
    .close = tty_close,
};

/* Raw 8N1 at baud, no flow control, no line discipline processing. */
static int tty_configure(int fd, uint32_t baud)
{
    struct termios2 tio;
    if (ioctl(fd, TCGETS2, &tio) != 0)
        return -1;
    tio.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXOFF | IXANY | INPCK);
    tio.c_oflag &= ~(tcflag_t)OPOST;
    tio.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
    tio.c_cflag &= ~(tcflag_t)(CSIZE | PARENB | CSTOPB | CRTSCTS | CBAUD | (CBAUD << IBSHIFT));
    tio.c_cflag |= CS8 | CLOCAL | CREAD | BOTHER | (BOTHER << IBSHIFT);
    tio.c_ispeed = baud;
    tio.c_ospeed = baud;
    tio.c_cc[VMIN] = 1;
    tio.c_cc[VTIME] = 0;
    if (ioctl(fd, TCSETS2, &tio) != 0)
        return -1;
    /* Drop whatever the bridge buffered before we came. */
    return ioctl(fd, TCFLSH, TCIOFLUSH);
}

uint32_t nf_transport_open_tty(const char *path, struct nf_transport **out)
{
    if (!out)
        return nf_set_error(NF_STATUS_INVALID_PARAMETER, "nf_transport_open_tty: out is NULL");
    *out = NULL;
    if (!path || !*path)
        return nf_set_error(NF_STATUS_INVALID_PARAMETER, "device \"tty:\": a tty path is needed, e.g. tty:/dev/ttyUSB0");
    uint32_t baud = nf_board_baud(TTY_DEFAULT_BAUD);
    if (baud == 0)
        return nf_set_error(NF_STATUS_INVALID_PARAMETER, "NDKFPGA_BAUD=\"%s\" is not a baud rate",
                            getenv("NDKFPGA_BAUD"));
    int fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT || e == ENXIO || e == ENODEV)
            return nf_set_error(NF_STATUS_NO_SUCH_FILE, "tty:%s: %s (is the board plugged in?)", path, strerror(e));
        if (e == EACCES || e == EPERM)
            return nf_set_error(NF_STATUS_ACCESS_DENIED,
                                "tty:%s: permission denied (join the dialout group, or install tools/99-ndkfpga.rules)",
                                path);
        if (e == EBUSY)
            return nf_set_error(NF_STATUS_INVALID_DEVICE_STATE, "tty:%s: in use by another program", path);
        return nf_set_error(NF_STATUS_INSUFFICIENT_RESOURCES, "tty:%s: %s", path, strerror(e));
    }
    if (tty_configure(fd, baud) != 0) {
        int e = errno;
        close(fd);
        if (e == ENOTTY)
            return nf_set_error(NF_STATUS_INVALID_PARAMETER, "tty:%s: not a terminal device", path);
        return nf_set_error(NF_STATUS_INVALID_PARAMETER, "tty:%s: cannot set raw 8N1 at %u Bd: %s", path,
                            (unsigned)baud, strerror(e));
    }
    /* One owner at a time: a second opener (a terminal program) gets EBUSY. */
    (void)ioctl(fd, TIOCEXCL);
    struct tty_transport *f = calloc(1, sizeof(*f));
    int wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!f || wake_fd < 0) {
        free(f);
        if (wake_fd >= 0)
            close(wake_fd);
        close(fd);
        return nf_set_error(NF_STATUS_INSUFFICIENT_RESOURCES, "out of memory or file descriptors for tty:%s", path);
    }
    f->fd = fd;
    f->wake_fd = wake_fd;
    snprintf(f->name, sizeof(f->name), "tty:%s", path);
    f->base.ops = &tty_ops;
    f->base.name = f->name;
    *out = &f->base;
    return NF_STATUS_SUCCESS;
}
