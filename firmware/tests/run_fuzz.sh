#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bounded libFuzzer run of a firmware harness, reported as one test case.
# Seeds the corpus with a few well-formed inputs so the run starts deep: the message
# handler's (fuzz_fw.c) below, or those a seed script writes.
# Usage: run_fuzz.sh FUZZER RUNS [NAME SEED_SCRIPT MAX_LEN]
set -u
fuzz=$1 runs=$2 name=${3:-fuzz-firmware} seeds=${4:-} max_len=${5:-512}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/corpus"
if [ -n "$seeds" ]; then
    python3 "$seeds" "$tmp/corpus" || exit 1
else
# Records: [op index into ops[] of fuzz_fw.c][field selector][body length / 8][body].
# Selector 0xCD: real token 1 (fast, remote access), real connected QP, well-formed.
python3 - "$tmp/corpus" <<'PY'
import os, sys
d = sys.argv[1]
def rec(op, sel, body):
    return bytes([op, sel, len(body) // 8]) + body
z = bytes(64)
bind = bytearray(40); bind[8] = 0x38; bind[32] = 0x40
bind = bytes(bind)
rdma_w = bytearray(32); rdma_w[19] = 0x80
rdma_w = bytes(rdma_w)
seeds = {
    "fr": b"\0" + rec(14, 0xCD, z),
    "fr_inv": b"\0" + rec(14, 0xCD, z) + rec(15, 0xCD, bytes(24)),
    "fr_write": b"\0" + rec(14, 0xCD, z) + rec(17, 0xE8, bytes(48)),
    "frmr_reg": b"\0" + rec(9, 0x89, bytes(16)) + rec(7, 0x88, z),
    # a window bound over the registered MR (remote read/write, 64 bytes), then an RDMA
    # Write through it and the MR's deregistration (the cascade)
    "bind_write": b"\0" + rec(24, 0x48, bind) + rec(17, 0x48, rdma_w) + rec(8, 0x80, bytes(16)),
    "raw": b"\1" + bytes([1, 0, 16, 0, 1, 0, 0, 0]) + bytes(8),
}
for name, data in seeds.items():
    open(os.path.join(d, name), "wb").write(data)
PY
fi
out=$("$fuzz" -runs="$runs" -max_len="$max_len" -seed=1 -timeout=10 -artifact_prefix="$tmp/" "$tmp/corpus" 2>&1)
rc=$?
if [ $rc = 0 ]; then
    echo "ok - $name: $runs random inputs, invariants checked after every record"
    echo "$out" | grep -E "^#[0-9]+ *DONE|Done [0-9]+ runs" | sed 's/^/# /'
else
    echo "not ok - $name: the fuzzer found a failure"
    echo "$out" | tail -40 | sed 's/^/# /'
fi
exit $rc
