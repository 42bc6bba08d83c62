#!/usr/bin/env python3
"""Smoke test: the built unbound with the embedded default config answers
from the hyperlocal zone and through its wildcard CNAME via the iterator,
sends nothing off the machine, reports statistics and stops cleanly."""

import sys
import tempfile
import time

import dns.flags
import dns.message
import dns.query
import dns.rdatatype

from harness.server import Unbound, rcode_text, read_pin

usage = "usage: test_smoke.py BUILDDIR"


def rrsets(msg):
    return {(str(r.name), dns.rdatatype.to_text(r.rdtype)): sorted(str(x) for x in r)
            for r in msg.answer}


def main():
    if len(sys.argv) != 2:
        print(usage, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="steady-smoke-") as rundir:
        ub = Unbound(sys.argv[1], rundir)
        ub.start()
        try:
            version = __import__("subprocess").run(
                [ub.bin("unbound"), "-V"], capture_output=True, text=True).stdout
            assert "Unbound Steady patch level" in version, version
            # The base and its security status come from base.pin, or
            # from the pin the build was made with (BASE_PIN, as
            # scripts/build.sh reads it)
            pin = read_pin()
            unfixed = int(pin["BASE_UNFIXED_CVES"])
            mitigated = int(pin.get("BASE_MITIGATED_CVES", "0"))
            want = ("on Debian's unbound %s with its security patches; known upstream "
                    "CVEs not fixed: %d (%d open, %d mitigated by the fork; " % (
                        pin["BASE_DEBIAN_VERSION"], unfixed, unfixed - mitigated, mitigated))
            assert want in version, (want, version)

            r = ub.query("www.example.test.")
            assert rcode_text(r) == "NOERROR", r
            assert rrsets(r) == {("www.example.test.", "A"): ["192.0.2.80"]}, r

            # A random label goes through the wildcard CNAME to the apex.
            name = "smoke-%d.example.test." % time.monotonic_ns()
            r = ub.query(name)
            assert rcode_text(r) == "NOERROR", r
            assert rrsets(r) == {
                (name, "CNAME"): ["example.test."],
                ("example.test.", "A"): ["192.0.2.1"]}, r

            # Out of the zone: SERVFAIL at once, nothing sent anywhere.
            t0 = time.monotonic()
            r = ub.query("www.example.org.", timeout=5)
            elapsed = time.monotonic() - t0
            assert rcode_text(r) == "SERVFAIL", r
            assert elapsed < 1.0, "out-of-zone SERVFAIL took %.2fs" % elapsed

            # Ask the same name again: it must now come from the cache.
            r = ub.query("www.example.test.")
            assert rrsets(r) == {("www.example.test.", "A"): ["192.0.2.80"]}, r

            # AAAA with the CD flag has a hash of its own in the msg cache
            # (dns64 keeps the answers apart): not a hash to repair
            for cd in (True, False, True):
                q = dns.message.make_query("example.test.", "AAAA")
                if cd:
                    q.flags |= dns.flags.CD
                r = dns.query.udp(q, "127.0.0.1", port=ub.port, timeout=2)
                assert rrsets(r) == {("example.test.", "AAAA"): ["2001:db8::1"]}, r

            st = ub.stats()
            assert int(st["msg.cache.hash_repairs"]) == 0, st["msg.cache.hash_repairs"]
            assert int(st["rrset.cache.hash_repairs"]) == 0, st["rrset.cache.hash_repairs"]
            assert int(st["total.num.queries"]) == 7, st["total.num.queries"]
            assert int(st["total.num.cachehits"]) >= 1, st
            assert int(st["num.query.authzone.up"]) >= 2, st
            assert int(st["num.query.udpout"]) == 0, st["num.query.udpout"]
            assert int(st["num.query.tcpout"]) == 0, st["num.query.tcpout"]
            assert int(st["rrset.cache.count"]) >= 2, st
            assert "rrset.cache.max_collisions" in st, st
            # stats_noreset does not reset
            assert int(ub.stats()["total.num.queries"]) == 7
        finally:
            rc = ub.stop()
        assert rc == 0, "unbound exited with %s:\n%s" % (rc, ub.read_log())
        log = ub.read_log()
        assert "service stopped" in log, log
    print("test_smoke: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
