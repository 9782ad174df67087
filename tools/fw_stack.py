#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The firmware's worst-case stack depth, from the compiler's own figures: fails when it
exceeds the stack reserve.

Usage: fw_stack.py --elf nf_fw.elf --reserve BYTES [--objdump CMD] CI_FILE...

Each CI_FILE is GCC's call-graph file of one object (-fcallgraph-info=su): every function
defined there with its frame (bytes, static) and the calls it makes. The ELF adds what the
compiler's files cannot say: calls the compiler emits on its own (memset for a zeroed
array) and the frames of library functions (the prologue's sp adjustment), and which
functions an indirect call may reach (every function whose address an object's data holds,
by its relocations; the .o beside each CI_FILE). The depth of a function is its frame plus the deepest of its callees; the
firmware has no interrupts, so the depth from _start is the whole stack. A recursive call,
a frame of dynamic size or a library function that calls another is an error: the bound
would not hold.
"""
import argparse
import re
import subprocess
import sys

ROOT_FUNC = "_start"
INDIRECT = "__indirect_call"


def parse_ci(path):
    """Nodes (title -> (name, frame or None)) and edges (source, target) of one .ci file."""
    nodes, edges = {}, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r'node: \{ title: "([^"]+)" label: "([^"]*)"', line)
            if m:
                title, label = m.groups()
                parts = label.split("\\n")
                frame = None
                if len(parts) >= 3:
                    fm = re.match(r"(\d+) bytes \((\w[\w,]*)\)", parts[2])
                    if not fm:
                        raise SystemExit("fw_stack: %s: cannot read the frame of %s: %r" % (path, title, parts[2]))
                    if fm.group(2) != "static":
                        raise SystemExit("fw_stack: %s: %s has a frame of %s size" % (path, title, fm.group(2)))
                    frame = int(fm.group(1))
                nodes[title] = (title.rsplit(":", 1)[-1], frame)
                continue
            m = re.match(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"', line)
            if m:
                edges.append(m.groups())
    return nodes, edges


def disassembly(objdump, elf):
    """function name -> (address, list of instruction texts)"""
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", elf], check=True, capture_output=True, text=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:", line)
        if m:
            cur = m.group(2)
            funcs[cur] = (int(m.group(1), 16), [])
            continue
        m = re.match(r"^\s+[0-9a-f]+:\s+(.*)$", line)
        if m and cur:
            funcs[cur][1].append(m.group(1).strip())
    return funcs


def address_taken(readelf, objects):
    """Functions whose address a data section of an object stores (function-pointer tables):
    the R_RISCV_32 relocations of its data sections that name a function, or a section and
    the offset of a function in it. A data word that merely equals a function's address
    (a size, a constant) is no pointer."""
    taken = set()
    for obj in objects:
        syms = subprocess.run([readelf, "-sW", obj], check=True, capture_output=True, text=True).stdout
        funcs, at = set(), {}
        for line in syms.splitlines():
            parts = line.split()
            if len(parts) >= 8 and parts[3] == "FUNC":
                funcs.add(parts[7])
                at[(parts[6], int(parts[1], 16))] = parts[7]
        sections = {}
        for line in syms.splitlines():
            parts = line.split()
            if len(parts) >= 8 and parts[3] == "SECTION":
                sections[parts[7]] = parts[6]
        relocs = subprocess.run([readelf, "-rW", obj], check=True, capture_output=True, text=True).stdout
        in_data = False
        for line in relocs.splitlines():
            m = re.match(r"^Relocation section '\.rela(\.[^']*)'", line)
            if m:
                in_data = re.match(r"^\.s?(ro)?data(\.|$)", m.group(1)) is not None
                continue
            parts = line.split()
            if not in_data or len(parts) < 5 or parts[2] != "R_RISCV_32":
                continue
            name, addend = parts[4], int(parts[6], 16) if len(parts) >= 7 and parts[5] == "+" else 0
            if name in funcs:
                taken.add(name)
            elif name in sections and (sections[name], addend) in at:
                taken.add(at[(sections[name], addend)])
    return taken


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elf", required=True)
    ap.add_argument("--reserve", type=int, required=True, help="bytes kept for the stack (FW_STACK_RESERVE)")
    ap.add_argument("--objdump", default="riscv64-unknown-elf-objdump")
    ap.add_argument("--readelf", default="riscv64-unknown-elf-readelf")
    ap.add_argument("ci", nargs="+")
    args = ap.parse_args()

    frame, calls = {}, {}  # by function name as in the ELF
    for path in args.ci:
        nodes, edges = parse_ci(path)
        for title, (name, fr) in nodes.items():
            if fr is not None:
                frame[name] = max(frame.get(name, 0), fr)  # two statics of one name: the larger
                calls.setdefault(name, set())
        for src, dst in edges:
            s, d = nodes[src][0], (nodes[dst][0] if dst in nodes else dst)
            calls.setdefault(s, set()).add(d)

    dis = disassembly(args.objdump, args.elf)
    taken = address_taken(args.readelf, [re.sub(r"\.ci$", ".o", path) for path in args.ci])
    for name, (_, insns) in dis.items():
        direct = set()
        indirect = False
        for ins in insns:
            # a call, a jump or a branch to another function's first instruction (a tail call)
            m = re.match(r"^(?:jal|j|tail|call|b[a-z]*)\s+(?:[^,\s]+,)*[0-9a-f]+ <([^>+]+)>$", ins)
            if m and m.group(1) != name:
                direct.add(m.group(1))
            if re.match(r"^jalr\s", ins) or (re.match(r"^jr\s", ins) and not re.match(r"^jr\s+ra$", ins)):
                indirect = True
        if name not in frame:  # not compiled here (a library function): its prologue tells
            if direct or indirect:
                raise SystemExit("fw_stack: library function %s calls others: its depth is not known" % name)
            adj = [int(m.group(1)) for ins in insns for m in [re.match(r"^addi?\s+sp,sp,-(\d+)$", ins)] if m]
            frame[name] = adj[0] if adj else 0
            calls[name] = set()
        else:
            calls[name] |= direct
            if indirect:
                calls[name].add(INDIRECT)
    if ROOT_FUNC not in frame:
        raise SystemExit("fw_stack: no %s in %s" % (ROOT_FUNC, args.elf))

    # Depth by depth-first search; a function met again on the current path is recursion.
    depth, via, on_path = {}, {}, set()

    def visit(f):
        if f in depth:
            return depth[f]
        if f in on_path:
            raise SystemExit("fw_stack: recursion through %s: the stack has no bound" % f)
        on_path.add(f)
        best, best_callee = 0, None
        for c in sorted(calls.get(f, ())):
            targets = sorted(taken) if c == INDIRECT else [c]
            for t in targets:
                if t not in frame:
                    raise SystemExit("fw_stack: %s calls %s, which is neither in the call graph nor in the image" % (f, t))
                d = visit(t)
                if d > best:
                    best, best_callee = d, t
        on_path.discard(f)
        depth[f], via[f] = frame[f] + best, best_callee
        return depth[f]

    total = visit(ROOT_FUNC)
    path, f = [], ROOT_FUNC
    while f:
        path.append("%s %d" % (f, frame[f]))
        f = via[f]
    print("firmware: stack worst case %d of %d bytes reserved (%s; indirect calls reach %s)" % (
        total, args.reserve, " > ".join(path), ", ".join(sorted(taken)) or "nothing"))
    if total > args.reserve:
        print("firmware: the stack can outgrow FW_STACK_RESERVE (%d > %d bytes)" % (total, args.reserve), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
