# SPDX-License-Identifier: Apache-2.0
# Network port hardware (rtl/net): Ethernet CRC-32, MAC transmitter and receiver, RoCEv2
# ICRC, and the port block nf_net (slots in adapter memory, NET registers). The testbenches
# are Verilator C++ harnesses fed with vectors that scapy and zlib make
# (rtl/net/tb/gen_net_vectors.py, rtl/net/tb/gen_net_port_vectors.py).
NET_DIR   := $(ROOT)/rtl/net
NET_BUILD := $(BUILD)/net
NET_RTL   := $(addprefix $(NET_DIR)/,nf_eth_crc32.v nf_eth_mac_tx.v nf_eth_mac_rx.v nf_roce_icrc.v)
NET_TB_VFLAGS := --cc --exe --build -j 1 -Wall -Wno-fatal -O2 --x-assign unique --x-initial unique -y $(NET_DIR) \
                 -CFLAGS "-std=c++17 -O1 -I$(ROOT)/rtl/include -I$(ROOT)/tests"

# The port block: its own modules, the generated NET registers and the generic decode.
NET_PORT_RTL := $(NET_RTL) $(addprefix $(NET_DIR)/,nf_net_csr.v nf_net_rx.v nf_net_tx.v nf_mdio.v nf_net.v) \
                $(ROOT)/rtl/engine/nf_regs_decode.v
NET_PORT_VFLAGS := --cc --exe --build -j 1 -Wall -Wno-fatal -O2 --x-assign unique --x-initial unique \
                   -I$(ROOT)/proto/gen -y $(NET_DIR) -y $(ROOT)/rtl/engine \
                   -CFLAGS "-std=c++17 -O1 -I$(ROOT)/rtl/include -I$(ROOT)/tests -I$(ROOT)/proto/gen -I$(ROOT)/sim"
# Two slot counts (and slot bases): the ring wrap with 2 RX slots and 1 TX slot, and a
# larger build with the post queue deeper than one.
NET_PORT_SIZES := 2_1_0x10000 8_4_0x4000

# The PHY ports (RGMII with ECP5 DDR cells, RMII) and their frame FIFO; simulation and lint
# take the ECP5 cells from behavioral models (sim/models), synthesis from Yosys's library.
NET_MODELS   := $(ROOT)/sim/models
NET_PHY_TOPS := nf_phy_fifo nf_phy_pace nf_phy_rgmii nf_phy_rmii nf_ecp5_iddr nf_ecp5_oddr nf_ecp5_delay
NET_PHY_RTL  := $(addprefix $(NET_DIR)/,$(addsuffix .v,$(NET_PHY_TOPS)))
NET_PHY_SIM  := $(NET_PHY_RTL) $(addprefix $(NET_MODELS)/,IDDRX1F.v ODDRX1F.v DELAYG.v)

LINT_TARGETS += lint-net
.PHONY: lint-net test-net-mac test-net-port test-net-diff synth-net synth-net-port

lint-net: ## Verilator -Wall lint of every rtl/net module and its testbench top
	@set -e; for f in $(NET_RTL) $(NET_DIR)/tb/nf_net_tb.v; do \
	    $(VERILATOR) $(VLINT) -y $(NET_DIR) --top-module $$(basename $$f .v) $$f; done
	@$(VERILATOR) $(VLINT) -GDATA_W=64 --top-module nf_eth_crc32 $(NET_DIR)/nf_eth_crc32.v
	@set -e; for t in nf_net_csr nf_net_rx nf_net_tx nf_mdio nf_net; do \
	    $(VERILATOR) $(VLINT) -y $(NET_DIR) -y $(ROOT)/rtl/engine --top-module $$t $(NET_DIR)/$$t.v; done
	@set -e; for g in "-GRX_SLOTS=1 -GTX_SLOTS=1" "-GRX_SLOTS=16 -GTX_SLOTS=16"; do \
	    $(VERILATOR) $(VLINT) $$g -y $(NET_DIR) -y $(ROOT)/rtl/engine --top-module nf_net $(NET_DIR)/nf_net.v; done
	@set -e; for t in $(NET_PHY_TOPS); do \
	    $(VERILATOR) $(VLINT) -y $(NET_DIR) -y $(NET_MODELS) --top-module $$t $(NET_DIR)/$$t.v; done
	@$(VERILATOR) $(VLINT) -GRX_DELAY=40 -GTX_CLK_SHIFTED=1 -GFIFO_DEPTH=4096 -y $(NET_DIR) -y $(NET_MODELS) \
	    --top-module nf_phy_rgmii $(NET_DIR)/nf_phy_rgmii.v
	@set -e; for m in IDDRX1F ODDRX1F DELAYG; do $(VERILATOR) $(VLINT) --top-module $$m $(NET_MODELS)/$$m.v; done

