/* SPDX-License-Identifier: Apache-2.0 */
/* The link's life and its I/O: open (the RESET handshake), the link thread, which
 * does all transport I/O and runs the protocol (nf_link_arq.c) under the mutex, status,
 * counters and close. Senders (nf_link_send.c) only fill frames under the mutex and
 * wake the thread. */
#include "nf_link.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "nf_link_priv.h"

#define DEFAULT_SILENCE_MS 30000u
#define DEFAULT_RTO_INITIAL_MS 1000u
#define DEFAULT_RTO_MAX_MS 10000u
#define DEFAULT_ACK_DELAY_US 1000u
#define DEFAULT_DEFER_MAX_US 2000u /* longest a deferred message waits for company */

/* Write one encoded frame outside the lock; on failure the link dies. A peer that
 * takes no bytes (a frozen board) is waited for in slices, so nf_link_close is never
 * held up by more than one slice; a slice that ran out may have left part of the
 * frame on the line, so the whole frame goes again (the receiver drops the part:
 * every frame starts with a FLAG). The silence deadline bounds the whole wait. */
#define WRITE_SLICE_MS 100u
static int write_frame(struct nf_link *l, size_t wire_len)
{
    NTSTATUS st = STATUS_IO_TIMEOUT;
    for (uint32_t waited = 0; st == STATUS_IO_TIMEOUT && waited < l->silence_us / 1000u; waited += WRITE_SLICE_MS) {
        nf_mutex_lock(&l->mu);
        int closing = l->closing;
        nf_mutex_unlock(&l->mu);
        if (closing)
            break;
        st = nf_transport_write(l->t, l->wire, wire_len, WRITE_SLICE_MS);
    }
    nf_mutex_lock(&l->mu);
    if (st == STATUS_SUCCESS) {
        l->st.frames_tx++;
        l->st.wire_tx += wire_len;
    } else if (!l->closing) {
        nf_link_set_dead(l, st, "link: writing to %s failed", l->t->name);
    }
    nf_mutex_unlock(&l->mu);
    return st == STATUS_SUCCESS;
}


static void *link_thread(void *arg)
{
    struct nf_link *l = arg;
    int was_up = 0;
    nf_mutex_lock(&l->mu);
    l->self = pthread_self();
    l->self_set = 1;
    nf_mutex_unlock(&l->mu);
    for (;;) {
        nf_mutex_lock(&l->mu);
        was_up = l->state == ST_UP;
        uint64_t now = now_us(), next = now;
        size_t len = l->closing || l->state == ST_DEAD ? 0 : nf_link_next_output(l, now, &next);
        int stop = l->closing || l->state == ST_DEAD;
        l->asleep_until_us = stop || len > 0 ? 0 : next;
        nf_mutex_unlock(&l->mu);
        if (stop || (len > 0 && !write_frame(l, len)))
            break;
        if (len > 0)
            next = now; /* keep writing while there is more; read what is there without waiting */
        uint64_t after = now_us();
        int timeout_ms = next > after ? (int)((next - after + 999u) / 1000u) : 0;
        ssize_t n = nf_transport_read(l->t, l->rxbuf, sizeof(l->rxbuf), timeout_ms);
        if (n < 0) {
            nf_mutex_lock(&l->mu);
            if (!l->closing)
                nf_link_set_dead(l, STATUS_CONNECTION_RESET, "link: %s closed the connection", l->t->name);
            nf_mutex_unlock(&l->mu);
            break;
        }
        uint64_t t_rx = now_us();
        unsigned bad = 0;
        for (ssize_t i = 0; i < n; i++) {
            enum nf_frame_result r = nf_frame_decode_byte(&l->dec, l->rxbuf[i]);
            if (r == NF_FRAME_OK)
                nf_link_handle_frame(l, l->dec.buf, l->dec.len, t_rx);
            else if (r == NF_FRAME_BAD)
                bad++;
        }
        nf_mutex_lock(&l->mu);
        l->asleep_until_us = 0;
        l->st.wire_rx += (uint64_t)n;
        l->st.bad_frames += bad;
        l->losses += bad;
        if (bad && l->state == ST_UP && l->loss_acks < LOSS_ACKS_MAX)
            l->loss_acks = bad >= LOSS_ACKS_MAX ? LOSS_ACKS_MAX : bad > l->loss_acks ? bad : l->loss_acks;
        nf_mutex_unlock(&l->mu);
    }
    /* Death is announced after every sender has been woken (set_dead broadcast). */
    nf_mutex_lock(&l->mu);
    int call = l->state == ST_DEAD && !l->closing && was_up && l->on_dead;
    NTSTATUS status = l->dead_status;
    nf_mutex_unlock(&l->mu);
    if (call)
        l->on_dead(l->ctx, status);
    return NULL;
}

/* ---- API ------------------------------------------------------------------- */

static void free_link(struct nf_link *l)
{
    for (unsigned i = 0; i < NF_LINK_MAX_SLOTS; i++)
        free(l->q[i].buf);
    free(l->open_buf);
    for (struct pend *p = l->pend_head, *n; p; p = n) {
        n = p->next;
        free(p->buf);
        free(p);
    }
    free(l);
}

NTSTATUS nf_link_open(struct nf_transport *t, nf_link_on_message on_message, nf_link_on_dead on_dead, void *ctx,
                      struct nf_link **out, struct nf_info *info)
{
    const char *v = getenv("NDKFPGA_LINK_TIMEOUT_MS");
    char *end = NULL;
    unsigned long ms = v ? strtoul(v, &end, 10) : 0;
    struct nf_link_config cfg = {.silence_ms = end && *end == '\0' && ms <= 0xFFFFFFFFul / 1000u ? (uint32_t)ms : 0};
    return nf_link_open_ex(t, &cfg, on_message, on_dead, ctx, out, info);
}

