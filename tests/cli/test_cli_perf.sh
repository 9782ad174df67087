#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tests of ndkfpga's perftest-style commands (write_lat, write_bw, read_lat, read_bw,
# send_lat, send_bw) and of `ndkfpga neigh`, TAP lines "ok - ..." / "not ok - ...".
# Every command runs as server and client in two processes, each on its own software
# adapter (model,net=SEGMENT) of a fresh segment, and as both ends in one process
# (--loopback); then the ARP caches of two adapters that connected (neigh). Small sizes
# and counts: this checks the commands, not the figures.
# Environment: NDKFPGA_CLI (the tool), NFMODEL (the software adapter), NFWIRE (the
# segment switch).
set -u
ndk=${NDKFPGA_CLI:?}
export NDKFPGA_MODEL=${NFMODEL:?} NDKFPGA_WIRE=${NFWIRE:?}
unset NDKFPGA_DEVICE NDKFPGA_MODEL_ARGS NDKFPGA_SIM_ARGS NDKFPGA_DEBUG
tmp=$(mktemp -d /tmp/ndkfpga-perf.XXXXXX)
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
# A segment no other run shares (names: 1..32 of A-Z a-z 0-9 _ . -).
seg="perf$$-$RANDOM"
fail=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fail=1; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else notok "$name"; return 1; fi; }
# run NAME CMD...: stdout to $tmp/NAME.out, stderr to $tmp/NAME.err, exit status in $rc.
run() { local name=$1; shift; timeout 120 "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"; rc=$?; }
# jcheck FILE PYTHON-EXPRESSION-ON-d: the JSON document in FILE satisfies it.
jcheck() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" 2>/dev/null; }
export -f jcheck
# Wait until the server's stderr says it listens (or it exited).
wait_listening() { # ERRFILE PID
    for _ in $(seq 300); do
        grep -q "listening on" "$1" 2>/dev/null && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

commands="write_lat write_bw read_lat read_bw send_lat send_bw"
lat_size=2 lat_iters=20 bw_size=2048 bw_iters=50
args_of() { case $1 in *_lat) echo "-s $lat_size -n $lat_iters" ;; *) echo "-s $bw_size -n $bw_iters -q 8" ;; esac; }
# What the client's JSON must hold for command $1 (python on d). Reads in flight are at
# most the connection's outbound read limit, which may be below -q.
client_ok() {
    local size=$lat_size iters=$lat_iters
    case $1 in *_bw) size=$bw_size iters=$bw_iters ;; esac
    local rows="len(d['results']) == 1 and d['results'][0]['bytes'] == $size and d['results'][0]['iterations'] == $iters"
    local figs="0 < r['min_us'] <= r['median_us'] <= r['p99_us'] <= r['max_us'] and r['min_us'] <= r['avg_us'] <= r['max_us']"
    case $1 in *_bw) figs="r['mb_per_s'] > 0 and r['msgs_per_s'] > 0 and r['seconds'] > 0 and 1 <= r['in_flight'] <= 8" ;; esac
    echo "d['command'] == '$1' and d['role'] == 'client' and d['test'] == '${1%_*}' and $rows and all($figs for r in d['results'])"
}
# Messages the server takes: one per size of a Write/Read test, every Send and the end.
server_msgs() { case $1 in write_* | read_*) echo 1 ;; send_lat) echo $((lat_iters + 1)) ;; send_bw) echo $((bw_iters + 1)) ;; esac; }

# ---- usage errors: exit 2, one line ----
usage_error() { # NAME PATTERN ARGS...
    local name=$1 pattern=$2; shift 2
    run usage "$ndk" "$@"
    if [ $rc = 2 ] && [ "$(wc -l < "$tmp/usage.err")" = 1 ] && grep -q -- "$pattern" "$tmp/usage.err"; then
        ok "$name: exit 2, one line"
    else notok "$name: exit $rc, stderr: $(head -c 300 "$tmp/usage.err")"; fi
}
usage_error "write_lat -s 0" "\-s needs" write_lat -s 0 model
usage_error "write_bw -a with -s" "leave out -s" write_bw -a -s 4k model
usage_error "send_lat --loopback with an address" "leave out the server address" send_lat --loopback 10.0.0.1 model
usage_error "read_lat: a bad address" "A.B.C.D" read_lat --connect 10.0.1 model
usage_error "read_bw -q 0" "\-q needs" read_bw -q 0 model
usage_error "send_bw: two addresses" "not two" send_bw --connect 10.0.0.1 10.0.0.2 model
for c in $commands; do
    run "help-$c" "$ndk" "$c" --help
    check "$c --help: its usage" bash -c "[ $rc = 0 ] && grep -q '^usage: ndkfpga $c' '$tmp/help-$c.out'"
done

# ---- failures: exit 1, one line saying why ----
run noclient "$ndk" write_lat --timeout 1 "model,net=$seg-x,ip=10.0.9.1/24"
check "a server nobody connects to gives up after --timeout: exit 1" bash -c "[ $rc = 1 ] &&
    grep -q 'no client connected within 1 s' '$tmp/noclient.err'"
run nojson "$ndk" write_bw --timeout 1 --json "model,net=$seg-x,ip=10.0.9.1/24"
check "... and with --json still one JSON document naming the failure" bash -c "[ $rc = 1 ] &&
    python3 -c \"import json; d=json.load(open('$tmp/nojson.out')); assert d['error']['status'] == 'STATUS_IO_TIMEOUT'\""

# ---- both ends in one process: --loopback ----
for c in $commands; do
    # shellcheck disable=SC2046
    run "lb-$c" "$ndk" "$c" --loopback --json $(args_of "$c") "model,net=$seg-lb,ip=10.0.8.1/24"
    check "$c --loopback: exit 0, the figures in JSON" bash -c "[ $rc = 0 ] && jcheck '$tmp/lb-$c.out' \"$(client_ok "$c") and d['loopback']\""
