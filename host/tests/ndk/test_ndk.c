/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the NDKPI provider. Most need no adapter: the header's layout and
 * values, dispatch-table order, and the local rule checks of every call, run on
 * objects built in memory (white box: host/src/ndk/ndk_internal.h). A check that
 * passes would send a message; there the link is absent, so only refusals and the
 * host-only calls are exercised. Last, on the software adapter (nfmodel), the
 * statuses the firmware decides rather than the host (docs: rule ownership). */
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "consumer.h"
#include "ndk/ndk_internal.h"
#include "tap.h"

#define USER_BASE 0x10000u
#define MEM_BYTES 0x400000u

static void test_layout(void)
{
    tap_ok(sizeof(NDK_RESULT) == 24 && sizeof(NDK_RESULT_EX) == 40 && sizeof(NDK_SGE) == 16 &&
               sizeof(NDK_ADAPTER_INFO) == 104,
           "structure sizes: NDK_RESULT 24, NDK_RESULT_EX 40, NDK_SGE 16, NDK_ADAPTER_INFO 104");
    tap_ok(offsetof(NDK_ADAPTER_INFO, FRMRPageCount) == 32 && offsetof(NDK_ADAPTER_INFO, AdapterFlags) == 92 &&
               offsetof(NDK_ADAPTER_INFO, RdmaTechnology) == 96 && offsetof(NDK_ADAPTER_INFO, MaxCqDepth) == 76,
           "NDK_ADAPTER_INFO offsets");
    tap_ok(sizeof(ULONG) == 4 && sizeof(USHORT) == 2 && sizeof(UCHAR) == 1 && sizeof(NTSTATUS) == 4 &&
               sizeof(SIZE_T) == sizeof(void *) && sizeof(ULONG_PTR) == sizeof(void *),
           "Windows base types are fixed width (ULONG is 32 bits)");
    tap_ok(!NT_SUCCESS(STATUS_ACCESS_VIOLATION) && NT_SUCCESS(STATUS_PENDING) && NT_SUCCESS(STATUS_SUCCESS) &&
               (uint32_t)STATUS_CONNECTION_INVALID == 0xC000023Au && (uint32_t)STATUS_IMPLEMENTATION_LIMIT == 0xC000042Bu &&
               (uint32_t)STATUS_BUFFER_TOO_SMALL == 0xC0000023u && (uint32_t)STATUS_CANCELLED == 0xC0000120u,
           "NTSTATUS values and NT_SUCCESS");
    tap_ok(NDK_OP_FLAG_ALLOW_REMOTE_WRITE == 0x30 && NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE == 0x100 &&
               NDK_OP_FLAG_DEFER == 0x200 && NDK_MR_FLAG_ALLOW_REMOTE_WRITE == 5 && NDK_MR_FLAG_RDMA_READ_SINK == 8 &&
               NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED == 0x10000 && NdkOperationTypeReceiveAndInvalidate == 0x8001,
           "flag and enumeration values");
    const size_t P = sizeof(void *);
    tap_ok(offsetof(NDK_QP_DISPATCH, NdkFastRegister) == 6 * P && offsetof(NDK_QP_DISPATCH, NdkWrite) == 9 * P &&
               offsetof(NDK_QP_DISPATCH, NdkSendAndInvalidate) == 10 * P,
           "QP dispatch order");
    tap_ok(offsetof(NDK_MR_DISPATCH, NdkInitializeFastRegisterMr) == 4 * P &&
               offsetof(NDK_MR_DISPATCH, NdkGetLocalTokenFromMr) == 6 * P,
           "MR dispatch order");
    tap_ok(offsetof(NDK_ADAPTER_DISPATCH, NdkQueryAdapterInfo) == 1 * P &&
               offsetof(NDK_ADAPTER_DISPATCH, NdkReleaseLAM) == 8 * P,
           "adapter dispatch order (no close entry)");
    tap_ok(offsetof(NDK_CQ_DISPATCH, NdkGetCqResultsEx) == 6 * P && offsetof(NDK_PD_DISPATCH, NdkCreateQp) == 5 * P &&
               offsetof(NDK_CONNECTOR_DISPATCH, NdkDisconnect) == 10 * P &&
               offsetof(NDK_LISTENER_DISPATCH, NdkControlConnectEvents) == 4 * P,
           "CQ, PD, connector and listener dispatch order");
    tap_ok(offsetof(NDK_QP, Dispatch) == sizeof(NDK_OBJECT_HEADER) && offsetof(NDK_MR, Dispatch) == sizeof(NDK_OBJECT_HEADER),
           "objects start with NDK_OBJECT_HEADER then Dispatch");
    tap_ok(!strcmp(NdkFpgaStatusName(STATUS_ACCESS_VIOLATION), "STATUS_ACCESS_VIOLATION") &&
               !strcmp(NdkFpgaStatusName(0x12345), "STATUS_(unknown)"),
           "NdkFpgaStatusName");
}

/* An adapter without a board: INFO as the SIM profile reports it. */
static struct ndk_adapter *fake_adapter(void)
{
    struct ndk_adapter *ad = ndk_adapter_alloc();
    ad->info.page_size = PAGE_SIZE;
    ad->info.user_base = USER_BASE;
    ad->info.mem_bytes = MEM_BYTES;
    ad->info.mtt_entries = 4096;
    ad->info.mpt_entries = 1024;
    ad->info.max_frmr_pages = 256;
    ad->info.max_sge = 4;
    ad->info.max_qps = 16;
    if (ndk_adapter_setup(ad) != STATUS_SUCCESS) /* a live object of the library's, as NdkFpgaOpenAdapter's */
        abort();
    ad->dead = STATUS_CONNECTION_ABORTED; /* no link: anything sent fails */
    return ad;
}


static void test_adapter_calls(struct ndk_adapter *ad)
{
    NDK_ADAPTER *a = &ad->pub;
    NDK_ADAPTER_INFO info;
    ULONG size = 10;
    tap_ok(a->Dispatch->NdkQueryAdapterInfo(a, &info, &size) == STATUS_BUFFER_TOO_SMALL && size == 104,
           "NdkQueryAdapterInfo small buffer: BUFFER_TOO_SMALL, size 104");
    size = sizeof(info);
    NTSTATUS st = a->Dispatch->NdkQueryAdapterInfo(a, &info, &size);
    tap_ok(st == STATUS_SUCCESS && info.FRMRPageCount == 256 && info.MaxInitiatorRequestSge == 4 &&
               info.MaxRegistrationSize == (SIZE_T)NDK_MAX_REGISTER_PAGES * PAGE_SIZE &&
               info.MaxTransferLength == MEM_BYTES - USER_BASE && info.MaxReceiveQueueDepth == NF_ADAPTER_MAX_RQ_DEPTH &&
               info.MaxReceiveRequestSge == NF_ADAPTER_MAX_RECV_SGE && info.MaxInlineDataSize == 0 &&
               info.MaxSrqDepth == 0 &&
               info.MaxWindowSize == (SIZE_T)(NDK_MAX_REGISTER_PAGES > 256 ? NDK_MAX_REGISTER_PAGES : 256) * PAGE_SIZE &&
               info.AdapterFlags == (NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED |
                                     NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED),
           "NdkQueryAdapterInfo reports the adapter's INFO limits");
    tap_ok(a->Dispatch->NdkQueryAdapterInfo(a, &info, NULL) == STATUS_INVALID_PARAMETER,
           "NdkQueryAdapterInfo NULL size: INVALID_PARAMETER");

    NDK_CQ *cq = NULL;
    tap_ok(a->Dispatch->NdkCreateCq(a, 0, NULL, NULL, NULL, NULL, NULL, &cq) == STATUS_INVALID_PARAMETER && !cq,
           "NdkCreateCq depth 0: INVALID_PARAMETER");
    tap_ok(a->Dispatch->NdkCreateCq(a, NDK_MAX_CQ_DEPTH + 1, NULL, NULL, NULL, NULL, NULL, &cq) ==
               STATUS_INVALID_PARAMETER,
           "NdkCreateCq above MaxCqDepth: INVALID_PARAMETER");
    tap_ok(a->Dispatch->NdkCreateCq(a, 4, NULL, NULL, NULL, NULL, NULL, &cq) == STATUS_SUCCESS && cq,
           "NdkCreateCq depth 4");
    NDK_RESULT r[2];
    tap_ok(cq->Dispatch->NdkGetCqResults(cq, r, 2) == 0, "empty CQ returns 0 results");
    /* Results pushed in order come out in order; a full CQ counts an overrun. */
    struct ndk_cq *c = NDK_CONTAINER(cq, struct ndk_cq, pub);
    pthread_mutex_lock(&ad->lock);
    for (int i = 0; i < 5; i++) {
        NDK_RESULT_EX x = {0};
        x.RequestContext = (PVOID)(uintptr_t)(i + 1);
        x.Type = NdkOperationTypeWrite;
        ndk_cq_push(c, &x, 0);
    }
    pthread_mutex_unlock(&ad->lock);
    NDK_RESULT_EX rx[8];
    ULONG n = cq->Dispatch->NdkGetCqResultsEx(cq, rx, 8);
    tap_ok(n == 4 && rx[0].RequestContext == (PVOID)1 && rx[3].RequestContext == (PVOID)4 &&
               rx[0].Type == NdkOperationTypeWrite && c->overruns == 1,
           "CQ keeps order, holds depth results, counts an overrun");
    tap_ok(NdkCloseObject(&cq->Header, NULL, NULL) == STATUS_SUCCESS, "close CQ inline: SUCCESS");

    NDK_SHARED_ENDPOINT *se = NULL;
    tap_ok(a->Dispatch->NdkCreateSharedEndpoint(a, NULL, 0, NULL, NULL, &se) == STATUS_NOT_SUPPORTED && se == NULL,
           "NdkCreateSharedEndpoint: NOT_SUPPORTED");
}

