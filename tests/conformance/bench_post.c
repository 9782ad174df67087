/* SPDX-License-Identifier: Apache-2.0 */
/* Host cost of posting: fast-register/invalidate pairs on a loopback QP so that
 * callgrind can count the instructions of each NdkFastRegister call
 * (make bench-ndk-post). Batches of 5 pairs: all with DEFER | SILENT_SUCCESS (no
 * syscall: they stay in the open frame) except the last invalidate, signalled
 * without DEFER (it sends the frame). */
#include "contract.h"

#define BATCHES 100
#define PER_BATCH 5

static NDK_CONNECTOR *incoming;
static VOID on_connect(PVOID ctx, NDK_CONNECTOR *c)
{
    (void)ctx;
    __atomic_store_n(&incoming, c, __ATOMIC_SEQ_CST);
}

int main(void)
{
    const char *dev = getenv("NDKFPGA_DEVICE");
    NDK_ADAPTER *ad;
    if (NdkFpgaOpenAdapter(dev && *dev ? dev : "model", &ad) != STATUS_SUCCESS)
        return 1;
    NDK_CQ *cq;
    NDK_PD *pd;
    NDK_QP *qa, *qb;
    NDK_MR *mr;
    NDK_LISTENER *l;
    NDK_CONNECTOR *ca;
    ad->Dispatch->NdkCreateCq(ad, 4096, NULL, NULL, NULL, NULL, NULL, &cq);
    ad->Dispatch->NdkCreatePd(ad, NULL, NULL, &pd);
    if (pd->Dispatch->NdkCreateQp(pd, cq, cq, NULL, 0, 1024, 0, 1, 0, NULL, NULL, &qa) != STATUS_SUCCESS ||
        pd->Dispatch->NdkCreateQp(pd, cq, cq, NULL, 0, 1024, 0, 1, 0, NULL, NULL, &qb) != STATUS_SUCCESS ||
        pd->Dispatch->NdkCreateMr(pd, TRUE, NULL, NULL, &mr) != STATUS_SUCCESS ||
        mr->Dispatch->NdkInitializeFastRegisterMr(mr, 1, TRUE, NULL, NULL) != STATUS_SUCCESS)
        return 1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(1);
    ad->Dispatch->NdkCreateListener(ad, on_connect, NULL, NULL, NULL, &l);
    l->Dispatch->NdkListen(l, (PSOCKADDR)&a, sizeof(a), NULL, NULL);
    ad->Dispatch->NdkCreateConnector(ad, NULL, NULL, &ca);
    struct waiter w1, w2, w3;
    w_init(&w1);
    w_init(&w2);
    w_init(&w3);
    NTSTATUS st = ASYNC(&w1, ca->Dispatch->NdkConnect(ca, qa, (PSOCKADDR)&a, sizeof(a), (PSOCKADDR)&a,
                                                      sizeof(a), 0, 0, NULL, 0, req_cb, &w1));
    while (!__atomic_load_n(&incoming, __ATOMIC_SEQ_CST))
        sleep_ms(1);
    NTSTATUS sa = ASYNC(&w2, incoming->Dispatch->NdkAccept(incoming, qb, 0, 0, NULL, 0, NULL, NULL, req_cb, &w2));
    w_wait(&w1, st);
    st = ASYNC(&w3, ca->Dispatch->NdkCompleteConnect(ca, NULL, NULL, req_cb, &w3));
    if (w_wait(&w3, st) != STATUS_SUCCESS || w_wait(&w2, sa) != STATUS_SUCCESS)
        return 1;
    MDL *buf;
    NdkFpgaAllocateBuffer(ad, PAGE_SIZE, &buf);
    NDK_LOGICAL_ADDRESS page = {.QuadPart = (LONGLONG)MmGetMdlPfnArray(buf)[0] << PAGE_SHIFT};
    PVOID va = (PVOID)(uintptr_t)0x10000;
    int bad = 0;
    for (int b = 0; b < BATCHES; b++) {
        for (int i = 0; i < PER_BATCH; i++) {
            const ULONG quiet = NDK_OP_FLAG_DEFER | NDK_OP_FLAG_SILENT_SUCCESS;
            NTSTATUS ps = qa->Dispatch->NdkFastRegister(qa, NULL, mr, 1, &page, 0, PAGE_SIZE, va,
                                                        NDK_OP_FLAG_ALLOW_REMOTE_WRITE | quiet);
            if (ps == STATUS_SUCCESS)
                ps = qa->Dispatch->NdkInvalidate(qa, NULL, &mr->Header, i < PER_BATCH - 1 ? quiet : 0);
            if (ps != STATUS_SUCCESS && !bad++)
                printf("# batch %d post %d: %s\n", b, i, NdkFpgaStatusName(ps));
        }
        NDK_RESULT_EX r;
        if ((!cq_wait(cq, &r, 20000) || r.Status != STATUS_SUCCESS) && !bad++)
            printf("# batch %d: result %s\n", b, NdkFpgaStatusName(r.Status));
    }
    printf("%d fast-registers posted (with as many invalidates; deferred and silent but one in %d): %s\n",
           BATCHES * PER_BATCH, 2 * PER_BATCH, bad ? "FAILED" : "ok");
    NdkFpgaCloseAdapter(ad);
    return bad;
}
