/* SPDX-License-Identifier: Apache-2.0 */
/* C reference model of nf_engine; see nf_engine_model.h and docs/architecture.md. */
#include "nf_engine_model.h"

#include <stdlib.h>
#include <string.h>

#include "nf_layout.h"

#define PAGE_MASK (NF_ADAPTER_PAGE_SIZE - 1u)
#define KEY_MASK NF_TOKEN_KEY_MASK
#define MAX_MPT_ENTRIES (1u << NF_TOKEN_INDEX_WIDTH)
#define MAX_MTT_ENTRIES (1u << NF_MPT_W5_MTT_BASE_WIDTH)
#define CTRL_START 1u            /* LD_CTRL, DMA_CTRL, CHK_CTRL: "write 1: start" */
#define LIST_ENTRY_BYTES 8u      /* page-list entries are 64-bit little-endian */
#define LIST_ALIGN_MASK (LIST_ENTRY_BYTES - 1u)
#define CSR_SPACE 0x1000u        /* csr_addr is 12 bits */
#define WORD_BYTES 4u

/* One side of a DMA as the registers describe it. */
struct dma_side {
    uint32_t mode, token, addr_lo, addr_hi, pd;
};

struct nfm_engine {
    struct nfm_engine_cfg cfg;
    uint32_t *mpt;           /* mpt_entries * NFM_MPT_WORDS */
    uint32_t *mtt;           /* mtt_entries */
    uint8_t *mem;            /* mem_bytes */

    /* table operations */
    uint32_t tbl_status, tbl_index, tbl_mtt_data;
    uint32_t ent[NFM_MPT_WORDS];
    /* loader */
    uint32_t ld_src, ld_mtt_base, ld_count, ld_status;
    /* DMA */
    struct dma_side src, dst;
    uint32_t dma_len, dma_status, dma_bytes;
    /* firmware key check */
    uint32_t chk_token, chk_va_lo, chk_va_hi, chk_len, chk_access, chk_pd;
    uint32_t chk_status, chk_addr;

    nfm_chunk_hook hook;
    void *hook_ctx;
    int in_dma;              /* the hook must not start another DMA */
};

static uint32_t status_word(uint32_t code, uint32_t side, uint32_t index)
{
    return NF_STATUS_WORD_CODE_PUT(code) | NF_STATUS_WORD_SIDE_PUT(side) |
           NF_STATUS_WORD_INDEX_PUT(index);
}

struct nfm_engine *nfm_engine_new(const struct nfm_engine_cfg *cfg)
{
    if (!cfg || cfg->mem_bytes == 0 || (cfg->mem_bytes & PAGE_MASK) != 0 ||
        (cfg->user_base & PAGE_MASK) != 0 || cfg->user_base > cfg->mem_bytes ||
        cfg->mpt_entries == 0 || cfg->mpt_entries > MAX_MPT_ENTRIES ||
        cfg->mtt_entries == 0 || cfg->mtt_entries > MAX_MTT_ENTRIES)
        return NULL;
    struct nfm_engine *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->cfg = *cfg;
    e->mpt = calloc((size_t)cfg->mpt_entries * NFM_MPT_WORDS, sizeof(uint32_t));
    e->mtt = calloc(cfg->mtt_entries, sizeof(uint32_t));
    e->mem = calloc(cfg->mem_bytes, 1);
    if (!e->mpt || !e->mtt || !e->mem) {
        nfm_engine_free(e);
        return NULL;
    }
    return e;
}

void nfm_engine_free(struct nfm_engine *e)
{
    if (!e)
        return;
    free(e->mpt);
    free(e->mtt);
    free(e->mem);
    free(e);
}

void nfm_engine_reset(struct nfm_engine *e)
{
    if (!e)
        return;
    memset(e->mpt, 0, (size_t)e->cfg.mpt_entries * NFM_MPT_WORDS * sizeof(uint32_t));
    memset(e->mtt, 0, (size_t)e->cfg.mtt_entries * sizeof(uint32_t));
    e->tbl_status = e->tbl_index = e->tbl_mtt_data = 0;
    memset(e->ent, 0, sizeof(e->ent));
    e->ld_src = e->ld_mtt_base = e->ld_count = e->ld_status = 0;
    memset(&e->src, 0, sizeof(e->src));
    memset(&e->dst, 0, sizeof(e->dst));
    e->dma_len = e->dma_status = e->dma_bytes = 0;
    e->chk_token = e->chk_va_lo = e->chk_va_hi = e->chk_len = e->chk_access = e->chk_pd = 0;
    e->chk_status = e->chk_addr = 0;
}

