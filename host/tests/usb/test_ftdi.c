/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the FTDI helpers: divisor encodings against the values FTDI
 * documents (AN232B-05, FT2232H datasheet) and a few computed ones, status-byte
 * stripping across packet boundaries, the chip table, "usb:BUS-ADDR" parsing. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../../tests/tap.h"
#include "transport/nf_ftdi.h"

static const struct nf_ftdi_chip *ft231x(void)
{
    return nf_ftdi_chip_find(NF_FTDI_VID, 0x6015);
}
static const struct nf_ftdi_chip *ft2232h(void)
{
    return nf_ftdi_chip_find(NF_FTDI_VID, 0x6010);
}

static void check_baud(const struct nf_ftdi_chip *chip, uint32_t baud, uint16_t value, uint16_t index)
{
    struct nf_ftdi_baud b;
    memset(&b, 0xEE, sizeof(b));
    int r = nf_ftdi_baud_encode(chip, baud, &b);
    tap_ok(r == 0 && b.value == value && b.index == index, "baud %s %u -> value 0x%04X index 0x%04X (got r=%d 0x%04X 0x%04X)",
           chip->name, (unsigned)baud, value, index, r, b.value, b.index);
}

static void check_baud_refused(const struct nf_ftdi_chip *chip, uint32_t baud)
{
    struct nf_ftdi_baud b, before;
    memset(&b, 0x5A, sizeof(b));
    before = b;
    int r = nf_ftdi_baud_encode(chip, baud, &b);
    tap_ok(r == -1 && memcmp(&b, &before, sizeof(b)) == 0, "baud %s %u refused, output untouched", chip->name,
           (unsigned)baud);
}

static void test_table(void)
{
    const struct nf_ftdi_chip *a = ft231x(), *h = ft2232h();
    tap_ok(a && a->interface == 0 && a->ep_out == 0x02 && a->ep_in == 0x81 && a->max_packet == 64 &&
               a->max_baud == 3000000,
           "chip table: FT231X interface 0, OUT 0x02, IN 0x81, 64-byte packets, 3 MBd");
    tap_ok(h && h->interface == 1 && h->channel == NF_FTDI_CHANNEL_B && h->ep_out == 0x04 && h->ep_in == 0x83 &&
               h->max_packet == 512 && h->max_baud == 12000000,
           "chip table: FT2232H channel B interface 1, OUT 0x04, IN 0x83, 512-byte packets, 12 MBd");
    tap_ok(nf_ftdi_chip_find(NF_FTDI_VID, 0x6001) == NULL && nf_ftdi_chip_find(0x1234, 0x6015) == NULL,
           "chip table: other ids are not ours");
}

static void test_baud(void)
{
    const struct nf_ftdi_chip *a = ft231x(), *h = ft2232h();
    /* Datasheet / brief values. */
    check_baud(a, 3000000, 0x0000, 0x0000);
    check_baud(a, 2000000, 0x0001, 0x0000);
    check_baud(a, 1000000, 0x0003, 0x0000);
    check_baud(h, 12000000, 0x0000, 0x0202);
    /* AN232B-05's table for the 3 MHz base: 9600 = 312.5 -> 0x4138, 38400 = 78.125
     * -> 0xC04E, 115200 = 26.04 -> 26 = 0x001A, 300 = 10000 = 0x2710. */
    check_baud(a, 9600, 0x4138, 0x0000);
    check_baud(a, 38400, 0xC04E, 0x0000);
    check_baud(a, 115200, 0x001A, 0x0000);
    check_baud(a, 300, 0x2710, 0x0000);
    check_baud(a, 1500000, 0x0002, 0x0000);
    /* Computed: 921600 -> 3.255 -> 26/8 = 3.25 -> 3 | frac[2]=2 << 14 = 0x8003. */
    check_baud(a, 921600, 0x8003, 0x0000);
    /* 460800 -> 6.51 -> 52/8 = 6.5 -> 6 | frac[4]=1 << 14 = 0x4006. */
    check_baud(a, 460800, 0x4006, 0x0000);
    /* 1200 -> 2500 = 0x9C4. */
    check_baud(a, 1200, 0x09C4, 0x0000);
    /* 183 Bd needs 16393.4 > the largest divisor 16383.875 (183.1 Bd, within 3%):
     * integer part 0x3FFF, fraction 7/8 (code 7) fills bits 14..16. */
    check_baud(a, 183, 0xFFFF, 0x0001);
    /* 184 Bd -> 130435/8 = 16304 + 3/8 -> 0x3FB0 | frac[3]=4 << 14 -> bit 16 to wIndex. */
    check_baud(a, 184, 0x3FB0, 0x0001);
    /* FT2232H in 120 MHz mode: 6 MBd = 2 -> 0x0002; 3 MBd = 4; 115200 = 104.1667
     * -> 833/8 = 104 + 1/8 -> 104 | 3 << 14 = 0xC068; all with bit 17 -> index 0x02xx. */
    check_baud(h, 6000000, 0x0002, 0x0202);
    check_baud(h, 8000000, 0x0001, 0x0202);
    check_baud(h, 3000000, 0x0004, 0x0202);
    check_baud(h, 115200, 0xC068, 0x0202);
    /* Below what 12 MHz / 16383.875 reaches (732 Bd), the 3 MHz base, no bit 17. */
    check_baud(h, 300, 0x2710, 0x0002);
    /* Impossible rates. */
    check_baud_refused(a, 0);
    check_baud_refused(a, 3000001);
    check_baud_refused(a, 12000000);
    check_baud_refused(a, 2500000); /* between 3 M and 2 M: 20% off either */
    check_baud_refused(a, 100);     /* below the slowest divisor */
    check_baud_refused(h, 13000000);
    struct nf_ftdi_baud b;
    tap_ok(nf_ftdi_baud_encode(a, 2000000, &b) == 0 && b.actual == 2000000 &&
               nf_ftdi_baud_encode(a, 9600, &b) == 0 && b.actual == 9600,
           "baud: actual rate reported (2 MBd exact, 9600 exact)");
    tap_ok(nf_ftdi_encode_div8(8) == 0 && nf_ftdi_encode_div8(12) == 1 && nf_ftdi_encode_div8(16) == 2 &&
               nf_ftdi_encode_div8(17) == (2u | 3u << 14),
           "divisor encoding: 1 -> 0, 1.5 -> 1, 2 -> 2, 2.125 -> 2 | 3<<14");
}

