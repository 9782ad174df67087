/* SPDX-License-Identifier: Apache-2.0 */
/* NDKPI queue pair: creation (QP_CREATE), close, NdkFlush, the connection state, and
 * the work-request calls: their local rule checks, then an OP_WR_* message posted on
 * one of the QP's work queues (wq_post here; ndk_wq.c: completion routing, deadlines). */
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"

_Static_assert(sizeof(NDK_SGE) == NF_SGE_SIZE, "NDK_SGE is the wire SGE");
_Static_assert(offsetof(NDK_SGE, Length) == NF_SGE_LEN_OFF, "NDK_SGE.Length");
_Static_assert(offsetof(NDK_SGE, MemoryRegionToken) == NF_SGE_TOKEN_OFF, "NDK_SGE.MemoryRegionToken");
/* The page array goes to the adapter as it is: each entry a 64-bit address. */
_Static_assert(sizeof(NDK_LOGICAL_ADDRESS) == 8, "page list entries are 64-bit");


static struct ndk_qp *qp_of(NDK_QP *q)
{
    return NDK_CONTAINER(q, struct ndk_qp, pub);
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

NTSTATUS ndk_qp_attach(struct ndk_qp *qp, const struct ndk_adapter *ad, void *user, const struct ndk_qp_user *ops)
{
    NTSTATUS st = ndk_qp_usable(qp, ad);
    if (st != STATUS_SUCCESS)
        return st;
    qp->user = user;
    qp->user_ops = ops;
    return STATUS_SUCCESS;
}

void ndk_qp_detach(struct ndk_qp *qp, const void *user)
{
    if (qp->user == user) {
        qp->user = NULL;
        qp->user_ops = NULL;
    }
}

void ndk_qp_set_connected(struct ndk_qp *qp, int connected)
{
    __atomic_store_n(&qp->connected, connected, __ATOMIC_RELAXED);
}

/* NdkFlush may run concurrently with posting (NDK allows it) and completes nothing
 * itself: the adapter runs a QP's messages in order, so requests ahead of QP_FLUSH
 * complete with their real status and later ones CANCELLED. The queues' tails are read
 * under the link's lock, under which a post publishes its tail with its message: the
 * slots below them are exactly the requests ahead of the flush, and one still
 * outstanding at its reply was a silent success. The reply counts the pending receives the adapter dropped
 * (the oldest, in order); without that count every receive posted before it is CANCELLED. */
static void qp_flush_reply(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS status, const uint8_t *body,
                           size_t len)
{
    struct ndk_qp *qp = r->arg;
    if (body) { /* NULL: the link died or the reply timed out; the QP's requests fail on their own */
        uint32_t flushed_tail = r->flush.iq_tail;
        pthread_mutex_lock(&qp->ring_lock);
        if (flushed_tail - qp->iq.head <= ndk_wq_tail(&qp->iq) - qp->iq.head)
            ndk_wq_retire_silent(qp, flushed_tail, 1);
        pthread_mutex_unlock(&qp->ring_lock);
    }
    struct nf_qp_flush_rep rep = {UINT32_MAX, 0};
    if (ndk_reply_copy(status, body, len, &rep, sizeof(rep)) != STATUS_SUCCESS)
        rep.cancelled = UINT32_MAX;
    if (body || !ad->dead) /* the link's death completes them with its own status */
        ndk_rq_cancel(qp, rep.cancelled, r->flush.rq_tail);
    ndk_unref_locked(&qp->core); /* the flush's own reference */
    free(r);
}

/* Under the link's lock: the queues' tails at the flush's place in the stream. */
struct flush_arg {
    struct ndk_qp *qp;
    struct ndk_req *r;
    const void *msg;
    size_t len;
};

static int flush_fill(void *arg, uint8_t *dst)
{
    const struct flush_arg *fa = arg;
    fa->r->flush.iq_tail = __atomic_load_n(&fa->qp->iq.tail, __ATOMIC_RELAXED);
    fa->r->flush.rq_tail = __atomic_load_n(&fa->qp->rq.tail, __ATOMIC_RELAXED);
    memcpy(dst, fa->msg, fa->len);
    return 1;
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
        nf_link_post(ad->link, &part, 1, sizeof(msg), 0);
        return;
    }
    pthread_mutex_lock(&ad->lock);
    ndk_ref(&qp->core); /* a close waits for the reply, so QP_DESTROY follows QP_FLUSH */
    pthread_mutex_unlock(&ad->lock);
    r->on_reply = qp_flush_reply;
    r->arg = qp;
    r->gate = 1; /* an answer (death, deadline, reply) waits until r->flush is set and sent */
    NTSTATUS st = ndk_req_register(ad, r, NF_OP_QP_FLUSH, &msg, sizeof(msg));
    if (st == STATUS_SUCCESS) {
        /* Not deferred: anything this QP deferred goes out ahead of it, in order. The
         * tails are read under the link's lock, under which posting publishes a tail
         * with its message. */
        struct flush_arg fa = {qp, r, &msg, sizeof(msg)};
        NTSTATUS ls = nf_link_post_fill(ad->link, sizeof(msg), 0, flush_fill, &fa);
        if (ls == STATUS_SUCCESS || !ndk_req_unregister(ad, r)) {
            /* Sent, or the death handler answered it already: its answer runs now. */
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

/* A local check failed: anything deferred so far must still reach the board, so the
 * link's open frame goes now (a dead adapter has nothing to send). */
static NTSTATUS refuse(struct ndk_qp *qp, NTSTATUS st)
{
    const struct ndk_adapter *ad = qp->core.ad;
    if (__atomic_load_n(&ad->dead, __ATOMIC_RELAXED) == STATUS_SUCCESS)
        nf_link_post(ad->link, NULL, 0, 0, 0);
    return st;
}

/* A work request's message, built before the link's lock: MSG_HDR and WR_HDR (wq_post
 * writes them), then the request's own fields and its page list or SGEs in their wire
 * layout. Never initialized whole: only the len bytes written go on the link. */
struct wr_msg {
    struct nf_msg_hdr h;
    struct nf_wr_hdr w;
    union {
        struct {
            struct nf_wr_fast_register req;
            uint64_t pages[NDK_MAX_FR_MSG_PAGES];
        } fast_register;
        struct nf_wr_invalidate invalidate;
        struct nf_wr_bind bind;
        uint8_t bytes[NF_WR_RDMA_SIZE + NF_ADAPTER_MAX_SGE * NF_SGE_SIZE]; /* a request, then its SGEs */
    } body;
};
_Static_assert(sizeof(struct wr_msg) <= NF_LINK_MAX_PAYLOAD, "a work request fits a frame");
_Static_assert(offsetof(struct wr_msg, body.fast_register.pages) ==
                   NF_MSG_HDR_SIZE + NF_WR_HDR_SIZE + NF_WR_FAST_REGISTER_SIZE, "the page list follows WR_FAST_REGISTER");

/* A work request as its queue posts it. */
struct ndk_wr {
    struct ndk_wr_slot slot; /* what its completion reports */
    uint16_t op;             /* NF_OP_WR_* */
    ULONG flags;             /* NDK_OP_FLAG_*; DEFER stays on the host */
    size_t body_len;         /* bytes of msg->body written */
    struct wr_msg *msg;
};

/* What the board cannot see that refuses every request of this QP, before any ring
 * slot. */
static inline NTSTATUS wq_validate(const struct ndk_qp *qp)
{
    NTSTATUS dead = __atomic_load_n(&qp->core.ad->dead, __ATOMIC_RELAXED); /* set under ad->lock */
    if (dead != STATUS_SUCCESS)
        return dead; /* the link is gone */
    /* A CQ of the QP overflowed, which makes the QP unusable (NDK): STATUS_CANCELLED,
     * what a broken connection completes requests with (no CQ is left for them). */
    if (__atomic_load_n(&qp->cq_overflowed, __ATOMIC_RELAXED))
        return STATUS_CANCELLED;
    return STATUS_SUCCESS;
}

/* Post wr on q; never waits. The consumer posts on a queue one call at a time, so the
 * slot at tail is this call's to write; the link publishes tail with the message under
 * its lock, so a concurrent NdkFlush or link death sees both or neither. Consumers
 * (qp->ring_lock) only advance head: read (acquire) before a slot is reused.
 * SUCCESS: accepted (completes exactly once); anything else: refused, nothing queued. */
static inline NTSTATUS wq_post(struct ndk_qp *qp, struct ndk_wq *q, const struct ndk_wr *wr)
{
    NTSTATUS st = wq_validate(qp);
    if (st != STATUS_SUCCESS)
        return st;
    uint32_t id = __atomic_load_n(&q->tail, __ATOMIC_RELAXED);
    if (id - __atomic_load_n(&q->head, __ATOMIC_ACQUIRE) >= q->depth)
        return STATUS_INSUFFICIENT_RESOURCES;
    size_t len = NF_MSG_HDR_SIZE + NF_WR_HDR_SIZE + wr->body_len;
    wr->msg->h = (struct nf_msg_hdr){.op = wr->op, .len = (uint16_t)len, .tag = qp->wr_tag | (id & NDK_WR_TAG_ID_MASK)};
    wr->msg->w = (struct nf_wr_hdr){.qpn = qp->qpn, .wr_id = id, .flags = wr->flags & ~(ULONG)NDK_OP_FLAG_DEFER};
    struct ndk_wr_slot *s = &q->slot[id & q->mask];
    *s = wr->slot;
    s->silent = wr->flags & NDK_OP_FLAG_SILENT_SUCCESS;
    s->done = 0;
    return nf_link_post_msg(qp->core.ad->link, wr->msg, len, (wr->flags & NDK_OP_FLAG_DEFER) != 0, &q->tail, id + 1);
}

/* Post on the initiator queue; a refusal pushes what was deferred. */
static inline NTSTATUS post(struct ndk_qp *qp, const struct ndk_wr *wr)
{
    NTSTATUS st = wq_post(qp, &qp->iq, wr);
    if (st != STATUS_SUCCESS) {
        ndk_hm_io_free(wr->slot.hm);
        return refuse(qp, st);
    }
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
    /* Only a fast-register MR is initialized (ndk_pd.c), so frmr_pages is 0 for any other. */
    if (mr->frmr_pages == 0)
        return refuse(qp, STATUS_INVALID_DEVICE_STATE); /* not a fast-register MR, or not initialized */
    if ((flags & REMOTE_FLAGS) && !mr->remote_access)
        return refuse(qp, STATUS_ACCESS_VIOLATION);
    uint64_t va = (uint64_t)(uintptr_t)base_va;
    /* BaseVirtualAddress = FBO + n * PAGE_SIZE (so FBO < PAGE_SIZE, and va is 0 only with
     * FBO 0); the last byte, va + length - 1, may be the last of the address space but
     * must not wrap. */
    if (npages == 0 || npages > mr->frmr_pages || (va & (PAGE_SIZE - 1)) != fbo || length == 0 ||
        length > (SIZE_T)npages * PAGE_SIZE - fbo || va + (length - 1) < va)
        return refuse(qp, STATUS_INVALID_PARAMETER);
    const struct ndk_adapter *ad = qp->core.ad;
    const uint64_t lo = ad->info.user_base, hi = ad->info.mem_bytes;
    struct wr_msg msg; /* the page list is checked as it is copied into the message */
    for (ULONG i = 0; i < npages; i++) {
        uint64_t p = (uint64_t)pages[i].QuadPart;
        if ((p & (PAGE_SIZE - 1)) || p < lo || p >= hi)
            return refuse(qp, STATUS_INVALID_PARAMETER);
        msg.body.fast_register.pages[i] = p;
    }
    if (ndk_hm_active(qp->core.ad)) /* the pages' host bytes go ahead of the request */
        ndk_hm_fast_register(NDK_CONTAINER(m, struct ndk_mr, pub), pages, npages, fbo, length, va);
    msg.body.fast_register.req = (struct nf_wr_fast_register){
        .token = mr->token, .npages = npages, .fbo = fbo, .length = length, .va = va};
    const struct ndk_wr wr = {.slot = {.ctx = ctx, .op_type = NdkOperationTypeFastRegister},
                              .op = NF_OP_WR_FAST_REGISTER,
                              .flags = flags,
                              .body_len = NF_WR_FAST_REGISTER_SIZE + (size_t)npages * sizeof(*pages),
                              .msg = &msg};
    return post(qp, &wr);
}

/* NdkInvalidate: a fast-register MR or a memory window of this adapter; the board
 * decides the rest (the PD, whether the token is valid now). */
static NTSTATUS qp_invalidate(NDK_QP *q, PVOID ctx, NDK_OBJECT_HEADER *obj, ULONG flags)
{
    if (!ndk_obj_ok(q, NdkObjectTypeQp))
        return STATUS_INVALID_PARAMETER;
    struct ndk_qp *qp = qp_of(q);
    if (!obj || (flags & ~(ULONG)NF_KNOWN_FLAGS_INVALIDATE) || !ndk_live(obj))
        return refuse(qp, STATUS_INVALID_PARAMETER);
    if (obj->ObjectType != NdkObjectTypeMr && obj->ObjectType != NdkObjectTypeMw)
        return refuse(qp, STATUS_INVALID_PARAMETER);
    if (!__atomic_load_n(&qp->connected, __ATOMIC_RELAXED))
        return refuse(qp, STATUS_CONNECTION_INVALID);
    const struct ndk_mr *mr = NDK_CONTAINER(obj, struct ndk_mr, pub.Header);
    if (mr->core.ad != qp->core.ad)
        return refuse(qp, STATUS_INVALID_PARAMETER); /* another adapter's MR or window */
    if (obj->ObjectType == NdkObjectTypeMr && !mr->fast)
        return refuse(qp, STATUS_INVALID_DEVICE_STATE); /* NdkRegisterMr'd MRs are deregistered, not invalidated */
    struct wr_msg msg;
    msg.body.invalidate = (struct nf_wr_invalidate){.token = mr->token};
    /* An invalidated MR's host bytes come home before its completion is delivered. */
    const struct ndk_wr wr = {.slot = {.ctx = ctx,
                                       .op_type = NdkOperationTypeInvalidate,
                                       .hm = obj->ObjectType == NdkObjectTypeMr
                                                 ? ndk_hm_mr_io(NDK_CONTAINER(obj, struct ndk_mr, pub.Header))
                                                 : NULL},
                              .op = NF_OP_WR_INVALIDATE,
                              .flags = flags,
                              .body_len = sizeof(msg.body.invalidate),
                              .msg = &msg};
    return post(qp, &wr);
}

/* The requests that gather local SGEs: what each sends and accepts. */
struct gather_op {
    uint32_t op_type;
    uint16_t op;
    ULONG known; /* KNOWN_FLAGS: INLINE is in none (MaxInlineDataSize 0) */
};
enum { G_READ, G_WRITE, G_SEND, G_SEND_INV };
static const struct gather_op gather_ops[] = {
    [G_READ] = {NdkOperationTypeRead, NF_OP_WR_READ, NF_KNOWN_FLAGS_RDMA},
    [G_WRITE] = {NdkOperationTypeWrite, NF_OP_WR_WRITE, NF_KNOWN_FLAGS_RDMA},
    [G_SEND] = {NdkOperationTypeSend, NF_OP_WR_SEND, NF_KNOWN_FLAGS_SEND},
    [G_SEND_INV] = {NdkOperationTypeSend, NF_OP_WR_SEND_INVALIDATE, NF_KNOWN_FLAGS_SEND},
};

/* NdkRead, NdkWrite, NdkSend, NdkSendAndInvalidate: the same rules on the SGE list,
 * then the request's body (WR_RDMA or WR_SEND) and the SGEs as they are. */
static NTSTATUS gather(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge, ULONG flags, int kind,
                       const void *body, size_t body_len)
{
    if (!ndk_obj_ok(q, NdkObjectTypeQp))
        return STATUS_INVALID_PARAMETER;
    struct ndk_qp *qp = qp_of(q);
    const struct gather_op *g = &gather_ops[kind];
    if ((!sgl && nsge) || (flags & ~g->known))
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
            !ndk_user_range_ok(ad, (uint64_t)sgl[i].LogicalAddress.QuadPart, sgl[i].Length))
            return refuse(qp, STATUS_INVALID_PARAMETER);
    }
    if (total > ad->info.mem_bytes - ad->info.user_base)
        return refuse(qp, STATUS_INVALID_PARAMETER);
    struct wr_msg msg;
    memcpy(msg.body.bytes, body, body_len);
    if (nsge)
        memcpy(msg.body.bytes + body_len, sgl, (size_t)nsge * sizeof(*sgl));
    struct ndk_wr wr = {.slot = {.ctx = ctx, .op_type = g->op_type},
                        .op = g->op,
                        .flags = flags,
                        .body_len = body_len + (size_t)nsge * sizeof(*sgl),
                        .msg = &msg};
    /* Host memory: what the request reads goes to the adapter now; what it writes (a
     * Read's sink) comes home before its completion is delivered. */
    if (ndk_hm_active(qp->core.ad)) {
        wr.slot.hm = ndk_hm_sge_io(qp->core.ad, sgl, nsge);
        if (kind != G_READ) {
            ndk_hm_push(qp->core.ad, wr.slot.hm);
            wr.slot.hm = NULL;
        }
    }
    return post(qp, &wr);
}

static NTSTATUS rdma(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge, UINT64 raddr, UINT32 rtoken, ULONG flags,
                     int kind)
{
    const struct nf_wr_rdma r = {.remote_va = raddr, .remote_token = rtoken, .nsge = nsge};
    return gather(q, ctx, sgl, nsge, flags, kind, &r, sizeof(r));
}

static NTSTATUS qp_read(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge, UINT64 raddr, UINT32 rtoken,
                        ULONG flags)
{
    return rdma(q, ctx, sgl, nsge, raddr, rtoken, flags, G_READ);
}

static NTSTATUS qp_write(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge, UINT64 raddr, UINT32 rtoken,
                         ULONG flags)
{
    return rdma(q, ctx, sgl, nsge, raddr, rtoken, flags, G_WRITE);
}

/* WR_SEND_INVALIDATE: the token is the peer's to check (it names an MR of the
 * receiving QP's PD); the host cannot know it. */
static NTSTATUS send_msg(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge, ULONG flags, int kind, UINT32 token)
{
    const struct nf_wr_send body = {.inv_token = token, .nsge = nsge};
    return gather(q, ctx, sgl, nsge, flags, kind, &body, sizeof(body));
}

static NTSTATUS qp_send(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge, ULONG flags)
{
    return send_msg(q, ctx, sgl, nsge, flags, G_SEND, 0);
}

static NTSTATUS qp_send_inv(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge, ULONG flags, UINT32 token)
{
    return send_msg(q, ctx, sgl, nsge, flags, G_SEND_INV, token);
}

/* NdkReceive: accepted on a QP not connected yet (consumers post receives first).
 * The SGEs are the board's to check, when a Send fills them; the receive queue's
 * own lock-free posting (no deferral: NdkReceive has no flags) runs concurrently
 * with the initiator's. */
static NTSTATUS qp_receive(NDK_QP *q, PVOID ctx, const NDK_SGE *sgl, ULONG nsge)
{
    if (!ndk_obj_ok(q, NdkObjectTypeQp))
        return STATUS_INVALID_PARAMETER;
    struct ndk_qp *qp = qp_of(q);
    if ((!sgl && nsge) || nsge > qp->max_recv_sge)
        return STATUS_INVALID_PARAMETER;
    struct wr_msg msg;
    const struct nf_wr_receive r = {.nsge = nsge};
    memcpy(msg.body.bytes, &r, sizeof(r));
    if (nsge)
        memcpy(msg.body.bytes + sizeof(r), sgl, (size_t)nsge * sizeof(*sgl));
    /* Host memory: what a Send brings comes home before the completion is delivered. */
    const struct ndk_wr wr = {
        .slot = {.ctx = ctx,
                 .op_type = NdkOperationTypeReceive,
                 .hm = ndk_hm_active(qp->core.ad) ? ndk_hm_sge_io(qp->core.ad, sgl, nsge) : NULL},
        .op = NF_OP_WR_RECEIVE,
        .body_len = sizeof(r) + (size_t)nsge * sizeof(*sgl),
        .msg = &msg};
    NTSTATUS st = wq_post(qp, &qp->rq, &wr);
    if (st != STATUS_SUCCESS)
        ndk_hm_io_free(wr.slot.hm);
    return st;
}

/* NdkBind: the host checks what the board cannot see (the objects, the flags, the
 * connection); the firmware decides the rest in the completion (the tokens' kinds
 * and PDs, the MR's state, its range and its local-write right). */
static NTSTATUS qp_bind(NDK_QP *q, PVOID ctx, NDK_MR *m, NDK_MW *w, PVOID va, SIZE_T len, ULONG flags)
{
    if (!ndk_obj_ok(q, NdkObjectTypeQp))
        return STATUS_INVALID_PARAMETER;
    struct ndk_qp *qp = qp_of(q);
    if (!ndk_obj_ok(m, NdkObjectTypeMr) || !ndk_obj_ok(w, NdkObjectTypeMw) ||
        (flags & ~(ULONG)NF_KNOWN_FLAGS_BIND))
        return refuse(qp, STATUS_INVALID_PARAMETER);
    const struct ndk_mr *mr = NDK_CONTAINER(m, struct ndk_mr, pub);
    const struct ndk_mr *mw = NDK_CONTAINER(w, struct ndk_mr, mw);
    if (mr->core.ad != qp->core.ad || mw->core.ad != qp->core.ad)
        return refuse(qp, STATUS_INVALID_PARAMETER); /* another adapter's tokens mean nothing here */
    if (!__atomic_load_n(&qp->connected, __ATOMIC_RELAXED))
        return refuse(qp, STATUS_CONNECTION_INVALID);
    struct wr_msg msg;
    msg.body.bind = (struct nf_wr_bind){
        .mr_token = mr->token, .mw_token = mw->token, .va = (uint64_t)(uintptr_t)va, .length = len};
    const struct ndk_wr wr = {.slot = {.ctx = ctx, .op_type = NdkOperationTypeBind},
                              .op = NF_OP_WR_BIND,
                              .flags = flags,
                              .body_len = sizeof(msg.body.bind),
                              .msg = &msg};
    return post(qp, &wr);
}

/* ------------------------------------------------------------------------- */
/* Create and close                                                           */

static void qp_fini(struct ndk_core *c)
{
    struct ndk_qp *qp = NDK_CONTAINER(c, struct ndk_qp, core);
    pthread_mutex_destroy(&qp->ring_lock);
    free(qp->iq.slot);
    free(qp->rq.slot);
}

static void qp_teardown(struct ndk_core *c)
{
    struct ndk_qp *qp = NDK_CONTAINER(c, struct ndk_qp, core);
    struct ndk_adapter *ad = c->ad;
    pthread_mutex_lock(&ad->lock);
    /* Whatever is still outstanding (the close's flush answered, timed out or the
     * link died), pending receives too, completes CANCELLED before the close does. */
    ndk_qp_fail_all(qp, STATUS_CANCELLED);
    for (uint32_t i = 0; i < ad->nqps; i++)
        if (ad->qps[i] == qp)
            ad->qps[i] = NULL;
    __atomic_store_n(&qp->connected, 0, __ATOMIC_RELAXED);
    if (qp->user) {
        void *user = qp->user;
        const struct ndk_qp_user *ops = qp->user_ops;
        qp->user = NULL;
        qp->user_ops = NULL;
        ops->gone(user);
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
    /* Requests still outstanding and pending receives are flushed first (the flush
     * holds a reference, so the close pends until its reply): those the board has run
     * complete with their real status, the rest STATUS_CANCELLED, all before the close
     * completes. */
    pthread_mutex_lock(&ad->lock);
    int flush = !qp->core.closing && !ad->dead;
    pthread_mutex_unlock(&ad->lock);
    if (flush) {
        pthread_mutex_lock(&qp->ring_lock);
        flush = qp->iq.head != ndk_wq_tail(&qp->iq) || qp->rq.head != ndk_wq_tail(&qp->rq);
        pthread_mutex_unlock(&qp->ring_lock);
    }
    if (flush)
        qp_flush(&qp->pub);
    return ndk_close(&qp->core, cb, ctx);
}

static void qp_create_reply(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS status, const uint8_t *body,
                            size_t len)
{
    struct ndk_qp *qp = r->arg;
    struct nf_qp_create_rep rep;
    status = ndk_reply_copy(status, body, len, &rep, sizeof(rep));
    uint32_t slot = ad->nqps;
    if (status == STATUS_SUCCESS) {
        for (uint32_t i = 0; i < ad->nqps; i++) {
            if (ad->qps[i] && ad->qps[i]->qpn == rep.qpn)
                slot = ad->nqps + 1; /* the board named a QP it already gave us */
            else if (!ad->qps[i] && slot == ad->nqps)
                slot = i;
        }
        if (slot >= ad->nqps)
            status = STATUS_INTERNAL_ERROR;
    }
    if (status == STATUS_SUCCESS) {
        qp->qpn = rep.qpn;
        qp->wr_tag = NDK_WR_TAG | slot << NDK_WR_TAG_ID_BITS;
        qp->cq_overflowed = qp->icq->overflowed || (qp->rcq && qp->rcq->overflowed);
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
    /* The limits NdkQueryAdapterInfo reports (no inline data); whether the board has
     * receive entries left for rdepth is its to say (INSUFFICIENT_RESOURCES). */
    if (idepth == 0 || idepth > NDK_MAX_QUEUE_DEPTH || rdepth > NF_ADAPTER_MAX_RQ_DEPTH ||
        rsge > NF_ADAPTER_MAX_RECV_SGE || isge > ad->info.max_sge || isge > NF_ADAPTER_MAX_SGE || inline_size > 0 || (rdepth && !rcq))
        return STATUS_INVALID_PARAMETER;
    struct ndk_cq *ic = NDK_CONTAINER(icq, struct ndk_cq, pub);
    struct ndk_cq *rc = rcq ? NDK_CONTAINER(rcq, struct ndk_cq, pub) : NULL;
    if (ic->core.ad != ad || (rc && rc->core.ad != ad))
        return STATUS_INVALID_PARAMETER;
    struct ndk_qp *qp = ndk_obj_new(ad, &qp_type, &pd->core, &ic->core, rc && rc != ic ? &rc->core : NULL);
    struct ndk_req *r = calloc(1, sizeof(*r));
    int rings = qp && ndk_wq_init(&qp->iq, idepth);
    rings = rings && ndk_wq_init(&qp->rq, rdepth);
    if (!qp || !rings || !r) {
        if (qp) {
            free(qp->iq.slot);
            free(qp->rq.slot);
        }
        free(qp);
        free(r);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    qp->pub.Dispatch = &ndk_qp_dispatch;
    qp->icq = ic;
    qp->rcq = rc;
    qp->context = qpctx;
    qp->max_sge = isge;
    qp->max_recv_sge = rsge;
    qp->qpn = UINT32_MAX;
    pthread_mutex_init(&qp->ring_lock, NULL);
    r->on_reply = qp_create_reply;
    r->arg = qp;
    uint8_t msg[NF_MSG_HDR_SIZE + NF_QP_CREATE_REQ_SIZE];
    struct nf_qp_create_req q = {pd->pdn, idepth, rdepth, rsge};
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
