/* SPDX-License-Identifier: Apache-2.0 */
/* Internals of the NDKPI provider (host/src/ndk_*.c): object structs, the adapter's
 * request/reply machinery and the callback thread. Not installed.
 *
 * Files, each calling only the ones after it (no file calls back up):
 *   ndk_adapter.c  open/close, the link glue, deadlines, NdkCloseObject (the top)
 *   ndk_conn.c     connectors: NDK's steps, loopback connections; ndk_pd.c  PDs and MRs
 *   ndk_listen.c   listeners
 *   ndk_wire.c     connections to another adapter: the steps and the board's events
 *   ndk_conn_state.c  what connectors share: addresses, state changes, completions
 *   ndk_cm.c       the board's CM contract (CM_* requests)
 *   ndk_qp.c       QPs: create, close, flush, the work-request calls' rule checks and
 *                  posting, state
 *   ndk_wq.c       a QP's two work queues (initiator, receive): completion routing,
 *                  failure, deadlines
 *   ndk_hostmem.c  buffers in host memory: shadow pages, copies at each hand-over
 *   ndk_cq.c       CQs;  ndk_mdl.c  MDLs, LAMs, buffers;  ndk_diag.c  diagnostics
 *   ndk_event.c    the callback thread
 *   ndk_request.c  requests and replies;  ndk_object.c  live objects, references, events
 * Upward news goes through pointers set by the upper file: a QP's user (ndk_qp_attach),
 * the callback thread's tick, a request's on_reply.
 *
 * Threads and locks
 *  - consumer threads call the dispatch entries;
 *  - the link thread (nf_link) calls ndk_adapter.c's on_message/on_dead: it only updates
 *    state and queues events, never runs a user callback and never blocks on the link;
 *  - the callback thread runs every user callback (events), one at a time.
 *  ad->lock protects everything except the per-QP work queues (initiator and receive),
 *  so that posting never takes the adapter lock: a queue has one producer at a time (the
 *  consumer serializes its posts), which publishes tail under the link's lock alone
 *  (nf_link_post_msg); their consumers hold qp->ring_lock (struct ndk_wq).
 *  Lock order: ad->lock, then qp->ring_lock, then the link's. Object references are dropped only on consumer
 *  threads or the callback thread, so a close's teardown may send on the link. */
#ifndef NDK_INTERNAL_H
#define NDK_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "ndkfpga.h"
#include "ndkpi.h"
#include "nf_layout.h"
#include "link/nf_link.h"
#include "transport/nf_transport.h"

/* The provider's NTSTATUS numbers, flags and operation types are the firmware's (one
 * source: layout.toml; generated asserts). */
#include "nf_ndkpi_check.h"
/* The one way a status word from the wire (a reply's or a CQE's) becomes an NTSTATUS:
 * the numbers are the same (asserted above). */
static inline NTSTATUS ndk_status(uint32_t wire)
{
    return (NTSTATUS)wire;
}

_Static_assert(NDKFPGA_PING_MAX_PAYLOAD == NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE, "ping payload");
_Static_assert(PAGE_SIZE == NF_ADAPTER_PAGE_SIZE, "page size");
_Static_assert(PAGE_SHIFT == NF_ADAPTER_PAGE_SHIFT, "page shift");

/* Host-side limits (the board's come from INFO). */
#define NDK_MAX_QUEUE_DEPTH 1024u      /* initiator queue depth per QP (host ring) */
#define NDK_MAX_CQ_DEPTH 65536u        /* CqDepth limit */
/* Inbound/outbound RDMA Read limit: the READs a responder QP answers at once. Larger
 * requests are capped to it (NdkConnect, NdkAccept). */
#define NDK_MAX_READ_LIMIT NF_CM_MAX_RD
#define NDK_MAX_CALLER_DATA NF_CM_REQ_PDATA /* private data of NdkConnect: what a REQ carries */
#define NDK_MAX_CALLEE_DATA NF_CM_REJ_PDATA /* of NdkAccept/NdkReject: what both a REP and a REJ carry */
#define NDK_VENDOR_ID 0x4E46u          /* 'NF' */
#define NDK_DEVICE_ID 0x0001u
/* Pages of one MR_REGISTER message: the page list must fit one frame. */
#define NDK_MAX_REGISTER_PAGES NF_FRAME_PAGES_MR_REGISTER
/* How often the callback thread looks for requests past their deadline. */
#define NDK_WATCH_PERIOD_MS 100u
/* A work request's MSG_HDR.tag names its QP and ring slot, so that a short answer (the
 * adapter answers the rest of a frame whose replies exceed its TX window without running
 * them) completes it: WR_TAG | QP index << WR_TAG_ID_BITS | the id's low bits. Request
 * tags stay below WR_TAG. Ring depths are below 2^WR_TAG_ID_BITS, QP indexes 2^12. */
#define NDK_WR_TAG 0x80000000u
#define NDK_WR_TAG_ID_BITS 19u
#define NDK_WR_TAG_ID_MASK ((1u << NDK_WR_TAG_ID_BITS) - 1u)
#define NDK_MAX_QPS 4096u
_Static_assert(NDK_MAX_QUEUE_DEPTH <= NDK_WR_TAG_ID_MASK && NF_ADAPTER_MAX_RQ_DEPTH <= NDK_WR_TAG_ID_MASK &&
                   ((NDK_MAX_QPS - 1u) << NDK_WR_TAG_ID_BITS) < NDK_WR_TAG,
               "a work request's tag holds its QP index and its id");
/* Pages of one WR_FAST_REGISTER message. */
#define NDK_MAX_FR_MSG_PAGES NF_FRAME_PAGES_FAST_REGISTER

struct ndk_adapter;
struct ndk_core;
struct ndk_hm_io;
struct ndk_hm_region;
struct ndk_hmap;
struct ndk_hm_held;

