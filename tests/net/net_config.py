#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The host's side of the network test: sets a simulated adapter's IPv4 address over its
host link (NET_CONFIG), then holds the link open (the simulation runs while a host is
attached) until STOP_FILE appears, and prints the adapter's network counters as TAP
lines. Usage: net_config.py SOCKET IPV4 PREFIXLEN STOP_FILE"""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "firmware", "tests"))
from nfmodel_client import NF, Link  # noqa: E402

LIMIT_S = 300  # the longest the test may hold the link: every wait has a bound


def word(dotted):
    """An IPv4 address as NET_CONFIG carries it: the first byte in bits 7:0."""
    return struct.unpack("<I", socket.inet_aton(dotted))[0]


def main():
    path, ip, plen, stop = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    mask = struct.unpack("<I", struct.pack(">I", (0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF))[0]
    link = Link(path)
    fail = 0

    def ok(cond, what):
        nonlocal fail
        print(("ok - " if cond else "not ok - ") + "net: " + what, flush=True)
        fail |= not cond

    ok(link.reset(0x4E37) is not None, "RESET handshake with the simulated adapter")
    body = struct.pack(NF.NET_CONFIG_REQ_FMT, NF.NET_CONFIG_FLAG_ADDR, word(ip), mask, 0, 0, 0)
    st, rep = link.request(NF.OP_NET_CONFIG, 1, body)
    got = struct.unpack(NF.NET_CONFIG_REP_FMT, rep[:NF.NET_CONFIG_REP_SIZE]) if st == 0 and rep else None
    ok(got is not None and got[0] == word(ip) and got[1] == mask, "NET_CONFIG sets the address %s/%d" % (ip, plen))
    if got:
        mac = struct.pack("<IH", got[2], got[3] & 0xFFFF)
        print("# mac " + ":".join("%02x" % b for b in mac), flush=True)
        with open(stop + ".mac", "w") as f:
            f.write(":".join("%02x" % b for b in mac) + "\n")
    t0 = time.monotonic()
    n = 2
    while not os.path.exists(stop) and time.monotonic() - t0 < LIMIT_S:
        st, _ = link.request(NF.OP_PING, n, b"keepopen")  # the link's traffic keeps it alive
        n += 1
        time.sleep(0.2)
    st, rep = link.request(NF.OP_STATS, n, b"")
    if st == 0 and rep and len(rep) >= NF.STATS_SIZE:
        for k in ("net_rx", "net_arp_answered", "net_icmp_answered", "net_unhandled", "net_tx_dropped", "port_rx_ok",
                  "port_drop_fcs", "port_drop_addr", "port_drop_ip", "port_drop_room", "port_tx"):
            print("# stats %s %d" % (k, struct.unpack_from("<I", rep, getattr(NF, "STATS_%s_OFF" % k.upper()))[0]))
        with open(stop + ".stats", "w") as f:
            for k in ("net_arp_answered", "net_icmp_answered"):
                f.write("%s %d\n" % (k, struct.unpack_from("<I", rep, getattr(NF, "STATS_%s_OFF" % k.upper()))[0]))
    ok(st == 0, "STATS after the pings")
    return fail


if __name__ == "__main__":
    sys.exit(main())
