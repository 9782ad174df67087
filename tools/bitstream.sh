#!/usr/bin/env bash
# Bitstream for a board: Yosys synth_ecp5 -> nextpnr-ecp5 (fails when timing is not met)
# -> ecpbram (puts the firmware image into the block RAM) -> ecppack, plus a report.
# Usage: tools/bitstream.sh BOARD DEVICE   (ulx3s 12k|25k|45k|85k, ecp5-evn 85k)
# Outputs in build/board/BOARD-DEVICE/: nf.bit, report.txt, report.json, logs.
# The firmware is swapped into the placed design without place and route:
# tools/bitstream.sh --firmware-only BOARD DEVICE.
set -euo pipefail
cd "$(dirname "$0")/.."
firmware_only=0
if [ "${1:-}" = "--firmware-only" ]; then firmware_only=1; shift; fi
board=${1:?board}; device=${2:?device}
# shellcheck disable=SC1091
eval "$(sed -n 's/^\([A-Z_0-9]*\) := \(.*\)$/\1="\2"/p' build/toolchain.mk)"
hdr=firmware/include/nf_layout.h
param() { sed -n "s/^#define NF_PROFILE_$1_$2 \([0-9]*\)u.*/\1/p" "$hdr"; }

case "$board-$device" in
    ulx3s-12k|ulx3s-25k|ulx3s-45k) top=nf_board_ulx3s; lpf=constraints/ulx3s.lpf; part="--$device"; profile=ULX3S_25K; chp="-set DEVICE_85K 0";;
    ulx3s-85k) top=nf_board_ulx3s; lpf=constraints/ulx3s.lpf; part="--85k"; profile=ULX3S_85K; chp="-set DEVICE_85K 1";;
    ecp5-evn-85k) top=nf_board_ecp5_evn; lpf=constraints/ecp5-evn.lpf; part="--um5g-85k"; profile=ULX3S_85K; chp="";;
    *) echo "bitstream: unknown board/device '$board' '$device' (ulx3s 12k|25k|45k|85k, ecp5-evn 85k)" >&2; exit 2;;
esac
out=build/board/$board-$device
mkdir -p "$out"
fw=build/firmware/nf_fw.hex
[ -f "$fw" ] || { echo "bitstream: $fw missing: run make firmware" >&2; exit 2; }
words=$(( $(param "$profile" FW_RAM_BYTES) / 4 ))
fw_words=$(grep -c . "$fw")
[ "$fw_words" -le "$words" ] || { echo "bitstream: firmware ($fw_words words) exceeds FW RAM ($words words)" >&2; exit 2; }
# ecpbram swaps whole images: pad the firmware to the RAM depth.
{ cat "$fw"; for _ in $(seq $((words - fw_words))); do echo 00000000; done; } > "$out/fw_padded.hex"

# yowasp tools see the file system through WASI: keep every path relative to the repo.
if [ "$firmware_only" = 0 ]; then
    t0=$(date +%s)
    "$ECPBRAM" -g "$out/placeholder.hex" -w 32 -d "$words"
    sources="$PICORV32_DIR/picorv32.v $(ls rtl/engine/*.v rtl/link/*.v rtl/soc/*.v rtl/board/*.v)"
    sources=$(for f in $sources; do realpath --relative-to=. "$f"; done | tr '\n' ' ')
    echo "bitstream: synthesis ($top, $profile)"
    "$YOSYS" -q -l "$out/synth.log" -p "read_verilog -DSYNTHESIS -Irtl/include $sources; \
        chparam -set FW_HEX \"$out/placeholder.hex\" $chp $top; \
        synth_ecp5 -top $top -json $out/nf.json; tee -o $out/synth_stat.txt stat"
    t1=$(date +%s)
    echo "bitstream: place and route ($part) after $((t1 - t0))s synthesis"
    "$NEXTPNR_ECP5" $part --package CABGA381 --speed 6 --json "$out/nf.json" --lpf "$lpf" \
        --textcfg "$out/nf_placeholder.config" --report "$out/report.json" --seed 1 \
        -l "$out/pnr.log" -q
    echo "bitstream: place and route done in $(( $(date +%s) - t1 ))s (timing met: nextpnr fails otherwise)"
fi
"$ECPBRAM" -i "$out/nf_placeholder.config" -o "$out/nf.config" -f "$out/placeholder.hex" -t "$out/fw_padded.hex"
"$ECPPACK" --compress "$out/nf.config" "$out/nf.bit"
python3 tools/fpga_report.py "$out/report.json" "$board-$device" | tee "$out/report.txt"
echo "bitstream: $out/nf.bit"
