#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Instructions the host executes per simulated clock of nfsim (valgrind's callgrind count),
# on the workload of pgo_train.sh: a RESET handshake, then the firmware asleep (SYS.SLEEP).
# A count, not a time: it does not move with the load of a shared machine, so two builds
# compare in one run each (the wall-clock speed, make bench-sim, moves with the load).
# It runs the model for CYCLES and for 2 * CYCLES and prints the difference per clock: the
# cost of an idle clock, without the start-up (loading the image, the handshake).
# A model built with -march=native may use instructions valgrind does not know (AVX-512).
#   ir_per_clock.sh NFSIM CLIENT FW_HEX WORKDIR [CYCLES]
set -u
if [ $# -lt 4 ]; then
    echo "usage: $0 NFSIM CLIENT FW_HEX WORKDIR [CYCLES]" >&2
    exit 2
fi
NFSIM=$1 CLIENT=$2 FW_HEX=$3 WORK=$4 CYCLES=${5:-500000}
command -v valgrind > /dev/null || { echo "ir_per_clock: valgrind is not installed" >&2; exit 2; }
mkdir -p "$WORK"

# Runs the model under callgrind for $1 cycles; prints the instructions executed.
count() {
    local cycles=$1 sock=$WORK/ir.sock out=$WORK/callgrind.$1 i sim idle
    rm -f "$sock" "$out"
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$NFSIM" --socket "$sock" --firmware "$FW_HEX" --max-cycles "$cycles" --quiet > /dev/null 2> "$WORK/nfsim.$cycles.err" &
    sim=$!
    for ((i = 0; i < 600; i++)); do [ -S "$sock" ] && break; sleep 0.05; done
    "$CLIENT" "$sock" reset 0x7EA1 > "$WORK/reset.$cycles.out" 2>&1
    if ! grep -q '^ok - ' "$WORK/reset.$cycles.out"; then
        kill "$sim" 2>/dev/null
        echo "ir_per_clock: no RESET handshake (see $WORK/reset.$cycles.out, $WORK/nfsim.$cycles.err)" >&2
        return 1
    fi
    "$CLIENT" "$sock" idle 600000 > /dev/null 2>&1 &
    idle=$!
    wait "$sim"
    kill "$idle" 2>/dev/null
    wait "$idle" 2>/dev/null
    awk '/^summary:/ { print $2; found = 1 } END { exit !found }' "$out" ||
        { echo "ir_per_clock: no callgrind count in $out" >&2; return 1; }
}

one=$(count "$CYCLES") || exit 1
two=$(count $((2 * CYCLES))) || exit 1
awk -v a="$one" -v b="$two" -v c="$CYCLES" \
    'BEGIN { printf "ir_per_clock: %.1f instructions per idle clock (%d cycles: %.0f, %d cycles: %.0f)\n", (b - a) / c, c, a, 2 * c, b }'
