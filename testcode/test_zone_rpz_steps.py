#!/usr/bin/env python3
"""An IXFR of an RPZ applied in place never shows a client a trigger
that is neither as before the IXFR nor as after it. (A patch of the
series until 2026-12-07, old 0055, applied it in steps that let go of
the zone's write lock every millisecond;
since the RPZ's lookups let names through between steps, see
test_zone_rpz_fail_closed.py, it is applied in one hold, and this test
guards that a trigger changed in place is still never seen half done.)

Knot serves an RPZ of --names QNAME triggers t<i>.bench (local data
A 192.0.2.1) and --addr rpz-ip triggers; unbound takes it in an rpz:
clause with a zonefile. Each of --updates updates gives --change of the
triggers the other address (192.0.2.1 and 192.0.2.3 in turn) and
replaces --change-addr rpz-ip triggers: in the IXFR each changed trigger
is an RR deleted and one added, the deletions first. While the IXFRs
are applied, --probes threads ask for the changed triggers without a
pause; every answer must be NOERROR with one A RR, 192.0.2.1 or
192.0.2.3. An apply that let a lookup in between a trigger's deletion
and its addition gives it no trigger (SERVFAIL: the root is a closed
port) or no answer. Then:
- every update was applied in place (the I/O thread's log line at
  verbosity 3), not to a copy of the zone;
- after the last update every changed trigger answers its new address,
  and a trigger that did not change answers 192.0.2.1;
- unbound exits with status 0 and no sanitizer report (make test runs
  it on build/fork-asan).

The default IXFR (4,204 RRs for 40,000 names) is within an eighth of
the zone's names, which bounds an IXFR applied in place.

usage: test_zone_rpz_steps.py BUILDDIR [--names N] [--addr N]
                              [--change N] [--change-addr N]
                              [--updates N] [--probes N]"""

import argparse
import re
import sys
import tempfile

import dns.message
import dns.query
import dns.rcode

from harness.zone import (AnswerProbe, check_clean_exit, checker, file_serial,
                          knot_update, rpz_from_knot, rpz_qname_zone, verdict,
                          wait_for)

ZONE = "rpz.example."
OLD_A = "192.0.2.1"
NEW_A = "192.0.2.3"
ADDR_A = "192.0.2.2"


def rpz_text(serial, names, changed, flip, addrs):
    """The zone at serial: names triggers, the first changed of them
    with NEW_A when flip, and rpz-ip triggers for the numbers in addrs."""
    text = rpz_qname_zone(ZONE, serial, ["t%d" % i for i in range(changed, names)], OLD_A)
    text += "".join("t%d.bench IN A %s\n" % (i, NEW_A if flip else OLD_A)
                    for i in range(changed))
    return text + "".join("32.%d.%d.%d.10.rpz-ip IN A %s\n"
                          % (n & 255, (n >> 8) & 255, (n >> 16) & 255, ADDR_A)
                          for n in addrs)


def trigger_answer(name, r):
    """None if r answers a changed trigger with its old or new address,
    one A RR; else what it answered."""
    addrs = [rd.to_text() for rrset in r.answer for rd in rrset]
    if r.rcode() != dns.rcode.NOERROR or len(addrs) != 1 or addrs[0] not in (OLD_A, NEW_A):
        return "%s %s" % (dns.rcode.to_text(r.rcode()), " ".join(addrs))
    return None


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("build")
    ap.add_argument("--names", type=int, default=40000)
    ap.add_argument("--addr", type=int, default=200)
    ap.add_argument("--change", type=int, default=2000)
    ap.add_argument("--change-addr", type=int, default=100)
    ap.add_argument("--updates", type=int, default=6)
    ap.add_argument("--probes", type=int, default=2)
    a = ap.parse_args()
    fails, check = checker()
    addrs = list(range(a.addr))
    next_addr = a.addr
    changed = ["t%d.bench." % i for i in range(a.change)]

    with tempfile.TemporaryDirectory(prefix="steady-rpz-steps-") as d:
        knot, ub = rpz_from_knot(d, a.build, ZONE,
                                 rpz_text(1, a.names, a.change, False, addrs), True)
        with open(ub.conf) as f:
            conf = f.read()
        with open(ub.conf, "w") as f:
            f.write(re.sub(r"\tverbosity: \d+", "\tverbosity: 3", conf))
        probes = []
        try:
            ub.start()
            check(wait_for(lambda: file_serial(ub.zonefile(ZONE)) == 1, 120),
                  "serial 1 transferred and written")
            probes = [AnswerProbe(ub.port, changed, trigger_answer, seed=n)
                      for n in range(a.probes)]
            for p in probes:
                p.start()
            for serial in range(2, a.updates + 2):
                for i in range(a.change_addr):
                    addrs[(serial * a.change_addr + i) % a.addr] = next_addr
                    next_addr += 1
                ok = knot_update(knot, ub, ZONE, serial,
                                 rpz_text(serial, a.names, a.change, serial % 2 == 0, addrs))
                check(ok, "serial %d transferred and written" % serial)
                if not ok:
                    break
            for p in probes:
                p.stopping.set()
            for p in probes:
                p.join(5)
            answers = sum(p.answers for p in probes)
            wrong = [w for p in probes for w in p.wrong]
            print("probe answers: %d, wrong: %d" % (answers, len(wrong)))
            for w in wrong[:10]:
                print("  " + w)
            check(answers >= 100, "the probes were answered (%d)" % answers)
            check(not wrong, "every answer for a changed trigger is its old or "
                  "new address, one A RR (%d not)" % len(wrong))
            last = NEW_A if (a.updates + 1) % 2 == 0 else OLD_A
            sample = changed[:20] + ["t%d.bench." % (a.names - 1)]
            good = 0
            for i, name in enumerate(sample):
                want = OLD_A if i == len(sample) - 1 else last
                r = dns.query.udp(dns.message.make_query(name, "A"), "127.0.0.1",
                                  port=ub.port, timeout=2)
                if [rd.to_text() for rrset in r.answer for rd in rrset] == [want]:
                    good += 1
            check(good == len(sample), "after the last update the triggers answer "
                  "their new data (%d of %d)" % (good, len(sample)))
            inplace = re.findall(r"auth zone %s updated to serial \d+ \(IXFR applied "
                                 r"in place\)" % re.escape(ZONE), ub.read_log())
            check(len(inplace) == a.updates,
                  "each of the %d IXFRs was applied in place (%d)" % (a.updates,
                                                                      len(inplace)))
        finally:
            for p in probes:
                p.stopping.set()
            rc = ub.stop()
            knot.stop()
        check_clean_exit(check, rc, ub.read_log())
        if fails:
            print(ub.read_log()[-2000:])
    return verdict(fails, "zone-rpz-steps")


if __name__ == "__main__":
    sys.exit(main())
