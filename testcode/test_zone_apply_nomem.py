#!/usr/bin/env python3
"""A transfer that finds no memory for a second version of its zone is
applied in place, as without the auth-zone I/O thread (issue 41's
finding 7): the I/O thread builds the new version beside the one that is
served, so a zone larger than half the free memory would never update
and would expire, where stock updates it in place.

testcode/oomshim.c fails one calloc or malloc of an auth zone's node
for the apex (sizeof(struct auth_data), from the binary's debug
information, and the name: harness.zone.auth_data_size) while a
trigger file exists: the first node of the new version, or of the copy
for an IXFR. Then the
transfer must be applied in place with a warning ("out of memory for a
new version of the zone, AXFR applied in place"), served and written as
a complete version, and not counted in num.authzone.xfr.apply.nomem;
the next transfer, with memory, goes to a new version again.

--primary nsd: NSD sends the whole zone (AXFR) for every serial.
--primary knot: Knot answers IXFR from its journal; the IXFR changes
  more names than an IXFR applied in place may (so it goes to a copy).
--primary http: the zone is downloaded from a url: (Python's http.server)
  after unbound-control auth_zone_transfer; its zonefile must be the
  download as it was served.
--zonemd: the zone is signed with a ZONEMD (ldns-signzone) and unbound
  checks it (zonemd-check: yes, no trust anchor: the digest is checked).
  The in-place apply must make the check as the copy does: a last serial
  with a wrong digest, applied in place for lack of memory, must be
  neither answered nor written (CVE-2026-77955's rule). The check of
  serial 2 is held at the digest of a large TXT RRset (oomshim.c's
  STEADY_HOLD_DIGEST) while a NOTIFY for the zone must be answered within
  a second: the hash runs with the zone locked, not the zone's transfer
  state, which the worker that answers the NOTIFY takes.
--malformed: a scripted primary sends an AXFR with a record of another
  class (all of serial 3 in answer to an IXFR from serial 2), with
  memory. That is not a lack of memory, and must not be applied in
  place: the zone keeps serving the serial before, and no in-place
  apply is logged.

usage: test_zone_apply_nomem.py BUILDDIR [--primary nsd|knot|http] [--zonemd]
       test_zone_apply_nomem.py BUILDDIR --malformed"""

import argparse
import functools
import http.server
import os
import re
import sys
import tempfile
import threading
import time

import dns.message
import dns.query
import dns.rcode

from harness.zone import (KnotPrimary, Primary, ScriptedPrimary, Secondary, auth_data_size,
                          build_preload,
                          check_clean_exit, check_zonefile, checker, dnssec_keys,
                          file_serial, notify,
                          preload_env, shim_log_lines, sign_zone, verdict,
                          wait_for, write_zone)

ZONE = "example.net."
N = 30000
VARY = 6000  # names an IXFR changes: more than N/8, so not in place
# --zonemd: a TXT RRset whose ZONEMD digest update is held, and the
# length of that update: the canonical owner held.example.net. (18
# octets), type, class, TTL, rdlength (10), and the strings
HELD_STRINGS = 37
HELD_DIGEST_LEN = 18 + 10 + HELD_STRINGS * 201


