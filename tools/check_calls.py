#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that no two source files of a layer call each other, directly or around a circle,
and, given layers, that calls and includes only go down them.

Usage: check_calls.py NAME NM [--layers TOP,...,BOTTOM --src DIR] OBJECT...

The edges come from the objects' symbol tables (NM -> `nm`): file A calls file B when an
undefined symbol of A.o is defined in B.o. Calls through a function pointer (an ops
table, a callback) are not edges: that is how a lower file hands work back up without
naming the file above it. Prints one TAP line for the layer NAME; exits 1 on a circle,
naming the files around it.

With --layers, an object's layer is the name of its directory (build/host/obj/link/nf_link.o
is in "link") and a header's is the directory it has under DIR (DIR/link/nf_link.h). A
file may call and include its own layer and those listed after it, never one before it:
a second TAP line, and exit 1 naming each call or include that goes up. The includes come
from each object's dependency file beside it (OBJECT with .d, as -MMD writes it).
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


def includes(obj):
    """The files an object's dependency file (-MMD) names, without the object and its source."""
    dep = os.path.splitext(obj)[0] + ".d"
    if not os.path.exists(dep):
        return None
    with open(dep) as f:
        text = f.read().replace("\\\n", " ")
    rule = text.split("\n")[0]  # the object's rule; -MP's empty rules for the headers follow
    _, _, deps = rule.partition(":")
    return deps.split()[1:]


def layer_of_header(path, src, layers):
    """The layer a header belongs to: its first directory under src, when that is a layer."""
    rel = os.path.relpath(os.path.realpath(path), src)
    parts = rel.split(os.sep)
    if rel.startswith("..") or len(parts) < 2 or parts[0] not in layers:
        return None
    return parts[0]


def check_layers(name, paths, edges, layers, src):
    """One TAP line: every call and include goes down the layers (or stays in one)."""
    rank = {layer: i for i, layer in enumerate(layers)}
    layer = {f: os.path.basename(os.path.dirname(o)) for f, o in paths.items()}
    up, n_calls, n_incl, no_dep = [], 0, 0, []
    for f in sorted(paths):
        if layer[f] not in rank:
            continue
        for g in sorted(edges[f]):
            if layer[g] in rank and layer[g] != layer[f]:
                n_calls += 1
                if rank[layer[g]] < rank[layer[f]]:
                    up.append(f"call {layer[f]}/{f} -> {layer[g]}/{g}")
        deps = includes(paths[f])
        if deps is None:
            no_dep.append(f)
            continue
        for h in deps:
            hl = layer_of_header(h, src, layers)
            if hl and hl != layer[f]:
                n_incl += 1
                if rank[hl] < rank[layer[f]]:
                    up.append(f"include {layer[f]}/{f} -> {os.path.relpath(os.path.realpath(h), src)}")
    order = " > ".join(layers)
    for u in up:
        print(f"# upward in {name}: {u}")
    if no_dep:
        print(f"# no dependency file for: {', '.join(no_dep)}")
    if up or no_dep:
        print(f"not ok - {name}: calls and includes go down the layers {order} ({len(up)} going up)")
        return 1
    print(f"ok - {name}: calls and includes go down the layers {order} "
          f"({n_calls} calls and {n_incl} includes between layers)")
    return 0


def main():
    args = sys.argv[1:]
    layers, src = None, None
    while len(args) > 2 and args[2] in ("--layers", "--src"):
        if args[2] == "--layers":
            layers = args[3].split(",")
        else:
            src = os.path.realpath(args[3])
        del args[2:4]
    if len(args) < 3 or (layers is None) != (src is None):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    name, nm, objs = args[0], args[1], args[2:]
    paths = {os.path.splitext(os.path.basename(o))[0]: o for o in objs}
    if len(paths) < len(objs):
        print(f"not ok - {name}: two objects share a file name", file=sys.stderr)
        return 2
    files = {f: symbols(nm, o) for f, o in paths.items()}
    owner = {s: f for f, (defined, _) in files.items() for s in defined}
    edges = {f: {owner[s] for s in undefined if s in owner and owner[s] != f} for f, (_, undefined) in files.items()}
    found = circles(edges)
    n_edges = sum(len(e) for e in edges.values())
    rc = 0
    if found:
        for comp in found:
            calls = ", ".join(f"{a} -> {b}" for a in comp for b in sorted(edges[a]) if b in comp)
            print(f"# circle in {name}: {calls}")
        print(f"not ok - {name}: files call each other around a circle ({len(found)} circle(s))")
        rc = 1
    else:
        print(f"ok - {name}: no circle of files calling each other ({len(files)} files, {n_edges} calls between files)")
    if layers:
        rc |= check_layers(name, paths, edges, layers, src)
    return rc


if __name__ == "__main__":
    sys.exit(main())
