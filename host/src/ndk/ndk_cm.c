/* SPDX-License-Identifier: Apache-2.0 */
/* The board's connection manager contract (proto/link.toml CM_*): the requests that
 * listen, connect, accept, reject, complete and disconnect on the wire, and the
 * CM_EVENT message decoded. The firmware speaks IB CM on QP1; ndk_conn.c keeps the
 * connectors' state and calls these. */
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"

/* The largest CM request: CM_ACCEPT with a REP's private data. */
#define CM_MSG_MAX (NF_MSG_HDR_SIZE + NF_CM_ACCEPT_REQ_SIZE + NF_CM_REP_PDATA)

/* A synchronous CM request whose reply also runs hook under ad->lock on the link
 * thread, so that a connection id is known before any CM_EVENT naming it. */
struct cm_call {
    struct ndk_req r;
    void (*hook)(void *arg, const uint8_t *body, size_t len);
    void *arg;
};

static void cm_reply(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS status, const uint8_t *body, size_t len)
{
    struct cm_call *c = NDK_CONTAINER(r, struct cm_call, r);
    if (status == STATUS_SUCCESS && body && r->out) {
        size_t n = len < r->out_cap ? len : r->out_cap;
        memcpy(r->out, body, n);
        r->out_len = n;
        if (n < r->out_cap)
            status = STATUS_INTERNAL_ERROR;
    }
    if (status == STATUS_SUCCESS && c->hook)
        c->hook(c->arg, r->out, r->out_len);
    r->status = status;
    r->done = 1;
    pthread_cond_broadcast(&ad->cond);
}

/* Send fixed (size bytes) then pdata (padded to 8) as op; wait for the reply. */
static NTSTATUS cm_call(struct ndk_adapter *ad, uint16_t op, const void *fixed, size_t size, const void *pdata,
                        size_t pdata_len, void *out, size_t out_cap,
                        void (*hook)(void *arg, const uint8_t *body, size_t len), void *arg)
{
    uint8_t msg[CM_MSG_MAX];
    size_t len = NF_MSG_HDR_SIZE + size + ((pdata_len + 7u) & ~(size_t)7u);
    if (len > sizeof(msg))
        return STATUS_INVALID_BUFFER_SIZE;
    memset(msg, 0, len);
    memcpy(msg + NF_MSG_HDR_SIZE, fixed, size);
    if (pdata_len)
        memcpy(msg + NF_MSG_HDR_SIZE + size, pdata, pdata_len);
    struct cm_call c;
    memset(&c, 0, sizeof(c));
    c.r.on_reply = cm_reply;
    c.r.out = out;
    c.r.out_cap = out_cap;
    c.hook = hook;
    c.arg = arg;
    NTSTATUS st = ndk_req_send(ad, &c.r, op, msg, len, 0);
    if (st != STATUS_SUCCESS && st != STATUS_PENDING)
        return st;
    pthread_mutex_lock(&ad->lock);
    ndk_wait_req(ad, &c.r);
    pthread_mutex_unlock(&ad->lock);
    return c.r.status;
}

int ndk_cm_port_ipv4(struct ndk_adapter *ad, uint32_t *ip)
{
    NDKFPGA_PORT_ADDRESS a;
    memset(&a, 0, sizeof(a));
    if (NdkFpgaPortAddress(&ad->pub, 0, &a) != STATUS_SUCCESS || !a.PrefixLength)
        return 0;
    *ip = (uint32_t)a.Ipv4[0] | (uint32_t)a.Ipv4[1] << 8 | (uint32_t)a.Ipv4[2] << 16 | (uint32_t)a.Ipv4[3] << 24;
    return 1;
}

