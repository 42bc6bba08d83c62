#!/usr/bin/env python3
"""A reload (SIGHUP) that keeps a secondary zone's data in memory, because
its zonefile has an older serial, must still give that data what the new
config asks of it, as stock's reload, which reads the file, does:

1. an auth-zone: that becomes an rpz: with the same name and zonefile
   must have RPZ policies for the data kept: a QNAME trigger that only
   the kept (newer) serial has must be answered with its local data,
   and its nested address triggers must work: with rpz-ip triggers for
   10.0.0.0/8 and 10.1.0.0/16, a name that resolves to 10.2.0.1 must be
   blocked (NXDOMAIN), which needs the parent pointers of the address
   tree (rpz_finish_config; issue 41's finding 4). The name is in a third
   zone, ip.example., served for-upstream only, so that its answer goes
   through the respip module;
2. a zone whose new config enables zonemd-check must have the kept data
   checked: with a ZONEMD digest that cannot match, the zone must answer
   SERVFAIL after the reload, and its zonefile must not be written.

The kept serial of the rpz must then be written to its zonefile.

NSD serves both zones at serial 2; the built unbound is their secondary
with zonefiles. Once it has written serial 2, the test puts serial 1
back into each zonefile (a write left for after the reload, or one that
failed, leaves the file behind like this), changes the config and sends
SIGHUP.

usage: test_zone_reload_kind.py BUILDDIR [--io-thread yes|no|unset]"""

import argparse
import os
import re
import signal
import sys
import tempfile

import dns.message
import dns.query
import dns.rcode

from harness.zone import Primary, Secondary, file_serial, verdict, wait_for

RPZ, ZMD, IPZ = "rpz.example.", "zmd.example.", "ip.example."


def zone_text(origin, serial, body):
    return ("$ORIGIN %s\n$TTL 3600\n"
            "@ IN SOA ns.%s admin.%s %d 3600 600 86400 300\n"
            "@ IN NS ns\nns IN A 127.0.0.1\n%s" % (
                origin, origin, origin, serial, body))


def rpz_text(serial):
    # serial 1 triggers old.trigger., serial 2 also new.trigger.
    body = "old.trigger IN A 10.0.0.1\n"
    if serial >= 2:
        # and nested address triggers, blocking 10.0.0.0/8 and 10.1.0.0/16
        body += ("new.trigger IN A 10.0.0.2\n"
                 "8.0.0.0.10.rpz-ip IN CNAME .\n"
                 "16.0.0.1.10.rpz-ip IN CNAME .\n")
    return zone_text(RPZ, serial, body)


def zmd_text(serial):
    # SHA384 of 48 zero octets: a digest that cannot match
    return zone_text(ZMD, serial, "www IN A 10.0.1.%d\n"
                     "@ IN ZONEMD %d 1 1 %s\n" % (serial, serial, "00" * 48))


