#!/usr/bin/env python3
"""An IXFR applied in place on the auth-zone I/O thread holds the zone's
write lock for the apply, but not the lock of its transfer state
(xfr->lock), so the workers can still handle a NOTIFY for that zone and
finish another zone's transfer meanwhile.

Knot serves two zones and answers IXFR from its journal; the built
unbound (auth-zone I/O thread) is their secondary. Serial 2 of the first
zone adds a TXT RRset whose size is that of no other allocation; an
LD_PRELOAD shim (testcode/oomshim.c, STEADY_HOLD_CALLOC) holds the
calloc of its packed data on the I/O thread, that is, in the middle of
the in-place apply, for --hold seconds. Meanwhile:

a NOTIFY for the first zone (a worker takes that zone's xfr->lock) and
one for the second must each be answered within --max-wait seconds, and
so must unbound-control stats_noreset, whose extended statistics give
each zone's serial (from its transfer state, not under the zone's lock),
serial 1 for the first zone. (unbound-control list_auth_zones is not
tried: it takes every zone's lock, as upstream's does, and the first
zone's write lock is held, by design.)

Then the hold ends, and serial 2 must be served and written.

usage: test_zone_inplace_lock.py BUILDDIR [--hold S] [--max-wait S]"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

from harness.zone import (KnotPrimary, Secondary, build_preload, notify,
                          shim_log_lines, struct_size, verdict, wait_for,
                          zone_text)

ZONE, OTHER = "inplace.example.", "other.example."
N = 2000
# the TXT RRset of serial 2: its rdata length (two octets of length, and
# character strings of 200 octets each with their length octet) makes the
# calloc of its packed data a size of its own
STRINGS = 37
RDATA_LEN = 2 + STRINGS * 201


def serial2_text():
    return zone_text(ZONE, 2, N, fixed=True) + "held IN TXT %s\n" % " ".join(
        ["\"%s\"" % ("x" * 200)] * STRINGS)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("builddir")
    ap.add_argument("--hold", type=float, default=4.0)
    ap.add_argument("--max-wait", type=float, default=1.0)
    a = ap.parse_args()
    fails = []
    # packed_rrset_data, its one rr_len, rr_data and rr_ttl, the rdata
    size = (struct_size(a.builddir, "packed_rrset_data") + 8 + 8 + 8 + RDATA_LEN)
    with tempfile.TemporaryDirectory(prefix="steady-inplace-") as tmp:
        shim = build_preload(tmp, "oomshim.c")
        trigger = os.path.join(tmp, "hold.calloc")
        shimlog = os.path.join(tmp, "shim.log")
        prim = KnotPrimary(os.path.join(tmp, "knot"), [ZONE, OTHER])
        for z in (ZONE, OTHER):
            with open(prim.zonefile(z), "w") as f:
                f.write(zone_text(z, 1, N, fixed=True))
        prim.start({ZONE: 1, OTHER: 1}, timeout=120)
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        [ZONE, OTHER], io_thread=True, verbosity=3,
                        extra="\textended-statistics: yes")
        wrapper = ["env", "LD_PRELOAD=" + shim, "STEADY_HOLD_CALLOC=" + trigger,
                   "STEADY_HOLD_SIZE=%d" % size, "STEADY_OOM_LOG=" + shimlog]
        try:
            sec.start(wrapper=wrapper)
            for z in (ZONE, OTHER):
                if not sec.wait_serial(z, 1):
                    fails.append("%s not at serial 1" % z)
                    raise StopIteration
            with open(trigger, "w"):
                pass
            with open(prim.zonefile(ZONE), "w") as f:
                f.write(serial2_text())
            prim.reload({ZONE: 2})
            notify(sec.port, ZONE)
            if not wait_for(lambda: shim_log_lines(shimlog, "hold calloc"), 30):
                fails.append("the apply of serial 2 did not reach the held calloc "
                             "(size %d)" % size)
                raise StopIteration
            held_at = time.monotonic()
            for z in (ZONE, OTHER):
                rcode, secs = notify(sec.port, z, timeout=a.hold)
                print("NOTIFY for %s while the apply is held: %s after %.3f s"
                      % (z, rcode, secs))
                if rcode is None or secs > a.max_wait:
                    fails.append("NOTIFY for %s answered %s after %.3f s while %s's "
                                 "in-place apply was held, want within %.1f s"
                                 % (z, rcode, secs, ZONE, a.max_wait))
            # a scrape: the zones' health without waiting for the zone
            # that the apply holds
            # (the hold lasts until this test ends it, so a scrape that
            # waits for the zone's lock waits for the timeout)
            t0 = time.monotonic()
            try:
                r = sec.control("stats_noreset", check=False, timeout=a.hold)
                rc, out = r.returncode, r.stdout
            except subprocess.TimeoutExpired:
                rc, out = None, ""
            secs = time.monotonic() - t0
            stats = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
            serial = stats.get("authzone.zone.serial." + ZONE)
            print("stats_noreset while the apply is held: exit %s after %.3f s, %s's serial %s"
                  % (rc, secs, ZONE, serial))
            if rc != 0 or secs > a.max_wait or serial != "1":
                fails.append("stats_noreset ended (exit %s) after %.3f s with serial %s "
                             "while %s's in-place apply was held, want serial 1 within "
                             "%.1f s" % (rc, secs, serial, ZONE, a.max_wait))
            still = not shim_log_lines(shimlog, "release calloc")
            if not still:
                fails.append("the hold ended before the NOTIFYs were answered")
            time.sleep(max(0.0, a.hold - (time.monotonic() - held_at)))
            os.unlink(trigger)
            if not sec.wait_serial(ZONE, 2):
                fails.append("serial 2 of %s not served and written after the hold"
                             % ZONE)
            if "IXFR applied in place" not in sec.read_log():
                fails.append("serial 2 was not applied in place")
            if sec.stop() != 0:
                fails.append("unbound did not exit cleanly")
        except StopIteration:
            pass
        finally:
            if os.path.exists(trigger):
                os.unlink(trigger)
            sec.kill()
            prim.stop()
    return verdict(fails, "in-place IXFR apply does not hold xfr->lock")


if __name__ == "__main__":
    sys.exit(main())
