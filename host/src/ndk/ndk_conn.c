/* SPDX-License-Identifier: Apache-2.0 */
/* NDKPI connector. A connection to another adapter's address goes on the
 * wire: the board's CM (ndk_cm.c) carries each step, and its CM_EVENTs move the
 * connector on. A connection between two QPs of this adapter (its own address, or
 * any address when the port has none) is a loopback: the handshake lives on the host,
 * and once both sides agree QP_CONNECT tells the board each QP's peer, and
 * QP_DISCONNECT undoes it. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"

static struct ndk_connector *conn_of(NDK_CONNECTOR *c)
{
    return NDK_CONTAINER(c, struct ndk_connector, pub);
}

static void conn_teardown(struct ndk_core *core)
{
    struct ndk_connector *c = NDK_CONTAINER(core, struct ndk_connector, core);
    struct ndk_adapter *ad = core->ad;
    uint32_t qpns[2];
    int n = 0;
    pthread_mutex_lock(&ad->lock);
    if (c->wire) {
        ndk_wire_teardown(c); /* drops the lock */
        return;
    }
    if (c->state == CONN_CONNECTED && c->qp) {
        qpns[n++] = c->qp->qpn;
        if (c->peer && c->peer->qp)
            qpns[n++] = c->peer->qp->qpn;
        ndk_qp_set_connected(c->qp, 0);
    }
    if (c->peer) {
        if (c->peer->peer == c)
            ndk_conn_peer_lost(c->peer);
        c->peer = NULL;
    }
    ndk_conn_release_qp(c);
    c->state = CONN_CLOSED;
    pthread_mutex_unlock(&ad->lock);
    for (int i = 0; i < n; i++) {
        struct nf_qp_req q = {qpns[i], 0};
        ndk_send_forget(ad, NF_OP_QP_DISCONNECT, &q, sizeof(q));
    }
}

static const struct ndk_type conn_type = {NdkObjectTypeConnector, sizeof(struct ndk_connector),
                                          offsetof(struct ndk_connector, core), conn_teardown, NULL};

static NTSTATUS conn_close(NDK_OBJECT_HEADER *obj, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx)
{
    return ndk_close_as(obj, &conn_type, cb, ctx);
}

static struct ndk_connector *new_connector(struct ndk_adapter *ad)
{
    struct ndk_connector *c = ndk_obj_new(ad, &conn_type, &ad->core, NULL, NULL);
    if (c)
        c->pub.Dispatch = &ndk_conn_dispatch;
    return c;
}

NTSTATUS ndk_create_connector(NDK_ADAPTER *a, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_CONNECTOR **out)
{
    (void)cc; /* made on the host: done inline */
    (void)ctx;
    if (out)
        *out = NULL;
    struct ndk_adapter *ad = ndk_adapter_live(a);
    if (!ad || !out)
        return STATUS_INVALID_PARAMETER;
    struct ndk_connector *c = new_connector(ad);
    NTSTATUS st = c ? ndk_obj_publish(&c->core) : STATUS_INSUFFICIENT_RESOURCES;
    if (st == STATUS_SUCCESS)
        *out = &c->pub;
    return st;
}

