/* SPDX-License-Identifier: Apache-2.0 */
/* Key table (MPT) shadow, MTT range allocator, QP table, and the engine primitives
 * that change them. Every loop here is per table entry or per MR, never per page.
 * Layer: called by fw_wr, fw_msg, fw_link and fw_main; calls only fw_state and hal. */
#include "fw_tables.h"

struct fw_mr *fw_mrs;
struct fw_qp fw_qps[FW_QP_CAP];
struct fw_recv *fw_recvs;

/* Free key-table entries form a FIFO so a freed index (and its key byte) is reused as
 * late as possible; entries holding an MTT range form a list ordered by mtt_base. */
static uint32_t free_head = FW_NO_INDEX, free_tail = FW_NO_INDEX;
static uint32_t mtt_head = FW_NO_INDEX;
uint32_t fw_eng_wait_acc;
/* Receive pool: free entries in a list; the QPs' reservations add up to at most the
 * pool, so a QP within its reservation always finds a free entry. */
static uint32_t recv_free = FW_NO_INDEX, recv_reserved;

FW_HOT uint32_t fw_eng_wait_busy(uint32_t status_off)
{
    uint32_t st;
    uint32_t t0 = hal_cycles();
    /* The first poll as tight as an unbounded wait (most operations end by then);
     * then four status reads per look at the clock. */
    if ((st = eng_rd(status_off)) & NF_STATUS_WORD_BUSY_MASK) {
        for (;;) {
            if (!((st = eng_rd(status_off)) & NF_STATUS_WORD_BUSY_MASK) ||
                !((st = eng_rd(status_off)) & NF_STATUS_WORD_BUSY_MASK) ||
                !((st = eng_rd(status_off)) & NF_STATUS_WORD_BUSY_MASK) ||
                !((st = eng_rd(status_off)) & NF_STATUS_WORD_BUSY_MASK))
                break;
            if (hal_cycles() - t0 > fw_cfg.eng_wait_max) {
                /* The engine did not finish in the longest time any operation takes:
                 * a hardware fault. The request fails; the counter tells. */
                fw_stats.wait_timeouts++;
                st = NF_STATUS_WORD_CODE_PUT(NF_REFUSE_TIMEOUT);
                break;
            }
        }
    }
    fw_eng_wait_acc += hal_cycles() - t0;
    return st;
}

/* Wait for an engine operation; returns STATUS_WORD. The operation is almost always done
 * at the first read; only a busy engine takes the timed wait. */
static inline uint32_t fw_eng_wait(uint32_t status_off)
{
    uint32_t st = eng_rd(status_off);
    return (st & NF_STATUS_WORD_BUSY_MASK) ? fw_eng_wait_busy(status_off) : st;
}

uint32_t fw_dma(const struct fw_dma_side *src, const struct fw_dma_side *dst, uint32_t len, uint32_t *bytes)
{
    eng_wr(NF_ENGINE_DMA_SRC_MODE, NF_DMA_SIDE_MODE_MODE_PUT(src->mode) | NF_DMA_SIDE_MODE_ACCESS_PUT(src->access));
    eng_wr(NF_ENGINE_DMA_SRC_TOKEN, src->token);
    eng_wr(NF_ENGINE_DMA_SRC_ADDR_LO, (uint32_t)src->addr);
    eng_wr(NF_ENGINE_DMA_SRC_ADDR_HI, (uint32_t)(src->addr >> 32));
    eng_wr(NF_ENGINE_DMA_SRC_PD, src->pd);
    eng_wr(NF_ENGINE_DMA_DST_MODE, NF_DMA_SIDE_MODE_MODE_PUT(dst->mode) | NF_DMA_SIDE_MODE_ACCESS_PUT(dst->access));
    eng_wr(NF_ENGINE_DMA_DST_TOKEN, dst->token);
    eng_wr(NF_ENGINE_DMA_DST_ADDR_LO, (uint32_t)dst->addr);
    eng_wr(NF_ENGINE_DMA_DST_ADDR_HI, (uint32_t)(dst->addr >> 32));
    eng_wr(NF_ENGINE_DMA_DST_PD, dst->pd);
    eng_wr(NF_ENGINE_DMA_LEN, len);
    eng_wr(NF_ENGINE_DMA_CTRL, 1u);
    uint32_t st = fw_eng_wait(NF_ENGINE_DMA_STATUS);
    if (bytes)
        *bytes = eng_rd(NF_ENGINE_DMA_BYTES);
    return st;
}

