#!/usr/bin/env python3
"""unbound-control auth_zone_reload with the auth-zone I/O thread, at its
edges. NSD serves a small and a larger zone; unbound (2 threads, the
I/O thread) is their secondary, with testcode/oomshim.c preloaded.

1. Out of memory for the wait on the I/O thread (the strdup of the
   command's zone name fails): the command answers "error out of
   memory", and then the zone must not have been reloaded: its zonefile,
   edited to serial 50, is not read. A reload without the fault then
   reads it.
2. A reload that waits for the I/O thread (held in the larger zone's
   zonefile write) when unbound reloads (SIGHUP): it must be answered,
   with an error that says that unbound is reloading (not stopping).
3. A reload that the I/O thread runs when unbound reloads (SIGHUP),
   held in its read of the zonefile at the calloc of a TXT RRset of a
   size of its own, and released after the workers stopped: it ends
   after worker 0 stopped polling it, and must be answered "ok" (it was
   done), not that it was interrupted.
4. Out of memory for the reload's job to the I/O thread (the calloc of
   sizeof(struct auth_io_job) fails once), while the thread holds the
   zonefile write of the larger zone's serial 3 half way (the file has
   serial 2): the command answers "error out of memory", and worker 0
   does not read the zone itself beside the thread (issue 66, finding
   2: a second writer of the zone's data). Worker 0 read the older
   serial 2 from the file and served it after the thread had put serial
   3 in place.

usage: test_zone_reload_nomem.py BUILDDIR"""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

from harness.zone import (Primary, Secondary, build_preload, file_serial, notify,
                          shim_log_lines, struct_size, verdict, wait_for,
                          write_zone, zone_text)

ZONE, BIG = "small.example.", "big.example."
NBIG = 3000
# case 3: the TXT RRset whose packed data is a calloc of a size of its own
STRINGS = 41
RDATA_LEN = 2 + STRINGS * 201


