#!/usr/bin/env python3
"""Gathers the benchmark outputs of build/bench/ into build/bench/results.json (one flat
object, numbers only), prints the results table, and with --doc writes
docs/performance.md and its plots (gnuplot, pngcairo) into docs/img/.

Inputs (written by the bench-* targets of bench/bench.mk):
  engine.out   kc_bench + eng_bench   "key = value"
  sim.out      bench_sim (nfsim)      "key = value", "series fastreg|link ..."
  ndmrlat.out  ndkfpga mrlat --series "series ndmrlat ..."
  fwprof.out   fwprof (nf_soc)        "phase LABEL PHASE N", "func LABEL FUNC N"
  host_post.out  make bench-ndk-post  "host: N instructions in M NdkFastRegister calls = X per call"
and, when present, build/board/ulx3s-{85k,25k}/summary.json (tools/bitstream.sh).
A missing input is an error naming the target that makes it: no figure is invented."""
import argparse
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, "build", "bench")
DOC = os.path.join(ROOT, "docs", "performance.md")
IMG = os.path.join(ROOT, "docs", "img")
DEFAULT_CLOCK_MHZ = 50.0  # ULX3S system clock when no bitstream summary says otherwise
REQUIRED = ["keycheck_per_clock", "keycheck_latency_clocks", "mtt_load_pages_per_clock", "dma_bytes_per_clock",
            "dma_port_bytes_per_clock", "fastreg_clocks_1page", "fastreg_clocks_16pages", "fastreg_clocks_256pages",
            "fastreg_firmware_clocks_1page", "invalidate_clocks", "link_efficiency", "link_efficiency_stop_and_wait",
            "host_instructions_per_post", "sim_cycles_per_second", "system_clock_mhz"]
PHASES = ["notice", "link", "parse", "validate", "loader", "mpt", "cqe"]


def die(msg):
    print("bench report: " + msg, file=sys.stderr)
    sys.exit(1)


def read(name, target):
    path = os.path.join(BUILD, name)
    if not os.path.exists(path):
        die("%s is missing: run `make %s` (or `make bench`)" % (path, target))
    with open(path) as f:
        return f.read()


def keyvals(text):
    out = {}
    for line in text.splitlines():
        m = re.match(r"^([a-z0-9_]+) = ([-0-9.e+]+)$", line.strip())
        if m:
            v = float(m.group(2))
            if not math.isfinite(v):
                die("%s is not a finite number" % m.group(1))
            out[m.group(1)] = v
    return out


def failures(text):
    return [l for l in text.splitlines() if l.startswith("not ok")]


def num(v):
    """Integers stay integers in the JSON."""
    return int(v) if float(v).is_integer() else round(float(v), 4)


