"""Load and latency for Unbound Steady's tests and benchmarks: dnsperf,
the latency probe testcode/harness/dnsprobe.c (one record per query, so
that windows of time can be analysed), and the CPU time of a process."""

import os
import random
import re
import signal
import subprocess

from .server import build_tool
from .stats import pct


def proc_status_kb(pid, key, path=None):
    """A value in kB of /proc/PID/status (VmRSS, VmHWM, ...), or of
    another file of that format, such as /proc/PID/smaps_rollup."""
    path = path or "/proc/%d/status" % pid
    with open(path) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError("no %s in %s" % (key, path))


def write_bytes(pid):
    """The bytes the process caused to be written to storage
    (/proc/PID/io write_bytes; 0 on a file system without a disk)."""
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            if line.startswith("write_bytes:"):
                return int(line.split()[1])
    raise RuntimeError("no write_bytes in /proc/%d/io" % pid)


def cpu_seconds(pid):
    """utime + stime of a process, all its threads, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def dnsperf(port, datafile, seconds, qps=None, clients=8, pid=None,
            outstanding=200, timeout=2, once=False, server="127.0.0.1"):
    """Run dnsperf against server:port with the queries of datafile for
    seconds (at most qps per second when given; with once, each query of
    the file once). Returns a dict: qps, sent, completed, lost, avg_ms,
    max_ms, and cpu_us (CPU time of process pid per completed query;
    NaN without pid)."""
    cmd = ["dnsperf", "-s", server, "-p", str(port), "-d", datafile,
           "-l", str(seconds), "-c", str(clients), "-q", str(outstanding),
           "-t", str(timeout), "-b", "4096"]
    if qps:
        cmd += ["-Q", str(qps)]
    if once:
        cmd += ["-n", "1"]
    cpu0 = cpu_seconds(pid) if pid else 0
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    cpu = cpu_seconds(pid) - cpu0 if pid else float("nan")

    def grab(pat, cast=float):
        m = re.search(pat, out)
        return cast(m.group(1)) if m else float("nan")
    done = grab(r"Queries completed:\s+(\d+)", int)
    return {
        "qps": grab(r"Queries per second:\s+([\d.]+)"),
        "sent": grab(r"Queries sent:\s+(\d+)", int),
        "completed": done,
        "lost": grab(r"Queries lost:\s+(\d+)", int),
        "avg_ms": grab(r"Average Latency \(s\):\s+([\d.]+)") * 1000,
        "max_ms": grab(r"Average Latency \(s\):.*max ([\d.]+)\)") * 1000,
        "cpu_us": cpu / done * 1e6 if done == done and done else float("nan"),
    }


def warm_label(i):
    """The first label of name i of dnsprobe's -w warm set: the 12 hex
    digits of i, least significant first."""
    return "".join("0123456789abcdef"[(i >> (4 * k)) & 15] for k in range(12))


def names_file(path, zone, n=0, random_labels=0, seed=1):
    """Write a dnsperf data file under zone: the n names of dnsprobe's
    warm set (warm_label), or random_labels random 12-hex-digit labels
    (each a cache miss); A queries. Returns path."""
    rnd = random.Random(seed)
    with open(path, "w") as f:
        for i in range(n):
            f.write("%s.%s A\n" % (warm_label(i), zone))
        for _ in range(random_labels):
            f.write("%012x.%s A\n" % (rnd.getrandbits(48), zone))
    return path


def build_probe(d):
    """Compile dnsprobe.c into directory d; returns its path."""
    return build_tool("dnsprobe", d)


class Probe:
    """dnsprobe (exe, from build_probe) sending A queries for name to
    127.0.0.1:port at rate per second from sockets source ports for
    seconds, each lost after timeout_ms; name "%r.ZONE" asks a new random
    label each time, or with warm=N the N names of the warm set in turn. start() runs it in the background, wait() or stop()
    ends it; then summary (dnsprobe's key=value line) and records()
    [(send time s, monotonic clock; latency ms or None if lost)]."""

    def __init__(self, exe, port, name, rate, seconds, path, sockets=64,
                 timeout_ms=2000, warm=0):
        self.path = path
        self.cmd = [exe, "-p", str(port), "-q", name, "-r", str(rate),
                    "-n", str(sockets), "-d", str(seconds),
                    "-t", str(timeout_ms), "-o", path]
        if warm:
            self.cmd += ["-w", str(warm)]
        self.proc = None
        self.summary = {}

    def start(self):
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, text=True)
        return self

    def wait(self, timeout=None):
        out, _ = self.proc.communicate(timeout=timeout)
        self.summary = dict(kv.split("=", 1) for kv in out.split())
        return self.summary

    def stop(self):
        """End the run early (SIGTERM: dnsprobe waits out the outstanding
        queries, then writes its results)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.wait(timeout=30)

    def run(self):
        """start() and wait(): the whole run in the foreground."""
        return self.start().wait()

    def records(self):
        res = []
        with open(self.path) as f:
            for line in f:
                ts, lat, _ = line.split()
                lat = int(lat)
                res.append((int(ts) / 1e6, lat / 1000.0 if lat >= 0 else None))
        return res


def latency_summary(records, t0=None, t1=None):
    """n, lost, p50, p99, p99.9 and max (ms) of the probe records sent in
    [t0, t1) (all when not given)."""
    lats, lost = [], 0
    for t, lat in records:
        if (t0 is not None and t < t0) or (t1 is not None and t >= t1):
            continue
        if lat is None:
            lost += 1
        else:
            lats.append(lat)
    lats.sort()
    return {"n": len(lats) + lost, "lost": lost, "p50": pct(lats, 0.5),
            "p99": pct(lats, 0.99), "p999": pct(lats, 0.999),
            "max": lats[-1] if lats else float("nan")}


def windows(records, seconds, t0=None):
    """latency_summary per window of the given seconds from t0 (default the
    first record): a list of (window start s, summary)."""
    if not records:
        return []
    t0 = records[0][0] if t0 is None else t0
    buckets = {}
    for t, lat in records:
        buckets.setdefault(int((t - t0) // seconds), []).append((t, lat))
    return [(k * seconds, latency_summary(buckets[k])) for k in sorted(buckets)]
