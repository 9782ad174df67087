/* SPDX-License-Identifier: Apache-2.0 */
/* Send, Receive and SendAndInvalidate: data placement over scatter/gather lists,
 * flags, flush of receives, receiver-side failures, invalidation by the peer. */
#include "conformance.h"

#define SR_DEPTH 16 /* receive queue depth of the QPs of these cases */
#define SR_SGE 2    /* SGEs per receive */
#define SR_SEND 0   /* offsets in the message buffer: what is sent */
#define SR_RECV 1024 /* where receives land (guard bytes around) */

static NDK_CQ *rcq; /* the receive CQ of the pairs these cases connect */

static NDK_RESULT_EX next_receive(void)
{
    return next_of(rcq);
}

/* A receive result: expect_result's checks and BytesTransferred. */
static int expect_receive(NTSTATUS st, NDK_OPERATION_TYPE type, void *ctx, ULONG bytes, const char *name)
{
    NDK_RESULT_EX r = next_receive();
    if (r.BytesTransferred != bytes && r.Status == st)
        return conf_ok(0, "%s: %u bytes transferred, expected %u", name, (unsigned)r.BytesTransferred,
                       (unsigned)bytes);
    return expect_result(r, st, type, ctx, name);
}

/* A pair whose QPs have receive queues (depth 16, 2 SGEs) completing on rcq. */
static int sr_connect(NDK_PD *p, struct pair *pr)
{
    pair_rcq = rcq;
    pair_rq = SR_DEPTH;
    int ok = connect_pair(p, pr);
    pair_rcq = NULL;
    pair_rq = 0;
    return ok;
}

static void sr_close(struct pair *pr)
{
    close_pair(pr);
    NDK_RESULT_EX r;
    while (rcq->Dispatch->NdkGetCqResultsEx(rcq, &r, 1))
        ;
}

/* Post a receive into b at off, in n SGEs of the lengths given (8 bytes apart). */
static NTSTATUS post_receive(NDK_QP *q, void *ctx, const struct buf *b, size_t off, const ULONG *lens, ULONG n)
{
    NDK_SGE sge[SR_SGE];
    for (ULONG i = 0; i < n && i < SR_SGE; i++) {
        sge[i] = consumer_sge(b->mdl, b->mr, off, lens[i]);
        off += lens[i] + 8;
    }
    return q->Dispatch->NdkReceive(q, ctx, sge, n);
}

/* Send len bytes of b from SR_SEND (in two gather SGEs when split). */
static NTSTATUS post_send(NDK_QP *q, void *ctx, const struct buf *b, ULONG len, int split, ULONG flags, int inv,
                          UINT32 token)
{
    ULONG first = split ? len / 2 : len;
    NDK_SGE sge[2] = {consumer_sge(b->mdl, b->mr, SR_SEND, first),
                      consumer_sge(b->mdl, b->mr, SR_SEND + first, len - first)};
    ULONG n = split ? 2 : 1;
    return inv ? q->Dispatch->NdkSendAndInvalidate(q, ctx, sge, n, flags, token)
               : q->Dispatch->NdkSend(q, ctx, sge, n, flags);
}

/* Fill the receive area with a known pattern and the send area with seed's bytes. */
static void sr_prime(const struct buf *b, uint8_t *area, size_t alen, uint8_t *msg, size_t mlen, uint32_t seed)
{
    fill(area, alen, seed);
    fill(msg, mlen, seed + 1);
    NdkFpgaWriteBuffer(ad, b->mdl, SR_RECV, area, alen);
    NdkFpgaWriteBuffer(ad, b->mdl, SR_SEND, msg, mlen);
}

