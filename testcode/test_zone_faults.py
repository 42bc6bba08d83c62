#!/usr/bin/env python3
"""Zonefile write failures, with NSD as the primary: the zonefile lives on
a small tmpfs (mounted here, needs root). For a full disk (ENOSPC), a
read-only file system (EROFS), a removed directory (ENOENT) and a
zonefile name too long for its temporary file, unbound must log one error
that names the zonefile, count it in num.authzone.write.failed, leave no
temporary file, keep the old zonefile complete, keep answering the new
serial from memory, and write the file again at the next update once the
fault is gone.

usage: test_zone_faults.py BUILDDIR [--io-thread yes|no]"""

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

from harness.zone import (Primary, Secondary, check_zonefile, file_serial,
                      notify, verdict, wait_for, write_zone)

ZONE = "example.net."
LONGZONE = "long.example."
SMALL, BIG = 1000, 20000


def sh(*cmd):
    subprocess.run(cmd, check=True)


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    ap.add_argument("--io-thread", choices=["yes", "no"], default="yes")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("test_zone_faults: needs root (it mounts a tmpfs)")
        return 1
    fails = []
    with tempfile.TemporaryDirectory(prefix="steady-zfault-") as tmp:
        mnt = os.path.join(tmp, "mnt")
        os.makedirs(mnt)
        sh("mount", "-t", "tmpfs", "-o", "size=4m,mode=755", "tmpfs", mnt)
        zdir = os.path.join(mnt, "zones")
        os.makedirs(zdir)
        # a zonefile name with no room for ".tmp<pid>" in 1024 bytes
        longdir = tmp
        while len(longdir) < 900:
            longdir = os.path.join(longdir, "d" * 100)
        os.makedirs(longdir)
        longfile = os.path.join(longdir, "x" * (1012 - len(longdir)))
        assert 1008 < len(longfile) < 1024
        prim = Primary(os.path.join(tmp, "nsd"), [ZONE, LONGZONE])
        write_zone(prim.zonefile(ZONE), ZONE, 1, SMALL)
        write_zone(prim.zonefile(LONGZONE), LONGZONE, 1, 10)
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        [ZONE, LONGZONE], zonedir=zdir, threads=2,
                        io_thread=(a.io_thread == "yes"))
        # the long zone's file name replaces the default one
        with open(sec.conf) as f:
            conf = f.read()
        conf = conf.replace(sec.zonefile(LONGZONE), longfile)
        with open(sec.conf, "w") as f:
            f.write(conf)
        zfile = sec.zonefile(ZONE)
        prim.start({ZONE: 1, LONGZONE: 1})
        serial = 1
        expect_failed = 0

        def failed():
            return int(sec.stats()["num.authzone.write.failed"])

        def log_errors():
            return [l for l in sec.read_log().splitlines() if " error: " in l]

        def update(nrec):
            nonlocal serial
            serial += 1
            write_zone(prim.zonefile(ZONE), ZONE, serial, nrec)
            prim.reload({ZONE: serial})
            notify(sec.port, ZONE)
            deadline = time.monotonic() + 60
            while sec.serial(ZONE) != serial and time.monotonic() < deadline:
                time.sleep(0.05)
            if sec.serial(ZONE) != serial:
                fails.append("serial %d not served from memory" % serial)

        def expect_failure(what, errtext, old_serial, old_n):
            nonlocal expect_failed
            expect_failed += 1
            deadline = time.monotonic() + 30
            while failed() < expect_failed and time.monotonic() < deadline:
                time.sleep(0.05)
            n = failed()
            if n != expect_failed:
                fails.append("%s: num.authzone.write.failed=%d, want %d" % (
                    what, n, expect_failed))
            errs = [l for l in log_errors() if errtext in l]
            if len(errs) != 1:
                fails.append("%s: want one error with %r in the log, got %s" % (
                    what, errtext, errs))
            else:
                print("%s: %s" % (what, errs[0].split(" error: ", 1)[1]))
            if old_serial is not None:
                s, why = check_zonefile(zfile, ZONE, old_n)
                if why or s != old_serial:
                    fails.append("%s: old zonefile not intact: %s (serial %s)" % (
                        what, why, s))
            left = glob.glob(zfile + ".tmp*") + glob.glob(longfile + ".tmp*")
            if left:
                fails.append("%s: temporary files left: %s" % (what, left))

        def expect_written(what, nrec):
            if not sec.wait_serial(ZONE, serial, timeout=30):
                fails.append("%s: zonefile not written again (file serial %s)"
                             % (what, file_serial(zfile)))
                return
            s, why = check_zonefile(zfile, ZONE, nrec)
            if why:
                fails.append("%s: %s" % (what, why))
            if failed() != expect_failed:
                fails.append("%s: failures counted on success" % what)

        try:
            sec.start()
            if not sec.wait_serial(ZONE, 1, timeout=60):
                fails.append("first transfer not on disk")
                raise StopIteration
            # the long name: its first write failed, the zone is served
            # (its transfer may end after ZONE's is on disk)
            if not wait_for(lambda: sec.serial(LONGZONE) == 1, 30):
                fails.append("zone with the long zonefile name not served")
            expect_failure("name too long", "name too long", 1, SMALL)

            # ENOSPC: fill the tmpfs, leave a little room
            filler = os.path.join(mnt, "filler")
            subprocess.run(["dd", "if=/dev/zero", "of=" + filler, "bs=64k"],
                           capture_output=True)
            os.truncate(filler, os.path.getsize(filler) - 128 * 1024)
            update(BIG)
            expect_failure("disk full", "No space left on device", 1, SMALL)
            os.unlink(filler)
            update(BIG)
            expect_written("after disk full", BIG)

            # EROFS
            sh("mount", "-o", "remount,ro", mnt)
            ro_serial = serial
            update(BIG)
            expect_failure("read-only", "Read-only file system", ro_serial, BIG)
            sh("mount", "-o", "remount,rw", mnt)
            update(BIG)
            expect_written("after read-only", BIG)

            # the directory is gone
            subprocess.run(["rm", "-rf", zdir], check=True)
            update(SMALL)
            expect_failure("directory gone", "No such file or directory", None, 0)
            os.makedirs(zdir)
            update(SMALL)
            expect_written("after directory gone", SMALL)

            if sec.stop() != 0:
                fails.append("unbound exit status not 0")
        except StopIteration:
            pass
        finally:
            sec.kill()
            prim.stop()
            subprocess.run(["umount", mnt])
            if fails:
                print(sec.read_log()[-3000:])
    return verdict(fails, "zone write faults (io thread %s)" % a.io_thread)


if __name__ == "__main__":
    sys.exit(main())