$(NET_BUILD)/vectors.txt: $(NET_DIR)/tb/gen_net_vectors.py
	@mkdir -p $(@D)
	@$(PY) $< $@.new && mv $@.new $@

$(NET_BUILD)/tb/Vnf_net_tb: $(NET_RTL) $(NET_DIR)/tb/nf_net_tb.v $(NET_DIR)/tb/net_tb.cpp $(ROOT)/tests/tap.h $(ROOT)/rtl/include/nf_tb_clock.h
	@mkdir -p $(@D)
	@$(VERILATOR) $(NET_TB_VFLAGS) --Mdir $(@D) --top-module nf_net_tb $(NET_DIR)/tb/nf_net_tb.v $(NET_DIR)/tb/net_tb.cpp \
	    > $(@D)/build.log 2>&1 || { cat $(@D)/build.log; exit 1; }

test-net-mac: $(NET_BUILD)/tb/Vnf_net_tb $(NET_BUILD)/vectors.txt ## Ethernet CRC, MAC tx/rx and RoCEv2 ICRC against scapy/zlib frames
	@$< $(NET_BUILD)/vectors.txt

$(NET_BUILD)/port_vectors.txt: $(NET_DIR)/tb/gen_net_port_vectors.py
	@mkdir -p $(@D)
	@$(PY) $< $@.new && mv $@.new $@

# One harness per slot count: RX_TX_BASE.
$(NET_BUILD)/port_%/Vnf_net: $(NET_PORT_RTL) $(NET_DIR)/tb/net_port_tb.cpp $(NET_DIR)/tb/net_port_bench.h $(ROOT)/sim/nf_mii_phy.h $(ROOT)/proto/gen/nf_layout.vh \
                             $(ROOT)/proto/gen/nf_layout.h $(ROOT)/sim/nf_layout_cxx.h $(ROOT)/tests/tap.h $(ROOT)/rtl/include/nf_tb_clock.h
	@mkdir -p $(@D)
	@p='$*'; set -- $$(echo $$p | tr _ ' '); \
	$(VERILATOR) $(NET_PORT_VFLAGS) -GRX_SLOTS=$$1 -GTX_SLOTS=$$2 "-GSLOT_BASE=32'h$${3#0x}" --Mdir $(@D) \
	    --top-module nf_net $(NET_DIR)/nf_net.v $(NET_DIR)/tb/net_port_tb.cpp > $(@D)/build.log 2>&1 || { cat $(@D)/build.log; exit 1; }

test-net-port: $(foreach s,$(NET_PORT_SIZES),$(NET_BUILD)/port_$(s)/Vnf_net) $(NET_BUILD)/port_vectors.txt ## the port block nf_net: RX checks and slots, TX fills, NET registers, loopback, at two slot counts
	@rc=0; for s in $(NET_PORT_SIZES); do $(NET_BUILD)/port_$$s/Vnf_net $(NET_BUILD)/port_vectors.txt || rc=1; done; exit $$rc

# The differential test against the C model (firmware/host/hw_net_model.c) at the SIM
# profile's slot counts; the model is compiled as C and linked into the harness.
NET_DIFF_BUILD := $(NET_BUILD)/diff
NET_DIFF_SEEDS ?= 1 2 3
NET_DIFF_OPS   ?= 1500
NET_MODEL_SRC  := $(ROOT)/firmware/host/hw_net_model.c
NET_MODEL_HDR  := $(ROOT)/firmware/host/hw_net_model.h

$(NET_DIFF_BUILD)/hw_net_model.o: $(NET_MODEL_SRC) $(NET_MODEL_HDR) $(ROOT)/proto/gen/nf_layout.h
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -c -o $@ $<

$(NET_DIFF_BUILD)/obj/Vnf_net: $(NET_PORT_RTL) $(NET_DIR)/tb/net_diff_tb.cpp $(NET_DIR)/tb/net_port_bench.h $(ROOT)/sim/nf_mii_phy.h \
                               $(NET_DIFF_BUILD)/hw_net_model.o $(NET_MODEL_HDR) $(ROOT)/proto/gen/nf_layout.vh \
                               $(ROOT)/sim/nf_layout_cxx.h $(ROOT)/tests/tap.h $(ROOT)/rtl/include/nf_tb_clock.h
	@mkdir -p $(@D)
	@rm -f $@  # Verilator's own make does not relink for a changed object: the model must not go stale
	@$(VERILATOR) $(NET_PORT_VFLAGS) -CFLAGS -I$(ROOT)/firmware/host \
	    -GRX_SLOTS=$(NF_PROFILE_SIM_NET_RX_SLOTS) -GTX_SLOTS=$(NF_PROFILE_SIM_NET_TX_SLOTS) "-GSLOT_BASE=32'd$(NF_PROFILE_SIM_NET_BASE)" \
	    --Mdir $(@D) --top-module nf_net $(NET_DIR)/nf_net.v $(NET_DIR)/tb/net_diff_tb.cpp $(NET_DIFF_BUILD)/hw_net_model.o \
	    > $(@D)/build.log 2>&1 || { cat $(@D)/build.log; exit 1; }

