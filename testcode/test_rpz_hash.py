#!/usr/bin/env python3
"""The RPZ stale-hash scenario end to end: does an RPZ trigger put rrsets
with a wrong hash value into the rrset cache, and do random labels then
pile up in one bin?

NSD on loopback serves victim.test (a wildcard A); unbound reaches it
through a stub-zone (stub-addr 127.0.0.1@PORT), with an RPZ whose nsip
trigger matches that address (32.1.0.0.127.rpz-nsip) with local data
CNAME garden.example.test. (the demo auth-zone answers that). The
iterator then answers every <random>.victim.test with the trigger's
CNAME renamed to the query name (rpz_synthesize_localdata_from_rrset)
and stores it in the rrset cache. A burst of distinct random-label
queries follows; the statistics give the longest bin chain an insert
scanned (rrset.cache.max_collisions) and the hash repairs.

Default: the build must be fixed: every answer is the CNAME,
rrset.cache.max_collisions stays <= 32 and rrset.cache.hash_repairs is
0. --expect-pileup: the build has the bug (stock): max_collisions grows
with the queries (above a quarter of them), which is what it prints.

usage: test_rpz_hash.py BUILDDIR [--names N] [--expect-pileup]"""

import argparse
import os
import random
import sys
import tempfile
import time

from harness.server import Unbound
from test_wildcard_hash import burst
from harness.zone import Primary, verdict

MAX_COLLISIONS = 32


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("builddir")
    ap.add_argument("--names", type=int, default=20000)
    ap.add_argument("--expect-pileup", action="store_true")
    args = ap.parse_args()
    fails = []
    with tempfile.TemporaryDirectory(prefix="steady-rpzhash-") as d:
        nsd = Primary(os.path.join(d, "nsd"), ["victim.test."])
        with open(nsd.zonefile("victim.test."), "w") as f:
            f.write("$ORIGIN victim.test.\n$TTL 3600\n"
                    "@ SOA ns1 hostmaster 1 3600 600 86400 3600\n"
                    "@ NS ns1\nns1 A 127.0.0.1\n* A 192.0.2.7\n")
        rpz = os.path.join(d, "rpz.zone")
        with open(rpz, "w") as f:
            f.write("$ORIGIN rpz.test.\n$TTL 3600\n"
                    "@ SOA ns1 hostmaster 1 3600 600 86400 3600\n@ NS ns1\n"
                    "32.1.0.0.127.rpz-nsip CNAME garden.example.test.\n")
        extra = "\n".join([
            "\tmodule-config: \"respip iterator\"",
            "\tdo-not-query-localhost: no",
            "\tnum-threads: 2",
            "\trrset-cache-size: 256m",
            "\tmsg-cache-size: 128m",
        ])
        ub = Unbound(args.builddir, os.path.join(d, "ub"), extra_conf=extra)
        with open(ub.conf) as f:
            text = f.read()
        # the demo's module-config is replaced by the one above
        text = text.replace('\tmodule-config: "iterator"\n', "", 1)
        text += ("\nstub-zone:\n\tname: \"victim.test.\"\n"
                 "\tstub-addr: 127.0.0.1@%d\n"
                 "\nrpz:\n\tname: \"rpz.test.\"\n\tzonefile: \"%s\"\n"
                 % (nsd.port, rpz))
        with open(ub.conf, "w") as f:
            f.write(text)
        nsd.start({"victim.test.": 1})
        try:
            ub.start()
            try:
                rnd = random.Random(2026)
                names = ["%x.victim.test." % rnd.getrandbits(48)
                         for _ in range(args.names)]
                t0 = time.monotonic()
                answers, timeouts = burst(ub.port, names)
                elapsed = time.monotonic() - t0
                st = ub.stats()
            finally:
                ub.stop()
        finally:
            nsd.stop()
    rewritten = sum(1 for n, (rc, rrs) in answers.items()
                    if rc == 0 and (n, 5, "garden.example.test.") in rrs)
    maxcoll = int(st["rrset.cache.max_collisions"])
    repairs = int(st.get("rrset.cache.hash_repairs", "0"))
    print("names=%d answered=%d rewritten by the nsip trigger=%d timeouts=%d "
          "in %.1f s (%.0f qps); rrset.cache.count=%s "
          "rrset.cache.max_collisions=%d rrset.cache.hash_repairs=%d" % (
              len(names), len(answers), rewritten, len(timeouts), elapsed,
              len(answers) / elapsed, st.get("rrset.cache.count", "?"), maxcoll,
              repairs))
    if rewritten < len(names) * 0.99:
        fails.append("only %d of %d answers carry the trigger's CNAME" % (
            rewritten, len(names)))
    if args.expect_pileup:
        if maxcoll <= len(names) // 4:
            fails.append("expected the renamed rrsets to pile up in one bin, "
                         "but max_collisions is %d" % maxcoll)
    else:
        if maxcoll > MAX_COLLISIONS:
            fails.append("rrset.cache.max_collisions %d > %d" % (maxcoll, MAX_COLLISIONS))
        if repairs:
            fails.append("rrset.cache.hash_repairs %d: an rrset was stored "
                         "with a wrong hash value" % repairs)
    return verdict(fails, "rpz hash (%s)" % ("pileup expected" if args.expect_pileup
                                             else "fixed"))


if __name__ == "__main__":
    sys.exit(main())
