#!/usr/bin/env python3
"""Build bench/lruhash_bench.c against the stock build (build/base +
build/stock) and the fork (build/src + build/fork), run each benchmark for
both side by side, alternating, and print a Markdown report of medians
with min-max and fork/stock ratios. --out writes it to a file.

usage: lruhash_bench.py [--reps N] [--quick] [--out FILE]"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILDS = {"stock": ("build/base", "build/stock"), "fork": ("build/src", "build/fork")}


def build(label):
    src, bld = (os.path.join(TOP, p) for p in BUILDS[label])
    mk = os.path.join(bld, "bench-objs.mk")
    with open(mk, "w") as f:
        f.write("print-objs:\n\t@echo $(UNITTEST_OBJ_LINK)\nprint-libs:\n\t@echo $(LIBS) $(SSLLIB)\n")
    subprocess.run(["make", "-C", bld, "-s", "tests"], check=True, stdout=subprocess.DEVNULL)
    objs = subprocess.run(["make", "-C", bld, "-s", "--no-print-directory", "-f", "Makefile",
                           "-f", mk, "print-objs"], capture_output=True, text=True,
                          check=True).stdout.split()
    objs = [os.path.join(bld, o.replace(".lo", ".o")) for o in objs if not o.startswith("unit")]
    libs = subprocess.run(["make", "-C", bld, "-s", "--no-print-directory", "-f", "Makefile",
                           "-f", mk, "print-libs"], capture_output=True, text=True,
                          check=True).stdout.split()
    exe = os.path.join(bld, "lruhash_bench")
    subprocess.run(["gcc", "-O2", "-g", "-pthread", "-I" + bld, "-I" + src, "-o", exe,
                    os.path.join(TOP, "bench", "lruhash_bench.c")] + objs + libs + ["-lm"],
                   check=True)
    return exe


def run(exe, *args):
    out = subprocess.run([exe] + [str(a) for a in args], capture_output=True, text=True,
                         check=True).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", out)}


def med(vals):
    m = statistics.median(vals)
    f = (lambda x: "%.0f" % x) if m >= 100 else (lambda x: "%.2f" % x) if m >= 1 else (lambda x: "%.4f" % x)
    return "%s (%s–%s)" % (f(m), f(min(vals)), f(max(vals)))


def compare(exes, reps, title, args, keys, report):
    res = {"stock": [], "fork": []}
    for _ in range(reps):
        for label in ("stock", "fork"):
            res[label].append(run(exes[label], *args))
    for key in keys:
        s = [r[key] for r in res["stock"]]
        f = [r[key] for r in res["fork"]]
        ratio = statistics.median(f) / statistics.median(s) if statistics.median(s) else float("nan")
        report.append("| %s | %s | %s | %s | %.3g |" % (title, key, med(s), med(f), ratio))
        print(report[-1], flush=True)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    ap.add_argument("--out")
    args = ap.parse_args()
    exes = {label: build(label) for label in BUILDS}
    q = args.quick
    report = ["# lruhash benchmark: stock vs fork\n",
              "Command: `%s`  " % " ".join(["bench/lruhash_bench.py"] + sys.argv[1:]),
              "Date: %s; %d CPUs; each row: median (min–max) of %d runs per build, "
              "stock and fork alternating.\n" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                                 os.cpu_count(), args.reps),
              "| benchmark | value | stock | fork | fork/stock |", "|---|---|---|---|---|"]
    sizes = [100000, 400000] if q else [1000000, 4000000, 16000000]
    for n in sizes:
        compare(exes, 1 if n >= 16000000 else args.reps, "grow one table to %d" % n,
                ["grow", n], ["max_us", "p9999_us", "total_s", "rss_mb"], report)
    for n in ([400000] if q else [1000000, 4000000, 8000000]):
        compare(exes, args.reps, "reader while growing to %d" % n, ["reader", n],
                ["reader_max_us"], report)
    for threads in (1, 2, 4, 8):
        compare(exes, args.reps, "lookup, %d threads, 1M present" % threads,
                ["lookup", 100000 if q else 1000000, threads, 2], ["lookups_per_s", "max_us"], report)
    compare(exes, args.reps, "90% lookup / 10% insert, 2 threads, growing", ["mixed", 1000000, 3],
            ["ops_per_s", "max_us"], report)
    compare(exes, args.reps, "Zipf(0.9), cache 100k, keys 1M", ["zipf", 100000, 1000000,
                                                                 1000000 if q else 5000000],
            ["hit_ratio"], report)
    text = "\n".join(report) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
