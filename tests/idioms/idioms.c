/* SPDX-License-Identifier: Apache-2.0 */
/* The idioms of code written against Microsoft's ndkpi.h, run on an adapter: the same
 * source builds as C11 (gcc, clang) and as C++17 (g++), with -Wall -Wextra -Werror,
 * so a name, type or prototype that differs from the WDK header fails the build, and
 * a behaviour that differs fails a case. It uses ndkpi.h the way a consumer does
 * (QuadPart page addresses, per-object dispatch calls on the object itself, the
 * tagged enums) and ndkfpga.h only for what Windows does through NDIS.
 *
 *   idioms [DEVICE]      (default: model)
 *
 * TAP lines, then "N passed, M failed"; exits non-zero on any failure. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#endif
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ndkfpga.h"
#include "ndkpi.h"

static int passed, failed;

static int check(int cond, const char *what)
{
    printf("%s - %s\n", cond ? "ok" : "not ok", what);
    fflush(stdout);
    if (cond)
        passed++;
    else
        failed++;
    return cond;
}

/* ------------------------------------------------------------------------- */
/* Callbacks: each records that it ran, with what, for the thread that waits   */

struct call {
    int done;
    NTSTATUS status;
    NDK_OBJECT_HEADER *object;
    ULONG reason;
};

static VOID on_request(PVOID context, NTSTATUS status)
{
    struct call *c = (struct call *)context;
    c->status = status;
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
}

static VOID on_create(PVOID context, NTSTATUS status, NDK_OBJECT_HEADER *object)
{
    struct call *c = (struct call *)context;
    c->status = status;
    c->object = object;
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
}

static VOID on_connect_event(PVOID context, NDK_CONNECTOR *connector)
{
    struct call *c = (struct call *)context;
    c->object = &connector->Header;
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
}

/* NDKPI 2.1's disconnect event: the provider's reason comes with it. */
static VOID on_disconnect_ex(PVOID context, ULONG reason)
{
    struct call *c = (struct call *)context;
    c->reason = reason;
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
}

static VOID on_cq(PVOID context, NTSTATUS status)
{
    (void)context;
    (void)status;
}

static void pause_ms(long ms)
{
    struct timespec t;
    t.tv_sec = ms / 1000;
    t.tv_nsec = (ms % 1000) * 1000000L;
    nanosleep(&t, NULL);
}

static long wait_limit_ms = 30000;

/* The status of a request that returned st: st itself unless it pended, else the
 * callback's (STATUS_IO_TIMEOUT when no callback came in time). */
static NTSTATUS finish(struct call *c, NTSTATUS st)
{
    if (st != STATUS_PENDING)
        return st;
    for (long waited = 0; !__atomic_load_n(&c->done, __ATOMIC_ACQUIRE); waited += 2) {
        if (waited >= wait_limit_ms)
            return STATUS_IO_TIMEOUT;
        pause_ms(2);
    }
    return c->status;
}

static int wait_done(struct call *c)
{
    for (long waited = 0; !__atomic_load_n(&c->done, __ATOMIC_ACQUIRE); waited += 2) {
        if (waited >= wait_limit_ms)
            return 0;
        pause_ms(2);
    }
    return 1;
}

/* The next completion of cq; Status STATUS_IO_TIMEOUT when none came in time. */
static NDK_RESULT_EX next_result(NDK_CQ *cq)
{
    NDK_RESULT_EX r;
    memset(&r, 0, sizeof(r));
    for (long waited = 0; cq->Dispatch->NdkGetCqResultsEx(cq, &r, 1) == 0; waited += 2) {
        if (waited >= wait_limit_ms) {
            r.Status = STATUS_IO_TIMEOUT;
            break;
        }
        pause_ms(2);
    }
    return r;
}

static struct sockaddr_in ipv4(const char *address, USHORT port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, address, &a.sin_addr);
    return a;
}

/* ------------------------------------------------------------------------- */
/* Names and values a consumer compares with                                  */

