#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The boards' measured figures, written into docs/boards.md.

Reads build/board/BOARD-DEVICE/summary.json (written by tools/bitstream.sh from
nextpnr's report) and its times.txt for every board test-bitstream builds (proto/boards.toml [[board]]
entries marked tested; their titles and parts too), and makes the table that
tools/doc_figures.py puts between "<!-- board-figures:begin -->" and
"<!-- board-figures:end -->" in each document. Nothing is typed in: a board without a
summary is left out, and the table cannot be made when none has one.

The seed table (block "board-seeds") comes from constraints/timing_seeds.json, the
committed measurement file of make timing-seeds: each board's system-clock Fmax with
nextpnr seeds 1..5 and how many met the clock; it is made only of boards whose entry is
for their clock in proto/boards.toml today.

  board_figures.py            rewrite the documents' board blocks (tools/doc_figures.py)
  board_figures.py --print    print the table only
  board_figures.py --sweep-result OUT NAME CLK_HZ COMMIT INPUTS SEED...   write OUT/seeds.json
                              of a sweep's reports (tools/bitstream.sh --sweep)
  board_figures.py --collect-seeds BOARD...   put build/board/BOARD/sweep/seeds.json into
                              constraints/timing_seeds.json
  board_figures.py --check-seeds BOARD...     fail unless each board's entry there is for
                              its clk_hz today
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
SEEDS = os.path.join("constraints", "timing_seeds.json")
SWEEP_SEEDS = ["1", "2", "3", "4", "5"]  # the seeds the table shows (make timing-seeds' TIMING_SEEDS)


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


