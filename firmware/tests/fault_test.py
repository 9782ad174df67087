#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The firmware's trap handler on a live adapter (nfsim): FAULT_TEST makes the firmware
execute an illegal instruction; the adapter must answer instead of hanging, report the
trap in STATS (faults, fault_cause = mcause, fault_pc = the faulting instruction's
address) and fail every later request but PING, INFO and STATS with
DEVICE_HARDWARE_ERROR. With BIN (the image) given, fault_pc must lie in the image and
hold the illegal instruction (the all-zero word). Prints one TAP line per check.
Usage: fault_test.py SOCKET [BIN]"""
import struct
import sys

from nfmodel_client import NF, Link

MCAUSE_ILLEGAL_INSTRUCTION = 2


def main():
    link = Link(sys.argv[1])
    fail = 0

    def ok(cond, what):
        nonlocal fail
        print(("ok - " if cond else "not ok - ") + "fw-trap: " + what, flush=True)
        fail |= not cond

    ok(link.reset(0x7A11) is not None, "RESET handshake")
    st, _ = link.request(NF.OP_STATS, 1, b"")
    ok(st == 0, "STATS before the trap")
    st, _ = link.request(NF.OP_FAULT_TEST, 2, b"")
    ok(st == NF.STATUS_DEVICE_HARDWARE_ERROR,
       "FAULT_TEST is answered DEVICE_HARDWARE_ERROR after the trap (got %s)" % (st if st is None else "0x%08X" % st))
    st, rep = link.request(NF.OP_STATS, 3, b"")
    s = None
    if st == 0 and rep and len(rep) >= NF.STATS_SIZE:
        s = {k: struct.unpack_from("<I", rep, getattr(NF, "STATS_%s_OFF" % k.upper()))[0]
             for k in ("faults", "fault_cause", "fault_pc")}
    ok(s is not None, "STATS still answers on a faulted adapter")
    if s is None:
        return 1
    ok(s["faults"] == 1, "STATS.faults = 1 (got %d)" % s["faults"])
    ok(s["fault_cause"] == MCAUSE_ILLEGAL_INSTRUCTION,
       "STATS.fault_cause = %d, illegal instruction (got %d)" % (MCAUSE_ILLEGAL_INSTRUCTION, s["fault_cause"]))
    if len(sys.argv) > 2:
        with open(sys.argv[2], "rb") as f:
            image = f.read()
        pc = s["fault_pc"]
        word = struct.unpack_from("<I", image, pc)[0] if pc % 4 == 0 and pc + 4 <= len(image) else None
        ok(word == 0, "STATS.fault_pc 0x%X is the illegal instruction in the image" % pc)
    st, rep = link.request(NF.OP_PING, 4, b"12345678")
    ok(st == 0 and rep == b"12345678", "PING still answers")
    st, _ = link.request(NF.OP_QP_CREATE, 5, struct.pack(NF.QP_CREATE_REQ_FMT, 1, 8, 0, 0))
    ok(st == NF.STATUS_DEVICE_HARDWARE_ERROR, "QP_CREATE fails DEVICE_HARDWARE_ERROR")
    return fail


if __name__ == "__main__":
    sys.exit(main())
