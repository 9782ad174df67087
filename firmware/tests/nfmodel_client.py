#!/usr/bin/env python3
"""A minimal host for nfmodel's socket: RESET handshake, then PINGs and INFO with a
stop-and-wait retransmission, so it also works under --drop/--corrupt/--dup. Prints
one TAP line per check. Usage: nfmodel_client.py SOCKET COUNT NAME"""
import socket
import struct
import sys
import time
import zlib

FLAG, ESC, ESC_XOR = 0x7E, 0x7D, 0x20
DATA, ACK, RESET, RESET_ACK = 1, 2, 3, 4
OP_PING, OP_INFO, OP_REPLY = 0x0001, 0x0002, 0x8000
INFO_FMT = "<28I"


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
        self.s.sendall(encode(struct.pack("<BBBBHH", typ, seq, ack, 0, len(payload), rsvd) + payload))

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
                if self.in_frame and len(self.buf) >= 12 and not self.esc:
                    raw, crc = bytes(self.buf[:-4]), struct.unpack("<I", self.buf[-4:])[0]
                    if zlib.crc32(raw) & 0xFFFFFFFF == crc and struct.unpack("<H", raw[4:6])[0] == len(raw) - 8:
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
        deadline = time.time() + 10
        while time.time() < deadline:
            self.send(RESET, 0, 0, nonce)
            t = time.time()
            while time.time() - t < 0.3:
                for f in self.frames():
                    if f[0] == RESET_ACK and struct.unpack("<H", f[6:8])[0] == nonce:
                        self.tx_seq = self.rx_expect = 0
                        return struct.unpack(INFO_FMT, f[8:8 + 112])
        return None

    def request(self, op, tag, body):
        msg = struct.pack("<HHIII", op, 16 + len(body), tag, 0, 0) + body
        seq = self.tx_seq
        self.tx_seq = (self.tx_seq + 1) & 0xFF
        deadline = time.time() + 20
        last = 0
        while time.time() < deadline:
            if time.time() - last > 0.1:
                self.send(DATA, seq, self.rx_expect, 0, msg)
                last = time.time()
            for f in self.frames():
                if f[0] != DATA:
                    continue
                if f[1] == self.rx_expect:
                    self.rx_expect = (self.rx_expect + 1) & 0xFF
                    payload = f[8:]
                    self.send(ACK, 0, self.rx_expect)
                    off = 0
                    while off + 16 <= len(payload):
                        rop, rlen, rtag, st, _ = struct.unpack("<HHIII", payload[off:off + 16])
                        if rop == op | OP_REPLY and rtag == tag:
                            return st, payload[off + 16:off + rlen]
                        off += max(rlen, 16)
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
    ok(info is not None and info[8] > 0 and info[13] > 0, "RESET handshake returns INFO")
    good = 0
    for i in range(count):
        body = struct.pack("<II", i, i * 2654435761 & 0xFFFFFFFF) * (1 + i % 16)
        st, rep = link.request(OP_PING, 1000 + i, body)
        good += st == 0 and rep == body
    ok(good == count, "%d of %d PINGs echoed exactly once each" % (good, count))
    st, rep = link.request(OP_INFO, 7, b"")
    ok(st == 0 and rep is not None and len(rep) == 112, "INFO after the PINGs")
    if rep:
        f = struct.unpack(INFO_FMT, rep)
        print("# %s: rx_ok %d rx_bad %d rx_drop %d tx %d retransmits %d rx_dup %d" % (name, f[16], f[17], f[18],
              f[19], f[20], f[21]))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
