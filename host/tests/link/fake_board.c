/* SPDX-License-Identifier: Apache-2.0 */
/* Fake board: see fake_board.h. One thread; everything it touches is under mu so
 * the test can read stats and switch modes at any time. */
#include "fake_board.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nf_frame.h"
#include "nf_layout.h"

#define FB_MAX_TX NF_LINK_MAX_SLOTS
#define FB_OUTQ_BYTES (1u << 20)

struct out_frame {
    uint8_t raw[NF_FRAME_MAX_RAW];
    size_t payload;
    uint64_t sent_us;
};

struct fake_board {
    struct fake_board_cfg cfg;
    int fd;
    pthread_t thread;
    pthread_mutex_t mu;
    int stop;
    enum fake_board_mode mode;
    uint64_t rng;

    int session;          /* a RESET was answered */
    uint16_t last_nonce;
    int wrong_left, stale_left;
    uint8_t rx_expect, last_ack_sent;
    int ack_due;

    /* board -> host go-back-N */
    struct out_frame tx[FB_MAX_TX];
    uint8_t una, nxt, sent;
    uint64_t frames_built;
    /* replies waiting for a frame: bytes of whole messages */
    uint8_t *outq;
    size_t outq_len;

    struct nf_frame_decoder dec;
    struct fake_board_stats st;

    /* reply_delay_ms: input is seen this long after it arrived (a slow board) */
    uint8_t *delay_buf;
    size_t delay_len;
    uint64_t delay_t[256];
    size_t delay_n[256], delay_chunks;

    /* byte_us: bytes wait here until the paced line has carried them */
    uint8_t *line_buf;
    size_t line_len;
    uint64_t line_t; /* when the byte at the head of line_buf started on the line */
};

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static double rnd(struct fake_board *b)
{
    b->rng ^= b->rng << 13;
    b->rng ^= b->rng >> 7;
    b->rng ^= b->rng << 17;
    return (double)(b->rng >> 11) * (1.0 / 9007199254740992.0);
}


/* The n bytes at p as the faulty line delivers them, into out (room for 2n):
 * each byte dropped, corrupted or doubled with the configured probabilities.
 * Returns how many bytes came out. */
static size_t line_faults(struct fake_board *b, const uint8_t *p, size_t n, uint8_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (rnd(b) < b->cfg.drop)
            continue;
        uint8_t c = p[i];
        if (rnd(b) < b->cfg.corrupt)
            c ^= (uint8_t)(1u + (unsigned)(rnd(b) * 255.0));
        out[k++] = c;
        if (rnd(b) < b->cfg.dup)
            out[k++] = c;
    }
    return k;
}

