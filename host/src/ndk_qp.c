/* NDKPI queue pair: creation (QP_CREATE), work requests (local rule checks, then an
 * OP_WR_* message on the link), outstanding-request tracking and CQE delivery.
 *
 * The posting path is lean on purpose (benchmarked in host instructions per
 * NdkFastRegister): no allocation, no adapter lock, one short ring lock, and the
 * consumer's page list / SGE array is handed to the link as is (their layouts are
 * the wire layouts), so nothing is copied twice. */
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"

_Static_assert(sizeof(NDK_SGE) == NF_SGE_SIZE, "NDK_SGE is the wire SGE");
_Static_assert(offsetof(NDK_SGE, Length) == NF_SGE_LEN_OFF, "NDK_SGE.Length");
_Static_assert(offsetof(NDK_SGE, MemoryRegionToken) == NF_SGE_TOKEN_OFF, "NDK_SGE.MemoryRegionToken");
_Static_assert(sizeof(NDK_LOGICAL_ADDRESS) == 8, "page list entries are 64-bit");


static struct ndk_qp *qp_of(NDK_QP *q)
{
    return NDK_CONTAINER(q, struct ndk_qp, pub);
}

/* ------------------------------------------------------------------------- */
/* Completions                                                                */

static void complete(struct ndk_qp *qp, const struct ndk_wr_slot *s, NTSTATUS st, uint32_t bytes, uint32_t type,
                     uint32_t refuse)
{
    NDK_RESULT_EX r;
    r.Status = st;
    r.BytesTransferred = bytes;
    r.QPContext = qp->context;
    r.RequestContext = s->ctx;
    r.Type = (NDK_OPERATION_TYPE)(type ? type : s->op_type);
    r.ProviderErrorCode = refuse;
    r.TypeSpecificCompletionOutput = 0;
    ndk_cq_push(qp->icq, &r);
}

/* Under ad->lock: the live QP with this number (the board's numbers are opaque:
 * they may carry a generation, so they are looked up, never used as an index). */
static struct ndk_qp *qp_by_qpn(struct ndk_adapter *ad, uint32_t qpn)
{
    for (uint32_t i = 0; i < ad->nqps; i++)
        if (ad->qps[i] && ad->qps[i]->qpn == qpn)
            return ad->qps[i];
    return NULL;
}

void ndk_qp_on_cqe(struct ndk_adapter *ad, const struct nf_cqe *cqe)
{
    struct ndk_qp *qp = qp_by_qpn(ad, cqe->qpn);
    if (!qp)
        return;
    pthread_mutex_lock(&qp->ring_lock);
    uint32_t outstanding = qp->tail - qp->head;
    uint32_t k = cqe->wr_id - qp->head;
    if (k >= outstanding) {
        /* Stale: flushed or failed already. */
        pthread_mutex_unlock(&qp->ring_lock);
        return;
    }
    /* The board executes a QP's requests in order and reports each one that is not a
     * silent success, so requests before this one completed silently. */
    struct ndk_wr_slot s = qp->ring[cqe->wr_id & qp->mask];
    qp->head = cqe->wr_id + 1;
    pthread_mutex_unlock(&qp->ring_lock);
    complete(qp, &s, (NTSTATUS)cqe->status, cqe->bytes, cqe->op_type, cqe->refuse);
}

/* Under ad->lock: complete every outstanding work request with status. */
static void fail_all(struct ndk_qp *qp, NTSTATUS status)
{
    pthread_mutex_lock(&qp->ring_lock);
    if (status == STATUS_CANCELLED)
        qp->core.ad->close_flushed += qp->tail - qp->head;
    while (qp->head != qp->tail) {
        struct ndk_wr_slot s = qp->ring[qp->head & qp->mask];
        qp->head++;
        complete(qp, &s, status, 0, 0, 0);
    }
    pthread_mutex_unlock(&qp->ring_lock);
}

