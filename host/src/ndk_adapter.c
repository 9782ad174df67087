/* NDKPI adapter: open/close, the link glue (requests and replies), the callback
 * thread, object lifetime (references, close ordering), adapter info, buffers
 * (adapter memory) and LAMs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "ndk_internal.h"
#ifdef NF_WITH_BOARD_TRANSPORTS
#include "nf_ftdi.h"
#include "transport_board.h"
#endif

/* How long NdkFpgaCloseAdapter waits for replies still in flight before it stops
 * the link anyway (then everything outstanding completes STATUS_CANCELLED). */
#define CLOSE_DRAIN_MS 1000
/* A request, or a QP's oldest work request that reports a completion, with no
 * answer from a live link for this long completes STATUS_IO_TIMEOUT
 * ($NDKFPGA_REQUEST_TIMEOUT_MS overrides; docs/guarantees.md). */
#define DEFAULT_REQUEST_TIMEOUT_MS 30000u
/* How often the callback thread looks for requests past their deadline. */
#define WATCH_PERIOD_MS 100u

uint64_t ndk_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}


/* ------------------------------------------------------------------------- */
/* Registry of live objects (every adapter of the process): a handle handed to any
 * call is used only when it is one this library created and has not freed, never
 * because its memory looks right. Open addressing over the header's address;
 * lookups take no lock (the posting path): an insertion or removal is one atomic
 * store, a rebuild (rare: tombstones) bumps reg_seq around it so a lookup that
 * overlapped one looks again. */
#define REG_BITS 16u
#define REG_SIZE (1u << REG_BITS)
#define REG_TOMB ((uintptr_t)1)
static uintptr_t reg_slot[REG_SIZE];
static unsigned reg_seq;
static uint32_t reg_live, reg_tombs;
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;

static uint32_t reg_hash(uintptr_t k)
{
    return (uint32_t)(((uint64_t)k * 0x9E3779B97F4A7C15ull) >> (64u - REG_BITS));
}

