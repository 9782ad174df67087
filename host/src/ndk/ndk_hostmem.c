/* SPDX-License-Identifier: Apache-2.0 */
/* Consumer buffers in ordinary host memory (IoAllocateMdl + MmBuildMdlForNonPagedPool).
 * Adapter pages shadow the host pages of a LAM (NdkBuildLAM) or of an MR registered over
 * host memory, and the bytes move where NDK hands a buffer between consumer and adapter:
 * into the adapter when a request that reads local memory is posted and when a region
 * is registered or fast-registered; back into host memory before the completion of a
 * request that wrote local memory is delivered (held in order behind earlier ones), and
 * when a region is invalidated, deregistered or closed. docs/host-memory.md has the rule.
 *
 * Locks: ad->lock, then ad->hm_lock (a leaf: the shadow table and the MRs' regions). */
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"

#define PAGE_MASK_LO ((uint64_t)PAGE_SIZE - 1u)
/* Largest data chunk of one MEM_WRITE. */
#define PUSH_CHUNK_MAX (NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE - NF_MEM_WRITE_REQ_SIZE)

/* ------------------------------------------------------------------------- */
/* Host MDLs                                                                  */

/* Every host MDL this library made, so that an MDL is trusted only when it is one. */
struct host_mdl {
    MDL mdl;
    struct host_mdl *next;
    int built; /* MmBuildMdlForNonPagedPool ran */
    PFN_NUMBER pfn[];
};
static pthread_mutex_t host_mdls_lock = PTHREAD_MUTEX_INITIALIZER;
static struct host_mdl *host_mdls;

// cppcheck-suppress constParameter ; the signature is the kernel's IoAllocateMdl
MDL *IoAllocateMdl(PVOID va, ULONG length, BOOLEAN secondary, BOOLEAN charge_quota, PVOID irp)
{
    (void)charge_quota;
    uintptr_t a = (uintptr_t)va;
    if (!va || length == 0 || secondary || irp || a + length < a)
        return NULL; /* no IRPs here, so no secondary buffers */
    uint32_t span = ADDRESS_AND_SIZE_TO_SPAN_PAGES(va, length);
    struct host_mdl *h = calloc(1, sizeof(*h) + (size_t)span * sizeof(PFN_NUMBER));
    if (!h)
        return NULL;
    h->mdl.StartVa = (PVOID)(a & ~(uintptr_t)PAGE_MASK_LO);
    h->mdl.ByteOffset = BYTE_OFFSET(va);
    h->mdl.ByteCount = length;
    h->mdl.PfnArray = h->pfn;
    pthread_mutex_lock(&host_mdls_lock);
    h->next = host_mdls;
    host_mdls = h;
    pthread_mutex_unlock(&host_mdls_lock);
    return &h->mdl;
}

/* Under host_mdls_lock: the registry's entry of m, or NULL. */
static struct host_mdl *host_mdl_find(const MDL *m)
{
    struct host_mdl *h = host_mdls;
    while (h && &h->mdl != m)
        h = h->next;
    return h;
}

VOID MmBuildMdlForNonPagedPool(MDL *m)
{
    pthread_mutex_lock(&host_mdls_lock);
    struct host_mdl *h = host_mdl_find(m);
    if (h) {
        uint32_t span = ADDRESS_AND_SIZE_TO_SPAN_PAGES(h->mdl.ByteOffset, h->mdl.ByteCount);
        for (uint32_t i = 0; i < span; i++)
            h->pfn[i] = ((uintptr_t)h->mdl.StartVa >> PAGE_SHIFT) + i; /* host page numbers */
        h->built = 1;
    }
    pthread_mutex_unlock(&host_mdls_lock);
}

// cppcheck-suppress constParameter ; the signature is the kernel's IoFreeMdl
VOID IoFreeMdl(MDL *m)
{
    pthread_mutex_lock(&host_mdls_lock);
    struct host_mdl **pp = &host_mdls;
    while (*pp && &(*pp)->mdl != m)
        pp = &(*pp)->next;
    struct host_mdl *h = *pp;
    if (h)
        *pp = h->next;
    pthread_mutex_unlock(&host_mdls_lock);
    free(h);
}

