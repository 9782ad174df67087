# SPDX-License-Identifier: Apache-2.0
# Example consumer of the NDKPI library: `make demo` runs it on the
# Verilator board model; DEMO_DEVICE=model runs it on the software adapter.
EX_BUILD := $(BUILD)/examples
DEMO_DEVICE ?= sim
.PHONY: demo
CLEAN_DIRS += $(EX_BUILD)

$(EX_BUILD)/demo: examples/demo.c $(BUILD)/host/libndkfpga.a host/include/ndkpi.h host/include/ndkfpga.h
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -I$(ROOT)/host/include -pthread -o $@ examples/demo.c $(BUILD)/host/libndkfpga.a \
	    $(NDK_LIB_LIBS)

demo: $(EX_BUILD)/demo $(if $(filter sim,$(DEMO_DEVICE)),sim,$(BUILD)/model/nfmodel) ## run the example consumer against the simulation
	@$(EX_BUILD)/demo $(DEMO_DEVICE)

# The SMB-Direct cycle (examples/smb_direct.c): fast-register, Send of the token,
# RDMA Write through it, SendAndInvalidate, the token reused. `make example-smb`
# shows one iteration on the software adapter; the tests repeat it, data checked
# every time.
.PHONY: example-smb test-smb-model test-smb-sim test-smb-host-model test-smb-host-sim

SMB_SRCS := examples/smb_direct.c examples/smbd_wire.c examples/smbd_conn.c examples/smbd_net.c
$(EX_BUILD)/smb_direct: $(SMB_SRCS) examples/smbd.h tests/consumer.h $(BUILD)/host/libndkfpga.a host/include/ndkpi.h \
                        host/include/ndkfpga.h
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -I$(ROOT)/host/include -I$(ROOT)/tests -pthread -o $@ $(SMB_SRCS) \
	    $(BUILD)/host/libndkfpga.a $(NDK_LIB_LIBS)

example-smb: $(EX_BUILD)/smb_direct $(BUILD)/model/nfmodel ## run the SMB-Direct example (Send, SendAndInvalidate) on the software adapter
	@$(EX_BUILD)/smb_direct model 1

# The example's own verdict (exit status; its output as TAP comments) as one test case.
# $(1) device, $(2) iterations, $(3) bytes, $(4) "host" for buffers in host memory
smb_case = out=$$($(EX_BUILD)/smb_direct $(1) $(2) $(3) $(4) 2>&1); rc=$$?; \
	printf '%s\n' "$$out" | tail -n 4 | sed 's/^/\# /'; \
	if [ $$rc = 0 ]; then echo "ok - smb_direct $(4) on $(1): $(2) SMB-Direct cycles of $(3) bytes, data verified each time"; \
	else printf '%s\n' "$$out" | sed 's/^/\# /'; echo "not ok - smb_direct $(4) on $(1): $(2) cycles of $(3) bytes (exit $$rc)"; exit 1; fi

test-smb-model: $(EX_BUILD)/smb_direct $(BUILD)/model/nfmodel ## the SMB-Direct cycle (examples/smb_direct.c) on the software adapter
	@$(call smb_case,model,1000,512)

test-smb-sim: $(EX_BUILD)/smb_direct $(BUILD)/model/nfmodel sim ## the SMB-Direct cycle on the Verilator board
	@$(call smb_case,sim,50,128)

# The same cycle with every buffer in host memory: the CPU fills and checks each byte.
test-smb-host-model: $(EX_BUILD)/smb_direct $(BUILD)/model/nfmodel ## the SMB-Direct cycle with every buffer in host memory, on the software adapter
	@$(call smb_case,model,500,4096,host)

test-smb-host-sim: $(EX_BUILD)/smb_direct $(BUILD)/model/nfmodel sim ## the SMB-Direct cycle with every buffer in host memory, on the Verilator board
	@$(call smb_case,sim,20,512,host)

# The two-process mode: a server and a client process on two adapters of one fresh
# segment, MS-SMBD between them; the server port's capture checked in tshark (SMB Direct
# dissector) and by tests/net/check_capture.py (examples/test_smb_net.sh).
.PHONY: test-smb-net-model test-smb-net-sim
test-smb-net-model: $(EX_BUILD)/smb_direct $$(MODEL_BUILD)/nfmodel $$(SIM_BUILD)/nfwire ## smb_direct server and client in two processes on two software adapters: MS-SMBD negotiate, credits, WRITE by RDMA Read, READ by RDMA Write and SendAndInvalidate; the capture decoded by tshark
	@bash examples/test_smb_net.sh $(EX_BUILD)/smb_direct model 50 6000 $(PY)
test-smb-net-sim: $(EX_BUILD)/smb_direct $$(SIM_BIN) $$(SIM_BUILD)/nfwire firmware ## test-smb-net-model on two simulated adapters (Verilator)
	@bash examples/test_smb_net.sh $(EX_BUILD)/smb_direct sim 5 6000 $(PY)

# make lint: cppcheck of the examples, as of the tests' own consumer programs.
LINT_TARGETS += lint-examples
.PHONY: lint-examples
lint-examples:
	@cppcheck -q --std=c11 --enable=warning,style,performance,portability --error-exitcode=1 \
	    --inline-suppr --suppress=missingIncludeSystem -D__GNUC__ -D__x86_64__ \
	    -I host/include -I tests -I examples examples/demo.c $(SMB_SRCS)
