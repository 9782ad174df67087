# Board flow: bitstreams, firmware swap, flashing. See tools/bitstream.sh.
BOARD ?= ulx3s
DEVICE ?= 85k
HAVE_BITSTREAM := 1
BOARD_OUT = $(BUILD)/board/$(BOARD)-$(DEVICE)
OFL_BOARD = $(if $(filter ecp5-evn,$(BOARD)),ecp5_evn,ulx3s)

.PHONY: bitstream bitstream-firmware flash lint-board
bitstream: $(SETUP_STAMP) firmware ## build a bitstream: BOARD=ulx3s DEVICE=85k|25k or BOARD=ecp5-evn
	bash tools/bitstream.sh $(BOARD) $(DEVICE)

bitstream-firmware: $(SETUP_STAMP) firmware ## swap a new firmware into the last bitstream (no place and route)
	@test -f $(BOARD_OUT)/nf_placeholder.config || { echo "bitstream-firmware: run make bitstream BOARD=$(BOARD) DEVICE=$(DEVICE) first" >&2; exit 2; }
	bash tools/bitstream.sh --firmware-only $(BOARD) $(DEVICE)

flash: ## program the board: BOARD=ulx3s|ecp5-evn [DEVICE=85k] [FLASH=1 writes SPI flash]
	@test -f $(BOARD_OUT)/nf.bit || { echo "flash: $(BOARD_OUT)/nf.bit missing: run make bitstream BOARD=$(BOARD) DEVICE=$(DEVICE)" >&2; exit 2; }
	@command -v openFPGALoader >/dev/null || { echo "flash: openFPGALoader not installed: make setup" >&2; exit 2; }
	@openFPGALoader --detect -b $(OFL_BOARD) >/dev/null 2>&1 || { echo "flash: no $(BOARD) board found on USB (openFPGALoader --detect -b $(OFL_BOARD) failed); is it plugged in and the udev rule (tools/99-ndkfpga.rules) installed?" >&2; exit 2; }
	openFPGALoader -b $(OFL_BOARD) $(if $(FLASH),-f) $(BOARD_OUT)/nf.bit

LINT_TARGETS += lint-board
BOARD_LINT_SRCS = rtl/board/*.v rtl/board/lint/*.v rtl/soc/*.v rtl/link/*.v rtl/engine/*.v $(PICORV32_DIR)/picorv32.v
lint-board:
	@for top in nf_board_ulx3s nf_board_ecp5_evn; do \
	    $(VERILATOR) $(VLINT) tools/third_party.vlt --top-module $$top $(BOARD_LINT_SRCS) || exit 1; \
	done
