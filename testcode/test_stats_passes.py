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

The statistics-interval timer with shm-enable (a second unbound,
statistics-interval: 2) reads the caches for the shared memory segment
and resets their interval values: that too must be one pass, so across
one tick of thread 0 the count must be at most the slabs of all caches
plus the memory sizes that the segment gets (a table lock for each slab
of the msg and rrset caches), where a reset pass of its own would add a
lock per slab of every cache (12288 in all, not 7168).

With --dnscrypt (a build with --enable-dnscrypt), DNSCrypt is on, with
upstream's test keys (testdata/dnscrypt_cert.tdir of the source): its
shared secret and nonce caches, 1024 slabs each (the other caches have
4, as a lock per bin of 1024 slabs in every cache would fill spincount's
table), are two more shared caches, counted in the same pass (before,
each thread counted them again: 8220 locks where 4124 are needed), and
two more whose memory size a scrape and the segment get.

usage: test_stats_passes.py BUILDDIR [--dnscrypt]"""

import os
import random
import sys
import tempfile
import time

from harness.server import TOP, Unbound, build_spincount, free_port, spincount_snapshot

SLABS = 1024
# a lock per slab of a scrape: the pass over the five caches in use
# (msg, rrset, infra hosts, domain and client ratelimits; the key cache
# and the subnet module's are not loaded) and the memory sizes of msg and
# rrset (measured: 7168; the tick's reset pass of its own was 5120)
CACHES = 7
# the caches whose memory size the shared memory segment gets: msg and
# rrset (the key cache's is the validator's, which is not loaded)
MEM_CACHES = 2
# the other caches have this many slabs with --dnscrypt: a lock per bin
# of 1024-slab caches would fill spincount's table
FEW_SLABS = 4


def conf(slabs):
    """The server: lines: every cache with slabs slabs, two threads."""
    return "".join("\t%s: %d\n" % (opt, slabs) for opt in (
        "msg-cache-slabs", "rrset-cache-slabs", "infra-cache-slabs", "key-cache-slabs",
        "ratelimit-slabs", "ip-ratelimit-slabs")) + "\tnum-threads: 2\n"


def dnscrypt_clause(ub, build):
    """Turn DNSCrypt on in ub's config, on a port of its own, with
    upstream's test keys."""
    keys = os.path.join(build, "testdata", "dnscrypt_cert.tdir")
    if not os.path.isdir(keys):
        keys = os.path.join(TOP, "build", "src", "testdata", "dnscrypt_cert.tdir")
    port = free_port()
    with open(ub.conf) as f:
        text = f.read()
    text = text.replace("server:\n", "server:\n\tinterface: 127.0.0.1@%d\n" % port, 1)
    text += ("dnscrypt:\n\tdnscrypt-enable: yes\n\tdnscrypt-port: %d\n"
             "\tdnscrypt-provider: 2.dnscrypt-cert.example.com.\n"
             "\tdnscrypt-secret-key: \"%s/1.key\"\n"
             "\tdnscrypt-provider-cert: \"%s/1_salsa.cert\"\n"
             "\tdnscrypt-shared-secret-cache-slabs: %d\n"
             "\tdnscrypt-nonce-cache-slabs: %d\n" % (port, keys, keys, SLABS, SLABS))
    with open(ub.conf, "w") as f:
        f.write(text)


def start_counted(build, rundir, shim, out, extra_conf, dnscrypt):
    """Start unbound from build in rundir with extra_conf (and DNSCrypt),
    spincount.so (shim) preloaded to write its snapshots to out."""
    ub = Unbound(build, rundir, extra_conf=extra_conf)
    if dnscrypt:
        dnscrypt_clause(ub, build)
    os.makedirs(ub.rundir, exist_ok=True)
    env = dict(os.environ)
    os.environ.update({"LD_PRELOAD": shim, "SPINCOUNT_OUT": out})
    try:
        ub.start()
    finally:
        os.environ.clear()
        os.environ.update(env)
    return ub


def tick_lines(ub):
    """The number of statistics-interval log lines of thread 0 so far."""
    return ub.read_log().count("server stats for thread 0: requestlist")


def timer_passes(build, d, shim, slabs, limit, dnscrypt):
    """Table locks across one statistics-interval tick of thread 0, with
    shm-enable, at most limit; returns the number of failed checks."""
    out = os.path.join(d, "spin-timer")
    ub = start_counted(build, os.path.join(d, "timer"), shim, out, conf(slabs) +
                       "\tstatistics-interval: 2\n\tshm-enable: yes\n"
                       "\tshm-key: %d\n" % random.randint(20000, 2000000000),
                       dnscrypt)
    try:
        # from just after one tick of thread 0 to just after the next
        n0 = tick_lines(ub)
        deadline = time.monotonic() + 10
        while tick_lines(ub) == n0 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        before = spincount_snapshot(out, 1, ub.bin("unbound"))
        n1 = tick_lines(ub)
        while tick_lines(ub) == n1 and time.monotonic() < deadline + 10:
            time.sleep(0.02)
        time.sleep(0.3)
        after = spincount_snapshot(out, 2, ub.bin("unbound"))
        ticks = tick_lines(ub) - n1
    finally:
        ub.stop()
    locks = after.get("lruhash_create", 0) - before.get("lruhash_create", 0)
    ok = ticks == 1 and 0 < locks <= limit
    print("statistics-interval tick with shm-enable: %d table locks in %d tick(s) "
          "(at most %d in one): %s" % (locks, ticks, limit, "ok" if ok else "FAIL"))
    return 0 if ok else 1


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--dnscrypt"]):
        print(__doc__.split("usage: ")[1], file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    dnscrypt = sys.argv[2:] == ["--dnscrypt"]
    slabs = FEW_SLABS if dnscrypt else SLABS
    # one pass over every cache, and the memory sizes of a scrape, or of
    # the shared memory segment at a tick; DNSCrypt's two caches add to
    # both
    limit_scrape = CACHES * slabs + (4 * SLABS if dnscrypt else 0) + 64
    limit_tick = (CACHES + MEM_CACHES) * slabs + (4 * SLABS if dnscrypt else 0) + 64
    failed = 0
    with tempfile.TemporaryDirectory(prefix="steady-passes-") as d:
        shim = build_spincount(d)
        out = os.path.join(d, "spin")
        ub = start_counted(build, os.path.join(d, "run"), shim, out, conf(slabs),
                           dnscrypt)
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
                limit = limit_scrape
                ok = 0 < locks <= limit and int(st["msg.cache.count"]) > 0
                print("%s: %d table locks (at most %d), msg.cache.count=%s: %s" % (
                    cmd, locks, limit, st["msg.cache.count"], "ok" if ok else "FAIL"))
                failed += not ok
        finally:
            ub.stop()
        failed += timer_passes(build, d, shim, slabs, limit_tick, dnscrypt)
    print("stats passes: %d passed, %d failed" % (4 - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
