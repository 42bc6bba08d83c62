#!/usr/bin/env python3
"""A full transfer of a zone that unbound holds is applied as its
difference to what is held. NSD (which answers every IXFR request with
the whole zone) serves an RPZ of --names QNAME triggers (local data
A 192.0.2.1) and a plain zone answered from (for-downstream); unbound
(auth-zone-io-thread: yes, 2 threads, verbosity 3) is their secondary.
Then:
1. the RPZ's next serial replaces --replace triggers. Unbound asks for
   an IXFR, NSD sends the whole zone: the log says it was applied as
   its difference (2 * replace + 2 changes: the SOA too), in one hold
   of the zone's lock; the new triggers answer, the replaced ones do not; a trigger that stays
   answered every query of a probe during the update; the zonefile has
   the new serial and every trigger of it; unbound's peak resident
   memory during the update (VmHWM, reset before it) is at most 1.2
   times what it was before it, where a new version of the zone and its
   policies beside the old one took about twice;
2. the plain zone's next serial changes 10 of its names: applied as its
   difference (a zone answered from changes all at once), the new data
   and serial answer;
3. the RPZ's next serial replaces a twentieth of the triggers, changes
   just under an eighth of the zone's names, which bounds an update
   applied in place: applied as its difference, the triggers follow it,
   peak at most 1.2 times (1.3 under ASan, below);
4. the next serial replaces two fifths of the triggers, more changes
   than an eighth of the zone's names: the log says the AXFR was applied
   to a new version of the zone, the triggers follow it, and the peak
   stays under 2.5 times the memory before it.
No sanitizer report (make test runs it against build/fork-asan, where
the same update takes more memory, so the bound of case 3 is 1.3 under
ASan), exit 0. It fails without the difference (a new version for every
AXFR: no such log line, a peak of about twice).

usage: test_zone_axfr_diff.py BUILDDIR [--names N] [--replace N]"""

import argparse
import os
import re
import sys
import tempfile
import threading
import time

import dns.message
import dns.query

from harness.load import proc_status_kb
from harness.zone import (Primary, Secondary, answers_address, asan_build, check_clean_exit,
                          checker, file_serial, knot_update, rpz_clause, rpz_qname_zone,
                          soa_serial, verdict, wait_for, zone_text)

ZONE = "rpz.example."
PLAIN = "plain.example."
TRIGGER_A = "192.0.2.1"
PLAIN_NAMES = 2000


def rpz_text(serial, labels):
    return rpz_qname_zone(ZONE, serial, labels, TRIGGER_A)


def plain_text(serial, changed):
    """The plain zone at serial: PLAIN_NAMES host names, the first
    changed of them with the address 198.51.100.1 instead"""
    text = zone_text(PLAIN, serial, PLAIN_NAMES, fixed=True)
    lines = text.splitlines()
    out, n = [], 0
    for line in lines:
        if line.startswith("h") and n < changed:
            line = re.sub(r"IN\s+A\s+\S+$", "IN A 198.51.100.1", line)
            n += 1
        out.append(line)
    return "\n".join(out) + "\n"


def triggered(port, name):
    """whether unbound answers name with the trigger's local data"""
    return answers_address(port, name, TRIGGER_A, 0.2)


class Probe(threading.Thread):
    """Asks for name every few ms until stopped and counts the answers
    that are not address (or none in 1 s)."""

    def __init__(self, port, name, address):
        threading.Thread.__init__(self, daemon=True)
        self.port, self.name, self.address = port, name, address
        self.asked = self.wrong = 0
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            self.asked += 1
            if not answers_address(self.port, self.name, self.address, 1.0):
                self.wrong += 1
            time.sleep(0.003)

    def stop(self):
        self.done.set()
        self.join()


def reset_hwm(pid):
    """VmHWM to VmRSS; returns VmRSS in kB"""
    with open("/proc/%d/clear_refs" % pid, "w") as f:
        f.write("5")
    return proc_status_kb(pid, "VmRSS")


def update_lines(ub, zone, serial):
    """the log lines of the update of zone to serial"""
    return [line for line in ub.read_log().splitlines()
            if "auth zone %s updated to serial %d " % (zone, serial) in line]


