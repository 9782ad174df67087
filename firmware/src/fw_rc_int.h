/* SPDX-License-Identifier: Apache-2.0 */
/* What the two files of the RC transport share: fw_rc.c (receiving, completions, timers,
 * the API of fw_rc.h) and fw_rc_tx.c (building and sending packets, the DMA between
 * slots and SGE lists). Calls go one way: fw_rc -> fw_rc_tx. */
#ifndef FW_RC_INT_H
#define FW_RC_INT_H

#include <stdint.h>

#include "fw_net.h"
#include "fw_rc.h"
#include "fw_state.h"
#include "fw_tables.h"

/* Frame byte offsets: Ethernet, IPv4 (no options), UDP, BTH, then the extension headers
 * (proto/wire.toml); slot byte = frame byte + NF_NET_FRAME_OFF, so the BTH and payloads
 * are word aligned in the slot. */
#define F_IP NF_ETH_SIZE
#define F_UDP (F_IP + NF_IPV4_SIZE)
#define F_BTH (F_UDP + NF_UDP_SIZE)
#define F_EXT (F_BTH + NF_BTH_SIZE)
#define IP_TTL 64u
#define UDP_SPORT_BASE 0xC000u /* the source port is flow entropy: constant per QP */
/* A QP's path MTU (PATH_MTU, per QP): payload bytes per packet = 1 << MTU_SHIFT(enum).
 * NET.MAX_PATH_MTU is the largest whose full packet fits a frame: the next does not. */
#define MTU_SHIFT(e) ((e) + 7u)
#define MTU_MAX (1u << MTU_SHIFT(NF_NET_MAX_PATH_MTU))
_Static_assert(F_EXT + NF_RETH_SIZE + MTU_MAX + NF_ROCE_ICRC_BYTES <= NF_NET_MAX_FRAME &&
                   F_EXT + NF_RETH_SIZE + 2u * MTU_MAX + NF_ROCE_ICRC_BYTES > NF_NET_MAX_FRAME,
               "NET.MAX_PATH_MTU is the largest path MTU whose packets fit a frame");
_Static_assert(MTU_SHIFT(NF_PATH_MTU_256) == 8u && NF_NET_MAX_PATH_MTU >= NF_PATH_MTU_256, "PATH_MTU 1 is 256 bytes");
_Static_assert(((NF_NET_FRAME_OFF + F_BTH) & 3u) == 0u, "the BTH is word aligned in its slot");
_Static_assert(((NF_NET_FRAME_OFF + F_EXT + NF_DETH_SIZE) & 3u) == 0u, "a UD payload is word aligned in its slot");

/* Queue sizes: requests a QP may have outstanding, READs a responder answers at once. */
#define SQ_DEPTH 16u
#define RD_DEPTH 4u
#define RETRY_MAX 7u      /* timeouts and sequence NAKs in a row, then IO_TIMEOUT */
#define RNR_RETRY_MAX 7u  /* RNR NAKs in a row, then IO_TIMEOUT */
/* waits: RNR_WAIT, an RNR NAK came and nothing is sent until the next timer pass, so a
 * receiver that has not posted its receive yet gets a timer pass per retry; READ_ASKED,
 * a gap in READ responses made the requester ask again, once until the missing one
 * comes (the others of the window are gaps too). */
#define RNR_WAIT 1u
#define READ_ASKED 2u
#define ACK_TIMEOUT_TICKS 2u /* timer passes (fw_net_tick) without progress */
/* Flow: a requester has at most WINDOW packets unacknowledged, asks an ACK every
 * ACKREQ_EVERY packets, and splits a READ into requests of at most WINDOW responses,
 * so no burst outruns the peer's RX slots. */
#define WINDOW 8u
#define ACKREQ_EVERY 4u
_Static_assert((ACKREQ_EVERY & (ACKREQ_EVERY - 1u)) == 0u && (WINDOW & (WINDOW - 1u)) == 0u && ACKREQ_EVERY < WINDOW,
               "powers of two, an ACK asked within each window");
#define SPIN_CYCLES 512u  /* the idle sleep while a QP waits for a TX slot */

