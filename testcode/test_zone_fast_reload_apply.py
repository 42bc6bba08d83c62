#!/usr/bin/env python3
"""fast_reload while the auth-zone I/O thread applies a transfer: the
zones fast_reload builds are read from the zonefiles, and a transfer that
is applied after fast_reload read them is newer than what it read. The
reload must not serve the older serial afterwards; nor may it keep the
zone's transfer state (which stays across fast_reload) at the newer
serial while the older data is served, for then the zone stays older
until the primary has yet another serial.

NSD serves two zones; the built unbound (auth-zone I/O thread) is their
secondary. An LD_PRELOAD shim (testcode/oomshim.c) holds the I/O thread
in a zonefile write (STEADY_HOLD) and in the apply of ZONE's serial 2, at
the calloc of a TXT RRset of a size of its own (STEADY_HOLD_CALLOC), so
that the apply ends while unbound-control fast_reload runs:

- by default, after fast_reload read ZONE's zonefile and compared it with
  the zone served (both serial 1): the thread is held in the write of
  OTHER's serial 2 when fast_reload starts, so fast_reload's wait for the
  queued writes is behind it, and the apply of ZONE's serial 2 behind
  that wait; the write ends, fast_reload reads, the apply is held;
- with --apply-first, before fast_reload read the zonefile, but with
  its zonefile write queued behind fast_reload's wait, and held while
  fast_reload reads (serial 2 is served meanwhile);
- with --queued-apply, the apply of a third zone, THIRD, is held (as
  ZONE's by default), and ZONE's apply is queued behind it when
  fast_reload replaces the zones, which gives ZONE another list of
  primaries: fast_reload stops ZONE's transfer with its apply still
  queued, and the apply is not run (it is for the replaced zones). The
  transfer of serial 3 after it makes a new apply for ZONE's transfer;
  the one left must not leak (an ASan build reports that at exit);
- with --same-primaries (with --queued-apply), the new configuration
  leaves ZONE as it is, so fast_reload does not change it and its
  transfer goes on: the apply queued when fast_reload replaced the zones
  must then be run on the zone that replaced ZONE's, not dropped and
  the zone transferred again (issue 41's finding 9): NSD's log has one
  transfer of ZONE for serial 2;
- with --drop-primary (with --queued-apply), the new configuration
  removes ZONE's primary instead, so fast_reload deletes ZONE's transfer
  while its apply is queued (issue 41's finding 2): unbound runs 4
  threads, and ZONE's NOTIFY is sent from a source port whose queries a
  worker other than 0 takes, so that transfer is not worker 0's; worker
  0 takes the change first, before the worker that owns the transfer
  gives up its apply. The apply must not run, nor its job be used after
  it was freed (an ASan build reports that); ZONE then answers serial 1,
  read from its zonefile, and the checks of serials 2 and 3 are not run;
- with --zonemd-hash (with the default order or --apply-first), the
  apply is held in the middle of its ZONEMD hash instead, at the digest
  update of the TXT RRset (STEADY_HOLD_DIGEST): zonemd-check: yes, and
  serial 2 is signed with a ZONEMD by ldns-signzone; with no trust
  anchor, the thread checks the hash in the apply. In the default order
  fast_reload has read the zonefiles and waits for the hash to end
  before it replaces the zones;
- with --ixfr-copy (with the default order or --apply-first), Knot is
  the primary instead of NSD, and ZONE's serial 2 comes as an IXFR that
  changes more names than the I/O thread applies in place: the thread
  copies the zone and applies the IXFR to the copy, and the calloc of
  the TXT RRset that the IXFR adds is held, with the copy built and
  part of the IXFR applied to it. The log must say that serial 2 was not
  applied in place, and Knot's that it sent an IXFR;
- with --zone-set (not with --queued-apply), the configuration that
  fast_reload reads also removes a zone (GONE), gives one another
  zonefile (CHANGE) and adds one (NEW): NEW and CHANGE must then answer
  serial 1, GONE nothing.

Checks: fast_reload answers ok; ZONE answers serial 2 within --wait
seconds afterwards, and its zonefile is serial 2; a transfer of serial 3
follows (its NOTIFY is sent again every 5 s, for a probe lost to load);
unbound logs that it kept the serial served; after ZONE answered serial
2 it never answers serial 1; unbound stops with exit status 0; with a
sanitizer build, its log has no sanitizer report.

usage: test_zone_fast_reload_apply.py BUILDDIR [--nopause] [--apply-first]
                                      [--queued-apply [--drop-primary |
                                                       --same-primaries]]
                                      [--zonemd-hash] [--ixfr-copy]
                                      [--zone-set] [--wait S]"""

