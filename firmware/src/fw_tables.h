/* SPDX-License-Identifier: Apache-2.0 */
/* Key table (MPT) shadow, MTT range allocator, QP table, and the engine primitives
 * that change them. Calls only fw_state and hal (see the layering in fw_state.h). */
#ifndef FW_TABLES_H
#define FW_TABLES_H

#include <stdint.h>

#include "fw_state.h"
#include "hal.h"
#include "nf_layout.h"

/* The key-table shadow is not in the image: at boot it is placed in the firmware RAM
 * between the end of the image and the stack reserve, sized from ENGINE.CFG_MPT, so
 * every profile spends exactly the RAM its table needs. The host build uses an array
 * of FW_HOST_MPT_CAP entries instead. */
#define FW_HOST_MPT_CAP NF_PROFILE_SIM_MPT_ENTRIES
#define FW_QP_CAP NF_ADAPTER_MAX_QPS
#define FW_NO_INDEX 0xFFFFu

/* Shadow of one key-table entry: what the firmware needs to decide, without reading
 * the MPT back through the engine. The engine's MPT is written whenever this changes. */
#define FW_MR_ALLOCATED 0x1u
#define FW_MR_REMOTE_EN 0x2u
#define FW_MR_FRMR_INIT 0x4u
struct fw_mr {
    _Alignas(4) uint8_t state; /* NF_MPT_STATE_* (aligned: the first four bytes read as one word) */
    uint8_t kind;   /* NF_MPT_KIND_* */
    uint8_t key;    /* key byte of the current token */
    uint8_t flags;  /* FW_MR_* */
    uint16_t pd;
    uint16_t mtt_base, mtt_cap; /* MTT range reserved (cap 0: none) */
    uint16_t link;  /* free list (free entries) or MTT-ordered list (entries with a range) */
    uint16_t parent; /* a bound (VALID) window: its MR's index */
    uint16_t nwin;   /* an MR: how many VALID windows are bound to it (16 bytes in all:
                      * PicoRV32 multiplies slowly, a shift indexes for free) */
};
_Static_assert(sizeof(struct fw_mr) == 16, "fw_mr is indexed by shifting");
#ifdef FW_MR_BYTES /* the build's RAM check (firmware.mk) counts this many bytes per entry */
_Static_assert(sizeof(struct fw_mr) == FW_MR_BYTES, "firmware.mk FW_MR_BYTES");
#endif

#define FW_QP_FREE 0u
#define FW_QP_RESET 1u     /* created, not connected (or disconnected) */
#define FW_QP_CONNECTED 2u
#define FW_QP_ERROR 3u     /* an error completion or a flush: every later WR completes CANCELLED */
struct fw_qp {
    uint8_t state;
    uint8_t gen; /* bumped on reuse so a stale qpn never names a new QP */
    uint16_t pd;
    uint32_t peer_qpn;
    /* Receive queue: rq_depth pool entries reserved at QP_CREATE, rq_count of them
     * pending as a FIFO (rq_head oldest, linked through fw_recv.link). */
    uint8_t rq_depth, rq_count, max_recv_sge;
    uint8_t wire; /* connected to a QP of another adapter over the network port (fw_rc.c) */
    uint16_t rq_head, rq_tail;
};
_Static_assert(NF_ADAPTER_MAX_RQ_DEPTH <= UINT8_MAX && NF_ADAPTER_MAX_RECV_SGE <= UINT8_MAX,
               "the receive-queue sizes of a QP fit its byte fields");

/* One posted receive: its SGEs are stored as posted and checked by the engine only when
 * a Send fills them. The pool is placed at boot after the key-table shadow, sized by
 * the profile's RECV_ENTRIES (firmware.mk counts FW_RECV_BYTES per entry). */
struct fw_recv_sge {
    uint32_t addr_lo, addr_hi, len, token;
};
struct fw_recv {
    uint32_t wr_id;
    uint16_t link; /* next in its QP's FIFO, or in the free list */
    uint16_t nsge;
    struct fw_recv_sge sge[NF_ADAPTER_MAX_RECV_SGE];
};
#ifdef FW_RECV_BYTES
_Static_assert(sizeof(struct fw_recv) == FW_RECV_BYTES, "firmware.mk FW_RECV_BYTES");
#endif
/* Without a matching profile, the pool holds this many entries (if RAM allows). */
#define FW_RECV_DEFAULT (2u * NF_ADAPTER_MAX_RQ_DEPTH)

