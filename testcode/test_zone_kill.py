#!/usr/bin/env python3
"""kill -9 during zonefile writes: NSD serves a large zone, the built
unbound is its secondary with a zonefile. Repeatedly: bump the serial,
wait until unbound is writing the zonefile (its temporary file appears),
kill -9 it at a random moment of the write, and check that the zonefile
on disk parses completely and holds exactly one serial (the old or the
new one, every record of it); then start unbound again, which must load
that file and serve it.

usage: test_zone_kill.py BUILDDIR [--io-thread yes|no] [--kills N]"""

import argparse
import os
import random
import sys
import tempfile
import time

from harness.zone import (Primary, Secondary, check_zonefile, file_serial,
                      notify, verdict, write_zone)

ZONE = "example.net."


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    ap.add_argument("--io-thread", choices=["yes", "no"], default="yes")
    ap.add_argument("--kills", type=int, default=6)
    ap.add_argument("--records", type=int, default=200000)
    a = ap.parse_args()
    fails = []
    n = a.records
    rnd = random.Random(1)
    during_write = 0
    with tempfile.TemporaryDirectory(prefix="steady-zkill-") as tmp:
        prim = Primary(os.path.join(tmp, "nsd"), [ZONE])
        write_zone(prim.zonefile(ZONE), ZONE, 1, n)
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        [ZONE], threads=2, io_thread=(a.io_thread == "yes"))
        zfile = sec.zonefile(ZONE)
        prim.start({ZONE: 1})
        serial = 1
        try:
            sec.start()
            if not sec.wait_serial(ZONE, 1, timeout=120):
                fails.append("first transfer not on disk")
                raise StopIteration
            for k in range(a.kills):
                serial += 1
                write_zone(prim.zonefile(ZONE), ZONE, serial, n)
                prim.reload({ZONE: serial})
                tmpfile = "%s.tmp%d" % (zfile, sec.proc.pid)
                notify(sec.port, ZONE)
                deadline = time.monotonic() + 60
                while not os.path.exists(tmpfile) and time.monotonic() < deadline:
                    time.sleep(0.0005)
                if not os.path.exists(tmpfile):
                    fails.append("kill %d: no zonefile write seen" % k)
                    break
                time.sleep(rnd.uniform(0, 0.15))
                writing = os.path.exists(tmpfile)
                sec.kill()
                during_write += writing
                s, why = check_zonefile(zfile, ZONE, n)
                print("kill %d: %s the write, zonefile has serial %s" % (
                    k, "during" if writing else "after", s))
                if why:
                    fails.append("kill %d: %s" % (k, why))
                    break
                if s not in (serial - 1, serial):
                    fails.append("kill %d: zonefile serial %s, want %d or %d" % (
                        k, s, serial - 1, serial))
                # the killed process's temporary file stays; it is not read
                os.unlink(tmpfile) if os.path.exists(tmpfile) else None
                sec.start()
                got = sec.serial(ZONE)
                if got is None or got < s:
                    fails.append("kill %d: after restart serves %s, file had %s"
                                 % (k, got, s))
                # a zone loaded from its zonefile is probed after the SOA
                # refresh time, or when the primary sends a NOTIFY
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    notify(sec.port, ZONE)
                    if sec.wait_serial(ZONE, serial, timeout=3):
                        break
                if file_serial(zfile) != serial:
                    fails.append("kill %d: serial %d not on disk after restart" % (
                        k, serial))
                    break
            print("%d of %d kills hit a zonefile write" % (during_write, a.kills))
            if during_write == 0:
                fails.append("no kill hit a write; the test did not test it")
            if sec.stop() != 0:
                fails.append("unbound exit status not 0")
        except StopIteration:
            pass
        finally:
            sec.kill()
            prim.stop()
            if fails:
                print(sec.read_log()[-3000:])
    return verdict(fails, "kill -9 during writes (io thread %s)" % a.io_thread)


if __name__ == "__main__":
    sys.exit(main())
