/* SPDX-License-Identifier: Apache-2.0 */
/* Connection setup on the wire (fw_cm.c): IB CM MADs (REQ, REP, RTU, REJ, DREQ, DREP)
 * as UD sends to and from QP1, with the RDMA-CM service ID and cma_hdr, behind the link
 * ops CM_LISTEN .. CM_DISCONNECT; outcomes go to the host as CM_EVENT messages.
 * Layer: called by fw_main (init, the idle loop) and fw_msg (the ops); calls fw_rc
 * (QPs on the wire, UD sends, the transport's turn), fw_net, fw_tables and fw_state. */
#ifndef FW_CM_H
#define FW_CM_H

#include <stdint.h>

#include "fw_frame.h"
#include "fw_net.h"

#if FW_NET
/* Boot: the transport's init (fw_rc_init), no listener, no connection. */
void fw_cm_init(const struct fw_reply_ops *events);
/* ADAPTER_RESET: every listener and connection forgotten, nothing sent. */
void fw_cm_reset(void);
/* One turn: the transport's (fw_rc_poll, which hands MADs here), then the CM's timers
 * and the MADs waiting for a TX slot. Nonzero when it did anything. */
int fw_cm_poll(void);
/* QP q is destroyed or reset by the host: its connection is forgotten, nothing sent. */
void fw_cm_forget(uint32_t q);
/* The ops (body: the request after its MSG_HDR, blen bytes): one ordered validation,
 * nothing changed on a refusal. listen and connect fill their reply's two words. */
uint32_t fw_cm_listen(uint32_t body, uint32_t blen, uint32_t rep[2]);
uint32_t fw_cm_connect(uint32_t body, uint32_t blen, uint32_t rep[2]);
uint32_t fw_cm_unlisten(uint32_t body, uint32_t blen);
uint32_t fw_cm_accept(uint32_t body, uint32_t blen);
uint32_t fw_cm_reject(uint32_t body, uint32_t blen);
uint32_t fw_cm_complete(uint32_t body, uint32_t blen);
uint32_t fw_cm_disconnect(uint32_t body, uint32_t blen);
#else
static inline void fw_cm_init(const struct fw_reply_ops *events) { (void)events; }
static inline int fw_cm_poll(void) { return 0; }
static inline void fw_cm_reset(void) {}
static inline void fw_cm_forget(uint32_t q) { (void)q; }
static inline uint32_t fw_cm_listen(uint32_t body, uint32_t blen, uint32_t rep[2])
{
    return (void)body, (void)blen, (void)rep, NF_STATUS_NOT_SUPPORTED;
}
static inline uint32_t fw_cm_connect(uint32_t body, uint32_t blen, uint32_t rep[2])
{
    return (void)body, (void)blen, (void)rep, NF_STATUS_NOT_SUPPORTED;
}
#define FW_CM_STUB(name)                                                                                      \
    static inline uint32_t name(uint32_t body, uint32_t blen) { return (void)body, (void)blen, NF_STATUS_NOT_SUPPORTED; }
FW_CM_STUB(fw_cm_unlisten)
FW_CM_STUB(fw_cm_accept)
FW_CM_STUB(fw_cm_reject)
FW_CM_STUB(fw_cm_complete)
FW_CM_STUB(fw_cm_disconnect)
#undef FW_CM_STUB
#endif
#endif
