/* SPDX-License-Identifier: Apache-2.0 */
/* transport_usb.c against a fake FTDI chip at the usbfs ioctl level (umockdev):
 * the real libusb and libftdi1 code path end to end. Run under umockdev-wrapper.
 *
 * Cases: the init sequence for each chip (reset, purge, bit mode 0, 8N1, the
 * exact baud value/index, flow control, latency), kernel-driver detach and claim,
 * bytes both ways with the status bytes stripped, status-only packets read as no
 * data, several IN transfers in flight, wake, write timeout when the chip stops
 * draining, unplug failing read and write promptly, device selection and the
 * errors for no device / wrong device / bad arguments (every malformed BUS-ADDR). */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fake_ftdi.h"
#include "link_test.h"
#include "transport/nf_transport.h"
#include "tap.h"
#include "transport/transport_board.h"

/* "san: " when run as the sanitizer build, so the two runs' case names differ. */
static const char *case_prefix = "";

#define check(cond, ...) tap_okp((cond), case_prefix, __VA_ARGS__)

static double now_ms(void)
{
    return (double)lt_now_ms();
}

/* Read exactly n bytes within deadline_ms; returns bytes read. */
static size_t read_all(struct nf_transport *t, uint8_t *buf, size_t n, int deadline_ms)
{
    size_t got = 0;
    double end = now_ms() + deadline_ms;
    while (got < n && now_ms() < end) {
        ssize_t r = nf_transport_read(t, buf + got, n - got, 50);
        if (r < 0)
            break;
        got += (size_t)r;
    }
    return got;
}

static int wait_received(struct fake_ftdi *f, size_t n, int deadline_ms)
{
    uint8_t tmp[1];
    double end = now_ms() + deadline_ms;
    while (now_ms() < end) {
        if (n == 0 || fake_ftdi_received(f, n - 1, tmp, 1) == 1)
            return 1;
        lt_sleep_ms(2);
    }
    return 0;
}

#define FTDI_REQTYPE_OUT 0x40 /* vendor request, host to device */
#define FTDI_REQ_BAUD 0x03

struct expect_ctrl {
    uint8_t req;
    uint16_t value, index;
};

static void check_init(const char *chip, struct fake_ftdi *f, const struct expect_ctrl *want, size_t n)
{
    struct fake_ctrl got[64];
    size_t g = fake_ftdi_controls(f, got, 64);
    int same = g == n;
    for (size_t i = 0; same && i < n; i++)
        same = got[i].type == FTDI_REQTYPE_OUT && got[i].req == want[i].req && got[i].value == want[i].value &&
               got[i].index == want[i].index && got[i].length == 0;
    if (!same)
        for (size_t i = 0; i < g; i++)
            fprintf(stderr, "  ctrl %zu: type 0x%02x req 0x%02x value 0x%04x index 0x%04x len %u\n", i, got[i].type,
                    got[i].req, got[i].value, got[i].index, got[i].length);
    check(same, "%s: init sequence reset, purge RX/TX, bit mode 0, 8N1, baud, no flow control, latency (%zu requests)",
           chip, g);
}

static void test_ft231x_init(void)
{
    struct fake_ftdi *f = fake_ftdi_new(0x0403, 0x6015, 1, 7);
    struct nf_transport *t = NULL;
    NTSTATUS st = nf_transport_open_usb(NULL, &t);
    if (!check(st == STATUS_SUCCESS && t, "FT231X: open \"usb\" finds the ULX3S bridge%s%s", st ? ": " : "", st ? nf_error_message() : "")) {
        fake_ftdi_free(f);
        return;
    }
    check(strcmp(t->name, "usb:001-007") == 0, "FT231X: transport named %s", t->name);
    check(fake_ftdi_detached(f) == 0 && fake_ftdi_claimed(f) == 0, "FT231X: kernel driver detached, interface 0 claimed");
    const struct expect_ctrl want[] = {
        {0x00, 0, 1}, {0x00, 1, 1}, {0x00, 2, 1}, {0x0B, 0, 1}, {0x04, 0x0008, 1}, {0x03, 0x0000, 0x0000},
        {0x02, 0, 1}, {0x09, 1, 1},
    };
    check_init("FT231X 3 MBd", f, want, sizeof(want) / sizeof(want[0]));
    nf_transport_close(t);
    check(fake_ftdi_released(f) == 0 && fake_ftdi_reattached(f) == 0,
          "FT231X: interface released and the kernel driver (ftdi_sio) re-attached at close");
    fake_ftdi_free(f);
}

