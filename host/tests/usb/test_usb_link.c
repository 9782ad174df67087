/* SPDX-License-Identifier: Apache-2.0 */
/* The whole host link stack over the real libusb code path: nf_link on the "usb"
 * transport (transport_usb.c + libusb) on a fake FTDI chip (umockdev) whose UART
 * is wired to a simulated board on a socket. The board is the link tests'
 * in-process fake board (host/tests/link/fake_board.c) and, when it has been
 * built, the software adapter build/model/nfmodel ($NDKFPGA_MODEL overrides).
 * Checks: RESET -> INFO, many PINGs back intact and in order, and an unplug
 * mid-run killing the link promptly with CONNECTION_RESET. Run under
 * umockdev-wrapper. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "board_proc.h"
#include "fake_board.h"
#include "fake_ftdi.h"
#include "link_test.h"
#include "nf_layout.h"
#include "link/nf_link.h"
#include "transport/nf_transport.h"
#include "tap.h"
#include "transport/transport_board.h"

/* Open "usb" on the fake chip and the link over it. */
static struct nf_link *open_link(const char *what, struct ping_rx *r, struct nf_info *info)
{
    struct nf_transport *t = NULL;
    NTSTATUS st = nf_transport_open_usb(NULL, &t);
    if (!tap_ok(st == STATUS_SUCCESS, "%s: usb transport opens on the fake FTDI", what))
        return NULL;
    struct nf_link *l = NULL;
    memset(info, 0, sizeof(*info));
    uint64_t t0 = lt_now_ms();
    st = nf_link_open(t, ping_rx_on_message, ping_rx_on_dead, r, &l, info);
    tap_ok(st == STATUS_SUCCESS && info->layout_version == NF_LAYOUT_VERSION,
           "%s: link RESET -> INFO over libusb (%s, layout %u, %llu ms)", what, nf_status_name(st),
           (unsigned)info->layout_version, (unsigned long long)(lt_now_ms() - t0));
    return st == STATUS_SUCCESS ? l : NULL;
}

/* Send PINGs first..first+n-1 (every third deferred) and wait for the echoes. */
static void pings(const char *what, struct nf_link *l, struct ping_rx *r, uint32_t first, uint32_t n, size_t max_body)
{
    static uint8_t buf[NF_LINK_MAX_PAYLOAD];
    unsigned fails = 0;
    uint64_t before = ping_rx_wait(r, 0, 0);
    uint64_t t0 = lt_now_ms();
    for (uint32_t i = 0; i < n; i++) {
        size_t body = ((i * 2654435761u) % (max_body / 8 + 1)) * 8;
        fails += nf_link_send(l, buf, make_ping(buf, first + i, body), (i % 3) == 1 && i + 1 < n) != STATUS_SUCCESS;
    }
    nf_link_flush(l);
    ping_rx_wait(r, before + n, 20000);
    pthread_mutex_lock(&r->mu);
    tap_ok(fails == 0 && r->replies == before + n && r->order_errors == 0 && r->content_errors == 0,
           "%s: %u PINGs (bodies up to %zu bytes) echoed intact and in order (%llu replies, %llu ms)", what, n,
           max_body, (unsigned long long)(r->replies - before), (unsigned long long)(lt_now_ms() - t0));
    pthread_mutex_unlock(&r->mu);
}

/* A fake chip (paced at baud unless 0) relayed to the in-process fake board, and
 * the link over it. */
struct rig {
    struct fake_ftdi *f;
    int sv[2];
    struct fake_board *b;
    struct ping_rx r;
    struct nf_info info;
    struct nf_link *l;
};

