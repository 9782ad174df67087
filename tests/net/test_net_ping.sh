#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A Linux host pings a simulated adapter over the simulated wire: nfwire bridges the
# segment to a TAP device in a network namespace this test creates and removes; nfsim
# joins the segment (--wire) and the host link sets its address (net_config.py). The
# kernel's ARP must learn the adapter's MAC and its pings must be answered. Needs root
# (a namespace, a TAP device); without it every case is skipped. FIRMWARE "-": the adapter
# is nfmodel (the firmware's host build on the C models), given as the first argument.
# Usage: test_net_ping.sh NFSIM|NFMODEL NFWIRE FIRMWARE|-
set -u
nfsim=$1 nfwire=$2 fw=$3
if [ "$fw" = - ]; then kind=nfmodel adapter_args=(); else kind=nfsim adapter_args=(--firmware "$fw"); fi
here=$(dirname "$0")
tmp=$(mktemp -d) ns=nfnet$$ pids=()
cleanup() {
    touch "$tmp/stop"
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    ip netns del "$ns" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
ok() { if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fail=1; fi; }
cases=("ping ($kind): the namespace's kernel learns the adapter's MAC by ARP" "ping ($kind): 3 echo requests answered"
       "ping ($kind): the adapter counts the ARP requests and echoes it answered")
if [ "$(id -u)" != 0 ] || [ ! -e /dev/net/tun ] || ! ip netns add "$ns" 2>/dev/null; then
    for c in "${cases[@]}"; do echo "ok - $c # skip needs root, /dev/net/tun and network namespaces"; done
    exit 0
fi
# Wait up to $2 seconds for file $1 to appear.
wait_for() { local i; for i in $(seq $(( $2 * 10 ))); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }

ip netns exec "$ns" "$nfwire" --socket "$tmp/wire.sock" --tap nft0 & pids+=($!)
wait_for "$tmp/wire.sock" 10 || { echo "not ok - nfwire did not start"; exit 1; }
ip netns exec "$ns" ip link set lo up
ip netns exec "$ns" ip addr add 10.77.0.1/24 dev nft0
ip netns exec "$ns" ip link set nft0 up
"$nfsim" --socket "$tmp/host.sock" --wire "$tmp/wire.sock" "${adapter_args[@]}" --quiet & pids+=($!)
wait_for "$tmp/host.sock" 30 || { echo "not ok - $kind did not start"; exit 1; }
python3 "$here/net_config.py" "$tmp/host.sock" 10.77.0.2 24 "$tmp/stop" > "$tmp/host.log" 2>&1 & host=$!
wait_for "$tmp/stop.mac" 60
mac=$(cat "$tmp/stop.mac" 2>/dev/null)
ip netns exec "$ns" ping -c 3 -W 20 -i 0.5 10.77.0.2 > "$tmp/ping.log" 2>&1
rc=$?
neigh=$(ip netns exec "$ns" ip neigh show 10.77.0.2 dev nft0)
[ -n "$mac" ] && echo "$neigh" | grep -qi "lladdr $mac"
ok $? "${cases[0]} ($mac; ${neigh:-no entry})"
[ $rc = 0 ] && grep -q "3 received" "$tmp/ping.log"
ok $? "${cases[1]} ($(grep -o '[0-9]* received' "$tmp/ping.log"))"
touch "$tmp/stop"
wait "$host"
sed 's/^/# /' "$tmp/host.log"
grep -q "^not ok" "$tmp/host.log" && fail=1
answered=$(awk '$1 == "net_icmp_answered" { print $2 }' "$tmp/stop.stats" 2>/dev/null)
arp=$(awk '$1 == "net_arp_answered" { print $2 }' "$tmp/stop.stats" 2>/dev/null)
[ "${answered:-0}" -ge 3 ] && [ "${arp:-0}" -ge 1 ]
ok $? "${cases[2]} (ARP ${arp:-?}, ICMP ${answered:-?})"
sed 's/^/# /' "$tmp/ping.log"
exit $fail
