/* SPDX-License-Identifier: Apache-2.0 */
/* The callback thread: runs every user callback queued on the adapter (ndk_object.c's
 * event queue), one at a time, and the adapter's periodic work (ad->tick: deadlines)
 * between them. Knows no object type: an event says what to call. */
#include <stdlib.h>

#include "ndk_internal.h"

static void run_event(struct ndk_event *ev)
{
    switch (ev->kind) {
    case EV_REQUEST: /* NDK_FN_REQUEST_COMPLETION and NDK_FN_CQ_NOTIFICATION_CALLBACK: (ctx, status) */
    case EV_CQ_NOTIFY:
    case EV_CQ_ERROR:
        if (ev->fn)
            ((NDK_FN_REQUEST_COMPLETION)ev->fn)(ev->ctx, ev->status);
        break;
    case EV_CREATE:
        if (ev->fn)
            ((NDK_FN_CREATE_COMPLETION)ev->fn)(ev->ctx, ev->status, ev->obj);
        break;
    case EV_CLOSE: {
        struct ndk_core *c = ev->core;
        ndk_core_teardown(c);
        /* Gone for every call before the consumer hears of it (the object itself is
         * freed after the callback returns). */
        ndk_core_unregister(c);
        if (c->close_cb)
            c->close_cb(c->close_ctx);
        break;
    }
    case EV_CONNECT:
        if (ev->fn)
            ((NDK_FN_CONNECT_EVENT_CALLBACK)ev->fn)(ev->ctx, (NDK_CONNECTOR *)(void *)ev->obj);
        break;
    case EV_CALL:
        ((void (*)(void *))ev->fn)(ev->ctx);
        break;
    case EV_DISCONNECT:
        if (ev->fn)
            ((NDK_FN_DISCONNECT_EVENT_CALLBACK)ev->fn)(ev->ctx);
        break;
    case EV_DISCONNECT_EX: /* this provider gives no disconnect reason: 0 */
        if (ev->fn)
            ((NDK_FN_DISCONNECT_EVENT_CALLBACK_EX)ev->fn)(ev->ctx, 0);
        break;
    default:
        break;
    }
}

static void *cb_main(void *arg)
{
    struct ndk_adapter *ad = arg;
    pthread_mutex_lock(&ad->lock);
    for (;;) {
        ad->tick(ad);
        while (!ad->ev_head && !ad->cb_stop) {
            if (ad->tick(ad))
                continue;
            ndk_cond_wait_ms(ad, &ad->ev_cond, NDK_WATCH_PERIOD_MS);
        }
        struct ndk_event *ev = ad->ev_head;
        if (!ev)
            break;
        ad->ev_head = ev->next;
        if (!ad->ev_head)
            ad->ev_tail = NULL;
        ad->cb_busy = 1;
        if (ev->queued)
            *ev->queued = 0; /* before the call, so that the callback may queue it again */
        pthread_mutex_unlock(&ad->lock);
        run_event(ev);
        pthread_mutex_lock(&ad->lock);
        if (ev->kind == EV_CLOSE) {
            ndk_core_release(ev->core); /* frees ev too (embedded) */
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

int ndk_events_start(struct ndk_adapter *ad, int (*tick)(struct ndk_adapter *ad))
{
    ad->tick = tick;
    if (pthread_create(&ad->cb_thread, NULL, cb_main, ad) != 0)
        return 0;
    ad->cb_running = 1;
    return 1;
}

void ndk_events_stop(struct ndk_adapter *ad)
{
    pthread_mutex_lock(&ad->lock);
    /* Wait until the thread is idle with nothing queued, then stop it. */
    while (ad->ev_head || ad->cb_busy)
        pthread_cond_wait(&ad->cond, &ad->lock);
    ad->cb_stop = 1;
    pthread_cond_signal(&ad->ev_cond);
    pthread_mutex_unlock(&ad->lock);
    if (ad->cb_running)
        pthread_join(ad->cb_thread, NULL);
}