static int rig_open(struct rig *g, const char *what, uint16_t pid, uint32_t baud, const struct fake_board_cfg *cfg)
{
    memset(g, 0, sizeof(*g));
    ping_rx_init(&g->r);
    g->f = fake_ftdi_new(0x0403, pid, 1, 7);
    if (!g->f || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, g->sv) != 0) {
        tap_ok(0, "%s: fake FTDI and socket pair", what);
        fake_ftdi_free(g->f);
        g->f = NULL;
        return 0;
    }
    if (baud)
        fake_ftdi_pace(g->f, baud);
    g->b = fake_board_start(g->sv[1], cfg);
    fake_ftdi_relay(g->f, g->sv[0]);
    g->l = open_link(what, &g->r, &g->info);
    return g->l != NULL;
}

static void rig_close(struct rig *g)
{
    nf_link_close(g->l);
    if (g->f) {
        fake_ftdi_free(g->f); /* stops the relay */
        fake_board_stop(g->b);
        close(g->sv[0]);
    }
    ping_rx_destroy(&g->r);
}

static void test_fake_board(uint16_t pid, const char *what)
{
    struct fake_board_cfg cfg = {.seed = 7};
    struct rig g;
    if (rig_open(&g, what, pid, 0, &cfg)) {
        struct nf_link *l = g.l;
        pings(what, l, &g.r, 1, 300, 1024);
        struct fake_board_stats bs;
        fake_board_get_stats(g.b, &bs);
        tap_ok(bs.pings == 300 && bs.order_errors == 0 && bs.content_errors == 0,
               "%s: the board got each PING once, in order, intact (%llu)", what, (unsigned long long)bs.pings);
        /* Unplug with requests outstanding: the link must die, promptly. */
        static uint8_t buf[1024];
        for (uint32_t i = 0; i < 20; i++)
            nf_link_send(l, buf, make_ping(buf, 301 + i, 512), 0);
        uint64_t t0 = lt_now_ms();
        fake_ftdi_unplug(g.f);
        ping_rx_wait_dead(&g.r, 3000);
        pthread_mutex_lock(&g.r.mu);
        uint64_t took = g.r.dead_at_ms - t0;
        tap_ok(g.r.dead_calls == 1 && g.r.dead_status == STATUS_CONNECTION_RESET && took < 1000,
               "%s: unplug kills the link with CONNECTION_RESET in %llu ms (%s)", what, (unsigned long long)took,
               nf_status_name(g.r.dead_status));
        pthread_mutex_unlock(&g.r.mu);
        t0 = lt_now_ms();
        NTSTATUS st = nf_link_send(l, buf, make_ping(buf, 999, 8), 0);
        tap_ok(st == STATUS_CONNECTION_RESET && lt_now_ms() - t0 < 500,
               "%s: a send after the unplug fails at once (%s)", what, nf_status_name(st));
    }
    rig_close(&g);
}

/* Link throughput over the libusb path with the fake chip's UART paced at the
 * board's rate: many PINGs in flight must keep the line busy (no stop-and-wait).
 * Measured: wire bytes host->board per second against the line's 10-bit bytes. */
/* assert: report as a test case (else only print the measurement as a comment:
 * at 12 MBd the fake chip itself needs more CPU than a loaded machine gives). */
