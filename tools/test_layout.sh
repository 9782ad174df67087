#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tests of the one layout description: the generated headers compile and lint, the
# drift check catches a spec edited without regenerating, bad specs are refused,
# formulas compute, register fields, values and arrays generate and are checked, and the
# NDKPI cross-check, make fragment and Python module hold; the boards match their pins and PLLs.
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
_Static_assert(NF_PROFILE_SIM_USER_BASE == (NF_PROFILE_SIM_RX_SLOTS + NF_PROFILE_SIM_TX_SLOTS) * NF_LINK_SLOT_BYTES +
               (NF_PROFILE_SIM_NET_RX_SLOTS + NF_PROFILE_SIM_NET_TX_SLOTS) * NF_NET_SLOT_BYTES, "sim");
_Static_assert(NF_PROFILE_SIM_NET_BASE == (NF_PROFILE_SIM_RX_SLOTS + NF_PROFILE_SIM_TX_SLOTS) * NF_LINK_SLOT_BYTES, "net");
_Static_assert(NF_PROFILE_ULX3S_25K_USER_BASE ==
               NF_PROFILE_USER_BASE(NF_PROFILE_ULX3S_25K_RX_SLOTS, NF_PROFILE_ULX3S_25K_TX_SLOTS,
                                    NF_PROFILE_ULX3S_25K_NET_RX_SLOTS, NF_PROFILE_ULX3S_25K_NET_TX_SLOTS), "macro");
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
[ "$mk" = "90112 SIM ULX3S_85K ULX3S_25K ULX3S_RMII_85K COLORLIGHT_I9_45K 4080" ]; ok $? "nf_layout.mk: USER_BASE, the profile list, a formula constant ($mk)"
py=$(python3 proto/gen/nf_layout.py PROFILE_ULX3S_85K_USER_BASE OP_WR_FAST_REGISTER PROFILES | tr '\n' ' ')
[ "$py" = "32768 64 SIM ULX3S_85K ULX3S_25K ULX3S_RMII_85K COLORLIGHT_I9_45K " ]; ok $? "nf_layout.py prints values by name ($py)"
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
[ "$mk" = "ulx3s-85k ulx3s-rmii-85k ulx3s-25k ecp5-evn-85k colorlight-i9-45k 78000000 ULX3S_25K" ]
ok $? "nf_layout.mk: the tested boards, a board's clock and profile ($mk)"
py=$(python3 proto/gen/nf_layout.py BOARD_ULX3S_85K_TOP BOARD_ULX3S_85K_CLK_HZ BOARDS | tr '\n' ' ')
[ "$py" = "nf_board_ulx3s 62500000 ulx3s-85k ulx3s-rmii-85k ulx3s-25k ulx3s-45k ecp5-evn-85k colorlight-i9-45k " ]; ok $? "nf_layout.py: a board's top and clock, the boards ($py)"
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
    if not mhz or float(mhz[0]) * 1e6 != b["osc_hz"]:  # the oscillator first; PHY clocks may follow
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
# words x width fit 16 Kbit (a RAM of 28 KiB: 2-bit slices of 7,168 words); a RAM above
# 64 KiB is whole (FW_SLICE_BITS 0).
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
    if bits == 0 and words > 16384:
        continue  # above 64 KiB no slice of one bit fits a block RAM: the RAM is whole
    if bits not in (1, 2, 4) or words * bits > 16384 or words * bits * 2 <= 16384:
        bad.append("%s: profile %s FW_SLICE_BITS %d for %d words" % (b["name"], p, bits, words))
for m in bad:
    print("# " + m)
sys.exit(1 if bad else 0)
PY
ok $? "every board profile's firmware RAM slices fit one 16 Kbit block RAM each, as wide as fits (FW_SLICE_BITS 1, 2 or 4; 0 above 64 KiB)"
grep -q "^| ecp5-evn-85k | ECP5-EVN: .* | 12 MHz | 78 MHz | 12 MBd | 6.50 | yes | [0-9 ]* |$" docs/layout.md
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
    grep -q "NF_PROFILE_SIM_USER_BASE 57344u" "$tmp/root/proto/gen/nf_layout.h" &&
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

# Wire headers: a field outside its header, or two claiming one bit, are refused; the
# generated offsets, bit fields and sizes are the ones proto/wire.toml gives.
refused '[[header]]
name = "BAD_HDR"
size = 4
doc = "a field past the end"
fields = [ { name = "A", off = 2, bytes = 4, doc = "" } ]' \
    "BAD_HDR.A: off and bytes must place the field inside" "a wire header field past the header's end is refused"
