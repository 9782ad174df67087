/* SPDX-License-Identifier: Apache-2.0 */
/* The board through the kernel's tty driver (ftdi_sio: /dev/ttyUSB*): raw 8N1, no
 * flow control, any baud through termios2/BOTHER (3000000 and 12000000 are not in
 * the classic Bxxx table). Once set up, the tty is moved by the generic fd
 * transport (transport_fd.c), like the simulator's socket. */
#include <asm/ioctls.h>   /* TCGETS2, TCSETS2, TCFLSH, TIOCEXCL */
#include <asm/termbits.h> /* struct termios2, BOTHER; not mixable with <termios.h> */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nf_transport.h"
#include "transport_board.h"

/* <sys/ioctl.h> drags in glibc's termios definitions, which clash with termbits. */
extern int ioctl(int fd, unsigned long request, ...);

#define TTY_DEFAULT_BAUD 3000000u /* the ULX3S gateware's rate */

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

NTSTATUS nf_transport_open_tty(const char *path, struct nf_transport **out)
{
    if (!out)
        return nf_set_error(STATUS_INVALID_PARAMETER, "nf_transport_open_tty: out is NULL");
    *out = NULL;
    if (!path || !*path)
        return nf_set_error(STATUS_INVALID_PARAMETER, "device \"tty:\": a tty path is needed, e.g. tty:/dev/ttyUSB0");
    uint32_t baud = nf_board_baud(TTY_DEFAULT_BAUD);
    if (baud == 0)
        return nf_set_error(STATUS_INVALID_PARAMETER, "NDKFPGA_BAUD=\"%s\" is not a baud rate",
                            getenv("NDKFPGA_BAUD"));
    int fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT || e == ENXIO || e == ENODEV)
            return nf_set_error(STATUS_NO_SUCH_FILE, "tty:%s: %s (is the board plugged in?)", path, strerror(e));
        if (e == EACCES || e == EPERM)
            return nf_set_error(STATUS_ACCESS_DENIED,
                                "tty:%s: permission denied (join the dialout group, or install tools/99-ndkfpga.rules)",
                                path);
        if (e == EBUSY)
            return nf_set_error(STATUS_INVALID_DEVICE_STATE, "tty:%s: in use by another program", path);
        return nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "tty:%s: %s", path, strerror(e));
    }
    if (tty_configure(fd, baud) != 0) {
        int e = errno;
        close(fd);
        if (e == ENOTTY)
            return nf_set_error(STATUS_INVALID_PARAMETER, "tty:%s: not a terminal device", path);
        return nf_set_error(STATUS_INVALID_PARAMETER, "tty:%s: cannot set raw 8N1 at %u Bd: %s", path,
                            (unsigned)baud, strerror(e));
    }
    /* One owner at a time: a second opener (a terminal program) gets EBUSY. */
    (void)ioctl(fd, TIOCEXCL);
    char name[160];
    snprintf(name, sizeof(name), "tty:%s", path);
    return nf_transport_from_fd(fd, name, out); /* non-blocking from here on, owns fd */
}
