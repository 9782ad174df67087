/* SPDX-License-Identifier: Apache-2.0 */
/* Security cases: handles that are not this adapter's (another adapter's MDLs and
 * objects, hand-made MDLs, closed objects, freed buffers) and guessed tokens. Each
 * call must get its documented status and change nothing, checked through the data. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress.h"

#define CTX(a, b) ((void *)(uintptr_t)(((uint64_t)(a) << 32) | (uint64_t)(b)))

/* A buffer and the bytes it must hold. */
struct watched {
    struct stx *x;
    struct sbuf *b;
    uint8_t *want;
    const char *name;
};

/* Every watched buffer still holds what it should; names those that do not, and takes
 * what they hold now as the new reference (so the next check reports only its own
 * changes). */
static int unchanged(struct watched *w, int n, char *why, size_t whylen)
{
    int all = 1;
    why[0] = 0;
    for (int i = 0; i < n; i++) {
        /* Every byte on the model; on the simulation (two Verilator boards at once, some
         * 4 KB/s each) the first 256, where every write of this case lands. */
        size_t len = cfg.scale == SCALE_TINY && w[i].b->len > 256 ? 256 : w[i].b->len;
        uint8_t *got = malloc(len);
        st_doing("NdkFpgaReadBuffer of %s (%zu bytes), to check that nothing changed", w[i].name, len);
        NTSTATUS st = NdkFpgaReadBuffer(w[i].x->ad, w[i].b->mdl, 0, got, len);
        int same = st == STATUS_SUCCESS && !memcmp(got, w[i].want, len);
        if (!same) {
            size_t at = 0;
            while (st == STATUS_SUCCESS && at < len && got[at] == w[i].want[at])
                at++;
            size_t used = strlen(why);
            snprintf(why + used, whylen - used, "%s%s changed (from byte %zu; %s)", all ? "" : ", ", w[i].name, at,
                     st_name(st));
            if (st == STATUS_SUCCESS)
                memcpy(w[i].want, got, len);
            all = 0;
        }
        free(got);
    }
    return all;
}

static uint8_t junk[64];
static uint32_t junk_seed = 104;
/* A fresh pattern for each write a check makes, so each check's own write shows. */
static const uint8_t *fresh_junk(void)
{
    st_fill(junk, sizeof(junk), junk_seed++);
    return junk;
}

