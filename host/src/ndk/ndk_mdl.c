/* SPDX-License-Identifier: Apache-2.0 */
/* Adapter memory as the consumer sees it: buffers (NdkFpgaAllocateBuffer: adapter
 * pages named by a unique host address range), their MDLs, the page lists built from
 * MDL chains (NdkBuildLAM, NdkRegisterMr) and copies to and from adapter memory. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ndk_internal.h"

int ndk_user_range_ok(const struct ndk_adapter *ad, uint64_t addr, uint64_t len)
{
    uint64_t lo = ad->info.user_base, hi = ad->info.mem_bytes;
    return addr >= lo && addr <= hi && len <= hi - addr;
}

int ndk_page_allocated(const struct ndk_adapter *ad, PFN_NUMBER pfn)
{
    if (pfn < ad->first_page || pfn - ad->first_page >= ad->npages)
        return 0;
    return __atomic_load_n(&ad->page_used[pfn - ad->first_page], __ATOMIC_RELAXED) != 0;
}

/* Whether an MDL (the adapter's own, or one a consumer built over part of it, as in a
 * chain) describes memory of a buffer this adapter allocated: its virtual range lies in
 * the buffer's reservation (unique to the buffer: another adapter's MDL, naming the same
 * page numbers, is not inside it) and its page numbers are the buffer's at that offset. */
static int mdl_in_own_buffer(struct ndk_adapter *ad, const MDL *m)
{
    uintptr_t va = (uintptr_t)MmGetMdlVirtualAddress(m);
    int ok = 0;
    pthread_mutex_lock(&ad->lock);
    for (const struct ndk_buffer *b = ad->buffers; b && !ok; b = b->next) {
        uintptr_t lo = (uintptr_t)b->va_base;
        if (va < lo || va - lo >= b->va_len || m->ByteCount > b->va_len - (va - lo))
            continue;
        uint32_t first = (uint32_t)((va - lo) >> PAGE_SHIFT);
        uint32_t span = ADDRESS_AND_SIZE_TO_SPAN_PAGES(va, m->ByteCount);
        ok = 1;
        for (uint32_t i = 0; i < span && ok; i++)
            ok = first + i < b->npages && m->PfnArray[i] == b->pfn[first + i];
    }
    pthread_mutex_unlock(&ad->lock);
    return ok;
}

uint32_t ndk_mdl_pages(struct ndk_adapter *ad, const MDL *mdl, SIZE_T length, uint64_t *pages,
                       uint32_t cap, ULONG *fbo, NTSTATUS *st)
{
    *st = STATUS_INVALID_PARAMETER;
    if (!mdl || length == 0 || !mdl->PfnArray)
        return 0;
    uintptr_t va0 = (uintptr_t)MmGetMdlVirtualAddress(mdl);
    if (va0 == 0 || !mdl->StartVa || mdl->ByteOffset >= PAGE_SIZE) /* zero-based VAs are not supported */
        return 0;
    if (fbo)
        *fbo = BYTE_OFFSET(va0);
    uint32_t n = 0;
    uintptr_t expect = va0; /* next virtual byte the chain must continue at */
    SIZE_T left = length;
    for (const MDL *m = mdl; m && left; m = m->Next) {
        uintptr_t va = (uintptr_t)MmGetMdlVirtualAddress(m);
        if (m->ByteOffset >= PAGE_SIZE || BYTE_OFFSET(m->StartVa) != 0 || !m->PfnArray || m->ByteCount == 0)
            return 0;
        if (!mdl_in_own_buffer(ad, m))
            return 0; /* not memory of this adapter (another adapter's MDL may name the same pages) */
        if (va != expect)
            return 0; /* not virtually contiguous */
        SIZE_T take = m->ByteCount < left ? m->ByteCount : left;
        uint32_t span = ADDRESS_AND_SIZE_TO_SPAN_PAGES(va, take);
        for (uint32_t i = 0; i < span; i++) {
            uint64_t addr = (uint64_t)m->PfnArray[i] << PAGE_SHIFT;
            if (!ndk_user_range_ok(ad, addr, PAGE_SIZE) || !ndk_page_allocated(ad, m->PfnArray[i]))
                return 0; /* not a page of a buffer this adapter allocated */
            if (i == 0 && m != mdl && BYTE_OFFSET(va) != 0) {
                /* Continues inside the previous MDL's last page: same page required. */
                if (!pages || n == 0 || pages[n - 1] != addr)
                    return 0;
                continue;
            }
            if (n >= cap) {
                *st = STATUS_INSUFFICIENT_RESOURCES;
                return 0;
            }
            if (pages)
                pages[n] = addr;
            n++;
        }
        expect = va + take;
        left -= take;
    }
    if (left)
        return 0; /* Length past the chain */
    *st = STATUS_SUCCESS;
    return n;
}