static void names_and_values(NDK_ADAPTER *adapter, const NDK_ADAPTER_INFO *info)
{
    check(adapter->Header.ObjectType == NdkObjectTypeAdapter && NdkObjectTypeMax == 11 &&
              adapter->Header.ObjectType < NdkObjectTypeMax,
          "NDK_OBJECT_TYPE: the adapter's header, below NdkObjectTypeMax");
    check(sizeof(adapter->Header.NdkReserved) == sizeof(NDK_OBJECT_HEADER_RESERVED_BLOCK) &&
              sizeof(adapter->Header.NdkReserved.rf) == 4 * sizeof(PVOID),
          "NDK_OBJECT_HEADER.NdkReserved is an NDK_OBJECT_HEADER_RESERVED_BLOCK of four pointers");
    const char *technology = "other";
    switch (info->RdmaTechnology) {
    case NdkUndefined:
        technology = "undefined";
        break;
    case NdkiWarp:
    case NdkInfiniBand:
    case NdkRoCE:
    case NdkRoCEv2:
        technology = "RDMA";
        break;
    case NdkMaxTechnology:
        break;
    }
    NDKFPGA_PORT_ADDRESS port;
    memset(&port, 0, sizeof(port));
    int has_port = NdkFpgaPortAddress(adapter, 0, &port) == STATUS_SUCCESS;
    check(info->RdmaTechnology == (has_port ? NdkRoCEv2 : NdkUndefined) &&
              strcmp(technology, has_port ? "RDMA" : "undefined") == 0 && NdkRoCEv2 == 4 && NdkMaxTechnology == 5,
          "NdkQueryAdapterInfo: RdmaTechnology RoCEv2 with a network port, else NdkUndefined (NDK_RDMA_TECHNOLOGY's "
          "real names)");
    check(info->Version.Major == 2 && info->Version.Minor == 1 && adapter->Header.Version.Major == 2 &&
              adapter->Header.Version.Minor == 1,
          "NDK version 2.1 in the adapter information and the object header");
    enum _NDK_OPERATION_TYPE receive_invalidate = NdkOperationTypeReceiveAndInvalidate;
    NDK_OPERATION_TYPE write = NdkOperationTypeWrite;
    check(receive_invalidate == 0x8001 && write == 64, "enum _NDK_OPERATION_TYPE and NDK_OPERATION_TYPE");
    LARGE_INTEGER li;
    li.QuadPart = 0x0000000200001000LL;
    PHYSICAL_ADDRESS pa = li;
    check(li.LowPart == 0x1000u && li.HighPart == 2 && li.u.LowPart == 0x1000u && pa.QuadPart == li.QuadPart,
          "LARGE_INTEGER: QuadPart, LowPart / HighPart and u");
    check(STATUS_ADDRESS_ALREADY_ASSOCIATED == (NTSTATUS)0xC0000238u &&
              STATUS_SHARING_VIOLATION == (NTSTATUS)0xC0000043u && !NT_SUCCESS(STATUS_NOT_SUPPORTED),
          "NTSTATUS values: ADDRESS_ALREADY_ASSOCIATED 0xC0000238, SHARING_VIOLATION 0xC0000043");
}

/* ------------------------------------------------------------------------- */
/* Calls this provider refuses without touching their arguments               */

static void refused_calls(NDK_ADAPTER *adapter, NDK_PD *pd)
{
    struct sockaddr_in address = ipv4("127.0.0.1", 7000);
    struct sockaddr_in before = address;
    struct call create;
    memset(&create, 0, sizeof(create));
    NDK_SHARED_ENDPOINT *sentinel = (NDK_SHARED_ENDPOINT *)(ULONG_PTR)0x5e5e5e50u;
    NDK_SHARED_ENDPOINT *endpoint = sentinel;
    NTSTATUS st = adapter->Dispatch->NdkCreateSharedEndpoint(adapter, (PSOCKADDR)&address, sizeof(address), on_create,
                                                             &create, &endpoint);
    pause_ms(50);
    check(st == STATUS_NOT_SUPPORTED && endpoint == sentinel && memcmp(&address, &before, sizeof(address)) == 0 &&
              !__atomic_load_n(&create.done, __ATOMIC_ACQUIRE),
          "NdkCreateSharedEndpoint (six arguments): NOT_SUPPORTED, output, address and callback untouched");

    GUID id;
    memset(&id, 0x11, sizeof(id));
    NDK_VERSION version;
    version.Major = 1;
    version.Minor = 0;
    NDK_EXTENSION_INTERFACE extension;
    extension.Dispatch = &version;
    st = adapter->Dispatch->NdkQueryExtension(&adapter->Header, &id, version, &extension);
    check(st == STATUS_NOT_SUPPORTED && extension.Dispatch == &version,
          "NdkQueryExtension of the adapter: NOT_SUPPORTED, NDK_EXTENSION_INTERFACE untouched");
    NDK_FN_QUERY_EXTENSION_INTERFACE query = pd->Dispatch->NdkQueryExtension;
    check(query(&pd->Header, &id, version, &extension) == STATUS_NOT_SUPPORTED && extension.Dispatch == &version,
          "NdkQueryExtension of a PD through an NDK_FN_QUERY_EXTENSION_INTERFACE: NOT_SUPPORTED");
}