int ndk_live(const void *obj)
{
    uintptr_t k = (uintptr_t)obj;
    if (k <= REG_TOMB)
        return 0;
    for (;;) {
        unsigned s0 = __atomic_load_n(&reg_seq, __ATOMIC_ACQUIRE);
        int found = 0;
        if (!(s0 & 1u)) {
            for (uint32_t i = reg_hash(k), n = 0; n < REG_SIZE; i = (i + 1u) & (REG_SIZE - 1u), n++) {
                uintptr_t v = __atomic_load_n(&reg_slot[i], __ATOMIC_ACQUIRE);
                if (v == k) {
                    found = 1;
                    break;
                }
                if (v == 0)
                    break;
            }
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (!(s0 & 1u) && __atomic_load_n(&reg_seq, __ATOMIC_RELAXED) == s0)
            return found;
    }
}

static void reg_put(uintptr_t k)
{
    uint32_t i = reg_hash(k);
    while (reg_slot[i] > REG_TOMB)
        i = (i + 1u) & (REG_SIZE - 1u);
    if (reg_slot[i] == REG_TOMB)
        reg_tombs--;
    __atomic_store_n(&reg_slot[i], k, __ATOMIC_RELEASE);
}

int ndk_registry_add(const void *obj)
{
    pthread_mutex_lock(&reg_mu);
    if (reg_live >= REG_SIZE / 2u) {
        pthread_mutex_unlock(&reg_mu);
        return 0;
    }
    if (reg_live + reg_tombs >= REG_SIZE / 4u * 3u) {
        /* Rebuild without the tombstones (lookups meanwhile retry). */
        static uintptr_t keep[REG_SIZE];
        uint32_t n = 0;
        for (uint32_t i = 0; i < REG_SIZE; i++)
            if (reg_slot[i] > REG_TOMB)
                keep[n++] = reg_slot[i];
        __atomic_store_n(&reg_seq, reg_seq + 1u, __ATOMIC_RELEASE);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        for (uint32_t i = 0; i < REG_SIZE; i++)
            __atomic_store_n(&reg_slot[i], 0, __ATOMIC_RELAXED);
        reg_tombs = 0;
        for (uint32_t i = 0; i < n; i++)
            reg_put(keep[i]);
        __atomic_store_n(&reg_seq, reg_seq + 1u, __ATOMIC_RELEASE);
    }
    reg_put((uintptr_t)obj);
    reg_live++;
    pthread_mutex_unlock(&reg_mu);
    return 1;
}

void ndk_registry_del(const void *obj)
{
    uintptr_t k = (uintptr_t)obj;
    pthread_mutex_lock(&reg_mu);
    for (uint32_t i = reg_hash(k), n = 0; n < REG_SIZE && reg_slot[i] != 0; i = (i + 1u) & (REG_SIZE - 1u), n++) {
        if (reg_slot[i] == k) {
            __atomic_store_n(&reg_slot[i], REG_TOMB, __ATOMIC_RELEASE);
            reg_live--;
            reg_tombs++;
            break;
        }
    }
    pthread_mutex_unlock(&reg_mu);
}

int ndk_obj_ok(const void *hdr, NDK_OBJECT_TYPE type)
{
    return hdr && ndk_live(hdr) && ((const NDK_OBJECT_HEADER *)hdr)->ObjectType == type;
}

/* ------------------------------------------------------------------------- */
/* Object lifetime                                                            */

void ndk_core_init(struct ndk_adapter *ad, struct ndk_core *c, NDK_OBJECT_HEADER *hdr, NDK_OBJECT_TYPE type,
                   struct ndk_core *p0, struct ndk_core *p1, struct ndk_core *p2)
{
    memset(c, 0, sizeof(*c));
    c->ad = ad;
    c->hdr = hdr;
    c->parents[0] = p0;
    c->parents[1] = p1;
    c->parents[2] = p2;
    memset(hdr, 0, sizeof(*hdr));
    hdr->Version.Major = NDK_VERSION_1_2_MAJOR;
    hdr->Version.Minor = NDK_VERSION_1_2_MINOR;
    hdr->ObjectType = type;
}

int ndk_registry_has_room(void)
{
    pthread_mutex_lock(&reg_mu);
    int room = reg_live < REG_SIZE / 2u;
    pthread_mutex_unlock(&reg_mu);
    return room;
}

int ndk_core_link(struct ndk_core *c)
{
    struct ndk_adapter *ad = c->ad;
    c->registered = ndk_registry_add(c->hdr);
    if (!c->registered)
        return 0;
    for (int i = 0; i < 3; i++)
        if (c->parents[i])
            c->parents[i]->refs++;
    c->next = ad->objects.next;
    c->prev = &ad->objects;
    ad->objects.next->prev = c;
    ad->objects.next = c;
    return 1;
}

/* From here on no call takes the object (ndk_live fails). */
static void core_unregister(struct ndk_core *c)
{
    if (c->registered) {
        ndk_registry_del(c->hdr);
        c->registered = 0;
    }
}

static void core_unlink(struct ndk_core *c)
{
    core_unregister(c);
    if (c->next) {
        c->next->prev = c->prev;
        c->prev->next = c->next;
        c->next = c->prev = NULL;
    }
}

void ndk_ref(struct ndk_core *c)
{
    c->refs++;
}

void ndk_queue_event(struct ndk_adapter *ad, struct ndk_event *ev)
{
    ev->next = NULL;
    if (ad->ev_tail)
        ad->ev_tail->next = ev;
    else
        ad->ev_head = ev;
    ad->ev_tail = ev;
    pthread_cond_signal(&ad->ev_cond);
}

static void queue_close(struct ndk_core *c)
{
    c->close_queued = 1;
    c->close_ev.kind = EV_CLOSE;
    c->close_ev.embedded = 1;
    c->close_ev.core = c;
    ndk_queue_event(c->ad, &c->close_ev);
}

void ndk_unref_locked(struct ndk_core *c)
{
    if (--c->refs == 0 && c->closing && !c->close_queued)
        queue_close(c);
}

/* Drop the parents' references and free; under ad->lock. */
static void core_release(struct ndk_core *c)
{
    core_unlink(c);
    struct ndk_core *p[3] = {c->parents[0], c->parents[1], c->parents[2]};
    c->destroy(c);
    for (int i = 0; i < 3; i++)
        if (p[i])
            ndk_unref_locked(p[i]);
}

NTSTATUS ndk_close(struct ndk_core *c, NDK_FN_CLOSE_COMPLETION cb, void *ctx)
{
    struct ndk_adapter *ad = c->ad;
    pthread_mutex_lock(&ad->lock);
    if (c->closing) {
        /* A second close of the same object: nothing more to do. */
        pthread_mutex_unlock(&ad->lock);
        return STATUS_SUCCESS;
    }
    c->closing = 1;
    c->close_cb = cb;
    c->close_ctx = ctx;
    if (c->refs > 0) {
        pthread_mutex_unlock(&ad->lock);
        return STATUS_PENDING;
    }
    c->close_queued = 1; /* finished inline: no event */
    pthread_mutex_unlock(&ad->lock);
    if (c->teardown)
        c->teardown(c);
    pthread_mutex_lock(&ad->lock);
    core_release(c);
    pthread_mutex_unlock(&ad->lock);
    return STATUS_SUCCESS;
}

NTSTATUS NdkCloseObject(NDK_OBJECT_HEADER *obj, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx)
{
    if (!obj || !ndk_live(obj))
        return STATUS_SUCCESS; /* not an object of this library (a close never fails) */
    switch (obj->ObjectType) {
    case NdkObjectTypeAdapter:
        NdkFpgaCloseAdapter((NDK_ADAPTER *)(void *)obj); /* checks it is live */
        return STATUS_SUCCESS;
    case NdkObjectTypeCq:
        return ((NDK_CQ *)(void *)obj)->Dispatch->NdkCloseCq(obj, cb, ctx);
    case NdkObjectTypePd:
        return ((NDK_PD *)(void *)obj)->Dispatch->NdkClosePd(obj, cb, ctx);
    case NdkObjectTypeMr:
        return ((NDK_MR *)(void *)obj)->Dispatch->NdkCloseMr(obj, cb, ctx);
    case NdkObjectTypeQp:
        return ((NDK_QP *)(void *)obj)->Dispatch->NdkCloseQp(obj, cb, ctx);
    case NdkObjectTypeConnector:
        return ((NDK_CONNECTOR *)(void *)obj)->Dispatch->NdkCloseConnector(obj, cb, ctx);
    case NdkObjectTypeListener:
        return ((NDK_LISTENER *)(void *)obj)->Dispatch->NdkCloseListener(obj, cb, ctx);
    default:
        return STATUS_SUCCESS;
    }
}

NTSTATUS ndk_query_extension(NDK_OBJECT_HEADER *obj, const GUID *id, ULONG version, const VOID **iface)
{
    (void)obj;
    (void)id;
    (void)version;
    if (iface)
        *iface = NULL;
    return STATUS_NOT_SUPPORTED;
}

/* ------------------------------------------------------------------------- */
/* Events and the callback thread                                             */

void ndk_queue_request_cb(struct ndk_adapter *ad, NDK_FN_REQUEST_COMPLETION fn, void *ctx, NTSTATUS st,
                          struct ndk_core *core)
{
    struct ndk_event *ev = calloc(1, sizeof(*ev));
    if (!ev) {
        /* Cannot happen in practice; losing the callback would hang the consumer,
         * so say so loudly. */
        fprintf(stderr, "ndkfpga: out of memory queueing a completion\n");
        abort();
    }
    ev->kind = EV_REQUEST;
    ev->fn = (void (*)(void))fn;
    ev->ctx = ctx;
    ev->status = st;
    ev->core = core;
    if (core)
        ndk_ref(core);
    ndk_queue_event(ad, ev);
}

void ndk_queue_create_cb(struct ndk_adapter *ad, NDK_FN_CREATE_COMPLETION fn, void *ctx, NTSTATUS st,
                         NDK_OBJECT_HEADER *obj, struct ndk_core *core)
{
    struct ndk_event *ev = calloc(1, sizeof(*ev));
    if (!ev) {
        fprintf(stderr, "ndkfpga: out of memory queueing a completion\n");
        abort();
    }
    ev->kind = EV_CREATE;
    ev->fn = (void (*)(void))fn;
    ev->ctx = ctx;
    ev->status = st;
    ev->obj = obj;
    ev->core = core;
    if (core)
        ndk_ref(core);
    ndk_queue_event(ad, ev);
}

static void run_event(struct ndk_adapter *ad, struct ndk_event *ev)
{
    switch (ev->kind) {
    case EV_REQUEST:
        if (ev->fn)
            ((NDK_FN_REQUEST_COMPLETION)ev->fn)(ev->ctx, ev->status);
        break;
    case EV_CREATE:
        if (ev->fn)
            ((NDK_FN_CREATE_COMPLETION)ev->fn)(ev->ctx, ev->status, ev->obj);
        break;
    case EV_CLOSE: {
        struct ndk_core *c = ev->core;
        if (c->teardown)
            c->teardown(c);
        /* Gone for every call before the consumer hears of it (the object itself is
         * freed after the callback returns). */
        core_unregister(c);
        if (c->close_cb)
            c->close_cb(c->close_ctx);
        break;
    }
    case EV_CQ_NOTIFY:
    case EV_CQ_ERROR:
        if (ev->fn)
            ((NDK_FN_CQ_NOTIFICATION_CALLBACK)ev->fn)(ev->ctx, ev->status);
        break;
    case EV_CONNECT:
        if (ev->fn)
            ((NDK_FN_CONNECT_EVENT_CALLBACK)ev->fn)(ev->ctx, (NDK_CONNECTOR *)(void *)ev->obj);
        break;
    case EV_DISCONNECT:
        if (ev->fn)
            ((NDK_FN_DISCONNECT_EVENT_CALLBACK)ev->fn)(ev->ctx);
        break;
    default:
        break;
    }
    (void)ad;
}

static void deliver(struct ndk_adapter *ad, struct ndk_req *r, uint32_t status, const uint8_t *body, size_t len);

/* Under ad->lock (callback thread): a QP's work requests. The board reports them in
 * order, each that is not a silent success, so the first outstanding request that
 * reports a completion is the one to watch: when that same request has been the
 * first for the timeout, it completes STATUS_IO_TIMEOUT (the silent ones before it
 * retire with it, as its CQE would have retired them) and a late CQE for it is
 * stale. Silent requests alone have nothing to wait for. */
static void watch_qp(struct ndk_adapter *ad, struct ndk_qp *qp, uint64_t now)
{
    pthread_mutex_lock(&qp->ring_lock);
    uint32_t id = qp->head;
    while (id != qp->tail && qp->ring[id & qp->mask].silent)
        id++;
    if (id == qp->tail) {
        qp->watch_since_us = 0; /* nothing that reports a completion is outstanding */
    } else if (qp->watch_since_us == 0 || qp->watch_head != id) {
        qp->watch_head = id;
        qp->watch_since_us = now;
    } else if (now - qp->watch_since_us >= ad->req_timeout_us) {
        struct ndk_wr_slot copy = qp->ring[id & qp->mask];
        qp->head = id + 1;
        qp->watch_since_us = 0;
        NDK_RESULT_EX r;
        memset(&r, 0, sizeof(r));
        r.Status = STATUS_IO_TIMEOUT;
        r.QPContext = qp->context;
        r.RequestContext = copy.ctx;
        r.Type = (NDK_OPERATION_TYPE)copy.op_type;
        ndk_cq_push(qp->icq, &r);
        ad->wr_timeouts++;
    }
    pthread_mutex_unlock(&qp->ring_lock);
}

/* Under ad->lock (callback thread): every request and work request has a deadline. */
static int watch_deadlines(struct ndk_adapter *ad)
{
    uint64_t now = ndk_now_us();
    if (now < ad->next_watch_us)
        return 0;
    ad->next_watch_us = now + WATCH_PERIOD_MS * 1000u;
    int expired = 0;
    for (struct ndk_req **pp = &ad->reqs; *pp;) {
        struct ndk_req *r = *pp;
        if (now < r->deadline_us) {
            pp = &r->next;
            continue;
        }
        *pp = r->next;
        ad->req_timeouts++;
        expired++;
        deliver(ad, r, NF_STATUS_IO_TIMEOUT, NULL, 0);
    }
    if (!ad->dead)
        for (uint32_t i = 0; i < ad->nqps; i++)
            if (ad->qps[i])
                watch_qp(ad, ad->qps[i], now);
    if (expired) {
        nf_link_expect(ad->link, -expired); /* lock order: ad->lock, then the link's */
        pthread_cond_broadcast(&ad->cond);
    }
    return expired;
}

static void deadline_after(struct timespec *ts, unsigned ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static void *cb_main(void *arg)
{
    struct ndk_adapter *ad = arg;
    pthread_mutex_lock(&ad->lock);
    for (;;) {
        watch_deadlines(ad);
        while (!ad->ev_head && !ad->cb_stop) {
            if (watch_deadlines(ad))
                continue;
            struct timespec until;
            deadline_after(&until, WATCH_PERIOD_MS);
            pthread_cond_timedwait(&ad->ev_cond, &ad->lock, &until);
        }
        struct ndk_event *ev = ad->ev_head;
        if (!ev)
            break;
        ad->ev_head = ev->next;
        if (!ad->ev_head)
            ad->ev_tail = NULL;
        ad->cb_busy = 1;
        if (ev->kind == EV_CQ_NOTIFY) {
            /* Cleared before the call so that the callback may re-arm. */
            struct ndk_cq *cq = NDK_CONTAINER(ev, struct ndk_cq, notify_ev);
            cq->notify_queued = 0;
        }
        pthread_mutex_unlock(&ad->lock);
        run_event(ad, ev);
        pthread_mutex_lock(&ad->lock);
        if (ev->kind == EV_CLOSE) {
            core_release(ev->core); /* frees ev too (embedded) */
        } else {
            if (ev->core)
                ndk_unref_locked(ev->core);
            if (!ev->embedded)
                free(ev);
        }
        ad->cb_busy = 0;
        pthread_cond_broadcast(&ad->cond);
    }
    pthread_mutex_unlock(&ad->lock);
    return NULL;
}

/* ------------------------------------------------------------------------- */
/* Requests and replies                                                       */

static void put_hdr(void *msg, uint16_t op, size_t len, uint32_t tag)
{
    struct nf_msg_hdr h;
    memset(&h, 0, sizeof(h));
    h.op = op;
    h.len = (uint16_t)len;
    h.tag = tag;
    memcpy(msg, &h, sizeof(h));
}

/* Under ad->lock: hand a reply to its request (held back while the issuing call runs). */
static void deliver(struct ndk_adapter *ad, struct ndk_req *r, uint32_t status, const uint8_t *body, size_t len)
{
    if (r->gate && r->issuing) {
        r->early = 1;
        r->early_status = status;
        r->early_has_body = body != NULL;
        r->early_len = 0;
        if (body) {
            r->early_len = len < sizeof(r->early_body) ? len : sizeof(r->early_body);
            memcpy(r->early_body, body, r->early_len);
        }
        return;
    }
    r->on_reply(ad, r, status, body, len);
}

NTSTATUS ndk_req_register(struct ndk_adapter *ad, struct ndk_req *r, uint16_t op, void *msg, size_t len)
{
    pthread_mutex_lock(&ad->lock);
    r->issuing = 1;
    r->early = 0;
    if (ad->dead) {
        uint32_t st = ad->dead;
        pthread_mutex_unlock(&ad->lock);
        return (NTSTATUS)st;
    }
    r->tag = ++ad->next_tag;
    if (r->tag == 0)
        r->tag = ++ad->next_tag;
    r->op = op;
    r->deadline_us = ndk_now_us() + ad->req_timeout_us;
    r->next = ad->reqs;
    ad->reqs = r;
    pthread_mutex_unlock(&ad->lock);
    put_hdr(msg, op, len, r->tag);
    nf_link_expect(ad->link, 1);
    return STATUS_SUCCESS;
}

int ndk_req_unregister(struct ndk_adapter *ad, struct ndk_req *r)
{
    pthread_mutex_lock(&ad->lock);
    int found = 0;
    for (struct ndk_req **pp = &ad->reqs; *pp; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&ad->lock);
    nf_link_expect(ad->link, -1);
    return found;
}

NTSTATUS ndk_req_send(struct ndk_adapter *ad, struct ndk_req *r, uint16_t op, void *msg, size_t len, int defer)
{
    NTSTATUS rs = ndk_req_register(ad, r, op, msg, len);
    if (rs != STATUS_SUCCESS)
        return rs;
    int gated = r->gate; /* r may be freed by its on_reply once sent unless gated */
    struct nf_link_part part = {msg, len};
    uint32_t st = nf_link_post(ad->link, &part, 1, len, defer);
    if (st != NF_STATUS_SUCCESS) {
        /* Take it back (refused inline, never completes) unless the death handler
         * already completed it (then it was accepted: it completes once, as a reply). */
        if (ndk_req_unregister(ad, r))
            return (NTSTATUS)st;
    }
    if (!gated)
        return st == NF_STATUS_SUCCESS ? STATUS_SUCCESS : STATUS_PENDING;
    pthread_mutex_lock(&ad->lock);
    r->issuing = 0;
    if (r->early)
        r->on_reply(ad, r, r->early_status, r->early_has_body ? r->early_body : NULL, r->early_len);
    pthread_mutex_unlock(&ad->lock);
    return st == NF_STATUS_SUCCESS ? STATUS_SUCCESS : STATUS_PENDING;
}

/* Under ad->lock: wait until r (sent, without a callback) is done. Bounded by its
 * deadline even when the callback thread cannot enforce it (a synchronous call made
 * from a callback): past it, the waiter completes r with STATUS_IO_TIMEOUT itself. */
void ndk_wait_req(struct ndk_adapter *ad, struct ndk_req *r)
{
    while (!r->done) {
        uint64_t now = ndk_now_us();
        if (now >= r->deadline_us + WATCH_PERIOD_MS * 1000u) {
            struct ndk_req **pp = &ad->reqs;
            while (*pp && *pp != r)
                pp = &(*pp)->next;
            if (*pp) {
                *pp = r->next;
                ad->req_timeouts++;
                nf_link_expect(ad->link, -1);
                deliver(ad, r, NF_STATUS_IO_TIMEOUT, NULL, 0);
                continue;
            }
        }
        struct timespec until;
        deadline_after(&until, WATCH_PERIOD_MS);
        pthread_cond_timedwait(&ad->cond, &ad->lock, &until);
    }
}

static void sync_reply(struct ndk_adapter *ad, struct ndk_req *r, uint32_t status, const uint8_t *body, size_t len)
{
    r->status = status;
    if (body && r->out) {
        size_t n = len < r->out_cap ? len : r->out_cap;
        memcpy(r->out, body, n);
        r->out_len = n;
    }
    r->done = 1;
    pthread_cond_broadcast(&ad->cond);
}

NTSTATUS ndk_call(struct ndk_adapter *ad, uint16_t op, void *msg, size_t len, void *out, size_t out_cap,
                  size_t *out_len)
{
    struct ndk_req r;
    memset(&r, 0, sizeof(r));
    r.on_reply = sync_reply;
    r.out = out;
    r.out_cap = out_cap;
    NTSTATUS st = ndk_req_send(ad, &r, op, msg, len, 0);
    if (st != STATUS_SUCCESS && st != STATUS_PENDING)
        return st;
    pthread_mutex_lock(&ad->lock);
    ndk_wait_req(ad, &r);
    pthread_mutex_unlock(&ad->lock);
    if (out_len)
        *out_len = r.out_len;
    return (NTSTATUS)r.status;
}

static void forget_reply(struct ndk_adapter *ad, struct ndk_req *r, uint32_t status, const uint8_t *body, size_t len)
{
    (void)ad;
    (void)status;
    (void)body;
    (void)len;
    free(r);
}

void ndk_send_forget(struct ndk_adapter *ad, uint16_t op, const void *body, size_t body_len)
{
    uint8_t msg[NF_MSG_HDR_SIZE + 64];
    struct ndk_req *r = calloc(1, sizeof(*r));
    if (!r || body_len > 64) {
        free(r);
        return;
    }
    r->on_reply = forget_reply;
    memcpy(msg + NF_MSG_HDR_SIZE, body, body_len);
    NTSTATUS st = ndk_req_send(ad, r, op, msg, NF_MSG_HDR_SIZE + body_len, 0);
    if (st != STATUS_SUCCESS && st != STATUS_PENDING)
        free(r);
}

static void on_message(void *ctx, const uint8_t *msg, size_t len)
{
    struct ndk_adapter *ad = ctx;
    struct nf_msg_hdr h;
    if (len < sizeof(h))
        return;
    memcpy(&h, msg, sizeof(h));
    if (h.op == NF_OP_CQE) {
        struct nf_cqe cqe;
        if (len < NF_MSG_HDR_SIZE + sizeof(cqe))
            return;
        memcpy(&cqe, msg + NF_MSG_HDR_SIZE, sizeof(cqe));
        pthread_mutex_lock(&ad->lock);
        ndk_qp_on_cqe(ad, &cqe);
        pthread_mutex_unlock(&ad->lock);
        return;
    }
    if (!(h.op & NF_OP_REPLY))
        return;
    pthread_mutex_lock(&ad->lock);
    struct ndk_req *r = NULL;
    for (struct ndk_req **pp = &ad->reqs; *pp; pp = &(*pp)->next) {
        if ((*pp)->tag == h.tag && ((*pp)->op | NF_OP_REPLY) == h.op) {
            r = *pp;
            *pp = r->next;
            break;
        }
    }
    if (r) {
        deliver(ad, r, h.status, msg + NF_MSG_HDR_SIZE, len - NF_MSG_HDR_SIZE);
        pthread_cond_broadcast(&ad->cond); /* NdkFpgaCloseAdapter waits for the last reply */
    }
    pthread_mutex_unlock(&ad->lock);
    if (r)
        nf_link_expect(ad->link, -1);
}

/* Under ad->lock: every request and work request still outstanding fails. */
static void fail_everything(struct ndk_adapter *ad, uint32_t status)
{
    while (ad->reqs) {
        struct ndk_req *r = ad->reqs;
        ad->reqs = r->next;
        deliver(ad, r, status, NULL, 0);
    }
    for (uint32_t i = 0; i < ad->nqps; i++) {
        struct ndk_qp *qp = ad->qps[i];
        if (qp) {
            __atomic_store_n(&qp->connected, 0, __ATOMIC_RELAXED);
            ndk_qp_fail_all(qp, (NTSTATUS)status);
        }
    }
    pthread_cond_broadcast(&ad->cond);
}

static void on_dead(void *ctx, uint32_t status)
{
    struct ndk_adapter *ad = ctx;
    pthread_mutex_lock(&ad->lock);
    if (!ad->dead) {
        __atomic_store_n(&ad->dead, status ? status : (uint32_t)STATUS_CONNECTION_ABORTED, __ATOMIC_RELAXED);
        fail_everything(ad, ad->dead);
    }
    pthread_mutex_unlock(&ad->lock);
}

/* ------------------------------------------------------------------------- */
/* Open and close                                                             */

static NTSTATUS open_status(uint32_t st)
{
    switch (st) {
    case NF_STATUS_INVALID_PARAMETER:
    case NF_STATUS_NOT_SUPPORTED:
    case NF_STATUS_INSUFFICIENT_RESOURCES:
    case NF_STATUS_IO_TIMEOUT:
        return (NTSTATUS)st;
    case NF_STATUS_INVALID_DEVICE_STATE:
        return STATUS_NOT_SUPPORTED; /* incompatible INFO */
    default:
        return STATUS_NETWORK_UNREACHABLE;
    }
}

NTSTATUS NdkFpgaOpenAdapter(const char *device, NDK_ADAPTER **out)
{
    if (!out)
        return STATUS_INVALID_PARAMETER;
    *out = NULL;
    struct ndk_adapter *ad = calloc(1, sizeof(*ad));
    if (!ad)
        return STATUS_INSUFFICIENT_RESOURCES;
    ndk_core_init(ad, &ad->core, &ad->pub.Header, NdkObjectTypeAdapter, NULL, NULL, NULL);
    ad->pub.Dispatch = &ndk_adapter_dispatch;
    ad->objects.next = ad->objects.prev = &ad->objects;
    pthread_mutex_init(&ad->lock, NULL);
    pthread_cond_init(&ad->cond, NULL);
    pthread_cond_init(&ad->ev_cond, NULL);

    struct nf_transport *t = NULL;
    uint32_t st = nf_transport_open(device ? device : "auto", &t);
    if (st == NF_STATUS_SUCCESS) {
        snprintf(ad->device, sizeof(ad->device), "%s", t->name ? t->name : "");
        st = nf_link_open(t, on_message, on_dead, ad, &ad->link, &ad->info);
    }
    {
        const char *v = getenv("NDKFPGA_REQUEST_TIMEOUT_MS");
        unsigned long ms = v && *v ? strtoul(v, NULL, 10) : 0;
        ad->req_timeout_us = (uint64_t)(ms > 0 && ms <= 3600000ul ? ms : DEFAULT_REQUEST_TIMEOUT_MS) * 1000u;
    }
    if (st != NF_STATUS_SUCCESS) {
        pthread_mutex_destroy(&ad->lock);
        pthread_cond_destroy(&ad->cond);
        pthread_cond_destroy(&ad->ev_cond);
        free(ad);
        return open_status(st);
    }
    NTSTATUS nst = STATUS_SUCCESS;
    const struct nf_info *in = &ad->info;
    if (in->page_size != PAGE_SIZE || in->user_base % PAGE_SIZE || in->mem_bytes <= in->user_base ||
        in->max_qps == 0 || in->max_qps > 4096)
        nst = STATUS_NOT_SUPPORTED;
    if (nst == STATUS_SUCCESS) {
        ad->first_page = in->user_base / PAGE_SIZE;
        ad->npages = (in->mem_bytes - in->user_base) / PAGE_SIZE;
        ad->page_used = calloc(ad->npages, 1);
        ad->nqps = in->max_qps;
        ad->qps = calloc(ad->nqps, sizeof(*ad->qps));
        if (!ad->page_used || !ad->qps)
            nst = STATUS_INSUFFICIENT_RESOURCES;
    }
    if (nst == STATUS_SUCCESS && !ndk_registry_add(&ad->pub.Header))
        nst = STATUS_INSUFFICIENT_RESOURCES;
    if (nst == STATUS_SUCCESS) {
        if (pthread_create(&ad->cb_thread, NULL, cb_main, ad) != 0)
            nst = STATUS_INSUFFICIENT_RESOURCES;
        else
            ad->cb_running = 1;
    }
    if (nst != STATUS_SUCCESS) {
        ndk_registry_del(&ad->pub.Header);
        nf_link_close(ad->link);
        free(ad->page_used);
        free(ad->qps);
        pthread_mutex_destroy(&ad->lock);
        pthread_cond_destroy(&ad->cond);
        pthread_cond_destroy(&ad->ev_cond);
        free(ad);
        return nst;
    }
    *out = &ad->pub;
    return STATUS_SUCCESS;
}

/* Under ad->lock: wait until the callback thread is idle with nothing queued. */
static void drain_callbacks(struct ndk_adapter *ad)
{
    while (ad->ev_head || ad->cb_busy)
        pthread_cond_wait(&ad->cond, &ad->lock);
}

VOID NdkFpgaCloseAdapter(NDK_ADAPTER *a)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter))
        return;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    ndk_registry_del(&ad->pub.Header); /* no call takes it from now on */
    pthread_mutex_lock(&ad->lock);
    /* Let replies already on their way arrive (bounded), run their callbacks. */
    struct timespec until;
    deadline_after(&until, CLOSE_DRAIN_MS);
    while ((ad->reqs || ad->ev_head || ad->cb_busy) && !ad->dead) {
        if (pthread_cond_timedwait(&ad->cond, &ad->lock, &until) == ETIMEDOUT) {
            if (getenv("NDKFPGA_DEBUG"))
                for (struct ndk_req *r = ad->reqs; r; r = r->next)
                    fprintf(stderr, "ndkfpga: close: no reply to op 0x%x tag %u\n", r->op, r->tag);
            break;
        }
    }
    pthread_mutex_unlock(&ad->lock);

    nf_link_close(ad->link); /* no link callbacks after this */

    pthread_mutex_lock(&ad->lock);
    if (!ad->dead)
        __atomic_store_n(&ad->dead, (uint32_t)STATUS_CANCELLED, __ATOMIC_RELAXED);
    fail_everything(ad, (uint32_t)STATUS_CANCELLED);
    drain_callbacks(ad);
    ad->cb_stop = 1;
    pthread_cond_signal(&ad->ev_cond);
    pthread_mutex_unlock(&ad->lock);
    if (ad->cb_running)
        pthread_join(ad->cb_thread, NULL);

    /* Objects the consumer left open: free without their close callbacks. */
    while (ad->objects.next != &ad->objects) {
        struct ndk_core *c = ad->objects.next;
        core_unlink(c);
        c->destroy(c);
    }
    while (ad->buffers) {
        struct ndk_buffer *b = ad->buffers;
        ad->buffers = b->next;
        munmap(b->va_base, b->va_len);
        free(b);
    }
    free(ad->page_used);
    free(ad->qps);
    pthread_mutex_destroy(&ad->lock);
    pthread_cond_destroy(&ad->cond);
    pthread_cond_destroy(&ad->ev_cond);
    free(ad);
}