NTSTATUS ndk_cm_listen(struct ndk_adapter *ad, uint32_t ip, uint32_t port, uint32_t *listen_id, uint32_t *port_out)
{
    struct nf_cm_listen_req req = {ip, port};
    struct nf_cm_listen_rep rep;
    memset(&rep, 0, sizeof(rep));
    NTSTATUS st = cm_call(ad, NF_OP_CM_LISTEN, &req, sizeof(req), NULL, 0, &rep, sizeof(rep), NULL, NULL);
    if (st == STATUS_SUCCESS) {
        *listen_id = rep.listen_id;
        *port_out = rep.port;
    }
    return st;
}

void ndk_cm_forget_id(struct ndk_adapter *ad, uint16_t op, uint32_t id)
{
    struct nf_cm_id_req req = {id, 0};
    if (op == NF_OP_CM_REJECT) {
        struct nf_cm_reject_req rj = {id, 0};
        ndk_send_forget(ad, op, &rj, sizeof(rj));
        return;
    }
    ndk_send_forget(ad, op, &req, sizeof(req));
}

NTSTATUS ndk_cm_connect(struct ndk_adapter *ad, const struct nf_cm_connect_req *req, const void *pdata,
                        void (*hook)(void *arg, const uint8_t *body, size_t len), void *arg)
{
    struct nf_cm_connect_rep rep;
    return cm_call(ad, NF_OP_CM_CONNECT, req, sizeof(*req), pdata, req->pdata_len, &rep, sizeof(rep), hook, arg);
}

NTSTATUS ndk_cm_accept(struct ndk_adapter *ad, const struct nf_cm_accept_req *req, const void *pdata)
{
    return cm_call(ad, NF_OP_CM_ACCEPT, req, sizeof(*req), pdata, req->pdata_len, NULL, 0, NULL, NULL);
}

NTSTATUS ndk_cm_reject(struct ndk_adapter *ad, uint32_t conn_id, const void *pdata, uint32_t pdata_len)
{
    struct nf_cm_reject_req req = {conn_id, pdata_len};
    return cm_call(ad, NF_OP_CM_REJECT, &req, sizeof(req), pdata, pdata_len, NULL, 0, NULL, NULL);
}

NTSTATUS ndk_cm_complete(struct ndk_adapter *ad, uint32_t conn_id)
{
    struct nf_cm_id_req req = {conn_id, 0};
    return cm_call(ad, NF_OP_CM_COMPLETE, &req, sizeof(req), NULL, 0, NULL, 0, NULL, NULL);
}

NTSTATUS ndk_cm_disconnect(struct ndk_adapter *ad, uint32_t qpn)
{
    struct nf_qp_req req = {qpn, 0};
    return cm_call(ad, NF_OP_CM_DISCONNECT, &req, sizeof(req), NULL, 0, NULL, 0, NULL, NULL);
}

int ndk_cm_decode(const uint8_t *body, size_t len, struct nf_cm_event *ev, const uint8_t **pdata)
{
    if (len < sizeof(*ev))
        return 0;
    memcpy(ev, body, sizeof(*ev));
    if (ev->pdata_len > len - sizeof(*ev))
        ev->pdata_len = (uint32_t)(len - sizeof(*ev));
    *pdata = body + sizeof(*ev);
    return 1;
}

/* A request the link thread may not send itself (it never blocks on the link): the
 * callback thread sends it. */
struct cm_deferred {
    struct ndk_adapter *ad;
    uint16_t op;
    uint32_t id;
};

static void deferred_run(void *arg)
{
    struct cm_deferred *d = arg;
    ndk_cm_forget_id(d->ad, d->op, d->id);
    free(d);
}

void ndk_cm_defer(struct ndk_adapter *ad, uint16_t op, uint32_t id)
{
    struct cm_deferred *d = malloc(sizeof(*d));
    if (!d)
        return; /* the firmware's retries end the connection instead */
    d->ad = ad;
    d->op = op;
    d->id = id;
    ndk_queue_event(ad, ndk_event_new(EV_CALL, (void (*)(void))deferred_run, d, STATUS_SUCCESS, NULL, NULL));
}
