#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source file git tracks (code, scripts, makefiles, constraints, tool configs; not
# docs, images or data) names its licence on one of its first three lines, and LICENSE
# holds the licence's text. Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/.."
tag="SPDX-License-Identifier: Apache-2.0"
missing=""
n=0
while IFS= read -r f; do
    n=$((n + 1))
    head -n 3 "$f" | grep -qF "$tag" || missing="$missing $f"
done < <(git ls-files | grep -E '(\.(c|h|cpp|S|ld|v|vh|vlt|mk|sh|py|toml|ys|sby|rules|lpf|floorplan|in)$|(^|/)Makefile$|^\.ci/run$)')
if [ -z "$missing" ]; then echo "ok - spdx: all $n source files name their licence ($tag)"
else echo "not ok - spdx: no '$tag' in the first three lines of:$missing"; fi
if grep -q "Apache License" LICENSE 2>/dev/null && grep -q "Version 2.0, January 2004" LICENSE; then
    echo "ok - spdx: LICENSE holds the Apache License 2.0"
else echo "not ok - spdx: LICENSE is missing or not the Apache License 2.0"; fi