static void test_receive_limits(void)
{
    conf_ok(info.MaxReceiveQueueDepth >= SR_DEPTH && info.MaxReceiveRequestSge >= SR_SGE && info.MaxInlineDataSize == 0,
            "adapter info: MaxReceiveQueueDepth %u >= 16, MaxReceiveRequestSge %u >= 2, MaxInlineDataSize %u = 0",
            (unsigned)info.MaxReceiveQueueDepth, (unsigned)info.MaxReceiveRequestSge, (unsigned)info.MaxInlineDataSize);
    NDK_QP *qp = NULL;
    NTSTATUS st = pd->Dispatch->NdkCreateQp(pd, rcq, cq, NULL, SR_DEPTH, 4, SR_SGE, 1, 0, NULL, NULL, &qp);
    if (expect(st, STATUS_SUCCESS, "NdkCreateQp with receive depth 16, 2 receive SGEs") && qp)
        close_obj(&qp->Header);
}

/* Two receives (1 and 2 SGEs), two Sends (1 and 2 gather SGEs): in order, data placed,
 * nothing written outside the SGEs. */
static void sr_data(struct pair *pr, const struct buf *b)
{
    uint8_t area[160], msg[96], got[160];
    sr_prime(b, area, sizeof(area), msg, sizeof(msg), 700);
    const ULONG one[1] = {48}, two[2] = {24, 40}; /* receive 1 at +0, receive 2 at +64 and +96 */
    int ok = post_receive(pr->qb, (PVOID)0x601, b, SR_RECV, one, 1) == STATUS_SUCCESS &&
             post_receive(pr->qb, (PVOID)0x602, b, SR_RECV + 64, two, 2) == STATUS_SUCCESS;
    ok &= post_send(pr->qa, (PVOID)0x611, b, 40, 0, 0, 0, 0) == STATUS_SUCCESS;
    ok &= post_send(pr->qa, (PVOID)0x612, b, 56, info.MaxInitiatorRequestSge >= 2, 0, 0, 0) == STATUS_SUCCESS;
    conf_ok(ok, "NdkReceive (1 and 2 SGEs) and NdkSend (1 and %u SGEs) are posted",
            info.MaxInitiatorRequestSge >= 2 ? 2u : 1u);
    expect_result(next_result(), STATUS_SUCCESS, NdkOperationTypeSend, (PVOID)0x611, "Send of 40 bytes: SUCCESS");
    expect_result(next_result(), STATUS_SUCCESS, NdkOperationTypeSend, (PVOID)0x612, "Send of 56 bytes: SUCCESS");
    expect_receive(STATUS_SUCCESS, NdkOperationTypeReceive, (PVOID)0x601, 40,
                   "first receive (1 SGE) completes first on the receive CQ: 40 bytes, its contexts");
    expect_receive(STATUS_SUCCESS, NdkOperationTypeReceive, (PVOID)0x602, 56,
                   "second receive (2 SGEs) completes next: 56 bytes, its contexts");
    NdkFpgaReadBuffer(ad, b->mdl, SR_RECV, got, sizeof(got));
    /* Expected: 40 bytes at +0; 24 at +64 and 32 at +96; the rest unchanged. */
    memcpy(area, msg, 40);
    memcpy(area + 64, msg, 24);
    memcpy(area + 96, msg + 24, 32);
    conf_ok(!memcmp(got, area, sizeof(area)), "the Sends' bytes are in the receives' SGEs, in order; every other "
                                              "byte (guards, the unused tail of each SGE) unchanged");
}

/* SEND_AND_SOLICIT_EVENT: a receive CQ armed for SOLICITED notifies for it, not for a
 * plain Send. SILENT_SUCCESS: the receive completes, the Send gives no result. */
