/* SPDX-License-Identifier: Apache-2.0 */
/* What connectors of both kinds share: socket addresses, the steps' state changes
 * and completions, the QP a connection holds, and the adapter's list of connections
 * the board's CM names by id. Everything here runs under ad->lock unless it says. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"

ULONG ndk_addr_len(const SOCKADDR *a, ULONG len)
{
    if (!a)
        return 0;
    if (a->sa_family == AF_INET && len >= sizeof(struct sockaddr_in))
        return sizeof(struct sockaddr_in);
    if (a->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))
        return sizeof(struct sockaddr_in6);
    return 0;
}

/* Does a connect to dest reach a listener bound to bound? */
int ndk_addr_matches(const struct sockaddr_storage *bound, const SOCKADDR *dest)
{
    if (bound->ss_family != dest->sa_family)
        return 0;
    if (dest->sa_family == AF_INET) {
        const struct sockaddr_in *b = (const struct sockaddr_in *)(const void *)bound;
        const struct sockaddr_in *d = (const struct sockaddr_in *)(const void *)dest;
        return b->sin_port == d->sin_port &&
               (b->sin_addr.s_addr == htonl(INADDR_ANY) || b->sin_addr.s_addr == d->sin_addr.s_addr);
    }
    const struct sockaddr_in6 *b = (const struct sockaddr_in6 *)(const void *)bound;
    const struct sockaddr_in6 *d = (const struct sockaddr_in6 *)(const void *)dest;
    return b->sin6_port == d->sin6_port &&
           (!memcmp(&b->sin6_addr, &in6addr_any, sizeof(b->sin6_addr)) ||
            !memcmp(&b->sin6_addr, &d->sin6_addr, sizeof(b->sin6_addr)));
}

static NTSTATUS copy_addr(const struct sockaddr_storage *a, ULONG alen, SOCKADDR *out, ULONG *out_len)
{
    if (!out_len)
        return STATUS_INVALID_PARAMETER;
    if (alen == 0)
        return STATUS_INVALID_DEVICE_STATE; /* no address yet */
    if (!out || *out_len < alen) {
        *out_len = alen;
        return STATUS_BUFFER_TOO_SMALL;
    }
    memcpy(out, a, alen);
    *out_len = alen;
    return STATUS_SUCCESS;
}

/* NdkGetLocalAddress / NdkGetPeerAddress of a connector or a listener: the address
 * under the adapter lock, which guards every connector and listener address. */
NTSTATUS ndk_conn_get_addr(NDK_OBJECT_HEADER *obj, NDK_OBJECT_TYPE type, int peer, SOCKADDR *out, ULONG *out_len)
{
    if (!ndk_obj_ok(obj, type))
        return STATUS_INVALID_PARAMETER;
    struct ndk_core *core;
    const struct sockaddr_storage *a;
    const ULONG *alen;
    if (type == NdkObjectTypeListener) {
        struct ndk_listener *l = NDK_CONTAINER(obj, struct ndk_listener, pub.Header);
        core = &l->core;
        a = &l->addr;
        alen = &l->addr_len;
    } else {
        struct ndk_connector *c = NDK_CONTAINER(obj, struct ndk_connector, pub.Header);
        core = &c->core;
        a = peer ? &c->remote : &c->local;
        alen = peer ? &c->remote_len : &c->local_len;
    }
    pthread_mutex_lock(&core->ad->lock);
    NTSTATUS st = copy_addr(a, *alen, out, out_len);
    pthread_mutex_unlock(&core->ad->lock);
    return st;
}

/* An IPv4 word (first byte in 7:0) as a sockaddr_in, and back. */
void ndk_addr_from_word(struct sockaddr_storage *ss, ULONG *len, uint32_t ip, uint32_t port)
{
    struct sockaddr_in *s = (struct sockaddr_in *)(void *)ss;
    uint8_t b[4] = {(uint8_t)ip, (uint8_t)(ip >> 8), (uint8_t)(ip >> 16), (uint8_t)(ip >> 24)};
    memset(ss, 0, sizeof(*ss));
    s->sin_family = AF_INET;
    s->sin_port = htons((uint16_t)port);
    memcpy(&s->sin_addr, b, 4);
    *len = sizeof(*s);
}