/* The diagnostic calls' local rules (no adapter needed to refuse). */
static void test_diagnostics(struct ndk_adapter *ad)
{
    NDK_ADAPTER *a = &ad->pub;
    ULONG n = 0;
    NDKFPGA_DEVICE devs[16];
    tap_ok(NdkFpgaListDevices(devs, NULL) == STATUS_INVALID_PARAMETER &&
               (n = 1, NdkFpgaListDevices(NULL, &n)) == STATUS_INVALID_PARAMETER,
           "NdkFpgaListDevices: NULL Count, or NULL Devices with room: INVALID_PARAMETER");
    n = 0;
    NTSTATUS st = NdkFpgaListDevices(NULL, &n);
    tap_ok(st == STATUS_BUFFER_TOO_SMALL && n >= 2, "NdkFpgaListDevices with no room: BUFFER_TOO_SMALL, the count");
    ULONG want = n;
    n = 16;
    st = NdkFpgaListDevices(devs, &n);
    tap_ok(st == STATUS_SUCCESS && n == want && devs[n - 2].Kind == NDKFPGA_DEVICE_SIM &&
               !strcmp(devs[n - 2].Name, "sim") && devs[n - 1].Kind == NDKFPGA_DEVICE_MODEL &&
               !strcmp(devs[n - 1].Name, "model") &&
               (devs[n - 1].Status == STATUS_SUCCESS || devs[n - 1].Status == STATUS_NO_SUCH_FILE),
           "NdkFpgaListDevices: the boards, then sim and model with their state");
    n = 0;
    tap_ok(NdkFpgaQueryCounters(a, NULL, &n) == STATUS_BUFFER_TOO_SMALL && n > 40 &&
               NdkFpgaQueryCounters(NULL, NULL, &n) == STATUS_INVALID_PARAMETER &&
               NdkFpgaQueryCounters(a, NULL, NULL) == STATUS_INVALID_PARAMETER,
           "NdkFpgaQueryCounters: the count without asking the adapter; NULL: INVALID_PARAMETER");
    NDKFPGA_PING_RESULT pr;
    tap_ok(NdkFpgaPing(a, 0, 1, 0, &pr) == STATUS_INVALID_PARAMETER && NdkFpgaPing(a, 1, 0, 0, &pr) ==
               STATUS_INVALID_PARAMETER && NdkFpgaPing(a, 1, 1, NDKFPGA_PING_MAX_PAYLOAD + 1, &pr) ==
               STATUS_INVALID_PARAMETER && NdkFpgaPing(a, 1, 1, 0, NULL) == STATUS_INVALID_PARAMETER,
           "NdkFpgaPing: count 0, none in flight, too much payload, NULL result: INVALID_PARAMETER");
    n = 0;
    tap_ok(NdkFpgaQueryNeighbors(NULL, NULL, &n) == STATUS_INVALID_PARAMETER &&
               NdkFpgaQueryNeighbors(a, NULL, NULL) == STATUS_INVALID_PARAMETER &&
               (n = 1, NdkFpgaQueryNeighbors(a, NULL, &n)) == STATUS_INVALID_PARAMETER,
           "NdkFpgaQueryNeighbors: NULL adapter or Count, or NULL Neighbors with room: INVALID_PARAMETER");
    tap_ok(NdkFpgaQueryAdapterDetails(NULL, NULL) == STATUS_INVALID_PARAMETER &&
               NdkFpgaQueryAdapterDetails(a, NULL) == STATUS_INVALID_PARAMETER,
           "NdkFpgaQueryAdapterDetails NULL: INVALID_PARAMETER");
    tap_ok(NdkFpgaErrorMessage(NULL) != NULL && !strcmp(NdkFpgaStatusName(STATUS_ACCESS_DENIED), "STATUS_ACCESS_DENIED") &&
               !strcmp(NdkFpgaStatusName(STATUS_NO_SUCH_FILE), "STATUS_NO_SUCH_FILE"),
           "NdkFpgaErrorMessage never NULL; the new statuses have names");
}

/* ---- the registry of live objects is bounded: a create beyond it fails ---- */
static void test_registry_full(struct ndk_adapter *ad)
{
    NDK_ADAPTER *a = &ad->pub;
    enum { MAX_TRY = 70000 };
    NDK_CQ **cqs = calloc(MAX_TRY, sizeof(*cqs));
    int n = 0;
    NTSTATUS st = STATUS_SUCCESS;
    while (n < MAX_TRY && (st = a->Dispatch->NdkCreateCq(a, 1, NULL, NULL, NULL, NULL, NULL, &cqs[n])) == STATUS_SUCCESS)
        n++;
    NDK_PD *pd = NULL;
    NDK_CONNECTOR *conn = NULL;
    tap_ok(n < MAX_TRY && st == STATUS_INSUFFICIENT_RESOURCES && !cqs[n] &&
               a->Dispatch->NdkCreatePd(a, NULL, NULL, &pd) == STATUS_INSUFFICIENT_RESOURCES && !pd &&
               a->Dispatch->NdkCreateConnector(a, NULL, NULL, &conn) == STATUS_INSUFFICIENT_RESOURCES && !conn,
           "a full registry of live objects (%d CQs): creates fail INSUFFICIENT_RESOURCES", n);
    int closed = 0;
    for (int i = 0; i < n; i++)
        closed += NdkCloseObject(&cqs[i]->Header, NULL, NULL) == STATUS_SUCCESS;
    NDK_CQ *again = NULL;
    tap_ok(closed == n && a->Dispatch->NdkCreateCq(a, 1, NULL, NULL, NULL, NULL, NULL, &again) == STATUS_SUCCESS &&
               NdkCloseObject(&again->Header, NULL, NULL) == STATUS_SUCCESS,
           "after closing them, creates succeed again");
    free(cqs);
}

