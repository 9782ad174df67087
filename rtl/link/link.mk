# SPDX-License-Identifier: Apache-2.0
# Link hardware (rtl/link): UART, CRC, frame receiver/transmitter, LINK registers.
# Testbenches are Verilator C++ harnesses driving the real pins bit by bit.
LINK_DIR   := $(ROOT)/rtl/link
LINK_BUILD := $(BUILD)/link
LINK_RTL   := $(LINK_DIR)/nf_link_regs_decode.v $(LINK_DIR)/nf_uart_bitclk.v $(LINK_DIR)/nf_uart_shift.v $(LINK_DIR)/nf_uart_tx.v $(LINK_DIR)/nf_uart_rx.v $(LINK_DIR)/nf_crc32.v \
              $(LINK_DIR)/nf_link_rx.v $(LINK_DIR)/nf_link_tx.v $(LINK_DIR)/nf_link.v $(LINK_DIR)/nf_link_udp.v
# The generic register decode behind nf_link_regs_decode lives with the engine's RTL.
LINK_REGS_DECODE := $(ROOT)/rtl/engine/nf_regs_decode.v
LINK_HDRS  := $(ROOT)/proto/gen/nf_layout.vh $(ROOT)/proto/gen/nf_layout.h \
              $(ROOT)/sim/nf_uart_bits.h $(ROOT)/sim/nf_layout_cxx.h $(ROOT)/tests/tap.h $(ROOT)/rtl/include/nf_tb_clock.h
# Verilator C++ harness build: lean (-j 1), headers from the shared places.
LINK_VTB = $(VERILATOR) --cc --exe --build -j 1 -Wall -Wno-fatal -I$(ROOT)/proto/gen -y $(LINK_DIR) -y $(ROOT)/rtl/engine \
           -CFLAGS "-std=c++17 -O1 -I$(ROOT)/rtl/include -I$(ROOT)/sim -I$(ROOT)/tests -I$(ROOT)/proto/gen -I$(ROOT)/proto/c"

LINT_TARGETS += lint-link
.PHONY: lint-link test-link-uart test-link test-link-udp

lint-link: ## Verilator -Wall lint of rtl/link and rtl/soc (PicoRV32 itself excluded)
	@set -e; for f in $(filter-out %/nf_link_udp.v,$(LINK_RTL)) $(LINK_DIR)/tb/nf_uart_tb.v; do \
	    $(VERILATOR) $(VLINT) -y $(LINK_DIR) -y $(ROOT)/rtl/engine --top-module $$(basename $$f .v) $$f; done
	@$(VERILATOR) $(VLINT) -y $(LINK_DIR) -y $(ROOT)/rtl/net --top-module nf_link_udp $(LINK_DIR)/nf_link_udp.v
	@$(VERILATOR) $(VLINT) -y $(LINK_DIR) -y $(ROOT)/rtl/engine -GLINK_UDP=1 --top-module nf_link $(LINK_DIR)/nf_link.v
	@$(VERILATOR) $(VLINT) $(call soc_vsrc,$(NF_CPU)) -GLINK_UDP=1 --top-module nf_soc $(SOC_DIR)/nf_soc.v
	@$(MAKE) --no-print-directory -s lint-soc

$(LINK_BUILD)/uart/Vnf_uart_tb: $(LINK_RTL) $(LINK_REGS_DECODE) $(LINK_DIR)/tb/nf_uart_tb.v $(LINK_DIR)/tb/uart_tb.cpp $(LINK_HDRS)
	@mkdir -p $(LINK_BUILD)/uart
	@$(LINK_VTB) --Mdir $(LINK_BUILD)/uart --top-module nf_uart_tb $(LINK_DIR)/tb/nf_uart_tb.v \
	    $(LINK_DIR)/tb/uart_tb.cpp > $(LINK_BUILD)/uart/build.log 2>&1 || (cat $(LINK_BUILD)/uart/build.log; exit 1)

test-link-uart: $(LINK_BUILD)/uart/Vnf_uart_tb ## UART rx/tx at several (fractional) bit periods
	@$<

