/* SPDX-License-Identifier: Apache-2.0 */
/* What the two files of the work-request layer share (fw_wr_int.h): the SGE reader, the
 * local side of a DMA and the error-completion rule.
 * Layer: called by fw_wr.c and fw_send.c; calls fw_tables and fw_state only. */
#include "fw_state.h"
#include "fw_tables.h"
#include "fw_wr_int.h"
#include "hal.h"

/* One side of a DMA on a local SGE: TOKEN mode with the QP's PD, or LOGICAL for the
 * privileged token (it names an adapter logical address; local access only). */
void wr_local_side(struct fw_dma_side *s, uint64_t addr, uint32_t token, uint32_t pd, uint32_t access)
{
    s->addr = addr;
    s->token = token;
    s->pd = pd;
    s->access = access;
    s->mode = token == NF_ADAPTER_PRIVILEGED_TOKEN ? NF_DMA_MODE_LOGICAL : NF_DMA_MODE_TOKEN;
}

/* The nsge SGEs at adapter address at into the arrays; their total length (64 bits:
 * the caller refuses more than 2^32 - 1). */
uint64_t wr_read_sges(uint32_t at, uint32_t nsge, uint64_t *addr, uint32_t *len, uint32_t *token)
{
    uint64_t total = 0;
    for (uint32_t k = 0; k < nsge; k++) {
        uint32_t s = at + k * NF_SGE_SIZE;
        rd64_lo_hi(s + NF_SGE_ADDR_OFF, &addr[k]);
        len[k] = mem_rd(s + NF_SGE_LEN_OFF);
        token[k] = mem_rd(s + NF_SGE_TOKEN_OFF);
        total += len[k];
    }
    return total;
}

/* A failure completion: counted by status and by the engine's REFUSE code, and its QP
 * broken (NDK: an error completion breaks the connection; a QP not connected has none
 * to break, a QP in ERROR stays there). */
FW_COLD void wr_failed(struct fw_qp *qp, uint32_t status, uint32_t refuse)
{
    if (qp && qp->state == FW_QP_CONNECTED)
        qp->state = FW_QP_ERROR;
    fw_stats_refused(status);
    fw_stats.refuse_codes[refuse & (NF_STATS_REFUSE_CODES_COUNT - 1u)] += refuse != NF_REFUSE_OK;
}