/* ---- MDLs ---- */
static void test_mdls(struct ndk_adapter *ad)
{
    NDK_ADAPTER *ap = &ad->pub;
    uint64_t pages[8]; /* ndk_mdl_pages: the page list as the adapter takes it */
    NTSTATUS st;
    ULONG fbo = 0;
    /* MDLs a consumer builds over (parts of) a buffer the adapter allocated. */
    MDL *whole = NULL;
    tap_ok(NdkFpgaAllocateScatteredBuffer(ap, 4 * PAGE_SIZE, &whole) == STATUS_SUCCESS, "a 4-page scattered buffer");
    if (!whole)
        return;
    uintptr_t base = (uintptr_t)MmGetMdlVirtualAddress(whole);
    PFN_NUMBER *pfn = MmGetMdlPfnArray(whole);
    PFN_NUMBER stray[4] = {0x20, 0x40, 0x21, 0x55};
    MDL s0 = {NULL, (PVOID)(uintptr_t)0x100000, 0x10, 3 * PAGE_SIZE - 0x10, stray, NULL};
    tap_ok(ndk_mdl_pages(ad, &s0, s0.ByteCount, pages, 8, &fbo, &st) == 0 && st == STATUS_INVALID_PARAMETER,
           "MDL outside every buffer of the adapter: INVALID_PARAMETER");
    MDL s1 = {NULL, (PVOID)base, 0, PAGE_SIZE, pfn + 1, NULL};
    tap_ok(ndk_mdl_pages(ad, &s1, PAGE_SIZE, pages, 8, &fbo, &st) == 0 && st == STATUS_INVALID_PARAMETER,
           "MDL inside a buffer naming pages other than the buffer's there: INVALID_PARAMETER");
    MDL m = {NULL, (PVOID)base, 0x10, 3 * PAGE_SIZE - 0x10, pfn, NULL};
    uint32_t n = ndk_mdl_pages(ad, &m, m.ByteCount, pages, 8, &fbo, &st);
    tap_ok(n == 3 && st == STATUS_SUCCESS && fbo == 0x10 && pages[1] == (uint64_t)pfn[1] << PAGE_SHIFT &&
               pages[2] == (uint64_t)pfn[2] << PAGE_SHIFT,
           "MDL to page list: 3 pages, FBO 0x10");
    tap_ok(ndk_mdl_pages(ad, &m, m.ByteCount + 1, pages, 8, &fbo, &st) == 0 && st == STATUS_INVALID_PARAMETER,
           "length past the MDL: INVALID_PARAMETER");
    MDL b1 = {NULL, (PVOID)(base + PAGE_SIZE), 0, PAGE_SIZE, pfn + 1, NULL};
    MDL a1 = {&b1, (PVOID)base, 0x10, PAGE_SIZE - 0x10, pfn, NULL};
    n = ndk_mdl_pages(ad, &a1, 2 * PAGE_SIZE - 0x10, pages, 8, &fbo, &st);
    tap_ok(n == 2 && st == STATUS_SUCCESS && pages[1] == (uint64_t)pfn[1] << PAGE_SHIFT, "contiguous MDL chain");
    MDL b2 = {NULL, (PVOID)(base + 2 * PAGE_SIZE), 0, PAGE_SIZE, pfn + 2, NULL};
    MDL a2 = {&b2, (PVOID)base, 0x10, PAGE_SIZE - 0x10, pfn, NULL};
    tap_ok(ndk_mdl_pages(ad, &a2, 2 * PAGE_SIZE - 0x10, pages, 8, &fbo, &st) == 0 && st == STATUS_INVALID_PARAMETER,
           "MDL chain with a virtual gap: INVALID_PARAMETER");
    /* Second MDL continues inside the first's last page: must name the same page. */
    MDL b3 = {NULL, (PVOID)base, 0x110, 0x100, pfn, NULL};
    MDL a3 = {&b3, (PVOID)base, 0x10, 0x100, pfn, NULL};
    tap_ok(ndk_mdl_pages(ad, &a3, 0x200, pages, 8, &fbo, &st) == 1 && st == STATUS_SUCCESS,
           "MDL chain continuing inside the same page");
    MDL b4 = {NULL, (PVOID)base, 0x110, 0x100, pfn + 1, NULL};
    MDL a4 = {&b4, (PVOID)base, 0x10, 0x100, pfn, NULL};
    tap_ok(ndk_mdl_pages(ad, &a4, 0x200, pages, 8, &fbo, &st) == 0 && st == STATUS_INVALID_PARAMETER,
           "MDL chain splitting one virtual page over two pages: INVALID_PARAMETER");
    MDL z = {NULL, NULL, 0x10, 16, pfn, NULL};
    tap_ok(ndk_mdl_pages(ad, &z, 16, pages, 8, &fbo, &st) == 0 && st == STATUS_INVALID_PARAMETER,
           "zero-based MDL virtual address: INVALID_PARAMETER");
    PFN_NUMBER outside[1] = {MEM_BYTES / PAGE_SIZE};
    MDL o = {NULL, (PVOID)base, 0, 16, outside, NULL};
    tap_ok(ndk_mdl_pages(ad, &o, 16, pages, 8, &fbo, &st) == 0 && st == STATUS_INVALID_PARAMETER,
           "page outside the user region: INVALID_PARAMETER");
    tap_ok(ndk_mdl_pages(ad, &m, m.ByteCount, pages, 2, &fbo, &st) == 0 && st == STATUS_INSUFFICIENT_RESOURCES,
           "more pages than the table holds: INSUFFICIENT_RESOURCES");

    /* NdkBuildLAM */
    ULONG lam_size = 8;
    ULONG lfbo = 0;
    tap_ok(ap->Dispatch->NdkBuildLAM(ap, &m, m.ByteCount, NULL, NULL, NULL, &lam_size, &lfbo) == STATUS_BUFFER_TOO_SMALL &&
               lam_size == offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) + 3 * 8,
           "NdkBuildLAM without room: BUFFER_TOO_SMALL with the needed size");
    NDK_LOGICAL_ADDRESS_MAPPING *lam = malloc(lam_size);
    tap_ok(ap->Dispatch->NdkBuildLAM(ap, &m, m.ByteCount, NULL, NULL, lam, &lam_size, &lfbo) == STATUS_SUCCESS &&
               lam->AdapterPageCount == 3 && lam->AdapterPageArray[0].QuadPart == (LONGLONG)pfn[0] << PAGE_SHIFT && lfbo == 0x10,
           "NdkBuildLAM: adapter page addresses and FBO");
    ap->Dispatch->NdkReleaseLAM(ap, lam);
    free(lam);
    NdkFpgaFreeBuffer(ap, whole);

    /* Buffers: allocation, scattering, bounds of NdkFpgaWrite/ReadBuffer. */
    MDL *buf = NULL, *sc = NULL;
    tap_ok(NdkFpgaAllocateBuffer(ap, 0, &buf) == STATUS_INVALID_PARAMETER, "NdkFpgaAllocateBuffer 0 bytes: INVALID_PARAMETER");
    tap_ok(NdkFpgaAllocateBuffer(ap, MEM_BYTES, &buf) == STATUS_INSUFFICIENT_RESOURCES,
           "NdkFpgaAllocateBuffer larger than the user region: INSUFFICIENT_RESOURCES");
    tap_ok(NdkFpgaAllocateBuffer(ap, 5000, &buf) == STATUS_SUCCESS && MmGetMdlByteCount(buf) == 5000 &&
               BYTE_OFFSET(MmGetMdlVirtualAddress(buf)) == 0 && MmGetMdlVirtualAddress(buf) != NULL &&
               MmGetMdlPfnArray(buf)[0] == USER_BASE / PAGE_SIZE,
           "NdkFpgaAllocateBuffer: 2 pages from the user region, page-aligned unique VA");
    tap_ok(NdkFpgaAllocateScatteredBuffer(ap, 3 * PAGE_SIZE, &sc) == STATUS_SUCCESS &&
               MmGetMdlPfnArray(sc)[0] == MmGetMdlPfnArray(sc)[2] + 2 && MmGetMdlPfnArray(sc)[0] != MmGetMdlPfnArray(buf)[0],
           "NdkFpgaAllocateScatteredBuffer: pages reversed, none shared");
    tap_ok(MmGetMdlVirtualAddress(sc) != MmGetMdlVirtualAddress(buf), "each buffer has its own virtual range");
    uint8_t x[16];
    tap_ok(NdkFpgaWriteBuffer(ap, buf, 4990, x, 16) == STATUS_INVALID_PARAMETER,
           "NdkFpgaWriteBuffer past the buffer: INVALID_PARAMETER");
    tap_ok(NdkFpgaReadBuffer(ap, buf, 0, NULL, 16) == STATUS_INVALID_PARAMETER, "NdkFpgaReadBuffer NULL: INVALID_PARAMETER");
    tap_ok(NdkFpgaWriteBuffer(ap, buf, 0, x, 16) == STATUS_CONNECTION_ABORTED,
           "NdkFpgaWriteBuffer with the link down: CONNECTION_ABORTED");
    /* An MDL is this adapter's only when the adapter allocated it: a copy (hand-made,
     * same pages), another adapter's, or a freed one is refused. */
    MDL copy = *buf;
    tap_ok(NdkFpgaWriteBuffer(ap, &copy, 0, x, 16) == STATUS_INVALID_PARAMETER &&
               NdkFpgaReadBuffer(ap, &copy, 0, x, 16) == STATUS_INVALID_PARAMETER,
           "NdkFpgaWrite/ReadBuffer with a hand-made MDL (a copy of one of ours): INVALID_PARAMETER");
    struct ndk_adapter *other = fake_adapter();
    MDL *obuf = NULL;
    tap_ok(NdkFpgaAllocateBuffer(&other->pub, 16, &obuf) == STATUS_SUCCESS &&
               NdkFpgaWriteBuffer(ap, obuf, 0, x, 16) == STATUS_INVALID_PARAMETER &&
               NdkFpgaReadBuffer(ap, obuf, 0, x, 16) == STATUS_INVALID_PARAMETER,
           "NdkFpgaWrite/ReadBuffer with another adapter's MDL (same page numbers): INVALID_PARAMETER");
    NdkFpgaFreeBuffer(ap, obuf); /* not ours: ignored */
    tap_ok(NdkFpgaWriteBuffer(&other->pub, obuf, 0, x, 16) == STATUS_CONNECTION_ABORTED,
           "NdkFpgaFreeBuffer ignores another adapter's MDL (still usable on its own adapter)");
    NdkFpgaFreeBuffer(&other->pub, obuf);
    ndk_adapter_free(other);
    NdkFpgaFreeBuffer(ap, buf);
    NdkFpgaFreeBuffer(ap, sc);
    tap_ok(NdkFpgaAllocateBuffer(ap, PAGE_SIZE, &buf) == STATUS_SUCCESS && MmGetMdlPfnArray(buf)[0] == USER_BASE / PAGE_SIZE,
           "freed pages are reused");
    NdkFpgaFreeBuffer(ap, buf);
}

/* ---- MR and QP rule checks ---- */
static struct ndk_pd *fake_pd(struct ndk_adapter *ad, uint32_t pdn)
{
    struct ndk_pd *pd = calloc(1, sizeof(*pd));
    ndk_core_init(ad, &pd->core, &pd->pub.Header, NdkObjectTypePd, NULL, NULL, NULL);
    pd->pub.Dispatch = &ndk_pd_dispatch;
    pd->pdn = pdn;
    ndk_registry_add(&pd->pub.Header);
    return pd;
}

static struct ndk_mr *fake_mr(struct ndk_adapter *ad, int fast, uint32_t pages, int remote)
{
    struct ndk_mr *mr = calloc(1, sizeof(*mr));
    ndk_core_init(ad, &mr->core, &mr->pub.Header, NdkObjectTypeMr, NULL, NULL, NULL);
    mr->pub.Dispatch = &ndk_mr_dispatch;
    mr->fast = fast;
    mr->frmr_pages = pages;
    mr->remote_access = remote;
    mr->token = 0x1234;
    ndk_registry_add(&mr->pub.Header);
    return mr;
}

static struct ndk_mr *fake_mw(struct ndk_adapter *ad)
{
    struct ndk_mr *mw = calloc(1, sizeof(*mw));
    ndk_core_init(ad, &mw->core, &mw->mw.Header, NdkObjectTypeMw, NULL, NULL, NULL);
    mw->mw.Dispatch = &ndk_mw_dispatch;
    mw->token = 0x5678;
    ndk_registry_add(&mw->mw.Header);
    return mw;
}

