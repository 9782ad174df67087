/* SPDX-License-Identifier: Apache-2.0 */
/* Connections to another adapter: each NDK step as a request to the board's CM
 * (ndk_cm.c), and the CM_EVENTs that move a connector on. The connector's
 * dispatch (ndk_conn.c) hands a connection here when its address is on the wire. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"

/* Whether a connect to dest goes on the wire: an IPv4 address that is not the
 * port's own (*own: the port's address) nor a loopback one. */
int ndk_wire_route(struct ndk_adapter *ad, const SOCKADDR *dest, uint32_t *own)
{
    if (dest->sa_family != AF_INET || !ndk_cm_port_ipv4(ad, own))
        return 0;
    uint32_t d = ndk_addr_word(dest);
    return d != *own && (d & 0xFFu) != 127u;
}

/* A read limit as the board takes it: the provider caps it at what its QPs answer. */
static uint32_t rd_cap(ULONG v)
{
    return v < NF_CM_MAX_RD ? (uint32_t)v : NF_CM_MAX_RD;
}

/* Link thread, under ad->lock: the board took the CM_CONNECT; its events name the id. */
static void connect_hook(void *arg, const uint8_t *body, size_t len)
{
    struct ndk_connector *c = arg;
    struct nf_cm_connect_rep rep;
    if (len < sizeof(rep))
        return;
    memcpy(&rep, body, sizeof(rep));
    ((struct sockaddr_in *)(void *)&c->local)->sin_port = htons((uint16_t)rep.local_port);
    ndk_wire_link(c, rep.conn_id);
}

/* NdkConnect to another adapter: CM_CONNECT, then the board's REPLY, REJECTED or
 * FAILED event completes it. */
NTSTATUS ndk_wire_connect(struct ndk_connector *c, struct ndk_qp *qp, const SOCKADDR *src, uint32_t own,
                             const SOCKADDR *dest, ULONG ird, ULONG ord, const void *pdata, ULONG pdata_len,
                             NDK_FN_REQUEST_COMPLETION rc, void *ctx)
{
    struct ndk_adapter *ad = c->core.ad;
    uint32_t sport = src ? ntohs(((const struct sockaddr_in *)(const void *)src)->sin_port) : 0;
    if (src && (src->sa_family != AF_INET || (ndk_addr_word(src) && ndk_addr_word(src) != own)))
        return STATUS_INVALID_ADDRESS; /* not an address of this adapter */
    uint32_t dport = ntohs(((const struct sockaddr_in *)(const void *)dest)->sin_port);
    if (!dport)
        return STATUS_INVALID_PARAMETER;
    pthread_mutex_lock(&ad->lock);
    NTSTATUS st = c->state != CONN_IDLE ? STATUS_INVALID_DEVICE_STATE : ndk_qp_attach(qp, ad, c, &ndk_conn_qp_user);
    if (st != STATUS_SUCCESS) {
        pthread_mutex_unlock(&ad->lock);
        return st;
    }
    c->qp = qp;
    c->wire = 1;
    memcpy(&c->remote, dest, sizeof(struct sockaddr_in));
    c->remote_len = sizeof(struct sockaddr_in);
    ndk_addr_from_word(&c->local, &c->local_len, own, sport);
    c->my_ird = ird;
    c->my_ord = ord;
    ndk_conn_start(c, CONN_CONNECTING, rc, ctx);
    struct nf_cm_connect_req req = {qp->qpn, ndk_addr_word(dest), dport, sport, rd_cap(ird), rd_cap(ord), pdata_len, 0};
    pthread_mutex_unlock(&ad->lock);
    st = ndk_cm_connect(ad, &req, pdata, connect_hook, c);
    if (st == STATUS_SUCCESS)
        return STATUS_PENDING;
    pthread_mutex_lock(&ad->lock);
    ndk_wire_unlink(c);
    ndk_conn_release_qp(c);
    c->wire = 0;
    c->op_cb = NULL;
    c->state = CONN_IDLE;
    pthread_mutex_unlock(&ad->lock);
    return st;
}

/* Under ad->lock: the board's connection of c is over; c's operation completes st. */
void ndk_wire_closed(struct ndk_connector *c, NTSTATUS st)
{
    ndk_wire_unlink(c);
    if (c->qp)
        ndk_qp_set_connected(c->qp, 0);
    ndk_conn_release_qp(c);
    c->state = CONN_CLOSED;
    ndk_conn_finish(c, st);
}

/* The board's answer to a step naming a connection it no longer has (the peer gave
 * up, or its retries ran out): the connection is gone. */
static NTSTATUS gone_status(NTSTATUS st)
{
    return st == STATUS_INVALID_DEVICE_STATE || st == STATUS_INVALID_PARAMETER ? STATUS_CONNECTION_ABORTED : st;
}

