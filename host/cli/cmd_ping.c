/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga ping: link round-trip time (one ping at a time) and message rate (many in
 * flight), through NdkFpgaPing. */
#include <string.h>

#include "cli.h"

#define DEFAULT_COUNT 5
#define DEFAULT_RATE_COUNT 64
#define DEFAULT_DEPTH 8
#define MAX_COUNT 10000000u

int cmd_ping(struct cli *c, int argc, char **argv)
{
    uint64_t count = DEFAULT_COUNT, size = 0, rate_count = DEFAULT_RATE_COUNT, depth = DEFAULT_DEPTH;
    const struct cli_option opts[] = {
        {"count", 'c', NULL, &count, 1, MAX_COUNT, 0, 0, "a count of round trips"},
        {"size", 's', NULL, &size, 0, NDKFPGA_PING_MAX_PAYLOAD, 0, 1, "a payload in bytes"},
        {"rate-count", 'n', NULL, &rate_count, 0, MAX_COUNT, 0, 0, "a count of pings"},
        {"in-flight", 'q', NULL, &depth, 1, 4096, 0, 0, "a number of pings in flight"},
    };
    int code = cli_parse_options(c, argc, argv, 1, opts, sizeof(opts) / sizeof(opts[0]));
    if (code >= 0)
        return code;
    NDK_ADAPTER *a = cli_open(c, &code);
    if (!a)
        return code;

    /* Round trips, one at a time. */
    NDKFPGA_PING_RESULT rtt;
    memset(&rtt, 0, sizeof(rtt));
    NTSTATUS st = STATUS_SUCCESS;
    for (uint64_t i = 0; i < count && st == STATUS_SUCCESS; i++) {
        NDKFPGA_PING_RESULT one;
        st = NdkFpgaPing(a, 1, 1, (ULONG)size, &one);
        if (one.Replies) {
            if (rtt.Replies == 0 || one.MinNs < rtt.MinNs)
                rtt.MinNs = one.MinNs;
            if (one.MaxNs > rtt.MaxNs)
                rtt.MaxNs = one.MaxNs;
            rtt.TotalNs += one.TotalNs;
            rtt.ElapsedNs += one.ElapsedNs;
            rtt.Replies += one.Replies;
        }
        cli_progress("ping %s: %llu of %llu, last %.3f ms", c->device, (unsigned long long)(i + 1),
                     (unsigned long long)count, one.MaxNs / 1e6);
    }
    cli_progress_done();
    const char *failed = st != STATUS_SUCCESS ? "NdkFpgaPing" : NULL;
    /* Message rate: many in flight. */
    NDKFPGA_PING_RESULT rate;
    memset(&rate, 0, sizeof(rate));
    if (!failed && rate_count) {
        cli_progress("ping %s: %llu pings, %llu in flight ...", c->device, (unsigned long long)rate_count,
                     (unsigned long long)depth);
        st = NdkFpgaPing(a, (ULONG)rate_count, (ULONG)depth, (ULONG)size, &rate);
        cli_progress_done();
        failed = st != STATUS_SUCCESS ? "NdkFpgaPing (rate)" : NULL;
    }
    if (failed) {
        code = cli_fail(c, a, failed, st);
        NdkFpgaCloseAdapter(a);
        return code;
    }
    NDKFPGA_ADAPTER_DETAILS d;
    if (NdkFpgaQueryAdapterDetails(a, &d) != STATUS_SUCCESS)
        snprintf(d.Device, sizeof(d.Device), "%s", c->device);
    NdkFpgaCloseAdapter(a);

    size_t body = ((size_t)size + 7u) & ~(size_t)7u;
    double avg_ms = rtt.Replies ? (double)rtt.TotalNs / rtt.Replies / 1e6 : 0;
    double secs = rate.ElapsedNs / 1e9;
    double per_s = secs > 0 ? rate.Replies / secs : 0;
    if (c->json) {
        printf("{\"device\": ");
        cli_json_string(stdout, d.Device);
        printf(", \"payload_bytes\": %zu,\n \"rtt\": {\"count\": %lu, \"min_ms\": %.4f, \"avg_ms\": %.4f, "
               "\"max_ms\": %.4f}",
               body, (unsigned long)rtt.Replies, rtt.MinNs / 1e6, avg_ms, rtt.MaxNs / 1e6);
        if (rate_count)
            printf(",\n \"rate\": {\"count\": %lu, \"in_flight\": %llu, \"seconds\": %.6f, \"per_second\": %.1f, "
                   "\"payload_bytes_per_second\": %.1f}",
                   (unsigned long)rate.Replies, (unsigned long long)depth, secs, per_s, per_s * (double)body);
        else
            printf(",\n \"rate\": null");
        printf("}\n");
        return CLI_EXIT_OK;
    }
    printf("PING %s: %zu-byte payload\n", d.Device, body);
    printf("rtt min/avg/max = %.3f/%.3f/%.3f ms (%lu pings, one at a time)\n", rtt.MinNs / 1e6, avg_ms,
           rtt.MaxNs / 1e6, (unsigned long)rtt.Replies);
    if (rate_count)
        printf("rate: %lu pings in %.3f s with up to %llu in flight = %.0f pings/s (%.1f KiB/s of payload)\n",
               (unsigned long)rate.Replies, secs, (unsigned long long)depth, per_s, per_s * (double)body / 1024.0);
    return CLI_EXIT_OK;
}
