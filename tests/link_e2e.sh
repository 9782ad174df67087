#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-link-e2e: the host link layer against the real board models.
#   nfmodel (software adapter): always, faults off and on.
#   nfsim (Verilator board): faults off (with the throughput measurement) and on,
#   sized to finish in a few minutes.
# A model that does not build or does not answer is reported as "not ok" with the
# reason, never skipped. Environment: MAKE, BUILD (from host/link.mk);
# E2E_SIM=0 leaves the Verilator runs out (for quick iterations only).
set -u
E2E="$BUILD/host-link/link_e2e"
LOG="$BUILD/host-link"
fail=0

run() { # label, then link_e2e arguments; env set by the caller
    "$E2E" "$@" || fail=1
}

build_model() { # target binary
    if ! $MAKE --no-print-directory -s "$1" >"$LOG/e2e-build-$1.log" 2>&1; then
        echo "not ok - e2e $1: \`make $1\` failed: $(tail -3 "$LOG/e2e-build-$1.log" | tr '\n' ' ')"
        return 1
    fi
}

FAULTS="--drop 1e-3 --corrupt 1e-3 --dup 1e-4"

if build_model model; then
    export NDKFPGA_MODEL="$BUILD/model/nfmodel"
    NDKFPGA_MODEL_ARGS="--seed 1" run --device model --label "model clean" --count 5000 --max-body 2048 \
        --defer-pct 50 --timeout-s 120
    NDKFPGA_MODEL_ARGS="$FAULTS --seed 7" run --device model --label "model faults" --count "${E2E_MODEL_FAULT_COUNT:-3000}" \
        --max-body 64 --defer-pct 30 --timeout-s 240 --expect-faults
else
    fail=1
fi

if [ "${E2E_SIM:-1}" != 0 ]; then
    if build_model sim; then
        export NDKFPGA_SIM="$BUILD/sim/nfsim"
        # Throughput: large PINGs, many in flight, faults off.
        NDKFPGA_SIM_ARGS="" run --device sim --label "sim clean" --count "${E2E_SIM_COUNT:-50}" --warmup 16 --max-body 4064 \
            --defer-pct 0 --timeout-s 300 --min-efficiency "${E2E_MIN_EFFICIENCY:-90}"
        NDKFPGA_SIM_ARGS="$FAULTS --seed 3" run --device sim --label "sim faults" --count "${E2E_SIM_FAULT_COUNT:-100}" \
            --max-body 64 --defer-pct 30 --timeout-s 300 --expect-faults
    else
        fail=1
    fi
fi
exit $fail
