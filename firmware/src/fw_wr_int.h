/* SPDX-License-Identifier: Apache-2.0 */
/* What the two files of the work-request layer share: fw_wr.c (dispatch, fast register,
 * invalidate, RDMA Read/Write, the CQE) and fw_send.c (Send, SendAndInvalidate,
 * Receive). Same layer as fw_wr.h: calls fw_tables and fw_state only. */
#ifndef FW_WR_INT_H
#define FW_WR_INT_H

#include <stdint.h>

#include "fw_frame.h"
#include "fw_state.h"
#include "fw_tables.h"
#include "hal.h"

#define WR_BODY(m, off) ((m) + NF_MSG_HDR_SIZE + NF_WR_HDR_SIZE + (off))

struct wr_result {
    uint32_t status, bytes, refuse;
    uint32_t cqe_at; /* 0, or the CQE is in the TX window there already (wr_cqe_ahead) */
};

/* A 64-bit field of a message in adapter memory, low word first. */
static inline void rd64_lo_hi(uint32_t at, uint64_t *v)
{
    *v = mem_rd(at) | (uint64_t)mem_rd(at + 4u) << 32;
}

/* The MR an invalidation of token on a QP of PD pd may invalidate: its index, or
 * FW_NO_INDEX with *status saying why not (unknown token, an NdkRegisterMr region,
 * another PD, not VALID). wr_invalidate then invalidates it through the engine.
 * Inline: the invalidate's path does not pay a call for it. */
static inline uint32_t wr_inv_target(uint32_t pd, uint32_t token, uint32_t *status)
{
    uint32_t i = fw_mr_lookup(token);
    *status = NF_STATUS_INVALID_PARAMETER;
    if (i == FW_NO_INDEX)
        return FW_NO_INDEX;
    const struct fw_mr *mr = &fw_mrs[i];
    if (mr->kind == NF_MPT_KIND_NORMAL) {
        /* an NdkRegisterMr region is removed with NdkDeregisterMr, never invalidated */
        *status = NF_STATUS_INVALID_DEVICE_STATE;
        return FW_NO_INDEX;
    }
    if (mr->pd != pd) {
        *status = NF_STATUS_ACCESS_VIOLATION;
        return FW_NO_INDEX;
    }
    if (mr->state != NF_MPT_STATE_VALID) {
        *status = NF_STATUS_INVALID_DEVICE_STATE; /* already invalid */
        return FW_NO_INDEX;
    }
    return i;
}

/* Entry index after the engine's invalidate of it answered code (the request's outcome
 * in r). Done means no later check grants and no DMA through the entry still runs. */
static inline void wr_invalidated(uint32_t index, uint32_t code, struct wr_result *r)
{
    if (FW_UNLIKELY(code != NF_REFUSE_OK)) {
        r->status = NF_STATUS_INTERNAL_ERROR;
        r->refuse = code;
        return;
    }
    fw_mrs[index].state = NF_MPT_STATE_INVALID;
    fw_mr_invalidated(index);
    r->status = NF_STATUS_SUCCESS;
}

/* Invalidates entry index through the engine (the request's outcome in r). */
static inline void wr_invalidate(uint32_t index, struct wr_result *r)
{
    wr_invalidated(index, fw_mpt_invalidate(index), r);
}

/* The CQE message of a work request at adapter address at, in space that reads as
 * zeros (reserve_zeroed): a field the compiler knows is zero is not stored (a success
 * written ahead stores 4 words of 12). */
static inline void wr_cqe_at(uint32_t at, uint32_t qpn, uint32_t wr_id, const struct wr_result *r, uint32_t op_type,
                             uint32_t token, uint32_t cflags)
{
    hal_win w = mem_win(at);
    const uint32_t c = NF_MSG_HDR_SIZE;
    /* MSG_HDR: tag and status 0 in a CQE */
    win_wr(w, NF_MSG_HDR_OP_OFF, fw_hdr_op_len(NF_OP_CQE, NF_MSG_HDR_SIZE + NF_CQE_SIZE));
    FW_WIN_WR_NONZERO(w, c + NF_CQE_QPN_OFF, qpn);
    FW_WIN_WR_NONZERO(w, c + NF_CQE_WR_ID_OFF, wr_id);
    FW_WIN_WR_NONZERO(w, c + NF_CQE_STATUS_OFF, r->status);
    FW_WIN_WR_NONZERO(w, c + NF_CQE_BYTES_OFF, r->bytes);
    FW_WIN_WR_NONZERO(w, c + NF_CQE_OP_TYPE_OFF, op_type);
    FW_WIN_WR_NONZERO(w, c + NF_CQE_REFUSE_OFF, r->refuse);
    FW_WIN_WR_NONZERO(w, c + NF_CQE_TOKEN_OFF, token);
    FW_WIN_WR_NONZERO(w, c + NF_CQE_CFLAGS_OFF, cflags);
}

/* Write a CQE through the frame's reply cursor (the caller checked the room); its
 * address (0: no room, never expected). */
static inline uint32_t wr_put_cqe(const struct fw_frame *f, uint32_t qpn, uint32_t wr_id, const struct wr_result *r,
                                  uint32_t op_type, uint32_t token, uint32_t cflags)
{
    uint32_t at = f->tx.reserve_zeroed(NF_MSG_HDR_SIZE + NF_CQE_SIZE);
    if (FW_LIKELY(at))
        wr_cqe_at(at, qpn, wr_id, r, op_type, token, cflags);
    return at;
}

/* A success's CQE written ahead, while the engine works on the request (a fast
 * register's page-list load, an invalidate's table write), so that its stores overlap
 * the wait instead of following it. Nothing leaves before the link posts the frame, after
 * the request's end (fw_wr_process), which writes the status and REFUSE code of a request
 * that failed after all into it. */
static inline void wr_cqe_ahead(const struct fw_frame *f, uint32_t qpn, uint32_t wr_id, uint32_t op_type,
                                struct wr_result *r)
{
    static const struct wr_result ok = {NF_STATUS_SUCCESS, 0, NF_REFUSE_OK, 0};
    r->cqe_at = wr_put_cqe(f, qpn, wr_id, &ok, op_type, 0, 0);
}

/* fw_wr_common.c: what both work-request files call. */
/* One side of a DMA on a local SGE: TOKEN mode with the QP's PD, or LOGICAL for the
 * privileged token (it names an adapter logical address; local access only). */
void wr_local_side(struct fw_dma_side *s, uint64_t addr, uint32_t token, uint32_t pd, uint32_t access);
/* The nsge SGEs at adapter address at into the arrays; their total length (64 bits:
 * the caller refuses more than 2^32 - 1). */
uint64_t wr_read_sges(uint32_t at, uint32_t nsge, uint64_t *addr, uint32_t *len, uint32_t *token);
/* A failure completion: counted by status and by the engine's REFUSE code, and its QP
 * broken (NDK: an error completion breaks the connection; a QP not connected has none
 * to break, a QP in ERROR stays there). */
void wr_failed(struct fw_qp *qp, uint32_t status, uint32_t refuse);

/* fw_send.c: WR_RECEIVE on qp (RESET or CONNECTED); WR_SEND / WR_SEND_INVALIDATE on a
 * connected qp, writing the receive's CQE (if a receive was consumed) through f. */
void wr_receive(struct fw_qp *qp, uint32_t wr_id, uint32_t flags, uint32_t m, uint32_t mlen, struct wr_result *r);
void wr_send(const struct fw_frame *f, struct fw_qp *qp, uint32_t op, uint32_t flags, uint32_t m, uint32_t mlen,
             struct wr_result *r);

#endif
