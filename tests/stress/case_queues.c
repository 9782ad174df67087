/* SPDX-License-Identifier: Apache-2.0 */
/* Queue cases: many threads on one CQ, QPs filled to their depth (with and without
 * DEFER), CQ overflow, an error completion breaking its QP, NdkFlush racing a poster. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress.h"

#define CTX(a, b) ((void *)(uintptr_t)(((uint64_t)(a) << 32) | (uint64_t)(b)))

/* Appends to a growing list of posted requests. */
struct plist {
    struct posted *v;
    size_t n, cap;
};

static void plist_add(struct plist *l, void *ctx, int type)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = realloc(l->v, l->cap * sizeof(*l->v));
        if (!l->v)
            st_bail("out of memory");
    }
    l->v[l->n].ctx = ctx;
    l->v[l->n].type = type;
    l->n++;
}

/* ========================================================================= */
/* threads: T threads, each its own QP on one shared CQ, many cycles of
 * fast-register -> RDMA Write -> RDMA Read -> invalidate, data verified each cycle. */

struct worker {
    int id;
    struct stx *x;
    struct cqlog *log;
    struct pair pr;
    NDK_MR *fr;
    struct sbuf src, tgt, back;
    int cycles, done_cycles;
    size_t len;
    struct plist posted;
    char why[320];
    int failed;
};

static void *worker_main(void *p)
{
    struct worker *w = p;
    uint8_t *pat = malloc(w->len), *got = malloc(w->len);
    if (!pat || !got)
        st_bail("out of memory");
    UINT32 tok = st_token(w->fr);
    for (int c = 0; c < w->cycles && !w->failed; c++) {
        st_fill(pat, w->len, (uint32_t)(w->id * 100003 + c));
        NTSTATUS st = NdkFpgaWriteBuffer(w->x->ad, w->src.mdl, 0, pat, w->len);
        if (st != STATUS_SUCCESS) {
            snprintf(w->why, sizeof(w->why), "cycle %d: NdkFpgaWriteBuffer: %s", c, st_name(st));
            w->failed = 1;
            break;
        }
        /* FBO anywhere the length still fits in the 2 pages. */
        ULONG fbo = st_rand_below((uint32_t)(2 * PAGE_SIZE - w->len) + 1);
        if (fbo >= PAGE_SIZE)
            fbo = PAGE_SIZE - 1;
        uint64_t va = 0x100000000ull + (uint64_t)(w->id * 64 + c % 64) * 4 * PAGE_SIZE + fbo;
        ULONG d1 = st_rand_below(2) ? NDK_OP_FLAG_DEFER : 0, d2 = st_rand_below(2) ? NDK_OP_FLAG_DEFER : 0,
              d3 = st_rand_below(2) ? NDK_OP_FLAG_DEFER : 0;
        void *base = CTX(w->id + 1, c * 4);
        const char *what = "NdkFastRegister";
        st = st_post_fr(w->pr.qa, base, w->fr, &w->tgt, 2, fbo, w->len, va,
                        NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ | d1);
        if (st == STATUS_SUCCESS) {
            plist_add(&w->posted, base, NdkOperationTypeFastRegister);
            what = "NdkWrite";
            st = st_post_write(w->pr.qa, (char *)base + 1, &w->src, 0, (ULONG)w->len, va, tok, d2);
        }
        if (st == STATUS_SUCCESS) {
            plist_add(&w->posted, (char *)base + 1, NdkOperationTypeWrite);
            what = "NdkRead";
            st = st_post_read(w->pr.qa, (char *)base + 2, &w->back, 0, (ULONG)w->len, va, tok, d3);
        }
        if (st == STATUS_SUCCESS) {
            plist_add(&w->posted, (char *)base + 2, NdkOperationTypeRead);
            what = "NdkInvalidate";
            st = st_post_inv(w->pr.qa, (char *)base + 3, w->fr, 0);
        }
        if (st != STATUS_SUCCESS) {
            snprintf(w->why, sizeof(w->why), "cycle %d: %s returned %s", c, what, st_name(st));
            w->failed = 1;
            break;
        }
        plist_add(&w->posted, (char *)base + 3, NdkOperationTypeInvalidate);
        char label[64];
        snprintf(label, sizeof(label), "thread %d cycle %d", w->id, c);
        if (!log_wait(w->log, w, w->posted.n, cfg.wait_ms, label)) {
            snprintf(w->why, sizeof(w->why), "cycle %d: %zu of %zu completions within %d ms", c,
                     log_count(w->log, w), w->posted.n, cfg.wait_ms);
            w->failed = 1;
            break;
        }
        NDK_RESULT_EX r[4];
        size_t n = log_results(w->log, w, NULL, 0);
        NDK_RESULT_EX *all = malloc(n * sizeof(*all));
        if (!all)
            st_bail("out of memory");
        log_results(w->log, w, all, n);
        memcpy(r, all + n - 4, sizeof(r));
        free(all);
        for (int k = 0; k < 4; k++) {
            if (r[k].Status != STATUS_SUCCESS || r[k].RequestContext != (char *)base + k) {
                snprintf(w->why, sizeof(w->why), "cycle %d: completion %d: %s ctx %p (expected SUCCESS ctx %p)", c, k,
                         st_name(r[k].Status), r[k].RequestContext, (void *)((char *)base + k));
                w->failed = 1;
            }
        }
        if (w->failed)
            break;
        memset(got, 0, w->len);
        st = NdkFpgaReadBuffer(w->x->ad, w->back.mdl, 0, got, w->len);
        if (st != STATUS_SUCCESS || memcmp(got, pat, w->len)) {
            snprintf(w->why, sizeof(w->why), "cycle %d: the bytes read back through the token differ (%s)", c,
                     st_name(st));
            w->failed = 1;
            break;
        }
        memset(got, 0, w->len);
        st = NdkFpgaReadBuffer(w->x->ad, w->tgt.mdl, fbo, got, w->len);
        if (st != STATUS_SUCCESS || memcmp(got, pat, w->len)) {
            snprintf(w->why, sizeof(w->why), "cycle %d: the target pages do not hold what was written (FBO %u, %s)",
                     c, (unsigned)fbo, st_name(st));
            w->failed = 1;
            break;
        }
        w->done_cycles++;
    }
    free(pat);
    free(got);
    return NULL;
}