FW_HOT uint32_t fw_load(void)
{
    return fw_eng_wait(NF_ENGINE_LD_STATUS);
}

uint32_t fw_token(uint32_t index)
{
    return NF_TOKEN_INDEX_PUT(index) | NF_TOKEN_KEY_PUT(fw_mrs[index].key);
}

/* MPT_WRITE of what fw_mpt_stage staged; returns the REFUSE code. */
static uint32_t fw_mpt_commit(void)
{
    eng_wr(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_WRITE);
    uint32_t st = eng_rd(NF_ENGINE_TBL_STATUS);
    _Static_assert(NF_REFUSE_OK == 0u, "done and granted: no bit of BUSY or CODE set");
    if (FW_LIKELY(!(st & (NF_STATUS_WORD_BUSY_MASK | NF_STATUS_WORD_CODE_MASK))))
        return NF_REFUSE_OK; /* the usual answer, one test */
    return NF_STATUS_WORD_CODE_GET((st & NF_STATUS_WORD_BUSY_MASK) ? fw_eng_wait_busy(NF_ENGINE_TBL_STATUS) : st);
}

uint32_t fw_mpt_write_words(uint32_t index, uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3, uint32_t w4,
                            uint32_t w5, uint32_t w6)
{
    fw_mpt_stage(index, w0, w1, w2, w3, w4, w5, w6);
    return fw_mpt_commit();
}

uint32_t fw_mpt_write(uint32_t index, const uint32_t w[7])
{
    return fw_mpt_write_words(index, w[0], w[1], w[2], w[3], w[4], w[5], w[6]);
}

uint32_t fw_mpt_read(uint32_t index, uint32_t w[7])
{
    eng_wr(NF_ENGINE_TBL_INDEX, index);
    eng_wr(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_READ);
    uint32_t code = NF_STATUS_WORD_CODE_GET(fw_eng_wait(NF_ENGINE_TBL_STATUS));
    for (uint32_t k = 0; k < 7u; k++)
        w[k] = eng_rd(NF_ENGINE_ENT_W0 + 4u * k);
    return code;
}
uint32_t fw_mpt_invalidate(uint32_t index)
{
    fw_mpt_invalidate_start(index);
    return fw_mpt_invalidate_wait();
}

/* MPT words of an entry that is allocated but not usable (or free): state, kind, key
 * and PD only, so a stale check can never grant. */
static uint32_t mpt_write_idle(uint32_t index)
{
    const struct fw_mr *mr = &fw_mrs[index];
    uint32_t w[7] = {0};
    w[0] = NF_MPT_W0_STATE_PUT(mr->state) | NF_MPT_W0_KIND_PUT(mr->kind) | NF_MPT_W0_KEY_PUT(mr->key) |
           ((mr->flags & FW_MR_REMOTE_EN) ? NF_MPT_W0_REMOTE_EN_MASK : 0u);
    w[1] = NF_MPT_W1_PD_PUT(mr->pd);
    w[5] = NF_MPT_W5_MTT_BASE_PUT(mr->mtt_base) | NF_MPT_W5_PAGE_CAP_PUT(mr->mtt_cap);
    return fw_mpt_write(index, w);
}

static void free_push(uint32_t index)
{
    fw_mrs[index].link = FW_NO_INDEX;
    if (free_tail == FW_NO_INDEX)
        free_head = index;
    else
        fw_mrs[free_tail].link = (uint16_t)index;
    free_tail = index;
}

static void mtt_unlink(uint32_t index)
{
    struct fw_mr *mr = &fw_mrs[index];
    if (mr->mtt_cap == 0)
        return;
    if (mtt_head == index) {
        mtt_head = mr->link;
    } else {
        uint32_t p = mtt_head;
        while (p != FW_NO_INDEX && fw_mrs[p].link != index)
            p = fw_mrs[p].link;
        if (p != FW_NO_INDEX)
            fw_mrs[p].link = mr->link;
    }
    mr->link = FW_NO_INDEX;
    mr->mtt_base = 0;
    mr->mtt_cap = 0;
}

