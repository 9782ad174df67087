#!/usr/bin/env python3
"""Summarise nextpnr's --report JSON: LUT/FF/EBR/DSP use against the part, Fmax per clock."""
import json
import sys

CELLS = [("LUT4", "TRELLIS_COMB"), ("FF", "TRELLIS_FF"), ("EBR", "DP16KD"), ("DSP", "MULT18X18D"),
         ("IO", "TRELLIS_IO"), ("PLL", "EHXPLLL")]


def main():
    path, name = sys.argv[1], sys.argv[2]
    rep = json.load(open(path))
    util = rep.get("utilization", {})
    print(f"FPGA report {name}")
    for label, cell in CELLS:
        u = util.get(cell, {"used": 0, "available": 0})
        pct = 100.0 * u["used"] / u["available"] if u["available"] else 0.0
        print(f"  {label:5s} {u['used']:6d} / {u['available']:6d}  ({pct:4.1f}%)")
    for clk, f in rep.get("fmax", {}).items():
        ok = "met" if f["achieved"] >= f["constraint"] else "NOT MET"
        print(f"  Fmax {clk}: {f['achieved']:.1f} MHz (target {f['constraint']:.1f} MHz, {ok})")


if __name__ == "__main__":
    main()