struct nfm_engine_cfg nfm_engine_get_cfg(const struct nfm_engine *e)
{
    struct nfm_engine_cfg none = {0, 0, 0, 0};
    return e ? e->cfg : none;
}

uint8_t *nfm_mem(struct nfm_engine *e)
{
    return e ? e->mem : NULL;
}

/* ---- key check and translation ------------------------------------------------- */

/* A memory window serves remote access only. */
static int right_granted(uint32_t w0, uint32_t access)
{
    int fast = NF_MPT_W0_KIND_GET(w0) == NF_MPT_KIND_FAST;
    int window = NF_MPT_W0_KIND_GET(w0) == NF_MPT_KIND_WINDOW;
    switch (access) {
    case NF_ACCESS_LOCAL_READ:
        return !window;
    case NF_ACCESS_LOCAL_WRITE:
        return NF_MPT_W0_LOCAL_WRITE_GET(w0) != 0 && !window;
    case NF_ACCESS_REMOTE_READ:
        return NF_MPT_W0_REMOTE_READ_GET(w0) != 0 && (!fast || NF_MPT_W0_REMOTE_EN_GET(w0) != 0);
    default: /* NF_ACCESS_REMOTE_WRITE: the only value left in two bits */
        return NF_MPT_W0_REMOTE_WRITE_GET(w0) != 0 && (!fast || NF_MPT_W0_REMOTE_EN_GET(w0) != 0);
    }
}

/* A window (its own bounds and translation in its entry) works only while its parent
 * MR, MPT_W6.PARENT, is VALID now. Only the parent's current state counts: firmware
 * invalidates a parent's windows with the parent, so a re-registered parent index
 * does not revive them. Other kinds have no parent. */
static int parent_valid(const struct nfm_engine *e, const uint32_t *w)
{
    if (NF_MPT_W0_KIND_GET(w[0]) != NF_MPT_KIND_WINDOW)
        return 1;
    uint32_t parent = NF_MPT_W6_PARENT_GET(w[6]);
    return parent < e->cfg.mpt_entries &&
           NF_MPT_W0_STATE_GET(e->mpt[(size_t)parent * NFM_MPT_WORDS]) == NF_MPT_STATE_VALID;
}

uint32_t nfm_check(const struct nfm_engine *e, uint32_t token, uint64_t va, uint32_t len,
                   uint32_t access, uint32_t pd, uint32_t *addr)
{
    if (addr)
        *addr = 0;
    if (!e)
        return NF_REFUSE_BAD_COMMAND;
    /* ACCESS is a 2-bit field (DMA_SIDE_MODE.ACCESS); CHK_ACCESS uses the same bits. */
    access &= NF_DMA_SIDE_MODE_ACCESS_MASK >> NF_DMA_SIDE_MODE_ACCESS_LSB;
    uint32_t index = NF_TOKEN_INDEX_GET(token);
    if (index >= e->cfg.mpt_entries)
        return NF_REFUSE_BAD_INDEX;
    const uint32_t *w = &e->mpt[(size_t)index * NFM_MPT_WORDS];
    if (NF_TOKEN_KEY_GET(token) != NF_MPT_W0_KEY_GET(w[0]))
        return NF_REFUSE_BAD_KEY;
    if (NF_MPT_W0_STATE_GET(w[0]) != NF_MPT_STATE_VALID || !parent_valid(e, w))
        return NF_REFUSE_NOT_VALID;
    if (pd != NF_MPT_W1_PD_GET(w[1]))
        return NF_REFUSE_WRONG_PD;
    if (!right_granted(w[0], access))
        return NF_REFUSE_NO_RIGHT;
    /* Bounds by subtraction only, so nothing wraps at the top of the address space. */
    uint64_t base = (uint64_t)w[3] << 32 | w[2];
    uint64_t length = w[4];
    if (va < base)
        return NF_REFUSE_OUT_OF_BOUNDS;
    uint64_t off = va - base;
    if (off > length || len > length - off)
        return NF_REFUSE_OUT_OF_BOUNDS;
    if (len == 0)
        return NF_REFUSE_OK; /* nothing to translate: CHK_ADDR = 0 */
    /* off + len <= length < 2^32 and fbo < 2^12, so these sums fit easily in 64 bits. */
    uint64_t first = NF_MPT_W1_FBO_GET(w[1]) + off;
    uint64_t last = first + len - 1u;
    uint64_t mtt_base = NF_MPT_W5_MTT_BASE_GET(w[5]);
    if (mtt_base + (last >> NF_ADAPTER_PAGE_SHIFT) >= e->cfg.mtt_entries)
        return NF_REFUSE_BAD_MTT;
    uint32_t page = e->mtt[mtt_base + (first >> NF_ADAPTER_PAGE_SHIFT)];
    if (addr)
        *addr = (uint32_t)(page << NF_ADAPTER_PAGE_SHIFT) | (uint32_t)(first & PAGE_MASK);
    return NF_REFUSE_OK;
}

