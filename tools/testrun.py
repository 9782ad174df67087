#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Run test suites (make targets) from the manifest, tests/suites.toml, and count their cases.

Usage: testrun.py [--tier check|sim|fpga|all] [--jobs N] [SUITE...]
       testrun.py --list MAKEFILE...     the suites by tier, with their `## ` descriptions
       testrun.py --check-manifest       TAP: the makefiles' test-* rules and the manifest agree

Each suite is a make target that prints one line per case, "ok - NAME" or
"not ok - NAME" (TAP style), and exits non-zero when anything failed. A suite that
fails without printing a "not ok" line counts as one failed case, so a crash is
never silent; a suite that prints no case at all counts as one failure too.
With --jobs N > 1 the suites' programs are built first by one make -j N (make alone
orders shared prerequisites), then up to N suites run at once, costly ones first;
suites marked alone run afterwards with nothing beside them.
The last line printed is "N passed, M failed".
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import threading
import time
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "tests", "suites.toml")
TIERS = ("check", "sim", "fpga")
FIELDS = {"name": str, "tier": str, "cost": int, "needs": list}
CASE = re.compile(r"^\s*(not ok|ok)\b(.*)$")
RULE = re.compile(r"^(test-[A-Za-z0-9_.-]+):(?!=)(.*)$")
DOC = re.compile(r"^(test-[A-Za-z0-9_.-]+):.*## (.*)$")
_print_lock = threading.Lock()


def say(text):
    with _print_lock:
        print(text, flush=True)


def load_manifest(path=MANIFEST):
    """The suites in manifest order; a malformed entry stops the run with its name."""
    with open(path, "rb") as f:
        suites = tomllib.load(f).get("suite", [])
    seen = set()
    for s in suites:
        for field, kind in FIELDS.items():
            if not isinstance(s.get(field), kind):
                sys.exit(f"testrun: {path}: suite {s.get('name', '?')}: {field} must be a {kind.__name__}")
        if s["tier"] not in TIERS:
            sys.exit(f"testrun: {path}: suite {s['name']}: tier {s['tier']!r} is not one of {', '.join(TIERS)}")
        if s["name"] in seen:
            sys.exit(f"testrun: {path}: suite {s['name']} is listed twice")
        seen.add(s["name"])
        s.setdefault("alone", False)
    return suites


def make_rules():
    """{target: [prerequisites]} of every test-* rule make knows (its database, nothing run)."""
    out = subprocess.run(["make", "-pq", "--no-print-directory", "help"], cwd=ROOT, capture_output=True,
                         text=True, errors="replace").stdout
    rules = {}
    for line in out.splitlines():
        m = RULE.match(line)
        if m and not re.search(r"(^|\s)\S*\s*[:+?]?=", m.group(2)):
            rules[m.group(1)] = [p for p in m.group(2).split() if p != "|"]
    return rules


