# SPDX-License-Identifier: Apache-2.0
# SoC (rtl/soc): nf_soc, the interconnect; a wrapper per CPU (VexRiscv from
# pythondata-cpu-vexriscv, the default, or PicoRV32 from pythondata-cpu-picorv32; the cores
# are never copied here), the firmware RAM and the SYS registers. Smoke test boots
# rtl/soc/tb/smoke.c.
SOC_DIR    := $(ROOT)/rtl/soc
# The CPU of nf_soc (its CPU parameter): vexriscv, with NF_VEXRISCV the package's
# pre-generated variant (VexRiscv: instruction and data caches, rv32im, bypassed 5-stage
# pipeline; the devices sit above 0x80000000, which it leaves uncached), or picorv32.
# Chosen by measurement: make bench-cores compares the cores' clocks per request, Fmax and
# resources (docs/performance.md "CPU choices"). The firmware is rv32i, so it runs on any
# of them and on PicoRV32 without its multiplier. A profile's firmware RAM and adapter
# memory leave the block RAMs the chosen core's register file and caches need.
NF_CPU      ?= vexriscv
NF_VEXRISCV ?= VexRiscv
cpu_rtl    = $(if $(filter vexriscv,$(1)),$(VEXRISCV_DIR)/$(NF_VEXRISCV).v,$(PICORV32_DIR)/picorv32.v)
CPU_RTL    = $(call cpu_rtl,$(NF_CPU))
# $(call cpu_stamp,DIR): DIR/cpu.txt, rewritten only when NF_CPU differs from the core a
# model in DIR was built with: a prerequisite of each model, so changing cores rebuilds it.
cpu_stamp  = $(shell mkdir -p $(1) && { echo $(NF_CPU) | cmp -s - $(1)/cpu.txt || echo $(NF_CPU) > $(1)/cpu.txt; })$(1)/cpu.txt
SOC_BUILD  := $(BUILD)/soc
ENGINE_SRC_DIR := $(ROOT)/rtl/engine
# nf_soc (the interconnect), its CPU wrappers (one per core, the same port; the CPU
# parameter picks one), the firmware RAM, the SYS registers and the system-port mux of the
# link and the network port.
SOC_OWN_RTL := $(addprefix $(SOC_DIR)/,nf_soc.v nf_cpu_vexriscv.v nf_cpu_picorv32.v nf_fw_ram.v nf_fw_ram_hit.v \
               nf_sys_regs.v nf_sys_csr.v nf_port_mux.v)
