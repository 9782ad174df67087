/* SPDX-License-Identifier: Apache-2.0 */
/* Messages of one DATA payload: requests (one reply each) and work requests (a CQE
 * each, fw_wr.c). Data never passes through the CPU: PING, MEM_WRITE and MEM_READ move
 * their bytes with the engine's DMA between the link slots and the user region.
 * Layer: called by fw_link with a frame's context (fw_frame.h); calls fw_wr, fw_net,
 * fw_tables and fw_state; replies go through the frame's reply cursor, never to the link directly. */
#include "fw_msg.h"
#include "fw_frame.h"
#include "fw_net.h"
#include "fw_cm.h"
#include "fw_rc.h"
#include "fw_state.h"
#include "fw_tables.h"
#include "fw_wr.h"
#include "hal.h"

#define MSG_ALIGN 8u
#define ROUND_UP(x, a) (((x) + (a) - 1u) / (a) * (a))
#define BODY(m, off) ((m) + NF_MSG_HDR_SIZE + (off))
#define PAGE_OFFSET_MASK (NF_ADAPTER_PAGE_SIZE - 1u)
#define PD_MAX (NF_MPT_W1_PD_MASK >> NF_MPT_W1_PD_LSB)

static uint32_t msg_op(uint32_t w0) { return (w0 >> (8u * NF_MSG_HDR_OP_OFF)) & 0xFFFFu; }
static uint32_t msg_len(uint32_t w0) { return (w0 >> (8u * NF_MSG_HDR_LEN_OFF)) & 0xFFFFu; }

/* Message op -> 1 + its NF_STAT_OP_* index (0: an op the firmware does not know), from
 * layout.toml's STAT_OP list. */
#define OP_SLOT(name, index) [NF_OP_##name] = (uint8_t)((index) + 1u),
/* NET_NEIGH shares NET_CONFIG's counter (STAT_OP's doc says so): STATS keeps its size. */
static const uint8_t op_slot[NF_OP_WR_BIND + 1u] = {
    NF_STAT_OP_LIST(OP_SLOT)[NF_OP_NET_NEIGH] = (uint8_t)(NF_STAT_OP_NET_CONFIG + 1u),
    [NF_OP_NET_PHY] = (uint8_t)(NF_STAT_OP_NET_CONFIG + 1u)};

static void count_op(uint32_t op)
{
    uint32_t slot = op < sizeof(op_slot) ? op_slot[op] : 0u;
    if (slot)
        fw_stats.ops[slot - 1u]++;
    else
        fw_stats.ops_unknown++;
}

/* Write a reply's MSG_HDR at adapter address at, counting a failure status. */
static void put_hdr(uint32_t at, uint32_t op, uint32_t len, uint32_t tag, uint32_t status)
{
    if (status != NF_STATUS_SUCCESS)
        fw_stats_refused(status);
    fw_reply_hdr(at, op | NF_OP_REPLY, len, tag, status);
}

/* A reply with n payload words (0, 2, or NET_CONFIG_REP's). */
static void reply(const struct fw_frame *f, uint32_t op, uint32_t tag, uint32_t status, const uint32_t *words,
                  uint32_t n)
{
    uint32_t len = NF_MSG_HDR_SIZE + 4u * n;
    uint32_t at = f->tx.reserve(len);
    if (!at)
        return;
    put_hdr(at, op, len, tag, status);
    for (uint32_t i = 0; i < n; i++)
        mem_wr(at + NF_MSG_HDR_SIZE + 4u * i, words[i]);
}

static uint32_t qp_arg(uint32_t m, uint32_t mlen);

/* A reply's length is a multiple of MSG_ALIGN: the host's message walk takes no other. */
_Static_assert(NF_NET_CONFIG_REP_SIZE % MSG_ALIGN == 0u && NF_QP_FLUSH_REP_SIZE % MSG_ALIGN == 0u &&
                   NF_MR_CREATE_REP_SIZE % MSG_ALIGN == 0u && NF_QP_CREATE_REP_SIZE % MSG_ALIGN == 0u &&
                   NF_CM_CONNECT_REP_SIZE % MSG_ALIGN == 0u && NF_INFO_SIZE % MSG_ALIGN == 0u &&
                   NF_STATS_SIZE % MSG_ALIGN == 0u && NF_CQE_SIZE % MSG_ALIGN == 0u,
               "replies are whole multiples of MSG_ALIGN");