static struct ndk_qp *fake_qp(struct ndk_adapter *ad, int connected)
{
    struct ndk_qp *qp = calloc(1, sizeof(*qp));
    ndk_core_init(ad, &qp->core, &qp->pub.Header, NdkObjectTypeQp, NULL, NULL, NULL);
    qp->pub.Dispatch = &ndk_qp_dispatch;
    qp->max_sge = 2;
    ndk_qp_set_connected(qp, connected);
    qp->max_recv_sge = 1;
    ndk_wq_init(&qp->iq, 4);
    ndk_wq_init(&qp->rq, 2);
    pthread_mutex_init(&qp->ring_lock, NULL);
    ndk_registry_add(&qp->pub.Header);
    return qp;
}

static void free_fake_qp(struct ndk_qp *qp)
{
    ndk_registry_del(&qp->pub.Header);
    pthread_mutex_destroy(&qp->ring_lock);
    free(qp->iq.slot);
    free(qp->rq.slot);
    free(qp);
}

static void check(NTSTATUS got, NTSTATUS want, const char *name)
{
    tap_ok(got == want, "%s: %s (expected %s)", name, NdkFpgaStatusName(got), NdkFpgaStatusName(want));
}

static void test_rules(struct ndk_adapter *ad)
{
    struct ndk_pd *pd = fake_pd(ad, 1);
    struct ndk_mr *fast = fake_mr(ad, 1, 4, 1), *local = fake_mr(ad, 1, 4, 0), *normal = fake_mr(ad, 0, 0, 0);
    struct ndk_mr *uninit = fake_mr(ad, 1, 0, 0);
    struct ndk_adapter *ad2 = fake_adapter();
    struct ndk_mr *foreign = fake_mr(ad2, 1, 4, 1);
    struct ndk_qp *qp = fake_qp(ad, 1), *unc = fake_qp(ad, 0);
    NDK_QP *q = &qp->pub, *u = &unc->pub;
    NDK_LOGICAL_ADDRESS pg[5] = {{.QuadPart = 0x20000}, {.QuadPart = 0x50000}, {.QuadPart = 0x21000},
                               {.QuadPart = 0x30000}, {.QuadPart = 0x31000}};
    PVOID va = (PVOID)(uintptr_t)0x7000010;
    ULONG W = NDK_OP_FLAG_ALLOW_REMOTE_WRITE;

    /* MR calls */
    NDK_MR *f = &fast->pub, *nm = &normal->pub;
    check(nm->Dispatch->NdkInitializeFastRegisterMr(nm, 4, TRUE, NULL, NULL), STATUS_INVALID_DEVICE_STATE,
          "NdkInitializeFastRegisterMr on a normal MR");
    check(f->Dispatch->NdkInitializeFastRegisterMr(f, 257, TRUE, NULL, NULL), STATUS_IMPLEMENTATION_LIMIT,
          "NdkInitializeFastRegisterMr above the adapter's pages");
    check(f->Dispatch->NdkInitializeFastRegisterMr(f, 0, TRUE, NULL, NULL), STATUS_INVALID_PARAMETER,
          "NdkInitializeFastRegisterMr of 0 pages");
    tap_ok(fast->frmr_pages == 4 && fast->inits_in_flight == 0, "refused initializations change nothing");
    PFN_NUMBER pfn[1] = {0x20};
    MDL m = {NULL, (PVOID)(uintptr_t)0x100000, 0, 100, pfn, NULL};
    check(f->Dispatch->NdkRegisterMr(f, &m, 100, 0, NULL, NULL), STATUS_INVALID_DEVICE_STATE, "NdkRegisterMr on a fast MR");
    check(nm->Dispatch->NdkRegisterMr(nm, &m, 100, 0x4, NULL, NULL), STATUS_INVALID_PARAMETER,
          "NdkRegisterMr remote write without local write (0x4)");
    check(nm->Dispatch->NdkRegisterMr(nm, &m, 100, 0x10, NULL, NULL), STATUS_INVALID_PARAMETER,
          "NdkRegisterMr unknown flag");
    check(nm->Dispatch->NdkRegisterMr(nm, &m, 0, 0, NULL, NULL), STATUS_INVALID_PARAMETER, "NdkRegisterMr length 0");
    check(nm->Dispatch->NdkDeregisterMr(nm, NULL, NULL), STATUS_INVALID_DEVICE_STATE, "NdkDeregisterMr when not registered");
    check(f->Dispatch->NdkDeregisterMr(f, NULL, NULL), STATUS_INVALID_DEVICE_STATE, "NdkDeregisterMr on a fast MR");
    tap_ok(normal->state == MR_CREATED, "refused registrations change nothing");

    /* Fast register */
    check(u->Dispatch->NdkFastRegister(u, NULL, f, 1, pg, 0x10, 100, va, W), STATUS_CONNECTION_INVALID,
          "NdkFastRegister on an unconnected QP");
    check(q->Dispatch->NdkFastRegister(q, NULL, &local->pub, 1, pg, 0x10, 100, va, W), STATUS_ACCESS_VIOLATION,
          "NdkFastRegister remote write, MR without RemoteAccess");
    check(q->Dispatch->NdkFastRegister(q, NULL, &local->pub, 1, pg, 0x10, 100, va, NDK_OP_FLAG_ALLOW_REMOTE_READ),
          STATUS_ACCESS_VIOLATION, "NdkFastRegister remote read, MR without RemoteAccess");
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 5, pg, 0x10, 100, va, W), STATUS_INVALID_PARAMETER,
          "NdkFastRegister above the MR's page count");
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 0, pg, 0x10, 100, va, W), STATUS_INVALID_PARAMETER,
          "NdkFastRegister of 0 pages");
    NDK_LOGICAL_ADDRESS mis[1] = {{.QuadPart = 0x20008}};
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 1, mis, 0x10, 100, va, W), STATUS_INVALID_PARAMETER,
          "NdkFastRegister page address not PAGE_SIZE aligned");
    NDK_LOGICAL_ADDRESS low[1] = {{.QuadPart = 0x1000}};
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 1, low, 0x10, 100, va, W), STATUS_INVALID_PARAMETER,
          "NdkFastRegister page outside the user region");
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 1, pg, 0x10, PAGE_SIZE - 0x10 + 1, va, W), STATUS_INVALID_PARAMETER,
          "NdkFastRegister length > pages * PAGE_SIZE - FBO");
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 1, pg, 0x10, 0, va, W), STATUS_INVALID_PARAMETER,
          "NdkFastRegister length 0");
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 1, pg, 0x11, 100, va, W), STATUS_INVALID_PARAMETER,
          "NdkFastRegister base VA not FBO + n * PAGE_SIZE");
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 1, pg, PAGE_SIZE, 100, va, W), STATUS_INVALID_PARAMETER,
          "NdkFastRegister FBO >= PAGE_SIZE");
    /* The fake adapter's link is down: a post the host lets through fails with the
     * link's status (CONNECTION_ABORTED), one it refuses with its own. */
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 1, pg, 0, 100, NULL, W), STATUS_CONNECTION_ABORTED,
          "NdkFastRegister BaseVirtualAddress 0 with FBO 0 is valid (reaches the link)");
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 1, pg, 0x10, 100, NULL, W), STATUS_INVALID_PARAMETER,
          "NdkFastRegister BaseVirtualAddress 0 with FBO 0x10");
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 1, pg, 0x10, PAGE_SIZE - 0x10, (PVOID)(UINTPTR_MAX - 0xFEF), W),
          STATUS_CONNECTION_ABORTED, "NdkFastRegister ending at the last byte of the address space (reaches the link)");
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 1, pg, 0, PAGE_SIZE, (PVOID)(UINTPTR_MAX - 0xFFF), W),
          STATUS_CONNECTION_ABORTED, "NdkFastRegister of the last page of the address space (reaches the link)");
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 2, pg, 0x10, 2 * PAGE_SIZE - 0x10, (PVOID)(UINTPTR_MAX - 0xFEF), W),
          STATUS_INVALID_PARAMETER, "NdkFastRegister VA + length - 1 wraps");
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 1, pg, 0x10, 100, va, 0x40), STATUS_INVALID_PARAMETER,
          "NdkFastRegister unknown flag (INLINE)");
    check(q->Dispatch->NdkFastRegister(q, NULL, nm, 1, pg, 0x10, 100, va, W), STATUS_INVALID_DEVICE_STATE,
          "NdkFastRegister on a normal MR");
    check(q->Dispatch->NdkFastRegister(q, NULL, &uninit->pub, 1, pg, 0x10, 100, va, 0), STATUS_INVALID_DEVICE_STATE,
          "NdkFastRegister on an uninitialized MR");
    check(q->Dispatch->NdkFastRegister(q, NULL, &foreign->pub, 1, pg, 0x10, 100, va, W), STATUS_INVALID_PARAMETER,
          "NdkFastRegister MR of another adapter");
    check(q->Dispatch->NdkFastRegister(q, NULL, f, 4, pg + 1, 0x10, 4 * PAGE_SIZE - 0x10, va,
                                       W | NDK_OP_FLAG_RDMA_READ_SINK),
          STATUS_CONNECTION_ABORTED, "a valid NdkFastRegister (RDMA_READ_SINK accepted) reaches the link");
    tap_ok(qp->iq.tail == qp->iq.head, "a post the link refused leaves no outstanding request");

    /* Invalidate */
    check(u->Dispatch->NdkInvalidate(u, NULL, &fast->pub.Header, 0), STATUS_CONNECTION_INVALID,
          "NdkInvalidate on an unconnected QP");
    check(q->Dispatch->NdkInvalidate(q, NULL, &normal->pub.Header, 0), STATUS_INVALID_DEVICE_STATE,
          "NdkInvalidate of a normal MR");
    check(q->Dispatch->NdkInvalidate(q, NULL, &pd->pub.Header, 0), STATUS_INVALID_PARAMETER, "NdkInvalidate of a PD");
    check(q->Dispatch->NdkInvalidate(q, NULL, &foreign->pub.Header, 0), STATUS_INVALID_PARAMETER,
          "NdkInvalidate MR of another adapter");
    check(q->Dispatch->NdkInvalidate(q, NULL, &fast->pub.Header, NDK_OP_FLAG_ALLOW_REMOTE_READ),
          STATUS_INVALID_PARAMETER, "NdkInvalidate with an access flag");

    /* Read / Write */
    NDK_SGE sge[3] = {{{.LogicalAddress.QuadPart = 0x20000}, 16, NF_ADAPTER_PRIVILEGED_TOKEN},
                      {{.LogicalAddress.QuadPart = 0x21000}, 16, NF_ADAPTER_PRIVILEGED_TOKEN},
                      {{.LogicalAddress.QuadPart = 0x22000}, 16, NF_ADAPTER_PRIVILEGED_TOKEN}};
    check(u->Dispatch->NdkWrite(u, NULL, sge, 1, 0x1000, 0x101, 0), STATUS_CONNECTION_INVALID,
          "NdkWrite on an unconnected QP");
    check(u->Dispatch->NdkRead(u, NULL, sge, 1, 0x1000, 0x101, 0), STATUS_CONNECTION_INVALID,
          "NdkRead on an unconnected QP");
    check(q->Dispatch->NdkWrite(q, NULL, sge, 3, 0x1000, 0x101, 0), STATUS_INVALID_PARAMETER,
          "NdkWrite more SGEs than the QP's maximum");
    check(q->Dispatch->NdkWrite(q, NULL, NULL, 1, 0x1000, 0x101, 0), STATUS_INVALID_PARAMETER, "NdkWrite NULL SGL");
    NDK_SGE bad = {{.LogicalAddress.QuadPart = 0x1000}, 16, NF_ADAPTER_PRIVILEGED_TOKEN};
    check(q->Dispatch->NdkRead(q, NULL, &bad, 1, 0x1000, 0x101, 0), STATUS_INVALID_PARAMETER,
          "privileged-token SGE outside the user region");
    check(q->Dispatch->NdkWrite(q, NULL, sge, 1, 0x1000, 0x101, NDK_OP_FLAG_INLINE), STATUS_INVALID_PARAMETER,
          "NdkWrite INLINE (MaxInlineDataSize 0)");

    /* Send / SendAndInvalidate: NdkWrite's rules; Receive: the QP's receive limits only */
    check(u->Dispatch->NdkSend(u, NULL, sge, 1, 0), STATUS_CONNECTION_INVALID, "NdkSend on an unconnected QP");
    check(u->Dispatch->NdkSendAndInvalidate(u, NULL, sge, 1, 0, 0x101), STATUS_CONNECTION_INVALID,
          "NdkSendAndInvalidate on an unconnected QP");
    check(q->Dispatch->NdkSend(q, NULL, sge, 3, 0), STATUS_INVALID_PARAMETER, "NdkSend more SGEs than the QP's maximum");
    check(q->Dispatch->NdkSend(q, NULL, NULL, 1, 0), STATUS_INVALID_PARAMETER, "NdkSend NULL SGL");
    check(q->Dispatch->NdkSend(q, NULL, &bad, 1, 0), STATUS_INVALID_PARAMETER,
          "NdkSend privileged-token SGE outside the user region");
    check(q->Dispatch->NdkSend(q, NULL, sge, 1, NDK_OP_FLAG_INLINE), STATUS_INVALID_PARAMETER,
          "NdkSend INLINE (MaxInlineDataSize 0)");
    check(q->Dispatch->NdkSendAndInvalidate(q, NULL, sge, 1, NDK_OP_FLAG_INLINE, 0x101), STATUS_INVALID_PARAMETER,
          "NdkSendAndInvalidate INLINE");
    check(q->Dispatch->NdkSend(q, NULL, NULL, 0, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT), STATUS_CONNECTION_ABORTED,
          "NdkSend of 0 bytes, solicited (reaches the link)");
    check(u->Dispatch->NdkReceive(u, NULL, sge, 1), STATUS_CONNECTION_ABORTED,
          "NdkReceive on an unconnected QP is accepted (reaches the link)");
    check(q->Dispatch->NdkReceive(q, NULL, sge, 2), STATUS_INVALID_PARAMETER,
          "NdkReceive more SGEs than the QP's MaxReceiveRequestSge");
    check(q->Dispatch->NdkReceive(q, NULL, NULL, 1), STATUS_INVALID_PARAMETER, "NdkReceive NULL SGL");
    check(q->Dispatch->NdkReceive(q, NULL, NULL, 0), STATUS_CONNECTION_ABORTED,
          "NdkReceive without SGEs (reaches the link)");
    tap_ok(qp->rq.tail == qp->rq.head && unc->rq.tail == unc->rq.head,
           "a receive the link refused leaves nothing pending");

    /* Bind and the window's invalidation: the host checks the objects, the flags and
     * the connection; the rest (range, PD, the MR's state and rights) is the board's. */
    struct ndk_mr *win = fake_mw(ad), *foreign_win = fake_mw(ad2);
    NDK_MW *w = &win->mw;
    const ULONG R = NDK_OP_FLAG_ALLOW_REMOTE_READ;
    check(u->Dispatch->NdkBind(u, NULL, f, w, va, 16, R), STATUS_CONNECTION_INVALID, "NdkBind on an unconnected QP");
    check(q->Dispatch->NdkBind(q, NULL, f, NULL, va, 16, R), STATUS_INVALID_PARAMETER, "NdkBind without a window");
    check(q->Dispatch->NdkBind(q, NULL, NULL, w, va, 16, R), STATUS_INVALID_PARAMETER, "NdkBind without an MR");
    check(q->Dispatch->NdkBind(q, NULL, (NDK_MR *)(void *)w, w, va, 16, R), STATUS_INVALID_PARAMETER,
          "NdkBind with a window as the MR");
    check(q->Dispatch->NdkBind(q, NULL, f, (NDK_MW *)(void *)f, va, 16, R), STATUS_INVALID_PARAMETER,
          "NdkBind with an MR as the window");
    check(q->Dispatch->NdkBind(q, NULL, &foreign->pub, w, va, 16, R), STATUS_INVALID_PARAMETER,
          "NdkBind MR of another adapter");
    check(q->Dispatch->NdkBind(q, NULL, f, &foreign_win->mw, va, 16, R), STATUS_INVALID_PARAMETER,
          "NdkBind window of another adapter");
    check(q->Dispatch->NdkBind(q, NULL, f, w, va, 16, NDK_OP_FLAG_INLINE), STATUS_INVALID_PARAMETER,
          "NdkBind unknown flag (INLINE)");
    check(q->Dispatch->NdkBind(q, NULL, nm, w, va, 16, R | W), STATUS_CONNECTION_ABORTED,
          "NdkBind inside a registered MR (reaches the link: its range and rights are the board's)");
    check(q->Dispatch->NdkBind(q, NULL, f, w, va, 0, R), STATUS_CONNECTION_ABORTED,
          "NdkBind of length 0 (reaches the link: the firmware refuses it)");
    check(u->Dispatch->NdkInvalidate(u, NULL, &w->Header, 0), STATUS_CONNECTION_INVALID,
          "NdkInvalidate of a window on an unconnected QP");
    check(q->Dispatch->NdkInvalidate(q, NULL, &w->Header, 0), STATUS_CONNECTION_ABORTED,
          "NdkInvalidate of a window (reaches the link)");
    check(q->Dispatch->NdkInvalidate(q, NULL, &foreign_win->mw.Header, 0), STATUS_INVALID_PARAMETER,
          "NdkInvalidate window of another adapter");
    tap_ok(w->Dispatch->NdkGetRemoteTokenFromMw(w) == 0x5678 &&
               w->Dispatch->NdkGetRemoteTokenFromMw((NDK_MW *)(void *)f) == 0,
           "NdkGetRemoteTokenFromMw: the window's token, 0 for what is not a live window");
    struct ndk_mr win_copy = *win;
    check(q->Dispatch->NdkBind(q, NULL, f, &win_copy.mw, va, 16, R), STATUS_INVALID_PARAMETER,
          "NdkBind with a hand-made window (a copy of a live one)");

    /* PD calls that need no board */
    NDK_PD *p = &pd->pub;
    UINT32 tok = 0;
    p->Dispatch->NdkGetPrivilegedMemoryRegionToken(p, &tok);
    tap_ok(tok == NF_ADAPTER_PRIVILEGED_TOKEN, "NdkGetPrivilegedMemoryRegionToken");
    NDK_MW *mw = w;
    check(p->Dispatch->NdkCreateMw(p, NULL, NULL, &mw), STATUS_CONNECTION_ABORTED, "NdkCreateMw (reaches the link)");
    tap_ok(mw == NULL, "a failed NdkCreateMw leaves no window");
    check(p->Dispatch->NdkCreateMw(p, NULL, NULL, NULL), STATUS_INVALID_PARAMETER, "NdkCreateMw without an output");
    check(p->Dispatch->NdkCreateMw((NDK_PD *)(void *)nm, NULL, NULL, &mw), STATUS_INVALID_PARAMETER,
          "NdkCreateMw on what is not a PD");
    NDK_QP *nq = NULL;
    NDK_CQ *cq = NULL;
    ad->pub.Dispatch->NdkCreateCq(&ad->pub, 8, NULL, NULL, NULL, NULL, NULL, &cq);
    check(p->Dispatch->NdkCreateQp(p, cq, cq, NULL, NF_ADAPTER_MAX_RQ_DEPTH + 1, 4, 1, 1, 0, NULL, NULL, &nq),
          STATUS_INVALID_PARAMETER, "NdkCreateQp with a receive queue above MaxReceiveQueueDepth");
    check(p->Dispatch->NdkCreateQp(p, cq, cq, NULL, 4, 4, NF_ADAPTER_MAX_RECV_SGE + 1, 1, 0, NULL, NULL, &nq),
          STATUS_INVALID_PARAMETER, "NdkCreateQp with more receive SGEs than MaxReceiveRequestSge");
    check(p->Dispatch->NdkCreateQp(p, NULL, cq, NULL, 4, 4, 1, 1, 0, NULL, NULL, &nq), STATUS_INVALID_PARAMETER,
          "NdkCreateQp with a receive queue but no receive CQ");
    check(p->Dispatch->NdkCreateQp(p, cq, cq, NULL, NF_ADAPTER_MAX_RQ_DEPTH, 4, NF_ADAPTER_MAX_RECV_SGE, 1, 0, NULL,
                                   NULL, &nq),
          STATUS_CONNECTION_ABORTED, "NdkCreateQp with the largest receive queue (reaches the link)");
    check(p->Dispatch->NdkCreateQp(p, cq, cq, NULL, 0, 4, 0, 5, 0, NULL, NULL, &nq), STATUS_INVALID_PARAMETER,
          "NdkCreateQp with more SGEs than the adapter's");
    check(p->Dispatch->NdkCreateQp(p, cq, cq, NULL, 0, 4, 0, 1, 64, NULL, NULL, &nq), STATUS_INVALID_PARAMETER,
          "NdkCreateQp with inline data");
    check(p->Dispatch->NdkCreateQp(p, cq, cq, NULL, 4, 4, 1, 1, 1, NULL, NULL, &nq), STATUS_INVALID_PARAMETER,
          "NdkCreateQp with a receive queue and one byte of inline data (MaxInlineDataSize 0)");
    check(p->Dispatch->NdkCreateQp(p, cq, NULL, NULL, 0, 4, 0, 1, 0, NULL, NULL, &nq), STATUS_INVALID_PARAMETER,
          "NdkCreateQp without an initiator CQ");
    NdkCloseObject(&cq->Header, NULL, NULL);

    /* Objects of the library are used only while live: a hand-made copy (same bytes,
     * same dispatch table) or a freed one is refused. */
    struct ndk_qp fake = *qp;
    struct ndk_mr fake_mr_copy = *fast;
    check(fake.pub.Dispatch->NdkFastRegister(&fake.pub, NULL, &fast->pub, 1, pg, 0x10, 100, va, 0),
          STATUS_INVALID_PARAMETER, "NdkFastRegister on a hand-made QP (a copy of a live one)");
    check(q->Dispatch->NdkFastRegister(q, NULL, &fake_mr_copy.pub, 1, pg, 0x10, 100, va, 0), STATUS_INVALID_PARAMETER,
          "NdkFastRegister with a hand-made MR (a copy of a live one)");
    check(q->Dispatch->NdkInvalidate(q, NULL, &fake_mr_copy.pub.Header, 0), STATUS_INVALID_PARAMETER,
          "NdkInvalidate of a hand-made MR");
    check(fake_mr_copy.pub.Dispatch->NdkInitializeFastRegisterMr(&fake_mr_copy.pub, 1, FALSE, NULL, NULL),
          STATUS_INVALID_PARAMETER, "NdkInitializeFastRegisterMr on a hand-made MR");
    check(NdkCloseObject(&fake.pub.Header, NULL, NULL), STATUS_SUCCESS, "NdkCloseObject of a hand-made QP: nothing");
    struct ndk_adapter fake_ad = *ad;
    ULONG isz = sizeof(NDK_ADAPTER_INFO);
    NDK_ADAPTER_INFO ainfo;
    check(fake_ad.pub.Dispatch->NdkQueryAdapterInfo(&fake_ad.pub, &ainfo, &isz), STATUS_INVALID_PARAMETER,
          "NdkQueryAdapterInfo on a hand-made adapter");

    struct ndk_mr *mrs[7] = {fast, local, normal, uninit, foreign, win, foreign_win};
    for (int i = 0; i < 7; i++) {
        ndk_registry_del(&mrs[i]->pub.Header);
        free(mrs[i]);
    }
    struct ndk_qp *qps[2] = {qp, unc};
    for (int i = 0; i < 2; i++)
        free_fake_qp(qps[i]);
    ndk_registry_del(&pd->pub.Header);
    free(pd);
    ndk_adapter_free(ad2);
}