uint32_t fw_mtt_alloc(uint32_t index, uint32_t pages)
{
    if (pages == 0 || pages > (NF_MPT_W5_PAGE_CAP_MASK >> NF_MPT_W5_PAGE_CAP_LSB))
        return NF_STATUS_INVALID_PARAMETER;
    /* First fit; the MR's own current range counts as free, so a re-reservation
     * either moves it in one step or changes nothing. */
    uint32_t prev = FW_NO_INDEX, cur = mtt_head, end = 0;
    while (cur != FW_NO_INDEX) {
        if (cur != index) {
            if (fw_mrs[cur].mtt_base - end >= pages)
                break;
            end = (uint32_t)fw_mrs[cur].mtt_base + fw_mrs[cur].mtt_cap;
            prev = cur;
        }
        cur = fw_mrs[cur].link;
    }
    if (cur == FW_NO_INDEX && (end > fw_cfg.mtt_entries || fw_cfg.mtt_entries - end < pages))
        return NF_STATUS_INSUFFICIENT_RESOURCES;
    mtt_unlink(index);
    struct fw_mr *mr = &fw_mrs[index];
    if (prev == FW_NO_INDEX) {
        mr->link = (uint16_t)mtt_head;
        mtt_head = index;
    } else {
        mr->link = fw_mrs[prev].link;
        fw_mrs[prev].link = (uint16_t)index;
    }
    mr->mtt_base = (uint16_t)end;
    mr->mtt_cap = (uint16_t)pages;
    return NF_STATUS_SUCCESS;
}

void fw_mtt_free(uint32_t index)
{
    mtt_unlink(index);
}

/* Key bytes are random, like the key variant byte of Linux rxe: a token cannot be
 * guessed from the order of registrations. xorshift32, seeded at boot from the cycle
 * counter and at every link RESET from the host's nonce and the cycle counter (so it
 * differs per adapter session), and stirred with the cycle counter at every draw. */
static uint32_t rng_state = 0x6A09E667u;

