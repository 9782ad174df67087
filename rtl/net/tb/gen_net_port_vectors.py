#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Test vectors for the network port (rtl/net/nf_net.v), one record a line.

Frames are built with scapy (IPv4 checksums, ICMP, ARP, the RoCEv2 ICRC of
scapy.contrib.roce, checked again against the facts sheet's masking rule); the FCS comes
from zlib. Records (hex, no spaces):
  mac  MAC                                  the adapter's address (12 hex digits, wire order)
  rx   NAME VERDICT CLASS FLAGS FRAME FCS   a frame to receive; VERDICT ok, fcs, addr, long,
                                            ip or icrc (the counter it lands in)
  tx   NAME CLASS SLOT FRAME WIRE           SLOT: the bytes firmware writes (IPv4 total
                                            length, checksum and ICRC as zero); FRAME: what
                                            must go out (scapy's); WIRE: padded, FCS on
CLASS is the NET_KIND a receiver gives FRAME (tx frames are addressed to the adapter, so
the loopback test receives them). Usage: gen_net_port_vectors.py OUT_FILE
"""
import random
import struct
import sys
import zlib

from scapy.all import ARP, ICMP, IP, TCP, UDP, Ether, IPOption_NOP, Raw, raw
from scapy.contrib.roce import BTH

ETH_ZLEN = 60
MAC = "02:4e:46:00:00:07"
OTHER_MAC = "02:4e:46:00:00:08"
CLASS = {"other": 0, "arp": 1, "ipv4": 2, "roce": 3}
BCAST = 1
rng = random.Random(0x4E4554)


def rbytes(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def rmac():
    return ":".join("%02x" % b for b in bytes([rng.getrandbits(8) & 0xFE]) + rbytes(5))


def rip():
    return ".".join(str(rng.randrange(1, 255)) for _ in range(4))


def fcs(frame):
    return struct.pack("<I", zlib.crc32(frame))


def padded(frame):
    return frame + bytes(max(0, ETH_ZLEN - len(frame)))


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


def roce(opcode, ext_len, payload_len, dst=MAC):
    pad = (-payload_len) & 3
    pkt = (Ether(dst=dst, src=rmac()) /
           IP(src=rip(), dst=rip(), tos=rng.getrandbits(8), ttl=64, id=rng.getrandbits(16), flags="DF") /
           UDP(sport=0xC000 | rng.getrandbits(14), dport=4791, chksum=0) /
           BTH(opcode=opcode, padcount=pad, pkey=0xFFFF, dqpn=rng.getrandbits(24),
               ackreq=rng.getrandbits(1), psn=rng.getrandbits(24)) /
           Raw(rbytes(ext_len) + rbytes(payload_len) + bytes(pad)))
    frame = raw(pkt)
    udp_len = struct.unpack(">H", frame[38:40])[0]
    assert struct.unpack("<I", frame[30 + udp_len:34 + udp_len])[0] == icrc_by_rule(frame)
    return frame


def udp(n, dport=53, dst=MAC):
    return raw(Ether(dst=dst, src=rmac()) / IP(src=rip(), dst=rip(), id=rng.getrandbits(16)) /
               UDP(sport=rng.getrandbits(16), dport=dport) / Raw(rbytes(n)))


def icmp(n, kind=8):
    return raw(Ether(dst=MAC, src=rmac()) / IP(src=rip(), dst=rip(), id=rng.getrandbits(16)) /
               ICMP(type=kind, id=rng.getrandbits(16), seq=rng.getrandbits(16)) / Raw(rbytes(n)))


def arp(op, dst):
    return raw(Ether(dst=dst, src=rmac()) / ARP(op=op, hwsrc=rmac(), psrc=rip(), pdst=rip(),
                                                hwdst="00:00:00:00:00:00" if op == 1 else MAC))


def ip_csum_fixed(b):
    """b with its IPv4 header checksum recomputed (after a field was changed)."""
    b = bytearray(b)
    b[24:26] = b"\0\0"
    s = sum(struct.unpack(">10H", bytes(b[14:34])))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    b[24:26] = struct.pack(">H", ~s & 0xFFFF)
    return bytes(b)


def flip(b, off, mask=0x01):
    b = bytearray(b)
    b[off] ^= mask
    return bytes(b)


def out(f, *fields):
    f.write(" ".join(str(x) for x in fields) + "\n")


def rx(f, name, verdict, cls, flags, frame, good_fcs=True):
    c = fcs(padded(frame))
    if not good_fcs:
        c = bytes(x ^ 0x5A for x in c)
    out(f, "rx", name, verdict, CLASS[cls], flags, padded(frame).hex(), c.hex())


def gen_rx(f):
    rx(f, "arp_request_bcast", "ok", "arp", BCAST, arp(1, "ff:ff:ff:ff:ff:ff"))
    rx(f, "arp_reply", "ok", "arp", 0, arp(2, MAC))
    rx(f, "udp53", "ok", "ipv4", 0, udp(30))
    rx(f, "icmp_echo", "ok", "ipv4", 0, icmp(56))
    rx(f, "tcp", "ok", "ipv4", 0, raw(Ether(dst=MAC) / IP(src=rip(), dst=rip()) / TCP(dport=445) / Raw(rbytes(100))))
    rx(f, "other_ethertype", "ok", "other", 0, raw(Ether(dst=MAC, type=0x88B5) / Raw(rbytes(64))))
    for name, op, ext, n in (("send_only0", 0x04, 0, 0), ("send_only17", 0x04, 0, 17), ("write_only256", 0x0A, 16, 256),
                             ("read_req", 0x0C, 16, 0), ("ack", 0x11, 4, 0), ("read_resp1024", 0x10, 4, 1024),
                             ("ud_send_mad", 0x64, 8, 256), ("write_max", 0x0A, 16, 1514 - 74 - 4)):
        rx(f, "roce_" + name, "ok", "roce", 0, roce(op, ext, n))
    rx(f, "len1514", "ok", "other", 0, raw(Ether(dst=MAC, type=0x88B5) / Raw(rbytes(1500))))
    # Each check fails once (the cause counted is the first failing check).
    rx(f, "bad_fcs", "fcs", "ipv4", 0, udp(40), good_fcs=False)
    rx(f, "bad_fcs_roce", "fcs", "roce", 0, roce(0x04, 0, 64), good_fcs=False)
    rx(f, "other_mac", "addr", "ipv4", 0, udp(40, dst=OTHER_MAC))
    rx(f, "other_mac_roce", "addr", "roce", 0, roce(0x0A, 16, 100, dst=OTHER_MAC))
    rx(f, "bcast_ipv4", "addr", "ipv4", BCAST, udp(40, dst="ff:ff:ff:ff:ff:ff"))
    rx(f, "len1515", "long", "other", 0, raw(Ether(dst=MAC, type=0x88B5) / Raw(rbytes(1501))))
    rx(f, "len1600", "long", "ipv4", 0, udp(1600 - 42))
    rx(f, "ip_csum", "ip", "ipv4", 0, flip(udp(40), 25))
    rx(f, "ip_csum_roce", "ip", "roce", 0, flip(roce(0x04, 0, 32), 24, 0x10))
    rx(f, "ip_addr_changed", "ip", "ipv4", 0, flip(icmp(20), 29))
    rx(f, "ip_options", "ip", "ipv4", 0, raw(Ether(dst=MAC) / IP(src=rip(), dst=rip(), options=[IPOption_NOP()] * 4) /
                                               UDP(dport=53) / Raw(rbytes(20))))
    rx(f, "ip_version6_in_v4", "ip", "ipv4", 0, flip(udp(40), 14, 0x20))
    for i, (op, ext, n) in enumerate(((0x04, 0, 0), (0x0A, 16, 300), (0x11, 4, 0), (0x10, 4, 1000))):
        fr = roce(op, ext, n)
        off = rng.choice([o for o in range(42, len(fr)) if o != 46])
        rx(f, "icrc_flip%d_off%d" % (i, off), "icrc", "roce", 0, flip(fr, off, 1 << rng.randrange(8)))
    fr = roce(0x04, 0, 64)
    rx(f, "icrc_truncated", "icrc", "roce", 0, fr[:-6])
    b = bytearray(roce(0x04, 0, 64))
    b[20] |= 0x20  # MF: a fragment of a RoCE packet is not taken
    rx(f, "icrc_fragment", "icrc", "roce", 0, ip_csum_fixed(b))
    # Masked fields changed after the ICRC was made (TTL, TOS, FECN/BECN): still good,
    # once the IPv4 checksum is redone.
    b = bytearray(roce(0x0A, 16, 48))
    b[15] ^= 0x03
    b[22] = 12
    b[46] = 0x40
    rx(f, "roce_masked_changed", "ok", "roce", 0, ip_csum_fixed(b))


def tx(f, name, cls, frame):
    slot = bytearray(frame)
    if frame[12:14] == b"\x08\x00" and frame[14] == 0x45:
        slot[16:18] = b"\0\0"
        slot[24:26] = b"\0\0"
        if cls == "roce":
            udp_len = struct.unpack(">H", frame[38:40])[0]
            slot[30 + udp_len:34 + udp_len] = b"\0\0\0\0"
    p = padded(frame)
    out(f, "tx", name, CLASS[cls], bytes(slot).hex(), frame.hex(), (p + fcs(p)).hex())


def gen_tx(f):
    tx(f, "arp_reply", "arp", arp(2, MAC))
    tx(f, "arp_request", "arp", arp(1, MAC))
    tx(f, "icmp_reply", "ipv4", icmp(56, kind=0))
    tx(f, "icmp_reply_1472", "ipv4", icmp(1472, kind=0))
    tx(f, "udp_small", "ipv4", udp(1))
    tx(f, "other", "other", raw(Ether(dst=MAC, type=0x88B5) / Raw(rbytes(100))))
    for name, op, ext, n in (("send_only0", 0x04, 0, 0), ("send_only3", 0x04, 0, 3), ("ack", 0x11, 4, 0),
                             ("write_only100", 0x0A, 16, 100), ("read_req", 0x0C, 16, 0),
                             ("read_resp_max", 0x10, 4, 1024), ("write_max", 0x0A, 16, 1514 - 74 - 4),
                             ("ud_send_mad", 0x64, 8, 256), ("cnp", 0x81, 16, 0)):
        tx(f, "roce_" + name, "roce", roce(op, ext, n))
    for i in range(6):
        tx(f, "roce_rand%d" % i, "roce", roce(0x0A, 16, rng.randrange(0, 1400)))


def main():
    with open(sys.argv[1], "w") as f:
        out(f, "mac", MAC.replace(":", ""))
        gen_rx(f)
        gen_tx(f)


if __name__ == "__main__":
    main()
