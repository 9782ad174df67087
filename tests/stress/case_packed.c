/* SPDX-License-Identifier: Apache-2.0 */
/* packed-frame: one link frame packed with more work requests than the adapter's
 * whole TX window can answer (deferred zero-length Sends on a board with two TX slots:
 * each answer is two CQEs, larger than its request). The adapter answers the rest of
 * such a frame short, without running them; every request must still complete exactly
 * once, in order (the short ones with STATUS_INSUFFICIENT_RESOURCES), and the QP go on. */
#include <stdlib.h>
#include <string.h>

#include "stress.h"

#define SENDS 100 /* zero-length Sends fill one frame */

void case_packed_frame(void)
{
    if (cfg.sim) {
        st_skip("packed-frame", "the Verilator board's TX window answers any one frame (the two-slot board is a "
                                "software adapter's profile)");
        return;
    }
    /* The software adapter with the smallest board's sizes (two TX slots). */
    setenv("NDKFPGA_MODEL_ARGS", "--profile ulx3s_25k", 1);
    struct stx x;
    int opened = stx_open_logged(&x, "packed-frame", 4 * SENDS + 64);
    unsetenv("NDKFPGA_MODEL_ARGS");
    if (!opened)
        return;
    struct pair pr;
    memset(&pr, 0, sizeof(pr));
    static int qa_ctx, qb_ctx;
    ULONG depth = x.info.MaxInitiatorQueueDepth < 2 * SENDS ? x.info.MaxInitiatorQueueDepth : 2 * SENDS;
    if (!st_ok(x.det.LinkTxSlots <= 2 && st_pair(&x, x.cq, depth, &qa_ctx, &qb_ctx, &pr),
               "the two-TX-slot profile (%u slots), a connected pair", (unsigned)x.det.LinkTxSlots))
        return;
    struct posted p[2 * SENDS + 1];
    size_t n = 0;
    int refused = 0;
    for (int round = 0; round < 2; round++) {
        /* All deferred but the last: one frame holds them. No receive waits for them,
         * so those that run complete with an error, the rest CANCELLED or short. */
        for (int i = 0; i < SENDS; i++) {
            void *ctx = (void *)(uintptr_t)(0x5000 + n);
            ULONG flags = i + 1 < SENDS ? NDK_OP_FLAG_DEFER : 0;
            NTSTATUS st = pr.qa->Dispatch->NdkSend(pr.qa, ctx, NULL, 0, flags);
            if (st == STATUS_SUCCESS)
                p[n++] = (struct posted){ctx, NdkOperationTypeSend};
            else
                refused++;
        }
        st_doing("waiting for %zu Sends packed in frames", n);
        log_wait(&x.log, &qa_ctx, n, cfg.wait_ms, "every packed Send");
    }
    NDK_RESULT_EX r[2 * SENDS + 1];
    size_t got = log_results(&x.log, &qa_ctx, r, 2 * SENDS + 1);
    size_t shorted = 0;
    for (size_t i = 0; i < got && i < n; i++)
        shorted += r[i].Status == STATUS_INSUFFICIENT_RESOURCES;
    char why[320] = "";
    int seq = seq_exact(&x.log, &qa_ctx, p, n, why, sizeof(why));
    st_ok(refused == 0 && seq, "%zu Sends packed into frames: each completed exactly once, in order (%zu answered "
                               "short: INSUFFICIENT_RESOURCES)%s%s",
          n, shorted, seq ? "" : ": ", why);
    st_pair_close(&pr, cfg.wait_ms);
    stx_close(&x, cfg.wait_ms);
}
