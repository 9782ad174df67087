# SPDX-License-Identifier: Apache-2.0
"""nf_link_udp's frames, made and checked by scapy.

gen SCENARIO: the steps the testbench (link_udp_tb.cpp) runs: ARP requests, datagrams
to the port and others it must drop, link bytes to send back.
check SCENARIO OUT: what the port did in each step against what it must do; replies are
parsed and rebuilt by scapy (IPv4 checksum, lengths). Exit status 1 on a failure.
"""
import sys
import zlib

sys.path.insert(0, "proto/gen")
from nf_layout import LINK_FLAG, LINK_UDP_MAX_PAYLOAD, LINK_UDP_PORT  # noqa: E402
from scapy.all import ARP, IP, UDP, Ether, Raw, raw  # noqa: E402

MAC, IP_ADDR = "02:6e:00:00:00:01", "192.168.1.50"  # the testbench's local_mac, local_ip
HOST_MAC, HOST_IP, HOST_PORT = "52:54:00:12:34:56", "192.168.1.10", 40000
FLAG = bytes([LINK_FLAG])


def fcs(frame):
    frame = frame.ljust(60, b"\0")  # the shortest frame, as a sender pads it
    return frame + zlib.crc32(frame).to_bytes(4, "little")


def dgram(payload, dst_ip=IP_ADDR, dport=LINK_UDP_PORT, dst=MAC, sport=HOST_PORT, **ip):
    return raw(Ether(src=HOST_MAC, dst=dst) / IP(src=HOST_IP, dst=dst_ip, **ip) / UDP(sport=sport, dport=dport) / Raw(payload))


def arp_req(pdst):
    return raw(Ether(src=HOST_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=HOST_MAC, psrc=HOST_IP, pdst=pdst))


P1 = bytes(range(100))
BIG = bytes((i * 5 + 1) % 256 for i in range(LINK_UDP_MAX_PAYLOAD))
LINK_FRAME = FLAG + bytes([1, 2, 3, 0x7D, 0x5E]) + FLAG
NOFLAG = bytes(range(1, 11))
LONG = bytes((i % 0x70) + 1 for i in range(2000))  # no flag: split at the size limit


def bad_cksum():
    p = Ether(dgram(P1))
    p[IP].chksum ^= 0x0101
    return raw(p)


# (step, frames, link bytes to send, clocks to wait, bytes the link must get, datagrams out)
STEPS = [
    ("arp", [fcs(arp_req(IP_ADDR))], b"", 200, b"", "arp"),
    ("arp-other", [fcs(arp_req("192.168.1.51"))], b"", 200, b"", []),
    ("udp", [fcs(dgram(P1))], b"", 800, P1, []),
    ("short", [fcs(dgram(b"hello"))], b"", 300, b"hello", []),
    ("wrong-port", [fcs(dgram(P1, dport=LINK_UDP_PORT + 1))], b"", 300, b"", []),
    ("wrong-ip", [fcs(dgram(P1, dst_ip="192.168.1.51"))], b"", 300, b"", []),
    ("wrong-mac", [fcs(dgram(P1, dst="02:6e:00:00:00:02"))], b"", 300, b"", []),
    ("bad-fcs", [fcs(dgram(P1))[:-1] + b"\0"], b"", 300, b"", []),
    ("bad-cksum", [fcs(bad_cksum())], b"", 300, b"", []),
    ("fragment", [fcs(dgram(P1, flags="MF"))], b"", 300, b"", []),
    ("too-big", [fcs(dgram(BIG + b"x"))], b"", 3000, b"", []),
    ("biggest", [fcs(dgram(BIG, sport=40001))], b"", 6000, BIG, []),
    ("reply", [], LINK_FRAME, 400, b"", [LINK_FRAME]),
    ("idle-flush", [], NOFLAG, 400, b"", [NOFLAG]),
    ("split", [], LONG, 12000, b"", [LONG[:LINK_UDP_MAX_PAYLOAD], LONG[LINK_UDP_MAX_PAYLOAD:]]),
]


def gen(path):
    with open(path, "w") as f:
        for name, frames, tx, wait, _, _ in STEPS:
            f.write(f"STEP {name}\n")
            for fr in frames:
                f.write(f"F {fr.hex()}\n")
            if tx:
                f.write(f"T {tx.hex()}\n")
            f.write(f"W {wait}\n")


def check(scenario, out):
    got = {}
    cur = None
    for line in open(out):
        op, _, arg = line.strip().partition(" ")
        if op == "STEP":
            cur = got.setdefault(arg, {"R": b"", "X": []})
        elif op == "R":
            cur["R"] += bytes.fromhex(arg)
        elif op == "X":
            cur["X"].append(bytes.fromhex(arg))
    fails = 0
    n = 0

    def ok(cond, what):
        nonlocal fails, n
        n += 1
        print(f"{'ok' if cond else 'not ok'} {n} - {what}")
        fails += not cond

    for name, _, _, _, want_r, want_x in STEPS:
        g = got.get(name, {"R": b"", "X": []})
        ok(g["R"] == want_r, f"{name}: the link gets {len(want_r)} bytes (got {len(g['R'])})")
        frames = []
        for x in g["X"]:
            good = zlib.crc32(x[:-4]).to_bytes(4, "little") == x[-4:]
            ok(good and len(x) >= 64, f"{name}: frame of {len(x)} bytes with a good FCS")
            frames.append(Ether(x[:-4]))
        if want_x == "arp":
            a = frames[0][ARP] if frames and ARP in frames[0] else None
            ok(len(frames) == 1 and a is not None and a.op == 2 and a.psrc == IP_ADDR and a.hwsrc == MAC
               and a.pdst == HOST_IP and a.hwdst == HOST_MAC and frames[0].dst == HOST_MAC and frames[0].src == MAC,
               f"{name}: one ARP reply from {IP_ADDR} is at {MAC} to the asker")
            continue
        ok(len(frames) == len(want_x), f"{name}: {len(want_x)} datagrams sent (got {len(frames)})")
        for p, want in zip(frames, want_x):
            well = IP in p and UDP in p
            if well:
                q = p.copy()
                del q[IP].chksum, q[IP].len, q[UDP].len
                q = Ether(raw(q))
                well = (q[IP].chksum == p[IP].chksum and q[IP].len == p[IP].len and q[UDP].len == p[UDP].len
                        and p[IP].ihl == 5 and p[IP].flags == "DF" and p[IP].frag == 0 and p[UDP].chksum == 0)
            ok(well, f"{name}: IPv4/UDP well formed (header checksum, lengths, UDP checksum 0)")
            if not well:
                continue
            ok(p.dst == HOST_MAC and p.src == MAC and p[IP].src == IP_ADDR and p[IP].dst == HOST_IP
               and p[UDP].sport == LINK_UDP_PORT and p[UDP].dport == 40001,
               f"{name}: to the last good datagram's sender, from the port")
            ok(bytes(p[UDP].payload)[:p[UDP].len - 8] == want and p[UDP].len == 8 + len(want), f"{name}: payload of {len(want)} bytes, as given")
    print(f"1..{n}")
    return 1 if fails else 0


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3]))