done
run lb-all "$ndk" write_bw --loopback --json -a -n 2 -q 2 "model,net=$seg-lb,ip=10.0.8.1/24"
check "write_bw -a: every size from 2 doubling, up to the adapter's limit" bash -c "[ $rc = 0 ] && jcheck '$tmp/lb-all.out' \"[r['bytes'] for r in d['results']] == [2 << i for i in range(len(d['results']))] and len(d['results']) >= 12\""
run lb-text "$ndk" send_lat --loopback -s 8 -n 5 "model,net=$seg-lb,ip=10.0.8.1/24"
check "send_lat's table: a header and one row" bash -c "[ $rc = 0 ] && grep -q 'median' '$tmp/lb-text.out' &&
    grep -Eq '^ +8 +5 ' '$tmp/lb-text.out'"

# ---- server and client: two processes, two adapters on one segment ----
for c in $commands; do
    "$ndk" "$c" --json --timeout 60 "model,net=$seg,ip=10.0.7.1/24" > "$tmp/srv-$c.out" 2> "$tmp/srv-$c.err" &
    spid=$!
    pids="$spid $pids"
    if ! wait_listening "$tmp/srv-$c.err" "$spid"; then
        notok "$c: the server did not listen: $(head -c 300 "$tmp/srv-$c.err")"
        continue
    fi
    # shellcheck disable=SC2046
    run "cl-$c" "$ndk" "$c" --json --connect 10.0.7.1 $(args_of "$c") "model,net=$seg,ip=10.0.7.2/24"
    crc=$rc
    [ $crc = 0 ] || kill "$spid" 2>/dev/null # no client is coming
    wait "$spid"
    src=$?
    check "$c between two processes: the client exits 0 with the figures in JSON" bash -c "[ $crc = 0 ] &&
        jcheck '$tmp/cl-$c.out' \"$(client_ok "$c") and not d['loopback']\"" ||
        sed 's/^/# /' "$tmp/cl-$c.err"
    check "$c between two processes: the server exits 0 and took every message" bash -c "[ $src = 0 ] &&
        jcheck '$tmp/srv-$c.out' \"d['role'] == 'server' and d['messages_received'] == $(server_msgs "$c") and d['client'].startswith('10.0.7.2:')\"" ||
        sed 's/^/# /' "$tmp/srv-$c.err"
done

# ---- neigh: the ARP caches of two adapters that connected ----
# Two software adapters that outlive the commands, on a switch of their own.
"$NFWIRE" --socket "$tmp/wire.sock" > /dev/null 2>&1 &
pids="$! $pids"
for _ in $(seq 50); do [ -S "$tmp/wire.sock" ] && break; sleep 0.1; done
"$NFMODEL" --socket "$tmp/a.sock" --wire "$tmp/wire.sock" --mac-seed 161 --quiet 2>> "$tmp/nfmodel.err" &
pids="$! $pids"
"$NFMODEL" --socket "$tmp/b.sock" --wire "$tmp/wire.sock" --mac-seed 162 --quiet 2>> "$tmp/nfmodel.err" &
pids="$! $pids"
for _ in $(seq 50); do [ -S "$tmp/a.sock" ] && [ -S "$tmp/b.sock" ] && break; sleep 0.1; done
run addr-a "$ndk" addr 10.0.6.1/24 "model:$tmp/a.sock"
run addr-b "$ndk" addr 10.0.6.2/24 "model:$tmp/b.sock"
run neigh0 "$ndk" neigh --json "model:$tmp/a.sock"
check "neigh on an adapter that talked to nobody: an empty cache" bash -c "[ $rc = 0 ] && jcheck '$tmp/neigh0.out' \"d == {'neighbors': []}\""
"$ndk" send_lat --timeout 60 "model:$tmp/a.sock" > /dev/null 2> "$tmp/srv-n.err" &
spid=$!
pids="$spid $pids"
wait_listening "$tmp/srv-n.err" "$spid"
run cl-n "$ndk" send_lat -n 3 --connect 10.0.6.1 "model:$tmp/b.sock"
[ $rc = 0 ] || kill "$spid" 2>/dev/null
wait "$spid"
run neigh-a "$ndk" neigh --json "model:$tmp/a.sock"
run neigh-b "$ndk" neigh "model:$tmp/b.sock"
check "neigh after a connect: A knows B's MAC (02:6e:00:00:00:a2), reachable" bash -c "[ $rc = 0 ] && jcheck '$tmp/neigh-a.out' \"{'ipv4': '10.0.6.2', 'mac': '02:6e:00:00:00:a2', 'state': 'reachable'}.items() <= d['neighbors'][0].items() and len(d['neighbors']) == 1\""
check "neigh after a connect: B's table has A's address and MAC" bash -c "[ $rc = 0 ] &&
    grep -Eq '^10\.0\.6\.1 +lladdr 02:6e:00:00:00:a1 +reachable' '$tmp/neigh-b.out'"
run refused "$ndk" write_lat --connect 10.0.6.1 -p 18516 "model:$tmp/b.sock"
check "a client to an adapter nobody listens on: exit 1, says so" bash -c "[ $rc = 1 ] &&
    grep -q 'nobody listens on 10.0.6.1:18516' '$tmp/refused.err'"
run unreachable "$ndk" read_lat --json --connect 10.0.6.9 "model:$tmp/b.sock"
check "a client to an address nobody has: exit 1, HOST_UNREACHABLE in JSON" bash -c "[ $rc = 1 ] &&
    jcheck '$tmp/unreachable.out' \"d['error']['status'] == 'STATUS_HOST_UNREACHABLE'\""

exit $fail
