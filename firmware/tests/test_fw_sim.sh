#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The real firmware image on the Verilator RTL (nfsim): RESET handshake, PINGs, INFO,
# the cycle counts the firmware reports in INFO for a one-page fast-register and the
# invalidate after it (only for requests whose CQE says STATUS_SUCCESS), and the trap
# handler (fault_test.py).
set -u
nfsim=$1 hex=$2
here=$(dirname "$0")
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
start() {
    "$nfsim" --socket "$tmp/s.sock" --firmware "$hex" --exit-on-disconnect 2>"$tmp/nfsim.log" &
    pid=$!
    for _ in $(seq 250); do [ -S "$tmp/s.sock" ] && break; sleep 0.02; done
}
check() { # condition-status description
    if [ "$1" = 0 ]; then echo "ok - fw-on-rtl: $2"; else echo "not ok - fw-on-rtl: $2"; fail=1; fi
}
start
timeout 300 python3 "$here/nfmodel_client.py" "$tmp/s.sock" 10 fw-on-rtl || fail=1
wait "$pid"; pid=
start
out=$(cd "$here" && timeout 300 python3 fr_cycles.py "$tmp/s.sock")
rc=$?
echo "$out" | sed 's/^/# /'
ok_line() { echo "$out" | grep -c "^$1 (wr_id [0-9]*): STATUS_SUCCESS, [0-9]* cycles from RX_STAMP to CQE"; }
check $(( $(ok_line "fast-register 1 page") != 3 )) "3 fast-registers of 1 page completed with STATUS_SUCCESS, their cycles measured by INFO"
check $(( $(ok_line "invalidate") != 3 )) "3 invalidates completed with STATUS_SUCCESS, their cycles measured by INFO"
echo "$out" | grep -q "^fast-register 1 page (wr_id 30): refused, status 0x[0-9A-F]*.*: no cycle figure$" &&
    echo "$out" | grep -q "through a token never issued was refused$"
check $? "a fast-register through a token never issued is refused and gives no cycle figure"
check $rc "fr_cycles.py: every request as expected (exit status $rc)"
wait "$pid"; pid=
# The trap handler: an illegal instruction leaves the adapter answering, faulted.
start
(cd "$here" && timeout 300 python3 fault_test.py "$tmp/s.sock" "${hex%.hex}.bin") || fail=1
wait "$pid"; pid=
# One host at a time, and a hand-over from one to the next (nfmodel_client.py --handover).
"$nfsim" --socket "$tmp/h.sock" --firmware "$hex" 2>>"$tmp/nfsim.log" &
pid=$!
for _ in $(seq 250); do [ -S "$tmp/h.sock" ] && break; sleep 0.02; done
timeout 300 python3 "$here/nfmodel_client.py" --handover "$tmp/h.sock" "$pid" fw-on-rtl || fail=1
sed 's/^/# /' "$tmp/nfsim.log"
exit $fail
