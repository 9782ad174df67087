/* SPDX-License-Identifier: Apache-2.0 */
/* What every stress case needs: an adapter of its own (and its process, to freeze
 * or kill), objects created and closed with bounded waits, connected QP pairs in
 * loopback, buffers, and a log of every completion of a CQ. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consumer.h"
#include "stress.h"

int st_cb_violations;

/* ------------------------------------------------------------------------- */
/* Asynchronous calls                                                         */

struct st_op *op_new(void)
{
    struct st_op *o = calloc(1, sizeof(*o));
    if (!o)
        st_bail("out of memory");
    pthread_mutex_init(&o->m, NULL);
    pthread_cond_init(&o->c, NULL);
    return o;
}

static void op_complete(struct st_op *o, NTSTATUS st, NDK_OBJECT_HEADER *obj)
{
    pthread_mutex_lock(&o->m);
    if (o->calls++)
        __atomic_add_fetch(&st_cb_violations, 1, __ATOMIC_SEQ_CST);
    o->st = st;
    o->obj = obj;
    o->done = 1;
    pthread_cond_broadcast(&o->c);
    pthread_mutex_unlock(&o->m);
}

VOID op_req_cb(PVOID ctx, NTSTATUS st)
{
    if (ctx)
        op_complete(ctx, st, NULL);
}

VOID op_create_cb(PVOID ctx, NTSTATUS st, NDK_OBJECT_HEADER *obj)
{
    if (ctx)
        op_complete(ctx, st, obj);
}

VOID op_close_cb(PVOID ctx)
{
    if (ctx)
        op_complete(ctx, STATUS_SUCCESS, NULL);
}

NTSTATUS op_wait(struct st_op *o, NTSTATUS st, int ms, NDK_OBJECT_HEADER **obj)
{
    if (obj)
        *obj = NULL;
    if (st != STATUS_PENDING) {
        /* Finished inline: no callback may follow. The waiter stays allocated, so a
         * callback that runs anyway is counted, not a write into freed memory. */
        pthread_mutex_lock(&o->m);
        if (o->calls)
            __atomic_add_fetch(&st_cb_violations, 1, __ATOMIC_SEQ_CST);
        o->calls++; /* any later callback counts as a second one */
        pthread_mutex_unlock(&o->m);
        return st;
    }
    struct timespec ts;
    deadline_in(&ts, ms);
    pthread_mutex_lock(&o->m);
    while (!o->done && pthread_cond_timedwait(&o->c, &o->m, &ts) == 0)
        ;
    int done = o->done;
    NTSTATUS out = done ? o->st : ST_NO_COMPLETION;
    if (obj && done)
        *obj = o->obj;
    pthread_mutex_unlock(&o->m);
    if (done) {
        pthread_mutex_destroy(&o->m);
        pthread_cond_destroy(&o->c);
        free(o);
    }
    return out;
}

int op_done(struct st_op *o)
{
    pthread_mutex_lock(&o->m);
    int d = o->done;
    pthread_mutex_unlock(&o->m);
    return d;
}

/* ------------------------------------------------------------------------- */
/* Completion log                                                             */

void log_init(struct cqlog *l)
{
    memset(l, 0, sizeof(*l));
    pthread_mutex_init(&l->m, NULL);
    pthread_cond_init(&l->c, NULL);
    l->rearm_type = NDK_CQ_NOTIFY_ANY;
}