static void sr_flags(struct pair *pr, const struct buf *b)
{
    const ULONG len[1] = {64};
    int before = __atomic_load_n(&notified, __ATOMIC_SEQ_CST);
    rcq->Dispatch->NdkArmCq(rcq, NDK_CQ_NOTIFY_SOLICITED);
    post_receive(pr->qb, (PVOID)0x621, b, SR_RECV, len, 1);
    post_send(pr->qa, (PVOID)0x622, b, 16, 0, 0, 0, 0);
    expect_result(next_result(), STATUS_SUCCESS, NdkOperationTypeSend, (PVOID)0x622, "plain Send: SUCCESS");
    expect_receive(STATUS_SUCCESS, NdkOperationTypeReceive, (PVOID)0x621, 16, "its receive: SUCCESS");
    sleep_ms(slow ? 300 : 30);
    conf_ok(__atomic_load_n(&notified, __ATOMIC_SEQ_CST) == before,
            "a receive CQ armed SOLICITED is not notified for a Send without SEND_AND_SOLICIT_EVENT");
    post_receive(pr->qb, (PVOID)0x623, b, SR_RECV, len, 1);
    post_send(pr->qa, (PVOID)0x624, b, 16, 0, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT, 0, 0);
    expect_result(next_result(), STATUS_SUCCESS, NdkOperationTypeSend, (PVOID)0x624,
                  "Send with SEND_AND_SOLICIT_EVENT: SUCCESS");
    uint64_t end = now_ms() + (uint64_t)conf_timeout_ms;
    while (__atomic_load_n(&notified, __ATOMIC_SEQ_CST) == before && now_ms() < end)
        sleep_ms(1);
    conf_ok(__atomic_load_n(&notified, __ATOMIC_SEQ_CST) == before + 1,
            "the receive CQ armed SOLICITED is notified once for the Send with SEND_AND_SOLICIT_EVENT");
    expect_receive(STATUS_SUCCESS, NdkOperationTypeReceive, (PVOID)0x623, 16, "its receive: SUCCESS");
    post_receive(pr->qb, (PVOID)0x625, b, SR_RECV, len, 1);
    expect(post_send(pr->qa, (PVOID)0x626, b, 16, 0, NDK_OP_FLAG_SILENT_SUCCESS, 0, 0), STATUS_SUCCESS,
           "NdkSend with SILENT_SUCCESS is posted");
    expect_receive(STATUS_SUCCESS, NdkOperationTypeReceive, (PVOID)0x625, 16, "its receive completes: SUCCESS");
    conf_ok(cq_stays_empty(), "the silent Send gives no result on the initiator CQ");
    expect(post_send(pr->qa, (PVOID)0x627, b, 16, 0, NDK_OP_FLAG_INLINE, 0, 0), STATUS_INVALID_PARAMETER,
           "NdkSend with INLINE (MaxInlineDataSize 0): INVALID_PARAMETER, inline");
    conf_ok(cq_stays_empty(), "the refused Send posted nothing");
}

/* NdkFlush completes the pending receives CANCELLED, in posting order. */
static void sr_flush(struct pair *pr, const struct buf *b)
{
    const ULONG len[1] = {16};
    int ok = 1;
    for (int i = 0; i < 3; i++)
        ok &= post_receive(pr->qb, (PVOID)(uintptr_t)(0x631 + i), b, SR_RECV, len, 1) == STATUS_SUCCESS;
    pr->qb->Dispatch->NdkFlush(pr->qb);
    conf_ok(ok, "3 receives posted, then NdkFlush");
    for (int i = 0; i < 3; i++)
        expect_receive(STATUS_CANCELLED, NdkOperationTypeReceive, (PVOID)(uintptr_t)(0x631 + i), 0,
                       "NdkFlush: a pending receive completes STATUS_CANCELLED, in posting order");
    conf_ok(cq_stays_empty(), "the flush gives nothing on the initiator CQ");
}

/* A Send with no receive posted: IO_TIMEOUT (receiver not ready), the sender breaks.
 * A Send larger than the receive: the receive BUFFER_TOO_SMALL with nothing written,
 * the Send CONNECTION_ABORTED. */
