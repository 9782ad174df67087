# SPDX-License-Identifier: Apache-2.0
# The network port end to end: a Linux stack in a network namespace against a simulated
# adapter on nfwire's segment (tests/net/); the same with the software adapter nfmodel, and
# two nfmodels on one segment.
.PHONY: test-net-ping test-net-ping-model test-net-model-pair
test-net-ping: $$(SIM_BIN) $$(SIM_BUILD)/nfwire firmware ## a Linux host in a network namespace pings a simulated adapter over the wire (ARP, ICMP echo; root)
	@bash tests/net/test_net_ping.sh $(SIM_BIN) $(SIM_BUILD)/nfwire $(SIM_FW_HEX)

.PHONY: test-net-rc
test-net-rc: $$(SIM_BIN) $$(SIM_BUILD)/nfwire firmware ## two simulated adapters on one wire: RoCEv2 RC Send/Write/Read both ways, refusals, the peer killed mid-Write; the capture checked by scapy and tshark
	@KILL_B=1 PY=$(PY) bash tests/net/test_rc_pair.sh $(SIM_BUILD)/nfwire sim:$(SIM_BIN):$(SIM_FW_HEX) \
	    sim:$(SIM_BIN):$(SIM_FW_HEX)

.PHONY: test-net-rc-loss
test-net-rc-loss: $$(SIM_BIN) $$(SIM_BUILD)/nfwire firmware ## test-net-rc's traffic with 5% of the frames lost on the wire: every request completes once, every byte right (go-back-N)
	@NFWIRE_ARGS="--drop 0.05 --seed 11" PY=$(PY) bash tests/net/test_rc_pair.sh $(SIM_BUILD)/nfwire \
	    sim:$(SIM_BIN):$(SIM_FW_HEX) sim:$(SIM_BIN):$(SIM_FW_HEX)

.PHONY: test-net-rc-model test-net-rc-mixed test-net-rc-faults
test-net-rc-model: $$(MODEL_BUILD)/nfmodel $$(SIM_BUILD)/nfwire ## test-net-rc on two software adapters, with the peer killed mid-Write
	@KILL_B=1 PY=$(PY) bash tests/net/test_rc_pair.sh $(SIM_BUILD)/nfwire model:$(MODEL_BUILD)/nfmodel \
	    model:$(MODEL_BUILD)/nfmodel
test-net-rc-mixed: $$(MODEL_BUILD)/nfmodel $$(SIM_BIN) $$(SIM_BUILD)/nfwire firmware ## test-net-rc between the Verilator board and the software adapter
	@PY=$(PY) bash tests/net/test_rc_pair.sh $(SIM_BUILD)/nfwire sim:$(SIM_BIN):$(SIM_FW_HEX) \
	    model:$(MODEL_BUILD)/nfmodel

# Device strings with a network port (host/README.md, "Device strings"): the library's
# segments, addresses and per-port faults, through the public API (tests/net/net_seg.c).
.PHONY: test-net-seg
$(BUILD)/tests/net_seg: tests/net/net_seg.c host/include/ndkfpga.h host/include/ndkpi.h $(BUILD)/host/libndkfpga.a
	@mkdir -p $(@D)
	$(NDK_CONSUMER_CC) -o $@ tests/net/net_seg.c $(BUILD)/host/libndkfpga.a $(NDK_LIB_LIBS)
test-net-seg: $(BUILD)/tests/net_seg $$(SIM_BIN) $$(SIM_BUILD)/nfwire $$(CLI_BIN) firmware firmware-link ## sim,net=... device strings: two adapters' MACs and addresses in one and two processes, bad options, pcap, loss/dup/corrupt against Linux in a netns (root), ndkfpga addr, nothing left behind
	@bash tests/net/test_net_seg.sh $(BUILD)/tests/net_seg $(BUILD)/model/nfmodel $(PY) $(CLI_BIN) \
	    $(BUILD)/firmware-link/nf_fw.hex

