/* SPDX-License-Identifier: Apache-2.0 */
/* IB CM over RoCEv2 (fw_cm.h): each MAD is a 256-byte UD send between QP1s.
 * Active side: CM_CONNECT -> (ARP) -> REQ ... REP -> CM_EVENT REPLY, its QP on the wire
 * -> CM_COMPLETE -> RTU. Passive side: REQ to a listened port -> CM_EVENT REQUEST ->
 * CM_ACCEPT -> REP, its QP on the wire -> RTU -> CM_EVENT ESTABLISHED (or CM_REJECT ->
 * REJ). CM_DISCONNECT -> DREQ ... DREP -> the QP off the wire, CM_EVENT DISCONNECTED.
 * The passive QP joins the wire when it sends its REP, not at the RTU: the active side
 * may send as soon as it sent its RTU, and a lost RTU must not cost those packets.
 * Wire facts: the project's RoCE facts sheet, section 7 (offsets, sizes, PSN swap). */
#include "fw_cm.h"
#include "fw_rc.h"
#include "fw_state.h"
#include "fw_tables.h"
#include "hal.h"

#define CM_CONNS 8u
#define CM_LISTENS 4u
#define D(k) (NF_MAD_HDR_SIZE + (k)) /* a CM field's byte in the MAD: after the MAD header */
#define TIMEOUT_TICKS 4u  /* timer passes (fw_net_tick) a REQ, REP or DREQ waits for its answer */
#define PDATA_ROOM(n) (((n) + 7u) & ~7u)
#define EV_MAX (NF_MSG_HDR_SIZE + NF_CM_EVENT_SIZE + PDATA_ROOM(NF_CM_REP_PDATA))
#define CM_TIMEOUT 20u /* 4.096 us * 2^20, as rdma_cm sends */
#define ACK_TIMEOUT 14u
#define RETRY 7u

/* REQ consumer private data: after the cma_hdr at the start of the REQ's private data. */
#define REQ_CMA D(NF_CM_REQ_PRIVATE_DATA_OFF)
#define REQ_PDATA (REQ_CMA + NF_CMA_HDR_SIZE)
_Static_assert(REQ_PDATA + NF_CM_REQ_PDATA == NF_MAD_BYTES &&
                   D(NF_CM_REP_PRIVATE_DATA_OFF) + NF_CM_REP_PDATA == NF_MAD_BYTES &&
                   D(NF_CM_REJ_PRIVATE_DATA_OFF) + NF_CM_REJ_PDATA == NF_MAD_BYTES &&
                   NF_MAD_HDR_SIZE + NF_CM_REQ_SIZE == NF_MAD_BYTES,
               "each message's private data ends the MAD");
/* The first word of every CM MAD: base version, class, class version, method Send. */
#define CM_SEND_WORD                                                                                             \
    (NF_MAD_BASE_VERSION << 24 | NF_MAD_CLASS_CM << 16 | NF_MAD_CLASS_VERSION << 8 | NF_MAD_METHOD_SEND)
_Static_assert(NF_MAD_HDR_BASE_VERSION_OFF == 0u && NF_MAD_HDR_MGMT_CLASS_OFF == 1u &&
                   NF_MAD_HDR_CLASS_VERSION_OFF == 2u && NF_MAD_HDR_METHOD_OFF == 3u,
               "the MAD header's first word holds its versions, class and method");
#define TID_HI NF_MAD_HDR_TID_OFF
#define TID_LO (NF_MAD_HDR_TID_OFF + 4u)

enum cm_state {
    ST_FREE,
    ST_RESOLVING,   /* active: the peer's MAC being resolved, the REQ built */
    ST_REQ_SENT,    /* active: waiting for REP or REJ */
    ST_REP_RCVD,    /* active: QP on the wire, waiting for CM_COMPLETE */
    ST_REQ_RCVD,    /* passive: waiting for CM_ACCEPT or CM_REJECT */
    ST_REP_SENT,    /* passive: QP on the wire, waiting for RTU */
    ST_ESTABLISHED,
    ST_DREQ_SENT,   /* CM_DISCONNECT: waiting for DREP */
    ST_PEER_GONE,   /* the peer's DREQ came: waiting for CM_DISCONNECT */
    ST_CLOSING,     /* CM_DISCONNECT after the peer's DREQ: the event waits for link room */
    ST_TIMEWAIT,    /* CM_REJECT: its REJ answers the peer's repeats until they must have stopped */
};
#define TIMEWAIT_TICKS (TIMEOUT_TICKS * (NF_CM_RETRIES + 1u))

struct cm_conn {
    uint8_t state, gen, retries, ticks, owed, active;
    uint8_t peer_res, peer_depth;
    uint8_t mtu; /* the path MTU (PATH_MTU): ours, then the smaller of both sides' */
    uint16_t local_port, peer_port;
    uint32_t q, listen_id, remote_id, peer_qpn, peer_psn, my_psn, tid_hi, tid_lo;
    struct fw_rc_dest peer; /* qpn: the peer's QP for the transport once known */
    uint8_t mad[NF_MAD_BYTES]; /* the last MAD sent: sent again on timeout or to a duplicate */
};
struct cm_listen {
    uint32_t ip;
    uint16_t port;
    uint8_t used, gen;
};

/* Large and cold, outside the data cache's stretch, as the transport's (fw_rc_tx.c). */
static struct cm_conn conns[CM_CONNS] __attribute__((section(".noinit.cm")));
static uint8_t scratch[NF_MAD_BYTES] __attribute__((section(".noinit.cm"), aligned(4))); /* answers */
static uint8_t rx_buf[NF_MAD_BYTES] __attribute__((section(".noinit.cm"), aligned(4)));  /* the MAD taken */
static struct cm_listen listens[CM_LISTENS];
static const struct fw_reply_ops *events;
static uint32_t tick_at, next_port;

