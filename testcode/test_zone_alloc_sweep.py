#!/usr/bin/env python3
"""The allocation-failure check (issue 66): a zone transfer and its apply,
journal append and zonefile write survive the failure of any one of their
allocations.

Knot serves ZONE (--names names; every update changes the serial TXT
and the first --vary names) and sends each update as an IXFR; with
--primary nsd, NSD serves it and sends the whole zone, which unbound
applies as its difference to the zone held. unbound is its secondary
(with --rpz, as an rpz: clause: the names are QNAME triggers with local
data, the RPZ's update is applied in one hold) with the auth-zone
I/O thread and auth-zone-journal: yes (--journal no: without), under
AddressSanitizer. testcode/oomshim.c counts the malloc()s and calloc()s
of every thread while a trigger file exists, and fails the K-th. A first
run counts them: the trigger is made, Knot gets the next serial, unbound
is NOTIFYd, and the trigger goes when that serial is served and written.
Then for each K chosen (--sample N of them at random with --seed S,
always the first and the last; --all for every one), unbound starts
again from the zonefile and journal that the runs before left, the
trigger is made, Knot takes the next serial and unbound is NOTIFYd, and
the trigger goes when that serial is served or after --window seconds.
Then:
- unbound runs (no crash, no sanitizer report);
- it serves one version: the SOA serial, the serial TXT and the first
  name's address are of the same serial, the old or the new;
- with --rpz, a thread asks 20 triggers that do not vary throughout the
  run: each must answer its address, the RPZ blocks what both versions
  block (an in-place apply that fails is undone, not cleared);
- after another NOTIFY (and the zone's retry), the new serial is served
  within --recover seconds, and written; or, if its zonefile write
  failed, that is logged and counted (num.authzone.write.failed), and the
  next update is served and written (no write is retried before it);
- the zonefile is a complete version (check_zonefile);
- unbound stops with exit status 0 and without a sanitizer report
  (LeakSanitizer reports what is not freed at the exit).
A failure prints the K, the shim's log line with the backtrace of the
allocation that failed, and the end of unbound's log.

usage: test_zone_alloc_sweep.py BUILDDIR [--names N] [--vary N] [--k K,...]
                                [--journal yes|no] [--primary knot|nsd] [--rpz]
                                [--sample N] [--seed S]
                                [--all] [--window S] [--recover S]
  BUILDDIR: a build with AddressSanitizer (make fork-asan)"""

import argparse
import os
import sys
import tempfile
import time

import dns.message
import dns.query
import dns.rdatatype

from harness.zone import (AnswerProbe, KnotPrimary, Primary, Secondary, asan_build,
                          build_preload,
                          check_zonefile, checker, disk_serial, notify, nth_count,
                          nth_wrapper, rm, rpz_clause, sanitizer_reports,
                          shim_log_lines, sweep_choice, touch,
                          verdict, wait_for, write_zone)

ZONE = "sweep.example."


def rpz_judge(name, r):
    """None if r answers name (h<i>.) with the address its trigger has in
    every version, else what is wrong."""
    i = int(name[1:-1])
    want = "10.0.%d.%d" % ((i >> 8) & 255, i & 255)
    got = [rd.to_text() for rrset in r.answer for rd in rrset]
    return None if want in got else "answered %s (rcode %d), not %s" % (
        got, r.rcode(), want)


def served_version(port, rpz=False):
    """(SOA serial, serial TXT, serial in h0's address) that the server
    answers, None for each it does not answer; for an RPZ the local data
    of its triggers serial. and h0. (TXT, A). h0's address holds the
    serial's low byte only (zone_text)."""
    out = []
    names = ((ZONE, "SOA"), ("serial." + ZONE, "TXT"), ("h0." + ZONE, "A"))
    if rpz:
        names = (("serial.", "TXT"), ("h0.", "A"))
    for name, rdtype in names:
        try:
            r = dns.query.udp(dns.message.make_query(name, rdtype), "127.0.0.1",
                              port=port, timeout=1.0)
        except Exception:
            out.append(None)
            continue
        v = None
        for rrset in r.answer:
            for rd in rrset:
                if rd.rdtype == dns.rdatatype.SOA:
                    v = rd.serial
                elif rd.rdtype == dns.rdatatype.TXT:
                    v = int(rd.strings[0])
                elif rd.rdtype == dns.rdatatype.A:
                    v = int(rd.address.split(".")[1])
        out.append(v)
    return tuple(out)