/* Every flag bit of every work request against the one mask per request type
 * (tools/layout.toml KNOWN_FLAGS, the firmware's too): a known bit reaches the link
 * (down here: CONNECTION_ABORTED), an unknown one is INVALID_PARAMETER. */
static void test_flag_masks(struct ndk_adapter *ad)
{
    struct ndk_mr *fast = fake_mr(ad, 1, 4, 1);
    struct ndk_qp *qp = fake_qp(ad, 1);
    NDK_QP *q = &qp->pub;
    NDK_LOGICAL_ADDRESS pg[1] = {{.QuadPart = 0x20000}};
    NDK_SGE sge = {{.LogicalAddress.QuadPart = 0x20000}, 16, NF_ADAPTER_PRIVILEGED_TOKEN};
    PVOID va = (PVOID)(uintptr_t)0x7000000;
    struct ndk_mr *win = fake_mw(ad);
    int bad[7] = {0, 0, 0, 0, 0, 0, 0};
    for (unsigned b = 0; b < 32; b++) {
        ULONG f = 1u << b;
        const NTSTATUS got[7] = {
            q->Dispatch->NdkFastRegister(q, NULL, &fast->pub, 1, pg, 0, 100, va, f),
            q->Dispatch->NdkInvalidate(q, NULL, &fast->pub.Header, f),
            q->Dispatch->NdkRead(q, NULL, &sge, 1, 0x1000, 0x101, f),
            q->Dispatch->NdkWrite(q, NULL, &sge, 1, 0x1000, 0x101, f),
            q->Dispatch->NdkSend(q, NULL, &sge, 1, f),
            q->Dispatch->NdkSendAndInvalidate(q, NULL, &sge, 1, f, 0x101),
            q->Dispatch->NdkBind(q, NULL, &fast->pub, &win->mw, va, 16, f),
        };
        const ULONG mask[7] = {NF_KNOWN_FLAGS_FAST_REGISTER, NF_KNOWN_FLAGS_INVALIDATE, NF_KNOWN_FLAGS_RDMA,
                               NF_KNOWN_FLAGS_RDMA, NF_KNOWN_FLAGS_SEND, NF_KNOWN_FLAGS_SEND, NF_KNOWN_FLAGS_BIND};
        for (int k = 0; k < 7; k++)
            bad[k] += got[k] != ((mask[k] & f) ? STATUS_CONNECTION_ABORTED : STATUS_INVALID_PARAMETER);
    }
    tap_ok(!bad[0], "NdkFastRegister: each flag bit accepted exactly when in NF_KNOWN_FLAGS_FAST_REGISTER");
    tap_ok(!bad[1], "NdkInvalidate: each flag bit accepted exactly when in NF_KNOWN_FLAGS_INVALIDATE");
    tap_ok(!bad[2] && !bad[3], "NdkRead, NdkWrite: each flag bit accepted exactly when in NF_KNOWN_FLAGS_RDMA");
    tap_ok(!bad[4] && !bad[5] && !(NF_KNOWN_FLAGS_SEND & NDK_OP_FLAG_INLINE),
           "NdkSend, NdkSendAndInvalidate: each flag bit accepted exactly when in NF_KNOWN_FLAGS_SEND (not INLINE)");
    tap_ok(!bad[6], "NdkBind: each flag bit accepted exactly when in NF_KNOWN_FLAGS_BIND");
    struct ndk_mr *normal = fake_mr(ad, 0, 0, 0);
    MDL *buf = NULL;
    NdkFpgaAllocateBuffer(&ad->pub, 100, &buf);
    const ULONG remote_write_only = NDK_MR_FLAG_ALLOW_REMOTE_WRITE & ~NDK_MR_FLAG_ALLOW_LOCAL_WRITE;
    int mr_bad = !buf;
    for (unsigned b = 0; buf && b < 32; b++) {
        ULONG f = 1u << b;
        NTSTATUS st = normal->pub.Dispatch->NdkRegisterMr(&normal->pub, buf, 100, f, NULL, NULL);
        /* 0x4 alone: remote write without local write, refused as it should be. */
        int known = (NF_KNOWN_FLAGS_MR_REGISTER & f) && f != remote_write_only;
        mr_bad += st != (known ? STATUS_CONNECTION_ABORTED : STATUS_INVALID_PARAMETER);
    }
    NdkFpgaFreeBuffer(&ad->pub, buf);
    tap_ok(!mr_bad, "NdkRegisterMr: each flag bit accepted exactly when in NF_KNOWN_FLAGS_MR_REGISTER");
    struct ndk_mr *mrs[3] = {fast, normal, win};
    for (int i = 0; i < 3; i++) {
        ndk_registry_del(&mrs[i]->pub.Header);
        free(mrs[i]);
    }
    free_fake_qp(qp);
}