/* A built host MDL whose fields still say what was built (one that does not is refused). */
static int host_mdl_ok(const MDL *m)
{
    pthread_mutex_lock(&host_mdls_lock);
    const struct host_mdl *h = host_mdl_find(m);
    int ok = h && h->built && m->PfnArray == h->pfn && m->ByteOffset < PAGE_SIZE && m->ByteCount > 0 &&
             BYTE_OFFSET(m->StartVa) == 0 && h->pfn[0] == (uintptr_t)m->StartVa >> PAGE_SHIFT;
    pthread_mutex_unlock(&host_mdls_lock);
    return ok;
}

int ndk_hm_is_host_mdl(const MDL *mdl)
{
    if (!mdl)
        return 0;
    pthread_mutex_lock(&host_mdls_lock);
    int found = host_mdl_find(mdl) != NULL;
    pthread_mutex_unlock(&host_mdls_lock);
    return found;
}

/* The host range of a chain of host MDLs for length bytes: SUCCESS with *va, or
 * INVALID_PARAMETER (not built, not virtually contiguous, another kind of MDL in the
 * chain, length past the chain; zero-based VAs are not supported). */
static NTSTATUS host_chain(const MDL *mdl, SIZE_T length, uintptr_t *va)
{
    if (!mdl || length == 0)
        return STATUS_INVALID_PARAMETER;
    uintptr_t expect = (uintptr_t)MmGetMdlVirtualAddress(mdl);
    *va = expect;
    SIZE_T left = length;
    for (const MDL *m = mdl; m && left; m = m->Next) {
        if (!host_mdl_ok(m) || (uintptr_t)MmGetMdlVirtualAddress(m) != expect)
            return STATUS_INVALID_PARAMETER;
        SIZE_T take = m->ByteCount < left ? m->ByteCount : left;
        expect += take;
        left -= take;
    }
    return left ? STATUS_INVALID_PARAMETER : STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Shadow pages                                                               */

struct ndk_hmap {
    struct ndk_hmap *next; /* the adapter's maps */
    uint32_t npages;
    PFN_NUMBER pfn[];      /* adapter page numbers; page i shadows host page host0 + i */
};

/* Under ad->hm_lock: the host page an adapter address's page shadows (0: none). */
static uintptr_t host_of(const struct ndk_adapter *ad, uint64_t addr)
{
    uint64_t pfn = addr >> PAGE_SHIFT;
    if (!ad->hm_host || pfn < ad->first_page || pfn - ad->first_page >= ad->npages)
        return 0;
    return ad->hm_host[pfn - ad->first_page];
}

/* Adapter pages for npages host pages from host0 (page aligned); NULL when the adapter
 * has not that many free pages or there is no memory. */
static struct ndk_hmap *hmap_new(struct ndk_adapter *ad, uintptr_t host0, uint32_t npages)
{
    struct ndk_hmap *m = calloc(1, sizeof(*m) + (size_t)npages * sizeof(PFN_NUMBER));
    if (!m)
        return NULL;
    m->npages = npages;
    pthread_mutex_lock(&ad->lock);
    if (!ad->hm_host)
        ad->hm_host = calloc(ad->npages, sizeof(*ad->hm_host));
    int ok = ad->hm_host && ndk_pages_take(ad, npages, m->pfn);
    if (ok) {
        m->next = ad->hm_maps;
        ad->hm_maps = m;
        pthread_mutex_lock(&ad->hm_lock);
        for (uint32_t i = 0; i < npages; i++)
            ad->hm_host[m->pfn[i] - ad->first_page] = host0 + (uintptr_t)i * PAGE_SIZE;
        __atomic_add_fetch(&ad->hm_shadows, npages, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&ad->hm_lock);
    }
    pthread_mutex_unlock(&ad->lock);
    if (!ok) {
        free(m);
        return NULL;
    }
    return m;
}

/* Under ad->lock: whether m is one of the adapter's maps; unlinks it when unlink is set. */
static int hmap_listed(struct ndk_adapter *ad, const struct ndk_hmap *m, int unlink)
{
    for (struct ndk_hmap **pp = &ad->hm_maps; *pp; pp = &(*pp)->next) {
        if (*pp == m) {
            if (unlink)
                *pp = m->next;
            return 1;
        }
    }
    return 0;
}

/* Under ad->lock: the pages go back to the adapter (a later message that reuses them
 * follows every copy already queued on the link). */
static void hmap_free_locked(struct ndk_adapter *ad, struct ndk_hmap *m)
{
    if (!m || !hmap_listed(ad, m, 1))
        return;
    pthread_mutex_lock(&ad->hm_lock);
    for (uint32_t i = 0; i < m->npages; i++)
        ad->hm_host[m->pfn[i] - ad->first_page] = 0;
    __atomic_sub_fetch(&ad->hm_shadows, m->npages, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&ad->hm_lock);
    ndk_pages_put(ad, m->npages, m->pfn);
    free(m);
}

void ndk_hm_fini(struct ndk_adapter *ad)
{
    while (ad->hm_maps) {
        struct ndk_hmap *m = ad->hm_maps;
        ad->hm_maps = m->next;
        free(m);
    }
    free(ad->hm_host);
    ad->hm_host = NULL;
}

/* ------------------------------------------------------------------------- */
/* Copies: runs of bytes contiguous in host memory, over adapter pages whole but for
 * the first and the last                                                    */

struct ndk_hm_run {
    uint8_t *host;
    uint64_t off;   /* where the run starts in the request's data (a receive keeps BytesTransferred) */
    uint32_t len, pos, pfn0, npages; /* pos: first byte in the first page pfn[pfn0] */
};

struct ndk_hm_io {
    uint32_t nrun, cap_run, npfn, cap_pfn;
    struct ndk_hm_run *run;
    PFN_NUMBER *pfn;
    int failed; /* no memory while building: the copy is incomplete */
};

void ndk_hm_io_free(struct ndk_hm_io *io)
{
    if (io) {
        free(io->run);
        free(io->pfn);
        free(io);
    }
}

/* Append len bytes at adapter address addr (inside one page), host bytes at host,
 * data offset off; joins the previous run when both sides continue it. */
static void io_add(struct ndk_hm_io *io, uint64_t addr, uint8_t *host, uint64_t off, uint32_t len)
{
    struct ndk_hm_run *last = io->nrun ? &io->run[io->nrun - 1] : NULL;
    int joins = last && last->host + last->len == host && last->off + last->len == off &&
                (addr & PAGE_MASK_LO) == 0 && (last->pos + last->len) % PAGE_SIZE == 0;
    if (io->npfn == io->cap_pfn) {
        uint32_t cap = io->cap_pfn ? io->cap_pfn * 2 : 8;
        PFN_NUMBER *p = realloc(io->pfn, (size_t)cap * sizeof(*p));
        if (!p) {
            io->failed = 1;
            return;
        }
        io->pfn = p;
        io->cap_pfn = cap;
    }
    if (!joins && io->nrun == io->cap_run) {
        uint32_t cap = io->cap_run ? io->cap_run * 2 : 4;
        struct ndk_hm_run *r = realloc(io->run, (size_t)cap * sizeof(*r));
        if (!r) {
            io->failed = 1;
            return;
        }
        io->run = r;
        io->cap_run = cap;
    }
    io->pfn[io->npfn++] = (PFN_NUMBER)(addr >> PAGE_SHIFT);
    if (joins) {
        last->len += len;
        last->npages++;
        return;
    }
    io->run[io->nrun++] = (struct ndk_hm_run){host, off, len, (uint32_t)(addr & PAGE_MASK_LO), io->npfn - 1, 1};
}

/* Under ad->hm_lock: the shadowed bytes of a run of adapter memory, page by page.
 * page(i) gives the i-th page's adapter address; rec, when not NULL, the host page it
 * shadowed when the region was recorded (a page shadowing another one since is left out). */
struct page_src {
    uint64_t base;          /* contiguous adapter addresses from base (privileged SGEs) */
    const uint64_t *page;   /* or a page list (an MR's region) */
    const uintptr_t *rec;
};

static void io_add_range(const struct ndk_adapter *ad, struct ndk_hm_io *io, const struct page_src *src,
                         uint64_t at, uint64_t len, uint64_t off)
{
    while (len) {
        uint64_t i = at >> PAGE_SHIFT, in = at & PAGE_MASK_LO;
        uint64_t page = src->page ? src->page[i] : src->base + i * PAGE_SIZE;
        uint32_t n = (uint32_t)(PAGE_SIZE - in < len ? PAGE_SIZE - in : len);
        uintptr_t h = host_of(ad, page);
        if (h && (!src->rec || src->rec[i] == h))
            io_add(io, page + in, (uint8_t *)(h + in), off, n);
        at += n;
        off += n;
        len -= n;
    }
}

static struct ndk_hm_io *io_new(void)
{
    return calloc(1, sizeof(struct ndk_hm_io));
}

/* NULL when io holds nothing to copy (freed). */
static struct ndk_hm_io *io_or_null(struct ndk_hm_io *io)
{
    if (io && io->nrun == 0 && !io->failed) {
        ndk_hm_io_free(io);
        return NULL;
    }
    return io;
}

/* ---- regions: what an MR maps now (registered, or fast-registered) ---- */
struct ndk_hm_region {
    struct ndk_hmap *own; /* NdkRegisterMr over host memory: the MR's own shadows */
    uint64_t va, len;
    uint32_t fbo, npages;
    uint64_t *page;       /* adapter addresses */
    uintptr_t *rec;       /* the host page each shadowed when recorded */
};

static struct ndk_hm_region *region_new(uint32_t npages)
{
    struct ndk_hm_region *g = calloc(1, sizeof(*g) + (size_t)npages * (sizeof(uint64_t) + sizeof(uintptr_t)));
    if (!g)
        return NULL;
    g->npages = npages;
    g->page = (uint64_t *)(void *)(g + 1);
    g->rec = (uintptr_t *)(void *)(g->page + npages);
    return g;
}

/* Under ad->hm_lock: the region's bytes from its byte off (relative to its VA), len bytes. */
static void io_add_region(const struct ndk_adapter *ad, struct ndk_hm_io *io, const struct ndk_hm_region *g,
                          uint64_t off, uint64_t len, uint64_t data_off)
{
    if (off > g->len || len > g->len - off)
        return; /* outside the region: the adapter refuses the access, nothing moves */
    struct page_src src = {0, g->page, g->rec};
    io_add_range(ad, io, &src, g->fbo + off, len, data_off);
}

/* Under ad->hm_lock: the region an MR token names, or NULL. */
static struct ndk_hm_region *region_of_token(const struct ndk_adapter *ad, uint32_t token)
{
    for (struct ndk_mr *mr = ad->hm_mrs; mr; mr = mr->hm_next)
        if (mr->token == token)
            return mr->hreg;
    return NULL;
}

/* Under ad->lock: the MR's region is gone (deregistered, re-registered, closed). */
static void region_drop_locked(struct ndk_adapter *ad, struct ndk_mr *mr)
{
    pthread_mutex_lock(&ad->hm_lock);
    struct ndk_hm_region *g = mr->hreg;
    mr->hreg = NULL;
    for (struct ndk_mr **pp = &ad->hm_mrs; *pp; pp = &(*pp)->hm_next) {
        if (*pp == mr) {
            *pp = mr->hm_next;
            break;
        }
    }
    pthread_mutex_unlock(&ad->hm_lock);
    if (g)
        hmap_free_locked(ad, g->own);
    free(g);
}

/* Under ad->lock: the MR maps g from now on. */
static void region_set_locked(struct ndk_adapter *ad, struct ndk_mr *mr, struct ndk_hm_region *g)
{
    region_drop_locked(ad, mr);
    pthread_mutex_lock(&ad->hm_lock);
    mr->hreg = g;
    mr->hm_next = ad->hm_mrs;
    ad->hm_mrs = mr;
    pthread_mutex_unlock(&ad->hm_lock);
}

/* ---- moving the bytes ---- */

static void push_reply(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS status, const uint8_t *body, size_t len)
{
    (void)ad;
    (void)status;
    (void)body;
    (void)len;
    free(r);
}

/* Host to adapter, without waiting: MEM_WRITE messages ahead of whatever the caller
 * queues next (the adapter runs messages in order). */
static void io_push(struct ndk_adapter *ad, const struct ndk_hm_io *io)
{
    uint8_t *msg = io && io->nrun ? malloc(NF_LINK_MAX_PAYLOAD) : NULL;
    if (!msg)
        return;
    for (uint32_t k = 0; k < io->nrun; k++) {
        const struct ndk_hm_run *run = &io->run[k];
        for (uint32_t done = 0; done < run->len;) {
            uint32_t pos = run->pos + done;
            uint32_t chunk = PAGE_SIZE - pos % PAGE_SIZE;
            if (chunk > run->len - done)
                chunk = run->len - done;
            if (chunk > PUSH_CHUNK_MAX)
                chunk = PUSH_CHUNK_MAX;
            struct nf_mem_write_req q = {
                (uint32_t)((io->pfn[run->pfn0 + pos / PAGE_SIZE] << PAGE_SHIFT) + pos % PAGE_SIZE), chunk};
            memcpy(msg + NF_MSG_HDR_SIZE, &q, sizeof(q));
            size_t mlen = NF_MSG_HDR_SIZE + sizeof(q);
            memcpy(msg + mlen, run->host + done, chunk);
            mlen += chunk;
            while (mlen % 8)
                msg[mlen++] = 0;
            struct ndk_req *r = calloc(1, sizeof(*r));
            if (!r)
                break;
            r->on_reply = push_reply;
            NTSTATUS st = ndk_req_send(ad, r, NF_OP_MEM_WRITE, msg, mlen, 0);
            if (st != STATUS_SUCCESS && st != STATUS_PENDING) {
                free(r);
                free(msg);
                return; /* the link is gone: so is every request that would read them */
            }
            done += chunk;
        }
    }
    free(msg);
}

/* Adapter to host, waiting (bounded by the requests' deadlines); the first failure. */
static NTSTATUS io_pull(struct ndk_adapter *ad, const struct ndk_hm_io *io)
{
    if (io->failed)
        return STATUS_INSUFFICIENT_RESOURCES;
    for (uint32_t k = 0; k < io->nrun; k++) {
        const struct ndk_hm_run *run = &io->run[k];
        NTSTATUS st = ndk_mem_copy(ad, &io->pfn[run->pfn0], run->pos, run->host, run->len, 0);
        if (st != STATUS_SUCCESS)
            return st;
    }
    return STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* LAMs                                                                       */

NTSTATUS ndk_hm_build_lam(NDK_ADAPTER *a, MDL *mdl, SIZE_T length, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx,
                          NDK_LOGICAL_ADDRESS_MAPPING *lam, ULONG *lam_size, ULONG *fbo)
{
    if (!ndk_hm_is_host_mdl(mdl))
        return ndk_build_lam(a, mdl, length, rc, ctx, lam, lam_size, fbo);
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !lam_size || !fbo)
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    uintptr_t va;
    NTSTATUS st = host_chain(mdl, length, &va);
    if (st != STATUS_SUCCESS)
        return st;
    uint32_t n = ADDRESS_AND_SIZE_TO_SPAN_PAGES(va, length);
    if (n > ad->npages)
        return STATUS_INSUFFICIENT_RESOURCES;
    ULONG need = (ULONG)(offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) + (size_t)n * 8u);
    if (!lam || *lam_size < need) {
        *lam_size = need;
        return STATUS_BUFFER_TOO_SMALL;
    }
    struct ndk_hmap *m = hmap_new(ad, va & ~(uintptr_t)PAGE_MASK_LO, n);
    if (!m)
        return STATUS_INSUFFICIENT_RESOURCES;
    lam->AdapterContext = m;
    lam->AdapterPageCount = n;
    for (uint32_t i = 0; i < n; i++)
        lam->AdapterPageArray[i].QuadPart = (LONGLONG)((uint64_t)m->pfn[i] << PAGE_SHIFT);
    *lam_size = need;
    *fbo = BYTE_OFFSET(va);
    return STATUS_SUCCESS;
}

