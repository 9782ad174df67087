/* SPDX-License-Identifier: Apache-2.0 */
/* NDKPI adapter: open and close, the link glue (messages and link death handed to
 * the requests and QPs), the periodic deadline watch, adapter info, NdkCloseObject
 * and the adapter's dispatch table. The top of the provider: it calls the other
 * ndk_*.c files, none of them calls it. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"
#include "base/nf_time.h"

/* How long NdkFpgaCloseAdapter waits for replies still in flight before it stops
 * the link anyway (then everything outstanding completes STATUS_CANCELLED). */
#define CLOSE_DRAIN_MS 1000
/* A request, or a QP's oldest work request that reports a completion, with no
 * answer from a live link for this long completes STATUS_IO_TIMEOUT
 * ($NDKFPGA_REQUEST_TIMEOUT_MS overrides; docs/guarantees.md). */
#define DEFAULT_REQUEST_TIMEOUT_MS 30000u

static void on_message(void *ctx, const uint8_t *msg, size_t len)
{
    struct ndk_adapter *ad = ctx;
    struct nf_msg_hdr h;
    if (len < sizeof(h))
        return;
    memcpy(&h, msg, sizeof(h));
    NTSTATUS status = ndk_status(h.status);
    if (h.op == NF_OP_CQE) {
        struct nf_cqe cqe;
        if (len < NF_MSG_HDR_SIZE + sizeof(cqe))
            return;
        memcpy(&cqe, msg + NF_MSG_HDR_SIZE, sizeof(cqe));
        pthread_mutex_lock(&ad->lock);
        ndk_qp_on_cqe(ad, &cqe, ndk_status(cqe.status));
        pthread_mutex_unlock(&ad->lock);
        return;
    }
    if (h.op == NF_OP_CM_EVENT) {
        pthread_mutex_lock(&ad->lock);
        ndk_conn_on_cm_event(ad, msg + NF_MSG_HDR_SIZE, len - NF_MSG_HDR_SIZE);
        pthread_mutex_unlock(&ad->lock);
        return;
    }
    uint16_t op = h.op & (uint16_t)~NF_OP_REPLY;
    if ((h.op & NF_OP_REPLY) && (h.tag & NDK_WR_TAG) && op >= NF_OP_WR_FAST_REGISTER && op <= NF_OP_WR_BIND) {
        pthread_mutex_lock(&ad->lock);
        ndk_qp_on_short(ad, op, h.tag, status);
        pthread_mutex_unlock(&ad->lock);
        return;
    }
    if (h.op & NF_OP_REPLY)
        ndk_req_reply(ad, &h, status, msg + NF_MSG_HDR_SIZE, len - NF_MSG_HDR_SIZE);
}

/* Under ad->lock: every request and work request still outstanding fails. */
static void fail_everything(struct ndk_adapter *ad, NTSTATUS status)
{
    ndk_req_fail_all(ad, status);
    ndk_qps_fail(ad, status);
    ndk_wire_fail_all(ad, status);
    pthread_cond_broadcast(&ad->cond);
}

static void on_dead(void *ctx, NTSTATUS status)
{
    struct ndk_adapter *ad = ctx;
    pthread_mutex_lock(&ad->lock);
    if (!ad->dead) {
        __atomic_store_n(&ad->dead, status != STATUS_SUCCESS ? status : STATUS_CONNECTION_ABORTED, __ATOMIC_RELAXED);
        fail_everything(ad, ad->dead);
    }
    pthread_mutex_unlock(&ad->lock);
}

/* Under ad->lock (callback thread, ad->tick): every request and work request has a
 * deadline. Returns how many requests expired. */
static int tick(struct ndk_adapter *ad)
{
    uint64_t now = ndk_now_us();
    if (now < ad->next_watch_us)
        return 0;
    ad->next_watch_us = now + NDK_WATCH_PERIOD_MS * 1000u;
    int expired = ndk_req_expire(ad, now);
    if (!ad->dead)
        ndk_qps_watch(ad, now);
    return expired;
}

static NTSTATUS open_status(NTSTATUS st)
{
    switch (st) {
    case STATUS_INVALID_PARAMETER:
    case STATUS_NOT_SUPPORTED:
    case STATUS_INSUFFICIENT_RESOURCES:
    case STATUS_IO_TIMEOUT:
        return st;
    case STATUS_INVALID_DEVICE_STATE:
        return STATUS_NOT_SUPPORTED; /* incompatible INFO */
    default:
        return STATUS_NETWORK_UNREACHABLE;
    }
}

