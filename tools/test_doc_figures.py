#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make test-doc-figures: tools/doc_figures.py on a scratch git tree holding copies of
the documents. It writes docs/performance.md's figures from results.json (the host
instructions per post among them), refuses a missing or stale results.json with a message
naming `make bench`, --check passes on what it wrote and fails on a figure edited by hand
(in docs/performance.md and the board table), and skips what was not measured.
One TAP line per check."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import report  # noqa: E402

DOCS = ["README.md", "docs/performance.md", "docs/boards.md"]
failed = 0


def ok(cond, what):
    global failed
    print(("ok - " if cond else "not ok - ") + "doc-figures: " + what, flush=True)
    failed |= not cond


def run(tree, *args):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "doc_figures.py"), "--root", tree] + list(args),
                       capture_output=True, text=True, env=CPU_ENV)
    return p.returncode, p.stdout + p.stderr


def git(tree, *args):
    return subprocess.run(["git", "-C", tree, "-c", "user.name=t", "-c", "user.email=t@t"] + list(args),
                          check=True, capture_output=True, text=True).stdout.strip()


def results(tree, **over):
    """A results.json of the tree's sources now, every figure the documents use present."""
    r = {k: 3 for k in report.REQUIRED}
    r.update(fastreg_us_1page=51.2, fastreg_us_16pages=55.3, fastreg_us_256pages=61.0, dma_port_fraction=0.977,
             dma_bytes_per_clock=7.8159, link_efficiency=0.9431, mtt_load_pages_per_clock=0.9884,
             host_instructions_per_post=777, system_clock_mhz=40)
    report.rc_rates(r)
    r.update(report.source_state(tree))
    r.update(over)
    os.makedirs(os.path.join(tree, "build", "bench"), exist_ok=True)
    with open(os.path.join(tree, "build", "bench", "results.json"), "w") as f:
        json.dump(r, f)


def sendlat(tree, **over):
    """A sendlat.json (bench-sendlat's figures alone) of the tree's sources now."""
    r = {k: 3 for k in report.SENDLAT_REQUIRED}
    r.update({k.replace("clocks", "us"): 0.25 for k in report.SENDLAT_REQUIRED if "_path_clocks_" in k})
    r.update(send_recv_host_path_clocks_4096b=123457, send_recv_clock_hz=50000000)
    r.update(report.source_state(tree))
    r.update(over)
    os.makedirs(os.path.join(tree, "build", "bench"), exist_ok=True)
    with open(os.path.join(tree, "build", "bench", "sendlat.json"), "w") as f:
        json.dump(r, f)


def edit(tree, doc, old, new):
    path = os.path.join(tree, doc)
    text = open(path, encoding="utf-8").read()
    assert old in text, (doc, old)
    open(path, "w", encoding="utf-8").write(text.replace(old, new, 1))


