#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A minimal host for nfmodel's socket: RESET handshake, then PINGs and INFO with a
stop-and-wait retransmission, so it also works under --drop/--corrupt/--dup. Prints
one TAP line per check. Usage: nfmodel_client.py SOCKET COUNT NAME, or
nfmodel_client.py --handover SOCKET PID NAME: the one-host-at-a-time rule at a hand-over
(PID: the adapter's, nfmodel or nfsim, stopped while one host quits and the next connects)."""
import os
import signal
import socket
import struct
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "proto", "gen"))
import nf_layout as NF  # noqa: E402  (generated from proto/)

FLAG, ESC, ESC_XOR = NF.LINK_FLAG, NF.LINK_ESC, NF.LINK_ESC_XOR
DATA, ACK, RESET, RESET_ACK = NF.LINK_TYPE_DATA, NF.LINK_TYPE_ACK, NF.LINK_TYPE_RESET, NF.LINK_TYPE_RESET_ACK
OP_PING, OP_INFO, OP_REPLY = NF.OP_PING, NF.OP_INFO, NF.OP_REPLY
INFO_FMT = NF.INFO_FMT
MSG_FMT, MSG_SIZE = NF.MSG_HDR_FMT, NF.MSG_HDR_SIZE


def encode(raw):
    raw += struct.pack("<I", zlib.crc32(raw) & 0xFFFFFFFF)
    out = bytearray([FLAG])
    for b in raw:
        if b in (FLAG, ESC):
            out += bytes([ESC, b ^ ESC_XOR])
        else:
            out.append(b)
    out.append(FLAG)
    return bytes(out)


class Link:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.s.settimeout(0.05)
        self.buf = bytearray()
        self.esc = False
        self.in_frame = False
        self.tx_seq = 0
        self.rx_expect = 0

    def send(self, typ, seq, ack, rsvd=0, payload=b""):
        self.s.sendall(encode(struct.pack(NF.LINK_HDR_FMT, typ, seq, ack, 0, len(payload), rsvd) + payload))

    def frames(self):
        """Good frames that arrived within the socket timeout."""
        try:
            data = self.s.recv(65536)
        except socket.timeout:
            return []
        if not data:
            raise EOFError
        out = []
        for b in data:
            if b == FLAG:
                if self.in_frame and len(self.buf) >= NF.LINK_HDR_SIZE + NF.LINK_CRC_BYTES and not self.esc:
                    raw, crc = bytes(self.buf[:-4]), struct.unpack("<I", self.buf[-4:])[0]
                    hdr = dict(zip(NF.LINK_HDR_FIELDS, struct.unpack(NF.LINK_HDR_FMT, raw[:NF.LINK_HDR_SIZE])))
                    if zlib.crc32(raw) & 0xFFFFFFFF == crc and hdr["len"] == len(raw) - NF.LINK_HDR_SIZE:
                        out.append(raw)
                self.buf = bytearray()
                self.esc = False
                self.in_frame = True
            elif self.in_frame:
                if b == ESC and not self.esc:
                    self.esc = True
                    continue
                if self.esc:
                    b ^= ESC_XOR
                    self.esc = False
                self.buf.append(b)
        return out

    def reset(self, nonce):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            self.send(RESET, 0, 0, nonce)
            t = time.monotonic()
            while time.monotonic() - t < 0.3:
                for f in self.frames():
                    rsvd = struct.unpack_from("<H", f, NF.LINK_HDR_RSVD_OFF)[0]
                    if f[0] == RESET_ACK and rsvd == nonce:
                        self.tx_seq = self.rx_expect = 0
                        return struct.unpack(INFO_FMT, f[NF.LINK_HDR_SIZE:NF.LINK_HDR_SIZE + NF.INFO_SIZE])
        return None

    def request(self, op, tag, body):
        msg = struct.pack(MSG_FMT, op, MSG_SIZE + len(body), tag, 0, 0) + body
        seq = self.tx_seq
        self.tx_seq = (self.tx_seq + 1) & 0xFF
        deadline = time.monotonic() + 20
        last = 0
        while time.monotonic() < deadline:
            if time.monotonic() - last > 0.1:
                self.send(DATA, seq, self.rx_expect, 0, msg)
                last = time.monotonic()
            for f in self.frames():
                if f[0] != DATA:
                    continue
                if f[1] == self.rx_expect:
                    self.rx_expect = (self.rx_expect + 1) & 0xFF
                    payload = f[8:]
                    self.send(ACK, 0, self.rx_expect)
                    off = 0
                    while off + MSG_SIZE <= len(payload):
                        rop, rlen, rtag, st, _ = struct.unpack(MSG_FMT, payload[off:off + MSG_SIZE])
                        if rop == op | OP_REPLY and rtag == tag:
                            return st, payload[off + MSG_SIZE:off + rlen]
                        off += max(rlen, MSG_SIZE)
                else:
                    self.send(ACK, 0, self.rx_expect)
        return None, None