struct ndk_adapter *ndk_adapter_alloc(void)
{
    struct ndk_adapter *ad = calloc(1, sizeof(*ad));
    if (!ad)
        return NULL;
    ndk_core_init(ad, &ad->core, &ad->pub.Header, NdkObjectTypeAdapter, NULL, NULL, NULL);
    ad->pub.Dispatch = &ndk_adapter_dispatch;
    ad->objects.next = ad->objects.prev = &ad->objects;
    pthread_mutex_init(&ad->lock, NULL);
    nf_cond_init(&ad->cond); /* timed waits on CLOCK_MONOTONIC (nf_time.h) */
    nf_cond_init(&ad->ev_cond);
    pthread_mutex_init(&ad->hm_lock, NULL);
    return ad;
}

NTSTATUS ndk_adapter_setup(struct ndk_adapter *ad)
{
    const struct nf_info *in = &ad->info;
    if (in->page_size != PAGE_SIZE || in->user_base % PAGE_SIZE || in->mem_bytes <= in->user_base ||
        in->max_qps == 0 || in->max_qps > NDK_MAX_QPS)
        return STATUS_NOT_SUPPORTED;
    ad->first_page = in->user_base / PAGE_SIZE;
    ad->npages = (in->mem_bytes - in->user_base) / PAGE_SIZE;
    ad->page_used = calloc(ad->npages, 1);
    ad->nqps = in->max_qps;
    ad->qps = calloc(ad->nqps, sizeof(*ad->qps));
    if (!ad->page_used || !ad->qps || !ndk_registry_add(&ad->pub.Header))
        return STATUS_INSUFFICIENT_RESOURCES;
    return STATUS_SUCCESS;
}

void ndk_adapter_free(struct ndk_adapter *ad)
{
    ndk_registry_del(&ad->pub.Header);
    ndk_hm_fini(ad);
    pthread_mutex_destroy(&ad->hm_lock);
    free(ad->page_used);
    free(ad->qps);
    pthread_mutex_destroy(&ad->lock);
    pthread_cond_destroy(&ad->cond);
    pthread_cond_destroy(&ad->ev_cond);
    free(ad);
}

NTSTATUS NdkFpgaOpenAdapter(const char *device, NDK_ADAPTER **out)
{
    if (!out)
        return STATUS_INVALID_PARAMETER;
    *out = NULL;
    struct ndk_adapter *ad = ndk_adapter_alloc();
    if (!ad)
        return STATUS_INSUFFICIENT_RESOURCES;
    struct nf_transport *t = NULL;
    struct nf_transport_net net;
    memset(&net, 0, sizeof(net));
    NTSTATUS st = nf_transport_open(device ? device : "auto", &t);
    if (st == STATUS_SUCCESS) {
        snprintf(ad->device, sizeof(ad->device), "%s", t->name ? t->name : "");
        net = t->net;
        st = nf_link_open(t, on_message, on_dead, ad, &ad->link, &ad->info);
    }
    {
        const char *v = getenv("NDKFPGA_REQUEST_TIMEOUT_MS");
        unsigned long ms = v && *v ? strtoul(v, NULL, 10) : 0;
        ad->req_timeout_us = (uint64_t)(ms > 0 && ms <= 3600000ul ? ms : DEFAULT_REQUEST_TIMEOUT_MS) * 1000u;
    }
    if (st != STATUS_SUCCESS) {
        ndk_adapter_free(ad);
        return open_status(st);
    }
    NTSTATUS nst = ndk_adapter_setup(ad);
    if (nst == STATUS_SUCCESS && !ndk_events_start(ad, tick))
        nst = STATUS_INSUFFICIENT_RESOURCES;
    if (nst != STATUS_SUCCESS) {
        nf_link_close(ad->link);
        ndk_adapter_free(ad);
        return nst;
    }
    /* A device string's addresses (sim,net=...,ip=...): an adapter that refuses them is
     * closed again, so an open either has them or fails. */
    nst = ndk_net_apply(ad, &net);
    if (nst != STATUS_SUCCESS) {
        NdkFpgaCloseAdapter(&ad->pub);
        return nst;
    }
    /* A firmware with a network port answers NET_CONFIG: RoCEv2 (RdmaTechnology). */
    NDKFPGA_PORT_ADDRESS pa;
    memset(&pa, 0, sizeof(pa));
    ad->has_port = NdkFpgaPortAddress(&ad->pub, 0, &pa) == STATUS_SUCCESS;
    *out = &ad->pub;
    return STATUS_SUCCESS;
}

