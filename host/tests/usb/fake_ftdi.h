/* SPDX-License-Identifier: Apache-2.0 */
/* A fake FTDI bridge at the usbfs ioctl level, built on umockdev's in-process
 * ioctl handler: the real libusb (and transport_usb.c above it) open, claim,
 * send control and bulk URBs and reap them exactly as with the chip. The fake
 * answers the vendor requests and records them, takes OUT data, returns IN data
 * in packets that start with the two status bytes (status-only packets after the
 * latency time when it has nothing to send), and can be unplugged.
 *
 * Needs the umockdev preload: run the test under `umockdev-wrapper`. */
#ifndef FAKE_FTDI_H
#define FAKE_FTDI_H

#include <stddef.h>
#include <stdint.h>

struct fake_ftdi;

struct fake_ctrl {
    uint8_t type, req;
    uint16_t value, index, length;
};

/* Start a testbed with one device: pid 0x6015 (FT231X) or 0x6010 (FT2232H), or
 * any other vid:pid (not a bridge), at bus/addr. NULL when umockdev is not
 * active (not run under umockdev-wrapper). */
struct fake_ftdi *fake_ftdi_new(uint16_t vid, uint16_t pid, int bus, int addr);
/* An empty testbed: no USB device at all. */
struct fake_ftdi *fake_ftdi_new_empty(void);
void fake_ftdi_free(struct fake_ftdi *f);

/* Bytes the chip will send to the host (appended to its TX queue). */
void fake_ftdi_push(struct fake_ftdi *f, const void *buf, size_t len);
/* Copy up to cap of the bytes the host has sent so far (from offset off). */
size_t fake_ftdi_received(struct fake_ftdi *f, size_t off, void *buf, size_t cap);
/* Hold (1) or pass (0) OUT URBs: a chip whose UART stopped draining. Passing
 * again takes the held URBs, in order. */
void fake_ftdi_hold_out(struct fake_ftdi *f, int hold);
/* Pace the chip's UART at baud (0: infinitely fast, the default): an OUT URB
 * completes when the line has sent its bytes (10 bits each), bytes for the host
 * become readable as the line delivers them. */
void fake_ftdi_pace(struct fake_ftdi *f, uint32_t baud);
/* Unplug: every URB in flight fails with ENODEV, every later ioctl too. */
void fake_ftdi_unplug(struct fake_ftdi *f);

/* Make the device node unreadable (mode 0) as a udev rule-less system has it
 * for a normal user; combined with dropping CAP_DAC_OVERRIDE in the opening
 * thread this makes the open fail with EACCES even when the tests run as root.
 * 0 on success. */
int fake_ftdi_deny_access(struct fake_ftdi *f);

/* Observations. */
size_t fake_ftdi_controls(struct fake_ftdi *f, struct fake_ctrl *out, size_t cap);
int fake_ftdi_claimed(struct fake_ftdi *f);        /* claimed interface or -1 */
int fake_ftdi_detached(struct fake_ftdi *f);       /* kernel driver detached: interface or -1 */
int fake_ftdi_released(struct fake_ftdi *f);       /* interface released at close */
int fake_ftdi_reattached(struct fake_ftdi *f);     /* kernel driver given back: interface or -1 */
int fake_ftdi_max_in_flight(struct fake_ftdi *f);  /* most IN URBs pending at once */
int fake_ftdi_in_pending(struct fake_ftdi *f);     /* IN URBs pending now */
long fake_ftdi_status_only(struct fake_ftdi *f);   /* IN URBs completed with 2 bytes */
long fake_ftdi_in_packets_with_data(struct fake_ftdi *f);
long fake_ftdi_out_urbs(struct fake_ftdi *f);       /* OUT URBs submitted */

/* Relay mode: the chip's UART is wired to a stream socket (a simulated board):
 * OUT bytes are written to fd, bytes read from fd are sent IN. A thread of the
 * fake does the reading. fd stays owned by the caller. */
int fake_ftdi_relay(struct fake_ftdi *f, int fd);

#endif