static void put8(uint8_t *m, uint32_t k, uint32_t v) { m[k] = (uint8_t)v; }
static void put16(uint8_t *m, uint32_t k, uint32_t v) { put8(m, k, v >> 8), put8(m, k + 1u, v); }
static void put24(uint8_t *m, uint32_t k, uint32_t v) { put8(m, k, v >> 16), put16(m, k + 1u, v); }
static void put32(uint8_t *m, uint32_t k, uint32_t v) { put16(m, k, v >> 16), put16(m, k + 2u, v); }
static uint32_t get16(const uint8_t *m, uint32_t k) { return (uint32_t)m[k] << 8 | m[k + 1u]; }
static uint32_t get24(const uint8_t *m, uint32_t k) { return (uint32_t)m[k] << 16 | get16(m, k + 1u); }
static uint32_t get32(const uint8_t *m, uint32_t k) { return get16(m, k) << 16 | get16(m, k + 2u); }
static void put_ip(uint8_t *m, uint32_t k, uint32_t ip) /* an IPv4 word's wire bytes */
{
    for (uint32_t i = 0; i < 4u; i++)
        put8(m, k + i, ip >> (8u * i));
}
/* A GID: the IPv4-mapped IPv6 address ::ffff:a.b.c.d. */
static void put_gid(uint8_t *m, uint32_t k, uint32_t ip)
{
    put16(m, k + NF_ROCE_V4MAPPED_MARK_OFF, 0xFFFFu);
    put_ip(m, k + NF_ROCE_V4MAPPED_ADDR_OFF, ip);
}
/* This adapter's CA GUID: the EUI-64 of its MAC. */
static void put_guid(uint8_t *m, uint32_t k)
{
    uint32_t self[3];
    fw_net_self(self);
    put_ip(m, k, (self[1] & 0xFFFFFFu) ^ 0x02u);
    put16(m, k + 3u, 0xFFFEu);
    put8(m, k + 5u, self[1] >> 24);
    put16(m, k + 6u, (self[2] & 0xFFu) << 8 | (self[2] >> 8 & 0xFFu));
}
/* n bytes of adapter memory at src (word aligned) into m from byte k. */
static void copy_in(uint8_t *m, uint32_t k, uint32_t src, uint32_t n)
{
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; i++) {
        if ((i & 3u) == 0u)
            w = mem_rd(src + i);
        m[k + i] = (uint8_t)(w >> (8u * (i & 3u)));
    }
}
static void mad_hdr(uint8_t *m, uint32_t attr, uint32_t tid_hi, uint32_t tid_lo)
{
    for (uint32_t i = 0; i < NF_MAD_BYTES; i++)
        m[i] = 0;
    put32(m, NF_MAD_HDR_BASE_VERSION_OFF, CM_SEND_WORD);
    put32(m, TID_HI, tid_hi);
    put32(m, TID_LO, tid_lo);
    put16(m, NF_MAD_HDR_ATTR_ID_OFF, attr);
}

static uint32_t self_ip(void)
{
    uint32_t self[3];
    fw_net_self(self);
    return self[0];
}
static uint32_t qpn_of_index(uint32_t q) { return (uint32_t)fw_qps[q].gen << FW_QPN_GEN_SHIFT | q; }
static uint32_t conn_id(const struct cm_conn *c) { return (uint32_t)c->gen << 8 | (uint32_t)(c - conns); }
/* The connection id names, in any state but FREE (a MAD's) or also not in TIMEWAIT (the
 * host's: a rejected connection is gone for it). */
static struct cm_conn *conn_lookup(uint32_t id, int timewait)
{
    uint32_t i = id & 0xFFu;
    if (i >= CM_CONNS || id >> 16 || conns[i].state == ST_FREE || conns[i].gen != id >> 8 ||
        (!timewait && conns[i].state == ST_TIMEWAIT))
        return 0;
    return &conns[i];
}
static struct cm_conn *conn_by_id(uint32_t id) { return conn_lookup(id, 0); }
static struct cm_conn *conn_of_qp(uint32_t q)
{
    for (uint32_t i = 0; i < CM_CONNS; i++)
        if (conns[i].state != ST_FREE && conns[i].q == q)
            return &conns[i];
    return 0;
}
static struct cm_conn *conn_new(void)
{
    for (uint32_t i = 0; i < CM_CONNS; i++) {
        struct cm_conn *c = &conns[i];
        if (c->state == ST_FREE) {
            uint8_t gen = (uint8_t)(c->gen + 1u) ? (uint8_t)(c->gen + 1u) : 1u;
            *c = (struct cm_conn){.gen = gen, .q = FW_NO_INDEX};
            return c;
        }
    }
    return 0;
}
static int port_used(uint32_t port)
{
    for (uint32_t i = 0; i < CM_LISTENS; i++)
        if (listens[i].used && listens[i].port == port)
            return 1;
    for (uint32_t i = 0; i < CM_CONNS; i++)
        if (conns[i].state != ST_FREE && conns[i].local_port == port)
            return 1;
    return 0;
}
/* The next free ephemeral port, 0 when none: fewer ports are in use than tries. */
static uint32_t ephemeral(void)
{
    for (uint32_t i = 0; i <= CM_LISTENS + CM_CONNS; i++) {
        uint32_t p = NF_CM_EPHEMERAL + next_port++ % (0x10000u - NF_CM_EPHEMERAL);
        if (!port_used(p))
            return p;
    }
    return 0;
}

/* ---- the host's side: events ---- */