def start_reload(sec, zone=ZONE):
    """unbound-control auth_zone_reload zone, started in the background."""
    return subprocess.Popen(
        [sec.bin("unbound-control"), "-c", sec.conf, "auth_zone_reload", zone],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def reload_answer(cmd):
    """The answer of the auth_zone_reload that start_reload started."""
    out, _ = cmd.communicate(timeout=60)
    return out.strip()


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    a = ap.parse_args()
    fails = []
    with tempfile.TemporaryDirectory(prefix="steady-zreloadnomem-") as tmp:
        shim = build_preload(tmp, "oomshim.c")
        oom = os.path.join(tmp, "oom.strdup")
        oom_job = os.path.join(tmp, "oom.calloc")
        hold = os.path.join(tmp, "write.hold")
        hold_read = os.path.join(tmp, "read.hold")
        # packed_rrset_data, its one rr_len, rr_data and rr_ttl, the rdata
        size = struct_size(a.builddir, "packed_rrset_data") + 8 + 8 + 8 + RDATA_LEN
        shimlog = os.path.join(tmp, "shim.log")
        prim = Primary(os.path.join(tmp, "nsd"), [ZONE, BIG])
        write_zone(prim.zonefile(ZONE), ZONE, 1, 10)
        write_zone(prim.zonefile(BIG), BIG, 1, NBIG)
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        [ZONE, BIG], threads=2, io_thread=True)
        wrapper = ["env", "LD_PRELOAD=" + shim,
                   "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1",
                   "STEADY_OOM_STRDUP_TRIGGER=" + oom, "STEADY_OOM_STRDUP=" + ZONE,
                   "STEADY_HOLD=" + hold, "STEADY_HOLD_AT=1000",
                   "STEADY_HOLD_CALLOC=" + hold_read, "STEADY_HOLD_SIZE=%d" % size,
                   "STEADY_OOM_CALLOC_TRIGGER=" + oom_job, "STEADY_OOM_TIMES=1",
                   "STEADY_OOM_SIZE=%d" % struct_size(a.builddir, "auth_io_job"),
                   "STEADY_OOM_LOG=" + shimlog]

        def shim_lines(prefix):
            return shim_log_lines(shimlog, prefix)

        def hold_big_write(serial):
            """BIG's serial transferred, its zonefile write held half way
            (the file keeps the serial before)."""
            holds = len(shim_lines("hold"))
            open(hold, "w").close()
            write_zone(prim.zonefile(BIG), BIG, serial, NBIG)
            prim.reload({ZONE: 1, BIG: serial})
            notify(sec.port, BIG)
            if not wait_for(lambda: len(shim_lines("hold")) > holds, 60):
                fails.append("the write of %s serial %d was not held" % (BIG, serial))
                raise StopIteration

        prim.start({ZONE: 1, BIG: 1})
        reload_cmd = None
        try:
            sec.start(wrapper=wrapper)
            for z in (ZONE, BIG):
                if not sec.wait_serial(z, 1, timeout=60):
                    fails.append("%s: first transfer not on disk" % z)
                    raise StopIteration

            # 1. out of memory
            write_zone(sec.zonefile(ZONE), ZONE, 50, 10)
            open(oom, "w").close()
            out = sec.control("auth_zone_reload", ZONE, check=False).stdout.strip()
            os.unlink(oom)
            print("auth_zone_reload without memory: %r (shim: %s)" % (
                out, shim_lines("fail")))
            if not shim_lines("fail"):
                fails.append("no allocation was failed")
            time.sleep(1)
            served = sec.serial(ZONE)
            print("then the zone is at serial %s" % served)
            if out != "error out of memory":
                fails.append("auth_zone_reload answered %r, want 'error out of "
                             "memory'" % out)
            if served != 1:
                fails.append("auth_zone_reload answered %r and reloaded the zone "
                             "anyway (serial %s, want 1)" % (out, served))
            out = sec.control("auth_zone_reload", ZONE, check=False).stdout.strip()
            if out != "ok" or not wait_for(lambda: sec.serial(ZONE) == 50, 10):
                fails.append("auth_zone_reload with memory: %r, serial %s, want "
                             "ok and 50" % (out, sec.serial(ZONE)))

            # 2. a reload waiting for the I/O thread at a SIGHUP
            hold_big_write(2)
            reload_cmd = start_reload(sec)
            time.sleep(0.5)
            os.kill(sec.proc.pid, signal.SIGHUP)
            time.sleep(0.5)
            os.unlink(hold)
            out = reload_answer(reload_cmd)
            reload_cmd = None
            print("auth_zone_reload waiting at a SIGHUP: %r" % out)
            if not out.startswith("error") or "reloading" not in out:
                fails.append("auth_zone_reload waiting at a SIGHUP answered %r, "
                             "want an error that says unbound is reloading" % out)
            if not wait_for(lambda: sec.serial(BIG) == 2, 30):
                fails.append("%s not served at serial 2 after the reload" % BIG)

            # 3. a reload that ends after the workers stopped for a SIGHUP
            with open(sec.zonefile(ZONE), "w") as f:
                f.write(zone_text(ZONE, 60, 10) + "held IN TXT %s\n" % " ".join(
                    ["\"%s\"" % ("x" * 200)] * STRINGS))
            open(hold_read, "w").close()
            reload_cmd = start_reload(sec)
            if not wait_for(lambda: shim_lines("hold calloc"), 60):
                fails.append("the reload's read of %s was not held" % ZONE)
                raise StopIteration
            stops = sec.read_log().count("service stopped")
            os.kill(sec.proc.pid, signal.SIGHUP)
            # worker 0 leaves its event loop, and then the daemon waits
            # for the I/O thread, held in the reload
            if not wait_for(lambda: sec.read_log().count("service stopped") > stops, 30):
                fails.append("unbound did not stop its workers for the SIGHUP")
            time.sleep(0.5)
            os.unlink(hold_read)
            out = reload_answer(reload_cmd)
            reload_cmd = None
            print("auth_zone_reload that ended after the workers stopped: %r" % out)
            if out != "ok":
                fails.append("auth_zone_reload that was done when unbound "
                             "reloaded answered %r, want ok" % out)
            if not wait_for(lambda: sec.serial(ZONE) == 60, 30):
                fails.append("%s not served at serial 60 after the reload (%s)"
                             % (ZONE, sec.serial(ZONE)))

            # 4. out of memory for the reload's job, a write held
            nfail = len(shim_lines("fail calloc"))
            hold_big_write(3)
            if not wait_for(lambda: sec.serial(BIG) == 3, 30):
                fails.append("%s serial 3 not served while its write is held"
                             % BIG)
            open(oom_job, "w").close()
            reload_cmd = start_reload(sec, BIG)
            time.sleep(1)
            os.unlink(hold)
            out = reload_answer(reload_cmd)
            reload_cmd = None
            os.unlink(oom_job)
            failed = shim_lines("fail calloc")[nfail:]
            print("auth_zone_reload %s without memory for its job, while the "
                  "write of serial 3 is held: %r (shim: %s)" % (BIG, out, failed))
            if not failed:
                fails.append("the reload's job was not failed")
            if out != "error out of memory":
                fails.append("auth_zone_reload without memory for its job "
                             "answered %r, want 'error out of memory': worker "
                             "0 read the zone beside the I/O thread" % out)
            wait_for(lambda: file_serial(sec.zonefile(BIG)) == 3, 30)
            time.sleep(0.5)
            served = sec.serial(BIG)
            print("then %s is served at serial %s, serial %s on disk" % (
                BIG, served, file_serial(sec.zonefile(BIG))))
            if served != 3:
                fails.append("%s served at serial %s after the reload without "
                             "memory, want 3 (not older than what was served)"
                             % (BIG, served))
            if sec.stop() != 0:
                fails.append("unbound did not exit cleanly")
        except StopIteration:
            pass
        finally:
            if reload_cmd is not None:
                reload_cmd.kill()
                reload_cmd.wait()
            sec.kill()
            prim.stop()
        if fails:
            print(sec.read_log()[-3000:])
    return verdict(fails, "auth_zone_reload out of memory and at a SIGHUP")


if __name__ == "__main__":
    sys.exit(main())