def one_version(v, old, new):
    """If served_version's v is all of one serial, old or new."""
    return (v[0] in (old, new) and all(x == v[0] for x in v[:-1]) and
            v[-1] == v[0] % 256)


class Sweep:
    """Knot, and unbound started again for each run, from the zonefile and
    journal that the runs before left (a copy would not do: a journal is
    bound to its zonefile's inode and mtime)."""

    def __init__(self, a, tmp):
        self.a = a
        self.tmp = tmp
        self.serial = 1
        self.shim = build_preload(tmp, "oomshim.c")
        self.trigger = os.path.join(tmp, "nth")
        self.log = os.path.join(tmp, "oom.log")
        self.rundir = os.path.join(tmp, "unbound")
        self.knot = (KnotPrimary if a.primary == "knot" else Primary)(
            os.path.join(tmp, a.primary), [ZONE])
        write_zone(self.knot.zonefile(ZONE), ZONE, 1, a.names, fixed=True, vary=a.vary)
        self.knot.start({ZONE: 1})

    def secondary(self, nth):
        """unbound, with the shim failing allocation nth of the window."""
        # one worker: it is set up before it answers, so the runs' window
        # holds no start-up allocations
        ub = Secondary(self.a.build, self.rundir, self.knot.port, [ZONE], io_thread=True,
                       threads=1, extra="\tauth-zone-journal: %s" % self.a.journal)
        if self.a.rpz:
            rpz_clause(ub, ZONE)
        for f in (self.log, self.trigger, ub.log, os.path.join(self.rundir, "stdout.log")):
            rm(f)
        ub.start(wrapper=nth_wrapper(self.a.build, self.shim, self.trigger, nth, self.log))
        return ub

    def served(self, ub):
        """The serial served: the SOA's, or an RPZ's serial TXT."""
        if self.a.rpz:
            return served_version(ub.port, True)[0]
        return ub.serial(ZONE)

    def disk(self, ub):
        """The serial on disk: the zonefile's, and its journal's."""
        return disk_serial(ub.zonefile(ZONE))

    def wait(self, ub, serial, timeout, disk=True):
        """Wait until serial is served (and on disk)."""
        return wait_for(lambda: self.served(ub) == serial and (
            not disk or self.disk(ub) == serial), timeout)

    def update(self, ub):
        """Knot takes the next serial and unbound is told."""
        self.serial += 1
        write_zone(self.knot.zonefile(ZONE), ZONE, self.serial, self.a.names, fixed=True,
                   vary=self.a.vary)
        self.knot.reload({ZONE: self.serial})
        notify(ub.port, ZONE)

    def count(self, check):
        """The allocations of one update, counted by the shim; the first
        start transfers the zone and writes its zonefile."""
        ub = self.secondary(1 << 60)
        check(self.wait(ub, self.serial, 60), "count run: serial %d transferred and "
              "written" % self.serial)
        touch(self.trigger)
        self.update(ub)
        # a NOTIFY that comes while the zone's probe or transfer runs is
        # not acted on: another one every few seconds, as the runs do
        ok = False
        deadline = time.monotonic() + 60
        while not ok and time.monotonic() < deadline:
            ok = self.wait(ub, self.serial, 5)
            if not ok:
                notify(ub.port, ZONE)
        rm(self.trigger)
        check(ok, "count run: serial %d served and written" % self.serial)
        rc = ub.stop()
        check(rc == 0, "count run: unbound exit status %s" % rc)
        return nth_count(self.log)

    def run(self, k, check):
        """One run that fails allocation k; returns whether it passed."""
        ok = [True]

        def c(cond, what):
            if not cond:
                ok[0] = False
            check(cond, "K=%d: %s" % (k, what))
        old = self.serial
        ub = self.secondary(k)
        rc = None
        try:
            c(self.wait(ub, old, 60), "serial %d served and on disk at the start" % old)
            probe = None
            if self.a.rpz:
                # an RPZ blocks what both versions block all the while:
                # the triggers that do not vary answer their address
                probe = AnswerProbe(ub.port, ["h%d." % i for i in range(
                    self.a.vary, min(self.a.vary + 20, self.a.names))], rpz_judge)
                probe.start()
            touch(self.trigger)
            self.update(ub)
            new = self.serial
            wait_for(lambda: self.served(ub) == new or ub.proc.poll() is not None,
                     self.a.window)
            rm(self.trigger)
            if probe:
                probe.stopping.set()
                probe.join()
                c(probe.answers > 0 and not probe.wrong,
                  "the RPZ answered its triggers of both versions all the while "
                  "(%d answers; wrong: %s)" % (probe.answers, probe.wrong[:3]))
            failed = shim_log_lines(self.log, "fail nth")
            alive = ub.proc.poll() is None
            c(alive, "unbound runs after the failure (%s)" % (failed or "none failed"))
            if alive:
                v = served_version(ub.port, self.a.rpz)
                c(one_version(v, old, new),
                  "one version served, the old (%d) or the new (%d): %s give %s" % (
                      old, new, "serial TXT, h0" if self.a.rpz else "SOA, serial TXT, h0",
                      v))
                deadline = time.monotonic() + self.a.recover
                while time.monotonic() < deadline and not self.wait(ub, new, 2, disk=False):
                    notify(ub.port, ZONE)
                c(self.served(ub) == new, "serial %d served after another NOTIFY "
                  "(served %s)" % (new, self.served(ub)))
                if not self.wait(ub, new, 2):
                    # the write of the new serial failed: an error and a
                    # count, and the next update writes the zonefile
                    n = int(ub.stats().get("num.authzone.write.failed", "0"))
                    c(n > 0 and " error: " in ub.read_log(),
                      "serial %d served, not on disk (%s): the failure is logged "
                      "and counted (num.authzone.write.failed=%d)" % (
                          new, self.disk(ub), n))
                    self.update(ub)
                    new = self.serial
                    c(self.wait(ub, new, self.a.recover),
                      "the next update, serial %d, served and on disk (served %s, "
                      "disk %s)" % (new, self.served(ub), self.disk(ub)))
                serial, why = check_zonefile(ub.zonefile(ZONE), ZONE, self.a.names,
                                             fixed=True, vary=lambda s: self.a.vary)
                c(serial is not None, "the zonefile is a complete version (%s)"
                  % (why or "serial %s" % serial))
        finally:
            if ub.proc is not None and ub.proc.poll() is None:
                rc = ub.stop()
            elif ub.proc is not None:
                rc = ub.proc.returncode
                ub.kill()
        log = ub.read_log()
        c(rc == 0, "unbound exit status %s" % rc)
        bad = sanitizer_reports(log)
        c(not bad, "no sanitizer report%s" % (": " + bad[0] if bad else ""))
        if not ok[0]:
            print("the allocation that failed: %s" % (
                shim_log_lines(self.log, "fail nth") or "none"))
            print("unbound log (oomshim prints the stack of the failed "
                  "allocation):\n" + log[-6000:])
        return ok[0]


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("build")
    ap.add_argument("--names", type=int, default=200)
    ap.add_argument("--vary", type=int, default=20)
    ap.add_argument("--journal", choices=["yes", "no"], default="yes")
    ap.add_argument("--primary", choices=["knot", "nsd"], default="knot")
    ap.add_argument("--rpz", action="store_true")
    ap.add_argument("--sample", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--k", help="the allocations to fail, K,K,... (no sample)")
    ap.add_argument("--window", type=float, default=5.0)
    ap.add_argument("--recover", type=float, default=30.0)
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    fails, check = checker()
    if not asan_build(a.build):
        check(False, "%s is built with AddressSanitizer" % a.build)
        return verdict(fails, "zone-alloc-sweep")
    with tempfile.TemporaryDirectory(prefix="steady-alloc-sweep-") as tmp:
        sw = Sweep(a, tmp)
        try:
            n = sw.count(check)
            print("allocations of one update (count run): %d" % n)
            check(n > 0, "the shim counted the update's allocations")
            if n > 0:
                ks = sweep_choice(n, a.sample, a.seed, a.all, a.k)
                passed = 0
                for k in ks:
                    if sw.run(k, check):
                        passed += 1
                print("runs: %d, passed: %d (K = %s)" % (len(ks), passed,
                      " ".join(str(k) for k in ks)))
        finally:
            sw.knot.stop()
    return verdict(fails, "zone-alloc-sweep")


if __name__ == "__main__":
    sys.exit(main())
