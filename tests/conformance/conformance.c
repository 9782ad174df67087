/* SPDX-License-Identifier: Apache-2.0 */
/* NDK conformance suite: every rule of NDK_FACTS.md fed its bad input, expecting the
 * exact documented status and checking that nothing changed; then the data path
 * (fast-register over scattered pages, RDMA Write/Read through the token, refusals
 * after invalidation, of another PD, without the right, out of bounds) and the
 * asynchronous contract. The device comes from $NDKFPGA_DEVICE (default "model").
 *
 * Statuses for cases NDK leaves to "other status codes" are this provider's
 * (documented in ndkpi.h/ndkfpga.h): an MR of the wrong kind or state for a call
 * gets STATUS_INVALID_DEVICE_STATE; malformed arguments STATUS_INVALID_PARAMETER. */
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include "conformance.h"

#ifndef NDK_MODEL_BIN
#define NDK_MODEL_BIN "nfmodel"
#endif
extern char **environ;

#define LISTEN_PORT 4791
#define QP_DEPTH 256
#define REFUSAL_MR_BYTES 256 /* the refusal tests register this much of a page */

static NDK_ADAPTER *ad;
static NDK_ADAPTER_INFO info;
static NDK_CQ *cq;
static NDK_PD *pd, *pd2;
static NDK_LISTENER *listener;
static int slow; /* the Verilator board: fewer repetitions */

/* ------------------------------------------------------------------------- */
/* Small helpers                                                              */

static int expect(NTSTATUS got, NTSTATUS want, const char *name)
{
    if (got == want)
        return tap_ok(1, "%s", name);
    return tap_ok(0, "%s: got %s (0x%08x), expected %s", name, NdkFpgaStatusName(got), (unsigned)got,
                  NdkFpgaStatusName(want));
}

static NDK_OBJECT_HEADER *create_wait(struct waiter *w, NTSTATUS st, void *inline_obj, NTSTATUS *out)
{
    if (st == STATUS_PENDING) {
        st = w_wait(w, st);
        *out = st;
        return st == STATUS_SUCCESS ? w->obj : NULL;
    }
    *out = st;
    return st == STATUS_SUCCESS ? (NDK_OBJECT_HEADER *)inline_obj : NULL;
}

static NTSTATUS close_obj(NDK_OBJECT_HEADER *obj)
{
    struct waiter w;
    w_init(&w);
    NTSTATUS st = ASYNC(&w, NdkCloseObject(obj, close_cb, &w));
    return w_wait(&w, st);
}

static NDK_MR *new_mr(NDK_PD *p, int fast)
{
    struct waiter w;
    w_init(&w);
    NDK_MR *mr = NULL;
    NTSTATUS st = ASYNC(&w, p->Dispatch->NdkCreateMr(p, fast ? TRUE : FALSE, create_cb, &w, &mr));
    NDK_OBJECT_HEADER *o = create_wait(&w, st, mr, &st);
    if (!o)
        printf("# NdkCreateMr: %s\n", NdkFpgaStatusName(st));
    return (NDK_MR *)(void *)o;
}

static NTSTATUS init_fast(NDK_MR *mr, ULONG pages, BOOLEAN remote)
{
    struct waiter w;
    w_init(&w);
    NTSTATUS st = ASYNC(&w, mr->Dispatch->NdkInitializeFastRegisterMr(mr, pages, remote, req_cb, &w));
    return w_wait(&w, st);
}

static NTSTATUS reg_mr(NDK_MR *mr, MDL *mdl, SIZE_T len, ULONG flags)
{
    struct waiter w;
    w_init(&w);
    NTSTATUS st = ASYNC(&w, mr->Dispatch->NdkRegisterMr(mr, mdl, len, flags, req_cb, &w));
    return w_wait(&w, st);
}

static NTSTATUS dereg_mr(NDK_MR *mr)
{
    struct waiter w;
    w_init(&w);
    NTSTATUS st = ASYNC(&w, mr->Dispatch->NdkDeregisterMr(mr, req_cb, &w));
    return w_wait(&w, st);
}

static NDK_MW *new_mw(NDK_PD *p)
{
    struct waiter w;
    w_init(&w);
    NDK_MW *mw = NULL;
    NTSTATUS st = ASYNC(&w, p->Dispatch->NdkCreateMw(p, create_cb, &w, &mw));
    NDK_OBJECT_HEADER *o = create_wait(&w, st, mw, &st);
    if (!o)
        printf("# NdkCreateMw: %s\n", NdkFpgaStatusName(st));
    return (NDK_MW *)(void *)o;
}

static UINT32 wtoken(NDK_MW *mw)
{
    return mw->Dispatch->NdkGetRemoteTokenFromMw(mw);
}

/* The receive queue of the QPs new_qp makes: its CQ (NULL: cq) and depth (0: none,
 * else with 2 SGEs per receive). */
static NDK_CQ *pair_rcq;
static ULONG pair_rq;

static NDK_QP *new_qp(NDK_PD *p, ULONG depth, NTSTATUS *out)
{
    struct waiter w;
    w_init(&w);
    NDK_QP *qp = NULL;
    NTSTATUS st = ASYNC(&w, p->Dispatch->NdkCreateQp(p, pair_rcq ? pair_rcq : cq, cq, (PVOID)0x5150, pair_rq, depth,
                                                     pair_rq ? 2 : 0, info.MaxInitiatorRequestSge, 0, create_cb, &w,
                                                     &qp));
    NDK_OBJECT_HEADER *o = create_wait(&w, st, qp, &st);
    if (out)
        *out = st;
    return (NDK_QP *)(void *)o;
}

/* The next result of c, or a result with Status STATUS_IO_TIMEOUT. */
static NDK_RESULT_EX next_of(NDK_CQ *c)
{
    NDK_RESULT_EX r;
    memset(&r, 0, sizeof(r));
    if (!cq_wait(c, &r, conf_timeout_ms))
        r.Status = STATUS_IO_TIMEOUT;
    return r;
}

/* The next result of the initiator CQ. */
static NDK_RESULT_EX next_result(void)
{
    return next_of(cq);
}

/* No result shows up for a while (an inline failure posted nothing). */
static int cq_stays_empty(void)
{
    NDK_RESULT_EX r;
    return !cq_wait(cq, &r, slow ? 300 : 30);
}

static int expect_result(NDK_RESULT_EX r, NTSTATUS st, NDK_OPERATION_TYPE type, void *ctx, const char *name)
{
    if (r.Status == st && r.Type == type && r.RequestContext == ctx && r.QPContext == (PVOID)0x5150)
        return tap_ok(1, "%s", name);
    return tap_ok(0, "%s: result status %s type %d ctx %p qpctx %p refuse %u (expected %s type %d ctx %p)", name,
                  NdkFpgaStatusName(r.Status), (int)r.Type, r.RequestContext, r.QPContext,
                  (unsigned)r.ProviderErrorCode, NdkFpgaStatusName(st), (int)type, ctx);
}

/* ------------------------------------------------------------------------- */
/* Connections                                                                */

static pthread_mutex_t incoming_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t incoming_c = PTHREAD_COND_INITIALIZER;
static NDK_CONNECTOR *incoming;

static VOID on_connect_event(PVOID ctx, NDK_CONNECTOR *c)
{
    (void)ctx;
    conf_note_thread();
    pthread_mutex_lock(&incoming_m);
    incoming = c;
    pthread_cond_broadcast(&incoming_c);
    pthread_mutex_unlock(&incoming_m);
}

static NDK_CONNECTOR *wait_incoming(void)
{
    struct timespec ts;
    deadline_in(&ts, conf_timeout_ms);
    pthread_mutex_lock(&incoming_m);
    while (!incoming && pthread_cond_timedwait(&incoming_c, &incoming_m, &ts) == 0)
        ;
    NDK_CONNECTOR *c = incoming;
    incoming = NULL;
    pthread_mutex_unlock(&incoming_m);
    return c;
}

static int disconnects;
static VOID on_disconnect(PVOID ctx)
{
    (void)ctx;
    conf_note_thread();
    pthread_mutex_lock(&incoming_m);
    disconnects++;
    pthread_mutex_unlock(&incoming_m);
}

struct pair {
    NDK_QP *qa, *qb;
    NDK_CONNECTOR *ca, *cb;
};

static ULONG pair_depth = QP_DEPTH; /* initiator depth of the QPs connect_pair creates */

