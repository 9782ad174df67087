/* SPDX-License-Identifier: Apache-2.0 */
/* Lifetime cases: exhaustion and release of every resource, closes with requests
 * outstanding, calls after the link died, a frozen adapter, and the adapter killed
 * in the middle of a posting storm. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress.h"

#define CTX(a, b) ((void *)(uintptr_t)(((uint64_t)(a) << 32) | (uint64_t)(b)))

/* ========================================================================= */
/* exhaustion: allocate until INSUFFICIENT_RESOURCES, free everything, repeat: every
 * round must reach the same counts (an entry not given back shows as one less). */

struct counts {
    int mr, frinit, qp, buf, reg;
    NTSTATUS mr_st, frinit_st, qp_st, buf_st, reg_st;
};

/* Create fast MRs in batches until one fails; returns how many exist. */
static int create_mrs(struct stx *x, NDK_PD *pd, NDK_MR **mrs, int cap, NTSTATUS *stop)
{
    int n = 0;
    *stop = STATUS_SUCCESS;
    while (n < cap && *stop == STATUS_SUCCESS) {
        struct st_op *o[32];
        NTSTATUS st[32];
        NDK_MR *inl[32];
        int k = cap - n < 32 ? cap - n : 32;
        st_doing("creating MRs %d..%d until the adapter runs out", n, n + k - 1);
        for (int i = 0; i < k; i++) {
            o[i] = op_new();
            inl[i] = NULL;
            st[i] = pd->Dispatch->NdkCreateMr(pd, TRUE, op_create_cb, o[i], &inl[i]);
        }
        for (int i = 0; i < k; i++) {
            NDK_OBJECT_HEADER *obj = NULL;
            NTSTATUS s = op_wait(o[i], st[i], cfg.wait_ms, &obj);
            if (s == STATUS_SUCCESS) {
                mrs[n++] = obj ? (NDK_MR *)(void *)obj : inl[i];
            } else if (*stop == STATUS_SUCCESS) {
                *stop = s;
            }
        }
    }
    (void)x;
    return n;
}

static int close_all(NDK_OBJECT_HEADER *const *objs, int n)
{
    /* Issue every close, then wait for them all. */
    struct st_op **o = calloc((size_t)n + 1, sizeof(*o));
    NTSTATUS *st = calloc((size_t)n + 1, sizeof(*st));
    int ok = 1;
    st_doing("closing %d objects", n);
    for (int i = 0; i < n; i++) {
        o[i] = op_new();
        st[i] = NdkCloseObject(objs[i], op_close_cb, o[i]);
    }
    for (int i = 0; i < n; i++)
        ok &= op_wait(o[i], st[i], cfg.wait_ms, NULL) == STATUS_SUCCESS;
    free(o);
    free(st);
    return ok;
}

