# ndkfpga: an open RDMA adapter's memory-registration path on an ECP5 FPGA.
# `make help` lists the targets. Each area keeps its rules in its own fragment
# (rtl/*/*.mk, firmware/firmware.mk, sim/sim.mk, host/*.mk, ...), included below.
# Every build output goes under build/.

SHELL := /bin/bash
.DEFAULT_GOAL := help
ROOT := $(abspath .)
BUILD := $(ROOT)/build
PY := $(ROOT)/.venv/bin/python
SETUP_STAMP := $(BUILD)/.setup-stamp
NPROC := $(shell nproc 2>/dev/null || echo 2)

# Host C: C11, warnings are errors (firmware.mk sets its own for rv32).
HOST_CC ?= cc
HOST_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I$(ROOT)/firmware/include
HOST_CXX ?= c++
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# Verilator: lint flags for every module, speed flags for models.
VERILATOR ?= verilator
VLINT := --lint-only -Wall -I$(ROOT)/rtl/include
VFAST := -O3 --x-assign fast --x-initial fast --noassert

# Filled by the fragments.
TEST_TARGETS :=
LINT_TARGETS :=
BENCH_TARGETS :=
CLEAN_DIRS :=

-include $(BUILD)/toolchain.mk

.PHONY: help setup generate check-generated firmware sim demo test test-quick bench bench-report \
        bitstream flash lint install clean formal

help: ## list the targets
	@echo "ndkfpga make targets:"
	@grep -hE '^[a-zA-Z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | \
	    awk 'BEGIN{FS=":.*## "} !seen[$$1]++ {printf "  %-20s %s\n", $$1, $$2}' | sort

setup: $(SETUP_STAMP) ## install Debian packages and the .venv tools (idempotent)
$(SETUP_STAMP): tools/setup.sh
	bash tools/setup.sh
	@touch $@

generate: ## regenerate headers and docs from tools/layout.toml
	python3 tools/genlayout.py

check-generated: ## fail when a generated file differs from what the generator makes now
	python3 tools/genlayout.py --check
	@echo "check-generated: up to date"

test: $(SETUP_STAMP) ## run every test suite of every layer; prints "N passed, M failed"
	@python3 tools/testrun.py $(TEST_TARGETS)

lint: $(SETUP_STAMP) ## Verilator -Wall lint of all RTL, cppcheck of all C
	@set -e; for t in $(LINT_TARGETS); do $(MAKE) --no-print-directory -s $$t; done
	@echo "lint: clean"

bench: $(SETUP_STAMP) ## run the benchmarks, print the table, write build/bench/results.json
	@if [ -z "$(BENCH_TARGETS)" ]; then echo "bench: not built yet (issue [bench])" >&2; exit 2; fi
	@set -e; for t in $(BENCH_TARGETS); do $(MAKE) --no-print-directory -s $$t; done

clean: ## remove build outputs (keeps .venv)
	rm -rf $(filter-out $(BUILD)/toolchain.mk,$(wildcard $(BUILD)/*)) $(CLEAN_DIRS)
	rm -f $(SETUP_STAMP)

include $(sort $(wildcard rtl/*/*.mk)) $(sort $(wildcard rtl/*/*/*.mk)) $(sort $(wildcard firmware/*.mk)) $(sort $(wildcard sim/*.mk)) \
        $(sort $(wildcard host/*.mk)) $(sort $(wildcard tests/*.mk)) $(sort $(wildcard examples/*.mk)) \
        $(sort $(wildcard bench/*.mk)) $(sort $(wildcard constraints/*.mk)) $(sort $(wildcard tools/*.mk))

# Targets a later issue fills: a clear error until then, never a silent success.
define not_built
	@echo "$@: not built yet ($(1))" >&2; exit 2
endef
ifndef HAVE_FIRMWARE
firmware: ## build the RISC-V firmware image
	$(call not_built,issue [link])
endif
ifndef HAVE_SIM
sim: ## build the Verilator board model
	$(call not_built,issue [link])
endif
ifndef HAVE_DEMO
demo: ## run the example consumer against the simulation
	$(call not_built,issue [ndkpi])
endif
ifndef HAVE_BITSTREAM
bitstream: ## build a bitstream: BOARD=ulx3s DEVICE=85k|25k or BOARD=ecp5-evn
	$(call not_built,issue [board])
flash: ## program the board: BOARD=ulx3s [FLASH=1]
	$(call not_built,issue [board])
endif
ifndef HAVE_INSTALL
install: ## install library, headers, pkg-config file, simulator, firmware: PREFIX=DIR
	$(call not_built,issue [ndkpi])
endif
ifndef HAVE_FORMAL
formal: ## SymbiYosys proof of the key-check unit
	$(call not_built,issue [engine])
endif
ifndef HAVE_BENCH_REPORT
bench-report: ## regenerate docs/performance.md and its plots
	$(call not_built,issue [bench])
endif

# The foundation's own tests: the generator and the generated headers.
TEST_TARGETS += test-layout
LINT_TARGETS += lint-layout
test-layout: $(SETUP_STAMP)
	@bash tools/test_layout.sh
lint-layout:
	@$(VERILATOR) $(VLINT) tools/layout_lint_top.v