/* ---- on the software adapter: what the firmware decides ---- */

#define MODEL_WAIT_MS 10000
#define MODEL_PORT 4791

/* One completion to wait for; a semaphore orders the callback's stores before the wait. */
struct waiter {
    sem_t sem;
    NTSTATUS st;
    NDK_CONNECTOR *incoming;
};

static VOID w_request(PVOID ctx, NTSTATUS st)
{
    struct waiter *w = ctx;
    w->st = st;
    sem_post(&w->sem);
}

static VOID w_connect_event(PVOID ctx, NDK_CONNECTOR *c)
{
    struct waiter *w = ctx;
    w->incoming = c;
    w_request(w, STATUS_SUCCESS);
}

/* The final status of a call that may return STATUS_PENDING (then its callback's). */
static NTSTATUS w_wait(struct waiter *w, NTSTATUS st)
{
    if (st != STATUS_PENDING && st != STATUS_SUCCESS)
        return st;
    struct timespec until;
    deadline_in(&until, MODEL_WAIT_MS);
    while (sem_timedwait(&w->sem, &until) != 0)
        if (errno != EINTR)
            return STATUS_IO_TIMEOUT;
    return w->st;
}

struct model {
    NDK_ADAPTER *ad;
    NDK_CQ *cq;
    NDK_LISTENER *listener;
    struct waiter incoming;
};

