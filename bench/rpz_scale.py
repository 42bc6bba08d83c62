#!/usr/bin/env python3
"""RPZ feeds at scale (issue 44): an RPZ of --names QNAME triggers (and
one rpz-ip and one rpz-nsdname trigger per 1000 of them) served by Knot
on loopback, updated --updates times, each update replacing the next
size of --sizes triggers (in turn: 1000, 10000, 1000, ...), one every
--interval seconds. Each build (stock, fork: one after the other, never
two at once) takes the zone as a secondary in an rpz: clause with a
zonefile, --threads threads. Three fixed-rate probes
(testcode/harness/dnsprobe.c, --rate queries per second each) ask all
the time: a trigger that stays, a name that no trigger matches and is
answered from the cache (www.cached.example., from Knot), and a cache
miss each time (a random label under miss.example., Knot's wildcard).

The changes go to Knot as DNS UPDATE messages (RFC 2136) of at most 500
replaced triggers each, so a 10,000-change update is 20 of Knot's
serials and one IXFR of 20 differences for the secondary; knotc's
zone-set took 12 ms per record here (2000 in 23.8 s), too slow for
10,000 changes a minute. Stock Unbound makes a full transfer after
every 5 IXFRs of an RPZ (the fork does not since its patch 0029); the
report names such updates AXFR.

Per update, from the NOTIFY for 'interval' seconds (the window): the
probes' worst and p99.9 latency and lost queries (no answer in 2 s), the
server's CPU (/proc/PID/stat), its RSS before and peak (VmHWM, reset at
the window's start), bytes it wrote to disk (/proc/PID/io write_bytes),
and the time until the new triggers answer. Then the start-up: the
server stopped and started again on its zonefile, the time until the
staying trigger answers, and unbound-checkconf's time. Each server runs
in a cgroup memory limit (--mem-limit-gb, Knot --knot-mem-limit-gb); a
build that hits it is reported as killed by the limit.

usage: flock build/.bench.lock bench/rpz_scale.py [--names 10000000]
       [--updates 60] [--sizes 1000,10000] [--interval 60] [--rate 300]
       [--threads 2] [--builds stock=build/stock,fork=build/fork]
       [--mem-limit-gb 16] [--knot-mem-limit-gb 6] [--axfr] [--dir DIR]
       [--out FILE] [--raw FILE]
  --axfr  Knot keeps no journal (journal-content: none), so it answers
         every IXFR request with the whole zone, as NSD 4.6 does: every
         update is a full transfer of a zone the secondary holds
  --dir  where the zonefiles go (default: a temporary directory under
         build/, on the disk that write_bytes counts)
  --raw  one line per build and update, tab-separated, for plots
  --builds  LABEL=DIR of unbound builds, or LABEL=bind (BIND 9,
         response-policy) or LABEL=pdns (pdns-recursor, rpzPrimary) as
         peers on the same feed; the checkconf column is
         unbound-checkconf, named-checkconf -z, or none for pdns.
         LABEL=DIR+journal runs that build with auth-zone-journal: yes
         (patch 0053: IXFRs appended to <zonefile>.ixfr); LABEL=DIR+nice
         (after +journal, if both) with its auth-zone I/O thread at nice
         10 from when the first zonefile is written (an experiment)"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import dns.message
import dns.query
import dns.rcode
import dns.update

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "testcode"))
from harness.load import (Probe, build_probe, cpu_seconds, latency_summary,  # noqa: E402
                          proc_status_kb, write_bytes)
from harness.memcap import MemoryCap  # noqa: E402
from harness.server import free_port, stop_pid  # noqa: E402
from harness.stats import med  # noqa: E402
from harness.zone import (KnotPrimary, Secondary, answers_address,  # noqa: E402
                          list_auth_zone, notify, rpz_clause, soa_serial,
                          thread_wakeups)

ZONE = "rpz.example."
CACHED = "cached.example."
MISS = "miss.example."
TRIGGER_A = "192.0.2.1"
KEEP = "keep.bench."
PROBES = (("trigger", KEEP), ("cached", "www." + CACHED), ("miss", "%r." + MISS))
PER_MESSAGE = 500


class Feed:
    """The RPZ: triggers t<i>.bench, of which each update replaces the
    oldest block by u<n>-<j>.bench, n counting the updates of all builds
    (so that every build's new names are new); the serial is Knot's (one
    per UPDATE message)."""

    def __init__(self, names):
        self.names = names
        self.next_old = 0       # the oldest t<i> not replaced yet
        self.serial = 1
        self.count = 0          # updates so far, of all builds

    def write(self, path):
        """The zonefile of serial 1, written in pieces (10^7 lines)."""
        extra = max(1, self.names // 1000)
        with open(path, "w") as f:
            f.write("$ORIGIN %s\n$TTL 3600\n@ IN SOA ns.%s hostmaster.%s 1 3600 600 "
                    "86400 300\n@ IN NS ns\nns IN A 127.0.0.1\n%s IN A %s\n" % (
                        ZONE, ZONE, ZONE, KEEP.rstrip("."), TRIGGER_A))
            for i in range(extra):
                # rpz-ip: 10.x.y.z/32; rpz-nsdname: ns<i>.evil.
                f.write("32.%d.%d.%d.10.rpz-ip IN CNAME .\n" % (
                    i & 255, (i >> 8) & 255, (i >> 16) & 255))
                f.write("ns%d.evil.rpz-nsdname IN CNAME .\n" % i)
            step = 100000
            for start in range(0, self.names, step):
                f.write("".join("t%d.bench IN A %s\n" % (i, TRIGGER_A)
                                for i in range(start, min(start + step, self.names))))

    def update(self, knot_port, size):
        """Replace size triggers on Knot; returns (last new name, serial)."""
        self.count += 1
        k = self.count
        last = None
        done = 0
        while done < size:
            n = min(PER_MESSAGE, size - done)
            u = dns.update.UpdateMessage(ZONE)
            for j in range(done, done + n):
                u.delete("t%d.bench" % ((self.next_old + j) % self.names), "A")
                last = "u%d-%d.bench" % (k, j)
                u.add(last, 3600, "A", TRIGGER_A)
            r = dns.query.tcp(u, "127.0.0.1", port=knot_port, timeout=120)
            if r.rcode() != dns.rcode.NOERROR:
                raise RuntimeError("Knot refused an UPDATE: %s" % dns.rcode.to_text(r.rcode()))
            done += n
        self.next_old = (self.next_old + size) % self.names
        serial = soa_serial(knot_port, ZONE)
        if serial is None or serial == self.serial:
            raise RuntimeError("the update left Knot's serial at %s (more updates than "
                               "--names has triggers?)" % serial)
        self.serial = serial
        return last + ".", serial


def knot_primary(workdir, feed, limit, timeout, axfr=False):
    """Knot serving the RPZ, cached.example. and miss.example., taking
    UPDATEs from 127.0.0.1, in its memory cgroup; with axfr, without a
    journal (every transfer it sends is the whole zone)."""
    knot = KnotPrimary(workdir, [ZONE, CACHED, MISS])
    with open(knot.conf) as f:
        conf = f.read().replace("    action: transfer", "    action: [transfer, update]")
    if axfr:
        conf = conf.replace("journal-content: changes", "journal-content: none")
    else:
        # with zonefile-sync -1 Knot keeps every change in its journal,
        # and at its default limit (100 MiB) it refused the UPDATEs of a
        # 10^7 run after about 2,160 serials ("not enough space provided")
        conf = conf.replace("journal-content: changes",
                            "journal-content: changes\n    journal-max-usage: 4G")
    with open(knot.conf, "w") as f:
        f.write(conf)
    feed.write(knot.zonefile(ZONE))
    for zone, body in ((CACHED, "www IN A 198.51.100.1\n"), (MISS, "* IN A 198.51.100.2\n")):
        with open(knot.zonefile(zone), "w") as f:
            f.write("$ORIGIN %s\n$TTL 3600\n@ IN SOA ns.%s h.%s 1 3600 600 86400 300\n"
                    "@ IN NS ns\nns IN A 127.0.0.1\n%s" % (zone, zone, zone, body))
    cap = MemoryCap("steady-rpz-scale-knot", limit)
    knot.out = open(os.path.join(knot.dir, "knotd.out"), "w")
    knot.proc = subprocess.Popen(cap.wrap(["knotd", "-c", knot.conf]),
                                 stdout=knot.out, stderr=subprocess.STDOUT)
    knot.pid = knot.proc.pid
    knot.wait_serials({ZONE: 1, CACHED: 1, MISS: 1}, timeout)
    return knot, cap


def wait_answer(ub, name, timeout):
    """seconds until ub answers name with the trigger, or None; to 30 ms
    (a name that no trigger matches yet waits for the closed root port,
    so each try waits 20 ms at most)"""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if answers_address(ub.port, name, TRIGGER_A, 0.02):
            return time.monotonic() - t0
        if ub.proc.poll() is not None:
            return None
        time.sleep(0.01)
    return None


def configure(build, rundir, knot, threads):
    """The server of a --builds entry: unbound of a build directory
    (with "+journal": auth-zone-journal: yes; "+nice": io_nice 10, for
    renice_io_thread), or BIND ("bind") or pdns-recursor ("pdns")."""
    if build == "bind":
        return BindRpz(rundir, knot, threads)
    if build == "pdns":
        return PdnsRpz(rundir, knot, threads)
    nice = build.endswith("+nice")
    if nice:
        build = build[:-len("+nice")]
    journal = build.endswith("+journal")
    if journal:
        build = build[:-len("+journal")]
    ub = Secondary(build, rundir, knot.port, [ZONE], threads=threads,
                   extra="\trrset-cache-size: 256m\n\tmsg-cache-size: 128m\n"
                         "stub-zone:\n\tname: \"%s\"\n\tstub-addr: 127.0.0.1@%d\n"
                         "stub-zone:\n\tname: \"%s\"\n\tstub-addr: 127.0.0.1@%d" % (
                             CACHED, knot.port, MISS, knot.port))
    rpz_clause(ub, ZONE, "\tauth-zone-journal: yes\n" if journal else "")
    ub.checkconf = [ub.bin("unbound-checkconf"), ub.conf]
    ub.io_nice = 10 if nice else 0
    return ub


def renice_io_thread(ub, timeout=30):
    """Set the nice value of the auth-zone I/O thread of ub to ub.io_nice
    (if it has one): the thread other than the main one that waits in
    poll, on its command pipe (the workers wait in epoll)."""
    nice = getattr(ub, "io_nice", 0)
    if not nice:
        return
    pid = ub.proc.pid
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tids = [tid for tid, (_, wchan) in thread_wakeups(pid).items()
                if tid != pid and wchan.startswith("poll_schedule")]
        if len(tids) == 1:
            os.setpriority(os.PRIO_PROCESS, tids[0], nice)
            print("thread %d of %d: nice %d" % (tids[0], pid, nice), flush=True)
            return
        time.sleep(0.5)
    raise RuntimeError("no auth-zone I/O thread found in poll to renice")


class PeerRpz:
    """Another resolver as the RPZ's secondary, with Secondary's
    start(wrapper, timeout), stop(timeout), kill(), proc, port,
    zonefile(ZONE) and checkconf (a command that loads the
    configuration and its zones, or None). Its zonefile is where it
    keeps the RPZ, so that the restart starts from it."""

    kind = "?"

    def __init__(self, rundir, knot, threads):
        self.dir = os.path.abspath(rundir)
        self.knot, self.threads = knot, threads
        self.port = free_port()
        self.proc = None
        self.out = None
        self.checkconf = None

    def zonefile(self, zone):
        return os.path.join(self.dir, "rpz.db")

    def command(self):
        raise NotImplementedError

    def start(self, wrapper=None, timeout=60):
        self.out = open(os.path.join(self.dir, "out.log"), "a")
        self.proc = subprocess.Popen((wrapper or []) + self.command(), cwd=self.dir,
                                     stdout=self.out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited at start:\n%s" % (self.kind, self.read_log()))
            try:
                dns.query.udp(dns.message.make_query("www." + CACHED, "A"), "127.0.0.1",
                              port=self.port, timeout=0.5)
                return self
            except Exception:
                time.sleep(0.2)
        self.kill()
        raise RuntimeError("%s did not answer:\n%s" % (self.kind, self.read_log()))

    def read_log(self):
        with open(os.path.join(self.dir, "out.log"), errors="replace") as f:
            return f.read()[-3000:]

    def stop(self, timeout=60):
        if self.proc is None:
            return None
        rc = stop_pid(self.proc, timeout)
        self.out.close()
        self.proc = None
        if rc is None:
            raise RuntimeError("%s did not stop within %ds" % (self.kind, timeout))
        return rc

    # SIGKILL by PID, as for unbound (it uses only proc and out)
    kill = Secondary.kill


class BindRpz(PeerRpz):
    """BIND 9 (named -f, -n threads): the RPZ as a secondary zone from
    Knot in response-policy, min-update-interval 0 so that each update
    is applied when it comes (its default batches them for 60 s); the
    probe zones forwarded to Knot, everything else to a closed port;
    servfail-ttl 0, so that asking for a new trigger before it is
    applied (the closed port: SERVFAIL) does not cache the SERVFAIL."""

    kind = "bind"

    def __init__(self, rundir, knot, threads):
        super().__init__(rundir, knot, threads)
        self.conf = os.path.join(self.dir, "named.conf")
        fwd = "type forward; forward only; forwarders { 127.0.0.1 port %d; };" % knot.port
        with open(self.conf, "w") as f:
            f.write("""options {
	directory "%s";
	pid-file "%s/named.pid";
	listen-on port %d { 127.0.0.1; };
	listen-on-v6 { none; };
	recursion yes;
	allow-query { any; };
	dnssec-validation no;
	notify no;
	max-cache-size 512m;
	servfail-ttl 0;
	response-policy { zone "%s" min-update-interval 0; } qname-wait-recurse no;
};
controls { };
zone "%s" { type secondary; primaries { 127.0.0.1 port %d; }; file "rpz.db";
	allow-notify { 127.0.0.1; }; };
zone "%s" { %s };
zone "%s" { %s };
zone "." { type forward; forward only; forwarders { 127.0.0.1 port 9; }; };
""" % (self.dir, self.dir, self.port, ZONE, ZONE, knot.port, CACHED, fwd, MISS, fwd))
        self.checkconf = ["named-checkconf", "-z", self.conf]

    def command(self):
        return ["named", "-g", "-n", str(self.threads), "-c", self.conf]


class PdnsRpz(PeerRpz):
    """pdns-recursor 4.8 (--threads): the RPZ by rpzPrimary from Knot,
    which it asks for the SOA every second (refresh=1; 4.8 takes no
    NOTIFY for an RPZ), keeping a dump that the restart seeds from; the
    probe zones forwarded to Knot, everything else to a closed port;
    packetcache-servfail-ttl 0 (as BIND's servfail-ttl)."""

    kind = "pdns"
    takes_notify = False

    def command(self):
        lua = os.path.join(self.dir, "rpz.lua")
        with open(lua, "w") as f:
            f.write('rpzPrimary({"127.0.0.1:%d"}, "%s", { refresh = 1, dumpFile = "%s",'
                    ' seedFile = "%s" })\n' % (self.knot.port, ZONE, self.zonefile(ZONE),
                                              self.zonefile(ZONE)))
        open(os.path.join(self.dir, "recursor.conf"), "w").close()
        return ["pdns_recursor", "--config-dir=" + self.dir, "--socket-dir=" + self.dir,
                "--daemon=no", "--disable-syslog", "--loglevel=4", "--quiet=yes",
                "--local-address=127.0.0.1", "--local-port=%d" % self.port,
                "--query-local-address=127.0.0.1", "--threads=%d" % self.threads,
                "--dnssec=off", "--security-poll-suffix=", "--packetcache-servfail-ttl=0",
                "--forward-zones=%s=127.0.0.1:%d,%s=127.0.0.1:%d" % (
                    CACHED.rstrip("."), self.knot.port, MISS.rstrip("."), self.knot.port),
                "--forward-zones-recurse=.=127.0.0.1:9",
                "--lua-config-file=" + lua]


def window_results(res, knot, log0, probes, idle, windows):
    """Stop the probes and give each update of res its transfer kind (from
    Knot's log after offset log0) and its window's worst, p99.9 and lost
    answers, and res the worst answers of the idle window."""
    kinds = knot_transfers(knot, log0)
    for u in res["updates"]:
        u["transfer"] = kinds.get(u["serial"], "none")
    for kind, p in probes:
        p.stop()
    recs = {kind: p.records() for kind, p in probes}
    # the worst answers without an update: what the machine gives
    if idle is not None:
        res["idle_max"] = [latency_summary(recs[kind], idle[0], idle[1])["max"]
                           for kind, _ in PROBES]
    for u, (w0, w1) in zip(res["updates"], windows):
        for kind, _ in PROBES:
            s = latency_summary(recs[kind], w0, w1)
            u["max_" + kind] = s["max"]
            u["p999_" + kind] = s["p999"]
            u["lost_" + kind] = s["lost"]


def one_build(label, build, feed, knot, a, probe_exe, tmp):
    """The updates and the start-up for one build; returns its results."""
    res = {"label": label, "updates": [], "killed": False}
    rundir = tempfile.mkdtemp(prefix="rpz-scale-%s-" % label, dir=tmp)
    ub = configure(build, rundir, knot, a.threads)
    cap = MemoryCap("steady-rpz-scale-" + label, a.mem_limit_gb << 30)
    probes = []
    log0, idle, windows = 0, None, []
    try:
        t0 = time.monotonic()
        ub.start(wrapper=cap.wrap([]), timeout=a.load_timeout)
        if wait_answer(ub, KEEP, a.load_timeout) is None:
            res["killed"] = cap.oom_kills() > 0
            raise RuntimeError("%s: no RPZ answer after %d s%s" % (
                label, a.load_timeout, " (killed by the memory limit)" if res["killed"] else ""))
        res["first_answer"] = time.monotonic() - t0
        pid = ub.proc.pid
        # the zonefile of the first transfer, before the probes start
        t1 = time.monotonic()
        while not os.path.exists(ub.zonefile(ZONE)) and time.monotonic() - t1 < a.load_timeout:
            time.sleep(0.2)
        res["loaded_rss"] = proc_status_kb(pid, "VmRSS") / 1024.0
        res["written_at"] = time.monotonic() - t0
        renice_io_thread(ub)
        # the feed's UPDATEs to Knot come between the windows (tens of
        # seconds for 100,000 changes), so the probes run long enough
        # for 10 minutes of them per update; window_results stops them
        seconds = (a.updates + 1) * a.interval + 60 + a.updates * 600
        for kind, name in PROBES:
            p = Probe(probe_exe, ub.port, name, a.rate, seconds,
                      os.path.join(rundir, "probe-%s.txt" % kind), sockets=16)
            probes.append((kind, p.start()))
        # a window without an update, for the CPU baseline (the probes
        # run in every window)
        cpu_idle0 = cpu_seconds(pid)
        idle = (time.monotonic(), time.monotonic() + a.interval)
        time.sleep(a.interval)
        res["idle_cpu"] = cpu_seconds(pid) - cpu_idle0
        log0 = knot_log_size(knot)
        for k in range(1, a.updates + 1):
            size = a.sizes[(k - 1) % len(a.sizes)]
            last, serial = feed.update(knot.port, size)
            if ub.proc.poll() is not None:
                raise RuntimeError("%s exited" % label)
            rss0 = proc_status_kb(pid, "VmRSS")
            with open("/proc/%d/clear_refs" % pid, "w") as f:
                f.write("5")
            cpu0, w0 = cpu_seconds(pid), write_bytes(pid)
            start = time.monotonic()
            if getattr(ub, "takes_notify", True):
                notify(ub.port, ZONE)
            applied = wait_answer(ub, last, a.interval)
            rest = start + a.interval - time.monotonic()
            if rest > 0:
                time.sleep(rest)
            try:
                if ub.proc.poll() is not None:
                    raise RuntimeError("exited")
                u = {"k": k, "size": size, "serial": serial, "applied": applied,
                     "cpu": cpu_seconds(pid) - cpu0, "rss0": rss0 / 1024.0,
                     "peak": proc_status_kb(pid, "VmHWM") / 1024.0,
                     "rss1": proc_status_kb(pid, "VmRSS") / 1024.0,
                     "written": (write_bytes(pid) - w0) / 1e6,
                     "apply_cpu": apply_cpu(ub)}
            except (RuntimeError, OSError):
                # a process killed as the window ends is a zombie, whose
                # status has no VmHWM: say that it exited, and how it died
                try:
                    ub.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    raise
                res["killed"] = cap.oom_kills() > 0
                peak = cap.peak()
                raise RuntimeError("%s exited during update %d (%d changes), %s%s" % (
                    label, k, size, "applied after %.2f s" % applied if applied
                    else "not applied",
                    " (killed by the memory limit, its cgroup's peak %.0f MB)" % (
                        peak / 1048576.0) if res["killed"] and peak else
                    " (killed by the memory limit)" if res["killed"] else ""))
            res["updates"].append(u)
            windows.append((start, start + a.interval))
            print("%s update %d (%d): applied %s s, cpu %.2f s, rss %.0f -> peak %.0f MB, "
                  "wrote %.1f MB" % (label, k, size, "%.2f" % applied if applied else "never",
                                     u["cpu"], u["rss0"], u["peak"], u["written"]), flush=True)
        window_results(res, knot, log0, probes, idle, windows)
        probes = []
        # start-up from the zonefile
        ub.stop(timeout=600)
        t0 = time.monotonic()
        if ub.checkconf:
            r = subprocess.run(ub.checkconf, capture_output=True, text=True)
            res["checkconf"] = time.monotonic() - t0
            res["checkconf_ok"] = r.returncode == 0
        t0 = time.monotonic()
        ub.start(wrapper=cap.wrap([]), timeout=a.load_timeout)
        if wait_answer(ub, KEEP, a.load_timeout) is not None:
            res["restart"] = time.monotonic() - t0
    except (RuntimeError, subprocess.SubprocessError, OSError) as e:
        # one line for the report's table; the whole text on stderr;
        # the other builds still run
        res["error"] = " ".join(str(e).split())[:300]
        print(str(e), file=sys.stderr, flush=True)
        # the updates before it are reported too (a build killed by its
        # memory limit at update 2 still has update 1's window)
        if probes:
            window_results(res, knot, log0, probes, idle, windows)
            probes = []
    finally:
        for kind, p in probes:
            p.stop()
        if ub.proc is not None:
            try:
                ub.stop(timeout=600)
            except RuntimeError:
                ub.kill()
        res["killed"] = res["killed"] or cap.oom_kills() > 0
        cap.remove()
    return res


def apply_cpu(ub):
    """The CPU time of the zone's last apply, s (the fork's per-zone
    health in list_auth_zones: the auth-zone I/O thread's CPU time for
    the apply and the journal append or zonefile write it makes), or
    None for a build or peer without it."""
    if not isinstance(ub, Secondary) or getattr(ub, "no_apply_cpu", False):
        return None
    try:
        h = list_auth_zone(ub, ZONE)
    except subprocess.TimeoutExpired:
        # stock serves unbound-control on worker 0, which its own apply
        # and zonefile write keep busy (its forced AXFR): no figure, and
        # the run goes on
        return None
    if h is None:
        return None
    if "cpu" not in h:
        # the zone's line without the per-zone health: a build without
        # it (stock) is not asked again, so that its stalls do not delay
        # the next window
        ub.no_apply_cpu = True
        return None
    return float(h["cpu"])


def knot_log_size(knot):
    return os.path.getsize(os.path.join(knot.dir, "knot.log"))


def knot_transfers(knot, offset):
    """{serial: "AXFR" or "IXFR"}: how Knot sent the RPZ at each serial
    since offset of its log ("AXFR, outgoing, ..., started, serial S",
    "IXFR, outgoing, ..., started, serial R -> S"). The serials are
    Knot's, one per UPDATE message, and go on from build to build, so
    each is one update of one build."""
    with open(os.path.join(knot.dir, "knot.log"), errors="replace") as f:
        f.seek(offset)
        text = f.read()
    kinds = {}
    for line in text.splitlines():
        if "outgoing" not in line or "started" not in line or "[%s]" % ZONE not in line:
            continue
        serial = int(line.rsplit(" ", 1)[1])
        kinds[serial] = "AXFR" if "AXFR, outgoing" in line else "IXFR"
    return kinds


def transfer_kind(u):
    """AXFR when the window had a full transfer, IXFR when only IXFRs,
    none when the secondary did not ask"""
    t = u.get("transfer", "none")
    return "AXFR" if "AXFR" in t else "IXFR" if "IXFR" in t else "none"


def fmt(values, f="%.1f"):
    return med([v for v in values if v is not None], f)


def report(a, results):
    cmd = ("flock build/.bench.lock bench/rpz_scale.py --names %d --updates %d --sizes %s "
           "--interval %d --rate %d --threads %d --builds %s --mem-limit-gb %d "
           "--knot-mem-limit-gb %d%s%s" % (
               a.names, a.updates, ",".join(map(str, a.sizes)), a.interval, a.rate,
               a.threads, a.builds, a.mem_limit_gb, a.knot_mem_limit_gb,
               " --axfr" if a.axfr else "", " --out " + a.out if a.out else ""))
    rows = ["# RPZ feeds at scale: %d triggers, %d updates" % (a.names, a.updates), "",
            "Command: `%s`" % cmd, "",
            "Median (min–max) over the updates of each size; an update's window "
            "is %d s from its NOTIFY. Probes at %d qps each: a trigger, a cached "
            "name, a cache miss. The transfer column says how Knot sent each "
            "update (its log); stock asks AXFR after every 5 IXFRs of an RPZ. "
            "CPU is the server's in the window, with the probes' queries; apply "
            "CPU the fork's own count of its last apply (list_auth_zones: the "
            "I/O thread's CPU time for the apply and its journal append)."
            % (a.interval, a.rate), "",
            "| build | changes | transfer | updates | applied after, s | CPU, s | apply CPU, s | "
            "RSS before, MB | peak, MB | written, MB | worst, ms (trigger / cached / miss) | "
            "p99.9, ms (trigger) | lost (all probes) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for res in results:
        if not res["updates"]:
            rows.append("| %s | | | 0 | %s | | | | | | | | |" % (
                res["label"], res.get("error", "no update ran")))
            continue
        for size, kind in [(z, k) for z in a.sizes for k in ("IXFR", "AXFR", "none")]:
            us = [u for u in res["updates"] if u["size"] == size and transfer_kind(u) == kind]
            if not us:
                continue
            rows.append("| %s | %d | %s | %d | %s | %s | %s | %s | %s | %s | %s / %s / %s | %s | "
                        "%s |" % (
                res["label"], size, kind, len(us), fmt([u["applied"] for u in us], "%.2f"),
                fmt([u["cpu"] for u in us], "%.2f"),
                fmt([u["apply_cpu"] for u in us], "%.3f"),
                fmt([u["rss0"] for u in us], "%.0f"),
                fmt([u["peak"] for u in us], "%.0f"), fmt([u["written"] for u in us]),
                fmt([u.get("max_trigger") for u in us]), fmt([u.get("max_cached") for u in us]),
                fmt([u.get("max_miss") for u in us]), fmt([u.get("p999_trigger") for u in us]),
                fmt([sum(u.get("lost_" + k, 0) for k, _ in PROBES) for u in us], "%.0f")))
    rows += ["", "| build | first answer after start, s | zonefile written after, s | "
             "RSS loaded, MB | bytes per trigger | "
             "idle CPU per window, s | worst answer in the idle window, ms (trigger / cached / miss) | "
             "RSS after update 1 → last, MB | restart from zonefile, s | "
             "checkconf, s | memory limit hit | error |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for res in results:
        us = res["updates"]
        rows.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            res["label"], "%.1f" % res["first_answer"] if "first_answer" in res else "–",
            "%.1f" % res["written_at"] if "written_at" in res else "–",
            "%.0f" % res["loaded_rss"] if "loaded_rss" in res else "–",
            "%.0f" % (res["loaded_rss"] * 1048576 / a.names) if "loaded_rss" in res else "–",
            "%.2f" % res["idle_cpu"] if res.get("idle_cpu") is not None else "–",
            " / ".join("%.1f" % m for m in res["idle_max"]) if res.get("idle_max") else "–",
            "%.0f → %.0f" % (us[0]["rss1"], us[-1]["rss1"]) if us else "–",
            "%.1f" % res["restart"] if res.get("restart") else "–",
            ("%.1f" % res["checkconf"] + ("" if res["checkconf_ok"] else " (failed)"))
            if "checkconf" in res else "–",
            "yes" if res["killed"] else "no", res.get("error", "")))
    return "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--names", type=int, default=10000000)
    ap.add_argument("--updates", type=int, default=60)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--interval", type=int, default=60)
    ap.add_argument("--rate", type=int, default=300)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--builds", default="stock=build/stock,fork=build/fork")
    ap.add_argument("--mem-limit-gb", type=int, default=16)
    ap.add_argument("--knot-mem-limit-gb", type=int, default=6)
    ap.add_argument("--load-timeout", type=int, default=1800)
    ap.add_argument("--axfr", action="store_true")
    ap.add_argument("--dir")
    ap.add_argument("--out")
    ap.add_argument("--raw")
    a = ap.parse_args()
    a.sizes = [int(x) for x in a.sizes.split(",")]
    builds = [(b.split("=", 1)[0], b.split("=", 1)[1]) for b in a.builds.split(",")]
    builds = [(label, b if b in ("bind", "pdns") else os.path.join(TOP, b))
              for label, b in builds]
    base = a.dir or os.path.join(TOP, "build")
    os.makedirs(base, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="rpz-scale-", dir=base) as tmp:
        probe_exe = build_probe(tmp)
        feed = Feed(a.names)
        t0 = time.monotonic()
        knot, kcap = knot_primary(os.path.join(tmp, "knot"), feed,
                                  a.knot_mem_limit_gb << 30, a.load_timeout, a.axfr)
        print("Knot serves %d triggers after %.1f s" % (a.names, time.monotonic() - t0), flush=True)
        try:
            for label, build in builds:
                results.append(one_build(label, build, feed, knot, a, probe_exe, tmp))
        finally:
            knot.stop()
            kcap.remove()
    if a.raw:
        keys = ["k", "size", "transfer", "serial", "applied", "cpu", "apply_cpu", "rss0", "peak",
                "rss1", "written"] + [
            "%s_%s" % (m, k) for k, _ in PROBES for m in ("max", "p999", "lost")]
        with open(a.raw, "w") as f:
            f.write("build\t" + "\t".join(keys) + "\n")
            for res in results:
                for u in res["updates"]:
                    f.write(res["label"] + "\t" + "\t".join(str(u.get(x)) for x in keys) + "\n")
    text = report(a, results)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