/* Build an IN transfer: payload split in packets of max_packet with status bytes. */
static size_t build_in(uint8_t *buf, const uint8_t *payload, size_t n, size_t max_packet, uint8_t line)
{
    size_t len = 0, per = max_packet - 2;
    do {
        size_t take = n < per ? n : per;
        buf[len++] = 0x01; /* modem status: arbitrary */
        buf[len++] = line;
        memcpy(buf + len, payload, take);
        len += take;
        payload += take;
        n -= take;
    } while (n > 0);
    return len;
}

static void test_strip(void)
{
    static uint8_t payload[4096], in[8192], out[8192];
    for (size_t i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)(i * 7 + 3);
    const size_t sizes[] = {64, 512};
    for (size_t s = 0; s < 2; s++) {
        size_t mp = sizes[s];
        const size_t lens[] = {1, mp - 2, mp - 1, mp, 2 * (mp - 2), 2 * (mp - 2) + 1, 3000};
        for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
            size_t n = lens[k];
            size_t inlen = build_in(in, payload, n, mp, 0x60);
            uint8_t errs = 0xFF;
            size_t got = nf_ftdi_strip(in, inlen, mp, out, &errs);
            tap_ok(got == n && memcmp(out, payload, n) == 0 && errs == 0,
                   "strip %zu-byte packets: %zu payload bytes in %zu (got %zu)", mp, n, inlen, got);
        }
        /* In-place stripping (out == in). */
        size_t inlen = build_in(in, payload, 1000, mp, 0x60);
        size_t got = nf_ftdi_strip(in, inlen, mp, in, NULL);
        tap_ok(got == 1000 && memcmp(in, payload, 1000) == 0, "strip %zu-byte packets in place", mp);
    }
    uint8_t two[2] = {0x01, 0x60};
    tap_ok(nf_ftdi_strip(two, 2, 64, out, NULL) == 0, "strip: a 2-byte read is no data");
    tap_ok(nf_ftdi_strip(two, 0, 64, out, NULL) == 0, "strip: an empty read is no data");
    uint8_t one[1] = {0x01};
    tap_ok(nf_ftdi_strip(one, 1, 64, out, NULL) == 0, "strip: a truncated status header is no data");
    /* Three status-only packets in one transfer (the chip's latency flushes). */
    uint8_t idle[6] = {0x01, 0x60, 0x01, 0x60, 0x01, 0x60};
    tap_ok(nf_ftdi_strip(idle, 6, 2 + 0, out, NULL) == 0, "strip: packet size <= header refused (no data)");
    /* Line errors are reported. */
    size_t inlen = build_in(in, payload, 100, 64, 0x60 | 0x08);
    uint8_t errs = 0;
    size_t got = nf_ftdi_strip(in, inlen, 64, out, &errs);
    tap_ok(got == 100 && (errs & 0x08), "strip: framing error bit reported");
}

static void test_busaddr(void)
{
    int b = -1, a = -1;
    tap_ok(nf_ftdi_parse_busaddr("1-7", &b, &a) == 0 && b == 1 && a == 7, "busaddr: 1-7");
    tap_ok(nf_ftdi_parse_busaddr("001-007", &b, &a) == 0 && b == 1 && a == 7, "busaddr: 001-007");
    tap_ok(nf_ftdi_parse_busaddr("3-127", &b, &a) == 0 && b == 3 && a == 127, "busaddr: 3-127");
    const char *bad[] = {"", "1", "1-", "-7", "1-7x", "1:7", "0-7", "1-0", "256-1", "1-128", "a-b", "1--7", " 1-7"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        b = a = 42;
        tap_ok(nf_ftdi_parse_busaddr(bad[i], &b, &a) == -1 && b == 42 && a == 42, "busaddr: \"%s\" refused", bad[i]);
    }
    tap_ok(nf_ftdi_parse_busaddr(NULL, &b, &a) == -1, "busaddr: NULL refused");
}

int main(void)
{
    test_table();
    test_baud();
    test_strip();
    test_busaddr();
    return tap_done();
}
