# SPDX-License-Identifier: Apache-2.0
# Benchmarks: engine micro-benchmarks (own Verilator harnesses of the
# engine units), fast-register / invalidate / link figures on the Verilator board
# (nfsim) through the host library's link, an ndmrlat-style latency sweep through the
# public NDKPI (`ndkfpga mrlat`), host instructions per post (bench-ndk-post,
# host/host.mk), FPGA figures from the last bitstream build. bench/report.py gathers
# everything into build/bench/results.json, prints the table and (bench-report) writes
# docs/performance.md and its plots.
BENCH_DIR   := $(ROOT)/bench
BENCH_BUILD := $(BUILD)/bench
ENGINE_SRC  := $(ROOT)/rtl/engine
BENCH_VFLAGS := --cc --exe --build -j 2 $(VFAST) -Wno-fatal -I$(ROOT)/proto/gen -y $(ENGINE_SRC) \
                -MAKEFLAGS "OPT_FAST=-O2 OPT_SLOW=-O1"

# Engine sizes of the micro-benchmarks (small tables keep the builds and resets short);
# bench-engine records them in engine.out for the report.
BENCH_ENG_MEM  := 2097152
BENCH_ENG_USER := 65536
BENCH_ENG_MTT  := 1024
BENCH_MPT      := 64
BENCH_KC_MTT   := 256

$(BENCH_BUILD)/kc/Vnf_keycheck: $(BENCH_DIR)/bench.mk $(ENGINE_SRC)/nf_keycheck.v $(BENCH_DIR)/kc_bench.cpp $(ROOT)/proto/gen/nf_layout.vh \
                                $(ROOT)/proto/gen/nf_layout.h
	@mkdir -p $(@D)
	@$(VERILATOR) $(BENCH_VFLAGS) --Mdir $(@D) --top-module nf_keycheck -GMPT_ENTRIES=$(BENCH_MPT) -GMTT_ENTRIES=$(BENCH_KC_MTT) \
	    -CFLAGS "-O2 -I$(ROOT)/sim -I$(ROOT)/proto/gen" $(ENGINE_SRC)/nf_keycheck.v $(BENCH_DIR)/kc_bench.cpp \
	    -o Vnf_keycheck >$(@D)/build.log 2>&1 || { cat $(@D)/build.log; exit 1; }

