#!/usr/bin/env python3
"""Scale-out: dnsdist on loopback in front of a pool of 3 unbound backends
(doc/scale-out.md), a pool of forks and then a pool of stock, each with
policy chashed (consistent hashing on the query name) and roundrobin.

Each backend (bench/resolvers.py: 2 threads, large caches) stubs the
wildcard zone to NSD and is a secondary (auth-zone) of a zone of
--zone-records records. dnsdist health-checks every backend at its
defaults (every second, 1 s timeout, down after 1 failed check; the check
name is a name of the wildcard zone, as there is no root here). Traffic
through dnsdist for --seconds, from two probes (testcode/harness/dnsprobe.c):
  miss  random labels at --miss-rate qps (W2/W3: every query a miss and
        a cache insert; the backends' caches grow through doublings)
  warm  a warm set of --warm names in turn at --warm-rate qps (each name
        again every warm/warm-rate seconds: a hit when it reaches the
        backend that cached it)
At a third of the run the primary's zone changes and all three backends
are told at once (unbound-control auth_zone_transfer, as a NOTIFY to
every secondary would): a 1M-record transfer to every backend.

Measured per pool and policy: the times dnsdist marks a backend down
(its log), p99, p99.9 and max latency and lost queries of each probe,
the cache hit ratio (total.num.cachehits / total.num.queries over the
backends), when the new serial was served, how evenly each backend's
worker threads shared the queries, and where the CPU went in the
transfer window (per-process CPU and run-queue wait of every thread,
testcode/harness/sched.py). Runs one configuration at a time; prints a
Markdown report (--out writes it); --trace DIR keeps the samples and the
probes' records of each run as JSON.

usage: flock build/.bench.lock bench/scale_out.py [--pools fork,stock]
       [--policies chashed,roundrobin] [--seconds 120] [--zone-records 1000000]
       [--miss-rate 2000] [--warm 20000] [--warm-rate 1000] [--out FILE]
       [--trace DIR]"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "testcode"))
sys.path.insert(0, HERE)
from harness.load import Probe, build_probe, latency_summary  # noqa: E402
from harness.sched import ThreadSampler  # noqa: E402
from harness.server import free_port, stop_pid  # noqa: E402
from harness.zone import Primary, write_zone  # noqa: E402
import resolvers  # noqa: E402
from peers import BIG, ZONE, served_serial, wildcard_zone  # noqa: E402

BACKENDS = 3
# dnsdist's UDP sockets (source ports) to each backend: with one, the
# backend's SO_REUSEPORT hash puts all of dnsdist's queries on one of its
# worker threads; with 8, one of two threads still took up to 87% of
# them (doc/scale-out.md)
SOCKETS = 32


def log(msg):
    print("[scale-out %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def dnsdist_conf(path, port, backends, policy):
    """dnsdist's configuration: the reference deployment of
    doc/scale-out.md, with loopback addresses."""
    lines = ["-- bench/scale_out.py: see doc/scale-out.md",
             "setLocal('127.0.0.1:%d')" % port,
             "setSecurityPollSuffix('')",
             "setServerPolicy(%s)" % policy]
    for i, b in enumerate(backends):
        lines.append("newServer({address='127.0.0.1:%d', name='b%d', weight=100, sockets=%d, "
                     "checkName='health.%s'})" % (b.port, i, SOCKETS, ZONE))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


class Dnsdist:
    def __init__(self, d, backends, policy):
        self.port = free_port()
        self.conf = os.path.join(d, "dnsdist.conf")
        self.logpath = os.path.join(d, "dnsdist.log")
        dnsdist_conf(self.conf, self.port, backends, policy)
        self.proc = None

    def start(self):
        self.logf = open(self.logpath, "w")
        self.proc = subprocess.Popen(["dnsdist", "--supervised", "--disable-syslog", "-C", self.conf],
                                     stdout=self.logf, stderr=subprocess.STDOUT)
        if not resolvers.ready(self.port, "ready." + ZONE, 30):
            self.stop()
            raise RuntimeError("dnsdist does not answer:\n" + self.log())
        return self

    def log(self):
        with open(self.logpath, errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc:
            stop_pid(self.proc, 30)
        self.logf.close()


def dump_trace(path, sampler, miss, warm, t0, t1):
    """The raw material of one run, for a closer look: the samples of
    sampler, the probes' records and the transfer window [t0, t1)."""
    with open(path, "w") as f:
        json.dump({"window": [t0, t1], "miss": miss, "warm": warm,
                   "samples": [[t, [[k[0], k[1]] + list(v) for k, v in snap.items()]]
                               for t, snap in sampler.samples]}, f)