/* ---- events: everything the callback thread runs ---- */
enum ndk_ev_kind {
    EV_REQUEST = 1, /* RequestCompletion(ctx, status) */
    EV_CREATE,      /* CreateCompletion(ctx, status, obj) */
    EV_CLOSE,       /* CloseCompletion(ctx), then free the object */
    EV_CQ_NOTIFY,   /* CqNotification(ctx, status) */
    EV_CONNECT,     /* ConnectEvent(ctx, connector) */
    EV_DISCONNECT,  /* DisconnectEvent(ctx) */
    EV_DISCONNECT_EX, /* DisconnectEvent(ctx, reason 0): NdkCompleteConnectEx, NdkAcceptEx */
    EV_CQ_ERROR,    /* CqNotification(ctx, STATUS_BUFFER_OVERFLOW): once per CQ */
    EV_CALL,        /* the library's own work on the callback thread: fn(ctx) */
};

struct ndk_event {
    struct ndk_event *next;
    int kind;
    int embedded;             /* part of an object: never freed by the callback thread */
    void (*fn)(void);         /* the user callback, cast per kind */
    void *ctx;
    NTSTATUS status;
    NDK_OBJECT_HEADER *obj;   /* EV_CREATE object / EV_CONNECT connector */
    struct ndk_core *core;    /* reference dropped after the callback (EV_CLOSE: the object) */
    int *queued;              /* cleared just before the callback runs (may be NULL) */
};

/* ---- every object ---- */
/* What the objects of one type share (one table per type, the way a provider's ops
 * table is): the object embeds its public struct first and its ndk_core at core_off. */
struct ndk_type {
    NDK_OBJECT_TYPE type;
    size_t size, core_off;
    void (*teardown)(struct ndk_core *c); /* once, when closing and refs reach 0; no lock held (may be NULL) */
    void (*fini)(struct ndk_core *c);     /* frees what the object holds, before the object (may be NULL) */
};

struct ndk_core {
    struct ndk_adapter *ad;
    struct ndk_core *parents[3]; /* each holds a reference for us */
    int refs;                    /* children, requests in flight, queued events */
    int closing;
    int close_queued;
    NDK_FN_CLOSE_COMPLETION close_cb;
    void *close_ctx;
    const struct ndk_type *type;          /* NULL: the adapter's own core */
    struct ndk_core *next, *prev;         /* adapter's list of live objects */
    int registered;                       /* in the registry of live objects (ndk_live) */
    NDK_OBJECT_HEADER *hdr;
    struct ndk_event close_ev;
};

/* ---- a request to the board with a reply ---- */
struct ndk_req;
/* Called under ad->lock on the link thread (or by ndk_on_dead/close with
 * body == NULL) exactly once. */
typedef void (*ndk_reply_fn)(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS status, const uint8_t *body,
                             size_t len);
struct ndk_req {
    struct ndk_req *next;
    uint32_t tag;
    uint16_t op;
    ndk_reply_fn on_reply;
    /* synchronous waiter */
    int done;
    NTSTATUS status;
    void *out;
    size_t out_cap, out_len;
    /* asynchronous completion */
    struct ndk_core *obj;
    void *arg;
    NDK_FN_REQUEST_COMPLETION rc;
    NDK_FN_CREATE_COMPLETION cc;
    void *ctx;
    /* What a reply handler keeps of its request: an FRMR_INIT's page count and remote
     * access (the MR takes them when the board accepts), a QP_FLUSH's queue tails at
     * its place in the stream (what it retires and cancels). */
    struct ndk_frmr_init {
        uint32_t pages;
        int remote;
    } frmr;
    struct ndk_flush_tails {
        uint32_t iq_tail, rq_tail;
    } flush;
    /* Gate (asynchronous requests): a reply that arrives while the issuing call has
     * not returned yet is held until it has, so no callback can run before the
     * call returned STATUS_PENDING. */
    int gate, issuing, early;
    NTSTATUS early_status;
    uint8_t early_body[16];
    size_t early_len;
    int early_has_body;
    uint64_t deadline_us; /* no reply by then: completes STATUS_IO_TIMEOUT */
};

/* ---- objects ---- */
struct ndk_pd {
    NDK_PD pub;
    struct ndk_core core;
    uint32_t pdn;
};

/* A CQ's result and whether it was a solicited receive completion (NdkArmCq SOLICITED). */
struct ndk_cq_entry {
    NDK_RESULT_EX r;
    int solicited;
};

struct ndk_cq {
    NDK_CQ pub;
    struct ndk_core core;
    struct ndk_cq_entry *ring;
    uint32_t depth, head, count;
    uint32_t overruns;      /* completions that found the CQ full or overflowed */
    int overflowed;         /* the CQ overflowed: unusable, reports nothing more (its QPs
                               are marked: cq_overflowed) */
    struct ndk_event ovf_ev;
    int armed;              /* 0: no, else NDK_CQ_NOTIFY_x + 1 */
    int notify_queued;
    NDK_FN_CQ_NOTIFICATION_CALLBACK notify;
    void *notify_ctx;
    struct ndk_event notify_ev;
};

enum ndk_mr_state {
    MR_CREATED = 0,   /* token known, nothing registered */
    MR_REGISTERING,   /* NdkRegisterMr in flight */
    MR_REGISTERED,    /* normal MR registered */
    MR_DEREGISTERING,
};

/* An MR or a memory window: both are a key-table entry named by a token (MR_CREATE or
 * MW_CREATE, MR_DESTROY at close); pub.Header.ObjectType tells which. */
struct ndk_mr {
    union {
        NDK_MR pub;
        NDK_MW mw;          /* a window: the same header, its own dispatch table */
    };
    struct ndk_core core;
    uint32_t token;
    int fast;
    int state;              /* normal MRs: enum ndk_mr_state */
    int inits_in_flight;    /* fast MRs: NdkInitializeFastRegisterMr calls pending */
    uint32_t frmr_pages;    /* fast MRs: capacity after the last successful init (0: none) */
    int remote_access;
    struct ndk_hm_region *hreg; /* host memory it maps now (ad->hm_lock; NULL: adapter memory) */
    struct ndk_mr *hm_next;     /* the adapter's MRs over host memory (ad->hm_lock) */
};

