#!/usr/bin/env python3
"""Measures one fast-register of one page on a live adapter (nfsim or nfmodel): sets up
a connected QP and a fast-register MR, posts WR_FAST_REGISTER, then reads INFO's
last_wr_cycles / last_wr_fw_cycles. Usage: fr_cycles.py SOCKET"""
import struct
import sys

from nfmodel_client import NF, Link

OP_MR_CREATE, OP_FRMR_INIT = NF.OP_MR_CREATE, NF.OP_FRMR_INIT
OP_QP_CREATE, OP_QP_CONNECT = NF.OP_QP_CREATE, NF.OP_QP_CONNECT
OP_WR_FAST_REGISTER, OP_WR_INVALIDATE, OP_INFO = NF.OP_WR_FAST_REGISTER, NF.OP_WR_INVALIDATE, NF.OP_INFO
ALLOW_REMOTE_WRITE = NF.NDK_OP_FLAG_ALLOW_REMOTE_WRITE


def main():
    link = Link(sys.argv[1])
    info = link.reset(0x4242)
    user_base = info[NF.INFO_FIELDS.index("user_base")]
    st, rep = link.request(OP_QP_CREATE, 1, struct.pack(NF.QP_CREATE_REQ_FMT, 1, 8))
    qpn = struct.unpack("<I", rep[:4])[0]
    link.request(OP_QP_CONNECT, 2, struct.pack(NF.QP_CONNECT_REQ_FMT, qpn, qpn))
    st, rep = link.request(OP_MR_CREATE, 3, struct.pack(NF.MR_CREATE_REQ_FMT, 1, 1))
    token = struct.unpack("<I", rep[:4])[0]
    link.request(OP_FRMR_INIT, 4, struct.pack(NF.FRMR_INIT_REQ_FMT, token, 1, 1, 0))
    results = []
    for i in range(3):
        wr = struct.pack(NF.WR_HDR_FMT, qpn, 10 + i, ALLOW_REMOTE_WRITE, 0)
        fr = struct.pack(NF.WR_FAST_REGISTER_FMT, token, 1, 0, 0, NF.ADAPTER_PAGE_SIZE, 0x100000) + struct.pack("<Q", user_base + NF.ADAPTER_PAGE_SIZE)
        # the CQE is not a reply: send the WR, then INFO (its reply comes after the CQE)
        link.request_noreply = True
        body = wr + fr
        msg = struct.pack(NF.MSG_HDR_FMT, OP_WR_FAST_REGISTER, NF.MSG_HDR_SIZE + len(body), 0, 0, 0) + body
        link.send(NF.LINK_TYPE_DATA, link.tx_seq, link.rx_expect, 0, msg)
        link.tx_seq = (link.tx_seq + 1) & 0xFF
        st, rep = link.request(OP_INFO, 100 + i, b"")
        f = dict(zip(NF.INFO_FIELDS, struct.unpack(NF.INFO_FMT, rep)))
        results.append((f["last_wr_cycles"], f["last_wr_fw_cycles"]))
        inv = struct.pack(NF.WR_HDR_FMT, qpn, 20 + i, 0, 0) + struct.pack(NF.WR_INVALIDATE_FMT, token, 0)
        msg = struct.pack(NF.MSG_HDR_FMT, OP_WR_INVALIDATE, NF.MSG_HDR_SIZE + len(inv), 0, 0, 0) + inv
        link.send(NF.LINK_TYPE_DATA, link.tx_seq, link.rx_expect, 0, msg)
        link.tx_seq = (link.tx_seq + 1) & 0xFF
        link.request(OP_INFO, 200 + i, b"")
    for total, fw in results:
        print("fast-register 1 page: %d cycles from RX_STAMP to CQE, %d of them firmware" % (total, fw))


if __name__ == "__main__":
    main()