NTSTATUS ndk_build_lam(NDK_ADAPTER *a, MDL *mdl, SIZE_T length, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx,
                       NDK_LOGICAL_ADDRESS_MAPPING *lam, ULONG *lam_size, ULONG *fbo)
{
    (void)rc;
    (void)ctx;
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !mdl || !lam_size || !fbo || length == 0)
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    NTSTATUS st;
    /* The chain's page count first (without a page array only single-MDL
     * continuation checks are skipped, so count with a scratch array). */
    uint32_t cap = ad->npages;
    uint64_t *tmp = malloc((size_t)cap * sizeof(*tmp));
    if (!tmp)
        return STATUS_INSUFFICIENT_RESOURCES;
    ULONG f = 0;
    uint32_t n = ndk_mdl_pages(ad, mdl, length, tmp, cap, &f, &st);
    if (n == 0) {
        free(tmp);
        return st;
    }
    ULONG need = (ULONG)(offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) + (size_t)n * sizeof(NDK_LOGICAL_ADDRESS));
    if (!lam || *lam_size < need) {
        *lam_size = need;
        free(tmp);
        return STATUS_BUFFER_TOO_SMALL;
    }
    lam->AdapterContext = ad;
    lam->AdapterPageCount = n;
    for (uint32_t i = 0; i < n; i++)
        lam->AdapterPageArray[i].QuadPart = (LONGLONG)tmp[i];
    free(tmp);
    *lam_size = need;
    *fbo = f;
    return STATUS_SUCCESS;
}

VOID ndk_release_lam(NDK_ADAPTER *a, NDK_LOGICAL_ADDRESS_MAPPING *lam)
{
    (void)a;
    if (lam)
        lam->AdapterPageCount = 0;
}

int ndk_pages_take(struct ndk_adapter *ad, uint32_t n, PFN_NUMBER *pfn)
{
    uint32_t got = 0;
    for (uint32_t p = 0; p < ad->npages && got < n; p++)
        if (!ad->page_used[p])
            pfn[got++] = ad->first_page + p;
    if (got < n)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        ad->page_used[pfn[i] - ad->first_page] = 1;
    return 1;
}

void ndk_pages_put(struct ndk_adapter *ad, uint32_t n, const PFN_NUMBER *pfn)
{
    for (uint32_t i = 0; i < n; i++)
        ad->page_used[pfn[i] - ad->first_page] = 0;
}

