/* SPDX-License-Identifier: Apache-2.0 */
/* Copies to and from adapter memory (NdkFpgaWriteBuffer, NdkFpgaReadBuffer): every
 * length up to the largest buffer, whole and exact, at the link's rate. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress.h"

/* Pings that measure the link's rate: full payloads, many in flight (as `ndkfpga ping`). */
#define RATE_PING_PAYLOAD NDKFPGA_PING_MAX_PAYLOAD
#define RATE_PING_IN_FLIGHT 16u

/* The link's rate in payload bytes per second, one way: pings with many in flight. */
static double link_rate(struct stx *x, ULONG count)
{
    NDKFPGA_PING_RESULT r;
    st_doing("NdkFpgaPing x%lu of %u bytes, %u in flight (the link's rate)", (unsigned long)count,
             RATE_PING_PAYLOAD, RATE_PING_IN_FLIGHT);
    NTSTATUS st = NdkFpgaPing(x->ad, count, RATE_PING_IN_FLIGHT, RATE_PING_PAYLOAD, &r);
    if (st != STATUS_SUCCESS || r.ElapsedNs == 0) {
        st_ok(0, "NdkFpgaPing to measure the link: %s", st_name(st));
        return 0;
    }
    return (double)count * RATE_PING_PAYLOAD * 1e9 / (double)r.ElapsedNs;
}

/* Write len random bytes at off, read them back, compare; the rates (bytes/s) of each
 * way go to *wr and *rd. Returns 1 when both calls succeeded and the bytes match. */
static int round_trip(struct stx *x, MDL *mdl, size_t off, size_t len, uint32_t seed, double *wr, double *rd,
                      const char *what)
{
    uint8_t *src = malloc(len), *dst = malloc(len);
    if (!src || !dst)
        st_bail("out of memory for %zu bytes", len);
    st_fill(src, len, seed);
    memset(dst, 0xA5, len);
    st_doing("NdkFpgaWriteBuffer of %zu bytes at %zu (%s)", len, off, what);
    uint64_t t0 = st_now_us();
    NTSTATUS sw = NdkFpgaWriteBuffer(x->ad, mdl, off, src, len);
    uint64_t t1 = st_now_us();
    st_doing("NdkFpgaReadBuffer of %zu bytes at %zu (%s)", len, off, what);
    NTSTATUS sr = NdkFpgaReadBuffer(x->ad, mdl, off, dst, len);
    uint64_t t2 = st_now_us();
    size_t first = 0;
    while (first < len && src[first] == dst[first])
        first++;
    int ok = st_ok(sw == STATUS_SUCCESS && sr == STATUS_SUCCESS && first == len,
                   "%s: %zu bytes at %zu: write %s, read %s, %s", what, len, off, st_name(sw), st_name(sr),
                   first == len ? "every byte read back" : "bytes differ");
    if (first < len)
        st_note("first difference at byte %zu of %zu", first, len);
    if (wr)
        *wr = (double)len * 1e6 / (double)((t1 - t0) ? (t1 - t0) : 1);
    if (rd)
        *rd = (double)len * 1e6 / (double)((t2 - t1) ? (t2 - t1) : 1);
    free(src);
    free(dst);
    return ok;
}

/* Pings on a thread of their own while a copy runs (other traffic on the link). */
struct pinger {
    struct stx *x;
    ULONG count;
    NTSTATUS st;
};

static void *pinger_main(void *p)
{
    struct pinger *pg = p;
    NDKFPGA_PING_RESULT r;
    pg->st = NdkFpgaPing(pg->x->ad, pg->count, 8, 512, &r);
    return NULL;
}

/* buffer-copy: lengths around the adapter's TX window (each MEM_READ's reply takes one of
 * its frames), on adjacent and scattered pages at odd offsets, after and during other
 * traffic; then the largest buffer written and read whole, each way at no less than 90%
 * of the link's rate, as pings find it. */
