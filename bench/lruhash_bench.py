#!/usr/bin/env python3
"""Build bench/lruhash_bench.c against the stock build (build/base +
build/stock) and the fork (build/src + build/fork), run each benchmark for
both side by side, alternating, and print a Markdown report of medians
with min-max and fork/stock ratios. --out writes it to a file.

usage: lruhash_bench.py [--reps N] [--quick] [--only SECTIONS] [--out FILE] [--plot PREFIX] [--fifo]
                        [--grow-sizes N,...]
  --only runs some sections: a comma-separated list of grow, reader,
  lookup, mixed, zipf (default all).
  --plot writes PREFIX-lookups.svg (lookups/s by threads) and
  PREFIX-slowest.svg (slowest lookup by threads, with the floor).
  --fifo runs only the benchmarks with no more threads than CPUs, as
  SCHED_FIFO (chrt -f 1), so that no other task of this machine preempts
  them and their max latency is the table's, not the scheduler's. It
  needs the real-time throttle off (sysctl kernel.sched_rt_runtime_us=-1),
  or the throttle's 50 ms pauses would be measured instead."""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "testcode"))
from harness.stats import med  # noqa: E402
BUILDS = {"stock": ("build/base", "build/stock"), "fork": ("build/src", "build/fork")}


def build(label, prog="lruhash_bench"):
    """Compile bench/PROG.c against the objects of a build (stock or fork)
    and return the program's path."""
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
    exe = os.path.join(bld, prog)
    subprocess.run(["gcc", "-O2", "-g", "-pthread", "-I" + bld, "-I" + src, "-o", exe,
                    os.path.join(TOP, "bench", prog + ".c")] + objs + libs + ["-lm"],
                   check=True)
    return exe


# command prefix for the benchmark processes (--fifo)
PREFIX = []


def run(exe, *args):
    out = subprocess.run(PREFIX + [exe] + [str(a) for a in args], capture_output=True,
                         text=True, check=True).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", out)}




def compare(exes, reps, title, args, keys, report):
    """Run both builds reps times, alternating; add a row per key; return
    the results of both, by build."""
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
    return res


def floor(exes, reps, threads, secs, report):
    """Rows for the scheduling noise floor: the same harness with the same
    threads for about as long, timing a memory read instead of a table
    operation (the same code in both builds)."""
    return compare(exes, reps, "floor: %d thread%s, %.1f s" % (threads, "s" if threads > 1 else "",
                                                               secs),
                   ["floor", 1000000, threads, "%.1f" % secs], ["floor_max_us"], report)