def axfr_update(nsd, ub, labels, serial, start, count, prefix, check):
    """replace the triggers labels[start:start+count] by prefix<i> in the
    RPZ's serial, wait until unbound answers the last new one and no
    longer the first replaced one; returns the peak resident memory
    during it, that before it (kB) and the log lines of the update"""
    pid = ub.proc.pid
    rss = reset_hwm(pid)
    first_old = labels[start]
    labels[start:start + count] = ["%s%d" % (prefix, i) for i in range(count)]
    check(knot_update(nsd, ub, ZONE, serial, rpz_text(serial, labels)),
          "zonefile serial %d" % serial)
    last_new = "%s%d.bench." % (prefix, count - 1)
    check(triggered(ub.port, last_new), "AXFR %d applied: %s answers" % (serial, last_new))
    check(not triggered(ub.port, first_old + ".bench."),
          "the replaced %s.bench. has no trigger" % first_old)
    check(triggered(ub.port, labels[-1] + ".bench."), "%s.bench. keeps its trigger" % labels[-1])
    time.sleep(1)
    return proc_status_kb(pid, "VmHWM"), rss, update_lines(ub, ZONE, serial)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("build")
    ap.add_argument("--names", type=int, default=100000)
    ap.add_argument("--replace", type=int, default=1000)
    a = ap.parse_args()
    fails, check = checker()
    inplace_bound = 1.3 if asan_build(a.build) else 1.2
    labels = ["t%d" % i for i in range(a.names)]
    keep = "t%d.bench." % (a.names - 1)

    with tempfile.TemporaryDirectory(prefix="steady-axfr-diff-") as d:
        nsd = Primary(os.path.join(d, "nsd"), [ZONE, PLAIN])
        with open(nsd.zonefile(ZONE), "w") as f:
            f.write(rpz_text(1, labels))
        with open(nsd.zonefile(PLAIN), "w") as f:
            f.write(plain_text(1, 0))
        nsd.start({ZONE: 1, PLAIN: 1}, timeout=120)
        ub = Secondary(os.path.abspath(a.build), os.path.join(d, "unbound"), nsd.port,
                       [ZONE, PLAIN], threads=2, io_thread=True, verbosity=3)
        rpz_clause(ub, ZONE)
        try:
            ub.start()
            check(wait_for(lambda: file_serial(ub.zonefile(ZONE)) == 1 and
                           file_serial(ub.zonefile(PLAIN)) == 1, 120),
                  "first transfers written")
            check(triggered(ub.port, keep), "%s has the trigger's data" % keep)
            time.sleep(1)
            pid = ub.proc.pid

            # 1: a few triggers replaced, the whole zone sent
            rss0 = reset_hwm(pid)
            labels[:a.replace] = ["n%d" % i for i in range(a.replace)]
            probe = Probe(ub.port, keep, TRIGGER_A)
            probe.start()
            check(knot_update(nsd, ub, ZONE, 2, rpz_text(2, labels)), "zonefile serial 2")
            last_new = "n%d.bench." % (a.replace - 1)
            check(triggered(ub.port, last_new), "AXFR 2 applied: %s answers" % last_new)
            time.sleep(0.5)
            probe.stop()
            peak = proc_status_kb(pid, "VmHWM")
            lines = update_lines(ub, ZONE, 2)
            want = "(AXFR applied in place, as its difference of %d changes" % (
                2 * a.replace + 2)
            check(any(want in line for line in lines),
                  "serial 2 applied as its difference: %s" % lines)
            check(peak <= 1.2 * rss0, "peak memory during AXFR 2 %d MB, before it %d MB "
                  "(at most 1.2 times)" % (peak // 1024, rss0 // 1024))
            check(probe.asked > 10 and probe.wrong == 0,
                  "%s answered during the update: %d of %d queries without its data"
                  % (keep, probe.wrong, probe.asked))
            check(not triggered(ub.port, "t0.bench."), "the replaced t0.bench. has no trigger")
            with open(ub.zonefile(ZONE)) as f:
                text = f.read()
            check(all(("%s.bench.%s" % (lab, ZONE)) in text for lab in
                      (labels[0], labels[a.replace - 1], labels[a.replace], labels[-1])) and
                  "t0.bench.%s" % ZONE not in text,
                  "the zonefile of serial 2 has the new triggers, not the replaced")

            # 2: the plain zone, answered from, changed in one step
            check(knot_update(nsd, ub, PLAIN, 2, plain_text(2, 10)) and
                  soa_serial(ub.port, PLAIN) == 2, "%s serial 2 answered" % PLAIN)
            r = dns.query.udp(dns.message.make_query("h0." + PLAIN, "A"), "127.0.0.1",
                              port=ub.port, timeout=2)
            check([rd.to_text() for rrset in r.answer for rd in rrset] == ["198.51.100.1"],
                  "h0.%s has its new address: %s" % (PLAIN, r.answer))
            time.sleep(0.5)
            lines = update_lines(ub, PLAIN, 2)
            check(any("(AXFR applied in place, as its difference of 24 changes to the "
                      "zone)" in line for line in lines),
                  "%s serial 2 applied as its difference of 24 changes: %s"
                  % (PLAIN, lines))

            # 3: a twentieth of the triggers replaced: just under an
            # eighth of the names in changes
            twentieth = a.names // 20
            start = a.replace
            peak, rss1, lines = axfr_update(nsd, ub, labels, 3, start, twentieth, "c",
                                            check)
            want = "(AXFR applied in place, as its difference of %d changes" % (
                2 * twentieth + 2)
            check(any(want in line for line in lines),
                  "serial 3 (a twentieth replaced) applied as its difference: %s" % lines)
            check(peak <= inplace_bound * rss1, "peak memory during AXFR 3 %d MB, before it "
                  "%d MB (at most %.1f times)" % (peak // 1024, rss1 // 1024, inplace_bound))

            # 4: two fifths replaced, more changes than an eighth of the
            # names: a new version
            fifth = a.names // 5
            peak, rss2, lines = axfr_update(nsd, ub, labels, 4, start + twentieth, 2 * fifth,
                                            "d", check)
            check("auth zone %s: AXFR applied to a new version of the zone: it has more "
                  "changes than an IXFR applied in place" % ZONE in ub.read_log(),
                  "AXFR 4 (two fifths replaced) applied to a new version of the zone")
            check(peak <= 2.5 * rss2, "peak memory during AXFR 4 (a new version) %d MB, "
                  "before it %d MB (at most 2.5 times)" % (peak // 1024, rss2 // 1024))
        finally:
            rc = ub.stop()
            nsd.stop()
        check_clean_exit(check, rc, ub.read_log())
        if fails:
            print("\n".join(line for line in ub.read_log().splitlines()
                            if "auth zone" in line or "error" in line)[-3000:])
    return verdict(fails, "zone-axfr-diff")


if __name__ == "__main__":
    sys.exit(main())
