#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tests of the one layout description: the generated headers compile and lint, the
# drift check catches a spec edited without regenerating, bad specs are refused,
# formulas compute, and the NDKPI cross-check, make fragment and Python module hold; the
# boards match their pins and PLLs.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ok() { if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fail=1; fi; }
fail=0
HOST_C="cc -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE"

python3 tools/genlayout.py --check >/dev/null 2>&1; ok $? "generated files match the contract (proto/)"

printf '#include "nf_layout.h"\nint main(void){ struct nf_cqe c = {0}; return (int)c.status + (int)NF_CQE_SIZE - 32; }\n' > "$tmp/c.c"
$HOST_C -Iproto/gen "$tmp/c.c" -o "$tmp/c" 2>"$tmp/err" && "$tmp/c"
ok $? "nf_layout.h compiles with -Wall -Wextra -Werror on the host (and CQE is 32 bytes)"

riscv64-unknown-elf-gcc --specs=/usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs -march=rv32i -mabi=ilp32 \
    -std=c11 -Wall -Wextra -Werror -Iproto/gen -c "$tmp/c.c" -o "$tmp/c.o" 2>"$tmp/err"
ok $? "nf_layout.h compiles for rv32i/ilp32 (struct offsets asserted identical)"

verilator --lint-only -Wall -Iproto/gen tools/layout_lint_top.v >"$tmp/err" 2>&1
ok $? "nf_layout.vh passes verilator --lint-only -Wall (the derived macro included)"

# Formulas: the generated numbers are what the formulas say, and the derived macro agrees.
cat > "$tmp/f.c" <<'C'
#include "nf_layout.h"
_Static_assert(NF_KNOWN_FLAGS_FAST_REGISTER == (NF_NDK_OP_FLAG_SILENT_SUCCESS | NF_NDK_OP_FLAG_READ_FENCE |
               NF_NDK_OP_FLAG_ALLOW_REMOTE_READ | NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NF_NDK_OP_FLAG_RDMA_READ_SINK |
               NF_NDK_OP_FLAG_DEFER), "known fast-register flags");
_Static_assert(NF_KNOWN_FLAGS_MR_REGISTER == 0xFu, "known MR flags");
_Static_assert(NF_PROFILE_SIM_USER_BASE == (NF_PROFILE_SIM_RX_SLOTS + NF_PROFILE_SIM_TX_SLOTS) * NF_LINK_SLOT_BYTES, "sim");
_Static_assert(NF_PROFILE_ULX3S_25K_USER_BASE ==
               NF_PROFILE_USER_BASE(NF_PROFILE_ULX3S_25K_RX_SLOTS, NF_PROFILE_ULX3S_25K_TX_SLOTS), "macro");
_Static_assert(NF_FRAME_PAGES_FAST_REGISTER ==
               (NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE - NF_WR_HDR_SIZE - NF_WR_FAST_REGISTER_SIZE) / 8u, "pages");
_Static_assert(NF_LINK_MAX_PAYLOAD == 4080u, "payload");
int main(void) { return 0; }
C
$HOST_C -Iproto/gen "$tmp/f.c" -o "$tmp/f" 2>"$tmp/err"
ok $? "formula results: KNOWN_FLAGS, USER_BASE (value and macro), FRAME_PAGES, MAX_PAYLOAD"

# NDKPI: every shared value equals ndkpi.h's (the generated asserts compile) ...
printf '#include "nf_ndkpi_check.h"\nint main(void){ return 0; }\n' > "$tmp/n.c"
$HOST_C -Iproto/gen -Ihost/include -Ihost/src/ndk "$tmp/n.c" -o "$tmp/n" 2>"$tmp/err"
ok $? "nf_ndkpi_check.h: the contract's statuses, flags and operation types equal ndkpi.h's"
n_asserts=$(grep -c '^_Static_assert' host/src/ndk/nf_ndkpi_check.h)
[ "$n_asserts" -ge 45 ] && grep -q 'NdkOperationTypeFastRegister == NF_NDK_OP_FAST_REGISTER' host/src/ndk/nf_ndkpi_check.h &&
    grep -q 'STATUS_CANCELLED == NF_STATUS_CANCELLED' host/src/ndk/nf_ndkpi_check.h &&
    grep -q 'NDK_MR_FLAG_RDMA_READ_SINK == NF_NDK_MR_FLAG_RDMA_READ_SINK' host/src/ndk/nf_ndkpi_check.h
