/* SPDX-License-Identifier: Apache-2.0 */
/* Stress suite of libndkfpga: many threads, deep queues, CQ overflow, flush races,
 * closes with work outstanding, frozen and killed adapters, foreign handles and
 * guessed tokens, through the public API only (ndkpi.h, ndkfpga.h).
 *
 * Every case runs in a child process of its own (harness.c) with a watchdog, opens
 * its own adapter(s) and checks exact outcomes: each completion delivered once, in
 * order per QP, with its QPContext, RequestContext, type and status; data verified
 * where data moves. Every wait is bounded and says what it waited for. */
#ifndef NF_STRESS_H
#define NF_STRESS_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ndkfpga.h"
#include "ndkpi.h"

/* ---- configuration (harness.c) ---- */
enum st_scale { SCALE_TINY = 0, SCALE_SMALL = 1, SCALE_FULL = 2 };
struct st_config {
    const char *device; /* what NdkFpgaOpenAdapter opens for every adapter of a case */
    int sim;            /* the Verilator board: slow, every wait longer */
    int scale;          /* enum st_scale */
    int wait_ms;        /* longest wait for one thing the adapter should do soon */
    int defer_bound_ms; /* a lone deferred request completes within this beyond a round trip */
    int post_bound_ms;  /* a post on a frozen adapter returns within this */
    unsigned seed;
};
extern struct st_config cfg;

/* The count for this scale: full (model), small (sanitized build), tiny (sim). */
static inline int st_n(int full, int small, int tiny)
{
    return cfg.scale == SCALE_FULL ? full : cfg.scale == SCALE_SMALL ? small : tiny;
}

