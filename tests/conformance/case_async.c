/* SPDX-License-Identifier: Apache-2.0 */
/* Asynchronous contract: many in flight, DEFER, SILENT_SUCCESS, CQ notification,
 * close ordering, disconnection. */
#include "conformance.h"

void test_async(void)
{
    struct pair pr;
    if (!conf_ok(connect_pair(pd, &pr), "connect for the asynchronous tests"))
        return;
    NDK_QP *qp = pr.qa;
    struct buf tgt;
    new_buf(&tgt, PAGE_SIZE, 0, (ULONG)-1);
    NDK_LOGICAL_ADDRESS page = {.QuadPart = (LONGLONG)MmGetMdlPfnArray(tgt.mdl)[0] << PAGE_SHIFT};
    NDK_MR *fr = new_mr(pd, 1);
    if (!fr || init_fast(fr, 1, TRUE) != STATUS_SUCCESS) {
        conf_ok(0, "fast MR for the asynchronous tests");
        return;
    }
    PVOID va = (PVOID)(uintptr_t)0x10000;

    /* Many in flight, most deferred; completions in order with their contexts. */
    int n = slow ? 16 : 100, ok = 1;
    for (int i = 0; i < n && ok; i++) {
        /* DEFER batches until a request without it: the last one has none. */
        ULONG defer = (i % 10 != 9 && i != n - 1) ? NDK_OP_FLAG_DEFER : 0;
        if (i % 2 == 0)
            ok &= qp->Dispatch->NdkFastRegister(qp, (PVOID)(uintptr_t)(1000 + i), fr, 1, &page, 0, PAGE_SIZE, va,
                                                NDK_OP_FLAG_ALLOW_REMOTE_WRITE | defer) == STATUS_SUCCESS;
        else
            ok &= qp->Dispatch->NdkInvalidate(qp, (PVOID)(uintptr_t)(1000 + i), &fr->Header, defer) == STATUS_SUCCESS;
    }
    conf_ok(ok, "%d fast-register/invalidate requests posted, 9 of 10 deferred", n);
    for (int i = 0; i < n && ok; i++) {
        NDK_RESULT_EX r = next_result();
        ok &= r.Status == STATUS_SUCCESS && r.RequestContext == (PVOID)(uintptr_t)(1000 + i) &&
              r.Type == (i % 2 ? NdkOperationTypeInvalidate : NdkOperationTypeFastRegister);
        if (!ok)
            printf("# result %d: %s ctx %p type %d\n", i, NdkFpgaStatusName(r.Status), r.RequestContext, (int)r.Type);
    }
    conf_ok(ok, "all %d completed in order with their contexts and types", n);

    /* SILENT_SUCCESS: only the signalled one completes. */
    ok = qp->Dispatch->NdkFastRegister(qp, (PVOID)1, fr, 1, &page, 0, PAGE_SIZE, va,
                                       NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_SILENT_SUCCESS) == STATUS_SUCCESS;
    ok &= qp->Dispatch->NdkInvalidate(qp, (PVOID)2, &fr->Header, NDK_OP_FLAG_SILENT_SUCCESS) == STATUS_SUCCESS;
    ok &= qp->Dispatch->NdkFastRegister(qp, (PVOID)3, fr, 1, &page, 0, PAGE_SIZE, va,
                                        NDK_OP_FLAG_ALLOW_REMOTE_WRITE) == STATUS_SUCCESS;
    NDK_RESULT_EX r = next_result();
    ok &= r.Status == STATUS_SUCCESS && r.RequestContext == (PVOID)3;
    conf_ok(ok && cq_stays_empty(), "SILENT_SUCCESS: successful silent requests produce no completion");

    /* DEFER then an inline failure: the deferred request still reaches the board. */
    ok = qp->Dispatch->NdkInvalidate(qp, (PVOID)4, &fr->Header, NDK_OP_FLAG_DEFER) == STATUS_SUCCESS;
    ok &= qp->Dispatch->NdkFastRegister(qp, NULL, fr, 2, &page, 0, PAGE_SIZE, va, 0) == STATUS_INVALID_PARAMETER;
    r = next_result();
    conf_ok(ok && r.Status == STATUS_SUCCESS && r.RequestContext == (PVOID)4,
            "an inline failure pushes the deferred requests (%s)", NdkFpgaStatusName(r.Status));

    /* CQ notification after arming, on the callback thread. */
    NDK_CQ *ncq = NULL;
    NTSTATUS st = ad->Dispatch->NdkCreateCq(ad, 16, cq_notify, NULL, NULL, create_cb, NULL, &ncq);
    conf_ok(st == STATUS_SUCCESS && ncq, "NdkCreateCq with a notification callback");
    if (ncq) {
        struct waiter w;
        w_init(&w);
        NDK_QP *nq = NULL;
        st = ASYNC(&w, pd->Dispatch->NdkCreateQp(pd, ncq, ncq, NULL, 0, 4, 0, 1, 0, create_cb, &w, &nq));
        nq = (NDK_QP *)(void *)create_wait(&w, st, nq, &st);
        ncq->Dispatch->NdkArmCq(ncq, NDK_CQ_NOTIFY_ANY);
        sleep_ms(20);
        conf_ok(__atomic_load_n(&notified, __ATOMIC_SEQ_CST) == 0, "armed empty CQ: no notification yet");
        /* A connected pair completing on this CQ. */
        NDK_CQ *saved = cq;
        cq = ncq;
        struct pair np;
        if (conf_ok(connect_pair(pd, &np), "connect a pair on the notifying CQ")) {
            ncq->Dispatch->NdkArmCq(ncq, NDK_CQ_NOTIFY_ERRORS);
            st = np.qa->Dispatch->NdkFastRegister(np.qa, (PVOID)11, fr, 1, &page, 0, PAGE_SIZE, va,
                                                  NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
            r = next_result();
            sleep_ms(slow ? 200 : 20);
            conf_ok(st == STATUS_SUCCESS && r.Status == STATUS_SUCCESS &&
                        __atomic_load_n(&notified, __ATOMIC_SEQ_CST) == 0,
                    "armed for errors: a successful completion does not notify");
            ncq->Dispatch->NdkArmCq(ncq, NDK_CQ_NOTIFY_ANY);
            st = np.qa->Dispatch->NdkInvalidate(np.qa, (PVOID)12, &fr->Header, 0);
            for (int i = 0; i < conf_timeout_ms && !__atomic_load_n(&notified, __ATOMIC_SEQ_CST); i++)
                sleep_ms(1);
            r = next_result();
            conf_ok(st == STATUS_SUCCESS && __atomic_load_n(&notified, __ATOMIC_SEQ_CST) == 1 &&
                        r.Status == STATUS_SUCCESS && r.RequestContext == (PVOID)12,
                    "armed for any: the completion notifies once, on the callback thread");
            close_pair(&np);
        }
        cq = saved;
        /* Close ordering: the CQ closes after the QP using it. */
        struct waiter wcq, wqp;
        w_init(&wcq);
        w_init(&wqp);
        NTSTATUS s1 = ASYNC(&wcq, NdkCloseObject(&ncq->Header, close_cb, &wcq));
        conf_ok(s1 == STATUS_PENDING, "closing a CQ still used by a QP pends (%s)", NdkFpgaStatusName(s1));
        NTSTATUS s2 = nq ? ASYNC(&wqp, NdkCloseObject(&nq->Header, close_cb, &wqp)) : STATUS_INVALID_PARAMETER;
        conf_ok(s2 == STATUS_SUCCESS || s2 == STATUS_PENDING, "close the QP (%s)", NdkFpgaStatusName(s2));
        conf_ok(w_wait(&wqp, s2) == STATUS_SUCCESS && w_wait(&wcq, s1) == STATUS_SUCCESS,
                "the CQ's close completes once its QP closed");
    }

    /* Close ordering of a PD with a live MR. */
    NDK_PD *p3 = NULL;
    ad->Dispatch->NdkCreatePd(ad, create_cb, NULL, &p3);
    NDK_MR *m3 = p3 ? new_mr(p3, 1) : NULL;
    if (p3 && m3) {
        struct waiter wpd;
        w_init(&wpd);
        NTSTATUS s1 = ASYNC(&wpd, NdkCloseObject(&p3->Header, close_cb, &wpd));
        conf_ok(s1 == STATUS_PENDING, "closing a PD with an open MR pends");
        sleep_ms(10);
        conf_ok(!w_is_done(&wpd), "the PD's close waits for the MR");
        conf_ok(close_obj(&m3->Header) == STATUS_SUCCESS, "close the MR");
        conf_ok(w_wait(&wpd, s1) == STATUS_SUCCESS, "then the PD's close completes");
    } else {
        conf_ok(0, "PD and MR for the close-ordering test");
    }

    /* Disconnect: the peer hears of it, and the QP refuses work. */
    struct waiter wd;
    w_init(&wd);
    int before = disconnects;
    st = ASYNC(&wd, pr.ca->Dispatch->NdkDisconnect(pr.ca, req_cb, &wd));
    conf_ok(w_wait(&wd, st) == STATUS_SUCCESS, "NdkDisconnect");
    for (int i = 0; i < 1000 && disconnects == before; i++)
        sleep_ms(1);
    conf_ok(disconnects > before, "the peer's DisconnectEvent ran");
    expect(qp->Dispatch->NdkInvalidate(qp, NULL, &fr->Header, 0), STATUS_CONNECTION_INVALID,
           "work request after disconnect: CONNECTION_INVALID");
    close_pair(&pr);
    close_obj(&fr->Header);
    free_buf(&tgt);
}
