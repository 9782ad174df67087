/* NDKPI protection domain and memory region: PD numbers are host-assigned; an MR is
 * a key-table entry on the board (MR_CREATE), registered with MR_REGISTER
 * (NdkRegisterMr) or prepared for fast registration with FRMR_INIT. */
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"

static NTSTATUS pd_create_mr(NDK_PD *p, BOOLEAN fast, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_MR **out);

/* ------------------------------------------------------------------------- */
/* Asynchronous requests with a synchronous fallback (no callback given).     */

/* Under ad->lock: the request is over; complete it the way it was asked for. */
static void finish(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS st, NDK_OBJECT_HEADER *created)
{
    if (!r->rc && !r->cc) {
        r->status = (uint32_t)st;
        r->done = 1;
        pthread_cond_broadcast(&ad->cond);
        return;
    }
    if (r->cc)
        ndk_queue_create_cb(ad, r->cc, r->ctx, st, created, NULL);
    else
        ndk_queue_request_cb(ad, r->rc, r->ctx, st, r->obj);
    free(r);
}

/* Send r; returns STATUS_PENDING (callback follows), the final status (no
 * callback given: waited; the reply handler ran, with a reply, the link's death
 * status or STATUS_IO_TIMEOUT, so the wait is bounded), or an inline failure (r
 * freed, the reply handler never ran: *inline_failed set when not NULL). */
static NTSTATUS issue_ex(struct ndk_adapter *ad, struct ndk_req *r, uint16_t op, void *msg, size_t len,
                         int *inline_failed)
{
    int sync = !r->rc && !r->cc;
    r->gate = 1;
    NTSTATUS st = ndk_req_send(ad, r, op, msg, len, 0);
    if (inline_failed)
        *inline_failed = st != STATUS_SUCCESS && st != STATUS_PENDING;
    if (st != STATUS_SUCCESS && st != STATUS_PENDING) {
        free(r);
        return st;
    }
    if (!sync)
        return STATUS_PENDING;
    pthread_mutex_lock(&ad->lock);
    ndk_wait_req(ad, r);
    pthread_mutex_unlock(&ad->lock);
    st = (NTSTATUS)r->status;
    free(r);
    return st;
}

static NTSTATUS issue(struct ndk_adapter *ad, struct ndk_req *r, uint16_t op, void *msg, size_t len)
{
    return issue_ex(ad, r, op, msg, len, NULL);
}

/* ------------------------------------------------------------------------- */
/* PD                                                                         */

static void pd_destroy(struct ndk_core *c)
{
    free(NDK_CONTAINER(c, struct ndk_pd, core));
}

static NTSTATUS pd_close(NDK_OBJECT_HEADER *obj, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx)
{
    if (!ndk_obj_ok(obj, NdkObjectTypePd))
        return STATUS_SUCCESS;
    return ndk_close(&NDK_CONTAINER(obj, struct ndk_pd, pub.Header)->core, cb, ctx);
}

NTSTATUS ndk_create_pd(NDK_ADAPTER *a, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_PD **out)
{
    (void)cc;
    (void)ctx;
    if (!out)
        return STATUS_INVALID_PARAMETER;
    *out = NULL;
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter))
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    struct ndk_pd *pd = calloc(1, sizeof(*pd));
    if (!pd)
        return STATUS_INSUFFICIENT_RESOURCES;
    ndk_core_init(ad, &pd->core, &pd->pub.Header, NdkObjectTypePd, &ad->core, NULL, NULL);
    pd->pub.Dispatch = &ndk_pd_dispatch;
    pd->core.destroy = pd_destroy;
    pthread_mutex_lock(&ad->lock);
    /* PD numbers are 16 bits on the board (MPT_W1.PD); 0 is never used. */
    ad->next_pdn = (ad->next_pdn + 1) & NF_MPT_W1_PD_MASK;
    if (ad->next_pdn == 0)
        ad->next_pdn = 1;
    pd->pdn = ad->next_pdn;
    int linked = ndk_core_link(&pd->core);
    pthread_mutex_unlock(&ad->lock);
    if (!linked) {
        pd_destroy(&pd->core);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    *out = &pd->pub;
    return STATUS_SUCCESS;
}

