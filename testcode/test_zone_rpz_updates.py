#!/usr/bin/env python3
"""An RPZ zone is kept up to date by IXFRs alone, and its memory stays
flat: it frees the triggers that an IXFR removes, QNAME and address
triggers both, so that no full transfer is needed to get that memory
back (1.26.1 asked for an AXFR after every 5 IXFRs of an RPZ,
NUM_IXFR_BEFORE_AXFR).

Knot serves an RPZ zone of --names QNAME triggers (local data
A 192.0.2.1) and --addr rpz-ip triggers (10.x.y.z/32, local data
A 192.0.2.2), and answers IXFR from its journal; unbound takes it in an
rpz: clause with a zonefile. The zone is updated --updates times, each
update replacing --replace QNAME triggers and --replace-addr address
triggers by new ones (an IXFR of few changes is applied in place; over
1000 RRs and an eighth of the zone, to a copy). With --rotate N, N more
QNAME triggers stay in every version with two A RRs, 192.0.2.1 and one
that every update changes (198.18.x.y): the trigger stays while an RR
of it is replaced. After every update the new serial must be served and
written. Then:
- Knot's log shows one AXFR, the first transfer, and IXFRs after it;
- with --rss-growth F, unbound's resident memory (VmRSS) after the last
  update is at most F times what it was after the first.

usage: test_zone_rpz_updates.py BUILDDIR [--io-thread yes|no]
                                [--names N] [--addr N] [--replace N]
                                [--replace-addr N] [--rotate N]
                                [--updates N] [--rss-growth F]"""

import argparse
import os
import re
import sys
import tempfile

from harness.load import proc_status_kb
from harness.zone import (checker, file_serial, knot_update, rpz_from_knot,
                          rpz_qname_zone, verdict, wait_for)

ZONE = "rpz.example."
TRIGGER_A = "192.0.2.1"
ADDR_A = "192.0.2.2"


def rpz_text(serial, labels, addrs, rotate=0):
    """The zone: QNAME triggers for labels, rpz-ip triggers for the
    numbers in addrs (10.x.y.z/32), and rotate triggers r<i>.bench whose
    second A RR is the serial's."""
    return rpz_qname_zone(ZONE, serial, labels, TRIGGER_A) + "".join(
        "32.%d.%d.%d.10.rpz-ip IN A %s\n" % (n & 255, (n >> 8) & 255, (n >> 16) & 255, ADDR_A)
        for n in addrs) + "".join(
        "r%d.bench IN A %s\nr%d.bench IN A 198.18.%d.%d\n"
        % (i, TRIGGER_A, i, (serial >> 8) & 255, serial & 255)
        for i in range(rotate))


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
    ap.add_argument("--addr", type=int, default=20)
    ap.add_argument("--replace", type=int, default=1)
    ap.add_argument("--replace-addr", type=int, default=1)
    ap.add_argument("--rotate", type=int, default=0)
    ap.add_argument("--updates", type=int, default=7)
    ap.add_argument("--rss-growth", type=float)
    a = ap.parse_args()
    fails, check = checker()
    labels = ["t%d" % i for i in range(a.names)]
    addrs = list(range(a.addr))
    next_addr = a.addr

    with tempfile.TemporaryDirectory(prefix="steady-rpz-updates-") as d:
        knot, ub = rpz_from_knot(d, a.build, ZONE, rpz_text(1, labels, addrs, a.rotate),
                                 a.io_thread == "yes")
        rss = []
        try:
            ub.start()
            check(wait_for(lambda: file_serial(ub.zonefile(ZONE)) == 1, 120),
                  "serial 1 transferred and written")
            for serial in range(2, a.updates + 2):
                k = (serial - 2) * a.replace
                for i in range(a.replace):
                    labels[(k + i) % a.names] = "s%d-%d" % (serial, i)
                k = (serial - 2) * a.replace_addr
                for i in range(a.replace_addr):
                    addrs[(k + i) % a.addr] = next_addr
                    next_addr += 1
                ok = knot_update(knot, ub, ZONE, serial, rpz_text(serial, labels, addrs, a.rotate))
                check(ok, "serial %d transferred and written" % serial)
                if not ok:
                    break
                rss.append(proc_status_kb(ub.proc.pid, "VmRSS"))
            kinds = transfers(knot)
            print("transfers Knot sent, in order: %s" % " ".join(kinds))
            check(kinds[:1] == ["AXFR"], "the first transfer is an AXFR")
            check(kinds[1:] == ["IXFR"] * a.updates,
                  "the %d updates came as IXFRs, no full transfer" % a.updates)
            if rss:
                print("VmRSS after each update, MB: %s"
                      % " ".join("%.0f" % (r / 1024) for r in rss))
            if a.rss_growth and rss:
                check(rss[-1] <= a.rss_growth * rss[0],
                      "VmRSS after the last update (%.0f MB) at most %.2f times"
                      " after the first (%.0f MB)"
                      % (rss[-1] / 1024, a.rss_growth, rss[0] / 1024))
        finally:
            rc = ub.stop()
            knot.stop()
        check(rc == 0, "unbound exit status %s" % rc)
        if fails:
            print(ub.read_log()[-2000:])
    return verdict(fails, "zone-rpz-updates")


if __name__ == "__main__":
    sys.exit(main())