def gather():
    eng = read("engine.out", "bench-engine")
    sim = read("sim.out", "bench-sim")
    nd = read("ndmrlat.out", "bench-ndmrlat")
    prof = read("fwprof.out", "bench-fwprof")
    host = read("host_post.out", "bench-host")
    bad = failures(eng) + failures(sim) + failures(nd) + failures(prof)
    if bad:
        die("a benchmark check failed:\n  " + "\n  ".join(bad))

    r = {}
    kv = keyvals(eng)
    kv.update(keyvals(sim))
    for k, v in kv.items():
        r[k] = num(v)
    m = re.search(r"host: (\d+) instructions in (\d+) NdkFastRegister calls = (\d+) per call", host)
    if not m:
        die("no callgrind figure in host_post.out (make bench-ndk-post)")
    r["host_instructions_per_post"] = int(m.group(3))
    r["host_posts_measured"] = int(m.group(2))

    series = {"fastreg": [], "link": [], "ndmrlat": []}
    for line in (sim + "\n" + nd).splitlines():
        p = line.split()
        if len(p) > 2 and p[0] == "series" and p[1] in series:
            series[p[1]].append([float(x) for x in p[2:]])

    phases, funcs = {}, {}
    for line in prof.splitlines():
        p = line.split()
        if len(p) == 4 and p[0] == "phase":
            phases.setdefault(p[1], {})[p[2]] = int(p[3])
        elif len(p) == 4 and p[0] == "func":
            funcs.setdefault(p[1], {})[p[2]] = int(p[3])
    for label, ph in phases.items():
        for k, v in ph.items():
            r["fwprof_%s_%s_clocks" % (label, k) if k in PHASES or k in ("total", "fw_own") else
              "fwprof_%s_%s" % (label, k)] = v

    # Clock: the bitstream flow's target when it has run, else the ULX3S default.
    clock = DEFAULT_CLOCK_MHZ
    for dev in ("85k", "25k"):
        path = os.path.join(ROOT, "build", "board", "ulx3s-" + dev, "summary.json")
        if os.path.exists(path):
            with open(path) as f:
                s = json.load(f)
            for key, name in (("fmax_mhz", "fmax_mhz"), ("luts", "luts"), ("ffs", "ffs"), ("ebr", "ebr"),
                              ("dsp", "dsp")):
                if isinstance(s.get(key), (int, float)):
                    r["%s_ulx3s_%s" % (name, dev)] = num(s[key])
            if dev == "85k" and isinstance(s.get("target_mhz"), (int, float)):
                clock = float(s["target_mhz"])
    r["system_clock_mhz"] = num(clock)
    us = 1.0 / clock
    for k in ("fastreg_clocks_1page", "fastreg_clocks_16pages", "fastreg_clocks_256pages", "invalidate_clocks"):
        if k in r:
            r[k.replace("clocks", "us")] = round(r[k] * us, 3)
    if "sim_cycles_per_second" in r:
        r["sim_slowdown_vs_board"] = round(clock * 1e6 / r["sim_cycles_per_second"], 1)
    missing = [k for k in REQUIRED if k not in r]
    if missing:
        die("no figure for: " + ", ".join(missing))
    r["dma_port_fraction"] = round(r["dma_bytes_per_clock"] / r["dma_port_bytes_per_clock"], 4)
    return r, series, phases, funcs


# ---- the table ----
def rows(r):
    """(name, key, unit, physical limit or target text, pass or None)"""
    def ge(k, t):
        return r.get(k, 0) >= t
    out = [
        ("key check + translation, sustained", "keycheck_per_clock", "checks/clock", "1 per clock",
         ge("keycheck_per_clock", 1.0)),
        ("key check latency", "keycheck_latency_clocks", "clocks", "the pipeline's stages (nf_keycheck.v)", None),
        ("MTT page-list load, 256 pages", "mtt_load_pages_per_clock", "pages/clock", "1 MTT write per clock, target >= 0.9",
         ge("mtt_load_pages_per_clock", 0.9)),
        ("DMA 64 KiB through translated pages", "dma_bytes_per_clock", "bytes/clock",
         "port %d bytes/clock, target >= 90%%" % r.get("dma_port_bytes_per_clock", 8),
         r.get("dma_port_fraction", 0) >= 0.9),
        ("DMA port width", "dma_port_bytes_per_clock", "bytes/clock", "", None),
        ("fast-register, 1 page (arrival to CQE)", "fastreg_clocks_1page", "clocks", "falling target", None),
        ("  of which firmware", "fastreg_firmware_clocks_1page", "clocks", "", None),
        ("fast-register, 16 pages", "fastreg_clocks_16pages", "clocks", "", None),
        ("fast-register, 256 pages", "fastreg_clocks_256pages", "clocks", "", None),
        ("invalidate", "invalidate_clocks", "clocks", "", None),
        ("link efficiency, many WRs in flight", "link_efficiency", "of UART raw rate", "target >= 0.9",
         ge("link_efficiency", 0.9)),
        ("link efficiency, stop and wait", "link_efficiency_stop_and_wait", "of UART raw rate", "", None),
        ("host instructions per NdkFastRegister", "host_instructions_per_post", "instructions", "< 1,000",
         r.get("host_instructions_per_post", 1e9) < 1000),
        ("simulation speed (fast-register run)", "sim_cycles_per_second", "cycles/s", "board: %g M" %
         r["system_clock_mhz"], None),
        ("system clock", "system_clock_mhz", "MHz", "", None),
        ("Fmax ULX3S 85k", "fmax_mhz_ulx3s_85k", "MHz", ">= system clock",
         (r["fmax_mhz_ulx3s_85k"] >= r["system_clock_mhz"]) if "fmax_mhz_ulx3s_85k" in r else None),
        ("LUTs ULX3S 85k", "luts_ulx3s_85k", "LUT4", "", None),
        ("Fmax ULX3S 25k", "fmax_mhz_ulx3s_25k", "MHz", ">= system clock",
         (r["fmax_mhz_ulx3s_25k"] >= r["system_clock_mhz"]) if "fmax_mhz_ulx3s_25k" in r else None),
        ("LUTs ULX3S 25k", "luts_ulx3s_25k", "LUT4", "", None),
    ]
    return out


