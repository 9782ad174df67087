# SPDX-License-Identifier: Apache-2.0
# Verilator board model (sim/): nf_soc with the SIM profile (its parameter defaults)
# and the socket bridge, built as build/sim/nfsim.
SIM_DIR     := $(ROOT)/sim
SIM_BUILD   := $(BUILD)/sim
SIM_BIN     := $(SIM_BUILD)/nfsim
SIM_FW_HEX  := $(BUILD)/firmware/nf_fw.hex
SIM_CXX_SRC := $(SIM_DIR)/nfsim.cpp $(SIM_DIR)/nf_wire.cpp $(SIM_DIR)/nf_udp_link.cpp
# The model's top: nf_soc with its input pins registered (sim/nfsim_top.v), so no logic is
# evaluated again at each evaluation for the inputs; the class keeps nf_soc's name.
SIM_TOP     := $(SIM_DIR)/nfsim_top.v
SIM_HDRS    := $(SIM_DIR)/nf_listen.h $(SIM_DIR)/nf_mii_phy.h $(SIM_DIR)/nf_uart_bits.h $(SIM_DIR)/nf_layout_cxx.h $(ROOT)/proto/gen/nf_layout.h $(SIM_DIR)/nf_wire.h $(SIM_DIR)/nf_wire_proto.h $(SIM_DIR)/nf_udp_link.h

.PHONY: sim test-sim sim-model

# The model does not embed the image (nfsim loads it at start), so it only needs the
# firmware to exist to be useful.
sim: $(SIM_BIN) firmware ## build the Verilator board model and the firmware it runs

# The model is built for speed (docs: sim/README.md): no waveform support (nfsim-trace,
# `make sim-trace`, has it), the model's evaluation split into functions of about
# SIM_SPLIT statements (one function of the whole design spills registers), compiled by
# clang when there is one. SIM_PGO=1 makes it profile-guided: compiled with counters, run
# on the product firmware for SIM_PGO_CYCLES (sim/pgo_train.sh), compiled again with the
# profile. Off by default: since the clock gates stop the CPU and the engine whenever the
# firmware sleeps, that training run (a RESET handshake, then sleep) marks their code cold,
# and the guided model runs the bench slower than the plain one (sim/README.md).
# SIM_CXX=g++ takes GCC (its own PGO).
SIM_PGO        ?= 0
SIM_PGO_CYCLES ?= 2000000
SIM_SPLIT      ?= 2000
SIM_PROFDATA   ?= $(firstword $(shell command -v llvm-profdata llvm-profdata-14 2>/dev/null))
SIM_CXX        ?= $(if $(and $(shell command -v clang++ 2>/dev/null),$(SIM_PROFDATA)),clang++,g++)
SIM_CLANG      := $(if $(findstring clang,$(SIM_CXX)),1)
# SIM_CPU_GATE=0 builds the model with the boards' CPU and engine clocks (nf_soc CPU_CLOCK_GATE), for
# the test that the two agree clock for clock.
SIM_CPU_GATE   ?= 1
# --flatten: one class whatever the CPU (Verilator keeps a module as large as VexRiscv
# apart by default), so the bridge reaches the clock gates' registers and the gated
# clocks' edge records by one set of names (nfsim.cpp).
SIM_VFLAGS      = --cc --exe -Wall $(VFAST) --flatten $(SOC_VSRC) --top-module nfsim_top --prefix Vnf_soc -GFW_HEX='"$(SIM_FW_HEX)"' \
                  -GCPU_CLOCK_GATE=$(SIM_CPU_GATE) \
                  -CFLAGS "-std=c++17 -I$(SIM_DIR) -I$(ROOT)/proto/gen -DNF_DEFAULT_FIRMWARE='\"$(SIM_FW_HEX)\"'"
