#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make timing-seeds: each board given synthesized once and placed with every seed of
# TIMING_SEEDS (tools/bitstream.sh --sweep: build/board/NAME/sweep/seeds.json), at most
# TIMING_SEEDS_JOBS boards at once (each nextpnr takes one core); then the boards' results
# go into constraints/timing_seeds.json, the measurement file of the board table's seed
# columns (tools/board_figures.py). A board whose sweep failed keeps its earlier entry.
# Usage: tools/timing_seeds.sh BOARD-DEVICE...
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=${TIMING_SEEDS_JOBS:-2}
mkdir -p build/board
for bd in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    echo "timing-seeds: $bd: seeds ${TIMING_SEEDS:-1 2 3 4 5} (log build/board/sweep-$bd.log)"
    bash tools/bitstream.sh --sweep "${bd%-*}" "${bd##*-}" > "build/board/sweep-$bd.log" 2>&1 &
done
wait
python3 tools/board_figures.py --collect-seeds "$@"
