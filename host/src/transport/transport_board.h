/* SPDX-License-Identifier: Apache-2.0 */
/* Transports to a real board (not part of the library API): the FTDI bridge
 * through libusb and libftdi1 ("usb", "usb:BUS-ADDR") or through the kernel's ftdi_sio tty
 * ("tty:PATH"). Both move raw link bytes with the semantics of nf_transport.h.
 *
 * Baud: $NDKFPGA_BAUD when set (decimal), else the board's gateware rate: the
 * bridge's maximum for usb (FT231X/ULX3S 3000000, FT2232H/ECP5-EVN 12000000),
 * 3000000 for tty. */
#ifndef NF_TRANSPORT_BOARD_H
#define NF_TRANSPORT_BOARD_H

#include <stdint.h>

#include "nf_transport.h"

/* arg: NULL (the first supported board found) or "BUS-ADDR" in decimal, leading
 * zeros allowed: "1-7" or "001-007" as lsusb prints "Bus 001 Device 007".
 * Failures (each with a message):
 *   STATUS_DEVICE_NOT_CONNECTED  no ULX3S (0403:6015) / ECP5-EVN (0403:6010), or
 *                                   nothing at BUS-ADDR, or it vanished during setup
 *   STATUS_ACCESS_DENIED         no permission: the message names the udev rule
 *   STATUS_INVALID_PARAMETER     malformed BUS-ADDR, a device there that is not a
 *                                   supported bridge, or a bad $NDKFPGA_BAUD
 *   STATUS_INVALID_DEVICE_STATE  the interface is claimed by another program
 *   STATUS_INSUFFICIENT_RESOURCES out of memory / threads
 *   STATUS_INTERNAL_ERROR        libusb or libftdi1 failed to start, or a setup request failed */
NTSTATUS nf_transport_open_usb(const char *arg, struct nf_transport **out);

/* path: a tty device, e.g. "/dev/ttyUSB0". Failures: STATUS_NO_SUCH_FILE,
 * STATUS_ACCESS_DENIED, STATUS_INVALID_PARAMETER (not a tty, bad baud),
 * STATUS_INSUFFICIENT_RESOURCES. */
NTSTATUS nf_transport_open_tty(const char *path, struct nf_transport **out);

/* 1 when a supported board is on USB (for "auto"), else 0. Opens nothing. */
int nf_board_present(void);

/* One supported board on USB, as nf_board_list finds it. */
struct nf_board_info {
    int bus, addr;                     /* "usb:BUS-ADDR" */
    const char *chip;                  /* its bridge, e.g. "FT231X (ULX3S)" */
    int may_open;                      /* 1: this user may open its usbfs node; 0: no permission
                                        * (the udev rule tools/99-ndkfpga.rules is missing) */
    char node[48];                     /* the usbfs node, /dev/bus/usb/BBB/DDD */
};

/* The supported boards on USB, in bus order, without opening any: up to cap into out
 * (out may be NULL when cap is 0). Returns how many there are (may exceed cap); 0 when
 * there are none or USB cannot be listed. */
int nf_board_list(struct nf_board_info *out, int cap);

/* The baud to use: $NDKFPGA_BAUD, else dflt. 0 when $NDKFPGA_BAUD is malformed. */
uint32_t nf_board_baud(uint32_t dflt);

#endif
