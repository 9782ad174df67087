#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cut a firmware RAM image into the bit slices nf_soc loads in synthesis (FW_SLICE_BITS).

Usage: fw_slices.py IMAGE.hex BITS

IMAGE.hex is a $readmemh file of 32-bit words, one a line. For BITS of 1, 2 or 4 it writes
IMAGE.hex.s00 .. IMAGE.hex.sNN (32 / BITS files): file NN holds bits [NN*BITS, NN*BITS +
BITS) of every word, one hex digit a line, the image of one bit-slice memory of nf_soc.
"""
import sys


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("1", "2", "4"):
        sys.exit(__doc__.strip().splitlines()[2])
    path, bits = sys.argv[1], int(sys.argv[2])
    with open(path, encoding="ascii") as f:
        words = [int(w, 16) for w in f.read().split()]
    mask = (1 << bits) - 1
    for n in range(32 // bits):
        with open(f"{path}.s{n:02d}", "w", encoding="ascii") as f:
            f.write("".join(f"{(w >> (n * bits)) & mask:x}\n" for w in words))


if __name__ == "__main__":
    main()
