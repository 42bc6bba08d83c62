#!/usr/bin/env python3
"""After some IXFRs of an RPZ zone, the next update is a full transfer
(AXFR), so that the memory an RPZ's IXFRs add up is reset; Unbound 1.25
added that (NUM_IXFR_BEFORE_AXFR, 5). The count of IXFRs has to survive
the auth-zone I/O thread's apply as it survives the worker's.

Knot serves an RPZ zone of --names QNAME triggers and answers IXFR from
its journal; unbound takes it in an rpz: clause with a zonefile. The zone
is updated --updates times, each update replacing --replace triggers by
new ones (1: an IXFR small enough to be applied in place; over 1000 and
an eighth of the zone: applied to a copy). After every update the new
serial must be served and written; then Knot's log must show, after the
first AXFR, an AXFR again after at most 5 IXFRs.

usage: test_zone_rpz_full_transfer.py BUILDDIR [--io-thread yes|no]
                                      [--names N] [--replace N] [--updates N]"""

import argparse
import os
import re
import sys
import tempfile

from harness.zone import (checker, file_serial, notify, rpz_from_knot,
                          rpz_qname_zone, verdict, wait_for)

ZONE = "rpz.example."
TRIGGER_A = "192.0.2.1"
IXFR_BEFORE_AXFR = 5


def rpz_text(serial, labels):
    return rpz_qname_zone(ZONE, serial, labels, TRIGGER_A)


def transfers(knot):
    """The kinds of the outgoing transfers of ZONE in Knot's log, in order."""
    kinds = []
    with open(os.path.join(knot.dir, "knot.log"), errors="replace") as f:
        for line in f:
            m = re.search(r"\b(AXFR|IXFR), outgoing.*(started|finished|completed)", line)
            if m and m.group(2) == "started" and ZONE.rstrip(".") in line:
                kinds.append(m.group(1))
    return kinds


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("build")
    ap.add_argument("--io-thread", choices=["yes", "no"], default="yes")
    ap.add_argument("--names", type=int, default=200)
    ap.add_argument("--replace", type=int, default=1)
    ap.add_argument("--updates", type=int, default=IXFR_BEFORE_AXFR + 2)
    a = ap.parse_args()
    fails, check = checker()
    labels = ["t%d" % i for i in range(a.names)]

    with tempfile.TemporaryDirectory(prefix="steady-rpz-full-") as d:
        knot, ub = rpz_from_knot(d, a.build, ZONE, rpz_text(1, labels), a.io_thread == "yes")
        try:
            ub.start()
            check(wait_for(lambda: file_serial(ub.zonefile(ZONE)) == 1, 120),
                  "serial 1 transferred and written")
            for serial in range(2, a.updates + 2):
                k = (serial - 2) * a.replace
                for i in range(a.replace):
                    labels[(k + i) % a.names] = "s%d-%d" % (serial, i)
                with open(knot.zonefile(ZONE), "w") as f:
                    f.write(rpz_text(serial, labels))
                knot.reload({ZONE: serial}, timeout=120)
                notify(ub.port, ZONE)
                ok = wait_for(lambda: file_serial(ub.zonefile(ZONE)) == serial, 120)
                check(ok, "serial %d transferred and written" % serial)
                if not ok:
                    break
            kinds = transfers(knot)
            print("transfers Knot sent, in order: %s" % " ".join(kinds))
            check(kinds[:1] == ["AXFR"], "the first transfer is an AXFR")
            run, longest, axfr_after = 0, 0, False
            for kind in kinds[1:]:
                if kind == "IXFR":
                    run += 1
                    longest = max(longest, run)
                else:
                    axfr_after = axfr_after or run > 0
                    run = 0
            check(kinds.count("IXFR") >= 1, "updates came as IXFR")
            check(axfr_after and longest <= IXFR_BEFORE_AXFR,
                  "an AXFR came after at most %d IXFRs (longest run of IXFRs: %d)"
                  % (IXFR_BEFORE_AXFR, longest))
        finally:
            rc = ub.stop()
            knot.stop()
        check(rc == 0, "unbound exit status %s" % rc)
        if fails:
            print(ub.read_log()[-2000:])
    return verdict(fails, "zone-rpz-full-transfer")


if __name__ == "__main__":
    sys.exit(main())