/* ------------------------------------------------------------------------- */
/* Adapter info                                                               */

static NTSTATUS query_adapter_info(NDK_ADAPTER *a, NDK_ADAPTER_INFO *info, ULONG *size)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !size)
        return STATUS_INVALID_PARAMETER;
    if (!info || *size < sizeof(NDK_ADAPTER_INFO)) {
        *size = sizeof(NDK_ADAPTER_INFO);
        return STATUS_BUFFER_TOO_SMALL;
    }
    const struct ndk_adapter *ad = ndk_adapter_of(a);
    const struct nf_info *in = &ad->info;
    uint32_t reg_pages = in->mtt_entries < NDK_MAX_REGISTER_PAGES ? in->mtt_entries : NDK_MAX_REGISTER_PAGES;
    memset(info, 0, sizeof(*info));
    info->Version.Major = NDK_VERSION_1_2_MAJOR;
    info->Version.Minor = NDK_VERSION_1_2_MINOR;
    info->VendorId = NDK_VENDOR_ID;
    info->DeviceId = NDK_DEVICE_ID;
    info->MaxRegistrationSize = (SIZE_T)reg_pages * PAGE_SIZE;
    info->MaxWindowSize = 0; /* no memory windows */
    info->FRMRPageCount = in->max_frmr_pages < NDK_MAX_FR_MSG_PAGES ? in->max_frmr_pages : NDK_MAX_FR_MSG_PAGES;
    info->MaxInitiatorRequestSge = in->max_sge;
    info->MaxReceiveRequestSge = 0; /* no receives */
    info->MaxReadRequestSge = in->max_sge;
    info->MaxTransferLength = in->mem_bytes - in->user_base;
    info->MaxInlineDataSize = 0;
    info->MaxInboundReadLimit = NDK_MAX_READ_LIMIT;
    info->MaxOutboundReadLimit = NDK_MAX_READ_LIMIT;
    info->MaxReceiveQueueDepth = 0;
    info->MaxInitiatorQueueDepth = NDK_MAX_QUEUE_DEPTH;
    info->MaxSrqDepth = 0;
    info->MaxCqDepth = NDK_MAX_CQ_DEPTH;
    info->LargeRequestThreshold = 0;
    info->MaxCallerData = NDK_MAX_CALLER_DATA;
    info->MaxCalleeData = NDK_MAX_CALLEE_DATA;
    info->AdapterFlags = NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED | NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED;
    info->RdmaTechnology = NDK_Undefined;
    *size = sizeof(NDK_ADAPTER_INFO);
    return STATUS_SUCCESS;
}

