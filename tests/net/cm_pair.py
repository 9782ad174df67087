#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Two adapters on one wire set up RoCEv2 connections with IB CM MADs (REQ, REP, RTU, REJ,
DREQ, DREP on QP1), driven through their host links with the CM_* ops and CM_EVENT
messages: listen, connect, accept with private data both ways and a Send across; a port
nobody listens on (CONNECTION_REFUSED), a reject with private data, an address nobody has
(HOST_UNREACHABLE), a port listened on twice (SHARING_VIOLATION), another adapter's
address (INVALID_ADDRESS), and a disconnect (DISCONNECTED at the peer, the local QP's
queued requests CANCELLED). Prints TAP lines.
Usage: cm_pair.py SOCKET_A SOCKET_B"""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rc_pair import NF, Host as RcHost, DATA, ACK, WAIT_S, bring_up, new_qp, word  # noqa: E402

PD = 1
PORT = 7471


class Host(RcHost):
    """rc_pair's host, which also keeps the CM_EVENT messages that arrive."""

    def __init__(self, name, path, peer=None):
        super().__init__(name, path, peer)
        self.events = []

    def take(self):
        for f in self.link.frames():
            if f[0] != DATA:
                continue
            if f[1] == self.link.rx_expect:
                self.link.rx_expect = (self.link.rx_expect + 1) & 0xFF
                payload, off = f[NF.LINK_HDR_SIZE:], 0
                while off + NF.MSG_HDR_SIZE <= len(payload):
                    op, ln, tag, st, _ = struct.unpack(NF.MSG_HDR_FMT, payload[off:off + NF.MSG_HDR_SIZE])
                    body = payload[off + NF.MSG_HDR_SIZE:off + ln]
                    if op == NF.OP_CQE:
                        self.cqes.append(dict(zip(NF.CQE_FIELDS, struct.unpack(NF.CQE_FMT, body[:NF.CQE_SIZE]))))
                    elif op == NF.OP_CM_EVENT:
                        ev = dict(zip(NF.CM_EVENT_FIELDS, struct.unpack(NF.CM_EVENT_FMT, body[:NF.CM_EVENT_SIZE])))
                        ev["pdata"] = body[NF.CM_EVENT_SIZE:NF.CM_EVENT_SIZE + ev["pdata_len"]]
                        self.events.append(ev)
                    elif op & NF.OP_REPLY:
                        self.replies[tag] = (st, body)
                    off += max(ln, NF.MSG_HDR_SIZE)
            self.link.send(ACK, 0, self.link.rx_expect)

    def event(self, conn_id=None, wait=WAIT_S):
        """The next CM_EVENT (of conn_id), or None within wait seconds."""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            for h in (self,) + ((self.peer,) if self.peer else ()):
                h.take()
            for e in self.events:
                if conn_id is None or e["conn_id"] == conn_id:
                    self.events.remove(e)
                    return e
        return None

    def requests(self, msgs):
        """Several requests in one link frame (run back to back by the firmware); their
        replies by tag (None for a message with no reply, such as a work request)."""
        payload, tags = b"", []
        for op, body, reply in msgs:
            tag = self.tag
            self.tag += 1
            payload += struct.pack(NF.MSG_HDR_FMT, op, NF.MSG_HDR_SIZE + len(body), tag, 0, 0) + body
            tags.append(tag if reply else None)
        seq = self.link.tx_seq
        self.link.tx_seq = (seq + 1) & 0xFF
        self.link.send(DATA, seq, self.link.rx_expect, 0, payload)
        deadline, last = time.monotonic() + WAIT_S, time.monotonic()
        while time.monotonic() < deadline:
            self.take()
            if self.peer:
                self.peer.take()
            if all(t is None or t in self.replies for t in tags):
                return [self.replies.pop(t) if t is not None else None for t in tags]
            if time.monotonic() - last > 0.5:
                self.link.send(DATA, seq, self.link.rx_expect, 0, payload)
                last = time.monotonic()
        return [(None, b"")] * len(tags)


def pad8(b):
    return b + b"\0" * (-len(b) % 8)


