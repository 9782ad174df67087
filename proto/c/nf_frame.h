/* SPDX-License-Identifier: Apache-2.0 */
/* Link frame codec: CRC-32, byte stuffing, and an incremental decoder.
 * Shared by the host link layer, the firmware's host-build link model and the
 * simulator bridge tests, so the wire format exists once in C (the RTL
 * implements the same format from the same nf_layout.h constants). */
#ifndef NF_FRAME_H
#define NF_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "nf_layout.h"

/* Largest frame before stuffing: header + payload + CRC. */
#define NF_FRAME_MAX_RAW (NF_LINK_HDR_SIZE + NF_LINK_MAX_PAYLOAD + NF_LINK_CRC_BYTES)
/* Largest frame on the wire: two flags and every byte escaped. */
#define NF_FRAME_MAX_WIRE (2u + 2u * NF_FRAME_MAX_RAW)

uint32_t nf_crc32_update(uint32_t crc, const uint8_t *data, size_t len);
uint32_t nf_crc32(const uint8_t *data, size_t len);

/* Encode header+payload (hdr_and_payload, raw_len bytes, raw_len >= NF_LINK_HDR_SIZE)
 * into out: FLAG, stuffed bytes, stuffed CRC, FLAG. Returns bytes written, or 0 when
 * out_cap is too small or raw_len is out of range. */
size_t nf_frame_encode(const uint8_t *hdr_and_payload, size_t raw_len, uint8_t *out, size_t out_cap);

enum nf_frame_result {
    NF_FRAME_NONE = 0,   /* byte consumed, no frame finished */
    NF_FRAME_OK,         /* a whole frame with a good CRC is in dec->buf (dec->len bytes, CRC stripped) */
    NF_FRAME_BAD,        /* a frame was dropped: bad CRC, length mismatch, too long, bad escape */
};

struct nf_frame_decoder {
    uint8_t buf[NF_FRAME_MAX_RAW];
    size_t len;        /* bytes collected (after NF_FRAME_OK: header + payload) */
    int in_frame;      /* saw a flag and collected at least one byte */
    int escaped;       /* last byte was ESC */
    int overflow;      /* frame grew past NF_FRAME_MAX_RAW */
    int delivered;     /* buf holds a frame returned as NF_FRAME_OK; cleared by the next byte */
    uint32_t good, bad; /* counters */
};

void nf_frame_decoder_init(struct nf_frame_decoder *dec);
/* Feed one wire byte. A frame is checked when its closing flag arrives: CRC good and
 * header len == collected - header - CRC. Empty frames (flag flag) are ignored. */
enum nf_frame_result nf_frame_decode_byte(struct nf_frame_decoder *dec, uint8_t byte);

#endif