# The host codec, compiled as C (it is C11) and linked into the C++ harnesses.
$(LINK_BUILD)/nf_frame.o: $(ROOT)/proto/c/nf_frame.c $(ROOT)/proto/c/nf_frame.h $(ROOT)/proto/gen/nf_layout.h
	@mkdir -p $(LINK_BUILD)
	@$(HOST_CC) $(HOST_CFLAGS) -fPIC -c $< -o $@

$(LINK_BUILD)/link/Vnf_link: $(LINK_RTL) $(LINK_REGS_DECODE) $(LINK_DIR)/tb/link_tb.cpp $(LINK_HDRS) $(LINK_BUILD)/nf_frame.o
	@mkdir -p $(LINK_BUILD)/link
	@$(LINK_VTB) --Mdir $(LINK_BUILD)/link --top-module nf_link -GRX_SLOTS=4 -GTX_SLOTS=4 $(LINK_DIR)/nf_link.v \
	    $(LINK_DIR)/tb/link_tb.cpp $(LINK_BUILD)/nf_frame.o > $(LINK_BUILD)/link/build.log 2>&1 || (cat $(LINK_BUILD)/link/build.log; exit 1)

test-link: $(LINK_BUILD)/link/Vnf_link ## frame receiver, transmitter and LINK registers through the UART pins
	@$<

# The UDP host-link port: frames made by scapy, its replies checked by scapy.
LINK_UDP_RTL := $(LINK_RTL) $(ROOT)/rtl/net/nf_eth_mac_rx.v $(ROOT)/rtl/net/nf_eth_mac_tx.v $(ROOT)/rtl/net/nf_eth_crc32.v
$(LINK_BUILD)/udp/Vnf_link_udp: $(LINK_UDP_RTL) $(LINK_DIR)/tb/link_udp_tb.cpp $(LINK_HDRS)
	@mkdir -p $(LINK_BUILD)/udp
	@$(LINK_VTB) -y $(ROOT)/rtl/net --Mdir $(LINK_BUILD)/udp --top-module nf_link_udp $(LINK_DIR)/nf_link_udp.v \
	    $(LINK_DIR)/tb/link_udp_tb.cpp > $(LINK_BUILD)/udp/build.log 2>&1 || (cat $(LINK_BUILD)/udp/build.log; exit 1)

test-link-udp: $(LINK_BUILD)/udp/Vnf_link_udp $(LINK_DIR)/tb/link_udp_tb.py ## the UDP host-link port: ARP answered, datagrams to its address and port pass, others dropped, replies well formed (scapy)
	@$(PY) $(LINK_DIR)/tb/link_udp_tb.py gen $(LINK_BUILD)/udp/scenario.txt
	@$< $(LINK_BUILD)/udp/scenario.txt $(LINK_BUILD)/udp/out.txt
	@$(PY) $(LINK_DIR)/tb/link_udp_tb.py check $(LINK_BUILD)/udp/scenario.txt $(LINK_BUILD)/udp/out.txt

.PHONY: synth-link
synth-link: ## Yosys synth_ecp5 of nf_link alone (ULX3S 85K slot counts): prints LUT/FF
	@mkdir -p $(LINK_BUILD)
	@$(YOSYS) -q -l $(call rel,$(LINK_BUILD))/nf_link_synth.log -p "read_verilog -DSYNTHESIS -Iproto/gen $(call rel,$(LINK_RTL) $(LINK_REGS_DECODE)); \
	    chparam -set RX_SLOTS $(NF_PROFILE_ULX3S_85K_RX_SLOTS) -set TX_SLOTS $(NF_PROFILE_ULX3S_85K_TX_SLOTS) nf_link; \
	    synth_ecp5 -top nf_link; tee -o $(call rel,$(LINK_BUILD))/nf_link_synth.stat stat" > /dev/null
	@grep -E 'LUT4|TRELLIS_FF|DP16KD|TRELLIS_DPR16X4' $(LINK_BUILD)/nf_link_synth.stat
