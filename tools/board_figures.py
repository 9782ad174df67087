#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The boards' measured figures, written into docs/boards.md.

Reads build/board/BOARD-DEVICE/summary.json (written by tools/bitstream.sh from
nextpnr's report) and its times.txt for every board test-bitstream builds (proto/boards.toml [[board]]
entries marked tested; their titles and parts too), and makes the table that
tools/doc_figures.py puts between "<!-- board-figures:begin -->" and
"<!-- board-figures:end -->" in each document. Nothing is typed in: a board without a
summary is left out, and the table cannot be made when none has one.

  board_figures.py            rewrite the documents' board blocks (tools/doc_figures.py)
  board_figures.py --print    print the table only
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "proto", "gen"))
import nf_layout as NF  # noqa: E402


def board_field(name, field):
    """A board's field from proto/boards.toml (via proto/gen/nf_layout.py): board_field("ulx3s-85k", "PART")."""
    return getattr(NF, "BOARD_%s_%s" % (name.upper().replace("-", "_"), field))


BOARDS = [(name, board_field(name, "TITLE"), board_field(name, "PART")) for name in NF.BOARDS_TESTED]
DOCS = [os.path.join("docs", "boards.md")]


def used(n, avail):
    return f"{n:,} / {avail:,} ({100.0 * n / avail:.0f} %)" if avail else f"{n:,}"


def build_times(out):
    """The build's seconds of synthesis and of place and route (its times.txt), or "-"."""
    try:
        with open(os.path.join(out, "times.txt"), encoding="utf-8") as f:
            t = dict(line.split() for line in f if line.strip())
        return "%d + %d s" % (int(t["synth_s"]), int(t["pnr_s"]))
    except (OSError, KeyError, ValueError):
        return "-"


def table(root=ROOT):
    rows, commits = [], set()
    for name, what, part in BOARDS:
        path = os.path.join(root, "build", "board", name, "summary.json")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            s = json.load(f)
        commits.add(s.get("commit") or "unknown")
        met = "met" if s["timing_met"] else "**not met**"
        if s.get("seed") not in (None, 1):
            met += ", seed %d" % s["seed"]  # the first seed tried (1) missed timing
        rows.append(f"| {what} | {part} | {s['target_mhz']:g} MHz | {s['fmax_mhz']:.1f} MHz ({met}) | "
                    f"{used(s['luts'], s['luts_available'])} | {used(s['ffs'], s['ffs_available'])} | "
                    f"{s['ebr']} / {s['ebr_available']} | {s['dsp']} / {s['dsp_available']} | "
                    f"{build_times(os.path.dirname(path))} |")
    if not rows:
        raise SystemExit("board_figures: no build/board/*/summary.json: run make test-bitstream first")
    head = ("| board | part | system clock | Fmax (nextpnr) | LUT4 | FF | EBR | DSP | synthesis + place and route |\n"
            "|---|---|---|---|---|---|---|---|---|\n")
    note = ("\n(from `build/board/*/summary.json` of `make test-bitstream` at commit %s, written in by "
            "`tools/board_figures.py`; nextpnr-ecp5 seed 1 unless named: the flow keeps the first of its "
            "seeds that meets timing; LUT4 counts include the carry-chain halves)\n"
            % ", ".join("`%s`" % c[:12] for c in sorted(commits)))
    return head + "\n".join(rows) + "\n" + note


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--print", action="store_true", help="print the table only")
    args = ap.parse_args()
    if args.print:
        print(table(), end="")
        return 0
    import doc_figures  # it imports this module for table()
    return doc_figures.main(["--only", "board-figures"])


if __name__ == "__main__":
    sys.exit(main())