def ask(sec, name):
    """(rcode, [A addresses]) of name, or ("timeout", [])."""
    try:
        r = dns.query.udp(dns.message.make_query(name, "A"), "127.0.0.1",
                          port=sec.port, timeout=2)
    except Exception:
        return "timeout", []
    return dns.rcode.to_text(r.rcode()), sorted(
        rd.address for rr in r.answer for rd in rr if rr.rdtype == 1)


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    # unset: the option is not in the config (for stock, which lacks it)
    ap.add_argument("--io-thread", choices=["yes", "no", "unset"], default="yes")
    a = ap.parse_args()
    fails = []
    with tempfile.TemporaryDirectory(prefix="steady-reloadkind-") as tmp:
        prim = Primary(os.path.join(tmp, "nsd"), [RPZ, ZMD, IPZ])
        with open(prim.zonefile(RPZ), "w") as f:
            f.write(rpz_text(2))
        with open(prim.zonefile(ZMD), "w") as f:
            f.write(zmd_text(2))
        with open(prim.zonefile(IPZ), "w") as f:
            f.write(zone_text(IPZ, 1, "www IN A 10.2.0.1\n"))
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        [RPZ, ZMD, IPZ], upstream_only=(IPZ,),
                        io_thread=(None if a.io_thread == "unset"
                                   else a.io_thread == "yes"),
                        verbosity=2)
        prim.start({RPZ: 2, ZMD: 2, IPZ: 1})
        try:
            sec.start()
            for z, serial in ((RPZ, 2), (ZMD, 2), (IPZ, 1)):
                if not sec.wait_serial(z, serial):
                    fails.append("%s not served and written at serial %d"
                                 % (z, serial))
                    raise StopIteration
            rc = ask(sec, "www." + ZMD)
            if rc != ("NOERROR", ["10.0.1.2"]):
                fails.append("before the reload, without zonemd-check, www.%s "
                             "answers %s" % (ZMD, rc))
            # the files fall behind the data in memory
            with open(sec.zonefile(RPZ), "w") as f:
                f.write(rpz_text(1))
            with open(sec.zonefile(ZMD), "w") as f:
                f.write(zmd_text(1))
            with open(sec.conf) as f:
                text = f.read()
            text = text.replace("auth-zone:\n\tname: \"%s\"" % RPZ,
                                "rpz:\n\tname: \"%s\"" % RPZ)
            head, sep, tail = text.partition("rpz:\n\tname: \"%s\"" % RPZ)
            # an rpz: clause takes no for-* or fallback options; the
            # clause ends where the next one starts
            m = re.search(r"\n(?=\S)", tail)
            clause, rest = (tail[:m.start()], tail[m.start():]) if m else (tail, "")
            for opt in ("for-downstream", "for-upstream", "fallback-enabled"):
                clause = clause.replace("\t%s: yes\n" % opt, "").replace(
                    "\t%s: no\n" % opt, "")
            text = head + sep + clause + rest
            text = text.replace("\tmodule-config: \"iterator\"\n",
                                "\tmodule-config: \"respip iterator\"\n")
            text = text.replace("name: \"%s\"\n" % ZMD,
                                "name: \"%s\"\n\tzonemd-check: yes\n" % ZMD)
            with open(sec.conf, "w") as f:
                f.write(text)
            os.kill(sec.proc.pid, signal.SIGHUP)
            if not wait_for(lambda: ask(sec, "old.trigger.")[0] != "timeout"
                            and "keeping" in sec.read_log(), 30):
                fails.append("unbound did not answer, or keep the newer data, "
                             "after the reload")
            rc = ask(sec, "new.trigger.")
            print("after the reload: new.trigger. answers %s" % (rc,))
            if rc != ("NOERROR", ["10.0.0.2"]):
                fails.append("new.trigger. (an RPZ trigger of the kept serial 2) "
                             "answers %s, want NOERROR 10.0.0.2: the kept data "
                             "has no RPZ policies" % (rc,))
            rc = ask(sec, "old.trigger.")
            if rc != ("NOERROR", ["10.0.0.1"]):
                fails.append("old.trigger. answers %s, want NOERROR 10.0.0.1" % (rc,))
            rc = ask(sec, "www." + IPZ)
            print("after the reload: www.%s answers %s" % (IPZ, rc))
            if rc[0] != "NXDOMAIN":
                fails.append("www.%s (10.2.0.1, in the rpz-ip trigger 10.0.0.0/8 "
                             "of the kept serial 2, beside 10.1.0.0/16) answers %s, "
                             "want NXDOMAIN" % (IPZ, rc))
            rc = ask(sec, "www." + ZMD)
            print("after the reload: www.%s answers %s" % (ZMD, rc))
            if rc[0] != "SERVFAIL":
                fails.append("www.%s answers %s after zonemd-check was enabled, "
                             "want SERVFAIL: the kept data was not checked" % (ZMD, rc))
            # the kept serial 2 of the rpz is written; the zone whose
            # ZONEMD failed is not (its zonefile stays a version that
            # was complete on disk before)
            if not wait_for(lambda: file_serial(sec.zonefile(RPZ)) == 2, 30):
                fails.append("the zonefile of %s has serial %s, want the kept 2"
                             % (RPZ, file_serial(sec.zonefile(RPZ))))
            with open(sec.zonefile(ZMD)) as f:
                if f.read() != zmd_text(1):
                    fails.append("the zonefile of %s was written (serial %s) after "
                                 "its ZONEMD check failed" % (
                                     ZMD, file_serial(sec.zonefile(ZMD))))
            if sec.stop() != 0:
                fails.append("unbound did not exit cleanly")
        except StopIteration:
            pass
        finally:
            sec.kill()
            prim.stop()
        if fails:
            print("\n".join(l for l in sec.read_log().splitlines()
                            if "zonemd" in l.lower() or "rpz" in l.lower()
                            or "keeping" in l)[-3000:])
    return verdict(fails, "reload keeping newer data turns it into an rpz, "
                   "checks its ZONEMD (io thread %s)" % a.io_thread)


if __name__ == "__main__":
    sys.exit(main())
