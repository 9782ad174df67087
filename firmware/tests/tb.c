/* SPDX-License-Identifier: Apache-2.0 */
/* Test bench for the firmware's host build (tb.h): plays the host side of the link
 * against the firmware running on the hardware models. */
#include "tb.h"

#include "tap.h"

struct tb_state tb;
static const char *prefix = "";

void tb_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--prefix") && i + 1 < argc)
            prefix = argv[++i];
}

int tb_ok(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = tap_vokp(cond, prefix, fmt, ap);
    va_end(ap);
    return r;
}

int tb_done(void)
{
    nf_hw_free();
    return tap_done();
}

void tb_clear(void)
{
    tb.nframes = 0;
    tb.nmsgs = 0;
    tb.data_frames = 0;
}

int tb_init(const char *profile)
{
    struct nf_hw_cfg cfg;
    if (nf_hw_profile(profile, 3000000, &cfg) || nf_hw_init(&cfg))
        return -1;
    /* Only the scalars: the frame and message arrays are megabytes (fuzzing speed). */
    tb.tx_seq = tb.rx_expect = tb.last_acked = 0;
    tb_clear();
    tb.auto_ack = 1;
    tb.next_tag = 1;
    nf_frame_decoder_init(&tb.dec);
    fw_init();
    return 0;
}

void tb_send_raw(const uint8_t *raw, size_t len)
{
    static uint8_t wire[NF_FRAME_MAX_WIRE];
    size_t n = nf_frame_encode(raw, len, wire, sizeof(wire));
    if (!n) {
        fprintf(stderr, "tb: frame encode failed\n");
        abort();
    }
    nf_hw_rx_bytes(wire, n);
}

void tb_send_frame(uint8_t type, uint8_t seq, uint8_t ack, uint16_t rsvd, const void *payload, size_t len)
{
    static uint8_t raw[NF_FRAME_MAX_RAW];
    struct nf_link_hdr h = {type, seq, ack, 0, (uint16_t)len, rsvd};
    memcpy(raw, &h, sizeof(h));
    if (len)
        memcpy(raw + sizeof(h), payload, len);
    tb_send_raw(raw, sizeof(h) + len);
}

void tb_send_ack(void)
{
    tb_send_frame(NF_LINK_TYPE_ACK, 0, tb.rx_expect, 0, NULL, 0);
}

/* Decode what the board sent; deliver DATA frames in order like the host would. */
void tb_collect(void)
{
    uint8_t buf[4096];
    size_t n;
    while ((n = nf_hw_tx_take(buf, sizeof(buf))) > 0) {
        for (size_t i = 0; i < n; i++) {
            if (nf_frame_decode_byte(&tb.dec, buf[i]) != NF_FRAME_OK)
                continue;
            if (tb.nframes >= TB_MAX_FRAMES)
                abort();
            struct tb_frame *f = &tb.frames[tb.nframes++];
            memcpy(&f->hdr, tb.dec.buf, sizeof(f->hdr));
            memcpy(f->payload, tb.dec.buf + sizeof(f->hdr), f->hdr.len);
            if (f->hdr.type != NF_LINK_TYPE_DATA || f->hdr.seq != tb.rx_expect)
                continue;
            tb.rx_expect++;
            tb.data_frames++;
            for (size_t off = 0; off + NF_MSG_HDR_SIZE <= f->hdr.len;) {
                struct tb_msg *m = &tb.msgs[tb.nmsgs < TB_MAX_MSGS ? tb.nmsgs++ : TB_MAX_MSGS - 1];
                memcpy(&m->hdr, f->payload + off, sizeof(m->hdr));
                if (m->hdr.len < NF_MSG_HDR_SIZE || off + m->hdr.len > f->hdr.len)
                    break;
                memcpy(m->body, f->payload + off + NF_MSG_HDR_SIZE, m->hdr.len - NF_MSG_HDR_SIZE);
                m->frame_seq = f->hdr.seq;
                off += m->hdr.len;
            }
        }
    }
}