/* NdkAccept of a connection from another adapter: CM_ACCEPT (the REP); the board's
 * ESTABLISHED (the RTU) or FAILED event completes it. Under ad->lock, which it drops. */
NTSTATUS ndk_wire_accept(struct ndk_connector *b, struct ndk_qp *qp, ULONG ird, ULONG ord, const void *pdata,
                            ULONG pdata_len, NDK_FN_REQUEST_COMPLETION rc, void *ctx)
{
    struct ndk_adapter *ad = b->core.ad;
    struct nf_cm_accept_req req = {b->wire_id, qp->qpn, rd_cap(ird), rd_cap(ord), pdata_len, 0};
    ndk_conn_start(b, CONN_ACCEPTING, rc, ctx);
    pthread_mutex_unlock(&ad->lock);
    NTSTATUS st = ndk_cm_accept(ad, &req, pdata);
    if (st == STATUS_SUCCESS)
        return STATUS_PENDING;
    pthread_mutex_lock(&ad->lock);
    int mine = b->state == CONN_ACCEPTING;
    if (mine) {
        b->op_cb = NULL;
        ndk_conn_release_qp(b);
        b->state = CONN_INCOMING;
    }
    pthread_mutex_unlock(&ad->lock);
    return mine ? gone_status(st) : STATUS_PENDING; /* else an event (link death) completed it */
}

/* NdkCompleteConnect on the wire: CM_COMPLETE sends the RTU, and the connection is
 * up. Under ad->lock, which it drops. */
NTSTATUS ndk_wire_complete(struct ndk_connector *a, NDK_FN_REQUEST_COMPLETION rc, void *ctx)
{
    struct ndk_adapter *ad = a->core.ad;
    uint32_t id = a->wire_id;
    ndk_conn_start(a, CONN_COMPLETING, rc, ctx);
    pthread_mutex_unlock(&ad->lock);
    NTSTATUS st = ndk_cm_complete(ad, id);
    pthread_mutex_lock(&ad->lock);
    if (a->state != CONN_COMPLETING) {
        st = STATUS_PENDING; /* an event ended the connection and completed the call */
    } else if (st == STATUS_SUCCESS && a->qp) {
        ndk_qp_set_connected(a->qp, 1);
        a->state = CONN_CONNECTED;
        ndk_conn_finish(a, STATUS_SUCCESS);
        st = STATUS_PENDING;
    } else {
        st = a->qp ? gone_status(st) : STATUS_CONNECTION_ABORTED;
        a->op_cb = NULL;
        ndk_wire_closed(a, STATUS_SUCCESS);
    }
    pthread_mutex_unlock(&ad->lock);
    return st;
}

/* NdkReject on the wire: a REJ with the private data, for an incoming connection or,
 * on the active side, an accepted one not completed yet. */
NTSTATUS ndk_wire_reject(struct ndk_connector *c, const void *pdata, ULONG pdata_len)
{
    struct ndk_adapter *ad = c->core.ad;
    pthread_mutex_lock(&ad->lock);
    if (c->state != CONN_INCOMING && c->state != CONN_CONNECT_DONE) {
        pthread_mutex_unlock(&ad->lock);
        return STATUS_INVALID_DEVICE_STATE;
    }
    uint32_t id = c->wire_id;
    ndk_wire_closed(c, STATUS_SUCCESS);
    pthread_mutex_unlock(&ad->lock);
    return gone_status(ndk_cm_reject(ad, id, pdata, pdata_len));
}

/* NdkDisconnect on the wire: CM_DISCONNECT (a DREQ, unless the peer's came); the
 * board's DISCONNECTED event completes it once the QP is off the wire, its requests
 * CANCELLED, with the count of receives to cancel. Under ad->lock, which it drops. */
NTSTATUS ndk_wire_disconnect(struct ndk_connector *a, NDK_FN_REQUEST_COMPLETION rc, void *ctx)
{
    struct ndk_adapter *ad = a->core.ad;
    if (!a->qp) {
        ndk_wire_closed(a, STATUS_SUCCESS);
        pthread_mutex_unlock(&ad->lock);
        return STATUS_SUCCESS;
    }
    uint32_t qpn = a->qp->qpn;
    ndk_qp_set_connected(a->qp, 0);
    a->disc_rq_tail = ndk_wq_tail(&a->qp->rq);
    ndk_conn_start(a, CONN_DISCONNECTING, rc, ctx);
    pthread_mutex_unlock(&ad->lock);
    NTSTATUS st = ndk_cm_disconnect(ad, qpn);
    if (st == STATUS_SUCCESS)
        return STATUS_PENDING;
    /* The board has no connection on the QP any more (or the link is gone, and the
     * board forgot it): disconnected inline. */
    pthread_mutex_lock(&ad->lock);
    int mine = a->state == CONN_DISCONNECTING;
    if (mine) {
        a->op_cb = NULL;
        ndk_wire_closed(a, STATUS_SUCCESS);
    }
    pthread_mutex_unlock(&ad->lock);
    return mine ? STATUS_SUCCESS : STATUS_PENDING;
}

