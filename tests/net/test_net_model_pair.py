#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Two software adapters (nfmodel --wire) on one nfwire segment, with a third endpoint
driven here with scapy over a raw SEQPACKET socket. Each adapter's firmware answers ARP
asked on behalf of the other, so each one's reply travels the switch to the other's port;
ICMP echo comes back with the IPv4 fields the port fills; bad frames land in the port's
drop counters (read back through STATS over the host link). Also: --wire-opts sends its
hello as the first message. Needs no root. Usage: test_net_model_pair.py NFMODEL NFWIRE"""
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "firmware", "tests"))
from nfmodel_client import NF, Link  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402
from scapy.layers.inet import ICMP, IP, UDP  # noqa: E402
from scapy.layers.l2 import ARP, Ether  # noqa: E402

WAIT_S = 3.0  # the longest wait for one frame or one socket to appear
S_MAC, S_IP = "02:00:00:00:00:99", "10.77.1.99"
SEEDS = {"A": 0x0A0A0A01, "B": 0x0B0B0B02}
IPS = {"A": "10.77.1.2", "B": "10.77.1.3"}
fail = 0


def ok(cond, what):
    global fail
    print(("ok - " if cond else "not ok - ") + "net-model-pair: " + what, flush=True)
    fail |= not cond


def word(dotted):
    return struct.unpack("<I", socket.inet_aton(dotted))[0]


def mac_of(seed):
    return "02:6e:" + ":".join("%02x" % b for b in struct.pack(">I", seed))


def with_fcs(frame):
    frame = bytes(frame)
    frame += bytes(max(0, 60 - len(frame)))
    return frame + struct.pack("<I", zlib.crc32(frame) & 0xFFFFFFFF)


def wait_path(path):
    t = time.monotonic()
    while time.monotonic() - t < WAIT_S:
        if os.path.exists(path):
            return True
        time.sleep(0.02)
    return False


def recv_frame(s, want=lambda f: True):
    """The next frame satisfying want (FCS checked and stripped), or None by the deadline."""
    t = time.monotonic()
    while time.monotonic() - t < WAIT_S:
        s.settimeout(max(0.01, WAIT_S - (time.monotonic() - t)))
        try:
            m = s.recv(16384)
        except socket.timeout:
            break
        if len(m) < 64 or struct.unpack("<I", m[-4:])[0] != zlib.crc32(m[:-4]) & 0xFFFFFFFF:
            continue
        f = Ether(m[:-4])
        if want(f):
            return f
    return None


def stats(link, tag):
    st, rep = link.request(NF.OP_STATS, tag, b"")
    if st != 0 or not rep:
        return {}
    names = ("net_rx", "net_arp_answered", "net_icmp_answered", "net_unhandled", "port_rx_ok", "port_drop_fcs",
             "port_drop_addr", "port_drop_ip", "port_drop_icrc", "port_tx")
    return {k: struct.unpack_from("<I", rep, getattr(NF, "STATS_%s_OFF" % k.upper()))[0] for k in names}


def hello_case(nfmodel, tmp):
    """--wire-opts: the first message on the wire is the hello, before any frame."""
    path = os.path.join(tmp, "hello.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(1)
    srv.settimeout(WAIT_S)
    p = subprocess.Popen([nfmodel, "--socket", os.path.join(tmp, "h.sock"), "--wire", path, "--wire-opts",
                          "loss=0.01,seed=3", "--quiet"])
    try:
        c, _ = srv.accept()
        c.settimeout(WAIT_S)
        first = c.recv(2048)
        c.close()
    except socket.timeout:
        first = b""
    finally:
        p.terminate()
        p.wait(timeout=WAIT_S)
        srv.close()
    ok(first == b"nfport loss=0.01,seed=3", "--wire-opts: the first message is the hello %r" % first)


def main():
    nfmodel, nfwire = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="nfpair")
    procs = []
    try:
        hello_case(nfmodel, tmp)
        wire = os.path.join(tmp, "wire.sock")
        procs.append(subprocess.Popen([nfwire, "--socket", wire]))
        ok(wait_path(wire), "nfwire serves the segment")
        links, macs = {}, {}
        for name in ("A", "B"):
            sock = os.path.join(tmp, name + ".sock")
            procs.append(subprocess.Popen([nfmodel, "--socket", sock, "--wire", wire, "--mac-seed",
                                           "0x%08x" % SEEDS[name], "--quiet"]))
            ok(wait_path(sock), "nfmodel %s starts on the wire" % name)
            links[name] = Link(sock)
            ok(links[name].reset(0x4E37) is not None, "%s: RESET handshake" % name)
            body = struct.pack(NF.NET_CONFIG_REQ_FMT, NF.NET_CONFIG_FLAG_ADDR, word(IPS[name]), word("255.255.255.0"),
                               0, 0, 0)
            st, rep = links[name].request(NF.OP_NET_CONFIG, 1, body)
            got = struct.unpack(NF.NET_CONFIG_REP_FMT, rep[:NF.NET_CONFIG_REP_SIZE]) if st == 0 and rep else None
            macs[name] = ":".join("%02x" % b for b in struct.pack("<IH", got[2], got[3] & 0xFFFF)) if got else "?"
            ok(macs[name] == mac_of(SEEDS[name]), "%s: NET_CONFIG %s, MAC %s from --mac-seed" %
               (name, IPS[name], macs[name]))
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(wire)

        def ask(target, sha, spa):
            s.send(with_fcs(Ether(src=S_MAC, dst="ff:ff:ff:ff:ff:ff") /
                            ARP(op=1, hwsrc=sha, psrc=spa, hwdst="00:00:00:00:00:00", pdst=IPS[target])))

        # Each adapter answers the third endpoint: the switch learns where A and B are.
        for name in ("B", "A"):
            ask(name, S_MAC, S_IP)
            r = recv_frame(s, lambda f: ARP in f and f[ARP].op == 2)
            ok(r is not None and r.src == macs[name] and r.dst == S_MAC and r[ARP].hwsrc == macs[name] and
               r[ARP].psrc == IPS[name] and r[ARP].pdst == S_IP,
               "%s answers an ARP request for %s with its MAC (60 bytes + good FCS)" % (name, IPS[name]))
        # Asked on the other's behalf, each replies to the other's MAC: the reply crosses
        # the segment from one model's port to the other's, not to this endpoint.
        ask("A", macs["B"], IPS["B"])
        ask("B", macs["A"], IPS["A"])
        stray = recv_frame(s, lambda f: ARP in f)
        ok(stray is None, "the replies between A and B are switched to them, not flooded here")
        time.sleep(0.3)
        st = {n: stats(links[n], 5) for n in ("A", "B")}
        for n in ("A", "B"):
            # 4 broadcast requests (2 for it) and the other's reply in; its 2 replies out.
            ok(st[n].get("net_arp_answered") == 2 and st[n].get("net_rx") == 5 and st[n].get("port_rx_ok") == 5 and
               st[n].get("port_tx") == 2,
               "%s: 2 requests answered, and the other's reply received: 5 frames in, 2 out (%s)" % (n, st[n]))
        # ICMP echo: the reply's IPv4 total length and checksum are the port's.
        req = Ether(src=S_MAC, dst=macs["A"]) / IP(src=S_IP, dst=IPS["A"], id=77) / ICMP(id=5, seq=1) / (b"x" * 100)
        s.send(with_fcs(req))
        r = recv_frame(s, lambda f: ICMP in f)
        good = False
        if r is not None:
            ip = bytes(r[IP])[:20]
            s16 = sum(struct.unpack(">10H", ip))
            s16 = (s16 & 0xFFFF) + (s16 >> 16)
            good = r[ICMP].type == 0 and r[IP].len == 128 and s16 == 0xFFFF and bytes(r[ICMP].payload) == b"x" * 100
        ok(good, "A answers an ICMP echo: total length and header checksum filled by the port")
        # Bad frames, one per check, then a good RoCE frame.
        base = stats(links["A"], 6)
        bad_fcs = bytearray(with_fcs(req))
        bad_fcs[-1] ^= 0xFF
        s.send(bytes(bad_fcs))
        bad_ip = bytearray(bytes(req))
        bad_ip[24] ^= 0x01
        s.send(with_fcs(bad_ip))
        roce = Ether(src=S_MAC, dst=macs["A"]) / IP(src=S_IP, dst=IPS["A"]) / UDP(sport=49152, dport=NF.NET_ROCE_PORT) / \
            BTH(opcode=NF.BTH_OP_SEND_ONLY, dqpn=0x11, psn=7) / (b"p" * 16)
        raw = bytearray(bytes(roce))  # scapy fills the ICRC
        s.send(with_fcs(raw))
        raw[-1] ^= 0x40
        s.send(with_fcs(raw))
        time.sleep(0.3)
        after = stats(links["A"], 7)
        d = {k: after.get(k, 0) - base.get(k, 0) for k in after}
        ok(d.get("port_drop_fcs") == 1 and d.get("port_drop_ip") == 1 and d.get("port_drop_icrc") == 1 and
           d.get("port_rx_ok") == 1 and d.get("net_unhandled") == 1,
           "A's port drops a bad FCS, a bad IPv4 checksum and a bad ICRC, takes scapy's RoCE frame (%s)" % d)
        s.close()
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    return fail


if __name__ == "__main__":
    sys.exit(main())