void log_free(struct cqlog *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static void drain_locked(struct cqlog *l)
{
    if (!l->cq)
        return;
    NDK_RESULT_EX r[64];
    ULONG got;
    while ((got = l->cq->Dispatch->NdkGetCqResultsEx(l->cq, r, 64)) > 0) {
        if (l->n + got > l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 1024;
            while (cap < l->n + got)
                cap *= 2;
            NDK_RESULT_EX *v = realloc(l->v, cap * sizeof(*v));
            if (!v)
                st_bail("out of memory");
            l->v = v;
            l->cap = cap;
        }
        memcpy(l->v + l->n, r, got * sizeof(*r));
        l->n += got;
    }
}

void log_drain(struct cqlog *l)
{
    pthread_mutex_lock(&l->m);
    drain_locked(l);
    pthread_cond_broadcast(&l->c);
    pthread_mutex_unlock(&l->m);
}

VOID log_notify_cb(PVOID ctx, NTSTATUS st)
{
    struct cqlog *l = ctx;
    pthread_mutex_lock(&l->m);
    l->notifies++;
    l->last_notify = st;
    if (st == STATUS_BUFFER_OVERFLOW)
        l->overflows++;
    else if (st != STATUS_SUCCESS)
        l->other_notify++;
    if (l->drain_in_callback && st == STATUS_SUCCESS && l->cq) {
        drain_locked(l);
        l->cq->Dispatch->NdkArmCq(l->cq, (ULONG)l->rearm_type);
    }
    pthread_cond_broadcast(&l->c);
    pthread_mutex_unlock(&l->m);
}

static size_t count_locked(const struct cqlog *l, const void *qpctx)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].QPContext == qpctx)
            k++;
    return k;
}

size_t log_count(struct cqlog *l, const void *qpctx)
{
    pthread_mutex_lock(&l->m);
    size_t k = count_locked(l, qpctx);
    pthread_mutex_unlock(&l->m);
    return k;
}

int log_wait(struct cqlog *l, const void *qpctx, size_t n, int ms, const char *what)
{
    st_doing("waiting up to %d ms for %zu completion(s) of %s", ms, n, what);
    uint64_t end = st_now_ms() + (uint64_t)ms;
    pthread_mutex_lock(&l->m);
    for (;;) {
        drain_locked(l);
        if (count_locked(l, qpctx) >= n)
            break;
        if (st_now_ms() >= end) {
            pthread_mutex_unlock(&l->m);
            return 0;
        }
        struct timespec ts;
        deadline_in(&ts, 1);
        pthread_cond_timedwait(&l->c, &l->m, &ts);
    }
    pthread_mutex_unlock(&l->m);
    return 1;
}

size_t log_results(struct cqlog *l, const void *qpctx, NDK_RESULT_EX *out, size_t max)
{
    pthread_mutex_lock(&l->m);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].QPContext != qpctx)
            continue;
        if (k < max)
            out[k] = l->v[i];
        k++;
    }
    pthread_mutex_unlock(&l->m);
    return k;
}

size_t log_foreign(struct cqlog *l, void *const *qpctxs, size_t n)
{
    pthread_mutex_lock(&l->m);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        int known = 0;
        for (size_t j = 0; j < n; j++)
            known |= l->v[i].QPContext == qpctxs[j];
        k += !known;
    }
    pthread_mutex_unlock(&l->m);
    return k;
}

int seq_exact(struct cqlog *l, const void *qpctx, const struct posted *p, size_t n, char *why, size_t whylen)
{
    pthread_mutex_lock(&l->m);
    size_t k = 0;
    int ok = 1;
    why[0] = 0;
    for (size_t i = 0; i < l->n && ok; i++) {
        const NDK_RESULT_EX *r = &l->v[i];
        if (r->QPContext != qpctx)
            continue;
        if (k >= n) {
            snprintf(why, whylen, "result %zu is one too many (ctx %p, %s): %zu posted", k, r->RequestContext,
                     st_name(r->Status), n);
            ok = 0;
        } else if (r->RequestContext != p[k].ctx || (int)r->Type != p[k].type) {
            /* Find where this context really belongs, to tell a duplicate from a reorder. */
            long at = -1;
            for (size_t j = 0; j < n; j++)
                if (p[j].ctx == r->RequestContext)
                    at = (long)j;
            const char *hint = "";
            if (at < 0)
                hint = ": never posted, or refused inline";
            else if ((size_t)at < k)
                hint = ": a duplicate or out of order";
            else
                hint = ": the ones before it are missing";
            snprintf(why, whylen,
                     "result %zu is ctx %p type %d (%s), expected ctx %p type %d (that context is request %ld%s)", k,
                     r->RequestContext, (int)r->Type, st_name(r->Status), p[k].ctx, p[k].type, at, hint);
            ok = 0;
        }
        k++;
    }
    if (ok && k < n) {
        snprintf(why, whylen, "%zu of %zu requests completed; the first missing is ctx %p", k, n, p[k].ctx);
        ok = 0;
    }
    pthread_mutex_unlock(&l->m);
    return ok;
}

