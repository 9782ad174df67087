/* SPDX-License-Identifier: Apache-2.0 */
/* One host link as its user sees it (`bench_sim --host-link DEVICE NAME [BUFFER_BYTES]`): DEVICE is
 * "sim" (nfsim's UART) or "udp:HOST:PORT" (nfsim --link-udp, the Ethernet host link).
 *
 * - fast-register of 1 and 16 pages, post to the CQE delivered to the host: the board's
 *   cycle counter (INFO.cycle) read three times, ca, c0, then the request posted, its
 *   CQE awaited, c1; (c1 - c0) - (c0 - ca) leaves the request's way out, the board's work
 *   and the CQE's way back (an idle read's round trip taken off, as ndkfpga sendlat does);
 * - buffer I/O: NdkFpgaWriteBuffer and NdkFpgaReadBuffer of a whole adapter buffer
 *   (BUFFER_BYTES, 64 KiB unless given; 0 leaves this out), timed the same way with
 *   NdkFpgaQueryStats' Cycle, every byte read back checked.
 *
 * nfsim runs freely while the host works, so the clocks hold the host's own time at the
 * simulation's speed, and an idle read's round trip moves with it: each figure is the
 * median of REPS runs. Prints
 * "link_NAME_* = value" lines for bench/report.py and TAP lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_sim.h"
#include "ndkfpga.h"

#define REPS 5

static uint32_t buf_bytes = 65536; /* the buffer written and read */
static const char *name;  /* the link's name in the keys: uart, udp */

/* (c1 - c0) - (c0 - ca), or UINT64_MAX when the counter did not move forward. */
static uint64_t less_idle(uint64_t ca, uint64_t c0, uint64_t c1)
{
    return c0 > ca && c1 > c0 && c1 - c0 > c0 - ca ? (c1 - c0) - (c0 - ca) : UINT64_MAX;
}

/* One request posted alone and its CQE awaited; 0 when the link or the request failed.
 * *clocks: the host-visible clocks, UINT64_MAX when the host's own time swamped them. */
static int posted_wr(struct nf_link *l, const uint8_t *m, size_t len, uint64_t *clocks)
{
    struct nf_info a, b, c;
    if (!get_info(l, &a) || !get_info(l, &b))
        return 0;
    uint64_t before = cqe_count();
    nf_link_expect(l, 1);
    int ok = nf_link_send(l, m, len, 0) == STATUS_SUCCESS && wait_cqes(before + 1);
    nf_link_expect(l, -1);
    if (!ok || !get_info(l, &c))
        return 0;
    *clocks = less_idle(info_cycle(&a), info_cycle(&b), info_cycle(&c));
    return cqe_failures() == 0;
}

static int fastreg(const char *device)
{
    struct nf_transport *t;
    if (nf_transport_open(device, &t) != STATUS_SUCCESS) {
        printf("not ok - sim: open %s: %s\n", device, nf_error_message());
        return 0;
    }
    /* The simulation runs many times slower than the board: a timeout tuned for the
     * board would resend frames still on their way (bench_sim.c's main says more). */
    struct nf_link_config cfg = {.rto_min_ms = 3000, .rto_initial_ms = 5000};
    struct nf_link *l;
    struct nf_info info;
    if (bench_link_open(t, &cfg, &l, &info) != STATUS_SUCCESS) {
        printf("not ok - sim: link open over %s: %s\n", device, nf_error_message());
        return 0;
    }
    struct setup s = {.user_base = info.user_base, .max_pages = info.max_frmr_pages};
    int ok = setup_fastreg(l, &s);
    printf("link_%s_clk_hz = %u\n", name, info.clk_hz);
    printf("link_%s_uart_period_q4 = %u\n", name, info.uart_period);
    static const uint32_t pages[] = {1, 16};
    static uint8_t m[MAX_MSG];
    for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]) && ok; i++) {
        uint64_t runs[REPS];
        size_t len = 0;
        for (uint32_t r = 0; r < REPS && ok; r++) {
            len = fr_msg(m, &s, 100 * pages[i] + r, pages[i], 0);
            uint64_t c = UINT64_MAX, ic;
            ok = posted_wr(l, m, len, &c);
            runs[r] = c;
            size_t il = inv_msg(m, &s, 100 * pages[i] + r + 50);
            ok = ok && posted_wr(l, m, il, &ic);
        }
        uint64_t best = ok ? bench_median(runs, REPS) : UINT64_MAX;
        ok = ok && best != UINT64_MAX;
        if (ok) {
            printf("link_%s_fastreg_clocks_%upage%s = %llu\n", name, pages[i], pages[i] > 1 ? "s" : "",
                   (unsigned long long)best);
            printf("link_%s_fastreg_msg_bytes_%upage%s = %zu\n", name, pages[i], pages[i] > 1 ? "s" : "", len);
        }
    }
    char what[128];
    snprintf(what, sizeof(what), "%s: fast-register of 1 and 16 pages and invalidate, %d times each, completed",
             name, REPS);
    check(ok, what);
    nf_link_close(l);
    return ok;
}

