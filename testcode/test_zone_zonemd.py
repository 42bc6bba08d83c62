#!/usr/bin/env python3
"""ZONEMD of a signed secondary zone below a trust anchor, with an IXFR
that arrives while the DS lookup of the ZONEMD check is under way.
testcode/test_zone_tsan.sh runs it against the fork built with
ThreadSanitizer, so that the worker that verifies the zone's DNSKEY after
the lookup, and the auth-zone I/O thread that copies and applies the IXFR
and then checks the rest, run at once; any sanitizer report fails that
test. (That the check no longer writes the zone's data is shown by
testcode/unitzonemd.c: this run did not get a report for that write
either before the fix.)

- example. is signed (ldns-signzone) and served by NSD; its KSK is the
  trust anchor; it delegates sec.example. with a DS.
- sec.example. (--names names, signed, with a ZONEMD, the signatures
  expiring within the TTL) is served by Knot, which answers IXFR from
  its journal; unbound is its secondary with zonemd-check: yes. The
  check verifies the zone's DNSKEY with the DS, which it looks up through
  the validator and iterator at the stub for example.: a proxy in front
  of NSD that holds DS queries until the test lets them go.
- Serial 1 is transferred; its check waits for the DS lookup, which the
  proxy holds. Serial 1 must be neither served nor written to the
  zonefile for --hold seconds while the lookup is held: the rule of
  CVE-2026-77955, that nothing of a serial whose ZONEMD check has not
  passed is served or written, also when the auth-zone I/O thread
  applies the transfer (--io-thread yes|no). --hold must stay below the
  lookup's timeout (about 12 s here), after which the check fails.
  Serial 2 is loaded into Knot and NOTIFYd; --release-delay
  seconds after Knot has sent the IXFR, the DS queries go on.
- Then serial 2 must be served and written, the DS lookup answered, a
  name of serial 2 must answer after the checks (a failed check expires
  the zone), no ZONEMD failure logged, and unbound must stop cleanly.
- With --rollover, serial 2 has new keys only (an unannounced rollover;
  the parent has the DS of both): the check of serial 1 after its lookup,
  with serial 1's key, must not be made of serial 2 if serial 2 is put in
  place first (it would fail and expire the zone): it must be dropped
  (verbosity 4 logs that); serial 2 has a check of its own. Run it with
  --release-delay 0, so that the lookup ends while serial 2 is applied.
- With --disable-at-reload, after that, the config loses zonemd-check and
  unbound gets SIGHUP: the data kept over the reload no longer waits for
  a check, so serial 1 must be served and written within --hold
  seconds; the rest is not run. With --rename-zonefile too, the new
  config also names another zonefile, which holds serial 1 (the zone is
  read from it, not kept): serial 1 must be served within --hold seconds
  (the check that was pending was for the data replaced; issue 41's
  finding 3).
- With --anchor-removed-at-reload (issue 41's finding 6), serial 1 has a
  wrong ZONEMD digest; while its check waits for the held DS lookup, the
  config loses the trust anchor and unbound gets SIGHUP. The data kept
  over the reload then needs no lookup: its check must be made (it
  fails), not dropped: serial 1 must never be served nor written, and
  the failure must be logged, within --hold seconds.
- With --enabled-at-reload (issue 41's finding 6), zonemd-check is off at
  first: serial 1 is served and written without a check. Its zonefile is
  then replaced by an older serial (0), the config turns zonemd-check on
  and unbound gets SIGHUP: the reload keeps serial 1 (newer than the
  file), which now needs a check with a lookup (DS held). For --hold
  seconds it must be neither served nor written (the rule of
  CVE-2026-77955 for data whose check waits for a lookup); after the DS
  is let go, serial 1 must be served and written. With
  --anchor-removed-at-reload too, serial 1 has a wrong ZONEMD digest and
  the new config also loses the trust anchor: the check of the data kept
  needs no lookup, must be made and fail: serial 1 is then neither
  served nor written, and the failure is logged.
- With --anchor-added-at-reload (issue 66's finding 3), the config has
  no trust anchor at first: serial 1 passes its check without a lookup
  and is served and written. Its zonefile is then replaced by an older
  serial (0), the trust anchor is added to the config and unbound
  reloads: the reload keeps serial 1, which now needs a check with a
  lookup (DS held): for --hold seconds it must be neither served nor
  written, then, the DS let go, served and written.
- With --reload-failed (issue 66's finding 4), serial 1 has a wrong
  ZONEMD digest; its check fails when the DS is let go, so nothing is
  written. Then unbound-control flush_zone example. (the keys the check
  cached) and auth_zone_reload of the zone, which has no zonefile to
  read: the data in use is checked again, and that check waits for a
  held DS lookup. For --hold seconds from the reload serial 1 must not be
  served, and after the DS is let go the check must fail again and the
  zone answer SERVFAIL.
- With --queue-nomem (the I/O thread; issue 66's finding 7, issue 67),
  when the DS of serial 1's check is let go, testcode/oomshim.c fails
  the calloc of the job that would take the check's hash to the I/O
  thread. The zone's data is the I/O thread's to change while it runs,
  so the worker does not make the check itself: the check is tried
  again, and must be made by the I/O thread, which writes the zonefile
  (before issue 67 the worker made it).
- With --swap-callback (without the I/O thread; issue 66's finding 7),
  serial 1 has a wrong ZONEMD digest, and while its check waits for the
  held DS lookup the zonefile is replaced by a signed serial 0 with a
  correct one. unbound-control fast_reload +p keeps serial 1 (newer than
  the file) in the zone it makes, pending its check, and gives the zone
  served the file's serial 0. gdb (harness/gdbstop.py) stops the
  fast_reload thread after the swap, before the workers pick up the
  reload, and the DS is let go: the worker's callback of the lookup,
  for the zone replaced, checks its data (serial 0: it passes) and must
  not write the zone found by its name, serial 1 whose check is
  pending. Then, the reload picked up, serial 1's check fails: it is
  never served nor written.
- With --fast-reload (with --anchor-removed-at-reload,
  --enabled-at-reload or --anchor-added-at-reload), the reload is
  unbound-control fast_reload, whose
  new zone is read from the zonefile and takes the data kept from the
  zone served (auth_zone_fast_reload_keep_newer): the same must hold.
- With --io-check (verbosity 4), the log must show that the check after
  the lookup, with its hash of the zone, ran on the auth-zone I/O thread
  (the thread that writes the zonefiles), not on a worker; then serial 3
  is served with a ZONEMD digest that is wrong (its signature too): the
  check on the I/O thread must fail, and the zone must answer SERVFAIL.
- With --queued-write (the I/O thread), after serial 1, a zonefile write
  of serial 2 must not write serial 3 that was put in place before it ran
  and waits for its check (CVE-2026-77955's rule, issue 41's finding 1).
  Knot also serves big. (--big-names names), whose zonefile writes
  testcode/slowshim.c slows while the test holds them: the I/O thread
  writes big.'s serial 2 while serial 2's check (its DS lookup let go)
  and serial 3's apply (a wrong ZONEMD digest, its DS lookup held) queue
  behind it, in that order; so the write that serial 2's check queues
  runs after serial 3 is in place. The zonefile must never hold serial
  3, before or after its check fails.

usage: test_zone_zonemd.py BUILDDIR [--names N] [--release-delay S]
       [--io-check] [--hold S] [--io-thread yes|no]
       [--disable-at-reload [--rename-zonefile]] [--rollover]
       [--anchor-removed-at-reload] [--enabled-at-reload]
       [--anchor-added-at-reload] [--fast-reload] [--reload-failed]
       [--queued-write] [--queue-nomem] [--swap-callback]
       [--big-names N] [--show-log]"""

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

