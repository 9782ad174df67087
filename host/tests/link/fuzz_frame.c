/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the host frame decoder (nf_frame.c).
 *
 * Feeds arbitrary bytes to the incremental decoder and checks its promises: every
 * frame it accepts has a matching length field and CRC and fits the buffer; it
 * never reads or writes out of bounds (ASan/UBSan). Then it re-encodes each
 * accepted frame and decodes that again: the round trip must give the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nf_frame.h"

static void check(int cond)
{
    if (!cond)
        abort();
}

static void roundtrip(const uint8_t *raw, size_t len)
{
    static uint8_t wire[NF_FRAME_MAX_WIRE];
    size_t n = nf_frame_encode(raw, len, wire, sizeof(wire));
    check(n >= len + NF_LINK_CRC_BYTES + 2);
    struct nf_frame_decoder d;
    nf_frame_decoder_init(&d);
    int frames = 0;
    for (size_t i = 0; i < n; i++) {
        enum nf_frame_result r = nf_frame_decode_byte(&d, wire[i]);
        check(r != NF_FRAME_BAD);
        if (r == NF_FRAME_OK) {
            frames++;
            check(d.len == len && memcmp(d.buf, raw, len) == 0);
        }
    }
    check(frames == 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct nf_frame_decoder dec;
    static uint8_t copy[NF_FRAME_MAX_RAW];
    nf_frame_decoder_init(&dec);
    for (size_t i = 0; i < size; i++) {
        enum nf_frame_result r = nf_frame_decode_byte(&dec, data[i]);
        if (r != NF_FRAME_OK)
            continue;
        check(dec.len >= NF_LINK_HDR_SIZE && dec.len <= NF_LINK_HDR_SIZE + NF_LINK_MAX_PAYLOAD);
        size_t plen = (size_t)dec.buf[NF_LINK_HDR_LEN_OFF] | (size_t)dec.buf[NF_LINK_HDR_LEN_OFF + 1] << 8;
        check(plen == dec.len - NF_LINK_HDR_SIZE);
        size_t len = dec.len;
        memcpy(copy, dec.buf, len);
        roundtrip(copy, len);
    }
    check(dec.good + dec.bad <= size);
    /* Encoding arbitrary bytes as a frame body must always decode back. */
    if (size >= NF_LINK_HDR_SIZE && size <= NF_LINK_HDR_SIZE + NF_LINK_MAX_PAYLOAD) {
        memcpy(copy, data, size);
        copy[NF_LINK_HDR_LEN_OFF] = (uint8_t)(size - NF_LINK_HDR_SIZE);
        copy[NF_LINK_HDR_LEN_OFF + 1] = (uint8_t)((size - NF_LINK_HDR_SIZE) >> 8);
        roundtrip(copy, size);
    }
    return 0;
}
