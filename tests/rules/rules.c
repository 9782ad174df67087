/* SPDX-License-Identifier: Apache-2.0 */
/* The rule table: every NDK rule of docs/ndk.md that has one deterministic status, fed
 * through the public API (ndkpi.h, ndkfpga.h) on each device named on the command
 * line, one TAP line per rule and device, then one line saying whether the devices
 * agree on every status. docs/rules.md lists the same rules by the same names; each
 * group of rows below names the docs/ndk.md section its rules come from.
 *
 *   rules [DEVICE ...]      (default: model)
 *
 * The status of a rule is what a consumer sees: the call's return when it is not
 * STATUS_SUCCESS / STATUS_PENDING, else the completion's (work request) or the
 * callback's (request). Who decided it follows from the same observation: an inline
 * return is the host library's decision, a completion or callback the firmware's (the
 * library forwards it unchanged). Every row checks both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer.h"
#include "tap.h"

enum decider { HOST = 'h', FIRMWARE = 'f' };

/* A status no provider returns: the row's setup failed (why says what). */
#define SETUP_FAILED ((NTSTATUS)0xE0000001u)

#define TOP_VA 0xFFFFFFFFFFFFF000ull /* the last page of the 64-bit space */
#define HIGH_VA 0x7f0000000000ull     /* a base address of the kind mmap gives */
#define MAX_MADE 8

struct env {
    struct consumer_session s;
    NDK_ADAPTER_INFO info;
    NDK_CQ *cq;
    NDK_PD *pd, *pd2;
    struct consumer_pair pr; /* connected QPs of pd, remade after an error completion */
    struct consumer_pair rpr; /* connected QPs of pd with receive queues on rcq (one row) */
    NDK_CQ *rcq;
    NDK_QP *lone;            /* a QP of pd never connected */
    uint16_t src_port;
    MDL *tgt;                /* two pages the rules register */
    NDK_LOGICAL_ADDRESS page[2];
    MDL *src;                /* 64 bytes with a normal MR, the local side of reads and writes */
    NDK_MR *src_mr;
    NDK_OBJECT_HEADER *made[MAX_MADE]; /* closed after each row */
    int nmade;
    int by;                  /* who decided the last observed status: enum decider */
    char why[160];
    /* The overflowing CQ's state, shared by its two rows. */
    NDK_CQ *ocq;
    struct consumer_call onotify;
    struct consumer_pair opr;
};

/* ------------------------------------------------------------------------- */
/* Observing a status                                                         */

static NTSTATUS setup_failed(struct env *e, const char *what, NTSTATUS st)
{
    snprintf(e->why, sizeof(e->why), "%s: %s", what, NdkFpgaStatusName(st));
    return SETUP_FAILED;
}

/* The status of an asynchronous request that returned st (callback k). */
static NTSTATUS request(struct env *e, struct consumer_call *k, NTSTATUS st)
{
    e->by = st == STATUS_PENDING ? FIRMWARE : HOST;
    return consumer_call_wait(k, st, e->s.wait_ms);
}

/* The next result of cq, or a result with STATUS_IO_TIMEOUT. */
static NDK_RESULT_EX next_result(struct env *e, NDK_CQ *cq)
{
    NDK_RESULT_EX r;
    memset(&r, 0, sizeof(r));
    if (!consumer_cq_wait(cq, &r, e->s.wait_ms))
        r.Status = STATUS_IO_TIMEOUT;
    return r;
}

/* The status of a work request whose post returned posted: inline, or its
 * completion. An error completion breaks the connection: the pair is remade for the
 * next row that needs it. */
static NTSTATUS observe_on(struct env *e, NDK_CQ *cq, NTSTATUS posted)
{
    e->by = HOST;
    if (posted != STATUS_SUCCESS)
        return posted;
    e->by = FIRMWARE;
    NDK_RESULT_EX r = next_result(e, cq);
    if (r.Status != STATUS_SUCCESS && cq == e->cq)
        consumer_pair_close(&e->pr);
    return r.Status;
}

static NTSTATUS observe(struct env *e, NTSTATUS posted)
{
    return observe_on(e, e->cq, posted);
}

/* ------------------------------------------------------------------------- */
/* What rows set up (objects made here are closed after the row)              */

static void made(struct env *e, NDK_OBJECT_HEADER *o)
{
    if (e->nmade < MAX_MADE)
        e->made[e->nmade++] = o;
}

static NDK_MR *mr_new(struct env *e, NDK_PD *pd, int fast)
{
    NDK_MR *mr = NULL;
    NTSTATUS st = pd->Dispatch->NdkCreateMr(pd, fast ? TRUE : FALSE, NULL, NULL, &mr);
    if (st != STATUS_SUCCESS) {
        setup_failed(e, "NdkCreateMr", st);
        return NULL;
    }
    made(e, &mr->Header);
    return mr;
}

/* A fast-register MR of pd initialized for pages pages. */
static NDK_MR *fast_mr(struct env *e, NDK_PD *pd, ULONG pages, BOOLEAN remote)
{
    NDK_MR *mr = mr_new(e, pd, 1);
    NTSTATUS st = mr ? mr->Dispatch->NdkInitializeFastRegisterMr(mr, pages, remote, NULL, NULL) : SETUP_FAILED;
    if (mr && st != STATUS_SUCCESS)
        setup_failed(e, "NdkInitializeFastRegisterMr", st);
    return st == STATUS_SUCCESS ? mr : NULL;
}

/* A normal MR of pd registered over the first len bytes of the target pages. */
static NDK_MR *normal_mr(struct env *e, NDK_PD *pd, SIZE_T len, ULONG flags)
{
    NDK_MR *mr = mr_new(e, pd, 0);
    NTSTATUS st = mr ? mr->Dispatch->NdkRegisterMr(mr, e->tgt, len, flags, NULL, NULL) : SETUP_FAILED;
    if (mr && st != STATUS_SUCCESS)
        setup_failed(e, "NdkRegisterMr", st);
    return st == STATUS_SUCCESS ? mr : NULL;
}

static void close_made(struct env *e)
{
    for (int i = e->nmade - 1; i >= 0; i--) {
        NDK_MR *mr = (NDK_MR *)(void *)e->made[i];
        if (e->made[i]->ObjectType == NdkObjectTypeMr)
            mr->Dispatch->NdkDeregisterMr(mr, NULL, NULL); /* refused inline unless registered */
        NdkCloseObject(e->made[i], NULL, NULL);
    }
    e->nmade = 0;
}

/* A connected QP of pd (the initiator side of e->pr), connecting when needed. */
static NDK_QP *qp_up(struct env *e)
{
    if (e->pr.ca)
        return e->pr.qa;
    const char *what;
    NTSTATUS st = consumer_pair_up(&e->s, &e->pr, e->pd, e->cq, e->cq, 0, 0, 16, e->info.MaxInitiatorRequestSge, e,
                                   e->src_port++, &what);
    if (st != STATUS_SUCCESS) {
        setup_failed(e, what, st);
        consumer_pair_close(&e->pr);
        return NULL;
    }
    return e->pr.qa;
}

static NDK_QP *qp_lone(struct env *e)
{
    NTSTATUS st = e->lone ? STATUS_SUCCESS : consumer_qp(e->pd, e->cq, 4, 1, e, &e->lone);
    if (st != STATUS_SUCCESS)
        setup_failed(e, "NdkCreateQp", st);
    return e->lone;
}

/* NdkFastRegister of the first npages target pages. */
static NTSTATUS fr_post(struct env *e, NDK_QP *qp, NDK_MR *mr, ULONG npages, ULONG fbo, SIZE_T len, uint64_t va,
                        ULONG flags)
{
    return qp->Dispatch->NdkFastRegister(qp, e, mr, npages, e->page, fbo, len, (PVOID)(uintptr_t)va, flags);
}

/* A fast-register rule given by its arguments alone: an MR initialized for two pages
 * (of the second PD when other_pd, with RemoteAccess when remote), fast-registered on
 * the connected QP. */
struct fr_args {
    int other_pd, remote;
    ULONG npages, fbo;
    SIZE_T len;
    uint64_t va;
    ULONG flags;
};

typedef struct fr_args FR; /* short, for the table */
enum {
    REMOTE_R = NDK_OP_FLAG_ALLOW_REMOTE_READ,
    REMOTE_W = NDK_OP_FLAG_ALLOW_REMOTE_WRITE,
    READ_SINK = NDK_OP_FLAG_RDMA_READ_SINK,
};

static NTSTATUS fr_rule(struct env *e, const struct fr_args *a)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? fast_mr(e, a->other_pd ? e->pd2 : e->pd, 2, a->remote ? TRUE : FALSE) : NULL;
    if (!mr)
        return SETUP_FAILED;
    return observe(e, fr_post(e, qp, mr, a->npages, a->fbo, a->len, a->va, a->flags));
}

/* An MR of pd fast-registered over one page at va with flags (a completion that is
 * not SUCCESS fails the setup). */
static NDK_MR *fr_done(struct env *e, NDK_QP *qp, NDK_PD *pd, uint64_t va, ULONG flags)
{
    NDK_MR *mr = fast_mr(e, pd, 1, TRUE);
    NTSTATUS st = mr ? observe(e, fr_post(e, qp, mr, 1, 0, PAGE_SIZE, va, flags)) : SETUP_FAILED;
    if (mr && st != STATUS_SUCCESS)
        setup_failed(e, "NdkFastRegister", st);
    return st == STATUS_SUCCESS ? mr : NULL;
}

/* RDMA Write (or Read) of len bytes between the local buffer and (raddr, token). */
static NTSTATUS rdma_post(struct env *e, NDK_QP *qp, int write, UINT64 raddr, UINT32 token, ULONG len, ULONG flags)
{
    NDK_SGE sge;
    sge.VirtualAddress = MmGetMdlVirtualAddress(e->src);
    sge.Length = len;
    sge.MemoryRegionToken = e->src_mr->Dispatch->NdkGetLocalTokenFromMr(e->src_mr);
    return write ? qp->Dispatch->NdkWrite(qp, e, &sge, 1, raddr, token, flags)
                 : qp->Dispatch->NdkRead(qp, e, &sge, 1, raddr, token, flags);
}

static UINT64 tgt_va(const struct env *e)
{
    return (UINT64)(uintptr_t)MmGetMdlVirtualAddress(e->tgt);
}

