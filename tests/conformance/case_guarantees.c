/* SPDX-License-Identifier: Apache-2.0 */
/* Guarantees (docs/guarantees.md): every accepted request completes exactly once,
 * refused ones never; posting never waits; closes never pend forever. Each case runs on
 * a private adapter it may stop or kill, with randomized timing, bounded in seconds. */
#include <signal.h>
#include <sys/wait.h>

#include "conformance.h"

/* Post request i of a stream: even ones fast-register, odd ones invalidate (so each
 * succeeds while the QP is healthy); the request context is i + 1. */
static NTSTATUS post_i(NDK_QP *q, NDK_MR *fr, NDK_LOGICAL_ADDRESS page, uint32_t i, ULONG flags)
{
    if (i % 2 == 0)
        return q->Dispatch->NdkFastRegister(q, (PVOID)(uintptr_t)(i + 1), fr, 1, &page, 0, 64, (PVOID)0x1000, flags);
    return q->Dispatch->NdkInvalidate(q, (PVOID)(uintptr_t)(i + 1), &fr->Header, flags);
}

/* Drain the CQ into per-context counts until want results arrived or timeout_ms
 * passed with nothing new; returns the number of results. */
static uint32_t drain_counts(NDK_CQ *c, uint8_t *count, uint32_t n, uint32_t want, int timeout_ms, uint32_t *bad)
{
    uint32_t got = 0;
    uint64_t last = now_ms();
    while (got < want || now_ms() - last < 20) {
        NDK_RESULT_EX r[16];
        ULONG k = c->Dispatch->NdkGetCqResultsEx(c, r, 16);
        for (ULONG j = 0; j < k; j++) {
            uintptr_t ctx = (uintptr_t)r[j].RequestContext;
            if (ctx >= 1 && ctx <= n && count[ctx - 1] < 255)
                count[ctx - 1]++;
            else
                (*bad)++;
        }
        got += k;
        if (k) {
            last = now_ms();
            continue;
        }
        if (now_ms() - last > (uint64_t)timeout_ms)
            break;
        sleep_ms(1);
    }
    return got;
}

/* What a run's completions say against what was accepted: requests accepted that never
 * completed (lost), completed more than once (dup), completed without being accepted
 * or with an unknown context (extra). */
struct tally {
    int lost, dup, extra;
};

static void tally_run(NDK_CQ *c, const uint8_t *accepted, uint8_t *count, uint32_t n, uint32_t acc, struct tally *t)
{
    uint32_t bad = 0;
    drain_counts(c, count, n, acc, 3000, &bad);
    for (uint32_t i = 0; i < n; i++) {
        t->lost += accepted[i] && count[i] == 0;
        t->dup += count[i] > 1;
        t->extra += !accepted[i] && count[i] > 0;
    }
    t->extra += (int)bad;
}

static uint32_t rnd_state = 12345;
static uint32_t rnd(void)
{
    rnd_state = rnd_state * 1103515245u + 12345u;
    return rnd_state >> 8;
}

/* ---- CQ overflow: reported, never silent ---- */
static int ovf_calls;
static NTSTATUS ovf_status;
static VOID ovf_notify(PVOID ctx, NTSTATUS st)
{
    (void)ctx;
    conf_note_thread();
    pthread_mutex_lock(&conf_global);
    ovf_calls++;
    ovf_status = st;
    pthread_mutex_unlock(&conf_global);
}

