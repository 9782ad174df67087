# SPDX-License-Identifier: Apache-2.0
# Board flow: bitstreams, firmware swap, flashing. See tools/bitstream.sh
# and docs/boards.md. The boards are proto/boards.toml's [[board]] entries (NF_BOARDS).
#   make bitstream BOARD=ulx3s DEVICE=85k              builds the board BOARD-DEVICE (or BOARD=ulx3s-85k)
#   make bitstream-firmware BOARD=... DEVICE=...       new firmware, no place and route (a full build the first time)
#   make flash BOARD=ulx3s [FLASH=1]                   openFPGALoader (SRAM, or SPI flash)
#   make test-bitstream                                the tested boards: timing, swap, resources
#   make timing-seeds                                  each tested board placed with seeds 1..5 (constraints/timing_seeds.json)
BOARD ?= ulx3s
DEVICE ?= 85k
# The board's name in proto/boards.toml: BOARD-DEVICE, or BOARD when that names a board already;
# tools/bitstream.sh takes it as BOARD_BASE BOARD_DEVICE.
# A BOARD that is the prefix of one board alone names it (BOARD=colorlight-i9).
BOARD_NAME = $(if $(filter $(BOARD),$(NF_BOARDS)),$(BOARD),$(if $(filter $(BOARD)-$(DEVICE),$(NF_BOARDS)),$(BOARD)-$(DEVICE),$(if $(filter 1,$(words $(filter $(BOARD)-%,$(NF_BOARDS)))),$(filter $(BOARD)-%,$(NF_BOARDS)),$(BOARD)-$(DEVICE))))
BOARD_DEVICE = $(lastword $(subst -, ,$(BOARD_NAME)))
BOARD_BASE = $(BOARD_NAME:%-$(BOARD_DEVICE)=%)
BOARD_OUT = $(BUILD)/board/$(BOARD_NAME)
# Boards' names as in make variables: ulx3s-85k -> ULX3S_85K.
board_key = $(shell echo '$1' | tr 'a-z-' 'A-Z_')
BOARD_KEY = $(call board_key,$(BOARD_NAME))
OFL_BOARD = $(call NF_BOARD,$(BOARD_KEY),programmer)
# Boards test-bitstream builds (each a full synthesis and place and route), and how many
# build at once (each nextpnr takes one core).
BITSTREAM_TEST_BOARDS ?= $(NF_BOARDS_TESTED)
BITSTREAM_JOBS ?= 2
# The seed sweep: the boards, the seeds, and how many nextpnr run at once.
TIMING_SEEDS_BOARDS ?= $(NF_BOARDS_TESTED)
TIMING_SEEDS ?= 1 2 3 4 5
TIMING_SEEDS_JOBS ?= 2
CLEAN_DIRS += $(BUILD)/board
# The boards' CPU is the SoC's (rtl/soc/soc.mk NF_CPU): tools/bitstream.sh synthesizes it.
BOARD_CPU_ENV = NF_CPU=$(NF_CPU) CPU_RTL=$(CPU_RTL)

.PHONY: bitstream bitstream-firmware flash lint-board test-bitstream
bitstream: $(SETUP_STAMP) firmware firmware-link ## build a bitstream: BOARD=ulx3s DEVICE=85k (boards: docs/layout.md)
	@$(BOARD_CPU_ENV) bash tools/bitstream.sh $(BOARD_BASE) $(BOARD_DEVICE)

bitstream-firmware: $(SETUP_STAMP) firmware firmware-link ## swap the current firmware into the last bitstream (no place and route)
	@$(BOARD_CPU_ENV) bash tools/bitstream.sh --firmware-only $(BOARD_BASE) $(BOARD_DEVICE)

# The board is looked for first: with none there, nothing is built.
flash: $(SETUP_STAMP) ## program the board: BOARD=ulx3s DEVICE=85k [FLASH=1 writes the SPI flash]
	@test -n "$(OFL_BOARD)" || { echo "flash: unknown board '$(BOARD_NAME)' ($(NF_BOARDS))" >&2; exit 2; }
	@command -v openFPGALoader >/dev/null || { echo "flash: openFPGALoader not installed: make setup" >&2; exit 2; }
	@openFPGALoader -b $(OFL_BOARD) --detect >/dev/null 2>&1 || { \
	    echo "flash: no $(BOARD_NAME) board found on USB (openFPGALoader -b $(OFL_BOARD) --detect failed)." >&2; \
	    echo "flash: check the USB cable, and that the udev rule is installed (tools/99-ndkfpga.rules, see docs/boards.md)." >&2; \
	    exit 2; }
	@test -f $(BOARD_OUT)/nf.bit || { echo "flash: no bitstream for $(BOARD_NAME) yet: building it first"; \
	    $(MAKE) --no-print-directory bitstream BOARD=$(BOARD_NAME); }
	openFPGALoader -b $(OFL_BOARD) $(if $(FLASH),-f) $(BOARD_OUT)/nf.bit

# Full builds of the boards in BITSTREAM_TEST_BOARDS (timing must be met), each followed
# by a firmware swap without place and route: another image in, then the firmware back.
# Each takes minutes (its times.txt); they are part of make test.
# BITSTREAM_JOBS boards build at once; each places with its first seed only.
test-bitstream: $(SETUP_STAMP) firmware firmware-link ## build the tested boards' bitstreams (minutes each), check timing, resources and the firmware swap
	@$(BOARD_CPU_ENV) BITSTREAM_JOBS=$(BITSTREAM_JOBS) bash tools/test_bitstream.sh $(BITSTREAM_TEST_BOARDS)

# Each board synthesized once and placed with every seed of TIMING_SEEDS (build/board/NAME/
# seeds.json), collected into constraints/timing_seeds.json, which the board table shows.
.PHONY: timing-seeds
timing-seeds: $(SETUP_STAMP) firmware firmware-link ## place each tested board with seeds 1..5 (an hour or more), write constraints/timing_seeds.json
	@$(BOARD_CPU_ENV) TIMING_SEEDS="$(TIMING_SEEDS)" TIMING_SEEDS_JOBS=$(TIMING_SEEDS_JOBS) bash tools/timing_seeds.sh $(TIMING_SEEDS_BOARDS)

LINT_TARGETS += lint-board
BOARD_LINT_SRCS = rtl/board/*.v rtl/board/lint/*.v rtl/soc/*.v rtl/link/*.v rtl/engine/*.v rtl/net/*.v sim/models/*.v $(CPU_RTL)
lint-board:
	@for top in $(sort $(foreach k,$(call board_key,$(NF_BOARDS)),$(call NF_BOARD,$(k),top))); do \
	    $(VERILATOR) $(VLINT) --timescale 1ns/1ps $(SOC_DIR)/cpu.vlt --top-module $$top $(BOARD_LINT_SRCS) || exit 1; \
	done

# The board table in docs/boards.md is written from the summaries.
.PHONY: board-figures
board-figures: ## write the last test-bitstream's figures (Fmax, LUT/FF/EBR) and the seed table into docs/boards.md
	@python3 tools/board_figures.py