VOID ndk_hm_release_lam(NDK_ADAPTER *a, NDK_LOGICAL_ADDRESS_MAPPING *lam)
{
    if (!lam || !ndk_obj_ok(a, NdkObjectTypeAdapter))
        return;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    pthread_mutex_lock(&ad->lock);
    struct ndk_hmap *m = lam->AdapterContext;
    if (m && hmap_listed(ad, m, 0))
        hmap_free_locked(ad, m);
    pthread_mutex_unlock(&ad->lock);
    ndk_release_lam(a, lam);
}

/* ------------------------------------------------------------------------- */
/* MRs                                                                        */

uint32_t ndk_hm_register_pages(struct ndk_adapter *ad, const MDL *mdl, SIZE_T length, uint64_t *pages, uint32_t cap,
                               ULONG *fbo, NTSTATUS *st, struct ndk_hm_region **out)
{
    *out = NULL;
    uintptr_t va;
    *st = host_chain(mdl, length, &va);
    if (*st != STATUS_SUCCESS)
        return 0;
    uint32_t n = ADDRESS_AND_SIZE_TO_SPAN_PAGES(va, length);
    *st = STATUS_INSUFFICIENT_RESOURCES;
    if (n > cap)
        return 0;
    struct ndk_hm_region *g = region_new(n);
    struct ndk_hmap *m = g ? hmap_new(ad, va & ~(uintptr_t)PAGE_MASK_LO, n) : NULL;
    if (!m) {
        free(g);
        return 0;
    }
    g->own = m;
    g->va = va;
    g->len = length;
    g->fbo = BYTE_OFFSET(va);
    for (uint32_t i = 0; i < n; i++) {
        g->page[i] = pages[i] = (uint64_t)m->pfn[i] << PAGE_SHIFT;
        g->rec[i] = (va & ~(uintptr_t)PAGE_MASK_LO) + (uintptr_t)i * PAGE_SIZE;
    }
    /* The region's bytes go to the adapter ahead of its registration. */
    struct ndk_hm_io *io = io_new();
    if (io) {
        pthread_mutex_lock(&ad->hm_lock);
        io_add_region(ad, io, g, 0, g->len, 0);
        pthread_mutex_unlock(&ad->hm_lock);
        io_push(ad, io);
        ndk_hm_io_free(io);
    }
    *fbo = g->fbo;
    *st = STATUS_SUCCESS;
    *out = g;
    return n;
}

