/* How messages enter frames: every sender appends to the open frame, which closes
 * (into the window, or onto the list of frames waiting for it) when a message comes
 * without defer or does not fit. Calls into the engine (nf_link.c) only through
 * nf_link_priv.h. */
#include <stdlib.h>
#include <string.h>

#include "nf_link_priv.h"
#include "nf_transport_priv.h"

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

/* Every way in: append a message of len bytes (len 0: none) to the open frame and,
 * without defer, close it. wait: first wait for room in the window (a blocking
 * sender; on the link thread itself a full window fails instead). */
static uint32_t enqueue(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, size_t len, int defer,
                        int wait)
{
    pthread_mutex_lock(&l->mu);
    l->senders_inside++;
    uint32_t st = usable(l);
    while (wait && st == NF_STATUS_SUCCESS && (queued(l) >= l->window || l->pend_head)) {
        if (l->self_set && pthread_equal(pthread_self(), l->self)) {
            st = NF_STATUS_INSUFFICIENT_RESOURCES;
            break;
        }
        pthread_cond_wait(&l->cv, &l->mu);
        st = usable(l);
    }
    if (st != NF_STATUS_SUCCESS)
        goto out;
    if (len) {
        /* A message that does not fit closes the open frame first (a message longer
         * than the batching cap still travels, alone). */
        if (l->open_len > 0 && l->open_len + len > l->frame_cap && !seal_open(l)) {
            st = NF_STATUS_INSUFFICIENT_RESOURCES;
            goto out;
        }
        if (l->open_len == 0) {
            l->open_since_us = now_us();
            if (defer && !wait)
                nf_transport_wake(l->t); /* nf_link_post: the deferred bound's timer */
        }
        uint8_t *dst = l->open_buf + NF_LINK_HDR_SIZE + l->open_len;
        for (size_t i = 0; i < nparts; i++) {
            if (parts[i].len)
                memcpy(dst, parts[i].data, parts[i].len);
            dst += parts[i].len;
        }
        l->open_len += len;
        l->st.msgs_tx++;
        l->st.payload_tx += len;
        if (defer)
            goto out;
    }
    if (l->open_len > 0 && queued(l) < l->window && !l->pend_head) {
        nf_link_close_open(l);
    } else if (l->open_len > 0) {
        mark_busy(l);
        l->open_push = 1; /* the link thread closes it when the window opens */
    }
out:
    l->senders_inside--;
    if (l->closing)
        pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return st;
}

uint32_t nf_link_sendv(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, int defer)
{
    if (!l || (!parts && nparts))
        return nf_set_error(NF_STATUS_INVALID_PARAMETER, "nf_link_send: NULL link or parts");
    size_t len = 0, got = 0;
    uint8_t hdr[NF_MSG_HDR_LEN_OFF + 2];
    for (size_t i = 0; i < nparts && len <= NF_LINK_MAX_PAYLOAD; i++) {
        if (!parts[i].data && parts[i].len)
            return nf_set_error(NF_STATUS_INVALID_PARAMETER, "nf_link_send: part %zu is NULL", i);
        for (size_t j = 0; j < parts[i].len && got < sizeof(hdr); j++)
            hdr[got++] = ((const uint8_t *)parts[i].data)[j];
        len += parts[i].len > NF_LINK_MAX_PAYLOAD ? NF_LINK_MAX_PAYLOAD + 1 : parts[i].len;
    }
    if (len < NF_MSG_HDR_SIZE || len > NF_LINK_MAX_PAYLOAD || (len & 7u) != 0)
        return nf_set_error(NF_STATUS_INVALID_PARAMETER,
                            "nf_link_send: message of %zu bytes (must be %u..%u and a multiple of 8)", len,
                            (unsigned)NF_MSG_HDR_SIZE, (unsigned)NF_LINK_MAX_PAYLOAD);
    if (get16(hdr + NF_MSG_HDR_LEN_OFF) != len)
        return nf_set_error(NF_STATUS_INVALID_PARAMETER, "nf_link_send: MSG_HDR.len %u but %zu bytes given",
                            (unsigned)get16(hdr + NF_MSG_HDR_LEN_OFF), len);
    return enqueue(l, parts, nparts, len, defer, 1);
}

uint32_t nf_link_send(struct nf_link *l, const void *msg, size_t len, int defer)
{
    struct nf_link_part p = {msg, len};
    return nf_link_sendv(l, &p, 1, defer);
}

uint32_t nf_link_flush(struct nf_link *l)
{
    if (!l)
        return nf_set_error(NF_STATUS_INVALID_PARAMETER, "nf_link_flush: NULL link");
    return enqueue(l, NULL, 0, 0, 0, 1);
}

uint32_t nf_link_post(struct nf_link *l, const struct nf_link_part *parts, size_t nparts, size_t len, int defer)
{
    return enqueue(l, parts, nparts, len, defer, 0);
}

void nf_link_expect(struct nf_link *l, int delta)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    mark_busy(l);
    l->expecting = l->expecting + delta < 0 ? 0 : l->expecting + delta;
    pthread_mutex_unlock(&l->mu);
    nf_transport_wake(l->t); /* the deadline may have changed */
}
