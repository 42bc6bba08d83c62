#!/usr/bin/env python3
"""An RPZ fails closed while it is updated: a name that both the version
before an update and the version after it block is blocked by every
answer given while the update is applied (issue 66, finding 10).

Knot serves an RPZ of --names QNAME triggers t<i>.bench (local data
A 192.0.2.1, the first --change of them switching to 192.0.2.3 and
back with every serial, so that each update is large enough for the
auth-zone I/O thread to apply it in place in many steps), and
`victim.example.` (h A 10.1.2.3, k A 10.200.0.1) through a stub. The
serials switch between two versions of the policy:

  A: *.ex.bench CNAME .                  B: www.ex.bench CNAME .
     8.0.0.0.10.rpz-ip CNAME .              *.p.ex.bench CNAME rpz-passthru.
                                            a.p.ex.bench CNAME .
                                            *.q.ex.bench CNAME .
                                            a.q.ex.bench CNAME .
                                            9.0.0.0.10.rpz-ip CNAME .
                                            9.0.0.128.10.rpz-ip CNAME .

Both block www.ex.bench, a.p.ex.bench, c.q.ex.bench (A by its wildcard,
B by its exact triggers or, for c.q, by *.q.ex, which a.q.ex makes the
closest encloser in Unbound's lookup) and h.victim.example and
k.victim.example (10.0.0.0/8 in A, its two halves in B): NXDOMAIN.
A lookup that sees part of an update can let each through: the
wildcard deleted before www.ex is added (the finding's run), the
passthru wildcard added before a.p.ex, a.q.ex added before *.q.ex,
the /8 deleted before the halves are added. No order of the changes
avoids all of them, so only an update that lookups see whole passes.

--probes threads ask for the five names without a pause while --updates
IXFRs and then --axfrs AXFRs (Knot restarted with its journal purged,
applied as their difference to the zone held) land; every answer must
be NXDOMAIN. Also: every update is served (list_auth_zones), the probes
were answered during them, the last version's triggers answer after
it, and unbound exits with status 0 and no sanitizer report (make test
runs it on build/fork-asan).

Shown failing on the series of 45352e5 (patch level 72: the I/O thread
applied an RPZ's update in steps that let lookups in between), passing
with the update applied in one hold of the zone's lock.

usage: test_zone_rpz_fail_closed.py BUILDDIR [--names N] [--change N]
                                    [--updates N] [--axfrs N]
                                    [--probes N]"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import dns.message
import dns.query
import dns.rcode

from harness.zone import (AnswerProbe, KnotPrimary, Secondary, check_clean_exit,
                          checker, list_auth_zone, notify, rpz_clause,
                          rpz_qname_zone, verdict, wait_for)

ZONE = "rpz.example."
VICTIM = "victim.example."
OLD_A = "192.0.2.1"
NEW_A = "192.0.2.3"
POLICY_A = ("*.ex.bench CNAME .\n"
            "8.0.0.0.10.rpz-ip CNAME .\n")
POLICY_B = ("www.ex.bench CNAME .\n"
            "*.p.ex.bench CNAME rpz-passthru.\n"
            "a.p.ex.bench CNAME .\n"
            "*.q.ex.bench CNAME .\n"
            "a.q.ex.bench CNAME .\n"
            "9.0.0.0.10.rpz-ip CNAME .\n"
            "9.0.0.128.10.rpz-ip CNAME .\n")
BLOCKED = ["www.ex.bench.", "a.p.ex.bench.", "c.q.ex.bench.",
           "h.victim.example.", "k.victim.example."]
VICTIM_TEXT = ("$ORIGIN victim.example.\n$TTL 3600\n"
               "@ IN SOA ns h 1 3600 600 86400 300\n@ IN NS ns\n"
               "ns IN A 127.0.0.1\nh IN A 10.1.2.3\nk IN A 10.200.0.1\n")


def rpz_text(serial, names, change):
    """The RPZ at serial: policy B at even serials, A at odd ones, and
    the t<i> triggers, the first change of them with NEW_A at even
    serials."""
    flip = serial % 2 == 0
    text = rpz_qname_zone(ZONE, serial, ["t%d" % i for i in range(change, names)], OLD_A)
    text += "".join("t%d.bench IN A %s\n" % (i, NEW_A if flip else OLD_A)
                    for i in range(change))
    return text + (POLICY_B if flip else POLICY_A)


def blocked_answer(name, r):
    """None if r is NXDOMAIN, as both versions answer; else what it
    answered."""
    if r.rcode() != dns.rcode.NXDOMAIN:
        return "%s %s" % (dns.rcode.to_text(r.rcode()),
                          " ".join(rd.to_text() for rrset in r.answer for rd in rrset))
    return None


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("build")
    ap.add_argument("--names", type=int, default=100000)
    ap.add_argument("--change", type=int, default=5000)
    ap.add_argument("--updates", type=int, default=6)
    ap.add_argument("--axfrs", type=int, default=2)
    ap.add_argument("--probes", type=int, default=2)
    a = ap.parse_args()
    fails, check = checker()

    with tempfile.TemporaryDirectory(prefix="steady-rpz-fail-closed-") as d:
        knot = KnotPrimary(os.path.join(d, "knot"), [ZONE, VICTIM])
        with open(knot.zonefile(ZONE), "w") as f:
            f.write(rpz_text(1, a.names, a.change))
        with open(knot.zonefile(VICTIM), "w") as f:
            f.write(VICTIM_TEXT)
        knot.start({ZONE: 1, VICTIM: 1}, timeout=120)
        ub = Secondary(os.path.abspath(a.build), os.path.join(d, "unbound"), knot.port,
                       [ZONE], threads=1, io_thread=True, verbosity=3)
        rpz_clause(ub, ZONE)
        with open(ub.conf, "a") as f:
            f.write("stub-zone:\n\tname: \"%s\"\n\tstub-addr: 127.0.0.1@%d\n"
                    % (VICTIM, knot.port))

        def listed_serial():
            lst = list_auth_zone(ub, ZONE)
            return int(lst["serial"]) if lst and "serial" in lst else None

        def update(serial, restart):
            with open(knot.zonefile(ZONE), "w") as f:
                f.write(rpz_text(serial, a.names, a.change))
            if restart:
                # without its journal Knot has no IXFR to send: an AXFR
                subprocess.run(["knotc", "-c", knot.conf, "-f", "zone-purge", ZONE,
                                "+journal"], capture_output=True, check=True)
                knot.stop()
                knot.start({ZONE: serial, VICTIM: 1}, timeout=120)
            else:
                knot.reload({ZONE: serial}, timeout=120)
            notify(ub.port, ZONE)
            return wait_for(lambda: listed_serial() == serial, 120, step=0.1)

        probes = []
        try:
            ub.start()
            check(wait_for(lambda: listed_serial() == 1, 120, step=0.1),
                  "serial 1 transferred")
            probes = [AnswerProbe(ub.port, BLOCKED, blocked_answer, first=n)
                      for n in range(a.probes)]
            for p in probes:
                p.start()
            last = 1
            for serial in range(2, a.updates + a.axfrs + 2):
                ok = update(serial, serial >= a.updates + 2)
                check(ok, "serial %d served (%s)" % (
                    serial, "AXFR" if serial >= a.updates + 2 else "IXFR"))
                if not ok:
                    break
                last = serial
            for p in probes:
                p.stopping.set()
            for p in probes:
                p.join(5)
            answers = sum(p.answers for p in probes)
            wrong = [w for p in probes for w in p.wrong]
            print("probe answers: %d, not NXDOMAIN: %d" % (answers, len(wrong)))
            for w in wrong[:10]:
                print("  " + w)
            check(answers >= 200, "the probes were answered (%d)" % answers)
            check(not wrong, "every answer for a name both versions block is "
                  "NXDOMAIN (%d not)" % len(wrong))
            want = NEW_A if last % 2 == 0 else OLD_A
            r = dns.query.udp(dns.message.make_query("t0.bench.", "A"), "127.0.0.1",
                              port=ub.port, timeout=2)
            got = [rd.to_text() for rrset in r.answer for rd in rrset]
            check(got == [want], "after the last update t0.bench. answers %s (%s)"
                  % (want, got))
            log = ub.read_log()
            applied = re.findall(r"auth zone %s updated to serial \d+ \((\w+) applied "
                                 r"in place([^)]*)\)" % re.escape(ZONE), log)
            for kind, how in applied:
                print("  %s in place%s" % (kind, how))
            check(sum(1 for kind, how in applied if kind == "AXFR" and "difference" in how)
                  >= min(a.axfrs, 1),
                  "the AXFRs were applied as their difference to the zone held")
        finally:
            for p in probes:
                p.stopping.set()
            rc = ub.stop()
            knot.stop()
        check_clean_exit(check, rc, ub.read_log())
        if fails:
            print(ub.read_log()[-2000:])
    return verdict(fails, "zone-rpz-fail-closed")


if __name__ == "__main__":
    sys.exit(main())