int st_wait_nonzero(pthread_mutex_t *m, const int *v, int ms)
{
    uint64_t end = st_now_ms() + (uint64_t)ms;
    pthread_mutex_lock(m);
    while (*v == 0 && st_now_ms() < end) {
        pthread_mutex_unlock(m);
        st_sleep_ms(1);
        pthread_mutex_lock(m);
    }
    int got = *v;
    pthread_mutex_unlock(m);
    return got;
}

int st_is_link_status(NTSTATUS st)
{
    return st == STATUS_CONNECTION_RESET || st == STATUS_IO_TIMEOUT || st == STATUS_CONNECTION_ABORTED ||
           st == STATUS_CANCELLED;
}

/* ------------------------------------------------------------------------- */
/* Adapter                                                                    */

static VOID on_connect_event(PVOID ctx, NDK_CONNECTOR *c)
{
    struct stx *x = ctx;
    pthread_mutex_lock(&x->m);
    if (x->nin < (int)(sizeof(x->incoming) / sizeof(x->incoming[0])))
        x->incoming[x->nin++] = c;
    pthread_cond_broadcast(&x->c);
    pthread_mutex_unlock(&x->m);
}

static NDK_CONNECTOR *wait_incoming(struct stx *x, int ms)
{
    struct timespec ts;
    deadline_in(&ts, ms);
    pthread_mutex_lock(&x->m);
    while (x->nin == 0 && pthread_cond_timedwait(&x->c, &x->m, &ts) == 0)
        ;
    NDK_CONNECTOR *c = NULL;
    if (x->nin) {
        c = x->incoming[0];
        memmove(x->incoming, x->incoming + 1, (size_t)(x->nin - 1) * sizeof(x->incoming[0]));
        x->nin--;
    }
    pthread_mutex_unlock(&x->m);
    return c;
}

int stx_open(struct stx *x, const char *what)
{
    static uint16_t next_port = 4800;
    memset(x, 0, sizeof(*x));
    pthread_mutex_init(&x->m, NULL);
    pthread_cond_init(&x->c, NULL);
    st_doing("opening the %s adapter (%s)", what, cfg.device);
    NTSTATUS st = NdkFpgaOpenAdapter(cfg.device, &x->ad);
    if (st != STATUS_SUCCESS) {
        st_ok(0, "open the %s adapter \"%s\": %s (%s)", what, cfg.device, st_name(st), NdkFpgaErrorMessage(NULL));
        x->ad = NULL;
        return 0;
    }
    ULONG size = sizeof(x->info);
    st = x->ad->Dispatch->NdkQueryAdapterInfo(x->ad, &x->info, &size);
    if (st == STATUS_SUCCESS)
        st = NdkFpgaQueryAdapterDetails(x->ad, &x->det);
    if (st != STATUS_SUCCESS) {
        st_ok(0, "query the %s adapter: %s", what, st_name(st));
        return 0;
    }
    const char *p = strstr(x->det.Device, "pid ");
    x->pid = p ? (pid_t)atoi(p + 4) : 0;
    st = x->ad->Dispatch->NdkCreatePd(x->ad, NULL, NULL, &x->pd);
    if (st != STATUS_SUCCESS || !x->pd) {
        st_ok(0, "NdkCreatePd on the %s adapter: %s", what, st_name(st));
        return 0;
    }
    st = x->ad->Dispatch->NdkCreateListener(x->ad, on_connect_event, x, NULL, NULL, &x->lis);
    x->port = next_port++;
    struct sockaddr_in any = loopback_addr(x->port);
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    if (st == STATUS_SUCCESS)
        st = x->lis->Dispatch->NdkListen(x->lis, (PSOCKADDR)&any, sizeof(any), NULL, NULL);
    if (st != STATUS_SUCCESS) {
        st_ok(0, "listener on the %s adapter: %s", what, st_name(st));
        return 0;
    }
    return 1;
}

