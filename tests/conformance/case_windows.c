/* SPDX-License-Identifier: Apache-2.0 */
/* Memory windows: the bind rules, a window inside a registered or fast-registered MR,
 * re-binding, invalidation of the window or its MR. */
#include "conformance.h"

/* NdkBind on q, then its completion: the status it completed with (STATUS_INTERNAL_ERROR
 * when the result is not the bind's), or the inline status. */
static NTSTATUS bind_wait(NDK_QP *q, NDK_MR *mr, NDK_MW *mw, UINT64 va, SIZE_T len, ULONG flags)
{
    NTSTATUS st = q->Dispatch->NdkBind(q, (PVOID)0xB1, mr, mw, (PVOID)(uintptr_t)va, len, flags);
    if (st != STATUS_SUCCESS)
        return st;
    NDK_RESULT_EX r = next_result();
    return r.RequestContext == (PVOID)0xB1 && r.Type == NdkOperationTypeBind ? r.Status : STATUS_INTERNAL_ERROR;
}

/* NdkInvalidate on q and its completion's status. */
static NTSTATUS invalidate_wait(NDK_QP *q, NDK_OBJECT_HEADER *obj)
{
    NTSTATUS st = q->Dispatch->NdkInvalidate(q, (PVOID)0xB2, obj, 0);
    if (st != STATUS_SUCCESS)
        return st;
    NDK_RESULT_EX r = next_result();
    return r.RequestContext == (PVOID)0xB2 && r.Type == NdkOperationTypeInvalidate ? r.Status : STATUS_INTERNAL_ERROR;
}

/* A bind the adapter refuses: on a fresh pair (an error completion breaks the QP) it
 * completes want, type Bind. */
static void bind_refused(const char *name, NDK_MR *mr, NDK_MW *mw, UINT64 va, SIZE_T len, ULONG flags, NTSTATUS want)
{
    struct pair pr;
    if (conf_ok(connect_pair(pd, &pr), "connect for: %s", name))
        expect(bind_wait(pr.qa, mr, mw, va, len, flags), want, name);
    close_pair(&pr);
}

/* Reads 16 bytes at raddr through token into loc (a read sink) on q: SUCCESS only with
 * the bytes of tgt at off. */
static NTSTATUS probe_read(NDK_QP *q, struct buf *loc, const struct buf *tgt, size_t off, UINT32 token, UINT64 raddr)
{
    uint8_t want[16], got[16], junk[16];
    memset(junk, 0xA5, sizeof(junk));
    NdkFpgaWriteBuffer(ad, loc->mdl, 0, junk, sizeof(junk));
    NdkFpgaReadBuffer(ad, tgt->mdl, off, want, sizeof(want));
    NDK_SGE sge = {{.VirtualAddress = va_of(loc, 0)}, sizeof(got), loc->mr->Dispatch->NdkGetLocalTokenFromMr(loc->mr)};
    if (q->Dispatch->NdkRead(q, (PVOID)0x9001, &sge, 1, raddr, token, 0) != STATUS_SUCCESS)
        return STATUS_INTERNAL_ERROR;
    NDK_RESULT_EX r = next_result();
    NdkFpgaReadBuffer(ad, loc->mdl, 0, got, sizeof(got));
    if (r.RequestContext != (PVOID)0x9001 || (r.Status == STATUS_SUCCESS && memcmp(got, want, sizeof(got))))
        return STATUS_INTERNAL_ERROR;
    return r.Status;
}

