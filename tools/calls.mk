# The layers' call structure: no two files of host/src or of firmware/src call each
# other, directly or around a circle (tools/check_calls.py reads the objects' symbols).
TEST_TARGETS += test-calls
.PHONY: test-calls
test-calls: $(NDK_OBJS) $(FW_OBJS) ## no circle of files calling each other in host/src or firmware/src
	@python3 tools/check_calls.py host/src nm $(NDK_OBJS)
	@python3 tools/check_calls.py firmware/src $(RV_NM) $(FW_OBJS)
	@bash tools/test_check_calls.sh