/* Send raw bytes through the fault injector. */
static void wire_send(struct fake_board *b, const uint8_t *p, size_t n)
{
    uint8_t out[2 * NF_FRAME_MAX_WIRE];
    size_t k = line_faults(b, p, n, out), off = 0;
    while (off < k) {
        ssize_t w = send(b->fd, out + off, k - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* host gone: the test will notice */
        off += (size_t)w;
    }
}

static void send_raw_frame(struct fake_board *b, uint8_t *raw, size_t raw_len)
{
    uint8_t wire[NF_FRAME_MAX_WIRE];
    size_t n = nf_frame_encode(raw, raw_len, wire, sizeof(wire));
    wire_send(b, wire, n);
    b->st.frames_tx++;
    b->last_ack_sent = raw[NF_LINK_HDR_ACK_OFF];
}

static void send_ctrl(struct fake_board *b, uint8_t type, uint16_t rsvd, const void *payload, size_t plen)
{
    uint8_t raw[NF_LINK_HDR_SIZE + NF_INFO_SIZE];
    memset(raw, 0, NF_LINK_HDR_SIZE);
    raw[NF_LINK_HDR_TYPE_OFF] = type;
    raw[NF_LINK_HDR_ACK_OFF] = b->rx_expect;
    lt_put16(raw + NF_LINK_HDR_LEN_OFF, (uint16_t)plen);
    lt_put16(raw + NF_LINK_HDR_RSVD_OFF, rsvd);
    if (plen)
        memcpy(raw + NF_LINK_HDR_SIZE, payload, plen);
    send_raw_frame(b, raw, NF_LINK_HDR_SIZE + plen);
}

static void send_reset_ack(struct fake_board *b, uint16_t nonce)
{
    struct nf_info info;
    memset(&info, 0, sizeof(info));
    info.fw_version = NF_ADAPTER_FW_VERSION;
    info.layout_version = b->cfg.layout_version ? b->cfg.layout_version : NF_LAYOUT_VERSION;
    info.rx_slots = b->cfg.rx_slots;
    info.tx_slots = b->cfg.tx_slots;
    info.max_payload = NF_LINK_MAX_PAYLOAD;
    info.page_size = NF_ADAPTER_PAGE_SIZE;
    send_ctrl(b, NF_LINK_TYPE_RESET_ACK, nonce, &info, sizeof(info));
}

static void queue_reply(struct fake_board *b, const uint8_t *msg, size_t len)
{
    if (b->outq_len + len > FB_OUTQ_BYTES)
        return; /* cannot happen with the tests' windows */
    memcpy(b->outq + b->outq_len, msg, len);
    lt_put16(b->outq + b->outq_len, (uint16_t)(lt_get16(msg) | NF_OP_REPLY));
    b->outq_len += len;
}

static void handle_msgs(struct fake_board *b, const uint8_t *p, size_t len)
{
    size_t off = 0;
    uint32_t count = 0;
    while (off + NF_MSG_HDR_SIZE <= len) {
        size_t m = lt_get16(p + off + NF_MSG_HDR_LEN_OFF);
        if (m < NF_MSG_HDR_SIZE || m > len - off || (m & 7u)) {
            b->st.content_errors++;
            return;
        }
        count++;
        b->st.msgs_rx++;
        if (lt_get16(p + off) == NF_OP_PING) {
            uint32_t tag = lt_get32(p + off + NF_MSG_HDR_TAG_OFF);
            b->st.pings++;
            if (tag != b->st.next_tag)
                b->st.order_errors++;
            b->st.next_tag = tag + 1;
            for (size_t i = NF_MSG_HDR_SIZE; i < m; i++)
                if (p[off + i] != ping_byte(tag, (uint32_t)(i - NF_MSG_HDR_SIZE))) {
                    b->st.content_errors++;
                    break;
                }
            queue_reply(b, p + off, m);
        }
        off += m;
    }
    if (off != len)
        b->st.content_errors++;
    if (count > b->st.max_msgs_in_frame)
        b->st.max_msgs_in_frame = count;
}

static void handle_frame(struct fake_board *b, const uint8_t *f, size_t n)
{
    uint8_t type = f[NF_LINK_HDR_TYPE_OFF], seq = f[NF_LINK_HDR_SEQ_OFF], ack = f[NF_LINK_HDR_ACK_OFF];
    b->st.frames_rx++;
    if (type == NF_LINK_TYPE_RESET) {
        uint16_t nonce = lt_get16(f + NF_LINK_HDR_RSVD_OFF);
        if (b->wrong_left > 0) {
            b->wrong_left--;
            send_reset_ack(b, (uint16_t)(nonce + 1));
            return;
        }
        while (b->stale_left > 0) {
            /* leftovers of an earlier session: the host must ignore them */
            uint8_t raw[NF_LINK_HDR_SIZE + NF_MSG_HDR_SIZE] = {0};
            raw[NF_LINK_HDR_TYPE_OFF] = NF_LINK_TYPE_DATA;
            raw[NF_LINK_HDR_SEQ_OFF] = (uint8_t)b->stale_left;
            lt_put16(raw + NF_LINK_HDR_LEN_OFF, NF_MSG_HDR_SIZE);
            lt_put16(raw + NF_LINK_HDR_SIZE, NF_OP_CQE);
            lt_put16(raw + NF_LINK_HDR_SIZE + NF_MSG_HDR_LEN_OFF, NF_MSG_HDR_SIZE);
            send_raw_frame(b, raw, sizeof(raw));
            b->stale_left--;
        }
        if (b->session && nonce == b->last_nonce) {
            /* A repeated RESET of the same session: answer, change nothing. */
            b->st.resets_repeated++;
        } else {
            b->st.resets++;
            b->session = 1;
            b->last_nonce = nonce;
            b->rx_expect = 0;
            b->una = b->nxt = b->sent = 0;
            b->outq_len = 0;
            b->st.next_tag = 1;
        }
        send_reset_ack(b, nonce);
        return;
    }
    if (!b->session)
        return;
    /* Cumulative ack of our frames. */
    uint8_t adv = (uint8_t)(ack - b->una);
    if (adv && adv <= (uint8_t)(b->nxt - b->una)) {
        b->una = ack;
        if ((uint8_t)(b->sent - b->una) > (uint8_t)(b->nxt - b->una))
            b->sent = b->una;
        if (b->una != b->sent)
            b->tx[b->una % FB_MAX_TX].sent_us = now_us(); /* restart the timer */
    }
    if (type != NF_LINK_TYPE_DATA)
        return;
    uint32_t inflight = (uint8_t)(seq - b->last_ack_sent) + 1u;
    if (inflight > b->st.max_inflight && inflight < 128)
        b->st.max_inflight = inflight;
    if ((uint8_t)(seq - b->last_ack_sent) >= b->cfg.rx_slots && (uint8_t)(seq - b->last_ack_sent) < 128)
        b->st.window_violations++;
    b->ack_due = 1;
    if (seq != b->rx_expect) {
        b->st.dup_rx++;
        return;
    }
    b->rx_expect++;
    b->st.data_rx++;
    handle_msgs(b, f + NF_LINK_HDR_SIZE, n - NF_LINK_HDR_SIZE);
}

static void transmit(struct fake_board *b, uint8_t seq)
{
    struct out_frame *o = &b->tx[seq % FB_MAX_TX];
    o->raw[NF_LINK_HDR_ACK_OFF] = b->rx_expect;
    send_raw_frame(b, o->raw, NF_LINK_HDR_SIZE + o->payload);
    b->ack_due = 0;
}

/* Build frames from queued replies, send what the window allows, retransmit. */
static void board_output(struct fake_board *b)
{
    uint64_t now = now_us();
    while ((uint8_t)(b->nxt - b->una) < b->cfg.tx_slots && b->outq_len > 0) {
        struct out_frame *o = &b->tx[b->nxt % FB_MAX_TX];
        size_t take = 0;
        int msgs = 0;
        while (take < b->outq_len) {
            size_t m = lt_get16(b->outq + take + NF_MSG_HDR_LEN_OFF);
            if (take > 0 && (take + m > b->cfg.max_frame_payload ||
                             (b->cfg.max_msgs_per_frame && msgs >= b->cfg.max_msgs_per_frame)))
                break;
            take += m;
            msgs++;
        }
        memset(o->raw, 0, NF_LINK_HDR_SIZE);
        o->raw[NF_LINK_HDR_TYPE_OFF] = NF_LINK_TYPE_DATA;
        o->raw[NF_LINK_HDR_SEQ_OFF] = b->nxt;
        memcpy(o->raw + NF_LINK_HDR_SIZE, b->outq, take);
        o->payload = take;
        o->sent_us = 0;
        b->frames_built++;
        if (b->cfg.malformed_every && b->frames_built % (uint64_t)b->cfg.malformed_every == 0 && take >= 2 * 8) {
            /* Corrupt the last message's length so the list does not add up. */
            size_t last = 0;
            for (size_t x = 0; x < take;) {
                last = x;
                x += lt_get16(o->raw + NF_LINK_HDR_SIZE + x + NF_MSG_HDR_LEN_OFF);
            }
            lt_put16(o->raw + NF_LINK_HDR_SIZE + last + NF_MSG_HDR_LEN_OFF, 3);
        }
        lt_put16(o->raw + NF_LINK_HDR_LEN_OFF, (uint16_t)take);
        memmove(b->outq, b->outq + take, b->outq_len - take);
        b->outq_len -= take;
        b->nxt++;
    }
    if (b->una != b->sent && now - b->tx[b->una % FB_MAX_TX].sent_us > (uint64_t)b->cfg.rto_ms * 1000u) {
        for (uint8_t s = b->una; s != b->sent; s++)
            b->st.retransmits++;
        b->sent = b->una; /* go back N */
    }
    while (b->sent != b->nxt) {
        struct out_frame *o = &b->tx[b->sent % FB_MAX_TX];
        transmit(b, b->sent);
        o->sent_us = now;
        b->sent++;
    }
    if (b->ack_due) {
        send_ctrl(b, NF_LINK_TYPE_ACK, 0, NULL, 0);
        b->ack_due = 0;
    }
}

static void *board_thread(void *arg)
{
    struct fake_board *b = arg;
    uint8_t buf[8192];
    for (;;) {
        pthread_mutex_lock(&b->mu);
        int stop = b->stop;
        enum fake_board_mode mode = b->mode;
        if (mode == FB_HANGUP && b->fd >= 0) {
            close(b->fd);
            b->fd = -1;
        }
        pthread_mutex_unlock(&b->mu);
        if (stop)
            break;
        if (b->fd < 0) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
            continue;
        }
        struct pollfd pfd = {.fd = b->fd, .events = POLLIN};
        /* a paced line releases bytes as time passes: wake often while it holds some */
        int r = poll(&pfd, 1, b->line_len ? 1 : 2);
        ssize_t n = 0;
        if (r > 0) {
            n = recv(b->fd, buf, sizeof(buf), MSG_DONTWAIT);
            if (n == 0) {
                /* host closed: stay around quietly until stopped */
                pthread_mutex_lock(&b->mu);
                close(b->fd);
                b->fd = -1;
                pthread_mutex_unlock(&b->mu);
                continue;
            }
        }
        pthread_mutex_lock(&b->mu);
        if (b->cfg.reply_delay_ms && b->mode == FB_NORMAL) {
            /* Queue what arrived; take out what has waited long enough. */
            if (n > 0 && b->delay_chunks < 256 && b->delay_len + (size_t)n <= FB_OUTQ_BYTES) {
                memcpy(b->delay_buf + b->delay_len, buf, (size_t)n);
                b->delay_len += (size_t)n;
                b->delay_t[b->delay_chunks] = now_us();
                b->delay_n[b->delay_chunks++] = (size_t)n;
            }
            n = 0;
            if (b->delay_chunks && now_us() - b->delay_t[0] >= (uint64_t)b->cfg.reply_delay_ms * 1000u) {
                n = (ssize_t)b->delay_n[0];
                memcpy(buf, b->delay_buf, (size_t)n);
                memmove(b->delay_buf, b->delay_buf + n, b->delay_len - (size_t)n);
                b->delay_len -= (size_t)n;
                memmove(b->delay_t, b->delay_t + 1, (b->delay_chunks - 1) * sizeof(b->delay_t[0]));
                memmove(b->delay_n, b->delay_n + 1, (b->delay_chunks - 1) * sizeof(b->delay_n[0]));
                b->delay_chunks--;
            }
        }
        if (b->cfg.byte_us && b->mode == FB_NORMAL) {
            /* What has crossed the line by now leaves it; what just arrived joins the
             * queue and starts on the line no earlier than now. */
            uint64_t t = now_us();
            uint64_t k = (t - b->line_t) / b->cfg.byte_us;
            if (k > b->line_len)
                k = b->line_len;
            size_t fresh = n > 0 ? (size_t)n : 0;
            uint8_t done[sizeof(buf)];
            if (k > sizeof(done))
                k = sizeof(done);
            memcpy(done, b->line_buf, (size_t)k);
            memmove(b->line_buf, b->line_buf + k, b->line_len - (size_t)k);
            b->line_len -= (size_t)k;
            b->line_t += k * b->cfg.byte_us;
            if (b->line_len == 0)
                b->line_t = t;
            if (fresh && b->line_len + fresh <= FB_OUTQ_BYTES) {
                memcpy(b->line_buf + b->line_len, buf, fresh);
                b->line_len += fresh;
            }
            memcpy(buf, done, (size_t)k);
            n = (ssize_t)k;
        }
        if (b->mode == FB_NORMAL) {
            static _Thread_local uint8_t in[2 * sizeof(buf)];
            size_t k = line_faults(b, buf, n > 0 ? (size_t)n : 0, in);
            for (size_t i = 0; i < k; i++) {
                enum nf_frame_result fr = nf_frame_decode_byte(&b->dec, in[i]);
                if (fr == NF_FRAME_OK)
                    handle_frame(b, b->dec.buf, b->dec.len);
                else if (fr == NF_FRAME_BAD)
                    b->st.bad_rx++;
            }
            board_output(b);
        }
        pthread_mutex_unlock(&b->mu);
    }
    return NULL;
}

