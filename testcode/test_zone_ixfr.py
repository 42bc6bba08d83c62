#!/usr/bin/env python3
"""IXFR with a real primary: Knot DNS serves a zone and answers IXFR from
its journal; the built unbound is the secondary with a zonefile. Updates:
two small IXFRs (applied to the zone in place), then a large one (more
RRs than 1000 and than an eighth of the zone's names: applied to a copy
of the zone that is then swapped in). After each, the zonefile and the answers must hold exactly the
records of the new serial, and Knot must have sent an IXFR (not a whole
zone). With the I/O thread, the log must show the small IXFRs applied in
place and the large one not (applied to a copy). Run with both settings
of auth-zone-io-thread.

With --copy-nomem (the I/O thread; issue 41's finding 7), the copy of
the zone for the large IXFR cannot be allocated: testcode/oomshim.c
fails one calloc of the first node of the copy, the apex
(sizeof(struct auth_data) and the name, harness.zone.auth_data_size).
The IXFR must then be applied in place, as without the thread, not
fail for lack of memory: serial 4 served and written, applied in
place, num.authzone.xfr.apply.nomem 0. (Before, it was not applied,
the zone stayed at serial 3 until a later transfer.)

usage: test_zone_ixfr.py BUILDDIR [--io-thread yes|no] [--copy-nomem]"""

import argparse
import os
import re
import sys
import tempfile

import dns.message
import dns.query

from harness.zone import (KnotPrimary, Secondary, auth_data_size, build_preload, file_serial,
                          notify, shim_log_lines, verdict, write_zone, zone_text)

ZONE = "example.net."
N = 30000


