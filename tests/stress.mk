# SPDX-License-Identifier: Apache-2.0
# Stress suite (tests/stress/): a consumer program of its own, built like the
# conformance suite against the in-tree library (public headers only), run on the
# software adapter at full scale and, built with ASan+UBSan (library included), at a
# smaller scale, and on the Verilator board at a tiny scale. Every case runs in a child
# process under a watchdog (tests/stress/README.md).
#
#   make test-stress-model    full scale on "model", then the sanitized build (small)
#   make test-stress-sim      tiny scale on "sim"
#   build/tests/stress [-s full|small|tiny] [DEVICE] [CASE ...]   one case alone

STRESS_BUILD := $(BUILD)/tests
STRESS_SRCS := $(sort $(wildcard tests/stress/*.c))
STRESS_HDRS := tests/stress/stress.h tests/consumer.h
STRESS_CC = $(NDK_CONSUMER_CC) -I$(ROOT)/tests/stress

.PHONY: stress test-stress-model test-stress-sim lint-stress
LINT_TARGETS += lint-stress

stress: $(STRESS_BUILD)/stress $(STRESS_BUILD)/stress_san ## build the stress suite build/tests/stress (and stress_san)

$(STRESS_BUILD)/stress: $(STRESS_SRCS) $(STRESS_HDRS) $$(NDK_BUILD)/libndkfpga.a host/include/ndkpi.h host/include/ndkfpga.h
	@mkdir -p $(@D)
	$(STRESS_CC) -o $@ $(STRESS_SRCS) $(NDK_BUILD)/libndkfpga.a $(NDK_LIB_LIBS)

$(STRESS_BUILD)/stress_san: $(STRESS_SRCS) $(STRESS_HDRS) $$(NDK_BUILD)/libndkfpga_san.a host/include/ndkpi.h \
                            host/include/ndkfpga.h
	@mkdir -p $(@D)
	$(STRESS_CC) -O1 $(SAN_FLAGS) -o $@ $(STRESS_SRCS) $(NDK_BUILD)/libndkfpga_san.a $(NDK_LIB_LIBS)

# Full scale on the software adapter, then the sanitized build at a smaller scale.
test-stress-model: $(STRESS_BUILD)/stress $(STRESS_BUILD)/stress_san $(BUILD)/model/nfmodel ## the stress suite (tests/stress/) on the software adapter, full scale and sanitized
	@rc=0; $(STRESS_BUILD)/stress -s full model || rc=1; \
	    echo "# sanitized build (ASan+UBSan, library included), small scale"; \
	    $(STRESS_BUILD)/stress_san -s small model || rc=1; \
	    exit $$rc

# The same cases at a tiny scale on the Verilator board.
test-stress-sim: $(STRESS_BUILD)/stress sim ## the stress suite on the Verilator board (tiny scale)
	@$(STRESS_BUILD)/stress -s tiny sim

lint-stress:
	@cppcheck -q --std=c11 --enable=warning,style,performance,portability --error-exitcode=1 \
	    --inline-suppr --suppress=missingIncludeSystem -D__GNUC__ -D__x86_64__ \
	    -I host/include -I tests -I tests/stress $(STRESS_SRCS)
