# SPDX-License-Identifier: Apache-2.0
# Engine C reference model (rtl/engine/model): unit tests, cppcheck, and the
# differential test against the Verilator model of rtl/engine/nf_engine.v.
# Other areas compile the model from NFM_ENGINE_SRC with -I$(NFM_ENGINE_INC).
NFM_ENGINE_DIR   := $(ROOT)/rtl/engine/model
NFM_ENGINE_BUILD := $(BUILD)/model-engine
NFM_ENGINE_SRC   := $(NFM_ENGINE_DIR)/nf_engine_model.c
NFM_ENGINE_INC   := $(NFM_ENGINE_DIR)
NFM_ENGINE_HDR   := $(NFM_ENGINE_DIR)/nf_engine_model.h $(ROOT)/proto/gen/nf_layout.h
# The differential harness drives the RTL through the engine testbenches' bus helpers.
NFM_DIFF_INC     := -I$(ROOT)/sim -I$(ROOT)/rtl/engine/tb
NFM_DIFF_HDR     := $(ROOT)/rtl/engine/tb/tb_engine_bus.h $(ROOT)/rtl/engine/tb/tb_chk_regs.h $(ROOT)/sim/nf_layout_cxx.h

LINT_TARGETS += lint-engine-model
.PHONY: test-engine-model lint-engine-model

$(NFM_ENGINE_BUILD)/test_engine_model: $(NFM_ENGINE_DIR)/test_engine_model.c $(NFM_ENGINE_SRC) $(NFM_ENGINE_HDR) $(ROOT)/tests/tap.h \
                                   $(ROOT)/rtl/engine/tb/tb_chk_regs.h
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -I$(NFM_ENGINE_INC) -o $@ $(NFM_ENGINE_DIR)/test_engine_model.c $(NFM_ENGINE_SRC)

$(NFM_ENGINE_BUILD)/test_engine_model_san: $(NFM_ENGINE_DIR)/test_engine_model.c $(NFM_ENGINE_SRC) $(NFM_ENGINE_HDR) $(ROOT)/tests/tap.h \
                                   $(ROOT)/rtl/engine/tb/tb_chk_regs.h
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $(SAN_FLAGS) -I$(NFM_ENGINE_INC) -o $@ $(NFM_ENGINE_DIR)/test_engine_model.c $(NFM_ENGINE_SRC)

test-engine-model: $(NFM_ENGINE_BUILD)/test_engine_model $(NFM_ENGINE_BUILD)/test_engine_model_san ## unit tests of the engine C model (plain and ASan+UBSan)
	@$(NFM_ENGINE_BUILD)/test_engine_model
	@$(NFM_ENGINE_BUILD)/test_engine_model_san "asan: "

lint-engine-model: ## cppcheck of the engine C model, its tests and the differential harness
	@cppcheck --enable=warning,style,performance --error-exitcode=1 --inline-suppr -q \
	    --std=c11 -I$(ROOT)/proto/gen -I$(NFM_ENGINE_INC) \
	    $(NFM_ENGINE_SRC) $(NFM_ENGINE_DIR)/test_engine_model.c
	@cppcheck --enable=warning,style,performance --error-exitcode=1 --inline-suppr -q \
	    --language=c++ --std=c++17 -I$(ROOT)/proto/gen -I$(NFM_ENGINE_INC) $(NFM_DIFF_INC) \
	    -DDIFF_MEM_BYTES=$(NFM_DIFF_MEM)u -DDIFF_MPT_ENTRIES=$(NFM_DIFF_MPT)u -DDIFF_MTT_ENTRIES=$(NFM_DIFF_MTT)u \
	    -DDIFF_USER_BASE=$(NFM_DIFF_USER)u $(NFM_ENGINE_DIR)/diff/diff_engine.cpp

# ---- differential test against the RTL ----
# Small sizes for speed; the same numbers go to Verilator (-G) and to the harness (-D).
NFM_DIFF_MEM    := 262144
NFM_DIFF_MPT    := 64
NFM_DIFF_MTT    := 256
NFM_DIFF_USER   := 65536
NFM_DIFF_BUILD  := $(NFM_ENGINE_BUILD)/diff
NFM_DIFF_BIN    := $(NFM_DIFF_BUILD)/obj/Vnf_engine
NFM_DIFF_RTL    := $(wildcard $(ROOT)/rtl/engine/*.v) $(ROOT)/proto/gen/nf_layout.vh
NFM_DIFF_OPS    ?= 20000
NFM_DIFF_SEEDS  ?= 1 2 3
NFM_DIFF_UNITS  ?= tbl,ld,chk,dma,sys

.PHONY: test-engine-diff diff-long

$(NFM_DIFF_BUILD)/nf_engine_model.o: $(NFM_ENGINE_SRC) $(NFM_ENGINE_HDR)
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -c -o $@ $<

$(NFM_DIFF_BIN): $(NFM_ENGINE_DIR)/diff/diff_engine.cpp $(NFM_DIFF_BUILD)/nf_engine_model.o $(NFM_ENGINE_HDR) $(NFM_DIFF_HDR) $(NFM_DIFF_RTL)
	@mkdir -p $(NFM_DIFF_BUILD)
	$(VERILATOR) --cc --exe --build -j 2 $(VFAST) -Wno-fatal --top-module nf_engine \
	    -I$(ROOT)/proto/gen -y $(ROOT)/rtl/engine -Mdir $(NFM_DIFF_BUILD)/obj \
	    -GMEM_BYTES=$(NFM_DIFF_MEM) -GMPT_ENTRIES=$(NFM_DIFF_MPT) -GMTT_ENTRIES=$(NFM_DIFF_MTT) \
	    -GUSER_BASE=$(NFM_DIFF_USER) \
	    -CFLAGS "-O2 -I$(ROOT)/proto/gen -I$(NFM_ENGINE_INC) $(NFM_DIFF_INC) -DDIFF_MEM_BYTES=$(NFM_DIFF_MEM)u \
	        -DDIFF_MPT_ENTRIES=$(NFM_DIFF_MPT)u -DDIFF_MTT_ENTRIES=$(NFM_DIFF_MTT)u -DDIFF_USER_BASE=$(NFM_DIFF_USER)u" \
	    $(ROOT)/rtl/engine/nf_engine.v $(NFM_ENGINE_DIR)/diff/diff_engine.cpp $(NFM_DIFF_BUILD)/nf_engine_model.o \
	    > $(NFM_DIFF_BUILD)/verilator.log 2>&1 || { cat $(NFM_DIFF_BUILD)/verilator.log; exit 1; }

test-engine-diff: $(NFM_DIFF_BIN) ## differential test: RTL engine vs C model, seeded random streams (seconds)
	@rc=0; for s in $(NFM_DIFF_SEEDS); do \
	    $(NFM_DIFF_BIN) --seed $$s --ops $(NFM_DIFF_OPS) --units $(NFM_DIFF_UNITS) || rc=1; done; exit $$rc

diff-long: $(NFM_DIFF_BIN) ## long differential run: SEED=N (default: the time) OPS=N (default 1000000)
	@$(NFM_DIFF_BIN) --seed $(or $(SEED),$(shell date +%s)) --ops $(or $(OPS),1000000) --units $(NFM_DIFF_UNITS) \
	    --max-report 50
