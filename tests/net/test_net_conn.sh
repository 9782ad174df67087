#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# NDK connections between two adapters (net_conn) on a fresh segment, adapter A's port
# captured; the capture is then checked by oracles this project did not write
# (check_capture.py: scapy's ICRC, IPv4 checksums and lengths; tshark's decode and its
# IB CM dissector). Usage: test_net_conn.sh NET_CONN PYTHON KIND_A KIND_B [BIG_BYTES]
# (KIND: model or sim; BIG_BYTES may be `quick`, net_conn's short exchange; PORT_FAULTS:
# options added to both device strings, no capture check).
set -u
net_conn=$1 py=$2 kind_a=$3 kind_b=$4 big=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
seg=ndk$$
faults=${PORT_FAULTS:+,$PORT_FAULTS}
pcap=
[ -z "${PORT_FAULTS:-}" ] && pcap=",pcap=$tmp/a.pcap"
timeout 900 "$net_conn" "$kind_a,net=$seg,ip=10.78.0.1/24$faults$pcap" "$kind_b,net=$seg,ip=10.78.0.2/24$faults" $big
rc=$?
if [ -n "$pcap" ]; then
    if [ -s "$tmp/a.pcap" ]; then
        # the quick exchange refuses no connection: no REJ to find
        "$py" "$here/check_capture.py" "$tmp/a.pcap" --cm ${big:+$([ "$big" = quick ] && echo --no-rej)} || rc=1
    else
        echo "not ok - net_conn: adapter A's capture is empty"
        rc=1
    fi
fi
exit $rc
