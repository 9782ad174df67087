/* SPDX-License-Identifier: Apache-2.0 */
#include "nf_frame.h"

#include <string.h>

uint32_t nf_crc32_update(uint32_t crc, const uint8_t *data, size_t len)
{
    /* Bitwise on purpose: eight steps per byte are what the RTL does in one clock. */
    for (size_t i = 0; i < len; i++) {
        crc ^= data[i];
        for (int b = 0; b < 8; b++)
            crc = (crc >> 1) ^ (NF_LINK_CRC_POLY & (0u - (crc & 1u)));
    }
    return crc;
}

uint32_t nf_crc32(const uint8_t *data, size_t len)
{
    return nf_crc32_update(NF_LINK_CRC_INIT, data, len) ^ NF_LINK_CRC_XOROUT;
}

static size_t put_stuffed(uint8_t *out, size_t pos, uint8_t byte)
{
    if (byte == NF_LINK_FLAG || byte == NF_LINK_ESC) {
        out[pos++] = NF_LINK_ESC;
        out[pos++] = (uint8_t)(byte ^ NF_LINK_ESC_XOR);
    } else {
        out[pos++] = byte;
    }
    return pos;
}

size_t nf_frame_encode(const uint8_t *raw, size_t raw_len, uint8_t *out, size_t out_cap)
{
    if (raw_len < NF_LINK_HDR_SIZE || raw_len > NF_LINK_HDR_SIZE + NF_LINK_MAX_PAYLOAD)
        return 0;
    /* Worst case needs every byte escaped; check before writing anything. */
    if (out_cap < 2u + 2u * (raw_len + NF_LINK_CRC_BYTES))
        return 0;
    uint32_t crc = nf_crc32(raw, raw_len);
    size_t pos = 0;
    out[pos++] = NF_LINK_FLAG;
    for (size_t i = 0; i < raw_len; i++)
        pos = put_stuffed(out, pos, raw[i]);
    for (int i = 0; i < 4; i++)
        pos = put_stuffed(out, pos, (uint8_t)(crc >> (8 * i)));
    out[pos++] = NF_LINK_FLAG;
    return pos;
}

void nf_frame_decoder_init(struct nf_frame_decoder *dec)
{
    memset(dec, 0, sizeof(*dec));
}

static enum nf_frame_result finish(struct nf_frame_decoder *dec)
{
    size_t n = dec->len;
    int bad = dec->overflow || dec->escaped;
    dec->in_frame = 0;
    dec->escaped = 0;
    dec->overflow = 0;
    if (n == 0 && !bad)
        return NF_FRAME_NONE; /* back-to-back flags */
    if (!bad && n >= NF_LINK_HDR_SIZE + NF_LINK_CRC_BYTES) {
        size_t raw = n - NF_LINK_CRC_BYTES;
        uint32_t got = (uint32_t)dec->buf[raw] | (uint32_t)dec->buf[raw + 1] << 8 |
                       (uint32_t)dec->buf[raw + 2] << 16 | (uint32_t)dec->buf[raw + 3] << 24;
        size_t plen = (size_t)dec->buf[NF_LINK_HDR_LEN_OFF] | (size_t)dec->buf[NF_LINK_HDR_LEN_OFF + 1] << 8;
        if (got == nf_crc32(dec->buf, raw) && plen == raw - NF_LINK_HDR_SIZE) {
            dec->len = raw;
            dec->good++;
            return NF_FRAME_OK;
        }
    }
    dec->len = 0;
    dec->bad++;
    return NF_FRAME_BAD;
}

enum nf_frame_result nf_frame_decode_byte(struct nf_frame_decoder *dec, uint8_t byte)
{
    if (dec->delivered) {
        /* The caller has read the last frame out of buf by now. */
        dec->delivered = 0;
        dec->len = 0;
    }
    if (byte == NF_LINK_FLAG) {
        enum nf_frame_result r = dec->in_frame ? finish(dec) : NF_FRAME_NONE;
        if (r == NF_FRAME_OK)
            dec->delivered = 1;
        else
            dec->len = 0;
        dec->in_frame = 1; /* a closing flag also opens the next frame */
        return r;
    }
    if (!dec->in_frame)
        return NF_FRAME_NONE; /* noise before the first flag */
    if (byte == NF_LINK_ESC && !dec->escaped) {
        dec->escaped = 1;
        return NF_FRAME_NONE;
    }
    if (dec->escaped) {
        byte ^= NF_LINK_ESC_XOR;
        dec->escaped = 0;
    }
    if (dec->len >= sizeof(dec->buf))
        dec->overflow = 1;
    else
        dec->buf[dec->len++] = byte;
    return NF_FRAME_NONE;
}