static int ex_round(struct stx *x, NDK_CQ *cq, int round, struct counts *c)
{
    memset(c, 0, sizeof(*c));
    NDK_PD *pd = NULL;
    if (x->ad->Dispatch->NdkCreatePd(x->ad, NULL, NULL, &pd) != STATUS_SUCCESS || !pd)
        return st_ok(0, "round %d: NdkCreatePd", round);
    const int pd_first = round % 2 == 1; /* odd rounds close the PD before its MRs */
    int ok = 1;

    /* MRs until the key table is full (at the tiny scale, the simulation, only the MRs
     * the translation table's exhaustion needs: a full key table is 2 x 1024 round
     * trips per round there). */
    const int need = (int)(x->det.MttEntries / (x->info.FRMRPageCount ? x->info.FRMRPageCount : 1)) + 2;
    const int full_mpt = cfg.scale != SCALE_TINY;
    int cap = full_mpt ? (int)x->det.MptEntries + 16 : need;
    NDK_MR **mrs = calloc((size_t)cap, sizeof(*mrs));
    c->mr = create_mrs(x, pd, mrs, cap, &c->mr_st);
    if (!full_mpt && c->mr == cap)
        c->mr_st = STATUS_INSUFFICIENT_RESOURCES; /* not asked for: stands for "as expected" */
    /* Fast-register capacity until the translation table is full. */
    c->frinit_st = STATUS_SUCCESS;
    for (int i = 0; i < c->mr && c->frinit_st == STATUS_SUCCESS; i++) {
        NTSTATUS s = st_init_fast(mrs[i], x->info.FRMRPageCount, TRUE);
        if (s == STATUS_SUCCESS)
            c->frinit++;
        else
            c->frinit_st = s;
    }
    struct st_op *opd = NULL;
    NTSTATUS pst = STATUS_SUCCESS;
    if (pd_first) {
        opd = op_new();
        pst = NdkCloseObject(&pd->Header, op_close_cb, opd);
        ok &= st_ok(pst == STATUS_PENDING || c->mr == 0,
                    "round %d: closing the PD first, with %d MRs open, pends (%s)", round, c->mr, st_name(pst));
    }
    NDK_OBJECT_HEADER **hdr = calloc((size_t)cap + 1, sizeof(*hdr));
    for (int i = 0; i < c->mr; i++)
        hdr[i] = &mrs[i]->Header;
    ok &= st_ok(close_all(hdr, c->mr), "round %d: %d MRs closed", round, c->mr);
    free(mrs);

    /* QPs until the adapter has none left. */
    int qcap = (int)x->det.MaxQps + 4;
    NDK_QP **qps = calloc((size_t)qcap, sizeof(*qps));
    NDK_PD *saved = x->pd;
    x->pd = pd_first ? saved : pd; /* a closing PD takes no new children */
    c->qp_st = STATUS_SUCCESS;
    while (c->qp < qcap && c->qp_st == STATUS_SUCCESS) {
        NTSTATUS s;
        NDK_QP *q = st_qp(x, cq, CTX(0xa0, c->qp), 4, &s);
        if (q)
            qps[c->qp++] = q;
        else
            c->qp_st = s;
    }
    x->pd = saved;
    for (int i = 0; i < c->qp; i++)
        hdr[i] = &qps[i]->Header;
    ok &= st_ok(close_all(hdr, c->qp), "round %d: %d QPs closed", round, c->qp);
    free(qps);

    /* Buffers of one page until adapter memory is used up. */
    int bcap = (int)(x->det.UserMemoryBytes / PAGE_SIZE) + 4;
    MDL **bufs = calloc((size_t)bcap, sizeof(*bufs));
    c->buf_st = STATUS_SUCCESS;
    st_doing("allocating one-page buffers until adapter memory is used up");
    while (c->buf < bcap && c->buf_st == STATUS_SUCCESS) {
        NTSTATUS s = NdkFpgaAllocateBuffer(x->ad, PAGE_SIZE, &bufs[c->buf]);
        if (s == STATUS_SUCCESS)
            c->buf++;
        else
            c->buf_st = s;
    }
    for (int i = 0; i < c->buf; i++)
        NdkFpgaFreeBuffer(x->ad, bufs[i]);
    free(bufs);

    /* Registrations of one 1 MiB buffer, each on its own MR, until the translation
     * table is full. */
    MDL *big = NULL;
    NTSTATUS s = NdkFpgaAllocateBuffer(x->ad, 256 * PAGE_SIZE, &big);
    ok &= st_ok(s == STATUS_SUCCESS, "round %d: a 1 MiB buffer (%s)", round, st_name(s));
    NDK_PD *rpd = pd_first ? x->pd : pd;
    int rcap = (int)(x->det.MttEntries / 256) + 4;
    NDK_MR **regs = calloc((size_t)rcap, sizeof(*regs));
    int nmr = 0;
    c->reg_st = STATUS_SUCCESS;
    while (big && nmr < rcap && c->reg_st == STATUS_SUCCESS) {
        NDK_MR *m = st_mr(x, rpd, 0);
        if (!m) {
            c->reg_st = ST_NO_COMPLETION;
            break;
        }
        regs[nmr++] = m;
        s = st_register(m, big, 256 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        if (s == STATUS_SUCCESS)
            c->reg++;
        else
            c->reg_st = s;
    }
    for (int i = 0; i < c->reg; i++)
        ok &= st_deregister(regs[i]) == STATUS_SUCCESS;
    for (int i = 0; i < nmr; i++)
        hdr[i] = &regs[i]->Header;
    ok &= st_ok(close_all(hdr, nmr), "round %d: %d registered MRs deregistered and closed", round, nmr);
    free(regs);
    free(hdr);
    if (big)
        NdkFpgaFreeBuffer(x->ad, big);
    if (pd_first) {
        ok &= st_ok(op_wait(opd, pst, cfg.wait_ms, NULL) == STATUS_SUCCESS,
                    "round %d: the PD's close completes once its last MR closed", round);
    } else {
        ok &= st_ok(st_close(&pd->Header, cfg.wait_ms), "round %d: PD closed", round);
    }
    return ok;
}

void case_exhaustion(void)
{
    struct stx x;
    if (!stx_open_logged(&x, "exhaustion", 256))
        return;
    const int rounds = st_n(3, 2, 2);
    struct counts first, c;
    memset(&first, 0, sizeof(first));
    int same = 1;
    char diff[300] = "";
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = st_now_ms();
        ex_round(&x, x.cq, r, &c);
        st_note("round %d (%llu ms): MRs %d, fast-register inits of %u pages %d, QPs %d, one-page buffers %d, 1 MiB "
                "registrations %d",
                r, (unsigned long long)(st_now_ms() - t0), c.mr, (unsigned)x.info.FRMRPageCount, c.frinit, c.qp, c.buf,
                c.reg);
        if (r == 0) {
            first = c;
            if (cfg.scale == SCALE_TINY)
                st_skip("MRs until the key table is full", "2 x 1024 round trips a round: model runs only");
            else
                st_ok(c.mr_st == STATUS_INSUFFICIENT_RESOURCES && c.mr > 0,
                      "MRs: %d created, then NdkCreateMr completes INSUFFICIENT_RESOURCES (%s)", c.mr,
                      st_name(c.mr_st));
            st_ok(c.frinit_st == STATUS_INSUFFICIENT_RESOURCES && c.frinit > 0,
                  "fast-register MRs of %u pages: %d initialized, then INSUFFICIENT_RESOURCES (%s)",
                  (unsigned)x.info.FRMRPageCount, c.frinit, st_name(c.frinit_st));
            st_ok(c.qp_st == STATUS_INSUFFICIENT_RESOURCES && c.qp > 0,
                  "QPs: %d created, then NdkCreateQp completes INSUFFICIENT_RESOURCES (%s)", c.qp, st_name(c.qp_st));
            st_ok(c.buf_st == STATUS_INSUFFICIENT_RESOURCES && c.buf > 0,
                  "buffers: %d pages allocated, then INSUFFICIENT_RESOURCES (%s)", c.buf, st_name(c.buf_st));
            st_ok(c.reg_st == STATUS_INSUFFICIENT_RESOURCES && c.reg > 0,
                  "registrations of 1 MiB: %d, then NdkRegisterMr completes INSUFFICIENT_RESOURCES (%s)", c.reg,
                  st_name(c.reg_st));
        } else if (memcmp(&c, &first, sizeof(c)) != 0) {
            if (same)
                snprintf(diff, sizeof(diff),
                         "round %d: MRs %d/%d, inits %d/%d, QPs %d/%d, buffers %d/%d, registrations %d/%d (this/first)",
                         r, c.mr, first.mr, c.frinit, first.frinit, c.qp, first.qp, c.buf, first.buf, c.reg,
                         first.reg);
            same = 0;
        }
    }
    st_ok(same, "%d rounds of allocate-all, free-all: the same counts every round (nothing leaked)%s%s", rounds,
          same ? "" : ": ", diff);
    st_ok(st_close(&x.cq->Header, cfg.wait_ms), "CQ closed");
    x.log.cq = NULL;
    st_ok(stx_close(&x, 5000) >= 0, "NdkFpgaCloseAdapter returned");
    log_free(&x.log);
}

/* ========================================================================= */
/* close-outstanding: closing a QP with requests outstanding completes each of them
 * (its real status if it ran, else CANCELLED) before the close completes; closing a
 * parent first pends until its children close; the adapter close never pends forever. */

struct close_probe {
    pthread_mutex_t m;
    pthread_cond_t c;
    struct cqlog *log;
    void *qpctx;
    int done;
    size_t at_close; /* results of the QP delivered when the close completed */
    int order;       /* sequence number of this callback among the case's closes */
};
static int close_seq;

