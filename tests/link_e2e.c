/* SPDX-License-Identifier: Apache-2.0 */
/* End-to-end link test: the host link layer against a real board model (nfmodel, the
 * software adapter, or nfsim, the Verilator board) through nf_transport_open().
 *
 *   link_e2e --device DEV [--count N] [--max-body B] [--defer-pct P] [--seed S]
 *            [--label NAME] [--timeout-s T] [--expect-faults] [--min-efficiency PCT]
 *            [--warmup W]
 *
 * Sends N PINGs (random body sizes 0..B, multiples of 8, some deferred) as fast as
 * the window allows, checks every reply arrives exactly once, in order, with the
 * payload intact, and measures the link's payload throughput in simulated time:
 * INFO before and after (the board stamps INFO with its cycle counter; the final
 * INFO is queued right after the last PING, so the board answers it when every PING
 * has been processed). Efficiency = PING bytes / (simulated seconds * baud / 10).
 * With --warmup W the first W PINGs (same sizes) run before the begin stamp, so the
 * measurement sees the link after its RTT estimate has settled, not its start-up.
 * Fault injection comes from the simulator's own options ($NDKFPGA_SIM_ARGS /
 * $NDKFPGA_MODEL_ARGS). Prints TAP lines "ok - ..." / "not ok - ...". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "link_test.h"
#include "link/nf_link.h"
#include "transport/nf_transport.h"
#include "tap.h"

#define INFO_TAG_BEGIN 0xF0000001u
#define INFO_TAG_END 0xF0000002u

struct e2e {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t next_tag;
    uint64_t replies, order_errors, content_errors, bad_status, unexpected;
    uint64_t reply_bytes;
    int infos;
    struct nf_info info_begin, info_end;
    int dead;
    NTSTATUS dead_status;
};

static void on_message(void *ctx, const uint8_t *m, size_t len)
{
    struct e2e *e = ctx;
    uint16_t op = lt_get16(m);
    uint32_t tag = lt_get32(m + NF_MSG_HDR_TAG_OFF);
    NTSTATUS status = lt_get32(m + NF_MSG_HDR_STATUS_OFF);
    pthread_mutex_lock(&e->mu);
    if (op == (NF_OP_INFO | NF_OP_REPLY) && len >= NF_MSG_HDR_SIZE + NF_INFO_SIZE &&
        (tag == INFO_TAG_BEGIN || tag == INFO_TAG_END)) {
        memcpy(tag == INFO_TAG_BEGIN ? &e->info_begin : &e->info_end, m + NF_MSG_HDR_SIZE, NF_INFO_SIZE);
        e->infos++;
    } else if (op == (NF_OP_PING | NF_OP_REPLY)) {
        if (tag != e->next_tag)
            e->order_errors++;
        e->next_tag = tag + 1;
        if (status != STATUS_SUCCESS)
            e->bad_status++;
        for (size_t i = NF_MSG_HDR_SIZE; i < len; i++)
            if (m[i] != ping_byte(tag, (uint32_t)(i - NF_MSG_HDR_SIZE))) {
                e->content_errors++;
                break;
            }
        e->replies++;
        e->reply_bytes += len;
    } else {
        e->unexpected++;
    }
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

static void on_dead(void *ctx, NTSTATUS status)
{
    struct e2e *e = ctx;
    pthread_mutex_lock(&e->mu);
    e->dead = 1;
    e->dead_status = status;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

static uint32_t send_info(struct nf_link *l, uint32_t tag)
{
    uint8_t m[NF_MSG_HDR_SIZE] = {0};
    lt_put16(m, NF_OP_INFO);
    lt_put16(m + NF_MSG_HDR_LEN_OFF, NF_MSG_HDR_SIZE);
    lt_put32(m + NF_MSG_HDR_TAG_OFF, tag);
    return nf_link_send(l, m, sizeof(m), 0);
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wait until cond holds or the deadline passes (mu held). */
static int wait_until(struct e2e *e, double deadline, int (*cond)(struct e2e *, uint64_t), uint64_t arg)
{
    while (!cond(e, arg) && !e->dead) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&e->cv, &e->mu, &ts);
        if (wall_s() > deadline)
            break;
    }
    return cond(e, arg);
}
static int have_infos(struct e2e *e, uint64_t n)
{
    return (uint64_t)e->infos >= n;
}
static int have_replies(struct e2e *e, uint64_t n)
{
    return e->replies >= n;
}

