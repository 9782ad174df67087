/* SPDX-License-Identifier: Apache-2.0 */
/* hostmem: consumer buffers in ordinary host memory (IoAllocateMdl +
 * MmBuildMdlForNonPagedPool), checked byte by byte by the CPU at each hand-over NDK
 * defines (docs/host-memory.md): a Send's and a Write's source go to the adapter when
 * posted; a Receive's bytes and a Read's sink come home before their completion, and
 * only the bytes the request wrote; a registered region's bytes come home when it is
 * deregistered or closed, a fast-registered one's when it is invalidated; bad MDLs are
 * refused and change nothing.
 *
 * Usage: hostmem [DEVICE]   (default: model). TAP output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer.h"
#include "ndkfpga.h"
#include "ndkpi.h"
#include "tap.h"

#define PORT 4811
#define BUF (3 * PAGE_SIZE) /* each side's buffer: three pages, not page aligned */

struct fixture {
    struct consumer_session s;
    NDK_CQ *cq, *rcq;
    NDK_PD *pd;
    struct consumer_pair pr;
    uint16_t src_port;
};

/* A host buffer of len bytes starting off bytes into a page, and its MDL. */
struct hbuf {
    uint8_t *mem, *p;
    MDL *mdl;
};

static int hbuf_new(struct hbuf *b, size_t len, size_t off)
{
    b->mem = aligned_alloc(PAGE_SIZE, (len + off + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE);
    b->p = b->mem ? b->mem + off : NULL;
    b->mdl = b->p ? IoAllocateMdl(b->p, (ULONG)len, FALSE, FALSE, NULL) : NULL;
    if (b->mdl)
        MmBuildMdlForNonPagedPool(b->mdl);
    return b->mdl != NULL;
}

static void hbuf_free(struct hbuf *b)
{
    IoFreeMdl(b->mdl);
    free(b->mem);
    memset(b, 0, sizeof(*b));
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed * 31u + i * 7u + (i >> 8));
}

static int filled(const uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(seed * 31u + i * 7u + (i >> 8)))
            return 0;
    return 1;
}