static NTSTATUS alloc_buffer(NDK_ADAPTER *a, SIZE_T length, MDL **out, int scattered)
{
    if (!out)
        return STATUS_INVALID_PARAMETER;
    *out = NULL;
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || length == 0)
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    if (length > (SIZE_T)ad->npages * PAGE_SIZE)
        return STATUS_INSUFFICIENT_RESOURCES;
    uint32_t n = (uint32_t)((length + PAGE_SIZE - 1) / PAGE_SIZE);
    struct ndk_buffer *b = calloc(1, sizeof(*b) + (size_t)n * sizeof(PFN_NUMBER));
    if (!b)
        return STATUS_INSUFFICIENT_RESOURCES;
    /* A unique host address range names the buffer; PROT_NONE: never touched. */
    void *va = mmap(NULL, (size_t)n * PAGE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (va == MAP_FAILED) {
        free(b);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    pthread_mutex_lock(&ad->lock);
    if (!ndk_pages_take(ad, n, b->pfn)) {
        pthread_mutex_unlock(&ad->lock);
        munmap(va, (size_t)n * PAGE_SIZE);
        free(b);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    b->next = ad->buffers;
    ad->buffers = b;
    pthread_mutex_unlock(&ad->lock);
    if (scattered) {
        for (uint32_t i = 0; i < n / 2; i++) {
            PFN_NUMBER t = b->pfn[i];
            b->pfn[i] = b->pfn[n - 1 - i];
            b->pfn[n - 1 - i] = t;
        }
    }
    b->ad = ad;
    b->va_base = va;
    b->va_len = (size_t)n * PAGE_SIZE;
    b->npages = n;
    b->mdl.Next = NULL;
    b->mdl.StartVa = va;
    b->mdl.ByteOffset = 0;
    b->mdl.ByteCount = (ULONG)length;
    b->mdl.PfnArray = b->pfn;
    b->mdl.ProviderContext = b;
    *out = &b->mdl;
    return STATUS_SUCCESS;
}

NTSTATUS NdkFpgaAllocateBuffer(NDK_ADAPTER *a, SIZE_T length, MDL **out)
{
    return alloc_buffer(a, length, out, 0);
}

NTSTATUS NdkFpgaAllocateScatteredBuffer(NDK_ADAPTER *a, SIZE_T length, MDL **out)
{
    return alloc_buffer(a, length, out, 1);
}

/* The buffer whose MDL this is, looked up in the adapter's own list (never
 * trusting anything in the MDL: a hand-made or another adapter's MDL is not found). */
static struct ndk_buffer *buffer_of(struct ndk_adapter *ad, const MDL *mdl)
{
    if (!mdl)
        return NULL;
    pthread_mutex_lock(&ad->lock);
    struct ndk_buffer *b = ad->buffers;
    while (b && &b->mdl != mdl)
        b = b->next;
    pthread_mutex_unlock(&ad->lock);
    return b;
}

VOID NdkFpgaFreeBuffer(NDK_ADAPTER *a, MDL *mdl)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !mdl)
        return;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    struct ndk_buffer *b = buffer_of(ad, mdl);
    if (!b)
        return;
    pthread_mutex_lock(&ad->lock);
    ndk_pages_put(ad, b->npages, b->pfn);
    for (struct ndk_buffer **pp = &ad->buffers; *pp; pp = &(*pp)->next) {
        if (*pp == b) {
            *pp = b->next;
            break;
        }
    }
    pthread_mutex_unlock(&ad->lock);
    munmap(b->va_base, b->va_len);
    b->ad = NULL;
    free(b);
}

void ndk_free_buffers(struct ndk_adapter *ad)
{
    while (ad->buffers) {
        struct ndk_buffer *b = ad->buffers;
        ad->buffers = b->next;
        munmap(b->va_base, b->va_len);
        free(b);
    }
}

/* Largest data chunk of one MEM_WRITE / MEM_READ: a MEM_WRITE fills one frame, and a
 * MEM_READ's reply (MSG_HDR + data) fits one of the adapter's TX frames. */
#define MEM_CHUNK_MAX (NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE - NF_MEM_WRITE_REQ_SIZE)
_Static_assert(NF_MSG_HDR_SIZE + MEM_CHUNK_MAX <= NF_LINK_MAX_PAYLOAD, "a MEM_READ reply fits one frame");

/* A copy in progress: its messages in flight, each in a slot of its own. */
struct mem_run {
    struct ndk_req *slot;
    uint32_t *free_slots, nfree;
    NTSTATUS status; /* the first failure */
};

/* One MEM_WRITE/MEM_READ completed (under ad->lock; the link thread, or the death handler
 * and deadline watch with body NULL): its slot is free again. */