from harness.gdbstop import GdbStop, source_line
from harness.server import free_port
from harness.zone import (KnotPrimary, Primary, Secondary, SignedDelegation,
                      build_preload, checker, file_serial, log_threads, notify,
                      preload_env, rm, shim_log_lines, struct_size, touch,
                      verdict, wait_for, write_zone)

PARENT = "example."
ZONE = "sec.example."
# the unsigned zone whose slowed writes keep the I/O thread busy
BIG = "big."


class HoldProxy:
    """UDP proxy on loopback in front of a name server; DS queries are
    held until release() (the other queries are passed on at once)."""

    def __init__(self, server_port):
        self.server = ("127.0.0.1", server_port)
        self.port = free_port()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", self.port))
        self.sock.settimeout(0.2)
        self.held = []
        self.hold = True
        self.ds_queries = 0
        self.ds_answered = 0
        self.lock = threading.Lock()
        self.stopped = False
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def forward(self, data, addr):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(2)
            s.sendto(data, self.server)
            try:
                answer = s.recv(65535)
            except socket.timeout:
                return False
        self.sock.sendto(answer, addr)
        return True

    def loop(self):
        while not self.stopped:
            try:
                data, addr = self.sock.recvfrom(65535)
            except socket.timeout:
                continue
            try:
                ds = dns.message.from_wire(data).question[0].rdtype == dns.rdatatype.DS
            except Exception:
                ds = False
            with self.lock:
                if ds:
                    self.ds_queries += 1
                    if self.hold:
                        self.held.append((data, addr))
                        continue
            if self.forward(data, addr) and ds:
                self.ds_answered += 1

    def hold_again(self):
        """Hold the DS queries from now on."""
        with self.lock:
            self.hold = True

    def release(self):
        with self.lock:
            self.hold = False
            held, self.held = self.held, []
        for data, addr in held:
            if self.forward(data, addr):
                self.ds_answered += 1

    def stop(self):
        self.stopped = True
        self.thread.join()
        self.sock.close()