static NTSTATUS pd_create_mw(NDK_PD *pd, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_MW **out)
{
    (void)pd;
    (void)cc;
    (void)ctx;
    if (out)
        *out = NULL;
    return STATUS_NOT_SUPPORTED; /* no memory windows (MaxWindowSize 0) */
}

static NTSTATUS pd_create_srq(NDK_PD *pd, ULONG depth, ULONG sge, ULONG threshold,
                              NDK_FN_SRQ_NOTIFICATION_CALLBACK notify, PVOID nctx, GROUP_AFFINITY *aff,
                              NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_SRQ **out)
{
    (void)pd;
    (void)depth;
    (void)sge;
    (void)threshold;
    (void)notify;
    (void)nctx;
    (void)aff;
    (void)cc;
    (void)ctx;
    if (out)
        *out = NULL;
    return STATUS_NOT_SUPPORTED; /* no receives (MaxSrqDepth 0) */
}

// cppcheck-suppress constParameter ; the signature is NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN
static NTSTATUS pd_privileged_token(NDK_PD *pd, UINT32 *token)
{
    if (!ndk_obj_ok(pd, NdkObjectTypePd) || !token)
        return STATUS_INVALID_PARAMETER;
    *token = NF_ADAPTER_PRIVILEGED_TOKEN;
    return STATUS_SUCCESS;
}

const NDK_PD_DISPATCH ndk_pd_dispatch = {
    .NdkClosePd = pd_close,
    .NdkQueryExtension = ndk_query_extension,
    .NdkCreateMr = pd_create_mr,
    .NdkCreateMw = pd_create_mw,
    .NdkCreateSrq = pd_create_srq,
    .NdkCreateQp = ndk_create_qp,
    .NdkCreateQpWithSrq = ndk_create_qp_with_srq,
    .NdkGetPrivilegedMemoryRegionToken = pd_privileged_token,
};

/* ------------------------------------------------------------------------- */
/* MR                                                                         */

static struct ndk_mr *mr_of(NDK_MR *m)
{
    return NDK_CONTAINER(m, struct ndk_mr, pub);
}

static void mr_destroy(struct ndk_core *c)
{
    free(NDK_CONTAINER(c, struct ndk_mr, core));
}

static void mr_teardown(struct ndk_core *c)
{
    struct ndk_mr *mr = NDK_CONTAINER(c, struct ndk_mr, core);
    struct nf_token_req q = {mr->token, 0};
    ndk_send_forget(c->ad, NF_OP_MR_DESTROY, &q, sizeof(q));
}

static NTSTATUS mr_close(NDK_OBJECT_HEADER *obj, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx)
{
    if (!ndk_obj_ok(obj, NdkObjectTypeMr))
        return STATUS_SUCCESS;
    return ndk_close(&NDK_CONTAINER(obj, struct ndk_mr, pub.Header)->core, cb, ctx);
}

static void mr_create_reply(struct ndk_adapter *ad, struct ndk_req *r, uint32_t status, const uint8_t *body,
                            size_t len)
{
    struct ndk_mr *mr = r->arg;
    struct nf_mr_create_rep rep;
    mr->create_done = 1;
    if (status == NF_STATUS_SUCCESS && (!body || len < sizeof(rep)))
        status = NF_STATUS_INTERNAL_ERROR;
    if (status == NF_STATUS_SUCCESS) {
        memcpy(&rep, body, sizeof(rep));
        mr->token = rep.token;
        (void)ndk_core_link(&mr->core); /* room checked at the create; a race to full: unusable MR */
        ndk_unref_locked(&mr->pd->core); /* the create's own reference */
        finish(ad, r, STATUS_SUCCESS, &mr->pub.Header);
        return;
    }
    ndk_unref_locked(&mr->pd->core);
    r->arg = NULL;
    if (r->cc) /* the object never existed for the consumer */
        free(mr);
    finish(ad, r, (NTSTATUS)status, NULL);
}