struct ndk_wr_slot {
    void *ctx;
    uint32_t op_type;
    uint32_t silent;        /* read by the deadline watch: a silent success reports nothing */
    uint32_t done;          /* receive queue: completed out of order (a hole the head skips) */
    struct ndk_hm_io *hm;   /* host-memory bytes to bring home when it completes (NULL: none) */
};

/* A work queue: a ring of slots, ids head..tail-1 outstanding (the id is the wire's
 * wr_id); depth slots at most, mask + 1 (a power of two) in the ring. */
/* A ring of requests: its producer (one post at a time) writes a slot, then tail under
 * the link's lock with the message; consumers (under qp->ring_lock) read slots below
 * tail, then advance head. */
struct ndk_wq {
    struct ndk_wr_slot *slot;
    uint32_t depth, mask, head, tail;
};

/* The consumers' view of tail: every slot below it is written. */
static inline uint32_t ndk_wq_tail(const struct ndk_wq *q)
{
    return __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
}

/* Consumers only (under qp->ring_lock): slots below h are free to reuse. */
static inline void ndk_wq_set_head(struct ndk_wq *q, uint32_t h)
{
    __atomic_store_n(&q->head, h, __ATOMIC_RELEASE);
}

/* What a QP tells its user (a connector), under ad->lock: the QP goes away; the
 * transport gave a request up (IO_TIMEOUT: the peer stopped answering). */
struct ndk_qp_user {
    void (*gone)(void *user);
    void (*lost)(void *user);
};

struct ndk_qp {
    NDK_QP pub;
    struct ndk_core core;
    struct ndk_cq *icq, *rcq;   /* rcq: receives complete there (NULL: no receive queue) */
    void *context;
    uint32_t qpn;
    uint32_t wr_tag;            /* NDK_WR_TAG | its index in ad->qps: its work requests' tags */
    uint32_t max_sge;
    uint32_t max_recv_sge;
    /* Written only by ndk_qp.c (ndk_qp_set_connected), under ad->lock; read lock-free
     * (atomic) by the posting path, which refuses CONNECTION_INVALID inline. The board
     * gives the same status for a QP it never connected, but it cannot see the whole
     * connection: it learns of it by QP_CONNECT and QP_DISCONNECT, and the host's ends
     * without either when the peer QP is closed. */
    int connected;
    /* A CQ of the QP overflowed: NDK makes the QP unusable. Set under ad->lock when the
     * CQ overflows or the QP is created on one that has; read lock-free by posting. */
    int cq_overflowed;
    uint64_t watch_since_us;    /* deadline watch: since when watch_head is the first request
                                   outstanding that reports a completion (0: none; callback thread) */
    uint32_t watch_head;
    void *user;                 /* connector using this QP (ndk_qp_attach), under ad->lock */
    const struct ndk_qp_user *user_ops;
    pthread_mutex_t ring_lock;
    struct ndk_wq iq;           /* initiator requests: complete in order, silent ones retire unseen */
    struct ndk_wq rq;           /* receives: complete in order when a Send fills them (no deadline) */
};

enum ndk_conn_state {
    CONN_IDLE = 0,
    CONN_CONNECTING,     /* active: NdkConnect pending */
    CONN_CONNECT_DONE,   /* active: peer accepted, NdkCompleteConnect expected */
    CONN_COMPLETING,     /* active: QP_CONNECT messages in flight */
    CONN_INCOMING,       /* passive: delivered to ConnectEvent, accept/reject expected */
    CONN_ACCEPTING,      /* passive: NdkAccept pending */
    CONN_CONNECTED,
    CONN_DISCONNECTING,
    CONN_CLOSED,         /* rejected, refused or disconnected */
};

struct ndk_listener;

struct ndk_connector {
    NDK_CONNECTOR pub;
    struct ndk_core core;
    int state;
    struct ndk_connector *peer;
    struct ndk_qp *qp;
    struct sockaddr_storage local, remote;
    ULONG local_len, remote_len;
    /* what the peer sent (GetConnectionData) */
    ULONG peer_ird, peer_ord;
    uint8_t peer_data[NDK_MAX_CALLEE_DATA];
    ULONG peer_data_len;
    ULONG my_ird, my_ord;
    NDK_FN_REQUEST_COMPLETION op_cb;  /* connect / accept / complete / disconnect */
    void *op_ctx;
    void (*disc_cb)(void); /* the DisconnectEvent, called as disc_kind says */
    int disc_kind;         /* EV_DISCONNECT or EV_DISCONNECT_EX */
    void *disc_ctx;
    int replies_left;
    NTSTATUS reply_status;
    /* On the wire (the board's CM): the connection id, the adapter's list of them
     * (under ad->lock), the receive queue's tail when NdkDisconnect went out. */
    int wire;
    uint32_t wire_id;
    struct ndk_connector *wire_next;
    uint32_t disc_rq_tail;
    int peer_gone;         /* the peer's DREQ came: its DisconnectEvent ran */
};

struct ndk_listener {
    NDK_LISTENER pub;
    struct ndk_core core;
    NDK_FN_CONNECT_EVENT_CALLBACK connect_cb;
    void *connect_ctx;
    int listening;
    int paused;
    struct sockaddr_storage addr;
    ULONG addr_len;
    struct ndk_listener *next; /* adapter's listeners */
    uint32_t wire_id;          /* the board's listen id (0: loopback only) */
    struct ndk_event *backlog, *backlog_tail;
};

struct ndk_buffer {
    MDL mdl;
    struct ndk_adapter *ad;
    struct ndk_buffer *next; /* adapter's buffers (freed at close if left over) */
    void *va_base;
    size_t va_len;
    uint32_t npages;
    PFN_NUMBER pfn[];
};