void ndk_hm_region_attach_locked(struct ndk_mr *mr, struct ndk_hm_region *g)
{
    region_set_locked(mr->core.ad, mr, g);
}

void ndk_hm_region_discard(struct ndk_adapter *ad, struct ndk_hm_region *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&ad->lock);
    hmap_free_locked(ad, g->own);
    pthread_mutex_unlock(&ad->lock);
    free(g);
}

void ndk_hm_mr_drop_locked(struct ndk_mr *mr)
{
    if (mr->hreg)
        region_drop_locked(mr->core.ad, mr);
}

/* The MR's region as a copy (NULL: nothing in host memory). */
static struct ndk_hm_io *mr_io(struct ndk_adapter *ad, const struct ndk_mr *mr)
{
    struct ndk_hm_io *io = io_new();
    if (!io)
        return NULL;
    pthread_mutex_lock(&ad->hm_lock);
    if (mr->hreg)
        io_add_region(ad, io, mr->hreg, 0, mr->hreg->len, 0);
    pthread_mutex_unlock(&ad->hm_lock);
    return io_or_null(io);
}

NTSTATUS ndk_hm_mr_pull(struct ndk_mr *mr)
{
    struct ndk_adapter *ad = mr->core.ad;
    if (!ndk_hm_active(ad))
        return STATUS_SUCCESS;
    struct ndk_hm_io *io = mr_io(ad, mr);
    NTSTATUS st = io ? io_pull(ad, io) : STATUS_SUCCESS;
    ndk_hm_io_free(io);
    return st;
}

