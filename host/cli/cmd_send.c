/* ndkfpga sendlat: Send/Receive latency and message rate through NDKPI only, in the
 * manner of NetworkDirect's ndpingpong and ndsendbw.
 *
 * Two QPs of one adapter connected to each other (loopback) share one CQ. Measured in
 * wall-clock microseconds of this host:
 *  - one way: the time from NdkSend on the initiator until the target's receive
 *    completion is taken off the CQ (the receive was posted before), per payload size,
 *    plus the board's own cycles of the last Send (NdkFpgaQueryStats:
 *    LastWorkRequestCycles, frame arrival to CQE posted);
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
#define SLOT 512u /* bytes of one message buffer: the largest payload measured */
#define PING_BYTES 8u
/* Buffer slots: the initiator's and the target's Send source, the initiator's receive,
 * then one receive per message in flight on the target. */
enum { SLOT_SEND_I, SLOT_SEND_T, SLOT_RECV_I, SLOT_RECV_T };
static const ULONG sizes[] = {8, 512};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

struct send_run {
    struct cli_session *s;
    MDL *buf;
    NDK_MR *mr;
    UINT32 token;
    struct cli_failure f;
};

static int run_check(struct send_run *r, const char *what, NTSTATUS st)
{
    return cli_check(&r->f, what, st);
}

static NDK_SGE slot_sge(const struct send_run *r, unsigned slot, ULONG len)
{
    NDK_SGE sge;
    sge.VirtualAddress = (uint8_t *)MmGetMdlVirtualAddress(r->buf) + (size_t)slot * SLOT;
    sge.Length = len;
    sge.MemoryRegionToken = r->token;
    return sge;
}

/* A receive of SLOT bytes into slot; its RequestContext is the slot number. */
static int post_receive(struct send_run *r, NDK_QP *qp, unsigned slot)
{
    NDK_SGE sge = slot_sge(r, slot, SLOT);
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

/* Average one-way latency of len bytes over iters messages; *cycles of the last one. */
static double one_way(struct send_run *r, ULONG len, uint64_t iters, long *cycles)
{
    double total = 0;
    for (uint64_t i = 0; i < iters && !r->f.call; i++) {
        cli_progress("sendlat: one way, %u bytes, %llu of %llu", (unsigned)len, (unsigned long long)(i + 1),
                     (unsigned long long)iters);
        double t0, at = 0;
        if (!post_receive(r, r->s->target, SLOT_RECV_T))
            break;
        t0 = cli_now_us();
        if (one_message(r, r->s->initiator, SLOT_SEND_I, len, SLOT_RECV_T, &at))
            total += at - t0;
    }
    *cycles = r->f.call ? -1 : last_cycles(r);
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
        double t0 = cli_now_us();
        if (one_message(r, r->s->initiator, SLOT_SEND_I, PING_BYTES, SLOT_RECV_T, &at) &&
            one_message(r, r->s->target, SLOT_SEND_T, PING_BYTES, SLOT_RECV_I, &at))
            total += at - t0;
    }
    return total / (double)iters;
}

