# SPDX-License-Identifier: Apache-2.0
# The idioms test (tests/idioms/): a consumer written the way code for Microsoft's
# ndkpi.h is written, built three ways from one source (gcc C11, g++ C++17, clang
# C11, each -Wall -Wextra -Werror) and run on an adapter, after both public headers
# pass -fsyntax-only with every compiler at -m32 and -m64. Only the public headers.
#
#   make test-idioms        the header checks, then the three builds on "model"
#   make test-idioms-sim    the C build on the Verilator board ("sim")
#   build/tests/idioms/idioms_gcc [DEVICE]

IDIOMS_BUILD := $(BUILD)/tests/idioms
IDIOMS_SRC := tests/idioms/idioms.c
IDIOMS_FLAGS = -Wall -Wextra -Werror -O1 -g -I$(ROOT)/host/include -pthread
IDIOMS_DEPS = $(IDIOMS_SRC) $(NDK_BUILD)/libndkfpga.a host/include/ndkpi.h host/include/ndkfpga.h
IDIOMS_BINS := $(IDIOMS_BUILD)/idioms_gcc $(IDIOMS_BUILD)/idioms_gxx $(IDIOMS_BUILD)/idioms_clang
# The compilers whose -m32 and -m64 front ends must accept the headers.
IDIOMS_HEADER_CCS := "gcc -std=c11 -x c" "g++ -std=c++17 -x c++" "clang -std=c11 -x c"

.PHONY: test-idioms test-idioms-sim lint-idioms
LINT_TARGETS += lint-idioms

$(IDIOMS_BUILD)/idioms_gcc: $$(IDIOMS_DEPS)
	@mkdir -p $(@D)
	gcc -std=c11 $(IDIOMS_FLAGS) -o $@ $(IDIOMS_SRC) $(NDK_BUILD)/libndkfpga.a $(NDK_LIB_LIBS)

$(IDIOMS_BUILD)/idioms_gxx: $$(IDIOMS_DEPS)
	@mkdir -p $(@D)
	g++ -std=c++17 $(IDIOMS_FLAGS) -x c++ -o $@ $(IDIOMS_SRC) -x none $(NDK_BUILD)/libndkfpga.a $(NDK_LIB_LIBS)

$(IDIOMS_BUILD)/idioms_clang: $$(IDIOMS_DEPS)
	@mkdir -p $(@D)
	clang -std=c11 $(IDIOMS_FLAGS) -o $@ $(IDIOMS_SRC) $(NDK_BUILD)/libndkfpga.a $(NDK_LIB_LIBS)

test-idioms: $(IDIOMS_BINS) $(BUILD)/model/nfmodel ## ndkpi.h consumer idioms: C11, C++17 and clang builds on the software adapter; headers at -m32/-m64
	@rc=0; \
	for cc in $(IDIOMS_HEADER_CCS); do for m in -m32 -m64; do \
	    if printf '#include "ndkpi.h"\n#include "ndkfpga.h"\n' | \
	        $$cc $$m -Wall -Wextra -Werror -fsyntax-only -I$(ROOT)/host/include -; then \
	        echo "ok - headers: $$cc $$m -fsyntax-only"; \
	    else echo "not ok - headers: $$cc $$m -fsyntax-only"; rc=1; fi; \
	done; done; \
	for b in $(IDIOMS_BINS); do \
	    echo "# $$(basename $$b) on model"; $$b model || rc=1; \
	done; exit $$rc

test-idioms-sim: $(IDIOMS_BUILD)/idioms_gcc sim ## the ndkpi.h idioms consumer (C build) on the Verilator board
	@$(IDIOMS_BUILD)/idioms_gcc sim

lint-idioms:
	@cppcheck -q --std=c11 --enable=warning,style,performance,portability --error-exitcode=1 \
	    --inline-suppr --suppress=missingIncludeSystem -D__GNUC__ -D__x86_64__ \
	    -I host/include $(IDIOMS_SRC)
