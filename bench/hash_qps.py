#!/usr/bin/env python3
"""End-to-end benchmark of the cache hash function (issue: xxHash (XXH3) as
a selectable, seeded hash for cache keys). One build, started on loopback
with the demo config (testcode/harness/server.py) and `cache-hash: lookup3` or
`cache-hash: xxh3`, so that only the hash function differs:

  cache-hit    1000 names under the demo zone's wildcard, all cached after
               a warm-up
  udp-random   random labels under the wildcard (every query a miss, an
               iterator pass and inserts into the msg and rrset caches)

each with dnsperf at max rate (qps; on this 2-CPU machine dnsperf and the
server share the CPUs, so this measures the machine as much as the
server) and at a fixed rate (--hit-rate, --miss-rate), where the server's
CPU time per query is measured (utime+stime from /proc over the run,
divided by the queries completed), which other load on the machine
disturbs less. The two hashes alternate run by run (lookup3 first in odd
reps, xxh3 first in even ones). Reports medians (min-max) and per-rep
paired ratios, and checks the log says which hash each server used.
Needs dnsperf. Take the benchmark lock: flock build/.bench.lock bench/hash_qps.py ..."""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testcode"))
from harness.load import dnsperf  # noqa: E402
from harness.stats import med  # noqa: E402
from harness.server import Unbound  # noqa: E402

HASHES = ("lookup3", "xxh3")








def one_run(build, hashname, threads, fn):
    extra = "\tnum-threads: %d\n\tverbosity: 1\n\tcache-hash: %s\n" \
            "\trrset-cache-size: 256m\n\tmsg-cache-size: 128m\n" % (threads, hashname)
    with tempfile.TemporaryDirectory(prefix="steady-hashbench-") as rundir:
        ub = Unbound(build, rundir, extra_conf=extra)
        ub.start()
        try:
            res = fn(ub)
            st = ub.stats()
            res["maxcoll"] = float(st.get("rrset.cache.max_collisions", "nan"))
            res["msgcoll"] = float(st.get("msg.cache.max_collisions", "nan"))
            res["repairs"] = float(st.get("msg.cache.hash_repairs", "0")) + \
                float(st.get("rrset.cache.hash_repairs", "0"))
        finally:
            ub.stop()
        log = ub.read_log()
        want = "cache hash function: %s" % hashname
        if want not in log:
            raise RuntimeError("server log does not say %r:\n%s" % (want, log[-2000:]))
    return res


def main():
    ap = argparse.ArgumentParser(usage="hash_qps.py [--build DIR] [--seconds S] [--reps N] "
                                 "[--threads T] [--hit-rate Q] [--miss-rate Q] [--out FILE]")
    ap.add_argument("--build", default="build/fork")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--hit-rate", type=int, default=20000,
                    help="fixed rate of the cache-hit CPU measurement")
    ap.add_argument("--miss-rate", type=int, default=10000,
                    help="fixed rate of the udp-random CPU measurement")
    ap.add_argument("--out")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    rnd = random.Random(1)
    report = ["## End-to-end qps, cache-hash: lookup3 against xxh3\n",
              "Command: `flock build/.bench.lock %s`  " % " ".join(["bench/hash_qps.py"] + sys.argv[1:]),
              "Date: %s, %d CPUs; build %s; %d threads, dnsperf -c 8 -q 200 at max rate "
              "and at a fixed rate (-Q), %d s per run, %d runs per hash and rate, hashes "
              "alternating; server CPU is utime+stime of the unbound process over the run "
              "divided by the queries completed\n" % (
                  time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.cpu_count(),
                  os.path.relpath(build), args.threads, args.seconds, args.reps)]
    with tempfile.TemporaryDirectory(prefix="steady-hashbench-data-") as d:
        names_file = os.path.join(d, "random.txt")
        with open(names_file, "w") as f:
            for _ in range(3000000):
                f.write("%x.example.test A\n" % rnd.getrandbits(48))
        hit_file = os.path.join(d, "hit.txt")
        with open(hit_file, "w") as f:
            for i in range(1000):
                f.write("h%d.example.test A\n" % i)

        def hit(rate):
            def fn(ub):
                dnsperf(ub.port, hit_file, 2)          # warm the cache
                return dnsperf(ub.port, hit_file, args.seconds, qps=rate, pid=ub.proc.pid)
            return fn

        def miss(rate):
            def fn(ub):
                return dnsperf(ub.port, names_file, args.seconds, qps=rate, pid=ub.proc.pid)
            return fn

        report.append("| workload | rate | hash | qps | server CPU µs per query | "
                      "avg latency ms | lost | msg max_collisions | rrset max_collisions | "
                      "hash_repairs |")
        report.append("|---|---|---|---|---|---|---|---|---|---|")
        ratios = []
        for wl, mk, rate in (("cache-hit", hit, None), ("cache-hit", hit, args.hit_rate),
                             ("udp-random", miss, None), ("udp-random", miss, args.miss_rate)):
            res = {h: [] for h in HASHES}
            for rep in range(args.reps):
                order = HASHES if rep % 2 == 0 else tuple(reversed(HASHES))
                for h in order:
                    r = one_run(build, h, args.threads, mk(rate))
                    res[h].append(r)
                    print("%s %s %s rep %d: %.0f qps, %.2f us cpu/query" % (
                        wl, rate or "max", h, rep + 1, r["qps"], r["cpu_us"]),
                        file=sys.stderr, flush=True)
            for h in HASHES:
                rs = res[h]
                report.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    wl, rate or "max", h, med([r["qps"] for r in rs]),
                    med([r["cpu_us"] for r in rs], "%.2f"),
                    med([r["avg_ms"] for r in rs], "%.2f"),
                    med([r["lost"] for r in rs]), med([r["msgcoll"] for r in rs]),
                    med([r["maxcoll"] for r in rs]), med([r["repairs"] for r in rs])))
            if rate:
                # CPU per query, lookup3/xxh3: above 1 means xxh3 costs less
                ratios.append(("%s at %d qps, server CPU per query lookup3/xxh3" % (wl, rate),
                               [l["cpu_us"] / x["cpu_us"] for x, l in zip(res["xxh3"], res["lookup3"])]))
            else:
                ratios.append(("%s at max rate, qps xxh3/lookup3" % wl,
                               [x["qps"] / l["qps"] for x, l in zip(res["xxh3"], res["lookup3"])]))
        report.append("")
        report.append("Per rep, paired runs (above 1.0 favours xxh3):\n")
        for what, rs in ratios:
            report.append("- %s: %s, median %.3f" % (
                what, ", ".join("%.3f" % r for r in rs), statistics.median(rs)))
        report.append("")
    text = "\n".join(report) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