static void test_baud_env(const char *baud, uint16_t value)
{
    setenv("NDKFPGA_BAUD", baud, 1);
    struct fake_ftdi *f = fake_ftdi_new(0x0403, 0x6015, 1, 7);
    struct nf_transport *t = NULL;
    NTSTATUS st = nf_transport_open_usb(NULL, &t);
    struct fake_ctrl got[64];
    size_t g = fake_ftdi_controls(f, got, 64);
    int found = 0;
    for (size_t i = 0; i < g; i++)
        if (got[i].req == FTDI_REQ_BAUD)
            found = got[i].value == value && got[i].index == 0;
    check(st == STATUS_SUCCESS && found, "FT231X: NDKFPGA_BAUD=%s sets divisor value %u index 0", baud, value);
    nf_transport_close(t);
    fake_ftdi_free(f);
    unsetenv("NDKFPGA_BAUD");
}

static void test_bad_baud(void)
{
    struct fake_ftdi *f = fake_ftdi_new(0x0403, 0x6015, 1, 7);
    struct nf_transport *t = NULL;
    setenv("NDKFPGA_BAUD", "12000000", 1);
    NTSTATUS st = nf_transport_open_usb(NULL, &t);
    check(st == STATUS_INVALID_PARAMETER && !t && strstr(nf_error_message(), "12000000"),
           "FT231X: 12 MBd refused (%s)", nf_error_message());
    setenv("NDKFPGA_BAUD", "fast", 1);
    st = nf_transport_open_usb(NULL, &t);
    check(st == STATUS_INVALID_PARAMETER && !t, "NDKFPGA_BAUD=fast refused (%s)", nf_error_message());
    unsetenv("NDKFPGA_BAUD");
    /* The refused open left the device free: a normal open works. */
    st = nf_transport_open_usb(NULL, &t);
    check(st == STATUS_SUCCESS, "FT231X: opens normally after refused opens");
    nf_transport_close(t);
    fake_ftdi_free(f);
}

static void test_ft2232h_init(void)
{
    struct fake_ftdi *f = fake_ftdi_new(0x0403, 0x6010, 3, 12);
    struct nf_transport *t = NULL;
    NTSTATUS st = nf_transport_open_usb("3-12", &t);
    if (!check(st == STATUS_SUCCESS && t, "FT2232H: open \"usb:3-12\"%s%s", st ? ": " : "", st ? nf_error_message() : "")) {
        fake_ftdi_free(f);
        return;
    }
    check(fake_ftdi_claimed(f) == 1, "FT2232H: channel B interface 1 claimed");
    const struct expect_ctrl want[] = {
        {0x00, 0, 2}, {0x00, 1, 2}, {0x00, 2, 2}, {0x0B, 0, 2}, {0x04, 0x0008, 2}, {0x03, 0x0000, 0x0202},
        {0x02, 0, 2}, {0x09, 1, 2},
    };
    check_init("FT2232H 12 MBd", f, want, sizeof(want) / sizeof(want[0]));
    nf_transport_close(t);
    fake_ftdi_free(f);
}

