#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The circle check itself: three files calling a -> b -> c -> a are reported, with the
# calls around the circle; the same files with c calling a through a pointer are not.
# The layer check: a file of a lower directory that calls or includes one of a higher
# directory is reported by name; calls and includes going down pass.
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

# Layers: src/top above src/low. top/t.c calls low/l.c and includes low/l.h (down, fine);
# low/up.c calls t() and low/inc.c includes top/t.h (both up).
mkdir -p src/top src/low obj/top obj/low
printf 'void t(void);\n' > src/top/t.h
printf 'void l(void);\n' > src/low/l.h
printf '#include "low/l.h"\nvoid t(void) { l(); }\n' > src/top/t.c
printf '#include "l.h"\nvoid l(void) {}\n' > src/low/l.c
printf 'void t(void); void up(void) { t(); }\n' > src/low/up.c
printf '#include "top/t.h"\nvoid inc(void) {}\n' > src/low/inc.c
for f in top/t low/l low/up low/inc; do cc -std=c11 -MMD -MP -Isrc -c "src/$f.c" -o "obj/$f.o" || exit 1; done
layered() { python3 "$OLDPWD/tools/check_calls.py" demo nm --layers top,low --src src "$@"; }
layered obj/top/t.o obj/low/l.o >/dev/null; r3=$?
out=$(layered obj/top/t.o obj/low/l.o obj/low/up.o); r4=$?
[ $r4 = 1 ] && grep -q "upward in demo: call low/up -> top/t" <<< "$out"; r4=$?
out=$(layered obj/top/t.o obj/low/l.o obj/low/inc.o); r5=$?
[ $r5 = 1 ] && grep -q "upward in demo: include low/inc -> top/t.h" <<< "$out"; r5=$?
[ $r3 = 0 ] && echo "ok - check_calls: calls and includes down the layers pass" ||
    echo "not ok - check_calls: calls and includes down the layers pass"
[ $r4 = 0 ] && echo "ok - check_calls: a call up the layers is reported with its files" ||
    echo "not ok - check_calls: a call up the layers is reported with its files"
[ $r5 = 0 ] && echo "ok - check_calls: an include up the layers is reported with its header" ||
    echo "not ok - check_calls: an include up the layers is reported with its header"
[ $r1 = 0 ] && [ $r2 = 0 ] && [ $r3 = 0 ] && [ $r4 = 0 ] && [ $r5 = 0 ]
