#!/usr/bin/env python3
"""Reload (SIGHUP) and stop while zonefile writes are queued must never
make unbound serve an older serial than it served before. NSD serves
several zones, the built unbound (auth-zone I/O thread) is their
secondary. An LD_PRELOAD shim (testcode/slowshim.c) slows the zonefile
writes, as a slow disk or large zones do, so that after an update of all
zones their writes are still queued on the I/O thread when:

1. unbound gets SIGHUP: the SOA of every zone is queried every few ms
   from before the signal until well after the reload; no answer may have
   an older serial than the one served before the signal, the time without
   answers (the reload's outage) must stay under --max-outage, and the
   zonefiles must reach the served serial afterwards;
2. unbound is stopped (SIGTERM): it must exit 0 with every zonefile
   complete and at the served serial, and start again serving it, with
   auth-zone-io-thread yes and no; there, unbound-control auth_zone_reload
   of a zonefile that does not parse must answer an error and keep the
   zone as it was.

usage: test_zone_reload.py BUILDDIR [--zones N] [--names N]
                           [--write-sec S] [--max-outage S]"""

import argparse
import os
import re
import signal
import sys
import tempfile
import time

import dns.message
import dns.query
import dns.rdatatype

from harness.zone import (Primary, Secondary, SoaPoller, build_preload,
                          check_zonefile, file_serial, notify, verdict,
                          write_zone)

# fwrite()s per sleep of the shim; the zonefile writer does about one per RR
EVERY = 100


def host_address(port, name):
    """The first A record unbound on 127.0.0.1:port answers for name."""
    try:
        r = dns.query.udp(dns.message.make_query(name, "A"), "127.0.0.1",
                          port=port, timeout=1.0)
    except Exception:
        return None
    for rrset in r.answer:
        if rrset.rdtype == dns.rdatatype.A:
            return rrset[0].address
    return None


