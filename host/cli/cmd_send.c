/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga sendlat: Send/Receive latency and message rate through NDKPI only, in the
 * manner of NetworkDirect's ndpingpong and ndsendbw.
 *
 * Two QPs of one adapter connected to each other (loopback) share one CQ. The message
 * buffers are adapter memory (NdkFpgaAllocateBuffer), or with --host ordinary host
 * memory (aligned_alloc, IoAllocateMdl, MmBuildMdlForNonPagedPool) that the CPU fills
 * before each Send and checks after each receive (docs/host-memory.md). Measured:
 *  - one way: the wall-clock microseconds from NdkSend on the initiator until the
 *    target's receive completion is taken off the CQ (the receive was posted before),
 *    per payload size; the board's own cycles of the last Send (NdkFpgaQueryStats:
 *    LastWorkRequestCycles, frame arrival to CQE posted); and the board's clocks of the
 *    whole path (Cycle read before and after, less an idle read's round trip);
 *  - ping-pong: the initiator sends, the target answers when its receive completed, and
 *    the round trip ends when the initiator's receive completion is taken;
 *  - message rate: messages per second with several Sends in flight and as many
 *    receives pre-posted; each receive completion re-posts its receive, each Send
 *    completion posts the next Send (the receive's CQE comes before its Send's, so a
 *    receive is always waiting when a Send runs). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define DEFAULT_ITERS 10
#define DEFAULT_RATE_COUNT 200
#define DEFAULT_DEPTH 16
#define MAX_ITERS 1000000u
#define SLOT 4096u     /* bytes of a one-way or ping-pong buffer: the largest payload sendlat sends */
#define RATE_SLOT 64u  /* bytes of a message-rate receive buffer */
#define PING_BYTES 8u
#define POISON 0xA5u   /* a host receive buffer's bytes before the receive */
/* Buffer slots: the initiator's and the target's Send source and receive (SLOT bytes
 * each), then one receive of RATE_SLOT bytes per message in flight on the target. */
enum { SLOT_SEND_I, SLOT_SEND_T, SLOT_RECV_I, SLOT_RECV_T, SLOT_RATE };
static const ULONG sizes[] = {8, 512, 4096};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

struct send_run {
    struct cli_session *s;
    MDL *buf;
    uint8_t *host; /* the buffer's bytes when it is host memory, else NULL */
    NDK_MR *mr;
    UINT32 token;
    unsigned seq; /* makes each message's bytes differ from the last one's */
    UINT32 clock_hz; /* the adapter's clock, from NdkFpgaQueryStats */
    struct cli_failure f;
};

static int run_check(struct send_run *r, const char *what, NTSTATUS st)
{
    return cli_check(&r->f, what, st);
}

static size_t slot_offset(unsigned slot)
{
    if (slot < SLOT_RATE)
        return (size_t)slot * SLOT;
    return (size_t)SLOT_RATE * SLOT + (size_t)(slot - SLOT_RATE) * RATE_SLOT;
}

static ULONG slot_bytes(unsigned slot)
{
    return slot < SLOT_RATE ? SLOT : RATE_SLOT;
}

static NDK_SGE slot_sge(const struct send_run *r, unsigned slot, ULONG len)
{
    NDK_SGE sge;
    sge.VirtualAddress = (uint8_t *)MmGetMdlVirtualAddress(r->buf) + slot_offset(slot);
    sge.Length = len;
    sge.MemoryRegionToken = r->token;
    return sge;
}

/* Host memory: the CPU writes len bytes of a new message into slot. */
static void fill(struct send_run *r, unsigned slot, ULONG len)
{
    if (!r->host)
        return;
    uint8_t *p = r->host + slot_offset(slot);
    r->seq++;
    for (ULONG i = 0; i < len; i++)
        p[i] = (uint8_t)(r->seq * 7u + i * 13u + 1u);
}

/* Host memory: the CPU checks that the receive into slot brought src's len bytes and
 * left the rest of the buffer as it was. */
static int check_bytes(struct send_run *r, unsigned slot, unsigned src, ULONG len)
{
    if (!r->host || r->f.call)
        return !r->f.call;
    const uint8_t *p = r->host + slot_offset(slot);
    if (memcmp(p, r->host + slot_offset(src), len) != 0)
        return run_check(r, "the received bytes in host memory", STATUS_INTERNAL_ERROR);
    for (ULONG i = len; i < slot_bytes(slot); i++)
        if (p[i] != POISON)
            return run_check(r, "host memory past the received bytes", STATUS_INTERNAL_ERROR);
    return 1;
}

/* A receive filling slot's buffer; its RequestContext is the slot number. */
static int post_receive(struct send_run *r, NDK_QP *qp, unsigned slot)
{
    if (r->host)
        memset(r->host + slot_offset(slot), POISON, slot_bytes(slot));
    NDK_SGE sge = slot_sge(r, slot, slot_bytes(slot));
    return run_check(r, "NdkReceive", qp->Dispatch->NdkReceive(qp, (PVOID)(uintptr_t)slot, &sge, 1));
}
static int post_send(struct send_run *r, NDK_QP *qp, unsigned slot, ULONG len)
{
    NDK_SGE sge = slot_sge(r, slot, len);
    return run_check(r, "NdkSend", qp->Dispatch->NdkSend(qp, (PVOID)(uintptr_t)slot, &sge, 1, 0));
}

/* The next result on the CQ, which must be a success; a receive must have got len bytes.
 * 1 with *res and *at_us, 0 on failure. */
static int next_result(struct send_run *r, ULONG len, NDK_RESULT_EX *res, double *at_us)
{
    if (!run_check(r, "a Send/Receive completion", cli_next_result(r->s->cq, res, at_us)))
        return 0;
    if (res->Type == NdkOperationTypeReceive && res->Status == STATUS_SUCCESS && res->BytesTransferred != len)
        return run_check(r, "a receive's BytesTransferred", STATUS_INTERNAL_ERROR);
    if (res->Type != NdkOperationTypeReceive && res->Type != NdkOperationTypeSend)
        return run_check(r, "a Send/Receive completion of another type", STATUS_INTERNAL_ERROR);
    return run_check(r, res->Type == NdkOperationTypeSend ? "NdkSend's result" : "NdkReceive's result", res->Status);
}

/* One message of len bytes from qp (source slot src) to the peer whose receive (context
 * recv_slot) is posted: both completions taken; *at_us when the receive's was. */
static int one_message(struct send_run *r, NDK_QP *qp, unsigned src, ULONG len, unsigned recv_slot, double *at_us)
{
    if (!post_send(r, qp, src, len))
        return 0;
    int got_recv = 0, got_send = 0;
    while (!(got_recv && got_send)) {
        NDK_RESULT_EX res;
        double at;
        if (!next_result(r, len, &res, &at))
            return 0;
        if (res.Type == NdkOperationTypeSend) {
            got_send = 1;
        } else if (res.RequestContext == (PVOID)(uintptr_t)recv_slot) {
            got_recv = 1;
            *at_us = at;
        } else {
            return run_check(r, "a receive completion of the other QP", STATUS_INTERNAL_ERROR);
        }
    }
    return 1;
}

/* The board's cycles of the last work request; -1 when the adapter does not count them. */
static long last_cycles(struct send_run *r)
{
    NDKFPGA_STATS st;
    if (!run_check(r, "NdkFpgaQueryStats", NdkFpgaQueryStats(r->s->adapter, &st)))
        return -1;
    return st.LastWorkRequestCycles ? (long)st.LastWorkRequestCycles : -1;
}

/* The board's cycle counter now (read over the link); 0 on failure. */
static UINT64 board_cycle(struct send_run *r)
{
    NDKFPGA_STATS st;
    if (!run_check(r, "NdkFpgaQueryStats", NdkFpgaQueryStats(r->s->adapter, &st)))
        return 0;
    r->clock_hz = st.ClockHz;
    return st.Cycle;
}

/* Average one-way latency of len bytes over iters messages; *cycles of the last one's
 * Send; *clocks the board's average over the whole path, -1 when it has no counter. */
static double one_way(struct send_run *r, ULONG len, uint64_t iters, long *cycles, double *clocks)
{
    double total = 0, board = 0;
    int counted = 1;
    for (uint64_t i = 0; i < iters && !r->f.call; i++) {
        cli_progress("sendlat: one way, %u bytes, %llu of %llu", (unsigned)len, (unsigned long long)(i + 1),
                     (unsigned long long)iters);
        if (!post_receive(r, r->s->target, SLOT_RECV_T))
            break;
        fill(r, SLOT_SEND_I, len);
        /* Three reads of the clock: c0 - ca is a read's own round trip, c1 - c0 adds the message. */
        UINT64 ca = board_cycle(r), c0 = board_cycle(r);
        double t0 = cli_now_us(), at = 0;
        if (!one_message(r, r->s->initiator, SLOT_SEND_I, len, SLOT_RECV_T, &at))
            break;
        total += at - t0;
        UINT64 c1 = board_cycle(r);
        if (ca && c0 > ca && c1 > c0)
            board += (double)(c1 - c0) - (double)(c0 - ca);
        else
            counted = 0;
        check_bytes(r, SLOT_RECV_T, SLOT_SEND_I, len);
    }
    *cycles = r->f.call ? -1 : last_cycles(r);
    *clocks = counted && !r->f.call ? board / (double)iters : -1;
    return total / (double)iters;
}

/* Average round trip of PING_BYTES each way over iters. */
static double ping_pong(struct send_run *r, uint64_t iters)
{
    double total = 0;
    for (uint64_t i = 0; i < iters && !r->f.call; i++) {
        cli_progress("sendlat: ping-pong %llu of %llu", (unsigned long long)(i + 1), (unsigned long long)iters);
        double at = 0;
        if (!post_receive(r, r->s->target, SLOT_RECV_T) || !post_receive(r, r->s->initiator, SLOT_RECV_I))
            break;
        fill(r, SLOT_SEND_I, PING_BYTES);
        fill(r, SLOT_SEND_T, PING_BYTES);
        double t0 = cli_now_us();
        if (one_message(r, r->s->initiator, SLOT_SEND_I, PING_BYTES, SLOT_RECV_T, &at) &&
            one_message(r, r->s->target, SLOT_SEND_T, PING_BYTES, SLOT_RECV_I, &at))
            total += at - t0;
        check_bytes(r, SLOT_RECV_T, SLOT_SEND_I, PING_BYTES);
        check_bytes(r, SLOT_RECV_I, SLOT_SEND_T, PING_BYTES);
    }
    return total / (double)iters;
}

/* Messages per second: count Sends of PING_BYTES, depth in flight, depth receives pre-posted. */
static double message_rate(struct send_run *r, uint64_t count, unsigned depth)
{
    NDK_QP *qi = r->s->initiator, *qt = r->s->target;
    uint64_t posted = 0, received = 0, sent = 0;
    for (unsigned k = 0; k < depth && !r->f.call; k++)
        post_receive(r, qt, SLOT_RATE + k);
    fill(r, SLOT_SEND_I, PING_BYTES); /* every Send of the run reads these bytes */
    double t0 = cli_now_us();
    for (; posted < depth && posted < count && !r->f.call; posted++)
        post_send(r, qi, SLOT_SEND_I, PING_BYTES);
    while ((received < count || sent < count) && !r->f.call) {
        NDK_RESULT_EX res;
        if (!next_result(r, PING_BYTES, &res, NULL))
            break;
        if (res.Type == NdkOperationTypeReceive) {
            unsigned slot = (unsigned)(uintptr_t)res.RequestContext;
            if (!check_bytes(r, slot, SLOT_SEND_I, PING_BYTES))
                break;
            /* Every receive left pending is flushed when the QPs close. */
            if (++received + depth <= count)
                post_receive(r, qt, slot);
        } else {
            sent++;
            if (posted < count && post_send(r, qi, SLOT_SEND_I, PING_BYTES))
                posted++;
        }
        if (received % 16 == 0)
            cli_progress("sendlat: rate, %llu of %llu messages", (unsigned long long)received,
                         (unsigned long long)count);
    }
    double secs = (cli_now_us() - t0) / 1e6;
    return r->f.call || secs <= 0 ? -1 : (double)count / secs;
}

/* The message buffer in host memory: bytes from aligned_alloc described by an MDL. */
static NTSTATUS host_buffer(struct send_run *r, SIZE_T bytes)
{
    r->host = aligned_alloc(PAGE_SIZE, bytes);
    if (!r->host)
        return STATUS_INSUFFICIENT_RESOURCES;
    memset(r->host, 0, bytes);
    r->buf = IoAllocateMdl(r->host, (ULONG)bytes, FALSE, FALSE, NULL);
    if (!r->buf)
        return STATUS_INSUFFICIENT_RESOURCES;
    MmBuildMdlForNonPagedPool(r->buf);
    return STATUS_SUCCESS;
}

int cmd_sendlat(struct cli *c, int argc, char **argv)
{
    uint64_t iters = DEFAULT_ITERS, rate_count = DEFAULT_RATE_COUNT, depth = DEFAULT_DEPTH;
    int series = 0, host = 0;
    const struct cli_option opts[] = {
        {"count", 'c', NULL, &iters, 1, MAX_ITERS, 0, 0, "a count of iterations"},
        {"rate-count", 'n', NULL, &rate_count, 0, MAX_ITERS, 0, 0, "a count of messages"},
        {"in-flight", 'q', NULL, &depth, 1, 256, 0, 0, "a count of messages in flight"},
        {"host", CLI_OPT_HOST, &host, NULL, 0, 0, 0, 0, NULL},
        {"series", CLI_OPT_SERIES, &series, NULL, 0, 0, 0, 0, NULL},
    };
    int code = cli_parse_options(c, argc, argv, 1, opts, sizeof(opts) / sizeof(opts[0]));
    if (code >= 0)
        return code;
    if (c->json && series)
        return cli_report(c, CLI_EXIT_USAGE, "--json and --series are two different outputs: choose one");

    struct cli_session s;
    if ((code = cli_session_open_receives(c, &s, 256, (ULONG)depth, (ULONG)depth)) != 0)
        return code;
    /* The session clamps the depths to the adapter's limits. */
    if (depth > s.info.MaxReceiveQueueDepth)
        depth = s.info.MaxReceiveQueueDepth;
    if (depth > s.info.MaxInitiatorQueueDepth)
        depth = s.info.MaxInitiatorQueueDepth;
    struct send_run r;
    memset(&r, 0, sizeof(r));
    r.s = &s;
    NTSTATUS st;
    r.mr = cli_create_mr(&s, FALSE, &st);
    SIZE_T bytes = (slot_offset(SLOT_RATE + (unsigned)depth) + PAGE_SIZE - 1) & ~(SIZE_T)(PAGE_SIZE - 1);
    if (!r.mr)
        run_check(&r, "NdkCreateMr", st);
    else if (host ? run_check(&r, "a host-memory buffer (aligned_alloc, IoAllocateMdl)", host_buffer(&r, bytes))
                  : run_check(&r, "NdkFpgaAllocateBuffer", NdkFpgaAllocateBuffer(s.adapter, bytes, &r.buf))) {
        struct cli_completion w;
        cli_completion_init(&w);
        st = r.mr->Dispatch->NdkRegisterMr(r.mr, r.buf, bytes, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, cli_on_request_done,
                                           &w);
        if (run_check(&r, "NdkRegisterMr", cli_finish(&w, st, NULL)))
            r.token = r.mr->Dispatch->NdkGetLocalTokenFromMr(r.mr);
    }
    double lat[N_SIZES], clocks[N_SIZES], pp = -1, rate = -1;
    long cycles[N_SIZES];
    for (size_t i = 0; i < N_SIZES; i++) {
        cycles[i] = -1;
        clocks[i] = -1;
        lat[i] = r.f.call ? -1 : one_way(&r, sizes[i], iters, &cycles[i], &clocks[i]);
    }
    if (!r.f.call)
        pp = ping_pong(&r, iters);
    if (!r.f.call && rate_count)
        rate = message_rate(&r, rate_count, (unsigned)depth);
    cli_progress_done();
    NDKFPGA_ADAPTER_DETAILS d;
    if (NdkFpgaQueryAdapterDetails(s.adapter, &d) != STATUS_SUCCESS)
        snprintf(d.Device, sizeof(d.Device), "%s", c->device);
    const char *memory = host ? "host" : "adapter";
    if (r.f.call) {
        code = cli_fail(c, s.adapter, r.f.call, r.f.status);
        if (c->json) { /* still one JSON document, saying what failed */
            printf("{\"command\": \"sendlat\", \"error\": {\"call\": ");
            cli_json_string(stdout, r.f.call);
            printf(", \"status\": ");
            cli_json_string(stdout, NdkFpgaStatusName(r.f.status));
            printf("}}\n");
        }
    } else if (c->json) {
        printf("{\"command\": \"sendlat\", \"device\": ");
        cli_json_string(stdout, d.Device);
        printf(", \"memory\": \"%s\", \"iterations\": %llu, \"unit\": \"microseconds of wall time; cycles of the "
               "board\",\n \"one_way\": [",
               memory, (unsigned long long)iters);
        for (size_t i = 0; i < N_SIZES; i++) {
            printf("%s{\"bytes\": %u, \"latency_us\": ", i ? ", " : "", (unsigned)sizes[i]);
            cli_json_number(stdout, lat[i], 2);
            printf(", \"send_cycles\": ");
            cli_json_number(stdout, (double)cycles[i], 0);
            printf(", \"path_cycles\": ");
            cli_json_number(stdout, clocks[i], 0);
            printf("}");
        }
        printf("],\n \"ping_pong_us\": ");
        cli_json_number(stdout, pp, 2);
        printf(", \"ping_pong_bytes\": %u,\n \"rate\": {\"count\": %llu, \"in_flight\": %llu, \"msgs_per_s\": ",
               PING_BYTES, (unsigned long long)rate_count, (unsigned long long)depth);
        cli_json_number(stdout, rate, 1);
        printf("}}\n");
    } else {
        printf("sendlat on %s, buffers in %s memory: %llu iterations; wall-clock microseconds, the adapter's cycles "
               "from NdkFpgaQueryStats\n",
               d.Device, memory, (unsigned long long)iters);
        for (size_t i = 0; i < N_SIZES; i++) {
            printf("one way, Send to receive completion, %4u B: %10.1f us", (unsigned)sizes[i], lat[i]);
            if (cycles[i] >= 0)
                printf("  (the adapter's cycles of the Send: %ld", cycles[i]);
            if (cycles[i] >= 0 && clocks[i] >= 0)
                printf("; of the whole path: %.0f", clocks[i]);
            printf("%s\n", cycles[i] >= 0 ? ")" : "");
        }
        printf("ping-pong round trip, %u B each way:       %10.1f us\n", PING_BYTES, pp);
        if (rate_count)
            printf("message rate, %u B, %llu in flight:         %10.0f messages/s (%llu messages)\n", PING_BYTES,
                   (unsigned long long)depth, rate, (unsigned long long)rate_count);
        if (series) {
            /* bench/report.py reads these; host memory's keys are send_recv_host_*. */
            const char *k = host ? "send_recv_host" : "send_recv";
            for (size_t i = 0; i < N_SIZES; i++) {
                printf("%s_latency_us_%ub = %.2f\n", k, (unsigned)sizes[i], lat[i]);
                if (cycles[i] >= 0)
                    printf("%s_clocks_%ub = %ld\n", k, (unsigned)sizes[i], cycles[i]);
                if (clocks[i] >= 0)
                    printf("%s_path_clocks_%ub = %.0f\n", k, (unsigned)sizes[i], clocks[i]);
            }
            if (r.clock_hz)
                printf("%s_clock_hz = %u\n", k, (unsigned)r.clock_hz);
            printf("%s_pingpong_us = %.2f\n", k, pp);
            if (rate_count)
                printf("%s_rate_msgs_per_s = %.1f\n%s_rate_in_flight = %llu\n%s_rate_count = %llu\n", k, rate, k,
                       (unsigned long long)depth, k, (unsigned long long)rate_count);
            printf("%s_iterations = %llu\n", k, (unsigned long long)iters);
            printf("ok - sendlat: every Send and receive completed with the bytes sent%s\n",
                   host ? ", and host memory held them" : "");
        }
    }
    cli_session_close(&s); /* frees the MR, an adapter buffer and every other object */
    if (r.buf && host)
        IoFreeMdl(r.buf);
    free(r.host); /* after the close: a deregistration writes the region back */
    return code;
}
