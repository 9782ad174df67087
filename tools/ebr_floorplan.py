#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Pin a synthesized netlist's block RAMs (DP16KD cells) to the EBR sites a floorplan file
names, as nextpnr BEL attributes, before place and route (tools/bitstream.sh runs it when
constraints/BOARD-DEVICE.floorplan exists).

Usage: ebr_floorplan.py FLOORPLAN NETLIST.json   (rewrites NETLIST.json in place)

The floorplan file, one statement per line, '#' starts a comment:
  columns X X X ...          the X of the EBR sites of one row, left to right; the n-th
                             site of a row is the BEL Xx/Yy/EBR(n mod 4)
  place PREFIX... : SITES    the block RAMs whose cell name starts with one of the
                             prefixes, in natural name order, into the sites in turn.
                             SITES: rows, each Yy (left to right), Yy< (right to left),
                             or Yy@X (left to right from column X)
A prefix that matches no block RAM, more block RAMs than sites, or a site named twice is
an error: a renamed instance or a grown memory must not leave the floorplan silently
unapplied.
"""
import json
import re
import sys


def natural(name):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def parse(path):
    columns, rules = None, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            where = f"{path}:{n}"
            if words[0] == "columns":
                columns = [int(w) for w in words[1:]]
            elif words[0] == "place" and ":" in words:
                colon = words.index(":")
                prefixes, rows = words[1:colon], words[colon + 1:]
                if not prefixes or not rows:
                    sys.exit(f"ebr_floorplan: {where}: place needs prefixes and rows")
                rules.append((where, prefixes, rows))
            else:
                sys.exit(f"ebr_floorplan: {where}: expected 'columns ...' or 'place PREFIX... : ROWS'")
    if not columns:
        sys.exit(f"ebr_floorplan: {path}: no 'columns' line")
    return columns, rules


def sites(columns, rows, where):
    out = []
    for row in rows:
        m = re.fullmatch(r"Y(\d+)(<|@(\d+))?", row)
        if not m:
            sys.exit(f"ebr_floorplan: {where}: bad row '{row}' (Yy, Yy< or Yy@X)")
        y = int(m.group(1))
        idx = list(range(len(columns)))
        if m.group(2) == "<":
            idx.reverse()
        elif m.group(3):
            x0 = int(m.group(3))
            if x0 not in columns:
                sys.exit(f"ebr_floorplan: {where}: column {x0} is not an EBR column")
            idx = idx[columns.index(x0):]
        out += [f"X{columns[i]}/Y{y}/EBR{i % 4}" for i in idx]
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    plan, netlist = sys.argv[1:]
    columns, rules = parse(plan)
    with open(netlist) as f:
        design = json.load(f)
    tops = [m for m in design["modules"].values() if m.get("attributes", {}).get("top")]
    if len(tops) != 1:
        sys.exit(f"ebr_floorplan: {netlist}: expected one top module, found {len(tops)}")
    cells = tops[0]["cells"]
    rams = sorted((n for n, c in cells.items() if c["type"] == "DP16KD"), key=natural)
    taken, pinned = {}, 0
    for where, prefixes, rows in rules:
        chosen = []
        for p in prefixes:
            hit = [n for n in rams if n.startswith(p)]
            if not hit:
                sys.exit(f"ebr_floorplan: {where}: no block RAM named {p}*")
            chosen += hit
        room = sites(columns, rows, where)
        if len(chosen) > len(room):
            sys.exit(f"ebr_floorplan: {where}: {len(chosen)} block RAMs, {len(room)} sites")
        for cell, bel in zip(chosen, room):
            if bel in taken or cell in taken.values():
                sys.exit(f"ebr_floorplan: {where}: {bel} or {cell} placed twice")
            taken[bel] = cell
            cells[cell].setdefault("attributes", {})["BEL"] = bel
            pinned += 1
    with open(netlist, "w") as f:
        json.dump(design, f)
    print(f"ebr_floorplan: {pinned} of {len(rams)} block RAMs pinned ({plan})")


if __name__ == "__main__":
    main()
