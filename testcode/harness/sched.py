"""Where the CPU goes: per-thread CPU time and run-queue wait of a set of
processes, sampled from /proc/PID/task/TID/schedstat (nanoseconds on a
CPU, nanoseconds runnable but waiting for one) at a fixed interval in a
background thread, so that a benchmark can say which threads ran and
which waited while its latency was bad.

  s = ThreadSampler([("b0", pid0), ("nsd", pid1), ("probes", pid2),
                      ("probes", pid3)]).start()
  ...
  s.stop()
  s.table(t0, t1)    per label: CPU s, run-queue wait s
  s.worst_wait(...)  the longest single wait of one thread

Each label counts its process and all its descendants, found again at
every sample (NSD forks a new server child at every reload). Times are
time.monotonic(), as the probe's records (dnsprobe.c uses
CLOCK_MONOTONIC)."""

import os
import threading
import time


def parents():
    """{pid: parent pid} of every process now."""
    res = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                res[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return res


def family(pid, ppids):
    """pid and all its descendants, from the parents() map ppids."""
    res, todo = [], [pid]
    while todo:
        p = todo.pop()
        res.append(p)
        todo.extend(c for c, pp in ppids.items() if pp == p)
    return res


def read_threads(pid):
    """{tid: (comm, cpu_ns, wait_ns)} of every thread of pid now; {} when
    the process is gone."""
    res = {}
    base = "/proc/%d/task" % pid
    try:
        tids = os.listdir(base)
    except OSError:
        return res
    for tid in tids:
        try:
            with open("%s/%s/schedstat" % (base, tid)) as f:
                run_ns, wait_ns = f.read().split()[:2]
            with open("%s/%s/comm" % (base, tid)) as f:
                comm = f.read().strip()
        except (OSError, ValueError):
            continue
        res[int(tid)] = (comm, int(run_ns), int(wait_ns))
    return res


class ThreadSampler:
    """Samples read_threads() of each labelled PID and its descendants
    every interval seconds until stop(). pids: [(label, pid)], a label
    may come more than once. samples: [(monotonic time, {(label, tid):
    (comm, cpu_ns, wait_ns)})]."""

    def __init__(self, pids, interval=0.1):
        self.pids = list(pids)
        self.labels = list(dict.fromkeys(label for label, _ in self.pids))
        self.interval = interval
        self.samples = []
        self._stop = threading.Event()
        self._thread = None

    def _sample(self):
        now = time.monotonic()
        snap = {}
        ppids = parents()
        for label, pid in self.pids:
            for p in family(pid, ppids):
                for tid, v in read_threads(p).items():
                    snap[(label, tid)] = v
        self.samples.append((now, snap))

    def _run(self):
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def start(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join()
        self._sample()
        return self

    def _at(self, t):
        """The last sample taken at or before t (the first if none)."""
        best = self.samples[0]
        for s in self.samples:
            if s[0] > t:
                break
            best = s
        return best

    def deltas(self, t0, t1):
        """{(label, tid): (comm, cpu_s, wait_s)} spent between the samples
        nearest t0 and t1; a thread that started in between counts from 0."""
        a, b = self._at(t0)[1], self._at(t1)[1]
        res = {}
        for key, (comm, run1, wait1) in b.items():
            _, run0, wait0 = a.get(key, (comm, 0, 0))
            res[key] = (comm, (run1 - run0) / 1e9, (wait1 - wait0) / 1e9)
        return res

    def table(self, t0, t1):
        """Per label, between t0 and t1: [(label, cpu_s, wait_s)], in the
        order the PIDs were given."""
        d = self.deltas(t0, t1)
        rows = []
        for label in self.labels:
            mine = [v for k, v in d.items() if k[0] == label]
            if not mine:
                continue
            rows.append((label, sum(v[1] for v in mine), sum(v[2] for v in mine)))
        return rows

    def worst_wait(self, t0, t1, labels=None):
        """The largest run-queue wait any one thread of labels (all when
        None) was credited with between two samples in [t0, t1]: (wait_s,
        label, tid, time of the earlier sample). The kernel adds a wait to
        schedstat when the thread gets a CPU, so a wait longer than the
        sampling interval is one wait that long: the thread was runnable
        and got no CPU for that time."""
        worst = (0.0, None, None, None)
        prev = None
        for t, snap in self.samples:
            if prev is not None and t0 <= prev[0] and t <= t1:
                for key, (_, _, wait1) in snap.items():
                    if labels is not None and key[0] not in labels:
                        continue
                    old = prev[1].get(key)
                    if old is None:
                        continue
                    w = (wait1 - old[2]) / 1e9
                    if w > worst[0]:
                        worst = (w, key[0], key[1], prev[0])
            prev = (t, snap)
        return worst
