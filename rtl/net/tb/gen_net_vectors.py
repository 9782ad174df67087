#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Test vectors for the Ethernet MAC and the RoCEv2 ICRC (rtl/net), one record a line.

Frames are built with scapy; the FCS comes from zlib, the ICRC from scapy.contrib.roce
and again from the masking rules of the facts sheet (both must agree here, so the RTL
is checked against two independent statements of the rule). Records (hex, no spaces):
  crc  NAME DATA CRC                        CRC-32 value of DATA (length a multiple of 8)
  tx   NAME TUSER CLIENT WIRE               client stream in, PHY bytes out (preamble on)
  rx   NAME ER_INDEX WIRE OUT BAD           PHY bytes in (ER_INDEX -1: no rx_er); OUT "-": none
  icrc NAME ROCE OK ICRC FRAME              frame without FCS; ICRC "-": not compared
Usage: gen_net_vectors.py OUT_FILE
"""
import random
import struct
import sys
import zlib

from scapy.all import ARP, IP, TCP, UDP, Dot1Q, Ether, IPOption_NOP, Raw, raw
from scapy.contrib.roce import BTH

PRE = bytes([0x55] * 7 + [0xD5])
ETH_ZLEN = 60
rng = random.Random(4791)


def rbytes(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def fcs(frame):
    return struct.pack("<I", zlib.crc32(frame))


def padded(frame):
    return frame + bytes(max(0, ETH_ZLEN - len(frame)))


def rmac():
    return ":".join("%02x" % b for b in bytes([rng.getrandbits(8) & 0xFE]) + rbytes(5))


def rip():
    return ".".join(str(rng.randrange(1, 255)) for _ in range(4))


def icrc_by_rule(frame):
    """The ICRC value of an untagged IPv4 RoCEv2 frame, from the facts sheet's masking."""
    ip = bytearray(frame[14:34])
    ip[1] = 0xFF
    ip[8] = 0xFF
    ip[10:12] = b"\xff\xff"
    udp = bytearray(frame[34:42])
    udp[6:8] = b"\xff\xff"
    udp_len = struct.unpack(">H", frame[38:40])[0]
    ib = bytearray(frame[42:34 + udp_len - 4])
    ib[4] = 0xFF
    return zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(ib))


def wire_icrc(frame):
    """The ICRC value as it stands in the frame (sent least-significant byte first)."""
    udp_len = struct.unpack(">H", frame[38:40])[0]
    return struct.unpack("<I", frame[30 + udp_len:34 + udp_len])[0]


def out(f, *fields):
    f.write(" ".join(str(x) for x in fields) + "\n")


def hx(b):
    return b.hex() if b else "-"


# RC opcodes and the headers between BTH and payload (sizes from the facts sheet).
OPS = [
    ("send_only", 0x04, 0, True), ("send_first", 0x00, 0, True), ("send_imm", 0x05, 4, True),
    ("write_only", 0x0A, 16, True), ("write_only_imm", 0x0B, 20, True), ("read_req", 0x0C, 16, False),
    ("read_resp_only", 0x10, 4, True), ("ack", 0x11, 4, False), ("ud_send", 0x64, 8, True),
    ("send_inv", 0x17, 4, True), ("cnp", 0x81, 16, False),
]


def roce_frame(opcode, ext_len, payload_len, udp_csum_zero):
    pad = (-payload_len) & 3
    ext = rbytes(ext_len) if opcode != 0x81 else bytes(16)
    pkt = (Ether(dst=rmac(), src=rmac()) /
           IP(src=rip(), dst=rip(), tos=rng.getrandbits(8), ttl=rng.randrange(1, 256),
              id=rng.getrandbits(16), flags="DF") /
           UDP(sport=0xC000 | rng.getrandbits(14), dport=4791, chksum=0 if udp_csum_zero else None) /
           BTH(opcode=opcode, solicited=rng.getrandbits(1), migreq=rng.getrandbits(1), padcount=pad,
               pkey=0xFFFF if rng.random() < 0.5 else rng.getrandbits(16), fecn=rng.getrandbits(1),
               becn=rng.getrandbits(1), resv6=rng.getrandbits(6), dqpn=rng.getrandbits(24),
               ackreq=rng.getrandbits(1), psn=rng.getrandbits(24)) /
           Raw(ext + rbytes(payload_len) + bytes(pad)))
    frame = raw(pkt)
    value = wire_icrc(frame)
    assert value == icrc_by_rule(frame), "scapy and the facts sheet disagree"
    return frame, value