/* ---- reporting ---- */
/* One TAP line "ok - CASE: ..." / "not ok - CASE: ..."; returns cond. */
int st_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A "# ..." diagnostic line. */
void st_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* What the case is doing now (the watchdog reports it if the case hangs). */
void st_doing(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A failure after which the case cannot go on: "not ok", then the process ends (the
 * harness kills what is left of it, the adapter processes included). */
__attribute__((noreturn, format(printf, 1, 2))) void st_bail(const char *fmt, ...);
/* A skipped check ("ok - CASE: ... # SKIP why"). */
void st_skip(const char *what, const char *why);

uint64_t st_now_ms(void);
uint64_t st_now_us(void);
void st_sleep_ms(int ms);
void st_sleep_us(long us);
/* Deterministic per-case random numbers (seeded from cfg.seed and the case). */
uint32_t st_rand(void);
uint32_t st_rand_below(uint32_t n);
void st_fill(void *p, size_t n, uint32_t seed);
/* NdkFpgaStatusName, plus the suite's own ST_NO_COMPLETION. */
const char *st_name(NTSTATUS st);

/* A status no provider returns: "nothing came within the bound". */
#define ST_NO_COMPLETION ((NTSTATUS)0xE5770001u)

/* Run fn(arg) on a thread of its own and wait at most ms for it. Returns 1 when it
 * returned (then joined), 0 when it is still running (left detached). */
int st_bounded(void *(*fn)(void *), void *arg, int ms);

/* Wait (polling every 1 ms, at most ms) until *v, read under m, is not 0; returns it. */
int st_wait_nonzero(pthread_mutex_t *m, const int *v, int ms);

/* ---- asynchronous calls: one waiter per call ---- */
/* Allocated per call (op_new) and freed by op_wait once the call has finished; a
 * waiter whose callback never came is left allocated, so a late callback writes
 * nothing that has been reused. */
struct st_op {
    pthread_mutex_t m;
    pthread_cond_t c;
    int done;
    int calls; /* callbacks that ran: more than one is a violation */
    NTSTATUS st;
    NDK_OBJECT_HEADER *obj;
};
struct st_op *op_new(void);
VOID op_req_cb(PVOID ctx, NTSTATUS st);
VOID op_create_cb(PVOID ctx, NTSTATUS st, NDK_OBJECT_HEADER *obj);
VOID op_close_cb(PVOID ctx);
/* The final status of the call that returned st: st itself unless STATUS_PENDING,
 * else the callback's, or ST_NO_COMPLETION after ms. *obj (may be NULL) gets the
 * created object. */
NTSTATUS op_wait(struct st_op *o, NTSTATUS st, int ms, NDK_OBJECT_HEADER **obj);
/* Has the callback run (without waiting)? */
int op_done(struct st_op *o);
/* Callbacks that ran twice, or after a call that did not return STATUS_PENDING. */
extern int st_cb_violations;

/* ---- completion log of one CQ ---- */
struct cqlog {
    NDK_CQ *cq;
    pthread_mutex_t m;
    pthread_cond_t c;
    NDK_RESULT_EX *v;
    size_t n, cap;
    int drain_in_callback; /* the notification drains the CQ and re-arms it (ANY) */
    int rearm_type;        /* NDK_CQ_NOTIFY_* the callback re-arms with (drain mode) */
    int notifies;          /* notification callbacks */
    int overflows;         /* ... of which with STATUS_BUFFER_OVERFLOW */
    int other_notify;      /* ... with a status other than SUCCESS / BUFFER_OVERFLOW */
    NTSTATUS last_notify;
};
void log_init(struct cqlog *l);
void log_free(struct cqlog *l);
VOID log_notify_cb(PVOID ctx, NTSTATUS st);
/* Move every waiting result of the CQ into the log (no-op once l->cq is NULL). */
void log_drain(struct cqlog *l);
/* Results of the QP with this QPContext so far. */
size_t log_count(struct cqlog *l, const void *qpctx);
/* Wait (draining) until the QP has n results; 1, or 0 after ms. */
int log_wait(struct cqlog *l, const void *qpctx, size_t n, int ms, const char *what);
/* Copy the results of one QP, in order, into out (up to max); returns how many there are. */
size_t log_results(struct cqlog *l, const void *qpctx, NDK_RESULT_EX *out, size_t max);
/* Results whose QPContext is none of the given ones. */
size_t log_foreign(struct cqlog *l, void *const *qpctxs, size_t n);

/* What a posted request must complete as. */
struct posted {
    void *ctx;
    int type;   /* NDK_OPERATION_TYPE */
};
/* The QP's results are exactly the posted requests, once each, in order, with their
 * QPContext, RequestContext and type. Returns 1, or 0 with why filled. */
int seq_exact(struct cqlog *l, const void *qpctx, const struct posted *p, size_t n, char *why, size_t whylen);

/* ---- one adapter and what every case needs on it ---- */
struct stx {
    NDK_ADAPTER *ad;
    NDK_ADAPTER_INFO info;
    NDKFPGA_ADAPTER_DETAILS det;
    pid_t pid; /* the adapter's process (nfmodel / nfsim started by the library), 0 if none */
    NDK_PD *pd;
    NDK_LISTENER *lis;
    uint16_t port;
    pthread_mutex_t m;
    pthread_cond_t c;
    NDK_CONNECTOR *incoming[16];
    int nin;
    int frozen;
    NDK_CQ *cq;       /* stx_open_logged: a CQ ... */
    struct cqlog log; /* ... and the log of its completions */
};
/* Open an adapter of cfg.device with a PD and a listener; 1 on success (reported). */
int stx_open(struct stx *x, const char *what);
/* stx_open, then x->cq of depth whose completions go to x->log; 1 on success (failures
 * reported). */
int stx_open_logged(struct stx *x, const char *what, ULONG depth);
/* NdkFpgaCloseAdapter on a thread of its own: the milliseconds it took, or -1 when it
 * did not return within budget_ms (then the case should end: st_bail). */
int stx_close(struct stx *x, int budget_ms);
/* The same, waiting budget_ms + extra_ms: the milliseconds it took (compare with
 * budget_ms), or -1. */
int stx_close_slow(struct stx *x, int budget_ms, int extra_ms);
/* SIGSTOP / SIGCONT / SIGKILL the adapter's process. */
int stx_freeze(struct stx *x);
void stx_thaw(struct stx *x);
int stx_kill(struct stx *x);

NDK_CQ *st_cq(struct stx *x, ULONG depth, struct cqlog *log);
NDK_QP *st_qp(struct stx *x, NDK_CQ *cq, void *qpctx, ULONG depth, NTSTATUS *st_out);
NDK_MR *st_mr(struct stx *x, NDK_PD *pd, int fast);
NTSTATUS st_init_fast(NDK_MR *mr, ULONG pages, BOOLEAN remote);
NTSTATUS st_register(NDK_MR *mr, MDL *mdl, SIZE_T len, ULONG flags);
NTSTATUS st_deregister(NDK_MR *mr);
/* Close and wait for the close: 1 when closed within ms. */
int st_close(NDK_OBJECT_HEADER *obj, int ms);

/* Two QPs of x->pd on cq, connected to each other in loopback. */
struct pair {
    NDK_QP *qa, *qb;
    NDK_CONNECTOR *ca, *cb;
};
int st_pair(struct stx *x, NDK_CQ *cq, ULONG depth, void *ctxa, void *ctxb, struct pair *pr);
/* Close connectors and QPs (bounded); 1 when everything closed. */
int st_pair_close(struct pair *pr, int ms);

/* A buffer of adapter memory and (mr_flags != -1) a normal MR registered over it. */
struct sbuf {
    MDL *mdl;
    NDK_MR *mr;
    size_t len;
};
int st_buf(struct stx *x, struct sbuf *b, size_t len, int scattered, long mr_flags);
void st_buf_free(struct stx *x, struct sbuf *b);
static inline PVOID st_va(const struct sbuf *b, size_t off)
{
    return (uint8_t *)MmGetMdlVirtualAddress(b->mdl) + off;
}
static inline NDK_LOGICAL_ADDRESS st_page(const struct sbuf *b, size_t i)
{
    NDK_LOGICAL_ADDRESS a = {.QuadPart = (LONGLONG)MmGetMdlPfnArray(b->mdl)[i] << PAGE_SHIFT};
    return a;
}
static inline NDK_SGE st_sge(const struct sbuf *b, size_t off, ULONG len)
{
    NDK_SGE s;
    s.VirtualAddress = st_va(b, off);
    s.Length = len;
    s.MemoryRegionToken = b->mr->Dispatch->NdkGetLocalTokenFromMr(b->mr);
    return s;
}

/* Work requests: fast-register npages pages of tgt (from its first), invalidate,
 * RDMA Write from / Read into a buffer with a normal MR. Return the post's status. */
NTSTATUS st_post_fr(NDK_QP *qp, void *ctx, NDK_MR *mr, const struct sbuf *tgt, ULONG npages, ULONG fbo, SIZE_T len,
                    uint64_t va, ULONG flags);
NTSTATUS st_post_inv(NDK_QP *qp, void *ctx, NDK_MR *mr, ULONG flags);
NTSTATUS st_post_write(NDK_QP *qp, void *ctx, const struct sbuf *src, size_t off, ULONG len, uint64_t raddr,
                       UINT32 rtoken, ULONG flags);
NTSTATUS st_post_read(NDK_QP *qp, void *ctx, const struct sbuf *sink, size_t off, ULONG len, uint64_t raddr,
                      UINT32 rtoken, ULONG flags);
static inline UINT32 st_token(NDK_MR *mr)
{
    return mr->Dispatch->NdkGetRemoteTokenFromMr(mr);
}

/* Statuses a request may complete with when the link to the adapter is lost or the
 * adapter is closed under it (ndkfpga.h). */
int st_is_link_status(NTSTATUS st);

/* ---- the cases ---- */
void case_threads(void);
void case_deep_queue(void);
void case_cq_overflow(void);
void case_error_breaks_qp(void);
void case_flush_race(void);
void case_exhaustion(void);
void case_close_outstanding(void);
void case_init_fr_dead(void);
void case_frozen(void);
void case_link_death(void);
void case_foreign_handles(void);
void case_guessed_tokens(void);
void case_buffer_copy(void);
void case_kill_storm(void);
void case_packed_frame(void);

#endif
