#!/usr/bin/env python3
"""What an RPZ update by IXFR costs: stock and the fork side by side,
alternating. Knot on loopback serves an RPZ zone of --names QNAME
triggers under bench. (local data: A 192.0.2.1; a name that is no trigger
answers SERVFAIL at once, its only server is a closed port), unbound (--threads threads, respip
iterator) takes it in an rpz: clause with a zonefile. After the first
transfer (AXFR) three updates follow, each an IXFR that replaces --sizes
triggers by new ones (an IXFR of twice that many RRs). For each update,
from the NOTIFY until the last new trigger answers and the
zonefile holds the new serial (and 1 s more, for the work after it):
  cpu   unbound's CPU time (all threads, /proc/PID/stat), s;
  peak  its peak resident memory (VmHWM, reset before the update), MB,
        against its resident memory before the update;
  stall the longest answer, and the lost queries, of a probe
        (testcode/harness/dnsprobe.c) asking a trigger that stays, at --rate qps
        (every query is checked against the RPZ, under its zone lock);
  apply seconds until the last new trigger answers.
Median (min-max) of --reps runs each. With --addr N the zone also has
N rpz-ip triggers (10.x.y.z/32, local data A 192.0.2.2), and the updates
replace --sizes of those instead (an update is applied when the
zonefile holds its serial).

usage: flock build/.bench.lock bench/rpz_ixfr.py [--names 1000000]
       [--addr 0] [--sizes 10,1000,50000] [--reps 3] [--threads 1] [--rate 1000]
       [--builds stock=build/stock,fork=build/fork] [--out FILE]
  --builds  label=builddir pairs, run in this order; the ratio rows
            divide each by the first"""

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
from harness.load import build_probe, cpu_seconds, proc_status_kb  # noqa: E402
from harness.stats import med  # noqa: E402
from harness.zone import (KnotPrimary, Secondary, answers_address, file_serial,  # noqa: E402
                          notify, rpz_clause)

ZONE = "rpz.example."
PROBE = "probe.bench."
TICK = os.sysconf("SC_CLK_TCK")
TRIGGER_A = "192.0.2.1"


class RpzZone:
    """The triggers t<i>.bench. of the zone; an update replaces a block of
    them by u<serial>-<i>.bench."""

    def __init__(self, names, addr=0):
        self.labels = ["t%d" % i for i in range(names)]
        self.addrs = list(range(addr))
        self.next_addr = addr
        self.serial = 1
        self.offset = 0

    def text(self):
        head = ("$ORIGIN %s\n$TTL 3600\n@ IN SOA ns.%s hostmaster.%s %d 3600 600 "
                "86400 300\n@ IN NS ns\nns IN A 127.0.0.1\n%s IN A %s\n" % (
                    ZONE, ZONE, ZONE, self.serial, PROBE.split(".")[0] + ".bench",
                    TRIGGER_A))
        return head + "".join("%s.bench IN A %s\n" % (l, TRIGGER_A) for l in self.labels) \
            + "".join("32.%d.%d.%d.10.rpz-ip IN A 192.0.2.2\n" % (
                n & 255, (n >> 8) & 255, (n >> 16) & 255) for n in self.addrs)

    def update(self, count):
        """Replace count triggers (address triggers, if the zone has
        them); returns the last new name, None for address triggers."""
        self.serial += 1
        if self.addrs:
            n = len(self.addrs)
            for j in range(count):
                self.addrs[(self.offset + j) % n] = self.next_addr
                self.next_addr += 1
            self.offset = (self.offset + count) % n
            return None
        n = len(self.labels)
        for j in range(count):
            i = (self.offset + j) % n
            self.labels[i] = "u%d-%d" % (self.serial, i)
        self.offset = (self.offset + count) % n
        return "%s.bench." % self.labels[(self.offset - 1) % n]

    def write(self, path):
        with open(path + ".new", "w") as f:
            f.write(self.text())
        os.rename(path + ".new", path)




def triggered(port, name):
    """whether unbound answers name with the trigger's local data; the
    timeout is short: a query that missed the trigger waits for the
    closed port, and the next one is checked against the RPZ again"""
    return answers_address(port, name, TRIGGER_A, 0.1)