void case_threads(void)
{
    struct stx x;
    if (!stx_open_logged(&x, "shared", 4096))
        return;
    const int nthreads = st_n(4, 3, 2), cycles = st_n(150, 25, 3);
    struct worker *w = calloc((size_t)nthreads, sizeof(*w));
    for (int i = 0; i < nthreads; i++) {
        w[i].id = i;
        w[i].x = &x;
        w[i].log = &x.log;
        w[i].cycles = cycles;
        w[i].len = 3000 + (size_t)i * 200;
    }
    int setup = 1;
    for (int i = 0; i < nthreads && setup; i++) {
        /* QPContext: the worker itself. */
        setup &= st_pair(&x, x.cq, 64, &w[i], CTX(0xb, i), &w[i].pr);
        w[i].fr = setup ? st_mr(&x, x.pd, 1) : NULL;
        setup &= w[i].fr && st_init_fast(w[i].fr, 2, TRUE) == STATUS_SUCCESS;
        setup &= st_buf(&x, &w[i].src, w[i].len, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        setup &= st_buf(&x, &w[i].tgt, 2 * PAGE_SIZE, 1, -1);
        setup &= st_buf(&x, &w[i].back, w[i].len, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    }
    if (!st_ok(setup, "%d connected QP pairs on one CQ, a fast MR and buffers each", nthreads))
        return;
    pthread_t *t = calloc((size_t)nthreads, sizeof(*t));
    uint64_t t0 = st_now_ms();
    st_doing("%d threads x %d cycles", nthreads, cycles);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker_main, &w[i]);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    uint64_t ms = st_now_ms() - t0;
    for (int i = 0; i < nthreads; i++)
        st_ok(!w[i].failed && w[i].done_cycles == cycles,
                   "thread %d: %d of %d fast-register/write/read/invalidate cycles, every byte read back and in the "
                   "target%s%s",
                   i, w[i].done_cycles, cycles, w[i].failed ? ": " : "", w[i].why);
    st_note("%d threads x %d cycles = %d work requests in %llu ms", nthreads, cycles, nthreads * cycles * 4,
            (unsigned long long)ms);
    /* Nothing more may arrive: wait a little, then compare the whole log. */
    st_sleep_ms(cfg.sim ? 300 : 30);
    log_drain(&x.log);
    int seq_ok = 1;
    char why[400] = "";
    for (int i = 0; i < nthreads; i++) {
        char w1[320];
        if (!seq_exact(&x.log, &w[i], w[i].posted.v, w[i].posted.n, w1, sizeof(w1))) {
            if (seq_ok)
                snprintf(why, sizeof(why), "thread %d: %s", i, w1);
            seq_ok = 0;
        }
    }
    st_ok(seq_ok, "every completion delivered exactly once, in order per QP, with its QPContext, RequestContext and "
                  "type (%zu on the shared CQ)%s%s",
          x.log.n, seq_ok ? "" : ": ", why);
    void **ctxs = calloc((size_t)nthreads, sizeof(*ctxs));
    for (int i = 0; i < nthreads; i++)
        ctxs[i] = &w[i];
    size_t foreign = log_foreign(&x.log, ctxs, (size_t)nthreads);
    st_ok(foreign == 0, "no completion with an unknown QPContext (%zu)", foreign);
    int closed = 1;
    for (int i = 0; i < nthreads; i++) {
        closed &= st_pair_close(&w[i].pr, cfg.wait_ms);
        closed &= st_close(&w[i].fr->Header, cfg.wait_ms);
        st_buf_free(&x, &w[i].src);
        st_buf_free(&x, &w[i].tgt);
        st_buf_free(&x, &w[i].back);
    }
    closed &= st_close(&x.cq->Header, cfg.wait_ms);
    st_ok(closed, "every QP, MR and the CQ closed");
    x.log.cq = NULL;
    int ms_close = stx_close(&x, 5000);
    st_ok(ms_close >= 0, "NdkFpgaCloseAdapter returned (%d ms)", ms_close);
    st_ok(st_cb_violations == 0, "no completion callback ran twice or after an inline return (%d)", st_cb_violations);
    free(ctxs);
    free(t);
    for (int i = 0; i < nthreads; i++)
        free(w[i].posted.v);
    free(w);
    log_free(&x.log);
}

/* ========================================================================= */
/* deep-queue: a QP filled to its depth without DEFER, with DEFER on all but the
 * last, with DEFER on all; a lone deferred request must still complete soon. */

struct dq {
    struct stx *x;
    struct cqlog *log;
    struct pair pr;
    NDK_MR *fr;
    struct sbuf tgt, src, nrm;
    struct plist posted;
    void *qpctx;
    uint32_t next;
};

/* Request i of the repeating pattern: fast-register, write through its token,
 * invalidate, write through a normal MR's token. Every one succeeds in order. */
static NTSTATUS dq_post(struct dq *d, ULONG flags)
{
    uint32_t i = d->next;
    void *ctx = CTX(0xd0, i + 1);
    const uint64_t va = 0x200000;
    NTSTATUS st;
    int type;
    switch (i % 4) {
    case 0:
        st = st_post_fr(d->pr.qa, ctx, d->fr, &d->tgt, 1, 0, PAGE_SIZE, va, NDK_OP_FLAG_ALLOW_REMOTE_WRITE | flags);
        type = NdkOperationTypeFastRegister;
        break;
    case 1:
        st = st_post_write(d->pr.qa, ctx, &d->src, 0, 16, va + 16 * (i % 200), st_token(d->fr), flags);
        type = NdkOperationTypeWrite;
        break;
    case 2:
        st = st_post_inv(d->pr.qa, ctx, d->fr, flags);
        type = NdkOperationTypeInvalidate;
        break;
    default:
        st = st_post_write(d->pr.qa, ctx, &d->src, 0, 16, (uint64_t)(uintptr_t)st_va(&d->nrm, 16 * (i % 200)),
                           st_token(d->nrm.mr), flags);
        type = NdkOperationTypeWrite;
        break;
    }
    if (st == STATUS_SUCCESS) {
        plist_add(&d->posted, ctx, type);
        d->next++;
    }
    return st;
}

/* A write through the normal MR: valid wherever the pattern stands. */
static NTSTATUS dq_post_neutral(struct dq *d, void *ctx, ULONG flags)
{
    NTSTATUS st = st_post_write(d->pr.qa, ctx, &d->src, 0, 16, (uint64_t)(uintptr_t)st_va(&d->nrm, 3200),
                                st_token(d->nrm.mr), flags);
    if (st == STATUS_SUCCESS)
        plist_add(&d->posted, ctx, NdkOperationTypeWrite);
    return st;
}

static int dq_all_success(struct dq *d, char *why, size_t whylen)
{
    size_t n = log_results(d->log, d->qpctx, NULL, 0);
    NDK_RESULT_EX *r = calloc(n + 1, sizeof(*r));
    log_results(d->log, d->qpctx, r, n);
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++)
        if (r[i].Status != STATUS_SUCCESS) {
            snprintf(why, whylen, "result %zu (ctx %p) is %s", i, r[i].RequestContext, st_name(r[i].Status));
            ok = 0;
        }
    free(r);
    return ok;
}

