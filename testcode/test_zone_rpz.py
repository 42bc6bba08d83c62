#!/usr/bin/env python3
"""RPZ over zone transfers: Knot serves an RPZ zone (--names QNAME
triggers of the NXDOMAIN action, plus one with local data), unbound
takes it in an rpz: clause with a zonefile, with both values of
auth-zone-io-thread. Its policies must follow every update:
- the first serial (AXFR): blocked.test. is NXDOMAIN, www.redirect.test.
  answers 192.0.2.1, a name without a trigger is not rewritten (Knot
  serves test. too, with a wildcard A 198.51.100.9, through a stub);
- the next, a small IXFR (applied in place): blocked.test. removed,
  new.test. added;
- the third, a large IXFR (twice as many RRs as the zone has names:
  applied to a copy, and the policies rebuilt): every bulk trigger
  replaced by another name.
After each, the answers and the zonefile must hold the new serial.
auth-zone-io-thread: yes takes serials 1 to 3, no serials 4 to 6 (Knot's
journal goes on).

usage: test_zone_rpz.py BUILDDIR [--names N]"""

import argparse
import os
import sys
import tempfile

import dns.message
import dns.query
import dns.rcode

from harness.zone import (KnotPrimary, Secondary, checker, file_serial, notify, rpz_clause,
                      verdict, wait_for)

ZONE = "rpz.example."
UPSTREAM = "test."


def rpz_text(serial, phase, names):
    """The zone at serial, with the triggers of phase 1, 2 or 3."""
    out = ["$ORIGIN %s\n$TTL 3600\n" % ZONE,
           "@ IN SOA ns.%s hostmaster.%s %d 3600 600 86400 300\n" % (ZONE, ZONE, serial),
           "@ IN NS ns\nns IN A 127.0.0.1\n",
           "www.redirect.test IN A 192.0.2.1\n"]
    if phase == 1:
        out.append("blocked.test IN CNAME .\n")
    else:
        out.append("new.test IN CNAME .\n")
    prefix = "bulk" if phase < 3 else "other"
    for i in range(names):
        out.append("%s%d.test IN CNAME .\n" % (prefix, i))
    return "".join(out)


def rcode(port, name):
    q = dns.message.make_query(name, "A")
    try:
        r = dns.query.udp(q, "127.0.0.1", port=port, timeout=3)
    except Exception:
        return "timeout", []
    return dns.rcode.to_text(r.rcode()), [rr.to_text() for rr in r.answer]


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("build")
    ap.add_argument("--names", type=int, default=2000)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    fails, check = checker()

    with tempfile.TemporaryDirectory(prefix="steady-rpz-") as d:
        knot = KnotPrimary(os.path.join(d, "knot"), [ZONE, UPSTREAM])
        with open(knot.zonefile(ZONE), "w") as f:
            f.write(rpz_text(1, 1, a.names))
        with open(knot.zonefile(UPSTREAM), "w") as f:
            f.write("$ORIGIN test.\n$TTL 3600\n@ IN SOA ns.test. h.test. 1 3600 600 "
                    "86400 300\n@ IN NS ns\nns IN A 127.0.0.1\n* IN A 198.51.100.9\n")
        knot.start({ZONE: 1, UPSTREAM: 1})
        try:
            for base, io in ((0, True), (3, False)):
                mode = "auth-zone-io-thread: %s" % ("yes" if io else "no")
                ub = Secondary(build, os.path.join(d, "unbound-%s" % io), knot.port, [ZONE],
                               io_thread=io)
                # test. is a default local zone (RFC 6761), answered
                # before the RPZ; here it comes from Knot
                rpz_clause(ub, ZONE, "\tlocal-zone: \"test.\" nodefault\n")
                with open(ub.conf, "a") as f:
                    f.write("stub-zone:\n\tname: \"%s\"\n\tstub-addr: 127.0.0.1@%d\n" % (
                        UPSTREAM, knot.port))
                try:
                    if base:
                        # Knot's journal goes on: serials 4 to 6
                        with open(knot.zonefile(ZONE), "w") as f:
                            f.write(rpz_text(base + 1, 1, a.names))
                        knot.reload({ZONE: base + 1})
                    ub.start()
                    for phase in (1, 2, 3):
                        serial = base + phase
                        if phase > 1:
                            with open(knot.zonefile(ZONE), "w") as f:
                                f.write(rpz_text(serial, phase, a.names))
                            knot.reload({ZONE: serial})
                            notify(ub.port, ZONE)
                        # an RPZ zone answers no SOA query: wait for the file
                        check(wait_for(lambda: file_serial(ub.zonefile(ZONE)) == serial, 60),
                              "%s: serial %d transferred and written (file %s)" % (
                                  mode, serial, file_serial(ub.zonefile(ZONE))))
                        rc, ans = rcode(ub.port, "www.redirect.test.")
                        check(rc == "NOERROR" and any("192.0.2.1" in x for x in ans),
                              "%s, serial %d: www.redirect.test. has the local data (%s %s)"
                              % (mode, serial, rc, ans))
                        rc, _ = rcode(ub.port, "blocked.test.")
                        want = "NXDOMAIN" if phase == 1 else "NOERROR"
                        check(rc == want, "%s, serial %d: blocked.test. is %s (%s)"
                              % (mode, serial, want, rc))
                        rc, _ = rcode(ub.port, "new.test.")
                        want = "NOERROR" if phase == 1 else "NXDOMAIN"
                        check(rc == want, "%s, serial %d: new.test. is %s (%s)"
                              % (mode, serial, want, rc))
                        last = a.names - 1
                        rc_bulk, _ = rcode(ub.port, "bulk%d.test." % last)
                        rc_other, _ = rcode(ub.port, "other%d.test." % last)
                        want = ("NXDOMAIN", "NOERROR") if phase < 3 else ("NOERROR", "NXDOMAIN")
                        check((rc_bulk, rc_other) == want,
                              "%s, serial %d: bulk%d/other%d.test. are %s (%s)"
                              % (mode, serial, last, last, want, (rc_bulk, rc_other)))
                finally:
                    rc = ub.stop()
                check(rc == 0, "%s: unbound exit status %s" % (mode, rc))
                if fails:
                    print(ub.read_log()[-2000:])
            with open(os.path.join(knot.dir, "knot.log"), errors="replace") as f:
                ixfrs = sum(1 for line in f if "IXFR, outgoing" in line and "started" in line)
            check(ixfrs >= 4, "Knot sent the updates as IXFR (%d started)" % ixfrs)
        finally:
            knot.stop()
    return verdict(fails, "zone-rpz")


if __name__ == "__main__":
    sys.exit(main())
