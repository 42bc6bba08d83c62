#!/usr/bin/env python3
"""A statistics scrape reads every shared cache in one pass: one table
lock per slab of each cache, taken by thread 0, also with the reset
that the stats command does (issue: cache code that survives review,
item 7). unbound runs with two threads (the second must not walk the
shared caches again: third review, finding 11), 1024 slabs in every cache and
testcode/harness/spincount.c preloaded, which counts the pthread_spin_lock() calls
on the locks that lruhash_create() initialised (the caches' table
locks). Around each of stats_noreset and stats, the count must be at
most the number of slabs of all caches (plus a few for the queries the
scrape itself does not make: none are sent); counting the caches for
the cache sizes and again for their collision statistics, or resetting
in a pass of its own, takes a lock per slab more.

usage: test_stats_passes.py BUILDDIR"""

import os
import sys
import tempfile

from harness.server import Unbound, build_spincount, spincount_snapshot

SLABS = 1024
# msg, rrset, infra hosts, key, domain and client ratelimits, subnet
# (the subnet module's cache, when loaded, has msg-cache-slabs slabs)
CACHES = 7
CONF = "".join("\t%s: %d\n" % (opt, SLABS) for opt in (
    "msg-cache-slabs", "rrset-cache-slabs", "infra-cache-slabs", "key-cache-slabs",
    "ratelimit-slabs", "ip-ratelimit-slabs")) + "\tnum-threads: 2\n"


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("usage: ")[1], file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    failed = 0
    with tempfile.TemporaryDirectory(prefix="steady-passes-") as d:
        shim = build_spincount(d)
        out = os.path.join(d, "spin")
        ub = Unbound(build, os.path.join(d, "run"), extra_conf=CONF)
        os.makedirs(ub.rundir, exist_ok=True)
        env = dict(os.environ)
        os.environ.update({"LD_PRELOAD": shim, "SPINCOUNT_OUT": out})
        try:
            ub.start()
        finally:
            os.environ.clear()
            os.environ.update(env)
        try:
            for i in range(50):
                ub.query("w%d.example.test" % i)
            n = 0
            for cmd in ("stats_noreset", "stats", "stats_noreset"):
                n += 1
                before = spincount_snapshot(out, n, ub.bin("unbound"))
                st = ub.stats(cmd)
                n += 1
                after = spincount_snapshot(out, n, ub.bin("unbound"))
                locks = after.get("lruhash_create", 0) - before.get("lruhash_create", 0)
                limit = CACHES * SLABS + 64
                ok = 0 < locks <= limit and int(st["msg.cache.count"]) > 0
                print("%s: %d table locks (at most %d), msg.cache.count=%s: %s" % (
                    cmd, locks, limit, st["msg.cache.count"], "ok" if ok else "FAIL"))
                failed += not ok
        finally:
            ub.stop()
    print("stats passes: %d passed, %d failed" % (3 - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
