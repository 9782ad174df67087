#!/usr/bin/env bash
# The real firmware image on the Verilator RTL (nfsim): RESET handshake, PINGs, INFO,
# and the cycles of one fast-register of one page measured by the firmware itself.
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
start
timeout 300 python3 "$here/nfmodel_client.py" "$tmp/s.sock" 10 fw-on-rtl || fail=1
wait "$pid"; pid=
start
out=$(cd "$here" && timeout 300 python3 fr_cycles.py "$tmp/s.sock")
rc=$?
echo "$out" | sed 's/^/# /'
n=$(echo "$out" | grep -c "^fast-register 1 page: [0-9]* cycles")
[ $rc = 0 ] && [ "$n" = 3 ] && echo "ok - fw-on-rtl: fast-register of 1 page measured by INFO (3 rounds)" ||
    { echo "not ok - fw-on-rtl: fast-register measurement"; fail=1; }
wait "$pid"; pid=
sed 's/^/# /' "$tmp/nfsim.log"
exit $fail