test-net-diff: $(NET_DIFF_BUILD)/obj/Vnf_net ## differential test: RTL nf_net vs its C model (nfmodel's port), seeded random frames and posts
	@rc=0; for s in $(NET_DIFF_SEEDS); do $< --seed $$s --ops $(NET_DIFF_OPS) || rc=1; done; exit $$rc

# Yosys synth_ecp5 of each module alone: prints its LUT4 and flip-flop counts.
synth-net: ## Yosys synth_ecp5 of each rtl/net module alone: prints LUT/FF
	@mkdir -p $(NET_BUILD)
	@set -e; for m in nf_eth_crc32 nf_eth_mac_tx nf_eth_mac_rx nf_roce_icrc; do \
	    $(YOSYS) -q -l $(call rel,$(NET_BUILD))/$$m.synth.log -p "read_verilog $(call rel,$(NET_RTL)); \
	        synth_ecp5 -top $$m; tee -o $(call rel,$(NET_BUILD))/$$m.stat stat" > /dev/null; \
	    echo "$$m: $$(grep -E 'LUT4|TRELLIS_FF|CCU2C' $(NET_BUILD)/$$m.stat | awk '{printf "%s %s  ", $$2, $$1}')"; done

# Yosys synth_ecp5 of the port block at the ULX3S 85K link profile's slot base.
synth-net-port: ## Yosys synth_ecp5 of nf_net alone (8 RX, 4 TX slots): prints LUT/FF/EBR
	@mkdir -p $(NET_BUILD)
	@$(YOSYS) -q -l $(call rel,$(NET_BUILD))/nf_net.synth.log -p "read_verilog -DSYNTHESIS -Iproto/gen $(call rel,$(NET_PORT_RTL)); \
	    synth_ecp5 -top nf_net; tee -o $(call rel,$(NET_BUILD))/nf_net.stat stat" > /dev/null
	@grep -E 'LUT4|TRELLIS_FF|DP16KD|TRELLIS_DPR16X4|CCU2C' $(NET_BUILD)/nf_net.stat

# The PHY ports with their clocks asynchronous (tb/phy_tb.cpp, an event scheduler of clocks
# in ps): frames through the pins and the FIFOs both ways, CRS_DV toggling, FIFO overruns,
# phy_ce's pacing. One harness per port at CE_DIV 2 (the default), 1 and 3, and RGMII once
# more with its RX delay cells and shifted TX clock.
NET_PHY_TB_VFLAGS := --cc --exe --build -j 1 -Wall -Wno-fatal -O2 --x-assign unique --x-initial unique \
                     -y $(NET_DIR) -y $(NET_MODELS) -CFLAGS "-std=c++17 -O1 -Wall -Wextra -Werror -I$(ROOT)/tests"
NET_PHY_BENCHES := rgmii rmii rgmii_shifted rgmii_ce1 rgmii_ce3 rmii_ce1 rmii_ce3
NET_PHY_GFLAGS_rgmii_shifted := -GRX_DELAY=40 -GTX_CLK_SHIFTED=1
# each bench's CE_DIV: the name's _ce<n>, else 2
net_phy_ce = $(or $(patsubst ce%,%,$(filter ce%,$(subst _, ,$(1)))),2)

$(NET_BUILD)/phy_%/phy_tb: $(NET_PHY_SIM) $(NET_DIR)/tb/phy_tb.cpp $(ROOT)/tests/tap.h
	@mkdir -p $(@D)
	@k='$*'; p=$${k%%_*}; d=$$(echo $$p | tr a-z A-Z); \
	$(VERILATOR) $(NET_PHY_TB_VFLAGS) $(NET_PHY_GFLAGS_$*) -GCE_DIV=$(call net_phy_ce,$*) \
	    -CFLAGS "-DPHY_$$d -DCE_DIV=$(call net_phy_ce,$*)" --Mdir $(@D) -o phy_tb \
	    --top-module nf_phy_$$p $(NET_DIR)/nf_phy_$$p.v $(NET_DIR)/tb/phy_tb.cpp > $(@D)/build.log 2>&1 || { cat $(@D)/build.log; exit 1; }

.PHONY: test-net-phy
test-net-phy: $(foreach b,$(NET_PHY_BENCHES),$(NET_BUILD)/phy_$(b)/phy_tb) ## PHY ports: RGMII and RMII pins <-> GMII-style bytes across asynchronous clocks, CRS_DV toggles, FIFO overruns
	@rc=0; for b in $(NET_PHY_BENCHES); do \
	    $(NET_BUILD)/phy_$$b/phy_tb $$(case $$b in *shifted) echo shifted;; esac) || rc=1; done; exit $$rc
