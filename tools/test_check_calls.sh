#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The circle check itself: three files calling a -> b -> c -> a are reported, with the
# calls around the circle; the same files with c calling a through a pointer are not.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
printf 'void b(void); void a(void) { b(); }\n' > a.c
printf 'void c(void); void b(void) { c(); }\n' > b.c
printf 'void a(void); void c(void) { a(); }\n' > c.c
printf 'void (*up)(void); void c(void) { up(); }\n' > c_ptr.c
for f in a b c c_ptr; do cc -std=c11 -c "$f.c" -o "$f.o" || exit 1; done
out=$(python3 "$OLDPWD/tools/check_calls.py" demo nm a.o b.o c.o); rc=$?
[ $rc = 1 ] && grep -q "circle in demo: a -> b, b -> c, c -> a" <<< "$out"
r1=$?
python3 "$OLDPWD/tools/check_calls.py" demo nm a.o b.o c_ptr.o >/dev/null; r2=$?
[ $r1 = 0 ] && echo "ok - check_calls: a circle a -> b -> c -> a is reported with its calls" ||
    echo "not ok - check_calls: a circle a -> b -> c -> a is reported with its calls"
[ $r2 = 0 ] && echo "ok - check_calls: a call back through a function pointer is not a circle" ||
    echo "not ok - check_calls: a call back through a function pointer is not a circle"
[ $r1 = 0 ] && [ $r2 = 0 ]