def break_zonemd(path, serial, check):
    """Change the ZONEMD digest of the signed zonefile path (its last hex
    digit), so that its signature and its hash no longer match."""
    with open(path) as f:
        lines = f.read().splitlines()
    n = [i for i, line in enumerate(lines) if "\tZONEMD\t" in line and "RRSIG" not in line]
    check(len(n) == 1, "one ZONEMD line in serial %d" % serial)
    lines[n[0]] = lines[n[0]][:-1] + ("0" if lines[n[0]][-1] != "0" else "1")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def serve_wrong_zonemd(ub, knot, zones, serial, check):
    """Knot serves serial of ZONE with a wrong ZONEMD digest (its
    signature too), and unbound is NOTIFYd."""
    path = knot.zonefile(ZONE)
    zones.child_zonefile(serial, path, expire=1800)
    break_zonemd(path, serial, check)
    knot.reload({ZONE: serial})
    notify(ub.port, ZONE)


def answers_servfail(ub):
    """A name of ZONE answers SERVFAIL."""
    q = dns.message.make_query("h1.%s" % ZONE, "A")
    try:
        r = dns.query.udp(q, "127.0.0.1", port=ub.port, timeout=2)
    except Exception:
        return False
    return r.rcode() == dns.rcode.SERVFAIL


def knot_ixfrs_sent(knot, zone):
    """How many IXFRs of zone Knot has sent."""
    done = re.compile(r"\[%s\] IXFR, outgoing.*(finished|completed)" % re.escape(zone))
    with open(os.path.join(knot.dir, "knot.log"), errors="replace") as f:
        return sum(1 for line in f if done.search(line))


def big_write_started(ub, knot, big_names, check):
    """Knot serves big.'s serial 2 and unbound is NOTIFYd; returns when the
    I/O thread writes its zonefile (slowed by the shim while its trigger
    exists), with the function that lists the write's temp files."""
    write_zone(knot.zonefile(BIG), BIG, 2, big_names)
    knot.reload({BIG: 2})
    notify(ub.port, BIG)
    prefix = os.path.basename(ub.zonefile(BIG)) + ".tmp"

    def tmp():
        return [f for f in os.listdir(os.path.dirname(ub.zonefile(BIG)))
                if f.startswith(prefix)]
    check(wait_for(tmp, 60), "the zonefile write of %s runs" % BIG)
    return tmp


def queued_write_checks(ub, knot, zones, proxy, slow, big_names, check):
    """A zonefile write that serial 2's check queued runs after serial 3,
    whose check waits, was put in place: it must not write serial 3."""
    written = set()

    def poll_file(seconds):
        end = time.monotonic() + seconds
        while True:
            s = file_serial(ub.zonefile(ZONE))
            if s is not None:
                written.add(s)
            if time.monotonic() >= end:
                return
            time.sleep(0.05)
    check(ub.wait_serial(ZONE, 1, timeout=60) and ub.wait_serial(BIG, 1, timeout=60),
          "serial 1 of both zones served and written")
    # the DS lookups of the next checks go to the proxy, which holds them
    proxy.hold_again()
    ub.control("flush_zone", ZONE)
    open(slow, "w").close()
    ixfrs = knot_ixfrs_sent(knot, ZONE)
    asked = proxy.ds_queries
    zones.child_zonefile(2, knot.zonefile(ZONE), expire=1800)
    knot.reload({ZONE: 2})
    notify(ub.port, ZONE)
    check(wait_for(lambda: proxy.ds_queries > asked, 60),
          "serial 2 applied, its check looks up the DS (held)")
    # the I/O thread writes big.'s serial 2, slowly, while the rest queues
    tmp = big_write_started(ub, knot, big_names, check)
    answered = proxy.ds_answered
    proxy.release()
    check(wait_for(lambda: proxy.ds_answered > answered, 30),
          "serial 2's DS lookup answered")
    # the worker queues serial 2's check on the I/O thread; then serial 3
    # is transferred and its apply is queued behind that check
    time.sleep(1)
    proxy.hold_again()
    ub.control("flush_zone", ZONE)
    asked = proxy.ds_queries
    serve_wrong_zonemd(ub, knot, zones, 3, check)
    check(wait_for(lambda: knot_ixfrs_sent(knot, ZONE) >= ixfrs + 2, 60),
          "Knot sent the IXFR of serial 3")
    poll_file(1)
    check(tmp() and written == {1},
          "the write of %s still runs, %s's zonefile has serial 1 (%s): the "
          "check of serial 2 and the apply of serial 3 are queued behind it"
          % (BIG, ZONE, sorted(written)))
    os.unlink(slow)
    # serial 2's check passes and queues its write, serial 3 is put in
    # place and waits for its DS lookup, then the write runs
    check(wait_for(lambda: proxy.ds_queries > asked, 60),
          "serial 3 applied, its check looks up the DS (held)")
    poll_file(3)
    proxy.release()
    check(wait_for(lambda: "ZONEMD verification failed" in ub.read_log(), 60),
          "serial 3's ZONEMD check failed")
    check(answers_servfail(ub), "the zone answers SERVFAIL after the failed check")
    poll_file(2)
    check(3 not in written, "%s's zonefile never held serial 3, whose ZONEMD check "
          "had not passed (its serials: %s)" % (ZONE, sorted(written)))


