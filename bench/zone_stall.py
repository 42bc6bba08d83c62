#!/usr/bin/env python3
"""Zone update stalls, stock against fork, in one run (issues: zone
transfers never stall a worker; auth-zone lock hygiene).

NSD on loopback is the primary of a zone of --sizes records and of a small
zone; the secondary (stock build/stock, or the fork build/fork with its
default auth-zone-io-thread: yes) keeps a zonefile. For every update of
the large zone (--updates per configuration) the benchmark:
  - runs testcode/harness/dnsprobe.c at --rate qps from 64 source ports for a name
    in the small zone (the probe), and at 5% of that rate for a name in
    the zone being updated (the zone probe), lost after 2 s;
  - sends one NOTIFY, then a storm of NOTIFYs from 8 source ports every
    20 ms until the new zonefile is on disk, timing each answer;
  - times list_auth_zones during the zonefile write, and before the
    update (what the unbound-control round trip costs with no write);
  - records when the new serial is served and when it is on disk.
Per configuration it reports the median (min-max) over the updates of:
NOTIFY to served, NOTIFY to on disk, the probe's max and p99.9 latency
and lost queries from the NOTIFY until one second after the file is on
disk (the update window) and outside it, the zone probe's max and lost,
the slowest NOTIFY answer and list_auth_zones. Stock and fork alternate.
--scrape also runs `unbound-control stats_noreset` every 100 ms from the
NOTIFY until the file is on disk, as a Prometheus exporter would scrape,
and reports the slowest scrape and one before the update (a scrape waits
for every worker to answer; upstream allows it 60 s per worker).
--plot draws the probe's max latency per 100 ms around the first update
of the largest zone, for every thread count, stock and fork.

usage: flock build/.bench.lock bench/zone_stall.py [--sizes 100000,1000000]
       [--threads 1,2] [--updates 3] [--rate 2000] [--primary nsd|knot] [--scrape]
       [--stock DIR] [--fork DIR] [--labels stock,fork] [--extra 'name: value']
       [--out doc/bench-authzone-io.md] [--plot doc/bench-authzone-io.svg]
--stock and --fork are any two build directories with unbound and
unbound-control in them (an upstream tree too), --labels their names in
the report, --extra server: clause lines for both (separated by ';')."""

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "testcode"))
from harness.load import build_probe  # noqa: E402
from harness.stats import med as fmt  # noqa: E402
from harness.zone import (KnotPrimary, Primary, Secondary, file_serial,  # noqa: E402
                      notify, write_zone)
sys.path.insert(0, HERE)
from svgplot import line_plot  # noqa: E402

ZONE = "example.net."
SMALL = "other.example."


def probe_cmd(exe, port, name, rate, secs, out):
    return [exe, "-p", str(port), "-q", name, "-r", str(rate), "-n", "64",
            "-d", str(secs), "-t", "2000", "-o", out]


def window_stats(path, t0, t1):
    """max, p99.9 (ms) and lost of the queries of a dnsprobe -o file sent
    inside [t0, t1) and outside it; times in seconds (monotonic)."""
    ins, outs = [], []
    lost_in = lost_out = 0
    with open(path) as f:
        for line in f:
            ts, lat, _ = line.split()
            t = int(ts) / 1e6
            lat = int(lat)
            inside = t0 <= t < t1
            if lat < 0:
                if inside:
                    lost_in += 1
                else:
                    lost_out += 1
                continue
            (ins if inside else outs).append(lat / 1000.0)

    def summ(v, lost):
        v.sort()
        if not v:
            return {"max": float("nan"), "p999": float("nan"), "lost": lost, "n": lost}
        return {"max": v[-1], "p999": v[min(len(v) - 1, int(len(v) * 0.999))],
                "lost": lost, "n": len(v) + lost}
    return summ(ins, lost_in), summ(outs, lost_out)