/* A remote access through a normal MR of pd over 256 bytes of the target. */
static NTSTATUS access_rule(struct env *e, NDK_PD *pd, ULONG mr_flags, int write, UINT64 off, UINT32 key_xor,
                            ULONG len)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? normal_mr(e, pd, 256, mr_flags) : NULL;
    if (!mr)
        return SETUP_FAILED;
    UINT32 token = mr->Dispatch->NdkGetRemoteTokenFromMr(mr) ^ key_xor;
    return observe(e, rdma_post(e, qp, write, tgt_va(e) + off, token, len, 0));
}

/* ------------------------------------------------------------------------- */
/* Rows: registration                                                         */

static NTSTATUS init_call(struct env *e, NDK_MR *mr, ULONG pages)
{
    struct consumer_call k = {0, 0, NULL};
    if (!mr)
        return SETUP_FAILED;
    return request(e, &k, mr->Dispatch->NdkInitializeFastRegisterMr(mr, pages, TRUE, consumer_call_done, &k));
}

static NTSTATUS r_init_normal_mr(struct env *e)
{
    return init_call(e, mr_new(e, e->pd, 0), 1);
}

static NTSTATUS r_init_above_limit(struct env *e)
{
    return init_call(e, mr_new(e, e->pd, 1), e->info.FRMRPageCount + 1);
}

static NTSTATUS r_init_zero_pages(struct env *e)
{
    return init_call(e, mr_new(e, e->pd, 1), 0);
}

static NTSTATUS r_init_parallel(struct env *e)
{
    NDK_MR *mr = mr_new(e, e->pd, 1);
    if (!mr)
        return SETUP_FAILED;
    struct consumer_call k1 = {0, 0, NULL}, k2 = {0, 0, NULL};
    NTSTATUS s1 = mr->Dispatch->NdkInitializeFastRegisterMr(mr, 2, TRUE, consumer_call_done, &k1);
    NTSTATUS s2 = mr->Dispatch->NdkInitializeFastRegisterMr(mr, 1, FALSE, consumer_call_done, &k2);
    s1 = request(e, &k1, s1);
    s2 = request(e, &k2, s2);
    return s1 != STATUS_SUCCESS ? s1 : s2;
}

static NTSTATUS register_call(struct env *e, NDK_MR *mr, MDL *mdl, SIZE_T len, ULONG flags)
{
    struct consumer_call k = {0, 0, NULL};
    if (!mr)
        return SETUP_FAILED;
    return request(e, &k, mr->Dispatch->NdkRegisterMr(mr, mdl, len, flags, consumer_call_done, &k));
}