/* Bytes of the reply (or CQE) a message produces at most; NF_MSG_HDR_SIZE for errors. */
static uint32_t reply_bytes(uint32_t op, uint32_t m, uint32_t mlen)
{
    switch (op) {
    case NF_OP_PING:
        return mlen;
    case NF_OP_INFO:
        return NF_MSG_HDR_SIZE + NF_INFO_SIZE;
    case NF_OP_STATS:
        return NF_MSG_HDR_SIZE + NF_STATS_SIZE;
    case NF_OP_MEM_READ: {
        if (mlen < NF_MSG_HDR_SIZE + NF_MEM_READ_REQ_SIZE)
            return NF_MSG_HDR_SIZE;
        uint32_t n = mem_rd(BODY(m, NF_MEM_READ_REQ_LEN_OFF));
        return n <= NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE ? NF_MSG_HDR_SIZE + ROUND_UP(n, MSG_ALIGN)
                                                          : NF_MSG_HDR_SIZE;
    }
    case NF_OP_MR_CREATE:
    case NF_OP_MW_CREATE:
        return NF_MSG_HDR_SIZE + NF_MR_CREATE_REP_SIZE;
    case NF_OP_QP_CREATE:
        return NF_MSG_HDR_SIZE + NF_QP_CREATE_REP_SIZE;
    case NF_OP_QP_FLUSH:
        return NF_MSG_HDR_SIZE + NF_QP_FLUSH_REP_SIZE;
    case NF_OP_NET_CONFIG:
        return NF_MSG_HDR_SIZE + NF_NET_CONFIG_REP_SIZE;
#if FW_NET
    case NF_OP_CM_LISTEN:
    case NF_OP_CM_CONNECT:
        return NF_MSG_HDR_SIZE + NF_CM_CONNECT_REP_SIZE;
    case NF_OP_QP_DISCONNECT:
    case NF_OP_QP_DESTROY:
        /* a wire QP's queued requests complete before the reply, a CQE each */
        return NF_MSG_HDR_SIZE + fw_rc_queued(qp_arg(m, mlen)) * (NF_MSG_HDR_SIZE + NF_CQE_SIZE);
    case NF_OP_NET_NEIGH:
        return NF_MSG_HDR_SIZE + NF_NET_NEIGH_REP_SIZE + NF_NEIGH_MAX_ENTRIES * NF_NET_NEIGH_ENTRY_SIZE;
    case NF_OP_NET_PHY:
        return NF_MSG_HDR_SIZE + NF_NET_PHY_REP_SIZE;
#endif
    case NF_OP_WR_FAST_REGISTER:
    case NF_OP_WR_INVALIDATE:
    case NF_OP_WR_READ:
    case NF_OP_WR_WRITE:
    case NF_OP_WR_RECEIVE:
    case NF_OP_WR_BIND:
        return NF_MSG_HDR_SIZE + NF_CQE_SIZE;
    case NF_OP_WR_SEND:
    case NF_OP_WR_SEND_INVALIDATE:
        return 2u * (NF_MSG_HDR_SIZE + NF_CQE_SIZE); /* the receive's CQE, then the Send's */
    default:
        return NF_MSG_HDR_SIZE;
    }
}

/* The length of the message at payload offset off (its first header word in *w0), or 0
 * when that length is malformed: the message walk answers it and drops the rest. */
static uint32_t msg_at(const struct fw_frame *f, uint32_t off, uint32_t *w0)
{
    *w0 = mem_rd(f->addr + off);
    uint32_t mlen = msg_len(*w0);
    return mlen < NF_MSG_HDR_SIZE || mlen % MSG_ALIGN || mlen > f->len - off ? 0u : mlen;
}

uint32_t fw_msg_count(const struct fw_frame *f)
{
    uint32_t n = 0, w0;
    for (uint32_t off = 0, mlen = 1; mlen && off + NF_MSG_HDR_SIZE <= f->len; off += mlen, n++)
        mlen = msg_at(f, off, &w0);
    return n;
}

int fw_msg_fits(const struct fw_frame *f, uint32_t free_open, uint32_t free_slots)
{
    /* The same next-fit packing the link's reserve does; replies only ever come out
     * smaller than estimated, and next-fit never needs more frames for smaller items. */
    for (uint32_t off = 0, mlen = 1; mlen && off + NF_MSG_HDR_SIZE <= f->len; off += mlen) {
        uint32_t w0;
        mlen = msg_at(f, off, &w0);
        uint32_t r = mlen ? reply_bytes(msg_op(w0), f->addr + off, mlen) : NF_MSG_HDR_SIZE;
        if (r <= free_open) {
            free_open -= r;
        } else if (free_slots) {
            free_slots--;
            free_open = NF_LINK_MAX_PAYLOAD - r;
        } else {
            return 0;
        }
    }
    return 1;
}

static void do_ping(const struct fw_frame *f, uint32_t tag, uint32_t m, uint32_t mlen)
{
    uint32_t at = f->tx.reserve(mlen);
    if (!at)
        return;
    uint32_t n = mlen - NF_MSG_HDR_SIZE;
    uint32_t status = NF_STATUS_SUCCESS;
    if (n) {
        struct fw_dma_side src = {NF_DMA_MODE_SYSTEM, 0, 0, 0, BODY(m, 0)};
        struct fw_dma_side dst = {NF_DMA_MODE_SYSTEM, 0, 0, 0, at + NF_MSG_HDR_SIZE};
        if (NF_STATUS_WORD_CODE_GET(fw_dma(&src, &dst, n, 0)) != NF_REFUSE_OK) {
            status = NF_STATUS_INTERNAL_ERROR;
            f->tx.trim(n);
            mlen = NF_MSG_HDR_SIZE;
        }
    }
    put_hdr(at, NF_OP_PING, mlen, tag, status);
}

