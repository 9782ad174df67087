/* SPDX-License-Identifier: Apache-2.0 */
/* How messages enter frames: every sender appends to the open frame, which closes
 * (into the window, or onto the list of frames waiting for it) when a message comes
 * without defer or does not fit. Calls into the engine (nf_link.c) only through
 * nf_link_priv.h. */
#include <stdlib.h>
#include <string.h>

#include "nf_link_priv.h"

/* Close the open frame without waiting (under mu): into the window when it has room
 * and nothing waits before it, else onto the pending list. 0: out of memory. */
static int seal_open(struct nf_link *l)
{
    if (queued(l) < l->window && !l->pend_head) {
        nf_link_close_open(l);
        return 1;
    }
    struct pend *p = calloc(1, sizeof(*p));
    uint8_t *b = p ? malloc(NF_FRAME_MAX_RAW) : NULL;
    if (!b) {
        free(p);
        return 0;
    }
    p->buf = l->open_buf;
    p->payload = l->open_len;
    l->open_buf = b;
    l->open_len = l->open_push = 0;
    if (l->pend_tail)
        l->pend_tail->next = p;
    else
        l->pend_head = p;
    l->pend_tail = p;
    return 1;
}

static void gather(uint8_t *dst, const struct nf_link_part *parts, size_t nparts)
{
    for (size_t i = 0; i < nparts; i++) {
        if (parts[i].len)
            memcpy(dst, parts[i].data, parts[i].len);
        dst += parts[i].len;
    }
}

/* Room for len more bytes in the open frame (under mu): a message that does not fit
 * closes the open frame first (a message longer than the batching cap still travels,
 * alone). 0: out of memory. */
static inline int make_room(struct nf_link *l, size_t len)
{
    size_t cap = l->open_push ? join_limit(l) : l->frame_cap;
    return !(l->open_len > 0 && l->open_len + len > cap) || seal_open(l);
}

/* The open frame's first message (under mu): its age starts now, and a deferred one
 * wakes the link thread only if it sleeps past the deferred bound (its timer). */
static void start_open(struct nf_link *l, int defer)
{
    l->open_since_us = now_us();
    if (defer && l->asleep_until_us > l->open_since_us + l->defer_max_us)
        nf_transport_wake(l->t);
}

/* Close the open frame now, or leave it to the link thread while the line is busy or
 * the window full (under mu): the thread closes it after an ack (pump). */
static void push_open(struct nf_link *l)
{
    if (l->open_len > 0 && queued(l) < l->window && !l->pend_head && !line_busy(l)) {
        nf_link_close_open(l);
    } else if (l->open_len > 0) {
        mark_busy(l);
        l->open_push = 1;
    }
}

/* Count a message of len bytes at the end of the open frame (under mu). */
static inline void count_msg(struct nf_link *l, size_t len, int defer)
{
    if (l->open_len == 0)
        start_open(l, defer);
    l->open_len += len;
    l->st.msgs_tx++;
    l->st.payload_tx += len;
}

/* Take the len bytes just written at the end of the open frame (len 0: none) and,
 * without defer, push the frame (under mu). */
static inline void append(struct nf_link *l, size_t len, int defer)
{
    if (len) {
        count_msg(l, len, defer);
        if (defer)
            return;
    }
    push_open(l);
}

/* Append one message of len bytes (len 0: none) that fill writes in the open frame
 * (under mu, the link usable): room first, then the message, then the frame closes
 * unless deferred. Nothing is queued when fill refuses or memory runs out. */
static inline NTSTATUS post_locked(struct nf_link *l, size_t len, int defer, nf_link_fill_fn fill, void *arg)
{
    if (!make_room(l, len) || !fill(arg, l->open_buf + NF_LINK_HDR_SIZE + l->open_len))
        return STATUS_INSUFFICIENT_RESOURCES;
    append(l, len, defer);
    return STATUS_SUCCESS;
}

struct gather_arg {
    const struct nf_link_part *parts;
    size_t nparts;
};

static int gather_fill(void *arg, uint8_t *dst)
{
    const struct gather_arg *g = arg;
    gather(dst, g->parts, g->nparts);
    return 1;
}

/* Whether a blocking sender of len bytes waits (under mu): not while the window has
 * room, nor while the message fits the open frame with nothing waiting before it: it
 * joins the frame, which the link thread closes as the window opens, so that
 * messages queued behind a full window share frames (one header, CRC and pair of
 * flags on the line for all of them). Up to join_limit only: a frame is never split
 * again, and one built big before a loss was seen would hardly cross a bad line. */
static int must_wait(const struct nf_link *l, size_t len)
{
    if (l->pend_head)
        return 1;
    return queued(l) >= l->window && (len == 0 || l->open_len + len > join_limit(l));
}

/* The blocking way in (nf_link_sendv, nf_link_flush): first wait for room in the
 * window or the open frame (on the link thread itself that fails instead), then append a
 * message of len bytes gathered from parts (len 0: none) and, without defer, close
 * the open frame. */