class HttpPrimary:
    """The zone's file served over HTTP on loopback, for a url: clause;
    the methods of harness.zone.Primary that the test uses."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.server.gate.wait(30)
            super().do_GET()

    def __init__(self, workdir, zones):
        self.dir = os.path.abspath(workdir)
        os.makedirs(self.dir, exist_ok=True)
        self.pid = None
        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(self.Handler, directory=self.dir))
        self.port = self.httpd.server_address[1]
        # while clear, a download waits before it is answered
        self.gate = self.httpd.gate = threading.Event()
        self.gate.set()

    def zonefile(self, zone):
        return os.path.join(self.dir, zone.rstrip(".") + ".zone")

    def url(self, zone):
        return "http://127.0.0.1:%d/%s.zone" % (self.port, zone.rstrip("."))

    def start(self, serials):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.pid = os.getpid()

    def reload(self, serials):
        pass  # the file is served as it is now

    def stop(self):
        if self.pid:
            self.httpd.shutdown()
            self.pid = None
        self.httpd.server_close()


def serve_version(prim, serial, zonemd, keys, bad_digest=False):
    """Write serial into the primary's zonefile (signed with a ZONEMD if
    zonemd; its digest made wrong if bad_digest) and have it served;
    returns the file's text."""
    path = prim.zonefile(ZONE)
    fixed = isinstance(prim, KnotPrimary)
    if not zonemd:
        write_zone(path, ZONE, serial, N, fixed=fixed, vary=VARY)
    else:
        write_zone(path + ".in", ZONE, serial, N, fixed=fixed, vary=VARY)
        with open(path + ".in", "a") as f:
            f.write("held 3600 IN TXT %s\n" % " ".join(['"%s"' % ("x" * 200)] * HELD_STRINGS))
        with open(sign_zone(path + ".in", ZONE, keys, zonemd=True)) as f:
            text = f.read()
        if bad_digest:
            # the last hex digit of the ZONEMD digest, changed
            text, n = re.subn(r"(\tZONEMD\t.*)([0-9a-fA-F])$",
                              lambda m: m.group(1) + ("0" if m.group(2) != "0" else "1"),
                              text, count=1, flags=re.M)
            assert n == 1, "no ZONEMD in the signed zone"
        with open(path + ".new", "w") as f:
            f.write(text)
        os.rename(path + ".new", path)
    if prim.pid:
        prim.reload({ZONE: serial})
    with open(path) as f:
        return f.read()


def answers(sec):
    """The rcode and addresses of h0's A record (a name that carries the
    serial in both kinds of zone)."""
    r = dns.query.udp(dns.message.make_query("h0." + ZONE, "A"), "127.0.0.1",
                      port=sec.port, timeout=2)
    return dns.rcode.to_text(r.rcode()), {x.address for rr in r.answer for x in rr}