struct ndk_hm_io *ndk_hm_mr_io(struct ndk_mr *mr)
{
    return ndk_hm_active(mr->core.ad) ? mr_io(mr->core.ad, mr) : NULL;
}

void ndk_hm_fast_register(struct ndk_mr *mr, const NDK_LOGICAL_ADDRESS *pages, ULONG npages, ULONG fbo,
                          SIZE_T length, uint64_t va)
{
    struct ndk_adapter *ad = mr->core.ad;
    struct ndk_hm_region *g = region_new(npages);
    struct ndk_hm_io *io = io_new();
    int shadowed = 0;
    if (g && io) {
        g->va = va;
        g->len = length;
        g->fbo = fbo;
        pthread_mutex_lock(&ad->hm_lock);
        for (ULONG i = 0; i < npages; i++) {
            g->page[i] = (uint64_t)pages[i].QuadPart;
            g->rec[i] = host_of(ad, g->page[i]);
            shadowed |= g->rec[i] != 0;
        }
        if (shadowed)
            io_add_region(ad, io, g, 0, length, 0);
        pthread_mutex_unlock(&ad->hm_lock);
    }
    pthread_mutex_lock(&ad->lock);
    if (shadowed) {
        region_set_locked(ad, mr, g);
        g = NULL;
    } else {
        region_drop_locked(ad, mr); /* adapter memory now (or no memory to say otherwise) */
    }
    pthread_mutex_unlock(&ad->lock);
    free(g);
    io_push(ad, io);
    ndk_hm_io_free(io);
}

