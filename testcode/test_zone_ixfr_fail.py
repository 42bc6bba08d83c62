#!/usr/bin/env python3
"""An IXFR that fails half way is never written to the zonefile and never
kept over a reload. A scripted primary (harness.zone.ScriptedPrimary)
serves a small zone: serial 1, then good IXFRs (applied in place), then
an IXFR to the last serial that deletes an RR the zone does not have and
adds one that no version has. apply_ixfr applies all of it and then
fails (a "softfail"): the data in memory carries the last serial's SOA
and a record of no version. The follow-up AXFR is held (the primary does
not answer full transfers) until the test lets it go.

1. --io-thread yes only: a zonefile write of the zone, queued by the good
   IXFR to serial 3, still waits when the failing IXFR to serial 4 is
   applied (NSD serves two large zones whose slowed zonefile writes,
   testcode/slowshim.c, --write-sec each, keep the I/O thread busy, and
   an apply goes before queued writes). The write must not put the
   partly applied data on disk.
2. SIGHUP before the follow-up AXFR: the reload must not keep the partly
   applied data (it has a newer serial than the zonefile), nor serve or
   write it.
Throughout, the zone never answers the record of no version, and the
zonefile is always exactly a version the primary had. After the bad
IXFR the zone's statistics count two IXFRs, and as transfers not applied
(authzone.zone.xfr.failed) at least one and at most the number of bad
IXFRs the primary sent. In the end the
AXFR is let go, and the zone is served and written at serial 4.

With --rpz the zone is an rpz: clause: its records are QNAME triggers,
the record of no version is the trigger for "bogus.", and the serial
served is read from the answer of the trigger for "h1.". With the I/O
thread, the RPZ must keep serial 3 while the AXFR is held: what the
failed IXFR applied is undone (issue 66: before, the RPZ was cleared
until the AXFR, and blocked nothing).

usage: test_zone_ixfr_fail.py BUILDDIR [--io-thread yes|no] [--write-sec S]
                              [--rpz]"""

import argparse
import os
import signal
import sys
import tempfile
import time

import dns.message
import dns.query
import dns.rcode
import dns.zone

from harness.zone import (Primary, ScriptedPrimary, Secondary, build_preload,
                          file_serial, notify, rpz_clause, verdict, wait_for,
                          write_zone)

ZONE = "ixf.example."
BIGS = ["big1.example.", "big2.example."]
NBIG = 20000
EVERY = 100
NHOSTS = 50
BOGUS = "bogus." + ZONE
# the serial of the bad IXFR
LAST = 4


def soa(serial):
    return "%s 3600 IN SOA ns.%s admin.%s %d 3600 600 86400 300" % (
        ZONE, ZONE, ZONE, serial)


def host1(serial):
    return "h1.%s 3600 IN A 10.%d.0.1" % (ZONE, serial)


def version(serial):
    """The zone at serial: h0..h49 A 10.1.0.i, but h1 A 10.<serial>.0.1."""
    return ([soa(serial), "%s 3600 IN NS ns.%s" % (ZONE, ZONE),
             "ns.%s 3600 IN A 127.0.0.1" % ZONE] +
            ["h%d.%s 3600 IN A 10.1.0.%d" % (i, ZONE, i)
             for i in range(NHOSTS) if i != 1] + [host1(serial)])


def bad_ixfr(serial):
    """The IXFR from serial-1 to serial as the scripted primary sends it:
    the change of h1, a delete of an RR that is not there (the softfail)
    and an add of a record of no version."""
    return ([host1(serial - 1), "absent.%s 3600 IN A 10.9.9.9" % ZONE],
            [host1(serial), "%s 3600 IN A 10.66.66.66" % BOGUS])


def canon(lines):
    """A set of (name, type, rdata) of RR text lines."""
    out = set()
    for line in lines:
        name, _ttl, _cls, rtype, rdata = line.split(None, 4)
        out.add((name.lower(), rtype.upper(), " ".join(rdata.split()).lower()))
    return out


def file_version(path):
    """The serial whose version the zonefile at path is exactly, or a
    description of what it is instead."""
    try:
        z = dns.zone.from_file(path, origin=ZONE, relativize=False)
    except FileNotFoundError:
        return "no file"
    except Exception as e:
        return "unreadable: %s" % e
    lines = []
    for name, ttl, rdata in z.iterate_rdatas():
        lines.append("%s %d IN %s %s" % (name.to_text(), ttl,
                                         dns.rdatatype.to_text(rdata.rdtype),
                                         rdata.to_text()))
    got = canon(lines)
    for s in range(1, LAST + 1):
        if got == canon(version(s)):
            return s
    return "no version the primary had (serial %s, %d RRs%s)" % (
        file_serial(path), len(got),
        ", with %s" % BOGUS if any(n == BOGUS for n, _, _ in got) else "")