/* Two QPs of PD p connected to each other over the loopback (0 on failure). */
static int model_pair(struct model *md, NDK_PD *p, NDK_QP **qa, NDK_QP **qb)
{
    NDK_CONNECTOR *ca = NULL;
    if (p->Dispatch->NdkCreateQp(p, md->cq, md->cq, (PVOID)0x5150, 0, 8, 0, 1, 0, NULL, NULL, qa) != STATUS_SUCCESS ||
        p->Dispatch->NdkCreateQp(p, md->cq, md->cq, (PVOID)0x5150, 0, 8, 0, 1, 0, NULL, NULL, qb) != STATUS_SUCCESS ||
        md->ad->Dispatch->NdkCreateConnector(md->ad, NULL, NULL, &ca) != STATUS_SUCCESS)
        return 0;
    struct sockaddr_in dst = loopback_addr(MODEL_PORT);
    struct waiter wc, wa, wcc;
    sem_init(&wc.sem, 0, 0);
    sem_init(&wa.sem, 0, 0);
    sem_init(&wcc.sem, 0, 0);
    NTSTATUS st = ca->Dispatch->NdkConnect(ca, *qa, NULL, 0, (PSOCKADDR)&dst, sizeof(dst), 1, 1, NULL, 0,
                                           w_request, &wc);
    if (st != STATUS_PENDING || w_wait(&md->incoming, STATUS_PENDING) != STATUS_SUCCESS)
        return 0;
    NDK_CONNECTOR *cb = md->incoming.incoming;
    st = cb->Dispatch->NdkAccept(cb, *qb, 1, 1, NULL, 0, NULL, NULL, w_request, &wa);
    if (st != STATUS_PENDING || w_wait(&wc, st) != STATUS_SUCCESS)
        return 0;
    st = ca->Dispatch->NdkCompleteConnect(ca, NULL, NULL, w_request, &wcc);
    return w_wait(&wcc, st) == STATUS_SUCCESS && w_wait(&wa, STATUS_PENDING) == STATUS_SUCCESS;
}

/* A fast-register MR of PD p, initialized for npages (NULL on failure). */
static NDK_MR *model_frmr(NDK_PD *p, ULONG npages)
{
    NDK_MR *mr = NULL;
    if (p->Dispatch->NdkCreateMr(p, TRUE, NULL, NULL, &mr) != STATUS_SUCCESS ||
        mr->Dispatch->NdkInitializeFastRegisterMr(mr, npages, TRUE, NULL, NULL) != STATUS_SUCCESS)
        return NULL;
    return mr;
}

/* "The status" of a work request: the post's if it refused it, else its completion's. */
static NTSTATUS model_status(struct model *md, NTSTATUS posted, const void *ctx)
{
    if (posted != STATUS_SUCCESS)
        return posted;
    for (int waited = 0; waited < MODEL_WAIT_MS; waited++) {
        NDK_RESULT_EX r;
        while (md->cq->Dispatch->NdkGetCqResultsEx(md->cq, &r, 1) == 1)
            if (r.RequestContext == ctx)
                return r.Status;
        usleep(1000);
    }
    return STATUS_IO_TIMEOUT;
}

/* Under the adapter's lock, as the link thread delivers one: a CQE for the pending
 * receive `which` places after the oldest of qp (by the cookie the library gave it),
 * or (which < 0) for the one of the last call again. */
static void inject_receive_cqe(NDK_QP *q, uint32_t status, uint32_t bytes, uint32_t op_type, uint32_t token,
                               uint32_t cflags, int which)
{
    struct ndk_qp *qp = NDK_CONTAINER(q, struct ndk_qp, pub);
    struct ndk_adapter *ad = qp->core.ad;
    static uint32_t last;
    pthread_mutex_lock(&ad->lock);
    pthread_mutex_lock(&qp->ring_lock);
    uint32_t id = which < 0 ? last : qp->rq.head + (uint32_t)which;
    pthread_mutex_unlock(&qp->ring_lock);
    last = id;
    struct nf_cqe c = {.qpn = qp->qpn, .wr_id = id, .status = status, .bytes = bytes, .op_type = op_type,
                       .refuse = 0, .token = token, .cflags = cflags};
    ndk_qp_on_cqe(ad, &c, ndk_status(c.status));
    pthread_mutex_unlock(&ad->lock);
}

/* Up to want results of cq, waiting for them (bounded). */
static ULONG model_results(NDK_CQ *cq, NDK_RESULT_EX *r, ULONG want)
{
    ULONG got = 0;
    for (int waited = 0; got < want && waited < MODEL_WAIT_MS; waited++) {
        got += cq->Dispatch->NdkGetCqResultsEx(cq, r + got, want - got);
        if (got < want)
            usleep(1000);
    }
    return got;
}

static VOID w_closed(PVOID ctx)
{
    w_request(ctx, STATUS_SUCCESS);
}

/* Receives on the software adapter. The firmware fills a receive only when a Send
 * arrives; here the CQEs are made by hand (the link thread's path), so what is
 * checked is the host's part: the FIFO of pending receives and its cookies, routing
 * to the receive CQ, NDK_RESULT_EX, SOLICITED arming, flush and close. */