refused '[[header]]
name = "BAD_HDR"
size = 4
doc = "overlapping bits"
fields = [ { name = "A", off = 0, bytes = 4, lsb = 8, width = 8, doc = "" }, { name = "B", off = 1, bytes = 2, doc = "" } ]' \
    "BAD_HDR.B: bit 0 of its bytes overlaps field A" "two wire header fields claiming one bit are refused"
grep -q "#define NF_BTH_SIZE 12u" proto/gen/nf_layout.h && grep -q "#define NF_BTH_PSN_MASK 0x00FFFFFFu" proto/gen/nf_layout.h &&
    grep -q "#define NF_CM_REQ_PATH_MTU_OFF 50u" proto/gen/nf_layout.h &&
    python3 -c 'import sys; sys.path.insert(0, "proto/gen"); import nf_layout as N
assert (N.RETH_SIZE, N.AETH_SIZE, N.DETH_SIZE, N.MAD_HDR_SIZE, N.CM_REQ_SIZE) == (16, 4, 8, 24, 232)
assert N.BTH_ACKREQ_MASK == 1 << 31 and N.CM_REP_PRIVATE_DATA_OFF == 36 and N.CM_REJ_PRIVATE_DATA_OFF == 84'
ok $? "the wire headers generate their sizes, offsets and bit fields for C and Python"

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
refused "$(board_edit 'clk_hz = 78000000' 'clk_hz = "78 MHz"')" \
    "board ecp5-evn-85k: clk_hz must be an integer" "a board field of the wrong type is refused"
refused "$(board_edit 'name = "ulx3s-45k"' 'name = "ulx3s-25k"')" \
    "board ulx3s-25k is defined twice" "two boards of one name are refused"
refused "$(board_edit 'name = "ulx3s-45k"' 'name = "ULX3S_45K"')" \
    "the name must be BOARD-DEVICE" "a board name that is not BOARD-DEVICE is refused"
refused "$(board_edit 'seeds = "1 2 3 4 5"' 'seeds = "4 1 4"')" \
    "board ulx3s-85k: seeds must be distinct positive numbers" "a board's seeds that repeat one are refused"

# Register fields, values and arrays: a register's fields (its layout's, or its own) get
# per-register names in C, Verilog and Python; an array gets its elements' names of one
# register each, with base, count and stride.
cat > "$tmp/r.c" <<'C'
#include "nf_layout.h"
_Static_assert(NF_ENGINE_TBL_STATUS_BUSY_MASK == NF_STATUS_WORD_BUSY_MASK, "layout fields");
_Static_assert(NF_ENGINE_CHK_STATUS_CODE_GET(0x000000F1u) == NF_REFUSE_BAD_COMMAND, "GET");
_Static_assert(NF_LINK_TX_ACK_ACK_MASK == 0xFFu, "inline field");
_Static_assert(NF_ENGINE_ENT_W_COUNT == 7u && NF_ENGINE_ENT_W_STRIDE == 4u && NF_ENGINE_ENT_W_BASE == NF_ENGINE_ENT_W0, "array");
_Static_assert(NF_ENGINE_ENT_W(6) == NF_ENGINE_ENT_W6 && NF_ENGINE_ENT_W6 == 0x058u, "elements");
int main(void) { return 0; }
C
$HOST_C -Iproto/gen "$tmp/r.c" -o "$tmp/r" 2>"$tmp/err"
ok $? "register fields (a layout's and inline) and the ENT_W array's names compile with the values they had"
grep -q '^`define NF_ENGINE_TBL_STATUS_CODE 7:4 ' proto/gen/nf_layout.vh && grep -q '^`define NF_ENGINE_ENT_W_COUNT 7$' proto/gen/nf_layout.vh &&
    [ "$(python3 proto/gen/nf_layout.py ENGINE_DMA_SRC_MODE_ACCESS_MASK ENGINE_ENT_W5 LINK_CFG_TX_SLOTS_LSB | tr '\n' ' ')" = "48 84 8 " ]