void ndk_qps_fail(struct ndk_adapter *ad, NTSTATUS status)
{
    for (uint32_t i = 0; i < ad->nqps; i++) {
        struct ndk_qp *qp = ad->qps[i];
        if (qp) {
            __atomic_store_n(&qp->connected, 0, __ATOMIC_RELAXED);
            fail_all(qp, status);
        }
    }
}

/* Under ad->lock (callback thread): a QP's work requests. The board reports them in
 * order, each that is not a silent success, so the first outstanding request that
 * reports a completion is the one to watch: when that same request has been the
 * first for the timeout, it completes STATUS_IO_TIMEOUT (the silent ones before it
 * retire with it, as its CQE would have retired them) and a late CQE for it is
 * stale. Silent requests alone have nothing to wait for. */
static void watch(struct ndk_adapter *ad, struct ndk_qp *qp, uint64_t now)
{
    pthread_mutex_lock(&qp->ring_lock);
    uint32_t id = qp->head;
    while (id != qp->tail && qp->ring[id & qp->mask].silent)
        id++;
    if (id == qp->tail) {
        qp->watch_since_us = 0; /* nothing that reports a completion is outstanding */
    } else if (qp->watch_since_us == 0 || qp->watch_head != id) {
        qp->watch_head = id;
        qp->watch_since_us = now;
    } else if (now - qp->watch_since_us >= ad->req_timeout_us) {
        struct ndk_wr_slot copy = qp->ring[id & qp->mask];
        qp->head = id + 1;
        qp->watch_since_us = 0;
        complete(qp, &copy, STATUS_IO_TIMEOUT, 0, 0, 0);
        ad->wr_timeouts++;
    }
    pthread_mutex_unlock(&qp->ring_lock);
}

void ndk_qps_watch(struct ndk_adapter *ad, uint64_t now)
{
    for (uint32_t i = 0; i < ad->nqps; i++)
        if (ad->qps[i])
            watch(ad, ad->qps[i], now);
}

/* ------------------------------------------------------------------------- */
/* Connection state: the QP's user (a connector) attaches, detaches and says when
 * the connection is up or down; the QP tells its user when it goes away.       */

NTSTATUS ndk_qp_usable(const struct ndk_qp *qp, const struct ndk_adapter *ad)
{
    if (qp->core.ad != ad || qp->core.closing)
        return STATUS_INVALID_PARAMETER;
    if (qp->user || qp->connected)
        return STATUS_INVALID_DEVICE_STATE; /* already used by a connection */
    return STATUS_SUCCESS;
}

NTSTATUS ndk_qp_attach(struct ndk_qp *qp, const struct ndk_adapter *ad, void *user, void (*gone)(void *user))
{
    NTSTATUS st = ndk_qp_usable(qp, ad);
    if (st != STATUS_SUCCESS)
        return st;
    qp->user = user;
    qp->user_gone = gone;
    return STATUS_SUCCESS;
}

void ndk_qp_detach(struct ndk_qp *qp, const void *user)
{
    if (qp->user == user) {
        qp->user = NULL;
        qp->user_gone = NULL;
    }
}

void ndk_qp_set_connected(struct ndk_qp *qp, int connected)
{
    __atomic_store_n(&qp->connected, connected, __ATOMIC_RELAXED);
}

/* NdkFlush, concurrent with posting on the same QP (NDK allows it). Nothing is
 * completed here: every posted request is on the link already (posting reserves its
 * ring slot and queues its message under qp->ring_lock, in one step), so the board
 * decides. It runs messages in order: requests queued before QP_FLUSH execute and
 * complete with their real status, then QP_FLUSH moves the QP to ERROR and every
 * later request completes CANCELLED untouched.
 *
 * The flush takes the ring's tail and queues QP_FLUSH under the same ring lock, so
 * the slots before that tail are exactly the requests ahead of it on the link; its
 * reply follows their CQEs, so one of them still outstanding then was a silent
 * success: its slot is freed without a completion. A request posted concurrently
 * either went before (its slot is below the tail) or after (it completes CANCELLED). */
