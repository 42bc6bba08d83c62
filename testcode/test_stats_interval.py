#!/usr/bin/env python3
"""The since-last-reset cache statistics (*.cache.max_collisions_interval,
*.cache.hash_repairs) reset with the other interval counters: at every
statistics-interval (which also publishes shm), by flush_stats and by
stats, and never when statistics-cumulative is set. Random-label queries
under the demo zone's wildcard insert rrsets until the rrset cache's
interval maximum is above 0; then each way of resetting must bring it to
0 while the since-start maximum stays, as num.queries does (flush_stats
resets both, also with statistics-cumulative).

usage: test_stats_interval.py BUILDDIR"""

import os
import random
import sys
import tempfile
import time

from harness.server import Unbound

NAME = "rrset.cache.max_collisions_interval"


def fill(ub, rnd):
    """Insert random-label answers until the interval maximum is > 0."""
    for _ in range(20):
        for _ in range(500):
            ub.query("%x.example.test" % rnd.getrandbits(40))
        st = ub.stats()
        if int(st[NAME]) > 0:
            return st
    raise RuntimeError("%s stayed 0 after 10000 inserts" % NAME)


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("usage: ")[1], file=sys.stderr)
        return 2
    build = sys.argv[1]
    rnd = random.Random(7)
    fails = []

    def check(ok, what):
        print("%s: %s" % ("ok" if ok else "FAIL", what))
        if not ok:
            fails.append(what)

    with tempfile.TemporaryDirectory(prefix="steady-statint-") as d:
        with Unbound(build, os.path.join(d, "a"),
                     extra_conf="\tstatistics-interval: 1\n") as ub:
            before = fill(ub, rnd)
            time.sleep(2.5)
            st = ub.stats()
            check(int(st[NAME]) == 0 and int(st["total.num.queries"]) == 0,
                  "statistics-interval resets %s (%s -> %s) as it does "
                  "total.num.queries (-> %s)" % (NAME, before[NAME], st[NAME],
                                                st["total.num.queries"]))
            check(int(st["rrset.cache.max_collisions"]) >= int(before[NAME]),
                  "the since-start maximum stays (%s)" % st["rrset.cache.max_collisions"])
        with Unbound(build, os.path.join(d, "b")) as ub:
            before = fill(ub, rnd)
            ub.control("flush_stats")
            st = ub.stats()
            check(int(st[NAME]) == 0, "flush_stats resets %s (%s -> %s)" % (
                NAME, before[NAME], st[NAME]))
            before = fill(ub, rnd)
            ub.stats("stats")
            st = ub.stats()
            check(int(st[NAME]) == 0, "stats resets %s (%s -> %s)" % (
                NAME, before[NAME], st[NAME]))
        with Unbound(build, os.path.join(d, "c"),
                     extra_conf="\tstatistics-cumulative: yes\n") as ub:
            before = fill(ub, rnd)
            ub.stats("stats")
            st = ub.stats()
            check(int(st[NAME]) >= int(before[NAME]),
                  "with statistics-cumulative, stats keeps %s (%s -> %s)" % (
                      NAME, before[NAME], st[NAME]))
    print("stats interval: %s" % ("OK" if not fails else "%d failed" % len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