static void mem_reply(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS status, const uint8_t *body, size_t len)
{
    struct mem_run *run = r->arg;
    if (status == STATUS_SUCCESS && r->op == NF_OP_MEM_READ) {
        if (!body || len < r->out_cap)
            status = STATUS_INTERNAL_ERROR;
        else
            memcpy(r->out, body, r->out_cap);
    }
    if (!body && status == STATUS_SUCCESS)
        status = STATUS_INTERNAL_ERROR;
    if (status != STATUS_SUCCESS && run->status == STATUS_SUCCESS)
        run->status = status;
    run->free_slots[run->nfree++] = (uint32_t)(r - run->slot);
    pthread_cond_broadcast(&ad->cond);
}

/* Bytes from pos (within pfn[pos / PAGE_SIZE]) that lie at consecutive adapter addresses,
 * at most max: a chunk may cross pages only where the pages are adjacent. */
static SIZE_T mem_run_len(const PFN_NUMBER *pfn, SIZE_T pos, SIZE_T max)
{
    SIZE_T page = pos / PAGE_SIZE, n = PAGE_SIZE - pos % PAGE_SIZE;
    while (n < max && pfn[page + 1] == pfn[page] + 1) {
        page++;
        n += PAGE_SIZE;
    }
    return n < max ? n : max;
}

/* Messages of a copy in flight. Reads: the adapter answers a frame only when all its
 * replies fit its TX window (else it answers reads short, INSUFFICIENT_RESOURCES), and the
 * link may put every read in flight into one frame; each reply takes a TX frame, and
 * other traffic's replies between them may take one each, so at most half the window,
 * less one for the rest. Writes: enough to keep the link's window full twice over. */
static uint32_t mem_depth(const struct ndk_adapter *ad, int write)
{
    if (write) {
        uint32_t rx = ad->info.rx_slots ? ad->info.rx_slots : 1u;
        return 2u * (rx > NF_LINK_MAX_SLOTS ? NF_LINK_MAX_SLOTS : rx);
    }
    uint32_t tx = ad->info.tx_slots > NF_LINK_MAX_SLOTS ? NF_LINK_MAX_SLOTS : ad->info.tx_slots;
    // cppcheck-suppress knownConditionTrueFalse ; tx_slots is the adapter's INFO, not a constant
    return tx >= 3u ? (tx - 1u) / 2u : 1u;
}