SIM_MAKE        = CXX=$(SIM_CXX) LINK=$(SIM_CXX) OPT_SLOW=-O1
SIM_PROF       := $(SIM_BUILD)/obj/nfsim.profdata
SIM_OPT        := OPT_FAST=-O2
ifeq ($(SIM_CLANG),1)
SIM_PGO_GEN    := OPT_FAST="-O2 -fprofile-instr-generate" LDFLAGS=-fprofile-instr-generate
SIM_PGO_USE    := OPT_FAST="-O2 -fprofile-instr-use=$(SIM_PROF) -Wno-profile-instr-unprofiled -Wno-profile-instr-out-of-date"
SIM_PGO_MERGE   = $(SIM_PROFDATA) merge -o $(SIM_PROF) $(SIM_BUILD)/obj/*.profraw
else
SIM_PGO_GEN    := OPT_FAST="-O2 -fprofile-generate -fprofile-update=single" LDFLAGS=-fprofile-generate
SIM_PGO_USE    := OPT_FAST="-O2 -fprofile-use -fprofile-partial-training -Wno-missing-profile"
SIM_PGO_MERGE   = true
endif

$(SIM_BIN): $$(SOC_RTL) $(SIM_TOP) $$(SOC_DIR)/cpu.vlt $$(call cpu_stamp,$(SIM_BUILD)) $(SIM_CXX_SRC) $(SIM_HDRS) $(SIM_DIR)/pgo_train.sh $(SIM_DIR)/sim.mk \
            | $(SIM_FW_HEX) $(SIM_BUILD)/nfsim_client
	@rm -rf $(SIM_BUILD)/obj && mkdir -p $(SIM_BUILD)/obj
	@echo "sim: verilating nf_soc into $(SIM_BIN) (the board model, $(SIM_CXX); log in $(SIM_BUILD)/build.log)"
	@{ $(VERILATOR) $(SIM_VFLAGS) --output-split-cfuncs $(SIM_SPLIT) --Mdir $(SIM_BUILD)/obj -o $(SIM_BIN) \
	    $(SIM_TOP) $(SIM_CXX_SRC) && \
	  if [ "$(SIM_PGO)" = 1 ]; then \
	    $(MAKE) -C $(SIM_BUILD)/obj -f Vnf_soc.mk $(SIM_MAKE) $(SIM_PGO_GEN) && \
	    LLVM_PROFILE_FILE=$(SIM_BUILD)/obj/nfsim-%p.profraw \
	      bash $(SIM_DIR)/pgo_train.sh $(SIM_BIN) $(SIM_BUILD)/nfsim_client $(SIM_FW_HEX) $(SIM_BUILD)/train $(SIM_PGO_CYCLES); \
	    if $(SIM_PGO_MERGE); then use='$(SIM_PGO_USE)'; else use='$(SIM_OPT)'; echo "sim: no profile: plain build"; fi; \
	    rm -f $(SIM_BUILD)/obj/*.o $(SIM_BUILD)/obj/*.a $(SIM_BIN) && \
	    eval $(MAKE) -C $(SIM_BUILD)/obj -f Vnf_soc.mk $(SIM_MAKE) $$use; \
	  else $(MAKE) -C $(SIM_BUILD)/obj -f Vnf_soc.mk $(SIM_MAKE) $(SIM_OPT); fi; \
	} > $(SIM_BUILD)/build.log 2>&1 || (tail -50 $(SIM_BUILD)/build.log; exit 1)

# The same model with FST waveform support (--trace FILE), built plainly: a debugging tool.
SIM_TRACE_BIN := $(SIM_BUILD)/nfsim-trace
.PHONY: sim-trace
sim-trace: $(SIM_TRACE_BIN) firmware ## build build/sim/nfsim-trace: nfsim that writes FST waveforms (--trace FILE)
$(SIM_TRACE_BIN): $$(SOC_RTL) $(SIM_TOP) $$(SOC_DIR)/cpu.vlt $$(call cpu_stamp,$(SIM_BUILD)) $(SIM_CXX_SRC) $(SIM_HDRS) $(SIM_DIR)/sim.mk | $(SIM_FW_HEX)
	@mkdir -p $(SIM_BUILD)/obj-trace
	@echo "sim: verilating nf_soc into $(SIM_TRACE_BIN) (waveforms; log in $(SIM_BUILD)/build-trace.log)"
	@{ $(VERILATOR) $(SIM_VFLAGS) --trace-fst --Mdir $(SIM_BUILD)/obj-trace -o $(SIM_TRACE_BIN) \
	    $(SIM_TOP) $(SIM_CXX_SRC) && \
	  $(MAKE) -C $(SIM_BUILD)/obj-trace -f Vnf_soc.mk $(SIM_MAKE) $(SIM_OPT); \
	} > $(SIM_BUILD)/build-trace.log 2>&1 || (tail -50 $(SIM_BUILD)/build-trace.log; exit 1)

# The model at the board's PHY pins (sim/nfsim_phy_top.v, sim/nfsim_phy.h): nf_soc behind
# nf_phy_rgmii or nf_phy_rmii, the ECP5 cells from sim/models, a PHY model on the wire side
# clocked asynchronously to the system clock. NFSIM_PHY selects the harness's PHY (1 RGMII,
# 2 RMII); the default nfsim is built without it.
SIM_PHY_KINDS     := rgmii rmii
SIM_PHY_NUM_rgmii := 1
SIM_PHY_NUM_rmii  := 2
SIM_PHY_HDRS      := $(SIM_DIR)/nfsim_phy.h $(SIM_DIR)/nfsim_phy_top.v
.PHONY: sim-phy
sim-phy: $(foreach k,$(SIM_PHY_KINDS),$(SIM_BUILD)/nfsim-$(k)) firmware ## build build/sim/nfsim-rgmii and nfsim-rmii: nfsim at the PHY pins
$(SIM_BUILD)/nfsim-%: $$(SOC_RTL) $$(NET_PHY_SIM) $(SIM_PHY_HDRS) $$(SOC_DIR)/cpu.vlt $$(call cpu_stamp,$(SIM_BUILD)) $(SIM_CXX_SRC) $(SIM_HDRS) $(SIM_DIR)/sim.mk \
                      | $(SIM_FW_HEX)
	@rm -rf $(SIM_BUILD)/obj-$* && mkdir -p $(SIM_BUILD)/obj-$*
	@echo "sim: verilating nf_soc behind nf_phy_$* into $@ (log in $(SIM_BUILD)/build-$*.log)"
	@{ $(VERILATOR) $(SIM_VFLAGS) -GPHY=$(SIM_PHY_NUM_$*) -CFLAGS -DNFSIM_PHY=$(SIM_PHY_NUM_$*) --output-split-cfuncs $(SIM_SPLIT) \
	    --Mdir $(SIM_BUILD)/obj-$* -o $(abspath $@) $(SIM_DIR)/nfsim_phy_top.v $(NET_PHY_SIM) $(SIM_CXX_SRC) && \
	  $(MAKE) -C $(SIM_BUILD)/obj-$* -f Vnf_soc.mk $(SIM_MAKE) $(SIM_OPT); \
	} > $(SIM_BUILD)/build-$*.log 2>&1 || (tail -50 $(SIM_BUILD)/build-$*.log; exit 1)

# Tests: a test program that echoes frames (sim/tests/echo_fw.c) checks the bridge,
# the UART and the link hardware end to end; with the real firmware, the RESET
# handshake checks pins -> hardware -> firmware -> hardware -> pins.
$(SIM_BUILD)/echo_fw.hex: $(SIM_DIR)/tests/echo_fw.c $$(SOC_DIR)/tb/smoke_start.S $$(SOC_DIR)/tb/smoke.ld $(ROOT)/proto/gen/nf_layout.h
	@mkdir -p $(SIM_BUILD)
	@$(RV_CC) -march=rv32i -mabi=ilp32 -nostdlib -ffreestanding -O2 -Wall -Wextra -Werror \
	    -I$(ROOT)/proto/gen -T $(SOC_DIR)/tb/smoke.ld -Wl,--no-relax \
	    $(SOC_DIR)/tb/smoke_start.S $(SIM_DIR)/tests/echo_fw.c -o $(SIM_BUILD)/echo_fw.elf
	@$(RV_OBJCOPY) -O binary $(SIM_BUILD)/echo_fw.elf $(SIM_BUILD)/echo_fw.bin
	@truncate -s %4 $(SIM_BUILD)/echo_fw.bin
	@od -An -v -tx4 -w4 $(SIM_BUILD)/echo_fw.bin | tr -d ' ' > $@

$(SIM_BUILD)/nfsim_client: $(SIM_DIR)/tests/nfsim_client.c $(ROOT)/proto/c/nf_frame.c $(ROOT)/proto/c/nf_frame.h $(ROOT)/tests/tap.h
	@mkdir -p $(SIM_BUILD)
	@$(HOST_CC) $(HOST_CFLAGS) -I$(ROOT)/tests $(SIM_DIR)/tests/nfsim_client.c $(ROOT)/proto/c/nf_frame.c -o $@

SIM_TEST_DEPS := $(SIM_BIN) $(SIM_TRACE_BIN) $(SIM_BUILD)/echo_fw.hex $(SIM_BUILD)/nfsim_client $(SIM_FW_HEX)
test-sim: $(SIM_TEST_DEPS) ## nfsim: options, echo over the UART, faults, reconnect, trace, RESET handshake
	@NFSIM=$(SIM_BIN) NFSIM_TRACE=$(SIM_TRACE_BIN) CLIENT=$(SIM_BUILD)/nfsim_client ECHO_HEX=$(SIM_BUILD)/echo_fw.hex \
	    FW_HEX=$(SIM_FW_HEX) WORK=$(SIM_BUILD)/test bash $(SIM_DIR)/tests/test_sim.sh

# The model's CPU clock gate against the boards' CPU clock, clock for clock (sim/tests/
# test_cpu_gate.sh): a consumer session replayed into both builds.
SIM_UNGATED_BIN := $(SIM_BUILD)/ungated/nfsim
$(SIM_UNGATED_BIN): $$(SOC_RTL) $(SIM_TOP) $$(SOC_DIR)/cpu.vlt $$(call cpu_stamp,$(SIM_BUILD)/ungated) $(SIM_CXX_SRC) $(SIM_HDRS) $(SIM_DIR)/sim.mk | $(SIM_FW_HEX)
	@$(MAKE) --no-print-directory SIM_CPU_GATE=0 SIM_PGO=0 SIM_BUILD=$(SIM_BUILD)/ungated $@

.PHONY: test-sim-gate
test-sim-gate: $(SIM_BIN) $(SIM_UNGATED_BIN) $(BUILD)/examples/smb_direct ## nfsim: the CPU and engine clock gates agree clock for clock with the boards' clocks
	@NFSIM=$(SIM_BIN) NFSIM_UNGATED=$(SIM_UNGATED_BIN) SMB=$(BUILD)/examples/smb_direct WORK=$(SIM_BUILD)/test-gate \
	    bash $(SIM_DIR)/tests/test_cpu_gate.sh

# The same with the other core, PicoRV32 (a core that stops at once when its bus waits,
# against VexRiscv's pipeline that keeps moving for a few clocks once stalled and fetches
# through its own cache-refill bus): its two models are built here.
SIM_GATE_PICO := $(SIM_BUILD)/gate-picorv32
.PHONY: test-sim-gate-picorv32
test-sim-gate-picorv32: $(SIM_FW_HEX) $(BUILD)/examples/smb_direct ## nfsim: test-sim-gate with PicoRV32's models
	@$(MAKE) --no-print-directory NF_CPU=picorv32 SIM_BUILD=$(SIM_GATE_PICO)/gated $(SIM_GATE_PICO)/gated/nfsim
	@$(MAKE) --no-print-directory NF_CPU=picorv32 SIM_CPU_GATE=0 SIM_BUILD=$(SIM_GATE_PICO)/ungated $(SIM_GATE_PICO)/ungated/nfsim
	@NFSIM=$(SIM_GATE_PICO)/gated/nfsim NFSIM_UNGATED=$(SIM_GATE_PICO)/ungated/nfsim SMB=$(BUILD)/examples/smb_direct \
	    WORK=$(SIM_GATE_PICO)/test LABEL="PicoRV32: " bash $(SIM_DIR)/tests/test_cpu_gate.sh

# Host instructions per simulated clock (sim/ir_per_clock.sh, under valgrind): a count, so
# two builds of the model compare on a shared machine, where the wall-clock speed varies.
.PHONY: sim-ir
sim-ir: $(SIM_BIN) $(SIM_BUILD)/nfsim_client firmware ## nfsim: host instructions per simulated idle clock (valgrind)
	@bash $(SIM_DIR)/ir_per_clock.sh $(SIM_BIN) $(SIM_BUILD)/nfsim_client $(SIM_FW_HEX) $(SIM_BUILD)/ir

# The wire (sim/README.md, "The wire"): nf_wire, the endpoint an nfsim harness clocks, and
# nfwire, the segment its endpoints join; tested with GMII generators in place of the RTL.
WIRE_CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE
WIRE_SRC      := $(SIM_DIR)/nf_wire.cpp
WIRE_HDRS     := $(SIM_DIR)/nf_listen.h $(SIM_DIR)/nf_wire.h $(SIM_DIR)/nf_wire_proto.h
.PHONY: nfwire test-sim-wire
nfwire: $(SIM_BUILD)/nfwire ## build build/sim/nfwire: the simulated Ethernet segment (switch or hub, pcap, loss, TAP)
$(SIM_BUILD)/nfwire: $(SIM_DIR)/nfwire.cpp $(WIRE_SRC) $(WIRE_HDRS)
	@mkdir -p $(@D)
	@$(HOST_CXX) $(WIRE_CXXFLAGS) -I$(SIM_DIR) $(SIM_DIR)/nfwire.cpp $(WIRE_SRC) -o $@
$(SIM_BUILD)/wire_test: $(SIM_DIR)/tests/wire_test.cpp $(WIRE_SRC) $(WIRE_HDRS) $(ROOT)/tests/tap.h
	@mkdir -p $(@D)
	@$(HOST_CXX) $(WIRE_CXXFLAGS) -I$(SIM_DIR) -I$(ROOT)/tests $(SIM_DIR)/tests/wire_test.cpp $(WIRE_SRC) -o $@

# Two ports of rtl/net's MACs on one segment: the endpoint's pin contract against the RTL.
$(SIM_BUILD)/wire_mac/wire_mac: $(SIM_DIR)/tests/wire_mac_tb.v $(SIM_DIR)/tests/wire_mac.cpp $(WIRE_SRC) $(WIRE_HDRS) \
                                $(ROOT)/rtl/net/nf_eth_mac_tx.v $(ROOT)/rtl/net/nf_eth_mac_rx.v $(ROOT)/rtl/net/nf_eth_crc32.v $(ROOT)/tests/tap.h
	@mkdir -p $(@D)
	@$(VERILATOR) --cc --exe --build -j 1 -Wall -O2 -y $(ROOT)/rtl/net --top-module wire_mac_tb --Mdir $(@D) -o wire_mac \
	    -CFLAGS "-std=c++17 -O1 -I$(SIM_DIR) -I$(ROOT)/tests" $(SIM_DIR)/tests/wire_mac_tb.v $(SIM_DIR)/tests/wire_mac.cpp $(WIRE_SRC) \
	    > $(@D)/build.log 2>&1 || { cat $(@D)/build.log; exit 1; }

test-sim-wire: $(SIM_BUILD)/nfwire $(SIM_BUILD)/wire_test $(SIM_BUILD)/wire_mac/wire_mac ## nf_wire and nfwire: frames 1..1514 over GMII pins, gaps, queue, switch, pcap (scapy), loss, ports' hellos (faults, pcap), idle exit, TAP in a netns, rtl/net's MACs
	@NFWIRE=$(SIM_BUILD)/nfwire WIRE_TEST=$(SIM_BUILD)/wire_test WIRE_MAC=$(SIM_BUILD)/wire_mac/wire_mac \
	    PY=$(PY) CHECK_PCAP=$(SIM_DIR)/tests/check_wire_pcap.py CHECK_HELLO=$(SIM_DIR)/tests/check_wire_hello.py \
	    WORK=$(SIM_BUILD)/test-wire bash $(SIM_DIR)/tests/test_wire.sh

LINT_TARGETS += lint-sim
.PHONY: lint-sim
lint-sim: ## cppcheck of the simulator's C test programs and client, and of the wire (C++, its test top)
	@cppcheck -q --std=c11 --enable=warning,style,performance,portability --error-exitcode=1 --inline-suppr \
	    -I$(ROOT)/proto/gen -I$(ROOT)/proto/c -I$(ROOT)/tests \
	    $(SIM_DIR)/tests/nfsim_client.c $(SIM_DIR)/tests/echo_fw.c $(SOC_DIR)/tb/smoke.c
	@cppcheck -q --std=c++17 --language=c++ --enable=warning,style,performance,portability --error-exitcode=1 \
	    --suppress=useStlAlgorithm --suppress=unusedStructMember --inline-suppr -I$(SIM_DIR) -I$(ROOT)/tests \
	    $(WIRE_SRC) $(SIM_DIR)/nfwire.cpp $(SIM_DIR)/tests/wire_test.cpp
	@$(VERILATOR) $(VLINT) -y $(ROOT)/rtl/net --top-module wire_mac_tb $(SIM_DIR)/tests/wire_mac_tb.v