static void test_data(uint16_t pid, const char *chip)
{
    struct fake_ftdi *f = fake_ftdi_new(0x0403, pid, 1, 5);
    struct nf_transport *t = NULL;
    if (!check(nf_transport_open_usb(NULL, &t) == STATUS_SUCCESS, "%s: open for data", chip)) {
        fake_ftdi_free(f);
        return;
    }
    enum { N = 20000 };
    static uint8_t out[N], in[N], got[N];
    for (int i = 0; i < N; i++) {
        out[i] = (uint8_t)(i * 13 + 1);
        in[i] = (uint8_t)(i * 29 + 7);
    }
    /* Host -> board, in odd-sized writes. */
    NTSTATUS st = STATUS_SUCCESS;
    for (size_t off = 0; off < N && st == STATUS_SUCCESS; off += 777)
        st = nf_transport_write(t, out + off, N - off < 777 ? N - off : 777, 1000);
    int arrived = wait_received(f, N, 3000);
    size_t n = fake_ftdi_received(f, 0, got, N);
    check(st == STATUS_SUCCESS && arrived && n == N && memcmp(got, out, N) == 0,
           "%s: %d bytes host->board arrive intact on the OUT endpoint", chip, N);
    /* Board -> host: the fake wraps them in packets with status bytes. */
    long status_before = fake_ftdi_status_only(f);
    fake_ftdi_push(f, in, N);
    memset(got, 0, N);
    size_t r = read_all(t, got, N, 5000);
    check(r == N && memcmp(got, in, N) == 0, "%s: %d bytes board->host, status bytes stripped (%zu read)", chip, N, r);
    check(fake_ftdi_in_packets_with_data(f) > 1, "%s: IN data came in %ld transfers", chip,
           fake_ftdi_in_packets_with_data(f));
    /* Idle: the chip sends status-only packets; they are no data. */
    lt_sleep_ms(30);
    ssize_t z = nf_transport_read(t, got, N, 50);
    check(z == 0 && fake_ftdi_status_only(f) > status_before,
           "%s: status-only (2-byte) IN packets read as no data (%ld seen)", chip, fake_ftdi_status_only(f));
    check(fake_ftdi_max_in_flight(f) >= 4, "%s: %d IN transfers kept in flight", chip, fake_ftdi_max_in_flight(f));
    /* A single byte still goes through promptly (nothing waits for a full packet). */
    double t0 = now_ms();
    fake_ftdi_push(f, "\x7E", 1);
    uint8_t b = 0;
    size_t one = read_all(t, &b, 1, 1000);
    check(one == 1 && b == 0x7E, "%s: one byte board->host in %.1f ms", chip, now_ms() - t0);
    nf_transport_close(t);
    check(fake_ftdi_in_pending(f) == 0, "%s: close cancelled every IN transfer", chip);
    fake_ftdi_free(f);
}

/* A consumer that does not read: the receive ring fills, the IN transfers wait
 * (none is lost or overwritten), and reading again restarts them. */
static void case_backpressure(struct fake_ftdi *f, struct nf_transport *t)
{
    enum { N = 100000 };
    static uint8_t in[N], got[N];
    for (int i = 0; i < N; i++)
        in[i] = (uint8_t)(i * 31 + (i >> 8));
    fake_ftdi_push(f, in, N);
    lt_sleep_ms(200);
    check(fake_ftdi_in_pending(f) == 0, "backpressure: with the ring full no IN transfer is left in flight");
    size_t r = read_all(t, got, N, 10000);
    check(r == N && memcmp(got, in, N) == 0, "backpressure: then all %d bytes read intact (%zu)", N, r);
    /* Idle IN transfers cycle (status-only packets), so look for all 4 at once. */
    int most = 0;
    for (int i = 0; i < 200 && most < 4; i++) {
        int n = fake_ftdi_in_pending(f);
        most = n > most ? n : most;
        lt_sleep_ms(1);
    }
    check(most == 4, "backpressure: reading restarted all 4 IN transfers (%d)", most);
    nf_transport_close(t);
}

static void case_wake(struct fake_ftdi *f, struct nf_transport *t)
{
    (void)f; /* the chip only has to be there */
    struct lt_reader r;
    lt_reader_start(&r, t, -1);
    nf_transport_wake(t);
    lt_reader_join(&r);
    check(r.result == 0 && r.ms < 1000, "wake: a read waiting forever returns 0 after wake (%.0f ms)",
           r.ms);
    /* A wake before the read makes the next read return 0 at once. */
    nf_transport_wake(t);
    r.timeout_ms = 5000;
    lt_reader_run(&r);
    check(r.result == 0 && r.ms < 500, "wake: an earlier wake ends the next read at once (%.0f ms)",
           r.ms);
    nf_transport_close(t);
}

