/* SPDX-License-Identifier: Apache-2.0 */
/* demo: a small NDKPI consumer of the ndkfpga adapter.
 *
 * Opens the adapter (default: the Verilator board model, "sim"), connects two queue
 * pairs in loopback, fast-registers a buffer whose pages are scattered in adapter
 * memory (with a nonzero first-byte offset), writes into it with RDMA Write through
 * its remote token, reads it back with RDMA Read, invalidates the token and shows
 * that the same write is then refused with STATUS_ACCESS_VIOLATION.
 *
 * Every step prints its status; the program exits non-zero if any step deviates.
 * Usage: demo [DEVICE]   (or $NDKFPGA_DEVICE; see ndkfpga.h for device names) */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ndkfpga.h"
#include "ndkpi.h"

static int deviations;

/* Print a step and whether it gave the status we expect. */
static int step(const char *what, NTSTATUS got, NTSTATUS want)
{
    int ok = got == want;
    printf("%-58s %-28s %s\n", what, NdkFpgaStatusName(got), ok ? "ok" : "UNEXPECTED");
    if (!ok) {
        printf("    expected %s\n", NdkFpgaStatusName(want));
        deviations++;
    }
    return ok;
}

/* ---- waiting for asynchronous completions (the NDK callback pattern) ---- */

struct completion {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    NTSTATUS status;
    NDK_OBJECT_HEADER *object;
};

static void completion_init(struct completion *c)
{
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    c->done = 0;
    c->object = NULL;
}