def io_thread_checks(ub, knot, zones, check):
    """The ZONEMD checks after the lookups ran on the I/O thread; a wrong
    ZONEMD, checked there, expires the zone. The I/O thread is known by
    its number in the log, not by what it logs: a worker that checks the
    zone itself also writes the zonefile after the check."""
    log = ub.read_log()
    io = {str(ub.threads)}
    writes = log_threads(log, "write zonefile")
    done = log_threads(log, "auth zone %s ZONEMD verification successful" % ZONE)
    check(writes == io, "the zonefiles were written by the I/O thread "
          "(threads %s, the I/O thread %s)" % (sorted(writes), sorted(io)))
    check(done and done <= io,
          "the ZONEMD checks after the lookup ran on the I/O thread (threads %s, "
          "the I/O thread %s)" % (sorted(done), sorted(io)))
    serve_wrong_zonemd(ub, knot, zones, 3, check)
    servfail = lambda: answers_servfail(ub)
    check(wait_for(servfail, 60), "the zone with the wrong ZONEMD answers SERVFAIL")
    # 1.26 (CVE-2026-77955) does not serve the zone while its check waits
    # for the lookup either, so the SERVFAIL can come before the check
    # has failed: wait for the failure itself
    text = "auth zone %s: ZONEMD verification failed" % ZONE
    wait_for(lambda: log_threads(ub.read_log(), text), 60)
    failed = log_threads(ub.read_log(), text)
    check(servfail(), "the zone answers SERVFAIL after its ZONEMD check failed")
    check(failed and failed <= io, "the failed check ran on the I/O thread (threads %s)"
          % sorted(failed))


def watch(ub, seconds):
    """The serials of ZONE served and in its zonefile, seen for seconds."""
    served, written = set(), set()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        s = ub.serial(ZONE)
        if s is not None:
            served.add(s)
        s = file_serial(ub.zonefile(ZONE))
        if s is not None:
            written.add(s)
        time.sleep(0.1)
    return served, written


def pending_checks(ub, proxy, hold, check):
    """While the DS lookup of serial 1's ZONEMD check is held, serial 1 is
    not served and not written (CVE-2026-77955)."""
    # the lookup starts when the transferred data is in place
    check(wait_for(lambda: proxy.ds_queries > 0, 120),
          "serial 1 transferred: its ZONEMD check looks up the DS (%d queries held)"
          % proxy.ds_queries)
    served, written = watch(ub, hold)
    check(not served, "nothing served for %s while its ZONEMD check waits for the "
          "DS lookup (served serials %s in %.1f s)" % (ZONE, sorted(served), hold))
    check(not written, "nothing written for %s while its ZONEMD check waits for the "
          "DS lookup (zonefile serials %s)" % (ZONE, sorted(written)))


def disable_at_reload(ub, hold, check, renamed=None):
    """The config loses zonemd-check while serial 1 waits for its check;
    after SIGHUP, serial 1 is served and written. renamed: the zonefile
    the new config names, which holds serial 1."""
    with open(ub.conf) as f:
        text = f.read()
    text = text.replace("\tzonemd-check: yes\n", "")
    if renamed:
        old = '\tzonefile: "%s"\n' % ub.zonefile(ZONE)
        check(old in text, "the config names the zonefile")
        text = text.replace(old, '\tzonefile: "%s"\n' % renamed)
    with open(ub.conf, "w") as f:
        f.write(text)
    os.kill(ub.proc.pid, signal.SIGHUP)
    if renamed:
        check(wait_for(lambda: ub.serial(ZONE) == 1, hold),
              "serial 1 served within %.1f s of a reload that turned zonemd-check "
              "off and read it from zonefile %s (served %s)" % (
                  hold, renamed, ub.serial(ZONE)))
        return
    check(ub.wait_serial(ZONE, 1, timeout=hold),
          "serial 1 served and written within %.1f s of a reload that turned "
          "zonemd-check off (served %s, file %s)" % (
              hold, ub.serial(ZONE), file_serial(ub.zonefile(ZONE))))