def update(prim, sec, zones, serial, n, fails):
    """Give every zone the new serial at the primary, NOTIFY, and wait
    until unbound serves it for every zone (not yet on disk)."""
    for z in zones:
        write_zone(prim.zonefile(z), z, serial, n)
    prim.reload({z: serial for z in zones})
    for z in zones:
        notify(sec.port, z)
    for z in zones:
        if not sec.wait_serial(z, serial, timeout=120, on_disk=False):
            fails.append("%s: serial %d not served" % (z, serial))
            return False
    return True


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    ap.add_argument("--zones", type=int, default=4)
    ap.add_argument("--names", type=int, default=20000)
    ap.add_argument("--write-sec", type=float, default=6.0,
                    help="how long the shim makes one zonefile write take")
    ap.add_argument("--max-outage", type=float, default=3.0)
    a = ap.parse_args()
    fails = []
    n = a.names
    zones = ["z%d.example." % i for i in range(a.zones)]
    usec = int(a.write_sec * 1e6 * EVERY / (n + 4))
    with tempfile.TemporaryDirectory(prefix="steady-zreload-") as tmp:
        shim = build_preload(tmp, "slowshim.c")
        slow = os.path.join(tmp, "slow")
        prim = Primary(os.path.join(tmp, "nsd"), zones)
        for z in zones:
            write_zone(prim.zonefile(z), z, 1, n)
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        zones, threads=2, io_thread=True)
        # also for a build with AddressSanitizer: the shim goes first
        wrapper = ["env", "LD_PRELOAD=" + shim,
                   "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1",
                   "STEADY_SLOW=" + slow,
                   "STEADY_SLOW_USEC=%d" % usec, "STEADY_SLOW_EVERY=%d" % EVERY]
        prim.start({z: 1 for z in zones})
        poller = None
        try:
            sec.start(wrapper=wrapper, timeout=120)
            for z in zones:
                if not sec.wait_serial(z, 1, timeout=120):
                    fails.append("%s: first transfer not on disk" % z)
                    raise StopIteration

            # 1. SIGHUP with the writes of serial 2 queued
            open(slow, "w").close()
            if not update(prim, sec, zones, 2, n, fails):
                raise StopIteration
            st = sec.stats()
            print("SIGHUP with %s zonefile writes queued; served %s, on disk %s" % (
                st["authzone.write.queued"], [sec.serial(z) for z in zones],
                [file_serial(sec.zonefile(z)) for z in zones]))
            poller = SoaPoller(sec.port, zones)
            poller.start()
            time.sleep(0.3)
            starts = sec.read_log().count("start of service")
            t_hup = time.monotonic()
            sec.proc.send_signal(signal.SIGHUP)
            deadline = t_hup + 120
            while sec.read_log().count("start of service") == starts:
                if time.monotonic() > deadline or sec.proc.poll() is not None:
                    fails.append("no reload after SIGHUP")
                    raise StopIteration
                time.sleep(0.05)
            time.sleep(2.0)
            poller.stop()
            rows = [r for r in poller.rows if r[0] >= t_hup - 0.3]
            poller = None
            back = [(t - t_hup, z, s) for t, z, s in rows if s is not None and s < 2]
            for t, z, s in back[:5]:
                fails.append("%s: serial %d served %.2f s after SIGHUP, serial 2 before" % (
                    z, s, t))
            if back:
                print("%d answers with an older serial after SIGHUP" % len(back))
            answered = [t for t, z, s in rows if s is not None]
            gaps = [b - a_ for a_, b in zip(answered, answered[1:])]
            outage = max(gaps) if gaps else float("inf")
            print("reload outage (longest time without an SOA answer): %.2f s; "
                  "%d queries, %d answered, %d with an older serial" % (
                      outage, len(rows), len(answered), len(back)))
            if outage > a.max_outage:
                fails.append("reload outage %.2f s, limit %.2f s" % (outage, a.max_outage))
            os.unlink(slow)
            for z in zones:
                if sec.serial(z) != 2:
                    fails.append("%s: serves %s after the reload, not 2" % (z, sec.serial(z)))
                if not sec.wait_serial(z, 2, timeout=60):
                    fails.append("%s: zonefile at serial %s after the reload, served 2" % (
                        z, file_serial(sec.zonefile(z))))

            # 2. stop with the writes of serial 3 queued
            open(slow, "w").close()
            if not update(prim, sec, zones, 3, n, fails):
                raise StopIteration
            st = sec.stats()
            print("stop with %s zonefile writes queued; served %s, on disk %s" % (
                st["authzone.write.queued"], [sec.serial(z) for z in zones],
                [file_serial(sec.zonefile(z)) for z in zones]))
            t0 = time.monotonic()
            rc = sec.stop(timeout=120)
            print("stopped in %.2f s, exit status %s" % (time.monotonic() - t0, rc))
            os.unlink(slow)
            if rc != 0:
                fails.append("exit status %s" % rc)
            for z in zones:
                s, why = check_zonefile(sec.zonefile(z), z, n)
                if why or s != 3:
                    fails.append("%s: zonefile after stop: %s, serial %s, served 3" % (
                        z, why, s))
            log = sec.read_log()
            print("\n".join(l for l in log.splitlines() if re.search(
                "stopping|reload|older serial|zonefile", l))[-3000:])
            for l in log.splitlines():
                if (" error:" in l or "fatal" in l or "assertion" in l
                        or "Sanitizer" in l):
                    fails.append("log: " + l)
            # it starts again from the files, with the served serial; and
            # auth_zone_reload of a zonefile that does not parse keeps the
            # zone, with both auth-zone-io-thread values
            prim.stop()
            for i, mode in enumerate(("yes", "no")):
                if mode == "no":
                    # its config replaces the one of the stopped unbound
                    sec = Secondary(a.builddir, sec.rundir, prim.port, zones,
                                    threads=2, io_thread=False)
                srv = sec
                srv.start(timeout=120)
                for z in zones:
                    if srv.serial(z) != 3:
                        fails.append("%s: after restart (io thread %s) serves %s, not 3" % (
                            z, mode, srv.serial(z)))
                z = zones[i]
                with open(srv.zonefile(z)) as f:
                    good = f.read()
                with open(srv.zonefile(z), "a") as f:
                    f.write("bad line with no type\n")
                r = srv.control("auth_zone_reload", z, check=False)
                print("io thread %s: auth_zone_reload of a bad zonefile: %s" % (
                    mode, r.stdout.strip()))
                if not r.stdout.startswith("error"):
                    fails.append("auth_zone_reload of a bad zonefile (io thread %s): %r" % (
                        mode, r.stdout))
                last = "h%d.%s" % (n - 1, z)
                want = "10.3.%d.%d" % (((n - 1) >> 8) & 255, (n - 1) & 255)
                if srv.serial(z) != 3 or host_address(srv.port, last) != want:
                    fails.append("%s: after a failed auth_zone_reload (io thread %s): "
                                 "serial %s, %s %s" % (z, mode, srv.serial(z), last,
                                                       host_address(srv.port, last)))
                if srv.stop() != 0:
                    fails.append("stop after restart (io thread %s): exit status not 0" % mode)
                with open(srv.zonefile(z), "w") as f:
                    f.write(good)
            for l in sec.read_log().splitlines():
                if "Sanitizer" in l or "fatal" in l:
                    fails.append("log after restart: " + l)
        except StopIteration:
            pass
        finally:
            if poller is not None:
                poller.stop()
            sec.kill()
            prim.stop()
            if fails:
                print(sec.read_log()[-3000:])
    return verdict(fails, "reload and stop with queued zonefile writes")


if __name__ == "__main__":
    sys.exit(main())
