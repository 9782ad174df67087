# Example consumer of the NDKPI library: `make demo` runs it on the
# Verilator board model; DEMO_DEVICE=model runs it on the software adapter.
EX_BUILD := $(BUILD)/examples
DEMO_DEVICE ?= sim
.PHONY: demo
CLEAN_DIRS += $(EX_BUILD)

$(EX_BUILD)/demo: examples/demo.c $(BUILD)/host/libndkfpga.a host/include/ndkpi.h host/include/ndkfpga.h
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -I$(ROOT)/host/include -pthread -o $@ examples/demo.c $(BUILD)/host/libndkfpga.a \
	    $(NDK_LIB_LIBS)

demo: $(EX_BUILD)/demo $(if $(filter sim,$(DEMO_DEVICE)),sim,$(BUILD)/model/nfmodel) ## run the example consumer against the simulation
	@$(EX_BUILD)/demo $(DEMO_DEVICE)
