#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The measured figures in the documents, written between markers.

Every block "<!-- NAME:begin -->" ... "<!-- NAME:end -->" below is generated, never typed:
  bench-results   docs/performance.md   from build/bench/results.json (bench/report.py --doc
                                        writes the whole document; this checks its table)
  sendlat-memory  docs/performance.md   from build/bench/sendlat.json (make bench-sendlat): the
                                        Send/Receive figures, adapter memory vs host memory
  board-figures   docs/boards.md        from build/board/*/summary.json (tools/board_figures.py)
  board-seeds     docs/boards.md        from constraints/timing_seeds.json (make timing-seeds)

  doc_figures.py            rewrite the blocks; results.json must be of today's sources
                            (else: run make bench); board blocks need a summary.json
  doc_figures.py --check    fail when a committed block differs from what its measurement
                            file gives now; a block whose file is missing is not checked (said so)
  doc_figures.py --print    print the blocks
--root DIR works on another tree (the tests use a copy).
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bench"))
import board_figures  # noqa: E402
import report  # noqa: E402  (bench/report.py: results.json, its freshness, the Results table)


# (block, documents, what makes it from the measurement, where the measurement comes from)
BLOCKS = [
    ("bench-results", [os.path.join("docs", "performance.md")], report.results_table, "bench"),
    ("sendlat-memory", [os.path.join("docs", "performance.md")], report.sendlat_table, "sendlat"),
    ("board-figures", board_figures.DOCS, None, "board"),
    ("board-seeds", board_figures.DOCS, board_figures.seeds_table, "seeds"),
]


def pattern(name):
    return re.compile(r"<!-- %s:begin -->\n(.*?)<!-- %s:end -->" % (re.escape(name), re.escape(name)), re.S)


def results(root, need_fresh, name="results.json"):
    """build/bench/NAME (results.json, or bench-sendlat's sendlat.json) of root, or None when
    missing; exits when it is stale and need_fresh."""
    path = os.path.join(root, "build", "bench", name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        r = json.load(f)
    if need_fresh:
        why = report.stale_reason(r, root)
        if why:
            sys.exit("doc_figures: %s is stale (%s): run `make %s` first" % (
                path, why, "bench" if name == "results.json" else "bench-sendlat"))
    return r


def stale_boards(root):
    """The boards whose summary.json is not of today's sources (tools/bitstream.sh --is-fresh)."""
    out = []
    for name, _what, _part in board_figures.BOARDS:
        if os.path.exists(os.path.join(root, "build", "board", name, "summary.json")):
            board, dev = name.rsplit("-", 1)
            # test-bitstream places with the board's first seed alone (SEED): so does the check.
            env = dict(os.environ, SEED=board_figures.board_field(name, "SEEDS").split()[0])
            p = subprocess.run(["bash", os.path.join(root, "tools", "bitstream.sh"), "--is-fresh", board, dev],
                               capture_output=True, text=True, env=env)
            if p.returncode != 0:
                out.append((p.stdout + p.stderr).strip())
    return out


def blocks(root, need_fresh, only=None):
    """{block name: (text, or None when there is no measurement), source description}, for
    every block or the one named only (the board table does not need results.json)."""
    out = {}
    wanted = [b for b in BLOCKS if only in (None, b[0])]
    r = results(root, need_fresh) if any(b[3] == "bench" for b in wanted) else None
    for name, _docs, make, source in wanted:
        if source == "bench":
            out[name] = (make(r) if r is not None else None, "build/bench/results.json (make bench)")
            continue
        if source == "sendlat":
            s = results(root, need_fresh, "sendlat.json")
            out[name] = (make(s) if s is not None else None, "build/bench/sendlat.json (make bench-sendlat)")
            continue
        if source == "seeds":
            try:
                out[name] = (make(root), "constraints/timing_seeds.json (make timing-seeds)")
            except SystemExit:
                out[name] = (None, "constraints/timing_seeds.json (make timing-seeds)")
            continue
        what = "build/board/*/summary.json (make test-bitstream)"
        stale = stale_boards(root) if need_fresh else []
        if stale:
            out[name] = (None, what + " of today's sources; stale: " + "; ".join(stale))
            continue
        try:
            out[name] = (board_figures.table(root), what)
        except SystemExit:
            out[name] = (None, what)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="compare the documents with the measurements")
    mode.add_argument("--print", action="store_true", help="print the blocks")
    ap.add_argument("--only", choices=[b[0] for b in BLOCKS], help="this block only")
    ap.add_argument("--root", default=os.path.dirname(HERE), help="the tree (default: this one)")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.root)
    made = blocks(root, need_fresh=not (args.check or args.print), only=args.only)
    wanted = [b for b in BLOCKS if args.only in (None, b[0])]
    drift = 0
    for name, docs, _make, _source in wanted:
        text, source = made[name]
        if text is None:
            # Checking: a measurement not made here cannot be compared. Writing: an error.
            print("doc_figures: %s: no %s: not %s" % (name, source, "checked" if args.check else "written"),
                  file=sys.stdout if args.check else sys.stderr)
            drift |= not args.check
            continue
        if args.print:
            print("<!-- %s -->\n%s" % (name, text), end="")
            continue
        for doc in docs:
            path = os.path.join(root, doc)
            with open(path, encoding="utf-8") as f:
                old = f.read()
            m = pattern(name).search(old)
            if not m:
                print("doc_figures: %s has no <!-- %s:begin --> ... <!-- %s:end --> block" % (doc, name, name),
                      file=sys.stderr)
                return 1
            if args.check:
                if m.group(1) != text:
                    drift = 1
                    print("doc_figures: %s: the %s block differs from %s:" % (doc, name, source))
                    sys.stdout.writelines(difflib.unified_diff(
                        m.group(1).splitlines(True), text.splitlines(True), doc + " (committed)", "measured"))
                else:
                    print("doc_figures: %s: %s matches %s" % (doc, name, source))
                continue
            new = old[:m.start(1)] + text + old[m.end(1):]
            if new != old:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new)
                print("doc_figures: %s: %s updated" % (doc, name))
    if drift and args.check:
        print("doc_figures: run `make bench-report` (bench) or `make board-figures` (boards) and commit the documents")
    return drift


if __name__ == "__main__":
    sys.exit(main())
