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
    uint32_t got = 0;
    for (uint32_t p = 0; p < ad->npages && got < n; p++) {
        if (!ad->page_used[p])
            b->pfn[got++] = ad->first_page + p;
    }
    if (got < n) {
        pthread_mutex_unlock(&ad->lock);
        munmap(va, (size_t)n * PAGE_SIZE);
        free(b);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    for (uint32_t i = 0; i < n; i++)
        ad->page_used[b->pfn[i] - ad->first_page] = 1;
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
    for (uint32_t i = 0; i < b->npages; i++)
        ad->page_used[b->pfn[i] - ad->first_page] = 0;
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

/* One MEM_WRITE/MEM_READ of a batch completed. */
static void batch_reply(struct ndk_adapter *ad, struct ndk_req *r, uint32_t status, const uint8_t *body, size_t len)
{
    if (status == NF_STATUS_SUCCESS && r->op == NF_OP_MEM_READ) {
        if (!body || len < r->out_cap)
            status = body ? NF_STATUS_INTERNAL_ERROR : status;
        else
            memcpy(r->out, body, r->out_cap);
    }
    if (!body && status == NF_STATUS_SUCCESS)
        status = NF_STATUS_INTERNAL_ERROR;
    if (status != NF_STATUS_SUCCESS && *r->batch_status == NF_STATUS_SUCCESS)
        *r->batch_status = status;
    (*r->batch_left)--;
    pthread_cond_broadcast(&ad->cond);
}

/* Largest data chunk of one MEM_WRITE / MEM_READ. */
#define MEM_CHUNK_MAX (NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE - NF_MEM_WRITE_REQ_SIZE)

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
    if (len == 0)
        return STATUS_SUCCESS;

    /* Requests are pipelined: all sent, then all waited for. */
    uint32_t nreq = (uint32_t)(len / 2048 + span + 2);
    struct ndk_req *reqs = calloc(nreq, sizeof(*reqs));
    uint8_t *msg = malloc(NF_LINK_MAX_PAYLOAD);
    if (!reqs || !msg) {
        free(reqs);
        free(msg);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    int left = 0;
    uint32_t bst = NF_STATUS_SUCCESS;
    NTSTATUS st = STATUS_SUCCESS;
    SIZE_T done = 0;
    uint32_t k = 0;
    while (done < len && k < nreq) {
        SIZE_T pos = mdl->ByteOffset + off + done; /* byte within the page run */
        SIZE_T in_page = PAGE_SIZE - (pos % PAGE_SIZE);
        SIZE_T chunk = len - done;
        if (chunk > in_page)
            chunk = in_page;
        if (chunk > MEM_CHUNK_MAX)
            chunk = MEM_CHUNK_MAX;
        uint32_t addr = (uint32_t)((mdl->PfnArray[pos / PAGE_SIZE] << PAGE_SHIFT) + pos % PAGE_SIZE);
        struct nf_mem_write_req q = {addr, (uint32_t)chunk};
        memcpy(msg + NF_MSG_HDR_SIZE, &q, sizeof(q));
        size_t mlen = NF_MSG_HDR_SIZE + sizeof(q);
        struct ndk_req *r = &reqs[k++];
        r->on_reply = batch_reply;
        r->batch_left = &left;
        r->batch_status = &bst;
        if (write) {
            memcpy(msg + mlen, (const uint8_t *)data + done, chunk);
            mlen += chunk;
            while (mlen % 8)
                msg[mlen++] = 0;
        } else {
            r->out = (uint8_t *)data + done;
            r->out_cap = chunk;
        }
        pthread_mutex_lock(&ad->lock);
        left++;
        pthread_mutex_unlock(&ad->lock);
        st = ndk_req_send(ad, r, write ? NF_OP_MEM_WRITE : NF_OP_MEM_READ, msg, mlen, 0);
        if (st != STATUS_SUCCESS && st != STATUS_PENDING) {
            pthread_mutex_lock(&ad->lock);
            left--;
            pthread_mutex_unlock(&ad->lock);
            break;
        }
        st = STATUS_SUCCESS;
        done += chunk;
    }
    pthread_mutex_lock(&ad->lock);
    while (left > 0)
        pthread_cond_wait(&ad->cond, &ad->lock);
    pthread_mutex_unlock(&ad->lock);
    free(reqs);
    free(msg);
    if (st != STATUS_SUCCESS)
        return st;
    return (NTSTATUS)bst;
}

NTSTATUS NdkFpgaWriteBuffer(NDK_ADAPTER *a, MDL *mdl, SIZE_T off, const VOID *data, SIZE_T len)
{
    return mem_io(a, mdl, off, (void *)(uintptr_t)data, len, 1);
}

NTSTATUS NdkFpgaReadBuffer(NDK_ADAPTER *a, MDL *mdl, SIZE_T off, VOID *data, SIZE_T len)
{
    return mem_io(a, mdl, off, data, len, 0);
}
