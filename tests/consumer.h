/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the programs that use the library as a consumer would (the
 * conformance suite, tests/conformance/, the stress suite, tests/stress/, and the
 * rule table, tests/rules/): time, loopback addresses, and a loopback session (a
 * listener, connected QP pairs) built from calls without callbacks where NDK allows
 * it (they wait and return the final status) and one-shot waits where it does not. */
#ifndef NDK_TESTS_CONSUMER_H
#define NDK_TESTS_CONSUMER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "ndkfpga.h"

/* The CLOCK_REALTIME instant ms milliseconds from now (for pthread_cond_timedwait). */
static inline void deadline_in(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    long long ns = ts->tv_nsec + (long long)ms * 1000000LL;
    ts->tv_sec += (time_t)(ns / 1000000000LL);
    ts->tv_nsec = (long)(ns % 1000000000LL);
}

/* 127.0.0.1:port. */
static inline struct sockaddr_in loopback_addr(uint16_t port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static inline uint64_t consumer_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- one-shot wait: a callback stores its status and raises a flag; the waiter
 * polls the flag (every 1 ms, bounded), so no lock is shared with the callback. ---- */
struct consumer_call {
    int done;
    NTSTATUS st;
    void *obj; /* what a create made, or a connector (connect event) */
};

static inline VOID consumer_call_done(PVOID ctx, NTSTATUS st)
{
    struct consumer_call *k = ctx;
    k->st = st;
    __atomic_store_n(&k->done, 1, __ATOMIC_RELEASE);
}

static inline VOID consumer_create_done(PVOID ctx, NTSTATUS st, NDK_OBJECT_HEADER *obj)
{
    struct consumer_call *k = ctx;
    k->obj = obj;
    consumer_call_done(ctx, st);
}

static inline VOID consumer_connect_event(PVOID ctx, NDK_CONNECTOR *c)
{
    struct consumer_call *k = ctx;
    k->obj = c;
    __atomic_store_n(&k->done, 1, __ATOMIC_RELEASE);
}

/* st itself unless STATUS_PENDING, else the callback's status; STATUS_IO_TIMEOUT
 * when it did not come within ms. The flag is cleared for the next call. */
static inline NTSTATUS consumer_call_wait(struct consumer_call *k, NTSTATUS st, int ms)
{
    if (st != STATUS_PENDING)
        return st;
    uint64_t end = consumer_now_ms() + (uint64_t)ms;
    const struct timespec tick = {0, 1000000L};
    while (!__atomic_load_n(&k->done, __ATOMIC_ACQUIRE)) {
        if (consumer_now_ms() >= end)
            return STATUS_IO_TIMEOUT;
        nanosleep(&tick, NULL);
    }
    __atomic_store_n(&k->done, 0, __ATOMIC_RELAXED);
    return k->st;
}

/* ---- loopback session ---- */
struct consumer_session {
    NDK_ADAPTER *ad;
    NDK_LISTENER *lis;
    uint16_t port;
    struct consumer_call incoming; /* the listener's connect events */
    int wait_ms;                   /* longest wait for one answer of the adapter */
};

/* A listener on port (any address) whose connect events s->incoming collects. */
static inline NTSTATUS consumer_listen(struct consumer_session *s, uint16_t port)
{
    memset(&s->incoming, 0, sizeof(s->incoming));
    s->port = port;
    NTSTATUS st = s->ad->Dispatch->NdkCreateListener(s->ad, consumer_connect_event, &s->incoming, NULL, NULL, &s->lis);
    struct sockaddr_in any = loopback_addr(port);
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    if (st == STATUS_SUCCESS)
        st = s->lis->Dispatch->NdkListen(s->lis, (PSOCKADDR)&any, sizeof(any), NULL, NULL);
    return st;
}

/* A QP of pd with a receive queue (rq_depth receives of rq_sge SGEs, completing on
 * rcq) and an initiator queue (depth requests of sge SGEs, completing on cq): the call
 * without a callback waits. */
static inline NTSTATUS consumer_qp_rq(NDK_PD *pd, NDK_CQ *rcq, NDK_CQ *cq, ULONG rq_depth, ULONG rq_sge, ULONG depth,
                                      ULONG sge, void *qpctx, NDK_QP **qp)
{
    *qp = NULL;
    return pd->Dispatch->NdkCreateQp(pd, rcq, cq, qpctx, rq_depth, depth, rq_sge, sge, 0, NULL, NULL, qp);
}

/* A QP of pd on cq (initiator depth depth, sge SGEs), no receive queue. */
static inline NTSTATUS consumer_qp(NDK_PD *pd, NDK_CQ *cq, ULONG depth, ULONG sge, void *qpctx, NDK_QP **qp)
{
    return consumer_qp_rq(pd, cq, cq, 0, 0, depth, sge, qpctx, qp);
}

/* The next result of cq within ms milliseconds (polled every 1 ms): 1, or 0 when none
 * came. */
static inline int consumer_cq_wait(NDK_CQ *cq, NDK_RESULT_EX *r, int ms)
{
    uint64_t end = consumer_now_ms() + (uint64_t)ms;
    const struct timespec tick = {0, 1000000L};
    while (cq->Dispatch->NdkGetCqResultsEx(cq, r, 1) != 1) {
        if (consumer_now_ms() >= end)
            return 0;
        nanosleep(&tick, NULL);
    }
    return 1;
}

/* One SGE of len bytes at offset off of mdl, through mr's local token. */
static inline NDK_SGE consumer_sge(MDL *mdl, NDK_MR *mr, size_t off, ULONG len)
{
    NDK_SGE sge;
    sge.VirtualAddress = (uint8_t *)MmGetMdlVirtualAddress(mdl) + off;
    sge.Length = len;
    sge.MemoryRegionToken = mr->Dispatch->NdkGetLocalTokenFromMr(mr);
    return sge;
}

struct consumer_pair {
    NDK_QP *qa, *qb;
    NDK_CONNECTOR *ca, *cb;
};

/* Connect qa (calling, from src_port) and qb (accepting) over s's listener. The
 * first status that is not SUCCESS is returned and *what says which step it was. */
static inline NTSTATUS consumer_connect(struct consumer_session *s, struct consumer_pair *pr, uint16_t src_port,
                                        const char **what)
{
    struct consumer_call kc = {0, 0, NULL}, ka = {0, 0, NULL};
    struct sockaddr_in src = loopback_addr(src_port), dst = loopback_addr(s->port);
    *what = "NdkCreateConnector";
    NTSTATUS st = s->ad->Dispatch->NdkCreateConnector(s->ad, NULL, NULL, &pr->ca);
    if (st != STATUS_SUCCESS)
        return st;
    *what = "NdkConnect";
    NTSTATUS cst = pr->ca->Dispatch->NdkConnect(pr->ca, pr->qa, (PSOCKADDR)&src, sizeof(src),
                                                (PSOCKADDR)&dst, sizeof(dst), 1, 1, NULL, 0, consumer_call_done,
                                                &kc);
    if (cst != STATUS_PENDING)
        return cst;
    *what = "the connect event";
    st = consumer_call_wait(&s->incoming, STATUS_PENDING, s->wait_ms);
    pr->cb = s->incoming.obj;
    if (st != STATUS_SUCCESS || !pr->cb)
        return st == STATUS_SUCCESS ? STATUS_INTERNAL_ERROR : st;
    *what = "NdkAccept";
    NTSTATUS ast = pr->cb->Dispatch->NdkAccept(pr->cb, pr->qb, 1, 1, NULL, 0, NULL, NULL, consumer_call_done, &ka);
    if (ast != STATUS_PENDING)
        return ast;
    *what = "NdkConnect's completion";
    st = consumer_call_wait(&kc, cst, s->wait_ms);
    if (st != STATUS_SUCCESS)
        return st;
    *what = "NdkCompleteConnect";
    st = pr->ca->Dispatch->NdkCompleteConnect(pr->ca, NULL, NULL, consumer_call_done, &kc);
    st = consumer_call_wait(&kc, st, s->wait_ms);
    if (st != STATUS_SUCCESS)
        return st;
    *what = "NdkAccept's completion";
    return consumer_call_wait(&ka, ast, s->wait_ms);
}

/* Two QPs of pd (consumer_qp_rq's arguments) connected over s's listener from
 * src_port; as consumer_connect, *what names the step that failed. */
static inline NTSTATUS consumer_pair_up(struct consumer_session *s, struct consumer_pair *pr, NDK_PD *pd, NDK_CQ *rcq,
                                        NDK_CQ *cq, ULONG rq_depth, ULONG rq_sge, ULONG depth, ULONG sge,
                                        void *qpctx, uint16_t src_port, const char **what)
{
    *what = "NdkCreateQp";
    NTSTATUS st = consumer_qp_rq(pd, rcq, cq, rq_depth, rq_sge, depth, sge, qpctx, &pr->qa);
    if (st == STATUS_SUCCESS)
        st = consumer_qp_rq(pd, rcq, cq, rq_depth, rq_sge, depth, sge, qpctx, &pr->qb);
    return st == STATUS_SUCCESS ? consumer_connect(s, pr, src_port, what) : st;
}

/* Close what the pair holds (connectors first), without waiting: a close pends until
 * the object's children and requests are done, and never fails. */
static inline void consumer_pair_close(struct consumer_pair *pr)
{
    NDK_OBJECT_HEADER *objs[4] = {pr->ca ? &pr->ca->Header : NULL, pr->cb ? &pr->cb->Header : NULL,
                                  pr->qa ? &pr->qa->Header : NULL, pr->qb ? &pr->qb->Header : NULL};
    for (int i = 0; i < 4; i++)
        if (objs[i])
            NdkCloseObject(objs[i], NULL, NULL);
    memset(pr, 0, sizeof(*pr));
}

#endif