static NTSTATUS create_shared_endpoint(NDK_ADAPTER *a, NDK_FN_CREATE_COMPLETION cc, PVOID ctx,
                                       NDK_SHARED_ENDPOINT **out)
{
    (void)a;
    (void)cc;
    (void)ctx;
    if (out)
        *out = NULL;
    return STATUS_NOT_SUPPORTED;
}

/* ------------------------------------------------------------------------- */
/* MDLs, LAMs and buffers                                                     */

int ndk_user_range_ok(const struct ndk_adapter *ad, uint64_t addr, uint64_t len)
{
    uint64_t lo = ad->info.user_base, hi = ad->info.mem_bytes;
    return addr >= lo && addr <= hi && len <= hi - addr;
}

int ndk_page_allocated(const struct ndk_adapter *ad, PFN_NUMBER pfn)
{
    if (pfn < ad->first_page || pfn - ad->first_page >= ad->npages)
        return 0;
    return __atomic_load_n(&ad->page_used[pfn - ad->first_page], __ATOMIC_RELAXED) != 0;
}

/* Whether an MDL (the adapter's own, or one a consumer built over part of it, as in a
 * chain) describes memory of a buffer this adapter allocated: its virtual range lies in
 * the buffer's reservation (unique to the buffer: another adapter's MDL, naming the same
 * page numbers, is not inside it) and its page numbers are the buffer's at that offset. */
