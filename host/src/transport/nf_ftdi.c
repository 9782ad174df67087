/* SPDX-License-Identifier: Apache-2.0 */
/* FTDI facts and pure helpers (see nf_ftdi.h). Divisor encodings follow FTDI
 * application note AN232B-05 and the FT2232H datasheet. */
#include "nf_ftdi.h"

#include <string.h>

const struct nf_ftdi_chip nf_ftdi_chips[] = {
    /* ULX3S: single-interface full-speed chip, 64-byte packets, 3 MBd max. */
    {"FT231X (ULX3S)", 0x6015, 0, NF_FTDI_CHANNEL_A, 0x02, 0x81, 64, 3000000, NF_FTDI_CLOCK_3MHZ},
    /* ECP5-EVN: channel A programs the FPGA (JTAG), channel B is the UART. */
    {"FT2232H channel B (ECP5-EVN)", 0x6010, 1, NF_FTDI_CHANNEL_B, 0x04, 0x83, 512, 12000000, NF_FTDI_CLOCK_H},
};
const size_t nf_ftdi_chip_count = sizeof(nf_ftdi_chips) / sizeof(nf_ftdi_chips[0]);

const struct nf_ftdi_chip *nf_ftdi_chip_find(uint16_t vid, uint16_t pid)
{
    if (vid != NF_FTDI_VID)
        return NULL;
    for (size_t i = 0; i < nf_ftdi_chip_count; i++)
        if (nf_ftdi_chips[i].pid == pid)
            return &nf_ftdi_chips[i];
    return NULL;
}

/* The chip's 3-bit code for each eighth of the divisor's fraction (AN232B-05). */
static const uint8_t frac_code[8] = {0, 3, 2, 4, 1, 5, 6, 7};

#define DIV8_ONE 8u          /* divisor 1: encoded as 0 */
#define DIV8_ONE_HALF 12u    /* divisor 1.5: encoded as 1 */
#define DIV8_MAX 0x1FFFFu    /* 14-bit integer part + 3-bit fraction */
#define ENC_FRAC_SHIFT 14
#define ENC_H_CLOCK (1u << 17) /* H chips: 120 MHz / 10 base instead of 48 MHz / 16 */
#define BASE_3MHZ 3000000u
#define BASE_12MHZ 12000000u
#define TOLERANCE_PCT 3u

uint32_t nf_ftdi_encode_div8(uint32_t div8)
{
    /* Divisors below 2 exist only as 1 and 1.5, with codes of their own. */
    if (div8 == DIV8_ONE)
        return 0;
    if (div8 == DIV8_ONE_HALF)
        return 1;
    return (div8 >> 3) | ((uint32_t)frac_code[div8 & 7u] << ENC_FRAC_SHIFT);
}

/* Nearest divisor (in eighths) the chip can do for baud from base_hz. */
static uint32_t pick_div8(uint32_t base_hz, uint32_t baud)
{
    uint64_t num = (uint64_t)base_hz * 8u;
    uint64_t div8 = (num + baud / 2) / baud;
    if (div8 <= DIV8_ONE)
        return DIV8_ONE;
    if (div8 < 2 * DIV8_ONE) {
        /* Only 1, 1.5 and 2 are possible here: take the one giving the closest baud. */
        static const uint32_t cands[] = {DIV8_ONE, DIV8_ONE_HALF, 2 * DIV8_ONE};
        uint32_t best = cands[0];
        uint64_t best_err = UINT64_MAX;
        for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
            uint64_t rate = num / cands[i];
            uint64_t err = rate > baud ? rate - baud : baud - rate;
            if (err < best_err) {
                best_err = err;
                best = cands[i];
            }
        }
        return best;
    }
    return div8 > DIV8_MAX ? DIV8_MAX : (uint32_t)div8;
}

int nf_ftdi_baud_encode(const struct nf_ftdi_chip *chip, uint32_t baud, struct nf_ftdi_baud *out)
{
    if (!chip || !out || baud == 0 || baud > chip->max_baud)
        return -1;
    uint32_t base = BASE_3MHZ;
    uint32_t high = 0;
    if (chip->clock == NF_FTDI_CLOCK_H && (uint64_t)BASE_12MHZ * 8u / baud <= DIV8_MAX) {
        base = BASE_12MHZ;
        high = ENC_H_CLOCK;
    }
    uint32_t div8 = pick_div8(base, baud);
    uint32_t actual = (uint32_t)(((uint64_t)base * 8u + div8 / 2) / div8);
    uint32_t err = actual > baud ? actual - baud : baud - actual;
    if ((uint64_t)err * 100u > (uint64_t)baud * TOLERANCE_PCT)
        return -1;
    uint32_t enc = nf_ftdi_encode_div8(div8) | high;
    out->encoded = enc;
    out->value = (uint16_t)(enc & 0xFFFFu);
    if (chip->clock == NF_FTDI_CLOCK_H) {
        /* Multi-channel chips: bits 16.. go to wIndex's high byte, channel in the low. */
        out->index = (uint16_t)(((enc >> 8) & 0xFF00u) | chip->channel);
    } else {
        out->index = (uint16_t)(enc >> 16);
    }
    out->actual = actual;
    return 0;
}

size_t nf_ftdi_strip(const uint8_t *in, size_t len, size_t max_packet, uint8_t *out, uint8_t *line_errors)
{
    size_t n = 0;
    uint8_t errors = 0;
    if (max_packet <= NF_FTDI_STATUS_BYTES)
        return 0;
    for (size_t off = 0; off < len; off += max_packet) {
        size_t chunk = len - off < max_packet ? len - off : max_packet;
        if (chunk < NF_FTDI_STATUS_BYTES)
            break; /* a truncated header carries no data */
        errors |= (uint8_t)(in[off + 1] & NF_FTDI_LINE_ERRORS);
        size_t payload = chunk - NF_FTDI_STATUS_BYTES;
        memmove(out + n, in + off + NF_FTDI_STATUS_BYTES, payload);
        n += payload;
    }
    if (line_errors)
        *line_errors = errors;
    return n;
}

/* Decimal 1..max with optional leading zeros; advances *p. */
static int parse_num(const char **p, int max, int *v)
{
    const char *s = *p;
    long n = 0;
    int digits = 0;
    while (*s >= '0' && *s <= '9') {
        n = n * 10 + (*s - '0');
        if (n > max)
            return -1;
        s++;
        digits++;
    }
    if (digits == 0 || n < 1)
        return -1;
    *v = (int)n;
    *p = s;
    return 0;
}

int nf_ftdi_parse_busaddr(const char *arg, int *bus, int *addr)
{
    int b, a;
    if (!arg || !bus || !addr)
        return -1;
    const char *p = arg;
    if (parse_num(&p, 255, &b) < 0 || *p++ != '-')
        return -1;
    if (parse_num(&p, 127, &a) < 0 || *p != '\0')
        return -1;
    *bus = b;
    *addr = a;
    return 0;
}