uint32_t ndk_addr_word(const SOCKADDR *a)
{
    uint8_t b[4];
    memcpy(b, &((const struct sockaddr_in *)(const void *)a)->sin_addr, 4);
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Under ad->lock. */
void ndk_wire_link(struct ndk_connector *c, uint32_t id)
{
    c->wire_id = id;
    c->wire_next = c->core.ad->wire_conns;
    c->core.ad->wire_conns = c;
}

void ndk_wire_unlink(struct ndk_connector *c)
{
    for (struct ndk_connector **pp = &c->core.ad->wire_conns; *pp; pp = &(*pp)->wire_next)
        if (*pp == c) {
            *pp = c->wire_next;
            break;
        }
    c->wire_id = 0;
}

struct ndk_connector *ndk_wire_find(struct ndk_adapter *ad, uint32_t id)
{
    struct ndk_connector *c = ad->wire_conns;
    while (c && c->wire_id != id)
        c = c->wire_next;
    return id ? c : NULL;
}

void ndk_conn_disc_event(struct ndk_connector *c)
{
    if (c->disc_cb)
        ndk_queue_event(c->core.ad, ndk_event_new(c->disc_kind, c->disc_cb, c->disc_ctx,
                                                  STATUS_SUCCESS, NULL, &c->core));
}

/* Under ad->lock: c enters state with an operation that completes through rc. */
void ndk_conn_start(struct ndk_connector *c, int state, NDK_FN_REQUEST_COMPLETION rc, void *ctx)
{
    c->state = state;
    c->op_cb = rc;
    c->op_ctx = ctx;
}

/* An operation sent nothing (no callback follows): c goes to state. Takes ad->lock. */
void ndk_conn_end(struct ndk_connector *c, int state)
{
    pthread_mutex_lock(&c->core.ad->lock);
    c->state = state;
    c->op_cb = NULL;
    pthread_mutex_unlock(&c->core.ad->lock);
}

/* Under ad->lock: c's operation completes with st. */
void ndk_conn_finish(struct ndk_connector *c, NTSTATUS st)
{
    if (c->op_cb)
        ndk_queue_request_cb(c->core.ad, c->op_cb, c->op_ctx, st, &c->core);
    c->op_cb = NULL;
}

/* Under ad->lock: c no longer uses its QP. */
void ndk_conn_release_qp(struct ndk_connector *c)
{
    if (c->qp)
        ndk_qp_detach(c->qp, c);
    c->qp = NULL;
}

/* Under ad->lock: the active side's NdkConnect completes STATUS_CONNECTION_REFUSED. */
void ndk_conn_refused(struct ndk_connector *a)
{
    a->state = CONN_CLOSED;
    a->peer = NULL;
    ndk_conn_release_qp(a);
    ndk_queue_request_cb(a->core.ad, a->op_cb, a->op_ctx, STATUS_CONNECTION_REFUSED, &a->core);
    a->op_cb = NULL;
}

/* Under ad->lock: the peer of c went away (closed or disconnected from its side). */
void ndk_conn_peer_lost(struct ndk_connector *c)
{
    int was_connected = c->state == CONN_CONNECTED;
    if (c->qp)
        ndk_qp_set_connected(c->qp, 0);
    if (c->state == CONN_CONNECTING || c->state == CONN_ACCEPTING) {
        ndk_queue_request_cb(c->core.ad, c->op_cb, c->op_ctx, STATUS_CONNECTION_ABORTED, &c->core);
        c->op_cb = NULL;
    }
    c->peer = NULL;
    if (c->state != CONN_DISCONNECTING && c->state != CONN_COMPLETING)
        c->state = CONN_CLOSED;
    if (was_connected)
        ndk_conn_disc_event(c);
}

/* The connector's QP is going away. */
static void qp_gone(void *user)
{
    struct ndk_connector *c = user;
    c->qp = NULL;
    if (c->state == CONN_CONNECTED) {
        c->state = CONN_CLOSED;
        if (c->peer && c->peer->peer == c) {
            ndk_conn_peer_lost(c->peer);
            c->peer = NULL;
        }
    }
}

/* A request of the connection's QP ran out of the transport's retries: the peer
 * stopped answering, and the consumer hears of it once, as from the peer's DREQ. */
static void qp_lost(void *user)
{
    struct ndk_connector *c = user;
    if (c->wire && c->state == CONN_CONNECTED && !c->peer_gone) {
        c->peer_gone = 1;
        ndk_conn_disc_event(c);
    }
}

const struct ndk_qp_user ndk_conn_qp_user = {qp_gone, qp_lost};
