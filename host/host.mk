# SPDX-License-Identifier: Apache-2.0
# NDKPI provider library: build/host/libndkfpga.{a,so} from the NDK
# objects (host/src/ndk/) over the link, the transports and the base
# ($(HOST_LINK_SRCS), host/link.mk; board transports $(HOST_USB_SRCS), host/usb.mk),
# its unit tests, the conformance suite (tests/conformance/) and `make install`.
# Objects keep their directory (build/host/obj/ndk/ndk_qp.o), which is the layer
# tools/check_calls.py checks them by.
#
# Lists that name host/link.mk's and host/usb.mk's variables are recursive and used as
# $$(...) in prerequisites, so the fragments may be read in any order (test-make-order).

NDK_BUILD := $(BUILD)/host
NDK_SRCS := $(addprefix host/src/ndk/,ndk_adapter.c ndk_object.c ndk_event.c ndk_request.c ndk_mdl.c ndk_hostmem.c \
            ndk_diag.c ndk_cq.c ndk_pd.c ndk_qp.c ndk_wq.c ndk_conn.c ndk_listen.c ndk_wire.c ndk_conn_state.c ndk_cm.c ndk_net.c)
NDK_HDRS := host/include/ndkpi.h host/include/ndkfpga.h host/src/ndk/ndk_internal.h proto/gen/nf_layout.h \
            host/src/ndk/nf_ndkpi_check.h host/src/base/nf_time.h
# Every source of the library: host/src/*/ and the contract's frame codec (proto/c/).
NDK_LIB_SRCS = $(NDK_SRCS) $(HOST_LINK_SRCS) $(wildcard $(HOST_USB_SRCS))
NDK_LIB_HDRS = $(NDK_HDRS) $(HOST_LINK_HDRS) $(wildcard $(HOST_USB_HDRS))
NDK_LIB_CFLAGS = $(HOST_CFLAGS) -I$(ROOT)/host/include -I$(ROOT)/host/src $(HOST_LINK_CFLAGS) \
                 $(if $(wildcard $(HOST_USB_SRCS)),$(HOST_USB_CFLAGS) -DNF_WITH_BOARD_TRANSPORTS) -pthread -fvisibility=hidden
NDK_LIB_LIBS = -pthread $(if $(wildcard $(HOST_USB_SRCS)),$(HOST_USB_LIBS))
# $(call ndk_objs,DIR): the library's objects in DIR (the codec's in DIR/proto).
ndk_objs = $(patsubst host/src/%.c,$(1)/%.o,$(patsubst proto/c/%.c,$(1)/proto/%.o,$(NDK_LIB_SRCS)))
NDK_OBJS = $(call ndk_objs,$(NDK_BUILD)/obj)
NDK_SAN_OBJS = $(call ndk_objs,$(NDK_BUILD)/obj-san)
# Consumers (tests, examples) of the in-tree library.
NDK_CONSUMER_CC = $(HOST_CC) $(HOST_CFLAGS) -I$(ROOT)/host/include -I$(ROOT)/tests -pthread

.PHONY: host-lib test-host-ndk test-host-clock test-host-log test-host-udp test-conformance-model test-conformance-faults test-conformance-sim test-conformance-udp test-install \
        lint-host-ndk install uninstall
LINT_TARGETS += lint-host-ndk

host-lib: $(NDK_BUILD)/libndkfpga.a $(NDK_BUILD)/libndkfpga.so ## build the host library build/host/libndkfpga.{a,so}

$(NDK_BUILD)/obj/proto/%.o: proto/c/%.c host/host.mk
	@mkdir -p $(@D)
	$(HOST_CC) $(NDK_LIB_CFLAGS) -fPIC $(DEPFLAGS) -c -o $@ $<

$(NDK_BUILD)/obj/%.o: host/src/%.c host/host.mk
	@mkdir -p $(@D)
	$(HOST_CC) $(NDK_LIB_CFLAGS) -fPIC $(DEPFLAGS) -c -o $@ $<

