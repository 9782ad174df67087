/* SPDX-License-Identifier: Apache-2.0 */
/* The supported boards on USB (usb_board.h, transport_board.h): the bridge table,
 * "usb:BUS-ADDR", and listing the boards without opening any. */
#include "usb_board.h"

#include <stdio.h>
#include <unistd.h>

#include "transport_board.h"

static const struct nf_usb_chip chips[] = {
    /* ULX3S: single-channel full-speed bridge. */
    {"FT231X (ULX3S)", 0x6015, INTERFACE_A, TYPE_230X, 3000000},
    /* ECP5-EVN: channel A programs the FPGA (JTAG), channel B is the UART. */
    {"FT2232H channel B (ECP5-EVN)", 0x6010, INTERFACE_B, TYPE_2232H, 12000000},
};

const struct nf_usb_chip *nf_usb_chip_find(uint16_t vid, uint16_t pid)
{
    if (vid != NF_USB_FTDI_VID)
        return NULL;
    for (size_t i = 0; i < sizeof(chips) / sizeof(chips[0]); i++)
        if (chips[i].pid == pid)
            return &chips[i];
    return NULL;
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

/* "BUS-ADDR" as lsusb prints them: bus 1..255, address 1..127. 0 or -1. */
static int parse_busaddr(const char *arg, int *bus, int *addr)
{
    const char *p = arg;
    if (parse_num(&p, 255, bus) < 0 || *p++ != '-')
        return -1;
    if (parse_num(&p, 127, addr) < 0 || *p != '\0')
        return -1;
    return 0;
}

NTSTATUS nf_usb_find(libusb_context *ctx, const char *arg, libusb_device **found, const struct nf_usb_chip **chip)
{
    int want_bus = 0, want_addr = 0;
    if (arg && parse_busaddr(arg, &want_bus, &want_addr) != 0)
        return nf_set_error(STATUS_INVALID_PARAMETER,
                            "device \"usb:%s\": expected usb:BUS-ADDR in decimal as lsusb shows it, e.g. usb:1-7 or "
                            "usb:001-007",
                            arg);
    libusb_device **list = NULL;
    ssize_t n = libusb_get_device_list(ctx, &list);
    if (n < 0)
        return nf_set_error(STATUS_INTERNAL_ERROR, "listing USB devices failed: %s", libusb_error_name((int)n));
    NTSTATUS st = STATUS_DEVICE_NOT_CONNECTED;
    int seen_other = 0;
    uint16_t other_vid = 0, other_pid = 0;
    for (ssize_t i = 0; i < n; i++) {
        struct libusb_device_descriptor d;
        if (libusb_get_device_descriptor(list[i], &d) != 0)
            continue;
        if (arg && (libusb_get_bus_number(list[i]) != want_bus || libusb_get_device_address(list[i]) != want_addr))
            continue;
        const struct nf_usb_chip *c = nf_usb_chip_find(d.idVendor, d.idProduct);
        if (!c) {
            seen_other = 1;
            other_vid = d.idVendor;
            other_pid = d.idProduct;
            continue;
        }
        *found = libusb_ref_device(list[i]);
        *chip = c;
        st = STATUS_SUCCESS;
        break;
    }
    libusb_free_device_list(list, 1);
    if (st == STATUS_SUCCESS)
        return st;
    if (arg && seen_other)
        return nf_set_error(STATUS_INVALID_PARAMETER,
                            "device \"usb:%s\" is %04x:%04x, not a supported bridge (FT231X 0403:6015, FT2232H "
                            "0403:6010)",
                            arg, other_vid, other_pid);
    if (arg)
        return nf_set_error(STATUS_DEVICE_NOT_CONNECTED, "device \"usb:%s\": nothing on USB bus %d address %d",
                            arg, want_bus, want_addr);
    return nf_set_error(STATUS_DEVICE_NOT_CONNECTED,
                        "no board on USB: looked for a ULX3S (FT231X 0403:6015) and an ECP5-EVN (FT2232H 0403:6010)");
}

int nf_board_list(struct nf_board_info *out, int cap)
{
    libusb_context *ctx = NULL;
    if (libusb_init(&ctx) != 0)
        return 0;
    libusb_device **list = NULL;
    ssize_t n = libusb_get_device_list(ctx, &list);
    int found = 0;
    for (ssize_t i = 0; i < n; i++) {
        struct libusb_device_descriptor d;
        if (libusb_get_device_descriptor(list[i], &d) != 0)
            continue;
        const struct nf_usb_chip *c = nf_usb_chip_find(d.idVendor, d.idProduct);
        if (!c)
            continue;
        if (out && found < cap) {
            struct nf_board_info *b = &out[found];
            b->bus = libusb_get_bus_number(list[i]);
            b->addr = libusb_get_device_address(list[i]);
            b->chip = c->name;
            snprintf(b->node, sizeof(b->node), "/dev/bus/usb/%03d/%03d", b->bus, b->addr);
            /* What libusb_open needs: read and write access to the usbfs node. */
            b->may_open = access(b->node, R_OK | W_OK) == 0;
        }
        found++;
    }
    if (n >= 0)
        libusb_free_device_list(list, 1);
    libusb_exit(ctx);
    /* In bus order (libusb lists them in no promised order). */
    int m = found < cap ? found : cap;
    for (int i = 1; out && i < m; i++) {
        struct nf_board_info t = out[i];
        int j = i;
        for (; j > 0 && (out[j - 1].bus > t.bus || (out[j - 1].bus == t.bus && out[j - 1].addr > t.addr)); j--)
            out[j] = out[j - 1];
        out[j] = t;
    }
    return found;
}

int nf_board_present(void)
{
    return nf_board_list(NULL, 0) > 0;
}
