/* SPDX-License-Identifier: Apache-2.0 */
/* NDKPI completion queue: a host-side ring of NDK_RESULT_EX filled from the board's
 * CQE messages (on the link thread) and drained by NdkGetCqResults(Ex). */
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"

static void cq_fini(struct ndk_core *c)
{
    free(NDK_CONTAINER(c, struct ndk_cq, core)->ring);
}

static const struct ndk_type cq_type = {NdkObjectTypeCq, sizeof(struct ndk_cq), offsetof(struct ndk_cq, core), NULL,
                                        cq_fini};

/* Under ad->lock: queue the CQ's notification callback (one of its own events;
 * *queued, if not NULL, is cleared as it runs). */
static void queue_cq_event(struct ndk_cq *cq, struct ndk_event *ev, int kind, NTSTATUS st, int *queued)
{
    ndk_event_set(ev, kind, (void (*)(void))cq->notify, cq->notify_ctx, st, NULL, &cq->core);
    ev->embedded = 1;
    ev->queued = queued;
    ndk_queue_event(cq->core.ad, ev);
}

static void queue_notify(struct ndk_cq *cq, NTSTATUS st)
{
    cq->armed = 0;
    if (cq->notify_queued || !cq->notify)
        return;
    cq->notify_queued = 1;
    queue_cq_event(cq, &cq->notify_ev, EV_CQ_NOTIFY, st, &cq->notify_queued);
}

/* Whether a result notifies the CQ as armed: ANY every one; ERRORS the failed ones;
 * SOLICITED the failed ones and the receive completions whose Send asked for it. */
static int wants(const struct ndk_cq *cq, const struct ndk_cq_entry *e)
{
    switch (cq->armed - 1) {
    case NDK_CQ_NOTIFY_ANY:
        return 1;
    case NDK_CQ_NOTIFY_SOLICITED:
        return e->r.Status != STATUS_SUCCESS || e->solicited;
    case NDK_CQ_NOTIFY_ERRORS:
        return e->r.Status != STATUS_SUCCESS;
    default:
        return 0; /* not armed */
    }
}

/* Under ad->lock: more completions than the CQ holds (the consumer sized it below
 * its queues). NDK: the CQ is then unusable, so is every QP using it, and no further
 * completions are reported; the provider says so through the notification callback
 * with STATUS_BUFFER_OVERFLOW, armed or not, once. The QPs using it are marked and
 * refuse later posts (ndk_qp.c). */
static void overflow(struct ndk_cq *cq)
{
    struct ndk_adapter *ad = cq->core.ad;
    cq->overflowed = 1;
    for (uint32_t i = 0; i < ad->nqps; i++) {
        struct ndk_qp *qp = ad->qps[i];
        if (qp && (qp->icq == cq || qp->rcq == cq))
            __atomic_store_n(&qp->cq_overflowed, 1, __ATOMIC_RELAXED);
    }
    ad->cq_overflows++;
    cq->armed = 0;
    if (cq->notify)
        queue_cq_event(cq, &cq->ovf_ev, EV_CQ_ERROR, STATUS_BUFFER_OVERFLOW, NULL);
}

void ndk_cq_push(struct ndk_cq *cq, const NDK_RESULT_EX *r, int solicited)
{
    if (cq->core.closing && cq->core.close_queued)
        return;
    if (cq->overflowed || cq->count == cq->depth) {
        cq->overruns++;
        cq->core.ad->cq_dropped++;
        if (!cq->overflowed)
            overflow(cq);
        return;
    }
    uint32_t i = cq->head + cq->count;
    if (i >= cq->depth)
        i -= cq->depth;
    cq->ring[i].r = *r;
    cq->ring[i].solicited = solicited;
    cq->count++;
    if (wants(cq, &cq->ring[i]))
        queue_notify(cq, STATUS_SUCCESS);
}

static NTSTATUS cq_close(NDK_OBJECT_HEADER *obj, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx)
{
    return ndk_close_as(obj, &cq_type, cb, ctx);
}

static NTSTATUS cq_resize(NDK_CQ *c, ULONG depth, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx)
{
    (void)c;
    (void)depth;
    (void)rc;
    (void)ctx;
    return STATUS_NOT_SUPPORTED; /* NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED is not set */
}