def a_records(text, origin):
    """{name: set of addresses} of the A records of a zone text, in the
    file format Unbound writes or the one zone_text makes."""
    recs = {}
    for line in text.splitlines():
        p = line.split()
        if len(p) >= 4 and p[-2] == "A" and p[0].startswith("h"):
            name = p[0] if p[0].endswith(".") else p[0] + "." + origin
            recs.setdefault(name, set()).add(p[-1])
    return recs


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    ap.add_argument("--io-thread", choices=["yes", "no"], default="yes")
    ap.add_argument("--copy-nomem", action="store_true")
    a = ap.parse_args()
    if a.copy_nomem and a.io_thread != "yes":
        ap.error("--copy-nomem is of the I/O thread")
    fails = []
    with tempfile.TemporaryDirectory(prefix="steady-zixfr-") as tmp:
        prim = KnotPrimary(os.path.join(tmp, "knot"), [ZONE])
        write_zone(prim.zonefile(ZONE), ZONE, 1, N, fixed=True)
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        [ZONE], threads=2, io_thread=(a.io_thread == "yes"),
                        verbosity=3)
        zfile = sec.zonefile(ZONE)
        prim.start({ZONE: 1})
        wrapper, trigger, shimlog = None, os.path.join(tmp, "oom"), os.path.join(tmp, "oom.log")
        if a.copy_nomem:
            wrapper = ["env", "LD_PRELOAD=" + build_preload(tmp, "oomshim.c"),
                       "STEADY_OOM_CALLOC_TRIGGER=" + trigger,
                       "STEADY_OOM_SIZE=%d" % auth_data_size(a.builddir, ZONE),
                       "STEADY_OOM_TIMES=1", "STEADY_OOM_LOG=" + shimlog]
        try:
            sec.start(wrapper=wrapper)
            if not sec.wait_serial(ZONE, 1, timeout=60):
                fails.append("first transfer not on disk")
                raise StopIteration
            # (serial, names that carry the serial): small, small, large.
            # An IXFR changes the names that carry either serial, two RRs
            # each: 20, 40 and 6000 RRs, against 3750 for the zone
            for serial, vary in ((2, 10), (3, 20), (4, 3000)):
                write_zone(prim.zonefile(ZONE), ZONE, serial, N, fixed=True,
                           vary=vary)
                prim.reload({ZONE: serial})
                if a.copy_nomem and serial == 4:
                    # the large IXFR's copy fails at its first node
                    with open(trigger, "w"):
                        pass
                notify(sec.port, ZONE)
                if not sec.wait_serial(ZONE, serial, timeout=60):
                    fails.append("serial %d not served and on disk (file %s)" % (
                        serial, file_serial(zfile)))
                    break
                want = a_records(zone_text(ZONE, serial, N, fixed=True, vary=vary), ZONE)
                with open(zfile) as f:
                    got = a_records(f.read(), ZONE)
                if got != want:
                    diff = [k for k in set(want) | set(got) if want.get(k) != got.get(k)]
                    fails.append("serial %d: zonefile differs in %d names, e.g. %s" % (
                        serial, len(diff), [(k, want.get(k), got.get(k)) for k in diff[:3]]))
                for i in (0, vary - 1, vary, N - 1):
                    name = "h%d.%s" % (i, ZONE)
                    r = dns.query.udp(dns.message.make_query(name, "A"), "127.0.0.1",
                                      port=sec.port, timeout=2)
                    addrs = {x.address for rr in r.answer for x in rr}
                    if addrs != want[name]:
                        fails.append("serial %d: %s answers %s, want %s" % (
                            serial, name, addrs, want[name]))
                print("serial %d (%d names changed): zonefile and answers right" % (
                    serial, vary))
            with open(os.path.join(prim.dir, "knot.log")) as f:
                klog = f.read()
            ixfrs = len(re.findall(r"IXFR, outgoing.*started", klog))
            print("Knot sent %d IXFRs" % ixfrs)
            if ixfrs < 3:
                fails.append("Knot sent %d IXFRs, want 3:\n%s" % (ixfrs, klog[-2000:]))
            # which way each serial was applied (VERB_QUERY lines)
            log = sec.read_log()
            if a.copy_nomem:
                failed = shim_log_lines(shimlog, "fail")
                print("oomshim: %s" % failed)
                if len(failed) != 1:
                    fails.append("the copy's allocation was not failed once (%s)" % failed)
                if "out of memory for a new version of the zone, IXFR applied in place" \
                        not in sec.read_log():
                    fails.append("no warning that the IXFR was applied in place "
                                 "for lack of memory")
            for serial, inplace in ((2, True), (3, True), (4, a.copy_nomem)):
                m = re.search(r"auth zone %s updated to serial %d( \(IXFR applied "
                              r"in place\))?$" % (re.escape(ZONE), serial), log, re.M)
                # without the marker: by the I/O thread to a copy, or by
                # the worker
                how = None if not m else "in place" if m.group(1) else "not in place"
                print("serial %d applied: %s" % (serial, how))
                want = "in place" if inplace and a.io_thread == "yes" else "not in place"
                if how != want:
                    fails.append("serial %d applied %s, want %s" % (serial, how, want))
            st = sec.stats()
            print({k: v for k, v in st.items() if "authzone" in k})
            if a.io_thread == "yes" and int(st["num.authzone.xfr.apply"]) < 4:
                fails.append("num.authzone.xfr.apply=%s" % st["num.authzone.xfr.apply"])
            if int(st["num.authzone.write.failed"]) != 0:
                fails.append("write failures")
            if a.copy_nomem and int(st["num.authzone.xfr.apply.nomem"]) != 0:
                fails.append("num.authzone.xfr.apply.nomem=%s, want 0 (applied in place)"
                             % st["num.authzone.xfr.apply.nomem"])
            if sec.stop() != 0:
                fails.append("exit status not 0")
        except StopIteration:
            pass
        finally:
            sec.kill()
            prim.stop()
            if fails:
                print(sec.read_log()[-3000:])
    return verdict(fails, "IXFR from Knot (io thread %s)" % a.io_thread)


if __name__ == "__main__":
    sys.exit(main())
