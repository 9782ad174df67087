/* SPDX-License-Identifier: Apache-2.0 */
/* NDK conformance suite: every rule of docs/ndk.md fed its bad input, expecting the
 * exact documented status and checking that nothing changed; then the data path
 * (fast-register over scattered pages, RDMA Write/Read through the token, refusals
 * after invalidation, of another PD, without the right, out of bounds) and the
 * asynchronous contract. The device comes from $NDKFPGA_DEVICE (default "model").
 *
 * Statuses for cases NDK leaves to "other status codes" are this provider's
 * (documented in ndkpi.h/ndkfpga.h): an MR of the wrong kind or state for a call
 * gets STATUS_INVALID_DEVICE_STATE; malformed arguments STATUS_INVALID_PARAMETER.
 *
 * harness.c runs the sections in a fixed order, contract.c checks every callback,
 * fixture.c holds what the sections share, case_*.c hold the sections by concern. */
#ifndef NDK_CONFORMANCE_H
#define NDK_CONFORMANCE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "consumer.h"
#include "contract.h"
#include "ndkfpga.h"
#include "ndkpi.h"

#define LISTEN_PORT 4791
#define QP_DEPTH 256
#define REFUSAL_MR_BYTES 256 /* the refusal tests register this much of a page */

/* ---- reporting (harness.c) ---- */
/* One TAP line (tests/tap.h), counted once for the whole suite; returns cond. */
int conf_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the suite's adapter and objects (fixture.c) ---- */
extern NDK_ADAPTER *ad;
extern NDK_ADAPTER_INFO info;
extern NDK_CQ *cq; /* the initiator CQ of every QP new_qp makes */
extern NDK_PD *pd, *pd2;
extern NDK_LISTENER *listener;
extern int slow; /* the Verilator board: fewer repetitions */
/* The receive queue of the QPs new_qp makes: its CQ (NULL: cq) and depth (0: none,
 * else with 2 SGEs per receive). */
extern NDK_CQ *pair_rcq;
extern ULONG pair_rq;
extern ULONG pair_depth; /* initiator depth of the QPs connect_pair creates */
extern int disconnects;  /* DisconnectEvents seen (under the connect-event lock) */
extern int notified;     /* cq_notify calls */

/* Small helpers: each reports a failure as the case name says. */
int expect(NTSTATUS got, NTSTATUS want, const char *name);
NDK_OBJECT_HEADER *create_wait(struct waiter *w, NTSTATUS st, void *inline_obj, NTSTATUS *out);
NTSTATUS close_obj(NDK_OBJECT_HEADER *obj);
NDK_MR *new_mr(NDK_PD *p, int fast);
NTSTATUS init_fast(NDK_MR *mr, ULONG pages, BOOLEAN remote);
NTSTATUS reg_mr(NDK_MR *mr, MDL *mdl, SIZE_T len, ULONG flags);
NTSTATUS dereg_mr(NDK_MR *mr);
NDK_MW *new_mw(NDK_PD *p);
UINT32 wtoken(NDK_MW *mw);
UINT32 rtoken(NDK_MR *mr);
NDK_QP *new_qp(NDK_PD *p, ULONG depth, NTSTATUS *out);
/* The next result of c, or a result with Status STATUS_IO_TIMEOUT. */
NDK_RESULT_EX next_of(NDK_CQ *c);
/* The next result of the initiator CQ. */
NDK_RESULT_EX next_result(void);
/* No result shows up for a while (an inline failure posted nothing). */
int cq_stays_empty(void);
int expect_result(NDK_RESULT_EX r, NTSTATUS st, NDK_OPERATION_TYPE type, void *ctx, const char *name);
/* A CQ notification callback that counts its calls in notified. */
VOID cq_notify(PVOID ctx, NTSTATUS st);

/* Connections */
VOID on_connect_event(PVOID ctx, NDK_CONNECTOR *c);
NDK_CONNECTOR *wait_incoming(void);
struct pair {
    NDK_QP *qa, *qb;
    NDK_CONNECTOR *ca, *cb;
};
/* Two QPs of PD p connected to each other; 0 on failure (printed). */
int connect_pair(NDK_PD *p, struct pair *pr);
void close_pair(struct pair *pr);

/* Buffers */
struct buf {
    MDL *mdl;
    NDK_MR *mr; /* normal MR over it (local read/write) */
    size_t len;
};
int new_buf(struct buf *b, size_t len, int scattered, ULONG mr_flags);
void free_buf(struct buf *b);
void fill(uint8_t *p, size_t n, uint32_t seed);
PVOID va_of(const struct buf *b, size_t off);

/* Remote accesses whose outcome is checked against the bytes */
NTSTATUS probe_write(NDK_QP *q, struct buf *src, struct buf *tgt, UINT32 token, UINT64 va, uint32_t seed);
void refused_access(const char *name, int write, struct buf *tgt, UINT32 token, UINT64 raddr, ULONG len);

/* Private adapters: a software adapter of a case's own, to stop or kill */
struct priv {
    pid_t pid;
    char dir[32], sock[64];
    NDK_ADAPTER *ad, *saved_ad;
    NDK_CQ *cq, *saved_cq;
    NDK_PD *pd;
    NDK_LISTENER *l;
    pthread_t saved_thread;
    int saved_known;
    NDK_MR *fr; /* fr_setup: a fast-register MR ... */
    NDK_LOGICAL_ADDRESS page; /* ... and a page for it */
};
/* Start nfmodel, open it, a CQ of cq_depth (notify may be NULL), a PD and a listener;
 * the suite's globals (ad, cq) point at it until priv_close. */
int priv_open(struct priv *p, ULONG cq_depth, NDK_FN_CQ_NOTIFICATION_CALLBACK notify, void *nctx);
int priv_start(struct priv *p, ULONG cq_depth, const char *what);
void priv_kill(struct priv *p);
/* Close the adapter (children left open) and the model; the close's milliseconds. */
uint64_t priv_close(struct priv *p);
/* p->fr: a fast-register MR of p's PD over one fresh page (p->page); 0 on failure. */
int fr_setup(struct priv *p);
/* connect_pair with QPs of initiator depth depth. */
int connect_pair_depth(NDK_PD *p, ULONG depth, struct pair *pr);
/* A connected pair of depth depth and a fast MR with a page to register. */
int pair_fr_setup(struct priv *p, ULONG depth, struct pair *pr);
/* pair_fr_setup on a private adapter, reported as "WHAT: connected QPs and a fast
 * MR"; on failure the adapter is closed. */
int priv_pair_fr_setup(struct priv *p, ULONG depth, const char *what, struct pair *pr);

/* ---- the sections (case_*.c), in the order harness.c runs them ---- */
void test_adapter_info(void);     /* case_objects.c */
void test_link_death(void);       /* case_guarantees.c */
void test_guarantees(void);       /* case_guarantees.c */
void test_create_limits(void);    /* case_objects.c */
void test_registration(void);     /* case_objects.c */
void test_unconnected(void);      /* case_objects.c */
void test_connection_rules(void); /* case_objects.c */
void test_fast_register_rules(void); /* case_data.c */
void test_refusals(void);         /* case_data.c */
void test_async(void);            /* case_async.c */
void test_flush(void);            /* case_flush.c */
void test_send_receive(void);     /* case_send.c */
void test_windows(void);          /* case_windows.c */

#endif