VOID NdkFpgaCloseAdapter(NDK_ADAPTER *a)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter))
        return;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    ndk_registry_del(&ad->pub.Header); /* no call takes it from now on */
    pthread_mutex_lock(&ad->lock);
    /* Let replies already on their way arrive (bounded), run their callbacks. */
    struct timespec until;
    ndk_deadline_after(&until, CLOSE_DRAIN_MS);
    while ((ad->reqs || ad->ev_head || ad->cb_busy) && !ad->dead) {
        if (pthread_cond_timedwait(&ad->cond, &ad->lock, &until) == ETIMEDOUT) {
            if (nf_log_enabled(NF_LOG_DEBUG))
                for (struct ndk_req *r = ad->reqs; r; r = r->next)
                    nf_log(NF_LOG_DEBUG, "close: no reply to op 0x%x tag %u", r->op, r->tag);
            break;
        }
    }
    pthread_mutex_unlock(&ad->lock);

    nf_link_close(ad->link); /* no link callbacks after this */

    pthread_mutex_lock(&ad->lock);
    if (!ad->dead)
        __atomic_store_n(&ad->dead, STATUS_CANCELLED, __ATOMIC_RELAXED);
    fail_everything(ad, STATUS_CANCELLED);
    pthread_mutex_unlock(&ad->lock);
    ndk_events_stop(ad);
    ndk_free_leftovers(ad);
    ndk_free_buffers(ad);
    ndk_adapter_free(ad);
}

static NTSTATUS query_adapter_info(NDK_ADAPTER *a, NDK_ADAPTER_INFO *info, ULONG *size)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !size)
        return STATUS_INVALID_PARAMETER;
    if (!info || *size < sizeof(NDK_ADAPTER_INFO)) {
        *size = sizeof(NDK_ADAPTER_INFO);
        return STATUS_BUFFER_TOO_SMALL;
    }
    const struct ndk_adapter *ad = ndk_adapter_of(a);
    const struct nf_info *in = &ad->info;
    uint32_t reg_pages = in->mtt_entries < NDK_MAX_REGISTER_PAGES ? in->mtt_entries : NDK_MAX_REGISTER_PAGES;
    memset(info, 0, sizeof(*info));
    info->Version.Major = NDKFPGA_NDK_VERSION_MAJOR;
    info->Version.Minor = NDKFPGA_NDK_VERSION_MINOR;
    info->VendorId = NDK_VENDOR_ID;
    info->DeviceId = NDK_DEVICE_ID;
    info->MaxRegistrationSize = (SIZE_T)reg_pages * PAGE_SIZE;
    info->FRMRPageCount = in->max_frmr_pages < NDK_MAX_FR_MSG_PAGES ? in->max_frmr_pages : NDK_MAX_FR_MSG_PAGES;
    /* A window lies inside one MR (so no longer than the largest MR, registered or
     * fast-registered) and its length is 32 bits in the key table (MPT_W4). */
    uint64_t mr_max = info->MaxRegistrationSize;
    if ((uint64_t)info->FRMRPageCount * PAGE_SIZE > mr_max)
        mr_max = (uint64_t)info->FRMRPageCount * PAGE_SIZE;
    info->MaxWindowSize = (SIZE_T)(mr_max < UINT32_MAX ? mr_max : UINT32_MAX);
    info->MaxInitiatorRequestSge = in->max_sge;
    info->MaxReceiveRequestSge = NF_ADAPTER_MAX_RECV_SGE;
    info->MaxReadRequestSge = in->max_sge;
    info->MaxTransferLength = in->mem_bytes - in->user_base;
    info->MaxInlineDataSize = 0; /* a Send's bytes always move through its SGEs */
    info->MaxInboundReadLimit = NDK_MAX_READ_LIMIT;
    info->MaxOutboundReadLimit = NDK_MAX_READ_LIMIT;
    info->MaxReceiveQueueDepth = NF_ADAPTER_MAX_RQ_DEPTH; /* the board also bounds the sum (its pool) */
    info->MaxInitiatorQueueDepth = NDK_MAX_QUEUE_DEPTH;
    info->MaxSrqDepth = 0;
    info->MaxCqDepth = NDK_MAX_CQ_DEPTH;
    info->LargeRequestThreshold = 0;
    info->MaxCallerData = NDK_MAX_CALLER_DATA;
    info->MaxCalleeData = NDK_MAX_CALLEE_DATA;
    info->AdapterFlags = NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED | NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED;
    info->RdmaTechnology = ad->has_port ? NdkRoCEv2 : NdkUndefined;
    *size = sizeof(NDK_ADAPTER_INFO);
    return STATUS_SUCCESS;
}

