#!/usr/bin/env python3
"""A zone that fast_reload makes an RPZ keeps its data served when that is
newer than its zonefile, with the policies of that data (issue 66,
finding 1: the zones are compared, and those policies made, before
fast_reload takes its global locks, not under them).

NSD serves pol.example. (--names names h0..hN, each an A record
10.<serial>.x.y); the built unbound, with the auth-zone I/O thread, is
its secondary as an auth-zone, beside plain.example. that does not
change. Serial 2 is transferred and written; then
the zonefile is put back to serial 1, and unbound-control fast_reload
(with --nopause, +p) loads a config in which the zone is an rpz: clause.
The data served (serial 2) is newer than the file, so it is kept, and it
must get its policies: the QNAME trigger h5. answers 10.2.0.5, not 10.1.0.5
(the file's) nor the answer without a policy (SERVFAIL, no upstream);
the log says serial 2 was kept, by the auth-zone I/O thread (issue 67:
the thread is the one writer of zone data, fast_reload waits for it),
and (verbosity 4) that its policies
were made before fast_reload's locks, and that both zones were compared
before them and only pol.example. again under them; serial 2 is written to the
zonefile after the reload; unbound stops with exit status 0
and, in a sanitizer build, without a report. With --probe, a thread asks
a local-data name all the while and the longest wait for an answer
during the fast_reload is printed (doc/bench-fast-reload-rpz.md).

usage: test_zone_fast_reload_rpz.py BUILDDIR [--nopause] [--names N] [--probe]"""

import argparse
import os
import sys
import tempfile
import time

import dns.message
import dns.query

from harness.zone import (Primary, Secondary, WaitProbe, check_clean_exit,
                          checker, file_serial, log_threads, notify, rpz_clause,
                          verdict, wait_for, write_zone)

ZONE = "pol.example."
# a zone beside it that the reload does not change
PLAIN = "plain.example."


def policy_answer(ub, name):
    """The A records unbound answers for name, or the rcode's text."""
    q = dns.message.make_query(name, "A")
    try:
        r = dns.query.udp(q, "127.0.0.1", port=ub.port, timeout=3)
    except Exception:
        return "no answer"
    got = [rr.to_text() for rrset in r.answer for rr in rrset]
    return got or dns.rcode.to_text(r.rcode())


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("builddir")
    ap.add_argument("--nopause", action="store_true", help="fast_reload +p")
    ap.add_argument("--names", type=int, default=1000)
    ap.add_argument("--probe", action="store_true")
    a = ap.parse_args()
    fails, check = checker()
    with tempfile.TemporaryDirectory(prefix="steady-zfr-rpz-") as tmp:
        prim = Primary(os.path.join(tmp, "nsd"), [ZONE, PLAIN])
        write_zone(prim.zonefile(ZONE), ZONE, 1, a.names)
        write_zone(prim.zonefile(PLAIN), PLAIN, 1, 10)
        prim.start({ZONE: 1, PLAIN: 1})
        ub = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                       [ZONE, PLAIN], io_thread=True, verbosity=4,
                       extra="local-data: \"probe. A 192.0.2.1\"\n")
        rc = None
        try:
            ub.start()
            check(ub.wait_serial(ZONE, 1, timeout=60) and
                  ub.wait_serial(PLAIN, 1, timeout=60),
                  "serial 1 transferred, served and written")
            write_zone(prim.zonefile(ZONE), ZONE, 2, a.names)
            prim.reload({ZONE: 2})
            notify(ub.port, ZONE)
            check(ub.wait_serial(ZONE, 2, timeout=60),
                  "serial 2 transferred, served and written")
            # the zonefile is older than the data served, and the zone
            # becomes an RPZ
            write_zone(ub.zonefile(ZONE), ZONE, 1, a.names)
            rpz_clause(ub, ZONE)
            probe = WaitProbe(ub.port, "probe.")
            if a.probe:
                probe.start()
                time.sleep(0.5)
            t = time.monotonic()
            r = ub.control("fast_reload", *(["+p"] if a.nopause else []),
                           check=False, timeout=120)
            took = time.monotonic() - t
            if a.probe:
                probe.stopping.set()
                probe.join()
                print("fast_reload%s of %d names: %.3f s; longest wait for an "
                      "answer %.1f ms, %d not answered" % (
                          " +p" if a.nopause else "", a.names, took,
                          probe.longest * 1000, probe.lost))
            check(r.returncode == 0 and "ok" in r.stdout.split(),
                  "fast_reload%s that makes %s an RPZ answers ok: %s" % (
                      " +p" if a.nopause else "", ZONE,
                      (r.stdout + r.stderr).strip()[-200:]))
            check("keeping serial 2" in ub.read_log(),
                  "fast_reload kept serial 2 over the zonefile's serial 1")
            # the I/O thread is the one writer of zone data while it
            # runs: it moves the data kept, fast_reload waits for it
            kept = log_threads(ub.read_log(), "keeping serial 2")
            check(kept == {str(ub.threads)},
                  "the data kept was put in place by the auth-zone I/O "
                  "thread (threads %s, the I/O thread %d)" % (
                      sorted(kept), ub.threads))
            check("the RPZ policies of serial 2 were made before fast_reload's "
                  "locks" in ub.read_log(),
                  "the policies of the kept data were made before fast_reload "
                  "took its global locks")
            check("fast_reload: 2 auth zones compared before the locks, 1 of "
                  "them again under them" in ub.read_log(),
                  "both zones were compared before fast_reload's locks, and "
                  "under them only %s, whose data is kept, again" % ZONE)
            want = ["10.2.0.5"]
            got = []
            check(wait_for(lambda: got.append(policy_answer(ub, "h5.")) or
                           got[-1] == want, 10),
                  "the QNAME trigger h5. answers from the kept serial 2: %s "
                  "(answers %s)" % (want, got[-3:]))
            check(policy_answer(ub, "h%d." % (a.names - 1)) ==
                  ["10.2.%d.%d" % (((a.names - 1) >> 8) & 255, (a.names - 1) & 255)],
                  "the last trigger answers from serial 2 too")
            check(wait_for(lambda: file_serial(ub.zonefile(ZONE)) == 2, 60),
                  "the kept serial 2 is written to the zonefile after the "
                  "reload (file %s)" % file_serial(ub.zonefile(ZONE)))
        finally:
            rc = ub.stop()
            prim.stop()
        check_clean_exit(check, rc, ub.read_log())
        if fails:
            print(ub.read_log()[-3000:])
    return verdict(fails, "zone-fast-reload-rpz")


if __name__ == "__main__":
    sys.exit(main())