static int board_cycle(NDK_ADAPTER *a, uint64_t *c)
{
    NDKFPGA_STATS st;
    if (NdkFpgaQueryStats(a, &st) != STATUS_SUCCESS)
        return 0;
    *c = st.Cycle;
    return 1;
}

static int buffer_io(const char *device)
{
    NDK_ADAPTER *a;
    NTSTATUS st = NdkFpgaOpenAdapter(device, &a);
    if (st != STATUS_SUCCESS) {
        printf("not ok - sim: NdkFpgaOpenAdapter(%s): %s\n", device, NdkFpgaErrorMessage(NULL));
        return 0;
    }
    MDL *mdl = NULL;
    uint8_t *src = malloc(buf_bytes), *dst = malloc(buf_bytes);
    int ok = src && dst && NdkFpgaAllocateBuffer(a, buf_bytes, &mdl) == STATUS_SUCCESS;
    uint64_t runs_w[REPS], runs_r[REPS];
    for (uint32_t r = 0; r < REPS && ok; r++) {
        for (uint32_t i = 0; i < buf_bytes; i++)
            src[i] = (uint8_t)(i * 7u + r * 13u + (i >> 8));
        uint64_t ca, c0, c1;
        ok = board_cycle(a, &ca) && board_cycle(a, &c0);
        ok = ok && NdkFpgaWriteBuffer(a, mdl, 0, src, buf_bytes) == STATUS_SUCCESS && board_cycle(a, &c1);
        uint64_t w = ok ? less_idle(ca, c0, c1) : UINT64_MAX;
        memset(dst, 0, buf_bytes);
        ok = ok && board_cycle(a, &ca) && board_cycle(a, &c0) &&
             NdkFpgaReadBuffer(a, mdl, 0, dst, buf_bytes) == STATUS_SUCCESS && board_cycle(a, &c1);
        uint64_t rd = ok ? less_idle(ca, c0, c1) : UINT64_MAX;
        if (!ok)
            printf("# %s: run %u: %s\n", name, r, NdkFpgaErrorMessage(a));
        ok = ok && memcmp(src, dst, buf_bytes) == 0;
        runs_w[r] = w;
        runs_r[r] = rd;
    }
    char what[128];
    snprintf(what, sizeof(what), "%s: %u-byte buffer written and read back %d times, every byte equal", name,
             buf_bytes, REPS);
    check(ok, what);
    uint64_t best_w = ok ? bench_median(runs_w, REPS) : UINT64_MAX, best_r = ok ? bench_median(runs_r, REPS) : UINT64_MAX;
    if (ok && best_w != UINT64_MAX && best_r != UINT64_MAX) {
        printf("link_%s_buffer_bytes = %u\n", name, buf_bytes);
        printf("link_%s_buffer_write_clocks = %llu\n", name, (unsigned long long)best_w);
        printf("link_%s_buffer_read_clocks = %llu\n", name, (unsigned long long)best_r);
    }
    NDKFPGA_STATS s;
    if (NdkFpgaQueryStats(a, &s) == STATUS_SUCCESS)
        printf("# %s: board link retransmits %u, rx bad %u, rx drop %u\n", name, s.LinkRetransmits, s.LinkRxBad,
               s.LinkRxDrop);
    if (mdl)
        NdkFpgaFreeBuffer(a, mdl);
    free(src);
    free(dst);
    NdkFpgaCloseAdapter(a);
    return ok;
}

int bench_link(int argc, char **argv)
{
    if (argc == 3)
        buf_bytes = (uint32_t)strtoul(argv[2], NULL, 0);
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: bench_sim --host-link DEVICE NAME [BUFFER_BYTES] (DEVICE: sim, udp:127.0.0.1:PORT, env)\n");
        return 2;
    }
    /* "env": $NDKFPGA_DEVICE, as tests/conformance/udp_sim.sh passes the port it found */
    const char *device = strcmp(argv[0], "env") == 0 ? getenv("NDKFPGA_DEVICE") : argv[0];
    if (!device) {
        printf("not ok - sim: NDKFPGA_DEVICE is not set\n");
        return 1;
    }
    name = argv[1];
    int ok = fastreg(device);
    ok = (!buf_bytes || buffer_io(device)) && ok;
    return ok ? 0 : 1;
}
