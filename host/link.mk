# SPDX-License-Identifier: Apache-2.0
# Host link layer: transports, the reliable link, their tests.
# host/host.mk builds the library from $(HOST_LINK_SRCS) + $(HOST_USB_SRCS) with
# $(HOST_LINK_CFLAGS) + $(HOST_USB_CFLAGS).
#
# The transport dispatch (nf_transport.c) names every transport in one table, so
# every program that links it links them all: the board transports (libusb, libftdi1) too.

HOST_LINK_SRCS := proto/c/nf_frame.c host/src/base/nf_status.c host/src/base/nf_error.c host/src/base/nf_unix.c \
                  host/src/transport/nf_transport.c host/src/transport/transport_fd.c host/src/transport/transport_sim.c \
                  host/src/transport/transport_udp.c \
                  host/src/transport/nf_devopts.c host/src/transport/nf_segment.c \
                  host/src/link/nf_link.c host/src/link/nf_link_arq.c host/src/link/nf_link_send.c
HOST_LINK_HDRS := proto/c/nf_frame.h host/src/base/nf_error.h host/src/base/nf_time.h host/src/base/nf_unix.h \
                  host/src/transport/nf_transport.h host/src/transport/nf_transport_priv.h host/src/transport/transport_board.h \
                  host/src/transport/nf_devopts.h host/src/transport/nf_segment.h sim/nf_wire_proto.h \
                  host/src/link/nf_link.h host/src/link/nf_link_priv.h host/src/link/nf_lock.h proto/gen/nf_layout.h
# Board transports: the FTDI bridge over libusb, set up through libftdi1 ("usb",
# "usb:BUS-ADDR"), and over the kernel tty ("tty:PATH"), see host/usb.mk for their tests.
HOST_USB_SRCS := host/src/transport/usb_board.c host/src/transport/transport_usb.c host/src/transport/transport_tty.c
HOST_USB_HDRS := host/src/transport/usb_board.h host/src/transport/transport_board.h host/src/transport/nf_transport.h \
                 proto/gen/nf_layout.h
HOST_USB_CFLAGS := $(shell pkg-config --cflags libftdi1 libusb-1.0 2>/dev/null) -pthread
HOST_USB_LIBS := $(shell pkg-config --libs libftdi1 libusb-1.0 2>/dev/null) -pthread
# All of it, for the programs built here and in host/usb.mk.
HL_ALL_SRCS := $(HOST_LINK_SRCS) $(HOST_USB_SRCS)
HL_ALL_HDRS := $(HOST_LINK_HDRS) $(HOST_USB_HDRS)
# Where "sim" and "model" find their binaries; `make install` overrides these.
NF_SIM_DEFAULT_PATH ?= $(BUILD)/sim/nfsim
NF_MODEL_DEFAULT_PATH ?= $(BUILD)/model/nfmodel
NF_WIRE_DEFAULT_PATH ?= $(BUILD)/sim/nfwire
HOST_LINK_CFLAGS := -I$(ROOT)/host/src -I$(ROOT)/host/include -pthread \
    -DNF_SIM_DEFAULT_PATH='"$(NF_SIM_DEFAULT_PATH)"' -DNF_MODEL_DEFAULT_PATH='"$(NF_MODEL_DEFAULT_PATH)"' \
    -DNF_WIRE_DEFAULT_PATH='"$(NF_WIRE_DEFAULT_PATH)"' -I$(ROOT)/sim

HL_BUILD := $(BUILD)/host-link
HL_TEST_SRCS := host/tests/link/test_link.c host/tests/link/fake_board.c host/tests/link/link_test.c
HL_TEST_HDRS := host/tests/link/fake_board.h host/tests/link/link_test.h tests/tap.h
HL_CC := $(HOST_CC) $(HOST_CFLAGS) $(HOST_LINK_CFLAGS) $(HOST_USB_CFLAGS) -I$(ROOT)/tests -I$(ROOT)/host/tests/link
FUZZ_CC ?= clang

.PHONY: test-host-link test-fuzz-frame fuzz-frame test-link-e2e lint-host-link host-link
LINT_TARGETS += lint-host-link
CLEAN_DIRS += $(HL_BUILD)

host-link: $(HL_BUILD)/test_link $(HL_BUILD)/test_link_san $(HL_BUILD)/link_e2e

$(HL_BUILD)/test_link: $(HL_ALL_SRCS) $(HL_TEST_SRCS) $(HL_ALL_HDRS) $(HL_TEST_HDRS) host/link.mk
	@mkdir -p $(@D)
	$(HL_CC) -o $@ $(HL_ALL_SRCS) $(HL_TEST_SRCS) $(HOST_USB_LIBS)