static int all(const uint8_t *p, size_t n, uint8_t v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

static NTSTATUS register_mr(struct fixture *f, MDL *mdl, size_t len, ULONG flags, NDK_MR **mr)
{
    NTSTATUS st = f->pd->Dispatch->NdkCreateMr(f->pd, FALSE, NULL, NULL, mr);
    if (st == STATUS_SUCCESS)
        st = (*mr)->Dispatch->NdkRegisterMr(*mr, mdl, len, flags, NULL, NULL);
    return st;
}

static NDK_SGE sge_of(const struct hbuf *b, NDK_MR *mr, size_t off, ULONG len)
{
    return consumer_sge(b->mdl, mr, off, len);
}

static int wait_result(struct fixture *f, NDK_CQ *cq, NTSTATUS want, void *ctx)
{
    NDK_RESULT_EX r;
    if (!consumer_cq_wait(cq, &r, f->s.wait_ms))
        return 0;
    if (r.Status != want || r.RequestContext != ctx)
        printf("# result %s ctx %p (expected %s ctx %p)\n", NdkFpgaStatusName(r.Status), r.RequestContext,
               NdkFpgaStatusName(want), ctx);
    return r.Status == want && r.RequestContext == ctx;
}

static int setup(struct fixture *f, const char *dev)
{
    NTSTATUS st = NdkFpgaOpenAdapter(dev, &f->s.ad);
    f->s.wait_ms = strncmp(dev, "sim", 3) == 0 ? 60000 : 10000;
    NDK_ADAPTER *ad = f->s.ad;
    if (st == STATUS_SUCCESS)
        st = ad->Dispatch->NdkCreateCq(ad, 64, NULL, NULL, NULL, NULL, NULL, &f->cq);
    if (st == STATUS_SUCCESS)
        st = ad->Dispatch->NdkCreateCq(ad, 64, NULL, NULL, NULL, NULL, NULL, &f->rcq);
    if (st == STATUS_SUCCESS)
        st = ad->Dispatch->NdkCreatePd(ad, NULL, NULL, &f->pd);
    if (st == STATUS_SUCCESS)
        st = consumer_listen(&f->s, PORT);
    const char *what = "QPs";
    f->src_port = 23000;
    if (st == STATUS_SUCCESS)
        st = consumer_pair_up(&f->s, &f->pr, f->pd, f->rcq, f->cq, 8, 2, 16, 2, NULL, f->src_port++, &what);
    return tap_ok(st == STATUS_SUCCESS, "open %s, CQs, PD, two connected QPs (%s: %s)", dev, what,
                  NdkFpgaStatusName(st));
}

/* MDLs: what IoAllocateMdl refuses, and what the calls refuse without changing anything. */
static void mdl_rules(struct fixture *f)
{
    uint8_t x[16];
    tap_ok(IoAllocateMdl(NULL, 16, FALSE, FALSE, NULL) == NULL && IoAllocateMdl(x, 0, FALSE, FALSE, NULL) == NULL &&
               IoAllocateMdl(x, 16, TRUE, FALSE, NULL) == NULL && IoAllocateMdl(x, 16, FALSE, FALSE, x) == NULL &&
               IoAllocateMdl((void *)(uintptr_t)(UINTPTR_MAX - 7), 16, FALSE, FALSE, NULL) == NULL,
           "IoAllocateMdl: NULL address, length 0, a secondary buffer, an IRP, a wrapping range give NULL");
    struct hbuf a, b;
    if (!tap_ok(hbuf_new(&a, PAGE_SIZE, 100) && hbuf_new(&b, PAGE_SIZE, 0), "host buffers"))
        return;
    NDK_ADAPTER *ad = f->s.ad;
    /* Built? An MDL IoAllocateMdl made but MmBuildMdlForNonPagedPool did not fill. */
    MDL *raw = IoAllocateMdl(a.p, 64, FALSE, FALSE, NULL);
    NDK_MR *mr = NULL;
    NTSTATUS st = f->pd->Dispatch->NdkCreateMr(f->pd, FALSE, NULL, NULL, &mr);
    NTSTATUS r1 = st == STATUS_SUCCESS ? mr->Dispatch->NdkRegisterMr(mr, raw, 64, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NULL, NULL)
                                       : st;
    /* A chain that is not virtually contiguous (a, then b at another address). */
    a.mdl->Next = b.mdl;
    NTSTATUS r2 = mr->Dispatch->NdkRegisterMr(mr, a.mdl, 2 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NULL, NULL);
    a.mdl->Next = NULL;
    /* Longer than the MDL. */
    NTSTATUS r3 = mr->Dispatch->NdkRegisterMr(mr, a.mdl, PAGE_SIZE + 1, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NULL, NULL);
    tap_ok(r1 == STATUS_INVALID_PARAMETER && r2 == STATUS_INVALID_PARAMETER && r3 == STATUS_INVALID_PARAMETER,
           "NdkRegisterMr refuses an MDL not built, a chain not contiguous, a length past the MDL: "
           "INVALID_PARAMETER (%s, %s, %s)",
           NdkFpgaStatusName(r1), NdkFpgaStatusName(r2), NdkFpgaStatusName(r3));
    /* The MR is untouched: it registers afterwards. */
    NTSTATUS r4 = mr->Dispatch->NdkRegisterMr(mr, a.mdl, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NULL, NULL);
    NTSTATUS r5 = r4 == STATUS_SUCCESS ? mr->Dispatch->NdkDeregisterMr(mr, NULL, NULL) : r4;
    tap_ok(r4 == STATUS_SUCCESS && r5 == STATUS_SUCCESS, "after the refusals the MR registers and deregisters (%s, %s)",
           NdkFpgaStatusName(r4), NdkFpgaStatusName(r5));
    /* NdkBuildLAM: the size first, then the pages; a LAM too small is refused. */
    ULONG size = 0, fbo = 0;
    NTSTATUS l1 = ad->Dispatch->NdkBuildLAM(ad, a.mdl, PAGE_SIZE, NULL, NULL, NULL, &size, &fbo);
    NDK_LOGICAL_ADDRESS_MAPPING *lam = malloc(size ? size : 1);
    ULONG small = size - 1;
    NTSTATUS l2 = ad->Dispatch->NdkBuildLAM(ad, a.mdl, PAGE_SIZE, NULL, NULL, lam, &small, &fbo);
    NTSTATUS l3 = ad->Dispatch->NdkBuildLAM(ad, a.mdl, PAGE_SIZE, NULL, NULL, lam, &size, &fbo);
    tap_ok(l1 == STATUS_BUFFER_TOO_SMALL && l2 == STATUS_BUFFER_TOO_SMALL && l3 == STATUS_SUCCESS &&
               lam->AdapterPageCount == 2 && fbo == 100,
           "NdkBuildLAM over host memory: BUFFER_TOO_SMALL with the size, then 2 pages at FBO 100 (%s, %s, %s)",
           NdkFpgaStatusName(l1), NdkFpgaStatusName(l2), NdkFpgaStatusName(l3));
    if (l3 == STATUS_SUCCESS)
        ad->Dispatch->NdkReleaseLAM(ad, lam);
    free(lam);
    NdkCloseObject(&mr->Header, NULL, NULL);
    IoFreeMdl(raw);
    hbuf_free(&a);
    hbuf_free(&b);
}

/* Send and Receive: A's CPU writes, B's CPU reads; a short message leaves the rest of
 * B's receive buffer as the CPU left it. */
static void send_receive(struct fixture *f)
{
    struct hbuf a, b;
    NDK_MR *ma = NULL, *mb = NULL;
    if (!tap_ok(hbuf_new(&a, BUF, 300) && hbuf_new(&b, BUF, 900), "host buffers") ||
        !tap_ok(register_mr(f, a.mdl, BUF, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, &ma) == STATUS_SUCCESS &&
                    register_mr(f, b.mdl, BUF, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, &mb) == STATUS_SUCCESS,
                "NdkRegisterMr over host memory (3 pages, not page aligned)"))
        return;
    NDK_QP *qa = f->pr.qa, *qb = f->pr.qb;
    for (unsigned round = 0; round < 3; round++) {
        const ULONG len = round == 0 ? 5000 : round == 1 ? 1 : 8000;
        memset(b.p, 0x5A, BUF);
        /* B's receive in two SGEs; A's Send from the middle of its buffer. */
        NDK_SGE rs[2] = {sge_of(&b, mb, 10, 3000), sge_of(&b, mb, 4000, BUF - 4000)};
        NTSTATUS st = qb->Dispatch->NdkReceive(qb, (PVOID)0xB1, rs, 2);
        fill(a.p + 200, len, round);
        NDK_SGE ss = sge_of(&a, ma, 200, len);
        if (st == STATUS_SUCCESS)
            st = qa->Dispatch->NdkSend(qa, (PVOID)0xA1, &ss, 1, 0);
        memset(a.p + 200, 0, len); /* posted: the bytes went to the adapter already */
        int done = st == STATUS_SUCCESS && wait_result(f, f->cq, STATUS_SUCCESS, (PVOID)0xA1) &&
                   wait_result(f, f->rcq, STATUS_SUCCESS, (PVOID)0xB1);
        uint8_t *got = malloc(len);
        ULONG first = len < 3000 ? len : 3000;
        memcpy(got, b.p + 10, first);
        memcpy(got + first, b.p + 4000, len - first);
        int ok = done && filled(got, len, round) && all(b.p, 10, 0x5A) && all(b.p + 10 + first, 3000 - first, 0x5A) &&
                 all(b.p + 4000 + (len - first), BUF - 4000 - (len - first), 0x5A);
        tap_ok(ok, "Send of %u bytes from host memory (changed right after posting) into a receive of 2 SGEs: "
                   "every byte home, the rest of the buffer untouched", (unsigned)len);
        free(got);
    }
    /* Deregister and close bring the regions home: nothing to see here but that they
     * complete. */
    tap_ok(ma->Dispatch->NdkDeregisterMr(ma, NULL, NULL) == STATUS_SUCCESS &&
               mb->Dispatch->NdkDeregisterMr(mb, NULL, NULL) == STATUS_SUCCESS,
           "NdkDeregisterMr of host-memory regions");
    NdkCloseObject(&ma->Header, NULL, NULL);
    NdkCloseObject(&mb->Header, NULL, NULL);
    hbuf_free(&a);
    hbuf_free(&b);
}

/* RDMA Write into a registered host region: the bytes come home at deregistration
 * (not before); RDMA Read into host memory: home before the completion, silent ones
 * before a later completion. */
static void rdma(struct fixture *f)
{
    struct hbuf src, dst, sink;
    NDK_MR *ms = NULL, *md = NULL, *mk = NULL;
    int made = hbuf_new(&src, BUF, 0) && hbuf_new(&dst, BUF, 64) && hbuf_new(&sink, BUF, 128);
    if (made) /* the Reads' source: the CPU's bytes when the region is registered */
        fill(src.p, BUF, 7);
    if (!tap_ok(made, "host buffers") ||
        !tap_ok(register_mr(f, src.mdl, BUF, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ, &ms) ==
                        STATUS_SUCCESS &&
                    register_mr(f, sink.mdl, BUF, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, &mk) == STATUS_SUCCESS,
                "source and sink registered"))
        return;
    memset(dst.p, 0x33, BUF);
    NTSTATUS st = register_mr(f, dst.mdl, BUF, NDK_MR_FLAG_ALLOW_REMOTE_WRITE, &md);
    NDK_QP *qa = f->pr.qa;
    NDK_SGE ws = sge_of(&src, ms, 0, BUF);
    if (st == STATUS_SUCCESS)
        st = qa->Dispatch->NdkWrite(qa, (PVOID)0xC1, &ws, 1, (UINT64)(uintptr_t)dst.p,
                                    md->Dispatch->NdkGetRemoteTokenFromMr(md), 0);
    int wrote = st == STATUS_SUCCESS && wait_result(f, f->cq, STATUS_SUCCESS, (PVOID)0xC1);
    tap_ok(wrote && all(dst.p, BUF, 0x33), "RDMA Write into a registered host region: completes, the region's host "
                                           "bytes still the CPU's until it is deregistered");
    st = md->Dispatch->NdkDeregisterMr(md, NULL, NULL);
    tap_ok(st == STATUS_SUCCESS && filled(dst.p, BUF, 7), "NdkDeregisterMr brings the peer's bytes home (%s)",
           NdkFpgaStatusName(st));
    /* Reads: a silent one, then a reported one; both sinks home when the second completes. */
    memset(sink.p, 0, BUF);
    NDK_SGE r1 = sge_of(&sink, mk, 0, 1000), r2 = sge_of(&sink, mk, 1000, BUF - 1000);
    UINT32 rt = ms->Dispatch->NdkGetRemoteTokenFromMr(ms);
    st = qa->Dispatch->NdkRead(qa, (PVOID)0xC2, &r1, 1, (UINT64)(uintptr_t)src.p, rt, NDK_OP_FLAG_SILENT_SUCCESS);
    if (st == STATUS_SUCCESS)
        st = qa->Dispatch->NdkRead(qa, (PVOID)0xC3, &r2, 1, (UINT64)(uintptr_t)src.p + 1000, rt, 0);
    int read = st == STATUS_SUCCESS && wait_result(f, f->cq, STATUS_SUCCESS, (PVOID)0xC3);
    tap_ok(read && filled(sink.p, BUF, 7), "RDMA Reads into host memory (the first silent): every byte home by the "
                                           "second's completion");
    NdkCloseObject(&ms->Header, NULL, NULL);
    NdkCloseObject(&md->Header, NULL, NULL);
    NdkCloseObject(&mk->Header, NULL, NULL);
    hbuf_free(&src);
    hbuf_free(&dst);
    hbuf_free(&sink);
}

/* Fast-register over a LAM of host memory: the CPU's bytes go with it, a Write through
 * the token lands, NdkInvalidate brings them home before its completion. */
static void fast_register(struct fixture *f)
{
    struct hbuf buf, src;
    NDK_MR *fr = NULL, *ms = NULL;
    NDK_ADAPTER *ad = f->s.ad;
    ULONG size = 0, fbo = 0;
    NDK_LOGICAL_ADDRESS_MAPPING *lam = NULL;
    NTSTATUS st = hbuf_new(&buf, 2 * PAGE_SIZE, 0) && hbuf_new(&src, 2 * PAGE_SIZE, 0) ? STATUS_SUCCESS
                                                                                        : STATUS_INSUFFICIENT_RESOURCES;
    if (st == STATUS_SUCCESS && ad->Dispatch->NdkBuildLAM(ad, buf.mdl, 2 * PAGE_SIZE, NULL, NULL, NULL, &size, &fbo) ==
                                    STATUS_BUFFER_TOO_SMALL)
        lam = malloc(size);
    if (lam)
        st = ad->Dispatch->NdkBuildLAM(ad, buf.mdl, 2 * PAGE_SIZE, NULL, NULL, lam, &size, &fbo);
    if (st == STATUS_SUCCESS)
        st = f->pd->Dispatch->NdkCreateMr(f->pd, TRUE, NULL, NULL, &fr);
    if (st == STATUS_SUCCESS)
        st = fr->Dispatch->NdkInitializeFastRegisterMr(fr, 2, TRUE, NULL, NULL);
    if (st == STATUS_SUCCESS)
        st = register_mr(f, src.mdl, 2 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, &ms);
    if (!tap_ok(lam && st == STATUS_SUCCESS, "LAM over host memory, fast-register MR, source (%s)",
                NdkFpgaStatusName(st)))
        return;
    NDK_QP *qa = f->pr.qa, *qb = f->pr.qb;
    for (unsigned round = 0; round < 4; round++) {
        fill(buf.p, 2 * PAGE_SIZE, 100 + round); /* the CPU's bytes, fast-registered with the region */
        st = qa->Dispatch->NdkFastRegister(qa, (PVOID)0xD1, fr, 2, lam->AdapterPageArray, 0, 2 * PAGE_SIZE, buf.p,
                                           NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ);
        int ok = st == STATUS_SUCCESS && wait_result(f, f->cq, STATUS_SUCCESS, (PVOID)0xD1);
        /* The peer writes the middle 5000 bytes; the rest stays what the CPU put there. */
        fill(src.p, 5000, 200 + round);
        NDK_SGE s = sge_of(&src, ms, 0, 5000);
        UINT32 token = fr->Dispatch->NdkGetRemoteTokenFromMr(fr);
        st = qb->Dispatch->NdkWrite(qb, (PVOID)0xD2, &s, 1, (UINT64)(uintptr_t)buf.p + 1000, token, 0);
        ok = ok && st == STATUS_SUCCESS && wait_result(f, f->cq, STATUS_SUCCESS, (PVOID)0xD2);
        st = qa->Dispatch->NdkInvalidate(qa, (PVOID)0xD3, &fr->Header, 0);
        ok = ok && st == STATUS_SUCCESS && wait_result(f, f->cq, STATUS_SUCCESS, (PVOID)0xD3);
        uint8_t *want = malloc(2 * PAGE_SIZE);
        fill(want, 2 * PAGE_SIZE, 100 + round);
        fill(want + 1000, 5000, 200 + round);
        tap_ok(ok && memcmp(want, buf.p, 2 * PAGE_SIZE) == 0,
               "round %u: the CPU's bytes fast-registered, the peer's Write through the token home at NdkInvalidate, "
               "the bytes around it unchanged", round + 1);
        free(want);
    }
    ad->Dispatch->NdkReleaseLAM(ad, lam);
    free(lam);
    NdkCloseObject(&fr->Header, NULL, NULL);
    NdkCloseObject(&ms->Header, NULL, NULL);
    hbuf_free(&buf);
    hbuf_free(&src);
}

/* An SGE of the privileged token: len bytes at off of a LAM (its pages' adapter addresses). */
static NDK_SGE lam_sge(const NDK_LOGICAL_ADDRESS_MAPPING *lam, UINT32 token, size_t off, ULONG len)
{
    NDK_SGE sge;
    memset(&sge, 0, sizeof(sge));
    sge.LogicalAddress.QuadPart = lam->AdapterPageArray[off / PAGE_SIZE].QuadPart + (LONGLONG)(off % PAGE_SIZE);
    sge.Length = len;
    sge.MemoryRegionToken = token;
    return sge;
}

static NDK_LOGICAL_ADDRESS_MAPPING *lam_of(NDK_ADAPTER *ad, MDL *mdl, size_t len)
{
    ULONG size = 0, fbo = 0;
    if (ad->Dispatch->NdkBuildLAM(ad, mdl, len, NULL, NULL, NULL, &size, &fbo) != STATUS_BUFFER_TOO_SMALL)
        return NULL;
    NDK_LOGICAL_ADDRESS_MAPPING *lam = malloc(size);
    if (lam && ad->Dispatch->NdkBuildLAM(ad, mdl, len, NULL, NULL, lam, &size, &fbo) != STATUS_SUCCESS) {
        free(lam);
        lam = NULL;
    }
    return lam;
}

/* The privileged token over LAMs of host memory: a Send's source and a receive's
 * buffer named by adapter addresses; a Read of many pages into host memory. */
static void privileged(struct fixture *f)
{
    NDK_ADAPTER *ad = f->s.ad;
    struct hbuf a, b;
    NDK_LOGICAL_ADDRESS_MAPPING *la = NULL, *lb = NULL;
    if (hbuf_new(&a, 2 * PAGE_SIZE, 0) && hbuf_new(&b, 2 * PAGE_SIZE, 0)) {
        la = lam_of(ad, a.mdl, 2 * PAGE_SIZE);
        lb = lam_of(ad, b.mdl, 2 * PAGE_SIZE);
    }
    UINT32 token = 0;
    f->pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(f->pd, &token);
    if (!tap_ok(la && lb, "LAMs over host memory"))
        return;
    NDK_QP *qa = f->pr.qa, *qb = f->pr.qb;
    memset(b.p, 0x11, 2 * PAGE_SIZE);
    fill(a.p, 2 * PAGE_SIZE, 42);
    NDK_SGE r = lam_sge(lb, token, 100, 6000), s = lam_sge(la, token, 50, 6000);
    NTSTATUS st = qb->Dispatch->NdkReceive(qb, (PVOID)0xE1, &r, 1);
    if (st == STATUS_SUCCESS)
        st = qa->Dispatch->NdkSend(qa, (PVOID)0xE2, &s, 1, 0);
    int ok = st == STATUS_SUCCESS && wait_result(f, f->cq, STATUS_SUCCESS, (PVOID)0xE2) &&
             wait_result(f, f->rcq, STATUS_SUCCESS, (PVOID)0xE1);
    tap_ok(ok && memcmp(b.p + 100, a.p + 50, 6000) == 0 && all(b.p, 100, 0x11) && all(b.p + 6100, 2 * PAGE_SIZE - 6100, 0x11),
           "privileged token over host LAMs: a Send of 6000 bytes across pages, received home byte for byte");
    ad->Dispatch->NdkReleaseLAM(ad, la);
    ad->Dispatch->NdkReleaseLAM(ad, lb);
    free(la);
    free(lb);
    hbuf_free(&a);
    hbuf_free(&b);
}

static VOID closed(PVOID ctx)
{
    consumer_call_done(ctx, STATUS_SUCCESS);
}

/* A large Read into host memory: the copy home is bounded in flight like a buffer read. */
static void large_read(struct fixture *f, size_t len)
{
    struct hbuf src, sink;
    NDK_MR *ms = NULL, *mk = NULL;
    int made = hbuf_new(&src, len, 0) && hbuf_new(&sink, len, 0);
    if (made) /* what the peer reads: the CPU's bytes when the region is registered */
        fill(src.p, len, 9);
    if (!tap_ok(made &&
                    register_mr(f, src.mdl, len, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ, &ms) ==
                        STATUS_SUCCESS &&
                    register_mr(f, sink.mdl, len, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, &mk) == STATUS_SUCCESS,
                "%zu KiB source and sink registered over host memory", len / 1024))
        return;
    memset(sink.p, 0, len);
    NDK_SGE k = sge_of(&sink, mk, 0, (ULONG)len);
    uint64_t t0 = consumer_now_ms();
    NTSTATUS st = f->pr.qa->Dispatch->NdkRead(f->pr.qa, (PVOID)0xF1, &k, 1, (UINT64)(uintptr_t)src.p,
                                              ms->Dispatch->NdkGetRemoteTokenFromMr(ms), 0);
    int ok = st == STATUS_SUCCESS && wait_result(f, f->cq, STATUS_SUCCESS, (PVOID)0xF1);
    tap_ok(ok && filled(sink.p, len, 9), "RDMA Read of %zu KiB into host memory: every byte home by its completion "
                                        "(%llu ms)", len / 1024, (unsigned long long)(consumer_now_ms() - t0));
    /* Closing a region (without deregistering it) brings its bytes home too. */
    memset(sink.p, 0, len);
    struct consumer_call k2 = {0, 0, NULL};
    st = NdkCloseObject(&mk->Header, closed, &k2);
    st = consumer_call_wait(&k2, st == STATUS_PENDING ? st : STATUS_SUCCESS, f->s.wait_ms);
    tap_ok(st == STATUS_SUCCESS && filled(sink.p, len, 9),
           "closing a registered host region brings its bytes home before the close completes (%s)",
           NdkFpgaStatusName(st));
    NdkCloseObject(&ms->Header, NULL, NULL);
    hbuf_free(&src);
    hbuf_free(&sink);
}

/* Shadow pages are the adapter's: a LAM's come back at NdkReleaseLAM, a region's at
 * deregistration (all of user memory can be taken again afterwards). */
static void pages_return(struct fixture *f)
{
    NDK_ADAPTER *ad = f->s.ad;
    NDKFPGA_ADAPTER_DETAILS d;
    if (!tap_ok(NdkFpgaQueryAdapterDetails(ad, &d) == STATUS_SUCCESS, "adapter details"))
        return;
    int ok = 1;
    for (int i = 0; i < 3 && ok; i++) {
        struct hbuf b;
        ULONG size = 0, fbo = 0;
        ok = hbuf_new(&b, 8 * PAGE_SIZE, 0) &&
             ad->Dispatch->NdkBuildLAM(ad, b.mdl, 8 * PAGE_SIZE, NULL, NULL, NULL, &size, &fbo) ==
                 STATUS_BUFFER_TOO_SMALL;
        NDK_LOGICAL_ADDRESS_MAPPING *lam = ok ? malloc(size) : NULL;
        ok = lam && ad->Dispatch->NdkBuildLAM(ad, b.mdl, 8 * PAGE_SIZE, NULL, NULL, lam, &size, &fbo) == STATUS_SUCCESS;
        if (ok)
            ad->Dispatch->NdkReleaseLAM(ad, lam);
        free(lam);
        hbuf_free(&b);
    }
    MDL *all_mem = NULL;
    NTSTATUS st = NdkFpgaAllocateBuffer(ad, d.UserMemoryBytes - 64 * PAGE_SIZE, &all_mem);
    tap_ok(ok && st == STATUS_SUCCESS, "LAMs built and released: their pages return (then nearly all of user memory "
                                       "is allocated at once: %s)", NdkFpgaStatusName(st));
    NdkFpgaFreeBuffer(ad, all_mem);
}

int main(int argc, char **argv)
{
    const char *dev = argc > 1 ? argv[1] : "model";
    struct fixture f;
    memset(&f, 0, sizeof(f));
    if (setup(&f, dev)) {
        mdl_rules(&f);
        send_receive(&f);
        rdma(&f);
        fast_register(&f);
        privileged(&f);
        large_read(&f, strncmp(dev, "sim", 3) == 0 ? 64 * 1024 : 1024 * 1024);
        pages_return(&f);
    }
    consumer_pair_close(&f.pr);
    if (f.s.ad)
        NdkFpgaCloseAdapter(f.s.ad);
    printf("%d passed, %d failed\n", tap_count - tap_failures, tap_failures);
    return tap_done();
}