/* Under ad->lock: what the peer sent in a REP or REJ. */
static void take_peer_data(struct ndk_connector *c, const struct nf_cm_event *ev, const uint8_t *pdata)
{
    c->peer_data_len = ev->pdata_len < NDK_MAX_CALLEE_DATA ? ev->pdata_len : NDK_MAX_CALLEE_DATA;
    memcpy(c->peer_data, pdata, c->peer_data_len);
}

/* Under ad->lock, which it drops: the connector closes. The board's connection ends
 * with it: a REJ for one not set up, a DREQ for one that is (its QP's close does the
 * rest). */
void ndk_wire_teardown(struct ndk_connector *c)
{
    struct ndk_adapter *ad = c->core.ad;
    uint16_t op = 0;
    uint32_t id = c->wire_id;
    if (id && (c->state == CONN_INCOMING || c->state == CONN_CONNECT_DONE))
        op = NF_OP_CM_REJECT;
    else if (c->qp && (c->state == CONN_CONNECTED || c->state == CONN_ACCEPTING || c->state == CONN_COMPLETING)) {
        op = NF_OP_CM_DISCONNECT;
        id = c->qp->qpn;
    }
    if (c->qp)
        ndk_qp_set_connected(c->qp, 0);
    ndk_wire_unlink(c);
    ndk_conn_release_qp(c);
    c->state = CONN_CLOSED;
    pthread_mutex_unlock(&ad->lock);
    if (op)
        ndk_cm_forget_id(ad, op, id);
}

void ndk_wire_on_event(struct ndk_adapter *ad, const struct nf_cm_event *ev, const uint8_t *pdata)
{
    struct ndk_connector *c = ndk_wire_find(ad, ev->conn_id);
    int st = c ? c->state : CONN_CLOSED;
    switch (ev->type) {
    case NF_CM_EVENT_TYPE_REPLY:
        if (st != CONN_CONNECTING) {
            ndk_cm_defer(ad, NF_OP_CM_REJECT, ev->conn_id); /* nobody completes it */
            break;
        }
        take_peer_data(c, ev, pdata);
        c->peer_ird = ev->resources;
        c->peer_ord = ev->depth;
        c->state = CONN_CONNECT_DONE;
        ndk_conn_finish(c, STATUS_SUCCESS);
        break;
    case NF_CM_EVENT_TYPE_REJECTED:
        if (st == CONN_CONNECTING)
            take_peer_data(c, ev, pdata);
        /* fall through */
    case NF_CM_EVENT_TYPE_FAILED:
        if (c)
            ndk_wire_closed(c, ndk_status(ev->status) != STATUS_SUCCESS ? ndk_status(ev->status)
                                                                   : STATUS_CONNECTION_ABORTED);
        break;
    case NF_CM_EVENT_TYPE_ESTABLISHED:
        if (st == CONN_ACCEPTING && c->qp) {
            ndk_qp_set_connected(c->qp, 1);
            c->state = CONN_CONNECTED;
            ndk_conn_finish(c, STATUS_SUCCESS);
        }
        break;
    case NF_CM_EVENT_TYPE_DISCONNECTED:
        if (st == CONN_DISCONNECTING) {
            if (c->qp)
                ndk_rq_cancel(c->qp, ev->cancelled, c->disc_rq_tail);
            ndk_wire_closed(c, ndk_status(ev->status));
        } else if (c && !c->peer_gone) {
            /* the peer's DREQ: its DisconnectEvent once; the QP is not flushed */
            c->peer_gone = 1;
            ndk_conn_disc_event(c);
        }
        break;
    default:
        break;
    }
}

void ndk_wire_fail_all(struct ndk_adapter *ad, NTSTATUS status)
{
    struct ndk_connector *next;
    for (struct ndk_connector *c = ad->wire_conns; c; c = next) {
        next = c->wire_next;
        if (c->op_cb) {
            ndk_wire_closed(c, status); /* the step waited for an event that cannot come */
        } else if (c->state == CONN_CONNECTED && !c->peer_gone && status != STATUS_CANCELLED) {
            c->peer_gone = 1; /* the link died: the connection is lost */
            ndk_conn_disc_event(c);
        }
    }
}