/* ------------------------------------------------------------------------- */
/* A LAM, a fast registration from it, a privileged-token write into it        */

struct pair {
    NDK_LISTENER *listener;
    NDK_CONNECTOR *active, *passive;
    NDK_QP *qa, *qb;
    struct call gone; /* the passive side's disconnect event */
};

static const USHORT listen_port = 7471, connect_port = 7472;

/* Connects pr->qa (active) to pr->qb (passive) with NdkAcceptEx and NdkCompleteConnectEx. */
static int connect_ex(NDK_ADAPTER *adapter, struct pair *pr)
{
    struct call event;
    memset(&event, 0, sizeof(event));
    struct sockaddr_in any = ipv4("0.0.0.0", listen_port);
    NTSTATUS st = adapter->Dispatch->NdkCreateListener(adapter, on_connect_event, &event, NULL, NULL, &pr->listener);
    if (st == STATUS_SUCCESS)
        st = pr->listener->Dispatch->NdkListen(pr->listener, (PSOCKADDR)&any, sizeof(any), NULL, NULL);
    if (!check(st == STATUS_SUCCESS, "NdkCreateListener and NdkListen"))
        return 0;
    struct sockaddr_in bound;
    ULONG length = sizeof(bound);
    st = pr->listener->Dispatch->NdkGetLocalAddress(pr->listener, (PSOCKADDR)&bound, &length);
    check(st == STATUS_SUCCESS && length == sizeof(bound) && bound.sin_port == htons(listen_port),
          "listener->Dispatch->NdkGetLocalAddress(listener, ...): the listened port");

    st = adapter->Dispatch->NdkCreateConnector(adapter, NULL, NULL, &pr->active);
    if (!check(st == STATUS_SUCCESS, "NdkCreateConnector"))
        return 0;
    struct sockaddr_in src = ipv4("127.0.0.1", connect_port), dst = ipv4("127.0.0.1", listen_port);
    struct call connected, accepted, completed;
    memset(&connected, 0, sizeof(connected));
    memset(&accepted, 0, sizeof(accepted));
    memset(&completed, 0, sizeof(completed));
    NTSTATUS cst = pr->active->Dispatch->NdkConnect(pr->active, pr->qa, (PSOCKADDR)&src, sizeof(src), (PSOCKADDR)&dst,
                                                    sizeof(dst), 1, 1, NULL, 0, on_request, &connected);
    if (!check(cst == STATUS_PENDING && wait_done(&event), "NdkConnect: PENDING, the listener's connect event"))
        return 0;
    pr->passive = (NDK_CONNECTOR *)(void *)event.object;
    st = pr->passive->Dispatch->NdkAcceptEx(pr->passive, pr->qb, 1, 1, NULL, 0, on_disconnect_ex, &pr->gone,
                                            on_request, &accepted);
    check(st == STATUS_PENDING && finish(&connected, cst) == STATUS_SUCCESS,
          "NdkAcceptEx: PENDING; the active side's NdkConnect completes SUCCESS");
    st = pr->active->Dispatch->NdkCompleteConnectEx(pr->active, on_disconnect_ex, NULL, on_request, &completed);
    st = finish(&completed, st);
    return check(st == STATUS_SUCCESS && finish(&accepted, STATUS_PENDING) == STATUS_SUCCESS,
                 "NdkCompleteConnectEx and NdkAcceptEx complete SUCCESS");
}

