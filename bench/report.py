#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Gathers the benchmark outputs of build/bench/ into build/bench/results.json (one flat
object: numbers, and "commit" / "source_changes", the sources they were measured on),
prints the results table, and with --doc writes docs/performance.md and its plots
(gnuplot, pngcairo) into docs/img/. --baseline copies results.json to bench/baseline.json,
the committed "before" of the before/after table (make bench-baseline). --sendlat writes
build/bench/sendlat.json, the Send/Receive figures alone (the last step of bench-sendlat;
tools/doc_figures.py writes performance.md's adapter-vs-host-memory table from it).

Inputs (written by the bench-* targets of bench/bench.mk):
  engine.out   kc_bench + eng_bench   "key = value"
  sim.out      bench_sim (nfsim)      "key = value", "series fastreg|link ..."
  ndmrlat.out  ndkfpga mrlat --series "series ndmrlat ..."
  sendlat_sim.out, sendlat_model.out  ndkfpga sendlat --series  "key = value" (suffixed _sim, _model)
  sendlat_host_sim.out, sendlat_host_model.out  the same with --host (keys send_recv_host_*)
  fwprof.out   fwprof (nf_soc)        "phase LABEL PHASE N", "func LABEL FUNC N"
  host_post.out  make bench-ndk-post  "host: N instructions in M NdkFastRegister calls = X per call"
  rc.out       bench_sim --rc (nfsim, PHY loopback)  "rc_* = value"
  link.out     bench_sim --host-link, UART and UDP (bench-link)  "link_uart_*, link_udp_* = value"
the board's system clock from proto/boards.toml (board ulx3s-85k, clk_hz), and
build/board/ulx3s-{85k,25k}/summary.json (tools/bitstream.sh) when they are fresh.
A missing input is an error naming the target that makes it: no figure is invented."""
import argparse
import hashlib
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import contract  # noqa: E402  (the contract, proto/*.toml)
import genlayout  # noqa: E402  (its struct sizes)

BUILD = os.path.join(ROOT, "build", "bench")
RESULTS = os.path.join(BUILD, "results.json")
SENDLAT = os.path.join(BUILD, "sendlat.json")  # bench-sendlat's figures alone (--sendlat)
DETAIL = os.path.join(BUILD, "detail.json")  # the series and profiles behind the plots, written with it
BASELINE = os.path.join(ROOT, "bench", "baseline.json")
DOC = os.path.join(ROOT, "docs", "performance.md")
IMG = os.path.join(ROOT, "docs", "img")
CLOCK_BOARD = "ulx3s-85k"  # the board whose clock converts clocks to time
SENDLAT_SIZES = (8, 512, 4096)  # host/cli/cmd_send.c's sizes
SENDLAT_MEMORY = (("send_recv", "adapter"), ("send_recv_host", "host"))  # key prefix, sendlat_*.out's infix
SENDLAT_REQUIRED = ["%s_%s_%db" % (p, k, n) for p, _ in SENDLAT_MEMORY for k in ("clocks", "path_clocks")
                    for n in SENDLAT_SIZES] + ["%s_clock_hz" % p for p, _ in SENDLAT_MEMORY] + [
    "%s_%s_%s" % (p, k, dev) for p, _ in SENDLAT_MEMORY for dev in ("sim", "model")
    for k in ["latency_us_%db" % n for n in SENDLAT_SIZES] + ["pingpong_us", "rate_msgs_per_s", "rate_in_flight",
                                                              "rate_count", "iterations"]]
# RC throughput (bench-rc): per op, the 64 KiB batch per packet and the 1 KiB batch per message.
RC_OPS = ("write", "read", "send")
RC_REQUIRED = ["rc_%s_%s" % (op, k) for op in RC_OPS for k in ("clocks_per_packet", "clocks", "bytes", "packets")] + [
    "rc_%s_1k_%s" % (op, k) for op in RC_OPS for k in ("clocks_per_message", "clocks", "bytes", "packets")] + [
    "rc_retransmits", "rc_port_drops", "rc_phy_div", "rc_path_mtu", "rc_port_clocks_per_packet", "rc_big_count",
    "rc_big_bytes", "rc_small_count", "rc_small_bytes"]
REQUIRED = ["keycheck_per_clock", "keycheck_latency_clocks", "mtt_load_pages_per_clock", "dma_bytes_per_clock",
            "dma_port_bytes_per_clock", "fastreg_clocks_1page", "fastreg_clocks_16pages", "fastreg_clocks_256pages",
            "invalidate_clocks", "link_efficiency", "link_efficiency_stop_and_wait",
            "host_instructions_per_post", "sim_cycles_per_second", "sim_host_instructions_per_clock", "system_clock_mhz",
            # the harnesses' settings and the counts the method text names
            "kc_mpt_entries", "kc_mtt_entries", "eng_mem_bytes", "eng_mtt_entries", "keycheck_checks",
            "mtt_load_clocks_1page", "mtt_load_clocks_256pages", "mtt_load_pages_per_clock_incremental",
            "dma_clocks_64k", "sim_clk_hz", "sim_uart_period_q4", "max_frmr_pages", "fastreg_max_pages",
            "fastreg_reps", "link_stream_wrs", "link_stream_pages", "link_rto_min_ms", "link_wr_bytes_invalidate",
            "host_posts_measured",
            # Send/Receive through NDKPI (ndkfpga sendlat): board clocks on nfsim, wall time on both
            ] + SENDLAT_REQUIRED + RC_REQUIRED
PROFILED = ["fastreg_1", "fastreg_256"]  # fwprof requests the text names
PHASES = ["notice", "link", "parse", "validate", "engine", "cqe", "wait", "finish"]
# Paths whose changes do not change a measurement (the documents the figures go into).
NOT_MEASURED = [":(exclude)*.md", ":(exclude)docs", ":(exclude)bench/baseline.json"]
BEGIN, END = "<!-- bench-results:begin -->", "<!-- bench-results:end -->"
# The check against bench/baseline.json: a figure may get worse by this fraction of its
# baseline value, and never past its budget.
REGRESSION_LIMIT = 0.10
HIGHER_IS_BETTER = ("link_efficiency", "link_efficiency_stop_and_wait", "sim_cycles_per_second")
# Wall-clock figures depend on the machine and its load: budgets only, no regression check.
MACHINE_DEPENDENT = ("sim_cycles_per_second",)


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
    return int(float(v)) if float(v).is_integer() else round(float(v), 4)  # "2075.0" too


def rc_figures(text):
    """bench-rc's figures (rc.out) and the rates they give (rc_rates)."""
    return rc_rates({k: num(v) for k, v in keyvals(text).items() if k.startswith("rc_")})


def rc_rates(r):
    """The rates bench-rc's figures r give at the board's clock, added to r: MB/s of each
    64 KiB batch, messages/s of each 1 KiB batch, the fraction of the port's line rate."""
    hz = layout_clock_mhz(CLOCK_BOARD) * 1e6
    for op in RC_OPS:
        if r.get("rc_%s_clocks" % op):
            r["rc_%s_mb_per_s" % op] = round(r["rc_%s_bytes" % op] * hz / r["rc_%s_clocks" % op] / 1e6, 2)
            r["rc_%s_port_fraction" % op] = round(r["rc_port_clocks_per_packet"] / r["rc_%s_clocks_per_packet" % op], 3)
        if r.get("rc_%s_1k_clocks" % op):
            r["rc_%s_1k_msgs_per_s" % op] = round(r["rc_small_count"] * hz / r["rc_%s_1k_clocks" % op])
    if "rc_port_clocks_per_packet" in r:
        r["rc_port_mb_per_s"] = round(r["rc_path_mtu"] * hz / r["rc_port_clocks_per_packet"] / 1e6, 2)
    return r


def gather():
    eng = read("engine.out", "bench-engine")
    sim = read("sim.out", "bench-sim")
    rc = read("rc.out", "bench-rc")
    nd = read("ndmrlat.out", "bench-ndmrlat")
    prof = read("fwprof.out", "bench-fwprof")
    host = read("host_post.out", "bench-host")
    sim_ir = read("sim_ir.out", "bench-sim-ir")
    bad = failures(eng) + failures(sim) + failures(nd) + failures(prof) + failures(rc)
    if bad:
        die("a benchmark check failed:\n  " + "\n  ".join(bad))

    r = {}
    kv = keyvals(eng)
    kv.update(keyvals(sim))
    for k, v in kv.items():
        r[k] = num(v)
    r.update(sendlat())
    r.update(rc_figures(rc))
    r.update(link_figures())
    r.update(host_figures(host))
    m = re.search(r"ir_per_clock: ([0-9.]+) instructions per idle clock", sim_ir)
    if not m:
        die("no callgrind figure in sim_ir.out (make sim-ir)")
    r["sim_host_instructions_per_clock"] = num(m.group(1))

    series = {"fastreg": [], "link": [], "ndmrlat": []}
    for line in (sim + "\n" + nd).splitlines():
        p = line.split()
        if len(p) > 2 and p[0] == "series" and p[1] in series:
            series[p[1]].append([float(x) for x in p[2:]])

    phases, funcs, figures = fwprof_figures(prof)
    r.update(figures)

    clock = layout_clock_mhz(CLOCK_BOARD)
    for dev in ("85k", "25k"):
        s = fresh_summary("ulx3s", dev)
        if s is None:
            continue
        for key in ("fmax_mhz", "luts", "ffs", "ebr", "dsp"):
            r["%s_ulx3s_%s" % (key, dev)] = num(s[key])
        if s["target_mhz"] != layout_clock_mhz("ulx3s-" + dev):
            die("build/board/ulx3s-%s/summary.json was placed for %g MHz, proto/boards.toml's clk_hz is %g MHz"
                % (dev, s["target_mhz"], layout_clock_mhz("ulx3s-" + dev)))
    r["system_clock_mhz"] = num(clock)
    # The core the models were built with (rtl/soc/soc.mk NF_CPU, passed by bench.mk).
    r["cpu"] = os.environ.get("NF_CPU") or die("NF_CPU is not set: run the report through make bench")
    us = 1.0 / clock
    for k in ("fastreg_clocks_1page", "fastreg_clocks_16pages", "fastreg_clocks_256pages", "invalidate_clocks") + \
            tuple("%s_clocks_%db" % (p, n) for p, _ in SENDLAT_MEMORY for n in SENDLAT_SIZES):
        if k in r:
            r[k.replace("clocks", "us")] = round(r[k] * us, 3)
    if "sim_cycles_per_second" in r:
        r["sim_slowdown_vs_board"] = round(clock * 1e6 / r["sim_cycles_per_second"], 1)
    missing = [k for k in REQUIRED if k not in r] + ["fwprof " + l for l in PROFILED if l not in phases]
    if "link_stream_pages" in r and "link_wr_bytes_fastreg_%d" % r["link_stream_pages"] not in r:
        missing.append("link_wr_bytes_fastreg_%d" % r["link_stream_pages"])
    if missing:
        die("no figure for: " + ", ".join(missing))
    r["dma_port_fraction"] = round(r["dma_bytes_per_clock"] / r["dma_port_bytes_per_clock"], 4)
    r.update(source_state())
    return r, series, phases, funcs


def rc_method(w, r):
    """performance.md's text of how bench-rc measures, with its settings and the port's limit."""
    g = lambda k: fmt(r[k])
    w("- **RC throughput** (`bench/bench_rc.c`, `make bench-rc`): one nfsim whose port is in PHY loopback")
    w("  (`nfsim --wire-loopback --phy-div %s`: what the MAC transmits comes back to its own receiver, %s" % (
        g("rc_phy_div"), g("rc_phy_div")))
    w("  clocks per byte), two QPs of the adapter connected over the wire to its own IPv4 address")
    w("  (QP_CONNECT_WIRE), so every packet crosses the whole port: the firmware's RC transport, the")
    w("  engine's DMA through the key check, the packet engine (ICRC), the MAC and the PHY's byte timing.")
    w("  Each figure is one batch of work requests posted in one link frame, all but the last")
    w("  SILENT_SUCCESS: %s RDMA Writes, Reads or Sends of %s bytes, then %s of %s bytes (the firmware's" % (
        g("rc_big_count"), g("rc_big_bytes"), g("rc_small_count"), g("rc_small_bytes")))
    w("  send-queue depth). The clocks are the firmware's own count, INFO.last_wr_cycles after the last")
    w("  completion: from the frame's arrival in adapter memory to that completion, the same on every")
    w("  run whatever the host's speed (a Send's receive completions go to the host meanwhile, and the")
    w("  host's acks of them move its figure by a few clocks). Per packet: the clocks over the")
    w("  %s-byte packets of the batch; MB/s: its payload bytes at the board's %s MHz. The port's limit is" % (
        g("rc_path_mtu"), g("system_clock_mhz")))
    w("  %s clocks per packet: %s bytes on the wire for %s of payload (preamble, Ethernet, IPv4, UDP," % (
        g("rc_port_clocks_per_packet"), fmt(r["rc_port_clocks_per_packet"] // r["rc_phy_div"]), g("rc_path_mtu")))
    w("  BTH, ICRC, FCS, gap), %s MB/s, and in loopback the responder's ACKs share the same line. The data" %
      g("rc_port_mb_per_s"))
    w("  go S → Write → W → Read → R → Send → V; V, read back once, equals S, so every byte every")
    w("  transfer moved is checked. Retransmissions (STATS.rc_retransmits) over the run: %s; frames the" %
      g("rc_retransmits"))
    w("  port dropped for want of a free RX slot: %s (ACKs: a lost data packet would be retransmitted)." %
      g("rc_port_drops"))
    w("  At this port rate the batches run at %s (Write), %s (Read) and %s (Send) of the port's packet" % (
        g("rc_write_port_fraction"), g("rc_read_port_fraction"), g("rc_send_port_fraction")))
    w("  rate: one CPU does both ends' work, requester and responder, for every packet.")


LINKS = (("uart", "UART"), ("udp", "UDP"))


def link_figures():
    """bench-link's host-visible figures (link.out, when made): clocks as measured, µs and
    the buffer rates (bytes/s) at the board's clock, whose clocks they are."""
    path = os.path.join(BUILD, "link.out")
    if not os.path.exists(path):
        return {}
    text = read("link.out", "bench-link")
    if failures(text):
        die("a benchmark check failed:\n  " + "\n  ".join(failures(text)))
    r = {k: num(v) for k, v in keyvals(text).items() if k.startswith("link_")}
    hz = layout_clock_mhz(CLOCK_BOARD) * 1e6
    for link, _ in LINKS:
        for n in ("1page", "16pages"):
            k = "link_%s_fastreg_clocks_%s" % (link, n)
            if k in r:
                r[k.replace("clocks", "us")] = round(r[k] * 1e6 / hz, 2)
        for d in ("write", "read"):
            k = "link_%s_buffer_%s_clocks" % (link, d)
            if k in r:
                r["link_%s_buffer_%s_bytes_per_s" % (link, d)] = round(r["link_%s_buffer_bytes" % link] * hz / r[k])
    return r


def host_figures(host):
    """bench-host's callgrind count of host instructions per NdkFastRegister post."""
    m = re.search(r"host: (\d+) instructions in (\d+) NdkFastRegister calls = (\d+) per call", host)
    if not m:
        die("no callgrind figure in host_post.out (make bench-ndk-post)")
    return {"host_instructions_per_post": int(m.group(3)), "host_posts_measured": int(m.group(2))}


def fwprof_figures(prof):
    """bench-fwprof's report: clocks by phase and by function per profiled request, and
    the figures results.json keeps of them."""
    phases, funcs, r = {}, {}, {}
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
    return phases, funcs, r


def check_budgets():
    """test-budgets: the firmware's clocks (bench-fwprof), the host's instructions per post
    (bench-host) and, when bench-rc's output is there, the RC clocks per packet against
    bench/baseline.json, one TAP line per figure with a budget. Returns the number of failures."""
    prof = read("fwprof.out", "bench-fwprof")
    r = fwprof_figures(prof)[2]
    r.update(host_figures(read("host_post.out", "bench-host")))
    failed = failures(prof)
    if os.path.exists(os.path.join(BUILD, "rc.out")):
        rc = read("rc.out", "bench-rc")
        failed += failures(rc)
        r.update(rc_figures(rc))
    with open(BASELINE) as f:
        base = json.load(f)
    for line in failed:
        print(line)
    for k, lim in sorted(base["budgets"].items()):
        if k not in r:
            continue
        held = r[k] <= lim.get("max", r[k]) and r[k] >= lim.get("min", r[k])
        limits = ", ".join("%s %s" % ({"max": "<=", "min": ">="}[b], fmt(v)) for b, v in sorted(lim.items()))
        print("%s - budget: %s = %s (%s)" % ("ok" if held else "not ok", k, fmt(r[k]), limits))
        failed += [] if held else [k]
    regress = [line for line in check(r, base) if "baseline's" in line]
    for line in regress:
        print("not ok - regression: " + line)
    if not regress:
        print("ok - no figure more than %d %% worse than %s" % (round(100 * REGRESSION_LIMIT), BASELINE))
    return len(failed) + len(regress)


def sendlat():
    """The figures of bench-sendlat's four runs. The clocks (a Send's, the whole path's, the
    clock they count) are the board's only on nfsim (nfmodel counts its own); the rest is
    suffixed _sim or _model. The whole path's clocks become simulated µs at that clock."""
    r = {}
    for _, mem in SENDLAT_MEMORY:
        for dev in ("sim", "model"):
            text = read("sendlat_%s%s.out" % ("host_" if mem == "host" else "", dev), "bench-sendlat")
            bad = failures(text)
            if bad:
                die("a benchmark check failed:\n  " + "\n  ".join(bad))
            for k, v in keyvals(text).items():
                if "_clock" in k:
                    if dev == "sim":
                        r[k] = num(v)
                else:
                    r["%s_%s" % (k, dev)] = num(v)
    for p, _ in SENDLAT_MEMORY:
        for n in SENDLAT_SIZES:
            k = "%s_path_clocks_%db" % (p, n)
            if k in r and r.get(p + "_clock_hz"):
                r[k.replace("clocks", "us")] = round(r[k] * 1e6 / r[p + "_clock_hz"], 1)
    return r


def layout():
    return contract.load()


def layout_clock_mhz(board):
    """A board's system clock in MHz: proto/boards.toml, [[board]] name, clk_hz."""
    for b in layout().get("board", []):
        if b["name"] == board:
            return b["clk_hz"] / 1e6
    die("proto/boards.toml: no board %s" % board)


def fresh_summary(board, dev):
    """A bitstream's summary.json when it is of today's sources, else None (and why)."""
    path = os.path.join(ROOT, "build", "board", "%s-%s" % (board, dev), "summary.json")
    if not os.path.exists(path):
        return None
    p = subprocess.run(["bash", os.path.join(ROOT, "tools", "bitstream.sh"), "--is-fresh", board, dev],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print("bench report: %s left out: %s" % (path, (p.stdout + p.stderr).strip()), file=sys.stderr)
        return None
    with open(path) as f:
        return json.load(f)


def git(root, *args):
    p = subprocess.run(["git", "-C", root] + list(args), capture_output=True, text=True)
    if p.returncode != 0:
        die("git %s failed: %s" % (" ".join(args), p.stderr.strip()))
    return p.stdout


def source_state(root=ROOT):
    """The sources a measurement is of: HEAD, and a digest of the uncommitted changes to
    anything but the documents ("" when there are none)."""
    diff = git(root, "diff", "HEAD", "--", ".", *NOT_MEASURED)
    changes = hashlib.sha256(diff.encode()).hexdigest() if diff else ""
    return {"commit": git(root, "rev-parse", "HEAD").strip(), "source_changes": changes}


def stale_reason(r, root=ROOT):
    """Why results r are not of the sources in root now (None when they are)."""
    now = source_state(root)
    if r.get("source_changes") != now["source_changes"]:
        return "measured with other uncommitted changes than the tree has now"
    if r.get("commit") != now["commit"]:
        p = subprocess.run(["git", "-C", root, "diff", "--quiet", str(r.get("commit")), "HEAD", "--", ".",
                            *NOT_MEASURED], capture_output=True)
        if p.returncode != 0:
            return "measured at commit %s; sources changed since" % str(r.get("commit"))[:12]
    return None


def load_results():
    """build/bench/results.json, or exit with what to run."""
    if not os.path.exists(RESULTS):
        die("%s is missing: run `make bench`" % RESULTS)
    with open(RESULTS) as f:
        return json.load(f)


# ---- the table ----
def rows(r):
    """(name, key, unit, physical limit or target text, pass or None)"""
    def ge(k, t):
        return r.get(k, 0) >= t
    clock = r["system_clock_mhz"]
    out = [
        ("key check + translation, sustained", "keycheck_per_clock", "checks/clock", "1 per clock",
         ge("keycheck_per_clock", 1.0)),
        ("key check latency", "keycheck_latency_clocks", "clocks", "the pipeline's stages (nf_keycheck.v)", None),
        ("MTT page-list load, 256 pages", "mtt_load_pages_per_clock", "pages/clock", "1 MTT write per clock, target >= 0.9",
         ge("mtt_load_pages_per_clock", 0.9)),
        ("DMA 64 KiB through translated pages", "dma_bytes_per_clock", "bytes/clock",
         "port %s bytes/clock, target >= 90%%" % fmt(r["dma_port_bytes_per_clock"]),
         r.get("dma_port_fraction", 0) >= 0.9),
        ("DMA port width", "dma_port_bytes_per_clock", "bytes/clock", "", None),
        ("fast-register, 1 page (arrival to CQE)", "fastreg_clocks_1page", "clocks", "", None),
        ("fast-register, 16 pages", "fastreg_clocks_16pages", "clocks", "", None),
        ("fast-register, 256 pages", "fastreg_clocks_256pages", "clocks", "", None),
        ("invalidate", "invalidate_clocks", "clocks", "", None),
        ("link efficiency, many WRs in flight", "link_efficiency", "of UART raw rate", "target >= 0.9",
         ge("link_efficiency", 0.9)),
        ("link efficiency, stop and wait", "link_efficiency_stop_and_wait", "of UART raw rate", "", None),
        ("host instructions per NdkFastRegister", "host_instructions_per_post", "instructions", "< 1,000",
         r["host_instructions_per_post"] < 1000),
        ("Send to receive, 8 B (arrival to CQE)", "send_recv_clocks_8b", "clocks", "", None),
        ("Send to receive, 512 B", "send_recv_clocks_512b", "clocks", "", None),
        ("Send to receive, 4 KiB", "send_recv_clocks_4096b", "clocks", "", None),
        ("Send to receive, 4 KiB, path, adapter mem", "send_recv_path_clocks_4096b", "clocks (nfsim)",
         "", None),
        ("Send to receive, 4 KiB, path, host memory", "send_recv_host_path_clocks_4096b", "clocks (nfsim)",
         "", None),
        ("Send to receive, 8 B, nfmodel", "send_recv_latency_us_8b_model", "µs wall", "", None),
        ("Send to receive, 512 B, nfmodel", "send_recv_latency_us_512b_model", "µs wall", "", None),
        ("Send to receive, 4 KiB, nfmodel", "send_recv_latency_us_4096b_model", "µs wall", "", None),
        ("Send to receive, 4 KiB, host mem, nfmodel", "send_recv_host_latency_us_4096b_model", "µs wall", "",
         None),
        ("Send ping-pong, 8 B, nfmodel", "send_recv_pingpong_us_model", "µs wall", "", None),
        ("Send/Receive, %s in flight, nfmodel" % fmt(r["send_recv_rate_in_flight_model"]),
         "send_recv_rate_msgs_per_s_model", "messages/s", "", None),
        ("Send/Receive, %s in flight, nfsim" % fmt(r["send_recv_rate_in_flight_sim"]),
         "send_recv_rate_msgs_per_s_sim", "messages/s", "simulation wall time", None),
    ]
    port = "port %s per packet (%s clocks per byte)" % (fmt(r["rc_port_clocks_per_packet"]), fmt(r["rc_phy_div"]))
    for op, name in (("write", "RDMA Write"), ("read", "RDMA Read"), ("send", "Send")):
        out += [("RC %s, %d x 64 KiB in flight, PHY loopback" % (name, r["rc_big_count"]),
                 "rc_%s_clocks_per_packet" % op, "clocks per 1 KiB packet", port, None),
                ("RC %s, 64 KiB, at %g MHz" % (name, clock), "rc_%s_mb_per_s" % op, "MB/s",
                 "port %s MB/s of payload" % fmt(r["rc_port_mb_per_s"]), None),
                ("RC %s, %d x 1 KiB in flight" % (name, r["rc_small_count"]), "rc_%s_1k_clocks_per_message" % op,
                 "clocks per message", "", None)]
    for link, name in LINKS:  # bench-link, when run
        for n, text in (("1page", "1 page"), ("16pages", "16 pages")):
            k = "link_%s_fastreg_us_%s" % (link, n)
            if k in r:
                out.append(("host link %s: fast-register, %s, post to CQE at host" % (name, text), k,
                            "µs at %g MHz" % clock, "", None))
        for d in ("write", "read"):
            k = "link_%s_buffer_%s_bytes_per_s" % (link, d)
            if k in r:
                out.append(("host link %s: %s KiB buffer %s" % (name, fmt(r["link_%s_buffer_bytes" % link] // 1024), d),
                            k, "bytes/s at %g MHz" % clock, "", None))
    out += [
        ("RC retransmissions, whole bench-rc run", "rc_retransmits", "packets", "0", r["rc_retransmits"] == 0),
        ("simulation speed (bench-sim run)", "sim_cycles_per_second", "cycles/s", "board: %g M" % clock, None),
        ("simulation cost, idle clock", "sim_host_instructions_per_clock", "host instructions", "a count: any machine", None),
        ("system clock (proto/boards.toml, %s)" % CLOCK_BOARD, "system_clock_mhz", "MHz", "", None),
    ]
    for dev in ("85k", "25k"):  # only from a bitstream of these sources
        k = "fmax_mhz_ulx3s_" + dev
        if k in r:
            out += [("Fmax ULX3S " + dev, k, "MHz", ">= system clock", r[k] >= clock),
                    ("LUTs ULX3S " + dev, "luts_ulx3s_" + dev, "LUT4", "", None)]
    # A figure with a budget in bench/baseline.json shows it, and whether it holds.
    with open(BASELINE) as f:
        budgets = json.load(f)["budgets"]
    for i, (name, k, unit, target, passed) in enumerate(out):
        if k in budgets and k in r:
            lim = budgets[k]
            text = ", ".join("budget %s %s" % ({"max": "<=", "min": ">="}[b], fmt(v)) for b, v in sorted(lim.items()))
            out[i] = (name, k, unit, text, lim.get("min", r[k]) <= r[k] <= lim.get("max", r[k]))
    return out


def fmt(v):
    if isinstance(v, float):
        return "%.4g" % v if abs(v) < 1000 else "{:,.0f}".format(v)
    return "{:,}".format(v)


def fmt_or_dash(v):
    return "—" if v is None else fmt(v)


def print_table(r):
    print("%-42s %14s  %-18s %-36s %s" % ("benchmark", "value", "unit", "limit / target", ""))
    for name, key, unit, limit, ok in rows(r):
        mark = "" if ok is None else ("PASS" if ok else "BELOW TARGET")
        print("%-42s %14s  %-18s %-36s %s" % (name, fmt(r[key]), unit, limit, mark))


def results_table(r):
    """The Results table of docs/performance.md (tools/doc_figures.py checks it)."""
    t = ["| benchmark | value | unit | physical limit / target | |", "|---|---:|---|---|---|"]
    for name, key, unit, limit, ok in rows(r):
        mark = "" if ok is None else ("pass" if ok else "**below target**")
        t.append("| %s | %s | %s | %s | %s |" % (name, fmt(r[key]), unit, limit, mark))
    return "\n".join(t) + "\n"


# ---- plots ----
def plot(name, header, data, script):
    """Writes data (rows of numbers, formatted) to build/bench/NAME.dat, and gnuplot's
    script (DAT standing for that file) to docs/img/NAME.png."""
    dat = os.path.join(BUILD, name + ".dat")
    with open(dat, "w") as f:
        f.write("# " + header + "\n")
        f.writelines(" ".join(row) + "\n" for row in data)
    head = 'set terminal pngcairo size 800,480 font ",10"\nset output "%s"\nset grid\n' % (
        os.path.join(IMG, name + ".png"))
    p = subprocess.run(["gnuplot"], input=head + script.replace("DAT", '"%s"' % dat), text=True,
                       capture_output=True)
    if p.returncode != 0:
        die("gnuplot failed: " + p.stderr)


def plots(r, series):
    os.makedirs(IMG, exist_ok=True)
    plot("fastreg_clocks", "pages total_clocks firmware_clocks invalidate_clocks invalidate_fw_clocks",
         [["%d" % x for x in s] for s in series["fastreg"]], """\
set title "Fast-register: work request in adapter memory to CQE posted (nfsim, real firmware)"
set xlabel "pages in the fast-register"
set ylabel "clocks"
set logscale x 2
set yrange [0:*]
set key left top
plot DAT using 1:2 with linespoints lw 2 title "total", \\
     DAT using 1:3 with linespoints lw 2 title "firmware share", \\
     DAT using 1:($2-$3) with linespoints lw 2 title "waiting on the engine (loader)", \\
     DAT using 1:4 with linespoints lw 1 dt 2 title "invalidate after it"
""")
    plot("link_efficiency", "in_flight efficiency payload_bytes clocks",
         [["%d" % s[0], "%.4f" % s[1], "%d" % s[2], "%d" % s[3]] for s in series["link"]], """\
set title "Link: host-to-board payload / UART raw byte rate (%s, nfsim)"
set xlabel "work requests in flight"
set ylabel "efficiency"
set logscale x 2
set yrange [0:1]
set key right bottom
plot DAT using 1:2 with linespoints lw 2 title "measured", 0.9 with lines dt 2 title "target 0.9"
""" % baud_text(r))
    plot("ndmrlat", "size reg reg_done dereg dereg_done fr fr_done inv inv_done fr_cycles inv_cycles (us)",
         [["%g" % x for x in s] for s in series["ndmrlat"]], """\
set title "ndmrlat on nfsim: time to completion (wall clock; the simulation is about %d times slower than the board)"
set xlabel "bytes"
set ylabel "microseconds"
set logscale xy
set key left top
plot DAT using 1:($3 < 0 ? NaN : $3) with linespoints title "NdkRegisterMr", \\
     DAT using 1:($5 < 0 ? NaN : $5) with linespoints title "NdkDeregisterMr", \\
     DAT using 1:($7 < 0 ? NaN : $7) with linespoints title "NdkFastRegister", \\
     DAT using 1:($9 < 0 ? NaN : $9) with linespoints title "NdkInvalidate"
""" % r["sim_slowdown_vs_board"])


def uart_baud(r):
    """The simulated UART's rate: INFO.clk_hz and INFO.uart_period (12.4 fixed point)."""
    frac = layout()["const"]["SOC"]["UART_PERIOD_FRAC"]["value"]
    return r["sim_clk_hz"] * (1 << frac) / r["sim_uart_period_q4"]


def baud_text(r):
    return "%.3g MBd" % (uart_baud(r) / 1e6)


# ---- docs/performance.md ----
def doc(r, series, phases, funcs):
    g = lambda k: fmt(r[k])
    lines = []
    w = lines.append
    spec = layout()
    sizes = {st["name"]: st["size"] for st in genlayout.layout_structs(spec)}
    w("# Performance")
    w("")
    w("Generated by `make bench-report` (bench/report.py) from the last `make bench`, measured at commit")
    w("`%s`%s; the raw figures are in `build/bench/results.json`. Every figure is measured, in units" % (
        r["commit"][:12], " with uncommitted changes" if r["source_changes"] else ""))
    w("that do not depend on the machine: Verilator clock cycles (exact) and callgrind instructions,")
    w("except the figures marked \"wall\", \"/s\" or nfmodel (wall time of this host, which depends on the")
    w("machine and its load).")
    w("Times are clocks converted at the board's system clock, %s MHz (proto/boards.toml, board" %
      g("system_clock_mhz"))
    w("%s, clk_hz)." % CLOCK_BOARD)
    w("")
    w("## Results")
    w("")
    w(BEGIN)
    w(results_table(r) + END)
    w("")
    if "fmax_mhz_ulx3s_85k" not in r:
        w("No bitstream of these sources was built before `make bench` (`make test-bitstream`), so the FPGA")
        w("figures are left out; [boards.md](boards.md) has the last ones measured.")
        w("")
    w("At %s MHz: fast-register of 1 page %s µs, 16 pages %s µs, 256 pages %s µs; invalidate %s µs." % (
        g("system_clock_mhz"), g("fastreg_us_1page"), g("fastreg_us_16pages"), g("fastreg_us_256pages"),
        g("invalidate_us")))
    w("")
    w("## How each figure is measured")
    w("")
    w("- **Key check + translation** (`bench/kc_bench.cpp`, `make bench-engine`): a Verilator harness")
    w("  around `nf_keycheck` alone (%s-entry MPT, %s-entry MTT). One valid entry of 64 pages; then" % (
        g("kc_mpt_entries"), g("kc_mtt_entries")))
    w("  %s checks (REMOTE_WRITE, 64 bytes, addresses spread over the pages) presented back to back, one" %
      g("keycheck_checks"))
    w("  per clock while `ready`. Every result is checked: granted, and `out_addr` equal to the")
    w("  translated adapter address. Sustained rate = checks / (clocks from the first input to the last")
    w("  output, minus the latency). Latency = clocks from a lone check's input to its result.")
    w("  Physical limit: the pipeline accepts one op per clock, so 1.0.")
    w("- **Page-list load** (`bench/eng_bench.cpp`): the whole `nf_engine` (%g MiB adapter memory, %s" % (
        r["eng_mem_bytes"] / 2.0 ** 20, g("eng_mtt_entries")))
    w("  MTT entries) driven through its ENGINE registers and system port as the firmware drives it.")
    w("  A 256-entry page list is written into adapter memory, `LD_*` programmed, and the clocks counted")
    w("  from the clock the write of `LD_CTRL` lands (one after its request) to the clock the loader's `busy` drops (read from the RTL).")
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
    w("  Physical limit: the memory port, %s bytes per clock (ENGINE_HW.MEM_PORT_BYTES)." %
      g("dma_port_bytes_per_clock"))
    w("- **Fast-register / invalidate clocks** (`bench/bench_sim.c`, `make bench-sim`): the Verilator")
    w("  board (`nfsim`: the real RTL and firmware, UART at %s) driven through the host library's" % baud_text(r))
    w("  link (`nf_link`). One connected QP, one fast-register MR initialized for INFO.max_frmr_pages")
    w("  (%s in the SIM profile). For 1, 2, 4 … %s pages: post WR_FAST_REGISTER, wait" % (
        g("max_frmr_pages"), g("fastreg_max_pages")))
    w("  for its CQE (SUCCESS), then read INFO: `last_wr_cycles` is from the frame's RX stamp (the")
    w("  clock the link hardware finished writing it into adapter memory) to the CQE written into the")
    w("  TX slot; `last_wr_fw_cycles` excludes the clocks the firmware waited on the engine (the plot's")
    w("  firmware share; the firmware counts a wait only when the engine is still busy at its first")
    w("  status read, so for small lists it equals the total). Then the same for WR_INVALIDATE. Each")
    w("  size runs %s times; the run with the fewest clocks is reported (a run that follows a pure ACK" % g("fastreg_reps"))
    w("  from the host, sent when its delayed-ack timer fires before the next request, finds part of")
    w("  the work-request path evicted from the instruction cache by that frame's code and takes about")
    w("  40 clocks more; how often depends on the host's load). The board-side counter is exact. Between frames")
    w("  the firmware sleeps on a read of SYS.SLEEP, which the SoC answers in the clock after the frame")
    w("  lands (the `notice` phase below), so where the firmware was when the frame landed no longer")
    w("  moves the total; what still does is the other work a frame can find pending (an ack to send,")
    w("  a retransmission timer due).")
    w("- **Link efficiency** (`bench/bench_sim.c`): a stream of %s work requests (fast-register of %s" % (
        g("link_stream_wrs"), g("link_stream_pages")))
    w("  pages, %s bytes, and invalidate, %s bytes, alternating on one MR), one request per DATA frame, with" % (
        g("link_wr_bytes_fastreg_%d" % r["link_stream_pages"]), g("link_wr_bytes_invalidate")))
    w("  at most K completions outstanding. Efficiency = host-to-board message bytes (MSG_HDR + body,")
    w("  the payload; framing, CRC, stuffing, acks are the overhead) / (simulated time × the UART's raw")
    w("  byte rate, baud/10). Simulated time is INFO.cycle before and after the stream. Physical limit:")
    fr_b, inv_b = r["link_wr_bytes_fastreg_%d" % r["link_stream_pages"]], r["link_wr_bytes_invalidate"]
    hdr, crc = sizes["LINK_HDR"], spec["const"]["LINK"]["CRC_BYTES"]["value"]
    cap = (fr_b + inv_b) / float(fr_b + inv_b + 2 * (hdr + crc + 2))  # two flags per frame
    w("  1.0; with these frames the framing alone (%d-byte header, %d-byte CRC, 2 flags per frame) caps it" % (
        hdr, crc))
    w("  at %.3f. `link_efficiency` is the best K; `link_efficiency_stop_and_wait` is K = 1, where each" % cap)
    w("  request waits for the previous CQE (firmware time plus a CQE frame back on the line).")
    big = r["fastreg_max_pages"] * 8  # one 64-bit page address per page
    w("  The host link's retransmission timeout is at least %s ms for this run: the simulation is ~%s×" % (
        g("link_rto_min_ms"), g("sim_slowdown_vs_board")))
    w("  slower than the board, so a %s-byte page list takes %.2f s of wall time on the line and a" % (
        fmt(big), big * 10 / uart_baud(r) * r["sim_slowdown_vs_board"]))
    w("  timeout tuned for the board fires spuriously (those resent frames would count against the link).")
    rc_method(w, r)
    w("- **Host instructions per post**: `make bench-ndk-post` (tests/conformance/bench_post.c, owned by")
    w("  the host library): callgrind counts the instructions inside `NdkFastRegister` over %s calls" %
      g("host_posts_measured"))
    w("  (1 page, DEFER, against the software adapter). The figure includes the link's queueing of the")
    w("  message into the open frame (no system call under DEFER), so it is an upper bound of the")
    w("  library's own cost.")
    w("- **Simulation speed**: simulated cycles (INFO.cycle) per wall-clock second of each segment of")
    w("  `bench_sim` (each page count of the fast-register series, each link stream: UART traffic,")
    w("  firmware busy), the median of the %s segments; it depends on the machine and its load. On this"
      % r.get("sim_speed_segments", "–"))
    w("  virtual machine the same model's speed moves by tens of percent between hours (the host's")
    w("  load), so builds are compared by a count: **simulation cost** (`make bench-sim-ir`,")
    w("  `sim/ir_per_clock.sh`), the host instructions callgrind counts per simulated clock of the")
    w("  firmware asleep after a RESET handshake (the model stops the CPU's clock then: sim/README.md;")
    w("  the difference of two run lengths, so start-up is left out); the same to the instruction on")
    w("  every run.")
    w("- **FPGA**: `build/board/ulx3s-{85k,25k}/summary.json` from `make test-bitstream`, when it was")
    w("  placed from these sources (`tools/bitstream.sh --is-fresh`).")
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
    w("times are dominated by the simulated UART (a %s-page list is %s bytes on a %s line); the" % (
        g("fastreg_max_pages"), fmt(big), baud_text(r)))
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
    w("## Send and Receive through NDKPI")
    w("")
    w("`ndkfpga sendlat` (`make bench-sendlat`; host/cli/cmd_send.c) uses only `ndkpi.h` and `ndkfpga.h`:")
    w("two QPs of one adapter, connected to each other, share one CQ; receives of one 4096-byte SGE are")
    w("posted before the Sends that fill them. *One way* is the wall time from `NdkSend` until the")
    w("peer's receive completion is taken off the CQ (the Send's own completion is taken too and every")
    w("receive's BytesTransferred checked), averaged over %s (nfsim) / %s (nfmodel) messages; the" % (
        g("send_recv_iterations_sim"), g("send_recv_iterations_model")))
    w("clocks are the board's for the last Send (`NdkFpgaQueryStats`: LastWorkRequestCycles, frame")
    w("arrival to CQE posted, exact in the simulation), converted at %s MHz. *Ping-pong*: 8 bytes there," %
      g("system_clock_mhz"))
    w("and the peer answers with 8 bytes once its receive completed; the round trip ends at the")
    w("initiator's receive completion. *Rate*: %s (nfsim) / %s (nfmodel) 8-byte messages with that many" % (
        g("send_recv_rate_count_sim"), g("send_recv_rate_count_model")))
    w("Sends in flight and as many receives pre-posted; each receive completion re-posts its receive and")
    w("each Send completion posts the next Send. nfsim runs ~%s× slower than the board and its UART" %
      g("sim_slowdown_vs_board"))
    w("is simulated, so its wall times are the simulation's; nfmodel (the firmware compiled for this host")
    w("behind a socket) gives the host library's and the protocol's own cost.")
    w("")
    w("| figure | nfsim | nfmodel |")
    w("|---|---:|---:|")
    w("| one way, 8 B: board clocks (µs at %s MHz) | %s (%s µs) | |" % (
        g("system_clock_mhz"), g("send_recv_clocks_8b"), g("send_recv_us_8b")))
    w("| one way, 512 B: board clocks (µs at %s MHz) | %s (%s µs) | |" % (
        g("system_clock_mhz"), g("send_recv_clocks_512b"), g("send_recv_us_512b")))
    for name, k in (("one way, 8 B, µs of wall time", "latency_us_8b"),
                    ("one way, 512 B, µs of wall time", "latency_us_512b"),
                    ("ping-pong round trip, 8 B, µs of wall time", "pingpong_us"),
                    ("messages per second, %s in flight" % g("send_recv_rate_in_flight_model"), "rate_msgs_per_s")):
        w("| %s | %s | %s |" % (name, g("send_recv_%s_sim" % k), g("send_recv_%s_model" % k)))
    w("")
    for line in SENDLAT_MEMORY_TEXT:
        w(line)
    w("")
    w(SENDLAT_BEGIN)
    w(sendlat_table(r) + SENDLAT_END)
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
        "notice": "RX stamp to the firmware's first read of the slot: its wake from SYS.SLEEP",
        "link": "link header: one compare sorts an in-order DATA frame (type and seq), its ack lowers the in-flight count, quick TX room test",
        "parse": "`fw_msg_process`: message walk, length checks, op dispatch",
        "validate": "`fw_wr_process` up to the engine: WR fields read once from the RX slot, the QP's and the fast-register's or invalidate's rules checked once, in the order that decides the status",
        "engine": "the engine's commands: a fast-register's page-list load started, its MPT entry staged under it and MPT_WRITE_LOADED (the engine writes the entry once the list is in); an invalidate's MPT_INVALIDATE",
        "cqe": "the CQE's reservation (the reply cursor's `reserve_zeroed`: space the link zeroed while idle) and the nonzero words of the %d of MSG_HDR + CQE written into the TX slot while the engine works (written ahead as a success; a failure found after rewrites its status)" % (
            (sizes["MSG_HDR"] + sizes["CQE"]) // 4),
        "wait": "the TBL_STATUS reads: what of the engine's work (page-list load, MPT write, invalidate and DMA drain) the CQE did not hide",
        "finish": "MR state, counters, up to the CYCLE_LO read that ends the measure",
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
    ph = phases["fastreg_1"]
    cpi = ph["total"] / float(ph["instructions"])
    core = CORE_TEXT[r["cpu"]]
    w("The firmware executes %d instructions in %d clocks (%.1f clocks per instruction on %s: %s)." %
      (ph["instructions"], ph["total"], cpi, core["name"], core["cpi"]))
    w("The engine's part is small: after the CQE, the firmware waits %d clocks for 1 page and %d for 256" % (
        ph["wait"], phases["fastreg_256"]["wait"]))
    w("(the page-list load writes 1 MTT entry per clock, then the MPT entry); waiting on the")
    w("adapter-memory window costs %d clocks in all (its stores are posted; %d accesses). Nearly everything" % (
        ph["window_wait_cycles"], ph["window_accesses"]))
    w("is instructions.")
    w("")
    baseline(w, r)
    w("### What is left")
    w("")
    w("What is left is almost all instructions on a CPU at %.1f clocks per instruction:" % cpi)
    w("")
    w("1. **Validation, %d clocks**: the NDK rules themselves (QP state, MR kind/state/PD, capacity," % ph["validate"])
    w("   FBO/VA/length arithmetic) on 64-bit values with a 32-bit CPU.")
    w("2. **Link header, %d clocks**: sequence and ack handling, freeing acknowledged TX slots." % ph["link"])
    w("3. **Engine commands, %d clocks**: the page-list load's and the MPT entry's register writes." % ph["engine"])
    w("4. **The CPU**: %s" % core["left"])
    w("5. **Hardware work requests**: parsing a fast-register's fixed fields and writing the MPT entry")
    w("   in hardware (the firmware deciding only the rule outcome) would take the path to a few hundred")
    w("   clocks; it is the next step if the figure must fall further.")
    w("")
    around = ph["notice"] + ph["link"] + ph["parse"] + ph["cqe"]
    own = ph["validate"] + ph["engine"] + ph["wait"] + ph["finish"]
    w("The budget: 300 clocks from arrival to CQE at this core's %.1f clocks per instruction allow about %d" % (
        cpi, 300 / cpi))
    w("instructions; the fast-register runs %d." % ph["instructions"])
    w("Of its %d clocks, %d (%.0f %%) go around the work request: noticing the frame, the link header," % (
        ph["total"], around, 100.0 * around / ph["total"]))
    w("the message walk and the CQE, which hardware could take over (link sequencing and acks, the CQE")
    w("built from a few fields). The work request's own part, the NDK rules and the MPT write, takes")
    w("%d by itself. So the goal needs both: what surrounds the work request in hardware, and fewer" % own)
    w("clocks for the rules the firmware keeps.")
    w("")
    w("Hardware is not the bottleneck: the key check runs at %s per clock, the loader at %s pages per" % (
        g("keycheck_per_clock"), g("mtt_load_pages_per_clock")))
    w("clock, the DMA at %s of its port." % g("dma_port_fraction"))
    w("")
    cores_section(w)
    with open(DOC, "w") as f:
        f.write("\n".join(lines))


# The host-memory comparison's method (no figures: they are in the block that follows it).
SENDLAT_BEGIN, SENDLAT_END = "<!-- sendlat-memory:begin -->", "<!-- sendlat-memory:end -->"
SENDLAT_MEMORY_TEXT = [
    "### Adapter memory and host memory",
    "",
    "`ndkfpga sendlat --host` runs the same measures with both sides' message buffers in ordinary host",
    "memory ([host-memory.md](host-memory.md): `aligned_alloc`, `IoAllocateMdl`,",
    "`MmBuildMdlForNonPagedPool`, registered with `NdkRegisterMr`): the CPU fills each Send's bytes",
    "before `NdkSend` and checks each receive's bytes, and the bytes around them, once its completion",
    "is taken. The library queues the Send's bytes on the link as MEM_WRITE messages ahead of the",
    "request and brings a receive's bytes home in MEM_READ replies before its completion, so the",
    "difference between the columns is what a consumer pays for host memory. *Whole path* is the",
    "board's own count of that time on nfsim: `NdkFpgaQueryStats`' Cycle read just before `NdkSend` and",
    "once the receive completion is taken, less an idle read's round trip measured just before it; it",
    "includes the simulated UART's time and the host's own (at the simulation's speed), and is",
    "converted to µs at the simulated adapter's clock (not the board's). *The Send's clocks* are",
    "LastWorkRequestCycles of the last Send, as above. The table is of one `make bench-sendlat` run",
    "(`build/bench/sendlat.json`; `tools/doc_figures.py` checks it).",
]


def sendlat_table(r):
    """performance.md's adapter-memory vs host-memory table (tools/doc_figures.py checks it)."""
    g = lambda k: fmt(r[k])
    size = {8: "8 B", 512: "512 B", 4096: "4 KiB"}
    t = ["| figure | adapter memory | host memory |", "|---|---:|---:|"]
    for n in SENDLAT_SIZES:
        t.append("| nfsim, one way, %s: the Send's clocks (arrival to CQE) | %s | %s |" % (
            size[n], g("send_recv_clocks_%db" % n), g("send_recv_host_clocks_%db" % n)))
    for n in SENDLAT_SIZES:
        t.append("| nfsim, one way, %s: whole path, clocks (simulated µs at %s MHz) | %s (%s) | %s (%s) |" % (
            size[n], fmt(r["send_recv_clock_hz"] / 1e6), g("send_recv_path_clocks_%db" % n),
            g("send_recv_path_us_%db" % n), g("send_recv_host_path_clocks_%db" % n),
            g("send_recv_host_path_us_%db" % n)))
    for dev, name in (("sim", "nfsim"), ("model", "nfmodel")):
        for n in SENDLAT_SIZES:
            t.append("| %s, one way, %s: µs of wall time | %s | %s |" % (
                name, size[n], g("send_recv_latency_us_%db_%s" % (n, dev)),
                g("send_recv_host_latency_us_%db_%s" % (n, dev))))
        t.append("| %s, ping-pong round trip, 8 B: µs of wall time | %s | %s |" % (
            name, g("send_recv_pingpong_us_%s" % dev), g("send_recv_host_pingpong_us_%s" % dev)))
        t.append("| %s, messages per second, %s in flight | %s | %s |" % (
            name, g("send_recv_rate_in_flight_%s" % dev), g("send_recv_rate_msgs_per_s_%s" % dev),
            g("send_recv_host_rate_msgs_per_s_%s" % dev)))
    t += ["", "(one `make bench-sendlat` at commit `%s`%s: %s (nfsim) / %s (nfmodel) messages per one-way and "
          "ping-pong figure, %s / %s for the rate)" % (
              r["commit"][:12], " with uncommitted changes" if r["source_changes"] else "",
              g("send_recv_iterations_sim"), g("send_recv_iterations_model"), g("send_recv_rate_count_sim"),
              g("send_recv_rate_count_model"))]
    return "\n".join(t) + "\n"


# What the phase profile's text says of each core nf_soc can be built with.
CORE_TEXT = {
    "picorv32": {
        "name": "PicoRV32",
        "cpi": "a multi-cycle CPU, not a pipeline",
        "left": "PicoRV32 needs several clocks per instruction even with the firmware RAM answering in\n"
                "   the request's cycle (its look-ahead bus) and stores posted; a pipelined core with caches\n"
                "   runs the same image in fewer clocks ([CPU choices](#cpu-choices) below).",
    },
    "vexriscv": {
        "name": "VexRiscv",
        "cpi": "a 5-stage pipeline with 4 KiB instruction and data caches; what it takes beyond one "
               "clock per instruction are cache refills from the firmware RAM, the uncached adapter-memory "
               "window and device registers, and taken branches",
        "left": "VexRiscv runs most instructions in one clock; the rest of its clocks are uncached loads\n"
                "   (an RX slot's head answered in the clock the core issues the load, from a copy of the RX\n"
                "   slots' first 128 bytes in LUT RAM, nf_adapter_mem; a device register through the data\n"
                "   bus's register stage and the block's registered answer; the core's own clocks for either),\n"
                "   back-to-back stores to the TX slot and the registers, loads used by the next\n"
                "   instruction, and taken branches ([CPU choices](#cpu-choices) below).",
    },
}


def cores_section(w):
    """The CPU choices side by side: build/bench/cores.json (make bench-cores, bench/cores.py)."""
    path = os.path.join(ROOT, "build", "bench", "cores.json")
    if not os.path.exists(path):
        return
    with open(path) as f:
        c = json.load(f)
    with open(os.path.join(ROOT, "rtl", "soc", "nf_soc.v")) as f:
        default = re.search(r'parameter\s+CPU\s*=\s*"(\w+)"', f.read()).group(1)
    boards = ["ulx3s-85k", "ulx3s-25k"]
    w("## CPU choices")
    w("")
    w("`make bench-cores` (bench/cores.py; `CORES_PNR=1` places and routes too) runs the same firmware")
    w("image on each core nf_soc can be built with (its `CPU` parameter; default `%s`): the clocks from" % default)
    w("a frame's arrival to the CQE on the Verilator board (bench_sim) and that model's speed there (the")
    w("same bench's `sim_cycles_per_second`; a run on this shared machine, so a rough figure), and, placed on the ULX3S parts")
    w("with the PLL set to a %g MHz system clock, the achieved Fmax, the 1-page fast-register's time at" % c["target_mhz"])
    w("that Fmax (its clocks divided by it) and the cells used. Each core is placed once, with nextpnr")
    w("seed 1 and no block RAM floorplan, so the cores compare on equal terms; the boards' own builds")
    w("(their floorplan and seeds, the clock they meet) are in [boards.md](boards.md).")
    w("")
    head = "| core | fast-register 1 page, clocks | invalidate, clocks | simulation, M cycles/s |"
    sep = "|---|---:|---:|---:|"
    for b in boards:
        head += " %s Fmax, MHz | µs | LUT4 / FF / EBR |" % b
        sep += "---:|---:|---:|"
    w(head)
    w(sep)
    for name, k in sorted(c["cores"].items()):
        sim = k.get("sim_cycles_per_second")
        row = "| %s (`%s`)%s | %s | %s | %s |" % (name, k["rtl"], " (default)" if name == default else "",
                                                 fmt(k["fastreg_clocks_1page"]), fmt(k["invalidate_clocks"]),
                                                 "%.2f" % (sim / 1e6) if sim else "—")
        for b in boards:
            f = k.get(b)
            if f and "error" in f:
                row += " does not fit%s | — | — |" % (" *" if f.get("inputs_changed") else "")
            else:
                row += (" %s%s | %.1f | %s / %s / %s |" % (
                    fmt(f["fmax_mhz"]), " *" if f.get("inputs_changed") else "",
                    k["fastreg_clocks_1page"] / f["fmax_mhz"], fmt(f["lut4"]), fmt(f["ff"]), fmt(f["ebr"]))
                        if f else " — | — | — |")
        w(row)
    w("")
    if any(f.get("inputs_changed") for k in c["cores"].values() for f in (k.get(b) for b in boards) if f):
        w("\\* placed from earlier sources than today's (`make bench-cores CORES_PNR=1` places them again).")
        w("")
    profiled = [(name, k["fwprof"]) for name, k in sorted(c["cores"].items()) if k.get("fwprof", {}).get("fastreg_1")]
    if profiled:
        w("The same image's 1-page fast-register by phase on each core (bench-fwprof's model of that core;")
        w("a core with caches is profiled warm, after one fast-register and invalidate):")
        w("")
        w("| clocks | " + " | ".join(name for name, _ in profiled) + " |")
        w("|---|" + "---:|" * len(profiled))
        for ph in PHASES + ["total", "instructions", "window_wait_cycles"]:
            w("| %s | %s |" % (ph.replace("_", " "), " | ".join(fmt_or_dash(p["fastreg_1"].get(ph)) for _, p in profiled)))
        w("| invalidate, total | %s |" % " | ".join(fmt_or_dash(p.get("invalidate", {}).get("total")) for _, p in profiled))
        w("")
        w("On a core with caches the table above is the warm case. bench_sim reads INFO between its timed")
        w("requests; the code answering it lies in the work-request path's section (FW_HOT), which must fit")
        w("VexRiscv's direct-mapped instruction cache whole (firmware/link.ld), so the poll evicts none of")
        w("the path's lines; a Send's code lies outside it, and a request after a Send can exceed this figure.")
        w("")
    for name, k in sorted(c["cores"].items()):
        for b in boards:
            f = k.get(b)
            if f and "error" in f:
                w("- %s on %s: nextpnr: `%s`." % (name, b, f["error"]))
            elif f and f.get("critical_from"):
                swap = {True: "; ecpbram swaps the firmware into it (tools/fw_swap_check.py)",
                        False: "; the firmware swap FAILS"}.get(f.get("fw_swap"), "")
                w("- %s on %s: critical path `%s` → `%s`%s." % (name, b, f["critical_from"], f["critical_to"], swap))
    w("")


def baseline(w, r):
    """Before/after table against bench/baseline.json (make bench-baseline), when committed."""
    if not os.path.exists(BASELINE):
        return
    with open(BASELINE) as f:
        base = json.load(f)
    b = base["measured"]
    w("### Against the baseline")
    w("")
    w("`bench/baseline.json` (`make bench-baseline`) holds the figures measured at commit `%s`:" % base["commit"][:12])
    w("")
    w("| clocks (fast-register of 1 page unless named) | baseline | now | change |")
    w("|---|---:|---:|---:|")
    keys = [("phase " + k, "fwprof_fastreg_1_%s_clocks" % k) for k in PHASES + ["total"]]
    keys += [("instructions", "fwprof_fastreg_1_instructions"),
             ("bench-sim 1 page", "fastreg_clocks_1page"), ("bench-sim 16 pages", "fastreg_clocks_16pages"),
             ("bench-sim 256 pages", "fastreg_clocks_256pages"), ("bench-sim invalidate", "invalidate_clocks"),
             ("host instructions per NdkFastRegister", "host_instructions_per_post")]
    for name, k in keys:
        if k in b and k in r:
            change = "%+.1f %%" % (100.0 * (r[k] - b[k]) / b[k]) if b[k] else ""
            w("| %s | %s | %s | %s |" % (name, fmt(b[k]), fmt(r[k]), change))
    w("")


def check(r, base):
    """The failures of results r against bench/baseline.json: a budget broken, or a
    figure worse than its baseline by more than REGRESSION_LIMIT."""
    bad = []
    for k, lim in sorted(base["budgets"].items()):
        if k not in r:
            continue
        if "max" in lim and r[k] > lim["max"]:
            bad.append("%s = %s breaks its budget <= %s" % (k, fmt(r[k]), fmt(lim["max"])))
        if "min" in lim and r[k] < lim["min"]:
            bad.append("%s = %s breaks its budget >= %s" % (k, fmt(r[k]), fmt(lim["min"])))
    for k, v in sorted(base["measured"].items()):
        if k not in r or k in MACHINE_DEPENDENT or not v:
            continue
        worse = (v - r[k]) / v if k in HIGHER_IS_BETTER else (r[k] - v) / v
        if worse > REGRESSION_LIMIT:
            bad.append("%s = %s is %.1f %% worse than the baseline's %s" % (k, fmt(r[k]), 100.0 * worse, fmt(v)))
    return bad


def print_check(r):
    """Print the check against the baseline; exit 1 when it fails."""
    with open(BASELINE) as f:
        base = json.load(f)
    bad = check(r, base)
    for line in bad:
        print("not ok - bench: " + line)
    if bad:
        die("%d figure(s) fail the budgets or regress against %s" % (len(bad), BASELINE))
    print("ok - bench: every figure within its budget and within %d %% of %s"
          % (round(100 * REGRESSION_LIMIT), BASELINE))


def main():
    ap = argparse.ArgumentParser()
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--doc", action="store_true",
                      help="write docs/performance.md and docs/img/*.png from results.json (no re-gathering)")
    mode.add_argument("--fresh", action="store_true", help="exit 0 when results.json is of today's sources")
    mode.add_argument("--baseline", action="store_true",
                      help="record results.json's figures as bench/baseline.json's measured values (budgets kept)")
    mode.add_argument("--sendlat", action="store_true", help="write build/bench/sendlat.json from bench-sendlat's outputs")
    mode.add_argument("--check-budgets", action="store_true",
                      help="check bench-fwprof's and bench-host's figures against bench/baseline.json (test-budgets)")
    a = ap.parse_args()
    if a.check_budgets:
        sys.exit(1 if check_budgets() else 0)
    if a.sendlat:
        r = sendlat()
        missing = [k for k in SENDLAT_REQUIRED if k not in r]
        if missing:
            die("no figure for: " + ", ".join(missing))
        r.update(source_state())
        with open(SENDLAT, "w") as f:
            json.dump(r, f, indent=1, sort_keys=True)
            f.write("\n")
        print("sendlat: %s" % SENDLAT)
        return
    if a.doc or a.fresh or a.baseline:
        r = load_results()
        why = stale_reason(r)
        if why:
            if a.fresh:
                print("bench report: %s is stale: %s" % (RESULTS, why))
                sys.exit(1)
            die("%s is stale (%s): run `make bench`" % (RESULTS, why))
        if a.baseline:
            if r["source_changes"]:
                die("results.json was measured with uncommitted changes: commit, then make bench, then this")
            with open(BASELINE) as f:
                base = json.load(f)
            base["commit"] = r["commit"]
            base["measured"] = {k: r[k] for k in base["measured"] if k in r}
            with open(BASELINE, "w") as f:
                json.dump(base, f, indent=1, sort_keys=True)
                f.write("\n")
            print("wrote %s (measured at %s)" % (BASELINE, r["commit"]))
        elif a.doc:
            with open(DETAIL) as f:
                d = json.load(f)
            plots(r, d["series"])
            doc(r, d["series"], d["phases"], d["funcs"])
            print("wrote %s and %s/*.png" % (DOC, IMG))
        return
    r, series, phases, funcs = gather()
    with open(RESULTS, "w") as f:
        json.dump(r, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(DETAIL, "w") as f:
        json.dump({"series": series, "phases": phases, "funcs": funcs}, f, indent=1, sort_keys=True)
        f.write("\n")
    print_table(r)
    print("results: %s" % RESULTS)
    print_check(r)


if __name__ == "__main__":
    main()