struct fake_board *fake_board_start(int fd, const struct fake_board_cfg *cfg)
{
    struct fake_board *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->outq = malloc(FB_OUTQ_BYTES);
    b->delay_buf = malloc(FB_OUTQ_BYTES);
    b->line_buf = malloc(FB_OUTQ_BYTES);
    if (!b->outq || !b->delay_buf || !b->line_buf) {
        free(b->outq);
        free(b->delay_buf);
        free(b->line_buf);
        free(b);
        return NULL;
    }
    b->cfg = *cfg;
    if (!b->cfg.rx_slots)
        b->cfg.rx_slots = 4;
    if (!b->cfg.tx_slots)
        b->cfg.tx_slots = 4;
    if (!b->cfg.rto_ms)
        b->cfg.rto_ms = 30;
    if (!b->cfg.max_frame_payload || b->cfg.max_frame_payload > NF_LINK_MAX_PAYLOAD)
        b->cfg.max_frame_payload = NF_LINK_MAX_PAYLOAD;
    b->fd = fd;
    b->rng = cfg->seed * 0x9E3779B97F4A7C15ull + 1;
    b->wrong_left = cfg->wrong_nonce_answers;
    b->stale_left = cfg->stale_data_before_ack;
    b->st.next_tag = 1;
    nf_frame_decoder_init(&b->dec);
    pthread_mutex_init(&b->mu, NULL);
    if (pthread_create(&b->thread, NULL, board_thread, b) != 0) {
        free(b->delay_buf);
        free(b->line_buf);
        free(b->outq);
        free(b);
        return NULL;
    }
    return b;
}

void fake_board_set_mode(struct fake_board *b, enum fake_board_mode mode)
{
    pthread_mutex_lock(&b->mu);
    b->mode = mode;
    pthread_mutex_unlock(&b->mu);
}

void fake_board_get_stats(struct fake_board *b, struct fake_board_stats *out)
{
    pthread_mutex_lock(&b->mu);
    *out = b->st;
    pthread_mutex_unlock(&b->mu);
}

void fake_board_stop(struct fake_board *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    b->stop = 1;
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->thread, NULL);
    if (b->fd >= 0)
        close(b->fd);
    pthread_mutex_destroy(&b->mu);
    free(b->delay_buf);
    free(b->line_buf);
    free(b->outq);
    free(b);
}
