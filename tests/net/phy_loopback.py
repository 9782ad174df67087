#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The check of a board alone: ONE adapter whose port has no peer puts its PHY in loopback
(`ndkfpga phy loopback on`), then two of its QPs, connected over the wire to the adapter's
own IPv4 address (QP_CONNECT_WIRE: every packet goes through the firmware's RC transport,
the packet engine, the MAC and the PHY and back), pass Send, RDMA Write and RDMA Read with
every byte checked. NET_PHY's refusals change nothing. With loopback off the same Send
never arrives: no receive completes and the Send ends CANCELLED or IO_TIMEOUT once the QP
is disconnected. Prints TAP lines.
Usage: phy_loopback.py NDKFPGA DEVICE SOCKET [BYTES] (DEVICE: model:SOCKET or sim:SOCKET;
BYTES: the largest transfer, 5000 by default)"""
import json
import os
import random
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rc_pair import Host, new_qp, word, PD  # noqa: E402
from nfmodel_client import NF  # noqa: E402  (rc_pair put firmware/tests on the path)

IP = "10.77.0.1"
PSN_A, PSN_B = 0xFFFFF0, 0x000123  # each QP's first send PSN is its peer's expected one
SILENT_S = 3  # wall time a Send is given to arrive with loopback off (it never should)


def main():
    ndk, device, sock = sys.argv[1:4]
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 5000  # several packets at any path MTU
    fail = 0

    def ok(cond, what):
        nonlocal fail
        print(("ok - " if cond else "not ok - ") + "phy: " + what, flush=True)
        fail |= not cond

    def phy(*args):
        r = subprocess.run([ndk, "phy", *args, "--json", device], capture_output=True, text=True, timeout=120)
        try:
            return r.returncode, json.loads(r.stdout) if r.returncode == 0 else r.stderr.strip()
        except ValueError:
            return r.returncode, r.stdout

    rc, s = phy()
    ok(rc == 0 and s["loopback"] is False and s["link"] is False and s["address"] == 1,
       "ndkfpga phy: the PHY found at MDIO address 1, a wire with no peer: link down, loopback off (%s)" % (s,))
    rc, s = phy("loopback", "on")
    ok(rc == 0 and s["loopback"] is True and s["link"] is True and s["autoneg"] is False and s["duplex"] == "full",
       "ndkfpga phy loopback on: loopback, link up, forced full duplex (%s)" % (s,))

    h = Host("A", sock)
    info = h.link.reset(0x6100)
    ok(info is not None, "RESET handshake")
    if info is None:
        return 1
    user = dict(zip(NF.INFO_FIELDS, info))["user_base"]
    # NET_PHY's refusals: nothing changes (the loopback stays on)
    for body, what in ((struct.pack(NF.NET_PHY_REQ_FMT, 3, 0), "an unknown action"),
                       (struct.pack(NF.NET_PHY_REQ_FMT, 0, 1), "a reserved word not 0"),
                       (b"", "a short request")):
        st, rep = h.request(NF.OP_NET_PHY, body)
        ok(st == NF.STATUS_INVALID_PARAMETER and not rep, "NET_PHY with %s: INVALID_PARAMETER, no payload" % what)
    st, rep = h.request(NF.OP_NET_PHY, struct.pack(NF.NET_PHY_REQ_FMT, NF.NET_PHY_ACTION_QUERY, 0))
    r = dict(zip(NF.NET_PHY_REP_FIELDS, struct.unpack(NF.NET_PHY_REP_FMT, rep[:NF.NET_PHY_REP_SIZE]))) if st == 0 else {}
    ok(st == 0 and r["bmcr"] & NF.MII_BMCR_LOOPBACK and r["phyid1"] not in (0, NF.MII_NO_ANSWER),
       "NET_PHY query after the refusals: still in loopback (%s)" % r)

    body = struct.pack(NF.NET_CONFIG_REQ_FMT, NF.NET_CONFIG_FLAG_ADDR, word(IP), word("255.255.255.0"), 0, 0, 0)
    st, _ = h.request(NF.OP_NET_CONFIG, body)
    ok(st == 0, "the adapter takes %s/24 (%s)" % (IP, st))
    qa, qb = new_qp(h), new_qp(h)
    conn = [h.request(NF.OP_QP_CONNECT_WIRE, struct.pack(NF.QP_CONNECT_WIRE_REQ_FMT, q, p, word(IP), sq, rq, 0))[0]
            for q, p, sq, rq in ((qa, qb, PSN_A, PSN_B), (qb, qa, PSN_B, PSN_A))]
    ok(conn == [0, 0], "two QPs connected over the wire to the adapter's own address (%s)" % conn)
    if conn != [0, 0]:
        return 1

    priv = 0xFFFFFFFF
    rw = NF.NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NF.NDK_MR_FLAG_ALLOW_REMOTE_READ | NF.NDK_MR_FLAG_ALLOW_REMOTE_WRITE
    src, dst, mrb, rcv = user, user + 0x4000, user + 0x8000, user + 0xC000
    rnd = random.Random(11)
    data = bytes(rnd.randrange(256) for _ in range(size))
    h.write_mem(src, data)
    h.write_mem(rcv, bytes(size))
    st, rep = h.request(NF.OP_MR_CREATE, struct.pack(NF.MR_CREATE_REQ_FMT, PD, 0))
    token = struct.unpack_from("<I", rep, NF.MR_CREATE_REP_TOKEN_OFF)[0]
    page = NF.ADAPTER_PAGE_SIZE
    npages = (size + page - 1) // page
    pages = b"".join(struct.pack("<Q", mrb + k * page) for k in range(npages))
    st, _ = h.request(NF.OP_MR_REGISTER, struct.pack(NF.MR_REGISTER_REQ_FMT, token, rw, mrb, size, 0, npages) + pages)
    ok(st == 0, "an MR for RDMA (%s)" % st)

    def sge(addr, n, tok=priv):
        return struct.pack(NF.SGE_FMT, addr, n, tok)

    for n in (1, 1500, size):
        h.wr(NF.OP_WR_RECEIVE, qb, 100 + n, struct.pack(NF.WR_RECEIVE_FMT, 1, 0) + sge(rcv, size))
        h.wr(NF.OP_WR_SEND, qa, 200 + n, struct.pack(NF.WR_SEND_FMT, 0, 1) + sge(src, n))
        cs, cr = h.cqe(200 + n), h.cqe(100 + n)
        got = h.read_mem(rcv, n) if cr else b""
        ok(cs and cs["status"] == 0 and cr and cr["status"] == 0 and cr["bytes"] == n and got == data[:n],
           "Send of %d bytes QP %d -> QP %d through the PHY loopback: every byte (%s, %s)" % (n, qa, qb, cs, cr))
    h.wr(NF.OP_WR_WRITE, qa, 300, struct.pack(NF.WR_RDMA_FMT, mrb, token, 1) + sge(src, size))
    c = h.cqe(300)
    ok(c and c["status"] == 0 and h.read_mem(mrb, size) == data, "RDMA Write of %d bytes: every byte (%s)" % (size, c))
    h.wr(NF.OP_WR_READ, qa, 301, struct.pack(NF.WR_RDMA_FMT, mrb, token, 1) + sge(dst, size))
    c = h.cqe(301)
    ok(c and c["status"] == 0 and c["bytes"] == size and h.read_mem(dst, size) == data,
       "RDMA Read of %d bytes: every byte (%s)" % (size, c))

    h.link.s.close()  # the adapter takes one host at a time: the CLI's session next, once it saw this one go
    time.sleep(1)
    rc, s = phy("loopback", "off")
    ok(rc == 0 and s["loopback"] is False and s["link"] is False and s["autoneg"] is True,
       "ndkfpga phy loopback off: loopback off, auto-negotiation on, no peer: link down (%s)" % (s,))
    # The CLI's session reset the link; this host starts its own again (the PHY keeps its state).
    h = Host("A", sock)
    ok(h.link.reset(0x6200) is not None, "RESET handshake again")
    st, _ = h.request(NF.OP_NET_CONFIG, body)
    qa, qb = new_qp(h), new_qp(h)
    conn = [h.request(NF.OP_QP_CONNECT_WIRE, struct.pack(NF.QP_CONNECT_WIRE_REQ_FMT, q, p, word(IP), sq, rq, 0))[0]
            for q, p, sq, rq in ((qa, qb, PSN_A, PSN_B), (qb, qa, PSN_B, PSN_A))]
    h.write_mem(rcv, bytes(size))
    h.wr(NF.OP_WR_RECEIVE, qb, 400, struct.pack(NF.WR_RECEIVE_FMT, 1, 0) + sge(rcv, size))
    h.wr(NF.OP_WR_SEND, qa, 401, struct.pack(NF.WR_SEND_FMT, 0, 1) + sge(src, 1500))
    t = time.monotonic()
    while time.monotonic() - t < SILENT_S:
        h.take()
    arrived = [c for c in h.cqes if c["wr_id"] == 400]
    ok(conn == [0, 0] and not arrived, "loopback off: the same Send leaves on a wire with no peer, "
                                       "no receive completes (%s, %s)" % (conn, arrived))
    st, _ = h.request(NF.OP_QP_DISCONNECT, struct.pack(NF.QP_REQ_FMT, qa, 0))
    c = h.cqe(401)
    ok(st == 0 and c and c["status"] in (NF.STATUS_CANCELLED, NF.STATUS_IO_TIMEOUT) and
       h.read_mem(rcv, size) == bytes(size),
       "the Send ends %s (CANCELLED by the disconnect, or IO_TIMEOUT), nothing written" % (c and hex(c["status"])))
    return fail


if __name__ == "__main__":
    sys.exit(main())
