#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that no two source files of a layer call each other, directly or around a circle.

Usage: check_calls.py NAME NM OBJECT...

The edges come from the objects' symbol tables (NM -> `nm`): file A calls file B when an
undefined symbol of A.o is defined in B.o. Calls through a function pointer (an ops
table, a callback) are not edges: that is how a lower file hands work back up without
naming the file above it. Prints one TAP line for the layer NAME; exits 1 on a circle,
naming the files around it.
"""
import os
import subprocess
import sys


def symbols(nm, obj):
    """(defined, undefined) global symbol names of one object file."""
    out = subprocess.run([nm, "-g", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] not in ("U", "w", "v"):
            defined.add(parts[2])
    return defined, undefined


def circles(edges):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main():
    if len(sys.argv) < 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    name, nm, objs = sys.argv[1], sys.argv[2], sys.argv[3:]
    files = {os.path.splitext(os.path.basename(o))[0]: symbols(nm, o) for o in objs}
    owner = {s: f for f, (defined, _) in files.items() for s in defined}
    edges = {f: {owner[s] for s in undefined if s in owner and owner[s] != f} for f, (_, undefined) in files.items()}
    found = circles(edges)
    n_edges = sum(len(e) for e in edges.values())
    if found:
        for comp in found:
            calls = ", ".join(f"{a} -> {b}" for a in comp for b in sorted(edges[a]) if b in comp)
            print(f"# circle in {name}: {calls}")
        print(f"not ok - {name}: files call each other around a circle ({len(found)} circle(s))")
        return 1
    print(f"ok - {name}: no circle of files calling each other ({len(files)} files, {n_edges} calls between files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