static void close_pair(struct pair *pr)
{
    if (pr->active) {
        struct call done;
        memset(&done, 0, sizeof(done));
        NTSTATUS st = finish(&done, pr->active->Dispatch->NdkDisconnect(pr->active, on_request, &done));
        check(st == STATUS_SUCCESS, "NdkDisconnect of the active side");
        if (pr->passive)
            check(wait_done(&pr->gone) && pr->gone.reason == 0,
                  "the passive side's NDK_FN_DISCONNECT_EVENT_CALLBACK_EX runs once, reason 0");
        pr->active->Dispatch->NdkCloseConnector(&pr->active->Header, NULL, NULL);
    }
    if (pr->passive)
        NdkCloseObject(&pr->passive->Header, NULL, NULL);
    if (pr->listener)
        pr->listener->Dispatch->NdkCloseListener(&pr->listener->Header, NULL, NULL);
}

static void data_path(NDK_ADAPTER *adapter, NDK_PD *pd, NDK_CQ *cq)
{
    const SIZE_T length = 2 * PAGE_SIZE;
    MDL *target = NULL, *source = NULL;
    NTSTATUS st = NdkFpgaAllocateScatteredBuffer(adapter, length, &target);
    if (st == STATUS_SUCCESS)
        st = NdkFpgaAllocateBuffer(adapter, PAGE_SIZE, &source);
    if (!check(st == STATUS_SUCCESS, "adapter buffers: a 2-page target, a 1-page source"))
        return;

    /* The LAM: ask for its size, then build it. */
    ULONG lam_size = 0, fbo = 0;
    st = adapter->Dispatch->NdkBuildLAM(adapter, target, length, NULL, NULL, NULL, &lam_size, &fbo);
    NDK_LOGICAL_ADDRESS_MAPPING *lam = (NDK_LOGICAL_ADDRESS_MAPPING *)malloc(lam_size);
    check(st == STATUS_BUFFER_TOO_SMALL && lam != NULL &&
              lam_size == offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) + 2 * sizeof(NDK_LOGICAL_ADDRESS),
          "NdkBuildLAM without room: BUFFER_TOO_SMALL and the size of two pages");
    if (!lam)
        return;
    st = adapter->Dispatch->NdkBuildLAM(adapter, target, length, NULL, NULL, lam, &lam_size, &fbo);
    int pages_match = st == STATUS_SUCCESS && lam->AdapterPageCount == 2;
    for (ULONG i = 0; pages_match && i < lam->AdapterPageCount; i++)
        pages_match = lam->AdapterPageArray[i].QuadPart == (LONGLONG)MmGetMdlPfnArray(target)[i] << PAGE_SHIFT &&
                      (lam->AdapterPageArray[i].LowPart & (PAGE_SIZE - 1)) == 0 &&
                      lam->AdapterPageArray[i].HighPart == (LONG)(lam->AdapterPageArray[i].QuadPart >> 32);
    check(pages_match && fbo == 0, "NdkBuildLAM: lam->AdapterPageArray[i].QuadPart is each page's adapter address");

    NDK_MR *mr = NULL;
    NDK_QP *qa = NULL, *qb = NULL;
    st = pd->Dispatch->NdkCreateMr(pd, TRUE, NULL, NULL, &mr);
    if (st == STATUS_SUCCESS)
        st = mr->Dispatch->NdkInitializeFastRegisterMr(mr, lam->AdapterPageCount, TRUE, NULL, NULL);
    if (st == STATUS_SUCCESS)
        st = pd->Dispatch->NdkCreateQp(pd, cq, cq, (PVOID)&qa, 0, 8, 0, 1, 0, NULL, NULL, &qa);
    if (st == STATUS_SUCCESS)
        st = pd->Dispatch->NdkCreateQp(pd, cq, cq, (PVOID)&qb, 0, 8, 0, 1, 0, NULL, NULL, &qb);
    struct pair pr;
    memset(&pr, 0, sizeof(pr));
    pr.qa = qa;
    pr.qb = qb;
    if (check(st == STATUS_SUCCESS, "a fast-register MR and two QPs") && connect_ex(adapter, &pr)) {
        struct sockaddr_in local;
        ULONG local_length = sizeof(local);
        st = pr.active->Dispatch->NdkGetLocalAddress(pr.active, (PSOCKADDR)&local, &local_length);
        check(st == STATUS_SUCCESS && local.sin_port == htons(connect_port),
              "conn->Dispatch->NdkGetLocalAddress(conn, ...): the connector's own address");

        /* Fast-register the LAM's pages on the active QP, straight from the LAM. */
        PVOID base = (PVOID)(ULONG_PTR)0x40000000u;
        NDK_OPERATION_TYPE expected = NdkOperationTypeFastRegister;
        st = qa->Dispatch->NdkFastRegister(qa, (PVOID)1, mr, lam->AdapterPageCount, lam->AdapterPageArray, fbo,
                                           length, base, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
        NDK_RESULT_EX r = next_result(cq);
        check(st == STATUS_SUCCESS && r.Status == STATUS_SUCCESS && r.Type == expected && r.RequestContext == (PVOID)1,
              "NdkFastRegister of lam->AdapterPageArray: completes SUCCESS, Type NdkOperationTypeFastRegister");

        /* The peer writes from adapter memory named by its logical address. */
        UCHAR pattern[64];
        for (unsigned i = 0; i < sizeof(pattern); i++)
            pattern[i] = (UCHAR)(0xA0 + i);
        NdkFpgaWriteBuffer(adapter, source, 0, pattern, sizeof(pattern));
        UINT32 privileged = 0;
        pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(pd, &privileged);
        NDK_SGE sge;
        memset(&sge, 0, sizeof(sge));
        sge.LogicalAddress.QuadPart = (LONGLONG)MmGetMdlPfnArray(source)[0] << PAGE_SHIFT;
        sge.Length = sizeof(pattern);
        sge.MemoryRegionToken = privileged;
        const UINT64 remote = (UINT64)(ULONG_PTR)base + PAGE_SIZE + 16;
        st = qb->Dispatch->NdkWrite(qb, (PVOID)2, &sge, 1, remote, mr->Dispatch->NdkGetRemoteTokenFromMr(mr), 0);
        r = next_result(cq);
        UCHAR landed[64];
        memset(landed, 0, sizeof(landed));
        NdkFpgaReadBuffer(adapter, target, PAGE_SIZE + 16, landed, sizeof(landed));
        check(st == STATUS_SUCCESS && r.Status == STATUS_SUCCESS && r.Type == NdkOperationTypeWrite &&
                  memcmp(landed, pattern, sizeof(pattern)) == 0,
              "NdkWrite from an SGE of LogicalAddress.QuadPart and the privileged token: the bytes land");
    }
    close_pair(&pr);
    if (qa)
        qa->Dispatch->NdkCloseQp(&qa->Header, NULL, NULL);
    if (qb)
        NdkCloseObject(&qb->Header, NULL, NULL);
    if (mr)
        mr->Dispatch->NdkCloseMr(&mr->Header, NULL, NULL);
    adapter->Dispatch->NdkReleaseLAM(adapter, lam);
    free(lam);
    NdkFpgaFreeBuffer(adapter, source);
    NdkFpgaFreeBuffer(adapter, target);
}