/* A CM_EVENT for c (callers made sure of room: EV_MAX). */
static void emit(const struct cm_conn *c, uint32_t type, uint32_t status, uint32_t reason, uint32_t cancelled,
                 const uint8_t *pdata, uint32_t plen)
{
    uint32_t len = NF_MSG_HDR_SIZE + NF_CM_EVENT_SIZE + PDATA_ROOM(plen);
    uint32_t at = events->reserve_zeroed(len);
    if (!at) {
        fw_stats.tx_overflow++;
        return;
    }
    fw_reply_hdr(at, NF_OP_CM_EVENT, len, 0, NF_STATUS_SUCCESS);
    hal_win w = mem_win(at + NF_MSG_HDR_SIZE);
    win_wr(w, NF_CM_EVENT_TYPE_OFF, type);
    win_wr(w, NF_CM_EVENT_STATUS_OFF, status);
    win_wr(w, NF_CM_EVENT_CONN_ID_OFF, conn_id(c));
    win_wr(w, NF_CM_EVENT_LISTEN_ID_OFF, c->listen_id);
    win_wr(w, NF_CM_EVENT_QPN_OFF, c->q == FW_NO_INDEX ? 0u : qpn_of_index(c->q));
    win_wr(w, NF_CM_EVENT_PEER_QPN_OFF, c->peer_qpn);
    win_wr(w, NF_CM_EVENT_LOCAL_IP_OFF, self_ip());
    win_wr(w, NF_CM_EVENT_LOCAL_PORT_OFF, c->local_port);
    win_wr(w, NF_CM_EVENT_PEER_IP_OFF, c->peer.ip);
    win_wr(w, NF_CM_EVENT_PEER_PORT_OFF, c->peer_port);
    win_wr(w, NF_CM_EVENT_RESOURCES_OFF, c->peer_res);
    win_wr(w, NF_CM_EVENT_DEPTH_OFF, c->peer_depth);
    win_wr(w, NF_CM_EVENT_REASON_OFF, reason);
    win_wr(w, NF_CM_EVENT_CANCELLED_OFF, cancelled);
    win_wr(w, NF_CM_EVENT_PDATA_LEN_OFF, plen);
    for (uint32_t i = 0; i < plen; i += 4u)
        win_wr(w, NF_CM_EVENT_SIZE + i, pdata[i] | (uint32_t)pdata[i + 1u] << 8 | (uint32_t)pdata[i + 2u] << 16 |
                                          (uint32_t)pdata[i + 3u] << 24);
}

/* ---- sending ---- */

static void send_mad(struct cm_conn *c)
{
    c->owed = !fw_rc_send_ud(&c->peer, c->mad, NF_MAD_BYTES);
}
/* A MAD of no connection (a REJ or DREP answering what came): sent once if a TX slot
 * is free, else the peer's retry asks again. */
static void send_scratch(const struct fw_rc_dest *to)
{
    (void)fw_rc_send_ud(to, scratch, NF_MAD_BYTES);
}
/* A REJ answering MAD m (its TIDs and comm IDs), from local comm ID local. */
static void build_rej(uint8_t *out, const uint8_t *m, uint32_t local, uint32_t msg, uint32_t reason)
{
    mad_hdr(out, NF_CM_ATTR_REJ, get32(m, TID_HI), get32(m, TID_LO));
    put32(out, D(NF_CM_REJ_LOCAL_COMM_ID_OFF), local);
    put32(out, D(NF_CM_REJ_REMOTE_COMM_ID_OFF), get32(m, D(NF_CM_REQ_LOCAL_COMM_ID_OFF)));
    put8(out, D(NF_CM_REJ_MSG_REJECTED_OFF), NF_CM_REJ_MSG_REJECTED_PUT(msg));
    put16(out, D(NF_CM_REJ_REASON_OFF), reason);
}

/* The connection is over before it was established: its QP (if on the wire) back in
 * RESET, off the wire; the connection forgotten. */
static void conn_drop(struct cm_conn *c)
{
    if (c->q != FW_NO_INDEX && fw_qps[c->q].wire) {
        fw_rc_drop(c->q);
        fw_qps[c->q].state = FW_QP_RESET;
    }
    c->state = ST_FREE;
}
static void conn_fail(struct cm_conn *c, uint32_t type, uint32_t status, uint32_t reason, const uint8_t *pdata,
                      uint32_t plen)
{
    emit(c, type, status, reason, 0, pdata, plen);
    conn_drop(c);
}
/* Our disconnect is done: the QP leaves the wire, its requests complete CANCELLED. */
static void conn_finish(struct cm_conn *c, uint32_t status)
{
    uint32_t cancelled = fw_rc_leave(c->q);
    emit(c, NF_CM_EVENT_TYPE_DISCONNECTED, status, 0, cancelled, 0, 0);
    c->state = ST_FREE;
}

/* ---- receiving ---- */