def port(name):
    """The board's network port, from its profile's slots."""
    prof = board_field(name, "PROFILE")
    rx, tx = (getattr(NF, "PROFILE_%s_%s" % (prof, k)) for k in ("NET_RX_SLOTS", "NET_TX_SLOTS"))
    return "%d RX / %d TX slots" % (rx, tx) if rx else "none (host link only)"


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
        rows.append(f"| {what} | {part} | {port(name)} | {s['target_mhz']:g} MHz | {s['fmax_mhz']:.1f} MHz ({met}) | "
                    f"{used(s['luts'], s['luts_available'])} | {used(s['ffs'], s['ffs_available'])} | "
                    f"{s['ebr']} / {s['ebr_available']} | {s['dsp']} / {s['dsp_available']} | "
                    f"{build_times(os.path.dirname(path))} |")
    if not rows:
        raise SystemExit("board_figures: no build/board/*/summary.json: run make test-bitstream first")
    head = ("| board | part | network port | system clock | Fmax (nextpnr) | LUT4 | FF | EBR | DSP | synthesis + place and route |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    note = ("\n(from `build/board/*/summary.json` of `make test-bitstream` at commit %s, written in by "
            "`tools/board_figures.py`; nextpnr-ecp5 seed 1 unless named: the flow keeps the first of its "
            "seeds that meets timing; LUT4 counts include the carry-chain halves)\n"
            % ", ".join("`%s`" % c[:12] for c in sorted(commits)))
    return head + "\n".join(rows) + "\n" + note


def load_seeds(root=ROOT):
    try:
        with open(os.path.join(root, SEEDS), encoding="utf-8") as f:
            return json.load(f)
    except OSError:
        return {}


def seeds_table(root=ROOT):
    """The board-seeds block: per tested board whose entry is for today's clk_hz, the
    system clock's Fmax with each seed, how many met it and how many met every clock (the
    PHYs' too): a bitstream is usable only then."""
    all_seeds = load_seeds(root)
    rows, commits, cols = [], set(), []
    for name, what, _part in BOARDS:
        e = all_seeds.get(name)
        if not e or e["clk_hz"] != board_field(name, "CLK_HZ"):
            continue
        cols = SWEEP_SEEDS
        commits.add(e["commit"])
        fm = [e["seeds"].get(k) for k in cols]
        cells = ["not placed" if v is None else "failed" if not v.get("fmax_mhz") else
                 "%.1f" % v["fmax_mhz"] + ("" if v["met"] else " (missed)") +
                 (" (a PHY clock missed)" if v["met"] and not v.get("all_met", True) else "") for v in fm]
        met = sum(1 for v in fm if v and v.get("met"))
        every = sum(1 for v in fm if v and v.get("met") and v.get("all_met", True))
        placed = sum(1 for v in fm if v is not None)
        rows.append(f"| {what} | {e['clk_hz'] / 1e6:g} MHz | " + " | ".join(cells) +
                    f" | {met} of {placed} | {every} of {placed} |")
    if not rows:
        raise SystemExit("board_figures: no board of %s is for its clock today: run make timing-seeds" % SEEDS)
    head = ("| board | system clock | " + " | ".join("seed %s" % c for c in cols) + " | met | every clock met |\n"
            "|---|---|" + "---|" * len(cols) + "---|---|\n")
    note = ("\n(Fmax of the system clock in MHz, from `%s` (`make timing-seeds`, netlists of commit %s), "
            "written in by `tools/board_figures.py`)\n" % (SEEDS, ", ".join("`%s`" % c[:12] for c in sorted(commits))))
    return head + "\n".join(rows) + "\n" + note


def sweep_result(out, name, clk_hz, commit, inputs, seeds):
    """OUT/seeds.json of a sweep (tools/bitstream.sh --sweep) from its report-seedN.json: the
    system clock's Fmax (the clock whose constraint is clk_hz), whether it met (met) and
    whether every clock did (all_met); a seed whose place and route failed has no Fmax, a
    seed not placed (yet) is left out."""
    times = {}
    if os.path.exists(os.path.join(out, "seed_times.txt")):
        with open(os.path.join(out, "seed_times.txt"), encoding="utf-8") as f:
            times = dict(line.split() for line in f if line.strip())
    res = {"name": name, "clk_hz": int(clk_hz), "commit": commit, "inputs": inputs, "seeds": {}}
    for sd in seeds:
        if sd not in times:
            continue
        try:
            with open(os.path.join(out, "report-seed%s.json" % sd), encoding="utf-8") as f:
                clocks = json.load(f)["fmax"]
        except (OSError, ValueError, KeyError):
            res["seeds"][sd] = {"fmax_mhz": None, "met": False, "all_met": False, "pnr_s": int(times[sd])}
            continue
        sysclk = [c for c in clocks.values() if abs(c["constraint"] * 1e6 - int(clk_hz)) < 1e4]
        res["seeds"][sd] = {"fmax_mhz": round(sysclk[0]["achieved"], 2) if sysclk else None,
                            "met": bool(sysclk) and sysclk[0]["achieved"] >= sysclk[0]["constraint"],
                            "all_met": all(c["achieved"] >= c["constraint"] for c in clocks.values()),
                            "pnr_s": int(times[sd])}
    with open(os.path.join(out, "seeds.json"), "w", encoding="utf-8") as f:
        json.dump(res, f, indent=2)
        f.write("\n")
    print("board_figures: sweep %s: %s" % (name, ", ".join(
        "seed %s %s MHz%s" % (k, v["fmax_mhz"], "" if v["met"] else " (missed)") for k, v in res["seeds"].items())))


def collect_seeds(names, root=ROOT):
    """build/board/NAME/sweep/seeds.json of each board into constraints/timing_seeds.json."""
    all_seeds = load_seeds(root)
    for name in names:
        path = os.path.join(root, "build", "board", name, "sweep", "seeds.json")
        if not os.path.exists(path):
            print("board_figures: %s: no %s: its entry is kept" % (name, path), file=sys.stderr)
            continue
        with open(path, encoding="utf-8") as f:
            all_seeds[name] = json.load(f)
    with open(os.path.join(root, SEEDS), "w", encoding="utf-8") as f:
        json.dump(dict(sorted(all_seeds.items())), f, indent=2)
        f.write("\n")
    print("board_figures: %s written" % SEEDS)


def check_seeds(names, root=ROOT):
    """No board's entry in constraints/timing_seeds.json is for another clk_hz than today's: 0,
    else 1. A board with no entry yet passes with a note (the table shows it as not measured)."""
    all_seeds, bad = load_seeds(root), 0
    for name in names:
        e, clk = all_seeds.get(name), board_field(name, "CLK_HZ")
        if not e:
            print("board_figures: %s: no seeds measured yet in %s: run make timing-seeds" % (name, SEEDS))
        elif e["clk_hz"] != clk:
            print("board_figures: %s: %s has seeds for %d Hz, the board runs at %d Hz: run make timing-seeds" % (
                name, SEEDS, e["clk_hz"], clk))
            bad = 1
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--print", action="store_true", help="print the table only")
    ap.add_argument("--collect-seeds", nargs="+", metavar="BOARD", help="collect the boards' sweeps")
    ap.add_argument("--check-seeds", nargs="+", metavar="BOARD", help="check the boards' seed entries")
    ap.add_argument("--sweep-result", nargs="+", metavar="ARG",
                    help="OUT NAME CLK_HZ COMMIT INPUTS SEED...: write OUT/seeds.json of a sweep")
    args = ap.parse_args()
    if args.sweep_result:
        out, name, clk_hz, commit, inputs, *seeds = args.sweep_result
        sweep_result(out, name, clk_hz, commit, inputs, seeds)
        return 0
    if args.collect_seeds:
        collect_seeds(args.collect_seeds)
        return 0
    if args.check_seeds:
        return check_seeds(args.check_seeds)
    if args.print:
        print(table(), end="")
        return 0
    import doc_figures  # it imports this module for table()
    return doc_figures.main(["--only", "board-figures"]) | doc_figures.main(["--only", "board-seeds"])


if __name__ == "__main__":
    sys.exit(main())
