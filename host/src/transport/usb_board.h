/* SPDX-License-Identifier: Apache-2.0 */
/* The boards the usb transport drives (not part of the library API): their FTDI
 * bridges, the channel that carries the FPGA's UART, and finding them on USB. The
 * bridge's requests are libftdi1's; this table only says which chip and channel. */
#ifndef NF_USB_BOARD_H
#define NF_USB_BOARD_H

#include <ftdi.h>
#include <libusb.h>
#include <stdint.h>

#include "nf_transport.h"

#define NF_USB_FTDI_VID 0x0403u

/* One supported bridge. */
struct nf_usb_chip {
    const char *name;            /* "FT231X (ULX3S)" */
    uint16_t pid;                /* product id under NF_USB_FTDI_VID */
    enum ftdi_interface channel; /* the channel wired to the FPGA's UART */
    enum ftdi_chip_type type;    /* libftdi1's name for it: picks the divisor encoding */
    uint32_t max_baud;           /* the bridge's fastest rate, the gateware's rate */
};

/* The bridge with this vendor/product id, or NULL. */
const struct nf_usb_chip *nf_usb_chip_find(uint16_t vid, uint16_t pid);

/* The first supported bridge on USB (arg NULL), or the device at arg "BUS-ADDR"
 * (decimal, leading zeros allowed) when it is one. On success *found holds a
 * reference the caller drops (libusb_unref_device). Failures, each with a message:
 * STATUS_INVALID_PARAMETER (malformed arg, or not a supported bridge there),
 * STATUS_DEVICE_NOT_CONNECTED (none found), STATUS_INTERNAL_ERROR (no device list). */
NTSTATUS nf_usb_find(libusb_context *ctx, const char *arg, libusb_device **found, const struct nf_usb_chip **chip);

#endif