ok $? "the NDKPI check names every status, op flag, MR flag and operation type ($n_asserts asserts)"

# Make fragment and Python module carry the same numbers as the C header.
mk=$(make -s --no-print-directory -f proto/gen/nf_layout.mk --eval 'p: ; @echo $(NF_PROFILE_SIM_USER_BASE) $(NF_PROFILES) $(NF_LINK_MAX_PAYLOAD)' p)
[ "$mk" = "65536 SIM ULX3S_85K ULX3S_25K 4080" ]; ok $? "nf_layout.mk: USER_BASE, the profile list, a formula constant ($mk)"
py=$(python3 proto/gen/nf_layout.py PROFILE_ULX3S_85K_USER_BASE OP_WR_FAST_REGISTER PROFILES | tr '\n' ' ')
[ "$py" = "32768 64 SIM ULX3S_85K ULX3S_25K " ]; ok $? "nf_layout.py prints values by name ($py)"
python3 proto/gen/nf_layout.py NO_SUCH_NAME >/dev/null 2>&1; [ $? = 2 ]; ok $? "nf_layout.py refuses an unknown name"
python3 - <<'PY'
import struct, sys
sys.path.insert(0, "proto/gen")
import nf_layout as NF
structs = [n[:-4] for n in dir(NF) if n.endswith("_FMT")]
bad = [s for s in structs if struct.calcsize(getattr(NF, s + "_FMT")) != getattr(NF, s + "_SIZE")
       or len(struct.unpack(getattr(NF, s + "_FMT"), bytes(getattr(NF, s + "_SIZE")))) < len(getattr(NF, s + "_FIELDS"))]
sys.exit(1 if bad or len(structs) < 20 or NF.INFO_FIELDS.index("user_base") * 4 != NF.INFO_USER_BASE_OFF else 0)
PY
ok $? "nf_layout.py: every struct format has the struct's size and offsets"

# Boards: make and Python carry them; each names pins, a top and an oscillator that exist.
mk=$(make -s --no-print-directory -f proto/gen/nf_layout.mk --eval 'p: ; @echo $(NF_BOARDS_TESTED) $(call NF_BOARD,ECP5_EVN_85K,clk_hz) $(call NF_BOARD,ULX3S_25K,profile)' p)
[ "$mk" = "ulx3s-85k ulx3s-25k ecp5-evn-85k 48000000 ULX3S_25K" ]
ok $? "nf_layout.mk: the tested boards, a board's clock and profile ($mk)"
py=$(python3 proto/gen/nf_layout.py BOARD_ULX3S_85K_TOP BOARD_ULX3S_85K_CLK_HZ BOARDS | tr '\n' ' ')
[ "$py" = "nf_board_ulx3s 75000000 ulx3s-85k ulx3s-25k ulx3s-45k ecp5-evn-85k " ]; ok $? "nf_layout.py: a board's top and clock, the boards ($py)"
python3 - <<'PY'
# The .lpf's oscillator FREQUENCY is osc_hz, the top exists, and the system clock its PLL
# makes of the oscillator (OSC_HZ / PLL_CLKI_DIV * PLL_CLKFB_DIV, given to nf_board_core) is clk_hz.
import re, sys
sys.path.insert(0, "tools")
import contract
bad = []
for b in contract.load()["board"]:
    lpf = open(b["lpf"]).read()
    mhz = re.findall(r"^FREQUENCY PORT \S+ ([0-9.]+) MHZ;", lpf, re.M)
    if [float(m) * 1e6 for m in mhz] != [b["osc_hz"]]:
        bad.append("%s: %s FREQUENCY %s, osc_hz %d" % (b["name"], b["lpf"], mhz, b["osc_hz"]))
    top = open("rtl/board/%s.v" % b["top"]).read()
    # The top hands its oscillator and PLL settings to the shared board core: .NAME(value),
    # or .NAME(NAME) with the top's parameter default, which the board's top_params override.
    names = r"(OSC_HZ|PLL_CLKI_DIV|PLL_CLKFB_DIV|PLL_CLKOP_DIV)"
    lp = dict(re.findall(r"parameter\s+integer\s+%s\s*=\s*(\d+)" % names, top))
    lp.update(re.findall(r"\.%s\((\d+)\)" % names, top))
    lp.update(kv.split("=", 1) for kv in b["top_params"].split() if re.fullmatch(names, kv.split("=", 1)[0]))
    if not re.search(r"^module %s\b" % b["top"], top, re.M) or int(lp.get("OSC_HZ", 0)) != b["osc_hz"] or \
            int(lp.get("OSC_HZ", 0)) // int(lp.get("PLL_CLKI_DIV", 1)) * int(lp.get("PLL_CLKFB_DIV", 0)) != b["clk_hz"]:
        bad.append("%s: %s's OSC_HZ and PLL dividers do not make osc_hz %d -> clk_hz %d" % (
            b["name"], b["top"], b["osc_hz"], b["clk_hz"]))
    vco = b["clk_hz"] * int(lp.get("PLL_CLKOP_DIV", 0))
    if not 400e6 <= vco <= 800e6 or b["osc_hz"] / int(lp.get("PLL_CLKI_DIV", 1)) < 3.125e6:
        bad.append("%s: VCO %g MHz (400..800) or phase detector below 3.125 MHz" % (b["name"], vco / 1e6))