def cpu_env():
    """NF_CPU and CPU_RTL as make passes them to bitstream.sh (the scratch tree has no Makefile)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    out = subprocess.run(["make", "-s", "--no-print-directory", "-C", ROOT, "print-cpu"], capture_output=True,
                         text=True, env=env, check=True).stdout
    env.update(kv.split("=", 1) for kv in out.split())
    return env


def bitstream(tree, *args):
    p = subprocess.run(["bash", os.path.join(tree, "tools", "bitstream.sh")] + list(args), capture_output=True,
                       text=True, env=CPU_ENV)
    return p.returncode, p.stdout + p.stderr


def boards(tree):
    """A placed design is fresh exactly for the inputs it was placed from (the commit is provenance)."""
    out_dir = os.path.join(tree, "build", "board", "ulx3s-85k")
    rc, inputs = bitstream(tree, "--inputs", "ulx3s", "85k")
    with open(os.path.join(out_dir, "pnr_inputs.txt"), "w") as f:
        f.write(inputs)
    open(os.path.join(out_dir, "nf_placeholder.config"), "w").close()
    os.utime(os.path.join(out_dir, "summary.json"))  # written last, as the flow does
    rc, out = bitstream(tree, "--is-fresh", "ulx3s", "85k")
    ok(rc == 0, "bitstream.sh --is-fresh: a placed design of today's inputs and commit is fresh")
    if rc:
        print("# " + out.strip())
    rc, out = run(tree, "--only", "board-figures")
    boards = open(os.path.join(tree, "docs", "boards.md"), encoding="utf-8").read()
    ok(rc == 0 and "| ULX3S 85F | LFE5U-85F-6 | none (host link only) | 40 MHz | 49.6 MHz (met) |" in boards,
       "the board table is written from a fresh summary.json")
    edit(tree, "proto/gen/nf_layout.py", "BOARD_ULX3S_85K_BAUD = 3000000", "BOARD_ULX3S_85K_BAUD = 2000000")
    rc, out = bitstream(tree, "--is-fresh", "ulx3s", "85k")
    ok(rc != 0 and "the board in proto/boards.toml" in out,
       "bitstream.sh --is-fresh: the board's settings in proto/boards.toml changed makes it stale, said so")
    edit(tree, "proto/gen/nf_layout.py", "BOARD_ULX3S_85K_BAUD = 2000000", "BOARD_ULX3S_85K_BAUD = 3000000")
    edit(tree, "rtl/soc/nf_soc.v", "module nf_soc", "module  nf_soc")
    rc, out = bitstream(tree, "--is-fresh", "ulx3s", "85k")
    ok(rc != 0 and "inputs changed since it was placed: rtl/soc/nf_soc.v" in out,
       "bitstream.sh --is-fresh: an RTL file changed since place and route makes it stale, named")
    git(tree, "commit", "-qam", "RTL change")
    rc, out = bitstream(tree, "--is-fresh", "ulx3s", "85k")
    ok(rc != 0 and "rtl/soc/nf_soc.v" in out, "bitstream.sh --is-fresh: a commit that changed an RTL file: still stale, named")
    edit(tree, "rtl/soc/nf_soc.v", "module  nf_soc", "module nf_soc")
    with open(os.path.join(tree, "docs", "notes.md"), "w") as f:
        f.write("a document\n")
    git(tree, "add", "-A")
    git(tree, "commit", "-qm", "RTL back, a document added")
    rc, out = bitstream(tree, "--is-fresh", "ulx3s", "85k")
    ok(rc == 0, "bitstream.sh --is-fresh: a later commit whose inputs are the placed design's (a document changed) is fresh")
    if rc:
        print("# " + out.strip())


def seeds(tree):
    """The seed table is made of constraints/timing_seeds.json, only of entries for the board's clock today."""
    sys.path.insert(0, os.path.join(ROOT, "proto", "gen"))
    import nf_layout as NF
    clk = NF.BOARD_ULX3S_85K_CLK_HZ
    fm = {"1": 70.0, "2": 60.1, "3": 66.6, "4": 71.0, "5": 59.0}
    entry = {"clk_hz": clk, "commit": "c0ffee", "inputs": "x",
             "seeds": {k: {"fmax_mhz": v, "met": v * 1e6 >= clk, "pnr_s": 1} for k, v in fm.items()}}
    old = dict(entry, clk_hz=clk + 1000000)
    os.makedirs(os.path.join(tree, "constraints"), exist_ok=True)
    with open(os.path.join(tree, "constraints", "timing_seeds.json"), "w") as f:
        json.dump({"ulx3s-85k": entry, "ulx3s-25k": old}, f)
    rc, out = run(tree, "--only", "board-seeds")
    doc = open(os.path.join(tree, "docs", "boards.md"), encoding="utf-8").read()
    ok(rc == 0 and "| ULX3S 85F | %g MHz | 70.0 | 60.1 (missed) | 66.6 | 71.0 | 59.0 (missed) | 3 of 5 | 3 of 5 |" % (clk / 1e6)
       in doc and "| ULX3S 25F |" not in doc.split("board-seeds:begin")[1],
       "the seed table: five Fmax figures, how many met the system clock and every clock, only for entries of "
       "the board's clock today")
    rc, out = run(tree, "--check", "--only", "board-seeds")
    ok(rc == 0, "--check passes on the seed table it wrote")
    edit(tree, "docs/boards.md", "| 66.6 |", "| 76.6 |")
    rc, out = run(tree, "--check", "--only", "board-seeds")
    ok(rc != 0 and "board-seeds block differs" in out, "--check fails on a seed figure edited by hand")