static uint32_t do_mem_write(uint32_t m, uint32_t mlen)
{
    if (mlen < NF_MSG_HDR_SIZE + NF_MEM_WRITE_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    uint32_t addr = mem_rd(BODY(m, NF_MEM_WRITE_REQ_ADDR_OFF));
    uint32_t n = mem_rd(BODY(m, NF_MEM_WRITE_REQ_LEN_OFF));
    if (n > mlen - NF_MSG_HDR_SIZE - NF_MEM_WRITE_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    /* LOGICAL mode: the engine refuses anything outside the user region. */
    struct fw_dma_side src = {NF_DMA_MODE_SYSTEM, 0, 0, 0, BODY(m, NF_MEM_WRITE_REQ_SIZE)};
    struct fw_dma_side dst = {NF_DMA_MODE_LOGICAL, 0, 0, 0, addr};
    uint32_t code = NF_STATUS_WORD_CODE_GET(fw_dma(&src, &dst, n, 0));
    return code == NF_REFUSE_OK ? NF_STATUS_SUCCESS : fw_eng_failed(code, NF_STATUS_INVALID_PARAMETER);
}

static void do_mem_read(const struct fw_frame *f, uint32_t tag, uint32_t m, uint32_t mlen)
{
    if (mlen < NF_MSG_HDR_SIZE + NF_MEM_READ_REQ_SIZE) {
        reply(f, NF_OP_MEM_READ, tag, NF_STATUS_INVALID_PARAMETER, 0, 0);
        return;
    }
    uint32_t addr = mem_rd(BODY(m, NF_MEM_READ_REQ_ADDR_OFF));
    uint32_t n = mem_rd(BODY(m, NF_MEM_READ_REQ_LEN_OFF));
    if (n > NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE) {
        reply(f, NF_OP_MEM_READ, tag, NF_STATUS_INVALID_PARAMETER, 0, 0);
        return;
    }
    uint32_t padded = ROUND_UP(n, MSG_ALIGN);
    uint32_t at = f->tx.reserve(NF_MSG_HDR_SIZE + padded);
    if (!at)
        return;
    uint32_t data = at + NF_MSG_HDR_SIZE;
    /* Zero the padding words first; the DMA then overwrites the data bytes in them. */
    for (uint32_t w = n / 4u * 4u; w < padded; w += 4u)
        mem_wr(data + w, 0);
    struct fw_dma_side src = {NF_DMA_MODE_LOGICAL, 0, 0, 0, addr};
    struct fw_dma_side dst = {NF_DMA_MODE_SYSTEM, 0, 0, 0, data};
    uint32_t code = NF_STATUS_WORD_CODE_GET(fw_dma(&src, &dst, n, 0));
    if (code != NF_REFUSE_OK) {
        f->tx.trim(padded);
        put_hdr(at, NF_OP_MEM_READ, NF_MSG_HDR_SIZE, tag, fw_eng_failed(code, NF_STATUS_INVALID_PARAMETER));
        return;
    }
    put_hdr(at, NF_OP_MEM_READ, NF_MSG_HDR_SIZE + padded, tag, NF_STATUS_SUCCESS);
}

/* MR_CREATE, and MW_CREATE (fast_register must be 0): an entry of its kind, INVALID. */
static FW_COLD uint32_t do_mr_create(uint32_t op, uint32_t m, uint32_t mlen, uint32_t *token)
{
    if (mlen < NF_MSG_HDR_SIZE + NF_MR_CREATE_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    uint32_t pd = mem_rd(BODY(m, NF_MR_CREATE_REQ_PD_OFF));
    uint32_t fast = mem_rd(BODY(m, NF_MR_CREATE_REQ_FAST_REGISTER_OFF));
    uint32_t window = op == NF_OP_MW_CREATE;
    if (pd == 0 || pd > PD_MAX || fast > 1u - window)
        return NF_STATUS_INVALID_PARAMETER;
    return fw_mr_alloc(pd, window ? NF_MPT_KIND_WINDOW : fast ? NF_MPT_KIND_FAST : NF_MPT_KIND_NORMAL, token);
}

/* The MR named by the token at body offset off of a request at least size bytes long:
 * its index, or FW_NO_INDEX (a short request, an unknown token). */
static uint32_t token_at(uint32_t m, uint32_t mlen, uint32_t size, uint32_t off)
{
    if (mlen < NF_MSG_HDR_SIZE + size)
        return FW_NO_INDEX;
    return fw_mr_lookup(mem_rd(BODY(m, off)));
}

static uint32_t token_arg(uint32_t m, uint32_t mlen)
{
    return token_at(m, mlen, NF_TOKEN_REQ_SIZE, NF_TOKEN_REQ_TOKEN_OFF);
}

/* The MR a registration request names (token at body offset off, request at least size
 * bytes), when it is of the kind the request needs; else FW_NO_INDEX: NdkRegisterMr and
 * NdkDeregisterMr need a region created with FastRegister=FALSE, NdkInitializeFastRegisterMr
 * one created with TRUE, and both refusals are INVALID_PARAMETER. */
static uint32_t mr_of_kind(uint32_t m, uint32_t mlen, uint32_t size, uint32_t off, uint32_t kind)
{
    uint32_t i = token_at(m, mlen, size, off);
    return i != FW_NO_INDEX && fw_mrs[i].kind == kind ? i : FW_NO_INDEX;
}

static FW_COLD uint32_t do_mr_destroy(uint32_t m, uint32_t mlen)
{
    uint32_t i = token_arg(m, mlen);
    if (i == FW_NO_INDEX)
        return NF_STATUS_INVALID_PARAMETER;
    fw_mr_free(i); /* a close never fails: a registered MR is invalidated on the way */
    return NF_STATUS_SUCCESS;
}

/* NDK_MR_FLAG_* -> MPT_W0 rights. Remote write implies local write (0x5 includes 0x1);
 * a read sink is written by the adapter, so it gets local write too. */
static uint32_t mr_rights(uint32_t flags)
{
    uint32_t w0 = 0;
    uint32_t remote_write_bit = NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE & ~NF_NDK_MR_FLAG_ALLOW_LOCAL_WRITE;
    if (flags & (NF_NDK_MR_FLAG_ALLOW_LOCAL_WRITE | remote_write_bit | NF_NDK_MR_FLAG_RDMA_READ_SINK))
        w0 |= NF_MPT_W0_LOCAL_WRITE_MASK;
    if (flags & NF_NDK_MR_FLAG_ALLOW_REMOTE_READ)
        w0 |= NF_MPT_W0_REMOTE_READ_MASK;
    if (flags & remote_write_bit)
        w0 |= NF_MPT_W0_REMOTE_WRITE_MASK;
    if (flags & NF_NDK_MR_FLAG_RDMA_READ_SINK)
        w0 |= NF_MPT_W0_READ_SINK_MASK;
    return w0;
}

static FW_COLD uint32_t do_mr_register(uint32_t m, uint32_t mlen)
{
    uint32_t i = mr_of_kind(m, mlen, NF_MR_REGISTER_REQ_SIZE, NF_MR_REGISTER_REQ_TOKEN_OFF, NF_MPT_KIND_NORMAL);
    if (i == FW_NO_INDEX)
        return NF_STATUS_INVALID_PARAMETER;
    struct fw_mr *mr = &fw_mrs[i];
    uint32_t flags = mem_rd(BODY(m, NF_MR_REGISTER_REQ_FLAGS_OFF));
    uint64_t va = mem_rd(BODY(m, NF_MR_REGISTER_REQ_VA_OFF)) |
                  (uint64_t)mem_rd(BODY(m, NF_MR_REGISTER_REQ_VA_OFF + 4u)) << 32;
    uint64_t length = mem_rd(BODY(m, NF_MR_REGISTER_REQ_LENGTH_OFF)) |
                      (uint64_t)mem_rd(BODY(m, NF_MR_REGISTER_REQ_LENGTH_OFF + 4u)) << 32;
    uint32_t fbo = mem_rd(BODY(m, NF_MR_REGISTER_REQ_FBO_OFF));
    uint32_t npages = mem_rd(BODY(m, NF_MR_REGISTER_REQ_NPAGES_OFF));
    if (mr->state == NF_MPT_STATE_VALID)
        return NF_STATUS_INVALID_DEVICE_STATE; /* already registered */
    if (flags & ~(uint32_t)NF_KNOWN_FLAGS_MR_REGISTER)
        return NF_STATUS_INVALID_PARAMETER;
    if (va == 0)
        return NF_STATUS_INVALID_PARAMETER; /* zero-based virtual addresses are not supported */
    if (length == 0 || length > 0xFFFFFFFFu || va + (length - 1u) < va)
        return NF_STATUS_INVALID_PARAMETER;
    if (fbo != (uint32_t)(va & PAGE_OFFSET_MASK))
        return NF_STATUS_INVALID_PARAMETER;
    if ((uint64_t)npages != (fbo + length + PAGE_OFFSET_MASK) >> NF_ADAPTER_PAGE_SHIFT)
        return NF_STATUS_INVALID_PARAMETER; /* the page list must cover exactly the range */
    if ((uint64_t)npages * 8u > mlen - NF_MSG_HDR_SIZE - NF_MR_REGISTER_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    uint32_t st = fw_mtt_alloc(i, npages);
    if (st != NF_STATUS_SUCCESS)
        return st;
    /* The loader copies the page list straight from the RX slot into the MTT. */
    fw_load_start(BODY(m, NF_MR_REGISTER_REQ_SIZE), mr->mtt_base, npages);
    uint32_t code = NF_STATUS_WORD_CODE_GET(fw_load());
    if (code != NF_REFUSE_OK) {
        fw_mtt_free(i);
        /* a page address unaligned or outside the user region */
        return fw_eng_failed(code, NF_STATUS_INVALID_PARAMETER);
    }
    uint32_t w[7];
    w[0] = NF_MPT_W0_STATE_PUT(NF_MPT_STATE_VALID) | NF_MPT_W0_KIND_PUT(NF_MPT_KIND_NORMAL) |
           NF_MPT_W0_KEY_PUT(mr->key) | mr_rights(flags);
    w[1] = NF_MPT_W1_PD_PUT(mr->pd) | NF_MPT_W1_FBO_PUT(fbo);
    w[2] = (uint32_t)va;
    w[3] = (uint32_t)(va >> 32);
    w[4] = (uint32_t)length;
    w[5] = NF_MPT_W5_MTT_BASE_PUT(mr->mtt_base) | NF_MPT_W5_PAGE_CAP_PUT(mr->mtt_cap);
    w[6] = NF_MPT_W6_PAGES_PUT(npages);
    if (fw_mpt_write(i, w) != NF_REFUSE_OK) {
        fw_mtt_free(i);
        return NF_STATUS_INTERNAL_ERROR;
    }
    mr->state = NF_MPT_STATE_VALID;
    return NF_STATUS_SUCCESS;
}

static FW_COLD uint32_t do_mr_deregister(uint32_t m, uint32_t mlen)
{
    uint32_t i = mr_of_kind(m, mlen, NF_TOKEN_REQ_SIZE, NF_TOKEN_REQ_TOKEN_OFF, NF_MPT_KIND_NORMAL);
    if (i == FW_NO_INDEX)
        return NF_STATUS_INVALID_PARAMETER;
    struct fw_mr *mr = &fw_mrs[i];
    if (mr->state != NF_MPT_STATE_VALID)
        return NF_STATUS_INVALID_DEVICE_STATE;
    /* Invalidate first: once it returns no check grants and no DMA through it runs. */
    (void)fw_mpt_invalidate(i);
    mr->state = NF_MPT_STATE_INVALID;
    fw_mr_invalidated(i); /* its windows too */
    fw_mtt_free(i);
    uint32_t w[7] = {0};
    w[0] = NF_MPT_W0_STATE_PUT(NF_MPT_STATE_INVALID) | NF_MPT_W0_KIND_PUT(NF_MPT_KIND_NORMAL) |
           NF_MPT_W0_KEY_PUT(mr->key);
    w[1] = NF_MPT_W1_PD_PUT(mr->pd);
    (void)fw_mpt_write(i, w);
    return NF_STATUS_SUCCESS;
}

static FW_COLD uint32_t do_frmr_init(uint32_t m, uint32_t mlen)
{
    uint32_t i = mr_of_kind(m, mlen, NF_FRMR_INIT_REQ_SIZE, NF_FRMR_INIT_REQ_TOKEN_OFF, NF_MPT_KIND_FAST);
    if (i == FW_NO_INDEX)
        return NF_STATUS_INVALID_PARAMETER;
    struct fw_mr *mr = &fw_mrs[i];
    uint32_t npages = mem_rd(BODY(m, NF_FRMR_INIT_REQ_NPAGES_OFF));
    uint32_t remote = mem_rd(BODY(m, NF_FRMR_INIT_REQ_REMOTE_ACCESS_OFF));
    if (npages == 0 || remote > 1u)
        return NF_STATUS_INVALID_PARAMETER;
    if (npages > fw_cfg.max_frmr_pages)
        return NF_STATUS_IMPLEMENTATION_LIMIT;
    if (mr->state == NF_MPT_STATE_VALID)
        return NF_STATUS_INVALID_DEVICE_STATE; /* fast-registered now: invalidate first */
    /* The capacity is the latest call's count; a repeated call re-reserves the range
     * in one step (the old range counts as free) or fails changing nothing. */
    uint32_t st = fw_mtt_alloc(i, npages);
    if (st != NF_STATUS_SUCCESS)
        return st;
    mr->flags = (uint8_t)((mr->flags & ~FW_MR_REMOTE_EN) | FW_MR_FRMR_INIT | (remote ? FW_MR_REMOTE_EN : 0u));
    uint32_t w[7] = {0};
    w[0] = NF_MPT_W0_STATE_PUT(NF_MPT_STATE_INVALID) | NF_MPT_W0_KIND_PUT(NF_MPT_KIND_FAST) |
           NF_MPT_W0_KEY_PUT(mr->key) | (remote ? NF_MPT_W0_REMOTE_EN_MASK : 0u);
    w[1] = NF_MPT_W1_PD_PUT(mr->pd);
    w[5] = NF_MPT_W5_MTT_BASE_PUT(mr->mtt_base) | NF_MPT_W5_PAGE_CAP_PUT(mr->mtt_cap);
    return fw_mpt_write(i, w) == NF_REFUSE_OK ? NF_STATUS_SUCCESS : NF_STATUS_INTERNAL_ERROR;
}

static uint32_t qp_arg(uint32_t m, uint32_t mlen)
{
    if (mlen < NF_MSG_HDR_SIZE + NF_QP_REQ_SIZE)
        return FW_NO_INDEX;
    return fw_qp_lookup(mem_rd(BODY(m, NF_QP_REQ_QPN_OFF)));
}

static FW_COLD uint32_t do_qp_create(uint32_t m, uint32_t mlen, uint32_t *qpn)
{
    if (mlen < NF_MSG_HDR_SIZE + NF_QP_CREATE_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    uint32_t pd = mem_rd(BODY(m, NF_QP_CREATE_REQ_PD_OFF));
    uint32_t rq_depth = mem_rd(BODY(m, NF_QP_CREATE_REQ_RQ_DEPTH_OFF));
    uint32_t max_recv_sge = mem_rd(BODY(m, NF_QP_CREATE_REQ_MAX_RECV_SGE_OFF));
    if (pd == 0 || pd > PD_MAX || rq_depth > NF_ADAPTER_MAX_RQ_DEPTH || max_recv_sge > NF_ADAPTER_MAX_RECV_SGE)
        return NF_STATUS_INVALID_PARAMETER;
    return fw_qp_alloc(pd, rq_depth, max_recv_sge, qpn); /* the receive pool reserves rq_depth */
}

static FW_COLD uint32_t do_qp_connect(uint32_t m, uint32_t mlen)
{
    if (mlen < NF_MSG_HDR_SIZE + NF_QP_CONNECT_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    uint32_t q = fw_qp_lookup(mem_rd(BODY(m, NF_QP_CONNECT_REQ_QPN_OFF)));
    uint32_t peer = mem_rd(BODY(m, NF_QP_CONNECT_REQ_PEER_QPN_OFF));
    if (q == FW_NO_INDEX || fw_qp_lookup(peer) == FW_NO_INDEX)
        return NF_STATUS_INVALID_PARAMETER;
    if (fw_qps[q].state != FW_QP_RESET)
        return NF_STATUS_INVALID_DEVICE_STATE; /* connected already, or broken */
    fw_qps[q].peer_qpn = peer;
    fw_qps[q].state = FW_QP_CONNECTED;
    return NF_STATUS_SUCCESS;
}

/* QP_DISCONNECT (back to RESET, pending receives kept), QP_FLUSH and QP_DESTROY
 * (freed, its receive reservation back to the pool). NdkFlush: messages run in arrival
 * order, so every WR posted before the flush has executed (and reported) by now; from
 * here on the QP is in ERROR and every WR on it completes CANCELLED without touching the
 * tables, until QP_DISCONNECT or QP_DESTROY. A QP that is not connected stays as it is.
 * In every state the flush drops the pending receives and says how many (*cancelled):
 * the host completes its oldest that many CANCELLED. */
static FW_COLD uint32_t do_qp_state(uint32_t op, uint32_t m, uint32_t mlen, uint32_t *cancelled)
{
    uint32_t q = qp_arg(m, mlen);
    if (q == FW_NO_INDEX)
        return NF_STATUS_INVALID_PARAMETER;
    struct fw_qp *qp = &fw_qps[q];
    if (op == NF_OP_QP_FLUSH) {
        if (qp->state == FW_QP_CONNECTED)
            qp->state = FW_QP_ERROR;
        *cancelled = fw_rq_flush(qp);
        return NF_STATUS_SUCCESS;
    }
    fw_cm_forget(q); /* its connection too, with nothing sent */
    fw_rc_close(q);  /* off the wire: its queued requests complete CANCELLED first */
    if (op == NF_OP_QP_DESTROY) {
        fw_qp_free(q);
        return NF_STATUS_SUCCESS;
    }
    qp->state = FW_QP_RESET;
    qp->peer_qpn = 0;
    return NF_STATUS_SUCCESS;
}

static FW_COLD uint32_t do_adapter_reset(uint32_t m, uint32_t mlen)
{
    (void)m;
    (void)mlen;
    fw_tables_reset();
    fw_cm_reset();
    return NF_STATUS_SUCCESS;
}

/* NET_CONFIG (session setup: its reply carries the settings in effect) and NET_PHY (the
 * PHY's registers after its action), out of line; their replies are the same size. */
_Static_assert(NF_NET_CONFIG_REP_SIZE == NF_NET_PHY_REP_SIZE, "NET_CONFIG and NET_PHY share one reply path");
static FW_COLD void do_net_config(const struct fw_frame *f, uint32_t op, uint32_t tag, uint32_t m, uint32_t mlen)
{
    uint32_t rep[NF_NET_CONFIG_REP_SIZE / 4u] = {0};
    uint32_t st = (op == NF_OP_NET_CONFIG ? fw_net_config : fw_net_phy)(BODY(m, 0), mlen - NF_MSG_HDR_SIZE, rep);
    reply(f, op, tag, st, rep, st == NF_STATUS_SUCCESS ? NF_NET_CONFIG_REP_SIZE / 4u : 0u);
}

#if FW_NET
/* NET_NEIGH: the ARP cache, for people (ndkfpga neigh); the host-link image leaves it out
 * (its unknown-op answer is NOT_SUPPORTED, as for an adapter without a port). */
static FW_COLD void do_net_neigh(const struct fw_frame *f, uint32_t tag)
{
    uint32_t most = NF_NET_NEIGH_REP_SIZE + NF_NEIGH_MAX_ENTRIES * NF_NET_NEIGH_ENTRY_SIZE;
    uint32_t at = f->tx.reserve(NF_MSG_HDR_SIZE + most), n = 0;
    if (!at)
        return;
    uint32_t st = fw_net_neigh(at + NF_MSG_HDR_SIZE + NF_NET_NEIGH_REP_SIZE, &n);
    uint32_t len = st == NF_STATUS_SUCCESS ? NF_NET_NEIGH_REP_SIZE + n * NF_NET_NEIGH_ENTRY_SIZE : 0u;
    f->tx.trim(most - len);
    if (len) {
        mem_wr(at + NF_MSG_HDR_SIZE + NF_NET_NEIGH_REP_COUNT_OFF, n);
        mem_wr(at + NF_MSG_HDR_SIZE + NF_NET_NEIGH_REP_RSVD_OFF, 0);
    }
    put_hdr(at, NF_OP_NET_NEIGH, NF_MSG_HDR_SIZE + len, tag, st);
}
#endif

/* The requests whose reply is a status alone, by op. */
typedef uint32_t status_req(uint32_t m, uint32_t mlen);
#if FW_NET
static FW_COLD uint32_t do_qp_connect_wire(uint32_t m, uint32_t mlen)
{
    return fw_rc_connect(BODY(m, 0), mlen - NF_MSG_HDR_SIZE);
}
/* The CM's requests (fw_cm.h), on the body after the header; the host-link image has
 * no room to spare for their NOT_SUPPORTED (its unknown-op answer says the same). */
#define CM_REQ(name)                                                                                          \
    static FW_COLD uint32_t do_##name(uint32_t m, uint32_t mlen) { return fw_##name(BODY(m, 0), mlen - NF_MSG_HDR_SIZE); }
CM_REQ(cm_unlisten)
CM_REQ(cm_accept)
CM_REQ(cm_reject)
CM_REQ(cm_complete)
CM_REQ(cm_disconnect)
#undef CM_REQ
_Static_assert(NF_CM_LISTEN_REP_SIZE == 8u && NF_CM_CONNECT_REP_SIZE == 8u, "do_cm_id's replies are two words");
static FW_COLD uint32_t do_cm_id(uint32_t op, uint32_t m, uint32_t mlen, uint32_t rep[2])
{
    return op == NF_OP_CM_LISTEN ? fw_cm_listen(BODY(m, 0), mlen - NF_MSG_HDR_SIZE, rep)
                                 : fw_cm_connect(BODY(m, 0), mlen - NF_MSG_HDR_SIZE, rep);
}
#define WIRE_REQS                                                                                             \
    [NF_OP_QP_CONNECT_WIRE] = do_qp_connect_wire, [NF_OP_CM_UNLISTEN] = do_cm_unlisten,                      \
    [NF_OP_CM_ACCEPT] = do_cm_accept, [NF_OP_CM_REJECT] = do_cm_reject, [NF_OP_CM_COMPLETE] = do_cm_complete,   \
    [NF_OP_CM_DISCONNECT] = do_cm_disconnect,
#else
#define WIRE_REQS /* the host-link image has no port: NOT_SUPPORTED, as for an op it lacks */
#endif
static status_req *const status_reqs[] = {
    [NF_OP_MEM_WRITE] = do_mem_write,         [NF_OP_ADAPTER_RESET] = do_adapter_reset,
    [NF_OP_MR_DESTROY] = do_mr_destroy,       [NF_OP_MR_REGISTER] = do_mr_register,
    [NF_OP_MR_DEREGISTER] = do_mr_deregister, [NF_OP_FRMR_INIT] = do_frmr_init,
    [NF_OP_QP_CONNECT] = do_qp_connect,       WIRE_REQS
};

/* INFO and STATS: a reply whose payload is a struct of the adapter's state. */
static inline void put_state(const struct fw_frame *f, uint32_t op, uint32_t tag,
                                                            uint32_t size, void (*put)(uint32_t at))
{
    uint32_t at = f->tx.reserve(NF_MSG_HDR_SIZE + size);
    if (at) {
        put(at + NF_MSG_HDR_SIZE);
        put_hdr(at, op, NF_MSG_HDR_SIZE + size, tag, NF_STATUS_SUCCESS);
    }
}

static void handle(const struct fw_frame *f, uint32_t op, uint32_t tag, uint32_t m, uint32_t mlen)
{
    uint32_t rep[2] = {0, 0};
    uint32_t st, n = 0;
    if (op - NF_OP_WR_FAST_REGISTER <= NF_OP_WR_BIND - NF_OP_WR_FAST_REGISTER) {
        fw_wr_process(f, m, mlen, op); /* counts its own */
        return;
    }
    if (fw_stats.faults && op != NF_OP_PING && op != NF_OP_INFO && op != NF_OP_STATS) {
        /* faulted: only the requests that report the adapter's state still run */
        reply(f, op, tag, NF_STATUS_DEVICE_HARDWARE_ERROR, 0, 0);
        return;
    }
    count_op(op);
    switch (op) {
    case NF_OP_PING:
        do_ping(f, tag, m, mlen);
        return;
    case NF_OP_INFO:
        put_state(f, op, tag, NF_INFO_SIZE, fw_state_put_info);
        return;
    case NF_OP_STATS:
        put_state(f, op, tag, NF_STATS_SIZE, fw_state_put_stats);
        return;
    case NF_OP_MEM_READ:
        do_mem_read(f, tag, m, mlen);
        return;
#if FW_NET
    case NF_OP_NET_PHY:
#endif
    case NF_OP_NET_CONFIG:
        do_net_config(f, op, tag, m, mlen);
        return;
#if FW_NET
    case NF_OP_NET_NEIGH:
        do_net_neigh(f, tag);
        return;
#endif
    case NF_OP_MR_CREATE:
    case NF_OP_MW_CREATE:
        st = do_mr_create(op, m, mlen, &rep[NF_MR_CREATE_REP_TOKEN_OFF / 4u]);
        n = NF_MR_CREATE_REP_SIZE / 4u;
        break;
    case NF_OP_QP_DISCONNECT:
    case NF_OP_QP_DESTROY:
        st = do_qp_state(op, m, mlen, &rep[0]);
        break;
    case NF_OP_QP_FLUSH:
        st = do_qp_state(op, m, mlen, &rep[NF_QP_FLUSH_REP_CANCELLED_OFF / 4u]);
        n = NF_QP_FLUSH_REP_SIZE / 4u;
        break;
    case NF_OP_QP_CREATE:
        st = do_qp_create(m, mlen, &rep[NF_QP_CREATE_REP_QPN_OFF / 4u]);
        n = NF_QP_CREATE_REP_SIZE / 4u;
        break;
#if FW_NET
    case NF_OP_CM_LISTEN:
    case NF_OP_CM_CONNECT:
        st = do_cm_id(op, m, mlen, rep);
        n = 2u;
        break;
#endif
    case NF_OP_FAULT_TEST:
        /* The target's trap handler takes over and runs this frame again, faulted. */
        hal_illegal_instruction();
        st = NF_STATUS_DEVICE_HARDWARE_ERROR;
        break;
    default:
        st = op < sizeof(status_reqs) / sizeof(status_reqs[0]) && status_reqs[op] ? status_reqs[op](m, mlen)
                                                                                  : NF_STATUS_NOT_SUPPORTED;
        break;
    }
    reply(f, op, tag, st, rep, st == NF_STATUS_SUCCESS ? n : 0u);
}

/* Every message of a payload from offset from, in order. A message whose reply cannot
 * be queued now is not started: the walk returns its offset. */
static uint32_t walk(struct fw_frame *f, uint32_t from)
{
    for (uint32_t off = from; off + NF_MSG_HDR_SIZE <= f->len;) {
        uint32_t m = f->addr + off, w0;
        uint32_t mlen = msg_at(f, off, &w0);
        uint32_t op = msg_op(w0);
        uint32_t tag = mem_rd(m + NF_MSG_HDR_TAG_OFF);
        uint32_t need = mlen ? reply_bytes(op, m, mlen) : NF_MSG_HDR_SIZE;
        if (f->overflow == 1 && !f->tx.room(need)) {
            /* The rest of an overflowing frame: the last TX slot is theirs. */
            f->overflow = 2;
            f->tx.spare();
        }
        if (f->overflow == 2 && mlen && need > mlen) {
            /* Its reply would be larger than its request: answered short, not run, so
             * the rest of the frame fits the slot kept for it. */
            count_op(op);
            fw_stats.wr_short += op - NF_OP_WR_FAST_REGISTER <= NF_OP_WR_BIND - NF_OP_WR_FAST_REGISTER;
            if (!f->tx.room(NF_MSG_HDR_SIZE))
                return off;
            reply(f, op & ~(uint32_t)NF_OP_REPLY, tag, NF_STATUS_INSUFFICIENT_RESOURCES, 0, 0);
            off += mlen;
            continue;
        }
        /* Never drop a reply: a message whose reply cannot be queued now is not started;
         * the link holds the frame there (no more messages are taken from the link) until
         * TX room frees. fw_msg_fits lets a frame start only when all of it fits, so this
         * is the rule every reply obeys, not a path the link takes. */
        if (!f->tx.room(need))
            return off;
        if (!mlen) {
            /* The next message cannot be found: answer this one, drop the rest. */
            reply(f, op & ~(uint32_t)NF_OP_REPLY, tag, NF_STATUS_INVALID_PARAMETER, 0, 0);
            return f->len;
        }
        handle(f, op, tag, m, mlen);
        off += mlen;
    }
    return f->len;
}

/* Out of line (its switch needs many registers, which the one-work-request fast path
 * in fw_msg_process does not pay for); f->done as fw_msg_process sets it. */
static __attribute__((noinline)) void msg_walk(struct fw_frame *f, uint32_t from)
{
    f->done = walk(f, from);
}

/* The work-request ops are consecutive in the layout: one range check names them. */
_Static_assert(NF_OP_WR_INVALIDATE == NF_OP_WR_FAST_REGISTER + 1 && NF_OP_WR_READ == NF_OP_WR_FAST_REGISTER + 2 &&
                   NF_OP_WR_WRITE == NF_OP_WR_FAST_REGISTER + 3 && NF_OP_WR_SEND == NF_OP_WR_FAST_REGISTER + 4 &&
                   NF_OP_WR_SEND_INVALIDATE == NF_OP_WR_FAST_REGISTER + 5 &&
                   NF_OP_WR_RECEIVE == NF_OP_WR_FAST_REGISTER + 6 && NF_OP_WR_BIND == NF_OP_WR_FAST_REGISTER + 7,
               "work-request ops are consecutive");

/* A frame holding one status query (INFO or STATS), as a host polling the adapter's
 * state between work requests sends it: answered as the walk would answer it, without
 * the walk's general checks and code. Its
 * reply has room (fw_msg_fits); if it had not, the walk holds the frame as for any
 * other message. */
static FW_HOT __attribute__((noinline)) void query(struct fw_frame *f, uint32_t op)
{
    uint32_t size = NF_STATS_SIZE, stat = NF_STAT_OP_STATS;
    void (*put)(uint32_t at) = fw_state_put_stats;
    if (op == NF_OP_INFO) {
        size = NF_INFO_SIZE;
        stat = NF_STAT_OP_INFO;
        put = fw_state_put_info;
    }
    if (!f->tx.room(NF_MSG_HDR_SIZE + size)) {
        msg_walk(f, 0);
        return;
    }
    fw_stats.ops[stat]++;
    put_state(f, op, mem_rd(f->addr + NF_MSG_HDR_TAG_OFF), size, put);
}

FW_HOT void fw_msg_process(struct fw_frame *f, uint32_t w0)
{
    /* Fast path: the frame holds exactly one well-formed work request (the usual case:
     * a work request with its page list). Its CQE has room: the link delivers a frame
     * only when all its replies fit (fw_msg_fits), and f->done is f->len already. The same
     * as the walk would do for it. */
    uint32_t len = f->len;
    if (FW_LIKELY(len >= NF_MSG_HDR_SIZE && msg_len(w0) == len && !(len % MSG_ALIGN))) {
        uint32_t op = msg_op(w0);
        if (FW_LIKELY(op - NF_OP_WR_FAST_REGISTER <= NF_OP_WR_BIND - NF_OP_WR_FAST_REGISTER)) {
            fw_wr_process(f, f->addr, len, op);
            return;
        }
        if (op == NF_OP_INFO || op == NF_OP_STATS) {
            query(f, op);
            return;
        }
    }
    msg_walk(f, 0);
}

void fw_msg_resume(struct fw_frame *f, uint32_t from)
{
    msg_walk(f, from);
}
