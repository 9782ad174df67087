#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make test-bitstream: full bitstream builds (synthesis, place and route with timing
# required, firmware swap, pack) of the boards given, then a firmware swap without place
# and route: another image in, checked, and the real firmware back, which must give the
# same bitstream bit for bit. One "ok - ..." / "not ok - ..." line per check, each board's
# lines together in the order given.
# Usage: tools/test_bitstream.sh BOARD-DEVICE...   (proto/boards.toml boards; make test-bitstream
# gives the tested ones, NF_BOARDS_TESTED)
# BITSTREAM_JOBS (default 2) boards build at once: each nextpnr takes one core. Each board
# places with its first seed only (proto/boards.toml seeds): the seeds' spread is the
# business of make timing-seeds, whose committed file (constraints/timing_seeds.json) must be
# for the board's clock today (checked here).
# BITSTREAM_TEST_REUSE=1 skips the full build where the placed design is fresh (placed at
# this commit from today's RTL, constraints and toolchain: tools/bitstream.sh --is-fresh);
# a stale one is built again. The default builds from scratch.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=${BITSTREAM_JOBS:-2}
mkdir -p build/board

# One board's checks, its TAP lines on stdout; exits 1 when one failed.
test_board() {
    local bd=$1 board=${1%-*} device=${1##*-} out=build/board/$1 fail=0
    local log=build/board/test-$bd.log t0 mode="" what="built" key first
    t0=$(date +%s)
    key=$(echo "$bd" | tr 'a-z-' 'A-Z_')
    first=$(python3 proto/gen/nf_layout.py "BOARD_${key}_SEEDS" | cut -d' ' -f1)
    if [ "${BITSTREAM_TEST_REUSE:-0}" = 1 ]; then
        if why=$(SEED=$first bash tools/bitstream.sh --is-fresh "$board" "$device"); then
            mode="--firmware-only"; what="reused the placed design of this commit (inputs unchanged)"
        else
            echo "# not reused: $why"
        fi
    fi
    # shellcheck disable=SC2086
    if SEED=$first bash tools/bitstream.sh $mode "$board" "$device" > "$log" 2>&1; then
        echo "ok - bitstream $bd $what with seed $first, timing met: $(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print("%s MHz (target %s MHz), %d LUT4, %d FF, %d of %d EBR" % (s["fmax_mhz"], s["target_mhz"], s["luts"], s["ffs"], s["ebr"], s["ebr_available"]))' "$out/summary.json") in $(( $(date +%s) - t0 ))s"
    else
        echo "not ok - bitstream $bd with seed $first (see $log)"
        tail -n 5 "$log" | sed 's/^/# /'
        return 1
    fi
    # Resources: every block RAM, LUT and FF the design uses is one the part has.
    if python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(not all(s[k] <= s[k + "_available"] for k in ("luts", "ffs", "ebr", "dsp")))' "$out/summary.json"; then
        echo "ok - resources $bd: LUT4, FF, EBR and DSP within the part's (summary.json)"
    else
        echo "not ok - resources $bd: more than the part has (summary.json)"
        fail=1
    fi
    grep '^bitstream: firmware swap' "$log" | sed 's/^/# /'
    local real_sum used other words
    real_sum=$(md5sum < "$out/nf.bit")
    # The image this build used (the firmware may be rebuilt meanwhile).
    used=$out/test_fw_used.hex
    cp "$out/fw_padded.hex" "$used"

    # Another image of the right size: a random one, as ecpbram makes placeholders.
    words=$(grep -c . "$out/placeholder.hex")
    other=$out/test_other_fw.hex
    python3 -c 'import random, sys
r = random.Random(int(sys.argv[2]))
open(sys.argv[1], "w").write("".join("%08x\n" % r.getrandbits(32) for _ in range(int(sys.argv[2]))))' "$other" "$words"
    if SEED=$first BOARD_FW_HEX=$other bash tools/bitstream.sh --firmware-only "$board" "$device" > "$log.swap" 2>&1 &&
       grep -q '^bitstream: firmware swap: swapped' "$log.swap" && [ "$(md5sum < "$out/nf.bit")" != "$real_sum" ]; then
        echo "ok - firmware swap $bd: another image into the placed design, no place and route"
    else
        echo "not ok - firmware swap $bd (see $log.swap)"
        fail=1
    fi
    if SEED=$first BOARD_FW_HEX=$used bash tools/bitstream.sh --firmware-only "$board" "$device" > "$log.back" 2>&1 &&
       [ "$(md5sum < "$out/nf.bit")" = "$real_sum" ]; then
        echo "ok - firmware swap $bd: the firmware back gives the same bitstream"
    else
        echo "not ok - firmware swap back $bd (see $log.back)"
        fail=1
    fi
    rm -f "$other" "$used"
    if python3 tools/board_figures.py --check-seeds "$bd" > "$log.seeds"; then
        echo "ok - seed table $bd: constraints/timing_seeds.json is for its clock"
        sed 's/^/# /' "$log.seeds"
    else
        echo "not ok - seed table $bd: $(cat "$log.seeds")"
        fail=1
    fi
    return $fail
}

t_all=$(date +%s)
for bd in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    test_board "$bd" > "build/board/test-$bd.tap" 2>&1 &
done
wait
fail=0
for bd in "$@"; do
    cat "build/board/test-$bd.tap"
    grep -q '^not ok' "build/board/test-$bd.tap" && fail=1
done
echo "# test-bitstream: $# boards, $jobs at once: $(( $(date +%s) - t_all ))s"
exit $fail