static void qp_flush_reply(struct ndk_adapter *ad, struct ndk_req *r, uint32_t status, const uint8_t *body,
                           size_t len)
{
    (void)ad;
    (void)status; /* any real reply: the board has run everything before it */
    (void)len;
    struct ndk_qp *qp = r->arg;
    if (body) { /* NULL: the link died or the reply timed out; the QP's requests fail on their own */
        uint32_t flushed_tail = r->u[0];
        pthread_mutex_lock(&qp->ring_lock);
        if (flushed_tail - qp->head <= qp->tail - qp->head)
            qp->head = flushed_tail;
        pthread_mutex_unlock(&qp->ring_lock);
    }
    ndk_unref_locked(&qp->core); /* the flush's own reference */
    free(r);
}

static VOID qp_flush(NDK_QP *q)
{
    if (!ndk_obj_ok(q, NdkObjectTypeQp))
        return;
    struct ndk_qp *qp = qp_of(q);
    struct ndk_adapter *ad = qp->core.ad;
    struct {
        struct nf_msg_hdr h;
        // cppcheck-suppress unusedStructMember ; sent as bytes
        struct nf_qp_req q;
    } msg = {.q = {.qpn = qp->qpn, .rsvd = 0}};
    struct nf_link_part part = {&msg, sizeof(msg)};
    struct ndk_req *r = calloc(1, sizeof(*r));
    if (!r) {
        /* Still flush on the board; the reply (tag 0) matches no request and is dropped,
         * so silent successes keep their slots until a later completion. */
        memset(&msg.h, 0, sizeof(msg.h));
        msg.h.op = NF_OP_QP_FLUSH;
        msg.h.len = (uint16_t)sizeof(msg);
        pthread_mutex_lock(&qp->ring_lock);
        nf_link_post(ad->link, &part, 1, sizeof(msg), 0);
        pthread_mutex_unlock(&qp->ring_lock);
        return;
    }
    pthread_mutex_lock(&ad->lock);
    ndk_ref(&qp->core); /* a close waits for the reply, so QP_DESTROY follows QP_FLUSH */
    pthread_mutex_unlock(&ad->lock);
    r->on_reply = qp_flush_reply;
    r->arg = qp;
    r->gate = 1; /* an answer (death, deadline, reply) waits until r->u[0] is set and sent */
    NTSTATUS st = ndk_req_register(ad, r, NF_OP_QP_FLUSH, &msg, sizeof(msg));
    if (st == STATUS_SUCCESS) {
        /* Not deferred: anything this QP deferred goes out ahead of it, in order. */
        pthread_mutex_lock(&qp->ring_lock);
        r->u[0] = qp->tail;
        uint32_t ls = nf_link_post(ad->link, &part, 1, sizeof(msg), 0);
        pthread_mutex_unlock(&qp->ring_lock);
        if (ls == NF_STATUS_SUCCESS || !ndk_req_unregister(ad, r)) {
            /* Sent, or the death handler answered it already: its answer runs now. */
            if (ls == NF_STATUS_SUCCESS)
                qp->deferred = 0;
            ndk_req_issued(ad, r);
            return;
        }
    }
    /* Never sent (the link is dead: every request has failed already). */
    pthread_mutex_lock(&ad->lock);
    ndk_unref_locked(&qp->core);
    pthread_mutex_unlock(&ad->lock);
    free(r);
}

/* ------------------------------------------------------------------------- */
/* Posting                                                                    */

/* A local check failed: anything deferred so far must still reach the board. */
static NTSTATUS refuse(struct ndk_qp *qp, NTSTATUS st)
{
    if (qp->deferred) {
        qp->deferred = 0;
        nf_link_post(qp->core.ad->link, NULL, 0, 0, 0);
    }
    return st;
}

/* Reserve a ring slot, stamp the message with its id and queue it on the link, in
 * one step under the ring lock (a concurrent NdkFlush or link death sees either both
 * or neither). The link never waits (nf_link_post), so neither does this. head
 * points at MSG_HDR + WR_HDR (+ body); tail (may be NULL) is appended. Either the
 * request is refused here (and never completes) or it is accepted (and completes
 * exactly once: CQE, flush, link death, deadline or close). */
