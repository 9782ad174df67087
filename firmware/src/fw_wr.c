/* SPDX-License-Identifier: Apache-2.0 */
/* Work requests on a QP: fast register, invalidate, RDMA Read and Write (Send,
 * SendAndInvalidate and Receive: fw_send.c, dispatched from here). Each one ends
 * in a CQE (unless NDK_OP_FLAG_SILENT_SUCCESS and it succeeded). Requests run one
 * after another in arrival order and every DMA has finished before the next request
 * starts, so NDK_OP_FLAG_READ_FENCE holds without doing anything. Every validation
 * happens before the first table write: a refused request changes nothing.
 * Layer: called by fw_msg; calls fw_tables and fw_state; the CQE goes through the reply
 * cursor the message layer hands down (fw_frame.h), never to the link directly. */
#include "fw_wr.h"
#include "fw_state.h"
#include "fw_tables.h"
#include "fw_rc.h"
#include "fw_wr_int.h"
#include "hal.h"

#define BODY(m, off) WR_BODY(m, off)
#define PAGE_OFFSET_MASK (NF_ADAPTER_PAGE_SIZE - 1u)
#define PAGE_LIST_ENTRY_BYTES 8u

#define OP_REMOTE_WRITE_BIT (NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE & ~NF_NDK_OP_FLAG_ALLOW_LOCAL_WRITE)

/* Op flags -> MPT_W0 rights, by a table of the five flag bits from ALLOW_REMOTE_READ
 * to RDMA_READ_SINK (INLINE among them grants nothing; one shift and mask index it):
 * remote write implies local write (0x30 includes 0x10); a read sink is written by
 * the adapter, so it gets local write too. */
#define FR_BIT(v, m, b) ((((v) & (m)) != 0u) * (b))
#define FR_RIGHTS_SHIFT 3u
#define FR_RIGHTS_INDEX(f) (((f) >> FR_RIGHTS_SHIFT) & 31u)
#define FR_RIGHTS_OF(f)                                                                            \
    (FR_BIT(f, NF_NDK_OP_FLAG_ALLOW_LOCAL_WRITE | OP_REMOTE_WRITE_BIT | NF_NDK_OP_FLAG_RDMA_READ_SINK,  \
            NF_MPT_W0_LOCAL_WRITE_MASK) |                                                          \
     FR_BIT(f, NF_NDK_OP_FLAG_ALLOW_REMOTE_READ, NF_MPT_W0_REMOTE_READ_MASK) |                     \
     FR_BIT(f, OP_REMOTE_WRITE_BIT, NF_MPT_W0_REMOTE_WRITE_MASK) |                                 \
     FR_BIT(f, NF_NDK_OP_FLAG_RDMA_READ_SINK, NF_MPT_W0_READ_SINK_MASK))
#define FR_RIGHTS(i) FR_RIGHTS_OF((uint32_t)(i) << FR_RIGHTS_SHIFT)
#define FR_RIGHTS8(i) FR_RIGHTS(i), FR_RIGHTS(i + 1), FR_RIGHTS(i + 2), FR_RIGHTS(i + 3), \
                      FR_RIGHTS(i + 4), FR_RIGHTS(i + 5), FR_RIGHTS(i + 6), FR_RIGHTS(i + 7)
static const uint8_t fr_rights[32] = {FR_RIGHTS8(0), FR_RIGHTS8(8), FR_RIGHTS8(16), FR_RIGHTS8(24)};
_Static_assert(NF_NDK_OP_FLAG_ALLOW_REMOTE_READ == 1u << FR_RIGHTS_SHIFT && NF_NDK_OP_FLAG_RDMA_READ_SINK < 32u << FR_RIGHTS_SHIFT &&
                   (NF_NDK_OP_FLAG_ALLOW_LOCAL_WRITE | OP_REMOTE_WRITE_BIT) >> FR_RIGHTS_SHIFT < 32u,
               "the flags that grant rights lie in the five bits fr_rights is indexed by");
_Static_assert((NF_MPT_W0_LOCAL_WRITE_MASK | NF_MPT_W0_REMOTE_READ_MASK | NF_MPT_W0_REMOTE_WRITE_MASK |
                NF_MPT_W0_READ_SINK_MASK) <= 0xFFu,
               "fr_rights holds the rights bits in a byte");

