#!/usr/bin/env python3
"""unbound-control auth_zone_reload of a zone without a zonefile checks
its ZONEMD again, as stock does, and does not bring back a zone whose
ZONEMD failed. NSD serves a zone whose ZONEMD digest is wrong; unbound is
its secondary with zonemd-check: yes and no zonefile. The transfer fails
the check, so the zone answers SERVFAIL; auth_zone_reload then must
answer an error that names the ZONEMD check, and the zone must still
answer SERVFAIL. A zone without ZONEMD (which passes the check, as
zonemd-reject-absence is no) reloads "ok" and keeps answering.

With --held-hash (the auth-zone I/O thread), the good zone is signed
with a ZONEMD (ldns-signzone), so that its check hashes the zone, and
has a TXT RRset of a size of its own; testcode/oomshim.c holds the
digest update of that RRset while the file-less auth_zone_reload checks
the zone again (issue 41's finding 5: that hash ran with the zone's
write lock and xfr->lock held, so queries for the zone, on the worker
that got them, waited for the whole hash). While it is held, the zone
must answer, and so must a NOTIFY for it (which takes xfr->lock); then
the reload answers ok.

usage: test_zone_zonemd_reload.py BUILDDIR [--io-thread yes|no|unset]
       [--held-hash]"""

import argparse
import os
import sys
import tempfile

import dns.message
import dns.query
import dns.rcode

import threading

from harness.zone import (Primary, Secondary, build_preload, dnssec_keys,
                          notify, shim_log_lines, sign_zone,
                          verdict, wait_for)

BAD, GOOD = "badzmd.example.", "goodzmd.example."
# --held-hash: the TXT RRset of GOOD whose digest update is held, and the
# length of that update: the canonical owner held.goodzmd.example. (22
# octets), type, class, TTL, rdlength (10), and the strings
STRINGS = 37
DIGEST_LEN = 22 + 10 + STRINGS * 201


def zone_text(origin, zonemd):
    return ("$ORIGIN %s\n$TTL 3600\n"
            "@ IN SOA ns.%s admin.%s 1 3600 600 86400 300\n"
            "@ IN NS ns\nns IN A 127.0.0.1\nwww IN A 10.0.0.1\n%s" % (
                origin, origin, origin, zonemd))


def rcode_of(sec, name):
    try:
        r = dns.query.udp(dns.message.make_query(name, "A"), "127.0.0.1",
                          port=sec.port, timeout=2)
    except Exception:
        return "timeout"
    return dns.rcode.to_text(r.rcode())