static NTSTATUS post(struct ndk_qp *qp, void *ctx, uint32_t op_type, uint16_t op, ULONG flags, struct nf_msg_hdr *h,
                     struct nf_wr_hdr *w, size_t head_len, const void *tail, size_t tail_len)
{
    uint32_t dead = __atomic_load_n(&qp->core.ad->dead, __ATOMIC_RELAXED); /* set under ad->lock */
    if (dead)
        return refuse(qp, (NTSTATUS)dead); /* the link is gone */
    /* A CQ of the QP overflowed: NDK makes every QP using it unusable. Refused with
     * STATUS_CANCELLED, what a broken connection completes requests with (there is
     * no CQ left to complete them on). */
    if (__atomic_load_n(&qp->icq->overflowed, __ATOMIC_RELAXED) ||
        (qp->rcq && __atomic_load_n(&qp->rcq->overflowed, __ATOMIC_RELAXED)))
        return refuse(qp, STATUS_CANCELLED);
    h->op = op;
    h->len = (uint16_t)(head_len + tail_len);
    h->tag = 0;
    h->status = 0;
    h->rsvd = 0;
    w->qpn = qp->qpn;
    w->flags = flags & ~(ULONG)NDK_OP_FLAG_DEFER; /* a host-only hint */
    w->rsvd = 0;
    int defer = (flags & NDK_OP_FLAG_DEFER) != 0;
    struct nf_link_part parts[2] = {{h, head_len}, {tail, tail_len}};
    pthread_mutex_lock(&qp->ring_lock);
    uint32_t id = qp->tail;
    if (id - qp->head >= qp->depth) {
        pthread_mutex_unlock(&qp->ring_lock);
        return refuse(qp, STATUS_INSUFFICIENT_RESOURCES);
    }
    w->wr_id = id;
    struct ndk_wr_slot *s = &qp->ring[id & qp->mask];
    s->ctx = ctx;
    s->op_type = op_type;
    s->silent = flags & NDK_OP_FLAG_SILENT_SUCCESS;
    uint32_t st = nf_link_post(qp->core.ad->link, parts, tail_len ? 2 : 1, head_len + tail_len, defer);
    if (st == NF_STATUS_SUCCESS)
        qp->tail = id + 1;
    pthread_mutex_unlock(&qp->ring_lock);
    if (st != NF_STATUS_SUCCESS)
        return refuse(qp, (NTSTATUS)st);
    qp->deferred = defer;
    return STATUS_SUCCESS;
}

/* The flags each request accepts: one mask per request type (tools/layout.toml
 * KNOWN_FLAGS), the firmware's too, so an unknown bit is STATUS_INVALID_PARAMETER on
 * both sides. The firmware decides what depends on the board's state (the MR's PD
 * against the QP's: STATUS_ACCESS_VIOLATION in the completion). */
#define REMOTE_FLAGS (NDK_OP_FLAG_ALLOW_REMOTE_READ | (NDK_OP_FLAG_ALLOW_REMOTE_WRITE & ~NDK_OP_FLAG_ALLOW_LOCAL_WRITE))
_Static_assert((NF_KNOWN_FLAGS_FAST_REGISTER & NF_KNOWN_FLAGS_INVALIDATE & NF_KNOWN_FLAGS_RDMA & NDK_OP_FLAG_DEFER) != 0,
               "DEFER is accepted by every work request");