/* Messages per second: count Sends of PING_BYTES, depth in flight, depth receives pre-posted. */
static double message_rate(struct send_run *r, uint64_t count, unsigned depth)
{
    NDK_QP *qi = r->s->initiator, *qt = r->s->target;
    uint64_t posted = 0, received = 0, sent = 0;
    for (unsigned k = 0; k < depth && !r->f.call; k++)
        post_receive(r, qt, SLOT_RECV_T + k);
    double t0 = cli_now_us();
    for (; posted < depth && posted < count && !r->f.call; posted++)
        post_send(r, qi, SLOT_SEND_I, PING_BYTES);
    while ((received < count || sent < count) && !r->f.call) {
        NDK_RESULT_EX res;
        if (!next_result(r, PING_BYTES, &res, NULL))
            break;
        if (res.Type == NdkOperationTypeReceive) {
            /* Every receive left pending is flushed when the QPs close. */
            if (++received + depth <= count)
                post_receive(r, qt, (unsigned)(uintptr_t)res.RequestContext);
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

int cmd_sendlat(struct cli *c, int argc, char **argv)
{
    uint64_t iters = DEFAULT_ITERS, rate_count = DEFAULT_RATE_COUNT, depth = DEFAULT_DEPTH;
    int series = 0;
    const struct cli_option opts[] = {
        {"count", 'c', NULL, &iters, 1, MAX_ITERS, 0, 0, "a count of iterations"},
        {"rate-count", 'n', NULL, &rate_count, 0, MAX_ITERS, 0, 0, "a count of messages"},
        {"in-flight", 'q', NULL, &depth, 1, 256, 0, 0, "a count of messages in flight"},
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
    SIZE_T bytes = ((SLOT_RECV_T + (SIZE_T)depth) * SLOT + PAGE_SIZE - 1) & ~(SIZE_T)(PAGE_SIZE - 1);
    if (!r.mr)
        run_check(&r, "NdkCreateMr", st);
    else if (run_check(&r, "NdkFpgaAllocateBuffer", NdkFpgaAllocateBuffer(s.adapter, bytes, &r.buf))) {
        struct cli_completion w;
        cli_completion_init(&w);
        st = r.mr->Dispatch->NdkRegisterMr(r.mr, r.buf, bytes, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, cli_on_request_done,
                                           &w);
        if (run_check(&r, "NdkRegisterMr", cli_finish(&w, st, NULL)))
            r.token = r.mr->Dispatch->NdkGetLocalTokenFromMr(r.mr);
    }
    double lat[N_SIZES], pp = -1, rate = -1;
    long cycles[N_SIZES];
    for (size_t i = 0; i < N_SIZES; i++) {
        cycles[i] = -1;
        lat[i] = r.f.call ? -1 : one_way(&r, sizes[i], iters, &cycles[i]);
    }
    if (!r.f.call)
        pp = ping_pong(&r, iters);
    if (!r.f.call && rate_count)
        rate = message_rate(&r, rate_count, (unsigned)depth);
    cli_progress_done();
    NDKFPGA_ADAPTER_DETAILS d;
    if (NdkFpgaQueryAdapterDetails(s.adapter, &d) != STATUS_SUCCESS)
        snprintf(d.Device, sizeof(d.Device), "%s", c->device);
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
        printf(", \"iterations\": %llu, \"unit\": \"microseconds of wall time; cycles of the board\",\n "
               "\"one_way\": [",
               (unsigned long long)iters);
        for (size_t i = 0; i < N_SIZES; i++) {
            printf("%s{\"bytes\": %u, \"latency_us\": ", i ? ", " : "", (unsigned)sizes[i]);
            cli_json_number(stdout, lat[i], 2);
            printf(", \"send_cycles\": ");
            cli_json_number(stdout, (double)cycles[i], 0);
            printf("}");
        }
        printf("],\n \"ping_pong_us\": ");
        cli_json_number(stdout, pp, 2);
        printf(", \"ping_pong_bytes\": %u,\n \"rate\": {\"count\": %llu, \"in_flight\": %llu, \"msgs_per_s\": ",
               PING_BYTES, (unsigned long long)rate_count, (unsigned long long)depth);
        cli_json_number(stdout, rate, 1);
        printf("}}\n");
    } else {
        printf("sendlat on %s: %llu iterations; wall-clock microseconds, the adapter's cycles from NdkFpgaQueryStats\n",
               d.Device, (unsigned long long)iters);
        for (size_t i = 0; i < N_SIZES; i++) {
            printf("one way, Send to receive completion, %3u B: %10.1f us", (unsigned)sizes[i], lat[i]);
            if (cycles[i] >= 0)
                printf("  (the adapter's cycles of the Send: %ld)", cycles[i]);
            printf("\n");
        }
        printf("ping-pong round trip, %u B each way:      %10.1f us\n", PING_BYTES, pp);
        if (rate_count)
            printf("message rate, %u B, %llu in flight:        %10.0f messages/s (%llu messages)\n", PING_BYTES,
                   (unsigned long long)depth, rate, (unsigned long long)rate_count);
        if (series) {
            /* bench/report.py reads these. */
            for (size_t i = 0; i < N_SIZES; i++) {
                printf("send_recv_latency_us_%ub = %.2f\n", (unsigned)sizes[i], lat[i]);
                if (cycles[i] >= 0)
                    printf("send_recv_clocks_%ub = %ld\n", (unsigned)sizes[i], cycles[i]);
            }
            printf("send_recv_pingpong_us = %.2f\n", pp);
            if (rate_count)
                printf("send_recv_rate_msgs_per_s = %.1f\nsend_recv_rate_in_flight = %llu\n"
                       "send_recv_rate_count = %llu\n",
                       rate, (unsigned long long)depth, (unsigned long long)rate_count);
            printf("send_recv_iterations = %llu\n", (unsigned long long)iters);
            printf("ok - sendlat: every Send and receive completed with the bytes sent\n");
        }
    }
    cli_session_close(&s); /* frees the buffer, the MR and every other object */
    return code;
}