static uint32_t rng_step(uint32_t x)
{
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

void fw_rng_seed(uint32_t seed)
{
    uint32_t x = rng_state ^ seed;
    if (x == 0)
        x = 0x6A09E667u; /* xorshift never leaves 0 */
    for (uint32_t i = 0; i < 4u; i++)
        x = rng_step(x);
    rng_state = x;
}

uint32_t fw_rng_next(void)
{
    uint32_t x = rng_step(rng_state);
    rng_state = x;
    return x ^ hal_cycles();
}

/* A new key byte for an entry whose last key was old: random, never 0 (token 0 never
 * matches) and never old (a stale token of the previous owner never matches). */
static uint8_t new_key(uint8_t old)
{
    uint8_t key = (uint8_t)fw_rng_next();
    if (key == old)
        key = (uint8_t)(key + 1u);
    if (key == 0)
        key = old == 1u ? 2u : 1u;
    return key;
}

uint32_t fw_mr_alloc(uint32_t pd, uint32_t kind, uint32_t *token)
{
    if (free_head == FW_NO_INDEX)
        return NF_STATUS_INSUFFICIENT_RESOURCES;
    uint32_t index = free_head;
    struct fw_mr *mr = &fw_mrs[index];
    uint8_t key = new_key(mr->key);
    struct fw_mr saved = *mr;
    mr->key = key;
    mr->state = NF_MPT_STATE_INVALID;
    mr->kind = (uint8_t)kind;
    mr->pd = (uint16_t)pd;
    mr->flags = FW_MR_ALLOCATED;
    mr->mtt_base = 0;
    mr->mtt_cap = 0;
    mr->nwin = 0;
    if (mpt_write_idle(index) != NF_REFUSE_OK) {
        *mr = saved;
        return NF_STATUS_INTERNAL_ERROR;
    }
    free_head = saved.link;
    if (free_head == FW_NO_INDEX)
        free_tail = FW_NO_INDEX;
    mr->link = FW_NO_INDEX;
    *token = fw_token(index);
    return NF_STATUS_SUCCESS;
}

/* A window leaves its MR's count; an MR's bound windows go INVALID (out of line: only
 * windows and their MRs take it). */
static FW_COLD void fw_mr_unbound(uint32_t index)
{
    struct fw_mr *e = &fw_mrs[index];
    if (e->kind == NF_MPT_KIND_WINDOW) {
        fw_mrs[e->parent].nwin--;
        return;
    }
    /* per table entry, and only while windows are bound to this MR */
    for (uint32_t w = 0; w < fw_cfg.mpt_entries && e->nwin; w++) {
        struct fw_mr *win = &fw_mrs[w];
        if (win->kind == NF_MPT_KIND_WINDOW && win->state == NF_MPT_STATE_VALID && win->parent == index) {
            (void)fw_mpt_invalidate(w);
            win->state = NF_MPT_STATE_INVALID;
            e->nwin--;
        }
    }
}

/* On every invalidate: the usual MR has no windows, one test of both fields. */
FW_HOT void fw_mr_invalidated(uint32_t index)
{
    const struct fw_mr *e = &fw_mrs[index];
    uint32_t kind = e->kind, nwin = e->nwin; /* both loaded before either test */
    if (kind == NF_MPT_KIND_WINDOW || nwin)
        fw_mr_unbound(index);
}

void fw_mr_free(uint32_t index)
{
    struct fw_mr *mr = &fw_mrs[index];
    if (mr->state == NF_MPT_STATE_VALID) {
        (void)fw_mpt_invalidate(index); /* no DMA through it still runs once this returns */
        mr->state = NF_MPT_STATE_INVALID;
        fw_mr_invalidated(index); /* a window leaves its MR; an MR's windows go INVALID */
    }
    mtt_unlink(index);
    mr->state = NF_MPT_STATE_FREE;
    mr->kind = NF_MPT_KIND_NORMAL;
    mr->flags = 0;
    mr->pd = 0;
    (void)mpt_write_idle(index); /* the key byte stays; the next owner gets another */
    free_push(index);
}

/* Where the key-table shadow lives and how many entries fit (see fw_tables.h). */
uint32_t fw_tables_place(void)
{
#ifdef NF_HOST_BUILD
    static struct fw_mr host_mrs[FW_HOST_MPT_CAP];
    fw_mrs = host_mrs;
    return FW_HOST_MPT_CAP;
#else
    extern uint8_t _end[]; /* after the image, its variables and its stack (link.ld) */
    uint32_t start = ((uint32_t)(uintptr_t)_end + sizeof(struct fw_mr) - 1u) & ~(uint32_t)(sizeof(struct fw_mr) - 1u);
    uint32_t ram = sys_rd(NF_SYS_FW_RAM_BYTES);
    fw_mrs = (struct fw_mr *)(uintptr_t)start;
    if (ram < start)
        return 0;
    return (ram - start) / sizeof(struct fw_mr);
#endif
}

/* After the key-table shadow: the profile's RECV_ENTRIES (FW_RECV_DEFAULT without a
 * matching profile), fewer if the RAM below the stack reserve cannot hold them. */
uint32_t fw_recv_place(void)
{
    uint32_t want = fw_cfg.profile == NF_PROFILE_NONE ? FW_RECV_DEFAULT : 0u;
#define RECV_OF(name, index) want = fw_cfg.profile == (index) ? NF_PROFILE_##name##_RECV_ENTRIES : want;
    NF_PROFILE_LIST(RECV_OF)
#undef RECV_OF
#ifdef NF_HOST_BUILD
    static struct fw_recv host_recvs[NF_PROFILE_SIM_RECV_ENTRIES];
    fw_recvs = host_recvs;
    uint32_t fit = NF_PROFILE_SIM_RECV_ENTRIES;
#else
    uint32_t start = (uint32_t)(uintptr_t)(fw_mrs + fw_cfg.mpt_entries);
    uint32_t ram = sys_rd(NF_SYS_FW_RAM_BYTES);
    fw_recvs = (struct fw_recv *)(uintptr_t)start;
    /* free bytes / sizeof, as a multiply by 2^32 / sizeof rounded up (exact below 2^32 /
     * sizeof bytes: fw_mul64, the firmware does not divide) */
    uint32_t fit = ram < start ? 0u : (uint32_t)(fw_mul64(ram - start, UINT32_MAX / sizeof(struct fw_recv) + 1u) >> 32);
#endif
    return want < fit ? want : fit;
}

/* Boot: every entry and QP zero (key bytes included), then the reset below. */
void fw_tables_init(void)
{
    for (uint32_t i = 0; i < fw_cfg.mpt_entries; i++)
        fw_mrs[i] = (struct fw_mr){0};
    for (uint32_t q = 0; q < FW_QP_CAP; q++)
        fw_qps[q] = (struct fw_qp){0};
    fw_tables_reset();
}

FW_COLD void fw_tables_reset(void)
{
    free_head = free_tail = FW_NO_INDEX;
    mtt_head = FW_NO_INDEX;
    for (uint32_t i = 0; i < fw_cfg.mpt_entries; i++) {
        struct fw_mr *mr = &fw_mrs[i];
        if (mr->flags & FW_MR_ALLOCATED) {
            if (mr->state == NF_MPT_STATE_VALID)
                (void)fw_mpt_invalidate(i);
            mr->state = NF_MPT_STATE_FREE;
            mr->kind = NF_MPT_KIND_NORMAL;
            mr->flags = 0;
            mr->pd = 0;
            mr->mtt_base = 0;
            mr->mtt_cap = 0;
            mr->nwin = 0;
            (void)mpt_write_idle(i);
        }
        free_push(i);
    }
    for (uint32_t q = 0; q < FW_QP_CAP; q++) {
        uint8_t gen = fw_qps[q].gen;
        fw_qps[q] = (struct fw_qp){0};
        fw_qps[q].gen = gen; /* FW_QP_FREE, no reservation; a stale qpn stays stale */
    }
    recv_reserved = 0;
    recv_free = FW_NO_INDEX;
    for (uint32_t i = fw_cfg.recv_entries; i-- > 0;) {
        fw_recvs[i].link = (uint16_t)recv_free;
        recv_free = i;
    }
}

FW_COLD uint32_t fw_qp_alloc(uint32_t pd, uint32_t rq_depth, uint32_t max_recv_sge, uint32_t *qpn)
{
    if (rq_depth > fw_cfg.recv_entries - recv_reserved)
        return NF_STATUS_INSUFFICIENT_RESOURCES; /* the pool cannot reserve that many */
    for (uint32_t q = 0; q < FW_QP_CAP; q++) {
        struct fw_qp *qp = &fw_qps[q];
        if (qp->state != FW_QP_FREE)
            continue;
        uint8_t gen = qp->gen == UINT8_MAX ? 1u : (uint8_t)(qp->gen + 1u); /* gen 0 never names a QP */
        *qp = (struct fw_qp){0};
        qp->gen = gen;
        qp->state = FW_QP_RESET;
        qp->pd = (uint16_t)pd;
        qp->rq_depth = (uint8_t)rq_depth;
        qp->max_recv_sge = (uint8_t)max_recv_sge;
        recv_reserved += rq_depth;
        *qpn = (uint32_t)qp->gen << FW_QPN_GEN_SHIFT | q;
        return NF_STATUS_SUCCESS;
    }
    return NF_STATUS_INSUFFICIENT_RESOURCES;
}

FW_COLD void fw_qp_free(uint32_t q)
{
    struct fw_qp *qp = &fw_qps[q];
    (void)fw_rq_flush(qp);
    recv_reserved -= qp->rq_depth;
    uint8_t gen = qp->gen;
    *qp = (struct fw_qp){0};
    qp->gen = gen;
}

uint32_t fw_rq_flush(struct fw_qp *qp)
{
    uint32_t n = qp->rq_count;
    while (qp->rq_count)
        fw_rq_pop(qp);
    return n;
}

struct fw_recv *fw_rq_push(struct fw_qp *qp)
{
    uint32_t i = recv_free;
    struct fw_recv *rv = &fw_recvs[i];
    recv_free = rv->link;
    rv->link = FW_NO_INDEX;
    if (qp->rq_count++)
        fw_recvs[qp->rq_tail].link = (uint16_t)i;
    else
        qp->rq_head = (uint16_t)i;
    qp->rq_tail = (uint16_t)i;
    return rv;
}

void fw_rq_pop(struct fw_qp *qp)
{
    uint32_t i = qp->rq_head;
    qp->rq_head = fw_recvs[i].link;
    qp->rq_count--;
    fw_recvs[i].link = (uint16_t)recv_free;
    recv_free = i;
}