def main():
    global CPU_ENV
    CPU_ENV = cpu_env()
    # A placed design is test-bitstream's, of the board's first seed alone (doc_figures.py checks so).
    sys.path.insert(0, os.path.join(ROOT, "proto", "gen"))
    import nf_layout as NF
    CPU_ENV["SEED"] = NF.BOARD_ULX3S_85K_SEEDS.split()[0]
    tree = tempfile.mkdtemp(prefix="doc_figures.")
    try:
        os.makedirs(os.path.join(tree, "docs"))
        for d in DOCS:
            shutil.copy(os.path.join(ROOT, d), os.path.join(tree, d))
        with open(os.path.join(tree, "src.c"), "w") as f:
            f.write("int x;\n")
        # What tools/bitstream.sh --is-fresh looks at.
        for d in ("rtl/engine", "rtl/link", "rtl/net", "rtl/soc", "rtl/board", "rtl/include", "proto/gen"):
            shutil.copytree(os.path.join(ROOT, d), os.path.join(tree, d))
        for f in ("tools/bitstream.sh", "tools/fw_slices.py", "tools/ebr_floorplan.py",
                  "build/toolchain.mk", "constraints/ulx3s.lpf", "constraints/ulx3s-85k.floorplan"):
            os.makedirs(os.path.dirname(os.path.join(tree, f)), exist_ok=True)
            shutil.copy(os.path.join(ROOT, f), os.path.join(tree, f))
        with open(os.path.join(tree, ".gitignore"), "w") as f:
            f.write("build/\n")
        git(tree, "init", "-q")
        git(tree, "add", "-A")
        git(tree, "commit", "-qm", "scratch")

        rc, out = run(tree, "--check")
        ok(rc == 0 and "no build/bench/results.json" in out and "not checked" in out,
           "--check without results.json passes and says the bench figures are not checked")
        rc, out = run(tree, "--only", "bench-results")
        ok(rc != 0 and "make bench" in out, "writing without results.json fails, naming make bench")

        results(tree)
        rc, out = run(tree, "--only", "bench-results")
        perf = open(os.path.join(tree, "docs", "performance.md"), encoding="utf-8").read()
        ok(rc == 0 and "| 777 | instructions |" in perf,
           "performance.md's figures written from results.json (host instructions per post among them)")
        rc, out = run(tree, "--check")
        ok(rc == 0 and out.count(" matches ") == 1, "--check passes on the figures written")
        edit(tree, "docs/performance.md", "| 777 | instructions |", "| 776 | instructions |")
        rc, out = run(tree, "--check")
        ok(rc != 0 and "docs/performance.md" in out, "--check fails on a docs/performance.md figure edited")
        edit(tree, "docs/performance.md", "| 776 | instructions |", "| 777 | instructions |")

        rc, out = run(tree, "--only", "sendlat-memory")
        ok(rc != 0 and "sendlat.json" in out and "not written" in out,
           "the adapter-vs-host-memory table is not written without sendlat.json")
        sendlat(tree)
        rc, out = run(tree, "--only", "sendlat-memory")
        perf = open(os.path.join(tree, "docs", "performance.md"), encoding="utf-8").read()
        ok(rc == 0 and "| 3 | 123,457 |" not in perf and "| 3 (0.25) | 123,457 (0.25) |" in perf,
           "performance.md's adapter-vs-host-memory table written from sendlat.json")
        rc, out = run(tree, "--check")
        ok(rc == 0 and out.count(" matches ") == 2, "--check passes on the two bench blocks written")
        edit(tree, "docs/performance.md", "123,457 (0.25)", "123,000 (0.25)")
        rc, out = run(tree, "--check")
        ok(rc != 0 and "sendlat-memory block differs" in out, "--check fails on a host-memory figure edited by hand")
        edit(tree, "docs/performance.md", "123,000 (0.25)", "123,457 (0.25)")

        edit(tree, "src.c", "int x;", "int y;")
        rc, out = run(tree, "--only", "bench-results")
        ok(rc != 0 and "stale" in out and "make bench" in out,
           "results.json measured before an uncommitted source change is refused as stale")
        git(tree, "commit", "-qam", "source change")
        rc, out = run(tree, "--only", "bench-results")
        ok(rc != 0 and "stale" in out and "sources changed since" in out,
           "results.json of an older commit with other sources is refused as stale")
        results(tree)
        edit(tree, "README.md", "## Figures", "## Figures ")  # a document change keeps it fresh
        git(tree, "commit", "-qam", "document change")
        rc, out = run(tree, "--only", "bench-results")
        ok(rc == 0, "results.json of an older commit that changed documents only is still fresh")

        summary = {"commit": "c0ffee", "fmax_mhz": 49.56, "target_mhz": 40, "timing_met": True, "luts": 11647,
                   "luts_available": 83640, "ffs": 6417, "ffs_available": 83640, "ebr": 153, "ebr_available": 208,
                   "dsp": 0, "dsp_available": 156}
        os.makedirs(os.path.join(tree, "build", "board", "ulx3s-85k"))
        with open(os.path.join(tree, "build", "board", "ulx3s-85k", "summary.json"), "w") as f:
            json.dump(summary, f)
        rc, out = run(tree, "--check", "--only", "board-figures")
        ok(rc != 0 and "board-figures block differs" in out, "--check fails when the board table is not the summary's")
        rc, out = run(tree, "--only", "board-figures")
        ok(rc != 0 and "no placed design" in out, "the board table is not written from a summary.json without its "
           "placed design")
        boards(tree)
        seeds(tree)
    finally:
        shutil.rmtree(tree)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