/* LOGICAL and SYSTEM addresses: [low, MEM_BYTES), by subtraction. */
static uint32_t check_region(const struct nfm_engine *e, uint32_t low, uint32_t addr_lo,
                             uint32_t addr_hi, uint32_t len)
{
    if (addr_hi != 0 || addr_lo < low || addr_lo > e->cfg.mem_bytes ||
        len > e->cfg.mem_bytes - addr_lo)
        return NF_REFUSE_BAD_ADDRESS;
    return NF_REFUSE_OK;
}

/* Checks bytes [pos, pos + len) of a DMA side (pos counted from the side's start);
 * on a grant *addr is the adapter address of byte pos. */
static uint32_t check_side(const struct nfm_engine *e, const struct dma_side *s, uint32_t pos,
                           uint32_t len, uint32_t *addr)
{
    uint64_t start = (uint64_t)s->addr_hi << 32 | s->addr_lo;
    uint32_t mode = NF_DMA_SIDE_MODE_MODE_GET(s->mode);
    uint32_t code;
    *addr = 0;
    switch (mode) {
    case NF_DMA_MODE_TOKEN:
        /* VA + pos may wrap only if pos passed the end, which the whole-range check
         * before the first chunk already refused. */
        return nfm_check(e, s->token, start + pos, len, NF_DMA_SIDE_MODE_ACCESS_GET(s->mode),
                         s->pd, addr);
    case NF_DMA_MODE_LOGICAL:
    case NF_DMA_MODE_SYSTEM:
        code = check_region(e, mode == NF_DMA_MODE_LOGICAL ? e->cfg.user_base : 0u,
                            s->addr_lo, s->addr_hi, len);
        if (code == NF_REFUSE_OK && pos != 0)
            code = check_region(e, 0u, s->addr_lo + pos, 0u, len);
        if (code == NF_REFUSE_OK)
            *addr = s->addr_lo + pos;
        return code;
    default:
        return NF_REFUSE_BAD_COMMAND;
    }
}

/* A granted, nonempty range that does not cross a page lies inside adapter memory only
 * if its translated page does; MTT contents are not trusted (MTT_WRITE takes any
 * value), so the copy checks the bounds itself. */
static int inside_mem(const struct nfm_engine *e, uint32_t addr, uint32_t len)
{
    return addr <= e->cfg.mem_bytes && len <= e->cfg.mem_bytes - addr;
}

static uint32_t bytes_to_page_end(uint32_t addr)
{
    return NF_ADAPTER_PAGE_SIZE - (addr & PAGE_MASK);
}

