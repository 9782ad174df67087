# Benchmarks (issue [bench]): engine micro-benchmarks (own Verilator harnesses of the
# engine units), fast-register / invalidate / link figures on the Verilator board
# (nfsim) through the host library's link, an ndmrlat-style latency sweep through the
# public NDKPI, host instructions per post (bench-ndk-post, host/host.mk), FPGA figures
# from the last bitstream build. bench/report.py gathers everything into
# build/bench/results.json, prints the table and (bench-report) writes
# docs/performance.md and its plots.
BENCH_DIR   := $(ROOT)/bench
BENCH_BUILD := $(BUILD)/bench
ENGINE_SRC  := $(ROOT)/rtl/engine
BENCH_VFLAGS := --cc --exe --build -j 2 $(VFAST) -Wno-fatal -I$(ROOT)/rtl/include -y $(ENGINE_SRC) \
                -MAKEFLAGS "OPT_FAST=-O2 OPT_SLOW=-O1"

# Engine sizes of the micro-benchmarks (small tables keep the builds and resets short).
BENCH_ENG_MEM  := 2097152
BENCH_ENG_USER := 65536

$(BENCH_BUILD)/kc/Vnf_keycheck: $(ENGINE_SRC)/nf_keycheck.v $(BENCH_DIR)/kc_bench.cpp $(ROOT)/rtl/include/nf_layout.vh \
                                $(ROOT)/firmware/include/nf_layout.h
	@mkdir -p $(@D)
	@$(VERILATOR) $(BENCH_VFLAGS) --Mdir $(@D) --top-module nf_keycheck -GMPT_ENTRIES=64 -GMTT_ENTRIES=256 \
	    -CFLAGS "-O2 -I$(ROOT)/sim -I$(ROOT)/firmware/include" $(ENGINE_SRC)/nf_keycheck.v $(BENCH_DIR)/kc_bench.cpp \
	    -o Vnf_keycheck >$(@D)/build.log 2>&1 || { cat $(@D)/build.log; exit 1; }

$(BENCH_BUILD)/eng/Vnf_engine: $(wildcard $(ENGINE_SRC)/*.v) $(BENCH_DIR)/eng_bench.cpp $(BENCH_DIR)/eng_bench.vlt \
                               $(ROOT)/rtl/include/nf_layout.vh $(ROOT)/firmware/include/nf_layout.h
	@mkdir -p $(@D)
	@$(VERILATOR) $(BENCH_VFLAGS) --Mdir $(@D) --top-module nf_engine \
	    -GMEM_BYTES=$(BENCH_ENG_MEM) -GMPT_ENTRIES=64 -GMTT_ENTRIES=1024 -GUSER_BASE=$(BENCH_ENG_USER) \
	    -CFLAGS "-O2 -I$(ROOT)/sim -I$(ROOT)/firmware/include -DBENCH_USER_BASE=$(BENCH_ENG_USER)u -DBENCH_MEM_BYTES=$(BENCH_ENG_MEM)u" \
	    $(BENCH_DIR)/eng_bench.vlt $(ENGINE_SRC)/nf_engine.v $(BENCH_DIR)/eng_bench.cpp \
	    -o Vnf_engine >$(@D)/build.log 2>&1 || { cat $(@D)/build.log; exit 1; }

.PHONY: bench-engine
bench-engine: $(BENCH_BUILD)/kc/Vnf_keycheck $(BENCH_BUILD)/eng/Vnf_engine ## engine micro-benchmarks: key check, loader, DMA
	@$(BENCH_BUILD)/kc/Vnf_keycheck > $(BENCH_BUILD)/engine.out && \
	    $(BENCH_BUILD)/eng/Vnf_engine >> $(BENCH_BUILD)/engine.out || { cat $(BENCH_BUILD)/engine.out; exit 1; }
	@grep -E '^(not ok|ok) ' $(BENCH_BUILD)/engine.out | sed 's/^/  /'

BENCH_TARGETS += bench-engine
CLEAN_DIRS += $(BENCH_BUILD)
