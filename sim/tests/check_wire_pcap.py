#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads nfwire's --pcap capture with scapy and compares it with the frames the test sent.

usage: check_wire_pcap.py CAPTURE EXPECT   (EXPECT: one frame a line, hex, no FCS)
       check_wire_pcap.py CAPTURE --tap     (the TAP test's capture: ARP and ICMP replies)
Prints TAP lines; exits 1 when a case fails.
"""
import os
import struct
import sys

from scapy.all import ARP, ICMP, Ether, rdpcap  # noqa: E402
from scapy.utils import PcapReader

fails = 0


def ok(cond, name):
    global fails
    print(("ok - " if cond else "not ok - ") + "pcap %s: " % os.path.basename(sys.argv[1]) + name)
    if not cond:
        fails += 1


def main():
    path = sys.argv[1]
    with open(path, "rb") as f:
        head = f.read(24)
    magic, major, minor, _zone, _sig, snaplen, link = struct.unpack("<IHHiIII", head)
    ok(magic == 0xA1B2C3D4 and (major, minor) == (2, 4) and link == 1 and snaplen >= 1518,
       "libpcap 2.4 header, LINKTYPE_ETHERNET, snaplen %d" % snaplen)
    with PcapReader(path) as r:
        ok(r.linktype == 1, "scapy reads the capture as Ethernet")
    pkts = rdpcap(path)
    got = [bytes(p) for p in pkts]
    if sys.argv[2] == "--tap":
        arp = [p for p in pkts if ARP in p and p[ARP].op == 2]
        echo = [p for p in pkts if ICMP in p and p[ICMP].type == 0]
        ok(len(arp) >= 1 and len(echo) >= 1, "the TAP test's ARP reply and echo reply are in the capture")
        return
    with open(sys.argv[2]) as f:
        want = [bytes.fromhex(line.strip()) for line in f if line.strip()]
    first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), None)
    ok(len(got) == len(want) and first is None,
       "scapy reads back the %d good frames sent, in order, byte for byte (%d read%s)"
       % (len(want), len(got), "" if first is None else ", first difference at frame %d" % first))
    ok(all(isinstance(p, Ether) for p in pkts if len(bytes(p)) >= 14),
       "every frame of 14 bytes or more decodes as Ether")


main()
sys.exit(1 if fails else 0)