struct ndk_adapter {
    NDK_ADAPTER pub;
    struct ndk_core core;
    struct nf_link *link;
    struct nf_info info;
    pthread_mutex_t lock;
    pthread_cond_t cond;      /* synchronous waiters and close */
    pthread_cond_t ev_cond;   /* callback thread */
    pthread_t cb_thread;
    int cb_running;           /* thread started */
    int cb_stop;
    int cb_busy;
    int (*tick)(struct ndk_adapter *ad); /* periodic work of the callback thread, under ad->lock */
    struct ndk_event *ev_head, *ev_tail;
    NTSTATUS dead;            /* link death status, STATUS_SUCCESS while alive */
    uint32_t next_tag;
    uint32_t next_pdn;
    struct ndk_req *reqs;
    struct ndk_qp **qps;      /* by qpn */
    uint32_t nqps;
    struct ndk_listener *listeners;
    struct ndk_connector *wire_conns; /* connectors with a board connection id */
    int has_port;             /* the firmware has a network port (NET_CONFIG answered) */
    struct ndk_core objects;  /* list head of live child objects */
    struct ndk_buffer *buffers;
    uint8_t *page_used;       /* adapter pages of the user region */
    uint32_t first_page, npages;
    char device[160];         /* the transport's name: what was opened (NdkFpgaQueryAdapterDetails) */
    uint64_t req_timeout_us;  /* a request or work request unanswered this long completes IO_TIMEOUT */
    uint64_t next_watch_us;   /* next deadline scan (callback thread) */
    /* host memory (ndk_hostmem.c): shadow pages, the MRs mapping them, held completions */
    pthread_mutex_t hm_lock;  /* after ad->lock; hm_host and every MR's hreg */
    uintptr_t *hm_host;       /* per user page: the host page it shadows (0: none) */
    uint32_t hm_shadows;      /* shadow pages now (atomic: the posting path's test) */
    struct ndk_hmap *hm_maps;
    struct ndk_mr *hm_mrs;
    struct ndk_hm_held *hm_held, *hm_held_tail; /* completions waiting for their bytes, in order */
    int hm_held_queued;       /* the callback thread has them to run */
    /* host-side counters (NdkFpgaQueryCounters, group NDKFPGA_COUNTER_HOST) */
    uint64_t cq_overflows, cq_dropped, req_timeouts, wr_timeouts, close_flushed;
};

#define NDK_CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Dispatch tables (exposed for the white-box unit tests). */
extern const NDK_ADAPTER_DISPATCH ndk_adapter_dispatch;
extern const NDK_PD_DISPATCH ndk_pd_dispatch;
extern const NDK_MR_DISPATCH ndk_mr_dispatch;
extern const NDK_MW_DISPATCH ndk_mw_dispatch;
extern const NDK_QP_DISPATCH ndk_qp_dispatch;
extern const NDK_CONNECTOR_DISPATCH ndk_conn_dispatch;
extern const NDK_LISTENER_DISPATCH ndk_listener_dispatch;

/* ndk_adapter.c: an adapter's memory (NdkFpgaOpenAdapter and NdkFpgaCloseAdapter use
 * these, and the unit tests for adapters without a board). setup sizes the page and
 * QP tables from ad->info and makes the adapter a live object. */
struct ndk_adapter *ndk_adapter_alloc(void);
NTSTATUS ndk_adapter_setup(struct ndk_adapter *ad);
void ndk_adapter_free(struct ndk_adapter *ad);

/* ndk_object.c: live objects, references, close, the event queue. */
/* Registry of the live objects of every adapter: a handle is used only when ndk_live
 * says this library created it and has not freed it (lock-free lookup). add returns
 * 0 when the registry is full (32768 objects). */
int ndk_live(const void *obj);
int ndk_registry_add(const void *obj);
void ndk_registry_del(const void *obj);
int ndk_registry_has_room(void);
/* A live object of this type (hdr is its NDK_OBJECT_HEADER, first in the object).
 * Inline for the posting path: an object found in its home slot of the registry
 * (open addressing, ndk_object.c) while no rebuild ran is live; anything else asks
 * ndk_live. */
#define NDK_REG_BITS 16u
#define NDK_REG_TOMB ((uintptr_t)1)
extern uintptr_t ndk_reg_slot[1u << NDK_REG_BITS];
extern unsigned ndk_reg_seq; /* odd while a rebuild runs */
static inline uint32_t ndk_reg_hash(uintptr_t k)
{
    return (uint32_t)(((uint64_t)k * 0x9E3779B97F4A7C15ull) >> (64u - NDK_REG_BITS));
}
static inline int ndk_obj_ok(const void *hdr, NDK_OBJECT_TYPE type)
{
    uintptr_t k = (uintptr_t)hdr;
    unsigned s0 = __atomic_load_n(&ndk_reg_seq, __ATOMIC_ACQUIRE);
    int home = k > NDK_REG_TOMB && __atomic_load_n(&ndk_reg_slot[ndk_reg_hash(k)], __ATOMIC_ACQUIRE) == k;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (!home || (s0 & 1u) || __atomic_load_n(&ndk_reg_seq, __ATOMIC_RELAXED) != s0)
        home = k > NDK_REG_TOMB && ndk_live(hdr);
    return home && ((const NDK_OBJECT_HEADER *)hdr)->ObjectType == type;
}
void ndk_core_init(struct ndk_adapter *ad, struct ndk_core *c, NDK_OBJECT_HEADER *hdr, NDK_OBJECT_TYPE type,
                   struct ndk_core *p0, struct ndk_core *p1, struct ndk_core *p2);
/* A zeroed object of type t, its header and core initialized (NULL: no memory); its
 * creator sets Dispatch. ndk_core_destroy frees it (fini first). */
void *ndk_obj_new(struct ndk_adapter *ad, const struct ndk_type *t, struct ndk_core *p0, struct ndk_core *p1,
                  struct ndk_core *p2);
void ndk_core_destroy(struct ndk_core *c);
/* A new object made on the host alone: linked (live, SUCCESS), or freed when the
 * registry is full (STATUS_INSUFFICIENT_RESOURCES). */