for m in bad:
    print("# " + m)
sys.exit(1 if bad else 0)
PY
ok $? "every board's .lpf oscillator is its osc_hz, and its top's PLL makes its clk_hz (VCO 400..800 MHz)"
python3 - <<'PY'
# Each board profile's firmware RAM in slices of one 16 Kbit block RAM each: a DP16KD
# data width (1, 2, 4 bits) that divides the CPU's 32-bit word, the widest whose
# words x width fit 16 Kbit (a RAM of 28 KiB: 2-bit slices of 7,168 words).
import sys
sys.path.insert(0, "tools")
sys.path.insert(0, "proto/gen")
import contract
import nf_layout as NF
bad = []
for b in contract.load()["board"]:
    p = b["profile"]
    bits = getattr(NF, "PROFILE_%s_FW_SLICE_BITS" % p)
    words = getattr(NF, "PROFILE_%s_FW_RAM_BYTES" % p) // 4
    if bits not in (1, 2, 4) or words * bits > 16384 or words * bits * 2 <= 16384:
        bad.append("%s: profile %s FW_SLICE_BITS %d for %d words" % (b["name"], p, bits, words))
for m in bad:
    print("# " + m)
sys.exit(1 if bad else 0)
PY
ok $? "every board profile's firmware RAM slices fit one 16 Kbit block RAM each, as wide as fits (FW_SLICE_BITS 1, 2 or 4)"
grep -q "^| ecp5-evn-85k | ECP5-EVN: .* | 12 MHz | 48 MHz | 12 MBd | 4.00 | yes | [0-9 ]* |$" docs/layout.md
ok $? "docs/layout.md: the board table (oscillator, clock, UART rate, clocks per bit, seeds)"
bash tools/bitstream.sh --inputs ulx3s 12k >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "unknown board/device 'ulx3s' '12k' (proto/boards.toml boards: ulx3s-85k" "$tmp/err"
ok $? "tools/bitstream.sh refuses a board that proto/boards.toml does not describe, listing those it does"

