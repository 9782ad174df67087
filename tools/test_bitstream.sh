#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make test-bitstream: full bitstream builds (synthesis, place and route with timing
# required, firmware swap, pack) of the boards given, then a firmware swap without place
# and route: another image in, checked, and the real firmware back, which must give the
# same bitstream bit for bit. One "ok - ..." / "not ok - ..." line per check.
# Usage: tools/test_bitstream.sh BOARD-DEVICE...   (proto/boards.toml boards; make test-bitstream
# gives the tested ones, NF_BOARDS_TESTED)
# BITSTREAM_TEST_REUSE=1 skips the full build where the placed design is fresh (placed at
# this commit from today's RTL, constraints and toolchain: tools/bitstream.sh --is-fresh);
# a stale one is built again. The default builds from scratch.
set -uo pipefail
cd "$(dirname "$0")/.."
fail=0
for bd in "$@"; do
    board=${bd%-*}; device=${bd##*-}; out=build/board/$bd
    mkdir -p build/board
    log=build/board/test-$bd.log
    t0=$(date +%s)
    mode=""; what="built"
    if [ "${BITSTREAM_TEST_REUSE:-0}" = 1 ]; then
        if why=$(bash tools/bitstream.sh --is-fresh "$board" "$device"); then
            mode="--firmware-only"; what="reused the placed design of this commit (inputs unchanged)"
        else
            echo "# not reused: $why"
        fi
    fi
    if bash tools/bitstream.sh $mode "$board" "$device" > "$log" 2>&1; then
        echo "ok - bitstream $bd $what, timing met: $(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print("%s MHz (target %s MHz), %d LUT4, %d FF, %d EBR" % (s["fmax_mhz"], s["target_mhz"], s["luts"], s["ffs"], s["ebr"]))' "$out/summary.json") in $(( $(date +%s) - t0 ))s"
    else
        echo "not ok - bitstream $bd (see $log)"
        tail -n 5 "$log" | sed 's/^/# /'
        fail=1
        continue
    fi
    grep '^bitstream: firmware swap' "$log" | sed 's/^/# /'
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
    if BOARD_FW_HEX=$other bash tools/bitstream.sh --firmware-only "$board" "$device" > "$log.swap" 2>&1 &&
       grep -q '^bitstream: firmware swap: swapped' "$log.swap" && [ "$(md5sum < "$out/nf.bit")" != "$real_sum" ]; then
        echo "ok - firmware swap $bd: another image into the placed design, no place and route"
    else
        echo "not ok - firmware swap $bd (see $log.swap)"
        fail=1
    fi
    if BOARD_FW_HEX=$used bash tools/bitstream.sh --firmware-only "$board" "$device" > "$log.back" 2>&1 &&
       [ "$(md5sum < "$out/nf.bit")" = "$real_sum" ]; then
        echo "ok - firmware swap $bd: the firmware back gives the same bitstream"
    else
        echo "not ok - firmware swap back $bd (see $log.back)"
        fail=1
    fi
    rm -f "$other" "$used"
done
exit $fail
