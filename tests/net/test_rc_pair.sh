#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Two simulated adapters on one simulated wire (nfwire, a switch) exchange RoCEv2 RC
# traffic, driven through their host links by rc_pair.py (NFWIRE_ARGS: more nfwire options,
# such as loss); the segment's capture is then checked frame by frame (check_capture.py).
# KILL_B=1: adapter B is killed in the middle of a Write at the end (rc_pair.py PID_B).
# Usage: test_rc_pair.sh NFSIM NFWIRE FIRMWARE_HEX
set -u
nfsim=$1 nfwire=$2 fw=$3
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
for n in a b; do
    "$nfsim" --socket "$tmp/$n.sock" --wire "$tmp/wire.sock" --firmware "$fw" --quiet 2>/dev/null & pids+=($!)
done
for n in a b; do
    wait_for "$tmp/$n.sock" 30 || { echo "not ok - nfsim $n did not start"; exit 1; }
done
rc=0
timeout 900 python3 "$here/rc_pair.py" "$tmp/a.sock" "$tmp/b.sock" ${KILL_B:+"${pids[2]}"} || rc=1
kill "${pids[0]}" 2>/dev/null # nfwire closes its capture on exit
wait "${pids[0]}" 2>/dev/null
if [ -s "$tmp/wire.pcap" ]; then
    "${PY:-python3}" "$here/check_capture.py" "$tmp/wire.pcap" || rc=1
else
    echo "not ok - rc: the segment's capture is empty"
    rc=1
fi
exit $rc
