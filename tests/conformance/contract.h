/* SPDX-License-Identifier: Apache-2.0 */
/* The asynchronous contract, checked on every callback (contract.c): a callback runs
 * only after its call returned STATUS_PENDING, never inside it, once, on the one
 * callback thread. bench_post.c waits on the same waiters. */
#ifndef NDK_CONTRACT_H
#define NDK_CONTRACT_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "consumer.h"
#include "ndkfpga.h"
#include "ndkpi.h"

/* Contract violations seen by any callback (reported as their own case). */
extern int conf_violations;
extern int conf_callbacks;
extern char conf_violation_msg[256];
extern pthread_t conf_cb_thread;
extern int conf_cb_thread_known;
extern pthread_mutex_t conf_global;
/* Milliseconds to wait for anything from the adapter. */
extern int conf_timeout_ms;

void conf_violation(const char *what);
void conf_note_thread(void);

/* One outstanding call. w_begin locks m for the duration of the call; the callback
 * takes m, so it can only observe the state after the call returned. */
struct waiter {
    pthread_mutex_t m;
    pthread_cond_t c;
    pthread_t caller;
    int returned, done, calls;
    NTSTATUS call_st, st;
    NDK_OBJECT_HEADER *obj;
};

void w_init(struct waiter *w);
void w_begin(struct waiter *w);
NTSTATUS w_returned(struct waiter *w, NTSTATUS st);
/* Called first thing in every callback; returns 1 with w->m held, 0 when the
 * callback runs inside the call (the caller holds m: a violation). */
int w_enter(struct waiter *w);
void w_leave(struct waiter *w, int held);
VOID req_cb(PVOID ctx, NTSTATUS st);
VOID create_cb(PVOID ctx, NTSTATUS st, NDK_OBJECT_HEADER *obj);
VOID close_cb(PVOID ctx);
/* The final status of a call: st itself, or (STATUS_PENDING) the callback's.
 * STATUS_IO_TIMEOUT when the callback never came. */
NTSTATUS w_wait(struct waiter *w, NTSTATUS st);
/* Has the callback run (without waiting)? */
int w_is_done(struct waiter *w);

#define ASYNC(w, call) (w_begin(w), w_returned((w), (call)))

static inline void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Next result of the CQ within the timeout: 1, or 0 when none came. */
static inline int cq_wait(NDK_CQ *cq, NDK_RESULT_EX *r, int timeout_ms)
{
    return consumer_cq_wait(cq, r, timeout_ms);
}

#endif
