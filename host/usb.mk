# SPDX-License-Identifier: Apache-2.0
# Tests of the board transports (HOST_USB_SRCS, defined in host/link.mk): a fake
# FTDI on umockdev's ioctl handler, a pseudo-terminal; and the udev rule
# tools/99-ndkfpga.rules.

HU_BUILD := $(BUILD)/host-usb
HU_CC := $(HOST_CC) $(HOST_CFLAGS) -I$(ROOT)/host/src -I$(ROOT)/host/include -I$(ROOT)/host/tests/usb
HU_UMOCKDEV_CFLAGS = $(shell pkg-config --cflags umockdev-1.0 2>/dev/null)
HU_UMOCKDEV_LIBS = $(shell pkg-config --libs umockdev-1.0 2>/dev/null)
# The transport tests link the whole link layer, as the library does (host/link.mk).
HU_LINK_SRCS = $(HL_ALL_SRCS) host/tests/link/link_test.c
HU_LINK_DEPS = $(HL_ALL_SRCS) $(HL_ALL_HDRS) host/tests/link/link_test.c host/tests/link/link_test.h tests/tap.h host/usb.mk
HU_LINK_CC = $(HU_CC) -I$(ROOT)/tests -I$(ROOT)/host/tests/link $(HOST_LINK_CFLAGS) $(HOST_USB_CFLAGS)
HU_LINK_LIBS = $(HOST_USB_LIBS) -lm
# The umockdev preload comes before the ASan runtime in the library list; ASan
# works regardless, it only needs telling not to insist on being first.
HU_UMOCKDEV_RUN := ASAN_OPTIONS=verify_asan_link_order=0 umockdev-wrapper

.PHONY: test-host-usb test-host-tty lint-host-usb host-usb
LINT_TARGETS += lint-host-usb
CLEAN_DIRS += $(HU_BUILD)

host-usb: $(HU_BUILD)/test_usb $(HU_BUILD)/test_usb_san $(HU_BUILD)/test_tty

HU_USB_DEPS = host/tests/usb/test_usb.c host/tests/usb/fake_ftdi.c host/tests/usb/fake_ftdi.h $(HU_LINK_DEPS)
HU_USB_BUILD = $(HU_LINK_CC) $(HU_UMOCKDEV_CFLAGS) -o $@ \
               host/tests/usb/test_usb.c host/tests/usb/fake_ftdi.c $(HU_LINK_SRCS) $(HU_LINK_LIBS) $(HU_UMOCKDEV_LIBS)

$(HU_BUILD)/test_usb: $$(HU_USB_DEPS)
	@mkdir -p $(@D)
	$(HU_USB_BUILD)

$(HU_BUILD)/test_usb_san: $$(HU_USB_DEPS)
	@mkdir -p $(@D)
	$(HU_USB_BUILD) -O1 $(SAN_FLAGS)

$(HU_BUILD)/test_tty: host/tests/usb/test_tty.c host/tests/usb/board_proc.c host/tests/usb/board_proc.h \
                      host/tests/link/fake_board.c host/tests/link/fake_board.h $$(HU_LINK_DEPS)
	@mkdir -p $(@D)
	$(HU_LINK_CC) -O1 $(SAN_FLAGS) -o $@ host/tests/usb/test_tty.c host/tests/usb/board_proc.c \
	    host/tests/link/fake_board.c $(HU_LINK_SRCS) $(HU_LINK_LIBS)

# transport_usb.c + the real libusb and libftdi1 against a fake FTDI at the usbfs
# ioctl level; plain and with ASan/UBSan.
test-host-usb: $(HU_BUILD)/test_usb $(HU_BUILD)/test_usb_san ## the USB transport against a umockdev fake FTDI
	@$(HU_UMOCKDEV_RUN) $(HU_BUILD)/test_usb && $(HU_UMOCKDEV_RUN) $(HU_BUILD)/test_usb_san "san: "

# transport_tty.c against a pseudo-terminal, also carrying the link to the fake
# board and to nfmodel.
test-host-tty: $(HU_BUILD)/test_tty ## the tty transport against a pseudo-terminal
ifdef MODEL_BUILD
	@$(MAKE) -s --no-print-directory $(MODEL_BUILD)/nfmodel >/dev/null 2>&1 || echo "# nfmodel did not build"
endif
	@$(HU_BUILD)/test_tty

lint-host-usb:
	@cppcheck -q --std=c11 --enable=warning,style,performance,portability --error-exitcode=1 \
	    --inline-suppr --suppress=missingIncludeSystem -I proto/gen -I proto/c -I host/include -I host/src -I tests \
	    $(HOST_USB_SRCS) host/tests/usb/*.c

# The link stack (nf_link) over the usb transport over the fake FTDI, relayed to
# the link tests' fake board and, when built, to nfmodel.
HU_LINK_TEST_DEPS = host/tests/usb/test_usb_link.c host/tests/usb/fake_ftdi.c host/tests/usb/fake_ftdi.h \
                    host/tests/usb/board_proc.c host/tests/usb/board_proc.h \
                    host/tests/link/fake_board.c host/tests/link/fake_board.h $(HU_LINK_DEPS)
$(HU_BUILD)/test_usb_link: $$(HU_LINK_TEST_DEPS)
	@mkdir -p $(@D)
	$(HU_LINK_CC) $(HU_UMOCKDEV_CFLAGS) -O1 $(SAN_FLAGS) -o $@ \
	    host/tests/usb/test_usb_link.c host/tests/usb/fake_ftdi.c host/tests/usb/board_proc.c \
	    host/tests/link/fake_board.c $(HU_LINK_SRCS) $(HU_LINK_LIBS) $(HU_UMOCKDEV_LIBS)

.PHONY: test-host-usb-link
host-usb: $(HU_BUILD)/test_usb_link
# nfmodel is fast to build: build it when its rules exist (a failure there only
# skips that case, it is the firmware suite's to report). nfsim is used when
# `make sim` has built it, never built from here (Verilator is slow).
test-host-usb-link: $(HU_BUILD)/test_usb_link ## the link over the USB transport to a fake board
ifdef MODEL_BUILD
	@$(MAKE) -s --no-print-directory $(MODEL_BUILD)/nfmodel >/dev/null 2>&1 || echo "# nfmodel did not build"
endif
	@$(HU_UMOCKDEV_RUN) $(HU_BUILD)/test_usb_link
