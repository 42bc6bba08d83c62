#!/usr/bin/env python3
"""How long a worker stalls for the ZONEMD check of a signed secondary
zone below a trust anchor: stock and the fork side by side, alternating.

NSD on loopback serves example. (signed; its KSK is the trust anchor)
and sec.example. (--names names, signed, with a ZONEMD). unbound, with
one thread, is the secondary of sec.example. with zonemd-check: yes and
a stub for example.; after the transfer the check looks up the DS, and
once it is there hashes the whole zone and verifies the ZONEMD. A probe
(testcode/harness/dnsprobe.c) asks for a local-data name at --rate qps for --window
seconds from the start (the zonefile must be on disk --settle seconds
before its end); the report is the probe's max latency and lost queries,
per configuration:
  stock      stock (make stock): transfer, apply and check on the
             worker;
  fork       the fork: apply on the auth-zone I/O thread, and the
             check's hash there after the DS lookup (test zone-zonemd
             checks where it runs);
  fork-off   the fork with zonemd-check: no (the same without a check).
Median (min-max) of --reps runs each.

usage: flock build/.bench.lock bench/zonemd_stall.py [--names 200000]
       [--reps 3] [--rate 1000] [--window 40] [--settle 5] [--out FILE]"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "testcode"))
from harness.load import build_probe  # noqa: E402
from harness.stats import med  # noqa: E402
from harness.zone import Primary, Secondary, SignedDelegation, file_serial  # noqa: E402

PARENT = "example."
ZONE = "sec.example."
PROBE = "probe.test."


def one_run(build, zonemd, zones, rate, window, settle, probe_exe, tmp):
    d = tempfile.mkdtemp(prefix="zonemd-", dir=tmp)
    nsd = Primary(os.path.join(d, "nsd"), [PARENT, ZONE])
    for src, z in ((zones.parent_signed, PARENT), (zones.child_signed, ZONE)):
        with open(src) as f, open(nsd.zonefile(z), "w") as o:
            o.write(f.read())
    nsd.start({PARENT: 1, ZONE: 1})
    ub = Secondary(build, os.path.join(d, "unbound"), nsd.port, [ZONE], threads=1,
                   extra="\tlocal-data: \"%s A 127.0.0.1\"" % PROBE)
    zones.secondary_conf(ub.conf, nsd.port)
    if not zonemd:
        with open(ub.conf) as f:
            text = f.read().replace("\tzonemd-check: yes\n", "")
        with open(ub.conf, "w") as f:
            f.write(text)
    out = os.path.join(d, "probe.txt")
    try:
        ub.start()
        probe = subprocess.Popen([probe_exe, "-p", str(ub.port), "-q", PROBE, "-r", str(rate),
                                  "-n", "16", "-d", str(window), "-t", "2000", "-o", out],
                                 stdout=subprocess.PIPE, text=True)
        t0 = time.monotonic()
        while file_serial(ub.zonefile(ZONE)) != 1:
            if time.monotonic() - t0 > 300:
                raise RuntimeError("no zonefile after 300 s:\n" + ub.read_log()[-2000:])
            time.sleep(0.05)
        on_disk = time.monotonic() - t0
        if on_disk + settle > window:
            raise RuntimeError("the zonefile was on disk after %.1f s: use a longer --window"
                               % on_disk)
        probe.wait()
        log = ub.read_log()
    finally:
        ub.stop()
        nsd.stop()
    lats, lost = [], 0
    with open(out) as f:
        for line in f:
            _, lat, _ = line.split()
            if int(lat) == -1:
                lost += 1
            elif int(lat) >= 0:
                lats.append(int(lat) / 1000.0)
    failed = "ZONEMD verification failed" in log
    return {"max": max(lats) if lats else float("nan"), "lost": lost,
            "on_disk": on_disk, "failed": failed}




def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--names", type=int, default=200000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--window", type=int, default=40)
    ap.add_argument("--settle", type=float, default=5)
    ap.add_argument("--out")
    a = ap.parse_args()
    configs = [("stock", os.path.join(TOP, "build", "stock"), True),
               ("fork", os.path.join(TOP, "build", "fork"), True),
               ("fork-off", os.path.join(TOP, "build", "fork"), False)]
    res = {c[0]: [] for c in configs}
    with tempfile.TemporaryDirectory(prefix="steady-zonemd-bench-") as tmp:
        probe_exe = build_probe(tmp)
        t = time.monotonic()
        zones = SignedDelegation(os.path.join(tmp, "keys"), PARENT, ZONE, a.names)
        zones.child_signed = os.path.join(tmp, "child.signed")
        zones.child_zonefile(1, zones.child_signed)
        print("signed %d names in %.0f s" % (a.names, time.monotonic() - t), flush=True)
        for rep in range(a.reps):
            for label, build, zonemd in configs:
                r = one_run(build, zonemd, zones, a.rate, a.window, a.settle, probe_exe, tmp)
                res[label].append(r)
                print("%s run %d: max %.1f ms, lost %d, on disk after %.1f s%s" % (
                    label, rep + 1, r["max"], r["lost"], r["on_disk"],
                    ", ZONEMD FAILED" if r["failed"] else ""), flush=True)
    rows = ["# Worker stall of a ZONEMD check below a trust anchor", "",
            "`flock build/.bench.lock bench/zonemd_stall.py --names %d --reps %d --rate %d "
            "--window %d --settle %g`" % (a.names, a.reps, a.rate, a.window, a.settle), "",
            "%d names (A, NSEC and RRSIGs: about %d RRs), 1 thread; the probe's max latency "
            "and lost queries in the first %d s after the start; median (min–max) of %d runs."
            % (a.names, 4 * a.names, a.window, a.reps), "",
            "| configuration | probe max, ms | lost | zonefile on disk after, s |",
            "|---|---|---|---|"]
    for label, _, _ in configs:
        v = res[label]
        rows.append("| %s | %s | %s | %s |" % (label, med([r["max"] for r in v], "%.1f"),
                                               med([r["lost"] for r in v]),
                                               med([r["on_disk"] for r in v], "%.1f")))
    print("\n".join(rows))
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
