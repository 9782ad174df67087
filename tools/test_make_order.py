#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The makefile fragments do not depend on the order they are read in: make's database
(every rule's prerequisites, every variable's value) is the same with the fragments
included forwards and in reverse, and no prerequisite is left unexpanded (NF_MK_REVERSE=1, see Makefile). Variables that the
fragments append to are compared as sets of words. Prints TAP lines."""
import re
import subprocess
import sys

# Read by make itself, or built by appending in include order.
IGNORED = {"MAKEFILE_LIST", "MAKEFLAGS", "MAKEOVERRIDES", "NF_MK_REVERSE", "-*-command-variables-*-"}


def database(reverse):
    args = ["make", "-pqR", "--no-print-directory"] + (["NF_MK_REVERSE=1"] if reverse else []) + ["help"]
    out = subprocess.run(args, capture_output=True, text=True, check=False).stdout
    rules, variables, appended = {}, {}, set()
    in_files, prev = False, ""
    for line in out.splitlines():
        if line.startswith("# Files"):
            in_files = True
        elif line.startswith("# files hash-table stats"):
            in_files = False
        elif prev.startswith("# makefile"):
            m = re.match(r"^(\S+) (:=|=|\?=|\+=) ?(.*)$", line)
            if m and m.group(1) not in IGNORED:
                variables[m.group(1)] = m.group(3)
                if m.group(2) == "+=" or "+=" in prev:
                    appended.add(m.group(1))
        elif in_files and line and not line.startswith(("#", "\t")):
            m = re.match(r"^([^:=]+?):{1,2}(?!=)\s*(.*)$", line)
            if m:
                rules[m.group(1).strip()] = " ".join(sorted(m.group(2).split("|")[0].split()))
        prev = line
    return rules, variables


def main():
    fwd_rules, fwd_vars = database(False)
    rev_rules, rev_vars = database(True)
    fail = 0

    def ok(cond, what):
        nonlocal fail
        print(("ok - " if cond else "not ok - ") + what)
        fail |= not cond

    ok(len(fwd_rules) > 100 and len(fwd_vars) > 100, "make's database read (%d rules, %d variables)" % (len(fwd_rules), len(fwd_vars)))
    bad = sorted(t for t in set(fwd_rules) | set(rev_rules) if fwd_rules.get(t) != rev_rules.get(t))
    ok(not bad, "every rule has the same prerequisites in either include order" +
       ("" if not bad else " (differ: %s)" % ", ".join(bad[:8])))
    bad = sorted(t for t, pre in fwd_rules.items() if "$" in pre)
    ok(not bad, "no prerequisite is left unexpanded (a $$ too many)" +
       ("" if not bad else " (in: %s)" % ", ".join(bad[:8])))
    bad = sorted(v for v in set(fwd_vars) | set(rev_vars)
                 if fwd_vars.get(v) != rev_vars.get(v) and
                 sorted((fwd_vars.get(v) or "").split()) != sorted((rev_vars.get(v) or "").split()))
    ok(not bad, "every variable has the same value in either include order" +
       ("" if not bad else " (differ: %s)" % ", ".join(bad[:8])))
    return fail


if __name__ == "__main__":
    sys.exit(main())
