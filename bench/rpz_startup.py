#!/usr/bin/env python3
"""Start-up from the zonefile of a large RPZ (issue 44, item 5): each
build starts on a zonefile of --names QNAME triggers (t<i>.bench, one
rpz-ip and one rpz-nsdname trigger per 1000 of them, as
bench/rpz_scale.py's feed), in canonical order and in Unbound's own
format, the file a restart reads. Its primary is a closed port, so
nothing is transferred. Per run and build: seconds from exec to the
first answer of a trigger (keep.bench.), the CPU seconds the process
used until then, RSS then, seconds to stop (SIGTERM to exit), and the
seconds of unbound-checkconf on the same configuration. The builds take
turns, run after run; each server runs in a memory cgroup.

usage: rpz_startup.py [--names N] [--runs R] [--builds LABEL=DIR,...]
                      [--threads T] [--mem-limit-gb G] [--timeout S]
                      [--dir D] [--out F]
  --builds  default stock=build/stock,fork=build/fork; the first is the
            base of the ratios; LABEL=DIR+thp runs that build with
            GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (glibc 2.35 or later:
            malloc asks for transparent huge pages, which the kernel's
            "madvise" setting, Debian's default, then gives)
  --dir     where the zonefile and the runs go (default build/rpz-startup;
            the zonefile is written once per --names and kept)"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "testcode"))
from harness.load import cpu_seconds, proc_status_kb  # noqa: E402
from harness.memcap import MemoryCap  # noqa: E402
from harness.server import free_port, stop_pid  # noqa: E402
from harness.stats import med, median, ratio  # noqa: E402
from harness.zone import answers_address  # noqa: E402
from rpz_scale import KEEP, TRIGGER_A, ZONE  # noqa: E402


def canonical_key(owner):
    """Sort key of an absolute owner name in canonical DNS order (RFC
    4034 6.1): labels from the root, lowercase bytes, shorter first."""
    return [lab.lower().encode() for lab in reversed(owner.rstrip(".").split("."))]


def write_zonefile(path, names):
    """The RPZ as Unbound writes it after a transfer: absolute owners,
    one RR a line, canonical order, apex first."""
    extra = max(1, names // 1000)
    rrs = [("keep.bench", "A", TRIGGER_A)]
    for i in range(extra):
        rrs.append(("32.%d.%d.%d.10.rpz-ip" % (i & 255, (i >> 8) & 255, (i >> 16) & 255),
                    "CNAME", "."))
        rrs.append(("ns%d.evil.rpz-nsdname" % i, "CNAME", "."))
    rrs += [("t%d.bench" % i, "A", TRIGGER_A) for i in range(names)]
    rrs.append(("ns", "A", "127.0.0.1"))
    rrs.sort(key=lambda rr: canonical_key(rr[0]))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%s\t3600\tIN\tSOA\tns.%s hostmaster.%s 1 3600 600 86400 300\n"
                "%s\t3600\tIN\tNS\tns.%s\n" % (ZONE, ZONE, ZONE, ZONE, ZONE))
        for start in range(0, len(rrs), 100000):
            f.write("".join("%s.%s\t3600\tIN\t%s\t%s\n" % (o, ZONE, t, d)
                            for o, t, d in rrs[start:start + 100000]))
    os.rename(tmp, path)


def write_conf(path, rundir, zonefile, port, closed, threads):
    """unbound.conf of a run: the RPZ from zonefile, its primary the
    closed port, so that nothing is transferred."""
    with open(path, "w") as f:
        f.write("server:\n\tverbosity: 1\n\tinterface: 127.0.0.1\n\tport: %d\n"
                "\tnum-threads: %d\n\tuse-syslog: no\n\tchroot: \"\"\n\tusername: \"\"\n"
                "\tdirectory: \"%s\"\n\tpidfile: \"\"\n\tmodule-config: \"respip iterator\"\n"
                "\tdo-not-query-localhost: no\n"
                "rpz:\n\tname: \"%s\"\n\tzonefile: \"%s\"\n\tprimary: 127.0.0.1@%d\n"
                "remote-control:\n\tcontrol-enable: no\n" % (
                    port, threads, rundir, ZONE, zonefile, closed))


THP_ENV = {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}


def one_run(label, build, conf, port, a):
    """Start, wait for the trigger's answer, stop; then checkconf. A
    build DIR+thp runs with THP_ENV."""
    res = {}
    env = dict(os.environ)
    if build.endswith("+thp"):
        build = build[:-len("+thp")]
        env.update(THP_ENV)
    cap = MemoryCap("steady-rpz-startup-" + label, int(a.mem_limit_gb * (1 << 30)))
    log = open(os.path.join(a.dir, label + ".log"), "a")
    t0 = time.monotonic()
    proc = subprocess.Popen(cap.wrap([os.path.join(build, "unbound"), "-d", "-c", conf]),
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        while time.monotonic() - t0 < a.timeout:
            if proc.poll() is not None:
                raise RuntimeError("%s exited (status %s); see %s.log" % (
                    label, proc.returncode, label))
            if answers_address(port, KEEP, TRIGGER_A, 0.5):
                res["answer"] = time.monotonic() - t0
                res["cpu"] = cpu_seconds(proc.pid)
                res["rss"] = proc_status_kb(proc.pid, "VmRSS") / 1024
                res["thp"] = proc_status_kb(proc.pid, "AnonHugePages",
                                            "/proc/%d/smaps_rollup" % proc.pid) / 1024
                break
            time.sleep(0.05)
        t1 = time.monotonic()
        if stop_pid(proc, a.timeout) is not None:
            res["stop"] = time.monotonic() - t1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
        res["killed"] = cap.oom_kills() > 0
        cap.remove()
    t2 = time.monotonic()
    r = subprocess.run([os.path.join(build, "unbound-checkconf"), conf],
                       capture_output=True, text=True, timeout=a.timeout, env=env)
    if r.returncode == 0:
        res["checkconf"] = time.monotonic() - t2
    return res


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--names", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--builds", default="stock=build/stock,fork=build/fork")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--mem-limit-gb", type=float, default=16)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--dir", default=os.path.join(TOP, "build", "rpz-startup"))
    ap.add_argument("--out")
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.builds.split(",")]
    os.makedirs(a.dir, exist_ok=True)
    zonefile = os.path.join(a.dir, "rpz-%d.zone" % a.names)
    if not os.path.exists(zonefile):
        t = time.monotonic()
        write_zonefile(zonefile, a.names)
        print("wrote %s in %.0f s" % (zonefile, time.monotonic() - t), flush=True)
    port, closed = free_port(), free_port()
    results = {label: [] for label, _ in builds}
    for run in range(a.runs):
        for label, build in builds:
            rundir = os.path.join(a.dir, label)
            os.makedirs(rundir, exist_ok=True)
            conf = os.path.join(rundir, "unbound.conf")
            write_conf(conf, rundir, zonefile, port, closed, a.threads)
            res = one_run(label, os.path.join(TOP, build), conf, port, a)
            results[label].append(res)
            print("run %d %s: %s" % (run + 1, label, " ".join(
                "%s=%s" % (k, "%.2f" % v if isinstance(v, float) else v)
                for k, v in sorted(res.items()))), flush=True)
    report(a, builds, results)


def report(a, builds, results):
    base = builds[0][0]
    cols = (("answer", "first answer after start, s"), ("cpu", "CPU until then, s"),
            ("rss", "RSS then, MB"), ("thp", "of it in huge pages, MB"), ("stop", "stop, s"),
            ("checkconf", "unbound-checkconf, s"))
    rows = ["# Start-up from an RPZ zonefile of %d triggers" % a.names, "",
            "`%s` (%s UTC); runs per build: %d, the builds taking turns; %d threads; "
            "median (min–max)." % (" ".join(["bench/rpz_startup.py"] + sys.argv[1:]),
                                   time.strftime("%Y-%m-%d %H:%M", time.gmtime()), a.runs,
                                   a.threads), "",
            "| build | " + " | ".join(c[1] for c in cols) + " | killed by its limit |",
            "|---|" + "---|" * (len(cols) + 1)]
    for label, _ in builds:
        rs = results[label]
        rows.append("| %s | " % label + " | ".join(
            med([r.get(k, float("nan")) for r in rs]) for k, _ in cols) +
            " | %s |" % ("yes" if any(r["killed"] for r in rs) else "no"))
    rows += ["", "Ratios of the medians, %s / build:" % base, ""]
    for label, _ in builds[1:]:
        parts = []
        for k, name in cols[:2] + cols[4:]:  # not RSS and huge pages
            q = ratio(median([r.get(k, float("nan")) for r in results[base]]),
                      median([r.get(k, float("nan")) for r in results[label]]))
            if q == q:
                parts.append("%s %.2f×" % (name.split(",")[0], q))
        rows.append("- %s: %s" % (label, "; ".join(parts)))
    text = "\n".join(rows) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
