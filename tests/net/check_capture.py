#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a segment's capture with oracles this project did not write: every RoCEv2 frame's
ICRC (scapy.contrib.roce's BTH computes it when a packet is built), IPv4 header checksum and IP/UDP lengths (scapy),
and, when tshark is installed, that tshark decodes every frame with no malformed packet.
With --cm, also that tshark's IB CM dissector finds each connection-management message
(REQ with the RDMA-CM service ID, REP, RTU, REJ, DREQ, DREP); --no-rej leaves out the REJ
for an exchange that refuses nothing.
Prints TAP lines. Usage: check_capture.py FILE.pcap [--cm [--no-rej]]"""
import os
import shutil
import subprocess
import sys

from scapy.all import IP, UDP, Ether, raw, rdpcap  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "proto", "gen"))
import nf_layout as NF  # noqa: E402  (generated from proto/: the wire's numbers)

# Protocols whose dissectors guess at an InfiniBand payload: the tests' payloads are random
# bytes, which they would misread as malformed RPC, NVMe or iSER traffic.
GUESSERS = ("rpcordma", "nvme-rdma", "iser", "lnet", "smc", "infiniband.eoib", "infiniband_sdp", "fcoib")


def main():
    frames = rdpcap(sys.argv[1])
    fail = 0

    def ok(cond, what):
        nonlocal fail
        print(("ok - " if cond else "not ok - ") + "capture: " + what, flush=True)
        fail |= not cond

    roce = bad_icrc = bad_ip = bad_len = 0
    for f in frames:
        if not (f.haslayer(IP) and f.haslayer(UDP) and f[UDP].dport == NF.NET_ROCE_PORT):
            continue
        roce += 1
        ip = f[IP]
        hdr = bytearray(raw(ip)[:NF.IPV4_SIZE])
        hdr[NF.IPV4_CSUM_OFF:NF.IPV4_CSUM_OFF + NF.IPV4_CSUM_BYTES] = b"\0\0"
        s = sum(int.from_bytes(hdr[i:i + 2], "big") for i in range(0, NF.IPV4_SIZE, 2))
        while s >> 16:
            s = (s & 0xFFFF) + (s >> 16)
        if (~s & 0xFFFF) != ip.chksum:
            bad_ip += 1
        udp_bytes = raw(f[UDP])
        if ip.len != NF.IPV4_SIZE + f[UDP].len or f[UDP].len > len(udp_bytes):
            bad_len += 1
            continue
        pkt = Ether(raw(f)[:NF.ETH_SIZE + ip.len])  # Ethernet padding lies outside the ICRC
        got = pkt[BTH].icrc
        pkt[BTH].icrc = None
        if Ether(raw(pkt))[BTH].icrc != got:
            bad_icrc += 1
    ok(roce > 0, "%d RoCEv2 frames in the capture" % roce)
    ok(bad_icrc == 0, "every RoCEv2 frame's ICRC equals scapy's (%d wrong)" % bad_icrc)
    ok(bad_ip == 0, "every RoCEv2 frame's IPv4 header checksum is right (%d wrong)" % bad_ip)
    ok(bad_len == 0, "every RoCEv2 frame's IPv4 and UDP lengths agree with the frame (%d wrong)" % bad_len)
    tshark = shutil.which("tshark")
    if tshark:
        base = [tshark, "-r", sys.argv[1]] + [a for g in GUESSERS for a in ("--disable-protocol", g)]
        out = subprocess.run(base + ["-Y", "_ws.malformed || _ws.expert.severity >= error"],
                             capture_output=True, text=True, timeout=300)
        ok(out.returncode == 0 and out.stdout.strip() == "",
           "tshark decodes every frame with no malformed packet%s" % (": " + out.stdout[:400] if out.stdout else ""))
        out = subprocess.run(base + ["-Y", "infiniband"], capture_output=True, text=True,
                             timeout=300)
        ok(len(out.stdout.splitlines()) == roce, "tshark's InfiniBand dissector takes all %d RoCEv2 frames" % roce)
        if "--cm" in sys.argv[2:]:
            # the CM messages by MAD attribute ID (class 7, CM); REQ and REP by their CM fields too
            names = ("REQ", "REP", "RTU", "DREQ", "DREP") if "--no-rej" in sys.argv[2:] else \
                ("REQ", "REJ", "REP", "RTU", "DREQ", "DREP")
            for name in names:
                flt = "infiniband.mad.mgmtclass == %d && infiniband.mad.attributeid == %#x" % (
                    NF.MAD_CLASS_CM, getattr(NF, "CM_ATTR_" + name))
                if name in ("REQ", "REP"):
                    flt += " && infiniband.cm.%s" % name.lower()
                out = subprocess.run(base + ["-Y", flt], capture_output=True, text=True, timeout=300)
                ok(out.returncode == 0 and out.stdout.strip() != "", "tshark's IB CM dissector shows a %s" % name)
            proto = NF.CMA_SID_TCP >> 16 & 0xFF  # the port space's protocol byte (TCP)
            out = subprocess.run(base + ["-Y", "infiniband.cm.req.serviceid.protocol == %d" % proto, "-T", "fields", "-e",
                                         "infiniband.cm.req.serviceid.dport"], capture_output=True, text=True,
                                 timeout=300)
            ok(out.stdout.strip() != "", "tshark reads each REQ's service ID as RDMA-CM TCP port %s" %
               ",".join(sorted(set(out.stdout.split()))))
    else:
        print("ok - capture: tshark # SKIP not installed")
    return fail


if __name__ == "__main__":
    sys.exit(main())