NTSTATUS ndk_mem_copy(struct ndk_adapter *ad, const PFN_NUMBER *pfn, SIZE_T pos, void *data, SIZE_T len, int write)
{
    if (len == 0)
        return STATUS_SUCCESS;
    if (!pfn || !data)
        return STATUS_INVALID_PARAMETER;
    uint32_t span = ADDRESS_AND_SIZE_TO_SPAN_PAGES(pos, len);
    for (uint32_t i = (uint32_t)(pos / PAGE_SIZE); i < span; i++)
        if (!ndk_user_range_ok(ad, (uint64_t)pfn[i] << PAGE_SHIFT, PAGE_SIZE))
            return STATUS_INVALID_PARAMETER;
    uint32_t depth = mem_depth(ad, write);
    struct mem_run run = {calloc(depth, sizeof(struct ndk_req)), calloc(depth, sizeof(uint32_t)), 0,
                          STATUS_SUCCESS};
    uint8_t *msg = malloc(NF_LINK_MAX_PAYLOAD);
    if (!run.slot || !run.free_slots || !msg) {
        free(run.slot);
        free(run.free_slots);
        free(msg);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    for (uint32_t i = 0; i < depth; i++)
        run.free_slots[run.nfree++] = depth - 1u - i;
    SIZE_T done = 0;
    while (done < len) {
        SIZE_T at = pos + done;
        SIZE_T chunk = mem_run_len(pfn, at, len - done < MEM_CHUNK_MAX ? len - done : MEM_CHUNK_MAX);
        uint32_t addr = (uint32_t)((pfn[at / PAGE_SIZE] << PAGE_SHIFT) + at % PAGE_SIZE);
        struct nf_mem_write_req q = {addr, (uint32_t)chunk};
        memcpy(msg + NF_MSG_HDR_SIZE, &q, sizeof(q));
        size_t mlen = NF_MSG_HDR_SIZE + sizeof(q);
        if (write) {
            memcpy(msg + mlen, (const uint8_t *)data + done, chunk);
            mlen += chunk;
            while (mlen % 8)
                msg[mlen++] = 0;
        }
        /* A free slot (bounded: every message in flight completes by its deadline). */
        pthread_mutex_lock(&ad->lock);
        while (run.nfree == 0 && run.status == STATUS_SUCCESS) {
            for (uint32_t i = 0; i < depth; i++)
                (void)ndk_req_overdue(ad, &run.slot[i], ndk_now_us()); /* only ones in flight */
            if (run.nfree == 0 && run.status == STATUS_SUCCESS)
                ndk_cond_wait_ms(ad, &ad->cond, NDK_WATCH_PERIOD_MS);
        }
        if (run.status != STATUS_SUCCESS) {
            pthread_mutex_unlock(&ad->lock);
            break;
        }
        struct ndk_req *r = &run.slot[run.free_slots[--run.nfree]];
        pthread_mutex_unlock(&ad->lock);
        memset(r, 0, sizeof(*r));
        r->on_reply = mem_reply;
        r->arg = &run;
        if (!write) {
            r->out = (uint8_t *)data + done;
            r->out_cap = chunk;
        }
        NTSTATUS st = ndk_req_send(ad, r, write ? NF_OP_MEM_WRITE : NF_OP_MEM_READ, msg, mlen, 0);
        if (st != STATUS_SUCCESS && st != STATUS_PENDING) {
            /* Refused inline: its reply never comes. */
            pthread_mutex_lock(&ad->lock);
            run.free_slots[run.nfree++] = (uint32_t)(r - run.slot);
            if (run.status == STATUS_SUCCESS)
                run.status = st;
            pthread_mutex_unlock(&ad->lock);
            break;
        }
        done += chunk;
    }
    pthread_mutex_lock(&ad->lock);
    while (run.nfree < depth) {
        for (uint32_t i = 0; i < depth; i++)
            (void)ndk_req_overdue(ad, &run.slot[i], ndk_now_us());
        if (run.nfree < depth)
            ndk_cond_wait_ms(ad, &ad->cond, NDK_WATCH_PERIOD_MS);
    }
    NTSTATUS status = run.status;
    pthread_mutex_unlock(&ad->lock);
    free(run.slot);
    free(run.free_slots);
    free(msg);
    return status;
}

static NTSTATUS mem_io(NDK_ADAPTER *a, MDL *mdl, SIZE_T off, void *data, SIZE_T len, int write)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !mdl || (!data && len))
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    if (!buffer_of(ad, mdl))
        return STATUS_INVALID_PARAMETER; /* not an MDL this adapter allocated */
    if (!mdl->PfnArray || off > mdl->ByteCount || len > mdl->ByteCount - off || mdl->ByteOffset >= PAGE_SIZE)
        return STATUS_INVALID_PARAMETER;
    uint32_t span = ADDRESS_AND_SIZE_TO_SPAN_PAGES(mdl->ByteOffset, mdl->ByteCount);
    for (uint32_t i = 0; i < span; i++)
        if (!ndk_user_range_ok(ad, (uint64_t)mdl->PfnArray[i] << PAGE_SHIFT, PAGE_SIZE))
            return STATUS_INVALID_PARAMETER;
    return ndk_mem_copy(ad, mdl->PfnArray, mdl->ByteOffset + off, data, len, write);
}

NTSTATUS NdkFpgaWriteBuffer(NDK_ADAPTER *a, MDL *mdl, SIZE_T off, const VOID *data, SIZE_T len)
{
    return mem_io(a, mdl, off, (void *)(uintptr_t)data, len, 1);
}

NTSTATUS NdkFpgaReadBuffer(NDK_ADAPTER *a, MDL *mdl, SIZE_T off, VOID *data, SIZE_T len)
{
    return mem_io(a, mdl, off, data, len, 0);
}
