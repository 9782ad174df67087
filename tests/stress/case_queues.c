/* Queue cases: many threads on one CQ, QPs filled to their depth (with and without
 * DEFER), CQ overflow, an error completion breaking its QP, NdkFlush racing a poster. */
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
    if (!stx_open(&x, "shared"))
        return;
    const int nthreads = st_n(4, 3, 2), cycles = st_n(150, 25, 3);
    struct cqlog log;
    log_init(&log);
    NDK_CQ *cq = st_cq(&x, 4096, &log);
    if (!cq)
        return;
    struct worker *w = calloc((size_t)nthreads, sizeof(*w));
    for (int i = 0; i < nthreads; i++) {
        w[i].id = i;
        w[i].x = &x;
        w[i].log = &log;
        w[i].cycles = cycles;
        w[i].len = 3000 + (size_t)i * 200;
    }
    int setup = 1;
    for (int i = 0; i < nthreads && setup; i++) {
        /* QPContext: the worker itself. */
        setup &= st_pair(&x, cq, 64, &w[i], CTX(0xb, i), &w[i].pr);
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
    log_drain(&log);
    int seq_ok = 1;
    char why[400] = "";
    for (int i = 0; i < nthreads; i++) {
        char w1[320];
        if (!seq_exact(&log, &w[i], w[i].posted.v, w[i].posted.n, w1, sizeof(w1))) {
            if (seq_ok)
                snprintf(why, sizeof(why), "thread %d: %s", i, w1);
            seq_ok = 0;
        }
    }
    st_ok(seq_ok, "every completion delivered exactly once, in order per QP, with its QPContext, RequestContext and "
                  "type (%zu on the shared CQ)%s%s",
          log.n, seq_ok ? "" : ": ", why);
    void **ctxs = calloc((size_t)nthreads, sizeof(*ctxs));
    for (int i = 0; i < nthreads; i++)
        ctxs[i] = &w[i];
    size_t foreign = log_foreign(&log, ctxs, (size_t)nthreads);
    st_ok(foreign == 0, "no completion with an unknown QPContext (%zu)", foreign);
    int closed = 1;
    for (int i = 0; i < nthreads; i++) {
        closed &= st_pair_close(&w[i].pr, cfg.wait_ms);
        closed &= st_close(&w[i].fr->Header, cfg.wait_ms);
        st_buf_free(&x, &w[i].src);
        st_buf_free(&x, &w[i].tgt);
        st_buf_free(&x, &w[i].back);
    }
    closed &= st_close(&cq->Header, cfg.wait_ms);
    st_ok(closed, "every QP, MR and the CQ closed");
    log.cq = NULL;
    int ms_close = stx_close(&x, 5000);
    st_ok(ms_close >= 0, "NdkFpgaCloseAdapter returned (%d ms)", ms_close);
    st_ok(st_cb_violations == 0, "no completion callback ran twice or after an inline return (%d)", st_cb_violations);
    free(ctxs);
    free(t);
    for (int i = 0; i < nthreads; i++)
        free(w[i].posted.v);
    free(w);
    log_free(&log);
}
