#!/usr/bin/env python3
"""Soak: everything at once against one unbound (the fork built with
AddressSanitizer and UndefinedBehaviorSanitizer, make fork-asan), two
threads and small caches, on loopback, for --duration seconds:

- dnsperf sends random labels under a wildcard CNAME zone that is served
  for-upstream only (so every answer goes through the iterator into the
  caches, which fill and evict), mixed with names that hit the cache;
- NSD sends a new serial of nsd.soak. (AXFR) every 5 s, Knot one of
  knot.soak. (IXFR; every fourth changes every name, a large IXFR) every
  3 s, each followed by a NOTIFY; every 20 s a storm of 200 NOTIFYs;
- every 2 s one unbound-control command: stats, stats_noreset,
  flush_zone, dump_cache + load_cache, auth_zone_reload,
  auth_zone_transfer, list_auth_zones; `reload' twice, SIGHUP three
  times, and a kill -9 with a restart halfway through.

Checked all the time: every answer (a checker thread asks the zones'
SOAs, their hosts and random wildcard names): the right records of a
serial the primary published, a served serial that never goes down (a
kill -9 may go back to the serial on disk, not below it), the wildcard's
CNAME and its target; the zonefiles on disk always parse, complete, at a
serial that never goes down; the statistics add up (thread sums, no
count below zero); no sanitizer report, no crash, a clean exit; the
resident memory of each lifetime does not grow after warm-up; and
testcode/harness/dnsprobe.c's queries (100/s to one zone name) are all answered
within 100 ms, outside the planned outages (SIGHUP, reload, kill -9) and
the cache dumps: dump_cache and load_cache run in the first worker's
event loop, as upstream's remote control does, so that worker answers
nothing while they run (about 100-200 ms for this soak's caches with
sanitizers); a query sent then must be answered within 1 s.

usage: soak.py BUILDDIR [--duration SECONDS] [--seed N] [--report FILE]
  BUILDDIR: the fork built with sanitizers (build/fork-asan)
  --report: also write the result as Markdown to FILE"""

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

from harness.load import build_probe
from harness.zone import (KnotPrimary, Primary, Secondary, check_zonefile,
                      file_serial, host_serial_byte, notify, write_zone)

HERE = os.path.dirname(os.path.abspath(__file__))
NSD_ZONE = "nsd.soak."
KNOT_ZONE = "knot.soak."
WILD_ZONE = "wild.soak."
NAMES = 2000          # hosts in each transferred zone
KNOT_VARY = 20        # hosts that change in a small IXFR
STALL = 0.100         # the longest answer allowed outside planned outages
DUMP_STALL = 1.0      # the longest while dump_cache or load_cache runs
CHECK_RATE = 400      # the checker's questions a second, at most
SANITIZER = re.compile(r"AddressSanitizer|LeakSanitizer|runtime error:|"
                       r"UndefinedBehaviorSanitizer")
SAN_ENV = ["env", "ASAN_OPTIONS=detect_leaks=1:quarantine_size_mb=16:"
           "malloc_context_size=12", "UBSAN_OPTIONS=print_stacktrace=1"]
WILD_TEXT = """$ORIGIN wild.soak.
$TTL 30
@ IN SOA ns admin 1 3600 600 86400 30
@ IN NS ns
ns IN A 127.0.0.1
* IN CNAME target
target IN A 192.0.2.1
"""