static void test_cq_overflow(void)
{
    for (int armed = 0; armed < 2; armed++) {
        struct priv p;
        if (!conf_ok(priv_open(&p, 4, ovf_notify, NULL), "CQ overflow: private adapter"))
            return;
        pthread_mutex_lock(&conf_global);
        ovf_calls = 0;
        ovf_status = 0;
        pthread_mutex_unlock(&conf_global);
        struct pair pr;
        if (!priv_pair_fr_setup(&p, 64, "CQ overflow", &pr))
            return;
        if (armed)
            cq->Dispatch->NdkArmCq(cq, NDK_CQ_NOTIFY_ANY);
        int posted = 0;
        for (uint32_t i = 0; i < 16; i++)
            posted += post_i(pr.qa, p.fr, p.page, i, 0) == STATUS_SUCCESS;
        uint64_t t0 = now_ms();
        int calls = 0;
        NTSTATUS st = 0;
        while (now_ms() - t0 < 3000) {
            pthread_mutex_lock(&conf_global);
            calls = ovf_calls;
            st = ovf_status;
            pthread_mutex_unlock(&conf_global);
            if (calls && st == STATUS_BUFFER_OVERFLOW)
                break;
            sleep_ms(5);
        }
        sleep_ms(100); /* a second notification would come now */
        pthread_mutex_lock(&conf_global);
        calls = ovf_calls;
        pthread_mutex_unlock(&conf_global);
        int ovf_seen = calls >= 1 && st == STATUS_BUFFER_OVERFLOW;
        /* Posts after the overflow (it may come while posting) are refused: more than 4 got in. */
        conf_ok(posted > 4 && ovf_seen && (armed ? calls <= 2 : calls == 1),
                "CQ overflow (%s): %d completions into a CQ of 4 notify STATUS_BUFFER_OVERFLOW once (%d calls, last %s)",
                armed ? "armed" : "not armed", posted, calls, NdkFpgaStatusName(st));
        NDK_RESULT_EX r[8];
        ULONG n = cq->Dispatch->NdkGetCqResultsEx(cq, r, 8);
        NTSTATUS after = post_i(pr.qa, p.fr, p.page, 16, 0);
        conf_ok(n <= 4 && after == STATUS_CANCELLED,
                "CQ overflow: the CQ holds what it held (%u), its QP refuses new work inline with CANCELLED (%s)",
                (unsigned)n, NdkFpgaStatusName(after));
        NDKFPGA_COUNTER cnt[256];
        ULONG ncnt = 256;
        UINT64 ovf = 0;
        if (NdkFpgaQueryCounters(ad, cnt, &ncnt) == STATUS_SUCCESS)
            for (ULONG i = 0; i < ncnt; i++)
                if (cnt[i].Group == NDKFPGA_COUNTER_HOST && !strcmp(cnt[i].Name, "cq_overflows"))
                    ovf = cnt[i].Value;
        conf_ok(ovf == 1, "CQ overflow: NdkFpgaQueryCounters counts it (host cq_overflows = %llu)",
                (unsigned long long)ovf);
        uint64_t dt = priv_close(&p);
        conf_ok(dt < 2000, "CQ overflow: NdkFpgaCloseAdapter returns (%llu ms)", (unsigned long long)dt);
    }
}

/* ---- NdkFlush concurrent with posting ---- */
struct flush_race {
    NDK_QP *q;
    uint32_t flush_after;
    int go;
};

static void *flush_thread(void *arg)
{
    struct flush_race *f = arg;
    while (!__atomic_load_n(&f->go, __ATOMIC_ACQUIRE))
        ;
    for (volatile uint32_t spin = 0; spin < f->flush_after; spin++)
        ;
    f->q->Dispatch->NdkFlush(f->q);
    return NULL;
}

