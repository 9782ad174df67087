#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The check of a board alone on a simulated adapter: ONE adapter, no segment (its port's
# wire goes nowhere), PHY loopback on through `ndkfpga phy`, then two of its QPs connected
# to its own address pass Send, Write and Read through the port (phy_loopback.py).
# ADAPTER: model:NFMODEL or sim:NFSIM:FIRMWARE_HEX (nfsim, nfsim-rgmii or nfsim-rmii).
# BYTES: the largest transfer (phy_loopback.py's default without it). NFSIM_ARGS: more
# options for a sim adapter (e.g. --phy-div 2).
# Usage: test_phy_loopback.sh NDKFPGA ADAPTER [BYTES]
set -u
ndk=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
kind=${2%%:*} rest=${2#*:}
case $kind in
sim) "${rest%%:*}" --socket "$tmp/a.sock" --firmware "${rest#*:}" --quiet ${NFSIM_ARGS:-} 2>/dev/null & pid=$! ;;
model) "$rest" --socket "$tmp/a.sock" --quiet 2>/dev/null & pid=$! ;;
*) echo "not ok - phy: unknown adapter $2"; exit 1 ;;
esac
for ((i = 0; i < 300; i++)); do [ -S "$tmp/a.sock" ] && break; sleep 0.1; done
[ -S "$tmp/a.sock" ] || { echo "not ok - phy: the adapter did not start"; exit 1; }
timeout 900 "${PY:-python3}" "$here/phy_loopback.py" "$ndk" "$kind:$tmp/a.sock" "$tmp/a.sock" ${3:-}
