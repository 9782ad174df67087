#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Run test suites (make targets) and count their cases.

Each suite is a make target that prints one line per case, "ok - NAME" or
"not ok - NAME" (TAP style), and exits non-zero when anything failed. A suite that
fails without printing a "not ok" line counts as one failed case, so a crash is
never silent; a suite that prints no case at all counts as one failure too.
The last line printed is "N passed, M failed".
"""
import os
import re
import subprocess
import sys
import time

CASE = re.compile(r"^\s*(not ok|ok)\b(.*)$")


def run_suite(target, log_dir):
    t0 = time.time()
    proc = subprocess.Popen(["make", "--no-print-directory", "-s", target], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace")
    passed = failed = 0
    log_path = os.path.join(log_dir, target + ".log")
    with open(log_path, "w") as log:
        for line in proc.stdout:
            log.write(line)
            m = CASE.match(line)
            if m:
                if m.group(1) == "ok":
                    passed += 1
                else:
                    failed += 1
                    print(f"  FAIL {target}:{m.group(2)}", flush=True)
    rc = proc.wait()
    note = ""
    if rc != 0 and failed == 0:
        failed = 1
        note = f" (exited {rc} with no failing case: see {log_path})"
        print(f"  FAIL {target}: exited {rc}{note}", flush=True)
    elif passed + failed == 0:
        failed = 1
        note = " (ran no test case)"
    print(f"{target}: {passed} passed, {failed} failed in {time.time() - t0:.0f}s{note}", flush=True)
    return passed, failed


def main():
    targets = sys.argv[1:]
    log_dir = os.environ.get("NF_TEST_LOGS", "build/test-logs")
    os.makedirs(log_dir, exist_ok=True)
    total_p = total_f = 0
    for t in targets:
        p, f = run_suite(t, log_dir)
        total_p += p
        total_f += f
    print(f"{total_p} passed, {total_f} failed")
    return 1 if total_f or total_p == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
