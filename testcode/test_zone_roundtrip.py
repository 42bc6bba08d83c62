#!/usr/bin/env python3
"""Zonefile round trip of large, binary, escaped and unusual RRs: Knot DNS
serves a zone with a 40 KB and a 16 KB binary TXT, a 40 KB RR of an unknown
type (TYPE65000, written as one 80000 character hex token), a 50 KB
OPENPGPKEY, a CSYNC with thousands of types in its bitmap (a short rdata
with a long text form), TXT strings with quotes, backslashes, semicolons
and NUL bytes, owner names with escaped dots, spaces and binary bytes,
CAA, SVCB/HTTPS, NAPTR, LOC, SSHFP, TLSA, HINFO and rrsets of hundreds of
RRs. The built unbound transfers it as a secondary (for-downstream: yes).

1. Every name and type answered by unbound must equal Knot's AXFR of the
   zone (canonical rdata and TTL), and the zonefile unbound wrote must
   parse (dnspython) into exactly that zone.
2. Temp file safety: a symlink is planted at the zonefile's temporary name
   (<zonefile>.tmp<pid>) pointing at a victim file; after the next
   transfer and zonefile write the victim must be unchanged, the zonefile
   a regular file of the new serial, and the symlink not followed.
3. unbound is stopped, Knot too, and unbound started again from the
   zonefile it wrote (the primary is now a dead port): its answers must
   still equal Knot's zone.
Run with both settings of auth-zone-io-thread.

usage: test_zone_roundtrip.py BUILDDIR [--io-thread yes|no] [--no-symlink]"""

import argparse
import base64
import os
import random
import re
import stat
import sys
import tempfile

import dns.exception
import dns.message
import dns.name
import dns.query
import dns.rdataclass
import dns.rdatatype
import dns.zone

from harness.zone import KnotPrimary, Secondary, file_serial, notify, verdict

ZONE = "rt.example."


def txt_escape(data):
    """One TXT character-string in zonefile syntax, every byte as \\DDD."""
    return '"' + "".join("\\%03d" % b for b in data) + '"'


def big_txt(data):
    """The rdata of a TXT that holds data, in 255-byte strings."""
    return " ".join(txt_escape(data[i:i + 255])
                    for i in range(0, len(data), 255))


