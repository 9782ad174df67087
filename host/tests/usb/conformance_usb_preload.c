/* SPDX-License-Identifier: Apache-2.0 */
/* Linked into a second build of the NDK conformance suite so that its adapter,
 * opened as "usb", runs over the real board transport: transport_usb.c and
 * libusb talk to a fake FTDI chip (umockdev's in-process ioctl handler) whose
 * UART is relayed to the software adapter nfmodel on a private socket.
 * Everything is set up in a constructor, before the suite's main() opens the
 * adapter, and torn down in a destructor after main() returns, so the suite
 * itself is unchanged. Run under umockdev-wrapper with NDKFPGA_DEVICE=usb.
 * The board binary is $NDKFPGA_USB_BOARD if set, else NF_MODEL_DEFAULT_PATH. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "board_proc.h"
#include "fake_ftdi.h"

/* FT231X at bus 1 address 7: the single bridge "usb" picks when it is the only one. */
#define CONF_USB_VID 0x0403
#define CONF_USB_PID 0x6015
#define CONF_USB_BUS 1
#define CONF_USB_ADDR 7

static struct fake_ftdi *conf_usb_chip;
static struct board_proc conf_usb_board;
static int conf_usb_board_up;

static void conf_usb_fail(const char *why)
{
    /* A TAP failure line, so the make target reports it like any other case. */
    printf("not ok - conformance over usb: %s\n", why);
    fflush(stdout);
    exit(1);
}

__attribute__((constructor)) static void conf_usb_setup(void)
{
    signal(SIGPIPE, SIG_IGN); /* a relay write to a board that just exited */
    const char *bin = board_proc_binary("NDKFPGA_USB_BOARD", NF_MODEL_DEFAULT_PATH);
    if (!bin)
        conf_usb_fail("no executable board binary (" NF_MODEL_DEFAULT_PATH ", or $NDKFPGA_USB_BOARD)");
    conf_usb_chip = fake_ftdi_new(CONF_USB_VID, CONF_USB_PID, CONF_USB_BUS, CONF_USB_ADDR);
    if (!conf_usb_chip)
        conf_usb_fail("umockdev is not active: run under umockdev-wrapper");
    if (board_proc_start(&conf_usb_board, bin) != 0)
        conf_usb_fail("the board binary did not start and accept on its socket");
    conf_usb_board_up = 1;
    if (fake_ftdi_relay(conf_usb_chip, conf_usb_board.fd) != 0)
        conf_usb_fail("the fake FTDI relay to the board did not start");
    printf("# fake FTDI %04x:%04x at %d-%d relayed to %s\n", CONF_USB_VID, CONF_USB_PID, CONF_USB_BUS,
           CONF_USB_ADDR, bin);
}

__attribute__((destructor)) static void conf_usb_teardown(void)
{
    fake_ftdi_free(conf_usb_chip); /* stops the relay before the socket closes */
    conf_usb_chip = NULL;
    if (conf_usb_board_up)
        board_proc_stop(&conf_usb_board);
    conf_usb_board_up = 0;
}
