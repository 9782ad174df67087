/* SPDX-License-Identifier: Apache-2.0 */
/* Requests to the board and their replies: tags, deadlines, the gate that holds a
 * reply back until the issuing call has returned, synchronous calls. Knows no object
 * type: a request says what to run on its reply (on_reply). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ndk_internal.h"
#include "base/nf_time.h"

uint64_t ndk_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void ndk_deadline_after(struct timespec *ts, unsigned ms)
{
    nf_deadline_after(ts, ms);
}

void ndk_cond_wait_ms(struct ndk_adapter *ad, pthread_cond_t *cond, unsigned ms)
{
    struct timespec until;
    ndk_deadline_after(&until, ms);
    pthread_cond_timedwait(cond, &ad->lock, &until);
}

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
static void deliver(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS status, const uint8_t *body, size_t len)
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
        NTSTATUS st = ad->dead;
        pthread_mutex_unlock(&ad->lock);
        return st;
    }
    ad->next_tag = (ad->next_tag + 1u) & ~NDK_WR_TAG; /* the upper half names work requests */
    if (ad->next_tag == 0)
        ad->next_tag = 1;
    r->tag = ad->next_tag;
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

void ndk_req_issued(struct ndk_adapter *ad, struct ndk_req *r)
{
    pthread_mutex_lock(&ad->lock);
    r->issuing = 0;
    if (r->early)
        r->on_reply(ad, r, r->early_status, r->early_has_body ? r->early_body : NULL, r->early_len);
    pthread_mutex_unlock(&ad->lock);
}

NTSTATUS ndk_req_send(struct ndk_adapter *ad, struct ndk_req *r, uint16_t op, void *msg, size_t len, int defer)
{
    NTSTATUS rs = ndk_req_register(ad, r, op, msg, len);
    if (rs != STATUS_SUCCESS)
        return rs;
    int gated = r->gate; /* r may be freed by its on_reply once sent unless gated */
    struct nf_link_part part = {msg, len};
    NTSTATUS st = nf_link_post(ad->link, &part, 1, len, defer);
    if (st != STATUS_SUCCESS) {
        /* Take it back (refused inline, never completes) unless the death handler
         * already completed it (then it was accepted: it completes once, as a reply). */
        if (ndk_req_unregister(ad, r))
            return st;
    }
    if (gated)
        ndk_req_issued(ad, r);
    return st == STATUS_SUCCESS ? STATUS_SUCCESS : STATUS_PENDING;
}

/* Under ad->lock: wait until r (sent, without a callback) is done. Bounded by its
 * deadline even when the callback thread cannot enforce it (a synchronous call made
 * from a callback): past it, the waiter completes r with STATUS_IO_TIMEOUT itself. */
int ndk_req_overdue(struct ndk_adapter *ad, struct ndk_req *r, uint64_t now)
{
    if (now < r->deadline_us + NDK_WATCH_PERIOD_MS * 1000u)
        return 0;
    struct ndk_req **pp = &ad->reqs;
    while (*pp && *pp != r)
        pp = &(*pp)->next;
    if (!*pp)
        return 0;
    *pp = r->next;
    ad->req_timeouts++;
    nf_link_expect(ad->link, -1);
    deliver(ad, r, STATUS_IO_TIMEOUT, NULL, 0);
    return 1;
}

void ndk_wait_req(struct ndk_adapter *ad, struct ndk_req *r)
{
    while (!r->done) {
        if (ndk_req_overdue(ad, r, ndk_now_us()))
            continue;
        ndk_cond_wait_ms(ad, &ad->cond, NDK_WATCH_PERIOD_MS);
    }
}

static void sync_reply(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS status, const uint8_t *body, size_t len)
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
    return r.status;
}

static void forget_reply(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS status, const uint8_t *body, size_t len)
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

void ndk_req_reply(struct ndk_adapter *ad, const struct nf_msg_hdr *h, NTSTATUS status, const uint8_t *body,
                   size_t len)
{
    pthread_mutex_lock(&ad->lock);
    struct ndk_req *r = NULL;
    for (struct ndk_req **pp = &ad->reqs; *pp; pp = &(*pp)->next) {
        if ((*pp)->tag == h->tag && ((*pp)->op | NF_OP_REPLY) == h->op) {
            r = *pp;
            *pp = r->next;
            break;
        }
    }
    if (r) {
        deliver(ad, r, status, body, len);
        pthread_cond_broadcast(&ad->cond); /* NdkFpgaCloseAdapter waits for the last reply */
    }
    pthread_mutex_unlock(&ad->lock);
    if (r)
        nf_link_expect(ad->link, -1);
}