/* A kernel consumer's buffer: ordinary memory, IoAllocateMdl + MmBuildMdlForNonPagedPool,
 * filled through MmGetSystemAddressForMdlSafe, a Send from it through a registered MR,
 * the receive's bytes read by the CPU. */
static void host_memory(NDK_ADAPTER *adapter, NDK_PD *pd, NDK_CQ *cq)
{
    const ULONG length = 3000;
    UCHAR *memory = (UCHAR *)calloc(1, 2 * length);
    PMDL mdl = memory ? IoAllocateMdl(memory, 2 * length, FALSE, FALSE, NULL) : NULL;
    if (!check(mdl != NULL, "IoAllocateMdl over ordinary memory"))
        return;
    MmBuildMdlForNonPagedPool(mdl);
    UCHAR *system = (UCHAR *)MmGetSystemAddressForMdlSafe(mdl, NormalPagePriority | MdlMappingNoExecute);
    for (ULONG i = 0; i < length; i++)
        system[i] = (UCHAR)(i * 13u + 5u);
    NDK_MR *mr = NULL;
    NDK_QP *qa = NULL, *qb = NULL;
    NTSTATUS st = pd->Dispatch->NdkCreateMr(pd, FALSE, NULL, NULL, &mr);
    if (st == STATUS_SUCCESS)
        st = mr->Dispatch->NdkRegisterMr(mr, mdl, 2 * length, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NULL, NULL);
    if (st == STATUS_SUCCESS)
        st = pd->Dispatch->NdkCreateQp(pd, cq, cq, NULL, 2, 8, 1, 1, 0, NULL, NULL, &qa);
    if (st == STATUS_SUCCESS)
        st = pd->Dispatch->NdkCreateQp(pd, cq, cq, NULL, 2, 8, 1, 1, 0, NULL, NULL, &qb);
    struct pair pr;
    memset(&pr, 0, sizeof(pr));
    pr.qa = qa;
    pr.qb = qb;
    if (check(st == STATUS_SUCCESS, "NdkRegisterMr over the host MDL, two QPs with receive queues") &&
        connect_ex(adapter, &pr)) {
        NDK_SGE to, from;
        to.VirtualAddress = system + length;
        from.VirtualAddress = system;
        to.Length = from.Length = length;
        to.MemoryRegionToken = from.MemoryRegionToken = mr->Dispatch->NdkGetLocalTokenFromMr(mr);
        st = qb->Dispatch->NdkReceive(qb, (PVOID)3, &to, 1);
        if (st == STATUS_SUCCESS)
            st = qa->Dispatch->NdkSend(qa, (PVOID)4, &from, 1, 0);
        NDK_RESULT_EX r1 = next_result(cq), r2 = next_result(cq);
        check(st == STATUS_SUCCESS && r1.Status == STATUS_SUCCESS && r2.Status == STATUS_SUCCESS &&
                  memcmp(system, system + length, length) == 0,
              "a Send from host memory into a receive in host memory: the CPU reads the bytes");
    }
    close_pair(&pr);
    if (qa)
        NdkCloseObject(&qa->Header, NULL, NULL);
    if (qb)
        NdkCloseObject(&qb->Header, NULL, NULL);
    if (mr)
        NdkCloseObject(&mr->Header, NULL, NULL);
    IoFreeMdl(mdl);
    free(memory);
}

