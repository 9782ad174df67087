# SPDX-License-Identifier: Apache-2.0
# ndkfpga: an open RDMA adapter's memory-registration path on an ECP5 FPGA.
# `make help` lists the targets. Each area keeps its rules in its own fragment
# (rtl/*/*.mk, firmware/firmware.mk, sim/sim.mk, host/*.mk, ...), included below.
# Every build output goes under build/.

SHELL := /bin/bash
.DEFAULT_GOAL := help
ROOT := $(abspath .)
BUILD := $(ROOT)/build
PY := $(ROOT)/.venv/bin/python
# Written by tools/setup.sh (which tools to use); stands for "setup has run".
SETUP_STAMP := $(BUILD)/toolchain.mk
NPROC := $(shell nproc 2>/dev/null || echo 2)

# Host C: C11, warnings are errors (firmware.mk sets its own for rv32).
HOST_CC ?= cc
HOST_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I$(ROOT)/proto/gen -I$(ROOT)/proto/c
HOST_CXX ?= c++
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# An object rule's header dependencies: the compiler writes them beside the object (.d).
DEPFLAGS := -MMD -MP

# Verilator: lint flags for every module, speed flags for models.
VERILATOR ?= verilator
VLINT := --lint-only -Wall -I$(ROOT)/proto/gen
VFAST := -O3 --x-assign fast --x-initial fast --noassert

# A path relative to the top (the yowasp tools see the file system through WASI, and
# only paths below the working directory are sure to be reachable there).
rel = $(patsubst $(ROOT)/%,%,$(1))

# Filled by the fragments (the test suites are listed in tests/suites.toml instead).
LINT_TARGETS :=
BENCH_TARGETS :=
CLEAN_DIRS :=

# The quick-start goals (demo, check, test) run setup first when it has not run, or when
# tools/setup.sh changed since; any other goal that needs the tools stops and says to run
# make setup. Goals that need nothing installed do neither.
NO_SETUP_GOALS := help setup clean generate check-generated uninstall check-readme
SETUP_GOALS := demo check test
GOALS := $(or $(MAKECMDGOALS),$(.DEFAULT_GOAL))
ifneq ($(filter $(SETUP_GOALS),$(GOALS)),)
include $(SETUP_STAMP)
$(SETUP_STAMP): tools/setup.sh
	@echo "setup: make $(firstword $(filter $(SETUP_GOALS),$(GOALS))) runs make setup first (Debian packages, .venv: tools/setup.sh)"
	@bash tools/setup.sh
else ifneq ($(filter-out $(NO_SETUP_GOALS),$(GOALS)),)
ifeq ($(wildcard $(SETUP_STAMP)),)
$(error run make setup first: it installs the Debian packages and the .venv that make $(firstword $(filter-out $(NO_SETUP_GOALS),$(GOALS))) needs (make demo, make check and make test run it themselves))
endif
include $(SETUP_STAMP)
else
-include $(SETUP_STAMP)
endif

.PHONY: help setup generate check-generated check test bench lint clean test-lint test-suites test-make-order

help: ## list the targets, then every test suite by tier (tests/suites.toml)
	@echo "ndkfpga make targets:"
	@grep -hE '^[a-zA-Z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | grep -vE '^test-[a-zA-Z0-9_.-]+:' | \
	    awk 'BEGIN{FS=":.*## "} !seen[$$1]++ {printf "  %-20s %s\n", $$1, $$2}' | sort
	@python3 tools/testrun.py --list $(MAKEFILE_LIST)

setup: ## install the Debian packages and the .venv tools (idempotent; demo, check and test run it first)
	@bash tools/setup.sh

generate: ## regenerate the headers, docs, register decoders, make fragment and Python module from the contract, proto/*.toml
	python3 tools/genlayout.py
	python3 tools/genregs.py

check-generated: ## fail when a generated file differs from what the generator makes now
	python3 tools/genlayout.py --check
	python3 tools/genregs.py --check
	@echo "check-generated: up to date"

