#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nf_wire and nfwire (sim/README.md, "The wire"). Environment: NFWIRE (the hub), WIRE_TEST
# (sim/tests/wire_test.cpp), WIRE_MAC (sim/tests/wire_mac.cpp: rtl/net's MACs on the
# wire), PY (the .venv's python, with scapy), CHECK_PCAP
# (sim/tests/check_wire_pcap.py), CHECK_HELLO (sim/tests/check_wire_hello.py: ports'
# hellos), WORK (scratch directory). One "ok"/"not ok" line per case.
set -u
WORK=$(realpath -m "$WORK")
rm -rf "$WORK" && mkdir -p "$WORK"
fails=0
pids=()
NS=""
ok()     { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; fails=$((fails + 1)); }
check()  { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    [ -n "$NS" ] && ip netns del "$NS" 2>/dev/null
}
trap cleanup EXIT
# Counts a test program's TAP lines into this script's result.
run_tap() { local out; out=$("$@"); local rc=$?; echo "$out"
    if [ $rc -ne 0 ] && ! grep -q '^not ok' <<< "$out"; then not_ok "$* exited $rc"; fi
    fails=$((fails + $(grep -c '^not ok' <<< "$out"))); }

# Starts a hub in the background ($1: name, then its options; the socket is
# $WORK/$1.sock) and waits at most 5 s for its socket. HUB_PID is its pid.
start_hub() {
    local name=$1 i; shift
    ${HUB_PREFIX:-} "$NFWIRE" --socket "$WORK/$name.sock" "$@" 2> "$WORK/$name.err" &
    HUB_PID=$!
    pids+=("$HUB_PID")
    for ((i = 0; i < 50; i++)); do [ -S "$WORK/$name.sock" ] && return 0; sleep 0.1; done
    return 1
}
# Sends SIGTERM and waits at most 5 s for the hub to exit; sets HUB_RC.
stop_hub() {
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 50; i++)); do
        if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; HUB_RC=$?; return 0; fi
        sleep 0.1
    done
    kill -KILL "$pid"; wait "$pid"; HUB_RC=124
    return 1
}

# --- options ------------------------------------------------------------------------
"$NFWIRE" > /dev/null 2> "$WORK/noarg.err"; rc=$?
check "options: missing --socket is an error (exit 2) with a message" test $rc -eq 2 -a -s "$WORK/noarg.err"
"$NFWIRE" --socket "$WORK/x.sock" --drop 1.5 2> "$WORK/badp.err"; rc=$?
check "options: --drop 1.5 refused with a message" bash -c "test $rc -eq 2 && grep -q drop '$WORK/badp.err'"
touch "$WORK/plain"
"$NFWIRE" --socket "$WORK/plain" 2> "$WORK/plain.err"; rc=$?
check "options: a socket path that is a regular file is left alone" \
    bash -c "test $rc -eq 2 && test -f '$WORK/plain' && grep -q 'not a socket' '$WORK/plain.err'"

# --- a learning switch with a capture -------------------------------------------------
if start_hub sw --pcap "$WORK/sw.pcap"; then
    run_tap "$WIRE_TEST" frames "$WORK/sw.sock" "$WORK/sw.expect"
    stop_hub "$HUB_PID"
    check "nfwire: SIGTERM ends it (exit 0), its socket removed, nothing on stderr without --verbose" \
        bash -c "test $HUB_RC -eq 0 && test ! -e '$WORK/sw.sock' && test ! -s '$WORK/sw.err'"
    run_tap "$PY" "$CHECK_PCAP" "$WORK/sw.pcap" "$WORK/sw.expect"
else
    not_ok "nfwire: the switch's socket did not appear"
fi

# --- PHY loopback: no hub ----------------------------------------------------------------
run_tap "$WIRE_TEST" loopback

# --- a hub ------------------------------------------------------------------------------
if start_hub hub --hub --verbose; then
    run_tap "$WIRE_TEST" hub "$WORK/hub.sock"
    stop_hub "$HUB_PID"
    check "nfwire --verbose: ports and counts on stderr" \
        bash -c "grep -q 'port 1 joined' '$WORK/hub.err' && grep -q '^nfwire: 3 frames in' '$WORK/hub.err'"
else
    not_ok "nfwire --hub: its socket did not appear"
fi

# --- loss: about the share asked, the same frames for the same seed ------------------
for run in 7a 7b 8; do
    if start_hub "drop$run" --drop 0.25 --seed "${run%[ab]}"; then
        run_tap "$WIRE_TEST" drop "$WORK/drop$run.sock" 2000 0.25 "$WORK/drop$run.seq" "seed ${run%[ab]} run $run"
        stop_hub "$HUB_PID"
    else
        not_ok "nfwire --drop: its socket did not appear"
    fi
done
check "drop: the same seed loses the same frames" cmp -s "$WORK/drop7a.seq" "$WORK/drop7b.seq"
check "drop: another seed loses other frames" bash -c "! cmp -s '$WORK/drop7a.seq' '$WORK/drop8.seq'"

# --- the RTL MACs on the wire ------------------------------------------------------------
if start_hub mac; then
    run_tap "$WIRE_MAC" "$WORK/mac.sock"
    stop_hub "$HUB_PID"
else
    not_ok "nfwire: the MAC test's socket did not appear"
fi

# --- a port's hello: its own faults and capture, a bad one refused; --idle-exit ---------
mkdir -p "$WORK/hello"
run_tap "$PY" "$CHECK_HELLO" "$NFWIRE" "$WORK/hello"

# --- TAP: a Linux stack in a network namespace made and removed here ------------------
if [ "$(id -u)" != 0 ]; then
    echo "ok - tap: ARP and ICMP through a TAP device in a network namespace # skip not root"
elif [ ! -c /dev/net/tun ]; then
    echo "ok - tap: ARP and ICMP through a TAP device in a network namespace # skip no /dev/net/tun"
elif ! ip netns add "nfwire-test-$$" 2> "$WORK/netns.err"; then
    echo "ok - tap: ARP and ICMP through a TAP device in a network namespace # skip ip netns add failed: $(head -1 "$WORK/netns.err")"
else
    NS="nfwire-test-$$"
    # nfwire runs inside the namespace, so its TAP device is created there; its socket is
    # a path in the file system, which endpoints outside the namespace reach.
    if HUB_PREFIX="ip netns exec $NS" start_hub tap --tap nfwt0 --pcap "$WORK/tap.pcap"; then
        ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2> /dev/null
        ip -n "$NS" link set nfwt0 up && ip -n "$NS" addr add 10.213.0.1/24 dev nfwt0
        check "tap: nfwire made the TAP device inside the namespace" bash -c "ip -n $NS link show nfwt0 > /dev/null"
        run_tap "$WIRE_TEST" tap "$WORK/tap.sock"
        stop_hub "$HUB_PID"
        run_tap "$PY" "$CHECK_PCAP" "$WORK/tap.pcap" --tap
    else
        not_ok "tap: nfwire --tap did not start: $(head -1 "$WORK/tap.err")"
    fi
    ip netns del "$NS"
    check "tap: the namespace is removed (and the TAP device with it)" \
        bash -c "! ip netns list | grep -qw '$NS' && ! ip link show nfwt0 2>/dev/null"
    NS=""
fi
exit $((fails > 0))