def answers_for(ub, seconds):
    """The A answers of h1 of ZONE for seconds, asked one at a time with a
    short timeout (half of them go to a worker that may be held): how
    many had data, and how many answered at all."""
    data = answered = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        q = dns.message.make_query("h1.%s" % ZONE, "A")
        try:
            r = dns.query.udp(q, "127.0.0.1", port=ub.port, timeout=0.2)
        except Exception:
            continue
        answered += 1
        if r.answer:
            data += 1
    return data, answered


def queue_nomem(ub, proxy, nomem, shimlog, check):
    """The job that takes the check's hash to the I/O thread cannot be
    allocated: the check is tried again, the I/O thread makes it and
    writes the zonefile."""
    touch(nomem)
    proxy.release()
    check(ub.wait_serial(ZONE, 1, timeout=60),
          "serial 1 served and written after its check (served %s, file %s)"
          % (ub.serial(ZONE), file_serial(ub.zonefile(ZONE))))
    rm(nomem)
    failed = shim_log_lines(shimlog, "fail")
    check(len(failed) == 1, "the job of the check's hash was not allocated "
          "(shim: %s)" % failed)
    log = ub.read_log()
    done = log_threads(log, "auth zone %s ZONEMD verification successful" % ZONE)
    writes = log_threads(log, "write zonefile")
    io = {str(ub.threads)}
    check("ZONEMD check" in log and "tried again" in log,
          "the failed job of the check was logged, and tried again")
    check(done == io, "the check was made by the I/O thread, not by a "
          "worker (threads %s, the I/O thread %s)" % (sorted(done),
                                                     sorted(io)))
    check(writes == io, "the zonefile was written by the I/O thread "
          "(threads %s, the I/O thread %s)" % (sorted(writes), sorted(io)))


def hold_worker0(ub):
    """A remote control connection that sends its magic and not its
    command: worker 0, which runs the commands with the socket blocking,
    waits in its read until the socket returned gets a line or closes."""
    s = socket.create_connection(("127.0.0.1", ub.control_port), timeout=5)
    s.sendall(b"UBCT1 ")
    return s


def reload_failed(ub, knot, proxy, slow, big_names, hold, check):
    """Serial 1, a wrong ZONEMD digest, fails its check; auth_zone_reload
    without a zonefile checks it again: it is not served between the
    reload and the start of its check's lookup, nor while that waits,
    nor after the check fails again."""
    proxy.release()
    check(wait_for(lambda: "ZONEMD verification failed" in ub.read_log(), 60),
          "serial 1's ZONEMD check failed")
    check(wait_for(lambda: answers_servfail(ub), 10),
          "%s answers SERVFAIL after its check failed" % ZONE)
    check(not os.path.exists(ub.zonefile(ZONE)), "no zonefile written")
    proxy.hold_again()
    # the keys and DS that the check cached: the next check looks up
    ub.control("flush_zone", PARENT)
    # the I/O thread writes big.'s serial 2, slowly, and the reload job
    # queues behind that write
    open(slow, "w").close()
    tmp = big_write_started(ub, knot, big_names, check)
    queries = proxy.ds_queries
    reload_cmd = subprocess.Popen([ub.bin("unbound-control"), "-c", ub.conf,
                                   "auth_zone_reload", ZONE],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True)
    # worker 0 queues the reload job; then it is held, so that it does not
    # start the check's lookup when the job is done
    time.sleep(1)
    held = hold_worker0(ub)
    time.sleep(0.5)
    os.unlink(slow)
    data, answered = answers_for(ub, hold)
    check(not tmp(), "the write of %s ended" % BIG)
    check(answered > 0 and data == 0 and not os.path.exists(ub.zonefile(ZONE)),
          "serial 1, whose ZONEMD check failed, neither served nor written "
          "after auth_zone_reload ran while worker 0 is held, before its "
          "check's lookup starts (%d of %d answers had its data)"
          % (data, answered))
    held.sendall(b"status\n")
    held.close()
    out = reload_cmd.communicate(timeout=30)[0]
    check(reload_cmd.returncode == 0, "auth_zone_reload of %s: %s" % (
        ZONE, out.strip()))
    check(wait_for(lambda: proxy.ds_queries > queries, 30),
          "the check after the reload looks up the DS (%d held)"
          % (proxy.ds_queries - queries))
    served, written = watch(ub, 1)
    check(not served and not written, "serial 1 not served while the check "
          "after the reload waits for the DS lookup (served %s, zonefile %s)"
          % (sorted(served), sorted(written)))
    proxy.release()
    check(wait_for(lambda: ub.read_log().count("ZONEMD verification failed") >= 2,
                   30), "the check after the reload failed too")
    served, written = watch(ub, 1)
    check(not served and not written and answers_servfail(ub),
          "serial 1 not served after that check (served %s, zonefile %s)"
          % (sorted(served), sorted(written)))


