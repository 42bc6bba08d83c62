#!/usr/bin/env python3
"""The fork against stock Unbound (the base) and the resolvers operators choose
instead, in one run on loopback (bench/resolvers.py starts each with 2
threads or processes, validation off, large caches, the zone stubbed or
forwarded to NSD). Workloads:

  W1 cache hits    the 1000 names of a warm set, asked once to warm the
                   cache, then dnsperf at max rate (qps, lost), and the
                   probe (testcode/harness/dnsprobe.c) at --hit-rate qps:
                   latency percentiles and the server's CPU per answer
  W2 cache misses  random labels under the zone's wildcard (a miss and a
                   cache insert each): dnsperf at max rate, and the probe
                   at --miss-rate qps
  W3 growth        W2 at --miss-rate qps for --growth seconds: p99, p99.9
                   and max latency per 30 s window
  W4 zone update   the resolver also takes a zone of --zone-records
                   records from NSD the way it can (bench/resolvers.py);
                   the probe asks the warm set at --hit-rate qps while the
                   primary's zone is changed and the resolver told, until
                   the new serial is served: latency in that window

Resolvers run one after the other, never two at once; W1 and W2 take
--reps fresh starts of each, in rotating order. Ratios are against stock
in the same run. Prints a Markdown report (--out writes it); --plot
PREFIX draws PREFIX-w3.svg (p99.9 per window).

usage: flock build/.bench.lock bench/peers.py [--kinds stock,fork,pdns-recursor,knot-resolver,bind9]
       [--reps 3] [--seconds 10] [--growth 240] [--zone-records 1000000]
       [--hit-rate 10000] [--miss-rate 3000] [--only w1,w2,w3,w4] [--out FILE] [--plot PREFIX]"""

import argparse
import os
import shutil
import sys
import tempfile
import time

import dns.message
import dns.query

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "testcode"))
sys.path.insert(0, HERE)
from harness.load import Probe, build_probe, cpu_seconds, dnsperf, latency_summary, names_file, windows  # noqa: E402
from harness.stats import med, median, ratio  # noqa: E402
from harness.server import stock_name  # noqa: E402
from harness.zone import Primary, write_zone  # noqa: E402
import resolvers  # noqa: E402
from svgplot import line_plot  # noqa: E402

ZONE = "peers.example."
BIG = "big.example."
WARM = 1000
COLOURS = {"stock": "#c0392b", "fork": "#2471a3", "pdns-recursor": "#27ae60",
           "knot-resolver": "#8e44ad", "bind9": "#d68910"}


