#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Two simulated adapters on one wire exchange RoCEv2 RC traffic, driven through their host
links: addresses (NET_CONFIG), QPs connected across the wire (QP_CONNECT_WIRE), then Send/
Receive both ways, RDMA Write and Read across MTU boundaries with every byte checked,
path MTUs of 256 bytes and the adapter's largest (larger ones refused), the remote access
refusal (both QPs break), and QP_DISCONNECT with requests queued (each CANCELLED once). Prints TAP lines.
With PID_B (adapter B's simulator), B is then killed in the middle of a Write.
Usage: rc_pair.py SOCKET_A SOCKET_B [PID_B]"""
import os
import random
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "firmware", "tests"))
from nfmodel_client import DATA, ACK, NF, Link  # noqa: E402

WAIT_S = 120  # the longest one request or completion may take: every wait has a bound
PD = 1


def word(dotted):
    return struct.unpack("<I", bytes(int(x) for x in dotted.split(".")))[0]


class Host:
    """One adapter's host: requests with their replies, and the CQEs that arrive meanwhile."""

    def __init__(self, name, path, peer=None):
        self.name, self.link, self.peer = name, Link(path), peer
        self.tag, self.replies, self.cqes = 1, {}, []

    def take(self):
        """Frames that arrived: acknowledged, their messages sorted into replies and CQEs."""
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
                    elif op & NF.OP_REPLY:
                        self.replies[tag] = (st, body)
                    off += max(ln, NF.MSG_HDR_SIZE)
            self.link.send(ACK, 0, self.link.rx_expect)

    def post(self, op, body):
        """Send one message (retransmitted until acknowledged by a reply or the link)."""
        tag = self.tag
        self.tag += 1
        msg = struct.pack(NF.MSG_HDR_FMT, op, NF.MSG_HDR_SIZE + len(body), tag, 0, 0) + body
        seq = self.link.tx_seq
        self.link.tx_seq = (seq + 1) & 0xFF
        self.link.send(DATA, seq, self.link.rx_expect, 0, msg)
        return tag, seq, msg

    def request(self, op, body):
        tag, seq, msg = self.post(op, body)
        deadline, last = time.monotonic() + WAIT_S, time.monotonic()
        while time.monotonic() < deadline:
            self.take()
            if self.peer:
                self.peer.take()
            if tag in self.replies:
                return self.replies.pop(tag)
            if time.monotonic() - last > 0.5:
                self.link.send(DATA, seq, self.link.rx_expect, 0, msg)
                last = time.monotonic()
        return None, b""

    def wr(self, op, qpn, wr_id, body, flags=0):
        """A work request: no reply, a CQE later (the link's ack is its delivery)."""
        tag, seq, msg = self.post(op, struct.pack(NF.WR_HDR_FMT, qpn, wr_id, flags, 0) + body)
        return seq, msg

    def cqe(self, wr_id, others=()):
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            for h in (self,) + tuple(others):
                h.take()
            for c in self.cqes:
                if c["wr_id"] == wr_id:
                    self.cqes.remove(c)
                    return c
        return None

    def write_mem(self, addr, data):
        for off in range(0, len(data), 512):
            st, _ = self.request(NF.OP_MEM_WRITE, struct.pack(NF.MEM_WRITE_REQ_FMT, addr + off, len(data[off:off + 512])) +
                                 data[off:off + 512])
            assert st == 0, st

    def read_mem(self, addr, n):
        out = b""
        while len(out) < n:
            k = min(512, n - len(out))
            st, body = self.request(NF.OP_MEM_READ, struct.pack(NF.MEM_READ_REQ_FMT, addr + len(out), k))
            assert st == 0, st
            out += body[:k]
        return out


def bring_up(a, b, ips, nonce, mac_byte, ok):
    """RESET both adapters' links, then give each its address (a /24) and a MAC of its own
    (02:6e:00:MAC_BYTE+i:00:01). The user region's base, or None when a RESET failed."""
    infos = [h.link.reset(nonce + i) for i, h in enumerate((a, b))]
    ok(all(infos), "RESET handshake with both adapters")
    if not all(infos):
        return None
    for i, h in enumerate((a, b)):
        body = struct.pack(NF.NET_CONFIG_REQ_FMT, NF.NET_CONFIG_FLAG_ADDR | NF.NET_CONFIG_FLAG_MAC, word(ips[i]),
                           word("255.255.255.0"), 0, 0x006E0002 | (mac_byte + i) << 24, 0x0100)
        st, _ = h.request(NF.OP_NET_CONFIG, body)
        ok(st == 0, "adapter %s takes %s and its own MAC (%s)" % (h.name, ips[i], st))
    return dict(zip(NF.INFO_FIELDS, infos[0]))["user_base"]


def new_qp(h):
    """A QP of PD on adapter h (16 requests, 16 receives of 2 SGEs): its number."""
    st, rep = h.request(NF.OP_QP_CREATE, struct.pack(NF.QP_CREATE_REQ_FMT, PD, 16, 16, 2))
    assert st == 0, hex(st)
    return struct.unpack_from("<I", rep, NF.QP_CREATE_REP_QPN_OFF)[0]


def main():
    a, b = Host("A", sys.argv[1]), Host("B", sys.argv[2])
    a.peer, b.peer = b, a
    fail = 0

    def ok(cond, what):
        nonlocal fail
        print(("ok - " if cond else "not ok - ") + "rc: " + what, flush=True)
        fail |= not cond

    ips = ("10.66.0.1", "10.66.0.2")
    user = bring_up(a, b, ips, 0x5200, 0x10, ok)
    if user is None:
        return 1
    qp = new_qp

    def mr(h, addr, n, flags):
        st, rep = h.request(NF.OP_MR_CREATE, struct.pack(NF.MR_CREATE_REQ_FMT, PD, 0))
        assert st == 0, hex(st)
        token = struct.unpack_from("<I", rep, NF.MR_CREATE_REP_TOKEN_OFF)[0]
        page = NF.ADAPTER_PAGE_SIZE
        first = addr & ~(page - 1)
        npages = (addr + n - first + page - 1) // page
        pages = b"".join(struct.pack("<Q", first + k * page) for k in range(npages))
        st, _ = h.request(NF.OP_MR_REGISTER, struct.pack(NF.MR_REGISTER_REQ_FMT, token, flags, addr, n, addr - first,
                                                         npages) + pages)
        assert st == 0, hex(st)
        return token

    def connect(h, q, peer_q, peer_ip, sq, rq, mtu=0):
        """QP_CONNECT_WIRE (path MTU mtu, PATH_MTU; 0: the adapter's largest), asked again
        while the peer's MAC is being resolved (PENDING)."""
        deadline, st = time.monotonic() + 20, None
        while time.monotonic() < deadline:
            st, _ = h.request(NF.OP_QP_CONNECT_WIRE, struct.pack(NF.QP_CONNECT_WIRE_REQ_FMT, q, peer_q, word(peer_ip),
                                                                 sq, rq, mtu))
            if st != NF.STATUS_PENDING:
                break
            time.sleep(0.2)
        return st

    qa, qb = qp(a), qp(b)
    # the connection's PSNs start anywhere in the 24-bit space: near the wrap here
    psn_a, psn_b = 0xFFFFF0, 0x000123
    conn = []
    for h, q, peer_q, peer_ip, sq, rq in ((a, qa, qb, ips[1], psn_a, psn_b), (b, qb, qa, ips[0], psn_b, psn_a)):
        conn.append(connect(h, q, peer_q, peer_ip, sq, rq))
    ok(conn == [0, 0], "QPs connected across the wire (the peer's MAC resolved by ARP): %s" % conn)
    if conn != [0, 0]:
        return 1

    priv = 0xFFFFFFFF  # the privileged token: local SGEs name adapter addresses
    rw = NF.NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NF.NDK_MR_FLAG_ALLOW_REMOTE_READ | NF.NDK_MR_FLAG_ALLOW_REMOTE_WRITE
    size = 6000  # crosses MTU boundaries: FIRST, MIDDLE..., LAST
    a_src, a_dst, b_buf, b_rcv = user, user + 0x4000, user + 0x8000, user + 0xC000
    rnd = random.Random(7)
    data_a = bytes(rnd.randrange(256) for _ in range(size))
    data_b = bytes(rnd.randrange(256) for _ in range(size))
    a.write_mem(a_src, data_a)
    b.write_mem(b_buf, data_b)
    b_token = mr(b, b_buf, size, rw)

    def sge(addr, n, token=priv):
        return struct.pack(NF.SGE_FMT, addr, n, token)

    # Send/Receive, A to B, a message of several packets into two receive SGEs
    for n in (1, 1024, 1025, size):
        b.wr(NF.OP_WR_RECEIVE, qb, 100 + n, struct.pack(NF.WR_RECEIVE_FMT, 2, 0) + sge(b_rcv, 3000) +
             sge(b_rcv + 3000, 3000))
        a.wr(NF.OP_WR_SEND, qa, 200 + n, struct.pack(NF.WR_SEND_FMT, 0, 1) + sge(a_src, n))
        cs, cr = a.cqe(200 + n, (b,)), b.cqe(100 + n, (a,))
        got = b.read_mem(b_rcv, n) if cr else b""
        ok(cs and cs["status"] == 0 and cr and cr["status"] == 0 and cr["bytes"] == n and got == data_a[:n],
           "Send of %d bytes A->B: both complete, every byte arrives (%s, %s)" % (n, cs, cr))
    # and back, B to A
    a.wr(NF.OP_WR_RECEIVE, qa, 300, struct.pack(NF.WR_RECEIVE_FMT, 1, 0) + sge(a_dst, size))
    b.wr(NF.OP_WR_SEND, qb, 301, struct.pack(NF.WR_SEND_FMT, 0, 1) + sge(b_buf, 2500))
    cs, cr = b.cqe(301, (a,)), a.cqe(300, (b,))
    ok(cs and cs["status"] == 0 and cr and cr["bytes"] == 2500 and a.read_mem(a_dst, 2500) == data_b[:2500],
       "Send of 2500 bytes B->A")
    # RDMA Write A -> B's MR, then Read it back into A
    for n in (1, 1023, 1024, 4097, size):
        off = n % 7
        a.wr(NF.OP_WR_WRITE, qa, 400 + n, struct.pack(NF.WR_RDMA_FMT, b_buf + off, b_token, 1) +
             sge(a_src, min(n, size - off)))
        c = a.cqe(400 + n, (b,))
        want = data_a[:min(n, size - off)]
        ok(c and c["status"] == 0 and b.read_mem(b_buf + off, len(want)) == want,
           "RDMA Write of %d bytes into B's MR at offset %d (%s)" % (len(want), off, c))
    b_now = b.read_mem(b_buf, size)
    for n in (1, 1024, 3000, size):
        a.wr(NF.OP_WR_READ, qa, 500 + n, struct.pack(NF.WR_RDMA_FMT, b_buf, b_token, 1) + sge(a_dst, n))
        c = a.cqe(500 + n, (b,))
        ok(c and c["status"] == 0 and c["bytes"] == n and a.read_mem(a_dst, n) == b_now[:n],
           "RDMA Read of %d bytes from B's MR (%s)" % (n, c))
    # more READs at once than the responder answers (CM.MAX_RD): the requester holds the rest back
    many = 6
    for i in range(many):
        a.wr(NF.OP_WR_READ, qa, 550 + i, struct.pack(NF.WR_RDMA_FMT, b_buf + 1000 * i, b_token, 1) +
             sge(a_dst + 1000 * i, 1000))
    cs = [a.cqe(550 + i, (b,)) for i in range(many)]
    got = a.read_mem(a_dst, 1000 * many) if all(cs) else b""
    ok(all(c and c["status"] == 0 for c in cs) and got == b_now[:1000 * many],
       "%d RDMA Reads posted at once, more than the responder's %d: all complete, every byte (%s)" % (
           many, NF.CM_MAX_RD, [c and c["status"] for c in cs]))
    # a long transfer: many packets in flight, TX slots waited for, AckReq within the message
    big = 65536
    big_a, big_b = user + 0x20000, user + 0x40000
    data_big = bytes(rnd.randrange(256) for _ in range(big))
    a.write_mem(big_a, data_big)
    big_token = mr(b, big_b, big, rw)
    a.wr(NF.OP_WR_WRITE, qa, 700, struct.pack(NF.WR_RDMA_FMT, big_b, big_token, 1) + sge(big_a, big))
    c = a.cqe(700, (b,))
    ok(c and c["status"] == 0 and b.read_mem(big_b, big) == data_big, "RDMA Write of %d bytes (%s)" % (big, c))
    a.wr(NF.OP_WR_READ, qa, 701, struct.pack(NF.WR_RDMA_FMT, big_b, big_token, 2) + sge(big_a + big, big // 2 + 3) +
         sge(big_a + 2 * big, big // 2 - 3))
    c = a.cqe(701, (b,))
    got = a.read_mem(big_a + big, big // 2 + 3) + a.read_mem(big_a + 2 * big, big // 2 - 3) if c else b""
    ok(c and c["status"] == 0 and got == data_big, "RDMA Read of %d bytes into two SGEs (%s)" % (big, c))
    # Path MTUs: the adapter reports its largest (its frames and slots bound it); larger
    # values are refused; 256 bytes and the largest carry a Send, a Write and a Read,
    # every byte checked, in as many packets as the MTU makes
    st, rep = a.request(NF.OP_NET_CONFIG, struct.pack(NF.NET_CONFIG_REQ_FMT, 0, 0, 0, 0, 0, 0))
    cfg = dict(zip(NF.NET_CONFIG_REP_FIELDS, struct.unpack(NF.NET_CONFIG_REP_FMT, rep[:NF.NET_CONFIG_REP_SIZE])))
    top = cfg["max_mtu"]
    ok(st == 0 and top == NF.NET_MAX_PATH_MTU, "A reports its largest path MTU: %d bytes (%s)" % (128 << top, cfg))
    qt = qp(a)
    refused = [connect(a, qt, qb, ips[1], 1, 1, m) for m in range(top + 1, NF.PATH_MTU_4096 + 2)]
    ok(refused and all(r == NF.STATUS_INVALID_PARAMETER for r in refused),
       "path MTUs past %d bytes (%s) are refused INVALID_PARAMETER (%s)" %
       (128 << top, ", ".join(str(128 << m) for m in range(top + 1, NF.PATH_MTU_4096 + 2)), refused))

    def port_tx(h):
        st, rep = h.request(NF.OP_STATS, b"")
        return struct.unpack_from("<I", rep, NF.STATS_PORT_TX_OFF)[0] if st == 0 else 0

    for mtu in sorted({NF.PATH_MTU_256, top}):
        mbytes = 128 << mtu
        qm_a, qm_b = qp(a), qp(b)
        st = [connect(h, q, peer_q, peer_ip, 0x40 + mtu, 0x40 + mtu, mtu)
              for h, q, peer_q, peer_ip in ((a, qm_a, qm_b, ips[1]), (b, qm_b, qm_a, ips[0]))]
        ok(st == [0, 0], "QPs connected with a %d-byte path MTU (%s)" % (mbytes, st))
        n = 4999
        b.wr(NF.OP_WR_RECEIVE, qm_b, 1000 + mtu, struct.pack(NF.WR_RECEIVE_FMT, 1, 0) + sge(b_rcv, size))
        a.wr(NF.OP_WR_SEND, qm_a, 1010 + mtu, struct.pack(NF.WR_SEND_FMT, 0, 1) + sge(a_src + 1, n))
        cs, cr = a.cqe(1010 + mtu, (b,)), b.cqe(1000 + mtu, (a,))
        ok(cs and cs["status"] == 0 and cr and cr["bytes"] == n and b.read_mem(b_rcv, n) == data_a[1:n + 1],
           "%d-byte MTU: Send of %d bytes, every byte arrives (%s, %s)" % (mbytes, n, cs, cr))
        tx0 = port_tx(a)
        a.wr(NF.OP_WR_WRITE, qm_a, 1020 + mtu, struct.pack(NF.WR_RDMA_FMT, b_buf + 3, b_token, 1) +
             sge(a_src, n))
        c = a.cqe(1020 + mtu, (b,))
        sent = port_tx(a) - tx0
        ok(c and c["status"] == 0 and b.read_mem(b_buf + 3, n) == data_a[:n] and sent >= -(-n // mbytes),
           "%d-byte MTU: RDMA Write of %d bytes in %d packets, every byte checked (%s)" % (mbytes, n, sent, c))
        b_now = b.read_mem(b_buf, size)
        a.wr(NF.OP_WR_READ, qm_a, 1030 + mtu, struct.pack(NF.WR_RDMA_FMT, b_buf + 1, b_token, 1) + sge(a_dst, n))
        c = a.cqe(1030 + mtu, (b,))
        ok(c and c["status"] == 0 and c["bytes"] == n and a.read_mem(a_dst, n) == b_now[1:n + 1],
           "%d-byte MTU: RDMA Read of %d bytes, every byte checked (%s)" % (mbytes, n, c))
    # a Read past the MR's end: refused at B, ACCESS_VIOLATION at A, both QPs broken
    a.wr(NF.OP_WR_READ, qa, 600, struct.pack(NF.WR_RDMA_FMT, b_buf + size - 8, b_token, 1) + sge(a_dst, 64))
    c = a.cqe(600, (b,))
    ok(c and c["status"] == NF.STATUS_ACCESS_VIOLATION, "a Read past the MR's end completes ACCESS_VIOLATION (%s)" % c)
    a.wr(NF.OP_WR_SEND, qa, 601, struct.pack(NF.WR_SEND_FMT, 0, 1) + sge(a_src, 8))
    c = a.cqe(601, (b,))
    ok(c and c["status"] == NF.STATUS_CANCELLED, "the requester's QP is broken: the next Send is CANCELLED (%s)" % c)
    b.wr(NF.OP_WR_SEND, qb, 602, struct.pack(NF.WR_SEND_FMT, 0, 1) + sge(b_buf, 8))
    c = b.cqe(602, (a,))
    ok(c and c["status"] == NF.STATUS_CANCELLED, "the responder's QP is broken too (%s)" % c)
    # QP_DISCONNECT with Writes queued on the wire: each completes once, the ones not yet
    # acknowledged CANCELLED; the peer's later request to the gone QP times out
    qa3, qb3 = qp(a), qp(b)
    for h, q, peer_q, peer_ip in ((a, qa3, qb3, ips[1]), (b, qb3, qa3, ips[0])):
        st = connect(h, q, peer_q, peer_ip, 0x10, 0x10)
        assert st == 0, hex(st)
    wr_ids = range(900, 904)
    for w in wr_ids:
        a.wr(NF.OP_WR_WRITE, qa3, w, struct.pack(NF.WR_RDMA_FMT, big_b, big_token, 1) + sge(big_a, big))
    st, _ = a.request(NF.OP_QP_DISCONNECT, struct.pack(NF.QP_REQ_FMT, qa3, 0))
    cs = [a.cqe(w, (b,)) for w in wr_ids]
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:  # a second CQE would come with the first ones
        a.take()
        b.take()
    again = [c for c in a.cqes if c["wr_id"] in wr_ids]
    ok(st == 0 and all(c and c["status"] in (0, NF.STATUS_CANCELLED) for c in cs) and cs[-1] and
       cs[-1]["status"] == NF.STATUS_CANCELLED and not again,
       "QP_DISCONNECT with 4 Writes of %d bytes queued: each completes once, the last CANCELLED (%s, %s)" %
       (big, st, [c and hex(c["status"]) for c in cs]))
    b.wr(NF.OP_WR_SEND, qb3, 910, struct.pack(NF.WR_SEND_FMT, 0, 1) + sge(b_buf, 8))
    t0 = time.monotonic()
    c = b.cqe(910, (a,))
    ok(c and c["status"] == NF.STATUS_IO_TIMEOUT,
       "the peer's next Send to the disconnected QP times out after %.0f s (%s)" % (time.monotonic() - t0, c))
    st, _ = a.request(NF.OP_PING, b"")
    ok(st == 0, "A answers after the disconnect (%s)" % st)
    # the peer adapter dies mid-transfer: the request fails IO_TIMEOUT within the retry bound
    if len(sys.argv) > 3:
        qa2, qb2 = qp(a), qp(b)
        for h, q, peer_q, peer_ip in ((a, qa2, qb2, ips[1]), (b, qb2, qa2, ips[0])):
            st = connect(h, q, peer_q, peer_ip, 7, 7)
            assert st == 0, hex(st)
        a.wr(NF.OP_WR_WRITE, qa2, 800, struct.pack(NF.WR_RDMA_FMT, big_b, big_token, 1) + sge(big_a, big))
        os.kill(int(sys.argv[3]), 9)
        a.peer = b.peer = None  # B's link is gone with it
        t0 = time.monotonic()
        c = a.cqe(800)
        ok(c and c["status"] == NF.STATUS_IO_TIMEOUT,
           "the peer killed mid-Write: IO_TIMEOUT after %.0f s (%s)" % (time.monotonic() - t0, c))
        a.wr(NF.OP_WR_SEND, qa2, 801, struct.pack(NF.WR_SEND_FMT, 0, 1) + sge(a_src, 8))
        c = a.cqe(801)
        ok(c and c["status"] == NF.STATUS_CANCELLED, "... and the QP is broken: CANCELLED (%s)" % c)
    st, rep = a.request(NF.OP_STATS, b"")
    if st == 0:
        for k in ("net_rx", "net_unhandled", "net_tx_dropped", "rc_retransmits", "port_rx_ok", "port_tx"):
            print("# A %s %d" % (k, struct.unpack_from("<I", rep, getattr(NF, "STATS_%s_OFF" % k.upper()))[0]))
    return fail


if __name__ == "__main__":
    sys.exit(main())