struct rc_sgl {
    uint64_t addr[NF_ADAPTER_MAX_SGE];
    uint32_t len[NF_ADAPTER_MAX_SGE], token[NF_ADAPTER_MAX_SGE];
    uint32_t n, pd, access;
};
_Static_assert(NF_ADAPTER_MAX_RECV_SGE <= NF_ADAPTER_MAX_SGE, "a receive's SGEs fit an SGE list");

/* A queued work request: PSNs psn .. psn + npkts - 1 (a READ's responses use them). */
struct rc_wqe {
    uint32_t op, wr_id, flags, psn, npkts, total;
    uint32_t remote_token, inv_token, done; /* done: READ response packets placed */
    uint32_t fail, refuse;                  /* a local failure found while sending */
    uint32_t stamp, eng_start;              /* its frame's RX stamp, fw_eng_wait_cycles() then (INFO) */
    uint64_t remote_va;
    struct rc_sgl sgl;
};

/* A READ the responder answers: response packets sent so far of npkts. */
struct rc_read {
    uint32_t psn, npkts, sent, len, token;
    uint64_t va;
};

struct rc_qp {
    uint32_t peer_ip, mac_lo, mac_hi, peer_qpn;
    uint16_t mtu_shift; /* the path MTU, both ends the same: 1 << mtu_shift payload bytes */
    uint16_t rd_max;    /* READs this requester has out at once: the initiator depth agreed */
    /* requester: next new PSN; queued requests from head, the first `sent` of them sent
     * whole and the next one up to send_pkt packets */
    uint32_t sq_psn, head, count, sent, send_pkt;
    uint32_t ack_psn; /* requester: the oldest PSN not acknowledged yet */
    uint32_t retries, ticks;
    uint16_t rnr_retries, waits;
    /* responder: expected PSN, message count, the message being received */
    uint32_t rq_psn, msn, nak_sent;
    uint32_t recv_off, recv_in, recv_bad;
    uint64_t w_va;
    uint32_t w_token, w_left, w_in;
    uint32_t ctl_syn, ctl_psn, ctl_owed; /* an ACK or NAK to send */
    uint32_t fatal_syn, fatal_psn;       /* the NAK that broke the QP (refuse), or 0 */
    uint32_t rd_head, rd_count;
    struct rc_read rd[RD_DEPTH];
    struct rc_wqe wq[SQ_DEPTH];
};

/* Each QP's transport state, by QP index (fw_rc_tx.c). */
extern struct rc_qp rc_qps[FW_QP_CAP];

#define CQE_MSG (NF_MSG_HDR_SIZE + NF_CQE_SIZE) /* a CQE with its message header */

static inline uint32_t psn_add(uint32_t a, uint32_t n) { return (a + n) & NF_BTH_PSN_MASK; }
/* a - b as a signed 24-bit distance. */
static inline int32_t psn_diff(uint32_t a, uint32_t b) { return (int32_t)((a - b) << 8) >> 8; }
static inline uint32_t qpn_of(uint32_t q) { return (uint32_t)fw_qps[q].gen << FW_QPN_GEN_SHIFT | q; }
static inline uint32_t be32(uint32_t v) { return v << 24 | (v & 0xFF00u) << 8 | (v >> 8 & 0xFF00u) | v >> 24; }
static inline uint32_t min32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* fw_rc_tx.c, called by fw_rc.c. */
/* An SGE list's bytes [off, off + n) to (to_list 0) or from (1) adapter address sys. */
uint32_t sgl_dma(const struct rc_sgl *l, uint32_t off, uint32_t sys, uint32_t n, int to_list);
/* A remote range (R_Key token, va) to (to_remote 1) or from adapter address sys. */
uint32_t remote_dma(uint32_t pd, uint32_t token, uint64_t va, uint32_t access, uint32_t sys, uint32_t n,
                    int to_remote);
/* Send what QP q may send now; nonzero when something waits for a TX slot. */
int pump(uint32_t q);
/* The responder refuses the request at PSN psn with NAK syn and breaks QP q; the NAK
 * goes out with the next pump, and again for each copy of that request. */
void refuse(uint32_t q, uint32_t syn, uint32_t psn);
/* Owe an ACK or NAK on QP q; sent now if a TX slot is free. */
void reply_ctl(uint32_t q, uint32_t syn, uint32_t psn);

#endif
