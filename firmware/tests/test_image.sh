#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The firmware image: $readmemh format and the size guard.
set -u
root=$1 build=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fail=1; fi; }

hex=$build/nf_fw.hex bin=$build/nf_fw.bin elf=$build/nf_fw.elf
words=$(( ($(stat -c %s "$bin") + 3) / 4 ))
[ "$(wc -l < "$hex")" = "$words" ] && ! grep -qvE '^[0-9a-f]{8}$' "$hex"
ok $? "nf_fw.hex: one 8-digit hex word per line, one line per image word"
first=$(od -An -tx4 -N4 "$bin" | tr -d ' ')
[ "$(head -1 "$hex")" = "$first" ]
ok $? "nf_fw.hex word 0 is the image's first word (address 0, little-endian)"
start=$(riscv64-unknown-elf-nm "$elf" | awk '$3 == "_start" { print $1 }')
[ "$start" = "00000000" ]
ok $? "_start is at address 0 (PicoRV32 reset vector)"
top=$(riscv64-unknown-elf-nm "$elf" | awk '$3 == "__stack_top" { print $1 }')
bss=$(riscv64-unknown-elf-nm "$elf" | awk '$3 == "__bss_end" { print $1 }')
end=$(riscv64-unknown-elf-nm "$elf" | awk '$3 == "_end" { print $1 }')
[ -n "$top" ] && [ $(( 0x$top - 0x$bss )) -ge 1024 ] && [ "$top" = "$end" ] &&
    riscv64-unknown-elf-objdump -d "$elf" | sed -n '/<_start>:/,/^$/p' | grep -q "sp,.*# $(printf %x $(( 0x$top )))"
ok $? "start-up puts the stack pointer at __stack_top: the reserve right after .bss, ending at _end"
# The size guard must refuse an image that does not fit (pretend RAM is 16 KiB).
make -s -C "$root" firmware FW_BUILD="$tmp" FW_RAM_MIN=16384 >"$tmp/out" 2>&1
[ $? != 0 ] && grep -q "does not fit" "$tmp/out" && [ ! -e "$tmp/nf_fw.hex" ]
ok $? "the build fails when image + key-table shadow + stack do not fit a profile's FW RAM"
# The stack guard: the deepest call path against the reserve (tools/fw_stack.py).
python3 "$root/tools/fw_stack.py" --elf "$elf" --reserve 1000000 "$build"/obj/*.ci >"$tmp/stack" 2>&1
ok $? "the firmware's deepest call path is computed from the compiler's call graph: $(sed 's/ (.*//' "$tmp/stack")"
python3 "$root/tools/fw_stack.py" --elf "$elf" --reserve 64 "$build"/obj/*.ci >"$tmp/stack" 2>&1
[ $? != 0 ] && grep -q "can outgrow FW_STACK_RESERVE" "$tmp/stack"
ok $? "the stack guard refuses a reserve smaller than the deepest call path"
exit $fail