def main():
    path, count, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    link = Link(path)
    fail = 0

    def ok(cond, what):
        nonlocal fail
        print(("ok - " if cond else "not ok - ") + name + ": " + what, flush=True)
        fail |= not cond

    info = link.reset(0x5A17)
    info = info and dict(zip(NF.INFO_FIELDS, info))
    ok(info is not None and info["mpt_entries"] > 0 and info["rx_slots"] > 0, "RESET handshake returns INFO")
    good = 0
    for i in range(count):
        body = struct.pack("<II", i, i * 2654435761 & 0xFFFFFFFF) * (1 + i % 16)
        st, rep = link.request(OP_PING, 1000 + i, body)
        good += st == 0 and rep == body
    ok(good == count, "%d of %d PINGs echoed exactly once each" % (good, count))
    st, rep = link.request(OP_INFO, 7, b"")
    ok(st == 0 and rep is not None and len(rep) == NF.INFO_SIZE, "INFO after the PINGs")
    if rep:
        f = dict(zip(NF.INFO_FIELDS, struct.unpack(INFO_FMT, rep)))
        print("# %s: rx_ok %d rx_bad %d rx_drop %d tx %d retransmits %d rx_dup %d" % (name, f["rx_ok"], f["rx_bad"],
              f["rx_drop"], f["tx_frames"], f["retransmits"], f["rx_dup"]))
    return 1 if fail else 0


def stopped(pid):
    """Whether the process is stopped (its state in /proc), None where /proc does not say."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return None


def handover(path, pid, name):
    """A host that connects the moment the attached one quits is served (the adapter sees
    both at once: it is stopped in between); one that connects while a host is attached is
    turned away, and the attached host goes on."""
    fail = 0

    def ok(cond, what):
        nonlocal fail
        print(("ok - " if cond else "not ok - ") + name + ": hand-over: " + what, flush=True)
        fail |= not cond

    first = Link(path)
    ok(first.reset(0x0101) is not None, "the first host's RESET handshake")
    os.kill(pid, signal.SIGSTOP)
    try:
        deadline = time.monotonic() + 5  # SIGSTOP takes effect at once; this bounds the wait
        while stopped(pid) is False and time.monotonic() < deadline:
            time.sleep(0.001)
        first.s.close()
        nxt = Link(path)
    finally:
        os.kill(pid, signal.SIGCONT)
    try:
        served = nxt.reset(0x0202) is not None
    except (EOFError, OSError):
        served = False
    ok(served, "a host that connects as the attached one quits is served")
    if not served:
        return 1
    try:
        other = Link(path)
        refused = other.reset(0x0303) is None
    except (EOFError, OSError):
        refused = True
    ok(refused, "a host that connects while one is attached is turned away")
    st, rep = nxt.request(OP_PING, 1, b"stillon!")
    ok(st == 0 and rep == b"stillon!", "the attached host goes on (%s, %s)" % (st, rep))
    return fail


if __name__ == "__main__":
    if sys.argv[1:2] == ["--handover"]:
        sys.exit(handover(sys.argv[2], int(sys.argv[3]), sys.argv[4]))
    sys.exit(main())