static void rx_req(const struct fw_rc_dest *peer, const uint8_t *m)
{
    uint32_t remote = get32(m, D(NF_CM_REQ_LOCAL_COMM_ID_OFF));
    for (uint32_t i = 0; i < CM_CONNS; i++) {
        struct cm_conn *c = &conns[i];
        if (c->state != ST_FREE && !c->active && c->peer.ip == peer->ip && c->remote_id == remote) {
            if (c->state == ST_REP_SENT || c->state == ST_TIMEWAIT) { /* our REP or REJ was lost */
                fw_stats.cm_resends++;
                send_mad(c);
            }
            return; /* a duplicate */
        }
    }
    uint32_t sid_hi = get32(m, D(NF_CM_REQ_SERVICE_ID_OFF)), sid_lo = get32(m, D(NF_CM_REQ_SERVICE_ID_OFF + 4u));
    uint32_t port = sid_lo & 0xFFFFu, lid = 0;
    for (uint32_t i = 0; i < CM_LISTENS; i++)
        if (listens[i].used && listens[i].port == port)
            lid = (uint32_t)listens[i].gen << 8 | i;
    uint32_t reason = 0;
    struct cm_conn *c = 0;
    if (sid_hi != 0 || (sid_lo & 0xFFFF0000u) != NF_CMA_SID_TCP || !lid)
        reason = NF_CM_REJ_REASON_INVALID_SID;
    else if (NF_CM_REQ_TRANSPORT_GET(m[D(NF_CM_REQ_TRANSPORT_OFF)]) != 0u)
        reason = NF_CM_REJ_REASON_INVALID_TRANSPORT; /* RC only */
    else if (NF_CM_REQ_PATH_MTU_GET(m[D(NF_CM_REQ_PATH_MTU_OFF)]) < NF_PATH_MTU_256)
        reason = NF_CM_REJ_REASON_INVALID_MTU;
    else if (!(c = conn_new()))
        reason = NF_CM_REJ_REASON_NO_RESOURCES;
    if (reason) {
        build_rej(scratch, m, 0, NF_CM_REJ_MSG_REQ, reason);
        send_scratch(peer);
        return;
    }
    c->state = ST_REQ_RCVD;
    c->listen_id = lid;
    c->remote_id = remote;
    c->peer = *peer;
    c->peer_qpn = get24(m, D(NF_CM_REQ_LOCAL_QPN_OFF));
    c->peer_res = m[D(NF_CM_REQ_RESP_RESOURCES_OFF)];
    c->peer_depth = m[D(NF_CM_REQ_INIT_DEPTH_OFF)];
    c->peer_psn = get24(m, D(NF_CM_REQ_STARTING_PSN_OFF));
    uint32_t mtu = NF_CM_REQ_PATH_MTU_GET(m[D(NF_CM_REQ_PATH_MTU_OFF)]);
    c->mtu = (uint8_t)(mtu < NF_NET_MAX_PATH_MTU ? mtu : NF_NET_MAX_PATH_MTU); /* the smaller of both sides' */
    c->tid_hi = get32(m, TID_HI);
    c->tid_lo = get32(m, TID_LO);
    c->local_port = (uint16_t)port;
    c->peer_port = (uint16_t)get16(m, REQ_CMA + NF_CMA_HDR_SRC_PORT_OFF);
    emit(c, NF_CM_EVENT_TYPE_REQUEST, NF_STATUS_SUCCESS, 0, 0, m + REQ_PDATA, NF_CM_REQ_PDATA);
}

/* The connection a MAD from peer names by its remote comm ID (ours), or 0. */
static struct cm_conn *conn_of_mad(const struct fw_rc_dest *peer, const uint8_t *m)
{
    _Static_assert(NF_CM_REP_REMOTE_COMM_ID_OFF == NF_CM_REJ_REMOTE_COMM_ID_OFF &&
                       NF_CM_REP_REMOTE_COMM_ID_OFF == NF_CM_RTU_REMOTE_COMM_ID_OFF &&
                       NF_CM_REP_REMOTE_COMM_ID_OFF == NF_CM_DREQ_REMOTE_COMM_ID_OFF &&
                       NF_CM_REP_REMOTE_COMM_ID_OFF == NF_CM_DREP_REMOTE_COMM_ID_OFF,
                   "every answer names our comm ID at one offset");
    struct cm_conn *c = conn_lookup(get32(m, D(NF_CM_REP_REMOTE_COMM_ID_OFF)), 1);
    return c && c->peer.ip == peer->ip ? c : 0;
}

static void rx_rep(struct cm_conn *c, const uint8_t *m)
{
    if (c->state == ST_ESTABLISHED && c->active) { /* our RTU was lost */
        fw_stats.cm_resends++;
        send_mad(c);
        return;
    }
    if (c->state != ST_REQ_SENT)
        return;
    c->remote_id = get32(m, D(NF_CM_REP_LOCAL_COMM_ID_OFF));
    c->peer_qpn = get24(m, D(NF_CM_REP_LOCAL_QPN_OFF));
    c->peer_psn = get24(m, D(NF_CM_REP_STARTING_PSN_OFF));
    c->peer_res = m[D(NF_CM_REP_RESP_RESOURCES_OFF)];
    c->peer_depth = m[D(NF_CM_REP_INIT_DEPTH_OFF)];
    /* the passive side's choice, when it says one (a peer that does not used the REQ's) */
    uint32_t mtu = NF_CM_REP_PATH_MTU_GET(m[D(NF_CM_REP_PATH_MTU_OFF)]);
    if (mtu >= NF_PATH_MTU_256 && mtu < c->mtu)
        c->mtu = (uint8_t)mtu;
    /* PSNs: each side's Starting PSN is its own receive PSN, the other's send PSN */
    const struct fw_rc_dest d = {c->peer.ip, c->peer.mac_lo, c->peer.mac_hi, c->peer_qpn};
    /* our depth (in the REQ we sent) within the peer's responder resources */
    uint32_t ord = m[D(NF_CM_REP_RESP_RESOURCES_OFF)];
    if (c->mad[D(NF_CM_REQ_INIT_DEPTH_OFF)] < ord)
        ord = c->mad[D(NF_CM_REQ_INIT_DEPTH_OFF)];
    fw_rc_wire(c->q, &d, c->peer_psn, c->my_psn, c->mtu, ord);
    c->state = ST_REP_RCVD;
    emit(c, NF_CM_EVENT_TYPE_REPLY, NF_STATUS_SUCCESS, 0, 0, m + D(NF_CM_REP_PRIVATE_DATA_OFF), NF_CM_REP_PDATA);
}

static void rx_rej(struct cm_conn *c, const uint8_t *m)
{
    if (c->state != ST_REQ_SENT && c->state != ST_REP_SENT && c->state != ST_REP_RCVD)
        return;
    uint32_t reason = get16(m, D(NF_CM_REJ_REASON_OFF));
    if (reason == NF_CM_REJ_REASON_CONSUMER)
        conn_fail(c, NF_CM_EVENT_TYPE_REJECTED, NF_STATUS_CONNECTION_REFUSED, reason, m + D(NF_CM_REJ_PRIVATE_DATA_OFF),
                  NF_CM_REJ_PDATA);
    else
        conn_fail(c, NF_CM_EVENT_TYPE_FAILED, NF_STATUS_CONNECTION_REFUSED, reason, 0, 0);
}