extern struct fw_mr *fw_mrs; /* fw_cfg.mpt_entries entries */
extern struct fw_qp fw_qps[FW_QP_CAP];
extern struct fw_recv *fw_recvs; /* fw_cfg.recv_entries entries */

/* Boot: place the key-table shadow, returning how many entries fit; then, with
 * fw_cfg.mpt_entries set, clear every entry and QP. */
uint32_t fw_tables_place(void);
/* Boot, once fw_cfg.mpt_entries and fw_cfg.profile are known: place the receive pool
 * after the key-table shadow, returning how many entries it has. */
uint32_t fw_recv_place(void);
void fw_tables_init(void);
void fw_tables_reset(void);              /* free every MR and QP (ADAPTER_RESET) */
/* The rest of a wait for an engine operation that read busy at its first look; returns
 * STATUS_WORD. Bounded: after fw_cfg.eng_wait_max cycles it gives up, counts
 * wait_timeouts and returns CODE = NF_REFUSE_TIMEOUT (the request fails INTERNAL_ERROR;
 * see fw_eng_failed). The time it waits is counted in fw_eng_wait_cycles. */
uint32_t fw_eng_wait_busy(uint32_t status_off);
extern uint32_t fw_eng_wait_acc;
/* running total of cycles spent waiting on the engine */
static inline uint32_t fw_eng_wait_cycles(void)
{
    return fw_eng_wait_acc;
}
struct fw_dma_side {
    uint32_t mode, access, token, pd;
    uint64_t addr;
};
/* One engine DMA; returns DMA_STATUS (STATUS_WORD); *bytes (may be NULL) = DMA_BYTES. */
uint32_t fw_dma(const struct fw_dma_side *src, const struct fw_dma_side *dst, uint32_t len, uint32_t *bytes);
/* Page-list load into the MTT: fw_load_start starts it, fw_load waits for it and returns
 * LD_STATUS. In between the firmware may do other work (the fast-register path stages
 * its MPT entry while the loader runs), but start no other engine operation. */
static inline void fw_load_start(uint32_t src, uint32_t mtt_base, uint32_t count)
{
    eng_wr(NF_ENGINE_LD_SRC, src);
    eng_wr(NF_ENGINE_LD_MTT_BASE, mtt_base);
    eng_wr(NF_ENGINE_LD_COUNT, count);
    eng_wr(NF_ENGINE_LD_CTRL, 1u);
}
uint32_t fw_load(void);
/* The status a request gets when an engine operation failed with REFUSE code code:
 * INTERNAL_ERROR for a timeout (the hardware did not finish), else refused. */
static inline uint32_t fw_eng_failed(uint32_t code, uint32_t refused)
{
    return code == NF_REFUSE_TIMEOUT ? NF_STATUS_INTERNAL_ERROR : refused;
}
/* index of the allocated MR, or FW_NO_INDEX (inline: on every work request) */
static inline uint32_t fw_mr_lookup(uint32_t token)
{
    uint32_t index = NF_TOKEN_INDEX_GET(token);
    if (index >= fw_cfg.mpt_entries)
        return FW_NO_INDEX;
    const struct fw_mr *mr = &fw_mrs[index];
    if (!(mr->flags & FW_MR_ALLOCATED) || mr->key != NF_TOKEN_KEY_GET(token))
        return FW_NO_INDEX;
    return index;
}
/* Key-byte PRNG: mix seed into its state (boot, link RESET); next value. */
void fw_rng_seed(uint32_t seed);
uint32_t fw_rng_next(void);
uint32_t fw_mr_alloc(uint32_t pd, uint32_t kind, uint32_t *token);   /* STATUS; a random key byte */
void fw_mr_free(uint32_t index);
uint32_t fw_mtt_alloc(uint32_t index, uint32_t pages); /* reserve a range for MR index; STATUS */
void fw_mtt_free(uint32_t index);
/* Write MPT[index] from the shadow plus the given words; returns the REFUSE code. */
uint32_t fw_mpt_write(uint32_t index, const uint32_t w[7]);
/* An MPT write in two steps: stage the words and the index in the engine's staging
 * registers, then commit (MPT_WRITE) and wait. Nothing else uses the staging registers
 * in between, so the fast-register path stages while the page-list load runs and keeps
 * none of the words live across the wait for it. Inline: the words are built in registers. */
