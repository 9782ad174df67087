/* SPDX-License-Identifier: Apache-2.0 */
/* A QP's two work queues: the initiator queue (NdkFastRegister, NdkInvalidate,
 * NdkRead, NdkWrite, NdkSend, NdkSendAndInvalidate) and the receive queue
 * (NdkReceive). Completion routing from the board's CQEs, failure (link death,
 * close), flush of pending receives and the initiator queue's deadline watch. Calls
 * only ndk_cq.c and the link; ndk_qp.c (above) checks the calls' rules, owns the QP's
 * life and posts (a ring slot and the message on the link in one step: wq_post, in
 * ndk_qp.c so that it inlines into each call).
 *
 * The posting path is lean on purpose (benchmarked in host instructions per
 * NdkFastRegister): no allocation, no adapter lock, one lock (the link's: a post
 * publishes its tail there with its message; qp->ring_lock serializes the consumers),
 * and the message is built before it and copied whole into the link's open frame. */
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"

int ndk_wq_init(struct ndk_wq *q, uint32_t depth)
{
    uint32_t ring = 1;
    while (ring < depth)
        ring <<= 1;
    q->slot = calloc(ring, sizeof(*q->slot));
    q->depth = depth;
    q->mask = ring - 1;
    q->head = q->tail = 0;
    return q->slot != NULL;
}

/* ------------------------------------------------------------------------- */
/* Completions                                                                */

static int is_receive(uint32_t op_type)
{
    return op_type == NF_NDK_OP_RECEIVE || op_type == NF_NDK_OP_RECEIVE_AND_INVALIDATE;
}

/* One result on the CQ of the queue the request was posted on: status, and from c
 * bytes, op_type (0: the slot's), refuse and token (TypeSpecificCompletionOutput). */
static void complete(struct ndk_qp *qp, const struct ndk_wr_slot *s, NTSTATUS status, const struct nf_cqe *c,
                     int solicited)
{
    NDK_RESULT_EX r;
    r.Status = status;
    r.BytesTransferred = c->bytes;
    r.QPContext = qp->context;
    r.RequestContext = s->ctx;
    r.Type = (NDK_OPERATION_TYPE)(c->op_type ? c->op_type : s->op_type);
    r.ProviderErrorCode = c->refuse;
    r.TypeSpecificCompletionOutput = c->token;
    ndk_hm_complete(qp->core.ad, is_receive(r.Type) ? qp->rcq : qp->icq, &r, solicited, s->hm);
}

void ndk_wq_retire_silent(struct ndk_qp *qp, uint32_t upto, int ok)
{
    struct ndk_wq *q = &qp->iq;
    for (uint32_t id = q->head; id != upto; id++) {
        struct ndk_hm_io *hm = q->slot[id & q->mask].hm;
        if (hm && ok)
            ndk_hm_complete(qp->core.ad, NULL, NULL, 0, hm); /* a silent success's bytes */
        else
            ndk_hm_io_free(hm);
    }
    ndk_wq_set_head(q, upto);
}