def real_primary(a, tmp, check, procs):
    knot, web = a.primary == "knot", a.primary == "http"
    keys = dnssec_keys(tmp, ZONE) if a.zonemd else None
    prim = {"nsd": Primary, "knot": KnotPrimary, "http": HttpPrimary}[a.primary](
        os.path.join(tmp, "prim"), [ZONE])
    procs.append(prim)
    served = {1: serve_version(prim, 1, a.zonemd, keys)}
    sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port, [ZONE],
                    threads=2, io_thread=True, verbosity=3,
                    zone_options=["zonemd-check: yes"] if a.zonemd else ())
    procs.append(sec)
    if web:
        with open(sec.conf) as f:
            text = f.read()
        with open(sec.conf, "w") as f:
            f.write(text.replace("\tprimary: 127.0.0.1@%d\n" % prim.port,
                                 "\turl: \"%s\"\n" % prim.url(ZONE)))
    zfile = sec.zonefile(ZONE)
    trigger, shimlog = os.path.join(tmp, "oom"), os.path.join(tmp, "oom.log")
    hold = os.path.join(tmp, "hold.digest")
    wrapper = ["env"] + preload_env(a.builddir, build_preload(tmp, "oomshim.c")) + [
               "STEADY_OOM_CALLOC_TRIGGER=" + trigger,
               "STEADY_OOM_SIZE=%d" % auth_data_size(a.builddir, ZONE),
               "STEADY_OOM_MALLOC=1", "STEADY_OOM_TIMES=1", "STEADY_OOM_LOG=" + shimlog,
               "STEADY_HOLD_DIGEST=" + hold, "STEADY_HOLD_DIGEST_LEN=%d" % HELD_DIGEST_LEN]
    kind = "IXFR" if knot else "HTTP" if web else "AXFR"
    warning = "out of memory for a new version of the zone, %s applied in place" % kind
    vary = (lambda s: VARY) if knot else None

    def update(serial, nomem, bad_digest=False):
        served[serial] = serve_version(prim, serial, a.zonemd, keys, bad_digest)
        nfail = len(shim_lines())
        if web:
            # the download waits for the trigger: the control command
            # allocates what the shim fails too
            prim.gate.clear()
            sec.control("auth_zone_transfer", ZONE)
        if nomem:
            with open(trigger, "w"):
                pass
        if web:
            time.sleep(0.2)
            prim.gate.set()
        else:
            notify(sec.port, ZONE)
        return nfail

    def on_disk(serial):
        """True if serial's zonefile is complete: the download as it was
        served, or, from a transfer, every record of serial."""
        if web:
            try:
                with open(zfile) as f:
                    return f.read() == served[serial]
            except OSError:
                return False
        s, why = check_zonefile(zfile, ZONE, N, fixed=knot, vary=vary)
        return s == serial and not why

    def shim_lines():
        return shim_log_lines(shimlog, "fail")

    def applied(serial):
        """'in place', 'not in place' (to a new version) or None, from the
        log line of serial's apply."""
        m = re.search(r"auth zone %s updated to serial %d( \(%s applied in place\))?$"
                      % (re.escape(ZONE), serial, kind), sec.read_log(), re.M)
        return None if not m else "in place" if m.group(1) else "not in place"

    try:
        prim.start({ZONE: 1})
        sec.start(wrapper=wrapper)
        check(sec.wait_serial(ZONE, 1, timeout=60, on_disk=False) and
              wait_for(lambda: on_disk(1), 30), "serial 1 served and on disk")
        # serial 2 without memory for a second version, serial 3 with
        for serial, nomem in ((2, True), (3, False)):
            held = a.zonemd and nomem
            if held:
                with open(hold, "w"):
                    pass
            nfail = update(serial, nomem)
            if held:
                ok = wait_for(lambda: shim_log_lines(shimlog, "hold digest"), 60)
                check(ok, "serial %d: the in-place ZONEMD check is held" % serial)
                rc, secs = notify(sec.port, ZONE, timeout=3)
                check(rc == "NOERROR" and secs < 1.0, "serial %d: a NOTIFY while the "
                      "check is held answered %s after %.3f s, want NOERROR within 1 s"
                      % (serial, rc, secs))
                os.unlink(hold)
            ok = sec.wait_serial(ZONE, serial, timeout=60, on_disk=False)
            if nomem:
                os.unlink(trigger)
            check(ok, "serial %d served" % serial)
            if not ok:
                return
            check(wait_for(lambda: on_disk(serial), 30), "serial %d: zonefile complete"
                  % serial)
            rc, addrs = answers(sec)
            want = "10.%d.0.0" % (serial % 256)
            check(rc == "NOERROR" and addrs == {want},
                  "serial %d: h0 answers %s %s, want %s" % (serial, rc, addrs, want))
            failed = shim_lines()[nfail:]
            check(len(failed) == (1 if nomem else 0),
                  "serial %d: the shim failed %d allocations" % (serial, len(failed)))
            how = applied(serial)
            check(how == ("in place" if nomem else "not in place"),
                  "serial %d applied %s" % (serial, how))
        check(sec.read_log().count(warning) == 1, "warned once: %r" % warning)
        st = sec.stats()
        check(st["num.authzone.xfr.apply.nomem"] == "0",
              "num.authzone.xfr.apply.nomem=%s, want 0" % st["num.authzone.xfr.apply.nomem"])
        if a.zonemd:
            # serial 4 with a wrong digest, in place for lack of memory:
            # the check fails, the zone is not answered, the file keeps 3
            nfail = update(4, True, bad_digest=True)
            wait_for(lambda: "ZONEMD verification failed" in sec.read_log(), 60)
            os.unlink(trigger)
            check(len(shim_lines()[nfail:]) == 1, "serial 4: the shim failed one allocation")
            check(sec.read_log().count(warning) == 2, "serial 4 applied in place")
            rc, addrs = answers(sec)
            check(rc == "SERVFAIL", "serial 4 (wrong ZONEMD digest): h0 answers %s %s, "
                  "want SERVFAIL" % (rc, addrs))
            check(on_disk(3), "the zonefile keeps serial 3")
        check_clean_exit(check, sec.stop(), sec.read_log())
    finally:
        for path in (trigger, hold):
            if os.path.exists(path):
                os.unlink(path)


