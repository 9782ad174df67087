/* SPDX-License-Identifier: Apache-2.0 */
/* The RoCEv2 reliable-connection transport (fw_rc.c): work requests on a QP connected to
 * another adapter travel as RC packets through the network port; the peer's packets
 * come back through it. Payloads move by the engine's DMA between the port's slots and
 * registered memory, checked by the key check; the firmware keeps PSNs, timers, retries.
 * Layer: called by fw_main (init, the idle loop), fw_msg (connect) and fw_wr (post);
 * calls fw_net, fw_wr_common, fw_tables and fw_state (fw_rc.c -> fw_rc_tx.c). */
#ifndef FW_RC_H
#define FW_RC_H

#include <stdint.h>

#include "fw_frame.h"
#include "fw_net.h"
#include "fw_tables.h"

struct wr_result;

/* Where a packet goes: IPv4 word (first byte in [7:0]), MAC as NET.MAC_LO/MAC_HI, QPN. */
struct fw_rc_dest {
    uint32_t ip, mac_lo, mac_hi, qpn;
};

/* A CQE's cqe_at when the completion follows later, from the wire (an ACK, a response
 * or a failure): never an address, CQEs are 8-byte aligned. */
#define FW_RC_CQE_LATER 1u

#if FW_NET
/* Boot: no QP on the wire; completions go out through the link's cursor events. */
void fw_rc_init(const struct fw_reply_ops *events);
/* One turn: the port's RoCE frames (ARP and ICMP answered on the way), the timers, and
 * the packets each QP may send now. Nonzero when it did any of that. */
int fw_rc_poll(void);
/* The longest idle sleep the transport allows now: short while a QP waits for a TX
 * slot (the port does not wake the CPU when one frees), else the port's timer tick. */
uint32_t fw_rc_idle_max(void);
/* QP_CONNECT_WIRE (body: its request, blen bytes): one ordered validation, nothing
 * changed on a refusal; PENDING while the peer's MAC is resolved (ask again). */
uint32_t fw_rc_connect(uint32_t body, uint32_t blen);
/* WR_READ, WR_WRITE, WR_SEND or WR_SEND_INVALIDATE (message m, mlen bytes, of frame f)
 * on a QP connected over the wire: queued and sent; r->cqe_at = FW_RC_CQE_LATER on
 * success. Its completion sets INFO's last_wr_* from f's arrival, as a local one's does. */
void fw_rc_post(const struct fw_frame *f, struct fw_qp *qp, uint32_t op, uint32_t wr_id, uint32_t flags, uint32_t m,
                uint32_t mlen, struct wr_result *r);
/* The QP leaves the wire; its queued requests are forgotten (a connection that failed
 * before it was established: the host posted none). */
void fw_rc_drop(uint32_t q);
/* QP_DISCONNECT, QP_DESTROY: fw_rc_drop, after each queued request completed once,
 * CANCELLED (or with the failure found while sending it). The caller made link room for
 * fw_rc_queued(q) CQEs: a request without its CQE would leave the host waiting. */
void fw_rc_close(uint32_t q);
/* The requests queued on QP q (FW_NO_INDEX: none) that fw_rc_close completes. */
uint32_t fw_rc_queued(uint32_t q);
/* QP q (in RESET) joins the wire, connected to QP d->qpn at d: first PSN sent sq_psn,
 * first expected rq_psn (24 bits each), path MTU mtu (PATH_MTU, 1..NET.MAX_PATH_MTU),
 * at most ord READs out at once (the initiator depth agreed, capped at the responder's);
 * the caller validated every argument. */
void fw_rc_wire(uint32_t q, const struct fw_rc_dest *d, uint32_t sq_psn, uint32_t rq_psn, uint32_t mtu,
                uint32_t ord);
/* A disconnect: QP q takes nothing more from the wire and sends nothing more; a
 * connected QP enters ERROR, so its queued requests complete CANCELLED (fw_rc_poll, as
 * the link has room) and later ones too. The pending receives dropped: how many. */
uint32_t fw_rc_leave(uint32_t q);
/* A UD SEND ONLY from QP1 (DETH: the GSI Q_Key) to d, len payload bytes from data (a
 * multiple of 4); 0 when no TX slot is free. */
int fw_rc_send_ud(const struct fw_rc_dest *d, const uint8_t *data, uint32_t len);
/* Frames to QP1 (UD SEND ONLY with the GSI Q_Key) go to rx during fw_rc_poll: the
 * sender (IPv4, MAC, DETH source QP) and the payload's adapter address and bytes. A
 * function pointer: how the CM above takes its MADs without a call upward. */
void fw_rc_set_gsi(void (*rx)(const struct fw_rc_dest *from, uint32_t data, uint32_t len));
#else
static inline void fw_rc_init(const struct fw_reply_ops *events) { (void)events; }
static inline int fw_rc_poll(void) { return 0; }
static inline uint32_t fw_rc_idle_max(void) { return 0; }
static inline uint32_t fw_rc_connect(uint32_t body, uint32_t blen)
{
    return (void)body, (void)blen, NF_STATUS_NOT_SUPPORTED;
}
static inline void fw_rc_post(const struct fw_frame *f, struct fw_qp *qp, uint32_t op, uint32_t wr_id,
                              uint32_t flags, uint32_t m, uint32_t mlen, struct wr_result *r)
{
    (void)f, (void)qp, (void)op, (void)wr_id, (void)flags, (void)m, (void)mlen, (void)r;
}
static inline void fw_rc_drop(uint32_t q) { (void)q; }
static inline void fw_rc_close(uint32_t q) { (void)q; }
static inline uint32_t fw_rc_queued(uint32_t q) { return (void)q, 0u; }
#endif
#endif
