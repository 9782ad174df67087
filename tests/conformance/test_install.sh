#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test-install: `make install` into a temporary prefix, then everything from the installed
# tree alone, moved elsewhere first (the tree is relocatable): the files and links, the
# soname, pkg-config, no path into the build tree, a consumer built with
# `pkg-config --cflags --libs ndkfpga` and run on the installed simulator and software
# adapter, the `ndkfpga` command; then `make uninstall` removes exactly what was installed.
# Usage: test_install.sh MAKE CC
set -u
MAKE_CMD=${1:-make}
CC=${2:-cc}
root=$(pwd)
tmp=$(mktemp -d /tmp/ndkfpga-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fail=1; }
check() { # description command...: ok when the command succeeds
    local what=$1; shift
    if "$@" > "$tmp/check.out" 2>&1; then ok "$what"; else notok "$what"; sed 's/^/# /' "$tmp/check.out" | tail -n 15; fi
}

# Something of the user's already in the prefix: uninstall must leave it.
mkdir -p "$prefix/lib" && echo mine > "$prefix/lib/users-file"
if $MAKE_CMD -s --no-print-directory install PREFIX="$prefix" > "$tmp/install.log" 2>&1; then
    ok "make install PREFIX=<tmp>"
else
    tail -20 "$tmp/install.log"; notok "make install PREFIX=<tmp>"; exit 1
fi
files="lib/libndkfpga.a lib/libndkfpga.so.0.1.0 lib/libndkfpga.so.0 lib/libndkfpga.so lib/pkgconfig/ndkfpga.pc
       include/ndkfpga/ndkpi.h include/ndkfpga/ndkfpga.h bin/ndkfpga libexec/ndkfpga/nfsim libexec/ndkfpga/nfmodel
       libexec/ndkfpga/nfwire
       share/ndkfpga/nf_fw.hex lib/udev/rules.d/70-ndkfpga.rules share/ndkfpga/install-manifest"
missing=""
for f in $files; do [ -e "$prefix/$f" ] || missing="$missing $f"; done
if [ -z "$missing" ]; then ok "installed: library (.so, .a), headers, pkg-config file, ndkfpga, nfsim, nfmodel, nfwire, firmware, udev rule"
else notok "installed files missing:$missing"; fi
check "libndkfpga.so.0.1.0 has soname libndkfpga.so.0; libndkfpga.so -> .so.0 -> .so.0.1.0" bash -c "
    readelf -d '$prefix/lib/libndkfpga.so.0.1.0' | grep -q 'SONAME.*\[libndkfpga.so.0\]' &&
    [ \"\$(readlink '$prefix/lib/libndkfpga.so')\" = libndkfpga.so.0 ] &&
    [ \"\$(readlink '$prefix/lib/libndkfpga.so.0')\" = libndkfpga.so.0.1.0 ]"
check "the installed library, command and pkg-config file name nothing in the build tree" \
    bash -c "! grep -rlF '$root/build' '$prefix/lib' '$prefix/bin'"

# From here on the tree is somewhere else, and the build tree is out of reach: a minimal
# environment, no NDKFPGA_* variable, nothing on PATH of ours.
moved=$tmp/elsewhere/ndkfpga
mkdir -p "$tmp/elsewhere" && mv "$prefix" "$moved"
run() { env -i HOME="$tmp" PATH=/usr/bin:/bin PKG_CONFIG_PATH="$moved/lib/pkgconfig" "$@"; }

cflags=$(run pkg-config --cflags ndkfpga) && libs=$(run pkg-config --libs ndkfpga) || { notok "pkg-config ndkfpga"; exit 1; }
case "$cflags $libs" in
    *"$moved/lib/pkgconfig/../../include/ndkfpga"*"-L$moved/lib/pkgconfig/../../lib"*"-lndkfpga"*-pthread*)
        ok "pkg-config of the moved tree names the moved tree: $cflags $libs" ;;
    *) notok "pkg-config flags: $cflags $libs" ;;
esac
[ "$(run pkg-config --modversion ndkfpga)" = 0.1.0 ] && ok "pkg-config --modversion ndkfpga: 0.1.0" ||
    notok "pkg-config --modversion ndkfpga"

