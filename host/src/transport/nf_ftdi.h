/* SPDX-License-Identifier: Apache-2.0 */
/* FTDI USB-UART bridge facts and pure helpers for the board transports: the
 * chips the boards carry, the baud-divisor encodings, the vendor requests, the
 * stripping of the two status bytes that start every IN packet, and the parsing
 * of "usb:BUS-ADDR". No I/O here, so all of it is unit-tested directly. */
#ifndef NF_FTDI_H
#define NF_FTDI_H

#include <stddef.h>
#include <stdint.h>

#define NF_FTDI_VID 0x0403u

/* Vendor requests (bmRequestType 0x40: vendor, host-to-device, device). */
#define NF_FTDI_REQTYPE_OUT 0x40u
#define NF_FTDI_REQ_RESET 0x00u       /* wValue: 0 reset, 1 purge RX, 2 purge TX */
#define NF_FTDI_REQ_FLOW 0x02u        /* wIndex high byte 0: no flow control */
#define NF_FTDI_REQ_BAUD 0x03u        /* wValue, wIndex: the encoded divisor */
#define NF_FTDI_REQ_LINE 0x04u        /* line format */
#define NF_FTDI_REQ_LATENCY 0x09u     /* latency timer, ms */
#define NF_FTDI_REQ_BITMODE 0x0Bu     /* wValue: mask | mode << 8; 0 = plain UART */
#define NF_FTDI_RESET_SIO 0u
#define NF_FTDI_PURGE_RX 1u
#define NF_FTDI_PURGE_TX 2u
#define NF_FTDI_LINE_8N1 0x0008u      /* 8 data bits, no parity, 1 stop bit */
#define NF_FTDI_FLOW_NONE 0x0000u
#define NF_FTDI_BITMODE_RESET 0x0000u
#define NF_FTDI_LATENCY_MS 1u         /* flush a partial IN packet after 1 ms */
#define NF_FTDI_STATUS_BYTES 2u       /* modem status, line status */
/* Line-status bits (second status byte) that mean received data was damaged. */
#define NF_FTDI_LINE_ERRORS 0x1Eu     /* overrun 0x02, parity 0x04, framing 0x08, break 0x10 */

/* Channel numbers that go into the low byte of wIndex. */
#define NF_FTDI_CHANNEL_A 1u
#define NF_FTDI_CHANNEL_B 2u

enum nf_ftdi_clock {
    NF_FTDI_CLOCK_3MHZ,   /* FT231X/FT232R: 48 MHz / 16, no high-speed bit */
    NF_FTDI_CLOCK_H,      /* FT2232H/FT232H: 12 MHz (120 MHz / 10, bit 17) or 3 MHz */
};

/* One supported chip and the channel the board wires to the FPGA's UART. */
struct nf_ftdi_chip {
    const char *name;        /* "FT231X (ULX3S)" */
    uint16_t pid;
    uint8_t interface;       /* USB interface number to claim */
    uint8_t channel;         /* wIndex low byte of every vendor request */
    uint8_t ep_out;          /* bulk OUT endpoint */
    uint8_t ep_in;           /* bulk IN endpoint */
    uint16_t max_packet;     /* IN packet size: each one starts with the status bytes */
    uint32_t max_baud;
    enum nf_ftdi_clock clock;
};

/* The chips, in probe order. */
extern const struct nf_ftdi_chip nf_ftdi_chips[];
extern const size_t nf_ftdi_chip_count;

/* The chip with this vendor/product id, or NULL. */
const struct nf_ftdi_chip *nf_ftdi_chip_find(uint16_t vid, uint16_t pid);

/* A baud divisor as the chip wants it in wValue/wIndex of request 0x03. */
struct nf_ftdi_baud {
    uint32_t encoded;   /* 18-bit encoding: integer part, 3-bit fraction code at 14, bit 17 */
    uint16_t value;     /* wValue */
    uint16_t index;     /* wIndex (includes the channel on H chips) */
    uint32_t actual;    /* baud the chip will really run at */
};

/* Encode baud for chip; 0 on success, -1 when the chip cannot come within 3% of it
 * (out is unchanged then). */
int nf_ftdi_baud_encode(const struct nf_ftdi_chip *chip, uint32_t baud, struct nf_ftdi_baud *out);

/* The 3-bit base encoding (no high-speed bit) for base clock base_hz / (div8 / 8);
 * exposed for the tests. div8 is the divisor in eighths, >= 8. */
uint32_t nf_ftdi_encode_div8(uint32_t div8);

/* Copy the payload of an IN transfer of len bytes to out, dropping the two status
 * bytes at the start of every max_packet chunk. Returns the payload length (0 for
 * a status-only read). *line_errors (if not NULL) gets the OR of the line-status
 * error bits seen. out may alias in (the copy only moves bytes downwards). */
size_t nf_ftdi_strip(const uint8_t *in, size_t len, size_t max_packet, uint8_t *out, uint8_t *line_errors);

/* Parse the argument of "usb:BUS-ADDR": decimal bus and address, leading zeros
 * allowed ("1-7", "001-007"). 0 on success, -1 on anything else. */
int nf_ftdi_parse_busaddr(const char *arg, int *bus, int *addr);

#endif
