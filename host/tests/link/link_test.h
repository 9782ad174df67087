/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the link and transport tests (host/tests/link, host/tests/usb,
 * tests/link_e2e.c): time, little-endian fields, PING messages, and a receiver that
 * checks the PING echoes arrive once, in order and intact. */
#ifndef LINK_TEST_H
#define LINK_TEST_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/nf_transport.h"

uint64_t lt_now_ms(void);
void lt_sleep_ms(unsigned ms);

static inline uint16_t lt_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t lt_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void lt_put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void lt_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The PING payload the tests send and the boards check: byte i of tag's body. */
static inline uint8_t ping_byte(uint32_t tag, uint32_t i)
{
    uint32_t x = tag * 2654435761u + i * 40503u;
    return (uint8_t)(x ^ (x >> 13) ^ (x >> 24));
}

/* PING number tag with body bytes into buf; returns its length. */
size_t make_ping(uint8_t *buf, uint32_t tag, size_t body);

/* The link callbacks' context: PING replies are checked against tags 1, 2, 3, ...
 * and their bodies; anything else counts as other. */
struct ping_rx {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t next_tag; /* reply tag expected next */
    uint64_t replies, order_errors, content_errors, other;
    uint64_t dead_calls;
    NTSTATUS dead_status;
    uint64_t dead_at_ms;
};

void ping_rx_init(struct ping_rx *r);
void ping_rx_destroy(struct ping_rx *r);
/* nf_link_on_message / nf_link_on_dead with ctx = struct ping_rx. */
void ping_rx_on_message(void *ctx, const uint8_t *msg, size_t len);
void ping_rx_on_dead(void *ctx, NTSTATUS status);
/* Wait until the replies reach n or ms pass; returns the count. */
uint64_t ping_rx_wait(struct ping_rx *r, uint64_t n, unsigned ms);
/* Wait until on_dead ran or ms pass; returns dead_calls. */
uint64_t ping_rx_wait_dead(struct ping_rx *r, unsigned ms);

/* One nf_transport_read of t on a thread of its own (wake and hang-up tests). */
struct lt_reader {
    struct nf_transport *t;
    int timeout_ms;
    ssize_t result;
    double ms; /* how long the read took */
    pthread_t th;
};
void *lt_reader_run(void *reader); /* the read itself, on the calling thread */
void lt_reader_start(struct lt_reader *r, struct nf_transport *t, int timeout_ms);
void lt_reader_join(struct lt_reader *r);

#endif
