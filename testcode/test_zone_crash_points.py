#!/usr/bin/env python3
"""A crash at any point of a zonefile write or a journal append leaves a
complete version on disk, no older than what was on disk before it
(issue 66, findings 14 and 15, and their class).

testcode/crashshim.c, preloaded into unbound, counts the operations that
change what is under the zone directory (opens for writing, a stream's
first fwrite, fflush, write, fsync, ftruncate, close, rename, unlink)
and ends the process with _exit() just before the k-th. Knot is the
primary; unbound has auth-zone-journal: yes. Two paths, each run once
to count its operations and then once for every k:

- append: the zonefile holds serial 1, no journal; Knot has serial 2
  (a few names changed): the IXFR creates the journal and appends to it;
- rewrite: the zonefile holds serial 1 and its journal the IXFRs to 2
  and 3; Knot has serial 4, which changes half the names: past the
  journal's share of the zonefile, so the whole zonefile is written (to
  a temporary file, synced, renamed over it) and the journal removed.

After each crash, unbound starts again with a primary that does not
answer: the serial it serves must be one of the two the path is between
and no older than the one on disk before (1, or 3 with the journal),
its TXT record and a changed name must be of that serial (a complete
version), and a run that is not crashed must end at the new serial.
The counting runs also check the order: the journal's directory is
synced after the journal is created (finding 15: a power loss could
lose the new file, which a process crash does not show), and the
journal is removed after the new zonefile is renamed into place.

Shown failing on patch level 73 (the rewrite: a crash before the
rename, after the journal's unlink, leaves serial 1 where 3 was on
disk: finding 14; the append: no directory sync), passing with the
journal removed after the rename and its directory synced when it is
created.

usage: test_zone_crash_points.py BUILDDIR [--names N]"""

import argparse
import os
import sys
import tempfile
import time

import dns.message
import dns.query

from harness.zone import (KnotPrimary, Secondary, build_preload, checker,
                          disk_serial, file_serial, journal_records, notify,
                          siphash24, verdict, wait_for, zone_text)

APPEND, REWRITE = "append.example.", "rewrite.example."


def answer(port, name, rtype):
    """The texts of the records of an answer, or None."""
    try:
        r = dns.query.udp(dns.message.make_query(name, rtype), "127.0.0.1",
                          port=port, timeout=2)
    except Exception:
        return None
    return [rd.to_text() for rrset in r.answer for rd in rrset]


def served_version(port, zone):
    """(SOA serial, serial TXT, h0's address) that unbound answers."""
    soa = answer(port, zone, "SOA")
    serial = int(soa[0].split()[2]) if soa else None
    txt = answer(port, "serial." + zone, "TXT")
    return serial, (int(txt[0].strip('"')) if txt else None), answer(port, "h0." + zone, "A")