def log(msg):
    print("[peers %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def wildcard_zone(prim):
    with open(prim.zonefile(ZONE), "w") as f:
        f.write("$ORIGIN %s\n$TTL 86400\n@ SOA ns admin 1 3600 600 86400 3600\n"
                "@ NS ns\nns A 127.0.0.1\n* A 192.0.2.1\n" % ZONE)


def cpu(res):
    return sum(cpu_seconds(p) for p in res.pids)


def probe_run(res, exe, tmp, name, rate, seconds, warm=0):
    """The probe against res; its latency summary and the server's CPU
    microseconds per answer."""
    c0 = cpu(res)
    p = Probe(exe, res.port, name, rate, seconds, os.path.join(tmp, "probe.out"), warm=warm)
    p.run()
    used = cpu(res) - c0
    recs = p.records()
    s = latency_summary(recs)
    s["cpu_us"] = used / max(1, s["n"] - s["lost"]) * 1e6
    return s, recs


def w1_w2(kind, a, tmp, prim, exe, files):
    """W1 and W2 on one fresh start of kind."""
    d = tempfile.mkdtemp(prefix=kind + "-", dir=tmp)
    r = {}
    with resolvers.make(kind, d, ZONE, prim.port) as res:
        if "w1" in a.only:
            dnsperf(res.port, files["warm"], 30, qps=5000, once=True)
            r["w1_max"] = dnsperf(res.port, files["warm"], a.seconds)
            r["w1_fixed"], _ = probe_run(res, exe, tmp, "%r." + ZONE, a.hit_rate, a.seconds, WARM)
        if "w2" in a.only:
            r["w2_max"] = dnsperf(res.port, files["miss"], a.seconds)
            r["w2_fixed"], _ = probe_run(res, exe, tmp, "%r." + ZONE, a.miss_rate, a.seconds)
    shutil.rmtree(d, ignore_errors=True)
    return r


def w3(kind, a, tmp, prim, exe):
    d = tempfile.mkdtemp(prefix=kind + "-w3-", dir=tmp)
    with resolvers.make(kind, d, ZONE, prim.port) as res:
        s, recs = probe_run(res, exe, tmp, "%r." + ZONE, a.miss_rate, a.growth)
    shutil.rmtree(d, ignore_errors=True)
    s["windows"] = windows(recs, 30)
    return s


def served_serial(port, timeout=0.5):
    try:
        r = dns.query.udp(dns.message.make_query("serial." + BIG, "TXT"), "127.0.0.1",
                          port=port, timeout=timeout)
        for rrset in r.answer:
            for rd in rrset:
                return int(rd.strings[0])
    except Exception:
        pass
    return None


def w4(kind, a, tmp, prim, big, exe, serial):
    """One zone update while the warm set is probed; serial: the primary
    serves serial - 1 now and will serve serial."""
    d = tempfile.mkdtemp(prefix=kind + "-w4-", dir=tmp)
    res = resolvers.make(kind, d, ZONE, prim.port, secondary=(BIG, big.port))
    res.start()
    try:
        t = time.monotonic()
        while served_serial(res.port) != serial - 1:
            if time.monotonic() - t > 300:
                raise RuntimeError("%s: first transfer of %s not served" % (kind, BIG))
            time.sleep(0.2)
        first = time.monotonic() - t
        dnsperf(res.port, a.files["warm"], 30, qps=5000, once=True)
        c0 = cpu(res)
        p = Probe(exe, res.port, "%r." + ZONE, a.hit_rate, a.window,
                  os.path.join(tmp, "probe.out"), warm=WARM).start()
        time.sleep(3)
        write_zone(big.zonefile(BIG), BIG, serial, a.zone_records)
        big.reload({BIG: serial}, timeout=300)
        t_notify = time.monotonic()
        res.notify_secondary()
        served = None
        while time.monotonic() - t_notify < a.window - 5:
            if served_serial(res.port, 0.2) == serial:
                served = time.monotonic() - t_notify
                break
            time.sleep(0.1)
        p.wait(a.window + 30)
        used = cpu(res) - c0
        recs = p.records()
        end = t_notify + (served if served is not None else a.window)
        inside = latency_summary(recs, t_notify, end + 1)
        outside = latency_summary([x for x in recs if not (t_notify <= x[0] < end + 1)])
        return {"first_s": first, "served_s": served, "in": inside, "out": outside,
                "cpu_s": used}
    finally:
        res.stop()
        shutil.rmtree(d, ignore_errors=True)


def fmt_ratio(vals, base):
    m, b = median(vals), median(base)
    r = ratio(m, b)
    return "%.2f×" % r if r == r else "–"


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--kinds", default="stock,fork,pdns-recursor,knot-resolver,bind9")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--growth", type=int, default=240)
    ap.add_argument("--zone-records", type=int, default=1000000)
    ap.add_argument("--window", type=int, default=60,
                    help="W4: seconds of the probe around one zone update")
    ap.add_argument("--hit-rate", type=int, default=10000)
    ap.add_argument("--miss-rate", type=int, default=3000)
    ap.add_argument("--only", default="w1,w2,w3,w4")
    ap.add_argument("--out")
    ap.add_argument("--plot")
    a = ap.parse_args()
    a.only = a.only.split(",")
    kinds = [k for k in a.kinds.split(",") if resolvers.installed(k)]
    missing = [k for k in a.kinds.split(",") if k not in kinds]
    cmd = "bench/peers.py " + " ".join(sys.argv[1:])
    tmp = tempfile.mkdtemp(prefix="steady-peers-")
    exe = build_probe(tmp)
    # enough random names that dnsperf at max rate never wraps around
    a.files = files = {"warm": names_file(os.path.join(tmp, "warm.txt"), ZONE, n=WARM),
                       "miss": names_file(os.path.join(tmp, "miss.txt"), ZONE,
                                          random_labels=max(200000, a.seconds * 80000))}
    prim = Primary(os.path.join(tmp, "nsd"), [ZONE])
    wildcard_zone(prim)
    prim.start({ZONE: 1})
    res = {k: [] for k in kinds}
    growth, update = {}, {}
    try:
        if "w1" in a.only or "w2" in a.only:
            for rep in range(a.reps):
                order = kinds[rep % len(kinds):] + kinds[:rep % len(kinds)]
                for k in order:
                    log("W1/W2 rep %d: %s" % (rep + 1, k))
                    res[k].append(w1_w2(k, a, tmp, prim, exe, files))
        if "w3" in a.only:
            for k in kinds:
                log("W3 (%d s at %d qps): %s" % (a.growth, a.miss_rate, k))
                growth[k] = w3(k, a, tmp, prim, exe)
        if "w4" in a.only:
            big = Primary(os.path.join(tmp, "nsd-big"), [BIG])
            write_zone(big.zonefile(BIG), BIG, 1, a.zone_records)
            log("W4: NSD loads %d records" % a.zone_records)
            big.start({BIG: 1}, timeout=600)
            try:
                serial = 1
                for k in kinds:
                    serial += 1
                    log("W4: %s" % k)
                    try:
                        update[k] = w4(k, a, tmp, prim, big, exe, serial)
                    except RuntimeError as e:
                        log("W4: %s: %s" % (k, e))
                        update[k] = None
                        # the primary may be ahead of the resolver now
                        big.stop()
                        write_zone(big.zonefile(BIG), BIG, serial, a.zone_records)
                        big.start({BIG: serial}, timeout=600)
            finally:
                big.stop()
    finally:
        prim.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    out = ["## Peers: the fork, %s and other resolvers" % stock_name(), "",
           "Command: `flock build/.bench.lock %s` (%s)." % (cmd, time.strftime("%Y-%m-%d")), ""]
    if missing:
        out += ["Not installed, left out: %s (`scripts/install-deps.sh bench`)." % ", ".join(missing), ""]
    base = "stock" if "stock" in kinds else kinds[0]

    def col(k, wl, key):
        return [r[wl][key] for r in res[k] if wl in r]

    if any(res.values()):
        out += ["Median (min–max) of %d fresh starts per resolver; max rate is dnsperf "
                "(8 clients, 200 outstanding) for %d s, the fixed rates are the probe "
                "(64 source ports). CPU µs/answer is the server's user+system time "
                "over the fixed-rate run divided by the answers. Ratios: median against "
                "%s's median." % (a.reps, a.seconds, base), "",
                "What is not equal: the load generator (dnsperf or the probe) and NSD (one "
                "process, which answers every miss of every resolver) run on the same 2 vCPUs "
                "as the resolver, so max-rate figures are bound by the machine; knot-resolver "
                "is 2 processes sharing one LMDB cache, the others 2 threads of one process; "
                "Unbound and knot-resolver stub the zone, pdns-recursor and BIND forward it; "
                "pdns-recursor answers a repeated question from its packet cache. Validation "
                "is off in all of them.", ""]
        for wl, title, rate in (("w1", "W1 cache hits (1000 names)", a.hit_rate),
                                ("w2", "W2 cache misses (random labels under a wildcard)", a.miss_rate)):
            if wl not in a.only:
                continue
            out += ["### " + title, "",
                    "| resolver | max-rate qps | × %s | lost | p50 ms at %d qps | p99 ms | "
                    "p99.9 ms | max ms | lost | CPU µs/answer |" % (base, rate),
                    "|---|---|---|---|---|---|---|---|---|---|"]
            for k in kinds:
                q = col(k, wl + "_max", "qps")
                out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    k, med(q), fmt_ratio(q, col(base, wl + "_max", "qps")),
                    med(col(k, wl + "_max", "lost"), "%.0f"),
                    med(col(k, wl + "_fixed", "p50"), "%.3f"), med(col(k, wl + "_fixed", "p99"), "%.3f"),
                    med(col(k, wl + "_fixed", "p999"), "%.2f"), med(col(k, wl + "_fixed", "max"), "%.1f"),
                    med(col(k, wl + "_fixed", "lost"), "%.0f"), med(col(k, wl + "_fixed", "cpu_us"), "%.1f")))
            out.append("")
    if growth:
        out += ["### W3 growth: random labels at %d qps for %d s, one run each" % (a.miss_rate, a.growth), "",
                "Per 30 s window: p99 / p99.9 / max latency in ms; the last columns are the whole run.", "",
                "| resolver | " + " | ".join("%d–%d s" % (w, w + 30) for w, _ in
                                           growth[kinds[0]]["windows"]) + " | p99.9 | max | lost |",
                "|---|" + "---|" * (len(growth[kinds[0]]["windows"]) + 3)]
        for k in kinds:
            g = growth[k]
            out.append("| %s | %s | %.2f | %.1f | %d |" % (
                k, " | ".join("%.2f / %.2f / %.1f" % (s["p99"], s["p999"], s["max"])
                              for _, s in g["windows"]), g["p999"], g["max"], g["lost"]))
        out.append("")
        if a.plot:
            line_plot(a.plot + "-w3.svg", "W3: p99.9 latency per 30 s window, %d qps of cache misses"
                      % a.miss_rate, "seconds", "p99.9 ms",
                      [(k, COLOURS.get(k, "#555555"), [(w, max(s["p999"], 0.01))
                                                     for w, s in growth[k]["windows"]])
                       for k in kinds])
            out += ["![W3 p99.9 per window](%s)" % os.path.basename(a.plot + "-w3.svg"), ""]
    if update:
        how = {"stock": "auth-zone (transfer and apply on a worker)",
               "fork": "auth-zone (auth-zone-io-thread: yes)",
               "pdns-recursor": "zoneToCache (AXFR into the cache every 10 s)",
               "knot-resolver": "none: forwards the zone to the primary",
               "bind9": "secondary zone"}
        out += ["### W4 zone update: %d records, warm set probed at %d qps" % (a.zone_records, a.hit_rate), "",
                "The primary's zone changes (NSD reload), then the resolver is told "
                "(unbound-control auth_zone_transfer, a NOTIFY for BIND; pdns-recursor "
                "refreshes on its own timer). Window: from then until the new serial is "
                "served, plus 1 s. One run each.", "",
                "| resolver | nearest equivalent | first transfer s | new serial served after s | "
                "window p99.9 ms | window max ms | window lost | outside max ms | outside lost |",
                "|---|---|---|---|---|---|---|---|---|"]
        for k in kinds:
            u = update.get(k)
            if not u:
                out.append("| %s | %s | failed | | | | | | |" % (k, how.get(k, "")))
                continue
            out.append("| %s | %s | %.1f | %s | %.2f | %.1f | %d | %.1f | %d |" % (
                k, how.get(k, ""), u["first_s"],
                "%.1f" % u["served_s"] if u["served_s"] is not None else "not in %d s" % a.window,
                u["in"]["p999"], u["in"]["max"], u["in"]["lost"], u["out"]["max"], u["out"]["lost"]))
        out.append("")
    text = "\n".join(out) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
