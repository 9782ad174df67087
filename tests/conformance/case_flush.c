/* SPDX-License-Identifier: Apache-2.0 */
/* NdkFlush is honest: the adapter runs a QP's requests in order, so the requests
 * posted before NdkFlush (deferred ones included) execute and report their real
 * status, and the requests posted after it complete CANCELLED and change nothing. Every
 * reported status is checked against what the tokens really do afterwards. */
#include "conformance.h"

/* One request of a flush scenario and what its completion must say. */
struct flush_wr {
    int kind;   /* 'F' fast-register, 'I' invalidate, 'W' write through the MR's token */
    NDK_MR *mr; /* the MR it acts on */
    ULONG flags;
};

static NTSTATUS post_flush_wr(NDK_QP *q, const struct flush_wr *w, void *ctx, struct buf *src,
                              const NDK_LOGICAL_ADDRESS *page, UINT64 va)
{
    if (w->kind == 'F')
        return q->Dispatch->NdkFastRegister(q, ctx, w->mr, 1, page, 0, PAGE_SIZE, (PVOID)(uintptr_t)va,
                                            NDK_OP_FLAG_ALLOW_REMOTE_WRITE | w->flags);
    if (w->kind == 'I')
        return q->Dispatch->NdkInvalidate(q, ctx, &w->mr->Header, w->flags);
    NDK_SGE sge = {{.VirtualAddress = va_of(src, 0)}, 64, src->mr->Dispatch->NdkGetLocalTokenFromMr(src->mr)};
    return q->Dispatch->NdkWrite(q, ctx, &sge, 1, va, w->mr->Dispatch->NdkGetRemoteTokenFromMr(w->mr), w->flags);
}

static NDK_OPERATION_TYPE flush_wr_type(int kind)
{
    return kind == 'F' ? NdkOperationTypeFastRegister
                       : kind == 'I' ? NdkOperationTypeInvalidate : NdkOperationTypeWrite;
}