def rebind_journal(zfile):
    """Give a copied journal the header of the copied zonefile beside it
    (the header names the zonefile's inode, size and time, and a copy has
    its own)."""
    with open(zfile + ".ixfr", "rb") as f:
        data = bytearray(f.read())
    st = os.stat(zfile)
    head = bytes(data[:16]) + st.st_size.to_bytes(8, "big") + \
        st.st_ino.to_bytes(8, "big") + int(st.st_mtime).to_bytes(8, "big")
    data[:48] = head + siphash24(head)
    with open(zfile + ".ixfr", "wb") as f:
        f.write(data)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("build")
    ap.add_argument("--names", type=int, default=300)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    fails, check = checker()
    n = a.names

    with tempfile.TemporaryDirectory(prefix="steady-crash-points-") as d:
        shim = build_preload(d, "crashshim.c")
        zonedir = os.path.join(d, "zones")
        os.makedirs(zonedir)
        knot = KnotPrimary(os.path.join(d, "knot"), [APPEND, REWRITE])
        for z in (APPEND, REWRITE):
            with open(knot.zonefile(z), "w") as f:
                f.write(zone_text(z, 1, n, fixed=True, vary=5))
        knot.start({APPEND: 1, REWRITE: 1})
        extra = ["auth-zone-journal: yes"]

        def secondary(name, zone, port):
            ub = Secondary(build, os.path.join(d, name), port, [zone], zonedir=zonedir,
                           threads=1, io_thread=True)
            with open(ub.conf) as f:
                text = f.read()
            with open(ub.conf, "w") as f:
                f.write(text.replace("server:\n", "server:\n\t%s\n" % "\n\t".join(extra), 1))
            return ub

        def knot_serial(zone, serial, vary):
            with open(knot.zonefile(zone), "w") as f:
                f.write(zone_text(zone, serial, n, fixed=True, vary=vary))
            knot.reload({zone: serial})

        # the append's start: zonefile 1 as unbound writes it, no journal
        afile = os.path.join(zonedir, APPEND.rstrip(".") + ".zone")
        ub = secondary("setup-append", APPEND, knot.port)
        ub.start()
        check(wait_for(lambda: file_serial(afile) == 1, 30), "append: serial 1 written")
        ub.stop()
        with open(afile, "rb") as f:
            append_saved = f.read()
        knot_serial(APPEND, 2, 5)
        # the rewrite's start: zonefile 1 and a journal to 3, written by
        # unbound from Knot's serials
        zfile = os.path.join(zonedir, REWRITE.rstrip(".") + ".zone")
        ub = secondary("setup", REWRITE, knot.port)
        ub.start()
        check(wait_for(lambda: file_serial(zfile) == 1, 30), "rewrite: serial 1 written")
        for s in (2, 3):
            knot_serial(REWRITE, s, 5)
            notify(ub.port, REWRITE)
            check(wait_for(lambda: disk_serial(zfile) == s, 30),
                  "rewrite: serial %d appended to the journal (%s)" % (s, journal_records(zfile)))
        ub.stop()
        saved = {}
        for suffix in ("", ".ixfr"):
            with open(zfile + suffix, "rb") as f:
                saved[suffix] = f.read()
        knot_serial(REWRITE, 4, n // 2)

        def restore(zone):
            for f in os.listdir(zonedir):
                os.unlink(os.path.join(zonedir, f))
            if zone == APPEND:
                with open(afile, "wb") as f:
                    f.write(append_saved)
                return afile
            for suffix in ("", ".ixfr"):
                with open(zfile + suffix, "wb") as f:
                    f.write(saved[suffix])
            rebind_journal(zfile)
            return zfile

        def run(zone, k, log):
            """One run with the shim ending unbound before operation k
            (0: none); True if it ended so. Then the check."""
            path = restore(zone)
            ub = secondary("run", zone, knot.port)
            env = ["env", "LD_PRELOAD=" + shim, "STEADY_CRASH_DIR=" + zonedir,
                   "STEADY_CRASH_AT=%d" % k, "STEADY_CRASH_LOG=" + log]
            crashed = False
            try:
                ub.start(wrapper=env)
            except RuntimeError:
                crashed = True   # before it answered: at its start
            new = 2 if zone == APPEND else 4
            if not crashed:
                notify(ub.port, zone)
                wait_for(lambda: ub.proc.poll() is not None or disk_serial(path) == new, 30)
                if ub.proc.poll() is not None:
                    crashed = ub.proc.returncode == 75
                    ub.kill()
                else:
                    time.sleep(0.2)
                    ub.stop()
            return crashed

        def check_after(zone, k, crashed, before, new):
            ub = secondary("check", zone, 9)
            ub.start()
            try:
                serial, txt, h0 = served_version(ub.port, zone)
            finally:
                ub.stop()
            ok = serial in (before, new) and txt == serial and \
                h0 == ["10.%d.0.0" % (serial % 256)] and (crashed or serial == new)
            return ok, "%s, crash before operation %d%s: served serial %s, TXT %s, h0 %s " \
                "(on disk before: %d)" % (zone, k, "" if crashed else " (not reached)",
                                           serial, txt, h0, before)

        for zone, before, new in ((APPEND, 1, 2), (REWRITE, 3, 4)):
            log = os.path.join(d, "ops-%s.log" % zone.split(".")[0])
            check(not run(zone, 0, log), "%s: the counting run ends at serial %d" % (zone, new))
            with open(log) as f:
                ops = [line.split(" ", 2) for line in f.read().splitlines()]
            print("%s: %d operations: %s" % (zone, len(ops), " ".join(
                "%s:%s" % (o[1], os.path.basename(o[2]) or "dir") for o in ops)))
            names = [(o[1], o[2]) for o in ops]
            if zone == APPEND:
                jn = afile + ".ixfr"
                created = [i for i, (op, p) in enumerate(names) if op == "open" and p == jn]
                synced = [i for i, (op, p) in enumerate(names) if op == "fsync" and p == zonedir]
                check(created and any(i > created[0] for i in synced),
                      "append: the directory is synced after the journal is created")
            else:
                ren = [i for i, (op, p) in enumerate(names) if op == "rename" and p == zfile]
                unl = [i for i, (op, p) in enumerate(names)
                       if op == "unlink" and p == zfile + ".ixfr"]
                check(ren and unl and unl[0] > ren[0],
                      "rewrite: the journal is removed after the zonefile is renamed "
                      "(rename at %s, unlink at %s)" % (ren, unl))
            bad = []
            for k in range(1, len(ops) + 2):
                crashed = run(zone, k, os.path.join(d, "ops-k.log"))
                ok, why = check_after(zone, k, crashed, before, new)
                if not ok:
                    bad.append(why)
            for why in bad[:5]:
                print("  " + why)
            check(not bad, "%s: after a crash before each of the %d operations a complete "
                  "version no older than serial %d is served (%d not)"
                  % (zone, len(ops), before, len(bad)))
        knot.stop()
    return verdict(fails, "zone-crash-points")


if __name__ == "__main__":
    sys.exit(main())