def one_run(pool, policy, a, tmp, prim, big, exe, serial):
    """One pool with one policy; big serves serial - 1 now."""
    d = tempfile.mkdtemp(prefix="%s-%s-" % (pool, policy), dir=tmp)
    backends = [resolvers.make(pool, os.path.join(d, "b%d" % i), ZONE, prim.port,
                               secondary=(BIG, big.port)) for i in range(BACKENDS)]
    dd = None
    try:
        for b in backends:
            b.start()
        t = time.monotonic()
        while any(served_serial(b.port) != serial - 1 for b in backends):
            if time.monotonic() - t > 600:
                raise RuntimeError("first transfer of %s not served by every backend" % BIG)
            time.sleep(0.5)
        dd = Dnsdist(d, backends, policy).start()
        miss = Probe(exe, dd.port, "%r." + ZONE, a.miss_rate, a.seconds,
                     os.path.join(d, "miss.out")).start()
        warm = Probe(exe, dd.port, "%r." + ZONE, a.warm_rate, a.seconds,
                     os.path.join(d, "warm.out"), warm=a.warm).start()
        sampler = ThreadSampler([("b%d" % i, b.pids[0]) for i, b in enumerate(backends)] +
                                [("dnsdist", dd.proc.pid), ("nsd", prim.pid),
                                 ("nsd-big", big.pid), ("probes", miss.proc.pid),
                                 ("probes", warm.proc.pid)]).start()
        time.sleep(a.seconds / 3)
        write_zone(big.zonefile(BIG), BIG, serial, a.zone_records)
        big.reload({BIG: serial}, timeout=300)
        t_notify = time.monotonic()
        for b in backends:
            b.control("auth_zone_transfer", BIG)
        served = None
        while time.monotonic() - t_notify < a.seconds:
            if all(served_serial(b.port, 0.3) == serial for b in backends):
                served = time.monotonic() - t_notify
                break
            time.sleep(0.2)
        miss.wait(a.seconds + 60)
        warm.wait(a.seconds + 60)
        sampler.stop()
        t_end = t_notify + (served if served is not None else a.seconds) + 1
        miss_recs, warm_recs = miss.records(), warm.records()
        if a.trace:
            dump_trace(os.path.join(a.trace, "%s-%s.json" % (pool, policy)), sampler,
                       miss_recs, warm_recs, t_notify, t_end)
        hits = queries = 0
        share = 0.0
        for b in backends:
            st = b.stats()
            hits += int(st.get("total.num.cachehits", 0))
            queries += int(st.get("total.num.queries", 0))
            # how evenly dnsdist's sockets spread over the worker threads
            per_thread = [int(v) for k, v in st.items()
                          if re.fullmatch(r"thread\d+\.num\.queries", k)]
            if sum(per_thread):
                share = max(share, max(per_thread) / sum(per_thread))
        dd.stop()
        text = dd.log()
        downs = len(re.findall(r"Marking downstream .* as 'down'", text))
        dd = None
        return {"downs": downs, "hit_ratio": hits / queries if queries else float("nan"),
                "thread_share": share,
                "miss": latency_summary(miss_recs),
                "warm": latency_summary(warm_recs),
                "served_s": served,
                "window_s": t_end - t_notify,
                "window_miss": latency_summary(miss_recs, t_notify, t_end),
                "cpu": sampler.table(t_notify, t_end),
                "worst_wait": {lab: sampler.worst_wait(t_notify, t_end, [lab])
                               for lab in sampler.labels}}
    finally:
        if dd:
            dd.stop()
        for b in backends:
            b.stop()
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--pools", default="fork,stock")
    ap.add_argument("--policies", default="chashed,roundrobin")
    ap.add_argument("--seconds", type=int, default=120)
    ap.add_argument("--zone-records", type=int, default=1000000)
    ap.add_argument("--miss-rate", type=int, default=2000)
    ap.add_argument("--warm", type=int, default=20000)
    ap.add_argument("--warm-rate", type=int, default=1000)
    ap.add_argument("--out")
    ap.add_argument("--trace", help="directory for the raw samples and probe records of each run")
    a = ap.parse_args()
    if a.trace:
        os.makedirs(a.trace, exist_ok=True)
    if not shutil.which("dnsdist"):
        sys.exit("scale_out: dnsdist is not installed (scripts/install-deps.sh bench)")
    cmd = "bench/scale_out.py " + " ".join(sys.argv[1:])
    tmp = tempfile.mkdtemp(prefix="steady-scale-out-")
    exe = build_probe(tmp)
    prim = Primary(os.path.join(tmp, "nsd"), [ZONE])
    wildcard_zone(prim)
    big = Primary(os.path.join(tmp, "nsd-big"), [BIG])
    write_zone(big.zonefile(BIG), BIG, 1, a.zone_records)
    results = []
    prim.start({ZONE: 1})
    try:
        log("NSD loads %d records" % a.zone_records)
        big.start({BIG: 1}, timeout=600)
        serial = 1
        for pool in a.pools.split(","):
            for policy in a.policies.split(","):
                serial += 1
                log("pool of %d %s backends, policy %s, %d s" % (BACKENDS, pool, policy, a.seconds))
                r = one_run(pool, policy, a, tmp, prim, big, exe, serial)
                log("  down-markings %d, hit ratio %.3f, miss max %.1f ms, warm max %.1f ms" % (
                    r["downs"], r["hit_ratio"], r["miss"]["max"], r["warm"]["max"]))
                results.append((pool, policy, r))
    finally:
        big.stop()
        prim.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    out = ["## Scale-out: dnsdist in front of %d backends" % BACKENDS, "",
           "Command: `flock build/.bench.lock %s` (%s). One run per pool and policy; "
           "the configuration and its reasoning are in doc/scale-out.md." % (cmd, time.strftime("%Y-%m-%d")), "",
           "Traffic through dnsdist for %d s: random labels at %d qps (misses, cache growth) "
           "and a warm set of %d names at %d qps. At %d s, a %d-record zone transfer to "
           "every backend at once. dnsdist uses %d UDP sockets to each backend; the last "
           "column is the largest share of one worker thread in a backend's queries "
           "(unbound-control's threadN.num.queries; 0.50 is even, 1.00 one thread took "
           "them all)." % (a.seconds, a.miss_rate, a.warm, a.warm_rate,
                           a.seconds // 3, a.zone_records, SOCKETS), "",
           "| pool | policy | backends marked down | cache hit ratio | miss p99 / p99.9 / max ms | "
           "miss lost | warm p99 / p99.9 / max ms | warm lost | new serial on all after s | "
           "busiest worker's share of its backend's queries |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for pool, policy, r in results:
        m, w = r["miss"], r["warm"]
        out.append("| %s | %s | %d | %.3f | %.2f / %.2f / %.1f | %d of %d | %.2f / %.2f / %.1f | %d of %d | %s | %.2f |" % (
            pool, policy, r["downs"], r["hit_ratio"], m["p99"], m["p999"], m["max"], m["lost"], m["n"],
            w["p99"], w["p999"], w["max"], w["lost"], w["n"],
            "%.1f" % r["served_s"] if r["served_s"] is not None else "not in the run",
            r["thread_share"]))
    labels = []
    for _, _, r in results:
        labels += [row[0] for row in r["cpu"] if row[0] not in labels]
    out += ["", "Where the CPU went in the transfer window (from the NOTIFY until 1 s after the "
            "new serial was served on all backends): CPU seconds used / seconds spent runnable "
            "but waiting for a CPU, summed over the threads of each process and its children "
            "(/proc/PID/task/TID/schedstat, sampled every 0.1 s; testcode/harness/sched.py; "
            "the kernel adds a wait when the thread gets the CPU, so the last column is one "
            "wait, however long). "
            "b0-b2 are the backends, nsd serves the wildcard zone (the misses), nsd-big the "
            "1M-record zone. The machine has 2 CPUs, so a window of s seconds has 2s CPU "
            "seconds.", "",
            "| pool | policy | window s | miss p99.9 / max ms in it | " +
            " | ".join(labels) + " | longest run-queue wait of one thread |",
            "|---|---|---|---|" + "---|" * len(labels) + "---|"]
    for pool, policy, r in results:
        cpu = {row[0]: row for row in r["cpu"]}
        worst = max(r["worst_wait"].items(), key=lambda kv: kv[1][0])
        win = r["window_miss"]
        out.append("| %s | %s | %.1f | %.1f / %.1f | %s | %.0f ms (%s) |" % (
            pool, policy, r["window_s"], win["p999"], win["max"],
            " | ".join("%.1f / %.1f" % (cpu[lab][1], cpu[lab][2]) if lab in cpu else "-"
                       for lab in labels),
            worst[1][0] * 1000, worst[0]))
    text = "\n".join(out) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