static void sr_failures(const struct buf *b)
{
    struct pair pr;
    if (!conf_ok(sr_connect(pd, &pr), "connect a pair with receive queues (no receive posted)")) {
        sr_close(&pr);
        return;
    }
    post_send(pr.qa, (PVOID)0x641, b, 16, 0, 0, 0, 0);
    expect_result(next_result(), STATUS_IO_TIMEOUT, NdkOperationTypeSend, (PVOID)0x641,
                  "Send with no receive posted at the peer: STATUS_IO_TIMEOUT");
    post_send(pr.qa, (PVOID)0x642, b, 16, 0, 0, 0, 0);
    expect_result(next_result(), STATUS_CANCELLED, NdkOperationTypeSend, (PVOID)0x642,
                  "the sender's QP is broken: its next Send completes STATUS_CANCELLED");
    sr_close(&pr);
    if (!conf_ok(sr_connect(pd, &pr), "connect a pair with receive queues (a Send too large)")) {
        sr_close(&pr);
        return;
    }
    uint8_t area[96], msg[64], got[96];
    sr_prime(b, area, sizeof(area), msg, sizeof(msg), 710);
    const ULONG two[2] = {16, 16};
    post_receive(pr.qb, (PVOID)0x643, b, SR_RECV + 8, two, 2);
    post_send(pr.qa, (PVOID)0x644, b, 40, 0, 0, 0, 0);
    expect_receive(STATUS_BUFFER_TOO_SMALL, NdkOperationTypeReceive, (PVOID)0x643, 0,
                   "Send of 40 bytes into a receive of 2 x 16: the receive completes STATUS_BUFFER_TOO_SMALL");
    expect_result(next_result(), STATUS_CONNECTION_ABORTED, NdkOperationTypeSend, (PVOID)0x644,
                  "... and the Send STATUS_CONNECTION_ABORTED");
    NdkFpgaReadBuffer(ad, b->mdl, SR_RECV, got, sizeof(got));
    conf_ok(!memcmp(got, area, sizeof(area)), "nothing written into the receive's SGEs nor the guard bytes around them");
    sr_close(&pr);
}

/* A fast-register MR of pd over tgt's page at va, registered on q (remote write). */
static NDK_MR *sr_fast_mr(NDK_PD *p, NDK_QP *q, const struct buf *tgt, UINT64 va)
{
    NDK_MR *mr = new_mr(p, 1);
    NDK_LOGICAL_ADDRESS page = {.QuadPart = (LONGLONG)MmGetMdlPfnArray(tgt->mdl)[0] << PAGE_SHIFT};
    if (!mr || init_fast(mr, 1, TRUE) != STATUS_SUCCESS ||
        q->Dispatch->NdkFastRegister(q, (PVOID)0x650, mr, 1, &page, 0, PAGE_SIZE, (PVOID)(uintptr_t)va,
                                     NDK_OP_FLAG_ALLOW_REMOTE_WRITE) != STATUS_SUCCESS ||
        next_result().Status != STATUS_SUCCESS) {
        conf_ok(0, "a fast-registered MR for the SendAndInvalidate cases");
        return NULL;
    }
    return mr;
}

/* The receiver's window, at va, over an NdkRegisterMr MR (*mr) of tgt bound on q for
 * remote write; NULL (and a failed case) when any step fails. */
static NDK_MW *sr_window(NDK_PD *p, NDK_QP *q, const struct buf *tgt, UINT64 va, NDK_MR **mr)
{
    NDK_MW *mw = new_mw(p);
    *mr = new_mr(p, 0);
    if (!mw || !*mr || reg_mr(*mr, tgt->mdl, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE) != STATUS_SUCCESS ||
        q->Dispatch->NdkBind(q, (PVOID)0x653, *mr, mw, (PVOID)(uintptr_t)va, 128, NDK_OP_FLAG_ALLOW_REMOTE_WRITE) !=
            STATUS_SUCCESS ||
        next_result().Status != STATUS_SUCCESS) {
        conf_ok(0, "a bound window for the SendAndInvalidate case");
        if (mw)
            close_obj(&mw->Header);
        return NULL;
    }
    return mw;
}

/* SendAndInvalidate of a valid token (a fast-register MR's, or with window set a bound
 * window's): the receive is ReceiveAndInvalidate with the token, then the token refuses
 * RDMA Write. */
