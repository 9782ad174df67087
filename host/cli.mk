# SPDX-License-Identifier: Apache-2.0
# The ndkfpga command-line tool (host/cli/): list, info, stats, ping, mrlat, mrrate.
# Built as build/host/ndkfpga against the in-tree build/host/libndkfpga.a; it uses only
# the public headers (ndkpi.h, ndkfpga.h), so `make install` builds the same $(CLI_SRCS)
# against the installed libndkfpga.so (C11, _GNU_SOURCE for getopt_long, -pthread).
#
# This file is included before host/host.mk: names of the build tree are spelled out,
# and host.mk's variables (NDK_CONSUMER_CC, NDK_LIB_LIBS) are used in recipes only.

CLI_SRCS := host/cli/main.c host/cli/common.c host/cli/session.c host/cli/cmd_info.c host/cli/cmd_ping.c \
            host/cli/cmd_mr.c host/cli/cmd_send.c host/cli/cmd_addr.c host/cli/cmd_neigh.c host/cli/cmd_phy.c \
            host/cli/perf_conn.c host/cli/cmd_perf.c
CLI_HDRS := host/cli/cli.h host/cli/perf.h
CLI_BIN := $(BUILD)/host/ndkfpga
CLI_PUBLIC_HDRS := host/include/ndkpi.h host/include/ndkfpga.h
# The test helper that makes the firmware refuse known work (public API only).
CLI_REFUSE := $(BUILD)/host/cli_refuse

.PHONY: cli test-cli test-cli-perf lint-cli
LINT_TARGETS += lint-cli

cli: $(CLI_BIN) ## build the ndkfpga command-line tool (build/host/ndkfpga: list, info, stats, ping, mrlat, mrrate, sendlat)

$(CLI_BIN): $(CLI_SRCS) $(CLI_HDRS) $(CLI_PUBLIC_HDRS) $(BUILD)/host/libndkfpga.a host/cli.mk
	@mkdir -p $(@D)
	$(NDK_CONSUMER_CC) -I$(ROOT)/host/cli -o $@ $(CLI_SRCS) $(BUILD)/host/libndkfpga.a $(NDK_LIB_LIBS)

$(CLI_REFUSE): tests/cli/refuse.c host/cli/session.c host/cli/common.c $(CLI_HDRS) $(CLI_PUBLIC_HDRS) \
               $(BUILD)/host/libndkfpga.a host/cli.mk
	@mkdir -p $(@D)
	$(NDK_CONSUMER_CC) -I$(ROOT)/host/cli -o $@ tests/cli/refuse.c host/cli/session.c host/cli/common.c \
	    $(BUILD)/host/libndkfpga.a $(NDK_LIB_LIBS)

# Every subcommand on the software adapter, ping on the simulation (kept short: nfsim is slow).
test-cli: $(CLI_BIN) $(CLI_REFUSE) $(BUILD)/model/nfmodel sim ## the ndkfpga command: every subcommand and its refusals, on the software adapter
	@NDKFPGA_CLI=$(CLI_BIN) NDKFPGA_CLI_REFUSE=$(CLI_REFUSE) NFMODEL=$(BUILD)/model/nfmodel \
	    bash tests/cli/test_cli.sh

# The perftest-style commands between two processes on a fresh segment, and neigh.
test-cli-perf: $(CLI_BIN) $(BUILD)/model/nfmodel $(BUILD)/sim/nfwire ## ndkfpga write/read/send latency and bandwidth: server and client in two processes on software adapters of one segment, and --loopback; neigh after a connect
	@NDKFPGA_CLI=$(CLI_BIN) NFMODEL=$(BUILD)/model/nfmodel NFWIRE=$(BUILD)/sim/nfwire timeout 900 \
	    bash tests/cli/test_cli_perf.sh

lint-cli: ## cppcheck of the ndkfpga command-line tool and its test helper
	@cppcheck -q --std=c11 --enable=warning,style,performance,portability --error-exitcode=1 --inline-suppr \
	    --suppress=missingIncludeSystem -D__GNUC__ -D__x86_64__ -I host/include -I host/cli \
	    $(CLI_SRCS) tests/cli/refuse.c
