#!/usr/bin/env python3
"""Regression scenario of the wildcard-CNAME hash bug: the fork serves the
hyperlocal zone with *.example.test. CNAME example.test. the RFC 8806 way
(for-downstream: no, for-upstream: yes, fallback-enabled: no, a large
rrset cache, 2 threads); a bounded burst of distinct random-label queries on
loopback must get correct answers, rrset.cache.max_collisions must stay
small and rrset.cache.hash_repairs must stay 0.

--expect-repairs: expect hash_repairs > 0 instead (a build with the bug
reintroduced and the guard on). --guard no: run with
hash-integrity-check: no."""

import argparse
import random
import select
import socket
import sys
import tempfile
import time

import struct

from harness.server import Unbound

MAX_COLLISIONS = 32


def read_name(wire, off):
    """Decode a (possibly compressed) name at off; return (name, next off)."""
    labels, end = [], None
    while True:
        n = wire[off]
        if n & 0xc0 == 0xc0:
            if end is None:
                end = off + 2
            off = ((n & 0x3f) << 8) | wire[off + 1]
            continue
        off += 1
        if n == 0:
            break
        labels.append(wire[off:off + n].decode("ascii").lower())
        off += n
    return ".".join(labels) + ".", (end if end is not None else off)


def parse_answer(wire):
    """(id, rcode, [(owner, type, rdata)]) with rdata decoded for CNAME and A;
    a small parser, as dnspython's would make the client the bottleneck."""
    qid, flags, qd, an = struct.unpack("!HHHH", wire[:8])
    off = 12
    for _ in range(qd):
        _, off = read_name(wire, off)
        off += 4
    rrs = []
    for _ in range(an):
        owner, off = read_name(wire, off)
        rtype, _, _, rdlen = struct.unpack("!HHIH", wire[off:off + 10])
        off += 10
        if rtype == 5:
            rdata = read_name(wire, off)[0]
        elif rtype == 1:
            rdata = socket.inet_ntoa(wire[off:off + 4])
        else:
            rdata = wire[off:off + rdlen].hex()
        rrs.append((owner, rtype, rdata))
        off += rdlen
    return qid, flags & 0xf, rrs


def burst(port, names, window=100, timeout=2.0):
    """Send one A query per name with at most `window` outstanding; return
    (parsed answers by name, names that timed out)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.connect(("127.0.0.1", port))
    pending = {}          # id -> (name, sent time)
    free_ids = list(range(65536))
    random.shuffle(free_ids)
    answers, timeouts, tries = {}, [], {}
    todo = list(reversed(names))
    while todo or pending:
        while todo and len(pending) < window:
            name = todo.pop()
            qid = free_ids.pop()
            wire = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + b"".join(
                bytes([len(l)]) + l.encode() for l in name.split(".")[:-1]) + \
                b"\x00\x00\x01\x00\x01"
            sock.send(wire)
            pending[qid] = (name, time.monotonic())
        r, _, _ = select.select([sock], [], [], 0.2)
        if r:
            while True:
                try:
                    wire = sock.recv(65535, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
                qid, rcode, rrs = parse_answer(wire)
                if qid in pending:
                    name, _ = pending.pop(qid)
                    free_ids.insert(0, qid)
                    answers[name] = (rcode, rrs)
        now = time.monotonic()
        for qid, (name, sent) in list(pending.items()):
            if now - sent > timeout:
                # UDP on a loaded 2-core machine can drop a datagram:
                # ask again, a few times, before calling it a timeout
                del pending[qid]
                free_ids.insert(0, qid)
                tries[name] = tries.get(name, 1) + 1
                if tries[name] <= 3:
                    todo.append(name)
                else:
                    timeouts.append(name)
    sock.close()
    return answers, timeouts


def correct(name, answer):
    """CNAME to the apex, then the apex's A record."""
    rcode, rrs = answer
    return rcode == 0 and sorted(rrs) == sorted([
        (name, 5, "example.test."), ("example.test.", 1, "192.0.2.1")])


def main():
    ap = argparse.ArgumentParser(usage="test_wildcard_hash.py BUILDDIR [--names N] "
                                 "[--guard yes|no] [--expect-repairs]")
    ap.add_argument("builddir")
    ap.add_argument("--names", type=int, default=200000)
    ap.add_argument("--guard", choices=("yes", "no"), default="yes")
    ap.add_argument("--expect-repairs", action="store_true")
    args = ap.parse_args()

    extra = "\n".join([
        "\tnum-threads: 2",
        "\trrset-cache-size: 256m",
        "\tmsg-cache-size: 128m",
        "\thash-integrity-check: %s" % args.guard,
    ])
    rnd = random.Random(8806)
    names = ["%s.example.test." % "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789")
                                          for _ in range(12)) for _ in range(args.names)]
    failures = []
    with tempfile.TemporaryDirectory(prefix="steady-wildcard-") as rundir:
        ub = Unbound(args.builddir, rundir, extra_conf=extra)
        ub.start()
        try:
            t0 = time.monotonic()
            answers, timeouts = burst(ub.port, names)
            elapsed = time.monotonic() - t0
            st = ub.stats()
        finally:
            rc = ub.stop()
        wrong = [n for n, m in answers.items() if not correct(n, m)]
        maxcoll = int(st["rrset.cache.max_collisions"])
        repairs = int(st["rrset.cache.hash_repairs"])
        print("names=%d answered=%d wrong=%d timeouts=%d in %.1fs (%.0f qps); "
              "rrset.cache.count=%s rrset.cache.max_collisions=%d "
              "rrset.cache.hash_repairs=%d msg.cache.max_collisions=%s" % (
                  len(names), len(answers), len(wrong), len(timeouts), elapsed,
                  len(answers) / elapsed, st["rrset.cache.count"], maxcoll, repairs,
                  st["msg.cache.max_collisions"]))
        if wrong:
            failures.append("%d wrong answers, e.g. %s:\n%s" % (
                len(wrong), wrong[0], answers[wrong[0]]))
        if timeouts:
            failures.append("%d queries timed out" % len(timeouts))
        if maxcoll > MAX_COLLISIONS:
            failures.append("rrset.cache.max_collisions=%d > %d" % (maxcoll, MAX_COLLISIONS))
        if args.expect_repairs and repairs == 0:
            failures.append("rrset.cache.hash_repairs=0, expected repairs")
        if not args.expect_repairs and repairs != 0:
            failures.append("rrset.cache.hash_repairs=%d, expected 0" % repairs)
        if int(st["num.query.udpout"]) or int(st["num.query.tcpout"]):
            failures.append("queries left the machine")
        if rc != 0:
            failures.append("unbound exited with %s" % rc)
        if args.expect_repairs and "had hash value" not in ub.read_log():
            failures.append("no repair was logged")
    for f in failures:
        print("FAIL: " + f)
    if failures:
        return 1
    print("test_wildcard_hash: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