static NTSTATUS r_register_fast_mr(struct env *e)
{
    return register_call(e, mr_new(e, e->pd, 1), e->tgt, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
}

static NTSTATUS r_register_unknown_flag(struct env *e)
{
    return register_call(e, mr_new(e, e->pd, 0), e->tgt, PAGE_SIZE, 0x40);
}

static NTSTATUS r_register_remote_write_alone(struct env *e)
{
    /* 0x4: the remote-write bit without the local-write bit 0x1 that 0x5 includes. */
    return register_call(e, mr_new(e, e->pd, 0), e->tgt, PAGE_SIZE,
                         NDK_MR_FLAG_ALLOW_REMOTE_WRITE & ~NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
}

static NTSTATUS r_register_past_mdl(struct env *e)
{
    return register_call(e, mr_new(e, e->pd, 0), e->tgt, 2 * PAGE_SIZE + 1, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
}

static NTSTATUS r_register_zero_va(struct env *e)
{
    MDL zero = *e->tgt;
    zero.StartVa = NULL;
    zero.ProviderContext = NULL;
    return register_call(e, mr_new(e, e->pd, 0), &zero, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
}

static NTSTATUS r_register_gap(struct env *e)
{
    /* Two MDLs of one page each, a page apart in virtual addresses. */
    PFN_NUMBER *pfn = MmGetMdlPfnArray(e->tgt);
    uint8_t *va = MmGetMdlVirtualAddress(e->tgt);
    MDL second = {NULL, va + 2 * PAGE_SIZE, 0, PAGE_SIZE, pfn + 1, NULL};
    MDL first = {&second, va, 0, PAGE_SIZE, pfn, NULL};
    return register_call(e, mr_new(e, e->pd, 0), &first, 2 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
}

/* Host memory: an MDL IoAllocateMdl made that MmBuildMdlForNonPagedPool never filled. */
static NTSTATUS r_register_host_unbuilt(struct env *e)
{
    static uint8_t mem[64];
    MDL *m = IoAllocateMdl(mem, sizeof(mem), FALSE, FALSE, NULL);
    NTSTATUS st = m ? register_call(e, mr_new(e, e->pd, 0), m, sizeof(mem), NDK_MR_FLAG_ALLOW_LOCAL_WRITE)
                    : SETUP_FAILED;
    IoFreeMdl(m);
    return st;
}

/* Host memory followed by adapter memory in one chain: two kinds of MDL. */
static NTSTATUS r_register_host_mixed(struct env *e)
{
    uint8_t *page = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
    MDL *m = page ? IoAllocateMdl(page + PAGE_SIZE - 64, 64, FALSE, FALSE, NULL) : NULL;
    NTSTATUS st = SETUP_FAILED;
    if (m) {
        MmBuildMdlForNonPagedPool(m);
        m->Next = e->tgt;
        st = register_call(e, mr_new(e, e->pd, 0), m, 64 + PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        m->Next = NULL;
    }
    IoFreeMdl(m);
    free(page);
    return st;
}

static NTSTATUS r_register_twice(struct env *e)
{
    NDK_MR *mr = normal_mr(e, e->pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    return register_call(e, mr, e->tgt, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
}

static NTSTATUS r_deregister_fast_mr(struct env *e)
{
    NDK_MR *mr = fast_mr(e, e->pd, 1, TRUE);
    struct consumer_call k = {0, 0, NULL};
    return mr ? request(e, &k, mr->Dispatch->NdkDeregisterMr(mr, consumer_call_done, &k)) : SETUP_FAILED;
}

/* ------------------------------------------------------------------------- */
/* Rows: fast register                                                        */

/* The MR a one-page fast-register rule acts on. */
enum mr_kind { MR_FAST, MR_UNINITIALIZED, MR_NORMAL, MR_REGISTERED };

static NDK_MR *mr_of_kind(struct env *e, NDK_QP *qp, enum mr_kind kind)
{
    switch (kind) {
    case MR_FAST:
        return fast_mr(e, e->pd, 1, TRUE);
    case MR_UNINITIALIZED:
        return mr_new(e, e->pd, 1);
    case MR_NORMAL:
        return normal_mr(e, e->pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    default:
        return fr_done(e, qp, e->pd, 0x10000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    }
}

/* NdkFastRegister of one page at 0x10000 on qp (NULL: its setup failed). */
static NTSTATUS fr_page_rule(struct env *e, NDK_QP *qp, enum mr_kind kind, ULONG flags)
{
    NDK_MR *mr = qp ? mr_of_kind(e, qp, kind) : NULL;
    return mr ? observe(e, fr_post(e, qp, mr, 1, 0, PAGE_SIZE, 0x10000, flags)) : SETUP_FAILED;
}

static NTSTATUS r_fr_unconnected(struct env *e)
{
    return fr_page_rule(e, qp_lone(e), MR_FAST, 0);
}

static NTSTATUS r_fr_uninitialized(struct env *e)
{
    return fr_page_rule(e, qp_up(e), MR_UNINITIALIZED, 0);
}

static NTSTATUS r_fr_normal_mr(struct env *e)
{
    return fr_page_rule(e, qp_up(e), MR_NORMAL, 0);
}

static NTSTATUS r_fr_registered(struct env *e)
{
    return fr_page_rule(e, qp_up(e), MR_REGISTERED, 0);
}

/* A silent request that fails still completes. */
static NTSTATUS r_fr_silent_failure(struct env *e)
{
    return fr_page_rule(e, qp_up(e), MR_REGISTERED, NDK_OP_FLAG_SILENT_SUCCESS);
}

static NTSTATUS r_fr_page_misaligned(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? fast_mr(e, e->pd, 1, TRUE) : NULL;
    if (!mr)
        return SETUP_FAILED;
    NDK_LOGICAL_ADDRESS bad = {.QuadPart = e->page[0].QuadPart + 8};
    return observe(e, qp->Dispatch->NdkFastRegister(qp, e, mr, 1, &bad, 0, 64, (PVOID)(uintptr_t)0x10000, 0));
}

/* A silent fast-register: no result of its own; the invalidate after it tells. */
static NTSTATUS r_fr_silent(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? fast_mr(e, e->pd, 1, TRUE) : NULL;
    if (!mr)
        return SETUP_FAILED;
    NTSTATUS st = fr_post(e, qp, mr, 1, 0, PAGE_SIZE, 0x10000, NDK_OP_FLAG_SILENT_SUCCESS);
    if (st != STATUS_SUCCESS)
        return observe(e, st);
    st = qp->Dispatch->NdkInvalidate(qp, mr, &mr->Header, 0);
    e->by = FIRMWARE;
    NDK_RESULT_EX r = next_result(e, e->cq);
    if (r.RequestContext != mr)
        return setup_failed(e, "a result other than the invalidate's came first", r.Status);
    return st != STATUS_SUCCESS ? st : r.Status;
}

static NTSTATUS r_write_top_bytes(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? fr_done(e, qp, e->pd, TOP_VA, NDK_OP_FLAG_ALLOW_REMOTE_WRITE) : NULL;
    if (!mr)
        return SETUP_FAILED;
    return observe(e, rdma_post(e, qp, 1, TOP_VA + PAGE_SIZE - 8, mr->Dispatch->NdkGetRemoteTokenFromMr(mr), 8, 0));
}

/* ------------------------------------------------------------------------- */
/* Rows: invalidate                                                           */

static NTSTATUS inv_rule(struct env *e, NDK_QP *qp, NDK_MR *mr, ULONG flags)
{
    return mr ? observe(e, qp->Dispatch->NdkInvalidate(qp, e, &mr->Header, flags)) : SETUP_FAILED;
}

static NTSTATUS r_inv_unconnected(struct env *e)
{
    NDK_QP *qp = qp_lone(e);
    return qp ? inv_rule(e, qp, fast_mr(e, e->pd, 1, TRUE), 0) : SETUP_FAILED;
}

static NTSTATUS r_inv_normal_mr(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    return qp ? inv_rule(e, qp, normal_mr(e, e->pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE), 0) : SETUP_FAILED;
}

static NTSTATUS r_inv_twice(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? fr_done(e, qp, e->pd, 0x10000, 0) : NULL;
    if (!mr)
        return SETUP_FAILED;
    NTSTATUS st = inv_rule(e, qp, mr, 0);
    return st == STATUS_SUCCESS ? inv_rule(e, qp, mr, 0) : setup_failed(e, "the first NdkInvalidate", st);
}

static NTSTATUS r_inv_other_pd(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    return qp ? inv_rule(e, qp, fast_mr(e, e->pd2, 1, TRUE), 0) : SETUP_FAILED;
}

static NTSTATUS r_inv_unknown_flag(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    return qp ? inv_rule(e, qp, fast_mr(e, e->pd, 1, TRUE), NDK_OP_FLAG_ALLOW_REMOTE_READ) : SETUP_FAILED;
}

static NTSTATUS r_write_invalidated(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? fr_done(e, qp, e->pd, 0x10000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE) : NULL;
    if (!mr)
        return SETUP_FAILED;
    NTSTATUS st = inv_rule(e, qp, mr, 0);
    if (st != STATUS_SUCCESS)
        return setup_failed(e, "NdkInvalidate", st);
    return observe(e, rdma_post(e, qp, 1, 0x10000, mr->Dispatch->NdkGetRemoteTokenFromMr(mr), 8, 0));
}

/* ------------------------------------------------------------------------- */
/* Rows: remote access, QP and CQ                                             */

static NTSTATUS r_write_bad_key(struct env *e)
{
    return access_rule(e, e->pd, NDK_MR_FLAG_ALLOW_REMOTE_WRITE, 1, 0, 0x55, 16);
}

static NTSTATUS r_write_other_pd(struct env *e)
{
    return access_rule(e, e->pd2, NDK_MR_FLAG_ALLOW_REMOTE_WRITE, 1, 0, 0, 16);
}

static NTSTATUS r_write_read_only(struct env *e)
{
    return access_rule(e, e->pd, NDK_MR_FLAG_ALLOW_REMOTE_READ, 1, 0, 0, 16);
}

static NTSTATUS r_read_write_only(struct env *e)
{
    return access_rule(e, e->pd, NDK_MR_FLAG_ALLOW_REMOTE_WRITE, 0, 0, 0, 16);
}

static NTSTATUS r_write_past_end(struct env *e)
{
    return access_rule(e, e->pd, NDK_MR_FLAG_ALLOW_REMOTE_WRITE, 1, 256 - 8, 0, 16);
}

static NTSTATUS r_read_past_end(struct env *e)
{
    return access_rule(e, e->pd, NDK_MR_FLAG_ALLOW_REMOTE_READ, 0, 256, 0, 1);
}

static NTSTATUS r_write_granted(struct env *e)
{
    return access_rule(e, e->pd, NDK_MR_FLAG_ALLOW_REMOTE_WRITE, 1, 0, 0, 16);
}

static NTSTATUS r_after_error(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    if (!qp)
        return SETUP_FAILED;
    NTSTATUS st = rdma_post(e, qp, 1, tgt_va(e), 0x12345678, 8, 0);
    NDK_RESULT_EX r = next_result(e, e->cq);
    if (st != STATUS_SUCCESS || r.Status == STATUS_SUCCESS)
        return setup_failed(e, "a write through a token that does not exist", st ? st : r.Status);
    st = rdma_post(e, qp, 1, tgt_va(e), 0x12345678, 8, 0);
    return observe(e, st);
}

static NTSTATUS rdma_flag_rule(struct env *e, int write)
{
    NDK_QP *qp = qp_up(e);
    return qp ? observe(e, rdma_post(e, qp, write, tgt_va(e), 0, 8, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT)) : SETUP_FAILED;
}

static NTSTATUS r_write_unknown_flag(struct env *e)
{
    return rdma_flag_rule(e, 1);
}

static NTSTATUS r_read_unknown_flag(struct env *e)
{
    return rdma_flag_rule(e, 0);
}

static NTSTATUS r_write_unconnected(struct env *e)
{
    NDK_QP *qp = qp_lone(e);
    return qp ? observe(e, rdma_post(e, qp, 1, tgt_va(e), 0, 8, 0)) : SETUP_FAILED;
}

static NTSTATUS r_read_unconnected(struct env *e)
{
    NDK_QP *qp = qp_lone(e);
    return qp ? observe(e, rdma_post(e, qp, 0, tgt_va(e), 0, 8, 0)) : SETUP_FAILED;
}

static NTSTATUS r_after_flush(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? fast_mr(e, e->pd, 1, TRUE) : NULL;
    if (!mr)
        return SETUP_FAILED;
    qp->Dispatch->NdkFlush(qp);
    return inv_rule(e, qp, mr, 0);
}

static NTSTATUS r_after_disconnect(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? fast_mr(e, e->pd, 1, TRUE) : NULL;
    if (!mr)
        return SETUP_FAILED;
    struct consumer_call k = {0, 0, NULL};
    NTSTATUS st = consumer_call_wait(&k, e->pr.ca->Dispatch->NdkDisconnect(e->pr.ca, consumer_call_done, &k),
                                     e->s.wait_ms);
    if (st != STATUS_SUCCESS)
        return setup_failed(e, "NdkDisconnect", st);
    st = inv_rule(e, qp, mr, 0);
    consumer_pair_close(&e->pr);
    return st;
}

static NTSTATUS create_cq_call(struct env *e, ULONG depth)
{
    NDK_CQ *cq = NULL;
    struct consumer_call k = {0, 0, NULL};
    NTSTATUS st = e->s.ad->Dispatch->NdkCreateCq(e->s.ad, depth, NULL, NULL, NULL, NULL, NULL, &cq);
    if (cq)
        made(e, &cq->Header);
    return request(e, &k, st);
}

static NTSTATUS r_cq_depth_zero(struct env *e)
{
    return create_cq_call(e, 0);
}

static NTSTATUS r_cq_depth_above_max(struct env *e)
{
    return create_cq_call(e, e->info.MaxCqDepth + 1);
}

static NTSTATUS r_cq_resize(struct env *e)
{
    struct consumer_call k = {0, 0, NULL};
    return request(e, &k, e->cq->Dispatch->NdkResizeCq(e->cq, 8, consumer_call_done, &k));
}

/* NdkCreateQp with a receive queue of rq entries of rq_sge SGEs (0, 0: none), an
 * initiator queue of depth entries of sge SGEs, and inline_size. */
static NTSTATUS create_qp_call(struct env *e, ULONG rq, ULONG rq_sge, ULONG depth, ULONG sge, ULONG inline_size)
{
    NDK_QP *qp = NULL;
    struct consumer_call k = {0, 0, NULL};
    NTSTATUS st = request(e, &k, e->pd->Dispatch->NdkCreateQp(e->pd, e->cq, e->cq, e, rq, depth, rq_sge, sge,
                                                               inline_size, consumer_create_done, &k, &qp));
    if (st == STATUS_SUCCESS && k.obj)
        NdkCloseObject(k.obj, NULL, NULL);
    return st;
}

static NTSTATUS r_qp_depth_above_max(struct env *e)
{
    return create_qp_call(e, 0, 0, e->info.MaxInitiatorQueueDepth + 1, 1, 0);
}

static NTSTATUS r_qp_sge_above_max(struct env *e)
{
    return create_qp_call(e, 0, 0, 4, e->info.MaxInitiatorRequestSge + 1, 0);
}

/* ------------------------------------------------------------------------- */
/* Rows: Send, Receive, SendAndInvalidate                                     */

#define RQ_DEPTH 16

static NTSTATUS r_qp_receive_queue(struct env *e)
{
    return create_qp_call(e, RQ_DEPTH, 2, 4, 1, 0);
}

static NTSTATUS r_qp_receive_depth_above_max(struct env *e)
{
    return create_qp_call(e, e->info.MaxReceiveQueueDepth + 1, 1, 4, 1, 0);
}

static NTSTATUS r_qp_receive_sge_above_max(struct env *e)
{
    return create_qp_call(e, 4, e->info.MaxReceiveRequestSge + 1, 4, 1, 0);
}

static NTSTATUS r_qp_inline_data(struct env *e)
{
    return create_qp_call(e, 0, 0, 4, 1, 1);
}

/* QPs of pd with receive queues (depth 16, 2 SGEs) on a receive CQ of their own,
 * connected when connect (else e->rpr.qa alone); closed after the row. */
static NDK_QP *rq_up(struct env *e, int connect)
{
    NDK_ADAPTER *ad = e->s.ad;
    const char *what = "NdkCreateCq (receive CQ)";
    NTSTATUS st = ad->Dispatch->NdkCreateCq(ad, 64, NULL, NULL, NULL, NULL, NULL, &e->rcq);
    if (st == STATUS_SUCCESS) {
        made(e, &e->rcq->Header);
        what = "NdkCreateQp (receive depth 16, 2 SGEs)";
        st = connect ? consumer_pair_up(&e->s, &e->rpr, e->pd, e->rcq, e->cq, RQ_DEPTH, 2, 16, 1, e, e->src_port++,
                                        &what)
                     : consumer_qp_rq(e->pd, e->rcq, e->cq, RQ_DEPTH, 2, 16, 1, e, &e->rpr.qa);
    }
    if (st != STATUS_SUCCESS) {
        setup_failed(e, what, st);
        consumer_pair_close(&e->rpr);
        return NULL;
    }
    return e->rpr.qa;
}

/* NdkReceive of nsge SGEs of len bytes each, into the local buffer. */
static NTSTATUS recv_post(struct env *e, NDK_QP *qp, ULONG nsge, ULONG len)
{
    NDK_SGE sge[3];
    for (ULONG i = 0; i < nsge && i < 3; i++)
        sge[i] = consumer_sge(e->src, e->src_mr, i * len, len);
    return qp->Dispatch->NdkReceive(qp, e, sge, nsge);
}

/* NdkSend (NdkSendAndInvalidate of token when inv) of len bytes of the local buffer. */
static NTSTATUS send_post(struct env *e, NDK_QP *qp, ULONG len, ULONG flags, int inv, UINT32 token)
{
    NDK_SGE sge = consumer_sge(e->src, e->src_mr, 0, len);
    return inv ? qp->Dispatch->NdkSendAndInvalidate(qp, e, &sge, 1, flags, token)
               : qp->Dispatch->NdkSend(qp, e, &sge, 1, flags);
}

static NTSTATUS r_receive_sge_above_qp(struct env *e)
{
    NDK_QP *qp = rq_up(e, 1);
    return qp ? observe_on(e, e->rcq, recv_post(e, qp, 3, 8)) : SETUP_FAILED;
}

static NTSTATUS r_receive_queue_full(struct env *e)
{
    NDK_QP *qp = rq_up(e, 1);
    NTSTATUS st = qp ? STATUS_SUCCESS : SETUP_FAILED;
    for (int i = 0; i < RQ_DEPTH && st == STATUS_SUCCESS; i++)
        st = recv_post(e, qp, 1, 16);
    if (st != STATUS_SUCCESS)
        return qp ? setup_failed(e, "16 receives", st) : SETUP_FAILED;
    return observe_on(e, e->rcq, recv_post(e, qp, 1, 16));
}

static NTSTATUS r_receive_unconnected_flush(struct env *e)
{
    NDK_QP *qp = rq_up(e, 0);
    NTSTATUS st = qp ? recv_post(e, qp, 1, 16) : SETUP_FAILED;
    if (st == STATUS_SUCCESS)
        qp->Dispatch->NdkFlush(qp);
    return qp ? observe_on(e, e->rcq, st) : SETUP_FAILED;
}

static NTSTATUS r_send_unconnected(struct env *e)
{
    NDK_QP *qp = qp_lone(e);
    return qp ? observe(e, send_post(e, qp, 8, 0, 0, 0)) : SETUP_FAILED;
}

static NTSTATUS r_send_inline(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    return qp ? observe(e, send_post(e, qp, 8, NDK_OP_FLAG_INLINE, 0, 0)) : SETUP_FAILED;
}

static NTSTATUS r_send_no_receive(struct env *e)
{
    NDK_QP *qp = rq_up(e, 1);
    return qp ? observe(e, send_post(e, qp, 8, 0, 0, 0)) : SETUP_FAILED;
}

/* A Send of 32 bytes into a receive of 16: the status of the Send (receive: of the
 * receive). */
static NTSTATUS too_large(struct env *e, int receive)
{
    NDK_QP *qp = rq_up(e, 1);
    NTSTATUS st = qp ? recv_post(e, e->rpr.qb, 1, 16) : SETUP_FAILED;
    if (st != STATUS_SUCCESS)
        return qp ? setup_failed(e, "NdkReceive", st) : SETUP_FAILED;
    st = observe(e, send_post(e, qp, 32, 0, 0, 0));
    return receive ? observe_on(e, e->rcq, STATUS_SUCCESS) : st;
}

static NTSTATUS r_send_too_large(struct env *e)
{
    return too_large(e, 0);
}

static NTSTATUS r_receive_too_small(struct env *e)
{
    return too_large(e, 1);
}

/* A fast-register MR of pd2 registered (remote write) on a connected pair of pd2. */
static NDK_MR *fr_other_pd(struct env *e)
{
    struct consumer_pair p;
    memset(&p, 0, sizeof(p));
    const char *what;
    NTSTATUS st = consumer_pair_up(&e->s, &p, e->pd2, e->cq, e->cq, 0, 0, 4, 1, e, e->src_port++, &what);
    NDK_MR *mr = st == STATUS_SUCCESS ? fr_done(e, p.qa, e->pd2, 0x10000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE) : NULL;
    if (st != STATUS_SUCCESS)
        setup_failed(e, what, st);
    consumer_pair_close(&p);
    return mr;
}

/* side B (rpr.qb) SendAndInvalidates the token of mr (XOR key_xor) to side A, which
 * posted a receive; the status of the Send. */
static NTSTATUS send_inv_token(struct env *e, UINT32 token)
{
    if (!e->rpr.qa)
        return SETUP_FAILED;
    NTSTATUS st = recv_post(e, e->rpr.qa, 1, 16);
    if (st != STATUS_SUCCESS)
        return setup_failed(e, "NdkReceive", st);
    return observe(e, send_post(e, e->rpr.qb, 8, 0, 1, token));
}

static NTSTATUS send_inv(struct env *e, NDK_MR *mr, UINT32 key_xor)
{
    return mr ? send_inv_token(e, mr->Dispatch->NdkGetRemoteTokenFromMr(mr) ^ key_xor) : SETUP_FAILED;
}

static NTSTATUS r_send_inv_bad_key(struct env *e)
{
    NDK_QP *qp = rq_up(e, 1);
    return send_inv(e, qp ? fr_done(e, qp, e->pd, 0x10000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE) : NULL, 0x55);
}

static NTSTATUS r_send_inv_other_pd(struct env *e)
{
    NDK_QP *qp = rq_up(e, 1);
    return send_inv(e, qp ? fr_other_pd(e) : NULL, 0);
}

static NTSTATUS r_send_inv_registered_mr(struct env *e)
{
    NDK_QP *qp = rq_up(e, 1);
    return send_inv(e, qp ? normal_mr(e, e->pd, 256, NDK_MR_FLAG_ALLOW_REMOTE_WRITE) : NULL, 0);
}

static NTSTATUS r_write_after_send_inv(struct env *e)
{
    NDK_QP *qp = rq_up(e, 1);
    NDK_MR *mr = qp ? fr_done(e, qp, e->pd, 0x10000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE) : NULL;
    NTSTATUS st = send_inv(e, mr, 0);
    if (st == STATUS_SUCCESS)
        st = observe_on(e, e->rcq, STATUS_SUCCESS);
    if (st != STATUS_SUCCESS)
        return st == SETUP_FAILED ? st : setup_failed(e, "SendAndInvalidate of a valid token", st);
    return observe(e, rdma_post(e, e->rpr.qb, 1, 0x10000, mr->Dispatch->NdkGetRemoteTokenFromMr(mr), 8, 0));
}

/* Two completions for a CQ of depth 1: the CQ's notification says BUFFER_OVERFLOW. */
static NTSTATUS r_cq_overflow(struct env *e)
{
    NTSTATUS st = e->s.ad->Dispatch->NdkCreateCq(e->s.ad, 1, consumer_call_done, &e->onotify, NULL, NULL, NULL,
                                                 &e->ocq);
    if (st != STATUS_SUCCESS)
        return setup_failed(e, "NdkCreateCq", st);
    const char *what;
    st = consumer_pair_up(&e->s, &e->opr, e->pd, e->ocq, e->ocq, 0, 0, 4, 1, e, e->src_port++, &what);
    NDK_MR *mr = st == STATUS_SUCCESS ? fast_mr(e, e->pd, 1, TRUE) : NULL;
    if (!mr)
        return st == STATUS_SUCCESS ? SETUP_FAILED : setup_failed(e, what, st);
    NDK_QP *qp = e->opr.qa;
    st = fr_post(e, qp, mr, 1, 0, PAGE_SIZE, 0x10000, 0);
    if (st == STATUS_SUCCESS)
        st = qp->Dispatch->NdkInvalidate(qp, e, &mr->Header, 0);
    if (st != STATUS_SUCCESS)
        return setup_failed(e, "posting two requests", st);
    e->by = HOST; /* the library counts what the CQ holds */
    return consumer_call_wait(&e->onotify, STATUS_PENDING, e->s.wait_ms);
}

static NTSTATUS r_cq_overflow_qp(struct env *e)
{
    if (!e->opr.qa)
        return setup_failed(e, "the overflowed CQ's QP", STATUS_INVALID_DEVICE_STATE);
    NDK_MR *mr = fast_mr(e, e->pd, 1, TRUE);
    return mr ? observe(e, e->opr.qa->Dispatch->NdkInvalidate(e->opr.qa, e, &mr->Header, 0)) : SETUP_FAILED;
}

/* ------------------------------------------------------------------------- */
/* The table                                                                  */

/* ------------------------------------------------------------------------- */
/* Rows: memory windows (NdkCreateMw, NdkBind, NdkInvalidate of a window)     */

#define MW_OFF 64 /* the windows of these rows: [MW_OFF, 2 * MW_OFF) of a 256-byte MR */

static NDK_MW *mw_new(struct env *e, NDK_PD *pd)
{
    NDK_MW *mw = NULL;
    NTSTATUS st = pd->Dispatch->NdkCreateMw(pd, NULL, NULL, &mw);
    if (st != STATUS_SUCCESS) {
        setup_failed(e, "NdkCreateMw", st);
        return NULL;
    }
    made(e, &mw->Header);
    return mw;
}

/* NdkInvalidate of mw on qp: its status. */
static NTSTATUS inv_mw(struct env *e, NDK_QP *qp, NDK_MW *mw)
{
    return mw && qp ? observe(e, qp->Dispatch->NdkInvalidate(qp, e, &mw->Header, 0)) : SETUP_FAILED;
}

static UINT32 mw_token(NDK_MW *mw)
{
    return mw->Dispatch->NdkGetRemoteTokenFromMw(mw);
}

/* NdkBind of mw over [va, va + len) of mr on qp; its status. */
static NTSTATUS bind_on(struct env *e, NDK_QP *qp, NDK_MR *mr, NDK_MW *mw, UINT64 va, SIZE_T len, ULONG flags)
{
    if (!qp || !mr || !mw)
        return SETUP_FAILED;
    return observe(e, qp->Dispatch->NdkBind(qp, e, mr, mw, (PVOID)(uintptr_t)va, len, flags));
}

/* A bind on the connected QP of a new window of mw_pd to a new MR of mr_pd over 256
 * bytes of the target (registered with mr_flags), at offset off. */
static NTSTATUS bind_rule(struct env *e, NDK_PD *mr_pd, NDK_PD *mw_pd, ULONG mr_flags, int64_t off, SIZE_T len,
                          ULONG flags)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? normal_mr(e, mr_pd, 256, mr_flags) : NULL;
    NDK_MW *mw = mr ? mw_new(e, mw_pd) : NULL;
    return bind_on(e, qp, mr, mw, tgt_va(e) + (UINT64)off, len, flags);
}

/* A window bound on the connected QP over [MW_OFF, 2 * MW_OFF) of an MR over 256 bytes
 * of the target that allows remote read and write (*mr when asked). */
static NDK_MW *window_up(struct env *e, ULONG flags, NDK_MR **mr_out)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? normal_mr(e, e->pd, 256, NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ) : NULL;
    NDK_MW *mw = mr ? mw_new(e, e->pd) : NULL;
    NTSTATUS st = bind_on(e, qp, mr, mw, tgt_va(e) + MW_OFF, MW_OFF, flags);
    if (mw && st != STATUS_SUCCESS)
        setup_failed(e, "NdkBind", st);
    if (mr_out)
        *mr_out = mr;
    return st == STATUS_SUCCESS ? mw : NULL;
}

/* RDMA Write (or Read) of len bytes at offset off of the target through mw. */
static NTSTATUS mw_access(struct env *e, NDK_MW *mw, int write, UINT64 off, ULONG len)
{
    NDK_QP *qp = mw ? qp_up(e) : NULL;
    return qp ? observe(e, rdma_post(e, qp, write, tgt_va(e) + off, mw_token(mw), len, 0)) : SETUP_FAILED;
}

static NTSTATUS r_mw_create(struct env *e)
{
    struct consumer_call k = {0, 0, NULL};
    NDK_MW *mw = NULL;
    NTSTATUS st = request(e, &k, e->pd->Dispatch->NdkCreateMw(e->pd, consumer_create_done, &k, &mw));
    if (k.obj)
        made(e, k.obj);
    return st;
}

static NTSTATUS r_bind_unconnected(struct env *e)
{
    NDK_QP *qp = qp_lone(e);
    NDK_MR *mr = qp ? normal_mr(e, e->pd, 256, NDK_MR_FLAG_ALLOW_REMOTE_READ) : NULL;
    return bind_on(e, qp, mr, mr ? mw_new(e, e->pd) : NULL, tgt_va(e), 16, REMOTE_R);
}

static NTSTATUS r_bind_unknown_flag(struct env *e)
{
    return bind_rule(e, e->pd, e->pd, NDK_MR_FLAG_ALLOW_REMOTE_READ, 0, 16, NDK_OP_FLAG_INLINE);
}

static NTSTATUS r_bind_mr_as_window(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? normal_mr(e, e->pd, 256, NDK_MR_FLAG_ALLOW_REMOTE_READ) : NULL;
    return bind_on(e, qp, mr, (NDK_MW *)(void *)mr, tgt_va(e), 16, REMOTE_R);
}

static NTSTATUS r_bind_other_pd_mr(struct env *e)
{
    return bind_rule(e, e->pd2, e->pd, NDK_MR_FLAG_ALLOW_REMOTE_READ, 0, 16, REMOTE_R);
}

static NTSTATUS r_bind_other_pd_window(struct env *e)
{
    return bind_rule(e, e->pd, e->pd2, NDK_MR_FLAG_ALLOW_REMOTE_READ, 0, 16, REMOTE_R);
}

static NTSTATUS r_bind_mr_not_registered(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? fast_mr(e, e->pd, 1, TRUE) : NULL;
    return bind_on(e, qp, mr, mr ? mw_new(e, e->pd) : NULL, 0x10000, 16, REMOTE_R);
}

static NTSTATUS r_bind_mr_invalidated(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? fr_done(e, qp, e->pd, 0x10000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE) : NULL;
    NTSTATUS st = mr ? inv_rule(e, qp, mr, 0) : SETUP_FAILED;
    if (st != STATUS_SUCCESS)
        return st == SETUP_FAILED ? st : setup_failed(e, "NdkInvalidate", st);
    return bind_on(e, qp, mr, mw_new(e, e->pd), 0x10000, 16, REMOTE_R);
}

static NTSTATUS r_bind_length_zero(struct env *e)
{
    return bind_rule(e, e->pd, e->pd, NDK_MR_FLAG_ALLOW_REMOTE_READ, 0, 0, REMOTE_R);
}

static NTSTATUS r_bind_past_mr(struct env *e)
{
    return bind_rule(e, e->pd, e->pd, NDK_MR_FLAG_ALLOW_REMOTE_READ, 248, 16, REMOTE_R);
}

static NTSTATUS r_bind_below_mr(struct env *e)
{
    return bind_rule(e, e->pd, e->pd, NDK_MR_FLAG_ALLOW_REMOTE_READ, -8, 16, REMOTE_R);
}

static NTSTATUS r_bind_no_local_write(struct env *e)
{
    return bind_rule(e, e->pd, e->pd, NDK_MR_FLAG_ALLOW_REMOTE_READ, 0, 16, REMOTE_W);
}

static NTSTATUS r_bind_granted(struct env *e)
{
    return bind_rule(e, e->pd, e->pd, NDK_MR_FLAG_ALLOW_REMOTE_WRITE, 0, 256, REMOTE_R | REMOTE_W);
}

static NTSTATUS r_bind_fast_mr(struct env *e)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? fr_done(e, qp, e->pd, 0x10000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE) : NULL;
    return bind_on(e, qp, mr, mr ? mw_new(e, e->pd) : NULL, 0x10000 + MW_OFF, MW_OFF, REMOTE_W);
}

static NTSTATUS r_bind_again(struct env *e)
{
    NDK_MR *mr = NULL;
    NDK_MW *mw = window_up(e, REMOTE_W, &mr);
    return mw ? bind_on(e, qp_up(e), mr, mw, tgt_va(e), MW_OFF, REMOTE_R) : SETUP_FAILED;
}

static NTSTATUS r_mw_write_granted(struct env *e)
{
    return mw_access(e, window_up(e, REMOTE_W, NULL), 1, MW_OFF, MW_OFF);
}

static NTSTATUS r_mw_write_below(struct env *e)
{
    return mw_access(e, window_up(e, REMOTE_W, NULL), 1, 0, 16);
}

static NTSTATUS r_mw_write_above(struct env *e)
{
    return mw_access(e, window_up(e, REMOTE_W, NULL), 1, 2 * MW_OFF, 1);
}

static NTSTATUS r_mw_write_straddling(struct env *e)
{
    return mw_access(e, window_up(e, REMOTE_W, NULL), 1, 2 * MW_OFF - 8, 16);
}

static NTSTATUS r_mw_write_read_only(struct env *e)
{
    return mw_access(e, window_up(e, REMOTE_R, NULL), 1, MW_OFF, 8);
}

static NTSTATUS r_mw_read_write_only(struct env *e)
{
    return mw_access(e, window_up(e, REMOTE_W, NULL), 0, MW_OFF, 8);
}

static NTSTATUS r_mw_read_after_rebind(struct env *e)
{
    NDK_MR *mr = NULL;
    NDK_MW *mw = window_up(e, REMOTE_R, &mr);
    NTSTATUS st = mw ? bind_on(e, qp_up(e), mr, mw, tgt_va(e) + 2 * MW_OFF, MW_OFF, REMOTE_R) : SETUP_FAILED;
    if (st != STATUS_SUCCESS)
        return st == SETUP_FAILED ? st : setup_failed(e, "NdkBind again", st);
    return mw_access(e, mw, 0, MW_OFF, 8);
}

/* A window bound, then invalidated on the connected QP (NULL: the setup failed). */
static NDK_MW *window_invalidated(struct env *e, NDK_MR **mr)
{
    NDK_MW *mw = window_up(e, REMOTE_W, mr);
    NTSTATUS st = inv_mw(e, mw ? qp_up(e) : NULL, mw);
    if (mw && st != STATUS_SUCCESS)
        setup_failed(e, "NdkInvalidate of the window", st);
    return st == STATUS_SUCCESS ? mw : NULL;
}

static NTSTATUS r_mw_inv(struct env *e)
{
    NDK_MW *mw = window_up(e, REMOTE_W, NULL);
    return inv_mw(e, mw ? qp_up(e) : NULL, mw);
}

static NTSTATUS r_mw_inv_unconnected(struct env *e)
{
    NDK_QP *qp = qp_lone(e);
    return qp ? inv_mw(e, qp, mw_new(e, e->pd)) : SETUP_FAILED;
}

static NTSTATUS r_mw_inv_twice(struct env *e)
{
    NDK_MW *mw = window_invalidated(e, NULL);
    return inv_mw(e, mw ? qp_up(e) : NULL, mw);
}

static NTSTATUS r_mw_write_invalidated(struct env *e)
{
    return mw_access(e, window_invalidated(e, NULL), 1, MW_OFF, 8);
}

static NTSTATUS r_mw_mr_after_inv(struct env *e)
{
    NDK_MR *mr = NULL;
    NDK_MW *mw = window_invalidated(e, &mr);
    NDK_QP *qp = mw ? qp_up(e) : NULL;
    return qp ? observe(e, rdma_post(e, qp, 1, tgt_va(e) + MW_OFF, mr->Dispatch->NdkGetRemoteTokenFromMr(mr), 8, 0))
              : SETUP_FAILED;
}

/* A window bound over a fast-registered MR at 0x10000, the MR then invalidated (and
 * fast-registered again when again); a write through the window. */
static NTSTATUS mw_fast_parent(struct env *e, int again)
{
    NDK_QP *qp = qp_up(e);
    NDK_MR *mr = qp ? fr_done(e, qp, e->pd, 0x10000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE) : NULL;
    NDK_MW *mw = mr ? mw_new(e, e->pd) : NULL;
    NTSTATUS st = bind_on(e, qp, mr, mw, 0x10000, MW_OFF, REMOTE_W);
    if (st == STATUS_SUCCESS)
        st = inv_rule(e, qp, mr, 0);
    if (st == STATUS_SUCCESS && again)
        st = observe(e, fr_post(e, qp, mr, 1, 0, PAGE_SIZE, 0x10000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    if (st != STATUS_SUCCESS)
        return st == SETUP_FAILED ? st : setup_failed(e, "bind, invalidate the MR, register it again", st);
    return observe(e, rdma_post(e, qp, 1, 0x10000, mw_token(mw), 8, 0));
}

static NTSTATUS r_mw_parent_invalidated(struct env *e)
{
    return mw_fast_parent(e, 0);
}

static NTSTATUS r_mw_parent_registered_again(struct env *e)
{
    return mw_fast_parent(e, 1);
}

static NTSTATUS r_mw_parent_deregistered(struct env *e)
{
    NDK_MR *mr = NULL;
    NDK_MW *mw = window_up(e, REMOTE_W, &mr);
    NTSTATUS st = mw ? mr->Dispatch->NdkDeregisterMr(mr, NULL, NULL) : SETUP_FAILED;
    if (st != STATUS_SUCCESS)
        return st == SETUP_FAILED ? st : setup_failed(e, "NdkDeregisterMr", st);
    return mw_access(e, mw, 1, MW_OFF, 8);
}

static NTSTATUS r_mw_write_closed(struct env *e)
{
    NDK_MW *mw = window_up(e, REMOTE_W, NULL);
    NDK_QP *qp = mw ? qp_up(e) : NULL;
    if (!qp)
        return SETUP_FAILED;
    UINT32 token = mw_token(mw);
    e->nmade--; /* the window, the last object made, is closed here */
    NdkCloseObject(&mw->Header, NULL, NULL);
    return observe(e, rdma_post(e, qp, 1, tgt_va(e) + MW_OFF, token, 8, 0));
}

static NTSTATUS r_mw_send_inv(struct env *e)
{
    NDK_QP *qp = rq_up(e, 1);
    NDK_MR *mr = qp ? normal_mr(e, e->pd, 256, NDK_MR_FLAG_ALLOW_REMOTE_WRITE) : NULL;
    NDK_MW *mw = mr ? mw_new(e, e->pd) : NULL;
    NTSTATUS st = bind_on(e, qp, mr, mw, tgt_va(e) + MW_OFF, MW_OFF, REMOTE_W);
    if (st == STATUS_SUCCESS)
        st = send_inv_token(e, mw_token(mw));
    if (st == STATUS_SUCCESS)
        st = observe_on(e, e->rcq, STATUS_SUCCESS);
    if (st != STATUS_SUCCESS)
        return st == SETUP_FAILED ? st : setup_failed(e, "bind, SendAndInvalidate naming the window", st);
    return observe(e, rdma_post(e, e->rpr.qb, 1, tgt_va(e) + MW_OFF, mw_token(mw), 8, 0));
}

/* A second listener on the address and port the session's listener holds (any
 * address, e->s.port). */
static NTSTATUS r_listen_in_use(struct env *e)
{
    NDK_LISTENER *l = NULL;
    NTSTATUS st = e->s.ad->Dispatch->NdkCreateListener(e->s.ad, consumer_connect_event, NULL, NULL, NULL, &l);
    if (st != STATUS_SUCCESS)
        return setup_failed(e, "NdkCreateListener", st);
    made(e, &l->Header);
    struct sockaddr_in any = loopback_addr(e->s.port);
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    struct consumer_call k = {0, 0, NULL};
    return request(e, &k, l->Dispatch->NdkListen(l, (PSOCKADDR)&any, sizeof(any), consumer_call_done, &k));
}

struct rule {
    const char *name;
    const char *fact; /* the NDK rule (docs/ndk.md, section above) or this provider's documented choice */
    NTSTATUS (*run)(struct env *e); /* sets up and makes the call; the status observed */
    NTSTATUS want;
    enum decider by;
    const struct fr_args *fr; /* a fast-register rule given by its arguments (run NULL) */
};

static const struct rule rules[] = {
    /* NdkInitializeFastRegisterMr, NdkRegisterMr, NdkDeregisterMr: docs/ndk.md#ndkinitializefastregistermr,
     * docs/ndk.md#ndkregistermr, docs/ndk.md#ndkderegistermr */
    {"init-fast-normal-mr",
     "NdkInitializeFastRegisterMr: MR must have been created with FastRegister=TRUE",
     r_init_normal_mr, STATUS_INVALID_DEVICE_STATE, HOST, NULL},
    {"init-fast-above-limit",
     "AdapterPageCount above what the adapter supports -> STATUS_IMPLEMENTATION_LIMIT",
     r_init_above_limit, STATUS_IMPLEMENTATION_LIMIT, HOST, NULL},
    {"init-fast-zero-pages",
     "AdapterPageCount 0 (ndkpi.h: INVALID_PARAMETER)",
     r_init_zero_pages, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"init-fast-parallel",
     "May be called repeatedly, in parallel",
     r_init_parallel, STATUS_SUCCESS, FIRMWARE, NULL},
    {"register-fast-mr",
     "NdkRegisterMr: only on an MR created with FastRegister=FALSE",
     r_register_fast_mr, STATUS_INVALID_DEVICE_STATE, HOST, NULL},
    {"register-mdl-gap",
     "an MDL range that is not virtually contiguous -> STATUS_INVALID_PARAMETER",
     r_register_gap, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"register-host-unbuilt",
     "an MDL over host memory before MmBuildMdlForNonPagedPool describes no pages (this provider: INVALID_PARAMETER)",
     r_register_host_unbuilt, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"register-host-mixed",
     "an MDL chain of host memory and adapter memory (this provider: INVALID_PARAMETER)",
     r_register_host_mixed, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"register-zero-va",
     "Zero-based virtual addresses are not supported",
     r_register_zero_va, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"register-remote-write-alone",
     "Remote write implies local write (the flag values say so)",
     r_register_remote_write_alone, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"register-unknown-flag",
     "known flags: NDK_MR_FLAG_* only (KNOWN_FLAGS.MR_REGISTER)",
     r_register_unknown_flag, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"register-past-mdl",
     "Length past the MDL (ndkpi.h: INVALID_PARAMETER)",
     r_register_past_mdl, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"register-twice",
     "an MR already registered (ndkpi.h: INVALID_DEVICE_STATE)",
     r_register_twice, STATUS_INVALID_DEVICE_STATE, HOST, NULL},
    {"deregister-fast-mr",
     "a fast-register MR is invalidated, not deregistered (ndkpi.h: INVALID_DEVICE_STATE)",
     r_deregister_fast_mr, STATUS_INVALID_DEVICE_STATE, HOST, NULL},
    /* NdkFastRegister: docs/ndk.md#ndkfastregister */
    {"fr-remote-write-no-access",
     "MR not initialized with RemoteAccess but remote read or write requested -> STATUS_ACCESS_VIOLATION",
     NULL, STATUS_ACCESS_VIOLATION, HOST, &(const FR){0, 0, 1, 0, PAGE_SIZE, 0x10000, REMOTE_W}},
    {"fr-pages-above-init",
     "AdapterPageCount must not exceed the count the MR was initialized with",
     NULL, STATUS_INVALID_PARAMETER, HOST, &(const FR){0, 1, 3, 0, PAGE_SIZE, 0x10000, 0}},
    {"fr-remote-read-no-access",
     "MR not initialized with RemoteAccess but remote read or write requested -> STATUS_ACCESS_VIOLATION",
     NULL, STATUS_ACCESS_VIOLATION, HOST, &(const FR){0, 0, 1, 0, PAGE_SIZE, 0x10000, REMOTE_R}},
    {"fr-length-past-pages",
     "Length <= AdapterPageCount x PAGE_SIZE - FBO",
     NULL, STATUS_INVALID_PARAMETER, HOST, &(const FR){0, 1, 2, 100, 2 * PAGE_SIZE - 100 + 1, 0x10000 + 100, 0}},
    {"fr-va-zero",
     "R2: BaseVirtualAddress 0 with FBO 0 is valid (0 only when FBO is 0)",
     NULL, STATUS_SUCCESS, FIRMWARE, &(const FR){0, 1, 1, 0, PAGE_SIZE, 0, REMOTE_W}},
    {"fr-va-not-fbo",
     "BaseVirtualAddress = FBO + n x PAGE_SIZE (n >= 0)",
     NULL, STATUS_INVALID_PARAMETER, HOST, &(const FR){0, 1, 1, 100, 64, 0x10000 + 101, 0}},
    {"fr-other-pd",
     "R1: an MR of another PD than the QP's -> STATUS_ACCESS_VIOLATION",
     NULL, STATUS_ACCESS_VIOLATION, FIRMWARE, &(const FR){1, 1, 1, 0, PAGE_SIZE, 0x10000, REMOTE_W}},
    {"fr-va-zero-fbo",
     "R2: BaseVirtualAddress 0 with FBO not 0 -> STATUS_INVALID_PARAMETER",
     NULL, STATUS_INVALID_PARAMETER, HOST, &(const FR){0, 1, 1, 100, 64, 0, 0}},
    {"fr-unknown-flag",
     "R4: a flag NdkFastRegister does not know (INLINE) -> STATUS_INVALID_PARAMETER",
     NULL, STATUS_INVALID_PARAMETER, HOST, &(const FR){0, 1, 1, 0, PAGE_SIZE, 0x10000, NDK_OP_FLAG_INLINE}},
    {"fr-read-sink",
     "RDMA_READ_SINK must be accepted when the adapter sets RDMA_READ_SINK_NOT_REQUIRED",
     NULL, STATUS_SUCCESS, FIRMWARE, &(const FR){0, 1, 2, 100, PAGE_SIZE, HIGH_VA + 100, REMOTE_W | READ_SINK}},
    {"fr-top-page",
     "R5: a range ending on the last byte of the 64-bit space is valid",
     NULL, STATUS_SUCCESS, FIRMWARE, &(const FR){0, 1, 1, 0, PAGE_SIZE, TOP_VA, REMOTE_W}},
    {"fr-wraps",
     "R5: a range that wraps (va + length - 1 < va) -> STATUS_INVALID_PARAMETER",
     NULL, STATUS_INVALID_PARAMETER, HOST, &(const FR){0, 1, 2, 0, 2 * PAGE_SIZE, TOP_VA, REMOTE_W}},
    {"fr-unconnected",
     "Fast register: QP not connected -> STATUS_CONNECTION_INVALID",
     r_fr_unconnected, STATUS_CONNECTION_INVALID, HOST, NULL},
    {"fr-page-misaligned",
     "Each page address is PAGE_SIZE aligned",
     r_fr_page_misaligned, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"fr-uninitialized",
     "a fast-register MR not initialized (ndkpi.h: INVALID_DEVICE_STATE)",
     r_fr_uninitialized, STATUS_INVALID_DEVICE_STATE, HOST, NULL},
    {"fr-normal-mr",
     "a normal MR (ndkpi.h: INVALID_DEVICE_STATE)",
     r_fr_normal_mr, STATUS_INVALID_DEVICE_STATE, HOST, NULL},
    {"fr-registered",
     "an MR fast-registered already: invalidate first (INVALID_DEVICE_STATE)",
     r_fr_registered, STATUS_INVALID_DEVICE_STATE, FIRMWARE, NULL},
    {"fr-silent",
     "NDK_OP_FLAG_SILENT_SUCCESS: no completion on success",
     r_fr_silent, STATUS_SUCCESS, FIRMWARE, NULL},
    {"fr-silent-failure",
     "NDK_OP_FLAG_SILENT_SUCCESS: failures still complete",
     r_fr_silent_failure, STATUS_INVALID_DEVICE_STATE, FIRMWARE, NULL},
    {"write-top-bytes",
     "R5: the engine grants an RDMA Write of the last 8 bytes of the 64-bit space",
     r_write_top_bytes, STATUS_SUCCESS, FIRMWARE, NULL},
    /* NdkInvalidate: docs/ndk.md#ndkinvalidate */
    {"inv-unconnected",
     "Invalidate: QP not connected -> STATUS_CONNECTION_INVALID",
     r_inv_unconnected, STATUS_CONNECTION_INVALID, HOST, NULL},
    {"inv-normal-mr",
     "never for an MR registered with NdkRegisterMr",
     r_inv_normal_mr, STATUS_INVALID_DEVICE_STATE, HOST, NULL},
    {"inv-twice",
     "Invalidating an already-invalidated token fails",
     r_inv_twice, STATUS_INVALID_DEVICE_STATE, FIRMWARE, NULL},
    {"inv-other-pd",
     "R3: NdkInvalidate of an MR of another PD -> STATUS_ACCESS_VIOLATION",
     r_inv_other_pd, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"inv-unknown-flag",
     "R4: a flag NdkInvalidate does not know (ALLOW_REMOTE_READ) -> STATUS_INVALID_PARAMETER",
     r_inv_unknown_flag, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"write-invalidated",
     "After it completes, every access through the MR's tokens must fail",
     r_write_invalidated, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    /* RDMA Read/Write: docs/ndk.md#ndkread-and-ndkwrite, docs/ndk.md#remote-access-failures */
    {"write-granted",
     "an RDMA Write the token grants succeeds",
     r_write_granted, STATUS_SUCCESS, FIRMWARE, NULL},
    {"write-bad-key",
     "remote access through a token that is invalid -> STATUS_ACCESS_VIOLATION",
     r_write_bad_key, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"write-other-pd",
     "remote access through a token of another PD -> STATUS_ACCESS_VIOLATION",
     r_write_other_pd, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"write-read-only",
     "remote access lacking the access right (write, read-only) -> STATUS_ACCESS_VIOLATION",
     r_write_read_only, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"read-write-only",
     "remote access lacking the access right (read, write-only) -> STATUS_ACCESS_VIOLATION",
     r_read_write_only, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"write-past-end",
     "remote access out of bounds (write crossing the end) -> STATUS_ACCESS_VIOLATION",
     r_write_past_end, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"read-past-end",
     "reading past the end of remote memory -> STATUS_ACCESS_VIOLATION (as NetworkDirect's tests)",
     r_read_past_end, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"after-error",
     "Any error completion breaks the connection: later requests complete with STATUS_CANCELLED",
     r_after_error, STATUS_CANCELLED, FIRMWARE, NULL},
    {"write-unknown-flag",
     "R4: a flag NdkWrite does not know (SEND_AND_SOLICIT_EVENT) -> STATUS_INVALID_PARAMETER",
     r_write_unknown_flag, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"read-unknown-flag",
     "R4: a flag NdkRead does not know (SEND_AND_SOLICIT_EVENT) -> STATUS_INVALID_PARAMETER",
     r_read_unknown_flag, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"write-unconnected",
     "NdkWrite on a QP not connected (ndkpi.h: CONNECTION_INVALID)",
     r_write_unconnected, STATUS_CONNECTION_INVALID, HOST, NULL},
    {"read-unconnected",
     "NdkRead on a QP not connected (ndkpi.h: CONNECTION_INVALID)",
     r_read_unconnected, STATUS_CONNECTION_INVALID, HOST, NULL},
    /* QP and CQ: docs/ndk.md#ndkflush, #ndkdisconnect, #ndkcreatecq, #ndkcreateqp, #cq-errors */
    {"after-flush",
     "NdkFlush: requests posted after it complete with STATUS_CANCELLED",
     r_after_flush, STATUS_CANCELLED, FIRMWARE, NULL},
    {"after-disconnect",
     "a work request after NdkDisconnect -> STATUS_CONNECTION_INVALID",
     r_after_disconnect, STATUS_CONNECTION_INVALID, HOST, NULL},
    {"cq-depth-zero",
     "NdkCreateCq of depth 0 (ndkpi.h: INVALID_PARAMETER)",
     r_cq_depth_zero, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"cq-depth-above-max",
     "NdkCreateCq above MaxCqDepth (ndkpi.h: INVALID_PARAMETER)",
     r_cq_depth_above_max, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"cq-resize",
     "NdkResizeCq: CQ_RESIZE_SUPPORTED is not set (NOT_SUPPORTED)",
     r_cq_resize, STATUS_NOT_SUPPORTED, HOST, NULL},
    {"qp-depth-above-max",
     "NdkCreateQp above MaxInitiatorQueueDepth (ndkpi.h: INVALID_PARAMETER)",
     r_qp_depth_above_max, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"qp-sge-above-max",
     "NdkCreateQp above MaxInitiatorRequestSge (ndkpi.h: INVALID_PARAMETER)",
     r_qp_sge_above_max, STATUS_INVALID_PARAMETER, HOST, NULL},
    /* Send, Receive, SendAndInvalidate: docs/ndk.md#ndksend, #ndkreceive, #ndksendandinvalidate */
    {"qp-receive-queue",
     "NdkCreateQp: ReceiveQueueDepth up to MaxReceiveQueueDepth, MaxReceiveRequestSge up to the adapter's -> SUCCESS",
     r_qp_receive_queue, STATUS_SUCCESS, FIRMWARE, NULL},
    {"qp-receive-depth-above-max",
     "NdkCreateQp above MaxReceiveQueueDepth (ndkpi.h: INVALID_PARAMETER)",
     r_qp_receive_depth_above_max, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"qp-receive-sge-above-max",
     "NdkCreateQp above MaxReceiveRequestSge (ndkpi.h: INVALID_PARAMETER)",
     r_qp_receive_sge_above_max, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"qp-inline-data",
     "NdkCreateQp with InlineDataSize above MaxInlineDataSize (0) -> INVALID_PARAMETER",
     r_qp_inline_data, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"receive-sge-above-qp",
     "NdkReceive with more SGEs than the QP's MaxReceiveRequestSge -> INVALID_PARAMETER",
     r_receive_sge_above_qp, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"receive-queue-full",
     "NdkReceive beyond ReceiveQueueDepth pending receives -> INSUFFICIENT_RESOURCES (as a full initiator queue)",
     r_receive_queue_full, STATUS_INSUFFICIENT_RESOURCES, HOST, NULL},
    {"receive-unconnected-flush",
     "a receive may be posted before connecting; NdkFlush completes every pending receive with STATUS_CANCELLED",
     r_receive_unconnected_flush, STATUS_CANCELLED, FIRMWARE, NULL},
    {"send-unconnected",
     "NdkSend on a QP not connected -> CONNECTION_INVALID",
     r_send_unconnected, STATUS_CONNECTION_INVALID, HOST, NULL},
    {"send-inline",
     "R4: NdkSend with INLINE (MaxInlineDataSize 0: a flag it does not know) -> INVALID_PARAMETER",
     r_send_inline, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"send-no-receive",
     "a Send with no receive posted at the peer (receiver not ready, retry limit 0) -> STATUS_IO_TIMEOUT",
     r_send_no_receive, STATUS_IO_TIMEOUT, FIRMWARE, NULL},
    {"send-too-large",
     "a Send larger than the peer's receive: the Send completes STATUS_CONNECTION_ABORTED",
     r_send_too_large, STATUS_CONNECTION_ABORTED, FIRMWARE, NULL},
    {"receive-too-small",
     "a Send larger than the peer's receive: the receive completes STATUS_BUFFER_TOO_SMALL, nothing written",
     r_receive_too_small, STATUS_BUFFER_TOO_SMALL, FIRMWARE, NULL},
    {"send-inv-bad-key",
     "SendAndInvalidate naming an invalid token: the receiving provider aborts the connection (CONNECTION_ABORTED)",
     r_send_inv_bad_key, STATUS_CONNECTION_ABORTED, FIRMWARE, NULL},
    {"send-inv-other-pd",
     "SendAndInvalidate naming a valid token of another PD than the receiver's -> CONNECTION_ABORTED",
     r_send_inv_other_pd, STATUS_CONNECTION_ABORTED, FIRMWARE, NULL},
    {"send-inv-registered-mr",
     "SendAndInvalidate naming an NdkRegisterMr token (only fast-register MRs are invalidated) -> CONNECTION_ABORTED",
     r_send_inv_registered_mr, STATUS_CONNECTION_ABORTED, FIRMWARE, NULL},
    {"write-after-send-inv",
     "SendAndInvalidate: the peer's adapter invalidated RemoteToken; a write through it -> ACCESS_VIOLATION",
     r_write_after_send_inv, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"cq-overflow",
     "STATUS_BUFFER_OVERFLOW when more completions were queued than the CQ holds",
     r_cq_overflow, STATUS_BUFFER_OVERFLOW, HOST, NULL},
    {"cq-overflow-qp",
     "the CQ is then unusable, so are all QPs associated with it (CANCELLED inline)",
     r_cq_overflow_qp, STATUS_CANCELLED, HOST, NULL},
    /* Memory windows: docs/ndk.md#ndkcreatemw, #ndkbind, #ndkinvalidate */
    {"mw-create",
     "NdkCreateMw: a window of the PD (MW_CREATE)",
     r_mw_create, STATUS_SUCCESS, FIRMWARE, NULL},
    {"bind-unconnected",
     "NdkBind: QP not connected -> STATUS_CONNECTION_INVALID",
     r_bind_unconnected, STATUS_CONNECTION_INVALID, HOST, NULL},
    {"bind-unknown-flag",
     "R4: a flag NdkBind does not know (INLINE) -> STATUS_INVALID_PARAMETER",
     r_bind_unknown_flag, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"bind-mr-as-window",
     "NdkBind: the window is not a window (an MR) -> STATUS_INVALID_PARAMETER",
     r_bind_mr_as_window, STATUS_INVALID_PARAMETER, HOST, NULL},
    {"bind-other-pd-mr",
     "NdkBind: an MR of another PD than the QP's -> STATUS_ACCESS_VIOLATION",
     r_bind_other_pd_mr, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"bind-other-pd-window",
     "NdkBind: a window of another PD than the QP's -> STATUS_ACCESS_VIOLATION",
     r_bind_other_pd_window, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"bind-mr-not-registered",
     "NdkBind: a fast-register MR not registered -> STATUS_INVALID_DEVICE_STATE",
     r_bind_mr_not_registered, STATUS_INVALID_DEVICE_STATE, FIRMWARE, NULL},
    {"bind-mr-invalidated",
     "NdkBind: an invalidated MR -> STATUS_INVALID_DEVICE_STATE",
     r_bind_mr_invalidated, STATUS_INVALID_DEVICE_STATE, FIRMWARE, NULL},
    {"bind-length-zero",
     "NdkBind: Length 0 -> STATUS_INVALID_PARAMETER",
     r_bind_length_zero, STATUS_INVALID_PARAMETER, FIRMWARE, NULL},
    {"bind-past-mr",
     "NdkBind: a range ending past the MR's registered range -> STATUS_INVALID_PARAMETER",
     r_bind_past_mr, STATUS_INVALID_PARAMETER, FIRMWARE, NULL},
    {"bind-below-mr",
     "NdkBind: a range starting below the MR's registered range -> STATUS_INVALID_PARAMETER",
     r_bind_below_mr, STATUS_INVALID_PARAMETER, FIRMWARE, NULL},
    {"bind-no-local-write",
     "remote write through a window needs an MR registered with NDK_MR_FLAG_ALLOW_LOCAL_WRITE -> STATUS_ACCESS_VIOLATION",
     r_bind_no_local_write, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"bind-granted",
     "NdkBind inside the MR's registered range, rights the MR allows",
     r_bind_granted, STATUS_SUCCESS, FIRMWARE, NULL},
    {"bind-fast-mr",
     "NdkBind inside a fast-registered MR",
     r_bind_fast_mr, STATUS_SUCCESS, FIRMWARE, NULL},
    {"bind-again",
     "NdkBind of a bound window: the new binding replaces the old",
     r_bind_again, STATUS_SUCCESS, FIRMWARE, NULL},
    {"mw-write-granted",
     "an RDMA Write inside the window, which allows remote write",
     r_mw_write_granted, STATUS_SUCCESS, FIRMWARE, NULL},
    {"mw-write-below",
     "an RDMA Write below the window (inside its MR) -> STATUS_ACCESS_VIOLATION",
     r_mw_write_below, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"mw-write-above",
     "an RDMA Write of 1 byte just past the window (inside its MR) -> STATUS_ACCESS_VIOLATION",
     r_mw_write_above, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"mw-write-straddling",
     "an RDMA Write straddling the window's end -> STATUS_ACCESS_VIOLATION",
     r_mw_write_straddling, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"mw-write-read-only",
     "an RDMA Write through a read-only window of a writable MR -> STATUS_ACCESS_VIOLATION",
     r_mw_write_read_only, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"mw-read-write-only",
     "an RDMA Read through a write-only window of a readable MR -> STATUS_ACCESS_VIOLATION",
     r_mw_read_write_only, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"mw-read-after-rebind",
     "an RDMA Read of the old range of a window bound elsewhere -> STATUS_ACCESS_VIOLATION",
     r_mw_read_after_rebind, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"mw-inv",
     "NdkInvalidate accepts an MW as well as a fast-register MR",
     r_mw_inv, STATUS_SUCCESS, FIRMWARE, NULL},
    {"mw-inv-unconnected",
     "NdkInvalidate of a window: QP not connected -> STATUS_CONNECTION_INVALID",
     r_mw_inv_unconnected, STATUS_CONNECTION_INVALID, HOST, NULL},
    {"mw-inv-twice",
     "NdkInvalidate of an invalid window fails (INVALID_DEVICE_STATE)",
     r_mw_inv_twice, STATUS_INVALID_DEVICE_STATE, FIRMWARE, NULL},
    {"mw-write-invalidated",
     "after NdkInvalidate of a window, access through it fails",
     r_mw_write_invalidated, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"mw-mr-after-inv",
     "invalidating a window leaves its MR untouched (the MR's token still grants)",
     r_mw_mr_after_inv, STATUS_SUCCESS, FIRMWARE, NULL},
    {"mw-parent-invalidated",
     "the window of an invalidated MR refuses",
     r_mw_parent_invalidated, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"mw-parent-registered-again",
     "the window of an MR invalidated and fast-registered again still refuses",
     r_mw_parent_registered_again, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"mw-parent-deregistered",
     "the window of a deregistered MR refuses",
     r_mw_parent_deregistered, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"mw-write-closed",
     "the token of a closed (bound) window refuses",
     r_mw_write_closed, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    {"mw-send-inv",
     "SendAndInvalidate naming a bound window: the peer's adapter invalidated it; a write through it -> ACCESS_VIOLATION",
     r_mw_send_inv, STATUS_ACCESS_VIOLATION, FIRMWARE, NULL},
    /* Connections: docs/ndk.md#ndklisten */
    {"listen-in-use",
     "NdkListen statuses: SHARING_VIOLATION (address and port in use)",
     r_listen_in_use, STATUS_SHARING_VIOLATION, HOST, NULL},
};
#define NRULES (sizeof(rules) / sizeof(rules[0]))

/* ------------------------------------------------------------------------- */
/* One device                                                                 */

static int env_open(struct env *e, const char *dev, uint16_t port)
{
    memset(e, 0, sizeof(*e));
    e->s.wait_ms = strncmp(dev, "sim", 3) == 0 ? 60000 : 10000;
    e->src_port = 21000;
    NTSTATUS st = NdkFpgaOpenAdapter(dev, &e->s.ad);
    if (!tap_ok(st == STATUS_SUCCESS, "%s: open the adapter (%s)", dev, NdkFpgaStatusName(st)))
        return 0;
    ULONG size = sizeof(e->info);
    NDK_ADAPTER *ad = e->s.ad;
    st = ad->Dispatch->NdkQueryAdapterInfo(ad, &e->info, &size);
    if (st == STATUS_SUCCESS)
        st = ad->Dispatch->NdkCreateCq(ad, 64, NULL, NULL, NULL, NULL, NULL, &e->cq);
    if (st == STATUS_SUCCESS)
        st = ad->Dispatch->NdkCreatePd(ad, NULL, NULL, &e->pd);
    if (st == STATUS_SUCCESS)
        st = ad->Dispatch->NdkCreatePd(ad, NULL, NULL, &e->pd2);
    if (st == STATUS_SUCCESS)
        st = consumer_listen(&e->s, port);
    if (st == STATUS_SUCCESS)
        st = NdkFpgaAllocateScatteredBuffer(ad, 2 * PAGE_SIZE, &e->tgt);
    if (st == STATUS_SUCCESS)
        st = NdkFpgaAllocateBuffer(ad, 64, &e->src);
    if (st == STATUS_SUCCESS)
        st = e->pd->Dispatch->NdkCreateMr(e->pd, FALSE, NULL, NULL, &e->src_mr);
    if (st == STATUS_SUCCESS)
        st = e->src_mr->Dispatch->NdkRegisterMr(e->src_mr, e->src, 64, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NULL, NULL);
    if (!tap_ok(st == STATUS_SUCCESS, "%s: CQ, PDs, listener, buffers (%s)", dev, NdkFpgaStatusName(st)))
        return 0;
    for (int i = 0; i < 2; i++)
        e->page[i].QuadPart = (LONGLONG)MmGetMdlPfnArray(e->tgt)[i] << PAGE_SHIFT;
    return 1;
}

/* Run every row on dev; got[i] = the status rule i observed. */
static void run_device(const char *dev, uint16_t port, NTSTATUS *got)
{
    struct env e;
    for (size_t i = 0; i < NRULES; i++)
        got[i] = SETUP_FAILED;
    printf("# rule table on \"%s\"\n", dev);
    uint64_t t0 = consumer_now_ms();
    if (!env_open(&e, dev, port)) {
        NdkFpgaCloseAdapter(e.s.ad);
        return;
    }
    for (size_t i = 0; i < NRULES; i++) {
        const struct rule *r = &rules[i];
        e.why[0] = 0;
        e.by = 0;
        got[i] = r->run ? r->run(&e) : fr_rule(&e, r->fr);
        consumer_pair_close(&e.rpr); /* before its receive CQ, which close_made closes */
        close_made(&e);
        if (got[i] == SETUP_FAILED) {
            tap_ok(0, "%s %s: setup failed (%s) [%s]", dev, r->name, e.why, r->fact);
            continue;
        }
        const char *by = e.by == HOST ? "host library" : "firmware";
        if (got[i] == r->want && e.by == (int)r->by)
            tap_ok(1, "%s %s: %s by the %s", dev, r->name, NdkFpgaStatusName(got[i]), by);
        else
            tap_ok(0, "%s %s: %s by the %s, expected %s by the %s [%s]", dev, r->name, NdkFpgaStatusName(got[i]), by,
                   NdkFpgaStatusName(r->want), r->by == HOST ? "host library" : "firmware", r->fact);
    }
    NdkFpgaCloseAdapter(e.s.ad);
    printf("# %s: %zu rules in %llu ms\n", dev, NRULES, (unsigned long long)(consumer_now_ms() - t0));
}

int main(int argc, char **argv)
{
    const char *def[] = {"model"};
    const char **devs = argc > 1 ? (const char **)(argv + 1) : def;
    int ndev = argc > 1 ? argc - 1 : 1;
    NTSTATUS *got = calloc((size_t)ndev * NRULES, sizeof(*got));
    if (!got)
        return 1;
    for (int d = 0; d < ndev; d++)
        run_device(devs[d], (uint16_t)(4793 + d), got + (size_t)d * NRULES);
    for (int d = 1; d < ndev; d++) {
        int same = 1;
        for (size_t i = 0; i < NRULES; i++) {
            if (got[i] != got[(size_t)d * NRULES + i]) {
                printf("# %s: %s on %s, %s on %s\n", rules[i].name, NdkFpgaStatusName(got[i]), devs[0],
                       NdkFpgaStatusName(got[(size_t)d * NRULES + i]), devs[d]);
                same = 0;
            }
        }
        tap_ok(same, "%s and %s give the same status for each of the %zu rules", devs[0], devs[d], NRULES);
    }
    free(got);
    return tap_done();
}