def fmt(v):
    if isinstance(v, float):
        return "%.4g" % v if abs(v) < 1000 else "{:,.0f}".format(v)
    return "{:,}".format(v)


def print_table(r):
    print("%-42s %14s  %-18s %-36s %s" % ("benchmark", "value", "unit", "limit / target", ""))
    for name, key, unit, limit, ok in rows(r):
        v = fmt(r[key]) if key in r else "(no build)"
        mark = "" if ok is None else ("PASS" if ok else "BELOW TARGET")
        print("%-42s %14s  %-18s %-36s %s" % (name, v, unit, limit, mark))


# ---- plots ----
def gnuplot(script):
    p = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if p.returncode != 0:
        die("gnuplot failed: " + p.stderr)


def plots(r, series):
    os.makedirs(IMG, exist_ok=True)
    dat = os.path.join(BUILD, "fastreg.dat")
    with open(dat, "w") as f:
        f.write("# pages total_clocks firmware_clocks invalidate_clocks invalidate_fw_clocks\n")
        for s in series["fastreg"]:
            f.write(" ".join("%d" % x for x in s) + "\n")
    gnuplot("""set terminal pngcairo size 800,480 font ",10"
set output "%s"
set title "Fast-register: work request in adapter memory to CQE posted (nfsim, real firmware)"
set xlabel "pages in the fast-register"
set ylabel "clocks"
set logscale x 2
set yrange [0:*]
set key left top
set grid
plot "%s" using 1:2 with linespoints lw 2 title "total", \\
     "%s" using 1:3 with linespoints lw 2 title "firmware share", \\
     "%s" using 1:($2-$3) with linespoints lw 2 title "waiting on the engine (loader)", \\
     "%s" using 1:4 with linespoints lw 1 dt 2 title "invalidate after it"
""" % (os.path.join(IMG, "fastreg_clocks.png"), dat, dat, dat, dat))
    dat = os.path.join(BUILD, "link.dat")
    with open(dat, "w") as f:
        f.write("# in_flight efficiency payload_bytes clocks\n")
        for s in series["link"]:
            f.write("%d %.4f %d %d\n" % tuple(s))
    gnuplot("""set terminal pngcairo size 800,480 font ",10"
set output "%s"
set title "Link: host-to-board payload / UART raw byte rate (3 MBd, nfsim)"
set xlabel "work requests in flight"
set ylabel "efficiency"
set logscale x 2
set yrange [0:1]
set key right bottom
set grid
plot "%s" using 1:2 with linespoints lw 2 title "measured", 0.9 with lines dt 2 title "target 0.9"
""" % (os.path.join(IMG, "link_efficiency.png"), dat))
    dat = os.path.join(BUILD, "ndmrlat.dat")
    with open(dat, "w") as f:
        f.write("# size reg reg_done dereg dereg_done fr fr_done inv inv_done fr_cycles inv_cycles (us)\n")
        for s in series["ndmrlat"]:
            f.write(" ".join("%g" % x for x in s) + "\n")
    gnuplot("""set terminal pngcairo size 800,480 font ",10"
set output "%s"
set title "ndmrlat on nfsim: time to completion (wall clock; the simulation is about %d times slower than the board)"
set xlabel "bytes"
set ylabel "microseconds"
set logscale xy
set key left top
set grid
plot "%s" using 1:($3 < 0 ? NaN : $3) with linespoints title "NdkRegisterMr", \\
     "%s" using 1:($5 < 0 ? NaN : $5) with linespoints title "NdkDeregisterMr", \\
     "%s" using 1:($7 < 0 ? NaN : $7) with linespoints title "NdkFastRegister", \\
     "%s" using 1:($9 < 0 ? NaN : $9) with linespoints title "NdkInvalidate"
""" % (os.path.join(IMG, "ndmrlat.png"), r.get("sim_slowdown_vs_board", 0), dat, dat, dat, dat))


