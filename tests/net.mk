# SPDX-License-Identifier: Apache-2.0
# The network port end to end: a Linux stack in a network namespace against a simulated
# adapter on nfwire's segment (tests/net/); the same with the software adapter nfmodel, and
# two nfmodels on one segment.
.PHONY: test-net-ping test-net-ping-model test-net-model-pair
test-net-ping: $$(SIM_BIN) $$(SIM_BUILD)/nfwire firmware ## a Linux host in a network namespace pings a simulated adapter over the wire (ARP, ICMP echo; root)
	@bash tests/net/test_net_ping.sh $(SIM_BIN) $(SIM_BUILD)/nfwire $(SIM_FW_HEX)

test-net-ping-model: $$(MODEL_BUILD)/nfmodel $$(SIM_BUILD)/nfwire ## a Linux host in a network namespace pings nfmodel over the wire (ARP, ICMP echo; root)
	@bash tests/net/test_net_ping.sh $(MODEL_BUILD)/nfmodel $(SIM_BUILD)/nfwire -

test-net-model-pair: $$(MODEL_BUILD)/nfmodel $$(SIM_BUILD)/nfwire ## two nfmodels on one nfwire segment answer ARP for each other; ICMP, drops, the wire hello (scapy)
	@timeout 300 $(PY) tests/net/test_net_model_pair.py $(MODEL_BUILD)/nfmodel $(SIM_BUILD)/nfwire