def run_suite(target, log_dir):
    t0 = time.time()
    proc = subprocess.Popen(["make", "--no-print-directory", "-s", target], cwd=ROOT, stdout=subprocess.PIPE,
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
                    say(f"  FAIL {target}:{m.group(2)}")
    rc = proc.wait()
    note = ""
    if rc != 0 and failed == 0:
        failed = 1
        note = f" (exited {rc} with no failing case: see {log_path})"
        say(f"  FAIL {target}: exited {rc}{note}")
    elif passed + failed == 0:
        failed = 1
        note = " (ran no test case)"
    say(f"{target}: {passed} passed, {failed} failed in {time.time() - t0:.0f}s{note}")
    return passed, failed


def build_first(names, jobs, log_dir):
    """One make -j builds every program the suites use, so parallel suites build nothing."""
    rules = make_rules()
    prereqs = []
    for n in names:
        prereqs += [p for p in rules.get(n, []) if p not in names and p not in prereqs]
    if not prereqs:
        return
    t0 = time.time()
    log_path = os.path.join(log_dir, "build.log")
    with open(log_path, "w") as log:
        rc = subprocess.run(["make", "--no-print-directory", "-s", "-k", f"-j{jobs}"] + prereqs, cwd=ROOT,
                            stdout=log, stderr=subprocess.STDOUT).returncode
    # A failed build is reported by the suites that need it, each with its own log.
    say(f"build: {len(prereqs)} prerequisites in {time.time() - t0:.0f}s"
        + ("" if rc == 0 else f" (make exited {rc}: see {log_path})"))


def run(names, suites, jobs, log_dir):
    by_name = {s["name"]: s for s in suites}
    total = [0, 0]

    count_lock = threading.Lock()

    def one(n):
        p, f = run_suite(n, log_dir)
        with count_lock:
            total[0] += p
            total[1] += f

    if jobs <= 1:
        for n in names:
            one(n)
        return total
    build_first(names, jobs, log_dir)
    together = sorted((n for n in names if not by_name.get(n, {}).get("alone")),
                      key=lambda n: -by_name.get(n, {}).get("cost", 0))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for fut in [pool.submit(one, n) for n in together]:
            fut.result()
    for n in names:
        if by_name.get(n, {}).get("alone"):
            one(n)
    return total


def docs(makefiles):
    """{suite: description} from the makefiles' `target: ... ## description` lines."""
    found = {}
    for path in makefiles:
        with open(os.path.join(ROOT, path)) as f:
            for line in f:
                m = DOC.match(line)
                if m:
                    found.setdefault(m.group(1), m.group(2).strip())
    return found


def list_suites(suites, makefiles):
    described = docs(makefiles)
    heads = {"check": "make check (the inner loop)", "sim": "make test adds (simulation, faults, stress)",
             "fpga": "make test adds (synthesis, place and route)"}
    for tier in TIERS:
        print(f"suites, tier {tier}: {heads[tier]}")
        for s in suites:
            if s["tier"] == tier:
                mark = " [alone]" if s["alone"] else ""
                print(f"  {s['name']:<24} {described.get(s['name'], '(no description)')}{mark}")


def check_manifest(suites):
    """TAP: every test-* rule is a listed suite with a description, and every suite a rule."""
    rules = make_rules()
    makefiles = [os.path.relpath(os.path.join(d, f), ROOT) for d, _, fs in os.walk(ROOT)
                 if not os.path.relpath(d, ROOT).startswith(("build", ".venv", ".git"))
                 for f in fs if f == "Makefile" or f.endswith(".mk")]
    described = docs(makefiles)
    listed = {s["name"] for s in suites}
    bad = 0
    for name, what in ((sorted(set(rules) - listed), "test-* rules missing from tests/suites.toml"),
                       (sorted(listed - set(rules)), "suites of tests/suites.toml with no make rule"),
                       (sorted(n for n in listed if n not in described), "suites with no `## ` description")):
        print(("ok - " if not name else "not ok - ") + f"no {what}" + (f": {' '.join(name)}" if name else ""))
        bad += bool(name)
    per_tier = {t: sum(s["cost"] for s in suites if s["tier"] == t) for t in TIERS}
    print(f"ok - every tier has suites ({', '.join(f'{t} {per_tier[t]} s' for t in TIERS)})"
          if all(per_tier.values()) else "not ok - a tier has no suite")
    return 1 if bad or not all(per_tier.values()) else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tier", choices=TIERS + ("all",))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--list", nargs="*", metavar="MAKEFILE")
    ap.add_argument("--check-manifest", action="store_true")
    ap.add_argument("suites", nargs="*")
    args = ap.parse_args()
    suites = load_manifest()
    if args.list is not None:
        list_suites(suites, args.list)
        return 0
    if args.check_manifest:
        return check_manifest(suites)
    names = list(args.suites)
    if args.tier:
        names += [s["name"] for s in suites if args.tier in ("all", s["tier"]) and s["name"] not in names]
    if not names:
        ap.error("no suite named and no --tier")
    log_dir = os.environ.get("NF_TEST_LOGS", os.path.join(ROOT, "build", "test-logs"))
    os.makedirs(log_dir, exist_ok=True)
    passed, failed = run(names, suites, max(1, args.jobs), log_dir)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
