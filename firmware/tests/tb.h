/* SPDX-License-Identifier: Apache-2.0 */
/* Test bench for the firmware's host build: plays the host side of the link against
 * the firmware running on the hardware models (frames in, frames out). */
#ifndef FW_TB_H
#define FW_TB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw.h"
#include "hw_model.h"
#include "nf_frame.h"

#define TB_MAX_FRAMES 256
#define TB_MAX_MSGS 512

struct tb_frame {
    struct nf_link_hdr hdr;
    uint8_t payload[NF_LINK_MAX_PAYLOAD];
};

struct tb_msg {
    struct nf_msg_hdr hdr;
    uint8_t body[NF_LINK_MAX_PAYLOAD];
    uint8_t frame_seq;
};

struct tb_state {
    uint8_t tx_seq;       /* host -> board */
    uint8_t rx_expect;    /* board -> host */
    uint32_t next_tag;
    int auto_ack;         /* ack every DATA frame at once */
    struct nf_frame_decoder dec;
    struct tb_frame frames[TB_MAX_FRAMES]; /* every frame received since tb_clear */
    int nframes;
    struct tb_msg msgs[TB_MAX_MSGS];       /* messages of in-order DATA frames */
    int nmsgs;
    int data_frames;                        /* in-order DATA frames received */
    uint8_t last_acked;
};
extern struct tb_state tb;

void tb_clear(void);
int tb_init(const char *profile);
void tb_send_raw(const uint8_t *raw, size_t len);
void tb_send_frame(uint8_t type, uint8_t seq, uint8_t ack, uint16_t rsvd, const void *payload, size_t len);
void tb_send_ack(void);
/* Decode what the board sent; deliver DATA frames in order like the host would. */
void tb_collect(void);
/* Run the firmware until it has nothing more to do. */
void tb_run(void);
/* Append one message to buf at *len. Returns the tag. */
uint32_t tb_put_msg(uint8_t *buf, size_t *len, uint16_t op, const void *body, size_t blen);
/* One DATA frame from the host carrying payload. */
void tb_send_data(const void *payload, size_t len);
void tb_send_ack_upto(uint8_t ack);
const struct tb_msg *tb_find_reply(uint32_t tag);
/* Send payload as one DATA frame (after tb_clear) and run the firmware. */
void tb_exchange(const void *payload, size_t len);
/* One message in its own frame, exchanged; returns its tag. */
uint32_t tb_send_one(uint16_t op, const void *body, size_t blen);
/* A request in its own frame; returns the reply status (0xFFFFFFFF: no reply). */
uint32_t tb_req(uint16_t op, const void *body, size_t blen, void *rep, size_t rep_len);
/* A work request in its own frame; returns 1 and the CQE if one came back. */
int tb_wr(uint16_t op, const void *body, size_t blen, struct nf_cqe *cqe);

/* Test-case reporting (tap.h) with the --prefix given to tb_args: every case of a
 * test program goes through tb_ok, so one count covers them all. */
void tb_args(int argc, char **argv);
int tb_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The RFC 1071 checksum of n bytes (an odd last byte padded with zero), for the IPv4
 * and ICMP frames the network tests build. */
uint16_t tb_ip_csum(const uint8_t *b, size_t n);
/* Free the models; the exit status for main. */
int tb_done(void);

#endif
