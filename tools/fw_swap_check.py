#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check that ecpbram put the firmware image into the block RAM of a placed design.

Usage: fw_swap_check.py PLACEHOLDER.config FINAL.config PLACEHOLDER.hex FIRMWARE.hex

The design was synthesised with a random placeholder image in the firmware RAM. ecpbram
finds that image in the placed configuration (PLACEHOLDER.config) as bit slices of 512
words, whatever way Yosys cut the RAM into DP16KD blocks, and writes the firmware's
slices in their place (FINAL.config). It says nothing when it finds nothing, so this
checks independently:
  - every slice of the placeholder image is present in PLACEHOLDER.config (the RAM was
    mapped to EBR with its init pattern intact, nothing optimised away or reordered
    inside a slice);
  - in FINAL.config each of those places holds the firmware's slice, and no placeholder
    slice is left anywhere.
Prints one line per finding; exits 0 when the swap is complete, 1 otherwise.
"""
import sys

WORDS_PER_EBR = 2048     # a .bram_init lists 2048 9-bit values
SLICE = 512              # ecpbram's bit slice: one data bit over 512 consecutive words
# DP16KD data widths; modes up to 4 bits use 8 of the 9 bits of each value, the parity
# modes all 9 (the layout ecpbram assumes).
MODES = [(1, 8, 32), (2, 8, 32), (4, 8, 32), (9, 9, 36), (18, 9, 36), (36, 9, 36)]


def read_hex(path):
    """Words of a $readmemh file (one word per line, no addresses) as int, and the width."""
    words, width = [], 0
    with open(path, encoding="ascii") as f:
        for line in f:
            tok = line.strip().replace("_", "")
            if not tok:
                continue
            if tok.startswith("@"):
                sys.exit(f"fw_swap_check: {path}: addresses are not supported")
            words.append(int(tok, 16))
            width = max(width, 4 * len(tok))
    if not words or len(words) % SLICE:
        sys.exit(f"fw_swap_check: {path}: {len(words)} words, not a multiple of {SLICE}")
    return words, width


def hex_slices(words, width):
    """{(bit, block): slice} with slice an int of 512 bits (bit k = word block*512+k)."""
    out = {}
    for bit in range(width):
        for block in range(len(words) // SLICE):
            chunk = words[block * SLICE:(block + 1) * SLICE]
            out[(bit, block)] = int("".join("1" if (w >> bit) & 1 else "0" for w in reversed(chunk)), 2)
    return out


def read_brams(path):
    """{ebr_index: [2048 values]} from a nextpnr/Trellis text configuration."""
    brams, cur = {}, None
    with open(path, encoding="ascii") as f:
        for line in f:
            if line.startswith(".bram_init"):
                cur = brams.setdefault(int(line.split()[1]), [])
            elif line.startswith("."):
                cur = None
            elif cur is not None:
                cur.extend(int(t, 16) for t in line.split())
    for idx, data in brams.items():
        if len(data) != WORDS_PER_EBR:
            sys.exit(f"fw_swap_check: {path}: EBR {idx} has {len(data)} values, not {WORDS_PER_EBR}")
    return brams


def ebr_slices(data):
    """{(mode, j): slice} for every slice of one EBR, as ecpbram reads them."""
    flat = [(v >> b) & 1 for v in data for b in range(9)]   # value i holds bits 9i..9i+8
    out = {}
    for width, used, count in MODES:
        for j in range(count):
            base = j % width + (j // width) * SLICE * width
            bits = "".join("1" if flat[9 * (bn // used) + bn % used] else "0"
                           for bn in (base + k * width for k in range(SLICE - 1, -1, -1)))
            out[(width, j)] = int(bits, 2)
    return out


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.split("\n\n")[1])
    pcfg, fcfg, phex, fhex = sys.argv[1:]
    pwords, pwidth = read_hex(phex)
    fwords, _ = read_hex(fhex)
    if len(fwords) != len(pwords):
        sys.exit(f"fw_swap_check: {fhex} has {len(fwords)} words, the placeholder {len(pwords)}")
    want = hex_slices(pwords, pwidth)
    by_slice = {s: key for key, s in want.items()}
    if len(by_slice) != len(want):
        sys.exit("fw_swap_check: the placeholder has repeated slices: generate it again")
    fw = hex_slices(fwords, pwidth)

    placed = read_brams(pcfg)
    final = read_brams(fcfg)
    found = {}   # (bit, block) -> [(ebr, mode, j)]
    for idx, data in placed.items():
        if not any(data):
            continue
        for (mode, j), s in ebr_slices(data).items():
            key = by_slice.get(s)
            if key is not None:
                found.setdefault(key, []).append((idx, mode, j))
    missing = sorted(set(want) - set(found))
    ebrs = sorted({pos[0] for places in found.values() for pos in places})
    ok = True
    if missing:
        ok = False
        print(f"not found: {len(missing)} of {len(want)} placeholder slices are not in the "
              f"placed design (first: bit {missing[0][0]} of words {missing[0][1] * SLICE}..)")
    else:
        print(f"found: all {len(want)} placeholder slices ({len(pwords)} words x {pwidth} bits) "
              f"in {len(ebrs)} EBR")

    final_slices = {idx: ebr_slices(final[idx]) for idx in ebrs}
    wrong = sum(1 for key, places in found.items() for idx, mode, j in places
                if final_slices[idx][(mode, j)] != fw[key])
    left = sum(1 for sl in final_slices.values() for s in sl.values() if s in by_slice)
    if not found:
        ok = False
    elif wrong or left:
        ok = False
        print(f"not swapped: {wrong} slices differ from the firmware, {left} placeholder slices left")
    else:
        print(f"swapped: every slice holds the firmware image ({sum(map(len, found.values()))} places)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
