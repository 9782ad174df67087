#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# smb_direct's two-process mode: a server and a client process, each with an adapter of
# KIND (model or sim) on a fresh simulated segment, the server's port captured. Both
# must exit 0; the capture must then decode in tshark as MS-SMBD (the SMBDirect
# Negotiate Request first, the Negotiate Response, the data transfer messages, a READ's
# answer as SEND with Invalidate, no malformed packet) and pass check_capture.py
# (ICRC, IPv4, lengths). Prints TAP lines.
# Usage: test_smb_net.sh SMB_DIRECT KIND ITERATIONS BYTES [PYTHON]
set -u
smb=$1 kind=$2 iters=$3 bytes=$4 py=${5:-python3}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
spid=
cleanup() {
    [ -n "$spid" ] && kill "$spid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
# every wait bounded: the simulated board starts and runs slower than the software adapter
if [ "$kind" = sim ]; then limit=900 ready=300; else limit=120 ready=60; fi
seg=smb$$
net=10.79.$(($$ % 200 + 20))
pcap=$tmp/server.pcap
fail=0
ok() { # CONDITION(0 = true) TEXT
    if [ "$1" = 0 ]; then echo "ok - smb-net $kind: $2"; else echo "not ok - smb-net $kind: $2"; fail=1; fi
}
show() { sed 's/^/# /' "$1"; }

timeout "$limit" "$smb" server "$kind,net=$seg,ip=$net.1/24,pcap=$pcap" >"$tmp/server.out" 2>&1 &
spid=$!
for ((i = 0; i < ready * 10; i++)); do
    grep -qs "listening on" "$tmp/server.out" && break
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.1
done
if ! grep -qs "listening on" "$tmp/server.out"; then
    show "$tmp/server.out"
    ok 1 "the server listens within ${ready} s"
    exit 1
fi
timeout "$limit" "$smb" client "$kind,net=$seg,ip=$net.2/24" "$net.1" --iterations "$iters" --bytes "$bytes" \
    >"$tmp/client.out" 2>&1
crc=$?
wait "$spid"
src=$?
spid=
[ $crc = 0 ] || show "$tmp/client.out"
[ $src = 0 ] || show "$tmp/server.out"
ok $crc "the client: $iters rounds of WRITE and READ of $bytes bytes, every byte checked (exit $crc)"
ok $src "the server serves it and exits when the client disconnects (exit $src)"
grep -h "Negotiate\|negotiated\|keep-alive" "$tmp/server.out" "$tmp/client.out" | sed 's/^/# /'
if [ ! -s "$pcap" ]; then
    ok 1 "the server port's capture is not empty"
    exit 1
fi

if ! command -v tshark >/dev/null; then
    echo "ok - smb-net $kind: tshark # SKIP not installed"
else
    # the SMB Direct dissector guesses at InfiniBand SEND payloads (a heuristic, on by
    # default); enabled here so that a user's preferences cannot turn it off
    ts() { tshark -r "$pcap" --enable-heuristic smb_direct_infiniband "$@" 2>/dev/null; }
    count() { ts -Y "$1" | wc -l; }
    first=$(ts -Y smb_direct -T fields -e _ws.col.Info | head -n 1)
    ok "$([ "$first" = NegotiateRequest ] && echo 0)" "tshark: the first SMBDirect message is the NegotiateRequest ($first)"
    req=$(ts -Y smb_direct.negotiate_request -T fields -e smb_direct.version.min -e smb_direct.version.max \
        -e smb_direct.credits.requested -e smb_direct.max_fragmented_size | head -n 1)
    ok "$(echo "$req" | grep -Eq '^0x0*100	0x0*100	[1-9][0-9]*	[0-9]+$' && echo 0)" \
        "tshark: Negotiate Request, MinVersion/MaxVersion 0x0100, credits requested ($req)"
    resp=$(ts -Y smb_direct.negotiate_response -T fields -e smb_direct.version.negotiated -e smb_direct.status \
        -e smb_direct.credits.granted -e smb_direct.max_read_write_size | head -n 1)
    ok "$(echo "$resp" | grep -Eq '^0x0*100	0x0*0	[1-9][0-9]*	[1-9][0-9]*$' && echo 0)" \
        "tshark: Negotiate Response, version 0x0100, Status 0, credits granted, MaxReadWriteSize ($resp)"
    data=$(count smb_direct.data_message)
    want=$((4 * iters + 2))
    ok "$([ "$data" -ge "$want" ] && echo 0)" "tshark: $data data transfer messages (at least $want)"
    keep=$(count "smb_direct.flags.response_requested == 1 && smb_direct.data_length == 0")
    ok "$([ "$keep" -ge 1 ] && echo 0)" "tshark: a keep-alive with SMB_DIRECT_RESPONSE_REQUESTED and no data ($keep)"
    # RC opcodes (IBA 9.2): 0x0c RDMA READ Request, 0x06/0x0a RDMA WRITE First/Only, 0x17 SEND Only with Invalidate
    reads=$(count "infiniband.bth.opcode == 0x0c")
    writes=$(count "infiniband.bth.opcode == 0x06 || infiniband.bth.opcode == 0x0a")
    inval=$(count "infiniband.bth.opcode == 0x17 && smb_direct.data_message")
    ok "$([ "$reads" -ge "$iters" ] && [ "$writes" -ge "$iters" ] && echo 0)" \
        "tshark: the server's RDMA Read requests ($reads) and RDMA Writes ($writes), one each per round"
    ok "$([ "$inval" -ge "$iters" ] && echo 0)" \
        "tshark: each READ's answer is a SEND with Invalidate carrying a data transfer message ($inval)"
    bad=$(ts -Y "_ws.malformed || _ws.expert.severity >= error" | head -n 3)
    ok "$([ -z "$bad" ] && echo 0)" "tshark: no malformed packet${bad:+: $bad}"
fi
"$py" "$here/../tests/net/check_capture.py" "$pcap" || fail=1
[ -n "${KEEP_PCAP:-}" ] && cp "$pcap" "$KEEP_PCAP"
exit $fail