def addresses(sec, name):
    """The A records unbound answers for name."""
    try:
        r = dns.query.udp(dns.message.make_query(name, "A"), "127.0.0.1",
                          port=sec.port, timeout=2)
    except Exception:
        return []
    return [rr.to_text() for rrset in r.answer for rr in rrset]


def bogus_answered(sec, rpz):
    """True if the zone answers the record that no version has (for an
    RPZ, its trigger)."""
    return "10.66.66.66" in addresses(sec, "bogus." if rpz else BOGUS)


def served_serial(sec, rpz):
    """The serial of the zone that unbound answers from: the SOA, or for
    an RPZ the second octet of h1's trigger's address."""
    if not rpz:
        return sec.serial(ZONE)
    for a in addresses(sec, "h1."):
        if a.startswith("10.") and a.endswith(".0.1"):
            return int(a.split(".")[1])
    return None


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    ap.add_argument("--io-thread", choices=["yes", "no"], default="yes")
    ap.add_argument("--write-sec", type=float, default=6.0)
    ap.add_argument("--rpz", action="store_true")
    a = ap.parse_args()
    io = a.io_thread == "yes"
    fails = []
    usec = int(a.write_sec * 1e6 * EVERY / (NBIG + 4))
    with tempfile.TemporaryDirectory(prefix="steady-zixfail-") as tmp:
        shim = build_preload(tmp, "slowshim.c")
        slow = os.path.join(tmp, "slow")
        nsd = Primary(os.path.join(tmp, "nsd"), BIGS)
        for z in BIGS:
            write_zone(nsd.zonefile(z), z, 1, NBIG)
        prim = ScriptedPrimary(ZONE, {s: version(s) for s in range(1, LAST + 1)})
        prim.bad_ixfr[(LAST - 1, LAST)] = bad_ixfr(LAST)
        ports = {z: nsd.port for z in BIGS}
        ports[ZONE] = prim.port
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), ports,
                        BIGS + [ZONE], threads=2, io_thread=io, verbosity=4,
                        extra="\textended-statistics: yes")
        if a.rpz:
            rpz_clause(sec, ZONE)
        zfile = sec.zonefile(ZONE)

        def zone_at(serial, timeout, on_disk=True):
            """Wait until the zone is served (and on disk) at serial."""
            return wait_for(lambda: served_serial(sec, a.rpz) == serial and (
                not on_disk or file_serial(zfile) == serial), timeout)

        wrapper = ["env", "LD_PRELOAD=" + shim,
                   "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1",
                   "STEADY_SLOW=" + slow,
                   "STEADY_SLOW_USEC=%d" % usec, "STEADY_SLOW_EVERY=%d" % EVERY]
        nsd.start({z: 1 for z in BIGS})
        seen_bogus = []

        def check(when):
            """The zone does not answer the record of no version, and
            the zonefile is a version the primary had."""
            if bogus_answered(sec, a.rpz) and not seen_bogus:
                seen_bogus.append(when)
                fails.append("%s: %s answered 10.66.66.66, a record of "
                             "no version (partly applied IXFR served)" % (
                                 when, "bogus." if a.rpz else BOGUS))
            v = file_version(zfile)
            if not isinstance(v, int):
                fails.append("%s: zonefile is %s" % (when, v))
            return v

        def fail_ixfr(when):
            """The last serial with the bad IXFR, full transfers held;
            wait until the apply failed (the worker asks for the AXFR)."""
            prim.hold_full = True
            held = prim.count("held")
            prim.set_serial(LAST)
            notify(sec.port, ZONE)
            if not wait_for(lambda: prim.count("held") > held, 60):
                fails.append("%s: no AXFR asked for after the bad IXFR "
                             "(requests %s)" % (when, prim.requests[-10:]))
                raise StopIteration

        try:
            sec.start(wrapper=wrapper, timeout=120)
            for z in BIGS:
                if not sec.wait_serial(z, 1, timeout=120):
                    fails.append("%s: first transfer not on disk" % z)
                    raise StopIteration
            if not zone_at(1, 120):
                fails.append("%s: first transfer not on disk" % ZONE)
                raise StopIteration
            prim.set_serial(2)
            notify(sec.port, ZONE)
            if not zone_at(2, 30):
                fails.append("serial 2 (good IXFR) not served and on disk")
                raise StopIteration
            print("serial 2 by IXFR: zonefile is version %s" % check("serial 2"))

            if io:
                # 1. the first large zone's write runs, slowly; the
                # second one's apply and then serial 3's (a good IXFR)
                # wait behind it. They run in that order, and queue their
                # writes in that order: serial 3's waits while the
                # second large zone is written
                open(slow, "w").close()
                write_zone(nsd.zonefile(BIGS[0]), BIGS[0], 2, NBIG)
                nsd.reload({BIGS[0]: 2, BIGS[1]: 1})
                notify(sec.port, BIGS[0])
                if not sec.wait_serial(BIGS[0], 2, timeout=60, on_disk=False):
                    fails.append("%s not at serial 2" % BIGS[0])
                    raise StopIteration
                write_zone(nsd.zonefile(BIGS[1]), BIGS[1], 2, NBIG)
                nsd.reload({BIGS[0]: 2, BIGS[1]: 2})
                notify(sec.port, BIGS[1])
                time.sleep(1.5)  # its transfer, before the small zone's
                prim.set_serial(3)
                notify(sec.port, ZONE)
                if not zone_at(3, 60, on_disk=False):
                    fails.append("serial 3 (good IXFR) not served")
                    raise StopIteration
                if file_serial(zfile) != 2:
                    fails.append("serial 3 written before the large zone's "
                                 "write: the test did not hold it (file %s)" %
                                 file_serial(zfile))
            else:
                prim.set_serial(3)
                notify(sec.port, ZONE)
                if not zone_at(3, 30):
                    fails.append("serial 3 (good IXFR) not served and on disk")
                    raise StopIteration
            fail_ixfr("bad IXFR")
            check("after the bad IXFR")
            if a.rpz and io:
                # an RPZ is a security control: the I/O thread undoes
                # what it applied of the failed IXFR, so the triggers of
                # serial 3 stay while the AXFR is held (cleared, they
                # all let their names through)
                kept = [served_serial(sec, True) for _ in range(5)]
                if kept != [3] * 5:
                    fails.append("the RPZ does not keep serial 3 while the "
                                 "AXFR after the failed IXFR is held (h1. "
                                 "answers serial %s)" % kept)
            # the zone's statistics count it as a transfer not applied,
            # beside the two good IXFRs; the zone may have asked for the
            # bad IXFR again meanwhile (after the held AXFR)
            st = sec.stats()
            nixfr, nfail = (st.get("authzone.zone.xfr.%s.%s" % (k, ZONE)) for k in ("ixfr", "failed"))
            bad = prim.requests.count("IXFR %d" % (LAST - 1))
            print("after the bad IXFR: xfr.ixfr %s, xfr.failed %s; the primary's requests: %s"
                  % (nixfr, nfail, " ".join(prim.requests)))
            if nixfr != "2" or not 1 <= int(nfail or 0) <= bad:
                fails.append("after the bad IXFR: xfr.ixfr %s and xfr.failed %s, want 2 "
                             "and 1 to %d (the bad IXFRs sent)" % (nixfr, nfail, bad))
            if io:
                os.unlink(slow)
                if not wait_for(lambda: int(sec.stats()["authzone.write.queued"]) == 0, 120):
                    fails.append("zonefile writes still queued")
                time.sleep(0.5)
                print("queued write done: zonefile is version %s" % check(
                    "after the queued write"))

            # 2. a reload before the follow-up AXFR
            os.kill(sec.proc.pid, signal.SIGHUP)
            time.sleep(2)
            print("after SIGHUP: served serial %s, zonefile is version %s" % (
                served_serial(sec, a.rpz), check("after SIGHUP")))
            check("after SIGHUP, later")

            # the AXFR is let go
            prim.hold_full = False
            notify(sec.port, ZONE)
            if not zone_at(LAST, 60):
                fails.append("serial %d not served and on disk after the AXFR "
                             "(served %s, file %s)" % (LAST, served_serial(sec, a.rpz),
                                                        file_serial(zfile)))
            v = check("at the end")
            print("after the AXFR: served serial %s, zonefile is version %s" % (
                served_serial(sec, a.rpz), v))
            if v != LAST:
                fails.append("zonefile at the end is version %s, want %d" % (v, LAST))
            if sec.stop() != 0:
                fails.append("unbound did not exit cleanly")
            log = sec.read_log()
            if "IXFR applied in place" not in log and io:
                fails.append("the good IXFR was not applied in place")
            for bad in ("assertion", "fatal", "ERROR: AddressSanitizer"):
                if bad in log:
                    fails.append("log has %r" % bad)
        except StopIteration:
            pass
        finally:
            sec.kill()
            nsd.stop()
            prim.stop()
        if fails:
            print(sec.read_log()[-4000:])
    return verdict(fails, "IXFR that fails half way (io thread %s%s)" % (
        a.io_thread, ", RPZ" if a.rpz else ""))


if __name__ == "__main__":
    sys.exit(main())