static void rx_dreq(const struct fw_rc_dest *peer, struct cm_conn *c, const uint8_t *m)
{
    /* every DREQ is answered, a repeated one or one of a connection gone too */
    mad_hdr(scratch, NF_CM_ATTR_DREP, get32(m, TID_HI), get32(m, TID_LO));
    put32(scratch, D(NF_CM_DREP_LOCAL_COMM_ID_OFF), get32(m, D(NF_CM_DREQ_REMOTE_COMM_ID_OFF)));
    put32(scratch, D(NF_CM_DREP_REMOTE_COMM_ID_OFF), get32(m, D(NF_CM_DREQ_LOCAL_COMM_ID_OFF)));
    send_scratch(peer);
    if (c && (c->state == ST_ESTABLISHED || c->state == ST_REP_SENT || c->state == ST_REP_RCVD)) {
        c->state = ST_PEER_GONE; /* the QP stays as it is: the host disconnects or flushes it */
        emit(c, NF_CM_EVENT_TYPE_DISCONNECTED, NF_STATUS_SUCCESS, 0, 0, 0, 0);
    }
}

/* A MAD to QP1 (fw_rc_poll): data, len bytes in the frame's RX slot. */
static void rx_mad(const struct fw_rc_dest *from, uint32_t data, uint32_t len)
{
    uint8_t *m = rx_buf;
    if (len < NF_MAD_BYTES) {
        fw_stats.net_unhandled++;
        return;
    }
    if (!events->room(EV_MAX))
        return; /* no room for its event: the peer sends it again */
    copy_in(m, 0, data, NF_MAD_BYTES);
    if (get32(m, NF_MAD_HDR_BASE_VERSION_OFF) != CM_SEND_WORD) {
        fw_stats.net_unhandled++; /* not a CM Send */
        return;
    }
    const struct fw_rc_dest peer = {from->ip, from->mac_lo, from->mac_hi, NF_ROCE_GSI_QPN};
    uint32_t attr = get16(m, NF_MAD_HDR_ATTR_ID_OFF);
    if (attr == NF_CM_ATTR_REQ) {
        rx_req(&peer, m);
        return;
    }
    struct cm_conn *c = conn_of_mad(&peer, m);
    if (attr == NF_CM_ATTR_DREQ) {
        rx_dreq(&peer, c, m);
        return;
    }
    if (!c)
        return; /* a stale answer */
    if (c->state == ST_TIMEWAIT) {
        if (attr == NF_CM_ATTR_REP) { /* our REJ of it was lost */
            fw_stats.cm_resends++;
            send_mad(c);
        }
        return;
    }
    if (attr == NF_CM_ATTR_REP)
        rx_rep(c, m);
    else if (attr == NF_CM_ATTR_REJ)
        rx_rej(c, m);
    else if (attr == NF_CM_ATTR_RTU && c->state == ST_REP_SENT) {
        c->state = ST_ESTABLISHED;
        emit(c, NF_CM_EVENT_TYPE_ESTABLISHED, NF_STATUS_SUCCESS, 0, 0, 0, 0);
    } else if (attr == NF_CM_ATTR_DREP && c->state == ST_DREQ_SENT)
        conn_finish(c, NF_STATUS_SUCCESS);
}

/* ---- timers ---- */

/* The REQ is built: send it once the peer's MAC is known. */
static void resolve(struct cm_conn *c)
{
    uint32_t mac[2], st = fw_net_resolve(c->peer.ip, mac);
    if (st == NF_STATUS_PENDING)
        return;
    if (st != NF_STATUS_SUCCESS) {
        if (events->room(EV_MAX))
            conn_fail(c, NF_CM_EVENT_TYPE_FAILED, st, 0, 0, 0);
        return;
    }
    c->peer.mac_lo = mac[0];
    c->peer.mac_hi = mac[1];
    c->state = ST_REQ_SENT;
    c->ticks = c->retries = 0;
    send_mad(c);
}

/* Nonzero when a connection waits on the timer: the pass is work only then, so an
 * adapter with none still goes idle. */
static int timer_pass(void)
{
    int did = 0;
    for (uint32_t i = 0; i < CM_CONNS; i++) {
        struct cm_conn *c = &conns[i];
        if (c->state == ST_RESOLVING) {
            resolve(c);
            did = 1;
            continue;
        }
        if (c->state == ST_TIMEWAIT && ++c->ticks >= TIMEWAIT_TICKS)
            c->state = ST_FREE;
        if (c->state != ST_REQ_SENT && c->state != ST_REP_SENT && c->state != ST_DREQ_SENT)
            continue;
        did = 1;
        if (++c->ticks < TIMEOUT_TICKS)
            continue;
        c->ticks = 0;
        if (c->retries < NF_CM_RETRIES) {
            c->retries++;
            fw_stats.cm_resends++;
            send_mad(c);
        } else if (events->room(EV_MAX)) {
            if (c->state == ST_DREQ_SENT)
                conn_finish(c, NF_STATUS_IO_TIMEOUT);
            else
                conn_fail(c, NF_CM_EVENT_TYPE_FAILED, NF_STATUS_IO_TIMEOUT, 0, 0, 0);
        }
    }
    return did;
}