/* ------------------------------------------------------------------------- */
/* Work requests                                                              */

struct ndk_hm_io *ndk_hm_sge_io(struct ndk_adapter *ad, const NDK_SGE *sgl, ULONG nsge)
{
    struct ndk_hm_io *io = io_new();
    if (!io)
        return NULL;
    uint64_t off = 0;
    pthread_mutex_lock(&ad->hm_lock);
    for (ULONG i = 0; i < nsge; i++) {
        if (sgl[i].MemoryRegionToken == NF_ADAPTER_PRIVILEGED_TOKEN) {
            uint64_t addr = (uint64_t)sgl[i].LogicalAddress.QuadPart;
            struct page_src src = {addr & ~PAGE_MASK_LO, NULL, NULL};
            io_add_range(ad, io, &src, addr & PAGE_MASK_LO, sgl[i].Length, off);
        } else {
            uint64_t addr = (uint64_t)(uintptr_t)sgl[i].VirtualAddress;
            const struct ndk_hm_region *g = region_of_token(ad, sgl[i].MemoryRegionToken);
            if (g && addr >= g->va)
                io_add_region(ad, io, g, addr - g->va, sgl[i].Length, off);
        }
        off += sgl[i].Length;
    }
    pthread_mutex_unlock(&ad->hm_lock);
    return io_or_null(io);
}

