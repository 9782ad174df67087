#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The conformance suite over the udp: transport: nfsim --link-udp on a free port of
# 127.0.0.1, the suite against udp:127.0.0.1:PORT, nfsim stopped after. Usage: NFSIM CONFORMANCE
set -u
nfsim=$1 conf=$2
for try in 1 2 3 4 5; do
    port=$((20000 + (RANDOM % 40000)))
    "$nfsim" --link-udp "$port" --quiet &
    pid=$!
    sleep 0.3
    kill -0 "$pid" 2>/dev/null && break  # it bound the port
    wait "$pid" 2>/dev/null
    pid=
done
[ -n "$pid" ] || { echo "not ok - nfsim --link-udp: no free port"; exit 1; }
NDKFPGA_DEVICE="udp:127.0.0.1:$port" "$conf"
rc=$?
kill "$pid"
wait "$pid" 2>/dev/null
exit $rc
