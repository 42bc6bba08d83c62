#!/usr/bin/env python3
"""An IXFR that is small next to its zone is applied in place, not to a
copy: Knot serves an RPZ zone of --names QNAME triggers (local data
A 192.0.2.1), unbound (auth-zone-io-thread: yes) takes it in an rpz:
clause with a zonefile. After the AXFR, an IXFR replaces --replace
triggers by new names (twice as many RRs, over the 1000 RRs that were
always applied in place, far under the zone's size). Then:
- the new triggers answer, the replaced ones do not, the zonefile holds
  the new serial;
- unbound's peak resident memory during the update (VmHWM, reset before
  it) stays under 1.2 times its resident memory before it: a copy of
  the zone and its policies would need about twice.
Then an IXFR replaces a quarter of the triggers (more RRs than an eighth
of the names: applied to a copy): the new triggers answer, the replaced
ones do not, those of serial 2 still do, and the peak stays under 2.5
times the memory before it (two versions at once, not more). A failed
IXFR of an RPZ is zone-rpz-ixfr-fail's (test_zone_ixfr_fail.py --rpz,
under ASan, which also reports what it leaks).

usage: test_zone_rpz_memory.py BUILDDIR [--names N] [--replace N]"""

import argparse
import sys
import tempfile
import time

from harness.load import proc_status_kb
from harness.zone import (answers_address, checker, file_serial, notify, rpz_from_knot,
                          rpz_qname_zone, verdict, wait_for)

ZONE = "rpz.example."
TRIGGER_A = "192.0.2.1"


def rpz_text(serial, labels):
    return rpz_qname_zone(ZONE, serial, labels, TRIGGER_A)


def triggered(port, name):
    """whether unbound answers name with the trigger's local data (a
    name without a trigger goes to the iterator, whose only server is a
    closed port)"""
    return answers_address(port, name, TRIGGER_A, 0.2)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("build")
    ap.add_argument("--names", type=int, default=100000)
    ap.add_argument("--replace", type=int, default=1000)
    a = ap.parse_args()
    fails, check = checker()
    labels = ["t%d" % i for i in range(a.names)]

    with tempfile.TemporaryDirectory(prefix="steady-rpz-memory-") as d:
        knot, ub = rpz_from_knot(d, a.build, ZONE, rpz_text(1, labels), True)
        try:
            ub.start()
            check(wait_for(lambda: file_serial(ub.zonefile(ZONE)) == 1, 120),
                  "AXFR of %d triggers written" % a.names)
            check(triggered(ub.port, "t0.bench."), "t0.bench. has the trigger's data")
            time.sleep(1)   # the rest of the AXFR's work
            pid = ub.proc.pid
            rss0 = proc_status_kb(pid, "VmRSS")
            with open("/proc/%d/clear_refs" % pid, "w") as f:
                f.write("5")    # resets VmHWM to VmRSS
            labels[:a.replace] = ["n%d" % i for i in range(a.replace)]
            with open(knot.zonefile(ZONE), "w") as f:
                f.write(rpz_text(2, labels))
            knot.reload({ZONE: 2}, timeout=120)
            notify(ub.port, ZONE)
            last_new = "n%d.bench." % (a.replace - 1)
            check(wait_for(lambda: triggered(ub.port, last_new) and
                           file_serial(ub.zonefile(ZONE)) == 2, 120),
                  "IXFR applied: %s answers, zonefile serial 2" % last_new)
            check(not triggered(ub.port, "t0.bench."), "the replaced t0.bench. has no trigger")
            check(triggered(ub.port, "t%d.bench." % (a.names - 1)),
                  "t%d.bench., not replaced, has its trigger" % (a.names - 1))
            time.sleep(1)
            peak = proc_status_kb(pid, "VmHWM")
            check(peak <= 1.2 * rss0, "peak memory during the IXFR %d MB, before it %d MB "
                  "(at most 1.2 times)" % (peak // 1024, rss0 // 1024))
            # a large IXFR, more RRs than an eighth of the names, goes to
            # a copy of the zone and its policies: two versions at once,
            # never more
            rss1 = proc_status_kb(pid, "VmRSS")
            with open("/proc/%d/clear_refs" % pid, "w") as f:
                f.write("5")
            big = a.names // 4
            labels[a.replace:a.replace + big] = ["c%d" % i for i in range(big)]
            with open(knot.zonefile(ZONE), "w") as f:
                f.write(rpz_text(3, labels))
            knot.reload({ZONE: 3}, timeout=120)
            notify(ub.port, ZONE)
            last_copy = "c%d.bench." % (big - 1)
            check(wait_for(lambda: triggered(ub.port, last_copy) and
                           file_serial(ub.zonefile(ZONE)) == 3, 120),
                  "large IXFR applied: %s answers, zonefile serial 3" % last_copy)
            check(not triggered(ub.port, "t%d.bench." % a.replace),
                  "the replaced t%d.bench. has no trigger" % a.replace)
            check(triggered(ub.port, "n0.bench."), "n0.bench. of serial 2 keeps its trigger")
            time.sleep(1)
            peak = proc_status_kb(pid, "VmHWM")
            check(peak <= 2.5 * rss1, "peak memory during the large IXFR (a copy) %d MB, "
                  "before it %d MB (at most 2.5 times)" % (peak // 1024, rss1 // 1024))
        finally:
            rc = ub.stop()
            knot.stop()
        check(rc == 0, "unbound exit status %s" % rc)
        if fails:
            print(ub.read_log()[-2000:])
    return verdict(fails, "zone-rpz-memory")


if __name__ == "__main__":
    sys.exit(main())