def zone_text(serial, rnd):
    """The zone as Knot reads it; rnd makes the binary contents."""
    r = lambda n: bytes(rnd.getrandbits(8) for _ in range(n))
    csync_types = " ".join("TYPE%d" % t for t in range(260, 65280, 7))
    lines = [
        "$ORIGIN %s" % ZONE, "$TTL 3600",
        "@ SOA ns hostmaster %d 3600 600 86400 300" % serial,
        "@ NS ns",
        "ns A 127.0.0.1",
        "big40k 300 TXT " + big_txt(r(40960)),
        "big16k TXT " + big_txt(r(16384)),
        "bigtype TYPE65000 \\# 40000 " + r(40000).hex(),
        "smalltype TYPE65000 \\# 0",
        "pgp OPENPGPKEY " + base64.b64encode(r(50000)).decode(),
        "csync CSYNC 66 3 A NS AAAA " + csync_types,
        'quotes TXT "say \\"hi\\"" "back\\\\slash" "semi;colon" "(paren)" '
        '"tab\\009nul\\000end" "" "\\255\\128"',
        'dot\\.inside TXT "owner with an escaped dot"',
        'sp\\032ace TXT "owner with a space"',
        'semi\\;colon\\(x\\) TXT "owner with a semicolon and parens"',
        'bin\\000\\255q TXT "owner with binary bytes"',
        'caa CAA 0 issue "ca.example.net; account=230123"',
        'caa CAA 128 iodef "mailto:security@example.net"',
        'caa CAA 0 issuewild ";"',
        "_dns SVCB 1 ns alpn=dot,h2 port=853",
        "www HTTPS 1 . alpn=h3,h2 ipv4hint=192.0.2.1,192.0.2.2 "
        "ipv6hint=2001:db8::1",
        "www HTTPS 0 svc.example.net.",
        "svc2 SVCB 16 foo.example.org. mandatory=alpn alpn=h2 port=8443",
        'naptr NAPTR 100 10 "S" "SIP+D2U" '
        '"!^.*$!sip:customer-service@example.com!" _sip._udp.example.com.',
        'naptr NAPTR 102 10 "" "" "" sub.example.com.',
        "loc LOC 52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m",
        "loc2 LOC 0 0 0.001 S 179 59 59.999 W 42849672.95m 90000000m "
        "90000000m 0.01m",
        "sshfp SSHFP 1 1 " + r(20).hex(),
        "tlsa TLSA 3 1 1 " + r(32).hex(),
        "tlsa TLSA 3 1 2 " + r(64).hex(),
        'hinfo HINFO "PC \\"x86\\"" "linux; gnu"',
        "mx MX 10 mail.example.net.",
        "_sip._tcp SRV 0 5 5060 sip.example.net.",
        "aaaa AAAA 2001:db8::1",
    ]
    lines += ["many A 10.0.%d.%d" % (i // 256, i % 256) for i in range(600)]
    lines += ['manytxt TXT "record %d" "%s"' % (i, "x" * (i % 200))
              for i in range(300)]
    return "\n".join(lines) + "\n"


def rrsets(zone):
    """{(name, type): (ttl, sorted canonical rdata)} of a dnspython zone."""
    out = {}
    for name, node in zone.nodes.items():
        if not name.is_absolute():
            name = name.derelativize(zone.origin)
        for rds in node.rdatasets:
            out[(name, rds.rdtype)] = (rds.ttl, sorted(
                rd.to_digestable(zone.origin) for rd in rds))
    return out


def axfr(port):
    return rrsets(dns.zone.from_xfr(dns.query.xfr("127.0.0.1", ZONE, port=port, relativize=False,
                                                  timeout=10),
                                    relativize=False))


def answers(port, keys):
    """{(name, type): (ttl, sorted canonical rdata)} answered over TCP by
    127.0.0.1:port for every (name, type) in keys (absent if no data)."""
    out = {}
    for name, rdtype in keys:
        q = dns.message.make_query(name, rdtype)
        try:
            r = dns.query.tcp(q, "127.0.0.1", port=port, timeout=5)
        except (dns.exception.DNSException, OSError) as e:
            out[(name, rdtype)] = ("error", str(e))
            continue
        for rds in r.answer:
            if rds.name == name and rds.rdtype == rdtype:
                out[(name, rdtype)] = (rds.ttl, sorted(
                    rd.to_digestable(dns.name.root) for rd in rds))
    return out


def short(key):
    name, rdtype = key
    return "%s %s" % (name.to_text(), dns.rdatatype.to_text(rdtype))


def compare(got, want, what):
    """Failure strings for the rrsets of want that got lacks or differs in."""
    fails = []
    for k in sorted(want, key=lambda k: (k[0], k[1])):
        if k not in got:
            fails.append("%s: %s missing" % (what, short(k)))
        elif got[k] != want[k]:
            g, w = got[k], want[k]
            fails.append("%s: %s differs: got ttl %s, %s RRs (%s bytes), want "
                         "ttl %s, %d RRs (%d bytes)" % (
                             what, short(k), g[0], len(g[1]),
                             sum(len(x) for x in g[1]) if g[0] != "error" else g[1],
                             w[0], len(w[1]), sum(len(x) for x in w[1])))
    for k in got:
        if k not in want:
            fails.append("%s: %s not in the zone" % (what, short(k)))
    return fails


def file_rrsets(path):
    """The rrsets of the zonefile at path as dnspython reads it, or the
    parse error as a string."""
    try:
        return rrsets(dns.zone.from_file(path, origin=ZONE, relativize=False))
    except Exception as e:  # noqa: BLE001 - any parse error is a failure
        m = re.search(r":(\d+):", str(e))
        line = ""
        if m:
            with open(path, errors="replace") as f:
                line = f.read().splitlines()[int(m.group(1)) - 1][:200]
        return "%s: %s %r" % (type(e).__name__, e, line)


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    ap.add_argument("--io-thread", choices=["yes", "no"], default="yes")
    ap.add_argument("--no-symlink", action="store_true",
                    help="skip the temp file symlink step")
    a = ap.parse_args()
    fails = []
    what = "zonefile round trip (io thread %s)" % a.io_thread
    with tempfile.TemporaryDirectory(prefix="steady-zrt-") as tmp:
        prim = KnotPrimary(os.path.join(tmp, "knot"), [ZONE])
        with open(prim.zonefile(ZONE), "w") as f:
            f.write(zone_text(1, random.Random(14)))
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        [ZONE], threads=2, io_thread=(a.io_thread == "yes"))
        zfile = sec.zonefile(ZONE)
        serial = 1
        try:
            prim.start({ZONE: 1})
            want = axfr(prim.port)
            print("Knot serves %d rrsets, %d RRs" % (
                len(want), sum(len(v[1]) for v in want.values())))
            sec.start()
            if not sec.wait_serial(ZONE, 1, timeout=60):
                fails.append("first transfer not served and on disk")
                raise StopIteration
            f1 = compare(answers(sec.port, want), want, "answer after transfer")
            print("answers after the transfer: %d differences" % len(f1))
            fails += f1
            if not a.no_symlink:
                # plant a symlink at the temporary file name of the next write
                victim = os.path.join(tmp, "victim")
                with open(victim, "w") as f:
                    f.write("victim\n")
                link = "%s.tmp%d" % (zfile, sec.proc.pid)
                os.symlink(victim, link)
                serial = 2
                with open(prim.zonefile(ZONE), "w") as f:
                    f.write(zone_text(2, random.Random(14)))
                prim.reload({ZONE: 2})
                want = axfr(prim.port)
                notify(sec.port, ZONE)
                if not sec.wait_serial(ZONE, 2, timeout=60):
                    fails.append("serial 2 (symlink at the temp name) not served "
                                 "and on disk (file %s)" % file_serial(zfile))
                with open(victim) as f:
                    v = f.read()
                if v != "victim\n":
                    fails.append("the write followed the symlink %s: victim now "
                                 "holds %d bytes starting %r" % (link, len(v), v[:60]))
                if os.path.islink(zfile) or not stat.S_ISREG(os.lstat(zfile).st_mode):
                    fails.append("zonefile %s is not a regular file: %s" % (
                        zfile, os.readlink(zfile) if os.path.islink(zfile) else "?"))
                print("symlink at the temp name: victim %s, zonefile serial %s" % (
                    "unchanged" if v == "victim\n" else "CHANGED", file_serial(zfile)))
            got = file_rrsets(zfile)
            if isinstance(got, str):
                fails.append("written zonefile does not parse: " + got)
            else:
                f2 = compare(got, want, "written zonefile")
                print("written zonefile: %d differences" % len(f2))
                fails += f2
            st = sec.stats()
            print({k: v for k, v in st.items() if "authzone.write" in k})
            if int(st["num.authzone.write.failed"]) != 0:
                fails.append("num.authzone.write.failed=%s" %
                             st["num.authzone.write.failed"])
            if sec.stop() != 0:
                fails.append("exit status not 0")
            # restart from the zonefile, with the primary gone
            prim.stop()
            try:
                sec.start()
            except RuntimeError as e:
                fails.append("no restart from the written zonefile: %s" %
                             str(e)[-1500:])
                raise StopIteration
            if not sec.wait_serial(ZONE, serial, timeout=30):
                fails.append("serial %d not served after the restart" % serial)
            f3 = compare(answers(sec.port, want), want, "answer after restart")
            print("answers after the restart from the zonefile: %d differences"
                  % len(f3))
            fails += f3
            if sec.stop() != 0:
                fails.append("exit status not 0 after the restart")
        except StopIteration:
            pass
        finally:
            sec.kill()
            prim.stop()
            if fails:
                log = sec.read_log()
                print("\n".join(line for line in log.splitlines()
                                if "error" in line or "warn" in line)[-3000:])
    return verdict(fails, what)


if __name__ == "__main__":
    sys.exit(main())
