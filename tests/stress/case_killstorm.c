/* SPDX-License-Identifier: Apache-2.0 */
/* kill-storm: the adapter's process killed (SIGKILL) at a random moment while two
 * threads post work requests (some deferred) on QPs of their own and a third copies a
 * buffer out with NdkFpgaReadBuffer; many short trials. Every request posted is
 * counted: a refused one never completes; an accepted one completes exactly once, in
 * order on its QP, SUCCESS or the link's status, within a bound of the kill; the read
 * in progress returns SUCCESS or the link's status, within the bound too. */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress.h"

#define CTX(a, b) ((void *)(uintptr_t)(((uint64_t)(a) << 32) | (uint64_t)(b)))
#define POSTERS 2
#define READ_BYTES (64u * 1024u)

struct poster {
    NDK_QP *qp;
    const struct sbuf *src, *dst;
    uint32_t tag;
    uint32_t seed;
    volatile int stop;
    int cap, posted;
    void **ctx;
    NTSTATUS *st;
    int *type;
};

/* Writes and reads, about a third deferred, until stopped; a full QP is a refusal
 * like any other (it never completes). */
static void *poster_main(void *p)
{
    struct poster *s = p;
    UINT32 tok = st_token(s->dst->mr);
    uint64_t base = (uint64_t)(uintptr_t)st_va(s->dst, 0);
    uint32_t r = s->seed * 2654435761u + 1u;
    for (int i = 0; i < s->cap && !s->stop; i++) {
        r = r * 1103515245u + 12345u;
        ULONG flags = (r >> 16) % 3u == 0 ? NDK_OP_FLAG_DEFER : 0;
        int read = (r >> 20) % 4u == 0;
        void *ctx = CTX(s->tag, i + 1);
        size_t off = 16u * (unsigned)(i % 4);
        uint64_t raddr = base + 16u * (unsigned)(i % 256);
        NTSTATUS st = read ? st_post_read(s->qp, ctx, s->src, off, 16, raddr, tok, flags)
                           : st_post_write(s->qp, ctx, s->src, off, 16, raddr, tok, flags);
        s->ctx[i] = ctx;
        s->st[i] = st;
        s->type[i] = read ? NdkOperationTypeRead : NdkOperationTypeWrite;
        __atomic_store_n(&s->posted, i + 1, __ATOMIC_SEQ_CST);
        if (st == STATUS_INSUFFICIENT_RESOURCES)
            sched_yield(); /* the QP is full: let completions come */
    }
    return NULL;
}

struct reader {
    NDK_ADAPTER *ad;
    MDL *mdl;
    uint8_t *buf;
    volatile int stop;
    int reads;
    NTSTATUS last;   /* the status of the last read (the one the kill met) */
    NTSTATUS bad;    /* a status that is neither SUCCESS nor the link's (0: none) */
    uint64_t end_ms; /* when the last read returned */
};

static void *reader_main(void *p)
{
    struct reader *r = p;
    while (!r->stop) {
        NTSTATUS st = NdkFpgaReadBuffer(r->ad, r->mdl, 0, r->buf, READ_BYTES);
        r->reads++;
        __atomic_store_n(&r->end_ms, st_now_ms(), __ATOMIC_SEQ_CST);
        __atomic_store_n(&r->last, st, __ATOMIC_SEQ_CST);
        if (st != STATUS_SUCCESS && !st_is_link_status(st) && !r->bad)
            r->bad = st;
        if (st_is_link_status(st))
            break; /* the link is gone: later calls are refused inline */
    }
    return NULL;
}

/* Totals over the trials, and the first failure of each kind. */
struct tally {
    long posted, accepted, refused, succ, link;
    int reads_ok, reads_link;
    int slowest_ms, slowest_read_ms;
    int fails;
    char why[600];
};

static void fail(struct tally *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct tally *t, const char *fmt, ...)
{
    if (t->fails++ < 5) {
        char why[sizeof(t->why)];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        st_note("%s", why);
        if (t->fails == 1)
            memcpy(t->why, why, sizeof(why));
    }
}

