/* SPDX-License-Identifier: Apache-2.0 */
/* NDKPI listener: the addresses and ports this adapter takes connections on. A
 * listener is in the adapter's list for loopback connects and, when the port has an
 * address, also at the board's CM (CM_LISTEN) for connects from the wire. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"

/* Under ad->lock: hand an incoming connector to the listener (or its backlog). */
void ndk_listener_deliver(struct ndk_listener *l, struct ndk_event *ev)
{
    if (l->paused)
        ndk_event_append(&l->backlog, &l->backlog_tail, ev);
    else
        ndk_queue_event(l->core.ad, ev);
}

static void listener_fini(struct ndk_core *c)
{
    struct ndk_listener *l = NDK_CONTAINER(c, struct ndk_listener, core);
    while (l->backlog) {
        struct ndk_event *ev = l->backlog;
        l->backlog = ev->next;
        free(ev);
    }
}

static void listener_teardown(struct ndk_core *c)
{
    struct ndk_listener *l = NDK_CONTAINER(c, struct ndk_listener, core);
    struct ndk_adapter *ad = c->ad;
    pthread_mutex_lock(&ad->lock);
    for (struct ndk_listener **pp = &ad->listeners; *pp; pp = &(*pp)->next) {
        if (*pp == l) {
            *pp = l->next;
            break;
        }
    }
    l->listening = 0;
    /* Connections nobody will see: refuse them. */
    while (l->backlog) {
        struct ndk_event *ev = l->backlog;
        l->backlog = ev->next;
        struct ndk_connector *b = NDK_CONTAINER(ev->obj, struct ndk_connector, pub.Header);
        if (b->peer && b->peer->state == CONN_CONNECTING)
            ndk_conn_refused(b->peer);
        if (b->wire_id)
            ndk_cm_defer(ad, NF_OP_CM_REJECT, b->wire_id);
        ndk_wire_unlink(b);
        b->peer = NULL;
        b->state = CONN_CLOSED;
        ndk_unref_locked(&l->core);
        free(ev);
    }
    l->backlog_tail = NULL;
    uint32_t lid = l->wire_id;
    l->wire_id = 0;
    pthread_mutex_unlock(&ad->lock);
    if (lid)
        ndk_cm_forget_id(ad, NF_OP_CM_UNLISTEN, lid);
}

static const struct ndk_type listener_type = {NdkObjectTypeListener, sizeof(struct ndk_listener),
                                              offsetof(struct ndk_listener, core), listener_teardown, listener_fini};

static NTSTATUS listener_close(NDK_OBJECT_HEADER *obj, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx)
{
    if (!ndk_obj_ok(obj, NdkObjectTypeListener))
        return STATUS_SUCCESS;
    struct ndk_listener *l = NDK_CONTAINER(obj, struct ndk_listener, pub.Header);
    /* Stop new connections at once, before the close possibly pends. */
    pthread_mutex_lock(&l->core.ad->lock);
    l->listening = 0;
    pthread_mutex_unlock(&l->core.ad->lock);
    return ndk_close(&l->core, cb, ctx);
}

NTSTATUS ndk_create_listener(NDK_ADAPTER *a, NDK_FN_CONNECT_EVENT_CALLBACK ev, PVOID ev_ctx,
                             NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_LISTENER **out)
{
    (void)cc; /* made on the host: done inline */
    (void)ctx;
    if (out)
        *out = NULL;
    struct ndk_adapter *ad = ndk_adapter_live(a);
    if (!ad || !out || !ev)
        return STATUS_INVALID_PARAMETER;
    struct ndk_listener *l = ndk_obj_new(ad, &listener_type, &ad->core, NULL, NULL);
    if (!l)
        return STATUS_INSUFFICIENT_RESOURCES;
    l->pub.Dispatch = &ndk_listener_dispatch;
    l->connect_cb = ev;
    l->connect_ctx = ev_ctx;
    NTSTATUS st = ndk_obj_publish(&l->core);
    if (st == STATUS_SUCCESS)
        *out = &l->pub;
    return st;
}