void ndk_hm_push(struct ndk_adapter *ad, struct ndk_hm_io *io)
{
    io_push(ad, io);
    ndk_hm_io_free(io);
}

/* ------------------------------------------------------------------------- */
/* Completions held until their bytes are home                                */

struct ndk_hm_held {
    struct ndk_hm_held *next;
    struct ndk_cq *cq;      /* NULL: a copy alone (a silent success retired) */
    NDK_RESULT_EX r;
    int solicited;
    struct ndk_hm_io *io;
};

/* Keep the first bytes of a receive's data (what the Send brought). */
static void io_trim(struct ndk_hm_io *io, uint64_t bytes)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < io->nrun; i++) {
        struct ndk_hm_run run = io->run[i];
        if (run.off >= bytes)
            continue;
        if (run.off + run.len > bytes)
            run.len = (uint32_t)(bytes - run.off);
        io->run[k++] = run;
    }
    io->nrun = k;
}

/* Callback thread: the held completions, in order, each once its bytes are home. */
static void held_run(void *arg)
{
    struct ndk_adapter *ad = arg;
    pthread_mutex_lock(&ad->lock);
    for (struct ndk_hm_held *h; (h = ad->hm_held);) {
        if (h->io) {
            pthread_mutex_unlock(&ad->lock);
            NTSTATUS st = io_pull(ad, h->io);
            pthread_mutex_lock(&ad->lock);
            if (st != STATUS_SUCCESS && h->r.Status == STATUS_SUCCESS)
                h->r.Status = st; /* the bytes did not arrive: the request did not complete */
            ndk_hm_io_free(h->io);
            h->io = NULL;
        }
        ad->hm_held = h->next;
        if (!ad->hm_held)
            ad->hm_held_tail = NULL;
        if (h->cq) {
            ndk_cq_push(h->cq, &h->r, h->solicited);
            ndk_unref_locked(&h->cq->core);
        }
        free(h);
    }
    ad->hm_held_queued = 0;
    pthread_mutex_unlock(&ad->lock);
}

