#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Measures one fast-register of one page and the invalidate after it on a live adapter
(nfsim or nfmodel): sets up a connected QP and a fast-register MR, then three rounds of
WR_FAST_REGISTER + INFO, WR_INVALIDATE + INFO. INFO's last_wr_cycles / last_wr_fw_cycles
are recorded for every work request, refused ones too, so a figure is reported only when
the request's own CQE says STATUS_SUCCESS and INFO.last_wr_op names it. Last, a
fast-register through a token the adapter never issued must be refused and give no
figure (the check above can fail). Prints one line per request; exits 1 when a request
that should succeed did not, or the refused one was not refused.
Usage: fr_cycles.py SOCKET"""
import struct
import sys

import nfmodel_client
from nfmodel_client import NF, Link

OP_MR_CREATE, OP_FRMR_INIT = NF.OP_MR_CREATE, NF.OP_FRMR_INIT
OP_QP_CREATE, OP_QP_CONNECT = NF.OP_QP_CREATE, NF.OP_QP_CONNECT
OP_WR_FAST_REGISTER, OP_WR_INVALIDATE, OP_INFO = NF.OP_WR_FAST_REGISTER, NF.OP_WR_INVALIDATE, NF.OP_INFO
ALLOW_REMOTE_WRITE = NF.NDK_OP_FLAG_ALLOW_REMOTE_WRITE
PAGE = NF.ADAPTER_PAGE_SIZE
WHAT = {OP_WR_FAST_REGISTER: "fast-register 1 page", OP_WR_INVALIDATE: "invalidate"}


class CqeLink(Link):
    """The client's link, also keeping every CQE that goes past, by wr_id."""

    def __init__(self, path):
        super().__init__(path)
        self.cqes = {}

    def frames(self):
        out = super().frames()
        for f in out:
            payload, off = f[NF.LINK_HDR_SIZE:], 0
            while f[0] == nfmodel_client.DATA and off + NF.MSG_HDR_SIZE <= len(payload):
                op, mlen = struct.unpack_from("<HH", payload, off)
                if op == NF.OP_CQE and mlen >= NF.MSG_HDR_SIZE + NF.CQE_SIZE:
                    cqe = dict(zip(NF.CQE_FIELDS, struct.unpack_from(NF.CQE_FMT, payload, off + NF.MSG_HDR_SIZE)))
                    self.cqes[cqe["wr_id"]] = cqe["status"]
                off += max(mlen, NF.MSG_HDR_SIZE)
        return out


def post(link, op, wr_id, body, tag):
    """Posts a work request (no reply: a CQE), then INFO, whose reply comes after the CQE.
    Returns (CQE status or None, INFO fields by name)."""
    msg = struct.pack(NF.MSG_HDR_FMT, op, NF.MSG_HDR_SIZE + len(body), 0, 0, 0) + body
    link.send(NF.LINK_TYPE_DATA, link.tx_seq, link.rx_expect, 0, msg)
    link.tx_seq = (link.tx_seq + 1) & 0xFF
    st, rep = link.request(OP_INFO, tag, b"")
    if st != 0 or rep is None:
        return None, None
    return link.cqes.get(wr_id), dict(zip(NF.INFO_FIELDS, struct.unpack(NF.INFO_FMT, rep)))


def measure(link, op, wr_id, body, tag):
    """Posts the request and prints one line for it; returns its CQE status (None: no CQE)."""
    status, f = post(link, op, wr_id, body, tag)
    if status is None:
        print("%s (wr_id %d): no CQE before INFO's reply" % (WHAT[op], wr_id))
    elif status != 0 or f["last_wr_op"] != op:
        print("%s (wr_id %d): refused, status 0x%08X (INFO.last_wr_op 0x%X): no cycle figure" %
              (WHAT[op], wr_id, status, f["last_wr_op"]))
    else:
        print("%s (wr_id %d): STATUS_SUCCESS, %d cycles from RX_STAMP to CQE, %d of them firmware" %
              (WHAT[op], wr_id, f["last_wr_cycles"], f["last_wr_fw_cycles"]))
    return status


def main():
    link = CqeLink(sys.argv[1])
    info = link.reset(0x4242)
    if info is None:
        print("no RESET_ACK from the adapter")
        return 1
    user_base = info[NF.INFO_FIELDS.index("user_base")]
    st, rep = link.request(OP_QP_CREATE, 1, struct.pack(NF.QP_CREATE_REQ_FMT, 1, 8, 0, 0))
    qpn = struct.unpack("<I", rep[:4])[0]
    link.request(OP_QP_CONNECT, 2, struct.pack(NF.QP_CONNECT_REQ_FMT, qpn, qpn))
    st, rep = link.request(OP_MR_CREATE, 3, struct.pack(NF.MR_CREATE_REQ_FMT, 1, 1))
    token = struct.unpack("<I", rep[:4])[0]
    link.request(OP_FRMR_INIT, 4, struct.pack(NF.FRMR_INIT_REQ_FMT, token, 1, 1, 0))

    def fast_register(wr_id, tok, tag):
        wr = struct.pack(NF.WR_HDR_FMT, qpn, wr_id, ALLOW_REMOTE_WRITE, 0)
        fr = struct.pack(NF.WR_FAST_REGISTER_FMT, tok, 1, 0, 0, PAGE, 0x100000) + struct.pack("<Q", user_base + PAGE)
        return measure(link, OP_WR_FAST_REGISTER, wr_id, wr + fr, tag)

    statuses = []
    for i in range(3):
        statuses.append(fast_register(10 + i, token, 100 + i))
        inv = struct.pack(NF.WR_HDR_FMT, qpn, 20 + i, 0, 0) + struct.pack(NF.WR_INVALIDATE_FMT, token, 0)
        statuses.append(measure(link, OP_WR_INVALIDATE, 20 + i, inv, 200 + i))
    # A token whose key the adapter never issued (key 0): must be refused, with no figure.
    bad = fast_register(30, token & ~0xFF, 300)
    refused = bad is not None and bad != 0
    print("the fast-register through a token never issued was %s" % ("refused" if refused else "NOT refused"))
    return 0 if all(st == 0 for st in statuses) and refused else 1


if __name__ == "__main__":
    sys.exit(main())