void test_flush(void)
{
    struct buf src, tgt[2];
    NDK_MR *fr[2] = {new_mr(pd, 1), new_mr(pd, 1)};
    if (!new_buf(&src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) || !new_buf(&tgt[0], PAGE_SIZE, 0, (ULONG)-1) ||
        !new_buf(&tgt[1], PAGE_SIZE, 0, (ULONG)-1) || !fr[0] || !fr[1] || init_fast(fr[0], 1, TRUE) != STATUS_SUCCESS ||
        init_fast(fr[1], 1, TRUE) != STATUS_SUCCESS) {
        conf_ok(0, "buffers and fast MRs for the flush tests");
        return;
    }
    NDK_LOGICAL_ADDRESS page[2];
    const UINT64 va[2] = {0x20000, 0x30000};
    uint8_t init[64];
    fill(init, sizeof(init), 500);
    for (int i = 0; i < 2; i++) {
        page[i].QuadPart = (LONGLONG)MmGetMdlPfnArray(tgt[i].mdl)[0] << PAGE_SHIFT;
        NdkFpgaWriteBuffer(ad, tgt[i].mdl, 0, init, sizeof(init));
    }

    /* Scenario 1: three requests before the flush (the last two deferred, so they sit
     * in the link's open frame when NdkFlush is called), three after it. */
    struct pair pr;
    if (!conf_ok(connect_pair(pd, &pr), "connect for the flush tests"))
        return;
    const struct flush_wr before[3] = {{'F', fr[0], 0}, {'I', fr[0], NDK_OP_FLAG_DEFER}, {'F', fr[0], NDK_OP_FLAG_DEFER}};
    const struct flush_wr after[3] = {{'I', fr[0], NDK_OP_FLAG_DEFER}, {'F', fr[1], NDK_OP_FLAG_DEFER}, {'W', fr[0], 0}};
    int ok = 1;
    for (int i = 0; i < 3; i++)
        ok &= post_flush_wr(pr.qa, &before[i], (PVOID)(uintptr_t)(0x100 + i), &src,
                            &page[before[i].mr == fr[1]], va[before[i].mr == fr[1]]) == STATUS_SUCCESS;
    pr.qa->Dispatch->NdkFlush(pr.qa);
    /* Nothing else is posted yet: the flush itself must push the deferred requests. */
    NDK_RESULT_EX res[6];
    for (int i = 0; i < 3; i++)
        res[i] = next_result();
    int valid[2] = {0, 0}; /* token state implied by the reported statuses */
    int pre_ok = ok;
    for (int i = 0; i < 3; i++) {
        pre_ok &= res[i].RequestContext == (PVOID)(uintptr_t)(0x100 + i) && res[i].Type == flush_wr_type(before[i].kind) &&
                  res[i].Status == STATUS_SUCCESS;
        if (res[i].Status == STATUS_SUCCESS)
            valid[before[i].mr == fr[1]] = before[i].kind == 'F';
    }
    conf_ok(pre_ok, "NdkFlush pushes the deferred requests; the 3 posted before it ran and complete with their real "
                    "status, SUCCESS (%s, %s, %s)",
            NdkFpgaStatusName(res[0].Status), NdkFpgaStatusName(res[1].Status), NdkFpgaStatusName(res[2].Status));
    fill(init, sizeof(init), 501);
    NdkFpgaWriteBuffer(ad, src.mdl, 0, init, sizeof(init)); /* what the write after the flush would put */
    uint8_t tgt_before[64], tgt_after[64];
    NdkFpgaReadBuffer(ad, tgt[0].mdl, 0, tgt_before, sizeof(tgt_before));
    ok = 1;
    for (int i = 0; i < 3; i++)
        ok &= post_flush_wr(pr.qa, &after[i], (PVOID)(uintptr_t)(0x200 + i), &src, &page[after[i].mr == fr[1]],
                            va[after[i].mr == fr[1]]) == STATUS_SUCCESS;
    for (int i = 0; i < 3; i++) {
        res[3 + i] = next_result();
        ok &= res[3 + i].RequestContext == (PVOID)(uintptr_t)(0x200 + i) &&
              res[3 + i].Type == flush_wr_type(after[i].kind) && res[3 + i].Status == STATUS_CANCELLED;
        if (after[i].kind != 'W' && res[3 + i].Status == STATUS_SUCCESS)
            valid[after[i].mr == fr[1]] = after[i].kind == 'F';
    }
    NdkFpgaReadBuffer(ad, tgt[0].mdl, 0, tgt_after, sizeof(tgt_after));
    conf_ok(ok, "requests posted after NdkFlush (2 deferred) complete STATUS_CANCELLED (%s, %s, %s)",
            NdkFpgaStatusName(res[3].Status), NdkFpgaStatusName(res[4].Status), NdkFpgaStatusName(res[5].Status));
    conf_ok(cq_stays_empty(), "every request completed exactly once");
    conf_ok(res[5].Status == STATUS_SUCCESS ? !memcmp(tgt_after, init, sizeof(init))
                                            : !memcmp(tgt_after, tgt_before, sizeof(tgt_before)),
            "the write posted after NdkFlush (%s) changed nothing", NdkFpgaStatusName(res[5].Status));
    /* What the tokens do now must match the reported statuses: MR 0 fast-registered by
     * a SUCCESS before the flush (its CANCELLED invalidate did not happen), MR 1 never
     * registered (its CANCELLED fast-register did not happen). Probed from the peer QP,
     * which the flush does not affect. */
    NTSTATUS p0 = probe_write(pr.qb, &src, &tgt[0], fr[0]->Dispatch->NdkGetRemoteTokenFromMr(fr[0]), va[0], 502);
    conf_ok(valid[0] && p0 == STATUS_SUCCESS,
            "MR 0: a write through its token agrees with the reported statuses: granted, bytes landed (%s)",
            NdkFpgaStatusName(p0));
    NTSTATUS p1 = probe_write(pr.qb, &src, &tgt[1], fr[1]->Dispatch->NdkGetRemoteTokenFromMr(fr[1]), va[1], 503);
    conf_ok(!valid[1] && p1 == STATUS_ACCESS_VIOLATION,
            "MR 1: a write through its token agrees with the reported statuses: refused, target unchanged (%s)",
            NdkFpgaStatusName(p1));
    close_pair(&pr);

    /* Scenario 2: a QP of depth 4 filled with silent successes (all deferred). They
     * execute and produce no result; the flush frees their slots, so the QP takes new
     * requests again, which complete CANCELLED. */
    pair_depth = 4;
    int connected = connect_pair(pd, &pr);
    pair_depth = QP_DEPTH;
    if (!conf_ok(connected, "connect a pair of depth 4"))
        goto out;
    const ULONG sd = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_DEFER;
    const struct flush_wr silent[4] = {{'I', fr[0], sd}, {'F', fr[0], sd}, {'I', fr[0], sd}, {'F', fr[0], sd}};
    ok = 1;
    for (int i = 0; i < 4; i++)
        ok &= post_flush_wr(pr.qa, &silent[i], (PVOID)(uintptr_t)(0x300 + i), &src, &page[0], va[0]) == STATUS_SUCCESS;
    pr.qa->Dispatch->NdkFlush(pr.qa);
    conf_ok(ok && cq_stays_empty(), "4 silent requests before NdkFlush: they ran successfully, no result");
    NTSTATUS st = STATUS_INSUFFICIENT_RESOURCES;
    const struct flush_wr inv = {'I', fr[0], 0};
    for (int t = 0; t < conf_timeout_ms && st == STATUS_INSUFFICIENT_RESOURCES; t++) {
        st = post_flush_wr(pr.qa, &inv, (PVOID)0x400, &src, &page[0], va[0]);
        if (st == STATUS_INSUFFICIENT_RESOURCES)
            sleep_ms(1);
    }
    NDK_RESULT_EX r = next_result();
    conf_ok(st == STATUS_SUCCESS && r.Status == STATUS_CANCELLED && r.RequestContext == (PVOID)0x400 &&
                cq_stays_empty(),
            "the flush frees their slots: a request posted after it is accepted and completes STATUS_CANCELLED "
            "(post %s, result %s)",
            NdkFpgaStatusName(st), NdkFpgaStatusName(r.Status));
    p0 = probe_write(pr.qb, &src, &tgt[0], fr[0]->Dispatch->NdkGetRemoteTokenFromMr(fr[0]), va[0], 504);
    conf_ok(p0 == STATUS_SUCCESS,
            "the silent fast-register before the flush took effect, the cancelled invalidate did not (%s)",
            NdkFpgaStatusName(p0));
    close_pair(&pr);
out:
    close_obj(&fr[0]->Header);
    close_obj(&fr[1]->Header);
    free_buf(&src);
    free_buf(&tgt[0]);
    free_buf(&tgt[1]);
}