void ndk_hm_complete(struct ndk_adapter *ad, struct ndk_cq *cq, const NDK_RESULT_EX *r, int solicited,
                     struct ndk_hm_io *io)
{
    int ok = !r || r->Status == STATUS_SUCCESS;
    if (io && !ok) {
        ndk_hm_io_free(io); /* a failed request wrote nothing */
        io = NULL;
    }
    if (ok && r && io && (r->Type == NdkOperationTypeReceive || r->Type == NdkOperationTypeReceiveAndInvalidate))
        io_trim(io, r->BytesTransferred);
    if (ok && r && r->Type == NdkOperationTypeReceiveAndInvalidate && ndk_hm_active(ad)) {
        /* The peer invalidated a local region: its bytes come home too. */
        if (!io)
            io = io_new();
        if (io) {
            pthread_mutex_lock(&ad->hm_lock);
            const struct ndk_hm_region *g = region_of_token(ad, (uint32_t)r->TypeSpecificCompletionOutput);
            if (g)
                io_add_region(ad, io, g, 0, g->len, 0);
            pthread_mutex_unlock(&ad->hm_lock);
        }
    }
    io = io_or_null(io);
    if (!io && !ad->hm_held) {
        if (cq && r)
            ndk_cq_push(cq, r, solicited);
        return;
    }
    struct ndk_hm_held *h = calloc(1, sizeof(*h));
    if (!h) {
        /* No memory to hold it: the result goes now, failed if its bytes did not move. */
        if (cq && r) {
            NDK_RESULT_EX f = *r;
            if (io)
                f.Status = STATUS_INSUFFICIENT_RESOURCES;
            ndk_cq_push(cq, &f, solicited);
        }
        ndk_hm_io_free(io);
        return;
    }
    if (cq && r) {
        h->cq = cq;
        h->r = *r;
        h->solicited = solicited;
        ndk_ref(&cq->core);
    }
    h->io = io;
    if (ad->hm_held_tail)
        ad->hm_held_tail->next = h;
    else
        ad->hm_held = h;
    ad->hm_held_tail = h;
    if (!ad->hm_held_queued) {
        ad->hm_held_queued = 1;
        ndk_queue_event(ad, ndk_event_new(EV_CALL, (void (*)(void))held_run, ad, STATUS_SUCCESS, NULL, NULL));
    }
}
