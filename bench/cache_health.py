#!/usr/bin/env python3
"""Benchmark of the cache health work (issue: cache health statistics and
hash-integrity guard). Stock and fork side by side in one run, on loopback:

  udp-random   random labels under the wildcard CNAME of the demo zone, at
               max rate and fixed rates, for stock, fork, and both with the
               wildcard hash fix reverted (fork with the guard on and off):
               qps, latency, lost, rrset.cache.max_collisions, hash repairs
  cache-hit    a small set of names answered from the cache, max rate: the
               guard and the statistics must not slow the hit path
  scrape       time of unbound-control stats_noreset with 4, 1024, 262144
               msg and rrset cache slabs

Needs build/stock, build/fork, build/stock-hashbug, build/fork-hashbug
(make stock fork hashbug stock-hashbug) and dnsperf. Prints a Markdown
report; --out writes it to a file."""

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

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))




def run_server(build, extra, fn):
    with tempfile.TemporaryDirectory(prefix="steady-bench-") as rundir:
        ub = Unbound(build, rundir, extra_conf=extra)
        ub.start(timeout=120)  # 262144 slabs take a while
        try:
            return fn(ub)
        finally:
            ub.stop()




def udp_random(args, names_file, report):
    rates = [None, 1000, 5000, 20000]
    configs = [
        ("stock", "build/stock", ""),
        ("fork", "build/fork", ""),
        ("stock, fix reverted", "build/stock-hashbug", ""),
        ("fork, fix reverted, guard on", "build/fork-hashbug", "\thash-integrity-check: yes"),
        ("fork, fix reverted, guard off", "build/fork-hashbug", "\thash-integrity-check: no"),
    ]
    base = "\tnum-threads: 2\n\trrset-cache-size: 256m\n\tmsg-cache-size: 128m\n"
    report.append("## udp-random (2 threads, %d s per run, %d reps)\n" % (args.seconds, args.reps))
    report.append("| build | rate | qps | avg latency ms | max latency ms | lost | rrset max_collisions | rrset hash_repairs |")
    report.append("|---|---|---|---|---|---|---|---|")
    for label, build, extra in configs:
        for rate in rates:
            res = []
            for _ in range(args.reps):
                def one(ub):
                    r = dnsperf(ub.port, names_file, args.seconds, rate)
                    st = ub.stats()
                    r["maxcoll"] = float(st["rrset.cache.max_collisions"])
                    r["repairs"] = float(st.get("rrset.cache.hash_repairs", "nan"))
                    return r
                res.append(run_server(os.path.join(TOP, build), base + extra, one))
            report.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                label, rate or "max", med([r["qps"] for r in res]),
                med([r["avg_ms"] for r in res]), med([r["max_ms"] for r in res]),
                med([r["lost"] for r in res]), med([r["maxcoll"] for r in res]),
                med([r["repairs"] for r in res])))
            print(report[-1], flush=True)
    report.append("")


def cache_hit(args, hit_file, report):
    qps = {"stock": [], "fork": []}
    for _ in range(args.hit_reps):
        for label in ("stock", "fork"):
            def one(ub):
                dnsperf(ub.port, hit_file, 2)          # warm the cache
                return dnsperf(ub.port, hit_file, args.seconds)["qps"]
            qps[label].append(run_server(os.path.join(TOP, "build", label),
                                         "\tnum-threads: 2\n", one))
    ratios = [f / s for f, s in zip(qps["fork"], qps["stock"])]
    report.append("## cache-hit path (2 threads, 1000 names all cached, max rate, "
                  "%d s, %d alternating reps)\n" % (args.seconds, args.hit_reps))
    report.append("| build | qps |")
    report.append("|---|---|")
    report.append("| stock | %s |" % med(qps["stock"]))
    report.append("| fork | %s |" % med(qps["fork"]))
    report.append("\nfork/stock ratio per rep: median %s\n" % med(ratios))
    print("\n".join(report[-6:]), flush=True)


def scrape(args, report):
    report.append("## scrape cost of `unbound-control stats_noreset` (ms, %d calls)\n" % args.scrapes)
    report.append("| msg+rrset slabs | stock | fork | fork/stock |")
    report.append("|---|---|---|---|")
    for slabs in (4, 1024, 262144):
        extra = ("\tmsg-cache-slabs: %d\n\trrset-cache-slabs: %d\n"
                 "\tmsg-cache-size: 1g\n\trrset-cache-size: 1g\n" % (slabs, slabs))
        times = {}
        for label in ("stock", "fork"):
            def one(ub):
                t = []
                for _ in range(args.scrapes):
                    t0 = time.perf_counter()
                    ub.control("stats_noreset")
                    t.append((time.perf_counter() - t0) * 1000)
                return t
            times[label] = run_server(os.path.join(TOP, "build", label), extra, one)
        report.append("| %d | %s | %s | %.2f |" % (
            slabs, med(times["stock"]), med(times["fork"]),
            statistics.median(times["fork"]) / statistics.median(times["stock"])))
        print(report[-1], flush=True)
    report.append("")


def main():
    ap = argparse.ArgumentParser(usage="cache_health.py [--seconds S] [--reps N] "
                                 "[--only udp-random|cache-hit|scrape] [--out FILE]")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--hit-reps", type=int, default=5)
    ap.add_argument("--scrapes", type=int, default=20)
    ap.add_argument("--only", action="append")
    ap.add_argument("--out")
    args = ap.parse_args()
    parts = args.only or ["udp-random", "cache-hit", "scrape"]
    rnd = random.Random(1)
    report = ["# Cache health benchmark\n",
              "Command: `%s`  " % " ".join(["bench/cache_health.py"] + sys.argv[1:]),
              "Date: %s, machine: %s, %d CPUs\n" % (
                  time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.uname().nodename,
                  os.cpu_count())]
    with tempfile.TemporaryDirectory(prefix="steady-bench-data-") as d:
        names_file = os.path.join(d, "random.txt")
        with open(names_file, "w") as f:
            for _ in range(2000000):
                f.write("%x.example.test A\n" % rnd.getrandbits(48))
        hit_file = os.path.join(d, "hit.txt")
        with open(hit_file, "w") as f:
            for i in range(1000):
                f.write("h%d.example.test A\n" % i)
        if "udp-random" in parts:
            udp_random(args, names_file, report)
        if "cache-hit" in parts:
            cache_hit(args, hit_file, report)
        if "scrape" in parts:
            scrape(args, report)
    text = "\n".join(report) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
