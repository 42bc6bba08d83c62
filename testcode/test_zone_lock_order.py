#!/usr/bin/env python3
"""The locks of the auth-zone code are taken in one order: upstream's
lock checker finds no cycle in what a daemon took while it ran through
transfers, ZONEMD checks below a trust anchor, fast_reload (with and
without +p) and a reload (issue 66, finding 1, and its class).

The checking build (build/fork-debug: --enable-debug
--enable-lock-checks) writes, for every thread, the order in which it
took each pair of locks into ublocktrace.<thread> files in its working
directory; upstream's lock-verify (testcode/lock_verify.c, make
lock-verify) reads them and reports every cycle, whether or not the
threads ever met in it. So an inversion fails here on the first run,
not in the rare run whose timing makes it deadlock.

- example. is signed and served by NSD, its KSK the trust anchor; it
  delegates sec.example., signed with a ZONEMD, of which unbound
  (2 threads, auth-zone-io-thread yes, zonemd-check yes) is the
  secondary: the check of each serial looks up the DS and verifies the
  DNSKEY on a worker, with the zone locked (zone, then trust anchors).
- After serial 1 is served, a SIGHUP reload (before the traces that
  matter: the workers' trace files are written again when they start),
  serial 2 by NOTIFY (applied on the I/O thread, its check on a
  worker), then unbound-control fast_reload (+p with --nopause), which
  keeps the zone's newer data (fr_auth_zones_keep_newer locks the
  zones), then serial 3, then stop.
- lock-verify over the trace files: exit 0, "0 errors".

Shown failing on patch level 73 with --nopause (a cycle of length 6:
fast_reload took the trust anchors' lock, then the zones' in
fr_auth_zones_keep_newer; a worker's ZONEMD check the zone's, then the
anchors': the deadlock of finding 1), and passing, with and without
--nopause, with the anchors locked after the zones are swapped. make
test runs both, in build/fork-debug.

The order itself, pair by pair: --keep-traces DIR, then
testcode/lock_order.py DIR/ublocktrace.* (doc/authzone-io.md, "Lock
order").

usage: test_zone_lock_order.py BUILDDIR [--nopause] [--names N]
                               [--keep-traces DIR]"""

import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

from harness.zone import (Primary, Secondary, SignedDelegation, checker,
                          check_clean_exit, notify, verdict)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("builddir")
    ap.add_argument("--nopause", action="store_true", help="fast_reload +p")
    ap.add_argument("--names", type=int, default=200)
    ap.add_argument("--keep-traces", metavar="DIR",
                    help="copy the trace files to DIR, for testcode/lock_order.py")
    a = ap.parse_args()
    build = os.path.abspath(a.builddir)
    fails, check = checker()
    verify = os.path.join(build, "lock-verify")
    if not os.access(verify, os.X_OK):
        print("no %s (make -C %s lock-verify)" % (verify, build))
        return 1

    with tempfile.TemporaryDirectory(prefix="steady-lock-order-") as d:
        sd = SignedDelegation(os.path.join(d, "keys"), names=a.names)
        nsd = Primary(os.path.join(d, "nsd"), [sd.parent, sd.child])
        shutil.copy(sd.parent_signed, nsd.zonefile(sd.parent))
        sd.child_zonefile(1, nsd.zonefile(sd.child))
        nsd.start({sd.parent: 1, sd.child: 1})
        rundir = os.path.join(d, "unbound")
        ub = Secondary(build, rundir, nsd.port, [sd.child], threads=2, io_thread=True)
        sd.secondary_conf(ub.conf, nsd.port)
        cwd = os.getcwd()
        rc = None
        try:
            # the main thread writes its trace in the directory it starts
            # in, the others after the chdir to the config's directory
            os.chdir(rundir)
            ub.start()
            # unbound-control of this build writes a trace of its own,
            # ublocktrace.0, where it runs: not beside the daemon's
            ctldir = os.path.join(d, "control")
            os.makedirs(ctldir)
            os.chdir(ctldir)
            check(ub.wait_serial(sd.child, 1, 60, on_disk=False),
                  "serial 1 checked and served")
            os.kill(ub.proc.pid, signal.SIGHUP)
            check(ub.wait_serial(sd.child, 1, 60, on_disk=False),
                  "serial 1 served after the reload")

            def update(serial):
                sd.child_zonefile(serial, nsd.zonefile(sd.child))
                nsd.reload({sd.parent: 1, sd.child: serial})
                notify(ub.port, sd.child)
                return ub.wait_serial(sd.child, serial, 60, on_disk=False)

            check(update(2), "serial 2 transferred, checked and served")
            args = ["fast_reload", "+p"] if a.nopause else ["fast_reload"]
            r = ub.control(*args, check=False, timeout=60)
            check(r.returncode == 0 and "ok" in r.stdout,
                  "%s: %s%s" % (" ".join(args), r.stdout.strip(), r.stderr.strip()))
            check(ub.wait_serial(sd.child, 2, 30, on_disk=False),
                  "serial 2 served after the fast_reload")
            check(update(3), "serial 3 transferred, checked and served")
        finally:
            os.chdir(cwd)
            rc = ub.stop()
            nsd.stop()
        log = ub.read_log()
        check_clean_exit(check, rc, log)
        traces = sorted(glob.glob(os.path.join(rundir, "ublocktrace.*")))
        if a.keep_traces:
            os.makedirs(a.keep_traces, exist_ok=True)
            for t in traces:
                shutil.copy(t, a.keep_traces)
        check(len(traces) >= 4, "lock traces written: %s" % " ".join(
            os.path.basename(t) for t in traces))
        if traces:
            v = subprocess.run([verify] + traces, capture_output=True, text=True,
                               timeout=600)
            out = v.stdout + v.stderr
            m = re.search(r"checked (\d+) locks in \d+ seconds with (\d+) errors", out)
            print(m.group(0) if m else out[-2000:])
            check(v.returncode == 0 and m and m.group(2) == "0",
                  "lock-verify finds no cycle in the order locks were taken")
            if v.returncode != 0:
                print("\n".join(out.splitlines()[-40:]))
        if fails:
            print(log[-3000:])
    return verdict(fails, "zone-lock-order%s" % ("-nopause" if a.nopause else ""))


if __name__ == "__main__":
    sys.exit(main())
