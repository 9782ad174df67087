#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Seed inputs for fuzz_fw_net.c, written into the directory given: each drives one
transport path end to end, so a bounded run starts deep. The record layouts here must
match the readers in fuzz_fw_net.c (roce, host_wr, timer, control)."""
import os
import struct
import sys

# rc_ops[] indices in fuzz_fw_net.c
SEND_ONLY, WRITE_ONLY, READ_REQUEST, READ_FIRST, READ_LAST, ACK = 4, 10, 12, 13, 15, 17
VA_IN_MR = 0x20
PLEN_IS_DMALEN = 0x1000


def setup(learn=1, sq=0x000010, rq=0xFFFFF0):
    return bytes([learn]) + struct.pack("<HB", sq & 0xFFFF, sq >> 16) + struct.pack("<HB", rq & 0xFFFF, rq >> 16)


def roce(qsel, op, dpsn=0, mut=0, plen=0, x0=0, x1=0, x2=0, fill=0x5A):
    return bytes([0, qsel, op, dpsn & 0xFF, mut]) + struct.pack("<HIIIB", plen, x0, x1, x2, fill)


def wr_sel(op, qp):
    """The host_wr selector byte for op (index into wops[]) on QP qp (0 or 1)."""
    return next(s for s in range(256) if s % 7 == op and (s >> 4) % 4 == qp)


def wr(sel, flags=0, va=0x10000, tok=0, sges=()):
    b = bytes([4, sel, len(sges), flags]) + struct.pack("<II", va, tok)
    for a, n in sges:
        b += struct.pack("<HH", a, n)
    return b


def timer(k):
    return bytes([6, k])


def ping():
    return bytes([9, 6, 0, 0, 0, 0])


SEEDS = {
    # a Send of 100 bytes from QP 0 and the peer's ACK for it
    "send_ack": setup() + wr(wr_sel(0, 0), sges=[(0x10, 100)]) + roce(0, ACK) + ping(),
    # the peer's Send, RDMA Write into the MR and a READ of 3000 bytes from it
    "peer_requests": setup() + roce(0, SEND_ONLY, plen=100)
    + roce(VA_IN_MR, WRITE_ONLY, plen=64, x0=0x40, x2=PLEN_IS_DMALEN)
    + roce(VA_IN_MR, READ_REQUEST, x0=0x80, x2=3000) + timer(1),
    # an RDMA Write of three packets on QP 1, never acknowledged: retries, then timeout
    "write_timeout": setup(learn=0) + wr(wr_sel(1, 1), sges=[(0x20, 3 * 1024)]) + timer(7) + timer(0x87) + timer(0x87),
    # an RDMA Read on QP 0 answered by the peer's first and last responses
    "read_responses": setup() + wr(wr_sel(2, 0), va=0x2000, tok=0x1234, sges=[(0x40, 2048)])
    + roce(0, READ_FIRST, plen=1024) + roce(0, READ_LAST, dpsn=1, plen=1024) + ping(),
}

d = sys.argv[1]
for name, data in SEEDS.items():
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
