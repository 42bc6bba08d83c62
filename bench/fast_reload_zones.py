#!/usr/bin/env python3
"""How long a client waits during fast_reload +p of a server with many
secondary zones (issue 66, finding 1: the fork compares every zone
served with the one read from its zonefile under fast_reload's global
locks, fr_auth_zones_keep_newer; stock takes no zone lock there).

NSD on loopback is the primary of --zones small zones; each build of
--builds (stock and the fork, say) is their secondary in turn, with 2
threads, zonefiles and its default auth-zone-io-thread, under a memory
cap (--mem-mb). When every zone answers serial 1 (and, with --kept, the
zonefiles are put back to serial 0 so that the fork keeps the data
served of every zone; stock does not keep it, and serves serial 0
until the zone's refresh), a thread asks a local-data name, one query at a
time, while unbound-control fast_reload +p +v runs --reloads times. Per
build, over --reps runs and their reloads: median (min-max) of the
longest wait for an answer during a fast_reload, and of the "reload"
time it prints (the pause, the swap under the locks and the pick-up).
The builds alternate within each rep.

usage: flock build/.bench.lock bench/fast_reload_zones.py --builds DIR[,DIR...]
       [--labels a,b] [--zones 20000] [--reps 3] [--reloads 3] [--kept]
       [--mem-mb 4096] [--out doc/bench-fast-reload-zones.md]"""

import argparse
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "testcode"))
from harness.stats import med as fmt  # noqa: E402
from harness.zone import Primary, Secondary, WaitProbe, wait_all_serials, write_zone  # noqa: E402


def one_run(builddir, prim, zones, tmp, a):
    """The reloads once with the build in builddir: a list of (longest
    wait in ms, reload seconds printed, queries lost) per reload."""
    rundir = tempfile.mkdtemp(prefix="unbound-", dir=tmp)
    sec = Secondary(builddir, rundir, prim.port, zones, threads=2,
                    extra="local-data: \"probe. A 192.0.2.1\"\n")
    cap = ["prlimit", "--as=%d" % (a.mem_mb << 20), "--"]
    sec.start(wrapper=cap, timeout=120)
    out = []
    try:
        if not wait_all_serials(sec.port, zones, 1, 900):
            raise RuntimeError("%s: not every zone answers serial 1" % builddir)
        for _ in range(a.reloads):
            if a.kept:
                for z in zones:
                    write_zone(sec.zonefile(z), z, 0, 3)
            probe = WaitProbe(sec.port, "probe.")
            probe.start()
            time.sleep(0.5)
            r = sec.control("fast_reload", "+p", "+v", timeout=300)
            time.sleep(0.2)
            probe.stopping.set()
            probe.join()
            m = re.search(r"^reload\s+([0-9.]+)s", r.stdout, re.M)
            if not m:
                raise RuntimeError("%s: fast_reload said %r" % (builddir, r.stdout))
            out.append((probe.longest * 1000, float(m.group(1)), probe.lost))
            # stock does not keep data newer than its zonefile: with
            # --kept it serves serial 0 until the next transfer
            if not a.kept and not wait_all_serials(sec.port, zones, 1, 300):
                raise RuntimeError("%s: a zone lost serial 1" % builddir)
        return out
    finally:
        sec.stop(timeout=300)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--builds", required=True)
    ap.add_argument("--labels")
    ap.add_argument("--zones", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--reloads", type=int, default=3)
    ap.add_argument("--kept", action="store_true",
                    help="zonefiles older than the data served at each reload")
    ap.add_argument("--mem-mb", type=int, default=4096)
    ap.add_argument("--out")
    a = ap.parse_args()
    builds = [os.path.abspath(b) for b in a.builds.split(",")]
    labels = a.labels.split(",") if a.labels else [os.path.basename(b) for b in builds]
    zones = ["z%d.many." % i for i in range(a.zones)]
    res = {lb: [] for lb in labels}
    with tempfile.TemporaryDirectory(prefix="steady-frzones-") as tmp:
        prim = Primary(os.path.join(tmp, "nsd"), zones)
        for z in zones:
            write_zone(prim.zonefile(z), z, 1, 3)
        prim.start({z: 1 for z in zones}, timeout=600)
        try:
            for rep in range(a.reps):
                for b, lb in zip(builds, labels):
                    rs = one_run(b, prim, zones, tmp, a)
                    for r in rs:
                        print("rep %d %s: longest wait %.1f ms, reload %.3f s, "
                              "%d lost" % (rep + 1, lb, r[0], r[1], r[2]), flush=True)
                    res[lb] += rs
        finally:
            prim.stop()
    lines = ["| build | fast_reloads | longest wait, ms | reload, ms | not answered |",
             "|---|--:|--:|--:|--:|"]
    for lb in labels:
        rs = res[lb]
        lines.append("| %s | %d | %s | %s | %d |" % (
            lb, len(rs), fmt([r[0] for r in rs]), fmt([r[1] * 1000 for r in rs]),
            sum(r[2] for r in rs)))
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n" + " ".join(["bench/fast_reload_zones.py"] + sys.argv[1:])
                    + "\n\n" + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