/* The shape rules of a fast-register (all INVALID_PARAMETER, so in any order): the page
 * count within the MR's capacity and all of the page list in the message (mlen bytes);
 * FBO = VA mod PAGE_SIZE (so FBO < PAGE_SIZE; VA 0 only with FBO 0); 0 < Length <=
 * npages x PAGE_SIZE - FBO in 32 bits; VA + Length does not wrap. Once npages <= cap
 * < 2^16, npages x PAGE_SIZE and npages x 8 fit in 32 bits, and so must Length: the
 * 64-bit rules are exact in 32-bit words. Shifts only (PicoRV32 multiplies slowly). */
static inline int fr_shape_ok(uint32_t npages, uint32_t cap, uint32_t mlen, uint32_t fbo, uint32_t len_lo,
                              uint32_t len_hi, uint32_t va_lo, uint32_t va_hi)
{
    return npages - 1u < cap &&
           (npages << 3) + (NF_MSG_HDR_SIZE + NF_WR_HDR_SIZE + NF_WR_FAST_REGISTER_SIZE) <= mlen &&
           (va_lo & PAGE_OFFSET_MASK) == fbo && len_hi == 0 && len_lo - 1u < (npages << NF_ADAPTER_PAGE_SHIFT) - fbo &&
           !(va_hi == UINT32_MAX && va_lo + (len_lo - 1u) < va_lo);
}
_Static_assert(PAGE_LIST_ENTRY_BYTES == 1u << 3, "page-list entries are indexed by shifting");

/* A fast-register's fields, read once from the RX slot. */
struct fr_req {
    uint32_t token, npages, fbo, len_lo, len_hi, va_lo, va_hi;
};

/* A fast-register's rules, in the order that decides the status of a request breaking
 * several of them; on success *index is the MR's entry. Nothing is changed here. */