# Drift: copy the tree's contract and outputs, edit the contract, --check must fail.
# spec_sed ROOT EDIT: a sed edit of every contract file under ROOT/proto (each edit matches one line).
spec_sed() { find "$1/proto" -name '*.toml' -exec sed -i "$2" {} +; }
mkdir -p "$tmp/root/proto"
cp -r proto/*.toml proto/regs "$tmp/root/proto/"
for f in $(python3 tools/genlayout.py --outputs); do mkdir -p "$tmp/root/$(dirname "$f")"; cp "$f" "$tmp/root/$f"; done
python3 tools/genlayout.py --check --root "$tmp/root" >/dev/null 2>&1; ok $? "copied tree is current"
spec_sed "$tmp/root" 's/^PAGE_SHIFT       = { value = 12/PAGE_SHIFT       = { value = 13/'
python3 tools/genlayout.py --check --root "$tmp/root" >/dev/null 2>&1
[ $? = 1 ]; ok $? "check-generated fails after the spec changes without regenerating"
python3 tools/genlayout.py --root "$tmp/root" >/dev/null 2>&1 && python3 tools/genlayout.py --check --root "$tmp/root" >/dev/null 2>&1
ok $? "regenerating makes the check pass again"
grep -q "NF_ADAPTER_PAGE_SHIFT 13u" "$tmp/root/proto/gen/nf_layout.h"; ok $? "the regenerated C header carries the new value"

# A changed input flows through every formula that uses it.
spec_sed "$tmp/root" 's/^SLOT_BYTES    = { value = 4096,/SLOT_BYTES    = { value = 2048,/'
python3 tools/genlayout.py --root "$tmp/root" >/dev/null 2>&1
grep -q "NF_LINK_MAX_PAYLOAD 2032u" "$tmp/root/proto/gen/nf_layout.h" &&
    grep -q "NF_PROFILE_SIM_USER_BASE 32768u" "$tmp/root/proto/gen/nf_layout.h" &&
    grep -q "^NF_PROFILE_ULX3S_25K_USER_BASE := 8192$" "$tmp/root/proto/gen/nf_layout.mk" &&
    grep -q "^FRAME_PAGES_MR_REGISTER = 248$" "$tmp/root/proto/gen/nf_layout.py"
ok $? "SLOT_BYTES 2048: MAX_PAYLOAD, USER_BASE and FRAME_PAGES follow in C, make and Python"

# Arrays: a field counted by an index enum is an array of one element per value, with a
# _COUNT; the enum gets a LIST macro; an index enum that is not 0, 1, 2, ... is refused.
n_ops=$(python3 -c 'import sys; sys.path.insert(0, "tools"); import contract; print(len([e for e in contract.load()["enum"] if e["name"] == "STAT_OP"][0]["values"]))')
grep -q "uint32_t ops\[$n_ops\];" proto/gen/nf_layout.h &&
    grep -q "#define NF_STATS_OPS_COUNT ${n_ops}u" proto/gen/nf_layout.h &&
    grep -q "#define NF_STAT_OP_COUNT ${n_ops}u" proto/gen/nf_layout.h &&
    grep -q "#define NF_STAT_OP_LIST(X) X(PING, 0u)" proto/gen/nf_layout.h &&
    grep -q "#define NF_PROFILE_LIST(X) X(SIM, 0u)" proto/gen/nf_layout.h
ok $? "an array field sized by an index enum, its _COUNT, the enum's and the profiles' LIST macros"

# refused SPEC-EDIT MESSAGE WHAT: the tree's contract with a sed edit (or a file of the
# given text added) is refused with exit 2 and MESSAGE.
refused() {
    rm -rf "$tmp/bad" && mkdir -p "$tmp/bad/proto" && cp -r proto/*.toml proto/regs "$tmp/bad/proto/"
    case "$1" in s/*) spec_sed "$tmp/bad" "$1";; *) printf '%s\n' "$1" > "$tmp/bad/proto/extra.toml";; esac
    python3 tools/genlayout.py --check --root "$tmp/root" --proto "$tmp/bad/proto" >"$tmp/err" 2>&1
    [ $? = 2 ] && grep -q "$2" "$tmp/err"; ok $? "$3"
}
refused 's/{ name = "INFO",             value = 1, /{ name = "INFO",             value = 5, /' \
    "is an index: its values must be 0, 1, 2" "an index enum with a gap is refused"
refused 's/NDK_OP_FLAG.SILENT_SUCCESS | NDK_OP_FLAG.READ_FENCE | NDK_OP_FLAG.DEFER", doc = "NdkInvalidate"/NDK_OP_FLAG.SILENT | NDK_OP_FLAG.DEFER", doc = "NdkInvalidate"/' \
    "KNOWN_FLAGS.INVALIDATE: unknown name 'NDK_OP_FLAG.SILENT'" "a formula naming an unknown constant is refused, naming both"
refused 's/^CRC_BYTES     = { value = 4,/CRC_BYTES     = { value = "MAX_PAYLOAD - 4076",/' \
    "formula cycle: LINK.CRC_BYTES -> LINK.MAX_PAYLOAD -> LINK.CRC_BYTES" "a formula cycle is refused with its chain"
refused 's/^CRC_BYTES     = { value = 4,/CRC_BYTES     = { value = "__import__(\x27os\x27).getpid()",/' \
    "is not allowed in a formula" "a formula with a call in it is refused"
refused 's/^CRC_BYTES     = { value = 4,/CRC_BYTES     = { value = "SLOT_BYTES \/ (ESC - 0x7D)",/' \
    "LINK.CRC_BYTES: division by zero" "a formula dividing by zero is refused"
refused 's/^CRC_BYTES     = { value = 4,/CRC_BYTES     = { value = "ESC - FLAG",/' \
    "not an integer in 0 .. 2^64-1" "a negative formula result is refused"
refused 's/skip = \["STATUS.DEVICE_NOT_CONNECTED"\]/skip = ["STATUS.NO_SUCH_STATUS"]/' \
    "ndkpi.skip names no shared value" "an [ndkpi] skip of a name that is not shared is refused"
# A misaligned struct field is refused (no packed structs across the boundary).
refused '[[struct]]
name = "BAD"
doc = "misaligned"
fields = [ { name = "a", type = "u8", doc = "" }, { name = "b", type = "u32", doc = "" } ]' \
    "not 4-byte aligned" "generator refuses a misaligned field with a clear message"
refused 's/^base = 0x80001000$/base = 0x80004000/' \
    "MAP.LINK is 0x80001000, block LINK's base is 0x80004000" "a register block whose base is not its place in the memory map is refused"
refused '[[bus]]
name = "EMPTY_FIELD"
doc = "a field of no bits"
fields = [ { name = "A", width = 8, doc = "" }, { name = "B", width = 0, doc = "" } ]' \
    "bus EMPTY_FIELD.B has no bits" "a bus field of no bits is refused"
refused '[const.LINK]
ESC = { value = 0x7D, doc = "defined again" }' \
    "LINK.ESC is already defined in another contract file" "a value defined in two contract files is refused"

# Buses pack their fields from bit 0 in list order, without gaps, up to _BITS - 1.
python3 - <<'PY'
import re, sys
sys.path.insert(0, "tools")
import contract
vh = open("proto/gen/nf_layout.vh").read()
for bus in contract.load().get("bus", []):
    at = 0
    for f in bus["fields"]:
        m = re.search(r"`define NF_%s_%s (\d+):(\d+)" % (bus["name"], f["name"]), vh)
        if not m or (int(m[1]), int(m[2])) != (at + f["width"] - 1, at):
            sys.exit(f"{bus['name']}.{f['name']}: {m and m[0]}")
        at += f["width"]
    if f"`define NF_{bus['name']}_BITS {at}\n" not in vh:
        sys.exit(f"{bus['name']}_BITS is not {at}")
PY
ok $? "every [[bus]] packs its fields from bit 0 in order, no gaps, _BITS = the sum of the widths"

board_edit() { printf 's/^%s$/%s/' "$1" "$2"; }
refused "$(board_edit 'profile = "ULX3S_25K"' 'profile = "ULX3S_12K"')" \
    "board ulx3s-25k: no profile 'ULX3S_12K'" "a board naming an unknown profile is refused"
refused "$(board_edit 'clk_hz = 48000000' 'clk_hz = "48 MHz"')" \
    "board ecp5-evn-85k: clk_hz must be an integer" "a board field of the wrong type is refused"
refused "$(board_edit 'name = "ulx3s-45k"' 'name = "ulx3s-25k"')" \
    "board ulx3s-25k is defined twice" "two boards of one name are refused"
refused "$(board_edit 'name = "ulx3s-45k"' 'name = "ULX3S_45K"')" \
    "the name must be BOARD-DEVICE" "a board name that is not BOARD-DEVICE is refused"
refused "$(board_edit 'seeds = "4 1 2 3 5 6"' 'seeds = "4 1 4"')" \
    "board ulx3s-25k: seeds must be distinct positive numbers" "a board's seeds that repeat one are refused"

# Registers: one edit of the contract adds a register with its storage, reset value and
# read-back (tools/genregs.py); a stored register without a reset value is refused, and a
# generated module the contract no longer makes is named by the check.
python3 tools/genregs.py --check >/dev/null 2>&1; ok $? "the register modules match the contract (genregs --check)"
regs_root() { rm -rf "$tmp/regs" && mkdir -p "$tmp/regs/proto" "$tmp/regs/rtl/engine" "$tmp/regs/rtl/link" "$tmp/regs/rtl/soc" &&
    cp -r proto/*.toml proto/regs "$tmp/regs/proto/"; }
regs_root
sed -i 's/^  { name = "CHK_ADDR", .*$/&\n  { name = "SPARE", off = 0x104, acc = "rw", reset = 0x5A, doc = "a register added by one edit" },/' \
    "$tmp/regs/proto/regs/engine.toml"
python3 tools/genregs.py --root "$tmp/regs" >/dev/null 2>&1 &&
    grep -q "q_spare <= 32'h0000005A;" "$tmp/regs/rtl/engine/nf_engine_csr.v" &&
    grep -q "if (wr_spare) q_spare <= merge(q_spare, wdata, wstrb);" "$tmp/regs/rtl/engine/nf_engine_csr.v" &&
    grep -q "12'h104" "$tmp/regs/rtl/engine/nf_engine_csr.v" && grep -q "q_spare" "$tmp/regs/rtl/engine/nf_engine_csr.v"
ok $? "a register added in the contract alone gets its storage, reset value, write and read-back"
verilator --lint-only -Wall -Wno-UNUSEDSIGNAL -Iproto/gen "$tmp/regs/rtl/engine/nf_engine_csr.v" rtl/engine/nf_regs_decode.v \
    --top-module nf_engine_csr >"$tmp/err" 2>&1
ok $? "the generated storage with the added register lints clean"
regs_root
sed -i 's/^\(  { name = "LD_COUNT",.*\)reset = 0, /\1/' "$tmp/regs/proto/regs/engine.toml"
python3 tools/genregs.py --root "$tmp/regs" >"$tmp/err" 2>&1
[ $? = 2 ] && grep -q "ENGINE.LD_COUNT: a stored register needs its reset value" "$tmp/err"
ok $? "a stored register without a reset value is refused, named"
regs_root
python3 tools/genregs.py --root "$tmp/regs" >/dev/null 2>&1 && touch "$tmp/regs/rtl/engine/nf_engine_regs_decode.v"
python3 tools/genregs.py --check --root "$tmp/regs" >"$tmp/err" 2>&1
[ $? = 1 ] && grep -q "not made by the contract any more (remove them): rtl/engine/nf_engine_regs_decode.v" "$tmp/err"
ok $? "a generated register module the contract no longer makes fails the check, named"

# A value that differs from ndkpi.h fails the build of the generated check, naming it.
cp -r proto/*.toml proto/regs "$tmp/root/proto/"
spec_sed "$tmp/root" 's/^INLINE                = { value = 0x040,/INLINE                = { value = 0x080,/'
python3 tools/genlayout.py --root "$tmp/root" >/dev/null 2>&1
$HOST_C -I"$tmp/root/proto/gen" -Ihost/include -I"$tmp/root/host/src/ndk" "$tmp/n.c" -o "$tmp/n2" >"$tmp/err" 2>&1
[ $? != 0 ] && grep -q "NF_NDK_OP_FLAG_INLINE differs from ndkpi.h NDK_OP_FLAG_INLINE" "$tmp/err"
ok $? "an op flag that differs from ndkpi.h fails the NDKPI check's build, naming the flag"
exit $fail
