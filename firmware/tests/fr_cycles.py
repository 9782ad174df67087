#!/usr/bin/env python3
"""Measures one fast-register of one page on a live adapter (nfsim or nfmodel): sets up
a connected QP and a fast-register MR, posts WR_FAST_REGISTER, then reads INFO's
last_wr_cycles / last_wr_fw_cycles. Usage: fr_cycles.py SOCKET"""
import struct
import sys

from nfmodel_client import Link

OP_MR_CREATE, OP_FRMR_INIT, OP_QP_CREATE, OP_QP_CONNECT = 0x10, 0x14, 0x20, 0x21
OP_WR_FAST_REGISTER, OP_WR_INVALIDATE, OP_INFO, OP_CQE = 0x40, 0x41, 0x02, 0x80
ALLOW_REMOTE_WRITE = 0x30


def main():
    link = Link(sys.argv[1])
    info = link.reset(0x4242)
    user_base = info[6]
    st, rep = link.request(OP_QP_CREATE, 1, struct.pack("<II", 1, 8))
    qpn = struct.unpack("<I", rep[:4])[0]
    link.request(OP_QP_CONNECT, 2, struct.pack("<II", qpn, qpn))
    st, rep = link.request(OP_MR_CREATE, 3, struct.pack("<II", 1, 1))
    token = struct.unpack("<I", rep[:4])[0]
    link.request(OP_FRMR_INIT, 4, struct.pack("<IIII", token, 1, 1, 0))
    results = []
    for i in range(3):
        wr = struct.pack("<IIII", qpn, 10 + i, ALLOW_REMOTE_WRITE, 0)
        fr = struct.pack("<IIIIQQ", token, 1, 0, 0, 4096, 0x100000) + struct.pack("<Q", user_base + 4096)
        # the CQE is not a reply: send the WR, then INFO (its reply comes after the CQE)
        link.request_noreply = True
        body = wr + fr
        msg = struct.pack("<HHIII", OP_WR_FAST_REGISTER, 16 + len(body), 0, 0, 0) + body
        link.send(1, link.tx_seq, link.rx_expect, 0, msg)
        link.tx_seq = (link.tx_seq + 1) & 0xFF
        st, rep = link.request(OP_INFO, 100 + i, b"")
        f = struct.unpack("<28I", rep)
        results.append((f[24], f[25]))
        inv = struct.pack("<IIII", qpn, 20 + i, 0, 0) + struct.pack("<II", token, 0)
        msg = struct.pack("<HHIII", OP_WR_INVALIDATE, 16 + len(inv), 0, 0, 0) + inv
        link.send(1, link.tx_seq, link.rx_expect, 0, msg)
        link.tx_seq = (link.tx_seq + 1) & 0xFF
        link.request(OP_INFO, 200 + i, b"")
    for total, fw in results:
        print("fast-register 1 page: %d cycles from RX_STAMP to CQE, %d of them firmware" % (total, fw))


if __name__ == "__main__":
    main()