ok $? "register fields and arrays in Verilog and Python too"
grep -q "output reg  \[31:0\] q_ent_w6," rtl/engine/nf_engine_csr.v && grep -q "if (hwwe_ent_w6) q_ent_w6 <= hwd_ent_w6;" rtl/engine/nf_engine_csr.v
ok $? "the ENT_W array's elements keep their storage in nf_engine_csr"
# One edit adds a field with named values: it appears in C, Verilog and Python.
rm -rf "$tmp/one" && mkdir -p "$tmp/one/proto" && cp -r proto/*.toml proto/regs "$tmp/one/proto/"
spec_sed "$tmp/one" 's|{ name = "SCRATCH",     off = 0x20, acc = "rw", |&fields = [{ name = "MODE", lsb = 4, width = 2, enum = { IDLE = 0, RUN = 2 }, doc = "a field added by one edit" }], |'
python3 tools/genlayout.py --root "$tmp/one" >/dev/null 2>&1 &&
    grep -q "#define NF_SYS_SCRATCH_MODE_MASK 0x00000030u" "$tmp/one/proto/gen/nf_layout.h" &&
    grep -q "#define NF_SYS_SCRATCH_MODE_RUN 2u" "$tmp/one/proto/gen/nf_layout.h" &&
    grep -q '^`define NF_SYS_SCRATCH_MODE 5:4  // a field added by one edit$' "$tmp/one/proto/gen/nf_layout.vh" &&
    grep -q '^`define NF_SYS_SCRATCH_MODE_RUN 2$' "$tmp/one/proto/gen/nf_layout.vh" &&
    [ "$(python3 "$tmp/one/proto/gen/nf_layout.py" SYS_SCRATCH_MODE_LSB SYS_SCRATCH_MODE_RUN | tr '\n' ' ')" = "4 2 " ]
ok $? "a field with named values added by one edit appears in C, Verilog and Python"
# field_edit REG TEXT: a sed edit that gives register REG (of SYS) the keys TEXT.
field_edit() { printf 's/{ name = "%s", *off = 0x[0-9A-F]*, acc = "[a-z]*", /&%s, /' "$1" "$2"; }
refused "$(field_edit SCRATCH 'fields = [{ name = "A", lsb = 0, width = 8, doc = "" }, { name = "B", lsb = 4, width = 4, doc = "" }]')" \
    "SYS.SCRATCH.B: bit 4 overlaps field A" "two fields of a register that overlap are refused, named"
refused "$(field_edit SCRATCH 'fields = [{ name = "A", lsb = 28, width = 8, doc = "" }]')" \
    "SYS.SCRATCH.A: bits 35:28 go beyond the word's 32 bits" "a field beyond 32 bits is refused"
refused "$(field_edit LEDS 'fields = [{ name = "A", lsb = 4, width = 8, doc = "" }]')" \
    "SYS.LEDS.A: bits 11:4 go beyond the word's 8 bits" "a field beyond the register's width is refused"
refused "$(field_edit SCRATCH 'fields = [{ name = "A", lsb = 0, width = 1, doc = "" }, { name = "A", lsb = 1, width = 1, doc = "" }]')" \
    "SYS.SCRATCH.A: field A is defined twice" "two fields of one name are refused"
refused "$(field_edit SCRATCH 'fields = [{ name = "A", lsb = 0, width = 1, enum = { IDLE = 0, RUN = 1, STOP = 2 }, doc = "" }]')" \
    "SYS.SCRATCH.A: enum value STOP = 2 does not fit 1 bits" "an inline value that does not fit its field is refused"
refused 's/{ name = "CODE",  lsb = 4,  width = 4,  enum = "REFUSE"/{ name = "CODE",  lsb = 4,  width = 3,  enum = "REFUSE"/' \
    "bitfield STATUS_WORD.CODE: enum value STOPPED = 8 does not fit 3 bits" "a shared enum whose values do not fit the field is refused"
refused "$(field_edit SCRATCH 'layout = "NO_SUCH_WORD"')" \
    "SYS.SCRATCH: layout 'NO_SUCH_WORD' is no \[\[bitfield\]\]" "a layout that names no [[bitfield]] is refused"
refused "$(field_edit SCRATCH 'enum = "NO_SUCH_ENUM"')" \
    "SYS.SCRATCH: enum 'NO_SUCH_ENUM' is no \[\[enum\]\]" "a register enum that names no [[enum]] is refused"
refused "$(field_edit SCRATCH 'layout = "TOKEN", fields = []')" \
    "SYS.SCRATCH: fields and layout both given" "a register with both fields and a layout is refused"
refused 's/hw_write = true, count = 7, stride = 4,/hw_write = true, count = 7, stride = 2,/' \
    "ENGINE.ENT_W: an array needs count >= 2 and a stride that is a multiple of 4" "an array whose stride is not whole words is refused"
refused '[[bitfield]]
name = "ENGINE_TBL_STATUS"
doc = "its field names are those ENGINE.TBL_STATUS has from STATUS_WORD"
fields = [ { name = "BUSY", lsb = 0, width = 1, doc = "" } ]' \
    "NF_ENGINE_TBL_STATUS_BUSY_LSB is generated twice" "two contract items that generate one name are refused, naming it"

# Registers: one edit of the contract adds a register with its storage, reset value and
# read-back (tools/genregs.py); a stored register without a reset value is refused, and a
# generated module the contract no longer makes is named by the check.
python3 tools/genregs.py --check >/dev/null 2>&1; ok $? "the register modules match the contract (genregs --check)"
regs_root() { rm -rf "$tmp/regs" && mkdir -p "$tmp/regs/proto" "$tmp/regs/rtl/engine" "$tmp/regs/rtl/link" "$tmp/regs/rtl/soc" "$tmp/regs/rtl/net" &&
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
# regs_refused FILE SED-EDIT MESSAGE WHAT: genregs refuses the contract with FILE (of
# proto/regs) edited, exit 2 and MESSAGE.
regs_refused() {
    regs_root && sed -i "$2" "$tmp/regs/proto/regs/$1"
    python3 tools/genregs.py --root "$tmp/regs" >"$tmp/err" 2>&1
    [ $? = 2 ] && grep -q "$3" "$tmp/err"; ok $? "$4"
}
regs_refused engine.toml 's/^\(  { name = "LD_COUNT",.*\)reset = 0, /\1/' \
    "ENGINE.LD_COUNT: a stored register needs its reset value" "a stored register without a reset value is refused, named"
regs_root
python3 tools/genregs.py --root "$tmp/regs" >/dev/null 2>&1 && touch "$tmp/regs/rtl/engine/nf_engine_regs_decode.v"
python3 tools/genregs.py --check --root "$tmp/regs" >"$tmp/err" 2>&1
[ $? = 1 ] && grep -q "not made by the contract any more (remove them): rtl/engine/nf_engine_regs_decode.v" "$tmp/err"
ok $? "a generated register module the contract no longer makes fails the check, named"

# SYS storage: a register narrower than a word, a width from a parameter, whole-word writes.
grep -q "if (wr_leds && wstrb\[0\]) q_leds\[7:0\] <= wdata\[7:0\];" rtl/soc/nf_sys_csr.v &&
    grep -q "if (wr_wake_rx && wstrb == 4'hF) q_wake_rx <= wdata\[RX_SLOTS-1:0\];" rtl/soc/nf_sys_csr.v &&
    grep -q "{{(32 - RX_SLOTS){1'b0}}, q_wake_rx}" rtl/soc/nf_sys_csr.v
ok $? "nf_sys_csr: LEDS by its byte lane, WAKE_RX of RX_SLOTS bits by whole words, read back zero-extended"
regs_root
sed -i 's|^  { name = "WAKE_RX", .*$|&\n  { name = "SPARE", off = 0x40, acc = "rw", reset = 0x123, width = 12, doc = "a 12-bit register added by one edit" },|' \
    "$tmp/regs/proto/regs/sys.toml"
python3 tools/genregs.py --root "$tmp/regs" >/dev/null 2>&1 &&
    grep -q "q_spare <= 12'h123;" "$tmp/regs/rtl/soc/nf_sys_csr.v" &&
    grep -q "if (wr_spare && wstrb\[1\]) q_spare\[11:8\] <= wdata\[11:8\];" "$tmp/regs/rtl/soc/nf_sys_csr.v" &&
    verilator --lint-only -Wall -Iproto/gen "$tmp/regs/rtl/soc/nf_sys_csr.v" rtl/engine/nf_regs_decode.v \
        --top-module nf_sys_csr >"$tmp/err" 2>&1
ok $? "a 12-bit SYS register added by one edit: reset, two byte lanes, lints clean"
regs_refused sys.toml 's/width = "RX_SLOTS", write = "word", /width = "RX_SLOTS", /' \
    "SYS.WAKE_RX: a register whose width is a parameter takes whole words" "a register whose width is a parameter and takes byte lanes is refused"
regs_refused sys.toml 's/width = "RX_SLOTS", /width = "TX_SLOTS", /' \
    "SYS.WAKE_RX: width 'TX_SLOTS' is not one of the block's params" "a width naming no parameter of the block is refused"
regs_refused engine.toml 's/hw_write = true, count = 7, stride = 4,/hw_write = true, count = 7, stride = 8,/' \
    "ENGINE.LD_SRC: offset 0x60 already used by ENT_W4" "an array whose elements reach the next register is refused, naming the element"

# A value that differs from ndkpi.h fails the build of the generated check, naming it.
cp -r proto/*.toml proto/regs "$tmp/root/proto/"
spec_sed "$tmp/root" 's/^INLINE                = { value = 0x040,/INLINE                = { value = 0x080,/'
python3 tools/genlayout.py --root "$tmp/root" >/dev/null 2>&1
$HOST_C -I"$tmp/root/proto/gen" -Ihost/include -I"$tmp/root/host/src/ndk" "$tmp/n.c" -o "$tmp/n2" >"$tmp/err" 2>&1
[ $? != 0 ] && grep -q "NF_NDK_OP_FLAG_INLINE differs from ndkpi.h NDK_OP_FLAG_INLINE" "$tmp/err"
ok $? "an op flag that differs from ndkpi.h fails the NDKPI check's build, naming the flag"
exit $fail
