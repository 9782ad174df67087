/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the NDK conformance suite: waiting for completions while checking the
 * asynchronous contract (a callback only after STATUS_PENDING, never inside the
 * call, always on the one callback thread), CQ polling, and a fixture of
 * connected QP pairs over loopback. */
#ifndef NDK_CONFORMANCE_H
#define NDK_CONFORMANCE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "consumer.h"
#include "ndkfpga.h"
#include "ndkpi.h"
#include "tap.h"

/* Contract violations seen by any callback (reported as their own case). */
static int conf_violations;
static int conf_callbacks;
static char conf_violation_msg[256];
static pthread_t conf_cb_thread;
static int conf_cb_thread_known;
static pthread_mutex_t conf_global = PTHREAD_MUTEX_INITIALIZER;
/* Milliseconds to wait for anything from the adapter. */
static int conf_timeout_ms = 20000;

static inline void conf_violation(const char *what)
{
    pthread_mutex_lock(&conf_global);
    if (conf_violations++ == 0)
        snprintf(conf_violation_msg, sizeof(conf_violation_msg), "%s", what);
    pthread_mutex_unlock(&conf_global);
}

static inline void conf_note_thread(void)
{
    pthread_mutex_lock(&conf_global);
    conf_callbacks++;
    if (!conf_cb_thread_known) {
        conf_cb_thread = pthread_self();
        conf_cb_thread_known = 1;
    } else if (!pthread_equal(conf_cb_thread, pthread_self())) {
        pthread_mutex_unlock(&conf_global);
        conf_violation("callbacks ran on more than one thread");
        return;
    }
    pthread_mutex_unlock(&conf_global);
}

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

static inline void w_init(struct waiter *w)
{
    memset(w, 0, sizeof(*w));
    pthread_mutex_init(&w->m, NULL);
    pthread_cond_init(&w->c, NULL);
}

static inline void w_begin(struct waiter *w)
{
    pthread_mutex_lock(&w->m);
    w->caller = pthread_self();
    w->returned = 0;
    w->done = 0;
    w->calls = 0;
    w->obj = NULL;
}

static inline NTSTATUS w_returned(struct waiter *w, NTSTATUS st)
{
    w->returned = 1;
    w->call_st = st;
    pthread_mutex_unlock(&w->m);
    return st;
}

/* Called first thing in every callback; returns 1 with w->m held, 0 when the
 * callback runs inside the call (the caller holds m: a violation). */
static inline int w_enter(struct waiter *w)
{
    conf_note_thread();
    if (pthread_equal(pthread_self(), w->caller) && pthread_mutex_trylock(&w->m) != 0) {
        conf_violation("a callback ran inside the call");
        w->calls++;
        return 0;
    }
    if (!pthread_equal(pthread_self(), w->caller))
        pthread_mutex_lock(&w->m);
    if (!w->returned || w->call_st != STATUS_PENDING)
        conf_violation("a callback followed a call that did not return STATUS_PENDING");
    if (w->calls++)
        conf_violation("a completion callback ran twice");
    return 1;
}

static inline void w_leave(struct waiter *w, int held)
{
    w->done = 1;
    if (held) {
        pthread_cond_broadcast(&w->c);
        pthread_mutex_unlock(&w->m);
    }
}

static inline VOID req_cb(PVOID ctx, NTSTATUS st)
{
    struct waiter *w = ctx;
    int held = w_enter(w);
    w->st = st;
    w_leave(w, held);
}

static inline VOID create_cb(PVOID ctx, NTSTATUS st, NDK_OBJECT_HEADER *obj)
{
    struct waiter *w = ctx;
    int held = w_enter(w);
    w->st = st;
    w->obj = obj;
    w_leave(w, held);
}

static inline VOID close_cb(PVOID ctx)
{
    struct waiter *w = ctx;
    int held = w_enter(w);
    w->st = STATUS_SUCCESS;
    w_leave(w, held);
}

/* The final status of a call: st itself, or (STATUS_PENDING) the callback's.
 * STATUS_IO_TIMEOUT when the callback never came. */
static inline NTSTATUS w_wait(struct waiter *w, NTSTATUS st)
{
    if (st != STATUS_PENDING)
        return st;
    struct timespec ts;
    deadline_in(&ts, conf_timeout_ms);
    pthread_mutex_lock(&w->m);
    int rc = 0;
    while (!w->done && rc == 0)
        rc = pthread_cond_timedwait(&w->c, &w->m, &ts);
    NTSTATUS out = w->done ? w->st : STATUS_IO_TIMEOUT;
    pthread_mutex_unlock(&w->m);
    return out;
}

/* Has the callback run (without waiting)? */
static inline int w_is_done(struct waiter *w)
{
    pthread_mutex_lock(&w->m);
    int d = w->done;
    pthread_mutex_unlock(&w->m);
    return d;
}

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
