/* SPDX-License-Identifier: Apache-2.0 */
/* The asynchronous contract's checks and the waiters (contract.h). */
#include "contract.h"

#include <stdio.h>
#include <string.h>

int conf_violations;
int conf_callbacks;
char conf_violation_msg[256];
pthread_t conf_cb_thread;
int conf_cb_thread_known;
pthread_mutex_t conf_global = PTHREAD_MUTEX_INITIALIZER;
int conf_timeout_ms = 20000;

void conf_violation(const char *what)
{
    pthread_mutex_lock(&conf_global);
    if (conf_violations++ == 0)
        snprintf(conf_violation_msg, sizeof(conf_violation_msg), "%s", what);
    pthread_mutex_unlock(&conf_global);
}

void conf_note_thread(void)
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

void w_init(struct waiter *w)
{
    memset(w, 0, sizeof(*w));
    pthread_mutex_init(&w->m, NULL);
    pthread_cond_init(&w->c, NULL);
}

void w_begin(struct waiter *w)
{
    pthread_mutex_lock(&w->m);
    w->caller = pthread_self();
    w->returned = 0;
    w->done = 0;
    w->calls = 0;
    w->obj = NULL;
}

NTSTATUS w_returned(struct waiter *w, NTSTATUS st)
{
    w->returned = 1;
    w->call_st = st;
    pthread_mutex_unlock(&w->m);
    return st;
}

int w_enter(struct waiter *w)
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

void w_leave(struct waiter *w, int held)
{
    w->done = 1;
    if (held) {
        pthread_cond_broadcast(&w->c);
        pthread_mutex_unlock(&w->m);
    }
}

VOID req_cb(PVOID ctx, NTSTATUS st)
{
    struct waiter *w = ctx;
    int held = w_enter(w);
    w->st = st;
    w_leave(w, held);
}

VOID create_cb(PVOID ctx, NTSTATUS st, NDK_OBJECT_HEADER *obj)
{
    struct waiter *w = ctx;
    int held = w_enter(w);
    w->st = st;
    w->obj = obj;
    w_leave(w, held);
}

VOID close_cb(PVOID ctx)
{
    struct waiter *w = ctx;
    int held = w_enter(w);
    w->st = STATUS_SUCCESS;
    w_leave(w, held);
}

NTSTATUS w_wait(struct waiter *w, NTSTATUS st)
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

int w_is_done(struct waiter *w)
{
    pthread_mutex_lock(&w->m);
    int d = w->done;
    pthread_mutex_unlock(&w->m);
    return d;
}
