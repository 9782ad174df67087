/* SPDX-License-Identifier: Apache-2.0 */
/* transport_tty.c against a pseudo-terminal: the test holds the master side and
 * plays the board. Checks raw 8N1 at the termios2 speed, bytes both ways
 * untouched by the line discipline, wake, hang-up, and the open errors. */
#include <asm/ioctls.h>
#include <asm/termbits.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "board_proc.h"
#include "fake_board.h"
#include "link_test.h"
#include "link/nf_link.h"
#include "transport/nf_transport.h"
#include "tap.h"
#include "transport/transport_board.h"

extern int ioctl(int fd, unsigned long request, ...);
/* <stdlib.h>'s pty calls, declared by hand: their header would pull <termios.h>. */
extern int posix_openpt(int flags);
extern int grantpt(int fd);
extern int unlockpt(int fd);
extern char *ptsname(int fd);

static int open_pty(char *slave, size_t cap)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0)
        return -1;
    snprintf(slave, cap, "%s", ptsname(m));
    return m;
}

static void test_settings(const char *baud_env, unsigned want)
{
    char slave[64];
    int m = open_pty(slave, sizeof(slave));
    if (baud_env)
        setenv("NDKFPGA_BAUD", baud_env, 1);
    else
        unsetenv("NDKFPGA_BAUD");
    struct nf_transport *t = NULL;
    NTSTATUS st = nf_transport_open_tty(slave, &t);
    unsetenv("NDKFPGA_BAUD");
    if (!tap_ok(st == STATUS_SUCCESS && t, "open tty:%s (%s)", slave, nf_status_name(st))) {
        close(m);
        return;
    }
    /* Look at the settings through a second descriptor of the same tty. */
    int fd = open(slave, O_RDWR | O_NOCTTY);
    struct termios2 tio;
    memset(&tio, 0, sizeof(tio));
    int r = fd >= 0 ? ioctl(fd, TCGETS2, &tio) : -1;
    tap_ok(r == 0 && tio.c_ospeed == want && tio.c_ispeed == want && (tio.c_cflag & CBAUD) == BOTHER,
           "tty speed %u Bd through termios2/BOTHER (got %u)", want, (unsigned)tio.c_ospeed);
    tap_ok(r == 0 && (tio.c_cflag & CSIZE) == CS8 && !(tio.c_cflag & (PARENB | CSTOPB | CRTSCTS)) &&
               (tio.c_cflag & CREAD) && (tio.c_cflag & CLOCAL),
           "tty 8N1, receiver on, no modem control, no RTS/CTS");
    tap_ok(r == 0 && !(tio.c_lflag & (ICANON | ECHO | ISIG | IEXTEN)) && !(tio.c_iflag & (IXON | IXOFF | ICRNL | ISTRIP)) &&
               !(tio.c_oflag & OPOST),
           "tty raw: no canonical mode, echo, signals, XON/XOFF, CR/NL mapping, output processing");
    if (fd >= 0)
        close(fd);
    nf_transport_close(t);
    close(m);
}

struct pump {
    int fd;
    uint8_t *buf;
    size_t n, done;
};

static void *drain_master(void *arg)
{
    struct pump *p = arg;
    uint64_t end = lt_now_ms() + 5000;
    while (p->done < p->n && lt_now_ms() < end) {
        struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        ssize_t r = read(p->fd, p->buf + p->done, p->n - p->done);
        if (r > 0)
            p->done += (size_t)r;
    }
    return NULL;
}

static void *fill_master(void *arg)
{
    struct pump *p = arg;
    while (p->done < p->n) {
        size_t chunk = p->n - p->done < 1000 ? p->n - p->done : 1000;
        ssize_t w = write(p->fd, p->buf + p->done, chunk);
        if (w <= 0)
            break;
        p->done += (size_t)w;
    }
    return NULL;
}

/* A pseudo-terminal and the tty transport on its slave side; returns the master
 * (the board's end), or -1 after reporting the failure. */
static int open_pty_transport(const char *what, struct nf_transport **t)
{
    char slave[64];
    int m = open_pty(slave, sizeof(slave));
    if (!tap_ok(m >= 0 && nf_transport_open_tty(slave, t) == STATUS_SUCCESS, "%s: open", what)) {
        if (m >= 0)
            close(m);
        return -1;
    }
    return m;
}