static NTSTATUS qp_fast_register(NDK_QP *q, PVOID ctx, NDK_MR *m, ULONG npages, const NDK_LOGICAL_ADDRESS *pages,
                                 ULONG fbo, SIZE_T length, PVOID base_va, ULONG flags)
{
    if (!ndk_obj_ok(q, NdkObjectTypeQp))
        return STATUS_INVALID_PARAMETER;
    struct ndk_qp *qp = qp_of(q);
    if (!pages || !ndk_obj_ok(m, NdkObjectTypeMr))
        return refuse(qp, STATUS_INVALID_PARAMETER);
    if (!__atomic_load_n(&qp->connected, __ATOMIC_RELAXED))
        return refuse(qp, STATUS_CONNECTION_INVALID);
    const struct ndk_mr *mr = NDK_CONTAINER(m, struct ndk_mr, pub);
    if (mr->core.ad != qp->core.ad || (flags & ~(ULONG)NF_KNOWN_FLAGS_FAST_REGISTER))
        return refuse(qp, STATUS_INVALID_PARAMETER); /* another adapter's MR: its token means nothing here */
    if (!mr->fast || mr->frmr_pages == 0)
        return refuse(qp, STATUS_INVALID_DEVICE_STATE); /* not a fast-register MR, or not initialized */
    if ((flags & REMOTE_FLAGS) && !mr->remote_access)
        return refuse(qp, STATUS_ACCESS_VIOLATION);
    if (npages == 0 || npages > mr->frmr_pages || fbo >= PAGE_SIZE || length == 0 ||
        length > (SIZE_T)npages * PAGE_SIZE - fbo)
        return refuse(qp, STATUS_INVALID_PARAMETER);
    uint64_t va = (uint64_t)(uintptr_t)base_va;
    /* BaseVirtualAddress = FBO + n * PAGE_SIZE (so 0 only with FBO 0); the last byte,
     * va + length - 1, may be the last of the address space but must not wrap. */
    if ((va & (PAGE_SIZE - 1)) != fbo || va + (length - 1) < va)
        return refuse(qp, STATUS_INVALID_PARAMETER);
    const struct ndk_adapter *ad = qp->core.ad;
    const uint64_t lo = ad->info.user_base, hi = ad->info.mem_bytes;
    for (ULONG i = 0; i < npages; i++) {
        uint64_t p = pages[i];
        if ((p & (PAGE_SIZE - 1)) || p < lo || p >= hi)
            return refuse(qp, STATUS_INVALID_PARAMETER);
    }
    struct {
        struct nf_msg_hdr h;
        struct nf_wr_hdr w;
        // cppcheck-suppress unusedStructMember ; sent as bytes by post()
        struct nf_wr_fast_register f;
    } msg = {.f = {.token = mr->token, .npages = npages, .fbo = fbo, .rsvd = 0, .length = length, .va = va}};
    return post(qp, ctx, NdkOperationTypeFastRegister, NF_OP_WR_FAST_REGISTER, flags, &msg.h, &msg.w, sizeof(msg), pages,
                (size_t)npages * sizeof(*pages));
}

static NTSTATUS qp_invalidate(NDK_QP *q, PVOID ctx, NDK_OBJECT_HEADER *obj, ULONG flags)
{
    if (!ndk_obj_ok(q, NdkObjectTypeQp))
        return STATUS_INVALID_PARAMETER;
    struct ndk_qp *qp = qp_of(q);
    if (!obj || (flags & ~(ULONG)NF_KNOWN_FLAGS_INVALIDATE) || !ndk_live(obj))
        return refuse(qp, STATUS_INVALID_PARAMETER);
    if (obj->ObjectType == NdkObjectTypeMw)
        return refuse(qp, STATUS_NOT_SUPPORTED); /* no memory windows */
    if (obj->ObjectType != NdkObjectTypeMr)
        return refuse(qp, STATUS_INVALID_PARAMETER);
    if (!__atomic_load_n(&qp->connected, __ATOMIC_RELAXED))
        return refuse(qp, STATUS_CONNECTION_INVALID);
    const struct ndk_mr *mr = NDK_CONTAINER(obj, struct ndk_mr, pub.Header);
    if (mr->core.ad != qp->core.ad)
        return refuse(qp, STATUS_INVALID_PARAMETER); /* another adapter's MR */
    if (!mr->fast)
        return refuse(qp, STATUS_INVALID_DEVICE_STATE); /* NdkRegisterMr'd MRs are deregistered, not invalidated */
    struct {
        struct nf_msg_hdr h;
        struct nf_wr_hdr w;
        // cppcheck-suppress unusedStructMember ; sent as bytes by post()
        struct nf_wr_invalidate i;
    } msg = {.i = {.token = mr->token, .rsvd = 0}};
    return post(qp, ctx, NdkOperationTypeInvalidate, NF_OP_WR_INVALIDATE, flags, &msg.h, &msg.w, sizeof(msg), NULL, 0);
}