NTSTATUS ndk_obj_publish(struct ndk_core *c);
/* NdkCloseX of an object of type t (nothing if obj is not a live one). */
NTSTATUS ndk_close_as(NDK_OBJECT_HEADER *obj, const struct ndk_type *t, NDK_FN_CLOSE_COMPLETION cb, void *ctx);
void ndk_core_teardown(struct ndk_core *c);
/* Under ad->lock: link a new object into its adapter and the registry of live objects
 * (adds parent references). Returns 0, and links nothing, when the registry is full
 * (ndk_registry_has_room): the create fails with STATUS_INSUFFICIENT_RESOURCES. */
int ndk_core_link(struct ndk_core *c);
void ndk_core_unregister(struct ndk_core *c); /* no call takes the object from now on */
void ndk_core_release(struct ndk_core *c);    /* under ad->lock: unlink, free, drop the parents' refs */
void ndk_free_leftovers(struct ndk_adapter *ad); /* adapter close: free what is still open */
void ndk_ref(struct ndk_core *c);             /* under ad->lock */
void ndk_unref_locked(struct ndk_core *c);    /* under ad->lock; may queue the close */
NTSTATUS ndk_close(struct ndk_core *c, NDK_FN_CLOSE_COMPLETION cb, void *ctx);
void ndk_queue_event(struct ndk_adapter *ad, struct ndk_event *ev); /* under ad->lock */
void ndk_event_append(struct ndk_event **head, struct ndk_event **tail, struct ndk_event *ev); /* a FIFO */
/* Fill an event, every other field cleared (a reference on core, may be NULL, until it
 * has run); _new allocates one (never NULL). */
void ndk_event_set(struct ndk_event *ev, int kind, void (*fn)(void), void *ctx, NTSTATUS st,
                   NDK_OBJECT_HEADER *obj, struct ndk_core *core);
struct ndk_event *ndk_event_new(int kind, void (*fn)(void), void *ctx, NTSTATUS st, NDK_OBJECT_HEADER *obj,
                                struct ndk_core *core);
/* Queue a request completion (malloc'd event) holding a ref on core (may be NULL). */
void ndk_queue_request_cb(struct ndk_adapter *ad, NDK_FN_REQUEST_COMPLETION fn, void *ctx, NTSTATUS st,
                          struct ndk_core *core);
void ndk_queue_create_cb(struct ndk_adapter *ad, NDK_FN_CREATE_COMPLETION fn, void *ctx, NTSTATUS st,
                         NDK_OBJECT_HEADER *obj, struct ndk_core *core);
NTSTATUS ndk_query_extension(NDK_OBJECT_HEADER *obj, GUID *id, NDK_VERSION version, NDK_EXTENSION_INTERFACE *iface);

/* ndk_event.c: the callback thread. start returns 0 when no thread could be made;
 * stop waits until everything queued has run. */
int ndk_events_start(struct ndk_adapter *ad, int (*tick)(struct ndk_adapter *ad));
void ndk_events_stop(struct ndk_adapter *ad);

/* ndk_request.c: requests and replies. */
uint64_t ndk_now_us(void);
/* A deadline ms from now for a timed wait on the adapter's condition variables (both
 * CLOCK_MONOTONIC: nf_time.h). */
void ndk_deadline_after(struct timespec *ts, unsigned ms);
/* Under ad->lock: wait on cond (one of the adapter's) for at most ms. */
void ndk_cond_wait_ms(struct ndk_adapter *ad, pthread_cond_t *cond, unsigned ms);
/* Send a request; r->on_reply runs exactly once. Fills MSG_HDR (op, len, tag).
 * msg is the whole message with room for MSG_HDR at the start. Returns SUCCESS or
 * the link's failure (then on_reply never runs and r is not referenced). */
NTSTATUS ndk_req_send(struct ndk_adapter *ad, struct ndk_req *r, uint16_t op, void *msg, size_t len, int defer);
/* The two halves of ndk_req_send for callers that send the message themselves
 * (nf_link_post under a lock of their own): register (tag, deadline, MSG_HDR) and,
 * when the send was refused, take it back (0: the death handler completed it). */
NTSTATUS ndk_req_register(struct ndk_adapter *ad, struct ndk_req *r, uint16_t op, void *msg, size_t len);
int ndk_req_unregister(struct ndk_adapter *ad, struct ndk_req *r);
/* A gated request's issuing call is done: an answer held back runs now. */
void ndk_req_issued(struct ndk_adapter *ad, struct ndk_req *r);
/* Under ad->lock: wait for a sent request without a callback; bounded by its deadline. */
void ndk_wait_req(struct ndk_adapter *ad, struct ndk_req *r);
/* Under ad->lock: r, still outstanding a watch period past its deadline, completes
 * STATUS_IO_TIMEOUT now (1), so a waiter is bounded even when the callback thread
 * cannot run the watch (a call made from a callback); else 0. */
int ndk_req_overdue(struct ndk_adapter *ad, struct ndk_req *r, uint64_t now);
/* Send a request and wait for the reply; the reply body is copied to out. */
NTSTATUS ndk_call(struct ndk_adapter *ad, uint16_t op, void *msg, size_t len, void *out, size_t out_cap,
                  size_t *out_len);
/* Fire-and-forget request (destroy at close): the reply is dropped. */
void ndk_send_forget(struct ndk_adapter *ad, uint16_t op, const void *body, size_t body_len);
/* Asynchronous requests with a synchronous fallback. finish (under ad->lock, in a
 * reply handler): complete r the way it was asked for (rc, cc with created, or the
 * waiting caller). issue: send r, returning STATUS_PENDING (its callback follows),
 * the final status (no callback given: waited, bounded by the deadline), or an
 * inline failure (*inline_failed set, r freed, its reply handler never runs). */
void ndk_req_finish(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS st, NDK_OBJECT_HEADER *created);
NTSTATUS ndk_req_issue(struct ndk_adapter *ad, struct ndk_req *r, uint16_t op, void *msg, size_t len,
                       int *inline_failed);
/* An object the board creates: the parents wait for the answer (a reference each);
 * the reply handler ends in ndk_create_done, which links it (live) on success and
 * completes the create. On failure the object is freed (issue's caller must not use
 * it unless issue returned STATUS_SUCCESS or STATUS_PENDING). */