static NTSTATUS enqueue(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, size_t len, int defer)
{
    nf_mutex_lock(&l->mu);
    l->senders_inside++;
    NTSTATUS st = usable(l);
    while (st == STATUS_SUCCESS && must_wait(l, len)) {
        if (l->self_set && pthread_equal(pthread_self(), l->self)) {
            st = STATUS_INSUFFICIENT_RESOURCES;
            break;
        }
        nf_cond_wait(&l->cv, &l->mu);
        st = usable(l);
    }
    if (st == STATUS_SUCCESS) {
        struct gather_arg g = {parts, nparts};
        st = post_locked(l, len, defer, gather_fill, &g);
    }
    l->senders_inside--;
    if (l->closing)
        nf_cond_broadcast(&l->cv);
    nf_mutex_unlock(&l->mu);
    return st;
}

NTSTATUS nf_link_sendv(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, int defer)
{
    if (!l || (!parts && nparts))
        return nf_set_error(STATUS_INVALID_PARAMETER, "nf_link_send: NULL link or parts");
    size_t len = 0, got = 0;
    uint8_t hdr[NF_MSG_HDR_LEN_OFF + 2];
    for (size_t i = 0; i < nparts && len <= NF_LINK_MAX_PAYLOAD; i++) {
        if (!parts[i].data && parts[i].len)
            return nf_set_error(STATUS_INVALID_PARAMETER, "nf_link_send: part %zu is NULL", i);
        for (size_t j = 0; j < parts[i].len && got < sizeof(hdr); j++)
            hdr[got++] = ((const uint8_t *)parts[i].data)[j];
        len += parts[i].len > NF_LINK_MAX_PAYLOAD ? NF_LINK_MAX_PAYLOAD + 1 : parts[i].len;
    }
    if (len < NF_MSG_HDR_SIZE || len > NF_LINK_MAX_PAYLOAD || (len & 7u) != 0)
        return nf_set_error(STATUS_INVALID_PARAMETER,
                            "nf_link_send: message of %zu bytes (must be %u..%u and a multiple of 8)", len,
                            (unsigned)NF_MSG_HDR_SIZE, (unsigned)NF_LINK_MAX_PAYLOAD);
    if (get16(hdr + NF_MSG_HDR_LEN_OFF) != len)
        return nf_set_error(STATUS_INVALID_PARAMETER, "nf_link_send: MSG_HDR.len %u but %zu bytes given",
                            (unsigned)get16(hdr + NF_MSG_HDR_LEN_OFF), len);
    return enqueue(l, parts, nparts, len, defer);
}

NTSTATUS nf_link_send(struct nf_link *l, const void *msg, size_t len, int defer)
{
    struct nf_link_part p = {msg, len};
    return nf_link_sendv(l, &p, 1, defer);
}

NTSTATUS nf_link_flush(struct nf_link *l)
{
    if (!l)
        return nf_set_error(STATUS_INVALID_PARAMETER, "nf_link_flush: NULL link");
    return enqueue(l, NULL, 0, 0, 0);
}

/* The non-waiting way in: the whole post under mu, from room in the frame to the
 * message in it, so a closing link waits for it on mu alone (no senders_inside). */
NTSTATUS nf_link_post_fill(struct nf_link *l, size_t len, int defer, nf_link_fill_fn fill, void *arg)
{
    nf_mutex_lock(&l->mu);
    NTSTATUS st = usable(l);
    if (st == STATUS_SUCCESS)
        st = post_locked(l, len, defer, fill, arg);
    nf_mutex_unlock(&l->mu);
    return st;
}

/* The whole post under mu, as nf_link_post_fill, with the message a plain copy. */
NTSTATUS nf_link_post_msg(struct nf_link *l, const void *msg, size_t len, int defer, uint32_t *publish,
                          uint32_t value)
{
    nf_mutex_lock(&l->mu);
    NTSTATUS st = usable(l);
    if (st == STATUS_SUCCESS && !make_room(l, len))
        st = STATUS_INSUFFICIENT_RESOURCES;
    if (st == STATUS_SUCCESS) {
        /* Under mu throughout: the frame is read after unlock, and the counter's readers
         * outside mu read only what it stands for, written before (a ring slot). */
        uint8_t *dst = l->open_buf + NF_LINK_HDR_SIZE + l->open_len;
        count_msg(l, len, defer);
        __atomic_store_n(publish, value, __ATOMIC_RELEASE);
        memcpy(dst, msg, len);
        if (!defer)
            push_open(l);
    }
    nf_mutex_unlock(&l->mu);
    return st;
}

NTSTATUS nf_link_post(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, size_t len, int defer)
{
    struct gather_arg g = {parts, nparts};
    return nf_link_post_fill(l, len, defer, gather_fill, &g);
}

void nf_link_expect(struct nf_link *l, int delta)
{
    if (!l)
        return;
    nf_mutex_lock(&l->mu);
    mark_busy(l);
    l->expecting = l->expecting + delta < 0 ? 0 : l->expecting + delta;
    nf_mutex_unlock(&l->mu);
    nf_transport_wake(l->t); /* the deadline may have changed */
}