/* One trial: 1 when it ran (its findings in t), 0 when the adapter could not be set up. */
static int trial(int n, struct tally *t, int bound_ms)
{
    char what[40];
    snprintf(what, sizeof(what), "trial %d", n + 1);
    struct stx x;
    if (!stx_open(&x, what))
        return 0;
    if (x.pid <= 0) {
        st_skip(what, "the adapter's process is not known (an adapter the library did not start)");
        stx_close(&x, 2000);
        return 0;
    }
    struct cqlog log;
    log_init(&log);
    log.drain_in_callback = 1; /* the CQ never holds more than a notification's worth */
    NDK_CQ *cq = st_cq(&x, 8192, &log);
    if (cq)
        cq->Dispatch->NdkArmCq(cq, NDK_CQ_NOTIFY_ANY);
    struct sbuf src, dst, rd;
    struct pair pr[POSTERS];
    void *qctx[POSTERS];
    int ok = cq && st_buf(&x, &src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) &&
             st_buf(&x, &dst, 4 * PAGE_SIZE, 0, NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ) &&
             st_buf(&x, &rd, READ_BYTES, 0, -1);
    for (int i = 0; i < POSTERS && ok; i++) {
        qctx[i] = CTX(0x600 + i, 0);
        ok = st_pair(&x, cq, 1024, qctx[i], CTX(0x680 + i, 0xffff), &pr[i]);
    }
    if (!ok)
        st_bail("%s: could not set up the adapter (CQ, buffers, connected pairs)", what);

    const int cap = 20000;
    struct poster ps[POSTERS];
    pthread_t pt[POSTERS], rt;
    for (int i = 0; i < POSTERS; i++) {
        memset(&ps[i], 0, sizeof(ps[i]));
        ps[i].qp = pr[i].qa;
        ps[i].src = &src;
        ps[i].dst = &dst;
        ps[i].tag = 0x600u + (uint32_t)i;
        ps[i].seed = st_rand();
        ps[i].cap = cap;
        ps[i].ctx = calloc((size_t)cap, sizeof(void *));
        ps[i].st = calloc((size_t)cap, sizeof(NTSTATUS));
        ps[i].type = calloc((size_t)cap, sizeof(int));
        if (!ps[i].ctx || !ps[i].st || !ps[i].type)
            st_bail("out of memory");
    }
    struct reader rdr;
    memset(&rdr, 0, sizeof(rdr));
    rdr.ad = x.ad;
    rdr.mdl = rd.mdl;
    rdr.buf = malloc(READ_BYTES);
    int with_read = st_rand_below(4) != 0; /* most trials also read */
    for (int i = 0; i < POSTERS; i++)
        pthread_create(&pt[i], NULL, poster_main, &ps[i]);
    if (with_read)
        pthread_create(&rt, NULL, reader_main, &rdr);
    int delay = cfg.sim ? 100 + (int)st_rand_below(400) : (int)st_rand_below(60);
    st_doing("%s: posting for %d ms, then SIGKILL of the adapter", what, delay);
    st_sleep_ms(delay);
    stx_kill(&x);
    uint64_t killed = st_now_ms();
    st_sleep_ms((int)st_rand_below(cfg.sim ? 50 : 10)); /* posting goes on into the dead link */
    for (int i = 0; i < POSTERS; i++)
        ps[i].stop = 1;
    rdr.stop = 1;
    st_doing("%s: waiting for the posters and the reader to return", what);
    for (int i = 0; i < POSTERS; i++)
        pthread_join(pt[i], NULL);
    if (with_read) {
        pthread_join(rt, NULL);
        int took = (int)(rdr.end_ms - killed);
        if (took > t->slowest_read_ms)
            t->slowest_read_ms = took;
        if (rdr.bad)
            fail(t, "%s: NdkFpgaReadBuffer returned %s, neither SUCCESS nor the link's status", what,
                 st_name(rdr.bad));
        else if (took > bound_ms)
            fail(t, "%s: NdkFpgaReadBuffer returned %d ms after the kill (bound %d ms)", what, took, bound_ms);
        if (rdr.last == STATUS_SUCCESS)
            t->reads_ok++;
        else
            t->reads_link++;
    }

    /* Every accepted request completes once, in order, within the bound. */
    for (int i = 0; i < POSTERS; i++) {
        struct posted *p = calloc((size_t)ps[i].posted + 1, sizeof(*p));
        size_t k = 0;
        for (int j = 0; j < ps[i].posted; j++) {
            if (ps[i].st[j] == STATUS_SUCCESS) {
                p[k].ctx = ps[i].ctx[j];
                p[k].type = ps[i].type[j];
                k++;
            } else if (ps[i].st[j] != STATUS_INSUFFICIENT_RESOURCES && !st_is_link_status(ps[i].st[j]) &&
                       ps[i].st[j] != STATUS_CONNECTION_INVALID) {
                fail(t, "%s: poster %d: post %d refused with %s", what, i, j, st_name(ps[i].st[j]));
            }
        }
        t->posted += ps[i].posted;
        t->accepted += (long)k;
        t->refused += ps[i].posted - (long)k;
        uint64_t left = st_now_ms() - killed;
        int wait = left >= (uint64_t)bound_ms ? 0 : bound_ms - (int)left;
        log_wait(&log, qctx[i], k, wait, "every accepted request after the kill");
        int took = (int)(st_now_ms() - killed);
        size_t got = log_count(&log, qctx[i]);
        if (got < k)
            fail(t, "%s: poster %d: %zu of %zu accepted requests not completed %d ms after the kill", what, i,
                 k - got, k, took);
        else if (took > t->slowest_ms)
            t->slowest_ms = took;
        char why[320] = "";
        if (got >= k && !seq_exact(&log, qctx[i], p, k, why, sizeof(why)))
            fail(t, "%s: poster %d: %s", what, i, why);
        NDK_RESULT_EX *res = calloc(got + 1, sizeof(*res));
        size_t nres = log_results(&log, qctx[i], res, got);
        int failed = 0;
        for (size_t j = 0; j < nres && j < got; j++) {
            if (res[j].Status == STATUS_SUCCESS && !failed) {
                t->succ++;
            } else if (st_is_link_status(res[j].Status) && res[j].Status != STATUS_CANCELLED) {
                failed = 1;
                t->link++;
            } else {
                fail(t, "%s: poster %d: result %zu (ctx %p) completed %s%s", what, i, j, res[j].RequestContext,
                     st_name(res[j].Status), failed ? " after a link status" : "");
                break;
            }
        }
        free(res);
        free(p);
    }
    if (log.overflows)
        fail(t, "%s: the CQ overflowed (the test's CQ is too small)", what);
    int ms = stx_close(&x, 2000);
    if (ms < 0)
        st_bail("%s: NdkFpgaCloseAdapter of the killed adapter did not return within 2 s", what);
    log.cq = NULL;
    log_free(&log);
    for (int i = 0; i < POSTERS; i++) {
        free(ps[i].ctx);
        free(ps[i].st);
        free(ps[i].type);
    }
    free(rdr.buf);
    return 1;
}

