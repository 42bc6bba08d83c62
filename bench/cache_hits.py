#!/usr/bin/env python3
"""Cached answers end to end, stock against fork, with the machine's floor
(issue: cache code that survives review, item 4). Both builds start on
loopback with the demo config (testcode/harness/server.py: the example.test
auth-zone served for-upstream, so answers go through the iterator and the
caches); 1000 names under the zone's wildcard (a CNAME and an A rrset per
answer) are warmed, then dnsperf asks them again, every answer a message
cache hit:

  max rate    dnsperf as fast as it goes (on 2 CPUs dnsperf takes one of
              them, so this is bound by the machine)
  fixed rate  dnsperf -Q RATE: the server's CPU per answer (utime+stime
              of the process over the run / answers), less disturbed

The floor is bench/udpfloor.c, a responder that only sets the QR bit
(one recvfrom and one sendto per query, SO_REUSEPORT threads like
unbound's), measured the same way in the same run: answers per CPU
second of the floor are what the kernel allows, the rest of a
resolver's cost is its own. Builds alternate run by run.

Table locks per cached answer: each build runs once more with
testcode/harness/spincount.c preloaded, which counts the pthread_spin_lock() calls
on every spinlock and the function that initialised it; the locks that
lruhash_create() initialised are the table locks of every cache. The
difference of two snapshots around a fixed-rate run of cache hits,
divided by the answers, is reported with the bin locks (bin_init) and
the rest.

usage: flock build/.bench.lock bench/cache_hits.py [--stock build/stock]
       [--fork build/fork] [--seconds 10] [--reps 3] [--threads 1,2]
       [--rate 20000] [--out doc/bench-cache-hits.md]"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "testcode"))
sys.path.insert(0, HERE)
from harness.load import dnsperf  # noqa: E402
from harness.server import Unbound, build_spincount, build_tool, free_port, spincount_snapshot  # noqa: E402
from harness.stats import med  # noqa: E402

EXTRA = "\tnum-threads: %d\n\tverbosity: 1\n\tso-reuseport: yes\n"


def names_file(d):
    path = os.path.join(d, "hit.txt")
    with open(path, "w") as f:
        for i in range(1000):
            f.write("h%d.example.test A\n" % i)
    return path


def run_unbound(build, threads, hit, seconds, rate, env=None, hook=None):
    """Start one unbound, warm the names, measure; returns dnsperf's
    figures (hook, if given, is called with the server and the run)."""
    with tempfile.TemporaryDirectory(prefix="steady-hits-") as rundir:
        ub = Unbound(build, rundir, extra_conf=EXTRA % threads)
        if env:
            old = dict(os.environ)
            os.environ.update(env)
        try:
            ub.start()
        finally:
            if env:
                os.environ.clear()
                os.environ.update(old)
        try:
            dnsperf(ub.port, hit, 2)                   # warm the caches
            if hook:
                return hook(ub)
            res = dnsperf(ub.port, hit, seconds, qps=rate, pid=ub.proc.pid)
            st = ub.stats()
            res["hits"] = int(st.get("total.num.cachehits", "0"))
            return res
        finally:
            ub.stop()


def run_floor(floor, threads, hit, seconds, rate):
    port = free_port()
    p = subprocess.Popen([floor, "-p", str(port), "-t", str(threads)])
    try:
        time.sleep(0.3)
        return dnsperf(port, hit, seconds, qps=rate, pid=p.pid)
    finally:
        p.kill()
        p.wait()


def lock_counts(build, threads, hit, seconds, rate, shim):
    """Spinlock calls per cached answer by initialising function."""
    with tempfile.TemporaryDirectory(prefix="steady-spin-") as d:
        out = os.path.join(d, "spin")

        def snap(n):
            return spincount_snapshot(out, n, os.path.join(build, "unbound"))

        def hook(ub):
            before = snap(1)
            res = dnsperf(ub.port, hit, seconds, qps=rate)
            after = snap(2)
            done = res["qps"] * seconds
            table = after.get("lruhash_create", 0) - before.get("lruhash_create", 0)
            binl = after.get("bin_init", 0) - before.get("bin_init", 0)
            total = sum(after.values()) - sum(before.values())
            return {"answers": done, "table": table / done, "bin": binl / done,
                    "other": (total - table - binl) / done}

        return run_unbound(build, threads, hit, seconds, rate,
                           env={"LD_PRELOAD": shim, "SPINCOUNT_OUT": out}, hook=hook)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--stock", default="build/stock")
    ap.add_argument("--fork", default="build/fork")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rate", type=int, default=20000)
    ap.add_argument("--out")
    args = ap.parse_args()
    builds = {"stock": os.path.abspath(args.stock), "fork": os.path.abspath(args.fork)}
    threads_list = [int(t) for t in args.threads.split(",")]
    report = ["## Cached answers: stock against fork, with the machine's floor\n",
              "Command: `flock build/.bench.lock %s`  " % " ".join(["bench/cache_hits.py"] + sys.argv[1:]),
              "Date: %s, %d CPUs (a shared VM); 1000 warm names under the demo zone's "
              "wildcard (CNAME + A per answer), dnsperf -c 8 -q 200, %d s per run, %d runs "
              "per build, thread count and rate, builds alternating; server CPU is "
              "utime+stime of the process over the run divided by the answers; the floor "
              "is bench/udpfloor.c (recvfrom + sendto only) with as many threads.\n" % (
                  time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.cpu_count(),
                  args.seconds, args.reps)]
    with tempfile.TemporaryDirectory(prefix="steady-hits-data-") as d:
        hit = names_file(d)
        floor = build_tool(os.path.join(HERE, "udpfloor.c"), d, "-lpthread")
        shim = build_spincount(d)
        report.append("| threads | rate | server | answers/s | answers per CPU second | "
                      "CPU µs per answer | share of the floor | lost |")
        report.append("|---|---|---|---|---|---|---|---|")
        ratios = []
        for threads in threads_list:
            for rate in (None, args.rate):
                res = {"stock": [], "fork": [], "floor": []}
                for rep in range(args.reps):
                    order = ("stock", "fork") if rep % 2 == 0 else ("fork", "stock")
                    for name in order:
                        r = run_unbound(builds[name], threads, hit, args.seconds, rate)
                        res[name].append(r)
                        print("%d threads %s %s rep %d: %.0f qps, %.3f us cpu/answer, %d hits" % (
                            threads, rate or "max", name, rep + 1, r["qps"], r["cpu_us"],
                            r["hits"]), file=sys.stderr, flush=True)
                    r = run_floor(floor, threads, hit, args.seconds, rate)
                    res["floor"].append(r)
                    print("%d threads %s floor rep %d: %.0f qps, %.3f us cpu/answer" % (
                        threads, rate or "max", rep + 1, r["qps"], r["cpu_us"]),
                        file=sys.stderr, flush=True)
                floor_cpu = statistics.median([r["cpu_us"] for r in res["floor"]])
                for name in ("floor", "stock", "fork"):
                    rs = res[name]
                    report.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
                        threads, rate or "max", name, med([r["qps"] for r in rs]),
                        med([1e6 / r["cpu_us"] for r in rs]),
                        med([r["cpu_us"] for r in rs], "%.3f"),
                        med([floor_cpu / r["cpu_us"] for r in rs], "%.2f"),
                        med([r["lost"] for r in rs])))
                ratios.append(("%d threads, %s: answers per CPU second fork/stock" % (
                    threads, "max rate" if rate is None else "%d qps" % rate),
                    [s["cpu_us"] / f["cpu_us"] for f, s in zip(res["fork"], res["stock"])]))
                ratios.append(("%d threads, %s: answers/s fork/stock" % (
                    threads, "max rate" if rate is None else "%d qps" % rate),
                    [f["qps"] / s["qps"] for f, s in zip(res["fork"], res["stock"])]))
        report.append("")
        report.append("Per rep, paired runs (above 1.0 favours the fork):\n")
        for what, rs in ratios:
            report.append("- %s: %s, median %.3f (min %.3f, max %.3f)" % (
                what, ", ".join("%.3f" % r for r in rs), statistics.median(rs), min(rs), max(rs)))
        report.append("")
        report.append("Spinlock calls per cached answer, counted with testcode/harness/spincount.c "
                      "preloaded, at %d qps for %d s, by the function that initialised the "
                      "lock (lruhash_create: the table lock of a cache slab; bin_init: a bin "
                      "lock):\n" % (args.rate, args.seconds))
        report.append("| threads | server | table locks | bin locks | other spinlocks |")
        report.append("|---|---|---|---|---|")
        for threads in threads_list:
            for name in ("stock", "fork"):
                c = lock_counts(builds[name], threads, hit, args.seconds, args.rate, shim)
                report.append("| %d | %s | %.3f | %.3f | %.3f |" % (
                    threads, name, c["table"], c["bin"], c["other"]))
        report.append("")
    text = "\n".join(report) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
