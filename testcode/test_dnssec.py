#!/usr/bin/env python3
"""DNSSEC end to end: the fork's validator against zones signed with
ldns-signzone and served by NSD on loopback (issue: ready for an
operator, section 4). Patch 0019 changes the key cache's hash, so this
runs with each cache hash build (build/fork: XXH3, build/fork-lookup3).

- sec.example. is signed (ECDSA P-256, a KSK and a ZSK); its KSK is the
  trust anchor. www.sec.example. must validate: NOERROR with AD, and a
  wildcard answer too (its NSEC proof).
- bad.example. is signed the same way, then the A rdata of
  www.bad.example. is changed in the signed file: SERVFAIL, with an EDE
  option (ede: yes; 6, DNSSEC Bogus, or another DNSSEC code).
- A name under sec.example. that does not exist: NXDOMAIN with AD.
- Statistics: num.answer.secure and num.answer.bogus count them;
  key.cache.count holds both zones' keys; key.cache.max_collisions is
  small (a key cache of two entries has no chain longer than 1), and
  there is no key cache hash_repairs line (only msg and rrset have one).

usage: test_dnssec.py BUILDDIR"""

import os
import sys
import tempfile

import dns.edns
import dns.flags
import dns.message
import dns.query
import dns.rcode

from harness.server import Unbound
from harness.zone import Primary, dnssec_keys, sign_zone

ZONE = """$ORIGIN {origin}
$TTL 3600
@ IN SOA ns.{origin} hostmaster.{origin} 1 3600 600 86400 300
@ IN NS ns.{origin}
ns IN A 127.0.0.1
www IN A 192.0.2.66
txt IN TXT "signed zone of Unbound Steady's DNSSEC test"
*.wild IN A 192.0.2.77
"""


def sign(workdir, origin, path):
    """Write a KSK and a ZSK for origin into workdir, sign path; returns
    (signed zonefile, KSK .key file)."""
    keys = dnssec_keys(workdir, origin)
    return sign_zone(path, origin, keys), keys[0] + ".key"


def query(port, name, rdtype="A"):
    q = dns.message.make_query(name, rdtype, want_dnssec=True, use_edns=0)
    return dns.query.udp(q, "127.0.0.1", port=port, timeout=5)


def ede_codes(resp):
    return [o.code for o in resp.options if o.otype == dns.edns.EDE]


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("usage: ")[1], file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    fails = []

    def check(ok, what):
        print("%s: %s" % ("ok" if ok else "FAIL", what))
        if not ok:
            fails.append(what)

    with tempfile.TemporaryDirectory(prefix="steady-dnssec-") as d:
        zones = ["sec.example.", "bad.example."]
        nsd = Primary(os.path.join(d, "nsd"), zones)
        anchors = []
        for z in zones:
            path = os.path.join(nsd.dir, z + "unsigned")
            with open(path, "w") as f:
                f.write(ZONE.format(origin=z))
            signed, ksk = sign(nsd.dir, z, path)
            text = open(signed).read()
            if z == "bad.example.":
                # changed data under a valid signature: bogus
                lines = text.splitlines()
                n = [i for i, line in enumerate(lines)
                     if line.startswith("www.bad.example.") and "\tA\t" in line]
                assert len(n) == 1, "no A line for www in %s" % signed
                lines[n[0]] = lines[n[0]].replace("192.0.2.66", "192.0.2.99")
                text = "\n".join(lines) + "\n"
            with open(nsd.zonefile(z), "w") as f:
                f.write(text)
            anchors.append(ksk)
        nsd.start({z: 1 for z in zones})
        conf = ["\tmodule-config: \"validator iterator\"", "\tede: yes",
                "\tdo-not-query-localhost: no", "\tval-log-level: 2"]
        conf += ["\ttrust-anchor-file: \"%s\"" % a for a in anchors]
        stubs = "".join("stub-zone:\n\tname: \"%s\"\n\tstub-addr: 127.0.0.1@%d\n" % (z, nsd.port)
                        for z in zones)
        ub = Unbound(build, os.path.join(d, "unbound"), extra_conf="\n".join(conf) + "\n")
        with open(ub.conf) as f:
            text = f.read()
        # the demo config's iterator-only module-config comes later and
        # would win; and it keeps loopback out of reach, which NSD is on
        text = text.replace("\tmodule-config: \"iterator\"\n", "")
        text = text.replace("\tdo-not-query-localhost: yes\n", "")
        with open(ub.conf, "w") as f:
            f.write(text + stubs)
        try:
            ub.start()
            r = query(ub.port, "www.sec.example.")
            check(r.rcode() == dns.rcode.NOERROR and bool(r.flags & dns.flags.AD) and
                  any("192.0.2.66" in rr.to_text() for rr in r.answer),
                  "www.sec.example. A validates (rcode %s, AD %s)" % (
                      dns.rcode.to_text(r.rcode()), bool(r.flags & dns.flags.AD)))
            r = query(ub.port, "x1.wild.sec.example.")
            check(r.rcode() == dns.rcode.NOERROR and bool(r.flags & dns.flags.AD),
                  "wildcard answer x1.wild.sec.example. validates (rcode %s, AD %s)" % (
                      dns.rcode.to_text(r.rcode()), bool(r.flags & dns.flags.AD)))
            r = query(ub.port, "nothere.sec.example.")
            check(r.rcode() == dns.rcode.NXDOMAIN and bool(r.flags & dns.flags.AD),
                  "nothere.sec.example. is a validated NXDOMAIN (rcode %s, AD %s)" % (
                      dns.rcode.to_text(r.rcode()), bool(r.flags & dns.flags.AD)))
            r = query(ub.port, "www.bad.example.")
            codes = ede_codes(r)
            check(r.rcode() == dns.rcode.SERVFAIL and not r.answer,
                  "www.bad.example. A is bogus: rcode %s" % dns.rcode.to_text(r.rcode()))
            check(any(c in (1, 2, 5, 6, 7, 8, 9, 10, 11, 12) for c in codes),
                  "the bogus answer has a DNSSEC EDE code (%s)" % codes)
            st = ub.stats()
            check(int(st.get("num.answer.secure", 0)) >= 3,
                  "num.answer.secure=%s" % st.get("num.answer.secure"))
            check(int(st.get("num.answer.bogus", 0)) >= 1,
                  "num.answer.bogus=%s" % st.get("num.answer.bogus"))
            check(int(st.get("key.cache.count", 0)) >= 2,
                  "key.cache.count=%s (both zones' keys)" % st.get("key.cache.count"))
            check(0 <= int(st.get("key.cache.max_collisions", -1)) <= 1,
                  "key.cache.max_collisions=%s" % st.get("key.cache.max_collisions"))
            check("key.cache.hash_repairs" not in st, "no key.cache.hash_repairs line")
            check(int(st.get("msg.cache.hash_repairs", 0)) == 0 and
                  int(st.get("rrset.cache.hash_repairs", 0)) == 0,
                  "no hash repairs in the msg and rrset caches")
        finally:
            ub.stop()
            nsd.stop()
        if fails:
            print(ub.read_log()[-3000:])
    print("dnssec: %d failed" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