static void test_data(void)
{
    struct nf_transport *t = NULL;
    int m = open_pty_transport("data", &t);
    if (m < 0)
        return;
    enum { N = 50000 };
    static uint8_t out[N], in[N], got[N];
    for (int i = 0; i < N; i++) {
        out[i] = (uint8_t)(i * 13 + 1); /* every byte value: CR, NL, ^C, XON, XOFF, 0x7E, ... */
        in[i] = (uint8_t)(i * 29 + 7);
    }
    struct pump p = {m, got, N, 0};
    pthread_t th;
    pthread_create(&th, NULL, drain_master, &p);
    NTSTATUS st = nf_transport_write(t, out, N, 2000);
    pthread_join(th, NULL);
    tap_ok(st == STATUS_SUCCESS && p.done == N && memcmp(got, out, N) == 0,
           "host->board: %d bytes, every byte value, arrive untouched", N);

    struct pump q = {m, in, N, 0};
    pthread_create(&th, NULL, fill_master, &q);
    size_t n = 0;
    uint64_t end = lt_now_ms() + 5000;
    while (n < N && lt_now_ms() < end) {
        ssize_t r = nf_transport_read(t, got + n, N - n, 100);
        if (r < 0)
            break;
        n += (size_t)r;
    }
    pthread_join(th, NULL);
    tap_ok(n == N && memcmp(got, in, N) == 0, "board->host: %d bytes, every byte value, arrive untouched", N);
    tap_ok(nf_transport_read(t, got, N, 0) == 0, "read with timeout 0 and nothing there returns 0");
    uint64_t t0 = lt_now_ms();
    ssize_t z = nf_transport_read(t, got, N, 50);
    tap_ok(z == 0 && lt_now_ms() - t0 >= 40, "read times out with 0 after its timeout (%.0f ms)", (double)(lt_now_ms() - t0));
    nf_transport_close(t);
    close(m);
}

static void test_wake_and_hangup(void)
{
    struct nf_transport *t = NULL;
    int m = open_pty_transport("wake", &t);
    if (m < 0)
        return;
    struct lt_reader r;
    lt_reader_start(&r, t, -1);
    nf_transport_wake(t);
    lt_reader_join(&r);
    tap_ok(r.result == 0 && r.ms < 1000, "wake ends a read waiting forever with 0 (%.0f ms)", r.ms);

    lt_reader_start(&r, t, 10000);
    close(m); /* the board (or its USB bridge) goes away */
    lt_reader_join(&r);
    tap_ok(r.result < 0 && r.ms < 1000, "hang-up: a waiting read returns < 0 promptly (%.0f ms)", r.ms);
    NTSTATUS st = nf_transport_write(t, "x", 1, 1000);
    tap_ok(st == STATUS_CONNECTION_RESET, "hang-up: write returns CONNECTION_RESET (%s)", nf_status_name(st));
    nf_transport_close(t);
}

static void test_errors(void)
{
    struct nf_transport *t = NULL;
    NTSTATUS st = nf_transport_open_tty("/dev/ttyNOSUCH9", &t);
    tap_ok(st == STATUS_NO_SUCH_FILE && !t, "missing tty: NO_SUCH_FILE (%s)", nf_error_message());
    st = nf_transport_open_tty("/dev/null", &t);
    tap_ok(st == STATUS_INVALID_PARAMETER && !t && strstr(nf_error_message(), "not a terminal"),
           "/dev/null: INVALID_PARAMETER, not a terminal (%s)", nf_error_message());
    st = nf_transport_open_tty("", &t);
    tap_ok(st == STATUS_INVALID_PARAMETER && !t, "empty path: INVALID_PARAMETER");
    char slave[64];
    int m = open_pty(slave, sizeof(slave));
    const char *bad[] = {"abc", "-5", "0", "3e6", "115200x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv("NDKFPGA_BAUD", bad[i], 1);
        st = nf_transport_open_tty(slave, &t);
        tap_ok(st == STATUS_INVALID_PARAMETER && !t, "NDKFPGA_BAUD=%s refused", bad[i]);
    }
    unsetenv("NDKFPGA_BAUD");
    close(m);
}

/* ---- the link stack over the tty: pty master <-> socket <-> fake board ---- */

struct bridge {
    int pty, sock;
    volatile int stop;
};