static NTSTATUS rdma(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge, UINT64 raddr, UINT32 rtoken, ULONG flags,
                     int write)
{
    if (!ndk_obj_ok(q, NdkObjectTypeQp))
        return STATUS_INVALID_PARAMETER;
    struct ndk_qp *qp = qp_of(q);
    if ((!sgl && nsge) || (flags & ~(ULONG)NF_KNOWN_FLAGS_RDMA))
        return refuse(qp, STATUS_INVALID_PARAMETER);
    if (!__atomic_load_n(&qp->connected, __ATOMIC_RELAXED))
        return refuse(qp, STATUS_CONNECTION_INVALID);
    if (nsge > qp->max_sge)
        return refuse(qp, STATUS_INVALID_PARAMETER);
    const struct ndk_adapter *ad = qp->core.ad;
    uint64_t total = 0;
    for (ULONG i = 0; i < nsge; i++) {
        total += sgl[i].Length;
        if (sgl[i].MemoryRegionToken == NF_ADAPTER_PRIVILEGED_TOKEN &&
            !ndk_user_range_ok(ad, sgl[i].LogicalAddress, sgl[i].Length))
            return refuse(qp, STATUS_INVALID_PARAMETER);
    }
    if (total > ad->info.mem_bytes - ad->info.user_base)
        return refuse(qp, STATUS_INVALID_PARAMETER);
    struct {
        struct nf_msg_hdr h;
        struct nf_wr_hdr w;
        // cppcheck-suppress unusedStructMember ; sent as bytes by post()
        struct nf_wr_rdma r;
    } msg = {.r = {.remote_va = raddr, .remote_token = rtoken, .nsge = nsge}};
    return post(qp, ctx, write ? NdkOperationTypeWrite : NdkOperationTypeRead,
                write ? NF_OP_WR_WRITE : NF_OP_WR_READ, flags, &msg.h, &msg.w, sizeof(msg), sgl, (size_t)nsge * sizeof(*sgl));
}

static NTSTATUS qp_read(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge, UINT64 raddr, UINT32 rtoken,
                        ULONG flags)
{
    return rdma(q, ctx, sgl, nsge, raddr, rtoken, flags, 0);
}

static NTSTATUS qp_write(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge, UINT64 raddr, UINT32 rtoken,
                         ULONG flags)
{
    return rdma(q, ctx, sgl, nsge, raddr, rtoken, flags, 1);
}

static NTSTATUS qp_send(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge, ULONG flags)
{
    (void)ctx;
    (void)sgl;
    (void)nsge;
    (void)flags;
    return ndk_obj_ok(q, NdkObjectTypeQp) ? refuse(qp_of(q), STATUS_NOT_SUPPORTED) : STATUS_INVALID_PARAMETER;
}

static NTSTATUS qp_receive(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge)
{
    (void)ctx;
    (void)sgl;
    (void)nsge;
    return ndk_obj_ok(q, NdkObjectTypeQp) ? refuse(qp_of(q), STATUS_NOT_SUPPORTED) : STATUS_INVALID_PARAMETER;
}

static NTSTATUS qp_bind(NDK_QP *q, PVOID ctx, NDK_MR *mr, NDK_MW *mw, PVOID va, SIZE_T len, ULONG flags)
{
    (void)ctx;
    (void)mr;
    (void)mw;
    (void)va;
    (void)len;
    (void)flags;
    return ndk_obj_ok(q, NdkObjectTypeQp) ? refuse(qp_of(q), STATUS_NOT_SUPPORTED) : STATUS_INVALID_PARAMETER;
}

static NTSTATUS qp_send_inv(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge, ULONG flags, UINT32 token)
{
    (void)ctx;
    (void)sgl;
    (void)nsge;
    (void)flags;
    (void)token;
    return ndk_obj_ok(q, NdkObjectTypeQp) ? refuse(qp_of(q), STATUS_NOT_SUPPORTED) : STATUS_INVALID_PARAMETER;
}