int stx_open_logged(struct stx *x, const char *what, ULONG depth)
{
    if (!stx_open(x, what))
        return 0;
    log_init(&x->log);
    x->cq = st_cq(x, depth, &x->log);
    return x->cq != NULL;
}

static void *close_adapter_main(void *p)
{
    NdkFpgaCloseAdapter(p);
    return NULL;
}

int stx_close(struct stx *x, int budget_ms)
{
    if (!x->ad)
        return 0;
    st_doing("NdkFpgaCloseAdapter (budget %d ms)", budget_ms);
    uint64_t t0 = st_now_ms();
    int done = st_bounded(close_adapter_main, x->ad, budget_ms);
    x->ad = NULL;
    x->pd = NULL;
    x->lis = NULL;
    return done ? (int)(st_now_ms() - t0) : -1;
}

int stx_close_slow(struct stx *x, int budget_ms, int extra_ms)
{
    if (!x->ad)
        return -1;
    st_doing("NdkFpgaCloseAdapter (budget %d ms, then %d ms more)", budget_ms, extra_ms);
    uint64_t t0 = st_now_ms();
    int done = st_bounded(close_adapter_main, x->ad, budget_ms + extra_ms);
    x->ad = NULL;
    x->pd = NULL;
    x->lis = NULL;
    return done ? (int)(st_now_ms() - t0) : -1;
}

int stx_freeze(struct stx *x)
{
    if (x->pid <= 0 || kill(x->pid, SIGSTOP) != 0)
        return 0;
    x->frozen = 1;
    return 1;
}

void stx_thaw(struct stx *x)
{
    if (x->pid > 0 && x->frozen)
        kill(x->pid, SIGCONT);
    x->frozen = 0;
}

int stx_kill(struct stx *x)
{
    if (x->pid <= 0 || kill(x->pid, SIGKILL) != 0)
        return 0;
    x->frozen = 0;
    return 1;
}

/* ------------------------------------------------------------------------- */
/* Objects                                                                    */

NDK_CQ *st_cq(struct stx *x, ULONG depth, struct cqlog *log)
{
    NDK_CQ *cq = NULL;
    NTSTATUS st = x->ad->Dispatch->NdkCreateCq(x->ad, depth, log ? log_notify_cb : NULL, log, NULL, NULL, NULL, &cq);
    if (st != STATUS_SUCCESS || !cq) {
        st_ok(0, "NdkCreateCq of depth %u: %s", (unsigned)depth, st_name(st));
        return NULL;
    }
    if (log)
        log->cq = cq;
    return cq;
}

NDK_QP *st_qp(struct stx *x, NDK_CQ *cq, void *qpctx, ULONG depth, NTSTATUS *st_out)
{
    struct st_op *o = op_new();
    NDK_QP *qp = NULL;
    st_doing("NdkCreateQp of depth %u", (unsigned)depth);
    NTSTATUS st = x->pd->Dispatch->NdkCreateQp(x->pd, cq, cq, qpctx, 0, depth, 0, x->info.MaxInitiatorRequestSge, 0,
                                               op_create_cb, o, &qp);
    NDK_OBJECT_HEADER *obj = NULL;
    st = op_wait(o, st, cfg.wait_ms, &obj);
    if (st_out)
        *st_out = st;
    if (st != STATUS_SUCCESS)
        return NULL;
    return obj ? (NDK_QP *)(void *)obj : qp;
}

NDK_MR *st_mr(struct stx *x, NDK_PD *pd, int fast)
{
    (void)x;
    struct st_op *o = op_new();
    NDK_MR *mr = NULL;
    st_doing("NdkCreateMr (fast %d)", fast);
    NTSTATUS st = pd->Dispatch->NdkCreateMr(pd, fast ? TRUE : FALSE, op_create_cb, o, &mr);
    NDK_OBJECT_HEADER *obj = NULL;
    st = op_wait(o, st, cfg.wait_ms, &obj);
    if (st != STATUS_SUCCESS)
        return NULL;
    return obj ? (NDK_MR *)(void *)obj : mr;
}

