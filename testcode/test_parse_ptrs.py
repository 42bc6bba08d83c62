#!/usr/bin/env python3
"""The bound on name decompression work (issue 43, CVE-2026-96405):
unbound refuses answers and queries whose names follow too many
compression pointers, counts the answers, and parses every other message
as before.

A scripted authoritative server on loopback (Python, UDP and TCP) serves
ptrs.example., a stub-zone of unbound's; the first label of the query
name chooses its answer (harness/ptrchain.py):
- normal: a small answer; big: 64 KB of A records (over TCP after a
  truncated UDP answer); ns: 64 KB of NS records whose rdata names are
  compressed (two hops an RR): answered, total.num.malformed_replies unchanged;
- deep: three A records whose owner is the query name reached in 16
  hops (a chain of 15 pointers), the most one name may take: answered;
- chain: the same with 17 hops (a chain of 16): SERVFAIL, and
  total.num.malformed_replies counts it;
- budget: 64 KB of A records whose owners are, in turn, the query name
  reached in 16 hops and a pointer to it, more compression work than a
  message of that size may take: SERVFAIL, counted;
- samechain: 64 KB of A records whose owners are all the same pointer,
  to the query name reached in 16 hops: each owner is not walked again,
  answered (issue 66 finding 20);
- encoder: 15 CNAME records of names that each add a label to the one
  before, as a compressor writes them, then 64 KB of A records of the
  last name, 16 hops each: answered (finding 20);
- labels: 64 KB of PTR records whose rdata is a pointer to a name of
  127 labels: SERVFAIL, counted (finding 19);
- nsecdrop: two NSEC records in the answer section, then 64 KB of NSEC
  records of the same two owners in the authority section, whose next
  names take 16 hops each: dropped for their section, but their walks
  count (issue 66 finding 18): SERVFAIL, counted.
Then queries to unbound whose EDNS record's owner is the root name
reached through a chain: 16 hops are answered, 17 get FORMERR
(num.answer.rcode.FORMERR). On the series before the bound, chain and
budget were answered and the query was not refused; on patch level 73
nsecdrop was answered, not counted; on level 79 samechain and encoder
got SERVFAIL, and labels was answered.

usage: test_parse_ptrs.py BUILDDIR"""

import os
import socket
import struct
import sys
import tempfile

import dns.message
import dns.query
import dns.rcode

from harness import ptrchain
from harness.server import Unbound, WireServer, loopback_conf
from harness.zone import checker, verdict

ZONE = "ptrs.example."
ZONE_WIRE = b"\x04ptrs\x07example\x00"
BIG = 65535
# first label: (kind of answer, size, chain pointers, records after the
# chain or None for as many as fit, over TCP, owners in turn)
KINDS = {
    b"normal": ("normal", 512, 0, None, False, False),
    b"big": ("normal", BIG, 0, None, True, False),
    b"ns": ("ns", BIG, 0, None, True, False),
    b"deep": ("owner-chain", BIG, 15, 3, False, False),
    b"chain": ("owner-chain", BIG, 16, 3, False, False),
    b"budget": ("owner-chain", BIG, 15, None, True, True),
    b"samechain": ("owner-chain", BIG, 15, None, True, False),
    b"encoder": ("encoder-chain", BIG, 15, None, True, False),
    b"labels": ("ptr-labels", BIG, 127, None, True, False),
    b"nsecdrop": ("nsec-drop", BIG, 15, None, True, False),
}


class ChainServer(WireServer):
    """An authoritative server for ZONE on 127.0.0.1 that answers from
    KINDS by the query name's first label (normal for any other)."""

    def answer(self, data, over_tcp):
        """The answer to the query data (wire format), or None."""
        if len(data) < 12:
            return None
        qid = struct.unpack("!H", data[:2])[0]
        pos = 12
        while pos < len(data) and data[pos]:
            pos += data[pos] + 1
        qname = data[12:pos + 1]
        if pos + 5 > len(data):
            return None
        qtype = struct.unpack("!H", data[pos + 1:pos + 3])[0]
        first = qname[1:1 + qname[0]] if qname[0] else b""
        kind, size, k, rrs, tcp, alternate = KINDS.get(first, KINDS[b"normal"])
        if tcp and not over_tcp:
            # truncated: the question only, TC set
            return ptrchain.answer("normal", 0, 0, qid, qname, qtype,
                                   flags=0x8600)
        if kind == "nsec-drop":
            return ptrchain.nsec_drop_answer(size, k, qid, qname, qtype)
        return ptrchain.answer(kind, size, k, qid, qname, qtype, rrs=rrs,
                               to_qname=True, alternate=alternate)


