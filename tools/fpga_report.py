#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Summarise nextpnr-ecp5's --report JSON: LUT/FF/EBR/DSP use against the part's totals
and the achieved Fmax per clock.

Usage: fpga_report.py REPORT.json NAME [--summary SUMMARY.json --commit C --firmware F]
Prints the report; with --summary also writes {fmax_mhz, target_mhz (the system clock's:
NAME's clk_hz in proto/boards.toml), clocks (every clock's), luts, ffs, ebr, dsp, ...,
commit (the sources placed), firmware (digest of the image in the bitstream)} for the
README and the benchmarks. Exits 1 when a clock misses its constraint or
the report has no clock at all (nextpnr already fails then; this is the second check),
2 on a missing or malformed report.
"""
import argparse
import json
import os
import sys

# (label, nextpnr cell type). TRELLIS_COMB is one LUT4 (a carry half counts too).
CELLS = [("LUT4", "TRELLIS_COMB"), ("FF", "TRELLIS_FF"), ("EBR", "DP16KD"), ("DSP", "MULT18X18D"),
         ("LUTRAM", "TRELLIS_RAMW"), ("IO", "TRELLIS_IO"), ("PLL", "EHXPLLL")]


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            rep = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"fpga_report: cannot read {path}: {e}", file=sys.stderr)
        sys.exit(2)
    if not isinstance(rep, dict) or "utilization" not in rep or "fmax" not in rep:
        print(f"fpga_report: {path} is not a nextpnr --report file (no utilization/fmax)", file=sys.stderr)
        sys.exit(2)
    return rep


def board_clk_hz(name):
    """The board's system clock in Hz (proto/boards.toml clk_hz), or 0 for a name it lacks."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "proto", "gen"))
    import nf_layout
    return getattr(nf_layout, "BOARD_%s_CLK_HZ" % name.upper().replace("-", "_"), 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("name")
    ap.add_argument("--summary", help="write the summary JSON here")
    ap.add_argument("--commit", default="", help="commit of the sources placed (for the summary)")
    ap.add_argument("--firmware", default="", help="digest of the firmware image in the bitstream (for the summary)")
    ap.add_argument("--seed", type=int, default=None, help="nextpnr seed of the placement kept (for the summary)")
    args = ap.parse_args()
    rep = load(args.report)

    util = rep["utilization"]
    used = {}
    print(f"FPGA report {args.name}")
    for label, cell in CELLS:
        u = util.get(cell, {"used": 0, "available": 0})
        used[cell] = u
        pct = 100.0 * u["used"] / u["available"] if u["available"] else 0.0
        print(f"  {label:6s} {u['used']:6d} / {u['available']:6d}  ({pct:5.1f}%)")

    clocks = rep["fmax"]
    met = bool(clocks)
    if not clocks:
        print("  no constrained clock in the report: timing not checked")
    for clk, f in sorted(clocks.items()):
        ok = f["achieved"] >= f["constraint"]
        met = met and ok
        print(f"  Fmax {clk}: {f['achieved']:.2f} MHz (target {f['constraint']:.2f} MHz, "
              f"{'met' if ok else 'NOT MET'})")
    if args.seed is not None:
        print(f"  nextpnr seed {args.seed}")

    if args.summary:
        # The figure is the system clock's: the clock whose constraint is the board's clk_hz
        # (a board with a PHY has its PHY clocks too, each checked above); without one, the
        # clock of least slack.
        worst = min(clocks.values(), key=lambda f: f["achieved"] - f["constraint"]) if clocks else None
        sysclk = [f for f in clocks.values() if abs(f["constraint"] * 1e6 - board_clk_hz(args.name)) < 1e4]
        if sysclk:
            worst = sysclk[0]
        summary = {
            "name": args.name,
            "clocks": {clk: {"fmax_mhz": round(f["achieved"], 2), "target_mhz": round(f["constraint"], 2)}
                       for clk, f in sorted(clocks.items())},
            "commit": args.commit,
            "firmware": args.firmware,
            "seed": args.seed,
            "fmax_mhz": round(worst["achieved"], 2) if worst else None,
            "target_mhz": round(worst["constraint"], 2) if worst else None,
            "timing_met": met,
            "luts": used["TRELLIS_COMB"]["used"],
            "luts_available": used["TRELLIS_COMB"]["available"],
            "ffs": used["TRELLIS_FF"]["used"],
            "ffs_available": used["TRELLIS_FF"]["available"],
            "ebr": used["DP16KD"]["used"],
            "ebr_available": used["DP16KD"]["available"],
            "dsp": used["MULT18X18D"]["used"],
            "dsp_available": used["MULT18X18D"]["available"],
        }
        with open(args.summary, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