static void run_dma(struct nfm_engine *e)
{
    uint32_t addr, dst_addr;
    uint32_t code = check_side(e, &e->src, 0, e->dma_len, &addr);
    uint32_t side = 0;
    e->dma_bytes = 0;
    if (code == NF_REFUSE_OK) {
        side = 1;
        code = check_side(e, &e->dst, 0, e->dma_len, &addr);
    }
    if (code != NF_REFUSE_OK) {
        e->dma_status = status_word(code, side, 0);
        return;
    }
    uint32_t done = 0;
    e->in_dma = 1;
    while (done < e->dma_len) {
        /* The chunk ends at the first page boundary of either side. */
        uint32_t src_addr;
        side = 0;
        code = check_side(e, &e->src, done, 1, &src_addr);
        if (code == NF_REFUSE_OK) {
            side = 1;
            code = check_side(e, &e->dst, done, 1, &dst_addr);
        }
        uint32_t chunk = e->dma_len - done;
        if (code == NF_REFUSE_OK) {
            if (chunk > bytes_to_page_end(src_addr))
                chunk = bytes_to_page_end(src_addr);
            if (chunk > bytes_to_page_end(dst_addr))
                chunk = bytes_to_page_end(dst_addr);
            /* The fresh check of the whole chunk on both sides. */
            side = 0;
            code = check_side(e, &e->src, done, chunk, &src_addr);
            if (code == NF_REFUSE_OK) {
                side = 1;
                code = check_side(e, &e->dst, done, chunk, &dst_addr);
            }
        }
        if (code != NF_REFUSE_OK) {
            /* Granted whole at the start, so only a table change can refuse now. */
            e->dma_status = status_word(NF_REFUSE_STOPPED, side, 0);
            e->in_dma = 0;
            return;
        }
        if (!inside_mem(e, src_addr, chunk) || !inside_mem(e, dst_addr, chunk)) {
            /* An MTT entry points outside adapter memory: refuse that side, move no
             * more (the loader never writes such an entry; only MTT_WRITE can). */
            side = inside_mem(e, src_addr, chunk) ? 1u : 0u;
            e->dma_status = status_word(NF_REFUSE_BAD_ADDRESS, side, 0);
            e->in_dma = 0;
            return;
        }
        memmove(e->mem + dst_addr, e->mem + src_addr, chunk);
        done += chunk;
        e->dma_bytes = done;
        if (e->hook)
            e->hook(e, src_addr, dst_addr, chunk, done, e->hook_ctx);
    }
    e->in_dma = 0;
    e->dma_status = status_word(NF_REFUSE_OK, 0, 0);
}

/* ---- page-list loader ------------------------------------------------------------ */

static uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < LIST_ENTRY_BYTES; i++)
        v |= (uint64_t)p[i] << (8u * i);
    return v;
}

static void run_load(struct nfm_engine *e)
{
    uint64_t list_end = (uint64_t)e->ld_src + (uint64_t)e->ld_count * LIST_ENTRY_BYTES;
    if ((uint64_t)e->ld_mtt_base + e->ld_count > e->cfg.mtt_entries) {
        e->ld_status = status_word(NF_REFUSE_BAD_MTT, 0, 0);
        return;
    }
    if ((e->ld_src & LIST_ALIGN_MASK) != 0 || list_end > e->cfg.mem_bytes) {
        e->ld_status = status_word(NF_REFUSE_BAD_ADDRESS, 0, 0);
        return;
    }
    for (uint32_t i = 0; i < e->ld_count; i++) {
        uint64_t a = load_le64(e->mem + e->ld_src + (size_t)i * LIST_ENTRY_BYTES);
        if ((a & PAGE_MASK) != 0 || a < e->cfg.user_base || a >= e->cfg.mem_bytes) {
            e->ld_status = status_word(NF_REFUSE_BAD_ADDRESS, 0, i);
            return;
        }
        e->mtt[e->ld_mtt_base + i] = (uint32_t)(a >> NF_ADAPTER_PAGE_SHIFT);
    }
    e->ld_status = status_word(NF_REFUSE_OK, 0, 0);
}

/* ---- table operations ------------------------------------------------------------ */

