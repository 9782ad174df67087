#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Firmware image -> $readmemh file: one 32-bit little-endian word per line, word 0 at
address 0. Usage: bin2hex.py IN.bin OUT.hex"""
import sys


def main():
    src, dst = sys.argv[1], sys.argv[2]
    data = open(src, "rb").read()
    data += b"\0" * (-len(data) % 4)
    with open(dst, "w") as out:
        for i in range(0, len(data), 4):
            out.write("%08x\n" % int.from_bytes(data[i:i + 4], "little"))


if __name__ == "__main__":
    main()
