#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make test-readme: README's quick-start block and the list .ci/run runs agree, and the
# check notices when they drift apart (a command changed, added or reordered).
set -uo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fail=1; }

if python3 tools/readme_quickstart.py --check .ci/run > "$tmp/out" 2>&1; then ok "README's quick start is what .ci/run runs"
else sed 's/^/# /' "$tmp/out"; notok "README's quick start is what .ci/run runs"; fi
first=$(python3 tools/readme_quickstart.py | head -n 1)
[ "$first" = "make demo" ] && ok "README's first command is make demo" || notok "README's first command is make demo (got '$first')"

drifted() { # description sed-expression: the check must fail on a README edited so
    sed "$2" README.md > "$tmp/README.md"
    if cmp -s README.md "$tmp/README.md"; then notok "drift case '$1' changed nothing"; return; fi
    if python3 tools/readme_quickstart.py --readme "$tmp/README.md" --check .ci/run > "$tmp/out" 2>&1; then
        notok "a README with $1 passes the check"
    else ok "a README with $1 fails the check"; fi
}
drifted "a changed command" 's/^make demo /make demo DEMO_DEVICE=model /'
drifted "an added command" 's/^make test /make lint\nmake test /'
drifted "the commands reordered" '/^make demo /{h;d};/^make test /{G}'
drifted "no quick-start section" 's/^## Quick start/## Getting going/'
exit $fail