static uint64_t cycles_of(const struct nf_info *i)
{
    return (uint64_t)i->cycle_hi << 32 | i->cycle_lo;
}

int main(int argc, char **argv)
{
    const char *device = "model", *label = NULL;
    uint32_t count = 2000, max_body = 1024, defer_pct = 50, timeout_s = 120, warmup = 0;
    uint64_t seed = 1;
    int expect_faults = 0;
    double min_eff = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--expect-faults")) {
            expect_faults = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "link_e2e: %s needs a value\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--device"))
            device = v;
        else if (!strcmp(a, "--label"))
            label = v;
        else if (!strcmp(a, "--count"))
            count = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(a, "--max-body"))
            max_body = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(a, "--defer-pct"))
            defer_pct = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(a, "--timeout-s"))
            timeout_s = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(a, "--seed"))
            seed = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--warmup"))
            warmup = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(a, "--min-efficiency"))
            min_eff = strtod(v, NULL);
        else {
            fprintf(stderr, "link_e2e: unknown option %s\n", a);
            return 2;
        }
    }
    if (max_body > NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE)
        max_body = NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE;
    if (!label)
        label = device;

    struct e2e e;
    memset(&e, 0, sizeof(e));
    pthread_mutex_init(&e.mu, NULL);
    pthread_cond_init(&e.cv, NULL);
    e.next_tag = 1;

    double t0 = wall_s();
    struct nf_transport *t = NULL;
    NTSTATUS st = nf_transport_open(device, &t);
    if (st != STATUS_SUCCESS) {
        tap_ok(0, "e2e %s: open transport %s: %s (%s)", label, device, nf_error_message(), nf_status_name(st));
        return tap_done();
    }
    struct nf_link *l = NULL;
    struct nf_info info;
    st = nf_link_open(t, on_message, on_dead, &e, &l, &info);
    if (!tap_ok(st == STATUS_SUCCESS, "e2e %s: RESET handshake with %s (%s%s%s)", label, device,
                nf_status_name(st), st ? ": " : "", st ? nf_error_message() : ""))
        return tap_done();
    double baud = info.uart_period ? (double)info.clk_hz * (1u << NF_SOC_UART_PERIOD_FRAC) / info.uart_period : 0;
    printf("# %s: INFO fw %08x, %u RX / %u TX slots, clk %u Hz, uart_period %u (%.0f baud), max payload %u\n", label,
           (unsigned)info.fw_version, (unsigned)info.rx_slots, (unsigned)info.tx_slots, (unsigned)info.clk_hz,
           (unsigned)info.uart_period, baud, (unsigned)info.max_payload);

    double deadline = wall_s() + timeout_s;
    static uint8_t buf[NF_LINK_MAX_PAYLOAD];
    uint64_t rng = seed * 0x9E3779B97F4A7C15ull + 7;
    uint64_t sent_bytes = 0;
    unsigned send_fail = 0;
    NTSTATUS send_status = STATUS_SUCCESS;
    uint32_t total = warmup + count;
    uint32_t tag = 1;
    for (int phase = 0; phase < 2; phase++) {
        if (phase == 1) {
            /* Begin stamp: answered after the warm-up, before any measured PING. */
            pthread_mutex_lock(&e.mu);
            wait_until(&e, deadline, have_replies, warmup);
            pthread_mutex_unlock(&e.mu);
            send_info(l, INFO_TAG_BEGIN);
            sent_bytes = 0;
        }
        uint32_t last = phase == 0 ? warmup : total;
        for (; tag <= last && !send_fail; tag++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            uint32_t body = (uint32_t)((rng >> 20) % (max_body / 8 + 1)) * 8;
            size_t len = make_ping(buf, tag, body);
            int defer = (uint32_t)((rng >> 8) % 100) < defer_pct && tag != warmup;
            st = nf_link_send(l, buf, len, defer);
            if (st != STATUS_SUCCESS) {
                send_fail++;
                send_status = st;
            }
            sent_bytes += len;
        }
    }
    /* End stamp right behind the last PING (flushes the deferred frame too). */
    if (!send_fail)
        send_info(l, INFO_TAG_END);
    pthread_mutex_lock(&e.mu);
    int all = wait_until(&e, deadline, have_replies, total);
    int ok_begin = e.infos >= 1;
    int ok_end = wait_until(&e, deadline, have_infos, 2);
    pthread_mutex_unlock(&e.mu);
    double t_done = wall_s();
    /* Anything extra (a duplicate) would arrive now. */
    struct timespec settle = {0, 200 * 1000000L};
    nanosleep(&settle, NULL);

    struct nf_link_stats ls;
    nf_link_get_stats(l, &ls);
    pthread_mutex_lock(&e.mu);
    tap_ok(ok_begin && ok_end, "e2e %s: INFO replies with cycle stamps", label);
    tap_ok(!send_fail, "e2e %s: %u PINGs queued (%s)", label, total, nf_status_name(send_status));
    tap_ok(all && e.replies == total && e.order_errors == 0 && e.content_errors == 0 && e.bad_status == 0 &&
               e.unexpected == 0 && !e.dead,
           "e2e %s: %u replies exactly once, in order, payload intact (got %llu, order errors %llu, content errors "
           "%llu, bad status %llu, unexpected %llu%s%s)",
           label, total, (unsigned long long)e.replies, (unsigned long long)e.order_errors,
           (unsigned long long)e.content_errors, (unsigned long long)e.bad_status, (unsigned long long)e.unexpected,
           e.dead ? ", link dead: " : "", e.dead ? nf_link_dead_reason(l) : "");
    printf("# %s: host: %llu DATA frames, %llu retransmits (%llu timeouts, %llu fast), %llu acks, %llu frames in, "
           "%llu bad, %llu dups, byte time %u ns, rto %u us, frame cap %u\n",
           label, (unsigned long long)ls.data_tx, (unsigned long long)ls.retransmits, (unsigned long long)ls.timeouts,
           (unsigned long long)ls.fast_retransmits, (unsigned long long)ls.acks_tx, (unsigned long long)ls.frames_rx,
           (unsigned long long)ls.bad_frames, (unsigned long long)ls.dups, ls.byte_ns, ls.rto_us, ls.frame_cap);
    if (ok_end) {
        const struct nf_info *b = &e.info_end;
        printf("# %s: board: rx ok %u, rx bad %u, rx dropped (no slot) %u, tx %u, retransmits %u, dup/gap %u\n", label,
               (unsigned)b->rx_ok, (unsigned)b->rx_bad, (unsigned)b->rx_drop, (unsigned)b->tx_frames,
               (unsigned)b->retransmits, (unsigned)b->rx_dup);
    }
    if (expect_faults)
        tap_ok(ok_end && ls.retransmits > 0 && (ls.bad_frames > 0 || e.info_end.rx_bad > 0),
               "e2e %s: faults were injected and recovered from (host retransmits %llu, host bad %llu, board bad %u)",
               label, (unsigned long long)ls.retransmits, (unsigned long long)ls.bad_frames,
               ok_end ? (unsigned)e.info_end.rx_bad : 0u);
    double wall = t_done - t0;
    if (ok_begin && ok_end && info.clk_hz && baud > 0) {
        uint64_t cyc = cycles_of(&e.info_end) - cycles_of(&e.info_begin);
        double sim_s = (double)cyc / info.clk_hz;
        double rate = sim_s > 0 ? (double)sent_bytes / sim_s : 0;
        double eff = 100.0 * rate / (baud / 10.0);
        printf("# %s: %llu PING bytes host->board in %llu cycles = %.4f simulated s (%.1f s wall, %.0f cycles/s): "
               "%.0f B/s = %.1f%% of the UART's %.0f B/s\n",
               label, (unsigned long long)sent_bytes, (unsigned long long)cyc, sim_s, wall, cyc / (wall > 0 ? wall : 1),
               rate, eff, baud / 10.0);
        if (min_eff >= 0)
            tap_ok(eff >= min_eff, "e2e %s: link payload throughput %.1f%% of the UART byte rate (>= %.0f%%)", label,
                   eff, min_eff);
    } else if (min_eff >= 0) {
        tap_ok(0, "e2e %s: throughput: no INFO cycle stamps to measure with", label);
    }
    pthread_mutex_unlock(&e.mu);
    nf_link_close(l);
    printf("# %s: %.1f s wall in all\n", label, wall_s() - t0);
    return tap_done();
}