def held_hash_checks(sec, hold, shimlog, fails):
    """auth_zone_reload of GOOD, with its ZONEMD hash held: the zone
    answers queries and NOTIFY meanwhile."""
    out = {}

    def reload():
        out["text"] = sec.control("auth_zone_reload", GOOD, check=False,
                                  timeout=120).stdout.strip()
    open(hold, "w").close()
    t = threading.Thread(target=reload, daemon=True)
    t.start()
    try:
        if not wait_for(lambda: shim_log_lines(shimlog, "hold digest"), 30):
            fails.append("the ZONEMD hash of auth_zone_reload %s was not held" % GOOD)
            return
        # each of the two workers gets some of them
        rcs = [rcode_of(sec, "www." + GOOD) for _ in range(6)]
        print("while the hash of auth_zone_reload %s is held: %s" % (GOOD, rcs))
        if rcs != ["NOERROR"] * 6:
            fails.append("while the ZONEMD hash of auth_zone_reload %s was held, "
                         "its queries answered %s, want NOERROR" % (GOOD, rcs))
        rcode, secs = notify(sec.port, GOOD)
        print("NOTIFY while held: %s in %.2f s" % (rcode, secs))
        if rcode != "NOERROR":
            fails.append("while the ZONEMD hash of auth_zone_reload %s was held, "
                         "a NOTIFY answered %s" % (GOOD, rcode))
        if not t.is_alive():
            fails.append("auth_zone_reload %s answered %r while its hash was held"
                         % (GOOD, out.get("text")))
    finally:
        os.unlink(hold)
        t.join(120)
    print("auth_zone_reload %s with the held hash: %r" % (GOOD, out.get("text")))
    if out.get("text", "").startswith("error") or not out.get("text"):
        fails.append("auth_zone_reload of %s with the held hash answered %r"
                     % (GOOD, out.get("text")))


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    # unset: the option is not in the config (for stock, which lacks it)
    ap.add_argument("--io-thread", choices=["yes", "no", "unset"], default="yes")
    ap.add_argument("--held-hash", action="store_true")
    a = ap.parse_args()
    if a.held_hash and a.io_thread != "yes":
        ap.error("--held-hash holds the hash on the auth-zone I/O thread")
    fails = []
    with tempfile.TemporaryDirectory(prefix="steady-zmdreload-") as tmp:
        prim = Primary(os.path.join(tmp, "nsd"), [BAD, GOOD])
        # SHA384 of 48 zero octets: a digest that cannot match
        with open(prim.zonefile(BAD), "w") as f:
            f.write(zone_text(BAD, "@ IN ZONEMD 1 1 1 %s\n" % ("00" * 48)))
        # no ZONEMD: the check passes (zonemd-reject-absence: no)
        with open(prim.zonefile(GOOD), "w") as f:
            f.write(zone_text(GOOD, ""))
        wrapper, hold, shimlog = None, os.path.join(tmp, "hold"), os.path.join(tmp, "shim.log")
        if a.held_hash:
            # signed with a correct ZONEMD, and the TXT RRset whose digest
            # update the shim holds
            path = os.path.join(tmp, "good.zone")
            with open(path, "w") as f:
                f.write(zone_text(GOOD, "held IN TXT %s\n" % " ".join(
                    ["\"%s\"" % ("x" * 200)] * STRINGS)))
            os.replace(sign_zone(path, GOOD, dnssec_keys(tmp, GOOD), zonemd=True),
                       prim.zonefile(GOOD))
            wrapper = ["env", "LD_PRELOAD=" + build_preload(tmp, "oomshim.c"),
                       "STEADY_OOM_LOG=" + shimlog, "STEADY_HOLD_DIGEST=" + hold,
                       "STEADY_HOLD_DIGEST_LEN=%d" % DIGEST_LEN]
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        [BAD, GOOD], io_thread=(None if a.io_thread == "unset"
                                               else a.io_thread == "yes"),
                        verbosity=4, zonefiles=False,
                        zone_options=["zonemd-check: yes"])
        prim.start({BAD: 1, GOOD: 1})
        try:
            sec.start(wrapper=wrapper)
            if not wait_for(lambda: "ZONEMD failed for %s" % BAD in sec.read_log(), 60):
                fails.append("the transfer of %s did not fail its ZONEMD check" % BAD)
                raise StopIteration
            if not wait_for(lambda: rcode_of(sec, "www." + GOOD) == "NOERROR", 60):
                fails.append("%s not answered after its transfer" % GOOD)
                raise StopIteration
            rc = rcode_of(sec, "www." + BAD)
            print("after the transfer: %s answers %s" % (BAD, rc))
            if rc != "SERVFAIL":
                fails.append("after the failed check %s answers %s, want SERVFAIL" % (BAD, rc))
            out = sec.control("auth_zone_reload", BAD, check=False).stdout.strip()
            rc = rcode_of(sec, "www." + BAD)
            print("auth_zone_reload %s: %r, then it answers %s" % (BAD, out, rc))
            if not out.startswith("error") or "zonemd" not in out.lower():
                fails.append("auth_zone_reload of %s answered %r, want an error "
                             "of the ZONEMD check" % (BAD, out))
            if rc != "SERVFAIL":
                fails.append("after auth_zone_reload %s answers %s, want SERVFAIL "
                             "(its ZONEMD failed)" % (BAD, rc))
            if a.held_hash:
                held_hash_checks(sec, hold, shimlog, fails)
            out = sec.control("auth_zone_reload", GOOD, check=False).stdout.strip()
            rc = rcode_of(sec, "www." + GOOD)
            print("auth_zone_reload %s: %r, then it answers %s" % (GOOD, out, rc))
            if out.startswith("error") or rc != "NOERROR":
                fails.append("auth_zone_reload of %s answered %r and then %s" % (
                    GOOD, out, rc))
            if sec.stop() != 0:
                fails.append("unbound did not exit cleanly")
        except StopIteration:
            pass
        finally:
            sec.kill()
            prim.stop()
        if fails:
            print("\n".join(l for l in sec.read_log().splitlines()
                            if "zonemd" in l.lower())[-3000:])
    return verdict(fails, "auth_zone_reload without zonefile, ZONEMD (io thread %s)"
                   % a.io_thread)


if __name__ == "__main__":
    sys.exit(main())