/* Two QPs of PD p connected to each other; 0 on failure (printed). */
static int connect_pair(NDK_PD *p, struct pair *pr)
{
    memset(pr, 0, sizeof(*pr));
    NTSTATUS st;
    pr->qa = new_qp(p, pair_depth, &st);
    pr->qb = new_qp(p, pair_depth, &st);
    if (!pr->qa || !pr->qb) {
        printf("# NdkCreateQp: %s\n", NdkFpgaStatusName(st));
        return 0;
    }
    struct waiter w;
    w_init(&w);
    st = ad->Dispatch->NdkCreateConnector(ad, create_cb, &w, &pr->ca);
    if (st != STATUS_SUCCESS) {
        printf("# NdkCreateConnector: %s\n", NdkFpgaStatusName(st));
        return 0;
    }
    static uint16_t src_port = 20000;
    struct sockaddr_in src = loopback_addr(src_port++), dst = loopback_addr(LISTEN_PORT);
    struct waiter wc, wa, wcc;
    w_init(&wc);
    w_init(&wa);
    w_init(&wcc);
    uint8_t pdata[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    st = ASYNC(&wc, pr->ca->Dispatch->NdkConnect(pr->ca, pr->qa, (PSOCKADDR)&src, sizeof(src),
                                                  (PSOCKADDR)&dst, sizeof(dst), 1, 1, pdata, sizeof(pdata),
                                                  req_cb, &wc));
    if (st != STATUS_PENDING) {
        printf("# NdkConnect: %s\n", NdkFpgaStatusName(st));
        return 0;
    }
    pr->cb = wait_incoming();
    if (!pr->cb) {
        printf("# no connect event\n");
        return 0;
    }
    st = ASYNC(&wa, pr->cb->Dispatch->NdkAccept(pr->cb, pr->qb, 1, 1, NULL, 0, on_disconnect, NULL, req_cb, &wa));
    if (st != STATUS_PENDING || w_wait(&wc, STATUS_PENDING) != STATUS_SUCCESS) {
        printf("# NdkAccept/NdkConnect: %s / %s\n", NdkFpgaStatusName(st), NdkFpgaStatusName(wc.st));
        return 0;
    }
    st = ASYNC(&wcc, pr->ca->Dispatch->NdkCompleteConnect(pr->ca, on_disconnect, NULL, req_cb, &wcc));
    st = w_wait(&wcc, st);
    NTSTATUS sta = w_wait(&wa, STATUS_PENDING);
    if (st != STATUS_SUCCESS || sta != STATUS_SUCCESS) {
        printf("# NdkCompleteConnect / accept completion: %s / %s\n", NdkFpgaStatusName(st), NdkFpgaStatusName(sta));
        return 0;
    }
    return 1;
}

static void close_pair(struct pair *pr)
{
    if (pr->qa)
        pr->qa->Dispatch->NdkFlush(pr->qa);
    if (pr->qb)
        pr->qb->Dispatch->NdkFlush(pr->qb);
    NDK_OBJECT_HEADER *objs[4] = {pr->ca ? &pr->ca->Header : NULL, pr->cb ? &pr->cb->Header : NULL,
                                  pr->qa ? &pr->qa->Header : NULL, pr->qb ? &pr->qb->Header : NULL};
    for (int i = 0; i < 4; i++)
        if (objs[i])
            close_obj(objs[i]);
    NDK_RESULT_EX r;
    while (cq->Dispatch->NdkGetCqResultsEx(cq, &r, 1))
        ;
    memset(pr, 0, sizeof(*pr));
}

/* ------------------------------------------------------------------------- */
/* Buffers                                                                    */

struct buf {
    MDL *mdl;
    NDK_MR *mr; /* normal MR over it (local read/write) */
    size_t len;
};

static int new_buf(struct buf *b, size_t len, int scattered, ULONG mr_flags)
{
    memset(b, 0, sizeof(*b));
    b->len = len;
    NTSTATUS st = scattered ? NdkFpgaAllocateScatteredBuffer(ad, len, &b->mdl) : NdkFpgaAllocateBuffer(ad, len, &b->mdl);
    if (st != STATUS_SUCCESS) {
        printf("# NdkFpgaAllocateBuffer: %s\n", NdkFpgaStatusName(st));
        return 0;
    }
    if (mr_flags != (ULONG)-1) {
        b->mr = new_mr(pd, 0);
        if (!b->mr || reg_mr(b->mr, b->mdl, len, mr_flags) != STATUS_SUCCESS)
            return 0;
    }
    return 1;
}

static void free_buf(struct buf *b)
{
    if (b->mr) {
        dereg_mr(b->mr);
        close_obj(&b->mr->Header);
    }
    if (b->mdl)
        NdkFpgaFreeBuffer(ad, b->mdl);
    memset(b, 0, sizeof(*b));
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

static PVOID va_of(const struct buf *b, size_t off)
{
    return (uint8_t *)MmGetMdlVirtualAddress(b->mdl) + off;
}

/* ------------------------------------------------------------------------- */
/* Cases                                                                      */

static void test_adapter_info(void)
{
    ULONG size = 0;
    NTSTATUS st = ad->Dispatch->NdkQueryAdapterInfo(ad, NULL, &size);
    tap_ok(st == STATUS_BUFFER_TOO_SMALL && size == sizeof(NDK_ADAPTER_INFO),
           "NdkQueryAdapterInfo with a zero buffer: STATUS_BUFFER_TOO_SMALL and the needed size (%u)", (unsigned)size);
    size = sizeof(info) - 1;
    st = ad->Dispatch->NdkQueryAdapterInfo(ad, &info, &size);
    tap_ok(st == STATUS_BUFFER_TOO_SMALL && size == sizeof(info), "NdkQueryAdapterInfo one byte short: BUFFER_TOO_SMALL");
    size = sizeof(info);
    st = ad->Dispatch->NdkQueryAdapterInfo(ad, &info, &size);
    expect(st, STATUS_SUCCESS, "NdkQueryAdapterInfo");
    tap_ok(info.Version.Major == NDKFPGA_NDK_VERSION_MAJOR && info.Version.Minor == NDKFPGA_NDK_VERSION_MINOR, "NDK version 2.1");
    tap_ok(info.FRMRPageCount >= 16, "FRMRPageCount >= 16 (%u)", (unsigned)info.FRMRPageCount);
    tap_ok((info.AdapterFlags & NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED) &&
               (info.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED) &&
               !(info.AdapterFlags & NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED),
           "AdapterFlags: loopback, read sink not required, no CQ resize (0x%x)", (unsigned)info.AdapterFlags);
    tap_ok(info.MaxInitiatorRequestSge >= 1 && info.MaxCqDepth >= 1 && info.MaxInitiatorQueueDepth >= QP_DEPTH,
           "limits: %u SGE, CQ depth %u, queue depth %u", (unsigned)info.MaxInitiatorRequestSge,
           (unsigned)info.MaxCqDepth, (unsigned)info.MaxInitiatorQueueDepth);
}

static void test_create_limits(void)
{
    NDK_CQ *c = NULL;
    expect(ad->Dispatch->NdkCreateCq(ad, 0, NULL, NULL, NULL, create_cb, NULL, &c), STATUS_INVALID_PARAMETER,
           "NdkCreateCq depth 0: INVALID_PARAMETER");
    expect(ad->Dispatch->NdkCreateCq(ad, info.MaxCqDepth + 1, NULL, NULL, NULL, create_cb, NULL, &c),
           STATUS_INVALID_PARAMETER, "NdkCreateCq depth above MaxCqDepth: INVALID_PARAMETER");
    tap_ok(c == NULL, "failed NdkCreateCq returns no object");
    expect(cq->Dispatch->NdkResizeCq(cq, 8, req_cb, NULL), STATUS_NOT_SUPPORTED, "NdkResizeCq: NOT_SUPPORTED");
    expect(cq->Dispatch->NdkControlCqInterruptModeration(cq, 10, 10), STATUS_NOT_SUPPORTED,
           "NdkControlCqInterruptModeration: NOT_SUPPORTED");
    NDK_SHARED_ENDPOINT *se = NULL;
    struct sockaddr_in se_addr = {0};
    se_addr.sin_family = AF_INET;
    expect(ad->Dispatch->NdkCreateSharedEndpoint(ad, (PSOCKADDR)&se_addr, sizeof(se_addr), create_cb, NULL, &se),
           STATUS_NOT_SUPPORTED, "NdkCreateSharedEndpoint: NOT_SUPPORTED");
    tap_ok(se == NULL, "a refused NdkCreateSharedEndpoint leaves its output as it was");
    NDK_QP *qp = NULL;
    expect(pd->Dispatch->NdkCreateQp(pd, cq, cq, NULL, 0, info.MaxInitiatorQueueDepth + 1, 0, 1, 0, create_cb, NULL,
                                     &qp),
           STATUS_INVALID_PARAMETER, "NdkCreateQp queue depth above the maximum: INVALID_PARAMETER");
    expect(pd->Dispatch->NdkCreateQp(pd, cq, cq, NULL, 0, 4, 0, info.MaxInitiatorRequestSge + 1, 0, create_cb, NULL,
                                     &qp),
           STATUS_INVALID_PARAMETER, "NdkCreateQp SGE count above the maximum: INVALID_PARAMETER");
    UINT32 tok = 0;
    pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(pd, &tok);
    tap_ok(tok == 0xFFFFFFFFu, "NdkGetPrivilegedMemoryRegionToken: NF_ADAPTER_PRIVILEGED_TOKEN");
}

static void test_registration(void)
{
    struct buf b;
    if (!tap_ok(new_buf(&b, 3 * PAGE_SIZE, 0, (ULONG)-1), "allocate a 3-page buffer"))
        return;
    NDK_MR *normal = new_mr(pd, 0), *fast = new_mr(pd, 1);
    if (!tap_ok(normal && fast, "NdkCreateMr normal and fast-register"))
        return;
    UINT32 ftok = fast->Dispatch->NdkGetRemoteTokenFromMr(fast);
    tap_ok(ftok == fast->Dispatch->NdkGetLocalTokenFromMr(fast) && ftok != 0, "fast MR has a token (0x%08x)",
           (unsigned)ftok);

    expect(init_fast(normal, 4, TRUE), STATUS_INVALID_DEVICE_STATE,
           "NdkInitializeFastRegisterMr on a normal MR: INVALID_DEVICE_STATE");
    expect(reg_mr(fast, b.mdl, b.len, NDK_MR_FLAG_ALLOW_LOCAL_WRITE), STATUS_INVALID_DEVICE_STATE,
           "NdkRegisterMr on a fast-register MR: INVALID_DEVICE_STATE");
    expect(init_fast(fast, info.FRMRPageCount + 1, TRUE), STATUS_IMPLEMENTATION_LIMIT,
           "NdkInitializeFastRegisterMr above FRMRPageCount: IMPLEMENTATION_LIMIT");
    expect(init_fast(fast, 0, TRUE), STATUS_INVALID_PARAMETER, "NdkInitializeFastRegisterMr of 0 pages: INVALID_PARAMETER");
    expect(init_fast(fast, 4, TRUE), STATUS_SUCCESS, "NdkInitializeFastRegisterMr");
    expect(init_fast(fast, info.FRMRPageCount, FALSE), STATUS_SUCCESS, "NdkInitializeFastRegisterMr again (max pages)");
    /* Two in parallel. */
    struct waiter w1, w2;
    w_init(&w1);
    w_init(&w2);
    NTSTATUS s1 = ASYNC(&w1, fast->Dispatch->NdkInitializeFastRegisterMr(fast, 8, TRUE, req_cb, &w1));
    NTSTATUS s2 = ASYNC(&w2, fast->Dispatch->NdkInitializeFastRegisterMr(fast, 8, TRUE, req_cb, &w2));
    s1 = w_wait(&w1, s1);
    s2 = w_wait(&w2, s2);
    tap_ok(s1 == STATUS_SUCCESS && s2 == STATUS_SUCCESS, "two NdkInitializeFastRegisterMr in parallel: %s, %s",
           NdkFpgaStatusName(s1), NdkFpgaStatusName(s2));
    tap_ok(fast->Dispatch->NdkGetRemoteTokenFromMr(fast) == ftok, "fast MR token stable across initializations");
    expect(dereg_mr(fast), STATUS_INVALID_DEVICE_STATE, "NdkDeregisterMr on a fast-register MR: INVALID_DEVICE_STATE");

    /* MDL rules. */
    expect(reg_mr(normal, b.mdl, b.len + 1, NDK_MR_FLAG_ALLOW_LOCAL_WRITE), STATUS_INVALID_PARAMETER,
           "NdkRegisterMr length past the MDL: INVALID_PARAMETER");
    expect(reg_mr(normal, b.mdl, b.len, 0x40), STATUS_INVALID_PARAMETER, "NdkRegisterMr unknown flag: INVALID_PARAMETER");
    MDL zero = *b.mdl;
    zero.StartVa = NULL;
    zero.ProviderContext = NULL;
    expect(reg_mr(normal, &zero, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE), STATUS_INVALID_PARAMETER,
           "NdkRegisterMr zero-based virtual address: INVALID_PARAMETER");
    /* A chain: first two pages, then the third; contiguous, then with a gap. */
    PFN_NUMBER *pfn = MmGetMdlPfnArray(b.mdl);
    uint8_t *va0 = b.mdl->StartVa;
    MDL gap2 = {NULL, va0 + 3 * PAGE_SIZE, 0, PAGE_SIZE, pfn + 2, NULL}; /* one page gap */
    MDL gap1 = {&gap2, va0, 0, 2 * PAGE_SIZE, pfn, NULL};
    expect(reg_mr(normal, &gap1, 3 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE), STATUS_INVALID_PARAMETER,
           "NdkRegisterMr MDL chain not virtually contiguous: INVALID_PARAMETER");
    MDL m2 = {NULL, va0 + 2 * PAGE_SIZE, 0, PAGE_SIZE, pfn + 2, NULL};
    MDL m1 = {&m2, va0, 0, 2 * PAGE_SIZE, pfn, NULL};
    expect(reg_mr(normal, &m1, 3 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK),
           STATUS_SUCCESS, "NdkRegisterMr virtually contiguous MDL chain (with RDMA_READ_SINK)");
    expect(reg_mr(normal, b.mdl, b.len, NDK_MR_FLAG_ALLOW_LOCAL_WRITE), STATUS_INVALID_DEVICE_STATE,
           "NdkRegisterMr on a registered MR: INVALID_DEVICE_STATE");
    expect(dereg_mr(normal), STATUS_SUCCESS, "NdkDeregisterMr");
    expect(dereg_mr(normal), STATUS_INVALID_DEVICE_STATE, "NdkDeregisterMr twice: INVALID_DEVICE_STATE");
    expect(reg_mr(normal, b.mdl, b.len, NDK_MR_FLAG_ALLOW_REMOTE_WRITE), STATUS_SUCCESS, "register again after deregister");
    expect(dereg_mr(normal), STATUS_SUCCESS, "deregister again");
    expect(close_obj(&normal->Header), STATUS_SUCCESS, "close normal MR");
    expect(close_obj(&fast->Header), STATUS_SUCCESS, "close fast MR");
    free_buf(&b);
}

static void test_unconnected(void)
{
    NTSTATUS st;
    NDK_QP *qp = new_qp(pd, 8, &st);
    if (!tap_ok(qp != NULL, "NdkCreateQp (%s)", NdkFpgaStatusName(st)))
        return;
    NDK_MR *fast = new_mr(pd, 1);
    if (!fast || init_fast(fast, 4, TRUE) != STATUS_SUCCESS) {
        tap_ok(0, "fast MR for the unconnected QP");
        return;
    }
    struct buf b;
    new_buf(&b, PAGE_SIZE, 0, (ULONG)-1);
    NDK_LOGICAL_ADDRESS page = {.QuadPart = (LONGLONG)MmGetMdlPfnArray(b.mdl)[0] << PAGE_SHIFT};
    NDK_SGE sge = {{.VirtualAddress = va_of(&b, 0)}, 16, 0xFFFFFFFFu};
    expect(qp->Dispatch->NdkFastRegister(qp, NULL, fast, 1, &page, 0, PAGE_SIZE, va_of(&b, 0), 0),
           STATUS_CONNECTION_INVALID, "NdkFastRegister on an unconnected QP: CONNECTION_INVALID");
    expect(qp->Dispatch->NdkInvalidate(qp, NULL, &fast->Header, 0), STATUS_CONNECTION_INVALID,
           "NdkInvalidate on an unconnected QP: CONNECTION_INVALID");
    sge.LogicalAddress = page;
    expect(qp->Dispatch->NdkWrite(qp, NULL, &sge, 1, 0x1000, 0x100, 0), STATUS_CONNECTION_INVALID,
           "NdkWrite on an unconnected QP: CONNECTION_INVALID");
    expect(qp->Dispatch->NdkRead(qp, NULL, &sge, 1, 0x1000, 0x100, 0), STATUS_CONNECTION_INVALID,
           "NdkRead on an unconnected QP: CONNECTION_INVALID");
    expect(qp->Dispatch->NdkSend(qp, NULL, &sge, 1, 0), STATUS_CONNECTION_INVALID,
           "NdkSend on an unconnected QP: CONNECTION_INVALID");
    expect(qp->Dispatch->NdkSendAndInvalidate(qp, NULL, &sge, 1, 0, 0x100), STATUS_CONNECTION_INVALID,
           "NdkSendAndInvalidate on an unconnected QP: CONNECTION_INVALID");
    expect(qp->Dispatch->NdkReceive(qp, NULL, &sge, 1), STATUS_INVALID_PARAMETER,
           "NdkReceive of 1 SGE on a QP without a receive queue (MaxReceiveRequestSge 0): INVALID_PARAMETER");
    expect(qp->Dispatch->NdkBind(qp, NULL, fast, NULL, va_of(&b, 0), 16, 0), STATUS_INVALID_PARAMETER,
           "NdkBind without a window: INVALID_PARAMETER");
    tap_ok(cq_stays_empty(), "inline failures post nothing (CQ empty)");
    close_obj(&qp->Header);
    close_obj(&fast->Header);
    free_buf(&b);
}

static NTSTATUS probe_write(NDK_QP *q, struct buf *src, struct buf *tgt, UINT32 token, UINT64 va, uint32_t seed);

/* The data path and the rules that need a connected QP. */
static void test_fast_register_rules(void)
{
    struct pair pr;
    if (!tap_ok(connect_pair(pd, &pr), "connect two QPs in loopback"))
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
        tap_ok(0, "buffers for the data tests");
        return;
    }
    NDK_LOGICAL_ADDRESS pages[4] = {{.QuadPart = 0}, {.QuadPart = 0}, {.QuadPart = 0}, {.QuadPart = 0}};
    for (ULONG i = 0; i < np; i++)
        pages[i].QuadPart = (LONGLONG)MmGetMdlPfnArray(tgt.mdl)[i] << PAGE_SHIFT;
    pages[np] = pages[0];
    tap_ok(pages[1].QuadPart != pages[0].QuadPart + PAGE_SIZE, "target pages are not contiguous in adapter memory");
    NDK_MR *fr = new_mr(pd, 1), *fr_local = new_mr(pd, 1), *normal = new_mr(pd, 0);
    if (!fr || !fr_local || !normal || init_fast(fr, np, TRUE) != STATUS_SUCCESS ||
        init_fast(fr_local, np, FALSE) != STATUS_SUCCESS) {
        tap_ok(0, "fast MRs for the data tests");
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
    tap_ok(cq_stays_empty(), "rule violations posted nothing");

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
    tap_ok(fr->Dispatch->NdkGetRemoteTokenFromMr(fr) == tok, "token unchanged by the fast-register");
    NDK_SGE sge = {{.VirtualAddress = va_of(&src, 0)}, (ULONG)len,
                   src.mr->Dispatch->NdkGetLocalTokenFromMr(src.mr)};
    expect(qp->Dispatch->NdkWrite(qp, (PVOID)2, &sge, 1, (UINT64)(uintptr_t)va, tok, 0), STATUS_SUCCESS,
           "NdkWrite through the remote token");
    NDK_RESULT_EX r = next_result();
    expect_result(r, STATUS_SUCCESS, NdkOperationTypeWrite, (PVOID)2, "RDMA Write completes");
    tap_ok(r.BytesTransferred == len, "BytesTransferred %u == %zu", (unsigned)r.BytesTransferred, len);
    NdkFpgaReadBuffer(ad, tgt.mdl, wlo, back + wlo, whi - wlo);
    memcpy(before + fbo, data, len);
    tap_ok(!memcmp(back + wlo, before + wlo, whi - wlo),
           "every target byte written, none outside [FBO, FBO + length) (%zu bytes checked)", whi - wlo);
    /* Read it back through the token into a third buffer. */
    NDK_SGE rsge = {{.VirtualAddress = va_of(&rb, 0)}, (ULONG)len, rb.mr->Dispatch->NdkGetLocalTokenFromMr(rb.mr)};
    expect(qp->Dispatch->NdkRead(qp, (PVOID)3, &rsge, 1, (UINT64)(uintptr_t)va, tok, 0), STATUS_SUCCESS,
           "NdkRead through the remote token");
    expect_result(next_result(), STATUS_SUCCESS, NdkOperationTypeRead, (PVOID)3, "RDMA Read completes");
    memset(back, 0, tlen);
    NdkFpgaReadBuffer(ad, rb.mdl, 0, back, len);
    tap_ok(!memcmp(back, data, len), "RDMA Read: every byte checked");

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
    tap_ok(!memcmp(back + wlo, before + wlo, whi - wlo), "target bytes unchanged after the refused write");
    expect(qp->Dispatch->NdkFastRegister(qp, (PVOID)6, fr, np, pages, fbo, len, va, NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
           STATUS_SUCCESS, "a request after the error completion posts");
    expect_result(next_result(), STATUS_CANCELLED, NdkOperationTypeFastRegister, (PVOID)6,
                  "later request on that QP: STATUS_CANCELLED");
    close_pair(&pr);

    /* Token stable across fast-register/invalidate cycles, on a fresh connection. */
    if (tap_ok(connect_pair(pd, &pr), "reconnect")) {
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
        tap_ok(good, "%d fast-register/write/invalidate cycles with one token (silent fast-registers)", cycles);

        /* Double invalidate: the second fails (completion with an error status). */
        expect(qp->Dispatch->NdkInvalidate(qp, (PVOID)9, &fr->Header, 0), STATUS_SUCCESS,
               "NdkInvalidate of an invalidated MR posts");
        r = next_result();
        tap_ok(r.Status != STATUS_SUCCESS && r.Status != STATUS_IO_TIMEOUT && r.RequestContext == (PVOID)9,
               "invalidating an already-invalidated token fails (%s)", NdkFpgaStatusName(r.Status));
        /* Any error completion breaks the connection, whatever the request: the next
         * fast-register on that QP completes STATUS_CANCELLED and registers nothing. */
        NTSTATUS pst = qp->Dispatch->NdkFastRegister(qp, (PVOID)10, fr, np, pages, fbo, len, va,
                                                     NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
        r = pst == STATUS_SUCCESS ? next_result() : r;
        tap_ok((pst == STATUS_SUCCESS && r.Status == STATUS_CANCELLED && r.RequestContext == (PVOID)10) ||
                   pst == STATUS_CONNECTION_INVALID || pst == STATUS_CANCELLED,
               "after the failed invalidate, a fast-register on that QP is cancelled (post %s, result %s)",
               NdkFpgaStatusName(pst), pst == STATUS_SUCCESS ? NdkFpgaStatusName(r.Status) : "none");
        NTSTATUS pw = probe_write(pr.qb, &src, &tgt, tok, (UINT64)(uintptr_t)va, 12);
        tap_ok(pw == STATUS_ACCESS_VIOLATION, "... and registered nothing: a write through the token is refused (%s)",
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

/* A remote access the engine must refuse: the write (or read) completes with
 * ACCESS_VIOLATION, the target (or the local sink) is unchanged, the next request on
 * the QP is CANCELLED. */
static void refused_access(const char *name, int write, struct buf *tgt, UINT32 token, UINT64 raddr, ULONG len)
{
    struct pair pr;
    if (!tap_ok(connect_pair(pd, &pr), "connect for: %s", name))
        return;
    struct buf loc; /* the write's source, the read's sink */
    new_buf(&loc, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | (write ? 0 : NDK_MR_FLAG_RDMA_READ_SINK));
    /* What must not change: the target's checked bytes (write) or the sink (read). */
    MDL *watched = write ? tgt->mdl : loc.mdl;
    size_t clen = !write ? 64 : slow ? 2 * REFUSAL_MR_BYTES : tgt->len;
    uint8_t *before = malloc(clen), *after = malloc(clen), pat[64];
    fill(before, clen, write ? 77 : 79);
    fill(pat, sizeof(pat), 78);
    NdkFpgaWriteBuffer(ad, watched, 0, before, clen);
    if (write)
        NdkFpgaWriteBuffer(ad, loc.mdl, 0, pat, sizeof(pat));
    NDK_SGE sge = {{.VirtualAddress = va_of(&loc, 0)}, len, loc.mr->Dispatch->NdkGetLocalTokenFromMr(loc.mr)};
    NDK_QP *q = pr.qa;
    NTSTATUS st = write ? q->Dispatch->NdkWrite(q, (PVOID)0x77, &sge, 1, raddr, token, 0)
                        : q->Dispatch->NdkRead(q, (PVOID)0x77, &sge, 1, raddr, token, 0);
    NDK_RESULT_EX r = next_result();
    tap_ok(st == STATUS_SUCCESS && r.Status == STATUS_ACCESS_VIOLATION && r.RequestContext == (PVOID)0x77 &&
               r.Type == (write ? NdkOperationTypeWrite : NdkOperationTypeRead),
           "%s: STATUS_ACCESS_VIOLATION (post %s, result %s, refuse %u)", name, NdkFpgaStatusName(st),
           NdkFpgaStatusName(r.Status), (unsigned)r.ProviderErrorCode);
    NdkFpgaReadBuffer(ad, watched, 0, after, clen);
    tap_ok(!memcmp(before, after, clen), "%s: %s unchanged (%zu bytes checked)", name, write ? "target" : "local sink",
           clen);
    st = q->Dispatch->NdkWrite(q, (PVOID)0x78, &sge, 1, raddr, token, 0);
    r = next_result();
    tap_ok(st == STATUS_SUCCESS && r.Status == STATUS_CANCELLED && r.RequestContext == (PVOID)0x78,
           "%s: the next request completes STATUS_CANCELLED (%s)", name, NdkFpgaStatusName(r.Status));
    free(before);
    free(after);
    free_buf(&loc);
    close_pair(&pr);
}

static UINT32 rtoken(NDK_MR *mr)
{
    return mr->Dispatch->NdkGetRemoteTokenFromMr(mr);
}

static void test_refusals(void)
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
        tap_ok(0, "register an MR in a second PD");
    /* Read-only token used for writing. */
    NDK_MR *ro = new_mr(pd, 0);
    if (ro && reg_mr(ro, tgt.mdl, mlen, NDK_MR_FLAG_ALLOW_REMOTE_READ) == STATUS_SUCCESS)
        refused_access("write through a read-only token", 1, &tgt, rtoken(ro), base, 64);
    else
        tap_ok(0, "register a read-only MR");
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
        tap_ok(0, "register a writable MR");
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

/* Asynchronous contract: many in flight, DEFER, SILENT_SUCCESS, flush, CQ
 * notification, close ordering. */
static int notified;
static VOID cq_notify(PVOID ctx, NTSTATUS st)
{
    (void)ctx;
    (void)st;
    conf_note_thread();
    __atomic_add_fetch(&notified, 1, __ATOMIC_SEQ_CST);
}

static void test_async(void)
{
    struct pair pr;
    if (!tap_ok(connect_pair(pd, &pr), "connect for the asynchronous tests"))
        return;
    NDK_QP *qp = pr.qa;
    struct buf tgt;
    new_buf(&tgt, PAGE_SIZE, 0, (ULONG)-1);
    NDK_LOGICAL_ADDRESS page = {.QuadPart = (LONGLONG)MmGetMdlPfnArray(tgt.mdl)[0] << PAGE_SHIFT};
    NDK_MR *fr = new_mr(pd, 1);
    if (!fr || init_fast(fr, 1, TRUE) != STATUS_SUCCESS) {
        tap_ok(0, "fast MR for the asynchronous tests");
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
    tap_ok(ok, "%d fast-register/invalidate requests posted, 9 of 10 deferred", n);
    for (int i = 0; i < n && ok; i++) {
        NDK_RESULT_EX r = next_result();
        ok &= r.Status == STATUS_SUCCESS && r.RequestContext == (PVOID)(uintptr_t)(1000 + i) &&
              r.Type == (i % 2 ? NdkOperationTypeInvalidate : NdkOperationTypeFastRegister);
        if (!ok)
            printf("# result %d: %s ctx %p type %d\n", i, NdkFpgaStatusName(r.Status), r.RequestContext, (int)r.Type);
    }
    tap_ok(ok, "all %d completed in order with their contexts and types", n);

    /* SILENT_SUCCESS: only the signalled one completes. */
    ok = qp->Dispatch->NdkFastRegister(qp, (PVOID)1, fr, 1, &page, 0, PAGE_SIZE, va,
                                       NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_SILENT_SUCCESS) == STATUS_SUCCESS;
    ok &= qp->Dispatch->NdkInvalidate(qp, (PVOID)2, &fr->Header, NDK_OP_FLAG_SILENT_SUCCESS) == STATUS_SUCCESS;
    ok &= qp->Dispatch->NdkFastRegister(qp, (PVOID)3, fr, 1, &page, 0, PAGE_SIZE, va,
                                        NDK_OP_FLAG_ALLOW_REMOTE_WRITE) == STATUS_SUCCESS;
    NDK_RESULT_EX r = next_result();
    ok &= r.Status == STATUS_SUCCESS && r.RequestContext == (PVOID)3;
    tap_ok(ok && cq_stays_empty(), "SILENT_SUCCESS: successful silent requests produce no completion");

    /* DEFER then an inline failure: the deferred request still reaches the board. */
    ok = qp->Dispatch->NdkInvalidate(qp, (PVOID)4, &fr->Header, NDK_OP_FLAG_DEFER) == STATUS_SUCCESS;
    ok &= qp->Dispatch->NdkFastRegister(qp, NULL, fr, 2, &page, 0, PAGE_SIZE, va, 0) == STATUS_INVALID_PARAMETER;
    r = next_result();
    tap_ok(ok && r.Status == STATUS_SUCCESS && r.RequestContext == (PVOID)4,
           "an inline failure pushes the deferred requests (%s)", NdkFpgaStatusName(r.Status));

    /* CQ notification after arming, on the callback thread. */
    NDK_CQ *ncq = NULL;
    NTSTATUS st = ad->Dispatch->NdkCreateCq(ad, 16, cq_notify, NULL, NULL, create_cb, NULL, &ncq);
    tap_ok(st == STATUS_SUCCESS && ncq, "NdkCreateCq with a notification callback");
    if (ncq) {
        struct waiter w;
        w_init(&w);
        NDK_QP *nq = NULL;
        st = ASYNC(&w, pd->Dispatch->NdkCreateQp(pd, ncq, ncq, NULL, 0, 4, 0, 1, 0, create_cb, &w, &nq));
        nq = (NDK_QP *)(void *)create_wait(&w, st, nq, &st);
        ncq->Dispatch->NdkArmCq(ncq, NDK_CQ_NOTIFY_ANY);
        sleep_ms(20);
        tap_ok(__atomic_load_n(&notified, __ATOMIC_SEQ_CST) == 0, "armed empty CQ: no notification yet");
        /* A connected pair completing on this CQ. */
        NDK_CQ *saved = cq;
        cq = ncq;
        struct pair np;
        if (tap_ok(connect_pair(pd, &np), "connect a pair on the notifying CQ")) {
            ncq->Dispatch->NdkArmCq(ncq, NDK_CQ_NOTIFY_ERRORS);
            st = np.qa->Dispatch->NdkFastRegister(np.qa, (PVOID)11, fr, 1, &page, 0, PAGE_SIZE, va,
                                                  NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
            r = next_result();
            sleep_ms(slow ? 200 : 20);
            tap_ok(st == STATUS_SUCCESS && r.Status == STATUS_SUCCESS &&
                       __atomic_load_n(&notified, __ATOMIC_SEQ_CST) == 0,
                   "armed for errors: a successful completion does not notify");
            ncq->Dispatch->NdkArmCq(ncq, NDK_CQ_NOTIFY_ANY);
            st = np.qa->Dispatch->NdkInvalidate(np.qa, (PVOID)12, &fr->Header, 0);
            for (int i = 0; i < conf_timeout_ms && !__atomic_load_n(&notified, __ATOMIC_SEQ_CST); i++)
                sleep_ms(1);
            r = next_result();
            tap_ok(st == STATUS_SUCCESS && __atomic_load_n(&notified, __ATOMIC_SEQ_CST) == 1 &&
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
        tap_ok(s1 == STATUS_PENDING, "closing a CQ still used by a QP pends (%s)", NdkFpgaStatusName(s1));
        NTSTATUS s2 = nq ? ASYNC(&wqp, NdkCloseObject(&nq->Header, close_cb, &wqp)) : STATUS_INVALID_PARAMETER;
        tap_ok(s2 == STATUS_SUCCESS || s2 == STATUS_PENDING, "close the QP (%s)", NdkFpgaStatusName(s2));
        tap_ok(w_wait(&wqp, s2) == STATUS_SUCCESS && w_wait(&wcq, s1) == STATUS_SUCCESS,
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
        tap_ok(s1 == STATUS_PENDING, "closing a PD with an open MR pends");
        sleep_ms(10);
        tap_ok(!w_is_done(&wpd), "the PD's close waits for the MR");
        tap_ok(close_obj(&m3->Header) == STATUS_SUCCESS, "close the MR");
        tap_ok(w_wait(&wpd, s1) == STATUS_SUCCESS, "then the PD's close completes");
    } else {
        tap_ok(0, "PD and MR for the close-ordering test");
    }

    /* Disconnect: the peer hears of it, and the QP refuses work. */
    struct waiter wd;
    w_init(&wd);
    int before = disconnects;
    st = ASYNC(&wd, pr.ca->Dispatch->NdkDisconnect(pr.ca, req_cb, &wd));
    tap_ok(w_wait(&wd, st) == STATUS_SUCCESS, "NdkDisconnect");
    for (int i = 0; i < 1000 && disconnects == before; i++)
        sleep_ms(1);
    tap_ok(disconnects > before, "the peer's DisconnectEvent ran");
    expect(qp->Dispatch->NdkInvalidate(qp, NULL, &fr->Header, 0), STATUS_CONNECTION_INVALID,
           "work request after disconnect: CONNECTION_INVALID");
    close_pair(&pr);
    close_obj(&fr->Header);
    free_buf(&tgt);
}

/* NdkFlush is honest: the adapter runs a QP's requests in order, so the requests
 * posted before NdkFlush (deferred ones included) execute and report their real
 * status, and the requests posted after it complete CANCELLED and change nothing. Every
 * reported status is checked against what the tokens really do afterwards. */

/* Write 64 bytes of pattern seed through (token, va) from q; the result must agree with
 * the bytes: SUCCESS and they landed at tgt offset 0, or a refusal and tgt unchanged.
 * Returns the result's status, or STATUS_INTERNAL_ERROR when bytes and status disagree. */
static NTSTATUS probe_write(NDK_QP *q, struct buf *src, struct buf *tgt, UINT32 token, UINT64 va, uint32_t seed)
{
    uint8_t pat[64], before[64], after[64];
    fill(pat, sizeof(pat), seed);
    NdkFpgaWriteBuffer(ad, src->mdl, 0, pat, sizeof(pat));
    NdkFpgaReadBuffer(ad, tgt->mdl, 0, before, sizeof(before));
    NDK_SGE sge = {{.VirtualAddress = va_of(src, 0)}, sizeof(pat), src->mr->Dispatch->NdkGetLocalTokenFromMr(src->mr)};
    if (q->Dispatch->NdkWrite(q, (PVOID)0x9000, &sge, 1, va, token, 0) != STATUS_SUCCESS)
        return STATUS_INTERNAL_ERROR;
    NDK_RESULT_EX r = next_result();
    NdkFpgaReadBuffer(ad, tgt->mdl, 0, after, sizeof(after));
    if (r.RequestContext != (PVOID)0x9000)
        return STATUS_INTERNAL_ERROR;
    if (r.Status == STATUS_SUCCESS)
        return !memcmp(after, pat, sizeof(pat)) ? r.Status : STATUS_INTERNAL_ERROR;
    return !memcmp(after, before, sizeof(before)) ? r.Status : STATUS_INTERNAL_ERROR;
}

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

static void test_flush(void)
{
    struct buf src, tgt[2];
    NDK_MR *fr[2] = {new_mr(pd, 1), new_mr(pd, 1)};
    if (!new_buf(&src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) || !new_buf(&tgt[0], PAGE_SIZE, 0, (ULONG)-1) ||
        !new_buf(&tgt[1], PAGE_SIZE, 0, (ULONG)-1) || !fr[0] || !fr[1] || init_fast(fr[0], 1, TRUE) != STATUS_SUCCESS ||
        init_fast(fr[1], 1, TRUE) != STATUS_SUCCESS) {
        tap_ok(0, "buffers and fast MRs for the flush tests");
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
    if (!tap_ok(connect_pair(pd, &pr), "connect for the flush tests"))
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
    tap_ok(pre_ok, "NdkFlush pushes the deferred requests; the 3 posted before it ran and complete with their real "
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
    tap_ok(ok, "requests posted after NdkFlush (2 deferred) complete STATUS_CANCELLED (%s, %s, %s)",
           NdkFpgaStatusName(res[3].Status), NdkFpgaStatusName(res[4].Status), NdkFpgaStatusName(res[5].Status));
    tap_ok(cq_stays_empty(), "every request completed exactly once");
    tap_ok(res[5].Status == STATUS_SUCCESS ? !memcmp(tgt_after, init, sizeof(init))
                                           : !memcmp(tgt_after, tgt_before, sizeof(tgt_before)),
           "the write posted after NdkFlush (%s) changed nothing", NdkFpgaStatusName(res[5].Status));
    /* What the tokens do now must match the reported statuses: MR 0 fast-registered by
     * a SUCCESS before the flush (its CANCELLED invalidate did not happen), MR 1 never
     * registered (its CANCELLED fast-register did not happen). Probed from the peer QP,
     * which the flush does not affect. */
    NTSTATUS p0 = probe_write(pr.qb, &src, &tgt[0], fr[0]->Dispatch->NdkGetRemoteTokenFromMr(fr[0]), va[0], 502);
    tap_ok(valid[0] && p0 == STATUS_SUCCESS,
           "MR 0: a write through its token agrees with the reported statuses: granted, bytes landed (%s)",
           NdkFpgaStatusName(p0));
    NTSTATUS p1 = probe_write(pr.qb, &src, &tgt[1], fr[1]->Dispatch->NdkGetRemoteTokenFromMr(fr[1]), va[1], 503);
    tap_ok(!valid[1] && p1 == STATUS_ACCESS_VIOLATION,
           "MR 1: a write through its token agrees with the reported statuses: refused, target unchanged (%s)",
           NdkFpgaStatusName(p1));
    close_pair(&pr);

    /* Scenario 2: a QP of depth 4 filled with silent successes (all deferred). They
     * execute and produce no result; the flush frees their slots, so the QP takes new
     * requests again, which complete CANCELLED. */
    pair_depth = 4;
    int connected = connect_pair(pd, &pr);
    pair_depth = QP_DEPTH;
    if (!tap_ok(connected, "connect a pair of depth 4"))
        goto out;
    const ULONG sd = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_DEFER;
    const struct flush_wr silent[4] = {{'I', fr[0], sd}, {'F', fr[0], sd}, {'I', fr[0], sd}, {'F', fr[0], sd}};
    ok = 1;
    for (int i = 0; i < 4; i++)
        ok &= post_flush_wr(pr.qa, &silent[i], (PVOID)(uintptr_t)(0x300 + i), &src, &page[0], va[0]) == STATUS_SUCCESS;
    pr.qa->Dispatch->NdkFlush(pr.qa);
    tap_ok(ok && cq_stays_empty(), "4 silent requests before NdkFlush: they ran successfully, no result");
    NTSTATUS st = STATUS_INSUFFICIENT_RESOURCES;
    const struct flush_wr inv = {'I', fr[0], 0};
    for (int t = 0; t < conf_timeout_ms && st == STATUS_INSUFFICIENT_RESOURCES; t++) {
        st = post_flush_wr(pr.qa, &inv, (PVOID)0x400, &src, &page[0], va[0]);
        if (st == STATUS_INSUFFICIENT_RESOURCES)
            sleep_ms(1);
    }
    NDK_RESULT_EX r = next_result();
    tap_ok(st == STATUS_SUCCESS && r.Status == STATUS_CANCELLED && r.RequestContext == (PVOID)0x400 &&
               cq_stays_empty(),
           "the flush frees their slots: a request posted after it is accepted and completes STATUS_CANCELLED "
           "(post %s, result %s)",
           NdkFpgaStatusName(st), NdkFpgaStatusName(r.Status));
    p0 = probe_write(pr.qb, &src, &tgt[0], fr[0]->Dispatch->NdkGetRemoteTokenFromMr(fr[0]), va[0], 504);
    tap_ok(p0 == STATUS_SUCCESS,
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

static void test_connection_rules(void)
{
    NTSTATUS st;
    NDK_QP *qa = new_qp(pd, 4, &st), *qb = new_qp(pd, 4, &st);
    NDK_CONNECTOR *ca = NULL;
    ad->Dispatch->NdkCreateConnector(ad, create_cb, NULL, &ca);
    if (!tap_ok(qa && qb && ca, "QPs and a connector"))
        return;
    struct sockaddr_in nowhere = loopback_addr(9), dst = loopback_addr(LISTEN_PORT), src = loopback_addr(30000);
    struct waiter w;
    w_init(&w);
    st = ASYNC(&w, ca->Dispatch->NdkConnect(ca, qa, (PSOCKADDR)&src, sizeof(src), (PSOCKADDR)&nowhere,
                                            sizeof(nowhere), 0, 0, NULL, 0, req_cb, &w));
    expect(w_wait(&w, st), STATUS_CONNECTION_REFUSED, "connect to an address nobody listens on: CONNECTION_REFUSED");
    close_obj(&ca->Header);
    ad->Dispatch->NdkCreateConnector(ad, create_cb, NULL, &ca);
    uint8_t pdata[5] = {9, 8, 7, 6, 5};
    NTSTATUS cst = ASYNC(&w, ca->Dispatch->NdkConnect(ca, qa, (PSOCKADDR)&src, sizeof(src),
                                                      (PSOCKADDR)&dst, sizeof(dst), 2, 3, pdata, sizeof(pdata),
                                                      req_cb, &w));
    NDK_CONNECTOR *in = wait_incoming();
    if (tap_ok(in != NULL, "connect event delivered")) {
        ULONG ird = 0, ord = 0, plen = 0;
        uint8_t got[16];
        NTSTATUS g1 = in->Dispatch->NdkGetConnectionData(in, &ird, &ord, got, &plen);
        plen = sizeof(got);
        NTSTATUS g2 = in->Dispatch->NdkGetConnectionData(in, &ird, &ord, got, &plen);
        tap_ok(g1 == STATUS_BUFFER_TOO_SMALL && g2 == STATUS_SUCCESS && ird == 2 && ord == 3 && plen == 5 &&
                   !memcmp(got, pdata, 5),
               "NdkGetConnectionData: the caller's read limits and private data");
        struct sockaddr_in peer;
        ULONG alen = sizeof(peer);
        st = in->Dispatch->NdkGetPeerAddress(in, (SOCKADDR *)&peer, &alen);
        tap_ok(st == STATUS_SUCCESS && peer.sin_port == src.sin_port, "NdkGetPeerAddress: the caller's address");
        alen = sizeof(peer);
        st = in->Dispatch->NdkGetLocalAddress(in, (PSOCKADDR)&peer, &alen);
        tap_ok(st == STATUS_SUCCESS && peer.sin_port == dst.sin_port, "NdkGetLocalAddress: the listened address");
        expect(in->Dispatch->NdkReject(in, NULL, 0), STATUS_SUCCESS, "NdkReject");
        expect(w_wait(&w, cst), STATUS_CONNECTION_REFUSED,
               "rejected connect completes CONNECTION_REFUSED");
        close_obj(&in->Header);
    }
    close_obj(&ca->Header);
    close_obj(&qa->Header);
    close_obj(&qb->Header);
}

/* ------------------------------------------------------------------------- */
/* Guarantees (docs/guarantees.md): every accepted request completes exactly once,
 * refused ones never; posting never waits; closes never pend forever. Each case runs
 * on a software adapter of its own (started here, so it can be stopped or killed),
 * with randomized timing over many trials, bounded in seconds. */

struct priv {
    pid_t pid;
    char dir[32], sock[64];
    NDK_ADAPTER *ad, *saved_ad;
    NDK_CQ *cq, *saved_cq;
    NDK_PD *pd;
    NDK_LISTENER *l;
    pthread_t saved_thread;
    int saved_known;
    NDK_MR *fr; /* fr_setup: a fast-register MR ... */
    NDK_LOGICAL_ADDRESS page; /* ... and a page for it */
};

/* Start nfmodel, open it, a CQ of cq_depth (notify may be NULL), a PD and a listener;
 * the suite's globals (ad, cq) point at it until priv_close. */
static int priv_open(struct priv *p, ULONG cq_depth, NDK_FN_CQ_NOTIFICATION_CALLBACK notify, void *nctx)
{
    memset(p, 0, sizeof(*p));
    const char *bin = getenv("NDKFPGA_MODEL");
    if (!bin || !*bin)
        bin = NDK_MODEL_BIN;
    snprintf(p->dir, sizeof(p->dir), "/tmp/ndkgua.XXXXXX");
    if (!mkdtemp(p->dir))
        return 0;
    snprintf(p->sock, sizeof(p->sock), "%s/sock", p->dir);
    char dev[96];
    snprintf(dev, sizeof(dev), "model:%s", p->sock);
    char *argv[] = {(char *)bin, "--socket", p->sock, NULL};
    if (posix_spawn(&p->pid, bin, NULL, NULL, argv, environ) != 0) {
        rmdir(p->dir);
        p->pid = 0;
        return 0;
    }
    NTSTATUS st = STATUS_NETWORK_UNREACHABLE;
    for (int i = 0; i < 500 && st != STATUS_SUCCESS; i++) {
        st = NdkFpgaOpenAdapter(dev, &p->ad);
        if (st != STATUS_SUCCESS)
            sleep_ms(10);
    }
    if (st != STATUS_SUCCESS) {
        printf("# private adapter: %s\n", NdkFpgaStatusName(st));
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
        unlink(p->sock);
        rmdir(p->dir);
        return 0;
    }
    p->saved_ad = ad;
    p->saved_cq = cq;
    ad = p->ad;
    pthread_mutex_lock(&conf_global);
    p->saved_thread = conf_cb_thread;
    p->saved_known = conf_cb_thread_known;
    conf_cb_thread_known = 0;
    pthread_mutex_unlock(&conf_global);
    ad->Dispatch->NdkCreateCq(ad, cq_depth, notify, nctx, NULL, NULL, NULL, &p->cq);
    cq = p->cq;
    ad->Dispatch->NdkCreatePd(ad, NULL, NULL, &p->pd);
    ad->Dispatch->NdkCreateListener(ad, on_connect_event, NULL, NULL, NULL, &p->l);
    struct sockaddr_in any = loopback_addr(LISTEN_PORT);
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    if (!p->cq || !p->pd || !p->l ||
        p->l->Dispatch->NdkListen(p->l, (PSOCKADDR)&any, sizeof(any), NULL, NULL) != STATUS_SUCCESS)
        printf("# private adapter: CQ, PD or listener failed\n");
    return p->cq && p->pd && p->l;
}

static int priv_start(struct priv *p, ULONG cq_depth, const char *what)
{
    return tap_ok(priv_open(p, cq_depth, NULL, NULL), "%s: private adapter", what);
}

static void priv_kill(struct priv *p)
{
    if (p->pid) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
        p->pid = 0;
    }
}

/* Close the adapter (children left open) and the model; the close's milliseconds. */
static uint64_t priv_close(struct priv *p)
{
    uint64_t t0 = now_ms();
    NdkFpgaCloseAdapter(p->ad);
    uint64_t dt = now_ms() - t0;
    if (p->pid)
        kill(p->pid, SIGCONT);
    priv_kill(p);
    ad = p->saved_ad;
    cq = p->saved_cq;
    pthread_mutex_lock(&conf_global);
    conf_cb_thread = p->saved_thread;
    conf_cb_thread_known = p->saved_known;
    pthread_mutex_unlock(&conf_global);
    unlink(p->sock);
    rmdir(p->dir);
    return dt;
}

/* p->fr: a fast-register MR of p's PD over one fresh page (p->page); 0 on failure. */
static int fr_setup(struct priv *p)
{
    MDL *b = NULL;
    p->fr = new_mr(p->pd, 1);
    if (!p->fr || init_fast(p->fr, 1, TRUE) != STATUS_SUCCESS || NdkFpgaAllocateBuffer(ad, PAGE_SIZE, &b) != STATUS_SUCCESS)
        return 0;
    p->page.QuadPart = (LONGLONG)MmGetMdlPfnArray(b)[0] << PAGE_SHIFT;
    return 1;
}

/* connect_pair with QPs of initiator depth depth. */
static int connect_pair_depth(NDK_PD *p, ULONG depth, struct pair *pr)
{
    ULONG saved_depth = pair_depth;
    pair_depth = depth;
    int ok = connect_pair(p, pr);
    pair_depth = saved_depth;
    return ok;
}

/* A connected pair of depth depth and a fast MR with a page to register. */
static int pair_fr_setup(struct priv *p, ULONG depth, struct pair *pr)
{
    return connect_pair_depth(p->pd, depth, pr) && fr_setup(p);
}

/* pair_fr_setup on a private adapter, reported as "WHAT: connected QPs and a fast
 * MR"; on failure the adapter is closed. */
static int priv_pair_fr_setup(struct priv *p, ULONG depth, const char *what, struct pair *pr)
{
    if (tap_ok(pair_fr_setup(p, depth, pr), "%s: connected QPs and a fast MR", what))
        return 1;
    priv_close(p);
    return 0;
}

/* Post request i of a stream: even ones fast-register, odd ones invalidate (so each
 * succeeds while the QP is healthy); the request context is i + 1. */
static NTSTATUS post_i(NDK_QP *q, NDK_MR *fr, NDK_LOGICAL_ADDRESS page, uint32_t i, ULONG flags)
{
    if (i % 2 == 0)
        return q->Dispatch->NdkFastRegister(q, (PVOID)(uintptr_t)(i + 1), fr, 1, &page, 0, 64, (PVOID)0x1000, flags);
    return q->Dispatch->NdkInvalidate(q, (PVOID)(uintptr_t)(i + 1), &fr->Header, flags);
}

/* Drain the CQ into per-context counts until want results arrived or timeout_ms
 * passed with nothing new; returns the number of results. */
static uint32_t drain_counts(NDK_CQ *c, uint8_t *count, uint32_t n, uint32_t want, int timeout_ms, uint32_t *bad)
{
    uint32_t got = 0;
    uint64_t last = now_ms();
    while (got < want || now_ms() - last < 20) {
        NDK_RESULT_EX r[16];
        ULONG k = c->Dispatch->NdkGetCqResultsEx(c, r, 16);
        for (ULONG j = 0; j < k; j++) {
            uintptr_t ctx = (uintptr_t)r[j].RequestContext;
            if (ctx >= 1 && ctx <= n && count[ctx - 1] < 255)
                count[ctx - 1]++;
            else
                (*bad)++;
        }
        got += k;
        if (k) {
            last = now_ms();
            continue;
        }
        if (now_ms() - last > (uint64_t)timeout_ms)
            break;
        sleep_ms(1);
    }
    return got;
}

/* What a run's completions say against what was accepted: requests accepted that never
 * completed (lost), completed more than once (dup), completed without being accepted
 * or with an unknown context (extra). */
struct tally {
    int lost, dup, extra;
};

static void tally_run(NDK_CQ *c, const uint8_t *accepted, uint8_t *count, uint32_t n, uint32_t acc, struct tally *t)
{
    uint32_t bad = 0;
    drain_counts(c, count, n, acc, 3000, &bad);
    for (uint32_t i = 0; i < n; i++) {
        t->lost += accepted[i] && count[i] == 0;
        t->dup += count[i] > 1;
        t->extra += !accepted[i] && count[i] > 0;
    }
    t->extra += (int)bad;
}

static uint32_t rnd_state = 12345;
static uint32_t rnd(void)
{
    rnd_state = rnd_state * 1103515245u + 12345u;
    return rnd_state >> 8;
}

/* ---- CQ overflow: reported, never silent ---- */
static int ovf_calls;
static NTSTATUS ovf_status;
static VOID ovf_notify(PVOID ctx, NTSTATUS st)
{
    (void)ctx;
    conf_note_thread();
    pthread_mutex_lock(&conf_global);
    ovf_calls++;
    ovf_status = st;
    pthread_mutex_unlock(&conf_global);
}

static void test_cq_overflow(void)
{
    for (int armed = 0; armed < 2; armed++) {
        struct priv p;
        if (!tap_ok(priv_open(&p, 4, ovf_notify, NULL), "CQ overflow: private adapter"))
            return;
        pthread_mutex_lock(&conf_global);
        ovf_calls = 0;
        ovf_status = 0;
        pthread_mutex_unlock(&conf_global);
        struct pair pr;
        if (!priv_pair_fr_setup(&p, 64, "CQ overflow", &pr))
            return;
        if (armed)
            cq->Dispatch->NdkArmCq(cq, NDK_CQ_NOTIFY_ANY);
        int posted = 0;
        for (uint32_t i = 0; i < 16; i++)
            posted += post_i(pr.qa, p.fr, p.page, i, 0) == STATUS_SUCCESS;
        uint64_t t0 = now_ms();
        int calls = 0;
        NTSTATUS st = 0;
        while (now_ms() - t0 < 3000) {
            pthread_mutex_lock(&conf_global);
            calls = ovf_calls;
            st = ovf_status;
            pthread_mutex_unlock(&conf_global);
            if (calls && st == STATUS_BUFFER_OVERFLOW)
                break;
            sleep_ms(5);
        }
        sleep_ms(100); /* a second notification would come now */
        pthread_mutex_lock(&conf_global);
        calls = ovf_calls;
        pthread_mutex_unlock(&conf_global);
        int ovf_seen = calls >= 1 && st == STATUS_BUFFER_OVERFLOW;
        /* Posts after the overflow (it may come while posting) are refused: more than 4 got in. */
        tap_ok(posted > 4 && ovf_seen && (armed ? calls <= 2 : calls == 1),
               "CQ overflow (%s): %d completions into a CQ of 4 notify STATUS_BUFFER_OVERFLOW once (%d calls, last %s)",
               armed ? "armed" : "not armed", posted, calls, NdkFpgaStatusName(st));
        NDK_RESULT_EX r[8];
        ULONG n = cq->Dispatch->NdkGetCqResultsEx(cq, r, 8);
        NTSTATUS after = post_i(pr.qa, p.fr, p.page, 16, 0);
        tap_ok(n <= 4 && after == STATUS_CANCELLED,
               "CQ overflow: the CQ holds what it held (%u), its QP refuses new work inline with CANCELLED (%s)",
               (unsigned)n, NdkFpgaStatusName(after));
        NDKFPGA_COUNTER cnt[256];
        ULONG ncnt = 256;
        UINT64 ovf = 0;
        if (NdkFpgaQueryCounters(ad, cnt, &ncnt) == STATUS_SUCCESS)
            for (ULONG i = 0; i < ncnt; i++)
                if (cnt[i].Group == NDKFPGA_COUNTER_HOST && !strcmp(cnt[i].Name, "cq_overflows"))
                    ovf = cnt[i].Value;
        tap_ok(ovf == 1, "CQ overflow: NdkFpgaQueryCounters counts it (host cq_overflows = %llu)",
               (unsigned long long)ovf);
        uint64_t dt = priv_close(&p);
        tap_ok(dt < 2000, "CQ overflow: NdkFpgaCloseAdapter returns (%llu ms)", (unsigned long long)dt);
    }
}

/* ---- NdkFlush concurrent with posting ---- */
struct flush_race {
    NDK_QP *q;
    uint32_t flush_after;
    int go;
};

static void *flush_thread(void *arg)
{
    struct flush_race *f = arg;
    while (!__atomic_load_n(&f->go, __ATOMIC_ACQUIRE))
        ;
    for (volatile uint32_t spin = 0; spin < f->flush_after; spin++)
        ;
    f->q->Dispatch->NdkFlush(f->q);
    return NULL;
}

static void test_flush_race(void)
{
    struct priv p;
    if (!priv_start(&p, 1024, "flush race"))
        return;
    if (!tap_ok(fr_setup(&p), "flush race: fast MR")) {
        priv_close(&p);
        return;
    }
    enum { N = 200 };
    int trials = 60, slow_posts = 0;
    struct tally tl = {0, 0, 0};
    uint8_t accepted[N], count[N];
    uint64_t t_start = now_ms();
    int t;
    for (t = 0; t < trials && now_ms() - t_start < 8000; t++) {
        struct pair pr;
        int ok = connect_pair_depth(p.pd, 256, &pr);
        if (!ok)
            break;
        struct flush_race f = {pr.qa, rnd() % 200000u, 0};
        memset(accepted, 0, sizeof(accepted));
        memset(count, 0, sizeof(count));
        pthread_t th;
        pthread_create(&th, NULL, flush_thread, &f);
        uint32_t acc = 0;
        __atomic_store_n(&f.go, 1, __ATOMIC_RELEASE);
        for (uint32_t i = 0; i < N; i++) {
            uint64_t t0 = now_ms();
            NTSTATUS st = post_i(pr.qa, p.fr, p.page, i, (rnd() % 4 == 0) ? NDK_OP_FLAG_DEFER : 0);
            slow_posts += now_ms() - t0 > 500;
            if (st == STATUS_SUCCESS) {
                accepted[i] = 1;
                acc++;
            }
        }
        pthread_join(th, NULL);
        tally_run(cq, accepted, count, N, acc, &tl);
        close_pair(&pr);
    }
    tap_ok(t > 0 && tl.lost == 0 && tl.dup == 0 && tl.extra == 0 && slow_posts == 0,
           "NdkFlush concurrent with posting, %d trials x %d posts: every accepted request completes once "
           "(%d lost, %d twice, %d after an inline refusal, %d posts waited)",
           t, N, tl.lost, tl.dup, tl.extra, slow_posts);
    uint64_t dt = priv_close(&p);
    tap_ok(dt < 2000, "flush race: NdkFpgaCloseAdapter returns (%llu ms)", (unsigned long long)dt);
}

/* ---- link death while posting ---- */
struct poster {
    NDK_QP *q;
    NDK_MR *fr;
    NDK_LOGICAL_ADDRESS page;
    uint32_t n;
    uint8_t *accepted;
    uint32_t max_post_ms;
};

static void *poster_thread(void *arg)
{
    struct poster *ps = arg;
    for (uint32_t i = 0; i < ps->n; i++) {
        uint64_t t0 = now_ms();
        NTSTATUS st = post_i(ps->q, ps->fr, ps->page, i, (i % 3 == 1) ? NDK_OP_FLAG_DEFER : 0);
        uint32_t dt = (uint32_t)(now_ms() - t0);
        if (dt > ps->max_post_ms)
            ps->max_post_ms = dt;
        ps->accepted[i] = st == STATUS_SUCCESS;
        if (st == STATUS_INSUFFICIENT_RESOURCES) /* the ring is full: let completions drain */
            sleep_ms(1);
    }
    return NULL;
}

static void test_death_while_posting(void)
{
    enum { N = 3000 };
    static uint8_t accepted[N], count[N];
    int trials = 8, t, slow_close = 0;
    struct tally tl = {0, 0, 0};
    uint32_t max_post = 0;
    for (t = 0; t < trials; t++) {
        struct priv p;
        if (!priv_open(&p, 4096, NULL, NULL))
            break;
        struct pair pr;
        int ok = pair_fr_setup(&p, 1024, &pr);
        if (!ok) {
            priv_close(&p);
            break;
        }
        memset(accepted, 0, sizeof(accepted));
        memset(count, 0, sizeof(count));
        struct poster ps = {pr.qa, p.fr, p.page, N, accepted, 0};
        pthread_t th;
        pthread_create(&th, NULL, poster_thread, &ps);
        sleep_ms((int)(rnd() % 40));
        if (t % 2)
            kill(p.pid, SIGSTOP), sleep_ms((int)(rnd() % 20));
        priv_kill(&p);
        pthread_join(th, NULL);
        uint32_t acc = 0;
        for (uint32_t i = 0; i < N; i++)
            acc += accepted[i];
        tally_run(cq, accepted, count, N, acc, &tl);
        if (ps.max_post_ms > max_post)
            max_post = ps.max_post_ms;
        slow_close += priv_close(&p) >= 2000;
    }
    tap_ok(t == trials && tl.lost == 0 && tl.dup == 0 && tl.extra == 0 && slow_close == 0 && max_post < 500,
           "link death while posting, %d trials: every accepted request completes once, refused ones never "
           "(%d lost, %d twice, %d after an inline refusal; longest post %u ms; %d slow closes)",
           t, tl.lost, tl.dup, tl.extra, (unsigned)max_post, slow_close);
}

/* ---- a frozen adapter: posting never waits; deadlines; close ---- */
struct freeze_post {
    NDK_QP *q;
    NDK_MR *fr;
    NDK_LOGICAL_ADDRESS page;
    int done, accepted;
};

static void *freeze_poster(void *arg)
{
    struct freeze_post *f = arg;
    int acc = 0;
    for (uint32_t i = 0; i < 9; i++)
        acc += post_i(f->q, f->fr, f->page, i, 0) == STATUS_SUCCESS;
    f->accepted = acc;
    __atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void test_frozen(void)
{
    struct priv p;
    if (!priv_start(&p, 1024, "frozen adapter"))
        return;
    struct pair pr;
    if (!priv_pair_fr_setup(&p, 64, "frozen adapter", &pr))
        return;
    /* Fill the link's window while the adapter is frozen, then post on an idle QP. */
    kill(p.pid, SIGSTOP);
    struct freeze_post f = {pr.qa, p.fr, p.page, 0, 0};
    pthread_t th;
    uint64_t t0 = now_ms();
    pthread_create(&th, NULL, freeze_poster, &f);
    while (!__atomic_load_n(&f.done, __ATOMIC_ACQUIRE) && now_ms() - t0 < 2000)
        sleep_ms(1);
    int done = __atomic_load_n(&f.done, __ATOMIC_ACQUIRE);
    uint64_t dt = now_ms() - t0;
    tap_ok(done && f.accepted == 9 && dt < 500,
           "frozen adapter: 9 posts on an idle QP return at once, accepted (%llu ms, %d accepted)",
           (unsigned long long)dt, f.accepted);
    /* A request and a deferred work request outstanding, then the adapter thaws. */
    struct waiter w;
    w_init(&w);
    NDK_MR *late = NULL;
    NTSTATUS cst = ASYNC(&w, p.pd->Dispatch->NdkCreateMr(p.pd, TRUE, create_cb, &w, &late));
    NTSTATUS dst = post_i(pr.qa, p.fr, p.page, 9, NDK_OP_FLAG_DEFER);
    kill(p.pid, SIGCONT);
    if (!done) {
        pthread_join(th, NULL); /* blocked until the thaw */
    } else {
        pthread_join(th, NULL);
    }
    uint8_t count[10] = {0};
    uint32_t bad = 0;
    drain_counts(cq, count, 10, 10, 3000, &bad);
    int once = 1;
    for (int i = 0; i < 10; i++)
        once &= count[i] == 1;
    NTSTATUS got = w_wait(&w, cst);
    tap_ok(cst == STATUS_PENDING && got == STATUS_SUCCESS && dst == STATUS_SUCCESS && once && bad == 0,
           "frozen then thawed: the queued posts, a deferred one with nothing after it and a request all complete "
           "once (%s)", NdkFpgaStatusName(got));
    if (late)
        close_obj(&late->Header);
    /* Frozen again with work outstanding: the close returns within 2 s, the
     * outstanding request's callback runs once. */
    kill(p.pid, SIGSTOP);
    post_i(pr.qa, p.fr, p.page, 0, 0);
    w_init(&w);
    late = NULL;
    cst = ASYNC(&w, p.pd->Dispatch->NdkCreateMr(p.pd, TRUE, create_cb, &w, &late));
    dt = priv_close(&p);
    got = w_wait(&w, cst);
    tap_ok(dt < 2000 && cst == STATUS_PENDING && got != STATUS_SUCCESS && got != STATUS_IO_TIMEOUT + 1,
           "frozen adapter: NdkFpgaCloseAdapter returns in %llu ms, the outstanding request completed (%s)",
           (unsigned long long)dt, NdkFpgaStatusName(got));
}

/* ---- deadlines: an adapter that never answers ---- */
struct nested {
    NDK_PD *pd;
    NTSTATUS outer, inner;
    int done;
};

/* A completion callback that makes a synchronous call (no callback given). */
static VOID nested_cb(PVOID ctx, NTSTATUS st)
{
    struct nested *n = ctx;
    conf_note_thread();
    NDK_MR *mr = NULL;
    NTSTATUS in = n->pd->Dispatch->NdkCreateMr(n->pd, TRUE, NULL, NULL, &mr);
    pthread_mutex_lock(&conf_global);
    n->outer = st;
    n->inner = in;
    n->done = 1;
    pthread_mutex_unlock(&conf_global);
}

static void test_deadlines(void)
{
    setenv("NDKFPGA_REQUEST_TIMEOUT_MS", "400", 1);
    setenv("NDKFPGA_LINK_TIMEOUT_MS", "60000", 1);
    struct priv p;
    int opened = priv_open(&p, 64, NULL, NULL);
    unsetenv("NDKFPGA_REQUEST_TIMEOUT_MS");
    unsetenv("NDKFPGA_LINK_TIMEOUT_MS");
    if (!tap_ok(opened, "deadlines: private adapter"))
        return;
    struct pair pr;
    if (!priv_pair_fr_setup(&p, pair_depth, "deadlines", &pr))
        return;
    /* A silent request outstanding longer than the deadline does not make the next
     * request that reports a completion time out at once. */
    NTSTATUS s1 = post_i(pr.qa, p.fr, p.page, 100, NDK_OP_FLAG_SILENT_SUCCESS);
    sleep_ms(700);
    NTSTATUS s2 = post_i(pr.qa, p.fr, p.page, 101, 0);
    NDK_RESULT_EX r0;
    int have0 = cq_wait(cq, &r0, 3000);
    tap_ok(s1 == STATUS_SUCCESS && s2 == STATUS_SUCCESS && have0 && r0.Status == STATUS_SUCCESS &&
               r0.RequestContext == (PVOID)102,
           "deadlines: a request after a silent one that waited past the deadline completes normally (%s)",
           have0 ? NdkFpgaStatusName(r0.Status) : "nothing");
    kill(p.pid, SIGSTOP);
    uint64_t t0 = now_ms();
    NTSTATUS ps = post_i(pr.qa, p.fr, p.page, 0, 0);
    struct waiter w;
    w_init(&w);
    NTSTATUS st = ASYNC(&w, p.fr->Dispatch->NdkInitializeFastRegisterMr(p.fr, 1, TRUE, req_cb, &w));
    NTSTATUS got = w_wait(&w, st);
    NDK_RESULT_EX r;
    int have = cq_wait(cq, &r, 3000);
    uint64_t dt = now_ms() - t0;
    tap_ok(ps == STATUS_SUCCESS && st == STATUS_PENDING && got == STATUS_IO_TIMEOUT && have &&
               r.Status == STATUS_IO_TIMEOUT && r.RequestContext == (PVOID)1 && dt < 3000,
           "deadlines: a request and a work request the adapter never answers complete STATUS_IO_TIMEOUT "
           "(%s, %s, %llu ms)", NdkFpgaStatusName(got), have ? NdkFpgaStatusName(r.Status) : "nothing",
           (unsigned long long)dt);
    /* A synchronous call from a callback: the callback thread cannot enforce its
     * deadline, the waiting call does. */
    struct nested nest = {p.pd, 0, 0, 0};
    t0 = now_ms();
    st = p.fr->Dispatch->NdkInitializeFastRegisterMr(p.fr, 1, TRUE, nested_cb, &nest);
    int nd = 0;
    while (!nd && now_ms() - t0 < 4000) {
        sleep_ms(10);
        pthread_mutex_lock(&conf_global);
        nd = nest.done;
        pthread_mutex_unlock(&conf_global);
    }
    tap_ok(st == STATUS_PENDING && nd && nest.outer == STATUS_IO_TIMEOUT && nest.inner == STATUS_IO_TIMEOUT,
           "deadlines: a synchronous call made from a callback is bounded too (%s, %s, %llu ms)",
           NdkFpgaStatusName(nest.outer), NdkFpgaStatusName(nest.inner), (unsigned long long)(now_ms() - t0));
    kill(p.pid, SIGCONT);
    sleep_ms(200);
    tap_ok(!cq_wait(cq, &r, 300), "deadlines: the late answer is not a second completion");
    uint64_t cdt = priv_close(&p);
    tap_ok(cdt < 2000, "deadlines: NdkFpgaCloseAdapter returns (%llu ms)", (unsigned long long)cdt);
}

/* ---- closes: a QP with work outstanding; an MR after the link died ---- */
static void test_closes(void)
{
    struct priv p;
    if (!priv_start(&p, 1024, "closes"))
        return;
    int lost = 0, dup = 0, pend_ok = 1, trials = 20;
    for (int t = 0; t < trials; t++) {
        struct pair pr;
        int ok = pair_fr_setup(&p, 64, &pr);
        if (!ok) {
            pend_ok = 0;
            break;
        }
        uint8_t acc[40] = {0}, count[40] = {0};
        uint32_t n = 1 + rnd() % 40;
        for (uint32_t i = 0; i < n; i++)
            acc[i] = post_i(pr.qa, p.fr, p.page, i, (rnd() % 2) ? NDK_OP_FLAG_DEFER : 0) == STATUS_SUCCESS;
        struct waiter w;
        w_init(&w);
        NTSTATUS st = ASYNC(&w, NdkCloseObject(&pr.qa->Header, close_cb, &w));
        pend_ok &= w_wait(&w, st) == STATUS_SUCCESS;
        /* Everything completed before the close did: the CQ holds it all now. */
        NDK_RESULT_EX r[64];
        ULONG k = cq->Dispatch->NdkGetCqResultsEx(cq, r, 64);
        for (ULONG j = 0; j < k; j++) {
            uintptr_t c = (uintptr_t)r[j].RequestContext;
            if (c >= 1 && c <= 40)
                count[c - 1]++;
        }
        for (uint32_t i = 0; i < n; i++) {
            lost += acc[i] && count[i] == 0;
            dup += count[i] > 1;
        }
        pr.qa = NULL;
        close_pair(&pr);
        close_obj(&p.fr->Header);
    }
    tap_ok(pend_ok && lost == 0 && dup == 0,
           "closing a QP with requests outstanding: each completes once before the close does, %d trials "
           "(%d lost, %d twice)", trials, lost, dup);
    /* Link death, then NdkInitializeFastRegisterMr without a callback: the MR and its
     * PD still close. */
    NDK_MR *mr = new_mr(p.pd, 1);
    priv_kill(&p);
    sleep_ms(100);
    NTSTATUS st = mr ? mr->Dispatch->NdkInitializeFastRegisterMr(mr, 1, TRUE, NULL, NULL) : STATUS_SUCCESS;
    struct waiter wm, wp;
    w_init(&wm);
    w_init(&wp);
    NTSTATUS sm = mr ? ASYNC(&wm, NdkCloseObject(&mr->Header, close_cb, &wm)) : STATUS_INTERNAL_ERROR;
    int saved = conf_timeout_ms;
    conf_timeout_ms = 2000;
    NTSTATUS gm = w_wait(&wm, sm);
    NTSTATUS sp = ASYNC(&wp, NdkCloseObject(&p.pd->Header, close_cb, &wp));
    NTSTATUS gp = w_wait(&wp, sp);
    conf_timeout_ms = saved;
    tap_ok(st != STATUS_SUCCESS && st != STATUS_PENDING && gm == STATUS_SUCCESS && gp == STATUS_SUCCESS,
           "after link death, NdkInitializeFastRegisterMr without a callback fails inline (%s); the MR's close (%s) "
           "and the PD's close (%s) complete", NdkFpgaStatusName(st), NdkFpgaStatusName(gm), NdkFpgaStatusName(gp));
    priv_close(&p);
}

/* ---- MDLs and objects: only this adapter's own, live ones ---- */
static void test_foreign(void)
{
    MDL *mine = NULL;
    NdkFpgaAllocateBuffer(ad, PAGE_SIZE, &mine);
    struct priv p;
    if (!tap_ok(mine && priv_open(&p, 16, NULL, NULL), "foreign objects: a second adapter"))
        return;
    MDL *theirs = NULL;
    NdkFpgaAllocateBuffer(ad, PAGE_SIZE, &theirs); /* ad is the private adapter now */
    NDK_ADAPTER *first = p.saved_ad;
    uint8_t x[16] = {1, 2, 3};
    MDL copy = *mine;
    tap_ok(theirs && NdkFpgaWriteBuffer(first, theirs, 0, x, 16) == STATUS_INVALID_PARAMETER &&
               NdkFpgaReadBuffer(first, theirs, 0, x, 16) == STATUS_INVALID_PARAMETER,
           "NdkFpgaWrite/ReadBuffer with another adapter's MDL: INVALID_PARAMETER");
    tap_ok(NdkFpgaWriteBuffer(first, &copy, 0, x, 16) == STATUS_INVALID_PARAMETER &&
               NdkFpgaReadBuffer(first, &copy, 0, x, 16) == STATUS_INVALID_PARAMETER,
           "NdkFpgaWrite/ReadBuffer with a hand-made MDL (same pages as one of ours): INVALID_PARAMETER");
    tap_ok(NdkFpgaWriteBuffer(first, mine, 0, x, 16) == STATUS_SUCCESS, "NdkFpgaWriteBuffer with our own MDL");
    NDK_QP *q = NULL;
    NTSTATUS st = pd->Dispatch->NdkCreateQp(pd, p.cq, p.cq, NULL, 0, 4, 0, 1, 0, NULL, NULL, &q);
    tap_ok(st == STATUS_INVALID_PARAMETER && !q, "NdkCreateQp with another adapter's CQ: INVALID_PARAMETER (%s)",
           NdkFpgaStatusName(st));
    NDK_PD fake_pd = *pd;
    NDK_MR *mr = NULL;
    st = fake_pd.Dispatch->NdkCreateMr(&fake_pd, TRUE, NULL, NULL, &mr);
    tap_ok(st == STATUS_INVALID_PARAMETER && !mr, "NdkCreateMr on a hand-made PD: INVALID_PARAMETER (%s)",
           NdkFpgaStatusName(st));
    NdkFpgaFreeBuffer(ad, theirs);
    priv_close(&p);
    NdkFpgaFreeBuffer(ad, mine);
}

/* ---- a new QP's first request waits for the adapter, not for a stale clock ---- */
static void test_fresh_qp(void)
{
    struct priv p;
    if (!priv_start(&p, 64, "fresh QP"))
        return;
    int ok = fr_setup(&p), wrong = 0, t;
    for (t = 0; ok && t < 16; t++) {
        struct pair pr;
        if (!connect_pair(p.pd, &pr))
            break;
        NTSTATUS st = post_i(pr.qa, p.fr, p.page, 0, 0);
        kill(p.pid, SIGSTOP); /* the deadline scan sees it outstanding */
        sleep_ms(150);
        kill(p.pid, SIGCONT);
        NDK_RESULT_EX r;
        wrong += st != STATUS_SUCCESS || !cq_wait(cq, &r, 3000) || r.Status != STATUS_SUCCESS;
        post_i(pr.qa, p.fr, p.page, 1, NDK_OP_FLAG_SILENT_SUCCESS);
        close_pair(&pr);
    }
    tap_ok(t == 16 && wrong == 0,
           "a new QP's first request, delayed 150 ms by the adapter, completes SUCCESS (%d of %d did not)", wrong, t);
    priv_close(&p);
}

/* Link death: a software adapter of our own is stopped with requests and work
 * requests outstanding, then killed: every one completes with an error status,
 * new requests fail inline, and closing the adapter returns. */
static void test_link_death(void)
{
    struct priv p;
    if (!tap_ok(priv_open(&p, 64, NULL, NULL), "link death: open a private software adapter"))
        return;
    struct pair pr;
    if (pair_fr_setup(&p, pair_depth, &pr)) {
        kill(p.pid, SIGSTOP); /* the adapter stops answering */
        int posted = 0;
        posted += pr.qa->Dispatch->NdkFastRegister(pr.qa, (PVOID)1, p.fr, 1, &p.page, 0, 64, (PVOID)0x1000, 0) ==
                  STATUS_SUCCESS;
        posted += pr.qa->Dispatch->NdkInvalidate(pr.qa, (PVOID)2, &p.fr->Header, 0) == STATUS_SUCCESS;
        struct waiter w;
        w_init(&w);
        NDK_MR *late = NULL;
        NTSTATUS cst = ASYNC(&w, p.pd->Dispatch->NdkCreateMr(p.pd, TRUE, create_cb, &w, &late));
        tap_ok(posted == 2 && cst == STATUS_PENDING, "link death: work requests and a request outstanding");
        sleep_ms(50);
        priv_kill(&p);
        NTSTATUS got = w_wait(&w, cst);
        tap_ok(got != STATUS_SUCCESS && got != STATUS_IO_TIMEOUT && !w.obj,
               "link death: the outstanding NdkCreateMr completes with an error (%s)", NdkFpgaStatusName(got));
        NDK_RESULT_EX r1 = next_result(), r2 = next_result();
        tap_ok(r1.RequestContext == (PVOID)1 && r2.RequestContext == (PVOID)2 && r1.Status != STATUS_SUCCESS &&
                   r2.Status != STATUS_SUCCESS && r1.Status != STATUS_IO_TIMEOUT && r2.Status != STATUS_IO_TIMEOUT,
               "link death: both outstanding work requests complete with an error (%s, %s)",
               NdkFpgaStatusName(r1.Status), NdkFpgaStatusName(r2.Status));
        NTSTATUS st = pr.qa->Dispatch->NdkInvalidate(pr.qa, (PVOID)3, &p.fr->Header, 0);
        tap_ok(st != STATUS_SUCCESS && st != STATUS_PENDING, "link death: a new work request fails inline (%s)",
               NdkFpgaStatusName(st));
        w_init(&w);
        st = ASYNC(&w, p.fr->Dispatch->NdkInitializeFastRegisterMr(p.fr, 1, TRUE, req_cb, &w));
        st = w_wait(&w, st);
        tap_ok(st != STATUS_SUCCESS && st != STATUS_IO_TIMEOUT, "link death: a new request fails (%s)",
               NdkFpgaStatusName(st));
    } else {
        tap_ok(0, "link death: connected QPs on the private adapter");
    }
    uint64_t dt = priv_close(&p); /* children left open: freed without callbacks */
    tap_ok(dt < 10000, "link death: NdkFpgaCloseAdapter returns (%llu ms)", (unsigned long long)dt);
}

/* ------------------------------------------------------------------------- */
/* Send, Receive, SendAndInvalidate                                           */

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
        return tap_ok(0, "%s: %u bytes transferred, expected %u", name, (unsigned)r.BytesTransferred,
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
    tap_ok(info.MaxReceiveQueueDepth >= SR_DEPTH && info.MaxReceiveRequestSge >= SR_SGE && info.MaxInlineDataSize == 0,
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
    tap_ok(ok, "NdkReceive (1 and 2 SGEs) and NdkSend (1 and %u SGEs) are posted",
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
    tap_ok(!memcmp(got, area, sizeof(area)), "the Sends' bytes are in the receives' SGEs, in order; every other "
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
    tap_ok(__atomic_load_n(&notified, __ATOMIC_SEQ_CST) == before,
           "a receive CQ armed SOLICITED is not notified for a Send without SEND_AND_SOLICIT_EVENT");
    post_receive(pr->qb, (PVOID)0x623, b, SR_RECV, len, 1);
    post_send(pr->qa, (PVOID)0x624, b, 16, 0, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT, 0, 0);
    expect_result(next_result(), STATUS_SUCCESS, NdkOperationTypeSend, (PVOID)0x624,
                  "Send with SEND_AND_SOLICIT_EVENT: SUCCESS");
    uint64_t end = now_ms() + (uint64_t)conf_timeout_ms;
    while (__atomic_load_n(&notified, __ATOMIC_SEQ_CST) == before && now_ms() < end)
        sleep_ms(1);
    tap_ok(__atomic_load_n(&notified, __ATOMIC_SEQ_CST) == before + 1,
           "the receive CQ armed SOLICITED is notified once for the Send with SEND_AND_SOLICIT_EVENT");
    expect_receive(STATUS_SUCCESS, NdkOperationTypeReceive, (PVOID)0x623, 16, "its receive: SUCCESS");
    post_receive(pr->qb, (PVOID)0x625, b, SR_RECV, len, 1);
    expect(post_send(pr->qa, (PVOID)0x626, b, 16, 0, NDK_OP_FLAG_SILENT_SUCCESS, 0, 0), STATUS_SUCCESS,
           "NdkSend with SILENT_SUCCESS is posted");
    expect_receive(STATUS_SUCCESS, NdkOperationTypeReceive, (PVOID)0x625, 16, "its receive completes: SUCCESS");
    tap_ok(cq_stays_empty(), "the silent Send gives no result on the initiator CQ");
    expect(post_send(pr->qa, (PVOID)0x627, b, 16, 0, NDK_OP_FLAG_INLINE, 0, 0), STATUS_INVALID_PARAMETER,
           "NdkSend with INLINE (MaxInlineDataSize 0): INVALID_PARAMETER, inline");
    tap_ok(cq_stays_empty(), "the refused Send posted nothing");
}

/* NdkFlush completes the pending receives CANCELLED, in posting order. */
static void sr_flush(struct pair *pr, const struct buf *b)
{
    const ULONG len[1] = {16};
    int ok = 1;
    for (int i = 0; i < 3; i++)
        ok &= post_receive(pr->qb, (PVOID)(uintptr_t)(0x631 + i), b, SR_RECV, len, 1) == STATUS_SUCCESS;
    pr->qb->Dispatch->NdkFlush(pr->qb);
    tap_ok(ok, "3 receives posted, then NdkFlush");
    for (int i = 0; i < 3; i++)
        expect_receive(STATUS_CANCELLED, NdkOperationTypeReceive, (PVOID)(uintptr_t)(0x631 + i), 0,
                       "NdkFlush: a pending receive completes STATUS_CANCELLED, in posting order");
    tap_ok(cq_stays_empty(), "the flush gives nothing on the initiator CQ");
}

/* A Send with no receive posted: IO_TIMEOUT (receiver not ready), the sender breaks.
 * A Send larger than the receive: the receive BUFFER_TOO_SMALL with nothing written,
 * the Send CONNECTION_ABORTED. */
static void sr_failures(const struct buf *b)
{
    struct pair pr;
    if (!tap_ok(sr_connect(pd, &pr), "connect a pair with receive queues (no receive posted)")) {
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
    if (!tap_ok(sr_connect(pd, &pr), "connect a pair with receive queues (a Send too large)")) {
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
    tap_ok(!memcmp(got, area, sizeof(area)), "nothing written into the receive's SGEs nor the guard bytes around them");
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
        tap_ok(0, "a fast-registered MR for the SendAndInvalidate cases");
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
        tap_ok(0, "a bound window for the SendAndInvalidate case");
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
    if (!tap_ok(sr_connect(pd, &pr), "connect a pair with receive queues (SendAndInvalidate)")) {
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
        tap_ok(r.Status == STATUS_SUCCESS && r.Type == NdkOperationTypeReceiveAndInvalidate &&
                   r.TypeSpecificCompletionOutput == tok && r.BytesTransferred == 24 &&
                   r.RequestContext == (PVOID)0x651 && r.ProviderErrorCode == 0,
               "the receive completes SUCCESS, Type ReceiveAndInvalidate, TypeSpecificCompletionOutput = the token "
               "0x%08x of %s, 24 bytes (%s, type 0x%x, 0x%08llx, %u)",
               (unsigned)tok, what, NdkFpgaStatusName(r.Status), (unsigned)r.Type,
               (unsigned long long)r.TypeSpecificCompletionOutput, (unsigned)r.BytesTransferred);
        struct buf src = *b;
        NTSTATUS p = probe_write(pr.qb, &src, tgt, tok, va, 720);
        tap_ok(p == STATUS_ACCESS_VIOLATION, "an RDMA Write through the invalidated token of %s is refused, target "
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
    if (!tap_ok(sr_connect(pd, &pr), "connect a pair with receive queues (SendAndInvalidate of %s)", what)) {
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
    tap_ok(s.Status == STATUS_CONNECTION_ABORTED && s.RequestContext == (PVOID)0x662 &&
               r.Status == STATUS_CONNECTION_ABORTED && r.RequestContext == (PVOID)0x661 && r.BytesTransferred == 0 &&
               r.Type == NdkOperationTypeReceive && !memcmp(got, area, sizeof(area)),
           "SendAndInvalidate of %s: Send and receive complete STATUS_CONNECTION_ABORTED, no byte written (%s, %s)",
           what, NdkFpgaStatusName(s.Status), NdkFpgaStatusName(r.Status));
    sr_close(&pr);
    if (!connect_pair(owner, &pr)) {
        tap_ok(0, "a fresh connection of the MR's PD");
        close_pair(&pr);
        return;
    }
    NTSTATUS p = probe_write(pr.qa, src2, tgt, mr_tok, va, 731);
    tap_ok(p == STATUS_SUCCESS, "... nothing was invalidated: the MR still grants a write from a fresh connection (%s)",
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
    if (tap_ok(ok && src2.mr && reg_mr(src2.mr, src2.mdl, 64, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) == STATUS_SUCCESS &&
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

static void test_send_receive(void)
{
    NTSTATUS st = ad->Dispatch->NdkCreateCq(ad, 64, cq_notify, NULL, NULL, NULL, NULL, &rcq);
    if (!expect(st, STATUS_SUCCESS, "NdkCreateCq (the receive CQ)"))
        return;
    test_receive_limits();
    struct buf b, tgt;
    if (!new_buf(&b, PAGE_SIZE, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) || !new_buf(&tgt, PAGE_SIZE, 0, (ULONG)-1)) {
        tap_ok(0, "buffers for the Send and Receive cases");
        return;
    }
    struct pair pr;
    if (tap_ok(sr_connect(pd, &pr), "connect two QPs with receive queues (depth 16, 2 SGEs) on the receive CQ")) {
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

/* ------------------------------------------------------------------------- */
/* Memory windows                                                             */

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
    if (tap_ok(connect_pair(pd, &pr), "connect for: %s", name))
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
        tap_ok(0, "MRs and a window for the bind rules");
    } else {
        struct pair pr;
        if (tap_ok(connect_pair(pd, &pr), "connect for the inline bind rules")) {
            expect(pr.qa->Dispatch->NdkBind(pr.qa, NULL, rw, mw, (PVOID)(uintptr_t)base, 16, NDK_OP_FLAG_INLINE),
                   STATUS_INVALID_PARAMETER, "NdkBind unknown flag (INLINE): INVALID_PARAMETER inline");
            expect(pr.qa->Dispatch->NdkBind(pr.qa, NULL, rw, (NDK_MW *)(void *)ro, (PVOID)(uintptr_t)base, 16, R),
                   STATUS_INVALID_PARAMETER, "NdkBind with an MR as the window: INVALID_PARAMETER inline");
            tap_ok(cq_stays_empty(), "refused binds post nothing");
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
    if (!tap_ok(connect_pair(pd, &pr), "connect for the window of a fast-registered MR") || !fr || !mw ||
        init_fast(fr, 1, TRUE) != STATUS_SUCCESS) {
        tap_ok(0, "a fast MR and a window");
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
        tap_ok(0, "buffers and a second window");
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

static void test_windows(void)
{
    tap_ok(info.MaxWindowSize > 0 && info.MaxWindowSize <= 0xFFFFFFFFu,
           "MaxWindowSize: windows supported, at most 2^32-1 (%zu)", (size_t)info.MaxWindowSize);
    NDK_MW *mw = new_mw(pd), *mw2 = new_mw(pd);
    if (!tap_ok(mw && mw2, "NdkCreateMw: two windows"))
        return;
    tap_ok(wtoken(mw) != wtoken(mw2), "NdkGetRemoteTokenFromMw: each window its own token (0x%08x, 0x%08x)",
           (unsigned)wtoken(mw), (unsigned)wtoken(mw2));
    expect(close_obj(&mw2->Header), STATUS_SUCCESS, "NdkCloseMw of an unbound window");
    struct buf tgt, src;
    struct pair pr;
    NDK_MR *rw = new_mr(pd, 0);
    const ULONG rwf = NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ;
    if (new_buf(&tgt, PAGE_SIZE, 0, (ULONG)-1) && new_buf(&src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) && rw &&
        reg_mr(rw, tgt.mdl, REFUSAL_MR_BYTES, rwf) == STATUS_SUCCESS) {
        const UINT64 base = (UINT64)(uintptr_t)va_of(&tgt, 0);
        if (tap_ok(connect_pair(pd, &pr), "connect for the window cases"))
            mw_in_registered_mr(&pr, rw, mw, &tgt, base);
        close_pair(&pr);
        mw_bind_rules(rw, mw, &tgt, base);
        mw_in_fast_mr(&src, &tgt);
        dereg_mr(rw);
    } else {
        tap_ok(0, "a registered MR for the window cases");
    }
    if (rw)
        close_obj(&rw->Header);
    close_obj(&mw->Header);
    free_buf(&src);
    free_buf(&tgt);
}

static void test_guarantees(void)
{
    test_foreign();
    test_fresh_qp();
    test_cq_overflow();
    test_frozen();
    test_deadlines();
    test_closes();
    test_flush_race();
    test_death_while_posting();
}

int main(void)
{
    const char *dev = getenv("NDKFPGA_DEVICE");
    if (!dev || !*dev)
        dev = "model";
    slow = strncmp(dev, "sim", 3) == 0;
    if (slow)
        conf_timeout_ms = 120000;
    printf("# NDK conformance against \"%s\"\n", dev);
    NTSTATUS st = NdkFpgaOpenAdapter(dev, &ad);
    if (!expect(st, STATUS_SUCCESS, "NdkFpgaOpenAdapter"))
        return tap_done();
    test_adapter_info();
    st = ad->Dispatch->NdkCreateCq(ad, 1024, NULL, NULL, NULL, create_cb, NULL, &cq);
    expect(st, STATUS_SUCCESS, "NdkCreateCq");
    expect(ad->Dispatch->NdkCreatePd(ad, create_cb, NULL, &pd), STATUS_SUCCESS, "NdkCreatePd");
    expect(ad->Dispatch->NdkCreatePd(ad, create_cb, NULL, &pd2), STATUS_SUCCESS, "NdkCreatePd (second)");
    st = ad->Dispatch->NdkCreateListener(ad, on_connect_event, NULL, create_cb, NULL, &listener);
    struct sockaddr_in any;
    memset(&any, 0, sizeof(any));
    any.sin_family = AF_INET;
    any.sin_port = htons(LISTEN_PORT);
    if (st == STATUS_SUCCESS)
        st = listener->Dispatch->NdkListen(listener, (PSOCKADDR)&any, sizeof(any), req_cb, NULL);
    expect(st, STATUS_SUCCESS, "NdkCreateListener + NdkListen");
    if (!cq || !pd || !pd2 || st != STATUS_SUCCESS) {
        NdkFpgaCloseAdapter(ad);
        return tap_done();
    }
    NDK_LISTENER *l2 = NULL;
    ad->Dispatch->NdkCreateListener(ad, on_connect_event, NULL, create_cb, NULL, &l2);
    if (l2) {
        expect(l2->Dispatch->NdkListen(l2, (PSOCKADDR)&any, sizeof(any), req_cb, NULL),
               STATUS_SHARING_VIOLATION, "second listener on the same address and port: SHARING_VIOLATION");
        close_obj(&l2->Header);
    }

    static const struct {
        const char *name;
        void (*fn)(void);
    } sections[] = {
        {"create limits", test_create_limits},   {"registration", test_registration},
        {"unconnected QP", test_unconnected},     {"connections", test_connection_rules},
        {"fast register and data", test_fast_register_rules}, {"refused accesses", test_refusals},
        {"asynchronous contract", test_async},    {"flush", test_flush},
        {"send and receive", test_send_receive}, {"memory windows", test_windows},
    };
    if (!slow) { /* needs a software adapter of its own */
        test_link_death();
        uint64_t tg = now_ms();
        printf("# --- guarantees\n");
        test_guarantees();
        printf("# guarantees: %llu ms\n", (unsigned long long)(now_ms() - tg));
    }
    for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
        uint64_t t0 = now_ms();
        printf("# --- %s\n", sections[i].name);
        sections[i].fn();
        printf("# %s: %llu ms\n", sections[i].name, (unsigned long long)(now_ms() - t0));
    }

    close_obj(&listener->Header);
    close_obj(&pd->Header);
    close_obj(&pd2->Header);
    close_obj(&cq->Header);
    NdkFpgaCloseAdapter(ad);
    tap_ok(conf_violations == 0, "asynchronous contract over %d callbacks: only after STATUS_PENDING, never inside the "
                                 "call, one callback thread%s%s",
           conf_callbacks, conf_violations ? ": " : "", conf_violation_msg);
    return tap_done();
}