/* Post depth requests; defer_mode 0: none deferred, 1: all but the last, 2: all. */
static void dq_phase(struct dq *d, ULONG depth, int defer_mode, uint64_t *exec_ms, uint64_t bound_ms)
{
    static const char *const names[] = {"without DEFER", "with DEFER on all but the last", "with DEFER on every one"};
    size_t before = d->posted.n;
    NTSTATUS bad = STATUS_SUCCESS;
    ULONG k;
    st_doing("posting %u requests %s", (unsigned)depth, names[defer_mode]);
    for (k = 0; k < depth; k++) {
        ULONG f = (defer_mode == 2 || (defer_mode == 1 && k + 1 < depth)) ? NDK_OP_FLAG_DEFER : 0;
        bad = dq_post(d, f);
        if (bad != STATUS_SUCCESS)
            break;
    }
    uint64_t t_posted = st_now_ms();
    st_ok(k == depth, "%u requests %s: every post accepted (%u accepted; then %s)", (unsigned)depth, names[defer_mode],
          (unsigned)k, st_name(bad));
    /* One past the depth: refused (queue full) unless some completed meanwhile; a
     * refused post never completes (seq_exact would find its context). */
    if (defer_mode != 2) {
        NTSTATUS st = dq_post_neutral(d, CTX(0xd1, d->posted.n), 0);
        st_ok(st == STATUS_SUCCESS || st == STATUS_INSUFFICIENT_RESOURCES,
              "one request past the depth: SUCCESS or INSUFFICIENT_RESOURCES (%s)", st_name(st));
    }
    size_t want = d->posted.n;
    uint64_t wait = defer_mode == 2 ? (exec_ms ? *exec_ms : 0) + bound_ms : (uint64_t)cfg.wait_ms;
    char label[96];
    snprintf(label, sizeof(label), "a queue filled %s", names[defer_mode]);
    int in_time = log_wait(d->log, d->qpctx, want, (int)wait, label);
    uint64_t took = st_now_ms() - t_posted;
    if (defer_mode == 2) {
        st_ok(in_time, "%u requests all deferred, nothing posted after them: all complete within %llu ms (%zu of %zu "
                       "in time)",
              (unsigned)depth, (unsigned long long)wait, log_count(d->log, d->qpctx) - before, want - before);
        if (!in_time) {
            /* Push them with a request without DEFER, so the case goes on. */
            dq_post_neutral(d, CTX(0xd2, d->posted.n), 0);
            want = d->posted.n;
            log_wait(d->log, d->qpctx, want, cfg.wait_ms, "deferred requests pushed by a later post");
        }
    } else if (exec_ms && defer_mode == 1) {
        *exec_ms = took;
    }
    char why[320] = "";
    int seq = seq_exact(d->log, d->qpctx, d->posted.v, d->posted.n, why, sizeof(why));
    st_ok(seq, "%s: every request completed exactly once, in order, with its context and type (%zu)%s%s",
          names[defer_mode], want - before, seq ? "" : ": ", why);
    int succ = dq_all_success(d, why, sizeof(why));
    st_ok(succ, "%s: every status SUCCESS%s%s", names[defer_mode], succ ? "" : ": ", why);
}

void case_deep_queue(void)
{
    struct stx x;
    if (!stx_open(&x, "deep-queue"))
        return;
    ULONG depth = (ULONG)st_n(1024, 256, 32);
    if (depth > x.info.MaxInitiatorQueueDepth)
        depth = x.info.MaxInitiatorQueueDepth;
    struct cqlog log;
    log_init(&log);
    NDK_CQ *cq = st_cq(&x, 4 * depth + 64, &log);
    struct dq d;
    memset(&d, 0, sizeof(d));
    d.x = &x;
    d.log = &log;
    d.qpctx = &d;
    int setup = cq && st_pair(&x, cq, depth, &d, CTX(0xdb, 0), &d.pr);
    d.fr = setup ? st_mr(&x, x.pd, 1) : NULL;
    setup = setup && d.fr && st_init_fast(d.fr, 1, TRUE) == STATUS_SUCCESS && st_buf(&x, &d.tgt, PAGE_SIZE, 0, -1) &&
            st_buf(&x, &d.src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) &&
            st_buf(&x, &d.nrm, PAGE_SIZE, 0, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    if (!st_ok(setup, "a connected QP of depth %u, a fast MR, buffers", (unsigned)depth))
        return;

    /* Round trip of one request without DEFER (the slowest of a few). */
    uint64_t rtt = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t t0 = st_now_ms();
        if (dq_post_neutral(&d, CTX(0xd3, i), 0) != STATUS_SUCCESS ||
            !log_wait(&log, &d, d.posted.n, cfg.wait_ms, "one request without DEFER")) {
            st_ok(0, "a single request without DEFER completes");
            return;
        }
        if (st_now_ms() - t0 > rtt)
            rtt = st_now_ms() - t0;
    }
    st_note("round trip of one request: %llu ms; a lone deferred request may take %d ms more",
            (unsigned long long)rtt, cfg.defer_bound_ms);

    uint64_t exec = 0;
    dq_phase(&d, depth, 0, NULL, 0);
    dq_phase(&d, depth, 1, &exec, 0);
    dq_phase(&d, depth, 2, &exec, (uint64_t)cfg.defer_bound_ms + rtt);

    /* A lone deferred request with nothing after it: fast-register, invalidate and
     * write each alone. */
    static const char *const lone[] = {"fast-register", "write", "invalidate", "write (normal MR)"};
    for (int i = 0; i < 4; i++) {
        size_t want = d.posted.n + 1;
        int kind = (int)(d.next % 4);
        uint64_t t0 = st_now_ms();
        NTSTATUS st = dq_post(&d, NDK_OP_FLAG_DEFER);
        char label[80];
        snprintf(label, sizeof(label), "a lone deferred %s", lone[kind]);
        int in_time = st == STATUS_SUCCESS &&
                      log_wait(&log, &d, want, (int)(rtt + (uint64_t)cfg.defer_bound_ms), label);
        uint64_t took = st_now_ms() - t0;
        st_ok(in_time, "a lone deferred %s, nothing posted after it, completes within %llu ms (round trip + %d ms): %s",
              lone[kind], (unsigned long long)(rtt + (uint64_t)cfg.defer_bound_ms), cfg.defer_bound_ms,
              in_time ? "yes" : st == STATUS_SUCCESS ? "no completion" : st_name(st));
        if (in_time)
            st_note("lone deferred %s completed in %llu ms", lone[kind], (unsigned long long)took);
        if (st == STATUS_SUCCESS && !in_time) {
            dq_post_neutral(&d, CTX(0xd4, i), 0);
            log_wait(&log, &d, d.posted.n, cfg.wait_ms, "a deferred request pushed by a later post");
        }
    }
    char why[320] = "";
    int seq = seq_exact(&log, &d, d.posted.v, d.posted.n, why, sizeof(why));
    st_ok(seq, "the whole run: %zu requests, each completed exactly once, in order%s%s", d.posted.n, seq ? "" : ": ",
          why);
    int closed = st_pair_close(&d.pr, cfg.wait_ms) && st_close(&d.fr->Header, cfg.wait_ms);
    st_buf_free(&x, &d.tgt);
    st_buf_free(&x, &d.src);
    st_buf_free(&x, &d.nrm);
    closed = closed && st_close(&cq->Header, cfg.wait_ms);
    st_ok(closed, "QPs, MR and CQ closed");
    log.cq = NULL;
    st_ok(stx_close(&x, 5000) >= 0, "NdkFpgaCloseAdapter returned");
    free(d.posted.v);
    log_free(&log);
}

