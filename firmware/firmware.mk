# SPDX-License-Identifier: Apache-2.0
# Firmware for the PicoRV32 soft core (rv32i, picolibc), its host build against the
# C models of the link hardware and the engine, and the software adapter nfmodel.
#   make firmware          build/firmware/nf_fw.{elf,bin,hex}, size checked
#   make model             build/model/nfmodel
#   make test-firmware     host-build unit tests (also under ASan/UBSan), image checks, nfmodel
#   make test-firmware-sim the image on the Verilator RTL (nfsim)
#   make test-fuzz-firmware  bounded libFuzzer runs of the message handler and the network frames
#   make lint-firmware     cppcheck, warnings are errors

FW_DIR    := $(ROOT)/firmware
FW_BUILD  := $(BUILD)/firmware
MODEL_BUILD := $(BUILD)/model
FW_INC    := $(ROOT)/proto/gen
ENGINE_MODEL_DIR := $(ROOT)/rtl/engine/model

FW_CORE_SRCS := $(addprefix $(FW_DIR)/src/,fw_main.c fw_link.c fw_link_rx.c fw_link_tx.c fw_msg.c fw_wr.c fw_send.c fw_wr_common.c fw_net.c fw_cm.c fw_rc.c fw_rc_tx.c fw_tables.c fw_state.c)
# FW_NET: the network port's IPv4 layer in the image (1) or not (0: firmware-link, below).
FW_NET ?= 1
FW_TARGET_SRCS := $(filter-out $(if $(filter 0,$(FW_NET)),%/fw_net.c %/fw_cm.c %/fw_rc.c %/fw_rc_tx.c),$(FW_CORE_SRCS)) $(FW_DIR)/src/main.c $(FW_DIR)/src/start.c
FW_HDRS := $(wildcard $(FW_DIR)/src/*.h) $(FW_INC)/nf_layout.h

# RAM budget per profile: image (code, data, bss and the stack reserve after them,
# link.ld) + the key-table shadow the firmware places after it at boot (FW_MR_BYTES per
# MPT entry) + the receive pool after that (FW_RECV_BYTES per RECV_ENTRIES entry).
# The build fails unless that fits every profile's FW RAM. FW_RAM_MIN, when set,
# replaces every profile's RAM size (used by the guard's own test).
# The stack reserve holds the deepest call path: tools/fw_stack.py computes it from the
# compiler's call graph and frame sizes (-fcallgraph-info=su) at every build and fails
# the build when it exceeds the reserve.
FW_STACK_RESERVE := 1024
FW_MR_BYTES := 16
FW_RECV_BYTES := 40
FW_RAM_MIN :=
# FW_NET 1: the image with the network port's IPv4 layer (fw_net.c), for the profiles with
# a port; 0: the host-link image (build/firmware-link, make firmware-link) for the boards
# without a PHY, which fits every profile. Each image is checked against the profiles it serves.
FW_NET_PROFILES = $(foreach p,$(NF_PROFILES),$(if $(filter-out 0,$(NF_PROFILE_$(p)_NET_RX_SLOTS)),$(p)))
FW_BUDGET = $(foreach p,$(if $(filter 1,$(FW_NET)),$(FW_NET_PROFILES),$(NF_PROFILES)),$(p):$(or $(FW_RAM_MIN),$(NF_PROFILE_$(p)_FW_RAM_BYTES)):$(NF_PROFILE_$(p)_MPT_ENTRIES):$(NF_PROFILE_$(p)_RECV_ENTRIES))
FW_LINK_BUILD := $(BUILD)/firmware-link

RV_CC      := riscv64-unknown-elf-gcc
RV_OBJCOPY := riscv64-unknown-elf-objcopy
RV_SIZE    := riscv64-unknown-elf-size
RV_NM      := riscv64-unknown-elf-nm
RV_SPECS   := /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs
RV_CFLAGS  := -march=rv32i -mabi=ilp32 --specs=$(RV_SPECS) -std=c11 -Wall -Wextra -Werror \
              -ffreestanding -ffunction-sections -fdata-sections -I$(FW_INC) -I$(FW_DIR)/src \
              -DFW_STACK_RESERVE=$(FW_STACK_RESERVE) -DFW_MR_BYTES=$(FW_MR_BYTES) -DFW_RECV_BYTES=$(FW_RECV_BYTES) \
              -DFW_NET=$(FW_NET)
RV_LDFLAGS := -nostartfiles -Wl,--gc-sections -Wl,--no-warn-rwx-segments -T $(FW_DIR)/link.ld

.PHONY: firmware model test-firmware test-firmware-sim test-fuzz-firmware fuzz-firmware fuzz-firmware-net lint-firmware

firmware: $(FW_BUILD)/nf_fw.hex ## build the RISC-V firmware image
.PHONY: firmware-link
firmware-link: ## build the host-link image (no network port: the boards without a PHY) in build/firmware-link
	@$(MAKE) --no-print-directory FW_BUILD=$(FW_LINK_BUILD) FW_NET=0 firmware

# The files on the work-request path (link, messages, WRs, tables) are built for speed
# (-O2 inlines the small helpers -Os keeps as calls); the rest for size, since the image
# shares the firmware RAM with the key-table shadow and the receive pool.
FW_HOT_SRCS := $(addprefix $(FW_DIR)/src/,fw_link.c fw_link_rx.c fw_link_tx.c fw_msg.c fw_wr.c fw_send.c fw_wr_common.c fw_tables.c)
FW_COLD_SRCS := $(filter-out $(FW_HOT_SRCS),$(FW_TARGET_SRCS))
FW_HOT_OPT := -O2
FW_COLD_OPT := -Os
FW_OBJS := $(patsubst $(FW_DIR)/src/%.c,$(FW_BUILD)/obj/%.o,$(FW_TARGET_SRCS))

# Each object comes with its call graph (.ci: frames and calls, for tools/fw_stack.py).
$(FW_BUILD)/obj/%.o $(FW_BUILD)/obj/%.ci: $(FW_DIR)/src/%.c $(FW_DIR)/firmware.mk
	@mkdir -p $(@D)
	$(RV_CC) $(RV_CFLAGS) $(if $(filter $<,$(FW_HOT_SRCS)),$(FW_HOT_OPT),$(FW_COLD_OPT)) $(DEPFLAGS) -fcallgraph-info=su -c $< -o $(@D)/$*.o
# Each object's headers, as the compiler found them (-MMD -MP).
-include $(wildcard $(FW_BUILD)/obj/*.d)

$(FW_BUILD)/nf_fw.elf: $(FW_OBJS) $(FW_DIR)/link.ld $(FW_DIR)/firmware.mk
	@mkdir -p $(FW_BUILD)
	$(RV_CC) $(RV_CFLAGS) $(RV_LDFLAGS) -Wl,-Map=$(FW_BUILD)/nf_fw.map $(FW_OBJS) -o $@

$(FW_BUILD)/nf_fw.bin: $(FW_BUILD)/nf_fw.elf
	$(RV_OBJCOPY) -O binary $< $@

$(FW_BUILD)/nf_fw.hex: $(FW_BUILD)/nf_fw.bin $(FW_DIR)/tools/bin2hex.py $(ROOT)/tools/fw_stack.py $(FW_OBJS:.o=.ci)
	python3 $(FW_DIR)/tools/bin2hex.py $< $@
	@$(RV_SIZE) $(FW_BUILD)/nf_fw.elf
	@end=$$(( 0x$$($(RV_NM) $(FW_BUILD)/nf_fw.elf | awk '$$3 == "_end" { print $$1 }') )); \
	 end=$$(( (end + $(FW_MR_BYTES) - 1) / $(FW_MR_BYTES) * $(FW_MR_BYTES) )); bad=0; \
	 for b in $(FW_BUDGET); do IFS=: read -r name ram mpt recv <<< "$$b"; ram=$$(( ram )); mpt=$$(( mpt )); recv=$$(( recv )); \
	   need=$$(( end + mpt * $(FW_MR_BYTES) + recv * $(FW_RECV_BYTES) )); \
	   echo "firmware: $$name: image with stack $$end + key-table shadow $$(( mpt * $(FW_MR_BYTES) )) + receive pool $$(( recv * $(FW_RECV_BYTES) )) = $$need of $$ram bytes of FW RAM"; \
	   if [ $$need -gt $$ram ]; then echo "firmware: does not fit the $$name profile's $$ram bytes of FW RAM" >&2; bad=1; fi; \
	 done; if [ $$bad = 1 ]; then rm -f $@; exit 1; fi
	@python3 $(ROOT)/tools/fw_stack.py --elf $(FW_BUILD)/nf_fw.elf --reserve $(FW_STACK_RESERVE) $(FW_OBJS:.o=.ci) || \
	 { rm -f $@; exit 1; }

# ---- host build ----
FW_HOST_SRCS := $(FW_CORE_SRCS) $(FW_DIR)/host/hw_model.c $(FW_DIR)/host/hw_net_model.c $(ENGINE_MODEL_DIR)/nf_engine_model.c $(ROOT)/proto/c/nf_frame.c
FW_HOST_HDRS := $(FW_HDRS) $(FW_DIR)/host/hw_model.h $(FW_DIR)/host/hw_net_model.h $(ENGINE_MODEL_DIR)/nf_engine_model.h $(ROOT)/proto/c/nf_frame.h $(ROOT)/sim/nf_mii_phy.h $(ROOT)/sim/nf_listen.h
FW_HOST_CFLAGS := $(HOST_CFLAGS) -DNF_HOST_BUILD -I$(FW_DIR)/src -I$(FW_DIR)/host -I$(ENGINE_MODEL_DIR) -I$(ROOT)/sim

model: $(MODEL_BUILD)/nfmodel ## build the software adapter nfmodel (firmware host build + C models)

$(MODEL_BUILD)/nfmodel: $(FW_HOST_SRCS) $(FW_DIR)/host/nfmodel.c $(FW_DIR)/host/wire_ep.c $(FW_DIR)/host/wire_ep.h $(ROOT)/sim/nf_wire_proto.h $(FW_HOST_HDRS)
	@mkdir -p $(MODEL_BUILD)
	$(HOST_CC) $(FW_HOST_CFLAGS) $(FW_HOST_SRCS) $(FW_DIR)/host/nfmodel.c $(FW_DIR)/host/wire_ep.c -o $@

# The unit tests: cases in test_fw*.c, requests and main in fw_test.c, the host side of
# the link in tb.c.
FW_TEST_SRCS := $(addprefix $(FW_DIR)/tests/,fw_test.c test_fw.c test_fw_mr.c test_fw_wr.c test_fw_send.c test_fw_mw.c test_fw_net.c tb.c)
FW_TB_HDRS := $(FW_DIR)/tests/tb.h $(FW_DIR)/tests/fw_test.h $(ROOT)/tests/tap.h

$(MODEL_BUILD)/test_fw: $(FW_HOST_SRCS) $(FW_TEST_SRCS) $(FW_TB_HDRS) $(FW_HOST_HDRS)
	@mkdir -p $(MODEL_BUILD)
	$(HOST_CC) $(FW_HOST_CFLAGS) -I$(ROOT)/tests $(FW_HOST_SRCS) $(FW_TEST_SRCS) -o $@

$(MODEL_BUILD)/test_fw_san: $(FW_HOST_SRCS) $(FW_TEST_SRCS) $(FW_TB_HDRS) $(FW_HOST_HDRS)
	@mkdir -p $(MODEL_BUILD)
	$(HOST_CC) $(FW_HOST_CFLAGS) $(SAN_FLAGS) -I$(ROOT)/tests $(FW_HOST_SRCS) $(FW_TEST_SRCS) -o $@

$(MODEL_BUILD)/test_fw_link: $(FW_HOST_SRCS) $(FW_DIR)/tests/test_fw_link.c $(FW_DIR)/tests/tb.c $(FW_TB_HDRS) $(FW_HOST_HDRS)
	@mkdir -p $(MODEL_BUILD)
	$(HOST_CC) $(FW_HOST_CFLAGS) $(SAN_FLAGS) -I$(ROOT)/tests $(FW_HOST_SRCS) $(FW_DIR)/tests/test_fw_link.c $(FW_DIR)/tests/tb.c -o $@

test-firmware: $(MODEL_BUILD)/test_fw $(MODEL_BUILD)/test_fw_san $(MODEL_BUILD)/test_fw_link $(FW_BUILD)/nf_fw.hex $(MODEL_BUILD)/nfmodel ## the firmware's host-build unit tests (also under ASan/UBSan), image checks, nfmodel
	@$(MODEL_BUILD)/test_fw
	@$(MODEL_BUILD)/test_fw_link
	@$(MODEL_BUILD)/test_fw_san --quiet --prefix san:
	@bash $(FW_DIR)/tests/test_image.sh $(ROOT) $(FW_BUILD)
	@bash $(FW_DIR)/tests/test_nfmodel.sh $(MODEL_BUILD)/nfmodel

# The real image on the Verilator RTL (needs the `sim` build).
test-firmware-sim: firmware sim ## the firmware on the Verilator SoC: boot and link checks
	@bash $(FW_DIR)/tests/test_fw_sim.sh $(BUILD)/sim/nfsim $(FW_BUILD)/nf_fw.hex

# ---- fuzzing ----
FUZZ_CC := clang
FUZZ_FLAGS := -std=c11 -g -O1 -Wall -Wextra -Werror -D_GNU_SOURCE -DNF_HOST_BUILD -fsanitize=fuzzer,address,undefined \
              -fno-sanitize-recover=all -I$(FW_INC) -I$(FW_DIR)/src -I$(FW_DIR)/host -I$(ENGINE_MODEL_DIR) -I$(ROOT)/proto/c -I$(ROOT)/sim
FUZZ_RUNS ?= 20000
FUZZ_NET_RUNS ?= 2000

$(MODEL_BUILD)/fuzz_fw: $(FW_HOST_SRCS) $(FW_DIR)/tests/fuzz_fw.c $(FW_DIR)/tests/tb.c $(FW_TB_HDRS) $(FW_HOST_HDRS)
	@mkdir -p $(MODEL_BUILD)
	$(FUZZ_CC) $(FUZZ_FLAGS) -I$(ROOT)/tests $(FW_HOST_SRCS) $(FW_DIR)/tests/fuzz_fw.c $(FW_DIR)/tests/tb.c -o $@

# The network port's frames, work requests on wire QPs and timer passes (fuzz_fw_net.c).
$(MODEL_BUILD)/fuzz_fw_net: $(FW_HOST_SRCS) $(FW_DIR)/tests/fuzz_fw_net.c $(FW_DIR)/tests/tb.c $(FW_TB_HDRS) $(FW_HOST_HDRS)
	@mkdir -p $(MODEL_BUILD)
	$(FUZZ_CC) $(FUZZ_FLAGS) -I$(ROOT)/tests $(FW_HOST_SRCS) $(FW_DIR)/tests/fuzz_fw_net.c $(FW_DIR)/tests/tb.c -o $@

fuzz-firmware-net: $(MODEL_BUILD)/fuzz_fw_net ## fuzz the firmware's network frames (open-ended: FUZZ_ARGS=...)
	@mkdir -p $(MODEL_BUILD)/fuzz-net-corpus
	$(MODEL_BUILD)/fuzz_fw_net $(FUZZ_ARGS) $(MODEL_BUILD)/fuzz-net-corpus

fuzz-firmware: $(MODEL_BUILD)/fuzz_fw ## fuzz the firmware's message handler (open-ended: FUZZ_ARGS=...)
	@mkdir -p $(MODEL_BUILD)/fuzz-corpus
	$(MODEL_BUILD)/fuzz_fw $(FUZZ_ARGS) $(MODEL_BUILD)/fuzz-corpus

test-fuzz-firmware: $(MODEL_BUILD)/fuzz_fw $(MODEL_BUILD)/fuzz_fw_net ## bounded libFuzzer runs: the firmware's messages, then its network frames
	@bash $(FW_DIR)/tests/run_fuzz.sh $(MODEL_BUILD)/fuzz_fw $(FUZZ_RUNS)
	@bash $(FW_DIR)/tests/run_fuzz.sh $(MODEL_BUILD)/fuzz_fw_net $(FUZZ_NET_RUNS) fuzz-firmware-net \
	    $(FW_DIR)/tests/fuzz_net_seeds.py 1024

# ---- lint ----
LINT_TARGETS += lint-firmware
lint-firmware:
	@cppcheck --quiet --error-exitcode=1 --enable=warning,style,performance,portability --std=c11 \
	    --inline-suppr --suppress=missingIncludeSystem -DNF_HOST_BUILD -DFW_STACK_RESERVE=$(FW_STACK_RESERVE) -I$(FW_INC) -I$(FW_DIR)/src -I$(FW_DIR)/host \
	    -I$(ENGINE_MODEL_DIR) -I$(ROOT)/proto/c \
	    $(FW_DIR)/src $(FW_DIR)/host
	@echo "lint-firmware: clean"