static void case_unplug(struct fake_ftdi *f, struct nf_transport *t)
{
    fake_ftdi_push(f, "abc", 3);
    uint8_t buf[8];
    check(read_all(t, buf, 3, 1000) == 3, "unplug: link works before");
    struct lt_reader r;
    lt_reader_start(&r, t, 10000);
    fake_ftdi_unplug(f);
    lt_reader_join(&r);
    check(r.result < 0 && r.ms < 1000, "unplug: a waiting read returns < 0 promptly (%zd after %.0f ms)", r.result,
          r.ms);
    double t0 = now_ms();
    NTSTATUS st = nf_transport_write(t, "hello", 5, 10000);
    check(st == STATUS_CONNECTION_RESET && now_ms() - t0 < 500, "unplug: write returns CONNECTION_RESET (%s)",
           nf_status_name(st));
    check(nf_transport_read(t, buf, sizeof(buf), 1000) < 0, "unplug: later reads fail at once");
    t0 = now_ms();
    nf_transport_close(t);
    check(now_ms() - t0 < 1000, "unplug: close does not hang (%.0f ms)", now_ms() - t0);
}

static void case_unplug_while_writing(struct fake_ftdi *f, struct nf_transport *t)
{
    /* The chip stops draining: the OUT transfers in flight never finish. */
    fake_ftdi_hold_out(f, 1);
    static uint8_t big[64 * 1024];
    double t0 = now_ms();
    NTSTATUS st = nf_transport_write(t, big, sizeof(big), 200);
    double dt = now_ms() - t0;
    check(st == STATUS_IO_TIMEOUT && dt >= 150 && dt < 1000,
           "stalled OUT: write gives IO_TIMEOUT after its timeout (%s, %.0f ms)", nf_status_name(st), dt);
    /* Then the board is unplugged while those transfers hang. */
    fake_ftdi_unplug(f);
    t0 = now_ms();
    st = nf_transport_write(t, big, 100, 5000);
    while (st == STATUS_SUCCESS && now_ms() - t0 < 1000)
        st = nf_transport_write(t, big, 100, 5000);
    check(st == STATUS_CONNECTION_RESET && now_ms() - t0 < 1000,
           "unplug with OUT transfers hanging: write fails CONNECTION_RESET (%.0f ms)", now_ms() - t0);
    uint8_t b[4];
    check(nf_transport_read(t, b, 4, 1000) < 0, "unplug with OUT transfers hanging: read fails");
    nf_transport_close(t);
}

/* While every OUT transfer is in flight, further writes are staged and leave
 * together in the next transfer: small frames are not each a transfer. */
static void case_coalescing(struct fake_ftdi *f, struct nf_transport *t)
{
    fake_ftdi_hold_out(f, 1);
    uint8_t frame[40], all[40 * 30];
    NTSTATUS st = STATUS_SUCCESS;
    for (int i = 0; i < 30 && st == STATUS_SUCCESS; i++) {
        for (int k = 0; k < 40; k++)
            frame[k] = (uint8_t)(i * 40 + k);
        memcpy(all + 40 * i, frame, 40);
        st = nf_transport_write(t, frame, sizeof(frame), 100);
    }
    check(st == STATUS_SUCCESS, "coalescing: 30 small writes accepted while the chip holds 4 transfers");
    long before = fake_ftdi_out_urbs(f);
    fake_ftdi_hold_out(f, 0);
    int arrived = wait_received(f, sizeof(all), 2000);
    uint8_t got[sizeof(all)];
    size_t n = fake_ftdi_received(f, 0, got, sizeof(got));
    check(arrived && n == sizeof(all) && memcmp(got, all, n) == 0, "coalescing: all 1200 bytes arrive in write order");
    check(before == 4 && fake_ftdi_out_urbs(f) == 5,
          "coalescing: 4 transfers in flight, the other 26 writes left in 1 transfer (%ld + %ld URBs)", before,
          fake_ftdi_out_urbs(f) - before);
    nf_transport_close(t);
}