def plot(prefix, lookups, floors):
    """Plot lookups/s and the slowest lookup by threads, medians."""
    from svgplot import line_plot
    threads = sorted(lookups)

    def series(key, label, colour, res):
        return (label, colour, [(t, statistics.median(r[key] for r in res(t))) for t in threads])
    line_plot(prefix + "-lookups.svg", "lookups/s, table of 1M present keys (median)",
              "threads (2 CPUs)", "lookups/s",
              [series("lookups_per_s", "stock", "#c0392b", lambda t: lookups[t]["stock"]),
               series("lookups_per_s", "fork", "#2471a3", lambda t: lookups[t]["fork"])], log_y=False)
    line_plot(prefix + "-slowest.svg", "slowest lookup in 2 s (median of runs)",
              "threads (2 CPUs)", "ms (log)",
              [("stock", "#c0392b", [(t, statistics.median(r["max_us"] for r in lookups[t]["stock"])
                                      / 1e3) for t in threads]),
               ("fork", "#2471a3", [(t, statistics.median(r["max_us"] for r in lookups[t]["fork"])
                                     / 1e3) for t in threads]),
               ("floor (no table)", "#7f8c8d",
                [(t, statistics.median(r["floor_max_us"] for r in floors[t]["stock"] +
                                       floors[t]["fork"]) / 1e3) for t in threads])])


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    ap.add_argument("--out")
    ap.add_argument("--plot", metavar="PREFIX")
    ap.add_argument("--only", default="grow,reader,lookup,mixed,zipf")
    ap.add_argument("--fifo", action="store_true")
    ap.add_argument("--grow-sizes", help="comma-separated table sizes of the grow section "
                    "(default 1000000,4000000,16000000; --quick 100000,400000)")
    args = ap.parse_args()
    if args.fifo:
        with open("/proc/sys/kernel/sched_rt_runtime_us") as f:
            if f.read().strip() != "-1":
                ap.error("--fifo needs kernel.sched_rt_runtime_us=-1 (the real-time throttle "
                         "would pause the run for 50 ms every second)")
        PREFIX[:] = ["chrt", "-f", "1"]
    exes = {label: build(label) for label in BUILDS}
    q = args.quick
    report = ["# lruhash benchmark: stock vs fork\n",
              "Command: `%s`  " % " ".join(["bench/lruhash_bench.py"] + sys.argv[1:]),
              "Date: %s; %d CPUs; each row: median (min–max) of %d runs per build, "
              "stock and fork alternating. The floor rows time a memory read in the "
              "same threads for as long: the largest delay the scheduler alone "
              "causes, below which a max_us says nothing.%s\n" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                                 os.cpu_count(), args.reps,
                                                 " Run as SCHED_FIFO (chrt -f 1), real-time "
                                                 "throttle off." if args.fifo else ""),
              "| benchmark | value | stock | fork | fork/stock |", "|---|---|---|---|---|"]
    only = set(args.only.split(","))
    if only - {"grow", "reader", "lookup", "mixed", "zipf"}:
        ap.error("--only: unknown section in %s" % args.only)
    if args.plot and "lookup" not in only:
        ap.error("--plot needs the lookup section")
    sizes = [100000, 400000] if q else [1000000, 4000000, 16000000]
    if args.grow_sizes:
        sizes = [int(x) for x in args.grow_sizes.split(",")]
    for n in sizes if "grow" in only else []:
        reps = min(3, args.reps) if n >= 16000000 else args.reps
        fork = compare(exes, reps, "grow one table to %d" % n,
                       ["grow", n], ["max_us", "p9999_us", "total_s", "rss_mb"], report)["fork"]
        floor(exes, reps, 1, statistics.median(r["total_s"] for r in fork), report)
    for n in ([400000] if q else [1000000, 4000000, 8000000]) if "reader" in only else []:
        compare(exes, args.reps, "reader while growing to %d" % n, ["reader", n],
                ["reader_max_us", "writer_max_us"], report)
    if "reader" in only:
        floor(exes, args.reps, 2, 10, report)
        # the same with a thread writing to new memory, as the growing
        # table's thread does (about 1 GB for 8M keys)
        compare(exes, args.reps, "floor: 2 threads, one touching %d MB of new memory"
                % (64 if q else 1024), ["touchfloor", 64 if q else 1024],
                ["reader_max_us", "toucher_max_us"], report)
    lookups, floors = {}, {}
    for threads in (1, 2, 4, 8) if "lookup" in only else ():
        if args.fifo and threads > os.cpu_count():
            # FIFO threads of one priority do not share a CPU
            continue
        lookups[threads] = compare(exes, args.reps, "lookup, %d threads, 1M present" % threads,
                                   ["lookup", 100000 if q else 1000000, threads, 2],
                                   ["lookups_per_s", "max_us"], report)
        floors[threads] = floor(exes, args.reps, threads, 2, report)
    if "mixed" in only:
        compare(exes, args.reps, "90% lookup / 10% insert, 2 threads, growing",
                ["mixed", 1000000, 3], ["ops_per_s", "max_us"], report)
        floor(exes, args.reps, 2, 3, report)
    if args.plot:
        plot(args.plot, lookups, floors)
        for suffix, title in (("-lookups.svg", "lookups/s by threads"),
                              ("-slowest.svg", "slowest lookup by threads, with the floor")):
            report += ["", "![%s](%s)" % (title, os.path.basename(args.plot + suffix))]
    if args.fifo or "zipf" not in only:
        return finish(args, report)
    compare(exes, args.reps, "Zipf(0.9), cache 100k, keys 1M", ["zipf", 100000, 1000000,
                                                                 1000000 if q else 5000000],
            ["hit_ratio"], report)
    return finish(args, report)


def finish(args, report):
    """Write and print the report."""
    text = "\n".join(report) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