cat > "$tmp/consumer.c" <<'C'
#include <stdio.h>
#include <ndkfpga.h>
static int fails;
static void check(const char *what, NTSTATUS st, NTSTATUS want)
{
    printf("%s - consumer: %s (%s)\n", st == want ? "ok" : "not ok", what, NdkFpgaStatusName(st));
    fails += st != want;
}
int main(int argc, char **argv)
{
    const char *device = argc > 1 ? argv[1] : "sim";
    NDK_ADAPTER *ad = NULL;
    NTSTATUS st = NdkFpgaOpenAdapter(device, &ad);
    printf("%s - consumer: NdkFpgaOpenAdapter(\"%s\") (%s)\n", st == STATUS_SUCCESS ? "ok" : "not ok", device,
           NdkFpgaStatusName(st));
    if (st != STATUS_SUCCESS)
        return 1;
    NDK_ADAPTER_INFO info;
    ULONG size = sizeof(info);
    check("NdkQueryAdapterInfo", ad->Dispatch->NdkQueryAdapterInfo(ad, &info, &size), STATUS_SUCCESS);
    NDK_PD *pd = NULL;
    check("NdkCreatePd", ad->Dispatch->NdkCreatePd(ad, NULL, NULL, &pd), STATUS_SUCCESS);
    NDK_MR *mr = NULL;
    /* No callback given: this provider completes the call before returning. */
    check("NdkCreateMr", pd->Dispatch->NdkCreateMr(pd, TRUE, NULL, NULL, &mr), STATUS_SUCCESS);
    if (mr) {
        check("NdkInitializeFastRegisterMr", mr->Dispatch->NdkInitializeFastRegisterMr(mr, 4, TRUE, NULL, NULL),
              STATUS_SUCCESS);
        check("NdkInitializeFastRegisterMr above FRMRPageCount",
              mr->Dispatch->NdkInitializeFastRegisterMr(mr, info.FRMRPageCount + 1, TRUE, NULL, NULL),
              STATUS_IMPLEMENTATION_LIMIT);
        check("close MR", NdkCloseObject(&mr->Header, NULL, NULL), STATUS_SUCCESS);
    }
    check("close PD", NdkCloseObject(&pd->Header, NULL, NULL), STATUS_SUCCESS);
    NdkFpgaCloseAdapter(ad);
    return fails != 0;
}
C
# shellcheck disable=SC2086
if run "$CC" -std=c11 -Wall -Wextra -Werror $cflags -o "$tmp/consumer" "$tmp/consumer.c" $libs 2> "$tmp/cc.log"; then
    ok "consumer builds against the moved tree only"
else
    cat "$tmp/cc.log"; notok "consumer builds against the moved tree only"; exit 1
fi
if run ldd "$tmp/consumer" | grep -q "$moved/lib/pkgconfig/../../lib/libndkfpga.so.0"; then
    ok "consumer links the moved tree's libndkfpga.so.0"
else
    notok "consumer links the moved tree's libndkfpga.so.0"; run ldd "$tmp/consumer" | sed 's/^/# /'
fi
for device in model sim; do
    run timeout 300 "$tmp/consumer" "$device" 2> "$tmp/run-$device.log" || { sed 's/^/# /' "$tmp/run-$device.log"; fail=1; }
done

# The command, from the moved tree.
ndk=$moved/bin/ndkfpga
check "ndkfpga --help" run "$ndk" --help
check "ndkfpga info model: FRMRPageCount, firmware version, profile" bash -c "
    env -i PATH=/usr/bin:/bin timeout 60 '$ndk' info model > '$tmp/info' &&
    grep -q FRMRPageCount '$tmp/info' && grep -qi firmware '$tmp/info' && grep -qi profile '$tmp/info'"
check "ndkfpga ping sim: a round-trip time" bash -c "
    env -i PATH=/usr/bin:/bin timeout 300 '$ndk' ping sim -c 3 > '$tmp/ping' && grep -qi rtt '$tmp/ping'"
check "ndkfpga addr sim,net=...: the moved tree's nfwire and nfsim, the address set" bash -c "
    env -i PATH=/usr/bin:/bin timeout 300 '$ndk' addr 'sim,net=inst$$,ip=10.66.0.2/24' > '$tmp/addr' &&
    grep -q 'inet 10.66.0.2/24' '$tmp/addr'"
check "ndkfpga mrlat model --json: one JSON document" bash -c "
    env -i PATH=/usr/bin:/bin timeout 300 '$ndk' mrlat model --json --iters 2 > '$tmp/mrlat.json' &&
    python3 -m json.tool '$tmp/mrlat.json' > /dev/null"
check "ndkfpga list: the moved tree's simulator and software adapter are available" bash -c "
    env -i PATH=/usr/bin:/bin timeout 60 '$ndk' list > '$tmp/list' &&
    grep -F '$moved' '$tmp/list' | grep -q nfsim && grep -F '$moved' '$tmp/list' | grep -q nfmodel"
check "ndkfpga info on a missing device fails with a message" bash -c "
    ! env -i PATH=/usr/bin:/bin timeout 60 '$ndk' info tty:/nonexistent > /dev/null 2> '$tmp/err' && test -s '$tmp/err'"

# Uninstall from the moved tree: exactly the installed files go; the user's file stays.
if $MAKE_CMD -s --no-print-directory uninstall PREFIX="$moved" > "$tmp/uninstall.log" 2>&1; then
    left=$(cd "$moved" && find . -mindepth 1 | sort | tr '\n' ' ')
    if [ "$left" = "./lib ./lib/users-file " ]; then ok "make uninstall removed exactly what was installed"
    else notok "make uninstall left: $left"; fi
else
    sed 's/^/# /' "$tmp/uninstall.log"; notok "make uninstall"
fi
if $MAKE_CMD -s --no-print-directory uninstall PREFIX="$moved" > /dev/null 2> "$tmp/un2.log"; then
    notok "a second make uninstall says nothing is installed"
else
    grep -q "nothing of ndkfpga is installed" "$tmp/un2.log" && ok "a second make uninstall says nothing is installed" ||
        notok "a second make uninstall: $(cat "$tmp/un2.log")"
fi
exit $fail
