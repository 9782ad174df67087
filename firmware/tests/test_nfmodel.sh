#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nfmodel end to end over its socket: a clean run and a run with byte faults.
set -u
model=$1
here=$(dirname "$0")
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0

run() { # name count nfmodel-args...
    local name=$1 count=$2; shift 2
    local sock=$tmp/$name.sock
    "$model" --socket "$sock" --exit-on-disconnect "$@" 2>"$tmp/$name.log" &
    local pid=$!
    pids+=("$pid")
    for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.02; done
    timeout 120 python3 "$here/nfmodel_client.py" "$sock" "$count" "$name" || fail=1
    wait "$pid"; local rc=$?
    if [ $rc = 0 ]; then echo "ok - $name: nfmodel exits cleanly when the client disconnects"
    else echo "not ok - $name: nfmodel exited $rc"; cat "$tmp/$name.log"; fail=1; fi
    sed 's/^/# /' "$tmp/$name.log"
}

run nfmodel-clean 200
run nfmodel-faults 40 --drop 0.002 --corrupt 0.002 --dup 0.002 --seed 7 --baud 12000000
run nfmodel-25k 50 --profile ulx3s_25k
# --quiet: no summary at exit (the library's consumers keep their stderr to themselves).
"$model" --socket "$tmp/q.sock" --exit-on-disconnect --quiet 2>"$tmp/q.log" &
qpid=$!
pids+=("$qpid")
for _ in $(seq 100); do [ -S "$tmp/q.sock" ] && break; sleep 0.02; done
python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.close()" "$tmp/q.sock"
wait "$qpid"
[ $? = 0 ] && [ ! -s "$tmp/q.log" ] && echo "ok - nfmodel --quiet prints no summary at exit" ||
    { echo "not ok - nfmodel --quiet prints no summary at exit"; cat "$tmp/q.log"; fail=1; }
# One host at a time, and a hand-over from one to the next (nfmodel_client.py --handover).
"$model" --socket "$tmp/h.sock" --quiet 2>"$tmp/h.log" &
hpid=$!
pids+=("$hpid")
for _ in $(seq 100); do [ -S "$tmp/h.sock" ] && break; sleep 0.02; done
timeout 120 python3 "$here/nfmodel_client.py" --handover "$tmp/h.sock" "$hpid" nfmodel || fail=1
"$model" --socket "$tmp/x.sock" --profile nosuch >/dev/null 2>&1
[ $? = 2 ] && echo "ok - nfmodel refuses an unknown profile" || { echo "not ok - nfmodel refuses an unknown profile"; fail=1; }
exit $fail
