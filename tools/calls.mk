# SPDX-License-Identifier: Apache-2.0
# The layers' structure: no two files of host/src or of firmware/src call each
# other, directly or around a circle (tools/check_calls.py reads the objects' symbols);
# host/src's directories are layers, top to bottom, and calls and includes only go
# down them (the frame codec, proto/c, is below all).
HOST_LAYERS := ndk,link,transport,base,proto
.PHONY: test-calls
test-calls: $$(NDK_OBJS) $$(FW_OBJS) ## no circle of files calling each other in host/src or firmware/src; host/src's layers only call and include down
	@python3 tools/check_calls.py host/src nm --layers $(HOST_LAYERS) --src host/src $(NDK_OBJS)
	@python3 tools/check_calls.py firmware/src $(RV_NM) $(FW_OBJS)
	@bash tools/test_check_calls.sh

# No C file of the host library or the firmware grows past 800 lines: a longer one holds
# several concerns and wants splitting.
.PHONY: test-file-sizes
test-file-sizes: ## no C file in host/src or firmware/src is over 800 lines
	@rc=0; for d in host/src firmware/src; do \
	    long=$$(find $$d -name '*.c' | sort | xargs wc -l | awk '$$2 != "total" && $$1 > 800 { printf " %s (%d)", $$2, $$1 }'); \
	    if [ -z "$$long" ]; then echo "ok - $$d: every C file has 800 lines or fewer"; \
	    else echo "not ok - $$d: over 800 lines:$$long"; rc=1; fi; done; exit $$rc

# Every source file names its licence (SPDX line); LICENSE holds the text.
.PHONY: test-licence
test-licence: ## every source file starts with its SPDX licence line; LICENSE is Apache-2.0
	@out=$$(bash tools/test_spdx.sh); echo "$$out"; ! echo "$$out" | grep -q "^not ok"
# make lint checks the licence lines too (quiet unless one is missing).
LINT_TARGETS += lint-licence
.PHONY: lint-licence
lint-licence:
	@out=$$(bash tools/test_spdx.sh); ! echo "$$out" | grep "^not ok"