static int mdl_in_own_buffer(struct ndk_adapter *ad, const MDL *m)
{
    uintptr_t va = (uintptr_t)MmGetMdlVirtualAddress(m);
    int ok = 0;
    pthread_mutex_lock(&ad->lock);
    for (const struct ndk_buffer *b = ad->buffers; b && !ok; b = b->next) {
        uintptr_t lo = (uintptr_t)b->va_base;
        if (va < lo || va - lo >= b->va_len || m->ByteCount > b->va_len - (va - lo))
            continue;
        uint32_t first = (uint32_t)((va - lo) >> PAGE_SHIFT);
        uint32_t span = ADDRESS_AND_SIZE_TO_SPAN_PAGES(va, m->ByteCount);
        ok = 1;
        for (uint32_t i = 0; i < span && ok; i++)
            ok = first + i < b->npages && m->PfnArray[i] == b->pfn[first + i];
    }
    pthread_mutex_unlock(&ad->lock);
    return ok;
}

uint32_t ndk_mdl_pages(struct ndk_adapter *ad, const MDL *mdl, SIZE_T length, NDK_LOGICAL_ADDRESS *pages,
                       uint32_t cap, ULONG *fbo, NTSTATUS *st)
{
    *st = STATUS_INVALID_PARAMETER;
    if (!mdl || length == 0 || !mdl->PfnArray)
        return 0;
    uintptr_t va0 = (uintptr_t)MmGetMdlVirtualAddress(mdl);
    if (va0 == 0 || !mdl->StartVa || mdl->ByteOffset >= PAGE_SIZE) /* zero-based VAs are not supported */
        return 0;
    if (fbo)
        *fbo = BYTE_OFFSET(va0);
    uint32_t n = 0;
    uintptr_t expect = va0; /* next virtual byte the chain must continue at */
    SIZE_T left = length;
    for (const MDL *m = mdl; m && left; m = m->Next) {
        uintptr_t va = (uintptr_t)MmGetMdlVirtualAddress(m);
        if (m->ByteOffset >= PAGE_SIZE || BYTE_OFFSET(m->StartVa) != 0 || !m->PfnArray || m->ByteCount == 0)
            return 0;
        if (!mdl_in_own_buffer(ad, m))
            return 0; /* not memory of this adapter (another adapter's MDL may name the same pages) */
        if (va != expect)
            return 0; /* not virtually contiguous */
        SIZE_T take = m->ByteCount < left ? m->ByteCount : left;
        uint32_t span = ADDRESS_AND_SIZE_TO_SPAN_PAGES(va, take);
        for (uint32_t i = 0; i < span; i++) {
            uint64_t addr = (uint64_t)m->PfnArray[i] << PAGE_SHIFT;
            if (!ndk_user_range_ok(ad, addr, PAGE_SIZE) || !ndk_page_allocated(ad, m->PfnArray[i]))
                return 0; /* not a page of a buffer this adapter allocated */
            if (i == 0 && m != mdl && BYTE_OFFSET(va) != 0) {
                /* Continues inside the previous MDL's last page: same page required. */
                if (!pages || n == 0 || pages[n - 1] != addr)
                    return 0;
                continue;
            }
            if (n >= cap) {
                *st = STATUS_INSUFFICIENT_RESOURCES;
                return 0;
            }
            if (pages)
                pages[n] = addr;
            n++;
        }
        expect = va + take;
        left -= take;
    }
    if (left)
        return 0; /* Length past the chain */
    *st = STATUS_SUCCESS;
    return n;
}

static NTSTATUS build_lam(NDK_ADAPTER *a, MDL *mdl, SIZE_T length, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx,
                          NDK_LOGICAL_ADDRESS_MAPPING *lam, ULONG *lam_size, ULONG *fbo)
{
    (void)rc;
    (void)ctx;
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !mdl || !lam_size || !fbo || length == 0)
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    NTSTATUS st;
    /* The chain's page count first (without a page array only single-MDL
     * continuation checks are skipped, so count with a scratch array). */
    uint32_t cap = ad->npages;
    NDK_LOGICAL_ADDRESS *tmp = malloc((size_t)cap * sizeof(*tmp));
    if (!tmp)
        return STATUS_INSUFFICIENT_RESOURCES;
    ULONG f = 0;
    uint32_t n = ndk_mdl_pages(ad, mdl, length, tmp, cap, &f, &st);
    if (n == 0) {
        free(tmp);
        return st;
    }
    ULONG need = (ULONG)(offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) + (size_t)n * sizeof(NDK_LOGICAL_ADDRESS));
    if (!lam || *lam_size < need) {
        *lam_size = need;
        free(tmp);
        return STATUS_BUFFER_TOO_SMALL;
    }
    lam->AdapterContext = ad;
    lam->AdapterPageCount = n;
    memcpy(lam->AdapterPageArray, tmp, (size_t)n * sizeof(*tmp));
    free(tmp);
    *lam_size = need;
    *fbo = f;
    return STATUS_SUCCESS;
}

static VOID release_lam(NDK_ADAPTER *a, NDK_LOGICAL_ADDRESS_MAPPING *lam)
{
    (void)a;
    if (lam)
        lam->AdapterPageCount = 0;
}

static NTSTATUS alloc_buffer(NDK_ADAPTER *a, SIZE_T length, MDL **out, int scattered)
{
    if (!out)
        return STATUS_INVALID_PARAMETER;
    *out = NULL;
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || length == 0)
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    if (length > (SIZE_T)ad->npages * PAGE_SIZE)
        return STATUS_INSUFFICIENT_RESOURCES;
    uint32_t n = (uint32_t)((length + PAGE_SIZE - 1) / PAGE_SIZE);
    struct ndk_buffer *b = calloc(1, sizeof(*b) + (size_t)n * sizeof(PFN_NUMBER));
    if (!b)
        return STATUS_INSUFFICIENT_RESOURCES;
    /* A unique host address range names the buffer; PROT_NONE: never touched. */
    void *va = mmap(NULL, (size_t)n * PAGE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (va == MAP_FAILED) {
        free(b);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    pthread_mutex_lock(&ad->lock);
    uint32_t got = 0;
    for (uint32_t p = 0; p < ad->npages && got < n; p++) {
        if (!ad->page_used[p])
            b->pfn[got++] = ad->first_page + p;
    }
    if (got < n) {
        pthread_mutex_unlock(&ad->lock);
        munmap(va, (size_t)n * PAGE_SIZE);
        free(b);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    for (uint32_t i = 0; i < n; i++)
        ad->page_used[b->pfn[i] - ad->first_page] = 1;
    b->next = ad->buffers;
    ad->buffers = b;
    pthread_mutex_unlock(&ad->lock);
    if (scattered) {
        for (uint32_t i = 0; i < n / 2; i++) {
            PFN_NUMBER t = b->pfn[i];
            b->pfn[i] = b->pfn[n - 1 - i];
            b->pfn[n - 1 - i] = t;
        }
    }
    b->ad = ad;
    b->va_base = va;
    b->va_len = (size_t)n * PAGE_SIZE;
    b->npages = n;
    b->mdl.Next = NULL;
    b->mdl.StartVa = va;
    b->mdl.ByteOffset = 0;
    b->mdl.ByteCount = (ULONG)length;
    b->mdl.PfnArray = b->pfn;
    b->mdl.ProviderContext = b;
    *out = &b->mdl;
    return STATUS_SUCCESS;
}

NTSTATUS NdkFpgaAllocateBuffer(NDK_ADAPTER *a, SIZE_T length, MDL **out)
{
    return alloc_buffer(a, length, out, 0);
}

NTSTATUS NdkFpgaAllocateScatteredBuffer(NDK_ADAPTER *a, SIZE_T length, MDL **out)
{
    return alloc_buffer(a, length, out, 1);
}

/* The buffer whose MDL this is, looked up in the adapter's own list (never
 * trusting anything in the MDL: a hand-made or another adapter's MDL is not found). */
static struct ndk_buffer *buffer_of(struct ndk_adapter *ad, const MDL *mdl)
{
    if (!mdl)
        return NULL;
    pthread_mutex_lock(&ad->lock);
    struct ndk_buffer *b = ad->buffers;
    while (b && &b->mdl != mdl)
        b = b->next;
    pthread_mutex_unlock(&ad->lock);
    return b;
}

VOID NdkFpgaFreeBuffer(NDK_ADAPTER *a, MDL *mdl)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !mdl)
        return;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    struct ndk_buffer *b = buffer_of(ad, mdl);
    if (!b)
        return;
    pthread_mutex_lock(&ad->lock);
    for (uint32_t i = 0; i < b->npages; i++)
        ad->page_used[b->pfn[i] - ad->first_page] = 0;
    for (struct ndk_buffer **pp = &ad->buffers; *pp; pp = &(*pp)->next) {
        if (*pp == b) {
            *pp = b->next;
            break;
        }
    }
    pthread_mutex_unlock(&ad->lock);
    munmap(b->va_base, b->va_len);
    b->ad = NULL;
    free(b);
}

