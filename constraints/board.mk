# Board flow (issue [board]): bitstreams, firmware swap, flashing. See tools/bitstream.sh
# and docs/boards.md.
#   make bitstream BOARD=ulx3s DEVICE=85k|25k|45k    or    BOARD=ecp5-evn
#   make bitstream-firmware BOARD=... DEVICE=...       new firmware, no place and route
#   make flash BOARD=ulx3s [FLASH=1]                   openFPGALoader (SRAM, or SPI flash)
#   make test-bitstream                                ULX3S 85F and 25F, timing, swap
BOARD ?= ulx3s
DEVICE ?= 85k
HAVE_BITSTREAM := 1
BOARD_OUT = $(BUILD)/board/$(BOARD)-$(DEVICE)
OFL_BOARD = $(if $(filter ecp5-evn,$(BOARD)),ecp5_evn,$(if $(filter ulx3s,$(BOARD)),ulx3s,))
# Boards test-bitstream builds (each a full synthesis and place and route).
BITSTREAM_TEST_BOARDS ?= ulx3s-85k ulx3s-25k
CLEAN_DIRS += $(BUILD)/board

.PHONY: bitstream bitstream-firmware flash lint-board test-bitstream
bitstream: $(SETUP_STAMP) firmware ## build a bitstream: BOARD=ulx3s DEVICE=85k|25k or BOARD=ecp5-evn
	@bash tools/bitstream.sh $(BOARD) $(DEVICE)

bitstream-firmware: $(SETUP_STAMP) firmware ## swap the current firmware into the last bitstream (no place and route)
	@bash tools/bitstream.sh --firmware-only $(BOARD) $(DEVICE)

flash: ## program the board: BOARD=ulx3s|ecp5-evn [DEVICE=85k] [FLASH=1 writes the SPI flash]
	@test -n "$(OFL_BOARD)" || { echo "flash: unknown BOARD '$(BOARD)' (ulx3s, ecp5-evn)" >&2; exit 2; }
	@test -f $(BOARD_OUT)/nf.bit || { echo "flash: $(BOARD_OUT)/nf.bit missing: run make bitstream BOARD=$(BOARD) DEVICE=$(DEVICE)" >&2; exit 2; }
	@command -v openFPGALoader >/dev/null || { echo "flash: openFPGALoader not installed: make setup" >&2; exit 2; }
	@openFPGALoader -b $(OFL_BOARD) --detect >/dev/null 2>&1 || { \
	    echo "flash: no $(BOARD) board found on USB (openFPGALoader -b $(OFL_BOARD) --detect failed)." >&2; \
	    echo "flash: check the USB cable, and that the udev rule is installed (tools/99-ndkfpga.rules, see docs/boards.md)." >&2; \
	    exit 2; }
	openFPGALoader -b $(OFL_BOARD) $(if $(FLASH),-f) $(BOARD_OUT)/nf.bit

# Full builds of the boards in BITSTREAM_TEST_BOARDS: bitstream built with timing met,
# then a firmware swap into the placed design checked (tools/fw_swap_check.py).
test-bitstream: $(SETUP_STAMP) firmware
	@fail=0; for bd in $(BITSTREAM_TEST_BOARDS); do \
	    b=$${bd%-*}; d=$${bd##*-}; out=$(BUILD)/board/$$bd; \
	    if bash tools/bitstream.sh $$b $$d > $(BUILD)/board/test-$$bd.log 2>&1; then \
	        echo "ok - bitstream $$bd: $$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(f"{s["fmax_mhz"]} MHz of {s["target_mhz"]} MHz, {s["luts"]} LUT4, {s["ebr"]} EBR")' $$out/summary.json)"; \
	    else echo "not ok - bitstream $$bd (see $(BUILD)/board/test-$$bd.log)"; tail -5 $(BUILD)/board/test-$$bd.log; fail=1; continue; fi; \
	    if bash tools/bitstream.sh --firmware-only $$b $$d > $(BUILD)/board/test-$$bd-swap.log 2>&1 && \
	       grep -q '^bitstream: firmware swap: swapped' $(BUILD)/board/test-$$bd-swap.log; then \
	        echo "ok - firmware swap $$bd without place and route"; \
	    else echo "not ok - firmware swap $$bd (see $(BUILD)/board/test-$$bd-swap.log)"; fail=1; fi; \
	done; exit $$fail

LINT_TARGETS += lint-board
BOARD_LINT_SRCS = rtl/board/*.v rtl/board/lint/*.v rtl/soc/*.v rtl/link/*.v rtl/engine/*.v $(PICORV32_DIR)/picorv32.v
lint-board:
	@for top in nf_board_ulx3s nf_board_ecp5_evn; do \
	    $(VERILATOR) $(VLINT) --timescale 1ns/1ps tools/third_party.vlt --top-module $$top $(BOARD_LINT_SRCS) || exit 1; \
	done
