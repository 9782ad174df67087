#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Device strings with a network port ("sim,net=NAME,ip=..."): adapters on one named
# segment in one process and in two, their MACs and addresses, per-port pcap, loss,
# dup and corrupt against a Linux stack in a network namespace (root; else skipped),
# bad option strings refused before anything starts, and no process left behind.
# Also `ndkfpga addr` on such adapters, and on one whose firmware has no network layer.
# usage: test_net_seg.sh NET_SEG NFMODEL PYTHON NDKFPGA FIRMWARE_WITHOUT_NET
set -u
net_seg=$1 nfmodel=$2 py=$3 cli=$4 fw_link=$5
tmp=$(mktemp -d) ns=nfseg$$ hold_pids=()
chmod 700 "$tmp"
# The segments' sockets live under $XDG_RUNTIME_DIR/ndkfpga-net: this test's own.
export XDG_RUNTIME_DIR=$tmp/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
segdir=$XDG_RUNTIME_DIR/ndkfpga-net
cleanup() {
    touch "$tmp/stop"
    for p in "${hold_pids[@]}"; do wait "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
ok() { if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fail=1; fi; }
skip() { echo "ok - $1 # skip $2"; }
# Live (not zombie) processes started for this test: their arguments name $tmp.
ours() { ps -eo stat=,args= | awk '$1 !~ /^Z/' | grep -F "$tmp" | grep -v -e grep -e awk; }
# Wait up to $1 seconds for none of ours to be left.
none_left() { local i; for i in $(seq $(( $1 * 10 ))); do [ -z "$(ours)" ] && return 0; sleep 0.1; done; return 1; }
wait_for() { local i; for i in $(seq $(( $2 * 10 ))); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }
mac_of() { sed -n "${2}p" "$1" | cut -d' ' -f1; }
ip_of() { sed -n "${2}p" "$1" | cut -d' ' -f2; }

# ---- (a) one process, two adapters on one segment --------------------------------------
A="sim,net=one,ip=10.88.0.2/24" B="sim,net=one,ip=10.88.0.3/16"
timeout 120 "$net_seg" addr "$A" "$B" > "$tmp/one.out" 2> "$tmp/one.err"
rc=$?
ok $rc "one process: two sim adapters on segment \"one\" open ($(tr '\n' ' ' < "$tmp/one.err"))"
ma=$(mac_of "$tmp/one.out" 1) mb=$(mac_of "$tmp/one.out" 2)
[ -n "$ma" ] && [ -n "$mb" ] && [ "$ma" != "$mb" ] && [[ $ma == 02:6e:* ]] && [[ $mb == 02:6e:* ]]
ok $? "one process: different default MACs 02:6e:... ($ma, $mb)"
[ "$(ip_of "$tmp/one.out" 1)" = 10.88.0.2/24 ] && [ "$(ip_of "$tmp/one.out" 2)" = 10.88.0.3/16 ]
ok $? "one process: the addresses read back ($(ip_of "$tmp/one.out" 1), $(ip_of "$tmp/one.out" 2))"
timeout 120 "$net_seg" addr "$A" > "$tmp/again.out" 2>&1
[ "$(mac_of "$tmp/again.out" 1)" = "$ma" ]
ok $? "the default MAC is stable: reopened, $A has $(mac_of "$tmp/again.out" 1) again"
timeout 120 "$net_seg" addr "sim,net=one,ip=10.88.0.4/24,mac=02:12:34:56:78:9a" > "$tmp/mac.out" 2>&1
[ "$(mac_of "$tmp/mac.out" 1)" = 02:12:34:56:78:9a ]
ok $? "mac= sets the MAC ($(head -1 "$tmp/mac.out"))"
none_left 5
ok $? "after the adapters close, no nfsim or nfwire is left ($(ours | head -3 | tr '\n' ';'))"
[ -z "$(find "$segdir" -name '*.sock' 2>/dev/null)" ]
ok $? "the segment's socket is gone with its switch"

# ---- (a) two processes starting together on a new segment -------------------------------
for i in 2 3; do
    timeout 120 "$net_seg" hold "$tmp/ready$i" "$tmp/stop" 60 "sim,net=two,ip=10.88.1.$i/24" \
        > "$tmp/two$i.out" 2> "$tmp/two$i.err" & hold_pids+=($!)
done
wait_for "$tmp/ready2" 60 && wait_for "$tmp/ready3" 60
ok $? "two processes: both open at once on new segment \"two\" ($(cat "$tmp/two2.err" "$tmp/two3.err" | tr '\n' ' '))"
switches=$(ours | grep -c "nfwire.*two.sock")
[ "$switches" = 1 ]
ok $? "two processes: they share one switch ($switches running)"
m2=$(mac_of "$tmp/two2.out" 1) m3=$(mac_of "$tmp/two3.out" 1)
[ -n "$m2" ] && [ -n "$m3" ] && [ "$m2" != "$m3" ]
ok $? "two processes: different MACs ($m2, $m3)"
[ "$(ip_of "$tmp/two2.out" 1)" = 10.88.1.2/24 ] && [ "$(ip_of "$tmp/two3.out" 1)" = 10.88.1.3/24 ]
ok $? "two processes: the addresses read back"
touch "$tmp/stop"
for p in "${hold_pids[@]}"; do wait "$p"; done
hold_pids=()
rm -f "$tmp/stop"
none_left 5
ok $? "two processes: nothing left after both close"

# ---- ndkfpga addr ---------------------------------------------------------------------
out=$(timeout 120 "$cli" addr --json "sim,net=cli,ip=10.88.3.2/20" 2>&1); rc=$?
[ $rc = 0 ] && [[ $out == '{"mac": "02:6e:'*'", "ipv4": "10.88.3.2", "prefix_length": 20}' ]]
ok $? "ndkfpga addr --json: the MAC and the device string's address ($out)"
out=$(timeout 120 "$cli" addr 10.88.3.9/28 --mac 02:aa:bb:cc:dd:0e sim 2>&1); rc=$?
[ $rc = 0 ] && [ "$out" = "$(printf 'mac  02:aa:bb:cc:dd:0e\ninet 10.88.3.9/28')" ]
ok $? "ndkfpga addr A.B.C.D/N --mac: set, then read back ($(echo $out))"
out=$(timeout 120 "$cli" addr 10.88.3.0/24 sim 2>&1); rc=$?
[ $rc = 1 ] && [[ $out == *STATUS_INVALID_PARAMETER* ]]
ok $? "ndkfpga addr: a subnet's network address is refused, exit 1 ($out)"
out=$(NDKFPGA_SIM_ARGS="--firmware $fw_link" timeout 120 "$cli" addr sim 2>&1); rc=$?
[ $rc = 1 ] && [[ $out == *"STATUS_NOT_SUPPORTED (the adapter has no network port)"* ]]
ok $? "ndkfpga addr on an adapter without a network port: NOT_SUPPORTED, exit 1 ($out)"
out=$(NDKFPGA_SIM_ARGS="--firmware $fw_link" timeout 120 "$net_seg" addr "sim,net=nonet,ip=10.88.4.2" 2>&1); rc=$?
[ $rc = 1 ] && [[ $out == *"STATUS_NOT_SUPPORTED (net=: the adapter has no network port"* ]]
ok $? "net= on an adapter without a network port: the open fails NOT_SUPPORTED ($out)"
none_left 5
ok $? "ndkfpga addr: nothing left"

# ---- (d) bad option strings: refused, nothing started -----------------------------------
# Stand-ins record being started; with them a good string starts them (the control).
mkdir "$tmp/fake"
for b in nfsim nfwire; do
    printf '#!/bin/sh\ntouch "%s/fake/started-%s"\nexit 1\n' "$tmp" "$b" > "$tmp/fake/$b"
    chmod +x "$tmp/fake/$b"
done
bad=("sim,net=x" "sim,net=x,ip=10.1.1.1/40" "sim,net=x,ip=10.1.1" "sim,net=x/y,ip=10.1.1.1" "sim,net=x,ip=10.1.1.1,loss=1.5"
     "sim,net=x,ip=10.1.1.1,dup=-0.1" "sim,net=x,ip=10.1.1.1,mac=01:00:00:00:00:01" "sim,net=x,ip=10.1.1.1,mac=02:00:00"
     "sim,net=x,ip=10.1.1.1,frob=1" "sim,net=x,ip=10.1.1.1,," "sim,net=x,ip=10.1.1.1,ip=10.1.1.2" "sim,ip=10.1.1.1"
     "model,net=x,ip=10.1.1.1,corrupt=2" "sim,net=x,ip=10.1.1.1,tap=" "usb,net=x,ip=10.1.1.1")
for d in "${bad[@]}"; do
    out=$(NDKFPGA_SIM=$tmp/fake/nfsim NDKFPGA_MODEL=$tmp/fake/nfsim NDKFPGA_WIRE=$tmp/fake/nfwire \
          timeout 20 "$net_seg" bad "$d" 2>&1)
    rc=$?
    [ $rc = 0 ] && [[ $out == *"STATUS_INVALID_PARAMETER ("?* ]] && [ ! -e "$tmp/fake/started-nfsim" ] &&
        [ ! -e "$tmp/fake/started-nfwire" ] && [ ! -e "$segdir/x.sock" ] && [ ! -e "$segdir/x.lock" ]
    ok $? "bad device string \"$d\": $out; nothing started"
done
NDKFPGA_SIM=$tmp/fake/nfsim NDKFPGA_WIRE=$tmp/fake/nfwire timeout 20 "$net_seg" addr "sim,net=x,ip=10.1.1.1" \
    > /dev/null 2>&1
[ -e "$tmp/fake/started-nfwire" ]
ok $? "control: a good string with the stand-ins does start the switch (the check above can fail)"
none_left 5
ok $? "bad strings: no process left"

# ---- model: only once nfmodel takes --wire ------------------------------------------------
if [ -x "$nfmodel" ] && "$nfmodel" --help 2>&1 | grep -q -- --wire; then
    timeout 120 "$net_seg" addr "model,net=mod,ip=10.88.2.2/24" "model,net=mod,ip=10.88.2.3/24" > "$tmp/mod.out" 2>&1
    rc=$?
    [ $rc = 0 ] && [ "$(mac_of "$tmp/mod.out" 1)" != "$(mac_of "$tmp/mod.out" 2)" ] &&
        [ "$(ip_of "$tmp/mod.out" 2)" = 10.88.2.3/24 ]
    ok $? "model: two adapters on one segment, different MACs, addresses read back ($(tr '\n' ' ' < "$tmp/mod.out"))"
else
    skip "model: two adapters on one segment, different MACs, addresses read back" "nfmodel does not take --wire yet"
fi

# ---- (b), (c) a Linux stack in a network namespace ---------------------------------------
root_cases=("tap+pcap: Linux pings both adapters" "tap+pcap: the port's capture is a standard pcap with ARP and ICMP"
            "tap+pcap: the capture holds only that port's frames" "loss=1: the ping fails, nothing hangs"
            "dup=1: the replies arrive twice" "corrupt=1: the ping fails" "namespaces: nothing left")
if [ "$(id -u)" != 0 ] || [ ! -e /dev/net/tun ] || ! ip netns add "$ns" 2>/dev/null; then
    for c in "${root_cases[@]}"; do skip "$c" "needs root, /dev/net/tun and network namespaces"; done
    exit $fail
fi
ip netns exec "$ns" ip link set lo up
# hold_in_ns NAME TAPNAME NET DEVICE...: adapters held in the namespace, the TAP configured.
hold_in_ns() {
    local name=$1 tap=$2 net=$3; shift 3
    rm -f "$tmp/stop"
    ip netns exec "$ns" timeout 180 "$net_seg" hold "$tmp/ready-$name" "$tmp/stop" 120 "$@" \
        > "$tmp/$name.out" 2> "$tmp/$name.err" & hold_pids+=($!)
    wait_for "$tmp/ready-$name" 60 || return 1
    ip netns exec "$ns" ip addr add "$net.1/24" dev "$tap" && ip netns exec "$ns" ip link set "$tap" up
}
release() {
    touch "$tmp/stop"
    for p in "${hold_pids[@]}"; do timeout 30 tail --pid="$p" -f /dev/null; done
    hold_pids=()
}
pcap=$tmp/port1.pcap
hold_in_ns tp nfp$$ 10.77.5 "sim,net=tp,ip=10.77.5.2/24,tap=nfp$$,pcap=$pcap" "sim,net=tp,ip=10.77.5.3/24"
ip netns exec "$ns" ping -c 3 -W 10 -i 0.3 10.77.5.2 > "$tmp/ping2.log" 2>&1; r2=$?
ip netns exec "$ns" ping -c 3 -W 10 -i 0.3 10.77.5.3 > "$tmp/ping3.log" 2>&1; r3=$?
release
[ $r2 = 0 ] && [ $r3 = 0 ]
ok $? "${root_cases[0]} (.2: $(grep -o '[0-9]* received' "$tmp/ping2.log"), .3: $(grep -o '[0-9]* received' "$tmp/ping3.log"); $(cat "$tmp/tp.err"))"
"$py" - "$pcap" 10.77.5.2 10.77.5.3 > "$tmp/pcap.out" 2>&1 <<'PYEOF'
import sys
from scapy.all import ARP, ICMP, IP, rdpcap
pk = rdpcap(sys.argv[1])
mine, other = sys.argv[2], sys.argv[3]
arp = [p for p in pk if ARP in p]
echo_reply = [p for p in pk if ICMP in p and p[ICMP].type == 0 and p[IP].src == mine]
echo_req = [p for p in pk if ICMP in p and p[ICMP].type == 8 and p[IP].dst == mine]
foreign = [p for p in pk if IP in p and other in (p[IP].src, p[IP].dst)]
print("frames %d arp %d echo-requests %d echo-replies %d other-port-ip %d" %
      (len(pk), len(arp), len(echo_req), len(echo_reply), len(foreign)))
print("STANDARD" if len(arp) >= 1 and len(echo_req) >= 3 and len(echo_reply) >= 3 else "MISSING")
print("OWN" if not foreign else "FOREIGN")
PYEOF
grep -q STANDARD "$tmp/pcap.out"
ok $? "${root_cases[1]} ($(head -1 "$tmp/pcap.out"))"
grep -q '^OWN' "$tmp/pcap.out"
ok $? "${root_cases[2]}"

hold_in_ns tl nfl$$ 10.77.6 "sim,net=tl,ip=10.77.6.2/24,tap=nfl$$,loss=1"
t0=$(date +%s)
timeout 60 ip netns exec "$ns" ping -c 2 -W 2 10.77.6.2 > "$tmp/pingl.log" 2>&1; rl=$?
release
t1=$(date +%s)
[ $rl = 1 ] && grep -q " 0 received" "$tmp/pingl.log" && [ $((t1 - t0)) -lt 45 ]
ok $? "${root_cases[3]} (ping exit $rl, $(grep -o '[0-9]* received' "$tmp/pingl.log"), $((t1 - t0)) s to fail and close)"

hold_in_ns td nfd$$ 10.77.7 "sim,net=td,ip=10.77.7.2/24,tap=nfd$$,dup=1"
ip netns exec "$ns" ping -c 3 -W 10 -i 0.3 10.77.7.2 > "$tmp/pingd.log" 2>&1; rd=$?
release
# ping stops at its third reply, so the third one's copy may come after it has gone.
dups=$(grep -o '+[0-9]* duplicates' "$tmp/pingd.log")
[ $rd = 0 ] && { [ "$dups" = "+2 duplicates" ] || [ "$dups" = "+3 duplicates" ]; }
ok $? "${root_cases[4]} (${dups:-no duplicates}: $(tail -2 "$tmp/pingd.log" | head -1))"

hold_in_ns tc nfc$$ 10.77.8 "sim,net=tc,ip=10.77.8.2/24,tap=nfc$$,corrupt=1"
timeout 60 ip netns exec "$ns" ping -c 2 -W 2 10.77.8.2 > "$tmp/pingc.log" 2>&1; rc=$?
release
[ $rc = 1 ] && grep -q " 0 received" "$tmp/pingc.log"
ok $? "${root_cases[5]} (ping exit $rc, $(grep -o '[0-9]* received' "$tmp/pingc.log"))"

none_left 5
ok $? "${root_cases[6]} ($(ours | head -3 | tr '\n' ';'))"
exit $fail