NTSTATUS ndk_create_issue(struct ndk_core *c, struct ndk_req *r, uint16_t op, void *msg, size_t len,
                          NDK_FN_CREATE_COMPLETION cc, void *ctx);
void ndk_create_done(struct ndk_adapter *ad, struct ndk_req *r, struct ndk_core *c, NTSTATUS status);
/* A reply's status once its body (size bytes) is copied to out: a success without a
 * whole body is STATUS_INTERNAL_ERROR. */
NTSTATUS ndk_reply_copy(NTSTATUS status, const uint8_t *body, size_t len, void *out, size_t size);
/* Link thread: a reply message (takes ad->lock). */
void ndk_req_reply(struct ndk_adapter *ad, const struct nf_msg_hdr *h, NTSTATUS status, const uint8_t *body,
                   size_t len);
/* Under ad->lock: every request fails with status / those past their deadline
 * complete STATUS_IO_TIMEOUT (returns how many). */
void ndk_req_fail_all(struct ndk_adapter *ad, NTSTATUS status);
int ndk_req_expire(struct ndk_adapter *ad, uint64_t now);

/* ndk_mdl.c: MDLs, LAMs, buffers. */
int ndk_user_range_ok(const struct ndk_adapter *ad, uint64_t addr, uint64_t len);
/* Whether the adapter page pfn belongs to a buffer this adapter allocated. */
int ndk_page_allocated(const struct ndk_adapter *ad, PFN_NUMBER pfn);
/* Pages of a virtually contiguous MDL chain range: fills pages (adapter addresses)
 * if not NULL. Returns the page count, or 0 with *st set. */
uint32_t ndk_mdl_pages(struct ndk_adapter *ad, const MDL *mdl, SIZE_T length, uint64_t *pages,
                       uint32_t cap, ULONG *fbo, NTSTATUS *st);
NTSTATUS ndk_build_lam(NDK_ADAPTER *a, MDL *mdl, SIZE_T length, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx,
                       NDK_LOGICAL_ADDRESS_MAPPING *lam, ULONG *lam_size, ULONG *fbo);
VOID ndk_release_lam(NDK_ADAPTER *a, NDK_LOGICAL_ADDRESS_MAPPING *lam);
void ndk_free_buffers(struct ndk_adapter *ad); /* adapter close */
/* Under ad->lock: n free user pages into pfn (0: not that many free, none taken); back. */
int ndk_pages_take(struct ndk_adapter *ad, uint32_t n, PFN_NUMBER *pfn);
void ndk_pages_put(struct ndk_adapter *ad, uint32_t n, const PFN_NUMBER *pfn);
/* Copy len bytes between data and the adapter pages pfn[] (user region), starting pos
 * bytes into pfn[0]: write = 1 into the adapter (MEM_WRITE), 0 out of it (MEM_READ).
 * Blocks until every message is answered; a bounded number are in flight (reads: what
 * the adapter's TX window holds, so no frame of them is answered short). Returns
 * STATUS_SUCCESS, STATUS_INVALID_PARAMETER (a page outside the user region), or the
 * first failure (the link's status when it dies); nothing is sent after a failure.
 * Not from the link thread. */
NTSTATUS ndk_mem_copy(struct ndk_adapter *ad, const PFN_NUMBER *pfn, SIZE_T pos, void *data, SIZE_T len, int write);

/* ndk_hostmem.c: host-memory MDLs, their shadow pages and the copies at each hand-over
 * of a buffer (docs/host-memory.md). Called by ndk_adapter.c, ndk_pd.c, ndk_qp.c,
 * ndk_wq.c; calls ndk_cq.c, ndk_mdl.c and below. */
struct ndk_hm_io;     /* bytes to move between host memory and their shadows */
struct ndk_hm_region; /* what an MR over host memory maps */
int ndk_hm_is_host_mdl(const MDL *mdl);
/* Any shadow page: else nothing of host memory has work (the posting path's test). */
static inline int ndk_hm_active(const struct ndk_adapter *ad)
{
    return __atomic_load_n(&ad->hm_shadows, __ATOMIC_RELAXED) != 0;
}
NTSTATUS ndk_hm_build_lam(NDK_ADAPTER *a, MDL *mdl, SIZE_T length, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx,
                          NDK_LOGICAL_ADDRESS_MAPPING *lam, ULONG *lam_size, ULONG *fbo);
VOID ndk_hm_release_lam(NDK_ADAPTER *a, NDK_LOGICAL_ADDRESS_MAPPING *lam);
void ndk_hm_fini(struct ndk_adapter *ad); /* adapter free */
/* NdkRegisterMr over host MDLs: shadow pages (their addresses in pages, at most cap),
 * the bytes pushed, the region in *out for the MR once the request starts (attach,
 * under ad->lock) or to discard. Returns the page count, or 0 with *st set. */
uint32_t ndk_hm_register_pages(struct ndk_adapter *ad, const MDL *mdl, SIZE_T length, uint64_t *pages, uint32_t cap,
                               ULONG *fbo, NTSTATUS *st, struct ndk_hm_region **out);
void ndk_hm_region_attach_locked(struct ndk_mr *mr, struct ndk_hm_region *g);
void ndk_hm_region_discard(struct ndk_adapter *ad, struct ndk_hm_region *g);
void ndk_hm_mr_drop_locked(struct ndk_mr *mr); /* under ad->lock: the MR maps nothing now */
NTSTATUS ndk_hm_mr_pull(struct ndk_mr *mr);     /* the MR's host bytes home (waits) */
struct ndk_hm_io *ndk_hm_mr_io(struct ndk_mr *mr); /* the MR's host bytes, to bring home later */
/* NdkFastRegister passed its checks: record what the MR maps and push its host bytes. */
void ndk_hm_fast_register(struct ndk_mr *mr, const NDK_LOGICAL_ADDRESS *pages, ULONG npages, ULONG fbo,
                          SIZE_T length, uint64_t va);