/* Bind rules 2-7 of the adapter (docs/rules.md), each on a fresh pair. */
static void mw_bind_rules(NDK_MR *rw, NDK_MW *mw, struct buf *tgt, UINT64 base)
{
    const ULONG R = NDK_OP_FLAG_ALLOW_REMOTE_READ, W = NDK_OP_FLAG_ALLOW_REMOTE_WRITE;
    const SIZE_T mlen = REFUSAL_MR_BYTES;
    NDK_MR *other = new_mr(pd2, 0), *ro = new_mr(pd, 0), *fr = new_mr(pd, 1), *unreg = new_mr(pd, 0);
    NDK_MW *mw2 = new_mw(pd2);
    if (!other || !ro || !fr || !unreg || !mw2 || reg_mr(other, tgt->mdl, mlen, NDK_MR_FLAG_ALLOW_REMOTE_WRITE) ||
        reg_mr(ro, tgt->mdl, mlen, NDK_MR_FLAG_ALLOW_REMOTE_READ) || init_fast(fr, 1, TRUE)) {
        conf_ok(0, "MRs and a window for the bind rules");
    } else {
        struct pair pr;
        if (conf_ok(connect_pair(pd, &pr), "connect for the inline bind rules")) {
            expect(pr.qa->Dispatch->NdkBind(pr.qa, NULL, rw, mw, (PVOID)(uintptr_t)base, 16, NDK_OP_FLAG_INLINE),
                   STATUS_INVALID_PARAMETER, "NdkBind unknown flag (INLINE): INVALID_PARAMETER inline");
            expect(pr.qa->Dispatch->NdkBind(pr.qa, NULL, rw, (NDK_MW *)(void *)ro, (PVOID)(uintptr_t)base, 16, R),
                   STATUS_INVALID_PARAMETER, "NdkBind with an MR as the window: INVALID_PARAMETER inline");
            conf_ok(cq_stays_empty(), "refused binds post nothing");
        }
        close_pair(&pr);
        bind_refused("NdkBind MR of another PD: completes ACCESS_VIOLATION", other, mw, base, 16, R,
                     STATUS_ACCESS_VIOLATION);
        bind_refused("NdkBind window of another PD: completes ACCESS_VIOLATION", rw, mw2, base, 16, R,
                     STATUS_ACCESS_VIOLATION);
        bind_refused("NdkBind to a fast MR not registered: completes INVALID_DEVICE_STATE", fr, mw, 0x7e0000000000ull,
                     16, R, STATUS_INVALID_DEVICE_STATE);
        bind_refused("NdkBind to an MR never registered: completes INVALID_DEVICE_STATE", unreg, mw, base, 16, R,
                     STATUS_INVALID_DEVICE_STATE);
        bind_refused("NdkBind of length 0: completes INVALID_PARAMETER", rw, mw, base, 0, R, STATUS_INVALID_PARAMETER);
        bind_refused("NdkBind starting below the MR: completes INVALID_PARAMETER", rw, mw, base - 1, 16, R,
                     STATUS_INVALID_PARAMETER);
        bind_refused("NdkBind ending past the MR: completes INVALID_PARAMETER", rw, mw, base + mlen - 8, 16, R,
                     STATUS_INVALID_PARAMETER);
        bind_refused("NdkBind whose range wraps: completes INVALID_PARAMETER", rw, mw, base, (SIZE_T)-1, R,
                     STATUS_INVALID_PARAMETER);
        bind_refused("NdkBind remote write on an MR without local write: completes ACCESS_VIOLATION", ro, mw, base, 16,
                     W, STATUS_ACCESS_VIOLATION);
        bind_refused("NdkBind remote read on a read-only MR: completes SUCCESS", ro, mw, base, 16, R, STATUS_SUCCESS);
    }
    NDK_OBJECT_HEADER *objs[5] = {other ? &other->Header : NULL, ro ? &ro->Header : NULL, fr ? &fr->Header : NULL,
                                  unreg ? &unreg->Header : NULL, mw2 ? &mw2->Header : NULL};
    for (int i = 0; i < 5; i++)
        if (objs[i])
            close_obj(objs[i]);
}

/* A window inside a fast-registered MR: it grants; invalidating the MR makes it refuse,
 * and fast-registering the MR again does not revive it. */
static void mw_in_fast_mr(struct buf *src, struct buf *tgt)
{
    const UINT64 va = 0x7d0000000000ull;
    NDK_LOGICAL_ADDRESS page = {.QuadPart = (LONGLONG)MmGetMdlPfnArray(tgt->mdl)[0] << PAGE_SHIFT};
    const ULONG fw = NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ;
    struct pair pr;
    NDK_MR *fr = new_mr(pd, 1);
    NDK_MW *mw = new_mw(pd);
    if (!conf_ok(connect_pair(pd, &pr), "connect for the window of a fast-registered MR") || !fr || !mw ||
        init_fast(fr, 1, TRUE) != STATUS_SUCCESS) {
        conf_ok(0, "a fast MR and a window");
    } else {
        NDK_QP *q = pr.qa;
        NTSTATUS st = q->Dispatch->NdkFastRegister(q, (PVOID)0xB3, fr, 1, &page, 0, PAGE_SIZE, (PVOID)(uintptr_t)va, fw);
        expect(st == STATUS_SUCCESS ? next_result().Status : st, STATUS_SUCCESS, "NdkFastRegister for the window");
        expect(bind_wait(q, fr, mw, va, 128, NDK_OP_FLAG_ALLOW_REMOTE_WRITE), STATUS_SUCCESS,
               "NdkBind inside a fast-registered MR (remote write): completes SUCCESS, type Bind");
        expect(probe_write(q, src, tgt, wtoken(mw), va, 801), STATUS_SUCCESS,
               "RDMA Write through the window of a fast-registered MR lands in the MR's page");
        expect(invalidate_wait(q, &fr->Header), STATUS_SUCCESS, "NdkInvalidate of the window's MR: SUCCESS");
        refused_access("write through the window of an invalidated MR", 1, tgt, wtoken(mw), va, 16);
        st = q->Dispatch->NdkFastRegister(q, (PVOID)0xB3, fr, 1, &page, 0, PAGE_SIZE, (PVOID)(uintptr_t)va, fw);
        expect(st == STATUS_SUCCESS ? next_result().Status : st, STATUS_SUCCESS, "NdkFastRegister of the MR again");
        expect(probe_write(q, src, tgt, rtoken(fr), va, 803), STATUS_SUCCESS,
               "the MR registered again grants through its own token");
        refused_access("write through the old window after the MR is registered again (not revived)", 1, tgt,
                       wtoken(mw), va, 16);
    }
    close_pair(&pr);
    if (mw)
        close_obj(&mw->Header);
    if (fr)
        close_obj(&fr->Header);
}