static void sr_invalidate(const struct buf *b, struct buf *tgt, int window)
{
    struct pair pr;
    if (!conf_ok(sr_connect(pd, &pr), "connect a pair with receive queues (SendAndInvalidate)")) {
        sr_close(&pr);
        return;
    }
    const char *what = window ? "a bound window" : "a fast-register MR";
    NDK_MR *fr = NULL;
    NDK_MW *mw = NULL;
    const UINT64 va = window ? (UINT64)(uintptr_t)va_of(tgt, 0) : 0x40000;
    if (window)
        mw = sr_window(pd, pr.qa, tgt, va, &fr);
    else
        fr = sr_fast_mr(pd, pr.qa, tgt, va);
    const ULONG len[1] = {64};
    if ((window ? mw != NULL : fr != NULL) && post_receive(pr.qa, (PVOID)0x651, b, SR_RECV, len, 1) == STATUS_SUCCESS) {
        UINT32 tok = window ? wtoken(mw) : rtoken(fr);
        expect(post_send(pr.qb, (PVOID)0x652, b, 24, 0, 0, 1, tok), STATUS_SUCCESS, "NdkSendAndInvalidate is posted");
        expect_result(next_result(), STATUS_SUCCESS, NdkOperationTypeSend, (PVOID)0x652,
                      window ? "SendAndInvalidate naming a bound window: the Send completes SUCCESS"
                             : "SendAndInvalidate of a valid fast-register token: the Send completes SUCCESS");
        NDK_RESULT_EX r = next_receive();
        conf_ok(r.Status == STATUS_SUCCESS && r.Type == NdkOperationTypeReceiveAndInvalidate &&
                    r.TypeSpecificCompletionOutput == tok && r.BytesTransferred == 24 &&
                    r.RequestContext == (PVOID)0x651 && r.ProviderErrorCode == 0,
                "the receive completes SUCCESS, Type ReceiveAndInvalidate, TypeSpecificCompletionOutput = the token "
                "0x%08x of %s, 24 bytes (%s, type 0x%x, 0x%08llx, %u)",
                (unsigned)tok, what, NdkFpgaStatusName(r.Status), (unsigned)r.Type,
                (unsigned long long)r.TypeSpecificCompletionOutput, (unsigned)r.BytesTransferred);
        struct buf src = *b;
        NTSTATUS p = probe_write(pr.qb, &src, tgt, tok, va, 720);
        conf_ok(p == STATUS_ACCESS_VIOLATION, "an RDMA Write through the invalidated token of %s is refused, target "
                                              "unchanged (%s)", what, NdkFpgaStatusName(p));
    }
    sr_close(&pr);
    if (mw)
        close_obj(&mw->Header);
    if (fr)
        close_obj(&fr->Header);
}

/* SendAndInvalidate naming tok, which is no valid fast-register MR of the receiver's
 * PD: both sides complete CONNECTION_ABORTED, nothing is invalidated (the MR of owner
 * whose token is mr_tok still grants a write at va from a fresh connection of its PD,
 * src2 the local buffer there). */
static void sr_bad_token(const char *what, UINT32 tok, UINT32 mr_tok, NDK_PD *owner, struct buf *src2,
                         struct buf *tgt, UINT64 va, const struct buf *b)
{
    struct pair pr;
    if (!conf_ok(sr_connect(pd, &pr), "connect a pair with receive queues (SendAndInvalidate of %s)", what)) {
        sr_close(&pr);
        return;
    }
    const ULONG len[1] = {64};
    uint8_t area[64], msg[32], got[64];
    sr_prime(b, area, sizeof(area), msg, sizeof(msg), 730);
    post_receive(pr.qa, (PVOID)0x661, b, SR_RECV, len, 1);
    post_send(pr.qb, (PVOID)0x662, b, 24, 0, 0, 1, tok);
    NDK_RESULT_EX s = next_result(), r = next_receive();
    NdkFpgaReadBuffer(ad, b->mdl, SR_RECV, got, sizeof(got));
    conf_ok(s.Status == STATUS_CONNECTION_ABORTED && s.RequestContext == (PVOID)0x662 &&
                r.Status == STATUS_CONNECTION_ABORTED && r.RequestContext == (PVOID)0x661 && r.BytesTransferred == 0 &&
                r.Type == NdkOperationTypeReceive && !memcmp(got, area, sizeof(area)),
            "SendAndInvalidate of %s: Send and receive complete STATUS_CONNECTION_ABORTED, no byte written (%s, %s)",
            what, NdkFpgaStatusName(s.Status), NdkFpgaStatusName(r.Status));
    sr_close(&pr);
    if (!connect_pair(owner, &pr)) {
        conf_ok(0, "a fresh connection of the MR's PD");
        close_pair(&pr);
        return;
    }
    NTSTATUS p = probe_write(pr.qa, src2, tgt, mr_tok, va, 731);
    conf_ok(p == STATUS_SUCCESS, "... nothing was invalidated: the MR still grants a write from a fresh connection (%s)",
            NdkFpgaStatusName(p));
    close_pair(&pr);
}