def timeline(path, t0, t1, step=0.1):
    """(seconds since t0, max latency in ms) per step from t0 - 1 s to t1
    of a dnsprobe -o file; a lost query counts as the 2 s timeout."""
    worst = {}
    with open(path) as f:
        for line in f:
            ts, lat, _ = line.split()
            t = int(ts) / 1e6
            if t0 - 1.0 <= t < t1:
                lat_ms = 2000.0 if int(lat) < 0 else int(lat) / 1000.0
                k = int((t - t0 + 1.0) / step)
                worst[k] = max(worst.get(k, 0.0), lat_ms)
    return [(k * step - 1.0, worst[k]) for k in sorted(worst)]


def one_config(build, kind, size, threads, updates, rate, probe_exe, tmp,
               knot=False, scrape=False, extra=""):
    """All updates for one build and configuration; a list of dicts.
    With knot, Knot is the primary and every update changes two RRs, so
    the transfers are small IXFRs."""
    res = []
    d = tempfile.mkdtemp(prefix="%s-%d-%d-" % (kind, size, threads), dir=tmp)
    prim = (KnotPrimary if knot else Primary)(os.path.join(d, "primary"), [ZONE, SMALL])
    write_zone(prim.zonefile(ZONE), ZONE, 1, size, fixed=knot)
    write_zone(prim.zonefile(SMALL), SMALL, 1, 100)
    sec = Secondary(build, os.path.join(d, "unbound"), prim.port, [ZONE, SMALL],
                    threads=threads, io_thread=None, extra=extra)
    zfile = sec.zonefile(ZONE)
    prim.start({ZONE: 1, SMALL: 1}, timeout=300)
    try:
        sec.start(timeout=300)
        for z in (ZONE, SMALL):
            if not sec.wait_serial(z, 1, timeout=300):
                raise RuntimeError("%s: first transfer not done" % z)
        serial = 1
        for u in range(updates):
            serial += 1
            write_zone(prim.zonefile(ZONE), ZONE, serial, size, fixed=knot)
            prim.reload({ZONE: serial}, timeout=300)
            secs = 8 + size / 100000.0 * 1.5
            pout = os.path.join(d, "probe%d" % u)
            zout = os.path.join(d, "zprobe%d" % u)
            probe = subprocess.Popen(probe_cmd(probe_exe, sec.port, "h7." + SMALL,
                                               rate, secs, pout),
                                     stdout=subprocess.PIPE, text=True)
            zprobe = subprocess.Popen(probe_cmd(probe_exe, sec.port, "h7." + ZONE,
                                                max(1, rate // 20), secs, zout),
                                      stdout=subprocess.PIPE, text=True)
            time.sleep(1.0)
            t0 = time.monotonic()
            sec.control("list_auth_zones", check=False)
            list_quiet = time.monotonic() - t0
            t0 = time.monotonic()
            if scrape:
                sec.control("stats_noreset", check=False)
            scrape_quiet = time.monotonic() - t0
            tmpfile = "%s.tmp%d" % (zfile, sec.proc.pid)
            t_notify = time.monotonic()
            rc, _ = notify(sec.port, ZONE, timeout=2)
            notifies = []
            done = threading.Event()

            def storm():
                k = 0
                while not done.is_set():
                    k += 1
                    notifies.append(notify(sec.port, ZONE, timeout=2,
                                           sport=32000 + (k % 8)))
                    time.sleep(0.02)
            st = threading.Thread(target=storm, daemon=True)
            st.start()
            scrapes = []

            def scraper():
                while not done.is_set():
                    t0_ = time.monotonic()
                    sec.control("stats_noreset", check=False)
                    scrapes.append(time.monotonic() - t0_)
                    time.sleep(0.1)
            sc = threading.Thread(target=scraper, daemon=True)
            if scrape:
                sc.start()
            t_served = t_disk = None
            list_time = None
            deadline = t_notify + secs - 1.5
            while time.monotonic() < deadline and t_disk is None:
                if t_served is None and sec.serial(ZONE) == serial:
                    t_served = time.monotonic()
                if list_time is None and os.path.exists(tmpfile):
                    t0 = time.monotonic()
                    sec.control("list_auth_zones", check=False)
                    list_time = time.monotonic() - t0
                if file_serial(zfile) == serial:
                    t_disk = time.monotonic()
                    if t_served is None and sec.serial(ZONE) == serial:
                        t_served = t_disk
                time.sleep(0.002)
            # a secondary that writes the zonefile before it serves the
            # new serial (upstream's auth load thread with the write on it)
            while t_served is None and t_disk is not None and time.monotonic() < deadline:
                if sec.serial(ZONE) == serial:
                    t_served = time.monotonic()
                time.sleep(0.002)
            done.set()
            st.join()
            if scrape:
                sc.join()
            probe.communicate()
            zprobe.communicate()
            end = (t_disk or time.monotonic()) + 1.0
            pin, pout_ = window_stats(pout, t_notify, end)
            zin, _ = window_stats(zout, t_notify, end)
            r = {"notify_to_served": (t_served - t_notify) if t_served else float("nan"),
                 "notify_to_disk": (t_disk - t_notify) if t_disk else float("nan"),
                 "probe_max_ms": pin["max"], "probe_p999_ms": pin["p999"],
                 "probe_lost": pin["lost"], "probe_sent": pin["n"],
                 "quiet_max_ms": pout_["max"], "quiet_lost": pout_["lost"],
                 "zone_max_ms": zin["max"], "zone_lost": zin["lost"],
                 "notify_max_ms": max([s for _, s in notifies] + [0]) * 1000,
                 "notify_unanswered": sum(1 for rc_, _ in notifies if rc_ != "NOERROR"),
                 "list_ms": list_time * 1000 if list_time is not None else float("nan"),
                 "list_quiet_ms": list_quiet * 1000}
            if scrape:
                r["scrape_max_ms"] = max(scrapes + [0]) * 1000
                r["scrape_quiet_ms"] = scrape_quiet * 1000
            print("  %s size %d threads %d update %d: %s" % (
                kind, size, threads, u + 1,
                " ".join("%s=%.4g" % (k, v) for k, v in r.items())), flush=True)
            if u == 0:
                r["timeline"] = timeline(pout, t_notify, end + 1.0)
            res.append(r)
            if t_disk is None:
                # let the rest of the update finish before the next one
                sec.wait_serial(ZONE, serial, timeout=300)
    finally:
        sec.kill()
        prim.stop()
        subprocess.run(["rm", "-rf", d])
    return res


def nsd_version():
    r = subprocess.run(["nsd", "-v"], capture_output=True, text=True)
    for w in (r.stdout + r.stderr).split():
        if w[:1].isdigit():
            return w
    return "?"


def knot_version():
    r = subprocess.run(["knotd", "-V"], capture_output=True, text=True)
    for w in (r.stdout + r.stderr).split():
        if w[:1].isdigit():
            return w
    return "?"




def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--updates", type=int, default=3)
    ap.add_argument("--rate", type=int, default=2000)
    ap.add_argument("--stock", default=os.path.join(TOP, "build", "stock"))
    ap.add_argument("--fork", default=os.path.join(TOP, "build", "fork"))
    ap.add_argument("--primary", choices=["nsd", "knot"], default="nsd")
    ap.add_argument("--out")
    ap.add_argument("--plot")
    ap.add_argument("--scrape", action="store_true")
    ap.add_argument("--labels", default="stock,fork")
    ap.add_argument("--extra", default="")
    a = ap.parse_args()
    names = dict(zip(("stock", "fork"), a.labels.split(",")))
    extra = "\n".join("\t" + x.strip() for x in a.extra.split(";") if x.strip())
    knot = a.primary == "knot"
    tmp = tempfile.mkdtemp(prefix="steady-zbench-")
    exe = build_probe(tmp)
    results = {}
    for size in [int(x) for x in a.sizes.split(",")]:
        for threads in [int(x) for x in a.threads.split(",")]:
            for kind, build in (("stock", a.stock), ("fork", a.fork)):
                print("%s, %d records, %d threads" % (names[kind], size, threads), flush=True)
                results[(size, threads, kind)] = one_config(
                    build, kind, size, threads, a.updates, a.rate, exe, tmp, knot, a.scrape,
                    extra)
    subprocess.run(["rm", "-rf", tmp])
    rows = [("NOTIFY to new serial served, s", "notify_to_served"),
            ("NOTIFY to new zonefile on disk, s", "notify_to_disk"),
            ("probe max in update window, ms", "probe_max_ms"),
            ("probe p99.9 in update window, ms", "probe_p999_ms"),
            ("probe lost in update window", "probe_lost"),
            ("probe max outside update windows, ms", "quiet_max_ms"),
            ("zone probe (5%, name in updated zone) max, ms", "zone_max_ms"),
            ("zone probe lost", "zone_lost"),
            ("slowest NOTIFY answer (storm), ms", "notify_max_ms"),
            ("NOTIFYs unanswered (2 s)", "notify_unanswered"),
            ("list_auth_zones during the write, ms", "list_ms"),
            ("list_auth_zones before the update (no write), ms", "list_quiet_ms")]
    if a.scrape:
        rows += [("slowest stats_noreset scrape in the update window, ms", "scrape_max_ms"),
                 ("stats_noreset before the update, ms", "scrape_quiet_ms")]
    out = ["# Zone update stalls: %s against %s" % (names["stock"], names["fork"]), "",
           "Command: `flock build/.bench.lock bench/zone_stall.py %s`  " % " ".join(sys.argv[1:]),
           "Date: %s, %d CPUs; %s as primary on loopback; probe %d qps over "
           "64 source ports, zone probe %d qps; median (min–max) of %d updates "
           "per row, %s and %s alternating." % (
               time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.cpu_count(),
               ("Knot %s, every update a small IXFR (SOA and one TXT record)" % knot_version())
               if knot else ("NSD %s, every update a whole zone (NSD 4.6 answers IXFR "
                             "with AXFR)" % nsd_version()), a.rate, max(1, a.rate // 20), a.updates,
               names["stock"], names["fork"]), ""]
    for size in [int(x) for x in a.sizes.split(",")]:
        for threads in [int(x) for x in a.threads.split(",")]:
            out.append("## %d records, %d worker thread%s" % (size, threads, "s" if threads > 1 else ""))
            out.append("")
            out.append("| | %s | %s |" % (names["stock"], names["fork"]))
            out.append("|---|---|---|")
            for label, key in rows:
                s = [r[key] for r in results[(size, threads, "stock")]]
                f = [r[key] for r in results[(size, threads, "fork")]]
                out.append("| %s | %s | %s |" % (label, fmt(s), fmt(f)))
            out.append("")
    if a.plot:
        size = max(int(x) for x in a.sizes.split(","))
        colours = {"stock": ["#d62728", "#8c1c13"], "fork": ["#1f77b4", "#0b3d66"]}
        series = []
        for i, threads in enumerate(int(x) for x in a.threads.split(",")):
            for kind in ("stock", "fork"):
                series.append(("%s, %d thread%s" % (names[kind], threads, "s" if threads > 1 else ""),
                               colours[kind][i % 2],
                               results[(size, threads, kind)][0]["timeline"]))
        line_plot(a.plot, "Probe max latency per 100 ms, first update of %d records" % size,
                  "seconds since the NOTIFY", "max latency, ms (log; lost = 2000)", series)
        out += ["Plot: [%s](%s)" % (os.path.basename(a.plot), os.path.basename(a.plot)), ""]
    text = "\n".join(out) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