static NTSTATUS pd_create_mr(NDK_PD *p, BOOLEAN fast, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_MR **out)
{
    if (!out)
        return STATUS_INVALID_PARAMETER;
    *out = NULL;
    if (!ndk_obj_ok(p, NdkObjectTypePd))
        return STATUS_INVALID_PARAMETER;
    struct ndk_pd *pd = NDK_CONTAINER(p, struct ndk_pd, pub);
    struct ndk_adapter *ad = pd->core.ad;
    if (!ndk_registry_has_room())
        return STATUS_INSUFFICIENT_RESOURCES;
    struct ndk_mr *mr = calloc(1, sizeof(*mr));
    struct ndk_req *r = calloc(1, sizeof(*r));
    if (!mr || !r) {
        free(mr);
        free(r);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    ndk_core_init(ad, &mr->core, &mr->pub.Header, NdkObjectTypeMr, &pd->core, NULL, NULL);
    mr->pub.Dispatch = &ndk_mr_dispatch;
    mr->core.destroy = mr_destroy;
    mr->core.teardown = mr_teardown;
    mr->pd = pd;
    mr->fast = fast ? 1 : 0;
    r->on_reply = mr_create_reply;
    r->arg = mr;
    r->cc = cc;
    r->ctx = ctx;
    uint8_t msg[NF_MSG_HDR_SIZE + NF_MR_CREATE_REQ_SIZE];
    struct nf_mr_create_req q = {pd->pdn, (uint32_t)mr->fast};
    memcpy(msg + NF_MSG_HDR_SIZE, &q, sizeof(q));
    pthread_mutex_lock(&ad->lock);
    ndk_ref(&pd->core); /* a PD close waits for the create */
    pthread_mutex_unlock(&ad->lock);
    NTSTATUS st = issue(ad, r, NF_OP_MR_CREATE, msg, sizeof(msg));
    if (st == STATUS_PENDING)
        return st;
    if (st == STATUS_SUCCESS) {
        *out = &mr->pub;
        return st;
    }
    /* Failed: inline (the reply handler never ran: drop the create's PD reference)
     * or, without a callback, answered with an error (the handler dropped it). */
    if (!(cc == NULL && mr->create_done)) {
        pthread_mutex_lock(&ad->lock);
        ndk_unref_locked(&pd->core);
        pthread_mutex_unlock(&ad->lock);
    }
    free(mr);
    return st;
}

static void mr_register_reply(struct ndk_adapter *ad, struct ndk_req *r, uint32_t status, const uint8_t *body,
                              size_t len)
{
    (void)body;
    (void)len;
    struct ndk_mr *mr = r->arg;
    mr->state = status == NF_STATUS_SUCCESS ? MR_REGISTERED : MR_CREATED;
    struct ndk_core *c = &mr->core;
    finish(ad, r, (NTSTATUS)status, NULL);
    ndk_unref_locked(c); /* the request's own reference */
}

static NTSTATUS mr_register(NDK_MR *m, MDL *mdl, SIZE_T length, ULONG flags, NDK_FN_REQUEST_COMPLETION rc,
                            PVOID ctx)
{
    if (!ndk_obj_ok(m, NdkObjectTypeMr) || !mdl || length == 0)
        return STATUS_INVALID_PARAMETER;
    struct ndk_mr *mr = mr_of(m);
    struct ndk_adapter *ad = mr->core.ad;
    if (flags & ~(ULONG)NF_KNOWN_FLAGS_MR_REGISTER) /* the firmware's mask too (tools/layout.toml) */
        return STATUS_INVALID_PARAMETER;
    /* Remote write implies local write (0x5 = 0x4 | 0x1): 0x4 alone is not valid. */
    if ((flags & NDK_MR_FLAG_ALLOW_REMOTE_WRITE & ~NDK_MR_FLAG_ALLOW_LOCAL_WRITE) &&
        !(flags & NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
        return STATUS_INVALID_PARAMETER;
    if (mr->fast)
        return STATUS_INVALID_DEVICE_STATE; /* only on an MR created with FastRegister = FALSE */
    uint32_t cap = ad->info.mtt_entries < NDK_MAX_REGISTER_PAGES ? ad->info.mtt_entries : NDK_MAX_REGISTER_PAGES;
    uint8_t *msg = malloc(NF_LINK_MAX_PAYLOAD);
    struct ndk_req *r = calloc(1, sizeof(*r));
    if (!msg || !r) {
        free(msg);
        free(r);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    NDK_LOGICAL_ADDRESS *pages =
        (NDK_LOGICAL_ADDRESS *)(void *)(msg + NF_MSG_HDR_SIZE + NF_MR_REGISTER_REQ_SIZE);
    NTSTATUS st;
    ULONG fbo = 0;
    uint32_t n = ndk_mdl_pages(ad, mdl, length, pages, cap, &fbo, &st);
    if (n == 0) {
        free(msg);
        free(r);
        return st;
    }
    pthread_mutex_lock(&ad->lock);
    if (mr->state != MR_CREATED || mr->core.closing) {
        pthread_mutex_unlock(&ad->lock);
        free(msg);
        free(r);
        return STATUS_INVALID_DEVICE_STATE; /* already registered or being registered */
    }
    mr->state = MR_REGISTERING;
    ndk_ref(&mr->core);
    pthread_mutex_unlock(&ad->lock);
    struct nf_mr_register_req q;
    memset(&q, 0, sizeof(q));
    q.token = mr->token;
    q.flags = flags;
    q.va = (uint64_t)(uintptr_t)MmGetMdlVirtualAddress(mdl);
    q.length = length;
    q.fbo = fbo;
    q.npages = n;
    memcpy(msg + NF_MSG_HDR_SIZE, &q, sizeof(q));
    r->on_reply = mr_register_reply;
    r->arg = mr;
    r->obj = &mr->core;
    r->rc = rc;
    r->ctx = ctx;
    int inline_failed = 0;
    st = issue_ex(ad, r, NF_OP_MR_REGISTER, msg, NF_MSG_HDR_SIZE + sizeof(q) + (size_t)n * 8u, &inline_failed);
    free(msg);
    if (inline_failed) {
        /* Inline failure before the board saw it: undo. */
        pthread_mutex_lock(&ad->lock);
        mr->state = MR_CREATED;
        ndk_unref_locked(&mr->core);
        pthread_mutex_unlock(&ad->lock);
    }
    return st;
}

static void mr_deregister_reply(struct ndk_adapter *ad, struct ndk_req *r, uint32_t status, const uint8_t *body,
                                size_t len)
{
    (void)body;
    (void)len;
    struct ndk_mr *mr = r->arg;
    mr->state = status == NF_STATUS_SUCCESS ? MR_CREATED : MR_REGISTERED;
    struct ndk_core *c = &mr->core;
    finish(ad, r, (NTSTATUS)status, NULL);
    ndk_unref_locked(c);
}

static NTSTATUS mr_deregister(NDK_MR *m, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx)
{
    if (!ndk_obj_ok(m, NdkObjectTypeMr))
        return STATUS_INVALID_PARAMETER;
    struct ndk_mr *mr = mr_of(m);
    struct ndk_adapter *ad = mr->core.ad;
    if (mr->fast)
        return STATUS_INVALID_DEVICE_STATE; /* fast-register MRs are invalidated, not deregistered */
    struct ndk_req *r = calloc(1, sizeof(*r));
    if (!r)
        return STATUS_INSUFFICIENT_RESOURCES;
    pthread_mutex_lock(&ad->lock);
    if (mr->state != MR_REGISTERED) {
        pthread_mutex_unlock(&ad->lock);
        free(r);
        return STATUS_INVALID_DEVICE_STATE;
    }
    mr->state = MR_DEREGISTERING;
    ndk_ref(&mr->core);
    pthread_mutex_unlock(&ad->lock);
    uint8_t msg[NF_MSG_HDR_SIZE + NF_TOKEN_REQ_SIZE];
    struct nf_token_req q = {mr->token, 0};
    memcpy(msg + NF_MSG_HDR_SIZE, &q, sizeof(q));
    r->on_reply = mr_deregister_reply;
    r->arg = mr;
    r->obj = &mr->core;
    r->rc = rc;
    r->ctx = ctx;
    int inline_failed = 0;
    NTSTATUS st = issue_ex(ad, r, NF_OP_MR_DEREGISTER, msg, sizeof(msg), &inline_failed);
    if (inline_failed) {
        pthread_mutex_lock(&ad->lock);
        mr->state = MR_REGISTERED;
        ndk_unref_locked(&mr->core);
        pthread_mutex_unlock(&ad->lock);
    }
    return st;
}

static void frmr_init_reply(struct ndk_adapter *ad, struct ndk_req *r, uint32_t status, const uint8_t *body,
                            size_t len)
{
    (void)body;
    (void)len;
    struct ndk_mr *mr = r->arg;
    mr->inits_in_flight--;
    if (status == NF_STATUS_SUCCESS) {
        mr->frmr_pages = r->u[0];
        mr->remote_access = (int)r->u[1];
    }
    struct ndk_core *c = &mr->core;
    finish(ad, r, (NTSTATUS)status, NULL);
    ndk_unref_locked(c);
}

static NTSTATUS mr_init_fast(NDK_MR *m, ULONG npages, BOOLEAN remote, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx)
{
    if (!ndk_obj_ok(m, NdkObjectTypeMr))
        return STATUS_INVALID_PARAMETER;
    struct ndk_mr *mr = mr_of(m);
    struct ndk_adapter *ad = mr->core.ad;
    if (!mr->fast)
        return STATUS_INVALID_DEVICE_STATE; /* MR must be created with FastRegister = TRUE */
    if (npages == 0)
        return STATUS_INVALID_PARAMETER;
    uint32_t limit = ad->info.max_frmr_pages < NDK_MAX_FR_MSG_PAGES ? ad->info.max_frmr_pages : NDK_MAX_FR_MSG_PAGES;
    // cppcheck-suppress knownConditionTrueFalse ; limit comes from the board's INFO
    if (npages > limit)
        return STATUS_IMPLEMENTATION_LIMIT;
    struct ndk_req *r = calloc(1, sizeof(*r));
    if (!r)
        return STATUS_INSUFFICIENT_RESOURCES;
    pthread_mutex_lock(&ad->lock);
    if (mr->core.closing) {
        pthread_mutex_unlock(&ad->lock);
        free(r);
        return STATUS_INVALID_DEVICE_STATE;
    }
    mr->inits_in_flight++;
    ndk_ref(&mr->core);
    pthread_mutex_unlock(&ad->lock);
    uint8_t msg[NF_MSG_HDR_SIZE + NF_FRMR_INIT_REQ_SIZE];
    struct nf_frmr_init_req q = {mr->token, npages, remote ? 1u : 0u, 0};
    memcpy(msg + NF_MSG_HDR_SIZE, &q, sizeof(q));
    r->on_reply = frmr_init_reply;
    r->arg = mr;
    r->obj = &mr->core;
    r->rc = rc;
    r->ctx = ctx;
    r->u[0] = npages;
    r->u[1] = remote ? 1u : 0u;
    int inline_failed = 0;
    NTSTATUS st = issue_ex(ad, r, NF_OP_FRMR_INIT, msg, sizeof(msg), &inline_failed);
    if (inline_failed) {
        /* Inline failure (with or without a callback): the reply handler never ran. */
        pthread_mutex_lock(&ad->lock);
        mr->inits_in_flight--;
        ndk_unref_locked(&mr->core);
        pthread_mutex_unlock(&ad->lock);
    }
    return st;
}

static UINT32 mr_token(NDK_MR *m)
{
    return ndk_obj_ok(m, NdkObjectTypeMr) ? mr_of(m)->token : 0;
}

const NDK_MR_DISPATCH ndk_mr_dispatch = {
    .NdkCloseMr = mr_close,
    .NdkQueryExtension = ndk_query_extension,
    .NdkRegisterMr = mr_register,
    .NdkDeregisterMr = mr_deregister,
    .NdkInitializeFastRegisterMr = mr_init_fast,
    .NdkGetRemoteTokenFromMr = mr_token,
    .NdkGetLocalTokenFromMr = mr_token,
};