import argparse
import os
import re
import sys
import tempfile
import threading
import time

import dns.message
import dns.query

from harness.zone import (KnotPrimary, Primary, Secondary, SoaPoller, build_preload,
                          changed_zone_set, checker, dnssec_keys, file_serial, notify,
                          check_clean_exit, shim_log_lines, sign_zone,
                          struct_size, threads_in_socket_read, verdict,
                          wait_for, write_zone, zone_text)

ZONE, OTHER, THIRD = "applied.example.", "other.example.", "third.example."
# --zone-set: removed, changed and added by the configuration fast_reload reads
GONE, CHANGE, NEW = "gone.example.", "change.example.", "new.example."
# names per zone: the held write is at its 1000th fwrite (about one per RR)
N = 3000
# the TXT RRset of ZONE's serial 2, whose packed data is a calloc of a
# size of its own (as in test_zone_inplace_lock.py)
STRINGS = 37
RDATA_LEN = 2 + STRINGS * 201
# the canonical form of that RRset, which the ZONEMD hash digests in one
# update: the owner held.applied.example. (22 octets), type, class, TTL,
# rdlength (10) and the rdata (its strings, without RDATA_LEN's 2 octets
# of rdlength)
DIGEST_LEN = 22 + 10 + STRINGS * 201
# --ixfr-copy: the names whose address changes between two serials, two
# RRs each: 1200 RRs, more than the 1000 and the eighth of N names that
# the I/O thread applies in place
IXFR_VARY = 600
# the probe that a NOTIFY starts gives up after about 3 s without an
# answer, and the next one waits for the zone's refresh timer (an hour):
# serial 3's NOTIFY is sent again after NOTIFY_AGAIN seconds, as a primary
# whose change a secondary did not fetch would. One probe lost to a loaded
# machine left serial 3 untransferred (CI of ac97625, TSan build).
NOTIFY_AGAIN = 5.0


def other_worker_port(sec):
    """A source port from which unbound's worker 1, 2 or 3 takes the
    queries (so-reuseport: the kernel picks the socket by the address
    and ports); log-queries names the thread that answered."""
    for sport in range(40000, 40100):
        name = "port%d.%s" % (sport, OTHER)
        q = dns.message.make_query(name, "A")
        try:
            dns.query.udp(q, "127.0.0.1", port=sec.port, timeout=2,
                          source="127.0.0.1", source_port=sport)
        except Exception:
            continue
        m = None
        if wait_for(lambda: re.search(r"unbound\[\d+:(\d+)\] info: 127\.0\.0\.1 %s A IN"
                                      % re.escape(name), sec.read_log()), 5):
            m = re.search(r"unbound\[\d+:(\d+)\] info: 127\.0\.0\.1 %s A IN"
                          % re.escape(name), sec.read_log())
        if m and m.group(1) != "0":
            return sport
    raise RuntimeError("no source port reaches a worker other than 0")


def zone_transfers(prim, zone):
    """The number of transfers (AXFR or IXFR) of zone that NSD logged."""
    with open(os.path.join(prim.dir, "nsd.log")) as f:
        return sum(1 for line in f if re.search(
            r"info: [ai]xfr for %s from " % re.escape(zone), line))


