#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nfsim tests. Environment: NFSIM, NFSIM_TRACE (its build with waveforms), CLIENT,
# ECHO_HEX (test firmware that echoes frames), FW_HEX (the product firmware; its test
# is skipped only when the file does not exist), WORK (scratch directory). One "ok"/"not ok" line per case.
set -u
mkdir -p "$WORK"
fails=0
pids=()
ok()     { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; fails=$((fails + 1)); }
check()  { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
trap cleanup EXIT

# Starts nfsim in the background; its stderr goes to $WORK/$1.err.
start_sim() {
    local name=$1; shift
    "$NFSIM" "$@" 2> "$WORK/$name.err" &
    SIM_PID=$!
    pids+=("$SIM_PID")
}
# Waits for nfsim to exit by itself (at most $2 seconds); sets SIM_RC.
wait_sim() {
    local pid=$1 limit=$2 i
    for ((i = 0; i < limit * 10; i++)); do
        if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; SIM_RC=$?; return 0; fi
        sleep 0.1
    done
    kill "$pid"; wait "$pid"; SIM_RC=124
    return 1
}
summary_ok() { grep -Eq '^nfsim: [0-9]+ cycles, [0-9]+ cycles/s$' "$WORK/$1.err"; }

# --- command line -------------------------------------------------------------------
"$NFSIM" > /dev/null 2> "$WORK/noarg.err"; rc=$?
check "options: missing --socket is an error (exit 2)" test $rc -eq 2 -a -s "$WORK/noarg.err"
"$NFSIM" --socket "$WORK/x.sock" --drop 1.5 2> "$WORK/badp.err"; rc=$?
check "options: --drop 1.5 refused with a message" grep -q "drop" "$WORK/badp.err"
"$NFSIM" --socket "$WORK/x.sock" --baud 100000000 2> "$WORK/badb.err"; rc2=$?
check "options: --baud beyond 2 clocks per bit refused" test $rc -eq 2 -a $rc2 -eq 2
"$NFSIM" --socket "$WORK/x.sock" --firmware "$WORK/none.hex" 2> "$WORK/nofw.err"; rc=$?
check "options: missing firmware image refused with a message" \
    bash -c "test $rc -eq 2 && grep -q none.hex '$WORK/nofw.err' && test ! -e '$WORK/x.sock'"
touch "$WORK/plain"
"$NFSIM" --socket "$WORK/plain" --firmware "$ECHO_HEX" 2> "$WORK/plain.err"; rc=$?
check "options: a socket path that is a regular file is left alone" \
    bash -c "test $rc -eq 2 && test -f '$WORK/plain' && grep -q 'not a socket' '$WORK/plain.err'"

# --- echo over the UART at a high baud (fast), then at the default 3 MBd ------------------
SOCK=$WORK/echo.sock
start_sim echo --socket "$SOCK" --firmware "$ECHO_HEX" --baud 11000000 --exit-on-disconnect
"$CLIENT" "$SOCK" echo 24
wait_sim "$SIM_PID" 30
check "exit-on-disconnect: nfsim exits 0 when the client leaves" test "$SIM_RC" -eq 0
check "exit summary: 'nfsim: N cycles, R cycles/s' on stderr" summary_ok echo

SOCK=$WORK/quiet.sock
start_sim quiet --socket "$SOCK" --firmware "$ECHO_HEX" --baud 11000000 --exit-on-disconnect --quiet
"$CLIENT" "$SOCK" echo 2
wait_sim "$SIM_PID" 30
check "--quiet: nfsim exits 0 and prints nothing" test "$SIM_RC" -eq 0 -a ! -s "$WORK/quiet.err"

SOCK=$WORK/echo3.sock
start_sim echo3 --socket "$SOCK" --firmware "$ECHO_HEX" --exit-on-disconnect
"$CLIENT" "$SOCK" echo 3
wait_sim "$SIM_PID" 60

# --- faults --------------------------------------------------------------------------
SOCK=$WORK/fault.sock
start_sim fault --socket "$SOCK" --firmware "$ECHO_HEX" --baud 12500000 --exit-on-disconnect \
    --drop 0.0005 --corrupt 0.0005 --dup 0.0005 --seed 7
"$CLIENT" "$SOCK" faulty 24
wait_sim "$SIM_PID" 30

# --- reconnect without --exit-on-disconnect; --max-cycles ends the run -------------------
SOCK=$WORK/re.sock
start_sim re --socket "$SOCK" --firmware "$ECHO_HEX" --baud 12500000
"$CLIENT" "$SOCK" echo 2 > "$WORK/re1.out"
"$CLIENT" "$SOCK" echo 2 > "$WORK/re2.out"
check "reconnect: a second client is served after the first one left" \
    bash -c "grep -q '^ok - echo' '$WORK/re1.out' && grep -q '^ok - echo' '$WORK/re2.out' && ! grep -q 'not ok' '$WORK/re2.out'"
kill -INT "$SIM_PID"
wait_sim "$SIM_PID" 10
check "SIGINT: nfsim exits and prints the summary" summary_ok re

SOCK=$WORK/max.sock
start_sim max --socket "$SOCK" --firmware "$ECHO_HEX" --max-cycles 300000
"$CLIENT" "$SOCK" idle 20000 &
cpid=$!
pids+=("$cpid")
wait_sim "$SIM_PID" 20
check "max-cycles: nfsim stops after exactly 300000 cycles" grep -q '^nfsim: 300000 cycles' "$WORK/max.err"
kill "$cpid" 2>/dev/null

# --- FST trace ----------------------------------------------------------------------------
SOCK=$WORK/trace.sock
"$NFSIM" --socket "$SOCK" --trace "$WORK/plain.fst" 2> "$WORK/notrace.err"; rc=$?
check "trace: nfsim (no waveform support, for speed) refuses --trace, names nfsim-trace" \
    bash -c "test $rc -eq 2 && grep -q nfsim-trace '$WORK/notrace.err' && test ! -e '$WORK/plain.fst'"
NFSIM_PLAIN=$NFSIM NFSIM=$NFSIM_TRACE
start_sim trace --socket "$SOCK" --firmware "$ECHO_HEX" --max-cycles 20000 --trace "$WORK/t.fst"
"$CLIENT" "$SOCK" idle 10000 &
cpid=$!
pids+=("$cpid")
wait_sim "$SIM_PID" 20
check "trace: nfsim-trace --trace writes an FST file" bash -c "test -s '$WORK/t.fst' && head -c 1 '$WORK/t.fst' | od -An -tx1 | grep -q 00"
kill "$cpid" 2>/dev/null
NFSIM=$NFSIM_PLAIN

# --- the product firmware: RESET handshake --------------------------------------------------
if [ -f "$FW_HEX" ]; then
    SOCK=$WORK/fw.sock
    start_sim fw --socket "$SOCK" --exit-on-disconnect
    "$CLIENT" "$SOCK" reset 0xBEEF
    wait_sim "$SIM_PID" 20
    check "firmware: nfsim with the default image exits cleanly" test "$SIM_RC" -eq 0
else
    not_ok "firmware: $FW_HEX not built (make firmware)"
fi

exit $((fails > 0))