int fw_cm_poll(void)
{
    int did = fw_rc_poll();
    uint32_t now = hal_cycles(), tick = fw_net_tick();
    if (tick && now - tick_at >= tick) {
        tick_at = now;
        did |= timer_pass();
    }
    for (uint32_t i = 0; i < CM_CONNS; i++) {
        struct cm_conn *c = &conns[i];
        if (c->state == ST_FREE)
            continue;
        if (c->owed) {
            send_mad(c);
            did = 1;
        }
        if (c->state == ST_CLOSING && events->room(EV_MAX)) {
            conn_finish(c, NF_STATUS_SUCCESS);
            did = 1;
        }
    }
    return did;
}

void fw_cm_reset(void)
{
    for (uint32_t i = 0; i < CM_CONNS; i++)
        conns[i].state = ST_FREE;
    for (uint32_t i = 0; i < CM_LISTENS; i++)
        listens[i].used = 0;
}

void fw_cm_init(const struct fw_reply_ops *ev)
{
    events = ev;
    fw_rc_init(ev);
    fw_rc_set_gsi(rx_mad);
    for (uint32_t i = 0; i < CM_CONNS; i++)
        conns[i] = (struct cm_conn){0};
    fw_cm_reset();
    next_port = fw_rng_next();
    tick_at = hal_cycles();
}

void fw_cm_forget(uint32_t q)
{
    struct cm_conn *c = conn_of_qp(q);
    if (c)
        c->state = ST_FREE;
}

/* ---- the host's requests ---- */

