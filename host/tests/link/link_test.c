/* SPDX-License-Identifier: Apache-2.0 */
/* Shared helpers of the link and transport tests (link_test.h). */
#include "link_test.h"

#include <string.h>
#include <time.h>

#include "nf_layout.h"

uint64_t lt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void lt_sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000u, (long)(ms % 1000u) * 1000000L};
    nanosleep(&ts, NULL);
}

size_t make_ping(uint8_t *buf, uint32_t tag, size_t body)
{
    size_t len = NF_MSG_HDR_SIZE + body;
    memset(buf, 0, NF_MSG_HDR_SIZE);
    lt_put16(buf, NF_OP_PING);
    lt_put16(buf + NF_MSG_HDR_LEN_OFF, (uint32_t)len);
    lt_put32(buf + NF_MSG_HDR_TAG_OFF, tag);
    for (size_t i = 0; i < body; i++)
        buf[NF_MSG_HDR_SIZE + i] = ping_byte(tag, (uint32_t)i);
    return len;
}

void ping_rx_init(struct ping_rx *r)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->next_tag = 1;
}

void ping_rx_destroy(struct ping_rx *r)
{
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
}

void ping_rx_on_message(void *ctx, const uint8_t *msg, size_t len)
{
    struct ping_rx *r = ctx;
    pthread_mutex_lock(&r->mu);
    if (lt_get16(msg) != (NF_OP_PING | NF_OP_REPLY) || len != lt_get16(msg + NF_MSG_HDR_LEN_OFF)) {
        r->other++;
    } else {
        uint32_t tag = lt_get32(msg + NF_MSG_HDR_TAG_OFF);
        if (tag != r->next_tag)
            r->order_errors++;
        r->next_tag = tag + 1;
        for (size_t i = NF_MSG_HDR_SIZE; i < len; i++)
            if (msg[i] != ping_byte(tag, (uint32_t)(i - NF_MSG_HDR_SIZE))) {
                r->content_errors++;
                break;
            }
        r->replies++;
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void ping_rx_on_dead(void *ctx, NTSTATUS status)
{
    struct ping_rx *r = ctx;
    pthread_mutex_lock(&r->mu);
    r->dead_calls++;
    r->dead_status = status;
    r->dead_at_ms = lt_now_ms();
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* Polls rather than waits on cv with a deadline: the condition variable's clock
 * would have to be set up to match CLOCK_MONOTONIC. */
static uint64_t wait_for(struct ping_rx *r, const uint64_t *value, uint64_t n, unsigned ms)
{
    uint64_t end = lt_now_ms() + ms;
    pthread_mutex_lock(&r->mu);
    while (*value < n && lt_now_ms() < end) {
        pthread_mutex_unlock(&r->mu);
        lt_sleep_ms(2);
        pthread_mutex_lock(&r->mu);
    }
    uint64_t got = *value;
    pthread_mutex_unlock(&r->mu);
    return got;
}

uint64_t ping_rx_wait(struct ping_rx *r, uint64_t n, unsigned ms)
{
    return wait_for(r, &r->replies, n, ms);
}

uint64_t ping_rx_wait_dead(struct ping_rx *r, unsigned ms)
{
    return wait_for(r, &r->dead_calls, 1, ms);
}

void *lt_reader_run(void *reader)
{
    struct lt_reader *r = reader;
    uint8_t buf[64];
    uint64_t t0 = lt_now_ms();
    r->result = nf_transport_read(r->t, buf, sizeof(buf), r->timeout_ms);
    r->ms = (double)(lt_now_ms() - t0);
    return NULL;
}

void lt_reader_start(struct lt_reader *r, struct nf_transport *t, int timeout_ms)
{
    r->t = t;
    r->timeout_ms = timeout_ms;
    r->result = 99;
    pthread_create(&r->th, NULL, lt_reader_run, r);
    lt_sleep_ms(50); /* let it block in the read */
}

void lt_reader_join(struct lt_reader *r)
{
    pthread_join(r->th, NULL);
}