/* One MEM_WRITE/MEM_READ of a batch completed. */
static void batch_reply(struct ndk_adapter *ad, struct ndk_req *r, uint32_t status, const uint8_t *body, size_t len)
{
    if (status == NF_STATUS_SUCCESS && r->op == NF_OP_MEM_READ) {
        if (!body || len < r->out_cap)
            status = body ? NF_STATUS_INTERNAL_ERROR : status;
        else
            memcpy(r->out, body, r->out_cap);
    }
    if (!body && status == NF_STATUS_SUCCESS)
        status = NF_STATUS_INTERNAL_ERROR;
    if (status != NF_STATUS_SUCCESS && *r->batch_status == NF_STATUS_SUCCESS)
        *r->batch_status = status;
    (*r->batch_left)--;
    pthread_cond_broadcast(&ad->cond);
}

/* Largest data chunk of one MEM_WRITE / MEM_READ. */
#define MEM_CHUNK_MAX (NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE - NF_MEM_WRITE_REQ_SIZE)

static NTSTATUS mem_io(NDK_ADAPTER *a, MDL *mdl, SIZE_T off, void *data, SIZE_T len, int write)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !mdl || (!data && len))
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    if (!buffer_of(ad, mdl))
        return STATUS_INVALID_PARAMETER; /* not an MDL this adapter allocated */
    if (!mdl->PfnArray || off > mdl->ByteCount || len > mdl->ByteCount - off || mdl->ByteOffset >= PAGE_SIZE)
        return STATUS_INVALID_PARAMETER;
    uint32_t span = ADDRESS_AND_SIZE_TO_SPAN_PAGES(mdl->ByteOffset, mdl->ByteCount);
    for (uint32_t i = 0; i < span; i++)
        if (!ndk_user_range_ok(ad, (uint64_t)mdl->PfnArray[i] << PAGE_SHIFT, PAGE_SIZE))
            return STATUS_INVALID_PARAMETER;
    if (len == 0)
        return STATUS_SUCCESS;

    /* Requests are pipelined: all sent, then all waited for. */
    uint32_t nreq = (uint32_t)(len / 2048 + span + 2);
    struct ndk_req *reqs = calloc(nreq, sizeof(*reqs));
    uint8_t *msg = malloc(NF_LINK_MAX_PAYLOAD);
    if (!reqs || !msg) {
        free(reqs);
        free(msg);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    int left = 0;
    uint32_t bst = NF_STATUS_SUCCESS;
    NTSTATUS st = STATUS_SUCCESS;
    SIZE_T done = 0;
    uint32_t k = 0;
    while (done < len && k < nreq) {
        SIZE_T pos = mdl->ByteOffset + off + done; /* byte within the page run */
        SIZE_T in_page = PAGE_SIZE - (pos % PAGE_SIZE);
        SIZE_T chunk = len - done;
        if (chunk > in_page)
            chunk = in_page;
        if (chunk > MEM_CHUNK_MAX)
            chunk = MEM_CHUNK_MAX;
        uint32_t addr = (uint32_t)((mdl->PfnArray[pos / PAGE_SIZE] << PAGE_SHIFT) + pos % PAGE_SIZE);
        struct nf_mem_write_req q = {addr, (uint32_t)chunk};
        memcpy(msg + NF_MSG_HDR_SIZE, &q, sizeof(q));
        size_t mlen = NF_MSG_HDR_SIZE + sizeof(q);
        struct ndk_req *r = &reqs[k++];
        r->on_reply = batch_reply;
        r->batch_left = &left;
        r->batch_status = &bst;
        if (write) {
            memcpy(msg + mlen, (const uint8_t *)data + done, chunk);
            mlen += chunk;
            while (mlen % 8)
                msg[mlen++] = 0;
        } else {
            r->out = (uint8_t *)data + done;
            r->out_cap = chunk;
        }
        pthread_mutex_lock(&ad->lock);
        left++;
        pthread_mutex_unlock(&ad->lock);
        st = ndk_req_send(ad, r, write ? NF_OP_MEM_WRITE : NF_OP_MEM_READ, msg, mlen, 0);
        if (st != STATUS_SUCCESS && st != STATUS_PENDING) {
            pthread_mutex_lock(&ad->lock);
            left--;
            pthread_mutex_unlock(&ad->lock);
            break;
        }
        st = STATUS_SUCCESS;
        done += chunk;
    }
    pthread_mutex_lock(&ad->lock);
    while (left > 0)
        pthread_cond_wait(&ad->cond, &ad->lock);
    pthread_mutex_unlock(&ad->lock);
    free(reqs);
    free(msg);
    if (st != STATUS_SUCCESS)
        return st;
    return (NTSTATUS)bst;
}

NTSTATUS NdkFpgaWriteBuffer(NDK_ADAPTER *a, MDL *mdl, SIZE_T off, const VOID *data, SIZE_T len)
{
    return mem_io(a, mdl, off, (void *)(uintptr_t)data, len, 1);
}

NTSTATUS NdkFpgaReadBuffer(NDK_ADAPTER *a, MDL *mdl, SIZE_T off, VOID *data, SIZE_T len)
{
    return mem_io(a, mdl, off, data, len, 0);
}

NTSTATUS NdkFpgaQueryStats(NDK_ADAPTER *a, NDKFPGA_STATS *s)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !s)
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    uint8_t msg[NF_MSG_HDR_SIZE];
    struct nf_info in;
    size_t got = 0;
    memset(&in, 0, sizeof(in));
    NTSTATUS st = ndk_call(ad, NF_OP_INFO, msg, sizeof(msg), &in, sizeof(in), &got);
    if (st != STATUS_SUCCESS)
        return st;
    if (got < sizeof(in))
        return STATUS_INTERNAL_ERROR;
    memset(s, 0, sizeof(*s));
    s->FirmwareVersion = in.fw_version;
    s->ClockHz = in.clk_hz;
    s->WorkRequests = in.wr_count;
    s->LastWorkRequestOp = in.last_wr_op;
    s->LastWorkRequestCycles = in.last_wr_cycles;
    s->LastWorkRequestFwCycles = in.last_wr_fw_cycles;
    s->LinkRxOk = in.rx_ok;
    s->LinkRxBad = in.rx_bad;
    s->LinkRxDrop = in.rx_drop;
    s->LinkRetransmits = in.retransmits;
    s->Cycle = (uint64_t)in.cycle_hi << 32 | in.cycle_lo;
    return STATUS_SUCCESS;
}

const char *NdkFpgaStatusName(NTSTATUS st)
{
    return nf_status_name((uint32_t)st);
}

/* ------------------------------------------------------------------------- */
/* Diagnostics: devices, details, counters, pings                             */

const char *NdkFpgaErrorMessage(NDK_ADAPTER *a)
{
    if (ndk_obj_ok(a, NdkObjectTypeAdapter)) {
        struct ndk_adapter *ad = ndk_adapter_of(a);
        if (nf_link_status(ad->link) != NF_STATUS_SUCCESS)
            return nf_link_dead_reason(ad->link);
    }
    return nf_error_message();
}

/* Copy src into a fixed field, always terminated. */
static void put_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

/* The library-started devices after the boards. */
static const struct {
    ULONG kind;
    const char *name, *description;
} started_devices[] = {
    {NDKFPGA_DEVICE_SIM, "sim", "Verilator board model (nfsim)"},
    {NDKFPGA_DEVICE_MODEL, "model", "software adapter (nfmodel)"},
};
#define N_STARTED (sizeof(started_devices) / sizeof(started_devices[0]))
#define MAX_BOARDS 64

NTSTATUS NdkFpgaListDevices(NDKFPGA_DEVICE *devs, ULONG *count)
{
    if (!count || (!devs && *count > 0))
        return STATUS_INVALID_PARAMETER;
    ULONG cap = *count, n = 0;
#ifdef NF_WITH_BOARD_TRANSPORTS
    struct nf_board_info boards[MAX_BOARDS];
    int nb = nf_board_list(boards, MAX_BOARDS);
    if (nb > MAX_BOARDS)
        nb = MAX_BOARDS;
    for (int i = 0; i < nb; i++, n++) {
        if (n >= cap)
            continue;
        NDKFPGA_DEVICE *d = &devs[n];
        memset(d, 0, sizeof(*d));
        d->Kind = NDKFPGA_DEVICE_USB;
        d->Status = boards[i].may_open ? STATUS_SUCCESS : STATUS_ACCESS_DENIED;
        snprintf(d->Name, sizeof(d->Name), "usb:%03d-%03d", boards[i].bus, boards[i].addr);
        put_str(d->Description, sizeof(d->Description), boards[i].chip->name);
        put_str(d->Path, sizeof(d->Path), boards[i].node);
    }
#endif
    for (size_t k = 0; k < N_STARTED; k++, n++) {
        if (n >= cap)
            continue;
        NDKFPGA_DEVICE *d = &devs[n];
        memset(d, 0, sizeof(*d));
        d->Kind = started_devices[k].kind;
        put_str(d->Name, sizeof(d->Name), started_devices[k].name);
        put_str(d->Description, sizeof(d->Description), started_devices[k].description);
        uint32_t st = nf_transport_binary_path(started_devices[k].name, d->Path, sizeof(d->Path));
        d->Status = st == NF_STATUS_SUCCESS ? STATUS_SUCCESS : STATUS_NO_SUCH_FILE;
    }
    *count = n;
    return n > cap ? STATUS_BUFFER_TOO_SMALL : STATUS_SUCCESS;
}