void case_buffer_copy(void)
{
    struct stx x;
    if (!stx_open(&x, "copying"))
        st_bail("no adapter");
    st_note("adapter: %s, link %u baud (%.0f bytes/s at 10 bits a byte), TX slots %u, RX slots %u", x.det.Device,
            x.det.LinkBaud, x.det.LinkBaud / 10.0, x.det.LinkTxSlots, x.det.LinkRxSlots);

    /* Around the TX window: 1..5 windows of whole frames, and odd lengths across them. */
    size_t small = 80u * 1024u;
    MDL *adj = NULL, *sca = NULL;
    if (NdkFpgaAllocateBuffer(x.ad, small, &adj) != STATUS_SUCCESS ||
        NdkFpgaAllocateScatteredBuffer(x.ad, small, &sca) != STATUS_SUCCESS)
        st_bail("NdkFpgaAllocateBuffer of %zu bytes failed", small);
    static const size_t lens[] = {16384, 20480, 20481, 24576, 32768, 49152, 65536, 80u * 1024u - 3u};
    int all = 1;
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        if (cfg.scale == SCALE_TINY && lens[i] != 20481 && lens[i] != 32768)
            continue; /* the simulation's UART: two lengths past the window */
        size_t off = lens[i] + 3u <= small ? 3u : 0u;
        all &= round_trip(&x, adj, off, lens[i], 100u + (uint32_t)i, NULL, NULL, "adjacent pages");
        all &= round_trip(&x, sca, off, lens[i], 200u + (uint32_t)i, NULL, NULL, "scattered pages");
    }
    /* After other traffic (pings queued and answered), and while pings run. */
    NDKFPGA_PING_RESULT pr;
    (void)NdkFpgaPing(x.ad, 64, 16, 2048, &pr);
    all &= round_trip(&x, adj, 0, 16384, 300u, NULL, NULL, "after pings");
    struct pinger pg = {&x, (ULONG)st_n(400, 100, 8), STATUS_SUCCESS};
    pthread_t t;
    if (pthread_create(&t, NULL, pinger_main, &pg) != 0)
        st_bail("pthread_create");
    all &= round_trip(&x, adj, 5, small - 5u, 301u, NULL, NULL, "while pings run");
    pthread_join(t, NULL);
    st_ok(pg.st == STATUS_SUCCESS, "the pings alongside the copy: %s", st_name(pg.st));
    NdkFpgaFreeBuffer(x.ad, adj);
    NdkFpgaFreeBuffer(x.ad, sca);
    if (!all)
        st_bail("short copies failed: the large one would too");

    /* The largest buffer (4 MiB, or all the adapter's user memory if less) on the model
     * and the simulation; 1 MiB in the sanitized build (STRESS_COPY_BYTES overrides). */
    size_t big = cfg.scale == SCALE_SMALL ? 1u << 20 : 4u << 20;
    const char *env = getenv("STRESS_COPY_BYTES");
    if (env && *env)
        big = strtoul(env, NULL, 0);
    if (big > x.det.UserMemoryBytes)
        big = x.det.UserMemoryBytes / PAGE_SIZE * PAGE_SIZE;
    MDL *mdl = NULL;
    if (NdkFpgaAllocateBuffer(x.ad, big, &mdl) != STATUS_SUCCESS)
        st_bail("NdkFpgaAllocateBuffer of %zu bytes failed", big);
    /* The link's rate, over enough pings to be steady, then the round trip against it.
     * The software adapter's rates are the host's CPU, which other processes share: a
     * round that falls short runs again (up to 3 rounds; the best counts). */
    ULONG pings = (ULONG)(big / RATE_PING_PAYLOAD);
    if (pings > (ULONG)st_n(1024, 256, 64))
        pings = (ULONG)st_n(1024, 256, 64);
    double best_wr = 0, best_rd = 0;
    int ok = 1;
    for (int round = 0; ok && round < (cfg.sim ? 1 : 3) && (best_wr < 0.9 || best_rd < 0.9); round++) {
        double link = link_rate(&x, pings);
        double wr = 0, rd = 0;
        uint64_t t0 = st_now_ms();
        ok = round_trip(&x, mdl, 0, big, 400u + (uint32_t)round, &wr, &rd, "the largest buffer");
        uint64_t took = st_now_ms() - t0;
        if (cfg.sim && ok) {
            /* The simulation's speed in wall time drifts over a round trip this long: the
             * link's rate is the mean of a measure before it and one after. */
            double after = link_rate(&x, pings);
            if (after > 0)
                link = (link + after) / 2;
        }
        st_note("link (pings of %u bytes, %u in flight): %.0f bytes/s; write %.0f bytes/s (%.0f%%), read %.0f "
                "bytes/s (%.0f%%); %zu bytes each way in %llu ms",
                RATE_PING_PAYLOAD, RATE_PING_IN_FLIGHT, link, wr, link > 0 ? 100.0 * wr / link : 0.0, rd,
                link > 0 ? 100.0 * rd / link : 0.0, big, (unsigned long long)took);
        if (link > 0 && wr / link > best_wr)
            best_wr = wr / link;
        if (link > 0 && rd / link > best_rd)
            best_rd = rd / link;
    }
    if (ok) {
        st_ok(best_wr >= 0.9, "write of %zu bytes at %.0f%% of the link's rate (at least 90%%)", big, 100.0 * best_wr);
        st_ok(best_rd >= 0.9, "read of %zu bytes at %.0f%% of the link's rate (at least 90%%)", big, 100.0 * best_rd);
    }
    NdkFpgaFreeBuffer(x.ad, mdl);
    int ms = stx_close(&x, 5000);
    st_ok(ms >= 0, "NdkFpgaCloseAdapter returned (%d ms)", ms);
}
