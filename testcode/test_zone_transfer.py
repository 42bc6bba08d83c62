#!/usr/bin/env python3
"""Zone transfers with a real primary: NSD on loopback serves a generated
zone, the built unbound is its secondary with a zonefile (two worker
threads). The first transfer must land on disk; then the serial is bumped
several times as fast as NSD reloads, without waiting for unbound, and
the zonefile must end at the last serial, parse completely, and never go
back to an older serial on the way (checked every few milliseconds while
it happens). Also: the statistics of the writes and of the auth zone
queries (num.query.authzone.up/down counted per thread, with stats and
stats_noreset), list_auth_zones (the serial, and since when: the time of
its transfer), and no temporary file left.

With --no-thread-support the build has no threads: the secondary (one
worker) is configured with auth-zone-io-thread: yes and must work as with
no.

usage: test_zone_transfer.py BUILDDIR [--io-thread yes|no] [--records N]
                             [--no-thread-support]"""

import argparse
import glob
import os
import re
import sys
import tempfile
import threading
import time

from harness.zone import (Primary, Secondary, check_zonefile, file_serial,
                      ldns_check, notify, verdict, write_zone)

ZONE = "example.net."
UPZONE = "example.org."


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    ap.add_argument("--io-thread", choices=["yes", "no"], default="yes")
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--bumps", type=int, default=5)
    ap.add_argument("--no-thread-support", action="store_true")
    a = ap.parse_args()
    # whether the I/O thread applies the transfers
    io_applies = a.io_thread == "yes" and not a.no_thread_support
    fails = []
    n = a.records
    with tempfile.TemporaryDirectory(prefix="steady-zxfr-") as tmp:
        prim = Primary(os.path.join(tmp, "nsd"), [ZONE, UPZONE])
        write_zone(prim.zonefile(ZONE), ZONE, 1, n)
        write_zone(prim.zonefile(UPZONE), UPZONE, 1, 1000)
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        [ZONE, UPZONE],
                        # without threads, workers are processes, each
                        # with its own copy of the zones: only the one
                        # that transfers a zone has the new serial
                        threads=1 if a.no_thread_support else 2,
                        io_thread=(a.io_thread == "yes"),
                        upstream_only=[UPZONE])
        zfile = sec.zonefile(ZONE)
        prim.start({ZONE: 1, UPZONE: 1})
        try:
            sec.start()
            t0 = time.monotonic()
            if not sec.wait_serial(ZONE, 1, timeout=120):
                fails.append("first transfer: serial 1 not served and on "
                             "disk after 120 s (served %s, file %s)" % (
                                 sec.serial(ZONE), file_serial(zfile)))
                raise StopIteration
            print("first transfer of %d records served and on disk after "
                  "%.2f s" % (n, time.monotonic() - t0))
            serial, why = check_zonefile(zfile, ZONE, n)
            if why:
                fails.append("first zonefile: " + why)

            # watch the zonefile while it is rewritten
            seen = []
            stop = threading.Event()

            def watch():
                while not stop.is_set():
                    s = file_serial(zfile)
                    if not seen or seen[-1] != s:
                        seen.append(s)
                    time.sleep(0.003)
            w = threading.Thread(target=watch, daemon=True)
            w.start()
            last = 1 + a.bumps
            # list_auth_zones says since when the last serial is served, in
            # seconds: one passes first, so that an older time shows
            time.sleep(1.1)
            bumps_wall = int(time.time())
            t0 = time.monotonic()
            for s in range(2, last + 1):
                write_zone(prim.zonefile(ZONE), ZONE, s, n)
                prim.reload({ZONE: s})
                rc, secs = notify(sec.port, ZONE)
                if rc != "NOERROR":
                    fails.append("NOTIFY for serial %d: %s" % (s, rc))
            print("%d serial bumps in %.2f s" % (a.bumps, time.monotonic() - t0))
            if not sec.wait_serial(ZONE, last, timeout=120):
                fails.append("serial %d not served and on disk after 120 s "
                             "(served %s, file %s)" % (
                                 last, sec.serial(ZONE), file_serial(zfile)))
            time.sleep(0.2)
            stop.set()
            w.join()
            print("zonefile serials seen:", seen)
            if None in seen:
                fails.append("the zonefile was missing or without a SOA "
                             "line at some moment: %s" % seen)
            ss = [s for s in seen if s is not None]
            if ss != sorted(ss):
                fails.append("an older serial replaced a newer one on disk: "
                             "%s" % seen)
            if not ss or ss[-1] != last:
                fails.append("zonefile ends at %s, not %d" % (ss[-1:], last))
            serial, why = check_zonefile(zfile, ZONE, n)
            if why:
                fails.append("final zonefile: " + why)
            why = ldns_check(zfile, ZONE)
            if why:
                fails.append(why)
            left = glob.glob(zfile + ".tmp*")
            if left:
                fails.append("temporary files left: %s" % left)

            # answers and list_auth_zones
            import dns.message
            import dns.query
            r = dns.query.udp(dns.message.make_query("h5." + ZONE, "A"),
                              "127.0.0.1", port=sec.port, timeout=2)
            addrs = [x.address for rr in r.answer for x in rr]
            if addrs != ["10.%d.0.5" % (last % 256)]:
                fails.append("h5 answer %s, want 10.%d.0.5" % (addrs, last))
            out = sec.control("list_auth_zones").stdout
            m = re.search(r"^%s\tserial (\d+)\t since (\d+)" % re.escape(ZONE),
                          out, re.M)
            if not m or int(m.group(1)) != last:
                fails.append("list_auth_zones: %r, want serial %d since the "
                             "time of its transfer" % (out, last))
            elif int(m.group(2)) < bumps_wall:
                fails.append("list_auth_zones: serial %d since %s, before "
                             "its transfer (%d)" % (last, m.group(2),
                                                    bumps_wall))

            st = sec.stats()
            print({k: v for k, v in st.items() if "authzone" in k})
            if int(st["num.authzone.write"]) < 2:
                fails.append("num.authzone.write=%s, want >= 2" % st["num.authzone.write"])
            if int(st["num.authzone.write.failed"]) != 0:
                fails.append("num.authzone.write.failed=%s" % st["num.authzone.write.failed"])
            if int(st["authzone.write.queued"]) != 0:
                fails.append("authzone.write.queued=%s" % st["authzone.write.queued"])
            applies = int(st["num.authzone.xfr.apply"])
            if io_applies and applies < 2:
                fails.append("num.authzone.xfr.apply=%d with the I/O thread" % applies)
            if not io_applies and applies != 0:
                fails.append("num.authzone.xfr.apply=%d without the I/O thread" % applies)

            # auth zone query counters: per thread, summed, reset by stats
            sec.stats("stats")
            down = 50
            for i in range(down):
                dns.query.udp(dns.message.make_query("h%d.%s" % (i, ZONE), "A"),
                              "127.0.0.1", port=sec.port, timeout=2,
                              source_port=20000 + i)
            up = 30
            for i in range(up):
                r = dns.query.udp(dns.message.make_query("h%d.%s" % (i, UPZONE), "A"),
                                  "127.0.0.1", port=sec.port, timeout=2,
                                  source_port=21000 + i)
                if not r.answer:
                    fails.append("no answer from the for-upstream zone for h%d" % i)
                    break
            for cmd in ("stats_noreset", "stats_noreset", "stats"):
                st = sec.stats(cmd)
                got = (int(st["num.query.authzone.down"]), int(st["num.query.authzone.up"]))
                if got != (down, up):
                    fails.append("%s: num.query.authzone.down/up = %s, want %s"
                                 % (cmd, got, (down, up)))
            st = sec.stats("stats_noreset")
            got = (int(st["num.query.authzone.down"]), int(st["num.query.authzone.up"]))
            if got != (0, 0):
                fails.append("after stats: num.query.authzone.down/up = %s" % (got,))

            rc = sec.stop()
            if rc != 0:
                fails.append("unbound exit status %s" % rc)
            log = sec.read_log()
            for bad in ("error:", "assertion", "fatal"):
                if bad in log:
                    fails.append("log has %r: %s" % (bad, [
                        l for l in log.splitlines() if bad in l][:5]))
        except StopIteration:
            pass
        finally:
            sec.kill()
            prim.stop()
            if fails:
                print(sec.read_log()[-4000:])
    return verdict(fails, "zone transfer (io thread %s%s)" % (
        a.io_thread, ", no thread support" if a.no_thread_support else ""))


if __name__ == "__main__":
    sys.exit(main())