/* The adapter's counters (STATS); STATUS_NOT_SUPPORTED from firmware before it. */
static NTSTATUS query_stats(struct ndk_adapter *ad, struct nf_stats *out)
{
    uint8_t msg[NF_MSG_HDR_SIZE];
    size_t got = 0;
    memset(out, 0, sizeof(*out));
    NTSTATUS st = ndk_call(ad, NF_OP_STATS, msg, sizeof(msg), out, sizeof(*out), &got);
    if (st == STATUS_SUCCESS && got < sizeof(*out))
        return STATUS_INTERNAL_ERROR;
    return st;
}

#define PROFILE_NAME(name, index) [index] = #name,
static const char *const profile_names[NF_PROFILE_COUNT] = {NF_PROFILE_LIST(PROFILE_NAME)};

NTSTATUS NdkFpgaQueryAdapterDetails(NDK_ADAPTER *a, NDKFPGA_ADAPTER_DETAILS *d)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !d)
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    struct nf_stats stats;
    NTSTATUS st = query_stats(ad, &stats);
    if (st != STATUS_SUCCESS && st != STATUS_NOT_SUPPORTED)
        return st;
    const struct nf_info *in = &ad->info;
    memset(d, 0, sizeof(*d));
    d->FirmwareVersion = in->fw_version;
    d->HardwareVersion = in->hw_version;
    d->LayoutVersion = in->layout_version;
    d->ClockHz = in->clk_hz;
    /* uart_period: clocks per bit with NF_SOC_UART_PERIOD_FRAC fraction bits */
    d->LinkBaud = in->uart_period ? (UINT32)(((uint64_t)in->clk_hz << NF_SOC_UART_PERIOD_FRAC) / in->uart_period) : 0;
    d->MemoryBytes = in->mem_bytes;
    d->UserMemoryBytes = in->mem_bytes - in->user_base;
    d->PageSize = in->page_size;
    d->MptEntries = in->mpt_entries;
    d->MttEntries = in->mtt_entries;
    d->MaxFrmrPages = in->max_frmr_pages;
    d->MaxQps = in->max_qps;
    d->MaxSge = in->max_sge;
    d->LinkRxSlots = in->rx_slots;
    d->LinkTxSlots = in->tx_slots;
    d->LinkMaxPayload = in->max_payload;
    d->Profile = NDKFPGA_PROFILE_NONE;
    if (st == STATUS_SUCCESS && stats.profile < NF_PROFILE_COUNT) {
        d->Profile = stats.profile;
        put_str(d->ProfileName, sizeof(d->ProfileName), profile_names[stats.profile]);
    }
    put_str(d->Device, sizeof(d->Device), ad->device);
    return STATUS_SUCCESS;
}

/* ---- counters ---- */

/* Names of the indexed counters: layout.toml's lists, lower case (filled once). */
#define NAME_LEN 32
static char op_names[NF_STAT_OP_COUNT][NAME_LEN];
static char status_names[NF_STAT_STATUS_COUNT][NAME_LEN];
#define N_REFUSE_CODES NF_STATS_REFUSE_CODES_COUNT
static char refuse_names[N_REFUSE_CODES][NAME_LEN];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void lower_into(char *dst, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < NAME_LEN; i++)
        dst[i] = (char)((src[i] >= 'A' && src[i] <= 'Z') ? src[i] - 'A' + 'a' : src[i]);
    dst[i] = '\0';
}

#define OP_NAME(name, index) lower_into(op_names[index], #name);
#define STATUS_NAME(name, index) lower_into(status_names[index], #name);
#define REFUSE_NAME(name, code) lower_into(refuse_names[code], #name);
static void names_init(void)
{
    NF_STAT_OP_LIST(OP_NAME)
    NF_STAT_STATUS_LIST(STATUS_NAME)
    NF_REFUSE_LIST(REFUSE_NAME)
}

#define COUNTED_STATUS(name, index) [index] = (NTSTATUS)NF_STATUS_##name,
static const NTSTATUS counted_status[NF_STAT_STATUS_COUNT] = {NF_STAT_STATUS_LIST(COUNTED_STATUS)};

static const char *const op_descriptions[NF_STAT_OP_COUNT] = {
    [NF_STAT_OP_PING] = "link round trips (NdkFpgaPing)",
    [NF_STAT_OP_INFO] = "adapter information requests",
    [NF_STAT_OP_STATS] = "counter requests (NdkFpgaQueryCounters)",
    [NF_STAT_OP_MEM_WRITE] = "adapter memory writes (NdkFpgaWriteBuffer)",
    [NF_STAT_OP_MEM_READ] = "adapter memory reads (NdkFpgaReadBuffer)",
    [NF_STAT_OP_ADAPTER_RESET] = "adapter resets",
    [NF_STAT_OP_MR_CREATE] = "MRs created (NdkCreateMr)",
    [NF_STAT_OP_MR_DESTROY] = "MRs closed",
    [NF_STAT_OP_MR_REGISTER] = "registrations (NdkRegisterMr)",
    [NF_STAT_OP_MR_DEREGISTER] = "deregistrations (NdkDeregisterMr)",
    [NF_STAT_OP_FRMR_INIT] = "fast-register MR initializations (NdkInitializeFastRegisterMr)",
    [NF_STAT_OP_QP_CREATE] = "QPs created (NdkCreateQp)",
    [NF_STAT_OP_QP_CONNECT] = "QP connections",
    [NF_STAT_OP_QP_DISCONNECT] = "QP disconnections",
    [NF_STAT_OP_QP_DESTROY] = "QPs closed",
    [NF_STAT_OP_QP_FLUSH] = "QP flushes (NdkFlush)",
    [NF_STAT_OP_WR_FAST_REGISTER] = "fast-register work requests (NdkFastRegister)",
    [NF_STAT_OP_WR_INVALIDATE] = "invalidate work requests (NdkInvalidate)",
    [NF_STAT_OP_WR_READ] = "RDMA Read work requests (NdkRead)",
    [NF_STAT_OP_WR_WRITE] = "RDMA Write work requests (NdkWrite)",
};

/* The descriptions are the layout description's (tools/layout.toml, enum REFUSE). */
#define REFUSE_DOC(name, code, doc) [code] = doc,
static const char *const refuse_descriptions[N_REFUSE_CODES] = {NF_REFUSE_DOC_LIST(REFUSE_DOC)};
#undef REFUSE_DOC

/* Fixed counters: name, description, and where the value comes from. */
struct fixed_counter {
    ULONG group;
    const char *name, *description;
    size_t off;      /* offset of a uint32_t in struct nf_stats, or of a uint64_t in struct nf_link_stats */
};
#define BOARD_ROW(f, d) {NDKFPGA_COUNTER_LINK, #f, d, offsetof(struct nf_stats, f)},
#define HOST(n, f, d) {NDKFPGA_COUNTER_HOST_LINK, n, d, offsetof(struct nf_link_stats, f)}
static const struct fixed_counter fixed_counters[] = {
    /* The board's counters and their descriptions: STATS fields marked counter in tools/layout.toml. */
    NF_STATS_COUNTER_LIST(BOARD_ROW)
    HOST("frames_tx", frames_tx, "frames this host sent (DATA, again, ACK, RESET)"),
    HOST("data_tx", data_tx, "DATA frames sent for the first time"),
    HOST("retransmits", retransmits, "DATA frames sent again"),
    HOST("timeouts", timeouts, "retransmission timer expiries"),
    HOST("fast_retransmits", fast_retransmits, "go-backs on repeated acks, before the timer"),
    HOST("acks_tx", acks_tx, "pure ACK frames sent"),
    HOST("frames_rx", frames_rx, "good frames received"),
    HOST("crc_errors", bad_frames, "frames from the board dropped for a bad CRC, length or escape"),
    HOST("dups", dups, "DATA frames from the board dropped as duplicate or out of order"),
    HOST("msgs_tx", msgs_tx, "messages sent"),
    HOST("msgs_rx", msgs_rx, "messages received"),
    HOST("bytes_tx", wire_tx, "bytes written to the transport"),
    HOST("bytes_rx", wire_rx, "bytes read from the transport"),
};
#define N_FIXED (sizeof(fixed_counters) / sizeof(fixed_counters[0]))

#define N_HOST_COUNTERS 5u

/* Engine refusal codes that have a name (not OK). */
static ULONG refuse_code_count(void)
{
    ULONG n = 0;
    for (ULONG c = 1; c < N_REFUSE_CODES; c++)
        n += refuse_names[c][0] != '\0';
    return n;
}

static ULONG counter_count(void)
{
    return (ULONG)N_FIXED + NF_STAT_OP_COUNT + 1u + NF_STAT_STATUS_COUNT + 1u + refuse_code_count() + N_HOST_COUNTERS;
}

/* Append one counter at *n when there is room. */
static void put_counter(NDKFPGA_COUNTER *out, ULONG cap, ULONG *n, ULONG group, const char *name, const char *desc,
                        UINT64 value, NTSTATUS status, ULONG code)
{
    if (*n < cap) {
        NDKFPGA_COUNTER *c = &out[*n];
        c->Group = group;
        c->Status = status;
        c->ProviderErrorCode = code;
        c->Name = name;
        c->Description = desc ? desc : "";
        c->Value = value;
    }
    (*n)++;
}