$(HL_BUILD)/test_link_san: $(HL_ALL_SRCS) $(HL_TEST_SRCS) $(HL_ALL_HDRS) $(HL_TEST_HDRS) host/link.mk
	@mkdir -p $(@D)
	$(HL_CC) -O1 $(SAN_FLAGS) -o $@ $(HL_ALL_SRCS) $(HL_TEST_SRCS) $(HOST_USB_LIBS)

# Unit tests against an in-process fake board, plain and with ASan/UBSan.
test-host-link: $(HL_BUILD)/test_link $(HL_BUILD)/test_link_san ## the host link layer against a fake board, with fault injection
	@$(HL_BUILD)/test_link && $(HL_BUILD)/test_link_san san

# libFuzzer target for the frame decoder; test-fuzz-frame is a bounded run.
fuzz-frame: $(HL_BUILD)/fuzz_frame ## build the libFuzzer target for the host frame decoder
$(HL_BUILD)/fuzz_frame: host/tests/link/fuzz_frame.c proto/c/nf_frame.c proto/c/nf_frame.h host/link.mk
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=c11 -g -O1 -Wall -Wextra -Werror -I$(ROOT)/proto/gen -I$(ROOT)/proto/c \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ host/tests/link/fuzz_frame.c proto/c/nf_frame.c
FUZZ_FRAME_RUNS ?= 300000
test-fuzz-frame: $(HL_BUILD)/fuzz_frame ## a bounded libFuzzer run of the host's frame decoder
	@mkdir -p $(HL_BUILD)/fuzz-corpus
	@if $(HL_BUILD)/fuzz_frame -runs=$(FUZZ_FRAME_RUNS) -seed=1 -max_len=9000 $(HL_BUILD)/fuzz-corpus \
	      > $(HL_BUILD)/fuzz_frame.log 2>&1; then \
	    echo "ok - fuzz-frame: $(FUZZ_FRAME_RUNS) inputs, no crash, round trips hold"; \
	else tail -30 $(HL_BUILD)/fuzz_frame.log; echo "not ok - fuzz-frame: see $(HL_BUILD)/fuzz_frame.log"; exit 1; fi

lint-host-link:
	@cppcheck -q --std=c11 --enable=warning,style,performance,portability --error-exitcode=1 \
	    --inline-suppr --suppress=missingIncludeSystem -I proto/gen -I proto/c -I host/include -I host/src -I sim -I tests \
	    -DNF_SIM_DEFAULT_PATH='"nfsim"' -DNF_MODEL_DEFAULT_PATH='"nfmodel"' -DNF_WIRE_DEFAULT_PATH='"nfwire"' \
	    $(HOST_LINK_SRCS) host/tests/link/*.c tests/link_e2e.c

$(HL_BUILD)/link_e2e: tests/link_e2e.c host/tests/link/link_test.c $(HL_ALL_SRCS) $(HL_ALL_HDRS) \
                      host/tests/link/link_test.h tests/tap.h host/link.mk
	@mkdir -p $(@D)
	$(HL_CC) -o $@ tests/link_e2e.c host/tests/link/link_test.c $(HL_ALL_SRCS) $(HOST_USB_LIBS)

# Host <-> board models: nfmodel always, nfsim with a size that takes a few minutes.
# A model that does not build or does not work is a "not ok", never a silent skip.
test-link-e2e: $(HL_BUILD)/link_e2e ## the link end to end: host library, simulated UART, the SoC's link hardware and firmware
	@MAKE="$(MAKE)" BUILD="$(BUILD)" bash tests/link_e2e.sh

# The link's lock is taken and released in one function: clang's thread-safety
# analysis (nf_lock.h's annotations) fails a function that returns with it held.
.PHONY: test-thread-safety
test-thread-safety: ## clang -Wthread-safety: no function returns holding the link's lock
	@for f in $(filter host/src/link/%.c,$(HOST_LINK_SRCS)); do \
	    clang -std=c11 -fsyntax-only -Wall -Wextra -Werror -Wthread-safety -D_GNU_SOURCE \
	        -I$(ROOT)/proto/gen -I$(ROOT)/proto/c -I$(ROOT)/host/include -I$(ROOT)/host/src $$f || { echo "not ok - thread-safety: $$f"; exit 1; }; \
	done; echo "ok - thread-safety: the link's lock is released in the function that takes it"
