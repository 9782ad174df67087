/* SPDX-License-Identifier: Apache-2.0 */
/* What every section needs: the suite's adapter and its objects, connected QP pairs in
 * loopback, buffers in adapter memory, remote accesses checked against the bytes, and
 * private software adapters a case may stop or kill. */
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include "conformance.h"

#ifndef NDK_MODEL_BIN
#define NDK_MODEL_BIN "nfmodel"
#endif
extern char **environ;

NDK_ADAPTER *ad;
NDK_ADAPTER_INFO info;
NDK_CQ *cq;
NDK_PD *pd, *pd2;
NDK_LISTENER *listener;
int slow;
NDK_CQ *pair_rcq;
ULONG pair_rq;
ULONG pair_depth = QP_DEPTH;

/* ------------------------------------------------------------------------- */
/* Small helpers                                                              */

int expect(NTSTATUS got, NTSTATUS want, const char *name)
{
    if (got == want)
        return conf_ok(1, "%s", name);
    return conf_ok(0, "%s: got %s (0x%08x), expected %s", name, NdkFpgaStatusName(got), (unsigned)got,
                   NdkFpgaStatusName(want));
}

NDK_OBJECT_HEADER *create_wait(struct waiter *w, NTSTATUS st, void *inline_obj, NTSTATUS *out)
{
    if (st == STATUS_PENDING) {
        st = w_wait(w, st);
        *out = st;
        return st == STATUS_SUCCESS ? w->obj : NULL;
    }
    *out = st;
    return st == STATUS_SUCCESS ? (NDK_OBJECT_HEADER *)inline_obj : NULL;
}

NTSTATUS close_obj(NDK_OBJECT_HEADER *obj)
{
    struct waiter w;
    w_init(&w);
    NTSTATUS st = ASYNC(&w, NdkCloseObject(obj, close_cb, &w));
    return w_wait(&w, st);
}

NDK_MR *new_mr(NDK_PD *p, int fast)
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

NTSTATUS init_fast(NDK_MR *mr, ULONG pages, BOOLEAN remote)
{
    struct waiter w;
    w_init(&w);
    NTSTATUS st = ASYNC(&w, mr->Dispatch->NdkInitializeFastRegisterMr(mr, pages, remote, req_cb, &w));
    return w_wait(&w, st);
}

NTSTATUS reg_mr(NDK_MR *mr, MDL *mdl, SIZE_T len, ULONG flags)
{
    struct waiter w;
    w_init(&w);
    NTSTATUS st = ASYNC(&w, mr->Dispatch->NdkRegisterMr(mr, mdl, len, flags, req_cb, &w));
    return w_wait(&w, st);
}

NTSTATUS dereg_mr(NDK_MR *mr)
{
    struct waiter w;
    w_init(&w);
    NTSTATUS st = ASYNC(&w, mr->Dispatch->NdkDeregisterMr(mr, req_cb, &w));
    return w_wait(&w, st);
}

NDK_MW *new_mw(NDK_PD *p)
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

UINT32 wtoken(NDK_MW *mw)
{
    return mw->Dispatch->NdkGetRemoteTokenFromMw(mw);
}

UINT32 rtoken(NDK_MR *mr)
{
    return mr->Dispatch->NdkGetRemoteTokenFromMr(mr);
}

NDK_QP *new_qp(NDK_PD *p, ULONG depth, NTSTATUS *out)
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
NDK_RESULT_EX next_of(NDK_CQ *c)
{
    NDK_RESULT_EX r;
    memset(&r, 0, sizeof(r));
    if (!cq_wait(c, &r, conf_timeout_ms))
        r.Status = STATUS_IO_TIMEOUT;
    return r;
}

/* The next result of the initiator CQ. */
NDK_RESULT_EX next_result(void)
{
    return next_of(cq);
}

/* No result shows up for a while (an inline failure posted nothing). */
int cq_stays_empty(void)
{
    NDK_RESULT_EX r;
    return !cq_wait(cq, &r, slow ? 300 : 30);
}

int expect_result(NDK_RESULT_EX r, NTSTATUS st, NDK_OPERATION_TYPE type, void *ctx, const char *name)
{
    if (r.Status == st && r.Type == type && r.RequestContext == ctx && r.QPContext == (PVOID)0x5150)
        return conf_ok(1, "%s", name);
    return conf_ok(0, "%s: result status %s type %d ctx %p qpctx %p refuse %u (expected %s type %d ctx %p)", name,
                   NdkFpgaStatusName(r.Status), (int)r.Type, r.RequestContext, r.QPContext,
                   (unsigned)r.ProviderErrorCode, NdkFpgaStatusName(st), (int)type, ctx);
}

/* ------------------------------------------------------------------------- */
/* Connections                                                                */

static pthread_mutex_t incoming_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t incoming_c = PTHREAD_COND_INITIALIZER;
static NDK_CONNECTOR *incoming;

VOID on_connect_event(PVOID ctx, NDK_CONNECTOR *c)
{
    (void)ctx;
    conf_note_thread();
    pthread_mutex_lock(&incoming_m);
    incoming = c;
    pthread_cond_broadcast(&incoming_c);
    pthread_mutex_unlock(&incoming_m);
}

NDK_CONNECTOR *wait_incoming(void)
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

int disconnects;
static VOID on_disconnect(PVOID ctx)
{
    (void)ctx;
    conf_note_thread();
    pthread_mutex_lock(&incoming_m);
    disconnects++;
    pthread_mutex_unlock(&incoming_m);
}