/* ========================================================================= */
/* cq-overflow: more completions than the CQ holds, never polled. docs/ndk.md#cq-errors:
 * the notification callback gets STATUS_BUFFER_OVERFLOW, the CQ and every
 * QP on it are unusable, no further completion is reported, nothing silently dropped. */

static int wait_overflow(struct cqlog *l, int ms)
{
    return st_wait_nonzero(&l->m, &l->overflows, ms);
}

static void overflow_variant(struct stx *x, const char *name, int arm)
{
    const ULONG depth = 8;
    const int n = 3 * (int)depth;
    struct cqlog log;
    log_init(&log);
    NDK_CQ *cq = st_cq(x, depth, &log);
    struct pair pr;
    void *qa_ctx = CTX(0xc0, arm + 1), *qb_ctx = CTX(0xc1, arm + 1);
    int setup = cq && st_pair(x, cq, 64, qa_ctx, qb_ctx, &pr);
    NDK_MR *fr = setup ? st_mr(x, x->pd, 1) : NULL;
    struct sbuf tgt, src, nrm;
    memset(&tgt, 0, sizeof(tgt));
    memset(&src, 0, sizeof(src));
    memset(&nrm, 0, sizeof(nrm));
    setup = setup && fr && st_init_fast(fr, 1, TRUE) == STATUS_SUCCESS && st_buf(x, &tgt, PAGE_SIZE, 0, -1) &&
            st_buf(x, &src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) &&
            st_buf(x, &nrm, PAGE_SIZE, 0, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    if (!st_ok(setup, "%s: a CQ of depth %u with two connected QPs", name, (unsigned)depth))
        return;
    if (arm >= 0)
        cq->Dispatch->NdkArmCq(cq, (ULONG)arm);
    struct plist posted = {0};
    int refused = 0;
    NTSTATUS first_refusal = STATUS_SUCCESS;
    st_doing("%s: posting %d requests on a CQ of depth %u, not polling", name, n, (unsigned)depth);
    for (int i = 0; i < n; i++) {
        void *ctx = CTX(0xc2, i + 1);
        NTSTATUS st = i % 2 == 0 ? st_post_fr(pr.qa, ctx, fr, &tgt, 1, 0, PAGE_SIZE, 0x300000,
                                              NDK_OP_FLAG_ALLOW_REMOTE_WRITE)
                                 : st_post_inv(pr.qa, ctx, fr, 0);
        if (st == STATUS_SUCCESS) {
            plist_add(&posted, ctx, i % 2 == 0 ? NdkOperationTypeFastRegister : NdkOperationTypeInvalidate);
        } else {
            if (!refused++)
                first_refusal = st;
        }
    }
    /* Refusals are allowed only once the overflow has put the QP in error. */
    st_note("%s: %zu posted, %d refused inline (first: %s)", name, posted.n, refused, st_name(first_refusal));
    st_doing("%s: waiting for the STATUS_BUFFER_OVERFLOW notification", name);
    /* The requests take a round trip or two on the model, some 0.5 s on the simulation. */
    int ov = wait_overflow(&log, cfg.sim ? 5000 : 2000);
    pthread_mutex_lock(&log.m);
    int notifies = log.notifies, other = log.other_notify;
    pthread_mutex_unlock(&log.m);
    st_ok(ov >= 1 && other == 0,
          "%s: %zu completions for a CQ of %u: the notification callback reports STATUS_BUFFER_OVERFLOW (%d overflow "
          "notification(s) of %d, %d with another status)",
          name, posted.n, (unsigned)depth, ov, notifies, other);
    /* What the CQ holds: at most its depth, the first requests, in order. */
    log_drain(&log);
    NDK_RESULT_EX r[64];
    size_t got = log_results(&log, qa_ctx, r, 64);
    int prefix = got <= depth;
    char why[200] = "";
    for (size_t i = 0; i < got && i < 64 && prefix; i++)
        if (i >= posted.n || r[i].RequestContext != posted.v[i].ctx || r[i].Status != STATUS_SUCCESS) {
            snprintf(why, sizeof(why), ": result %zu is ctx %p %s", i, r[i].RequestContext, st_name(r[i].Status));
            prefix = 0;
        }
    st_ok(prefix, "%s: the CQ holds at most its depth, the first requests in order, SUCCESS (%zu results)%s", name, got,
          why);
    /* The CQ and its QPs are unusable: nothing more is reported. */
    NTSTATUS sa = st_post_write(pr.qa, CTX(0xc3, 1), &src, 0, 16, (uint64_t)(uintptr_t)st_va(&nrm, 0),
                                st_token(nrm.mr), 0);
    NTSTATUS sb = st_post_write(pr.qb, CTX(0xc3, 2), &src, 0, 16, (uint64_t)(uintptr_t)st_va(&nrm, 0),
                                st_token(nrm.mr), 0);
    st_sleep_ms(cfg.sim ? 2000 : 200);
    log_drain(&log);
    size_t later = log.n - got;
    st_ok(later == 0,
          "%s: after the overflow nothing more is reported: a post on each QP of the CQ is refused inline or never "
          "completes (posts: %s, %s; %zu more result(s))",
          name, st_name(sa), st_name(sb), later);
    int closed = st_pair_close(&pr, cfg.wait_ms);
    closed &= st_close(&fr->Header, cfg.wait_ms);
    st_buf_free(x, &tgt);
    st_buf_free(x, &src);
    st_buf_free(x, &nrm);
    closed &= st_close(&cq->Header, cfg.wait_ms);
    st_ok(closed, "%s: the QPs and the overflowed CQ close", name);
    log.cq = NULL;
    free(posted.v);
    log_free(&log);
}

void case_cq_overflow(void)
{
    struct stx x;
    if (!stx_open(&x, "cq-overflow"))
        return;
    overflow_variant(&x, "not armed", -1);
    overflow_variant(&x, "armed for any", (int)NDK_CQ_NOTIFY_ANY);
    overflow_variant(&x, "armed for errors", (int)NDK_CQ_NOTIFY_ERRORS);
    st_ok(stx_close(&x, 5000) >= 0, "NdkFpgaCloseAdapter returned");
}

/* ========================================================================= */
/* error-breaks-qp: an invalidate of a fast-register MR that is not registered
 * completes with an error; every later request on that QP completes CANCELLED and
 * changes nothing (docs/ndk.md#remote-access-failures: an error completion breaks the
 * connection). */

static void error_variant(struct stx *x, struct cqlog *log, NDK_CQ *cq, const char *name, int lead, int defer)
{
    void *qctx = CTX(0xe0, (uint32_t)lead * 2 + (uint32_t)defer + 1);
    struct pair pr;
    NDK_MR *bad = NULL, *fr2 = NULL;
    struct sbuf tgt, tgt2, src;
    memset(&tgt, 0, sizeof(tgt));
    memset(&tgt2, 0, sizeof(tgt2));
    memset(&src, 0, sizeof(src));
    int setup = st_pair(x, cq, 128, qctx, CTX(0xe1, lead), &pr);
    bad = setup ? st_mr(x, x->pd, 1) : NULL;
    fr2 = setup ? st_mr(x, x->pd, 1) : NULL;
    setup = setup && bad && fr2 && st_init_fast(bad, 1, TRUE) == STATUS_SUCCESS &&
            st_init_fast(fr2, 1, TRUE) == STATUS_SUCCESS &&
            st_buf(x, &tgt, PAGE_SIZE, 0, NDK_MR_FLAG_ALLOW_REMOTE_WRITE) && st_buf(x, &tgt2, PAGE_SIZE, 0, -1) &&
            st_buf(x, &src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    if (!st_ok(setup, "%s: a connected QP, an initialized but never registered fast MR", name))
        return;
    uint8_t p0[PAGE_SIZE], p1[64], got[PAGE_SIZE];
    st_fill(p0, sizeof(p0), 11u + (uint32_t)lead);
    st_fill(p1, sizeof(p1), 12u + (uint32_t)lead);
    NdkFpgaWriteBuffer(x->ad, tgt.mdl, 0, p0, sizeof(p0));
    NdkFpgaWriteBuffer(x->ad, src.mdl, 0, p1, sizeof(p1));
    const uint64_t tva = (uint64_t)(uintptr_t)st_va(&tgt, 0);
    const UINT32 ttok = st_token(tgt.mr);
    const int followers = st_n(24, 12, 4);
    struct plist posted = {0};
    int ok = 1;
    ULONG df = defer ? NDK_OP_FLAG_DEFER : 0;
    for (int i = 0; i < lead; i++) { /* valid writes at offset 0: they land */
        void *c = CTX(0xe2, i);
        ok &= st_post_write(pr.qa, c, &src, 0, 64, tva + 64u * (unsigned)i, ttok, df) == STATUS_SUCCESS;
        plist_add(&posted, c, NdkOperationTypeWrite);
    }
    ok &= st_post_inv(pr.qa, CTX(0xe3, 0), bad, df) == STATUS_SUCCESS;
    plist_add(&posted, CTX(0xe3, 0), NdkOperationTypeInvalidate);
    for (int i = 0; i < followers; i++) { /* would change things, had they run */
        void *c = CTX(0xe4, i);
        ULONG f = (defer && i + 1 < followers) ? NDK_OP_FLAG_DEFER : 0;
        int type;
        NTSTATUS st;
        switch (i % 4) {
        case 0:
            st = st_post_fr(pr.qa, c, fr2, &tgt2, 1, 0, PAGE_SIZE, 0x400000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE | f);
            type = NdkOperationTypeFastRegister;
            break;
        case 2:
            st = st_post_inv(pr.qa, c, fr2, f);
            type = NdkOperationTypeInvalidate;
            break;
        default:
            st = st_post_write(pr.qa, c, &src, 0, 64, tva + 2048 + 64u * (unsigned)(i % 16), ttok, f);
            type = NdkOperationTypeWrite;
            break;
        }
        ok &= st == STATUS_SUCCESS;
        plist_add(&posted, c, type);
    }
    /* The last follower is a fast-register of fr2 when followers % 4 == 1; make sure
     * the MR would be left registered if it ran: end with one more fast-register. */
    ok &= st_post_fr(pr.qa, CTX(0xe5, 0), fr2, &tgt2, 1, 0, PAGE_SIZE, 0x400000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE) ==
          STATUS_SUCCESS;
    plist_add(&posted, CTX(0xe5, 0), NdkOperationTypeFastRegister);
    st_ok(ok, "%s: %d valid request(s), the bad invalidate, %d followers: every post accepted", name, lead,
          followers + 1);
    log_wait(log, qctx, posted.n, cfg.wait_ms, name);
    char why[320] = "";
    int seq = seq_exact(log, qctx, posted.v, posted.n, why, sizeof(why));
    st_ok(seq, "%s: every request completed exactly once, in order%s%s", name, seq ? "" : ": ", why);
    NDK_RESULT_EX *r = calloc(posted.n + 4, sizeof(*r));
    size_t n = log_results(log, qctx, r, posted.n + 4);
    int lead_ok = 1, err_ok = 0, canc_ok = 1;
    NTSTATUS err = ST_NO_COMPLETION, odd = STATUS_CANCELLED;
    for (size_t i = 0; i < n && i < posted.n; i++) {
        if ((int)i < lead)
            lead_ok &= r[i].Status == STATUS_SUCCESS;
        else if ((int)i == lead) {
            err = r[i].Status;
            err_ok = err != STATUS_SUCCESS && err != STATUS_CANCELLED;
        } else if (r[i].Status != STATUS_CANCELLED) {
            canc_ok = 0;
            odd = r[i].Status;
        }
    }
    if (lead)
        st_ok(lead_ok, "%s: the %d request(s) before the error complete SUCCESS", name, lead);
    st_ok(err_ok, "%s: invalidating an MR that is not registered completes with an error (%s)", name, st_name(err));
    st_ok(canc_ok && n >= posted.n, "%s: every request after it completes STATUS_CANCELLED (%zu of %zu; other: %s)",
          name, n > (size_t)lead ? n - (size_t)lead - 1 : 0, posted.n - (size_t)lead - 1, st_name(odd));
    free(r);
    /* Nothing after the error ran: the writes' range is unchanged, fr2 grants nothing. */
    for (int i = 0; i < lead; i++) /* what the valid writes put at offset 0.. */
        memcpy(p0 + 64 * i, p1, 64);
    NdkFpgaReadBuffer(x->ad, tgt.mdl, 0, got, sizeof(got));
    st_ok(!memcmp(got, p0, sizeof(got)), "%s: the target holds exactly what the requests before the error wrote", name);
    NTSTATUS probe = st_post_write(pr.qb, CTX(0xe6, 0), &src, 0, 16, 0x400000, st_token(fr2), 0);
    log_wait(log, CTX(0xe1, lead), 1, cfg.wait_ms, "a write through the token of the cancelled fast-register");
    NDK_RESULT_EX pr_r;
    size_t pn = log_results(log, CTX(0xe1, lead), &pr_r, 1);
    st_ok(probe == STATUS_SUCCESS && pn == 1 && pr_r.Status == STATUS_ACCESS_VIOLATION,
          "%s: the cancelled fast-register took no effect: a write through its token from the peer QP is refused "
          "(%s)",
          name, pn ? st_name(pr_r.Status) : "no completion");
    /* Requests posted once the error is known: CANCELLED too. */
    size_t before = posted.n;
    for (int i = 0; i < 3; i++) {
        void *c = CTX(0xe7, i);
        if (st_post_write(pr.qa, c, &src, 0, 16, tva, ttok, 0) == STATUS_SUCCESS)
            plist_add(&posted, c, NdkOperationTypeWrite);
    }
    log_wait(log, qctx, posted.n, cfg.wait_ms, "requests posted after the error completion");
    r = calloc(posted.n + 4, sizeof(*r));
    n = log_results(log, qctx, r, posted.n + 4);
    int later_ok = posted.n == before + 3 && n == posted.n;
    for (size_t i = before; i < n && i < posted.n; i++)
        later_ok &= r[i].Status == STATUS_CANCELLED && r[i].RequestContext == posted.v[i].ctx;
    st_ok(later_ok, "%s: requests posted after the error was seen complete STATUS_CANCELLED (%zu of 3)", name,
          n > before ? n - before : 0);
    free(r);
    int closed = st_pair_close(&pr, cfg.wait_ms) && st_close(&bad->Header, cfg.wait_ms) &&
                 st_close(&fr2->Header, cfg.wait_ms);
    st_buf_free(x, &tgt);
    st_buf_free(x, &tgt2);
    st_buf_free(x, &src);
    st_ok(closed, "%s: QPs and MRs closed", name);
    free(posted.v);
}

void case_error_breaks_qp(void)
{
    struct stx x;
    if (!stx_open_logged(&x, "error-breaks-qp", 1024))
        return;
    error_variant(&x, &x.log, x.cq, "error first", 0, 0);
    error_variant(&x, &x.log, x.cq, "error after 3 writes", 3, 0);
    error_variant(&x, &x.log, x.cq, "all deferred", 2, 1);
    st_ok(st_close(&x.cq->Header, cfg.wait_ms), "CQ closed");
    x.log.cq = NULL;
    st_ok(stx_close(&x, 5000) >= 0, "NdkFpgaCloseAdapter returned");
    log_free(&x.log);
}

/* ========================================================================= */
/* flush-race: NdkFlush from one thread while another posts (docs/ndk.md#work-requests:
 * the provider must cope with NdkFlush arriving while a work request is being posted on
 * the same QP). Every request completes exactly once, in order: a request posted before the
 * flush with its real status, one posted after it CANCELLED (ndkpi.h, NdkFlush), and
 * what the token does afterwards agrees with the statuses. */

#define FR_MAX 48

struct ftrial {
    NDK_QP *qa;
    NDK_MR *fr;
    const struct sbuf *tgt, *src;
    int k;
    char kind[FR_MAX];
    ULONG flags[FR_MAX];
    void *ctx[FR_MAX];
    long gap_us[FR_MAX];
    uint64_t t_start[FR_MAX], t_end[FR_MAX];
    NTSTATUS st[FR_MAX];
    long flush_delay_us, post_delay_us;
    int flush_at;     /* > 0: flush as soon as the poster enters post flush_at - 1 */
    int inside;       /* the post the poster is in (index + 1), 0 between posts */
    uint64_t t_f0, t_f1;
    pthread_barrier_t go; /* poster and flusher start together */
};

#define FLUSH_VA 0x500000ull

static void *ftrial_poster(void *p)
{
    struct ftrial *t = p;
    UINT32 tok = st_token(t->fr);
    pthread_barrier_wait(&t->go);
    if (t->post_delay_us)
        st_sleep_us(t->post_delay_us);
    for (int i = 0; i < t->k; i++) {
        t->t_start[i] = st_now_us();
        __atomic_store_n(&t->inside, i + 1, __ATOMIC_SEQ_CST);
        if (t->kind[i] == 'F')
            t->st[i] = st_post_fr(t->qa, t->ctx[i], t->fr, t->tgt, 1, 0, PAGE_SIZE, FLUSH_VA,
                                  NDK_OP_FLAG_ALLOW_REMOTE_WRITE | t->flags[i]);
        else if (t->kind[i] == 'I')
            t->st[i] = st_post_inv(t->qa, t->ctx[i], t->fr, t->flags[i]);
        else
            t->st[i] = st_post_write(t->qa, t->ctx[i], t->src, 0, 64, FLUSH_VA + 64u * (unsigned)(i % 32), tok,
                                     t->flags[i]);
        t->t_end[i] = st_now_us();
        __atomic_store_n(&t->inside, 0, __ATOMIC_SEQ_CST);
        if (t->gap_us[i])
            st_sleep_us(t->gap_us[i]);
    }
    return NULL;
}

static void *ftrial_flusher(void *p)
{
    struct ftrial *t = p;
    pthread_barrier_wait(&t->go);
    if (t->flush_at) {
        /* Aim at the window inside a post (slot taken, message not yet sent). */
        uint64_t end = st_now_us() + 20000;
        while (__atomic_load_n(&t->inside, __ATOMIC_SEQ_CST) < t->flush_at && st_now_us() < end)
            sched_yield();
    } else if (t->flush_delay_us) {
        st_sleep_us(t->flush_delay_us);
    }
    t->t_f0 = st_now_us();
    t->qa->Dispatch->NdkFlush(t->qa);
    t->t_f1 = st_now_us();
    return NULL;
}

struct fcheck {
    const char *what;
    int failed;
    char first[300];
};

static void fcheck_fail(struct fcheck *c, int trial, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fcheck_fail(struct fcheck *c, int trial, const char *fmt, ...)
{
    if (c->failed++ == 0) {
        char msg[240];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        snprintf(c->first, sizeof(c->first), "trial %d: %s", trial, msg);
    }
}

void case_flush_race(void)
{
    struct stx x;
    if (!stx_open_logged(&x, "flush-race", 4096))
        return;
    struct sbuf tgt, src;
    if (!st_buf(&x, &tgt, PAGE_SIZE, 0, -1) || !st_buf(&x, &src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE)) {
        st_ok(0, "CQ and buffers");
        return;
    }
    const int trials = st_n(1000, 150, 6);
    struct fcheck c_once = {"every accepted request completed exactly once, in order, with its context and type", 0, ""};
    struct fcheck c_stat = {"statuses are SUCCESS up to the flush, then CANCELLED (never SUCCESS after CANCELLED, "
                            "nothing else)", 0, ""};
    struct fcheck c_before = {"a request whose post returned before NdkFlush was called has its real status (SUCCESS)",
                              0, ""};
    struct fcheck c_after = {"a request posted after NdkFlush returned completes CANCELLED", 0, ""};
    struct fcheck c_inline = {"every post accepted (a flushed QP still takes requests and cancels them)", 0, ""};
    struct fcheck c_token = {"the token agrees with the statuses (a write through it from the peer QP)", 0, ""};
    struct fcheck c_setup = {"setup of each trial (QP pair, fast MR, closes)", 0, ""};
    struct fcheck *checks[] = {&c_setup, &c_inline, &c_once, &c_stat, &c_before, &c_after, &c_token};
    int mixed = 0, all_before = 0, all_after = 0, ran = trials;
    uint64_t t0 = st_now_ms();
    for (int tr = 0; tr < trials; tr++) {
        st_doing("flush race trial %d of %d", tr + 1, trials);
        struct pair pr;
        void *qctx = CTX(0xf0, tr * 2 + 1), *pctx = CTX(0xf0, tr * 2 + 2);
        if (!st_pair(&x, x.cq, 64, qctx, pctx, &pr)) {
            fcheck_fail(&c_setup, tr, "connect a QP pair");
            st_pair_close(&pr, cfg.wait_ms);
            break;
        }
        NDK_MR *fr = st_mr(&x, x.pd, 1);
        if (!fr || st_init_fast(fr, 1, TRUE) != STATUS_SUCCESS) {
            fcheck_fail(&c_setup, tr, "fast MR");
            break;
        }
        static struct ftrial t;
        memset(&t, 0, sizeof(t));
        t.qa = pr.qa;
        t.fr = fr;
        t.tgt = &tgt;
        t.src = &src;
        t.k = 4 + (int)st_rand_below(FR_MAX - 6);
        /* Rounds of F, 0-2 W, I. */
        int i = 0;
        while (i < t.k) {
            t.kind[i++] = 'F';
            int nw = (int)st_rand_below(3);
            for (int w = 0; w < nw && i < t.k; w++)
                t.kind[i++] = 'W';
            if (i < t.k)
                t.kind[i++] = 'I';
        }
        for (i = 0; i < t.k; i++) {
            t.ctx[i] = CTX(0xf1 + tr, i + 1);
            t.flags[i] = (i + 1 < t.k && st_rand_below(3) == 0) ? NDK_OP_FLAG_DEFER : 0;
            t.gap_us[i] = st_rand_below(4) == 0 ? (long)st_rand_below(cfg.sim ? 200 : 30) : 0;
        }
        t.flush_delay_us = (long)st_rand_below((uint32_t)t.k * (cfg.sim ? 40u : 8u));
        if (st_rand_below(8) == 0) /* now and then the flush comes first */
            t.post_delay_us = 200 + (long)st_rand_below(300);
        else if (st_rand_below(2) == 0) /* half the time: during a given post */
            t.flush_at = 1 + (int)st_rand_below((uint32_t)t.k);
        pthread_t tp, tf;
        pthread_barrier_init(&t.go, NULL, 2);
        pthread_create(&tp, NULL, ftrial_poster, &t);
        pthread_create(&tf, NULL, ftrial_flusher, &t);
        pthread_join(tp, NULL);
        pthread_join(tf, NULL);
        pthread_barrier_destroy(&t.go);
        struct posted acc[FR_MAX];
        int nacc = 0, ninline = 0;
        for (i = 0; i < t.k; i++) {
            if (t.st[i] == STATUS_SUCCESS) {
                acc[nacc].ctx = t.ctx[i];
                acc[nacc].type = t.kind[i] == 'F'   ? NdkOperationTypeFastRegister
                                 : t.kind[i] == 'I' ? NdkOperationTypeInvalidate
                                                    : NdkOperationTypeWrite;
                nacc++;
            } else {
                ninline++;
                if (t.t_end[i] < t.t_f0)
                    fcheck_fail(&c_inline, tr, "request %d (%c), posted before the flush, refused inline: %s", i,
                                t.kind[i], st_name(t.st[i]));
                else
                    fcheck_fail(&c_inline, tr, "request %d (%c), posted during/after the flush, refused inline: %s",
                                i, t.kind[i], st_name(t.st[i]));
            }
        }
        log_wait(&x.log, qctx, (size_t)nacc, cfg.wait_ms, "the requests of a flush race");
        char why[320];
        if (!seq_exact(&x.log, qctx, acc, (size_t)nacc, why, sizeof(why)))
            fcheck_fail(&c_once, tr, "%s", why);
        NDK_RESULT_EX r[FR_MAX + 4];
        size_t n = log_results(&x.log, qctx, r, FR_MAX + 4);
        /* Walk the accepted requests in order with their results. */
        int seen_cancel = 0, valid = 0, nsucc = 0, ncanc = 0;
        for (i = 0; i < t.k; i++) {
            if (t.st[i] != STATUS_SUCCESS)
                continue;
            int a = 0;
            for (int j = 0; j < i; j++)
                a += t.st[j] == STATUS_SUCCESS;
            NTSTATUS s = (size_t)a < n && r[a].RequestContext == t.ctx[i] ? r[a].Status : ST_NO_COMPLETION;
            if (s == STATUS_SUCCESS) {
                nsucc++;
                if (seen_cancel)
                    fcheck_fail(&c_stat, tr, "request %d (%c) SUCCESS after a CANCELLED one", i, t.kind[i]);
                if (t.kind[i] == 'F')
                    valid = 1;
                else if (t.kind[i] == 'I')
                    valid = 0;
            } else if (s == STATUS_CANCELLED) {
                ncanc++;
                seen_cancel = 1;
            } else {
                fcheck_fail(&c_stat, tr, "request %d (%c) completed %s", i, t.kind[i], st_name(s));
            }
            if (t.t_end[i] < t.t_f0 && s != STATUS_SUCCESS)
                fcheck_fail(&c_before, tr, "request %d (%c%s) returned %llu us before NdkFlush, completed %s", i,
                            t.kind[i], t.flags[i] ? ", deferred" : "", (unsigned long long)(t.t_f0 - t.t_end[i]),
                            st_name(s));
            if (t.t_start[i] > t.t_f1 && s != STATUS_CANCELLED)
                fcheck_fail(&c_after, tr, "request %d (%c) posted %llu us after NdkFlush returned, completed %s", i,
                            t.kind[i], (unsigned long long)(t.t_start[i] - t.t_f1), st_name(s));
        }
        if (nsucc && ncanc)
            mixed++;
        else if (ncanc == 0)
            all_before++;
        else
            all_after++;
        /* The token: granted exactly when the last successful F/I was an F. */
        uint8_t pat[64], before[64], after[64];
        st_fill(pat, sizeof(pat), 7000u + (uint32_t)tr);
        NdkFpgaWriteBuffer(x.ad, src.mdl, 0, pat, sizeof(pat));
        NdkFpgaReadBuffer(x.ad, tgt.mdl, 0, before, sizeof(before));
        NTSTATUS pst = st_post_write(pr.qb, CTX(0xf2, tr), &src, 0, 64, FLUSH_VA, st_token(fr), 0);
        NDK_RESULT_EX pres;
        memset(&pres, 0, sizeof(pres));
        pres.Status = ST_NO_COMPLETION;
        if (pst == STATUS_SUCCESS && log_wait(&x.log, pctx, 1, cfg.wait_ms, "the token probe"))
            log_results(&x.log, pctx, &pres, 1);
        NdkFpgaReadBuffer(x.ad, tgt.mdl, 0, after, sizeof(after));
        int agree = valid ? pres.Status == STATUS_SUCCESS && !memcmp(after, pat, 64)
                          : pres.Status == STATUS_ACCESS_VIOLATION && !memcmp(after, before, 64);
        if (!agree)
            fcheck_fail(&c_token, tr, "the statuses say the MR is %s, a write through its token completed %s",
                        valid ? "registered" : "not registered", st_name(pres.Status));
        if (!st_pair_close(&pr, cfg.wait_ms) || !st_close(&fr->Header, cfg.wait_ms)) {
            fcheck_fail(&c_setup, tr, "close the pair and the MR");
            break;
        }
        if (c_setup.failed)
            break;
        int bad_trials = 0;
        for (size_t k = 0; k < sizeof(checks) / sizeof(checks[0]); k++)
            bad_trials = checks[k]->failed > bad_trials ? checks[k]->failed : bad_trials;
        if (bad_trials >= 3) { /* enough evidence; each lost request costs a full wait */
            st_note("stopping after trial %d of %d: 3 failures already", tr + 1, trials);
            ran = tr + 1;
            break;
        }
    }
    uint64_t ms = st_now_ms() - t0;
    for (size_t k = 0; k < sizeof(checks) / sizeof(checks[0]); k++)
        st_ok(!checks[k]->failed, "%d trials: %s%s%s", ran, checks[k]->what,
              checks[k]->failed ? " -- first failure: " : "", checks[k]->failed ? checks[k]->first : "");
    st_note("%d trials in %llu ms: the flush landed amid the requests in %d, after all in %d, before all in %d",
            ran, (unsigned long long)ms, mixed, all_before, all_after);
    st_buf_free(&x, &tgt);
    st_buf_free(&x, &src);
    st_ok(st_close(&x.cq->Header, cfg.wait_ms), "CQ closed");
    x.log.cq = NULL;
    st_ok(stx_close(&x, 5000) >= 0, "NdkFpgaCloseAdapter returned");
    log_free(&x.log);
}