/* The host bytes an SGE list names (NULL: none); push sends them (and frees io). */
struct ndk_hm_io *ndk_hm_sge_io(struct ndk_adapter *ad, const NDK_SGE *sgl, ULONG nsge);
void ndk_hm_push(struct ndk_adapter *ad, struct ndk_hm_io *io);
void ndk_hm_io_free(struct ndk_hm_io *io);
/* Under ad->lock: deliver r to cq (both NULL: a copy alone) once io's bytes are home
 * and every result held before it has gone; takes io. A failed result copies nothing. */
void ndk_hm_complete(struct ndk_adapter *ad, struct ndk_cq *cq, const NDK_RESULT_EX *r, int solicited,
                     struct ndk_hm_io *io);

/* ndk_cq.c */
extern const NDK_CQ_DISPATCH ndk_cq_dispatch;
NTSTATUS ndk_create_cq(NDK_ADAPTER *a, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK notify, PVOID notify_ctx,
                       GROUP_AFFINITY *aff, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_CQ **out);
/* Under ad->lock: append a result and notify if armed (solicited: a receive completion
 * whose Send asked for a solicited event). */
void ndk_cq_push(struct ndk_cq *cq, const NDK_RESULT_EX *r, int solicited);

/* ndk_pd.c (PD and MR) */
NTSTATUS ndk_create_pd(NDK_ADAPTER *a, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_PD **out);

/* ndk_qp.c */
NTSTATUS ndk_create_qp(NDK_PD *pd, NDK_CQ *rcq, NDK_CQ *icq, PVOID qpctx, ULONG rdepth, ULONG idepth, ULONG rsge,
                       ULONG isge, ULONG inline_size, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_QP **out);
NTSTATUS ndk_create_qp_with_srq(NDK_PD *pd, NDK_CQ *rcq, NDK_CQ *icq, NDK_SRQ *srq, PVOID qpctx, ULONG idepth,
                                ULONG isge, ULONG inline_size, NDK_FN_CREATE_COMPLETION cc, PVOID ctx,
                                NDK_QP **out);

/* Under ad->lock: whether a connection may use the QP (SUCCESS), then take it for
 * user; gone(user) runs (under ad->lock) if the QP goes away first. */
NTSTATUS ndk_qp_usable(const struct ndk_qp *qp, const struct ndk_adapter *ad);
NTSTATUS ndk_qp_attach(struct ndk_qp *qp, const struct ndk_adapter *ad, void *user, const struct ndk_qp_user *ops);
void ndk_qp_detach(struct ndk_qp *qp, const void *user); /* if user holds it */
/* Under ad->lock: the connection is up (the board connected both QPs) or down. */
void ndk_qp_set_connected(struct ndk_qp *qp, int connected);

/* ndk_wq.c: a QP's work queues. */
/* Link thread, under ad->lock: a CQE goes to its QP's receive queue and receive CQ
 * (op_type RECEIVE or RECEIVE_AND_INVALIDATE) or to its initiator queue and CQ. */
void ndk_qp_on_cqe(struct ndk_adapter *ad, const struct nf_cqe *cqe, NTSTATUS status);
/* Link thread, under ad->lock: the adapter answered a work request short (op: its
 * WR_* op, tag: its NDK_WR_TAG tag) without running it: it completes with status. */
void ndk_qp_on_short(struct ndk_adapter *ad, uint16_t op, uint32_t tag, NTSTATUS status);
/* Under ad->lock: every outstanding work request and pending receive of the QP
 * completes with status. */
void ndk_qp_fail_all(struct ndk_qp *qp, NTSTATUS status);
/* Under ad->lock: every QP is disconnected and its outstanding work requests complete
 * with status (link death, adapter close). */
void ndk_qps_fail(struct ndk_adapter *ad, NTSTATUS status);
/* Under ad->lock (callback thread): work requests past their deadline (receives have
 * none: a receive waits for a Send as long as it takes). */
void ndk_qps_watch(struct ndk_adapter *ad, uint64_t now);
/* Under ad->lock: the oldest n pending receives with ids before `before` complete
 * STATUS_CANCELLED, in order (NdkFlush). */
void ndk_rq_cancel(struct ndk_qp *qp, uint32_t n, uint32_t before);
/* Under ad->lock and qp->ring_lock: the initiator queue's requests before upto retired
 * without a completion of their own (silent: ok, their host bytes come home; else dropped). */
void ndk_wq_retire_silent(struct ndk_qp *qp, uint32_t upto, int ok);
/* A ring of at least depth slots (depth 0: one slot, never usable); 0 without memory. */
int ndk_wq_init(struct ndk_wq *q, uint32_t depth);

/* ndk_cm.c: the board's CM contract (proto/link.toml CM_*). Not from the link thread
 * except ndk_cm_decode and ndk_cm_defer. IPv4 words carry the first byte in 7:0. */
int ndk_cm_port_ipv4(struct ndk_adapter *ad, uint32_t *ip); /* 1: the port has an address */
NTSTATUS ndk_cm_listen(struct ndk_adapter *ad, uint32_t ip, uint32_t port, uint32_t *listen_id, uint32_t *port_out);
/* CM_CONNECT; hook runs with the CM_CONNECT_REP under ad->lock before any event of it. */
NTSTATUS ndk_cm_connect(struct ndk_adapter *ad, const struct nf_cm_connect_req *req, const void *pdata,
                        void (*hook)(void *arg, const uint8_t *body, size_t len), void *arg);
NTSTATUS ndk_cm_accept(struct ndk_adapter *ad, const struct nf_cm_accept_req *req, const void *pdata);
NTSTATUS ndk_cm_reject(struct ndk_adapter *ad, uint32_t conn_id, const void *pdata, uint32_t pdata_len);
NTSTATUS ndk_cm_complete(struct ndk_adapter *ad, uint32_t conn_id);
NTSTATUS ndk_cm_disconnect(struct ndk_adapter *ad, uint32_t qpn);
/* CM_UNLISTEN, CM_REJECT (no private data) or CM_DISCONNECT of id, the reply dropped;
 * _defer has the callback thread send it (under ad->lock, from the link thread). */