/* A completion the host decides (no CQE): status alone. */
static void complete_as(struct ndk_qp *qp, const struct ndk_wr_slot *s, NTSTATUS st)
{
    struct nf_cqe c;
    memset(&c, 0, sizeof(c));
    complete(qp, s, st, &c, 0);
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

/* Under qp->ring_lock: the receive id has completed. Receives complete in order, but
 * one the board refused at once (a receive posted on a broken QP completes CANCELLED
 * while older ones stay pending) may complete ahead: it leaves a hole the head skips
 * once everything before it has completed. Returns 0 for a stale id. */
static int rq_retire(struct ndk_wq *q, uint32_t id, struct ndk_wr_slot *out)
{
    struct ndk_wr_slot *s = &q->slot[id & q->mask];
    uint32_t head = q->head, tail = ndk_wq_tail(q);
    if (id - head >= tail - head || s->done)
        return 0;
    *out = *s;
    s->done = 1;
    while (head != tail && q->slot[head & q->mask].done)
        head++;
    ndk_wq_set_head(q, head);
    return 1;
}

void ndk_qp_on_cqe(struct ndk_adapter *ad, const struct nf_cqe *cqe, NTSTATUS status)
{
    struct ndk_qp *qp = qp_by_qpn(ad, cqe->qpn);
    if (!qp)
        return;
    struct ndk_wr_slot s;
    pthread_mutex_lock(&qp->ring_lock);
    if (is_receive(cqe->op_type)) {
        int live = rq_retire(&qp->rq, cqe->wr_id, &s);
        pthread_mutex_unlock(&qp->ring_lock);
        if (live)
            complete(qp, &s, status, cqe, (cqe->cflags & NF_CQE_FLAG_SOLICITED) != 0);
        return;
    }
    struct ndk_wq *q = &qp->iq;
    if (cqe->wr_id - q->head >= ndk_wq_tail(q) - q->head) {
        /* Stale: flushed or failed already. */
        pthread_mutex_unlock(&qp->ring_lock);
        return;
    }
    /* The board executes a QP's requests in order and reports each one that is not a
     * silent success, so requests before this one completed silently. */
    s = q->slot[cqe->wr_id & q->mask];
    ndk_wq_retire_silent(qp, cqe->wr_id, 1);
    ndk_wq_set_head(q, cqe->wr_id + 1);
    pthread_mutex_unlock(&qp->ring_lock);
    struct nf_cqe c = *cqe;
    c.token = 0; /* only receives carry a token */
    complete(qp, &s, status, &c, 0);
    if (status == STATUS_IO_TIMEOUT && qp->user)
        qp->user_ops->lost(qp->user); /* the transport's retries ran out: the peer is gone */
}

void ndk_qp_on_short(struct ndk_adapter *ad, uint16_t op, uint32_t tag, NTSTATUS status)
{
    uint32_t idx = (tag & ~NDK_WR_TAG) >> NDK_WR_TAG_ID_BITS;
    struct ndk_qp *qp = idx < ad->nqps ? ad->qps[idx] : NULL;
    if (!qp || status == STATUS_SUCCESS)
        return;
    int receive = op == NF_OP_WR_RECEIVE;
    struct ndk_wq *q = receive ? &qp->rq : &qp->iq;
    struct nf_cqe c;
    memset(&c, 0, sizeof(c));
    c.qpn = qp->qpn;
    c.op_type = receive ? NF_NDK_OP_RECEIVE : 0;
    /* The outstanding id with these low bits (ring depths are below 2^NDK_WR_TAG_ID_BITS). */
    pthread_mutex_lock(&qp->ring_lock);
    uint32_t head = q->head, n = ndk_wq_tail(q) - head;
    uint32_t skip = ((tag & NDK_WR_TAG_ID_MASK) - head) & NDK_WR_TAG_ID_MASK;
    pthread_mutex_unlock(&qp->ring_lock);
    if (skip >= n)
        return; /* completed already (a late answer) */
    c.wr_id = head + skip;
    ndk_qp_on_cqe(ad, &c, status);
}

/* Under qp->ring_lock: complete up to n of q's outstanding requests with ids before
 * `before`, oldest first, with status (holes of receives completed already skipped). */
static uint32_t drain(struct ndk_qp *qp, struct ndk_wq *q, uint32_t n, uint32_t before, NTSTATUS st)
{
    uint32_t done = 0, tail = ndk_wq_tail(q);
    while (done < n && q->head != tail && before - q->head - 1 < tail - q->head) {
        struct ndk_wr_slot s = q->slot[q->head & q->mask]; /* a copy: the slot is free once head passes */
        ndk_wq_set_head(q, q->head + 1);
        if (s.done)
            continue;
        complete_as(qp, &s, st);
        done++;
    }
    return done;
}

void ndk_qp_fail_all(struct ndk_qp *qp, NTSTATUS status)
{
    pthread_mutex_lock(&qp->ring_lock);
    uint32_t n = drain(qp, &qp->iq, UINT32_MAX, ndk_wq_tail(&qp->iq), status);
    n += drain(qp, &qp->rq, UINT32_MAX, ndk_wq_tail(&qp->rq), status);
    if (status == STATUS_CANCELLED)
        qp->core.ad->close_flushed += n;
    pthread_mutex_unlock(&qp->ring_lock);
}

void ndk_rq_cancel(struct ndk_qp *qp, uint32_t n, uint32_t before)
{
    pthread_mutex_lock(&qp->ring_lock);
    drain(qp, &qp->rq, n, before, STATUS_CANCELLED);
    pthread_mutex_unlock(&qp->ring_lock);
}

void ndk_qps_fail(struct ndk_adapter *ad, NTSTATUS status)
{
    for (uint32_t i = 0; i < ad->nqps; i++) {
        struct ndk_qp *qp = ad->qps[i];
        if (qp) {
            __atomic_store_n(&qp->connected, 0, __ATOMIC_RELAXED);
            ndk_qp_fail_all(qp, status);
        }
    }
}

/* Under ad->lock (callback thread): a QP's initiator requests. The board reports
 * them in order, each that is not a silent success, so the first outstanding request
 * that reports a completion is the one to watch: when that same request has been the
 * first for the timeout, it completes STATUS_IO_TIMEOUT (the silent ones before it
 * retire with it, as its CQE would have retired them) and a late CQE for it is
 * stale. Silent requests alone have nothing to wait for. Receives are not watched: a
 * receive waits for a Send from the peer, which may never come, by design; NdkFlush,
 * the close or link death completes it. */
static void watch(struct ndk_adapter *ad, struct ndk_qp *qp, uint64_t now)
{
    pthread_mutex_lock(&qp->ring_lock);
    struct ndk_wq *q = &qp->iq;
    uint32_t id = q->head, tail = ndk_wq_tail(q);
    while (id != tail && q->slot[id & q->mask].silent)
        id++;
    if (id == tail) {
        qp->watch_since_us = 0; /* nothing that reports a completion is outstanding */
    } else if (qp->watch_since_us == 0 || qp->watch_head != id) {
        qp->watch_head = id;
        qp->watch_since_us = now;
    } else if (now - qp->watch_since_us >= ad->req_timeout_us) {
        struct ndk_wr_slot copy = q->slot[id & q->mask];
        ndk_wq_retire_silent(qp, id, 0);
        ndk_wq_set_head(q, id + 1);
        qp->watch_since_us = 0;
        complete_as(qp, &copy, STATUS_IO_TIMEOUT);
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