static NTSTATUS conn_connect(NDK_CONNECTOR *cn, NDK_QP *q, CONST PSOCKADDR src, ULONG src_len, CONST PSOCKADDR dest,
                             ULONG dest_len, ULONG ird, ULONG ord, CONST PVOID pdata, ULONG pdata_len,
                             NDK_FN_REQUEST_COMPLETION rc, PVOID ctx)
{
    if (!ndk_obj_ok(cn, NdkObjectTypeConnector) || !ndk_obj_ok(q, NdkObjectTypeQp) || !dest || (!pdata && pdata_len))
        return STATUS_INVALID_PARAMETER;
    struct ndk_connector *c = conn_of(cn);
    struct ndk_adapter *ad = c->core.ad;
    ULONG dlen = ndk_addr_len(dest, dest_len);
    ULONG slen = src ? ndk_addr_len(src, src_len) : 0;
    if (!dlen || (src && !slen))
        return STATUS_INVALID_PARAMETER;
    if (pdata_len > NDK_MAX_CALLER_DATA)
        return STATUS_INVALID_BUFFER_SIZE;
    struct ndk_qp *qp = NDK_CONTAINER(q, struct ndk_qp, pub);
    uint32_t own;
    if (ndk_wire_route(ad, dest, &own))
        return ndk_wire_connect(c, qp, src, own, dest, ird, ord, pdata, pdata_len, rc, ctx);
    struct ndk_connector *b = new_connector(ad);
    if (!b)
        return STATUS_INSUFFICIENT_RESOURCES;
    struct ndk_event *ev = calloc(1, sizeof(*ev));
    if (!ev) {
        free(b);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    pthread_mutex_lock(&ad->lock);
    NTSTATUS st = c->state != CONN_IDLE ? STATUS_INVALID_DEVICE_STATE : ndk_qp_attach(qp, ad, c, &ndk_conn_qp_user);
    if (st != STATUS_SUCCESS) {
        pthread_mutex_unlock(&ad->lock);
        free(b);
        free(ev);
        return st;
    }
    c->qp = qp;
    memcpy(&c->remote, dest, dlen);
    c->remote_len = dlen;
    if (slen) {
        memcpy(&c->local, src, slen);
        c->local_len = slen;
    } else {
        memset(&c->local, 0, sizeof(c->local));
        c->local.ss_family = dest->sa_family;
        c->local_len = dlen;
    }
    c->my_ird = ird;
    c->my_ord = ord;
    ndk_conn_start(c, CONN_CONNECTING, rc, ctx);
    struct ndk_listener *l = ad->listeners;
    while (l && !(l->listening && !l->core.closing && ndk_addr_matches(&l->addr, dest)))
        l = l->next;
    if (!l) {
        /* Nobody listens there: ndk_conn_refused, reported through the callback. */
        ndk_conn_refused(c);
        pthread_mutex_unlock(&ad->lock);
        free(b);
        free(ev);
        return STATUS_PENDING;
    }
    b->state = CONN_INCOMING;
    b->peer = c;
    c->peer = b;
    memcpy(&b->local, dest, dlen);
    b->local_len = dlen;
    memcpy(&b->remote, &c->local, c->local_len);
    b->remote_len = c->local_len;
    b->peer_ird = ird;
    b->peer_ord = ord;
    if (pdata_len)
        memcpy(b->peer_data, pdata, pdata_len);
    b->peer_data_len = pdata_len;
    (void)ndk_core_link(&b->core); /* registry full: the connector is ndk_conn_refused by every call */
    ndk_event_set(ev, EV_CONNECT, (void (*)(void))l->connect_cb, l->connect_ctx, STATUS_SUCCESS, &b->pub.Header,
                  &l->core);
    ndk_listener_deliver(l, ev);
    pthread_mutex_unlock(&ad->lock);
    return STATUS_PENDING;
}

static NTSTATUS conn_connect_shared(NDK_CONNECTOR *cn, NDK_QP *q, NDK_SHARED_ENDPOINT *se, CONST PSOCKADDR dest,
                                    ULONG dest_len, ULONG ird, ULONG ord, CONST PVOID pdata, ULONG pdata_len,
                                    NDK_FN_REQUEST_COMPLETION rc, PVOID ctx)
{
    (void)cn;
    (void)q;
    (void)se;
    (void)dest;
    (void)dest_len;
    (void)ird;
    (void)ord;
    (void)pdata;
    (void)pdata_len;
    (void)rc;
    (void)ctx;
    return STATUS_NOT_SUPPORTED; /* no shared endpoints */
}

/* NdkAccept and NdkAcceptEx: disc is called as disc_kind says. */
static NTSTATUS accept_common(NDK_CONNECTOR *cn, NDK_QP *q, ULONG ird, ULONG ord, const VOID *pdata, ULONG pdata_len,
                              void (*disc)(void), int disc_kind, PVOID disc_ctx, NDK_FN_REQUEST_COMPLETION rc,
                              PVOID ctx)
{
    if (!ndk_obj_ok(cn, NdkObjectTypeConnector) || !ndk_obj_ok(q, NdkObjectTypeQp) || (!pdata && pdata_len))
        return STATUS_INVALID_PARAMETER;
    if (pdata_len > NDK_MAX_CALLEE_DATA)
        return STATUS_INVALID_BUFFER_SIZE;
    struct ndk_connector *b = conn_of(cn);
    struct ndk_adapter *ad = b->core.ad;
    struct ndk_qp *qp = NDK_CONTAINER(q, struct ndk_qp, pub);
    pthread_mutex_lock(&ad->lock);
    NTSTATUS st = b->state != CONN_INCOMING ? STATUS_INVALID_DEVICE_STATE : ndk_qp_usable(qp, ad);
    if (st == STATUS_SUCCESS && !b->wire && (!b->peer || b->peer->state != CONN_CONNECTING))
        st = STATUS_CONNECTION_ABORTED; /* the active side gave up */
    if (st == STATUS_SUCCESS)
        st = ndk_qp_attach(qp, ad, b, &ndk_conn_qp_user);
    if (st != STATUS_SUCCESS) {
        pthread_mutex_unlock(&ad->lock);
        return st;
    }
    struct ndk_connector *a = b->peer;
    b->qp = qp;
    b->my_ird = ird;
    b->my_ord = ord;
    b->disc_cb = disc;
    b->disc_kind = disc_kind;
    b->disc_ctx = disc_ctx;
    if (b->wire)
        return ndk_wire_accept(b, qp, ird, ord, pdata, pdata_len, rc, ctx);
    ndk_conn_start(b, CONN_ACCEPTING, rc, ctx);
    a->peer_ird = ird;
    a->peer_ord = ord;
    if (pdata_len)
        memcpy(a->peer_data, pdata, pdata_len);
    a->peer_data_len = pdata_len;
    a->state = CONN_CONNECT_DONE;
    ndk_queue_request_cb(ad, a->op_cb, a->op_ctx, STATUS_SUCCESS, &a->core);
    a->op_cb = NULL;
    pthread_mutex_unlock(&ad->lock);
    return STATUS_PENDING;
}

static NTSTATUS conn_accept(NDK_CONNECTOR *cn, NDK_QP *q, ULONG ird, ULONG ord, CONST PVOID pdata, ULONG pdata_len,
                            NDK_FN_DISCONNECT_EVENT_CALLBACK disc, PVOID disc_ctx, NDK_FN_REQUEST_COMPLETION rc,
                            PVOID ctx)
{
    return accept_common(cn, q, ird, ord, pdata, pdata_len, (void (*)(void))disc, EV_DISCONNECT, disc_ctx, rc, ctx);
}

static NTSTATUS conn_accept_ex(NDK_CONNECTOR *cn, NDK_QP *q, ULONG ird, ULONG ord, CONST PVOID pdata,
                               ULONG pdata_len, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX disc, PVOID disc_ctx,
                               NDK_FN_REQUEST_COMPLETION rc, PVOID ctx)
{
    return accept_common(cn, q, ird, ord, pdata, pdata_len, (void (*)(void))disc, EV_DISCONNECT_EX, disc_ctx, rc, ctx);
}

/* QP_CONNECT / QP_DISCONNECT replies of one connection step. */
static void step_reply(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS status, const uint8_t *body, size_t len)
{
    (void)body;
    (void)len;
    struct ndk_connector *a = r->arg;
    if (status != STATUS_SUCCESS && a->reply_status == STATUS_SUCCESS)
        a->reply_status = status;
    if (--a->replies_left == 0) {
        NTSTATUS st = a->reply_status;
        struct ndk_connector *b = a->peer;
        if (r->op == NF_OP_QP_CONNECT) {
            if (st == STATUS_SUCCESS && b && a->qp && b->qp) {
                ndk_qp_set_connected(a->qp, 1);
                ndk_qp_set_connected(b->qp, 1);
                a->state = b->state = CONN_CONNECTED;
            } else {
                if (st == STATUS_SUCCESS)
                    st = STATUS_CONNECTION_ABORTED;
                a->state = CONN_CLOSED;
                if (b)
                    b->state = CONN_CLOSED;
            }
            if (b && b->op_cb) {
                ndk_queue_request_cb(ad, b->op_cb, b->op_ctx, st, &b->core);
                b->op_cb = NULL;
            }
        } else {
            a->state = CONN_CLOSED;
        }
        if (a->op_cb) {
            ndk_queue_request_cb(ad, a->op_cb, a->op_ctx, st, &a->core);
            a->op_cb = NULL;
        }
    }
    ndk_unref_locked(&a->core);
    free(r);
}

/* Send the QP_CONNECT/QP_DISCONNECT pair of one step; returns PENDING (the
 * completion follows through step_reply) or an inline failure of the first send. */
static NTSTATUS send_step(struct ndk_connector *a, uint16_t op, const uint32_t msgs[2][2], int n)
{
    struct ndk_adapter *ad = a->core.ad;
    pthread_mutex_lock(&ad->lock);
    a->replies_left = n;
    a->reply_status = STATUS_SUCCESS;
    a->core.refs += n;
    pthread_mutex_unlock(&ad->lock);
    for (int i = 0; i < n; i++) {
        struct ndk_req *r = calloc(1, sizeof(*r));
        NTSTATUS st = STATUS_INSUFFICIENT_RESOURCES;
        if (r) {
            uint8_t msg[NF_MSG_HDR_SIZE + 8];
            memcpy(msg + NF_MSG_HDR_SIZE, msgs[i], 8);
            r->on_reply = step_reply;
            r->arg = a;
            r->gate = 1;
            st = ndk_req_send(ad, r, op, msg, sizeof(msg), 0);
        }
        if (st != STATUS_SUCCESS && st != STATUS_PENDING) {
            pthread_mutex_lock(&ad->lock);
            if (i == 0) {
                a->core.refs -= n;
                pthread_mutex_unlock(&ad->lock);
                free(r);
                return st;
            }
            /* The first went out: finish this one as failed. */
            r = r ? r : calloc(1, sizeof(*r));
            if (r) {
                r->op = op;
                r->arg = a;
                step_reply(ad, r, st, NULL, 0);
            }
            pthread_mutex_unlock(&ad->lock);
        }
    }
    return STATUS_PENDING;
}

/* With ad->lock held when c is in state (1); else nothing held (0). */
static int lock_in_state(struct ndk_connector *c, int state)
{
    pthread_mutex_lock(&c->core.ad->lock);
    if (c->state == state)
        return 1;
    pthread_mutex_unlock(&c->core.ad->lock);
    return 0;
}

/* cn as a live connector in state, with ad->lock held; else NULL, nothing held, and
 * *st says why (INVALID_PARAMETER, or wrong_state). */
static struct ndk_connector *lock_conn(NDK_CONNECTOR *cn, int state, NTSTATUS wrong_state, NTSTATUS *st)
{
    if (!ndk_obj_ok(cn, NdkObjectTypeConnector)) {
        *st = STATUS_INVALID_PARAMETER;
        return NULL;
    }
    struct ndk_connector *c = conn_of(cn);
    if (lock_in_state(c, state))
        return c;
    *st = wrong_state;
    return NULL;
}

/* NdkCompleteConnect and NdkCompleteConnectEx: disc is called as disc_kind says. */
static NTSTATUS complete_common(NDK_CONNECTOR *cn, void (*disc)(void), int disc_kind, PVOID disc_ctx,
                                NDK_FN_REQUEST_COMPLETION rc, PVOID ctx)
{
    NTSTATUS st;
    struct ndk_connector *a = lock_conn(cn, CONN_CONNECT_DONE, STATUS_INVALID_DEVICE_STATE, &st);
    if (!a)
        return st;
    struct ndk_adapter *ad = a->core.ad;
    a->disc_cb = disc;
    a->disc_kind = disc_kind;
    a->disc_ctx = disc_ctx;
    if (a->wire)
        return ndk_wire_complete(a, rc, ctx);
    struct ndk_connector *b = a->peer;
    if (!b || !b->qp || !a->qp) {
        pthread_mutex_unlock(&ad->lock);
        return STATUS_CONNECTION_ABORTED;
    }
    ndk_conn_start(a, CONN_COMPLETING, rc, ctx);
    const uint32_t msgs[2][2] = {{a->qp->qpn, b->qp->qpn}, {b->qp->qpn, a->qp->qpn}};
    pthread_mutex_unlock(&ad->lock);
    st = send_step(a, NF_OP_QP_CONNECT, msgs, 2);
    if (st != STATUS_PENDING)
        ndk_conn_end(a, CONN_CONNECT_DONE);
    return st;
}

static NTSTATUS conn_complete(NDK_CONNECTOR *cn, NDK_FN_DISCONNECT_EVENT_CALLBACK disc, PVOID disc_ctx,
                              NDK_FN_REQUEST_COMPLETION rc, PVOID ctx)
{
    return complete_common(cn, (void (*)(void))disc, EV_DISCONNECT, disc_ctx, rc, ctx);
}

static NTSTATUS conn_complete_ex(NDK_CONNECTOR *cn, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX disc, PVOID disc_ctx,
                                 NDK_FN_REQUEST_COMPLETION rc, PVOID ctx)
{
    return complete_common(cn, (void (*)(void))disc, EV_DISCONNECT_EX, disc_ctx, rc, ctx);
}

static NTSTATUS conn_reject(NDK_CONNECTOR *cn, CONST PVOID pdata, ULONG pdata_len)
{
    if (!ndk_obj_ok(cn, NdkObjectTypeConnector) || (!pdata && pdata_len))
        return STATUS_INVALID_PARAMETER;
    if (pdata_len > NDK_MAX_CALLEE_DATA)
        return STATUS_INVALID_BUFFER_SIZE;
    struct ndk_connector *b = conn_of(cn);
    struct ndk_adapter *ad = b->core.ad;
    if (b->wire)
        return ndk_wire_reject(b, pdata, pdata_len);
    if (!lock_in_state(b, CONN_INCOMING))
        return STATUS_INVALID_DEVICE_STATE;
    struct ndk_connector *a = b->peer;
    b->state = CONN_CLOSED;
    b->peer = NULL;
    if (a && a->state == CONN_CONNECTING) {
        if (pdata_len)
            memcpy(a->peer_data, pdata, pdata_len);
        a->peer_data_len = pdata_len;
        ndk_conn_refused(a);
    }
    pthread_mutex_unlock(&ad->lock);
    return STATUS_SUCCESS;
}

static NTSTATUS conn_get_data(NDK_CONNECTOR *cn, ULONG *ird, ULONG *ord, VOID *pdata, ULONG *pdata_len)
{
    if (!ndk_obj_ok(cn, NdkObjectTypeConnector))
        return STATUS_INVALID_PARAMETER;
    struct ndk_connector *c = conn_of(cn);
    struct ndk_adapter *ad = c->core.ad;
    NTSTATUS st = STATUS_SUCCESS;
    pthread_mutex_lock(&ad->lock);
    if (c->state == CONN_IDLE || c->state == CONN_CONNECTING) {
        st = STATUS_INVALID_DEVICE_STATE; /* nothing received from the peer yet */
    } else if (pdata_len && !pdata && *pdata_len) {
        st = STATUS_INVALID_PARAMETER;
    } else if (pdata_len) {
        /* As much as fits; the length the data needs (NULL with 0 asks for it alone). */
        ULONG rds = c->peer_data_len;
        if (pdata)
            memcpy(pdata, c->peer_data, *pdata_len < rds ? *pdata_len : rds);
        if (pdata && *pdata_len < rds)
            st = STATUS_BUFFER_TOO_SMALL;
        *pdata_len = rds;
    }
    /* Effective read limits from this side: the peer's opposite limit, capped by the
     * adapter's and, once this side asked for its own (connect, accept), by those. */
    ULONG in = c->peer_ord < NDK_MAX_READ_LIMIT ? c->peer_ord : NDK_MAX_READ_LIMIT;
    ULONG out = c->peer_ird < NDK_MAX_READ_LIMIT ? c->peer_ird : NDK_MAX_READ_LIMIT;
    if (c->state != CONN_INCOMING) {
        in = in < c->my_ird ? in : c->my_ird;
        out = out < c->my_ord ? out : c->my_ord;
    }
    if (st == STATUS_SUCCESS || st == STATUS_BUFFER_TOO_SMALL) {
        if (ird)
            *ird = in;
        if (ord)
            *ord = out;
    }
    pthread_mutex_unlock(&ad->lock);
    return st;
}

static NTSTATUS conn_local_addr(NDK_CONNECTOR *cn, PSOCKADDR addr, ULONG *len)
{
    return ndk_conn_get_addr(cn ? &cn->Header : NULL, NdkObjectTypeConnector, 0, addr, len);
}

static NTSTATUS conn_peer_addr(NDK_CONNECTOR *cn, PSOCKADDR addr, ULONG *len)
{
    return ndk_conn_get_addr(cn ? &cn->Header : NULL, NdkObjectTypeConnector, 1, addr, len);
}

static NTSTATUS conn_disconnect(NDK_CONNECTOR *cn, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx)
{
    NTSTATUS st;
    struct ndk_connector *a = lock_conn(cn, CONN_CONNECTED, STATUS_CONNECTION_INVALID, &st);
    if (!a)
        return st;
    struct ndk_adapter *ad = a->core.ad;
    if (a->wire)
        return ndk_wire_disconnect(a, rc, ctx);
    uint32_t msgs[2][2] = {{0, 0}, {0, 0}};
    int n = 0;
    if (a->qp) {
        ndk_qp_set_connected(a->qp, 0);
        msgs[n][0] = a->qp->qpn;
        n++;
    }
    struct ndk_connector *b = a->peer;
    if (b) {
        if (b->qp) {
            msgs[n][0] = b->qp->qpn;
            n++;
        }
        if (b->peer == a)
            ndk_conn_peer_lost(b);
    }
    a->peer = NULL;
    ndk_conn_start(a, CONN_DISCONNECTING, rc, ctx);
    pthread_mutex_unlock(&ad->lock);
    st = n ? send_step(a, NF_OP_QP_DISCONNECT, (const uint32_t(*)[2])msgs, n) : STATUS_SUCCESS;
    if (st != STATUS_PENDING) {
        /* No QP to tell the board of, or the link is gone (the board forgot the QPs
         * anyway): disconnected inline. */
        ndk_conn_end(a, CONN_CLOSED);
        return STATUS_SUCCESS;
    }
    return st;
}

const NDK_CONNECTOR_DISPATCH ndk_conn_dispatch = {
    .NdkCloseConnector = conn_close,
    .NdkQueryExtension = ndk_query_extension,
    .NdkConnect = conn_connect,
    .NdkConnectWithSharedEndpoint = conn_connect_shared,
    .NdkCompleteConnect = conn_complete,
    .NdkAccept = conn_accept,
    .NdkReject = conn_reject,
    .NdkGetConnectionData = conn_get_data,
    .NdkGetLocalAddress = conn_local_addr,
    .NdkGetPeerAddress = conn_peer_addr,
    .NdkDisconnect = conn_disconnect,
    .NdkCompleteConnectEx = conn_complete_ex,
    .NdkAcceptEx = conn_accept_ex,
};

/* ------------------------------------------------------------------------- */
/* The board's connection events                                             */

/* Under ad->lock: a REQ came to one of our wire listeners. */
static void on_request(struct ndk_adapter *ad, const struct nf_cm_event *ev, const uint8_t *pdata)
{
    struct ndk_listener *l = ad->listeners;
    while (l && !(l->wire_id == ev->listen_id && l->listening && !l->core.closing))
        l = l->next;
    struct ndk_connector *b = l ? new_connector(ad) : NULL;
    struct ndk_event *e = b ? calloc(1, sizeof(*e)) : NULL;
    if (!e || !ndk_core_link(&b->core)) {
        free(b); /* nobody to hand it to: the REQ is rejected */
        free(e);
        ndk_cm_defer(ad, NF_OP_CM_REJECT, ev->conn_id);
        return;
    }
    b->state = CONN_INCOMING;
    b->wire = 1;
    ndk_wire_link(b, ev->conn_id);
    ndk_addr_from_word(&b->local, &b->local_len, ev->local_ip, ev->local_port);
    ndk_addr_from_word(&b->remote, &b->remote_len, ev->peer_ip, ev->peer_port);
    b->peer_ird = ev->resources;
    b->peer_ord = ev->depth;
    b->peer_data_len = ev->pdata_len < NDK_MAX_CALLER_DATA ? ev->pdata_len : NDK_MAX_CALLER_DATA;
    memcpy(b->peer_data, pdata, b->peer_data_len);
    ndk_event_set(e, EV_CONNECT, (void (*)(void))l->connect_cb, l->connect_ctx, STATUS_SUCCESS, &b->pub.Header,
                  &l->core);
    ndk_listener_deliver(l, e);
}

void ndk_conn_on_cm_event(struct ndk_adapter *ad, const uint8_t *body, size_t len)
{
    struct nf_cm_event ev;
    const uint8_t *pdata;
    if (!ndk_cm_decode(body, len, &ev, &pdata))
        return;
    if (ev.type == NF_CM_EVENT_TYPE_REQUEST) {
        on_request(ad, &ev, pdata);
        return;
    }
    ndk_wire_on_event(ad, &ev, pdata);
}