def reload(ub, fast, check):
    """SIGHUP, or with fast unbound-control fast_reload; returns when
    the reload is done."""
    if not fast:
        starts = ub.read_log().count("start of service")
        os.kill(ub.proc.pid, signal.SIGHUP)
        check(wait_for(lambda: ub.read_log().count("start of service") > starts, 60),
              "unbound reloaded")
        return
    r = ub.control("fast_reload", check=False, timeout=60)
    check(r.returncode == 0 and "ok" in r.stdout.split(),
          "fast_reload answers ok: %s" % (r.stdout + r.stderr).strip()[-200:])


def anchor_removed_at_reload(ub, hold, check, fast):
    """Serial 1, with a wrong ZONEMD digest, waits for its check; the
    config loses the trust anchor; after the reload the check is made and
    fails: serial 1 is neither served nor written."""
    with open(ub.conf) as f:
        text = f.read()
    text2 = re.sub(r"\ttrust-anchor-file: .*\n", "", text)
    check(text2 != text, "the config names a trust anchor")
    with open(ub.conf, "w") as f:
        f.write(text2)
    reload(ub, fast, check)
    served, written = watch(ub, hold)
    check(1 not in served and 1 not in written, "serial 1, with a wrong ZONEMD "
          "digest, neither served nor written after a reload that removed its "
          "trust anchor (served %s, zonefile %s)" % (sorted(served), sorted(written)))
    check("ZONEMD verification failed" in ub.read_log(),
          "its ZONEMD check was made at the reload, and failed")


def enabled_at_reload(ub, proxy, hold, check, fast, no_anchor, anchor=None):
    """zonemd-check is turned on at a reload that keeps serial 1 over an
    older zonefile: serial 1 waits for its check (DS held) before it is
    served and written. no_anchor: the trust anchor goes too, and serial
    1 (a wrong digest) fails its check at the reload. anchor: instead,
    zonemd-check was on and the reload adds this trust anchor line."""
    what = "with zonemd-check and no trust anchor" if anchor else \
        "without zonemd-check"
    check(ub.wait_serial(ZONE, 1, timeout=60),
          "serial 1 served and written %s (served %s, file %s)"
          % (what, ub.serial(ZONE), file_serial(ub.zonefile(ZONE))))
    write_zone(ub.zonefile(ZONE), ZONE, 0, 10)
    with open(ub.conf) as f:
        text = f.read()
    if anchor:
        mc = '\tmodule-config: "validator iterator"\n'
        check(mc in text, "the config has the validator")
        text = text.replace(mc, mc + anchor)
        what = "added its trust anchor"
    else:
        text = text.replace('\tname: "%s"\n' % ZONE,
                            '\tname: "%s"\n\tzonemd-check: yes\n' % ZONE)
        what = "turned zonemd-check on"
    if no_anchor:
        text = re.sub(r"\ttrust-anchor-file: .*\n", "", text)
    with open(ub.conf, "w") as f:
        f.write(text)
    reload(ub, fast, check)
    if no_anchor:
        served, written = watch(ub, hold)
        check(1 not in served and 1 not in written, "serial 1, with a wrong "
              "ZONEMD digest, kept over an older zonefile by a reload that turned "
              "zonemd-check on and removed the trust anchor, neither served nor "
              "written (served %s, zonefile %s)" % (sorted(served), sorted(written)))
        check("ZONEMD verification failed" in ub.read_log(),
              "its ZONEMD check was made at the reload, and failed")
        return
    check(wait_for(lambda: proxy.ds_queries > 0, 30),
          "after the reload, serial 1's ZONEMD check looks up the DS (%d held)"
          % proxy.ds_queries)
    served, written = watch(ub, hold)
    check(not served and 1 not in written, "serial 1, kept over an older zonefile "
          "by a reload that %s, neither served nor written "
          "while its check waits for the DS lookup (served %s, zonefile %s)"
          % (what, sorted(served), sorted(written)))
    proxy.release()
    check(ub.wait_serial(ZONE, 1, timeout=60),
          "serial 1 served and written after its check passed (served %s, file %s)"
          % (ub.serial(ZONE), file_serial(ub.zonefile(ZONE))))