static void run_table_op(struct nfm_engine *e, uint32_t op)
{
    uint32_t code = NF_REFUSE_OK;
    uint32_t *w = NULL;
    if (op == NF_TBL_OP_MPT_WRITE_LOADED) {
        /* The load is done already here (it runs at once): its code decides. */
        code = NF_STATUS_WORD_CODE_GET(e->ld_status);
        if (code != NF_REFUSE_OK) {
            e->tbl_status = status_word(code, 0, 0);
            return;
        }
        op = NF_TBL_OP_MPT_WRITE;
    }
    switch (op) {
    case NF_TBL_OP_MPT_WRITE:
    case NF_TBL_OP_MPT_READ:
    case NF_TBL_OP_MPT_INVALIDATE:
        if (e->tbl_index >= e->cfg.mpt_entries) {
            code = NF_REFUSE_BAD_INDEX;
            break;
        }
        w = &e->mpt[(size_t)e->tbl_index * NFM_MPT_WORDS];
        if (op == NF_TBL_OP_MPT_WRITE) {
            memcpy(w, e->ent, sizeof(e->ent));
        } else if (op == NF_TBL_OP_MPT_READ) {
            memcpy(e->ent, w, sizeof(e->ent));
        } else if (NF_MPT_W0_STATE_GET(w[0]) != NF_MPT_STATE_VALID) {
            code = NF_REFUSE_NOT_VALID;
        } else {
            w[0] = (w[0] & ~NF_MPT_W0_STATE_MASK) | NF_MPT_W0_STATE_PUT(NF_MPT_STATE_INVALID);
        }
        break;
    case NF_TBL_OP_MTT_WRITE:
    case NF_TBL_OP_MTT_READ:
        if (e->tbl_index >= e->cfg.mtt_entries) {
            code = NF_REFUSE_BAD_MTT;
            break;
        }
        if (op == NF_TBL_OP_MTT_WRITE)
            e->mtt[e->tbl_index] = e->tbl_mtt_data;
        else
            e->tbl_mtt_data = e->mtt[e->tbl_index];
        break;
    default:
        code = NF_REFUSE_BAD_COMMAND;
        break;
    }
    e->tbl_status = status_word(code, 0, 0);
}

static void run_check(struct nfm_engine *e)
{
    uint64_t va = (uint64_t)e->chk_va_hi << 32 | e->chk_va_lo;
    uint32_t code = nfm_check(e, e->chk_token, va, e->chk_len, e->chk_access, e->chk_pd,
                              &e->chk_addr);
    e->chk_status = status_word(code, 0, 0);
}

/* ---- registers -------------------------------------------------------------------- */

/* The read/write registers that only hold a value, or NULL. */
static uint32_t *plain_reg(struct nfm_engine *e, uint32_t off)
{
    switch (off) {
    case NF_ENGINE_TBL_INDEX: return &e->tbl_index;
    case NF_ENGINE_TBL_MTT_DATA: return &e->tbl_mtt_data;
    case NF_ENGINE_ENT_W0: return &e->ent[0];
    case NF_ENGINE_ENT_W1: return &e->ent[1];
    case NF_ENGINE_ENT_W2: return &e->ent[2];
    case NF_ENGINE_ENT_W3: return &e->ent[3];
    case NF_ENGINE_ENT_W4: return &e->ent[4];
    case NF_ENGINE_ENT_W5: return &e->ent[5];
    case NF_ENGINE_ENT_W6: return &e->ent[6];
    case NF_ENGINE_LD_SRC: return &e->ld_src;
    case NF_ENGINE_LD_MTT_BASE: return &e->ld_mtt_base;
    case NF_ENGINE_LD_COUNT: return &e->ld_count;
    case NF_ENGINE_DMA_SRC_MODE: return &e->src.mode;
    case NF_ENGINE_DMA_SRC_TOKEN: return &e->src.token;
    case NF_ENGINE_DMA_SRC_ADDR_LO: return &e->src.addr_lo;
    case NF_ENGINE_DMA_SRC_ADDR_HI: return &e->src.addr_hi;
    case NF_ENGINE_DMA_SRC_PD: return &e->src.pd;
    case NF_ENGINE_DMA_DST_MODE: return &e->dst.mode;
    case NF_ENGINE_DMA_DST_TOKEN: return &e->dst.token;
    case NF_ENGINE_DMA_DST_ADDR_LO: return &e->dst.addr_lo;
    case NF_ENGINE_DMA_DST_ADDR_HI: return &e->dst.addr_hi;
    case NF_ENGINE_DMA_DST_PD: return &e->dst.pd;
    case NF_ENGINE_DMA_LEN: return &e->dma_len;
    case NF_ENGINE_CHK_TOKEN: return &e->chk_token;
    case NF_ENGINE_CHK_VA_LO: return &e->chk_va_lo;
    case NF_ENGINE_CHK_VA_HI: return &e->chk_va_hi;
    case NF_ENGINE_CHK_LEN: return &e->chk_len;
    case NF_ENGINE_CHK_ACCESS: return &e->chk_access;
    case NF_ENGINE_CHK_PD: return &e->chk_pd;
    default: return NULL;
    }
}