/* No shared endpoints: refused before any argument is read or written. */
static NTSTATUS create_shared_endpoint(NDK_ADAPTER *a, CONST PSOCKADDR addr, ULONG addr_len,
                                       NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_SHARED_ENDPOINT **out)
{
    (void)a;
    (void)addr;
    (void)addr_len;
    (void)cc;
    (void)ctx;
    (void)out;
    return STATUS_NOT_SUPPORTED;
}

/* ndkpi.h puts the close entry first in every dispatch table but the adapter's, and
 * every object starts with its header and dispatch pointer: one view of them closes
 * any object but the adapter (the way a consumer's generic close does). */
struct closable_dispatch {
    // cppcheck-suppress unusedStructMember ; read through the cast in NdkCloseObject
    NDK_FN_CLOSE_OBJECT NdkClose;
};
struct closable {
    // cppcheck-suppress unusedStructMember ; places Dispatch as in every object
    NDK_OBJECT_HEADER Header;
    // cppcheck-suppress unusedStructMember ; read through the cast in NdkCloseObject
    const struct closable_dispatch *Dispatch;
};
_Static_assert(offsetof(NDK_CQ_DISPATCH, NdkCloseCq) == 0 && offsetof(NDK_PD_DISPATCH, NdkClosePd) == 0 &&
                   offsetof(NDK_MR_DISPATCH, NdkCloseMr) == 0 && offsetof(NDK_QP_DISPATCH, NdkCloseQp) == 0 &&
                   offsetof(NDK_CONNECTOR_DISPATCH, NdkCloseConnector) == 0 &&
                   offsetof(NDK_LISTENER_DISPATCH, NdkCloseListener) == 0,
               "the close entry is first");
_Static_assert(offsetof(NDK_CQ, Dispatch) == offsetof(struct closable, Dispatch) &&
                   offsetof(NDK_PD, Dispatch) == offsetof(struct closable, Dispatch) &&
                   offsetof(NDK_MR, Dispatch) == offsetof(struct closable, Dispatch) &&
                   offsetof(NDK_QP, Dispatch) == offsetof(struct closable, Dispatch) &&
                   offsetof(NDK_CONNECTOR, Dispatch) == offsetof(struct closable, Dispatch) &&
                   offsetof(NDK_LISTENER, Dispatch) == offsetof(struct closable, Dispatch),
               "the dispatch pointer follows the header");

NTSTATUS NdkCloseObject(NDK_OBJECT_HEADER *obj, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx)
{
    if (!obj || !ndk_live(obj))
        return STATUS_SUCCESS; /* not an object of this library (a close never fails) */
    if (obj->ObjectType == NdkObjectTypeAdapter) {
        NdkFpgaCloseAdapter((NDK_ADAPTER *)(void *)obj); /* checks it is live */
        return STATUS_SUCCESS;
    }
    return ((const struct closable *)(void *)obj)->Dispatch->NdkClose(obj, cb, ctx);
}

const NDK_ADAPTER_DISPATCH ndk_adapter_dispatch = {
    .NdkQueryExtension = ndk_query_extension,
    .NdkQueryAdapterInfo = query_adapter_info,
    .NdkCreateCq = ndk_create_cq,
    .NdkCreatePd = ndk_create_pd,
    .NdkCreateSharedEndpoint = create_shared_endpoint,
    .NdkCreateConnector = ndk_create_connector,
    .NdkCreateListener = ndk_create_listener,
    .NdkBuildLAM = ndk_hm_build_lam,
    .NdkReleaseLAM = ndk_hm_release_lam,
};