static void probe_init(struct close_probe *p, struct cqlog *log, void *qpctx)
{
    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->m, NULL);
    pthread_cond_init(&p->c, NULL);
    p->log = log;
    p->qpctx = qpctx;
}

static VOID probe_cb(PVOID ctx)
{
    struct close_probe *p = ctx;
    size_t n = 0;
    if (p->log) {
        log_drain(p->log); /* a callback may poll the CQ */
        n = log_count(p->log, p->qpctx);
    }
    pthread_mutex_lock(&p->m);
    p->at_close = n;
    p->order = __atomic_add_fetch(&close_seq, 1, __ATOMIC_SEQ_CST);
    p->done++;
    pthread_cond_broadcast(&p->c);
    pthread_mutex_unlock(&p->m);
}

/* 1: closed inline (the probe is filled here), 2: pending (probe_wait), 0: a status a
 * close may not return. */
static int probe_close(struct close_probe *p, NDK_OBJECT_HEADER *obj, NTSTATUS *call)
{
    NTSTATUS st = NdkCloseObject(obj, probe_cb, p);
    if (call)
        *call = st;
    if (st == STATUS_SUCCESS) {
        probe_cb(p);
        return 1;
    }
    if (st != STATUS_PENDING)
        return 0;
    return 2;
}

static int probe_wait(struct close_probe *p, int ms)
{
    return st_wait_nonzero(&p->m, &p->done, ms);
}

/* Results of the QP: SUCCESS (or allowed_tail statuses) up to some point, then only
 * CANCELLED / allowed statuses; never SUCCESS after a failure. */
static int prefix_statuses(struct cqlog *log, void *qpctx, int link_ok, char *why, size_t whylen)
{
    size_t n = log_results(log, qpctx, NULL, 0);
    NDK_RESULT_EX *r = calloc(n + 1, sizeof(*r));
    log_results(log, qpctx, r, n);
    int failed_seen = 0, ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        NTSTATUS s = r[i].Status;
        if (s == STATUS_SUCCESS) {
            if (failed_seen) {
                snprintf(why, whylen, "result %zu SUCCESS after a failed one", i);
                ok = 0;
            }
        } else if (s == STATUS_CANCELLED || (link_ok && st_is_link_status(s))) {
            failed_seen = 1;
        } else {
            snprintf(why, whylen, "result %zu completed %s", i, st_name(s));
            ok = 0;
        }
    }
    free(r);
    return ok;
}

/* Post n requests on qa: writes through a normal MR and fast-register/invalidate
 * pairs, all valid. */
static size_t post_mix(NDK_QP *qa, NDK_MR *fr, const struct sbuf *tgt, const struct sbuf *src,
                       const struct sbuf *nrm, int n, uint32_t tag, struct posted *out)
{
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        void *ctx = CTX(tag, i + 1);
        NTSTATUS st;
        int type;
        switch (i % 3) {
        case 0:
            st = st_post_fr(qa, ctx, fr, tgt, 1, 0, PAGE_SIZE, 0x600000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
            type = NdkOperationTypeFastRegister;
            break;
        case 1:
            st = st_post_write(qa, ctx, src, 0, 32, (uint64_t)(uintptr_t)st_va(nrm, 32u * (unsigned)(i % 100)),
                               st_token(nrm->mr), 0);
            type = NdkOperationTypeWrite;
            break;
        default:
            st = st_post_inv(qa, ctx, fr, 0);
            type = NdkOperationTypeInvalidate;
            break;
        }
        if (st != STATUS_SUCCESS)
            break;
        out[k].ctx = ctx;
        out[k].type = type;
        k++;
    }
    return k;
}

struct co_env {
    struct stx *x;
    struct sbuf tgt, src, nrm;
};

static void close_variant(struct co_env *e, struct cqlog *log, NDK_CQ *cq, const char *name, int n, int freeze)
{
    struct stx *x = e->x;
    void *qctx = CTX(0xc0, (uint32_t)n * 2 + (uint32_t)freeze);
    struct pair pr;
    if (!st_ok(st_pair(x, cq, 512, qctx, CTX(0xc1, n), &pr), "%s: a connected QP pair", name))
        return;
    /* A fresh fast MR: the last one may have been left registered. */
    NDK_MR *fr = st_mr(x, x->pd, 1);
    if (!fr || st_init_fast(fr, 1, TRUE) != STATUS_SUCCESS) {
        st_ok(0, "%s: fast MR", name);
        return;
    }
    if (freeze && !stx_freeze(x)) {
        st_skip(name, "the adapter's process is not known (an adapter the library did not start)");
        st_pair_close(&pr, cfg.wait_ms);
        return;
    }
    struct posted *p = calloc((size_t)n, sizeof(*p));
    size_t k = post_mix(pr.qa, fr, &e->tgt, &e->src, &e->nrm, n, 0xc2, p);
    struct close_probe cp;
    probe_init(&cp, log, qctx);
    NTSTATUS call;
    int pc = probe_close(&cp, &pr.qa->Header, &call);
    if (freeze) {
        st_sleep_ms(300);
        stx_thaw(x);
    }
    int done = pc == 1 || (pc == 2 && probe_wait(&cp, cfg.wait_ms));
    st_ok((size_t)n == k, "%s: %d requests posted (%zu accepted)", name, n, k);
    st_ok(done, "%s: closing the QP with them outstanding (%s) completes within %d ms", name, st_name(call),
          cfg.wait_ms);
    st_ok(done && cp.at_close == k,
          "%s: every outstanding request completed before the close completed (%zu of %zu at the close callback)",
          name, cp.at_close, k);
    char why[320] = "";
    int ok = seq_exact(log, qctx, p, k, why, sizeof(why));
    st_ok(ok, "%s: each completed exactly once, in order%s%s", name, ok ? "" : ": ", why);
    why[0] = 0;
    ok = prefix_statuses(log, qctx, 0, why, sizeof(why));
    st_ok(ok, "%s: statuses: SUCCESS for those that ran, then CANCELLED%s%s", name, ok ? "" : ": ", why);
    pr.qa = NULL; /* closed */
    st_ok(st_pair_close(&pr, cfg.wait_ms) && st_close(&fr->Header, cfg.wait_ms), "%s: the rest closed", name);
    free(p);
}

static VOID order_cb(PVOID ctx)
{
    probe_cb(ctx);
}