static void test_model_receives(struct model *md, NDK_PD *p, NDK_LOGICAL_ADDRESS page)
{
    struct waiter wn, wc;
    sem_init(&wn.sem, 0, 0);
    sem_init(&wc.sem, 0, 0);
    NDK_CQ *rcq = NULL;
    NDK_QP *qr = NULL;
    int up = md->ad->Dispatch->NdkCreateCq(md->ad, 16, w_request, &wn, NULL, NULL, NULL, &rcq) == STATUS_SUCCESS &&
             p->Dispatch->NdkCreateQp(p, rcq, md->cq, (PVOID)0x7070, 4, 4, 2, 1, 0, NULL, NULL, &qr) == STATUS_SUCCESS;
    if (!tap_ok(up, "model: a QP with a receive queue of 4 (2 SGEs each) and a receive CQ of its own"))
        return;
    NDK_SGE sge[2] = {{{.LogicalAddress.QuadPart = page.QuadPart}, 64, NF_ADAPTER_PRIVILEGED_TOKEN},
                      {{.LogicalAddress.QuadPart = page.QuadPart + 64}, 64, NF_ADAPTER_PRIVILEGED_TOKEN}};
    int posted = 0;
    for (uintptr_t i = 11; i <= 14; i++)
        posted += qr->Dispatch->NdkReceive(qr, (PVOID)i, sge, (ULONG)(i % 2 + 1)) == STATUS_SUCCESS;
    tap_ok(posted == 4 && qr->Dispatch->NdkReceive(qr, (PVOID)15, sge, 1) == STATUS_INSUFFICIENT_RESOURCES,
           "model: four receives pending on a QP not connected yet; a fifth: INSUFFICIENT_RESOURCES inline");

    rcq->Dispatch->NdkArmCq(rcq, NDK_CQ_NOTIFY_SOLICITED);
    inject_receive_cqe(qr, 0, 5, NF_NDK_OP_RECEIVE, 0, 0, 0);
    NDK_RESULT plain[2];
    ULONG n = 0;
    for (int waited = 0; n == 0 && waited < 100; waited++) {
        n = rcq->Dispatch->NdkGetCqResults(rcq, plain, 2);
        usleep(1000);
    }
    tap_ok(n == 1 && plain[0].RequestContext == (PVOID)11 && plain[0].Status == STATUS_SUCCESS &&
               plain[0].BytesTransferred == 5 && plain[0].QPContext == (PVOID)0x7070,
           "model: a receive CQE completes the oldest receive on the receive CQ (NdkGetCqResults)");
    tap_ok(sem_trywait(&wn.sem) != 0, "model: ... an unsolicited success does not notify a CQ armed SOLICITED");
    inject_receive_cqe(qr, 0, 7, NF_NDK_OP_RECEIVE_AND_INVALIDATE, 0x4321, NF_CQE_FLAG_SOLICITED, 0);
    inject_receive_cqe(qr, 0, 7, NF_NDK_OP_RECEIVE_AND_INVALIDATE, 0x4321, NF_CQE_FLAG_SOLICITED, -1);
    NDK_RESULT_EX r[4];
    n = model_results(rcq, r, 1);
    tap_ok(w_wait(&wn, STATUS_PENDING) == STATUS_SUCCESS && n == 1 && r[0].RequestContext == (PVOID)12 &&
               r[0].Type == NdkOperationTypeReceiveAndInvalidate && r[0].BytesTransferred == 7 &&
               r[0].TypeSpecificCompletionOutput == 0x4321 && r[0].ProviderErrorCode == 0,
           "model: a solicited receive-and-invalidate notifies; NDK_RESULT_EX Type 0x8001, the token");
    tap_ok(rcq->Dispatch->NdkGetCqResultsEx(rcq, r, 4) == 0, "model: ... the same CQE again is stale: no result");
    rcq->Dispatch->NdkArmCq(rcq, NDK_CQ_NOTIFY_SOLICITED);
    inject_receive_cqe(qr, (uint32_t)STATUS_ACCESS_VIOLATION, 0, NF_NDK_OP_RECEIVE, 0, 0, 0);
    n = model_results(rcq, r, 1);
    tap_ok(w_wait(&wn, STATUS_PENDING) == STATUS_SUCCESS && n == 1 && r[0].RequestContext == (PVOID)13 &&
               r[0].Status == STATUS_ACCESS_VIOLATION && r[0].Type == NdkOperationTypeReceive,
           "model: a failed receive notifies a CQ armed SOLICITED");

    qr->Dispatch->NdkFlush(qr);
    n = model_results(rcq, r, 1);
    tap_ok(n == 1 && r[0].RequestContext == (PVOID)14 && r[0].Status == STATUS_CANCELLED &&
               r[0].Type == NdkOperationTypeReceive,
           "model: NdkFlush completes the receive left pending CANCELLED");
    posted = 0;
    for (uintptr_t i = 21; i <= 23; i++)
        posted += qr->Dispatch->NdkReceive(qr, (PVOID)i, sge, 1) == STATUS_SUCCESS;
    /* The adapter completes a receive posted on a broken QP at once, ahead of older ones. */
    inject_receive_cqe(qr, (uint32_t)STATUS_CANCELLED, 0, NF_NDK_OP_RECEIVE, 0, 0, 2);
    n = model_results(rcq, r, 1);
    tap_ok(posted == 3 && n == 1 && r[0].RequestContext == (PVOID)23 && r[0].Status == STATUS_CANCELLED,
           "model: a receive completed ahead of older ones completes alone");
    NTSTATUS st = NdkCloseObject(&qr->Header, w_closed, &wc);
    int closed = st == STATUS_SUCCESS || (st == STATUS_PENDING && w_wait(&wc, st) == STATUS_SUCCESS);
    n = rcq->Dispatch->NdkGetCqResultsEx(rcq, r, 4);
    tap_ok(closed && n == 2 && r[0].RequestContext == (PVOID)21 && r[1].RequestContext == (PVOID)22 &&
               r[0].Status == STATUS_CANCELLED && r[1].Status == STATUS_CANCELLED,
           "model: closing a QP with two receives pending completes them CANCELLED, in order, before the close");
    NdkCloseObject(&rcq->Header, NULL, NULL);
}

static void test_model(void)
{
    struct model md;
    memset(&md, 0, sizeof(md));
    sem_init(&md.incoming.sem, 0, 0);
    NDK_PD *pa = NULL, *pb = NULL;
    NDK_QP *qa = NULL, *qb = NULL, *qc = NULL, *qd = NULL;
    MDL *buf = NULL;
    struct sockaddr_in addr = loopback_addr(MODEL_PORT);
    int up = NdkFpgaOpenAdapter("model", &md.ad) == STATUS_SUCCESS;
    up = up && md.ad->Dispatch->NdkCreateCq(md.ad, 64, NULL, NULL, NULL, NULL, NULL, &md.cq) == STATUS_SUCCESS &&
         md.ad->Dispatch->NdkCreatePd(md.ad, NULL, NULL, &pa) == STATUS_SUCCESS &&
         md.ad->Dispatch->NdkCreatePd(md.ad, NULL, NULL, &pb) == STATUS_SUCCESS &&
         md.ad->Dispatch->NdkCreateListener(md.ad, w_connect_event, &md.incoming, NULL, NULL, &md.listener) ==
             STATUS_SUCCESS &&
         md.listener->Dispatch->NdkListen(md.listener, (PSOCKADDR)&addr, sizeof(addr), NULL, NULL) ==
             STATUS_SUCCESS &&
         NdkFpgaAllocateBuffer(md.ad, 2 * PAGE_SIZE, &buf) == STATUS_SUCCESS;
    up = up && model_pair(&md, pa, &qa, &qb) && model_pair(&md, pb, &qc, &qd);
    NDK_MR *a1 = up ? model_frmr(pa, 2) : NULL, *a2 = up ? model_frmr(pa, 2) : NULL, *a3 = up ? model_frmr(pa, 2) : NULL;
    if (!tap_ok(up && a1 && a2 && a3, "software adapter: two PDs, a connected QP pair in each, three fast MRs")) {
        if (md.ad)
            NdkFpgaCloseAdapter(md.ad);
        return;
    }
    const PFN_NUMBER *pfn = MmGetMdlPfnArray(buf);
    NDK_LOGICAL_ADDRESS pages[2] = {{.QuadPart = (LONGLONG)pfn[0] << PAGE_SHIFT},
                                    {.QuadPart = (LONGLONG)pfn[1] << PAGE_SHIFT}};
    const ULONG rw = NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ;
    PVOID top = (PVOID)(UINTPTR_MAX - (PAGE_SIZE - 1));

    check(model_status(&md, qa->Dispatch->NdkFastRegister(qa, (PVOID)1, a1, 1, pages, 0, PAGE_SIZE, NULL, rw), (PVOID)1),
          STATUS_SUCCESS, "model: NdkFastRegister at BaseVirtualAddress 0 with FBO 0");
    check(model_status(&md, qa->Dispatch->NdkFastRegister(qa, (PVOID)2, a2, 1, pages, 0, PAGE_SIZE, top, rw), (PVOID)2),
          STATUS_SUCCESS, "model: NdkFastRegister of the last page of the address space");
    const uint8_t pattern[8] = {0xA5, 1, 2, 3, 4, 5, 6, 0x5A};
    uint8_t landed[8] = {0};
    NdkFpgaWriteBuffer(md.ad, buf, PAGE_SIZE, pattern, sizeof(pattern));
    NDK_SGE last8 = {{.LogicalAddress = pages[1]}, 8, NF_ADAPTER_PRIVILEGED_TOKEN};
    check(model_status(&md, qa->Dispatch->NdkWrite(qa, (PVOID)8, &last8, 1, UINT64_MAX - 7,
                                                   a2->Dispatch->NdkGetRemoteTokenFromMr(a2), 0),
                       (PVOID)8),
          STATUS_SUCCESS, "model: an RDMA Write of the last 8 bytes of the address space through that token");
    tap_ok(NdkFpgaReadBuffer(md.ad, buf, PAGE_SIZE - 8, landed, sizeof(landed)) == STATUS_SUCCESS &&
               !memcmp(landed, pattern, sizeof(pattern)),
           "model: ... the bytes landed in the last 8 bytes of the registered page");
    check(model_status(&md, qa->Dispatch->NdkFastRegister(qa, (PVOID)3, a3, 2, pages, 0, 2 * PAGE_SIZE, top, rw),
                       (PVOID)3),
          STATUS_INVALID_PARAMETER, "model: NdkFastRegister whose range wraps");
    check(model_status(&md, qa->Dispatch->NdkWrite(qa, (PVOID)4, NULL, 0, 0, 0, NDK_OP_FLAG_INLINE), (PVOID)4),
          STATUS_INVALID_PARAMETER, "model: NdkWrite with a flag it does not know");
    /* Each refusal the firmware decides breaks the QP it ran on: one QP per case. */
    check(model_status(&md, qc->Dispatch->NdkFastRegister(qc, (PVOID)5, a3, 1, pages, 0, PAGE_SIZE, NULL, 0), (PVOID)5),
          STATUS_ACCESS_VIOLATION, "model: NdkFastRegister of another PD's MR");
    check(model_status(&md, qd->Dispatch->NdkInvalidate(qd, (PVOID)6, &a1->Header, 0), (PVOID)6),
          STATUS_ACCESS_VIOLATION, "model: NdkInvalidate of another PD's MR");
    check(model_status(&md, qb->Dispatch->NdkInvalidate(qb, (PVOID)7, &a1->Header, 0), (PVOID)7), STATUS_SUCCESS,
          "model: ... which its own PD's QP invalidates");
    test_model_receives(&md, pb, pages[0]);
    NdkFpgaCloseAdapter(md.ad); /* closes what is left */
}

int main(void)
{
    test_layout();
    struct ndk_adapter *ad = fake_adapter();
    test_adapter_calls(ad);
    test_diagnostics(ad);
    test_mdls(ad);
    test_registry_full(ad);
    test_rules(ad);
    test_flag_masks(ad);
    ndk_adapter_free(ad);
    test_model();
    return tap_done();
}