def swap_callback(ub, zones, proxy, build, workdir, hold, check):
    """Serial 1 (a wrong digest) waits for its check, the zonefile has
    serial 0 (a correct one); fast_reload +p is stopped after its swap
    while the DS lookup ends: the callback for the zone replaced must not
    write serial 1, kept in the new zone and pending its check."""
    zones.child_zonefile(0, ub.zonefile(ZONE), expire=1800)
    path, line = source_line(build, "daemon/remote.c",
                             "if(!fr_reload_ipc(fr, newcfg, &ct)) {",
                             "auth_zones_write_behind(")
    gdb = GdbStop(ub.proc.pid, path, line, workdir)
    cmd = None
    try:
        time.sleep(1)
        cmd = subprocess.Popen([ub.bin("unbound-control"), "-c", ub.conf,
                                "fast_reload", "+p"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        stopped = wait_for(gdb.hit, 30)
        check(stopped, "fast_reload +p stopped after its swap of the zones")
        if not stopped:
            return
        answered = proxy.ds_answered
        proxy.release()
        check(wait_for(lambda: proxy.ds_answered > answered, 10),
              "the held DS lookup answered while fast_reload is stopped")
        # the callback checks and writes on the worker
        served, written = watch(ub, 2)
        check(1 not in written, "the callback of the lookup for the zone "
              "replaced did not write serial 1, whose check is pending "
              "(zonefile %s)" % sorted(written))
        gdb.go()
        try:
            out, _ = cmd.communicate(timeout=60)
            cmd = None
        except subprocess.TimeoutExpired:
            out = "no answer in 60 s"
        check(out.strip().endswith("ok"), "fast_reload +p answers ok: %r"
              % out.strip()[-200:])
    finally:
        if cmd is not None:
            cmd.kill()
            cmd.wait()
        gdb.detach()
    served, written = watch(ub, hold)
    check(1 not in served and 1 not in written, "serial 1, with a wrong "
          "ZONEMD digest, neither served nor written after the reload "
          "(served %s, zonefile %s)" % (sorted(served), sorted(written)))
    check(wait_for(lambda: "ZONEMD verification failed" in ub.read_log(), 30),
          "serial 1's check, after the reload, failed")


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("build")
    ap.add_argument("--names", type=int, default=20000)
    ap.add_argument("--release-delay", type=float, default=0.3)
    ap.add_argument("--io-check", action="store_true")
    ap.add_argument("--hold", type=float, default=3.0)
    ap.add_argument("--io-thread", choices=["yes", "no"])
    ap.add_argument("--disable-at-reload", action="store_true")
    ap.add_argument("--rename-zonefile", action="store_true")
    ap.add_argument("--rollover", action="store_true")
    ap.add_argument("--anchor-removed-at-reload", action="store_true")
    ap.add_argument("--enabled-at-reload", action="store_true")
    ap.add_argument("--anchor-added-at-reload", action="store_true")
    ap.add_argument("--fast-reload", action="store_true")
    ap.add_argument("--reload-failed", action="store_true")
    ap.add_argument("--queue-nomem", action="store_true")
    ap.add_argument("--queued-write", action="store_true")
    ap.add_argument("--swap-callback", action="store_true")
    ap.add_argument("--big-names", type=int, default=20000)
    ap.add_argument("--show-log", action="store_true")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    fails, check = checker()

    with tempfile.TemporaryDirectory(prefix="steady-zonemd-") as d:
        own = [ZONE] + ([BIG] if a.queued_write or a.reload_failed else [])
        knot = KnotPrimary(os.path.join(d, "knot"), own)
        nsd = Primary(os.path.join(d, "nsd"), [PARENT])
        zones = SignedDelegation(os.path.join(d, "keys"), PARENT, ZONE, a.names)
        os.replace(zones.parent_signed, nsd.zonefile(PARENT))
        # signatures that expire before the TTL of 3600: the check's
        # validation lowers the TTL of what it verifies to that
        zones.child_zonefile(1, knot.zonefile(ZONE), expire=1800)
        if a.anchor_removed_at_reload or a.reload_failed or a.swap_callback:
            break_zonemd(knot.zonefile(ZONE), 1, check)
        nsd.start({PARENT: 1})
        serials = {ZONE: 1}
        if a.queued_write or a.reload_failed:
            write_zone(knot.zonefile(BIG), BIG, 1, a.big_names)
            serials[BIG] = 1
        knot.start(serials)
        proxy = HoldProxy(nsd.port)
        ub = Secondary(build, os.path.join(d, "unbound"), knot.port, own,
                       verbosity=4 if a.show_log or a.io_check or a.rollover or
                       a.queue_nomem else 1,
                       io_thread=None if a.io_thread is None else a.io_thread == "yes")
        zones.secondary_conf(ub.conf, proxy.port)
        if a.enabled_at_reload:
            with open(ub.conf) as f:
                text = f.read()
            with open(ub.conf, "w") as f:
                f.write(text.replace("\tzonemd-check: yes\n", ""))
        anchor = None
        if a.anchor_added_at_reload:
            with open(ub.conf) as f:
                text = f.read()
            m = re.search(r"\ttrust-anchor-file: .*\n", text)
            check(m is not None, "the config names a trust anchor")
            anchor = m.group(0)
            with open(ub.conf, "w") as f:
                f.write(text.replace(anchor, ""))
        rc = None
        wrapper, slow = None, os.path.join(d, "slow")
        if a.queued_write or a.reload_failed:
            # slowshim.c slows the zonefile writes while slow exists
            wrapper = ["env", "LD_PRELOAD=" + build_preload(d, "slowshim.c"),
                       "STEADY_SLOW=" + slow, "STEADY_SLOW_USEC=20000",
                       "STEADY_SLOW_EVERY=10"]
        nomem, shimlog = os.path.join(d, "oom.calloc"), os.path.join(d, "shim.log")
        if a.queue_nomem:
            wrapper = ["env"] + preload_env(build, build_preload(d, "oomshim.c")) + [
                "STEADY_OOM_CALLOC_TRIGGER=" + nomem, "STEADY_OOM_TIMES=1",
                "STEADY_OOM_SIZE=%d" % struct_size(build, "auth_io_job"),
                "STEADY_OOM_LOG=" + shimlog]
        try:
            ub.start(wrapper=wrapper)
            if a.enabled_at_reload or a.anchor_added_at_reload:
                enabled_at_reload(ub, proxy, a.hold, check, a.fast_reload,
                                  a.anchor_removed_at_reload, anchor)
                raise StopIteration
            pending_checks(ub, proxy, a.hold, check)
            if a.queue_nomem:
                queue_nomem(ub, proxy, nomem, shimlog, check)
                raise StopIteration
            if a.swap_callback:
                swap_callback(ub, zones, proxy, build, d, a.hold, check)
                raise StopIteration
            if a.reload_failed:
                reload_failed(ub, knot, proxy, slow, a.big_names, a.hold, check)
                raise StopIteration
            if a.anchor_removed_at_reload:
                anchor_removed_at_reload(ub, a.hold, check, a.fast_reload)
                raise StopIteration
            if a.queued_write:
                proxy.release()
                queued_write_checks(ub, knot, zones, proxy, slow, a.big_names, check)
                raise StopIteration
            if a.disable_at_reload:
                renamed = None
                if a.rename_zonefile:
                    # serial 1, as the primary serves it
                    renamed = os.path.join(d, "renamed.zone")
                    with open(knot.zonefile(ZONE)) as f, open(renamed, "w") as o:
                        o.write(f.read())
                disable_at_reload(ub, a.hold, check, renamed)
                raise StopIteration
            check(wait_for(lambda: proxy.ds_queries > 0, 30),
                  "the ZONEMD check looks up the DS (%d queries held)" % proxy.ds_queries)
            if a.rollover:
                zones.rollover()
            zones.child_zonefile(2, knot.zonefile(ZONE), expire=1800)
            knot.reload({ZONE: 2})
            klog = os.path.join(knot.dir, "knot.log")
            done = re.compile(r"IXFR, outgoing.*(finished|completed)")

            def ixfr_sent():
                with open(klog, errors="replace") as f:
                    return any(done.search(line) for line in f)
            notify(ub.port, ZONE)
            check(wait_for(ixfr_sent, 60), "Knot sent the IXFR of serial 2")
            time.sleep(a.release_delay)
            proxy.release()
            check(ub.wait_serial(ZONE, 2, timeout=120),
                  "serial 2 applied and written (served %s, file %s)" % (
                      ub.serial(ZONE), file_serial(ub.zonefile(ZONE))))
            check(wait_for(lambda: proxy.ds_answered > 0, 30),
                  "the DS lookup was answered (%d)" % proxy.ds_answered)
            # time for the check of serial 2, then the zone must answer
            time.sleep(2)
            q = dns.message.make_query("h1.%s" % ZONE, "A")
            r = dns.query.udp(q, "127.0.0.1", port=ub.port, timeout=5)
            check(any("10.2.0.1" in rr.to_text() for rr in r.answer),
                  "h1.%s answers from serial 2 after the ZONEMD checks: %s" % (
                      ZONE, [rr.to_text() for rr in r.answer] or dns.rcode.to_text(r.rcode())))
            check("ZONEMD verification failed" not in ub.read_log(),
                  "no ZONEMD verification failure logged")
            if a.rollover:
                # else serial 2 was in place before the check of serial 1
                # was queued, and the test did not make the race it is for
                check("ZONEMD check dropped, the zone has other data now"
                      in ub.read_log(), "the check of serial 1 was queued before "
                      "serial 2 was put in place, and dropped")
            if a.io_check:
                io_thread_checks(ub, knot, zones, check)
        except StopIteration:
            pass
        finally:
            rc = ub.stop()
            proxy.stop()
            knot.stop()
            nsd.stop()
        check(rc == 0, "unbound exit status %s" % rc)
        if fails or a.show_log:
            log = ub.read_log()
            print("\n".join(line for line in log.splitlines()
                            if "zonemd" in line.lower() or "TTL" in line)[-3000:])
            if fails:
                print(log[-3000:])
    return verdict(fails, "zone-zonemd")


if __name__ == "__main__":
    sys.exit(main())