static void test_flush_race(void)
{
    struct priv p;
    if (!priv_start(&p, 1024, "flush race"))
        return;
    if (!conf_ok(fr_setup(&p), "flush race: fast MR")) {
        priv_close(&p);
        return;
    }
    enum { N = 200 };
    int trials = 60, slow_posts = 0;
    struct tally tl = {0, 0, 0};
    uint8_t accepted[N], count[N];
    uint64_t t_start = now_ms();
    int t;
    for (t = 0; t < trials && now_ms() - t_start < 8000; t++) {
        struct pair pr;
        int ok = connect_pair_depth(p.pd, 256, &pr);
        if (!ok)
            break;
        struct flush_race f = {pr.qa, rnd() % 200000u, 0};
        memset(accepted, 0, sizeof(accepted));
        memset(count, 0, sizeof(count));
        pthread_t th;
        pthread_create(&th, NULL, flush_thread, &f);
        uint32_t acc = 0;
        __atomic_store_n(&f.go, 1, __ATOMIC_RELEASE);
        for (uint32_t i = 0; i < N; i++) {
            uint64_t t0 = now_ms();
            NTSTATUS st = post_i(pr.qa, p.fr, p.page, i, (rnd() % 4 == 0) ? NDK_OP_FLAG_DEFER : 0);
            slow_posts += now_ms() - t0 > 500;
            if (st == STATUS_SUCCESS) {
                accepted[i] = 1;
                acc++;
            }
        }
        pthread_join(th, NULL);
        tally_run(cq, accepted, count, N, acc, &tl);
        close_pair(&pr);
    }
    conf_ok(t > 0 && tl.lost == 0 && tl.dup == 0 && tl.extra == 0 && slow_posts == 0,
            "NdkFlush concurrent with posting, %d trials x %d posts: every accepted request completes once "
            "(%d lost, %d twice, %d after an inline refusal, %d posts waited)",
            t, N, tl.lost, tl.dup, tl.extra, slow_posts);
    uint64_t dt = priv_close(&p);
    conf_ok(dt < 2000, "flush race: NdkFpgaCloseAdapter returns (%llu ms)", (unsigned long long)dt);
}

/* ---- link death while posting ---- */
struct poster {
    NDK_QP *q;
    NDK_MR *fr;
    NDK_LOGICAL_ADDRESS page;
    uint32_t n;
    uint8_t *accepted;
    uint32_t max_post_ms;
};

static void *poster_thread(void *arg)
{
    struct poster *ps = arg;
    for (uint32_t i = 0; i < ps->n; i++) {
        uint64_t t0 = now_ms();
        NTSTATUS st = post_i(ps->q, ps->fr, ps->page, i, (i % 3 == 1) ? NDK_OP_FLAG_DEFER : 0);
        uint32_t dt = (uint32_t)(now_ms() - t0);
        if (dt > ps->max_post_ms)
            ps->max_post_ms = dt;
        ps->accepted[i] = st == STATUS_SUCCESS;
        if (st == STATUS_INSUFFICIENT_RESOURCES) /* the ring is full: let completions drain */
            sleep_ms(1);
    }
    return NULL;
}

static void test_death_while_posting(void)
{
    enum { N = 3000 };
    static uint8_t accepted[N], count[N];
    int trials = 8, t, slow_close = 0;
    struct tally tl = {0, 0, 0};
    uint32_t max_post = 0;
    for (t = 0; t < trials; t++) {
        struct priv p;
        if (!priv_open(&p, 4096, NULL, NULL))
            break;
        struct pair pr;
        int ok = pair_fr_setup(&p, 1024, &pr);
        if (!ok) {
            priv_close(&p);
            break;
        }
        memset(accepted, 0, sizeof(accepted));
        memset(count, 0, sizeof(count));
        struct poster ps = {pr.qa, p.fr, p.page, N, accepted, 0};
        pthread_t th;
        pthread_create(&th, NULL, poster_thread, &ps);
        sleep_ms((int)(rnd() % 40));
        if (t % 2)
            kill(p.pid, SIGSTOP), sleep_ms((int)(rnd() % 20));
        priv_kill(&p);
        pthread_join(th, NULL);
        uint32_t acc = 0;
        for (uint32_t i = 0; i < N; i++)
            acc += accepted[i];
        tally_run(cq, accepted, count, N, acc, &tl);
        if (ps.max_post_ms > max_post)
            max_post = ps.max_post_ms;
        slow_close += priv_close(&p) >= 2000;
    }
    conf_ok(t == trials && tl.lost == 0 && tl.dup == 0 && tl.extra == 0 && slow_close == 0 && max_post < 500,
            "link death while posting, %d trials: every accepted request completes once, refused ones never "
            "(%d lost, %d twice, %d after an inline refusal; longest post %u ms; %d slow closes)",
            t, tl.lost, tl.dup, tl.extra, (unsigned)max_post, slow_close);
}