# The suites and their tiers: tests/suites.toml. TEST_JOBS: suites run at once.
TEST_JOBS ?= $(NPROC)
check: $(SETUP_STAMP) ## the inner loop: the suites of tier check (unit, software adapter, rules, lint); "N passed, M failed"
	@python3 tools/testrun.py --tier check --jobs $(TEST_JOBS)

test: $(SETUP_STAMP) ## every suite of every tier (check, sim, fpga); prints "N passed, M failed"
	@python3 tools/testrun.py --tier all --jobs $(TEST_JOBS)

lint: $(SETUP_STAMP) ## Verilator -Wall lint of all RTL, cppcheck of all C
	@set -e; for t in $(LINT_TARGETS); do $(MAKE) --no-print-directory -s $$t; done
	@echo "lint: clean"

test-lint: $(SETUP_STAMP) ## every lint target (Verilator -Wall, cppcheck) as one case each
	@rc=0; for t in $(LINT_TARGETS); do \
	    if out=$$($(MAKE) --no-print-directory -s $$t 2>&1); then echo "ok - $$t"; \
	    else echo "not ok - $$t"; echo "$$out" | sed 's/^/# /'; rc=1; fi; done; exit $$rc

test-suites: ## tests/suites.toml lists every test-* rule once, each with a description and a tier
	@python3 tools/testrun.py --check-manifest

test-make-order: ## the makefile fragments give the same rules and variables in either include order
	@python3 tools/test_make_order.py

bench: $(SETUP_STAMP) ## run the benchmarks, print the table, write build/bench/results.json
	@set -e; for t in $(BENCH_TARGETS); do $(MAKE) --no-print-directory -s $$t; done

clean: ## remove build outputs (keeps .venv)
	rm -rf $(filter-out $(SETUP_STAMP),$(wildcard $(BUILD)/*)) $(CLEAN_DIRS)

# The layout's constants and profile sizes (generated from proto/*.toml), before the
# fragments that use them.
include proto/gen/nf_layout.mk
MK_FRAGMENTS := $(sort $(wildcard rtl/*/*.mk)) $(sort $(wildcard rtl/*/*/*.mk)) $(sort $(wildcard firmware/*.mk)) \
        $(sort $(wildcard sim/*.mk)) $(sort $(wildcard host/*.mk)) $(sort $(wildcard tests/*.mk)) \
        $(sort $(wildcard examples/*.mk)) $(sort $(wildcard bench/*.mk)) $(sort $(wildcard constraints/*.mk)) \
        $(sort $(wildcard tools/*.mk))
# A prerequisite that names another fragment's variable is written $$(VAR): expanded
# once every fragment is read.
.SECONDEXPANSION:
# NF_MK_REVERSE=1 includes them in reverse order: test-make-order checks that every rule
# comes out the same, so no fragment depends on being read before another.
mk_reverse = $(if $(1),$(call mk_reverse,$(wordlist 2,$(words $(1)),$(1))) $(firstword $(1)))
include $(if $(NF_MK_REVERSE),$(call mk_reverse,$(MK_FRAGMENTS)),$(MK_FRAGMENTS))

# The foundation's own tests: the generator and the generated headers.
LINT_TARGETS += lint-layout
test-layout: $(SETUP_STAMP) ## the layout generator and the generated headers (proto/*.toml)
	@bash tools/test_layout.sh
lint-layout:
	@$(VERILATOR) $(VLINT) tools/layout_lint_top.v

# README's quick start is what CI runs first, verbatim: the two must not drift apart.
.PHONY: check-readme test-readme
check-readme: ## check that .ci/run runs README's quick-start commands verbatim, in order
	@python3 tools/readme_quickstart.py --check .ci/run
test-readme: ## README's quick start is what .ci/run runs
	@bash tools/test_readme_quickstart.sh
