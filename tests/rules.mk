# SPDX-License-Identifier: Apache-2.0
# The rule table (tests/rules/, docs/rules.md): every NDK rule with one deterministic
# status, fed through the public API, one line per rule and device. Built like the
# conformance suite against the in-tree library (public headers and tests/consumer.h).
#
#   make test-rules-model    the table on the software adapter
#   make test-rules-sim      the table on the Verilator board, then on the software
#                            adapter, and whether both gave the same status for every rule
#   build/tests/rules [DEVICE ...]

RULES_BIN := $(BUILD)/tests/rules
RULES_SRCS := tests/rules/rules.c
RULES_HDRS := tests/consumer.h tests/tap.h

.PHONY: rules test-rules-model test-rules-sim lint-rules
LINT_TARGETS += lint-rules

rules: $(RULES_BIN) ## build the rule table build/tests/rules (docs/rules.md)

$(RULES_BIN): $(RULES_SRCS) $(RULES_HDRS) $$(NDK_BUILD)/libndkfpga.a host/include/ndkpi.h host/include/ndkfpga.h
	@mkdir -p $(@D)
	$(NDK_CONSUMER_CC) -o $@ $(RULES_SRCS) $(NDK_BUILD)/libndkfpga.a $(NDK_LIB_LIBS)

test-rules-model: $(RULES_BIN) $(BUILD)/model/nfmodel ## the rule table (docs/rules.md): every NDK rule's status and who decides it, on the software adapter
	@$(RULES_BIN) model

test-rules-sim: $(RULES_BIN) $(BUILD)/model/nfmodel sim ## the rule table on the Verilator board, and that it agrees with the software adapter
	@$(RULES_BIN) sim model

lint-rules:
	@cppcheck -q --std=c11 --enable=warning,style,performance,portability --error-exitcode=1 \
	    --inline-suppr --suppress=missingIncludeSystem -D__GNUC__ -D__x86_64__ \
	    -I host/include -I tests $(RULES_SRCS)
