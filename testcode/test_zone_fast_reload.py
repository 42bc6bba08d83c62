#!/usr/bin/env python3
"""fast_reload (with and without +p) while the auth-zone I/O thread is in
the middle of a zonefile write, with more work queued behind it.

NSD serves four zones; the built unbound, with the auth-zone I/O thread,
is the secondary of three of them. An LD_PRELOAD shim
(testcode/slowshim.c) makes the zonefile writes slow, so that after an
update of every zone the I/O thread is in the middle of one write and the
others are queued, and an unbound-control auth_zone_reload waits behind
them. Then unbound-control fast_reload runs with a new configuration that
keeps a zone (keep.), removes one (gone.), changes one (change.: another
zonefile) and adds one (new.). fast_reload replaces the zone objects that
the I/O thread uses; it must wait for the thread to finish its job, and
the thread must not use the replaced objects afterwards.

Checks: fast_reload answers ok; unbound answers queries all the while;
afterwards the kept and changed zones reach the primary's serial, the
added zone is transferred and answered, the removed zone is not answered;
the auth_zone_reload gets an answer; the kept zone never answers an
older serial than before fast_reload (a zonefile whose write is still
queued is older than the data served, and fast_reload reads the file);
unbound stops with exit status 0; with a sanitizer build, its log has
no sanitizer report.

usage: test_zone_fast_reload.py BUILDDIR [--nopause] [--names N]
                                [--write-sec S]"""

import argparse
import os
import sys
import tempfile
import threading
import time

from harness.zone import (Primary, Secondary, SoaPoller, build_preload,
                          changed_zone_set, checker, notify, check_clean_exit,
                          verdict, wait_for, write_zone)

# fwrite()s per sleep of the shim; the zonefile writer does about one per RR
EVERY = 100
KEEP, GONE, CHANGE, NEW = "keep.example.", "gone.example.", "change.example.", "new.example."


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("builddir")
    ap.add_argument("--nopause", action="store_true", help="fast_reload +p")
    ap.add_argument("--names", type=int, default=20000)
    ap.add_argument("--write-sec", type=float, default=4.0,
                    help="how long the shim makes one zonefile write take")
    a = ap.parse_args()
    fails, check = checker()
    n = a.names
    usec = int(a.write_sec * 1e6 * EVERY / (n + 4))
    old_zones = [KEEP, GONE, CHANGE]
    with tempfile.TemporaryDirectory(prefix="steady-zfr-") as tmp:
        shim = build_preload(tmp, "slowshim.c")
        slow = os.path.join(tmp, "slow")
        prim = Primary(os.path.join(tmp, "nsd"), old_zones + [NEW])
        for z in old_zones:
            write_zone(prim.zonefile(z), z, 1, n)
        write_zone(prim.zonefile(NEW), NEW, 5, 100)
        rundir = os.path.join(tmp, "unbound")
        sec = Secondary(a.builddir, rundir, prim.port, old_zones, threads=2,
                        io_thread=True, verbosity=2)
        wrapper = ["env", "LD_PRELOAD=" + shim,
                   "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1",
                   "STEADY_SLOW=" + slow,
                   "STEADY_SLOW_USEC=%d" % usec, "STEADY_SLOW_EVERY=%d" % EVERY]
        prim.start({z: 1 for z in old_zones} | {NEW: 5})
        poller, rc, reload_out = None, None, {}
        try:
            sec.start(wrapper=wrapper, timeout=120)
            for z in old_zones:
                check(sec.wait_serial(z, 1, timeout=120), "%s: serial 1 on disk" % z)
            # serial 2 of every zone: its writes are slow and queue up
            open(slow, "w").close()
            for z in old_zones:
                write_zone(prim.zonefile(z), z, 2, n)
            prim.reload({z: 2 for z in old_zones})
            for z in old_zones:
                notify(sec.port, z)
            for z in old_zones:
                check(sec.wait_serial(z, 2, timeout=120, on_disk=False),
                      "%s: serial 2 served" % z)
            st = sec.stats()
            print("writes queued: %s" % st.get("authzone.write.queued"))

            def reload_keep():
                r = sec.control("auth_zone_reload", KEEP, check=False, timeout=180)
                reload_out["out"] = r.stdout + r.stderr
            rl = threading.Thread(target=reload_keep, daemon=True)
            rl.start()
            time.sleep(0.3)
            poller = SoaPoller(sec.port, [KEEP], timeout=0.2, pause=0.005)
            poller.start()
            with open(sec.conf) as f:
                text = f.read()
            with open(sec.conf, "w") as f:
                f.write(changed_zone_set(text, sec, GONE, CHANGE, NEW,
                                         os.path.join(rundir, "change-2.zone")))
            t0 = time.monotonic()
            args = ["fast_reload"] + (["+p"] if a.nopause else [])
            r = sec.control(*args, check=False, timeout=180)
            took = time.monotonic() - t0
            out = r.stdout + r.stderr
            print("fast_reload%s took %.2f s: %s" % (" +p" if a.nopause else "", took,
                                                      out.strip()[-300:]))
            check(r.returncode == 0 and "ok" in out.split(), "fast_reload answers ok")
            os.unlink(slow)
            rl.join(180)
            check("out" in reload_out, "auth_zone_reload got an answer: %s" %
                  reload_out.get("out", "").strip()[-200:])
            check(wait_for(lambda: sec.serial(KEEP) == 2, 120),
                  "%s answers serial 2 after fast_reload (%s)" % (KEEP, sec.serial(KEEP)))
            check(wait_for(lambda: sec.serial(CHANGE) == 2, 120),
                  "%s answers serial 2 after fast_reload (%s)" % (CHANGE, sec.serial(CHANGE)))
            check(wait_for(lambda: sec.serial(NEW) == 5, 120),
                  "the added %s is transferred and answered (%s)" % (NEW, sec.serial(NEW)))
            check(sec.serial(GONE) is None, "the removed %s is not answered" % GONE)
            poller.stop()
            served = poller.serials(KEEP)
            print("%s served around fast_reload: %d queries, serials %s, %d without "
                  "an answer" % (KEEP, len(served), sorted({s for s in served if s}),
                                 served.count(None)))
            # a reload never serves an older serial than it served before
            check(all(s is None or s >= 2 for s in served),
                  "%s never answers an older serial than 2 around fast_reload" % KEEP)
            poller = None
        finally:
            if poller:
                poller.stop()
            if os.path.exists(slow):
                os.unlink(slow)
            rc = sec.stop(timeout=180)
            prim.stop()
            log = sec.read_log()
        check_clean_exit(check, rc, log)
        if fails:
            print(log[-4000:])
    return verdict(fails, "zone-fast-reload")


if __name__ == "__main__":
    sys.exit(main())