void ndk_cm_forget_id(struct ndk_adapter *ad, uint16_t op, uint32_t id);
void ndk_cm_defer(struct ndk_adapter *ad, uint16_t op, uint32_t id);
/* A CM_EVENT body: 0 when too short; its private data at *pdata (pdata_len clipped). */
int ndk_cm_decode(const uint8_t *body, size_t len, struct nf_cm_event *ev, const uint8_t **pdata);

/* ndk_conn.c */
/* Link thread, under ad->lock: a CM_EVENT from the board. */
void ndk_conn_on_cm_event(struct ndk_adapter *ad, const uint8_t *body, size_t len);
NTSTATUS ndk_create_connector(NDK_ADAPTER *a, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_CONNECTOR **out);

/* ndk_listen.c */
NTSTATUS ndk_create_listener(NDK_ADAPTER *a, NDK_FN_CONNECT_EVENT_CALLBACK ev, PVOID ev_ctx,
                             NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_LISTENER **out);
/* Under ad->lock: hand an incoming connector (its EV_CONNECT) to l or its backlog. */
void ndk_listener_deliver(struct ndk_listener *l, struct ndk_event *ev);

/* ndk_wire.c: connections on the wire. The steps are called under ad->lock with c in
 * the state NDK allows and drop the lock; they return what the NDK call returns. */
/* Whether a connect to dest goes on the wire (*own: the port's address). No lock. */
int ndk_wire_route(struct ndk_adapter *ad, const SOCKADDR *dest, uint32_t *own);
/* No lock held: c is idle. */
NTSTATUS ndk_wire_connect(struct ndk_connector *c, struct ndk_qp *qp, const SOCKADDR *src, uint32_t own,
                          const SOCKADDR *dest, ULONG ird, ULONG ord, const void *pdata, ULONG pdata_len,
                          NDK_FN_REQUEST_COMPLETION rc, void *ctx);
NTSTATUS ndk_wire_accept(struct ndk_connector *b, struct ndk_qp *qp, ULONG ird, ULONG ord, const void *pdata,
                         ULONG pdata_len, NDK_FN_REQUEST_COMPLETION rc, void *ctx);
NTSTATUS ndk_wire_complete(struct ndk_connector *a, NDK_FN_REQUEST_COMPLETION rc, void *ctx);
NTSTATUS ndk_wire_reject(struct ndk_connector *c, const void *pdata, ULONG pdata_len); /* no lock held */
NTSTATUS ndk_wire_disconnect(struct ndk_connector *a, NDK_FN_REQUEST_COMPLETION rc, void *ctx);
void ndk_wire_teardown(struct ndk_connector *c);
/* Under ad->lock: the board's connection of c is over; c's operation completes st. */
void ndk_wire_closed(struct ndk_connector *c, NTSTATUS st);
/* Under ad->lock: the link died (or the adapter closes, status CANCELLED): every step
 * still waiting for the board's event completes with status, and a connection that was
 * up runs its DisconnectEvent (not at close). */
void ndk_wire_fail_all(struct ndk_adapter *ad, NTSTATUS status);
/* Link thread, under ad->lock: a CM_EVENT other than REQUEST. */
void ndk_wire_on_event(struct ndk_adapter *ad, const struct nf_cm_event *ev, const uint8_t *pdata);

/* ndk_conn_state.c: what connectors share (under ad->lock unless said). */
ULONG ndk_addr_len(const SOCKADDR *a, ULONG len); /* 0: not a whole AF_INET/AF_INET6 address */
int ndk_addr_matches(const struct sockaddr_storage *bound, const SOCKADDR *dest);
/* An IPv4 word (first byte in 7:0) and port as a sockaddr_in; and an AF_INET's word. */
void ndk_addr_from_word(struct sockaddr_storage *ss, ULONG *len, uint32_t ip, uint32_t port);
uint32_t ndk_addr_word(const SOCKADDR *a);
/* NdkGetLocalAddress/NdkGetPeerAddress of a connector or listener (takes ad->lock). */
NTSTATUS ndk_conn_get_addr(NDK_OBJECT_HEADER *obj, NDK_OBJECT_TYPE type, int peer, SOCKADDR *out, ULONG *out_len);
void ndk_wire_link(struct ndk_connector *c, uint32_t id);
void ndk_wire_unlink(struct ndk_connector *c);
struct ndk_connector *ndk_wire_find(struct ndk_adapter *ad, uint32_t id); /* NULL: none */
void ndk_conn_disc_event(struct ndk_connector *c); /* queue its DisconnectEvent */
void ndk_conn_start(struct ndk_connector *c, int state, NDK_FN_REQUEST_COMPLETION rc, void *ctx);
void ndk_conn_end(struct ndk_connector *c, int state); /* takes ad->lock */
void ndk_conn_finish(struct ndk_connector *c, NTSTATUS st);
void ndk_conn_release_qp(struct ndk_connector *c);
void ndk_conn_refused(struct ndk_connector *a);
void ndk_conn_peer_lost(struct ndk_connector *c);
extern const struct ndk_qp_user ndk_conn_qp_user; /* what a connector hears from its QP */

static inline struct ndk_adapter *ndk_adapter_of(NDK_ADAPTER *a)
{
    return NDK_CONTAINER(a, struct ndk_adapter, pub);
}

/* The adapter of a handle, or NULL when it is not a live adapter of this library. */
static inline struct ndk_adapter *ndk_adapter_live(NDK_ADAPTER *a)
{
    return ndk_obj_ok(a, NdkObjectTypeAdapter) ? ndk_adapter_of(a) : NULL;
}

/* Set the addresses a device string asked for (ndk_net.c): NET_CONFIG, once the
 * adapter is open. net->set 0: nothing to do. */
NTSTATUS ndk_net_apply(struct ndk_adapter *ad, const struct nf_transport_net *net);

#endif