def flip(b, bit):
    b = bytearray(b)
    b[bit // 8] ^= 1 << (bit % 8)
    return bytes(b)


def gen_crc(f):
    for n in (8, 16, 64, 1512):
        data = rbytes(n)
        out(f, "crc", "len%d" % n, hx(data), "%08x" % zlib.crc32(data))


def client_frames():
    """(name, frame) pairs for the transmitter: edge lengths, random ones, real packets."""
    frames = [("len%d" % n, rbytes(n)) for n in (1, 2, 13, 14, 59, 60, 61, 64, 1514)]
    frames += [("rand%d" % i, rbytes(rng.randrange(1, 1515))) for i in range(40)]
    for i in range(6):
        frames.append(("udp%d" % i, raw(Ether(dst=rmac(), src=rmac()) / IP(src=rip(), dst=rip()) /
                                        UDP(sport=rng.getrandbits(16), dport=rng.getrandbits(16)) /
                                        Raw(rbytes(rng.randrange(0, 1473))))))
    frames.append(("arp", raw(Ether(dst="ff:ff:ff:ff:ff:ff", src=rmac()) / ARP(psrc=rip(), pdst=rip()))))
    return frames


def gen_tx(f):
    for name, frame in client_frames():
        p = padded(frame)
        out(f, "tx", name, 0, hx(frame), hx(PRE + p + fcs(p)))
    for n in (1, 100):  # tuser on the last beat: the FCS goes out inverted
        frame = rbytes(n)
        p = padded(frame)
        bad = bytes(x ^ 0xFF for x in fcs(p))
        out(f, "tx", "tuser_len%d" % n, 1, hx(frame), hx(PRE + p + bad))


def gen_rx(f):
    for name, frame in client_frames():
        p = padded(frame)
        out(f, "rx", "good_" + name, -1, hx(PRE + p + fcs(p)), hx(p), 0)
    for pre, tag in ((b"\xd5", "sfd_only"), (b"\x55\xd5", "pre1"), (b"\x55" * 3 + b"\xd5", "pre3")):
        p = rbytes(rng.randrange(60, 300))
        out(f, "rx", "short_preamble_" + tag, -1, hx(pre + p + fcs(p)), hx(p), 0)
    for i in range(25):  # one bit flipped anywhere in frame or FCS
        p = rbytes(rng.randrange(60, 1515))
        w = flip(p + fcs(p), rng.randrange((len(p) + 4) * 8))
        out(f, "rx", "flip%d" % i, -1, hx(PRE + w), hx(w[:-4]), 1)
    for n in (1, 2, 20, 59):  # runts: a correct FCS but under 64 bytes
        p = rbytes(n)
        out(f, "rx", "runt_len%d" % n, -1, hx(PRE + p + fcs(p)), hx(p), 1)
    for n in (1, 3, 4):  # too short to hold an FCS and one byte: nothing comes out
        out(f, "rx", "fragment_len%d" % n, -1, hx(PRE + rbytes(n)), "-", 0)
    for i in range(8):  # rx_er on one byte of the frame
        p = rbytes(rng.randrange(60, 600))
        w = p + fcs(p)
        out(f, "rx", "rx_er%d" % i, len(PRE) + rng.randrange(len(w)), hx(PRE + w), hx(p), 1)
    p = rbytes(80)  # rx_er in the preamble: no SFD is taken, nothing comes out
    out(f, "rx", "rx_er_preamble", 3, hx(PRE + p + fcs(p)), "-", 0)
    p = rbytes(80)  # a carrier that does not start with preamble or SFD
    out(f, "rx", "no_preamble", -1, hx(b"\x12\x34" + PRE + p + fcs(p)), "-", 0)


def gen_icrc(f):
    # The facts sheet's two worked examples.
    ex1 = bytes.fromhex("248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007"
                        "c00012b7002caca22460ffff000000d300cf17104630818be28935d90e9a95505401"
                        "be885e50000078f353f3")
    ex2 = bytes.fromhex("e41d2dab2bc2 7cfe90643b32 0800 45c2003c718c400040119161 0a001101 0a001201"
                        "0000 12b7 0028 0000 81 00 ffff 40 000118 00 000000" + " 00" * 16 + " 82fd002a")
    for name, fr, val in (("facts_example1", ex1, 0xF353F378), ("facts_example2_cnp", ex2, 0x2A00FD82)):
        assert wire_icrc(fr) == val == icrc_by_rule(fr), name
        out(f, "icrc", name, 1, 1, "%08x" % val, hx(fr))
    sizes = (0, 1, 2, 3, 4, 17, 64, 255, 256, 1024)
    for opname, opcode, ext, has_payload in OPS:
        for n in (sizes if has_payload else (0,)):
            for zero_csum in ((True, False) if n in (0, 17) else (rng.random() < 0.5,)):
                frame, val = roce_frame(opcode, ext, n, zero_csum)
                tag = "%s_len%d%s" % (opname, n, "_csum0" if zero_csum else "")
                out(f, "icrc", tag, 1, 1, "%08x" % val, hx(frame))
    # Ethernet padding after the ICRC (a 58-byte SEND_ONLY padded to 60) is outside it.
    frame, val = roce_frame(0x04, 0, 0, True)
    out(f, "icrc", "eth_pad", 1, 1, "%08x" % val, hx(frame + rbytes(ETH_ZLEN - len(frame))))
    # Masked fields changed after the ICRC was made: still good, same ICRC.
    for off, what in ((15, "tos"), (22, "ttl"), (24, "ipcsum0"), (25, "ipcsum1"),
                      (40, "udpcsum0"), (41, "udpcsum1"), (46, "bth_fecn_becn")):
        frame, val = roce_frame(0x0A, 16, 40, False)
        b = bytearray(frame)
        b[off] ^= 0xC0 | rng.randrange(1, 0x40)
        out(f, "icrc", "masked_" + what, 1, 1, "%08x" % val, hx(bytes(b)))
    # A flipped bit in any covered byte, or in the ICRC itself, fails.
    covered = [o for o in range(14, 200) if o not in (15, 22, 24, 25, 40, 41, 46)]
    for i in range(20):
        frame, val = roce_frame(0x04, 0, 200, False)
        off = covered[i] if i < 6 else rng.choice(covered)
        if i < 4:  # the ICRC bytes themselves: the computed value is unchanged
            off = len(frame) - 4 + i
        b = flip(frame, off * 8 + rng.randrange(8))
        # A flip in the UDP length, EtherType or checked IPv4/UDP fields may make it no
        # RoCE packet; otherwise the computed value is the CRC of the changed frame.
        roce = 0 if off in (12, 13, 14, 20, 21, 23, 36, 37) else 1
        ulen = struct.unpack(">H", b[38:40])[0]
        if off in (38, 39) and (ulen < 24 or ulen + 34 > len(b)):
            roce = 0
        if off == 20 and not b[20] & 0x3F:
            roce = 1
        out(f, "icrc", "flip%d_off%d" % (i, off), roce, 0, "%08x" % icrc_by_rule(b) if roce else "-", hx(b))
    # Not RoCE: another port, TCP, IPv4 options, ARP, a VLAN tag, a fragment, truncated.
    frame, val = roce_frame(0x04, 0, 32, True)
    b = bytearray(frame)
    b[37] = 0xB8
    out(f, "icrc", "not_port4791", 0, 0, "-", hx(bytes(b)))
    out(f, "icrc", "not_tcp", 0, 0, "-", hx(raw(Ether() / IP(src=rip(), dst=rip()) / TCP(dport=4791) / Raw(rbytes(40)))))
    opt = raw(Ether() / IP(src=rip(), dst=rip(), options=[IPOption_NOP()] * 4) / UDP(dport=4791) /
              BTH(opcode=4) / Raw(rbytes(40)))
    out(f, "icrc", "not_ip_options", 0, 0, "-", hx(opt))
    out(f, "icrc", "not_arp", 0, 0, "-", hx(padded(raw(Ether(dst="ff:ff:ff:ff:ff:ff") / ARP(psrc=rip(), pdst=rip())))))
    vlan = raw(Ether() / Dot1Q(vlan=5) / IP(src=rip(), dst=rip()) / UDP(dport=4791) / BTH(opcode=4) / Raw(rbytes(40)))
    out(f, "icrc", "not_vlan", 0, 0, "-", hx(vlan))
    b = bytearray(frame)
    b[20] |= 0x20
    out(f, "icrc", "not_fragment", 0, 0, "-", hx(bytes(b)))
    out(f, "icrc", "not_truncated", 0, 0, "-", hx(frame[:-2]))
    out(f, "icrc", "not_short_frame", 0, 0, "-", hx(frame[:30]))
    b = bytearray(frame)
    b[38:40] = struct.pack(">H", 20)
    out(f, "icrc", "not_udp_len_short", 0, 0, "-", hx(bytes(b)))


def main():
    with open(sys.argv[1], "w") as f:
        gen_crc(f)
        gen_tx(f)
        gen_rx(f)
        gen_icrc(f)


if __name__ == "__main__":
    main()
