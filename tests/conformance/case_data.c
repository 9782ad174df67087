/* SPDX-License-Identifier: Apache-2.0 */
/* The data path over a connected pair: fast-register over scattered pages, RDMA Write
 * and Read through the token with every byte checked, refusals after invalidation, and
 * remote accesses the engine must refuse (another PD, no right, out of bounds, bad key). */
#include <stdlib.h>

#include "conformance.h"

/* The data path and the rules that need a connected QP. */
void test_fast_register_rules(void)
{
    struct pair pr;
    if (!conf_ok(connect_pair(pd, &pr), "connect two QPs in loopback"))
        return;
    NDK_QP *qp = pr.qa;
    struct buf tgt, src, rb;
    /* The software adapter moves every byte of 3 scattered pages; the Verilator board
     * (about 2 KB/s over its simulated UART) a range crossing the page boundary of 2
     * scattered pages, with the bytes around it checked as well. */
    const ULONG np = slow ? 2 : 3;
    const ULONG fbo = slow ? PAGE_SIZE - 300 : 100;
    const size_t len = slow ? 600 : 3 * PAGE_SIZE - 200;
    const size_t tlen = np * PAGE_SIZE;
    const size_t wlo = slow ? fbo - 64 : 0, whi = slow ? fbo + len + 64 : tlen; /* checked window */
    if (!new_buf(&tgt, tlen, 1, (ULONG)-1) || !new_buf(&src, len, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) ||
        !new_buf(&rb, len, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE)) {
        conf_ok(0, "buffers for the data tests");
        return;
    }
    NDK_LOGICAL_ADDRESS pages[4] = {{.QuadPart = 0}, {.QuadPart = 0}, {.QuadPart = 0}, {.QuadPart = 0}};
    for (ULONG i = 0; i < np; i++)
        pages[i].QuadPart = (LONGLONG)MmGetMdlPfnArray(tgt.mdl)[i] << PAGE_SHIFT;
    pages[np] = pages[0];
    conf_ok(pages[1].QuadPart != pages[0].QuadPart + PAGE_SIZE, "target pages are not contiguous in adapter memory");
    NDK_MR *fr = new_mr(pd, 1), *fr_local = new_mr(pd, 1), *normal = new_mr(pd, 0);
    if (!fr || !fr_local || !normal || init_fast(fr, np, TRUE) != STATUS_SUCCESS ||
        init_fast(fr_local, np, FALSE) != STATUS_SUCCESS) {
        conf_ok(0, "fast MRs for the data tests");
        return;
    }
    UINT32 tok = fr->Dispatch->NdkGetRemoteTokenFromMr(fr);
    /* Base VA: n pages + FBO, not the buffer's own VA (any value works). */
    uint8_t *va = (uint8_t *)(uintptr_t)0x7f0000000000ull + fbo;

    /* Local rules, inline, nothing posted. */
    expect(qp->Dispatch->NdkFastRegister(qp, NULL, fr, np + 1, pages, fbo, len, va, 0), STATUS_INVALID_PARAMETER,
           "NdkFastRegister page count above the MR's capacity: INVALID_PARAMETER");
    expect(qp->Dispatch->NdkFastRegister(qp, NULL, fr_local, np, pages, fbo, len, va, NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
           STATUS_ACCESS_VIOLATION, "NdkFastRegister remote write on an MR without RemoteAccess: ACCESS_VIOLATION");
    expect(qp->Dispatch->NdkFastRegister(qp, NULL, fr_local, np, pages, fbo, len, va, NDK_OP_FLAG_ALLOW_REMOTE_READ),
           STATUS_ACCESS_VIOLATION, "NdkFastRegister remote read on an MR without RemoteAccess: ACCESS_VIOLATION");
    NDK_LOGICAL_ADDRESS bad[4] = {{.QuadPart = pages[0].QuadPart + 8}, pages[1], pages[2], pages[3]};
    expect(qp->Dispatch->NdkFastRegister(qp, NULL, fr, np, bad, fbo, len, va, 0), STATUS_INVALID_PARAMETER,
           "NdkFastRegister misaligned page address: INVALID_PARAMETER");
    expect(qp->Dispatch->NdkFastRegister(qp, NULL, fr, np, pages, fbo, len, va + 1, 0), STATUS_INVALID_PARAMETER,
           "NdkFastRegister base VA not FBO + n * PAGE_SIZE: INVALID_PARAMETER");
    expect(qp->Dispatch->NdkFastRegister(qp, NULL, fr, np, pages, fbo, np * PAGE_SIZE - fbo + 1, va, 0),
           STATUS_INVALID_PARAMETER, "NdkFastRegister length past the pages: INVALID_PARAMETER");
    expect(qp->Dispatch->NdkFastRegister(qp, NULL, fr, np, pages, fbo, len, NULL, 0), STATUS_INVALID_PARAMETER,
           "NdkFastRegister BaseVirtualAddress 0 with a nonzero FBO: INVALID_PARAMETER");
    NDK_MR *uninit = new_mr(pd, 1);
    expect(qp->Dispatch->NdkFastRegister(qp, NULL, uninit, 1, pages, 0, 16, va - fbo, 0), STATUS_INVALID_DEVICE_STATE,
           "NdkFastRegister on an uninitialized fast MR: INVALID_DEVICE_STATE");
    expect(qp->Dispatch->NdkFastRegister(qp, NULL, normal, 1, pages, 0, 16, va - fbo, 0), STATUS_INVALID_DEVICE_STATE,
           "NdkFastRegister on a normal MR: INVALID_DEVICE_STATE");
    expect(qp->Dispatch->NdkInvalidate(qp, NULL, &normal->Header, 0), STATUS_INVALID_DEVICE_STATE,
           "NdkInvalidate of a normal MR: INVALID_DEVICE_STATE");
    conf_ok(cq_stays_empty(), "rule violations posted nothing");

    /* Fill the target with a known pattern, fast-register it, write through the token. */
    uint8_t *before = malloc(tlen), *data = malloc(len), *back = malloc(tlen);
    fill(before, tlen, 1);
    fill(data, len, 2);
    NdkFpgaWriteBuffer(ad, tgt.mdl, wlo, before + wlo, whi - wlo);
    NdkFpgaWriteBuffer(ad, src.mdl, 0, data, len);
    expect(qp->Dispatch->NdkFastRegister(qp, (PVOID)1, fr, np, pages, fbo, len, va,
                                         NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ |
                                             NDK_OP_FLAG_RDMA_READ_SINK),
           STATUS_SUCCESS, "NdkFastRegister scattered pages, nonzero FBO (with RDMA_READ_SINK)");
    expect_result(next_result(), STATUS_SUCCESS, NdkOperationTypeFastRegister, (PVOID)1, "fast-register completes");
    conf_ok(fr->Dispatch->NdkGetRemoteTokenFromMr(fr) == tok, "token unchanged by the fast-register");
    NDK_SGE sge = {{.VirtualAddress = va_of(&src, 0)}, (ULONG)len,
                   src.mr->Dispatch->NdkGetLocalTokenFromMr(src.mr)};
    expect(qp->Dispatch->NdkWrite(qp, (PVOID)2, &sge, 1, (UINT64)(uintptr_t)va, tok, 0), STATUS_SUCCESS,
           "NdkWrite through the remote token");
    NDK_RESULT_EX r = next_result();
    expect_result(r, STATUS_SUCCESS, NdkOperationTypeWrite, (PVOID)2, "RDMA Write completes");
    conf_ok(r.BytesTransferred == len, "BytesTransferred %u == %zu", (unsigned)r.BytesTransferred, len);
    NdkFpgaReadBuffer(ad, tgt.mdl, wlo, back + wlo, whi - wlo);
    memcpy(before + fbo, data, len);
    conf_ok(!memcmp(back + wlo, before + wlo, whi - wlo),
            "every target byte written, none outside [FBO, FBO + length) (%zu bytes checked)", whi - wlo);
    /* Read it back through the token into a third buffer. */
    NDK_SGE rsge = {{.VirtualAddress = va_of(&rb, 0)}, (ULONG)len, rb.mr->Dispatch->NdkGetLocalTokenFromMr(rb.mr)};
    expect(qp->Dispatch->NdkRead(qp, (PVOID)3, &rsge, 1, (UINT64)(uintptr_t)va, tok, 0), STATUS_SUCCESS,
           "NdkRead through the remote token");
    expect_result(next_result(), STATUS_SUCCESS, NdkOperationTypeRead, (PVOID)3, "RDMA Read completes");
    memset(back, 0, tlen);
    NdkFpgaReadBuffer(ad, rb.mdl, 0, back, len);
    conf_ok(!memcmp(back, data, len), "RDMA Read: every byte checked");

    /* Invalidate: then the same write is refused and the target does not change. */
    expect(qp->Dispatch->NdkInvalidate(qp, (PVOID)4, &fr->Header, 0), STATUS_SUCCESS, "NdkInvalidate");
    expect_result(next_result(), STATUS_SUCCESS, NdkOperationTypeInvalidate, (PVOID)4, "invalidate completes");
    uint8_t *junk = malloc(len);
    fill(junk, len, 3);
    NdkFpgaWriteBuffer(ad, src.mdl, 0, junk, len);
    expect(qp->Dispatch->NdkWrite(qp, (PVOID)5, &sge, 1, (UINT64)(uintptr_t)va, tok, 0), STATUS_SUCCESS,
           "NdkWrite after invalidation posts");
    r = next_result();
    expect_result(r, STATUS_ACCESS_VIOLATION, NdkOperationTypeWrite, (PVOID)5,
                  "write through an invalidated token: STATUS_ACCESS_VIOLATION");
    NdkFpgaReadBuffer(ad, tgt.mdl, wlo, back + wlo, whi - wlo);
    conf_ok(!memcmp(back + wlo, before + wlo, whi - wlo), "target bytes unchanged after the refused write");
    expect(qp->Dispatch->NdkFastRegister(qp, (PVOID)6, fr, np, pages, fbo, len, va, NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
           STATUS_SUCCESS, "a request after the error completion posts");
    expect_result(next_result(), STATUS_CANCELLED, NdkOperationTypeFastRegister, (PVOID)6,
                  "later request on that QP: STATUS_CANCELLED");
    close_pair(&pr);

    /* Token stable across fast-register/invalidate cycles, on a fresh connection. */
    if (conf_ok(connect_pair(pd, &pr), "reconnect")) {
        qp = pr.qa;
        int cycles = slow ? 2 : 5, good = 1;
        for (int c = 0; c < cycles && good; c++) {
            fill(data, len, 10u + (uint32_t)c);
            NdkFpgaWriteBuffer(ad, src.mdl, 0, data, len);
            good &= qp->Dispatch->NdkFastRegister(qp, NULL, fr, np, pages, fbo, len, va,
                                                  NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_SILENT_SUCCESS) ==
                    STATUS_SUCCESS;
            good &= qp->Dispatch->NdkWrite(qp, (PVOID)7, &sge, 1, (UINT64)(uintptr_t)va,
                                           fr->Dispatch->NdkGetRemoteTokenFromMr(fr), 0) == STATUS_SUCCESS;
            r = next_result();
            good &= r.Status == STATUS_SUCCESS && r.RequestContext == (PVOID)7;
            NdkFpgaReadBuffer(ad, tgt.mdl, fbo, back, len);
            good &= !memcmp(back, data, len);
            good &= qp->Dispatch->NdkInvalidate(qp, (PVOID)8, &fr->Header, 0) == STATUS_SUCCESS;
            r = next_result();
            good &= r.Status == STATUS_SUCCESS && r.Type == NdkOperationTypeInvalidate;
            good &= fr->Dispatch->NdkGetRemoteTokenFromMr(fr) == tok;
        }
        conf_ok(good, "%d fast-register/write/invalidate cycles with one token (silent fast-registers)", cycles);

        /* Double invalidate: the second fails (completion with an error status). */
        expect(qp->Dispatch->NdkInvalidate(qp, (PVOID)9, &fr->Header, 0), STATUS_SUCCESS,
               "NdkInvalidate of an invalidated MR posts");
        r = next_result();
        conf_ok(r.Status != STATUS_SUCCESS && r.Status != STATUS_IO_TIMEOUT && r.RequestContext == (PVOID)9,
                "invalidating an already-invalidated token fails (%s)", NdkFpgaStatusName(r.Status));
        /* Any error completion breaks the connection, whatever the request: the next
         * fast-register on that QP completes STATUS_CANCELLED and registers nothing. */
        NTSTATUS pst = qp->Dispatch->NdkFastRegister(qp, (PVOID)10, fr, np, pages, fbo, len, va,
                                                     NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
        r = pst == STATUS_SUCCESS ? next_result() : r;
        conf_ok((pst == STATUS_SUCCESS && r.Status == STATUS_CANCELLED && r.RequestContext == (PVOID)10) ||
                    pst == STATUS_CONNECTION_INVALID || pst == STATUS_CANCELLED,
                "after the failed invalidate, a fast-register on that QP is cancelled (post %s, result %s)",
                NdkFpgaStatusName(pst), pst == STATUS_SUCCESS ? NdkFpgaStatusName(r.Status) : "none");
        NTSTATUS pw = probe_write(pr.qb, &src, &tgt, tok, (UINT64)(uintptr_t)va, 12);
        conf_ok(pw == STATUS_ACCESS_VIOLATION, "... and registered nothing: a write through the token is refused (%s)",
                NdkFpgaStatusName(pw));
        close_pair(&pr);
    }
    free(before);
    free(data);
    free(back);
    free(junk);
    close_obj(&fr->Header);
    close_obj(&fr_local->Header);
    close_obj(&normal->Header);
    close_obj(&uninit->Header);
    free_buf(&tgt);
    free_buf(&src);
    free_buf(&rb);
}

void test_refusals(void)
{
    struct buf tgt;
    if (!new_buf(&tgt, PAGE_SIZE, 0, (ULONG)-1))
        return;
    const SIZE_T mlen = REFUSAL_MR_BYTES;
    const UINT64 base = (UINT64)(uintptr_t)va_of(&tgt, 0), end = base + mlen;
    /* Another PD's MR, registered for remote write. */
    NDK_MR *other = new_mr(pd2, 0);
    if (other && reg_mr(other, tgt.mdl, mlen, NDK_MR_FLAG_ALLOW_REMOTE_WRITE) == STATUS_SUCCESS)
        refused_access("write through a token of another PD", 1, &tgt, rtoken(other), base, 64);
    else
        conf_ok(0, "register an MR in a second PD");
    /* Read-only token used for writing. */
    NDK_MR *ro = new_mr(pd, 0);
    if (ro && reg_mr(ro, tgt.mdl, mlen, NDK_MR_FLAG_ALLOW_REMOTE_READ) == STATUS_SUCCESS)
        refused_access("write through a read-only token", 1, &tgt, rtoken(ro), base, 64);
    else
        conf_ok(0, "register a read-only MR");
    if (ro) {
        refused_access("read of 1 byte one past the end", 0, &tgt, rtoken(ro), end, 1);
        dereg_mr(ro);
        refused_access("read through a deregistered token", 0, &tgt, rtoken(ro), base, 16);
    }
    /* One byte past the end of a writable region. */
    NDK_MR *rw = new_mr(pd, 0);
    if (rw && reg_mr(rw, tgt.mdl, mlen, NDK_MR_FLAG_ALLOW_REMOTE_WRITE) == STATUS_SUCCESS) {
        refused_access("write of 1 byte one past the end", 1, &tgt, rtoken(rw), end, 1);
        refused_access("write of 16 bytes crossing the end", 1, &tgt, rtoken(rw), end - 8, 16);
        refused_access("write through a bad key", 1, &tgt, rtoken(rw) ^ 0x55, base, 16);
        /* Remote write (0x5) does not include remote read. */
        refused_access("read through a write-only token", 0, &tgt, rtoken(rw), base, 16);
        dereg_mr(rw);
    } else {
        conf_ok(0, "register a writable MR");
    }
    if (other) {
        dereg_mr(other);
        close_obj(&other->Header);
    }
    if (ro)
        close_obj(&ro->Header);
    if (rw)
        close_obj(&rw->Header);
    free_buf(&tgt);
}