/* Under ad->lock: may l listen on addr (not yet listening, the address not taken)? */
static NTSTATUS listen_check_locked(const struct ndk_listener *l, const SOCKADDR *addr)
{
    if (l->listening || l->addr_len || l->core.closing)
        return STATUS_INVALID_DEVICE_STATE;
    for (struct ndk_listener *o = l->core.ad->listeners; o; o = o->next)
        if (o->addr.ss_family == addr->sa_family && ndk_addr_matches(&o->addr, addr))
            return STATUS_SHARING_VIOLATION; /* address and port in use (NdkListen's documentation) */
    return STATUS_SUCCESS;
}

static NTSTATUS listen_check(const struct ndk_listener *l, const SOCKADDR *addr)
{
    pthread_mutex_lock(&l->core.ad->lock);
    NTSTATUS st = listen_check_locked(l, addr);
    pthread_mutex_unlock(&l->core.ad->lock);
    return st;
}

static NTSTATUS listener_listen(NDK_LISTENER *ln, CONST PSOCKADDR addr, ULONG addr_len, NDK_FN_REQUEST_COMPLETION rc,
                                PVOID ctx)
{
    (void)rc;
    (void)ctx;
    if (!ndk_obj_ok(ln, NdkObjectTypeListener))
        return STATUS_INVALID_PARAMETER;
    ULONG alen = ndk_addr_len(addr, addr_len);
    if (!alen)
        return STATUS_INVALID_PARAMETER;
    struct ndk_listener *l = NDK_CONTAINER(ln, struct ndk_listener, pub);
    struct ndk_adapter *ad = l->core.ad;
    NTSTATUS st = listen_check(l, addr);
    if (st != STATUS_SUCCESS)
        return st;
    /* With an address on the port, the board listens too: connects from the wire. */
    uint32_t own, lid = 0, port = 0;
    uint32_t ip = addr->sa_family == AF_INET ? ndk_addr_word(addr) : 0;
    if (addr->sa_family == AF_INET && (ip & 0xFFu) != 127u && ndk_cm_port_ipv4(ad, &own)) {
        if (ip && ip != own)
            return STATUS_INVALID_ADDRESS; /* not an address of this adapter */
        st = ndk_cm_listen(ad, ip, ntohs(((const struct sockaddr_in *)(const void *)addr)->sin_port),
                           &lid, &port);
        if (st != STATUS_SUCCESS)
            return st;
    }
    pthread_mutex_lock(&ad->lock);
    st = listen_check_locked(l, addr);
    if (st == STATUS_SUCCESS) {
        memcpy(&l->addr, addr, alen);
        l->addr_len = alen;
        if (lid)
            ((struct sockaddr_in *)(void *)&l->addr)->sin_port = htons((uint16_t)port);
        l->wire_id = lid;
        l->listening = 1;
        l->next = ad->listeners;
        ad->listeners = l;
    }
    pthread_mutex_unlock(&ad->lock);
    if (st != STATUS_SUCCESS && lid)
        ndk_cm_forget_id(ad, NF_OP_CM_UNLISTEN, lid);
    return st;
}

static NTSTATUS listener_local_addr(NDK_LISTENER *ln, PSOCKADDR addr, ULONG *len)
{
    return ndk_conn_get_addr(ln ? &ln->Header : NULL, NdkObjectTypeListener, 0, addr, len);
}

static VOID listener_control(NDK_LISTENER *ln, BOOLEAN pause)
{
    if (!ndk_obj_ok(ln, NdkObjectTypeListener))
        return;
    struct ndk_listener *l = NDK_CONTAINER(ln, struct ndk_listener, pub);
    struct ndk_adapter *ad = l->core.ad;
    pthread_mutex_lock(&ad->lock);
    l->paused = pause ? 1 : 0;
    if (!l->paused) {
        while (l->backlog) {
            struct ndk_event *ev = l->backlog;
            l->backlog = ev->next;
            ndk_queue_event(ad, ev);
        }
        l->backlog_tail = NULL;
    }
    pthread_mutex_unlock(&ad->lock);
}

const NDK_LISTENER_DISPATCH ndk_listener_dispatch = {
    .NdkCloseListener = listener_close,
    .NdkQueryExtension = ndk_query_extension,
    .NdkListen = listener_listen,
    .NdkGetLocalAddress = listener_local_addr,
    .NdkControlConnectEvents = listener_control,
};