void case_kill_storm(void)
{
    const int trials = st_n(200, 30, 10);
    /* Link death is seen at once (the transport reports it): everything outstanding
     * completes promptly; the bound leaves room for a loaded machine. */
    const int bound_ms = cfg.sim ? 3000 : 1000;
    struct tally t;
    memset(&t, 0, sizeof(t));
    uint64_t t0 = st_now_ms();
    int ran = 0;
    for (int i = 0; i < trials; i++)
        ran += trial(i, &t, bound_ms);
    st_note("%d trials in %llu ms: %ld posts (%ld accepted, %ld refused inline), %ld SUCCESS, %ld link status; "
            "reads at the kill: %d SUCCESS, %d link status; last completion %d ms after a kill, read returned %d ms "
            "after",
            ran, (unsigned long long)(st_now_ms() - t0), t.posted, t.accepted, t.refused, t.succ, t.link, t.reads_ok,
            t.reads_link, t.slowest_ms, t.slowest_read_ms);
    st_ok(ran == trials && t.fails == 0,
          "%d kill storms (2 posters, DEFER, a buffer read): every post counted, each accepted one completed once, "
          "in order, SUCCESS or the link's status, within %d ms of the kill%s%s",
          ran, bound_ms, t.fails ? ": " : "", t.why);
    if (t.fails > 1)
        st_note("%d failures in all", t.fails);
}
