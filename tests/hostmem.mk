# SPDX-License-Identifier: Apache-2.0
# Consumer buffers in host memory (tests/hostmem/, docs/host-memory.md): MDLs over
# ordinary memory, the bytes checked by the CPU at each hand-over NDK defines. The
# sanitized build runs on the software adapter, the plain one on the Verilator board.
#
#   make test-hostmem-model   on the software adapter (AddressSanitizer, UBSan)
#   make test-hostmem-sim     on the Verilator board

HOSTMEM_BIN := $(BUILD)/tests/hostmem
HOSTMEM_SRCS := tests/hostmem/hostmem.c
HOSTMEM_HDRS := tests/consumer.h tests/tap.h

.PHONY: test-hostmem-model test-hostmem-sim lint-hostmem
LINT_TARGETS += lint-hostmem

$(HOSTMEM_BIN): $(HOSTMEM_SRCS) $(HOSTMEM_HDRS) $$(NDK_BUILD)/libndkfpga.a host/include/ndkpi.h host/include/ndkfpga.h
	@mkdir -p $(@D)
	$(NDK_CONSUMER_CC) -o $@ $(HOSTMEM_SRCS) $(NDK_BUILD)/libndkfpga.a $(NDK_LIB_LIBS)

$(HOSTMEM_BIN)_san: $(HOSTMEM_SRCS) $(HOSTMEM_HDRS) $$(NDK_BUILD)/libndkfpga_san.a host/include/ndkpi.h \
                    host/include/ndkfpga.h
	@mkdir -p $(@D)
	$(NDK_CONSUMER_CC) -O1 $(SAN_FLAGS) -o $@ $(HOSTMEM_SRCS) $(NDK_BUILD)/libndkfpga_san.a $(NDK_LIB_LIBS)

test-hostmem-model: $(HOSTMEM_BIN)_san $(BUILD)/model/nfmodel ## buffers in host memory, every byte at each hand-over, on the software adapter (sanitized)
	@$(HOSTMEM_BIN)_san model

test-hostmem-sim: $(HOSTMEM_BIN) $(BUILD)/model/nfmodel sim ## buffers in host memory, every byte at each hand-over, on the Verilator board
	@$(HOSTMEM_BIN) sim

lint-hostmem:
	@cppcheck -q --std=c11 --enable=warning,style,performance,portability --error-exitcode=1 \
	    --inline-suppr --suppress=missingIncludeSystem -D__GNUC__ -D__x86_64__ \
	    -I host/include -I tests $(HOSTMEM_SRCS)