$(BENCH_BUILD)/eng/Vnf_engine: $(BENCH_DIR)/bench.mk $(wildcard $(ENGINE_SRC)/*.v) $(BENCH_DIR)/eng_bench.cpp $(BENCH_DIR)/eng_bench.vlt \
                               $(ROOT)/proto/gen/nf_layout.vh $(ROOT)/proto/gen/nf_layout.h
	@mkdir -p $(@D)
	@$(VERILATOR) $(BENCH_VFLAGS) --Mdir $(@D) --top-module nf_engine \
	    -GMEM_BYTES=$(BENCH_ENG_MEM) -GMPT_ENTRIES=$(BENCH_MPT) -GMTT_ENTRIES=$(BENCH_ENG_MTT) -GUSER_BASE=$(BENCH_ENG_USER) \
	    -CFLAGS "-O2 -I$(ROOT)/sim -I$(ROOT)/proto/gen -DBENCH_USER_BASE=$(BENCH_ENG_USER)u -DBENCH_MEM_BYTES=$(BENCH_ENG_MEM)u" \
	    $(BENCH_DIR)/eng_bench.vlt $(ENGINE_SRC)/nf_engine.v $(BENCH_DIR)/eng_bench.cpp \
	    -o Vnf_engine >$(@D)/build.log 2>&1 || { cat $(@D)/build.log; exit 1; }

.PHONY: bench-engine
bench-engine: $(BENCH_BUILD)/kc/Vnf_keycheck $(BENCH_BUILD)/eng/Vnf_engine ## engine micro-benchmarks: key check, loader, DMA
	@$(BENCH_BUILD)/kc/Vnf_keycheck > $(BENCH_BUILD)/engine.out && \
	    $(BENCH_BUILD)/eng/Vnf_engine >> $(BENCH_BUILD)/engine.out || { cat $(BENCH_BUILD)/engine.out; exit 1; }
	@printf 'kc_mpt_entries = %s\nkc_mtt_entries = %s\neng_mem_bytes = %s\neng_mtt_entries = %s\n' \
	    $(BENCH_MPT) $(BENCH_KC_MTT) $(BENCH_ENG_MEM) $(BENCH_ENG_MTT) >> $(BENCH_BUILD)/engine.out
	@grep -E '^(not ok|ok) ' $(BENCH_BUILD)/engine.out | sed 's/^/  /'

BENCH_TARGETS += bench-engine
CLEAN_DIRS += $(BENCH_BUILD)

# ---- fast-register, invalidate and link figures on nfsim, through the host link ----
BENCH_HOST_CC = $(HOST_CC) $(HOST_CFLAGS) -I$(ROOT)/host/include -I$(ROOT)/host/src -pthread
BENCH_SIM_SRC = $(BENCH_DIR)/bench_sim.c $(BENCH_DIR)/bench_rc.c $(BENCH_DIR)/bench_link.c
$(BENCH_BUILD)/bench_sim: $(BENCH_SIM_SRC) $(BENCH_DIR)/bench_sim.h $(BUILD)/host/libndkfpga.a \
                          $(ROOT)/host/src/link/nf_link.h $(ROOT)/proto/gen/nf_layout.h $(ROOT)/host/include/ndkfpga.h
	@mkdir -p $(@D)
	@$(BENCH_HOST_CC) -o $@ $(BENCH_SIM_SRC) $(BUILD)/host/libndkfpga.a -pthread $(NDK_LIB_LIBS)

.PHONY: bench-sim
bench-sim: $(BENCH_BUILD)/bench_sim sim ## fast-register/invalidate clocks, link efficiency, sim speed (nfsim)
	@$(BENCH_BUILD)/bench_sim $(BENCH_SIM_ARGS) > $(BENCH_BUILD)/sim.out 2> $(BENCH_BUILD)/sim.err || \
	    { cat $(BENCH_BUILD)/sim.out $(BENCH_BUILD)/sim.err; exit 1; }
	@grep -E '^(not ok|ok) ' $(BENCH_BUILD)/sim.out | sed 's/^/  /'
BENCH_TARGETS += bench-sim

# ---- RC throughput on one nfsim in PHY loopback (bench/bench_rc.c: `bench_sim --rc`) ----
# Two QPs of the adapter connected over the wire to its own address; RDMA Write, Read and
# Send of 64 KiB and 1 KiB messages, the firmware's clocks per batch; every byte checked.
.PHONY: bench-rc
bench-rc: $(BENCH_BUILD)/bench_sim sim ## RC Write/Read/Send throughput: clocks per 1 KiB packet, one nfsim in PHY loopback
	@$(BENCH_BUILD)/bench_sim --rc $(BENCH_RC_ARGS) > $(BENCH_BUILD)/rc.out 2> $(BENCH_BUILD)/rc.err || \
	    { cat $(BENCH_BUILD)/rc.out $(BENCH_BUILD)/rc.err; exit 1; }
	@grep -E '^(not ok|ok) |_clocks_per_(packet|message) = ' $(BENCH_BUILD)/rc.out | sed 's/^/  /'
BENCH_TARGETS += bench-rc

# ---- the host links as their user sees them: UART against UDP (bench/bench_link.c) ----
# Fast-register 1 and 16 pages, post to CQE at the host, and a 64 KiB buffer written and
# read through the library, in the board's clocks. The UART runs at the clock-scaled baud
# (board baud x simulation clock / board clock) so each bit takes the board's clocks, and
# the UDP port takes one byte per clock: the clocks are the board's, at its clk_hz.
BENCH_LINK_BOARD := ulx3s-85k
# The UDP run's buffer I/O, bytes (0 leaves it out).
BENCH_LINK_UDP_BYTES ?= 65536
bench_link_baud = $(shell python3 -c 'import sys; sys.path.insert(0, "$(ROOT)/tools"); import contract; \
    b = [x for x in contract.load()["board"] if x["name"] == "$(BENCH_LINK_BOARD)"][0]; \
    print(round(b["baud"] * $(NF_SOC_CPU_CLK_SIM_HZ) / b["clk_hz"]))')
.PHONY: bench-link
bench-link: $(BENCH_BUILD)/bench_sim sim ## host link UART vs UDP: fast-register post to CQE, 64 KiB buffer write/read (nfsim)
	@NDKFPGA_SIM_ARGS="--baud $(bench_link_baud)" $(BENCH_BUILD)/bench_sim --host-link sim uart \
	    > $(BENCH_BUILD)/link.out 2> $(BENCH_BUILD)/link.err || { cat $(BENCH_BUILD)/link.out $(BENCH_BUILD)/link.err; exit 1; }
	@echo "link_uart_baud = $(bench_link_baud)" >> $(BENCH_BUILD)/link.out
	@$(ROOT)/tests/conformance/udp_sim.sh $(SIM_BIN) $(BENCH_BUILD)/bench_sim --host-link env udp $(BENCH_LINK_UDP_BYTES) \
	    >> $(BENCH_BUILD)/link.out 2>> $(BENCH_BUILD)/link.err || { cat $(BENCH_BUILD)/link.out $(BENCH_BUILD)/link.err; exit 1; }
	@grep -E '^(not ok|ok) |_clocks' $(BENCH_BUILD)/link.out | sed 's/^/  /'
BENCH_TARGETS += bench-link

# ---- ndmrlat-style latency sweep through the public NDKPI: `ndkfpga mrlat` (host/cli/) ----
.PHONY: bench-ndmrlat
bench-ndmrlat: $$(CLI_BIN) sim ## register/deregister, fast-register/invalidate latency per size (ndkfpga mrlat on nfsim)
	@mkdir -p $(BENCH_BUILD)
	@$(CLI_BIN) mrlat --series $(BENCH_NDMRLAT_ARGS) sim > $(BENCH_BUILD)/ndmrlat.out 2> $(BENCH_BUILD)/ndmrlat.err || \
	    { cat $(BENCH_BUILD)/ndmrlat.out $(BENCH_BUILD)/ndmrlat.err; exit 1; }
	@grep -v '^series' $(BENCH_BUILD)/ndmrlat.out | sed 's/^/  /'
BENCH_TARGETS += bench-ndmrlat

# ---- Send/Receive latency and message rate through the public NDKPI: `ndkfpga sendlat` ----
# On nfsim (the board's clocks, the simulation's wall time) and nfmodel (this host's wall
# time), buffers in adapter memory (sendlat_DEVICE.out) and host memory (sendlat_host_DEVICE.out);
# sendlat.json holds this run's figures alone (tools/doc_figures.py's sendlat-memory block).
BENCH_SENDLAT_ARGS_sim   := -c 10 -n 100
BENCH_SENDLAT_ARGS_model := -c 200 -n 5000
.PHONY: bench-sendlat
bench-sendlat: $$(CLI_BIN) sim model ## Send-to-receive latency (8 B to 4 KiB), ping-pong, messages/s; adapter and host memory
	@mkdir -p $(BENCH_BUILD)
	@for dev in sim model; do for mem in adapter host; do \
	    out=$(BENCH_BUILD)/sendlat_$$dev; opt=; \
	    if [ $$mem = host ]; then out=$(BENCH_BUILD)/sendlat_host_$$dev; opt=--host; fi; \
	    case $$dev in sim) args="$(BENCH_SENDLAT_ARGS_sim)";; *) args="$(BENCH_SENDLAT_ARGS_model)";; esac; \
	    $(CLI_BIN) sendlat --series $$opt $$args $$dev > $$out.out 2> $$out.err || \
	        { cat $$out.out $$out.err; exit 1; }; \
	    grep -v ' = ' $$out.out | sed 's/^/  /'; \
	 done; done
	@python3 $(BENCH_DIR)/report.py --sendlat
BENCH_TARGETS += bench-sendlat

# ---- where the firmware's cycles go: nf_soc + real firmware, bus-level profile ----
FWPROF_DIR := $(BENCH_BUILD)/fwprof
$(FWPROF_DIR)/nf_frame.o: $(ROOT)/proto/c/nf_frame.c $(ROOT)/proto/c/nf_frame.h
	@mkdir -p $(@D)
	@$(HOST_CC) $(HOST_CFLAGS) -c -o $@ $<

$(FWPROF_DIR)/Vnf_soc: $$(SOC_RTL) $$(call cpu_stamp,$(FWPROF_DIR)) $(BENCH_DIR)/fwprof.cpp $(BENCH_DIR)/fwprof.vlt $(FWPROF_DIR)/nf_frame.o \
                       $(ROOT)/sim/nf_uart_bits.h $(ROOT)/proto/gen/nf_layout.h
	@mkdir -p $(@D)
	@echo "  VERILATE fwprof (nf_soc, a few minutes on 2 cores)"
	@$(VERILATOR) --cc --exe --build -j 2 $(VFAST) -Wno-fatal $(SOC_VSRC) $(BENCH_DIR)/fwprof.vlt --top-module nf_soc \
	    -GFW_HEX='"$(BUILD)/firmware/nf_fw.hex"' --Mdir $(@D) -MAKEFLAGS "OPT_FAST=-O2 OPT_SLOW=-O1" \
	    -CFLAGS "-std=c++17 -O2 -I$(ROOT)/sim -I$(ROOT)/proto/c -I$(ROOT)/proto/gen $(if $(filter vexriscv,$(NF_CPU)),-DFWPROF_VEXRISCV)" \
	    $(SOC_DIR)/nf_soc.v $(BENCH_DIR)/fwprof.cpp $(FWPROF_DIR)/nf_frame.o -o Vnf_soc \
	    > $(@D)/build.log 2>&1 || { tail -40 $(@D)/build.log; exit 1; }

# $(call fwprof_run,DIR,OUT): the fwprof model built in DIR on the firmware image, its
# report into OUT (shown whole when a check fails). Also run by bench-cores (rtl/soc/soc.mk).
fwprof_run = $(RV_NM) -S $(BUILD)/firmware/nf_fw.elf > $(1)/nf_fw.nm && \
    $(1)/Vnf_soc $(1)/nf_fw.nm > $(2) || { cat $(2); exit 1; }

.PHONY: bench-fwprof
bench-fwprof: $(FWPROF_DIR)/Vnf_soc firmware ## cycles of a fast-register / invalidate by phase (bus trace of nf_soc)
	@$(call fwprof_run,$(FWPROF_DIR),$(BENCH_BUILD)/fwprof.out)
	@grep -E '^(not ok|ok) ' $(BENCH_BUILD)/fwprof.out | sed 's/^/  /'
BENCH_TARGETS += bench-fwprof

# ---- host instructions per post: the host library's own benchmark (host/host.mk) ----
.PHONY: bench-host
bench-host: ## callgrind instructions per NdkFastRegister (runs bench-ndk-post)
	@mkdir -p $(BENCH_BUILD)
	@$(MAKE) --no-print-directory -s bench-ndk-post > $(BENCH_BUILD)/host_post.out 2>&1 || \
	    { cat $(BENCH_BUILD)/host_post.out; exit 1; }
	@sed 's/^/  /' $(BENCH_BUILD)/host_post.out
BENCH_TARGETS += bench-host

# ---- the budgets in make test, and the benchmark programs in make check ----
.PHONY: test-budgets test-bench-build
test-budgets: bench-fwprof bench-host bench-rc ## fast-register and invalidate clocks, host instructions per post, RC clocks per packet within bench/baseline.json's budgets
	@python3 $(BENCH_DIR)/report.py --check-budgets
test-bench-build: $(BENCH_BUILD)/bench_sim $$(NDK_BUILD)/bench_post ## the benchmark programs build (make bench runs them)
	@echo "ok - bench_sim and bench_post build"

# ---- the simulation's own cost, a count: sim/ir_per_clock.sh under valgrind (sim/sim.mk) ----
# bench-sim's cycles per second depend on the machine and its moment; this does not.
.PHONY: bench-sim-ir
bench-sim-ir: ## nfsim: host instructions per simulated idle clock (callgrind; runs sim-ir)
	@mkdir -p $(BENCH_BUILD)
	@$(MAKE) --no-print-directory -s sim-ir > $(BENCH_BUILD)/sim_ir.out 2>&1 || \
	    { cat $(BENCH_BUILD)/sim_ir.out; exit 1; }
	@sed 's/^/  /' $(BENCH_BUILD)/sim_ir.out
BENCH_TARGETS += bench-sim-ir

# ---- results.json and the table (last of `make bench`) ----
.PHONY: bench-results
bench-results:
	@NF_CPU=$(NF_CPU) python3 $(BENCH_DIR)/report.py
BENCH_TARGETS += bench-results

# The documents' figures come from results.json of today's sources only: a missing or
# stale one makes bench-report run make bench first. tools/doc_figures.py fills the marked tables.
.PHONY: bench-report bench-baseline
bench-report: ## regenerate docs/performance.md and its plots from a fresh make bench
	@python3 $(BENCH_DIR)/report.py --fresh || $(MAKE) --no-print-directory bench
	@python3 $(BENCH_DIR)/report.py --doc
	@python3 tools/doc_figures.py --only sendlat-memory

bench-baseline: ## record build/bench/results.json (of a committed tree) into bench/baseline.json (its budgets stay)
	@python3 $(BENCH_DIR)/report.py --baseline

LINT_TARGETS += lint-bench
.PHONY: lint-bench
lint-bench: ## cppcheck of the benchmark programs
	@cppcheck -q --std=c11 --enable=warning,style,performance,portability --error-exitcode=1 --inline-suppr \
	    --suppress=missingIncludeSystem -D__GNUC__ -D__x86_64__ -I$(ROOT)/host/include -I$(ROOT)/host/src \
	    -I$(ROOT)/proto/gen $(BENCH_SIM_SRC)

# The documents' figures against their measurement files (CI: check-figures; a file not
# measured on the machine is skipped, said so), and the tool's own test.
.PHONY: check-figures test-doc-figures
check-figures: ## fail when a figure in docs/ differs from build/bench/results.json or build/board/*/summary.json
	@python3 tools/doc_figures.py --check

test-doc-figures: $(SETUP_STAMP) ## the figures in docs/ are what the measurement files say
	@python3 tools/test_doc_figures.py
