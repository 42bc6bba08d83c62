#!/usr/bin/env python3
"""unbound-control auth_zone_reload of a zone without a zonefile checks
its ZONEMD again, as stock does, and does not bring back a zone whose
ZONEMD failed. NSD serves a zone whose ZONEMD digest is wrong; unbound is
its secondary with zonemd-check: yes and no zonefile. The transfer fails
the check, so the zone answers SERVFAIL; auth_zone_reload then must
answer an error that names the ZONEMD check, and the zone must still
answer SERVFAIL. A zone without ZONEMD (which passes the check, as
zonemd-reject-absence is no) reloads "ok" and keeps answering.

usage: test_zone_zonemd_reload.py BUILDDIR [--io-thread yes|no|unset]"""

import argparse
import os
import sys
import tempfile

import dns.message
import dns.query
import dns.rcode

from harness.zone import Primary, Secondary, verdict, wait_for

BAD, GOOD = "badzmd.example.", "goodzmd.example."


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


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    # unset: the option is not in the config (for stock, which lacks it)
    ap.add_argument("--io-thread", choices=["yes", "no", "unset"], default="yes")
    a = ap.parse_args()
    fails = []
    with tempfile.TemporaryDirectory(prefix="steady-zmdreload-") as tmp:
        prim = Primary(os.path.join(tmp, "nsd"), [BAD, GOOD])
        # SHA384 of 48 zero octets: a digest that cannot match
        with open(prim.zonefile(BAD), "w") as f:
            f.write(zone_text(BAD, "@ IN ZONEMD 1 1 1 %s\n" % ("00" * 48)))
        # no ZONEMD: the check passes (zonemd-reject-absence: no)
        with open(prim.zonefile(GOOD), "w") as f:
            f.write(zone_text(GOOD, ""))
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        [BAD, GOOD], io_thread=(None if a.io_thread == "unset"
                                               else a.io_thread == "yes"),
                        verbosity=4, zonefiles=False,
                        zone_options=["zonemd-check: yes"])
        prim.start({BAD: 1, GOOD: 1})
        try:
            sec.start()
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