$(NDK_BUILD)/obj-san/proto/%.o: proto/c/%.c host/host.mk
	@mkdir -p $(@D)
	$(HOST_CC) $(NDK_LIB_CFLAGS) -O1 $(SAN_FLAGS) $(DEPFLAGS) -c -o $@ $<

$(NDK_BUILD)/obj-san/%.o: host/src/%.c host/host.mk
	@mkdir -p $(@D)
	$(HOST_CC) $(NDK_LIB_CFLAGS) -O1 $(SAN_FLAGS) $(DEPFLAGS) -c -o $@ $<

# Each object's headers, as the compiler found them (-MMD -MP).
-include $(wildcard $(NDK_BUILD)/obj/*/*.d $(NDK_BUILD)/obj-san/*/*.d)

$(NDK_BUILD)/libndkfpga.a: $$(NDK_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(NDK_BUILD)/libndkfpga.so: $$(NDK_OBJS)
	$(HOST_CC) -shared -Wl,-soname,libndkfpga.so.$(NDKFPGA_SOVERSION) -Wl,--no-undefined -o $(NDK_BUILD)/$(NDK_SO) $^ \
	    $(NDK_LIB_LIBS)
	ln -sfn $(NDK_SO) $(NDK_BUILD)/libndkfpga.so.$(NDKFPGA_SOVERSION)
	ln -sfn $(NDK_SO) $@

$(NDK_BUILD)/libndkfpga_san.a: $$(NDK_SAN_OBJS)
	@rm -f $@
	ar rcs $@ $^

# ---- unit tests: header layout and local checks (no adapter) ----
$(NDK_BUILD)/test_ndk: host/tests/ndk/test_ndk.c $(NDK_BUILD)/libndkfpga.a tests/tap.h $$(NDK_LIB_HDRS)
	$(NDK_CONSUMER_CC) -I$(ROOT)/host/src -I$(ROOT)/proto/gen -o $@ $< $(NDK_BUILD)/libndkfpga.a $(NDK_LIB_LIBS)

$(NDK_BUILD)/test_ndk_san: host/tests/ndk/test_ndk.c $(NDK_BUILD)/libndkfpga_san.a tests/tap.h $$(NDK_LIB_HDRS)
	$(NDK_CONSUMER_CC) -O1 $(SAN_FLAGS) -I$(ROOT)/host/src -I$(ROOT)/proto/gen -o $@ $< \
	    $(NDK_BUILD)/libndkfpga_san.a $(NDK_LIB_LIBS)

test-host-ndk: $(NDK_BUILD)/test_ndk $(NDK_BUILD)/test_ndk_san $(BUILD)/model/nfmodel ## the host library's header layout and local checks, no adapter (plain and sanitized)
	@$(NDK_BUILD)/test_ndk && $(NDK_BUILD)/test_ndk_san

# ---- monotonic deadlines: no wall clock in host/src; deadlines fire with the wall clock off ----
$(NDK_BUILD)/test_clock: host/tests/clock/test_clock.c $(NDK_BUILD)/libndkfpga.a tests/tap.h tests/consumer.h host/include/ndkpi.h \
                         host/include/ndkfpga.h
	$(NDK_CONSUMER_CC) -o $@ $< $(NDK_BUILD)/libndkfpga.a $(NDK_LIB_LIBS)

$(NDK_BUILD)/wallclock_shim.so: host/tests/clock/wallclock_shim.c
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -shared -fPIC -o $@ $< -ldl

test-host-clock: $(NDK_BUILD)/test_clock $(NDK_BUILD)/wallclock_shim.so $(BUILD)/model/nfmodel ## every timed wait of the library runs on the monotonic clock (a wall-clock step changes nothing)
	@NDKFPGA_DEVICE=model bash host/tests/clock/test_clock.sh $(NDK_BUILD)

# ---- the library's messages: quiet by default, $NDKFPGA_DEBUG, NdkFpgaSetLogCallback ----
$(NDK_BUILD)/test_log: host/tests/log/test_log.c $(NDK_BUILD)/libndkfpga.a tests/tap.h host/include/ndkpi.h \
                       host/include/ndkfpga.h
	$(NDK_CONSUMER_CC) -o $@ $< $(NDK_BUILD)/libndkfpga.a $(NDK_LIB_LIBS)

test-host-log: $(NDK_BUILD)/test_log $(BUILD)/model/nfmodel ## the library is quiet unless asked ($NDKFPGA_DEBUG, NdkFpgaSetLogCallback)
	@$(NDK_BUILD)/test_log

# ---- the udp: transport alone: device strings, datagrams, nobody listening ----
$(NDK_BUILD)/test_udp: host/tests/udp/test_udp.c $(NDK_BUILD)/libndkfpga.a tests/tap.h $$(NDK_LIB_HDRS)
	$(NDK_CONSUMER_CC) -I$(ROOT)/host/src -I$(ROOT)/proto/gen -o $@ $< $(NDK_BUILD)/libndkfpga.a $(NDK_LIB_LIBS)

test-host-udp: $(NDK_BUILD)/test_udp ## the udp: transport: bad device strings, datagram sizes, nobody listening ends in a timeout
	@$(NDK_BUILD)/test_udp

# ---- conformance suite (tests/conformance/) against a live adapter ----
# Every .c of tests/conformance/ but bench_post.c, a program of its own.
CONF_SRCS := $(sort $(filter-out %/bench_post.c,$(wildcard tests/conformance/*.c)))
CONF_DEFS = -DNDK_MODEL_BIN='"$(BUILD)/model/nfmodel"'
CONF_HDRS := tests/conformance/conformance.h tests/conformance/contract.h tests/consumer.h tests/tap.h
$(NDK_BUILD)/conformance: $(CONF_SRCS) $(CONF_HDRS) $(NDK_BUILD)/libndkfpga.a host/include/ndkpi.h host/include/ndkfpga.h
	$(NDK_CONSUMER_CC) $(CONF_DEFS) -o $@ $(CONF_SRCS) $(NDK_BUILD)/libndkfpga.a $(NDK_LIB_LIBS)

$(NDK_BUILD)/conformance_san: $(CONF_SRCS) $(CONF_HDRS) $(NDK_BUILD)/libndkfpga_san.a host/include/ndkpi.h \
                              host/include/ndkfpga.h
	$(NDK_CONSUMER_CC) $(CONF_DEFS) -O1 $(SAN_FLAGS) -o $@ $(CONF_SRCS) $(NDK_BUILD)/libndkfpga_san.a $(NDK_LIB_LIBS)

# Against the software adapter (fast), with the sanitizers on the whole library.
test-conformance-model: $(NDK_BUILD)/conformance_san $(BUILD)/model/nfmodel ## the NDK conformance suite on the software adapter, plain and under ASan/UBSan
	@NDKFPGA_DEVICE=model $(NDK_BUILD)/conformance_san

# The same on a lossy link (bytes dropped, corrupted, duplicated both ways): the
# link layer repairs everything, the NDK results must not change.
test-conformance-faults: $(NDK_BUILD)/conformance $(BUILD)/model/nfmodel ## the NDK conformance suite over a lossy link (drops, corruption, duplicates) to the software adapter
	@NDKFPGA_DEVICE=model NDKFPGA_MODEL_ARGS="--drop 1e-5 --corrupt 1e-5 --dup 1e-5 --seed 7" \
	    $(NDK_BUILD)/conformance

# Against the Verilator board (slow: the same suite, every byte through the RTL).
test-conformance-sim: $(NDK_BUILD)/conformance sim ## the NDK conformance suite on the Verilator board
	@NDKFPGA_DEVICE=sim $(NDK_BUILD)/conformance

# The same over the udp: transport, through the board's Ethernet host-link port (nfsim --link-udp).
test-conformance-udp: $(NDK_BUILD)/conformance sim ## the NDK conformance suite on the Verilator board over udp: (nfsim --link-udp)
	@bash tests/conformance/udp_sim.sh $(SIM_BIN) $(NDK_BUILD)/conformance

# ---- install ----
# `make install PREFIX=DIR` installs a relocatable tree:
#   lib/libndkfpga.so.VERSION (+ .so.SOVERSION, .so links), lib/libndkfpga.a,
#   lib/pkgconfig/ndkfpga.pc, include/ndkfpga/{ndkpi,ndkfpga}.h, bin/ndkfpga,
#   libexec/ndkfpga/{nfsim,nfmodel}, share/ndkfpga/nf_fw.hex,
#   lib/udev/rules.d/70-ndkfpga.rules, and share/ndkfpga/install-manifest.
# The installed library is built apart (NF_RELOCATABLE): it finds nfsim, nfmodel and the
# firmware relative to its own file, and ndkfpga.pc and bin/ndkfpga name nothing
# absolute, so the tree may be moved. `make uninstall PREFIX=DIR` removes what the
# manifest lists. tests/conformance/test_install.sh tests the tree alone.
PREFIX ?= /usr/local
NDKFPGA_VERSION := 0.1.0
NDKFPGA_SOVERSION := $(firstword $(subst ., ,$(NDKFPGA_VERSION)))
NDK_SO := libndkfpga.so.$(NDKFPGA_VERSION)
NDK_INST := $(NDK_BUILD)/inst
NDK_INST_CFLAGS = $(filter-out -DNF_SIM_DEFAULT_PATH=% -DNF_MODEL_DEFAULT_PATH=% -DNF_WIRE_DEFAULT_PATH=%,$(NDK_LIB_CFLAGS)) -DNF_RELOCATABLE
NDK_INST_OBJS = $(call ndk_objs,$(NDK_INST)/obj)
NDK_FW_HEX := $(BUILD)/firmware/nf_fw.hex
NDK_SIM_BIN := $(BUILD)/sim/nfsim
NDK_MODEL_BIN := $(BUILD)/model/nfmodel
NDK_WIRE_BIN := $(BUILD)/sim/nfwire

$(NDK_INST)/obj/proto/%.o: proto/c/%.c host/host.mk
	@mkdir -p $(@D)
	$(HOST_CC) $(NDK_INST_CFLAGS) -fPIC $(DEPFLAGS) -c -o $@ $<

$(NDK_INST)/obj/%.o: host/src/%.c host/host.mk
	@mkdir -p $(@D)
	$(HOST_CC) $(NDK_INST_CFLAGS) -fPIC $(DEPFLAGS) -c -o $@ $<
-include $(wildcard $(NDK_INST)/obj/*/*.d)

$(NDK_INST)/libndkfpga.a: $$(NDK_INST_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(NDK_INST)/$(NDK_SO): $$(NDK_INST_OBJS)
	$(HOST_CC) -shared -Wl,-soname,libndkfpga.so.$(NDKFPGA_SOVERSION) -Wl,--no-undefined -o $@ $^ $(NDK_LIB_LIBS)

# The command finds the library beside it: PREFIX/bin/../lib.
$(NDK_INST)/ndkfpga: $$(CLI_SRCS) $$(CLI_HDRS) $(NDK_INST)/$(NDK_SO) host/include/ndkpi.h host/include/ndkfpga.h
	$(HOST_CC) $(HOST_CFLAGS) -I$(ROOT)/host/include -I$(ROOT)/host/cli -pthread -o $@ $(CLI_SRCS) \
	    $(NDK_INST)/$(NDK_SO) -Wl,-rpath,'$$ORIGIN/../lib' -pthread

$(NDK_INST)/ndkfpga.pc: host/ndkfpga.pc.in host/host.mk
	@mkdir -p $(@D)
	sed -e "s|@VERSION@|$(NDKFPGA_VERSION)|g" -e "s|@LIBS_PRIVATE@|$(strip $(NDK_LIB_LIBS))|g" $< > $@

NDK_INSTALL_FILES = $(NDK_INST)/libndkfpga.a $(NDK_INST)/$(NDK_SO) $(NDK_INST)/ndkfpga $(NDK_INST)/ndkfpga.pc \
                    $(NDK_SIM_BIN) $(NDK_MODEL_BIN) $(NDK_WIRE_BIN) $(NDK_FW_HEX)
install: $$(NDK_INSTALL_FILES) ## install library, headers, pkg-config file, ndkfpga command, nfsim, nfmodel, nfwire, firmware, udev rule: PREFIX=DIR
	@printf '%s\n' \
	    "file 644 $(NDK_INST)/libndkfpga.a lib/libndkfpga.a" \
	    "file 755 $(NDK_INST)/$(NDK_SO) lib/$(NDK_SO)" \
	    "link $(NDK_SO) lib/libndkfpga.so.$(NDKFPGA_SOVERSION)" \
	    "link libndkfpga.so.$(NDKFPGA_SOVERSION) lib/libndkfpga.so" \
	    "file 644 $(NDK_INST)/ndkfpga.pc lib/pkgconfig/ndkfpga.pc" \
	    "file 644 host/include/ndkpi.h include/ndkfpga/ndkpi.h" \
	    "file 644 host/include/ndkfpga.h include/ndkfpga/ndkfpga.h" \
	    "file 755 $(NDK_INST)/ndkfpga bin/ndkfpga" \
	    "file 755 $(NDK_SIM_BIN) libexec/ndkfpga/nfsim" \
	    "file 755 $(NDK_MODEL_BIN) libexec/ndkfpga/nfmodel" \
	    "file 755 $(NDK_WIRE_BIN) libexec/ndkfpga/nfwire" \
	    "file 644 $(NDK_FW_HEX) share/ndkfpga/nf_fw.hex" \
	    "file 644 tools/99-ndkfpga.rules lib/udev/rules.d/70-ndkfpga.rules" \
	    | bash tools/install_tree.sh install "$(PREFIX)"
	@echo "install: for a board as a normal user, copy $(PREFIX)/lib/udev/rules.d/70-ndkfpga.rules" \
	    "to /etc/udev/rules.d/ (see docs/boards.md) unless udev reads it there already"

uninstall: ## remove exactly what `make install PREFIX=DIR` installed
	@bash tools/install_tree.sh uninstall "$(PREFIX)"

# Install into a temporary prefix, then use the tree alone (moved elsewhere, too).
test-install: $$(NDK_INSTALL_FILES) ## make install into a temporary prefix, then the installed tree alone (moved elsewhere too)
	@bash tests/conformance/test_install.sh "$(MAKE)" "$(HOST_CC)"

# ---- lint ----
lint-host-ndk:
	@cppcheck -q --std=c11 --enable=warning,style,performance,portability --error-exitcode=1 \
	    --inline-suppr --suppress=missingIncludeSystem -D__GNUC__ -D__x86_64__ \
	    -I host/include -I host/src -I proto/gen -I proto/c -I tests \
	    $(NDK_SRCS) host/tests/ndk/*.c tests/conformance/*.c examples/*.c

CLEAN_DIRS += $(NDK_BUILD)

# ---- host instructions per posted work request (callgrind) ----
# It waits for its connection with the suite's waiters (contract.c).
$(NDK_BUILD)/bench_post: tests/conformance/bench_post.c tests/conformance/contract.c $(CONF_HDRS) $(NDK_BUILD)/libndkfpga.a
	$(NDK_CONSUMER_CC) -o $@ $(filter %.c,$^) $(NDK_BUILD)/libndkfpga.a $(NDK_LIB_LIBS)

.PHONY: bench-ndk-post
bench-ndk-post: $(NDK_BUILD)/bench_post $(BUILD)/model/nfmodel ## callgrind: host instructions per NdkFastRegister (software adapter)
	@cd $(NDK_BUILD) && NDKFPGA_DEVICE=model valgrind --tool=callgrind --callgrind-out-file=bench_post.cg \
	    --toggle-collect=qp_fast_register ./bench_post > bench_post.log 2>&1 || { cat bench_post.log; exit 1; }
	@ir=$$(callgrind_annotate $(NDK_BUILD)/bench_post.cg 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$$1); print $$1}'); \
	    n=$$(grep -o '^[0-9]* fast-registers' $(NDK_BUILD)/bench_post.log | cut -d' ' -f1); \
	    echo "host: $$ir instructions in $$n NdkFastRegister calls = $$((ir / n)) per call (callgrind, incl. link queueing)"