void case_close_outstanding(void)
{
    struct stx x;
    if (!stx_open_logged(&x, "close-outstanding", 8192))
        return;
    struct co_env e;
    memset(&e, 0, sizeof(e));
    e.x = &x;
    int setup = st_buf(&x, &e.tgt, PAGE_SIZE, 0, -1) && st_buf(&x, &e.src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) &&
                st_buf(&x, &e.nrm, PAGE_SIZE, 0, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    if (!st_ok(setup, "a CQ and buffers"))
        return;
    const int n = st_n(400, 150, 12);
    close_variant(&e, &x.log, x.cq, "running adapter", n, 0);
    close_variant(&e, &x.log, x.cq, "frozen adapter (resumed after 300 ms)", 4, 1);

    /* Parents first: PD and CQ closes pend while the QPs live, then complete. */
    {
        const char *name = "PD and CQ closed before their QP";
        NDK_PD *p2 = NULL;
        struct cqlog log2;
        log_init(&log2);
        NDK_CQ *cq2 = st_cq(&x, 4096, &log2);
        x.ad->Dispatch->NdkCreatePd(x.ad, NULL, NULL, &p2);
        NDK_PD *saved = x.pd;
        x.pd = p2;
        struct pair pr;
        void *qctx = CTX(0xc5, 1);
        int ok = p2 && cq2 && st_pair(&x, cq2, 512, qctx, CTX(0xc5, 2), &pr);
        NDK_MR *fr = ok ? st_mr(&x, p2, 1) : NULL;
        x.pd = saved;
        ok = ok && fr && st_init_fast(fr, 1, TRUE) == STATUS_SUCCESS;
        if (st_ok(ok, "%s: a PD, a CQ, a connected pair and a fast MR of their own", name)) {
            struct posted *p = calloc((size_t)n, sizeof(*p));
            size_t k = post_mix(pr.qa, fr, &e.tgt, &e.src, &e.nrm, n, 0xc6, p);
            struct close_probe cpd, ccq, cqa, cqb, cmr;
            probe_init(&cpd, NULL, NULL);
            probe_init(&ccq, NULL, NULL);
            probe_init(&cqa, &log2, qctx);
            probe_init(&cqb, NULL, NULL);
            probe_init(&cmr, NULL, NULL);
            NTSTATUS s_pd = NdkCloseObject(&p2->Header, order_cb, &cpd);
            NTSTATUS s_cq = NdkCloseObject(&cq2->Header, order_cb, &ccq);
            st_ok(s_pd == STATUS_PENDING && s_cq == STATUS_PENDING,
                  "%s: closing the PD and the CQ first pends (%s, %s)", name, st_name(s_pd), st_name(s_cq));
            st_close(&pr.ca->Header, cfg.wait_ms);
            st_close(&pr.cb->Header, cfg.wait_ms);
            NTSTATUS c1, c2, c3;
            int a = probe_close(&cqa, &pr.qa->Header, &c1);
            int b = probe_close(&cqb, &pr.qb->Header, &c2);
            int m = probe_close(&cmr, &fr->Header, &c3);
            int qa_done = a == 1 || (a == 2 && probe_wait(&cqa, cfg.wait_ms));
            int qb_done = b == 1 || (b == 2 && probe_wait(&cqb, cfg.wait_ms));
            int mr_done = m == 1 || (m == 2 && probe_wait(&cmr, cfg.wait_ms));
            int pd_done = s_pd == STATUS_SUCCESS || probe_wait(&cpd, cfg.wait_ms);
            int cq_done = s_cq == STATUS_SUCCESS || probe_wait(&ccq, cfg.wait_ms);
            st_ok(qa_done && qb_done && mr_done, "%s: the QPs and the MR close", name);
            st_ok(qa_done && cqa.at_close == k, "%s: the %zu requests outstanding completed before the QP's close did "
                                                "(%zu)", name, k, cqa.at_close);
            st_ok(pd_done && cq_done, "%s: then the PD's and the CQ's closes complete (within %d ms)", name,
                  cfg.wait_ms);
            st_ok(pd_done && cq_done && cpd.order > cqa.order && cpd.order > cqb.order && cpd.order > cmr.order &&
                      ccq.order > cqa.order && ccq.order > cqb.order,
                  "%s: the parents' close callbacks ran after their children's", name);
            char why[320] = "";
            int sq = seq_exact(&log2, qctx, p, k, why, sizeof(why));
            st_ok(sq, "%s: each request completed exactly once, in order%s%s", name, sq ? "" : ": ", why);
            free(p);
        }
        log2.cq = NULL;
        log_free(&log2);
    }

    /* The adapter closed under requests outstanding: it returns, and each completes once. */
    {
        struct stx y;
        if (stx_open(&y, "second")) {
            const char *name = "adapter closed with requests outstanding";
            struct cqlog ly;
            log_init(&ly);
            ly.drain_in_callback = 1;
            NDK_CQ *cy = st_cq(&y, 8192, &ly);
            struct co_env ey;
            memset(&ey, 0, sizeof(ey));
            ey.x = &y;
            struct pair pr;
            void *qctx = CTX(0xc7, 1);
            NDK_MR *fr = NULL;
            int ok = cy && st_buf(&y, &ey.tgt, PAGE_SIZE, 0, -1) &&
                     st_buf(&y, &ey.src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) &&
                     st_buf(&y, &ey.nrm, PAGE_SIZE, 0, NDK_MR_FLAG_ALLOW_REMOTE_WRITE) &&
                     st_pair(&y, cy, 512, qctx, CTX(0xc7, 2), &pr) && (fr = st_mr(&y, y.pd, 1)) != NULL &&
                     st_init_fast(fr, 1, TRUE) == STATUS_SUCCESS;
            if (st_ok(ok, "%s: a second adapter with a connected pair", name)) {
                cy->Dispatch->NdkArmCq(cy, NDK_CQ_NOTIFY_ANY);
                struct posted *p = calloc((size_t)n, sizeof(*p));
                size_t k = post_mix(pr.qa, fr, &ey.tgt, &ey.src, &ey.nrm, n, 0xc8, p);
                int ms = stx_close(&y, 2000);
                ly.cq = NULL;
                if (ms < 0)
                    st_bail("%s: NdkFpgaCloseAdapter did not return within 2000 ms", name);
                st_ok(1, "%s: NdkFpgaCloseAdapter returned in %d ms", name, ms);
                char why[320] = "";
                int sq = seq_exact(&ly, qctx, p, k, why, sizeof(why));
                st_ok(sq, "%s: each of the %zu requests completed exactly once, in order, before it returned%s%s", name,
                      k, sq ? "" : ": ", why);
                why[0] = 0;
                sq = prefix_statuses(&ly, qctx, 1, why, sizeof(why));
                st_ok(sq, "%s: statuses: SUCCESS for those that ran, then CANCELLED or a link status%s%s", name,
                      sq ? "" : ": ", why);
                free(p);
            }
            log_free(&ly);
        }
    }
    st_buf_free(&x, &e.tgt);
    st_buf_free(&x, &e.src);
    st_buf_free(&x, &e.nrm);
    st_ok(st_close(&x.cq->Header, cfg.wait_ms), "CQ closed");
    x.log.cq = NULL;
    st_ok(stx_close(&x, 5000) >= 0, "NdkFpgaCloseAdapter returned");
    log_free(&x.log);
}

/* ========================================================================= */
/* init-fr-dead: NdkInitializeFastRegisterMr without a callback (the call waits) after
 * the link died, and with the link dying while it waits: it returns a link status,
 * and it leaves no reference behind (the MR's and the PD's closes complete). */

struct sync_init {
    NDK_MR *mr;
    NTSTATUS st;
};

static void *sync_init_main(void *p)
{
    struct sync_init *s = p;
    s->st = s->mr->Dispatch->NdkInitializeFastRegisterMr(s->mr, 1, TRUE, NULL, NULL);
    return NULL;
}

/* Wait until the library has noticed the link is gone (a query fails). */
static NTSTATUS wait_dead(struct stx *x, int ms)
{
    uint64_t end = st_now_ms() + (uint64_t)ms;
    NDKFPGA_STATS s;
    NTSTATUS st = STATUS_SUCCESS;
    st_doing("waiting for the library to notice the adapter is gone");
    while (st_now_ms() < end && (st = NdkFpgaQueryStats(x->ad, &s)) == STATUS_SUCCESS)
        st_sleep_ms(5);
    return st;
}

static void close_after_death(struct stx *x, NDK_MR *mr, const char *name)
{
    uint64_t t0 = st_now_ms();
    int mr_closed = st_close(&mr->Header, 2000);
    st_ok(mr_closed, "%s: the MR closes (%llu ms)", name, (unsigned long long)(st_now_ms() - t0));
    st_close(&x->lis->Header, 2000);
    t0 = st_now_ms();
    int pd_closed = st_close(&x->pd->Header, 2000);
    st_ok(pd_closed, "%s: the PD's close completes: no reference left behind (%llu ms)", name,
          (unsigned long long)(st_now_ms() - t0));
    int ms = stx_close(x, 2000);
    if (ms < 0)
        st_bail("%s: NdkFpgaCloseAdapter did not return within 2000 ms", name);
    st_ok(1, "%s: NdkFpgaCloseAdapter returned (%d ms)", name, ms);
}

void case_init_fr_dead(void)
{
    struct stx x;
    if (!stx_open(&x, "first"))
        return;
    const char *name = "after the link died";
    NDK_MR *mr = st_mr(&x, x.pd, 1), *mr_cb = st_mr(&x, x.pd, 1);
    if (!st_ok(mr != NULL && mr_cb != NULL, "%s: two fast-register MRs", name))
        return;
    if (!stx_kill(&x)) {
        st_skip(name, "the adapter's process is not known");
        return;
    }
    NTSTATUS dead = wait_dead(&x, 2000);
    st_ok(dead != STATUS_SUCCESS, "%s: the library notices within 2 s (%s)", name, st_name(dead));
    for (int i = 0; i < 3; i++) {
        struct sync_init *s = calloc(1, sizeof(*s)); /* leaked if the call never returns */
        s->mr = mr;
        s->st = ST_NO_COMPLETION;
        st_doing("NdkInitializeFastRegisterMr without a callback, link dead (call %d)", i + 1);
        int back = st_bounded(sync_init_main, s, 2000);
        if (!back)
            st_bail("%s: NdkInitializeFastRegisterMr without a callback did not return within 2 s (call %d)", name,
                    i + 1);
        st_ok(s->st != STATUS_SUCCESS && s->st != STATUS_PENDING,
              "%s: NdkInitializeFastRegisterMr without a callback returns a failure (call %d: %s)", name, i + 1,
              st_name(s->st));
        free(s);
    }
    uint64_t t0 = st_now_ms();
    int closed = st_close(&mr->Header, 2000);
    st_ok(closed, "%s: the MR given to those calls closes (%llu ms)", name, (unsigned long long)(st_now_ms() - t0));
    NTSTATUS cb = st_init_fast(mr_cb, 1, TRUE);
    st_ok(cb != STATUS_SUCCESS && cb != ST_NO_COMPLETION,
          "%s: with a callback it fails too, inline or through the callback (%s)", name, st_name(cb));
    close_after_death(&x, mr_cb, "after the link died (the PD holds both MRs)");

    /* The link dies while the call waits. */
    name = "the link dies during the call";
    struct stx y;
    if (!stx_open(&y, "second"))
        return;
    NDK_MR *m2 = st_mr(&y, y.pd, 1);
    if (!st_ok(m2 != NULL, "%s: a fast-register MR", name))
        return;
    stx_freeze(&y);
    struct sync_init *s = calloc(1, sizeof(*s));
    s->mr = m2;
    s->st = ST_NO_COMPLETION;
    pthread_t t;
    pthread_create(&t, NULL, sync_init_main, s);
    st_sleep_ms(100);
    stx_kill(&y);
    t0 = st_now_ms();
    st_doing("waiting for NdkInitializeFastRegisterMr (no callback) to return after the link died under it");
    while (s->st == ST_NO_COMPLETION && st_now_ms() - t0 < 2000)
        st_sleep_ms(2);
    NTSTATUS got = __atomic_load_n(&s->st, __ATOMIC_SEQ_CST);
    if (got == ST_NO_COMPLETION)
        st_bail("%s: NdkInitializeFastRegisterMr without a callback still waits 2 s after the link died", name);
    pthread_join(t, NULL);
    st_ok(st_is_link_status(got) || got == STATUS_CONNECTION_INVALID,
          "%s: it returns the link's status within 2 s (%s, %llu ms)", name, st_name(got),
          (unsigned long long)(st_now_ms() - t0));
    free(s);
    close_after_death(&y, m2, name);
}

/* ========================================================================= */
/* frozen: the adapter's process stopped (SIGSTOP). Posting never blocks (each post
 * returns within 50 ms, accepted or refused inline); after SIGCONT every accepted
 * request completes exactly once. Closing a frozen or a killed adapter returns within
 * 2 s, every outstanding request completed exactly once with a link status. */

struct storm {
    NDK_QP *qa;
    const struct sbuf *src, *nrm;
    int n;          /* requests to post (frozen), or until stop (link-death) */
    volatile int stop;
    int pause_us;   /* between posts */
    /* results */
    void **ctx;
    NTSTATUS *st;
    uint64_t *us;   /* how long each post took */
    int posted;     /* posts made */
    int inside;     /* a post is running now (index + 1), 0 otherwise */
    uint64_t inside_since;
    uint32_t tag;
    int cap;
};

static void *storm_main(void *p)
{
    struct storm *s = p;
    UINT32 tok = st_token(s->nrm->mr);
    uint64_t base = (uint64_t)(uintptr_t)st_va(s->nrm, 0);
    for (int i = 0; i < s->cap && (s->n ? i < s->n : !s->stop); i++) {
        void *ctx = CTX(s->tag, i + 1);
        uint64_t t0 = st_now_us();
        __atomic_store_n(&s->inside_since, t0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&s->inside, i + 1, __ATOMIC_SEQ_CST);
        NTSTATUS st = st_post_write(s->qa, ctx, s->src, 16u * (unsigned)(i % 4), 16, base + 16u * (unsigned)(i % 256),
                                    tok, 0);
        __atomic_store_n(&s->inside, 0, __ATOMIC_SEQ_CST);
        s->ctx[i] = ctx;
        s->st[i] = st;
        s->us[i] = st_now_us() - t0;
        __atomic_store_n(&s->posted, i + 1, __ATOMIC_SEQ_CST);
        if (s->pause_us)
            st_sleep_us(s->pause_us);
    }
    return NULL;
}

static void storm_alloc(struct storm *s, int cap)
{
    s->cap = cap;
    s->ctx = calloc((size_t)cap, sizeof(*s->ctx));
    s->st = calloc((size_t)cap, sizeof(*s->st));
    s->us = calloc((size_t)cap, sizeof(*s->us));
    if (!s->ctx || !s->st || !s->us)
        st_bail("out of memory");
}

static void storm_free(struct storm *s)
{
    free(s->ctx);
    free(s->st);
    free(s->us);
}

/* Accepted posts as the expected completion sequence. */
static size_t storm_accepted(const struct storm *s, struct posted *out)
{
    size_t k = 0;
    for (int i = 0; i < s->posted; i++)
        if (s->st[i] == STATUS_SUCCESS) {
            out[k].ctx = s->ctx[i];
            out[k].type = NdkOperationTypeWrite;
            k++;
        }
    return k;
}

/* Statuses of the QP's results: each SUCCESS, or (link_ok) a link status, never
 * SUCCESS after a failure. */
static int results_agree(struct cqlog *log, void *qctx, int link_ok, char *why, size_t whylen, size_t *nsucc)
{
    size_t n = log_results(log, qctx, NULL, 0);
    NDK_RESULT_EX *r = calloc(n + 1, sizeof(*r));
    log_results(log, qctx, r, n);
    int ok = 1, failed = 0;
    *nsucc = 0;
    for (size_t i = 0; i < n && ok; i++) {
        if (r[i].Status == STATUS_SUCCESS) {
            (*nsucc)++;
            if (failed) {
                snprintf(why, whylen, "result %zu SUCCESS after a failed one", i);
                ok = 0;
            }
        } else if (link_ok && st_is_link_status(r[i].Status)) {
            failed = 1;
        } else {
            snprintf(why, whylen, "result %zu (ctx %p) completed %s", i, r[i].RequestContext, st_name(r[i].Status));
            ok = 0;
        }
    }
    free(r);
    return ok;
}

struct frz {
    struct stx x;
    struct cqlog log;
    NDK_CQ *cq;
    struct pair pr;
    struct sbuf src, nrm;
    void *qctx;
};

static int frz_open(struct frz *f, const char *what, int drain_cb, uint32_t tag)
{
    memset(f, 0, sizeof(*f));
    if (!stx_open(&f->x, what))
        return 0;
    log_init(&f->log);
    f->log.drain_in_callback = drain_cb;
    f->qctx = CTX(tag, 0);
    f->cq = st_cq(&f->x, 8192, &f->log);
    int ok = f->cq && st_buf(&f->x, &f->src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) &&
             st_buf(&f->x, &f->nrm, 4 * PAGE_SIZE, 0, NDK_MR_FLAG_ALLOW_REMOTE_WRITE) &&
             st_pair(&f->x, f->cq, 1024, f->qctx, CTX(tag, 0xffff), &f->pr);
    if (ok && drain_cb)
        f->cq->Dispatch->NdkArmCq(f->cq, NDK_CQ_NOTIFY_ANY);
    if (ok && f->x.pid <= 0) {
        st_skip(what, "the adapter's process is not known (an adapter the library did not start)");
        return 0;
    }
    return st_ok(ok, "%s: an adapter with a connected pair, buffers, a normal MR with remote write", what);
}

/* Run a storm while the caller watches every post: returns 1 when the poster
 * finished, 0 when a post stayed inside the library past budget_ms. */
static int storm_run(struct storm *s, int budget_ms, int *max_ms, int *blocked_at)
{
    pthread_t t;
    pthread_create(&t, NULL, storm_main, s);
    uint64_t t0 = st_now_ms();
    *blocked_at = -1;
    for (;;) {
        if (__atomic_load_n(&s->posted, __ATOMIC_SEQ_CST) >= s->n && s->n)
            break;
        int in = __atomic_load_n(&s->inside, __ATOMIC_SEQ_CST);
        uint64_t since = __atomic_load_n(&s->inside_since, __ATOMIC_SEQ_CST);
        if (in && st_now_us() - since > (uint64_t)budget_ms * 1000u) {
            *blocked_at = in - 1;
            break;
        }
        if (st_now_ms() - t0 > (uint64_t)budget_ms * 10u + 5000u) {
            *blocked_at = __atomic_load_n(&s->posted, __ATOMIC_SEQ_CST);
            break;
        }
        st_sleep_ms(1);
    }
    int finished = *blocked_at < 0;
    if (finished)
        pthread_join(t, NULL);
    else
        pthread_detach(t);
    uint64_t mx = 0;
    for (int i = 0; i < s->posted; i++)
        if (s->us[i] > mx)
            mx = s->us[i];
    *max_ms = (int)(mx / 1000u);
    return finished;
}

/* A storm of n posts (0: until stopped) on f's initiator QP, tags from tag, room for
 * cap results. */
static void storm_init(struct storm *s, const struct frz *f, int n, uint32_t tag, int cap)
{
    memset(s, 0, sizeof(*s));
    s->qa = f->pr.qa;
    s->src = &f->src;
    s->nrm = &f->nrm;
    s->n = n;
    s->tag = tag;
    storm_alloc(s, cap);
}

void case_frozen(void)
{
    /* Part 1: posts on a frozen adapter, then SIGCONT. */
    {
        const char *name = "frozen, then resumed";
        struct frz f;
        if (!frz_open(&f, name, 0, 0xf1))
            return;
        const int n = st_n(300, 120, 60);
        struct storm s;
        storm_init(&s, &f, n, 0xf2, n);
        stx_freeze(&f.x);
        uint64_t t0 = st_now_ms();
        int max_ms = 0, blocked = -1;
        st_doing("%s: posting %d writes to a frozen adapter", name, n);
        int finished = storm_run(&s, 2000, &max_ms, &blocked);
        int slow = 0;
        for (int i = 0; i < s.posted; i++)
            slow += s.us[i] > (uint64_t)cfg.post_bound_ms * 1000u;
        if (!finished) {
            st_ok(0, "%s: a post on a frozen adapter blocks: post %d still inside NdkWrite after 2 s (%d posts "
                     "returned before it)",
                  name, blocked, blocked);
            stx_thaw(&f.x);
            uint64_t w0 = st_now_ms();
            while (__atomic_load_n(&s.posted, __ATOMIC_SEQ_CST) < n && st_now_ms() - w0 < 10000)
                st_sleep_ms(5);
            if (__atomic_load_n(&s.posted, __ATOMIC_SEQ_CST) < n)
                st_bail("%s: the poster is still blocked 10 s after SIGCONT", name);
            st_sleep_ms(5);
        } else {
            int accepted = 0;
            NTSTATUS refusal = STATUS_SUCCESS;
            for (int i = 0; i < s.posted; i++) {
                if (s.st[i] == STATUS_SUCCESS)
                    accepted++;
                else
                    refusal = s.st[i];
            }
            st_ok(slow == 0, "%s: %d posts on a frozen adapter, each returned within %d ms (slowest %d ms; %d "
                             "accepted, %d refused inline%s%s)",
                  name, s.posted, cfg.post_bound_ms, max_ms, accepted, s.posted - accepted, refusal ? ": " : "",
                  refusal ? st_name(refusal) : "");
            /* Stay frozen a little longer than the posting took. */
            while (st_now_ms() - t0 < 300)
                st_sleep_ms(5);
            stx_thaw(&f.x);
        }
        struct posted *p = calloc((size_t)n, sizeof(*p));
        size_t k = storm_accepted(&s, p);
        log_wait(&f.log, f.qctx, k, cfg.wait_ms * 2, "the writes posted while frozen, after SIGCONT");
        st_sleep_ms(cfg.sim ? 500 : 50);
        char why[320] = "";
        int sq = seq_exact(&f.log, f.qctx, p, k, why, sizeof(why));
        st_ok(sq, "%s: after SIGCONT each of the %zu accepted requests completed exactly once, in order (refused ones "
                  "never)%s%s",
              name, k, sq ? "" : ": ", why);
        size_t nsucc = 0;
        why[0] = 0;
        sq = results_agree(&f.log, f.qctx, 0, why, sizeof(why), &nsucc);
        st_ok(sq, "%s: every one SUCCESS%s%s", name, sq ? "" : ": ", why);
        free(p);
        storm_free(&s);
        st_pair_close(&f.pr, cfg.wait_ms);
        st_buf_free(&f.x, &f.src);
        st_buf_free(&f.x, &f.nrm);
        st_close(&f.cq->Header, cfg.wait_ms);
        f.log.cq = NULL;
        st_ok(stx_close(&f.x, 5000) >= 0, "%s: NdkFpgaCloseAdapter returned", name);
        log_free(&f.log);
    }
    /* Parts 2 and 3: NdkFpgaCloseAdapter of a frozen, then of a killed adapter. */
    for (int killed = 0; killed < 2; killed++) {
        const char *name = killed ? "closing a killed adapter" : "closing a frozen adapter";
        struct frz f;
        if (!frz_open(&f, name, 1, 0xf3 + (uint32_t)killed))
            return;
        const int n = 5; /* fewer than the link's window: no post waits for room */
        stx_freeze(&f.x);
        struct storm s;
        storm_init(&s, &f, n, 0xf5 + (uint32_t)killed, n);
        int max_ms = 0, blocked = -1;
        if (!storm_run(&s, 2000, &max_ms, &blocked)) {
            stx_kill(&f.x);
            st_bail("%s: post %d blocked on a frozen adapter", name, blocked);
        }
        /* A request with a callback outstanding too. */
        struct st_op *o = op_new();
        NDK_MR *late = NULL;
        NTSTATUS cst = f.x.pd->Dispatch->NdkCreateMr(f.x.pd, TRUE, op_create_cb, o, &late);
        if (killed) {
            stx_kill(&f.x);
            st_sleep_ms(20);
        }
        int ms = stx_close_slow(&f.x, 2000, 14000);
        f.log.cq = NULL;
        if (ms < 0) {
            stx_kill(&f.x);
            st_bail("%s: NdkFpgaCloseAdapter had not returned after 16 s", name);
        }
        st_ok(ms <= 2000, "%s: NdkFpgaCloseAdapter returned in %d ms (at most 2000)", name, ms);
        struct posted p[8];
        size_t k = storm_accepted(&s, p);
        char why[320] = "";
        int sq = seq_exact(&f.log, f.qctx, p, k, why, sizeof(why));
        st_ok(sq, "%s: each of the %zu outstanding requests completed exactly once, in order, before it returned%s%s",
              name, k, sq ? "" : ": ", why);
        size_t nsucc = 0;
        why[0] = 0;
        sq = results_agree(&f.log, f.qctx, 1, why, sizeof(why), &nsucc);
        st_ok(sq && nsucc == 0, "%s: each with a link status (%zu SUCCESS)%s%s", name, nsucc, sq ? "" : ": ", why);
        NTSTATUS got = op_wait(o, cst, 0, NULL);
        st_ok(cst == STATUS_PENDING ? got != STATUS_SUCCESS && got != ST_NO_COMPLETION : cst != STATUS_SUCCESS,
              "%s: the outstanding NdkCreateMr completed with a failure before it returned (%s)", name, st_name(got));
        storm_free(&s);
        log_free(&f.log);
        if (!killed)
            stx_thaw(&f.x); /* in case the library left it */
    }
}

/* ========================================================================= */
/* link-death: SIGKILL of the adapter during a posting storm, repeated. A post is
 * either refused inline (and never completes) or accepted (and completes exactly
 * once); nothing is duplicated, nothing stale arrives later, the close returns. */

void case_link_death(void)
{
    const int reps = st_n(6, 3, 2);
    int all_once = 1, all_status = 1, all_quiet = 1, all_close = 1, all_fast = 1;
    char w_once[400] = "", w_status[400] = "", w_quiet[160] = "", w_close[160] = "", w_fast[160] = "";
    int total_acc = 0, total_ref = 0, total_succ = 0;
    for (int rep = 0; rep < reps; rep++) {
        struct frz f;
        char what[48];
        snprintf(what, sizeof(what), "storm %d", rep + 1);
        if (!frz_open(&f, what, 1, 0x1d0 + (uint32_t)rep))
            return;
        struct storm s;
        storm_init(&s, &f, 0, 0x1e0 + (uint32_t)rep, 200000);
        s.pause_us = 20;
        pthread_t t;
        pthread_create(&t, NULL, storm_main, &s);
        int delay = cfg.sim ? 50 + (int)st_rand_below(300) : 5 + (int)st_rand_below(40);
        st_sleep_ms(delay);
        st_doing("%s: SIGKILL of the adapter after %d ms of posting", what, delay);
        stx_kill(&f.x);
        st_sleep_ms(cfg.sim ? 400 : 100); /* keep posting into the dead link */
        s.stop = 1;
        uint64_t t0 = st_now_ms();
        while (st_now_ms() - t0 < 3000 && __atomic_load_n(&s.inside, __ATOMIC_SEQ_CST))
            st_sleep_ms(1);
        if (__atomic_load_n(&s.inside, __ATOMIC_SEQ_CST))
            st_bail("%s: a post has been inside NdkWrite for 3 s after the adapter was killed", what);
        pthread_join(t, NULL);
        int max_us = 0;
        for (int i = 0; i < s.posted; i++)
            if ((int)s.us[i] > max_us)
                max_us = (int)s.us[i];
        if (max_us > 2000000 && all_fast) {
            all_fast = 0;
            snprintf(w_fast, sizeof(w_fast), "%s: a post took %d ms", what, max_us / 1000);
        }
        struct posted *p = calloc((size_t)s.posted + 1, sizeof(*p));
        size_t k = storm_accepted(&s, p);
        total_acc += (int)k;
        total_ref += s.posted - (int)k;
        log_wait(&f.log, f.qctx, k, 2000, "every accepted request after the link died");
        char why[320] = "";
        if (!seq_exact(&f.log, f.qctx, p, k, why, sizeof(why)) && all_once) {
            all_once = 0;
            snprintf(w_once, sizeof(w_once), "%s: %s", what, why);
        }
        size_t nsucc = 0;
        why[0] = 0;
        if (!results_agree(&f.log, f.qctx, 1, why, sizeof(why), &nsucc) && all_status) {
            all_status = 0;
            snprintf(w_status, sizeof(w_status), "%s: %s", what, why);
        }
        total_succ += (int)nsucc;
        size_t n1 = log_count(&f.log, f.qctx);
        st_sleep_ms(cfg.sim ? 500 : 200);
        size_t n2 = log_count(&f.log, f.qctx);
        if (n2 != n1 && all_quiet) {
            all_quiet = 0;
            snprintf(w_quiet, sizeof(w_quiet), "%s: %zu more results arrived later", what, n2 - n1);
        }
        int ms = stx_close_slow(&f.x, 2000, 14000);
        f.log.cq = NULL;
        if (ms < 0) {
            /* Its thread stays blocked; report what the storms so far showed. */
            all_close = 0;
            snprintf(w_close, sizeof(w_close), "%s: it had not returned after 16 s (no more storms)", what);
            free(p);
            storm_free(&s);
            break;
        }
        size_t n3 = log_count(&f.log, f.qctx);
        if (n3 != n2 && all_quiet) {
            all_quiet = 0;
            snprintf(w_quiet, sizeof(w_quiet), "%s: %zu more results arrived during the close", what, n3 - n2);
        }
        if (ms > 2000 && all_close) {
            all_close = 0;
            snprintf(w_close, sizeof(w_close), "%s: %d ms", what, ms);
        }
        free(p);
        storm_free(&s);
        log_free(&f.log);
    }
    st_ok(all_fast, "%d storms: no post blocked on the dying link%s%s", reps, all_fast ? "" : ": ", w_fast);
    st_ok(all_once, "%d storms (%d accepted, %d refused inline): every accepted request completed exactly once, in "
                    "order; no refused one ever did%s%s",
          reps, total_acc, total_ref, all_once ? "" : ": ", w_once);
    st_ok(all_status, "%d storms: statuses SUCCESS (%d) until the death, then a link status, never SUCCESS after%s%s",
          reps, total_succ, all_status ? "" : ": ", w_status);
    st_ok(all_quiet, "%d storms: no stale completion after all were delivered%s%s", reps, all_quiet ? "" : ": ",
          w_quiet);
    st_ok(all_close, "%d storms: NdkFpgaCloseAdapter of the dead adapter returned within 2 s%s%s", reps,
          all_close ? "" : ": ", w_close);
}