/* Two QPs of PD p connected to each other; 0 on failure (printed). */
int connect_pair(NDK_PD *p, struct pair *pr)
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

void close_pair(struct pair *pr)
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

int new_buf(struct buf *b, size_t len, int scattered, ULONG mr_flags)
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

void free_buf(struct buf *b)
{
    if (b->mr) {
        dereg_mr(b->mr);
        close_obj(&b->mr->Header);
    }
    if (b->mdl)
        NdkFpgaFreeBuffer(ad, b->mdl);
    memset(b, 0, sizeof(*b));
}

void fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

PVOID va_of(const struct buf *b, size_t off)
{
    return (uint8_t *)MmGetMdlVirtualAddress(b->mdl) + off;
}

int notified;
VOID cq_notify(PVOID ctx, NTSTATUS st)
{
    (void)ctx;
    (void)st;
    conf_note_thread();
    __atomic_add_fetch(&notified, 1, __ATOMIC_SEQ_CST);
}

/* ------------------------------------------------------------------------- */
/* Remote accesses                                                            */

/* Write 64 bytes of pattern seed through (token, va) from q; the result must agree with
 * the bytes: SUCCESS and they landed at tgt offset 0, or a refusal and tgt unchanged.
 * Returns the result's status, or STATUS_INTERNAL_ERROR when bytes and status disagree. */
NTSTATUS probe_write(NDK_QP *q, struct buf *src, struct buf *tgt, UINT32 token, UINT64 va, uint32_t seed)
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

/* A remote access the engine must refuse: the write (or read) completes with
 * ACCESS_VIOLATION, the target (or the local sink) is unchanged, the next request on
 * the QP is CANCELLED. */
void refused_access(const char *name, int write, struct buf *tgt, UINT32 token, UINT64 raddr, ULONG len)
{
    struct pair pr;
    if (!conf_ok(connect_pair(pd, &pr), "connect for: %s", name))
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
    conf_ok(st == STATUS_SUCCESS && r.Status == STATUS_ACCESS_VIOLATION && r.RequestContext == (PVOID)0x77 &&
                r.Type == (write ? NdkOperationTypeWrite : NdkOperationTypeRead),
            "%s: STATUS_ACCESS_VIOLATION (post %s, result %s, refuse %u)", name, NdkFpgaStatusName(st),
            NdkFpgaStatusName(r.Status), (unsigned)r.ProviderErrorCode);
    NdkFpgaReadBuffer(ad, watched, 0, after, clen);
    conf_ok(!memcmp(before, after, clen), "%s: %s unchanged (%zu bytes checked)", name, write ? "target" : "local sink",
            clen);
    st = q->Dispatch->NdkWrite(q, (PVOID)0x78, &sge, 1, raddr, token, 0);
    r = next_result();
    conf_ok(st == STATUS_SUCCESS && r.Status == STATUS_CANCELLED && r.RequestContext == (PVOID)0x78,
            "%s: the next request completes STATUS_CANCELLED (%s)", name, NdkFpgaStatusName(r.Status));
    free(before);
    free(after);
    free_buf(&loc);
    close_pair(&pr);
}

/* ------------------------------------------------------------------------- */
/* Private adapters                                                           */

/* Start nfmodel, open it, a CQ of cq_depth (notify may be NULL), a PD and a listener;
 * the suite's globals (ad, cq) point at it until priv_close. */
int priv_open(struct priv *p, ULONG cq_depth, NDK_FN_CQ_NOTIFICATION_CALLBACK notify, void *nctx)
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

int priv_start(struct priv *p, ULONG cq_depth, const char *what)
{
    return conf_ok(priv_open(p, cq_depth, NULL, NULL), "%s: private adapter", what);
}

void priv_kill(struct priv *p)
{
    if (p->pid) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
        p->pid = 0;
    }
}

/* Close the adapter (children left open) and the model; the close's milliseconds. */
uint64_t priv_close(struct priv *p)
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
int fr_setup(struct priv *p)
{
    MDL *b = NULL;
    p->fr = new_mr(p->pd, 1);
    if (!p->fr || init_fast(p->fr, 1, TRUE) != STATUS_SUCCESS || NdkFpgaAllocateBuffer(ad, PAGE_SIZE, &b) != STATUS_SUCCESS)
        return 0;
    p->page.QuadPart = (LONGLONG)MmGetMdlPfnArray(b)[0] << PAGE_SHIFT;
    return 1;
}

/* connect_pair with QPs of initiator depth depth. */
int connect_pair_depth(NDK_PD *p, ULONG depth, struct pair *pr)
{
    ULONG saved_depth = pair_depth;
    pair_depth = depth;
    int ok = connect_pair(p, pr);
    pair_depth = saved_depth;
    return ok;
}

/* A connected pair of depth depth and a fast MR with a page to register. */
int pair_fr_setup(struct priv *p, ULONG depth, struct pair *pr)
{
    return connect_pair_depth(p->pd, depth, pr) && fr_setup(p);
}

/* pair_fr_setup on a private adapter, reported as "WHAT: connected QPs and a fast
 * MR"; on failure the adapter is closed. */
int priv_pair_fr_setup(struct priv *p, ULONG depth, const char *what, struct pair *pr)
{
    if (conf_ok(pair_fr_setup(p, depth, pr), "%s: connected QPs and a fast MR", what))
        return 1;
    priv_close(p);
    return 0;
}
