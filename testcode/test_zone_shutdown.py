#!/usr/bin/env python3
"""Stopping unbound while zone transfers and zonefile writes are queued:
NSD serves several zones, the built unbound is their secondary. All the
zones are updated at once and unbound is stopped (SIGTERM) as soon as the
first new version is in place, with the others still queued. It must
exit cleanly within a time limit, every zonefile must be complete (old or
new serial), and it must start again from those files.
With --valgrind: the same with small zones under valgrind, after 20
updates, and valgrind must report no errors and no leaked memory.

usage: test_zone_shutdown.py BUILDDIR [--io-thread yes|no] [--valgrind]"""

import argparse
import os
import sys
import tempfile
import time

from harness.zone import (Primary, Secondary, check_zonefile, notify,
                          valgrind_problems, valgrind_wrapper, verdict, write_zone)


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    ap.add_argument("--io-thread", choices=["yes", "no"], default="yes")
    ap.add_argument("--valgrind", action="store_true")
    a = ap.parse_args()
    fails = []
    if a.valgrind:
        nzones, n, updates = 2, 2000, 20
    else:
        nzones, n, updates = 4, 60000, 1
    zones = ["z%d.example." % i for i in range(nzones)]
    with tempfile.TemporaryDirectory(prefix="steady-zstop-") as tmp:
        prim = Primary(os.path.join(tmp, "nsd"), zones)
        for z in zones:
            write_zone(prim.zonefile(z), z, 1, n)
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        zones, threads=2, io_thread=(a.io_thread == "yes"))
        vglog = os.path.join(tmp, "valgrind.log")
        wrapper = None
        if a.valgrind:
            wrapper = valgrind_wrapper(vglog)
        prim.start({z: 1 for z in zones})
        serial = 1
        try:
            sec.start(wrapper=wrapper, timeout=120)
            for z in zones:
                if not sec.wait_serial(z, 1, timeout=120):
                    fails.append("%s: first transfer not on disk" % z)
                    raise StopIteration
            for u in range(updates):
                serial += 1
                for z in zones:
                    write_zone(prim.zonefile(z), z, serial, n)
                prim.reload({z: serial for z in zones})
                applied = int(sec.stats()["num.authzone.xfr.apply"])
                for z in zones:
                    notify(sec.port, z)
                if u < updates - 1:
                    for z in zones:
                        if not sec.wait_serial(z, serial, timeout=120):
                            fails.append("%s: serial %d not on disk" % (z, serial))
                            raise StopIteration
                    continue
                # the last update: stop as soon as the first zone is new
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    if a.io_thread == "yes":
                        if int(sec.stats()["num.authzone.xfr.apply"]) > applied:
                            break
                    elif any(sec.serial(z) == serial for z in zones):
                        break
                    time.sleep(0.01)
                st = sec.stats()
                print("stopping with %s writes queued; served serials %s" % (
                    st["authzone.write.queued"], [sec.serial(z) for z in zones]))
            t0 = time.monotonic()
            rc = sec.stop(timeout=120)
            print("stopped in %.2f s, exit status %s" % (time.monotonic() - t0, rc))
            if rc != 0:
                fails.append("exit status %s" % rc)
            log = sec.read_log()
            for l in log.splitlines():
                if " error:" in l or "fatal" in l or "assertion" in l:
                    fails.append("log: " + l)
            print("\n".join(l for l in log.splitlines() if "stopping" in l))
            for z in zones:
                s, why = check_zonefile(sec.zonefile(z), z, n)
                if why or s not in (serial - 1, serial):
                    fails.append("%s: zonefile after stop: %s, serial %s" % (z, why, s))
            if a.valgrind:
                with open(vglog) as f:
                    vg = f.read()
                fails += ["valgrind: %s" % p for p in valgrind_problems(vg)]
                if rc == 99:
                    fails.append("valgrind reported errors")
                summary = [l for l in vg.splitlines() if "ERROR SUMMARY" in l or
                           "lost:" in l or "in use at exit" in l or "no leaks" in l]
                print("\n".join(summary))
                if fails:
                    print(vg[-6000:])
            else:
                # it starts again from the files it wrote
                sec.start()
                for z in zones:
                    s, _ = check_zonefile(sec.zonefile(z), z, n)
                    if sec.serial(z) != s:
                        fails.append("%s: after restart serves %s, file has %s" % (
                            z, sec.serial(z), s))
                if sec.stop() != 0:
                    fails.append("second stop: exit status not 0")
        except StopIteration:
            pass
        finally:
            sec.kill()
            prim.stop()
            if fails:
                print(sec.read_log()[-3000:])
    return verdict(fails, "stop with queued zone work (io thread %s%s)" % (
        a.io_thread, ", valgrind" if a.valgrind else ""))


if __name__ == "__main__":
    sys.exit(main())
