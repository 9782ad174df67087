#!/usr/bin/env bash
# Tests of the one layout description: the generated headers compile and lint, the
# drift check catches a spec edited without regenerating, and bad specs are refused.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ok() { if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fail=1; fi; }
fail=0

python3 tools/genlayout.py --check >/dev/null 2>&1; ok $? "generated files match tools/layout.toml"

printf '#include "nf_layout.h"\nint main(void){ struct nf_cqe c = {0}; return (int)c.status + (int)NF_CQE_SIZE - 24; }\n' > "$tmp/c.c"
cc -std=c11 -Wall -Wextra -Werror -Ifirmware/include "$tmp/c.c" -o "$tmp/c" 2>"$tmp/err" && "$tmp/c"
ok $? "nf_layout.h compiles with -Wall -Wextra -Werror on the host (and CQE is 24 bytes)"

riscv64-unknown-elf-gcc --specs=/usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs -march=rv32im -mabi=ilp32 \
    -std=c11 -Wall -Wextra -Werror -Ifirmware/include -c "$tmp/c.c" -o "$tmp/c.o" 2>"$tmp/err"
ok $? "nf_layout.h compiles for rv32im/ilp32 (struct offsets asserted identical)"

verilator --lint-only -Wall -Irtl/include tools/layout_lint_top.v >"$tmp/err" 2>&1
ok $? "nf_layout.vh passes verilator --lint-only -Wall"

# Drift: copy the tree's spec and outputs, edit the spec, --check must fail.
mkdir -p "$tmp/root/tools" "$tmp/root/firmware/include" "$tmp/root/rtl/include" "$tmp/root/docs"
cp tools/layout.toml "$tmp/root/tools/"; cp firmware/include/nf_layout.h "$tmp/root/firmware/include/"
cp rtl/include/nf_layout.vh "$tmp/root/rtl/include/"; cp docs/layout.md "$tmp/root/docs/"
python3 tools/genlayout.py --check --root "$tmp/root" >/dev/null 2>&1; ok $? "copied tree is current"
sed -i 's/^PAGE_SHIFT       = { value = 12/PAGE_SHIFT       = { value = 13/' "$tmp/root/tools/layout.toml"
python3 tools/genlayout.py --check --root "$tmp/root" >/dev/null 2>&1
[ $? = 1 ]; ok $? "check-generated fails after the spec changes without regenerating"
python3 tools/genlayout.py --root "$tmp/root" >/dev/null 2>&1 && python3 tools/genlayout.py --check --root "$tmp/root" >/dev/null 2>&1
ok $? "regenerating makes the check pass again"
grep -q "NF_ADAPTER_PAGE_SHIFT 13u" "$tmp/root/firmware/include/nf_layout.h"; ok $? "the regenerated C header carries the new value"

# Arrays: a field counted by an index enum is an array of one element per value, with a
# _COUNT; the enum gets a LIST macro; an index enum that is not 0, 1, 2, ... is refused.
n_ops=$(awk '$2 == "NF_STAT_OP_COUNT" { sub(/u$/, "", $3); print $3 }' firmware/include/nf_layout.h)
grep -q "uint32_t ops\[$n_ops\];" firmware/include/nf_layout.h &&
    grep -q "#define NF_STATS_OPS_COUNT ${n_ops}u" firmware/include/nf_layout.h &&
    grep -q "#define NF_STAT_OP_LIST(X) X(PING, 0u)" firmware/include/nf_layout.h &&
    grep -q "#define NF_PROFILE_LIST(X) X(SIM, 0u)" firmware/include/nf_layout.h
ok $? "an array field sized by an index enum, its _COUNT, the enum's and the profiles' LIST macros"
cp tools/layout.toml "$tmp/gap.toml"
sed -i 's/{ name = "INFO",             value = 1,  doc = "" },/{ name = "INFO",             value = 5,  doc = "" },/' "$tmp/gap.toml"
python3 tools/genlayout.py --check --root "$tmp/root" --spec "$tmp/gap.toml" >"$tmp/err" 2>&1
[ $? = 2 ] && grep -q "is an index: its values must be 0, 1, 2" "$tmp/err"; ok $? "an index enum with a gap is refused"

# A misaligned struct field is refused (no packed structs across the boundary).
cat >> "$tmp/root/tools/layout.toml" <<'TOML'
[[struct]]
name = "BAD"
doc = "misaligned"
fields = [ { name = "a", type = "u8", doc = "" }, { name = "b", type = "u32", doc = "" } ]
TOML
python3 tools/genlayout.py --check --root "$tmp/root" >"$tmp/err" 2>&1
[ $? = 2 ] && grep -q "not 4-byte aligned" "$tmp/err"; ok $? "generator refuses a misaligned field with a clear message"
exit $fail