NTSTATUS st_init_fast(NDK_MR *mr, ULONG pages, BOOLEAN remote)
{
    struct st_op *o = op_new();
    st_doing("NdkInitializeFastRegisterMr (%u pages)", (unsigned)pages);
    NTSTATUS st = mr->Dispatch->NdkInitializeFastRegisterMr(mr, pages, remote, op_req_cb, o);
    return op_wait(o, st, cfg.wait_ms, NULL);
}

NTSTATUS st_register(NDK_MR *mr, MDL *mdl, SIZE_T len, ULONG flags)
{
    struct st_op *o = op_new();
    st_doing("NdkRegisterMr (%zu bytes)", (size_t)len);
    NTSTATUS st = mr->Dispatch->NdkRegisterMr(mr, mdl, len, flags, op_req_cb, o);
    return op_wait(o, st, cfg.wait_ms, NULL);
}

NTSTATUS st_deregister(NDK_MR *mr)
{
    struct st_op *o = op_new();
    st_doing("NdkDeregisterMr");
    NTSTATUS st = mr->Dispatch->NdkDeregisterMr(mr, op_req_cb, o);
    return op_wait(o, st, cfg.wait_ms, NULL);
}

int st_close(NDK_OBJECT_HEADER *obj, int ms)
{
    if (!obj)
        return 1;
    struct st_op *o = op_new();
    st_doing("closing an object of type %d (up to %d ms)", (int)obj->ObjectType, ms);
    NTSTATUS st = NdkCloseObject(obj, op_close_cb, o);
    if (st != STATUS_SUCCESS && st != STATUS_PENDING) {
        st_ok(0, "NdkCloseObject returned %s (only SUCCESS or PENDING)", st_name(st));
        return 0;
    }
    return op_wait(o, st, ms, NULL) == STATUS_SUCCESS;
}

int st_pair(struct stx *x, NDK_CQ *cq, ULONG depth, void *ctxa, void *ctxb, struct pair *pr)
{
    static uint16_t src_port = 20000;
    memset(pr, 0, sizeof(*pr));
    NTSTATUS st;
    pr->qa = st_qp(x, cq, ctxa, depth, &st);
    if (pr->qa)
        pr->qb = st_qp(x, cq, ctxb, depth, &st);
    if (!pr->qa || !pr->qb) {
        st_note("NdkCreateQp: %s", st_name(st));
        return 0;
    }
    st = x->ad->Dispatch->NdkCreateConnector(x->ad, NULL, NULL, &pr->ca);
    if (st != STATUS_SUCCESS) {
        st_note("NdkCreateConnector: %s", st_name(st));
        return 0;
    }
    struct sockaddr_in src = loopback_addr(src_port++), dst = loopback_addr(x->port);
    if (src_port > 60000)
        src_port = 20000;
    struct st_op *oc = op_new(), *oa = op_new(), *occ = op_new();
    st_doing("NdkConnect");
    NTSTATUS cst = pr->ca->Dispatch->NdkConnect(pr->ca, pr->qa, (PSOCKADDR)&src, sizeof(src),
                                                (PSOCKADDR)&dst, sizeof(dst), 1, 1, NULL, 0, op_req_cb, oc);
    if (cst != STATUS_PENDING) {
        st_note("NdkConnect: %s", st_name(cst));
        return 0;
    }
    st_doing("waiting for the connect event");
    pr->cb = wait_incoming(x, cfg.wait_ms);
    if (!pr->cb) {
        st_note("no connect event within %d ms", cfg.wait_ms);
        return 0;
    }
    st_doing("NdkAccept");
    NTSTATUS ast = pr->cb->Dispatch->NdkAccept(pr->cb, pr->qb, 1, 1, NULL, 0, NULL, NULL, op_req_cb, oa);
    if (ast != STATUS_PENDING) {
        st_note("NdkAccept: %s", st_name(ast));
        return 0;
    }
    st_doing("waiting for NdkConnect to complete");
    cst = op_wait(oc, cst, cfg.wait_ms, NULL);
    if (cst != STATUS_SUCCESS) {
        st_note("NdkConnect completed %s", st_name(cst));
        return 0;
    }
    st_doing("NdkCompleteConnect");
    st = pr->ca->Dispatch->NdkCompleteConnect(pr->ca, NULL, NULL, op_req_cb, occ);
    st = op_wait(occ, st, cfg.wait_ms, NULL);
    ast = op_wait(oa, ast, cfg.wait_ms, NULL);
    if (st != STATUS_SUCCESS || ast != STATUS_SUCCESS) {
        st_note("NdkCompleteConnect / NdkAccept completed %s / %s", st_name(st), st_name(ast));
        return 0;
    }
    return 1;
}