/* The SendAndInvalidate refusals: a wrong key, a valid MR of another PD, an MR made
 * by NdkRegisterMr. */
static void sr_bad_tokens(struct buf *b, struct buf *tgt)
{
    struct pair pr;
    struct buf src2;
    memset(&src2, 0, sizeof(src2));
    NDK_MR *fr = NULL, *fr2 = NULL, *normal = new_mr(pd, 0);
    if (connect_pair(pd, &pr))
        fr = sr_fast_mr(pd, pr.qa, tgt, 0x50000);
    close_pair(&pr);
    if (connect_pair(pd2, &pr))
        fr2 = sr_fast_mr(pd2, pr.qa, tgt, 0x60000);
    close_pair(&pr);
    int ok = fr && fr2 && normal && new_buf(&src2, 64, 0, (ULONG)-1);
    src2.mr = ok ? new_mr(pd2, 0) : NULL;
    if (conf_ok(ok && src2.mr && reg_mr(src2.mr, src2.mdl, 64, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) == STATUS_SUCCESS &&
                    reg_mr(normal, tgt->mdl, 256, NDK_MR_FLAG_ALLOW_REMOTE_WRITE) == STATUS_SUCCESS,
                "MRs and buffers for the SendAndInvalidate refusals")) {
        sr_bad_token("a token with a wrong key", rtoken(fr) ^ 0x55, rtoken(fr), pd, b, tgt, 0x50000, b);
        sr_bad_token("a valid token of another PD", rtoken(fr2), rtoken(fr2), pd2, &src2, tgt, 0x60000, b);
        sr_bad_token("an NdkRegisterMr token", rtoken(normal), rtoken(normal), pd, b, tgt,
                     (UINT64)(uintptr_t)va_of(tgt, 0), b);
    }
    NDK_MR *mrs[3] = {fr, fr2, normal};
    for (int i = 0; i < 3; i++)
        if (mrs[i]) {
            dereg_mr(mrs[i]);
            close_obj(&mrs[i]->Header);
        }
    free_buf(&src2);
}

void test_send_receive(void)
{
    NTSTATUS st = ad->Dispatch->NdkCreateCq(ad, 64, cq_notify, NULL, NULL, NULL, NULL, &rcq);
    if (!expect(st, STATUS_SUCCESS, "NdkCreateCq (the receive CQ)"))
        return;
    test_receive_limits();
    struct buf b, tgt;
    if (!new_buf(&b, PAGE_SIZE, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) || !new_buf(&tgt, PAGE_SIZE, 0, (ULONG)-1)) {
        conf_ok(0, "buffers for the Send and Receive cases");
        return;
    }
    struct pair pr;
    if (conf_ok(sr_connect(pd, &pr), "connect two QPs with receive queues (depth 16, 2 SGEs) on the receive CQ")) {
        sr_data(&pr, &b);
        sr_flags(&pr, &b);
        sr_flush(&pr, &b);
    }
    sr_close(&pr);
    sr_failures(&b);
    sr_invalidate(&b, &tgt, 0);
    sr_invalidate(&b, &tgt, 1);
    sr_bad_tokens(&b, &tgt);
    free_buf(&b);
    free_buf(&tgt);
    close_obj(&rcq->Header);
    rcq = NULL;
}