class State:
    """What the controller did and what the checkers saw, under one lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.fails = []
        self.published = {NSD_ZONE: 1, KNOT_ZONE: 1}   # highest serial given
        self.knot_vary = {1: KNOT_VARY}                 # serial -> varying names
        self.served = {NSD_ZONE: 1, KNOT_ZONE: 1}      # highest serial answered
        self.epoch = 0               # lifetime of unbound (kill -9 ends one)
        self.outages = []            # (start, end, what): planned
        self.oplog = []              # (start, end, what): every action
        self.dumps = []              # (start, end): dump_cache + load_cache
        self.ops = {}                # what -> count
        self.answers = 0
        self.wrong = 0
        self.unanswered = 0
        self.rss = []                # (time, epoch, kB)
        self.disk = {NSD_ZONE: 0, KNOT_ZONE: 0}        # highest serial on disk
        self.disk_checks = 0
        self.dump_kb = 0             # largest dump_cache output

    def fail(self, what):
        with self.lock:
            if len(self.fails) < 50:
                self.fails.append("%.1fs %s" % (time.monotonic() - T0, what))
        print("FAIL %s" % what, flush=True)

    def count(self, what, start):
        """Count what, an action that ran from start until now."""
        with self.lock:
            self.ops[what] = self.ops.get(what, 0) + 1
            self.oplog.append((start, time.monotonic(), what))


T0 = time.monotonic()


def in_outage(st, t, before=1.2, after=0.3):
    """Whether a query sent at t may have met a planned outage (the probe's
    and the checker's timeout is 1 s)."""
    return any(s - before <= t <= e + after for s, e, _ in st.outages)


class Checker(threading.Thread):
    """Asks the secondary one question after another and checks each
    answer against what the primaries published."""

    def __init__(self, st, sec, rnd):
        super().__init__(daemon=True)
        self.st, self.sec, self.rnd = st, sec, rnd
        self.done = threading.Event()

    def run(self):
        # at most RATE questions a second: the checker must not take a
        # core of its own from the 2 that unbound, the primaries and the
        # load share
        while not self.done.wait(1.0 / CHECK_RATE):
            try:
                self.one()
            except Exception as e:      # a checker bug must not pass quietly
                self.st.fail("checker: %r" % e)
                return

    def ask(self, name, rdtype):
        q = dns.message.make_query(name, rdtype)
        try:
            return dns.query.udp(q, "127.0.0.1", port=self.sec.port, timeout=1.0)
        except Exception:
            return None

    def one(self):
        st, rnd = self.st, self.rnd
        kind = rnd.choice(("soa", "nsd", "knot", "knot", "wild"))
        zone = rnd.choice((NSD_ZONE, KNOT_ZONE))
        with st.lock:
            epoch = st.epoch
            low = dict(st.served)
        t = time.monotonic()
        if kind == "soa":
            r = self.ask(zone, "SOA")
        elif kind == "wild":
            name = "c%d.%s" % (rnd.randrange(1 << 30), WILD_ZONE)
            r = self.ask(name, "A")
        else:
            zone = NSD_ZONE if kind == "nsd" else KNOT_ZONE
            index = rnd.randrange(KNOT_VARY * 2 if kind == "knot" and
                                  rnd.random() < 0.7 else NAMES)
            r = self.ask("h%d.%s" % (index, zone), "A")
        with st.lock:
            if st.epoch != epoch:
                return          # a kill -9 came in between: not judged
            high = dict(st.published)
            vary = dict(st.knot_vary)
        if r is None:
            with st.lock:
                st.unanswered += 1
            return
        why = None
        if r.rcode() != dns.rcode.NOERROR:
            if not in_outage(st, t, before=0, after=2.0):
                why = "rcode %s" % dns.rcode.to_text(r.rcode())
        elif kind == "soa":
            soa = [a for a in r.answer if a.rdtype == dns.rdatatype.SOA]
            serial = soa[0][0].serial if soa else None
            if serial is None or not low[zone] <= serial <= high[zone]:
                why = "%s SOA serial %s, served before %d, published %d" % (
                    zone, serial, low[zone], high[zone])
            else:
                with st.lock:
                    st.served[zone] = max(st.served[zone], serial)
        elif kind == "wild":
            why = check_wild(r, name)
        else:
            why = check_host(r, zone, index, low[zone], high[zone], vary)
        with st.lock:
            st.answers += 1
            if why:
                st.wrong += 1
        if why:
            st.fail(why)


def check_wild(r, name):
    """A wildcard answer: the CNAME synthesised for name, then target's A."""
    got = [(a.name.to_text(), dns.rdatatype.to_text(a.rdtype),
            sorted(x.to_text() for x in a)) for a in r.answer]
    want = [(name, "CNAME", ["target." + WILD_ZONE]),
            ("target." + WILD_ZONE, "A", ["192.0.2.1"])]
    return None if got == want else "%s: %r" % (name, got)


def check_host(r, zone, index, low, high, vary):
    """A host's A records, as some serial in [low, high] has them: one
    record (Knot's zone), or a pair (NSD's), of the same serial."""
    name = "h%d.%s" % (index, zone)
    rrs = [a for a in r.answer if a.rdtype == dns.rdatatype.A]
    addrs = sorted(x.to_text() for x in rrs[0]) if len(rrs) == 1 else []
    tail = ".%d.%d" % ((index >> 8) & 255, index & 255)
    for serial in range(low, high + 1):
        if zone == NSD_ZONE:
            b = host_serial_byte(serial, index)
            want = ["10.%d%s" % (b, tail), "11.%d%s" % (b, tail)]
        elif serial in vary:
            b = host_serial_byte(serial, index, True, vary[serial])
            want = ["10.%d%s" % (b, tail)]
        else:
            continue
        if addrs == want:
            return None
    return "%s A %r: no serial in %d..%d has it" % (name, addrs, low, high)


def monitor(st, sec, done):
    """Every 0.5 s: the zonefiles on disk (complete, serial never lower)
    and unbound's resident memory."""
    while not done.wait(0.5):
        for zone, pairs in ((NSD_ZONE, True), (KNOT_ZONE, False)):
            path = sec.zonefile(zone)
            if not os.path.exists(path):
                continue
            with st.lock:
                vary = dict(st.knot_vary)
            serial, why = check_zonefile(path, zone, NAMES, pairs=pairs,
                                         fixed=not pairs, vary=vary.get)
            with st.lock:
                st.disk_checks += 1
                last = st.disk[zone]
                if serial is not None:
                    st.disk[zone] = max(last, serial)
            if why:
                st.fail("zonefile: " + why)
            elif serial < last:
                st.fail("zonefile %s went from serial %d to %d" % (zone, last, serial))
        proc = sec.proc
        if proc is None:
            continue
        try:
            with open("/proc/%d/status" % proc.pid) as f:
                m = re.search(r"^VmRSS:\s+(\d+)", f.read(), re.M)
        except OSError:
            continue
        if m:
            with st.lock:
                st.rss.append((time.monotonic(), st.epoch, int(m.group(1))))


def check_stats(st, text):
    """Statistics add up: every count at least 0, thread sums = totals."""
    vals = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if not sep:
            st.fail("stats: bad line %r" % line)
            return
        try:
            vals[name] = float(value)
        except ValueError:
            continue
    for name, v in vals.items():
        if v < 0 or v >= 2 ** 63:
            st.fail("stats: %s=%s" % (name, v))
    for key in ("num.queries", "num.cachehits", "num.cachemiss",
                "num.prefetch", "num.recursivereplies"):
        parts = [v for n, v in vals.items()
                 if re.fullmatch(r"thread\d+\." + re.escape(key), n)]
        if "total." + key in vals and sum(parts) != vals["total." + key]:
            st.fail("stats: total.%s=%d, threads add up to %d" % (
                key, vals["total." + key], sum(parts)))


class Controller:
    """Zone updates, NOTIFYs, unbound-control, signals and the kill -9."""

    def __init__(self, st, sec, nsd, knot, rnd, tmp, duration):
        self.st, self.sec, self.nsd, self.knot = st, sec, nsd, knot
        self.rnd, self.tmp, self.duration = rnd, tmp, duration
        self.knot_updates = 0

    def outage(self, what, action):
        """Run action, a planned outage, until unbound answers again."""
        t = time.monotonic()
        action()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.sec.proc is None or self.sec.proc.poll() is not None:
                self.st.fail("unbound exited during %s" % what)
                raise SystemExit(1)
            r = self.sec.control("status", check=False, timeout=10)
            if r.returncode == 0 and self.sec.serial(NSD_ZONE) is not None:
                break
            time.sleep(0.05)
        else:
            self.st.fail("unbound does not answer after %s" % what)
        with self.st.lock:
            self.st.outages.append((t, time.monotonic(), what))
        self.st.count(what, t)

    def update_nsd(self):
        t = time.monotonic()
        with self.st.lock:
            serial = self.st.published[NSD_ZONE] + 1
            self.st.published[NSD_ZONE] = serial
        write_zone(self.nsd.zonefile(NSD_ZONE), NSD_ZONE, serial, NAMES, pairs=True)
        self.nsd.reload({NSD_ZONE: serial})
        notify(self.sec.port, NSD_ZONE)
        self.st.count("nsd update (AXFR)", t)

    def update_knot(self):
        t = time.monotonic()
        self.knot_updates += 1
        vary = NAMES if self.knot_updates % 4 == 0 else KNOT_VARY
        with self.st.lock:
            serial = self.st.published[KNOT_ZONE] + 1
            self.st.knot_vary[serial] = vary
            self.st.published[KNOT_ZONE] = serial
        write_zone(self.knot.zonefile(KNOT_ZONE), KNOT_ZONE, serial, NAMES,
                   fixed=True, vary=vary)
        self.knot.reload({KNOT_ZONE: serial})
        notify(self.sec.port, KNOT_ZONE)
        self.st.count("knot update (IXFR, %s)" % (
            "every name" if vary == NAMES else "%d names" % vary), t)

    def notify_storm(self):
        t = time.monotonic()
        for _ in range(100):
            for zone in (NSD_ZONE, KNOT_ZONE):
                notify(self.sec.port, zone, timeout=0.5)
        self.st.count("NOTIFY storm (200)", t)

    def control(self):
        t = time.monotonic()
        sec, rnd = self.sec, self.rnd
        zone = rnd.choice((NSD_ZONE, KNOT_ZONE))
        cmd = rnd.choice(("stats", "stats_noreset", "flush_zone", "dump_load",
                          "auth_zone_reload", "auth_zone_transfer",
                          "list_auth_zones"))
        if cmd in ("stats", "stats_noreset"):
            check_stats(self.st, sec.control(cmd).stdout)
        elif cmd == "flush_zone":
            sec.control("flush_zone", WILD_ZONE)
        elif cmd == "dump_load":
            dump_start = t
            dump = sec.control("dump_cache").stdout
            self.st.count("unbound-control dump_cache", t)
            t = time.monotonic()
            r = subprocess.run([sec.bin("unbound-control"), "-c", sec.conf,
                                "load_cache"], input=dump, capture_output=True,
                               text=True, timeout=60)
            if r.returncode != 0 or "ok" not in r.stdout:
                self.st.fail("load_cache: %s%s" % (r.stdout, r.stderr))
            cmd = "load_cache"
            with self.st.lock:
                self.st.dump_kb = max(self.st.dump_kb, len(dump) // 1024)
                self.st.dumps.append((dump_start, time.monotonic()))
        elif cmd in ("auth_zone_reload", "auth_zone_transfer"):
            sec.control(cmd, zone)
        else:
            sec.control(cmd)
        self.st.count("unbound-control " + cmd, t)

    def kill_restart(self):
        self.sec.kill()
        with self.st.lock:
            self.st.epoch += 1
            for zone in self.st.served:
                self.st.served[zone] = file_serial(self.sec.zonefile(zone)) or 1
        self.sec.start(wrapper=SAN_ENV)

    def run(self):
        d = self.duration
        plan = sorted([(0.2 * d, "SIGHUP"), (0.3 * d, "reload"),
                       (0.5 * d, "kill -9 and restart"), (0.65 * d, "SIGHUP"),
                       (0.8 * d, "reload"), (0.9 * d, "SIGHUP")])
        start = time.monotonic()
        nexts = {"nsd": 5, "knot": 3, "storm": 20, "control": 2}
        every = dict(nexts)
        while True:
            now = time.monotonic() - start
            if now >= d:
                return
            if plan and now >= plan[0][0]:
                what = plan.pop(0)[1]
                if what == "SIGHUP":
                    self.outage(what, lambda: self.sec.proc.send_signal(signal.SIGHUP))
                elif what == "reload":
                    self.outage(what, lambda: self.sec.control("reload"))
                else:
                    self.outage(what, self.kill_restart)
                continue
            for job, fn in (("nsd", self.update_nsd), ("knot", self.update_knot),
                            ("storm", self.notify_storm), ("control", self.control)):
                if now >= nexts[job]:
                    nexts[job] += every[job]
                    fn()
            if self.sec.proc.poll() is not None:
                self.st.fail("unbound exited (status %s)" % self.sec.proc.returncode)
                return
            time.sleep(0.1)


def dnsperf_names(path, rnd):
    """A dnsperf query file: random labels under the wildcard (a cache miss
    each, until dnsperf comes round again), and 1 in 5 one of 100 names
    that stay cached."""
    with open(path, "w") as f:
        for i in range(50000):
            if i % 5 == 0:
                f.write("hot%d.%s A\n" % (rnd.randrange(100), WILD_ZONE))
            else:
                f.write("r%d.%s A\n" % (rnd.randrange(1 << 30), WILD_ZONE))


def in_dump(st, t, lat):
    """Whether a query sent at t and answered lat s later (or lost: the
    probe's timeout is 1 s) overlapped a dump_cache + load_cache."""
    return any(t <= e and t + (lat if lat >= 0 else 1.0) >= s
               for s, e in st.dumps)


def probe_stalls(st, path):
    """The probe's queries outside planned outages: (count, worst latency
    in s, lost, worst overall, worst while a cache dump ran); prints each
    one lost or over its limit (DUMP_STALL while a dump_cache +
    load_cache ran, else STALL), with the actions that ran then."""
    n, worst, lost, worst_all, worst_dump = 0, 0.0, 0, 0.0, 0.0
    with open(path) as f:
        for line in f:
            sent, lat, _ = line.split()
            t, lat = int(sent) / 1e6, int(lat) / 1e6
            if lat >= 0:
                worst_all = max(worst_all, lat)
            if in_outage(st, t):
                continue
            n += 1
            dump = in_dump(st, t, lat)
            if lat < 0:
                lost += 1
            elif dump:
                worst_dump = max(worst_dump, lat)
            else:
                worst = max(worst, lat)
            if lat < 0 or lat > (DUMP_STALL if dump else STALL):
                ops = [w for s, e, w in st.oplog if s - 0.1 <= t + max(lat, 1) and t <= e]
                print("probe: query at %.2fs %s; actions then: %s" % (
                    t - T0, "lost" if lat < 0 else "%.0f ms" % (lat * 1e3),
                    ", ".join(ops) or "none"))
    return n, worst, lost, worst_all, worst_dump


def rss_trend(st):
    """Per lifetime: the highest resident kB in the second and the last
    quarter (the first half is warm-up, with the caches filling)."""
    out = []
    for epoch in sorted({e for _, e, _ in st.rss}):
        rows = [(t, kb) for t, e, kb in st.rss if e == epoch]
        if len(rows) < 8:
            continue
        t0, t1 = rows[0][0], rows[-1][0]
        q = (t1 - t0) / 4
        mid = max((kb for t, kb in rows if t0 + q <= t < t0 + 2 * q), default=0)
        last = max((kb for t, kb in rows if t >= t0 + 3 * q), default=0)
        out.append((epoch, mid, last))
    return out


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    ap.add_argument("--duration", type=int, default=180)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--report")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    st = State()
    with tempfile.TemporaryDirectory(prefix="steady-soak-") as tmp:
        probe_bin = build_probe(tmp)
        nsd = Primary(os.path.join(tmp, "nsd"), [NSD_ZONE])
        knot = KnotPrimary(os.path.join(tmp, "knot"), [KNOT_ZONE])
        write_zone(nsd.zonefile(NSD_ZONE), NSD_ZONE, 1, NAMES, pairs=True)
        write_zone(knot.zonefile(KNOT_ZONE), KNOT_ZONE, 1, NAMES, fixed=True,
                   vary=KNOT_VARY)
        wildfile = os.path.join(tmp, "wild.zone")
        with open(wildfile, "w") as f:
            f.write(WILD_TEXT)
        extra = ("\tmsg-cache-size: 256k\n\trrset-cache-size: 512k\n"
                 "\tmsg-cache-slabs: 2\n\trrset-cache-slabs: 2\n"
                 "auth-zone:\n\tname: \"%s\"\n\tzonefile: \"%s\"\n"
                 "\tfor-downstream: no\n\tfor-upstream: yes" % (WILD_ZONE, wildfile))
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"),
                        {NSD_ZONE: nsd.port, KNOT_ZONE: knot.port},
                        [NSD_ZONE, KNOT_ZONE], threads=2, io_thread=True,
                        extra=extra)
        names = os.path.join(tmp, "dnsperf.names")
        dnsperf_names(names, rnd)
        procs = []
        done = threading.Event()
        checker = Checker(st, sec, random.Random(a.seed + 1))
        mon = threading.Thread(target=monitor, args=(st, sec, done), daemon=True)
        try:
            nsd.start({NSD_ZONE: 1})
            knot.start({KNOT_ZONE: 1})
            sec.start(wrapper=SAN_ENV)
            for zone in (NSD_ZONE, KNOT_ZONE):
                if not sec.wait_serial(zone, 1, timeout=120):
                    st.fail("%s serial 1 not served and written" % zone)
                    raise SystemExit(1)
            probe_out = os.path.join(tmp, "probe.txt")
            procs.append(subprocess.Popen(
                [probe_bin, "-p", str(sec.port), "-q", "h1." + NSD_ZONE,
                 "-r", "100", "-n", "16", "-d", str(a.duration), "-t", "1000",
                 "-o", probe_out], stdout=subprocess.PIPE, text=True))
            procs.append(subprocess.Popen(
                ["dnsperf", "-s", "127.0.0.1", "-p", str(sec.port), "-d", names,
                 "-l", str(a.duration), "-Q", "800", "-c", "4", "-t", "1"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
            checker.start()
            mon.start()
            Controller(st, sec, nsd, knot, rnd, tmp, a.duration).run()
            checker.done.set()
            checker.join(10)
            outs = [p.communicate(timeout=120)[0] for p in procs]
            done.set()
            mon.join(10)
            rc = sec.stop(timeout=120)
            if rc != 0:
                st.fail("unbound exited with status %s" % rc)
            log = sec.read_log()
            reports = [l for l in log.splitlines() if SANITIZER.search(l)]
            for l in reports[:20]:
                st.fail("sanitizer: " + l)
            n, worst, lost, worst_all, worst_dump = probe_stalls(st, probe_out)
            if lost or worst > STALL or worst_dump > DUMP_STALL:
                st.fail("probe: %d of %d queries outside outages lost, worst "
                        "answer %.0f ms (limit %.0f), worst while a cache "
                        "dump ran %.0f ms (limit %.0f)" % (
                            lost, n, worst * 1e3, STALL * 1e3,
                            worst_dump * 1e3, DUMP_STALL * 1e3))
            trend = rss_trend(st)
            for epoch, mid, last in trend:
                if last > mid * 1.15 and last - mid > 16384:
                    st.fail("RSS of lifetime %d grew from %d kB to %d kB "
                            "after warm-up" % (epoch, mid, last))
            perf = re.findall(r"Queries (sent|completed|lost):\s+(\d+)", outs[1])
        finally:
            done.set()
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            sec.kill()
            nsd.stop()
            knot.stop()
    summary = report(a, st, n, worst, lost, worst_all, worst_dump, trend, perf)
    print(summary)
    if a.report:
        with open(a.report, "w") as f:
            f.write(summary)
    print("soak: %s" % ("PASS" if not st.fails else "FAIL"))
    for f in st.fails:
        print("  " + f)
    return 1 if st.fails else 0


def report(a, st, n, worst, lost, worst_all, worst_dump, trend, perf):
    lines = ["soak of %d s, seed %d" % (a.duration, a.seed), "",
             "| action | count | longest (s) |", "|---|---|---|"]
    for what, c in sorted(st.ops.items()):
        longest = max(e - s for s, e, w in st.oplog if w == what)
        lines.append("| %s | %d | %.2f |" % (what, c, longest))
    lines += ["", "- answers checked: %d (wrong: %d; unanswered, not judged: %d)"
              % (st.answers, st.wrong, st.unanswered),
              "- largest dump_cache: %d kB" % st.dump_kb,
              "- zonefile checks: %d; last serials on disk: %s" % (
                  st.disk_checks, ", ".join("%s %d" % kv for kv in st.disk.items())),
              "- serials published: %s" % ", ".join(
                  "%s %d" % kv for kv in st.published.items()),
              "- dnsperf: %s" % ", ".join("%s %s" % kv for kv in perf),
              "- probe (100/s, h1.%s): %d queries outside outages, %d lost, "
              "worst %.1f ms (%.1f ms while a dump_cache + load_cache ran); "
              "worst including outages %.1f ms" % (
                  NSD_ZONE, n, lost, worst * 1e3, worst_dump * 1e3, worst_all * 1e3),
              "- maximum RSS: %d MB; per lifetime, highest in the second and "
              "the last quarter: %s" % (
                  max((kb for _, _, kb in st.rss), default=0) // 1024,
                  "; ".join("%d: %d -> %d MB" % (e, m // 1024, l // 1024)
                            for e, m, l in trend)),
              "- planned outages: %s" % ", ".join(
                  "%s %.2f s" % (w, e - s) for s, e, w in st.outages),
              "- failures: %d" % len(st.fails), ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