NTSTATUS NdkFpgaQueryCounters(NDK_ADAPTER *a, NDKFPGA_COUNTER *out, ULONG *count)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !count || (!out && *count > 0))
        return STATUS_INVALID_PARAMETER;
    pthread_once(&names_once, names_init);
    ULONG need = counter_count();
    if (*count < need) {
        *count = need;
        return STATUS_BUFFER_TOO_SMALL;
    }
    struct ndk_adapter *ad = ndk_adapter_of(a);
    struct nf_stats s;
    NTSTATUS st = query_stats(ad, &s);
    if (st != STATUS_SUCCESS)
        return st;
    struct nf_link_stats h;
    nf_link_get_stats(ad->link, &h);
    ULONG cap = *count, n = 0;
    for (size_t i = 0; i < N_FIXED; i++) {
        const struct fixed_counter *f = &fixed_counters[i];
        UINT64 v;
        if (f->group == NDKFPGA_COUNTER_LINK) {
            uint32_t w;
            memcpy(&w, (const uint8_t *)&s + f->off, sizeof(w));
            v = w;
        } else {
            memcpy(&v, (const uint8_t *)&h + f->off, sizeof(v));
        }
        put_counter(out, cap, &n, f->group, f->name, f->description, v, STATUS_SUCCESS, 0);
    }
    for (ULONG i = 0; i < NF_STAT_OP_COUNT; i++)
        put_counter(out, cap, &n, NDKFPGA_COUNTER_OPERATION, op_names[i], op_descriptions[i], s.ops[i],
                    STATUS_SUCCESS, 0);
    put_counter(out, cap, &n, NDKFPGA_COUNTER_OPERATION, "unknown", "messages of a kind the firmware does not know",
                s.ops_unknown, STATUS_SUCCESS, 0);
    for (ULONG i = 0; i < NF_STAT_STATUS_COUNT; i++)
        put_counter(out, cap, &n, NDKFPGA_COUNTER_REFUSAL, status_names[i], NdkFpgaStatusName(counted_status[i]),
                    s.refused[i], counted_status[i], 0);
    put_counter(out, cap, &n, NDKFPGA_COUNTER_REFUSAL, "other", "any other failure status", s.refused_other,
                STATUS_SUCCESS, 0);
    for (ULONG c = 1; c < N_REFUSE_CODES; c++)
        if (refuse_names[c][0])
            put_counter(out, cap, &n, NDKFPGA_COUNTER_ACCESS_REFUSAL, refuse_names[c], refuse_descriptions[c],
                        s.refuse_codes[c], STATUS_SUCCESS, c);
    pthread_mutex_lock(&ad->lock);
    const UINT64 hv[N_HOST_COUNTERS] = {ad->cq_overflows, ad->cq_dropped, ad->req_timeouts, ad->wr_timeouts,
                                        ad->close_flushed};
    pthread_mutex_unlock(&ad->lock);
    static const char *const hn[N_HOST_COUNTERS][2] = {
        {"cq_overflows", "CQs that overflowed (reported once with STATUS_BUFFER_OVERFLOW; CQ and QPs unusable)"},
        {"cq_dropped", "completions that found their CQ full or overflowed (not delivered)"},
        {"request_timeouts", "requests unanswered within the deadline (completed STATUS_IO_TIMEOUT)"},
        {"wr_timeouts", "work requests unanswered within the deadline (completed STATUS_IO_TIMEOUT)"},
        {"close_cancelled", "work requests completed STATUS_CANCELLED by a close"},
    };
    for (ULONG i = 0; i < N_HOST_COUNTERS; i++)
        put_counter(out, cap, &n, NDKFPGA_COUNTER_HOST, hn[i][0], hn[i][1], hv[i], STATUS_SUCCESS, 0);
    *count = n;
    return STATUS_SUCCESS;
}

/* ---- pings ---- */

struct ping_run {
    uint32_t body;          /* payload bytes of each ping (a multiple of 8) */
    uint32_t outstanding;
    uint32_t status;        /* first failure */
    uint32_t *free_slots;   /* stack of idle slot indices */
    uint32_t nfree;
    NDKFPGA_PING_RESULT *res;
};

struct ping_slot {
    struct ndk_req r;
    struct ping_run *run;
    uint32_t index, seq;
    uint64_t sent_ns;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint8_t ping_byte(uint32_t seq, uint32_t i)
{
    return (uint8_t)(seq * 131u + i * 7u + 1u);
}

/* A ping's reply (under ad->lock, on the link thread; body NULL when the link died). */
static void ping_reply(struct ndk_adapter *ad, struct ndk_req *r, uint32_t status, const uint8_t *body, size_t len)
{
    (void)ad;
    struct ping_slot *s = NDK_CONTAINER(r, struct ping_slot, r);
    struct ping_run *run = s->run;
    uint64_t rtt = mono_ns() - s->sent_ns;
    if (status == NF_STATUS_SUCCESS) {
        int same = body && len == run->body;
        for (uint32_t i = 0; same && i < run->body; i++)
            same = body[i] == ping_byte(s->seq, i);
        if (!same)
            status = NF_STATUS_INTERNAL_ERROR;
    }
    if (status == NF_STATUS_SUCCESS) {
        NDKFPGA_PING_RESULT *res = run->res;
        if (res->Replies == 0 || rtt < res->MinNs)
            res->MinNs = rtt;
        if (rtt > res->MaxNs)
            res->MaxNs = rtt;
        res->TotalNs += rtt;
        res->Replies++;
    } else if (run->status == NF_STATUS_SUCCESS) {
        run->status = status;
    }
    run->free_slots[run->nfree++] = s->index;
    run->outstanding--;
}

NTSTATUS NdkFpgaPing(NDK_ADAPTER *a, ULONG count, ULONG in_flight, ULONG payload, NDKFPGA_PING_RESULT *res)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !res || count == 0 || in_flight == 0 || payload > NDKFPGA_PING_MAX_PAYLOAD)
        return STATUS_INVALID_PARAMETER;
    memset(res, 0, sizeof(*res));
    struct ndk_adapter *ad = ndk_adapter_of(a);
    uint32_t depth = in_flight < count ? in_flight : count;
    struct ping_run run;
    memset(&run, 0, sizeof(run));
    run.body = (payload + 7u) & ~7u;
    run.res = res;
    struct ping_slot *slots = calloc(depth, sizeof(*slots));
    uint32_t *free_slots = calloc(depth, sizeof(*free_slots));
    uint8_t *msg = malloc(NF_MSG_HDR_SIZE + run.body);
    if (!slots || !free_slots || !msg) {
        free(slots);
        free(free_slots);
        free(msg);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    run.free_slots = free_slots;
    for (uint32_t i = 0; i < depth; i++) {
        slots[i].index = i;
        free_slots[run.nfree++] = depth - 1u - i;
    }
    NTSTATUS st = STATUS_SUCCESS;
    uint64_t t0 = mono_ns();
    for (uint32_t seq = 0; seq < count; seq++) {
        pthread_mutex_lock(&ad->lock);
        while (run.nfree == 0 && run.status == NF_STATUS_SUCCESS)
            pthread_cond_wait(&ad->cond, &ad->lock);
        if (run.status != NF_STATUS_SUCCESS) {
            pthread_mutex_unlock(&ad->lock);
            break;
        }
        struct ping_slot *s = &slots[run.free_slots[--run.nfree]];
        run.outstanding++;
        pthread_mutex_unlock(&ad->lock);
        memset(&s->r, 0, sizeof(s->r));
        s->r.on_reply = ping_reply;
        s->run = &run;
        s->seq = seq;
        for (uint32_t i = 0; i < run.body; i++)
            msg[NF_MSG_HDR_SIZE + i] = ping_byte(seq, i);
        s->sent_ns = mono_ns();
        st = ndk_req_send(ad, &s->r, NF_OP_PING, msg, NF_MSG_HDR_SIZE + run.body, 0);
        if (st != STATUS_SUCCESS && st != STATUS_PENDING) {
            /* Not sent: no reply will come for it. */
            pthread_mutex_lock(&ad->lock);
            run.outstanding--;
            run.free_slots[run.nfree++] = s->index;
            if (run.status == NF_STATUS_SUCCESS)
                run.status = (uint32_t)st;
            pthread_mutex_unlock(&ad->lock);
            break;
        }
    }
    pthread_mutex_lock(&ad->lock);
    while (run.outstanding > 0)
        pthread_cond_wait(&ad->cond, &ad->lock);
    st = (NTSTATUS)run.status;
    pthread_mutex_unlock(&ad->lock);
    res->ElapsedNs = mono_ns() - t0;
    free(slots);
    free(free_slots);
    free(msg);
    return st;
}

const NDK_ADAPTER_DISPATCH ndk_adapter_dispatch = {
    .NdkQueryExtension = ndk_query_extension,
    .NdkQueryAdapterInfo = query_adapter_info,
    .NdkCreateCq = ndk_create_cq,
    .NdkCreatePd = ndk_create_pd,
    .NdkCreateSharedEndpoint = create_shared_endpoint,
    .NdkCreateConnector = ndk_create_connector,
    .NdkCreateListener = ndk_create_listener,
    .NdkBuildLAM = build_lam,
    .NdkReleaseLAM = release_lam,
};