static inline uint32_t fr_validate(const struct fw_qp *qp, uint32_t flags, uint32_t mlen, const struct fr_req *q,
                                   uint32_t *index)
{
    if (mlen < NF_MSG_HDR_SIZE + NF_WR_HDR_SIZE + NF_WR_FAST_REGISTER_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    uint32_t i = fw_mr_lookup(q->token);
    if (i == FW_NO_INDEX)
        return NF_STATUS_INVALID_PARAMETER;
    const struct fw_mr *mr = &fw_mrs[i];
    if (mr->kind != NF_MPT_KIND_FAST)
        return NF_STATUS_INVALID_DEVICE_STATE; /* only a fast-register MR */
    if (!(mr->flags & FW_MR_FRMR_INIT))
        return NF_STATUS_INVALID_DEVICE_STATE; /* NdkInitializeFastRegisterMr first */
    if (mr->pd != qp->pd ||
        (flags & (NF_NDK_OP_FLAG_ALLOW_REMOTE_READ | OP_REMOTE_WRITE_BIT) && !(mr->flags & FW_MR_REMOTE_EN)))
        return NF_STATUS_ACCESS_VIOLATION; /* other PD, or remote rights without RemoteAccess */
    if (flags & ~(uint32_t)NF_KNOWN_FLAGS_FAST_REGISTER)
        return NF_STATUS_INVALID_PARAMETER;
    if (mr->state == NF_MPT_STATE_VALID)
        return NF_STATUS_INVALID_DEVICE_STATE; /* registered now: invalidate first */
    if (!fr_shape_ok(q->npages, mr->mtt_cap, mlen, q->fbo, q->len_lo, q->len_hi, q->va_lo, q->va_hi))
        return NF_STATUS_INVALID_PARAMETER;
    *index = i;
    return NF_STATUS_SUCCESS;
}

/* A fast-register of entry index whose MPT_WRITE_LOADED answered st, a failure: the page
 * list refused by the loader (its code; INVALID_PARAMETER: nothing was written), or the
 * engine failed (INTERNAL_ERROR). A hardware fault may still write the entry later, so
 * an invalidate of it is posted too (not waited for: a hung engine is not waited for
 * twice). */
static FW_COLD void fr_failed(uint32_t index, uint32_t st, struct wr_result *r)
{
    uint32_t ld = NF_STATUS_WORD_CODE_GET(eng_rd(NF_ENGINE_LD_STATUS));
    if (ld != NF_REFUSE_OK) {
        r->refuse = ld;
        r->status = fw_eng_failed(ld, NF_STATUS_INVALID_PARAMETER);
        return;
    }
    fw_mpt_invalidate_start(index);
    r->refuse = NF_STATUS_WORD_CODE_GET(st) == NF_REFUSE_TIMEOUT ? NF_REFUSE_TIMEOUT : NF_REFUSE_OK;
    r->status = NF_STATUS_INTERNAL_ERROR;
}

/* The cost figures of a completed request (INFO's last_wr_*): the cycles from its
 * frame's arrival to now, and those of them not spent waiting on the engine. */
static inline void wr_cost(const struct fw_frame *f, uint32_t op)
{
    uint32_t now = hal_cycles();
    fw_stats.last_wr_op = op;
    fw_stats.last_wr_cycles = now - hal_read32(f->stamp_at);
    fw_stats.last_wr_fw_cycles = fw_stats.last_wr_cycles - (fw_eng_wait_cycles() - f->eng_start);
}

/* A fast-register, checked by fr_validate. The entry is staged in the engine while the
 * page-list load runs, and the engine commits it once the load succeeded
 * (MPT_WRITE_LOADED); the CQE is written meanwhile. The loader copies the page list
 * from the RX slot into the MR's own MTT range and refuses unaligned pages or pages
 * outside the user region; the MR is not VALID, so a partial load is never used. */
static inline void do_fast_register(const struct fw_frame *f, const struct fw_qp *qp, uint32_t qpn, uint32_t wr_id,
                                    uint32_t flags, uint32_t m, uint32_t mlen, struct wr_result *r)
{
    hal_win b = mem_win(BODY(m, 0));
    struct fr_req q = {
        .token = win_rd(b, NF_WR_FAST_REGISTER_TOKEN_OFF),
        .npages = win_rd(b, NF_WR_FAST_REGISTER_NPAGES_OFF),
        .fbo = win_rd(b, NF_WR_FAST_REGISTER_FBO_OFF),
        .len_lo = win_rd(b, NF_WR_FAST_REGISTER_LENGTH_OFF),
        .len_hi = win_rd(b, NF_WR_FAST_REGISTER_LENGTH_OFF + 4u),
        .va_lo = win_rd(b, NF_WR_FAST_REGISTER_VA_OFF),
        .va_hi = win_rd(b, NF_WR_FAST_REGISTER_VA_OFF + 4u),
    };
    uint32_t i = FW_NO_INDEX;
    r->status = fr_validate(qp, flags, mlen, &q, &i);
    if (r->status != NF_STATUS_SUCCESS)
        return;
    struct fw_mr *mr = &fw_mrs[i];
    fw_load_start(BODY(m, NF_WR_FAST_REGISTER_SIZE), mr->mtt_base, q.npages);
    fw_mpt_stage(i,
                 NF_MPT_W0_STATE_PUT(NF_MPT_STATE_VALID) | NF_MPT_W0_KIND_PUT(NF_MPT_KIND_FAST) |
                     NF_MPT_W0_KEY_PUT(NF_TOKEN_KEY_GET(q.token)) |
                     ((mr->flags & FW_MR_REMOTE_EN) ? NF_MPT_W0_REMOTE_EN_MASK : 0u) |
                     fr_rights[FR_RIGHTS_INDEX(flags)],
                 NF_MPT_W1_PD_PUT(mr->pd) | NF_MPT_W1_FBO_PUT(q.fbo), q.va_lo, q.va_hi, q.len_lo,
                 NF_MPT_W5_MTT_BASE_PUT(mr->mtt_base) | NF_MPT_W5_PAGE_CAP_PUT(mr->mtt_cap),
                 NF_MPT_W6_PAGES_PUT(q.npages));
    /* Written by the engine the clock the page list is in, if it was not refused. */
    eng_wr(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_WRITE_LOADED);
    if (!(flags & NF_NDK_OP_FLAG_SILENT_SUCCESS))
        wr_cqe_ahead(f, qpn, wr_id, NF_NDK_OP_FAST_REGISTER, r); /* while the engine works */
    /* BUSY: a long page list is still loading; CODE: the engine refused. */
    uint32_t st = eng_rd(NF_ENGINE_TBL_STATUS);
    if (st & NF_STATUS_WORD_BUSY_MASK)
        st = fw_eng_wait_busy(NF_ENGINE_TBL_STATUS);
    if (st & NF_STATUS_WORD_CODE_MASK) {
        fr_failed(i, st, r);
        return;
    }
    mr->state = NF_MPT_STATE_VALID;
}

/* An invalidate's rules, in the order that decides the status: the MR or window to
 * invalidate, or FW_NO_INDEX with *status saying why not. Nothing is changed here. */
static inline uint32_t inv_validate(const struct fw_qp *qp, uint32_t flags, uint32_t m, uint32_t mlen,
                                    uint32_t *status)
{
    *status = NF_STATUS_INVALID_PARAMETER;
    if (mlen < NF_MSG_HDR_SIZE + NF_WR_HDR_SIZE + NF_WR_INVALIDATE_SIZE || (flags & ~(uint32_t)NF_KNOWN_FLAGS_INVALIDATE))
        return FW_NO_INDEX;
    return wr_inv_target(qp->pd, mem_rd(BODY(m, NF_WR_INVALIDATE_TOKEN_OFF)), status);
}

/* An invalidate, checked by inv_validate: the engine's table write, the CQE written
 * meanwhile. */
static inline void do_invalidate(const struct fw_frame *f, const struct fw_qp *qp, uint32_t qpn, uint32_t wr_id,
                                 uint32_t flags, uint32_t m, uint32_t mlen, struct wr_result *r)
{
    uint32_t i = inv_validate(qp, flags, m, mlen, &r->status);
    if (i == FW_NO_INDEX)
        return;
    fw_mpt_invalidate_start(i);
    if (!(flags & NF_NDK_OP_FLAG_SILENT_SUCCESS))
        wr_cqe_ahead(f, qpn, wr_id, NF_NDK_OP_INVALIDATE, r); /* while the engine invalidates */
    wr_invalidated(i, fw_mpt_invalidate_wait(), r);
}

/* NdkBind: the window's entry is written self-contained (bounds, translation into the
 * MR's pages) with the MR as its PARENT; the engine grants through it only while both
 * are VALID. Rules in the order that decides the status (see the README). */
static FW_COLD void do_bind(const struct fw_qp *qp, uint32_t flags, uint32_t m, uint32_t mlen, struct wr_result *r)
{
    r->status = NF_STATUS_INVALID_PARAMETER;
    if (mlen < NF_MSG_HDR_SIZE + NF_WR_HDR_SIZE + NF_WR_BIND_SIZE || (flags & ~(uint32_t)NF_KNOWN_FLAGS_BIND))
        return;
    hal_win b = mem_win(BODY(m, 0));
    uint32_t mri = fw_mr_lookup(win_rd(b, NF_WR_BIND_MR_TOKEN_OFF));
    uint32_t wi = fw_mr_lookup(win_rd(b, NF_WR_BIND_MW_TOKEN_OFF));
    if (wi == FW_NO_INDEX || fw_mrs[wi].kind != NF_MPT_KIND_WINDOW || mri == FW_NO_INDEX ||
        fw_mrs[mri].kind == NF_MPT_KIND_WINDOW)
        return;
    struct fw_mr *mw = &fw_mrs[wi];
    const struct fw_mr *mr = &fw_mrs[mri];
    if (mr->pd != qp->pd || mw->pd != qp->pd) {
        r->status = NF_STATUS_ACCESS_VIOLATION;
        return;
    }
    if (mr->state != NF_MPT_STATE_VALID) {
        r->status = NF_STATUS_INVALID_DEVICE_STATE; /* not registered now */
        return;
    }
    uint64_t va, len;
    rd64_lo_hi(BODY(m, NF_WR_BIND_VA_OFF), &va);
    rd64_lo_hi(BODY(m, NF_WR_BIND_LENGTH_OFF), &len);
    uint32_t w[7];
    uint32_t code = fw_mpt_read(mri, w); /* the MR's range and rights live in the engine only */
    if (code != NF_REFUSE_OK) {
        r->status = NF_STATUS_INTERNAL_ERROR;
        r->refuse = code;
        return;
    }
    uint64_t base = w[2] | (uint64_t)w[3] << 32;
    uint32_t mr_len = w[4];
    /* [va, va + len) inside [base, base + mr_len), written without a sum that could wrap */
    if (len == 0 || va < base || len > mr_len || va - base > mr_len - len)
        return;
    if ((flags & OP_REMOTE_WRITE_BIT) && !(w[0] & NF_MPT_W0_LOCAL_WRITE_MASK)) {
        r->status = NF_STATUS_ACCESS_VIOLATION; /* remote write needs an MR with local write */
        return;
    }
    if (mw->state == NF_MPT_STATE_VALID) { /* re-bound: the new binding replaces the old */
        mw->state = NF_MPT_STATE_INVALID;
        fw_mr_invalidated(wi);
    }
    uint64_t off = (va - base) + NF_MPT_W1_FBO_GET(w[1]);
    uint32_t fbo = (uint32_t)off & PAGE_OFFSET_MASK;
    uint32_t pages = (uint32_t)((fbo + len - 1u) >> NF_ADAPTER_PAGE_SHIFT) + 1u;
    uint32_t w0 = NF_MPT_W0_STATE_PUT(NF_MPT_STATE_VALID) | NF_MPT_W0_KIND_PUT(NF_MPT_KIND_WINDOW) |
                  NF_MPT_W0_KEY_PUT(mw->key) | FR_BIT(flags, NF_NDK_OP_FLAG_ALLOW_REMOTE_READ, NF_MPT_W0_REMOTE_READ_MASK) |
                  FR_BIT(flags, OP_REMOTE_WRITE_BIT, NF_MPT_W0_REMOTE_WRITE_MASK);
    code = fw_mpt_write_words(wi, w0, NF_MPT_W1_PD_PUT(mr->pd) | NF_MPT_W1_FBO_PUT(fbo), (uint32_t)va,
                              (uint32_t)(va >> 32), (uint32_t)len,
                              NF_MPT_W5_MTT_BASE_PUT(mr->mtt_base + (uint32_t)(off >> NF_ADAPTER_PAGE_SHIFT)),
                              NF_MPT_W6_PAGES_PUT(pages) | NF_MPT_W6_PARENT_PUT(mri));
    if (code != NF_REFUSE_OK) {
        (void)fw_mpt_invalidate(wi); /* whatever the engine holds must not grant */
        r->status = NF_STATUS_INTERNAL_ERROR;
        r->refuse = code;
        return;
    }
    mw->state = NF_MPT_STATE_VALID;
    mw->parent = (uint16_t)mri;
    fw_mrs[mri].nwin++;
    r->status = NF_STATUS_SUCCESS;
}

static __attribute__((noinline)) void do_rdma(const struct fw_qp *qp, uint32_t op, uint32_t flags, uint32_t m, uint32_t mlen, struct wr_result *r)
{
    r->status = NF_STATUS_INVALID_PARAMETER;
    if (mlen < NF_MSG_HDR_SIZE + NF_WR_HDR_SIZE + NF_WR_RDMA_SIZE)
        return;
    uint64_t remote_va;
    rd64_lo_hi(BODY(m, NF_WR_RDMA_REMOTE_VA_OFF), &remote_va);
    uint32_t remote_token = mem_rd(BODY(m, NF_WR_RDMA_REMOTE_TOKEN_OFF));
    uint32_t nsge = mem_rd(BODY(m, NF_WR_RDMA_NSGE_OFF));
    if (flags & NF_NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE) {
        r->status = NF_STATUS_NOT_SUPPORTED;
        return;
    }
    if (flags & ~(uint32_t)NF_KNOWN_FLAGS_RDMA || nsge > NF_ADAPTER_MAX_SGE ||
        nsge * NF_SGE_SIZE > mlen - NF_MSG_HDR_SIZE - NF_WR_HDR_SIZE - NF_WR_RDMA_SIZE)
        return;
    uint32_t peer = fw_qp_lookup(qp->peer_qpn);
    if (peer == FW_NO_INDEX) {
        r->status = NF_STATUS_CONNECTION_INVALID; /* the other end is gone */
        return;
    }
    uint32_t peer_pd = fw_qps[peer].pd;
    /* Read every SGE first: a malformed list fails before any byte moves. */
    uint64_t sge_addr[NF_ADAPTER_MAX_SGE];
    uint32_t sge_len[NF_ADAPTER_MAX_SGE], sge_token[NF_ADAPTER_MAX_SGE];
    if (wr_read_sges(BODY(m, NF_WR_RDMA_SIZE), nsge, sge_addr, sge_len, sge_token) > 0xFFFFFFFFu)
        return;
    int is_write = op == NF_OP_WR_WRITE;
    uint64_t off = 0;
    r->status = NF_STATUS_SUCCESS;
    for (uint32_t k = 0; k < nsge; k++) {
        struct fw_dma_side local, remote;
        wr_local_side(&local, sge_addr[k], sge_token[k], qp->pd,
                   is_write ? NF_ACCESS_LOCAL_READ : NF_ACCESS_LOCAL_WRITE);
        remote.mode = NF_DMA_MODE_TOKEN;
        remote.token = remote_token;
        remote.addr = remote_va + off;
        remote.pd = peer_pd;
        remote.access = is_write ? NF_ACCESS_REMOTE_WRITE : NF_ACCESS_REMOTE_READ;
        uint32_t st, moved = 0;
        if (remote.addr < remote_va) {
            st = NF_STATUS_WORD_CODE_PUT(NF_REFUSE_OUT_OF_BOUNDS); /* the remote range wraps */
        } else {
            st = is_write ? fw_dma(&local, &remote, sge_len[k], &moved) : fw_dma(&remote, &local, sge_len[k], &moved);
        }
        r->bytes += moved;
        if (NF_STATUS_WORD_CODE_GET(st) != NF_REFUSE_OK) {
            r->refuse = NF_STATUS_WORD_CODE_GET(st);
            r->status = fw_eng_failed(r->refuse, NF_STATUS_ACCESS_VIOLATION);
            return;
        }
        off += sge_len[k];
    }
}

/* Work-request counters are indexed by op: the two orders agree. */
_Static_assert(NF_STAT_OP_WR_INVALIDATE == NF_STAT_OP_WR_FAST_REGISTER + 1 &&
                   NF_STAT_OP_WR_READ == NF_STAT_OP_WR_FAST_REGISTER + 2 &&
                   NF_STAT_OP_WR_WRITE == NF_STAT_OP_WR_FAST_REGISTER + 3 &&
                   NF_STAT_OP_WR_SEND == NF_STAT_OP_WR_FAST_REGISTER + 4 &&
                   NF_STAT_OP_WR_SEND_INVALIDATE == NF_STAT_OP_WR_FAST_REGISTER + 5 &&
                   NF_STAT_OP_WR_RECEIVE == NF_STAT_OP_WR_FAST_REGISTER + 6 &&
                   NF_STAT_OP_WR_BIND == NF_STAT_OP_WR_FAST_REGISTER + 7 && NF_OP_WR_BIND == NF_OP_WR_FAST_REGISTER + 7 &&
                   NF_OP_WR_INVALIDATE == NF_OP_WR_FAST_REGISTER + 1 && NF_OP_WR_READ == NF_OP_WR_FAST_REGISTER + 2 &&
                   NF_OP_WR_WRITE == NF_OP_WR_FAST_REGISTER + 3 && NF_OP_WR_SEND == NF_OP_WR_FAST_REGISTER + 4 &&
                   NF_OP_WR_SEND_INVALIDATE == NF_OP_WR_FAST_REGISTER + 5 &&
                   NF_OP_WR_RECEIVE == NF_OP_WR_FAST_REGISTER + 6,
               "work-request ops and their counters are consecutive");
/* The REFUSE code is a 4-bit field: refuse_codes has one counter per value. */
_Static_assert(NF_STATS_REFUSE_CODES_COUNT == 1u << NF_STATUS_WORD_CODE_WIDTH, "one counter per REFUSE code");

/* The CQE's NDK_OP of each work request, by op - NF_OP_WR_FAST_REGISTER. */
static const uint8_t wr_op_type[] = {NF_NDK_OP_FAST_REGISTER, NF_NDK_OP_INVALIDATE, NF_NDK_OP_READ, NF_NDK_OP_WRITE,
                                     NF_NDK_OP_SEND,          NF_NDK_OP_SEND,       NF_NDK_OP_RECEIVE,
                                     NF_NDK_OP_BIND};
_Static_assert(sizeof(wr_op_type) == NF_OP_WR_BIND - NF_OP_WR_FAST_REGISTER + 1u, "one NDK_OP per work request");

/* Every work request but fast-register and invalidate. Out of line: their registers
 * are not saved on the path of the two the fast path inlines; the outcome comes back
 * by value, so the caller's result never leaves registers. */
static __attribute__((noinline)) struct wr_result wr_other(const struct fw_frame *f, struct fw_qp *qp, uint32_t op,
                                                           uint32_t wr_id, uint32_t flags, uint32_t m, uint32_t mlen)
{
    struct wr_result r = {NF_STATUS_INVALID_PARAMETER, 0, 0, 0};
    if (FW_NET && qp->wire && op != NF_OP_WR_BIND && op != NF_OP_WR_RECEIVE)
        fw_rc_post(f, qp, op, wr_id, flags, m, mlen, &r); /* completes later, from the wire */
    else if (op <= NF_OP_WR_WRITE)
        do_rdma(qp, op, flags, m, mlen, &r);
    else if (op == NF_OP_WR_BIND)
        do_bind(qp, flags, m, mlen, &r);
    else if (op == NF_OP_WR_RECEIVE)
        wr_receive(qp, wr_id, flags, m, mlen, &r);
    else
        wr_send(f, qp, op, flags, m, mlen, &r);
    return r;
}

/* A work request that failed: the one place the error-completion rule is applied to the
 * requesting QP, for every work-request type and every status (a Send may also break its
 * peer: fw_send.c); its CQE says why (one written ahead as a success gets the failure's
 * status and code). */
static FW_COLD void wr_refused(const struct fw_frame *f, struct fw_qp *qp, uint32_t qpn, uint32_t wr_id, uint32_t op,
                               const struct wr_result *r)
{
    wr_failed(qp, r->status, r->refuse);
    if (r->cqe_at) {
        mem_wr(r->cqe_at + NF_MSG_HDR_SIZE + NF_CQE_STATUS_OFF, r->status);
        mem_wr(r->cqe_at + NF_MSG_HDR_SIZE + NF_CQE_REFUSE_OFF, r->refuse);
    } else {
        wr_put_cqe(f, qpn, wr_id, r, wr_op_type[op - NF_OP_WR_FAST_REGISTER], 0, 0);
    }
}

/* The QP a work request names, by the rules in the order that decides the status; *qp
 * is set once the QP exists, so that a failure applies the error-completion rule to it. */
static inline uint32_t qp_validate(uint32_t qpn, uint32_t op, struct fw_qp **qp)
{
    uint32_t q = fw_qp_lookup(qpn);
    if (q == FW_NO_INDEX)
        return NF_STATUS_INVALID_PARAMETER;
    *qp = &fw_qps[q];
    if ((*qp)->state == FW_QP_ERROR)
        return NF_STATUS_CANCELLED;
    if ((*qp)->state != FW_QP_CONNECTED && op != NF_OP_WR_RECEIVE)
        return NF_STATUS_CONNECTION_INVALID; /* a receive may be posted before the QP connects */
    return NF_STATUS_SUCCESS;
}

FW_HOT void fw_wr_process(const struct fw_frame *f, uint32_t m, uint32_t mlen, uint32_t op)
{
    uint32_t qpn = 0, wr_id = 0, flags = 0;
    struct fw_qp *qp = 0;
    struct wr_result r = {NF_STATUS_INVALID_PARAMETER, 0, 0, 0};
    if (mlen >= NF_MSG_HDR_SIZE + NF_WR_HDR_SIZE) {
        hal_win h = mem_win(m + NF_MSG_HDR_SIZE);
        qpn = win_rd(h, NF_WR_HDR_QPN_OFF);
        wr_id = win_rd(h, NF_WR_HDR_WR_ID_OFF);
        flags = win_rd(h, NF_WR_HDR_FLAGS_OFF);
        /* a faulted adapter runs no work request (fw_fault) */
        r.status = fw_stats.faults ? NF_STATUS_DEVICE_HARDWARE_ERROR : qp_validate(qpn, op, &qp);
        if (r.status == NF_STATUS_SUCCESS) {
            if (op == NF_OP_WR_FAST_REGISTER)
                do_fast_register(f, qp, qpn, wr_id, flags, m, mlen, &r);
            else if (op == NF_OP_WR_INVALIDATE)
                do_invalidate(f, qp, qpn, wr_id, flags, m, mlen, &r);
            else
                r = wr_other(f, qp, op, wr_id, flags, m, mlen);
        }
    }
    fw_stats.ops[NF_STAT_OP_WR_FAST_REGISTER + (op - NF_OP_WR_FAST_REGISTER)]++;
    if (FW_UNLIKELY(r.status != NF_STATUS_SUCCESS)) {
        wr_refused(f, qp, qpn, wr_id, op, &r);
        return;
    }
    /* A posted receive completes later, when a Send fills it (or the host flushes it). */
    if (!r.cqe_at && !(flags & NF_NDK_OP_FLAG_SILENT_SUCCESS || op == NF_OP_WR_RECEIVE))
        wr_put_cqe(f, qpn, wr_id, &r, wr_op_type[op - NF_OP_WR_FAST_REGISTER], 0, 0);
    wr_cost(f, op);
}