void nfm_csr_write(struct nfm_engine *e, uint32_t off, uint32_t value)
{
    if (!e || off >= CSR_SPACE || (off & (WORD_BYTES - 1u)) != 0)
        return;
    uint32_t *reg = plain_reg(e, off);
    if (reg) {
        *reg = value;
        return;
    }
    switch (off) {
    case NF_ENGINE_TBL_CMD:
        run_table_op(e, value);
        break;
    case NF_ENGINE_LD_CTRL:
        if (value == CTRL_START)
            run_load(e);
        break;
    case NF_ENGINE_DMA_CTRL:
        if (value == CTRL_START && !e->in_dma)
            run_dma(e);
        break;
    case NF_ENGINE_CHK_CTRL:
        if (value == CTRL_START)
            run_check(e);
        break;
    default:
        break; /* read-only or unknown */
    }
}

uint32_t nfm_csr_read(struct nfm_engine *e, uint32_t off)
{
    if (!e || off >= CSR_SPACE || (off & (WORD_BYTES - 1u)) != 0)
        return 0;
    const uint32_t *reg = plain_reg(e, off);
    if (reg)
        return *reg;
    switch (off) {
    case NF_ENGINE_ID: return NF_ENGINE_HW_ID_VALUE;
    case NF_ENGINE_CFG_MPT: return e->cfg.mpt_entries;
    case NF_ENGINE_CFG_MTT: return e->cfg.mtt_entries;
    case NF_ENGINE_CFG_MEM: return e->cfg.mem_bytes;
    case NF_ENGINE_CFG_USER: return e->cfg.user_base;
    case NF_ENGINE_TBL_STATUS: return e->tbl_status;
    case NF_ENGINE_LD_STATUS: return e->ld_status;
    case NF_ENGINE_DMA_STATUS: return e->dma_status;
    case NF_ENGINE_DMA_BYTES: return e->dma_bytes;
    case NF_ENGINE_CHK_STATUS: return e->chk_status;
    case NF_ENGINE_CHK_ADDR: return e->chk_addr;
    default: return 0; /* write-only or unknown */
    }
}

/* ---- system port ------------------------------------------------------------------ */

void nfm_sys_write(struct nfm_engine *e, uint32_t addr, uint32_t value, uint32_t wstrb)
{
    if (!e)
        return;
    addr &= ~(WORD_BYTES - 1u);
    if (!inside_mem(e, addr, WORD_BYTES))
        return;
    for (unsigned i = 0; i < WORD_BYTES; i++)
        if (wstrb & (1u << i))
            e->mem[addr + i] = (uint8_t)(value >> (8u * i));
}

uint32_t nfm_sys_read(struct nfm_engine *e, uint32_t addr)
{
    if (!e)
        return 0;
    addr &= ~(WORD_BYTES - 1u);
    if (!inside_mem(e, addr, WORD_BYTES))
        return 0;
    uint32_t v = 0;
    for (unsigned i = 0; i < WORD_BYTES; i++)
        v |= (uint32_t)e->mem[addr + i] << (8u * i);
    return v;
}

/* ---- helpers ------------------------------------------------------------------------ */

int nfm_mpt_get(const struct nfm_engine *e, uint32_t index, uint32_t w[NFM_MPT_WORDS])
{
    if (!e || index >= e->cfg.mpt_entries) {
        memset(w, 0, NFM_MPT_WORDS * sizeof(uint32_t));
        return -1;
    }
    memcpy(w, &e->mpt[(size_t)index * NFM_MPT_WORDS], NFM_MPT_WORDS * sizeof(uint32_t));
    return 0;
}

int nfm_mtt_get(const struct nfm_engine *e, uint32_t index, uint32_t *page)
{
    if (!e || index >= e->cfg.mtt_entries) {
        *page = 0;
        return -1;
    }
    *page = e->mtt[index];
    return 0;
}

void nfm_set_chunk_hook(struct nfm_engine *e, nfm_chunk_hook hook, void *ctx)
{
    if (!e)
        return;
    e->hook = hook;
    e->hook_ctx = ctx;
}