int st_pair_close(struct pair *pr, int ms)
{
    int ok = 1;
    NDK_OBJECT_HEADER *objs[4] = {pr->ca ? &pr->ca->Header : NULL, pr->cb ? &pr->cb->Header : NULL,
                                  pr->qa ? &pr->qa->Header : NULL, pr->qb ? &pr->qb->Header : NULL};
    for (int i = 0; i < 4; i++)
        if (objs[i])
            ok &= st_close(objs[i], ms);
    memset(pr, 0, sizeof(*pr));
    return ok;
}

int st_buf(struct stx *x, struct sbuf *b, size_t len, int scattered, long mr_flags)
{
    memset(b, 0, sizeof(*b));
    b->len = len;
    NTSTATUS st = scattered ? NdkFpgaAllocateScatteredBuffer(x->ad, len, &b->mdl)
                            : NdkFpgaAllocateBuffer(x->ad, len, &b->mdl);
    if (st != STATUS_SUCCESS) {
        st_note("NdkFpgaAllocateBuffer(%zu): %s", len, st_name(st));
        b->mdl = NULL;
        return 0;
    }
    if (mr_flags >= 0) {
        b->mr = st_mr(x, x->pd, 0);
        if (!b->mr)
            return 0;
        st = st_register(b->mr, b->mdl, len, (ULONG)mr_flags);
        if (st != STATUS_SUCCESS) {
            st_note("NdkRegisterMr(%zu): %s", len, st_name(st));
            return 0;
        }
    }
    return 1;
}

void st_buf_free(struct stx *x, struct sbuf *b)
{
    if (b->mr) {
        st_deregister(b->mr);
        st_close(&b->mr->Header, cfg.wait_ms);
    }
    if (b->mdl)
        NdkFpgaFreeBuffer(x->ad, b->mdl);
    memset(b, 0, sizeof(*b));
}

/* ------------------------------------------------------------------------- */
/* Work requests                                                              */

NTSTATUS st_post_fr(NDK_QP *qp, void *ctx, NDK_MR *mr, const struct sbuf *tgt, ULONG npages, ULONG fbo, SIZE_T len,
                    uint64_t va, ULONG flags)
{
    NDK_LOGICAL_ADDRESS pages[16];
    if (npages > 16)
        npages = 16;
    for (ULONG i = 0; i < npages; i++)
        pages[i] = st_page(tgt, i);
    return qp->Dispatch->NdkFastRegister(qp, ctx, mr, npages, pages, fbo, len, (PVOID)(uintptr_t)va, flags);
}

NTSTATUS st_post_inv(NDK_QP *qp, void *ctx, NDK_MR *mr, ULONG flags)
{
    return qp->Dispatch->NdkInvalidate(qp, ctx, &mr->Header, flags);
}

NTSTATUS st_post_write(NDK_QP *qp, void *ctx, const struct sbuf *src, size_t off, ULONG len, uint64_t raddr,
                       UINT32 rtoken, ULONG flags)
{
    NDK_SGE sge = st_sge(src, off, len);
    return qp->Dispatch->NdkWrite(qp, ctx, &sge, 1, raddr, rtoken, flags);
}

NTSTATUS st_post_read(NDK_QP *qp, void *ctx, const struct sbuf *sink, size_t off, ULONG len, uint64_t raddr,
                      UINT32 rtoken, ULONG flags)
{
    NDK_SGE sge = st_sge(sink, off, len);
    return qp->Dispatch->NdkRead(qp, ctx, &sge, 1, raddr, rtoken, flags);
}