# ---- docs/performance.md ----
def doc(r, series, phases, funcs):
    g = lambda k: fmt(r[k]) if k in r else "n/a"
    lines = []
    w = lines.append
    w("# Performance")
    w("")
    w("Generated by `make bench-report` (bench/report.py) from the last `make bench`; the raw figures")
    w("are in `build/bench/results.json`. Every figure is measured, in units that do not depend on")
    w("the machine: Verilator clock cycles (exact) and callgrind instructions. Times are clocks")
    w("converted at the system clock, %s MHz (the bitstream flow's target when it has run, else the" %
      g("system_clock_mhz"))
    w("ULX3S's 50 MHz).")
    w("")
    w("## Results")
    w("")
    w("| benchmark | value | unit | physical limit / target | |")
    w("|---|---:|---|---|---|")
    for name, key, unit, limit, ok in rows(r):
        v = g(key) if key in r else "not built yet"
        mark = "" if ok is None else ("pass" if ok else "**below target**")
        w("| %s | %s | %s | %s | %s |" % (name.strip(), v, unit, limit, mark))
    w("")
    w("At %s MHz: fast-register of 1 page %s µs, 16 pages %s µs, 256 pages %s µs; invalidate %s µs." % (
        g("system_clock_mhz"), g("fastreg_us_1page"), g("fastreg_us_16pages"), g("fastreg_us_256pages"),
        g("invalidate_us")))
    w("")
    w("## How each figure is measured")
    w("")
    w("- **Key check + translation** (`bench/kc_bench.cpp`, `make bench-engine`): a Verilator harness")
    w("  around `nf_keycheck` alone (64-entry MPT, 256-entry MTT). One valid entry of 64 pages; then")
    w("  %s checks (REMOTE_WRITE, 64 bytes, addresses spread over the pages) presented back to back, one" %
      g("keycheck_checks"))
    w("  per clock while `ready`. Every result is checked: granted, and `out_addr` equal to the")
    w("  translated adapter address. Sustained rate = checks / (clocks from the first input to the last")
    w("  output, minus the latency). Latency = clocks from a lone check's input to its result.")
    w("  Physical limit: the pipeline accepts one op per clock, so 1.0.")
    w("- **Page-list load** (`bench/eng_bench.cpp`): the whole `nf_engine` (2 MiB adapter memory, 1024")
    w("  MTT entries) driven through its ENGINE registers and system port as the firmware drives it.")
    w("  A 256-entry page list is written into adapter memory, `LD_*` programmed, and the clocks counted")
    w("  from the clock `LD_CTRL` is written to the clock the loader's `busy` drops (read from the RTL).")
    w("  The MTT is read back and checked. %s clocks for 256 pages, %s for 1 (fixed start-up cost);" % (
        g("mtt_load_clocks_256pages"), g("mtt_load_clocks_1page")))
    w("  incremental rate %s pages/clock. Physical limit: one MTT write per clock (the MTT write" %
      g("mtt_load_pages_per_clock_incremental"))
    w("  goes through the key-check pipeline, one op per clock).")
    w("- **DMA** (`bench/eng_bench.cpp`): 64 KiB from one token-named region to another, each 16")
    w("  pages placed in reverse order in adapter memory (so every page is really translated), both")
    w("  ranges checked whole first, then page-bounded chunks, each re-checked. Clocks from `DMA_CTRL`")
    w("  written to `busy` dropping: %s. Every destination word is compared with the source." %
      g("dma_clocks_64k"))
    w("  Physical limit: the memory port, %s bytes per clock (64-bit read and write ports)." %
      g("dma_port_bytes_per_clock"))
    w("- **Fast-register / invalidate clocks** (`bench/bench_sim.c`, `make bench-sim`): the Verilator")
    w("  board (`nfsim`: the real RTL and firmware, UART at 3 MBd) driven through the host library's")
    w("  link (`nf_link`). One connected QP, one fast-register MR initialized for INFO.max_frmr_pages")
    w("  (%s in the SIM profile, so 256 pages fit). For 1, 2, 4 … %s pages: post WR_FAST_REGISTER, wait" % (
        g("max_frmr_pages"), g("fastreg_max_pages")))
    w("  for its CQE (SUCCESS), then read INFO: `last_wr_cycles` is from the frame's RX stamp (the")
    w("  clock the link hardware finished writing it into adapter memory) to the CQE written into the")
    w("  TX slot; `last_wr_fw_cycles` excludes the clocks the firmware waited on the engine. Then the")
    w("  same for WR_INVALIDATE. Each size runs three times; the median is reported. The firmware")
    w("  counts a wait only when the engine is still busy at its first status read, so for small lists")
    w("  the firmware share equals the total. The board-side")
    w("  counter is exact, but which instruction of its poll loop the firmware is in when the frame")
    w("  lands varies the total by up to ~250 clocks from run to run (see the `notice` phase below).")
    w("- **Link efficiency** (`bench/bench_sim.c`): a stream of %d work requests (fast-register of 64" %
      (2 * 32))
    w("  pages, %s bytes, and invalidate, %s bytes, alternating on one MR), one request per DATA frame, with" % (
        g("link_wr_bytes_fastreg_64"), g("link_wr_bytes_invalidate")))
    w("  at most K completions outstanding. Efficiency = host-to-board message bytes (MSG_HDR + body,")
    w("  the payload; framing, CRC, stuffing, acks are the overhead) / (simulated time × the UART's raw")
    w("  byte rate, baud/10). Simulated time is INFO.cycle before and after the stream. Physical limit:")
    fr_b, inv_b = r.get("link_wr_bytes_fastreg_64", 0), r.get("link_wr_bytes_invalidate", 0)
    per_frame = 8 + 4 + 2  # LINK_HDR, CRC-32, two flags (stuffing comes on top)
    cap = (fr_b + inv_b) / float(fr_b + inv_b + 2 * per_frame) if fr_b else 0
    w("  1.0; with these frames the framing alone (8-byte header, 4-byte CRC, 2 flags per frame) caps it")
    w("  at %.3f. `link_efficiency` is the best K; `link_efficiency_stop_and_wait` is K = 1, where each" % cap)
    w("  request waits for the previous CQE (firmware time plus a CQE frame back on the line).")
    w("  The host link's retransmission timeout is raised to 3 s for this run: the simulation is ~%s×" %
      g("sim_slowdown_vs_board"))
    w("  slower than the board, so a 2 KiB frame takes about half a second of wall time and a timeout")
    w("  tuned for the board fires spuriously (those resent frames would count against the link).")
    w("- **Host instructions per post**: `make bench-ndk-post` (tests/conformance/bench_post.c, owned by")
    w("  the host library): callgrind counts the instructions inside `NdkFastRegister` over %s calls" %
      g("host_posts_measured"))
    w("  (1 page, DEFER, against the software adapter). The figure includes the link's queueing of the")
    w("  message into the open frame (no system call under DEFER), so it is an upper bound of the")
    w("  library's own cost.")
    w("- **Simulation speed**: simulated cycles (INFO.cycle) per wall-clock second over the fast-register")
    w("  series of `bench_sim` (UART traffic, firmware busy); it depends on the machine and its load.")
    w("- **FPGA**: `build/board/ulx3s-{85k,25k}/summary.json` from `make bitstream` when present.")
    w("")
    w("![fast-register clocks against page count](img/fastreg_clocks.png)")
    w("")
    w("![link efficiency against requests in flight](img/link_efficiency.png)")
    w("")
    w("## ndmrlat on the simulation")
    w("")
    w("`ndkfpga mrlat` (`make bench-ndmrlat`; host/cli/) uses only `ndkpi.h` and `ndkfpga.h`: it opens the")
    w("adapter, connects two QPs, and for each size from 4 KiB to the largest the adapter allows times")
    w("each call until it returns (per call) and until its completion (callback, or CQE on the CQ). Wall")
    w("clock of this host against nfsim, which runs ~%s× slower than the board, so the to-completion" %
      g("sim_slowdown_vs_board"))
    w("times are dominated by the simulated UART (a 256-page list is 2 KiB on a 3 MBd line); the")
    w("per-call times are the host library's own. `fr-cyc` / `inv-cyc` are the board's clocks (INFO).")
    w("")
    w("| size | register call µs | register done µs | deregister call µs | deregister done µs | fast-register call µs | fast-register done µs | invalidate call µs | invalidate done µs | fast-register clocks | invalidate clocks |")
    w("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in series["ndmrlat"]:
        cells = ["%d" % s[0]]
        for i, x in enumerate(s[1:9]):
            cells.append("–" if x < 0 else ("%.1f" % x if i % 2 == 0 else "%.0f" % x))
        cells += ["–" if x < 0 else "%d" % x for x in s[9:11]]
        w("| " + " | ".join(cells) + " |")
    w("")
    w("![ndmrlat](img/ndmrlat.png)")
    w("")
    w("## Where the fast-register's clocks go")
    w("")
    w("`bench/fwprof.cpp` (`make bench-fwprof`) runs `nf_soc` with the real firmware image and a small")
    w("protocol driver on the UART pins, and follows the CPU's bus: every instruction fetch (attributed")
    w("to its firmware function by `nm` of the ELF), every adapter-memory and register access with its")
    w("wait, and the reads of RX_STAMP and CYCLE_LO that bound the firmware's own measure. The phases")
    w("below add up exactly to INFO.last_wr_cycles of the same request (checked by the harness).")
    w("")
    labels = [l for l in ("fastreg_1", "fastreg_16", "fastreg_256", "invalidate") if l in phases]
    w("| phase (clocks) | " + " | ".join(labels) + " | what |")
    w("|---|" + "---:|" * len(labels) + "---|")
    what = {
        "notice": "RX stamp to the firmware's first read of the slot: the poll loop's latency",
        "link": "link header: seq/ack, `tx_ack` (frees acknowledged TX slots, recomputes the RTO), TX room check",
        "parse": "`fw_msg_process`: message walk, length checks, op dispatch",
        "validate": "`fw_wr_process` up to the engine: QP lookup, WR fields from the RX slot, MR lookup, NDK rules",
        "loader": "`fw_load`: program LD_SRC/MTT_BASE/COUNT/CTRL, wait for the loader",
        "mpt": "build the 7 MPT words, `fw_mpt_write` (7 staging writes, TBL_CMD, wait) / `fw_mpt_invalidate`",
        "cqe": "`fw_tx_reserve` and the 10 words of MSG_HDR + CQE written into the TX slot",
        "total": "= INFO.last_wr_cycles",
        "instructions": "instructions fetched in the window",
        "window_accesses": "adapter-memory window accesses (RX slot reads, TX slot writes)",
        "window_wait_cycles": "clocks the CPU waited for them",
        "engine_accesses": "ENGINE register accesses",
    }
    for k in PHASES + ["total", "instructions", "window_accesses", "window_wait_cycles", "engine_accesses"]:
        w("| %s | " % k + " | ".join(str(phases[l].get(k, "")) for l in labels) + " | %s |" % what.get(k, ""))
    w("")
    f1 = funcs.get("fastreg_1", {})
    top = sorted(f1.items(), key=lambda kv: -kv[1])[:10]
    w("Clocks by firmware function (fast-register of 1 page; inlined helpers count as their caller):")
    w("")
    w("| function | clocks |")
    w("|---|---:|")
    for fn, c in top:
        w("| `%s` | %d |" % (fn, c))
    w("")
    ph = phases.get("fastreg_1", {})
    tot = ph.get("total", 1)
    ins = ph.get("instructions", 1)
    w("The firmware executes %d instructions in %d clocks (%.1f clocks per instruction: PicoRV32 takes" %
      (ins, tot, tot / float(ins)))
    w("3–6 clocks per instruction and its `mul` is a sequential 32-step multiplier). The engine's part")
    w("is small: the loader waits %d clocks for 1 page and %d for 256 (1 MTT write per clock); waiting" % (
        ph.get("loader", 0), phases.get("fastreg_256", {}).get("loader", 0)))
    w("on the adapter-memory window costs %d clocks in all. Nearly everything is instructions." %
      ph.get("window_wait_cycles", 0))
    w("")
    # The cuts made so far, per phase, against the first measurement (1 page, same harness).
    first = {"notice": 171, "link": 890, "parse": 372, "validate": 903, "loader": 77, "mpt": 470,
             "cqe": 510, "total": 3393, "instructions": 611}
    w("### What was cut, and what is left")
    w("")
    w("The first measurement of this path (1 page) against now, phase by phase:")
    w("")
    w("| phase | first | now | what changed |")
    w("|---|---:|---:|---|")
    why = {
        "notice": "RX_READY is read before the retransmission timer (varies with the poll loop's position)",
        "link": "the retransmission timeout is no longer recomputed with 64-bit multiplies on every ack",
        "parse": "a frame holding exactly one work request goes straight to `fw_wr_process`",
        "validate": "hot files built -O2; WR fields read from one base pointer; one masked compare for the common MR state",
        "loader": "",
        "mpt": "MPT words go straight to the staging registers; rights from a 16-entry table",
        "cqe": "TX_BUSY read only after a retransmission; no message walk for one-message frames",
        "total": "",
        "instructions": "",
    }
    for k in ["notice", "link", "parse", "validate", "loader", "mpt", "cqe", "total", "instructions"]:
        w("| %s | %d | %d | %s |" % (k, first[k], ph.get(k, 0), why[k]))
    w("")
    w("What is left is almost all instructions on a CPU at ~5 clocks per instruction:")
    w("")
    w("1. **Validation, %d clocks**: the NDK rules themselves (QP state, MR kind/state/PD, capacity," %
      ph.get("validate", 0))
    w("   FBO/VA/length arithmetic) on 64-bit values with a 32-bit CPU.")
    w("2. **Link header, %d clocks**: sequence and ack handling, freeing acknowledged TX slots." % ph.get("link", 0))
    w("3. **MPT write, %d clocks**: seven staging writes, the command and its status poll." % ph.get("mpt", 0))
    w("4. **Firmware RAM wait state**: PicoRV32 here waits one clock for every fetch and load from")
    w("   the firmware RAM. Answering from the look-ahead address (`mem_la_*`) would save about one")
    w("   clock per instruction (~20%), at the price of a longer path into the RAM: it needs the")
    w("   timing margin on the 85F first (49.6 MHz achieved for 40 MHz).")
    w("5. **Hardware work requests**: parsing a fast-register's fixed fields and writing the MPT entry")
    w("   in hardware (the firmware deciding only the rule outcome) would take the path to a few hundred")
    w("   clocks; it is the next step if the figure must fall further.")
    w("")
    w("Hardware is not the bottleneck: the key check runs at %s per clock, the loader at %s pages per" % (
        g("keycheck_per_clock"), g("mtt_load_pages_per_clock")))
    w("clock, the DMA at %s of its port." % g("dma_port_fraction"))
    w("")
    with open(DOC, "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--doc", action="store_true", help="also write docs/performance.md and docs/img/*.png")
    a = ap.parse_args()
    r, series, phases, funcs = gather()
    with open(os.path.join(BUILD, "results.json"), "w") as f:
        json.dump(r, f, indent=1, sort_keys=True)
        f.write("\n")
    print_table(r)
    print("results: %s" % os.path.join(BUILD, "results.json"))
    if a.doc:
        plots(r, series)
        doc(r, series, phases, funcs)
        print("wrote %s and %s/*.png" % (DOC, IMG))


if __name__ == "__main__":
    main()