def drop_primary_checks(sec, check):
    """After fast_reload removed ZONE's primary with its apply queued:
    the transfer was not worker 0's, the apply did not run, and ZONE
    answers serial 1 from its zonefile."""
    # the NOTIFY went to the worker of sport's queries (the same address
    # and ports, the same socket); the SOA queries of the poller go to
    # any, so the log cannot show which one took the NOTIFY
    log = sec.read_log()
    check("auth zone %s updated to serial 2" % ZONE not in log,
          "the apply of %s serial 2 was not run" % ZONE)
    check(wait_for(lambda: sec.serial(ZONE) == 1, 10),
          "%s answers serial 1 from its zonefile (%s)" % (ZONE, sec.serial(ZONE)))
    check(sec.serial(THIRD) == 2, "%s answers serial 2 (%s)" % (THIRD, sec.serial(THIRD)))


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("builddir")
    ap.add_argument("--nopause", action="store_true", help="fast_reload +p")
    ap.add_argument("--apply-first", action="store_true",
                    help="the apply is held when fast_reload starts, and the "
                    "zonefile write after it")
    ap.add_argument("--queued-apply", action="store_true",
                    help="ZONE's apply is still queued when fast_reload "
                    "replaces the zones, and ZONE has new primaries")
    ap.add_argument("--drop-primary", action="store_true",
                    help="with --queued-apply, fast_reload removes ZONE's "
                    "primary, and ZONE's transfer is not worker 0's")
    ap.add_argument("--same-primaries", action="store_true",
                    help="with --queued-apply, fast_reload leaves ZONE as "
                    "it is, and its queued apply is run")
    ap.add_argument("--zonemd-hash", action="store_true",
                    help="as --apply-first, the apply held in its ZONEMD hash")
    ap.add_argument("--ixfr-copy", action="store_true",
                    help="Knot sends serial 2 as an IXFR that is applied to "
                    "a copy of the zone, held in the middle")
    ap.add_argument("--zone-set", action="store_true",
                    help="fast_reload also removes, changes and adds a zone")
    ap.add_argument("--wait", type=float, default=10.0,
                    help="how long ZONE may take to answer serial 2 after "
                    "fast_reload")
    a = ap.parse_args()
    if a.zonemd_hash and a.queued_apply:
        ap.error("--zonemd-hash holds ZONE's apply, --queued-apply THIRD's")
    if a.ixfr_copy and (a.queued_apply or a.zonemd_hash):
        ap.error("--ixfr-copy goes with the default order or --apply-first")
    if (a.drop_primary or a.same_primaries) and not a.queued_apply:
        ap.error("--drop-primary and --same-primaries go with --queued-apply")
    if a.drop_primary and a.same_primaries:
        ap.error("--drop-primary or --same-primaries, not both")
    if a.zone_set and a.queued_apply:
        ap.error("--queued-apply makes a configuration of its own")
    # with --ixfr-copy the serials differ in IXFR_VARY names, not all
    shape = {"fixed": True, "vary": IXFR_VARY} if a.ixfr_copy else {}
    fails, check = checker()
    # packed_rrset_data, its one rr_len, rr_data and rr_ttl, the rdata
    size = struct_size(a.builddir, "packed_rrset_data") + 8 + 8 + 8 + RDATA_LEN
    with tempfile.TemporaryDirectory(prefix="steady-zfra-") as tmp:
        shim = build_preload(tmp, "oomshim.c")
        hold_write = os.path.join(tmp, "hold.write")
        hold_apply = os.path.join(tmp, "hold.calloc")
        shimlog = os.path.join(tmp, "shim.log")
        zones = ([ZONE, OTHER] + ([THIRD] if a.queued_apply else []) +
                 ([GONE, CHANGE] if a.zone_set else []))
        # the primary serves NEW from the start, unbound only after fast_reload
        served_zones = zones + ([NEW] if a.zone_set else [])
        # the zone whose apply the calloc hold holds
        held_zone = THIRD if a.queued_apply else ZONE
        prim = (KnotPrimary(os.path.join(tmp, "knot"), served_zones) if a.ixfr_copy
                else Primary(os.path.join(tmp, "nsd"), served_zones))
        for z in served_zones:
            write_zone(prim.zonefile(z), z, 1, N, **shape)
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        zones, io_thread=True, verbosity=3,
                        threads=4 if a.drop_primary else 2,
                        extra="\tlog-queries: yes" if a.drop_primary else "",
                        zone_options=("zonemd-check: yes",) if a.zonemd_hash else ())
        wrapper = ["env", "LD_PRELOAD=" + shim,
                   "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1",
                   "STEADY_HOLD=" + hold_write, "STEADY_OOM_LOG=" + shimlog]
        if a.zonemd_hash:
            wrapper += ["STEADY_HOLD_DIGEST=" + hold_apply,
                        "STEADY_HOLD_DIGEST_LEN=%d" % DIGEST_LEN]
            keys = dnssec_keys(tmp, ZONE)
        else:
            wrapper += ["STEADY_HOLD_CALLOC=" + hold_apply,
                        "STEADY_HOLD_SIZE=%d" % size]
        # what the shim logs when it holds the apply
        hold_apply_log = "hold digest" if a.zonemd_hash else "hold calloc"
        hold_apply_what = ("the ZONEMD hash of %s serial 2 reached the held "
                           "digest update (%d octets)" % (ZONE, DIGEST_LEN)
                           if a.zonemd_hash else
                           "the apply of %s serial 2 %sreached the held calloc "
                           "(size %d)" % (ZONE, "to a copy of the zone "
                                          if a.ixfr_copy else "", size))
        prim.start({z: 1 for z in served_zones})
        poller, reload_out, rc = None, {}, None
        try:
            sec.start(wrapper=wrapper)
            for z in zones:
                if not sec.wait_serial(z, 1):
                    check(False, "%s: serial 1 served and written" % z)
                    raise StopIteration
            check(not threads_in_socket_read(sec.proc.pid),
                  "no thread of unbound waits in a socket read before fast_reload")
            poller = SoaPoller(sec.port, [ZONE], timeout=0.2, pause=0.005)
            poller.start()

            def fast_reload():
                args = ["fast_reload"] + (["+p"] if a.nopause else [])
                r = sec.control(*args, check=False, timeout=120)
                reload_out["rc"] = r.returncode
                reload_out["out"] = r.stdout + r.stderr
            fr = threading.Thread(target=fast_reload, daemon=True)

            def start_fast_reload():
                if a.zone_set:
                    with open(sec.conf) as f:
                        text = f.read()
                    with open(sec.conf, "w") as f:
                        f.write(changed_zone_set(text, sec, GONE, CHANGE, NEW,
                                                 os.path.join(tmp, "change-2.zone")))
                fr.start()

            def transfer_zone_serial2(zone=ZONE):
                open(hold_apply, "w").close()
                path = prim.zonefile(zone)
                if a.zonemd_hash:
                    path = os.path.join(tmp, "zonemd.zone")
                with open(path, "w") as f:
                    f.write(zone_text(zone, 2, N, **shape) + "held IN TXT %s\n" % " ".join(
                        ["\"%s\"" % ("x" * 200)] * STRINGS))
                if a.zonemd_hash:
                    os.replace(sign_zone(path, zone, keys, zonemd=True),
                               prim.zonefile(zone))
                prim.reload({zone: 2})
                notify(sec.port, zone)

            def hold_write_of_other():
                open(hold_write, "w").close()
                write_zone(prim.zonefile(OTHER), OTHER, 2, N, **shape)
                prim.reload({OTHER: 2})
                notify(sec.port, OTHER)
                held("hold /", "the zonefile write of %s serial 2 was held" % OTHER)

            def fast_reload_waits():
                # fast_reload has queued its wait for the zonefile writes
                # and waits for the held I/O thread's answer; under a
                # sanitizer on a loaded machine reading the config can
                # take seconds, and a job queued before the wait would
                # change the order this test sets up
                if not wait_for(lambda: threads_in_socket_read(sec.proc.pid), 60):
                    check(False, "fast_reload waits for the auth-zone I/O thread")
                    raise StopIteration

            def held(prefix, what):
                if not wait_for(lambda: shim_log_lines(shimlog, prefix), 30):
                    check(False, what)
                    raise StopIteration
            if a.queued_apply:
                # the I/O thread is held in OTHER's zonefile write, with
                # fast_reload's wait for the writes queued behind it, then
                # THIRD's apply (to be held), then ZONE's apply. fast_reload
                # gives ZONE another list of primaries.
                sport = other_worker_port(sec) if a.drop_primary else 0
                hold_write_of_other()
                with open(sec.conf) as f:
                    text = f.read()
                clause = '\tname: "%s"\n\tprimary: 127.0.0.1@%d\n' % (ZONE, prim.port)
                if a.drop_primary:
                    text = text.replace(clause, '\tname: "%s"\n' % ZONE)
                elif not a.same_primaries:
                    text = text.replace('\tname: "%s"\n' % ZONE, clause)
                with open(sec.conf, "w") as f:
                    f.write(text)
                fr.start()
                fast_reload_waits()
                transfer_zone_serial2(THIRD)
                time.sleep(1.0)
                xfrs_before = zone_transfers(prim, ZONE)
                write_zone(prim.zonefile(ZONE), ZONE, 2, N)
                prim.reload({ZONE: 2})
                notify(sec.port, ZONE, sport=sport)
                time.sleep(2.0)
                # the write goes on, fast_reload reads the zonefiles, the
                # thread is held in THIRD's apply, and fast_reload waits
                # for it to replace the zones; ZONE's apply is queued
                os.unlink(hold_write)
                held("hold calloc", "the apply of %s serial 2 reached the held "
                     "calloc (size %d)" % (THIRD, size))
                time.sleep(2.0)
                check(fr.is_alive(), "fast_reload waits while the apply is held")
                os.unlink(hold_apply)
            elif a.apply_first:
                # the apply of ZONE's serial 2 is held; fast_reload's wait
                # for the queued writes is queued behind it
                transfer_zone_serial2()
                held(hold_apply_log, hold_apply_what)
                open(hold_write, "w").close()
                start_fast_reload()
                fast_reload_waits()
                # the apply ends, serial 2 is served; its zonefile write is
                # queued behind fast_reload's wait, and is held while
                # fast_reload reads the zonefiles
                os.unlink(hold_apply)
                held("hold /", "the zonefile write of %s serial 2 was held" % ZONE)
                check(fr.is_alive(), "fast_reload waits while the write is held")
                time.sleep(2.0)
                os.unlink(hold_write)
            else:
                # the I/O thread is held in OTHER's zonefile write
                hold_write_of_other()
                start_fast_reload()
                fast_reload_waits()
                # fast_reload now waits for the held write; ZONE's serial 2
                # is transferred, and its apply queued behind that wait
                # (nothing tells when the apply is queued; a transfer of N
                # names over loopback takes milliseconds)
                transfer_zone_serial2()
                time.sleep(2.0)
                check(not shim_log_lines(shimlog, hold_apply_log),
                      "the apply of %s serial 2 waits behind fast_reload's wait"
                      % ZONE)
                # the write goes on; fast_reload reads the zonefiles while
                # the apply of ZONE's serial 2 is held
                os.unlink(hold_write)
                held(hold_apply_log, hold_apply_what)
                check(fr.is_alive(), "fast_reload waits while the apply is held")
                time.sleep(2.0)
                os.unlink(hold_apply)
            fr.join(120)
            out = reload_out.get("out", "")
            print("fast_reload%s: %s" % (" +p" if a.nopause else "", out.strip()[-300:]))
            check(reload_out.get("rc") == 0 and "ok" in out.split(),
                  "fast_reload answers ok")
            if a.drop_primary:
                drop_primary_checks(sec, check)
                raise StopIteration
            check(wait_for(lambda: sec.serial(ZONE) == 2, a.wait),
                  "%s answers serial 2 within %.0f s after fast_reload (%s)"
                  % (ZONE, a.wait, sec.serial(ZONE)))
            check(wait_for(lambda: file_serial(sec.zonefile(ZONE)) == 2, a.wait),
                  "the zonefile of %s is serial 2 (%s)"
                  % (ZONE, file_serial(sec.zonefile(ZONE))))
            if a.same_primaries:
                n = zone_transfers(prim, ZONE) - xfrs_before
                check(n == 1, "%s's serial 2 was transferred once, its "
                      "queued apply run after fast_reload (%d transfers)"
                      % (ZONE, n))
            # the zone's transfers go on after fast_reload
            write_zone(prim.zonefile(ZONE), ZONE, 3, N, **shape)
            prim.reload({ZONE: 3})
            deadline = time.monotonic() + a.wait + 2 * NOTIFY_AGAIN
            notifies, got3 = 0, False
            while not got3 and time.monotonic() < deadline:
                notify(sec.port, ZONE)
                notifies += 1
                got3 = sec.wait_serial(ZONE, 3, timeout=min(
                    NOTIFY_AGAIN, deadline - time.monotonic()))
            check(got3,
                  "serial 3 of %s is transferred after fast_reload (%s, "
                  "%d NOTIFY)" % (ZONE, sec.serial(ZONE), notifies))
            if a.zone_set:
                for z in (NEW, CHANGE):
                    check(wait_for(lambda: sec.serial(z) == 1, a.wait),
                          "%s answers serial 1 after fast_reload (%s)"
                          % (z, sec.serial(z)))
                check(sec.serial(GONE) is None, "the removed %s is not answered"
                      % GONE)
            if a.queued_apply:
                check(sec.serial(THIRD) == 2, "%s answers serial 2 (%s)"
                      % (THIRD, sec.serial(THIRD)))
            if a.zonemd_hash:
                check(shim_log_lines(shimlog, "release digest"),
                      "the ZONEMD hash was held while fast_reload ran, and "
                      "went on")
            check("fast_reload read it" in sec.read_log(),
                  "unbound logs that it kept the serial served")
            if a.ixfr_copy:
                m = re.search(r"auth zone %s updated to serial 2( \(IXFR "
                              r"applied in place\))?$" % re.escape(ZONE),
                              sec.read_log(), re.M)
                check(m and not m.group(1), "serial 2 of %s was applied to a "
                      "copy of the zone (%s)" % (ZONE, m and m.group(0)))
                with open(os.path.join(prim.dir, "knot.log")) as f:
                    ixfrs = [line for line in f if ZONE.rstrip(".") in line
                             and "IXFR, outgoing" in line and "started" in line]
                check(ixfrs, "Knot sent %s an IXFR" % ZONE)
            poller.stop()
            served = [s for s in poller.serials(ZONE) if s is not None]
            print("%s served around fast_reload: %d answers, serials in order of "
                  "change %s" % (ZONE, len(served),
                                 [s for i, s in enumerate(served)
                                  if i == 0 or served[i - 1] != s]))
            first2 = served.index(2) if 2 in served else len(served)
            check(1 not in served[first2:],
                  "%s never answers serial 1 after it answered serial 2" % ZONE)
            poller = None
        except StopIteration:
            pass
        finally:
            if poller:
                poller.stop()
            for p in (hold_write, hold_apply):
                if os.path.exists(p):
                    os.unlink(p)
            rc = sec.stop(timeout=120)
            prim.stop()
            log = sec.read_log()
        check_clean_exit(check, rc, log)
        if fails:
            print(log[-4000:])
    return verdict(fails, "fast_reload keeps a transfer applied while it reads")


if __name__ == "__main__":
    sys.exit(main())