int main(int argc, char **argv)
{
    const char *device = argc > 1 ? argv[1] : "model";
    if (strncmp(device, "sim", 3) == 0)
        wait_limit_ms = 300000; /* the Verilator board answers over a simulated UART */
    NDK_ADAPTER *adapter = NULL;
    NTSTATUS st = NdkFpgaOpenAdapter(device, &adapter);
    if (check(st == STATUS_SUCCESS, "NdkFpgaOpenAdapter")) {
        NDK_ADAPTER_INFO info;
        ULONG size = sizeof(info);
        st = adapter->Dispatch->NdkQueryAdapterInfo(adapter, &info, &size);
        check(st == STATUS_SUCCESS && size == sizeof(NDK_ADAPTER_INFO), "NdkQueryAdapterInfo");
        NDK_CQ *cq = NULL;
        NDK_PD *pd = NULL;
        st = adapter->Dispatch->NdkCreateCq(adapter, 64, on_cq, NULL, NULL, NULL, NULL, &cq);
        if (st == STATUS_SUCCESS)
            st = adapter->Dispatch->NdkCreatePd(adapter, NULL, NULL, &pd);
        if (check(st == STATUS_SUCCESS, "NdkCreateCq and NdkCreatePd")) {
            names_and_values(adapter, &info);
            refused_calls(adapter, pd);
            data_path(adapter, pd, cq);
            host_memory(adapter, pd, cq);
        }
        if (pd)
            pd->Dispatch->NdkClosePd(&pd->Header, NULL, NULL);
        if (cq)
            cq->Dispatch->NdkCloseCq(&cq->Header, NULL, NULL);
        NdkFpgaCloseAdapter(adapter);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed || passed == 0 ? 1 : 0;
}
