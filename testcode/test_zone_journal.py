#!/usr/bin/env python3
"""auth-zone-journal: an IXFR is persisted by an append to the zonefile's
journal (<zonefile>.ixfr), not by a rewrite of the whole zonefile, and a
start comes back at the newest serial on disk without a transfer.

Knot serves an RPZ (--names QNAME triggers) to unbound (one thread, the
auth-zone I/O thread, auth-zone-journal: yes). Checked, in order:
- the first transfer (AXFR) writes the zonefile, and leaves no journal;
- --updates IXFRs, each replacing a few triggers, leave the zonefile as
  it was (same inode, size and serial) and append one record each to the
  journal, chained from the zonefile's serial;
- then an AXFR of the zone held (Knot restarted with its journal purged
  answers the IXFR with the whole zone), applied as its difference, is
  appended to the journal as that difference, and leaves the zonefile as
  it was too; write.bytes is the size of the last record;
- kill -9, Knot stopped (no transfer can happen): the start serves the
  newest serial and the new trigger of the AXFR, not the one it
  replaced, from the zonefile and the journal;
- the last record cut short (a crash in the middle of its append): the
  start serves the serial before it; with Knot back (its journal purged
  before, so it answers with the whole zone), the AXFR's difference is
  appended where the cut record was;
- a complete record after the good ones that does not apply (the last
  one's IXFR named from the serial to itself): the start serves the
  serial of the good records, not the zonefile's alone (issue 66
  finding 16; on patch level 73 the whole journal was dropped);
- a journal that does not follow the zonefile (the zonefile replaced by
  a copy, as another program would write it) is not replayed;
- an IXFR that would take the journal past an eighth of the zonefile's
  size writes the whole zonefile instead, and removes the journal.

Under AddressSanitizer in make test (build/fork-asan). With --valgrind
every start runs under valgrind's memcheck (smaller zone: --names 2000),
and its reports must show no error, the last one (a stop) no leak.

usage: test_zone_journal.py BUILDDIR [--names N] [--updates N] [--valgrind]"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from harness.zone import (answers_address, checker, disk_serial, file_serial,
                          journal_records, list_auth_zone, notify, rpz_from_knot,
                          rpz_qname_zone, sanitizer_reports, siphash24,
                          valgrind_problems, valgrind_wrapper,
                          verdict, wait_for)

ZONE = "rpz.example."
TRIGGER_A = "192.0.2.1"


def append_record_to_itself(zfile, serial):
    """Append to the journal of zfile a copy of its last record's IXFR,
    named from serial to serial, with its checksum: complete, but it
    does not apply (the IXFR in it starts at another serial)."""
    j = journal_records(zfile)
    with open(zfile + ".ixfr", "rb") as f:
        data = f.read()
    last = data[j[2] - j[1][-1][2]:j[2]]
    body = last[16:-8]
    head = b"IXFR" + serial.to_bytes(4, "big") * 2 + len(body).to_bytes(4, "big")
    with open(zfile + ".ixfr", "ab") as f:
        f.write(head + body + siphash24(head + body))


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("build")
    ap.add_argument("--names", type=int, default=20000)
    ap.add_argument("--updates", type=int, default=4)
    ap.add_argument("--valgrind", action="store_true")
    a = ap.parse_args()
    fails, check = checker()
    labels = ["t%d" % i for i in range(a.names)]

    with tempfile.TemporaryDirectory(prefix="steady-zone-journal-") as d:
        text = rpz_qname_zone(ZONE, 1, labels, TRIGGER_A)
        knot, ub = rpz_from_knot(d, a.build, ZONE, text, True,
                                 server_extra="\tauth-zone-journal: yes\n"
                                 "\textended-statistics: yes\n")
        zfile = ub.zonefile(ZONE)
        if a.valgrind:
            plain_start = ub.start
            vglog = os.path.join(d, "valgrind.%p.log")
            ub.start = lambda: plain_start(wrapper=valgrind_wrapper(vglog), timeout=300)

        def update(serial, changed, start=False):
            """Knot serves serial, with the triggers at the indexes of
            changed replaced, reloaded (or started, if start); unbound is
            notified."""
            for i in changed:
                labels[i] = "s%d-%d" % (serial, i)
            with open(knot.zonefile(ZONE), "w") as f:
                f.write(rpz_qname_zone(ZONE, serial, labels, TRIGGER_A))
            if start:
                knot.start({ZONE: serial}, timeout=120)
            else:
                knot.reload({ZONE: serial}, timeout=120)
            notify(ub.port, ZONE)

        def listed_serial():
            """The serial list_auth_zones gives, or None."""
            lst = list_auth_zone(ub, ZONE)
            return int(lst["serial"]) if lst and "serial" in lst else None

        def served(serial, timeout=60):
            return wait_for(lambda: listed_serial() == serial, timeout, step=0.2)

        def answers(label):
            return answers_address(ub.port, label + ".bench.", TRIGGER_A, 2)

        try:
            ub.start()
            ok = wait_for(lambda: file_serial(zfile) == 1, 120)
            check(ok, "serial 1 transferred and written")
            check(journal_records(zfile) is None, "no journal after the AXFR")
            st = os.stat(zfile)
            serial = 1
            for serial in range(2, a.updates + 2):
                update(serial, range(serial * 10, serial * 10 + 5))
                ok = wait_for(lambda: disk_serial(zfile) == serial, 60)
                check(ok and served(serial),
                      "IXFR to serial %d served and on disk (zonefile %s, journal %s)" % (
                          serial, file_serial(zfile), journal_records(zfile)))
                if not ok:
                    break
            # an AXFR of the zone held: Knot without its journal has no
            # IXFR to send ("incomplete history, fallback to AXFR")
            subprocess.run(["knotc", "-c", knot.conf, "-f", "zone-purge", ZONE, "+journal"],
                           capture_output=True, check=True)
            knot.stop()
            full0 = int(ub.stats().get("authzone.zone.xfr.full_held." + ZONE, 0))
            serial += 1
            replaced = labels[serial * 10]
            update(serial, range(serial * 10, serial * 10 + 5), start=True)
            ok = wait_for(lambda: disk_serial(zfile) == serial, 60)
            full = int(ub.stats().get("authzone.zone.xfr.full_held." + ZONE, 0))
            check(ok and served(serial) and full == full0 + 1,
                  "the AXFR of the zone held to serial %d served and on disk (zonefile %s, "
                  "journal %s, full transfers of the zone held %d, were %d)" % (
                      serial, file_serial(zfile), journal_records(zfile), full, full0))
            now = os.stat(zfile)
            check((now.st_ino, now.st_size, now.st_mtime_ns) ==
                  (st.st_ino, st.st_size, st.st_mtime_ns) and file_serial(zfile) == 1,
                  "the zonefile is not written for the IXFRs and the AXFR (serial %s)" %
                  file_serial(zfile))
            j = journal_records(zfile)
            chain = [(r[0], r[1]) for r in j[1]] if j else []
            check(j is not None and j[0] == 1 and
                  chain == [(s - 1, s) for s in range(2, serial + 1)] and
                  j[2] == os.path.getsize(zfile + ".ixfr"),
                  "the journal follows serial 1 with one record per IXFR and the AXFR: %s" %
                  (chain,))
            wb = ub.stats().get("authzone.zone.write.bytes." + ZONE)
            check(j is not None and j[1] and wb == str(j[1][-1][2]),
                  "write.bytes %s is the last record's size %s" % (
                      wb, j[1][-1][2] if j and j[1] else None))

            # a crash, and a start without the primary
            ub.kill()
            knot.stop()
            ub.start()
            check(served(serial, 30) and answers(labels[serial * 10]) and
                  not answers(replaced),
                  "after kill -9, without the primary: serial %d and the AXFR's trigger "
                  "served from the zonefile and the journal, not the one it replaced "
                  "(served %s)" % (serial, listed_serial()))

            # the last record cut short
            ub.kill()
            if not os.path.exists(zfile + ".ixfr"):
                raise RuntimeError("no journal to cut")
            size = os.path.getsize(zfile + ".ixfr")
            with open(zfile + ".ixfr", "r+b") as f:
                f.truncate(size - 9)
            ub.start()
            check(served(serial - 1, 30) and not answers(labels[serial * 10]),
                  "the last record cut short: serial %d served (served %s)" % (
                      serial - 1, listed_serial()))
            knot.start({ZONE: serial}, timeout=120)
            notify(ub.port, ZONE)
            ok = served(serial) and wait_for(
                lambda: (journal_records(zfile) or (0, [], 0))[2] ==
                os.path.getsize(zfile + ".ixfr") and disk_serial(zfile) == serial, 30)
            j = journal_records(zfile)
            check(ok and [(r[0], r[1]) for r in j[1]][-1] == (serial - 1, serial),
                  "the update asked again is appended where the cut record was "
                  "(journal %s)" % (j,))

            # a record that does not apply after the good ones: the last
            # record's IXFR again, named from the serial to itself (an
            # AXFR that kept its serial was so appended before it was
            # refused: finding 16)
            ub.kill()
            knot.stop()
            append_record_to_itself(zfile, serial)
            ub.start()
            check(served(serial, 30) and answers(labels[serial * 10]),
                  "a record that does not apply after the good ones: serial %d served, "
                  "the good records replayed (served %s)" % (serial, listed_serial()))

            # a journal that does not follow the zonefile
            ub.stop()
            shutil.copy2(zfile, zfile + ".copy")
            os.replace(zfile + ".copy", zfile)
            knot.stop()
            ub.start()
            check(served(1, 30) and "does not follow the zonefile" in ub.read_log(),
                  "a journal that does not follow the zonefile is not replayed "
                  "(served %s)" % listed_serial())

            # the journal full: the whole zonefile is written
            knot.start({ZONE: serial}, timeout=120)
            notify(ub.port, ZONE)
            check(wait_for(lambda: disk_serial(zfile) == serial, 60),
                  "serial %d on disk again (the journal started anew)" % serial)
            serial += 1
            update(serial, range(0, a.names // 4))
            ok = wait_for(lambda: file_serial(zfile) == serial, 60)
            check(ok and served(serial) and not os.path.exists(zfile + ".ixfr"),
                  "an IXFR past an eighth of the zonefile's size: the zonefile is "
                  "written (serial %s) and the journal removed (%s)" % (
                      file_serial(zfile), os.path.exists(zfile + ".ixfr")))
            check(answers(labels[0]), "its triggers answer")
        except RuntimeError as e:
            check(False, str(e))
        finally:
            rc = ub.stop()
            knot.stop()
        check(rc == 0, "unbound exit status %s" % rc)
        if a.valgrind:
            logs = sorted(glob.glob(os.path.join(d, "valgrind.*.log")), key=os.path.getmtime)
            for i, p in enumerate(logs):
                with open(p) as f:
                    found = valgrind_problems(f.read(), complete=(i == len(logs) - 1))
                check(not found, "valgrind %s: %s" % (os.path.basename(p), found or "clean"))
            check(len(logs) >= 4, "valgrind ran %d starts" % len(logs))
        reports = sanitizer_reports(ub.read_log())
        check(not reports, "no sanitizer report in the log (%s)" % (reports[:3] or "none"))
        if fails:
            print(ub.read_log()[-4000:])
    return verdict(fails, "zone-journal")


if __name__ == "__main__":
    sys.exit(main())