/* ---- a frozen adapter: posting never waits; deadlines; close ---- */
struct freeze_post {
    NDK_QP *q;
    NDK_MR *fr;
    NDK_LOGICAL_ADDRESS page;
    int done, accepted;
};

static void *freeze_poster(void *arg)
{
    struct freeze_post *f = arg;
    int acc = 0;
    for (uint32_t i = 0; i < 9; i++)
        acc += post_i(f->q, f->fr, f->page, i, 0) == STATUS_SUCCESS;
    f->accepted = acc;
    __atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void test_frozen(void)
{
    struct priv p;
    if (!priv_start(&p, 1024, "frozen adapter"))
        return;
    struct pair pr;
    if (!priv_pair_fr_setup(&p, 64, "frozen adapter", &pr))
        return;
    /* Fill the link's window while the adapter is frozen, then post on an idle QP. */
    kill(p.pid, SIGSTOP);
    struct freeze_post f = {pr.qa, p.fr, p.page, 0, 0};
    pthread_t th;
    uint64_t t0 = now_ms();
    pthread_create(&th, NULL, freeze_poster, &f);
    while (!__atomic_load_n(&f.done, __ATOMIC_ACQUIRE) && now_ms() - t0 < 2000)
        sleep_ms(1);
    int done = __atomic_load_n(&f.done, __ATOMIC_ACQUIRE);
    uint64_t dt = now_ms() - t0;
    conf_ok(done && f.accepted == 9 && dt < 500,
            "frozen adapter: 9 posts on an idle QP return at once, accepted (%llu ms, %d accepted)",
            (unsigned long long)dt, f.accepted);
    /* A request and a deferred work request outstanding, then the adapter thaws. */
    struct waiter w;
    w_init(&w);
    NDK_MR *late = NULL;
    NTSTATUS cst = ASYNC(&w, p.pd->Dispatch->NdkCreateMr(p.pd, TRUE, create_cb, &w, &late));
    NTSTATUS dst = post_i(pr.qa, p.fr, p.page, 9, NDK_OP_FLAG_DEFER);
    kill(p.pid, SIGCONT);
    if (!done) {
        pthread_join(th, NULL); /* blocked until the thaw */
    } else {
        pthread_join(th, NULL);
    }
    uint8_t count[10] = {0};
    uint32_t bad = 0;
    drain_counts(cq, count, 10, 10, 3000, &bad);
    int once = 1;
    for (int i = 0; i < 10; i++)
        once &= count[i] == 1;
    NTSTATUS got = w_wait(&w, cst);
    conf_ok(cst == STATUS_PENDING && got == STATUS_SUCCESS && dst == STATUS_SUCCESS && once && bad == 0,
            "frozen then thawed: the queued posts, a deferred one with nothing after it and a request all complete "
            "once (%s)", NdkFpgaStatusName(got));
    if (late)
        close_obj(&late->Header);
    /* Frozen again with work outstanding: the close returns within 2 s, the
     * outstanding request's callback runs once. */
    kill(p.pid, SIGSTOP);
    post_i(pr.qa, p.fr, p.page, 0, 0);
    w_init(&w);
    late = NULL;
    cst = ASYNC(&w, p.pd->Dispatch->NdkCreateMr(p.pd, TRUE, create_cb, &w, &late));
    dt = priv_close(&p);
    got = w_wait(&w, cst);
    conf_ok(dt < 2000 && cst == STATUS_PENDING && got != STATUS_SUCCESS && got != STATUS_IO_TIMEOUT + 1,
            "frozen adapter: NdkFpgaCloseAdapter returns in %llu ms, the outstanding request completed (%s)",
            (unsigned long long)dt, NdkFpgaStatusName(got));
}

/* ---- deadlines: an adapter that never answers ---- */
struct nested {
    NDK_PD *pd;
    NTSTATUS outer, inner;
    int done;
};

/* A completion callback that makes a synchronous call (no callback given). */
static VOID nested_cb(PVOID ctx, NTSTATUS st)
{
    struct nested *n = ctx;
    conf_note_thread();
    NDK_MR *mr = NULL;
    NTSTATUS in = n->pd->Dispatch->NdkCreateMr(n->pd, TRUE, NULL, NULL, &mr);
    pthread_mutex_lock(&conf_global);
    n->outer = st;
    n->inner = in;
    n->done = 1;
    pthread_mutex_unlock(&conf_global);
}

static void test_deadlines(void)
{
    setenv("NDKFPGA_REQUEST_TIMEOUT_MS", "400", 1);
    setenv("NDKFPGA_LINK_TIMEOUT_MS", "60000", 1);
    struct priv p;
    int opened = priv_open(&p, 64, NULL, NULL);
    unsetenv("NDKFPGA_REQUEST_TIMEOUT_MS");
    unsetenv("NDKFPGA_LINK_TIMEOUT_MS");
    if (!conf_ok(opened, "deadlines: private adapter"))
        return;
    struct pair pr;
    if (!priv_pair_fr_setup(&p, pair_depth, "deadlines", &pr))
        return;
    /* A silent request outstanding longer than the deadline does not make the next
     * request that reports a completion time out at once. */
    NTSTATUS s1 = post_i(pr.qa, p.fr, p.page, 100, NDK_OP_FLAG_SILENT_SUCCESS);
    sleep_ms(700);
    NTSTATUS s2 = post_i(pr.qa, p.fr, p.page, 101, 0);
    NDK_RESULT_EX r0;
    int have0 = cq_wait(cq, &r0, 3000);
    conf_ok(s1 == STATUS_SUCCESS && s2 == STATUS_SUCCESS && have0 && r0.Status == STATUS_SUCCESS &&
                r0.RequestContext == (PVOID)102,
            "deadlines: a request after a silent one that waited past the deadline completes normally (%s)",
            have0 ? NdkFpgaStatusName(r0.Status) : "nothing");
    kill(p.pid, SIGSTOP);
    uint64_t t0 = now_ms();
    NTSTATUS ps = post_i(pr.qa, p.fr, p.page, 0, 0);
    struct waiter w;
    w_init(&w);
    NTSTATUS st = ASYNC(&w, p.fr->Dispatch->NdkInitializeFastRegisterMr(p.fr, 1, TRUE, req_cb, &w));
    NTSTATUS got = w_wait(&w, st);
    NDK_RESULT_EX r;
    int have = cq_wait(cq, &r, 3000);
    uint64_t dt = now_ms() - t0;
    conf_ok(ps == STATUS_SUCCESS && st == STATUS_PENDING && got == STATUS_IO_TIMEOUT && have &&
                r.Status == STATUS_IO_TIMEOUT && r.RequestContext == (PVOID)1 && dt < 3000,
            "deadlines: a request and a work request the adapter never answers complete STATUS_IO_TIMEOUT "
            "(%s, %s, %llu ms)", NdkFpgaStatusName(got), have ? NdkFpgaStatusName(r.Status) : "nothing",
            (unsigned long long)dt);
    /* A synchronous call from a callback: the callback thread cannot enforce its
     * deadline, the waiting call does. */
    struct nested nest = {p.pd, 0, 0, 0};
    t0 = now_ms();
    st = p.fr->Dispatch->NdkInitializeFastRegisterMr(p.fr, 1, TRUE, nested_cb, &nest);
    int nd = 0;
    while (!nd && now_ms() - t0 < 4000) {
        sleep_ms(10);
        pthread_mutex_lock(&conf_global);
        nd = nest.done;
        pthread_mutex_unlock(&conf_global);
    }
    conf_ok(st == STATUS_PENDING && nd && nest.outer == STATUS_IO_TIMEOUT && nest.inner == STATUS_IO_TIMEOUT,
            "deadlines: a synchronous call made from a callback is bounded too (%s, %s, %llu ms)",
            NdkFpgaStatusName(nest.outer), NdkFpgaStatusName(nest.inner), (unsigned long long)(now_ms() - t0));
    kill(p.pid, SIGCONT);
    sleep_ms(200);
    conf_ok(!cq_wait(cq, &r, 300), "deadlines: the late answer is not a second completion");
    uint64_t cdt = priv_close(&p);
    conf_ok(cdt < 2000, "deadlines: NdkFpgaCloseAdapter returns (%llu ms)", (unsigned long long)cdt);
}

/* ---- closes: a QP with work outstanding; an MR after the link died ---- */
static void test_closes(void)
{
    struct priv p;
    if (!priv_start(&p, 1024, "closes"))
        return;
    int lost = 0, dup = 0, pend_ok = 1, trials = 20;
    for (int t = 0; t < trials; t++) {
        struct pair pr;
        int ok = pair_fr_setup(&p, 64, &pr);
        if (!ok) {
            pend_ok = 0;
            break;
        }
        uint8_t acc[40] = {0}, count[40] = {0};
        uint32_t n = 1 + rnd() % 40;
        for (uint32_t i = 0; i < n; i++)
            acc[i] = post_i(pr.qa, p.fr, p.page, i, (rnd() % 2) ? NDK_OP_FLAG_DEFER : 0) == STATUS_SUCCESS;
        struct waiter w;
        w_init(&w);
        NTSTATUS st = ASYNC(&w, NdkCloseObject(&pr.qa->Header, close_cb, &w));
        pend_ok &= w_wait(&w, st) == STATUS_SUCCESS;
        /* Everything completed before the close did: the CQ holds it all now. */
        NDK_RESULT_EX r[64];
        ULONG k = cq->Dispatch->NdkGetCqResultsEx(cq, r, 64);
        for (ULONG j = 0; j < k; j++) {
            uintptr_t c = (uintptr_t)r[j].RequestContext;
            if (c >= 1 && c <= 40)
                count[c - 1]++;
        }
        for (uint32_t i = 0; i < n; i++) {
            lost += acc[i] && count[i] == 0;
            dup += count[i] > 1;
        }
        pr.qa = NULL;
        close_pair(&pr);
        close_obj(&p.fr->Header);
    }
    conf_ok(pend_ok && lost == 0 && dup == 0,
            "closing a QP with requests outstanding: each completes once before the close does, %d trials "
            "(%d lost, %d twice)", trials, lost, dup);
    /* Link death, then NdkInitializeFastRegisterMr without a callback: the MR and its
     * PD still close. */
    NDK_MR *mr = new_mr(p.pd, 1);
    priv_kill(&p);
    sleep_ms(100);
    NTSTATUS st = mr ? mr->Dispatch->NdkInitializeFastRegisterMr(mr, 1, TRUE, NULL, NULL) : STATUS_SUCCESS;
    struct waiter wm, wp;
    w_init(&wm);
    w_init(&wp);
    NTSTATUS sm = mr ? ASYNC(&wm, NdkCloseObject(&mr->Header, close_cb, &wm)) : STATUS_INTERNAL_ERROR;
    int saved = conf_timeout_ms;
    conf_timeout_ms = 2000;
    NTSTATUS gm = w_wait(&wm, sm);
    NTSTATUS sp = ASYNC(&wp, NdkCloseObject(&p.pd->Header, close_cb, &wp));
    NTSTATUS gp = w_wait(&wp, sp);
    conf_timeout_ms = saved;
    conf_ok(st != STATUS_SUCCESS && st != STATUS_PENDING && gm == STATUS_SUCCESS && gp == STATUS_SUCCESS,
            "after link death, NdkInitializeFastRegisterMr without a callback fails inline (%s); the MR's close (%s) "
            "and the PD's close (%s) complete", NdkFpgaStatusName(st), NdkFpgaStatusName(gm), NdkFpgaStatusName(gp));
    priv_close(&p);
}

/* ---- MDLs and objects: only this adapter's own, live ones ---- */
static void test_foreign(void)
{
    MDL *mine = NULL;
    NdkFpgaAllocateBuffer(ad, PAGE_SIZE, &mine);
    struct priv p;
    if (!conf_ok(mine && priv_open(&p, 16, NULL, NULL), "foreign objects: a second adapter"))
        return;
    MDL *theirs = NULL;
    NdkFpgaAllocateBuffer(ad, PAGE_SIZE, &theirs); /* ad is the private adapter now */
    NDK_ADAPTER *first = p.saved_ad;
    uint8_t x[16] = {1, 2, 3};
    MDL copy = *mine;
    conf_ok(theirs && NdkFpgaWriteBuffer(first, theirs, 0, x, 16) == STATUS_INVALID_PARAMETER &&
                NdkFpgaReadBuffer(first, theirs, 0, x, 16) == STATUS_INVALID_PARAMETER,
            "NdkFpgaWrite/ReadBuffer with another adapter's MDL: INVALID_PARAMETER");
    conf_ok(NdkFpgaWriteBuffer(first, &copy, 0, x, 16) == STATUS_INVALID_PARAMETER &&
                NdkFpgaReadBuffer(first, &copy, 0, x, 16) == STATUS_INVALID_PARAMETER,
            "NdkFpgaWrite/ReadBuffer with a hand-made MDL (same pages as one of ours): INVALID_PARAMETER");
    conf_ok(NdkFpgaWriteBuffer(first, mine, 0, x, 16) == STATUS_SUCCESS, "NdkFpgaWriteBuffer with our own MDL");
    NDK_QP *q = NULL;
    NTSTATUS st = pd->Dispatch->NdkCreateQp(pd, p.cq, p.cq, NULL, 0, 4, 0, 1, 0, NULL, NULL, &q);
    conf_ok(st == STATUS_INVALID_PARAMETER && !q, "NdkCreateQp with another adapter's CQ: INVALID_PARAMETER (%s)",
            NdkFpgaStatusName(st));
    NDK_PD fake_pd = *pd;
    NDK_MR *mr = NULL;
    st = fake_pd.Dispatch->NdkCreateMr(&fake_pd, TRUE, NULL, NULL, &mr);
    conf_ok(st == STATUS_INVALID_PARAMETER && !mr, "NdkCreateMr on a hand-made PD: INVALID_PARAMETER (%s)",
            NdkFpgaStatusName(st));
    NdkFpgaFreeBuffer(ad, theirs);
    priv_close(&p);
    NdkFpgaFreeBuffer(ad, mine);
}

/* ---- a new QP's first request waits for the adapter, not for a stale clock ---- */
static void test_fresh_qp(void)
{
    struct priv p;
    if (!priv_start(&p, 64, "fresh QP"))
        return;
    int ok = fr_setup(&p), wrong = 0, t;
    for (t = 0; ok && t < 16; t++) {
        struct pair pr;
        if (!connect_pair(p.pd, &pr))
            break;
        NTSTATUS st = post_i(pr.qa, p.fr, p.page, 0, 0);
        kill(p.pid, SIGSTOP); /* the deadline scan sees it outstanding */
        sleep_ms(150);
        kill(p.pid, SIGCONT);
        NDK_RESULT_EX r;
        wrong += st != STATUS_SUCCESS || !cq_wait(cq, &r, 3000) || r.Status != STATUS_SUCCESS;
        post_i(pr.qa, p.fr, p.page, 1, NDK_OP_FLAG_SILENT_SUCCESS);
        close_pair(&pr);
    }
    conf_ok(t == 16 && wrong == 0,
            "a new QP's first request, delayed 150 ms by the adapter, completes SUCCESS (%d of %d did not)", wrong, t);
    priv_close(&p);
}

/* Link death: a software adapter of our own is stopped with requests and work
 * requests outstanding, then killed: every one completes with an error status,
 * new requests fail inline, and closing the adapter returns. */
void test_link_death(void)
{
    struct priv p;
    if (!conf_ok(priv_open(&p, 64, NULL, NULL), "link death: open a private software adapter"))
        return;
    struct pair pr;
    if (pair_fr_setup(&p, pair_depth, &pr)) {
        kill(p.pid, SIGSTOP); /* the adapter stops answering */
        int posted = 0;
        posted += pr.qa->Dispatch->NdkFastRegister(pr.qa, (PVOID)1, p.fr, 1, &p.page, 0, 64, (PVOID)0x1000, 0) ==
                  STATUS_SUCCESS;
        posted += pr.qa->Dispatch->NdkInvalidate(pr.qa, (PVOID)2, &p.fr->Header, 0) == STATUS_SUCCESS;
        struct waiter w;
        w_init(&w);
        NDK_MR *late = NULL;
        NTSTATUS cst = ASYNC(&w, p.pd->Dispatch->NdkCreateMr(p.pd, TRUE, create_cb, &w, &late));
        conf_ok(posted == 2 && cst == STATUS_PENDING, "link death: work requests and a request outstanding");
        sleep_ms(50);
        priv_kill(&p);
        NTSTATUS got = w_wait(&w, cst);
        conf_ok(got != STATUS_SUCCESS && got != STATUS_IO_TIMEOUT && !w.obj,
                "link death: the outstanding NdkCreateMr completes with an error (%s)", NdkFpgaStatusName(got));
        NDK_RESULT_EX r1 = next_result(), r2 = next_result();
        conf_ok(r1.RequestContext == (PVOID)1 && r2.RequestContext == (PVOID)2 && r1.Status != STATUS_SUCCESS &&
                    r2.Status != STATUS_SUCCESS && r1.Status != STATUS_IO_TIMEOUT && r2.Status != STATUS_IO_TIMEOUT,
                "link death: both outstanding work requests complete with an error (%s, %s)",
                NdkFpgaStatusName(r1.Status), NdkFpgaStatusName(r2.Status));
        NTSTATUS st = pr.qa->Dispatch->NdkInvalidate(pr.qa, (PVOID)3, &p.fr->Header, 0);
        conf_ok(st != STATUS_SUCCESS && st != STATUS_PENDING, "link death: a new work request fails inline (%s)",
                NdkFpgaStatusName(st));
        w_init(&w);
        st = ASYNC(&w, p.fr->Dispatch->NdkInitializeFastRegisterMr(p.fr, 1, TRUE, req_cb, &w));
        st = w_wait(&w, st);
        conf_ok(st != STATUS_SUCCESS && st != STATUS_IO_TIMEOUT, "link death: a new request fails (%s)",
                NdkFpgaStatusName(st));
    } else {
        conf_ok(0, "link death: connected QPs on the private adapter");
    }
    uint64_t dt = priv_close(&p); /* children left open: freed without callbacks */
    conf_ok(dt < 10000, "link death: NdkFpgaCloseAdapter returns (%llu ms)", (unsigned long long)dt);
}

void test_guarantees(void)
{
    test_foreign();
    test_fresh_qp();
    test_cq_overflow();
    test_frozen();
    test_deadlines();
    test_closes();
    test_flush_race();
    test_death_while_posting();
}