# The check of a board alone: one adapter, its PHY in loopback over MDIO (ndkfpga phy), two
# of its QPs connected to its own address through the port (tests/net/phy_loopback.py).
.PHONY: test-net-phy-loopback-model test-net-phy-loopback-sim
test-net-phy-loopback-model: $$(MODEL_BUILD)/nfmodel $$(CLI_BIN) ## one nfmodel, no peer: ndkfpga phy loopback on, two QPs to its own address pass Send/Write/Read through the port; loopback off: nothing arrives
	@PY=$(PY) bash tests/net/test_phy_loopback.sh $(CLI_BIN) model:$(MODEL_BUILD)/nfmodel
test-net-phy-loopback-sim: $$(SIM_BIN) $$(SIM_BUILD)/nfsim-rgmii $$(SIM_BUILD)/nfsim-rmii $$(CLI_BIN) firmware ## test-net-phy-loopback-model on nfsim (GMII) at its default byte time and at a byte every 2 clocks (the boards' CE_DIV), and at the RGMII and RMII pins (transfers of 2000 bytes there), the PHY's loopback set over MDIO
	@set -o pipefail; rc=0; for s in $(SIM_BIN):5000 $(SIM_BIN):5000:2 $(SIM_BUILD)/nfsim-rgmii:2000 $(SIM_BUILD)/nfsim-rmii:2000; do \
	    b=$${s%%:*} n=$${s#*:} d=; case $$n in *:*) d=$${n#*:} n=$${n%%:*};; esac; \
	    NFSIM_ARGS="$${d:+--phy-div $$d}" PY=$(PY) bash tests/net/test_phy_loopback.sh $(CLI_BIN) sim:$$b:$(SIM_FW_HEX) $$n \
	        | sed -u "s/^\(not \)\{0,1\}ok - /&$$(basename $$b)$${d:+ phy-div $$d}: /" || rc=1; done; exit $$rc

test-net-ping-model: $$(MODEL_BUILD)/nfmodel $$(SIM_BUILD)/nfwire ## a Linux host in a network namespace pings nfmodel over the wire (ARP, ICMP echo; root)
	@bash tests/net/test_net_ping.sh $(MODEL_BUILD)/nfmodel $(SIM_BUILD)/nfwire -

test-net-model-pair: $$(MODEL_BUILD)/nfmodel $$(SIM_BUILD)/nfwire ## two nfmodels on one nfwire segment answer ARP for each other; ICMP, drops, the wire hello (scapy)
	@timeout 300 $(PY) tests/net/test_net_model_pair.py $(MODEL_BUILD)/nfmodel $(SIM_BUILD)/nfwire
test-net-rc-faults: $$(MODEL_BUILD)/nfmodel $$(SIM_BUILD)/nfwire ## test-net-rc on two software adapters whose ports lose 2%, duplicate 1%, reorder 2% and corrupt 0.5% of the frames they send
	@PORT_FAULTS=loss=0.02,dup=0.01,reorder=0.02,corrupt=0.005 PY=$(PY) bash tests/net/test_rc_pair.sh \
	    $(SIM_BUILD)/nfwire model:$(MODEL_BUILD)/nfmodel model:$(MODEL_BUILD)/nfmodel

# Connection setup on the wire (IB CM on QP1, the CM_* ops): tests/net/cm_pair.py.
.PHONY: test-net-cm test-net-cm-model
test-net-cm-model: $$(MODEL_BUILD)/nfmodel $$(SIM_BUILD)/nfwire ## two software adapters set up, use, refuse, reject and tear down connections with IB CM MADs (REQ/REP/RTU/REJ/DREQ/DREP); the capture's CM decoded by tshark
	@PAIR=cm PY=$(PY) bash tests/net/test_rc_pair.sh $(SIM_BUILD)/nfwire model:$(MODEL_BUILD)/nfmodel \
	    model:$(MODEL_BUILD)/nfmodel
test-net-cm: $$(SIM_BIN) $$(SIM_BUILD)/nfwire firmware ## test-net-cm-model on two simulated adapters (Verilator)
	@PAIR=cm PY=$(PY) bash tests/net/test_rc_pair.sh $(SIM_BUILD)/nfwire sim:$(SIM_BIN):$(SIM_FW_HEX) \
	    sim:$(SIM_BIN):$(SIM_FW_HEX)

# NDK connections between two adapters through the public API (tests/net/net_conn.c).
.PHONY: test-net-ndk-model test-net-ndk test-net-phy-sim test-net-ndk-mixed test-net-ndk-faults test-net-ndk-kill
$(BUILD)/tests/net_conn: tests/net/net_conn.c tests/consumer.h tests/tap.h host/include/ndkfpga.h host/include/ndkpi.h \
    $(BUILD)/host/libndkfpga.a
	@mkdir -p $(@D)
	$(NDK_CONSUMER_CC) -o $@ tests/net/net_conn.c $(BUILD)/host/libndkfpga.a $(NDK_LIB_LIBS)
test-net-ndk-model: $(BUILD)/tests/net_conn $$(MODEL_BUILD)/nfmodel $$(SIM_BUILD)/nfwire ## NdkListen/Connect/Accept/Reject/CompleteConnect/Disconnect between two software adapters on one segment; Send, Write, Read and SendAndInvalidate across; refused, rejected, unreachable, port in use
	@bash tests/net/test_net_conn.sh $(BUILD)/tests/net_conn $(PY) model model 2000000
test-net-ndk: $(BUILD)/tests/net_conn $$(SIM_BIN) $$(SIM_BUILD)/nfwire firmware ## test-net-ndk-model on two simulated adapters (Verilator)
	@bash tests/net/test_net_conn.sh $(BUILD)/tests/net_conn $(PY) sim sim
# The same adapters built at the board's PHY pins (nfsim-rgmii, nfsim-rmii: the PHY ports
# and their clock crossings in the path), on the quick exchange; A's capture checked.
test-net-phy-sim: $(BUILD)/tests/net_conn $$(SIM_BUILD)/nfsim-rgmii $$(SIM_BUILD)/nfsim-rmii $$(SIM_BUILD)/nfwire firmware ## connect, Send both ways, Write and Read between two simulated adapters at their RGMII pins, then at their RMII pins
	@set -o pipefail; rc=0; for k in rgmii rmii; do \
	    NDKFPGA_SIM=$(SIM_BUILD)/nfsim-$$k bash tests/net/test_net_conn.sh $(BUILD)/tests/net_conn $(PY) sim sim quick \
	        | sed -u "s/^\(not \)\{0,1\}ok - /&$$k: /" || rc=1; done; exit $$rc
test-net-ndk-mixed: $(BUILD)/tests/net_conn $$(MODEL_BUILD)/nfmodel $$(SIM_BIN) $$(SIM_BUILD)/nfwire firmware ## test-net-ndk-model between the Verilator board and the software adapter
	@bash tests/net/test_net_conn.sh $(BUILD)/tests/net_conn $(PY) sim model
test-net-ndk-faults: $(BUILD)/tests/net_conn $$(MODEL_BUILD)/nfmodel $$(SIM_BUILD)/nfwire ## test-net-ndk-model with both ports losing 2%, duplicating 1%, reordering 2% and corrupting 0.5% of the frames they send: every request completes once, every byte right
	@PORT_FAULTS=loss=0.02,dup=0.01,reorder=0.02,corrupt=0.005 bash tests/net/test_net_conn.sh \
	    $(BUILD)/tests/net_conn $(PY) model model 2000000
test-net-ndk-kill: $(BUILD)/tests/net_conn $$(MODEL_BUILD)/nfmodel $$(SIM_BUILD)/nfwire ## the peer adapter (in another process) killed mid-transfer: every queued request completes within a bound, IO_TIMEOUT first, and the DisconnectEvent runs once
	@seg=ndk$$$$; timeout 300 $(BUILD)/tests/net_conn kill model,net=$$seg,ip=10.78.0.1/24 model,net=$$seg,ip=10.78.0.2/24
