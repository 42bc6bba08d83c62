#!/usr/bin/env python3
"""fast_reload +p compares the zones it read with the zones served before
it takes its global locks (fr_auth_zones_compare), and under them looks
again only at zones that changed since (issue 66, finding 1). A zone whose
data a worker changes in between must be looked at again: this test puts
a transfer there.

NSD serves win.example.; the built unbound (one thread, no auth-zone I/O
thread, so that the worker applies transfers while fast_reload +p runs)
is its secondary with a zonefile. With serial 1 served and on disk, gdb
attaches in non-stop mode with a breakpoint on the first statement after
fr_auth_zones_compare in fr_reload_config (its line is found in the
build's source); only the fast_reload thread stops there, and waits
until the test lets it go. Meanwhile NSD gets serial 2 and a NOTIFY: the
worker transfers it, serves it and writes it. The zone fast_reload read
has serial 1, compared with serial 1 served; when fast_reload goes on,
the data served is newer than the file it read and must be kept: after
the reload win.example. answers serial 2, the log says it kept serial 2
and that the zone was looked at again under the locks; unbound stops
with exit status 0 (and, in a sanitizer build, without a report). With
the comparison's data version not looked at again, serial 1 is served.

usage: test_zone_fast_reload_window.py BUILDDIR"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

from harness.gdbstop import GdbStop, source_line, stopped_threads
from harness.zone import (Primary, Secondary, check_clean_exit, checker,
                          notify, verdict, wait_for, write_zone)

ZONE = "win.example."


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("builddir")
    a = ap.parse_args()
    fails, check = checker()
    path, line = source_line(a.builddir, "daemon/remote.c",
                             "fr_auth_zones_compare(env->auth_zones",
                             "lock_rw_wrlock(")
    with tempfile.TemporaryDirectory(prefix="steady-zfr-window-") as tmp:
        prim = Primary(os.path.join(tmp, "nsd"), [ZONE])
        write_zone(prim.zonefile(ZONE), ZONE, 1, 10)
        prim.start({ZONE: 1})
        ub = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                       [ZONE], threads=1, io_thread=False, verbosity=4)
        gdb = reload_cmd = None
        rc = None
        try:
            ub.start()
            check(ub.wait_serial(ZONE, 1, timeout=60),
                  "serial 1 transferred, served and written")
            gdb = GdbStop(ub.proc.pid, path, line, tmp)
            time.sleep(2)
            check(not stopped_threads(ub.proc.pid),
                  "gdb attached, and every thread runs on")
            reload_cmd = subprocess.Popen(
                [ub.bin("unbound-control"), "-c", ub.conf, "fast_reload", "+p"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            stopped = wait_for(gdb.hit, 60)
            check(stopped, "fast_reload stopped after its comparison of the zones")
            if not stopped:
                raise StopIteration
            write_zone(prim.zonefile(ZONE), ZONE, 2, 10)
            prim.reload({ZONE: 2})
            notify(ub.port, ZONE)
            check(ub.wait_serial(ZONE, 2, timeout=30),
                  "the worker transferred, served and wrote serial 2 while "
                  "fast_reload was stopped")
            gdb.go()
            out, _ = reload_cmd.communicate(timeout=60)
            reload_cmd = None
            check(out.strip().endswith("ok"), "fast_reload answers ok: %r" %
                  out.strip()[-200:])
            gdb.detach()
            time.sleep(0.5)
            served = ub.serial(ZONE)
            check(served == 2, "%s answers serial %s after fast_reload, want "
                  "the serial 2 served before it" % (ZONE, served))
            log = ub.read_log()
            check("keeping serial 2" in log, "fast_reload kept serial 2 "
                  "over the zonefile's serial 1 that it read")
            check("1 auth zones compared before the locks, 1 of them again "
                  "under them" in log, "the zone was looked at again under "
                  "the locks")
        except StopIteration:
            pass
        finally:
            if reload_cmd is not None:
                reload_cmd.kill()
                reload_cmd.wait()
            if gdb is not None:
                gdb.detach()
            rc = ub.stop()
            prim.stop()
        check_clean_exit(check, rc, ub.read_log())
        if fails:
            print(ub.read_log()[-3000:])
            if gdb is not None:
                print(gdb.output()[-2000:])
    return verdict(fails, "zone-fast-reload-window")


if __name__ == "__main__":
    sys.exit(main())