static inline void fw_mpt_stage(uint32_t index, uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3, uint32_t w4,
                                uint32_t w5, uint32_t w6)
{
    eng_wr(NF_ENGINE_ENT_W0, w0);
    eng_wr(NF_ENGINE_ENT_W1, w1);
    eng_wr(NF_ENGINE_ENT_W2, w2);
    eng_wr(NF_ENGINE_ENT_W3, w3);
    eng_wr(NF_ENGINE_ENT_W4, w4);
    eng_wr(NF_ENGINE_ENT_W5, w5);
    eng_wr(NF_ENGINE_ENT_W6, w6);
    eng_wr(NF_ENGINE_TBL_INDEX, index);
}
/* fw_mpt_write with the words as arguments (not an array on the stack). */
uint32_t fw_mpt_write_words(uint32_t index, uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3, uint32_t w4,
                            uint32_t w5, uint32_t w6);
uint32_t fw_mpt_invalidate(uint32_t index);
/* fw_mpt_invalidate in two: the command, and the wait for it (its REFUSE code), so the
 * firmware can work between them. */
static inline void fw_mpt_invalidate_start(uint32_t index)
{
    eng_wr(NF_ENGINE_TBL_INDEX, index);
    eng_wr(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_INVALIDATE);
}
/* An invalidate also waits for the DMA drain (a cycle or two past the first look, with
 * no DMA running): one more look before the timed wait. Inline: the invalidate's path
 * does not pay a call and its return for the one read it usually is. */
static inline uint32_t fw_mpt_invalidate_wait(void)
{
    uint32_t st = eng_rd(NF_ENGINE_TBL_STATUS);
    if (FW_LIKELY(!(st & (NF_STATUS_WORD_BUSY_MASK | NF_STATUS_WORD_CODE_MASK))))
        return NF_REFUSE_OK; /* the usual answer, one test (as fw_mpt_commit) */
    return NF_STATUS_WORD_CODE_GET((st & NF_STATUS_WORD_BUSY_MASK) ? fw_eng_wait_busy(NF_ENGINE_TBL_STATUS) : st);
}
/* Read MPT[index] into w; returns the REFUSE code. */
uint32_t fw_mpt_read(uint32_t index, uint32_t w[7]);
/* Entry index just went from VALID to INVALID (its shadow state too): a window leaves its MR's
 * count; an MR with bound windows has each of them invalidated (a later registration of
 * the MR must not revive them). */
void fw_mr_invalidated(uint32_t index);
uint32_t fw_token(uint32_t index);
/* QP table index, or FW_NO_INDEX (inline: on every work request). A qpn is
 * gen << FW_QPN_GEN_SHIFT | index; gen 0 never names a QP. */
#define FW_QPN_INDEX_MASK 0xFFu
#define FW_QPN_GEN_SHIFT 8u
static inline uint32_t fw_qp_lookup(uint32_t qpn)
{
    uint32_t q = qpn & FW_QPN_INDEX_MASK;
    uint32_t gen = qpn >> FW_QPN_GEN_SHIFT;
    if (q >= FW_QP_CAP || gen == 0 || gen != fw_qps[q].gen || fw_qps[q].state == FW_QP_FREE)
        return FW_NO_INDEX;
    return q;
}
/* A QP with rq_depth receive entries reserved from the pool (the caller checked the
 * limits); STATUS (INSUFFICIENT_RESOURCES: table full or pool short). */
uint32_t fw_qp_alloc(uint32_t pd, uint32_t rq_depth, uint32_t max_recv_sge, uint32_t *qpn);
/* QP_DESTROY: drop its receives, give its reservation back, free the entry. */
void fw_qp_free(uint32_t q);
/* Drop every pending receive of the QP (back to its reservation); how many. */
uint32_t fw_rq_flush(struct fw_qp *qp);
/* Append a receive to the QP's FIFO (the caller checked rq_count < rq_depth). */
struct fw_recv *fw_rq_push(struct fw_qp *qp);
/* The oldest pending receive (rq_count > 0), and its removal. */
static inline struct fw_recv *fw_rq_head(const struct fw_qp *qp)
{
    return &fw_recvs[qp->rq_head];
}
void fw_rq_pop(struct fw_qp *qp);


#endif