/* ------------------------------------------------------------------------- */
/* Create and close                                                           */

static void qp_fini(struct ndk_core *c)
{
    struct ndk_qp *qp = NDK_CONTAINER(c, struct ndk_qp, core);
    pthread_mutex_destroy(&qp->ring_lock);
    free(qp->ring);
}

static void qp_teardown(struct ndk_core *c)
{
    struct ndk_qp *qp = NDK_CONTAINER(c, struct ndk_qp, core);
    struct ndk_adapter *ad = c->ad;
    pthread_mutex_lock(&ad->lock);
    /* Whatever is still outstanding (the close's flush answered, timed out or the
     * link died) completes CANCELLED before the close does. */
    fail_all(qp, STATUS_CANCELLED);
    for (uint32_t i = 0; i < ad->nqps; i++)
        if (ad->qps[i] == qp)
            ad->qps[i] = NULL;
    __atomic_store_n(&qp->connected, 0, __ATOMIC_RELAXED);
    if (qp->user) {
        void *user = qp->user;
        void (*gone)(void *) = qp->user_gone;
        qp->user = NULL;
        qp->user_gone = NULL;
        gone(user);
    }
    pthread_mutex_unlock(&ad->lock);
    struct nf_qp_req q = {qp->qpn, 0};
    ndk_send_forget(ad, NF_OP_QP_DESTROY, &q, sizeof(q));
}

static const struct ndk_type qp_type = {NdkObjectTypeQp, sizeof(struct ndk_qp), offsetof(struct ndk_qp, core),
                                        qp_teardown, qp_fini};

static NTSTATUS qp_close(NDK_OBJECT_HEADER *obj, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx)
{
    if (!ndk_obj_ok(obj, NdkObjectTypeQp))
        return STATUS_SUCCESS;
    struct ndk_qp *qp = NDK_CONTAINER(obj, struct ndk_qp, pub.Header);
    struct ndk_adapter *ad = qp->core.ad;
    /* Requests still outstanding are flushed first (the flush holds a reference, so
     * the close pends until its reply): those the board has run complete with their
     * real status, the rest STATUS_CANCELLED, all before the close completes. */
    pthread_mutex_lock(&ad->lock);
    int flush = !qp->core.closing && !ad->dead;
    pthread_mutex_unlock(&ad->lock);
    if (flush) {
        pthread_mutex_lock(&qp->ring_lock);
        flush = qp->head != qp->tail;
        pthread_mutex_unlock(&qp->ring_lock);
    }
    if (flush)
        qp_flush(&qp->pub);
    return ndk_close(&qp->core, cb, ctx);
}

static void qp_create_reply(struct ndk_adapter *ad, struct ndk_req *r, uint32_t status, const uint8_t *body,
                            size_t len)
{
    struct ndk_qp *qp = r->arg;
    struct nf_qp_create_rep rep;
    status = ndk_reply_copy(status, body, len, &rep, sizeof(rep));
    uint32_t slot = ad->nqps;
    if (status == NF_STATUS_SUCCESS) {
        for (uint32_t i = 0; i < ad->nqps; i++) {
            if (ad->qps[i] && ad->qps[i]->qpn == rep.qpn)
                slot = ad->nqps + 1; /* the board named a QP it already gave us */
            else if (!ad->qps[i] && slot == ad->nqps)
                slot = i;
        }
        if (slot >= ad->nqps)
            status = NF_STATUS_INTERNAL_ERROR;
    }
    if (status == NF_STATUS_SUCCESS) {
        qp->qpn = rep.qpn;
        ad->qps[slot] = qp;
    }
    ndk_create_done(ad, r, &qp->core, status);
}