NTSTATUS nf_link_open_ex(struct nf_transport *t, const struct nf_link_config *cfg, nf_link_on_message on_message,
                         nf_link_on_dead on_dead, void *ctx, struct nf_link **out, struct nf_info *info)
{
    if (!out || !t) {
        nf_transport_close(t);
        return nf_set_error(STATUS_INVALID_PARAMETER, "nf_link_open: transport or out is NULL");
    }
    *out = NULL;
    struct nf_link_config c = {0};
    if (cfg)
        c = *cfg;
    struct nf_link *l = calloc(1, sizeof(*l));
    if (!l) {
        nf_transport_close(t);
        return nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "out of memory for the link");
    }
    NTSTATUS st = STATUS_INSUFFICIENT_RESOURCES;
    l->t = t;
    l->on_message = on_message;
    l->on_dead = on_dead;
    l->ctx = ctx;
#define OR(v, dflt) ((v) ? (v) : (dflt))
    l->silence_us = OR(c.silence_ms, DEFAULT_SILENCE_MS) * 1000u;
    l->rto_initial_us = OR(c.rto_initial_ms, DEFAULT_RTO_INITIAL_MS) * 1000u;
    l->turnaround_us = OR(c.rto_min_ms, NF_LINK_TURNAROUND_MS) * 1000u;
    l->rto_max_us = OR(c.rto_max_ms, DEFAULT_RTO_MAX_MS) * 1000u;
    l->rto_max_us = l->rto_max_us < l->turnaround_us ? l->turnaround_us : l->rto_max_us;
    l->ack_delay_us = OR(c.ack_delay_us, DEFAULT_ACK_DELAY_US);
    l->defer_max_us = OR(c.defer_max_us, DEFAULT_DEFER_MAX_US);
#undef OR
    l->window_max = (c.window_max && c.window_max < NF_LINK_MAX_SLOTS) ? c.window_max : NF_LINK_MAX_SLOTS;
    l->frame_cap = NF_LINK_MAX_PAYLOAD;
    l->join_cap = FRAME_CAP_MIN;
    for (unsigned i = 0; i < PACE_SAMPLES; i++)
        l->pace_ns[i] = UINT32_MAX;
    l->fast_armed = 1;
    if (c.nonce)
        l->nonce = (uint16_t)(c.nonce - 1);
    else if (getrandom(&l->nonce, sizeof(l->nonce), 0) != (ssize_t)sizeof(l->nonce))
        l->nonce = (uint16_t)(now_us() ^ (uint64_t)getpid());
    nf_frame_decoder_init(&l->dec);
    int oom = 0;
    for (unsigned i = 0; i < NF_LINK_MAX_SLOTS; i++)
        oom |= !(l->q[i].buf = malloc(NF_FRAME_MAX_RAW));
    oom |= !(l->open_buf = malloc(NF_FRAME_MAX_RAW));
    l->last_rx_us = l->idle_mark_us = now_us();
    l->state = ST_RESETTING;
    if (oom || pthread_create(&l->thread, NULL, link_thread, l) != 0) {
        nf_set_error(st, "out of memory or threads for the link");
        goto fail;
    }
    nf_mutex_lock(&l->mu);
    while (l->state == ST_RESETTING)
        nf_cond_wait(&l->cv, &l->mu);
    st = l->state == ST_UP ? STATUS_SUCCESS : l->dead_status;
    nf_mutex_unlock(&l->mu);
    if (st != STATUS_SUCCESS) {
        pthread_join(l->thread, NULL);
        nf_error_set_text(l->dead_msg); /* the reason was recorded on the link thread */
        goto fail;
    }
    if (info)
        *info = l->info;
    *out = l;
    return STATUS_SUCCESS;
fail:
    nf_transport_close(t);
    free_link(l);
    return st;
}

static int is_dead(struct nf_link *l)
{
    nf_mutex_lock(&l->mu);
    int dead = l->state == ST_DEAD;
    nf_mutex_unlock(&l->mu);
    return dead;
}

NTSTATUS nf_link_status(struct nf_link *l)
{
    return !l ? STATUS_INVALID_PARAMETER : is_dead(l) ? l->dead_status : STATUS_SUCCESS;
}

const char *nf_link_dead_reason(struct nf_link *l)
{
    /* Both stable once dead: written once, before the state changed. */
    return l && is_dead(l) ? l->dead_msg : "";
}

void nf_link_get_stats(struct nf_link *l, struct nf_link_stats *out)
{
    if (!l || !out)
        return;
    nf_mutex_lock(&l->mu);
    *out = l->st;
    out->window = l->window;
    out->rto_us = (uint32_t)nf_link_frame_rto(l, l->una != l->sent ? l->q[l->una % NF_LINK_MAX_SLOTS].wire_len : 0);
    out->frame_cap = (uint32_t)l->frame_cap;
    out->byte_ns = nf_link_byte_ns(l);
    nf_mutex_unlock(&l->mu);
}

void nf_link_close(struct nf_link *l)
{
    if (!l)
        return;
    nf_mutex_lock(&l->mu);
    l->closing = 1;
    nf_cond_broadcast(&l->cv);
    nf_mutex_unlock(&l->mu);
    nf_transport_wake(l->t);
    pthread_join(l->thread, NULL);
    nf_mutex_lock(&l->mu);
    while (l->senders_inside > 0)
        nf_cond_wait(&l->cv, &l->mu);
    nf_mutex_unlock(&l->mu);
    nf_transport_close(l->t);
    free_link(l);
}
