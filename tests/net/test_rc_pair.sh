#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Two adapters on one simulated wire (nfwire, a switch) exchange RoCEv2 RC traffic, driven
# through their host links by rc_pair.py (NFWIRE_ARGS: more nfwire options, such as loss);
# the segment's capture is then checked frame by frame (check_capture.py). An adapter is
# sim:NFSIM:FIRMWARE_HEX (the Verilator board) or model:NFMODEL (the software adapter).
# PORT_FAULTS: faults on the frames each port sends (nfwire's port hello: loss=P,dup=P,...).
# KILL_B=1: adapter B is killed in the middle of a Write at the end (rc_pair.py PID_B).
# PAIR=cm: the connection-setup test instead (cm_pair.py), its capture checked for the CM.
# Usage: test_rc_pair.sh NFWIRE ADAPTER_A ADAPTER_B
set -u
nfwire=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
wait_for() { # PATH SECONDS: a socket appears within the time
    local i
    for ((i = 0; i < $2 * 10; i++)); do [ -S "$1" ] && return 0; sleep 0.1; done
    return 1
}
"$nfwire" --socket "$tmp/wire.sock" --pcap "$tmp/wire.pcap" ${NFWIRE_ARGS:-} & pids+=($!)
wait_for "$tmp/wire.sock" 10 || { echo "not ok - nfwire did not start"; exit 1; }
start() { # NAME ADAPTER MAC_SEED
    local kind=${2%%:*} rest=${2#*:}
    local args=(--socket "$tmp/$1.sock" --wire "$tmp/wire.sock" --mac-seed "$3" --quiet)
    [ -n "${PORT_FAULTS:-}" ] && args+=(--wire-opts "$PORT_FAULTS,seed=$3")
    case $kind in
    sim) "${rest%%:*}" "${args[@]}" --firmware "${rest#*:}" 2>/dev/null & pids+=($!) ;;
    model) "$rest" "${args[@]}" 2>/dev/null & pids+=($!) ;;
    *) echo "not ok - rc: unknown adapter $2"; exit 1 ;;
    esac
}
start a "$2" 0xA1
start b "$3" 0xB2
for n in a b; do
    wait_for "$tmp/$n.sock" 30 || { echo "not ok - adapter $n did not start"; exit 1; }
done
rc=0
timeout 900 python3 "$here/${PAIR:-rc}_pair.py" "$tmp/a.sock" "$tmp/b.sock" ${KILL_B:+"${pids[2]}"} || rc=1
kill "${pids[0]}" 2>/dev/null # nfwire closes its capture on exit
wait "${pids[0]}" 2>/dev/null
[ -n "${KEEP_PCAP:-}" ] && cp "$tmp/wire.pcap" "$KEEP_PCAP"
if [ -s "$tmp/wire.pcap" ]; then
    "${PY:-python3}" "$here/check_capture.py" "$tmp/wire.pcap" ${PAIR:+--cm} || rc=1
else
    echo "not ok - rc: the segment's capture is empty"
    rc=1
fi
exit $rc