def scripted(a, tmp, check, procs):
    def version(serial, bad=False):
        soa = "%s 3600 IN SOA ns.%s admin.%s %d 3600 600 86400 300" % (
            ZONE, ZONE, ZONE, serial)
        lines = [soa, "%s 3600 IN NS ns.%s" % (ZONE, ZONE), "ns.%s 3600 IN A 127.0.0.1" % ZONE]
        lines += ["h%d.%s 3600 IN A 10.%d.0.%d" % (i, ZONE, serial, i) for i in range(100)]
        if bad:
            lines.append("bad.%s 3600 CH TXT \"another class\"" % ZONE)
        return lines
    prim = ScriptedPrimary(ZONE, {1: version(1), 2: version(2), 3: version(3, bad=True)})
    procs.append(prim)
    sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port, [ZONE],
                    threads=2, io_thread=True, verbosity=4)
    procs.append(sec)
    sec.start()
    check(sec.wait_serial(ZONE, 1, timeout=30), "serial 1 served and on disk")
    prim.set_serial(2)
    notify(sec.port, ZONE)
    check(sec.wait_serial(ZONE, 2, timeout=30), "serial 2 served and on disk")
    # serial 3 as a whole zone: the primary no longer knows serial 2,
    # so it answers the IXFR with all of serial 3
    with prim.lock:
        del prim.versions[2]
    prim.set_serial(3)
    asked = prim.count("IXFR 2")
    notify(sec.port, ZONE)
    check(wait_for(lambda: "could not store AXFR data for %s" % ZONE.rstrip(".")
                   in sec.read_log() or "could not store AXFR data for %s" % ZONE
                   in sec.read_log(), 30) and prim.count("IXFR 2") > asked,
          "the malformed AXFR of serial 3 was received and not stored")
    log = sec.read_log()
    check("AXFR applied in place" not in log, "not applied in place")
    check(sec.serial(ZONE) == 2, "serial 2 still served (served %s)" % sec.serial(ZONE))
    check(file_serial(sec.zonefile(ZONE)) == 2, "the zonefile keeps serial 2")
    st = sec.stats()
    check(st["num.authzone.xfr.apply.nomem"] == "0", "num.authzone.xfr.apply.nomem=%s, "
          "want 0" % st["num.authzone.xfr.apply.nomem"])
    check_clean_exit(check, sec.stop(), sec.read_log())


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    ap.add_argument("--primary", choices=["nsd", "knot", "http"], default="nsd")
    ap.add_argument("--zonemd", action="store_true")
    ap.add_argument("--malformed", action="store_true")
    a = ap.parse_args()
    fails, check = checker()
    procs = []  # the primary, then unbound: stopped in the end
    with tempfile.TemporaryDirectory(prefix="steady-zanomem-") as tmp:
        try:
            (scripted if a.malformed else real_primary)(a, tmp, check, procs)
        finally:
            if len(procs) > 1:
                if fails:
                    print(procs[1].read_log()[-4000:])
                procs[1].kill()
            if procs:
                procs[0].stop()
    what = "malformed AXFR" if a.malformed else "%s%s without memory for a copy" % (
        {"nsd": "AXFR", "knot": "IXFR", "http": "HTTP"}[a.primary],
        " with ZONEMD" if a.zonemd else "")
    return verdict(fails, what)


if __name__ == "__main__":
    sys.exit(main())
