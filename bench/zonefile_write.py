#!/usr/bin/env python3
"""Time the zonefile writer (auth_zone_write_file, run after every zone
transfer) of stock and of the fork side by side, alternating, on a zone
of --records names (A, AAAA, MX, TXT, and an RRSIG for every rrset, as a
signed zone has) read from a zonefile. Prints a Markdown table of the
median (min-max) write time and the fork/stock ratio; --out writes it.

usage: flock build/.bench.lock bench/zonefile_write.py [--records 200000]
       [--reps 5] [--out FILE]"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from lruhash_bench import BUILDS, build, med  # noqa: E402

ORIGIN = "example.net."
SIG = ("20261231000000 20261101000000 12345 example.net. "
       "AwEAAc3Sd8ZzY2yFw0Q0nJc9s1Q2bU7v9yv1x5QhZk3w2s1r0YbVfJp8wq9X1k2j"
       "3m4n5o6p7q8r9s0t1u2v3w4x5y6z7A8B9C0D1E2F3G4H5I6J7K8L9M0N1O2P3Q4R"
       "5S6T7U8V9W0X1Y2Z3a4b5c6d7e8f9g0h1i2j3k4l5m6n7o8p9q0r1s2t3u4v5w6")


def zone_text(records):
    out = ["$ORIGIN %s\n$TTL 3600\n" % ORIGIN,
           "@ IN SOA ns admin 1 3600 600 86400 300\n@ IN NS ns\n"
           "ns IN A 127.0.0.1\n"]
    for i in range(records):
        kind = i % 4
        if kind == 0:
            out.append("h%d IN A 10.%d.%d.%d\n" % (i, (i >> 16) & 255, (i >> 8) & 255, i & 255))
            t = "A"
        elif kind == 1:
            out.append("h%d IN AAAA 2001:db8::%x:%x\n" % (i, i >> 16, i & 0xffff))
            t = "AAAA"
        elif kind == 2:
            out.append("h%d IN MX 10 mail%d\n" % (i, i))
            t = "MX"
        else:
            out.append("h%d IN TXT \"v=spf1 ip4:10.0.0.%d -all\"\n" % (i, i & 255))
            t = "TXT"
        out.append("h%d IN RRSIG %s 8 3 3600 %s\n" % (i, t, SIG))
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--records", type=int, default=200000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out")
    a = ap.parse_args()
    exes = {label: build(label, "zonefile_write") for label in BUILDS}
    with tempfile.TemporaryDirectory() as d:
        zf = os.path.join(d, "zone")
        with open(zf, "w") as f:
            f.write(zone_text(a.records))
        res = {label: [] for label in exes}
        for _ in range(a.reps):
            for label, exe in exes.items():
                out = subprocess.run([exe, zf, ORIGIN, "1", os.path.join(d, "out")],
                                     capture_output=True, text=True, check=True).stdout
                res[label].append(float(out.split("=")[1]))
                print(label, res[label][-1], "ms", flush=True)
    s, f = res["stock"], res["fork"]
    report = ["# Zonefile write time, stock and fork", "",
              "`flock build/.bench.lock bench/zonefile_write.py --records %d --reps %d`"
              % (a.records, a.reps), "",
              "%d names, each with one A, AAAA, MX or TXT and its RRSIG (%d RRs)."
              % (a.records, 2 * a.records + 3), "",
              "| write, ms | stock | fork | fork/stock |", "|---|---|---|---|",
              "| median (min-max) of %d | %s | %s | %.2f |"
              % (a.reps, med(s), med(f), statistics.median(f) / statistics.median(s))]
    print("\n".join(report))
    if a.out:
        with open(a.out, "w") as fo:
            fo.write("\n".join(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
