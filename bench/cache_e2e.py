#!/usr/bin/env python3
"""End-to-end cache growth, stock against fork (issue: concurrent cache
rework). NSD on loopback serves a wildcard zone; unbound (build/stock and
build/fork, same config) resolves it through a stub-zone, with one slab
per cache and large caches, so that the msg and rrset cache tables grow
through many doublings. testcode/harness/dnsprobe.c sends random-label queries (a
cache miss and an insert into both caches each) at a fixed rate from 64
source ports; every answer's latency is recorded. Reported per run:
p50, p99, p99.9 and max latency, lost queries, the cache entries at the
end, and the max latency per 30 s window; runs alternate stock and fork.

usage: flock build/.bench.lock bench/cache_e2e.py [--rate 5000] [--seconds 240]
       [--reps 2] [--slabs 1] [--out doc/bench-cache-e2e.md]
       [--plot doc/bench-cache-e2e.svg]
--plot draws the max latency of every second of every run."""

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
from harness.server import free_port, loopback_conf  # noqa: E402
from harness.load import build_probe  # noqa: E402
from harness.stats import med as fmt  # noqa: E402
from harness.zone import Primary  # noqa: E402
from svgplot import line_plot  # noqa: E402

ZONE = "wild.example."


def run_one(build, kind, a, probe, tmp):
    d = tempfile.mkdtemp(prefix=kind + "-", dir=tmp)
    prim = Primary(os.path.join(d, "nsd"), [ZONE])
    with open(prim.zonefile(ZONE), "w") as f:
        f.write("$ORIGIN %s\n$TTL 86400\n@ SOA ns admin 1 3600 600 86400 3600\n"
                "@ NS ns\nns A 127.0.0.1\n* A 192.0.2.1\n" % ZONE)
    port = free_port()
    conf = os.path.join(d, "unbound.conf")
    with open(conf, "w") as f:
        f.write(loopback_conf(d, port, port + 1, server=[
            "qname-minimisation: no", "msg-cache-size: 2g", "rrset-cache-size: 2g",
            "msg-cache-slabs: %d" % a.slabs, "rrset-cache-slabs: %d" % a.slabs,
            "num-queries-per-thread: 4096", "outgoing-range: 8192"],
            clauses=["stub-zone:", "\tname: \"%s\"" % ZONE,
                     "\tstub-addr: 127.0.0.1@%d" % prim.port]))
    prim.start({ZONE: 1})
    proc = subprocess.Popen([os.path.join(build, "unbound"), "-d", "-c", conf],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    ctl = [os.path.join(build, "unbound-control"), "-c", conf]
    try:
        for _ in range(100):
            if subprocess.run(ctl + ["status"], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        out = os.path.join(d, "probe.out")
        r = subprocess.run([probe, "-p", str(port), "-q", "%r." + ZONE, "-r", str(a.rate),
                            "-n", "64", "-d", str(a.seconds), "-t", "2000", "-o", out],
                           capture_output=True, text=True)
        summary = dict(kv.split("=") for kv in r.stdout.split())
        st = subprocess.run(ctl + ["stats_noreset"], capture_output=True, text=True).stdout
        stats = dict(l.split("=", 1) for l in st.splitlines() if "=" in l)
        lats, windows, seconds, lost = [], {}, {}, 0
        t0 = None
        with open(out) as f:
            for line in f:
                ts, lat, _ = line.split()
                ts, lat = int(ts), int(lat)
                t0 = ts if t0 is None else t0
                w = (ts - t0) // 30000000
                sec = (ts - t0) // 1000000
                if lat < 0:
                    lost += 1
                    continue
                lats.append(lat / 1000.0)
                windows[w] = max(windows.get(w, 0), lat / 1000.0)
                seconds[sec] = max(seconds.get(sec, 0), lat / 1000.0)
        lats.sort()

        def pct(p):
            return lats[min(len(lats) - 1, int(len(lats) * p))]
        res = {"p50_ms": pct(0.5), "p99_ms": pct(0.99), "p999_ms": pct(0.999),
               "max_ms": lats[-1], "lost": lost, "sent": int(summary["sent"]),
               "msg_entries": int(stats.get("msg.cache.count", 0)),
               "rrset_entries": int(stats.get("rrset.cache.count", 0)),
               "windows": [windows[k] for k in sorted(windows)],
               "seconds": sorted(seconds.items())}
        print("  %s: %s" % (kind, " ".join("%s=%s" % (k, ("%.4g" % v) if isinstance(v, float)
                                                         else v) for k, v in res.items()
                                         if k not in ("windows", "seconds"))), flush=True)
        print("    max per 30 s: %s" % " ".join("%.1f" % x for x in res["windows"]), flush=True)
        return res
    finally:
        proc.terminate()
        proc.wait()
        prim.stop()
        subprocess.run(["rm", "-rf", d])




def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("--rate", type=int, default=5000)
    ap.add_argument("--seconds", type=int, default=240)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--slabs", type=int, default=1)
    ap.add_argument("--stock", default=os.path.join(TOP, "build", "stock"))
    ap.add_argument("--fork", default=os.path.join(TOP, "build", "fork"))
    ap.add_argument("--out")
    ap.add_argument("--plot")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="steady-e2e-")
    probe = build_probe(tmp)
    res = {"stock": [], "fork": []}
    for rep in range(a.reps):
        for kind in (("stock", "fork") if rep % 2 == 0 else ("fork", "stock")):
            print("rep %d %s" % (rep + 1, kind), flush=True)
            res[kind].append(run_one(a.stock if kind == "stock" else a.fork,
                                     kind, a, probe, tmp))
    subprocess.run(["rm", "-rf", tmp])
    rows = [("latency p50, ms", "p50_ms"), ("latency p99, ms", "p99_ms"),
            ("latency p99.9, ms", "p999_ms"), ("latency max, ms", "max_ms"),
            ("lost (2 s)", "lost"), ("msg cache entries at the end", "msg_entries"),
            ("rrset cache entries at the end", "rrset_entries")]
    out = ["# End to end: latency while the caches grow, stock against fork", "",
           "Command: `flock build/.bench.lock bench/cache_e2e.py %s`  " % " ".join(sys.argv[1:]),
           "Date: %s, %d CPUs. NSD serves `*.%s`; unbound, 2 threads, %d slab(s) per "
           "cache, 2g msg and rrset caches, resolves it through a stub-zone; "
           "random-label queries at %d qps for %d s from 64 source ports "
           "(testcode/harness/dnsprobe.c), every one a cache miss and an insert into both "
           "caches. Median (min–max) of %d runs per build, alternating." % (
               time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.cpu_count(), ZONE,
               a.slabs, a.rate, a.seconds, a.reps), "",
           "| | stock | fork | fork/stock |", "|---|---|---|---|"]
    for label, key in rows:
        s = [r[key] for r in res["stock"]]
        f = [r[key] for r in res["fork"]]
        ratio = statistics.median(f) / statistics.median(s) if statistics.median(s) else float("nan")
        out.append("| %s | %s | %s | %.3g |" % (label, fmt(s), fmt(f), ratio))
    out += ["", "Max latency per 30 s window (ms), each run:", ""]
    for kind in ("stock", "fork"):
        for i, r in enumerate(res[kind]):
            out.append("- %s run %d: %s" % (kind, i + 1, " ".join("%.1f" % x for x in r["windows"])))
    if a.plot:
        colours = {"stock": ["#d62728", "#ff9896", "#8c1c13"],
                   "fork": ["#1f77b4", "#aec7e8", "#0b3d66"]}
        series = [("%s run %d" % (kind, i + 1), colours[kind][i % 3], r["seconds"])
                  for kind in ("stock", "fork") for i, r in enumerate(res[kind])]
        line_plot(a.plot, "Max latency per second while the caches grow (%d qps)" % a.rate,
                  "seconds since start", "max latency, ms (log)", series)
        out += ["", "Plot: [%s](%s)" % (os.path.basename(a.plot), os.path.basename(a.plot))]
    text = "\n".join(out) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