def one_run(label, build, zone, knot, sizes, threads, rate, probe_exe, tmp):
    """AXFR, then one IXFR per size; returns {size: result}."""
    d = tempfile.mkdtemp(prefix="rpz-%s-" % label, dir=tmp)
    ub = Secondary(build, os.path.join(d, "unbound"), knot.port, [ZONE],
                   threads=threads)
    rpz_clause(ub, ZONE)
    out = os.path.join(d, "probe.txt")
    results = {}
    ub.start()
    probe = None
    try:
        pid = ub.proc.pid
        t0 = time.monotonic()
        while file_serial(ub.zonefile(ZONE)) != zone.serial:
            if time.monotonic() - t0 > 600:
                raise RuntimeError("no AXFR after 600 s:\n" + ub.read_log()[-2000:])
            time.sleep(0.1)
        axfr = time.monotonic() - t0
        for name in (PROBE, zone.labels[-1] + ".bench."):
            if not triggered(ub.port, name):
                raise RuntimeError("%s: no RPZ answer for %s" % (label, name))
        time.sleep(2)
        probe = subprocess.Popen([probe_exe, "-p", str(ub.port), "-q", PROBE, "-r",
                                  str(rate), "-n", "16", "-d", "3000", "-t", "2000",
                                  "-o", out], stdout=subprocess.PIPE, text=True)
        time.sleep(1)
        windows = []
        for size in sizes:
            last = zone.update(size)
            zone.write(knot.zonefile(ZONE))
            knot.reload({ZONE: zone.serial}, timeout=600)
            rss0 = proc_status_kb(pid, "VmRSS")
            with open("/proc/%d/clear_refs" % pid, "w") as f:
                f.write("5")
            cpu0 = cpu_seconds(pid)
            t0 = time.monotonic()
            notify(ub.port, ZONE)
            applied = None
            while True:
                now = time.monotonic()
                if now - t0 > 600:
                    raise RuntimeError("update of %d not applied after 600 s" % size)
                if applied is None and (triggered(ub.port, last) if last else
                                        file_serial(ub.zonefile(ZONE)) == zone.serial):
                    applied = now - t0
                if applied is not None and file_serial(ub.zonefile(ZONE)) == zone.serial:
                    break
                time.sleep(0.01)
            time.sleep(1)
            t1 = time.monotonic()
            results[size] = {"cpu": cpu_seconds(pid) - cpu0, "rss0": rss0 / 1024.0,
                             "peak": proc_status_kb(pid, "VmHWM") / 1024.0, "apply": applied}
            windows.append((size, t0, t1))
            time.sleep(1)
    finally:
        if probe is not None:
            probe.terminate()       # it writes its records then
            probe.wait()
        ub.stop(timeout=300)
    recs = []
    with open(out) as f:
        for line in f:
            sent, lat, _ = line.split()
            recs.append((int(sent) / 1e6, int(lat)))
    for size, t0, t1 in windows:
        lats = [l / 1000.0 for t, l in recs if t0 <= t < t1 and l >= 0]
        results[size]["stall"] = max(lats) if lats else float("nan")
        results[size]["lost"] = sum(1 for t, l in recs if t0 <= t < t1 and l == -1)
    results["axfr"] = axfr
    return results




def ratio(res, label, base, size, key):
    """label's median over base's, for one column of one update size"""
    m = {lb: statistics.median(r[size][key] for r in res[lb]) for lb in (label, base)}
    return "%.2f×" % (m[label] / m[base]) if m[base] else "–"


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--names", type=int, default=1000000)
    ap.add_argument("--addr", type=int, default=0)
    ap.add_argument("--sizes", default="10,1000,50000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--builds", default="stock=build/stock,fork=build/fork")
    ap.add_argument("--out")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    builds = [(b.split("=", 1)[0], os.path.join(TOP, b.split("=", 1)[1]))
              for b in a.builds.split(",")]
    res = {label: [] for label, _ in builds}
    with tempfile.TemporaryDirectory(prefix="steady-rpz-bench-") as tmp:
        probe_exe = build_probe(tmp)
        zone = RpzZone(a.names, a.addr)
        knot = KnotPrimary(os.path.join(tmp, "knot"), [ZONE])
        zone.write(knot.zonefile(ZONE))
        knot.start({ZONE: zone.serial}, timeout=600)
        try:
            for rep in range(a.reps):
                for label, build in builds:
                    r = one_run(label, build, zone, knot, sizes, a.threads, a.rate,
                                probe_exe, tmp)
                    res[label].append(r)
                    print("%s run %d: AXFR %.1f s; %s" % (label, rep + 1, r["axfr"], "; ".join(
                        "%d: cpu %.2f s, peak %.0f MB (before %.0f), stall %.1f ms, "
                        "lost %d, apply %.2f s" % (s, r[s]["cpu"], r[s]["peak"], r[s]["rss0"],
                                                   r[s]["stall"], r[s]["lost"], r[s]["apply"])
                        for s in sizes)), flush=True)
        finally:
            knot.stop()
    rows = ["# RPZ updates by IXFR: stock and fork", "",
            "Command: `flock build/.bench.lock bench/rpz_ixfr.py --names %d%s --sizes %s "
            "--reps %d --threads %d --rate %d --builds %s%s`" % (
                a.names, " --addr %d" % a.addr if a.addr else "", a.sizes, a.reps,
                a.threads, a.rate, a.builds,
                " --out " + a.out if a.out else ""), "",
            "An RPZ of %d QNAME triggers%s from Knot (AXFR, then IXFRs that each replace "
            "the given number of %s triggers); unbound with %d thread(s). Median (min–max) "
            "of %d runs; each update from its NOTIFY until the new triggers answer and "
            "the zonefile is written, plus 1 s." % (
                a.names, " and %d rpz-ip triggers" % a.addr if a.addr else "",
                "address" if a.addr else "QNAME", a.threads, a.reps), "",
            "| triggers replaced | build | CPU, s | peak RSS, MB | RSS before, MB | "
            "probe max, ms | lost | applied after, s |",
            "|---|---|---|---|---|---|---|---|"]
    for s in sizes:
        for label, _ in builds:
            v = [r[s] for r in res[label]]
            rows.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
                s, label, med([x["cpu"] for x in v], "%.2f"), med([x["peak"] for x in v]),
                med([x["rss0"] for x in v]), med([x["stall"] for x in v], "%.1f"),
                med([x["lost"] for x in v]), med([x["apply"] for x in v], "%.2f")))
        base = builds[0][0]
        for label, _ in builds[1:]:
            rows.append("| %d | %s/%s | %s | %s | %s | %s | | %s |" % (
                s, label, base, *(ratio(res, label, base, s, k) for k in
                                  ("cpu", "peak", "rss0", "stall", "apply"))))
    rows += ["", "| build | AXFR to zonefile, s |", "|---|---|"]
    for label, _ in builds:
        rows.append("| %s | %s |" % (label, med([r["axfr"] for r in res[label]], "%.1f")))
    print("\n".join(rows))
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