def main():
    a, b = Host("A", sys.argv[1]), Host("B", sys.argv[2])
    a.peer, b.peer = b, a
    fail = 0

    def ok(cond, what):
        nonlocal fail
        print(("ok - " if cond else "not ok - ") + "cm: " + what, flush=True)
        fail |= not cond

    ips = ("10.67.0.1", "10.67.0.2")
    user = bring_up(a, b, ips, 0x5300, 0x20, ok)
    if user is None:
        return 1
    qp = new_qp

    def listen(h, ip, port):
        st, rep = h.request(NF.OP_CM_LISTEN, struct.pack(NF.CM_LISTEN_REQ_FMT, ip, port))
        return st, (struct.unpack(NF.CM_LISTEN_REP_FMT, rep[:NF.CM_LISTEN_REP_SIZE]) if st == 0 else None)

    def connect(h, q, ip, port, pdata=b"", res=2, depth=2, mtu=0):
        st, rep = h.request(NF.OP_CM_CONNECT, struct.pack(NF.CM_CONNECT_REQ_FMT, q, word(ip), port, 0, res, depth,
                                                          len(pdata), mtu) + pad8(pdata))
        return st, (struct.unpack(NF.CM_CONNECT_REP_FMT, rep[:NF.CM_CONNECT_REP_SIZE]) if st == 0 else (0, 0))

    # listeners: one port, not twice; only the adapter's own address
    st, lis = listen(b, 0, PORT)
    ok(st == 0 and lis[1] == PORT, "B listens on port %d (%s, %s)" % (PORT, st, lis))
    st, _ = listen(b, 0, PORT)
    ok(st == NF.STATUS_SHARING_VIOLATION, "a second listen on the port: SHARING_VIOLATION (%s)" % st)
    st, _ = listen(b, word("10.67.0.9"), PORT + 1)
    ok(st == NF.STATUS_INVALID_ADDRESS, "a listen on an address not B's: INVALID_ADDRESS (%s)" % st)
    st, eph = listen(b, word(ips[1]), 0)
    ok(st == 0 and eph[1] >= NF.CM_EPHEMERAL, "a listen on port 0 takes an ephemeral port (%s, %s)" % (st, eph))
    if st == 0:
        st, _ = b.request(NF.OP_CM_UNLISTEN, struct.pack(NF.CM_ID_REQ_FMT, eph[0], 0))
        ok(st == 0, "... and unlisten frees it (%s)" % st)

    # bad requests: a clear status each, and nothing changed (the QP connects below)
    qa, qb = qp(a), qp(b)
    bad = (("a QP that does not exist", (0x999, word(ips[1]), PORT, 0, 0, 0, 0, 0)),
           ("a peer port of 0", (qa, word(ips[1]), 0, 0, 0, 0, 0, 0)),
           ("a local port past 65535", (qa, word(ips[1]), PORT, 70000, 0, 0, 0, 0)),
           ("responder resources past CM.MAX_RD", (qa, word(ips[1]), PORT, 0, NF.CM_MAX_RD + 1, 0, 0, 0)),
           ("57 bytes of private data", (qa, word(ips[1]), PORT, 0, 0, 0, 57, 0)),
           ("the adapter's own address", (qa, word(ips[0]), PORT, 0, 0, 0, 0, 0)))
    for what, f in bad:
        st, _ = a.request(NF.OP_CM_CONNECT, struct.pack(NF.CM_CONNECT_REQ_FMT, *f) + bytes(64))
        ok(st == NF.STATUS_INVALID_PARAMETER, "a connect with %s: INVALID_PARAMETER (%s)" % (what, st))
    st2, _ = b.request(NF.OP_CM_CONNECT, struct.pack(NF.CM_CONNECT_REQ_FMT, qb, word(ips[0]), PORT, PORT, 0, 0, 0, 0))
    ok(st2 == NF.STATUS_SHARING_VIOLATION, "a connect from a port B listens on: SHARING_VIOLATION (%s)" % st2)
    st, _ = a.request(NF.OP_CM_COMPLETE, struct.pack(NF.CM_ID_REQ_FMT, 0x1234, 0))
    st2, _ = b.request(NF.OP_CM_UNLISTEN, struct.pack(NF.CM_ID_REQ_FMT, 0x1234, 0))
    st3, _ = b.request(NF.OP_CM_LISTEN, struct.pack(NF.CM_LISTEN_REQ_FMT, 0, 0x10000))
    ok(st == st2 == st3 == NF.STATUS_INVALID_PARAMETER,
       "complete and unlisten of unknown ids, a listen on port 65536: INVALID_PARAMETER (%s, %s, %s)" % (st, st2, st3))

    # connect, accept, complete: private data both ways
    pa = bytes(range(1, 57))  # the REQ's whole consumer private data
    pb = bytes((i * 7) & 0xFF for i in range(150))
    st, (ca, lport) = connect(a, qa, ips[1], PORT, pa)
    ok(st == 0 and 49152 <= lport <= 65535, "A connects to B:%d from ephemeral port %d (%s)" % (PORT, lport, st))
    req = b.event()
    ok(req and req["type"] == NF.CM_EVENT_TYPE_REQUEST and req["pdata"][:len(pa)] == pa and
       req["listen_id"] == lis[0] and req["peer_ip"] == word(ips[0]) and req["peer_port"] == lport and
       req["peer_qpn"] == qa and req["resources"] == 2 and req["depth"] == 2,
       "B gets REQUEST with A's address, port, QP and private data (%s)" % (req and {k: v for k, v in req.items()
                                                                                  if k != "pdata"}))
    if not req:
        return 1
    cb = req["conn_id"]
    st, _ = b.request(NF.OP_CM_ACCEPT, struct.pack(NF.CM_ACCEPT_REQ_FMT, cb, qb, 2, 1, NF.CM_REP_PDATA + 1, 0) +
                      bytes(200))
    ok(st == NF.STATUS_INVALID_PARAMETER, "an accept with 197 bytes of private data: INVALID_PARAMETER (%s)" % st)
    st, _ = b.request(NF.OP_CM_ACCEPT, struct.pack(NF.CM_ACCEPT_REQ_FMT, cb, qb, 2, 1, len(pb), 0) + pad8(pb))
    ok(st == 0, "B accepts on its QP (%s)" % st)
    rep = a.event(ca)
    ok(rep and rep["type"] == NF.CM_EVENT_TYPE_REPLY and rep["pdata"][:len(pb)] == pb and rep["peer_qpn"] == qb and
       rep["qpn"] == qa and rep["depth"] == 1, "A gets REPLY with B's QP and private data (%s)" %
       (rep and {k: v for k, v in rep.items() if k != "pdata"}))
    st, _ = a.request(NF.OP_CM_COMPLETE, struct.pack(NF.CM_ID_REQ_FMT, ca, 0))
    ok(st == 0, "A completes the connect: RTU (%s)" % st)
    est = b.event(cb)
    ok(est and est["type"] == NF.CM_EVENT_TYPE_ESTABLISHED and est["qpn"] == qb, "B gets ESTABLISHED (%s)" % est)

    priv = 0xFFFFFFFF
    data = bytes((i * 13 + 5) & 0xFF for i in range(3000))
    a.write_mem(user, data)
    b.wr(NF.OP_WR_RECEIVE, qb, 11, struct.pack(NF.WR_RECEIVE_FMT, 1, 0) + struct.pack(NF.SGE_FMT, user + 0x8000,
                                                                                      4096, priv))
    a.wr(NF.OP_WR_SEND, qa, 12, struct.pack(NF.WR_SEND_FMT, 0, 1) + struct.pack(NF.SGE_FMT, user, 3000, priv))
    cs, cr = a.cqe(12, (b,)), b.cqe(11, (a,))
    ok(cs and cs["status"] == 0 and cr and cr["status"] == 0 and cr["bytes"] == 3000 and
       b.read_mem(user + 0x8000, 3000) == data, "a 3000-byte Send A->B across the connection (%s, %s)" % (cs, cr))
    a.wr(NF.OP_WR_RECEIVE, qa, 13, struct.pack(NF.WR_RECEIVE_FMT, 1, 0) + struct.pack(NF.SGE_FMT, user + 0x4000,
                                                                                      4096, priv))
    b.wr(NF.OP_WR_SEND, qb, 14, struct.pack(NF.WR_SEND_FMT, 0, 1) + struct.pack(NF.SGE_FMT, user + 0x8000, 100,
                                                                                priv))
    cs, cr = b.cqe(14, (a,)), a.cqe(13, (b,))
    ok(cs and cs["status"] == 0 and cr and cr["bytes"] == 100, "and a Send B->A (%s, %s)" % (cs, cr))

    # nobody listens on the port: B rejects the REQ (invalid service ID)
    q2 = qp(a)
    st, (c2, _) = connect(a, q2, ips[1], PORT + 5)
    ev = a.event(c2)
    ok(st == 0 and ev and ev["type"] == NF.CM_EVENT_TYPE_FAILED and ev["status"] == NF.STATUS_CONNECTION_REFUSED and
       ev["reason"] == 8, "a connect to a port nobody listens on: FAILED CONNECTION_REFUSED, reason 8 (%s)" % ev)
    # the listener rejects, with private data
    st, (c3, _) = connect(a, q2, ips[1], PORT, b"again")
    req = b.event()
    prej = b"no thanks" * 16  # 144 bytes
    st2 = None
    if req:
        st2, _ = b.request(NF.OP_CM_REJECT, struct.pack(NF.CM_REJECT_REQ_FMT, req["conn_id"], len(prej)) + pad8(prej))
    ev = a.event(c3)
    ok(st == 0 and st2 == 0 and ev and ev["type"] == NF.CM_EVENT_TYPE_REJECTED and
       ev["status"] == NF.STATUS_CONNECTION_REFUSED and ev["reason"] == 28 and ev["pdata"][:len(prej)] == prej,
       "B rejects with private data: A gets REJECTED CONNECTION_REFUSED with it (%s)" %
       (ev and {k: v for k, v in ev.items() if k != "pdata"}))
    st, _ = b.request(NF.OP_CM_ACCEPT, struct.pack(NF.CM_ACCEPT_REQ_FMT, req["conn_id"] if req else 0, qp(b), 0, 0, 0,
                                                   0))
    ok(st == NF.STATUS_INVALID_PARAMETER, "an accept of the rejected connection: INVALID_PARAMETER (%s)" % st)
    # nobody has the address
    t0 = time.monotonic()
    st, (c4, _) = connect(a, q2, "10.67.0.77", PORT)
    ev = a.event(c4)
    ok(st == 0 and ev and ev["type"] == NF.CM_EVENT_TYPE_FAILED and ev["status"] == NF.STATUS_HOST_UNREACHABLE,
       "a connect to an address nobody has: FAILED HOST_UNREACHABLE after %.1f s (%s)" % (time.monotonic() - t0, ev))
    st, _ = connect(a, qa, ips[1], PORT)
    ok(st == NF.STATUS_INVALID_DEVICE_STATE, "a connect on a connected QP: INVALID_DEVICE_STATE (%s)" % st)

    # disconnect with a long Write queued: it completes CANCELLED, B sees DISCONNECTED once
    big = 65536
    st, rep = b.request(NF.OP_MR_CREATE, struct.pack(NF.MR_CREATE_REQ_FMT, PD, 0))
    token = struct.unpack_from("<I", rep, NF.MR_CREATE_REP_TOKEN_OFF)[0]
    page = NF.ADAPTER_PAGE_SIZE
    base = user + 0x20000
    pages = b"".join(struct.pack("<Q", base + k * page) for k in range(big // page))
    rw = NF.NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NF.NDK_MR_FLAG_ALLOW_REMOTE_WRITE
    st, _ = b.request(NF.OP_MR_REGISTER, struct.pack(NF.MR_REGISTER_REQ_FMT, token, rw, base, big, 0, big // page) +
                      pages)
    assert st == 0, hex(st)
    write = struct.pack(NF.WR_HDR_FMT, qa, 21, 0, 0) + struct.pack(NF.WR_RDMA_FMT, base, token, 1) + \
        struct.pack(NF.SGE_FMT, user + 0x20000, big, priv)
    # the DREQ leaves before the Write's packets, so B's DREP comes back before any ACK:
    # the Write is still queued when the QP leaves the wire
    ((st, _), _) = a.requests([(NF.OP_CM_DISCONNECT, struct.pack(NF.QP_REQ_FMT, qa, 0), True),
                               (NF.OP_WR_WRITE, write, False)])
    ok(st == 0, "A disconnects and queues a 64 KiB Write in the same link frame (%s)" % st)
    ev = a.event(ca)
    ok(ev and ev["type"] == NF.CM_EVENT_TYPE_DISCONNECTED and ev["status"] == 0,
       "A gets DISCONNECTED: B's DREP came (%s)" % ev)
    c = a.cqe(21, (b,))
    ok(c and c["status"] == NF.STATUS_CANCELLED, "the queued Write completes CANCELLED (%s)" % c)
    ev = b.event(cb)
    ok(ev and ev["type"] == NF.CM_EVENT_TYPE_DISCONNECTED and ev["status"] == 0, "B gets DISCONNECTED (%s)" % ev)
    ok(b.event(cb, 1.0) is None, "... once")
    st, _ = b.request(NF.OP_CM_DISCONNECT, struct.pack(NF.QP_REQ_FMT, qb, 0))
    ev = b.event(cb)
    ok(st == 0 and ev and ev["type"] == NF.CM_EVENT_TYPE_DISCONNECTED and ev["status"] == 0,
       "B disconnects its side: DISCONNECTED at once, no DREQ (%s, %s)" % (st, ev))
    st, _ = a.request(NF.OP_CM_DISCONNECT, struct.pack(NF.QP_REQ_FMT, qa, 0))
    ok(st == NF.STATUS_INVALID_DEVICE_STATE, "a second disconnect: INVALID_DEVICE_STATE (%s)" % st)
    a.wr(NF.OP_WR_SEND, qa, 22, struct.pack(NF.WR_SEND_FMT, 0, 1) + struct.pack(NF.SGE_FMT, user, 8, priv))
    c = a.cqe(22, (b,))
    ok(c and c["status"] == NF.STATUS_CANCELLED, "a later Send on the disconnected QP: CANCELLED (%s)" % c)

    # The path MTU: the REQ offers the connector's, the REP carries the smaller of it and
    # the acceptor's; both QPs then send packets of that size. A smaller MTU on either side
    # gives 256-byte packets both ways.
    def port_tx(h):
        st, rep = h.request(NF.OP_STATS, b"")
        return struct.unpack_from("<I", rep, NF.STATS_PORT_TX_OFF)[0] if st == 0 else 0

    st, _ = connect(a, qp(a), ips[1], PORT, mtu=NF.NET_MAX_PATH_MTU + 1)
    ok(st == NF.STATUS_INVALID_PARAMETER, "a connect with a path MTU past the largest: INVALID_PARAMETER (%s)" % st)
    n, small = 3000, 128 << NF.PATH_MTU_256
    for side, (mtu_a, mtu_b) in (("A", (NF.PATH_MTU_256, 0)), ("B", (0, NF.PATH_MTU_256))):
        qm_a, qm_b = qp(a), qp(b)
        st, (cm, _) = connect(a, qm_a, ips[1], PORT, mtu=mtu_a)
        req = b.event()
        accept = lambda mtu: b.request(NF.OP_CM_ACCEPT, struct.pack(  # noqa: E731
            NF.CM_ACCEPT_REQ_FMT, req["conn_id"] if req else 0, qm_b, 0, 0, 0, mtu))[0]
        bad = accept(NF.NET_MAX_PATH_MTU + 1)
        ok(bad == NF.STATUS_INVALID_PARAMETER, "an accept with a path MTU past the largest: INVALID_PARAMETER (%s)" % bad)
        st2 = accept(mtu_b)
        rep = a.event(cm)
        st3 = a.request(NF.OP_CM_COMPLETE, struct.pack(NF.CM_ID_REQ_FMT, cm, 0))[0] if rep else None
        est = b.event(req["conn_id"]) if req else None
        ok(st == st2 == st3 == 0 and rep and rep["type"] == NF.CM_EVENT_TYPE_REPLY and est and
           est["type"] == NF.CM_EVENT_TYPE_ESTABLISHED,
           "%s asks for a %d-byte path MTU: connected (%s, %s, %s)" % (side, small, st, st2, st3))
        got = []
        for src, dst, qs, qd, at in ((a, b, qm_a, qm_b, 0x8000), (b, a, qm_b, qm_a, 0x4000)):
            dst.wr(NF.OP_WR_RECEIVE, qd, 30, struct.pack(NF.WR_RECEIVE_FMT, 1, 0) +
                   struct.pack(NF.SGE_FMT, user + at, 4096, priv))
            src.write_mem(user + 0x10000, data)
            tx0 = port_tx(src)
            src.wr(NF.OP_WR_SEND, qs, 31, struct.pack(NF.WR_SEND_FMT, 0, 1) +
                   struct.pack(NF.SGE_FMT, user + 0x10000, n, priv))
            cs, cr = src.cqe(31, (dst,)), dst.cqe(30, (src,))
            got.append((cs and cs["status"] == 0 and cr and cr["bytes"] == n and
                        dst.read_mem(user + at, n) == data[:n], port_tx(src) - tx0))
        ok(all(g[0] and g[1] >= -(-n // small) for g in got),
           "... a %d-byte Send each way, every byte checked, in %s packets: %d-byte packets both ways" %
           (n, " and ".join(str(g[1]) for g in got), small))
    return fail


if __name__ == "__main__":
    sys.exit(main())
