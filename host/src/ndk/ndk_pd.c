/* SPDX-License-Identifier: Apache-2.0 */
/* NDKPI protection domain, memory region and memory window: PD numbers are
 * host-assigned; an MR is a key-table entry on the board (MR_CREATE), registered with
 * MR_REGISTER (NdkRegisterMr) or prepared for fast registration with FRMR_INIT; a
 * window is one too (MW_CREATE), given a range of an MR by NdkBind (a work request). */
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"

static NTSTATUS pd_create_mr(NDK_PD *p, BOOLEAN fast, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_MR **out);
static NTSTATUS pd_create_mw(NDK_PD *p, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_MW **out);

/* ------------------------------------------------------------------------- */
/* PD                                                                         */

static const struct ndk_type pd_type = {NdkObjectTypePd, sizeof(struct ndk_pd), offsetof(struct ndk_pd, core), NULL,
                                        NULL};

static NTSTATUS pd_close(NDK_OBJECT_HEADER *obj, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx)
{
    return ndk_close_as(obj, &pd_type, cb, ctx);
}

NTSTATUS ndk_create_pd(NDK_ADAPTER *a, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_PD **out)
{
    (void)cc; /* made on the host: done inline */
    (void)ctx;
    if (out)
        *out = NULL;
    struct ndk_adapter *ad = ndk_adapter_live(a);
    if (!ad || !out)
        return STATUS_INVALID_PARAMETER;
    struct ndk_pd *pd = ndk_obj_new(ad, &pd_type, &ad->core, NULL, NULL);
    if (!pd)
        return STATUS_INSUFFICIENT_RESOURCES;
    pd->pub.Dispatch = &ndk_pd_dispatch;
    pthread_mutex_lock(&ad->lock);
    /* PD numbers are 16 bits on the board (MPT_W1.PD); 0 is never used. */
    ad->next_pdn = (ad->next_pdn + 1) & NF_MPT_W1_PD_MASK;
    if (ad->next_pdn == 0)
        ad->next_pdn = 1;
    pd->pdn = ad->next_pdn;
    pthread_mutex_unlock(&ad->lock);
    NTSTATUS st = ndk_obj_publish(&pd->core);
    if (st == STATUS_SUCCESS)
        *out = &pd->pub;
    return st;
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
/* NdkGetPrivilegedMemoryRegionToken returns nothing: a handle that is not a live PD
 * leaves *token as it was. */
static VOID pd_privileged_token(NDK_PD *pd, UINT32 *token)
{
    if (token && ndk_obj_ok(pd, NdkObjectTypePd))
        *token = NF_ADAPTER_PRIVILEGED_TOKEN;
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

static void mr_teardown(struct ndk_core *c)
{
    struct ndk_mr *mr = NDK_CONTAINER(c, struct ndk_mr, core);
    ndk_hm_mr_pull(mr); /* a closed region's host bytes come home first */
    struct nf_token_req q = {mr->token, 0};
    ndk_send_forget(c->ad, NF_OP_MR_DESTROY, &q, sizeof(q));
    pthread_mutex_lock(&c->ad->lock);
    ndk_hm_mr_drop_locked(mr);
    pthread_mutex_unlock(&c->ad->lock);
}

static const struct ndk_type mr_type = {NdkObjectTypeMr, sizeof(struct ndk_mr), offsetof(struct ndk_mr, core),
                                        mr_teardown, NULL};
static const struct ndk_type mw_type = {NdkObjectTypeMw, sizeof(struct ndk_mr), offsetof(struct ndk_mr, core),
                                        mr_teardown, NULL};

static NTSTATUS mr_close(NDK_OBJECT_HEADER *obj, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx)
{
    return ndk_close_as(obj, &mr_type, cb, ctx);
}

static NTSTATUS mw_close(NDK_OBJECT_HEADER *obj, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx)
{
    return ndk_close_as(obj, &mw_type, cb, ctx);
}

static void mr_create_reply(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS status, const uint8_t *body,
                            size_t len)
{
    struct ndk_mr *mr = r->arg;
    struct nf_mr_create_rep rep;
    status = ndk_reply_copy(status, body, len, &rep, sizeof(rep));
    if (status == STATUS_SUCCESS)
        mr->token = rep.token;
    ndk_create_done(ad, r, &mr->core, status);
}

/* NdkCreateMr and NdkCreateMw: a key-table entry of the PD (MR_CREATE or MW_CREATE,
 * the same request and answer); *out is the object's header. */
static NTSTATUS create_key(NDK_PD *p, const struct ndk_type *t, BOOLEAN fast, NDK_FN_CREATE_COMPLETION cc,
                           PVOID ctx, NDK_OBJECT_HEADER **out)
{
    if (!out)
        return STATUS_INVALID_PARAMETER;
    *out = NULL;
    if (!ndk_obj_ok(p, NdkObjectTypePd))
        return STATUS_INVALID_PARAMETER;
    struct ndk_pd *pd = NDK_CONTAINER(p, struct ndk_pd, pub);
    if (!ndk_registry_has_room())
        return STATUS_INSUFFICIENT_RESOURCES;
    struct ndk_mr *mr = ndk_obj_new(pd->core.ad, t, &pd->core, NULL, NULL);
    struct ndk_req *r = calloc(1, sizeof(*r));
    if (!mr || !r) {
        free(mr);
        free(r);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    uint16_t op = NF_OP_MR_CREATE;
    if (t->type == NdkObjectTypeMw) {
        mr->mw.Dispatch = &ndk_mw_dispatch;
        op = NF_OP_MW_CREATE;
    } else {
        mr->pub.Dispatch = &ndk_mr_dispatch;
    }
    mr->fast = fast ? 1 : 0;
    r->on_reply = mr_create_reply;
    r->arg = mr;
    uint8_t msg[NF_MSG_HDR_SIZE + NF_MR_CREATE_REQ_SIZE];
    struct nf_mr_create_req q = {pd->pdn, (uint32_t)mr->fast};
    memcpy(msg + NF_MSG_HDR_SIZE, &q, sizeof(q));
    NTSTATUS st = ndk_create_issue(&mr->core, r, op, msg, sizeof(msg), cc, ctx);
    if (st == STATUS_SUCCESS)
        *out = &mr->pub.Header;
    return st;
}

static NTSTATUS pd_create_mr(NDK_PD *p, BOOLEAN fast, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_MR **out)
{
    NDK_OBJECT_HEADER *h = NULL;
    NTSTATUS st = create_key(p, &mr_type, fast, cc, ctx, out ? &h : NULL);
    if (out)
        *out = h ? &NDK_CONTAINER(h, struct ndk_mr, pub.Header)->pub : NULL;
    return st;
}

static NTSTATUS pd_create_mw(NDK_PD *p, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_MW **out)
{
    NDK_OBJECT_HEADER *h = NULL;
    NTSTATUS st = create_key(p, &mw_type, FALSE, cc, ctx, out ? &h : NULL);
    if (out)
        *out = h ? &NDK_CONTAINER(h, struct ndk_mr, pub.Header)->mw : NULL;
    return st;
}

/* ---- NdkRegisterMr, NdkDeregisterMr, NdkInitializeFastRegisterMr: one request
 * each, holding a reference on the MR until its answer ---- */

/* Under ad->lock: may the request start? If so the MR shows it in flight (and maps
 * hreg, a registration's host memory). */
static int mr_begin(struct ndk_mr *mr, uint16_t op, struct ndk_hm_region *hreg)
{
    if (op == NF_OP_MR_REGISTER) {
        if (mr->state != MR_CREATED || mr->core.closing)
            return 0; /* already registered or being registered */
        mr->state = MR_REGISTERING;
        if (hreg)
            ndk_hm_region_attach_locked(mr, hreg);
    } else if (op == NF_OP_MR_DEREGISTER) {
        if (mr->state != MR_REGISTERED)
            return 0;
        mr->state = MR_DEREGISTERING;
    } else {
        if (mr->core.closing)
            return 0;
        mr->inits_in_flight++;
    }
    ndk_ref(&mr->core);
    return 1;
}

/* Under ad->lock: what the answer leaves in the MR (an inline failure is one too:
 * the board never saw the request). init: an FRMR_INIT's pages and remote access. */
static void mr_settle(struct ndk_mr *mr, uint16_t op, NTSTATUS status, const struct ndk_frmr_init *init)
{
    int ok = status == STATUS_SUCCESS;
    if (op == NF_OP_MR_REGISTER) {
        mr->state = ok ? MR_REGISTERED : MR_CREATED;
        if (!ok)
            ndk_hm_mr_drop_locked(mr);
    } else if (op == NF_OP_MR_DEREGISTER) {
        mr->state = ok ? MR_CREATED : MR_REGISTERED;
        if (ok)
            ndk_hm_mr_drop_locked(mr);
    } else {
        mr->inits_in_flight--;
        if (ok) {
            mr->frmr_pages = init->pages;
            mr->remote_access = init->remote;
        }
    }
    ndk_unref_locked(&mr->core); /* the request's own reference */
}

static void mr_reply(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS status, const uint8_t *body, size_t len)
{
    (void)body;
    (void)len;
    struct ndk_mr *mr = r->arg;
    uint16_t op = r->op;
    const struct ndk_frmr_init init = r->frmr;
    ndk_req_finish(ad, r, status, NULL); /* its callback holds the MR first, then: */
    mr_settle(mr, op, status, &init);
}

/* Start, send and (without a callback) wait for one MR request; msg holds its body. */
static NTSTATUS mr_issue(struct ndk_mr *mr, uint16_t op, void *msg, size_t len, const struct ndk_frmr_init *init,
                         struct ndk_hm_region *hreg, NDK_FN_REQUEST_COMPLETION rc, void *ctx)
{
    struct ndk_adapter *ad = mr->core.ad;
    struct ndk_req *r = calloc(1, sizeof(*r));
    pthread_mutex_lock(&ad->lock);
    int started = r && mr_begin(mr, op, hreg);
    pthread_mutex_unlock(&ad->lock);
    if (!started) {
        ndk_hm_region_discard(ad, hreg);
        free(r);
        return r ? STATUS_INVALID_DEVICE_STATE : STATUS_INSUFFICIENT_RESOURCES;
    }
    r->on_reply = mr_reply;
    r->arg = mr;
    r->obj = &mr->core;
    r->rc = rc;
    r->ctx = ctx;
    if (init)
        r->frmr = *init;
    int inline_failed = 0;
    NTSTATUS st = ndk_req_issue(ad, r, op, msg, len, &inline_failed);
    if (inline_failed) {
        pthread_mutex_lock(&ad->lock);
        mr_settle(mr, op, st, init);
        pthread_mutex_unlock(&ad->lock);
    }
    return st;
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
    if (!msg)
        return STATUS_INSUFFICIENT_RESOURCES;
    uint64_t *pages = (uint64_t *)(void *)(msg + NF_MSG_HDR_SIZE + NF_MR_REGISTER_REQ_SIZE);
    NTSTATUS st;
    ULONG fbo = 0;
    struct ndk_hm_region *hreg = NULL;
    uint32_t n = ndk_hm_is_host_mdl(mdl) ? ndk_hm_register_pages(ad, mdl, length, pages, cap, &fbo, &st, &hreg)
                                         : ndk_mdl_pages(ad, mdl, length, pages, cap, &fbo, &st);
    if (n > 0) {
        struct nf_mr_register_req q;
        memset(&q, 0, sizeof(q));
        q.token = mr->token;
        q.flags = flags;
        q.va = (uint64_t)(uintptr_t)MmGetMdlVirtualAddress(mdl);
        q.length = length;
        q.fbo = fbo;
        q.npages = n;
        memcpy(msg + NF_MSG_HDR_SIZE, &q, sizeof(q));
        st = mr_issue(mr, NF_OP_MR_REGISTER, msg, NF_MSG_HDR_SIZE + sizeof(q) + (size_t)n * 8u, NULL, hreg, rc, ctx);
    }
    free(msg);
    return st;
}

static NTSTATUS mr_deregister(NDK_MR *m, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx)
{
    if (!ndk_obj_ok(m, NdkObjectTypeMr))
        return STATUS_INVALID_PARAMETER;
    struct ndk_mr *mr = mr_of(m);
    if (mr->fast)
        return STATUS_INVALID_DEVICE_STATE; /* fast-register MRs are invalidated, not deregistered */
    pthread_mutex_lock(&mr->core.ad->lock);
    int registered = mr->state == MR_REGISTERED;
    pthread_mutex_unlock(&mr->core.ad->lock);
    if (registered)
        ndk_hm_mr_pull(mr); /* the region's host bytes come home before it is gone */
    uint8_t msg[NF_MSG_HDR_SIZE + NF_TOKEN_REQ_SIZE];
    struct nf_token_req q = {mr->token, 0};
    memcpy(msg + NF_MSG_HDR_SIZE, &q, sizeof(q));
    return mr_issue(mr, NF_OP_MR_DEREGISTER, msg, sizeof(msg), NULL, NULL, rc, ctx);
}

static NTSTATUS mr_init_fast(NDK_MR *m, ULONG npages, BOOLEAN remote, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx)
{
    if (!ndk_obj_ok(m, NdkObjectTypeMr))
        return STATUS_INVALID_PARAMETER;
    struct ndk_mr *mr = mr_of(m);
    const struct ndk_adapter *ad = mr->core.ad;
    if (!mr->fast)
        return STATUS_INVALID_DEVICE_STATE; /* MR must be created with FastRegister = TRUE */
    if (npages == 0)
        return STATUS_INVALID_PARAMETER;
    uint32_t limit = ad->info.max_frmr_pages < NDK_MAX_FR_MSG_PAGES ? ad->info.max_frmr_pages : NDK_MAX_FR_MSG_PAGES;
    // cppcheck-suppress knownConditionTrueFalse ; limit comes from the board's INFO
    if (npages > limit)
        return STATUS_IMPLEMENTATION_LIMIT;
    uint8_t msg[NF_MSG_HDR_SIZE + NF_FRMR_INIT_REQ_SIZE];
    struct nf_frmr_init_req q = {mr->token, npages, remote ? 1u : 0u, 0};
    memcpy(msg + NF_MSG_HDR_SIZE, &q, sizeof(q));
    const struct ndk_frmr_init init = {npages, remote ? 1 : 0};
    return mr_issue(mr, NF_OP_FRMR_INIT, msg, sizeof(msg), &init, NULL, rc, ctx);
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

static UINT32 mw_token(NDK_MW *m)
{
    return ndk_obj_ok(m, NdkObjectTypeMw) ? NDK_CONTAINER(m, struct ndk_mr, mw)->token : 0;
}

const NDK_MW_DISPATCH ndk_mw_dispatch = {
    .NdkCloseMw = mw_close,
    .NdkQueryExtension = ndk_query_extension,
    .NdkGetRemoteTokenFromMw = mw_token,
};