/* Run the firmware until it has nothing more to do. */
void tb_run(void)
{
    for (int i = 0; i < 10000; i++) {
        int did = fw_poll();
        tb_collect();
        if (tb.auto_ack && tb.data_frames) {
            /* ack what arrived so the board's window stays open */
            if (tb.last_acked != tb.rx_expect) {
                tb_send_ack();
                tb.last_acked = tb.rx_expect;
                did = 1;
            }
        }
        if (!did)
            return;
    }
    fprintf(stderr, "tb: firmware never went idle\n");
    abort();
}

/* Append one message to buf at *len. Returns the tag. */
uint32_t tb_put_msg(uint8_t *buf, size_t *len, uint16_t op, const void *body, size_t blen)
{
    size_t mlen = (NF_MSG_HDR_SIZE + blen + 7u) & ~(size_t)7u;
    struct nf_msg_hdr h = {op, (uint16_t)mlen, tb.next_tag++, 0, 0};
    memset(buf + *len, 0, mlen);
    memcpy(buf + *len, &h, sizeof(h));
    if (blen)
        memcpy(buf + *len + NF_MSG_HDR_SIZE, body, blen);
    *len += mlen;
    return h.tag;
}

/* One DATA frame from the host carrying payload. */
void tb_send_data(const void *payload, size_t len)
{
    /* Without auto-ack the host's frames only repeat the last ack it chose to send. */
    tb_send_frame(NF_LINK_TYPE_DATA, tb.tx_seq++, tb.auto_ack ? tb.rx_expect : tb.last_acked, 0, payload, len);
}

void tb_send_ack_upto(uint8_t ack)
{
    tb.last_acked = ack;
    tb_send_frame(NF_LINK_TYPE_ACK, 0, ack, 0, NULL, 0);
}

const struct tb_msg *tb_find_reply(uint32_t tag)
{
    for (int i = 0; i < tb.nmsgs; i++)
        if ((tb.msgs[i].hdr.op & NF_OP_REPLY) && tb.msgs[i].hdr.tag == tag)
            return &tb.msgs[i];
    return NULL;
}

void tb_exchange(const void *payload, size_t len)
{
    tb_clear();
    tb_send_data(payload, len);
    tb_run();
}

uint32_t tb_send_one(uint16_t op, const void *body, size_t blen)
{
    uint8_t buf[NF_LINK_MAX_PAYLOAD];
    size_t len = 0;
    uint32_t tag = tb_put_msg(buf, &len, op, body, blen);
    tb_exchange(buf, len);
    return tag;
}

/* A request in its own frame; returns the reply status (0xFFFFFFFF: no reply). */
uint32_t tb_req(uint16_t op, const void *body, size_t blen, void *rep, size_t rep_len)
{
    const struct tb_msg *m = tb_find_reply(tb_send_one(op, body, blen));
    if (!m || m->hdr.op != (op | NF_OP_REPLY))
        return 0xFFFFFFFFu;
    if (rep && rep_len)
        memcpy(rep, m->body, rep_len);
    return m->hdr.status;
}

/* A work request in its own frame; returns 1 and the CQE if one came back. */
int tb_wr(uint16_t op, const void *body, size_t blen, struct nf_cqe *cqe)
{
    tb_send_one(op, body, blen);
    for (int i = 0; i < tb.nmsgs; i++)
        if (tb.msgs[i].hdr.op == NF_OP_CQE) {
            memcpy(cqe, tb.msgs[i].body, sizeof(*cqe));
            return 1;
        }
    return 0;
}

uint16_t tb_ip_csum(const uint8_t *b, size_t n)
{
    uint32_t s = 0;
    for (size_t i = 0; i < n; i += 2)
        s += (uint32_t)b[i] << 8 | (i + 1 < n ? b[i + 1] : 0u);
    while (s >> 16)
        s = (s & 0xFFFFu) + (s >> 16);
    return (uint16_t)~s;
}