SOC_RTL    = $(SOC_OWN_RTL) $(LINK_RTL) $(wildcard $(ENGINE_SRC_DIR)/*.v) $(NET_PORT_RTL)
# The CPUs are third-party: cpu.vlt switches their lint off; ours stays -Wall clean.
soc_vsrc   = --timescale 1ns/1ps -I$(ROOT)/proto/gen -y $(SOC_DIR) -y $(LINK_DIR) -y $(ENGINE_SRC_DIR) -y $(NET_DIR) \
              $(SOC_DIR)/cpu.vlt $(call cpu_rtl,$(1)) -GCPU='"$(1)"'
SOC_VSRC   = $(call soc_vsrc,$(NF_CPU))
RV_CC      := riscv64-unknown-elf-gcc
RV_OBJCOPY := riscv64-unknown-elf-objcopy
SOC_SMOKE_DEFS := -DSMOKE_CLK_HZ=NF_SOC_CPU_CLK_SIM_HZ -DSMOKE_FW_RAM_BYTES=NF_PROFILE_SIM_FW_RAM_BYTES \
    -DSMOKE_RX_SLOTS=NF_PROFILE_SIM_RX_SLOTS -DSMOKE_TX_SLOTS=NF_PROFILE_SIM_TX_SLOTS \
    -DSMOKE_USER_BASE=NF_PROFILE_SIM_USER_BASE

.PHONY: lint-soc test-soc synth-soc print-cpu

# The core and its source, for tools/bitstream.sh run by hand.
print-cpu:
	@echo NF_CPU=$(NF_CPU) CPU_RTL=$(CPU_RTL)

# Each core: nf_soc elaborates only the chosen core's wrapper.
lint-soc:
	@$(foreach c,vexriscv picorv32,$(VERILATOR) $(VLINT) $(call soc_vsrc,$(c)) --top-module nf_soc $(SOC_DIR)/nf_soc.v && ) true

# A hex image is 32-bit little-endian words, one per line, word 0 at address 0.
$(SOC_BUILD)/smoke.elf: $(SOC_DIR)/tb/smoke.c $(SOC_DIR)/tb/smoke_start.S $(SOC_DIR)/tb/smoke.ld $(ROOT)/proto/gen/nf_layout.h
	@mkdir -p $(SOC_BUILD)
	@$(RV_CC) -march=rv32i -mabi=ilp32 -nostdlib -ffreestanding -O2 -Wall -Wextra -Werror \
	    -I$(ROOT)/proto/gen $(SOC_SMOKE_DEFS) -T $(SOC_DIR)/tb/smoke.ld -Wl,--no-relax \
	    $(SOC_DIR)/tb/smoke_start.S $(SOC_DIR)/tb/smoke.c -o $@
$(SOC_BUILD)/smoke.hex: $(SOC_BUILD)/smoke.elf
	@$(RV_OBJCOPY) -O binary $< $(SOC_BUILD)/smoke.bin
	@truncate -s %4 $(SOC_BUILD)/smoke.bin
	@od -An -v -tx4 -w4 $(SOC_BUILD)/smoke.bin | tr -d ' ' > $@

# The smoke test's Verilator model of nf_soc, in directory $(1), with Verilator options $(2),
# on core $(3).
SOC_TB_DEPS = $(SOC_RTL) $(SOC_DIR)/cpu.vlt $(SOC_DIR)/tb/soc_tb.cpp $(ROOT)/tests/tap.h $(ROOT)/rtl/include/nf_tb_clock.h
define soc_tb_model
	@mkdir -p $(1)
	@$(VERILATOR) --cc --exe --build -j 1 $(VFAST) -Wno-fatal $(call soc_vsrc,$(3)) --top-module nf_soc $(2) \
	    -GFW_HEX='"$(SOC_BUILD)/smoke.hex"' --Mdir $(1) -CFLAGS "-std=c++17 -I$(ROOT)/tests -I$(ROOT)/rtl/include" \
	    $(SOC_DIR)/nf_soc.v $(SOC_DIR)/tb/soc_tb.cpp > $(1)/build.log 2>&1 || (cat $(1)/build.log; exit 1)
endef

$(SOC_BUILD)/tb/Vnf_soc: $$(SOC_TB_DEPS) $(call cpu_stamp,$(SOC_BUILD)/tb)
	$(call soc_tb_model,$(SOC_BUILD)/tb,,$(NF_CPU))

test-soc: $(SOC_BUILD)/tb/Vnf_soc $(SOC_BUILD)/smoke.hex ## boot a smoke program on nf_soc's CPU (NF_CPU)
	@$(SOC_BUILD)/tb/Vnf_soc

# PicoRV32's firmware RAM on the boards, which only synthesis builds (nf_soc's bit slices,
# each loaded from its own image, FW_SLICE_BITS as on the ULX3S 85F; VexRiscv reads the RAM
# through its cache and takes it whole), under Verilator: the smoke program must pass on it
# and finish in the very cycle it does on the one-memory RAM, both with PicoRV32.
SOC_SLICE_BITS := $(NF_PROFILE_ULX3S_85K_FW_SLICE_BITS)
$(SOC_BUILD)/tb-picorv32/Vnf_soc: $$(SOC_TB_DEPS)
	$(call soc_tb_model,$(SOC_BUILD)/tb-picorv32,,picorv32)
$(SOC_BUILD)/tb-picorv32-sliced/Vnf_soc: $$(SOC_TB_DEPS)
	$(call soc_tb_model,$(SOC_BUILD)/tb-picorv32-sliced,+define+SYNTHESIS -GFW_SLICE_BITS=$(SOC_SLICE_BITS),picorv32)
$(SOC_BUILD)/smoke.hex.s00: $(SOC_BUILD)/smoke.hex $(ROOT)/tools/fw_slices.py
	@python3 $(ROOT)/tools/fw_slices.py $< $(SOC_SLICE_BITS)

.PHONY: test-soc-sliced
test-soc-sliced: $(SOC_BUILD)/tb-picorv32/Vnf_soc $(SOC_BUILD)/tb-picorv32-sliced/Vnf_soc $(SOC_BUILD)/smoke.hex.s00 ## PicoRV32 and the smoke program on the boards' bit-sliced firmware RAM: same result, same cycle
	@one=$$($(SOC_BUILD)/tb-picorv32/Vnf_soc | sed -n 's/.*program finished in \([0-9]*\) cycles.*/\1/p'); \
	$(SOC_BUILD)/tb-picorv32-sliced/Vnf_soc | tee $(SOC_BUILD)/tb-picorv32-sliced/run.log | sed 's/soc: /soc, PicoRV32, sliced RAM: /'; \
	sliced=$$(sed -n 's/^ok .*program finished in \([0-9]*\) cycles.*/\1/p' $(SOC_BUILD)/tb-picorv32-sliced/run.log); \
	if [ -n "$$one" ] && [ "$$one" = "$$sliced" ]; then \
	    echo "ok - soc: the sliced RAM's run ends in the one-memory RAM's cycle ($$one)"; \
	else echo "not ok - soc: the sliced RAM's run ends at cycle '$$sliced', the one-memory RAM's at '$$one'"; exit 1; fi

# Yosys synth_ecp5 of nf_soc at the ULX3S 85K profile sizes and the ulx3s-85k board's
# system clock (proto/boards.toml): LUT/FF/EBR use.
# The FW image only sets the EBR contents, but Yosys reads nf_soc's default image
# (the firmware's) when it elaborates, so the firmware is built first.
SOC_SYNTH_HEX = $(BUILD)/firmware/nf_fw.hex
SOC_SYNTH_PARAMS = -set CLK_HZ $(call NF_BOARD,ULX3S_85K,clk_hz) \
    $(foreach k,FW_RAM_BYTES MEM_BYTES MPT_ENTRIES MTT_ENTRIES RX_SLOTS TX_SLOTS,-set $(k) $(NF_PROFILE_ULX3S_85K_$(k)))
synth-soc: $(SETUP_STAMP) firmware ## Yosys synth_ecp5 of nf_soc (ULX3S 85K sizes): prints LUT/FF/EBR
	@mkdir -p $(SOC_BUILD)/synth
	@$(YOSYS) -q -l $(call rel,$(SOC_BUILD))/synth/nf_soc_85k.log -p "\
	    read_verilog -DSYNTHESIS -Iproto/gen $(call rel,$(CPU_RTL) $(SOC_OWN_RTL) \
	        $(LINK_RTL) $(wildcard $(ENGINE_SRC_DIR)/*.v)); \
	    chparam $(SOC_SYNTH_PARAMS) -set CPU \"$(NF_CPU)\" -set FW_HEX \"$(call rel,$(SOC_SYNTH_HEX))\" nf_soc; \
	    synth_ecp5 -top nf_soc -json $(call rel,$(SOC_BUILD))/synth/nf_soc_85k.json; \
	    tee -o $(call rel,$(SOC_BUILD))/synth/nf_soc_85k.stat stat"
	@grep -E 'LUT4|TRELLIS_FF|DP16KD|MULT18|Number of cells' $(SOC_BUILD)/synth/nf_soc_85k.stat

# ---- the CPU choices side by side (bench/cores.py -> build/bench/cores.json) ----
# Each core's Verilator board (the default core's is build/sim's) runs bench_sim --quick,
# and its bench-fwprof model (the default core's is build/bench/fwprof) the phase profile;
# CORES_PNR=1 also places and routes each core on the ULX3S 85F and 25F at 75 MHz
# (minutes each); without it the placed figures of an earlier run are kept while their
# inputs are unchanged. CORES_CLOCKS=board places at each board's own clock instead
# (proto/boards.toml; build/bench/cores_board_clocks.json). On the 25F a VexRiscv
# variant without a data cache has its memories in distributed RAM (rtl/soc/vexriscv_lutram.ys).
CORES ?= picorv32 vexriscv
CORES_DIR = $(BUILD)/bench/cores
.PHONY: bench-cores
bench-cores: $(SETUP_STAMP) firmware $(BUILD)/bench/bench_sim ## CPU choices side by side: clocks per fast-register/invalidate, Fmax, LUT/FF/EBR (CORES_PNR=1)
	@for c in $(CORES); do \
	    if [ $$c = $(NF_CPU) ]; then sb=$(SIM_BUILD); else sb=$(CORES_DIR)/$$c/sim; fi; \
	    $(MAKE) --no-print-directory NF_CPU=$$c SIM_BUILD=$$sb $$sb/nfsim || exit 1; \
	    mkdir -p $(CORES_DIR)/$$c; \
	    NDKFPGA_SIM=$$sb/nfsim $(BUILD)/bench/bench_sim --quick > $(CORES_DIR)/$$c/sim.out 2> $(CORES_DIR)/$$c/sim.err || \
	        { cat $(CORES_DIR)/$$c/sim.out $(CORES_DIR)/$$c/sim.err; exit 1; }; \
	    if [ $$c = $(NF_CPU) ]; then fp=$(FWPROF_DIR); else fp=$(CORES_DIR)/$$c/fwprof; fi; \
	    $(MAKE) --no-print-directory NF_CPU=$$c FWPROF_DIR=$$fp $$fp/Vnf_soc || exit 1; \
	    $(call fwprof_run,$$fp,$(CORES_DIR)/$$c/fwprof.out); \
	done
	@python3 $(ROOT)/bench/cores.py --cores $$(echo $(CORES) | tr ' ' ',') $(if $(CORES_PNR),--pnr) $(if $(filter board,$(CORES_CLOCKS)),--board-clocks)