uint32_t fw_cm_listen(uint32_t body, uint32_t blen, uint32_t rep[2])
{
    if (blen < NF_CM_LISTEN_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    uint32_t ip = mem_rd(body + NF_CM_LISTEN_REQ_IP_OFF), port = mem_rd(body + NF_CM_LISTEN_REQ_PORT_OFF);
    if (port > 0xFFFFu)
        return NF_STATUS_INVALID_PARAMETER;
    if (!self_ip())
        return NF_STATUS_INVALID_DEVICE_STATE;
    if (ip && ip != self_ip())
        return NF_STATUS_INVALID_ADDRESS;
    if (port && port_used(port))
        return NF_STATUS_SHARING_VIOLATION;
    struct cm_listen *l = 0;
    for (uint32_t i = 0; i < CM_LISTENS && !l; i++)
        if (!listens[i].used)
            l = &listens[i];
    if (!l || (!port && !(port = ephemeral())))
        return NF_STATUS_INSUFFICIENT_RESOURCES;
    l->gen = (uint8_t)(l->gen + 1u) ? (uint8_t)(l->gen + 1u) : 1u;
    *l = (struct cm_listen){ip, (uint16_t)port, 1, l->gen};
    rep[0] = (uint32_t)l->gen << 8 | (uint32_t)(l - listens);
    rep[1] = port;
    return NF_STATUS_SUCCESS;
}

uint32_t fw_cm_unlisten(uint32_t body, uint32_t blen)
{
    if (blen < NF_CM_ID_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    uint32_t id = mem_rd(body + NF_CM_ID_REQ_ID_OFF), i = id & 0xFFu;
    if (i >= CM_LISTENS || id >> 16 || !listens[i].used || listens[i].gen != id >> 8 ||
        mem_rd(body + NF_CM_ID_REQ_RSVD_OFF))
        return NF_STATUS_INVALID_PARAMETER;
    listens[i].used = 0;
    return NF_STATUS_SUCCESS;
}

/* A QP ready to be connected: in RESET, off the wire, with no connection. */
static int qp_free_for_cm(uint32_t q)
{
    return fw_qps[q].state == FW_QP_RESET && !fw_qps[q].wire && !conn_of_qp(q);
}

uint32_t fw_cm_connect(uint32_t body, uint32_t blen, uint32_t rep[2])
{
    if (blen < NF_CM_CONNECT_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    hal_win w = mem_win(body);
    uint32_t q = fw_qp_lookup(win_rd(w, NF_CM_CONNECT_REQ_QPN_OFF));
    uint32_t ip = win_rd(w, NF_CM_CONNECT_REQ_PEER_IP_OFF), pport = win_rd(w, NF_CM_CONNECT_REQ_PEER_PORT_OFF);
    uint32_t lport = win_rd(w, NF_CM_CONNECT_REQ_LOCAL_PORT_OFF), res = win_rd(w, NF_CM_CONNECT_REQ_RESOURCES_OFF);
    uint32_t depth = win_rd(w, NF_CM_CONNECT_REQ_DEPTH_OFF), plen = win_rd(w, NF_CM_CONNECT_REQ_PDATA_LEN_OFF);
    uint32_t mtu = win_rd(w, NF_CM_CONNECT_REQ_MTU_OFF);
    if (q == FW_NO_INDEX || ip == 0 || pport == 0 || pport > 0xFFFFu || lport > 0xFFFFu || res > NF_CM_MAX_RD ||
        depth > NF_CM_MAX_RD || plen > NF_CM_REQ_PDATA || plen > blen - NF_CM_CONNECT_REQ_SIZE ||
        mtu > NF_NET_MAX_PATH_MTU)
        return NF_STATUS_INVALID_PARAMETER;
    if (!qp_free_for_cm(q) || !self_ip())
        return NF_STATUS_INVALID_DEVICE_STATE;
    if (ip == self_ip())
        return NF_STATUS_INVALID_PARAMETER; /* no loopback over the wire */
    if (lport && port_used(lport))
        return NF_STATUS_SHARING_VIOLATION;
    struct cm_conn *c = conn_new();
    if (!c || (!lport && !(lport = ephemeral()))) {
        if (c)
            c->state = ST_FREE;
        return NF_STATUS_INSUFFICIENT_RESOURCES;
    }
    c->state = ST_RESOLVING;
    c->active = 1;
    c->q = q;
    c->local_port = (uint16_t)lport;
    c->peer_port = (uint16_t)pport;
    c->peer = (struct fw_rc_dest){ip, 0, 0, NF_ROCE_GSI_QPN};
    c->my_psn = fw_rng_next() & 0xFFFFFFu;
    c->tid_hi = fw_rng_next();
    c->tid_lo = conn_id(c);
    uint8_t *m = c->mad;
    mad_hdr(m, NF_CM_ATTR_REQ, c->tid_hi, c->tid_lo);
    put32(m, D(NF_CM_REQ_LOCAL_COMM_ID_OFF), conn_id(c));
    put32(m, D(NF_CM_REQ_SERVICE_ID_OFF + 4u), NF_CMA_SID_TCP | pport);
    put_guid(m, D(NF_CM_REQ_LOCAL_CA_GUID_OFF));
    put24(m, D(NF_CM_REQ_LOCAL_QPN_OFF), qpn_of_index(q));
    put8(m, D(NF_CM_REQ_RESP_RESOURCES_OFF), res);
    put8(m, D(NF_CM_REQ_INIT_DEPTH_OFF), depth);
    /* RC (transport 0), no end-to-end flow control */
    put8(m, D(NF_CM_REQ_REMOTE_CM_TIMEOUT_OFF), NF_CM_REQ_REMOTE_CM_TIMEOUT_PUT(CM_TIMEOUT));
    put24(m, D(NF_CM_REQ_STARTING_PSN_OFF), c->my_psn);
    put8(m, D(NF_CM_REQ_LOCAL_CM_TIMEOUT_OFF),
         NF_CM_REQ_LOCAL_CM_TIMEOUT_PUT(CM_TIMEOUT) | NF_CM_REQ_RETRY_COUNT_PUT(RETRY));
    put16(m, D(NF_CM_REQ_PKEY_OFF), NF_ROCE_PKEY_DEFAULT);
    c->mtu = (uint8_t)(mtu ? mtu : NF_NET_MAX_PATH_MTU); /* the passive side answers the smaller */
    put8(m, D(NF_CM_REQ_PATH_MTU_OFF), NF_CM_REQ_PATH_MTU_PUT(c->mtu) | NF_CM_REQ_RNR_RETRY_PUT(RETRY));
    put8(m, D(NF_CM_REQ_MAX_CM_RETRIES_OFF), NF_CM_REQ_MAX_CM_RETRIES_PUT(15u));
    put16(m, D(NF_CM_REQ_LOCAL_LID_OFF), 0xFFFFu); /* LIDs: RoCE has none */
    put16(m, D(NF_CM_REQ_REMOTE_LID_OFF), 0xFFFFu);
    put_gid(m, D(NF_CM_REQ_LOCAL_GID_OFF), self_ip());
    put_gid(m, D(NF_CM_REQ_REMOTE_GID_OFF), ip);
    put8(m, D(NF_CM_REQ_HOP_LIMIT_OFF), 64u);
    put8(m, D(NF_CM_REQ_LOCAL_ACK_TIMEOUT_OFF), NF_CM_REQ_LOCAL_ACK_TIMEOUT_PUT(ACK_TIMEOUT));
    put8(m, REQ_CMA + NF_CMA_HDR_IP_VERSION_OFF, NF_CMA_IPV4); /* cma_hdr version 0 */
    put16(m, REQ_CMA + NF_CMA_HDR_SRC_PORT_OFF, lport);
    put_ip(m, REQ_CMA + NF_CMA_HDR_SRC_ADDR_OFF + NF_ROCE_V4MAPPED_ADDR_OFF, self_ip());
    put_ip(m, REQ_CMA + NF_CMA_HDR_DST_ADDR_OFF + NF_ROCE_V4MAPPED_ADDR_OFF, ip);
    copy_in(m, REQ_PDATA, body + NF_CM_CONNECT_REQ_SIZE, plen);
    resolve(c); /* the REQ goes now when the MAC is cached, else from the timer pass */
    rep[0] = conn_id(c);
    rep[1] = lport;
    return NF_STATUS_SUCCESS;
}

uint32_t fw_cm_accept(uint32_t body, uint32_t blen)
{
    if (blen < NF_CM_ACCEPT_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    hal_win w = mem_win(body);
    struct cm_conn *c = conn_by_id(win_rd(w, NF_CM_ACCEPT_REQ_CONN_ID_OFF));
    uint32_t q = fw_qp_lookup(win_rd(w, NF_CM_ACCEPT_REQ_QPN_OFF));
    uint32_t res = win_rd(w, NF_CM_ACCEPT_REQ_RESOURCES_OFF), depth = win_rd(w, NF_CM_ACCEPT_REQ_DEPTH_OFF);
    uint32_t plen = win_rd(w, NF_CM_ACCEPT_REQ_PDATA_LEN_OFF), mtu = win_rd(w, NF_CM_ACCEPT_REQ_MTU_OFF);
    if (!c || q == FW_NO_INDEX || res > NF_CM_MAX_RD || depth > NF_CM_MAX_RD || plen > NF_CM_REP_PDATA ||
        plen > blen - NF_CM_ACCEPT_REQ_SIZE || mtu > NF_NET_MAX_PATH_MTU)
        return NF_STATUS_INVALID_PARAMETER;
    if (c->state != ST_REQ_RCVD || !qp_free_for_cm(q))
        return NF_STATUS_INVALID_DEVICE_STATE;
    c->q = q;
    if (mtu && mtu < c->mtu)
        c->mtu = (uint8_t)mtu; /* the smaller of the REQ's, ours and the host's */
    c->my_psn = fw_rng_next() & 0xFFFFFFu;
    uint8_t *m = c->mad;
    mad_hdr(m, NF_CM_ATTR_REP, c->tid_hi, c->tid_lo);
    put32(m, D(NF_CM_REP_LOCAL_COMM_ID_OFF), conn_id(c));
    put32(m, D(NF_CM_REP_REMOTE_COMM_ID_OFF), c->remote_id);
    put24(m, D(NF_CM_REP_LOCAL_QPN_OFF), qpn_of_index(q));
    put24(m, D(NF_CM_REP_STARTING_PSN_OFF), c->my_psn);
    put8(m, D(NF_CM_REP_RESP_RESOURCES_OFF), res);
    put8(m, D(NF_CM_REP_INIT_DEPTH_OFF), depth);
    put8(m, D(NF_CM_REP_TARGET_ACK_DELAY_OFF), NF_CM_REP_TARGET_ACK_DELAY_PUT(ACK_TIMEOUT));
    put8(m, D(NF_CM_REP_RNR_RETRY_OFF), NF_CM_REP_RNR_RETRY_PUT(RETRY) | NF_CM_REP_PATH_MTU_PUT(c->mtu));
    put_guid(m, D(NF_CM_REP_LOCAL_CA_GUID_OFF));
    copy_in(m, D(NF_CM_REP_PRIVATE_DATA_OFF), body + NF_CM_ACCEPT_REQ_SIZE, plen);
    const struct fw_rc_dest d = {c->peer.ip, c->peer.mac_lo, c->peer.mac_hi, c->peer_qpn};
    fw_rc_wire(q, &d, c->peer_psn, c->my_psn, c->mtu, depth < c->peer_res ? depth : c->peer_res);
    c->state = ST_REP_SENT;
    c->ticks = c->retries = 0;
    send_mad(c);
    return NF_STATUS_SUCCESS;
}

uint32_t fw_cm_reject(uint32_t body, uint32_t blen)
{
    if (blen < NF_CM_REJECT_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    struct cm_conn *c = conn_by_id(mem_rd(body + NF_CM_REJECT_REQ_CONN_ID_OFF));
    uint32_t plen = mem_rd(body + NF_CM_REJECT_REQ_PDATA_LEN_OFF);
    if (!c || plen > NF_CM_REJ_PDATA || plen > blen - NF_CM_REJECT_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    if (c->state != ST_REQ_RCVD && c->state != ST_REP_RCVD)
        return NF_STATUS_INVALID_DEVICE_STATE;
    /* the REJ answers the REQ (passive) or the REP (active): its IDs as build_rej's */
    uint8_t *m = c->mad;
    mad_hdr(m, NF_CM_ATTR_REJ, c->tid_hi, c->tid_lo);
    put32(m, D(NF_CM_REJ_LOCAL_COMM_ID_OFF), conn_id(c));
    put32(m, D(NF_CM_REJ_REMOTE_COMM_ID_OFF), c->remote_id);
    put8(m, D(NF_CM_REJ_MSG_REJECTED_OFF),
         NF_CM_REJ_MSG_REJECTED_PUT(c->active ? NF_CM_REJ_MSG_REP : NF_CM_REJ_MSG_REQ));
    put16(m, D(NF_CM_REJ_REASON_OFF), NF_CM_REJ_REASON_CONSUMER);
    copy_in(m, D(NF_CM_REJ_PRIVATE_DATA_OFF), body + NF_CM_REJECT_REQ_SIZE, plen);
    conn_drop(c);
    c->state = ST_TIMEWAIT;
    c->q = FW_NO_INDEX; /* the QP is free for another connection at once */
    c->ticks = 0;
    send_mad(c);
    return NF_STATUS_SUCCESS;
}

uint32_t fw_cm_complete(uint32_t body, uint32_t blen)
{
    if (blen < NF_CM_ID_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    struct cm_conn *c = conn_by_id(mem_rd(body + NF_CM_ID_REQ_ID_OFF));
    if (!c || mem_rd(body + NF_CM_ID_REQ_RSVD_OFF))
        return NF_STATUS_INVALID_PARAMETER;
    if (c->state != ST_REP_RCVD)
        return NF_STATUS_INVALID_DEVICE_STATE;
    uint8_t *m = c->mad;
    mad_hdr(m, NF_CM_ATTR_RTU, c->tid_hi, c->tid_lo);
    put32(m, D(NF_CM_RTU_LOCAL_COMM_ID_OFF), conn_id(c));
    put32(m, D(NF_CM_RTU_REMOTE_COMM_ID_OFF), c->remote_id);
    c->state = ST_ESTABLISHED;
    send_mad(c);
    return NF_STATUS_SUCCESS;
}

uint32_t fw_cm_disconnect(uint32_t body, uint32_t blen)
{
    if (blen < NF_QP_REQ_SIZE)
        return NF_STATUS_INVALID_PARAMETER;
    uint32_t q = fw_qp_lookup(mem_rd(body + NF_QP_REQ_QPN_OFF));
    if (q == FW_NO_INDEX || mem_rd(body + NF_QP_REQ_RSVD_OFF))
        return NF_STATUS_INVALID_PARAMETER;
    struct cm_conn *c = conn_of_qp(q);
    if (!c || (c->state != ST_ESTABLISHED && c->state != ST_REP_SENT && c->state != ST_REP_RCVD &&
               c->state != ST_PEER_GONE))
        return NF_STATUS_INVALID_DEVICE_STATE;
    if (c->state == ST_PEER_GONE) {
        c->state = ST_CLOSING; /* no DREQ: the peer is gone; the event follows */
        return NF_STATUS_SUCCESS;
    }
    uint8_t *m = c->mad;
    mad_hdr(m, NF_CM_ATTR_DREQ, c->tid_hi, c->tid_lo ^ 0x80000000u); /* a new transaction */
    put32(m, D(NF_CM_DREQ_LOCAL_COMM_ID_OFF), conn_id(c));
    put32(m, D(NF_CM_DREQ_REMOTE_COMM_ID_OFF), c->remote_id);
    put24(m, D(NF_CM_DREQ_REMOTE_QPN_OFF), c->peer_qpn);
    c->state = ST_DREQ_SENT;
    c->ticks = c->retries = 0;
    send_mad(c);
    return NF_STATUS_SUCCESS;
}