static void case_close_with_held_out(struct fake_ftdi *f, struct nf_transport *t)
{
    fake_ftdi_hold_out(f, 1);
    nf_transport_write(t, "0123456789", 10, 100);
    double t0 = now_ms();
    nf_transport_close(t);
    check(now_ms() - t0 < 1000 && fake_ftdi_in_pending(f) == 0,
           "close with OUT transfers in flight cancels them and returns (%.0f ms)", now_ms() - t0);
}

/* Cases that run on an open transport to one fake chip: each closes the
 * transport itself (some time the close). */
static const struct usb_case {
    const char *name;
    uint16_t pid;
    int bus, addr;
    void (*run)(struct fake_ftdi *f, struct nf_transport *t);
} usb_cases[] = {
    {"backpressure", 0x6015, 1, 7, case_backpressure},
    {"wake", 0x6015, 1, 7, case_wake},
    {"unplug", 0x6015, 1, 7, case_unplug},
    {"stalled OUT", 0x6010, 1, 9, case_unplug_while_writing},
    {"coalescing", 0x6015, 1, 7, case_coalescing},
    {"close with OUT in flight", 0x6015, 1, 7, case_close_with_held_out},
};

static void run_usb_case(const struct usb_case *c)
{
    struct fake_ftdi *f = fake_ftdi_new(0x0403, c->pid, c->bus, c->addr);
    struct nf_transport *t = NULL;
    nf_transport_open_usb(NULL, &t);
    if (check(t != NULL, "%s: open", c->name))
        c->run(f, t);
    fake_ftdi_free(f);
}

static void test_selection(void)
{
    struct nf_transport *t = NULL;
    struct fake_ftdi *f = fake_ftdi_new_empty();
    NTSTATUS st = nf_transport_open_usb(NULL, &t);
    check(st == STATUS_DEVICE_NOT_CONNECTED && !t && strstr(nf_error_message(), "0403:6015") &&
               strstr(nf_error_message(), "0403:6010"),
           "no device: DEVICE_NOT_CONNECTED naming both boards (%s)", nf_error_message());
    check(nf_board_present() == 0, "no device: nf_board_present() is 0");
    fake_ftdi_free(f);

    f = fake_ftdi_new(0x0403, 0x6015, 2, 4);
    check(nf_board_present() == 1, "FT231X plugged: nf_board_present() is 1");
    st = nf_transport_open_usb("002-004", &t);
    check(st == STATUS_SUCCESS && t && strcmp(t->name, "usb:002-004") == 0, "usb:002-004 (leading zeros) opens");
    nf_transport_close(t);
    t = NULL;
    st = nf_transport_open_usb("2-5", &t);
    check(st == STATUS_DEVICE_NOT_CONNECTED && !t, "usb:2-5: nothing there -> DEVICE_NOT_CONNECTED (%s)",
           nf_error_message());
    st = nf_transport_open_usb("2:4", &t);
    check(st == STATUS_INVALID_PARAMETER && !t && strstr(nf_error_message(), "usb:1-7"),
           "usb:2:4 malformed -> INVALID_PARAMETER with an example (%s)", nf_error_message());
    /* Bus 1..255, address 1..127, decimal, nothing around them. */
    const char *bad[] = {"", "2", "2-", "-4", "2-4x", "0-4", "2-0", "256-4", "2-128", "a-b", "2--4", " 2-4"};
    int refused = 0;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        st = nf_transport_open_usb(bad[i], &t);
        refused += st == STATUS_INVALID_PARAMETER && !t;
        if (st != STATUS_INVALID_PARAMETER)
            fprintf(stderr, "  usb:%s -> %s\n", bad[i], nf_status_name(st));
    }
    check(refused == (int)(sizeof(bad) / sizeof(bad[0])), "%d malformed BUS-ADDR forms refused with INVALID_PARAMETER",
          refused);
    fake_ftdi_free(f);

    f = fake_ftdi_new(0x046d, 0xc52b, 1, 3);
    st = nf_transport_open_usb("1-3", &t);
    check(st == STATUS_INVALID_PARAMETER && !t && strstr(nf_error_message(), "046d:c52b"),
           "usb:1-3 is a mouse -> INVALID_PARAMETER naming it (%s)", nf_error_message());
    st = nf_transport_open_usb(NULL, &t);
    check(st == STATUS_DEVICE_NOT_CONNECTED && !t, "only a non-FTDI device: \"usb\" finds no board");
    check(nf_board_present() == 0, "only a non-FTDI device: nf_board_present() is 0");
    fake_ftdi_free(f);
}

