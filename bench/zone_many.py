#!/usr/bin/env python3
"""The workers' cost of many secondary zones (issue 41's finding 8).

NSD on loopback is the primary of --zones small zones; each build of
--builds (for example stock and the series before and after a change)
is their secondary in turn, with 2 threads and its default
auth-zone-io-thread (yes in the fork; stock has none), under a memory
cap (--mem-mb). When every zone answers serial 1, every zone gets
serial 2 and one NOTIFY each, sent as fast as they are answered; the run
ends when every zone answers serial 2. Per build, over --reps runs,
median (min-max) of: the CPU seconds of unbound's threads from the first
NOTIFY to the end (all threads, and the busiest thread), and the wall
seconds from the first NOTIFY until every zone answers serial 2. The
builds alternate within each rep.

usage: flock build/.bench.lock bench/zone_many.py --builds DIR[,DIR...]
       [--labels a,b] [--zones 10000] [--reps 3] [--mem-mb 4096]
       [--out doc/bench-zone-many.md]"""

import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "testcode"))
from harness.stats import med as fmt  # noqa: E402
from harness.zone import Primary, Secondary, notify, wait_all_serials, write_zone  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid):
    """{tid: CPU seconds (user and system)} of the threads of pid."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / TICK
    return out


def one_run(builddir, prim, zones, tmp, mem_mb):
    """The storm once with the build in builddir: (all threads' CPU
    seconds, the busiest thread's, wall seconds)."""
    rundir = tempfile.mkdtemp(prefix="unbound-", dir=tmp)
    sec = Secondary(builddir, rundir, prim.port, zones, threads=2)
    cap = ["prlimit", "--as=%d" % (mem_mb << 20), "--"]
    for z in zones:
        write_zone(prim.zonefile(z), z, 1, 3)
    prim.reload({z: 1 for z in zones}, timeout=600)
    sec.start(wrapper=cap, timeout=120)
    try:
        if not wait_all_serials(sec.port, zones, 1, 900):
            raise RuntimeError("%s: not every zone answers serial 1" % builddir)
        for z in zones:
            write_zone(prim.zonefile(z), z, 2, 3)
        prim.reload({z: 2 for z in zones}, timeout=600)
        pid = sec.proc.pid
        c0 = thread_cpu(pid)
        t0 = time.monotonic()
        for z in zones:
            notify(sec.port, z)
        if not wait_all_serials(sec.port, zones, 2, 900):
            raise RuntimeError("%s: not every zone answers serial 2" % builddir)
        wall = time.monotonic() - t0
        c1 = thread_cpu(pid)
        per = {t: c1[t] - c0.get(t, 0.0) for t in c1}
        return sum(per.values()), max(per.values()), wall
    finally:
        sec.stop(timeout=300)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--builds", required=True)
    ap.add_argument("--labels")
    ap.add_argument("--zones", type=int, default=10000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mem-mb", type=int, default=4096)
    ap.add_argument("--out")
    a = ap.parse_args()
    builds = [os.path.abspath(b) for b in a.builds.split(",")]
    labels = a.labels.split(",") if a.labels else [os.path.basename(b) for b in builds]
    zones = ["z%d.many." % i for i in range(a.zones)]
    res = {lb: [] for lb in labels}
    with tempfile.TemporaryDirectory(prefix="steady-zmany-") as tmp:
        prim = Primary(os.path.join(tmp, "nsd"), zones)
        for z in zones:
            write_zone(prim.zonefile(z), z, 1, 3)
        prim.start({z: 1 for z in zones}, timeout=600)
        try:
            for rep in range(a.reps):
                for b, lb in zip(builds, labels):
                    r = one_run(b, prim, zones, tmp, a.mem_mb)
                    print("rep %d %s: CPU %.2f s (busiest thread %.2f s), %.1f s "
                          "until all at serial 2" % (rep + 1, lb, r[0], r[1], r[2]),
                          flush=True)
                    res[lb].append(r)
        finally:
            prim.stop()
    lines = ["| build | CPU s, all threads | CPU s, busiest thread | s until all "
             "zones at serial 2 |", "|---|--:|--:|--:|"]
    for lb in labels:
        rs = res[lb]
        lines.append("| %s | %s | %s | %s |" % (lb, fmt([r[0] for r in rs]),
                                             fmt([r[1] for r in rs]),
                                             fmt([r[2] for r in rs])))
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n" + " ".join(["bench/zone_many.py"] + sys.argv[1:]) + "\n\n"
                    + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
