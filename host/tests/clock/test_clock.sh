#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Every timed wait of the library runs on CLOCK_MONOTONIC (host/src/base/nf_time.h).
#  1. Static: no CLOCK_REALTIME in host/src, and every condition variable is made by
#     nf_cond_init (no pthread_cond_init elsewhere, no PTHREAD_COND_INITIALIZER).
#  2. Dynamic: test_clock under wallclock_shim.so (the wall clock an hour off) against
#     a frozen adapter: the requests' deadlines still fire on time.
# Usage: test_clock.sh BUILD_DIR (holding test_clock and wallclock_shim.so)
set -u
cd "$(dirname "$0")/../../.."
dir=$1
hits=$(grep -rn 'CLOCK_REALTIME' host/src)
if [ -z "$hits" ]; then echo "ok - no CLOCK_REALTIME in host/src"; else
    echo "not ok - CLOCK_REALTIME in host/src:"; echo "$hits" | sed 's/^/#   /'; fi
hits=$(grep -rn 'pthread_cond_init\|PTHREAD_COND_INITIALIZER' host/src | grep -v '^host/src/base/nf_time.h:')
if [ -z "$hits" ]; then echo "ok - every condition variable of host/src is made by nf_cond_init (CLOCK_MONOTONIC)"; else
    echo "not ok - condition variables made without nf_cond_init:"; echo "$hits" | sed 's/^/#   /'; fi
NDKFPGA_REQUEST_TIMEOUT_MS=300 LD_PRELOAD="$dir/wallclock_shim.so" "$dir/test_clock"