static void expect_st(NTSTATUS got, NTSTATUS want, struct watched *w, int nw, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void expect_st(NTSTATUS got, NTSTATUS want, struct watched *w, int nw, const char *fmt, ...)
{
    char what[256], why[300] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    int same = unchanged(w, nw, why, sizeof(why));
    st_ok(got == want && same, "%s: %s (expected %s)%s%s", what, st_name(got), st_name(want), same ? "" : "; ", why);
}

/* An MDL made by hand: one or more pages, page numbers as given. */
struct handmdl {
    MDL mdl;
    PFN_NUMBER pfn[4];
};

static void handmade(struct handmdl *h, uintptr_t va, const PFN_NUMBER *pfn, int npages, void *provider)
{
    memset(h, 0, sizeof(*h));
    for (int i = 0; i < npages && i < 4; i++)
        h->pfn[i] = pfn[i];
    h->mdl.StartVa = (PVOID)va;
    h->mdl.ByteOffset = 0;
    h->mdl.ByteCount = (ULONG)npages * PAGE_SIZE;
    h->mdl.PfnArray = h->pfn;
    h->mdl.ProviderContext = provider;
}

static int cq_quiet(struct cqlog *log, int ms)
{
    size_t before = log->n;
    st_sleep_ms(ms);
    log_drain(log);
    return log->n == before;
}

static NTSTATUS create_qp_on(struct stx *x, NDK_CQ *cq)
{
    struct st_op *o = op_new();
    NDK_QP *qp = NULL;
    NTSTATUS st = x->pd->Dispatch->NdkCreateQp(x->pd, cq, cq, NULL, 0, 4, 0, 1, 0, op_create_cb, o, &qp);
    NDK_OBJECT_HEADER *obj = NULL;
    st = op_wait(o, st, cfg.wait_ms, &obj);
    if (st == STATUS_SUCCESS)
        st_close(obj ? obj : (qp ? &qp->Header : NULL), cfg.wait_ms);
    return st;
}

void case_foreign_handles(void)
{
    struct stx a, b;
    if (!stx_open(&a, "A") || !stx_open(&b, "B"))
        return;
    struct sbuf a1, a2, b1, src;
    int setup = st_buf(&a, &a1, 2 * PAGE_SIZE, 0, -1) &&
                st_buf(&a, &a2, PAGE_SIZE, 0, NDK_MR_FLAG_ALLOW_REMOTE_WRITE) &&
                st_buf(&a, &src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) && st_buf(&b, &b1, 2 * PAGE_SIZE, 0, -1);
    if (!st_ok(setup, "two adapters with buffers"))
        return;
    uint8_t *pa1 = malloc(a1.len), *pa2 = malloc(a2.len), *pb1 = malloc(b1.len);
    st_fill(pa1, a1.len, 101);
    st_fill(pa2, a2.len, 102);
    st_fill(pb1, b1.len, 103);
    fresh_junk();
    NdkFpgaWriteBuffer(a.ad, a1.mdl, 0, pa1, a1.len);
    NdkFpgaWriteBuffer(a.ad, a2.mdl, 0, pa2, a2.len);
    NdkFpgaWriteBuffer(b.ad, b1.mdl, 0, pb1, b1.len);
    NdkFpgaWriteBuffer(a.ad, src.mdl, 0, junk, sizeof(junk));
    struct watched w[3] = {{&a, &a1, pa1, "A's first buffer"}, {&a, &a2, pa2, "A's second buffer"},
                           {&b, &b1, pb1, "B's buffer"}};
    st_note("adapter page numbers: A's first buffer %lu, B's buffer %lu (the same numbers name different memory)",
            (unsigned long)MmGetMdlPfnArray(a1.mdl)[0], (unsigned long)MmGetMdlPfnArray(b1.mdl)[0]);
    char why[160] = "";
    st_ok(unchanged(w, 3, why, sizeof(why)), "the buffers hold their patterns%s%s", *why ? ": " : "", why);

    /* MDLs given to NdkFpgaWriteBuffer / NdkFpgaReadBuffer. */
    expect_st(NdkFpgaWriteBuffer(a.ad, b1.mdl, 0, fresh_junk(), 64), STATUS_INVALID_PARAMETER, w, 3,
              "NdkFpgaWriteBuffer on A with B's MDL");
    uint8_t out[64];
    memset(out, 0xEE, sizeof(out));
    NTSTATUS st = NdkFpgaReadBuffer(a.ad, b1.mdl, 0, out, 64);
    int untouched = 1;
    for (size_t i = 0; i < sizeof(out); i++)
        untouched &= out[i] == 0xEE;
    expect_st(st, STATUS_INVALID_PARAMETER, w, 3, "NdkFpgaReadBuffer on A with B's MDL (output %s)",
              untouched ? "untouched" : "filled with A's bytes");
    MDL copy = *a1.mdl;
    expect_st(NdkFpgaWriteBuffer(a.ad, &copy, 0, fresh_junk(), 64), STATUS_INVALID_PARAMETER, w, 3,
              "NdkFpgaWriteBuffer with a copy of A's own MDL (not the one A allocated)");
    struct handmdl h;
    handmade(&h, 0x10000000u, MmGetMdlPfnArray(a1.mdl), 2, NULL);
    expect_st(NdkFpgaWriteBuffer(a.ad, &h.mdl, 0, fresh_junk(), 64), STATUS_INVALID_PARAMETER, w, 3,
              "NdkFpgaWriteBuffer with a hand-made MDL naming A's pages");
    expect_st(NdkFpgaReadBuffer(a.ad, &h.mdl, 0, out, 64), STATUS_INVALID_PARAMETER, w, 3,
              "NdkFpgaReadBuffer with a hand-made MDL naming A's pages");
    PFN_NUMBER zero[2] = {0, 1};
    handmade(&h, 0x10000000u, zero, 2, NULL);
    expect_st(NdkFpgaWriteBuffer(a.ad, &h.mdl, 0, fresh_junk(), 64), STATUS_INVALID_PARAMETER, w, 3,
              "NdkFpgaWriteBuffer with a hand-made MDL naming pages 0-1 (the link's slots)");
    NDKFPGA_PING_RESULT pr_ping;
    st = NdkFpgaPing(a.ad, 2, 1, 64, &pr_ping);
    st_ok(st == STATUS_SUCCESS, "adapter A still answers (ping: %s)", st_name(st));

    /* MDLs given to NdkRegisterMr. */
    NDK_MR *ma = st_mr(&a, a.pd, 0);
    if (!st_ok(ma != NULL, "a normal MR on A"))
        return;
    expect_st(st_register(ma, b1.mdl, b1.len, NDK_MR_FLAG_ALLOW_REMOTE_WRITE), STATUS_INVALID_PARAMETER, w, 3,
              "NdkRegisterMr on A with B's MDL");
    PFN_NUMBER beyond[2] = {a.det.MemoryBytes / PAGE_SIZE + 4, a.det.MemoryBytes / PAGE_SIZE + 5};
    handmade(&h, 0x10000000u, beyond, 2, NULL);
    expect_st(st_register(ma, &h.mdl, 2 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE), STATUS_INVALID_PARAMETER, w, 3,
              "NdkRegisterMr with a hand-made MDL naming pages past adapter memory");
    handmade(&h, 0x10000000u, zero, 2, NULL);
    expect_st(st_register(ma, &h.mdl, 2 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE), STATUS_INVALID_PARAMETER, w, 3,
              "NdkRegisterMr with a hand-made MDL naming pages 0-1 (the link's slots)");
    expect_st(st_deregister(ma), STATUS_INVALID_DEVICE_STATE, w, 3,
              "after those refusals the MR is not registered: NdkDeregisterMr");

    /* Work requests on A naming B's objects or foreign pages; nothing may be posted. */
    struct cqlog log;
    log_init(&log);
    NDK_CQ *cq = st_cq(&a, 256, &log);
    struct cqlog logb;
    log_init(&logb);
    NDK_CQ *cqb = st_cq(&b, 16, &logb);
    struct pair pr;
    NDK_MR *frb = st_mr(&b, b.pd, 1), *fra = st_mr(&a, a.pd, 1);
    setup = cq && cqb && frb && fra && st_pair(&a, cq, 16, CTX(0xa1, 1), CTX(0xa1, 2), &pr) &&
            st_init_fast(frb, 2, TRUE) == STATUS_SUCCESS && st_init_fast(fra, 2, TRUE) == STATUS_SUCCESS;
    if (!st_ok(setup, "a connected pair on A, fast MRs on A and B"))
        return;
    expect_st(st_post_fr(pr.qa, CTX(0xa2, 1), frb, &a1, 2, 0, 2 * PAGE_SIZE, 0x800000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
              STATUS_INVALID_PARAMETER, w, 3, "NdkFastRegister on A's QP of B's MR");
    expect_st(st_post_inv(pr.qa, CTX(0xa2, 2), frb, 0), STATUS_INVALID_PARAMETER, w, 3,
              "NdkInvalidate on A's QP of B's MR");
    NDK_LOGICAL_ADDRESS far[2] = {{.QuadPart = (LONGLONG)beyond[0] << PAGE_SHIFT},
                                  {.QuadPart = (LONGLONG)beyond[1] << PAGE_SHIFT}};
    expect_st(pr.qa->Dispatch->NdkFastRegister(pr.qa, CTX(0xa2, 3), fra, 2, far, 0, 2 * PAGE_SIZE,
                                               (PVOID)(uintptr_t)0x800000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
              STATUS_INVALID_PARAMETER, w, 3, "NdkFastRegister of pages past adapter memory");
    st_ok(cq_quiet(&log, cfg.sim ? 500 : 50), "the refused work requests posted nothing (A's CQ stays empty)");
    /* A write through the token of the MR whose registrations were refused. */
    NTSTATUS ws = st_post_write(pr.qa, CTX(0xa2, 4), &src, 0, 64, (uint64_t)(uintptr_t)st_va(&b1, 0), st_token(ma), 0);
    log_wait(&log, CTX(0xa1, 1), 1, cfg.wait_ms, "a write through the refused MR's token");
    NDK_RESULT_EX r;
    memset(&r, 0, sizeof(r));
    r.Status = ST_NO_COMPLETION;
    log_results(&log, CTX(0xa1, 1), &r, 1);
    expect_st(ws == STATUS_SUCCESS ? r.Status : ws, STATUS_ACCESS_VIOLATION, w, 3,
              "a write through the token of the MR whose registrations were refused");
    expect_st(create_qp_on(&a, cqb), STATUS_INVALID_PARAMETER, w, 3, "NdkCreateQp on A's PD with B's CQ");
    NDK_QP *qb_of_b = st_qp(&b, cqb, NULL, 4, NULL);
    NDK_CONNECTOR *ca = NULL;
    a.ad->Dispatch->NdkCreateConnector(a.ad, NULL, NULL, &ca);
    if (qb_of_b && ca) {
        struct sockaddr_in src_a, dst_a;
        memset(&src_a, 0, sizeof(src_a));
        src_a.sin_family = AF_INET;
        src_a.sin_port = htons(31000);
        src_a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        dst_a = src_a;
        dst_a.sin_port = htons(a.port);
        struct st_op *o = op_new();
        st = ca->Dispatch->NdkConnect(ca, qb_of_b, (PSOCKADDR)&src_a, sizeof(src_a), (PSOCKADDR)&dst_a,
                                      sizeof(dst_a), 1, 1, NULL, 0, op_req_cb, o);
        st = op_wait(o, st, cfg.wait_ms, NULL);
        expect_st(st, STATUS_INVALID_PARAMETER, w, 3, "NdkConnect of A's connector with B's QP");
    } else {
        st_ok(0, "a QP on B and a connector on A");
    }
    /* Freeing another adapter's buffer through A: ignored. */
    NdkFpgaFreeBuffer(a.ad, b1.mdl);
    MDL *again = NULL;
    st = NdkFpgaAllocateBuffer(b.ad, 2 * PAGE_SIZE, &again);
    int distinct = st == STATUS_SUCCESS && MmGetMdlPfnArray(again)[0] != MmGetMdlPfnArray(b1.mdl)[0] &&
                   MmGetMdlPfnArray(again)[1] != MmGetMdlPfnArray(b1.mdl)[0];
    expect_st(distinct ? STATUS_SUCCESS : STATUS_INTERNAL_ERROR, STATUS_SUCCESS, w, 3,
              "NdkFpgaFreeBuffer on A of B's buffer is ignored: B's pages stay allocated");
    if (again)
        NdkFpgaFreeBuffer(b.ad, again);

    /* Closed objects and a freed buffer, last (a provider that reads them may crash). */
    NDK_MR *gone = st_mr(&a, a.pd, 1);
    if (gone && st_init_fast(gone, 1, TRUE) == STATUS_SUCCESS && st_close(&gone->Header, cfg.wait_ms)) {
        st_doing("NdkFastRegister of a closed MR");
        expect_st(st_post_fr(pr.qa, CTX(0xa3, 1), gone, &a2, 1, 0, PAGE_SIZE, 0x900000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
                  STATUS_INVALID_PARAMETER, w, 3, "NdkFastRegister of a closed MR");
        st_doing("NdkInvalidate of a closed MR");
        expect_st(st_post_inv(pr.qa, CTX(0xa3, 2), gone, 0), STATUS_INVALID_PARAMETER, w, 3,
                  "NdkInvalidate of a closed MR");
        st_ok(cq_quiet(&log, cfg.sim ? 500 : 50), "nothing posted for the closed MR");
    } else {
        st_ok(0, "a fast MR to close");
    }
    NDK_CQ *cq_gone = st_cq(&a, 8, NULL);
    if (cq_gone && st_close(&cq_gone->Header, cfg.wait_ms)) {
        st_doing("NdkCreateQp with a closed CQ");
        expect_st(create_qp_on(&a, cq_gone), STATUS_INVALID_PARAMETER, w, 3, "NdkCreateQp with a closed CQ");
    }
    MDL *freed = NULL;
    if (NdkFpgaAllocateBuffer(a.ad, PAGE_SIZE, &freed) == STATUS_SUCCESS) {
        NdkFpgaFreeBuffer(a.ad, freed);
        st_doing("NdkFpgaWriteBuffer with a freed MDL");
        expect_st(NdkFpgaWriteBuffer(a.ad, freed, 0, fresh_junk(), 64), STATUS_INVALID_PARAMETER, w, 3,
                  "NdkFpgaWriteBuffer with an MDL already freed");
    }
    st_pair_close(&pr, cfg.wait_ms);
    st_ok(stx_close(&a, 5000) >= 0 && stx_close(&b, 5000) >= 0, "both adapters closed");
    log.cq = NULL;
    logb.cq = NULL;
    log_free(&log);
    log_free(&logb);
    free(pa1);
    free(pa2);
    free(pb1);
}

/* ========================================================================= */
/* guessed-tokens: RDMA through random, wrong-key, neighbouring, zero and privileged
 * tokens is never granted (completes ACCESS_VIOLATION, docs/ndk.md#remote-access-failures),
 * and nothing moves; a PD's token stays refused from another PD even after
 * 65536 PDs came and went. */

struct guess {
    UINT32 token;
    uint64_t va;
    int read;
    const char *kind;
};

void case_guessed_tokens(void)
{
    struct stx x;
    if (!stx_open_logged(&x, "guessed-tokens", 4096))
        return;
    struct sbuf tgt, tgt2, src, sink;
    NDK_MR *fr = NULL;
    struct pair pr;
    int setup = st_buf(&x, &tgt, PAGE_SIZE, 0, NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ) &&
                st_buf(&x, &tgt2, PAGE_SIZE, 0, -1) && st_buf(&x, &src, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) &&
                st_buf(&x, &sink, 64, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK) &&
                (fr = st_mr(&x, x.pd, 1)) != NULL && st_init_fast(fr, 1, TRUE) == STATUS_SUCCESS &&
                st_pair(&x, x.cq, 16, CTX(0x70, 0), CTX(0x70, 1), &pr);
    if (!st_ok(setup, "a normal MR and a fast-registered MR with remote access, buffers"))
        return;
    const uint64_t va_f = 0x700000;
    st_post_fr(pr.qa, CTX(0x71, 0), fr, &tgt2, 1, 0, PAGE_SIZE, va_f,
               NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ);
    log_wait(&x.log, CTX(0x70, 0), 1, cfg.wait_ms, "the fast-register");
    st_pair_close(&pr, cfg.wait_ms);
    const UINT32 tn = st_token(tgt.mr), tf = st_token(fr);
    const uint64_t va_n = (uint64_t)(uintptr_t)st_va(&tgt, 0);
    uint8_t *p1 = malloc(PAGE_SIZE), *p2 = malloc(PAGE_SIZE), ps[64], pw[64];
    st_fill(p1, PAGE_SIZE, 201);
    st_fill(p2, PAGE_SIZE, 202);
    st_fill(ps, sizeof(ps), 203);
    st_fill(pw, sizeof(pw), 204);
    NdkFpgaWriteBuffer(x.ad, tgt.mdl, 0, p1, PAGE_SIZE);
    NdkFpgaWriteBuffer(x.ad, tgt2.mdl, 0, p2, PAGE_SIZE);
    NdkFpgaWriteBuffer(x.ad, sink.mdl, 0, ps, sizeof(ps));
    NdkFpgaWriteBuffer(x.ad, src.mdl, 0, pw, sizeof(pw));
    struct watched w[3] = {{&x, &tgt, p1, "the normal MR's memory"}, {&x, &tgt2, p2, "the fast MR's memory"},
                           {&x, &sink, ps, "the read sink"}};

    /* The guesses. */
    const int nkeys = st_n(255, 32, 3), nrand = st_n(300, 60, 3);
    int cap = 16 + 2 * nkeys + nrand, n = 0;
    struct guess *g = calloc((size_t)cap, sizeof(*g));
    g[n++] = (struct guess){0, va_n, 0, "token 0"};
    g[n++] = (struct guess){0, va_n, 1, "token 0"};
    g[n++] = (struct guess){0xFFFFFFFFu, (uint64_t)st_page(&tgt, 0).QuadPart, 0, "the privileged token"};
    g[n++] = (struct guess){0xFFFFFFFFu, (uint64_t)st_page(&tgt, 0).QuadPart, 1, "the privileged token"};
    for (int d = 1; d <= 2; d++) {
        g[n++] = (struct guess){tn + (UINT32)(d << 8), va_n, d & 1, "a neighbouring index"};
        g[n++] = (struct guess){tn - (UINT32)(d << 8), va_f, d & 1, "a neighbouring index"};
    }
    for (int k = 0; k < nkeys; k++) {
        UINT32 key = (UINT32)(((tn & 0xFFu) + 1u + (UINT32)k * (255u / (UINT32)nkeys)) % 256u);
        if (key != (tn & 0xFFu))
            g[n++] = (struct guess){(tn & ~0xFFu) | key, va_n, k & 1, "a wrong key"};
        key = (UINT32)(((tf & 0xFFu) + 1u + (UINT32)k * (255u / (UINT32)nkeys)) % 256u);
        if (key != (tf & 0xFFu))
            g[n++] = (struct guess){(tf & ~0xFFu) | key, va_f, k & 1, "a wrong key"};
    }
    for (int k = 0; k < nrand && n < cap; k++) {
        UINT32 t = st_rand();
        if (t == tn || t == tf)
            continue;
        g[n++] = (struct guess){t, st_rand_below(2) ? va_n : va_f, k & 1, "a random token"};
    }
    int granted = 0, not_av = 0, broken = 0;
    char w_granted[200] = "", w_av[200] = "", w_data[200] = "";
    uint64_t t0 = st_now_ms();
    for (int i = 0; i < n; i++) {
        st_doing("guess %d of %d: %s 0x%08x (%s)", i + 1, n, g[i].kind, (unsigned)g[i].token,
                 g[i].read ? "read" : "write");
        void *qctx = CTX(0x72, i);
        if (!st_pair(&x, x.cq, 4, qctx, CTX(0x73, i), &pr)) {
            st_ok(0, "connect a pair for guess %d", i);
            break;
        }
        NTSTATUS ps_ = g[i].read ? st_post_read(pr.qa, CTX(0x74, i), &sink, 0, 64, g[i].va, g[i].token, 0)
                                 : st_post_write(pr.qa, CTX(0x74, i), &src, 0, 64, g[i].va, g[i].token, 0);
        NDK_RESULT_EX r;
        memset(&r, 0, sizeof(r));
        r.Status = ps_;
        if (ps_ == STATUS_SUCCESS) {
            r.Status = ST_NO_COMPLETION;
            if (log_wait(&x.log, qctx, 1, cfg.wait_ms, "a guessed-token access"))
                log_results(&x.log, qctx, &r, 1);
        }
        if (r.Status == STATUS_SUCCESS && granted++ == 0)
            snprintf(w_granted, sizeof(w_granted), "%s 0x%08x (%s at 0x%llx) was granted", g[i].kind,
                     (unsigned)g[i].token, g[i].read ? "read" : "write", (unsigned long long)g[i].va);
        if (r.Status != STATUS_ACCESS_VIOLATION && not_av++ == 0)
            snprintf(w_av, sizeof(w_av), "%s 0x%08x (%s): %s", g[i].kind, (unsigned)g[i].token,
                     g[i].read ? "read" : "write", st_name(r.Status));
        st_pair_close(&pr, cfg.wait_ms);
        if ((i % 32 == 31 || i == n - 1 || r.Status == STATUS_SUCCESS) && !broken) {
            char why[160] = "";
            if (!unchanged(w, 3, why, sizeof(why))) {
                broken = 1;
                snprintf(w_data, sizeof(w_data), "after guess %d (%s 0x%08x): %s", i, g[i].kind,
                         (unsigned)g[i].token, why);
            }
        }
    }
    st_note("%d guesses in %llu ms", n, (unsigned long long)(st_now_ms() - t0));
    st_ok(!granted, "%d guessed tokens (zero, privileged, neighbouring indexes, %d wrong keys each, %d random): none "
                    "granted (%d)%s%s",
          n, nkeys, nrand, granted, granted ? ": " : "", w_granted);
    st_ok(!not_av, "every one completed STATUS_ACCESS_VIOLATION (%d did not)%s%s", not_av, not_av ? ": " : "", w_av);
    st_ok(!broken, "no byte of the registered memory or the read sink changed%s%s", broken ? " " : "", w_data);
    /* The right token is granted: the refusals above were not for some other reason. */
    if (st_pair(&x, x.cq, 4, CTX(0x75, 0), CTX(0x75, 1), &pr)) {
        NTSTATUS s = st_post_write(pr.qa, CTX(0x76, 0), &src, 0, 64, va_n, tn, 0);
        NDK_RESULT_EX r;
        memset(&r, 0, sizeof(r));
        r.Status = s == STATUS_SUCCESS ? ST_NO_COMPLETION : s;
        if (s == STATUS_SUCCESS && log_wait(&x.log, CTX(0x75, 0), 1, cfg.wait_ms, "a write through the right token"))
            log_results(&x.log, CTX(0x75, 0), &r, 1);
        uint8_t got[64];
        NdkFpgaReadBuffer(x.ad, tgt.mdl, 0, got, sizeof(got));
        st_ok(r.Status == STATUS_SUCCESS && !memcmp(got, pw, sizeof(pw)),
              "the right token is granted and the bytes land (%s)", st_name(r.Status));
        st_pair_close(&pr, cfg.wait_ms);
    }

    /* PD numbers: a PD's token from a QP of another PD, after 65536 PDs came and went. */
    NDK_PD *pa = NULL;
    x.ad->Dispatch->NdkCreatePd(x.ad, NULL, NULL, &pa);
    NDK_MR *ma = pa ? st_mr(&x, pa, 0) : NULL;
    struct sbuf t3;
    if (ma && st_buf(&x, &t3, PAGE_SIZE, 0, -1) &&
        st_register(ma, t3.mdl, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE) == STATUS_SUCCESS) {
        /* PD numbers are 16 bits on the board: test the PDs created 65535 and 65536
         * creations after the live one. */
        st_doing("65534 PDs created and closed");
        int cycled = 0;
        for (int i = 0; i < 65534; i++) {
            NDK_PD *p = NULL;
            if (x.ad->Dispatch->NdkCreatePd(x.ad, NULL, NULL, &p) != STATUS_SUCCESS || !p)
                break;
            if (NdkCloseObject(&p->Header, NULL, NULL) != STATUS_SUCCESS)
                break;
            cycled++;
        }
        for (int k = 0; k < 2; k++) {
            NDK_PD *pb = NULL, *saved = x.pd;
            x.ad->Dispatch->NdkCreatePd(x.ad, NULL, NULL, &pb);
            x.pd = pb;
            void *qctx = CTX(0x77, 2 * k);
            int paired = pb && st_pair(&x, x.cq, 4, qctx, CTX(0x77, 2 * k + 1), &pr);
            x.pd = saved;
            if (!st_ok(paired, "%d PDs created and closed, then a pair in a new PD", cycled + k))
                break;
            uint8_t p3[64], got[64];
            st_fill(p3, sizeof(p3), 205u + (uint32_t)k);
            NdkFpgaWriteBuffer(x.ad, t3.mdl, 0, p3, sizeof(p3));
            NTSTATUS s = st_post_write(pr.qa, CTX(0x78, k), &src, 0, 64, (uint64_t)(uintptr_t)st_va(&t3, 0),
                                       st_token(ma), 0);
            NDK_RESULT_EX r;
            memset(&r, 0, sizeof(r));
            r.Status = s == STATUS_SUCCESS ? ST_NO_COMPLETION : s;
            if (s == STATUS_SUCCESS && log_wait(&x.log, qctx, 1, cfg.wait_ms, "a write through another PD's token"))
                log_results(&x.log, qctx, &r, 1);
            NdkFpgaReadBuffer(x.ad, t3.mdl, 0, got, sizeof(got));
            st_ok(r.Status == STATUS_ACCESS_VIOLATION && !memcmp(got, p3, sizeof(p3)),
                  "a live PD's token, used from the PD created %d PDs after it, is refused and nothing is written (%s)",
                  cycled + k + 1, st_name(r.Status));
            st_pair_close(&pr, cfg.wait_ms);
            st_close(&pb->Header, cfg.wait_ms);
        }
        st_deregister(ma);
    } else {
        st_ok(0, "a PD with a registered MR");
    }
    st_ok(stx_close(&x, 5000) >= 0, "NdkFpgaCloseAdapter returned");
    x.log.cq = NULL;
    log_free(&x.log);
    free(g);
    free(p1);
    free(p2);
}
