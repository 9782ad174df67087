#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A port's hello (sim/nf_wire_proto.h) against a running nfwire: per-port loss, dup,
corrupt, reorder and pcap on the frames that port sends, a bad hello refused, and
--idle-exit with --lock. Endpoints are plain SOCK_SEQPACKET sockets.

usage: check_wire_hello.py NFWIRE WORKDIR
Prints TAP lines; exits 1 when a case fails.
"""
import os
import re
import socket
import subprocess
import sys
import time
import zlib

from scapy.all import rdpcap

NFWIRE, WORK = sys.argv[1], sys.argv[2]
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "nf_wire_proto.h")) as f:
    PROTO = f.read()
PREFIX = re.search(r'#define NF_WIRE_HELLO_PREFIX "([^"]*)"', PROTO).group(1).encode()
fails = 0


def ok(cond, name):
    global fails
    print(("ok - " if cond else "not ok - ") + "hello: " + name)
    if not cond:
        fails += 1


def frame(dst, src, n):
    """A good frame (FCS appended) with payload byte n, padded to 60 bytes."""
    body = bytes(dst) + bytes(src) + b"\x88\xb5" + bytes([n]) * 46
    return body + zlib.crc32(body).to_bytes(4, "little")


def fcs_ok(f):
    return len(f) >= 4 and zlib.crc32(f[:-4]).to_bytes(4, "little") == f[-4:]


def start(name, *opts):
    sock = os.path.join(WORK, name + ".sock")
    p = subprocess.Popen([NFWIRE, "--socket", sock] + list(opts), stderr=open(os.path.join(WORK, name + ".err"), "w"))
    for _ in range(50):
        if os.path.exists(sock):
            break
        time.sleep(0.1)
    return p, sock


def port(sock, hello=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sock)
    if hello is not None:
        s.send(PREFIX + hello.encode())
    return s


def recv_all(s, wait=0.3):
    """Every message that arrives within wait seconds of the last one."""
    got = []
    s.settimeout(wait)
    try:
        while True:
            m = s.recv(20000)
            if not m:
                break
            got.append(m)
    except socket.timeout:
        pass
    return got


A = [2, 0, 0, 0, 0, 0xA]
B = [2, 0, 0, 0, 0, 0xB]


def run(hello, count=4):
    """Port A (with hello) sends count frames to B; returns what B received."""
    p, sock = start("hello")
    b = port(sock)
    b.send(frame([0xFF] * 6, B, 0xEE))  # B announces itself: the switch learns it
    a = port(sock, hello)
    time.sleep(0.1)
    for i in range(count):
        a.send(frame(B, A, i))
    got = recv_all(b)
    a.close()
    b.close()
    p.terminate()
    p.wait(5)
    return got


got = run("loss=1,seed=3")
ok(got == [], "loss=1: B receives none of A's frames (%d)" % len(got))
got = run("loss=0,dup=1")
ok(len(got) == 8 and all(fcs_ok(f) for f in got) and [f[14 + 2] for f in got] == [0, 0, 1, 1, 2, 2, 3, 3],
   "dup=1: every frame twice, in order (%s)" % [f[16] for f in got])
got = run("corrupt=1")
ok(len(got) == 4 and not any(fcs_ok(f) for f in got), "corrupt=1: every frame arrives with a bad FCS")
got = run("reorder=1", count=1)
ok(len(got) == 1 and fcs_ok(got[0]), "reorder=1: a held frame is sent after a wait when no next one comes")
got = run("reorder=0.5,seed=7", count=40)
order = [f[16] for f in got]
ok(sorted(order) == list(range(40)) and order != list(range(40)),
   "reorder=0.5: all 40 frames arrive, not all in order")
got = run("")
ok(len(got) == 4 and [f[16] for f in got] == [0, 1, 2, 3], "an empty hello: frames pass untouched")

# pcap: the frames port A sends (before its faults) and receives, no FCS.
cap = os.path.join(WORK, "porta.pcap")
p, sock = start("pcap")
b = port(sock)
a = port(sock, "loss=1,pcap=" + cap)
c = port(sock)
time.sleep(0.1)
a.send(frame([0xFF] * 6, A, 1))   # lost (loss=1) but captured as sent
b.send(frame([0xFF] * 6, B, 2))   # flooded to A: captured as received
c.send(frame(B, [2, 0, 0, 0, 0, 0xC], 3))  # unicast to B: not A's
time.sleep(0.3)
for s_ in (a, b, c):
    s_.close()
p.terminate()
p.wait(5)
pk = rdpcap(cap)
# Within one poll the switch takes its ports in turn: the two may be recorded either way.
ok(sorted(bytes(x)[14] for x in pk) == [1, 2] and all(len(bytes(x)) == 60 for x in pk),
   "pcap=: the port's sent and received frames, without FCS, not the others' (%d records)" % len(pk))

# A bad hello: the port is closed, the others go on.
p, sock = start("bad")
bad = port(sock, "loss=2")
good = port(sock, "loss=0")
bad.settimeout(2)
try:
    closed = bad.recv(100) == b""
except OSError:
    closed = True
good.send(frame([0xFF] * 6, A, 1))
p.terminate()
p.wait(5)
err = open(os.path.join(WORK, "bad.err")).read()
ok(closed and "bad hello option" in err, "a bad hello: the port is refused, the reason on stderr")

# --idle-exit 0 --lock: exits when the last endpoint leaves, its socket removed.
lock = os.path.join(WORK, "idle.lock")
open(lock, "w").close()
p, sock = start("idle", "--idle-exit", "0", "--lock", lock)
e = port(sock)
time.sleep(0.3)
alive = p.poll() is None
e.close()
try:
    rc = p.wait(5)
except subprocess.TimeoutExpired:
    p.kill()
    rc = None
ok(alive and rc == 0 and not os.path.exists(sock),
   "--idle-exit 0: runs while an endpoint is there, exits 0 when it leaves, socket removed")
sys.exit(1 if fails else 0)
