#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Verilator model stops the CPU's clock while the firmware sleeps on SYS.SLEEP, and the
# engine's while it is idle too (nf_soc CPU_CLOCK_GATE); the boards run both on the system
# clock. The two must agree clock for
# clock. A consumer's session on the model (the SMB-Direct cycle: fast-register, Send, RDMA
# Write, SendAndInvalidate) is logged pin by pin (nfsim --pin-log); its UART input is then
# replayed (--replay) into the model and into a build with the boards' CPU clock, which is
# evaluated at both clock edges. The three logs must be the same, every TX edge on the same
# clock: any clock a gate took that a running CPU or engine would have used shows.
# Environment: NFSIM (the model), NFSIM_UNGATED (SIM_CPU_GATE=0), SMB (examples' smb_direct),
# WORK (scratch directory), LABEL (optional: put before each case's name). One "ok"/"not ok"
# line per case.
set -u
mkdir -p "$WORK"
fails=0
ok()     { echo "ok - ${LABEL:-}$*"; }
not_ok() { echo "not ok - ${LABEL:-}$*"; fails=$((fails + 1)); }
check()  { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
rm -f "$WORK"/*.log

NDKFPGA_SIM=$NFSIM NDKFPGA_SIM_ARGS="--pin-log $WORK/live.log" \
    "$SMB" sim 20 256 > "$WORK/smb.out" 2>&1
check "session: 20 SMB-Direct cycles on the model, data verified" test $? -eq 0
tx_edges=$(grep -c ' t ' "$WORK/live.log")
check "session: the pin log holds the board's replies ($tx_edges TX edges)" test "$tx_edges" -gt 10000

"$NFSIM" --replay "$WORK/live.log" --pin-log "$WORK/gated.log" 2> "$WORK/gated.err"
check "replay: the model replays the session exactly (the same TX edges on the same clocks)" \
    cmp -s "$WORK/live.log" "$WORK/gated.log"
stopped=$(sed -n 's/^nfsim: the CPU.s clock stopped for \([0-9]*\) of \([0-9]*\) cycles, the engine.s for \([0-9]*\)$/\1 \2 \3/p' \
    "$WORK/gated.err")
read -r cpu_stopped cycles eng_stopped <<< "${stopped:-0 0 0}"
check "replay: the CPU's clock was stopped for most of the session ($cpu_stopped of $cycles cycles)" \
    test "$cycles" -gt 0 -a "$cpu_stopped" -gt $((cycles / 2))
check "replay: the engine's clock was stopped for part of it ($eng_stopped cycles)" \
    test "$eng_stopped" -gt $((cycles / 10))

"$NFSIM_UNGATED" --replay "$WORK/live.log" --pin-log "$WORK/ungated.log" 2> "$WORK/ungated.err"
check "clock gates: the boards' clocks give the same TX edges, clock for clock" \
    cmp -s "$WORK/gated.log" "$WORK/ungated.log"
check "clock gates: the ungated build never stops a clock" \
    grep -q "clock stopped for 0 of .*, the engine.s for 0$" "$WORK/ungated.err"

exit $((fails > 0))
