/* SPDX-License-Identifier: Apache-2.0 */
/* Fast-register, invalidate and link figures on the Verilator board (nfsim: the real
 * RTL and firmware, UART at the simulator's baud rate), driven through the host
 * library's reliable link (host/src/link/nf_link.h) so the messages are exactly the ones
 * the library sends.
 *
 * - fast-register of 1, 2, 4, ... 256 pages (INFO.max_frmr_pages caps it) and an
 *   invalidate after each: INFO.last_wr_cycles (the frame's RX stamp to the CQE
 *   written) and INFO.last_wr_fw_cycles (the firmware's share), read by an INFO
 *   request sent after the CQE arrived, so nothing else is on the board meanwhile;
 * - simulation speed: simulated cycles (INFO.cycle_lo/hi) per wall-clock second
 *   over the fast-register series;
 * - link efficiency: a stream of work requests (fast-register of 64 pages and
 *   invalidate, alternating on one MR, one request per DATA frame) with at most K
 *   completions outstanding; efficiency = host-to-board message bytes (MSG_HDR +
 *   body) per simulated second / the UART's raw byte rate (baud / 10). Simulated
 *   time is INFO.cycle before and after the stream.
 *
 * Prints "key = value" lines and "series ..." lines for bench/report.py, and
 * "ok - " / "not ok - " for each verified step. `bench_sim --rc` runs bench_rc.c's RC
 * throughput figures instead, on an nfsim whose port is in PHY loopback, and
 * `bench_sim --host-link` bench_link.c's host-visible figures over one host link. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_sim.h"
#include "nf_layout.h"
#include "link/nf_link.h"
#include "transport/nf_transport.h"

#define LINK_PAGES 64u
#define LINK_PAIRS 32u

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static uint32_t want_tag;            /* reply awaited (0: none) */
static uint8_t reply[MAX_MSG];
static size_t reply_len;
static int reply_ready;
static uint64_t cqes, cqe_bad;       /* CQEs received, CQEs with a failure status */
static uint32_t last_cqe_status;
static void (*cqe_hook)(const struct nf_cqe *c);
static int dead;
static int failures;

