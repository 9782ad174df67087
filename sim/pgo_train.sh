#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The training run of nfsim's profile-guided build (sim/sim.mk): the instrumented model
# runs the product firmware through a RESET handshake (UART, link and the firmware's
# message path) and then its idle sleep (SYS.SLEEP), the two things the board model spends its
# time on. Its counters land in the model's object directory (*.gcda).
#   pgo_train.sh NFSIM CLIENT FW_HEX WORKDIR CYCLES
# A failed run only costs speed: the final build takes what profile there is (the
# instrumented objects are rebuilt either way).
set -u
NFSIM=$1 CLIENT=$2 FW_HEX=$3 WORK=$4 CYCLES=$5
mkdir -p "$WORK"
SOCK=$WORK/train.sock
"$NFSIM" --socket "$SOCK" --firmware "$FW_HEX" --max-cycles "$CYCLES" --quiet 2> "$WORK/nfsim.err" &
sim=$!
"$CLIENT" "$SOCK" reset 0x7EA1 > "$WORK/reset.out" 2>&1
"$CLIENT" "$SOCK" idle 600000 > "$WORK/idle.out" 2>&1 &
idle=$!
wait "$sim"
rc=$?
kill "$idle" 2>/dev/null
wait "$idle" 2>/dev/null
grep -q '^ok - ' "$WORK/reset.out" || echo "sim: profile training: no RESET handshake (see $WORK/reset.out)" >&2
exit $rc