NTSTATUS ndk_create_qp(NDK_PD *p, NDK_CQ *rcq, NDK_CQ *icq, PVOID qpctx, ULONG rdepth, ULONG idepth, ULONG rsge,
                       ULONG isge, ULONG inline_size, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_QP **out)
{
    if (!out)
        return STATUS_INVALID_PARAMETER;
    *out = NULL;
    if (!ndk_obj_ok(p, NdkObjectTypePd) || !ndk_obj_ok(icq, NdkObjectTypeCq) ||
        (rcq && !ndk_obj_ok(rcq, NdkObjectTypeCq)))
        return STATUS_INVALID_PARAMETER;
    struct ndk_pd *pd = NDK_CONTAINER(p, struct ndk_pd, pub);
    struct ndk_adapter *ad = pd->core.ad;
    if (!ndk_registry_has_room())
        return STATUS_INSUFFICIENT_RESOURCES;
    /* No receives, no inline data: the limits NdkQueryAdapterInfo reports. */
    if (idepth == 0 || idepth > NDK_MAX_QUEUE_DEPTH || rdepth > 0 || rsge > 0 || isge > ad->info.max_sge ||
        inline_size > 0)
        return STATUS_INVALID_PARAMETER;
    struct ndk_cq *ic = NDK_CONTAINER(icq, struct ndk_cq, pub);
    struct ndk_cq *rc = rcq ? NDK_CONTAINER(rcq, struct ndk_cq, pub) : NULL;
    if (ic->core.ad != ad || (rc && rc->core.ad != ad))
        return STATUS_INVALID_PARAMETER;
    uint32_t ring = 1;
    while (ring < idepth)
        ring <<= 1;
    struct ndk_qp *qp = ndk_obj_new(ad, &qp_type, &pd->core, &ic->core, rc && rc != ic ? &rc->core : NULL);
    struct ndk_wr_slot *slots = calloc(ring, sizeof(*slots));
    struct ndk_req *r = calloc(1, sizeof(*r));
    if (!qp || !slots || !r) {
        free(qp);
        free(slots);
        free(r);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    qp->pub.Dispatch = &ndk_qp_dispatch;
    qp->icq = ic;
    qp->rcq = rc;
    qp->context = qpctx;
    qp->max_sge = isge;
    qp->ring = slots;
    qp->depth = idepth;
    qp->mask = ring - 1;
    qp->qpn = UINT32_MAX;
    pthread_mutex_init(&qp->ring_lock, NULL);
    r->on_reply = qp_create_reply;
    r->arg = qp;
    uint8_t msg[NF_MSG_HDR_SIZE + NF_QP_CREATE_REQ_SIZE];
    struct nf_qp_create_req q = {pd->pdn, idepth, 0, 0};
    memcpy(msg + NF_MSG_HDR_SIZE, &q, sizeof(q));
    NTSTATUS st = ndk_create_issue(&qp->core, r, NF_OP_QP_CREATE, msg, sizeof(msg), cc, ctx);
    if (st == STATUS_SUCCESS)
        *out = &qp->pub;
    return st;
}

NTSTATUS ndk_create_qp_with_srq(NDK_PD *pd, NDK_CQ *rcq, NDK_CQ *icq, NDK_SRQ *srq, PVOID qpctx, ULONG idepth,
                                ULONG isge, ULONG inline_size, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_QP **out)
{
    (void)pd;
    (void)rcq;
    (void)icq;
    (void)srq;
    (void)qpctx;
    (void)idepth;
    (void)isge;
    (void)inline_size;
    (void)cc;
    (void)ctx;
    if (out)
        *out = NULL;
    return STATUS_NOT_SUPPORTED; /* no SRQs */
}

const NDK_QP_DISPATCH ndk_qp_dispatch = {
    .NdkCloseQp = qp_close,
    .NdkQueryExtension = ndk_query_extension,
    .NdkFlush = qp_flush,
    .NdkSend = qp_send,
    .NdkReceive = qp_receive,
    .NdkBind = qp_bind,
    .NdkFastRegister = qp_fast_register,
    .NdkInvalidate = qp_invalidate,
    .NdkRead = qp_read,
    .NdkWrite = qp_write,
    .NdkSendAndInvalidate = qp_send_inv,
};