static void on_message(void *ctx, const uint8_t *msg, size_t len)
{
    (void)ctx;
    struct nf_msg_hdr h;
    memcpy(&h, msg, sizeof(h));
    pthread_mutex_lock(&mu);
    if (h.op == NF_OP_CQE && len >= NF_MSG_HDR_SIZE + NF_CQE_SIZE) {
        struct nf_cqe c;
        memcpy(&c, msg + NF_MSG_HDR_SIZE, sizeof(c));
        cqes++;
        last_cqe_status = c.status;
        if (cqe_hook)
            cqe_hook(&c);
        if (c.status != STATUS_SUCCESS)
            cqe_bad++;
    } else if ((h.op & NF_OP_REPLY) && h.tag == want_tag && len <= sizeof(reply)) {
        memcpy(reply, msg, len);
        reply_len = len;
        reply_ready = 1;
    }
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void on_dead(void *ctx, NTSTATUS status)
{
    (void)ctx;
    pthread_mutex_lock(&mu);
    dead = 1;
    fprintf(stderr, "bench_sim: link died: %s\n", nf_status_name(status));
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

void bench_on_cqe(void (*hook)(const struct nf_cqe *c))
{
    pthread_mutex_lock(&mu);
    cqe_hook = hook;
    pthread_mutex_unlock(&mu);
}

void check(int cond, const char *what)
{
    printf("%s - sim: %s\n", cond ? "ok" : "not ok", what);
    fflush(stdout);
    if (!cond)
        failures++;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

size_t build(uint8_t *m, uint16_t op, uint32_t tag, const void *body, size_t blen)
{
    struct nf_msg_hdr h = {0};
    size_t len = (NF_MSG_HDR_SIZE + blen + 7) & ~(size_t)7;
    h.op = op;
    h.len = (uint16_t)len;
    h.tag = tag;
    memset(m, 0, len);
    memcpy(m, &h, sizeof(h));
    if (body)
        memcpy(m + NF_MSG_HDR_SIZE, body, blen);
    return len;
}

uint32_t request(struct nf_link *l, uint16_t op, const void *body, size_t blen, void *out, size_t out_cap)
{
    static uint32_t next_tag = 1;
    static uint8_t m[MAX_MSG];
    uint32_t tag = next_tag++;
    size_t len = build(m, op, tag, body, blen);
    pthread_mutex_lock(&mu);
    want_tag = tag;
    reply_ready = 0;
    pthread_mutex_unlock(&mu);
    nf_link_expect(l, 1);
    NTSTATUS st = nf_link_send(l, m, len, 0);
    if (st != STATUS_SUCCESS) {
        nf_link_expect(l, -1);
        return st;
    }
    pthread_mutex_lock(&mu);
    while (!reply_ready && !dead)
        pthread_cond_wait(&cv, &mu);
    struct nf_msg_hdr h;
    memcpy(&h, reply, sizeof(h));
    st = dead ? STATUS_DEVICE_NOT_CONNECTED : (NTSTATUS)h.status; /* the wire carries NTSTATUS values */
    if (out && !dead) {
        size_t n = reply_len - NF_MSG_HDR_SIZE;
        memcpy(out, reply + NF_MSG_HDR_SIZE, n < out_cap ? n : out_cap);
    }
    want_tag = 0;
    pthread_mutex_unlock(&mu);
    nf_link_expect(l, -1);
    return st;
}

int get_info(struct nf_link *l, struct nf_info *info)
{
    memset(info, 0, sizeof(*info));
    return request(l, NF_OP_INFO, NULL, 0, info, sizeof(*info)) == STATUS_SUCCESS;
}

uint64_t info_cycle(const struct nf_info *i) { return (uint64_t)i->cycle_hi << 32 | i->cycle_lo; }

size_t fr_msg(uint8_t *m, const struct setup *s, uint32_t wr_id, uint32_t npages, uint32_t page0)
{
    static uint8_t body[NF_WR_HDR_SIZE + NF_WR_FAST_REGISTER_SIZE + 8 * 512];
    struct nf_wr_hdr w = {.qpn = s->qpn, .wr_id = wr_id, .flags = NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE};
    struct nf_wr_fast_register f = {.token = s->token, .npages = npages, .fbo = 0,
                                    .length = (uint64_t)npages * NF_ADAPTER_PAGE_SIZE, .va = 0x10000000ull};
    memcpy(body, &w, sizeof(w));
    memcpy(body + sizeof(w), &f, sizeof(f));
    for (uint32_t i = 0; i < npages; i++) {
        uint64_t a = s->user_base + (uint64_t)(page0 + i) * NF_ADAPTER_PAGE_SIZE;
        memcpy(body + sizeof(w) + sizeof(f) + 8 * i, &a, 8);
    }
    return build(m, NF_OP_WR_FAST_REGISTER, 0, body, sizeof(w) + sizeof(f) + 8 * (size_t)npages);
}

size_t inv_msg(uint8_t *m, const struct setup *s, uint32_t wr_id)
{
    uint8_t body[NF_WR_HDR_SIZE + NF_WR_INVALIDATE_SIZE];
    struct nf_wr_hdr w = {.qpn = s->qpn, .wr_id = wr_id};
    struct nf_wr_invalidate v = {.token = s->token};
    memcpy(body, &w, sizeof(w));
    memcpy(body + sizeof(w), &v, sizeof(v));
    return build(m, NF_OP_WR_INVALIDATE, 0, body, sizeof(body));
}

int wait_cqes(uint64_t target)
{
    pthread_mutex_lock(&mu);
    while (cqes < target && !dead)
        pthread_cond_wait(&cv, &mu);
    int ok = !dead;
    pthread_mutex_unlock(&mu);
    return ok;
}

uint64_t cqe_count(void)
{
    pthread_mutex_lock(&mu);
    uint64_t n = cqes;
    pthread_mutex_unlock(&mu);
    return n;
}

NTSTATUS bench_link_open(struct nf_transport *t, const struct nf_link_config *cfg, struct nf_link **l,
                         struct nf_info *info)
{
    return nf_link_open_ex(t, cfg, on_message, on_dead, NULL, l, info);
}

int setup_fastreg(struct nf_link *l, struct setup *s)
{
    struct nf_qp_create_req qreq = {.pd = 1, .sq_depth = 64};
    uint32_t rep[2] = {0, 0};
    int ok = request(l, NF_OP_QP_CREATE, &qreq, sizeof(qreq), rep, sizeof(rep)) == STATUS_SUCCESS;
    s->qpn = rep[0];
    uint32_t conn[2] = {s->qpn, s->qpn};
    ok = ok && request(l, NF_OP_QP_CONNECT, conn, sizeof(conn), NULL, 0) == STATUS_SUCCESS;
    uint32_t mreq[2] = {1, 1};
    ok = ok && request(l, NF_OP_MR_CREATE, mreq, sizeof(mreq), rep, sizeof(rep)) == STATUS_SUCCESS;
    s->token = rep[0];
    uint32_t fi[4] = {s->token, s->max_pages, 1, 0};
    ok = ok && request(l, NF_OP_FRMR_INIT, fi, sizeof(fi), NULL, 0) == STATUS_SUCCESS;
    return ok;
}

uint64_t cqe_failures(void)
{
    pthread_mutex_lock(&mu);
    uint64_t n = cqe_bad;
    pthread_mutex_unlock(&mu);
    return n;
}

#define REPS 3

uint64_t bench_median(uint64_t *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    int k = 0;
    while (k < n && v[k] != UINT64_MAX)
        k++;
    return k ? v[k / 2] : UINT64_MAX;
}

/* The run of n with the fewest clocks (the first of equals). */
static int least(const uint32_t *v, int n)
{
    int k = 0;
    for (int i = 1; i < n; i++)
        k = v[i] < v[k] ? i : k;
    return k;
}

/* Simulation speed: simulated cycles per wall second of each segment of the run (each
 * page count of the fast-register series, each link stream), and their median, so a
 * moment of load elsewhere on a shared machine moves one segment rather than the figure. */
#define MAX_SEGMENTS 32
static uint64_t seg_rate[MAX_SEGMENTS];
static int seg_count;

static void speed_segment(const struct nf_info *a, double wa, const struct nf_info *b, double wb)
{
    if (seg_count < MAX_SEGMENTS && wb > wa)
        seg_rate[seg_count++] = (uint64_t)((double)(info_cycle(b) - info_cycle(a)) / (wb - wa) + 0.5);
    printf("# speed segment: %llu cycles in %.3f s\n", (unsigned long long)(info_cycle(b) - info_cycle(a)), wb - wa);
}

/* One work request alone; then INFO gives its cycles. */
static int timed_wr(struct nf_link *l, const uint8_t *m, size_t len, uint32_t op, uint32_t *cycles, uint32_t *fw)
{
    uint64_t before = cqe_count();
    nf_link_expect(l, 1);
    int ok = nf_link_send(l, m, len, 0) == STATUS_SUCCESS && wait_cqes(before + 1);
    nf_link_expect(l, -1);
    struct nf_info info;
    ok = ok && last_cqe_status == STATUS_SUCCESS && get_info(l, &info) && info.last_wr_op == op;
    *cycles = ok ? info.last_wr_cycles : 0;
    *fw = ok ? info.last_wr_fw_cycles : 0;
    return ok;
}

/* The link stream with at most k work requests outstanding; returns the efficiency. */
static double link_stream(struct nf_link *l, const struct setup *s, uint32_t k, uint32_t period_q4)
{
    static uint8_t m[MAX_MSG];
    struct nf_info a = {0}, b = {0};
    if (!get_info(l, &a))
        return 0;
    double wa = now_s();
    uint64_t base = cqe_count(), payload = 0, bad0 = cqe_bad;
    uint32_t n = 2 * LINK_PAIRS;
    nf_link_expect(l, (int)n);
    for (uint32_t j = 0; j < n; j++) {
        if (!wait_cqes(base + (j >= k ? j - k + 1 : 0)))
            break;
        size_t len = (j & 1) ? inv_msg(m, s, 1000 + j) : fr_msg(m, s, 1000 + j, LINK_PAGES, 0);
        if (nf_link_send(l, m, len, 0) != STATUS_SUCCESS)
            break;
        payload += len;
    }
    int ok = wait_cqes(base + n);
    nf_link_expect(l, -(int)n);
    ok = ok && cqe_bad == bad0 && get_info(l, &b);
    if (ok)
        speed_segment(&a, wa, &b, now_s());
    uint64_t cyc = info_cycle(&b) - info_cycle(&a);
    /* raw UART bytes in `cyc` clocks: cyc / (10 bits * period) */
    double eff = ok ? (double)payload * 10.0 * ((double)period_q4 / (1u << NF_SOC_UART_PERIOD_FRAC)) / (double)cyc : 0;
    char what[96];
    snprintf(what, sizeof(what), "link stream, %u in flight: %u work requests completed successfully", k, n);
    check(ok, what);
    printf("series link %u %.4f %llu %llu\n", k, eff, (unsigned long long)payload, (unsigned long long)cyc);
    struct nf_link_stats ls;
    nf_link_get_stats(l, &ls);
    printf("# link stats: data_tx %llu retransmits %llu timeouts %llu fast_retx %llu acks_tx %llu frames_rx %llu "
           "window %u byte_ns %u rto_us %u; board: rx_drop %u rx_dup %u retransmits %u tx_frames %u\n",
           (unsigned long long)ls.data_tx, (unsigned long long)ls.retransmits, (unsigned long long)ls.timeouts,
           (unsigned long long)ls.fast_retransmits, (unsigned long long)ls.acks_tx, (unsigned long long)ls.frames_rx,
           ls.window, ls.byte_ns, ls.rto_us, b.rx_drop, b.rx_dup, b.retransmits, b.tx_frames);
    return eff;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--host-link") == 0)
        return bench_link(argc - 2, argv + 2);
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int rc = argc > 1 && strcmp(argv[1], "--rc") == 0;
    if (rc && !bench_rc_sim_args(argc - 2, argv + 2))
        return 2;
    struct nf_transport *t;
    NTSTATUS st = nf_transport_open("sim", &t);
    if (st != STATUS_SUCCESS) {
        printf("not ok - sim: open the simulator: %s\n", nf_error_message());
        return 1;
    }
    struct nf_link *l;
    struct nf_info info;
    /* The simulation runs many times slower than the board (slower still on a loaded
     * host), so a frame takes a long wall time on the wire: a retransmission timeout
     * tuned for the board would fire spuriously and the resent frames would count
     * against the link. */
    struct nf_link_config cfg = {.rto_min_ms = 3000, .rto_initial_ms = 5000};
    /* bench_rc's batch must be one frame however long the host takes between its sends:
     * its last message closes the frame, so the deferred ones may wait for it. */
    if (rc)
        cfg.defer_max_us = 10000000;
    st = bench_link_open(t, &cfg, &l, &info);
    if (st != STATUS_SUCCESS) {
        printf("not ok - sim: link open: %s\n", nf_error_message());
        return 1;
    }
    check(1, "link open (RESET handshake with the firmware)");
    if (rc) {
        int fails = bench_rc(l, &info);
        nf_link_close(l);
        return fails || failures ? 1 : 0;
    }
    struct setup s = {.user_base = info.user_base, .max_pages = info.max_frmr_pages};
    printf("sim_clk_hz = %u\n", info.clk_hz);
    printf("sim_uart_period_q4 = %u\n", info.uart_period);
    printf("max_frmr_pages = %u\n", info.max_frmr_pages);
    printf("sim_rx_slots = %u\n", info.rx_slots);
    printf("fastreg_reps = %d\n", REPS);

    int ok = setup_fastreg(l, &s);
    check(ok, "QP created and connected, fast-register MR initialized for max_frmr_pages");
    if (!ok) {
        nf_link_close(l);
        return 1;
    }

    /* ---- fast-register / invalidate series ---- */
    static uint8_t m[MAX_MSG];
    struct nf_info a = {0}, b = {0};
    get_info(l, &a);
    double w0 = now_s();
    int series_ok = 1;
    for (uint32_t p = 1; p <= s.max_pages; p *= 2) {
        /* REPS runs; the one with the fewest clocks is kept, with its firmware share. A run
         * may follow a pure ACK from the host (its delayed-ack timer, wall time, fires
         * when the host is slow to send the next request), and the firmware's code for that
         * frame evicts part of the work-request path from VexRiscv's instruction cache: that
         * run pays the refills, how often depending on the host's load. */
        uint32_t v[4][REPS];
        for (int rep_i = 0; rep_i < REPS; rep_i++) {
            size_t len = fr_msg(m, &s, p * 10 + rep_i, p, 0);
            series_ok &= timed_wr(l, m, len, NF_OP_WR_FAST_REGISTER, &v[0][rep_i], &v[1][rep_i]);
            len = inv_msg(m, &s, p * 10 + rep_i + 5);
            series_ok &= timed_wr(l, m, len, NF_OP_WR_INVALIDATE, &v[2][rep_i], &v[3][rep_i]);
        }
        int kf = least(v[0], REPS), ki = least(v[2], REPS);
        uint32_t fr_c = v[0][kf], fr_fw = v[1][kf], inv_c = v[2][ki], inv_fw = v[3][ki];
        printf("series fastreg %u %u %u %u %u\n", p, fr_c, fr_fw, inv_c, inv_fw);
        if (p == 1) {
            printf("fastreg_clocks_1page = %u\nfastreg_firmware_clocks_1page = %u\n", fr_c, fr_fw);
            printf("invalidate_clocks = %u\ninvalidate_firmware_clocks = %u\n", inv_c, inv_fw);
        }
        if (p == 16)
            printf("fastreg_clocks_16pages = %u\nfastreg_firmware_clocks_16pages = %u\n", fr_c, fr_fw);
        if (p == 256)
            printf("fastreg_clocks_256pages = %u\nfastreg_firmware_clocks_256pages = %u\n", fr_c, fr_fw);
        if (p == s.max_pages)
            printf("fastreg_clocks_max = %u\nfastreg_max_pages = %u\n", fr_c, p);
        if (get_info(l, &b)) {
            double w1 = now_s();
            speed_segment(&a, w0, &b, w1);
            a = b;
            w0 = w1;
        }
    }
    check(series_ok, "fast-register 1..max pages and invalidate: every CQE SUCCESS, INFO names the request");

    /* ---- link efficiency against requests in flight ---- */
    static const uint32_t ks[] = {1, 2, 4, 8, 16, 32};
    size_t nk = quick ? 2 : sizeof(ks) / sizeof(ks[0]);
    double best = 0;
    for (size_t i = 0; i < nk; i++) {
        double e = link_stream(l, &s, ks[i], info.uart_period);
        if (ks[i] == 1)
            printf("link_efficiency_stop_and_wait = %.4f\n", e);
        if (e > best)
            best = e;
    }
    printf("link_efficiency = %.4f\n", best);
    printf("sim_cycles_per_second = %llu\nsim_speed_segments = %d\n",
           seg_count ? (unsigned long long)bench_median(seg_rate, seg_count) : 0ull, seg_count);
    printf("link_wr_bytes_fastreg_%u = %zu\n", LINK_PAGES, fr_msg(m, &s, 0, LINK_PAGES, 0));
    printf("link_wr_bytes_invalidate = %zu\n", inv_msg(m, &s, 0));
    printf("link_stream_wrs = %u\nlink_stream_pages = %u\nlink_rto_min_ms = %u\n", 2 * LINK_PAIRS, LINK_PAGES,
           cfg.rto_min_ms);
    nf_link_close(l);
    return failures ? 1 : 0;
}
