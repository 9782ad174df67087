# SPDX-License-Identifier: Apache-2.0
# Network port hardware (rtl/net): Ethernet CRC-32, MAC transmitter and receiver, RoCEv2
# ICRC. The testbench is one Verilator C++ harness fed with vectors that scapy and zlib
# make (rtl/net/tb/gen_net_vectors.py).
NET_DIR   := $(ROOT)/rtl/net
NET_BUILD := $(BUILD)/net
NET_RTL   := $(addprefix $(NET_DIR)/,nf_eth_crc32.v nf_eth_mac_tx.v nf_eth_mac_rx.v nf_roce_icrc.v)
NET_TB_VFLAGS := --cc --exe --build -j 1 -Wall -Wno-fatal -O2 --x-assign unique --x-initial unique -y $(NET_DIR) \
                 -CFLAGS "-std=c++17 -O1 -I$(ROOT)/rtl/include -I$(ROOT)/tests"

LINT_TARGETS += lint-net
.PHONY: lint-net test-net-mac synth-net

lint-net: ## Verilator -Wall lint of every rtl/net module and its testbench top
	@set -e; for f in $(NET_RTL) $(NET_DIR)/tb/nf_net_tb.v; do \
	    $(VERILATOR) $(VLINT) -y $(NET_DIR) --top-module $$(basename $$f .v) $$f; done
	@$(VERILATOR) $(VLINT) -GDATA_W=64 --top-module nf_eth_crc32 $(NET_DIR)/nf_eth_crc32.v

$(NET_BUILD)/vectors.txt: $(NET_DIR)/tb/gen_net_vectors.py
	@mkdir -p $(@D)
	@$(PY) $< $@.new && mv $@.new $@

$(NET_BUILD)/tb/Vnf_net_tb: $(NET_RTL) $(NET_DIR)/tb/nf_net_tb.v $(NET_DIR)/tb/net_tb.cpp $(ROOT)/tests/tap.h $(ROOT)/rtl/include/nf_tb_clock.h
	@mkdir -p $(@D)
	@$(VERILATOR) $(NET_TB_VFLAGS) --Mdir $(@D) --top-module nf_net_tb $(NET_DIR)/tb/nf_net_tb.v $(NET_DIR)/tb/net_tb.cpp \
	    > $(@D)/build.log 2>&1 || { cat $(@D)/build.log; exit 1; }

test-net-mac: $(NET_BUILD)/tb/Vnf_net_tb $(NET_BUILD)/vectors.txt ## Ethernet CRC, MAC tx/rx and RoCEv2 ICRC against scapy/zlib frames
	@$< $(NET_BUILD)/vectors.txt

# Yosys synth_ecp5 of each module alone: prints its LUT4 and flip-flop counts.
synth-net: ## Yosys synth_ecp5 of each rtl/net module alone: prints LUT/FF
	@mkdir -p $(NET_BUILD)
	@set -e; for m in nf_eth_crc32 nf_eth_mac_tx nf_eth_mac_rx nf_roce_icrc; do \
	    $(YOSYS) -q -l $(call rel,$(NET_BUILD))/$$m.synth.log -p "read_verilog $(call rel,$(NET_RTL)); \
	        synth_ecp5 -top $$m; tee -o $(call rel,$(NET_BUILD))/$$m.stat stat" > /dev/null; \
	    echo "$$m: $$(grep -E 'LUT4|TRELLIS_FF|CCU2C' $(NET_BUILD)/$$m.stat | awk '{printf "%s %s  ", $$2, $$1}')"; done