static void *bridge_main(void *arg)
{
    struct bridge *b = arg;
    uint8_t buf[4096];
    while (!b->stop) {
        struct pollfd pfd[2] = {{.fd = b->pty, .events = POLLIN}, {.fd = b->sock, .events = POLLIN}};
        if (poll(pfd, 2, 20) <= 0)
            continue;
        for (int i = 0; i < 2; i++) {
            if (!(pfd[i].revents & POLLIN))
                continue;
            ssize_t n = read(pfd[i].fd, buf, sizeof(buf));
            if (n <= 0)
                return NULL;
            int to = i == 0 ? b->sock : b->pty;
            for (ssize_t off = 0; off < n;) {
                ssize_t w = write(to, buf + off, (size_t)(n - off));
                if (w <= 0)
                    return NULL;
                off += w;
            }
        }
    }
    return NULL;
}

/* The link over the tty: pty master bridged to board_fd (a simulated board's
 * socket). n PINGs must come back intact and in order. */
static void link_over_tty(const char *what, int board_fd, unsigned n)
{
    char slave[64];
    int m = open_pty(slave, sizeof(slave));
    if (m < 0) {
        tap_ok(0, "%s: pseudo-terminal", what);
        return;
    }
    /* The master side must not echo or translate either. */
    struct termios2 tio;
    ioctl(m, TCGETS2, &tio);
    tio.c_iflag = 0;
    tio.c_oflag = 0;
    tio.c_lflag = 0;
    ioctl(m, TCSETS2, &tio);
    struct bridge br = {m, board_fd, 0};
    pthread_t th;
    pthread_create(&th, NULL, bridge_main, &br);
    struct nf_transport *t = NULL;
    struct nf_link *l = NULL;
    struct nf_info info;
    memset(&info, 0, sizeof(info));
    struct ping_rx r;
    ping_rx_init(&r);
    NTSTATUS st = nf_transport_open_tty(slave, &t);
    if (st == STATUS_SUCCESS)
        st = nf_link_open(t, ping_rx_on_message, ping_rx_on_dead, &r, &l, &info); /* owns t, even on failure */
    if (tap_ok(st == STATUS_SUCCESS && info.layout_version == NF_LAYOUT_VERSION,
               "%s: RESET -> INFO through the pty (%s)", what, nf_status_name(st))) {
        static uint8_t buf[NF_MSG_HDR_SIZE + 128 * 8];
        unsigned fails = 0;
        for (uint32_t tag = 1; tag <= n; tag++)
            fails += nf_link_send(l, buf, make_ping(buf, tag, (tag * 40503u) % 128 * 8), 0) != STATUS_SUCCESS;
        uint64_t got = ping_rx_wait(&r, n, 20000);
        pthread_mutex_lock(&r.mu);
        tap_ok(fails == 0 && got == n && r.order_errors == 0 && r.content_errors == 0 && r.other == 0,
               "%s: %u PINGs echoed intact and in order (%llu)", what, n, (unsigned long long)got);
        pthread_mutex_unlock(&r.mu);
    }
    nf_link_close(l);
    br.stop = 1;
    pthread_join(th, NULL);
    close(m);
    ping_rx_destroy(&r);
}

static void test_link(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        tap_ok(0, "link over tty: socket pair");
        return;
    }
    struct fake_board_cfg cfg;
    memset(&cfg, 0, sizeof(cfg));
    struct fake_board *fb = fake_board_start(sv[1], &cfg);
    link_over_tty("link over tty to the fake board", sv[0], 200);
    fake_board_stop(fb);
    close(sv[0]);

    const char *bin = board_proc_binary("NDKFPGA_MODEL", NF_MODEL_DEFAULT_PATH);
    if (!bin) {
        printf("# nfmodel case not run: %s is not built\n", NF_MODEL_DEFAULT_PATH);
        return;
    }
    struct board_proc bp;
    if (tap_ok(board_proc_start(&bp, bin) == 0, "link over tty to nfmodel: nfmodel started")) {
        link_over_tty("link over tty to nfmodel", bp.fd, 100);
        board_proc_stop(&bp);
    }
}

int main(void)
{
    test_settings(NULL, 3000000);
    test_settings("12000000", 12000000);
    test_settings("115200", 115200);
    test_data();
    test_wake_and_hangup();
    test_errors();
    test_link();
    return tap_done();
}