void ndk_req_fail_all(struct ndk_adapter *ad, NTSTATUS status)
{
    while (ad->reqs) {
        struct ndk_req *r = ad->reqs;
        ad->reqs = r->next;
        deliver(ad, r, status, NULL, 0);
    }
}

int ndk_req_expire(struct ndk_adapter *ad, uint64_t now)
{
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
        deliver(ad, r, STATUS_IO_TIMEOUT, NULL, 0);
    }
    if (expired) {
        nf_link_expect(ad->link, -expired); /* lock order: ad->lock, then the link's */
        pthread_cond_broadcast(&ad->cond);
    }
    return expired;
}

/* ---- asynchronous requests with a synchronous fallback (no callback given) ---- */

void ndk_req_finish(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS st, NDK_OBJECT_HEADER *created)
{
    if (!r->rc && !r->cc) {
        r->status = st;
        r->done = 1;
        pthread_cond_broadcast(&ad->cond);
        return;
    }
    if (r->cc)
        ndk_queue_create_cb(ad, r->cc, r->ctx, st, created, NULL);
    else
        ndk_queue_request_cb(ad, r->rc, r->ctx, st, r->obj);
    free(r);
}

NTSTATUS ndk_req_issue(struct ndk_adapter *ad, struct ndk_req *r, uint16_t op, void *msg, size_t len,
                       int *inline_failed)
{
    int sync = !r->rc && !r->cc;
    r->gate = 1;
    NTSTATUS st = ndk_req_send(ad, r, op, msg, len, 0);
    *inline_failed = st != STATUS_SUCCESS && st != STATUS_PENDING;
    if (*inline_failed) {
        free(r);
        return st;
    }
    if (!sync)
        return STATUS_PENDING;
    pthread_mutex_lock(&ad->lock);
    ndk_wait_req(ad, r);
    pthread_mutex_unlock(&ad->lock);
    st = r->status;
    free(r);
    return st;
}

/* ---- objects the board creates (MR_CREATE, QP_CREATE) ---- */

static void unref_parents(struct ndk_core *c)
{
    for (int i = 0; i < 3; i++)
        if (c->parents[i])
            ndk_unref_locked(c->parents[i]);
}

NTSTATUS ndk_create_issue(struct ndk_core *c, struct ndk_req *r, uint16_t op, void *msg, size_t len,
                          NDK_FN_CREATE_COMPLETION cc, void *ctx)
{
    struct ndk_adapter *ad = c->ad;
    r->cc = cc;
    r->ctx = ctx;
    pthread_mutex_lock(&ad->lock);
    for (int i = 0; i < 3; i++) /* a parent's close waits for the create */
        if (c->parents[i])
            ndk_ref(c->parents[i]);
    pthread_mutex_unlock(&ad->lock);
    int inline_failed = 0;
    NTSTATUS st = ndk_req_issue(ad, r, op, msg, len, &inline_failed);
    if (inline_failed) { /* the reply handler never runs */
        pthread_mutex_lock(&ad->lock);
        unref_parents(c);
        pthread_mutex_unlock(&ad->lock);
    }
    if (st != STATUS_SUCCESS && st != STATUS_PENDING)
        ndk_core_destroy(c); /* refused inline, or answered with an error while the caller waited */
    return st;
}

void ndk_create_done(struct ndk_adapter *ad, struct ndk_req *r, struct ndk_core *c, NTSTATUS status)
{
    if (status == STATUS_SUCCESS)
        (void)ndk_core_link(c); /* room checked at the create; a race to full: an unusable object */
    unref_parents(c);           /* the create's own references */
    int nobody_waits = r->cc != NULL;
    ndk_req_finish(ad, r, status, status == STATUS_SUCCESS ? c->hdr : NULL);
    if (status != STATUS_SUCCESS && nobody_waits)
        ndk_core_destroy(c); /* never existed for the consumer */
}

NTSTATUS ndk_reply_copy(NTSTATUS status, const uint8_t *body, size_t len, void *out, size_t size)
{
    if (status != STATUS_SUCCESS)
        return status;
    if (!body || len < size)
        return STATUS_INTERNAL_ERROR;
    memcpy(out, body, size);
    return status;
}