/* Drop the capabilities that let root ignore file modes, in this thread only
 * (capabilities are per thread at the syscall level), then open. */
struct denied_open {
    NTSTATUS st;
    struct nf_transport *t;
    char msg[256];
    int capset_ok;
};

static void *open_without_dac(void *arg)
{
    struct denied_open *d = arg;
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    memset(data, 0, sizeof(data));
    if (syscall(SYS_capget, &hdr, data) == 0) {
        data[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
        d->capset_ok = syscall(SYS_capset, &hdr, data) == 0;
    }
    d->st = nf_transport_open_usb(NULL, &d->t);
    snprintf(d->msg, sizeof(d->msg), "%s", nf_error_message());
    return NULL;
}

static void test_permission(void)
{
    struct fake_ftdi *f = fake_ftdi_new(0x0403, 0x6015, 1, 7);
    struct denied_open d = {0, NULL, "", 0};
    if (!check(fake_ftdi_deny_access(f) == 0, "permission: device node made mode 0")) {
        fake_ftdi_free(f);
        return;
    }
    pthread_t th;
    pthread_create(&th, NULL, open_without_dac, &d);
    pthread_join(th, NULL);
    check(d.capset_ok, "permission: opening thread runs without CAP_DAC_OVERRIDE");
    check(d.st == STATUS_ACCESS_DENIED && !d.t && strstr(d.msg, "sudo cp tools/99-ndkfpga.rules /etc/udev/rules.d/") &&
              strstr(d.msg, "udevadm control --reload") && strstr(d.msg, "replug"),
          "permission: ACCESS_DENIED with the udev rule to install (%s: %s)", nf_status_name(d.st), d.msg);
    nf_transport_close(d.t);
    fake_ftdi_free(f);
}

/* Through the library's dispatch (nf_transport_open), once it routes "usb" here. */
static void test_dispatch(void)
{
    struct fake_ftdi *f = fake_ftdi_new(0x0403, 0x6015, 1, 7);
    struct nf_transport *t = NULL;
    NTSTATUS st = nf_transport_open("usb:1-7", &t);
    if (st == STATUS_NOT_SUPPORTED) {
        printf("# nf_transport_open does not dispatch \"usb\" yet: dispatch cases not run\n");
        fake_ftdi_free(f);
        return;
    }
    check(st == STATUS_SUCCESS && t && strcmp(t->name, "usb:001-007") == 0,
          "dispatch: nf_transport_open(\"usb:1-7\") opens the board (%s)", nf_status_name(st));
    nf_transport_close(t);
    t = NULL;
    st = nf_transport_open("auto", &t);
    check(st == STATUS_SUCCESS && t && strncmp(t->name, "usb:", 4) == 0,
          "dispatch: \"auto\" picks the board when one is plugged in (%s)", t ? t->name : nf_status_name(st));
    nf_transport_close(t);
    fake_ftdi_free(f);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        case_prefix = argv[1];
    unsetenv("NDKFPGA_BAUD");
    struct fake_ftdi *probe = fake_ftdi_new_empty();
    if (!probe) {
        printf("not ok - umockdev is not active: run this test under umockdev-wrapper\n");
        return 1;
    }
    fake_ftdi_free(probe);
    test_ft231x_init();
    test_baud_env("2000000", 1);
    test_baud_env("1000000", 3);
    test_baud_env("115200", 0x1A);
    test_bad_baud();
    test_ft2232h_init();
    test_data(0x6015, "FT231X");
    test_data(0x6010, "FT2232H");
    for (size_t i = 0; i < sizeof(usb_cases) / sizeof(usb_cases[0]); i++)
        run_usb_case(&usb_cases[i]);
    test_selection();
    test_permission();
    test_dispatch();
    return tap_done();
}