/* A window inside an NdkRegisterMr MR on pr: granted only inside its range, with its
 * rights; re-binding replaces; NdkInvalidate of it leaves the MR granting. */
static void mw_in_registered_mr(struct pair *pr, NDK_MR *rw, NDK_MW *mw, struct buf *tgt, UINT64 base)
{
    const ULONG R = NDK_OP_FLAG_ALLOW_REMOTE_READ, W = NDK_OP_FLAG_ALLOW_REMOTE_WRITE;
    NDK_QP *q = pr->qa;
    struct buf src, sink;
    NDK_MW *ro = new_mw(pd);
    if (!ro || !new_buf(&src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) ||
        !new_buf(&sink, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK)) {
        conf_ok(0, "buffers and a second window");
        return;
    }
    UINT32 tok = wtoken(mw);
    expect(bind_wait(q, rw, mw, base, 128, R | W), STATUS_SUCCESS,
           "NdkBind inside an NdkRegisterMr MR (remote read and write): completes SUCCESS, type Bind");
    expect(probe_write(q, &src, tgt, tok, base, 811), STATUS_SUCCESS, "RDMA Write through the window lands");
    expect(probe_read(q, &sink, tgt, 0, tok, base), STATUS_SUCCESS, "RDMA Read through the window returns the bytes");
    expect(bind_wait(q, rw, mw, base + 64, 64, R | W), STATUS_SUCCESS, "NdkBind of the bound window elsewhere");
    refused_access("write below the re-bound window (granted before: re-binding replaces)", 1, tgt, tok, base, 16);
    refused_access("write of 1 byte just above the window", 1, tgt, tok, base + 128, 1);
    refused_access("write straddling the window's end", 1, tgt, tok, base + 120, 16);
    refused_access("read straddling the window's start", 0, tgt, tok, base + 56, 16);
    expect(probe_read(q, &sink, tgt, 64, tok, base + 64), STATUS_SUCCESS, "RDMA Read inside the re-bound window");
    expect(bind_wait(q, rw, ro, base, 128, R), STATUS_SUCCESS, "NdkBind of a read-only window: SUCCESS");
    refused_access("write through a read-only window of a writable MR", 1, tgt, wtoken(ro), base, 16);
    expect(probe_read(q, &sink, tgt, 0, wtoken(ro), base), STATUS_SUCCESS, "RDMA Read through the read-only window");
    expect(invalidate_wait(q, &mw->Header), STATUS_SUCCESS, "NdkInvalidate of a window: SUCCESS, type Invalidate");
    refused_access("write through an invalidated window", 1, tgt, tok, base + 64, 16);
    expect(probe_write(q, &src, tgt, rtoken(rw), base, 812), STATUS_SUCCESS,
           "the window's MR still grants through its own token");
    const UINT32 ro_tok = wtoken(ro);
    expect(close_obj(&ro->Header), STATUS_SUCCESS, "NdkCloseMw of a bound window");
    refused_access("read through the token of a closed window", 0, tgt, ro_tok, base, 16);
    expect(invalidate_wait(q, &mw->Header), STATUS_INVALID_DEVICE_STATE,
           "NdkInvalidate of an invalid window: completes INVALID_DEVICE_STATE");
    free_buf(&src);
    free_buf(&sink);
}

void test_windows(void)
{
    conf_ok(info.MaxWindowSize > 0 && info.MaxWindowSize <= 0xFFFFFFFFu,
            "MaxWindowSize: windows supported, at most 2^32-1 (%zu)", (size_t)info.MaxWindowSize);
    NDK_MW *mw = new_mw(pd), *mw2 = new_mw(pd);
    if (!conf_ok(mw && mw2, "NdkCreateMw: two windows"))
        return;
    conf_ok(wtoken(mw) != wtoken(mw2), "NdkGetRemoteTokenFromMw: each window its own token (0x%08x, 0x%08x)",
            (unsigned)wtoken(mw), (unsigned)wtoken(mw2));
    expect(close_obj(&mw2->Header), STATUS_SUCCESS, "NdkCloseMw of an unbound window");
    struct buf tgt, src;
    struct pair pr;
    NDK_MR *rw = new_mr(pd, 0);
    const ULONG rwf = NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ;
    if (new_buf(&tgt, PAGE_SIZE, 0, (ULONG)-1) && new_buf(&src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) && rw &&
        reg_mr(rw, tgt.mdl, REFUSAL_MR_BYTES, rwf) == STATUS_SUCCESS) {
        const UINT64 base = (UINT64)(uintptr_t)va_of(&tgt, 0);
        if (conf_ok(connect_pair(pd, &pr), "connect for the window cases"))
            mw_in_registered_mr(&pr, rw, mw, &tgt, base);
        close_pair(&pr);
        mw_bind_rules(rw, mw, &tgt, base);
        mw_in_fast_mr(&src, &tgt);
        dereg_mr(rw);
    } else {
        conf_ok(0, "a registered MR for the window cases");
    }
    if (rw)
        close_obj(&rw->Header);
    close_obj(&mw->Header);
    free_buf(&src);
    free_buf(&tgt);
}