static void completion_signal(struct completion *c, NTSTATUS st, NDK_OBJECT_HEADER *obj)
{
    pthread_mutex_lock(&c->lock);
    c->status = st;
    c->object = obj;
    c->done = 1;
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

static VOID on_request_done(PVOID ctx, NTSTATUS st)
{
    completion_signal(ctx, st, NULL);
}

static VOID on_create_done(PVOID ctx, NTSTATUS st, NDK_OBJECT_HEADER *obj)
{
    completion_signal(ctx, st, obj);
}

/* A call's final status: its own, or (STATUS_PENDING) the one its callback got. */
static NTSTATUS finish(struct completion *c, NTSTATUS st)
{
    if (st != STATUS_PENDING)
        return st;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 120;
    pthread_mutex_lock(&c->lock);
    int rc = 0;
    while (!c->done && rc == 0)
        rc = pthread_cond_timedwait(&c->cond, &c->lock, &until);
    st = c->done ? c->status : STATUS_IO_TIMEOUT;
    pthread_mutex_unlock(&c->lock);
    return st;
}

static VOID on_close_done(PVOID ctx)
{
    completion_signal(ctx, STATUS_SUCCESS, NULL);
}

/* Close an object; a close that pends (children or callbacks still to run)
 * finishes through its callback. */
static void close_object(const char *what, NDK_OBJECT_HEADER *obj)
{
    struct completion c;
    completion_init(&c);
    NTSTATUS st = NdkCloseObject(obj, on_close_done, &c);
    step(what, finish(&c, st), STATUS_SUCCESS);
}

/* The next completion on the CQ (polled). */
static NDK_RESULT_EX next_result(NDK_CQ *cq)
{
    NDK_RESULT_EX r;
    memset(&r, 0, sizeof(r));
    for (int i = 0; i < 120000; i++) {
        if (cq->Dispatch->NdkGetCqResultsEx(cq, &r, 1) == 1)
            return r;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    r.Status = STATUS_IO_TIMEOUT;
    return r;
}

/* ---- connecting two QPs of the same adapter ---- */

static pthread_mutex_t incoming_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t incoming_cond = PTHREAD_COND_INITIALIZER;
static NDK_CONNECTOR *incoming;

static VOID on_connect_request(PVOID ctx, NDK_CONNECTOR *connector)
{
    (void)ctx;
    pthread_mutex_lock(&incoming_lock);
    incoming = connector;
    pthread_cond_signal(&incoming_cond);
    pthread_mutex_unlock(&incoming_lock);
}

static VOID on_disconnect(PVOID ctx)
{
    (void)ctx;
}

static NDK_QP *create_qp(NDK_PD *pd, NDK_CQ *cq, ULONG sge)
{
    struct completion c;
    completion_init(&c);
    NDK_QP *qp = NULL;
    NTSTATUS st = pd->Dispatch->NdkCreateQp(pd, cq, cq, NULL, 0, 16, 0, sge, 0, on_create_done, &c, &qp);
    st = finish(&c, st);
    step("NdkCreateQp", st, STATUS_SUCCESS);
    return st == STATUS_SUCCESS ? (qp ? qp : (NDK_QP *)(void *)c.object) : NULL;
}

static NDK_MR *create_mr(NDK_PD *pd, BOOLEAN fast)
{
    struct completion c;
    completion_init(&c);
    NDK_MR *mr = NULL;
    NTSTATUS st = pd->Dispatch->NdkCreateMr(pd, fast, on_create_done, &c, &mr);
    st = finish(&c, st);
    step(fast ? "NdkCreateMr (fast register)" : "NdkCreateMr", st, STATUS_SUCCESS);
    return st == STATUS_SUCCESS ? (mr ? mr : (NDK_MR *)(void *)c.object) : NULL;
}

int main(int argc, char **argv)
{
    const char *device = argc > 1 ? argv[1] : getenv("NDKFPGA_DEVICE");
    if (!device || !*device)
        device = "sim";
    /* Whole lines, in order with anything the library reports on stderr, also when
     * the output goes to a pipe or a file. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ndkfpga demo on \"%s\"\n\n", device);

    NDK_ADAPTER *adapter = NULL;
    if (!step("NdkFpgaOpenAdapter", NdkFpgaOpenAdapter(device, &adapter), STATUS_SUCCESS))
        return 1;

    NDK_ADAPTER_INFO info;
    ULONG size = sizeof(info);
    step("NdkQueryAdapterInfo", adapter->Dispatch->NdkQueryAdapterInfo(adapter, &info, &size), STATUS_SUCCESS);
    printf("    FRMRPageCount %u, max SGE %u, flags 0x%x\n", (unsigned)info.FRMRPageCount,
           (unsigned)info.MaxInitiatorRequestSge, (unsigned)info.AdapterFlags);

    NDK_CQ *cq = NULL;
    NDK_PD *pd = NULL;
    step("NdkCreateCq (depth 64)", adapter->Dispatch->NdkCreateCq(adapter, 64, NULL, NULL, NULL, on_create_done, NULL, &cq),
         STATUS_SUCCESS);
    step("NdkCreatePd", adapter->Dispatch->NdkCreatePd(adapter, on_create_done, NULL, &pd), STATUS_SUCCESS);
    if (!cq || !pd)
        goto out;
    NDK_QP *initiator = create_qp(pd, cq, info.MaxInitiatorRequestSge);
    NDK_QP *target = create_qp(pd, cq, info.MaxInitiatorRequestSge);
    if (!initiator || !target)
        goto out;

    /* Loopback connection: a listener, a connector, accept, complete. */
    NDK_LISTENER *listener = NULL;
    NDK_CONNECTOR *active = NULL;
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons(4791);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    step("NdkCreateListener",
         adapter->Dispatch->NdkCreateListener(adapter, on_connect_request, NULL, on_create_done, NULL, &listener),
         STATUS_SUCCESS);
    step("NdkListen 127.0.0.1:4791",
         listener->Dispatch->NdkListen(listener, (PSOCKADDR)&addr, sizeof(addr), on_request_done, NULL),
         STATUS_SUCCESS);
    step("NdkCreateConnector", adapter->Dispatch->NdkCreateConnector(adapter, on_create_done, NULL, &active),
         STATUS_SUCCESS);
    struct completion connected, accepted, completed;
    completion_init(&connected);
    completion_init(&accepted);
    completion_init(&completed);
    NTSTATUS st = active->Dispatch->NdkConnect(active, initiator, (PSOCKADDR)&addr, sizeof(addr),
                                               (PSOCKADDR)&addr, sizeof(addr), 1, 1, "hello", 6,
                                               on_request_done, &connected);
    step("NdkConnect (pending until accepted)", st, STATUS_PENDING);
    pthread_mutex_lock(&incoming_lock);
    while (!incoming)
        pthread_cond_wait(&incoming_cond, &incoming_lock);
    NDK_CONNECTOR *passive = incoming;
    pthread_mutex_unlock(&incoming_lock);
    st = passive->Dispatch->NdkAccept(passive, target, 1, 1, NULL, 0, on_disconnect, NULL, on_request_done, &accepted);
    step("NdkAccept", st, STATUS_PENDING);
    step("  connect completion", finish(&connected, STATUS_PENDING), STATUS_SUCCESS);
    st = active->Dispatch->NdkCompleteConnect(active, on_disconnect, NULL, on_request_done, &completed);
    step("NdkCompleteConnect", finish(&completed, st), STATUS_SUCCESS);
    step("  accept completion", finish(&accepted, STATUS_PENDING), STATUS_SUCCESS);

    /* Buffers in adapter memory: the target's pages scattered, a source and a sink. */
    const ULONG fbo = 0x123;
    const SIZE_T length = 2 * PAGE_SIZE + 500;
    MDL *target_buf = NULL, *source_buf = NULL, *sink_buf = NULL;
    step("NdkFpgaAllocateScatteredBuffer (3 pages)", NdkFpgaAllocateScatteredBuffer(adapter, 3 * PAGE_SIZE, &target_buf),
         STATUS_SUCCESS);
    step("NdkFpgaAllocateBuffer (source)", NdkFpgaAllocateBuffer(adapter, length, &source_buf), STATUS_SUCCESS);
    step("NdkFpgaAllocateBuffer (sink)", NdkFpgaAllocateBuffer(adapter, length, &sink_buf), STATUS_SUCCESS);
    if (!target_buf || !source_buf || !sink_buf)
        goto out;
    NDK_LOGICAL_ADDRESS pages[3];
    for (int i = 0; i < 3; i++) {
        pages[i].QuadPart = (LONGLONG)MmGetMdlPfnArray(target_buf)[i] << PAGE_SHIFT;
        printf("    target page %d at adapter address 0x%llx\n", i, (unsigned long long)pages[i].QuadPart);
    }

    /* The local buffers are registered normally; the target is fast-registered. */
    NDK_MR *source_mr = create_mr(pd, FALSE), *sink_mr = create_mr(pd, FALSE), *target_mr = create_mr(pd, TRUE);
    if (!source_mr || !sink_mr || !target_mr)
        goto out;
    struct completion c1, c2, c3;
    completion_init(&c1);
    completion_init(&c2);
    completion_init(&c3);
    st = source_mr->Dispatch->NdkRegisterMr(source_mr, source_buf, length, NDK_MR_FLAG_ALLOW_LOCAL_WRITE,
                                            on_request_done, &c1);
    step("NdkRegisterMr (source)", finish(&c1, st), STATUS_SUCCESS);
    st = sink_mr->Dispatch->NdkRegisterMr(sink_mr, sink_buf, length, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, on_request_done, &c2);
    step("NdkRegisterMr (sink)", finish(&c2, st), STATUS_SUCCESS);
    st = target_mr->Dispatch->NdkInitializeFastRegisterMr(target_mr, 3, TRUE, on_request_done, &c3);
    step("NdkInitializeFastRegisterMr (3 pages, remote access)", finish(&c3, st), STATUS_SUCCESS);
    UINT32 token = target_mr->Dispatch->NdkGetRemoteTokenFromMr(target_mr);
    printf("    remote token 0x%08x\n", (unsigned)token);

    /* Fast-register the scattered pages at base VA FBO + n * PAGE_SIZE. */
    PVOID base_va = (PVOID)(uintptr_t)(0x40000000u + fbo);
    st = initiator->Dispatch->NdkFastRegister(initiator, (PVOID)1, target_mr, 3, pages, fbo, length, base_va,
                                              NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ);
    step("NdkFastRegister (FBO 0x123, 3 scattered pages)", st, STATUS_SUCCESS);
    step("  completion", next_result(cq).Status, STATUS_SUCCESS);

    /* RDMA Write a pattern through the token, then read the target's bytes back. */
    uint8_t *pattern = malloc(length), *check = malloc(length);
    for (SIZE_T i = 0; i < length; i++)
        pattern[i] = (uint8_t)(i * 7 + 3);
    step("NdkFpgaWriteBuffer (source pattern)", NdkFpgaWriteBuffer(adapter, source_buf, 0, pattern, length),
         STATUS_SUCCESS);
    NDK_SGE sge = {{.VirtualAddress = MmGetMdlVirtualAddress(source_buf)}, (ULONG)length,
                   source_mr->Dispatch->NdkGetLocalTokenFromMr(source_mr)};
    st = initiator->Dispatch->NdkWrite(initiator, (PVOID)2, &sge, 1, (UINT64)(uintptr_t)base_va, token, 0);
    step("NdkWrite through the remote token", st, STATUS_SUCCESS);
    NDK_RESULT_EX r = next_result(cq);
    step("  completion", r.Status, STATUS_SUCCESS);
    printf("    %u bytes transferred\n", (unsigned)r.BytesTransferred);
    step("NdkFpgaReadBuffer (target, from the FBO)", NdkFpgaReadBuffer(adapter, target_buf, fbo, check, length),
         STATUS_SUCCESS);
    step("  target holds the pattern", memcmp(check, pattern, length) ? STATUS_INTERNAL_ERROR : STATUS_SUCCESS,
         STATUS_SUCCESS);

    NDK_SGE sink = {{.VirtualAddress = MmGetMdlVirtualAddress(sink_buf)}, (ULONG)length,
                    sink_mr->Dispatch->NdkGetLocalTokenFromMr(sink_mr)};
    st = initiator->Dispatch->NdkRead(initiator, (PVOID)3, &sink, 1, (UINT64)(uintptr_t)base_va, token, 0);
    step("NdkRead through the remote token", st, STATUS_SUCCESS);
    step("  completion", next_result(cq).Status, STATUS_SUCCESS);
    memset(check, 0, length);
    NdkFpgaReadBuffer(adapter, sink_buf, 0, check, length);
    step("  sink holds the pattern", memcmp(check, pattern, length) ? STATUS_INTERNAL_ERROR : STATUS_SUCCESS,
         STATUS_SUCCESS);

    /* Invalidate: the same write is now refused and the target keeps its bytes. */
    st = initiator->Dispatch->NdkInvalidate(initiator, (PVOID)4, &target_mr->Header, 0);
    step("NdkInvalidate", st, STATUS_SUCCESS);
    step("  completion", next_result(cq).Status, STATUS_SUCCESS);
    memset(pattern, 0xEE, length);
    NdkFpgaWriteBuffer(adapter, source_buf, 0, pattern, length);
    st = initiator->Dispatch->NdkWrite(initiator, (PVOID)5, &sge, 1, (UINT64)(uintptr_t)base_va, token, 0);
    step("NdkWrite through the invalidated token", st, STATUS_SUCCESS);
    r = next_result(cq);
    step("  completion: refused", r.Status, STATUS_ACCESS_VIOLATION);
    printf("    ProviderErrorCode %u (engine refusal reason)\n", (unsigned)r.ProviderErrorCode);
    uint8_t *after = malloc(length);
    NdkFpgaReadBuffer(adapter, target_buf, fbo, after, length);
    NdkFpgaReadBuffer(adapter, sink_buf, 0, check, length); /* the earlier pattern */
    step("  target bytes unchanged", memcmp(after, check, length) ? STATUS_INTERNAL_ERROR : STATUS_SUCCESS,
         STATUS_SUCCESS);
    free(pattern);
    free(check);
    free(after);

    /* Close everything, children first (closing a parent first would pend). */
    initiator->Dispatch->NdkFlush(initiator);
    close_object("close the active connector", &active->Header);
    close_object("close the passive connector", &passive->Header);
    close_object("close the listener", &listener->Header);
    close_object("close the initiator QP", &initiator->Header);
    close_object("close the target QP", &target->Header);
    struct completion d1, d2;
    completion_init(&d1);
    completion_init(&d2);
    st = source_mr->Dispatch->NdkDeregisterMr(source_mr, on_request_done, &d1);
    step("NdkDeregisterMr (source)", finish(&d1, st), STATUS_SUCCESS);
    st = sink_mr->Dispatch->NdkDeregisterMr(sink_mr, on_request_done, &d2);
    step("NdkDeregisterMr (sink)", finish(&d2, st), STATUS_SUCCESS);
    close_object("close the source MR", &source_mr->Header);
    close_object("close the sink MR", &sink_mr->Header);
    close_object("close the target MR", &target_mr->Header);
    close_object("close the PD", &pd->Header);
    close_object("close the CQ", &cq->Header);
    NdkFpgaFreeBuffer(adapter, target_buf);
    NdkFpgaFreeBuffer(adapter, source_buf);
    NdkFpgaFreeBuffer(adapter, sink_buf);
out:
    NdkFpgaCloseAdapter(adapter);
    printf("\n%s: %d deviation%s\n", deviations ? "FAILED" : "PASSED", deviations, deviations == 1 ? "" : "s");
    return deviations ? 1 : 0;
}
