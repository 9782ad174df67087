#!/bin/bash
# test-install: install into a temporary prefix, build a small consumer with
# `pkg-config --cflags --libs ndkfpga` against the installed tree only, and run it
# on the installed simulator (which must load the installed firmware).
# Usage: test_install.sh MAKE CC
set -u
MAKE_CMD=${1:-make}
CC=${2:-cc}
tmp=$(mktemp -d /tmp/ndkfpga-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fail=1; }

if $MAKE_CMD -s --no-print-directory install PREFIX="$prefix" > "$tmp/install.log" 2>&1; then
    ok "make install PREFIX=<tmp>"
else
    tail -20 "$tmp/install.log"; notok "make install PREFIX=<tmp>"; exit 1
fi
for f in lib/libndkfpga.a lib/libndkfpga.so include/ndkfpga/ndkpi.h include/ndkfpga/ndkfpga.h \
         lib/pkgconfig/ndkfpga.pc libexec/ndkfpga/nfsim share/ndkfpga/nf_fw.hex; do
    [ -e "$prefix/$f" ] || { notok "installed $f"; continue; }
done
[ $fail = 0 ] && ok "library, headers, pkg-config file, simulator and firmware installed"

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cflags=$(pkg-config --cflags ndkfpga) && libs=$(pkg-config --libs ndkfpga) || { notok "pkg-config ndkfpga"; exit 1; }
case "$cflags $libs" in
    *"$prefix/include/ndkfpga"*"-L$prefix/lib"*"-lndkfpga"*-pthread*) ok "pkg-config: $cflags $libs" ;;
    *) notok "pkg-config flags: $cflags $libs" ;;
esac
if strings "$prefix/lib/libndkfpga.so" | grep -q "$prefix/libexec/ndkfpga/nfsim" &&
   strings "$prefix/lib/libndkfpga.so" | grep -q "$prefix/share/ndkfpga/nf_fw.hex"; then
    ok "the installed library starts the installed simulator with the installed firmware"
else
    notok "installed library names the installed simulator and firmware"
fi

cat > "$tmp/consumer.c" <<'C'
#include <stdio.h>
#include <ndkfpga.h>
static int fails;
static void check(const char *what, NTSTATUS st, NTSTATUS want)
{
    printf("%s - consumer: %s (%s)\n", st == want ? "ok" : "not ok", what, NdkFpgaStatusName(st));
    fails += st != want;
}
int main(void)
{
    NDK_ADAPTER *ad = NULL;
    NTSTATUS st = NdkFpgaOpenAdapter("sim", &ad);
    check("NdkFpgaOpenAdapter(\"sim\")", st, STATUS_SUCCESS);
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
if $CC -std=c11 -Wall -Wextra -Werror $cflags -o "$tmp/consumer" "$tmp/consumer.c" $libs 2> "$tmp/cc.log"; then
    ok "consumer builds against the installed tree only"
else
    cat "$tmp/cc.log"; notok "consumer builds against the installed tree only"; exit 1
fi
if ldd "$tmp/consumer" | grep -q "$prefix/lib/libndkfpga.so"; then
    ok "consumer links the installed libndkfpga.so"
else
    notok "consumer links the installed libndkfpga.so"
fi
# Nothing from the build tree on the way: no simulator or firmware overrides.
env -u NDKFPGA_SIM -u NDKFPGA_SIM_SOCKET -u NDKFPGA_SIM_ARGS NDKFPGA_QUIET=1 timeout 300 "$tmp/consumer" \
    2> "$tmp/run.log" || { cat "$tmp/run.log"; fail=1; }
exit $fail