static void test_throughput(uint16_t pid, uint32_t baud, const char *what, int assert)
{
    struct fake_board_cfg cfg = {.rx_slots = 8, .tx_slots = 8};
    struct rig g;
    if (rig_open(&g, what, pid, baud, &cfg)) {
        struct nf_link *l = g.l;
        static uint8_t buf[NF_LINK_MAX_PAYLOAD];
        enum { N = 300, BODY = 1016 };
        struct nf_link_stats s0, s1;
        nf_link_get_stats(l, &s0);
        uint64_t t0 = lt_now_ms();
        unsigned fails = 0;
        for (uint32_t i = 0; i < N; i++)
            fails += nf_link_send(l, buf, make_ping(buf, 1 + i, BODY), 0) != STATUS_SUCCESS;
        ping_rx_wait(&g.r, N, 30000);
        double secs = (double)(lt_now_ms() - t0) / 1e3;
        nf_link_get_stats(l, &s1);
        double line = baud / 10.0;
        double used_tx = (double)(s1.wire_tx - s0.wire_tx) / secs / line;
        double used_rx = (double)(s1.wire_rx - s0.wire_rx) / secs / line;
        double goodput = (double)(s1.payload_tx - s0.payload_tx) / secs / line;
        pthread_mutex_lock(&g.r.mu);
        int all = g.r.replies == N && g.r.order_errors == 0 && g.r.content_errors == 0 && fails == 0;
        pthread_mutex_unlock(&g.r.mu);
        /* Unloaded, this reads 97-99% (the product asks for 90%); on a machine
         * shared by many jobs the fake chip's pacing thread starves, so the check
         * only demands what no stop-and-wait transport can reach (< 50%). */
        char msg[320];
        snprintf(msg, sizeof(msg),
                 "%s: %d PINGs of %d bytes at %u Bd: line busy %.1f%% host->board, %.1f%% board->host, "
                 "payload %.1f%% of the raw rate (%.2f s, %llu retransmitted)",
                 what, N, BODY, (unsigned)baud, 100 * used_tx, 100 * used_rx, 100 * goodput, secs,
                 (unsigned long long)(s1.retransmits - s0.retransmits));
        if (assert)
            tap_ok(all && used_tx >= 0.55, "%s", msg);
        else
            printf("# measured, not checked: %s%s\n", msg, all ? "" : " (PINGs missing!)");
    }
    rig_close(&g);
}

/* A simulated board binary (nfmodel or nfsim: same socket protocol) on a private
 * socket, relayed through the fake FTDI. */
static void test_board_binary(const char *what, const char *env, const char *dflt, uint32_t n, size_t max_body)
{
    const char *bin = board_proc_binary(env, dflt);
    if (!bin) {
        printf("# %s case not run: %s is not built\n", what, dflt);
        return;
    }
    struct board_proc bp;
    if (!tap_ok(board_proc_start(&bp, bin) == 0, "%s: started and accepting on a private socket", what))
        return;
    struct fake_ftdi *f = fake_ftdi_new(0x0403, 0x6015, 1, 7);
    fake_ftdi_relay(f, bp.fd);
    struct ping_rx r;
    ping_rx_init(&r);
    struct nf_info info;
    struct nf_link *l = open_link(what, &r, &info);
    if (l) {
        tap_ok(info.rx_slots > 0 && info.page_size > 0, "%s: INFO describes the adapter (%u RX slots, page %u)", what,
               (unsigned)info.rx_slots, (unsigned)info.page_size);
        pings(what, l, &r, 1, n, max_body);
        nf_link_close(l);
    }
    fake_ftdi_free(f); /* stops the relay before the socket closes */
    board_proc_stop(&bp);
    ping_rx_destroy(&r);
}

int main(void)
{
    unsetenv("NDKFPGA_BAUD");
    signal(SIGPIPE, SIG_IGN);
    struct fake_ftdi *probe = fake_ftdi_new_empty();
    if (!probe) {
        printf("not ok - umockdev is not active: run this test under umockdev-wrapper\n");
        return 1;
    }
    fake_ftdi_free(probe);
    test_fake_board(0x6015, "FT231X + fake board");
    test_fake_board(0x6010, "FT2232H + fake board");
    test_throughput(0x6015, 3000000, "FT231X paced at 3 MBd + fake board", 1);
    test_throughput(0x6010, 3000000, "FT2232H paced at 3 MBd + fake board", 1);
    test_throughput(0x6010, 12000000, "FT2232H paced at 12 MBd + fake board", 0);
    test_board_binary("nfmodel", "NDKFPGA_MODEL", NF_MODEL_DEFAULT_PATH, 100, 512);
    test_board_binary("nfsim", "NDKFPGA_SIM", NF_SIM_DEFAULT_PATH, 10, 64);
    return tap_done();
}
