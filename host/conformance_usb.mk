# SPDX-License-Identifier: Apache-2.0
# The NDK conformance suite (tests/conformance/) over the real board transport:
# NDKFPGA_DEVICE=usb, i.e. transport_usb.c + libusb, on a fake FTDI chip
# (umockdev's in-process ioctl handler, host/tests/usb/fake_ftdi.c) whose UART is
# relayed to the software adapter nfmodel. A second build of the suite links
# host/tests/usb/conformance_usb_preload.c, whose constructor sets that up before
# main(). This file is included before host.mk and usb.mk: prerequisites name
# paths literally, their variables are only used in recipes (expanded late).

CU_BUILD := $(BUILD)/host-conformance-usb
CU_SRCS := $(sort $(filter-out %/bench_post.c,$(wildcard tests/conformance/*.c))) \
           host/tests/usb/conformance_usb_preload.c host/tests/usb/fake_ftdi.c host/tests/usb/board_proc.c
CU_DEPS := $(CU_SRCS) tests/conformance/conformance.h tests/conformance/contract.h tests/consumer.h tests/tap.h \
           host/tests/usb/fake_ftdi.h host/tests/usb/board_proc.h host/include/ndkpi.h host/include/ndkfpga.h host/conformance_usb.mk

.PHONY: test-conformance-usb
CLEAN_DIRS += $(CU_BUILD)

# Linked against the static library as a consumer would be: this also checks that
# libndkfpga.a pulls in the USB transport by itself.
CU_LINK = $(NDK_CONSUMER_CC) $(CONF_DEFS) -I$(ROOT)/host/tests/usb $(HOST_LINK_CFLAGS) $(HU_UMOCKDEV_CFLAGS) -o $@ \
          $(CU_SRCS)

$(CU_BUILD)/conformance_usb: $(CU_DEPS) $(BUILD)/host/libndkfpga.a
	@mkdir -p $(@D)
	$(CU_LINK) $(NDK_BUILD)/libndkfpga.a $(NDK_LIB_LIBS) $(HU_UMOCKDEV_LIBS)

# The same with ASan/UBSan over the library, the fake chip and the suite.
$(CU_BUILD)/conformance_usb_san: $(CU_DEPS) $(BUILD)/host/libndkfpga_san.a
	@mkdir -p $(@D)
	$(CU_LINK) -O1 $(SAN_FLAGS) $(NDK_BUILD)/libndkfpga_san.a $(NDK_LIB_LIBS) $(HU_UMOCKDEV_LIBS)

# Every NdkFpgaOpenAdapter("usb") goes libusb -> fake FTDI -> nfmodel (the suite's
# link-death case still starts a private "model:" adapter of its own). Plain,
# then sanitized; $NDKFPGA_USB_BOARD names another board binary.
test-conformance-usb: $(CU_BUILD)/conformance_usb $(CU_BUILD)/conformance_usb_san $(BUILD)/model/nfmodel ## the NDK conformance suite over libusb to a fake FTDI chip (umockdev)
	@NDKFPGA_DEVICE=usb $(HU_UMOCKDEV_RUN) $(CU_BUILD)/conformance_usb && \
	    NDKFPGA_DEVICE=usb $(HU_UMOCKDEV_RUN) $(CU_BUILD)/conformance_usb_san