static VOID cq_arm(NDK_CQ *c, ULONG type)
{
    if (!ndk_obj_ok(c, NdkObjectTypeCq) || type > NDK_CQ_NOTIFY_SOLICITED)
        return;
    struct ndk_cq *cq = NDK_CONTAINER(c, struct ndk_cq, pub);
    struct ndk_adapter *ad = cq->core.ad;
    pthread_mutex_lock(&ad->lock);
    if (cq->overflowed) { /* unusable: the overflow was reported once */
        pthread_mutex_unlock(&ad->lock);
        return;
    }
    cq->armed = (int)type + 1;
    /* Results already waiting notify at once, so no completion is missed between
     * the consumer's last poll and the arm. */
    for (uint32_t k = 0; k < cq->count; k++) {
        uint32_t i = (cq->head + k) % cq->depth;
        if (wants(cq, &cq->ring[i])) {
            queue_notify(cq, STATUS_SUCCESS);
            break;
        }
    }
    pthread_mutex_unlock(&ad->lock);
}

static ULONG take(struct ndk_cq *cq, NDK_RESULT *res, NDK_RESULT_EX *rex, ULONG n)
{
    struct ndk_adapter *ad = cq->core.ad;
    ULONG got = 0;
    pthread_mutex_lock(&ad->lock);
    while (got < n && cq->count) {
        const NDK_RESULT_EX *r = &cq->ring[cq->head].r;
        if (rex) {
            rex[got] = *r;
        } else {
            res[got].Status = r->Status;
            res[got].BytesTransferred = r->BytesTransferred;
            res[got].QPContext = r->QPContext;
            res[got].RequestContext = r->RequestContext;
        }
        got++;
        cq->head = cq->head + 1 == cq->depth ? 0 : cq->head + 1;
        cq->count--;
    }
    pthread_mutex_unlock(&ad->lock);
    return got;
}

static ULONG cq_get_results(NDK_CQ *c, NDK_RESULT res[], ULONG n)
{
    if (!ndk_obj_ok(c, NdkObjectTypeCq) || !res)
        return 0;
    return take(NDK_CONTAINER(c, struct ndk_cq, pub), res, NULL, n);
}

static ULONG cq_get_results_ex(NDK_CQ *c, NDK_RESULT_EX res[], ULONG n)
{
    if (!ndk_obj_ok(c, NdkObjectTypeCq) || !res)
        return 0;
    return take(NDK_CONTAINER(c, struct ndk_cq, pub), NULL, res, n);
}

static NTSTATUS cq_moderation(NDK_CQ *c, ULONG interval, ULONG count)
{
    (void)c;
    (void)interval;
    (void)count;
    return STATUS_NOT_SUPPORTED; /* NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED is not set */
}

const NDK_CQ_DISPATCH ndk_cq_dispatch = {
    .NdkCloseCq = cq_close,
    .NdkQueryExtension = ndk_query_extension,
    .NdkResizeCq = cq_resize,
    .NdkArmCq = cq_arm,
    .NdkGetCqResults = cq_get_results,
    .NdkControlCqInterruptModeration = cq_moderation,
    .NdkGetCqResultsEx = cq_get_results_ex,
};

NTSTATUS ndk_create_cq(NDK_ADAPTER *a, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK notify, PVOID notify_ctx,
                       GROUP_AFFINITY *aff, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_CQ **out)
{
    (void)aff;
    (void)cc; /* made on the host: done inline */
    (void)ctx;
    if (out)
        *out = NULL;
    struct ndk_adapter *ad = ndk_adapter_live(a);
    if (!ad || !out || depth == 0 || depth > NDK_MAX_CQ_DEPTH)
        return STATUS_INVALID_PARAMETER;
    struct ndk_cq *cq = ndk_obj_new(ad, &cq_type, &ad->core, NULL, NULL);
    if (!cq)
        return STATUS_INSUFFICIENT_RESOURCES;
    cq->pub.Dispatch = &ndk_cq_dispatch;
    cq->ring = calloc(depth, sizeof(*cq->ring));
    cq->depth = depth;
    cq->notify = notify;
    cq->notify_ctx = notify_ctx;
    NTSTATUS st = cq->ring ? ndk_obj_publish(&cq->core) : STATUS_INSUFFICIENT_RESOURCES;
    if (st == STATUS_SUCCESS)
        *out = &cq->pub;
    else if (!cq->ring)
        ndk_core_destroy(&cq->core);
    return st;
}