def ask(ub, name, rdtype, tcp):
    q = dns.message.make_query(name, rdtype)
    if tcp:
        return dns.query.tcp(q, "127.0.0.1", port=ub.port, timeout=10)
    return dns.query.udp(q, "127.0.0.1", port=ub.port, timeout=10)


def raw_udp(port, wire, timeout=5):
    """Send wire to unbound; the answer parsed, or None on a timeout."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        s.sendto(wire, ("127.0.0.1", port))
        try:
            data = s.recv(65535)
        except socket.timeout:
            return None
    return dns.message.from_wire(data, ignore_trailing=True)


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("usage: ")[1], file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    fails, check = checker()
    srv = ChainServer()
    try:
        with tempfile.TemporaryDirectory(prefix="steady-ptrs-") as d:
            ub = Unbound(build, d)
            ub.log = os.path.join(d, "stdout.log")
            with open(ub.conf, "w") as f:
                f.write(loopback_conf(
                    d, ub.port, ub.control_port, threads=1,
                    server=["max-udp-size: 65535", "edns-buffer-size: 1232"],
                    clauses=["stub-zone:", '\tname: "%s"' % ZONE,
                             "\tstub-addr: 127.0.0.1@%d" % srv.port]))
            with ub:
                def malformed():
                    return int(ub.stats().get("total.num.malformed_replies", -1))

                for label, rdtype, tcp, ok in (
                        ("normal", "A", False, True),
                        ("big", "A", True, True),
                        ("ns", "NS", True, True),
                        ("deep", "A", False, True),
                        ("chain", "A", False, False),
                        ("budget", "A", True, False),
                        ("samechain", "A", True, True),
                        ("encoder", "A", True, True),
                        ("labels", "A", True, False),
                        ("nsecdrop", "A", True, False)):
                    before = malformed()
                    r = ask(ub, "%s.%s" % (label, ZONE), rdtype, tcp)
                    after = malformed()
                    rc = dns.rcode.to_text(r.rcode())
                    n = sum(len(rrset) for rrset in r.answer)
                    seen = "rcode %s, %d records, total.num.malformed_replies %d -> %d" % (
                        rc, n, before, after)
                    if ok:
                        check(rc == "NOERROR" and n > 0 and after == before,
                              "%s: answered, not counted (%s)" % (label, seen))
                    else:
                        check(rc == "SERVFAIL" and after > before,
                              "%s: refused and counted (%s)" % (label, seen))
                for k, ok in ((15, True), (16, False)):
                    before = int(ub.stats().get("num.answer.rcode.FORMERR", 0))
                    r = raw_udp(ub.port, ptrchain.query(k, ZONE_WIRE, qid=4000 + k))
                    after = int(ub.stats().get("num.answer.rcode.FORMERR", 0))
                    rc = dns.rcode.to_text(r.rcode()) if r else "no answer"
                    what = "a query whose EDNS owner takes %d hops" % (k + 1)
                    if ok:
                        check(rc == "NOERROR", "%s: answered (rcode %s)" % (what, rc))
                    else:
                        check(rc == "FORMERR" and after == before + 1,
                              "%s: FORMERR, counted (rcode %s, "
                              "num.answer.rcode.FORMERR %d -> %d)"
                              % (what, rc, before, after))
                check(ub.query("normal." + ZONE).rcode() == 0,
                      "normal answers still parse after the refused ones")
    finally:
        srv.stop()
    return verdict(fails, "parse-ptrs")


if __name__ == "__main__":
    sys.exit(main())
